/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/json.h"
#include "attrib.h"
#include "report.h"
#include "failure.h"
#include "../util/banned.h"

/*
 * Every string of a stored run may come from someone else's bundle (names,
 * ids, errors, release strings, the says of a check): in text it goes out
 * through term_escape(), in Markdown through md_escape() or md_code(),
 * never as a bare %s. Widths count the escaped form.
 */
static void put_padded(struct strbuf *out, int width, const char *s)
{
	_cleanup_strbuf_ struct strbuf e = STRBUF_INIT;

	term_escape(&e, s);
	strbuf_addf(out, "%*s", width, e.buf);
}

static size_t escaped_len(const char *s)
{
	_cleanup_strbuf_ struct strbuf e = STRBUF_INIT;

	term_escape(&e, s);
	return e.len;
}

static void fmt_mean(struct strbuf *out, const struct sample_stats *s)
{
	_cleanup_strbuf_ struct strbuf v = STRBUF_INIT;

	if (!s->n) {
		strbuf_addf(out, "%10s      ", "-");
		return;
	}
	report_fmt_value(&v, s->mean);
	if (s->n > 1 && s->rsd_pct >= 2)
		strbuf_addf(out, "%10s ±%3.0f%%", v.buf, s->rsd_pct);
	else
		strbuf_addf(out, "%10s      ", v.buf);
}

static void fmt_change(struct strbuf *out, const struct cmp_delta *d)
{
	if (!d->have || !isfinite(d->e.change))
		strbuf_addf(out, "%11s", "");
	else if (d->e.points)
		strbuf_addf(out, "%+10.1f ", d->e.change);
	else
		strbuf_addf(out, "%+10.1f%%", d->e.change);
}

/* How the row was decided, per compared variant. */
static void fmt_basis(struct strbuf *out, const struct cmp_row *r, size_t nv)
{
	bool any = false;

	for (size_t v = 1; v < nv; v++) {
		const struct cmp_delta *d = &r->d[v];

		if (!d->have)
			continue;
		strbuf_addstr(out, any ? ", " : "  (");
		any = true;
		if (d->e.tested && !isnan(d->q))
			strbuf_addf(out, "p=%.2g q=%.2g", d->e.p, d->q);
		else if (d->e.tested)
			strbuf_addf(out, "p=%.2g", d->e.p);
		else
			strbuf_addstr(out, "p=n/a");
		if (d->separate)
			strbuf_addstr(out, " ranges apart");
	}
	if (r->noisy)
		strbuf_addstr(out, any ? ", noisy" : "  (noisy");
	if (any || r->noisy)
		strbuf_addch(out, ')');
}

static void header_text(const struct comparison *c, struct strbuf *out)
{
	const struct result_set *rs = c->rs;

	strbuf_addstr(out, "run ");
	term_escape(out, rs->id);
	strbuf_addstr(out, ", experiment ");
	term_escape(out, rs->experiment);
	strbuf_addch(out, '\n');
	for (size_t v = 0; v < c->nvariants; v++) {
		const char *rel = NULL;
		bool mixed = false;
		size_t ok = 0, failed = 0;

		for (size_t i = 0; i < rs->n; i++) {
			const struct result_run *r = &rs->runs[i];

			if (!streq(r->variant, rs->variants.v[v]))
				continue;
			ok += r->status == RUN_OK;
			failed += r->status == RUN_FAILED;
			if (!r->release)
				continue;
			if (rel && !streq(rel, r->release))
				mixed = true;
			rel = rel ? rel : r->release;
		}
		strbuf_addf(out, "  %s ", v ? "compared" : "baseline");
		term_escape(out, rs->variants.v[v]);
		strbuf_addstr(out, ": booted ");
		term_escape(out, rel ? rel : "(unknown)");
		strbuf_addf(out, "%s; %zu runs ok, %zu failed\n", mixed ? " AND OTHERS (check the runs)" : "", ok, failed);
	}
	for (size_t i = 0; i < rs->mechanism.n; i++) {
		strbuf_addstr(out, "  ");
		term_escape(out, rs->mechanism.v[i]);
		strbuf_addch(out, '\n');
	}
	for (size_t i = 0; i < rs->cluster.n; i++) {
		strbuf_addstr(out, "  cluster: ");
		term_escape(out, rs->cluster.v[i]);
		strbuf_addch(out, '\n');
	}
	_cleanup_free_ char *legend = report_legend(c);

	const char *notes[REPORT_MAX_NOTES];

	for (size_t i = 0, n = report_notes(rs, notes); i < n; i++)
		report_wrap(out, notes[i], 100, "");
	report_wrap(out, legend, 100, "");
}


