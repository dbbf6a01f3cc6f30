/* SPDX-License-Identifier: MIT */
/*
 * Change points over a series of commits (lab track): the answers on
 * series whose changes are known, bad input refused, the same answer
 * every time, and the error rates by seeded simulation, each printed on
 * one line ("rate ..."):
 * - false alarms on null series of 50 commits (2 boots a commit,
 *   lognormal noise of 0.9% between boots, as the instruction-timed shape
 *   measures here, and of 25%, as host time on a busy TCG host): at most
 *   alpha, within 3 binomial standard errors;
 * - power: a step of twice the mde of one neighbours' comparison (2 boots
 *   a side, Welch, alpha 0.05, 80% power) at a random place, with noise
 *   of 0.9% and of 5% (KVM), found and placed between the right two
 *   commits in at least 80% of series, no other change claimed; a second
 *   change claimed beside the true one in at most alpha (3 standard
 *   errors); and the smaller steps' power, shown.
 */
#include <errno.h>
#include <math.h>
#include "unit.h"
#include "result/changepoint.h"
#include "result/stats.h"

#define ALPHA 0.05

static double margin(double p, unsigned n)
{
	return 3 * sqrt(p * (1 - p) / n);
}

/* A series: ncommits commits of `boots` boots, lognormal noise sd (on
 * logs), the level multiplied by 1 + step[c] at commit c. */
struct series {
	double v[512];
	size_t commit[512];
	size_t n;
};

static void draw(struct series *s, size_t ncommits, unsigned boots, double sd, const double *level, uint64_t *st)
{
	s->n = 0;
	for (size_t c = 0; c < ncommits; c++)
		for (unsigned b = 0; b < boots; b++) {
			assert_true(s->n < 512);
			s->v[s->n] = 100 * (level ? level[c] : 1) * exp(sd * stats_normal(st));
			s->commit[s->n++] = c;
		}
}

static void test_known(void **state)
{
	struct cp_opts o = CP_OPTS_DEFAULT;
	struct cp_point *p = NULL;
	size_t np;
	struct series s;
	double level[16];
	uint64_t st = 7;

	(void)state;
	/* one rise of 10% at commit 6 of 10, 3 boots a commit, 1% noise */
	for (size_t c = 0; c < 10; c++)
		level[c] = c < 6 ? 1 : 1.10;
	draw(&s, 10, 3, 0.01, level, &st);
	assert_int_equal(cp_detect(s.v, s.commit, s.n, 10, &o, &p, &np), 0);
	assert_int_equal(np, 1);
	assert_int_equal(p[0].at, 6);
	assert_int_equal(p[0].nbefore, 18);
	assert_int_equal(p[0].nafter, 12);
	assert_true(p[0].change_pct > 8 && p[0].change_pct < 12);
	assert_true(p[0].lo_pct < p[0].change_pct && p[0].change_pct < p[0].hi_pct);
	assert_true(p[0].lo_pct < 10 && 10 < p[0].hi_pct);
	assert_true(p[0].p <= 1.0 / 1000 + 1e-12);
	free(p);

	/* up at 4, back down at 12, of 16: two change points, in order */
	for (size_t c = 0; c < 16; c++)
		level[c] = c >= 4 && c < 12 ? 1.2 : 1;
	draw(&s, 16, 2, 0.01, level, &st);
	assert_int_equal(cp_detect(s.v, s.commit, s.n, 16, &o, &p, &np), 0);
	assert_int_equal(np, 2);
	assert_int_equal(p[0].at, 4);
	assert_int_equal(p[1].at, 12);
	assert_true(p[0].change_pct > 15);
	assert_true(p[1].change_pct < -12);
	free(p);

	/* flat: nothing */
	draw(&s, 16, 2, 0.01, NULL, &st);
	assert_int_equal(cp_detect(s.v, s.commit, s.n, 16, &o, &p, &np), 0);
	assert_int_equal(np, 0);
	free(p);

	/* every boot the same figure: no variance, no change */
	for (size_t i = 0; i < s.n; i++)
		s.v[i] = 42;
	assert_int_equal(cp_detect(s.v, s.commit, s.n, 16, &o, &p, &np), 0);
	assert_int_equal(np, 0);
	free(p);

	/* two commits of 2 boots, no noise, apart: the smallest series that can
	 * show a change (6 arrangements: p = 1/3 at best, not significant);
	 * 4 boots a side (70 arrangements) can */
	{
		double v2[] = { 10, 10, 20, 20 }, v8[] = { 10, 10.1, 9.9, 10, 20, 20.1, 19.9, 20 };
		size_t c2[] = { 0, 0, 1, 1 }, c8[] = { 0, 0, 0, 0, 1, 1, 1, 1 };

		assert_int_equal(cp_detect(v2, c2, 4, 2, &o, &p, &np), 0);
		assert_int_equal(np, 0);
		free(p);
		assert_int_equal(cp_detect(v8, c8, 8, 2, &o, &p, &np), 0);
		assert_int_equal(np, 1);
		assert_int_equal(p[0].at, 1);
		assert_true(fabs(p[0].change_pct - 100) < 1e-9);
		free(p);
	}
}

