/* SPDX-License-Identifier: MIT */
/* The verdict of a reproduction (result/reproduction.h): each rule item by
 * item (reproduced, opposite verdicts, intervals apart, undecided on either
 * side, not measured, a check that holds against one that fails), the A/A
 * part (a kernel's level that moved, an environment that makes it not
 * comparable, the text's cap), nothing to judge, and the goldens of a
 * mixed case in text, JSON and HTML. */
#include <math.h>
#include "unit.h"
#include "result/compare.h"
#include "result/report.h"
#include "result/reproduction.h"
#include "result/result.h"
#include "util/alloc.h"
#include "util/strbuf.h"
#include "util/xml.h"

#define ORIG_ID "20261203-101500-ab12"
#define REPRO_ID "20261204-090000-cd34"

/* A metric of a run: the baseline's level, the other kernel's change, the jitter. */
struct mspec {
	const char *name;
	double level;  /* base's */
	double effect; /* new against base, a fraction */
	double noise;  /* the runs' jitter, a fraction of the level */
};

/* Kernels base and new, group "w", six boots of one run each a side
 * (the same jitter on both), all on one host. */
static struct result_set *run_of(const char *id, const char *host, const char *cpu, const struct mspec *m, size_t n)
{
	static const double jitter[] = { 0.2, -0.3, 0.1, 0.4, -0.1, 0.3 };
	struct result_set *rs = result_set_new(id, "repro");
	struct fingerprint fp = { 0 };
	int k;

	fingerprint_set(&fp, FP_HOST, host);
	fingerprint_set(&fp, FP_CPU_MODEL, cpu);
	fingerprint_set(&fp, FP_CPUS, "2");
	fingerprint_set(&fp, FP_QEMU, "7.2.13");
	fingerprint_set(&fp, FP_ACCEL, "tcg");
	k = result_add_fingerprint(rs, &fp);
	fingerprint_release(&fp);
	for (unsigned rep = 0; rep < 6; rep++)
		for (unsigned v = 0; v < 2; v++) {
			_cleanup_free_ char *rid = xasprintf("repro.%04u", rep * 2 + v + 1);
			_cleanup_free_ char *boot = xasprintf("repro.b%u", rep * 2 + v + 1);
			struct result_run *r = result_add_run(rs, rid, v ? "new" : "base", "w", 0, rep + 1);

			r->status = RUN_OK;
			r->boot = xstrdup(boot);
			r->boot_pos = 1;
			r->fp = k;
			for (size_t i = 0; i < n; i++)
				result_add_metric(r, m[i].name,
						  m[i].level * (1 + m[i].noise * jitter[rep]) * (v ? 1 + m[i].effect : 1));
		}
	return rs;
}

static void observe_new(struct result_set *rs, const char *metric, enum observe_rel rel)
{
	struct strv k = STRV_INIT;

	strv_push(&k, "new");
	result_add_observe(rs, metric, rel, 0, &k, NULL);
	strv_release(&k);
}

/* The two runs, compared and judged. */
struct pair {
	struct result_set *o, *r;
	struct comparison *co, *cr;
	struct reproduction *rep;
};

static void pair_build(struct pair *p, struct result_set *o, struct result_set *r)
{
	p->o = o;
	p->r = r;
	p->co = compare_build(o);
	p->cr = compare_build(r);
	p->rep = reproduction_build(o, p->co, r, p->cr);
}

static void pair_release(struct pair *p)
{
	reproduction_free(p->rep);
	comparison_free(p->co);
	comparison_free(p->cr);
	result_set_free(p->o);
	result_set_free(p->r);
}

static const struct repro_expectation *expectation(const struct reproduction *r, const char *metric)
{
	for (size_t i = 0; i < r->nexpectations; i++)
		if (streq(r->expectations[i].orig->metric, metric))
			return &r->expectations[i];
	fail_msg("no expectation of %s", metric);
	return NULL;
}

static const struct repro_check *check(const struct reproduction *r, const char *metric)
{
	for (size_t i = 0; i < r->nchecks; i++)
		if (streq(r->checks[i].orig->o->metric, metric))
			return &r->checks[i];
	fail_msg("no check of %s", metric);
	return NULL;
}