/* A sweep (three variants or more): one row per step, like the seeds'
 * tables: the expected metrics, then the significant ones (5 at most),
 * base = 100, percentages as measured. */
static void sweep_table(const struct comparison *c, const struct cmp_group *g, struct strbuf *out)
{
	const struct cmp_row *cols[5];
	int cw[ELEMENTSOF(cols)];
	size_t ncols = 0, w = 16;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < g->nrows && ncols < ELEMENTSOF(cols); i++) {
			bool exp = cmp_is_expected(c, g, g->rows[i].metric);

			if (pass == 0 ? exp : (!exp && g->rows[i].flagged))
				cols[ncols++] = &g->rows[i];
		}
	if (!ncols)
		return;
	for (size_t v = 0; v < c->nvariants; v++) {
		size_t len = escaped_len(c->rs->variants.v[v]) + 2;

		w = MAX(w, len);
	}
	for (size_t k = 0; k < ncols; k++) {
		size_t len = escaped_len(cols[k]->metric);

		cw[k] = (int)MAX(len, 12);
	}
	strbuf_addstr(out, "\nSteps (base = 100.0; percentages and points as measured):\n");
	strbuf_addf(out, "%-*s", (int)w, "");
	for (size_t k = 0; k < ncols; k++) {
		strbuf_addstr(out, "  ");
		put_padded(out, cw[k], cols[k]->metric);
	}
	strbuf_addch(out, '\n');
	for (size_t v = 0; v < c->nvariants; v++) {
		put_padded(out, -(int)w, c->rs->variants.v[v]);
		for (size_t k = 0; k < ncols; k++) {
			const struct cmp_row *r = cols[k];
			bool pct = metric_is_percentage(r->metric);

			if (!r->s[v].n || (!pct && (!r->s[0].n || r->s[0].mean == 0)))
				strbuf_addf(out, "  %*s", cw[k], "-");
			else if (pct)
				strbuf_addf(out, "  %*.2f", cw[k], r->s[v].mean);
			else
				strbuf_addf(out, "  %*.1f", cw[k], 100 * r->s[v].mean / r->s[0].mean);
		}
		strbuf_addch(out, '\n');
	}
}

static void observations_text(const struct comparison *c, struct strbuf *out)
{
	if (!c->nobs)
		return;
	strbuf_addstr(out, "\nMechanism checks (observe)\n");
	for (size_t i = 0; i < c->nobs; i++) {
		const struct cmp_observation *x = &c->obs[i];
		_cleanup_free_ char *rel = observe_describe(x->o);
		_cleanup_strbuf_ struct strbuf seen = STRBUF_INIT;

		strbuf_addf(out, "  %-12s ", obs_state_name(x->state));
		term_escape(out, x->variant);
		strbuf_addch(out, ' ');
		term_escape(out, x->o->metric);
		strbuf_addch(out, ' ');
		term_escape(out, rel);
		if (x->group) {
			strbuf_addstr(out, " [");
			term_escape(out, x->group);
			strbuf_addch(out, ']');
		}
		strbuf_addstr(out, "\n      ");
		report_observation_seen(x, &seen);
		term_escape(out, seen.buf);
		strbuf_addch(out, '\n');
	}
}

/* The group's disturbed lines (esc: the format's escaper). */
static void disturbed_lines(const struct report_opts *o, const struct cmp_group *gr, const char *before,
			    const char *after, void (*esc)(struct strbuf *, const char *), struct strbuf *out)
{
	for (size_t i = 0; o->calib && i < o->calib->nov; i++) {
		_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

		if (!report_disturbed(o, gr->name, i, &line))
			continue;
		strbuf_addstr(out, before);
		esc(out, line.buf);
		strbuf_addstr(out, after);
	}
}

