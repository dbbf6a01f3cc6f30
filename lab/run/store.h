/* SPDX-License-Identifier: MIT */
/*
 * The result store: one folder per `lab run` under the results root,
 * LKP-like and readable without lab:
 *
 *   <root>/<id>/lab.yaml      the lab.yaml snapshot
 *   <root>/<id>/plan.json     the resolved plan
 *   <root>/<id>/journal       one line per planned run (tab-separated: id,
 *                             status, variant, job, repeat, group, release,
 *                             error), rewritten atomically after each run;
 *                             its first line names the experiment
 *   <root>/<id>/variants      the compared kernels, baseline first
 *   <root>/<id>/expect        the expectations (job, metric, direction, effect)
 *   <root>/<id>/runs/<run>/   raw outputs, metrics, console, dmesg, config,
 *                             uname, packages, reproduce.sh
 *
 * Run ids sort by time: YYYYMMDD-HHMMSS-xxxx. Every file is written to a
 * temporary name, fsynced and renamed. The store never prints.
 */
#pragma once

#include "../result/result.h"
#include "../util/diag.h"

/* A fresh folder <root>/<id>; the id goes to *ret_id. */
int store_create(const char *root, char **ret_id, struct diags *d);
/* Write journal, variants and expect from the set (atomically each). */
int store_save(const char *dir, const struct result_set *rs, struct diags *d);
/* Only the journal (what changes after each run). */
int store_save_journal(const char *dir, const struct result_set *rs, struct diags *d);
/*
 * Read a run folder back (journal, variants, expect, mechanism, observe,
 * each ok run's metrics), strictly: a folder may come from elsewhere, so
 * every line is checked (run ids and kernel names are names, no id twice,
 * known statuses and directions, finite numbers) and the first problem is
 * an error naming its file and line. The id is the folder's name.
 */
int store_load(const char *dir, struct result_set **ret, struct diags *d);
/* The same for a folder whose name is not (yet) the run id; errors name
 * its files as in `shown` (NULL: dir). */
int store_load_as(const char *dir, const char *id, const char *shown, struct result_set **ret, struct diags *d);
/* The texts of a run folder's files (NUL-terminated; mechanism and observe
 * may be NULL) and the names to give in errors. */
struct store_text {
	const char *journal, *variants, *expect, *mechanism, *observe;
	const char *journal_file, *variants_file, *expect_file, *observe_file;
};
/* store_load's checks on texts in memory, without the metrics files. */
int store_parse(const char *id, const struct store_text *t, struct result_set **ret, struct diags *d);
/* One run's parsed metrics from <dir>/runs/<run>/metrics: 1 when read,
 * 0 when there is no such file (nothing added), or a negative errno. */
int store_load_metrics(const char *dir, struct result_run *r, struct diags *d);
/* <root>/<id>, or the folder itself when `id` is a path to one; NULL if neither exists. */
char *store_find(const char *root, const char *id);
/* The run ids under root, sorted. */
int store_list(const char *root, struct strv *ret);
