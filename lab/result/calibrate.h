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

struct calibration {
	double alpha, power;
	unsigned boots_per_side, runs_per_boot; /* the budget mde_pct is for */
	struct calib_metric *m;
	size_t n, alloc;
};

/* Every metric of every group of rs's first variant. boots_per_side and
 * runs_per_boot: the budget to compute mde_pct for (0: half the boots seen,
 * the runs a boot seen). */
struct calibration *calibrate_build(const struct result_set *rs, const struct decide_params *dp,
				    unsigned boots_per_side, unsigned runs_per_boot);
void calibration_free(struct calibration *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct calibration *, calibration_free)
#define _cleanup_calibration_ _cleanup_(calibration_freep)
/* The metric of group (NULL: any group) or NULL. */
const struct calib_metric *calibration_find(const struct calibration *c, const char *group, const char *metric);

struct json;
struct strbuf;
/* "metrics": [{metric, group, boots, runs, cv_between_boots_pct, cv_within_boot_pct,
 * false_positive_rate, mde_pct}, ...] as a member of the open object. */
void calibration_json_metrics(struct json *j, const struct calibration *c);
/* A table a metric a line. */
void calibration_format_text(const struct calibration *c, struct strbuf *out);