/* The robot's table of one group: heads, then one row per metric shown. */
static void group_text(const struct comparison *c, const struct cmp_group *gr, const struct report_opts *o,
		       struct strbuf *out)
{
	size_t nv = c->nvariants, shown = 0;

	strbuf_addstr(out, "\n=== ");
	term_escape(out, gr->name);
	strbuf_addstr(out, "\n\n");
	/* column heads: one per variant */
	put_padded(out, 16, c->rs->variants.v[0]);
	for (size_t v = 1; v < nv; v++) {
		strbuf_addch(out, ' ');
		put_padded(out, 27, c->rs->variants.v[v]);
	}
	strbuf_addstr(out, "\n----------------");
	for (size_t v = 1; v < nv; v++)
		strbuf_addstr(out, " ---------------------------");
	strbuf_addf(out, "\n%16s", "%stddev");
	for (size_t v = 1; v < nv; v++)
		strbuf_addf(out, " %11s %15s", "%change", "%stddev");
	strbuf_addf(out, "\n%16s", "\\");
	for (size_t v = 1; v < nv; v++)
		strbuf_addf(out, " %11s %15s", "|", "\\");
	strbuf_addch(out, '\n');
	for (size_t i = 0; i < gr->nrows; i++) {
		const struct cmp_row *r = &gr->rows[i];

		/* one variant: nothing to compare, every row */
		if (!o->all && nv > 1 && !r->flagged && !cmp_is_expected(c, gr, r->metric))
			continue;
		shown++;
		fmt_mean(out, &r->s[0]);
		for (size_t v = 1; v < nv; v++) {
			strbuf_addch(out, ' ');
			fmt_change(out, &r->d[v]);
			strbuf_addch(out, ' ');
			fmt_mean(out, &r->s[v]);
		}
		strbuf_addstr(out, "  ");
		term_escape(out, r->metric);
		fmt_basis(out, r, nv);
		strbuf_addch(out, '\n');
	}
	if (!shown)
		strbuf_addf(out, "(no flagged change among %zu metrics; --all lists them)\n", gr->nrows);
	else if (!o->all && shown < gr->nrows)
		strbuf_addf(out, "(%zu more metrics without a flagged change; --all lists them)\n",
			    gr->nrows - shown);
	disturbed_lines(o, gr, "! ", "\n", term_escape, out);
	if (nv >= 3)
		sweep_table(c, gr, out);
}

static void verdicts_text(const struct comparison *c, struct strbuf *out)
{
	if (!c->nverdicts)
		return;
	strbuf_addstr(out, "\nExpectations\n");
	for (size_t i = 0; i < c->nverdicts; i++) {
		const struct cmp_verdict *v = &c->verdicts[i];

		strbuf_addf(out, "  %-12s ", verdict_name(v->v));
		term_escape(out, v->variant);
		strbuf_addch(out, ' ');
		term_escape(out, v->metric);
		strbuf_addf(out, ": %s", expect_direction_name(v->expect->dir));
		if (v->expect->has_effect)
			strbuf_addf(out, " %g%%", v->expect->effect * 100);
		strbuf_addstr(out, " [");
		term_escape(out, v->group);
		strbuf_addstr(out, "]\n      ");
		term_escape(out, v->why);
		strbuf_addstr(out, "\n      ");
		report_verdict_basis(v, out);
		strbuf_addch(out, '\n');
	}
}

/* A failed run and whose failure it is. */
struct failed_run {
	const struct result_run *r;
	struct failure f;
};

/* The failed runs, each classified once: the kernel's first (evidence
 * against it), then infrastructure's (retried, never counted against a
 * kernel), each kind in run order. Their count; free with failed_free(). */
