/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "attrib.h"
#include "stats.h"
#include "../util/banned.h"

static const char *const state_names[] = { [STEP_CHANGES] = "changes", [STEP_UNCHANGED] = "unchanged",
					   [STEP_UNDECIDED] = "undecided" };

const char *step_state_name(enum step_state s)
{
	return (unsigned)s < ELEMENTSOF(state_names) ? state_names[s] : "?";
}

/* The expectation of metric in group g, or NULL. */
static const struct result_expect *expectation(const struct comparison *c, const struct cmp_group *g,
					       const char *metric)
{
	const struct result_set *rs = c->rs;

	if (!cmp_is_expected(c, g, metric))
		return NULL;
	for (size_t i = 0; i < rs->nexpect; i++)
		if (rs->expect[i].job == g->job && streq(rs->expect[i].metric, metric))
			return &rs->expect[i];
	return NULL;
}

/* A sequential design looks at the chain at every look: the levels split as its declared verdicts' are. */
static double spent(const struct decide_params *dp, double level)
{
	if (!dp->sequential || dp->max_boots <= dp->min_boots)
		return level;
	return decide_look_alpha(level, 1, dp->max_boots - dp->min_boots + 1);
}

static void judge_step(const struct attribution *a, const struct attrib_row *r, struct attrib_step *st)
{
	const struct effect *e = &st->e;
	bool apart = isnan(e->lo) ? isfinite(e->change) && e->change != 0 : e->lo > 0 || e->hi < 0;
	bool equivalent = r->mde > 0 && !isnan(e->elo) && e->elo > -r->mde && e->ehi < r->mde;
	bool enough = e->runs[0] >= CMP_MIN_RUNS && e->runs[1] >= CMP_MIN_RUNS;

	/* a profile share moves in steps of one sample: under CMP_PROFILE_MIN_POINTS it is no change */
	if (str_startswith(r->metric, "perf-profile.") && !(fabs(e->change) >= CMP_PROFILE_MIN_POINTS))
		enough = false;
	st->state = STEP_UNDECIDED;
	st->mde = STEP_MDE_NONE;
	if (st->have && e->tested && !isnan(st->q) && st->q <= a->q && enough && (!r->declared || !r->mde || apart)) {
		st->state = STEP_CHANGES;
		if (r->mde > 0) {
			bool clears = !isnan(e->lo) && (e->change > 0 ? e->lo >= r->mde : e->hi <= -r->mde);

			st->mde = clears ? STEP_MDE_CLEARS : equivalent ? STEP_MDE_WITHIN : STEP_MDE_UNSETTLED;
		}
	} else if (st->have && e->tested && equivalent && enough) {
		st->state = STEP_UNCHANGED;
	}
}

/* Every row of every group, each step through the decision engine. */
static void build_rows(struct attribution *a, const struct comparison *c)
{
	const struct decide_params *dp = &c->rs->decide;
	size_t n = 0, k = 0;

	for (size_t g = 0; g < c->ngroups; g++)
		n += c->groups[g].nrows;
	a->rows = xcalloc(n ? n : 1, sizeof(*a->rows));
	/* per group: the declared metrics first, then the others in the comparison's order */
	for (size_t g = 0; g < c->ngroups; g++)
		for (size_t i = 0; i < 2 * c->groups[g].nrows; i++) {
			const struct cmp_group *gr = &c->groups[g];
			const struct cmp_row *row = &gr->rows[i % gr->nrows];
			const struct result_expect *x = expectation(c, gr, row->metric);
			struct attrib_row *r;
			enum stat_method m = x && x->method >= 0 ? (enum stat_method)x->method : dp->method;

			if ((x != NULL) != (i < gr->nrows))
				continue;
			r = &a->rows[a->nrows++];

			r->group = gr->name;
			r->metric = row->metric;
			r->declared = x != NULL;
			r->mde = !x ? 0 : x->has_effect ? x->effect * 100 : x->dir == DIR_UNCHANGED ? 1.0 : 0;
			r->steps = xcalloc(a->nchain, sizeof(*r->steps));
			for (size_t s = 0; s + 1 < a->nchain; s++) {
				struct attrib_step *st = &r->steps[s];
				struct side from, to;

				cmp_row_side(row, a->variant[s], &from);
				cmp_row_side(row, a->variant[s + 1], &to);
				st->q = NAN;
				st->have = from.n && to.n;
				st->e.change = st->e.lo = st->e.hi = st->e.elo = st->e.ehi = st->e.p = st->e.mde = NAN;
				if (!st->have)
					continue;
				decide_effect(&from, &to, metric_is_percentage(row->metric), m, a->alpha, dp->power,
					      cmp_seed(row->metric), &st->e);
				k += st->e.tested;
			}
		}
	a->tests = k;
}

/* q over the family (every tested step of every row), then each step's state. */
static void judge_rows(struct attribution *a)
{
	size_t n = a->nrows * (a->nchain - 1), k = 0;
	_cleanup_free_ double *p = xcalloc(n + 1, sizeof(double)), *q = xcalloc(n + 1, sizeof(double));

	for (size_t r = 0; r < a->nrows; r++)
		for (size_t s = 0; s + 1 < a->nchain; s++) {
			const struct attrib_step *st = &a->rows[r].steps[s];

			p[k++] = st->have && st->e.tested ? st->e.p : NAN;
		}
	stats_bh(p, n, q);
	k = 0;
	for (size_t r = 0; r < a->nrows; r++) {
		struct attrib_row *row = &a->rows[r];

		for (size_t s = 0; s + 1 < a->nchain; s++) {
			row->steps[s].q = q[k++];
			judge_step(a, row, &row->steps[s]);
			row->listed |= row->steps[s].state == STEP_CHANGES;
		}
		row->listed |= row->declared;
	}
}

