/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for engine/slurm-queue.c: squeue --json's output comes from
 * another program and a cluster lab does not own. Any bytes: never a
 * crash or a leak; an error always says why and leaves the queue alone;
 * what is accepted keeps the header's promises, and every task a record
 * names is found again by slurm_queue_has_task.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include "engine/slurm-queue.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slurm_queue q = { .n = 7 };
	char *err = NULL;

	if (size > 256 * 1024)
		return 0;
	if (slurm_queue_parse((const char *)data, size, &q, &err) < 0) {
		if (!err || q.n != 7 || q.v)
			abort(); /* an error says why, *ret untouched */
		free(err);
		return 0;
	}
	if (err || (q.n && !q.v))
		abort();
	for (size_t i = 0; i < q.n; i++) {
		const struct slurm_task *t = &q.v[i], *found = NULL;

		if (t->job_id > 4294967295ULL || t->array_job_id > 4294967295ULL || t->array_task_id < -1 ||
		    t->array_task_id > 4294967295L)
			abort();
		/* "" is NULL for these */
		if ((t->array_tasks && !*t->array_tasks) || (t->nodes && !*t->nodes) || (t->comment && !*t->comment))
			abort();
		if (t->array_task_id >= 0 && t->array_job_id &&
		    !slurm_queue_has_task(&q, t->array_job_id, (unsigned)t->array_task_id, &found))
			abort();
		if (found && found->array_job_id != t->array_job_id)
			abort();
		/* an accepted task list is well formed: its first number is in it */
		if (t->array_tasks) {
			unsigned long first = strtoul(t->array_tasks, NULL, 10);

			if (!slurm_task_range_has(t->array_tasks, (unsigned)first))
				abort();
		}
	}
	slurm_queue_release(&q);
	return 0;
}
