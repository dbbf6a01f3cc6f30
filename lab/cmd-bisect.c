/* SPDX-License-Identifier: MIT */
/*
 * lab bisect EXPERIMENT --good K --bad K --metric M --threshold T: which
 * patch of a series, or which commit of a git source (--good and --bad
 * two refs), moved a metric. The options parsed, the workflow run
 * (engine/bisect-run.h: its folder, its steps, its resume; engine/bisect.h:
 * how each step is decided) through lab run's engine call, the outcome
 * rendered. The kernels are built as the steps need them, in the series'
 * one work tree, so a step rebuilds only what its patches touch.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "engine/bisect-run.h"
#include "engine/engine.h"
#include "util/escape.h"
#include "util/path.h"
#include "util/units.h"
#include "util/banned.h"

struct bisect_opts {
	const char *good, *bad, *metric, *threshold, *direction, *resume, *alpha, *kernel;
	unsigned max_boots, jobs;
	bool oversubscribe, first_parent;
};

const struct lab_option bisect_options[] = {
	OPT(struct bisect_opts, good, OPT_STRING, 0, "good", "KERNEL|REF",
	    "the good end: the series' from kernel or NAME@N; or a commit of a git source"),
	OPT(struct bisect_opts, bad, OPT_STRING, 0, "bad", "KERNEL|REF",
	    "the bad end: NAME@N, or NAME for the whole series; or a later commit of the git source"),
	OPT(struct bisect_opts, kernel, OPT_STRING, 0, "kernel", "KERNEL",
	    "the kernel built at each commit (default: the experiment's first, when it builds from git)"),
	OPT(struct bisect_opts, first_parent, OPT_FLAG, 0, "first-parent", NULL,
	    "only the bad commit's first-parent line (a merge is one step)"),
	OPT(struct bisect_opts, metric, OPT_STRING, 0, "metric", "METRIC", "the metric that moved"),
	OPT(struct bisect_opts, threshold, OPT_STRING, 0, "threshold", "PERCENT",
	    "the smallest change that counts as bad (5%)"),
	OPT(struct bisect_opts, direction, OPT_CHOICE, 0, "direction", "WAY",
	    "the bad way (default: the way the ends differ)", .choices = "increase|decrease"),
	OPT(struct bisect_opts, alpha, OPT_STRING, 0, "alpha", "A",
	    "error rate of the whole bisect, split over its steps (default: the experiment's)"),
	OPT(struct bisect_opts, max_boots, OPT_UINT, 0, "max-boots", "N",
	    "boots a kernel at most in each step (default: the experiment's max-boots)", .min = 2, .max = 62,
	    .what = "a number of boots (2-62)"),
	OPT(struct bisect_opts, resume, OPT_STRING, 0, "resume", "ID", "go on with a bisect that stopped"),
	OPT(struct bisect_opts, jobs, OPT_UINT, 'j', "jobs", "N", "guests at a time (default: from the host's CPUs)",
	    .min = 1, .max = 256, .what = "a number of guests at a time (1-256)"),
	OPT(struct bisect_opts, oversubscribe, OPT_FLAG, 0, "oversubscribe", NULL, "allow more vCPUs than host CPUs"),
	{ 0 },
};

static void on_signal(int sig)
{
	(void)sig;
	engine_cancel();
}

/* The bisect's parameters from the options: the numbers checked here, the kernels by the workflow. */
static int params(const struct lab_ctx *ctx, const char *experiment, const struct bisect_opts *o,
		  struct bisect_params *p)
{
	double thr = 0.05;

	*p = (struct bisect_params){ .experiment = experiment, .good = o->good, .bad = o->bad, .metric = o->metric,
				     .max_boots = o->max_boots, .kernel = o->kernel, .first_parent = o->first_parent };
	if (o->threshold && (parse_percent(o->threshold, &thr) < 0 || !(thr > 0 && thr < 10))) {
		cmd_error(ctx, "bisect: --threshold '%s' is not a percentage above 0 (5%%)", o->threshold);
		return -1;
	}
	p->threshold_pct = thr * 100;
	if (o->alpha && (parse_double(o->alpha, &p->alpha) < 0 || !(p->alpha > 0 && p->alpha < 0.5))) {
		cmd_error(ctx, "bisect: --alpha '%s' is not a number between 0 and 0.5", o->alpha);
		return -1;
	}
	p->direction = !o->direction ? 0 : streq(o->direction, "increase") ? 1 : -1;
	return 0;
}

/* A new bisect stored, or a stored one opened: EXIT_OK or after the error was said. */
static int begin(struct lab_ctx *ctx, struct spec *s, const struct workflow *w, const char *experiment,
		 const struct bisect_opts *o, struct bisect_session *x)
{
	_cleanup_free_ char *root = cmd_results_dir(s);
	_cleanup_diags_ struct diags d = { 0 };
	struct bisect_params p;

	if (!o->resume && params(ctx, experiment, o, &p) < 0)
		return EXIT_USAGE;
	if (o->resume ? bisect_session_open(x, w, root, o->resume, &d) < 0
		      : bisect_session_new(x, w, root, s, &p, &d) < 0) {
		cmd_report_errors(ctx, &d);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* bisect.json as it stands, or the summary a person reads. */
static void render(const struct lab_ctx *ctx, const struct bisect_session *x)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	if (ctx->json) {
		_cleanup_free_ char *path = path_join(x->dir, BISECT_FILE);

		if (strbuf_read_file(&out, path, BISECT_MAX_BYTES) < 0)
			strbuf_addstr(&out, "{}\n");
	} else {
		_cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;

		strbuf_addf(&out, "bisect %s\n", x->id);
		bisect_format_text(&x->b, &raw);
		term_escape_lines(&out, raw.buf ? raw.buf : "");
	}
	cmd_write(&out);
}

int cmd_bisect(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	struct bisect_opts o = { 0 };
	struct bisect_session x = { 0 };
	struct cmd_workflow cw = { .ctx = ctx, .noun = "bisect" };
	struct workflow w;
	int first = cmd_options_parse(ctx, "bisect", NULL, OPTS_ANYWHERE, argc, argv, &o);
	enum bisect_state state = BISECT_RUNNING;
	int rc;

	if (first < 0)
		return cmd_options_exit(first);
	if ((o.resume && first != argc) || (!o.resume && argc - first != 1)) {
		cmd_error(ctx, "bisect: name one experiment, or --resume ID alone");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	cw.jobs = o.jobs;
	cw.oversubscribe = o.oversubscribe;
	cmd_workflow_init(&cw, &w);
	if ((rc = begin(ctx, s, &w, o.resume ? NULL : argv[first], &o, &x)) != EXIT_OK)
		goto out;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (bisect_session_walk(&x, o.resume != NULL, &state, &d) < 0) {
		cmd_report_errors(ctx, &d);
		rc = EXIT_FAILED;
	}
	render(ctx, &x);
	if (rc == EXIT_OK && state != BISECT_FOUND)
		rc = EXIT_FAILED;
out:
	bisect_session_release(&x);
	return rc;
}
