/* SPDX-License-Identifier: MIT */
/*
 * lab run [--jobs N] [--resume RUN_ID] [EXPERIMENT...]: each experiment
 * run by the engine (lab/engine/engine.h: the run folder, the builds, the
 * runs on worker guests, the journal and the index), its progress shown
 * from the engine's events, then the comparison report. A failed run is
 * recorded with its reason and the rest go on; --resume finishes the
 * pending runs of a stored run.
 */
#include <errno.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "cmd.h"
#include "kernel/build.h"
#include "kernel/variant.h"
#include "plan/plan.h"
#include "result/compare.h"
#include "result/report.h"
#include "engine/engine.h"
#include "engine/workflow.h"
#include "util/escape.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/units.h"
#include "vm/vm.h"
#include "util/dirs.h"
#include "util/banned.h"

/* A signal stops the engine's workers (in a worker: its guests), then lab. */
static void on_signal(int sig)
{
	if (engine_cancel())
		return; /* the engine cancels its cluster jobs and returns */
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Progress: on a terminal one status line rewritten in place (runs done /
 * total, failed, running, elapsed, ETA, the latest step) with the end of
 * each run printed above it; otherwise a line per step, for logs.
 */
struct run_ui {
	const struct lab_ctx *ctx;
	const struct engine_progress *prog;
	double t0;
	bool tty;
	char *status;
	const struct cmd_engine_hook *hook;
	double build_t0; /* when the latest build step began */
};

static void ui_counts(const struct run_ui *u, struct strbuf *sb)
{
	const struct engine_progress *p = u->prog;
	double el = now_sec() - u->t0;

	strbuf_addf(sb, "[%zu/%zu done", p->done, p->total);
	if (p->failed)
		strbuf_addf(sb, ", %zu failed", p->failed);
	if (p->running > 1)
		strbuf_addf(sb, ", %u running", p->running);
	strbuf_addstr(sb, ", ");
	engine_format_time(p, el, now_sec(), sb);
	strbuf_addch(sb, ']');
}

static void ui_redraw(const struct run_ui *u)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct winsize ws = { 0 };
	size_t width = 80;

	if (!u->tty || !u->status)
		return;
	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 10)
		width = ws.ws_col;
	strbuf_addstr(&sb, "lab: ");
	ui_counts(u, &sb);
	strbuf_addf(&sb, " %s", u->status);
	if (sb.len >= width)
		strbuf_setlen(&sb, width - 1);
	fprintf(stderr, "\r\033[K%s", sb.buf);
	fflush(stderr);
}

/* A step of a run (or of the guest it boots). */
static void ui_step(struct run_ui *u, const struct result_run *r, const char *what)
{
	if (u->ctx->verbosity < 0)
		return;
	free(u->status);
	u->status = xasprintf("%s %s: %s", r->id, r->variant, what);
	if (u->tty) {
		ui_redraw(u);
	} else {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		ui_counts(u, &sb);
		fprintf(stderr, "lab: %s %s\n", sb.buf, u->status);
	}
}

/* A line that stays (a run ended, a note), above the status line. */
static void ui_print(struct run_ui *u, const char *fmt, ...) _printf_(2, 3);
static void ui_print(struct run_ui *u, const char *fmt, ...)
{
	va_list ap;

	if (u->ctx->verbosity < 0)
		return;
	if (u->tty)
		fputs("\r\033[K", stderr);
	fputs("lab: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ui_redraw(u);
}

static void ui_end(struct run_ui *u)
{
	if (u->tty && u->status && u->ctx->verbosity >= 0)
		fputs("\r\033[K", stderr);
	free(u->status);
	u->status = NULL;
}

/*
 * A kernel build's objects: on a terminal one line rewritten every 10
 * objects, in a log a line every 200, "lab: base: build: 812/1948
 * objects, 3m10s, ETA 4m26s" (no total on a first build here).
 */
static void ui_objects(struct run_ui *u, const struct engine_event *ev)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (u->ctx->verbosity < 0 || ev->objects % (u->tty ? 10 : 200))
		return;
	kbuild_format_progress(ev->objects, ev->objects_expected, now_sec() - u->build_t0, &sb);
	if (u->tty)
		fprintf(stderr, "\r\033[Klab: %s: build: %s", ev->name, sb.buf);
	else
		fprintf(stderr, "lab: %s: build: %s\n", ev->name, sb.buf);
}

