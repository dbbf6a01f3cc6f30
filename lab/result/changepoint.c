/* SPDX-License-Identifier: MIT */
/* Change points in a series of commits: see changepoint.h. */
#include "result/changepoint.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "result/stats.h"
#include "util/alloc.h"
#include "util/macro.h"

/* A segment: commits [a, b), their boots [bound[a], bound[b]). */
struct seg {
	size_t a, b;
};

/*
 * The largest pooled |t| over the splits of commits [a, b), v holding the
 * segment's boots (centred: the sums stay small whatever the figures'
 * size), bound[] the first boot of each commit relative to the segment.
 * *at: the split (the first commit after it); 0 when no split has a
 * variance to pool.
 */
static double max_t(const double *v, const size_t *bound, size_t a, size_t b, size_t *at)
{
	size_t n = bound[b] - bound[a];
	double tot = 0, totsq = 0, best = -1;

	for (size_t i = 0; i < n; i++) {
		tot += v[i];
		totsq += v[i] * v[i];
	}
	*at = 0;
	double sl = 0, sql = 0;
	size_t i = 0;
	for (size_t k = a + 1; k < b; k++) {
		for (; i < bound[k] - bound[a]; i++) {
			sl += v[i];
			sql += v[i] * v[i];
		}
		size_t nl = i, nr = n - i;
		if (nl + nr < 3)
			continue;
		double ml = sl / (double)nl, mr = (tot - sl) / (double)nr;
		double ss = (sql - sl * ml) + ((totsq - sql) - (tot - sl) * mr);
		double s2 = ss > 0 ? ss / (double)(nl + nr - 2) : 0;
		double d = fabs(ml - mr), t;
		/* a variance below rounding with different means: as far apart as can be */
		if (s2 <= 1e-300 || s2 * 1e24 < d * d)
			t = d > 0 ? HUGE_VAL : 0;
		else
			t = d / sqrt(s2 * (1.0 / (double)nl + 1.0 / (double)nr));
		if (t > best) {
			best = t;
			*at = k;
		}
	}
	return best < 0 ? 0 : best;
}

static void shuffle(double *v, size_t n, uint64_t *state)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = (size_t)(stats_uniform(state) * (double)i);
		double x;

		if (j >= i)
			j = i - 1;
		x = v[i - 1];
		v[i - 1] = v[j];
		v[j] = x;
	}
}

/* The split of [a, b) if significant: true and *pt filled. */
static bool split(const double *value, const size_t *bound, struct seg s, double alpha, const struct cp_opts *o,
		  struct cp_point *pt)
{
	size_t lo = bound[s.a], n = bound[s.b] - lo, at, at_perm, ge = 0;
	_cleanup_free_ double *v = NULL, *w = NULL;
	double mean = 0, tobs;
	uint64_t state = o->seed ^ (0x9e3779b97f4a7c15ULL * (uint64_t)(s.a + 1)) ^ ((uint64_t)s.b << 32);

	if (s.b - s.a < 2 || n < 3)
		return false;
	v = xmalloc(n * sizeof(*v));
	w = xmalloc(n * sizeof(*w));
	for (size_t i = 0; i < n; i++)
		mean += value[lo + i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		v[i] = value[lo + i] - mean;
	tobs = max_t(v, bound, s.a, s.b, &at);
	if (!at || tobs <= 0)
		return false;
	memcpy(w, v, n * sizeof(*w));
	for (unsigned r = 0; r < o->perms; r++) {
		shuffle(w, n, &state);
		/* ties within rounding count as at least as large */
		if (max_t(w, bound, s.a, s.b, &at_perm) >= tobs * (1 - 1e-12))
			ge++;
	}
	pt->p = (double)(ge + 1) / (double)(o->perms + 1);
	if (pt->p > alpha)
		return false;
	pt->at = at;
	pt->t = tobs;
	return true;
}

/* The figures of change point pt: the boots of the commits from the
 * change before it (or the first commit) against those up to the next. */
static void describe(const double *value, const size_t *bound, size_t from, size_t to, struct cp_point *pt)
{
	struct sample_stats sb, sa;
	struct welch wt;

	stats_describe(value + bound[from], bound[pt->at] - bound[from], &sb);
	stats_describe(value + bound[pt->at], bound[to] - bound[pt->at], &sa);
	stats_welch(&sb, &sa, 0.95, &wt);
	pt->before = sb.mean;
	pt->after = sa.mean;
	pt->nbefore = sb.n;
	pt->nafter = sa.n;
	pt->change_pct = sb.mean != 0 ? 100 * (sa.mean - sb.mean) / fabs(sb.mean) : NAN;
	pt->lo_pct = wt.ok && sb.mean != 0 ? 100 * wt.lo / fabs(sb.mean) : NAN;
	pt->hi_pct = wt.ok && sb.mean != 0 ? 100 * wt.hi / fabs(sb.mean) : NAN;
}

static int by_at(const void *x, const void *y)
{
	const struct cp_point *a = x, *b = y;

	return a->at < b->at ? -1 : a->at > b->at;
}

int cp_detect(const double *value, const size_t *commit, size_t n, size_t ncommits, const struct cp_opts *o,
	      struct cp_point **out, size_t *nout)
{
	_cleanup_free_ size_t *bound = NULL;
	_cleanup_free_ struct seg *stack = NULL;
	struct cp_point *pts = NULL;
	size_t npts = 0, top = 0;

	*out = NULL;
	*nout = 0;
	if (!o || !(o->alpha > 0 && o->alpha < 1) || o->perms < 19 || (n && (!value || !commit)))
		return -EINVAL;
	if (!ncommits)
		return n ? -EINVAL : 0;
	bound = xcalloc(ncommits + 1, sizeof(*bound));
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(value[i]) || commit[i] >= ncommits || (i && commit[i] < commit[i - 1]))
			return -EINVAL;
		bound[commit[i] + 1]++;
	}
	for (size_t c = 0; c < ncommits; c++) {
		if (!bound[c + 1])
			return -EINVAL;
		bound[c + 1] += bound[c];
	}
	/* at most ncommits - 1 splits, each pushing two segments */
	stack = xcalloc(2 * ncommits + 1, sizeof(*stack));
	pts = xcalloc(ncommits, sizeof(*pts));
	stack[top++] = (struct seg){ 0, ncommits };
	while (top) {
		struct seg s = stack[--top];
		struct cp_point pt;

		/* alpha shared by length: the segments searched after a split
		 * spend together no more than the one split */
		if (!split(value, bound, s, o->alpha * (double)(s.b - s.a) / (double)ncommits, o, &pt))
			continue;
		pts[npts++] = pt;
		stack[top++] = (struct seg){ s.a, pt.at };
		stack[top++] = (struct seg){ pt.at, s.b };
	}
	qsort(pts, npts, sizeof(*pts), by_at);
	for (size_t i = 0; i < npts; i++)
		describe(value, bound, i ? pts[i - 1].at : 0, i + 1 < npts ? pts[i + 1].at : ncommits, &pts[i]);
	*out = pts;
	*nout = npts;
	return 0;
}
