/* SPDX-License-Identifier: MIT */
/*
 * Attribution over a series (lab/result/attrib.h), its error rates by
 * seeded simulation through the whole path (a result set of a swept chain,
 * compare_build, attrib_build): boots as units (a per-boot offset and runs
 * within), lognormal.
 *  - 200 null metrics and 10 with one real step over a 5-step chain: the
 *    mean false discovery proportion over the chain's steps stays at q
 *    (plus 3 standard errors of the repetitions' mean);
 *  - a declared metric with one true step of 2x the smallest detectable
 *    change: the right step is named (changes) in >= 80% of repetitions, a
 *    wrong one rarely (<= q plus 3 binomial standard errors).
 * Each rate is printed on one line ("rate ..."), as test-decide's are.
 */
#include <math.h>
#include "unit.h"
#include "result/attrib.h"
#include "result/compare.h"
#include "result/decide.h"
#include "result/result.h"
#include "result/stats.h"
#include "util/alloc.h"

#define STEPS 5
#define VARIANTS (STEPS + 1)
#define BOOTS 6 /* a variant */
#define RUNS 2  /* a boot */
#define SD_B 0.02
#define SD_W 0.01
#define Q 0.05

static const char *const chain[VARIANTS] = { "base", "s@1", "s@2", "s@3", "s@4", "s@5" };

/* Metric k ("m007") of a sweep: real[k] is the step (1-based) where it moves by effect[k], 0: never. */
struct sim_chain {
	size_t metrics;
	const unsigned *real;
	const double *effect;
	bool declare_first; /* metric 0 is declared, with mde_pct */
	double mde_pct;
};

static struct result_set *sim_set(const struct sim_chain *sc, uint64_t *st)
{
	struct result_set *rs = result_set_new("20261202-000000-5111", "sim");
	struct result_series *x = result_add_series(rs, "s");
	char names[256][24];
	unsigned seq = 0;

	assert_true(sc->metrics <= 256);
	for (size_t k = 0; k < sc->metrics; k++)
		snprintf(names[k], sizeof(names[k]), "m%03zu", k);
	for (size_t v = 0; v < VARIANTS; v++) {
		strv_push(&rs->variants, chain[v]);
		result_series_add_step(x, chain[v], (unsigned)v);
	}
	for (size_t v = 0; v < VARIANTS; v++)
		for (unsigned b = 0; b < BOOTS; b++) {
			char boot[16];
			double off[256];

			snprintf(boot, sizeof(boot), "sim.b%zu", v * BOOTS + b + 1);
			for (size_t k = 0; k < sc->metrics; k++)
				off[k] = SD_B * stats_normal(st) + (sc->real[k] && v >= sc->real[k] ? log1p(sc->effect[k]) : 0);
			for (unsigned j = 0; j < RUNS; j++) {
				char id[24];
				struct result_run *r;

				snprintf(id, sizeof(id), "sim.%05u", ++seq);
				r = result_add_run(rs, id, chain[v], "w", 0, b * RUNS + j + 1);
				r->status = RUN_OK;
				r->boot = xstrdup(boot);
				for (size_t k = 0; k < sc->metrics; k++)
					result_add_metric(r, names[k], 100 * exp(off[k] + SD_W * stats_normal(st)));
			}
		}
	if (sc->declare_first)
		result_add_expect(rs, 0, names[0], DIR_DECREASE, sc->mde_pct / 100, true);
	return rs;
}

/* The row of metric name. */
static const struct attrib_row *row_of(const struct attribution *a, const char *name)
{
	for (size_t r = 0; r < a->nrows; r++)
		if (streq(a->rows[r].metric, name))
			return &a->rows[r];
	fail_msg("no row %s", name);
	return NULL;
}

