/* SPDX-License-Identifier: MIT */
/* Statistics against reference values (R's t.test), verdicts on built
 * result sets, and the report formatters against golden files. */
#include <math.h>
#include "unit.h"
#include "util/alloc.h"
#include "result/attrib.h"
#include "result/calibrate.h"
#include "result/compare.h"
#include "result/report.h"
#include "result/result.h"
#include "result/stats.h"
#include "util/strbuf.h"
#include "util/strmap.h"

#define near(a, b, eps) assert_true(fabs((a) - (b)) <= (eps))

static void test_describe(void **state)
{
	const double v[] = { 5, 1, 4, 2, 3 };
	struct sample_stats s;

	(void)state;
	stats_describe(v, 5, &s);
	assert_int_equal(s.n, 5);
	near(s.mean, 3, 1e-12);
	near(s.stddev, 1.5811388, 1e-6);
	near(s.rsd_pct, 52.704627, 1e-5);
	near(s.min, 1, 0);
	near(s.median, 3, 0);
	near(s.max, 5, 0);
	stats_describe(v, 4, &s); /* 5 1 4 2: even count */
	near(s.median, 3, 1e-12);
	stats_describe(v, 0, &s);
	assert_int_equal(s.n, 0);
	near(s.stddev, 0, 0);
}

static void test_welch_reference(void **state)
{
	/* R: t.test(c(2,4,6,8,10), c(1,2,3,4,5)): t = 1.8974, df = 5.8824,
	 * p-value = 0.1075, 95 percent CI -0.8878 6.8878 */
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 2, 4, 6, 8, 10 };
	struct sample_stats sa, sb;
	struct welch w;

	(void)state;
	stats_describe(a, 5, &sa);
	stats_describe(b, 5, &sb);
	stats_welch(&sa, &sb, 0.95, &w);
	assert_true(w.ok);
	near(w.diff, 3, 1e-12);
	near(w.t, 1.8974, 1e-4);
	near(w.df, 5.8824, 1e-4);
	near(w.p, 0.1075, 1e-4);
	near(w.lo, -0.8878, 1e-4);
	near(w.hi, 6.8878, 1e-4);
	assert_true(w.mde > w.hi - w.diff); /* needs more than the half-width */
	assert_false(stats_ranges_separate(&sa, &sb));
}

static void test_welch_edges(void **state)
{
	const double a[] = { 10, 10, 10 }, b[] = { 12, 12, 12 }, c[] = { 11 };
	struct sample_stats sa, sb, sc;
	struct welch w;

	(void)state;
	stats_describe(a, 3, &sa);
	stats_describe(b, 3, &sb);
	stats_describe(c, 1, &sc);
	stats_welch(&sa, &sb, 0.95, &w);
	assert_true(w.ok);
	near(w.p, 0, 0);
	near(w.lo, 2, 0);
	assert_true(stats_ranges_separate(&sa, &sb));
	stats_welch(&sa, &sc, 0.95, &w);
	assert_false(w.ok); /* one value: no test */
}

static void test_strmap(void **state)
{
	struct strmap m = STRMAP_INIT;
	char keys[200][16];
	size_t v;

	(void)state;
	for (size_t i = 0; i < 200; i++) {
		snprintf(keys[i], sizeof(keys[i]), "metric.%zu", i);
		strmap_put(&m, keys[i], i);
	}
	strmap_put(&m, keys[7], 700);
	assert_int_equal(m.n, 200);
	for (size_t i = 0; i < 200; i++) {
		assert_true(strmap_get(&m, keys[i], &v));
		assert_int_equal(v, i == 7 ? 700 : i);
	}
	assert_false(strmap_get(&m, "metric.200", &v));
	strmap_release(&m);
}

/* A tg-ratelimit-like result: tps up ~20% with low noise, a noisy metric,
 * a perf-profile share, one failed run, and a second group with 2 runs a side. */
static struct result_set *fixture(void)
{
	struct result_set *rs = result_set_new("20261130-101500-ab12", "tg-load-avg");
	const double base_tps[] = { 21.9, 22.4, 21.6, 22.1, 22.0 };
	const double new_tps[] = { 26.4, 26.9, 26.1, 26.7, 26.5 };
	const double base_noise[] = { 10, 30, 18, 9, 25 };
	const double new_noise[] = { 12, 29, 11, 27, 19 };
	const double base_ucg[] = { 30.8, 29.9, 31.2, 30.5, 30.1 };
	const double new_ucg[] = { 1.0, 1.2, 0.9, 1.1, 1.0 };
	char id[64];
	int seq = 0;

	for (int rep = 0; rep < 5; rep++) {
		for (int v = 0; v < 2; v++) {
			struct result_run *r;

			snprintf(id, sizeof(id), "tg-load-avg.%04d", ++seq);
			r = result_add_run(rs, id, v ? "tg-ratelimit" : "base", "pg-sysbench threads=100%", 0, rep + 1);
			if (v == 1 && rep == 4) {
				r->status = RUN_FAILED;
				r->error = strdup("timeout after 30m in step run (console tail in the run folder)");
				continue;
			}
			r->status = RUN_OK;
			r->release = strdup(v ? "6.1.192-lab-tg-ratelimit-1" : "6.1.192-lab-base-1");
			result_add_metric(r, "sysbench.tps", v ? new_tps[rep] : base_tps[rep]);
			result_add_metric(r, "sysbench.latency_p95_ms", v ? new_noise[rep] : base_noise[rep]);
			result_add_metric(r, "perf-profile.self.cycles-pp.update_cfs_group", v ? new_ucg[rep] : base_ucg[rep]);
		}
	}
	for (int rep = 0; rep < 2; rep++) {
		for (int v = 0; v < 2; v++) {
			struct result_run *r;

			snprintf(id, sizeof(id), "tg-load-avg.%04d", ++seq);
			r = result_add_run(rs, id, v ? "tg-ratelimit" : "base", "pg-sysbench threads=75%", 1, rep + 1);
			r->status = RUN_OK;
			result_add_metric(r, "sysbench.tps", 20 + rep + v);
		}
	}
	strv_push(&rs->mechanism, "kernel base: release 6.1.192-lab-base-1, build 45c3395617c4dde5; CONFIG_FAIR_GROUP_SCHED=y ok");
	strv_push(&rs->mechanism, "kernel tg-ratelimit: release 6.1.192-lab-tg-ratelimit-1, build 0123456789abcdef; CONFIG_FAIR_GROUP_SCHED=y ok");
	result_add_expect(rs, 0, "sysbench.tps", DIR_INCREASE, 0.02, true);
	result_add_expect(rs, 0, "sysbench.latency_p95_ms", DIR_UNCHANGED, 0.05, true);
	result_add_expect(rs, 0, "perf-profile.self.cycles-pp.update_cfs_group", DIR_DECREASE, 0, false);
	result_add_expect(rs, 1, "sysbench.tps", DIR_INCREASE, 0.02, true);
	result_add_expect(rs, 0, "sysbench.qps", DIR_INCREASE, 0, false);
	result_add_expect(rs, 0, "perf-profile.self.cycles-pp.update_tg_load_avg", DIR_DECREASE, 0, false);
	return rs;
}

