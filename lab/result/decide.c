/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <gsl/gsl_cdf.h>
#include "../util/alloc.h"
#include "../util/macro.h"
#include "../util/strmap.h"
#include "decide.h"
#include "stats.h"
#include "../util/banned.h"

const char *const expect_direction_names[DIR_COUNT] = { [DIR_INCREASE] = "increase",
							[DIR_DECREASE] = "decrease",
							[DIR_UNCHANGED] = "unchanged" };

const char *expect_direction_name(enum expect_direction d)
{
	return (size_t)d < ELEMENTSOF(expect_direction_names) ? expect_direction_names[d] : "?";
}

int expect_direction_parse(const char *s, enum expect_direction *ret)
{
	for (size_t i = 0; i < ELEMENTSOF(expect_direction_names); i++)
		if (streq(s, expect_direction_names[i])) {
			*ret = (enum expect_direction)i;
			return 0;
		}
	return -EINVAL;
}

static const char *const method_names[] = {
	[STAT_WELCH_LOG] = "welch-log",
	[STAT_MANN_WHITNEY] = "mann-whitney",
	[STAT_BOOTSTRAP] = "bootstrap",
};

const char *stat_method_name(enum stat_method m)
{
	return method_names[m];
}

int stat_method_from_name(const char *s, enum stat_method *ret)
{
	for (size_t i = 0; i < ELEMENTSOF(method_names); i++)
		if (streq(s, method_names[i])) {
			*ret = (enum stat_method)i;
			return 0;
		}
	return -1;
}

static const char *const verdict_names[] = {
	[VERDICT_IMPROVED] = "improved",
	[VERDICT_REGRESSED] = "regressed",
	[VERDICT_UNCHANGED] = "unchanged",
	[VERDICT_INCONCLUSIVE] = "inconclusive",
	[VERDICT_CHANGED] = "changed",
	[VERDICT_SMALLER] = "smaller",
};

const char *verdict_name(enum verdict v)
{
	return verdict_names[v];
}

bool verdict_decided(enum verdict v)
{
	return v != VERDICT_INCONCLUSIVE;
}

#define BOOTSTRAP_REPS 2000
#define P_FLOOR 1e-300

/* A side's units (boot means, or its runs) and the parts of its variance. */
struct units {
	const double *u; /* the boot means (bm) or the side's runs */
	const double *v; /* the side's runs, always */
	double *bm;      /* each boot's mean, owned */
	size_t n, runs, boots;
	double mean, cvb, cvw;
};

size_t decide_boot_index(const struct side *s, size_t *which)
{
	_cleanup_strmap_ struct strmap idx = STRMAP_INIT;
	size_t nb = 0;

	if (!s->boot)
		return 0;
	for (size_t i = 0; i < s->n; i++) {
		if (!s->boot[i])
			return 0;
		/* runs of a boot come together: the previous run's boot first */
		if (i && streq(s->boot[i], s->boot[i - 1]))
			which[i] = which[i - 1];
		else if (!strmap_get(&idx, s->boot[i], &which[i])) {
			which[i] = nb++;
			strmap_put(&idx, s->boot[i], which[i]);
		}
	}
	return nb;
}

/* One-way random effects: the between-boot and within-boot parts, as CV %. */
static void variance_parts(const struct side *s, const size_t *which, size_t nb, const double *bm,
			   const size_t *bn, struct units *u)
{
	double msw = 0, msb = 0, sumn2 = 0, n0, N = (double)s->n;

	u->cvb = u->cvw = NAN;
	if (nb < 2 || u->mean == 0)
		return;
	if (s->n == nb) {
		/* a run a boot: the parts cannot be told apart, all of it counts as between boots */
		for (size_t k = 0; k < nb; k++)
			msb += (bm[k] - u->mean) * (bm[k] - u->mean);
		u->cvb = 100 * sqrt(msb / (double)(nb - 1)) / fabs(u->mean);
		return;
	}
	for (size_t i = 0; i < s->n; i++)
		msw += (s->v[i] - bm[which[i]]) * (s->v[i] - bm[which[i]]);
	msw /= N - (double)nb;
	for (size_t k = 0; k < nb; k++) {
		msb += (double)bn[k] * (bm[k] - u->mean) * (bm[k] - u->mean);
		sumn2 += (double)bn[k] * (double)bn[k];
	}
	msb /= (double)(nb - 1);
	n0 = (N - sumn2 / N) / (double)(nb - 1);
	u->cvw = 100 * sqrt(msw) / fabs(u->mean);
	u->cvb = 100 * sqrt(fmax(0, (msb - msw) / n0)) / fabs(u->mean);
}

