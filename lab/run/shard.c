/* SPDX-License-Identifier: MIT */
/*
 * Shard planning: groups into comparison blocks, blocks onto nodes.
 */
#include <string.h>
#include "../util/alloc.h"
#include "../util/strv.h"
#include "shard.h"
#include "../util/banned.h"

void shard_blocks(const struct run_group *groups, size_t ngroups, const char *const *hosts, struct shard_block **ret,
		  size_t *ret_n)
{
	struct shard_block *b = xcalloc(ngroups + 1, sizeof(*b));
	size_t *host_of = xcalloc(ngroups + 1, sizeof(*host_of)); /* per block: a group of it, for its host */
	size_t n = 0;

	for (size_t g = 0; g < ngroups; g++) {
		const char *h = hosts && hosts[g] ? hosts[g] : "";
		struct shard_block *k = NULL;

		for (size_t i = 0; groups[g].boot && i < n && !k; i++) {
			const char *bh = hosts && hosts[host_of[i]] ? hosts[host_of[i]] : "";

			if (b[i].boot == groups[g].boot && streq(bh, h))
				k = &b[i];
		}
		if (!k) {
			host_of[n] = g;
			k = &b[n++];
			k->boot = groups[g].boot;
		}
		GROW(k->groups, k->alloc, k->n + 1);
		k->groups[k->n++] = g;
		k->runs += groups[g].n;
	}
	free(host_of);
	*ret = b;
	*ret_n = n;
}

void shard_plan(const struct shard_block *blocks, size_t nblocks, size_t ntasks, struct shard **ret, size_t *ret_n)
{
	size_t n = ntasks < nblocks ? ntasks : nblocks, used = 0;
	struct shard *s;

	if (!n)
		n = nblocks ? 1 : 0;
	s = xcalloc(n + 1, sizeof(*s));
	for (size_t i = 0; i < nblocks; i++) {
		size_t best = 0;

		for (size_t k = 1; k < n; k++)
			if (s[k].runs < s[best].runs)
				best = k;
		GROW(s[best].blocks, s[best].alloc, s[best].n + 1);
		s[best].blocks[s[best].n++] = i;
		s[best].runs += blocks[i].runs;
	}
	for (size_t k = 0; k < n; k++)
		used += s[k].n > 0;
	*ret = s;
	*ret_n = used; /* with n <= nblocks every shard got a block */
}

void shard_blocks_free(struct shard_block *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(b[i].groups);
	free(b);
}

void shards_free(struct shard *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].blocks);
	free(s);
}
