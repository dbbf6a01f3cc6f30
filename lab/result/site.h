/* SPDX-License-Identifier: MIT */
/*
 * The results site's pages (`lab site DIR`): pure formatters, golden-tested.
 *
 *   index.html             every stored run, newest first: its id, experiment,
 *                          date, kernels, verdict counts and state, a link
 *                          to its report (runs/<id>.html) and to its
 *                          experiment's page; a run that does not load is
 *                          listed with why
 *   exp/<experiment>.html  per declared metric, a chart of its history
 *                          across the experiment's runs (each compared
 *                          variant's change against the baseline with its
 *                          interval, coloured by verdict), the caption
 *                          above it; then the runs, linking to their reports
 *
 * A page is one self-contained HTML file: inline CSS and SVG, no script, no
 * external resource, a viewport for phones. Every name comes from the store
 * and is escaped by the XML writer; file names made from names go through
 * site_file_name(), which never leaves its folder.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "compare.h"

/* One declared expectation of one compared variant in one run. */
struct site_point {
	char *metric, *group, *variant;
	enum verdict v;
	bool points;           /* the change is in points, not % */
	double change, lo, hi; /* the decision engine's; NaN: none */
	double mean;           /* the compared variant's mean; NaN: it reported nothing */
};

/* What the site shows of one stored run: kept when its result set is gone. */
struct site_run {
	char *id;
	char *experiment; /* NULL: the run does not load */
	char *error;      /* why it does not load, or why it has no report */
	bool report;      /* runs/<id>.html was written */
	struct strv variants;
	size_t ok, failed, pending;
	size_t verdicts[VERDICT_COUNT];
	double conf; /* the intervals' level: 1 - alpha */
	struct site_point *pts;
	size_t npts;
};

/* The site's summary of a comparison: its runs, and when judged, its
 * verdicts and their effects (not judged: its environments differ). */
void site_run_from(const struct comparison *c, bool judged, struct site_run *ret);
/* A run that does not load: its id and why. */
void site_run_damaged(const char *id, const char *why, struct site_run *ret);
void site_run_release(struct site_run *r);

/* A file name for `name` that stays in its folder: name itself when it is
 * made of letters, digits, '-', '_' and '.' (not first) and short, else
 * those characters kept, the rest '_', and a hash of the name appended
 * ("..-..-x" -> "x-3f2a81c0"), so two names never share a file. */
char *site_file_name(const char *name);
/*
 * The site's manifest, DIR/.lab-site: the files `lab site` wrote in DIR, a
 * path a line below DIR ("index.html", "runs/<file>.html",
 * "exp/<file>.html") after a comment line. A rebuild removes only files
 * its manifest lists and it no longer writes, so a user's own files in DIR
 * stay whatever their names.
 */
#define SITE_MANIFEST ".lab-site"
void site_manifest_format(const struct strv *files, struct strbuf *out);
/* The lines of a manifest that name a page `lab site` could have written,
 * in order, once each; any other line (a comment, "..", a path of another
 * shape, a name site_file_name() never makes) is skipped: a manifest from
 * elsewhere can never get a file outside the site's own removed. */
void site_manifest_parse(const char *buf, size_t len, struct strv *ret);
/* "2026-11-30 12:00" from a run id (YYYYMMDD-HHMMSS-xxxx); NULL when it is not one. */
char *site_date(const char *id);
/* 15.2k, 23.9M, 0.0012: a value on an axis whose ticks are `step` apart, never in e-notation. */
void site_format_number(double v, double step, struct strbuf *out);

/* index.html of runs[0..n) in that order (newest first). */
void site_format_index(const struct site_run *const *runs, size_t n, struct strbuf *out);
/* exp/<file>.html of one experiment's runs[0..n) in that order (newest first). */
void site_format_experiment(const char *experiment, const struct site_run *const *runs, size_t n,
			    struct strbuf *out);
