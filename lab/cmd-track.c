/* SPDX-License-Identifier: MIT */
/*
 * lab track EXPERIMENT --branch REF --since REF --metric M [--step N]: a
 * branch of the experiment's git source followed, each tracked commit
 * measured against the one before it, the change points decided over the
 * whole series and each bisected to its culprit (engine/track-run.h); or
 * --resume ID. The outcome rendered: the tracked commits, each change
 * point in the robot's words.
 */
#include <signal.h>
#include <stdio.h>
#include "cmd.h"
#include "engine/engine.h"
#include "engine/track-run.h"
#include "util/escape.h"
#include "util/json.h"
#include "util/path.h"
#include "util/units.h"
#include "util/banned.h"

struct track_opts {
	const char *branch, *since, *metric, *threshold, *kernel, *resume, *accept, *why;
	unsigned step, jobs;
	bool oversubscribe;
};

const struct lab_option track_options[] = {
	OPT(struct track_opts, branch, OPT_STRING, 0, "branch", "REF", "the branch to follow (a ref of the git source)"),
	OPT(struct track_opts, since, OPT_STRING, 0, "since", "REF", "the start: the commits after it are tracked"),
	OPT(struct track_opts, step, OPT_UINT, 0, "step", "N", "every Nth commit of the first-parent line (1)",
	    .min = 1, .max = 10000, .what = "a number of commits (1-10000)"),
	OPT(struct track_opts, metric, OPT_STRING, 0, "metric", "METRIC", "the metric followed"),
	OPT(struct track_opts, threshold, OPT_STRING, 0, "threshold", "PERCENT",
	    "the smallest change a bisect calls bad (5%)"),
	OPT(struct track_opts, kernel, OPT_STRING, 0, "kernel", "KERNEL",
	    "the kernel built at each commit (default: the experiment's first)"),
	OPT(struct track_opts, resume, OPT_STRING, 0, "resume", "ID", "go on with a track that stopped"),
	OPT(struct track_opts, accept, OPT_STRING, 0, "accept", "COMMIT",
	    "mark a commit's change of --metric as a known trade-off (with --why): shown as accepted, not as news"),
	OPT(struct track_opts, why, OPT_STRING, 0, "why", "TEXT", "why the trade-off is accepted (one line)"),
	OPT(struct track_opts, jobs, OPT_UINT, 'j', "jobs", "N", "guests at a time (default: from the host's CPUs)",
	    .min = 1, .max = 256, .what = "a number of guests at a time (1-256)"),
	OPT(struct track_opts, oversubscribe, OPT_FLAG, 0, "oversubscribe", NULL, "allow more vCPUs than host CPUs"),
	{ 0 },
};

static void on_signal(int sig)
{
	(void)sig;
	engine_cancel();
}

/* track.json as it stands, or the summary a person reads. */
static void render(const struct lab_ctx *ctx, const struct track_session *x)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	if (ctx->json) {
		_cleanup_free_ char *path = path_join(x->dir, TRACK_FILE);

		if (strbuf_read_file(&out, path, TRACK_MAX_BYTES) < 0)
			strbuf_addstr(&out, "{}\n");
	} else {
		_cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;

		strbuf_addf(&out, "track %s\n", x->id);
		track_format_text(&x->t, &raw);
		term_escape_lines(&out, raw.buf ? raw.buf : "");
	}
	cmd_write(&out);
}

/* --accept COMMIT --metric M --why TEXT: a known trade-off recorded. */
static int accept(struct lab_ctx *ctx, const struct track_opts *o, bool alone)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *root = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, raw = STRBUF_INIT;

	if (!alone || !o->metric || !o->why || o->resume || o->branch || o->since) {
		cmd_error(ctx, "track: --accept COMMIT takes --metric METRIC and --why TEXT, and nothing else");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	root = cmd_results_dir(s);
	if (track_accept(root, o->accept, o->metric, o->why, &d) < 0) {
		cmd_report_errors(ctx, &d);
		return EXIT_USAGE;
	}
	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		json_object_begin(&j);
		json_kv_string(&j, "commit", o->accept);
		json_kv_string(&j, "metric", o->metric);
		json_kv_string(&j, "why", o->why);
		json_object_end(&j);
		json_finish(&j);
		strbuf_addch(&out, '\n');
	} else {
		strbuf_addf(&raw, "accepted: %s's change of %s: %s\n", o->accept, o->metric, o->why);
		term_escape_lines(&out, raw.buf);
	}
	cmd_write(&out);
	return EXIT_OK;
}

int cmd_track(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *root = NULL;
	struct track_opts o = { 0 };
	struct track_session x = { 0 };
	struct cmd_workflow cw = { .ctx = ctx, .noun = "track" };
	struct workflow w;
	struct track_params p;
	double thr = 0.05;
	int first = cmd_options_parse(ctx, "track", NULL, OPTS_ANYWHERE, argc, argv, &o);
	int rc = EXIT_OK;

	if (first < 0)
		return cmd_options_exit(first);
	if (o.accept)
		return accept(ctx, &o, first == argc);
	if ((o.resume && first != argc) || (!o.resume && argc - first != 1)) {
		cmd_error(ctx, "track: name one experiment, or --resume ID alone");
		return EXIT_USAGE;
	}
	if (o.threshold && (parse_percent(o.threshold, &thr) < 0 || !(thr > 0 && thr < 10))) {
		cmd_error(ctx, "track: --threshold '%s' is not a percentage above 0 (5%%)", o.threshold);
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	root = cmd_results_dir(s);
	cw.jobs = o.jobs;
	cw.oversubscribe = o.oversubscribe;
	cmd_workflow_init(&cw, &w);
	p = (struct track_params){ .experiment = o.resume ? NULL : argv[first], .branch = o.branch, .since = o.since,
				   .metric = o.metric, .kernel = o.kernel, .step = o.step, .threshold_pct = thr * 100 };
	if (o.resume ? track_session_open(&x, &w, root, o.resume, &d) < 0
		     : track_session_new(&x, &w, root, s, &p, &d) < 0) {
		cmd_report_errors(ctx, &d);
		track_session_release(&x);
		return EXIT_USAGE;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (track_session_walk(&x, o.resume != NULL, &d) < 0) {
		cmd_report_errors(ctx, &d);
		rc = EXIT_FAILED;
	}
	render(ctx, &x);
	track_session_release(&x);
	return rc;
}
