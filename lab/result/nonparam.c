/* SPDX-License-Identifier: MIT */
/*
 * The tests that need no normal data: permutation, ranks (Mann-Whitney with
 * the Hodges-Lehmann shift), the bootstrap, Fieller's ratio interval, and
 * Benjamini-Hochberg. Seeded: the same input gives the same figures.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include "../util/alloc.h"
#include "../util/macro.h"
#include "stats.h"
#include "../util/banned.h"

uint64_t stats_rand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

double stats_uniform(uint64_t *state)
{
	return (double)(stats_rand(state) >> 11) * 0x1.0p-53;
}

double stats_normal(uint64_t *state)
{
	double u1 = stats_uniform(state), u2 = stats_uniform(state);

	if (u1 < 1e-300)
		u1 = 1e-300;
	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* C(n, k) as a double, saturating far above any limit used here */
static double choose(size_t n, size_t k)
{
	double c = 1;

	if (k > n - k)
		k = n - k;
	for (size_t i = 1; i <= k && c < 1e12; i++)
		c = c * (double)(n - k + i) / (double)i;
	return c;
}

#define PERM_EXACT_MAX 50000
#define PERM_SAMPLES 20000

/* The exact test: every choice of na of the pooled values as side a. */
static double perm_exact(const double *pool, size_t n, size_t na, double total, double obs)
{
	size_t idx[64];
	double count = 0, all = 0;

	for (size_t i = 0; i < na; i++)
		idx[i] = i;
	for (;;) {
		double sa = 0;

		for (size_t i = 0; i < na; i++)
			sa += pool[idx[i]];
		double d = (total - sa) / (double)(n - na) - sa / (double)na;

		all++;
		if (fabs(d) >= obs * (1 - 1e-12))
			count++;
		/* the next combination in lexicographic order */
		size_t i = na;

		while (i > 0 && idx[i - 1] == n - na + i - 1)
			i--;
		if (i == 0)
			break;
		idx[i - 1]++;
		for (size_t j = i; j < na; j++)
			idx[j] = idx[j - 1] + 1;
	}
	return count / all;
}

double stats_permutation_p(const double *a, size_t na, const double *b, size_t nb, uint64_t seed)
{
	size_t n = na + nb;
	_cleanup_free_ double *pool = NULL;
	double total = 0, sa = 0, sb = 0, obs, count = 0;

	if (!na || !nb)
		return 1;
	pool = xmalloc(n * sizeof(*pool));
	memcpy(pool, a, na * sizeof(*a));
	memcpy(pool + na, b, nb * sizeof(*b));
	for (size_t i = 0; i < na; i++)
		sa += a[i];
	for (size_t i = 0; i < nb; i++)
		sb += b[i];
	total = sa + sb;
	obs = fabs(sb / nb - sa / na);
	if (na < 64 && choose(n, na) <= PERM_EXACT_MAX)
		return perm_exact(pool, n, na, total, obs);
	for (unsigned s = 0; s < PERM_SAMPLES; s++) {
		double x = 0;

		/* a partial Fisher-Yates shuffle draws side a */
		for (size_t i = 0; i < na; i++) {
			size_t j = i + (size_t)(stats_uniform(&seed) * (double)(n - i));
			double t = pool[i];

			pool[i] = pool[j];
			pool[j] = t;
			x += pool[i];
		}
		if (fabs((total - x) / nb - x / na) >= obs * (1 - 1e-12))
			count++;
	}
	return (count + 1) / (PERM_SAMPLES + 1);
}

bool stats_fieller(double ma, double va, double mb, double vb, double tq, double *lo, double *hi)
{
	/* (mb - r ma)^2 = tq^2 (vb + r^2 va), solved for r */
	double t2 = tq * tq, qa = ma * ma - t2 * va, qb = -2 * ma * mb, qc = mb * mb - t2 * vb;
	double disc = qb * qb - 4 * qa * qc;

	*lo = *hi = NAN;
	if (qa <= 0 || disc < 0)
		return false;
	*lo = (-qb - sqrt(disc)) / (2 * qa);
	*hi = (-qb + sqrt(disc)) / (2 * qa);
	return true;
}

/* The null distribution of U with no ties, cumulative: P(U <= u) for u in
 * 0..mn. f(j, k, s): arrangements of j a-values and k b-values with U = s;
 * the largest value is a b (it beats all j a-values) or an a:
 * f(j, k, s) = f(j, k - 1, s - j) + f(j - 1, k, s). U's distribution is
 * the same with the sides swapped, so k runs over the smaller side. */