/* A side's boots and their means; the units are its runs until units_by_boot(). */
static void make_units(const struct side *s, struct units *u)
{
	_cleanup_free_ size_t *which = xcalloc(s->n + 1, sizeof(size_t)), *bn = NULL;
	double *bm;
	double sum = 0;

	memset(u, 0, sizeof(*u));
	u->runs = s->n;
	u->boots = decide_boot_index(s, which);
	for (size_t i = 0; i < s->n; i++)
		sum += s->v[i];
	u->mean = s->n ? sum / (double)s->n : NAN;
	bm = xcalloc(u->boots + 1, sizeof(double));
	bn = xcalloc(u->boots + 1, sizeof(size_t));
	for (size_t i = 0; u->boots && i < s->n; i++) {
		bm[which[i]] += s->v[i];
		bn[which[i]]++;
	}
	for (size_t k = 0; k < u->boots; k++)
		bm[k] /= (double)bn[k];
	variance_parts(s, which, u->boots, bm, bn, u);
	u->bm = bm;
	u->u = s->v;
	u->v = s->v;
	u->n = s->n;
}

static void units_by_boot(struct units *u)
{
	u->u = u->bm;
	u->n = u->boots;
}

/* Logs or values: decided on the runs' values, not on boot means (a boot
 * of mixed signs can have a positive mean, and its logs would hide that). */
static bool all_positive(const struct units *u)
{
	for (size_t i = 0; i < u->runs; i++)
		if (!(u->v[i] > 0))
			return false;
	return true;
}

/* Welch's test of the units, on logs or as they are. */
static void welch_of(const struct units *a, const struct units *b, bool logs, double alpha, struct welch *w,
		     struct welch *w2)
{
	_cleanup_free_ double *la = xmalloc((a->n + 1) * sizeof(double)), *lb = xmalloc((b->n + 1) * sizeof(double));
	struct sample_stats sa, sb;

	for (size_t i = 0; i < a->n; i++)
		la[i] = logs ? log(a->u[i]) : a->u[i];
	for (size_t i = 0; i < b->n; i++)
		lb[i] = logs ? log(b->u[i]) : b->u[i];
	stats_describe(la, a->n, &sa);
	stats_describe(lb, b->n, &sb);
	stats_welch(&sa, &sb, 1 - alpha, w);
	stats_welch(&sa, &sb, 1 - 2 * alpha, w2);
}

/* A relative change from a difference of logs, in %. */
static double pct(double dlog)
{
	return 100 * expm1(dlog);
}

/* The mde of a Welch test, at alpha with power, as a difference. */
static double welch_mde(const struct welch *w, double alpha, double power)
{
	return (gsl_cdf_tdist_Qinv(alpha / 2, w->df) + gsl_cdf_tdist_Qinv(1 - power, w->df)) * w->se;
}

static void set_interval(struct effect *e, bool logs, const struct welch *w, const struct welch *w2)
{
	if (logs) {
		e->change = pct(w->diff);
		e->lo = pct(w->lo);
		e->hi = pct(w->hi);
		e->elo = pct(w2->lo);
		e->ehi = pct(w2->hi);
	} else {
		e->change = w->diff;
		e->lo = w->lo;
		e->hi = w->hi;
		e->elo = w2->lo;
		e->ehi = w2->hi;
	}
}

/*
 * A relative change in % from the ratio r = mean(b) / mean(a): (mean(b) -
 * mean(a)) / |mean(a)|, which follows the sign of the difference whatever
 * the baseline's sign (a fall from -10 to -12 is -20%, not +20%).
 */
static double rel_change(double r, double ma)
{
	return 100 * (ma < 0 ? 1 - r : r - 1);
}

