/* SPDX-License-Identifier: MIT */
/*
 * Comparing variants: per group (what ran) and metric, the figures of each
 * variant's runs, each variant against the baseline (the first one): %change
 * (absolute points for metrics that are percentages), Welch's test with the
 * confidence interval of the difference, and the robot's range rule; then a
 * verdict per declared expectation. Pure: the result set in, a comparison out.
 */
#pragma once

#include "result.h"
#include "stats.h"

/* CHANGED: an "unchanged" expectation the data contradicts, whichever way it moved */
enum verdict { VERDICT_IMPROVED, VERDICT_REGRESSED, VERDICT_UNCHANGED, VERDICT_INCONCLUSIVE, VERDICT_CHANGED };
#define VERDICT_COUNT (VERDICT_CHANGED + 1)

struct cmp_delta {
	bool have;       /* both sides have values */
	bool points;     /* change is in absolute points, not % */
	double change;   /* % of the baseline mean, or points */
	double lo, hi;   /* the interval of the difference, same unit as change */
	double mde;      /* smallest detectable change, same unit */
	struct welch w;
	bool separate;    /* the robot's rule: ranges do not overlap */
	bool significant; /* Welch p < 1 - conf */
};

struct cmp_row {
	const char *metric;     /* borrowed from the result set */
	struct sample_stats *s; /* per variant */
	struct cmp_delta *d;    /* per variant; [0] (the baseline) unused */
	bool noisy;             /* some variant's %stddev >= 20 */
	bool significant;       /* some variant differs significantly */
};

struct cmp_group {
	const char *name; /* borrowed */
	size_t job;
	size_t *ok, *failed; /* runs per variant */
	struct cmp_row *rows; /* significant first (largest change first), then by name */
	size_t nrows;
};

struct cmp_verdict {
	const char *group, *metric, *variant; /* borrowed */
	const struct result_expect *expect;
	enum verdict v;
	const struct cmp_delta *d; /* NULL when the metric is missing */
	size_t na, nb;
	char *why;
};

/* A mechanism check of one kernel in one group: it holds, it fails, or the metric is missing. */
enum obs_state { OBS_HOLDS, OBS_FAILS, OBS_MISSING };

struct cmp_observation {
	const struct result_observe *o; /* borrowed */
	const char *group, *variant;     /* borrowed; group NULL: no group has the metric */
	enum obs_state state;
	struct sample_stats s, base;     /* the kernel's runs; the baseline's (vs-baseline) */
};

struct comparison {
	const struct result_set *rs;
	double conf;
	size_t nvariants;
	struct cmp_group *groups;
	size_t ngroups;
	struct cmp_verdict *verdicts;
	size_t nverdicts, valloc;
	struct cmp_observation *obs;
	size_t nobs, oalloc;
};

/* conf: 0.95. Never fails; missing data shows as inconclusive. */
struct comparison *compare_build(const struct result_set *rs, double conf);
void comparison_free(struct comparison *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct comparison *, comparison_free)
#define _cleanup_comparison_ _cleanup_(comparison_freep)

const char *verdict_name(enum verdict v);
const char *obs_state_name(enum obs_state s); /* "holds", "FAILS", "missing" */
/* Whether an expectation names metric in group g. */
bool cmp_is_expected(const struct comparison *c, const struct cmp_group *g, const char *metric);
/* Metrics that are themselves percentages: names ending in % or _pct, and
 * perf-profile shares (but not perf-profile.samples). */
bool metric_is_percentage(const char *name);
