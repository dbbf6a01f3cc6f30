/* SPDX-License-Identifier: MIT */
/* engine/track.c: a track's series read from its comparisons' runs;
 * track.json read back strictly; the summary against a golden file. */
#include <errno.h>
#include <math.h>
#include "unit.h"
#include "engine/bisect.h"
#include "engine/track.h"
#include "engine/track-report.h"
#include "util/json-read.h"
#include "result/result.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "store/store.h"

/* 4 tracked commits, the change between the second and the third. */
static void setup(struct track *t)
{
	memset(t, 0, sizeof(*t));
	t->experiment = xstrdup("proc");
	t->kernel = xstrdup("lin");
	t->branch = xstrdup("master");
	t->metric = xstrdup("w.m");
	t->step = 3;
	t->threshold = 20;
	t->alpha = 0.05;
	t->ncommits = 4;
	t->commits = xcalloc(4, sizeof(*t->commits));
	t->pairs = xcalloc(4, sizeof(*t->pairs));
	for (unsigned i = 0; i < 4; i++)
		t->commits[i] = (struct track_commit){ .id = xasprintf("c0ffee%02u%032x", i * 3, i * 3),
						       .subject = xasprintf("subsystem: change %u", i * 3),
						       .author = xstrdup("Dev <dev@example.org>") };
}

/* Comparison i's runs: 2 boots a kernel, 2 runs a boot; levels good, test. */
static struct result_set *pair_runs(const struct track *t, size_t i, double good, double test)
{
	char *g = track_kernel_name(t, i), *k = track_kernel_name(t, i + 1);
	struct result_set *rs = result_set_new("20261207-170000-abcd", "proc");
	unsigned seq = 0;

	for (unsigned b = 0; b < 2; b++)
		for (unsigned v = 0; v < 2; v++)
			for (unsigned r = 0; r < 2; r++) {
				char *id = xasprintf("proc.%04u", ++seq);
				struct result_run *run = result_add_run(rs, id, v ? k : g, "w", 0, b * 2 + r + 1);

				run->status = RUN_OK;
				run->boot = xasprintf("proc.b%u", b * 2 + v + 1);
				result_add_metric(run, "w.m", (v ? test : good) + (r ? 0.5 : -0.5) + b);
				free(id);
			}
	free(g);
	free(k);
	return rs;
}

static void test_series(void **state)
{
	struct track t;
	struct result_set *runs[3];
	double *value;
	size_t *commit, *kept, n, nkept;

	(void)state;
	setup(&t);
	runs[0] = pair_runs(&t, 0, 100, 100);
	runs[1] = pair_runs(&t, 1, 100, 130);
	runs[2] = NULL; /* not run yet */
	track_series(&t, runs, &value, &commit, &n, &kept, &nkept);
	/* commits 0, 1 (2 boots in each of its comparisons) and 2; 3 has no boot */
	assert_int_equal(nkept, 3);
	assert_int_equal(kept[0], 0);
	assert_int_equal(kept[1], 1);
	assert_int_equal(kept[2], 2);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		/* a boot's value is the mean of its runs; commit order */
		assert_true(i == 0 || commit[i] >= commit[i - 1]);
		assert_true(fabs(value[i] - (commit[i] == 2 ? 130 : 100)) <= 1.0 + 1e-9);
	}
	assert_int_equal(commit[0], 0);
	assert_int_equal(commit[7], 2);
	free(value);
	free(commit);
	free(kept);
	result_set_free(runs[0]);
	result_set_free(runs[1]);
	track_release(&t);
}

