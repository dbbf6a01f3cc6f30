/* SPDX-License-Identifier: MIT */
/*
 * Results from anywhere, as CSV (RFC 4180: fields in double quotes may
 * hold commas, line breaks and "" for a quote; LF or CRLF line ends; a
 * UTF-8 byte order mark and blank lines are skipped). The header names the
 * five columns variant, boot, run, metric, value in any order and no
 * other; each row is one metric of one run. A run is a distinct (variant,
 * boot, run) triple; an empty boot means the boot is unknown (the engine
 * then takes runs as its units). The result set has one group, "judge",
 * its runs ended well, its variants in the order they first appear with
 * `base` moved first. Pure: nothing here prints.
 */
#pragma once

#include <stddef.h>
#include "../util/diag.h"
#include "result.h"

#define RESULT_CSV_MAX_BYTES ((size_t)256 << 20)
#define RESULT_CSV_MAX_ROWS 10000000u
#define RESULT_CSV_GROUP "judge"

/*
 * Parses text[0..len) (file: its name in the diagnostics; base: the
 * variant to compare the others against, NULL: the first one). Returns 0
 * and the set in *ret, or -EINVAL with every error (up to the diags' limit)
 * in d as FILE:LINE:COL, *ret untouched.
 */
int result_csv_parse(const char *text, size_t len, const char *file, const char *base, struct result_set **ret,
		     struct diags *d);
