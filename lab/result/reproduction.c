/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/json.h"
#include "../util/table.h"
#include "../util/xml.h"
#include "report.h"
#include "reproduction.h"
#include "../util/banned.h"

#define LABEL_ORIG "original"
#define LABEL_REPRO "reproduction"

static const char *const state_names[] = {
	[REPRO_REPRODUCED] = "reproduced",
	[REPRO_NOT_REPRODUCED] = "not reproduced",
	[REPRO_INCONCLUSIVE] = "inconclusive",
};

const char *repro_state_name(enum repro_state s)
{
	return state_names[s];
}

static const struct cmp_verdict *find_verdict(const struct comparison *c, const struct cmp_verdict *v)
{
	for (size_t i = 0; i < c->nverdicts; i++)
		if (streq(c->verdicts[i].group, v->group) && streq(c->verdicts[i].metric, v->metric) &&
		    streq(c->verdicts[i].variant, v->variant))
			return &c->verdicts[i];
	return NULL;
}

static bool has_interval(const struct cmp_verdict *v)
{
	return v->d && v->d->have && isfinite(v->d->e.lo) && isfinite(v->d->e.hi);
}

static enum repro_state judge_expectation(const struct cmp_verdict *o, const struct cmp_verdict *r, char **why)
{
	bool od = verdict_decided(o->v), rd = r && verdict_decided(r->v);

	if (!r) {
		*why = xstrdup("not measured in the reproduction");
		return REPRO_INCONCLUSIVE;
	}
	if (!od || !rd) {
		if (!od && !rd)
			*why = xstrdup("neither run decided");
		else if (!rd)
			*why = xasprintf("the reproduction could not decide (%s)", r->why ? r->why : "no reason given");
		else
			*why = xasprintf("the original did not decide (%s)", o->why ? o->why : "no reason given");
		return REPRO_INCONCLUSIVE;
	}
	if (o->v != r->v) {
		*why = xasprintf("the verdicts differ: %s vs %s", verdict_name(o->v), verdict_name(r->v));
		return REPRO_NOT_REPRODUCED;
	}
	if (!has_interval(o) || !has_interval(r)) {
		*why = xasprintf("the same verdict, but the %s's effect has no interval to compare",
				 has_interval(o) ? LABEL_REPRO : LABEL_ORIG);
		return REPRO_INCONCLUSIVE;
	}
	if (fmax(o->d->e.lo, r->d->e.lo) <= fmin(o->d->e.hi, r->d->e.hi)) {
		*why = xstrdup("the same verdict, and the effects' intervals overlap");
		return REPRO_REPRODUCED;
	}
	{
		struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, "the same verdict, but the effects' intervals do not overlap: ");
		report_change_text(&o->d->e, &sb);
		strbuf_addstr(&sb, " vs ");
		report_change_text(&r->d->e, &sb);
		*why = strbuf_detach(&sb, NULL);
	}
	return REPRO_NOT_REPRODUCED;
}

static bool same_check(const struct cmp_observation *a, const struct cmp_observation *b)
{
	return streq(a->o->metric, b->o->metric) && a->o->rel == b->o->rel &&
	       (a->o->value == b->o->value || (isnan(a->o->value) && isnan(b->o->value))) &&
	       a->o->margin == b->o->margin &&
	       streq(a->variant, b->variant) && (a->group ? b->group && streq(a->group, b->group) : !b->group);
}

