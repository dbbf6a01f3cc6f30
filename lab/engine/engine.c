/* SPDX-License-Identifier: MIT */
/*
 * The engine's lab side: the run folder, the builds, the groups and their
 * placement, the workers' lines (wire.h) into the result set, the journal
 * and the index; the policy asked for every next run; the boots recorded.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "../util/alloc.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/units.h"
#include "catalogue-tar.h"
#include "engine-priv.h"
#include "../store/index.h"
#include "guest-run.h"
#include "series.h"
#include "../store/snapshot.h"
#include "../store/store.h"
#include "../kernel/build.h"
#include "../image/image.h"
#include "../util/banned.h"

_Static_assert((int)OBSERVE_EQ == (int)OBS_EQ && (int)OBSERVE_GE == (int)OBS_GE && (int)OBSERVE_HIGHER == (int)OBS_HIGHER &&
		       (int)OBSERVE_SAME == (int)OBS_SAME,
	       "lab.yaml observe: relations and the stored ones are the same list");

_Static_assert((int)SPEC_STAT_WELCH_LOG == (int)STAT_WELCH_LOG && (int)SPEC_STAT_MANN_WHITNEY == (int)STAT_MANN_WHITNEY &&
		       (int)SPEC_STAT_BOOTSTRAP == (int)STAT_BOOTSTRAP && SPEC_STAT_COUNT == STAT_METHOD_COUNT,
	       "lab.yaml statistics and the decision engine's methods are the same list");

/* lab.yaml's decide: (and repeat: auto) as the result set stores it. */
static void pending_decide(struct result_set *rs, const struct spec_experiment *e)
{
	const struct spec_decide *d = &e->decide;

	rs->decide = (struct decide_params){
		.alpha = d->alpha, .power = d->power, .q = d->q, .method = (enum stat_method)d->statistic,
		.sequential = e->repeat_auto, .min_boots = d->min_boots, .max_boots = d->max_boots,
	};
}

static void pending_expectations(struct result_set *rs, const struct spec_experiment *e)
{
	pending_decide(rs, e);
	for (size_t j = 0; j < e->njobs; j++)
		for (size_t k = 0; k < e->jobs[j].nexpect; k++) {
			const struct spec_expect *x = &e->jobs[j].expect[k];

			result_add_expect(rs, j, x->metric,
					  x->dir == EXPECT_INCREASE ? DIR_INCREASE
					  : x->dir == EXPECT_DECREASE ? DIR_DECREASE
								      : DIR_UNCHANGED,
					  x->effect, x->has_effect);
			rs->expect[rs->nexpect - 1].method = x->statistic; /* -1: the experiment's */
		}
	for (size_t i = 0; i < e->nobserve; i++) {
		const struct spec_observe *o = &e->observe[i];
		_cleanup_strv_ struct strv ks = STRV_INIT;

		for (size_t k = 0; k < o->kernels.n; k++)
			strv_push(&ks, o->kernels.v[k].name);
		result_add_observe(rs, o->metric, (enum observe_rel)o->op, o->value, &ks, o->says);
		rs->observe[rs->nobserve - 1].margin = o->margin;
	}
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
		_cleanup_free_ char *g = plan_run_group(pr);

		if (streq(pr->experiment, e->name))
			result_add_run(rs, pr->id, pr->kernel, g, pr->job, pr->repeat);
	}
	pending_expectations(rs, e);
	run_series_record(rs, s);
	{
		const struct spec_topology *t = spec_find_topology(s, e->topology.name);

		rs->icount = t && t->timing == TIMING_ICOUNT;
	}
	return rs;
}

/* One line per value into the run's folder (nothing when there are none). */
static void save_lines(const char *dir, const char *name, const struct strv *v)
{
	_cleanup_free_ char *p = path_join(dir, name);

	if (v && v->n)
		fs_write_lines(p, v, 0644);
}

/* The values a run was made with, a line each; none when there is no such file. */
static int saved_values(const char *dir, const char *name, struct strv *ret, char **ret_err)
{
	_cleanup_free_ char *sp = path_join(dir, name);
	int r;

	if (!path_is_file(sp))
		return 0;
	if ((r = fs_read_lines(sp, 64 * 1024, ret)) < 0) {
		*ret_err = xasprintf("cannot read %s: %s", sp, strerror(-r));
		return -1;
	}
	return 0;
}

