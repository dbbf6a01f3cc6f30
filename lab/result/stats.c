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

void stats_describe(const double *v, size_t n, struct sample_stats *out)
{
	_cleanup_free_ double *s = NULL;
	double sum = 0, ss = 0;

	memset(out, 0, sizeof(*out));
	out->n = n;
	if (!n)
		return;
	s = xmalloc(n * sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	out->mean = sum / n;
	/* two passes: no cancellation for large, close values */
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - out->mean) * (s[i] - out->mean);
	out->stddev = n > 1 ? sqrt(ss / (n - 1)) : 0;
	out->rsd_pct = out->mean != 0 ? 100 * out->stddev / fabs(out->mean) : 0;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

void stats_welch(const struct sample_stats *a, const struct sample_stats *b, double conf, struct welch *out)
{
	double va, vb, q, tq, tpow;

	memset(out, 0, sizeof(*out));
	out->diff = b->mean - a->mean;
	if (a->n < 2 || b->n < 2)
		return;
	va = a->stddev * a->stddev / a->n;
	vb = b->stddev * b->stddev / b->n;
	out->se = sqrt(va + vb);
	if (out->se == 0) {
		/* identical values on each side: the difference is exact */
		out->ok = true;
		out->df = a->n + b->n - 2;
		out->p = out->diff == 0 ? 1 : 0;
		out->t = out->diff == 0 ? 0 : copysign(INFINITY, out->diff);
		out->lo = out->hi = out->diff;
		return;
	}
	out->ok = true;
	out->df = (va + vb) * (va + vb) /
		  (va * va / (a->n - 1) + vb * vb / (b->n - 1));
	out->t = out->diff / out->se;
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
