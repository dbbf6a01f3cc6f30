/* SPDX-License-Identifier: MIT */
/*
 * The HTML report: one self-contained file (no script, no external
 * resource) written through the escaping XML writer, for a reader with ten
 * seconds: the headline, a forest plot per compared variant (forest.c),
 * then the verdicts, the mechanism checks, and per group (a section that
 * folds) the robot's table and per chosen metric a strip chart of every
 * run's value by boot, each boot's mean and each side's mean and interval;
 * at the end the environment the runs were measured in and the commands
 * that reproduce them. Every figure's caption comes before its picture and
 * names the metric, group and unit; every figure lab writes is in human
 * units (15.2k, 9.5 ms), and the words the other layers wrote (a verdict's
 * why, p-values) get their e-notation rewritten (2.8×10⁻⁷) on the way out.
 * Readable on a phone (the pictures scale, the tables scroll) and printable.
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/units.h"
#include "../util/xml.h"
#include "attrib.h"
#include "report.h"
#include "../util/banned.h"

#define CHART_W 440
#define CHART_H 250
#define MAX_CHARTS 24

/* No '>' and no quote in here: the writer escapes them, and a style
 * element takes its text as it is. */
static const char css[] =
	"body{font-family:sans-serif;margin:2em;color:#222;line-height:1.35}"
	"h1{font-size:1.5em;overflow-wrap:anywhere}"
	"table{border-collapse:collapse;margin:0.5em 0}"
	"td,th{border:1px solid #ccc;padding:2px 8px;text-align:right;vertical-align:top;white-space:nowrap}"
	"td.m,th.m{text-align:left;font-family:monospace;min-width:8em;white-space:normal}td.w{min-width:20em}"
	".scroll{overflow-x:auto;max-width:100%}"
	".improved{background:#d3efe6}.regressed,.changed{background:#f7dccc}"
	".unchanged{background:#d6e6f3}.inconclusive{background:#fbeccc}.smaller{background:#e2f1fa}"
	".up{background:#e0ecff}.down{background:#ffe8d0}.noisy{color:#a60}.none{color:#888;font-style:italic}"
	"figure{display:inline-block;vertical-align:top;margin:0.5em 1em 1em 0;max-width:100%}"
	"figure.forest{display:block;margin:0.5em 0 1.5em}figure.forest svg{width:100%;max-width:620px}"
	"figcaption{font-size:13px;margin-bottom:4px;max-width:40em}"
	"figcaption .leg{display:block;color:#555;font-size:12px}"
	"svg{max-width:100%;height:auto;display:block}"
	"details{margin:1em 0;border-top:1px solid #ccc}"
	"summary{font-size:1.3em;font-weight:bold;padding:0.3em 0;cursor:pointer}"
	"code{font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f3f3;padding:1px 3px}"
	"ul.cmd li{margin:0.4em 0}"
	"td.h{overflow-wrap:anywhere;min-width:8em}"
	"@media (max-width:600px){body{margin:0.6em}figure{margin:0.5em 0}}"
	"@media print{*{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
	"body{margin:0}details::details-content{content-visibility:visible;display:contents}"
	"summary{list-style:none}figure,tr,li{break-inside:avoid;page-break-inside:avoid}"
	".scroll{overflow:visible}}";

/* Okabe-Ito, the baseline blue: a variant's points. */
static const char *const variant_colour[] = { "#0072B2", "#D55E00", "#009E73", "#CC79A7",
					      "#E69F00", "#56B4E9", "#000000", "#F0E442" };

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

/* A table that scrolls sideways on a narrow screen: close both with table_end. */
static void table_begin(struct xml *x)
{
	xml_open(x, "div");
	xml_attr(x, "class", "scroll");
	xml_open(x, "table");
}

static void table_end(struct xml *x)
{
	xml_close(x); /* table */
	xml_close(x); /* div */
}