/* A job with a matrix (stress-ng stressor: [switch, sem]) expects each stressor's
 * metric: each group is judged on the metric it can produce, not on the other's. */
static void test_matrix_expectations(void **state)
{
	struct result_set *rs = result_set_new("20261130-101500-cd34", "tg-load-avg");
	const char *groups[] = { "stress-ng stressor=switch", "stress-ng stressor=sem" };
	const char *metrics[] = { "stress-ng.switch.ops_per_sec", "stress-ng.sem.ops_per_sec" };
	struct comparison *c;
	char id[64];
	int seq = 0;

	(void)state;
	for (int g = 0; g < 2; g++)
		for (int rep = 0; rep < 3; rep++)
			for (int v = 0; v < 2; v++) {
				struct result_run *r;

				snprintf(id, sizeof(id), "tg-load-avg.%04d", ++seq);
				r = result_add_run(rs, id, v ? "tg-ratelimit" : "base", groups[g], 0, rep + 1);
				r->status = RUN_OK;
				result_add_metric(r, metrics[g], 1000 + 10 * rep + 300 * v);
			}
	result_add_expect(rs, 0, metrics[0], DIR_INCREASE, 0, false);
	result_add_expect(rs, 0, metrics[1], DIR_INCREASE, 0, false);
	result_add_expect(rs, 0, "stress-ng.nanosleep.ops_per_sec", DIR_INCREASE, 0, false);
	c = compare_build(rs);
	/* switch in its group, sem in its group, and nanosleep, which no group has, in both */
	assert_int_equal(c->nverdicts, 4);
	for (size_t i = 0; i < c->nverdicts; i++) {
		if (streq(c->verdicts[i].metric, "stress-ng.nanosleep.ops_per_sec")) {
			assert_int_equal(c->verdicts[i].v, VERDICT_INCONCLUSIVE);
			/* every run ended well: nothing was measured by that name, no failure to blame */
			assert_string_equal(c->verdicts[i].why, "no run of either kernel reported it, and none failed: "
								"the monitors measured nothing by that name here");
			continue;
		}
		assert_int_equal(c->verdicts[i].v, VERDICT_IMPROVED);
		assert_non_null(strstr(c->verdicts[i].group, streq(c->verdicts[i].metric, metrics[0]) ? "switch" : "sem"));
	}
	comparison_free(c);
	result_set_free(rs);
}

static void test_verdicts(void **state)
{
	struct result_set *rs = fixture();
	struct comparison *c = compare_build(rs);

	(void)state;
	assert_int_equal(c->ngroups, 2);
	assert_int_equal(c->nverdicts, 6);
	/* tps: +20% with n 5/4 */
	assert_string_equal(c->verdicts[0].metric, "sysbench.tps");
	assert_int_equal(c->verdicts[0].v, VERDICT_IMPROVED);
	assert_int_equal(c->verdicts[0].na, 5);
	assert_int_equal(c->verdicts[0].nb, 4);
	/* noisy latency: cannot say it stayed within 5% */
	assert_int_equal(c->verdicts[1].v, VERDICT_INCONCLUSIVE);
	/* a percentage share: decreased by ~29.6 points */
	assert_int_equal(c->verdicts[2].v, VERDICT_IMPROVED);
	assert_true(c->verdicts[2].d->e.points);
	near(c->verdicts[2].d->e.change, 1.05 - 30.5, 1e-9); /* the failed run has no value */
	/* a metric nobody measured */
	assert_int_equal(c->verdicts[3].v, VERDICT_INCONCLUSIVE);
	assert_string_equal(c->verdicts[3].why, "no run of either kernel reported it; runs failed: 0 of base, 1 of tg-ratelimit");
	/* a symbol no profile sampled: too rare here, not a failure */
	assert_string_equal(c->verdicts[4].metric, "perf-profile.self.cycles-pp.update_tg_load_avg");
	assert_int_equal(c->verdicts[4].v, VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(c->verdicts[4].why, "neither kernel's profile sampled this symbol: too rare here, or it "
						   "runs with interrupts off"));
	/* 2 runs a side */
	assert_int_equal(c->verdicts[5].v, VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(c->verdicts[5].why, "fewer than 3"));
	/* declared rows are judged at their own alpha: no q, never flagged */
	for (size_t i = 0; i < c->groups[0].nrows; i++) {
		assert_true(isnan(c->groups[0].rows[i].d[1].q));
		assert_false(c->groups[0].rows[i].flagged);
	}
	/* sorted by name when nothing is flagged: latency (noisy) between the profile row and tps */
	assert_string_equal(c->groups[0].rows[1].metric, "sysbench.latency_p95_ms");
	assert_true(c->groups[0].rows[1].noisy);
	assert_int_equal(c->groups[0].failed[1], 1);
	comparison_free(c);
	result_set_free(rs);
}

