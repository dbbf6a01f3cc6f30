/* SPDX-License-Identifier: MIT */
/*
 * What an executor sees of the engine. An executor runs the groups the
 * engine made: it asks for a group's next run (engine_next), hands back
 * every run that ended elsewhere (engine_import_run, then
 * engine_save_runs) or failed (engine_fail_run), says what happens
 * (engine_emit), and tells the engine what it keeps of the executor's work
 * (the cluster's notes, the runs handed out, how many run now). It gets
 * the run's facts read-only and a handle to pass back; it never sees
 * struct engine, which is the engine's own (engine-priv.h).
 *
 * Two executors: local worker processes (executor_local, exec-local.c;
 * the worker's side is the engine's worker.c) and a Slurm cluster
 * (executor_slurm, exec-slurm.c).
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "../util/macro.h"
#include "engine-io.h"
#include "policy.h"

struct engine; /* the handle: never looked into here */
struct kartifact;
struct image_artifact;
struct plan_run;
struct result_run;
struct strmap;

/* The run an executor executes: its facts, read-only, and the engine's handle. */
struct executor_run {
	const struct engine_opts *o;
	const struct spec *s;
	const struct spec_experiment *e;
	const struct result_set *rs; /* the runs, pending ones included; changed only through the calls below */
	const char *dir;             /* the run folder */
	const struct strv *variants;
	const struct kartifact *arts; /* one per variant */
	const struct image_artifact *img;
	const struct run_group *groups;
	size_t ngroups;
	size_t total; /* runs to do */
	struct engine *engine;
};

/* 0, or -1 after the error went out as an event. */
struct executor_ops {
	const char *name;
	int (*execute)(const struct executor_run *r);
};
extern const struct executor_ops executor_local; /* worker processes here (exec-local.c) */
extern const struct executor_ops executor_slurm; /* array tasks on a Slurm cluster (exec-slurm.c) */
/* Set while the cluster's executor runs; set by engine_cancel() on a signal. */
extern volatile sig_atomic_t engine_cluster_active, engine_cluster_cancel;

/* The engine's calls an executor makes. */
/* The run the group's worker does next (a new one if the policy adds it):
 * 0 with its index, 1 when the group is done (sched.c). */
int engine_next(struct engine *x, size_t group, size_t *ret_run);
const struct plan_run *engine_plan_run(const struct engine *x, const char *id);
ssize_t engine_find_run(const struct result_set *rs, const char *id);
/* lab.yaml's host `name` if it is of `type` */
const struct spec_host *engine_find_host(const struct spec *s, const char *name, enum host_type type);
/* Whether a worker or a shard has run i; that one has it now. */
bool engine_issued(const struct engine *x, size_t i);
void engine_mark_issued(struct engine *x, size_t i);
/* How many workers (or queued shards) are at work now, for the progress. */
void engine_set_running(struct engine *x, unsigned n);
/* A line for the run's record of the cluster (result_set.cluster); once:
 * not when that line is there already. */
void engine_note_cluster(struct engine *x, const char *line, bool once);
/* Events (events.c): the one way out. */
void engine_emit(struct engine *x, const struct engine_event *ev);
/* An event of `type` whose text is the formatted message. */
void engine_emit_text(struct engine *x, enum engine_event_type type, const char *fmt, ...) _printf_(3, 4);
/* A run a cluster node ran, from its shard's result set `from` (its
 * folder under from_dir/runs/<id>): the folder moved into the run's, the
 * status, release, error, guest, node and environment taken, its boot
 * renumbered (boots: the node's boot ids to this run's, per shard result),
 * its metrics read back. Only a pending run: true when it was imported;
 * the caller saves it (engine_save_runs), once for all of a shard's
 * (run-end.c). */
bool engine_import_run(struct engine *x, size_t i, const struct result_set *from, const struct result_run *fr,
		       const char *from_dir, struct strmap *boots);
/* The journal written once, the index rows of runs[0..n) in one transaction. */
void engine_save_runs(struct engine *x, const size_t *runs, size_t n);
/* A pending run ends failed with `why` (taken), said and saved. */
void engine_fail_run(struct engine *x, size_t i, char *why);

/* The local executor's (exec-local.c). */
/* How many guests at a time (*ret_jobs) and each one's host CPUs; -1 with
 * *ret_err when the experiment's guests cannot run that many at a time
 * (sched.c). check_only: nothing kept. */
int engine_place(struct engine *x, bool check_only, unsigned *ret_jobs, char **ret_err);
/* The host CPUs of each slot (a NULL-ended list) engine_place chose; NULL:
 * the topology's own pinning. */
char *const *engine_cpusets(const struct engine *x);
/* In a worker process (a fork of the engine, worker.c): the runs the
 * engine hands out for group `task` on `slot`, its lines on fd. The
 * worker's exit status. */
int engine_work(struct engine *x, size_t task, unsigned slot, int fd);
/* A line from the worker of `task`; the reply to its "next" goes back on
 * `slot` (pool_reply) (worker-lines.c). */
void engine_message(struct engine *x, size_t task, unsigned slot, const char *line);

/* The Slurm executor's (exec-slurm.c). A shard's result bundle (a cluster
 * node's `lab shard`) into the run, checked as any hostile bundle
 * (bundle_unpack, its MANIFEST, store_load): its runs named in `runs` and
 * pending here are imported (engine_import_run), then saved at once
 * (engine_save_runs). The node of each run whose boot failed goes to
 * boot_failed (may be NULL). 1 imported, 0 no bundle at path, -1 refused
 * with why in *ret_why. */
int engine_import_shard(const struct executor_run *r, const char *path, const struct strv *runs,
			struct strv *boot_failed, char **ret_why);
/* Whether the experiment can run on the cluster (engine: slurm): a spool,
 * no bare-metal or qemu+ssh host, and with ask_slurm, sinfo answering
 * with nodes. Asked before anything is made. -1 with *ret_err. */
int engine_cluster_check(const struct executor_run *r, bool ask_slurm, char **ret_err);
