/* SPDX-License-Identifier: MIT */
/*
 * The workflows that drive the engine are library code (engine/workflow.h):
 * here they run against a fabricated engine call, no guest, no command.
 * calibrate: the experiment cut to its baseline over the boots asked, the
 * record built from what the runs measured and saved; bad input refused
 * before anything runs; a failed run saves nothing. bisect: a series of 4
 * whose patch 3 moves the metric, found in 3 steps (the ends, then the
 * middle); interrupted after a step's run began, resumed: that run goes
 * on, nothing done is run again; the bisect's folder a stored run of every
 * step's runs.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <math.h>
#include <time.h>
#include <unistd.h>
#include "unit.h"
#include "engine/bisect-run.h"
#include "engine/calibrate-run.h"
#include "engine/track-run.h"
#include "engine/track-report.h"
#include "result/calibrate.h"
#include "result/result.h"
#include "spec/spec.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strv.h"

static char root[] = "/tmp/lab-unit-workflow.XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	return fs_remove_tree(root);
}

static const char yaml[] = "version: 1\n"
			   "kernels:\n"
			   "  base: {}\n"
			   "  patched: {from: base, patches: [x.patch]}\n"
			   "topologies: {t: {memory: 1G}}\n"
			   "images: {i: {recipe: r}}\n"
			   "experiments:\n"
			   "  e: {kernels: [base, patched], topology: t, image: i, repeat: 4, boot: once, workloads: [w]}\n"
			   "  p: {kernels: [base, patched], topology: t, image: i, repeat: 4, workloads: [w]}\n";

static struct spec *load(void)
{
	static const struct spec_load_opts memonly = { .no_include = true, .no_filesystem = true };
	_cleanup_diags_ struct diags d = { 0 };
	struct spec *s = NULL;

	assert_int_equal(spec_load_buffer("t.yaml", yaml, strlen(yaml), &memonly, &s, &d), 0);
	return s;
}

/* What the fake engine call saw, and how it answers. */
struct fake {
	unsigned calls;
	bool fail;
	struct strv kernels; /* the experiment's kernels when it ran */
	unsigned min_boots, max_boots, repeat;
	bool repeat_auto, monitors_off;
	const char *root;
	struct strv said;
};

/* Boot b's runs measure 100 + b (boots differ) + 0.1 * the run's place in it. */
static int fake_run(void *userdata, const struct spec *s, const struct spec_experiment *e, const char *resume_dir,
		    const char *rt, void (*started)(void *, const char *), void *started_data,
		    struct result_set **ret_rs)
{
	struct fake *f = userdata;
	struct result_set *rs;
	unsigned per_boot;

	(void)s;
	assert_null(resume_dir);
	f->calls++;
	f->root = rt;
	for (size_t i = 0; i < e->kernels.n; i++)
		strv_push(&f->kernels, e->kernels.v[i].name);
	f->min_boots = e->decide.min_boots;
	f->max_boots = e->decide.max_boots;
	f->repeat = e->repeat;
	f->repeat_auto = e->repeat_auto;
	f->monitors_off = e->monitors_off;
	if (f->fail)
		return -1;
	if (started)
		started(started_data, "20260101-000000-0001");
	rs = result_set_new("20260101-000000-0001", e->name);
	strv_push(&rs->variants, e->kernels.v[0].name);
	per_boot = e->repeat / e->decide.min_boots;
	for (unsigned i = 0; i < e->repeat; i++) {
		_cleanup_free_ char *id = xasprintf("e.%04u", i + 1);
		unsigned boot = i / per_boot;
		struct result_run *r = result_add_run(rs, id, e->kernels.v[0].name, "w", 0, i + 1);

		r->status = RUN_OK;
		r->boot = xasprintf("e.b%u", boot + 1);
		result_add_metric(r, "w.m", 100 + boot + 0.1 * (i % per_boot));
	}
	*ret_rs = rs;
	return 0;
}

static void fake_say(void *userdata, const char *line)
{
	struct fake *f = userdata;

	strv_push(&f->said, line);
}

static void fake_release(struct fake *f)
{
	strv_release(&f->kernels);
	strv_release(&f->said);
}

static void test_calibrate(void **state)
{
	_cleanup_spec_ struct spec *s = load();
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *path = NULL, *text = NULL;
	struct fake f = { 0 };
	struct workflow w = { .run = fake_run, .say = fake_say, .userdata = &f };
	struct calib_record rec = { 0 }, back = { 0 };
	const struct calib_metric *m;
	char *err = NULL;

	(void)state;
	assert_int_equal(calibrate_run(&w, s, root,
				       &(struct calibrate_params){ .experiment = "e", .boots = 6, .runs = 2 }, &rec,
				       &path, &d),
			 0);
	assert_int_equal(d.n, 0);
	/* the engine ran the baseline alone, a fixed design of 6 boots of 2 runs, under root */
	assert_int_equal(f.calls, 1);
	assert_int_equal(f.kernels.n, 1);
	assert_string_equal(f.kernels.v[0], "base");
	assert_int_equal(f.min_boots, 6);
	assert_int_equal(f.max_boots, 6);
	assert_int_equal(f.repeat, 12);
	assert_false(f.repeat_auto);
	assert_false(f.monitors_off);
	assert_string_equal(f.root, root);
	/* the record: what the runs measured, between boots far more than within */
	assert_string_equal(rec.experiment, "e");
	assert_non_null(rec.c);
	m = calibration_find(rec.c, rec.c->n ? rec.c->m[0].group : "", "w.m");
	assert_non_null(m);
	assert_int_equal(m->boots, 6);
	assert_int_equal(m->runs, 12);
	assert_true(fabs(m->mean - 102.55) < 1e-9);
	assert_true(m->cv_between > m->cv_within);
	/* saved where it says, and read back the same */
	assert_true(path_is_file(path));
	assert_int_equal(calib_load(root, "e", &back, &err), 0);
	assert_string_equal(back.experiment, "e");
	assert_non_null(calibration_find(back.c, m->group, "w.m"));
	calib_record_release(&back);
	calib_record_release(&rec);
	/* boot: per-run (the default): a boot is a run, whatever --runs-per-boot says */
	{
		_cleanup_spec_ struct spec *sp = load();
		_cleanup_free_ char *pp = NULL;

		assert_int_equal(calibrate_run(&w, sp, root,
					       &(struct calibrate_params){ .experiment = "p", .boots = 6, .runs = 2 },
					       &rec, &pp, &d),
				 0);
		assert_int_equal(f.repeat, 6);
		assert_int_equal(calibration_find(rec.c, rec.c->m[0].group, "w.m")->runs, 6);
		calib_record_release(&rec);
	}
	fake_release(&f);
}

