/* SPDX-License-Identifier: MIT */
/*
 * lab calibrate EXPERIMENT: A/A runs on this host. The experiment's plan
 * with its baseline kernel alone, over --boots boots (6), which the
 * calibration splits into halves every balanced way and judges as if
 * they were two kernels: per metric the between-boot and within-boot CV,
 * the false-positive rate of lab's own test here, and the smallest change
 * the experiment's budget can decide. Stored under the results folder with
 * the host's description; `lab plan` reads it back.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cmd.h"
#include "result/calibrate.h"
#include "result/result.h"
#include "run/calib-store.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/escape.h"
#include "util/banned.h"

struct calibrate_opts {
	unsigned boots, runs, jobs;
	bool oversubscribe;
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
	OPT_JSON_ENTRY,
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

int cmd_calibrate(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_free_ char *root = NULL, *err = NULL, *path = NULL;
	struct calibrate_opts o = { .boots = 6 };
	struct calib_record rec = { 0 };
	struct spec_experiment *e;
	unsigned budget, runs;
	double t0 = now_sec();
	int first = cmd_options_parse(ctx, "calibrate", NULL, OPTS_ANYWHERE, argc, argv, &o);

	if (first < 0)
		return first == -2 ? EXIT_OK : EXIT_USAGE;
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
	if (cmd_engine_run(ctx, s, e, NULL, o.jobs, o.oversubscribe, &rs) < 0)
		return EXIT_FAILED;
	root = cmd_results_dir(s);
	rec.experiment = xstrdup(e->name);
	rec.date = utc_now();
	calib_host_here(&rec.host);
	rec.seconds_per_run = rs->n ? (now_sec() - t0) / (double)rs->n : 0;
	rec.c = calibrate_build(rs, &rs->decide, budget, runs ? runs : 1);
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