static enum repro_state judge_check(const struct cmp_observation *o, const struct cmp_observation *r, char **why)
{
	if (!r) {
		*why = xstrdup("not checked in the reproduction");
		return REPRO_INCONCLUSIVE;
	}
	if (o->state == OBS_MISSING || r->state == OBS_MISSING) {
		*why = xstrdup(o->state == r->state ? "missing in both runs"
			       : o->state == OBS_MISSING ? "missing in the original"
							 : "missing in the reproduction");
		return REPRO_INCONCLUSIVE;
	}
	if (o->state == OBS_INCONCLUSIVE || r->state == OBS_INCONCLUSIVE) {
		/* what was not decided on one side is neither reproduced nor contradicted */
		*why = o->state == r->state ? xstrdup("inconclusive in both runs")
					    : xasprintf("%s in the original, %s in the reproduction",
							obs_state_name(o->state), obs_state_name(r->state));
		return REPRO_INCONCLUSIVE;
	}
	if (o->state == r->state) {
		*why = xasprintf("%s in both runs", obs_state_name(o->state));
		return REPRO_REPRODUCED;
	}
	*why = xasprintf("%s in the original, %s in the reproduction", obs_state_name(o->state),
			 obs_state_name(r->state));
	return REPRO_NOT_REPRODUCED;
}

/* Both unknown, or the same value. */
static bool same_value(const char *a, const char *b)
{
	return a && b ? streq(a, b) : a == b;
}

/* Each distinct (field, original, reproduction) of the environments of a kernel on both runs. */
static void collect_env(struct reproduction *r, size_t *alloc)
{
	const struct xcmp *x = r->aa;

	for (size_t i = 0; i < x->nenv; i++) {
		const struct xcmp_env *e = &x->env[i];

		/* a kernel only the reproduction has is set against the original's baseline: no A/A */
		if (!streq(strchr(e->a, ':'), strchr(e->b, ':')))
			continue;
		for (size_t k = 0; k < e->n; k++) {
			const struct fp_diff *d = &e->d[k];
			bool seen = false;

			for (size_t j = 0; j < r->nenv && !seen; j++)
				seen = r->env[j].field == d->field && same_value(r->env[j].a, d->a) &&
				       same_value(r->env[j].b, d->b);
			if (seen)
				continue;
			GROW(r->env, *alloc, r->nenv + 1);
			r->env[r->nenv++] = *d;
		}
	}
}

static int cmp_moved(const void *x, const void *y)
{
	const struct repro_moved *a = x, *b = y;
	double ca = fabs(a->d->e.change), cb = fabs(b->d->e.change);
	int c;

	if (ca != cb)
		return ca > cb ? -1 : 1;
	if ((c = strcmp(a->group, b->group)) || (c = strcmp(a->metric, b->metric)))
		return c;
	return strcmp(a->variant, b->variant);
}

/* The A/A part: each reproduction column whose base is the original's same kernel. */
static void collect_moved(struct reproduction *r)
{
	const struct xcmp *x = r->aa;
	size_t n0 = r->orig_rs->variants.n, nalloc = 0, ualloc = 0;

	for (size_t c = n0; c < x->columns.n; c++) {
		const char *variant = r->repro_rs->variants.v[c - n0];
		size_t b = x->base[c];

		if (b >= n0 || !streq(r->orig_rs->variants.v[b], variant))
			continue;
		for (size_t g = 0; g < x->ngroups; g++) {
			const struct xcmp_group *xg = &x->groups[g];

			if (xg->nmetrics && xg->metrics[0].cells[c].why) {
				GROW(r->uncomparable, ualloc, r->nuncomparable + 1);
				r->uncomparable[r->nuncomparable++] = (struct repro_uncomparable){
					.group = xg->name, .variant = variant, .why = xg->metrics[0].cells[c].why
				};
			}
			for (size_t m = 0; m < xg->nmetrics; m++) {
				const struct xcmp_cell *cell = &xg->metrics[m].cells[c];

				if (cell->why || !cell->d || !cell->d->have || !cell->d->flagged)
					continue;
				GROW(r->moved, nalloc, r->nmoved + 1);
				r->moved[r->nmoved++] = (struct repro_moved){
					.group = xg->name, .metric = xg->metrics[m].name, .variant = variant,
					.orig = &xg->metrics[m].cells[b].s, .repro = &cell->s, .d = cell->d,
				};
			}
		}
	}
	if (r->nmoved)
		qsort(r->moved, r->nmoved, sizeof(*r->moved), cmp_moved);
}

