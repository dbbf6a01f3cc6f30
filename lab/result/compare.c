/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/strmap.h"
#include "compare.h"
#include "../util/banned.h"

#define NOISY_RSD 20.0

bool metric_is_percentage(const char *name)
{
	if (str_endswith(name, "%") || str_endswith(name, "_pct"))
		return true;
	return str_startswith(name, "perf-profile.") && !streq(name, "perf-profile.samples");
}

/*
 * A profile reports only the symbols it sampled, a lock monitor only the
 * locks that were contended: a run that has the monitor's output but not
 * the name saw it 0 times (the kernel test robot fills zeros the same way).
 * The witness is a metric every run of the monitor has.
 */
static const struct {
	const char *prefix, *witness;
} sparse_families[] = {
	{ "perf-profile.self.", "perf-profile.samples" },
	{ "perf-profile.children.", "perf-profile.samples" },
	{ "lock.contention.", "lock.contention." },
	{ "lock_stat.", "lock_stat.classes" },
};

/* The family of a sparse metric (an index into sparse_families), or -1. */
static int sparse_family(const char *metric)
{
	for (size_t i = 0; i < ELEMENTSOF(sparse_families); i++)
		if (str_startswith(metric, sparse_families[i].prefix) && !streq(metric, sparse_families[i].witness))
			return (int)i;
	return -1;
}

/* Per run of the group: a bit for each sparse family whose witness it reported. */
static unsigned *run_witnesses(const struct result_set *rs, const struct cmp_group *g)
{
	unsigned *w = xcalloc(rs->n + 1, sizeof(unsigned));

	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];

		if (!streq(r->group, g->name) || r->status != RUN_OK)
			continue;
		for (size_t k = 0; k < r->nm; k++)
			for (size_t f = 0; f < ELEMENTSOF(sparse_families); f++)
				if (str_startswith(r->m[k].name, sparse_families[f].witness))
					w[i] |= 1u << f;
	}
	return w;
}

/* Values of one metric per variant with each value's boot, gathered while scanning the runs. */
struct values {
	double *v;
	const char **boot;
	size_t n, alloc, balloc;
};

struct gather {
	const char *metric;
	struct values *per; /* per variant */
	bool *in_run;       /* per run of the result set: it gave a value */
};

static void push_value(struct values *vals, double x, const char *boot)
{
	GROW(vals->v, vals->alloc, vals->n + 1);
	GROW(vals->boot, vals->balloc, vals->n + 1);
	vals->boot[vals->n] = boot;
	vals->v[vals->n++] = x;
}

uint64_t cmp_seed(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static int cmp_rows(const void *x, const void *y)
{
	const struct cmp_row *a = x, *b = y;

	if (a->flagged != b->flagged)
		return a->flagged ? -1 : 1;
	return strcmp(a->metric, b->metric);
}

static double max_abs_change(const struct cmp_row *r, size_t nv)
{
	double m = 0;

	for (size_t v = 1; v < nv; v++)
		if (r->d[v].have && isfinite(r->d[v].e.change) && fabs(r->d[v].e.change) > m)
			m = fabs(r->d[v].e.change);
	return m;
}

static size_t g_nv; /* qsort has no context argument */

static int cmp_rows_flagged(const void *x, const void *y)
{
	const struct cmp_row *a = x, *b = y;
	int c = cmp_rows(x, y);

	if (c || !a->flagged)
		return c;
	double ma = max_abs_change(a, g_nv), mb = max_abs_change(b, g_nv);

	if (ma != mb)
		return ma > mb ? -1 : 1;
	return strcmp(a->metric, b->metric);
}

/* The group's metrics from its runs that ended well: one gather per name. */
static struct gather *gather_group(const struct result_set *rs, const struct cmp_group *g, size_t nv, size_t *ret_n)
{
	_cleanup_strmap_ struct strmap idx = STRMAP_INIT;
	struct gather *gs = NULL;
	size_t ng = 0, galloc = 0;

	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];
		size_t v = strv_index(&rs->variants, r->variant);

		if (!streq(r->group, g->name) || r->status != RUN_OK || v >= nv)
			continue;
		for (size_t k = 0; k < r->nm; k++) {
			size_t at;

			if (!strmap_get(&idx, r->m[k].name, &at)) {
				GROW(gs, galloc, ng + 1);
				gs[ng].metric = r->m[k].name;
				gs[ng].per = xcalloc(nv, sizeof(struct values));
				gs[ng].in_run = xcalloc(rs->n + 1, sizeof(bool));
				strmap_put(&idx, r->m[k].name, ng);
				at = ng++;
			}
			/* a name twice in one run: its first value */
			if (gs[at].in_run[i])
				continue;
			gs[at].in_run[i] = true;
			push_value(&gs[at].per[v], r->m[k].value, r->boot);
		}
	}
	*ret_n = ng;
	return gs;
}