static size_t failed_runs(const struct result_set *rs, struct failed_run **ret)
{
	struct failed_run *v = xcalloc(rs->n + 1, sizeof(*v));
	size_t n = 0;

	for (int kernels = 1; kernels >= 0; kernels--)
		for (size_t i = 0; i < rs->n; i++) {
			struct failure f;

			if (rs->runs[i].status != RUN_FAILED)
				continue;
			failure_of_run(rs->runs[i].error, &f);
			if (failure_is_kernels(f.kind) == (bool)kernels)
				v[n++] = (struct failed_run){ .r = &rs->runs[i], .f = f };
			else
				failure_release(&f);
		}
	*ret = v;
	return n;
}

static void failed_free(struct failed_run *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		failure_release(&v[i].f);
	free(v);
}

static void failed_runs_text(const struct result_set *rs, struct strbuf *out)
{
	struct failed_run *v;
	size_t n = failed_runs(rs, &v), kernels = 0;

	while (kernels < n && failure_is_kernels(v[kernels].f.kind))
		kernels++;
	if (n)
		strbuf_addf(out, "\nFailed runs: %zu the kernel's, %zu infrastructure's (not counted against a kernel)\n",
			    kernels, n - kernels);
	for (size_t i = 0; i < n; i++) {
		const struct result_run *r = v[i].r;
		const char *ev = v[i].f.evidence;

		strbuf_addstr(out, "  ");
		term_escape(out, r->id);
		strbuf_addch(out, ' ');
		term_escape(out, r->variant);
		if (r->node) {
			strbuf_addstr(out, " on node ");
			term_escape(out, r->node);
		}
		strbuf_addf(out, " (%s's: %s): ", i < kernels ? "the kernel" : "infrastructure",
			    failure_kind_name(v[i].f.kind));
		term_escape(out, r->error ? r->error : "(no reason recorded)");
		strbuf_addch(out, '\n');
		if (ev && (!r->error || !strstr(r->error, ev) || strchr(r->error, '\n'))) {
			strbuf_addstr(out, "      evidence: ");
			term_escape(out, ev);
			strbuf_addch(out, '\n');
		}
	}
	failed_free(v, n);
}

/* What was decided, first: a line per compared variant. */
static void headline_text(const struct comparison *c, struct strbuf *out)
{
	_cleanup_strv_ struct strv h = STRV_INIT;

	report_headline(c, &h);
	if (h.n)
		strbuf_addstr(out, "Headline\n");
	for (size_t i = 0; i < h.n; i++) {
		_cleanup_strbuf_ struct strbuf e = STRBUF_INIT;

		term_escape(&e, h.v[i]);
		report_wrap(out, e.buf, 100, "  ");
	}
	if (h.n)
		strbuf_addch(out, '\n');
}

/* Then the picture of it: a forest per compared variant. */
static void forest_text(const struct comparison *c, struct strbuf *out, bool md)
{
	for (size_t k = 1; k < c->nvariants; k++) {
		_cleanup_strbuf_ struct strbuf f = STRBUF_INIT;

		report_forest_text(c, k, md, &f);
		if (!f.len)
			continue;
		strbuf_addstr(out, md ? "```\n" : "");
		strbuf_add(out, f.buf, f.len);
		strbuf_addstr(out, md ? "```\n\n" : "\n");
	}
}

void report_format_text(const struct comparison *c, const struct report_opts *o, struct strbuf *out)
{
	headline_text(c, out);
	if (o && o->part) {
		o->part->text(o->part->data, out);
		strbuf_addch(out, '\n');
	}
	forest_text(c, out, false);
	header_text(c, out);
	report_env_text(c, out);
	for (size_t g = 0; g < c->ngroups; g++)
		group_text(c, &c->groups[g], o, out);
	verdicts_text(c, out);
	observations_text(c, out);
	attrib_format_text(c, out);
	failed_runs_text(c->rs, out);
}

static void verdicts_md(const struct comparison *c, struct strbuf *out)
{
	if (!c->nverdicts)
		return;
	strbuf_addstr(out, "| verdict | variant | metric | expected | group | why | how |\n|---|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < c->nverdicts; i++) {
		const struct cmp_verdict *v = &c->verdicts[i];
		_cleanup_strbuf_ struct strbuf how = STRBUF_INIT;

		strbuf_addf(out, "| **%s** | ", verdict_name(v->v));
		md_escape(out, v->variant);
		strbuf_addstr(out, " | ");
		md_code(out, v->metric);
		strbuf_addf(out, " | %s | ", expect_direction_name(v->expect->dir));
		md_escape(out, v->group);
		strbuf_addstr(out, " | ");
		md_escape(out, v->why);
		strbuf_addstr(out, " | ");
		report_verdict_basis(v, &how);
		md_escape(out, how.buf);
		strbuf_addstr(out, " |\n");
	}
}

