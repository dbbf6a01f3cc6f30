/* SPDX-License-Identifier: MIT */
/* The run layer without a VM: the driver script (golden, and run by a real
 * sh against a fake catalogue), the store's round trip, the SQLite index. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "result/stats.h"
#include "result/result.h"
#include "store/bundle.h"
#include "store/snapshot.h"
#include "engine/reproduce.h"
#include "store/calib-store.h"
#include "engine/guest-script.h"
#include "engine/hostload.h"
#include "store/index.h"
#include "result/compare.h"
#include "result/report.h"
#include "store/store.h"
#include "store/store-v1.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"

static struct plan_param wparams[] = {
	{ .key = "stressor", .value = "switch", .is_default = false },
	{ .key = "duration", .value = "20s", .is_default = false },
	{ .key = "extra", .value = "--taskset '0,1'; rm -rf /", .is_default = false },
};
static struct plan_param mparams[] = { { .key = "interval", .value = "1s", .is_default = true } };

static void test_driver_golden(void **state)
{
	struct plan_run r = {
		.id = (char *)"quick.0001",
		.experiment = "quick",
		.kernel = (char *)"base",
		.workload = "stress-ng",
		.params = wparams,
		.nparams = 3,
		.repeat = 1,
	};
	struct driver_monitor m[] = { { .name = "cpu-stat" }, { .name = "zoneinfo-pcp", .params = mparams, .nparams = 1 } };
	struct driver_config c = { .run = &r, .monitors = m, .nmonitors = 2, .has_setup = true, .warmup_sec = 5,
				   .has_duration = true, .quiesce = true };
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	driver_format(&c, &sb);
	assert_golden("tests/data/run/driver.sh", sb.buf);
	strbuf_release(&sb);
	assert_string_equal(driver_step_name(DRIVER_MONITOR), "monitor start");
	assert_null(driver_step_name(1));
}

/* A host-side monitor: nothing of it in the guest; the window's markers end the steps the runner sends. */
static void test_driver_host_window(void **state)
{
	struct plan_run r = {
		.id = (char *)"quick.0002",
		.experiment = "quick",
		.kernel = (char *)"base",
		.workload = "hackbench",
		.repeat = 1,
	};
	struct driver_monitor m[] = { { .name = "cpu-stat" }, { .name = "insn", .host = true } };
	struct driver_config c = { .run = &r, .monitors = m, .nmonitors = 2 };
	struct strbuf sb = STRBUF_INIT;
	size_t start, stop;

	(void)state;
	driver_format(&c, &sb);
	assert_golden("tests/data/run/driver-host.sh", sb.buf);
	assert_null(strstr(sb.buf, "monitors/insn"));
	driver_steps(sb.buf, &start, &stop);
	/* step 1 ends with the start marker, step 2 runs the workload and ends with the stop marker */
	assert_true(start > 0 && stop > start && stop < sb.len);
	assert_memory_equal(sb.buf + start - 25, "echo 'lab: window start'\n", 25);
	assert_memory_equal(sb.buf + stop - 24, "echo 'lab: window stop'\n", 24);
	assert_non_null(memmem(sb.buf + start, stop - start, "./hackbench/run", 15));
	assert_null(memmem(sb.buf, start, "./hackbench/run", 15));
	/* without a host monitor there is one step */
	m[1].host = false;
	strbuf_reset(&sb);
	driver_format(&c, &sb);
	driver_steps(sb.buf, &start, &stop);
	assert_int_equal(start, 0);
	assert_int_equal(stop, 0);
	strbuf_release(&sb);
}

static struct result_set *sample(void)
{
	struct result_set *rs = result_set_new("20261130-101500-ab12", "quick");
	struct result_run *r;

	r = result_add_run(rs, "quick.0001", "base", "stress-ng stressor=switch", 0, 1);
	r->status = RUN_OK;
	r->release = xstrdup("6.1.192-lab-base-1");
	r->boot = xstrdup("quick.b1");
	r->boot_pos = 1;
	r->guest = xstrdup("lab-base-0");
	result_add_metric(r, "stress-ng.switch.ops_per_sec", 9308.92);
	r = result_add_run(rs, "quick.0002", "tg-ratelimit", "stress-ng stressor=switch", 0, 1);
	r->status = RUN_FAILED;
	r->error = xstrdup("the run step failed (exit 13);\tsee\nraw/*.log");
	result_add_run(rs, "quick.0003", "base", "stress-ng stressor=switch", 0, 2);
	result_add_expect(rs, 0, "stress-ng.switch.ops_per_sec", DIR_INCREASE, 0.05, true);
	result_add_expect(rs, 0, "stress-ng.ctxt_per_sec", DIR_UNCHANGED, 0, false);
	rs->expect[0].method = STAT_BOOTSTRAP;
	rs->decide = (struct decide_params){ .alpha = 0.01, .power = 0.9, .q = 0.1, .method = STAT_MANN_WHITNEY,
					     .sequential = true, .min_boots = 3, .max_boots = 7 };
	{
		struct strv k = STRV_INIT;

		strv_push(&k, "base");
		strv_push(&k, "pcp-auto@7");
		result_add_observe(rs, "zoneinfo-pcp.high_spread_max", OBS_GE, 1.5, &k, "pcp high moves; tabs\there");
		result_add_observe(rs, "perf-profile.self.cycles-pp.update_cfs_group", OBS_LOWER, 0, NULL, NULL);
		rs->observe[1].margin = 0.05;
		strv_release(&k);
	}
	return rs;
}

