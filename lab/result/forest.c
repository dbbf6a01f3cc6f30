/* SPDX-License-Identifier: MIT */
/*
 * The forest plot of the HTML report: per compared variant, every declared
 * expectation and the largest flagged changes side by side, each a row
 * with the decision engine's change and interval against the baseline
 * (cmp_delta: the same figures the tables and verdicts show), the band
 * that decides it around 0 (the declared margin, else the smallest
 * change the data could show), a point coloured by verdict in the
 * Okabe-Ito palette (colour-blind safe) and the verdict written out, so
 * neither colour nor position alone carries the meaning. Rows go by
 * verdict, the bad news first, then by size. Pure: inline SVG through the
 * escaping XML writer.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/units.h"
#include "../util/xml.h"
#include "report.h"
#include "../util/banned.h"

/* Sort order and colour of each verdict; the flagged exploratory rows last. */
static const struct {
	int rank;
	const char *colour;
} look[VERDICT_COUNT] = {
	[VERDICT_REGRESSED] = { 0, "#D55E00" },    /* vermilion */
	[VERDICT_CHANGED] = { 1, "#CC79A7" },      /* reddish purple */
	[VERDICT_IMPROVED] = { 2, "#009E73" },     /* bluish green */
	[VERDICT_SMALLER] = { 3, "#56B4E9" },      /* sky blue */
	[VERDICT_UNCHANGED] = { 4, "#0072B2" },    /* blue */
	[VERDICT_INCONCLUSIVE] = { 5, "#E69F00" }, /* orange */
};
#define FLAGGED_RANK 6
#define FLAGGED_COLOUR "#666666"

static int row_rank(const struct forest_row *r)
{
	return r->v ? look[r->v->v].rank : FLAGGED_RANK;
}

static const char *row_colour(const struct forest_row *r)
{
	return r->v ? look[r->v->v].colour : FLAGGED_COLOUR;
}

const char *forest_row_word(const struct forest_row *r)
{
	if (!r->v)
		return "flagged";
	return r->v->v == VERDICT_SMALLER ? "smaller than declared" : verdict_name(r->v->v);
}

/* |change|, -1 when there is none: such rows go last. */
static double row_size(const struct forest_row *r)
{
	return r->d && isfinite(r->d->e.change) ? fabs(r->d->e.change) : -1;
}

static int cmp_forest_rows(const void *x, const void *y)
{
	const struct forest_row *a = x, *b = y;
	double sa = row_size(a), sb = row_size(b);
	int c;

	if (row_rank(a) != row_rank(b))
		return row_rank(a) - row_rank(b);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	if ((c = strcmp(a->metric, b->metric)))
		return c;
	return strcmp(a->group, b->group);
}

/* The largest |change| first, for picking the top flagged rows. */
static int cmp_by_size(const void *x, const void *y)
{
	double sa = row_size(x), sb = row_size(y);

	return sa > sb ? -1 : sa < sb ? 1 : cmp_forest_rows(x, y);
}

