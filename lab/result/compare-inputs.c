/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/json.h"
#include "compare-inputs.h"
#include "../util/banned.h"

/* Which input and variant a column is. */
struct col {
	size_t in;
	const char *variant;
};

static void columns(const struct xcmp *x, struct col **ret)
{
	struct col *c = xcalloc(x->columns.n ? x->columns.n : 1, sizeof(*c));
	size_t k = 0;

	for (size_t i = 0; i < x->nin; i++)
		for (size_t v = 0; v < x->in[i].rs->variants.n; v++)
			c[k++] = (struct col){ .in = i, .variant = x->in[i].rs->variants.v[v] };
	*ret = c;
}

static bool run_in(const struct result_run *r, const struct col *c, const char *group)
{
	return r->status == RUN_OK && streq(r->variant, c->variant) && (!group || streq(r->group, group));
}

/* The fingerprint of the column's first run that has one. */
static const struct fingerprint *first_fp(const struct xcmp *x, const struct col *c)
{
	const struct result_set *rs = x->in[c->in].rs;

	for (size_t i = 0; i < rs->n; i++)
		if (run_in(&rs->runs[i], c, NULL) && result_run_fingerprint(&rs->runs[i]))
			return result_run_fingerprint(&rs->runs[i]);
	return NULL;
}

void xcmp_labels(const struct result_set *const *sets, size_t n, char **ret)
{
	bool hosts = true;

	for (size_t i = 0; i < n && hosts; i++) {
		const char *h = NULL;

		for (size_t k = 0; k < sets[i]->nfps; k++) {
			const char *o = sets[i]->fps[k].f[FP_HOST];

			if (!o || (h && !streq(h, o)) || !str_is_name(o))
				hosts = false;
			h = o;
		}
		hosts = hosts && h;
		for (size_t j = 0; j < i && hosts; j++)
			if (streq(ret[j], h))
				hosts = false;
		ret[i] = hosts ? xstrdup(h) : NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!hosts || !ret[i]) {
			free(ret[i]);
			ret[i] = xstrdup(sets[i]->id);
		}
	}
}

/* Why column c's runs in group g cannot be compared with the baseline's: the
 * fields that matter in which some two of their environments differ. */
static char *not_comparable(const struct xcmp *x, const struct col *base, const struct col *c, const char *g)
{
	const struct result_set *ra = x->in[base->in].rs, *rb = x->in[c->in].rs;
	bool same_variant = streq(base->variant, c->variant);
	bool seen[FP_NFIELDS] = { 0 };
	struct fp_diff all[FP_NFIELDS];
	size_t n = 0;

	for (size_t i = 0; i < ra->n; i++) {
		const struct fingerprint *fa = result_run_fingerprint(&ra->runs[i]);

		if (!fa || !run_in(&ra->runs[i], base, g))
			continue;
		for (size_t k = 0; k < rb->n; k++) {
			const struct fingerprint *fb = result_run_fingerprint(&rb->runs[k]);
			struct fp_diff d[FP_NFIELDS];
			size_t m, nd;

			if (!fb || !run_in(&rb->runs[k], c, g) || fa == fb)
				continue;
			nd = fingerprint_diff(fa, fb, same_variant, d, &m);
			for (size_t j = 0; j < m; j++)
				if (!seen[d[j].field]) {
					seen[d[j].field] = true;
					all[n++] = d[j];
				}
			(void)nd;
		}
	}
	if (!n)
		return NULL;
	{
		struct strbuf sb = STRBUF_INIT;

		fp_diff_why(all, n, &sb);
		return strbuf_detach(&sb, NULL);
	}
}

static void values(const struct xcmp *x, const struct col *c, const char *g, const char *metric,
		   struct sample_stats *s)
{
	const struct result_set *rs = x->in[c->in].rs;
	double *v = xcalloc(rs->n ? rs->n : 1, sizeof(double));
	size_t n = 0;

	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];

		if (!run_in(r, c, g))
			continue;
		for (size_t k = 0; k < r->nm; k++)
			if (streq(r->m[k].name, metric)) {
				v[n++] = r->m[k].value;
				break;
			}
	}
	stats_describe(v, n, s);
	free(v);
}

