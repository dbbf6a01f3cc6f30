/* SPDX-License-Identifier: MIT */
/* The results site's formatters (result/site.h): file names that stay in
 * their folder, the manifest of the files the site wrote (only pages of
 * its own read back), axis numbers without e-notation, run dates, and the index
 * and experiment pages against golden files. */
#include <ctype.h>
#include <math.h>
#include "unit.h"
#include "result/compare.h"
#include "result/site.h"
#include "util/strbuf.h"

/* A stored run as lab run makes it: two kernels, 2 boots x 2 runs a side;
 * the patched kernel's throughput `shift` times the baseline's. */
static struct result_set *stored(const char *id, const char *experiment, const char *patched, double shift)
{
	static const double noise[] = { 0.3, -0.2, 0.1, -0.4, 0.2, 0.0, -0.1, 0.4 };
	struct result_set *rs = result_set_new(id, experiment);
	char rid[64], boot[64];
	int seq = 0;

	strv_push(&rs->variants, "base");
	strv_push(&rs->variants, patched);
	for (int b = 0; b < 2; b++)
		for (int v = 0; v < 2; v++)
			for (int k = 0; k < 2; k++) {
				struct result_run *r;
				double e = noise[(b * 4 + v * 2 + k) % 8];

				snprintf(rid, sizeof(rid), "x.%04d", ++seq);
				snprintf(boot, sizeof(boot), "x.b%d", b * 2 + v + 1);
				r = result_add_run(rs, rid, v ? patched : "base", "hackbench <loops>", 0, (unsigned)seq);
				r->status = RUN_OK;
				r->boot = strdup(boot);
				r->boot_pos = (unsigned)k + 1;
				result_add_metric(r, "hackbench.throughput", 15200 * (v ? shift : 1) * (1 + e / 100));
				result_add_metric(r, "vmstat.pgfault", 23.85e6 * (1 + e / 200));
				result_add_metric(r, "cpu.idle%", 40 + e);
			}
	result_add_expect(rs, 0, "hackbench.throughput", DIR_INCREASE, 0.02, true);
	result_add_expect(rs, 0, "vmstat.pgfault", DIR_UNCHANGED, 0.05, true);
	result_add_expect(rs, 0, "cpu.idle%", DIR_UNCHANGED, 0.05, true);
	return rs;
}

static void summarize(struct result_set *rs, struct site_run *ret)
{
	struct comparison *c = compare_build(rs);

	site_run_from(c, true, ret);
	ret->report = true;
	comparison_free(c);
	result_set_free(rs);
}

/* Four runs of "tg <b>&</b>" (a hostile name) oldest to newest, one of
 * another experiment, one that does not load; newest first in runs[]. */
#define NRUNS 6
static void fixture(struct site_run *all, const struct site_run **runs)
{
	static const char *const exp = "tg <b>&</b>/../../x";

	summarize(stored("20261201-090000-aaaa", exp, "ratelimit", 1.00), &all[0]);
	summarize(stored("20261202-090000-bbbb", exp, "ratelimit", 1.20), &all[1]);
	summarize(stored("20261203-090000-cccc", exp, "rate'limit\"2", 0.90), &all[2]);
	summarize(stored("20261204-090000-dddd", exp, "ratelimit", 1.01), &all[3]);
	summarize(stored("20261204-100000-eeee", "other", "patched", 1.05), &all[4]);
	site_run_damaged("20261205-090000-ffff", "run.json:3:7: unknown member 'vpcus' <script>", &all[5]);
	for (size_t i = 0; i < NRUNS; i++)
		runs[i] = &all[NRUNS - 1 - i];
}

static void release(struct site_run *all)
{
	for (size_t i = 0; i < NRUNS; i++)
		site_run_release(&all[i]);
}