static void test_json_and_text(void **state)
{
	struct track t, back;
	struct strbuf j = STRBUF_INIT, j2 = STRBUF_INIT, text = STRBUF_INIT;
	char *err = NULL;

	(void)state;
	setup(&t);
	for (size_t i = 0; i < 3; i++) {
		t.pairs[i].run = xasprintf("20261207-17000%zu-abcd", i);
		t.pairs[i].done = true;
		t.pairs[i].seconds = 200 + (double)i;
	}
	free(t.pairs[2].run);
	t.pairs[2].run = NULL;
	t.pairs[2].failed = xstrdup("lin-gc0ffee090000 does not build: fs/proc/uptime.c:12:31: error: x");
	t.decided = true;
	t.points = xcalloc(1, sizeof(*t.points));
	t.points[0] = (struct track_point){ .from = 1, .at = 2, .change = 30.1, .lo = 29.5, .hi = 30.7, .p = 0.001,
					    .bisect = xstrdup("20261207-171000-abcd"),
					    .culprit = xstrdup("c0ffee05" "00000000000000000000000000000005"),
					    .subject = xstrdup("proc: slow reads"),
					    .author = xstrdup("Dev \x1b[31m <dev@example.org>"),
					    .outcome = xstrdup("found") };
	t.npoints = 1;
	track_format_json(&t, &j);
	assert_golden("tests/data/track/found.json", j.buf);
	assert_int_equal(track_parse("track.json", j.buf, j.len, &back, &err), 0);
	track_format_json(&back, &j2);
	assert_string_equal(j.buf, j2.buf);
	track_format_text(&back, &text);
	assert_golden("tests/data/track/found.txt", text.buf);
	assert_non_null(strstr(text.buf, "FYI: a +30.1% change of w.m (proc) due to commit c0ffee050000 (\"proc: slow reads\")"));
	track_release(&back);
	track_release(&t);
	strbuf_release(&j);
	strbuf_release(&j2);
	strbuf_release(&text);
}

static void test_hostile(void **state)
{
	static const struct {
		const char *from, *to, *says;
	} bad[] = {
		{ "\"format\": 1", "\"format\": 2", "\"format\" is not format 1" },
		{ "\"step\": 3", "\"step\": 0", "\"step\" is 0" },
		{ "\"id\": \"c0ffee03", "\"id\": \"../ee03", "\"id\" is not a commit id" },
		{ "\"run\": \"20261207-170000-abcd\"", "\"run\": \"../../etc\"", "\"run\" is not a run id" },
		{ "\"from\": 1", "\"from\": 2", "\"from\" is not before the commit" },
		{ "\"at\": 2", "\"at\": 9", "\"at\" is missing or not a whole number in range" },
		{ "\"decided\": true", "\"decided\": false", "there before the points were decided" },
		{ "\"culprit\": \"c0ffee05", "\"culprit\": \"C0FFEE05", "\"culprit\" is not a commit id" },
		{ "\"subject\": \"subsystem: change 0\",", "\"subject\": \"subsystem: change 0\", \"run\": null,",
		  "is on the start, which is compared with nothing" },
		{ "\"outcome\"", "\"extra\": 1, \"outcome\"", "\"extra\" is not a member of a change point" },
		{ "{", "[", "track.json:2:11:" },
	};
	struct track t, back;
	struct strbuf j = STRBUF_INIT;

	(void)state;
	setup(&t);
	for (size_t i = 0; i < 3; i++) {
		t.pairs[i].run = xasprintf("20261207-17000%zu-abcd", i);
		t.pairs[i].done = true;
	}
	t.decided = true;
	t.points = xcalloc(1, sizeof(*t.points));
	t.points[0] = (struct track_point){ .from = 1, .at = 2, .change = 30, .lo = 29, .hi = 31, .p = 0.001,
					    .culprit = xstrdup("c0ffee05" "00000000000000000000000000000005"),
					    .outcome = xstrdup("found") };
	t.npoints = 1;
	track_format_json(&t, &j);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		const char *at = strstr(j.buf, bad[i].from);
		struct strbuf doc = STRBUF_INIT;
		char *err = NULL;

		if (!at)
			fail_msg("case %zu: '%s' is not in the file", i, bad[i].from);
		strbuf_add(&doc, j.buf, (size_t)(at - j.buf));
		strbuf_addstr(&doc, bad[i].to);
		strbuf_addstr(&doc, at + strlen(bad[i].from));
		assert_int_equal(track_parse("track.json", doc.buf, doc.len, &back, &err), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].says);
		free(err);
		strbuf_release(&doc);
	}
	track_release(&t);
	strbuf_release(&j);
}