size_t report_forest_rows(const struct comparison *c, size_t k, size_t top, struct forest_row **ret)
{
	const char *var = c->rs->variants.v[k];
	struct forest_row *rows = NULL, *flagged = NULL;
	size_t n = 0, nf = 0;

	for (size_t i = 0; i < c->nverdicts; i++) {
		const struct cmp_verdict *v = &c->verdicts[i];
		const struct result_expect *e = v->expect;
		const struct cmp_delta *d = v->d && v->d->have ? v->d : NULL;
		double band = NAN;

		if (!streq(v->variant, var))
			continue;
		/* the margin the verdict was judged against (compare.c's `want`) */
		if (e->has_effect)
			band = e->effect * 100;
		else if (e->dir == DIR_UNCHANGED)
			band = 1.0;
		else if (d && isfinite(d->e.mde))
			band = d->e.mde;
		rows = xrealloc(rows, (n + 1) * sizeof(*rows));
		rows[n++] = (struct forest_row){ .group = v->group, .metric = v->metric, .d = d, .v = v, .band = band };
	}
	for (size_t g = 0; g < c->ngroups; g++)
		for (size_t i = 0; i < c->groups[g].nrows; i++) {
			const struct cmp_row *r = &c->groups[g].rows[i];

			if (!r->d[k].flagged || cmp_is_expected(c, &c->groups[g], r->metric))
				continue;
			flagged = xrealloc(flagged, (nf + 1) * sizeof(*flagged));
			flagged[nf++] = (struct forest_row){ .group = c->groups[g].name, .metric = r->metric, .d = &r->d[k],
							     .band = isfinite(r->d[k].e.mde) ? r->d[k].e.mde : NAN };
		}
	if (nf)
		qsort(flagged, nf, sizeof(*flagged), cmp_by_size);
	if (nf > top)
		nf = top;
	rows = xrealloc(rows, (n + nf + 1) * sizeof(*rows));
	if (nf)
		memcpy(rows + n, flagged, nf * sizeof(*rows));
	n += nf;
	free(flagged);
	if (n)
		qsort(rows, n, sizeof(*rows), cmp_forest_rows);
	*ret = rows;
	return n;
}

/* The plot's geometry, small enough to read on a phone: a row is the
 * metric's name across the width, then the interval with its verdict and
 * figures to its right. */
#define FW 500.0
#define ROW_H 48.0
#define TOP 4.0
#define PX0 24.0  /* the interval's axis, left */
#define PX1 300.0 /* and right; the verdict and figures after it */
#define AXIS_H 46.0
/* What a character of sans-serif takes, per pixel of font size, about. */
#define EM_WIDTH 0.58

struct axis {
	double lo, hi, step;
};

static double axis_x(const struct axis *a, double v)
{
	return PX0 + (PX1 - PX0) * (v - a->lo) / (a->hi - a->lo);
}

/* Every change, and the intervals and bands as far as three times the
 * largest change (or declared margin): a wild interval is clipped with an
 * arrow rather than squeezing the others to a dot. 0 is always in. */
static void forest_axis(const struct forest_row *rows, size_t n, struct axis *a)
{
	double core = 0, cap, lo = 0, hi = 0;
	bool points = false;

	for (size_t i = 0; i < n; i++) {
		points |= rows[i].d && rows[i].d->e.points;
		if (rows[i].d && isfinite(rows[i].d->e.change))
			core = fmax(core, fabs(rows[i].d->e.change));
		/* a declared margin, not the smallest detectable change: that one can be anything */
		if (rows[i].v && (rows[i].v->expect->has_effect || rows[i].v->expect->dir == DIR_UNCHANGED))
			core = fmax(core, rows[i].band);
	}
	cap = fmax(3 * core, 5);
	for (size_t i = 0; i < n; i++) {
		const struct cmp_delta *d = rows[i].d;
		double b = rows[i].band;

		if (d && isfinite(d->e.change)) {
			lo = fmin(lo, d->e.change);
			hi = fmax(hi, d->e.change);
		}
		if (d && isfinite(d->e.lo))
			lo = fmin(lo, fmax(d->e.lo, -cap));
		if (d && isfinite(d->e.hi))
			hi = fmax(hi, fmin(d->e.hi, cap));
		if (isfinite(b)) {
			lo = fmin(lo, -fmin(b, cap));
			hi = fmax(hi, fmin(b, cap));
		}
	}
	/* a ratio never falls below -100%; shares in points may */
	if (!points)
		lo = fmax(lo, -100);
	if (hi - lo < 1e-9) {
		lo = -1;
		hi = 1;
	}
	a->step = report_nice_step((hi - lo) / 5);
	a->lo = floor(lo / a->step + 1e-9) * a->step;
	a->hi = ceil(hi / a->step - 1e-9) * a->step;
}

