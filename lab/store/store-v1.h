/* SPDX-License-Identifier: MIT */
/*
 * The reader of run folders stored before run.json (lab up to 480d661):
 * line and tab-separated files, each read strictly and kept only so that
 * those runs, and bundles of them, still open. Nothing writes this layout
 * any more; store_save replaces it with run.json (see store.h).
 *
 *   journal    "# lab journal 1 experiment=<name>", then one line per
 *              planned run: id, status, variant, job, repeat, group,
 *              release, error (tab-separated; "-" for none)
 *   variants   the compared kernels, baseline first, one a line
 *   expect     job, metric, direction, effect ("-" for none)
 *   mechanism  the checks the report repeats, one a line (optional)
 *   observe    metric, relation, value, kernels (comma-separated or "-"),
 *              says ("-" for none) (optional)
 * Never prints.
 */
#pragma once

#include "../result/result.h"
#include "../util/diag.h"

/* The old files of a run folder */
#define STORE_V1_JOURNAL "journal"
extern const char *const store_v1_files[]; /* NULL-terminated, the journal first */

/* The texts of an old run folder's files (NUL-terminated; mechanism and
 * observe may be NULL) and the names to give in errors. */
struct store_v1_text {
	const char *journal, *variants, *expect, *mechanism, *observe;
	const char *journal_file, *variants_file, *expect_file, *observe_file;
};
/* Every line checked (run ids and kernel names are names, no id twice,
 * known statuses and directions, finite numbers); the first problem is an
 * error naming its file and line. No metrics: those are the run folder's. */
int store_v1_parse(const char *id, const struct store_v1_text *t, struct result_set **ret, struct diags *d);
/* Read the old files of `dir` (errors name them as under `shown`) and parse
 * them; *ret_journal the journal's shown path, for errors about a run
 * (a run i is on its line i + 2). */
int store_v1_load(const char *dir, const char *id, const char *shown, struct result_set **ret,
		  char **ret_journal, struct diags *d);
