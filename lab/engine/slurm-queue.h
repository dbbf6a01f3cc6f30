/* SPDX-License-Identifier: MIT */
/*
 * What `squeue --json` says about the queue, read into one record per task
 * (issue 26: lab's VM boots as Slurm array tasks). Read, never printed.
 *
 * Facts of the data (Slurm 22.05, OpenAPI v0.0.38; tests/data/squeue/):
 *   - --json ignores every filter: all jobs of all users are listed, and
 *     finished ones (COMPLETED, FAILED, CANCELLED) stay for MinJobAge.
 *   - The pending tasks of an array not yet split are ONE record: its
 *     job_id is the array's, array_task_id null, array_task_string "2-3",
 *     "0-5%2" (throttle) or "1-199:3" (step). That string is cut at 63
 *     bytes with "..." unless squeue runs with SLURM_BITSTR_LEN=0; a cut
 *     one is refused here, since a task past the cut would look gone.
 *   - A controller that does not answer is exit 0, "jobs": [] and an
 *     entry in "errors": an error here, never an empty queue.
 *   - Later Slurm (OpenAPI v0.0.39+) makes job_state an array and numbers
 *     {"set": true, "number": N}; both forms are read.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* One task of lab's jobs as squeue --json reports it. */
struct slurm_task {
	unsigned long long job_id;       /* the task's own job id */
	unsigned long long array_job_id; /* the array's id, 0 when not in an array */
	long array_task_id;              /* -1: not an array task (or a pending record of several, see below) */
	char *array_tasks;               /* a pending record of several tasks: "2-3%2" as Slurm says, else NULL */
	char *name;                      /* the job name, NULL when missing */
	char *state;                     /* PENDING, RUNNING, COMPLETING, ... (the first of job_state), NULL when missing */
	char *reason;                    /* state_reason: Resources, Priority, BeginTime, ... ("None" kept), NULL when missing */
	char *nodes;                     /* the node(s) it runs on, NULL when none */
	char *comment;                   /* the job's comment, NULL when none */
};

struct slurm_queue {
	struct slurm_task *v;
	size_t n;
};

/*
 * squeue --json's output; only the fields above (and "errors") are read,
 * unknown fields ignored. Errors, in *ret_err (free it), *ret untouched:
 * -EINVAL for text that is no JSON object, a missing "jobs" array, a job
 * that is no object or has no job_id, a field of the wrong type or out of
 * range, a cut array_task_string; -EIO when Slurm reported an error in
 * "errors" (the controller did not answer). Never crashes on any input.
 */
int slurm_queue_parse(const char *json, size_t len, struct slurm_queue *ret, char **ret_err);
void slurm_queue_release(struct slurm_queue *q);

/* Whether array task `task` of array job `array_job` is in the queue (its own record or inside a pending
 * record's array_tasks range list like "0-3,7%2"); its record in *ret (may be NULL). */
bool slurm_queue_has_task(const struct slurm_queue *q, unsigned long long array_job, unsigned task,
			  const struct slurm_task **ret);

/* "0-3,7%2" (also "1-199:3", a step) -> whether n is in it (the %N throttle ignored); false for text
 * that is no such list. */
bool slurm_task_range_has(const char *range, unsigned n);
