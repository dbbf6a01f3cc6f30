/* SPDX-License-Identifier: MIT */
/*
 * What a caller gives the engine and hears from it: its options, its
 * events and its progress. engine.h (the engine's functions) and
 * executor.h (what an executor sees) both build on these.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "../result/result.h"
#include "../spec/spec.h"
#include "../util/diag.h"
#include "../util/strbuf.h"
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
