/* SPDX-License-Identifier: MIT */
/*
 * The robot's report of a track: loaded once from the track's folder,
 * then written as text, Markdown, JSON or one HTML file by pure functions
 * (track-report.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "track-report.h"
#include "../result/report.h"
#include "../result/result.h"
#include "../store/store.h"
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/escape.h"
#include "../util/json.h"
#include "../util/macro.h"
#include "../util/path.h"
#include "../util/xml.h"
#include "../util/banned.h"

/* ---- loading ---- */

/* The workload (the run's group) of the first run that measured the metric. */
static char *metric_workload(const struct result_set *rs, const char *metric)
{
	for (size_t k = 0; rs && k < rs->n; k++)
		for (size_t m = 0; m < rs->runs[k].nm; m++)
			if (streq(rs->runs[k].m[m].name, metric) && rs->runs[k].group)
				return xstrdup(rs->runs[k].group);
	return NULL;
}

/* Point p's bisect (id), when it is readable and is p's. */
static void load_bisect(const char *root, const struct track *t, const struct track_point *p, const char *id,
			struct track_report_point *pt, struct strv *notes)
{
	_cleanup_free_ char *dir = store_find(root, id), *path = NULL, *err = NULL, *why = NULL;
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	int r;

	if (!dir) {
		strv_pushf(notes, "the bisect %s is not in the results folder: its steps are not shown", id);
		return;
	}
	path = path_join(dir, BISECT_FILE);
	if ((r = strbuf_read_file(&text, path, BISECT_MAX_BYTES)) < 0) {
		strv_pushf(notes, "the bisect %s cannot be read (%s): its steps are not shown", id, strerror(-r));
		return;
	}
	if (bisect_parse(path, text.buf, text.len, &pt->b, &err) < 0) {
		strv_pushf(notes, "%s: the bisect's steps are not shown", err ? err : path);
		return;
	}
	if (!track_point_bisect_matches(t, p, &pt->b, &why)) {
		strv_pushf(notes, "the bisect %s is not this change point's (%s): its steps are not shown", id, why);
		bisect_release(&pt->b);
		return;
	}
	pt->have_bisect = true;
}

/* Each comparison's runs from its own folder under root (NULL: cannot be
 * read); how many that ran cannot be. */
static size_t load_pairs(const char *root, const struct track *t, struct result_set **runs)
{
	size_t missing = 0;

	for (size_t i = 0; i + 1 < t->ncommits; i++) {
		_cleanup_free_ char *rdir = t->pairs[i].run ? store_find(root, t->pairs[i].run) : NULL;
		_cleanup_diags_ struct diags ld = { 0 };

		if (!t->pairs[i].run)
			continue;
		if (!rdir || store_load(rdir, &runs[i], &ld) < 0) {
			runs[i] = NULL;
			missing++;
		}
	}
	return missing;
}

/* The track's folder's own runs (every comparison's, gathered), or NULL. */
static struct result_set *own_runs(const char *dir)
{
	_cleanup_diags_ struct diags ld = { 0 };
	struct result_set *rs = NULL;

	if (store_load(dir, &rs, &ld) < 0)
		return NULL;
	if (!rs->n) {
		result_set_free(rs);
		return NULL;
	}
	return rs;
}

