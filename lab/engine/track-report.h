/* SPDX-License-Identifier: MIT */
/*
 * The robot's report of a track (lab report TRACK_ID): per change point,
 * the robot's one line (the change with its interval, the metric, the
 * experiment and its workload, the culprit's id, subject and author, or
 * why it is not news: known or accepted), the series around it with the
 * change point marked, the bisect's steps, the machine's fingerprint and
 * the commands that make it again. Text, Markdown, HTML (one file, an
 * inline SVG of the series) and JSON.
 *
 * track_report_load reads the track's folder and what it names (each
 * comparison's stored run, each point's bisect); the formatters are pure
 * functions of what it read.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "bisect.h"
#include "track.h"
#include "../result/fingerprint.h"
#include "../util/diag.h"
#include "../util/strbuf.h"
#include "../util/strv.h"

struct track_report_point {
	bool have_bisect;  /* b holds the point's bisect.json */
	struct bisect b;
};

struct track_report {
	char *id;                        /* the track's run id */
	struct track t;
	char *workload;                  /* the metric's workload (its group), NULL: not known */
	/* the series (track_series): value[i] is a boot of tracked commit
	 * kept[commit[i]] */
	double *value;
	size_t *commit, *kept;
	size_t n, nkept;
	struct track_report_point *pts; /* one per t.points */
	struct fingerprint fp;           /* the machine: the first measured comparison's first environment */
	bool have_fp;
	struct strv notes;               /* what the folder names and could not be read, left out */
};

/* dir: the track's folder under the results folder root. A comparison or
 * bisect that cannot be read is left out, and said in notes (every format
 * shows them); track.json that cannot be read fails, with why in d. */
int track_report_load(const char *root, const char *dir, struct track_report *ret, struct diags *d);
void track_report_release(struct track_report *r);

/* The reproduce command of point i on the user's own tree: lab bisect
 * between its two tracked commits (argv, NULL-terminated, allocated). */
char **track_report_reproduce_argv(const struct track_report *r, size_t i);

void track_report_format_text(const struct track_report *r, struct strbuf *out);
void track_report_format_md(const struct track_report *r, struct strbuf *out);
void track_report_format_json(const struct track_report *r, struct strbuf *out);
void track_report_format_html(const struct track_report *r, struct strbuf *out);