static void test_calibrate_refuses(void **state)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *path = NULL, *none = NULL;
	struct fake f = { 0 };
	struct workflow w = { .run = fake_run, .userdata = &f };
	struct calib_record rec = { 0 };

	(void)state;
	{
		_cleanup_spec_ struct spec *s = load();

		assert_int_equal(calibrate_run(&w, s, root, &(struct calibrate_params){ .experiment = "nosuch" }, &rec,
					       &path, &d),
				 -EINVAL);
		assert_int_equal(d.n, 1);
		assert_non_null(strstr(d.v[0].msg, "no experiment 'nosuch'"));
	}
	diags_release(&d);
	{
		_cleanup_spec_ struct spec *s = load();

		assert_int_equal(calibrate_run(&w, s, root,
					       &(struct calibrate_params){ .experiment = "e", .monitors = true }, &rec,
					       &path, &d),
				 -EINVAL);
		assert_non_null(strstr(d.v[0].msg, "has no monitors to measure"));
	}
	/* refused before anything ran */
	assert_int_equal(f.calls, 0);
	diags_release(&d);
	/* the runs failed (said by the engine call): -EIO, nothing saved */
	{
		_cleanup_spec_ struct spec *s = load();
		char fresh[] = "/tmp/lab-unit-workflow-none.XXXXXX";

		assert_non_null(mkdtemp(fresh));
		f.fail = true;
		assert_int_equal(calibrate_run(&w, s, fresh, &(struct calibrate_params){ .experiment = "e" }, &rec,
					       &path, &d),
				 -EIO);
		assert_int_equal(f.calls, 1);
		none = calib_path(fresh, "e");
		assert_false(path_is_file(none));
		assert_int_equal(fs_remove_tree(fresh), 0);
	}
	calib_record_release(&rec);
	fake_release(&f);
}

/* The bisects' experiment over two kernels (a C string literal). */
#define PROC_EXPERIMENT(kernels)                                                                                  \
	"topologies: {t: {memory: 1G}}\n"                                                                         \
	"images: {i: {recipe: r}}\n"                                                                              \
	"experiments:\n"                                                                                          \
	"  proc:\n"                                                                                               \
	"    kernels: [" kernels "]\n"                                                                            \
	"    topology: t\n"                                                                                       \
	"    image: i\n"                                                                                          \
	"    boot: once\n"                                                                                        \
	"    repeat: auto\n"                                                                                      \
	"    decide: {max-boots: 4, runs-per-boot: 2}\n"                                                          \
	"    workloads:\n"                                                                                        \
	"      - workload: w\n"                                                                                   \
	"        expect:\n"                                                                                       \
	"          w.m: {direction: decrease, mde: 20%}\n"

static const char bisect_yaml[] =
	"version: 1\n"
	"kernels:\n"
	"  base: {}\n"
	"  slow:\n"
	"    from: base\n"
	"    patches:\n"
	"      - tests/data/bisect-series/0001-proc-say-what-proccmdline-shows.patch\n"
	"      - tests/data/bisect-series/0002-proc-say-what-procuptime-shows.patch\n"
	"      - tests/data/bisect-series/0006-proc-wait-200-us-in-every-read-of-procversion.patch\n"
	"      - tests/data/bisect-series/0007-proc-say-what-procsoftirqs-shows.patch\n"
	PROC_EXPERIMENT("base, slow");

/* The fake engine of a bisect: each step's run stored as the engine stores
 * one, 4 boots a kernel of 2 runs; patch 3 makes w.m 30% higher. */
struct bfake {
	const char *root;
	struct strv visited; /* each call's kernel under test */
	struct strv resumed; /* the run folders it was asked to go on with */
	const char *fail_at; /* this kernel's run begins, then lab stops */
	const char *panics;  /* this kernel panics at every boot: its runs fail */
	struct strv said;
	/* a commit bisect: its lab.yaml; the repository, the commit that makes
	 * w.m 30% higher (in every commit that has it), the one that does not build */
	const char *yaml, *repo, *culprit, *broken;
	const char *broken_log; /* what its build says (NULL: a compiler's error) */
	struct strv built;
};

static unsigned prefix_of(const char *kernel)
{
	const char *at = strchr(kernel, '@');

	return at ? (unsigned)atoi(at + 1) : 0;
}

/* Whether commit id has the culprit among its ancestors, itself included. */
static bool has_culprit(const char *repo, const char *culprit, const char *id)
{
	_cleanup_command_ struct command c = { 0 };

	command_init(&c, "git");
	command_args(&c, "-C", repo, "merge-base", "--is-ancestor", culprit, id, NULL);
	return command_run(&c) == 0;
}

/* A kernel's commit: the ref of the source it builds from. */
static const char *commit_of(const struct spec *s, const char *kernel)
{
	const struct spec_kernel *k = spec_find_kernel(s, kernel);

	assert_non_null(k);
	assert_non_null(k->root_source);
	return k->root_source->ref;
}

/* w.m of a kernel: 130 with the slow patch (prefix 3 and on, or the culprit commit), 100 without. */
static double level_of(const struct bfake *f, const struct spec *s, const char *kernel)
{
	if (f->culprit)
		return has_culprit(f->repo, f->culprit, commit_of(s, kernel)) ? 130 : 100;
	return prefix_of(kernel) >= 3 ? 130 : 100;
}

