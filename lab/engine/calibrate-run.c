/* SPDX-License-Identifier: MIT */
/*
 * The calibrate workflow (calibrate-run.h), out of the command, which now
 * parses the options and renders the record.
 */
#include <errno.h>
#include <string.h>
#include "../plan/plan.h"
#include "../result/calibrate.h"
#include "../result/result.h"
#include "../spec/spec.h"
#include "../util/alloc.h"
#include "../util/clock.h"
#include "../util/strmap.h"
#include "calibrate-run.h"
#include "../util/banned.h"

/* The experiment cut to its baseline over `boots` boots of `runs` runs each. */
static int calibration_plan(struct spec *s, struct spec_experiment *e, unsigned boots, unsigned runs,
			    struct diags *d)
{
	_cleanup_strv_ struct strv variants = STRV_INIT, only = STRV_INIT;

	spec_experiment_variants(s, e, &variants);
	strv_push(&only, variants.v[0]);
	if (spec_only_kernels(s, &only, d) < 0)
		return -1;
	e->repeat_auto = false;
	e->decide.min_boots = e->decide.max_boots = boots;
	e->repeat = e->boot == BOOT_PER_RUN ? boots : boots * runs;
	return 0;
}

struct keep_data {
	const struct spec *s;
	const struct spec_experiment *e;
};

/* The experiment's figures an overhead is measured on: a job's declared
 * expectations, else its workload's declared metrics, else any metric no
 * monitor declares. */
static bool keep_metric(void *data, const struct result_run *r, const char *metric)
{
	const struct keep_data *k = data;
	const struct spec_job *job = r->job < k->e->njobs ? &k->e->jobs[r->job] : NULL;
	const struct catalogue_entry *w = job ? spec_find_catalogue(k->s, job->workload.name, false) : NULL;

	if (job && job->nexpect) {
		for (size_t i = 0; i < job->nexpect; i++)
			if (streq(job->expect[i].metric, metric))
				return true;
		return false;
	}
	if (w && w->metrics.n)
		return catalogue_metric_matches(w, metric);
	for (size_t i = 0; i < k->s->ncatalogue; i++)
		if (k->s->catalogue[i].monitor && catalogue_metric_matches(&k->s->catalogue[i], metric))
			return false;
	return true;
}

/* Each run's group with every monitor and the monitor it ran without, from
 * the plan the engine ran (groups: their storage). */
static int tag_runs(const struct spec *s, const struct spec_experiment *e, const struct result_set *rs,
		    struct calib_run_tag *tags, struct strv *groups, struct diags *d)
{
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_strv_ struct strv only = STRV_INIT;
	_cleanup_strmap_ struct strmap ids = STRMAP_INIT;

	strv_push(&only, e->name);
	if (plan_build(s, &only, &p, d) < 0)
		return -1;
	for (size_t i = 0; i < p->n; i++) {
		struct plan_run base = p->runs[i];

		base.monitor_off = NULL;
		strv_push_take(groups, plan_run_group(&base));
		strmap_put(&ids, p->runs[i].id, i);
	}
	for (size_t i = 0; i < rs->n; i++) {
		size_t at = 0;

		if (strmap_get(&ids, rs->runs[i].id, &at))
			tags[i] = (struct calib_run_tag){ groups->v[at], NULL, p->runs[at].job };
		if (tags[i].group && p->runs[at].monitor_off) {
			/* the name is the catalogue's: the plan is freed on return */
			const struct catalogue_entry *m = spec_find_catalogue(s, p->runs[at].monitor_off, true);

			tags[i].monitor_off = m ? m->name : NULL;
			if (!m)
				tags[i].group = NULL;
		}
	}
	return 0;
}

/* Each overhead's budget: the experiment's overhead-budget, else its monitor's. */
static void overhead_budgets(const struct spec *s, const struct spec_experiment *e, struct calibration *c)
{
	for (size_t i = 0; i < c->nov; i++)
		c->ov[i].budget_pct = spec_overhead_budget_pct(s, e, c->ov[i].monitor);
}