static void test_store_round_trip(void **state)
{
	char tmpl[] = "/tmp/lab-test-run.XXXXXX";
	char *root = mkdtemp(tmpl), *id = NULL, *dir, *mp;
	struct result_set *rs = sample(), *back = NULL;
	struct diags d = { 0 };
	struct strv ids = STRV_INIT;

	(void)state;
	assert_non_null(root);
	assert_int_equal(store_create(root, &id, &d), 0);
	assert_int_equal(strlen(id), strlen("20261130-101500-ab12"));
	dir = path_join(root, id);
	free(rs->id);
	rs->id = xstrdup(id);
	/* metrics are the run folder's, as the runner writes them */
	mp = xasprintf("%s/runs/quick.0001", dir);
	assert_int_equal(path_mkdir_p(mp, 0755), 0);
	free(mp);
	mp = xasprintf("%s/runs/quick.0001/metrics", dir);
	assert_int_equal(fs_write_atomic(mp, "stress-ng.switch.ops_per_sec 9308.92\n", 37, 0644), 0);
	free(mp);
	assert_int_equal(store_save(dir, rs, &d), 0);
	assert_int_equal(store_load(dir, &back, &d), 0);
	assert_string_equal(back->experiment, "quick");
	assert_int_equal(back->n, 3);
	assert_int_equal(back->runs[0].status, RUN_OK);
	assert_int_equal(back->runs[0].nm, 1);
	assert_string_equal(back->runs[0].release, "6.1.192-lab-base-1");
	assert_int_equal(back->runs[1].status, RUN_FAILED);
	assert_string_equal(back->runs[0].boot, "quick.b1");
	assert_int_equal(back->runs[0].boot_pos, 1);
	assert_string_equal(back->runs[0].guest, "lab-base-0");
	assert_null(back->runs[1].boot);
	assert_int_equal(back->runs[1].boot_pos, 0);
	assert_null(back->runs[1].guest);
	/* JSON keeps every character: tabs and newlines are not flattened any more */
	assert_string_equal(back->runs[1].error, "the run step failed (exit 13);\tsee\nraw/*.log");
	assert_int_equal(back->runs[2].status, RUN_PENDING);
	assert_null(back->runs[2].release);
	assert_int_equal(back->variants.n, 2);
	assert_int_equal(back->nexpect, 2);
	assert_true(back->expect[0].has_effect);
	assert_false(back->expect[1].has_effect);
	assert_int_equal(back->expect[1].dir, DIR_UNCHANGED);
	assert_int_equal(back->expect[0].method, STAT_BOOTSTRAP);
	assert_int_equal(back->expect[1].method, -1);
	assert_true(back->decide.alpha == 0.01 && back->decide.power == 0.9 && back->decide.q == 0.1);
	assert_int_equal(back->decide.method, STAT_MANN_WHITNEY);
	assert_true(back->decide.sequential);
	assert_int_equal(back->decide.min_boots, 3);
	assert_int_equal(back->decide.max_boots, 7);
	assert_int_equal(back->nobserve, 2);
	assert_string_equal(back->observe[0].metric, "zoneinfo-pcp.high_spread_max");
	assert_int_equal(back->observe[0].rel, OBS_GE);
	assert_true(back->observe[0].value == 1.5);
	assert_int_equal(back->observe[0].kernels.n, 2);
	assert_string_equal(back->observe[0].kernels.v[1], "pcp-auto@7");
	assert_string_equal(back->observe[0].says, "pcp high moves; tabs\there");
	assert_int_equal(back->observe[1].rel, OBS_LOWER);
	assert_int_equal(back->observe[1].kernels.n, 0);
	assert_null(back->observe[1].says);
	assert_true(back->observe[0].margin == 0 && back->observe[1].margin == 0.05);
	assert_int_equal(store_list(root, &ids), 0);
	assert_int_equal(ids.n, 1);
	{
		char *found = store_find(root, id);

		assert_string_equal(found, dir);
		free(found);
		assert_null(store_find(root, "nope"));
	}

	/* the index: put, list, rebuild from the folders */
	{
		struct index_entry *e = NULL;
		size_t n = 0, rebuilt = 0;
		_cleanup_strv_ struct strv skipped = STRV_INIT;

		assert_int_equal(index_put(root, back, "inconclusive 2", &d), 0);
		assert_int_equal(index_put(root, back, "inconclusive 2", &d), 0); /* replaces, no duplicate */
		assert_int_equal(index_list(root, &e, &n, &d), 0);
		assert_int_equal(n, 1);
		assert_int_equal(e[0].total, 3);
		assert_int_equal(e[0].ok, 1);
		assert_int_equal(e[0].failed, 1);
		assert_int_equal(e[0].pending, 1);
		assert_string_equal(e[0].verdicts, "inconclusive 2");
		index_entries_free(e, n);
		/* one run finished: its rows and the counts change, the verdicts stay */
		back->runs[2].status = RUN_OK;
		result_add_metric(&back->runs[2], "stress-ng.switch.ops_per_sec", 9000);
		assert_int_equal(index_put_run(root, back, 2, &d), 0);
		assert_int_equal(index_list(root, &e, &n, &d), 0);
		assert_int_equal(n, 1);
		assert_int_equal(e[0].ok, 2);
		assert_int_equal(e[0].pending, 0);
		assert_string_equal(e[0].verdicts, "inconclusive 2");
		index_entries_free(e, n);
		back->runs[2].status = RUN_PENDING;
		assert_int_equal(index_rebuild(root, &rebuilt, &skipped, &d), 0);
		assert_int_equal(rebuilt, 1);
		assert_int_equal(skipped.n, 0);
		assert_int_equal(index_list(root, &e, &n, &d), 0);
		assert_int_equal(n, 1);
		assert_string_equal(e[0].id, id);
		index_entries_free(e, n);
		/* a damaged folder beside it is skipped and named; the good one stays indexed */
		{
			_cleanup_free_ char *bad = path_join(root, "20260101-000000-dead");
			_cleanup_free_ char *bj = path_join(bad, "journal");
			_cleanup_strv_ struct strv missing = STRV_INIT;
			size_t before = d.n;

			assert_int_equal(path_mkdir_p(bad, 0755), 0);
			assert_int_equal(fs_write_atomic(bj, "not a journal\n", 14, 0644), 0);
			assert_int_equal(index_rebuild(root, &rebuilt, &skipped, &d), 0);
			assert_int_equal(rebuilt, 1);
			assert_int_equal(skipped.n, 1);
			assert_string_equal(skipped.v[0], "20260101-000000-dead");
			assert_true(d.n > before);
			assert_int_equal(index_list(root, &e, &n, &d), 0);
			assert_int_equal(n, 1);
			assert_int_equal(index_unindexed(root, e, n, &missing), 0);
			assert_int_equal(missing.n, 1);
			assert_string_equal(missing.v[0], "20260101-000000-dead");
			index_entries_free(e, n);
			fs_remove_tree(bad);
		}
	}
	/* a damaged run.json is an error naming the line and column */
	{
		char *jp = path_join(dir, STORE_FILE);
		const char bad[] = "{\"format\": 2,\n \"experiment\": }\n";
		struct result_set *x = NULL;

		assert_int_equal(fs_write_atomic(jp, bad, sizeof(bad) - 1, 0644), 0);
		assert_true(store_load(dir, &x, &d) < 0);
		assert_int_equal(d.v[d.n - 1].line, 2);
		assert_int_equal(d.v[d.n - 1].col, 16);
		assert_non_null(strstr(d.v[d.n - 1].file, "/run.json"));
		free(jp);
	}
	diags_release(&d);
	strv_release(&ids);
	result_set_free(rs);
	result_set_free(back);
	fs_remove_tree(root);
	free(dir);
	free(id);
}

/* A sweep's steps (NAME@N) are kernels of a stored run like any other. */
static void test_store_sweep_variant(void **state)
{
	char tmpl[] = "/tmp/lab-test-run.XXXXXX";
	char *root = mkdtemp(tmpl), *id = NULL, *dir;
	struct result_set *rs, *back = NULL;
	struct diags d = { 0 };
	struct result_run *r;

	(void)state;
	assert_true(str_is_variant_name("pcp-auto@7") && str_is_variant_name("base") &&
		    str_is_variant_name("cpupri-split@12"));
	assert_false(str_is_variant_name("pcp-auto@0") || str_is_variant_name("pcp-auto@") ||
		     str_is_variant_name("@3") || str_is_variant_name("a@1b") || str_is_variant_name("a@1@2") ||
		     str_is_variant_name("a/b@1"));
	assert_non_null(root);
	assert_int_equal(store_create(root, &id, &d), 0);
	dir = path_join(root, id);
	rs = result_set_new(id, "cpupri-split");
	/* failed runs: an ok one would need its metrics folder */
	r = result_add_run(rs, "cpupri-split.0001", "base-offstack", "pi-stress", 0, 1);
	r->status = RUN_FAILED;
	r->error = xstrdup("no frame");
	r = result_add_run(rs, "cpupri-split.0002", "cpupri-split@4", "pi-stress", 0, 1);
	r->status = RUN_FAILED;
	r->error = xstrdup("no frame");
	assert_int_equal(store_save(dir, rs, &d), 0);
	assert_int_equal(store_load(dir, &back, &d), 0);
	assert_int_equal(back->variants.n, 2);
	assert_string_equal(back->variants.v[1], "cpupri-split@4");
	assert_string_equal(back->runs[1].variant, "cpupri-split@4");
	result_set_free(back);
	result_set_free(rs);
	diags_release(&d);
	fs_remove_tree(root);
	free(dir);
	free(id);
}