/* The failed runs as a table, the kernel's first: whose, what, the line
 * that decided it, and the error's first line. */
static void failed_runs_md(const struct result_set *rs, struct strbuf *out)
{
	struct failed_run *v;
	size_t n = failed_runs(rs, &v);

	if (n)
		strbuf_addstr(out, "\n| failed run | kernel | whose | what | evidence | error |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < n; i++) {
		const char *e = v[i].r->error ? v[i].r->error : "(no reason recorded)";
		_cleanup_free_ char *first = xstrndup(e, strcspn(e, "\n"));

		strbuf_addstr(out, "| ");
		md_escape(out, v[i].r->id);
		strbuf_addstr(out, " | ");
		md_escape(out, v[i].r->variant);
		strbuf_addf(out, " | %s | %s | ",
			    failure_is_kernels(v[i].f.kind) ? "**the kernel's**" : "infrastructure's",
			    failure_kind_name(v[i].f.kind));
		md_escape(out, v[i].f.evidence ? v[i].f.evidence : "");
		strbuf_addstr(out, " | ");
		md_escape(out, first);
		strbuf_addstr(out, " |\n");
	}
	failed_free(v, n);
}

static void observations_md(const struct comparison *c, struct strbuf *out)
{
	if (!c->nobs)
		return;
	strbuf_addstr(out, "\n| mechanism | kernel | metric | check | group | seen |\n|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < c->nobs; i++) {
		const struct cmp_observation *x = &c->obs[i];
		_cleanup_free_ char *rel = observe_describe(x->o);
		_cleanup_strbuf_ struct strbuf seen = STRBUF_INIT;

		strbuf_addf(out, "| **%s** | ", obs_state_name(x->state));
		md_escape(out, x->variant);
		strbuf_addstr(out, " | ");
		md_code(out, x->o->metric);
		strbuf_addstr(out, " | ");
		md_escape(out, rel);
		strbuf_addstr(out, " | ");
		if (x->group)
			md_escape(out, x->group);
		else
			strbuf_addch(out, '-');
		strbuf_addstr(out, " | ");
		report_observation_seen(x, &seen);
		md_escape(out, seen.buf);
		strbuf_addstr(out, " |\n");
	}
}

/* A side's mean, or that it reported nothing. */
static void md_mean(struct strbuf *out, const struct sample_stats *s)
{
	if (!s->n) {
		strbuf_addstr(out, "*not reported*");
		return;
	}
	report_fmt_value(out, s->mean);
	strbuf_addf(out, " ±%.1f%%", s->rsd_pct);
}

static void row_md(const struct comparison *c, const struct cmp_row *r, struct strbuf *out)
{
	strbuf_addstr(out, "| ");
	md_code(out, r->metric);
	strbuf_addstr(out, r->noisy ? " (noisy) | " : " | ");
	md_mean(out, &r->s[0]);
	strbuf_addstr(out, " |");
	for (size_t v = 1; v < c->nvariants; v++) {
		const struct cmp_delta *d = &r->d[v];
		const char *u = d->e.points ? "" : "%";

		if (d->have && isfinite(d->e.change) && isfinite(d->e.lo))
			strbuf_addf(out, " %+.1f%s [%+.1f, %+.1f] | ", d->e.change, u, d->e.lo, d->e.hi);
		else if (d->have && isfinite(d->e.change))
			strbuf_addf(out, " %+.1f%s | ", d->e.change, u);
		else
			strbuf_addstr(out, " | ");
		md_mean(out, &r->s[v]);
		if (d->e.tested && !isnan(d->q))
			strbuf_addf(out, " | %.2g | %.2g |", d->e.p, d->q);
		else if (d->e.tested)
			strbuf_addf(out, " | %.2g | - |", d->e.p);
		else
			strbuf_addstr(out, " | n/a | - |");
	}
	strbuf_addch(out, '\n');
}

