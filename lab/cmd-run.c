/* SPDX-License-Identifier: MIT */
/*
 * lab run [--resume RUN_ID] [EXPERIMENT...]: for each experiment, a run
 * folder in the store, the missing kernels and image built, then the plan
 * executed in order (the compared variants interleaved): each run boots its
 * guest, runs the workload between the monitors, parses, stores, and the
 * journal and the index are updated before the next one starts. A failed
 * run is recorded with its reason and the rest go on; --resume finishes
 * the pending runs of a stored run. Ends with the comparison report.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "kernel/build.h"
#include "kernel/source.h"
#include "kernel/variant.h"
#include "plan/plan.h"
#include "result/compare.h"
#include "result/report.h"
#include "run/index.h"
#include "run/runner.h"
#include "run/store.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/command.h"
#include "util/fs.h"
#include "util/path.h"
#include "vm/vm.h"
#include "util/banned.h"

/* The holder of the VM of the run in progress: a signal tears it down. */
static volatile pid_t current_holder;

static void on_signal(int sig)
{
	if (current_holder > 0)
		kill(current_holder, SIGTERM);
	signal(sig, SIG_DFL);
	raise(sig);
}

struct run_ui {
	const struct lab_ctx *ctx;
	size_t done, total;
	double t0;
};

static void ui_step(void *userdata, const char *run, const char *what)
{
	struct run_ui *u = userdata;
	double el = now_sec() - u->t0;

	if (u->ctx->verbosity < 0)
		return;
	if (u->done)
		fprintf(stderr, "lab: [%zu/%zu, %.0f s, ETA %.0f s] %s: %s\n", u->done + 1, u->total, el,
			el / u->done * (u->total - u->done), run, what);
	else
		fprintf(stderr, "lab: [%zu/%zu, %.0f s] %s: %s\n", u->done + 1, u->total, el, run, what);
}

static void ui_vm_step(void *userdata, const char *vm, const char *what)
{
	ui_step(userdata, vm, what);
}

static void ui_build_step(void *userdata, const char *name, const char *what)
{
	const struct lab_ctx *ctx = userdata;

	if (ctx->verbosity >= 0)
		fprintf(stderr, "lab: %s: %s\n", name, what);
}

/* The experiment's expectations and variants into a fresh result set with every run pending. */
static struct result_set *pending_set(const struct spec *s, const struct spec_experiment *e, const struct plan *p,
				      const char *id)
{
	struct result_set *rs = result_set_new(id, e->name);
	_cleanup_strv_ struct strv variants = STRV_INIT;

	spec_experiment_variants(s, e, &variants);
	for (size_t i = 0; i < variants.n; i++)
		strv_push(&rs->variants, variants.v[i]);
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_run *pr = &p->runs[i];
		_cleanup_free_ char *g = runner_group_name(pr);

		if (streq(pr->experiment, e->name))
			result_add_run(rs, pr->id, pr->kernel, g, pr->job, pr->repeat);
	}
	for (size_t j = 0; j < e->njobs; j++)
		for (size_t k = 0; k < e->jobs[j].nexpect; k++) {
			const struct spec_expect *x = &e->jobs[j].expect[k];

			result_add_expect(rs, j, x->metric,
					  x->dir == EXPECT_INCREASE ? DIR_INCREASE
					  : x->dir == EXPECT_DECREASE ? DIR_DECREASE
								      : DIR_UNCHANGED,
					  x->effect, x->has_effect);
		}
	return rs;
}

