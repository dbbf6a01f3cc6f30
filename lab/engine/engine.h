/* SPDX-License-Identifier: MIT */
/*
 * The experiment engine: one experiment's `lab run` from the plan to the
 * saved results. A run folder in the store (or a stored one resumed), the
 * missing kernels and image built, the workload catalogue archived, then
 * the pending runs handed to worker processes (pool.c), at most `jobs` at
 * a time, each guest pinned inside its own host CPUs. A worker serves a
 * group of runs on one guest (or bare-metal host), asking the engine for
 * each next run; the engine asks its policy (policy.h). Every boot is
 * recorded, and every run with its boot, its place in it and its guest.
 * Only this process writes the journal and the index, after every run; a
 * failed run keeps its reason and the others go on.
 *
 * Never prints, never exits: progress, notes and errors are events to the
 * caller's callback.
 */
#pragma once

#include <stdbool.h>
#include "../result/compare.h"
#include "../result/result.h"
#include "../spec/spec.h"
#include "../util/diag.h"
#include "../util/strv.h"
#include "engine-io.h"
#include "policy.h"

/*
 * Run experiment e: a new lab run, or the pending runs of the stored one
 * in resume_dir. 0 with the saved result set in *ret_rs (failed runs
 * included), or -1 after the error went out as an event.
 */
int engine_run(const struct engine_opts *o, const struct spec_experiment *e, const char *resume_dir,
	       struct result_set **ret_rs);
/* --jobs against an experiment before anything is made: -1 with *ret_err
 * (free it) when its guests cannot run that many at a time. */
int engine_check_jobs(const struct spec *s, const struct spec_experiment *e, unsigned jobs, bool oversubscribe,
		      char **ret_err);
/* A stored run to resume: its folder (<root>/<id>, or id as a path to one)
 * and its experiment's name. -ENOENT when there is none (nothing in d),
 * another negative errno with d. */
int engine_resume_find(const char *root, const char *id, char **ret_dir, char **ret_experiment, struct diags *d);
/* Whether a finished run failed: a run of it failed, the data contradict
 * an expectation, or a mechanism check did not hold. */
bool engine_failed(const struct result_set *rs, const struct comparison *c);
/* From a signal handler: the workers stop (in a worker: its guests go).
 * Async-signal-safe. True when the engine ends by itself (a cluster's
 * jobs are cancelled by the running engine, which then returns): the
 * handler returns and lets it; false: the caller may end the process. */
bool engine_cancel(void);
/* The values a run was made with (its "set" or "kernels" file, a line
 * each) against those given with `option` for --resume: 0 the same, 1 none
 * given and the stored ones put in `given`, -1 with *ret_err when other
 * values are given (they would make another plan) or the file is unreadable. */
int engine_resume_values(const char *dir, const char *name, const char *option, struct strv *given,
			 char **ret_err);