static void group_md(const struct comparison *c, const struct cmp_group *gr, const struct report_opts *o,
		     struct strbuf *out)
{
	size_t nv = c->nvariants;

	strbuf_addstr(out, "\n## ");
	md_escape(out, gr->name);
	strbuf_addstr(out, "\n\n| metric | ");
	md_escape(out, c->rs->variants.v[0]);
	strbuf_addstr(out, " |");
	for (size_t v = 1; v < nv; v++) {
		strbuf_addstr(out, " %change | ");
		md_escape(out, c->rs->variants.v[v]);
		strbuf_addstr(out, " | p | q |");
	}
	strbuf_addstr(out, "\n|---|---:|");
	for (size_t v = 1; v < nv; v++)
		strbuf_addstr(out, "---:|---:|---:|---:|");
	strbuf_addch(out, '\n');
	for (size_t i = 0; i < gr->nrows; i++)
		if (o->all || gr->rows[i].flagged || cmp_is_expected(c, gr, gr->rows[i].metric))
			row_md(c, &gr->rows[i], out);
	disturbed_lines(o, gr, "\n> **disturbed:** ", "\n", md_escape, out);
}

void report_format_md(const struct comparison *c, const struct report_opts *o, struct strbuf *out)
{
	strbuf_addstr(out, "# ");
	md_escape(out, c->rs->experiment);
	strbuf_addstr(out, ": ");
	md_escape(out, c->rs->id);
	strbuf_addstr(out, "\n\n");
	{
		_cleanup_strv_ struct strv h = STRV_INIT;

		report_headline(c, &h);
		for (size_t i = 0; i < h.n; i++) {
			strbuf_addstr(out, "**");
			md_escape(out, h.v[i]);
			strbuf_addstr(out, "**\n\n");
		}
	}
	if (o && o->part) {
		/* the text tables as an indented code block: no fence a stored
		 * name could close (they are escaped there) */
		_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;

		o->part->text(o->part->data, &t);
		strbuf_addf(out, "## %s\n\n", o->part->title);
		for (const char *p = t.buf ? t.buf : ""; *p;) {
			size_t n = strcspn(p, "\n");

			strbuf_addf(out, "    %.*s\n", (int)n, p);
			p += n + (p[n] == '\n');
		}
		strbuf_addch(out, '\n');
	}
	forest_text(c, out, true);
	const char *notes[REPORT_MAX_NOTES];

	for (size_t i = 0, n = report_notes(c->rs, notes); i < n; i++) {
		strbuf_addstr(out, "> ");
		strbuf_addstr(out, notes[i]);
		strbuf_addstr(out, "\n\n");
	}
	report_env_md(c, out);
	verdicts_md(c, out);
	observations_md(c, out);
	failed_runs_md(c->rs, out);
	for (size_t g = 0; g < c->ngroups; g++)
		group_md(c, &c->groups[g], o, out);
	attrib_format_md(c, out);
	report_environments_md(c, out);
}

static void json_stats(struct json *j, const struct sample_stats *s)
{
	json_object_begin(j);
	json_kv_uint(j, "n", s->n);
	json_kv_double(j, "mean", s->mean);
	json_kv_double(j, "stddev", s->stddev);
	json_kv_double(j, "stddev_pct", s->rsd_pct);
	json_kv_double(j, "min", s->min);
	json_kv_double(j, "median", s->median);
	json_kv_double(j, "max", s->max);
	json_object_end(j);
}

