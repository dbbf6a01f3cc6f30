/* SPDX-License-Identifier: MIT */
/* squeue --json's reader (lab/engine/slurm-queue.c) over real outputs of
 * Slurm 22.05 (tests/data/squeue/, captured on tests/tools/slurm-cluster),
 * the task range lists, and hostile inputs. */
#include <errno.h>
#include "unit.h"
#include "engine/slurm-queue.h"
#include "util/alloc.h"
#include "util/strbuf.h"

/* One expected record; NULL strings and -1 as the reader gives them. */
struct want {
	unsigned long long job_id, array_job_id;
	long array_task_id;
	const char *array_tasks, *name, *state, *reason, *nodes, *comment;
};

static void parse_file(const char *name, struct slurm_queue *q)
{
	_cleanup_free_ char *path = xasprintf("tests/data/squeue/%s", name);
	struct strbuf sb = STRBUF_INIT;
	char *err = NULL;

	assert_int_equal(strbuf_read_file(&sb, path, 1 << 20), 0);
	if (slurm_queue_parse(sb.buf, sb.len, q, &err) < 0)
		fail_msg("%s: %s", path, err);
	strbuf_release(&sb);
}

static void assert_str(const char *want, const char *got)
{
	if (!want)
		assert_null(got);
	else
		assert_string_equal(want, got);
}

static void check_file(const char *name, const struct want *w, size_t n)
{
	struct slurm_queue q = { 0 };

	parse_file(name, &q);
	assert_int_equal(q.n, n);
	for (size_t i = 0; i < n; i++) {
		const struct slurm_task *t = &q.v[i];

		assert_int_equal(t->job_id, w[i].job_id);
		assert_int_equal(t->array_job_id, w[i].array_job_id);
		assert_int_equal(t->array_task_id, w[i].array_task_id);
		assert_str(w[i].array_tasks, t->array_tasks);
		assert_str(w[i].name, t->name);
		assert_str(w[i].state, t->state);
		assert_str(w[i].reason, t->reason);
		assert_str(w[i].nodes, t->nodes);
		assert_str(w[i].comment, t->comment);
	}
	slurm_queue_release(&q);
}

#define CHECK(file, ...)                                           \
	do {                                                       \
		const struct want w_[] = { __VA_ARGS__ };          \
		check_file(file, w_, ELEMENTSOF(w_));              \
	} while (0)

static void test_empty(void **state)
{
	struct slurm_queue q = { 0 };

	(void)state;
	parse_file("empty.json", &q);
	assert_int_equal(q.n, 0);
	assert_null(q.v);
	assert_false(slurm_queue_has_task(&q, 1, 0, NULL));
	slurm_queue_release(&q);
}

/* sbatch --array=0-3 --exclusive --requeue: before the first pass, one record of all four */
static void test_array_pending(void **state)
{
	struct slurm_queue q = { 0 };
	const struct slurm_task *t = NULL;

	(void)state;
	CHECK("array-pending.json", { 1, 1, -1, "0-3", "wrap", "PENDING", "None", NULL, NULL });
	parse_file("array-pending.json", &q);
	for (unsigned k = 0; k < 4; k++) {
		t = NULL;
		assert_true(slurm_queue_has_task(&q, 1, k, &t));
		assert_ptr_equal(t, &q.v[0]);
	}
	assert_false(slurm_queue_has_task(&q, 1, 4, NULL));
	assert_false(slurm_queue_has_task(&q, 2, 0, NULL));
	slurm_queue_release(&q);
}

/* one task per node, the rest one record */
static void test_array_running(void **state)
{
	struct slurm_queue q = { 0 };
	const struct slurm_task *t = NULL;

	(void)state;
	CHECK("array-running.json", { 2, 1, 0, NULL, "wrap", "RUNNING", "None", "n1", NULL },
	      { 3, 1, 1, NULL, "wrap", "RUNNING", "None", "n2", NULL },
	      { 1, 1, -1, "2-3", "wrap", "PENDING", "None", NULL, NULL });
	parse_file("array-running.json", &q);
	assert_true(slurm_queue_has_task(&q, 1, 1, &t));
	assert_int_equal(t->job_id, 3);
	assert_true(slurm_queue_has_task(&q, 1, 3, &t));
	assert_int_equal(t->job_id, 1);
	assert_string_equal(t->array_tasks, "2-3");
	assert_false(slurm_queue_has_task(&q, 1, 4, NULL));
	slurm_queue_release(&q);
}