static void test_fdr_over_steps(void **state)
{
	enum { NULLS = 200, REAL = 10, N = 100 };
	unsigned real[NULLS + REAL] = { 0 };
	double effect[NULLS + REAL] = { 0 }, fdp_sum = 0, fdp_sq = 0, se, found = 0;
	struct sim_chain sc = { .metrics = NULLS + REAL, .real = real, .effect = effect };
	uint64_t st = 0x5eed0a01;

	(void)state;
	/* the real ones: -10% at steps 1..5 in turn, the others never move */
	for (unsigned k = 0; k < REAL; k++) {
		real[NULLS + k] = k % STEPS + 1;
		effect[NULLS + k] = -0.10;
	}
	for (unsigned i = 0; i < N; i++) {
		_cleanup_result_set_ struct result_set *rs = sim_set(&sc, &st);
		_cleanup_comparison_ struct comparison *c = compare_build(rs);
		_cleanup_attribution_ struct attribution *a = attrib_build(c, &rs->series[0]);
		unsigned d = 0, fd = 0, hit = 0;
		double fdp;

		assert_int_equal(a->tests, (NULLS + REAL) * STEPS);
		for (size_t r = 0; r < a->nrows; r++) {
			unsigned k = (unsigned)strtoul(a->rows[r].metric + 1, NULL, 10);

			for (size_t s = 0; s < STEPS; s++) {
				bool changes = a->rows[r].steps[s].state == STEP_CHANGES;
				bool truly = real[k] == s + 1;

				d += changes;
				fd += changes && !truly;
				hit += changes && truly;
			}
		}
		fdp = d ? (double)fd / d : 0;
		fdp_sum += fdp;
		fdp_sq += fdp * fdp;
		found += (double)hit / REAL;
	}
	se = sqrt((fdp_sq / N - (fdp_sum / N) * (fdp_sum / N)) / N);
	print_message("rate attribution FDR, %d null + %d real metrics (-10%% at one step) over a %d-step chain, %d boots "
		      "x %d runs, SD %.0f%% between boots %.0f%% within: mean false discovery proportion %.4f over %d, "
		      "limit %.4f (q + 3 SE); real steps found %.3f\n",
		      NULLS, REAL, STEPS, BOOTS, RUNS, SD_B * 100, SD_W * 100, fdp_sum / N, N, Q + 3 * se, found / N);
	assert_true(fdp_sum / N <= Q + 3 * se);
	/* the test must be able to fail: the real steps are found */
	assert_true(found / N > 0.5);
}

static double margin(double p, unsigned n)
{
	return 3 * sqrt(p * (1 - p) / n);
}

static void test_true_step_named(void **state)
{
	enum { NULLS = 4, N = 200, AT = 3 };
	/* the smallest change decidable at alpha with power for this design, as a percentage */
	double cv_b = 100 * sqrt(expm1(SD_B * SD_B)), cv_w = 100 * sqrt(expm1(SD_W * SD_W));
	double mde = decide_mde_pct(cv_b, cv_w, RUNS, BOOTS, 0.05, 0.8);
	unsigned real[1 + NULLS] = { AT }, right = 0, wrong = 0, undecided_elsewhere = 0;
	double effect[1 + NULLS] = { -2 * mde / 100 };
	struct sim_chain sc = { .metrics = 1 + NULLS, .real = real, .effect = effect, .declare_first = true,
				.mde_pct = mde };
	uint64_t st = 0x5eed0a02;

	(void)state;
	assert_true(isfinite(mde) && mde > 0);
	for (unsigned i = 0; i < N; i++) {
		_cleanup_result_set_ struct result_set *rs = sim_set(&sc, &st);
		_cleanup_comparison_ struct comparison *c = compare_build(rs);
		_cleanup_attribution_ struct attribution *a = attrib_build(c, &rs->series[0]);
		const struct attrib_row *r = row_of(a, "m000");
		bool other = false;

		assert_true(r->declared && r->listed);
		right += r->steps[AT - 1].state == STEP_CHANGES;
		for (size_t s = 0; s < STEPS; s++) {
			other |= s != AT - 1 && r->steps[s].state == STEP_CHANGES;
			undecided_elsewhere += s != AT - 1 && r->steps[s].state == STEP_UNDECIDED;
		}
		wrong += other;
	}
	print_message("rate attribution, a declared metric with one true step of 2x the mde (%.2f%%) at step %d of %d, "
		      "%d other metrics: right step named %.4f of %d (must be >= 0.80), a wrong step %.4f (limit %.4f); "
		      "other steps undecided %.4f (not unchanged)\n",
		      mde, AT, STEPS, NULLS, (double)right / N, N, (double)wrong / N, Q + margin(Q, N),
		      (double)undecided_elsewhere / (N * (STEPS - 1)));
	assert_true((double)right / N >= 0.80);
	assert_true((double)wrong / N <= Q + margin(Q, N));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fdr_over_steps),
		cmocka_unit_test(test_true_step_named),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