/* Known trade-offs: accepted.json round trip, a culprit matched by its
 * prefix and metric, the summary saying accepted or known, not news. */
static void test_accepted(void **state)
{
	static const struct {
		const char *from, *to, *says;
	} bad[] = {
		{ "\"commit\": \"c0ffee05\"", "\"commit\": \"c0ffe\"", "\"commit\" is not 7 to 40 hex digits" },
		{ "\"commit\": \"c0ffee05\"", "\"commit\": \"../etc/x\"", "\"commit\" is not 7 to 40 hex digits" },
		{ "\"format\": 1", "\"format\": 3", "\"format\" is not format 1" },
		{ "\"when\"", "\"who\": 1, \"when\"", "\"who\" is not a member of an accepted trade-off" },
	};
	struct track_accepted a = { 0 }, back;
	struct track t;
	struct strbuf j = STRBUF_INIT, text = STRBUF_INIT;
	char *err = NULL;

	(void)state;
	GROW(a.v, a.alloc, 1);
	a.v[a.n++] = (struct track_accept){ .commit = xstrdup("c0ffee05"), .metric = xstrdup("w.m"),
					    .why = xstrdup("slower reads buy a correct banner"),
					    .when = xstrdup("2026-12-07T17:00:00Z") };
	track_accepted_format_json(&a, &j);
	assert_int_equal(track_accepted_parse("accepted.json", j.buf, j.len, &back, &err), 0);
	assert_int_equal(back.n, 1);
	assert_string_equal(track_accepted_why(&back, "c0ffee0500000000000000000000000000000005", "w.m"),
			    "slower reads buy a correct banner");
	assert_null(track_accepted_why(&back, "c0ffee0500000000000000000000000000000005", "other.m"));
	assert_null(track_accepted_why(&back, "c0ffee0600000000000000000000000000000006", "w.m"));
	track_accepted_release(&back);
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		const char *at = strstr(j.buf, bad[i].from);
		struct strbuf doc = STRBUF_INIT;

		if (!at)
			fail_msg("case %zu: '%s' is not in the file", i, bad[i].from);
		strbuf_add(&doc, j.buf, (size_t)(at - j.buf));
		strbuf_addstr(&doc, bad[i].to);
		strbuf_addstr(&doc, at + strlen(bad[i].from));
		assert_int_equal(track_accepted_parse("accepted.json", doc.buf, doc.len, &back, &err), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].says);
		free(err);
		strbuf_release(&doc);
	}
	track_accepted_release(&a);
	/* the summary: accepted, or known, instead of the robot's line */
	setup(&t);
	t.decided = true;
	t.points = xcalloc(2, sizeof(*t.points));
	t.points[0] = (struct track_point){ .from = 0, .at = 1, .change = 30, .lo = 29, .hi = 31, .p = 0.001,
					    .culprit = xstrdup("c0ffee0300000000000000000000000000000003"),
					    .subject = xstrdup("subsystem: change 3"), .outcome = xstrdup("adjacent"),
					    .accepted = xstrdup("slower reads buy a correct banner") };
	t.points[1] = (struct track_point){ .from = 2, .at = 3, .change = -20, .lo = -21, .hi = -19, .p = 0.001,
					    .culprit = xstrdup("c0ffee0900000000000000000000000000000009"),
					    .subject = xstrdup("subsystem: change 9"), .outcome = xstrdup("adjacent"),
					    .known = xstrdup("20261201-120000-abcd") };
	t.npoints = 2;
	track_format_text(&t, &text);
	assert_non_null(strstr(text.buf, "accepted: commit c0ffee030000 (\"subsystem: change 3\"), a known trade-off: "
					 "slower reads buy a correct banner"));
	assert_non_null(strstr(text.buf, "known: commit c0ffee090000 (\"subsystem: change 9\"), reported by track "
					 "20261201-120000-abcd"));
	assert_null(strstr(text.buf, "FYI"));
	track_release(&t);
	strbuf_release(&j);
	strbuf_release(&text);
}

