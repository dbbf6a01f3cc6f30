/* SPDX-License-Identifier: MIT */
/*
 * lab bisect EXPERIMENT --good K --bad K --metric M --threshold T: which
 * patch of a series moved a metric (engine/bisect.h says how each step is
 * decided). Each step is a lab run of the experiment cut to the two
 * kernels and the jobs that measure M (spec_bisect_step), stored like any
 * other run; the kernels are built as the steps need them, in the
 * series' one work tree, so a step rebuilds only what its patches touch.
 * The bisect's own folder, <results>/<ID>/, is a stored run too: every
 * step's runs gathered (run.json), bisect.json (the state, after every
 * step) and bisect.log, so `lab report ID` and `lab bundle ID` work on it
 * and `lab bisect --resume ID` goes on after an interruption.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "cmd.h"
#include "kernel/patch.h"
#include "kernel/variant.h"
#include "result/compare.h"
#include "engine/bisect.h"
#include "engine/engine.h"
#include "store/store.h"
#include "store/index.h"
#include "util/alloc.h"
#include "util/escape.h"
#include "util/clock.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/units.h"
#include "util/banned.h"

struct bisect_opts {
	const char *good, *bad, *metric, *threshold, *direction, *resume, *alpha;
	unsigned max_boots, jobs;
	bool oversubscribe;
};

const struct lab_option bisect_options[] = {
	OPT(struct bisect_opts, good, OPT_STRING, 0, "good", "KERNEL", "the good end: the series' from kernel or NAME@N"),
	OPT(struct bisect_opts, bad, OPT_STRING, 0, "bad", "KERNEL", "the bad end: NAME@N, or NAME for the whole series"),
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

/* The bisect's folder: its state, its log (a line per event, timestamped). */
struct bisector {
	const struct lab_ctx *ctx;
	struct bisect b;
	char *root, *dir, *id;
};

static void blog(struct bisector *x, const char *fmt, ...) _printf_(2, 3);
static void blog(struct bisector *x, const char *fmt, ...)
{
	_cleanup_free_ char *path = path_join(x->dir, "bisect.log"), *msg = NULL;
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT, esc = STRBUF_INIT;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) < 0)
		msg = NULL;
	va_end(ap);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	/* subjects and the metric may come from a stored bisect.json: escaped, in the log and on the terminal */
	term_escape(&esc, msg ? msg : "?");
	strbuf_addf(&line, "%s %s\n", stamp, esc.buf);
	fs_append(path, line.buf, line.len);
	if (x->ctx->verbosity >= 0 && !x->ctx->json)
		fprintf(stderr, "bisect: %s\n", esc.buf);
}

static int save_state(struct bisector *x)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *path = path_join(x->dir, BISECT_FILE);
	int r;

	bisect_format_json(&x->b, &sb);
	r = fs_write_atomic(path, sb.buf, sb.len, 0644);
	if (r < 0)
		cmd_error(x->ctx, "cannot write %s: %s", path, strerror(-r));
	return r;
}

