/* SPDX-License-Identifier: MIT */
/*
 * Which run next: the engine asks its policy after every finished run of a
 * group (the runs one worker serves on one guest or host, in order) and
 * before the group's first. A policy sees every run of the experiment so
 * far, ended or not; it may hand out a planned run of the group or ask for
 * a new repeat (a sequential design adds runs until it has seen enough).
 * The fixed policy is the plan: the group's runs in order, each once.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "../result/result.h"

/* What one worker runs: all of a variant's runs on one guest with `boot: once`,
 * all the runs of a host on a guest per variant with `boot: side-by-side`,
 * else one run. */
struct run_group {
	size_t *runs; /* indexes into the result set, in the order they are run */
	size_t n, alloc;
	unsigned boot; /* the plan's boot of its variant(s) (1-based), 0 when unknown */
};

/* What a policy sees: the result set (ended runs with their metrics,
 * pending ones), the groups, and which runs a worker already has. */
struct engine_view {
	const struct result_set *rs;
	const struct run_group *groups;
	size_t ngroups;
	const bool *issued; /* per run of rs */
};

enum run_choice_kind {
	CHOICE_DONE,   /* the group is done */
	CHOICE_RUN,    /* `run`: a run of the group not issued yet */
	CHOICE_REPEAT, /* a new run in the group, repeating run `like` (its variant, workload and parameters) */
};

struct run_choice {
	enum run_choice_kind kind;
	size_t run;  /* CHOICE_RUN */
	size_t like; /* CHOICE_REPEAT: a run of the group */
};

struct run_policy_ops {
	const char *name;
	/* Is the group done? Asked first; next() only when it is not. */
	bool (*group_done)(void *data, const struct engine_view *v, size_t group);
	/* Which run of the group next. */
	void (*next)(void *data, const struct engine_view *v, size_t group, struct run_choice *ret);
	/* The runs still to end before the policy next looks at the results
	 * (and may stop), -1 when no look is ahead; NULL: it never looks. */
	long (*runs_to_look)(void *data, const struct engine_view *v);
};

struct run_policy {
	const struct run_policy_ops *ops;
	void *data;
};

/* The plan as it is: the group's runs in order, each once. */
extern const struct run_policy_ops run_policy_fixed_ops;

/*
 * The sequential policy (`repeat: auto`): every group of the first
 * min-boots boots runs; before a later boot's first group starts, lab
 * judges the declared expectations on what has ended (compare_build at
 * the look's alpha) and skips that boot and all later ones when every one
 * is decided, or when the budget (runs a variant, time) is spent. A boot
 * that started always runs to its end: the boot is the unit. Both sides
 * of a boot are kept together: once a group of boot k started, the other
 * groups of boot k run too. When a look finds that the undecided
 * expectations' boot means vary more between boots than within (the
 * between-boot part of their variance is the larger), the boots from then
 * on run each variant and workload once: the time goes to more boots.
 * A run that sweeps a series (result_set.series) is decided only when no
 * declared metric has an undecided step of its chain (attrib.h): the sweep
 * adds boots where a step is undecided, and says which step kept it going.
 */
enum seq_stop { SEQ_RUNNING, SEQ_DECIDED, SEQ_BUDGET_RUNS, SEQ_BUDGET_TIME };

struct seq_policy {
	unsigned min_boots;
	unsigned max_runs;  /* per variant, 0: none */
	double deadline;    /* now_sec() after which no boot starts, 0: none */
	enum seq_stop stop;
	unsigned stop_boot; /* the first boot not run */
	unsigned looks;     /* judgements made */
	/* per boot number (index), whether a group of it started: grows as needed */
	bool *started;
	size_t nstarted;
	unsigned one_run_a_boot; /* the look (1-based) that found between-boot variance dominating, 0: none */
	unsigned cut_from;       /* the first boot run that way */
	bool *skip;              /* per run: planned, not needed (a boot of one run a variant) */
	size_t nskip;
	double (*clock)(void); /* now_sec; tests set their own */
	/* the last look that went on for a series' undecided step: "metric [group] undecided at step
	 * @3->@5 of pcp-auto" (NULL: none), its look, and whether every verdict was decided then */
	char *kept_by;
	unsigned kept_by_look;
	bool kept_by_series_only;
};

extern const struct run_policy_ops run_policy_sequential_ops;
void seq_policy_release(struct seq_policy *p);
/* A planned run the policy passed over (it leaves the run at the end). */
bool seq_policy_skipped(const struct seq_policy *p, size_t run);
const char *seq_stop_describe(enum seq_stop s);
