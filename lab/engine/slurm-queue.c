/* SPDX-License-Identifier: MIT */
/*
 * squeue --json's answer (Slurm 22.05's OpenAPI v0.0.38 data, and the
 * newer {"set","number"} and job_state-array forms) into one record per
 * task: the fields lab's Slurm executor reads, each checked for its
 * type; anything else ignored. Its "errors" (slurmctld not answering)
 * are an error, never an empty queue. Fuzzed (fuzz-squeue).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/json-read.h"
#include "slurm-queue.h"
#include "../util/banned.h"

/* Slurm's job and task ids are uint32_t. */
#define SLURM_ID_MAX 4294967295LL

/* The first problem of job i, "jobs[i]: \"key\" what"; returns -EINVAL. */
static int bad(char **ret_err, size_t i, const char *key, const char *what, const struct json_doc *v)
{
	if (v)
		*ret_err = xasprintf("jobs[%zu]: \"%s\" %s, found %s", i, key, what, json_doc_type_name(v));
	else
		*ret_err = xasprintf("jobs[%zu]: \"%s\" %s", i, key, what);
	return -EINVAL;
}

/*
 * An id member: an integer in [0, SLURM_ID_MAX], or (OpenAPI v0.0.39+)
 * {"set": true, "number": N}. *ret_set is false when it is missing, null
 * or {"set": false}.
 */
static int read_id(const struct json_doc *job, size_t i, const char *key, bool *ret_set, long long *ret,
		   char **ret_err)
{
	const struct json_doc *v = json_doc_get(job, key);
	int r;

	*ret_set = false;
	if (json_doc_type(v) == JSON_DOC_NULL)
		return 0;
	if (json_doc_type(v) == JSON_DOC_OBJECT) {
		if (!json_doc_bool(v, "set"))
			return 0;
		if (json_doc_bool(v, "infinite"))
			return bad(ret_err, i, key, "is infinite", NULL);
		if (!(v = json_doc_get(v, "number")))
			return bad(ret_err, i, key, "has no \"number\"", NULL);
	}
	r = json_doc_int_value(v, 0, SLURM_ID_MAX, ret);
	if (r == -ERANGE)
		return bad(ret_err, i, key, "is out of range (0 to 4294967295)", NULL);
	if (r < 0)
		return bad(ret_err, i, key, "is not an integer", v);
	*ret_set = true;
	return 0;
}

/* A string member, copied; NULL when missing or null, and when empty if empty_null. */
static int read_string(const struct json_doc *job, size_t i, const char *key, bool empty_null, char **ret,
		       char **ret_err)
{
	const struct json_doc *v = json_doc_get(job, key);
	const char *s;

	if (json_doc_type(v) == JSON_DOC_NULL)
		return 0;
	if (!(s = json_doc_string_value(v)))
		return bad(ret_err, i, key, "is not a string", v);
	if (!(empty_null && !*s))
		*ret = xstrdup(s);
	return 0;
}

/* job_state: "RUNNING" (v0.0.38) or ["RUNNING", "COMPLETING"] (later), the first kept. */
static int read_state(const struct json_doc *job, size_t i, char **ret, char **ret_err)
{
	const struct json_doc *v = json_doc_get(job, "job_state");
	const char *s;

	if (json_doc_type(v) != JSON_DOC_ARRAY)
		return read_string(job, i, "job_state", false, ret, ret_err);
	for (size_t k = 0; k < json_doc_array_size(v); k++)
		if (!json_doc_string_value(json_doc_array_get(v, k)))
			return bad(ret_err, i, "job_state", "is not an array of strings", json_doc_array_get(v, k));
	if ((s = json_doc_string_value(json_doc_array_get(v, 0))))
		*ret = xstrdup(s);
	return 0;
}

/* One number of a task list at *s, at most SLURM_ID_MAX; *s moves past it. */
static int range_number(const char **s, unsigned long long *ret)
{
	const char *p = *s;
	unsigned long long v = 0;

	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned)(*p++ - '0');
		if (v > (unsigned long long)SLURM_ID_MAX)
			return -EINVAL;
	}
	if (p == *s)
		return -EINVAL;
	*s = p;
	*ret = v;
	return 0;
}

/*
 * Walks a task range list: item[,item...][%N], item = A, A-B or A-B:S
 * (numbers up to 2^32-1, A <= B, S >= 1). 0 and whether n is in it, or
 * -EINVAL when s is no such list (empty, cut with "...", stray characters).
 */
static int range_walk(const char *s, unsigned n, bool *ret_has)
{
	bool has = false;

	for (;;) {
		unsigned long long a, b, step = 1;

		if (range_number(&s, &a) < 0)
			return -EINVAL;
		b = a;
		if (*s == '-') {
			s++;
			if (range_number(&s, &b) < 0 || b < a)
				return -EINVAL;
			if (*s == ':') {
				s++;
				if (range_number(&s, &step) < 0 || step == 0)
					return -EINVAL;
			}
		}
		if (n >= a && n <= b && (n - a) % step == 0)
			has = true;
		if (*s != ',')
			break;
		s++;
	}
	if (*s == '%') {
		unsigned long long throttle;

		s++;
		if (range_number(&s, &throttle) < 0)
			return -EINVAL;
	}
	if (*s)
		return -EINVAL;
	*ret_has = has;
	return 0;
}

bool slurm_task_range_has(const char *range, unsigned n)
{
	bool has = false;

	return range && range_walk(range, n, &has) == 0 && has;
}