static void json_delta(struct json *j, const struct cmp_delta *d)
{
	json_object_begin(j);
	json_key(j, "unit");
	json_string(j, d->e.points ? "points" : "percent");
	json_kv_double(j, "change", d->e.change);
	json_kv_double(j, "ci_low", d->e.lo);
	json_kv_double(j, "ci_high", d->e.hi);
	json_kv_double(j, "min_detectable", d->e.mde);
	json_kv_string(j, "method", d->e.method);
	json_kv_double(j, "p", d->e.p);
	json_kv_double(j, "q", d->q);
	json_kv_string(j, "why", d->e.why);
	json_key(j, "unit_of_test");
	json_string(j, d->e.by_boot ? "boot" : "run");
	for (int k = 0; k < 2; k++) {
		json_key(j, k ? "compared" : "baseline");
		json_object_begin(j);
		json_kv_uint(j, "boots", d->e.boots[k]);
		json_kv_uint(j, "runs", d->e.runs[k]);
		json_kv_double(j, "cv_between_boots_pct", d->e.cv_between[k]);
		json_kv_double(j, "cv_within_boot_pct", d->e.cv_within[k]);
		json_object_end(j);
	}
	json_key(j, "flagged");
	json_bool(j, d->flagged);
	json_key(j, "ranges_apart");
	json_bool(j, d->separate);
	json_object_end(j);
}

static void json_strings(struct json *j, const char *key, const char *const *v, size_t n)
{
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < n; i++)
		json_string(j, v[i]);
	json_array_end(j);
}

/* A number, or null when there is none. */
static void json_kv_double_or_null(struct json *j, const char *key, bool have, double v)
{
	json_key(j, key);
	if (have)
		json_double(j, v);
	else
		json_null(j);
}

static void json_runs(struct json *j, const struct result_set *rs)
{
	struct failed_run *v;
	size_t n;

	json_key(j, "runs");
	json_array_begin(j);
	for (size_t i = 0; i < rs->n; i++)
		result_run_json(j, &rs->runs[i]);
	json_array_end(j);
	/* whose failure each failed run is (result/failure.h), the kernel's first */
	json_key(j, "failures");
	json_array_begin(j);
	n = failed_runs(rs, &v);
	for (size_t i = 0; i < n; i++) {
		json_object_begin(j);
		json_kv_string(j, "run", v[i].r->id);
		json_kv_string(j, "owner", failure_owner_name(v[i].f.kind));
		json_kv_string(j, "kind", failure_kind_name(v[i].f.kind));
		json_kv_string(j, "evidence", v[i].f.evidence);
		json_object_end(j);
	}
	failed_free(v, n);
	json_array_end(j);
}

/* One metric of a group: each variant's figures, each compared one's delta. */
static void json_row(struct json *j, const struct comparison *c, const struct cmp_row *r)
{
	const struct result_set *rs = c->rs;

	json_object_begin(j);
	json_kv_string(j, "metric", r->metric);
	json_key(j, "noisy");
	json_bool(j, r->noisy);
	json_key(j, "variants");
	json_object_begin(j);
	for (size_t v = 0; v < c->nvariants; v++) {
		json_key(j, rs->variants.v[v]);
		json_stats(j, &r->s[v]);
	}
	json_object_end(j);
	json_key(j, "against_baseline");
	json_object_begin(j);
	for (size_t v = 1; v < c->nvariants; v++) {
		json_key(j, rs->variants.v[v]);
		if (r->d[v].have)
			json_delta(j, &r->d[v]);
		else
			json_null(j);
	}
	json_object_end(j);
	json_object_end(j);
}