static const struct repro_moved *moved(const struct reproduction *r, const char *variant, const char *metric)
{
	for (size_t i = 0; i < r->nmoved; i++)
		if (streq(r->moved[i].variant, variant) && streq(r->moved[i].metric, metric))
			return &r->moved[i];
	return NULL;
}

static void assert_counts(const struct reproduction *r, size_t yes, size_t no, size_t unsure)
{
	assert_int_equal(r->counts[REPRO_REPRODUCED], yes);
	assert_int_equal(r->counts[REPRO_NOT_REPRODUCED], no);
	assert_int_equal(r->counts[REPRO_INCONCLUSIVE], unsure);
}

static void test_state_names(void **state)
{
	(void)state;
	assert_string_equal(repro_state_name(REPRO_REPRODUCED), "reproduced");
	assert_string_equal(repro_state_name(REPRO_NOT_REPRODUCED), "not reproduced");
	assert_string_equal(repro_state_name(REPRO_INCONCLUSIVE), "inconclusive");
}

/* The same figures on another host of the same CPU: everything reproduced, no level moved. */
static void test_all_reproduced(void **state)
{
	static const struct mspec m[] = {
		{ "w.tps", 1000, 0.20, 0.01 },
		{ "w.lat_ms", 10, 0, 0.01 },
		{ "w.hits", 50, 1.0, 0.01 },
	};
	struct result_set *sets[2];
	struct pair p;
	struct strbuf t = STRBUF_INIT;

	(void)state;
	for (int i = 0; i < 2; i++) {
		sets[i] = run_of(i ? REPRO_ID : ORIG_ID, i ? "hostB" : "hostA", "AMD EPYC 7B13", m, ELEMENTSOF(m));
		result_add_expect(sets[i], 0, "w.tps", DIR_INCREASE, 0.05, true);
		result_add_expect(sets[i], 0, "w.lat_ms", DIR_UNCHANGED, 0.05, true);
		observe_new(sets[i], "w.hits", OBS_HIGHER);
	}
	pair_build(&p, sets[0], sets[1]);
	assert_int_equal(p.rep->nexpectations, 2);
	assert_int_equal(expectation(p.rep, "w.tps")->orig->v, VERDICT_IMPROVED);
	assert_int_equal(expectation(p.rep, "w.tps")->state, REPRO_REPRODUCED);
	assert_int_equal(expectation(p.rep, "w.lat_ms")->orig->v, VERDICT_UNCHANGED);
	assert_int_equal(expectation(p.rep, "w.lat_ms")->state, REPRO_REPRODUCED);
	assert_int_equal(check(p.rep, "w.hits")->state, REPRO_REPRODUCED);
	assert_string_equal(check(p.rep, "w.hits")->why, "holds in both runs");
	assert_counts(p.rep, 3, 0, 0);
	assert_int_equal(p.rep->verdict, REPRO_REPRODUCED);
	assert_null(p.rep->why);
	/* the same levels: nothing moved; another host is noted, not a reason to refuse */
	assert_int_equal(p.rep->nmoved, 0);
	assert_int_equal(p.rep->nuncomparable, 0);
	assert_int_equal(p.rep->nenv, 1);
	assert_int_equal(p.rep->env[0].field, FP_HOST);
	assert_false(p.rep->env[0].matters);
	reproduction_format_text(p.rep, &t);
	assert_true(str_startswith(t.buf, "reproduction of " ORIG_ID " by " REPRO_ID
					  ": reproduced (3 reproduced, 0 not reproduced, 0 inconclusive)\n"));
	strbuf_release(&t);
	pair_release(&p);
}

/*
 * The mixed case: one expectation of each kind, two checks, and the
 * reproduction's levels moved (w.level by +30% on both kernels).
 *   w.tps     +20% and +20%                         reproduced
 *   w.lat_ms  unchanged and unchanged               reproduced
 *   w.rate    +10% improved, -10% regressed         not reproduced
 *   w.ops     -50% and -5%, both improved           not reproduced (intervals apart)
 *   w.noisy   +20%, then noise of +-40%             inconclusive (the reproduction)
 *   w.extra   declared in the original only         inconclusive (not measured)
 *   w.flag    > 0 holds, then FAILS                 not reproduced
 *   w.hits    higher than base in both              reproduced
 */