/* scontrol update NodeName=n2 State=DOWN under task 1: pending again, reason None, then BeginTime */
static void test_requeued(void **state)
{
	(void)state;
	CHECK("requeued.json", { 2, 1, 0, NULL, "wrap", "RUNNING", "None", "n1", NULL },
	      { 3, 1, 1, NULL, "wrap", "PENDING", "None", NULL, NULL },
	      { 1, 1, -1, "2-3", "wrap", "PENDING", "None", NULL, NULL });
	CHECK("requeued-begintime.json", { 2, 1, 0, NULL, "wrap", "RUNNING", "None", "n1", NULL },
	      { 3, 1, 1, NULL, "wrap", "PENDING", "BeginTime", NULL, NULL },
	      { 1, 1, -1, "2-3", "wrap", "PENDING", "Resources", NULL, NULL });
	/* the split records: the array's own job id ends as its last task */
	CHECK("array-split.json", { 2, 1, 0, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 3, 1, 1, NULL, "wrap", "PENDING", "Resources", NULL, NULL },
	      { 4, 1, 2, NULL, "wrap", "RUNNING", "None", "n1", NULL },
	      { 1, 1, 3, NULL, "wrap", "PENDING", "Resources", NULL, NULL });
}

/* --array=0-5%2 with a name and a comment, beside a plain and a held job */
static void test_throttled(void **state)
{
	struct slurm_queue q = { 0 };
	const struct slurm_task *t = NULL;

	(void)state;
	CHECK("throttled-pending.json", { 2, 1, 0, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 3, 1, 1, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 4, 1, 2, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 1, 1, 3, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 5, 5, -1, "0-5%2", "lab-exp1-run7", "PENDING", "None", NULL, "lab:exp1/run7" },
	      { 6, 0, -1, NULL, "plain", "PENDING", "Priority", NULL, NULL },
	      { 7, 0, -1, NULL, "held", "PENDING", "JobHeldUser", NULL, NULL });
	CHECK("throttled-running.json", { 2, 1, 0, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 3, 1, 1, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 4, 1, 2, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 1, 1, 3, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 8, 5, 0, NULL, "lab-exp1-run7", "RUNNING", "None", "n1", "lab:exp1/run7" },
	      { 6, 0, -1, NULL, "plain", "PENDING", "Resources", NULL, NULL },
	      { 7, 0, -1, NULL, "held", "PENDING", "JobHeldUser", NULL, NULL },
	      { 9, 5, 1, NULL, "lab-exp1-run7", "RUNNING", "None", "n2", "lab:exp1/run7" },
	      { 5, 5, -1, "2-5%2", "lab-exp1-run7", "PENDING", "JobArrayTaskLimit", NULL, "lab:exp1/run7" });
	parse_file("throttled-running.json", &q);
	assert_true(slurm_queue_has_task(&q, 5, 5, &t));
	assert_string_equal(t->reason, "JobArrayTaskLimit");
	assert_true(slurm_queue_has_task(&q, 5, 0, &t));
	assert_string_equal(t->nodes, "n1");
	assert_false(slurm_queue_has_task(&q, 5, 6, NULL));
	/* not an array: array_job_id 0 never matches */
	assert_false(slurm_queue_has_task(&q, 0, 0, NULL));
	slurm_queue_release(&q);
}

/* finished jobs stay in --json's output for MinJobAge */
static void test_finished(void **state)
{
	(void)state;
	CHECK("finished.json", { 2, 1, 0, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 3, 1, 1, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 4, 1, 2, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 1, 1, 3, NULL, "wrap", "COMPLETED", "None", "n1", NULL },
	      { 8, 5, 0, NULL, "lab-exp1-run7", "COMPLETED", "None", "n1", "lab:exp1/run7" },
	      { 6, 0, -1, NULL, "plain", "COMPLETED", "None", "n1", NULL },
	      { 7, 0, -1, NULL, "held", "CANCELLED", "JobHeldUser", NULL, NULL },
	      { 9, 5, 1, NULL, "lab-exp1-run7", "COMPLETED", "None", "n2", "lab:exp1/run7" },
	      { 10, 5, 2, NULL, "lab-exp1-run7", "COMPLETED", "None", "n1", "lab:exp1/run7" },
	      { 11, 5, 3, NULL, "lab-exp1-run7", "COMPLETED", "None", "n2", "lab:exp1/run7" },
	      { 12, 5, 4, NULL, "lab-exp1-run7", "COMPLETED", "None", "n1", "lab:exp1/run7" },
	      { 5, 5, 5, NULL, "lab-exp1-run7", "COMPLETED", "None", "n2", "lab:exp1/run7" });
	CHECK("failed.json", { 13, 0, -1, NULL, "fails", "FAILED", "NonZeroExitCode", "n1", NULL },
	      { 15, 14, 0, NULL, "long", "RUNNING", "None", "n2", NULL },
	      { 16, 14, 1, NULL, "long", "RUNNING", "None", "n1", NULL },
	      { 14, 14, 2, NULL, "long", "PENDING", "Resources", NULL, NULL });
}

