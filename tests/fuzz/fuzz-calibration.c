/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for store/calib-store.c's reader: a stored calibration may
 * come from another machine's results folder. Any bytes: never a crash or
 * a leak; a record read back formats again and reads back the same.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "store/calib-store.h"
#include "util/strbuf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct calib_record rec, back;
	char *err = NULL, *err2 = NULL;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;

	if (calib_parse("calibration.json", (const char *)data, size, "quick", &rec, &err) < 0) {
		if (!err)
			abort(); /* an error always says why */
		free(err);
		return 0;
	}
	calib_format_json(&rec, &sb);
	if (calib_parse("again.json", sb.buf, sb.len, "quick", &back, &err2) < 0)
		abort(); /* what lab writes it reads */
	calib_format_json(&back, &sb2);
	if (sb.len != sb2.len || memcmp(sb.buf, sb2.buf, sb.len) != 0)
		abort();
	calib_record_release(&rec);
	calib_record_release(&back);
	strbuf_release(&sb);
	strbuf_release(&sb2);
	return 0;
}