struct attribution *attrib_build(const struct comparison *c, const struct result_series *s)
{
	struct attribution *a = xcalloc(1, sizeof(*a));

	a->series = s;
	a->alpha = spent(&c->rs->decide, c->rs->decide.alpha);
	a->q = spent(&c->rs->decide, c->rs->decide.q);
	a->chain = xcalloc(s->chain.n + 1, sizeof(size_t));
	a->variant = xcalloc(s->chain.n + 1, sizeof(size_t));
	for (size_t i = 0; i < s->chain.n; i++) {
		ssize_t v = strv_index(&c->rs->variants, s->chain.v[i]);

		if (v < 0 || (size_t)v >= c->nvariants)
			continue;
		a->chain[a->nchain] = i;
		a->variant[a->nchain++] = (size_t)v;
	}
	if (a->nchain < 2) {
		a->nchain = 0;
		return a;
	}
	build_rows(a, c);
	judge_rows(a);
	return a;
}

void attribution_free(struct attribution *a)
{
	if (!a)
		return;
	for (size_t r = 0; r < a->nrows; r++)
		free(a->rows[r].steps);
	free(a->rows);
	free(a->chain);
	free(a->variant);
	free(a);
}

/* "@3" for a step of the series, else the variant's name. */
static void short_name(const struct attribution *a, size_t entry, struct strbuf *out)
{
	const struct result_series *s = a->series;
	size_t i = a->chain[entry];

	if (s->steps[i])
		strbuf_addf(out, "@%u", s->steps[i]);
	else
		strbuf_addstr(out, s->chain.v[i]);
}

void attrib_step_name(const struct attribution *a, size_t step, struct strbuf *out)
{
	short_name(a, step, out);
	strbuf_addstr(out, "->");
	short_name(a, step + 1, out);
}

void attrib_step_patches(const struct attribution *a, size_t step, unsigned *first, unsigned *last)
{
	*first = a->series->steps[a->chain[step]] + 1;
	*last = a->series->steps[a->chain[step + 1]];
}

/* "-5.1% [-7.9, -2.3]%", or without an interval "-5.1%". */
static void fmt_change(const struct effect *e, struct strbuf *out)
{
	const char *u = e->points ? " points" : "%";

	if (!isfinite(e->change)) { /* from 0: no ratio to give */
		strbuf_addf(out, "from %.4g to %.4g", e->mean[0], e->mean[1]);
		return;
	}
	strbuf_addf(out, "%+.1f%s", e->change, u);
	if (!isnan(e->lo))
		strbuf_addf(out, " [%+.1f, %+.1f]%s", e->lo, e->hi, u);
}

/* "at patch 7 (q=0.01; subject)", "between @5 and @7 (q=0.01; patches 6-7: s6; s7)" */
static void fmt_where(const struct attribution *a, const struct attrib_row *r, size_t s, struct strbuf *out)
{
	const struct attrib_step *st = &r->steps[s];
	const char *u = st->e.points ? " points" : "%";
	unsigned first, last;

	attrib_step_patches(a, s, &first, &last);
	if (first == last) {
		strbuf_addf(out, " at patch %u", first);
	} else {
		strbuf_addstr(out, " between ");
		short_name(a, s, out);
		strbuf_addstr(out, " and ");
		short_name(a, s + 1, out);
	}
	strbuf_addf(out, " (q=%.2g", st->q);
	if (st->mde == STEP_MDE_CLEARS)
		strbuf_addf(out, ", clears the %g%s mde", r->mde, u);
	else if (st->mde == STEP_MDE_WITHIN)
		strbuf_addf(out, ", within the %g%s mde", r->mde, u);
	else if (st->mde == STEP_MDE_UNSETTLED)
		strbuf_addf(out, ", the %g%s mde unsettled", r->mde, u);
	if (first < last)
		strbuf_addf(out, "; patches %u-%u", first, last);
	for (unsigned k = first, n = 0; k <= last; k++) {
		const char *subject = result_series_subject(a->series, k);

		if (!subject)
			continue;
		strbuf_addstr(out, n++ ? "; " : first < last ? ": " : "; ");
		strbuf_addstr(out, subject);
	}
	strbuf_addch(out, ')');
}

void attrib_summary(const struct attribution *a, const struct attrib_row *r, struct strbuf *out)
{
	size_t changes = 0, undecided = 0;

	strbuf_addstr(out, r->metric);
	strbuf_addstr(out, ":");
	for (size_t s = 0; s + 1 < a->nchain; s++) {
		if (r->steps[s].state != STEP_CHANGES)
			continue;
		strbuf_addstr(out, changes++ ? ", " : " ");
		fmt_change(&r->steps[s].e, out);
		fmt_where(a, r, s, out);
	}
	strbuf_addstr(out, changes ? ", no other step" : " no step changes");
	for (size_t s = 0; s + 1 < a->nchain; s++) {
		if (r->steps[s].state != STEP_UNDECIDED)
			continue;
		strbuf_addstr(out, undecided++ ? ", " : "; undecided steps: ");
		attrib_step_name(a, s, out);
	}
}

bool attrib_undecided(const struct attribution *a, const struct attrib_row **ret_row, size_t *ret_step)
{
	for (size_t r = 0; r < a->nrows; r++)
		for (size_t s = 0; a->rows[r].declared && s + 1 < a->nchain; s++)
			if (a->rows[r].steps[s].state == STEP_UNDECIDED) {
				*ret_row = &a->rows[r];
				*ret_step = s;
				return true;
			}
	return false;
}
