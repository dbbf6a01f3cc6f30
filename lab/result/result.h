/* SPDX-License-Identifier: MIT */
/*
 * What one `lab run` measured, in memory: the runs (one workload execution
 * on one kernel variant) with their parsed metrics, grouped by what they
 * ran (workload and parameters: the part that is not the kernel), and the
 * experiment's expectations. Read from the store or built by tests; the
 * comparison and the reports take it as input.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "../util/macro.h"
#include "../util/strmap.h"
#include "../util/strv.h"
#include "decide.h"
#include "fingerprint.h"

enum run_status { RUN_PENDING, RUN_OK, RUN_FAILED };

struct result_metric {
	const char *name; /* the result set's one copy of the name (result_intern) */
	double value;
};

struct result_run {
	char *id;      /* plan id: <experiment>.<seq> */
	char *variant; /* kernel variant */
	char *group;   /* "pg-sysbench threads=100%": workload and the non-default params */
	size_t job;    /* workload entry of the experiment */
	unsigned repeat;
	enum run_status status;
	char *release; /* booted `uname -r`, NULL when unknown */
	char *error;   /* why it failed */
	char *boot;        /* boot id: <experiment>.b<N>, NULL in runs stored before boots were recorded */
	unsigned boot_pos; /* 1-based position of the run in its boot, 0 when unknown */
	char *guest;       /* the guest (VM name) or host the run ran on, NULL when unknown */
	char *node;        /* the cluster node (Slurm) whose lab ran it, NULL: this machine */
	int fp;            /* its environment: index in set->fps, -1 when unknown (fingerprint.h) */
	struct result_metric *m;
	size_t nm, alloc;
	struct result_set *set; /* the set it belongs to: its names */
};

struct result_expect {
	size_t job;
	char *metric;
	enum expect_direction dir;
	double effect; /* fraction: the smallest change that matters (mde), or the bound of unchanged */
	bool has_effect;
	int method;    /* enum stat_method, -1: the experiment's */
};

/* A mechanism check (lab.yaml `observe:`), as stored with the run. */
enum observe_rel {
	OBS_EQ, OBS_LT, OBS_LE, OBS_GT, OBS_GE,           /* every run of the kernel against `value` */
	OBS_HIGHER, OBS_LOWER, OBS_DIFFERS, OBS_SAME,     /* the kernel's runs against the baseline's */
};

struct result_observe {
	char *metric;
	enum observe_rel rel;
	double value;
	struct strv kernels; /* empty: every kernel (against the baseline: every other one) */
	char *says;
	double margin; /* vs-baseline: the change within which the kernels count as the same, a
			* fraction (0.05: 5%, or 5 points on a percentage); 0: none declared */
};

/* A patch series swept over its prefixes (lab.yaml sweep:), as the run
 * stores it: the variants it orders (the series' `from` when compared, then
 * NAME@k1 < NAME@k2 ...), and each patch's number and subject line. */
struct result_patch {
	unsigned number; /* 1-based, in the series' order */
	char *subject;
};

struct result_series {
	char *kernel;      /* the swept kernel: "pcp-auto" */
	struct strv chain; /* variants, in the series' order */
	unsigned *steps;   /* per chain entry: the patches it applies (0: the `from` variant) */
	struct result_patch *patches; /* by number, rising */
	size_t npatches;
};

struct result_set {
	char *id;         /* the lab run id */
	char *experiment;
	struct strv variants; /* baseline first */
	struct result_run *runs;
	size_t n, alloc;
	struct result_expect *expect;
	size_t nexpect, expect_alloc;
	struct strv mechanism; /* checks the report repeats: the variants' require: results */
	struct strv cluster;   /* what the cluster did (engine: slurm): every retry and why, in order */
	struct result_observe *observe;
	size_t nobserve;
	struct decide_params decide;
	struct fingerprint *fps; /* the distinct environments the runs name (each once) */
	size_t nfps, fps_alloc;
	bool icount; /* the guests' clock counted instructions (topology timing: icount) */
	struct result_series *series; /* none in runs stored before series were recorded */
	size_t nseries;
	/* every metric name once: a thousand runs of the same 500 metrics keep 500 strings */
	struct strv names;
	struct strmap name_index;
};

struct result_set *result_set_new(const char *id, const char *experiment);
void result_set_free(struct result_set *rs);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct result_set *, result_set_free)
#define _cleanup_result_set_ _cleanup_(result_set_freep)

struct result_run *result_add_run(struct result_set *rs, const char *id, const char *variant,
				  const char *group, size_t job, unsigned repeat);
/* The index of fp in rs->fps, added (a copy) when no equal one is there. */
int result_add_fingerprint(struct result_set *rs, const struct fingerprint *fp);
/* Run r's environment, NULL when unknown. */
const struct fingerprint *result_run_fingerprint(const struct result_run *r);
/* The set's copy of name (made on first use). */
const char *result_intern(struct result_set *rs, const char *name);
void result_add_metric(struct result_run *r, const char *name, double value);
/* Removes the runs whose drop[i] is set, keeping the others' order; how many went. */
size_t result_drop_runs(struct result_set *rs, const bool *drop);
void result_add_expect(struct result_set *rs, size_t job, const char *metric, enum expect_direction dir,
		       double effect, bool has_effect);
void result_add_observe(struct result_set *rs, const char *metric, enum observe_rel rel, double value,
			const struct strv *kernels, const char *says);
struct result_series *result_add_series(struct result_set *rs, const char *kernel);
/* The chain's next variant, `step` patches of the series applied (0: its `from`). */
void result_series_add_step(struct result_series *s, const char *variant, unsigned step);
void result_series_add_patch(struct result_series *s, unsigned number, const char *subject);
/* Patch `number`'s subject, NULL when the series does not say. */
const char *result_series_subject(const struct result_series *s, unsigned number);
/* "pcp-auto@3": 3; 0 when the name is not a step of `kernel`. */
unsigned result_series_step_of(const char *kernel, const char *variant);

/* "== 0", "> 1.5", "higher than the baseline" */
char *observe_describe(const struct result_observe *o);
/* "==" ... ">=", "higher", "lower", "differs", "same"; parses back with observe_rel_from_name */
const char *observe_rel_name(enum observe_rel r);
int observe_rel_from_name(const char *s, enum observe_rel *ret);
const char *run_status_name(enum run_status s);
struct json;
/* A run as one JSON object, the one writer of a run: run.json's "runs"
 * (store/store.c) and the JSON report's (result/report.c). */
void result_run_json(struct json *j, const struct result_run *r);
int run_status_from_name(const char *s, enum run_status *ret);

/* Parses `metric value` lines (a parse script's output); a malformed line
 * is an error naming it in *err. */
int result_parse_metrics(struct result_run *r, const char *text, char **err);
