/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for a run's snapshot listing reader (store/snapshot.h): bytes
 * in, files whose paths stay inside the project or a positioned error
 * out, never a crash. Every accepted path must pass the check a checkout
 * writes through, none twice, and the listing must read back the same
 * after it is written again.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "store/snapshot.h"
#include "util/path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct snapshot snap = { 0 }, again = { 0 };
	struct diags d = { 0 };
	struct strbuf out = STRBUF_INIT;

	if (size > 256 * 1024)
		return 0;
	if (snapshot_parse((const char *)data, size, "SNAPSHOT", &snap, &d) == 0) {
		for (size_t i = 0; i < snap.nfiles; i++) {
			size_t k;

			if (!path_is_safe_relative(snap.files[i].path) || !strmap_get(&snap.paths, snap.files[i].path, &k) ||
			    k != i)
				abort();
		}
		snapshot_format(&snap, &out);
		if (snapshot_parse(out.buf, out.len, "SNAPSHOT", &again, &d) != 0 || again.nfiles != snap.nfiles)
			abort();
		snapshot_release(&again);
		snapshot_release(&snap);
	}
	strbuf_release(&out);
	diags_release(&d);
	return 0;
}