static void json_groups(struct json *j, const struct comparison *c)
{
	json_key(j, "groups");
	json_array_begin(j);
	for (size_t g = 0; g < c->ngroups; g++) {
		const struct cmp_group *gr = &c->groups[g];

		json_object_begin(j);
		json_kv_string(j, "name", gr->name);
		json_key(j, "metrics");
		json_array_begin(j);
		for (size_t i = 0; i < gr->nrows; i++)
			json_row(j, c, &gr->rows[i]);
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_verdicts(struct json *j, const struct comparison *c)
{
	json_key(j, "verdicts");
	json_array_begin(j);
	for (size_t i = 0; i < c->nverdicts; i++) {
		const struct cmp_verdict *v = &c->verdicts[i];

		json_object_begin(j);
		json_kv_string(j, "verdict", verdict_name(v->v));
		json_kv_string(j, "variant", v->variant);
		json_kv_string(j, "metric", v->metric);
		json_kv_string(j, "group", v->group);
		json_kv_string(j, "expected", expect_direction_name(v->expect->dir));
		json_kv_double_or_null(j, "effect", v->expect->has_effect, v->expect->effect);
		json_kv_uint(j, "n_baseline", v->na);
		json_kv_uint(j, "n_compared", v->nb);
		json_kv_double(j, "alpha", v->alpha);
		json_kv_uint(j, "look", v->look);
		json_kv_uint(j, "looks", v->looks);
		json_kv_string(j, "method", v->d ? v->d->e.method : stat_method_name(v->method));
		json_kv_string(j, "why", v->why);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_observation(struct json *j, const struct cmp_observation *x)
{
	_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;

	report_observation_evidence(x, &ev);
	json_object_begin(j);
	json_kv_string(j, "state", x->state == OBS_HOLDS	       ? "holds"
				   : x->state == OBS_FAILS	       ? "fails"
				   : x->state == OBS_INCONCLUSIVE ? "inconclusive"
								   : "missing");
	json_kv_string(j, "variant", x->variant);
	json_kv_string(j, "metric", x->o->metric);
	json_kv_string(j, "check", observe_rel_name(x->o->rel));
	json_kv_double_or_null(j, "value", x->o->rel < OBS_HIGHER, x->o->value);
	json_kv_string(j, "says", x->o->says);
	json_kv_string(j, "group", x->group);
	json_kv_uint(j, "n", x->s.n);
	if (x->s.n) {
		json_kv_double_or_null(j, "min", true, x->s.min);
		json_kv_double_or_null(j, "max", true, x->s.max);
	}
	if (x->base.n) {
		json_kv_double_or_null(j, "baseline_min", true, x->base.min);
		json_kv_double_or_null(j, "baseline_max", true, x->base.max);
	}
	if (x->decided) {
		/* the decision, boots as the unit; the robot's rule beside it */
		json_kv_double_or_null(j, x->e.points ? "change_points" : "change_pct", isfinite(x->e.change), x->e.change);
		json_kv_double_or_null(j, "lo", isfinite(x->e.lo), x->e.lo);
		json_kv_double_or_null(j, "hi", isfinite(x->e.hi), x->e.hi);
		json_kv_double_or_null(j, "p", isfinite(x->e.p), x->e.p);
		json_kv_double_or_null(j, "mde", isfinite(x->e.mde), x->e.mde);
		json_kv_double(j, "alpha", x->alpha);
		json_kv_double_or_null(j, "margin", x->margin > 0, x->margin);
		json_kv_string(j, "method", x->e.method);
		json_key(j, "ranges_apart");
		json_bool(j, x->apart);
		json_kv_string(j, "why", x->why);
	}
	json_kv_string(j, "seen", ev.buf ? ev.buf : "");
	json_object_end(j);
}

void report_format_json(const struct comparison *c, const struct report_opts *o, struct strbuf *out)
{
	const struct result_set *rs = c->rs;
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_string(&j, "run", rs->id);
	json_kv_string(&j, "experiment", rs->experiment);
	{
		_cleanup_strv_ struct strv h = STRV_INIT;

		report_headline(c, &h);
		json_strings(&j, "headline", (const char *const *)h.v, h.n);
	}
	if (o && o->part) {
		json_key(&j, o->part->key);
		o->part->json(o->part->data, &j);
	}
	json_kv_double(&j, "confidence", c->conf);
	json_strings(&j, "variants", (const char *const *)rs->variants.v, c->nvariants);
	json_strings(&j, "mechanism", (const char *const *)rs->mechanism.v, rs->mechanism.n);
	if (rs->cluster.n)
		json_strings(&j, "cluster", (const char *const *)rs->cluster.v, rs->cluster.n);
	json_kv_string(&j, "timing", rs->icount ? "icount" : "host");
	json_runs(&j, rs);
	json_groups(&j, c);
	json_verdicts(&j, c);
	json_key(&j, "observations");
	json_array_begin(&j);
	for (size_t i = 0; i < c->nobs; i++)
		json_observation(&j, &c->obs[i]);
	json_array_end(&j);
	attrib_format_json(c, &j);
	if (c->nenv)
		report_env_json(c, &j);
	report_environments_json(c, &j);
	json_object_end(&j);
	json_finish(&j);
}