int engine_resume_values(const char *dir, const char *name, const char *option, struct strv *given,
			 char **ret_err)
{
	_cleanup_strv_ struct strv stored = STRV_INIT;
	bool same;

	if (saved_values(dir, name, &stored, ret_err) < 0)
		return -1;
	same = stored.n == given->n;
	for (size_t i = 0; same && i < stored.n; i++)
		same = streq(stored.v[i], given->v[i]);
	if (same)
		return 0;
	if (given->n) {
		*ret_err = stored.n ? xasprintf("run: --resume takes the %s values the run was made with (its '%s' file); "
						"give none", option, name)
				    : xasprintf("run: --resume takes the %s values the run was made with (none); give none",
						option);
		return -1;
	}
	for (size_t i = 0; i < stored.n; i++)
		strv_push(given, stored.v[i]);
	return 1;
}

static void build_step(void *userdata, const char *name, const char *what)
{
	engine_emit(userdata, &(struct engine_event){ .type = ENGINE_EV_BUILD_STEP, .name = name, .what = what });
}

static void build_objects(void *userdata, const char *name, size_t done, size_t expected)
{
	engine_emit(userdata, &(struct engine_event){ .type = ENGINE_EV_BUILD_OBJECTS, .name = name, .objects = done,
						      .objects_expected = expected });
}

static const struct spec_image *find_image(const struct spec *s, const char *name)
{
	for (size_t i = 0; i < s->nimages; i++)
		if (streq(s->images[i].name, name))
			return &s->images[i];
	return NULL;
}

/* The image built in a child process, silent: its steps would interleave
 * with the kernel build's progress. Returns the child, or 0 when it cannot
 * start (the image is then built in the foreground after the kernels). */
static pid_t image_in_background(struct engine *x, const struct spec_image *im, const struct image_opts *io)
{
	pid_t pid;

	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		_cleanup_diags_ struct diags d = { 0 };
		struct image_artifact a = { 0 };
		int r;

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(128 + SIGTERM);
		r = image_build(x->s, im, io, NULL, &a, &d);
		image_artifact_release(&a);
		/* no atexit handlers: they belong to the parent */
		_exit(r < 0 ? 1 : 0);
	}
	build_step(x, im->name, "building in the background while the kernels compile");
	return pid;
}

