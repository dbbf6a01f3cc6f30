/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/strmap.h"
#include "compare.h"
#include "../util/banned.h"

#define NOISY_RSD 20.0
#define MIN_RUNS 3

static const char *const verdict_names[] = {
	[VERDICT_IMPROVED] = "improved",
	[VERDICT_REGRESSED] = "regressed",
	[VERDICT_UNCHANGED] = "unchanged",
	[VERDICT_INCONCLUSIVE] = "inconclusive",
	[VERDICT_CHANGED] = "changed",
};

const char *verdict_name(enum verdict v)
{
	return verdict_names[v];
}

/* perf-profile rows: the smallest change in points listed among the changes */
#define PROFILE_MIN_POINTS 0.1

bool metric_is_percentage(const char *name)
{
	if (str_endswith(name, "%") || str_endswith(name, "_pct"))
		return true;
	return str_startswith(name, "perf-profile.") && !streq(name, "perf-profile.samples");
}

/* Values of one metric per variant, gathered while scanning the runs. */
struct values {
	double *v;
	size_t n, alloc;
};

struct gather {
	const char *metric;
	struct values *per; /* per variant */
};

static void delta(const struct sample_stats *a, const struct sample_stats *b, const char *metric, double conf,
		  struct cmp_delta *d)
{
	double scale;

	d->have = a->n && b->n;
	if (!d->have)
		return;
	d->points = metric_is_percentage(metric);
	stats_welch(a, b, conf, &d->w);
	scale = d->points ? 1 : (a->mean != 0 ? 100 / fabs(a->mean) : NAN);
	d->change = d->w.diff * scale;
	d->lo = d->w.lo * scale;
	d->hi = d->w.hi * scale;
	d->mde = d->w.mde * scale;
	d->separate = stats_ranges_separate(a, b);
	d->significant = d->w.ok && d->w.p < 1 - conf;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct cmp_row *a = x, *b = y;

	if (a->significant != b->significant)
		return a->significant ? -1 : 1;
	return strcmp(a->metric, b->metric);
}

static double max_abs_change(const struct cmp_row *r, size_t nv)
{
	double m = 0;

	for (size_t v = 1; v < nv; v++)
		if (r->d[v].have && isfinite(r->d[v].change) && fabs(r->d[v].change) > m)
			m = fabs(r->d[v].change);
	return m;
}

static size_t g_nv; /* qsort has no context argument */

static int cmp_rows_sig(const void *x, const void *y)
{
	const struct cmp_row *a = x, *b = y;
	int c = cmp_rows(x, y);

	if (c || !a->significant)
		return c;
	double ma = max_abs_change(a, g_nv), mb = max_abs_change(b, g_nv);

	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->metric, b->metric);
}

static void build_group(const struct result_set *rs, struct comparison *c, struct cmp_group *g)
{
	size_t nv = c->nvariants;
	_cleanup_strmap_ struct strmap idx = STRMAP_INIT;
	struct gather *gs = NULL;
	size_t ng = 0, galloc = 0;

	g->ok = xcalloc(nv, sizeof(size_t));
	g->failed = xcalloc(nv, sizeof(size_t));
	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];
		size_t v = strv_index(&rs->variants, r->variant);

		if (!streq(r->group, g->name))
			continue;
		if (r->status == RUN_FAILED)
			g->failed[v]++;
		if (r->status != RUN_OK)
			continue;
		g->ok[v]++;
		for (size_t k = 0; k < r->nm; k++) {
			size_t at;

			if (!strmap_get(&idx, r->m[k].name, &at)) {
				GROW(gs, galloc, ng + 1);
				gs[ng].metric = r->m[k].name;
				gs[ng].per = xcalloc(nv, sizeof(struct values));
				strmap_put(&idx, r->m[k].name, ng);
				at = ng++;
			}
			struct values *vals = &gs[at].per[v];

			GROW(vals->v, vals->alloc, vals->n + 1);
			vals->v[vals->n++] = r->m[k].value;
		}
	}
	g->rows = xcalloc(ng ? ng : 1, sizeof(*g->rows));
	g->nrows = ng;
	for (size_t i = 0; i < ng; i++) {
		struct cmp_row *row = &g->rows[i];

		row->metric = gs[i].metric;
		row->s = xcalloc(nv, sizeof(*row->s));
		row->d = xcalloc(nv, sizeof(*row->d));
		for (size_t v = 0; v < nv; v++) {
			stats_describe(gs[i].per[v].v, gs[i].per[v].n, &row->s[v]);
			if (row->s[v].n > 1 && row->s[v].rsd_pct >= NOISY_RSD)
				row->noisy = true;
			free(gs[i].per[v].v);
		}
		for (size_t v = 1; v < nv; v++) {
			delta(&row->s[0], &row->s[v], row->metric, c->conf, &row->d[v]);
			/* a profile share moves in steps of one sample: a change of less than
			 * PROFILE_MIN_POINTS is listed with --all, not among the changes */
			if (row->d[v].significant &&
			    (!str_startswith(row->metric, "perf-profile.") || fabs(row->d[v].change) >= PROFILE_MIN_POINTS))
				row->significant = true;
		}
		free(gs[i].per);
	}
	free(gs);
	g_nv = nv;
	qsort(g->rows, g->nrows, sizeof(*g->rows), cmp_rows_sig);
}

