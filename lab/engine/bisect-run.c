/* SPDX-License-Identifier: MIT */
/*
 * The bisect workflow (bisect-run.h): its folder, its log, its steps run
 * through the caller's engine call. Moved out of the command, which now
 * only parses the options and renders the outcome.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "../kernel/patch.h"
#include "../kernel/source.h"
#include "../kernel/variant.h"
#include "../result/compare.h"
#include "../result/failure.h"
#include "../spec/spec.h"
#include "../store/store.h"
#include "../util/alloc.h"
#include "../util/clock.h"
#include "../util/escape.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/units.h"
#include "bisect-run.h"
#include "../util/banned.h"

/* A line of bisect.log, and the same line said. */
#define blog(x, ...) workflow_log((x)->w, (x)->dir, "bisect.log", __VA_ARGS__)

static int save_state(struct bisect_session *x, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	bisect_format_json(&x->b, &sb);
	return workflow_save(x->dir, BISECT_FILE, &sb, d);
}

/* The series' own patches and their subjects; 0 patches is an error. */
static int series_patches(const struct spec *s, const char *series, struct bisect *b, struct diags *d)
{
	const struct spec_kernel *k = spec_find_kernel(s, series);
	_cleanup_strv_ struct strv files = STRV_INIT;

	if (!k) {
		diags_add(d, NULL, "bisect: no kernel variant '%s' in %s", series, s->path);
		return -1;
	}
	if (!k->from.name) {
		diags_add(d, NULL, "bisect: kernel '%s' is not a series on top of another kernel (it has no from:)",
			  series);
		return -1;
	}
	if (kvariant_own_patches(k, &files, d) < 0)
		return -1;
	if (files.n < 1) {
		diags_add(d, NULL, "bisect: kernel '%s' has no patches to bisect", series);
		return -1;
	}
	for (size_t i = 0; i < files.n; i++) {
		struct patch *p = NULL;

		if (patch_load(files.v[i], &p, d) < 0)
			return -1;
		strv_push(&b->subjects, p->subject && *p->subject ? patch_subject_line(p->subject) : files.v[i]);
		patch_free(p);
	}
	b->npatches = (unsigned)files.n;
	b->series = xstrdup(series);
	b->from = xstrdup(k->from.name);
	return 0;
}

/* "base" (the from kernel: 0), "NAME@N" or "NAME" (every patch). */
static int parse_end(const struct bisect *b, const char *what, const char *name, unsigned *ret, struct diags *d)
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
	diags_add(d, NULL, "bisect: --%s '%s' is not %s, %s or %s@N with N from 1 to %u", what, name, b->from,
		  b->series, b->series, b->npatches);
	return -1;
}

/* The commits of a git range a bisect walks: --good..--bad of kernel k's source. */
static int commit_range(struct bisect *b, const struct spec *s, const struct spec_kernel *k,
			const struct bisect_params *p, struct diags *d)
{
	_cleanup_free_ char *cache = spec_cache_dir(s);
	struct kcommit *c = NULL;
	size_t n = 0;

	if (!k->root_source || k->root_source->type != SOURCE_GIT) {
		diags_add(d, NULL, "bisect: kernel '%s' does not build from a git source: --good and --bad name "
				   "commits of one",
			  k->name);
		return -1;
	}
	if (ksource_git_range(cache, k->root_source, p->good, p->bad, p->first_parent, BISECT_MAX_COMMITS, &c, &n,
			      NULL, d) < 0)
		return -1;
	b->commits = xcalloc(n, sizeof(*b->commits));
	for (size_t i = 0; i < n; i++) {
		b->commits[i] = (struct bisect_commit){ .id = xstrndup(c[i].id, 40), .author = xstrdup(c[i].author),
							.parents = xcalloc(c[i].nparents + 1, sizeof(unsigned)),
							.nparents = c[i].nparents };
		if (c[i].nparents)
			memcpy(b->commits[i].parents, c[i].parents, c[i].nparents * sizeof(unsigned));
		if (i)
			strv_push(&b->subjects, c[i].subject);
	}
	b->npatches = (unsigned)n - 1;
	b->good = 0;
	b->bad = b->npatches;
	b->first_parent = p->first_parent;
	b->series = xstrdup(k->name);
	b->from = bisect_commit_kernel(k->name, b->commits[0].id);
	kcommits_free(c, n);
	return 0;
}

