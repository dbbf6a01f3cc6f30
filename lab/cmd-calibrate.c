/* SPDX-License-Identifier: MIT */
/*
 * lab calibrate EXPERIMENT: A/A runs on this host. The experiment's plan
 * with its baseline kernel alone, over --boots boots (6), which the
 * calibration splits into halves every balanced way and judges as if
 * they were two kernels: per metric the between-boot and within-boot CV,
 * the false-positive rate of lab's own test here, and the smallest change
 * the experiment's budget can decide. With --monitors, each run is
 * followed in its boot by the same run with each of its monitors off in
 * turn, and each monitor's cost to the workload's figures is measured.
 * Stored under the results folder with the host's description; `lab plan`
 * and `lab report` read it back.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cmd.h"
#include "plan/plan.h"
#include "result/calibrate.h"
#include "result/result.h"
#include "store/calib-store.h"
#include "engine/guest-run.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/banned.h"

struct calibrate_opts {
	unsigned boots, runs, jobs;
	bool oversubscribe, monitors;
};

const struct lab_option calibrate_options[] = {
	OPT(struct calibrate_opts, boots, OPT_UINT, 0, "boots", "N", "boots of the baseline kernel (default 6)",
	    .min = 4, .max = 62, .what = "a number of boots (4-62)"),
	OPT(struct calibrate_opts, runs, OPT_UINT, 0, "runs-per-boot", "N",
	    "runs a boot (default: the experiment's runs-per-boot, 3)", .min = 1, .max = 1000,
	    .what = "a number of runs a boot (1-1000)"),
	OPT(struct calibrate_opts, jobs, OPT_UINT, 'j', "jobs", "N", "guests at a time (default: from the host's CPUs)",
	    .min = 1, .max = 256, .what = "a number of guests at a time (1-256)"),
	OPT(struct calibrate_opts, oversubscribe, OPT_FLAG, 0, "oversubscribe", NULL, "allow more vCPUs than host CPUs"),
	OPT(struct calibrate_opts, monitors, OPT_FLAG, 0, "monitors", NULL,
	    "measure what each monitor costs: every run again with each monitor off in turn"),
	{ 0 },
};

/* The experiment cut to its baseline over `boots` boots of `runs` runs each. */
static int calibration_plan(const struct lab_ctx *ctx, struct spec *s, struct spec_experiment *e, unsigned boots,
			    unsigned runs)
{
	_cleanup_strv_ struct strv variants = STRV_INIT, only = STRV_INIT;
	_cleanup_diags_ struct diags d = { 0 };

	spec_experiment_variants(s, e, &variants);
	strv_push(&only, variants.v[0]);
	if (spec_only_kernels(s, &only, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
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
static int tag_runs(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
		    const struct result_set *rs, struct calib_run_tag *tags, struct strv *groups)
{
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strv_ struct strv only = STRV_INIT;
	_cleanup_strmap_ struct strmap ids = STRMAP_INIT;

	strv_push(&only, e->name);
	if (plan_build(s, &only, &p, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
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

static void print_record(const struct lab_ctx *ctx, const struct calib_record *rec, const char *path)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	if (ctx->json) {
		calib_format_json(rec, &out);
	} else {
		strbuf_addstr(&out, "calibration of ");
		term_escape(&out, rec->experiment);
		strbuf_addf(&out, " on %s (%u CPUs, %s, host kernel %s), %.0f s a run:\n", rec->host.cpu, rec->host.cpus,
			    rec->host.accel, rec->host.kernel, rec->seconds_per_run);
		calibration_format_text(rec->c, &out);
		strbuf_addf(&out, "saved to %s\n", path);
	}
	cmd_write(&out);
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

int cmd_calibrate(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_free_ char *root = NULL, *err = NULL, *path = NULL;
	_cleanup_free_ struct calib_run_tag *tags = NULL;
	_cleanup_free_ bool *skip = NULL;
	_cleanup_strv_ struct strv groups = STRV_INIT;
	struct calibrate_opts o = { .boots = 6 };
	struct calib_record rec = { 0 };
	struct spec_experiment *e;
	unsigned budget, runs;
	double t0 = now_sec();
	int first = cmd_options_parse(ctx, "calibrate", NULL, OPTS_ANYWHERE, argc, argv, &o);

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first != 1) {
		cmd_error(ctx, "calibrate: give one experiment");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	e = (struct spec_experiment *)spec_find_experiment(s, argv[first]);
	if (!e) {
		cmd_error(ctx, "no experiment '%s' in %s", argv[first], ctx->file);
		return EXIT_USAGE;
	}
	/* mde_pct for the experiment's own budget: its last boot a side, its runs a boot */
	budget = e->repeat_auto ? e->decide.max_boots : e->decide.min_boots;
	runs = o.runs ? o.runs : e->repeat_auto ? e->decide.runs_per_boot
					   : (e->repeat + budget - 1) / (budget ? budget : 1);
	if (e->boot == BOOT_PER_RUN)
		runs = 1;
	if (calibration_plan(ctx, s, e, o.boots, runs ? runs : 1) < 0)
		return EXIT_USAGE;
	if (o.monitors && !has_monitors(e)) {
		cmd_error(ctx, "calibrate: experiment '%s' has no monitors to measure", e->name);
		return EXIT_USAGE;
	}
	e->monitors_off = o.monitors;
	if (cmd_engine_run(ctx, s, e, NULL, o.jobs, o.oversubscribe, &rs) < 0)
		return EXIT_FAILED;
	tags = xcalloc(rs->n + 1, sizeof(*tags));
	skip = xcalloc(rs->n + 1, sizeof(bool));
	if (o.monitors && tag_runs(ctx, s, e, rs, tags, &groups) < 0)
		return EXIT_FAILED;
	root = cmd_results_dir(s);
	rec.experiment = xstrdup(e->name);
	rec.date = utc_now();
	calib_host_here(&rec.host);
	rec.seconds_per_run = rs->n ? (now_sec() - t0) / (double)rs->n : 0;
	/* the A/A figures are the runs with every monitor, as `lab run` makes them */
	for (size_t i = 0; i < rs->n; i++)
		skip[i] = tags[i].monitor_off != NULL;
	rec.c = calibrate_build(rs, skip, &rs->decide, budget, runs ? runs : 1);
	if (o.monitors) {
		struct keep_data k = { s, e };

		calibrate_overheads(rec.c, rs, tags, keep_metric, &k, &rs->decide);
		overhead_budgets(s, e, rec.c);
	}
	path = calib_path(root, e->name);
	if (calib_save(root, &rec, &err) < 0) {
		cmd_error(ctx, "%s", err);
		calib_record_release(&rec);
		return EXIT_FAILED;
	}
	print_record(ctx, &rec, path);
	calib_record_release(&rec);
	return EXIT_OK;
}