/* The engine's events as lines on stderr (errors as the command's own). */
static void on_event(void *userdata, const struct engine_event *ev)
{
	struct run_ui *u = userdata;
	const struct result_run *r = ev->run;

	u->prog = ev->progress;
	switch (ev->type) {
	case ENGINE_EV_STARTED:
		if (u->hook && u->hook->started)
			u->hook->started(u->hook->userdata, ev->id);
		if (u->ctx->verbosity >= 0)
			fprintf(stderr, "lab: run %s: experiment %s, %zu runs, results in %s\n", ev->id, ev->experiment,
				ev->nruns, ev->dir);
		break;
	case ENGINE_EV_BUILD_STEP:
		if (u->ctx->verbosity >= 0)
			fprintf(stderr, "%slab: %s: %s\n", u->tty ? "\r\033[K" : "", ev->name, ev->what);
		u->build_t0 = now_sec();
		break;
	case ENGINE_EV_BUILD_OBJECTS:
		ui_objects(u, ev);
		break;
	case ENGINE_EV_RUNS_BEGIN:
		u->t0 = now_sec();
		break;
	case ENGINE_EV_NOTE:
		ui_print(u, "%s", ev->text);
		break;
	case ENGINE_EV_STEP:
		ui_step(u, r, ev->what);
		break;
	case ENGINE_EV_RUN_DONE:
		if (r->status != RUN_FAILED)
			ui_print(u, "%s %s ok, %zu metrics", r->id, r->variant, r->nm);
		else if (ev->lost)
			ui_print(u, "%s FAILED: %s", r->id, r->error);
		else
			ui_print(u, "%s %s FAILED: %s", r->id, r->variant, r->error ? r->error : "?");
		break;
	case ENGINE_EV_RUNS_END:
		ui_end(u);
		break;
	case ENGINE_EV_ERROR:
		cmd_error(u->ctx, "%s", ev->text);
		break;
	case ENGINE_EV_DIAGS:
		cmd_report_diags(u->ctx, ev->diags);
		break;
	case ENGINE_EV_WARNING:
		fprintf(stderr, "lab: warning: %s\n", ev->text);
		break;
	}
}

struct jobs_opts {
	unsigned jobs; /* 0: from the host's CPUs and the topology's vCPUs */
	bool oversubscribe;
	/* --json with several experiments: their reports are the elements
	 * of one JSON array (reports says how many went out so far) */
	bool json_array;
	size_t reports;
	const char *engine; /* --engine: the engine: section's type overridden (NULL: as it says) */
};

int cmd_engine_run(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
		   const char *resume_dir, unsigned jobs, bool oversubscribe, struct result_set **ret_rs)
{
	return cmd_engine_run_hooked(ctx, s, e, resume_dir, jobs, oversubscribe, NULL, ret_rs);
}

int cmd_engine_run_hooked(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
			  const char *resume_dir, unsigned jobs, bool oversubscribe, const struct cmd_engine_hook *hook,
			  struct result_set **ret_rs)
{
	_cleanup_free_ char *root = hook && hook->root ? xstrdup(hook->root) : cmd_results_dir(s);
	_cleanup_free_ char *layer = dirs_layer_dir(), *plugin = dirs_insn_plugin();
	struct run_ui u = { .ctx = ctx, .t0 = now_sec(), .tty = isatty(2) && !getenv("LAB_NO_TTY"), .hook = hook };
	struct spec_engine cluster = s->engine;
	struct engine_opts o = { .s = s, .root = root, .layer = layer, .insn_plugin = plugin, .set = &ctx->set,
				 .kernels = &ctx->kernels, .jobs = jobs, .oversubscribe = oversubscribe, .event = on_event,
				 .userdata = &u, .cluster = &cluster };
	int r;

	if (hook && hook->engine)
		cluster.type = streq(hook->engine, "slurm") ? SPEC_ENGINE_SLURM : SPEC_ENGINE_LOCAL;
	if (cluster.type == SPEC_ENGINE_SLURM && !cluster.spool) {
		cmd_error(ctx, "--engine slurm: %s has no engine: section with a spool: (a folder the head and every "
			       "node see)", s->path);
		return -1;
	}

	if (!plugin && spec_experiment_host_source(s, e, CATALOGUE_HOST_INSN_PLUGIN)) {
		cmd_error(ctx, "experiment '%s': the insn monitor needs lab's QEMU plugin " DIRS_INSN_PLUGIN_NAME
			       " (make builds it; LAB_INSN_PLUGIN names another)", e->name);
		return -1;
	}
	r = engine_run(&o, e, resume_dir, ret_rs);

	ui_end(&u);
	return r;
}

static int workflow_run(void *userdata, const struct spec *s, const struct spec_experiment *e, const char *resume_dir,
			const char *root, void (*started)(void *started_data, const char *id), void *started_data,
			struct result_set **ret_rs)
{
	const struct cmd_workflow *cw = userdata;
	const struct cmd_engine_hook hook = { .started = started, .userdata = started_data, .root = root };