static void test_regressed_and_unchanged(void **state)
{
	struct result_set *rs = result_set_new("r", "e");
	struct comparison *c;
	char id[32];

	(void)state;
	for (int rep = 0; rep < 4; rep++)
		for (int v = 0; v < 2; v++) {
			struct result_run *r;

			snprintf(id, sizeof(id), "e.%d.%d", rep, v);
			r = result_add_run(rs, id, v ? "new" : "old", "w", 0, rep + 1);
			r->status = RUN_OK;
			result_add_metric(r, "a", (v ? 90 : 100) + rep * 0.1);
			result_add_metric(r, "b", 100 + (rep % 2 ? 0.2 : -0.2) + v * 0.05);
		}
	result_add_expect(rs, 0, "a", DIR_INCREASE, 0, false);
	result_add_expect(rs, 0, "b", DIR_UNCHANGED, 0.02, true);
	result_add_expect(rs, 0, "b", DIR_INCREASE, 0.05, true);
	/* a 10% fall against "unchanged within 5%": changed, not regressed */
	result_add_expect(rs, 0, "a", DIR_UNCHANGED, 0.05, true);
	c = compare_build(rs);
	assert_int_equal(c->verdicts[0].v, VERDICT_REGRESSED);
	assert_int_equal(c->verdicts[1].v, VERDICT_UNCHANGED);
	assert_int_equal(c->verdicts[2].v, VERDICT_UNCHANGED); /* the interval excludes +5% */
	assert_int_equal(c->verdicts[3].v, VERDICT_CHANGED);
	assert_string_equal(verdict_name(c->verdicts[3].v), "changed");
	{
		/* the headline says each verdict in its words, with the effect and its interval */
		struct strv h = STRV_INIT;

		report_headline(c, &h);
		assert_int_equal(h.n, 1);
		assert_true(str_startswith(h.v[0], "new: a -"));
		assert_non_null(strstr(h.v[0], "%] REGRESSED"));
		assert_non_null(strstr(h.v[0], "unchanged (within +-2%)"));
		assert_non_null(strstr(h.v[0], "unchanged (within +-5%)"));
		assert_non_null(strstr(h.v[0], "CHANGED (expected unchanged)"));
		assert_null(strstr(h.v[0], "inconclusive"));
		/* a metric in one group: no group named */
		assert_null(strstr(h.v[0], "[w]"));
		strv_release(&h);
	}
	comparison_free(c);
	result_set_free(rs);
}

/* Every declared expectation of a variant is in its headline: decided ones with
 * their figures, undecided ones named with why, unmeasured ones named. */
static void test_headline_names_every_expectation(void **state)
{
	struct result_set *rs = fixture();
	struct comparison *c = compare_build(rs);
	struct strv h = STRV_INIT;

	(void)state;
	report_headline(c, &h);
	assert_int_equal(h.n, c->nvariants - 1);
	for (size_t i = 0; i < c->nverdicts; i++)
		assert_non_null(strstr(h.v[0], c->verdicts[i].metric));
	assert_non_null(strstr(h.v[0], "sysbench.tps [pg-sysbench threads=100%] +20.6% [+18.0%, +23.2%] improved as expected"));
	assert_non_null(strstr(h.v[0], "inconclusive: sysbench.latency_p95_ms (could show"));
	assert_non_null(strstr(h.v[0], "(2 and 2 runs: fewer than 3 a side)"));
	assert_non_null(strstr(h.v[0], "not measured: sysbench.qps"));
	assert_true(str_endswith(h.v[0], "; 1 run failed"));
	strv_release(&h);
	comparison_free(c);
	result_set_free(rs);
}

static void test_parse_metrics(void **state)
{
	struct result_set *rs = result_set_new("r", "e");
	struct result_run *r = result_add_run(rs, "e.1", "v", "g", 0, 1);
	char *err = NULL;

	(void)state;
	assert_int_equal(result_parse_metrics(r, "a.b 1.5\nc -2e3\n\n", &err), 0);
	assert_int_equal(r->nm, 2);
	near(r->m[1].value, -2000, 0);
	assert_true(result_parse_metrics(r, "x 1\ny two\n", &err) < 0);
	assert_string_equal(err, "line 2: 'two' is not a finite number (metric y)");
	free(err);
	assert_true(result_parse_metrics(r, "z 1 2\n", &err) < 0);
	assert_string_equal(err, "line 1: not a 'metric value' line: 'z 1 2'");
	free(err);
	assert_true(result_parse_metrics(r, "n nan\n", &err) < 0);
	free(err);
	result_set_free(rs);
}

/* Mechanism checks against the baseline have three outcomes, decided with
 * boots as the unit, never by the runs' ranges: the tg-ratelimit
 * case (patched 760..1532 against base 1461..3908, ranges overlapping, the
 * patched kernel clearly lower) holds; the other way fails; truly equal
 * data fails "lower" with a declared margin (shown equivalent) and is
 * inconclusive without one; "same" holds within its margin. */
static void test_observe_three_outcomes(void **state)
{
	struct result_set *rs = result_set_new("20261206-080000-0b5e", "tg");
	static const double base[] = { 1461, 3908, 2100, 2500, 1800, 2900, 2300, 2050 };
	static const double tg[] = { 760, 1532, 1000, 1200, 900, 1400, 1100, 950 };
	static const double eq[] = { 100, 104, 97, 101, 99, 103, 98, 102 };
	static const struct {
		const char *metric;
		enum observe_rel rel;
		double margin;
		enum obs_state want;
	} cases[] = {
		{ "w.writes", OBS_LOWER, 0, OBS_HOLDS },
		{ "w.writes", OBS_HIGHER, 0, OBS_FAILS },
		{ "w.writes", OBS_DIFFERS, 0, OBS_HOLDS },
		{ "w.writes", OBS_SAME, 0.10, OBS_FAILS },
		{ "w.equal", OBS_LOWER, 0.10, OBS_FAILS },
		{ "w.equal", OBS_LOWER, 0, OBS_INCONCLUSIVE },
		{ "w.equal", OBS_DIFFERS, 0, OBS_INCONCLUSIVE },
		{ "w.equal", OBS_SAME, 0.10, OBS_HOLDS },
	};
	struct report_opts o = { .all = false };
	struct strbuf t = STRBUF_INIT;
	struct comparison *c;
	int seq = 0;

	(void)state;
	for (size_t b = 0; b < ELEMENTSOF(base); b++)
		for (int v = 0; v < 2; v++) {
			char id[32], boot[32];
			struct result_run *r;

			snprintf(id, sizeof(id), "tg.%04d", ++seq);
			snprintf(boot, sizeof(boot), "tg.b%d", seq);
			r = result_add_run(rs, id, v ? "tg-ratelimit" : "base", "hackbench", 0, (unsigned)b + 1);
			r->status = RUN_OK;
			r->boot = xstrdup(boot);
			result_add_metric(r, "w.writes", v ? tg[b] : base[b]);
			result_add_metric(r, "w.equal", eq[b]);
		}
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		result_add_observe(rs, cases[i].metric, cases[i].rel, 0, NULL, NULL);
		rs->observe[rs->nobserve - 1].margin = cases[i].margin;
	}
	c = compare_build(rs);
	assert_int_equal(c->nobs, ELEMENTSOF(cases));
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		const struct cmp_observation *x = &c->obs[i];

		if (x->state != cases[i].want)
			fail_msg("case %zu (%s %s): %s, want %s: %s", i, cases[i].metric, observe_rel_name(cases[i].rel),
				 obs_state_name(x->state), obs_state_name(cases[i].want), x->why ? x->why : "-");
		assert_true(x->decided);
		assert_int_equal(x->e.boots[0], 8);
		assert_int_equal(x->e.boots[1], 8);
	}
	/* the ranges overlap, and the robot's rule says so beside the verdict */
	assert_false(c->obs[0].apart);
	assert_true(c->obs[0].e.hi < 0);
	assert_non_null(strstr(c->obs[1].why, "the other way"));
	assert_non_null(strstr(c->obs[4].why, "within ±10%"));
	assert_non_null(strstr(c->obs[5].why, "smallest detectable change"));
	report_format_text(c, &o, &t);
	assert_non_null(strstr(t.buf, "  holds        tg-ratelimit w.writes lower than the baseline [hackbench]"));
	assert_non_null(strstr(t.buf, "  inconclusive tg-ratelimit w.equal lower than the baseline"));
	assert_non_null(strstr(t.buf, "ranges overlap"));
	strbuf_reset(&t);
	report_format_json(c, NULL, &t);
	assert_non_null(strstr(t.buf, "\"state\": \"inconclusive\""));
	assert_non_null(strstr(t.buf, "\"ranges_apart\": false"));
	strbuf_release(&t);
	comparison_free(c);
	result_set_free(rs);
}

