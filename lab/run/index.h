/* SPDX-License-Identifier: MIT */
/*
 * The result index: <results>/index.sqlite (WAL), the runs and metrics of
 * every run folder for fast listing and queries. The folders are the truth:
 * the index is rebuilt from them (`lab gc --reindex`). Never prints.
 */
#pragma once

#include <stddef.h>
#include "../result/result.h"
#include "../util/diag.h"

struct index_entry {
	char *id, *experiment, *verdicts;
	size_t total, ok, failed, pending;
};

/* Replace everything the index holds about rs (one transaction). */
int index_put(const char *root, const struct result_set *rs, const char *verdicts, struct diags *d);
/* After one run finished: its row and metrics replaced, the counts of its
 * lab run updated; the verdicts are left as they were (index_put sets them). */
int index_put_run(const char *root, const struct result_set *rs, size_t run, struct diags *d);
int index_list(const char *root, struct index_entry **ret, size_t *n, struct diags *d);
void index_entries_free(struct index_entry *e, size_t n);
/* Drop the index and read every run folder under root again; *ret_n: runs indexed. */
int index_rebuild(const char *root, size_t *ret_n, struct diags *d);
/* "improved 2, inconclusive 1" for a result set (its comparison's verdicts). */
char *index_verdict_summary(const struct result_set *rs);