/* Stored texts from elsewhere: each damage is an error naming its file and line. */
static void test_store_strict(void **state)
{
	static const struct {
		const char *journal, *variants, *expect, *observe, *file, *msg;
		unsigned line;
	} cases[] = {
		{ "# lab journal 1 experiment=e\n../x\tok\tbase\t0\t1\tw\t-\t-\n", "base\n", "", NULL, "J", "is not a run id", 2 },
		{ "# lab journal 1 experiment=e\na\tok\tbase\t0\t1\tw\t-\t-\na\tok\tbase\t0\t2\tw\t-\t-\n", "base\n", "",
		  NULL, "J", "in the journal twice", 3 },
		{ "# lab journal 1 experiment=e\na\tok\tother\t0\t1\tw\t-\t-\n", "base\n", "", NULL, "J",
		  "which the run's variants do not list", 2 },
		{ "# lab journal 1 experiment=e\na\tweird\tbase\t0\t1\tw\t-\t-\n", "base\n", "", NULL, "J", "malformed journal line", 2 },
		{ "# lab journal 1 experiment=e\n", "base\n", "0\tm\tsideways\t-\n", NULL, "E", "unknown direction 'sideways'", 1 },
		{ "# lab journal 1 experiment=e\n", "base\n", "0\tm\tincrease\t-\n0\tm\tincrease\tnan\n", NULL, "E",
		  "effect 'nan' is not a number", 2 },
		{ "# lab journal 1 experiment=e\n", "base\n", "0\tm\tincrease\t1e999\n", NULL, "E", "is not a number", 1 },
		{ "# lab journal 1 experiment=e\n", "base\n../v\n", "", NULL, "V", "is not a kernel name", 2 },
		{ "# lab journal 1 experiment=e\n", "base\nbase\n", "", NULL, "V", "listed twice", 2 },
		{ "# lab journal 1 experiment=e\n", "base\n", "", "m\t>=\tinf\t-\t-\n", "O", "malformed observe line", 1 },
		{ "not a journal\n", "base\n", "", NULL, "J", "not a lab journal", 1 },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct store_v1_text t = { .journal = cases[i].journal, .variants = cases[i].variants,
					.expect = cases[i].expect, .observe = cases[i].observe, .journal_file = "J",
					.variants_file = "V", .expect_file = "E", .observe_file = "O" };
		struct result_set *rs = NULL;
		struct diags d = { 0 };

		assert_true(store_v1_parse("20261201-000000-abcd", &t, &rs, &d) < 0);
		assert_null(rs);
		assert_int_equal(d.n, 1);
		assert_string_equal(d.v[0].file, cases[i].file);
		assert_int_equal(d.v[0].line, cases[i].line);
		if (!strstr(d.v[0].msg, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, d.v[0].msg, cases[i].msg);
		diags_release(&d);
	}
	{
		/* the id itself, and a good text */
		struct store_v1_text t = { .journal = "# lab journal 1 experiment=e\na\tok\tbase\t0\t1\tw\t-\t-\n",
					.variants = "base\n", .expect = "0\tm\tunchanged\t0.02\n", .journal_file = "J" };
		struct result_set *rs = NULL;
		struct diags d = { 0 };

		assert_true(store_v1_parse("../up", &t, &rs, &d) < 0);
		assert_int_equal(store_v1_parse("20261201-000000-abcd", &t, &rs, &d), 1 - 1);
		assert_int_equal(rs->n, 1);
		assert_int_equal(rs->expect[0].dir, DIR_UNCHANGED);
		result_set_free(rs);
		diags_release(&d);
	}
}

/* An ok run must have its metrics; errors name the run folder's files. */
static void test_store_ok_without_metrics(void **state)
{
	char tmpl[] = "/tmp/lab-unit-store.XXXXXX";
	_cleanup_free_ char *dir = NULL, *j = NULL, *v = NULL, *e = NULL;
	struct result_set *rs = NULL;
	struct diags d = { 0 };
	static const char journal[] = "# lab journal 1 experiment=e\na\tok\tbase\t0\t1\tw\t-\t-\n";

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	dir = path_join(tmpl, "20261201-000000-abcd");
	j = path_join(dir, "journal");
	v = path_join(dir, "variants");
	e = path_join(dir, "expect");
	assert_int_equal(path_mkdir_p(dir, 0755), 0);
	assert_true(store_load(dir, &rs, &d) < 0);
	assert_non_null(strstr(d.v[0].file, "/run.json"));
	assert_non_null(strstr(d.v[0].msg, "missing"));
	diags_release(&d);
	assert_int_equal(fs_write_atomic(j, journal, sizeof(journal) - 1, 0644), 0);
	assert_true(store_load(dir, &rs, &d) < 0);
	assert_non_null(strstr(d.v[0].file, "/variants")); /* not "journal" */
	diags_release(&d);
	assert_int_equal(fs_write_atomic(v, "base\n", 5, 0644), 0);
	assert_int_equal(fs_write_atomic(e, "", 0, 0644), 0);
	assert_true(store_load(dir, &rs, &d) < 0);
	assert_non_null(strstr(d.v[0].msg, "is ok but has no metrics file"));
	assert_int_equal(d.v[0].line, 2);
	diags_release(&d);
	fs_remove_tree(tmpl);
}

#define RUN_REST "\"status\":\"ok\",\"variant\":\"base\",\"job\":0,\"repeat\":1,\"group\":\"w\"," \
	 "\"release\":null,\"error\":null,\"boot\":null,\"boot_pos\":0,\"guest\":null}"
#define RUN_A "{\"id\":\"a\"," RUN_REST
#define DOC(variants, expect, observe, runs)                                                               \
	"{\"format\":2,\"experiment\":\"e\",\"variants\":" variants ",\"mechanism\":[],\"expect\":" expect \
	",\"observe\":" observe ",\"runs\":" runs "}"

#define DECIDE_REST "\"power\":0.8,\"q\":0.05,\"statistic\":\"welch-log\",\"sequential\":false," \
	"\"min_boots\":2,\"max_boots\":2"
#define DOC_TIMING(timing) \
	"{\"format\":2,\"experiment\":\"e\",\"variants\":[],\"mechanism\":[],\"timing\":" timing \
	",\"expect\":[],\"observe\":[],\"runs\":[]}"
#define DOC_SERIES(series) \
	"{\"format\":2,\"experiment\":\"e\",\"variants\":[\"base\",\"p@1\",\"p@3\"],\"mechanism\":[]," \
	"\"expect\":[],\"observe\":[],\"series\":" series ",\"runs\":[]}"
#define SERIES_PATCHES ",\"patches\":[{\"number\":1,\"subject\":\"mm: one\"}]}]"
#define DOC_DECIDE(decide) \
	"{\"format\":2,\"experiment\":\"e\",\"variants\":[],\"mechanism\":[],\"decide\":" decide \
	",\"expect\":[],\"observe\":[],\"runs\":[]}"

/* run.json from elsewhere: each damage is an error naming the file, the element and what is wrong. */
static void test_store_json_strict(void **state)
{
	static const struct {
		const char *text, *msg;
		unsigned line;
	} cases[] = {
		{ DOC("[\"base\"]", "[]", "[]", "[{\"id\":\"../x\"," RUN_REST "]"), "runs[0]: '../x' is not a run id", 0 },
		{ "{\"format\":2,\n\"experiment\": }", "unexpected token", 2 },
		{ "[]", "not a JSON object", 1 },
		{ "{\"format\":2,\"format\":2}", "duplicate object key", 1 },
		{ "{\"format\":3}", "format 3: this lab reads format 2", 0 },
		{ "{\"format\":2}", "member 'experiment' is missing", 0 },
		{ "{\"format\":2,\"colour\":1}", "unknown member 'colour'", 0 },
		{ "{\"format\":\"2\"}", "'format' is a string, not an integer", 0 },
		{ DOC("[\"base\"]", "[]", "[]", "[" RUN_A "," RUN_A "]"), "runs[1]: run 'a' is in the file twice", 0 },
		{ DOC("[\"other\"]", "[]", "[]", "[" RUN_A "]"), "runs[0]: run 'a' names kernel 'base'", 0 },
		{ DOC("[\"base\",\"base\"]", "[]", "[]", "[]"), "variants[1]: 'base' is listed twice", 0 },
		{ DOC("[\"../v\"]", "[]", "[]", "[]"), "variants[0]: '../v' is not a kernel name", 0 },
		{ DOC("[1]", "[]", "[]", "[]"), "variants[0] is an integer, not a string", 0 },
		{ DOC("[]", "[{\"job\":0,\"metric\":\"m\",\"direction\":\"sideways\",\"effect\":null}]", "[]", "[]"),
		  "expect[0]: unknown direction 'sideways'", 0 },
		{ DOC("[]", "[{\"job\":0,\"metric\":\"m\",\"direction\":\"increase\",\"effect\":-1}]", "[]", "[]"),
		  "expect[0]: effect -1 is not >= 0", 0 },
		{ DOC("[]", "[{\"job\":-1,\"metric\":\"m\",\"direction\":\"increase\",\"effect\":null}]", "[]", "[]"),
		  "expect[0]: 'job' is out of range", 0 },
		{ DOC("[]", "[{\"job\":0,\"metric\":\"m\",\"direction\":\"increase\",\"effect\":1e999}]", "[]", "[]"),
		  "real number overflow", 1 },
		{ DOC("[]", "[]", "[{\"metric\":\"m\",\"rel\":\"~\",\"value\":1,\"kernels\":[],\"says\":null}]", "[]"),
		  "observe[0]: unknown rel '~'", 0 },
		{ DOC("[]", "[]", "[{\"metric\":\"m\",\"rel\":\">\",\"value\":null,\"kernels\":[],\"says\":null}]", "[]"),
		  "observe[0]: 'value' is null, not a number", 0 },
		{ DOC("[]", "[]", "[]", "[{\"id\":\"a\"}]"), "runs[0]: member 'status' is missing", 0 },
		{ DOC("[]", "[]", "[]", "[\"a\"]"), "runs[0]: a string, not an object", 0 },
		{ DOC("[\"base\"]", "[]", "[]", "[{\"colour\":1,\"id\":\"a\"," RUN_REST "]"), "runs[0]: unknown member 'colour'", 0 },
		{ DOC("[\"base\"]", "[]", "[]",
		      "[{\"id\":\"a\",\"status\":\"ok\",\"variant\":\"base\",\"job\":0,\"repeat\":1,\"group\":\"w\","
		      "\"release\":null,\"error\":null,\"boot\":\"../b\",\"boot_pos\":1,\"guest\":null}]"),
		  "runs[0]: '../b' is not a boot id", 0 },
		{ "{\"format\":2,\"experiment\":\"a\\u0000b\"}", "NUL", 1 },
		{ DOC("[]", "[{\"job\":0,\"metric\":\"m\",\"direction\":\"increase\",\"effect\":null,\"statistic\":\"t\"}]",
		      "[]", "[]"),
		  "expect[0]: unknown statistic 't' (welch-log, mann-whitney or bootstrap)", 0 },
		{ DOC("[]", "[{\"job\":0,\"metric\":\"m\",\"direction\":\"increase\",\"effect\":null,\"statistic\":1}]",
		      "[]", "[]"),
		  "expect[0]: 'statistic' is an integer, not a string or null", 0 },
		{ DOC_DECIDE("\"yes\""), "'decide' is a string, not an object", 0 },
		{ DOC_DECIDE("{" DECIDE_REST "}"), "decide: member 'alpha' is missing", 0 },
		{ DOC_DECIDE("{\"alpha\":0.5," DECIDE_REST "}"),
		  "decide: 'alpha' is 0.5, not between 0 and 0.5 (both excluded)", 0 },
		{ DOC_DECIDE("{\"alpha\":\"0.05\"," DECIDE_REST "}"), "decide: 'alpha' is a string, not a number", 0 },
		{ DOC_DECIDE("{\"alpha\":0.05,\"power\":1,\"q\":0.05,\"statistic\":\"welch-log\",\"sequential\":false,"
			     "\"min_boots\":2,\"max_boots\":2}"),
		  "decide: 'power' is 1, not from 0.5 to 0.99", 0 },
		{ DOC_DECIDE("{\"alpha\":0.05,\"power\":0.8,\"q\":-1,\"statistic\":\"welch-log\",\"sequential\":false,"
			     "\"min_boots\":2,\"max_boots\":2}"),
		  "decide: 'q' is -1, not between 0 and 0.5", 0 },
		{ DOC_DECIDE("{\"alpha\":0.05,\"power\":0.8,\"q\":0.05,\"statistic\":\"anova\",\"sequential\":false,"
			     "\"min_boots\":2,\"max_boots\":2}"),
		  "decide: unknown statistic 'anova'", 0 },
		{ DOC_DECIDE("{\"alpha\":0.05,\"power\":0.8,\"q\":0.05,\"statistic\":null,\"sequential\":false,"
			     "\"min_boots\":2,\"max_boots\":2}"),
		  "decide: 'statistic' is null, not a string", 0 },
		{ DOC_DECIDE("{\"alpha\":0.05,\"power\":0.8,\"q\":0.05,\"statistic\":\"bootstrap\",\"sequential\":1,"
			     "\"min_boots\":2,\"max_boots\":2}"),
		  "decide: 'sequential' is an integer, not a boolean", 0 },
		{ DOC_DECIDE("{\"alpha\":0.05,\"power\":0.8,\"q\":0.05,\"statistic\":\"bootstrap\",\"sequential\":true,"
			     "\"min_boots\":0,\"max_boots\":2}"),
		  "decide: 'min_boots' is 0, not from 1 to 1000", 0 },
		{ DOC_DECIDE("{\"alpha\":0.05,\"power\":0.8,\"q\":0.05,\"statistic\":\"bootstrap\",\"sequential\":true,"
			     "\"min_boots\":4,\"max_boots\":3}"),
		  "decide: 'max_boots' 3 is below 'min_boots' 4", 0 },
		{ DOC_DECIDE("{\"alpha\":0.05,\"power\":0.8,\"q\":0.05,\"statistic\":\"bootstrap\",\"sequential\":true,"
			     "\"min_boots\":2,\"max_boots\":99999999999}"),
		  "decide: 'max_boots' is out of range (0 to 1000)", 0 },
		{ DOC_DECIDE("{\"beta\":0.2,\"alpha\":0.05," DECIDE_REST "}"), "decide: unknown member 'beta'", 0 },
		{ DOC_TIMING("\"wall\""), "unknown timing 'wall' (host or icount)", 0 },
		{ DOC_TIMING("null"), "'timing' is null, not a string", 0 },
		{ DOC_SERIES("{}"), "'series' is an object, not an array", 0 },
		{ DOC_SERIES("[{\"kernel\":\"p\",\"chain\":[\"base\"]" SERIES_PATCHES),
		  "series[0]: a chain of 1 variants", 0 },
		{ DOC_SERIES("[{\"kernel\":\"p\",\"chain\":[\"base\",\"p@5\"]" SERIES_PATCHES),
		  "series[0]: chain[1]: 'p@5' is not one of the run's variants", 0 },
		{ DOC_SERIES("[{\"kernel\":\"p\",\"chain\":[\"p@1\",\"base\"]" SERIES_PATCHES),
		  "series[0]: chain[1]: 'base' is not a step of 'p'", 0 },
		{ DOC_SERIES("[{\"kernel\":\"p\",\"chain\":[\"p@3\",\"p@1\"]" SERIES_PATCHES),
		  "series[0]: chain[1]: step 1 after step 3: steps rise", 0 },
		{ DOC_SERIES("[{\"kernel\":\"p@1\",\"chain\":[\"base\",\"p@1\"]" SERIES_PATCHES),
		  "series[0]: 'p@1' is not a kernel name", 0 },
		{ DOC_SERIES("[{\"kernel\":\"p\",\"chain\":[\"base\",\"p@1\"],\"patches\":[{\"number\":0,"
			     "\"subject\":\"x\"}]}]"),
		  "series[0]: patches[0]: number 0 after 0: numbers rise from 1", 0 },
		{ DOC_SERIES("[{\"kernel\":\"p\",\"chain\":[\"base\",\"p@1\"],\"patches\":[{\"number\":2,"
			     "\"subject\":null}]}]"),
		  "series[0]: 'subject' is null, not a string", 0 },
		{ DOC_SERIES("[{\"kernel\":\"p\",\"chain\":[\"base\",\"p@1\"],\"colour\":1" SERIES_PATCHES),
		  "series[0]: unknown member 'colour'", 0 },
	};
	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct result_set *rs = NULL;
		struct diags d = { 0 };

		assert_true(store_parse("20261201-000000-abcd", cases[i].text, strlen(cases[i].text), "J", &rs, &d) < 0);
		assert_null(rs);
		assert_int_equal(d.n, 1);
		assert_string_equal(d.v[0].file, "J");
		if (d.v[0].line != cases[i].line)
			fail_msg("case %zu: line %u, not %u (%s)", i, d.v[0].line, cases[i].line, d.v[0].msg);
		if (!strstr(d.v[0].msg, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, d.v[0].msg, cases[i].msg);
		diags_release(&d);
	}
	{
		static const char good[] = DOC("[\"base\"]", "[]", "[]", "[" RUN_A "]");
		struct result_set *rs = NULL;
		struct diags d = { 0 };

		assert_true(store_parse("../up", good, strlen(good), "J", &rs, &d) < 0);
		assert_int_equal(store_parse("20261201-000000-abcd", good, strlen(good), "J", &rs, &d), 0);
		assert_int_equal(rs->n, 1);
		assert_null(rs->runs[0].boot);
		result_set_free(rs);
		diags_release(&d);
	}
	{
		/* written before decide and statistics were stored: the defaults */
		static const char old[] =
			DOC("[\"base\"]", "[{\"job\":0,\"metric\":\"m\",\"direction\":\"increase\",\"effect\":0.05}]", "[]",
			    "[" RUN_A "]");
		static const char given[] = DOC_DECIDE("{\"alpha\":0.05," DECIDE_REST "}");
		struct decide_params def = DECIDE_PARAMS_DEFAULT;
		struct result_set *rs = NULL;
		struct diags d = { 0 };

		assert_int_equal(store_parse("20261201-000000-abcd", old, strlen(old), "J", &rs, &d), 0);
		assert_int_equal(rs->nexpect, 1);
		assert_int_equal(rs->expect[0].method, -1);
		assert_true(rs->decide.alpha == def.alpha && rs->decide.power == def.power && rs->decide.q == def.q);
		assert_int_equal(rs->decide.method, def.method);
		assert_false(rs->decide.sequential);
		assert_int_equal(rs->decide.min_boots, def.min_boots);
		assert_int_equal(rs->decide.max_boots, def.max_boots);
		result_set_free(rs);
		assert_int_equal(store_parse("20261201-000000-abcd", given, strlen(given), "J", &rs, &d), 0);
		assert_int_equal(rs->decide.method, STAT_WELCH_LOG);
		assert_false(rs->icount); /* written before timing was stored: host */
		result_set_free(rs);
		assert_int_equal(store_parse("20261201-000000-abcd", DOC_TIMING("\"icount\""),
					     strlen(DOC_TIMING("\"icount\"")), "J", &rs, &d), 0);
		assert_true(rs->icount);
		result_set_free(rs);
		assert_int_equal(store_parse("20261201-000000-abcd", DOC_TIMING("\"host\""),
					     strlen(DOC_TIMING("\"host\"")), "J", &rs, &d), 0);
		assert_false(rs->icount);
		assert_int_equal(rs->nseries, 0); /* written before series were stored: none */
		result_set_free(rs);
		assert_int_equal(d.n, 0);
	}
	{
		static const char doc[] =
			DOC_SERIES("[{\"kernel\":\"p\",\"chain\":[\"base\",\"p@1\",\"p@3\"],\"patches\":["
				   "{\"number\":1,\"subject\":\"mm: one\"},{\"number\":3,\"subject\":\"mm: \\u001b three\"}]}]");
		_cleanup_strbuf_ struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;
		struct result_set *rs = NULL, *back = NULL;
		struct diags d = { 0 };

		assert_int_equal(store_parse("20261201-000000-abcd", doc, strlen(doc), "J", &rs, &d), 0);
		assert_int_equal(rs->nseries, 1);
		assert_string_equal(rs->series[0].kernel, "p");
		assert_int_equal(rs->series[0].chain.n, 3);
		assert_int_equal(rs->series[0].steps[0], 0);
		assert_int_equal(rs->series[0].steps[2], 3);
		assert_int_equal(rs->series[0].npatches, 2);
		assert_null(result_series_subject(&rs->series[0], 2));
		assert_string_equal(result_series_subject(&rs->series[0], 3), "mm: \x1b three");
		/* written back, read back the same */
		store_format(rs, &a);
		assert_int_equal(store_parse("20261201-000000-abcd", a.buf, a.len, "J", &back, &d), 0);
		store_format(back, &b);
		assert_string_equal(a.buf, b.buf);
		assert_non_null(strstr(a.buf, "\"series\""));
		result_set_free(back);
		result_set_free(rs);
		assert_int_equal(d.n, 0);
	}
}

/* Every report of a set, one after the other. */
static char *all_reports(const struct result_set *rs)
{
	struct report_opts all = { .all = true }, some = { 0 };
	struct comparison *c = compare_build(rs);
	struct strbuf sb = STRBUF_INIT;

	report_format_text(c, &some, &sb);
	report_format_text(c, &all, &sb);
	report_format_md(c, &some, &sb);
	report_format_json(c, NULL, &sb);
	report_format_html(c, &some, &sb);
	comparison_free(c);
	return strbuf_detach(&sb, NULL);
}

#define V1_RUN "tests/data/store-v1/20261130-101500-ab12"

/* A run stored by lab before run.json (made by store.c at 480d661) still
 * opens, reports as it did then, and reports the same once saved again. */
static void test_store_v1_run(void **state)
{
	char tmpl[] = "/tmp/lab-unit-v1.XXXXXX";
	_cleanup_free_ char *dir = NULL, *before = NULL, *after = NULL, *golden = NULL;
	struct result_set *rs = NULL, *back = NULL;
	struct report_opts none = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct comparison *c;
	struct diags d = { 0 };

	(void)state;
	assert_int_equal(store_load(V1_RUN, &rs, &d), 0);
	assert_int_equal(rs->n, 14);
	assert_null(rs->runs[0].boot);
	assert_int_equal(rs->runs[0].boot_pos, 0);
	assert_null(rs->runs[0].guest);
	/* what `lab report` printed for it at 480d661, in each format */
	c = compare_build(rs);
	report_format_text(c, &none, &sb);
	assert_golden("tests/data/store-v1/report.txt", sb.buf);
	strbuf_reset(&sb);
	report_format_md(c, &none, &sb);
	assert_golden("tests/data/store-v1/report.md", sb.buf);
	strbuf_reset(&sb);
	report_format_json(c, NULL, &sb);
	assert_golden("tests/data/store-v1/report.json", sb.buf);
	strbuf_reset(&sb);
	report_format_html(c, &none, &sb);
	assert_golden("tests/data/store-v1/report.html", sb.buf);
	strbuf_release(&sb);
	comparison_free(c);

	/* saved again (as `lab run --resume` does): run.json, the old files gone, the same reports */
	assert_non_null(mkdtemp(tmpl));
	dir = path_join(tmpl, "20261130-101500-ab12");
	for (size_t i = 0; i < rs->n; i++) {
		_cleanup_free_ char *from = xasprintf("%s/runs/%s/metrics", V1_RUN, rs->runs[i].id);
		_cleanup_free_ char *run = xasprintf("%s/runs/%s", dir, rs->runs[i].id);
		_cleanup_free_ char *to = path_join(run, "metrics");
		_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;

		assert_int_equal(path_mkdir_p(run, 0755), 0);
		if (strbuf_read_file(&m, from, 1 << 20) == 0)
			assert_int_equal(fs_write_atomic(to, m.buf ? m.buf : "", m.len, 0644), 0);
	}
	for (size_t i = 0; store_v1_files[i]; i++) {
		_cleanup_free_ char *from = path_join(V1_RUN, store_v1_files[i]), *to = path_join(dir, store_v1_files[i]);
		_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;

		assert_int_equal(strbuf_read_file(&m, from, 1 << 20), 0);
		assert_int_equal(fs_write_atomic(to, m.buf ? m.buf : "", m.len, 0644), 0);
	}
	assert_int_equal(store_save(dir, rs, &d), 0);
	for (size_t i = 0; store_v1_files[i]; i++) {
		_cleanup_free_ char *p = path_join(dir, store_v1_files[i]);

		assert_int_equal(access(p, F_OK), -1);
	}
	assert_int_equal(store_load(dir, &back, &d), 0);
	before = all_reports(rs);
	after = all_reports(back);
	assert_string_equal(before, after);
	{
		/* and the texts are the same run.json */
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		store_format(rs, &a);
		store_format(back, &b);
		assert_string_equal(a.buf, b.buf);
		strbuf_release(&a);
		strbuf_release(&b);
	}
	assert_int_equal(d.n, 0);
	result_set_free(rs);
	result_set_free(back);
	fs_remove_tree(tmpl);
}

/* The atomic writer never follows a link planted where it writes. */
static void test_write_atomic_planted_link(void **state)
{
	char tmpl[] = "/tmp/lab-unit-atomic.XXXXXX";
	_cleanup_free_ char *victim = NULL, *target = NULL, *old = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	victim = path_join(tmpl, "victim");
	target = path_join(tmpl, "journal");
	assert_int_equal(fs_write_atomic(victim, "precious", 8, 0644), 0);
	/* the name the writer used to take: PATH.tmp.PID */
	old = xasprintf("%s.tmp.%ld", target, (long)getpid());
	assert_int_equal(symlink(victim, old), 0);
	assert_int_equal(fs_write_atomic(target, "new", 3, 0600), 0);
	assert_int_equal(strbuf_read_file(&sb, victim, 0), 0);
	assert_string_equal(sb.buf, "precious");
	strbuf_reset(&sb);
	assert_int_equal(strbuf_read_file(&sb, target, 0), 0);
	assert_string_equal(sb.buf, "new");
	{
		struct stat st;

		assert_int_equal(lstat(target, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal(st.st_mode & 0777, 0600);
	}
	fs_remove_tree(tmpl);
}

/* Names from data: what stays below its folder. */
static void test_safe_relative(void **state)
{
	static const char *const good[] = { "journal", "runs/a.0001/metrics", "runs/x/raw/w.raw", "a~b", "x.." };
	static const char *const bad[] = { "", "/etc/passwd", "../x", "a/../b", "a/./b", "a//b", "a/", "~/.ssh/k",
					   "runs/~root/x", "a\x1b[31m", "a\\b", "a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q" };

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(good); i++)
		if (!path_is_safe_relative(good[i]))
			fail_msg("refused '%s'", good[i]);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++)
		if (path_is_safe_relative(bad[i]))
			fail_msg("accepted '%s'", bad[i]);
	{
		_cleanup_free_ char *a = path_join("dir", "~/.ssh/x"), *b = path_basename("results/ID/");

		assert_string_equal(a, "dir/~/.ssh/x"); /* no expansion of data */
		assert_string_equal(b, "ID");
	}
}

/* MANIFEST lines: the parser refuses what would name a file outside. */
static void test_manifest_parse(void **state)
{
	static const char h[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
	static const struct {
		const char *tail, *msg;
	} bad[] = {
		{ "  /etc/passwd\n", "not a path inside" }, { "  ../x\n", "not a path inside" },
		{ "  MANIFEST\n", "not a path inside" },    { " x\n", "malformed" },
		{ "  a\n%s  a\n", "twice" },               { "\n", "malformed" },
	};
	struct bundle_manifest m = { 0 };
	struct diags d = { 0 };
	_cleanup_free_ char *ok = xasprintf("%s  journal\n%s  runs/a/metrics", h, h);

	(void)state;
	assert_int_equal(bundle_manifest_parse(ok, strlen(ok), "M", &m, &d), 0);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.v[1].name, "runs/a/metrics");
	assert_int_equal(m.v[1].line, 2);
	bundle_manifest_release(&m);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_free_ char *tail = xasprintf(bad[i].tail, h);
		_cleanup_free_ char *text = xasprintf("%s%s", h, tail);

		if (bundle_manifest_parse(text, strlen(text), "M", &m, &d) == 0)
			fail_msg("case %zu accepted", i);
		if (!strstr(d.v[d.n - 1].msg, bad[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, d.v[d.n - 1].msg, bad[i].msg);
	}
	{
		char upper[] = "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855  a";

		assert_true(bundle_manifest_parse(upper, strlen(upper), "M", &m, &d) < 0);
	}
	diags_release(&d);
}

/* A snapshot listing: read back as written; every hostile line refused, naming its line. */
static void test_snapshot_parse(void **state)
{
	static const char z[] = "0000000000000000000000000000000000000000000000000000000000000000";
	static const char head[] = "lab-snapshot 1\n# c\nexperiment q\nset repeat=3\nkernels base\n"
				   "source d debian linux-source-6.1=6.1-1 - linux-source-6.1\n";
	static const struct {
		const char *tail, *msg;
	} bad[] = {
		{ "file %s 1 644 patch ../x\n", "not a path inside" },
		{ "file %s 1 644 patch /etc/x\n", "not a path inside" },
		{ "file %s 1 644 patch ~/x\n", "not a path inside" },
		{ "file %s 1 644 patch lab.yaml\n", "listed twice" },
		{ "file %s 1 644 patch lab.yaml/x\n", "a folder of" },
		{ "file %s 1 644 spec b.yaml\n", "second lab.yaml" },
		{ "file %s 01 644 patch x\n", "not a size" },
		{ "file %s 99999999999 644 patch x\n", "not a size" },
		{ "file %s 1 4755 patch x\n", "mode" },
		{ "file %s 1 644 evil x\n", "unknown role" },
		{ "file %s 1 644 patch\n", "malformed" },
		{ "file %s 1 644 patch a\tb\n", "control character" },
		{ "source d debian - - x%s\n", "twice" },
		{ "what%s\n", "unknown line" },
		{ "%s\n", "unknown line" },
	};
	_cleanup_free_ char *ok = xasprintf("%sfile %s 5 644 spec lab.yaml\nfile %s 7 755 catalogue w/a/run\n"
					    "absent patch /abs/x\n", head, z, z);
	_cleanup_strbuf_ struct strbuf again = STRBUF_INIT;
	struct snapshot snap = { 0 }, back = { 0 };
	struct diags d = { 0 };

	(void)state;
	assert_int_equal(snapshot_parse(ok, strlen(ok), "S", &snap, &d), 0);
	assert_int_equal(snap.nfiles, 2);
	assert_int_equal(snap.files[1].mode, 0755);
	assert_int_equal(snap.files[1].line, 8);
	assert_string_equal(snap.set.v[0], "repeat=3");
	assert_null(snap.sources[0].digest);
	snapshot_format(&snap, &again);
	assert_int_equal(snapshot_parse(again.buf, again.len, "S", &back, &d), 0);
	assert_int_equal(back.nfiles, 2);
	assert_int_equal(back.nabsent, 1);
	snapshot_release(&back);
	snapshot_release(&snap);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		_cleanup_free_ char *tail = xasprintf(bad[i].tail, z);
		_cleanup_free_ char *text = xasprintf("%sfile %s 5 644 spec lab.yaml\n%s", head, z, tail);

		if (snapshot_parse(text, strlen(text), "S", &snap, &d) == 0)
			fail_msg("case %zu accepted", i);
		if (!strstr(d.v[d.n - 1].msg, bad[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, d.v[d.n - 1].msg, bad[i].msg);
		if (d.v[d.n - 1].line != 8)
			fail_msg("case %zu: line %u, not 8", i, d.v[d.n - 1].line);
	}
	{
		static const char *const whole[] = { "lab-snapshot 2\n", "", "lab-snapshot 1\nexperiment q\n",
						     "lab-snapshot 1\n" };

		for (size_t i = 0; i < ELEMENTSOF(whole); i++)
			assert_true(snapshot_parse(whole[i], strlen(whole[i]), "S", &snap, &d) < 0);
	}
	diags_release(&d);
}

/* Bundle limits: members, bytes and ratio, each a clear error with nothing left behind. */
static void test_bundle_limits(void **state)
{
	char tmpl[] = "/tmp/lab-unit-bundle.XXXXXX";
	_cleanup_free_ char *run = NULL, *into = NULL, *out = NULL;
	static const struct {
		struct bundle_limits lim;
		const char *msg;
	} cases[] = {
		{ { .max_bytes = 1 << 30, .max_members = 3, .ratio_floor = 1 << 30, .max_ratio = 1000 }, "more than 3 members" },
		{ { .max_bytes = 100, .max_members = 1000, .ratio_floor = 1 << 30, .max_ratio = 1000 }, "more than 100 bytes" },
		{ { .max_bytes = 1 << 30, .max_members = 1000, .ratio_floor = 1024, .max_ratio = 2 }, "more than 2 times its size" },
	};
	struct diags d = { 0 };

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	run = path_join(tmpl, "20261201-000000-abcd");
	into = path_join(tmpl, "into");
	out = path_join(tmpl, "b.tar.zst");
	assert_int_equal(path_mkdir_p(into, 0755), 0);
	for (int i = 0; i < 6; i++) {
		_cleanup_free_ char *f = xasprintf("%s/runs/r.%04d/metrics", run, i), *dir = path_dirname(f);
		char zeros[4096] = { 0 };

		assert_int_equal(path_mkdir_p(dir, 0755), 0);
		assert_int_equal(fs_write_atomic(f, zeros, sizeof(zeros), 0644), 0);
	}
	assert_int_equal(bundle_write(run, NULL, 0, out, -1, &d), 0);
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		_cleanup_close_ int fd = open(out, O_RDONLY | O_CLOEXEC);
		char *dir = NULL, *id = NULL;

		assert_true(fd >= 0);
		assert_true(bundle_unpack(fd, out, into, &cases[i].lim, &dir, &id, &d) < 0);
		assert_null(dir);
		if (!strstr(d.v[d.n - 1].msg, cases[i].msg))
			fail_msg("case %zu: '%s' lacks '%s'", i, d.v[d.n - 1].msg, cases[i].msg);
		assert_int_equal(rmdir(into), 0); /* empty: nothing left behind */
		assert_int_equal(mkdir(into, 0755), 0);
	}
	{
		/* a large member that does not compress is no bomb: the ratio counts what came out, not the
		 * member's declared size against the first block read (2 MiB of noise at max_ratio 2) */
		const struct bundle_limits lim = { .max_bytes = 1 << 30, .max_members = 1000, .ratio_floor = 1024,
						   .max_ratio = 2 };
		_cleanup_free_ char *run2 = path_join(tmpl, "20261201-000000-beef"), *f = NULL, *noise = NULL;
		_cleanup_free_ char *out2 = path_join(tmpl, "noise.tar.zst"), *dir = NULL, *id = NULL, *fdir = NULL;
		uint64_t seed = 37;
		size_t n = 2 << 20;
		_cleanup_close_ int fd = -1;

		noise = xmalloc(n);
		for (size_t i = 0; i < n; i += 8) {
			uint64_t x = stats_rand(&seed);

			memcpy(noise + i, &x, 8);
		}
		f = xasprintf("%s/runs/r.0001/raw/big", run2);
		fdir = path_dirname(f);
		assert_int_equal(path_mkdir_p(fdir, 0755), 0);
		assert_int_equal(fs_write_atomic(f, noise, n, 0644), 0);
		assert_int_equal(bundle_write(run2, NULL, 0, out2, -1, &d), 0);
		fd = open(out2, O_RDONLY | O_CLOEXEC);
		assert_true(fd >= 0);
		if (bundle_unpack(fd, out2, into, &lim, &dir, &id, &d) < 0)
			fail_msg("2 MiB of noise refused: %s", d.v[d.n - 1].msg);
		assert_string_equal(id, "20261201-000000-beef");
	}
	diags_release(&d);
	fs_remove_tree(tmpl);
}

static void write_text(const char *dir, const char *rel, const char *text)
{
	_cleanup_free_ char *p = path_join(dir, rel), *parent = path_dirname(p);

	assert_int_equal(path_mkdir_p(parent, 0755), 0);
	assert_int_equal(fs_write_atomic(p, text, strlen(text), 0644), 0);
}

/* bundle_same_run: 1, or 0 with the first difference said */
static int same_run(const char *unpacked, const char *stored, char **ret_first)
{
	struct diags d = { 0 };
	int r = bundle_same_run(unpacked, stored, &d);

	*ret_first = r == 0 ? xasprintf("%s: %s", d.v[0].file, d.v[0].msg) : NULL;
	assert_true(r == 1 || d.n == 1);
	diags_release(&d);
	return r;
}

/*
 * A bundle held to the run stored under its id: the same run whether stored
 * by lab run (no MANIFEST, no reports) or fetched (both, reports of another
 * lab's making too); a changed, added or missing file is the first
 * difference, named by its path in the run.
 */
static void test_bundle_same_run(void **state)
{
	char tmpl[] = "/tmp/lab-unit-same.XXXXXX";
	_cleanup_free_ char *run = NULL, *into = NULL, *out = NULL, *dir = NULL, *id = NULL, *first = NULL;
	_cleanup_free_ char *extra_run = NULL, *listing = NULL;
	static const struct strbuf report = { .buf = (char *)"a report\n", .len = 9 };
	const struct bundle_extra extra[] = { { "report.txt", &report }, { "report.html", &report } };
	struct diags d = { 0 };
	int fd;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	run = path_join(tmpl, "20261201-000000-abcd");
	into = path_join(tmpl, "into");
	out = path_join(tmpl, "b.tar.zst");
	extra_run = path_join(run, "runs/e.0002");
	listing = path_join(run, "snapshot/SNAPSHOT");
	assert_int_equal(path_mkdir_p(into, 0755), 0);
	write_text(run, "journal", "# lab journal 1 experiment=e\n");
	write_text(run, "runs/e.0001/metrics", "m.tps 100\n");
	write_text(run, "snapshot/SNAPSHOT", "lab-snapshot 1\n");
	assert_int_equal(bundle_write(run, extra, ELEMENTSOF(extra), out, -1, &d), 0);
	assert_true((fd = open(out, O_RDONLY | O_CLOEXEC)) >= 0);
	assert_int_equal(bundle_unpack(fd, out, into, NULL, &dir, &id, &d), 0);
	close(fd);
	assert_int_equal(d.n, 0);

	/* as lab run stored it, then as lab fetch did: a MANIFEST and reports, one of them not the bundle's */
	assert_int_equal(same_run(dir, run, &first), 1);
	write_text(run, "MANIFEST", "not checked here\n");
	write_text(run, "report.txt", "an older lab's report\n");
	assert_int_equal(same_run(dir, run, &first), 1);

	write_text(run, "runs/e.0001/metrics", "m.tps 120\n");
	assert_int_equal(same_run(dir, run, &first), 0);
	assert_non_null(strstr(first, "runs/e.0001/metrics: not the bundle's (sha256 "));
	free(first);
	write_text(run, "runs/e.0001/metrics", "m.tps 100\n");
	assert_int_equal(same_run(dir, run, &first), 1);

	write_text(run, "runs/e.0002/metrics", "m.tps 1\n");
	assert_int_equal(same_run(dir, run, &first), 0);
	assert_string_equal(first, "runs/e.0002/metrics: only the stored copy has it");
	free(first);
	assert_int_equal(fs_remove_tree(extra_run), 0);

	assert_int_equal(unlink(listing), 0);
	assert_int_equal(same_run(dir, run, &first), 0);
	assert_string_equal(first, "snapshot/SNAPSHOT: only the bundle has it");
	free(first);
	first = NULL;
	diags_release(&d);
	fs_remove_tree(tmpl);
}

/* /proc/stat and /proc/PID/stat as this machine's kernel writes them */
static void test_host_load(void **state)
{
	static const char stat0[] = "cpu  1000 10 500 8000 100 5 5 0 0 0\n"
				    "cpu0 500 5 250 4000 50 3 2 0 0 0\nintr 1 2 3\n";
	static const char stat1[] = "cpu  1800 10 700 8700 100 5 5 0 400 0\n"
				    "cpu0 900 5 350 4350 50 3 2 0 200 0\n";
	/* a comm with spaces and parentheses, as QEMU's thread names have */
	static const char pid0[] = "4242 (qemu (x) 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 600 200 0 0 20 0 9 0 1 2 3\n";
	static const char pid1[] = "4242 (qemu (x) 1) S 1 4242 4242 0 -1 4194560 100 0 0 0 1100 300 0 0 20 0 9 0 1 2 3\n";
	struct host_cpu_sample a = { 0 }, b = { 0 };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	(void)state;
	assert_int_equal(host_stat_parse(stat0, &a.busy, &a.total), 0);
	assert_int_equal(a.total, 9620);
	assert_int_equal(a.busy, 1520); /* all but idle 8000 and iowait 100 */
	assert_int_equal(host_stat_parse(stat1, &b.busy, &b.total), 0);
	assert_int_equal(host_pid_cputime(pid0, &a.qemu), 0);
	assert_int_equal(a.qemu, 800);
	assert_int_equal(host_pid_cputime(pid1, &b.qemu), 0);
	assert_int_equal(b.qemu, 1400);
	a.has_qemu = b.has_qemu = true;
	/* 1700 jiffies passed, 1000 of them busy (guest time is inside user, not
	 * added again), 600 of those QEMU's */
	host_load_format(&a, &b, &sb);
	assert_string_equal(sb.buf, "host.busy_pct 58.82\nhost.qemu_pct 35.29\nhost.other_pct 23.53\n");

	/* no QEMU figure: only the host's */
	strbuf_reset(&sb);
	b.has_qemu = false;
	host_load_format(&a, &b, &sb);
	assert_string_equal(sb.buf, "host.busy_pct 58.82\n");
	/* counters that did not move, or not /proc/stat at all */
	strbuf_reset(&sb);
	host_load_format(&a, &a, &sb);
	assert_int_equal(sb.len, 0);
	assert_int_equal(host_stat_parse("intr 1 2 3\n", &a.busy, &a.total), -EINVAL);
	assert_int_equal(host_pid_cputime("4242 qemu S 1", &a.qemu), -EINVAL);
}

/* A calibration with monitor overheads written and read back; one made
 * before overheads were measured still reads; a bad overhead is refused
 * with its member named. */
static void test_calib_overheads_round_trip(void **state)
{
	struct strbuf text = STRBUF_INIT, again = STRBUF_INIT, old = STRBUF_INIT;
	struct calib_record rec, back;
	char *err = NULL;

	(void)state;
	assert_int_equal(strbuf_read_file(&text, "tests/fuzz/corpus-calibration/ok-overheads.json", 1 << 20), 0);
	assert_int_equal(calib_parse("ok.json", text.buf, text.len, "quick", &rec, &err), 0);
	assert_int_equal(rec.c->nov, 2);
	assert_string_equal(rec.c->ov[0].monitor, "perf-profile");
	assert_string_equal(rec.c->ov[0].group, "hackbench");
	assert_string_equal(rec.c->ov[0].metric, "hackbench.throughput");
	assert_int_equal(rec.c->ov[0].boots, 4);
	assert_int_equal(rec.c->ov[0].runs_with, 8);
	assert_true(rec.c->ov[0].change == -8.94 && rec.c->ov[0].lo == -11.8 && rec.c->ov[0].budget_pct == 3);
	assert_true(calib_overhead_over_budget(rec.c, &rec.c->ov[0]));
	assert_true(isnan(rec.c->ov[1].change) && isnan(rec.c->ov[1].p) && isnan(rec.c->ov[1].budget_pct));
	assert_false(calib_overhead_decided(rec.c, &rec.c->ov[1]));
	calib_format_json(&rec, &again);
	assert_non_null(strstr(again.buf, "\"over_budget\": true"));
	calib_record_release(&rec);
	assert_int_equal(calib_parse("again.json", again.buf, again.len, "quick", &back, &err), 0);
	assert_int_equal(back.c->nov, 2);
	assert_true(back.c->ov[0].hi == -5.9 && back.c->ov[0].p == 0.0004);
	calib_record_release(&back);
	/* a record without "overheads" (lab calibrate without --monitors, or older) */
	assert_int_equal(strbuf_read_file(&old, "tests/fuzz/corpus-calibration/ok.json", 1 << 20), 0);
	assert_int_equal(calib_parse("old.json", old.buf, old.len, "quick", &rec, &err), 0);
	assert_int_equal(rec.c->nov, 0);
	strbuf_reset(&again);
	calib_format_json(&rec, &again);
	assert_null(strstr(again.buf, "overheads"));
	calib_record_release(&rec);
	strbuf_reset(&text);
	assert_int_equal(strbuf_read_file(&text, "tests/fuzz/corpus-calibration/bad-overheads.json", 1 << 20), 0);
	assert_int_equal(calib_parse("bad.json", text.buf, text.len, "quick", &rec, &err), -EINVAL);
	assert_string_equal(err, "bad.json: \"overheads\" is not an array");
	free(err);
	err = NULL;
	strbuf_reset(&text);
	assert_int_equal(strbuf_read_file(&text, "tests/fuzz/corpus-calibration/bad-overhead-p.json", 1 << 20), 0);
	assert_int_equal(calib_parse("bad.json", text.buf, text.len, "quick", &rec, &err), -EINVAL);
	assert_string_equal(err, "bad.json: \"p\" is missing or not a number in range");
	free(err);
	strbuf_release(&text);
	strbuf_release(&again);
	strbuf_release(&old);
}

/* A stored run's experiment name is hostile: calib_load never makes a path
 * of one that is no name, even where that path holds a calibration. */
static void test_calib_load_hostile_name(void **state)
{
	char tmpl[] = "/tmp/lab-test-calib.XXXXXX";
	char *root = mkdtemp(tmpl), *err = NULL;
	_cleanup_free_ char *cal = NULL, *res = NULL, *planted = NULL;
	struct strbuf text = STRBUF_INIT;
	struct calib_record rec;

	(void)state;
	assert_non_null(root);
	cal = xasprintf("%s/calibration", root);
	res = xasprintf("%s/results", root);
	assert_int_equal(mkdir(cal, 0755), 0);
	assert_int_equal(mkdir(res, 0755), 0);
	free(res);
	res = xasprintf("%s/results/calibration", root);
	assert_int_equal(mkdir(res, 0755), 0);
	free(res);
	res = xasprintf("%s/results", root);
	assert_int_equal(strbuf_read_file(&text, "tests/fuzz/corpus-calibration/ok.json", 1 << 20), 0);
	/* <root>/results/calibration/../../calibration/quick.json is <root>/calibration/quick.json */
	planted = xasprintf("%s/quick.json", cal);
	assert_int_equal(fs_write_atomic(planted, text.buf, text.len, 0644), 0);
	assert_int_equal(calib_load(root, "quick", &rec, &err), 0);
	calib_record_release(&rec);
	assert_int_equal(calib_load(res, "../../calibration/quick", &rec, &err), -ENOENT);
	assert_null(err);
	assert_int_equal(calib_load(root, "", &rec, &err), -ENOENT);
	assert_int_equal(calib_load(root, "/etc/passwd", &rec, &err), -ENOENT);
	assert_null(err);
	strbuf_release(&text);
	fs_remove_tree(root);
}

/* The package lists of two images: versions that moved, packages only one
 * side has, in name order; lines that are not name=version are skipped. */
static void test_package_diff(void **state)
{
	_cleanup_strv_ struct strv out = STRV_INIT, none = STRV_INIT;
	const char *rec = "bash=5.2.15-2+b2\nlibc6=2.36-9+deb12u7\nold-tool=1.0\nzlib1g=1:1.2.13\n";
	const char *here = "garbage line\nbash=5.2.15-2+b2\nlibc6=2.36-9+deb12u9\nnew-tool=2.0\nzlib1g=1:1.2.13\n";

	(void)state;
	reproduce_package_diff(rec, here, &out);
	assert_int_equal(out.n, 3);
	assert_string_equal(out.v[0], "libc6: 2.36-9+deb12u7 -> 2.36-9+deb12u9");
	assert_string_equal(out.v[1], "new-tool: (none) -> 2.0");
	assert_string_equal(out.v[2], "old-tool: 1.0 -> (none)");
	reproduce_package_diff(rec, rec, &none);
	assert_int_equal(none.n, 0);
	reproduce_package_diff(NULL, "a=1\n", &none);
	assert_int_equal(none.n, 1);
	assert_string_equal(none.v[0], "a: (none) -> 1");
}

/* A snapshot's file read back checked: its content, -ENOENT for a path it
 * does not list, a refusal naming the file when the object was changed. */
static void test_snapshot_read(void **state)
{
	char tmpl[] = "/tmp/lab-unit-snapread-XXXXXX";
	_cleanup_free_ char *listing = NULL, *objdir = NULL, *obj = NULL;
	_cleanup_(snapshot_release) struct snapshot snap = { 0 };
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	char hex[SHA256_HEX_LEN + 1];
	const char *body = "CONFIG_NUMA=y\n", *yaml = "experiments: {}\n";
	char yhex[SHA256_HEX_LEN + 1];
	_cleanup_free_ char *yobj = NULL;

	(void)state;
	assert_non_null(mkdtemp(tmpl));
	sha256_hex(body, strlen(body), hex);
	objdir = xasprintf("%s/snapshot/objects", tmpl);
	assert_int_equal(path_mkdir_p(objdir, 0755), 0);
	obj = xasprintf("%s/%s", objdir, hex);
	assert_int_equal(fs_write_atomic(obj, body, strlen(body), 0644), 0);
	sha256_hex(yaml, strlen(yaml), yhex);
	yobj = xasprintf("%s/%s", objdir, yhex);
	assert_int_equal(fs_write_atomic(yobj, yaml, strlen(yaml), 0644), 0);
	strbuf_addf(&text, "lab-snapshot 1\nexperiment quick\nfile %s %zu 644 kernel-config built/kernels/base.config\n"
			   "file %s %zu 644 spec lab.yaml\n",
		    hex, strlen(body), yhex, strlen(yaml));
	listing = xasprintf("%s/snapshot/SNAPSHOT", tmpl);
	assert_int_equal(fs_write_atomic(listing, text.buf, text.len, 0644), 0);
	assert_int_equal(snapshot_load(tmpl, &snap, &d), 0);
	assert_int_equal(snapshot_read(tmpl, &snap, "built/kernels/base.config", &out, &d), 0);
	assert_string_equal(out.buf, body);
	assert_int_equal(snapshot_read(tmpl, &snap, "built/kernels/other.config", &out, &d), -ENOENT);
	assert_int_equal(d.n, 0);
	assert_int_equal(fs_write_atomic(obj, "CONFIG_NUMA=n\n", strlen(body), 0644), 0);
	strbuf_reset(&out);
	assert_int_equal(snapshot_read(tmpl, &snap, "built/kernels/base.config", &out, &d), -EINVAL);
	diags_format(&d, &err);
	assert_non_null(strstr(err.buf, "refused: built/kernels/base.config"));
	assert_non_null(strstr(err.buf, "does not match its sha256"));
	fs_remove_tree(tmpl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_driver_golden),
		cmocka_unit_test(test_calib_load_hostile_name),
		cmocka_unit_test(test_driver_host_window),
		cmocka_unit_test(test_store_round_trip),
		cmocka_unit_test(test_store_sweep_variant),
		cmocka_unit_test(test_store_strict),
		cmocka_unit_test(test_calib_overheads_round_trip),
		cmocka_unit_test(test_store_ok_without_metrics),
		cmocka_unit_test(test_store_json_strict),
		cmocka_unit_test(test_store_v1_run),
		cmocka_unit_test(test_write_atomic_planted_link),
		cmocka_unit_test(test_safe_relative),
		cmocka_unit_test(test_manifest_parse),
		cmocka_unit_test(test_bundle_limits),
		cmocka_unit_test(test_bundle_same_run),
		cmocka_unit_test(test_snapshot_parse),
		cmocka_unit_test(test_host_load),
		cmocka_unit_test(test_package_diff),
		cmocka_unit_test(test_snapshot_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
