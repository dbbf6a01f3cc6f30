/* SPDX-License-Identifier: MIT */
/*
 * lab run [--jobs N] [--resume RUN_ID] [EXPERIMENT...]: for each
 * experiment, a run folder in the store, the missing kernels and image
 * built, then the plan executed (the compared variants interleaved). Runs
 * go to worker processes (lab/run/pool.c), at most N at a time, each guest
 * pinned inside its own host CPUs; a worker boots a guest per run, or one
 * per variant that serves all its runs with `boot: once`, runs the
 * workload between the monitors, parses and tells this process, which
 * alone writes the journal and the index, after every run. A failed run is
 * recorded with its reason and the rest go on; --resume finishes the
 * pending runs of a stored run. Ends with the comparison report.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "cmd.h"
#include "host/host.h"
#include "kernel/build.h"
#include "kernel/source.h"
#include "kernel/variant.h"
#include "plan/plan.h"
#include "result/compare.h"
#include "result/report.h"
#include "run/index.h"
#include "run/pool.h"
#include "run/runner.h"
#include "run/store.h"
#include "util/alloc.h"
#include "util/clock.h"
#include "util/command.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/path.h"
#include "util/units.h"
#include "vm/domain.h"
#include "vm/vm.h"
#include "util/paths.h"
#include "util/banned.h"

/* In a worker: the holders of its VMs (one, or a guest per variant with
 * `boot: side-by-side`); a signal tears them down. In lab itself: a signal
 * stops the workers (and so their guests). */
static volatile pid_t holders[SPEC_MAX_SIDE_BY_SIDE];
static volatile sig_atomic_t in_worker;

static void on_signal(int sig)
{
	if (in_worker) {
		for (size_t i = 0; i < SPEC_MAX_SIDE_BY_SIDE; i++)
			if (holders[i] > 0)
				kill(holders[i], SIGTERM);
	} else {
		pool_terminate();
	}
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
	size_t done, failed, total;
	unsigned running;
	double t0;
	bool tty;
	char *status;
};