static void mixed(struct pair *p, bool swap)
{
	static const struct mspec mo[] = {
		{ "w.tps", 1000, 0.20, 0.01 },	{ "w.lat_ms", 10, 0, 0.01 },  { "w.rate", 500, 0.10, 0.01 },
		{ "w.ops", 2000, -0.50, 0.01 }, { "w.noisy", 100, 0.20, 0.01 }, { "w.extra", 70, 0.30, 0.01 },
		{ "w.flag", 1, 1.0, 0.5 },	{ "w.hits", 50, 1.0, 0.01 },  { "w.level", 100, 0, 0.01 },
	};
	static const struct mspec mr[] = {
		{ "w.tps", 1000, 0.20, 0.01 },	{ "w.lat_ms", 10, 0, 0.01 },   { "w.rate", 500, -0.10, 0.01 },
		{ "w.ops", 2000, -0.05, 0.01 }, { "w.noisy", 100, 0.20, 1.0 }, { "w.extra", 70, 0.30, 0.01 },
		{ "w.flag", 0, 0, 0 },		{ "w.hits", 50, 1.0, 0.01 },   { "w.level", 130, 0, 0.01 },
	};
	struct result_set *sets[2];

	for (int i = 0; i < 2; i++) {
		const struct mspec *m = i ? mr : mo;

		sets[i] = run_of(i ? REPRO_ID : ORIG_ID, i ? "hostB" : "hostA", "AMD EPYC 7B13", m, ELEMENTSOF(mo));
		result_add_expect(sets[i], 0, "w.tps", DIR_INCREASE, 0.05, true);
		result_add_expect(sets[i], 0, "w.lat_ms", DIR_UNCHANGED, 0.05, true);
		result_add_expect(sets[i], 0, "w.rate", DIR_INCREASE, 0, false);
		result_add_expect(sets[i], 0, "w.ops", DIR_DECREASE, 0, false);
		result_add_expect(sets[i], 0, "w.noisy", DIR_INCREASE, 0, false);
		if (!i)
			result_add_expect(sets[i], 0, "w.extra", DIR_INCREASE, 0, false);
		observe_new(sets[i], "w.flag", OBS_GT);
		observe_new(sets[i], "w.hits", OBS_HIGHER);
	}
	if (swap)
		pair_build(p, sets[1], sets[0]);
	else
		pair_build(p, sets[0], sets[1]);
}

