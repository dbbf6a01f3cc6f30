/* SPDX-License-Identifier: MIT */
/*
 * The result store: one folder per `lab run` under the results root,
 * LKP-like and readable without lab:
 *
 *   <root>/<id>/lab.yaml      the lab.yaml snapshot
 *   <root>/<id>/plan.json     the resolved plan
 *   <root>/<id>/run.json      what the run is and how far it got (below),
 *                             rewritten atomically after each run
 *   <root>/<id>/runs/<run>/   raw outputs, metrics ("metric value" lines,
 *                             the workload's parse script's output),
 *                             console, dmesg, config, uname, packages,
 *                             reproduce.sh
 *
 * run.json (written with the escaping JSON writer, read back through
 * util/json-read only):
 *
 *   { "format": 2,
 *     "experiment": "tg-load-avg",
 *     "variants": ["base", "tg-ratelimit"],        compared kernels, baseline first
 *     "mechanism": ["kernel base: ..."],           checks the report repeats
 *     "timing": "host" | "icount",                 the topology's; absent: host
 *     "expect": [{"job": 0, "metric": "sysbench.tps", "direction": "increase"
 *                 (or "decrease", "unchanged"), "effect": 0.02 or null}],
 *     "observe": [{"metric": "...", "rel": ">=" (observe_rel_name), "value": 1.5,
 *                  "kernels": ["base"] ([]: every kernel), "says": "..." or null}],
 *     "series": [{"kernel": "pcp-auto",             a swept series' order (absent: none)
 *                 "chain": ["base", "pcp-auto@1", ...],   its `from`, then steps, rising
 *                 "patches": [{"number": 1, "subject": "mm: ..."}]}],
 *     "runs": [{"id": "tg-load-avg.0001", "status": "pending" | "ok" | "failed",
 *               "variant": "base", "job": 0, "repeat": 1, "group": "pg-sysbench threads=100%",
 *               "release": "6.1.192-lab-base-1" or null, "error": "..." or null,
 *               "boot": "tg-load-avg.b1" or null, "boot_pos": 1 (0: unknown),
 *               "guest": "lab-base-0" or null,
 *               "fingerprint": 0}],                 index in fingerprints; absent: unknown
 *     "fingerprints": [{...}] }                    each distinct environment once (fingerprint.h);
 *                                                  absent in runs stored before them
 *
 * Every member is required (null where shown) but timing and series,
 * which runs stored before they were recorded lack; an unknown member, a
 * missing one or one of another type is an error naming the file (and the
 * line and column of a syntax error), and the element ("runs[3]").
 *
 * Runs stored before run.json (lab up to 480d661: journal, variants,
 * expect, mechanism, observe; see store-v1.h) are read transparently, so
 * old runs and bundles of them open unchanged; they are converted only
 * when lab writes the run again (`lab run --resume`): store_save writes
 * run.json atomically, then removes the old files, and run.json wins over
 * them should that stop half-way. Reading never writes.
 *
 * Run ids sort by time: YYYYMMDD-HHMMSS-xxxx. Every file is written to a
 * temporary name, fsynced and renamed. The store never prints.
 */
#pragma once

#include "../result/result.h"
#include "../util/diag.h"
#include "../util/strbuf.h"

#define STORE_FILE "run.json"
#define STORE_FORMAT 2
/* Distinct environments one run.json may list. */
#define STORE_MAX_FINGERPRINTS 4096

/* A fresh folder <root>/<id>; the id goes to *ret_id. */
int store_create(const char *root, char **ret_id, struct diags *d);
/* run.json from the set (pretty JSON, a trailing newline). */
void store_format(const struct result_set *rs, struct strbuf *out);
/* Write run.json atomically (and drop an old layout's files). */
int store_save(const char *dir, const struct result_set *rs, struct diags *d);
/* The same: what changes after each run is in run.json too. */
int store_save_journal(const char *dir, const struct result_set *rs, struct diags *d);
/*
 * Read a run folder back (run.json, or the old layout, and each ok run's
 * metrics), strictly: a folder may come from elsewhere, so everything is
 * checked (run ids and kernel names are names, no id twice, known statuses
 * and directions, finite numbers) and the first problem is an error naming
 * its file. The id is the folder's name.
 */
int store_load(const char *dir, struct result_set **ret, struct diags *d);
/* The same for a folder whose name is not (yet) the run id; errors name
 * its files as in `shown` (NULL: dir). */
int store_load_as(const char *dir, const char *id, const char *shown, struct result_set **ret, struct diags *d);
/* store_load's checks on a run.json text in memory (len bytes; `file` for
 * errors), without the metrics files. */
int store_parse(const char *id, const char *text, size_t len, const char *file, struct result_set **ret,
		struct diags *d);
/* One run's parsed metrics from <dir>/runs/<run>/metrics: 1 when read,
 * 0 when there is no such file (nothing added), or a negative errno. */
int store_load_metrics(const char *dir, struct result_run *r, struct diags *d);
/* <root>/<id>, or the folder itself when `id` is a path to one; NULL if neither exists. */
char *store_find(const char *root, const char *id);
/* The run ids under root, sorted. */
int store_list(const char *root, struct strv *ret);
