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
#include "policy.h"

struct engine_progress {
	size_t done, failed, total; /* runs of this lab run: ended, failed, to do */
	unsigned running;           /* workers at work */
	/* repeat: auto: runs still to end before the next look (it may stop
	 * there), -1 when no look is ahead; the budget's max-time end
	 * (now_sec), 0 when it has none */
	long to_look;
	double budget_end;
};

/*
 * The time so far and left: "3m10s, ETA T", T from the mean time a run
 * took so far (elapsed over done). With repeat: auto the plan holds the
 * whole budget and a look may end the run well before it: "3m10s, next
 * look in T1, budget ends in T2" (the budget's max-time end if sooner).
 * No time left before the first run ends or after the last.
 */
void engine_format_time(const struct engine_progress *p, double elapsed, double now, struct strbuf *sb);

enum engine_event_type {
	ENGINE_EV_STARTED,    /* id, experiment, dir, nruns: the run folder is ready */
	ENGINE_EV_RUNS_BEGIN, /* the builds are done, progress->total runs to do */
	ENGINE_EV_BUILD_STEP, /* name (a kernel variant or image), what: building */
	ENGINE_EV_BUILD_OBJECTS, /* name (a kernel variant): objects compiled so far, of objects_expected (0: unknown) */
	ENGINE_EV_NOTE,       /* text: a line worth keeping */
	ENGINE_EV_STEP,       /* run, what: a step of a run or of its guest */
	ENGINE_EV_RUN_DONE,   /* run ended (status ok or failed); lost: its worker died first */
	ENGINE_EV_RUNS_END,   /* no more run steps (a progress line may go) */
	ENGINE_EV_ERROR,      /* text: an error, said as the command's own */
	ENGINE_EV_DIAGS,      /* diags: errors with their places */
	ENGINE_EV_WARNING,    /* text: something failed that the run survives */
};

struct engine_event {
	enum engine_event_type type;
	const char *id, *experiment, *dir;
	size_t nruns;
	const char *name, *what, *text;
	const struct result_run *run;
	bool lost;
	struct diags *diags;
	const struct engine_progress *progress;
	size_t objects, objects_expected;
};

struct kartifact;
struct image_artifact;

/* A cluster node's engine (lab shard): the kernels (one per variant, in
 * the experiment's variant order) and the image from the spool, the
 * catalogue archive the head made. Nothing is built or archived. */
struct engine_prebuilt {
	const struct kartifact *kernels;
	size_t nkernels;
	const struct image_artifact *image;
	const char *catalogue_tar;
};

struct engine_opts {
	const struct spec *s;
	const char *root;  /* the results folder */
	const char *layer; /* lab's guest layer (image builds) */
	const char *insn_plugin; /* lab-insn.so for guests of an experiment with an insn-plugin monitor; NULL: none */
	const struct strv *set, *kernels; /* --set and --kernels, kept with a new run for --resume */
	unsigned jobs;     /* guests at a time; 0: from the host's CPUs and the topology */
	bool oversubscribe;
	const struct run_policy *policy; /* NULL: the plan as it is */
	/* where the boots run: NULL or type local, this machine's workers;
	 * slurm: the cluster's nodes, a shard of whole comparison blocks each */
	const struct spec_engine *cluster;
	const struct engine_prebuilt *prebuilt; /* a cluster node: nothing built (NULL: build what is missing) */
	const char *node; /* a cluster node's name, recorded with each run it runs */
	const char *self; /* lab's own executable (the job script runs it on the nodes); NULL: /proc/self/exe */
	void (*event)(void *userdata, const struct engine_event *ev);
	void *userdata;
};

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