/* A sparse metric's zeros: the runs with its monitor's output and not the name. */
static void fill_zeros(const struct result_set *rs, const struct cmp_group *g, const unsigned *wit, struct gather *x,
		       size_t nv)
{
	int f = sparse_family(x->metric);

	if (f < 0)
		return;
	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];
		size_t v;

		if (x->in_run[i] || !(wit[i] >> f & 1) || !streq(r->group, g->name) || r->status != RUN_OK ||
		    (v = strv_index(&rs->variants, r->variant)) >= nv)
			continue;
		push_value(&x->per[v], 0, r->boot);
	}
}

static void delta(const struct decide_params *dp, const struct values *a, const struct values *b,
		  const char *metric, const struct sample_stats *sa, const struct sample_stats *sb, struct cmp_delta *d)
{
	struct side x = { .v = a->v, .boot = a->boot, .n = a->n }, y = { .v = b->v, .boot = b->boot, .n = b->n };

	d->q = NAN;
	d->have = a->n && b->n;
	d->e.change = d->e.lo = d->e.hi = d->e.mde = d->e.p = NAN;
	if (!d->have)
		return;
	decide_effect(&x, &y, metric_is_percentage(metric), dp->method, dp->alpha, dp->power, cmp_seed(metric), &d->e);
	d->separate = stats_ranges_separate(sa, sb);
}

static void build_group(const struct result_set *rs, struct comparison *c, struct cmp_group *g)
{
	size_t nv = c->nvariants, ng = 0;
	_cleanup_free_ unsigned *wit = NULL;
	struct gather *gs;

	g->ok = xcalloc(nv, sizeof(size_t));
	g->failed = xcalloc(nv, sizeof(size_t));
	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];
		size_t v = strv_index(&rs->variants, r->variant);

		if (!streq(r->group, g->name) || v >= nv)
			continue;
		g->failed[v] += r->status == RUN_FAILED;
		g->ok[v] += r->status == RUN_OK;
	}
	gs = gather_group(rs, g, nv, &ng);
	wit = run_witnesses(rs, g);
	g->rows = xcalloc(ng ? ng : 1, sizeof(*g->rows));
	g->nrows = ng;
	for (size_t i = 0; i < ng; i++) {
		struct cmp_row *row = &g->rows[i];

		fill_zeros(rs, g, wit, &gs[i], nv);
		row->metric = gs[i].metric;
		row->sparse = sparse_family(row->metric) >= 0;
		row->s = xcalloc(nv, sizeof(*row->s));
		row->d = xcalloc(nv, sizeof(*row->d));
		for (size_t v = 0; v < nv; v++) {
			stats_describe(gs[i].per[v].v, gs[i].per[v].n, &row->s[v]);
			if (row->s[v].n > 1 && row->s[v].rsd_pct >= NOISY_RSD)
				row->noisy = true;
		}
		for (size_t v = 1; v < nv; v++)
			delta(&rs->decide, &gs[i].per[0], &gs[i].per[v], row->metric, &row->s[0], &row->s[v], &row->d[v]);
		row->raw = gs[i].per; /* declared rows are judged again at their own alpha */
		free(gs[i].in_run);
	}
	free(gs);
}

