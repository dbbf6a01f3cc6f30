/* SPDX-License-Identifier: MIT */
/*
 * The result index: <results>/index.sqlite (WAL), the runs and metrics of
 * every run folder for fast listing and queries. The folders are the truth:
 * the index is rebuilt from them (`lab gc --reindex`). Never prints.
 *
 * Many labs may use one index at once: each waits for the others' writes
 * (busy timeout set before anything else), every write is one
 * transaction, listing opens read-only. A reindex builds a new file and
 * renames it over the old one while it holds <results>/index.lock
 * exclusively (every other use holds it shared), so a reader sees the old
 * index or the new one, never a half-built one.
 */
#pragma once

#include <stddef.h>
#include "../result/result.h"
#include "../util/diag.h"
#include "../util/strv.h"

struct index_entry {
	char *id, *experiment, *verdicts;
	size_t total, ok, failed, pending;
};

/* Replace everything the index holds about rs (one transaction). */
int index_put(const char *root, const struct result_set *rs, const char *verdicts, struct diags *d);
/* After one run finished: its row and metrics replaced, the counts of its
 * lab run updated; the verdicts are left as they were (index_put sets them). */
int index_put_run(const char *root, const struct result_set *rs, size_t run, struct diags *d);
/* The same for runs[0..n) in one transaction (a cluster shard's runs). */
int index_put_runs(const char *root, const struct result_set *rs, const size_t *runs, size_t n, struct diags *d);
/* Every lab run in the index, read-only; -ENOENT (nothing in d) when there is no index. */
int index_list(const char *root, struct index_entry **ret, size_t *n, struct diags *d);
/* The run folders under root that the listed entries lack. */
int index_unindexed(const char *root, const struct index_entry *e, size_t n, struct strv *ret);
void index_entries_free(struct index_entry *e, size_t n);
/* A new index from every run folder under root, renamed over the old one;
 * *ret_n: runs indexed. A folder that does not load is skipped (its id in
 * ret_skipped, why in d) and the others are indexed all the same. */
int index_rebuild(const char *root, size_t *ret_n, struct strv *ret_skipped, struct diags *d);
/* "improved 2, inconclusive 1" for a result set (its comparison's verdicts). */
char *index_verdict_summary(const struct result_set *rs);