/* The kernel whose git commits are bisected: --kernel, or the experiment's
 * first when --bad names no kernel of lab.yaml and it builds from git;
 * NULL: a series. */
static const struct spec_kernel *commits_kernel(const struct spec *s, const struct spec_experiment *e,
						const struct bisect_params *p)
{
	const char *at = strchr(p->bad, '@');
	_cleanup_free_ char *name = at ? xstrndup(p->bad, (size_t)(at - p->bad)) : xstrdup(p->bad);
	const struct spec_kernel *k;

	if (p->kernel)
		return spec_find_kernel(s, p->kernel);
	if (spec_find_kernel(s, name) || !e->kernels.n)
		return NULL;
	k = spec_find_kernel(s, e->kernels.v[0].name);
	return k && k->root_source && k->root_source->type == SOURCE_GIT ? k : NULL;
}

/* The bisect's kernels and metric from p, checked against the series or the commits. */
static int set_params(struct bisect *b, const struct spec *s, const struct spec_experiment *e,
		      const struct bisect_params *p, struct diags *d)
{
	const char *at = strchr(p->bad, '@');
	_cleanup_free_ char *series = at ? xstrndup(p->bad, (size_t)(at - p->bad)) : xstrdup(p->bad);
	const struct spec_kernel *ck = commits_kernel(s, e, p);

	if (p->kernel && !ck) {
		diags_add(d, NULL, "bisect: --kernel '%s' is not a kernel of %s", p->kernel, s->path);
		return -1;
	}
	if (!ck && p->first_parent) {
		diags_add(d, NULL, "bisect: --first-parent is for commits of a git source, not a patch series");
		return -1;
	}
	if (ck ? commit_range(b, s, ck, p, d) < 0
	       : series_patches(s, series, b, d) < 0 || parse_end(b, "good", p->good, &b->good, d) < 0 ||
			 parse_end(b, "bad", p->bad, &b->bad, d) < 0)
		return -1;
	if (b->good >= b->bad) {
		diags_add(d, NULL, "bisect: the good end (%u patches) must come before the bad end (%u)", b->good,
			  b->bad);
		return -1;
	}
	b->experiment = xstrdup(e->name);
	b->metric = xstrdup(p->metric);
	b->threshold = p->threshold_pct > 0 ? p->threshold_pct : 5;
	b->direction = p->direction;
	b->alpha = p->alpha > 0 ? p->alpha : e->decide.alpha;
	b->max_boots = p->max_boots ? p->max_boots : e->decide.max_boots;
	return 0;
}

/* A commit bisect's step: its two kernels, the good commit's and prefix's, added to s. */
static int step_kernels(struct spec *s, const struct bisect *b, unsigned prefix, struct diags *d)
{
	unsigned ends[2] = { b->good, prefix };

	for (size_t i = 0; b->commits && i < 2; i++) {
		_cleanup_free_ char *name = bisect_kernel_name(b, ends[i]);

		if (spec_kernel_at_commit(s, b->series, name, b->commits[ends[i]].id, d) < 0)
			return -1;
	}
	return 0;
}