/* A time's scale from a name's last part: "latency_p95_ms" 1e-3; 0: none. */
static double time_suffix(const char *last)
{
	static const struct {
		const char *suffix;
		double scale;
	} sfx[] = {
		{ "_ns", 1e-9 }, { "_nsec", 1e-9 }, { "_us", 1e-6 }, { "_usec", 1e-6 }, { "_ms", 1e-3 },
		{ "_msec", 1e-3 }, { "_s", 1 }, { "_sec", 1 }, { "_secs", 1 }, { "_seconds", 1 },
	};

	for (size_t i = 0; i < ELEMENTSOF(sfx); i++) {
		size_t n = strlen(last), k = strlen(sfx[i].suffix);

		/* "ctxt_per_sec" is a rate */
		if (n > k && streq(last + n - k, sfx[i].suffix) &&
		    !(n >= k + 4 && !strncmp(last + n - k - 4, "_per", 4)) && !(n == k + 3 && str_startswith(last, "per")))
			return sfx[i].scale;
	}
	return 0;
}

void report_metric_unit(const char *metric, struct metric_unit *ret)
{
	static const char *const names[] = { "ns", "µs", "ms", "s" };
	const char *last = strrchr(metric, '.'), *second = strchr(metric, '.');
	double scale;

	*ret = (struct metric_unit){ .kind = METRIC_PLAIN };
	if (metric_is_percentage(metric)) {
		*ret = (struct metric_unit){ .kind = METRIC_PERCENT, .name = "%" };
		return;
	}
	last = last ? last + 1 : metric;
	if ((scale = time_suffix(last)) > 0) {
		*ret = (struct metric_unit){ .kind = METRIC_TIME, .to_seconds = scale,
					     .name = names[scale < 1e-6 ? 0 : scale < 1e-3 ? 1 : scale < 1 ? 2 : 3] };
		return;
	}
	/* the workload's own measure right after its name: hackbench.time, kbuild.time.total,
	 * kbuild.buildtime_per_iteration (symbols and locks further on are names, not units) */
	if (second && !str_startswith(metric, "perf-") && !str_startswith(metric, "lock.")) {
		const char *word = second + 1;
		size_t n = strcspn(word, "._");

		/* "time_slices" counts slices */
		if (n >= 4 && !strncmp(word + n - 4, "time", 4) && (word[n] != '_' || str_startswith(word + n, "_per_")))
			*ret = (struct metric_unit){ .kind = METRIC_TIME, .to_seconds = 1, .name = "s" };
	}
}

char *report_value_text(const struct metric_unit *u, double v, unsigned digits)
{
	_cleanup_free_ char *n = NULL;

	switch (u->kind) {
	case METRIC_TIME:
		return human_seconds(v * u->to_seconds, digits);
	case METRIC_PERCENT:
		n = human_number(v, digits);
		return xasprintf("%s%%", n);
	case METRIC_PLAIN:
		break;
	}
	return human_number(v, digits);
}

/* A p- or q-value: two digits, a small one as a power of ten. */
static char *p_text(double p)
{
	return p >= 1e-4 ? xasprintf("%.2g", p) : human_scientific(p, 2);
}

/* A chart's plot area and value range: where a value goes on the y axis. */
struct plot {
	double left, top, pw, ph; /* the plot area inside the SVG */
	double lo, hi;            /* the values at its bottom and top (their log10 on a log axis) */
	bool log;
};

static double plot_y(const struct plot *p, double val)
{
	double t = p->log ? log10(val) : val;

	return p->top + p->ph * (1 - (t - p->lo) / (p->hi - p->lo));
}

/* The range of every value, padded, on a log axis when every value is
 * positive and they span more than two decades; false when there is none. */
static bool plot_range(struct plot *p, const struct side *s, size_t nv)
{
	double lo = INFINITY, hi = -INFINITY, pad;

	for (size_t i = 0; i < nv; i++)
		for (size_t k = 0; k < s[i].n; k++) {
			lo = fmin(lo, s[i].v[k]);
			hi = fmax(hi, s[i].v[k]);
		}
	if (!isfinite(lo) || !isfinite(hi))
		return false;
	p->log = lo > 0 && hi / lo > 100;
	if (p->log) {
		lo = log10(lo);
		hi = log10(hi);
	}
	if (hi == lo) {
		hi += fabs(hi) * 0.05 + (p->log ? 0.1 : 1);
		lo -= fabs(lo) * 0.05 + (p->log ? 0.1 : 1);
	}
	pad = (hi - lo) * 0.08;
	p->lo = lo - pad;
	p->hi = hi + pad;
	return true;
}

