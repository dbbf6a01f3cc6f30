/* SPDX-License-Identifier: MIT */
/*
 * Shards: a cluster node's share of a plan (one Slurm array task each).
 * A shard holds whole comparison blocks: the groups of one boot of the
 * plan (both sides of a pair, every variant of a block) always go to the
 * same node, interleaved as they are locally; never one variant per node.
 * Pure: no I/O, golden- and unit-tested.
 */
#pragma once

#include <stddef.h>
#include "policy.h"

/* The groups of one plan boot on one host: what a node runs together. */
struct shard_block {
	size_t *groups; /* indexes of run groups, in the plan's order */
	size_t n, alloc;
	size_t runs;    /* runs of its groups */
	unsigned boot;  /* the plan's boot (0: a group of no known boot, alone) */
};

struct shard {
	size_t *blocks; /* indexes of blocks, in the plan's order */
	size_t n, alloc;
	size_t runs;
};

/* Groups into blocks: groups of the same plan boot (> 0) and host are one
 * block; hosts[i] is group i's host ("" when none). Blocks in the order of
 * their first group. */
void shard_blocks(const struct run_group *groups, size_t ngroups, const char *const *hosts, struct shard_block **ret,
		  size_t *ret_n);
/* Blocks into at most `ntasks` (>= 1) shards, each block whole, balanced
 * by runs: each block in the plan's order onto the shard with the fewest
 * runs so far (the lowest index on a tie), so no shard has more than the
 * largest block more runs than another. Empty shards are not made. */
void shard_plan(const struct shard_block *blocks, size_t nblocks, size_t ntasks, struct shard **ret, size_t *ret_n);
void shard_blocks_free(struct shard_block *b, size_t n);
void shards_free(struct shard *s, size_t n);
