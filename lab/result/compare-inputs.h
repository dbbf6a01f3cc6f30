/* SPDX-License-Identifier: MIT */
/*
 * Comparing stored runs from several inputs (lab compare: run folders,
 * bundles, e.g. the same kernels on two hosts). Every input's variants
 * become columns labelled INPUT:VARIANT, the first input's first variant
 * the baseline; another input's variant is compared with the first
 * input's same variant (the same kernel elsewhere), else with the baseline.
 * The environments' differences between inputs come first;
 * then per group and metric each column against its base through the
 * decision engine (compare.h), but only where the two sides' runs were
 * measured alike (fingerprint.h: nothing that matters differs). A cell
 * that is not comparable says why; with allow_mixed it is decided anyway
 * and says that too. Pure: result sets in, a model out, golden-tested text
 * and JSON.
 */
#pragma once

#include "compare.h"
#include "stats.h"

struct xcmp_input {
	const char *label;           /* "hostA" or the run id */
	const struct result_set *rs; /* borrowed */
};

/* The environments of one variant on two inputs (or two variants on one). */
struct xcmp_env {
	char *a, *b; /* INPUT:VARIANT */
	struct fp_diff d[FP_NFIELDS];
	size_t n, nmatters;
};

struct xcmp_cell {
	struct sample_stats s;     /* the column's runs (n 0: none has the metric) */
	const struct cmp_delta *d; /* against the baseline (column > 0), NULL: not decided */
	char *why;                 /* "cpu model differs": not comparable (or, with allow_mixed, mixed) */
};

struct xcmp_metric {
	char *name;
	struct xcmp_cell *cells;   /* per column; [0] the baseline */
};

struct xcmp_group {
	char *name;
	struct xcmp_metric *metrics;
	size_t nmetrics;
};

struct xcmp {
	const struct xcmp_input *in;
	size_t nin;
	bool allow_mixed;
	struct strv columns;        /* INPUT:VARIANT, the baseline first */
	size_t *base;               /* per column, the column it is compared with: the first
				     * input's same variant, else the baseline */
	struct result_set **sets;   /* per column > 0: the baseline's and its runs (comparable groups) */
	struct comparison **cmps;   /* per column > 0 */
	struct xcmp_env *env;
	size_t nenv;
	struct xcmp_group *groups;
	size_t ngroups;
};

/* The labels for inputs: each one's host when every input ran on one host
 * of its own, else its run id. ret[i] is allocated. */
void xcmp_labels(const struct result_set *const *sets, size_t n, char **ret);
struct xcmp *xcmp_build(const struct xcmp_input *in, size_t nin, bool allow_mixed);
void xcmp_free(struct xcmp *x);
void xcmp_format_text(const struct xcmp *x, struct strbuf *out);
void xcmp_format_json(const struct xcmp *x, struct strbuf *out);