/* figures of a billion with a 0.01% change: centred sums keep the digits */
static void test_scale(void **state)
{
	struct cp_opts o = CP_OPTS_DEFAULT;
	struct cp_point *p = NULL;
	size_t np;
	struct series s;
	double level[20];
	uint64_t st = 11;

	(void)state;
	for (size_t c = 0; c < 20; c++)
		level[c] = c < 13 ? 1e7 : 1e7 * 1.0001;
	draw(&s, 20, 3, 0.00001, level, &st);
	assert_int_equal(cp_detect(s.v, s.commit, s.n, 20, &o, &p, &np), 0);
	assert_int_equal(np, 1);
	assert_int_equal(p[0].at, 13);
	free(p);
}

static void test_bad_input(void **state)
{
	struct cp_opts o = CP_OPTS_DEFAULT, bad = o;
	struct cp_point *p = (struct cp_point *)&o;
	size_t np = 9;
	double v[] = { 1, 2, 3, 4 };
	size_t c[] = { 0, 0, 1, 1 }, desc[] = { 0, 1, 0, 1 }, gap[] = { 0, 0, 2, 2 }, out[] = { 0, 0, 1, 5 };

	(void)state;
	assert_int_equal(cp_detect(v, desc, 4, 2, &o, &p, &np), -EINVAL);
	assert_null(p);
	assert_int_equal(np, 0);
	assert_int_equal(cp_detect(v, gap, 4, 3, &o, &p, &np), -EINVAL); /* commit 1 has no boot */
	assert_int_equal(cp_detect(v, out, 4, 2, &o, &p, &np), -EINVAL);
	assert_int_equal(cp_detect(v, c, 4, 3, &o, &p, &np), -EINVAL); /* commit 2 has no boot */
	v[2] = NAN;
	assert_int_equal(cp_detect(v, c, 4, 2, &o, &p, &np), -EINVAL);
	v[2] = INFINITY;
	assert_int_equal(cp_detect(v, c, 4, 2, &o, &p, &np), -EINVAL);
	v[2] = 3;
	bad.alpha = 0;
	assert_int_equal(cp_detect(v, c, 4, 2, &bad, &p, &np), -EINVAL);
	bad.alpha = 1;
	assert_int_equal(cp_detect(v, c, 4, 2, &bad, &p, &np), -EINVAL);
	bad = o;
	bad.perms = 18;
	assert_int_equal(cp_detect(v, c, 4, 2, &bad, &p, &np), -EINVAL);
	assert_int_equal(cp_detect(v, c, 4, 2, NULL, &p, &np), -EINVAL);
	assert_int_equal(cp_detect(NULL, NULL, 0, 0, &o, &p, &np), 0);
	assert_int_equal(np, 0);
	assert_int_equal(cp_detect(v, c, 4, 0, &o, &p, &np), -EINVAL);
}

/* the same series, the same answer: the p-values to the last bit */
static void test_repeatable(void **state)
{
	struct cp_opts o = CP_OPTS_DEFAULT;
	struct cp_point *p1 = NULL, *p2 = NULL;
	size_t n1, n2;
	struct series s;
	double level[30];
	uint64_t st = 3;

	(void)state;
	for (size_t c = 0; c < 30; c++)
		level[c] = c < 17 ? 1 : 0.97;
	draw(&s, 30, 2, 0.02, level, &st);
	assert_int_equal(cp_detect(s.v, s.commit, s.n, 30, &o, &p1, &n1), 0);
	assert_int_equal(cp_detect(s.v, s.commit, s.n, 30, &o, &p2, &n2), 0);
	assert_int_equal(n1, n2);
	assert_true(n1 >= 1);
	for (size_t i = 0; i < n1; i++) {
		assert_int_equal(p1[i].at, p2[i].at);
		assert_true(p1[i].p == p2[i].p);
	}
	free(p1);
	free(p2);
}