/* The child's exit, 0 when it built the image. */
static int image_wait(pid_t pid)
{
	int status = 0;
	pid_t w;

	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	return w == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* Every variant built (or found) and the image: artifacts in variant order. */
static int prepare(struct engine *x, const struct strv *variants, struct kartifact *arts, struct kvariant *vars,
		   struct image_artifact *img)
{
	_cleanup_diags_ struct diags d = { 0 };
	struct kbuild_progress kp = { .step = build_step, .objects = build_objects, .userdata = x };
	struct image_progress ip = { .step = build_step, .userdata = x };
	struct kbuild_opts ko = { 0 };
	struct image_opts io = { .layer = x->o->layer };
	const char *iname = x->e->image.name ? x->e->image.name : "minimal";
	const struct spec_image *im = find_image(x->s, iname);
	size_t missing = 0;
	pid_t bg = 0;
	int r = 0;

	if (!im) {
		engine_emit_text(x, ENGINE_EV_ERROR, "no image '%s' in %s", iname, x->s->path);
		return -1;
	}
	for (size_t i = 0; i < variants->n && r >= 0; i++) {
		if ((r = kvariant_resolve(x->s, variants->v[i], &vars[i], &d)) < 0)
			break;
		if ((r = kernel_lookup(x->s, &vars[i], &arts[i], &d)) == -ENOENT) {
			missing++;
			r = 0;
		}
	}
	/* a missing image builds in a child while missing kernels compile: an
	 * image build waits on the network and dpkg, a kernel build on the CPU */
	if (r >= 0 && missing) {
		_cleanup_diags_ struct diags quiet = { 0 };

		if (image_lookup(x->s, im, &io, img, &quiet) == -ENOENT)
			bg = image_in_background(x, im, &io);
		image_artifact_release(img);
	}
	for (size_t i = 0; i < variants->n && r >= 0; i++)
		if (!arts[i].bzimage)
			r = kernel_build(x->s, &vars[i], &ko, &kp, &arts[i], &d);
	if (bg > 0) {
		double t0 = now_sec();
		bool built = image_wait(bg) == 0;
		_cleanup_free_ char *what =
			built ? xasprintf("built in the background (waited %.0f s for it)", now_sec() - t0)
			: r >= 0 ? xstrdup("the background build failed; building it again here, to say why")
				 : xasprintf("the background build failed too (its log: %s-failed.log in the image cache)",
					     im->name);

		build_step(x, im->name, what);
	}
	/* the child's failure is built again here, in the foreground, for its
	 * diagnostics */
	if (r >= 0 && (r = image_lookup(x->s, im, &io, img, &d)) == -ENOENT)
		r = image_build(x->s, im, &io, &ip, img, &d);
	if (r < 0) {
		engine_emit_diags(x, &d);
		return -1;
	}
	return 0;
}

/* A cluster node: the head's kernels, image and catalogue, as they are in the spool. */
static int prebuilt(struct engine *x, const struct strv *variants, struct kartifact *arts, struct kvariant *vars,
		    struct image_artifact *img, char **ret_tar)
{
	const struct engine_prebuilt *pb = x->o->prebuilt;
	_cleanup_diags_ struct diags d = { 0 };

	if (pb->nkernels != variants->n || !pb->image) {
		engine_emit_text(x, ENGINE_EV_ERROR, "the shard names %zu kernels for the experiment's %zu variants",
				 pb->nkernels, variants->n);
		return -1;
	}
	for (size_t i = 0; i < variants->n; i++) {
		const struct kartifact *k = &pb->kernels[i];

		if (kvariant_resolve_built(x->s, variants->v[i], &vars[i], &d) < 0) {
			engine_emit_diags(x, &d);
			return -1;
		}
		arts[i] = (struct kartifact){
			.name = xstrdup(variants->v[i]), .key = xstrdup(k->key), .dir = xstrdup(k->dir),
			.release = xstrdup(k->release), .bzimage = xstrdup(k->bzimage), .config = xstrdup(k->config),
			.system_map = k->system_map ? xstrdup(k->system_map) : NULL, .modules = k->modules, .cached = true,
		};
	}
	*img = (struct image_artifact){
		.name = xstrdup(pb->image->name), .id = xstrdup(pb->image->id), .dir = xstrdup(pb->image->dir),
		.qcow2 = xstrdup(pb->image->qcow2), .recipe_key = xstrdup(pb->image->recipe_key),
		.disk_bytes = pb->image->disk_bytes, .virtual_bytes = pb->image->virtual_bytes,
	};
	*ret_tar = xstrdup(pb->catalogue_tar);
	return 0;
}

static int catalogue(struct engine *x, const char *dir, char **ret)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *tarp = path_join(dir, "workloads.tar");

	if (catalogue_archive(x->s->settings.catalogue, tarp, &d) < 0) {
		engine_emit_diags(x, &d);
		return -EIO;
	}
	*ret = TAKE_PTR(tarp);
	return 0;
}

/*
 * The run's snapshot (snapshot.h): everything its lab.yaml names, each
 * variant's merged .config and the image's package list, so the folder
 * (and a bundle of it) can be checked without the project. A resumed run
 * keeps the one it has. Not keeping one is said, not a failed run.
 */
static void snapshot(struct engine *x, const char *dir, const struct strv *variants, const struct kartifact *arts,
		     const struct image_artifact *img)
{
	_cleanup_free_ char *listing = path_join(dir, SNAPSHOT_LISTING), *yaml = path_join(dir, "lab.yaml");
	_cleanup_free_ struct snapshot_built *configs = xcalloc(variants->n + 1, sizeof(*configs));
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;
	struct snapshot_built packages = { .name = img->name, .path = img->packages };
	struct snapshot_input in = { .s = x->s, .spec_file = yaml, .experiment = x->e->name, .set = x->o->set, .kernels = x->o->kernels,
				     .layer = x->o->layer, .configs = configs, .packages = &packages,
				     .npackages = img->name && img->packages ? 1 : 0 };

	if (access(listing, F_OK) == 0)
		return;
	for (size_t i = 0; i < variants->n; i++)
		if (arts[i].config)
			configs[in.nconfigs++] = (struct snapshot_built){ .name = variants->v[i], .path = arts[i].config };
	if (snapshot_write(&in, dir, &d) == 0)
		return;
	diags_format(&d, &why);
	engine_emit_text(x, ENGINE_EV_NOTE, "the run keeps no snapshot of its inputs: %s", why.buf ? why.buf : "");
}

