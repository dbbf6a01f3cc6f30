/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for engine/bisect.c's reader: bisect.json comes back with a
 * bundle or a results folder from elsewhere, and `lab bisect --resume`
 * acts on it. Any bytes: never a crash or a leak; a state read back
 * formats again and reads back the same, and where it stands can be said.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "engine/bisect.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bisect b, back;
	char *err = NULL, *err2 = NULL;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT, text = STRBUF_INIT;

	if (bisect_parse("bisect.json", (const char *)data, size, &b, &err) < 0) {
		if (!err)
			abort(); /* an error always says why */
		free(err);
		return 0;
	}
	bisect_format_json(&b, &sb);
	if (bisect_parse("again.json", sb.buf, sb.len, &back, &err2) < 0)
		abort(); /* what lab writes it reads */
	bisect_format_json(&back, &sb2);
	if (sb.len != sb2.len || memcmp(sb.buf, sb2.buf, sb.len) != 0)
		abort();
	bisect_format_text(&b, &text);
	bisect_release(&b);
	bisect_release(&back);
	strbuf_release(&sb);
	strbuf_release(&sb2);
	strbuf_release(&text);
	return 0;
}
