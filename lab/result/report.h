/* SPDX-License-Identifier: MIT */
/*
 * Reports of a comparison: pure formatters, golden-tested.
 *  text  the kernel test robot's layout: base mean ±%stddev, %change,
 *        patched mean ±%stddev, metric; significant rows first, then (with
 *        all) the rest; each row says how it was decided (Welch p, the
 *        robot's range rule) and flags noisy rows; then the verdicts.
 *  md    the same tables in Markdown.
 *  json  everything, for other tools.
 *  html  one self-contained file: the headline, a forest plot per compared
 *        variant, the verdicts, per group the tables and the runs' values
 *        by boot, the environment and how to reproduce (html.c, forest.c).
 */
#pragma once

#include <stdbool.h>
#include "../util/strbuf.h"
#include "calibrate.h"
#include "compare.h"

struct json;
struct xml;
/* A part another model writes into every format, right after the headline
 * (lab reproduce's verdict: result/reproduction.h), so that the report
 * depends on no such model: its title (the Markdown heading and the JSON
 * key) and a writer per format; data is theirs. */
struct report_part {
	const char *title, *key;
	const void *data;
	void (*text)(const void *data, struct strbuf *out);
	void (*json)(const void *data, struct json *j);
	void (*html)(const void *data, struct xml *x);
};

struct report_opts {
	bool all; /* every row, not only the significant ones */
	/* the experiment's calibration on this host (NULL: none): a monitor
	 * over its overhead budget is said next to the group it disturbs */
	const struct calibration *calib;
	/* after the headline (NULL: none): the run reproduces another (lab
	 * reproduce), the verdict with original and reproduction side by side */
	const struct report_part *part;
};

/*
 * The pieces every format shares (report-parts.c), below the formatters
 * that use them.
 */
/* A mean the way the robot prints it: integers when large, 4 significant digits otherwise. */
void report_fmt_value(struct strbuf *out, double v);
/* Whether o->calib's overhead i disturbs group: a monitor over its budget,
 * then out gets "perf-profile moves hackbench.throughput by -7.2% [-10.3,
 * -4.1]% here (budget 3%, ...): these numbers are disturbed", unescaped:
 * each format escapes it its way. */
bool report_disturbed(const struct report_opts *o, const char *group, size_t i, struct strbuf *out);

/* What a mechanism check saw: "3 runs: 0 .. 12; baseline 3 runs: 0 .. 0", or why it has nothing. */
void report_observation_evidence(const struct cmp_observation *x, struct strbuf *out);
/* The check's own words ("says"), if any, then its evidence: "pcp high moves; 3 runs: 120 .. 122".
 * Both are the stored run's, unescaped: each format escapes them its way. */
void report_observation_seen(const struct cmp_observation *x, struct strbuf *out);

/* What the figures came from and can show, where that is not the usual: a
 * time-based figure when the guests' clock counted instructions (timing:
 * icount), instruction counts (insn.*). Returns how many notes it set. */
#define REPORT_MAX_NOTES 2
size_t report_notes(const struct result_set *rs, const char *notes[REPORT_MAX_NOTES]);
/* Words of s in lines of at most width columns after indent (a longer word alone). */
void report_wrap(struct strbuf *out, const char *s, size_t width, const char *indent);
/* How the rows were decided, in one paragraph (the reports' legend). */
char *report_legend(const struct comparison *c);
/* A verdict's statistic, level and look, boots x runs and variance parts a side. */
void report_verdict_basis(const struct cmp_verdict *v, struct strbuf *out);
/* The headline: a line per compared variant saying what was decided
 * (headline.c): each declared expectation's effect, interval and verdict,
 * the mechanism checks that hold, failed runs. */
void report_headline(const struct comparison *c, struct strv *ret);
/* An effect as the headline says it: "+50.3% [+48.1%, +52.6%]", in points
 * "-29.5 points [-30.1 points, -28.9 points]"; without an interval just the
 * change; "no change measured" without one. */
void report_change_text(const struct effect *e, struct strbuf *sb);
void report_format_text(const struct comparison *c, const struct report_opts *o, struct strbuf *out);
void report_format_md(const struct comparison *c, const struct report_opts *o, struct strbuf *out);
void report_format_json(const struct comparison *c, const struct report_opts *o, struct strbuf *out);
/* The "Mixed environments" section (report-env.c): nothing when every run
 * of a group was measured alike (json: no member then). */