static void fabricate_runs(struct result_set *rs, const struct spec_experiment *e, const double level[2])
{
	unsigned seq = 0;

	rs->decide = (struct decide_params){ .alpha = e->decide.alpha, .power = e->decide.power, .q = e->decide.q,
					     .method = (enum stat_method)e->decide.statistic,
					     .sequential = e->repeat_auto, .min_boots = e->decide.min_boots,
					     .max_boots = e->decide.max_boots };
	for (size_t k = 0; k < e->jobs[0].nexpect; k++) {
		const struct spec_expect *x = &e->jobs[0].expect[k];

		result_add_expect(rs, 0, x->metric,
				  x->dir == EXPECT_INCREASE ? DIR_INCREASE
				  : x->dir == EXPECT_DECREASE ? DIR_DECREASE : DIR_UNCHANGED,
				  x->effect, x->has_effect);
	}
	for (unsigned b = 0; b < 4; b++)
		for (unsigned v = 0; v < 2; v++)
			for (unsigned k = 0; k < 2; k++) {
				_cleanup_free_ char *id = xasprintf("proc.%04u", ++seq);
				const char *kernel = e->kernels.v[v].name;
				struct result_run *r = result_add_run(rs, id, kernel, "w", 0, b * 2 + k + 1);

				r->status = RUN_OK;
				r->boot = xasprintf("proc.b%u", b * 2 + v + 1);
				result_add_metric(r, "w.m", level[v] + (k ? 0.2 : -0.2) + 0.1 * b);
			}
}

/* Each run's metrics file, as a worker leaves it. */
static void write_metrics(const char *dir, const struct result_set *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		_cleanup_free_ char *rd = xasprintf("%s/runs/%s", dir, rs->runs[i].id);
		_cleanup_free_ char *mp = path_join(rd, "metrics");
		_cleanup_free_ char *line = xasprintf("w.m %.6f\n", rs->runs[i].m[0].value);

		assert_int_equal(path_mkdir_p(rd, 0755), 0);
		assert_int_equal(fs_write_atomic(mp, line, strlen(line), 0644), 0);
	}
}

static int bisect_step_run(void *userdata, const struct spec *s, const struct spec_experiment *e,
			   const char *resume_dir, const char *rt, void (*started)(void *, const char *),
			   void *started_data, struct result_set **ret_rs)
{
	struct bfake *f = userdata;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *id = NULL, *dir = NULL;
	struct result_set *rs;
	double level[2];

	assert_string_equal(rt, f->root);
	/* the cut: the good end and the kernel under test, nothing else */
	assert_int_equal(e->kernels.n, 2);
	strv_push(&f->visited, e->kernels.v[1].name);
	if (resume_dir) {
		strv_push(&f->resumed, resume_dir);
		id = path_basename(resume_dir);
	} else {
		assert_int_equal(store_create(rt, &id, &d), 0);
	}
	dir = path_join(rt, id);
	rs = result_set_new(id, e->name);
	strv_push(&rs->variants, e->kernels.v[0].name);
	strv_push(&rs->variants, e->kernels.v[1].name);
	level[0] = level_of(f, s, e->kernels.v[0].name);
	level[1] = level_of(f, s, e->kernels.v[1].name);
	fabricate_runs(rs, e, level);
	if (!resume_dir) {
		/* the folder holds its pending runs before the engine says it started */
		for (size_t i = 0; i < rs->n; i++)
			rs->runs[i].status = RUN_PENDING;
		assert_int_equal(store_save_journal(dir, rs, &d), 0);
		for (size_t i = 0; i < rs->n; i++)
			rs->runs[i].status = RUN_OK;
	}
	if (f->panics && streq(f->panics, e->kernels.v[1].name))
		for (size_t i = 0; i < rs->n; i++)
			if (streq(rs->runs[i].variant, f->panics)) {
				rs->runs[i].status = RUN_FAILED;
				rs->runs[i].error = xasprintf(
					"VM 'proc-%zu' (%s on t): boot failure: the console says 'Kernel panic - not "
					"syncing' after 3.1 s; the last console lines:\nRun /sbin/init as init process\n"
					"Kernel panic - not syncing: Attempted to kill init! exitcode=0x0000000b\n",
					i, f->panics);
			}
	started(started_data, id);
	if (f->fail_at && streq(f->fail_at, e->kernels.v[1].name)) {
		f->fail_at = NULL;
		result_set_free(rs);
		return -1;
	}
	write_metrics(dir, rs);
	assert_int_equal(store_save(dir, rs, &d), 0);
	*ret_rs = rs;
	return 0;
}

static int bisect_load_spec(void *userdata, struct spec **ret)
{
	static const struct spec_load_opts memonly = { .no_include = true, .no_filesystem = true };
	_cleanup_diags_ struct diags d = { 0 };
	const struct bfake *f = userdata;
	const char *text = f && f->yaml ? f->yaml : bisect_yaml;

	return spec_load_buffer("t.yaml", text, strlen(text), &memonly, ret, &d);
}

/* The workflow's build: every kernel builds but the broken commit's, which says what a compiler says. */
static int bisect_build(void *userdata, const struct spec *s, const char *name, char **ret_log)
{
	struct bfake *f = userdata;

	strv_push(&f->built, name);
	if (f->broken && streq(commit_of(s, name), f->broken)) {
		*ret_log = f->broken_log ? xstrdup(f->broken_log) : xstrdup("make failed (exit status 2): make -j2 bzImage\n"
				   "fs/proc/version.c: In function 'version_proc_show':\n"
				   "fs/proc/version.c:12:1: error: expected ';' before '}' token\n"
				   "make[3]: *** [scripts/Makefile.build:250: fs/proc/version.o] Error 1\n");
		return 1;
	}
	return 0;
}

static void bisect_say(void *userdata, const char *line)
{
	struct bfake *f = userdata;

	strv_push(&f->said, line);
}

