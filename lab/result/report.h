/* SPDX-License-Identifier: MIT */
/*
 * Reports of a comparison: pure formatters, golden-tested.
 *  text  the kernel test robot's layout: base mean ±%stddev, %change,
 *        patched mean ±%stddev, metric; significant rows first, then (with
 *        all) the rest; each row says how it was decided (Welch p, the
 *        robot's range rule) and flags noisy rows; then the verdicts.
 *  md    the same tables in Markdown.
 *  json  everything, for other tools.
 *  html  one self-contained file with the verdicts and inline SVG charts.
 */
#pragma once

#include <stdbool.h>
#include "../util/strbuf.h"
#include "calibrate.h"
#include "compare.h"

struct report_opts {
	bool all; /* every row, not only the significant ones */
	/* the experiment's calibration on this host (NULL: none): a monitor
	 * over its overhead budget is said next to the group it disturbs */
	const struct calibration *calib;
};

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
void report_format_text(const struct comparison *c, const struct report_opts *o, struct strbuf *out);
void report_format_md(const struct comparison *c, const struct report_opts *o, struct strbuf *out);
void report_format_json(const struct comparison *c, struct strbuf *out);
/* The "Mixed environments" section (report-env.c): nothing when every run
 * of a group was measured alike (json: no member then). */
void report_env_text(const struct comparison *c, struct strbuf *out);
void report_env_md(const struct comparison *c, struct strbuf *out);
struct json;
struct xml;
void report_env_json(const struct comparison *c, struct json *j);
void report_env_html(const struct comparison *c, struct xml *x);
/* One self-contained HTML file: verdicts, tables, inline SVG charts (lab/result/html.c). */
void report_format_html(const struct comparison *c, const struct report_opts *o, struct strbuf *out);
