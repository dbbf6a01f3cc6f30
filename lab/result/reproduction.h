/* SPDX-License-Identifier: MIT */
/*
 * The verdict of a reproduction: a second stored run of the same
 * experiment (same kernels, same plan, often another machine) judged
 * against the original, item by item.
 *
 *  expectations  each declared expectation of the original (its
 *                comparison's verdicts) looked up by group, metric and
 *                kernel in the reproduction's:
 *                  reproduced      both decided (verdict_decided), the same
 *                                  verdict, and the effects' intervals
 *                                  [lo, hi] overlap;
 *                  not reproduced  both decided and the verdicts differ, or
 *                                  the same verdict with intervals apart;
 *                  inconclusive    either side undecided, the expectation
 *                                  not in the reproduction, or a decided
 *                                  effect without an interval.
 *  checks        each mechanism check of the original (observe:) matched by
 *                metric, relation, value, margin, kernel and group: the
 *                same state (holds and holds, FAILS and FAILS) is
 *                reproduced, holds against FAILS is not; inconclusive or
 *                missing on either side, or not checked in the
 *                reproduction, is inconclusive.
 *  moved         the A/A part: each kernel against itself, the original's
 *                runs against the reproduction's, through lab compare's
 *                cross-run model (compare-inputs.h: inputs "original" and
 *                "reproduction", measured alike or not comparable). A level
 *                moved when its change is flagged the way compare.c flags
 *                an exploratory row (compare.h cmp_delta.flagged: q <= the
 *                experiment's q over that kernel's rows, Benjamini-Hochberg,
 *                at least CMP_MIN_RUNS runs a side), sorted by |change|,
 *                largest first. A kernel only the reproduction has is no A/A
 *                and not looked at. Where the two runs were not measured
 *                alike the kernel's group is listed as not comparable with
 *                why ("cpu model differs"), and the environments'
 *                differences are listed once each.
 *  verdict       reproduced when every expectation and check is,
 *                not reproduced when any one is not, else inconclusive;
 *                inconclusive (with why) when there is nothing to judge.
 *                The A/A part informs, it does not vote.
 *
 * The reproduction's expectations that the original does not declare are
 * not judged. Pure: the two result sets and their comparisons in (borrowed:
 * they must outlive the model), a model out, golden-tested text, JSON and
 * an HTML section for lab report.
 */
#pragma once

#include "../util/strbuf.h"
#include "compare.h"
#include "compare-inputs.h"

enum repro_state { REPRO_REPRODUCED, REPRO_NOT_REPRODUCED, REPRO_INCONCLUSIVE };
#define REPRO_STATE_COUNT (REPRO_INCONCLUSIVE + 1)
/* "reproduced", "not reproduced", "inconclusive" */
const char *repro_state_name(enum repro_state s);

struct repro_expectation {
	const struct cmp_verdict *orig;  /* the original's (borrowed) */
	const struct cmp_verdict *repro; /* the reproduction's; NULL: not in it */
	enum repro_state state;
	char *why;
};

struct repro_check {
	const struct cmp_observation *orig;  /* borrowed */
	const struct cmp_observation *repro; /* NULL: not checked in the reproduction */
	enum repro_state state;
	char *why;
};

/* A kernel's level that moved between the runs (borrowed from the A/A model). */
struct repro_moved {
	const char *group, *metric, *variant;
	const struct sample_stats *orig, *repro; /* each run's figures */
	const struct cmp_delta *d;               /* the reproduction against the original */
};

/* A kernel's group the A/A part could not compare, and why ("cpu model differs"). */
struct repro_uncomparable {
	const char *group, *variant, *why; /* borrowed from the A/A model */
};

struct reproduction {
	const struct result_set *orig_rs, *repro_rs; /* borrowed: ->id names each run */
	enum repro_state verdict;
	char *why; /* why the verdict is inconclusive when there is nothing to judge; else NULL */
	size_t counts[REPRO_STATE_COUNT];
	struct repro_expectation *expectations;
	size_t nexpectations;
	struct repro_check *checks;
	size_t nchecks;
	struct repro_moved *moved; /* every one: the text shows REPRO_TEXT_MOVED */
	size_t nmoved;
	struct repro_uncomparable *uncomparable;
	size_t nuncomparable;
	struct fp_diff *env; /* the environments' differences, each (field, original, reproduction) once */
	size_t nenv;
	struct xcmp_input in[2];
	struct xcmp *aa; /* the A/A model (owned) */
};

/* The text lists at most this many moved levels; the JSON lists them all. */
#define REPRO_TEXT_MOVED 20

/* co: compare_build(orig), cr: compare_build(repro). Never fails. */
struct reproduction *reproduction_build(const struct result_set *orig, const struct comparison *co,
					const struct result_set *repro, const struct comparison *cr);
void reproduction_free(struct reproduction *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct reproduction *, reproduction_free)
#define _cleanup_reproduction_ _cleanup_(reproduction_freep)

/* A headline line ("reproduction of ID by ID: WORD (N reproduced, ...)"),
 * the expectations side by side, the mechanism checks, the levels that
 * moved; stored names escaped. */
void reproduction_format_text(const struct reproduction *r, struct strbuf *out);
/* Keys: original, reproduction, verdict, why, counts, expectations[],
 * checks[], moved[], not_comparable[], environment[]. */
void reproduction_format_json(const struct reproduction *r, struct strbuf *out);
struct json;
/* The same object as a value of a JSON writer in use (lab report's "reproduction"). */
void reproduction_json(const struct reproduction *r, struct json *j);
struct xml;
/* A <section class="reproduction"> for the HTML report: the headline in
 * words, then a table each (its caption first) of the expectations, the
 * checks and the levels that moved, cells coloured by state. */
void reproduction_format_html_section(const struct reproduction *r, struct xml *x);

struct report_part;
/* r as a part of lab report (report.h), after the headline of every format. */
void reproduction_report_part(const struct reproduction *r, struct report_part *ret);