/* Not every value positive and not points: the ratio of the means, by Fieller. */
static void fieller_of(const struct units *a, const struct units *b, double alpha, const struct welch *w,
		       struct effect *e)
{
	struct sample_stats sa, sb;
	double lo, hi, k, ma, mb, va, vb;
	int ex;

	e->method = "fieller";
	stats_describe(a->u, a->n, &sa);
	stats_describe(b->u, b->n, &sb);
	if (sa.mean == 0) {
		e->why = "the baseline's mean is 0: no relative change";
		return;
	}
	e->change = 100 * (sb.mean - sa.mean) / fabs(sa.mean);
	e->mde = 100 * w->mde / fabs(sa.mean);
	/* scale-free: the ratio is the same over k, a power of two near the largest figure */
	frexp(fmax(fmax(fabs(sa.mean), fabs(sb.mean)), fmax(sa.stddev, sb.stddev)), &ex);
	k = ldexp(1, ex);
	ma = sa.mean / k;
	mb = sb.mean / k;
	va = (sa.stddev / k) * (sa.stddev / k) / (double)sa.n;
	vb = (sb.stddev / k) * (sb.stddev / k) / (double)sb.n;

	if (!stats_fieller(ma, va, mb, vb, gsl_cdf_tdist_Qinv(alpha / 2, w->df), &lo, &hi)) {
		e->why = "the baseline's mean is not clearly away from 0: the ratio's interval is unbounded";
		return;
	}
	/* a negative baseline turns the ratio's interval around */
	e->lo = fmin(rel_change(lo, sa.mean), rel_change(hi, sa.mean));
	e->hi = fmax(rel_change(lo, sa.mean), rel_change(hi, sa.mean));
	if (stats_fieller(ma, va, mb, vb, gsl_cdf_tdist_Qinv(alpha, w->df), &lo, &hi)) {
		e->elo = fmin(rel_change(lo, sa.mean), rel_change(hi, sa.mean));
		e->ehi = fmax(rel_change(lo, sa.mean), rel_change(hi, sa.mean));
	}
}

static void rank_of(const struct units *a, const struct units *b, bool logs, double alpha, struct effect *e)
{
	_cleanup_free_ double *la = xmalloc((a->n + 1) * sizeof(double)), *lb = xmalloc((b->n + 1) * sizeof(double));
	struct rank_test r, r2;

	for (size_t i = 0; i < a->n; i++)
		la[i] = logs ? log(a->u[i]) : a->u[i];
	for (size_t i = 0; i < b->n; i++)
		lb[i] = logs ? log(b->u[i]) : b->u[i];
	stats_mann_whitney(la, a->n, lb, b->n, 1 - alpha, &r);
	stats_mann_whitney(la, a->n, lb, b->n, 1 - 2 * alpha, &r2);
	e->method = "mann-whitney";
	e->p = fmax(r.p, P_FLOOR);
	e->change = logs ? pct(r.shift) : r.shift;
	e->lo = logs ? pct(r.lo) : r.lo;
	e->hi = logs ? pct(r.hi) : r.hi;
	e->elo = logs ? pct(r2.lo) : r2.lo;
	e->ehi = logs ? pct(r2.hi) : r2.hi;
	if (isnan(e->lo))
		e->why = "too few units a side for a rank interval at this level";
}

static void bootstrap_of(const struct units *a, const struct units *b, double alpha, uint64_t seed,
			 struct effect *e)
{
	struct boot_ratio r, r2;

	e->method = "bootstrap";
	if (!stats_bootstrap_ratio(a->u, a->n, b->u, b->n, 1 - alpha, BOOTSTRAP_REPS, seed, &r) ||
	    !stats_bootstrap_ratio(a->u, a->n, b->u, b->n, 1 - 2 * alpha, BOOTSTRAP_REPS, seed, &r2)) {
		e->why = "a resampled baseline median is 0: no ratio";
		return;
	}
	e->p = r.p;
	e->change = 100 * (r.ratio - 1);
	e->lo = 100 * (r.lo - 1);
	e->hi = 100 * (r.hi - 1);
	e->elo = 100 * (r2.lo - 1);
	e->ehi = 100 * (r2.hi - 1);
}

