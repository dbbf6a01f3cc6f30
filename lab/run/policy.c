/* SPDX-License-Identifier: MIT */
#include <string.h>
#include "../result/compare.h"
#include "../util/alloc.h"
#include "../util/clock.h"
#include "policy.h"
#include "../util/banned.h"

/* The group's first pending run that no worker has had yet, or n. */
static size_t first_open(const struct engine_view *v, size_t group)
{
	const struct run_group *g = &v->groups[group];

	for (size_t j = 0; j < g->n; j++)
		if (!v->issued[g->runs[j]] && v->rs->runs[g->runs[j]].status == RUN_PENDING)
			return j;
	return g->n;
}

static bool fixed_group_done(void *data, const struct engine_view *v, size_t group)
{
	(void)data;
	return first_open(v, group) == v->groups[group].n;
}

static void fixed_next(void *data, const struct engine_view *v, size_t group, struct run_choice *ret)
{
	size_t j = first_open(v, group);

	(void)data;
	if (j == v->groups[group].n) {
		*ret = (struct run_choice){ .kind = CHOICE_DONE };
		return;
	}
	*ret = (struct run_choice){ .kind = CHOICE_RUN, .run = v->groups[group].runs[j] };
}

const struct run_policy_ops run_policy_fixed_ops = {
	.name = "fixed",
	.group_done = fixed_group_done,
	.next = fixed_next,
};

static bool issued_any(const struct engine_view *v, const struct run_group *g)
{
	for (size_t j = 0; j < g->n; j++)
		if (v->issued[g->runs[j]] || v->rs->runs[g->runs[j]].status != RUN_PENDING)
			return true;
	return false;
}

static bool boot_started(struct seq_policy *p, unsigned boot)
{
	return boot < p->nstarted && p->started[boot];
}

static void mark_started(struct seq_policy *p, unsigned boot)
{
	if (boot >= p->nstarted) {
		size_t n = (size_t)boot + 8;

		p->started = xrealloc(p->started, n * sizeof(bool));
		memset(p->started + p->nstarted, 0, (n - p->nstarted) * sizeof(bool));
		p->nstarted = n;
	}
	p->started[boot] = true;
}

/* Runs each variant has ended (ok or failed), the most of any. */
static size_t runs_ended(const struct result_set *rs)
{
	size_t most = 0;

	for (size_t k = 0; k < rs->variants.n; k++) {
		size_t n = 0;

		for (size_t i = 0; i < rs->n; i++)
			n += rs->runs[i].status != RUN_PENDING && streq(rs->runs[i].variant, rs->variants.v[k]);
		most = n > most ? n : most;
	}
	return most;
}

/* Every declared expectation has a verdict that is not inconclusive. */
static bool all_decided(const struct result_set *rs)
{
	_cleanup_comparison_ struct comparison *c = compare_build(rs);

	for (size_t k = 0; k < c->nverdicts; k++)
		if (!verdict_decided(c->verdicts[k].v))
			return false;
	return true;
}

/* Before boot `boot` starts: go on, or stop (and why). */
static enum seq_stop judge_boot(struct seq_policy *p, const struct engine_view *v, unsigned boot)
{
	if (p->max_runs && runs_ended(v->rs) >= p->max_runs)
		return SEQ_BUDGET_RUNS;
	if (p->deadline > 0 && (p->clock ? p->clock() : now_sec()) >= p->deadline)
		return SEQ_BUDGET_TIME;
	p->looks++;
	(void)boot;
	return all_decided(v->rs) ? SEQ_DECIDED : SEQ_RUNNING;
}

static bool seq_group_done(void *data, const struct engine_view *v, size_t group)
{
	struct seq_policy *p = data;
	const struct run_group *g = &v->groups[group];

	if (issued_any(v, g) || g->boot <= p->min_boots || boot_started(p, g->boot))
		return fixed_group_done(NULL, v, group);
	if (p->stop != SEQ_RUNNING && g->boot >= p->stop_boot)
		return true;
	p->stop = judge_boot(p, v, g->boot);
	if (p->stop != SEQ_RUNNING) {
		p->stop_boot = g->boot;
		return true;
	}
	return fixed_group_done(NULL, v, group);
}

static void seq_next(void *data, const struct engine_view *v, size_t group, struct run_choice *ret)
{
	struct seq_policy *p = data;

	fixed_next(NULL, v, group, ret);
	if (ret->kind == CHOICE_RUN)
		mark_started(p, v->groups[group].boot);
}

const struct run_policy_ops run_policy_sequential_ops = {
	.name = "sequential",
	.group_done = seq_group_done,
	.next = seq_next,
};

void seq_policy_release(struct seq_policy *p)
{
	free(p->started);
	p->started = NULL;
	p->nstarted = 0;
}

const char *seq_stop_describe(enum seq_stop s)
{
	switch (s) {
	case SEQ_RUNNING: return "the budget's last boot ran";
	case SEQ_DECIDED: return "every declared expectation is decided";
	case SEQ_BUDGET_RUNS: return "the budget's runs are spent";
	case SEQ_BUDGET_TIME: return "the budget's time is spent";
	case SEQ_BUDGET_BOOTS: return "the budget's boots are spent";
	}
	return "?";
}
