/* SPDX-License-Identifier: MIT */
/*
 * A plan: the runs experiments expand to, in execution order. For each
 * experiment and workload entry, the parameter matrix (a list value is a
 * dimension, the kernel test robot's job-file rule) times `repeat`, with
 * the compared kernels interleaved inside each repetition (base, patched,
 * base, patched ...) so drift hits every variant alike. Hosts of an
 * experiment take whole repetitions in turn, so a base/patched pair always
 * shares a machine.
 */
#pragma once

#include "../spec/spec.h"
#include "../util/strbuf.h"

struct plan_param {
	char *key;
	char *value;
	bool is_default;
};

struct plan_run {
	char *id;
	const char *experiment;
	char *kernel;
	const char *topology;
	const char *image;
	const char *host;
	const char *workload;
	size_t job;
	struct plan_param *params;
	size_t nparams;
	struct strv monitors;
	unsigned repeat; /* 1-based */
};

struct plan {
	struct plan_run *runs;
	size_t n, alloc;
};

/* `only`: experiment names to plan, in that order; NULL or empty: all, in file order. */
int plan_build(const struct spec *s, const struct strv *only, struct plan **ret, struct diags *d);
void plan_free(struct plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct plan *, plan_free)
#define _cleanup_plan_ _cleanup_(plan_freep)

/* Pure formatters. */
void plan_format_text(const struct plan *p, struct strbuf *out);
void plan_format_json(const struct plan *p, struct strbuf *out);
