/* SPDX-License-Identifier: MIT */
/*
 * Mixed environments in a result set: within each comparison group (what
 * the variants are compared on), every two distinct fingerprints its runs
 * carry, with their differences (fingerprint.h's rule: what matters makes
 * the comparison unfair, the rest is noted). lab report and lab judge
 * refuse a set where something matters unless --allow-mixed; the reports
 * list every pair. Pure.
 */
#pragma once

#include "fingerprint.h"
#include "result.h"

struct env_pair {
	int fa, fb;              /* indices in the set's fps, fa < fb */
	const char *va, *vb;     /* a variant with runs of each (borrowed) */
	const char *group;       /* the first group where they meet (borrowed) */
	bool same_variant;       /* one variant has runs of both in one group */
	struct fp_diff d[FP_NFIELDS];
	size_t n, nmatters;
};

/* The pairs (each once, in the order met), into *ret (free it); how many. */
size_t env_pairs_build(const struct result_set *rs, struct env_pair **ret);
/* How many pairs differ in something that matters. */
size_t env_pairs_matter(const struct env_pair *p, size_t n);
/* One line: "base vs tg-ratelimit in 'g': cpu model 'A' / 'B'; qemu version '8.2' / 'unknown' (noted)". */
void env_pair_describe(const struct env_pair *p, struct strbuf *out);
