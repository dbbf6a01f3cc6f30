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

struct engine;

/*
 * Where the groups run: an executor takes the groups made (x->groups),
 * asks engine_next() for their runs, and brings every run to its end
 * (engine_message's lines from local workers, engine_import_run for a
 * run a cluster node ran). The planner, the policy and the store do not
 * know which one runs. 0, or -1 after the error went out as an event.
 */
struct executor_ops {
	const char *name;
	int (*execute)(struct engine *x);
};
/* Set while the cluster's executor runs; set by engine_cancel() on a signal. */
extern volatile sig_atomic_t engine_cluster_active, engine_cluster_cancel;
extern const struct executor_ops executor_local; /* worker processes here (pool.c) */
extern const struct executor_ops executor_slurm; /* array tasks on a Slurm cluster (exec-slurm.c) */

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
	unsigned jobs;
	size_t ended; /* groups whose worker ended */
	struct engine_progress prog;
	double t0;
	/* in a worker */
	int fd;
	size_t cur;
	unsigned slot;
};

/* Events (events.c): the one way out, below every other part of the engine. */
void engine_emit(struct engine *x, const struct engine_event *ev);
/* An event of `type` whose text is the formatted message. */
void engine_emit_text(struct engine *x, enum engine_event_type type, const char *fmt, ...) _printf_(3, 4);
/* The diagnostics as one event. */
void engine_emit_diags(struct engine *x, struct diags *d);

/* The parent's side (engine.c). */
/* One line from the worker of `task`; the reply to a "next" goes back on `slot`. */
void engine_message(struct engine *x, size_t task, unsigned slot, const char *line);

/* Scheduling (sched.c). Runs into groups: each pending run alone, with
 * `boot: once` a group per variant and host, with `boot: side-by-side` a
 * group per host (its runs in the plan's order, the variants interleaved). */
void engine_make_groups(struct engine *x);
/* How many guests at a time (*ret_jobs) and each one's host CPUs; -1 with
 * *ret_err when the experiment's guests cannot run that many at a time. */
int engine_place(struct engine *x, bool check_only, unsigned *ret_jobs, char **ret_err);
/* x->rs, x->groups and the policy set: issued and boot numbering start
 * from the result set (a resumed run's boots go on from its last). */
void engine_sched_init(struct engine *x);
void engine_release(struct engine *x);
/* The run the group's worker does next (a new one if the policy adds it):
 * 0 with its index, 1 when the group is done. */
int engine_next(struct engine *x, size_t group, size_t *ret_run);
/* The progress's runs to the policy's next look, again. */
void engine_progress_looks(struct engine *x);
/* A run added like run `like` with this id and repeat, in group `group`
 * (SIZE_MAX: none, in a worker); its index. */
size_t engine_add_run(struct engine *x, size_t group, const char *id, size_t like, unsigned repeat);
/* A boot begins on `guest`; the runs that guest serves until its next boot are its. */
struct boot *engine_boot_begin(struct engine *x, const char *guest, const char *variant);
/* Run i ended on `guest` (NULL: it never reached one): its boot, place and guest. */
void engine_boot_run(struct engine *x, size_t i, const char *guest);
const struct plan_run *engine_plan_run(const struct engine *x, const char *id);
ssize_t engine_find_run(const struct result_set *rs, const char *id);
/* lab.yaml's host `name` if it is of `type` */
const struct spec_host *engine_find_host(const struct spec *s, const char *name, enum host_type type);

/* The Slurm executor (exec-slurm.c). A shard's result bundle (a cluster node's `lab shard`) into the run,
 * checked as any hostile bundle (bundle_unpack, its MANIFEST, store_load):
 * its runs named in `runs` and pending here are imported (engine_import_run),
 * then saved at once: the journal and their index rows (engine_save_runs).
 * The node of each run whose boot failed goes to boot_failed (may be NULL).
 * 1 imported, 0 no bundle at path, -1 refused with why in *ret_why. */
int engine_import_shard(struct engine *x, const char *path, const struct strv *runs, struct strv *boot_failed,
			char **ret_why);
/* Whether the experiment can run on the cluster (engine: slurm): a spool,
 * no bare-metal or qemu+ssh host, and with ask_slurm, sinfo answering
 * with nodes. Asked before anything is made. -1 with *ret_err. */
int engine_cluster_check(const struct engine *x, bool ask_slurm, char **ret_err);

/* How a run ends, whoever ran it (run-end.c): what an executor hands back. */
/* A local worker's "done" for run i: status, release, error, boot, fingerprint; said and saved. */
void engine_run_done(struct engine *x, size_t i, const struct wire_msg *m);
/* A run a cluster node ran, from its shard's result set `from` (its
 * folder under from_dir/runs/<id>): the folder moved into the run's, the
 * status, release, error, guest, node and environment taken, its boot
 * renumbered (boots: the node's boot ids to this run's, per shard result),
 * its metrics read back. Only a pending run: true when it was imported;
 * the caller saves it (engine_save_runs), once for all of a shard's. */
bool engine_import_run(struct engine *x, size_t i, const struct result_set *from, const struct result_run *fr,
		       const char *from_dir, struct strmap *boots);
/* The journal and that run's index rows only. */
void engine_save_run(struct engine *x, size_t i);
/* The same for runs[0..n): the journal written once, their index rows in
 * one transaction (a shard's imported runs). */
void engine_save_runs(struct engine *x, const size_t *runs, size_t n);
/* A pending run ends failed with `why` (taken), said and saved. */
void engine_fail_run(struct engine *x, size_t i, char *why);
/* The run folder and the whole index entry (the verdicts with it): 0, or -1 said. */
int engine_save(struct engine *x, const char *dir, const struct result_set *rs);

/* The worker's side (worker.c): the runs the parent hands out for group `task`. */
int engine_work(void *userdata, size_t task, unsigned slot, int fd);
