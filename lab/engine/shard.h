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

#include <stdbool.h>
#include "../util/strbuf.h"
#include "../util/strv.h"

/* What a node's `lab shard` reads: <job dir>/shard-<N>/shard.json, written
 * by the head. Hostile until checked: names are names, keys and digests hex. */
struct shard_kernel {
	char *variant, *key, *digest; /* key: the build key; digest: its spool folder's MANIFEST */
};
struct shard_spec {
	char *lab;        /* the head's lab version: the node's must be the same */
	char *run;        /* the run id */
	char *experiment;
	unsigned index;
	struct shard_kernel *kernels; /* one per variant, in the experiment's order */
	size_t nkernels;
	char *image_id, *image_digest;
};
void shard_spec_format(const struct shard_spec *s, struct strbuf *out);
/* 0, or -EINVAL with *ret_err "<path>: ..." (free it). */
int shard_spec_parse(const char *path, const char *text, size_t len, struct shard_spec *ret, char **ret_err);
void shard_spec_release(struct shard_spec *s);

/* The head's journal of its cluster jobs, <run folder>/slurm.json: what
 * `lab run --resume` re-attaches to. */
enum shard_state { SHARD_NEW, SHARD_QUEUED, SHARD_DONE, SHARD_FAILED, SHARD_STATE_COUNT };
const char *shard_state_name(enum shard_state s);
struct shard_entry {
	unsigned index;          /* its folder, <job dir>/shard-<index> */
	enum shard_state state;
	unsigned long long job;  /* the array job of its latest submission, 0: none */
	unsigned task;           /* its array index there */
	unsigned attempts;       /* submissions so far */
	struct strv runs;        /* its run ids */
};
struct shard_journal {
	struct shard_entry *v;
	size_t n, alloc;
	struct strv exclude; /* nodes left out */
	struct strv retries; /* every retry and why, in order */
};
void shard_journal_format(const struct shard_journal *j, struct strbuf *out);
int shard_journal_parse(const char *path, const char *text, size_t len, struct shard_journal *ret, char **ret_err);
void shard_journal_release(struct shard_journal *j);