struct reproduction *reproduction_build(const struct result_set *orig, const struct comparison *co,
					const struct result_set *repro, const struct comparison *cr)
{
	struct reproduction *r = xcalloc(1, sizeof(*r));
	size_t ealloc = 0;

	r->orig_rs = orig;
	r->repro_rs = repro;
	r->nexpectations = co->nverdicts;
	r->expectations = xcalloc(co->nverdicts ? co->nverdicts : 1, sizeof(*r->expectations));
	for (size_t i = 0; i < co->nverdicts; i++) {
		struct repro_expectation *e = &r->expectations[i];

		e->orig = &co->verdicts[i];
		e->repro = find_verdict(cr, e->orig);
		e->state = judge_expectation(e->orig, e->repro, &e->why);
		r->counts[e->state]++;
	}
	r->nchecks = co->nobs;
	r->checks = xcalloc(co->nobs ? co->nobs : 1, sizeof(*r->checks));
	for (size_t i = 0; i < co->nobs; i++) {
		struct repro_check *k = &r->checks[i];

		k->orig = &co->obs[i];
		for (size_t j = 0; j < cr->nobs && !k->repro; j++)
			if (same_check(k->orig, &cr->obs[j]))
				k->repro = &cr->obs[j];
		k->state = judge_check(k->orig, k->repro, &k->why);
		r->counts[k->state]++;
	}
	if (!r->nexpectations && !r->nchecks) {
		r->verdict = REPRO_INCONCLUSIVE;
		r->why = xstrdup("nothing to judge: the original declares no expectation and no mechanism check");
	} else if (r->counts[REPRO_NOT_REPRODUCED])
		r->verdict = REPRO_NOT_REPRODUCED;
	else if (r->counts[REPRO_INCONCLUSIVE])
		r->verdict = REPRO_INCONCLUSIVE;
	else
		r->verdict = REPRO_REPRODUCED;
	r->in[0] = (struct xcmp_input){ .label = LABEL_ORIG, .rs = orig };
	r->in[1] = (struct xcmp_input){ .label = LABEL_REPRO, .rs = repro };
	r->aa = xcmp_build(r->in, 2, false);
	collect_env(r, &ealloc);
	collect_moved(r);
	return r;
}

void reproduction_free(struct reproduction *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nexpectations; i++)
		free(r->expectations[i].why);
	for (size_t i = 0; i < r->nchecks; i++)
		free(r->checks[i].why);
	free(r->expectations);
	free(r->checks);
	free(r->moved);
	free(r->uncomparable);
	free(r->env);
	free(r->why);
	xcmp_free(r->aa);
	free(r);
}

/* "reproduction of ID by ID: WORD (N reproduced, N not reproduced, N inconclusive)", unescaped. */
static void headline(const struct reproduction *r, struct strbuf *out)
{
	strbuf_addf(out, "reproduction of %s by %s: %s (%zu reproduced, %zu not reproduced, %zu inconclusive)",
		    r->orig_rs->id, r->repro_rs->id, repro_state_name(r->verdict), r->counts[REPRO_REPRODUCED],
		    r->counts[REPRO_NOT_REPRODUCED], r->counts[REPRO_INCONCLUSIVE]);
}

/* "improved +20.0% [+19.6%, +20.4%]"; an undecided one without figures: its word. */
static void verdict_cell(const struct cmp_verdict *v, struct strbuf *out)
{
	strbuf_addstr(out, verdict_name(v->v));
	if (v->d && v->d->have) {
		strbuf_addch(out, ' ');
		report_change_text(&v->d->e, out);
	}
}

/* "increase 5%" */
static void expected_text(const struct cmp_verdict *v, struct strbuf *out)
{
	strbuf_addstr(out, expect_direction_name(v->expect->dir));
	if (v->expect->has_effect)
		strbuf_addf(out, " %g%%", v->expect->effect * 100);
}

