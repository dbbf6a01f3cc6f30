/* SPDX-License-Identifier: MIT */
/*
 * The track workflow (track.h decides): a new track listed from git and
 * stored, or a stored one read back, then its comparisons run through the
 * caller's engine call (workflow.h), one after another, its change points
 * decided over the series, and each change point with commits between its
 * two tracked commits bisected (bisect-run.h, the whole graph between
 * them) to its culprit. The track's folder, <root>/<ID>/, holds
 * track.json (rewritten after every comparison and bisect) and track.log.
 *
 * Never prints, never exits: lines go to the workflow's say(), errors to
 * diags.
 */
#pragma once

#include "../util/diag.h"
#include "track.h"
#include "workflow.h"

struct spec;

struct track_params {
	const char *experiment;
	const char *branch, *since; /* refs of the kernel's git source: since is the start */
	const char *metric;
	const char *kernel;         /* NULL: the experiment's first */
	unsigned step;              /* every Nth first-parent commit; 0: 1 */
	double threshold_pct;       /* a bisect's threshold; 0: 5 */
	double alpha;               /* 0: the experiment's */
};

struct track_session {
	const struct workflow *w;
	char *root;
	struct track t;
	char *dir, *id;
};

int track_session_new(struct track_session *x, const struct workflow *w, const char *root, struct spec *s,
		      const struct track_params *p, struct diags *d);
int track_session_open(struct track_session *x, const struct workflow *w, const char *root, const char *id,
		       struct diags *d);
/* Every comparison not done, the change points, their bisects. 0 when the
 * track is complete; -1 with d when something stopped it (a resume goes on). */
int track_session_walk(struct track_session *x, bool resumed, struct diags *d);
void track_session_release(struct track_session *x);
/* A known trade-off added to <root>/accepted.json (one line of why): a
 * change point whose culprit it names is shown as accepted, not as news.
 * 0, or a negative errno with d. */
int track_accept(const char *root, const char *commit, const char *metric, const char *why, struct diags *d);
