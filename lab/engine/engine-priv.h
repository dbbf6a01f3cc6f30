/* SPDX-License-Identifier: MIT */
/*
 * Inside the engine: one experiment's execution, shared by lab (the
 * parent: engine.c) and its workers (worker.c), and the parts unit tests
 * drive without processes (the policy's answers, the boots' bookkeeping).
 */
#pragma once

#include <signal.h>
#include <sys/types.h>
#include "../image/image.h"
#include "../kernel/build.h"
#include "../kernel/variant.h"
#include "../plan/plan.h"
#include "engine.h"
#include "executor.h"
#include "policy.h"
#include "wire.h"
#include "../util/strmap.h"

/* One boot of a guest (or kexec of a host) and the runs it served, in order. */
struct boot {
	char *id;      /* <experiment>.b<N> */
	char *variant; /* the kernel it booted */
	char *guest;   /* the VM name, or the bare-metal host's */
	size_t *runs;  /* indexes into the result set */
	size_t n, alloc;
};

/* A run the policy added: the planned run it repeats under its own id. */
struct added_run {
	struct plan_run pr; /* pr.id owned; the rest borrowed from the plan */
	bool planned;       /* the run it repeats is in the plan (else it cannot run) */
	size_t like;        /* the run it repeats, in the result set */
};

struct engine {
	const struct engine_opts *o;
	const struct spec *s;
	const struct spec_experiment *e;
	const struct plan *p;
	struct added_run *extra;
	size_t nextra, extra_alloc;
	struct result_set *rs;
	const char *dir, *tarp;
	const struct strv *variants;
	const struct kartifact *arts;
	const struct kvariant *vars;
	const struct image_artifact *img;
	struct run_group *groups;
	size_t ngroups;
	bool *issued; /* per run: a worker has had it */
	size_t issued_alloc;
	struct boot *boots;
	size_t nboots, boots_alloc;
	unsigned boot_seq; /* the last boot's N */
	struct run_policy policy;
	char **cpusets; /* per slot; NULL: the topology's own pinning */
	pid_t lab;
	struct engine_progress prog;
	double t0;
	/* in a worker */
	int fd;
	size_t cur;
	unsigned slot;
};

/* Events (events.c), besides executor.h's: the diagnostics as one event. */
void engine_emit_diags(struct engine *x, struct diags *d);


/* Scheduling (sched.c). Runs into groups: each pending run alone, with
 * `boot: once` a group per variant and host, with `boot: side-by-side` a
 * group per host (its runs in the plan's order, the variants interleaved). */
void engine_make_groups(struct engine *x);
/* x->rs, x->groups and the policy set: issued and boot numbering start
 * from the result set (a resumed run's boots go on from its last). */
void engine_sched_init(struct engine *x);
void engine_release(struct engine *x);
/* The progress's runs to the policy's next look, again. */
void engine_progress_looks(struct engine *x);
/* A run added like run `like` with this id and repeat, in group `group`
 * (SIZE_MAX: none, in a worker); its index. */
size_t engine_add_run(struct engine *x, size_t group, const char *id, size_t like, unsigned repeat);
/* A boot begins on `guest`; the runs that guest serves until its next boot are its. */
struct boot *engine_boot_begin(struct engine *x, const char *guest, const char *variant);
/* Run i ended on `guest` (NULL: it never reached one): its boot, place and guest. */
void engine_boot_run(struct engine *x, size_t i, const char *guest);

/* How a run ends, whoever ran it (run-end.c): what an executor hands back. */
/* A local worker's "done" for run i: status, release, error, boot, fingerprint; said and saved. */
void engine_run_done(struct engine *x, size_t i, const struct wire_msg *m);
/* The journal and that run's index rows only. */
void engine_save_run(struct engine *x, size_t i);
/* The executor's view of x (executor.h): its facts and x as the handle. */
void engine_executor_run(struct engine *x, struct executor_run *ret);
/* The run folder and the whole index entry (the verdicts with it): 0, or -1 said. */
int engine_save(struct engine *x, const char *dir, const struct result_set *rs);