static void y_label(struct xml *x, const struct plot *p, const struct metric_unit *u, double val, unsigned digits)
{
	_cleanup_free_ char *label = report_value_text(u, val, digits);
	double y = plot_y(p, val);

	xml_open(x, "line");
	xml_attrf(x, "x1", "%.1f", p->left);
	xml_attrf(x, "x2", "%.1f", p->left + p->pw);
	xml_attrf(x, "y1", "%.1f", y);
	xml_attrf(x, "y2", "%.1f", y);
	xml_attr(x, "stroke", "#eeeeee");
	xml_close(x);
	xml_open(x, "text");
	xml_attrf(x, "x", "%.1f", p->left - 4);
	xml_attrf(x, "y", "%.1f", y + 4);
	xml_attr(x, "font-size", "11");
	xml_attr(x, "text-anchor", "end");
	xml_text(x, label);
	xml_close(x);
}

/* The SVG's frame: background, y labels on round values (decades on a log
 * axis) in the metric's unit, the two axes. */
static void plot_axes(struct xml *x, const struct plot *p, const struct metric_unit *u)
{
	if (p->log) {
		for (double e = ceil(p->lo); e <= p->hi; e++)
			y_label(x, p, u, pow(10, e), 3);
	} else {
		double step = report_nice_step((p->hi - p->lo) / 5);
		double top = fmax(fabs(p->lo), fabs(p->hi));
		int digits = (int)floor(log10(top)) - (int)floor(log10(step)) + 1;

		digits = digits < 2 ? 2 : digits > 15 ? 15 : digits;
		for (double i = ceil(p->lo / step); i * step <= p->hi; i++)
			y_label(x, p, u, fabs(i) < 0.5 ? 0 : i * step, (unsigned)digits);
	}
	{
		_cleanup_free_ char *y0 = xasprintf("%.1f", p->top), *y1 = xasprintf("%.1f", p->top + p->ph);
		_cleanup_free_ char *xl = xasprintf("%.1f", p->left), *xr = xasprintf("%.1f", p->left + p->pw);

		xml_empty(x, "line", "x1", xl, "y1", y1, "x2", xr, "y2", y1, "stroke", "#888", NULL);
		xml_empty(x, "line", "x1", xl, "y1", y0, "x2", xl, "y2", y1, "stroke", "#888", NULL);
	}
}

/* A black line of the strip chart, from (x1, y1) to (x2, y2). */
static void plot_line(struct xml *x, double x1, double x2, double y1, double y2, const char *width)
{
	report_svg_line(x, x1, y1, x2, y2, "#000", width, NULL);
}

/* The variant's name under its column, and how many runs and boots it had;
 * slanted when the columns are narrow. */
static void column_label(struct xml *x, const struct plot *p, double cx, const char *name, size_t runs,
			 size_t boots, bool slant)
{
	double ty = p->top + p->ph + 15;

	xml_open(x, "text");
	xml_attrf(x, "x", "%.1f", cx);
	xml_attrf(x, "y", "%.1f", ty);
	xml_attr(x, "font-size", "11");
	if (slant) {
		xml_attr(x, "text-anchor", "end");
		xml_attrf(x, "transform", "rotate(-30 %.1f %.1f)", cx, ty);
	} else {
		xml_attr(x, "text-anchor", "middle");
	}
	xml_text(x, name);
	xml_close(x);
	if (!slant) {
		_cleanup_free_ char *n = boots ? xasprintf("%zu runs, %zu boot%s", runs, boots, boots == 1 ? "" : "s")
					       : xasprintf("%zu run%s", runs, runs == 1 ? "" : "s");

		xml_open(x, "text");
		xml_attrf(x, "x", "%.1f", cx);
		xml_attrf(x, "y", "%.1f", ty + 13);
		xml_attr(x, "font-size", "10");
		xml_attr(x, "fill", "#666");
		xml_attr(x, "text-anchor", "middle");
		xml_text(x, n);
		xml_close(x);
	}
}

/* One variant's column: its runs as points, those of a boot in a cluster
 * of their own with the boot's mean as a diamond (all in one cluster when
 * the boots are not known); to the right the side's mean as a bar and its
 * interval (from stats.c) as a whisker. */