void report_env_text(const struct comparison *c, struct strbuf *out);
void report_env_md(const struct comparison *c, struct strbuf *out);
struct json;
struct xml;
void report_env_json(const struct comparison *c, struct json *j);
void report_env_html(const struct comparison *c, struct xml *x);
/* "Environment": each distinct fingerprint of the runs, with the kernels and
 * runs it covers (JSON: "environments"; Markdown: a table, a column each). */
void report_environments_json(const struct comparison *c, struct json *j);
void report_environments_md(const struct comparison *c, struct strbuf *out);
/* The kernels (into vars) and the number of runs that used fingerprint f. */
size_t report_env_users(const struct result_set *rs, size_t f, struct strv *vars);
/* Whether some environment of the runs knows fingerprint field fi. */
bool report_env_field_known(const struct result_set *rs, int fi);
/* One self-contained HTML file: verdicts, tables, inline SVG charts (lab/result/html.c). */
void report_format_html(const struct comparison *c, const struct report_opts *o, struct strbuf *out);

/* How a metric's values read, from its name (the catalogue names no
 * units): a time when its last part ends in _ns, _us, _ms, _s, _sec or
 * _seconds (not a rate: _per_sec) or its second part is or begins a
 * time (hackbench.time, kbuild.time.total, kbuild.buildtime_per_iteration);
 * a percentage (metric_is_percentage); else a plain number. */
enum metric_kind { METRIC_PLAIN, METRIC_TIME, METRIC_PERCENT };
struct metric_unit {
	enum metric_kind kind;
	double to_seconds; /* METRIC_TIME: a value times this is in seconds */
	const char *name;  /* the unit as reported ("ms", "s", "%"), NULL: none */
};
void report_metric_unit(const char *metric, struct metric_unit *ret);
/* A value for a person, in its unit and `digits` significant digits (0: 3):
 * "9.5 ms", "1.2 s", "15.2k", "30.5%"; never e-notation. */
char *report_value_text(const struct metric_unit *u, double v, unsigned digits);

/* The forest plot of a compared variant (forest.c): a row per declared
 * expectation of that variant and per flagged exploratory change (the
 * largest ones), each the decision engine's change and interval against
 * the baseline, the declared margin or the smallest detectable change as
 * a band around 0, coloured and named by verdict. */
#define FOREST_TOP_FLAGGED 10
struct forest_row {
	const char *group, *metric;  /* borrowed */
	const struct cmp_delta *d;   /* the change; NULL: not measured */
	const struct cmp_verdict *v; /* the expectation's verdict; NULL: a flagged exploratory change */
	double band;                 /* half the band around 0, in the change's unit: the declared
				      * margin, else the smallest detectable change; NaN: none */
};
/* Variant k's rows: its verdicts, then its `top` flagged exploratory
 * changes with the largest |change|; sorted by verdict (regressed, changed,
 * improved, smaller, unchanged, inconclusive, then the flagged ones), then
 * by |change|, largest first (none last). Returns how many; *ret: free it. */
size_t report_forest_rows(const struct comparison *c, size_t k, size_t top, struct forest_row **ret);
/* What a row is: verdict_name(), "smaller than declared", or "flagged". */
const char *forest_row_word(const struct forest_row *r);
/* An HTML page's head (a viewport for phones, its title and inline css)
 * and its body opened with the title as <h1> (svg.c); close body and html. */
void report_page_begin(struct xml *x, struct strbuf *out, const char *title, const char *css);
/* Inline SVG (svg.c), below the HTML report and the forest plot. */
/* An inline picture's <svg>: its size, viewBox, font and white background (close it). */
void report_svg_open(struct xml *x, double width, double height);
/* An SVG line from (x1, y1) to (x2, y2); width and dash NULL: the default. */
void report_svg_line(struct xml *x, double x1, double y1, double x2, double y2, const char *stroke,
		     const char *width, const char *dash);
/* An SVG text at (tx, ty), `size` px; anchor NULL: it starts there. */
void report_svg_text(struct xml *x, double tx, double ty, const char *anchor, const char *size, const char *text);
/* 1, 2 or 5 times a power of ten, at least x: an axis's step. */
double report_nice_step(double x);
/* Variant k's forest plot as a <figure>, its caption first; nothing without rows. */
void report_forest_html(const struct comparison *c, size_t k, struct xml *x);
/* The same rows as text, for a terminal or a Markdown code block: a
 * line per row, '.' the band, '|' 0, [--o--] the change and its interval;
 * md: for a Markdown code block. Stored names escaped. */
void report_forest_text(const struct comparison *c, size_t k, bool md, struct strbuf *out);