	return cmd_engine_run_hooked(cw->ctx, s, e, resume_dir, cw->jobs, cw->oversubscribe, &hook, ret_rs);
}

static int workflow_load_spec(void *userdata, struct spec **ret)
{
	const struct cmd_workflow *cw = userdata;

	return cmd_load_spec(cw->ctx, cw->ctx->file, ret);
}

static void workflow_say(void *userdata, const char *line)
{
	const struct cmd_workflow *cw = userdata;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (cw->ctx->verbosity < 0)
		return;
	strbuf_addf(&sb, "lab: %s: ", cw->noun);
	term_escape_lines(&sb, line);
	strbuf_addch(&sb, '\n');
	fputs(sb.buf, stderr);
}

static void workflow_build_step(void *userdata, const char *variant, const char *step)
{
	_cleanup_free_ char *line = xasprintf("%s: %s", variant, step);

	workflow_say(userdata, line);
}

static int workflow_build(void *userdata, const struct spec *s, const char *name, char **ret_log)
{
	const struct cmd_workflow *cw = userdata;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf log = STRBUF_INIT;
	struct kbuild_progress p = { .step = workflow_build_step, .userdata = userdata };
	struct kbuild_opts o = { 0 };
	struct kvariant v = { 0 };
	struct kartifact a = { 0 };
	int r = kvariant_resolve(s, name, &v, &d);

	if (r < 0) {
		cmd_report_errors(cw->ctx, &d);
		return -1;
	}
	if ((r = kernel_lookup(s, &v, &a, &d)) == -ENOENT)
		r = kernel_build(s, &v, &o, &p, &a, &d);
	kartifact_release(&a);
	kvariant_release(&v);
	if (r == 0)
		return 0;
	for (size_t i = 0; i < d.n; i++)
		strbuf_addf(&log, "%s\n", d.v[i].msg);
	*ret_log = strbuf_detach(&log, NULL);
	return 1;
}

void cmd_workflow_init(struct cmd_workflow *cw, struct workflow *w)
{
	*w = (struct workflow){ .run = workflow_run, .load_spec = workflow_load_spec, .build = workflow_build,
				.say = workflow_say, .userdata = cw };
}

/* The engine on one experiment, then its comparison report; *any_failed
 * when the run failed (engine_failed). */
static int run_experiment(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
			  const char *resume_dir, struct jobs_opts *jo, bool *any_failed)
{
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *c = NULL;
	_cleanup_strbuf_ struct strbuf rep = STRBUF_INIT;
	struct report_opts ro = { .all = false };
	const struct cmd_engine_hook hook = { .engine = jo->engine };

	if (cmd_engine_run_hooked(ctx, s, e, resume_dir, jo->jobs, jo->oversubscribe, &hook, &rs) < 0)
		return -1;
	c = compare_build(rs);
	if (engine_failed(rs, c))
		*any_failed = true;
	if (jo->json_array)
		strbuf_addstr(&rep, jo->reports ? "," : "[");
	if (ctx->json)
		report_format_json(c, NULL, &rep);
	else
		report_format_text(c, &ro, &rep);
	cmd_write(&rep);
	jo->reports++;
	return 0;
}

/* --jobs against an experiment before anything is created. */
static int check_jobs(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
		      const struct jobs_opts *jo)
{
	_cleanup_free_ char *err = NULL;

	if (engine_check_jobs(s, e, jo->jobs, jo->oversubscribe, &err) < 0) {
		cmd_error(ctx, "%s", err);
		return -1;
	}
	return 0;
}

/*
 * A run made with --set or --kernels is resumed with the same values: they
 * are read from the run's "set" and "kernels" files and lab.yaml is loaded
 * again with them.
 */
static int resume_set(struct lab_ctx *ctx, const char *dir, struct spec **s)
{
	_cleanup_free_ char *err = NULL;
	int a = engine_resume_values(dir, "set", "--set", &ctx->set, &err);
	int b = a < 0 ? -1 : engine_resume_values(dir, "kernels", "--kernels", &ctx->kernels, &err);

	if (a < 0 || b < 0) {
		cmd_error(ctx, "%s", err);
		return -1;
	}
	if (!a && !b)
		return 0;
	spec_free(*s);
	*s = NULL;
	return cmd_load_spec(ctx, ctx->file, s);
}