/* a long task list: whole with SLURM_BITSTR_LEN=0, refused when squeue cut it */
static void test_long_list(void **state)
{
	struct slurm_queue q = { 0 };
	struct strbuf sb = STRBUF_INIT;
	char *err = NULL;
	const struct slurm_task *t = NULL;

	(void)state;
	CHECK("array-bitstr-len-0.json", { 13, 0, -1, NULL, "fails", "FAILED", "NonZeroExitCode", "n1", NULL },
	      { 15, 14, 0, NULL, "long", "CANCELLED", "None", "n2", NULL },
	      { 16, 14, 1, NULL, "long", "CANCELLED", "None", "n1", NULL },
	      { 14, 14, 2, NULL, "long", "CANCELLED", "Resources", NULL, NULL },
	      { 17, 17, -1, "1-199:3%3", "big", "PENDING", "JobHeldUser", NULL, NULL },
	      { 18, 18, -1, "1-2,4,7,11,16,22,29,37,46,56,67,79,92,106,121,137,154,172,191,211,232,254,277,301",
		"scattered", "PENDING", "JobHeldUser", NULL, "lab:exp2/run1" });
	parse_file("array-bitstr-len-0.json", &q);
	assert_true(slurm_queue_has_task(&q, 18, 301, &t));
	assert_int_equal(t->job_id, 18);
	assert_true(slurm_queue_has_task(&q, 18, 191, NULL));
	assert_false(slurm_queue_has_task(&q, 18, 19, NULL));
	assert_true(slurm_queue_has_task(&q, 17, 199, NULL));
	assert_false(slurm_queue_has_task(&q, 17, 198, NULL));
	slurm_queue_release(&q);

	assert_int_equal(strbuf_read_file(&sb, "tests/data/squeue/array-truncated.json", 1 << 20), 0);
	q.n = 99;
	assert_int_equal(slurm_queue_parse(sb.buf, sb.len, &q, &err), -EINVAL);
	assert_int_equal(q.n, 99); /* untouched */
	assert_string_equal(err,
			    "jobs[5]: \"array_task_string\" is cut short (\"...\"): run squeue with SLURM_BITSTR_LEN=0");
	free(err);
	strbuf_release(&sb);
}

/* slurmctld not answering: exit 0, no jobs, one entry in "errors" */
static void test_controller_down(void **state)
{
	struct slurm_queue q = { 0 };
	struct strbuf sb = STRBUF_INIT;
	char *err = NULL;

	(void)state;
	assert_int_equal(strbuf_read_file(&sb, "tests/data/squeue/controller-down.json", 1 << 20), 0);
	assert_int_equal(slurm_queue_parse(sb.buf, sb.len, &q, &err), -EIO);
	assert_string_equal(err, "squeue: slurm_load_jobs: Failed while looking for jobs (Unspecified error)");
	free(err);
	strbuf_release(&sb);
}