/* The robot's report of a track with one change point and its bisect, in
 * the four formats against golden files; hostile stored text (a subject
 * with a fence, markup and a control) stays text in each. */
static void report_fixture(struct track_report *r)
{
	struct result_set *runs[3];
	struct strbuf bj = STRBUF_INIT;
	char *err = NULL;

	memset(r, 0, sizeof(*r));
	setup(&r->t);
	/* the point's bisect is tests/data/bisect/commits-found.json's, over
	 * c0ffee00..c0ffee07, which found c0ffee04: tracked commits 1 and 2
	 * are its ends */
	free(r->t.commits[0].id);
	free(r->t.commits[1].id);
	free(r->t.commits[2].id);
	r->t.commits[0].id = xstrdup("c0ffeeaa" "000000000000000000000000000000aa");
	r->t.commits[1].id = xstrdup("c0ffee00" "00000000000000000000000000000000");
	r->t.commits[2].id = xstrdup("c0ffee07" "00000000000000000000000000000007");
	runs[0] = pair_runs(&r->t, 0, 100, 100);
	runs[1] = pair_runs(&r->t, 1, 100, 130);
	runs[2] = pair_runs(&r->t, 2, 130, 130);
	for (size_t i = 0; i < 3; i++) {
		r->t.pairs[i].run = xasprintf("20261207-17000%zu-abcd", i);
		r->t.pairs[i].done = true;
	}
	track_series(&r->t, runs, &r->value, &r->commit, &r->n, &r->kept, &r->nkept);
	for (size_t i = 0; i < 3; i++)
		result_set_free(runs[i]);
	r->id = xstrdup("20261207-180000-abcd");
	r->workload = xstrdup("w reads=1800");
	r->t.decided = true;
	r->t.points = xcalloc(1, sizeof(*r->t.points));
	r->t.points[0] = (struct track_point){ .from = 1, .at = 2, .change = 30.1, .lo = 29.5, .hi = 30.7, .p = 2e-6,
					       .bisect = xstrdup("20261207-171000-abcd"),
					       .culprit = xstrdup("c0ffee04" "00000000000000000000000000000004"),
					       .subject = xstrdup("proc: ```slow``` <script>x</script> reads"),
					       .author = xstrdup("Dev \x1b[31m <dev@example.org>"),
					       .outcome = xstrdup("found") };
	r->t.npoints = 1;
	r->pts = xcalloc(1, sizeof(*r->pts));
	assert_true(strbuf_read_file(&bj, "tests/data/bisect/commits-found.json", 1 << 20) >= 0);
	if (bisect_parse("bisect.json", bj.buf, bj.len, &r->pts[0].b, &err) < 0)
		fail_msg("%s", err);
	free(r->pts[0].b.metric);
	r->pts[0].b.metric = xstrdup("w.m");
	r->pts[0].have_bisect = true;
	fingerprint_set(&r->fp, FP_CPU_MODEL, "AMD EPYC");
	fingerprint_set(&r->fp, FP_CPUS, "2");
	fingerprint_set(&r->fp, FP_ACCEL, "tcg");
	fingerprint_set(&r->fp, FP_TIMING, "icount");
	fingerprint_set(&r->fp, FP_QEMU, "7.2.19");
	r->have_fp = true;
	strbuf_release(&bj);
}

