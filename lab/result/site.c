/* SPDX-License-Identifier: MIT */
/*
 * The results site's pages (site.h): an index of the stored runs and a
 * page per experiment with the history of its declared metrics, through
 * the escaping XML writer. Pure: summaries in, HTML out.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/hash.h"
#include "../util/strmap.h"
#include "../util/xml.h"
#include "report.h"
#include "site.h"
#include "../util/banned.h"

#define CHART_W 600
#define CHART_H 240
/* the longest name used as a file name unchanged, and the part kept of a longer one */
#define FILE_NAME_MAX 64
#define FILE_NAME_KEEP 48

/* The order verdicts are counted in: what needs a look first. */
static const enum verdict verdict_order[] = {
	VERDICT_REGRESSED, VERDICT_CHANGED, VERDICT_IMPROVED, VERDICT_SMALLER, VERDICT_UNCHANGED, VERDICT_INCONCLUSIVE,
};

/* Okabe-Ito colours (safe for colour-blind readers); the verdict is always written beside them. */
static const char *const verdict_colour[VERDICT_COUNT] = {
	[VERDICT_IMPROVED] = "#009e73",  [VERDICT_REGRESSED] = "#d55e00",    [VERDICT_UNCHANGED] = "#0072b2",
	[VERDICT_INCONCLUSIVE] = "#999", [VERDICT_CHANGED] = "#cc79a7",      [VERDICT_SMALLER] = "#56b4e9",
};

static const char css[] =
	"body{font-family:sans-serif;margin:1em auto;max-width:72em;padding:0 1em;color:#222;line-height:1.4}"
	"a{color:#0a58ca}.wide{overflow-x:auto}"
	"table{border-collapse:collapse;margin:0.5em 0}"
	"td,th{border:1px solid #ccc;padding:2px 6px;text-align:left;vertical-align:top}"
	"td.m{font-family:monospace}td.d{white-space:nowrap}td.none{color:#888}td.damaged{color:#a00}"
	".v{display:inline-block;padding:0 4px;margin:1px;border-radius:3px;white-space:nowrap;color:#000}"
	".improved{background:#7fd9bf}.regressed{background:#f0a878}.changed{background:#e6b8d4}"
	".unchanged{background:#8fc2e6}.smaller{background:#bfe3f6}.inconclusive{background:#ddd}"
	"figure{margin:1.5em 0}figcaption{font-size:0.95em;margin-bottom:0.3em}"
	"svg{max-width:100%;height:auto;display:block}"
	"@media print{a{color:#000}}";

static void site_run_init(struct site_run *r, const char *id)
{
	*r = (struct site_run){ .id = xstrdup(id), .variants = STRV_INIT, .conf = 0.95 };
}

void site_run_from(const struct comparison *c, bool judged, struct site_run *ret)
{
	const struct result_set *rs = c->rs;

	site_run_init(ret, rs->id);
	ret->experiment = xstrdup(rs->experiment);
	ret->conf = c->conf;
	for (size_t i = 0; i < rs->variants.n; i++)
		strv_push(&ret->variants, rs->variants.v[i]);
	for (size_t i = 0; i < rs->n; i++) {
		ret->ok += rs->runs[i].status == RUN_OK;
		ret->failed += rs->runs[i].status == RUN_FAILED;
		ret->pending += rs->runs[i].status == RUN_PENDING;
	}
	ret->pts = xcalloc(c->nverdicts ? c->nverdicts : 1, sizeof(*ret->pts));
	for (size_t i = 0; judged && i < c->nverdicts; i++) {
		const struct cmp_verdict *v = &c->verdicts[i];
		const struct effect *e = v->d && v->d->have ? &v->d->e : NULL;

		ret->verdicts[v->v]++;
		ret->pts[ret->npts++] = (struct site_point){
			.metric = xstrdup(v->metric),
			.group = xstrdup(v->group),
			.variant = xstrdup(v->variant),
			.v = v->v,
			.points = e ? e->points : metric_is_percentage(v->metric),
			.change = e ? e->change : NAN,
			.lo = e ? e->lo : NAN,
			.hi = e ? e->hi : NAN,
			.mean = e ? e->mean[1] : NAN,
		};
	}
}

