/* SPDX-License-Identifier: MIT */
/*
 * `lab site DIR`: the results site of every run folder under a results
 * root, written into DIR (result/site.h draws the pages):
 *
 *   DIR/index.html          every stored run, newest first
 *   DIR/runs/<id>.html      each run's HTML report (report_format_html),
 *                           or its own page (site_opts.own_page: a track's
 *                           timeline)
 *   DIR/exp/<name>.html     each experiment's declared metrics over time
 *
 * The run folders are the truth: each is loaded and compared as `lab
 * report` does, so the verdicts are the decision engine's on the stored
 * data. A folder that does not load is listed with why, never fatal. Every
 * page is written to a temporary name in its folder and renamed, so a web
 * server never serves half a page; file names come from site_file_name()
 * and no link on the way is followed, so nothing is written outside DIR.
 * DIR/.lab-site (result/site.h) lists the files lab site wrote there; a
 * rebuild removes the listed files it no longer writes (pages of runs and
 * experiments no longer stored) and nothing else, so a user's own files in
 * DIR stay, and a DIR with files but no manifest is written into without
 * removing anything. DIR may not be in the result store: not the results
 * folder or below it, not in a run folder (its pages would go into the
 * run's bundle). Never prints.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "../util/diag.h"
#include "../util/strbuf.h"
#include "../util/strv.h"

struct site_opts {
	bool all;         /* reports with every row, as lab report --all */
	bool allow_mixed; /* report runs whose environments differ in what matters */
	/* A run folder's page of its own instead of its comparison's report
	 * (a track's timeline, which the store cannot draw itself): 1 with
	 * the page in html, 0 when the folder has none, negative with why in
	 * d when it has one that cannot be drawn. NULL: none ever. */
	int (*own_page)(const char *root, const char *dir, struct strbuf *html, struct diags *d);
};

struct site_summary {
	size_t pages, runs, experiments, removed;
	struct strv damaged, why; /* the runs that do not load, and why (one line each) */
};

void site_summary_release(struct site_summary *s);

/* -ENOTDIR when dir is not a folder, -EINVAL when it is in the result
 * store (above), with the error in d; another negative errno when a page
 * cannot be written. */
int site_build(const char *root, const char *dir, const struct site_opts *o, struct site_summary *ret,
	       struct diags *d);