int bisect_session_new(struct bisect_session *x, const struct workflow *w, const char *root, struct spec *s,
		       const struct bisect_params *p, struct diags *d)
{
	struct bisect *b = &x->b;
	_cleanup_free_ char *id = NULL, *g = NULL, *t = NULL;
	struct spec_experiment *e = (struct spec_experiment *)spec_find_experiment(s, p->experiment);

	x->w = w;
	x->root = xstrdup(root);
	if (!e) {
		diags_add(d, NULL, "bisect: no experiment '%s' in %s (lab plan lists them)", p->experiment, s->path);
		return -1;
	}
	if (!p->good || !p->bad || !p->metric) {
		diags_add(d, NULL, "bisect: --good, --bad and --metric are needed");
		return -1;
	}
	if (set_params(b, s, e, p, d) < 0)
		return -1;
	/* the cut every step makes, tried before anything is stored */
	g = bisect_kernel_name(b, b->good);
	t = bisect_kernel_name(b, b->bad);
	if (step_kernels(s, b, b->bad, d) < 0 ||
	    spec_bisect_step(s, e,
			     &(struct spec_bisect_step){ .series = b->series, .good = g, .test = t, .metric = b->metric,
							 .npatches = b->commits ? 0 : b->npatches,
							 .dir = EXPECT_UNCHANGED, .threshold_pct = b->threshold,
							 .alpha = b->alpha },
			     d) < 0)
		return -1;
	if (store_create(x->root, &id, d) < 0)
		return -1;
	x->id = TAKE_PTR(id);
	x->dir = path_join(x->root, x->id);
	return save_state(x, d);
}

/* Each step's stored run is a run of the bisect's experiment. */
static int check_step_runs(const struct bisect_session *x, const char *path, struct diags *d)
{
	const struct bisect *b = &x->b;

	for (size_t i = 0; i < b->nsteps; i++) {
		const struct bisect_step *st = &b->steps[i];
		_cleanup_free_ char *dir = st->run ? store_find(x->root, st->run) : NULL;
		_cleanup_result_set_ struct result_set *rs = NULL;
		_cleanup_diags_ struct diags ignored = { 0 };

		if (!dir)
			continue; /* not stored (any more): the step starts again */
		/* a run lab cannot read yet (stopped as it began) is the engine's to resume or refuse */
		if (store_load(dir, &rs, &ignored) < 0)
			continue;
		if (!rs->experiment || !streq(rs->experiment, b->experiment)) {
			diags_add(d, NULL, "bisect: %s: 'steps': the run %s of prefix %u is of experiment '%s', not '%s'",
				  path, st->run, st->prefix, rs->experiment ? rs->experiment : "?", b->experiment);
			return -1;
		}
	}
	return 0;
}

/*
 * A stored bisect.json against what it resumes with: its experiment and
 * series as lab.yaml has them now (the same number of patches), and each
 * step's run a stored run of that experiment. The file is data from disk:
 * a mismatch is refused, naming the field, before anything runs.
 */
static int check_stored(struct bisect_session *x, const char *path, struct diags *d)
{
	const struct bisect *b = &x->b;
	_cleanup_spec_ struct spec *s = NULL;
	struct bisect now = { 0 };
	int r = 0;

	if (x->w->load_spec(x->w->userdata, &s) < 0)
		return -1;
	if (!spec_find_experiment(s, b->experiment)) {
		diags_add(d, NULL, "bisect: %s: 'experiment': %s has no experiment '%s'", path, s->path, b->experiment);
		return -1;
	}
	if (b->commits) {
		/* the commits are the file's: the kernel must still build from git */
		const struct spec_kernel *k = spec_find_kernel(s, b->series);

		if (!k || !k->root_source || k->root_source->type != SOURCE_GIT) {
			diags_add(d, NULL, "bisect: %s: 'series': %s has no kernel '%s' building from a git source", path,
				  s->path, b->series);
			return -1;
		}
		return check_step_runs(x, path, d);
	}
	if (series_patches(s, b->series, &now, d) < 0)
		return -1;
	if (now.npatches != b->npatches || !streq(now.from, b->from)) {
		diags_add(d, NULL, "bisect: %s: 'patches': %u patches on %s, but series '%s' in %s has %u on %s", path,
			  b->npatches, b->from, b->series, s->path, now.npatches, now.from);
		r = -1;
	}
	bisect_release(&now);
	return r < 0 ? r : check_step_runs(x, path, d);
}

int bisect_session_open(struct bisect_session *x, const struct workflow *w, const char *root, const char *id,
			struct diags *d)
{
	_cleanup_free_ char *path = NULL, *err = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	x->w = w;
	x->root = xstrdup(root);
	if (workflow_open(x->root, id, "bisect", BISECT_FILE, BISECT_MAX_BYTES, &x->dir, &path, &sb, d) < 0)
		return -1;
	if (bisect_parse(path, sb.buf, sb.len, &x->b, &err) < 0) {
		diags_add(d, NULL, "bisect: %s", err);
		return -1;
	}
	x->id = path_basename(x->dir);
	return check_stored(x, path, d);
}

