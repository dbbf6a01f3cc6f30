/* SPDX-License-Identifier: MIT */
/*
 * The reports' "Attribution over the series" section (attrib.h): per
 * series, how the steps were judged, per group the change-point line of
 * each listed metric, then a table metric x step (change and interval, q,
 * the verdict word). Every name and subject is the stored run's: escaped
 * the way each format escapes (term_escape, md_escape, the JSON and XML
 * writers).
 */
#include <math.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/json.h"
#include "../util/xml.h"
#include "attrib.h"
#include "report.h"
#include "../util/banned.h"

/* How the steps were judged, in one paragraph. */
static char *legend(const struct attribution *a)
{
	return xasprintf("Each step is the later prefix against the earlier, by the decision engine (the boot the "
			 "unit); q: Benjamini-Hochberg over the %zu step tests of the chain; a step changes at q <= %g "
			 "with 3 runs a side (a declared metric with an mde: also its %g%% interval excludes 0); "
			 "unchanged: its %g%% interval inside the declared ±mde; otherwise undecided.",
			 a->tests, a->q, 100 * (1 - a->alpha), 100 * (1 - 2 * a->alpha));
}

/* "base -> @1 -> @3" */
static void chain_line(const struct attribution *a, struct strbuf *out)
{
	for (size_t i = 0; i < a->nchain; i++) {
		const struct result_series *s = a->series;

		if (i)
			strbuf_addstr(out, " -> ");
		if (s->steps[a->chain[i]])
			strbuf_addf(out, "@%u", s->steps[a->chain[i]]);
		else
			strbuf_addstr(out, s->chain.v[a->chain[i]]);
	}
}

/* A step's cell: "-0.5% [-0.7, -0.3]%", "-" without values. */
static void step_change(const struct attrib_step *st, struct strbuf *out)
{
	const char *u = st->e.points ? " points" : "%";

	if (!st->have) {
		strbuf_addstr(out, "-");
		return;
	}
	if (!isfinite(st->e.change)) { /* from 0: no ratio to give */
		strbuf_addf(out, "%.4g -> %.4g", st->e.mean[0], st->e.mean[1]);
		return;
	}
	strbuf_addf(out, "%+.1f%s", st->e.change, u);
	if (!isnan(st->e.lo))
		strbuf_addf(out, " [%+.1f, %+.1f]%s", st->e.lo, st->e.hi, u);
}

static void step_q(const struct attrib_step *st, struct strbuf *out)
{
	if (isnan(st->q))
		strbuf_addstr(out, "-");
	else
		strbuf_addf(out, "%.2g", st->q);
}

/* A series with two or more of its variants compared. */
static bool shown(const struct attribution *a)
{
	return a->nchain >= 2;
}

static bool group_listed(const struct attribution *a, const char *group)
{
	for (size_t r = 0; r < a->nrows; r++)
		if (a->rows[r].group == group && a->rows[r].listed)
			return true;
	return false;
}

/* ---- text ---- */

static size_t term_len(const char *s)
{
	_cleanup_strbuf_ struct strbuf e = STRBUF_INIT;

	term_escape(&e, s);
	return e.len;
}

static void pad(struct strbuf *out, size_t have, size_t width)
{
	for (; have < width; have++)
		strbuf_addch(out, ' ');
}