static void test_file_name(void **state)
{
	static const char *const hostile[] = { "../../x", "a/b", "a_b-", "/etc/passwd", ".hidden", "-rf", "", "..",
					       "tg <b>&</b>/../../x", "a\nb", "é" };
	char *names[sizeof(hostile) / sizeof(*hostile)];
	char *plain = site_file_name("tg-load_avg.2");
	char long_name[300];

	(void)state;
	assert_string_equal(plain, "tg-load_avg.2");
	free(plain);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		char *again = site_file_name(hostile[i]);

		names[i] = site_file_name(hostile[i]);
		assert_null(strchr(names[i], '/'));
		assert_true(names[i][0] != '.' && names[i][0] != '-' && names[i][0] != '\0');
		for (const char *c = names[i]; *c; c++)
			assert_true(isalnum((unsigned char)*c) || *c == '-' || *c == '_' || *c == '.');
		assert_string_equal(names[i], again); /* the same name, the same file, every time */
		free(again);
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(names[i], names[k]);
	}
	assert_true(strncmp(names[0], "_._.._x-", 8) == 0);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	plain = site_file_name(long_name);
	assert_true(strlen(plain) <= 48 + 9);
	free(plain);
	for (size_t i = 0; i < sizeof(hostile) / sizeof(*hostile); i++)
		free(names[i]);
}

/* The manifest keeps the pages the site could have written, and only
 * them: every file name site_file_name() makes reads back; a path that
 * leaves its folder, names a folder of its own or is not a page is
 * dropped, so it is never removed. */
static void test_manifest(void **state)
{
	static const char *const hostile[] = { "../../x", "tg <b>&</b>/../../x", ".hidden", "-rf", "é" };
	static const char text[] = "# a comment\n"
				   "index.html\n"
				   "runs/20261201-090000-aaaa.html\n"
				   "exp/tg.html\n"
				   "exp/tg.html\n"
				   "../x.html\n"
				   "/etc/passwd\n"
				   "runs/../../x.html\n"
				   "runs/a/b.html\n"
				   "runs//a.html\n"
				   "runs/.hidden.html\n"
				   "runs/-rf.html\n"
				   "runs/.html\n"
				   "runs/a.txt\n"
				   "runs/a.html/\n"
				   " exp/a.html\n"
				   "exp/a b.html\n"
				   "notes.html\n"
				   "index.html.tmp\n"
				   "other/a.html\n"
				   "runs/\n"
				   "exp/last.html";
	struct strv files = STRV_INIT, back = STRV_INIT;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	site_manifest_parse(text, sizeof(text) - 1, &files);
	assert_int_equal(files.n, 4);
	assert_string_equal(files.v[0], "index.html");
	assert_string_equal(files.v[1], "runs/20261201-090000-aaaa.html");
	assert_string_equal(files.v[2], "exp/tg.html");
	assert_string_equal(files.v[3], "exp/last.html");
	strv_release(&files);

	strv_push(&files, "index.html");
	for (size_t i = 0; i < sizeof(hostile) / sizeof(*hostile); i++) {
		char *name = site_file_name(hostile[i]);

		strv_pushf(&files, "%s/%s.html", i % 2 ? "runs" : "exp", name);
		free(name);
	}
	site_manifest_format(&files, &sb);
	assert_true(sb.buf[0] == '#');
	site_manifest_parse(sb.buf, sb.len, &back);
	assert_int_equal(back.n, files.n);
	for (size_t i = 0; i < files.n; i++)
		assert_string_equal(back.v[i], files.v[i]);
	strv_release(&files);
	strv_release(&back);
	strbuf_release(&sb);
}

static void number_is(double v, double step, const char *want)
{
	struct strbuf sb = STRBUF_INIT;

	site_format_number(v, step, &sb);
	assert_string_equal(sb.buf, want);
	strbuf_release(&sb);
}