static void bfake_release(struct bfake *f)
{
	strv_release(&f->built);
	strv_release(&f->visited);
	strv_release(&f->resumed);
	strv_release(&f->said);
}

static const struct bisect_params slow_params = { .experiment = "proc", .good = "base", .bad = "slow",
						  .metric = "w.m", .threshold_pct = 20 };

/* The bisect's folder holds a stored run of every step's runs, and its log says how it ended. */
static void assert_folder(const struct bisect_session *x, size_t runs)
{
	_cleanup_result_set_ struct result_set *all = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf log = STRBUF_INIT;
	_cleanup_free_ char *lp = path_join(x->dir, "bisect.log");

	assert_int_equal(store_load(x->dir, &all, &d), 0);
	assert_int_equal(all->n, runs);
	assert_int_equal(strbuf_read_file(&log, lp, 1 << 20), 0);
	assert_non_null(strstr(log.buf, "found: "));
}

static void test_bisect(void **state)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	char broot[] = "/tmp/lab-unit-bisect.XXXXXX";
	struct bfake f = { .root = broot };
	struct workflow w = { .run = bisect_step_run, .load_spec = bisect_load_spec, .say = bisect_say, .userdata = &f };
	struct bisect_session x = { 0 };
	enum bisect_state st;

	(void)state;
	assert_non_null(mkdtemp(broot));
	assert_int_equal(bisect_load_spec(NULL, &s), 0);
	assert_int_equal(bisect_session_new(&x, &w, broot, s, &slow_params, &d), 0);
	assert_int_equal(x.b.npatches, 4);
	assert_int_equal(bisect_session_walk(&x, false, &st, &d), 0);
	assert_int_equal(d.n, 0);
	assert_int_equal(st, BISECT_FOUND);
	/* the ends first, then the middle of what is left */
	assert_int_equal(f.visited.n, 3);
	assert_string_equal(f.visited.v[0], "slow@4");
	assert_string_equal(f.visited.v[1], "slow@2");
	assert_string_equal(f.visited.v[2], "slow@3");
	assert_int_equal(f.resumed.n, 0);
	bisect_format_text(&x.b, &text);
	assert_non_null(strstr(text.buf, "first bad: slow@3 (proc: wait 200 us in every read of /proc/version)"));
	assert_folder(&x, 3 * 16);
	assert_true(f.said.n >= 5); /* started, a line before and after each step, found */
	bisect_session_release(&x);
	bfake_release(&f);
	assert_int_equal(fs_remove_tree(broot), 0);
}

/* A prefix whose kernel panics at every boot is skipped (the kernel's own
 * failure, not a measurement): the bisect goes round it and, with only it
 * left, names the range it leaves. */
static void test_bisect_skips(void **state)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	char broot[] = "/tmp/lab-unit-bisect.XXXXXX";
	struct bfake f = { .root = broot, .panics = "slow@2" };
	struct workflow w = { .run = bisect_step_run, .load_spec = bisect_load_spec, .say = bisect_say, .userdata = &f };
	struct bisect_session x = { 0 };
	enum bisect_state st;

	(void)state;
	assert_non_null(mkdtemp(broot));
	assert_int_equal(bisect_load_spec(NULL, &s), 0);
	assert_int_equal(bisect_session_new(&x, &w, broot, s, &slow_params, &d), 0);
	assert_int_equal(bisect_session_walk(&x, false, &st, &d), 0);
	assert_int_equal(st, BISECT_AMBIGUOUS);
	assert_int_equal(f.visited.n, 4);
	assert_string_equal(f.visited.v[0], "slow@4");
	assert_string_equal(f.visited.v[1], "slow@2"); /* panics: skipped */
	assert_string_equal(f.visited.v[2], "slow@3"); /* the nearest to the middle */
	assert_string_equal(f.visited.v[3], "slow@1");
	assert_int_equal(bisect_step(&x.b, 2)->mark, BISECT_SKIPPED);
	assert_non_null(strstr(bisect_step(&x.b, 2)->why, "the kernel's failure (panic)"));
	assert_non_null(strstr(bisect_step(&x.b, 2)->why, "Attempted to kill init"));
	bisect_format_text(&x.b, &text);
	assert_non_null(strstr(text.buf, "ambiguous: patches 2..2 were skipped"));
	assert_non_null(strstr(text.buf, "the first bad patch is one of 2..3"));
	bisect_session_release(&x);
	bfake_release(&f);
	assert_int_equal(fs_remove_tree(broot), 0);
}

/* git -C repo ARGS... with a fixed identity; the last line of its stdout (an id) in out. */
static void git_do(const char *repo, struct strbuf *out, ...)
{
	_cleanup_command_ struct command c = { 0 };
	va_list ap;
	const char *a;

	command_init(&c, "git");
	command_args(&c, "-C", repo, "-c", "user.name=Dev", "-c", "user.email=dev@example.org", NULL);
	va_start(ap, out);
	while ((a = va_arg(ap, const char *)))
		command_arg(&c, a);
	va_end(ap);
	command_env(&c, "GIT_CONFIG_GLOBAL", "/dev/null");
	c.out = out;
	assert_int_equal(command_run(&c), 0);
	if (out)
		strbuf_setlen(out, out->len && out->buf[out->len - 1] == '\n' ? out->len - 1 : out->len);
}

static void git_commit(const char *repo, const char *file, const char *subject, struct strbuf *id)
{
	_cleanup_free_ char *f = path_join(repo, file);

	assert_int_equal(fs_write_atomic(f, subject, strlen(subject), 0644), 0);
	git_do(repo, NULL, "add", file, NULL);
	git_do(repo, NULL, "commit", "-q", "-m", subject, NULL);
	strbuf_reset(id);
	git_do(repo, id, "rev-parse", "HEAD", NULL);
}

/*
 * A bisect over the commits of a git source, merges included: the good
 * commit, mm and sched on the main line, a side branch from the good
 * commit whose first commit slows w.m down, merged, then two more. The
 * commit that does not build is skipped on the compiler's word; the
 * culprit on the side branch is named with its subject and author; over
 * the first-parent line the merge that brought it in is. Each kernel is
 * the experiment's first built at a commit (linux-g<id12>, its source's
 * ref the commit), and the stored bisect opens again.
 */