/* "holds (6 runs: 1 .. 2)" */
static void check_cell(const struct cmp_observation *o, struct strbuf *out)
{
	strbuf_addf(out, "%s (", obs_state_name(o->state));
	report_observation_evidence(o, out);
	strbuf_addch(out, ')');
}


/* "130 ±0.3% (6 runs)" in the metric's unit */
static void level_cell(const char *metric, const struct sample_stats *s, struct strbuf *out)
{
	struct metric_unit u;
	_cleanup_free_ char *v = NULL;

	report_metric_unit(metric, &u);
	v = report_value_text(&u, s->mean, 0);
	strbuf_addf(out, "%s ±%.1f%% (%zu run%s)", v, s->rsd_pct, s->n, s->n == 1 ? "" : "s");
}

/* The three tables (expectations, checks, moved levels): a row's cells as
 * strings each format escapes its way. */
enum part { PART_EXPECT, PART_CHECK, PART_MOVED, PART_COUNT };
#define PART_COLS 6

static const struct {
	const char *caption;
	const char *cols[PART_COLS + 1]; /* table.h's "HEADER:key"; HTML shows the header too */
	size_t names;                    /* the first columns that are names */
} parts[PART_COUNT] = {
	[PART_EXPECT] = { "Expectations, original vs reproduction",
			  { "expectation:expectation", "group:group", "original:original", "reproduction:reproduction",
			    "state:state", "why:why", NULL }, 2 },
	[PART_CHECK] = { "Mechanism checks, original vs reproduction",
			 { "check:check", "group:group", "original:original", "reproduction:reproduction", "state:state",
			   "why:why", NULL }, 2 },
	[PART_MOVED] = { "Levels that moved (same kernel, original vs reproduction)",
			 { "kernel:kernel", "metric:metric", "group:group", "original:original",
			   "reproduction:reproduction", "change:change", NULL }, 3 },
};

static size_t part_rows(const struct reproduction *r, enum part p)
{
	return p == PART_EXPECT ? r->nexpectations : p == PART_CHECK ? r->nchecks : r->nmoved;
}

/* Row i's state; the moved levels have none (REPRO_STATE_COUNT). */
static enum repro_state part_state(const struct reproduction *r, enum part p, size_t i)
{
	return p == PART_EXPECT ? r->expectations[i].state : p == PART_CHECK ? r->checks[i].state : REPRO_STATE_COUNT;
}

static void expectation_row(const struct repro_expectation *e, struct strbuf *row)
{
	strbuf_addf(&row[0], "%s %s ", e->orig->variant, e->orig->metric);
	expected_text(e->orig, &row[0]);
	strbuf_addstr(&row[1], e->orig->group);
	verdict_cell(e->orig, &row[2]);
	if (e->repro)
		verdict_cell(e->repro, &row[3]);
	else
		strbuf_addch(&row[3], '-');
}

static void check_row(const struct repro_check *k, struct strbuf *row)
{
	_cleanup_free_ char *rel = observe_describe(k->orig->o);

	strbuf_addf(&row[0], "%s %s %s", k->orig->variant, k->orig->o->metric, rel);
	strbuf_addstr(&row[1], k->orig->group ? k->orig->group : "-");
	check_cell(k->orig, &row[2]);
	if (k->repro)
		check_cell(k->repro, &row[3]);
	else
		strbuf_addch(&row[3], '-');
}

static void moved_row(const struct repro_moved *m, struct strbuf *row)
{
	strbuf_addstr(&row[0], m->variant);
	strbuf_addstr(&row[1], m->metric);
	strbuf_addstr(&row[2], m->group);
	level_cell(m->metric, m->orig, &row[3]);
	level_cell(m->metric, m->repro, &row[4]);
	report_change_text(&m->d->e, &row[5]);
}

/* Row i of part p into row[PART_COLS] (empty strbufs; release them). */
static void part_row(const struct reproduction *r, enum part p, size_t i, struct strbuf *row)
{
	if (p == PART_MOVED) {
		moved_row(&r->moved[i], row);
		return;
	}
	if (p == PART_EXPECT)
		expectation_row(&r->expectations[i], row);
	else
		check_row(&r->checks[i], row);
	strbuf_addstr(&row[4], repro_state_name(part_state(r, p, i)));
	strbuf_addstr(&row[5], p == PART_EXPECT ? r->expectations[i].why : r->checks[i].why);
}

