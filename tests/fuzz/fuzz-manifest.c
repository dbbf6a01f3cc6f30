/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for a bundle's MANIFEST reader: bytes in, entries whose
 * names stay inside the run or a positioned error out, never a crash.
 * Every accepted name must pass the same check extraction uses.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "store/bundle.h"
#include "util/path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bundle_manifest m = { 0 };
	struct diags d = { 0 };

	if (size > 64 * 1024)
		return 0;
	if (bundle_manifest_parse((const char *)data, size, "MANIFEST", &m, &d) == 0) {
		for (size_t i = 0; i < m.n; i++)
			if (!path_is_safe_relative(m.v[i].name))
				abort();
		bundle_manifest_release(&m);
	}
	diags_release(&d);
	return 0;
}