static const struct cmp_row *find_row(const struct cmp_group *g, const char *metric)
{
	for (size_t i = 0; i < g->nrows; i++)
		if (streq(g->rows[i].metric, metric))
			return &g->rows[i];
	return NULL;
}

/*
 * An expectation of a job with a matrix (stress-ng stressor: [switch, sem])
 * names metrics that only some of its groups produce: one no run of this
 * group reported while another group of the job did is not this group's.
 * Missing everywhere, it stays, and says so.
 */
static bool applies(const struct comparison *c, const struct cmp_group *g, const struct result_expect *e)
{
	if (find_row(g, e->metric) || str_startswith(e->metric, "perf-profile."))
		return true;
	for (size_t k = 0; k < c->ngroups; k++)
		if (&c->groups[k] != g && c->groups[k].job == g->job && find_row(&c->groups[k], e->metric))
			return false;
	return true;
}

/* why a metric has no value on one side or both: the verdict stays inconclusive */
static char *why_missing(const struct comparison *c, const struct cmp_group *g, const struct cmp_row *row,
			 const struct result_expect *e, size_t v)
{
	/* a profile has rows only for the symbols it sampled: absent is "too rare to see", not a failure */
	bool profile = str_startswith(e->metric, "perf-profile.");

	/* runs that failed explain a missing value; runs that all ended well mean nothing was measured by that name */
	bool failures = g->failed[0] || g->failed[v];

	if (!row && profile)
		return xstrdup("neither kernel's profile sampled this symbol: too rare here, or it runs "
			       "with interrupts off, where cpu-clock (no PMU) never samples");
	if (!row && failures)
		return xasprintf("no run of either kernel reported it; runs failed: %zu of %s, %zu of %s", g->failed[0],
				 c->rs->variants.v[0], g->failed[v], c->rs->variants.v[v]);
	if (!row)
		return xstrdup("no run of either kernel reported it, and none failed: the monitors measured "
			       "nothing by that name here");
	if (profile)
		return xstrdup("only one kernel's profile sampled this symbol");
	if (failures)
		return xasprintf("no value on one side; runs failed: %zu of %s, %zu of %s", g->failed[0],
				 c->rs->variants.v[0], g->failed[v], c->rs->variants.v[v]);
	return xstrdup("no value on one side, and no run failed: one kernel's runs did not measure it");
}

/* an expectation of no change beyond ±want */
static void judge_unchanged(const struct comparison *c, const struct cmp_delta *d, double want, const char *unit,
			    struct cmp_verdict *out)
{
	if (d->lo >= -want && d->hi <= want) {
		out->v = VERDICT_UNCHANGED;
		out->why = xasprintf("the %.0f%% interval [%+.2f, %+.2f]%s is within ±%g%s", c->conf * 100, d->lo, d->hi,
				     unit, want, unit);
	} else if (d->significant && fabs(d->change) > want) {
		out->v = VERDICT_CHANGED;
		out->why = xasprintf("changed by %+.2f%s (p=%.3g), beyond ±%g%s", d->change, unit, d->w.p, want, unit);
	} else {
		out->why = xasprintf("the %.0f%% interval [%+.2f, %+.2f]%s is wider than ±%g%s; smallest detectable change ±%.2f%s",
				     c->conf * 100, d->lo, d->hi, unit, want, unit, d->mde, unit);
	}
}