static void rows_release(struct strbuf *row)
{
	for (size_t i = 0; i < PART_COLS; i++)
		strbuf_release(&row[i]);
}

/* Part p's first `max` rows as an aligned table. */
static void part_text(const struct reproduction *r, enum part p, size_t max, struct strbuf *out)
{
	_cleanup_table_ struct table *t = table_new(parts[p].cols);

	for (size_t i = 0; i < part_rows(r, p) && i < max; i++) {
		struct strbuf row[PART_COLS] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT,
						 STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };

		part_row(r, p, i, row);
		for (size_t k = 0; k < PART_COLS; k++)
			table_add_string(t, row[k].buf);
		rows_release(row);
	}
	table_format_text(t, out);
}

/* What the A/A part could not look at, a line each (unescaped): the
 * environments' differences, the kernels' groups not comparable. */
static void aa_notes(const struct reproduction *r, struct strv *ret)
{
	if (r->nenv) {
		_cleanup_strbuf_ struct strbuf env = STRBUF_INIT;

		strbuf_addstr(&env, "environments differ: ");
		fp_diffs_describe(r->env, r->nenv, &env);
		strv_push(ret, env.buf);
	}
	for (size_t i = 0; i < r->nuncomparable; i++) {
		_cleanup_free_ char *s = xasprintf("%s [%s]: not comparable: %s", r->uncomparable[i].variant,
						   r->uncomparable[i].group, r->uncomparable[i].why);

		strv_push(ret, s);
	}
}

void reproduction_format_text(const struct reproduction *r, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	_cleanup_strv_ struct strv notes = STRV_INIT;

	headline(r, &line);
	term_escape(out, line.buf);
	strbuf_addch(out, '\n');
	if (r->why)
		strbuf_addf(out, "  %s\n", r->why);
	for (enum part p = PART_EXPECT; p < PART_MOVED; p++)
		if (part_rows(r, p)) {
			strbuf_addf(out, "\n%s\n", parts[p].caption);
			part_text(r, p, SIZE_MAX, out);
		}
	strbuf_addf(out, "\n%s\n", parts[PART_MOVED].caption);
	aa_notes(r, &notes);
	for (size_t i = 0; i < notes.n; i++) {
		term_escape(out, notes.v[i]);
		strbuf_addch(out, '\n');
	}
	if (!r->nmoved) {
		strbuf_addstr(out, r->nuncomparable ? "none among the kernels measured alike\n" : "none\n");
		return;
	}
	part_text(r, PART_MOVED, REPRO_TEXT_MOVED, out);
	if (r->nmoved > REPRO_TEXT_MOVED)
		strbuf_addf(out, "... and %zu more, smaller (the JSON lists every one)\n", r->nmoved - REPRO_TEXT_MOVED);
}

static void json_verdict(struct json *j, const char *key, const struct cmp_verdict *v)
{
	bool have = v && v->d && v->d->have;

	json_key(j, key);
	if (!v) {
		json_null(j);
		return;
	}
	json_object_begin(j);
	json_kv_string(j, "verdict", verdict_name(v->v));
	json_kv_double(j, "change", have ? v->d->e.change : NAN);
	json_kv_double(j, "lo", have ? v->d->e.lo : NAN);
	json_kv_double(j, "hi", have ? v->d->e.hi : NAN);
	json_key(j, "points");
	json_bool(j, have && v->d->e.points);
	json_kv_string(j, "why", v->why);
	json_object_end(j);
}

static void json_check_side(struct json *j, const char *key, const struct cmp_observation *o)
{
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;

	json_key(j, key);
	if (!o) {
		json_null(j);
		return;
	}
	report_observation_evidence(o, &ev);
	json_object_begin(j);
	json_kv_string(j, "state", obs_state_name(o->state));
	json_kv_string(j, "seen", ev.buf);
	json_object_end(j);
}