struct step_started {
	struct bisect_session *x;
	struct bisect_step *st;
};

/* The step's run exists: remember it at once, so that a resume finds it whatever stops lab. */
static void on_started(void *userdata, const char *id)
{
	struct step_started *ss = userdata;

	if (!ss->st->run) {
		ss->st->run = xstrdup(id);
		save_state(ss->x, ss->x->d);
	}
}

/* The spec cut to the step [good, prefix] (*ret, *ret_e). */
static int step_spec(struct bisect_session *x, unsigned prefix, const struct spec_bisect_step *cut,
		     struct spec **ret, struct spec_experiment **ret_e, struct diags *d)
{
	if (x->w->load_spec(x->w->userdata, ret) < 0)
		return -1;
	*ret_e = (struct spec_experiment *)spec_find_experiment(*ret, x->b.experiment);
	if (!*ret_e) {
		diags_add(d, NULL, "bisect: %s no longer has experiment '%s'", (*ret)->path, x->b.experiment);
		return -1;
	}
	if (step_kernels(*ret, &x->b, prefix, d) < 0)
		return -1;
	return spec_bisect_step(*ret, *ret_e, cut, d);
}

/* Where the step begins: its stored run resumed, or a new one (a run that is gone starts again). */
static char *step_begin(struct bisect_session *x, struct bisect_step *st, const char *good, const char *test,
			enum expect_direction dir, double alpha, unsigned max_boots)
{
	char *resume = NULL;

	if (st->run && !(resume = store_find(x->root, st->run))) {
		blog(x, "step %s: its run %s is gone; starting the step again", test, st->run);
		free(st->run);
		st->run = NULL;
	}
	if (st->run)
		blog(x, "step %s against %s: resuming run %s", test, good, st->run);
	else
		blog(x, "step %s against %s (%s %s, mde %g%%, alpha %.4g, up to %u boots a kernel)", test, good,
		     x->b.metric, expect_direction_name(dir), x->b.threshold, alpha, max_boots);
	return resume;
}

/* Why a step that measured nothing is skipped: every run of the tested
 * kernel failed, the good end's did not, and the failure is the kernel's
 * own (result/failure.h: a panic, a boot stuck, a workload crash), as
 * git bisect skip. NULL: judge it (undecided stops the bisect). */
static char *kernels_failure(const struct result_set *rs, const char *test)
{
	const struct result_run *first = NULL;
	size_t good_ok = 0;
	struct failure f;
	char *why = NULL;

	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];

		if (!streq(r->variant, test))
			good_ok += r->status == RUN_OK;
		else if (r->status != RUN_FAILED)
			return NULL;
		else if (!first)
			first = r;
	}
	if (!first || !good_ok)
		return NULL;
	failure_of_run(first->error, &f);
	if (failure_is_kernels(f.kind))
		why = xasprintf("the kernel's failure (%s) in every run: %s", failure_kind_name(f.kind),
				f.evidence ? f.evidence : first->error);
	failure_release(&f);
	return why;
}

/*
 * The step's kernels built before its run: the good end must build; a
 * kernel under test that does not build on the compiler's word is skipped
 * (1, *ret_why), as git bisect skip; any other failure stops the bisect
 * for a resume (workflow_build_kernel).
 */
static int build_ends(struct bisect_session *x, const struct spec *s, const char *good, const char *test,
		      char **ret_why, struct diags *d)
{
	_cleanup_free_ char *why = NULL;
	int r = workflow_build_kernel(x->w, s, "bisect", good, &why, d);

	if (r > 0)
		diags_add(d, NULL, "bisect: the good end %s does not build: %s", good, why);
	if (r != 0)
		return -1;
	return workflow_build_kernel(x->w, s, "bisect", test, ret_why, d);
}