static void test_bisect_commits(void **state)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT, c0 = STRBUF_INIT, c1 = STRBUF_INIT, c2 = STRBUF_INIT,
				       s1 = STRBUF_INIT, s2 = STRBUF_INIT, m = STRBUF_INIT, c3 = STRBUF_INIT,
				       c4 = STRBUF_INIT;
	char broot[] = "/tmp/lab-unit-bisect.XXXXXX";
	_cleanup_free_ char *repo = NULL, *cache = NULL, *ytext = NULL, *want = NULL;
	struct bfake f = { .root = broot };
	struct workflow w = { .run = bisect_step_run, .load_spec = bisect_load_spec, .build = bisect_build,
			      .say = bisect_say, .userdata = &f };
	struct bisect_session x = { 0 }, y = { 0 };
	struct bisect_params p = { .experiment = "proc", .metric = "w.m", .threshold_pct = 20, .bad = "master" };
	enum bisect_state st;
	unsigned skipped = 0;

	(void)state;
	assert_non_null(mkdtemp(broot));
	repo = path_join(broot, "repo");
	cache = path_join(broot, "cache");
	assert_int_equal(path_mkdir_p(repo, 0755), 0);
	setenv("LAB_CACHE_DIR", cache, 1);
	git_do(repo, NULL, "init", "-q", "-b", "master", NULL);
	git_commit(repo, "Makefile", "kbuild: the good commit", &c0);
	git_do(repo, NULL, "checkout", "-q", "-b", "side", NULL);
	git_commit(repo, "proc.c", "proc: slow reads", &s1);
	git_commit(repo, "proc.h", "proc: a comment", &s2);
	git_do(repo, NULL, "checkout", "-q", "master", NULL);
	git_commit(repo, "mm.c", "mm: a", &c1);
	git_commit(repo, "sched.c", "sched: b", &c2);
	git_do(repo, NULL, "merge", "-q", "--no-ff", "-m", "Merge branch 'side'", "side", NULL);
	git_do(repo, &m, "rev-parse", "HEAD", NULL);
	git_commit(repo, "net.c", "net: c", &c3);
	git_commit(repo, "fs.c", "fs: d", &c4);
	ytext = xasprintf("version: 1\n"
			 "sources: {g: {type: git, url: '%s', ref: master}}\n"
			 "kernels:\n"
			 "  linux: {source: g}\n"
			 "  linux-opt: {from: linux}\n%s",
			 repo, PROC_EXPERIMENT("linux, linux-opt"));
	f.yaml = ytext;
	f.repo = repo;
	f.culprit = s1.buf;
	p.good = c0.buf;
	assert_int_equal(bisect_load_spec(&f, &s), 0);
	assert_int_equal(bisect_session_new(&x, &w, broot, s, &p, &d), 0);
	assert_non_null(x.b.commits);
	assert_int_equal(x.b.npatches, 7);
	assert_string_equal(x.b.commits[7].id, c4.buf);
	/* the first of sched: b and proc: a comment in the range is chosen after the ends: make it the broken one */
	for (unsigned k = 1; k <= 7 && !f.broken; k++)
		if (streq(x.b.commits[k].id, c2.buf) || streq(x.b.commits[k].id, s2.buf))
			f.broken = x.b.commits[k].id;
	assert_int_equal(bisect_session_walk(&x, false, &st, &d), 0);
	assert_int_equal(st, BISECT_FOUND);
	bisect_format_text(&x.b, &text);
	want = xasprintf("first bad commit: %s (proc: slow reads)\nauthor: Dev <dev@example.org>\n", s1.buf);
	assert_non_null(strstr(text.buf, want));
	/* every kernel built before its run is the first kernel at a commit */
	for (size_t i = 0; i < f.built.n; i++)
		assert_true(strncmp(f.built.v[i], "linux-g", 7) == 0 && strlen(f.built.v[i]) == 19);
	for (size_t i = 0; i < x.b.nsteps; i++) {
		const struct bisect_step *bs = &x.b.steps[i];

		if (bs->mark != BISECT_SKIPPED)
			continue;
		skipped++;
		assert_string_equal(x.b.commits[bs->prefix].id, f.broken);
		assert_null(bs->run); /* never run: it did not build */
		assert_non_null(strstr(bs->why, "the kernel's failure (build): fs/proc/version.c:12:1: error: expected"));
	}
	assert_int_equal(skipped, 1);
	/* the stored bisect opens again against lab.yaml, its commits its own */
	assert_int_equal(bisect_session_open(&y, &w, broot, x.id, &d), 0);
	assert_int_equal(y.b.npatches, 7);
	bisect_session_release(&y);
	bisect_session_release(&x);

	/* the first-parent line: the merge brought the slow reads in */
	{
		_cleanup_spec_ struct spec *s2spec = NULL;

		f.broken = NULL;
		p.first_parent = true;
		assert_int_equal(bisect_load_spec(&f, &s2spec), 0);
		assert_int_equal(bisect_session_new(&x, &w, broot, s2spec, &p, &d), 0);
		assert_int_equal(x.b.npatches, 5);
		assert_int_equal(bisect_session_walk(&x, false, &st, &d), 0);
		assert_int_equal(st, BISECT_FOUND);
		strbuf_reset(&text);
		bisect_format_text(&x.b, &text);
		free(want);
		want = xasprintf("first bad commit: %s (Merge branch 'side')", m.buf);
		assert_non_null(strstr(text.buf, want));
		assert_non_null(strstr(text.buf, "'s commits (first parents)"));
		bisect_session_release(&x);
	}

	/* a build that fails without the compiler's word is not a skip: the bisect stops for a resume */
	{
		_cleanup_spec_ struct spec *s5 = NULL;
		_cleanup_diags_ struct diags d5 = { 0 };

		p.first_parent = false;
		f.broken = c4.buf; /* the bad end itself */
		f.broken_log = "make failed (exit status 2): make -j2 bzImage\n"; /* no compiler's line */
		assert_int_equal(bisect_load_spec(&f, &s5), 0);
		assert_int_equal(bisect_session_new(&x, &w, broot, s5, &p, &d5), 0);
		assert_int_equal(bisect_session_walk(&x, false, &st, &d5), -1);
		assert_int_equal(x.b.nsteps, 1);
		assert_false(x.b.steps[0].done);
		assert_non_null(strstr(d5.v[d5.n - 1].msg, "not on the compiler's word (build)"));
		bisect_session_release(&x);
		f.broken = NULL;
		f.broken_log = NULL;
	}

	/* refused: refs that name nothing, --first-parent on a series */
	{
		_cleanup_spec_ struct spec *s3 = NULL;

		p.first_parent = false;
		p.good = "no-such-ref";
		assert_int_equal(bisect_load_spec(&f, &s3), 0);
		assert_int_equal(bisect_session_new(&x, &w, broot, s3, &p, &d), -1);
		assert_non_null(strstr(d.v[d.n - 1].msg, "'no-such-ref' names no commit"));
		bisect_session_release(&x);
	}
	{
		_cleanup_spec_ struct spec *s4 = NULL;
		struct bisect_params sp = slow_params;

		sp.first_parent = true;
		assert_int_equal(bisect_load_spec(NULL, &s4), 0);
		assert_int_equal(bisect_session_new(&x, &w, broot, s4, &sp, &d), -1);
		assert_non_null(strstr(d.v[d.n - 1].msg, "--first-parent is for commits of a git source"));
		bisect_session_release(&x);
	}
	unsetenv("LAB_CACHE_DIR");
	bfake_release(&f);
	assert_int_equal(fs_remove_tree(broot), 0);
}