static void table_text(const struct attribution *a, const char *group, struct strbuf *out)
{
	size_t mw = strlen("metric"), sw = strlen("step"), cw = strlen("change");

	for (size_t r = 0; r < a->nrows; r++) {
		const struct attrib_row *row = &a->rows[r];

		if (row->group != group || !row->listed)
			continue;
		mw = MAX(mw, term_len(row->metric));
		for (size_t s = 0; s + 1 < a->nchain; s++) {
			_cleanup_strbuf_ struct strbuf n = STRBUF_INIT, ch = STRBUF_INIT;

			attrib_step_name(a, s, &n);
			step_change(&row->steps[s], &ch);
			sw = MAX(sw, term_len(n.buf));
			cw = MAX(cw, ch.len);
		}
	}
	strbuf_addstr(out, "    metric");
	pad(out, strlen("metric"), mw + 2);
	strbuf_addstr(out, "step");
	pad(out, strlen("step"), sw + 2);
	strbuf_addstr(out, "change");
	pad(out, strlen("change"), cw + 2);
	strbuf_addstr(out, "q        verdict\n");
	for (size_t r = 0; r < a->nrows; r++) {
		const struct attrib_row *row = &a->rows[r];

		if (row->group != group || !row->listed)
			continue;
		for (size_t s = 0; s + 1 < a->nchain; s++) {
			_cleanup_strbuf_ struct strbuf n = STRBUF_INIT, ch = STRBUF_INIT, q = STRBUF_INIT;
			size_t at = out->len;

			attrib_step_name(a, s, &n);
			step_change(&row->steps[s], &ch);
			step_q(&row->steps[s], &q);
			strbuf_addstr(out, "    ");
			term_escape(out, row->metric);
			pad(out, out->len - at - 4, mw + 2);
			at = out->len;
			term_escape(out, n.buf);
			pad(out, out->len - at, sw + 2);
			strbuf_addstr(out, ch.buf);
			pad(out, ch.len, cw + 2);
			strbuf_addstr(out, q.buf);
			pad(out, q.len, 9);
			strbuf_addstr(out, step_state_name(row->steps[s].state));
			strbuf_addch(out, '\n');
		}
	}
}

static void legend_text(struct strbuf *out, const char *leg)
{
	report_wrap(out, leg, 100, "  ");
}

static void legend_md(struct strbuf *out, const char *leg)
{
	strbuf_addstr(out, "\n");
	md_escape(out, leg);
	strbuf_addch(out, '\n');
}

static void table_md(const struct attribution *a, const char *group, struct strbuf *out)
{
	strbuf_addstr(out, "\n| metric | step | change | q | verdict |\n|---|---|---:|---:|---|\n");
	for (size_t r = 0; r < a->nrows; r++) {
		const struct attrib_row *row = &a->rows[r];

		if (row->group != group || !row->listed)
			continue;
		for (size_t s = 0; s + 1 < a->nchain; s++) {
			_cleanup_strbuf_ struct strbuf n = STRBUF_INIT, cell = STRBUF_INIT;

			attrib_step_name(a, s, &n);
			strbuf_addstr(out, "| ");
			md_code(out, row->metric);
			strbuf_addstr(out, " | ");
			md_escape(out, n.buf);
			strbuf_addstr(out, " | ");
			step_change(&row->steps[s], &cell);
			md_escape(out, cell.buf);
			strbuf_addstr(out, " | ");
			strbuf_reset(&cell);
			step_q(&row->steps[s], &cell);
			strbuf_addstr(out, cell.buf);
			strbuf_addf(out, " | %s |\n", step_state_name(row->steps[s].state));
		}
	}
}

/* How text and Markdown differ: escaping, the heading's and group's marks, the list item, the table. */
struct style {
	void (*escape)(struct strbuf *out, const char *s);
	const char *head, *head_end, *group, *group_end, *item;
	void (*legend)(struct strbuf *out, const char *leg);
	void (*table)(const struct attribution *a, const char *group, struct strbuf *out);
};

static const struct style text_style = { term_escape, "\nAttribution over the series ", "\n", "  [", "]\n", "    ",
					 legend_text, table_text };
static const struct style md_style = { md_escape, "\n## Attribution over the series ", "\n", "\n### ", "\n\n", "- ",
				       legend_md, table_md };