static void test_mixed_rules(void **state)
{
	struct pair p;
	const struct repro_expectation *e;
	const struct repro_moved *mv;

	(void)state;
	mixed(&p, false);
	assert_int_equal(p.rep->nexpectations, 6);
	e = expectation(p.rep, "w.tps");
	assert_int_equal(e->state, REPRO_REPRODUCED);
	assert_string_equal(e->why, "the same verdict, and the effects' intervals overlap");
	assert_int_equal(expectation(p.rep, "w.lat_ms")->state, REPRO_REPRODUCED);
	/* a decided opposite verdict */
	e = expectation(p.rep, "w.rate");
	assert_int_equal(e->orig->v, VERDICT_IMPROVED);
	assert_int_equal(e->repro->v, VERDICT_REGRESSED);
	assert_int_equal(e->state, REPRO_NOT_REPRODUCED);
	assert_string_equal(e->why, "the verdicts differ: improved vs regressed");
	/* the same verdict, intervals apart: the figures are said */
	e = expectation(p.rep, "w.ops");
	assert_int_equal(e->orig->v, VERDICT_IMPROVED);
	assert_int_equal(e->repro->v, VERDICT_IMPROVED);
	assert_true(e->orig->d->e.hi < e->repro->d->e.lo);
	assert_int_equal(e->state, REPRO_NOT_REPRODUCED);
	assert_true(str_startswith(e->why, "the same verdict, but the effects' intervals do not overlap: -50.0% ["));
	assert_non_null(strstr(e->why, "%] vs -5.0% ["));
	/* the reproduction could not decide, and says why */
	e = expectation(p.rep, "w.noisy");
	assert_int_equal(e->orig->v, VERDICT_IMPROVED);
	assert_int_equal(e->repro->v, VERDICT_INCONCLUSIVE);
	assert_int_equal(e->state, REPRO_INCONCLUSIVE);
	assert_true(str_startswith(e->why, "the reproduction could not decide ("));
	/* declared in the original only */
	e = expectation(p.rep, "w.extra");
	assert_null(e->repro);
	assert_int_equal(e->state, REPRO_INCONCLUSIVE);
	assert_string_equal(e->why, "not measured in the reproduction");
	/* a mechanism check that held and then failed */
	assert_int_equal(check(p.rep, "w.flag")->orig->state, OBS_HOLDS);
	assert_int_equal(check(p.rep, "w.flag")->repro->state, OBS_FAILS);
	assert_int_equal(check(p.rep, "w.flag")->state, REPRO_NOT_REPRODUCED);
	assert_string_equal(check(p.rep, "w.flag")->why, "holds in the original, FAILS in the reproduction");
	assert_int_equal(check(p.rep, "w.hits")->state, REPRO_REPRODUCED);
	assert_counts(p.rep, 3, 3, 2);
	assert_int_equal(p.rep->verdict, REPRO_NOT_REPRODUCED);
	/* A/A: w.level moved +30% on each kernel, measured alike (another host is noted only) */
	assert_int_equal(p.rep->nuncomparable, 0);
	for (int k = 0; k < 2; k++) {
		mv = moved(p.rep, k ? "new" : "base", "w.level");
		assert_non_null(mv);
		assert_true(fabs(mv->d->e.change - 30) < 0.5);
		assert_true(mv->d->e.lo > 0);
		assert_int_equal(mv->orig->n, 6);
		assert_true(fabs(mv->orig->mean - 100) < 1);
		assert_true(fabs(mv->repro->mean - 130) < 1);
	}
	/* unchanged levels are not listed */
	assert_null(moved(p.rep, "base", "w.tps"));
	assert_null(moved(p.rep, "new", "w.tps"));
	/* largest first */
	for (size_t i = 1; i < p.rep->nmoved; i++)
		assert_true(fabs(p.rep->moved[i - 1].d->e.change) >= fabs(p.rep->moved[i].d->e.change));
	pair_release(&p);
}

/* The roles swapped: the original could not decide; the check failed first. */
static void test_original_undecided(void **state)
{
	struct pair p;

	(void)state;
	mixed(&p, true);
	assert_int_equal(expectation(p.rep, "w.noisy")->state, REPRO_INCONCLUSIVE);
	assert_true(str_startswith(expectation(p.rep, "w.noisy")->why, "the original did not decide ("));
	assert_int_equal(expectation(p.rep, "w.rate")->state, REPRO_NOT_REPRODUCED);
	assert_string_equal(expectation(p.rep, "w.rate")->why, "the verdicts differ: regressed vs improved");
	assert_string_equal(check(p.rep, "w.flag")->why, "FAILS in the original, holds in the reproduction");
	/* the original has no w.extra expectation: not judged */
	assert_int_equal(p.rep->nexpectations, 5);
	assert_int_equal(p.rep->verdict, REPRO_NOT_REPRODUCED);
	pair_release(&p);
}

static void test_mixed_goldens(void **state)
{
	struct pair p;
	struct strbuf t = STRBUF_INIT, j = STRBUF_INIT, h = STRBUF_INIT;
	struct xml x;

	(void)state;
	mixed(&p, false);
	reproduction_format_text(p.rep, &t);
	assert_true(str_startswith(t.buf, "reproduction of " ORIG_ID " by " REPRO_ID
					  ": not reproduced (3 reproduced, 3 not reproduced, 2 inconclusive)\n"));
	assert_golden("tests/data/reproduction/mixed.txt", t.buf);
	reproduction_format_json(p.rep, &j);
	assert_golden("tests/data/reproduction/mixed.json", j.buf);
	xml_init(&x, &h);
	reproduction_format_html_section(p.rep, &x);
	assert_int_equal(x.depth, 0);
	assert_golden("tests/data/reproduction/mixed.html", h.buf);
	pair_release(&p);
	strbuf_release(&t);
	strbuf_release(&j);
	strbuf_release(&h);
}

