/* SPDX-License-Identifier: MIT */
/*
 * lab calibrate EXPERIMENT: A/A runs on this host (engine/calibrate-run.h
 * says what is run and measured). The options parsed, the workflow run
 * through lab run's engine call, the record rendered: text or --json.
 * `lab plan` and `lab report` read the saved record back.
 */
#include <errno.h>
#include <stdio.h>
#include "cmd.h"
#include "result/calibrate.h"
#include "store/calib-store.h"
#include "engine/calibrate-run.h"
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
	_cleanup_free_ char *root = NULL, *path = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	struct calibrate_opts o = { .boots = 6 };
	struct calib_record rec = { 0 };
	struct cmd_workflow cw = { .ctx = ctx, .noun = "calibrate" };
	struct workflow w;
	int first = cmd_options_parse(ctx, "calibrate", NULL, OPTS_ANYWHERE, argc, argv, &o), r;

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first != 1) {
		cmd_error(ctx, "calibrate: give one experiment");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	cw.jobs = o.jobs;
	cw.oversubscribe = o.oversubscribe;
	cmd_workflow_init(&cw, &w);
	root = cmd_results_dir(s);
	r = calibrate_run(&w, s, root,
			  &(struct calibrate_params){ .experiment = argv[first], .boots = o.boots, .runs = o.runs,
						      .monitors = o.monitors },
			  &rec, &path, &d);
	if (r < 0) {
		cmd_report_errors(ctx, &d);
		calib_record_release(&rec);
		return r == -EINVAL ? EXIT_USAGE : EXIT_FAILED;
	}
	print_record(ctx, &rec, path);
	calib_record_release(&rec);
	return EXIT_OK;
}
