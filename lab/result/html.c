/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained file (no script, no external
 * resource), written through the escaping XML writer: the verdicts, the
 * mechanism checks, per group the robot's table, and per chosen metric an
 * inline SVG chart: every run's value per variant (baseline first, so a
 * sweep reads left to right), the mean and its 95% interval.
 */
#include <math.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/xml.h"
#include "attrib.h"
#include "report.h"
#include "../util/banned.h"

#define CHART_W 420
#define CHART_H 220
#define MAX_CHARTS 24

static const char css[] =
	"body{font-family:sans-serif;margin:2em;color:#222}"
	"table{border-collapse:collapse;margin:1em 0}"
	"td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}"
	"td.m,th.m{text-align:left;font-family:monospace}"
	".improved{background:#d8f5d0}.regressed,.changed{background:#f8d0d0}"
	".unchanged{background:#eef}.inconclusive{background:#f5f0d0}.smaller{background:#e8f0d8}"
	".up{background:#e0ecff}.down{background:#ffe8d0}.noisy{color:#a60}.none{color:#888;font-style:italic}"
	"figure{display:inline-block;margin:0.5em}figcaption{font-family:monospace;font-size:12px}";

static void cell(struct xml *x, const char *cls, const char *fmt, ...) _printf_(3, 4);
static void cell(struct xml *x, const char *cls, const char *fmt, ...)
{
	va_list ap;
	_cleanup_free_ char *t = NULL;

	va_start(ap, fmt);
	t = xvasprintf(fmt, ap);
	va_end(ap);
	xml_open(x, "td");
	if (cls)
		xml_attr(x, "class", cls);
	xml_text(x, t);
	xml_close(x);
}

static void head_cell(struct xml *x, const char *cls, const char *text)
{
	xml_open(x, "th");
	if (cls)
		xml_attr(x, "class", cls);
	xml_text(x, text);
	xml_close(x);
}

/* Every run's value of `metric` in group g, per variant. */
static void values(const struct comparison *c, const struct cmp_group *g, const char *metric, double **v,
		   size_t *n)
{
	const struct result_set *rs = c->rs;

	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];
		ssize_t vi;

		if (r->status != RUN_OK || !streq(r->group, g->name))
			continue;
		vi = strv_index(&rs->variants, r->variant);
		for (size_t k = 0; vi >= 0 && k < r->nm; k++)
			if (streq(r->m[k].name, metric)) {
				v[vi] = xrealloc(v[vi], (n[vi] + 1) * sizeof(double));
				v[vi][n[vi]++] = r->m[k].value;
				break;
			}
	}
}

/* A chart's plot area and value range: where a value goes on the y axis. */
struct plot {
	double left, top, pw, ph; /* the plot area inside the SVG */
	double lo, hi;            /* the values at its bottom and top */
};

static double plot_y(const struct plot *p, double val)
{
	return p->top + p->ph * (1 - (val - p->lo) / (p->hi - p->lo));
}

/* The range of every value, padded; false when there is none. */
static bool plot_range(struct plot *p, double *const *v, const size_t *n, size_t nv)
{
	double lo = INFINITY, hi = -INFINITY, pad;

	for (size_t i = 0; i < nv; i++)
		for (size_t k = 0; k < n[i]; k++) {
			lo = fmin(lo, v[i][k]);
			hi = fmax(hi, v[i][k]);
		}
	if (!isfinite(lo))
		return false;
	if (hi == lo) {
		hi += fabs(hi) * 0.05 + 1;
		lo -= fabs(lo) * 0.05 + 1;
	}
	pad = (hi - lo) * 0.08;
	p->lo = lo - pad;
	p->hi = hi + pad;
	return true;
}