/* --resume RUN_ID: the stored run's experiment, with the values it was made with. */
static int run_resumed(struct lab_ctx *ctx, struct spec **s, const char *id, char **dir, struct jobs_opts *jo,
		       bool *failed)
{
	_cleanup_free_ char *root = cmd_results_dir(*s), *name = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	const struct spec_experiment *e;
	int r = engine_resume_find(root, id, dir, &name, &d);

	if (r == -ENOENT)
		cmd_error(ctx, "no stored run '%s' under %s (lab ls lists them)", id, root);
	else if (r < 0)
		cmd_report_diags(ctx, &d);
	if (r < 0)
		return r == -ENOENT ? EXIT_USAGE : EXIT_FAILED;
	if (resume_set(ctx, *dir, s) < 0)
		return EXIT_USAGE;
	if (!(e = spec_find_experiment(*s, name))) {
		cmd_error(ctx, "run %s is of experiment '%s', which %s no longer has", id, name, (*s)->path);
		return EXIT_USAGE;
	}
	if (check_jobs(ctx, *s, e, jo) < 0)
		return EXIT_USAGE;
	return run_experiment(ctx, *s, e, *dir, jo, failed) < 0 ? EXIT_FAILED : EXIT_OK;
}

/* The experiments named, each checked first (unknown names are reported
 * by the planner, with suggestions), then each run. */
static int run_named(const struct lab_ctx *ctx, const struct spec *s, int n, char **given, bool as_declared,
		     struct jobs_opts *jo, bool *failed)
{
	_cleanup_strv_ struct strv only = STRV_INIT;
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	char **names;
	int rc = EXIT_OK;

	if (!n) {
		cmd_error(ctx, "run: name the experiments to run (lab plan lists them)");
		return EXIT_USAGE;
	}
	cmd_stand_ins(ctx, s, n, given, as_declared, &only);
	names = only.v;
	if (plan_build(s, &only, &p, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	for (int i = 0; i < n; i++)
		if (check_jobs(ctx, s, spec_find_experiment(s, names[i]), jo) < 0)
			return EXIT_USAGE;
	jo->json_array = ctx->json && n > 1;
	for (int i = 0; i < n; i++)
		if (run_experiment(ctx, s, spec_find_experiment(s, names[i]), NULL, jo, failed) < 0)
			rc = EXIT_FAILED;
	if (jo->json_array) {
		_cleanup_strbuf_ struct strbuf end = STRBUF_INIT;

		strbuf_addstr(&end, jo->reports ? "]\n" : "[]\n");
		cmd_write(&end);
	}
	return rc;
}

struct run_opts {
	const char *resume;
	const char *engine;
	unsigned jobs;
	bool oversubscribe;
	bool as_declared;
};

const struct lab_option run_options[] = {
	OPT(struct run_opts, jobs, OPT_UINT, 'j', "jobs", "N", "guests at a time (default: from the host's CPUs)",
	    .min = 1, .max = 256, .what = "a number of guests at a time (1-256)"),
	OPT(struct run_opts, oversubscribe, OPT_FLAG, 0, "oversubscribe", NULL, "allow more vCPUs than host CPUs"),
	OPT(struct run_opts, resume, OPT_STRING, 0, "resume", "RUN_ID", "run the runs a stored run still has pending"),
	OPT(struct run_opts, engine, OPT_CHOICE, 0, "engine", "ENGINE",
	    "where the boots run: local, or slurm (the cluster of lab.yaml's engine: section)", .choices = "local|slurm"),
	OPT(struct run_opts, as_declared, OPT_FLAG, 0, "as-declared", NULL,
	    "run the experiments named, even where KVM does not work and one names a stand-in (without-kvm)"),
	{ 0 },
};

int cmd_run(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *resume = NULL, *state = dirs_state();
	struct run_opts o = { 0 };
	int first = cmd_options_parse(ctx, "run", NULL, OPTS_ANYWHERE, argc, argv, &o);
	struct jobs_opts jo = { .jobs = o.jobs, .oversubscribe = o.oversubscribe, .engine = o.engine };
	bool failed = false;
	int rc;

	if (first < 0)
		return cmd_options_exit(first);
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	{
		/* VMs a killed lab left behind go first */
		_cleanup_strv_ struct strv removed = STRV_INIT;
		_cleanup_diags_ struct diags d = { 0 };

		vm_gc(state, false, &removed, &d);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	if (o.resume) {
		if (first < argc) {
			cmd_error(ctx, "run: --resume takes the experiment from the stored run; name no experiment");
			return EXIT_USAGE;
		}
		rc = run_resumed(ctx, &s, o.resume, &resume, &jo, &failed);
	} else {
		rc = run_named(ctx, s, argc - first, argv + first, o.as_declared, &jo, &failed);
	}
	return rc != EXIT_OK ? rc : failed ? EXIT_FAILED : EXIT_OK;
}
