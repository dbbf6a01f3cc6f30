/* SPDX-License-Identifier: MIT */
/*
 * Calibration: what one kernel's A/A runs say about this host's noise.
 * The runs of a single variant over several boots are split into two
 * halves of boots in every balanced way (at most CALIB_MAX_SPLITS), and
 * each split is judged as if the halves were two kernels: the share of
 * splits with p < alpha is the false-positive rate of lab's own test on
 * this host (alpha when it is calibrated), the variance parts are each
 * metric's between-boot and within-boot CV, and from them the smallest
 * change a budget can decide. Pure: a result set in, figures out.
 */
#pragma once

#include "result.h"

#define CALIB_MAX_SPLITS 500

struct calib_metric {
	char *group, *metric;
	size_t boots, runs;
	double mean;
	double cv_between, cv_within; /* %, NaN: not estimable */
	double false_positive_rate;   /* NaN: fewer than 4 boots */
	unsigned splits;
	double mde_pct;               /* at the budget: boots a side, runs a boot */
};

/*
 * What a monitor costs a workload's figure (lab calibrate --monitors): the
 * runs with every monitor against the runs of the same boots with this one
 * off, judged by the decision engine (boots the unit), so an overhead that
 * cannot be told from 0 says so.
 */
struct calib_overhead {
	char *group;   /* the workload group, as its runs with every monitor are named */
	char *monitor; /* the one off */
	char *metric;
	size_t boots, runs_without, runs_with;
	double mean_without, mean_with;
	double change, lo, hi; /* %: with against without, and its interval at 1 - alpha; NaN: none */
	double p;              /* NaN: untested */
	double budget_pct;     /* the monitor's overhead-budget; NaN: unknown */
};

struct calibration {
	double alpha, power;
	unsigned boots_per_side, runs_per_boot; /* the budget mde_pct is for */
	struct calib_metric *m;
	size_t n, alloc;
	struct calib_overhead *ov;
	size_t nov, ov_alloc;
};

/* Every metric of every group of rs's first variant, but the runs skip[i]
 * marks (NULL: none). boots_per_side and runs_per_boot: the budget to
 * compute mde_pct for (0: half the boots seen, the runs a boot seen). */
struct calibration *calibrate_build(const struct result_set *rs, const bool *skip, const struct decide_params *dp,
				    unsigned boots_per_side, unsigned runs_per_boot);

struct json;
struct strbuf;

/* What lab calibrate --monitors knows of a run of rs: its group with every
 * monitor on, and the monitor it ran without (NULL: none; group NULL: the
 * run is no part of the measure). */
struct calib_run_tag {
	const char *group, *monitor_off;
	size_t job;
};
/* The figure of a run worth an overhead (a workload's, not a monitor's). */
typedef bool (*calib_keep_fn)(void *data, const struct result_run *r, const char *metric);
/* Adds to c an overhead per group, monitor off and metric kept: the runs
 * of rs tagged without it against the runs of the same job and group with
 * every monitor. budget_pct is left NaN for the caller. */
void calibrate_overheads(struct calibration *c, const struct result_set *rs, const struct calib_run_tag *tags,
			 calib_keep_fn keep, void *data, const struct decide_params *dp);
/* Whether the overhead is told from 0 at the calibration's alpha. */
bool calib_overhead_decided(const struct calibration *c, const struct calib_overhead *o);
/* Decided and beyond its budget, either way. */
bool calib_overhead_over_budget(const struct calibration *c, const struct calib_overhead *o);
/* "-7.2% [-10.3, -4.1]%", or why there is none; names are the caller's to escape. */
void calib_overhead_figure(const struct calib_overhead *o, struct strbuf *out);
void calibration_free(struct calibration *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct calibration *, calibration_free)
#define _cleanup_calibration_ _cleanup_(calibration_freep)
/* The metric of group (NULL: any group) or NULL. */
const struct calib_metric *calibration_find(const struct calibration *c, const char *group, const char *metric);

/* "metrics": [{metric, group, boots, runs, cv_between_boots_pct, cv_within_boot_pct,
 * false_positive_rate, mde_pct}, ...] as a member of the open object. */
void calibration_json_metrics(struct json *j, const struct calibration *c);
/* "overheads": [{group, monitor, metric, boots, runs_without, runs_with,
 * mean_without, mean_with, change_pct, lo_pct, hi_pct, p, budget_pct,
 * decided, over_budget}, ...] as a member of the open object; none when
 * there are none. */
void calibration_json_overheads(struct json *j, const struct calibration *c);
/* A table a metric a line, then the overheads a line each. */
void calibration_format_text(const struct calibration *c, struct strbuf *out);