/* pcp-auto like: base and three sweep steps, build time down, contention down;
 * the guests ran with timing: icount and counted instructions (insn), which
 * every report says. */
static void test_sweep_golden(void **state)
{
	struct result_set *rs = result_set_new("20261130-110000-5eep", "pcp-auto");
	const char *steps[] = { "base", "pcp-auto@1", "pcp-auto@3", "pcp-auto@7" };
	const double bt[] = { 100, 99.5, 99.4, 95.1 }, lc[] = { 14.0, 12.8, 12.6, 0.5 };
	struct report_opts o = { .all = false };
	struct strbuf t = STRBUF_INIT;
	struct comparison *c;
	char id[32];
	int seq = 0;

	(void)state;
	rs->icount = true;
	for (int rep = 0; rep < 3; rep++)
		for (int v = 0; v < 4; v++) {
			struct result_run *r;

			snprintf(id, sizeof(id), "pcp.%04d", ++seq);
			r = result_add_run(rs, id, steps[v], "kbuild instances=8", 0, rep + 1);
			r->status = RUN_OK;
			result_add_metric(r, "kbuild.time.total", bt[v] * 3 + rep * 0.2);
			result_add_metric(r, "perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath", lc[v] + rep * 0.1);
			/* pcp high moves from step 7 on */
			result_add_metric(r, "zoneinfo-pcp.high_spread_max", v == 3 ? 120 + rep : 0);
			result_add_metric(r, "insn.total", 3e9 - v * 1e7 + rep * 1e3);
		}
	result_add_expect(rs, 0, "kbuild.time.total", DIR_DECREASE, 0.02, true);
	{
		struct strv b = STRV_INIT, s7 = STRV_INIT, s3 = STRV_INIT, sweep = STRV_INIT;

		strv_push(&b, "base");
		strv_push(&s7, "pcp-auto@7");
		strv_push(&s3, "pcp-auto@3");
		strv_push(&sweep, "pcp-auto");
		result_add_observe(rs, "zoneinfo-pcp.high_spread_max", OBS_EQ, 0, &b, "pcp high stays fixed on the base");
		result_add_observe(rs, "zoneinfo-pcp.high_spread_max", OBS_GT, 0, &s7, "pcp high moves");
		result_add_observe(rs, "zoneinfo-pcp.high_spread_max", OBS_GT, 0, &s3, NULL);
		result_add_observe(rs, "perf-profile.self.cycles-pp.native_queued_spin_lock_slowpath", OBS_LOWER, 0, NULL,
				   "less zone lock spinning");
		result_add_observe(rs, "zoneinfo-pcp.high_spread_max", OBS_SAME, 0, &sweep, NULL);
		result_add_observe(rs, "meminfo.used_kb.max", OBS_GT, 0, &b, NULL);
		strv_release(&b);
		strv_release(&s7);
		strv_release(&s3);
		strv_release(&sweep);
	}
	c = compare_build(rs);
	{
		/* base ==0 holds; @7 >0 holds; @3 >0 fails; lower than the baseline
		 * holds for @1, @3, @7; "pcp-auto" names the three steps: same as the
		 * baseline holds for @1 and @3, fails for @7; no run has meminfo */
		static const enum obs_state want[] = { OBS_HOLDS, OBS_HOLDS, OBS_FAILS, OBS_HOLDS, OBS_HOLDS, OBS_HOLDS,
						       OBS_HOLDS, OBS_HOLDS, OBS_FAILS, OBS_MISSING };
		static const char *const var[] = { "base", "pcp-auto@7", "pcp-auto@3", "pcp-auto@1", "pcp-auto@3",
						   "pcp-auto@7", "pcp-auto@1", "pcp-auto@3", "pcp-auto@7", "base" };

		assert_int_equal(c->nobs, ELEMENTSOF(want));
		for (size_t i = 0; i < c->nobs; i++) {
			assert_int_equal(c->obs[i].state, want[i]);
			assert_string_equal(c->obs[i].variant, var[i]);
		}
		assert_null(c->obs[9].group);
		assert_int_equal(c->obs[1].s.n, 3);
		assert_true(c->obs[1].s.min == 120 && c->obs[1].s.max == 122);
	}
	report_format_text(c, &o, &t);
	assert_golden("tests/data/report/sweep.txt", t.buf);
	assert_non_null(strstr(t.buf, "Steps (base = 100.0"));
	assert_non_null(strstr(t.buf, "insn: guest instructions counted by lab's QEMU TCG plugin"));
	strbuf_reset(&t);
	report_format_md(c, &o, &t);
	assert_golden("tests/data/report/sweep.md", t.buf);
	strbuf_reset(&t);
	report_format_json(c, NULL, &t);
	assert_golden("tests/data/report/sweep.json", t.buf);
	strbuf_reset(&t);
	report_format_html(c, &o, &t);
	assert_non_null(strstr(t.buf, "<p>timing: icount: guest time counts instructions;"));
	assert_non_null(strstr(t.buf, "<p>insn: guest instructions counted by lab"));
	strbuf_release(&t);
	comparison_free(c);
	result_set_free(rs);
}