/* The test on the units: e->units and the sides' figures are set. */
static void test_units(const struct units *a, const struct units *b, bool points, enum stat_method m, double alpha,
		       double power, uint64_t seed, struct effect *e)
{
	bool logs = !points && all_positive(a) && all_positive(b);
	struct welch w, w2;

	welch_of(a, b, logs, alpha, &w, &w2);
	if (!w.ok || !w2.ok) {
		/* a NaN anywhere is no test, never a p */
		e->why = "no test: a figure of Welch's test is not finite (values beyond the range of a double)";
		return;
	}
	e->tested = true;
	if (w.se == 0) {
		e->method = "permutation";
		e->p = stats_permutation_p(a->u, a->n, b->u, b->n, seed);
		e->why = "no variation within either side: an exact permutation test, and no interval";
		e->change = points ? b->mean - a->mean : a->mean != 0 ? 100 * (b->mean - a->mean) / fabs(a->mean) : NAN;
		return;
	}
	/* a t far in the tail underflows to 0: no p is ever 0 */
	e->p = fmax(w.p, P_FLOOR);
	e->mde = welch_mde(&w, alpha, power);
	if (logs)
		e->mde = pct(e->mde);
	if (!logs && !points) {
		fieller_of(a, b, alpha, &w, e);
		e->mde = 100 * welch_mde(&w, alpha, power) / fabs(a->mean);
		return;
	}
	e->method = logs ? "welch-log" : "welch";
	set_interval(e, logs, &w, &w2);
	if (m == STAT_MANN_WHITNEY)
		rank_of(a, b, logs, alpha, e);
	else if (m == STAT_BOOTSTRAP && logs)
		bootstrap_of(a, b, alpha, seed, e);
}

void decide_effect(const struct side *a, const struct side *b, bool points, enum stat_method m, double alpha,
		   double power, uint64_t seed, struct effect *e)
{
	struct units ua, ub;
	bool by_boot;

	memset(e, 0, sizeof(*e));
	e->points = points;
	e->change = e->lo = e->hi = e->elo = e->ehi = e->p = e->mde = NAN;
	e->method = "none";
	make_units(a, &ua);
	make_units(b, &ub);
	by_boot = ua.boots >= 2 && ub.boots >= 2;
	if (by_boot) {
		units_by_boot(&ua);
		units_by_boot(&ub);
	}
	e->by_boot = by_boot;
	e->units[0] = ua.n, e->units[1] = ub.n;
	e->runs[0] = ua.runs, e->runs[1] = ub.runs;
	e->boots[0] = ua.boots, e->boots[1] = ub.boots;
	e->cv_between[0] = ua.cvb, e->cv_between[1] = ub.cvb;
	e->cv_within[0] = ua.cvw, e->cv_within[1] = ub.cvw;
	e->mean[0] = ua.mean, e->mean[1] = ub.mean;
	if (ua.n < 2 || ub.n < 2)
		e->why = by_boot ? "fewer than 2 boots a side" : "fewer than 2 runs a side";
	else
		test_units(&ua, &ub, points, m, alpha, power, seed, e);
	free(ua.bm);
	free(ub.bm);
}

/* "+2.10% [+0.51, +3.72]" in the effect's unit */
static char *fmt_effect(const struct effect *e)
{
	const char *u = e->points ? " points" : "%";

	if (isnan(e->lo))
		return xasprintf("%+.2f%s (p=%.3g)", e->change, u, e->p);
	return xasprintf("%+.2f%s [%+.2f, %+.2f]%s (p=%.3g)", e->change, u, e->lo, e->hi, u, e->p);
}

/* No interval, a test: only the direction can be decided. */
static enum verdict verdict_no_interval(const struct effect *e, double s, double alpha, char **why)
{
	if (e->p < alpha && isfinite(e->change) && e->change != 0) {
		*why = xasprintf("%+.4g%s, p=%.3g; %s", e->change, e->points ? " points" : "%", e->p,
				 e->why ? e->why : "no interval");
		if (s == 0)
			return VERDICT_CHANGED;
		return s * e->change > 0 ? VERDICT_IMPROVED : VERDICT_REGRESSED;
	}
	*why = xasprintf("p=%.3g; %s", e->p, e->why ? e->why : "no interval");
	return VERDICT_INCONCLUSIVE;
}

