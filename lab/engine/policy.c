/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <string.h>
#include "../result/attrib.h"
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

static bool boot_started(const struct seq_policy *p, unsigned boot)
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

/* The variance parts of an undecided effect, summed over its sides. */
static void add_parts(const struct effect *e, double *between, double *within)
{
	for (int side = 0; e && side < 2; side++) {
		double m = e->boots[side] ? (double)e->runs[side] / (double)e->boots[side] : 1;

		if (isnan(e->cv_between[side]) || isnan(e->cv_within[side]))
			continue;
		*between += e->cv_between[side] * e->cv_between[side];
		*within += e->cv_within[side] * e->cv_within[side] / m;
	}
}

/*
 * Every declared expectation has a verdict that is not inconclusive, and
 * no declared metric has an undecided step of a swept series' chain? For
 * the ones that do not, whether the boots' means vary more between boots
 * than a boot's runs make them vary (then a run a boot buys more). The
 * first undecided step goes to p->kept_by.
 */
static bool all_decided(struct seq_policy *p, const struct result_set *rs, bool *between_dominates)
{
	_cleanup_comparison_ struct comparison *c = compare_build(rs);
	double between = 0, within = 0;
	bool all = true, verdicts = true, said = false;

	for (size_t k = 0; k < c->nverdicts; k++) {
		if (verdict_decided(c->verdicts[k].v))
			continue;
		all = verdicts = false;
		add_parts(c->verdicts[k].d ? &c->verdicts[k].d->e : NULL, &between, &within);
	}
	for (size_t i = 0; i < rs->nseries; i++) {
		_cleanup_attribution_ struct attribution *a = attrib_build(c, &rs->series[i]);
		const struct attrib_row *row;
		size_t step;

		if (!attrib_undecided(a, &row, &step))
			continue;
		if (!said) {
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

			attrib_step_name(a, step, &sb);
			free(p->kept_by);
			p->kept_by = xasprintf("%s [%s] undecided at step %s of %s", row->metric, row->group, sb.buf,
					       rs->series[i].kernel);
			p->kept_by_look = p->looks;
			p->kept_by_series_only = verdicts;
			said = true;
		}
		all = false;
		for (size_t r = 0; r < a->nrows; r++)
			for (size_t s = 0; a->rows[r].declared && s + 1 < a->nchain; s++)
				if (a->rows[r].steps[s].state == STEP_UNDECIDED && a->rows[r].steps[s].have)
					add_parts(&a->rows[r].steps[s].e, &between, &within);
	}
	*between_dominates = between > 0 && between >= within;
	return all;
}

/* Before a boot past the minimum starts: go on, or stop (and why). */
static enum seq_stop judge_boot(struct seq_policy *p, const struct engine_view *v)
{
	bool dominates = false;

	if (p->max_runs && runs_ended(v->rs) >= p->max_runs)
		return SEQ_BUDGET_RUNS;
	if (p->deadline > 0 && (p->clock ? p->clock() : now_sec()) >= p->deadline)
		return SEQ_BUDGET_TIME;
	p->looks++;
	if (all_decided(p, v->rs, &dominates))
		return SEQ_DECIDED;
	/* from now on a boot's first run of each variant and workload only: more boots for the time */
	if (dominates && !p->one_run_a_boot)
		p->one_run_a_boot = p->looks;
	return SEQ_RUNNING;
}

static bool skipped(const struct seq_policy *p, size_t run)
{
	return run < p->nskip && p->skip[run];
}

/* A look comes before each boot past the minimum starts: the runs of the
 * boots before the first one not started; none once the policy stopped or
 * every boot has started. */