/* An arrow head at (ax, ay) pointing left (dir -1) or right (1): the interval goes on. */
static void svg_arrow(struct xml *x, double ax, double ay, int dir, const char *colour)
{
	xml_open(x, "polygon");
	xml_attrf(x, "points", "%.1f,%.1f %.1f,%.1f %.1f,%.1f", ax + dir * 7.0, ay, ax, ay - 5, ax, ay + 5);
	xml_attr(x, "fill", colour);
	xml_close(x);
}

/* A change's figure: "+20.6", and beyond a thousand "+39.5k". */
static char *signed_figure(double v)
{
	_cleanup_free_ char *h = NULL;

	if (fabs(v) < 999.95)
		return xasprintf("%+.1f", v);
	h = human_number(v, 3);
	return xasprintf("%s%s", v > 0 ? "+" : "", h);
}

/* "+20.6% [+18.0, +23.2]", "-29.4 pts [-30.1, -28.8]", "+3.1% (no interval)". */
static char *change_figures(const struct forest_row *r)
{
	const struct effect *e = &r->d->e;
	const char *u = e->points ? " pts" : "%";
	_cleanup_free_ char *ch = NULL, *lo = NULL, *hi = NULL;

	if (!isfinite(e->change))
		return xstrdup("no change measured");
	ch = signed_figure(e->change);
	if (!isfinite(e->lo) || !isfinite(e->hi))
		return xasprintf("%s%s (no interval)", ch, u);
	lo = signed_figure(e->lo);
	hi = signed_figure(e->hi);
	return xasprintf("%s%s [%s, %s]", ch, u, lo, hi);
}

/* UTF-8 characters in s. */
static size_t text_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Line 1: ★ for a declared expectation, the metric, its group when there
 * are several; squeezed to the width when it is longer. */
static void row_label(struct xml *x, const struct comparison *c, const struct forest_row *r, double y)
{
	_cleanup_free_ char *g = c->ngroups > 1 ? xasprintf(" · %s", r->group) : xstrdup("");
	double w = EM_WIDTH * (14 * (double)(text_chars(r->metric) + (r->v ? 2 : 0)) + 12 * (double)text_chars(g));

	xml_open(x, "text");
	xml_attr(x, "x", "10");
	xml_attrf(x, "y", "%.1f", y);
	xml_attr(x, "font-size", "14");
	if (w > FW - 16) {
		xml_attrf(x, "textLength", "%.0f", FW - 16);
		xml_attr(x, "lengthAdjust", "spacingAndGlyphs");
	}
	xml_text(x, r->v ? "★ " : "");
	xml_text(x, r->metric);
	if (*g) {
		xml_open(x, "tspan");
		xml_attr(x, "fill", "#666");
		xml_attr(x, "font-size", "12");
		xml_text(x, g);
		xml_close(x);
	}
	xml_close(x);
}

/* The verdict right of the interval, a square of its colour first. */
static void row_word(struct xml *x, const struct forest_row *r, double y)
{
	xml_open(x, "text");
	xml_attrf(x, "x", "%.1f", PX1 + 12);
	xml_attrf(x, "y", "%.1f", y);
	xml_attr(x, "font-size", "13.5");
	xml_attr(x, "font-weight", "bold");
	xml_open(x, "tspan");
	xml_attr(x, "fill", row_colour(r));
	xml_text(x, "■ ");
	xml_close(x);
	xml_text(x, forest_row_word(r));
	xml_close(x);
}