/* an expected increase or decrease of at least want */
static void judge_direction(const struct comparison *c, const struct result_expect *e, const struct cmp_delta *d,
			    double want, const char *unit, struct cmp_verdict *out)
{
	/* sign = +1 when up is the expected way */
	double sign = e->dir == DIR_INCREASE ? 1 : -1;
	double ch = sign * d->change, lo = sign > 0 ? d->lo : -d->hi, hi = sign > 0 ? d->hi : -d->lo;

	if (d->significant && ch > 0) {
		if (ch >= want) {
			out->v = VERDICT_IMPROVED;
			out->why = xasprintf("%+.2f%s (p=%.3g, %.0f%% interval [%+.2f, %+.2f]%s)", d->change, unit,
					     d->w.p, c->conf * 100, d->lo, d->hi, unit);
		} else {
			out->v = VERDICT_UNCHANGED;
			out->why = xasprintf("a significant %+.2f%s (p=%.3g) is below the declared %g%s", d->change, unit,
					     d->w.p, want, unit);
		}
	} else if (d->significant) {
		out->v = VERDICT_REGRESSED;
		out->why = xasprintf("%+.2f%s the wrong way (p=%.3g, %.0f%% interval [%+.2f, %+.2f]%s)", d->change, unit,
				     d->w.p, c->conf * 100, d->lo, d->hi, unit);
	} else if (want > 0 && hi < want && lo > -want) {
		out->v = VERDICT_UNCHANGED;
		out->why = xasprintf("no significant change (p=%.3g); the %.0f%% interval [%+.2f, %+.2f]%s excludes the declared %g%s",
				     d->w.p, c->conf * 100, d->lo, d->hi, unit, want, unit);
	} else {
		out->why = xasprintf("no significant change (p=%.3g); the %.0f%% interval [%+.2f, %+.2f]%s is too wide to decide; smallest detectable change ±%.2f%s",
				     d->w.p, c->conf * 100, d->lo, d->hi, unit, d->mde, unit);
	}
}

static void judge(struct comparison *c, const struct cmp_group *g, const struct result_expect *e, size_t v)
{
	const struct cmp_row *row = find_row(g, e->metric);
	struct cmp_verdict *out;
	const char *unit;
	double want;

	GROW(c->verdicts, c->valloc, c->nverdicts + 1);
	out = &c->verdicts[c->nverdicts++];
	memset(out, 0, sizeof(*out));
	out->group = g->name;
	out->metric = e->metric;
	out->variant = c->rs->variants.v[v];
	out->expect = e;
	out->v = VERDICT_INCONCLUSIVE;
	if (!row || !row->d[v].have) {
		out->why = why_missing(c, g, row, e, v);
		return;
	}
	const struct cmp_delta *d = &row->d[v];

	out->d = d;
	out->na = row->s[0].n;
	out->nb = row->s[v].n;
	unit = d->points ? " points" : "%";
	if (out->na < MIN_RUNS || out->nb < MIN_RUNS) {
		out->why = xasprintf("%zu and %zu runs: fewer than %d a side", out->na, out->nb, MIN_RUNS);
		return;
	}
	if (!isfinite(d->change)) {
		out->why = xstrdup("the baseline mean is 0: no relative change");
		return;
	}
	want = e->has_effect ? e->effect * 100 : (e->dir == DIR_UNCHANGED ? 1.0 : 0);
	if (e->dir == DIR_UNCHANGED)
		judge_unchanged(c, d, want, unit, out);
	else
		judge_direction(c, e, d, want, unit, out);
}

const char *obs_state_name(enum obs_state s)
{
	return s == OBS_HOLDS ? "holds" : s == OBS_FAILS ? "FAILS" : "missing";
}

/* A mechanism must show in every run: the comparisons look at the runs' range. */
static bool obs_holds(const struct result_observe *o, const struct sample_stats *s, const struct sample_stats *b)
{
	switch (o->rel) {
	case OBS_EQ: return s->min == o->value && s->max == o->value;
	case OBS_LT: return s->max < o->value;
	case OBS_LE: return s->max <= o->value;
	case OBS_GT: return s->min > o->value;
	case OBS_GE: return s->min >= o->value;
	case OBS_HIGHER: return s->min > b->max;
	case OBS_LOWER: return s->max < b->min;
	case OBS_DIFFERS: return s->min > b->max || s->max < b->min;
	case OBS_SAME: return !(s->min > b->max || s->max < b->min);
	}
	return false;
}