/* The exploratory rows' q-values over the whole comparison, then the flags and the order. */
static void flag_rows(struct comparison *c)
{
	size_t n = 0, k = 0;
	_cleanup_free_ double *p = NULL, *q = NULL;

	for (size_t g = 0; g < c->ngroups; g++)
		n += c->groups[g].nrows * c->nvariants;
	p = xcalloc(n + 1, sizeof(double));
	q = xcalloc(n + 1, sizeof(double));
	for (size_t g = 0; g < c->ngroups; g++)
		for (size_t r = 0; r < c->groups[g].nrows; r++)
			for (size_t v = 0; v < c->nvariants; v++) {
				const struct cmp_delta *d = &c->groups[g].rows[r].d[v];
				bool declared = cmp_is_expected(c, &c->groups[g], c->groups[g].rows[r].metric);

				p[k++] = v && d->have && d->e.tested && !declared ? d->e.p : NAN;
			}
	stats_bh(p, n, q);
	k = 0;
	for (size_t g = 0; g < c->ngroups; g++) {
		struct cmp_group *gr = &c->groups[g];

		for (size_t r = 0; r < gr->nrows; r++)
			for (size_t v = 0; v < c->nvariants; v++) {
				struct cmp_row *row = &gr->rows[r];
				struct cmp_delta *d = &row->d[v];

				d->q = q[k++];
				/* a profile share moves in steps of one sample: under CMP_PROFILE_MIN_POINTS it is not listed */
				d->flagged = !isnan(d->q) && d->q <= c->rs->decide.q && d->e.runs[0] >= CMP_MIN_RUNS &&
					     d->e.runs[1] >= CMP_MIN_RUNS &&
					     (!str_startswith(row->metric, "perf-profile.") || fabs(d->e.change) >= CMP_PROFILE_MIN_POINTS);
				row->flagged |= d->flagged;
			}
		g_nv = c->nvariants;
		qsort(gr->rows, gr->nrows, sizeof(*gr->rows), cmp_rows_flagged);
	}
}

static struct cmp_row *find_row(const struct cmp_group *g, const char *metric)
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

/* The look a variant's data is at: boots a side past the minimum (1 of 1 in a fixed design). */
static void look_of(const struct decide_params *dp, const struct effect *e, unsigned *look, unsigned *looks)
{
	size_t boots = e->boots[0] < e->boots[1] ? e->boots[0] : e->boots[1];

	*looks = 1;
	*look = 1;
	if (!dp->sequential || dp->max_boots <= dp->min_boots)
		return;
	*looks = dp->max_boots - dp->min_boots + 1;
	if (boots > dp->min_boots)
		*look = boots - dp->min_boots + 1 > *looks ? *looks : (unsigned)(boots - dp->min_boots + 1);
}

static void judge(struct comparison *c, const struct cmp_group *g, const struct result_expect *e, size_t v)
{
	const struct decide_params *dp = &c->rs->decide;
	struct cmp_row *row = find_row(g, e->metric);
	struct cmp_verdict *out;
	double want;

	GROW(c->verdicts, c->valloc, c->nverdicts + 1);
	out = &c->verdicts[c->nverdicts++];
	memset(out, 0, sizeof(*out));
	out->group = g->name;
	out->metric = e->metric;
	out->variant = c->rs->variants.v[v];
	out->expect = e;
	out->v = VERDICT_INCONCLUSIVE;
	out->alpha = dp->alpha;
	out->look = out->looks = 1;
	out->method = e->method >= 0 ? (enum stat_method)e->method : dp->method;
	if (!row || !row->d[v].have) {
		out->why = why_missing(c, g, row, e, v);
		return;
	}
	struct cmp_delta *d = &row->d[v];
	const struct values *raw = row->raw;
	struct side a = { raw[0].v, raw[0].boot, raw[0].n }, b = { raw[v].v, raw[v].boot, raw[v].n };

	look_of(dp, &d->e, &out->look, &out->looks);
	out->alpha = decide_look_alpha(dp->alpha, out->look, out->looks);
	/* declared: judged at its own alpha and statistic */
	decide_effect(&a, &b, d->e.points, out->method, out->alpha, dp->power, cmp_seed(e->metric), &d->e);
	out->d = d;
	out->na = d->e.runs[0];
	out->nb = d->e.runs[1];
	if (out->na < CMP_MIN_RUNS || out->nb < CMP_MIN_RUNS) {
		out->why = xasprintf("%zu and %zu runs: fewer than %d a side", out->na, out->nb, CMP_MIN_RUNS);
		return;
	}
	want = e->has_effect ? e->effect * 100 : (e->dir == DIR_UNCHANGED ? 1.0 : 0);
	out->v = decide_verdict(&d->e, e->dir, want, out->alpha, &out->why);
}