/* What the report repeats: each variant's release and its require: results. */
static void record_mechanism(struct result_set *rs, const struct strv *variants, const struct kartifact *arts)
{
	strv_release(&rs->mechanism);
	for (size_t v = 0; v < variants->n; v++) {
		_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;

		strbuf_addf(&m, "kernel %s: release %s, build %.16s", variants->v[v],
			    arts[v].release ? arts[v].release : "?", arts[v].key ? arts[v].key : "?");
		for (size_t k = 0; k < arts[v].nchecks; k++)
			strbuf_addf(&m, "; %s=%s %s", arts[v].checks[k].req->symbol, arts[v].checks[k].req->value,
				    arts[v].checks[k].ok ? "ok" : "FAILED");
		strv_push(&rs->mechanism, m.buf);
	}
}

/* The plan of the experiment alone; NULL after the error went out. */
static struct plan *plan_of(struct engine *x, bool quiet)
{
	_cleanup_strv_ struct strv only = STRV_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct plan *p = NULL;

	strv_push(&only, x->e->name);
	if (plan_build(x->s, &only, &p, &d) < 0) {
		if (!quiet)
			engine_emit_diags(x, &d);
		return NULL;
	}
	return p;
}

/* A new run folder: the lab.yaml snapshot, the --set values and --kernels
 * the plan was made with (--resume applies them again), the plan, every
 * run pending. */
static int create_run(struct engine *x, const struct plan *p, char **ret_dir, struct result_set **ret_rs)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *id = NULL, *dir = NULL, *snap = NULL, *pp = NULL;
	_cleanup_strbuf_ struct strbuf pj = STRBUF_INIT;
	_cleanup_result_set_ struct result_set *rs = NULL;

	if (store_create(x->o->root, &id, &d) < 0) {
		engine_emit_diags(x, &d);
		return -1;
	}
	dir = path_join(x->o->root, id);
	rs = pending_set(x->s, x->e, p, id);
	snap = path_join(dir, "lab.yaml");
	fs_copy_file(x->s->path, snap, true);
	save_lines(dir, "set", x->o->set);
	save_lines(dir, "kernels", x->o->kernels);
	plan_format_json(p, &pj);
	pp = path_join(dir, "plan.json");
	fs_write_atomic(pp, pj.buf, pj.len, 0644);
	if (engine_save(x, dir, rs) < 0)
		return -1;
	*ret_dir = TAKE_PTR(dir);
	*ret_rs = TAKE_PTR(rs);
	return 0;
}

static int open_run(struct engine *x, const struct plan *p, const char *resume_dir, char **ret_dir,
		    struct result_set **ret_rs)
{
	_cleanup_diags_ struct diags d = { 0 };

	if (!resume_dir)
		return create_run(x, p, ret_dir, ret_rs);
	if (store_load(resume_dir, ret_rs, &d) < 0) {
		engine_emit_diags(x, &d);
		return -1;
	}
	*ret_dir = xstrdup(resume_dir);
	return 0;
}

/* `repeat: auto`: the sequential policy with lab.yaml's budget. */
static void sequential_begin(struct engine *x, struct seq_policy *sp)
{
	const struct spec_decide *d = &x->e->decide;

	*sp = (struct seq_policy){ .min_boots = d->min_boots, .max_runs = d->max_runs };
	if (d->max_time_usec)
		sp->deadline = now_sec() + (double)d->max_time_usec / 1e6;
	x->prog.budget_end = sp->deadline;
	x->policy = (struct run_policy){ .ops = &run_policy_sequential_ops, .data = sp };
}