/*
 * lab track over a real repository's line of 10 commits, the slow reads in
 * the 6th (c5): every 3rd commit tracked (c0, c3, c6, c9), each against the
 * one before; the one change point lies between c3 and c6, and its bisect
 * over c4..c6 names c5. Stopped in the middle of the second comparison, the
 * track resumes that comparison alone; resumed once it is done, nothing
 * runs again.
 */
/* The first `from` in file path replaced by `to` (which must be there). */
static void replace_in_file(const char *path, const char *from, const char *to)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
	const char *at;

	assert_true(strbuf_read_file(&sb, path, 1 << 20) >= 0);
	assert_non_null(at = strstr(sb.buf, from));
	strbuf_add(&out, sb.buf, (size_t)(at - sb.buf));
	strbuf_addstr(&out, to);
	strbuf_addstr(&out, at + strlen(from));
	assert_int_equal(fs_write_atomic(path, out.buf, out.len, 0644), 0);
}

static void test_track(void **state)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT;
	struct strbuf c[10];
	char broot[] = "/tmp/lab-unit-track.XXXXXX";
	_cleanup_free_ char *repo = NULL, *cache = NULL, *ytext = NULL, *stop = NULL, *id = NULL;
	struct bfake f = { .root = broot };
	struct workflow w = { .run = bisect_step_run, .load_spec = bisect_load_spec, .build = bisect_build,
			      .say = bisect_say, .userdata = &f };
	struct track_session x = { 0 }, y = { 0 };
	struct track_params p = { .experiment = "proc", .branch = "master", .metric = "w.m", .step = 3,
				  .threshold_pct = 20 };
	size_t visited;

	(void)state;
	assert_non_null(mkdtemp(broot));
	repo = path_join(broot, "repo");
	cache = path_join(broot, "cache");
	assert_int_equal(path_mkdir_p(repo, 0755), 0);
	setenv("LAB_CACHE_DIR", cache, 1);
	git_do(repo, NULL, "init", "-q", "-b", "master", NULL);
	for (int i = 0; i < 10; i++) {
		_cleanup_free_ char *file = xasprintf("f%d.c", i);

		strbuf_init(&c[i], 0);
		git_commit(repo, file, i == 5 ? "proc: slow reads" : i == 0 ? "kbuild: the start" : "mm: a change", &c[i]);
	}
	ytext = xasprintf("version: 1\n"
			  "sources: {g: {type: git, url: '%s', ref: master}}\n"
			  "kernels:\n"
			  "  linux: {source: g}\n"
			  "  linux-opt: {from: linux}\n%s",
			  repo, PROC_EXPERIMENT("linux, linux-opt"));
	f.yaml = ytext;
	f.repo = repo;
	f.culprit = c[5].buf;
	p.since = c[0].buf;
	stop = xasprintf("linux-g%.12s", c[6].buf);
	f.fail_at = stop; /* lab stops as the second comparison's run began */
	assert_int_equal(bisect_load_spec(&f, &s), 0);
	assert_int_equal(track_session_new(&x, &w, broot, s, &p, &d), 0);
	assert_int_equal(x.t.ncommits, 4);
	assert_string_equal(x.t.commits[1].id, c[3].buf);
	assert_string_equal(x.t.commits[3].id, c[9].buf);
	assert_int_equal(track_session_walk(&x, false, &d), -1);
	assert_true(x.t.pairs[0].done);
	assert_false(x.t.pairs[1].done);
	assert_non_null(x.t.pairs[1].run); /* its run began: resumed, not started again */
	id = xstrdup(x.id);
	track_session_release(&x);

	if (track_session_open(&y, &w, broot, id, &d) < 0)
		fail_msg("open: %s", d.n ? d.v[d.n - 1].msg : "?");
	visited = f.visited.n;
	if (track_session_walk(&y, true, &d) < 0)
		fail_msg("the walk stopped: %s", d.n ? d.v[d.n - 1].msg : "?");
	assert_int_equal(f.resumed.n, 1);
	assert_true(y.t.decided);
	assert_int_equal(y.t.npoints, 1);
	assert_int_equal(y.t.points[0].from, 1);
	assert_int_equal(y.t.points[0].at, 2);
	assert_true(y.t.points[0].change > 25 && y.t.points[0].change < 35);
	assert_string_equal(y.t.points[0].outcome, "found");
	assert_string_equal(y.t.points[0].culprit, c[5].buf);
	assert_string_equal(y.t.points[0].subject, "proc: slow reads");
	assert_non_null(y.t.points[0].bisect);
	/* two comparisons (the second resumed, the third), then the bisect's steps */
	assert_true(f.visited.n >= visited + 3);
	track_format_text(&y.t, &text);
	assert_non_null(strstr(text.buf, "due to commit "));
	assert_non_null(strstr(text.buf, "(\"proc: slow reads\") by Dev <dev@example.org>"));
	track_session_release(&y);

	/* resumed once done: nothing runs again */
	visited = f.visited.n;
	assert_int_equal(track_session_open(&y, &w, broot, id, &d), 0);
	assert_int_equal(track_session_walk(&y, true, &d), 0);
	assert_int_equal(f.visited.n, visited);
	track_session_release(&y);

	/* the robot's report, read from the track's folder and what it names */
	{
		_cleanup_free_ char *tdir = path_join(broot, id);
		_cleanup_strbuf_ struct strbuf rt = STRBUF_INIT, rj = STRBUF_INIT;
		_cleanup_diags_ struct diags rd = { 0 };
		_cleanup_free_ char *want = xasprintf("due to commit %.12s (\"proc: slow reads\") by Dev <dev@example.org>",
						      c[5].buf);
		struct track_report r;

		assert_int_equal(track_report_load(broot, tdir, &r, &rd), 0);
		assert_int_equal(rd.n, 0);
		assert_string_equal(r.id, id);
		assert_int_equal(r.nkept, 4);            /* every tracked commit has boots */
		assert_true(r.n >= 8);                   /* 2 boots a side in each of 3 comparisons */
		assert_true(r.pts[0].have_bisect);       /* the point's bisect, read back */
		assert_true(r.pts[0].b.nsteps >= 2);
		assert_int_equal(r.notes.n, 0);          /* every comparison and the bisect read (the fake engine stores no fingerprint) */
		assert_non_null(r.workload);
		track_report_format_text(&r, &rt);
		assert_non_null(strstr(rt.buf, want));
		assert_non_null(strstr(rt.buf, "first bad commit: "));
		track_report_format_json(&r, &rj);
		assert_non_null(strstr(rj.buf, c[5].buf));
		assert_non_null(strstr(rj.buf, "\"kind\": \"news\""));
		track_report_release(&r);
	}

	/* a track.json whose point names a bisect that is not its own (here the
	 * point's bisect made to bisect another metric) is refused on resume,
	 * not lent that bisect's culprit */
	{
		_cleanup_free_ char *tj = xasprintf("%s/%s/track.json", broot, id), *bdir = NULL, *bj = NULL;
		_cleanup_strbuf_ struct strbuf keep_t = STRBUF_INIT, keep_b = STRBUF_INIT;
		_cleanup_diags_ struct diags td = { 0 };

		assert_int_equal(track_session_open(&y, &w, broot, id, &d), 0);
		bdir = path_join(broot, y.t.points[0].bisect);
		bj = path_join(bdir, "bisect.json");
		track_session_release(&y);
		assert_true(strbuf_read_file(&keep_t, tj, 1 << 20) >= 0);
		assert_true(strbuf_read_file(&keep_b, bj, 1 << 20) >= 0);
		replace_in_file(tj, "\"outcome\": \"found\"", "\"outcome\": null");
		replace_in_file(bj, "\"metric\": \"w.m\"", "\"metric\": \"w.other\"");
		assert_int_equal(track_session_open(&y, &w, broot, id, &td), 0);
		assert_int_equal(track_session_walk(&y, true, &td), -1);
		assert_true(td.n > 0);
		assert_non_null(strstr(td.v[td.n - 1].msg, "which is not its own: it bisects w.other of experiment proc"));
		track_session_release(&y);
		assert_int_equal(fs_write_atomic(tj, keep_t.buf, keep_t.len, 0644), 0);
		assert_int_equal(fs_write_atomic(bj, keep_b.buf, keep_b.len, 0644), 0);
	}

	/* a second track of the same branch: the culprit is not news, it is known. Run ids
	 * order tracks to the second, and two in one second are not told apart: start the
	 * second track in the next one */
	{
		time_t t0 = time(NULL);

		while (time(NULL) == t0)
			usleep(10000);
	}
	{
		_cleanup_spec_ struct spec *s2 = NULL;
		_cleanup_free_ char *prefix = xstrndup(c[5].buf, 10);

		assert_int_equal(bisect_load_spec(&f, &s2), 0);
		assert_int_equal(track_session_new(&y, &w, broot, s2, &p, &d), 0);
		assert_int_equal(track_session_walk(&y, false, &d), 0);
		assert_int_equal(y.t.npoints, 1);
		assert_string_equal(y.t.points[0].culprit, c[5].buf);
		assert_string_equal(y.t.points[0].known, id);
		assert_null(y.t.points[0].accepted);
		/* accepted as a trade-off: a resume says so */
		assert_int_equal(track_accept(broot, prefix, "w.m", "slower reads, a correct banner", &d), 0);
		assert_int_equal(track_accept(broot, "xyz", "w.m", "no", &d), -EINVAL);
		assert_int_equal(track_accept(broot, prefix, "w.m", "two\nlines", &d), -EINVAL);
		free(id);
		id = xstrdup(y.id);
		track_session_release(&y);
		assert_int_equal(track_session_open(&y, &w, broot, id, &d), 0);
		visited = f.visited.n;
		assert_int_equal(track_session_walk(&y, true, &d), 0);
		assert_int_equal(f.visited.n, visited);
		assert_string_equal(y.t.points[0].accepted, "slower reads, a correct banner");
		strbuf_reset(&text);
		track_format_text(&y.t, &text);
		assert_non_null(strstr(text.buf, "a known trade-off: slower reads, a correct banner"));
		track_session_release(&y);
	}

	/* the earlier tracks as another experiment's, which names its metric alike: news again */
	{
		_cleanup_spec_ struct spec *s3 = NULL;
		_cleanup_strv_ struct strv ids = STRV_INIT;

		assert_int_equal(store_list(broot, &ids), 0);
		for (size_t i = 0; i < ids.n; i++) {
			_cleanup_free_ char *path = xasprintf("%s/%s/track.json", broot, ids.v[i]), *at = NULL;
			_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
			const char *e;

			if (strbuf_read_file(&sb, path, 1 << 20) < 0)
				continue;
			assert_non_null(e = strstr(sb.buf, "\"experiment\": \"proc\""));
			strbuf_add(&out, sb.buf, (size_t)(e - sb.buf));
			strbuf_addstr(&out, "\"experiment\": \"other\"");
			strbuf_addstr(&out, e + strlen("\"experiment\": \"proc\""));
			assert_int_equal(fs_write_atomic(path, out.buf, out.len, 0644), 0);
		}
		assert_int_equal(bisect_load_spec(&f, &s3), 0);
		assert_int_equal(track_session_new(&y, &w, broot, s3, &p, &d), 0);
		assert_int_equal(track_session_walk(&y, false, &d), 0);
		assert_int_equal(y.t.npoints, 1);
		assert_null(y.t.points[0].known);
		track_session_release(&y);
	}
	for (int i = 0; i < 10; i++)
		strbuf_release(&c[i]);
	unsetenv("LAB_CACHE_DIR");
	bfake_release(&f);
	assert_int_equal(fs_remove_tree(broot), 0);
}