static void fmt_secs(struct strbuf *sb, double s)
{
	if (s < 60)
		strbuf_addf(sb, "%.0fs", s);
	else if (s < 3600)
		strbuf_addf(sb, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		strbuf_addf(sb, "%dh%02dm", (int)s / 3600, ((int)s % 3600) / 60);
}

static void ui_counts(const struct run_ui *u, struct strbuf *sb)
{
	double el = now_sec() - u->t0;

	strbuf_addf(sb, "[%zu/%zu done", u->done, u->total);
	if (u->failed)
		strbuf_addf(sb, ", %zu failed", u->failed);
	if (u->running > 1)
		strbuf_addf(sb, ", %u running", u->running);
	strbuf_addstr(sb, ", ");
	fmt_secs(sb, el);
	if (u->done && u->done < u->total) {
		strbuf_addstr(sb, ", ETA ");
		fmt_secs(sb, el / (double)u->done * (double)(u->total - u->done));
	}
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
static void ui_step(struct run_ui *u, const char *run, const char *what)
{
	if (u->ctx->verbosity < 0)
		return;
	free(u->status);
	u->status = xasprintf("%s: %s", run, what);
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

static void ui_build_step(void *userdata, const char *name, const char *what)
{
	const struct lab_ctx *ctx = userdata;

	if (ctx->verbosity >= 0)
		fprintf(stderr, "lab: %s: %s\n", name, what);
}

_Static_assert((int)OBSERVE_EQ == (int)OBS_EQ && (int)OBSERVE_GE == (int)OBS_GE && (int)OBSERVE_HIGHER == (int)OBS_HIGHER &&
		       (int)OBSERVE_SAME == (int)OBS_SAME,
	       "lab.yaml observe: relations and the stored ones are the same list");

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
	for (size_t i = 0; i < e->nobserve; i++) {
		const struct spec_observe *o = &e->observe[i];
		_cleanup_strv_ struct strv ks = STRV_INIT;

		for (size_t k = 0; k < o->kernels.n; k++)
			strv_push(&ks, o->kernels.v[k].name);
		result_add_observe(rs, o->metric, (enum observe_rel)o->op, o->value, &ks, o->says);
	}
	return rs;
}

/*
 * The index is a cache of the folders: a write that fails (another lab
 * held it past the busy timeout, a full disk) is tried again, then said,
 * and never stops the run from saving its folder or printing its report
 * (`lab gc --reindex` rebuilds the index from the folders).
 */
static void index_with_retry(const struct lab_ctx *ctx, const char *root, const struct result_set *rs, ssize_t run)
{
	_cleanup_diags_ struct diags d = { 0 };

	for (int attempt = 0; attempt < 3; attempt++) {
		_cleanup_free_ char *sum = NULL;

		diags_release(&d);
		if (run >= 0 ? index_put_run(root, rs, (size_t)run, &d) == 0
			     : (sum = index_verdict_summary(rs), index_put(root, rs, sum, &d) == 0))
			return;
		sleep(1u << attempt);
	}
	cmd_report_diags(ctx, &d);
	fprintf(stderr, "lab: warning: run %s is saved but not indexed (lab gc --reindex adds it)\n", rs->id);
}

/* The folder and the whole index entry (with the verdicts: a comparison of every run). */
static int save(const struct lab_ctx *ctx, const char *root, const char *dir, const struct result_set *rs)
{
	_cleanup_diags_ struct diags d = { 0 };

	if (store_save(dir, rs, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	index_with_retry(ctx, root, rs, -1);
	return 0;
}

/* After one run: the journal and that run's index rows only. */
static void save_run(const struct lab_ctx *ctx, const char *root, const char *dir, const struct result_set *rs,
		    size_t i)
{
	_cleanup_diags_ struct diags d = { 0 };

	if (store_save_journal(dir, rs, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return;
	}
	index_with_retry(ctx, root, rs, (ssize_t)i);
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
	/* entries may be symbolic links to folders elsewhere: the guest gets their contents */
	command_args(&c, "-C", s->settings.catalogue, "--dereference", "--exclude=__pycache__", "-cf", tarp, ".", NULL);
	if (command_run(&c) != 0)
		return -EIO;
	*ret = TAKE_PTR(tarp);
	return 0;
}

/* What one worker runs: all of a variant's runs on one guest with `boot: once`,
 * all the runs of a host on a guest per variant with `boot: side-by-side`,
 * else one run. */
struct run_group {
	size_t *runs; /* indexes into the result set */
	size_t n;
};

/* One experiment's execution, shared by lab (the parent) and its workers. */
struct exp_run {
	const struct lab_ctx *ctx;
	const struct spec *s;
	const struct spec_experiment *e;
	const struct plan *p;
	struct result_set *rs;
	const char *root, *dir, *tarp;
	const struct strv *variants;
	const struct kartifact *arts;
	const struct kvariant *vars;
	const struct image_artifact *img;
	struct run_group *groups;
	size_t ngroups;
	char **cpusets; /* per slot; NULL: the topology's own pinning */
	pid_t lab;
	unsigned jobs;
	size_t ended; /* groups whose worker ended */
	struct run_ui ui;
	/* in a worker */
	int fd;
	size_t cur;
	unsigned slot;
};

static const struct plan_run *plan_run_of(const struct plan *p, const char *id)
{
	for (size_t k = 0; k < p->n; k++)
		if (streq(p->runs[k].id, id))
			return &p->runs[k];
	return NULL;
}

/* In a worker: a step goes to the run's log and to lab. */
static void worker_step(struct exp_run *x, const char *what)
{
	const struct result_run *r = &x->rs->runs[x->cur];
	_cleanup_free_ char *logp = xasprintf("%s/runs/%s/log", x->dir, r->id);
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT;

	strbuf_addf(&line, "%8.1f  %s\n", now_sec() - x->ui.t0, what);
	fs_append(logp, line.buf, line.len);
	pool_send(x->fd, "step\t%zu\t%s", x->cur, what);
}

static void worker_vm_step(void *userdata, const char *vm, const char *what)
{
	(void)vm;
	worker_step(userdata, what);
}

static void worker_run_step(void *userdata, const char *run, const char *what)
{
	(void)run;
	worker_step(userdata, what);
}

/* In a worker: tell lab how the run ended (its metrics are on disk). */
static void worker_done(struct exp_run *x, const struct result_run *r)
{
	_cleanup_free_ char *err = xstrdup(r->error ? r->error : "");

	for (char *c = err; *c; c++)
		if (*c == '\t')
			*c = ' ';
	pool_send(x->fd, "done\t%zu\t%s\t%s\t%s", x->cur, r->status == RUN_OK ? "ok" : "failed",
		  r->release ? r->release : "", err);
}

/* "boot failed: A; B" from a boot's diagnostics. */
static char *boot_failure(const struct diags *d)
{
	_cleanup_strbuf_ struct strbuf msg = STRBUF_INIT;

	for (size_t i = 0; i < d->n; i++)
		strbuf_addf(&msg, "%s%s", i ? "; " : "", d->v[i].msg);
	return xasprintf("boot failed: %s", msg.buf ? msg.buf : "?");
}

static void run_fail(struct result_run *r, char *why)
{
	r->status = RUN_FAILED;
	free(r->error);
	r->error = why;
}

/* Where the guest's threads may run, kept with the run. */
static void write_placement(const struct exp_run *x, const struct vm *v, const char *rundir)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *p = path_join(rundir, "placement");
	const char *cs = x->cpusets ? x->cpusets[x->slot] : NULL;

	strbuf_addf(&sb, "# slot %u, host cpus %s\n# thread id, name, cpus allowed\n", x->slot,
		    cs ? cs : "(the topology's pinning)");
	vm_placement(v, &sb);
	fs_write_atomic(p, sb.buf, sb.len, 0644);
}

static const struct spec_host *find_host(const struct spec *s, const char *name, enum host_type type);

static int boot(struct exp_run *x, const char *name, const struct plan_run *pr, ssize_t vi, const char *rundir,
		struct vm *v, struct result_run *r)
{
	_cleanup_free_ char *state = paths_state(), *cache = lab_cache_dir(x->s);
	_cleanup_diags_ struct diags d = { 0 };
	struct vm_progress vp = { .step = worker_vm_step, .userdata = x };
	const struct spec_host *lh = find_host(x->s, pr->host, HOST_LIBVIRT);
	struct host remote = { 0 };
	int rc;
	struct vm_opts vo = {
		.name = name,
		.topo = spec_find_topology(x->s, pr->topology),
		.variant = x->vars[vi].name,
		.kernel = &x->arts[vi],
		.image = x->img,
		.cache = cache,
		.experiment = x->e,
		.cmdline = x->vars[vi].cmdline,
		.run_id = pr->id,
		.owner = x->lab,
		.accel = -1,
		.cpuset = x->cpusets ? x->cpusets[x->slot] : NULL,
		.evidence = rundir,
		.progress = &vp,
	};

	if (lh && lh->uri && !str_startswith(lh->uri, "qemu:///embed"))
		vo.uri = lh->uri;
	if (lh && lh->address) {
		/* another hypervisor host: kernel and disks go there, the guest is reached through it */
		if (host_open(state, cache, lh, &remote, &d) < 0) {
			run_fail(r, xasprintf("host %s: %s", lh->name, d.n ? d.v[0].msg : "?"));
			return -1;
		}
		vo.remote = &remote;
		vo.cpuset = NULL; /* --jobs slots are this machine's CPUs */
	}
	worker_step(x, "boot");
	rc = vm_up(state, &vo, v, &d);
	if (rc == -ESRCH) {
		/* QEMU itself crashed (seen under TCG: a segfault of a vCPU thread
		 * while the guest probed PCI): the emulator's fault, not the
		 * kernel's. Its evidence is kept as boot-1.*; one more boot. */
		static const char *const files[] = { "console.log", "qemu.log" };

		for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
			_cleanup_free_ char *from = path_join(rundir, files[k]);
			_cleanup_free_ char *to = xasprintf("%s/boot-1.%s", rundir, files[k]);

			rename(from, to);
		}
		diags_release(&d);
		worker_step(x, "QEMU crashed during the boot (boot-1.qemu.log): booting again");
		rc = vm_up(state, &vo, v, &d);
	}
	if (vo.remote)
		host_close(&remote);
	if (rc < 0) {
		_cleanup_diags_ struct diags dd = { 0 };

		/* what the console and QEMU said is in rundir (vm_opts.evidence) */
		run_fail(r, boot_failure(&d));
		vm_down(state, name, &dd);
		return -1;
	}
	for (size_t i = 0; i < SPEC_MAX_SIDE_BY_SIDE; i++)
		if (!holders[i]) {
			holders[i] = v->holder;
			break;
		}
	return 0;
}

static void shut_down(struct exp_run *x, const char *name, struct vm *v)
{
	_cleanup_free_ char *state = paths_state();
	_cleanup_diags_ struct diags d = { 0 };

	worker_step(x, "shut down");
	vm_down(state, name, &d);
	for (size_t i = 0; i < SPEC_MAX_SIDE_BY_SIDE; i++)
		if (holders[i] == v->holder)
			holders[i] = 0;
	vm_release(v);
	memset(v, 0, sizeof(*v));
}

/* lab.yaml's host `name` if it is of `type` */
static const struct spec_host *find_host(const struct spec *s, const char *name, enum host_type type)
{
	for (size_t i = 0; name && i < s->nhosts; i++)
		if (streq(s->hosts[i].name, name) && s->hosts[i].type == type)
			return &s->hosts[i];
	return NULL;
}

static void worker_host_step(void *userdata, const char *what)
{
	worker_step(userdata, what);
}

/* The host's facts next to the run (host-facts.json, lscpu.json): what the numbers were measured on. */
static void write_host_facts(struct host *h, const char *rundir)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *p = path_join(rundir, "host-facts.json"), *pj = path_join(rundir, "lscpu.json");
	struct host_facts f;
	struct json j;

	if (host_facts(h, &f, &d) < 0)
		return;
	json_init(&j, &sb, true);
	json_object_begin(&j);
	json_kv_string(&j, "host", h->spec->name);
	host_facts_format_json(&f, &j);
	json_object_end(&j);
	json_finish(&j);
	fs_write_atomic(p, sb.buf, sb.len, 0644);
	if (f.lscpu_json)
		fs_write_atomic(pj, f.lscpu_json, strlen(f.lscpu_json), 0644);
	host_facts_release(&f);
}

/*
 * Where a worker's runs go: its guest, booted when a run needs one, or a
 * bare-metal host, kexec'd into the run's variant when it runs another.
 * Consecutive runs share them while they succeed; the catalogue is
 * shipped once per boot.
 */
struct target {
	char *name; /* the guest's VM name */
	struct vm v;
	bool up;
	const char *guest_host; /* the libvirt host it runs on (the plan's string) */
	struct host h;
	bool host_open;
	char *booted; /* the release the host was kexec'd into by this worker */
	bool shipped;
};

/* The host of a run ready on the variant's kernel; its ssh target in rc. */
static int host_ready(struct exp_run *x, struct target *t, const struct spec_host *sh, ssize_t vi,
		      const char *rundir, struct runner_config *rc, struct result_run *r)
{
	_cleanup_diags_ struct diags d = { 0 };
	struct host_boot_opts bo = { .step = worker_host_step, .userdata = x };
	const struct kartifact *k = &x->arts[vi];

	if (!t->host_open) {
		_cleanup_free_ char *state = paths_state(), *cache = lab_cache_dir(x->s);

		if (host_open(state, cache, sh, &t->h, &d) < 0) {
			run_fail(r, xasprintf("host %s: %s", sh->name, d.n ? d.v[0].msg : "?"));
			return -1;
		}
		t->host_open = true;
	}
	/* what this worker booted last; a host it has not booted yet is kexec'd
	 * anyway, so every variant's runs start from a boot of their own */
	if (!t->booted || !streq(t->booted, k->release)) {
		free(t->booted);
		t->booted = NULL;
		t->shipped = false;
		worker_step(x, "kexec");
		if (host_boot(&t->h, k, &bo, &d) < 0) {
			run_fail(r, boot_failure(&d));
			return -1;
		}
		t->booted = xstrdup(k->release);
	}
	write_host_facts(&t->h, rundir);
	rc->host = &t->h.t;
	return 0;
}

/* The run's guest up (this worker's, booted when it has none); it goes in rc. */
static int guest_ready(struct exp_run *x, struct target *t, const struct plan_run *pr, ssize_t vi,
		       const char *rundir, struct runner_config *rc, struct result_run *r)
{
	if (t->up && !streq(t->guest_host, pr->host)) {
		/* a run for another hypervisor host: the guest moves there */
		shut_down(x, t->name, &t->v);
		t->up = false;
	}
	if (!t->up) {
		if (boot(x, t->name, pr, vi, rundir, &t->v, r) < 0)
			return -1;
		t->up = true;
		t->guest_host = pr->host;
		t->shipped = false;
	}
	write_placement(x, &t->v, rundir);
	rc->vm = &t->v;
	rc->image = x->img;
	return 0;
}

/* After a failed run the guest or host may be in any state: the next run boots anew. */
static void target_forget(struct exp_run *x, struct target *t)
{
	if (t->up)
		shut_down(x, t->name, &t->v);
	t->up = false;
	free(t->booted);
	t->booted = NULL;
}

/*
 * A worker: the runs of one group, in order, on one guest (or host)
 * while they succeed.
 */
static int work(void *userdata, size_t task, unsigned slot, int fd)
{
	struct exp_run *x = userdata;
	const struct run_group *g = &x->groups[task];
	bool side = x->e->boot == BOOT_SIDE_BY_SIDE;
	/* side-by-side: a guest per variant, all kept up; else one, reused */
	size_t nt = side ? x->variants->n : 1;
	struct target *ts = xcalloc(nt, sizeof(*ts));

	for (size_t k = 0; k < nt; k++)
		ts[k].name = side ? xasprintf("run-%d-%zu", (int)getpid(), k) : xasprintf("run-%d", (int)getpid());
	in_worker = 1;
	x->fd = fd;
	x->slot = slot;
	for (size_t j = 0; j < g->n; j++) {
		struct result_run *r = &x->rs->runs[g->runs[j]];
		const struct plan_run *pr = plan_run_of(x->p, r->id);
		ssize_t vi = strv_index(x->variants, r->variant);
		_cleanup_free_ char *rundir = xasprintf("%s/runs/%s", x->dir, r->id);
		struct runner_progress rp = { .step = worker_run_step, .userdata = x };
		const struct spec_host *sh;
		struct target *t = &ts[side && vi > 0 ? (size_t)vi : 0];
		int e;

		x->cur = g->runs[j];
		if (!pr || vi < 0) {
			run_fail(r, xstrdup("not in the plan of lab.yaml any more (changed since the run started?)"));
			worker_done(x, r);
			continue;
		}
		if ((e = path_mkdir_p(rundir, 0755)) < 0) {
			run_fail(r, xasprintf("cannot create %s: %s", rundir, strerror(-e)));
			worker_done(x, r);
			continue;
		}
		sh = find_host(x->s, pr->host, HOST_SSH);
		{
			struct runner_config rc = {
				.s = x->s,
				.e = x->e,
				.rundir = rundir,
				.catalogue_tar = x->tarp,
				.kernel = &x->arts[vi],
				.progress = &rp,
				.shipped = &t->shipped,
			};

			if ((sh ? host_ready(x, t, sh, vi, rundir, &rc, r) : guest_ready(x, t, pr, vi, rundir, &rc, r)) == 0)
				runner_exec(&rc, pr, r);
		}
		worker_done(x, r);
		if (r->status == RUN_FAILED)
			target_forget(x, t);
	}
	for (size_t k = 0; k < nt; k++) {
		target_forget(x, &ts[k]);
		if (ts[k].host_open)
			host_close(&ts[k].h);
		free(ts[k].name);
	}
	free(ts);
	return 0;
}

static const char *run_label(const struct result_run *r, struct strbuf *sb)
{
	strbuf_reset(sb);
	strbuf_addf(sb, "%s %s", r->id, r->variant);
	return sb->buf;
}

/* In lab: a line from a worker. */
static void on_message(void *userdata, size_t task, unsigned slot, const char *line)
{
	struct exp_run *x = userdata;
	_cleanup_free_ char *copy = xstrdup(line);
	_cleanup_strbuf_ struct strbuf label = STRBUF_INIT;
	char *f[5] = { 0 }, *p = copy;
	size_t nf = 0;
	uint64_t i;

	(void)task;
	(void)slot;
	while (nf < 5 && p) {
		f[nf++] = p;
		p = nf < 5 ? strchr(p, '\t') : NULL;
		if (p)
			*p++ = '\0';
	}
	if (nf < 3 || parse_uint(f[1], x->rs->n - 1, &i) < 0)
		return;
	if (streq(f[0], "step")) {
		ui_step(&x->ui, run_label(&x->rs->runs[i], &label), f[2]);
	} else if (streq(f[0], "done") && nf == 5) {
		struct result_run *r = &x->rs->runs[i];
		_cleanup_diags_ struct diags d = { 0 };

		r->status = streq(f[2], "ok") ? RUN_OK : RUN_FAILED;
		free(r->release);
		r->release = *f[3] ? xstrdup(f[3]) : NULL;
		free(r->error);
		r->error = *f[4] ? xstrdup(f[4]) : NULL;
		if (r->status == RUN_OK && store_load_metrics(x->dir, r, &d) < 0)
			run_fail(r, xasprintf("its metrics cannot be read back: %s", d.n ? d.v[0].msg : "?"));
		x->ui.done++;
		if (r->status == RUN_FAILED) {
			x->ui.failed++;
			ui_print(&x->ui, "%s FAILED: %s", run_label(r, &label), r->error ? r->error : "?");
		} else {
			ui_print(&x->ui, "%s ok, %zu metrics", run_label(r, &label), r->nm);
		}
		/* a failed journal write is said; the final save writes it all again */
		save_run(x->ctx, x->root, x->dir, x->rs, i);
	}
}

/* In lab: a worker ended. Runs it did not report failed with the reason. */
static void on_ended(void *userdata, size_t task, unsigned slot, pid_t pid, int status)
{
	struct exp_run *x = userdata;
	const struct run_group *g = &x->groups[task];

	(void)slot;
	x->ended++;
	x->ui.running = x->ngroups - x->ended < x->jobs ? (unsigned)(x->ngroups - x->ended) : x->jobs;
	if (pid > 0) {
		/* a worker that died left its guest: it goes now, not at the next gc */
		_cleanup_free_ char *state = paths_state(), *name = xasprintf("run-%d", (int)pid);
		_cleanup_free_ char *vmdir = paths_vm(state, name);
		_cleanup_diags_ struct diags d = { 0 };

		if (access(vmdir, F_OK) == 0)
			vm_down(state, name, &d);
	}
	for (size_t j = 0; j < g->n; j++) {
		struct result_run *r = &x->rs->runs[g->runs[j]];

		if (r->status != RUN_PENDING)
			continue;
		run_fail(r, status < 0 ? xstrdup("lab could not start a worker for it")
					: xasprintf("its worker ended (status %d) before the run did", status));
		x->ui.done++;
		x->ui.failed++;
		ui_print(&x->ui, "%s FAILED: %s", r->id, r->error);
		save_run(x->ctx, x->root, x->dir, x->rs, g->runs[j]);
	}
}

/* One line per value into the run's folder (nothing when there are none). */
static void save_lines(const char *dir, const char *name, const struct strv *v)
{
	_cleanup_free_ char *p = path_join(dir, name);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (!v->n)
		return;
	for (size_t i = 0; i < v->n; i++)
		strbuf_addf(&sb, "%s\n", v->v[i]);
	fs_write_atomic(p, sb.buf, sb.len, 0644);
}

/* The plan's host of a stored run ("local" unless the experiment names hosts). */
static const char *run_host(const struct exp_run *x, const struct result_run *r)
{
	const struct plan_run *pr = plan_run_of(x->p, r->id);

	return pr ? pr->host : "";
}

/* Runs into groups: each pending run alone, with `boot: once` a group per
 * variant and host, with `boot: side-by-side` a group per host (its runs in
 * the plan's order, the variants interleaved). */
static void make_groups(struct exp_run *x)
{
	bool shared = x->e->boot != BOOT_PER_RUN, side = x->e->boot == BOOT_SIDE_BY_SIDE;

	x->groups = xcalloc(x->rs->n + 1, sizeof(*x->groups));
	for (size_t i = 0; i < x->rs->n; i++) {
		struct run_group *g = NULL;

		if (x->rs->runs[i].status != RUN_PENDING)
			continue;
		for (size_t k = 0; shared && k < x->ngroups && !g; k++)
			if ((side || streq(x->rs->runs[x->groups[k].runs[0]].variant, x->rs->runs[i].variant)) &&
			    streq(run_host(x, &x->rs->runs[x->groups[k].runs[0]]), run_host(x, &x->rs->runs[i])))
				g = &x->groups[k];
		if (!g) {
			g = &x->groups[x->ngroups++];
			g->runs = xcalloc(x->rs->n, sizeof(size_t));
		}
		g->runs[g->n++] = i;
	}
}

static void free_groups(struct exp_run *x)
{
	for (size_t k = 0; k < x->ngroups; k++)
		free(x->groups[k].runs);
	free(x->groups);
	if (x->cpusets)
		for (char **c = x->cpusets; *c; c++)
			free(*c);
	free(x->cpusets);
}

struct jobs_opts {
	unsigned jobs; /* 0: from the host's CPUs and the topology's vCPUs */
	bool oversubscribe;
};

/*
 * How many guests at a time, and each one's host CPUs: never more vCPUs
 * than the CPUs lab may use unless asked (--oversubscribe), and said when
 * the topology alone is bigger than the host. -1 after an error.
 */
static int place(struct exp_run *x, const struct jobs_opts *jo, bool check_only, unsigned *ret_jobs)
{
	const struct spec_topology *t = spec_find_topology(x->s, x->e->topology.name);
	unsigned vcpus = t ? domain_vcpus(t) : 1, ncpu = 0, jobs;
	unsigned cpu[CPU_SETSIZE];
	cpu_set_t set;

	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (unsigned c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &set))
				cpu[ncpu++] = c;
	if (!ncpu)
		cpu[ncpu++] = 0;
	for (size_t i = 0; i < x->e->hosts.n; i++)
		if (find_host(x->s, x->e->hosts.v[i].name, HOST_SSH)) {
			/* a bare-metal host runs one thing at a time, on all of itself */
			if (jo->jobs > 1 && !check_only)
				ui_print(&x->ui, "note: experiment %s runs on bare-metal host %s: one run at a time",
					 x->e->name, x->e->hosts.v[i].name);
			*ret_jobs = 1;
			return 0;
		}
	/* by default one host CPU stays for lab, ssh and QEMU's own threads: guests
	 * packed onto every CPU measured 20% lower and twice as noisy here */
	jobs = jo->jobs ? jo->jobs : (vcpus && ncpu > vcpus && (ncpu - 1) / vcpus > 1 ? (ncpu - 1) / vcpus : 1);
	if (jobs > x->ngroups)
		jobs = x->ngroups ? (unsigned)x->ngroups : 1;
	if (jobs > 1 && t && t->pin == PIN_LIST) {
		cmd_error(x->ctx, "topology '%s' pins its vCPUs to host CPUs %s: its guests run one at a time (--jobs 1)",
			  t->name, t->pin_cpus);
		return -1;
	}
	if (jobs > 1 && (size_t)jobs * vcpus > ncpu && !jo->oversubscribe) {
		cmd_error(x->ctx, "--jobs %u needs %u host CPUs for guests of %u vCPUs (%s); lab may use %u "
			  "(--oversubscribe shares them anyway, and the numbers suffer)",
			  jobs, jobs * vcpus, vcpus, t ? t->name : "?", ncpu);
		return -1;
	}
	if (check_only)
		return 0;
	if (vcpus > ncpu)
		ui_print(&x->ui, "note: %s has %u vCPUs and lab may use %u host CPUs: they share them "
			 "(compare variants with each other, not with a bigger host)", t ? t->name : "?", vcpus, ncpu);
	if (jobs > 1) {
		x->cpusets = xcalloc(jobs + 1, sizeof(char *));
		for (unsigned k = 0; k < jobs; k++) {
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

			/* oversubscribed slots wrap around the host's CPUs */
			for (unsigned j = 0; j < vcpus && j < ncpu; j++)
				strbuf_addf(&sb, "%s%u", j ? "," : "", cpu[(k * vcpus + j) % ncpu]);
			x->cpusets[k] = strbuf_detach(&sb, NULL);
		}
	}
	*ret_jobs = jobs;
	return 0;
}

static int run_experiment(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
			  const char *resume_dir, const struct jobs_opts *jo, bool *any_failed)
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
	struct exp_run x = { .ctx = ctx, .s = s, .e = e, .lab = getpid() };
	struct pool_ops ops = { .work = work, .message = on_message, .ended = on_ended, .userdata = &x };
	unsigned jobs = 1;
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
		/* the --set values and --kernels the plan was made with; --resume applies them again */
		save_lines(dir, "set", &ctx->set);
		save_lines(dir, "kernels", &ctx->kernels);
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
	x.p = p;
	x.rs = rs;
	x.root = root;
	x.dir = dir;
	x.tarp = tarp;
	x.variants = &variants;
	x.arts = arts;
	x.vars = vars;
	x.img = &img;
	x.ui = (struct run_ui){ .ctx = ctx, .t0 = now_sec(), .tty = isatty(2) && !getenv("LAB_NO_TTY") };
	make_groups(&x);
	for (size_t i = 0; i < rs->n; i++)
		x.ui.total += rs->runs[i].status == RUN_PENDING;
	if (place(&x, jo, false, &jobs) < 0) {
		ret = -1;
		goto out;
	}
	if (x.ui.total && e->boot == BOOT_SIDE_BY_SIDE) {
		const struct spec_topology *t = spec_find_topology(s, e->topology.name);

		ui_print(&x.ui, "%zu runs, one at a time%s; boot: side-by-side, a guest per variant (%zu of %llu MiB) "
			 "up together, the runs alternating between them", x.ui.total,
			 jobs > 1 ? " per host" : "", variants.n,
			 t ? (unsigned long long)(t->memory >> 20) : 0ULL);
	} else if (x.ui.total)
		ui_print(&x.ui, "%zu runs on %u guest%s at a time%s%s", x.ui.total, jobs, jobs > 1 ? "s" : "",
			 e->boot == BOOT_ONCE ? "; boot: once, a guest serves all the runs of a variant" : "",
			 x.cpusets ? ", each pinned to its own host CPUs" : "");
	x.jobs = jobs;
	x.ui.running = x.ngroups < jobs ? (unsigned)x.ngroups : jobs;
	{
		_cleanup_diags_ struct diags pd = { 0 };

		if (pool_run(x.ngroups, jobs, &ops, &pd) < 0)
			cmd_report_diags(ctx, &pd);
	}
	ui_end(&x.ui);
	/* a bare-metal host stays on the last variant: say how to get it back */
	for (size_t i = 0; i < e->hosts.n; i++)
		if (find_host(s, e->hosts.v[i].name, HOST_SSH))
			ui_print(&x.ui, "host %s still runs the last kernel lab booted: 'lab host restore %s' boots its own",
				 e->hosts.v[i].name, e->hosts.v[i].name);
	/* a journal write that failed during the runs is tried again here */
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
			if (c->verdicts[k].v == VERDICT_REGRESSED || c->verdicts[k].v == VERDICT_CHANGED)
				*any_failed = true;
		/* and so does a mechanism check that did not hold */
		for (size_t k = 0; k < c->nobs; k++)
			if (c->obs[k].state == OBS_FAILS)
				*any_failed = true;

		if (ctx->json)
			report_format_json(c, &rep);
		else
			report_format_text(c, &ro, &rep);
		cmd_write(&rep);
	}