/*
 * A sweep over a series' prefixes (base, pcp@1, pcp@3, pcp@5; 3 boots of 2
 * runs each): the declared build time falls 6% between @3 and @5 only
 * (patches 4-5), lock waits fall at patch 1, a memory figure only wobbles.
 * Each format's section against its golden file; the subjects are the
 * stored run's (one with characters each format must escape).
 */
static struct result_set *attrib_fixture(void)
{
	struct result_set *rs = result_set_new("20261202-120000-a77b", "pcp-sweep");
	static const char *const chain[] = { "base", "pcp@1", "pcp@3", "pcp@5" };
	static const unsigned steps[] = { 0, 1, 3, 5 };
	static const double bt[] = { 100, 100, 100, 94 }, lock[] = { 50, 20, 20, 20 };
	static const double boot_off[] = { -0.3, 0.1, 0.2 }, run_off[] = { -0.1, 0.1 };
	static const char *const subjects[] = { "mm: add pcp high tuning framework", "mm/page_alloc: batch | *free*",
						"mm: scale batch by cpus", "mm: tune PCP high automatically",
						"mm: pcp: drop the \x1b[31mold\x1b[0m knob" };
	struct result_series *x;
	int seq = 0;

	for (size_t v = 0; v < ELEMENTSOF(chain); v++)
		strv_push(&rs->variants, chain[v]);
	for (unsigned b = 0; b < 3; b++)
		for (size_t v = 0; v < ELEMENTSOF(chain); v++)
			for (unsigned k = 0; k < 2; k++) {
				char id[32], boot[32];
				struct result_run *r;
				double noise = boot_off[(b + v) % 3] + run_off[k];

				snprintf(id, sizeof(id), "pcp.%04d", ++seq);
				snprintf(boot, sizeof(boot), "pcp.b%zu", b * ELEMENTSOF(chain) + v + 1);
				r = result_add_run(rs, id, chain[v], "kbuild jobs=100%", 0, b * 2 + k + 1);
				r->status = RUN_OK;
				r->boot = xstrdup(boot);
				result_add_metric(r, "kbuild.buildtime_per_iteration", bt[v] * (1 + noise / 100));
				result_add_metric(r, "lock.contention.rmqueue_bulk.wait_total_ns", lock[v] * (1 + noise / 50));
				result_add_metric(r, "meminfo.used_kb.max", 1000 + 3 * noise);
			}
	result_add_expect(rs, 0, "kbuild.buildtime_per_iteration", DIR_DECREASE, 0.02, true);
	x = result_add_series(rs, "pcp");
	for (size_t v = 0; v < ELEMENTSOF(chain); v++)
		result_series_add_step(x, chain[v], steps[v]);
	for (unsigned k = 0; k < ELEMENTSOF(subjects); k++)
		result_series_add_patch(x, k + 1, subjects[k]);
	return rs;
}

static void test_attrib_golden(void **state)
{
	struct result_set *rs = attrib_fixture();
	struct report_opts o = { .all = false };
	struct strbuf t = STRBUF_INIT;
	struct comparison *c = compare_build(rs);
	struct attribution *a = attrib_build(c, &rs->series[0]);
	const struct attrib_row *row = NULL;
	size_t step = 0;

	(void)state;
	assert_int_equal(a->nchain, 4);
	assert_int_equal(a->tests, 9);
	for (size_t r = 0; r < a->nrows; r++) {
		const struct attrib_row *x = &a->rows[r];

		if (streq(x->metric, "kbuild.buildtime_per_iteration")) {
			assert_true(x->declared && x->listed);
			near(x->mde, 2, 1e-12);
			assert_int_equal(x->steps[2].state, STEP_CHANGES);
			assert_int_equal(x->steps[2].mde, STEP_MDE_CLEARS);
			assert_int_equal(x->steps[0].state, STEP_UNCHANGED);
			assert_int_equal(x->steps[1].state, STEP_UNCHANGED);
		} else if (streq(x->metric, "meminfo.used_kb.max")) {
			/* exploratory and no step moves it: not listed */
			assert_false(x->listed);
			for (size_t s = 0; s < 3; s++)
				assert_int_not_equal(x->steps[s].state, STEP_CHANGES);
		} else {
			assert_true(x->listed);
			assert_int_equal(x->steps[0].state, STEP_CHANGES);
			/* no mde: a step it does not move stays undecided */
			assert_int_equal(x->steps[1].state, STEP_UNDECIDED);
		}
	}
	assert_false(attrib_undecided(a, &row, &step));
	attribution_free(a);
	report_format_text(c, &o, &t);
	assert_golden("tests/data/report/attrib.txt", t.buf);
	assert_non_null(strstr(t.buf, "kbuild.buildtime_per_iteration: -6.0% ["));
	assert_non_null(strstr(t.buf, "between @3 and @5 (q="));
	assert_null(strchr(t.buf, '\x1b'));
	strbuf_reset(&t);
	report_format_md(c, &o, &t);
	assert_golden("tests/data/report/attrib.md", t.buf);
	strbuf_reset(&t);
	report_format_json(c, NULL, &t);
	assert_golden("tests/data/report/attrib.json", t.buf);
	strbuf_reset(&t);
	report_format_html(c, &o, &t);
	assert_golden("tests/data/report/attrib.html", t.buf);
	strbuf_release(&t);
	comparison_free(c);
	result_set_free(rs);
}