static void add_obs(struct comparison *c, const struct result_observe *o, const char *group, size_t v,
		    const struct cmp_row *row)
{
	struct cmp_observation *x;
	bool vs = o->rel >= OBS_HIGHER;

	GROW(c->obs, c->oalloc, c->nobs + 1);
	x = &c->obs[c->nobs++];
	memset(x, 0, sizeof(*x));
	x->o = o;
	x->group = group;
	x->variant = c->rs->variants.v[v];
	x->state = OBS_MISSING;
	if (!row)
		return;
	x->s = row->s[v];
	if (vs)
		x->base = row->s[0];
	if (x->s.n && (!vs || x->base.n))
		x->state = obs_holds(o, &x->s, &x->base) ? OBS_HOLDS : OBS_FAILS;
}

/* "pcp-auto" names every step of its sweep (pcp-auto@1, @3 ...). */
static bool kernel_listed(const struct strv *kernels, const char *variant)
{
	for (size_t i = 0; i < kernels->n; i++) {
		size_t n = strlen(kernels->v[i]);

		if (streq(kernels->v[i], variant) || (!strncmp(kernels->v[i], variant, n) && variant[n] == '@'))
			return true;
	}
	return false;
}

/* Each observe entry, per kernel it names and group whose runs report the metric. */
static void observe(struct comparison *c)
{
	const struct result_set *rs = c->rs;

	for (size_t i = 0; i < rs->nobserve; i++) {
		const struct result_observe *o = &rs->observe[i];

		for (size_t v = 0; v < c->nvariants; v++) {
			bool found = false;

			if (o->kernels.n ? !kernel_listed(&o->kernels, rs->variants.v[v]) : (o->rel >= OBS_HIGHER && v == 0))
				continue;
			for (size_t g = 0; g < c->ngroups; g++) {
				const struct cmp_row *row = find_row(&c->groups[g], o->metric);

				if (row) {
					add_obs(c, o, c->groups[g].name, v, row);
					found = true;
				}
			}
			if (!found)
				add_obs(c, o, NULL, v, NULL);
		}
	}
}

struct comparison *compare_build(const struct result_set *rs, double conf)
{
	struct comparison *c = xcalloc(1, sizeof(*c));
	size_t galloc = 0;

	c->rs = rs;
	c->conf = conf;
	c->nvariants = rs->variants.n;
	for (size_t i = 0; i < rs->n; i++) {
		bool seen = false;

		for (size_t g = 0; g < c->ngroups && !seen; g++)
			seen = streq(c->groups[g].name, rs->runs[i].group);
		if (seen)
			continue;
		GROW(c->groups, galloc, c->ngroups + 1);
		memset(&c->groups[c->ngroups], 0, sizeof(c->groups[0]));
		c->groups[c->ngroups].name = rs->runs[i].group;
		c->groups[c->ngroups++].job = rs->runs[i].job;
	}
	for (size_t g = 0; g < c->ngroups; g++)
		build_group(rs, c, &c->groups[g]);
	for (size_t g = 0; g < c->ngroups; g++)
		for (size_t e = 0; e < rs->nexpect; e++)
			if (rs->expect[e].job == c->groups[g].job && applies(c, &c->groups[g], &rs->expect[e]))
				for (size_t v = 1; v < c->nvariants; v++)
					judge(c, &c->groups[g], &rs->expect[e], v);
	observe(c);
	return c;
}

void comparison_free(struct comparison *c)
{
	if (!c)
		return;
	for (size_t g = 0; g < c->ngroups; g++) {
		for (size_t r = 0; r < c->groups[g].nrows; r++) {
			free(c->groups[g].rows[r].s);
			free(c->groups[g].rows[r].d);
		}
		free(c->groups[g].rows);
		free(c->groups[g].ok);
		free(c->groups[g].failed);
	}
	for (size_t v = 0; v < c->nverdicts; v++)
		free(c->verdicts[v].why);
	free(c->verdicts);
	free(c->obs);
	free(c->groups);
	free(c);
}

bool cmp_is_expected(const struct comparison *c, const struct cmp_group *g, const char *metric)
{
	for (size_t i = 0; i < c->nverdicts; i++)
		if (c->verdicts[i].group == g->name && streq(c->verdicts[i].metric, metric))
			return true;
	return false;
}