out:
	free_groups(&x);
	ui_end(&x.ui);
	for (size_t i = 0; i < variants.n; i++) {
		kartifact_release(&arts[i]);
		kvariant_release(&vars[i]);
	}
	free(arts);
	free(vars);
	image_artifact_release(&img);
	return ret;
}

/* --jobs against an experiment before anything is created: its runs, its
 * variants with `boot: once`, its hosts with `boot: side-by-side`. */
static int check_jobs(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
		      const struct jobs_opts *jo)
{
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_strv_ struct strv only = STRV_INIT, variants = STRV_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct exp_run x = { .ctx = ctx, .s = s, .e = e, .ui = { .ctx = ctx } };
	unsigned jobs;

	strv_push(&only, e->name);
	if (plan_build(s, &only, &p, &d) < 0)
		return 0; /* reported by the run itself */
	spec_experiment_variants(s, e, &variants);
	x.ngroups = e->boot == BOOT_ONCE ? variants.n * (e->hosts.n ? e->hosts.n : 1)
		    : e->boot == BOOT_SIDE_BY_SIDE ? (e->hosts.n ? e->hosts.n : 1) : p->n;
	return place(&x, jo, true, &jobs);
}

/* The run's `name` file against what the command line says: 0 the same,
 * 1 taken from the file, -1 refused (other values would make another plan). */