static void test_range(void **state)
{
	(void)state;
	assert_true(slurm_task_range_has("0-3,7%2", 0));
	assert_true(slurm_task_range_has("0-3,7%2", 3));
	assert_true(slurm_task_range_has("0-3,7%2", 7));
	assert_false(slurm_task_range_has("0-3,7%2", 4));
	assert_true(slurm_task_range_has("0-3,7%2", 2));
	assert_true(slurm_task_range_has("5", 5));
	assert_false(slurm_task_range_has("5", 4));
	assert_true(slurm_task_range_has("1-199:3", 100));
	assert_false(slurm_task_range_has("1-199:3", 101));
	assert_false(slurm_task_range_has("1-199:3", 202));
	assert_true(slurm_task_range_has("0-4294967295", 4294967295u));
	assert_true(slurm_task_range_has("3-3", 3));
	/* not lists: never a match */
	assert_false(slurm_task_range_has(NULL, 0));
	assert_false(slurm_task_range_has("", 0));
	assert_false(slurm_task_range_has("0-3,", 0));
	assert_false(slurm_task_range_has(",0", 0));
	assert_false(slurm_task_range_has("0-", 0));
	assert_false(slurm_task_range_has("3-1", 2));
	assert_false(slurm_task_range_has("0-9:0", 0));
	assert_false(slurm_task_range_has("0-3%", 0));
	assert_false(slurm_task_range_has("0-3%2%2", 0));
	assert_false(slurm_task_range_has("0-3%2,5", 0));
	assert_false(slurm_task_range_has("0-4294967296", 0));
	assert_false(slurm_task_range_has("99999999999999999999999", 0));
	assert_false(slurm_task_range_has("-1", 0));
	assert_false(slurm_task_range_has(" 1", 1));
	assert_false(slurm_task_range_has("1,2,19...", 1));
	assert_false(slurm_task_range_has("[0-3]", 0));
}

/* text must fail with exactly err and the code */
static void fails(const char *json, int code, const char *want)
{
	struct slurm_queue q = { .n = 42 };
	char *err = NULL;

	assert_int_equal(slurm_queue_parse(json, strlen(json), &q, &err), code);
	assert_int_equal(q.n, 42);
	assert_null(q.v);
	assert_non_null(err);
	assert_string_equal(err, want);
	free(err);
}

static void test_hostile(void **state)
{
	(void)state;
	fails("", -EINVAL, "line 1, column 0: '[' or '{' expected near end of file");
	fails("[]", -EINVAL, "line 1, column 1: not a JSON object");
	fails("{}", -EINVAL, "no \"jobs\" array");
	fails("{\"jobs\": {}}", -EINVAL, "\"jobs\" is an object, not an array");
	fails("{\"jobs\": null}", -EINVAL, "\"jobs\" is null, not an array");
	fails("{\"jobs\": [1]}", -EINVAL, "jobs[0] is an integer, not an object");
	fails("{\"jobs\": [{\"job_id\": 1}, []]}", -EINVAL, "jobs[1] is an array, not an object");
	fails("{\"jobs\": [{}]}", -EINVAL, "jobs[0]: \"job_id\" is missing");
	fails("{\"jobs\": [{\"job_id\": null}]}", -EINVAL, "jobs[0]: \"job_id\" is missing");
	fails("{\"jobs\": [{\"job_id\": \"1\"}]}", -EINVAL, "jobs[0]: \"job_id\" is not an integer, found a string");
	fails("{\"jobs\": [{\"job_id\": 1.5}]}", -EINVAL, "jobs[0]: \"job_id\" is not an integer, found a number");
	fails("{\"jobs\": [{\"job_id\": -1}]}", -EINVAL, "jobs[0]: \"job_id\" is out of range (0 to 4294967295)");
	fails("{\"jobs\": [{\"job_id\": 4294967296}]}", -EINVAL,
	      "jobs[0]: \"job_id\" is out of range (0 to 4294967295)");
	fails("{\"jobs\": [{\"job_id\": 99999999999999999999999}]}", -EINVAL,
	      "line 1, column 44: too big integer");
	fails("{\"jobs\": [{\"job_id\": 1e30}]}", -EINVAL, "jobs[0]: \"job_id\" is not an integer, found a number");
	fails("{\"jobs\": [{\"job_id\": 1, \"array_task_id\": true}]}", -EINVAL,
	      "jobs[0]: \"array_task_id\" is not an integer, found a boolean");
	fails("{\"jobs\": [{\"job_id\": 1, \"array_job_id\": {\"set\": true, \"number\": \"x\"}}]}", -EINVAL,
	      "jobs[0]: \"array_job_id\" is not an integer, found a string");
	fails("{\"jobs\": [{\"job_id\": 1, \"array_job_id\": {\"set\": true}}]}", -EINVAL,
	      "jobs[0]: \"array_job_id\" has no \"number\"");
	fails("{\"jobs\": [{\"job_id\": 1, \"array_task_id\": {\"set\": true, \"infinite\": true, \"number\": 0}}]}",
	      -EINVAL, "jobs[0]: \"array_task_id\" is infinite");
	fails("{\"jobs\": [{\"job_id\": 1, \"name\": 7}]}", -EINVAL, "jobs[0]: \"name\" is not a string, found an integer");
	fails("{\"jobs\": [{\"job_id\": 1, \"nodes\": []}]}", -EINVAL, "jobs[0]: \"nodes\" is not a string, found an array");
	fails("{\"jobs\": [{\"job_id\": 1, \"comment\": {}}]}", -EINVAL,
	      "jobs[0]: \"comment\" is not a string, found an object");
	fails("{\"jobs\": [{\"job_id\": 1, \"state_reason\": false}]}", -EINVAL,
	      "jobs[0]: \"state_reason\" is not a string, found a boolean");
	fails("{\"jobs\": [{\"job_id\": 1, \"job_state\": 3}]}", -EINVAL,
	      "jobs[0]: \"job_state\" is not a string, found an integer");
	fails("{\"jobs\": [{\"job_id\": 1, \"job_state\": [\"RUNNING\", 3]}]}", -EINVAL,
	      "jobs[0]: \"job_state\" is not an array of strings, found an integer");
	fails("{\"jobs\": [{\"job_id\": 1, \"array_task_string\": \"0-3x\"}]}", -EINVAL,
	      "jobs[0]: \"array_task_string\" is not a task list like \"0-3,7%2\"");
	fails("{\"jobs\": [{\"job_id\": 1, \"array_task_string\": \"...\"}]}", -EINVAL,
	      "jobs[0]: \"array_task_string\" is cut short (\"...\"): run squeue with SLURM_BITSTR_LEN=0");
	fails("{\"jobs\": [], \"jobs\": []}", -EINVAL, "line 1, column 19: duplicate object key near '\"jobs\"'");
	fails("{\"errors\": {}, \"jobs\": []}", -EINVAL, "\"errors\" is an object, not an array");
	fails("{\"errors\": [\"boom\"], \"jobs\": []}", -EIO, "squeue: boom");
	fails("{\"errors\": [{}], \"jobs\": []}", -EIO, "squeue: an error");
	fails("{\"errors\": [7]}", -EIO, "squeue: an error");
	fails("{\"jobs\": [{\"job_id\": 1}]}\n{", -EINVAL, "line 2, column 1: end of file expected near '{'");
}