/* The mde of one neighbours' comparison: m boots a side at per-boot sd
 * (on logs), Welch at alpha 0.05 with 80% power, as a ratio - 1. */
static double neighbour_mde(unsigned m, double sd)
{
	struct sample_stats a = { .n = m, .mean = 0, .stddev = sd }, b = a;
	struct welch w;

	stats_welch(&a, &b, 0.95, &w);
	return expm1(w.mde);
}

static void false_alarms(double sd)
{
	const unsigned N = 2000;
	struct cp_opts o = CP_OPTS_DEFAULT;
	unsigned alarms = 0;
	uint64_t st = 0x5eed0c01;
	struct series s;

	o.perms = 199;
	for (unsigned i = 0; i < N; i++) {
		struct cp_point *p = NULL;
		size_t np;

		draw(&s, 50, 2, sd, NULL, &st);
		assert_int_equal(cp_detect(s.v, s.commit, s.n, 50, &o, &p, &np), 0);
		alarms += np > 0;
		free(p);
	}
	print_message("rate change points, null series of 50 commits x 2 boots, noise %.1f%%: %.4f false alarms "
		      "of %u, limit %.4f\n",
		      100 * sd, (double)alarms / N, N, ALPHA + margin(ALPHA, N));
	assert_true((double)alarms / N <= ALPHA + margin(ALPHA, N));
}

static void test_false_alarms(void **state)
{
	(void)state;
	false_alarms(0.009);
	false_alarms(0.25);
}

/* steps of k times the mde at a random place in 50 commits: found there */
static double power(double k, double sd, unsigned *extra, unsigned N)
{
	struct cp_opts o = CP_OPTS_DEFAULT;
	double mde = neighbour_mde(2, sd), level[50];
	unsigned found = 0;
	uint64_t st = 0x5eed0c02;
	struct series s;

	o.perms = 199;
	*extra = 0;
	for (unsigned i = 0; i < N; i++) {
		size_t at = 1 + (size_t)(stats_uniform(&st) * 49), np;
		struct cp_point *p = NULL;
		bool here = false;

		for (size_t c = 0; c < 50; c++)
			level[c] = c < at ? 1 : 1 + k * mde;
		draw(&s, 50, 2, sd, level, &st);
		assert_int_equal(cp_detect(s.v, s.commit, s.n, 50, &o, &p, &np), 0);
		for (size_t j = 0; j < np; j++)
			here |= p[j].at == at;
		found += here && np == 1;
		*extra += np > 1;
		free(p);
	}
	return (double)found / N;
}

static void test_power(void **state)
{
	const unsigned N = 500;
	unsigned extra;
	double pw;

	(void)state;
	for (int i = 0; i < 2; i++) {
		double sd = i ? 0.05 : 0.009, mde = neighbour_mde(2, sd);

		pw = power(2, sd, &extra, N);
		print_message("rate change points, a step of 2 x mde (%.1f%%) in 50 commits x 2 boots, noise %.1f%%: "
			      "%.4f found and placed alone (must be >= 0.80); %.4f with a second change claimed "
			      "(limit %.4f)\n",
			      100 * 2 * mde, 100 * sd, pw, (double)extra / N, ALPHA + margin(ALPHA, N));
		assert_true(pw >= 0.80);
		assert_true((double)extra / N <= ALPHA + margin(ALPHA, N));
		for (double k = 0.125; k <= 0.5; k *= 2) {
			pw = power(k, sd, &extra, N);
			print_message("rate change points, a step of %.3f x mde (%.2f%%), noise %.1f%%: %.4f found and "
				      "placed alone (shown, not asserted)\n",
				      k, 100 * k * mde, 100 * sd, pw);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_scale),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_repeatable),
		cmocka_unit_test(test_false_alarms),
		cmocka_unit_test(test_power),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
