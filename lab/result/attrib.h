/* SPDX-License-Identifier: MIT */
/*
 * Attribution over a series: which patch moved a number. A sweep over a
 * series' prefixes orders its variants (the series' `from`, then NAME@k1 <
 * NAME@k2 ...: result.h's result_series); each consecutive step of that
 * chain is judged per group and metric by the decision engine (decide.h:
 * boots as units, the ratio's interval), the later prefix against the
 * earlier. The family is every (group, metric, step) test of the chain:
 * Benjamini-Hochberg's q over all of them, and a step "changes" when q <=
 * the experiment's q with 3 runs a side (for a declared metric with a
 * smallest change that matters, also when its interval excludes zero; it
 * then says whether the change clears that mde). A step is "unchanged"
 * only as an equivalence claim: a declared mde and the step's 1 - 2 alpha
 * interval inside ±mde; anything else is "undecided". A sequential design
 * (repeat: auto) looks at the chain more than once: alpha and q are split
 * over its looks as the declared verdicts' alpha is. Pure; nothing here
 * prints. The formatters (attrib-report.c) give each report its section.
 */
#pragma once

#include "../util/strbuf.h"
#include "compare.h"

enum step_state { STEP_CHANGES, STEP_UNCHANGED, STEP_UNDECIDED };
#define STEP_STATE_COUNT (STEP_UNDECIDED + 1)
const char *step_state_name(enum step_state s); /* "changes", "unchanged", "undecided" */

/* A change's size against a declared mde: beyond it (the interval past
 * ±mde), within it (equivalence), or neither; NONE without an mde. */
enum step_mde { STEP_MDE_NONE, STEP_MDE_CLEARS, STEP_MDE_WITHIN, STEP_MDE_UNSETTLED };

struct attrib_step {
	bool have;      /* values on both sides */
	struct effect e; /* chain[i + 1] against chain[i] */
	double q;       /* Benjamini-Hochberg over the chain's tests; NaN: not tested */
	enum step_state state;
	enum step_mde mde;
};

struct attrib_row {
	const char *group, *metric; /* borrowed from the comparison */
	bool declared;
	double mde;    /* declared: the smallest change that matters, in the effect's unit; 0: none */
	bool listed;   /* declared, or some step changes */
	struct attrib_step *steps; /* nchain - 1 */
};

struct attribution {
	const struct result_series *series; /* borrowed */
	size_t nchain;      /* chain entries the comparison has (its variants) */
	size_t *chain;      /* per entry: the index in series->chain */
	size_t *variant;    /* per entry: the comparison's variant index */
	struct attrib_row *rows; /* by group, then the comparison's row order */
	size_t nrows;
	size_t tests;       /* the family's size: tested steps */
	double alpha, q;    /* the levels used (a sequential design's per look) */
};

/* The attribution of one series of c's result set (empty when fewer than two of its variants are compared). */
struct attribution *attrib_build(const struct comparison *c, const struct result_series *s);
void attribution_free(struct attribution *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct attribution *, attribution_free)
#define _cleanup_attribution_ _cleanup_(attribution_freep)

/* "base->@1", "@3->@5": step i (0-based) of the chain. */
void attrib_step_name(const struct attribution *a, size_t step, struct strbuf *out);
/* The patches step i applies: first..last (first > last: none). */
void attrib_step_patches(const struct attribution *a, size_t step, unsigned *first, unsigned *last);
/* The change-point line of a row, unescaped: "-5.1% [-7.9, -2.3]% at patch 7 (q=0.01; mm: ...), no
 * other step", "no step changes; undecided steps: @3->@5". */
void attrib_summary(const struct attribution *a, const struct attrib_row *r, struct strbuf *out);
/* A declared metric's first undecided step: false when there is none. */
bool attrib_undecided(const struct attribution *a, const struct attrib_row **ret_row, size_t *ret_step);

/* The reports' "Attribution over the series" sections, one a series of c's run: nothing without. */
struct json;
struct xml;
void attrib_format_text(const struct comparison *c, struct strbuf *out);
void attrib_format_md(const struct comparison *c, struct strbuf *out);
void attrib_format_json(const struct comparison *c, struct json *j);
void attrib_format_html(const struct comparison *c, struct xml *x);