/* The planned runs a stopped sequence did not need leave the run; said how it ended. */
static void sequential_end(struct engine *x, struct seq_policy *sp)
{
	_cleanup_free_ bool *drop = xcalloc(x->rs->n + 1, sizeof(bool));
	size_t n;

	for (size_t i = 0; i < x->rs->n; i++) {
		const struct plan_run *pr = engine_plan_run(x, x->rs->runs[i].id);

		drop[i] = x->rs->runs[i].status == RUN_PENDING && !x->issued[i] &&
			  (seq_policy_skipped(sp, i) || (sp->stop != SEQ_RUNNING && pr && pr->boot >= sp->stop_boot));
	}
	n = result_drop_runs(x->rs, drop);
	if (sp->one_run_a_boot)
		engine_emit_text(x, ENGINE_EV_NOTE,
				 "repeat: auto: look %u found the boots' means varying more between boots than within; "
				 "boots from boot %u on ran each variant and workload once", sp->one_run_a_boot, sp->cut_from);
	if (sp->kept_by)
		engine_emit_text(x, ENGINE_EV_NOTE, "repeat: auto: look %u went on for the series: %s%s", sp->kept_by_look,
				 sp->kept_by, sp->kept_by_series_only ? " (every declared verdict was decided)" : "");
	if (sp->stop != SEQ_RUNNING)
		engine_emit_text(x, ENGINE_EV_NOTE,
				 "repeat: auto: stopped before boot %u of each variant after %u look%s: %s; %zu planned "
				 "run%s not needed", sp->stop_boot, sp->looks, sp->looks == 1 ? "" : "s",
				 seq_stop_describe(sp->stop), n, n == 1 ? "" : "s");
	else
		engine_emit_text(x, ENGINE_EV_NOTE,
				 "repeat: auto: every boot of the budget ran (%u a variant): %u look%s before them left "
				 "something undecided; the report is the last look", x->e->decide.max_boots, sp->looks,
				 sp->looks == 1 ? "" : "s");
	seq_policy_release(sp);
}

void engine_executor_run(struct engine *x, struct executor_run *ret)
{
	*ret = (struct executor_run){ .o = x->o, .s = x->s, .e = x->e, .rs = x->rs, .dir = x->dir,
				      .variants = x->variants, .arts = x->arts, .img = x->img, .groups = x->groups,
				      .ngroups = x->ngroups, .total = x->prog.total, .engine = x };
}

/* The pending runs, by the executor: groups, the policy, the runs. */
static int execute(struct engine *x)
{
	const struct executor_ops *ex = x->o->cluster && x->o->cluster->type == SPEC_ENGINE_SLURM ? &executor_slurm
												   : &executor_local;
	struct seq_policy sp = { 0 };
	struct executor_run er;
	bool seq = x->e->repeat_auto && !(x->o && x->o->policy);
	int r;

	x->t0 = now_sec();
	if (seq)
		sequential_begin(x, &sp);
	engine_sched_init(x);
	engine_make_groups(x);
	for (size_t i = 0; i < x->rs->n; i++)
		x->prog.total += x->rs->runs[i].status == RUN_PENDING;
	engine_progress_looks(x);
	engine_emit(x, &(struct engine_event){ .type = ENGINE_EV_RUNS_BEGIN });
	engine_executor_run(x, &er);
	r = ex->execute(&er);
	if (seq)
		sequential_end(x, &sp);
	if (r < 0)
		return -1;
	engine_emit(x, &(struct engine_event){ .type = ENGINE_EV_RUNS_END });
	/* a bare-metal host stays on the last variant: say how to get it back */
	for (size_t i = 0; i < x->e->hosts.n; i++)
		if (engine_find_host(x->s, x->e->hosts.v[i].name, HOST_SSH))
			engine_emit_text(x, ENGINE_EV_NOTE,
				  "host %s still runs the last kernel lab booted: 'lab host restore %s' boots its own",
				  x->e->hosts.v[i].name, x->e->hosts.v[i].name);
	return 0;
}