static void format_styled(const struct comparison *c, const struct style *st, struct strbuf *out)
{
	for (size_t i = 0; i < c->rs->nseries; i++) {
		_cleanup_attribution_ struct attribution *a = attrib_build(c, &c->rs->series[i]);
		_cleanup_free_ char *leg = NULL;
		_cleanup_strbuf_ struct strbuf ch = STRBUF_INIT;

		if (!shown(a))
			continue;
		leg = legend(a);
		chain_line(a, &ch);
		strbuf_addstr(out, st->head);
		st->escape(out, a->series->kernel);
		strbuf_addstr(out, ": ");
		st->escape(out, ch.buf);
		strbuf_addstr(out, st->head_end);
		st->legend(out, leg);
		for (size_t g = 0; g < c->ngroups; g++) {
			const char *group = c->groups[g].name;

			if (!group_listed(a, group))
				continue;
			strbuf_addstr(out, st->group);
			st->escape(out, group);
			strbuf_addstr(out, st->group_end);
			for (size_t r = 0; r < a->nrows; r++) {
				_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

				if (a->rows[r].group != group || !a->rows[r].listed)
					continue;
				attrib_summary(a, &a->rows[r], &line);
				strbuf_addstr(out, st->item);
				st->escape(out, line.buf);
				strbuf_addch(out, '\n');
			}
			st->table(a, group, out);
		}
	}
}

void attrib_format_text(const struct comparison *c, struct strbuf *out)
{
	format_styled(c, &text_style, out);
}

/* ---- Markdown ---- */

void attrib_format_md(const struct comparison *c, struct strbuf *out)
{
	format_styled(c, &md_style, out);
}

/* ---- JSON ---- */

static void json_num(struct json *j, const char *key, double v)
{
	json_key(j, key);
	if (isfinite(v))
		json_double(j, v);
	else
		json_null(j);
}

static const char *const mde_names[] = { [STEP_MDE_NONE] = NULL, [STEP_MDE_CLEARS] = "clears",
					 [STEP_MDE_WITHIN] = "within", [STEP_MDE_UNSETTLED] = "unsettled" };

static void json_step(struct json *j, const struct attribution *a, const struct attrib_step *st, size_t s)
{
	unsigned first, last;

	attrib_step_patches(a, s, &first, &last);
	json_object_begin(j);
	json_kv_string(j, "from", a->series->chain.v[a->chain[s]]);
	json_kv_string(j, "to", a->series->chain.v[a->chain[s + 1]]);
	json_kv_uint(j, "first_patch", first);
	json_kv_uint(j, "last_patch", last);
	json_kv_string(j, "verdict", step_state_name(st->state));
	json_kv_string(j, "unit", st->e.points ? "points" : "percent");
	json_num(j, "change", st->have ? st->e.change : NAN);
	json_num(j, "ci_low", st->have ? st->e.lo : NAN);
	json_num(j, "ci_high", st->have ? st->e.hi : NAN);
	json_num(j, "equivalence_low", st->have ? st->e.elo : NAN);
	json_num(j, "equivalence_high", st->have ? st->e.ehi : NAN);
	json_num(j, "p", st->have ? st->e.p : NAN);
	json_num(j, "q", st->q);
	json_kv_string(j, "method", st->have ? st->e.method : NULL);
	json_kv_string(j, "mde", mde_names[st->mde]);
	json_kv_uint(j, "runs_from", st->have ? st->e.runs[0] : 0);
	json_kv_uint(j, "runs_to", st->have ? st->e.runs[1] : 0);
	json_object_end(j);
}

