/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the package-list comparison of lab reproduce (two
 * packages.txt texts from two runs' snapshots, hostile): the bytes up to
 * the first NUL are the recorded list, the rest this machine's. Never a
 * crash; every line out names a package and an arrow; a list against
 * itself differs in nothing.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "engine/reproduce.h"
#include "util/alloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct strv out = STRV_INIT, same = STRV_INIT;
	size_t n1 = strnlen((const char *)data, size);
	char *text, *here;

	if (size > 64 * 1024)
		return 0;
	text = xstrndup((const char *)data, n1);
	here = n1 < size ? xstrndup((const char *)data + n1 + 1, size - n1 - 1) : xstrdup("");
	reproduce_package_diff(text, here, &out);
	for (size_t i = 0; i < out.n; i++)
		if (!strstr(out.v[i], ": ") || !strstr(out.v[i], " -> "))
			abort();
	reproduce_package_diff(text, text, &same);
	if (same.n)
		abort();
	strv_release(&out);
	strv_release(&same);
	free(text);
	free(here);
	return 0;
}