/* The variants built, the catalogue archived, the runs done, the folder saved. */
static int run_in(struct engine *x, const struct plan *p, const char *dir, struct result_set *rs)
{
	_cleanup_strv_ struct strv variants = STRV_INIT;
	_cleanup_free_ char *tarp = NULL;
	struct kartifact *arts;
	struct kvariant *vars;
	struct image_artifact img = { 0 };
	int ret = -1;

	spec_experiment_variants(x->s, x->e, &variants);
	arts = xcalloc(variants.n + 1, sizeof(*arts));
	vars = xcalloc(variants.n + 1, sizeof(*vars));
	if (x->o->prebuilt) {
		if (prebuilt(x, &variants, arts, vars, &img, &tarp) < 0)
			goto out;
	} else {
		if (prepare(x, &variants, arts, vars, &img) < 0 || catalogue(x, dir, &tarp) < 0)
			goto out;
		snapshot(x, dir, &variants, arts, &img);
		record_mechanism(rs, &variants, arts);
	}
	if (engine_save(x, dir, rs) < 0)
		goto out;
	x->p = p;
	x->rs = rs;
	x->dir = dir;
	x->tarp = tarp;
	x->variants = &variants;
	x->arts = arts;
	x->vars = vars;
	x->img = &img;
	/* a journal write that failed during the runs is tried again at the end */
	if (execute(x) == 0 && engine_save(x, dir, rs) == 0)
		ret = 0;
out:
	engine_emit(x, &(struct engine_event){ .type = ENGINE_EV_RUNS_END });
	engine_release(x);
	for (size_t i = 0; i < variants.n; i++) {
		kartifact_release(&arts[i]);
		kvariant_release(&vars[i]);
	}
	free(arts);
	free(vars);
	image_artifact_release(&img);
	return ret;
}

int engine_run(const struct engine_opts *o, const struct spec_experiment *e, const char *resume_dir,
	       struct result_set **ret_rs)
{
	struct engine x = { .o = o, .s = o->s, .e = e, .lab = getpid() };
	_cleanup_plan_ struct plan *p = plan_of(&x, false);
	_cleanup_free_ char *dir = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;

	if (!p)
		return -1;
	if (o->cluster && o->cluster->type == SPEC_ENGINE_SLURM) {
		_cleanup_free_ char *err = NULL;

		struct executor_run er;

		/* before a folder is made or a kernel built */
		engine_executor_run(&x, &er);
		if (engine_cluster_check(&er, true, &err) < 0) {
			engine_emit_text(&x, ENGINE_EV_ERROR, "%s", err);
			return -1;
		}
	}
	if (open_run(&x, p, resume_dir, &dir, &rs) < 0)
		return -1;
	engine_emit(&x, &(struct engine_event){
				.type = ENGINE_EV_STARTED, .id = rs->id, .experiment = e->name, .dir = dir, .nruns = rs->n });
	if (run_in(&x, p, dir, rs) < 0)
		return -1;
	*ret_rs = TAKE_PTR(rs);
	return 0;
}

int engine_check_jobs(const struct spec *s, const struct spec_experiment *e, unsigned jobs, bool oversubscribe,
		      char **ret_err)
{
	struct engine_opts o = { .s = s, .jobs = jobs, .oversubscribe = oversubscribe };
	struct engine x = { .o = &o, .s = s, .e = e };
	_cleanup_plan_ struct plan *p = plan_of(&x, true);
	_cleanup_strv_ struct strv variants = STRV_INIT;
	unsigned n;

	if (!p)
		return 0; /* said by the run itself */
	spec_experiment_variants(s, e, &variants);
	x.ngroups = e->boot == BOOT_ONCE ? variants.n * (e->hosts.n ? e->hosts.n : 1)
		    : e->boot == BOOT_SIDE_BY_SIDE ? (e->hosts.n ? e->hosts.n : 1) : p->n;
	return engine_place(&x, true, &n, ret_err);
}

int engine_resume_find(const char *root, const char *id, char **ret_dir, char **ret_experiment, struct diags *d)
{
	_cleanup_free_ char *dir = store_find(root, id);
	_cleanup_result_set_ struct result_set *rs = NULL;
	int r;

	if (!dir)
		return -ENOENT;
	if ((r = store_load(dir, &rs, d)) < 0)
		return r;
	*ret_experiment = xstrdup(rs->experiment);
	*ret_dir = TAKE_PTR(dir);
	return 0;
}

bool engine_failed(const struct result_set *rs, const struct comparison *c)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->runs[i].status == RUN_FAILED)
			return true;
	/* an expectation the data contradicts fails the run like a failed run */
	for (size_t k = 0; k < c->nverdicts; k++)
		if (c->verdicts[k].v == VERDICT_REGRESSED || c->verdicts[k].v == VERDICT_CHANGED)
			return true;
	/* and so does a mechanism check that did not hold */
	for (size_t k = 0; k < c->nobs; k++)
		if (c->obs[k].state == OBS_FAILS)
			return true;
	return false;
}