/* One step: the experiment cut to [good, prefix] and run (or its stored run resumed), then judged. */
static int run_step(struct bisect_session *x, unsigned prefix, struct diags *d)
{
	struct bisect *b = &x->b;
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *c = NULL;
	_cleanup_free_ char *good = bisect_kernel_name(b, b->good), *test = bisect_kernel_name(b, prefix);
	_cleanup_free_ char *resume = NULL;
	struct bisect_step *st = bisect_step(b, prefix);
	struct spec_experiment *e;
	enum expect_direction dir = bisect_expect(b);
	struct spec_bisect_step cut = {
		.series = b->series, .good = good, .test = test, .metric = b->metric,
		.npatches = b->commits ? 0 : b->npatches,
		.dir = dir == DIR_INCREASE ? EXPECT_INCREASE : dir == DIR_DECREASE ? EXPECT_DECREASE : EXPECT_UNCHANGED,
		.threshold_pct = b->threshold, .alpha = bisect_step_alpha(b), .max_boots = b->max_boots,
	};
	const struct cmp_verdict *v = NULL;
	_cleanup_free_ char *skip = NULL;
	double t0 = now_sec();
	struct step_started ss = { .x = x, .st = st };
	int r;

	if (step_spec(x, prefix, &cut, &s, &e, d) < 0)
		return -1;
	resume = step_begin(x, st, good, test, dir, cut.alpha, e->decide.max_boots);
	if ((r = build_ends(x, s, good, test, &skip, d)) != 0) {
		if (r < 0)
			return -1;
		bisect_skip(st, skip);
		st->seconds += now_sec() - t0;
		blog(x, "step %s: skipped (%s)", test, skip);
		return save_state(x, d);
	}
	if (x->w->run(x->w->userdata, s, e, resume, x->root, on_started, &ss, &rs) < 0) {
		st->seconds += now_sec() - t0;
		save_state(x, d);
		return -1;
	}
	c = compare_build(rs);
	for (size_t i = 0; i < c->nverdicts; i++)
		if (streq(c->verdicts[i].metric, b->metric) && streq(c->verdicts[i].variant, test))
			v = &c->verdicts[i];
	if ((!v || !v->d) && (skip = kernels_failure(rs, test)))
		bisect_skip(st, skip);
	else
		bisect_judge(b, st, v);
	st->seconds += now_sec() - t0;
	blog(x, "step %s: %s (%s: %s)", test, bisect_mark_name(st->mark), st->verdict, st->why ? st->why : "");
	return save_state(x, d);
}

int bisect_session_walk(struct bisect_session *x, bool resumed, enum bisect_state *ret_state, struct diags *d)
{
	_cleanup_free_ char *why = NULL;
	enum bisect_state state;
	unsigned lo, hi, next;
	int r = 0;

	x->d = d;
	if (x->b.commits)
		blog(x, "%s %s: bisecting %s over %u commits of %s's source (%.12s..%.12s%s)",
		     resumed ? "resuming" : "started", x->id, x->b.metric, x->b.npatches, x->b.series, x->b.commits[0].id,
		     x->b.commits[x->b.npatches].id, x->b.first_parent ? ", first parents" : "");
	else
		blog(x, "%s %s: bisecting %s over %s (%u..%u of %u patches)", resumed ? "resuming" : "started", x->id,
		     x->b.metric, x->b.series, x->b.good, x->b.bad, x->b.npatches);
	while ((state = bisect_status(&x->b, &lo, &hi, &next, &why)) == BISECT_RUNNING) {
		if (run_step(x, next, d) < 0) {
			blog(x, "step %u stopped: lab bisect --resume %s goes on", next, x->id);
			r = -1;
			break;
		}
	}
	if (r == 0)
		blog(x, "%s: %s", bisect_state_name(state), why ? why : "");
	if (bisect_gather(&x->b, x->root, x->dir, x->id, d) < 0)
		r = -1;
	*ret_state = state;
	x->d = NULL;
	return r;
}

void bisect_session_release(struct bisect_session *x)
{
	bisect_release(&x->b);
	free(x->root);
	free(x->dir);
	free(x->id);
	*x = (struct bisect_session){ 0 };
}