static void test_report(void **state)
{
	struct track_report r;
	struct strbuf text = STRBUF_INIT, md = STRBUF_INIT, js = STRBUF_INIT, html = STRBUF_INIT;
	struct json_doc *doc = NULL;
	char *err = NULL;

	(void)state;
	report_fixture(&r);
	track_report_format_text(&r, &text);
	assert_golden("tests/data/track/report.txt", text.buf);
	/* the robot's line, with the interval, the workload and its parameters */
	assert_non_null(strstr(text.buf, "FYI: a +30.1% [+29.5, +30.7]% change of w.m (proc, w reads=1800) due to "
					 "commit c0ffee040000"));
	/* the series with the change point between commits 1 and 2 */
	assert_true(strstr(text.buf, "   1. c0ffee000000") < strstr(text.buf, "---- change point 1: +30.1% ----"));
	assert_true(strstr(text.buf, "---- change point 1: +30.1% ----") < strstr(text.buf, "   2. c0ffee070000"));
	/* the bisect's steps, the machine, the command on the user's tree */
	assert_non_null(strstr(text.buf, "first bad commit: "));
	assert_non_null(strstr(text.buf, "cpu model: AMD EPYC"));
	assert_non_null(strstr(text.buf, "lab bisect proc --good c0ffee00"));
	assert_non_null(strstr(text.buf, "--metric w.m --threshold 20% --kernel lin"));

	track_report_format_md(&r, &md);
	assert_golden("tests/data/track/report.md", md.buf);
	assert_null(strstr(md.buf, "<script>"));
	assert_null(strstr(md.buf, "\x1b"));

	track_report_format_json(&r, &js);
	assert_golden("tests/data/track/report.json", js.buf);
	if (json_doc_parse_file("report.json", js.buf, js.len, &doc, &err) < 0)
		fail_msg("the report's JSON does not parse: %s", err);
	json_doc_free(doc);
	assert_non_null(strstr(js.buf, "\"kind\": \"news\""));

	track_report_format_html(&r, &html);
	assert_golden("tests/data/track/report.html", html.buf);
	assert_null(strstr(html.buf, "<script>"));
	assert_non_null(strstr(html.buf, "&lt;script&gt;"));
	assert_non_null(strstr(html.buf, "<svg"));
	assert_non_null(strstr(html.buf, "stroke-dasharray")); /* the change point's line */

	/* the bisect is the point's: its ends, its experiment and metric, its culprit */
	{
		char *why = NULL;
		struct track_point other = r.t.points[0];

		assert_true(track_point_bisect_matches(&r.t, &r.t.points[0], &r.pts[0].b, &why));
		assert_null(why);
		other.from = 0;
		assert_false(track_point_bisect_matches(&r.t, &other, &r.pts[0].b, &why));
		assert_string_equal(why, "it bisects c0ffee000000..c0ffee070000, not c0ffeeaa0000..c0ffee070000");
		free(why);
		other = r.t.points[0];
		other.culprit = (char *)"c0ffee0500000000000000000000000000000005";
		assert_false(track_point_bisect_matches(&r.t, &other, &r.pts[0].b, &why));
		assert_string_equal(why, "it found c0ffee040000, not the culprit c0ffee050000");
		free(why);
		free(r.pts[0].b.metric);
		r.pts[0].b.metric = xstrdup("other.metric");
		assert_false(track_point_bisect_matches(&r.t, &r.t.points[0], &r.pts[0].b, &why));
		assert_string_equal(why, "it bisects other.metric of experiment proc, not w.m of proc");
		free(why);
		free(r.pts[0].b.metric);
		r.pts[0].b.metric = xstrdup("w.m");
	}

	/* not news: known, then accepted */
	r.t.points[0].known = xstrdup("20261201-100000-abcd");
	strbuf_reset(&text);
	track_report_format_text(&r, &text);
	assert_non_null(strstr(text.buf, "known: a +30.1% change of w.m (proc, w reads=1800) due to commit c0ffee040000"));
	assert_non_null(strstr(text.buf, "reported by track 20261201-100000-abcd"));
	r.t.points[0].accepted = xstrdup("a correct banner");
	strbuf_reset(&js);
	track_report_format_json(&r, &js);
	assert_non_null(strstr(js.buf, "\"kind\": \"accepted\""));
	/* the timeline marks it so: a blue line, the culprit and "accepted" by it */
	strbuf_reset(&html);
	track_report_format_html(&r, &html);
	assert_non_null(strstr(html.buf, "1: +30.1% c0ffee040000 accepted</text>"));
	assert_non_null(strstr(html.buf, "stroke='#0072B2' stroke-width='2' stroke-dasharray"));
	track_report_release(&r);
	strbuf_release(&text);
	strbuf_release(&md);
	strbuf_release(&js);
	strbuf_release(&html);
}