static int resume_lines(struct lab_ctx *ctx, const char *dir, const char *name, const char *option,
			struct strv *given)
{
	_cleanup_free_ char *sp = path_join(dir, name);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_strv_ struct strv stored = STRV_INIT;
	char *line, *save = NULL;
	bool same;

	if (path_is_file(sp) && strbuf_read_file(&sb, sp, 64 * 1024) < 0) {
		cmd_error(ctx, "cannot read %s: %s", sp, strerror(errno));
		return -1;
	}
	for (line = strtok_r(sb.buf ? sb.buf : (char[]){ 0 }, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		strv_push(&stored, line);
	same = stored.n == given->n;
	for (size_t i = 0; same && i < stored.n; i++)
		same = streq(stored.v[i], given->v[i]);
	if (same)
		return 0;
	if (given->n) {
		if (stored.n)
			cmd_error(ctx, "run: --resume takes the %s values the run was made with (its '%s' file); give none",
				  option, name);
		else
			cmd_error(ctx, "run: --resume takes the %s values the run was made with (none); give none", option);
		return -1;
	}
	for (size_t i = 0; i < stored.n; i++)
		strv_push(given, stored.v[i]);
	return 1;
}

/*
 * A run made with --set or --kernels is resumed with the same values: they
 * are read from the run's "set" and "kernels" files and lab.yaml is loaded
 * again with them.
 */
static int resume_set(struct lab_ctx *ctx, const char *dir, struct spec **s)
{
	int a = resume_lines(ctx, dir, "set", "--set", &ctx->set);
	int b = a < 0 ? -1 : resume_lines(ctx, dir, "kernels", "--kernels", &ctx->kernels);

	if (a < 0 || b < 0)
		return -1;
	if (!a && !b)
		return 0;
	spec_free(*s);
	*s = NULL;
	return cmd_load_spec(ctx, ctx->file, s);
}

struct run_opts {
	const char *resume;
	unsigned jobs;
	bool oversubscribe;
};

const struct lab_option run_options[] = {
	OPT(struct run_opts, jobs, OPT_UINT, 'j', "jobs", "N", "guests at a time (default: from the host's CPUs)",
	    .min = 1, .max = 256, .what = "a number of guests at a time (1-256)"),
	OPT(struct run_opts, oversubscribe, OPT_FLAG, 0, "oversubscribe", NULL, "allow more vCPUs than host CPUs"),
	OPT(struct run_opts, resume, OPT_STRING, 0, "resume", "RUN_ID", "run the runs a stored run still has pending"),
	{ 0 },
};

int cmd_run(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *resume = NULL, *state = paths_state();
	struct run_opts o = { 0 };
	int first = cmd_options_parse(ctx, "run", NULL, OPTS_FIRST, argc, argv, &o);
	const char *resume_id = o.resume;
	struct jobs_opts jo = { .jobs = o.jobs, .oversubscribe = o.oversubscribe };
	bool failed = false;
	int rc = EXIT_OK;

	if (first < 0)
		return first == -2 ? EXIT_OK : EXIT_USAGE;
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

		if (first < argc) {
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
		if (resume_set(ctx, resume, &s) < 0)
			return EXIT_USAGE;
		if (!(e = spec_find_experiment(s, rs->experiment))) {
			cmd_error(ctx, "run %s is of experiment '%s', which %s no longer has", resume_id, rs->experiment,
				  s->path);
			return EXIT_USAGE;
		}
		if (check_jobs(ctx, s, e, &jo) < 0)
			return EXIT_USAGE;
		if (run_experiment(ctx, s, e, resume, &jo, &failed) < 0)
			rc = EXIT_FAILED;
		return rc != EXIT_OK ? rc : failed ? EXIT_FAILED : EXIT_OK;
	}
	if (first == argc) {
		cmd_error(ctx, "run: name the experiments to run (lab plan lists them)");
		return EXIT_USAGE;
	}
	{
		/* unknown names are reported by the planner, with suggestions */
		_cleanup_strv_ struct strv only = STRV_INIT;
		_cleanup_plan_ struct plan *p = NULL;
		_cleanup_diags_ struct diags d = { 0 };

		for (int i = first; i < argc; i++)
			strv_push(&only, argv[i]);
		if (plan_build(s, &only, &p, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return EXIT_USAGE;
		}
	}
	for (int i = first; i < argc; i++)
		if (check_jobs(ctx, s, spec_find_experiment(s, argv[i]), &jo) < 0)
			return EXIT_USAGE;
	for (int i = first; i < argc; i++)
		if (run_experiment(ctx, s, spec_find_experiment(s, argv[i]), NULL, &jo, &failed) < 0)
			rc = EXIT_FAILED;
	return rc != EXIT_OK ? rc : failed ? EXIT_FAILED : EXIT_OK;
}