/* The series' own patches and their subjects; 0 patches is an error. */
static int series_patches(const struct lab_ctx *ctx, const struct spec *s, const char *series, struct bisect *b)
{
	const struct spec_kernel *k = spec_find_kernel(s, series);
	_cleanup_strv_ struct strv files = STRV_INIT;
	_cleanup_diags_ struct diags d = { 0 };

	if (!k) {
		cmd_error(ctx, "bisect: no kernel variant '%s' in %s", series, s->path);
		return -1;
	}
	if (!k->from.name) {
		cmd_error(ctx, "bisect: kernel '%s' is not a series on top of another kernel (it has no from:)", series);
		return -1;
	}
	if (kvariant_own_patches(k, &files, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	if (files.n < 1) {
		cmd_error(ctx, "bisect: kernel '%s' has no patches to bisect", series);
		return -1;
	}
	for (size_t i = 0; i < files.n; i++) {
		struct patch *p = NULL;

		if (patch_load(files.v[i], &p, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return -1;
		}
		strv_push(&b->subjects, p->subject && *p->subject ? patch_subject_line(p->subject) : files.v[i]);
		patch_free(p);
	}
	b->npatches = (unsigned)files.n;
	b->series = xstrdup(series);
	b->from = xstrdup(k->from.name);
	return 0;
}

/* "base" (the from kernel: 0), "NAME@N" or "NAME" (every patch). */
static int parse_end(const struct lab_ctx *ctx, const struct bisect *b, const char *what, const char *name,
		     unsigned *ret)
{
	size_t n = strlen(b->series);
	uint64_t k;

	if (streq(name, b->from)) {
		*ret = 0;
		return 0;
	}
	if (streq(name, b->series)) {
		*ret = b->npatches;
		return 0;
	}
	if (strncmp(name, b->series, n) == 0 && name[n] == '@' && parse_uint(name + n + 1, b->npatches, &k) == 0 &&
	    k >= 1) {
		*ret = (unsigned)k;
		return 0;
	}
	cmd_error(ctx, "bisect: --%s '%s' is not %s, %s or %s@N with N from 1 to %u", what, name, b->from, b->series,
		  b->series, b->npatches);
	return -1;
}

/* The series a --bad end names: NAME or NAME@N. */
static char *series_of(const char *bad)
{
	const char *at = strchr(bad, '@');

	return at ? xstrndup(bad, (size_t)(at - bad)) : xstrdup(bad);
}

static int new_bisect(struct bisector *x, struct spec *s, const char *experiment, const struct bisect_opts *o)
{
	struct bisect *b = &x->b;
	_cleanup_free_ char *series = NULL, *id = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	struct spec_experiment *e = (struct spec_experiment *)spec_find_experiment(s, experiment);
	double thr = 0.05, alpha;

	if (!e) {
		cmd_error(x->ctx, "bisect: no experiment '%s' in %s (lab plan lists them)", experiment, s->path);
		return -1;
	}
	if (!o->good || !o->bad || !o->metric) {
		cmd_error(x->ctx, "bisect: --good, --bad and --metric are needed");
		return -1;
	}
	if (o->threshold && (parse_percent(o->threshold, &thr) < 0 || !(thr > 0 && thr < 10))) {
		cmd_error(x->ctx, "bisect: --threshold '%s' is not a percentage above 0 (5%%)", o->threshold);
		return -1;
	}
	alpha = e->decide.alpha;
	if (o->alpha && (parse_double(o->alpha, &alpha) < 0 || !(alpha > 0 && alpha < 0.5))) {
		cmd_error(x->ctx, "bisect: --alpha '%s' is not a number between 0 and 0.5", o->alpha);
		return -1;
	}
	series = series_of(o->bad);
	if (series_patches(x->ctx, s, series, b) < 0 || parse_end(x->ctx, b, "good", o->good, &b->good) < 0 ||
	    parse_end(x->ctx, b, "bad", o->bad, &b->bad) < 0)
		return -1;
	if (b->good >= b->bad) {
		cmd_error(x->ctx, "bisect: the good end (%u patches) must come before the bad end (%u)", b->good, b->bad);
		return -1;
	}
	b->experiment = xstrdup(experiment);
	b->metric = xstrdup(o->metric);
	b->threshold = thr * 100;
	b->direction = !o->direction ? 0 : streq(o->direction, "increase") ? 1 : -1;
	b->alpha = alpha;
	b->max_boots = o->max_boots ? o->max_boots : e->decide.max_boots;
	{
		/* the cut every step makes, tried before anything is stored */
		_cleanup_free_ char *g = bisect_kernel_name(b, b->good), *t = bisect_kernel_name(b, b->bad);
		struct spec_bisect_step cut = { .series = b->series, .good = g, .test = t, .metric = b->metric,
						.npatches = b->npatches, .dir = EXPECT_UNCHANGED,
						.threshold_pct = b->threshold, .alpha = b->alpha };

		if (spec_bisect_step(s, e, &cut, &d) < 0) {
			cmd_report_diags(x->ctx, &d);
			return -1;
		}
	}
	if (store_create(x->root, &id, &d) < 0) {
		cmd_report_diags(x->ctx, &d);
		return -1;
	}
	x->id = TAKE_PTR(id);
	x->dir = path_join(x->root, x->id);
	return save_state(x);
}

/*
 * A stored bisect.json against what it resumes with: its experiment and
 * series as lab.yaml has them now (the same number of patches), and each
 * step's run a stored run of that experiment. The file is data from disk:
 * a mismatch is refused, naming the field, before anything runs.
 */
static int check_stored(struct bisector *x, const char *path)
{
	const struct bisect *b = &x->b;
	_cleanup_spec_ struct spec *s = NULL;
	struct bisect now = { 0 };
	int r = 0;

	if (cmd_load_spec(x->ctx, x->ctx->file, &s) < 0)
		return -1;
	if (!spec_find_experiment(s, b->experiment)) {
		cmd_error(x->ctx, "bisect: %s: 'experiment': %s has no experiment '%s'", path, s->path, b->experiment);
		return -1;
	}
	if (series_patches(x->ctx, s, b->series, &now) < 0)
		return -1;
	if (now.npatches != b->npatches || !streq(now.from, b->from)) {
		cmd_error(x->ctx, "bisect: %s: 'patches': %u patches on %s, but series '%s' in %s has %u on %s", path,
			  b->npatches, b->from, b->series, s->path, now.npatches, now.from);
		r = -1;
	}
	bisect_release(&now);
	for (size_t i = 0; !r && i < b->nsteps; i++) {
		const struct bisect_step *st = &b->steps[i];
		_cleanup_free_ char *dir = st->run ? store_find(x->root, st->run) : NULL;
		_cleanup_result_set_ struct result_set *rs = NULL;
		_cleanup_diags_ struct diags d = { 0 };

		if (!dir)
			continue; /* not stored (any more): the step starts again */
		/* a run lab cannot read yet (stopped as it began) is the engine's to resume or refuse */
		if (store_load(dir, &rs, &d) < 0)
			continue;
		if (!rs->experiment || !streq(rs->experiment, b->experiment)) {
			cmd_error(x->ctx, "bisect: %s: 'steps': the run %s of prefix %u is of experiment '%s', not '%s'",
				  path, st->run, st->prefix, rs->experiment ? rs->experiment : "?", b->experiment);
			r = -1;
		}
	}
	return r;
}

static int load_bisect(struct bisector *x, const char *id)
{
	_cleanup_free_ char *path = NULL, *err = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	x->dir = store_find(x->root, id);
	if (!x->dir) {
		cmd_error(x->ctx, "bisect: no stored bisect '%s' under %s", id, x->root);
		return -1;
	}
	path = path_join(x->dir, BISECT_FILE);
	if ((r = strbuf_read_file(&sb, path, BISECT_MAX_BYTES)) < 0) {
		cmd_error(x->ctx, "bisect: %s is not a bisect: cannot read %s: %s", id, path, strerror(-r));
		return -1;
	}
	if (bisect_parse(path, sb.buf, sb.len, &x->b, &err) < 0) {
		cmd_error(x->ctx, "bisect: %s", err);
		return -1;
	}
	x->id = path_basename(x->dir);
	return check_stored(x, path);
}

struct step_started {
	struct bisector *x;
	struct bisect_step *st;
};

/* The step's run exists: remember it at once, so that --resume finds it whatever stops lab. */
static void on_started(void *userdata, const char *id)
{
	struct step_started *ss = userdata;

	if (!ss->st->run) {
		ss->st->run = xstrdup(id);
		save_state(ss->x);
	}
}

/* One step: the experiment cut to [good, prefix] and run (or its stored run resumed), then judged. */
static int run_step(struct bisector *x, unsigned prefix, const struct bisect_opts *o)
{
	struct bisect *b = &x->b;
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *c = NULL;
	_cleanup_free_ char *good = bisect_kernel_name(b, b->good), *test = bisect_kernel_name(b, prefix);
	_cleanup_free_ char *resume = NULL;
	struct bisect_step *st = bisect_step(b, prefix);
	struct spec_experiment *e;
	enum expect_direction dir = bisect_expect(b);
	struct spec_bisect_step cut = {
		.series = b->series, .good = good, .test = test, .metric = b->metric, .npatches = b->npatches,
		.dir = dir == DIR_INCREASE ? EXPECT_INCREASE : dir == DIR_DECREASE ? EXPECT_DECREASE : EXPECT_UNCHANGED,
		.threshold_pct = b->threshold, .alpha = bisect_step_alpha(b), .max_boots = b->max_boots,
	};
	const struct cmp_verdict *v = NULL;
	double t0 = now_sec();
	struct step_started ss = { .x = x, .st = st };
	struct cmd_engine_hook hook = { .started = on_started, .userdata = &ss };

	if (cmd_load_spec(x->ctx, x->ctx->file, &s) < 0)
		return -1;
	e = (struct spec_experiment *)spec_find_experiment(s, b->experiment);
	if (!e) {
		cmd_error(x->ctx, "bisect: %s no longer has experiment '%s'", s->path, b->experiment);
		return -1;
	}
	if (spec_bisect_step(s, e, &cut, &d) < 0) {
		cmd_report_diags(x->ctx, &d);
		return -1;
	}
	if (st->run && !(resume = store_find(x->root, st->run))) {
		blog(x, "step %s: its run %s is gone; starting the step again", test, st->run);
		free(st->run);
		st->run = NULL;
	}
	if (st->run) {
		blog(x, "step %s against %s: resuming run %s", test, good, st->run);
	} else {
		blog(x, "step %s against %s (%s %s, mde %g%%, alpha %.4g, up to %u boots a kernel)", test, good,
		     b->metric, expect_direction_name(dir),
		     b->threshold, cut.alpha, e->decide.max_boots);
	}
	if (cmd_engine_run_hooked(x->ctx, s, e, resume, o->jobs, o->oversubscribe, &hook, &rs) < 0) {
		st->seconds += now_sec() - t0;
		save_state(x);
		return -1;
	}
	c = compare_build(rs);
	for (size_t i = 0; i < c->nverdicts; i++)
		if (streq(c->verdicts[i].metric, b->metric) && streq(c->verdicts[i].variant, test))
			v = &c->verdicts[i];
	bisect_judge(b, st, v);
	st->seconds += now_sec() - t0;
	blog(x, "step %s: %s (%s: %s)", test, bisect_mark_name(st->mark), st->verdict, st->why ? st->why : "");
	return save_state(x);
}

/* The bisect folder as a stored run again (bisect_gather), errors said. */
static int gather_folder(struct bisector *x)
{
	_cleanup_diags_ struct diags d = { 0 };

	if (bisect_gather(&x->b, x->root, x->dir, x->id, &d) < 0) {
		cmd_report_diags(x->ctx, &d);
		return -1;
	}
	return 0;
}

int cmd_bisect(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	struct bisect_opts o = { 0 };
	struct bisector x = { .ctx = ctx };
	int first = cmd_options_parse(ctx, "bisect", NULL, OPTS_ANYWHERE, argc, argv, &o);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_free_ char *why = NULL;
	enum bisect_state state;
	unsigned lo, hi, next;
	int rc = EXIT_OK;

	if (first < 0)
		return cmd_options_exit(first);
	if ((o.resume && first != argc) || (!o.resume && argc - first != 1)) {
		cmd_error(ctx, "bisect: name one experiment, or --resume ID alone");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	x.root = cmd_results_dir(s);
	if (o.resume ? load_bisect(&x, o.resume) < 0 : new_bisect(&x, s, argv[first], &o) < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	blog(&x, "%s %s: bisecting %s over %s (%u..%u of %u patches)", o.resume ? "resuming" : "started", x.id,
	     x.b.metric, x.b.series, x.b.good, x.b.bad, x.b.npatches);
	while ((state = bisect_status(&x.b, &lo, &hi, &next, &why)) == BISECT_RUNNING) {
		if (run_step(&x, next, &o) < 0) {
			blog(&x, "step %u stopped: lab bisect --resume %s goes on", next, x.id);
			rc = EXIT_FAILED;
			break;
		}
	}
	if (rc == EXIT_OK)
		blog(&x, "%s: %s", bisect_state_name(state), why ? why : "");
	if (gather_folder(&x) < 0 && rc == EXIT_OK)
		rc = EXIT_FAILED;
	if (ctx->json) {
		_cleanup_free_ char *path = path_join(x.dir, BISECT_FILE);

		if (strbuf_read_file(&out, path, BISECT_MAX_BYTES) < 0)
			strbuf_addstr(&out, "{}\n");
	} else {
		_cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;

		strbuf_addf(&out, "bisect %s\n", x.id);
		bisect_format_text(&x.b, &raw);
		term_escape_lines(&out, raw.buf ? raw.buf : "");
	}
	cmd_write(&out);
	if (rc == EXIT_OK && state != BISECT_FOUND)
		rc = EXIT_FAILED;
out:
	bisect_release(&x.b);
	free(x.root);
	free(x.dir);
	free(x.id);
	return rc;
}