enum verdict decide_verdict(const struct effect *e, enum expect_direction dir, double mde, double alpha, char **why)
{
	double s = dir == DIR_INCREASE ? 1 : dir == DIR_DECREASE ? -1 : 0;
	const char *u = e->points ? " points" : "%";
	_cleanup_free_ char *fx = NULL;
	bool equivalent, up, down;

	if (!e->tested) {
		*why = xstrdup(e->why ? e->why : "not tested");
		return VERDICT_INCONCLUSIVE;
	}
	if (isnan(e->lo) || isnan(e->hi))
		return verdict_no_interval(e, s, alpha, why);
	fx = fmt_effect(e);
	/* the equivalence test (two one-sided tests at alpha): the 1 - 2 alpha interval inside ±mde */
	equivalent = mde > 0 && e->elo > -mde && e->ehi < mde;
	up = e->lo > 0;
	down = e->hi < 0;
	if (equivalent && s != 0 && (s > 0 ? up : down)) {
		*why = xasprintf("%s: a real change, within the declared %g%s", fx, mde, u);
		return VERDICT_SMALLER;
	}
	if (equivalent) {
		*why = xasprintf("%s: within ±%g%s (equivalence at alpha %g)", fx, mde, u, alpha);
		return VERDICT_UNCHANGED;
	}
	if (s == 0 && (up || down) && fabs(e->change) > mde) {
		*why = xasprintf("%s: beyond ±%g%s", fx, mde, u);
		return VERDICT_CHANGED;
	}
	if (s != 0 && (up || down)) {
		*why = xasprintf("%s%s", fx, (s > 0) == up ? "" : ": the wrong way");
		return (s > 0) == up ? VERDICT_IMPROVED : VERDICT_REGRESSED;
	}
	if (mde > 0)
		*why = xasprintf("%s: the interval reaches beyond ±%g%s; smallest detectable change ±%.2f%s", fx, mde, u,
				 e->mde, u);
	else
		*why = xasprintf("%s: the interval spans 0; smallest detectable change ±%.2f%s", fx, e->mde, u);
	return VERDICT_INCONCLUSIVE;
}

/* No interval: one constant is within any margin, a test decides a direction at most. */
static enum check_outcome check_no_interval(const struct effect *e, enum check_rel rel, double margin, double alpha,
					    char **why)
{
	const char *u = e->points ? " points" : "%";
	bool up, want_up = rel == CHECK_HIGHER, want_down = rel == CHECK_LOWER;

	/* no variation on either side and the same value: the data are one
	 * constant, inside any margin (and never beyond one) */
	if (streq(e->method, "permutation") && e->mean[0] == e->mean[1]) {
		if (margin > 0) {
			*why = xasprintf("every unit of both kernels is %.6g: within ±%g%s", e->mean[0], margin, u);
			return rel == CHECK_SAME ? CHECK_HOLDS : CHECK_FAILS;
		}
		*why = xasprintf("every unit of both kernels is %.6g; no margin declared to call that the same",
				 e->mean[0]);
		return CHECK_INCONCLUSIVE;
	}
	/* a test without an interval: a direction at most, no equivalence */
	/* the direction from the change, or from the means when the baseline's is 0 */
	double dir = isfinite(e->change) ? e->change : e->mean[1] - e->mean[0];

	if (e->p < alpha && isfinite(dir) && dir != 0) {
		up = dir > 0;
		if (isfinite(e->change))
			*why = xasprintf("%+.4g%s, p=%.3g; %s", e->change, u, e->p, e->why ? e->why : "no interval");
		else
			*why = xasprintf("mean %.6g against %.6g, p=%.3g; %s", e->mean[1], e->mean[0], e->p,
					 e->why ? e->why : "no interval");
		if (rel == CHECK_DIFFERS || (want_up && up) || (want_down && !up))
			return CHECK_HOLDS;
		return CHECK_FAILS;
	}
	*why = xasprintf("p=%.3g; %s", e->p, e->why ? e->why : "no interval");
	return CHECK_INCONCLUSIVE;
}

enum check_outcome decide_check(const struct effect *e, enum check_rel rel, double margin, double alpha, char **why)
{
	const char *u = e->points ? " points" : "%";
	_cleanup_free_ char *fx = NULL;
	bool equivalent, up, down, want_up = rel == CHECK_HIGHER;