static void test_number(void **state)
{
	(void)state;
	number_is(15200, 100, "15.2k");
	number_is(23850000, 50000, "23.85M");
	number_is(23850000, 1e6, "24M");
	number_is(2.5e9, 5e8, "2.5G");
	number_is(-40, 20, "-40");
	number_is(0.00012, 0.00001, "0.00012");
	number_is(1e-17, 0.5, "0");
	number_is(-0.0, 1, "0");
	number_is(7.5, 2.5, "7.5");
	number_is(5, 0, "5");
	number_is(NAN, 1, "-");
	number_is(1e18, 1e17, "1000000T");
}

static void test_date(void **state)
{
	char *d = site_date("20261130-120000-cafe");

	(void)state;
	assert_string_equal(d, "2026-11-30 12:00");
	free(d);
	d = site_date("20261130-120000");
	assert_string_equal(d, "2026-11-30 12:00");
	free(d);
	assert_null(site_date("tg-load.0001"));
	assert_null(site_date("20261130-1200"));
	assert_null(site_date("20261130-120000x"));
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
		n++;
	return n;
}

/* Every <figcaption> comes before its <svg>, inside one <figure>. */
static void assert_captions_above(const char *html)
{
	size_t figures = 0;

	for (const char *f = strstr(html, "<figure>"); f; f = strstr(f + 1, "<figure>")) {
		const char *cap = strstr(f, "<figcaption>"), *svg = strstr(f, "<svg"), *end = strstr(f, "</figure>");

		assert_non_null(cap);
		assert_non_null(svg);
		assert_true(cap < svg && svg < end);
		figures++;
	}
	assert_true(figures > 0);
}

/* No number in e-notation (1.5e+04, 2e-05) in any label. */
static void assert_no_e_notation(const char *html)
{
	for (const char *p = html; *p; p++)
		if (isdigit((unsigned char)p[0]) && (p[1] == 'e' || p[1] == 'E') && (p[2] == '+' || p[2] == '-') &&
		    isdigit((unsigned char)p[3]))
			fail_msg("e-notation at: %.40s", p);
}

static void test_pages_golden(void **state)
{
	struct site_run all[NRUNS];
	const struct site_run *runs[NRUNS];
	struct strbuf index = STRBUF_INIT, exp = STRBUF_INIT, other = STRBUF_INIT;

	(void)state;
	fixture(all, runs);
	site_format_index(runs, NRUNS, &index);
	/* the experiment's runs, newest first: runs[2..5] */
	site_format_experiment(all[0].experiment, runs + 2, 4, &exp);
	site_format_experiment("other", runs + 1, 1, &other);
	assert_golden("tests/data/site/index.html", index.buf);
	assert_golden("tests/data/site/exp.html", exp.buf);
	assert_golden("tests/data/site/other.html", other.buf);

	/* hostile names escaped everywhere; the damaged run listed with why */
	assert_null(strstr(index.buf, "<b>"));
	assert_null(strstr(index.buf, "<script"));
	assert_non_null(strstr(index.buf, "tg &lt;b&gt;&amp;&lt;/b&gt;/../../x"));
	assert_non_null(strstr(index.buf, "does not load: run.json:3:7: unknown member &apos;vpcus&apos; &lt;script&gt;"));
	assert_null(strstr(exp.buf, "<b>"));
	assert_non_null(strstr(exp.buf, "rate&apos;limit&quot;2"));
	/* links go to sanitized file names only */
	{
		char *file = site_file_name(all[0].experiment), *href = malloc(strlen(file) + 32);

		snprintf(href, strlen(file) + 32, "href='exp/%s.html'", file);
		assert_non_null(strstr(index.buf, href));
		assert_null(strstr(index.buf, "href='exp/tg &"));
		free(href);
		free(file);
	}
	assert_non_null(strstr(index.buf, "href='runs/20261204-090000-dddd.html'"));
	assert_null(strstr(index.buf, "href='runs/20261205-090000-ffff.html'"));
	assert_null(strstr(index.buf, "<script"));
	/* self-contained and readable on a phone */
	for (struct strbuf *sb = &index; sb; sb = sb == &index ? &exp : sb == &exp ? &other : NULL) {
		assert_non_null(strstr(sb->buf, "name='viewport'"));
		assert_null(strstr(sb->buf, "<script"));
		assert_null(strstr(sb->buf, "src="));
		/* the only address is the SVG namespace's */
		assert_int_equal(count(sb->buf, "http"), count(sb->buf, "xmlns='http://www.w3.org/2000/svg'"));
		assert_no_e_notation(sb->buf);
	}
	/* a chart per declared metric, its caption above it */
	assert_captions_above(exp.buf);
	assert_non_null(strstr(exp.buf, "<figcaption>hackbench.throughput: change against the baseline"));
	assert_non_null(strstr(exp.buf, "<figcaption>vmstat.pgfault: "));
	assert_non_null(strstr(exp.buf, "<figcaption>cpu.idle%: change against the baseline (points)"));
	assert_non_null(strstr(exp.buf, "href='../runs/20261201-090000-aaaa.html'"));
	assert_non_null(strstr(exp.buf, "href='../index.html'"));

	strbuf_release(&index);
	strbuf_release(&exp);
	strbuf_release(&other);
	release(all);
}