static void plot_variant(struct xml *x, const struct plot *p, const struct comparison *c, size_t i, size_t nv,
			 const struct side *s, const struct sample_stats *st)
{
	double cw = p->pw / nv, x0 = p->left + cw * i, area = cw * 0.62, sx = x0 + cw * 0.8;
	_cleanup_free_ size_t *which = xcalloc(s->n + 1, sizeof(size_t));
	size_t nb = decide_boot_index(s, which), clusters = nb ? nb : 1;
	_cleanup_free_ double *sum = xcalloc(clusters, sizeof(double));
	_cleanup_free_ size_t *cnt = xcalloc(clusters, sizeof(size_t)), *seen = xcalloc(clusters, sizeof(size_t));
	double slot = area / clusters;

	for (size_t k = 0; k < s->n; k++) {
		sum[nb ? which[k] : 0] += s->v[k];
		cnt[nb ? which[k] : 0]++;
	}
	for (size_t k = 0; k < s->n; k++) {
		size_t b = nb ? which[k] : 0;
		double step = fmin(9, slot * 0.9 / (double)cnt[b]);
		double bx = x0 + cw * 0.06 + slot * (b + 0.5);

		xml_open(x, "circle");
		xml_attrf(x, "cx", "%.1f", bx + step * ((double)seen[b]++ - (double)(cnt[b] - 1) / 2));
		xml_attrf(x, "cy", "%.1f", plot_y(p, s->v[k]));
		xml_attr(x, "r", "3");
		xml_attr(x, "fill", variant_colour[i % ELEMENTSOF(variant_colour)]);
		xml_attr(x, "fill-opacity", "0.7");
		xml_close(x);
	}
	for (size_t b = 0; nb && b < nb; b++) {
		double bx = x0 + cw * 0.06 + slot * (b + 0.5), by = plot_y(p, sum[b] / (double)cnt[b]);

		xml_open(x, "polygon");
		xml_attrf(x, "points", "%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f", bx, by - 4.5, bx + 3.5, by, bx, by + 4.5,
			  bx - 3.5, by);
		xml_attr(x, "fill", "#000");
		xml_attr(x, "stroke", "#fff");
		xml_close(x);
	}
	if (st->n > 1) {
		double hw = stats_mean_halfwidth(st, c->conf);
		double lo = st->mean - hw, hi = st->mean + hw;

		/* a log axis has no room for what is not positive */
		lo = p->log && lo <= 0 ? pow(10, p->lo) : lo;
		lo = fmax(lo, p->log ? pow(10, p->lo) : p->lo);
		hi = fmin(hi, p->log ? pow(10, p->hi) : p->hi);
		plot_line(x, sx, sx, plot_y(p, lo), plot_y(p, hi), "1.5");
		plot_line(x, sx - 3, sx + 3, plot_y(p, lo), plot_y(p, lo), "1.5");
		plot_line(x, sx - 3, sx + 3, plot_y(p, hi), plot_y(p, hi), "1.5");
	}
	if (st->n)
		plot_line(x, sx - cw * 0.09, sx + cw * 0.09, plot_y(p, st->mean), plot_y(p, st->mean), "3");
	column_label(x, p, x0 + cw / 2, c->rs->variants.v[i], s->n, nb, nv > 3);
}

/* The caption, before the picture: metric, group, unit, and how to read it. */
static void chart_caption(struct xml *x, const struct comparison *c, const struct cmp_group *g, const char *metric,
			  const struct metric_unit *u, bool log)
{
	_cleanup_free_ char *what = xasprintf(" · %s · %s%s%s", g->name, u->name ? "unit: " : "no unit in its name",
					      u->name ? u->name : "", log ? " · log scale" : "");
	_cleanup_free_ char *leg = xasprintf("points: runs, grouped by boot; ◆ boot means; bar: mean and %g%% interval",
					     round(c->conf * 1000) / 10);

	xml_open(x, "figcaption");
	xml_element(x, "strong", metric);
	xml_text(x, what);
	xml_open(x, "span");
	xml_attr(x, "class", "leg");
	xml_text(x, leg);
	xml_close(x);
	xml_close(x);
}