/* The shell tests' stored track (t0930's browser check, t0920's site):
 * test_report's track, its two comparisons and its bisect as stored runs
 * under root, each written by the store itself (`test-track --write-store
 * ROOT`, run from the source tree). */
static void write_runs(const char *dir, struct result_set *rs, const struct fingerprint *fp)
{
	struct diags d = { 0 };
	int f = result_add_fingerprint(rs, fp);

	assert_int_equal(path_mkdir_p(dir, 0755), 0);
	for (size_t k = 0; k < rs->n; k++) {
		char *rdir = xasprintf("%s/runs/%s", dir, rs->runs[k].id), *mf = path_join(rdir, "metrics");
		char *text = xasprintf("w.m %.3f\n", rs->runs[k].m[0].value);

		rs->runs[k].fp = f;
		assert_int_equal(path_mkdir_p(rdir, 0755), 0);
		assert_int_equal(fs_write_atomic(mf, text, strlen(text), 0644), 0);
		free(rdir);
		free(mf);
		free(text);
	}
	assert_int_equal(store_save(dir, rs, &d), 0);
	diags_release(&d);
}

static int write_store(const char *root)
{
	struct track_report r;
	struct strbuf sb = STRBUF_INIT;
	char *dir;

	report_fixture(&r);
	for (size_t i = 0; i < 2; i++) {
		struct result_set *rs = pair_runs(&r.t, i, 100, i ? 130 : 100);

		free(rs->id);
		rs->id = xstrdup(r.t.pairs[i].run);
		dir = path_join(root, rs->id);
		write_runs(dir, rs, &r.fp);
		free(dir);
		result_set_free(rs);
	}
	/* the third comparison did not build: nothing stored */
	free(r.t.pairs[2].run);
	r.t.pairs[2].run = NULL;
	r.t.pairs[2].failed = xstrdup("lin-gc0ffee090000 does not build: fs/proc/uptime.c:12:31: error: x");
	{
		/* the track's folder: every comparison's runs gathered as lab track
		 * gathers them, and track.json */
		const char *ids[3] = { r.t.pairs[0].run, r.t.pairs[1].run, NULL };
		char *first = track_kernel_name(&r.t, 0);
		struct diags d = { 0 };

		dir = path_join(root, r.id);
		assert_int_equal(path_mkdir_p(dir, 0755), 0);
		assert_int_equal(runs_gather("proc", first, ids, 3, root, dir, r.id, &d), 0);
		free(first);
		diags_release(&d);
		track_format_json(&r.t, &sb);
		free(dir);
		dir = xasprintf("%s/%s/%s", root, r.id, TRACK_FILE);
		assert_int_equal(fs_write_atomic(dir, sb.buf, sb.len, 0644), 0);
		free(dir);
	}
	{
		/* the point's bisect: a stored run of no runs, and bisect.json */
		struct result_set *rs = result_set_new(r.t.points[0].bisect, "proc");

		dir = path_join(root, r.t.points[0].bisect);
		write_runs(dir, rs, &r.fp);
		result_set_free(rs);
		strbuf_reset(&sb);
		bisect_format_json(&r.pts[0].b, &sb);
		free(dir);
		dir = xasprintf("%s/%s/%s", root, r.t.points[0].bisect, BISECT_FILE);
		assert_int_equal(fs_write_atomic(dir, sb.buf, sb.len, 0644), 0);
		free(dir);
	}
	printf("%s\n", r.id);
	strbuf_release(&sb);
	track_report_release(&r);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && streq(argv[1], "--write-store"))
		return write_store(argv[2]) < 0;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_series),
		cmocka_unit_test(test_json_and_text),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_accepted),
		cmocka_unit_test(test_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