/* The SVG's frame: background, the two axes and five y labels. */
static void plot_axes(struct xml *x, const struct plot *p)
{
	xml_empty(x, "rect", "x", "0", "y", "0", "width", "100%", "height", "100%", "fill", "#fff", NULL);
	{
		_cleanup_free_ char *y0 = xasprintf("%.1f", p->top), *y1 = xasprintf("%.1f", p->top + p->ph);
		_cleanup_free_ char *xl = xasprintf("%.1f", p->left), *xr = xasprintf("%.1f", p->left + p->pw);

		xml_empty(x, "line", "x1", xl, "y1", y1, "x2", xr, "y2", y1, "stroke", "#888", NULL);
		xml_empty(x, "line", "x1", xl, "y1", y0, "x2", xl, "y2", y1, "stroke", "#888", NULL);
	}
	for (int t = 0; t <= 4; t++) {
		double val = p->lo + (p->hi - p->lo) * t / 4;
		_cleanup_free_ char *label = xasprintf("%.4g", val);

		xml_open(x, "text");
		xml_attrf(x, "x", "%.1f", p->left - 4);
		xml_attrf(x, "y", "%.1f", plot_y(p, val) + 4);
		xml_attr(x, "font-size", "10");
		xml_attr(x, "text-anchor", "end");
		xml_text(x, label);
		xml_close(x);
	}
}

/* A horizontal or vertical black line from (x1, y1) to (x2, y2). */
static void plot_line(struct xml *x, double x1, double x2, double y1, double y2, const char *width)
{
	xml_open(x, "line");
	xml_attrf(x, "x1", "%.1f", x1);
	xml_attrf(x, "x2", "%.1f", x2);
	xml_attrf(x, "y1", "%.1f", y1);
	xml_attrf(x, "y2", "%.1f", y2);
	xml_attr(x, "stroke", "#000");
	if (width)
		xml_attr(x, "stroke-width", width);
	xml_close(x);
}

/* One variant's column: its runs' values as points, its mean as a bar, the
 * mean's interval (from stats.c) as a whisker, its name below. */
static void plot_variant(struct xml *x, const struct plot *p, const struct comparison *c, size_t i, size_t nv,
			 const double *v, size_t n, const struct sample_stats *s)
{
	double cx = p->left + p->pw * (i + 0.5) / nv, half = p->pw / nv * 0.3;

	for (size_t k = 0; k < n; k++) {
		/* a fixed spread, so points of equal value stay visible */
		double jx = cx + half * 0.6 * ((double)(k % 7) / 3.0 - 1);

		xml_open(x, "circle");
		xml_attrf(x, "cx", "%.1f", jx);
		xml_attrf(x, "cy", "%.1f", plot_y(p, v[k]));
		xml_attr(x, "r", "3");
		xml_attr(x, "fill", i ? "#c33" : "#36c");
		xml_attr(x, "fill-opacity", "0.6");
		xml_close(x);
	}
	if (s->n)
		plot_line(x, cx - half, cx + half, plot_y(p, s->mean), plot_y(p, s->mean), "2");
	if (s->n > 1) {
		double hw = stats_mean_halfwidth(s, c->conf);

		plot_line(x, cx, cx, plot_y(p, fmax(p->lo, s->mean - hw)), plot_y(p, fmin(p->hi, s->mean + hw)), NULL);
	}
	xml_open(x, "text");
	xml_attrf(x, "x", "%.1f", cx);
	xml_attrf(x, "y", "%.1f", p->top + p->ph + 16);
	xml_attr(x, "font-size", "11");
	xml_attr(x, "text-anchor", "middle");
	xml_text(x, c->rs->variants.v[i]);
	xml_close(x);
}

static void chart(struct xml *x, const struct comparison *c, const struct cmp_group *g, const struct cmp_row *row)
{
	size_t nv = c->nvariants;
	double **v = xcalloc(nv, sizeof(*v));
	size_t *n = xcalloc(nv, sizeof(*n));
	const double right = 10, bottom = 40;
	struct plot p = { .left = 60, .top = 10 };

	p.pw = CHART_W - p.left - right;
	p.ph = CHART_H - p.top - bottom;
	values(c, g, row->metric, v, n);
	if (plot_range(&p, v, n, nv)) {
		xml_open(x, "figure");
		xml_open(x, "svg");
		xml_attr(x, "xmlns", "http://www.w3.org/2000/svg");
		xml_attrf(x, "width", "%d", CHART_W);
		xml_attrf(x, "height", "%d", CHART_H);
		xml_attrf(x, "viewBox", "0 0 %d %d", CHART_W, CHART_H);
		plot_axes(x, &p);
		for (size_t i = 0; i < nv; i++)
			plot_variant(x, &p, c, i, nv, v[i], n[i], &row->s[i]);
		xml_close(x); /* svg */
		xml_element(x, "figcaption", row->metric);
		xml_close(x); /* figure */
	}
	for (size_t i = 0; i < nv; i++)
		free(v[i]);
	free(v);
	free(n);
}