static void chart(struct xml *x, const struct comparison *c, const struct cmp_group *g, const struct cmp_row *row)
{
	size_t nv = c->nvariants;
	_cleanup_free_ struct side *s = xcalloc(nv, sizeof(*s));
	const double right = 10;
	double bottom = nv > 3 ? 70 : 40;
	struct plot p = { .left = 66, .top = 10 };
	struct metric_unit u;

	report_metric_unit(row->metric, &u);
	p.pw = CHART_W - p.left - right;
	p.ph = CHART_H - p.top - bottom;
	for (size_t i = 0; i < nv; i++)
		cmp_row_side(row, i, &s[i]);
	if (!plot_range(&p, s, nv))
		return;
	xml_open(x, "figure");
	chart_caption(x, c, g, row->metric, &u, p.log);
	report_svg_open(x, CHART_W, CHART_H);
	plot_axes(x, &p, &u);
	for (size_t i = 0; i < nv; i++)
		plot_variant(x, &p, c, i, nv, &s[i], &row->s[i]);
	xml_close(x); /* svg */
	xml_close(x); /* figure */
}

/* A side's mean in its unit, or that it reported nothing: an empty side is never "0 ±0%". */
static void mean_cell(struct xml *x, const struct sample_stats *s, const struct metric_unit *u)
{
	_cleanup_free_ char *m = NULL;

	if (!s->n) {
		cell(x, "none", "not reported");
		return;
	}
	m = report_value_text(u, s->mean, 4);
	cell(x, NULL, "%s ±%.1f%%", m, s->rsd_pct);
}

static void table(struct xml *x, const struct comparison *c, const struct cmp_group *g, const struct report_opts *o)
{
	size_t nv = c->nvariants;

	table_begin(x);
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
		struct metric_unit u;

		if (!o->all && nv > 1 && !r->flagged && !cmp_is_expected(c, g, r->metric))
			continue;
		report_metric_unit(r->metric, &u);
		xml_open(x, "tr");
		if (r->noisy)
			xml_attr(x, "class", "noisy");
		cell(x, "m", "%s%s", r->metric, r->noisy ? " (noisy)" : "");
		mean_cell(x, &r->s[0], &u);
		for (size_t v = 1; v < nv; v++) {
			const struct cmp_delta *d = &r->d[v];
			const char *un = d->e.points ? " pts" : "%";
			_cleanup_free_ char *p = d->e.tested ? p_text(d->e.p) : NULL;
			_cleanup_free_ char *q = d->e.tested && !isnan(d->q) ? p_text(d->q) : NULL;

			if (d->have && isfinite(d->e.change) && isfinite(d->e.lo))
				cell(x, d->flagged ? (d->e.change > 0 ? "up" : "down") : NULL, "%+.1f%s [%+.1f, %+.1f]",
				     d->e.change, un, d->e.lo, d->e.hi);
			else if (d->have && isfinite(d->e.change))
				cell(x, d->flagged ? (d->e.change > 0 ? "up" : "down") : NULL, "%+.1f%s", d->e.change, un);
			else
				cell(x, NULL, "-");
			mean_cell(x, &r->s[v], &u);
			if (q)
				cell(x, NULL, "%s, %s%s", p, q, d->separate ? " R" : "");
			else if (p)
				cell(x, NULL, "%s%s", p, d->separate ? " R" : "");
			else
				cell(x, NULL, "n/a");
		}
		xml_close(x);
	}
	table_end(x);
}

static void verdicts_html(struct xml *x, const struct comparison *c)
{
	if (!c->nverdicts)
		return;
	xml_element(x, "h2", "Expectations");
	table_begin(x);
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
		cell(x, "m w", "%s", v->why);
		cell(x, "m w", "%s", how.buf);
		xml_close(x);
	}
	table_end(x);
}

static void observations_html(struct xml *x, const struct comparison *c)
{
	if (!c->nobs)
		return;
	xml_element(x, "h2", "Mechanism checks");
	table_begin(x);
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
		cell(x, "m w", "%s", ev.buf);
		xml_close(x);
	}
	table_end(x);
}