/* later Slurm (v0.0.39+): numbers as {"set", "number"}, job_state an array */
static void test_later_forms(void **state)
{
	const char *json = "{\"jobs\": [{\"job_id\": 40, \"array_job_id\": {\"set\": true, \"infinite\": false, "
			   "\"number\": 38}, \"array_task_id\": {\"set\": true, \"infinite\": false, \"number\": 2},"
			   "\"job_state\": [\"RUNNING\", \"COMPLETING\"], \"nodes\": \"n2\", \"future\": {\"x\": [1]}},"
			   "{\"job_id\": 38, \"array_job_id\": {\"set\": true, \"number\": 38}, \"array_task_id\": "
			   "{\"set\": false, \"infinite\": false, \"number\": 0}, \"array_task_string\": \"3-9\","
			   "\"job_state\": []}], \"warnings\": [], \"errors\": []}";
	struct slurm_queue q = { 0 };
	char *err = NULL;

	(void)state;
	assert_int_equal(slurm_queue_parse(json, strlen(json), &q, &err), 0);
	assert_null(err);
	assert_int_equal(q.n, 2);
	assert_int_equal(q.v[0].job_id, 40);
	assert_int_equal(q.v[0].array_job_id, 38);
	assert_int_equal(q.v[0].array_task_id, 2);
	assert_string_equal(q.v[0].state, "RUNNING");
	assert_string_equal(q.v[0].nodes, "n2");
	assert_null(q.v[0].name);
	assert_null(q.v[0].reason);
	assert_int_equal(q.v[1].array_task_id, -1);
	assert_string_equal(q.v[1].array_tasks, "3-9");
	assert_null(q.v[1].state);
	assert_true(slurm_queue_has_task(&q, 38, 2, NULL));
	assert_true(slurm_queue_has_task(&q, 38, 9, NULL));
	assert_false(slurm_queue_has_task(&q, 38, 1, NULL));
	slurm_queue_release(&q);
	slurm_queue_release(&q); /* twice is harmless */
	slurm_queue_release(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_array_pending),
		cmocka_unit_test(test_array_running),
		cmocka_unit_test(test_requeued),
		cmocka_unit_test(test_throttled),
		cmocka_unit_test(test_finished),
		cmocka_unit_test(test_long_list),
		cmocka_unit_test(test_controller_down),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_later_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