const char *obs_state_name(enum obs_state s)
{
	return s == OBS_HOLDS ? "holds" : s == OBS_FAILS ? "FAILS" : s == OBS_INCONCLUSIVE ? "inconclusive" : "missing";
}

/* An `is:` check: an invariant of every run, so the runs' range decides it. */
static bool obs_every_run(const struct result_observe *o, const struct sample_stats *s)
{
	switch (o->rel) {
	case OBS_EQ: return s->min == o->value && s->max == o->value;
	case OBS_LT: return s->max < o->value;
	case OBS_LE: return s->max <= o->value;
	case OBS_GT: return s->min > o->value;
	case OBS_GE: return s->min >= o->value;
	default: return false;
	}
}

/* The robot's rule, kept as a column: the runs' ranges do not overlap. */
static bool obs_apart(const struct sample_stats *s, const struct sample_stats *b)
{
	return s->min > b->max || s->max < b->min;
}

/* A vs-baseline check decided as an expectation would be: the kernel's runs
 * against the baseline's, boots as the unit, the experiment's statistic, at
 * the alpha of the look its data is at. "same" without a margin takes the
 * 1% (or 1 point) an "unchanged" expectation takes. */
static void obs_decide(struct comparison *c, struct cmp_observation *x, const struct cmp_row *row, size_t v)
{
	static const enum check_rel rels[] = {
		[OBS_HIGHER] = CHECK_HIGHER, [OBS_LOWER] = CHECK_LOWER,
		[OBS_DIFFERS] = CHECK_DIFFERS, [OBS_SAME] = CHECK_SAME,
	};
	const struct decide_params *dp = &c->rs->decide;
	const struct values *raw = row->raw;
	struct side a = { raw[0].v, raw[0].boot, raw[0].n }, b = { raw[v].v, raw[v].boot, raw[v].n };
	unsigned look, looks;
	enum check_outcome out;

	look_of(dp, &row->d[v].e, &look, &looks);
	x->alpha = decide_look_alpha(dp->alpha, look, looks);
	decide_effect(&a, &b, row->d[v].e.points, dp->method, x->alpha, dp->power, cmp_seed(x->o->metric), &x->e);
	x->decided = true;
	x->margin = x->o->margin > 0 ? x->o->margin * 100 : x->o->rel == OBS_SAME ? 1.0 : 0;
	x->apart = obs_apart(&x->s, &x->base);
	out = decide_check(&x->e, rels[x->o->rel], x->margin, x->alpha, &x->why);
	x->state = out == CHECK_HOLDS ? OBS_HOLDS : out == CHECK_FAILS ? OBS_FAILS : OBS_INCONCLUSIVE;
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
	if (!x->s.n || (vs && !x->base.n))
		return;
	if (vs)
		obs_decide(c, x, row, v);
	else
		x->state = obs_every_run(o, &x->s) ? OBS_HOLDS : OBS_FAILS;
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

struct comparison *compare_build(const struct result_set *rs)
{
	struct comparison *c = xcalloc(1, sizeof(*c));
	size_t galloc = 0;

	c->rs = rs;
	c->conf = 1 - rs->decide.alpha;
	c->nenv = env_pairs_build(rs, &c->env);
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
	flag_rows(c);
	observe(c);
	return c;
}

void comparison_free(struct comparison *c)
{
	if (!c)
		return;
	free(c->env);
	for (size_t g = 0; g < c->ngroups; g++) {
		for (size_t r = 0; r < c->groups[g].nrows; r++) {
			struct values *raw = c->groups[g].rows[r].raw;

			for (size_t v = 0; raw && v < c->nvariants; v++) {
				free(raw[v].v);
				free(raw[v].boot);
			}
			free(raw);
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
	for (size_t i = 0; i < c->nobs; i++)
		free(c->obs[i].why);
	free(c->obs);
	free(c->groups);
	free(c);
}

void cmp_row_side(const struct cmp_row *r, size_t v, struct side *ret)
{
	const struct values *raw = r->raw;

	*ret = (struct side){ .v = raw[v].v, .boot = raw[v].boot, .n = raw[v].n };
}

bool cmp_is_expected(const struct comparison *c, const struct cmp_group *g, const char *metric)
{
	for (size_t i = 0; i < c->nverdicts; i++)
		if (c->verdicts[i].group == g->name && streq(c->verdicts[i].metric, metric))
			return true;
	return false;
}