/* A group's section, folded open: its table, then its charts: the expected
 * metrics, then the significant ones. */
static void group_html(struct xml *x, const struct comparison *c, const struct cmp_group *g,
		       const struct report_opts *o)
{
	size_t charts = 0;

	xml_open(x, "details");
	xml_attr(x, "open", "open");
	xml_element(x, "summary", g->name);
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
	xml_close(x); /* details */
}

/* The forest plots, one per compared variant, under one heading. */
static void effects_html(struct xml *x, const struct comparison *c)
{
	bool any = false;

	for (size_t k = 1; k < c->nvariants && !any; k++) {
		_cleanup_free_ struct forest_row *rows = NULL;

		any = report_forest_rows(c, k, FOREST_TOP_FLAGGED, &rows) > 0;
	}
	if (!any)
		return;
	xml_element(x, "h2", "Effects");
	for (size_t k = 1; k < c->nvariants; k++)
		report_forest_html(c, k, x);
}

/* Each distinct environment the runs were measured in: a column each, the
 * kernels and runs that used it on top, a row per field some run knows. */
static void environment_html(struct xml *x, const struct comparison *c)
{
	const struct result_set *rs = c->rs;

	xml_element(x, "h2", "Environment");
	if (!rs->nfps) {
		xml_element(x, "p", "the runs carry no environment fingerprint (stored before lab recorded them)");
		return;
	}
	table_begin(x);
	xml_open(x, "tr");
	head_cell(x, "m", "");
	for (size_t f = 0; f < rs->nfps; f++) {
		_cleanup_strv_ struct strv vars = STRV_INIT;
		_cleanup_strbuf_ struct strbuf h = STRBUF_INIT;
		size_t runs = report_env_users(rs, f, &vars);

		if (rs->nfps > 1)
			strbuf_addf(&h, "environment %zu: ", f + 1);
		for (size_t k = 0; k < vars.n; k++)
			strbuf_addf(&h, "%s%s", k ? ", " : "", vars.v[k]);
		strbuf_addf(&h, " (%zu run%s)", runs, runs == 1 ? "" : "s");
		head_cell(x, "m", h.buf);
	}
	xml_close(x);
	for (int fi = 0; fi < FP_NFIELDS; fi++) {
		if (!report_env_field_known(rs, fi))
			continue;
		xml_open(x, "tr");
		cell(x, "m", "%s", fp_field_label(fi));
		for (size_t f = 0; f < rs->nfps; f++) {
			const char *v = rs->fps[f].f[fi];

			if (v)
				cell(x, "m h", "%s", v);
			else
				cell(x, "none", "unknown");
		}
		xml_close(x);
	}
	table_end(x);
}

/* A command for the Reproduce list: the words shell-quoted, then what it does. */
static void command_item(struct xml *x, const char *const *argv, const char *what)
{
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;

	shell_quote_argv(&cmd, argv);
	xml_open(x, "li");
	xml_element(x, "code", cmd.buf);
	xml_element(x, "span", what);
	xml_close(x);
}

/* The commands that repeat the run: lab reproduce on the stored run (or
 * its bundle, anywhere: the run keeps a snapshot of what it used), the
 * experiment from a checkout, this page. */
static void reproduce_html(struct xml *x, const struct comparison *c, const struct report_opts *o)
{
	const struct result_set *rs = c->rs;
	_cleanup_free_ char *bundle = xasprintf("%s.tar.zst", rs->id);
	_cleanup_free_ char *again = xasprintf(
		"runs the experiment again from a checkout of the project, with the lab.yaml this run used (a copy is in "
		"%s/lab.yaml)", rs->id);
	const char *repro_argv[] = { "lab", "reproduce", rs->id, NULL };
	const char *bundle_argv[] = { "lab", "bundle", rs->id, "-o", bundle, NULL };
	const char *elsewhere_argv[] = { "lab", "reproduce", bundle, NULL };
	const char *run_argv[] = { "lab", "run", rs->experiment, NULL };
	const char *report_argv[] = { "lab", "report", rs->id, "--format", "html", o->all ? "--all" : NULL, NULL };

	xml_element(x, "h2", "Reproduce");
	xml_element(x, "p", "In the results folder (lab ls lists the run):");
	xml_open(x, "ul");
	xml_attr(x, "class", "cmd");
	command_item(x, repro_argv,
		     "makes the run again from its snapshot alone: each kernel held to its recorded .config, the same plan, "
		     "a new run that says whether it reproduced");
	command_item(x, bundle_argv, "packs the run to share; lab reproduce on the bundle works in any folder");
	command_item(x, elsewhere_argv, "on another machine: fetches the bundle and reproduces it there");
	command_item(x, run_argv, again);
	command_item(x, report_argv, "writes this page again");
	xml_close(x);
}

