/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for the cluster's two files: shard.json (what a node's lab
 * shard reads from the spool) and slurm.json (the head's journal of its
 * jobs, read by --resume). The first byte picks the reader. Bytes in,
 * a checked value or an error out, never a crash; an accepted shard
 * names only hex keys and digests (they become spool paths), an accepted
 * journal only names as run ids and nodes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "engine/shard.h"
#include "util/strv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void hex_or_abort(const char *s)
{
	if (!s || strspn(s, "0123456789abcdef") != strlen(s) || strlen(s) < 16)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *err = NULL;

	if (!size || size > 64 * 1024)
		return 0;
	if (data[0] & 1) {
		struct shard_spec s = { 0 };

		if (shard_spec_parse("shard.json", (const char *)data + 1, size - 1, &s, &err) == 0) {
			for (size_t i = 0; i < s.nkernels; i++) {
				hex_or_abort(s.kernels[i].key);
				hex_or_abort(s.kernels[i].digest);
			}
			/* the version reaches terminals: nothing they act on */
			if (strspn(s.lab, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.+~_-") !=
			    strlen(s.lab))
				abort();
			hex_or_abort(s.image_id);
			hex_or_abort(s.image_digest);
			if (!str_is_name(s.run))
				abort();
			shard_spec_release(&s);
		}
	} else {
		struct shard_journal j = { 0 };

		if (shard_journal_parse("slurm.json", (const char *)data + 1, size - 1, &j, &err) == 0) {
			for (size_t i = 0; i < j.n; i++)
				for (size_t k = 0; k < j.v[i].runs.n; k++)
					if (!str_is_name(j.v[i].runs.v[k]))
						abort();
			for (size_t i = 0; i < j.exclude.n; i++)
				if (!str_is_name(j.exclude.v[i]))
					abort();
			shard_journal_release(&j);
		}
	}
	free(err);
	return 0;
}