static void json_level(struct json *j, const char *key, const struct sample_stats *s)
{
	json_key(j, key);
	json_object_begin(j);
	json_kv_uint(j, "n", s->n);
	json_kv_double(j, "mean", s->n ? s->mean : NAN);
	json_kv_double(j, "stddev_pct", s->n ? s->rsd_pct : NAN);
	json_object_end(j);
}

/* What an expectation's or a check's object opens with. */
static void json_item(struct json *j, const char *group, const char *metric, const char *variant,
		      const char *expected, enum repro_state st, const char *why)
{
	json_object_begin(j);
	json_kv_string(j, "group", group);
	json_kv_string(j, "metric", metric);
	json_kv_string(j, "variant", variant);
	json_kv_string(j, "expected", expected);
	json_kv_string(j, "state", repro_state_name(st));
	json_kv_string(j, "why", why);
}

static void json_expectations(struct json *j, const struct reproduction *r)
{
	json_key(j, "expectations");
	json_array_begin(j);
	for (size_t i = 0; i < r->nexpectations; i++) {
		const struct repro_expectation *e = &r->expectations[i];
		_cleanup_strbuf_ struct strbuf expected = STRBUF_INIT;

		expected_text(e->orig, &expected);
		json_item(j, e->orig->group, e->orig->metric, e->orig->variant, expected.buf, e->state, e->why);
		json_verdict(j, "original", e->orig);
		json_verdict(j, "reproduction", e->repro);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_checks(struct json *j, const struct reproduction *r)
{
	json_key(j, "checks");
	json_array_begin(j);
	for (size_t i = 0; i < r->nchecks; i++) {
		const struct repro_check *k = &r->checks[i];
		_cleanup_free_ char *rel = observe_describe(k->orig->o);

		json_item(j, k->orig->group, k->orig->o->metric, k->orig->variant, rel, k->state, k->why);
		json_check_side(j, "original", k->orig);
		json_check_side(j, "reproduction", k->repro);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_moved(struct json *j, const struct reproduction *r)
{
	json_key(j, "moved");
	json_array_begin(j);
	for (size_t i = 0; i < r->nmoved; i++) {
		const struct repro_moved *m = &r->moved[i];

		json_object_begin(j);
		json_kv_string(j, "group", m->group);
		json_kv_string(j, "metric", m->metric);
		json_kv_string(j, "variant", m->variant);
		json_level(j, "original", m->orig);
		json_level(j, "reproduction", m->repro);
		json_kv_double(j, "change", m->d->e.change);
		json_kv_double(j, "lo", m->d->e.lo);
		json_kv_double(j, "hi", m->d->e.hi);
		json_key(j, "points");
		json_bool(j, m->d->e.points);
		json_kv_double(j, "p", m->d->e.p);
		json_kv_double(j, "q", m->d->q);
		json_object_end(j);
	}
	json_array_end(j);
	json_key(j, "not_comparable");
	json_array_begin(j);
	for (size_t i = 0; i < r->nuncomparable; i++) {
		json_object_begin(j);
		json_kv_string(j, "group", r->uncomparable[i].group);
		json_kv_string(j, "variant", r->uncomparable[i].variant);
		json_kv_string(j, "why", r->uncomparable[i].why);
		json_object_end(j);
	}
	json_array_end(j);
}

void reproduction_json(const struct reproduction *r, struct json *j)
{
	json_object_begin(j);
	json_kv_string(j, "original", r->orig_rs->id);
	json_kv_string(j, "reproduction", r->repro_rs->id);
	json_kv_string(j, "verdict", repro_state_name(r->verdict));
	json_kv_string(j, "why", r->why);
	json_key(j, "counts");
	json_object_begin(j);
	json_kv_uint(j, "reproduced", r->counts[REPRO_REPRODUCED]);
	json_kv_uint(j, "not_reproduced", r->counts[REPRO_NOT_REPRODUCED]);
	json_kv_uint(j, "inconclusive", r->counts[REPRO_INCONCLUSIVE]);
	json_object_end(j);
	json_expectations(j, r);
	json_checks(j, r);
	json_moved(j, r);
	/* "a": the original's, "b": the reproduction's */
	json_key(j, "environment");
	fp_diffs_write_json(r->env, r->nenv, j);
	json_object_end(j);
}

void reproduction_format_json(const struct reproduction *r, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	reproduction_json(r, &j);
	json_finish(&j);
}

/* The report's colours (html.c's css): a state as a verdict's class. */
static const char *state_class(enum repro_state s)
{
	return s == REPRO_REPRODUCED ? "improved" : s == REPRO_NOT_REPRODUCED ? "regressed" : "inconclusive";
}

static void html_cell(struct xml *x, const char *tag, const char *cls, const char *text)
{
	xml_open(x, tag);
	if (cls)
		xml_attr(x, "class", cls);
	xml_text(x, text);
	xml_close(x);
}

/* Part p as a table that scrolls sideways, its caption first; the state coloured. */
static void part_html(const struct reproduction *r, enum part p, struct xml *x)
{
	xml_open(x, "div");
	xml_attr(x, "class", "scroll");
	xml_open(x, "table");
	xml_element(x, "caption", parts[p].caption);
	xml_open(x, "tr");
	for (size_t i = 0; i < PART_COLS; i++) {
		_cleanup_free_ char *h = xstrndup(parts[p].cols[i], strcspn(parts[p].cols[i], ":"));

		html_cell(x, "th", i < parts[p].names ? "m" : NULL, h);
	}
	xml_close(x);
	for (size_t i = 0; i < part_rows(r, p); i++) {
		struct strbuf row[PART_COLS] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT,
						 STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
		enum repro_state st = part_state(r, p, i);

		part_row(r, p, i, row);
		xml_open(x, "tr");
		for (size_t k = 0; k < PART_COLS; k++) {
			const char *cls = k < parts[p].names ? "m" : NULL;

			if (st != REPRO_STATE_COUNT && k == 4)
				cls = state_class(st);
			else if (st != REPRO_STATE_COUNT && k == 5)
				cls = "m w";
			html_cell(x, "td", cls, row[k].buf);
		}
		xml_close(x);
		rows_release(row);
	}
	xml_close(x); /* table */
	xml_close(x); /* div */
}

void reproduction_format_html_section(const struct reproduction *r, struct xml *x)
{
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	_cleanup_strv_ struct strv notes = STRV_INIT;

	headline(r, &line);
	xml_open(x, "section");
	xml_attr(x, "class", "reproduction");
	xml_element(x, "h2", "Reproduction");
	html_cell(x, "p", state_class(r->verdict), line.buf);
	if (r->why)
		xml_element(x, "p", r->why);
	for (enum part p = PART_EXPECT; p < PART_MOVED; p++)
		if (part_rows(r, p))
			part_html(r, p, x);
	aa_notes(r, &notes);
	for (size_t i = 0; i < notes.n; i++)
		xml_element(x, "p", notes.v[i]);
	if (r->nmoved)
		part_html(r, PART_MOVED, x);
	else
		xml_element(x, "p", "levels that moved (same kernel, original vs reproduction): none");
	xml_close(x); /* section */
}

static void as_part_text(const void *data, struct strbuf *out)
{
	reproduction_format_text(data, out);
}

static void as_part_json(const void *data, struct json *j)
{
	reproduction_json(data, j);
}

static void as_part_html(const void *data, struct xml *x)
{
	reproduction_format_html_section(data, x);
}

void reproduction_report_part(const struct reproduction *r, struct report_part *ret)
{
	*ret = (struct report_part){ .title = "Reproduction", .key = "reproduction", .data = r, .text = as_part_text,
				     .json = as_part_json, .html = as_part_html };
}