/* The folder and the whole index entry (with the verdicts: a comparison of every run). */
static int save(const struct lab_ctx *ctx, const char *root, const char *dir, const struct result_set *rs)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *sum = index_verdict_summary(rs);

	if (store_save(dir, rs, &d) < 0 || index_put(root, rs, sum, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	return 0;
}

/* After one run: the journal and that run's index rows only. */
static int save_run(const struct lab_ctx *ctx, const char *root, const char *dir, const struct result_set *rs,
		    size_t i)
{
	_cleanup_diags_ struct diags d = { 0 };

	if (store_save(dir, rs, &d) < 0 || index_put_run(root, rs, i, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	return 0;
}

/* Every variant built (or found) and the image: artifacts in variant order. */
static int prepare(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
		   const struct strv *variants, struct kartifact *arts, struct kvariant *vars,
		   struct image_artifact *img)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *layer = lab_layer_dir();
	struct kbuild_progress kp = { .step = ui_build_step, .userdata = (void *)ctx };
	struct image_progress ip = { .step = ui_build_step, .userdata = (void *)ctx };
	struct kbuild_opts ko = { 0 };
	struct image_opts io = { .layer = layer };
	const struct spec_image *im = cmd_find_image(ctx, s, e->image.name ? e->image.name : "minimal");

	if (!im)
		return -1;
	for (size_t i = 0; i < variants->n; i++) {
		int r;

		if (kvariant_resolve(s, variants->v[i], &vars[i], &d) < 0)
			goto fail;
		r = kernel_lookup(s, &vars[i], &arts[i], &d);
		if (r == -ENOENT)
			r = kernel_build(s, &vars[i], &ko, &kp, &arts[i], &d);
		if (r < 0)
			goto fail;
	}
	{
		int r = image_lookup(s, im, &io, img, &d);

		if (r == -ENOENT)
			r = image_build(s, im, &io, &ip, img, &d);
		if (r < 0)
			goto fail;
	}
	return 0;
fail:
	cmd_report_diags(ctx, &d);
	return -1;
}

static int catalogue_tar(const struct spec *s, const char *dir, char **ret)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_free_ char *tarp = path_join(dir, "workloads.tar");

	command_init(&c, "tar");
	command_args(&c, "-C", s->settings.catalogue, "--exclude=__pycache__", "-cf", tarp, ".", NULL);
	if (command_run(&c) != 0)
		return -EIO;
	*ret = TAKE_PTR(tarp);
	return 0;
}

static int run_one(const struct spec *s, const struct spec_experiment *e,
		   const char *dir, const char *tarp, const struct plan_run *pr, const struct kartifact *ka,
		   const struct kvariant *kv, const struct image_artifact *img, struct run_ui *ui,
		   struct result_run *out)
{
	_cleanup_free_ char *state = lab_state_dir(), *cache = lab_cache_dir(s);
	_cleanup_free_ char *rundir = xasprintf("%s/runs/%s", dir, pr->id);
	_cleanup_free_ char *name = xasprintf("run-%d", (int)getpid());
	_cleanup_diags_ struct diags d = { 0 };
	struct vm_progress vp = { .step = ui_vm_step, .userdata = ui };
	struct runner_progress rp = { .step = ui_step, .userdata = ui };
	const struct spec_topology *t = spec_find_topology(s, pr->topology);
	struct vm v = { 0 };
	int r;

	if ((r = path_mkdir_p(rundir, 0755)) < 0) {
		out->status = RUN_FAILED;
		out->error = xasprintf("cannot create %s: %s", rundir, strerror(-r));
		return 0;
	}
	struct vm_opts vo = {
		.name = name,
		.topo = t,
		.variant = kv->name,
		.kernel = ka,
		.image = img,
		.cache = cache,
		.experiment = e,
		.cmdline = kv->cmdline,
		.run_id = pr->id,
		.owner = getpid(),
		.accel = -1,
		.progress = &vp,
	};
	ui_step(ui, pr->id, "boot");
	if (vm_up(state, &vo, &v, &d) < 0) {
		_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT;

		for (size_t i = 0; i < d.n; i++)
			strbuf_addf(&msg, "%s%s", i ? "; " : "", d.v[i].msg);
		out->status = RUN_FAILED;
		out->error = xasprintf("boot failed: %s", msg.buf ? msg.buf : "?");
		/* keep what the console said */
		{
			_cleanup_free_ char *con = xasprintf("%s/vms/%s/console.log", state, name);
			_cleanup_free_ char *dst = path_join(rundir, "console.log");

			fs_copy_file(con, dst, true);
		}
		vm_down(state, name, &d);
		return 0;
	}
	current_holder = v.holder;
	struct runner_config rc = {
		.s = s,
		.e = e,
		.rundir = rundir,
		.catalogue_tar = tarp,
		.vm = &v,
		.kernel = ka,
		.image = img,
		.progress = &rp,
	};
	runner_exec(&rc, pr, out);
	ui_step(ui, pr->id, "shut down");
	{
		_cleanup_diags_ struct diags dd = { 0 };

		vm_down(state, name, &dd);
	}
	current_holder = 0;
	vm_release(&v);
	return 0;
}

static int run_experiment(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
			  const char *resume_dir, bool *any_failed)
{
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *root = cmd_results_dir(s), *id = NULL, *dir = NULL, *tarp = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_strv_ struct strv only = STRV_INIT, variants = STRV_INIT;
	_cleanup_strbuf_ struct strbuf pj = STRBUF_INIT, rep = STRBUF_INIT;
	struct kartifact *arts = NULL;
	struct kvariant *vars = NULL;
	struct image_artifact img = { 0 };
	struct run_ui ui = { .ctx = ctx, .t0 = now_sec() };
	int ret = 0;

	strv_push(&only, e->name);
	if (plan_build(s, &only, &p, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	if (resume_dir) {
		dir = xstrdup(resume_dir);
		if (store_load(dir, &rs, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return -1;
		}
		id = xstrdup(rs->id);
	} else {
		if (store_create(root, &id, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return -1;
		}
		dir = path_join(root, id);
		rs = pending_set(s, e, p, id);
		{
			_cleanup_free_ char *snap = path_join(dir, "lab.yaml");

			fs_copy_file(s->path, snap, true);
		}
		plan_format_json(p, &pj);
		{
			_cleanup_free_ char *pp = path_join(dir, "plan.json");

			fs_write_atomic(pp, pj.buf, pj.len, 0644);
		}
		if (save(ctx, root, dir, rs) < 0)
			return -1;
	}
	if (ctx->verbosity >= 0)
		fprintf(stderr, "lab: run %s: experiment %s, %zu runs, results in %s\n", id, e->name, rs->n, dir);
	if (e->boot == BOOT_ONCE && ctx->verbosity >= 0)
		fprintf(stderr, "lab: note: 'boot: once' is not honoured yet; every run boots its own guest\n");
	spec_experiment_variants(s, e, &variants);
	arts = xcalloc(variants.n, sizeof(*arts));
	vars = xcalloc(variants.n, sizeof(*vars));
	if (prepare(ctx, s, e, &variants, arts, vars, &img) < 0 || catalogue_tar(s, dir, &tarp) < 0) {
		ret = -1;
		goto out;
	}
	/* what the report repeats: each variant's release and its require: results */
	strv_release(&rs->mechanism);
	for (size_t v = 0; v < variants.n; v++) {
		_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;

		strbuf_addf(&m, "kernel %s: release %s, build %.16s", variants.v[v], arts[v].release ? arts[v].release : "?",
			    arts[v].key ? arts[v].key : "?");
		for (size_t k = 0; k < arts[v].nchecks; k++)
			strbuf_addf(&m, "; %s=%s %s", arts[v].checks[k].req->symbol, arts[v].checks[k].req->value,
				    arts[v].checks[k].ok ? "ok" : "FAILED");
		strv_push(&rs->mechanism, m.buf);
	}
	if (save(ctx, root, dir, rs) < 0) {
		ret = -1;
		goto out;
	}
	for (size_t i = 0; i < rs->n; i++)
		ui.total += rs->runs[i].status == RUN_PENDING;
	for (size_t i = 0; i < rs->n; i++) {
		struct result_run *r = &rs->runs[i];
		const struct plan_run *pr = NULL;
		ssize_t v;

		if (r->status != RUN_PENDING)
			continue;
		for (size_t k = 0; k < p->n; k++)
			if (streq(p->runs[k].id, r->id))
				pr = &p->runs[k];
		v = strv_index(&variants, r->variant);
		if (!pr || v < 0) {
			r->status = RUN_FAILED;
			r->error = xstrdup("not in the plan of lab.yaml any more (changed since the run started?)");
		} else {
			run_one(s, e, dir, tarp, pr, &arts[v], &vars[v], &img, &ui, r);
		}
		if (r->status == RUN_FAILED && ctx->verbosity >= 0)
			fprintf(stderr, "lab: %s FAILED: %s\n", r->id, r->error ? r->error : "?");
		ui.done++;
		if (save_run(ctx, root, dir, rs, i) < 0) {
			ret = -1;
			goto out;
		}
	}
	if (save(ctx, root, dir, rs) < 0) {
		ret = -1;
		goto out;
	}
	for (size_t i = 0; i < rs->n; i++)
		if (rs->runs[i].status == RUN_FAILED)
			*any_failed = true;
	{
		_cleanup_comparison_ struct comparison *c = compare_build(rs, 0.95);
		struct report_opts ro = { .all = false };

		/* an expectation the data contradicts fails the run like a failed run */
		for (size_t k = 0; k < c->nverdicts; k++)
			if (c->verdicts[k].v == VERDICT_REGRESSED)
				*any_failed = true;

		if (ctx->json)
			report_format_json(c, &rep);
		else
			report_format_text(c, &ro, &rep);
		cmd_write(&rep);
	}
out:
	for (size_t i = 0; i < variants.n; i++) {
		kartifact_release(&arts[i]);
		kvariant_release(&vars[i]);
	}
	free(arts);
	free(vars);
	image_artifact_release(&img);
	return ret;
}

int cmd_run(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "resume", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'J' },
		{ 0 },
	};
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *resume = NULL, *state = lab_state_dir();
	const char *resume_id = NULL;
	bool failed = false;
	int c, rc = EXIT_OK;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			resume_id = optarg;
			break;
		case 'J':
			ctx->json = true;
			break;
		case 'h':
			command_usage(command_find("run"), stdout);
			return EXIT_OK;
		default:
			cmd_error(ctx, "run: unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
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
	if (resume_id) {
		_cleanup_free_ char *root = cmd_results_dir(s);
		_cleanup_result_set_ struct result_set *rs = NULL;
		_cleanup_diags_ struct diags d = { 0 };
		const struct spec_experiment *e;

		if (optind < argc) {
			cmd_error(ctx, "run: --resume takes the experiment from the stored run; name no experiment");
			return EXIT_USAGE;
		}
		resume = store_find(root, resume_id);
		if (!resume) {
			cmd_error(ctx, "no stored run '%s' under %s (lab ls lists them)", resume_id, root);
			return EXIT_USAGE;
		}
		if (store_load(resume, &rs, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return EXIT_FAILED;
		}
		if (!(e = spec_find_experiment(s, rs->experiment))) {
			cmd_error(ctx, "run %s is of experiment '%s', which %s no longer has", resume_id, rs->experiment,
				  s->path);
			return EXIT_USAGE;
		}
		if (run_experiment(ctx, s, e, resume, &failed) < 0)
			rc = EXIT_FAILED;
		return rc != EXIT_OK ? rc : failed ? EXIT_FAILED : EXIT_OK;
	}
	if (optind == argc) {
		cmd_error(ctx, "run: name the experiments to run (lab plan lists them)");
		return EXIT_USAGE;
	}
	{
		/* unknown names are reported by the planner, with suggestions */
		_cleanup_strv_ struct strv only = STRV_INIT;
		_cleanup_plan_ struct plan *p = NULL;
		_cleanup_diags_ struct diags d = { 0 };

		for (int i = optind; i < argc; i++)
			strv_push(&only, argv[i]);
		if (plan_build(s, &only, &p, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return EXIT_USAGE;
		}
	}
	for (int i = optind; i < argc; i++)
		if (run_experiment(ctx, s, spec_find_experiment(s, argv[i]), NULL, &failed) < 0)
			rc = EXIT_FAILED;
	return rc != EXIT_OK ? rc : failed ? EXIT_FAILED : EXIT_OK;
}
