/* SPDX-License-Identifier: MIT */
/* Common includes for cmocka unit tests. */
#pragma once

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

/*
 * Compare `actual` with the golden file at `path` (relative to the source
 * tree); LAB_TEST_REGENERATE=1 rewrites the file instead.
 */
static inline void assert_golden(const char *path, const char *actual)
{
	const char *regen = getenv("LAB_TEST_REGENERATE");
	FILE *f;
	char *buf;
	long n;

	if (regen && *regen) {
		f = fopen(path, "w");
		assert_non_null(f);
		fputs(actual, f);
		fclose(f);
		return;
	}
	f = fopen(path, "r");
	if (!f)
		fail_msg("golden file %s is missing (make regen)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	if (strcmp(buf, actual) != 0)
		print_error("%s differs:\n--- expected\n%s--- actual\n%s", path, buf, actual);
	assert_string_equal(buf, actual);
	free(buf);
}