	if (!e->tested) {
		*why = xstrdup(e->why ? e->why : "not tested");
		return CHECK_INCONCLUSIVE;
	}
	if (isnan(e->lo) || isnan(e->hi))
		return check_no_interval(e, rel, margin, alpha, why);
	fx = fmt_effect(e);
	equivalent = margin > 0 && e->elo > -margin && e->ehi < margin;
	up = e->lo > 0;
	down = e->hi < 0;
	switch (rel) {
	case CHECK_HIGHER:
	case CHECK_LOWER:
		if (want_up ? up : down) {
			*why = xstrdup(fx);
			return CHECK_HOLDS;
		}
		if (want_up ? down : up) {
			*why = xasprintf("%s: the other way", fx);
			return CHECK_FAILS;
		}
		break;
	case CHECK_DIFFERS:
		if (up || down) {
			*why = xstrdup(fx);
			return CHECK_HOLDS;
		}
		break;
	case CHECK_SAME:
		if (equivalent) {
			*why = xasprintf("%s: within ±%g%s (equivalence at alpha %g)", fx, margin, u, alpha);
			return CHECK_HOLDS;
		}
		if ((up || down) && fabs(e->change) > margin) {
			*why = xasprintf("%s: beyond ±%g%s", fx, margin, u);
			return CHECK_FAILS;
		}
		*why = margin > 0 ? xasprintf("%s: the interval reaches beyond ±%g%s; smallest detectable change ±%.2f%s",
					      fx, margin, u, e->mde, u)
				  : xasprintf("%s: no margin, so sameness cannot be shown", fx);
		return CHECK_INCONCLUSIVE;
	}
	if (equivalent) {
		*why = xasprintf("%s: within ±%g%s (equivalence at alpha %g)", fx, margin, u, alpha);
		return CHECK_FAILS;
	}
	*why = xasprintf("%s: the interval spans 0; smallest detectable change ±%.2f%s", fx, e->mde, u);
	return CHECK_INCONCLUSIVE;
}

double decide_look_alpha(double alpha, unsigned look, unsigned looks)
{
	(void)look;
	return looks > 1 ? alpha / looks : alpha;
}

/* The variance of a boot's mean on the log scale, for CVs in % (NaN within: a run a boot). */
static double log_boot_variance(double cv_between, double cv_within, unsigned m)
{
	return log1p(cv_between * cv_between / 1e4) +
	       (m && !isnan(cv_within) ? log1p(cv_within * cv_within / 1e4) / m : 0);
}

unsigned decide_boots_needed(double cv_between, double cv_within, unsigned m, double mde_pct, double alpha,
			     double power)
{
	double v = log_boot_variance(cv_between, cv_within, m), d = log1p(mde_pct / 100);
	double z = gsl_cdf_ugaussian_Qinv(alpha / 2) + gsl_cdf_ugaussian_Qinv(1 - power), n;

	if (!(mde_pct > 0) || isnan(v))
		return 0;
	/* the normal approximation, then up until Student's t with 2n - 2 df agrees */
	for (n = fmax(2, ceil(2 * v * z * z / (d * d))); n < 1e6; n++) {
		double t = gsl_cdf_tdist_Qinv(alpha / 2, 2 * n - 2) + gsl_cdf_tdist_Qinv(1 - power, 2 * n - 2);

		if (2 * v * t * t / (d * d) <= n)
			break;
	}
	return n >= 1e6 ? 1000000 : (unsigned)n;
}

void decide_variance_parts(const struct side *s, double *mean, double *cv_between, double *cv_within)
{
	struct units u;

	make_units(s, &u);
	*mean = u.mean;
	*cv_between = u.cvb;
	*cv_within = u.cvw;
	free(u.bm);
}

double decide_mde_pct(double cv_between, double cv_within, unsigned m, unsigned boots, double alpha, double power)
{
	double v = log_boot_variance(cv_between, cv_within, m), t;

	if (boots < 2 || isnan(v))
		return NAN;
	t = gsl_cdf_tdist_Qinv(alpha / 2, 2.0 * boots - 2) + gsl_cdf_tdist_Qinv(1 - power, 2.0 * boots - 2);
	return 100 * expm1(t * sqrt(2 * v / boots));
}