/* Line 2: the band, the interval (clipped with an arrow), the point, the figures. */
static void row_interval(struct xml *x, const struct axis *a, const struct forest_row *r, double cy)
{
	const struct effect *e = r->d ? &r->d->e : NULL;
	const char *colour = row_colour(r);
	_cleanup_free_ char *fig = NULL;

	if (isfinite(r->band)) {
		double b0 = axis_x(a, fmax(-r->band, a->lo)), b1 = axis_x(a, fmin(r->band, a->hi));

		xml_open(x, "rect");
		xml_attrf(x, "x", "%.1f", b0);
		xml_attrf(x, "y", "%.1f", cy - 8);
		xml_attrf(x, "width", "%.1f", b1 - b0);
		xml_attr(x, "height", "16");
		xml_attr(x, "fill", "#bbbbbb");
		xml_attr(x, "fill-opacity", "0.35");
		xml_close(x);
	}
	if (!e || !isfinite(e->change)) {
		xml_open(x, "text");
		xml_attrf(x, "x", "%.1f", PX1 + 12);
		xml_attrf(x, "y", "%.1f", cy + 8);
		xml_attr(x, "font-size", "12");
		xml_attr(x, "font-style", "italic");
		xml_attr(x, "fill", "#666");
		xml_text(x, "not measured");
		xml_close(x);
		return;
	}
	if (isfinite(e->lo) || isfinite(e->hi)) {
		bool cut_lo = !isfinite(e->lo) || e->lo < a->lo, cut_hi = !isfinite(e->hi) || e->hi > a->hi;
		double x0 = axis_x(a, cut_lo ? a->lo : e->lo), x1 = axis_x(a, cut_hi ? a->hi : e->hi);

		report_svg_line(x, x0, cy, x1, cy, colour, "3", NULL);
		if (cut_lo)
			svg_arrow(x, x0, cy, -1, colour);
		if (cut_hi)
			svg_arrow(x, x1, cy, 1, colour);
	}
	xml_open(x, "circle");
	xml_attrf(x, "cx", "%.1f", axis_x(a, e->change));
	xml_attrf(x, "cy", "%.1f", cy);
	xml_attr(x, "r", "5.5");
	xml_attr(x, "fill", colour);
	xml_attr(x, "stroke", "#000");
	xml_attr(x, "stroke-width", "1");
	xml_close(x);
	fig = change_figures(r);
	report_svg_text(x, PX1 + 12, cy + 9, NULL, "12", fig);
}

/* "+50%", "0%", "-25%": the tick's change, human. */
static char *tick_text(double v)
{
	_cleanup_free_ char *n = human_number(fabs(v) < 1e-9 ? 0 : v, 3);

	return xasprintf("%s%s%%", v > 1e-9 ? "+" : "", n);
}

static void forest_svg(struct xml *x, const struct comparison *c, const struct forest_row *rows, size_t n,
		       const struct axis *a)
{
	double h = TOP + n * ROW_H + AXIS_H, bottom = TOP + n * ROW_H;
	bool points = false;

	report_svg_open(x, FW, h);
	for (size_t i = 1; i < n; i += 2) {
		xml_open(x, "rect");
		xml_attr(x, "x", "0");
		xml_attrf(x, "y", "%.1f", TOP + i * ROW_H);
		xml_attrf(x, "width", "%.0f", FW);
		xml_attrf(x, "height", "%.0f", ROW_H);
		xml_attr(x, "fill", "#f3f3f3");
		xml_close(x);
	}
	for (long i = 0, nt = lround((a->hi - a->lo) / a->step); i <= nt; i++) {
		double t = a->lo + (double)i * a->step;
		_cleanup_free_ char *label = tick_text(t);
		bool zero = fabs(t) < a->step / 1000;

		report_svg_line(x, axis_x(a, t), TOP, axis_x(a, t), bottom + 4, zero ? "#222" : "#dddddd",
				zero ? "1.5" : "1", NULL);
		report_svg_text(x, axis_x(a, t), bottom + 17, "middle", "12", label);
	}
	report_svg_line(x, PX0, bottom, PX1, bottom, "#888", "1", NULL);
	for (size_t i = 0; i < n; i++) {
		double y0 = TOP + i * ROW_H;

		points |= rows[i].d && rows[i].d->e.points;
		xml_open(x, "g");
		xml_attr(x, "class", rows[i].v ? "row declared" : "row");
		row_label(x, c, &rows[i], y0 + 16);
		row_word(x, &rows[i], y0 + 31);
		row_interval(x, a, &rows[i], y0 + 34);
		xml_close(x);
	}
	{
		_cleanup_free_ char *title = xasprintf("change against %s, %%%s", c->rs->variants.v[0],
						       points ? " (percentage metrics: points)" : "");

		/* from the left edge: centred under the axis, a long title would start outside the picture */
		report_svg_text(x, 4, bottom + 36, NULL, "13", title);
	}
	xml_close(x); /* svg */
}