/* Runs with no change measured: the chart shows the compared kernel's
 * mean, its axis in human units (15.2k, not 1.52e+04). */
static void test_mean_chart(void **state)
{
	static const double means[] = { 15200, 16150, 23.85e6 / 1000 };
	struct site_run r[3];
	const struct site_run *runs[3];
	struct strbuf html = STRBUF_INIT;
	char id[32];

	(void)state;
	for (size_t i = 0; i < 3; i++) {
		snprintf(id, sizeof(id), "2026120%zu-090000-abcd", i + 1);
		site_run_damaged(id, "x", &r[i]);
		free(r[i].error);
		r[i].error = NULL;
		r[i].experiment = strdup("m");
		r[i].report = true;
		r[i].pts = calloc(1, sizeof(*r[i].pts));
		r[i].pts[0] = (struct site_point){ strdup("w.ops"), strdup("w"), strdup("p"), VERDICT_INCONCLUSIVE,
						   false, NAN, NAN, NAN, means[i] };
		r[i].npts = 1;
		r[i].verdicts[VERDICT_INCONCLUSIVE] = 1;
		runs[2 - i] = &r[i];
	}
	site_format_experiment("m", runs, 3, &html);
	assert_golden("tests/data/site/mean.html", html.buf);
	assert_captions_above(html.buf);
	assert_no_e_notation(html.buf);
	assert_non_null(strstr(html.buf, "the compared kernel&apos;s mean"));
	assert_non_null(strstr(html.buf, ">15k</text>"));
	assert_non_null(strstr(html.buf, ">25k</text>"));
	assert_non_null(strstr(html.buf, "p (w): 15.20k inconclusive</title>"));
	strbuf_release(&html);
	for (size_t i = 0; i < 3; i++)
		site_run_release(&r[i]);
}

/* A run whose environments differ: listed, no verdicts, no points. */
static void test_unjudged(void **state)
{
	struct result_set *rs = stored("20261201-090000-aaaa", "e", "p", 1.2);
	struct comparison *c = compare_build(rs);
	struct site_run r;

	(void)state;
	site_run_from(c, false, &r);
	assert_int_equal(r.npts, 0);
	for (size_t v = 0; v < VERDICT_COUNT; v++)
		assert_int_equal(r.verdicts[v], 0);
	assert_int_equal(r.ok, 8);
	assert_int_equal(r.variants.n, 2);
	site_run_release(&r);
	comparison_free(c);
	result_set_free(rs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_name),
		cmocka_unit_test(test_manifest),
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_date),
		cmocka_unit_test(test_pages_golden),
		cmocka_unit_test(test_mean_chart),
		cmocka_unit_test(test_unjudged),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