/* Another CPU model: the A/A part cannot compare, says why once per kernel, and names the difference. */
static void test_environment_differs(void **state)
{
	static const struct mspec m[] = { { "w.tps", 1000, 0.20, 0.01 }, { "w.level", 100, 0, 0.01 } };
	struct result_set *o = run_of(ORIG_ID, "hostA", "AMD EPYC 7B13", m, ELEMENTSOF(m));
	struct result_set *r = run_of(REPRO_ID, "hostB", "Intel Xeon Gold 6338", m, ELEMENTSOF(m));
	struct pair p;
	struct strbuf t = STRBUF_INIT, j = STRBUF_INIT;
	bool cpu = false;

	(void)state;
	result_add_expect(o, 0, "w.tps", DIR_INCREASE, 0.05, true);
	result_add_expect(r, 0, "w.tps", DIR_INCREASE, 0.05, true);
	pair_build(&p, o, r);
	assert_int_equal(p.rep->verdict, REPRO_REPRODUCED);
	assert_int_equal(p.rep->nmoved, 0);
	assert_int_equal(p.rep->nuncomparable, 2);
	for (size_t i = 0; i < p.rep->nuncomparable; i++) {
		assert_string_equal(p.rep->uncomparable[i].group, "w");
		assert_string_equal(p.rep->uncomparable[i].why, "cpu model differs");
	}
	/* each difference once, though both kernels' environments differ the same way */
	assert_int_equal(p.rep->nenv, 2);
	for (size_t i = 0; i < p.rep->nenv; i++)
		if (p.rep->env[i].field == FP_CPU_MODEL) {
			cpu = true;
			assert_true(p.rep->env[i].matters);
			assert_string_equal(p.rep->env[i].a, "AMD EPYC 7B13");
			assert_string_equal(p.rep->env[i].b, "Intel Xeon Gold 6338");
		}
	assert_true(cpu);
	reproduction_format_text(p.rep, &t);
	assert_non_null(strstr(t.buf, "environments differ: cpu model 'AMD EPYC 7B13' / 'Intel Xeon Gold 6338'"));
	assert_non_null(strstr(t.buf, "base [w]: not comparable: cpu model differs\n"));
	assert_non_null(strstr(t.buf, "new [w]: not comparable: cpu model differs\n"));
	reproduction_format_json(p.rep, &j);
	assert_non_null(strstr(j.buf, "\"field\": \"cpu_model\""));
	assert_non_null(strstr(j.buf, "\"why\": \"cpu model differs\""));
	strbuf_release(&t);
	strbuf_release(&j);
	pair_release(&p);
}

/* Noise of +-40% on both runs: neither decides, and a reproduction of nothing decided is not claimed. */
static void test_neither_decided(void **state)
{
	static const struct mspec m[] = { { "w.noisy", 100, 0.20, 1.0 } };
	struct result_set *sets[2];
	struct pair p;

	(void)state;
	for (int i = 0; i < 2; i++) {
		sets[i] = run_of(i ? REPRO_ID : ORIG_ID, "hostA", "AMD EPYC 7B13", m, ELEMENTSOF(m));
		result_add_expect(sets[i], 0, "w.noisy", DIR_INCREASE, 0, false);
	}
	pair_build(&p, sets[0], sets[1]);
	assert_int_equal(expectation(p.rep, "w.noisy")->state, REPRO_INCONCLUSIVE);
	assert_string_equal(expectation(p.rep, "w.noisy")->why, "neither run decided");
	assert_counts(p.rep, 0, 0, 1);
	assert_int_equal(p.rep->verdict, REPRO_INCONCLUSIVE);
	assert_null(p.rep->why);
	pair_release(&p);
}