void report_forest_html(const struct comparison *c, size_t k, struct xml *x)
{
	_cleanup_free_ struct forest_row *rows = NULL;
	size_t n = report_forest_rows(c, k, FOREST_TOP_FLAGGED, &rows), declared = 0;
	struct axis a;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		declared += rows[i].v != NULL;
	forest_axis(rows, n, &a);
	xml_open(x, "figure");
	xml_attr(x, "class", "forest");
	{
		_cleanup_free_ char *what = NULL;
		_cleanup_strbuf_ struct strbuf rows_sb = STRBUF_INIT;

		if (declared)
			strbuf_addf(&rows_sb, "%zu declared expectation%s (★)", declared, declared == 1 ? "" : "s");
		if (n > declared)
			strbuf_addf(&rows_sb, "%s%s%zu flagged change%s", declared ? " and " : "",
				    n - declared == FOREST_TOP_FLAGGED ? "the largest " : "", n - declared,
				    n - declared == 1 ? "" : "s");
		what = xasprintf("%s against %s: %s, each the change in %% with its %g%% interval; shaded: the declared "
				 "margin, else the smallest change the runs could show; rows by verdict, then size",
				 c->rs->variants.v[k], c->rs->variants.v[0], rows_sb.buf, round(c->conf * 1000) / 10);
		xml_element(x, "figcaption", what);
	}
	forest_svg(x, c, rows, n, &a);
	xml_close(x); /* figure */
}

/* The text forest: a column per TEXT_W, so a terminal or a Markdown code
 * block shows the same picture as the SVG. */
#define TEXT_W 41
#define TEXT_LABEL 40

static int text_col(const struct axis *a, double v)
{
	long col = lround((v - a->lo) / (a->hi - a->lo) * (TEXT_W - 1));

	return (int)(col < 0 ? 0 : col > TEXT_W - 1 ? TEXT_W - 1 : col);
}

/* A stored name as a column of text: escaped for a terminal (term_escape),
 * and for a Markdown code block also without < > & ` (shown as '?': the
 * tables below give the names whole); at most `width` characters, a longer
 * one with its middle as ".." (perf-profile.self.. and ..children.. differ
 * at the start, symbols at the end), padded to `width`; 0: whole. */
static void text_name(struct strbuf *out, const char *s, size_t width, bool md)
{
	_cleanup_strbuf_ struct strbuf e = STRBUF_INIT;
	size_t n;

	term_escape(&e, s);
	for (size_t i = 0; md && i < e.len; i++)
		if (strchr("<>&`", e.buf[i]))
			e.buf[i] = '?';
	n = text_chars(e.buf);
	if (width && n > width) {
		size_t head = (width - 2) / 2, tail = width - 2 - head, at = 0, k = 0;

		/* the first `head` characters, "..", the last `tail` */
		for (; k < head; at++)
			k += ((unsigned char)e.buf[at + 1] & 0xc0) != 0x80;
		strbuf_add(out, e.buf, at);
		strbuf_addstr(out, "..");
		for (k = n - head; k > tail; at++)
			k -= ((unsigned char)e.buf[at + 1] & 0xc0) != 0x80;
		strbuf_addstr(out, e.buf + at);
		n = width;
	} else
		strbuf_addstr(out, e.buf);
	for (; width && n < width; n++)
		strbuf_addch(out, ' ');
}

/* One row's picture: '.' the band, '|' 0, [---o---] the change and its
 * interval, '<' or '>' where the interval goes on beyond the axis. */
