/* SPDX-License-Identifier: MIT */
/*
 * The bisect workflow (bisect.h decides each step): a new bisect checked
 * and stored, or a stored one read back and held to lab.yaml and the
 * store, then its steps run through the caller's engine call (workflow.h)
 * until the first bad patch is found, a step cannot be decided, or the
 * ends do not differ. Each step is a lab run of the experiment cut to the
 * two kernels and the jobs that measure the metric (spec_bisect_step),
 * stored like any other run. The bisect's own folder, <root>/<ID>/, is a
 * stored run too: bisect.json (the state, rewritten after every step and
 * as soon as a step's run exists), bisect.log (a timestamped line per
 * event) and every step's runs gathered, so `lab report ID`, `lab bundle
 * ID` and a resume work on it.
 *
 * Never prints, never exits: lines go to the workflow's say(), errors to
 * diags.
 */
#pragma once

#include "../util/diag.h"
#include "bisect.h"
#include "workflow.h"

struct spec;

/* A new bisect as the command line gives it (strings as typed where they name kernels). */
struct bisect_params {
	const char *experiment;
	const char *good, *bad; /* the series' from kernel, NAME@N or NAME (every patch); or two git refs */
	const char *kernel;     /* a commit bisect's kernel (NULL: the experiment's first, when it builds from git) */
	bool first_parent;      /* a commit bisect over the bad commit's first-parent line */
	const char *metric;
	double threshold_pct;   /* the smallest change that counts as bad; 0: 5 */
	int direction;          /* the bad way: +1, -1, 0: the way the ends differ */
	double alpha;           /* the whole bisect's error rate; 0: the experiment's */
	unsigned max_boots;     /* a kernel's boots in each step at most; 0: the experiment's */
};

struct bisect_session {
	const struct workflow *w;
	char *root;  /* the results folder */
	struct bisect b;
	char *dir, *id; /* the bisect's folder and id, once stored */
	struct diags *d; /* while it walks: where a late error goes */
};

/* A new bisect of p in spec s (lab.yaml as loaded) under root: checked,
 * the first step's cut tried, then stored with its state. 0, or -1 with d
 * (nothing stored when the input is bad). s's experiment is cut by the
 * try. */
int bisect_session_new(struct bisect_session *x, const struct workflow *w, const char *root, struct spec *s,
		       const struct bisect_params *p, struct diags *d);
/* The stored bisect `id` under root, read strictly and held to lab.yaml
 * (w->load_spec) and the store: a mismatch is refused naming the field. */
int bisect_session_open(struct bisect_session *x, const struct workflow *w, const char *root, const char *id,
			struct diags *d);
/*
 * Its steps until it ends (*ret_state found, stuck or no-change, logged
 * with why), then the folder gathered as a stored run. -1 with d when a
 * step or the gathering stopped it (a resume goes on from there).
 */
int bisect_session_walk(struct bisect_session *x, bool resumed, enum bisect_state *ret_state, struct diags *d);
void bisect_session_release(struct bisect_session *x);