void site_run_damaged(const char *id, const char *why, struct site_run *ret)
{
	site_run_init(ret, id);
	ret->error = xstrdup(why);
}

void site_run_release(struct site_run *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->npts; i++) {
		free(r->pts[i].metric);
		free(r->pts[i].group);
		free(r->pts[i].variant);
	}
	free(r->pts);
	free(r->id);
	free(r->experiment);
	free(r->error);
	strv_release(&r->variants);
	*r = (struct site_run){ 0 };
}

static bool file_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
	       c == '.';
}

char *site_file_name(const char *name)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char hex[SHA256_HEX_LEN + 1];
	size_t n = strlen(name);
	bool plain = n && n <= FILE_NAME_MAX && *name != '.' && *name != '-';

	for (size_t i = 0; plain && i < n; i++)
		plain = file_char(name[i]);
	if (plain)
		return xstrdup(name);
	for (size_t i = 0; i < n && sb.len < FILE_NAME_KEEP; i++)
		strbuf_addch(&sb, file_char(name[i]) && (sb.len || (name[i] != '.' && name[i] != '-')) ? name[i] : '_');
	sha256_hex(name, n, hex);
	strbuf_addf(&sb, "%s%.8s", sb.len ? "-" : "x-", hex);
	return strbuf_detach(&sb, NULL);
}

void site_manifest_format(const struct strv *files, struct strbuf *out)
{
	strbuf_addstr(out, "# lab site: the files it wrote here; a rebuild removes only these, when it no longer writes them\n");
	for (size_t i = 0; i < files->n; i++)
		strbuf_addf(out, "%s\n", files->v[i]);
}

/* A name site_file_name() can return, with ".html": a page of the site's. */
static bool page_name(const char *s, size_t n)
{
	size_t stem = n - strlen(".html");

	if (n <= strlen(".html") || stem > FILE_NAME_MAX || memcmp(s + stem, ".html", strlen(".html")) != 0 ||
	    s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < stem; i++)
		if (!file_char(s[i]))
			return false;
	return true;
}

void site_manifest_parse(const char *buf, size_t len, struct strv *ret)
{
	_cleanup_strmap_ struct strmap seen = STRMAP_INIT;
	size_t one;

	for (size_t i = 0; i < ret->n; i++)
		strmap_put(&seen, ret->v[i], 1);
	for (const char *l = buf, *end = buf + len; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		_cleanup_free_ char *line = xstrndup(l, n);
		const char *name = NULL;

		l += n + 1;
		if (streq(line, "index.html"))
			name = line;
		else if (str_startswith(line, "runs/") || str_startswith(line, "exp/"))
			name = strchr(line, '/') + 1;
		if (!name || (name != line && !page_name(name, strlen(name))) || strmap_get(&seen, line, &one))
			continue;
		strv_push(ret, line);
		strmap_put(&seen, ret->v[ret->n - 1], 1);
	}
}

char *site_date(const char *id)
{
	if (strlen(id) < 15 || strspn(id, "0123456789") != 8 || id[8] != '-' || strspn(id + 9, "0123456789") != 6 ||
	    (id[15] && id[15] != '-'))
		return NULL;
	return xasprintf("%.4s-%.2s-%.2s %.2s:%.2s", id, id + 4, id + 6, id + 9, id + 11);
}

