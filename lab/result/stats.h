/* SPDX-License-Identifier: MIT */
/*
 * Statistics of repeated measurements: descriptive figures per sample,
 * Welch's t-test and the confidence interval of the difference of means
 * (Student's t distribution from GSL), the smallest effect the data could
 * have detected, and the kernel test robot's range-separation rule.
 * Pure functions; nothing here prints.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct sample_stats {
	size_t n;
	double mean, stddev; /* sample (n - 1) standard deviation; 0 when n < 2 */
	double rsd_pct;      /* 100 * stddev / |mean|; 0 when mean is 0 */
	double min, median, max;
};

/* Sorts a copy of v; n may be 0 (everything zero then). */
void stats_describe(const double *v, size_t n, struct sample_stats *out);

struct welch {
	bool ok;          /* false: fewer than 2 values a side, or no variance at all */
	double diff;      /* mean(b) - mean(a) */
	double se, df, t; /* standard error of diff, Welch-Satterthwaite df, t statistic */
	double p;         /* two-sided p-value */
	double lo, hi;    /* confidence interval of diff at `conf` */
	double mde;       /* smallest |diff| detectable at level 1-conf with 80% power */
};

/* b against a at confidence conf (0.95). Zero variance on both sides with
 * different means gives p 0 and a point interval. */
void stats_welch(const struct sample_stats *a, const struct sample_stats *b, double conf, struct welch *out);

/* The robot's rule: the [min, max] ranges do not overlap. */
bool stats_ranges_separate(const struct sample_stats *a, const struct sample_stats *b);

/* Half the width of the confidence interval of s's mean at conf (Student's
 * t with n - 1 degrees of freedom); 0 when n < 2. */
double stats_mean_halfwidth(const struct sample_stats *s, double conf);