/* Whether s[i] starts a number in e-notation, as printf's %g writes it
 * ("2.76e-07"): after no letter, digit, dot or underscore (not part of a
 * name), a sign of the exponent and two or three digits; *len its length. */
static bool e_notation_at(const char *s, size_t i, size_t *len)
{
	size_t k = i, exp;

	if (!isdigit((unsigned char)s[i]))
		return false;
	if (i && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '_'))
		return false;
	while (isdigit((unsigned char)s[k]))
		k++;
	if (s[k] == '.' && isdigit((unsigned char)s[k + 1]))
		for (k++; isdigit((unsigned char)s[k]); k++)
			;
	if ((s[k] != 'e' && s[k] != 'E') || (s[k + 1] != '-' && s[k + 1] != '+'))
		return false;
	for (exp = 0, k += 2; isdigit((unsigned char)s[k]); k++)
		exp++;
	if (exp < 2 || exp > 3 || isalnum((unsigned char)s[k]) || s[k] == '_')
		return false;
	*len = k - i;
	return true;
}

/* The text of the document from `from` on with every number in e-notation
 * (the other layers' p-values and q-values) as a power of ten: "2.8×10⁻⁷".
 * Tags are left alone; the writer escaped every '<' and '>' in text and
 * attributes, so a '<' opens a tag. */
static void plain_numbers(struct strbuf *out, size_t from)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *s = out->buf;
	bool tag = false;

	strbuf_add(&sb, s, from);
	for (size_t i = from; s[i];) {
		size_t len, digits = 0;

		if (s[i] == '<' || s[i] == '>')
			tag = s[i] == '<';
		if (tag || !e_notation_at(s, i, &len)) {
			strbuf_addch(&sb, s[i++]);
			continue;
		}
		for (size_t k = i; k < i + len && s[k] != 'e' && s[k] != 'E'; k++)
			digits += isdigit((unsigned char)s[k]) && (digits || s[k] != '0');
		{
			_cleanup_free_ char *mant = xstrndup(s + i, len);
			_cleanup_free_ char *h = human_scientific(strtod(mant, NULL), digits ? (unsigned)digits : 1);

			strbuf_addstr(&sb, h);
		}
		i += len;
	}
	strbuf_setlen(out, from);
	strbuf_add(out, sb.buf + from, sb.len - from);
}

void report_format_html(const struct comparison *c, const struct report_opts *o, struct strbuf *out)
{
	const struct result_set *rs = c->rs;
	_cleanup_free_ char *title = xasprintf("lab: %s %s", rs->experiment, rs->id);
	_cleanup_free_ char *legend = report_legend(c);
	const char *notes[REPORT_MAX_NOTES];
	size_t start = out->len;
	struct xml x;

	report_page_begin(&x, out, title, css);
	{
		_cleanup_strv_ struct strv h = STRV_INIT;

		/* what was decided, first; then the picture of it */
		report_headline(c, &h);
		for (size_t i = 0; i < h.n; i++) {
			xml_open(&x, "p");
			xml_element(&x, "strong", h.v[i]);
			xml_close(&x);
		}
	}
	if (o && o->part)
		o->part->html(o->part->data, &x);
	effects_html(&x, c);
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
	/* the attribution's tables scroll too */
	xml_open(&x, "div");
	xml_attr(&x, "class", "scroll");
	attrib_format_html(c, &x);
	xml_text(&x, "");
	xml_close(&x);
	environment_html(&x, c);
	reproduce_html(&x, c, o);
	xml_close(&x); /* body */
	xml_close(&x); /* html */
	strbuf_addch(out, '\n');
	plain_numbers(out, start);
}