static bool has_monitors(const struct spec_experiment *e)
{
	if (e->monitors.n)
		return true;
	for (size_t j = 0; j < e->njobs; j++)
		if (e->jobs[j].monitors.n)
			return true;
	return false;
}

/* The experiment's boots and runs a boot cut to p's: *budget the boots its own budget decides with, *runs a boot. */
static int calibration_cut(struct spec *s, struct spec_experiment *e, const struct calibrate_params *p,
			   unsigned *budget, unsigned *runs, struct diags *d)
{
	/* mde_pct for the experiment's own budget: its last boot a side, its runs a boot */
	*budget = e->repeat_auto ? e->decide.max_boots : e->decide.min_boots;
	*runs = p->runs ? p->runs : e->repeat_auto ? e->decide.runs_per_boot
					       : (e->repeat + *budget - 1) / (*budget ? *budget : 1);
	if (e->boot == BOOT_PER_RUN || !*runs)
		*runs = 1;
	if (calibration_plan(s, e, p->boots ? p->boots : 6, *runs, d) < 0)
		return -EINVAL;
	if (p->monitors && !has_monitors(e)) {
		diags_add(d, NULL, "calibrate: experiment '%s' has no monitors to measure", e->name);
		return -EINVAL;
	}
	e->monitors_off = p->monitors;
	return 0;
}

/* The record from the runs: the A/A figures from the runs with every monitor (as `lab run` makes them),
 * each monitor's overhead from the runs without it. */
static int build_record(const struct spec *s, const struct spec_experiment *e, const struct result_set *rs,
			const struct calibrate_params *p, unsigned budget, unsigned runs, double seconds,
			struct calib_record *rec, struct diags *d)
{
	_cleanup_free_ struct calib_run_tag *tags = xcalloc(rs->n + 1, sizeof(*tags));
	_cleanup_free_ bool *skip = xcalloc(rs->n + 1, sizeof(bool));
	_cleanup_strv_ struct strv groups = STRV_INIT;

	if (p->monitors && tag_runs(s, e, rs, tags, &groups, d) < 0)
		return -EIO;
	rec->experiment = xstrdup(e->name);
	rec->date = utc_now();
	calib_host_here(&rec->host);
	rec->seconds_per_run = rs->n ? seconds / (double)rs->n : 0;
	for (size_t i = 0; i < rs->n; i++)
		skip[i] = tags[i].monitor_off != NULL;
	rec->c = calibrate_build(rs, skip, &rs->decide, budget, runs);
	if (p->monitors) {
		struct keep_data k = { s, e };

		calibrate_overheads(rec->c, rs, tags, keep_metric, &k, &rs->decide);
		overhead_budgets(s, e, rec->c);
	}
	return 0;
}

int calibrate_run(const struct workflow *w, struct spec *s, const char *root, const struct calibrate_params *p,
		  struct calib_record *rec, char **ret_path, struct diags *d)
{
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_free_ char *err = NULL;
	struct spec_experiment *e = (struct spec_experiment *)spec_find_experiment(s, p->experiment);
	unsigned budget, runs;
	double t0 = now_sec();
	int r;

	if (!e) {
		diags_add(d, NULL, "no experiment '%s' in %s", p->experiment, s->path);
		return -EINVAL;
	}
	if ((r = calibration_cut(s, e, p, &budget, &runs, d)) < 0)
		return r;
	if (w->run(w->userdata, s, e, NULL, root, NULL, NULL, &rs) < 0)
		return -EIO;
	if ((r = build_record(s, e, rs, p, budget, runs, now_sec() - t0, rec, d)) < 0)
		return r;
	*ret_path = calib_path(root, e->name);
	if (calib_save(root, rec, &err) < 0) {
		diags_add(d, NULL, "%s", err);
		return -EIO;
	}
	return 0;
}