/* A run without a series has no section: the reports are what they were. */
static void test_attrib_absent(void **state)
{
	struct result_set *rs = attrib_fixture();
	struct report_opts o = { .all = true };
	struct strbuf t = STRBUF_INIT;
	struct comparison *c;

	(void)state;
	/* a chain with one compared variant orders nothing */
	strv_release(&rs->series[0].chain);
	strv_push(&rs->series[0].chain, "base");
	strv_push(&rs->series[0].chain, "pcp@9");
	c = compare_build(rs);
	{
		_cleanup_attribution_ struct attribution *a = attrib_build(c, &rs->series[0]);

		assert_int_equal(a->nchain, 0);
	}
	report_format_text(c, &o, &t);
	report_format_md(c, &o, &t);
	report_format_json(c, NULL, &t);
	report_format_html(c, &o, &t);
	assert_null(strstr(t.buf, "ttribution"));
	strbuf_release(&t);
	comparison_free(c);
	result_set_free(rs);
}

static void test_report_goldens(void **state)
{
	struct result_set *rs = fixture();
	struct comparison *c = compare_build(rs);
	struct report_opts sig = { .all = false }, all = { .all = true };
	struct strbuf t = STRBUF_INIT, ta = STRBUF_INIT, md = STRBUF_INIT, js = STRBUF_INIT, html = STRBUF_INIT;

	(void)state;
	report_format_text(c, &sig, &t);
	report_format_text(c, &all, &ta);
	report_format_md(c, &all, &md);
	report_format_json(c, NULL, &js);
	report_format_html(c, &sig, &html);
	assert_golden("tests/data/report/tg.html", html.buf);
	/* the verdict's own words keep their p, as a power of ten */
	assert_non_null(strstr(html.buf, "(p=2.76×10⁻⁷)"));
	assert_null(strstr(html.buf, "e-0"));
	assert_golden("tests/data/report/tg.txt", t.buf);
	assert_golden("tests/data/report/tg-all.txt", ta.buf);
	assert_golden("tests/data/report/tg.md", md.buf);
	assert_golden("tests/data/report/tg.json", js.buf);
	strbuf_release(&t);
	strbuf_release(&ta);
	strbuf_release(&md);
	strbuf_release(&js);
	strbuf_release(&html);
	comparison_free(c);
	result_set_free(rs);
}

/*
 * lab calibrate --monitors: 4 boots, each with runs "with every monitor",
 * "without perf-profile" (10% faster: the monitor costs 9.1%) and "without
 * vmstat" (the same), interleaved as the plan makes them.
 */
static struct result_set *overhead_fixture(struct calib_run_tag **ret_tags)
{
	struct result_set *rs = result_set_new("20261202-093000-ca1b", "mon");
	static const char *const off[] = { NULL, "perf-profile", "vmstat" };
	static const double noise[] = { 0.4, -0.3, 0.1, -0.2, 0.3, 0.0, -0.4, 0.2 };
	struct calib_run_tag *tags = calloc(4 * 2 * 3, sizeof(*tags));
	char id[32], boot[32];
	int seq = 0;

	strv_push(&rs->variants, "base");
	for (int b = 0; b < 4; b++)
		for (int rep = 0; rep < 2; rep++)
			for (int k = 0; k < 3; k++) {
				double drift = b * 1.5 + noise[(b * 2 + rep + k) % 8];
				struct result_run *r;

				snprintf(id, sizeof(id), "mon.%04d", seq + 1);
				snprintf(boot, sizeof(boot), "mon.b%d", b + 1);
				r = result_add_run(rs, id, "base", k ? (k == 1 ? "hackbench without=perf-profile"
										 : "hackbench without=vmstat")
								    : "hackbench",
						   0, rep + 1);
				r->status = RUN_OK;
				r->boot = strdup(boot);
				result_add_metric(r, "hackbench.throughput", (k == 1 ? 110 : 100) + drift);
				if (k != 1)
					result_add_metric(r, "perf-profile.samples", 5000 + drift);
				tags[seq++] = (struct calib_run_tag){ "hackbench", off[k], 0 };
			}
	*ret_tags = tags;
	return rs;
}

static bool keep_workload(void *data, const struct result_run *r, const char *metric)
{
	(void)r;
	return !strcmp(metric, (const char *)data);
}

static void test_monitor_overheads(void **state)
{
	struct calib_run_tag *tags;
	struct result_set *rs = overhead_fixture(&tags);
	struct decide_params dp = DECIDE_PARAMS_DEFAULT;
	bool skip[24];
	struct calibration *c;
	const struct calib_overhead *pp, *vm;
	struct strbuf t = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < rs->n; i++)
		skip[i] = tags[i].monitor_off != NULL;
	c = calibrate_build(rs, skip, &dp, 2, 2);
	/* the A/A figures are the runs with every monitor only */
	assert_int_equal(c->n, 2);
	assert_string_equal(c->m[0].group, "hackbench");
	assert_int_equal(c->m[0].runs, 8);
	assert_null(calibration_find(c, "hackbench without=perf-profile", "hackbench.throughput"));
	calibrate_overheads(c, rs, tags, keep_workload, (void *)"hackbench.throughput", &dp);
	assert_int_equal(c->nov, 2);
	pp = &c->ov[0];
	vm = &c->ov[1];
	assert_string_equal(pp->monitor, "perf-profile");
	assert_string_equal(pp->metric, "hackbench.throughput");
	assert_string_equal(pp->group, "hackbench");
	assert_int_equal(pp->boots, 4);
	assert_int_equal(pp->runs_with, 8);
	assert_int_equal(pp->runs_without, 8);
	/* with against without: 100/110 - 1 = -9.1%, boot drift shared by both sides */
	near(pp->change, (pp->mean_with / pp->mean_without - 1) * 100, 0.05);
	near(pp->change, -9.0, 0.3);
	assert_true(pp->lo < pp->change && pp->change < pp->hi && pp->hi < 0);
	assert_true(calib_overhead_decided(c, pp));
	assert_false(calib_overhead_over_budget(c, pp)); /* no budget known yet */
	pp = &c->ov[0];
	c->ov[0].budget_pct = 3;
	assert_true(calib_overhead_over_budget(c, pp));
	c->ov[0].budget_pct = 12;
	assert_false(calib_overhead_over_budget(c, pp));
	/* vmstat: the same figure, an interval about 0 */
	assert_string_equal(vm->monitor, "vmstat");
	assert_true(vm->lo < 0 && vm->hi > 0);
	assert_false(calib_overhead_decided(c, vm));
	c->ov[1].budget_pct = 0.001;
	assert_false(calib_overhead_over_budget(c, vm)); /* not told from 0: never over */
	c->ov[0].budget_pct = 3;
	c->ov[1].budget_pct = 3;
	calib_overhead_figure(pp, &t);
	{
		char want[64];

		snprintf(want, sizeof(want), "%+.1f%% [%+.1f, %+.1f]%%", pp->change, pp->lo, pp->hi);
		assert_string_equal(t.buf, want);
	}
	strbuf_reset(&t);
	calibration_format_text(c, &t);
	assert_non_null(strstr(t.buf, "perf-profile"));
	assert_non_null(strstr(t.buf, ": over budget\n"));
	assert_non_null(strstr(t.buf, ": not told from 0\n"));
	strbuf_release(&t);
	calibration_free(c);
	free(tags);
	result_set_free(rs);
}