static double *u_cdf_exact(size_t m, size_t n)
{
	size_t w = m * n + 1;
	double *f, *g, *cdf = xcalloc(w, sizeof(double)), all = 0, run = 0;

	if (n > m) {
		size_t t = n;

		n = m;
		m = t;
	}
	f = xcalloc((n + 1) * w, sizeof(double));
	g = xcalloc((n + 1) * w, sizeof(double));
	for (size_t k = 0; k <= n; k++)
		f[k * w] = 1; /* no a-values: U is 0 */
	for (size_t j = 1; j <= m; j++) {
		size_t top = j * n + 1; /* U <= j n */

		memset(g, 0, (n + 1) * w * sizeof(double));
		g[0] = 1;
		for (size_t k = 1; k <= n; k++)
			for (size_t s = 0; s < top; s++)
				g[k * w + s] = (s >= j ? g[(k - 1) * w + s - j] : 0) + f[k * w + s];
		double *t = f;

		f = g;
		g = t;
	}
	for (size_t s = 0; s < w; s++)
		all += f[n * w + s];
	for (size_t s = 0; s < w; s++) {
		run += f[n * w + s];
		cdf[s] = run / all;
	}
	free(f);
	free(g);
	return cdf;
}

struct ranked {
	double v;
	bool b;
};

static int cmp_ranked(const void *x, const void *y)
{
	return cmp_double(&((const struct ranked *)x)->v, &((const struct ranked *)y)->v);
}

/* U of b with average ranks for ties; *tie: sum of t^3 - t over tied runs. */
static double u_statistic(const double *a, size_t na, const double *b, size_t nb, double *tie)
{
	size_t n = na + nb;
	_cleanup_free_ struct ranked *r = xmalloc(n * sizeof(*r));
	double rb = 0;

	for (size_t i = 0; i < na; i++)
		r[i] = (struct ranked){ a[i], false };
	for (size_t i = 0; i < nb; i++)
		r[na + i] = (struct ranked){ b[i], true };
	qsort(r, n, sizeof(*r), cmp_ranked);
	*tie = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i;

		while (j + 1 < n && r[j + 1].v == r[i].v)
			j++;
		double t = (double)(j - i + 1), rank = (double)(i + j) / 2 + 1;

		*tie += t * t * t - t;
		for (size_t k = i; k <= j; k++)
			if (r[k].b)
				rb += rank;
		i = j + 1;
	}
	return rb - (double)nb * (double)(nb + 1) / 2;
}

/* A double's place in the order of doubles, as an unsigned key (and back). */
static uint64_t dkey(double x)
{
	uint64_t u;

	memcpy(&u, &x, sizeof(u));
	return u >> 63 ? ~u : u | (1ULL << 63);
}

static double dval(uint64_t k)
{
	uint64_t u = k >> 63 ? k & ~(1ULL << 63) : ~k;
	double x;

	memcpy(&x, &u, sizeof(x));
	return x;
}

/* How many differences b[j] - a[i] are <= t; a and b sorted. b[j] - a[i]
 * falls as a[i] grows and rises with b[j] (rounding is monotone), so one
 * pass with two indexes counts them: O(na + nb). */
static size_t diffs_at_most(const double *a, size_t na, const double *b, size_t nb, double t)
{
	size_t i = 0, count = 0;

	for (size_t j = 0; j < nb; j++) {
		while (i < na && b[j] - a[i] > t)
			i++;
		count += na - i;
	}
	return count;
}

/*
 * The k-th smallest (0-based) of the na x nb differences b[j] - a[i], without
 * making them: a binary search over the doubles between the smallest and the
 * largest difference for the first t with more than k differences <= t. At
 * most 64 counts of O(na + nb): O((na + nb) log) time, no memory, and the
 * exact order statistic (the search ends on a difference itself).
 */
static double kth_diff(const double *a, size_t na, const double *b, size_t nb, size_t k)
{
	uint64_t lo = dkey(b[0] - a[na - 1]), hi = dkey(b[nb - 1] - a[0]);

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (diffs_at_most(a, na, b, nb, dval(mid)) > k)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* -0 and 0 count alike and the search ends on the first: 0 it is */
	return dval(lo) == 0 ? 0 : dval(lo);
}

/* The Hodges-Lehmann shift and the order statistics c and mn - 1 - c of the differences. */
static void hodges_lehmann(const double *a, size_t na, const double *b, size_t nb, long c, struct rank_test *out)
{
	size_t mn = na * nb;
	_cleanup_free_ double *sa = xmalloc(na * sizeof(*sa)), *sb = xmalloc(nb * sizeof(*sb));

	memcpy(sa, a, na * sizeof(*a));
	memcpy(sb, b, nb * sizeof(*b));
	qsort(sa, na, sizeof(*sa), cmp_double);
	qsort(sb, nb, sizeof(*sb), cmp_double);
	out->shift = mn % 2 ? kth_diff(sa, na, sb, nb, mn / 2)
			    : (kth_diff(sa, na, sb, nb, mn / 2 - 1) + kth_diff(sa, na, sb, nb, mn / 2)) / 2;
	out->lo = out->hi = NAN;
	if (c >= 0 && (size_t)c < mn - 1 - (size_t)c) {
		out->lo = kth_diff(sa, na, sb, nb, (size_t)c);
		out->hi = kth_diff(sa, na, sb, nb, mn - 1 - (size_t)c);
	}
}

