/* SPDX-License-Identifier: MIT */
/*
 * Comparing variants: per group (what ran) and metric, the figures of each
 * variant's runs, each variant against the baseline (the first one) through
 * the decision engine (decide.h: boots as units, the ratio's interval, a
 * permutation test when nothing varies), the exploratory rows' q-values
 * (Benjamini-Hochberg over every row that is not declared), the robot's
 * range rule; then a verdict per declared expectation at its own alpha.
 * Pure: the result set in, a comparison out.
 */
#pragma once

#include "result.h"
#include "decide.h"
#include "mixed.h"
#include "stats.h"

struct cmp_delta {
	bool have;       /* a value on both sides */
	struct effect e; /* the decision engine's figures: change (% of the baseline, or points), its
			  * interval at the experiment's alpha, p, the smallest detectable change */
	double q;        /* Benjamini-Hochberg over the exploratory rows; NaN: declared or not tested */
	bool separate;   /* the robot's rule: ranges do not overlap */
	bool flagged;    /* an exploratory change: q <= the experiment's q, 3 runs a side */
};

struct cmp_row {
	const char *metric;     /* borrowed from the result set */
	struct sample_stats *s; /* per variant */
	struct cmp_delta *d;    /* per variant; [0] (the baseline) unused */
	bool noisy;             /* some variant's %stddev >= 20 */
	bool flagged;           /* some variant's change is flagged */
	bool sparse;            /* a profile symbol or lock: a run that did not report it counts 0 */
	void *raw;              /* the values and boots per variant (compare.c's) */
};

struct cmp_group {
	const char *name; /* borrowed */
	size_t job;
	size_t *ok, *failed; /* runs per variant */
	struct cmp_row *rows; /* flagged first (largest change first), then by name */
	size_t nrows;
};

struct cmp_verdict {
	const char *group, *metric, *variant; /* borrowed */
	const struct result_expect *expect;
	enum verdict v;
	const struct cmp_delta *d; /* NULL when the metric is missing */
	size_t na, nb;             /* runs a side */
	double alpha;              /* the level it was judged at: a sequential design's look's */
	unsigned look, looks;      /* 1 of 1 in a fixed design */
	enum stat_method method;
	char *why;
};

/* A mechanism check of one kernel in one group: it holds, it fails, it is
 * inconclusive, or the metric is missing. An `is:` check is an invariant of
 * every run (one run against it fails it; no run is inconclusive: holds or
 * fails). A vs-baseline check is decided like an expectation, boots as the
 * unit, at the alpha of the look the data is at (decide_check): holds,
 * fails (decided the other way, or equivalent within its margin), or
 * inconclusive; the robot's rule (the runs' ranges apart) is a column
 * beside it, never the verdict. */
enum obs_state { OBS_HOLDS, OBS_FAILS, OBS_INCONCLUSIVE, OBS_MISSING };

struct cmp_observation {
	const struct result_observe *o; /* borrowed */
	const char *group, *variant;     /* borrowed; group NULL: no group has the metric */
	enum obs_state state;
	struct sample_stats s, base;     /* the kernel's runs; the baseline's (vs-baseline) */
	/* vs-baseline, when both sides have runs: */
	bool decided;                    /* e below is the decision's (false: an is: check, or missing) */
	struct effect e;                 /* the kernel against the baseline, at alpha */
	double alpha, margin;            /* margin in e's unit; 0: none */
	bool apart;                      /* the robot's rule: the runs' ranges do not overlap */
	char *why;                       /* allocated: how it was decided (vs-baseline) */
};

struct comparison {
	const struct result_set *rs;
	double conf; /* 1 - alpha */
	size_t nvariants;
	struct cmp_group *groups;
	size_t ngroups;
	struct cmp_verdict *verdicts;
	size_t nverdicts, valloc;
	struct cmp_observation *obs;
	size_t nobs, oalloc;
	struct env_pair *env; /* environments that differ within a group (mixed.h) */
	size_t nenv;
};

/* A row needs this many runs a side to be listed as a change. */
#define CMP_MIN_RUNS 3
/* perf-profile rows: the smallest change in points listed among the changes */
#define CMP_PROFILE_MIN_POINTS 0.1

/* At the result set's decide parameters. Never fails; missing data shows as inconclusive. */
struct comparison *compare_build(const struct result_set *rs);
void comparison_free(struct comparison *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct comparison *, comparison_free)
#define _cleanup_comparison_ _cleanup_(comparison_freep)

/* A row's values of variant v and the boots they came from (borrowed from the row). */
void cmp_row_side(const struct cmp_row *r, size_t v, struct side *ret);
/* The decision engine's seed for a metric: the same figures every time. */
uint64_t cmp_seed(const char *metric);
const char *obs_state_name(enum obs_state s); /* "holds", "FAILS", "inconclusive", "missing" */
/* Whether an expectation names metric in group g. */
bool cmp_is_expected(const struct comparison *c, const struct cmp_group *g, const char *metric);
/* Metrics that are themselves percentages: names ending in % or _pct, and
 * perf-profile shares (but not perf-profile.samples). */
bool metric_is_percentage(const char *name);