/* tg's report with a calibration whose perf-profile is over budget on one group. */
static void test_report_disturbed_goldens(void **state)
{
	struct result_set *rs = fixture();
	struct comparison *c = compare_build(rs);
	struct calibration cal = { .alpha = 0.05, .power = 0.8 };
	struct calib_overhead ov[] = {
		{ .group = (char *)"pg-sysbench threads=100%", .monitor = (char *)"perf-profile",
		  .metric = (char *)"sysbench.tps", .boots = 4, .runs_without = 8, .runs_with = 8, .mean_without = 23.7,
		  .mean_with = 22.0, .change = -7.2, .lo = -10.3, .hi = -4.1, .p = 0.002, .budget_pct = 3 },
		/* under its budget, and one not told from 0: no line */
		{ .group = (char *)"pg-sysbench threads=100%", .monitor = (char *)"vmstat",
		  .metric = (char *)"sysbench.tps", .boots = 4, .runs_without = 8, .runs_with = 8, .mean_without = 22.1,
		  .mean_with = 22.0, .change = -0.5, .lo = -1.0, .hi = -0.1, .p = 0.03, .budget_pct = 3 },
		{ .group = (char *)"pg-sysbench threads=75%", .monitor = (char *)"perf-lock",
		  .metric = (char *)"sysbench.tps", .boots = 4, .runs_without = 8, .runs_with = 8, .mean_without = 22.1,
		  .mean_with = 20.0, .change = -9.5, .lo = -30.0, .hi = 11.0, .p = 0.4, .budget_pct = 3 },
	};
	struct report_opts o = { .all = false, .calib = &cal };
	struct strbuf t = STRBUF_INIT;

	(void)state;
	cal.ov = ov;
	cal.nov = ELEMENTSOF(ov);
	report_format_text(c, &o, &t);
	assert_golden("tests/data/report/tg-disturbed.txt", t.buf);
	assert_non_null(strstr(t.buf, "! perf-profile moves sysbench.tps by -7.2% [-10.3, -4.1]% here (budget 3%"));
	assert_null(strstr(t.buf, "vmstat moves"));
	assert_null(strstr(t.buf, "perf-lock moves"));
	strbuf_reset(&t);
	report_format_md(c, &o, &t);
	assert_golden("tests/data/report/tg-disturbed.md", t.buf);
	strbuf_reset(&t);
	report_format_html(c, &o, &t);
	assert_golden("tests/data/report/tg-disturbed.html", t.buf);
	assert_non_null(strstr(t.buf, "<p>perf-profile moves sysbench.tps"));
	strbuf_release(&t);
	comparison_free(c);
	result_set_free(rs);
}

/* Six boots of one run a side, kernels base and new, group "w": metric i
 * moves by effect[i] (a fraction) on new, the same jitter on both. */
static struct result_set *six_boots(const char *id, const char *const *names, const double *effect, size_t n)
{
	static const double jitter[] = { 0.2, -0.3, 0.1, 0.4, -0.1, 0.3 };
	struct result_set *rs = result_set_new(id, "e");
	char rid[32];

	for (int rep = 0; rep < 6; rep++)
		for (int v = 0; v < 2; v++) {
			struct result_run *r;

			snprintf(rid, sizeof(rid), "e.%04d", rep * 2 + v + 1);
			r = result_add_run(rs, rid, v ? "new" : "base", "w", 0, rep + 1);
			r->status = RUN_OK;
			for (size_t m = 0; m < n; m++)
				result_add_metric(r, names[m], (100 + jitter[rep]) * (v ? 1 + effect[m] : 1));
		}
	return rs;
}

/* The forest plot's rows: each verdict of the variant, worst first, then by
 * size; the flagged exploratory changes after them, only the largest. */
static void test_forest_rows(void **state)
{
	struct result_set *rs = fixture();
	struct comparison *c = compare_build(rs);
	struct forest_row *rows = NULL;
	static const char *const metric[] = { "perf-profile.self.cycles-pp.update_cfs_group", "sysbench.tps",
					      "sysbench.latency_p95_ms", "sysbench.tps",
					      "perf-profile.self.cycles-pp.update_tg_load_avg", "sysbench.qps" };
	static const char *const word[] = { "improved", "improved", "inconclusive", "inconclusive", "inconclusive",
					    "inconclusive" };
	size_t n;

	(void)state;
	n = report_forest_rows(c, 1, FOREST_TOP_FLAGGED, &rows);
	assert_int_equal(n, ELEMENTSOF(metric));
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(rows[i].metric, metric[i]);
		assert_string_equal(forest_row_word(&rows[i]), word[i]);
		assert_non_null(rows[i].v);
	}
	assert_string_equal(rows[1].group, "pg-sysbench threads=100%");
	assert_string_equal(rows[3].group, "pg-sysbench threads=75%");
	assert_null(rows[4].d); /* not measured */
	assert_true(fabs(rows[1].band - 2) < 1e-9);  /* the declared 2% */
	assert_true(fabs(rows[2].band - 5) < 1e-9);  /* unchanged within 5% */
	free(rows);
	comparison_free(c);
	result_set_free(rs);

	/* four flagged changes, one declared expectation; the top 2 flagged by size */
	{
		static const double effect[] = { 0.10, -0.40, 0.25, 0.05, 0.03 };
		static const char *const names[] = { "w.a", "w.b", "w.c", "w.d", "w.declared" };

		rs = six_boots("20261130-101500-ff00", names, effect, ELEMENTSOF(names));
		result_add_expect(rs, 0, "w.declared", DIR_INCREASE, 0.02, true);
		c = compare_build(rs);
		n = report_forest_rows(c, 1, 2, &rows);
		assert_int_equal(n, 3);
		assert_string_equal(rows[0].metric, "w.declared");
		assert_non_null(rows[0].v);
		assert_string_equal(rows[1].metric, "w.b");
		assert_string_equal(rows[2].metric, "w.c");
		assert_null(rows[1].v);
		assert_string_equal(forest_row_word(&rows[1]), "flagged");
		assert_true(rows[1].d->e.change < -39 && rows[1].d->e.change > -41);
		free(rows);
		n = report_forest_rows(c, 1, FOREST_TOP_FLAGGED, &rows);
		assert_int_equal(n, 5);
		assert_string_equal(rows[4].metric, "w.d");
		free(rows);
		comparison_free(c);
		result_set_free(rs);
	}
}