/* A side's mean, or that it reported nothing: an empty side is never "0 ±0%". */
static void mean_cell(struct xml *x, const struct sample_stats *s)
{
	if (!s->n)
		cell(x, "none", "not reported");
	else
		cell(x, NULL, "%.4g ±%.1f%%", s->mean, s->rsd_pct);
}

static void table(struct xml *x, const struct comparison *c, const struct cmp_group *g, const struct report_opts *o)
{
	size_t nv = c->nvariants;

	xml_open(x, "table");
	xml_open(x, "tr");
	head_cell(x, "m", "metric");
	head_cell(x, NULL, c->rs->variants.v[0]);
	for (size_t v = 1; v < nv; v++) {
		head_cell(x, NULL, "%change");
		head_cell(x, NULL, c->rs->variants.v[v]);
		head_cell(x, NULL, "p, q");
	}
	xml_close(x);
	for (size_t i = 0; i < g->nrows; i++) {
		const struct cmp_row *r = &g->rows[i];

		if (!o->all && nv > 1 && !r->flagged && !cmp_is_expected(c, g, r->metric))
			continue;
		xml_open(x, "tr");
		if (r->noisy)
			xml_attr(x, "class", "noisy");
		cell(x, "m", "%s%s", r->metric, r->noisy ? " (noisy)" : "");
		mean_cell(x, &r->s[0]);
		for (size_t v = 1; v < nv; v++) {
			const struct cmp_delta *d = &r->d[v];
			const char *u = d->e.points ? "" : "%";

			if (d->have && isfinite(d->e.change) && isfinite(d->e.lo))
				cell(x, d->flagged ? (d->e.change > 0 ? "up" : "down") : NULL, "%+.1f%s [%+.1f, %+.1f]",
				     d->e.change, u, d->e.lo, d->e.hi);
			else if (d->have && isfinite(d->e.change))
				cell(x, d->flagged ? (d->e.change > 0 ? "up" : "down") : NULL, "%+.1f%s", d->e.change, u);
			else
				cell(x, NULL, "-");
			mean_cell(x, &r->s[v]);
			if (d->e.tested && !isnan(d->q))
				cell(x, NULL, "%.2g, %.2g%s", d->e.p, d->q, d->separate ? " R" : "");
			else if (d->e.tested)
				cell(x, NULL, "%.2g%s", d->e.p, d->separate ? " R" : "");
			else
				cell(x, NULL, "n/a");
		}
		xml_close(x);
	}
	xml_close(x);
}

static void verdicts_html(struct xml *x, const struct comparison *c)
{
	if (!c->nverdicts)
		return;
	xml_element(x, "h2", "Expectations");
	xml_open(x, "table");
	xml_open(x, "tr");
	head_cell(x, NULL, "verdict");
	head_cell(x, "m", "variant");
	head_cell(x, "m", "metric");
	head_cell(x, "m", "group");
	head_cell(x, "m", "why");
	head_cell(x, "m", "how");
	xml_close(x);
	for (size_t i = 0; i < c->nverdicts; i++) {
		const struct cmp_verdict *v = &c->verdicts[i];
		_cleanup_strbuf_ struct strbuf how = STRBUF_INIT;

		report_verdict_basis(v, &how);
		xml_open(x, "tr");
		cell(x, verdict_name(v->v), "%s", verdict_name(v->v));
		cell(x, "m", "%s", v->variant);
		cell(x, "m", "%s", v->metric);
		cell(x, "m", "%s", v->group);
		cell(x, "m", "%s", v->why);
		cell(x, "m", "%s", how.buf);
		xml_close(x);
	}
	xml_close(x);
}