int track_report_load(const char *root, const char *dir, struct track_report *ret, struct diags *d)
{
	_cleanup_free_ char *path = path_join(dir, TRACK_FILE), *err = NULL;
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	struct result_set **runs, *own = NULL;
	struct track *t = &ret->t;
	size_t missing;
	int r;

	memset(ret, 0, sizeof(*ret));
	if ((r = strbuf_read_file(&text, path, TRACK_MAX_BYTES)) < 0) {
		diags_add(d, NULL, "cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	if (track_parse(path, text.buf, text.len, t, &err) < 0) {
		diags_add(d, NULL, "%s", err);
		return -EINVAL;
	}
	ret->id = path_basename(dir);
	runs = xcalloc(t->ncommits, sizeof(*runs));
	missing = load_pairs(root, t, runs);
	if (missing && (own = own_runs(dir))) {
		/* a bundle, or a results folder without some comparisons: the
		 * track's own folder holds every comparison's runs (runs_gather);
		 * all of them or none, or a boot would count twice */
		strv_pushf(&ret->notes, "%zu of the comparisons %s not in the results folder: the series is the track's "
					"own folder's runs",
			   missing, missing == 1 ? "is" : "are");
		for (size_t i = 0; i + 1 < t->ncommits; i++) {
			result_set_free(runs[i]);
			runs[i] = t->pairs[i].run ? own : NULL;
		}
	} else {
		for (size_t i = 0; i + 1 < t->ncommits; i++)
			if (t->pairs[i].run && !runs[i])
				strv_pushf(&ret->notes, "the comparison %s cannot be read: its boots are not in the series",
					   t->pairs[i].run);
	}
	for (size_t i = 0; i + 1 < t->ncommits; i++) {
		if (runs[i] && !ret->workload)
			ret->workload = metric_workload(runs[i], t->metric);
		if (runs[i] && !ret->have_fp && runs[i]->nfps) {
			fingerprint_copy(&ret->fp, &runs[i]->fps[0]);
			ret->have_fp = true;
		}
	}
	track_series(t, runs, &ret->value, &ret->commit, &ret->n, &ret->kept, &ret->nkept);
	for (size_t i = 0; i < t->ncommits; i++)
		if (runs[i] != own)
			result_set_free(runs[i]);
	result_set_free(own);
	free(runs);
	ret->pts = xcalloc(t->npoints + 1, sizeof(*ret->pts));
	for (size_t i = 0; i < t->npoints; i++)
		if (t->points[i].bisect)
			load_bisect(root, t, &t->points[i], t->points[i].bisect, &ret->pts[i], &ret->notes);
	return 0;
}

void track_report_release(struct track_report *r)
{
	for (size_t i = 0; r->pts && i < r->t.npoints; i++)
		if (r->pts[i].have_bisect)
			bisect_release(&r->pts[i].b);
	free(r->pts);
	track_release(&r->t);
	fingerprint_release(&r->fp);
	free(r->id);
	free(r->workload);
	free(r->value);
	free(r->commit);
	free(r->kept);
	strv_release(&r->notes);
	memset(r, 0, sizeof(*r));
}

/* ---- what every format says ---- */

/* The series at tracked commit k (an index into kept): mean, range, boots. */
struct commit_stats {
	double mean, lo, hi;
	size_t n;
};

static void commit_stats(const struct track_report *r, size_t k, struct commit_stats *s)
{
	double sum = 0;

	*s = (struct commit_stats){ .mean = NAN, .lo = INFINITY, .hi = -INFINITY };
	for (size_t i = 0; i < r->n; i++)
		if (r->commit[i] == k) {
			sum += r->value[i];
			s->lo = fmin(s->lo, r->value[i]);
			s->hi = fmax(s->hi, r->value[i]);
			s->n++;
		}
	if (s->n)
		s->mean = sum / (double)s->n;
}

/* The kept index of tracked commit c, or nkept when it has no boot. */
static size_t kept_index(const struct track_report *r, size_t c)
{
	size_t k = 0;

	while (k < r->nkept && r->kept[k] != c)
		k++;
	return k;
}

enum point_kind { POINT_NEWS, POINT_KNOWN, POINT_ACCEPTED, POINT_NO_CULPRIT };

static enum point_kind point_kind(const struct track_point *p)
{
	return !p->culprit ? POINT_NO_CULPRIT : p->accepted ? POINT_ACCEPTED : p->known ? POINT_KNOWN : POINT_NEWS;
}

static const char *const point_kind_name[] = { "news", "known", "accepted", "no culprit" };

/* "p=0.0012", "p<0.0001": no e-notation for a reader. */
static void p_text(struct strbuf *out, double p)
{
	if (p < 0.0001)
		strbuf_addstr(out, "p<0.0001");
	else
		strbuf_addf(out, "p=%.2g", p);
	/* %.2g never goes to e-notation above 0.0001 */
}

/* The point's one line: the robot's for news, else why it is not news. */
static void point_line(const struct track_report *r, const struct track_point *p, struct strbuf *out)
{
	const struct track *t = &r->t;
	const char *w = r->workload ? r->workload : t->experiment;

	switch (point_kind(p)) {
	case POINT_NEWS:
		strbuf_addf(out, "FYI: a %+.1f%% [%+.1f, %+.1f]%% change of %s (%s, %s) due to commit %.12s (\"%s\") by %s",
			    p->change, p->lo, p->hi, t->metric, t->experiment, w, p->culprit, p->subject ? p->subject : "",
			    p->author ? p->author : "?");
		break;
	case POINT_KNOWN:
		strbuf_addf(out, "known: a %+.1f%% change of %s (%s, %s) due to commit %.12s (\"%s\"), reported by track %s",
			    p->change, t->metric, t->experiment, w, p->culprit, p->subject ? p->subject : "", p->known);
		break;
	case POINT_ACCEPTED:
		strbuf_addf(out, "accepted: a %+.1f%% change of %s (%s, %s) due to commit %.12s (\"%s\"), a known "
				 "trade-off: %s",
			    p->change, t->metric, t->experiment, w, p->culprit, p->subject ? p->subject : "", p->accepted);
		break;
	case POINT_NO_CULPRIT:
		strbuf_addf(out, "a %+.1f%% [%+.1f, %+.1f]%% change of %s (%s, %s) between %.12s and %.12s, no culprit named: %s",
			    p->change, p->lo, p->hi, t->metric, t->experiment, w, t->commits[p->from].id,
			    t->commits[p->at].id, p->outcome ? p->outcome : "not bisected yet");
		break;
	}
}

char **track_report_reproduce_argv(const struct track_report *r, size_t i)
{
	const struct track *t = &r->t;
	const struct track_point *p = &t->points[i];
	char **argv = xcalloc(14, sizeof(char *));
	size_t n = 0;

	argv[n++] = xstrdup("lab");
	argv[n++] = xstrdup("bisect");
	argv[n++] = xstrdup(t->experiment);
	argv[n++] = xstrdup("--good");
	argv[n++] = xstrdup(t->commits[p->from].id);
	argv[n++] = xstrdup("--bad");
	argv[n++] = xstrdup(t->commits[p->at].id);
	argv[n++] = xstrdup("--metric");
	argv[n++] = xstrdup(t->metric);
	argv[n++] = xstrdup("--threshold");
	argv[n++] = xasprintf("%g%%", t->threshold);
	argv[n++] = xstrdup("--kernel");
	argv[n++] = xstrdup(t->kernel);
	return argv;
}

static void argv_free(char **argv)
{
	for (size_t i = 0; argv[i]; i++)
		free(argv[i]);
	free(argv);
}



/* The machine's fields a reader of the report needs. */
static const enum fp_field machine_fields[] = { FP_HOST, FP_CPU_MODEL, FP_CPUS, FP_HOST_KERNEL, FP_QEMU, FP_LIBVIRT,
						FP_ACCEL, FP_TIMING, FP_TOPOLOGY, FP_LAB };

/* ---- text and Markdown ---- */

/* A fenced code block of text that may hold anything a stored file held
 * (a compiler's line, a subject): control characters shown, and a fence
 * longer than any run of backticks in it, so nothing in it ends the block. */
static void md_block(struct strbuf *out, const char *text)
{
	_cleanup_strbuf_ struct strbuf body = STRBUF_INIT;
	size_t run = 0, longest = 0;

	term_escape_lines(&body, text);
	for (size_t i = 0; i < body.len; i++) {
		run = body.buf[i] == '`' ? run + 1 : 0;
		longest = run > longest ? run : longest;
	}
	strbuf_addchars(out, '`', longest < 3 ? 3 : longest + 1);
	strbuf_addch(out, '\n');
	strbuf_add(out, body.buf ? body.buf : "", body.len);
	if (body.len && body.buf[body.len - 1] != '\n')
		strbuf_addch(out, '\n');
	strbuf_addchars(out, '`', longest < 3 ? 3 : longest + 1);
	strbuf_addch(out, '\n');
}

#define BAR 30

/* The series as lines: each tracked commit's mean, range and boots, a bar
 * from the series' low to its high, and a line at each change point. */
static void series_lines(const struct track_report *r, struct strbuf *out)
{
	const struct track *t = &r->t;
	double lo = INFINITY, hi = -INFINITY;
	struct metric_unit u;

	report_metric_unit(t->metric, &u);
	for (size_t i = 0; i < r->n; i++) {
		lo = fmin(lo, r->value[i]);
		hi = fmax(hi, r->value[i]);
	}
	for (size_t c = 0; c < t->ncommits; c++) {
		size_t k = kept_index(r, c);
		struct commit_stats s;

		for (size_t i = 0; i < t->npoints; i++)
			if (t->points[i].at == c)
				strbuf_addf(out, "      ---- change point %zu: %+.1f%% ----\n", i + 1, t->points[i].change);
		strbuf_addf(out, "  %2zu. %.12s ", c, t->commits[c].id);
		if (k == r->nkept) {
			strbuf_addstr(out, "  (no boot)\n");
			continue;
		}
		commit_stats(r, k, &s);
		{
			size_t w = hi > lo ? (size_t)lround((s.mean - lo) / (hi - lo) * BAR) : BAR / 2;

			for (size_t j = 0; j < BAR; j++)
				strbuf_addch(out, j < w ? '#' : '.');
		}
		{
			_cleanup_free_ char *m = report_value_text(&u, s.mean, 4), *a = report_value_text(&u, s.lo, 4),
					    *b = report_value_text(&u, s.hi, 4);

			strbuf_addf(out, " %s (%zu boot%s, %s..%s)\n", m, s.n, s.n == 1 ? "" : "s", a, b);
		}
	}
}

static void machine_text(const struct track_report *r, bool md, struct strbuf *out)
{
	for (size_t i = 0; i < ELEMENTSOF(machine_fields); i++) {
		const char *v = r->fp.f[machine_fields[i]];

		if (!v)
			continue;
		if (md) {
			strbuf_addf(out, "| %s | ", fp_field_label(machine_fields[i]));
			md_escape(out, v);
			strbuf_addstr(out, " |\n");
		} else {
			strbuf_addf(out, "  %s: %s\n", fp_field_label(machine_fields[i]), v);
		}
	}
}

void track_report_format_text(const struct track_report *r, struct strbuf *out)
{
	const struct track *t = &r->t;

	strbuf_addf(out, "track %s: %s over %s's %s, %zu commits tracked (every %u commit%s of the first-parent line)\n",
		    r->id, t->experiment, t->kernel, t->branch, t->ncommits, t->step, t->step == 1 ? "" : "s");
	if (!t->decided) {
		strbuf_addstr(out, "change points: not decided yet\n");
	} else if (!t->npoints) {
		strbuf_addf(out, "no change point in %s over the %zu commits\n", t->metric, t->ncommits);
	}
	for (size_t i = 0; i < t->npoints; i++) {
		strbuf_addf(out, "%zu. ", i + 1);
		point_line(r, &t->points[i], out);
		strbuf_addch(out, '\n');
	}
	for (size_t i = 0; i < r->notes.n; i++)
		strbuf_addf(out, "not shown: %s\n", r->notes.v[i]);
	strbuf_addf(out, "\nthe series: %s, the mean of each boot, per tracked commit\n", t->metric);
	series_lines(r, out);
	for (size_t i = 0; i < t->npoints; i++) {
		const struct track_point *p = &t->points[i];
		char **argv = track_report_reproduce_argv(r, i);

		strbuf_addf(out, "\nchange point %zu: %+.1f%% [%+.1f, %+.1f]%% (", i + 1, p->change, p->lo, p->hi);
		p_text(out, p->p);
		strbuf_addf(out, ") between %.12s and %.12s\n", t->commits[p->from].id, t->commits[p->at].id);
		if (p->culprit)
			strbuf_addf(out, "  culprit: %s (\"%s\"), author: %s\n", p->culprit, p->subject ? p->subject : "",
				    p->author ? p->author : "?");
		if (r->pts[i].have_bisect) {
			_cleanup_strbuf_ struct strbuf b = STRBUF_INIT;

			strbuf_addf(out, "  bisect %s:\n", p->bisect);
			bisect_format_text(&r->pts[i].b, &b);
			for (const char *s = b.buf ? b.buf : "", *e; *s; s = e) {
				e = strchr(s, '\n');
				if (!e)
					e = s + strlen(s);
				strbuf_addf(out, "    %.*s\n", (int)(e - s), s);
				if (*e)
					e++;
			}
		} else if (p->outcome) {
			strbuf_addf(out, "  %s\n", streq(p->outcome, "adjacent") ?
							   "no commit between: the tracked commit is the culprit" :
							   p->outcome);
		}
		strbuf_addstr(out, "  reproduce on your tree: ");
		shell_quote_argv(out, (const char *const *)argv);
		strbuf_addch(out, '\n');
		argv_free(argv);
	}
	if (r->have_fp) {
		strbuf_addstr(out, "\nthe machine:\n");
		machine_text(r, false, out);
	}
	strbuf_addf(out, "\nthe runs: lab bundle %s (a bundle of every comparison's runs)\n", r->id);
}

/* Change point i's section: its change, culprit, bisect and command. */
static void point_md(const struct track_report *r, size_t i, struct strbuf *out)
{
	const struct track *t = &r->t;
	const struct track_point *p = &t->points[i];
	char **argv = track_report_reproduce_argv(r, i);
	_cleanup_strbuf_ struct strbuf cmd = STRBUF_INIT;

	strbuf_addf(out, "\n## Change point %zu: %+.1f%% [%+.1f, %+.1f]%% (", i + 1, p->change, p->lo, p->hi);
	p_text(out, p->p);
	strbuf_addf(out, ")\n\nBetween `%.12s` and `%.12s`.", t->commits[p->from].id, t->commits[p->at].id);
	if (p->culprit) {
		strbuf_addf(out, " Culprit: `%s` (", p->culprit);
		md_escape(out, p->subject ? p->subject : "");
		strbuf_addstr(out, "), author ");
		md_escape(out, p->author ? p->author : "?");
		strbuf_addch(out, '.');
	}
	strbuf_addstr(out, "\n\n");
	if (r->pts[i].have_bisect) {
		_cleanup_strbuf_ struct strbuf b = STRBUF_INIT;

		strbuf_addstr(out, "The bisect ");
		md_code(out, p->bisect);
		strbuf_addstr(out, ":\n\n");
		bisect_format_text(&r->pts[i].b, &b);
		md_block(out, b.buf ? b.buf : "");
		strbuf_addch(out, '\n');
	}
	shell_quote_argv(&cmd, (const char *const *)argv);
	strbuf_addstr(out, "Reproduce on your tree:\n\n");
	md_block(out, cmd.buf);
	argv_free(argv);
}

void track_report_format_md(const struct track_report *r, struct strbuf *out)
{
	const struct track *t = &r->t;

	strbuf_addstr(out, "# lab track ");
	md_escape(out, r->id);
	strbuf_addstr(out, ": ");
	md_escape(out, t->experiment);
	strbuf_addstr(out, ", ");
	md_escape(out, t->metric);
	strbuf_addstr(out, "\n\n");
	if (!t->decided)
		strbuf_addstr(out, "Change points: not decided yet.\n\n");
	else if (!t->npoints)
		strbuf_addf(out, "No change point over the %zu commits.\n\n", t->ncommits);
	for (size_t i = 0; i < t->npoints; i++) {
		_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

		point_line(r, &t->points[i], &line);
		strbuf_addstr(out, "- **");
		md_escape(out, line.buf);
		strbuf_addstr(out, "**\n");
	}
	for (size_t i = 0; i < r->notes.n; i++) {
		strbuf_addstr(out, "\nNot shown: ");
		md_escape(out, r->notes.v[i]);
		strbuf_addch(out, '\n');
	}
	strbuf_addf(out, "\n%zu commits of ", t->ncommits);
	md_code(out, t->branch);
	strbuf_addf(out, " tracked, every %u of the first-parent line, kernel ", t->step);
	md_code(out, t->kernel);
	strbuf_addstr(out, ".\n\n## The series\n\nThe mean of each boot, per tracked commit:\n\n```\n");
	{
		_cleanup_strbuf_ struct strbuf s = STRBUF_INIT;

		series_lines(r, &s);
		/* a fence in a stored name cannot end the block: every line
		 * comes from ids and numbers lab wrote */
		strbuf_add(out, s.buf ? s.buf : "", s.len);
	}
	strbuf_addstr(out, "```\n");
	for (size_t i = 0; i < t->npoints; i++)
		point_md(r, i, out);
	if (r->have_fp) {
		strbuf_addstr(out, "\n## The machine\n\n| | |\n|---|---|\n");
		machine_text(r, true, out);
	}
	strbuf_addstr(out, "\nThe runs: ");
	{
		_cleanup_free_ char *b = xasprintf("lab bundle %s", r->id);

		md_code(out, b);
	}
	strbuf_addstr(out, " (a bundle of every comparison's runs).\n");
}

/* ---- JSON ---- */

static void bisect_json(const struct bisect *b, struct json *j)
{
	unsigned lo, hi, next;
	_cleanup_free_ char *why = NULL;
	enum bisect_state state = bisect_status(b, &lo, &hi, &next, &why);

	json_object_begin(j);
	json_kv_string(j, "state", bisect_state_name(state));
	json_kv_string(j, "why", why);
	json_key(j, "steps");
	json_array_begin(j);
	for (size_t i = 0; i < b->nsteps; i++) {
		const struct bisect_step *st = &b->steps[i];
		_cleanup_free_ char *k = bisect_kernel_name(b, st->prefix);

		json_object_begin(j);
		json_kv_string(j, "kernel", k);
		if (b->commits && st->prefix <= b->npatches)
			json_kv_string(j, "commit", b->commits[st->prefix].id);
		json_kv_string(j, "mark", st->done ? bisect_mark_name(st->mark) : "running");
		json_kv_double(j, "change", st->change);
		json_kv_double(j, "lo", st->lo);
		json_kv_double(j, "hi", st->hi);
		json_key(j, "boots");
		json_array_begin(j);
		json_uint(j, st->boots[0]);
		json_uint(j, st->boots[1]);
		json_array_end(j);
		json_kv_double(j, "seconds", st->seconds);
		json_kv_string(j, "run", st->run);
		json_kv_string(j, "why", st->why);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

/* Change point i as a JSON object. */
static void point_json(const struct track_report *r, size_t i, struct json *j)
{
	const struct track *t = &r->t;
	const struct track_point *p = &t->points[i];
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;
	char **argv = track_report_reproduce_argv(r, i);

	point_line(r, p, &line);
	json_object_begin(j);
	json_kv_string(j, "line", line.buf);
	json_kv_string(j, "kind", point_kind_name[point_kind(p)]);
	json_kv_string(j, "from", t->commits[p->from].id);
	json_kv_string(j, "at", t->commits[p->at].id);
	json_kv_double(j, "change", p->change);
	json_kv_double(j, "lo", p->lo);
	json_kv_double(j, "hi", p->hi);
	json_kv_double(j, "p", p->p);
	json_kv_string(j, "culprit", p->culprit);
	json_kv_string(j, "subject", p->subject);
	json_kv_string(j, "author", p->author);
	json_kv_string(j, "known", p->known);
	json_kv_string(j, "accepted", p->accepted);
	json_kv_string(j, "outcome", p->outcome);
	json_kv_string(j, "bisect_id", p->bisect);
	json_key(j, "bisect");
	if (r->pts[i].have_bisect)
		bisect_json(&r->pts[i].b, j);
	else
		json_null(j);
	json_key(j, "reproduce");
	json_array_begin(j);
	for (size_t a = 0; argv[a]; a++)
		json_string(j, argv[a]);
	json_array_end(j);
	json_object_end(j);
	argv_free(argv);
}

void track_report_format_json(const struct track_report *r, struct strbuf *out)
{
	const struct track *t = &r->t;
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_uint(&j, "format", 1);
	json_kv_string(&j, "track", r->id);
	json_kv_string(&j, "experiment", t->experiment);
	json_kv_string(&j, "workload", r->workload);
	json_kv_string(&j, "kernel", t->kernel);
	json_kv_string(&j, "branch", t->branch);
	json_kv_string(&j, "metric", t->metric);
	json_kv_uint(&j, "step", t->step);
	json_key(&j, "decided");
	json_bool(&j, t->decided);
	json_key(&j, "commits");
	json_array_begin(&j);
	for (size_t c = 0; c < t->ncommits; c++) {
		size_t k = kept_index(r, c);

		json_object_begin(&j);
		json_kv_string(&j, "id", t->commits[c].id);
		json_kv_string(&j, "subject", t->commits[c].subject);
		json_kv_string(&j, "author", t->commits[c].author);
		json_key(&j, "boots");
		json_array_begin(&j);
		for (size_t i = 0; k < r->nkept && i < r->n; i++)
			if (r->commit[i] == k)
				json_double(&j, r->value[i]);
		json_array_end(&j);
		json_kv_string(&j, "not_measured", c ? t->pairs[c - 1].failed : NULL);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "points");
	json_array_begin(&j);
	for (size_t i = 0; i < t->npoints; i++)
		point_json(r, i, &j);
	json_array_end(&j);
	json_key(&j, "notes");
	json_array_begin(&j);
	for (size_t i = 0; i < r->notes.n; i++)
		json_string(&j, r->notes.v[i]);
	json_array_end(&j);
	json_key(&j, "machine");
	if (r->have_fp)
		fingerprint_write_json(&r->fp, &j);
	else
		json_null(&j);
	json_object_end(&j);
	json_finish(&j);
	strbuf_addch(out, '\n');
}

/* ---- HTML ---- */

static const char css[] = "body{font-family:sans-serif;margin:2em;color:#222;line-height:1.35}"
			  "h1{font-size:1.5em}h1,h2,p{overflow-wrap:anywhere}"
			  "table{border-collapse:collapse;margin:0.5em 0}"
			  "td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}"
			  ".scroll{overflow-x:auto;max-width:100%}"
			  "figure{margin:0.5em 0 1.5em;max-width:100%}figure svg{width:100%;max-width:720px}"
			  "figcaption{font-size:13px;margin-bottom:4px;max-width:40em}"
			  "svg{max-width:100%;height:auto;display:block}"
			  "code,pre{font-family:monospace;white-space:pre-wrap;overflow-wrap:anywhere;background:#f3f3f3}"
			  ".news{background:#f7dccc}.known,.accepted{background:#d6e6f3}"
			  "@media (max-width:600px){body{margin:0.6em}}";

#define CHART_W 720.0
#define CHART_H 280.0
#define CHART_L 70.0
#define CHART_R 16.0
#define CHART_T 28.0
#define CHART_B 40.0

struct chart {
	double lo, hi;
	size_t ncols;
};

static double chart_x(const struct chart *c, size_t k)
{
	double pw = CHART_W - CHART_L - CHART_R;

	return CHART_L + pw * ((double)k + 0.5) / (double)(c->ncols ? c->ncols : 1);
}

static double chart_y(const struct chart *c, double v)
{
	double ph = CHART_H - CHART_T - CHART_B;

	return CHART_T + ph * (1 - (v - c->lo) / (c->hi - c->lo));
}

/* The series: a column per tracked commit with boots, each boot a dot,
 * the commit's mean a bar, each change point a dashed line between its
 * two commits with its change above. */
static void series_svg(const struct track_report *r, struct xml *x)
{
	const struct track *t = &r->t;
	struct chart c = { .lo = INFINITY, .hi = -INFINITY, .ncols = r->nkept };
	struct metric_unit u;
	double step, pad;

	for (size_t i = 0; i < r->n; i++) {
		c.lo = fmin(c.lo, r->value[i]);
		c.hi = fmax(c.hi, r->value[i]);
	}
	if (!r->n)
		return;
	if (c.hi == c.lo) {
		c.hi += fabs(c.hi) * 0.05 + 1;
		c.lo -= fabs(c.lo) * 0.05 + 1;
	}
	pad = (c.hi - c.lo) * 0.08;
	c.lo -= pad;
	c.hi += pad;
	report_metric_unit(t->metric, &u);
	report_svg_open(x, CHART_W, CHART_H);
	step = report_nice_step((c.hi - c.lo) / 5);
	for (double v = ceil(c.lo / step) * step; v <= c.hi; v += step) {
		_cleanup_free_ char *label = report_value_text(&u, fabs(v) < step / 2 ? 0 : v, 3);

		report_svg_line(x, CHART_L, chart_y(&c, v), CHART_W - CHART_R, chart_y(&c, v), "#eeeeee", NULL, NULL);
		report_svg_text(x, CHART_L - 4, chart_y(&c, v) + 4, "end", "11", label);
	}
	report_svg_line(x, CHART_L, CHART_H - CHART_B, CHART_W - CHART_R, CHART_H - CHART_B, "#888", NULL, NULL);
	report_svg_line(x, CHART_L, CHART_T, CHART_L, CHART_H - CHART_B, "#888", NULL, NULL);
	for (size_t k = 0; k < r->nkept; k++) {
		struct commit_stats s;
		_cleanup_free_ char *label = xasprintf("%zu", r->kept[k]);
		double cx = chart_x(&c, k);

		commit_stats(r, k, &s);
		for (size_t i = 0; i < r->n; i++) {
			if (r->commit[i] != k)
				continue;
			xml_open(x, "circle");
			xml_attrf(x, "cx", "%.1f", cx);
			xml_attrf(x, "cy", "%.1f", chart_y(&c, r->value[i]));
			xml_attr(x, "r", "3");
			xml_attr(x, "fill", "#0072B2");
			xml_attr(x, "fill-opacity", "0.6");
			xml_close(x);
		}
		report_svg_line(x, cx - 8, chart_y(&c, s.mean), cx + 8, chart_y(&c, s.mean), "#000", "2", NULL);
		report_svg_text(x, cx, CHART_H - CHART_B + 14, "middle", "11", label);
	}
	report_svg_text(x, CHART_L + (CHART_W - CHART_L - CHART_R) / 2, CHART_H - 6, "middle", "11",
			"tracked commit (the table below names each)");
	for (size_t i = 0; i < t->npoints; i++) {
		const struct track_point *p = &t->points[i];
		size_t a = kept_index(r, p->from), b = kept_index(r, p->at);
		enum point_kind k = point_kind(p);
		/* the culprit and, when it is not news, why */
		_cleanup_free_ char *label = xasprintf("%zu: %+.1f%%%s%.12s%s%s", i + 1, p->change, p->culprit ? " " : "",
						       p->culprit ? p->culprit : "", k == POINT_NEWS ? "" : " ",
						       k == POINT_NEWS ? "" : point_kind_name[k]);
		double px;

		if (a >= r->nkept || b >= r->nkept)
			continue;
		px = (chart_x(&c, a) + chart_x(&c, b)) / 2;
		report_svg_line(x, px, CHART_T - 4, px, CHART_H - CHART_B, k == POINT_NEWS ? "#D55E00" : "#0072B2", "2",
				"6 4");
		report_svg_text(x, px, CHART_T - 10, "middle", "12", label);
	}
	xml_close(x); /* svg */
}

static void row(struct xml *x, const char *cell_tag, const char *const *cells, size_t n, const char *cls)
{
	xml_open(x, "tr");
	if (cls)
		xml_attr(x, "class", cls);
	for (size_t i = 0; i < n; i++)
		xml_element(x, cell_tag, cells[i] ? cells[i] : "");
	xml_close(x);
}

static void commits_table(const struct track_report *r, struct xml *x)
{
	const struct track *t = &r->t;
	static const char *const head[] = { "#", "commit", "subject", "author", "boots", "mean" };
	struct metric_unit u;

	report_metric_unit(t->metric, &u);
	xml_open(x, "div");
	xml_attr(x, "class", "scroll");
	xml_open(x, "table");
	row(x, "th", head, ELEMENTSOF(head), NULL);
	for (size_t c = 0; c < t->ncommits; c++) {
		size_t k = kept_index(r, c);
		struct commit_stats s = { .mean = NAN };
		_cleanup_free_ char *num = xasprintf("%zu", c), *id = xasprintf("%.12s", t->commits[c].id), *nb = NULL,
				    *mean = NULL;
		const char *cells[6];

		if (k < r->nkept)
			commit_stats(r, k, &s);
		nb = xasprintf("%zu", s.n);
		mean = s.n ? report_value_text(&u, s.mean, 4) :
			     xstrdup(c && t->pairs[c - 1].failed ? t->pairs[c - 1].failed : "not measured");
		cells[0] = num;
		cells[1] = id;
		cells[2] = t->commits[c].subject;
		cells[3] = t->commits[c].author;
		cells[4] = nb;
		cells[5] = mean;
		row(x, "td", cells, 6, NULL);
	}
	xml_close(x); /* table */
	xml_close(x); /* div */
}

static void bisect_table(const struct bisect *b, struct xml *x)
{
	static const char *const head[] = { "step", "kernel", "mark", "change", "boots", "seconds", "why" };

	xml_open(x, "div");
	xml_attr(x, "class", "scroll");
	xml_open(x, "table");
	row(x, "th", head, ELEMENTSOF(head), NULL);
	for (size_t i = 0; i < b->nsteps; i++) {
		const struct bisect_step *st = &b->steps[i];
		_cleanup_free_ char *n = xasprintf("%zu", i + 1), *k = bisect_kernel_name(b, st->prefix);
		_cleanup_free_ char *ch = isnan(st->change) ? xstrdup("-") :
					  !isnan(st->lo) && !isnan(st->hi) ?
							     xasprintf("%+.1f%% [%+.1f, %+.1f]%%", st->change, st->lo, st->hi) :
							     xasprintf("%+.1f%%", st->change);
		_cleanup_free_ char *boots = xasprintf("%u+%u", st->boots[0], st->boots[1]);
		_cleanup_free_ char *secs = xasprintf("%.0f", st->seconds);
		const char *cells[7] = { n, k, st->done ? bisect_mark_name(st->mark) : "running", ch, boots, secs,
					 st->why ? st->why : st->verdict };

		row(x, "td", cells, 7, NULL);
	}
	xml_close(x);
	xml_close(x);
}

/* Change point i's section: its change, culprit, bisect and command. */
static void point_html(const struct track_report *r, size_t i, struct xml *x)
{
	const struct track *t = &r->t;
	const struct track_point *p = &t->points[i];
	_cleanup_strbuf_ struct strbuf h = STRBUF_INIT, cmd = STRBUF_INIT;
	char **argv = track_report_reproduce_argv(r, i);

	strbuf_addf(&h, "Change point %zu: %+.1f%% [%+.1f, %+.1f]%% (", i + 1, p->change, p->lo, p->hi);
	p_text(&h, p->p);
	strbuf_addstr(&h, ")");
	xml_element(x, "h2", h.buf);
	strbuf_reset(&h);
	strbuf_addf(&h, "Between %.12s and %.12s.", t->commits[p->from].id, t->commits[p->at].id);
	if (p->culprit)
		strbuf_addf(&h, " Culprit: %s (\"%s\"), author %s.", p->culprit, p->subject ? p->subject : "",
			    p->author ? p->author : "?");
	xml_element(x, "p", h.buf);
	if (r->pts[i].have_bisect) {
		_cleanup_free_ char *bt = xasprintf("The bisect %s:", p->bisect);

		xml_element(x, "p", bt);
		bisect_table(&r->pts[i].b, x);
	}
	shell_quote_argv(&cmd, (const char *const *)argv);
	xml_element(x, "p", "Reproduce on your tree:");
	xml_element(x, "pre", cmd.buf);
	argv_free(argv);
}

void track_report_format_html(const struct track_report *r, struct strbuf *out)
{
	const struct track *t = &r->t;
	_cleanup_free_ char *title = xasprintf("lab track %s: %s, %s", r->id, t->experiment, t->metric);
	struct xml x;

	report_page_begin(&x, out, title, css);
	if (!t->decided)
		xml_element(&x, "p", "Change points: not decided yet.");
	else if (!t->npoints)
		xml_element(&x, "p", "No change point over the tracked commits.");
	for (size_t i = 0; i < t->npoints; i++) {
		_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

		point_line(r, &t->points[i], &line);
		xml_open(&x, "p");
		xml_attr(&x, "class", point_kind_name[point_kind(&t->points[i])]);
		xml_element(&x, "strong", line.buf);
		xml_close(&x);
	}
	{
		_cleanup_free_ char *about = xasprintf("%zu commits of %s tracked, every %u of the first-parent line; "
						       "kernel %s.",
						       t->ncommits, t->branch, t->step, t->kernel);

		xml_element(&x, "p", about);
	}
	for (size_t i = 0; i < r->notes.n; i++) {
		_cleanup_free_ char *n = xasprintf("Not shown: %s", r->notes.v[i]);

		xml_element(&x, "p", n);
	}
	xml_element(&x, "h2", "The series");
	xml_open(&x, "figure");
	{
		_cleanup_free_ char *cap = xasprintf("%s: each dot a boot's mean, each bar a tracked commit's mean; "
						     "a dashed line at each change point with its change and culprit "
						     "(orange: news; blue: known or accepted).",
						     t->metric);

		xml_element(&x, "figcaption", cap);
	}
	series_svg(r, &x);
	xml_close(&x); /* figure */
	commits_table(r, &x);
	for (size_t i = 0; i < t->npoints; i++)
		point_html(r, i, &x);
	if (r->have_fp) {
		xml_element(&x, "h2", "The machine");
		xml_open(&x, "div");
		xml_attr(&x, "class", "scroll");
		xml_open(&x, "table");
		for (size_t i = 0; i < ELEMENTSOF(machine_fields); i++) {
			const char *cells[2] = { fp_field_label(machine_fields[i]), r->fp.f[machine_fields[i]] };

			if (cells[1])
				row(&x, "td", cells, 2, NULL);
		}
		xml_close(&x);
		xml_close(&x);
	}
	{
		_cleanup_free_ char *b = xasprintf("lab bundle %s", r->id);

		xml_element(&x, "p", "The runs, every comparison's, in one bundle:");
		xml_element(&x, "pre", b);
	}
	xml_close(&x); /* body */
	xml_close(&x); /* html */
	strbuf_addch(out, '\n');
}