static void text_field(const struct axis *a, const struct forest_row *r, char f[TEXT_W + 1])
{
	const struct effect *e = r->d ? &r->d->e : NULL;

	memset(f, ' ', TEXT_W);
	f[TEXT_W] = '\0';
	if (isfinite(r->band))
		for (int i = text_col(a, -r->band); i <= text_col(a, r->band); i++)
			f[i] = '.';
	if (a->lo <= 0 && a->hi >= 0)
		f[text_col(a, 0)] = '|';
	if (!e || !isfinite(e->change))
		return;
	if (isfinite(e->lo) && isfinite(e->hi)) {
		int l = text_col(a, e->lo), h = text_col(a, e->hi);

		for (int i = l; i <= h; i++)
			f[i] = '-';
		f[l] = e->lo < a->lo ? '<' : '[';
		f[h] = e->hi > a->hi ? '>' : ']';
	}
	f[text_col(a, e->change)] = 'o';
}

void report_forest_text(const struct comparison *c, size_t k, bool md, struct strbuf *out)
{
	_cleanup_free_ struct forest_row *rows = NULL;
	size_t n = report_forest_rows(c, k, FOREST_TOP_FLAGGED, &rows);
	char ruler[TEXT_W + 1], labels[TEXT_W + 16];
	size_t width = 6;
	int next = 0;
	struct axis a;

	if (!n)
		return;
	forest_axis(rows, n, &a);
	for (size_t i = 0; i < n; i++) {
		_cleanup_strbuf_ struct strbuf e = STRBUF_INIT;

		term_escape(&e, rows[i].metric);
		width = text_chars(e.buf) > width ? text_chars(e.buf) : width;
	}
	width = width > TEXT_LABEL ? TEXT_LABEL : width;
	{
		_cleanup_free_ char *head = xasprintf(
			"%s against %s: the change in %% with its %g%% interval [--o--], '|' 0, '.' the declared "
			"margin, else the smallest change the runs could show; * a declared expectation",
			c->rs->variants.v[k], c->rs->variants.v[0], round(c->conf * 1000) / 10);
		_cleanup_strbuf_ struct strbuf plain = STRBUF_INIT;

		text_name(&plain, head, 0, md);
		report_wrap(out, plain.buf, 100, "");
	}
	memset(ruler, '-', TEXT_W);
	ruler[TEXT_W] = '\0';
	memset(labels, ' ', sizeof(labels) - 1);
	labels[sizeof(labels) - 1] = '\0';
	for (long i = 0, nt = lround((a.hi - a.lo) / a.step); i <= nt; i++) {
		double t = a.lo + (double)i * a.step;
		_cleanup_free_ char *label = tick_text(t);
		int col = text_col(&a, t), len = (int)strlen(label), at = col - len / 2;

		ruler[col] = '+';
		at = at < 0 ? 0 : at;
		if (at < next || at + len > (int)sizeof(labels) - 1)
			continue;
		memcpy(labels + at, label, (size_t)len);
		next = at + len + 1;
	}
	while (next > 0 && labels[strlen(labels) - 1] == ' ')
		labels[strlen(labels) - 1] = '\0';
	for (size_t i = 0; i < n; i++) {
		char f[TEXT_W + 1];
		_cleanup_free_ char *fig = rows[i].d ? change_figures(&rows[i]) : xstrdup("not measured");

		text_field(&a, &rows[i], f);
		strbuf_addstr(out, rows[i].v ? "* " : "  ");
		text_name(out, rows[i].metric, width, md);
		strbuf_addf(out, "  %s  %s %s", f, forest_row_word(&rows[i]), fig);
		if (c->ngroups > 1) {
			/* the same metric may be declared in several groups */
			strbuf_addstr(out, "  in ");
			text_name(out, rows[i].group, 0, md);
		}
		strbuf_addch(out, '\n');
	}
	strbuf_addf(out, "  %*s  %s\n", (int)width, "", ruler);
	strbuf_addf(out, "  %*s  %s\n", (int)width, "", labels);
}