#define MW_EXACT_MAX 10000

void stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double conf, struct rank_test *out)
{
	double tie, mn = (double)na * (double)nb, n = (double)(na + nb), s, z = gsl_cdf_ugaussian_Qinv((1 - conf) / 2);
	long c = -1;

	memset(out, 0, sizeof(*out));
	out->shift = out->lo = out->hi = out->p = NAN;
	if (!na || !nb)
		return;
	out->ok = true;
	out->u = u_statistic(a, na, b, nb, &tie);
	s = sqrt(mn / 12 * ((n + 1) - tie / (n * (n - 1))));
	/* exact as SciPy's "auto" (a side of 8 or fewer, no ties) while the
	 * exact distribution is cheap (time ~ (na nb)^2): the normal
	 * approximation past MW_EXACT_MAX pairs */
	if ((na <= 8 || nb <= 8) && tie == 0 && mn <= MW_EXACT_MAX) {
		_cleanup_free_ double *cdf = u_cdf_exact(na, nb);
		size_t lo = (size_t)floor(fmin(out->u, mn - out->u) + 1e-9);

		out->p = fmin(1, 2 * cdf[lo]);
		/* the largest c with P(U <= c) <= (1 - conf) / 2 */
		while ((double)(c + 1) <= mn && cdf[c + 1] <= (1 - conf) / 2)
			c++;
	} else {
		double big = fmax(out->u, mn - out->u);

		out->p = s > 0 ? fmin(1, 2 * gsl_cdf_ugaussian_Q((big - mn / 2 - 0.5) / s)) : 1;
		c = (long)floor(mn / 2 - z * s);
	}
	hodges_lehmann(a, na, b, nb, c, out);
}

static double median_of(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double resample_median(const double *v, size_t n, double *tmp, uint64_t *st)
{
	for (size_t i = 0; i < n; i++)
		tmp[i] = v[(size_t)(stats_uniform(st) * (double)n)];
	return median_of(tmp, n);
}

bool stats_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb, double conf, unsigned reps,
			   uint64_t seed, struct boot_ratio *out)
{
	_cleanup_free_ double *r = xmalloc(reps * sizeof(*r));
	_cleanup_free_ double *tmp = xmalloc((na > nb ? na : nb) * sizeof(*tmp));
	size_t below = 0, above = 0, lo, hi;
	double ma;

	memset(out, 0, sizeof(*out));
	if (!na || !nb || !reps)
		return false;
	memcpy(tmp, a, na * sizeof(*a));
	ma = median_of(tmp, na);
	memcpy(tmp, b, nb * sizeof(*b));
	if (ma == 0)
		return false;
	out->ratio = median_of(tmp, nb) / ma;
	for (unsigned k = 0; k < reps; k++) {
		double x = resample_median(a, na, tmp, &seed), y = resample_median(b, nb, tmp, &seed);

		if (x == 0)
			return false;
		r[k] = y / x;
		below += r[k] <= 1;
		above += r[k] >= 1;
	}
	qsort(r, reps, sizeof(*r), cmp_double);
	lo = (size_t)floor((1 - conf) / 2 * (reps - 1));
	hi = (size_t)ceil((1 - (1 - conf) / 2) * (reps - 1));
	out->lo = r[lo];
	out->hi = r[hi];
	out->p = fmin(1, fmax(2 * (double)(below < above ? below : above) / reps, 1.0 / reps));
	return true;
}

struct pidx {
	double p;
	size_t i;
};

static int cmp_pidx(const void *x, const void *y)
{
	return cmp_double(&((const struct pidx *)x)->p, &((const struct pidx *)y)->p);
}

void stats_bh(const double *p, size_t n, double *q)
{
	_cleanup_free_ struct pidx *s = xmalloc((n ? n : 1) * sizeof(*s));
	size_t m = 0;
	double run = 1;

	for (size_t i = 0; i < n; i++) {
		q[i] = NAN;
		if (!isnan(p[i]))
			s[m++] = (struct pidx){ p[i], i };
	}
	qsort(s, m, sizeof(*s), cmp_pidx);
	for (size_t k = m; k-- > 0;) {
		double v = s[k].p * (double)m / (double)(k + 1);

		if (v < run)
			run = v;
		q[s[k].i] = run;
	}
}