void site_format_number(double v, double step, struct strbuf *out)
{
	static const struct {
		double f;
		const char *suffix;
	} scales[] = { { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" } };
	double f = 1, mag, d;
	const char *suffix = "";
	int decimals = 0;

	step = fabs(step);
	/* no "-0" and no 1e-17 for a tick that is zero up to rounding */
	if (!isfinite(v) || fabs(v) <= step * 1e-6) {
		strbuf_addstr(out, isfinite(v) ? "0" : "-");
		return;
	}
	mag = fabs(v);
	for (size_t i = 0; i < ELEMENTSOF(scales); i++)
		if (mag >= scales[i].f) {
			f = scales[i].f;
			suffix = scales[i].suffix;
			break;
		}
	/* as many decimals as the step has: 2.5 -> 1, 0.05 -> 2, 100 -> 0 */
	d = (step > 0 ? step : pow(10, floor(log10(mag)))) / f;
	while (decimals < 12 && fabs(d - round(d)) > 1e-6 * fmax(1, d)) {
		d *= 10;
		decimals++;
	}
	strbuf_addf(out, "%.*f%s", decimals, v / f, suffix);
}

/* The page's head and the start of its body. */
static void page_begin(struct xml *x, struct strbuf *out, const char *title)
{
	report_page_begin(x, out, title, css);
}

static void page_end(struct xml *x)
{
	xml_close(x); /* body */
	xml_close(x); /* html */
}

static void a_link(struct xml *x, const char *href, const char *text)
{
	xml_open(x, "a");
	xml_attr(x, "href", href);
	xml_text(x, text);
	xml_close(x);
}

static void head_cells(struct xml *x, const char *const *names)
{
	xml_open(x, "tr");
	for (; *names; names++)
		xml_element(x, "th", *names);
	xml_close(x);
}

static void text_cell(struct xml *x, const char *cls, const char *text)
{
	xml_open(x, "td");
	if (cls)
		xml_attr(x, "class", cls);
	xml_text(x, text);
	xml_close(x);
}

/* <td><a href="PREFIX/FILE.html">TEXT</a></td>, or the text alone when there is no page. */
static void link_cell(struct xml *x, const char *cls, const char *prefix, const char *name, const char *text,
		      bool page)
{
	_cleanup_free_ char *file = site_file_name(name);
	_cleanup_free_ char *href = xasprintf("%s%s.html", prefix, file);

	xml_open(x, "td");
	if (cls)
		xml_attr(x, "class", cls);
	if (page)
		a_link(x, href, text);
	else
		xml_text(x, text);
	xml_close(x);
}

static void verdicts_cell(struct xml *x, const struct site_run *r)
{
	bool any = false;

	xml_open(x, "td");
	for (size_t i = 0; i < ELEMENTSOF(verdict_order); i++) {
		enum verdict v = verdict_order[i];
		_cleanup_free_ char *t = NULL;

		if (!r->verdicts[v])
			continue;
		t = xasprintf("%zu %s", r->verdicts[v], verdict_name(v));
		xml_open(x, "span");
		xml_attrf(x, "class", "v %s", verdict_name(v));
		xml_text(x, t);
		xml_close(x);
		any = true;
	}
	if (!any)
		xml_text(x, "-");
	xml_close(x);
}

/* "10 ok, 1 failed", or why there is no report. */
static void state_cell(struct xml *x, const struct site_run *r)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (!r->experiment) {
		_cleanup_free_ char *t = xasprintf("does not load: %s", r->error);

		text_cell(x, "damaged", t);
		return;
	}
	strbuf_addf(&sb, "%zu ok", r->ok);
	if (r->failed)
		strbuf_addf(&sb, ", %zu failed", r->failed);
	if (r->pending)
		strbuf_addf(&sb, ", %zu pending", r->pending);
	if (r->error)
		strbuf_addf(&sb, "; %s", r->error);
	text_cell(x, r->error || r->failed ? "damaged" : NULL, sb.buf);
}

/* One run's row; `up`: the way from the page to the site's top ("" or "../"). */
static void run_row(struct xml *x, const struct site_run *r, bool experiment, const char *up)
{
	_cleanup_free_ char *date = site_date(r->id), *runs = xasprintf("%sruns/", up), *exps = xasprintf("%sexp/", up);
	_cleanup_strbuf_ struct strbuf kernels = STRBUF_INIT;

	for (size_t i = 0; i < r->variants.n; i++)
		strbuf_addf(&kernels, "%s%s", i ? ", " : "", r->variants.v[i]);
	xml_open(x, "tr");
	link_cell(x, "m", runs, r->id, r->id, r->report);
	if (experiment && r->experiment)
		link_cell(x, "m", exps, r->experiment, r->experiment, true);
	else if (experiment)
		text_cell(x, "none", "-");
	text_cell(x, date ? "d" : "none", date ? date : "-");
	text_cell(x, kernels.len ? "m" : "none", kernels.len ? kernels.buf : "-");
	verdicts_cell(x, r);
	state_cell(x, r);
	xml_close(x);
}

static void runs_table(struct xml *x, const struct site_run *const *runs, size_t n, bool experiment, const char *up)
{
	static const char *const with[] = { "run", "experiment", "date", "kernels", "verdicts", "runs", NULL };
	static const char *const without[] = { "run", "date", "kernels", "verdicts", "runs", NULL };

	xml_open(x, "div");
	xml_attr(x, "class", "wide");
	xml_open(x, "table");
	head_cells(x, experiment ? with : without);
	for (size_t i = 0; i < n; i++)
		run_row(x, runs[i], experiment, up);
	xml_close(x);
	xml_close(x);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void site_format_index(const struct site_run *const *runs, size_t n, struct strbuf *out)
{
	_cleanup_strv_ struct strv exps = STRV_INIT;
	_cleanup_free_ size_t *count = NULL;
	size_t damaged = 0;
	struct xml x;

	for (size_t i = 0; i < n; i++) {
		damaged += !runs[i]->experiment;
		if (runs[i]->experiment && !strv_contains(&exps, runs[i]->experiment))
			strv_push(&exps, runs[i]->experiment);
	}
	if (exps.n)
		qsort(exps.v, exps.n, sizeof(char *), cmp_strp);
	count = xcalloc(exps.n + 1, sizeof(*count));
	for (size_t i = 0; i < n; i++)
		if (runs[i]->experiment)
			count[strv_index(&exps, runs[i]->experiment)]++;
	page_begin(&x, out, "lab results");
	{
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		strbuf_addf(&sb, "%zu stored run%s of %zu experiment%s, newest first", n, n == 1 ? "" : "s", exps.n,
			    exps.n == 1 ? "" : "s");
		if (damaged)
			strbuf_addf(&sb, "; %zu do%s not load", damaged, damaged == 1 ? "es" : "");
		strbuf_addstr(&sb, ". Each run links to its report, each experiment to the history of its declared metrics.");
		xml_element(&x, "p", sb.buf);
	}
	if (exps.n) {
		xml_element(&x, "h2", "Experiments");
		xml_open(&x, "ul");
		for (size_t i = 0; i < exps.n; i++) {
			_cleanup_free_ char *file = site_file_name(exps.v[i]);
			_cleanup_free_ char *href = xasprintf("exp/%s.html", file);
			_cleanup_free_ char *t = xasprintf(" (%zu run%s)", count[i], count[i] == 1 ? "" : "s");

			xml_open(&x, "li");
			a_link(&x, href, exps.v[i]);
			xml_text(&x, t);
			xml_close(&x);
		}
		xml_close(&x);
	}
	xml_element(&x, "h2", "Runs");
	if (n)
		runs_table(&x, runs, n, true, "");
	else
		xml_element(&x, "p", "No stored runs.");
	page_end(&x);
}

/*
 * A chart: per run that has the metric (oldest first, left to right) a
 * point per compared variant and group, at its change against the baseline
 * with the interval as a whisker, or, when no run has a change, at the
 * compared variant's mean.
 */
struct chart {
	const char *metric;
	const struct site_run **runs; /* the runs that have it, oldest first */
	size_t n;
	bool change;                  /* y: the change; else the mean */
	bool points;                  /* the change is in points */
	double lo, hi, step;          /* the y axis */
	double left, top, pw, ph;
};

static double point_y(const struct chart *c, const struct site_point *p)
{
	return c->change ? p->change : p->mean;
}

static double chart_y(const struct chart *c, double v)
{
	return c->top + c->ph * (1 - (v - c->lo) / (c->hi - c->lo));
}

/* The y range over every point (and its interval, and zero for a change); false when there is none. */
static bool chart_range(struct chart *c)
{
	double lo = INFINITY, hi = -INFINITY, pad;

	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->runs[i]->npts; k++) {
			const struct site_point *p = &c->runs[i]->pts[k];
			double y = point_y(c, p);

			if (!streq(p->metric, c->metric) || !isfinite(y))
				continue;
			lo = fmin(lo, y);
			hi = fmax(hi, y);
			if (c->change && isfinite(p->lo) && isfinite(p->hi)) {
				lo = fmin(lo, p->lo);
				hi = fmax(hi, p->hi);
			}
		}
	if (!isfinite(lo))
		return false;
	if (c->change) {
		lo = fmin(lo, 0);
		hi = fmax(hi, 0);
	}
	if (hi - lo < 1e-9 * fmax(1, fabs(hi))) {
		hi += fabs(hi) * 0.05 + 1;
		lo -= fabs(lo) * 0.05 + 1;
	}
	pad = (hi - lo) * 0.06;
	c->step = report_nice_step((hi - lo + 2 * pad) / 4);
	c->lo = floor((lo - pad) / c->step) * c->step;
	c->hi = ceil((hi + pad) / c->step) * c->step;
	return true;
}

/* A tick label: "+20%", "-1.5 pt", "15.2k". */
static void tick_label(const struct chart *c, double v, struct strbuf *out)
{
	if (c->change && v > c->step * 1e-6)
		strbuf_addch(out, '+');
	site_format_number(v, c->step, out);
	if (c->change && !c->points)
		strbuf_addch(out, '%');
	else if (c->change)
		strbuf_addstr(out, " pt");
}

static void chart_axes(struct xml *x, const struct chart *c)
{
	_cleanup_free_ char *first = site_date(c->runs[0]->id), *last = site_date(c->runs[c->n - 1]->id);
	_cleanup_free_ char *title = xasprintf("%zu run%s, oldest first", c->n, c->n == 1 ? "" : "s");
	double bottom = c->top + c->ph;

	for (long t = 0, nt = lround((c->hi - c->lo) / c->step); t <= nt; t++) {
		_cleanup_strbuf_ struct strbuf label = STRBUF_INIT;
		double v = c->lo + (double)t * c->step, y = chart_y(c, v);

		report_svg_line(x, c->left, y, c->left + c->pw, y, "#eee", NULL, NULL);
		tick_label(c, v, &label);
		report_svg_text(x, c->left - 4, y + 4, "end", "11", label.buf);
	}
	if (c->change && c->lo < 0 && c->hi > 0)
		report_svg_line(x, c->left, chart_y(c, 0), c->left + c->pw, chart_y(c, 0), "#555", NULL, "4 3");
	report_svg_line(x, c->left, bottom, c->left + c->pw, bottom, "#888", NULL, NULL);
	report_svg_line(x, c->left, c->top, c->left, bottom, "#888", NULL, NULL);
	report_svg_text(x, c->left, bottom + 14, "start", "11", first ? first : c->runs[0]->id);
	if (c->n > 1)
		report_svg_text(x, c->left + c->pw, bottom + 14, "end", "11", last ? last : c->runs[c->n - 1]->id);
	report_svg_text(x, c->left + c->pw / 2, bottom + 28, "middle", "11", title);
}

/* To one decimal, without "-0.0". */
static double tenths(double v)
{
	return fabs(v) < 0.05 ? 0 : v;
}

/* "20261130-120000-cafe, tg-ratelimit (w p=1): +5.1% [+2.0%, +8.3%] improved" */
static void point_title(const struct chart *c, const struct site_run *r, const struct site_point *p,
			struct strbuf *out)
{
	const char *u = p->points ? " pt" : "%";

	strbuf_addf(out, "%s, %s (%s): ", r->id, p->variant, p->group);
	if (c->change && isfinite(p->lo) && isfinite(p->hi))
		strbuf_addf(out, "%+.1f%s [%+.1f%s, %+.1f%s]", tenths(p->change), u, tenths(p->lo), u, tenths(p->hi), u);
	else if (c->change)
		strbuf_addf(out, "%+.1f%s", tenths(p->change), u);
	else /* four digits */
		site_format_number(p->mean, pow(10, floor(log10(fabs(p->mean))) - 3), out);
	strbuf_addf(out, " %s", verdict_name(p->v));
}

/* Run i's points, spread across its slot. */
static void chart_run(struct xml *x, const struct chart *c, size_t i, bool *seen)
{
	const struct site_run *r = c->runs[i];
	double slot = c->pw / c->n, cx = c->left + slot * (i + 0.5);
	size_t m = 0, k = 0;

	for (size_t j = 0; j < r->npts; j++)
		m += streq(r->pts[j].metric, c->metric) && isfinite(point_y(c, &r->pts[j]));
	for (size_t j = 0; j < r->npts; j++) {
		const struct site_point *p = &r->pts[j];
		double gap = fmin(slot * 0.7 / (double)m, 8), px = cx + gap * ((double)k - (double)(m - 1) / 2);
		_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;

		if (!streq(p->metric, c->metric) || !isfinite(point_y(c, p)))
			continue;
		k++;
		seen[p->v] = true;
		if (c->change && isfinite(p->lo) && isfinite(p->hi))
			report_svg_line(x, px, chart_y(c, p->lo), px, chart_y(c, p->hi), verdict_colour[p->v], NULL, NULL);
		point_title(c, r, p, &t);
		xml_open(x, "circle");
		xml_attrf(x, "cx", "%.1f", px);
		xml_attrf(x, "cy", "%.1f", chart_y(c, point_y(c, p)));
		xml_attr(x, "r", "3.5");
		xml_attr(x, "fill", verdict_colour[p->v]);
		xml_element(x, "title", t.buf);
		xml_close(x);
	}
}

/* The verdicts the chart shows, each a dot of its colour and its name. */
static void chart_legend(struct xml *x, const struct chart *c, const bool *seen)
{
	double lx = c->left, ly = c->top + c->ph + 28;

	for (size_t i = 0; i < ELEMENTSOF(verdict_order); i++) {
		enum verdict v = verdict_order[i];

		if (!seen[v])
			continue;
		if (lx == c->left)
			ly += 14;
		xml_open(x, "circle");
		xml_attrf(x, "cx", "%.1f", lx + 4);
		xml_attrf(x, "cy", "%.1f", ly - 4);
		xml_attr(x, "r", "3.5");
		xml_attr(x, "fill", verdict_colour[v]);
		xml_close(x);
		report_svg_text(x, lx + 11, ly, "start", "11", verdict_name(v));
		lx += 80;
	}
}

/* The caption, above the chart: what is drawn and in what unit. */
static void chart_caption(const struct chart *c, const struct site_run *newest, struct strbuf *out)
{
	_cleanup_strv_ struct strv variants = STRV_INIT, groups = STRV_INIT;

	for (size_t i = 0; i < c->n; i++)
		for (size_t k = 0; k < c->runs[i]->npts; k++) {
			const struct site_point *p = &c->runs[i]->pts[k];

			if (!streq(p->metric, c->metric))
				continue;
			if (!strv_contains(&variants, p->variant))
				strv_push(&variants, p->variant);
			if (!strv_contains(&groups, p->group))
				strv_push(&groups, p->group);
		}
	strbuf_addf(out, "%s: ", c->metric);
	if (c->change)
		strbuf_addf(out, "change against the baseline (%s) with its %g%% interval", c->points ? "points" : "%",
			    newest->conf * 100);
	else
		strbuf_addstr(out, "the compared kernel's mean (no run measured a change)");
	strbuf_addstr(out, ", run by run, oldest first; colour: the verdict. Kernel");
	for (size_t i = 0; i < variants.n; i++)
		strbuf_addf(out, "%s %s", i ? "," : (variants.n > 1 ? "s" : ""), variants.v[i]);
	strbuf_addf(out, "; group%s", groups.n > 1 ? "s" : "");
	for (size_t i = 0; i < groups.n; i++)
		strbuf_addf(out, "%s %s", i ? "," : "", groups.v[i]);
	strbuf_addch(out, '.');
}

static void chart(struct xml *x, const char *metric, const struct site_run *const *runs, size_t n)
{
	struct chart c = { .metric = metric, .left = 64, .top = 10 };
	bool seen[VERDICT_COUNT] = { false };

	c.runs = xcalloc(n, sizeof(*c.runs));
	/* oldest first: runs[] is newest first */
	for (size_t i = n; i-- > 0;) {
		bool has = false;

		for (size_t k = 0; k < runs[i]->npts; k++)
			if (streq(runs[i]->pts[k].metric, metric)) {
				has = true;
				c.change |= isfinite(runs[i]->pts[k].change);
				c.points = runs[i]->pts[k].points;
			}
		if (has)
			c.runs[c.n++] = runs[i];
	}
	c.pw = CHART_W - c.left - 12;
	c.ph = CHART_H - c.top - 50; /* the dates, the axis' title, the legend */
	if (c.n && chart_range(&c)) {
		_cleanup_strbuf_ struct strbuf caption = STRBUF_INIT;

		chart_caption(&c, c.runs[c.n - 1], &caption);
		xml_open(x, "figure");
		xml_element(x, "figcaption", caption.buf);
		report_svg_open(x, CHART_W, CHART_H);
		xml_element(x, "title", caption.buf);
		chart_axes(x, &c);
		for (size_t i = 0; i < c.n; i++)
			chart_run(x, &c, i, seen);
		chart_legend(x, &c, seen);
		xml_close(x); /* svg */
		xml_close(x); /* figure */
	}
	free(c.runs);
}

void site_format_experiment(const char *experiment, const struct site_run *const *runs, size_t n,
			    struct strbuf *out)
{
	_cleanup_free_ char *title = xasprintf("lab: %s", experiment);
	_cleanup_strv_ struct strv metrics = STRV_INIT;
	struct xml x;

	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < runs[i]->npts; k++)
			if (!strv_contains(&metrics, runs[i]->pts[k].metric))
				strv_push(&metrics, runs[i]->pts[k].metric);
	if (metrics.n)
		qsort(metrics.v, metrics.n, sizeof(char *), cmp_strp);
	page_begin(&x, out, title);
	xml_open(&x, "p");
	a_link(&x, "../index.html", "All runs");
	{
		_cleanup_free_ char *t = xasprintf(" | %zu run%s of this experiment, newest first below.", n,
						   n == 1 ? "" : "s");

		xml_text(&x, t);
	}
	xml_close(&x);
	xml_element(&x, "h2", "Declared metrics");
	if (!metrics.n)
		xml_element(&x, "p", "No run of this experiment compared kernels on a declared metric.");
	for (size_t i = 0; i < metrics.n; i++)
		chart(&x, metrics.v[i], runs, n);
	xml_element(&x, "h2", "Runs");
	runs_table(&x, runs, n, false, "../");
	page_end(&x);
}