/* Many levels moved: the text shows the largest REPRO_TEXT_MOVED, the JSON every one. */
static void test_moved_cap(void **state)
{
	struct mspec mo[25], mr[25];
	char names[25][16];
	struct pair p;
	struct strbuf t = STRBUF_INIT, j = STRBUF_INIT;
	size_t rows = 0;

	(void)state;
	for (int i = 0; i < 25; i++) {
		snprintf(names[i], sizeof(names[i]), "w.m%02d", i);
		mo[i] = (struct mspec){ names[i], 100, 0, 0.01 };
		mr[i] = (struct mspec){ names[i], 110 + i, 0, 0.01 };
	}
	pair_build(&p, run_of(ORIG_ID, "hostA", "AMD EPYC 7B13", mo, 25),
		   run_of(REPRO_ID, "hostA", "AMD EPYC 7B13", mr, 25));
	/* nothing to judge */
	assert_int_equal(p.rep->verdict, REPRO_INCONCLUSIVE);
	assert_non_null(p.rep->why);
	assert_counts(p.rep, 0, 0, 0);
	assert_int_equal(p.rep->nenv, 0);
	assert_int_equal(p.rep->nmoved, 50);
	assert_string_equal(p.rep->moved[0].metric, "w.m24");
	reproduction_format_text(p.rep, &t);
	assert_non_null(strstr(t.buf, ": inconclusive (0 reproduced, 0 not reproduced, 0 inconclusive)\n  nothing to judge"));
	for (const char *s = t.buf; (s = strstr(s, "\nbase ")); s++)
		rows++;
	for (const char *s = t.buf; (s = strstr(s, "\nnew ")); s++)
		rows++;
	assert_int_equal(rows, REPRO_TEXT_MOVED);
	assert_non_null(strstr(t.buf, "... and 30 more, smaller (the JSON lists every one)\n"));
	reproduction_format_json(p.rep, &j);
	rows = 0;
	for (const char *s = j.buf; (s = strstr(s, "\"metric\": \"w.m")); s++)
		rows++;
	assert_int_equal(rows, 50);
	strbuf_release(&t);
	strbuf_release(&j);
	pair_release(&p);
}

/* lab report of a reproduction: its verdict right after the headline in
 * every format, the Markdown one an indented block a stored name cannot
 * close; without one, none of it. */
static void test_in_report(void **state)
{
	static const struct mspec m[] = { { "w.tps", 1000, 0.20, 0.01 } };
	struct result_set *sets[2];
	struct pair p;
	_cleanup_strbuf_ struct strbuf t = STRBUF_INIT, md = STRBUF_INIT, js = STRBUF_INIT, html = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf plain = STRBUF_INIT;
	struct report_opts ro = { 0 };
	struct report_part part;
	const char *line = "reproduction of " ORIG_ID " by " REPRO_ID ": reproduced";

	(void)state;
	for (int i = 0; i < 2; i++) {
		sets[i] = run_of(i ? REPRO_ID : ORIG_ID, "hostA", "AMD EPYC 7B13", m, ELEMENTSOF(m));
		result_add_expect(sets[i], 0, "w.tps", DIR_INCREASE, 0.05, true);
	}
	pair_build(&p, sets[0], sets[1]);
	report_format_text(p.cr, &ro, &plain);
	assert_null(strstr(plain.buf, "reproduction of"));
	reproduction_report_part(p.rep, &part);
	ro.part = &part;
	report_format_text(p.cr, &ro, &t);
	assert_non_null(strstr(t.buf, line));
	/* after the headline, before the per-metric tables */
	assert_true(strstr(t.buf, "Headline") < strstr(t.buf, line) && strstr(t.buf, line) < strstr(t.buf, "new against base"));
	report_format_md(p.cr, &ro, &md);
	assert_non_null(strstr(md.buf, "## Reproduction\n\n    reproduction of " ORIG_ID));
	assert_null(strstr(md.buf, "```\nreproduction of"));
	report_format_json(p.cr, &ro, &js);
	assert_non_null(strstr(js.buf, "\"reproduction\": {"));
	assert_non_null(strstr(js.buf, "\"original\": \"" ORIG_ID "\""));
	report_format_html(p.cr, &ro, &html);
	assert_non_null(strstr(html.buf, "<section class='reproduction'>"));
	pair_release(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_state_names),	    cmocka_unit_test(test_all_reproduced),
		cmocka_unit_test(test_mixed_rules),	    cmocka_unit_test(test_original_undecided),
		cmocka_unit_test(test_mixed_goldens),	    cmocka_unit_test(test_environment_differs),
		cmocka_unit_test(test_neither_decided),	    cmocka_unit_test(test_moved_cap),
		cmocka_unit_test(test_in_report),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