static void observations_html(struct xml *x, const struct comparison *c)
{
	if (!c->nobs)
		return;
	xml_element(x, "h2", "Mechanism checks");
	xml_open(x, "table");
	xml_open(x, "tr");
	head_cell(x, NULL, "check");
	head_cell(x, "m", "kernel");
	head_cell(x, "m", "metric");
	head_cell(x, "m", "expected");
	head_cell(x, "m", "group");
	head_cell(x, "m", "seen");
	xml_close(x);
	for (size_t i = 0; i < c->nobs; i++) {
		const struct cmp_observation *ob = &c->obs[i];
		_cleanup_free_ char *rel = observe_describe(ob->o);
		_cleanup_strbuf_ struct strbuf ev = STRBUF_INIT;

		report_observation_seen(ob, &ev);
		xml_open(x, "tr");
		cell(x, ob->state == OBS_HOLDS ? "improved" : ob->state == OBS_FAILS ? "regressed" : "inconclusive",
		     "%s", obs_state_name(ob->state));
		cell(x, "m", "%s", ob->variant);
		cell(x, "m", "%s", ob->o->metric);
		cell(x, "m", "%s", rel);
		cell(x, "m", "%s", ob->group ? ob->group : "-");
		cell(x, "m", "%s", ev.buf);
		xml_close(x);
	}
	xml_close(x);
}

/* A group's table, then its charts: the expected metrics, then the significant ones. */
static void group_html(struct xml *x, const struct comparison *c, const struct cmp_group *g,
		       const struct report_opts *o)
{
	size_t charts = 0;

	xml_element(x, "h2", g->name);
	table(x, c, g, o);
	for (size_t i = 0; o->calib && i < o->calib->nov; i++) {
		_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

		if (report_disturbed(o, g->name, i, &line))
			xml_element(x, "p", line.buf);
	}
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < g->nrows && charts < MAX_CHARTS; i++) {
			const struct cmp_row *r = &g->rows[i];
			bool want = pass == 0 ? cmp_is_expected(c, g, r->metric)
					      : (!cmp_is_expected(c, g, r->metric) && (r->flagged || c->nvariants < 2));

			if (!want)
				continue;
			chart(x, c, g, r);
			charts++;
		}
}

void report_format_html(const struct comparison *c, const struct report_opts *o, struct strbuf *out)
{
	const struct result_set *rs = c->rs;
	_cleanup_free_ char *title = xasprintf("lab: %s %s", rs->experiment, rs->id);
	_cleanup_free_ char *legend = report_legend(c);
	const char *notes[REPORT_MAX_NOTES];
	struct xml x;

	strbuf_addstr(out, "<!DOCTYPE html>\n");
	xml_init(&x, out);
	xml_open(&x, "html");
	xml_attr(&x, "lang", "en");
	xml_open(&x, "head");
	xml_empty(&x, "meta", "charset", "utf-8", NULL);
	xml_element(&x, "title", title);
	xml_element(&x, "style", css);
	xml_close(&x);
	xml_open(&x, "body");
	xml_element(&x, "h1", title);
	{
		_cleanup_strv_ struct strv h = STRV_INIT;

		/* what was decided, first */
		report_headline(c, &h);
		for (size_t i = 0; i < h.n; i++) {
			xml_open(&x, "p");
			xml_element(&x, "strong", h.v[i]);
			xml_close(&x);
		}
	}
	for (size_t i = 0; i < rs->mechanism.n; i++)
		xml_element(&x, "p", rs->mechanism.v[i]);
	for (size_t i = 0; i < rs->cluster.n; i++) {
		_cleanup_free_ char *line = xasprintf("cluster: %s", rs->cluster.v[i]);

		xml_element(&x, "p", line);
	}
	for (size_t i = 0, n = report_notes(rs, notes); i < n; i++)
		xml_element(&x, "p", notes[i]);
	xml_element(&x, "p", legend);
	report_env_html(c, &x);
	verdicts_html(&x, c);
	observations_html(&x, c);
	for (size_t gi = 0; gi < c->ngroups; gi++)
		group_html(&x, c, &c->groups[gi], o);
	attrib_format_html(c, &x);
	xml_close(&x); /* body */
	xml_close(&x); /* html */
	strbuf_addch(out, '\n');
}