static void test_bisect_resumed(void **state)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *id = NULL, *step_run = NULL;
	char broot[] = "/tmp/lab-unit-bisect.XXXXXX";
	struct bfake f = { .root = broot, .fail_at = "slow@2" };
	struct workflow w = { .run = bisect_step_run, .load_spec = bisect_load_spec, .say = bisect_say, .userdata = &f };
	struct bisect_session x = { 0 }, y = { 0 };
	enum bisect_state st;

	(void)state;
	assert_non_null(mkdtemp(broot));
	assert_int_equal(bisect_load_spec(NULL, &s), 0);
	assert_int_equal(bisect_session_new(&x, &w, broot, s, &slow_params, &d), 0);
	/* lab stops in the second step, its run begun */
	assert_int_equal(bisect_session_walk(&x, false, &st, &d), -1);
	assert_int_equal(st, BISECT_RUNNING);
	assert_int_equal(f.visited.n, 2);
	id = xstrdup(x.id);
	assert_non_null(bisect_step(&x.b, 2)->run);
	step_run = path_join(broot, bisect_step(&x.b, 2)->run);
	bisect_session_release(&x);
	/* read back from bisect.json: that run goes on, the first step is not run again */
	assert_int_equal(bisect_session_open(&y, &w, broot, id, &d), 0);
	assert_int_equal(bisect_session_walk(&y, true, &st, &d), 0);
	assert_int_equal(st, BISECT_FOUND);
	assert_int_equal(f.visited.n, 4);
	assert_string_equal(f.visited.v[2], "slow@2");
	assert_string_equal(f.visited.v[3], "slow@3");
	assert_int_equal(f.resumed.n, 1);
	assert_string_equal(f.resumed.v[0], step_run);
	assert_folder(&y, 3 * 16);
	bisect_session_release(&y);
	bfake_release(&f);
	assert_int_equal(fs_remove_tree(broot), 0);
}