void attrib_format_json(const struct comparison *c, struct json *j)
{
	bool begun = false;

	for (size_t i = 0; i < c->rs->nseries; i++) {
		_cleanup_attribution_ struct attribution *a = attrib_build(c, &c->rs->series[i]);
		const struct result_series *s = a->series;

		if (!shown(a))
			continue;
		if (!begun) {
			json_key(j, "attribution");
			json_array_begin(j);
			begun = true;
		}
		json_object_begin(j);
		json_kv_string(j, "series", s->kernel);
		json_key(j, "chain");
		json_array_begin(j);
		for (size_t k = 0; k < a->nchain; k++)
			json_string(j, s->chain.v[a->chain[k]]);
		json_array_end(j);
		json_key(j, "patches");
		json_array_begin(j);
		for (size_t k = 0; k < s->npatches; k++) {
			json_object_begin(j);
			json_kv_uint(j, "number", s->patches[k].number);
			json_kv_string(j, "subject", s->patches[k].subject);
			json_object_end(j);
		}
		json_array_end(j);
		json_kv_uint(j, "tests", a->tests);
		json_kv_double(j, "alpha", a->alpha);
		json_kv_double(j, "q", a->q);
		json_key(j, "metrics");
		json_array_begin(j);
		for (size_t r = 0; r < a->nrows; r++) {
			const struct attrib_row *row = &a->rows[r];
			_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

			if (!row->listed)
				continue;
			attrib_summary(a, row, &line);
			json_object_begin(j);
			json_kv_string(j, "group", row->group);
			json_kv_string(j, "metric", row->metric);
			json_key(j, "declared");
			json_bool(j, row->declared);
			json_num(j, "mde", row->mde > 0 ? row->mde : NAN);
			json_kv_string(j, "summary", line.buf);
			json_key(j, "steps");
			json_array_begin(j);
			for (size_t k = 0; k + 1 < a->nchain; k++)
				json_step(j, a, &row->steps[k], k);
			json_array_end(j);
			json_object_end(j);
		}
		json_array_end(j);
		json_object_end(j);
	}
	if (begun)
		json_array_end(j);
}

/* ---- HTML ---- */

static void html_cell(struct xml *x, const char *cls, const char *text)
{
	xml_open(x, "td");
	if (cls)
		xml_attr(x, "class", cls);
	xml_text(x, text);
	xml_close(x);
}

/* One row a metric, a column a step: "change [lo, hi] q=… verdict", coloured by the verdict. */
static void table_html(struct xml *x, const struct attribution *a, const char *group)
{
	xml_open(x, "table");
	xml_open(x, "tr");
	xml_open(x, "th");
	xml_attr(x, "class", "m");
	xml_text(x, "metric");
	xml_close(x);
	for (size_t s = 0; s + 1 < a->nchain; s++) {
		_cleanup_strbuf_ struct strbuf n = STRBUF_INIT;

		attrib_step_name(a, s, &n);
		xml_element(x, "th", n.buf);
	}
	xml_close(x);
	for (size_t r = 0; r < a->nrows; r++) {
		const struct attrib_row *row = &a->rows[r];

		if (row->group != group || !row->listed)
			continue;
		xml_open(x, "tr");
		html_cell(x, "m", row->metric);
		for (size_t s = 0; s + 1 < a->nchain; s++) {
			const struct attrib_step *st = &row->steps[s];
			_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;

			step_change(st, &t);
			strbuf_addstr(&t, " q=");
			step_q(st, &t);
			strbuf_addf(&t, " %s", step_state_name(st->state));
			html_cell(x, st->state == STEP_CHANGES ? "changed" : st->state == STEP_UNCHANGED ? "unchanged"
													: "inconclusive",
				  t.buf);
		}
		xml_close(x);
	}
	xml_close(x);
}

void attrib_format_html(const struct comparison *c, struct xml *x)
{
	for (size_t i = 0; i < c->rs->nseries; i++) {
		_cleanup_attribution_ struct attribution *a = attrib_build(c, &c->rs->series[i]);
		_cleanup_free_ char *leg = NULL, *title = NULL;
		_cleanup_strbuf_ struct strbuf ch = STRBUF_INIT;

		if (!shown(a))
			continue;
		leg = legend(a);
		chain_line(a, &ch);
		title = xasprintf("Attribution over the series %s: %s", a->series->kernel, ch.buf);
		xml_element(x, "h2", title);
		xml_element(x, "p", leg);
		for (size_t g = 0; g < c->ngroups; g++) {
			const char *group = c->groups[g].name;

			if (!group_listed(a, group))
				continue;
			xml_element(x, "h3", group);
			xml_open(x, "ul");
			for (size_t r = 0; r < a->nrows; r++) {
				_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

				if (a->rows[r].group != group || !a->rows[r].listed)
					continue;
				attrib_summary(a, &a->rows[r], &line);
				xml_element(x, "li", line.buf);
			}
			xml_close(x);
			table_html(x, a, group);
		}
	}
}
