/* SPDX-License-Identifier: MIT */
/*
 * A plan: the runs experiments expand to, in execution order. For each
 * experiment and workload entry, the parameter matrix (a list value is a
 * dimension, the kernel test robot's job-file rule) times `repeat`, with
 * the compared kernels interleaved inside each repetition and their order
 * reversed in every other boot (base, patched, patched, base ...) so drift
 * hits every variant alike. The repetitions are spread over the boots
 * (`decide: min-boots`, 2 by default; with `repeat: auto` the budget's
 * max-boots of runs-per-boot each, which a sequential run stops early).
 * Hosts of an experiment take whole repetitions in turn, so a
 * base/patched pair always shares a machine. For `lab calibrate
 * --monitors` (spec_experiment.monitors_off) each run is followed by a
 * copy of it with each of its monitors off in turn: with, without A,
 * without B, with ... in the same boot.
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
	char *monitor_off; /* lab calibrate --monitors: the monitor this copy of the run before it runs without */
	unsigned repeat; /* 1-based */
	unsigned boot;   /* 1-based: the boot of its variant it belongs to (with `boot: per-run`, each repetition's own) */
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

/* Repetitions per variant and job cell the plan holds: `repeat`, or with
 * `repeat: auto` the budget's max-boots x runs-per-boot (per host). */
unsigned plan_repeats(const struct spec_experiment *e);

/* Pure formatters. */
void plan_format_text(const struct plan *p, struct strbuf *out);
void plan_format_json(const struct plan *p, struct strbuf *out);

/* The comparison group a run belongs to: its workload, the parameters it
 * sets away from their defaults, and the monitor a calibration turned off. */
char *plan_run_group(const struct plan_run *pr);