static void task_release(struct slurm_task *t)
{
	free(t->array_tasks);
	free(t->name);
	free(t->state);
	free(t->reason);
	free(t->nodes);
	free(t->comment);
}

static int read_task(const struct json_doc *job, size_t i, struct slurm_task *t, char **ret_err)
{
	long long v;
	bool set;
	bool ok;
	int r;

	if (json_doc_type(job) != JSON_DOC_OBJECT) {
		*ret_err = xasprintf("jobs[%zu] is %s, not an object", i, json_doc_type_name(job));
		return -EINVAL;
	}
	if ((r = read_id(job, i, "job_id", &set, &v, ret_err)) < 0)
		return r;
	if (!set)
		return bad(ret_err, i, "job_id", "is missing", NULL);
	t->job_id = (unsigned long long)v;
	if ((r = read_id(job, i, "array_job_id", &set, &v, ret_err)) < 0)
		return r;
	t->array_job_id = set ? (unsigned long long)v : 0;
	if ((r = read_id(job, i, "array_task_id", &set, &v, ret_err)) < 0)
		return r;
	t->array_task_id = set ? (long)v : -1;
	if ((r = read_string(job, i, "array_task_string", true, &t->array_tasks, ret_err)) < 0 ||
	    (r = read_string(job, i, "name", false, &t->name, ret_err)) < 0 ||
	    (r = read_state(job, i, &t->state, ret_err)) < 0 ||
	    (r = read_string(job, i, "state_reason", false, &t->reason, ret_err)) < 0 ||
	    (r = read_string(job, i, "nodes", true, &t->nodes, ret_err)) < 0 ||
	    (r = read_string(job, i, "comment", true, &t->comment, ret_err)) < 0)
		return r;
	if (t->array_tasks && range_walk(t->array_tasks, 0, &ok) < 0) {
		size_t l = strlen(t->array_tasks);

		if (l >= 3 && strcmp(t->array_tasks + l - 3, "...") == 0)
			return bad(ret_err, i, "array_task_string",
				   "is cut short (\"...\"): run squeue with SLURM_BITSTR_LEN=0", NULL);
		return bad(ret_err, i, "array_task_string", "is not a task list like \"0-3,7%2\"", NULL);
	}
	return 0;
}

/* The first entry of "errors", as Slurm words it; NULL when there is none. */
static int read_errors(const struct json_doc *doc, char **ret_err)
{
	const struct json_doc *errs = json_doc_get(doc, "errors"), *e;
	const char *desc, *what, *source;

	if (json_doc_type(errs) == JSON_DOC_NULL)
		return 0;
	if (json_doc_type(errs) != JSON_DOC_ARRAY) {
		*ret_err = xasprintf("\"errors\" is %s, not an array", json_doc_type_name(errs));
		return -EINVAL;
	}
	if (json_doc_array_size(errs) == 0)
		return 0;
	e = json_doc_array_get(errs, 0);
	if (json_doc_string_value(e)) {
		*ret_err = xasprintf("squeue: %s", json_doc_string_value(e));
		return -EIO;
	}
	desc = json_doc_string_value(json_doc_get(e, "description"));
	what = json_doc_string_value(json_doc_get(e, "error"));
	source = json_doc_string_value(json_doc_get(e, "source"));
	*ret_err = xasprintf("squeue: %s%s%s%s%s%s", source ? source : "", source ? ": " : "",
			     desc ? desc : "an error", what ? " (" : "", what ? what : "", what ? ")" : "");
	return -EIO;
}

int slurm_queue_parse(const char *json, size_t len, struct slurm_queue *ret, char **ret_err)
{
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	struct slurm_queue q = { 0 };
	const struct json_doc *jobs;
	char *perr = NULL;
	unsigned line = 0, col = 0;
	int r;

	if (json_doc_parse_at(json, len, &doc, &line, &col, &perr) < 0) {
		*ret_err = xasprintf("line %u, column %u: %s", line, col, perr);
		free(perr);
		return -EINVAL;
	}
	if ((r = read_errors(doc, ret_err)) < 0)
		return r;
	jobs = json_doc_get(doc, "jobs");
	if (json_doc_type(jobs) != JSON_DOC_ARRAY) {
		*ret_err = jobs ? xasprintf("\"jobs\" is %s, not an array", json_doc_type_name(jobs))
				: xstrdup("no \"jobs\" array");
		return -EINVAL;
	}
	q.n = json_doc_array_size(jobs);
	q.v = q.n ? xcalloc(q.n, sizeof(*q.v)) : NULL;
	for (size_t i = 0; i < q.n; i++)
		if ((r = read_task(json_doc_array_get(jobs, i), i, &q.v[i], ret_err)) < 0) {
			slurm_queue_release(&q);
			return r;
		}
	*ret = q;
	return 0;
}

void slurm_queue_release(struct slurm_queue *q)
{
	if (!q)
		return;
	for (size_t i = 0; i < q->n; i++)
		task_release(&q->v[i]);
	free(q->v);
	q->v = NULL;
	q->n = 0;
}

bool slurm_queue_has_task(const struct slurm_queue *q, unsigned long long array_job, unsigned task,
			  const struct slurm_task **ret)
{
	if (array_job == 0)
		return false;
	for (size_t i = 0; i < q->n; i++) {
		const struct slurm_task *t = &q->v[i];

		if (t->array_job_id != array_job)
			continue;
		if ((t->array_task_id >= 0 && (unsigned long)t->array_task_id == task) ||
		    slurm_task_range_has(t->array_tasks, task)) {
			if (ret)
				*ret = t;
			return true;
		}
	}
	return false;
}