static long seq_runs_to_look(void *data, const struct engine_view *v)
{
	const struct seq_policy *p = data;
	unsigned next = 0;
	long n = 0;

	if (p->stop != SEQ_RUNNING)
		return -1;
	for (size_t g = 0; g < v->ngroups; g++) {
		unsigned b = v->groups[g].boot;

		if (b > p->min_boots && !boot_started(p, b) && (!next || b < next))
			next = b;
	}
	if (!next)
		return -1;
	for (size_t g = 0; g < v->ngroups; g++) {
		if (v->groups[g].boot >= next)
			continue;
		for (size_t j = 0; j < v->groups[g].n; j++) {
			size_t i = v->groups[g].runs[j];

			n += v->rs->runs[i].status == RUN_PENDING && !skipped(p, i);
		}
	}
	return n;
}

/* The group's next run: the first open one, passing (and marking) those a
 * boot of one run a variant and workload no longer needs. */
static size_t seq_first_open(struct seq_policy *p, const struct engine_view *v, size_t group)
{
	const struct run_group *g = &v->groups[group];

	for (size_t j = 0; j < g->n; j++) {
		const struct result_run *r = &v->rs->runs[g->runs[j]];
		bool again = false;

		if (v->issued[g->runs[j]] || r->status != RUN_PENDING || skipped(p, g->runs[j]))
			continue;
		for (size_t k = 0; p->one_run_a_boot && p->cut_from && g->boot >= p->cut_from && k < j && !again; k++) {
			const struct result_run *o = &v->rs->runs[g->runs[k]];

			again = (v->issued[g->runs[k]] || o->status != RUN_PENDING) && streq(o->variant, r->variant) &&
				streq(o->group, r->group);
		}
		if (!again)
			return j;
		if (g->runs[j] >= p->nskip) {
			size_t n = g->runs[j] + 64;

			p->skip = xrealloc(p->skip, n * sizeof(bool));
			memset(p->skip + p->nskip, 0, (n - p->nskip) * sizeof(bool));
			p->nskip = n;
		}
		p->skip[g->runs[j]] = true;
	}
	return g->n;
}

static bool seq_group_done(void *data, const struct engine_view *v, size_t group)
{
	struct seq_policy *p = data;
	const struct run_group *g = &v->groups[group];

	if (issued_any(v, g) || g->boot <= p->min_boots || boot_started(p, g->boot))
		return seq_first_open(p, v, group) == g->n;
	if (p->stop != SEQ_RUNNING && g->boot >= p->stop_boot)
		return true;
	p->stop = judge_boot(p, v);
	if (p->stop != SEQ_RUNNING) {
		p->stop_boot = g->boot;
		return true;
	}
	/* a boot judged to need one run a variant: this one and every later one */
	if (p->one_run_a_boot && !p->cut_from)
		p->cut_from = g->boot;
	return seq_first_open(p, v, group) == g->n;
}

static void seq_next(void *data, const struct engine_view *v, size_t group, struct run_choice *ret)
{
	struct seq_policy *p = data;
	size_t j = seq_first_open(p, v, group);

	if (j == v->groups[group].n) {
		*ret = (struct run_choice){ .kind = CHOICE_DONE };
		return;
	}
	*ret = (struct run_choice){ .kind = CHOICE_RUN, .run = v->groups[group].runs[j] };
	mark_started(p, v->groups[group].boot);
}

const struct run_policy_ops run_policy_sequential_ops = {
	.name = "sequential",
	.group_done = seq_group_done,
	.next = seq_next,
	.runs_to_look = seq_runs_to_look,
};

bool seq_policy_skipped(const struct seq_policy *p, size_t run)
{
	return skipped(p, run);
}

void seq_policy_release(struct seq_policy *p)
{
	free(p->skip);
	p->skip = NULL;
	p->nskip = 0;
	free(p->started);
	p->started = NULL;
	p->nstarted = 0;
	free(p->kept_by);
	p->kept_by = NULL;
}

const char *seq_stop_describe(enum seq_stop s)
{
	switch (s) {
	case SEQ_RUNNING: return "every boot of the budget ran";
	case SEQ_DECIDED: return "every declared expectation is decided";
	case SEQ_BUDGET_RUNS: return "the budget's runs are spent";
	case SEQ_BUDGET_TIME: return "the budget's time is spent";
	}
	return "?";
}
