/* SPDX-License-Identifier: MIT */
/*
 * Change points in a series of commits, each measured by a few boots
 * (the boot is the unit: one value a boot, the mean of its runs).
 *
 * Binary segmentation with a likelihood-ratio statistic for one shift of
 * the mean under normal noise of one variance: in a segment of commits,
 * the split between two commits whose pooled two-sample |t| is largest.
 * Its significance is a permutation test of that maximum (the boots of
 * the segment shuffled, the commits' boot counts kept), so the p-value
 * holds for the search over every split, not for one chosen in advance:
 * on a series with no change the chance of a false alarm is alpha. A
 * significant split cuts the segment in two, and each half is searched
 * again, as E-divisive means (Matteson and James; Hunter, Apache Otava)
 * does with its own statistic. A segment is tested at alpha times its
 * share of the series' commits, so the halves of a split spend together
 * no more than it did: a series with one change claims a second one with
 * a chance of at most about alpha, not twice that.
 *
 * The generator is seeded: the same series gives the same answer.
 * Pure; nothing here prints.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct cp_opts {
	double alpha;   /* each split's level (0.05) */
	unsigned perms; /* permutations a split (999) */
	uint64_t seed;
};

struct cp_point {
	size_t at;                /* the first commit after the change: it lies between at - 1 and at */
	double p;                 /* the permutation p-value of the split in its segment (tested at
				   alpha times the segment's share of the commits) */
	double t;                 /* its |t| */
	double before, after;     /* the mean boot from the change before (or the first commit) to this
				   one, and from this one to the next (or the last commit) */
	size_t nbefore, nafter;   /* their boots */
	double change_pct;        /* 100 (after - before) / |before|; NaN when before is 0 */
	double lo_pct, hi_pct;    /* Welch's 95% interval of the change, in % of before; NaN without one */
};

#define CP_OPTS_DEFAULT { .alpha = 0.05, .perms = 999, .seed = 0x6c61622d6370ULL }

/*
 * value[i]: boot i's figure; commit[i]: the index of its commit, from 0
 * to ncommits - 1, not decreasing (every commit has a boot). The change
 * points found, in commit order, in *out (free() it), their count in
 * *nout. -EINVAL: a value not finite, a commit index out of order or out
 * of range, a commit without a boot, alpha not in (0, 1), fewer than 19
 * permutations (alpha 0.05 could not be reached).
 */
int cp_detect(const double *value, const size_t *commit, size_t n, size_t ncommits, const struct cp_opts *o,
	      struct cp_point **out, size_t *nout);