/* The text forest: each row's point on the right side of 0, the declared
 * rows marked, a name that would end a Markdown code block shown as '?'. */
static void test_forest_text(void **state)
{
	static const double effect[] = { 0.30, -0.20 };
	static const char *const names[] = { "w.up", "w.`down\n" };
	struct result_set *rs = six_boots("20261130-101500-ff01", names, effect, ELEMENTSOF(names));
	struct comparison *c;
	struct strbuf t = STRBUF_INIT;
	const char *up, *down, *ruler;

	(void)state;
	result_add_expect(rs, 0, "w.up", DIR_INCREASE, 0.05, true);
	c = compare_build(rs);
	report_forest_text(c, 1, true, &t);
	assert_null(strchr(t.buf, '`'));
	up = strstr(t.buf, "\n* w.up ");
	down = strstr(t.buf, "\n  w.?down\\n ");
	ruler = strstr(t.buf, "+-");
	assert_non_null(up);
	assert_non_null(down);
	assert_non_null(ruler);
	{
		/* the columns of 0 and of each point, from the start of its line */
		const char *upl = up + 1, *downl = down + 1;
		const char *up_end = strchr(upl, '\n'), *down_end = strchr(downl, '\n');
		const char *up0 = memchr(upl, '|', (size_t)(up_end - upl)), *upo = memchr(upl, 'o', (size_t)(up_end - upl));
		const char *down0 = memchr(downl, '|', (size_t)(down_end - downl));
		const char *downo = memchr(downl, 'o', (size_t)(down_end - downl));

		assert_non_null(up0);
		assert_non_null(upo);
		assert_non_null(down0);
		assert_non_null(downo);
		assert_true(upo - upl > up0 - upl);       /* +30%: right of 0 */
		assert_true(downo - downl < down0 - downl); /* -20%: left of 0 */
		assert_true(up0 - upl == down0 - downl);  /* one axis for both */
		assert_non_null(strstr(upl, "improved +30."));
		assert_non_null(strstr(downl, "flagged -20."));
		/* the declared 5% band around 0 */
		assert_true(up0[-1] == '.' && up0[1] == '.');
	}
	/* ticks every 20%, the 0 under the column of 0 */
	assert_non_null(strstr(ruler, "-40%    -20%       0%       +20%      +40%"));
	strbuf_release(&t);
	comparison_free(c);
	result_set_free(rs);
}

/* Units from metric names, and values in them. */
static void test_metric_units(void **state)
{
	static const struct {
		const char *metric;
		enum metric_kind kind;
		const char *name;
		double value;
		const char *text;
	} cases[] = {
		{ "sysbench.latency_p95_ms", METRIC_TIME, "ms", 9.5, "9.5 ms" },
		{ "sysbench.latency_avg_ms", METRIC_TIME, "ms", 1520, "1.52 s" },
		{ "lock.contention.total.wait_total_ns", METRIC_TIME, "ns", 150000, "150 µs" },
		{ "ffmpeg.rt_runtime_us", METRIC_TIME, "µs", 950000, "950 ms" },
		{ "hackbench.time", METRIC_TIME, "s", 0.0123, "12.3 ms" },
		{ "kbuild.time.total", METRIC_TIME, "s", 1500, "25 min" },
		{ "kbuild.buildtime_per_iteration", METRIC_TIME, "s", 100.04, "100 s" },
		{ "stress-ng.ctxt_per_sec", METRIC_PLAIN, NULL, 15180, "15.2k" },
		{ "pi-stress.inversions_per_sec", METRIC_PLAIN, NULL, 2.385e7, "23.9M" },
		{ "sched.time_slices", METRIC_PLAIN, NULL, 1.518e9, "1.52G" },
		{ "sysbench.tps", METRIC_PLAIN, NULL, -0.5, "-0.5" },
		{ "perf-profile.self.cycles-pp.ktime_get", METRIC_PERCENT, "%", 30.51, "30.5%" },
		{ "ffmpeg.sched.at_policy_pct", METRIC_PERCENT, "%", 100, "100%" },
	};

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		struct metric_unit u;
		char *t;

		report_metric_unit(cases[i].metric, &u);
		assert_int_equal(u.kind, cases[i].kind);
		if (cases[i].name)
			assert_string_equal(u.name, cases[i].name);
		else
			assert_null(u.name);
		t = report_value_text(&u, cases[i].value, 0);
		assert_string_equal(t, cases[i].text);
		free(t);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_welch_reference),
		cmocka_unit_test(test_welch_edges),
		cmocka_unit_test(test_strmap),
		cmocka_unit_test(test_verdicts),
		cmocka_unit_test(test_matrix_expectations),
		cmocka_unit_test(test_regressed_and_unchanged),
		cmocka_unit_test(test_headline_names_every_expectation),
		cmocka_unit_test(test_parse_metrics),
		cmocka_unit_test(test_report_goldens),
		cmocka_unit_test(test_forest_rows),
		cmocka_unit_test(test_forest_text),
		cmocka_unit_test(test_metric_units),
		cmocka_unit_test(test_monitor_overheads),
		cmocka_unit_test(test_report_disturbed_goldens),
		cmocka_unit_test(test_sweep_golden),
		cmocka_unit_test(test_observe_three_outcomes),
		cmocka_unit_test(test_attrib_golden),
		cmocka_unit_test(test_attrib_absent),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
