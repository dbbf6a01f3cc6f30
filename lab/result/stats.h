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
#include <stdint.h>

struct sample_stats {
	size_t n;
	double mean, stddev; /* sample (n - 1) standard deviation; 0 when n < 2 */
	double rsd_pct;      /* 100 * stddev / |mean|; 0 when mean is 0 */
	double min, median, max;
};

/* Sorts a copy of v; n may be 0 (everything zero then). */
void stats_describe(const double *v, size_t n, struct sample_stats *out);

struct welch {
	bool ok;          /* false: fewer than 2 values a side, or a figure not finite (no test) */
	double diff;      /* mean(b) - mean(a) */
	double se, df, t; /* standard error of diff, Welch-Satterthwaite df, t statistic */
	double p;         /* two-sided p-value */
	double lo, hi;    /* confidence interval of diff at `conf` */
	double mde;       /* smallest |diff| detectable at level 1-conf with 80% power */
};

/* b against a at confidence conf (0.95), scale-free (any finite values).
 * Zero variance on both sides (se 0) with different means gives p 0 and a
 * point interval. Not ok: fewer than 2 values a side, or a figure that is
 * not finite (a difference past the largest double); the figures are NaN. */
void stats_welch(const struct sample_stats *a, const struct sample_stats *b, double conf, struct welch *out);

/* The robot's rule: the [min, max] ranges do not overlap. */
bool stats_ranges_separate(const struct sample_stats *a, const struct sample_stats *b);

/* Half the width of the confidence interval of s's mean at conf (Student's
 * t with n - 1 degrees of freedom); 0 when n < 2. */
double stats_mean_halfwidth(const struct sample_stats *s, double conf);

/* A seeded generator (splitmix64): simulations and resampling repeat exactly. */
uint64_t stats_rand(uint64_t *state);
/* Uniform in [0, 1). */
double stats_uniform(uint64_t *state);
/* Standard normal (Box-Muller). */
double stats_normal(uint64_t *state);

/* Two-sided permutation test of mean(b) - mean(a): exact when the
 * arrangements number at most 50,000, else 20,000 sampled ones with the
 * observed counted (p = (k + 1) / (N + 1)). Never 0; 1 when a side is empty. */
double stats_permutation_p(const double *a, size_t na, const double *b, size_t nb, uint64_t seed);

/* Fieller's interval of mb / ma for two independent means with squared
 * standard errors va, vb and the quantile tq. false: the interval is
 * unbounded (ma is not clearly away from 0); *lo, *hi are then NaN. */
bool stats_fieller(double ma, double va, double mb, double vb, double tq, double *lo, double *hi);

/* Mann-Whitney U of b against a and the Hodges-Lehmann shift (median of
 * the pairwise differences b - a) with its interval from the order
 * statistics, each selected without making the na x nb differences
 * (O((na + nb) log) time, O(na + nb) memory). p: exact when a side has at
 * most 8 values, there are no ties and na nb <= 10,000, else the normal
 * approximation with tie and continuity correction (SciPy 1.10's
 * mannwhitneyu, method "auto", but for the pair limit). */
struct rank_test {
	bool ok;  /* a value on each side */
	double u; /* U of b */
	double p;
	double shift, lo, hi; /* the interval: NaN when the sides are too small for conf */
};
void stats_mann_whitney(const double *a, size_t na, const double *b, size_t nb, double conf, struct rank_test *out);

/* Percentile bootstrap of median(b) / median(a), each side resampled on
 * its own, reps times from seed; p is twice the smaller tail beyond 1 (at
 * least 1 / reps). false: a median of a is 0 in some resample. */
struct boot_ratio {
	double ratio, lo, hi, p;
};
bool stats_bootstrap_ratio(const double *a, size_t na, const double *b, size_t nb, double conf, unsigned reps,
			   uint64_t seed, struct boot_ratio *out);

/* Benjamini-Hochberg adjusted p-values (q): NaN in p stays NaN and is not counted. */
void stats_bh(const double *p, size_t n, double *q);
