/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for engine/track.c's reader: track.json comes back with a
 * bundle or a results folder from elsewhere, and `lab track --resume` acts
 * on it. Any bytes: never a crash or a leak; a state read back formats
 * again and reads back the same, and its summary can be said.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "engine/track.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct track t, back;
	char *err = NULL, *err2 = NULL;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT, text = STRBUF_INIT;

	if (track_parse("track.json", (const char *)data, size, &t, &err) < 0) {
		if (!err)
			abort(); /* an error always says why */
		free(err);
		return 0;
	}
	track_format_json(&t, &sb);
	if (track_parse("again.json", sb.buf, sb.len, &back, &err2) < 0)
		abort(); /* what lab writes it reads */
	track_format_json(&back, &sb2);
	if (sb.len != sb2.len || memcmp(sb.buf, sb2.buf, sb.len) != 0)
		abort();
	track_format_text(&t, &text);
	track_release(&t);
	track_release(&back);
	strbuf_release(&sb);
	strbuf_release(&sb2);
	strbuf_release(&text);
	return 0;
}