static void test_bisect_refuses(void **state)
{
	_cleanup_diags_ struct diags d = { 0 };
	char broot[] = "/tmp/lab-unit-bisect.XXXXXX";
	struct bfake f = { .root = broot };
	struct workflow w = { .run = bisect_step_run, .load_spec = bisect_load_spec, .userdata = &f };
	static const struct { struct bisect_params p; const char *says; } bad[] = {
		{ { .experiment = "proc", .good = "base", .bad = "slow@5", .metric = "w.m" },
		  "is not base, slow or slow@N with N from 1 to 4" },
		{ { .experiment = "proc", .good = "slow@3", .bad = "slow@2", .metric = "w.m" },
		  "must come before the bad end" },
		{ { .experiment = "nosuch", .good = "base", .bad = "slow", .metric = "w.m" }, "no experiment 'nosuch'" },
		{ { .experiment = "proc", .good = "base", .bad = "base", .metric = "w.m" },
		  "is not a series on top of another kernel" },
		{ { .experiment = "proc", .good = "base", .bad = "slow", .metric = "nosuch.metric" }, "nosuch.metric" },
	};

	(void)state;
	assert_non_null(mkdtemp(broot));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		_cleanup_spec_ struct spec *s = NULL;
		_cleanup_strv_ struct strv stored = STRV_INIT;
		struct bisect_session x = { 0 };

		assert_int_equal(bisect_load_spec(NULL, &s), 0);
		assert_int_equal(bisect_session_new(&x, &w, broot, s, &bad[i].p, &d), -1);
		assert_true(d.n >= 1);
		if (!strstr(d.v[0].msg, bad[i].says))
			fail_msg("case %zu: '%s' does not say '%s'", i, d.v[0].msg, bad[i].says);
		/* nothing stored, nothing run */
		store_list(broot, &stored);
		assert_int_equal(stored.n, 0);
		assert_int_equal(f.visited.n, 0);
		diags_release(&d);
		bisect_session_release(&x);
	}
	bfake_release(&f);
	assert_int_equal(fs_remove_tree(broot), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calibrate),
		cmocka_unit_test(test_calibrate_refuses),
		cmocka_unit_test(test_bisect),
		cmocka_unit_test(test_bisect_skips),
		cmocka_unit_test(test_bisect_commits),
		cmocka_unit_test(test_track),
		cmocka_unit_test(test_bisect_resumed),
		cmocka_unit_test(test_bisect_refuses),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