static void add_runs(struct result_set *to, const struct result_set *from, const struct col *c, const char *label,
		     const char *group)
{
	for (size_t i = 0; i < from->n; i++) {
		const struct result_run *r = &from->runs[i];
		struct result_run *n;

		if (!run_in(r, c, group))
			continue;
		n = result_add_run(to, r->id, label, r->group, r->job, r->repeat);
		n->status = r->status;
		n->boot = r->boot ? xstrdup(r->boot) : NULL;
		n->boot_pos = r->boot_pos;
		for (size_t k = 0; k < r->nm; k++)
			result_add_metric(n, r->m[k].name, r->m[k].value);
	}
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The column c is compared with: the first input's same variant, else the baseline. */
static size_t base_of(const struct col *cols, size_t nc, size_t c)
{
	if (cols[c].in == 0)
		return 0;
	for (size_t k = 0; k < nc && cols[k].in == 0; k++)
		if (streq(cols[k].variant, cols[c].variant))
			return k;
	return 0;
}

/* The columns' names, INPUT:VARIANT, and every input's groups in the order first seen. */
static void name_columns(struct xcmp *x, struct strv *groups)
{
	for (size_t i = 0; i < x->nin; i++) {
		for (size_t v = 0; v < x->in[i].rs->variants.n; v++)
		{
			_cleanup_free_ char *l = xasprintf("%s:%s", x->in[i].label, x->in[i].rs->variants.v[v]);

			strv_push(&x->columns, l);
		}
		for (size_t k = 0; k < x->in[i].rs->n; k++)
			if (!strv_contains(groups, x->in[i].rs->runs[k].group))
				strv_push(groups, x->in[i].rs->runs[k].group);
	}
}

/* The environments: each other input's variant against the first input's same variant (or baseline). */
static void find_envs(struct xcmp *x, const struct col *cols, size_t nc)
{
	size_t ealloc = 0;

	for (size_t c = 1; c < nc; c++) {
		size_t b = base_of(cols, nc, c);
		const struct fingerprint *fa, *fb;
		struct xcmp_env *e;

		if (cols[c].in == 0)
			continue;
		fa = first_fp(x, &cols[b]);
		fb = first_fp(x, &cols[c]);
		if (!fa && !fb)
			continue;
		GROW(x->env, ealloc, x->nenv + 1);
		e = &x->env[x->nenv];
		*e = (struct xcmp_env){ .a = xstrdup(x->columns.v[b]), .b = xstrdup(x->columns.v[c]) };
		if (fa && fb) {
			e->n = fingerprint_diff(fa, fb, streq(cols[b].variant, cols[c].variant), e->d, &e->nmatters);
		} else {
			/* one side has no fingerprint: every field unknown there */
			static const struct fingerprint none;

			e->n = fingerprint_diff(fa ? fa : &none, fb ? fb : &none, false, e->d, &e->nmatters);
		}
		if (e->n)
			x->nenv++;
		else {
			free(e->a);
			free(e->b);
		}
	}
}

/* The metrics any column's runs in group xg have, sorted by name, each with a cell per column. */
static void group_metrics(const struct xcmp *x, const struct col *cols, size_t nc, struct xcmp_group *xg)
{
	_cleanup_strv_ struct strv metrics = STRV_INIT;

	for (size_t c = 0; c < nc; c++) {
		const struct result_set *rs = x->in[cols[c].in].rs;

		for (size_t i = 0; i < rs->n; i++)
			if (run_in(&rs->runs[i], &cols[c], xg->name))
				for (size_t k = 0; k < rs->runs[i].nm; k++)
					if (!strv_contains(&metrics, rs->runs[i].m[k].name))
						strv_push(&metrics, rs->runs[i].m[k].name);
	}
	if (metrics.n)
		qsort(metrics.v, metrics.n, sizeof(char *), cmp_str);
	xg->metrics = xcalloc(metrics.n ? metrics.n : 1, sizeof(*xg->metrics));
	xg->nmetrics = metrics.n;
	for (size_t m = 0; m < metrics.n; m++) {
		xg->metrics[m].name = xstrdup(metrics.v[m]);
		xg->metrics[m].cells = xcalloc(nc, sizeof(struct xcmp_cell));
	}
}

/* Per column > 0, its base's runs and its own in group xg added to its set where they
 * compare (or allow_mixed), and why not in each of its cells. */
static void group_sets(struct xcmp *x, const struct col *cols, size_t nc, struct xcmp_group *xg)
{
	const struct xcmp_input *in = x->in;

	for (size_t c = 1; c < nc; c++) {
		size_t b = x->base[c];
		char *why = not_comparable(x, &cols[b], &cols[c], xg->name);

		if (!x->sets[c]) {
			_cleanup_free_ char *id = xasprintf("%s vs %s", x->columns.v[b], x->columns.v[c]);

			x->sets[c] = result_set_new(id, in[0].rs->experiment);
			x->sets[c]->decide = in[0].rs->decide;
			strv_push(&x->sets[c]->variants, x->columns.v[b]);
			strv_push(&x->sets[c]->variants, x->columns.v[c]);
		}
		if (!why || x->allow_mixed) {
			add_runs(x->sets[c], in[0].rs, &cols[b], x->columns.v[b], xg->name);
			add_runs(x->sets[c], in[cols[c].in].rs, &cols[c], x->columns.v[c], xg->name);
		}
		for (size_t m = 0; m < xg->nmetrics; m++)
			xg->metrics[m].cells[c].why = why ? xstrdup(why) : NULL;
		free(why);
	}
}

/* The cells: each column's figures, its delta from its comparison. */
static void fill_cells(struct xcmp *x, const struct col *cols, size_t nc)
{
	for (size_t g = 0; g < x->ngroups; g++) {
		struct xcmp_group *xg = &x->groups[g];

		for (size_t m = 0; m < xg->nmetrics; m++)
			for (size_t c = 0; c < nc; c++) {
				struct xcmp_cell *cell = &xg->metrics[m].cells[c];
				const struct comparison *cmp = x->cmps[c];

				values(x, &cols[c], xg->name, xg->metrics[m].name, &cell->s);
				if (!cmp || (cell->why && !x->allow_mixed))
					continue;
				for (size_t k = 0; k < cmp->ngroups; k++)
					if (streq(cmp->groups[k].name, xg->name))
						for (size_t r = 0; r < cmp->groups[k].nrows; r++)
							if (streq(cmp->groups[k].rows[r].metric, xg->metrics[m].name))
								cell->d = &cmp->groups[k].rows[r].d[1];
			}
	}
}

struct xcmp *xcmp_build(const struct xcmp_input *in, size_t nin, bool allow_mixed)
{
	struct xcmp *x = xcalloc(1, sizeof(*x));
	_cleanup_strv_ struct strv groups = STRV_INIT;
	_cleanup_free_ struct col *cols = NULL;
	size_t nc;

	x->in = in;
	x->nin = nin;
	x->allow_mixed = allow_mixed;
	name_columns(x, &groups);
	nc = x->columns.n;
	columns(x, &cols);
	find_envs(x, cols, nc);
	/* per column, the baseline's runs and its own in the groups where they compare */
	x->base = xcalloc(nc ? nc : 1, sizeof(*x->base));
	for (size_t c = 0; c < nc; c++)
		x->base[c] = base_of(cols, nc, c);
	x->sets = xcalloc(nc, sizeof(*x->sets));
	x->cmps = xcalloc(nc, sizeof(*x->cmps));
	x->groups = xcalloc(groups.n ? groups.n : 1, sizeof(*x->groups));
	x->ngroups = groups.n;
	for (size_t g = 0; g < groups.n; g++) {
		struct xcmp_group *xg = &x->groups[g];

		xg->name = xstrdup(groups.v[g]);
		group_metrics(x, cols, nc, xg);
		group_sets(x, cols, nc, xg);
	}
	for (size_t c = 1; c < nc; c++)
		if (x->sets[c])
			x->cmps[c] = compare_build(x->sets[c]);
	fill_cells(x, cols, nc);
	return x;
}

void xcmp_free(struct xcmp *x)
{
	if (!x)
		return;
	for (size_t g = 0; g < x->ngroups; g++) {
		for (size_t m = 0; m < x->groups[g].nmetrics; m++) {
			for (size_t c = 0; c < x->columns.n; c++)
				free(x->groups[g].metrics[m].cells[c].why);
			free(x->groups[g].metrics[m].cells);
			free(x->groups[g].metrics[m].name);
		}
		free(x->groups[g].metrics);
		free(x->groups[g].name);
	}
	free(x->groups);
	for (size_t c = 0; c < x->columns.n; c++) {
		comparison_free(x->cmps[c]);
		result_set_free(x->sets[c]);
	}
	free(x->cmps);
	free(x->sets);
	free(x->base);
	for (size_t i = 0; i < x->nenv; i++) {
		free(x->env[i].a);
		free(x->env[i].b);
	}
	free(x->env);
	strv_release(&x->columns);
	free(x);
}

static void env_line(const struct xcmp_env *e, struct strbuf *out)
{
	strbuf_addf(out, "%s vs %s: ", e->a, e->b);
	fp_diffs_describe(e->d, e->n, out);
}

static void delta_text(const struct cmp_delta *d, struct strbuf *out)
{
	const char *u = d->e.points ? "" : "%";

	if (!d->have || !isfinite(d->e.change)) {
		strbuf_addstr(out, "  no change figure");
		if (d->e.why)
			strbuf_addf(out, " (%s)", d->e.why);
		return;
	}
	strbuf_addf(out, "  %+.1f%s", d->e.change, u);
	if (isfinite(d->e.lo) && isfinite(d->e.hi))
		strbuf_addf(out, " [%+.1f, %+.1f]%s", d->e.lo, d->e.hi, u);
	if (isfinite(d->e.p))
		strbuf_addf(out, " p=%.3g", d->e.p);
	else if (d->e.why)
		strbuf_addf(out, " (%s)", d->e.why);
}

void xcmp_format_text(const struct xcmp *x, struct strbuf *out)
{
	size_t w = 8;

	for (size_t c = 0; c < x->columns.n; c++)
		w = strlen(x->columns.v[c]) > w ? strlen(x->columns.v[c]) : w;
	strbuf_addstr(out, "inputs\n");
	for (size_t i = 0; i < x->nin; i++) {
		strbuf_addstr(out, "  ");
		term_escape(out, x->in[i].label);
		strbuf_addstr(out, ": run ");
		term_escape(out, x->in[i].rs->id);
		strbuf_addstr(out, ", experiment ");
		term_escape(out, x->in[i].rs->experiment);
		strbuf_addch(out, '\n');
	}
	if (x->nenv) {
		strbuf_addstr(out, "environments that differ between inputs (a difference marked (noted) does not make a comparison unfair)\n");
		for (size_t i = 0; i < x->nenv; i++) {
			_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

			env_line(&x->env[i], &line);
			strbuf_addstr(out, "  ");
			term_escape(out, line.buf);
			strbuf_addch(out, '\n');
		}
	}
	strbuf_addstr(out, "baseline ");
	term_escape(out, x->columns.n ? x->columns.v[0] : "(none)");
	strbuf_addstr(out, "; another input's variant against the first input's same variant");
	strbuf_addstr(out, x->allow_mixed ? "; --allow-mixed: decided even where measured differently\n"
					  : ", where measured alike\n");
	for (size_t g = 0; g < x->ngroups; g++) {
		const struct xcmp_group *xg = &x->groups[g];

		strbuf_addstr(out, "\ngroup ");
		term_escape(out, xg->name);
		strbuf_addch(out, '\n');
		for (size_t m = 0; m < xg->nmetrics; m++) {
			strbuf_addstr(out, "  ");
			term_escape(out, xg->metrics[m].name);
			strbuf_addch(out, '\n');
			for (size_t c = 0; c < x->columns.n; c++) {
				const struct xcmp_cell *cell = &xg->metrics[m].cells[c];
				_cleanup_strbuf_ struct strbuf label = STRBUF_INIT;

				term_escape(&label, x->columns.v[c]);
				strbuf_addf(out, "    %-*s", (int)w, label.buf);
				if (!cell->s.n) {
					strbuf_addstr(out, "  no runs\n");
					continue;
				}
				strbuf_addf(out, "  %12.6g ±%5.1f%% (%zu run%s)", cell->s.mean, cell->s.rsd_pct, cell->s.n,
					    cell->s.n == 1 ? "" : "s");
				if (c == 0)
					strbuf_addstr(out, "  baseline");
				else if (cell->why && !x->allow_mixed)
					strbuf_addf(out, "  not comparable: %s", cell->why);
				else if (cell->d)
					delta_text(cell->d, out);
				if (c && (cell->d || cell->why) && x->base[c] != 0) {
					strbuf_addstr(out, "  vs ");
					term_escape(out, x->columns.v[x->base[c]]);
				}
				if (c && cell->why && x->allow_mixed)
					strbuf_addf(out, "  (mixed: %s; --allow-mixed)", cell->why);
				strbuf_addch(out, '\n');
			}
		}
	}
}

/* One cell of column c as a JSON object: its figures and its delta from its base. */
static void cell_write_json(const struct xcmp *x, size_t c, const struct xcmp_cell *cell, struct json *j)
{
	bool decided = c && cell->d && cell->d->have;

	json_object_begin(j);
	json_kv_string(j, "column", x->columns.v[c]);
	json_key(j, "against");
	if (c)
		json_string(j, x->columns.v[x->base[c]]);
	else
		json_null(j);
	json_kv_uint(j, "n", cell->s.n);
	json_kv_double(j, "mean", cell->s.n ? cell->s.mean : NAN);
	json_kv_double(j, "stddev_pct", cell->s.n ? cell->s.rsd_pct : NAN);
	json_key(j, "comparable");
	json_bool(j, !cell->why);
	json_kv_string(j, "why", cell->why);
	json_kv_double(j, "change", decided ? cell->d->e.change : NAN);
	json_kv_double(j, "lo", decided ? cell->d->e.lo : NAN);
	json_kv_double(j, "hi", decided ? cell->d->e.hi : NAN);
	json_kv_double(j, "p", decided ? cell->d->e.p : NAN);
	json_object_end(j);
}

void xcmp_format_json(const struct xcmp *x, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_key(&j, "inputs");
	json_array_begin(&j);
	for (size_t i = 0; i < x->nin; i++) {
		json_object_begin(&j);
		json_kv_string(&j, "label", x->in[i].label);
		json_kv_string(&j, "run", x->in[i].rs->id);
		json_kv_string(&j, "experiment", x->in[i].rs->experiment);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "columns");
	json_array_begin(&j);
	for (size_t c = 0; c < x->columns.n; c++)
		json_string(&j, x->columns.v[c]);
	json_array_end(&j);
	json_key(&j, "allow_mixed");
	json_bool(&j, x->allow_mixed);
	json_key(&j, "environments");
	json_array_begin(&j);
	for (size_t i = 0; i < x->nenv; i++) {
		json_object_begin(&j);
		json_kv_string(&j, "a", x->env[i].a);
		json_kv_string(&j, "b", x->env[i].b);
		json_key(&j, "differences");
		fp_diffs_write_json(x->env[i].d, x->env[i].n, &j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "groups");
	json_array_begin(&j);
	for (size_t g = 0; g < x->ngroups; g++) {
		const struct xcmp_group *xg = &x->groups[g];

		json_object_begin(&j);
		json_kv_string(&j, "group", xg->name);
		json_key(&j, "metrics");
		json_array_begin(&j);
		for (size_t m = 0; m < xg->nmetrics; m++) {
			json_object_begin(&j);
			json_kv_string(&j, "metric", xg->metrics[m].name);
			json_key(&j, "cells");
			json_array_begin(&j);
			for (size_t c = 0; c < x->columns.n; c++)
				cell_write_json(x, c, &xg->metrics[m].cells[c], &j);
			json_array_end(&j);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
}
