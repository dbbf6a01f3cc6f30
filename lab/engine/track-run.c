/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>
#include "../kernel/source.h"
#include "../result/changepoint.h"
#include "../result/result.h"
#include "../spec/spec.h"
#include "../store/store.h"
#include "../util/alloc.h"
#include "../util/clock.h"
#include "../util/escape.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/strv.h"
#include "bisect-run.h"
#include "track-run.h"
#include "../util/banned.h"

/* A line of track.log, and the same line said. */
#define tlog(x, ...) workflow_log((x)->w, (x)->dir, "track.log", __VA_ARGS__)

static int save_state(struct track_session *x, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	track_format_json(&x->t, &sb);
	return workflow_save(x->dir, TRACK_FILE, &sb, d);
}

/* The kernel built at each commit: --kernel, or the experiment's first; from a git source. */
static const struct spec_kernel *git_kernel(const struct spec *s, const struct spec_experiment *e, const char *name,
					    struct diags *d)
{
	const struct spec_kernel *k = spec_find_kernel(s, name ? name : e->kernels.n ? e->kernels.v[0].name : "");

	if (!k) {
		diags_add(d, NULL, "track: no kernel '%s' in %s", name ? name : "(none)", s->path);
		return NULL;
	}
	if (!k->root_source || k->root_source->type != SOURCE_GIT) {
		diags_add(d, NULL, "track: kernel '%s' does not build from a git source: there is no branch to follow",
			  k->name);
		return NULL;
	}
	return k;
}

/* The tracked commits: the start, every step-th commit of the first-parent line after it, and the tip. */
static int list_commits(struct track *t, const struct spec *s, const struct spec_kernel *k,
			const struct track_params *p, struct diags *d)
{
	_cleanup_free_ char *cache = spec_cache_dir(s);
	struct kcommit *c = NULL;
	size_t n = 0;

	if (ksource_git_range(cache, k->root_source, p->since, p->branch, true, 100000, &c, &n, NULL, d) < 0)
		return -1;
	t->commits = xcalloc(n, sizeof(*t->commits));
	for (size_t i = 0; i < n; i++) {
		if (i && i % t->step && i != n - 1)
			continue;
		if (t->ncommits == TRACK_MAX_COMMITS) {
			diags_add(d, NULL, "track: more than %d commits to track: a larger --step or a later --since",
				  TRACK_MAX_COMMITS);
			kcommits_free(c, n);
			return -1;
		}
		t->commits[t->ncommits++] = (struct track_commit){ .id = xstrndup(c[i].id, 40),
								   .subject = xstrdup(c[i].subject),
								   .author = xstrdup(c[i].author) };
	}
	kcommits_free(c, n);
	t->pairs = xcalloc(t->ncommits, sizeof(*t->pairs));
	return 0;
}

int track_session_new(struct track_session *x, const struct workflow *w, const char *root, struct spec *s,
		      const struct track_params *p, struct diags *d)
{
	const struct spec_experiment *e = spec_find_experiment(s, p->experiment);
	const struct spec_kernel *k;
	_cleanup_free_ char *id = NULL;

	x->w = w;
	x->root = xstrdup(root);
	if (!e) {
		diags_add(d, NULL, "track: no experiment '%s' in %s (lab plan lists them)", p->experiment, s->path);
		return -1;
	}
	if (!p->branch || !p->since || !p->metric) {
		diags_add(d, NULL, "track: --branch, --since and --metric are needed");
		return -1;
	}
	if (!(k = git_kernel(s, e, p->kernel, d)))
		return -1;
	x->t = (struct track){ .experiment = xstrdup(e->name), .kernel = xstrdup(k->name), .branch = xstrdup(p->branch),
			       .metric = xstrdup(p->metric), .step = p->step ? p->step : 1,
			       .threshold = p->threshold_pct > 0 ? p->threshold_pct : 5,
			       .alpha = p->alpha > 0 ? p->alpha : e->decide.alpha };
	if (list_commits(&x->t, s, k, p, d) < 0)
		return -1;
	if (x->t.ncommits < 2) {
		diags_add(d, NULL, "track: no commit after %s on %s", p->since, p->branch);
		return -1;
	}
	if (store_create(x->root, &id, d) < 0)
		return -1;
	x->id = TAKE_PTR(id);
	x->dir = path_join(x->root, x->id);
	return save_state(x, d);
}

int track_session_open(struct track_session *x, const struct workflow *w, const char *root, const char *id,
		       struct diags *d)
{
	_cleanup_free_ char *path = NULL, *err = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_spec_ struct spec *s = NULL;

	x->w = w;
	x->root = xstrdup(root);
	if (workflow_open(x->root, id, "track", TRACK_FILE, TRACK_MAX_BYTES, &x->dir, &path, &sb, d) < 0)
		return -1;
	if (track_parse(path, sb.buf, sb.len, &x->t, &err) < 0) {
		diags_add(d, NULL, "track: %s", err);
		return -1;
	}
	x->id = path_basename(x->dir);
	/* held to lab.yaml as it is now: the experiment, a kernel from git */
	if (w->load_spec(w->userdata, &s) < 0)
		return -1;
	if (!spec_find_experiment(s, x->t.experiment)) {
		diags_add(d, NULL, "track: %s: 'experiment': %s has no experiment '%s'", path, s->path, x->t.experiment);
		return -1;
	}
	{
		const struct spec_kernel *k = spec_find_kernel(s, x->t.kernel);

		if (!k || !k->root_source || k->root_source->type != SOURCE_GIT) {
			diags_add(d, NULL, "track: %s: 'kernel': %s has no kernel '%s' building from a git source", path,
				  s->path, x->t.kernel);
			return -1;
		}
	}
	return 0;
}

struct pair_started {
	struct track_session *x;
	struct track_pair *p;
};

static void on_started(void *userdata, const char *id)
{
	struct pair_started *ps = userdata;

	if (!ps->p->run) {
		ps->p->run = xstrdup(id);
		save_state(ps->x, NULL);
	}
}

/* Both ends built first: a tracked commit that does not build on the
 * compiler's word is not measured (1, *ret_why); other failures stop the
 * track (-1). */
static int build_pair(struct track_session *x, const struct spec *s, const char *good, const char *test,
		      char **ret_why, struct diags *d)
{
	const char *names[2] = { good, test };

	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *why = NULL;
		int r = workflow_build_kernel(x->w, s, "track", names[i], &why, d);

		if (r > 0)
			*ret_why = xasprintf("%s: %s", names[i], why);
		if (r != 0)
			return r;
	}
	return 0;
}

/* Comparison i: tracked commit i against i + 1, the experiment cut to the metric's jobs. */
static int run_pair(struct track_session *x, size_t i, struct diags *d)
{
	struct track *t = &x->t;
	struct track_pair *p = &t->pairs[i];
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_free_ char *good = track_kernel_name(t, i), *test = track_kernel_name(t, i + 1);
	_cleanup_free_ char *resume = NULL, *why = NULL;
	struct spec_experiment *e;
	struct pair_started ps = { .x = x, .p = p };
	double t0 = now_sec();
	int r;

	if (x->w->load_spec(x->w->userdata, &s) < 0)
		return -1;
	if (!(e = (struct spec_experiment *)spec_find_experiment(s, t->experiment))) {
		diags_add(d, NULL, "track: %s no longer has experiment '%s'", s->path, t->experiment);
		return -1;
	}
	if (spec_kernel_at_commit(s, t->kernel, good, t->commits[i].id, d) < 0 ||
	    spec_kernel_at_commit(s, t->kernel, test, t->commits[i + 1].id, d) < 0 ||
	    spec_bisect_step(s, e,
			     &(struct spec_bisect_step){ .series = t->kernel, .good = good, .test = test,
							 .metric = t->metric, .dir = EXPECT_UNCHANGED,
							 .threshold_pct = t->threshold, .alpha = t->alpha },
			     d) < 0)
		return -1;
	if (p->run && !(resume = store_find(x->root, p->run))) {
		free(p->run);
		p->run = NULL;
	}
	tlog(x, "%s %.12s against %.12s (%s)", resume ? "resuming" : "comparing", t->commits[i + 1].id,
	     t->commits[i].id, t->commits[i + 1].subject);
	if ((r = build_pair(x, s, good, test, &why, d)) != 0) {
		if (r < 0)
			return -1;
		p->failed = TAKE_PTR(why);
		p->done = true;
		tlog(x, "not measured: %s", p->failed);
		return save_state(x, d);
	}
	if (x->w->run(x->w->userdata, s, e, resume, x->root, on_started, &ps, &rs) < 0) {
		p->seconds += now_sec() - t0;
		save_state(x, d);
		return -1;
	}
	p->done = true;
	p->seconds += now_sec() - t0;
	return save_state(x, d);
}

/* The change points over the series of every comparison's boots. */
static int decide(struct track_session *x, struct diags *d)
{
	struct track *t = &x->t;
	struct result_set **runs = xcalloc(t->ncommits, sizeof(*runs));
	_cleanup_free_ double *value = NULL;
	_cleanup_free_ size_t *commit = NULL, *kept = NULL;
	struct cp_opts o = CP_OPTS_DEFAULT;
	struct cp_point *pts = NULL;
	size_t n = 0, nkept = 0, npts = 0;
	int r = 0;

	for (size_t i = 0; i + 1 < t->ncommits; i++) {
		_cleanup_free_ char *dir = t->pairs[i].run ? store_find(x->root, t->pairs[i].run) : NULL;

		if (dir && store_load(dir, &runs[i], d) < 0)
			r = -1;
	}
	if (r == 0) {
		track_series(t, runs, &value, &commit, &n, &kept, &nkept);
		o.alpha = t->alpha;
		if (nkept < 2) {
			diags_add(d, NULL, "track: fewer than two tracked commits were measured");
			r = -1;
		} else if (cp_detect(value, commit, n, nkept, &o, &pts, &npts) < 0) {
			diags_add(d, NULL, "track: the series of %zu boots over %zu commits cannot be searched", n, nkept);
			r = -1;
		}
	}
	for (size_t i = 0; i < t->ncommits; i++)
		result_set_free(runs[i]);
	free(runs);
	if (r < 0)
		return r;
	free(t->points); /* read back undecided: none */
	t->points = xcalloc(npts + 1, sizeof(*t->points));
	t->npoints = 0;
	for (size_t i = 0; i < npts; i++)
		t->points[t->npoints++] = (struct track_point){ .from = (unsigned)kept[pts[i].at - 1],
								.at = (unsigned)kept[pts[i].at],
								.change = pts[i].change_pct, .lo = pts[i].lo_pct,
								.hi = pts[i].hi_pct, .p = pts[i].p };
	free(pts);
	t->decided = true;
	tlog(x, "%zu change point%s in %s over %zu commits (%zu boots)", t->npoints, t->npoints == 1 ? "" : "s",
	     t->metric, nkept, n);
	return save_state(x, d);
}

/* The culprit of change point p: the tracked commit itself when it is the
 * only commit after the one before, else a bisect of the graph between. */
static int culprit(struct track_session *x, struct track_point *p, struct diags *d)
{
	struct track *t = &x->t;
	struct bisect_session b = { 0 };
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *cache = NULL;
	struct kcommit *c = NULL;
	size_t n = 0;
	enum bisect_state state = BISECT_RUNNING;
	bool opened = p->bisect != NULL;
	int r;

	if (x->w->load_spec(x->w->userdata, &s) < 0)
		return -1;
	cache = spec_cache_dir(s);
	if (!p->bisect) {
		const struct spec_kernel *k = spec_find_kernel(s, t->kernel);

		if (!k || ksource_git_range(cache, k->root_source, t->commits[p->from].id, t->commits[p->at].id, false,
					    BISECT_MAX_COMMITS, &c, &n, NULL, d) < 0)
			return -1;
		kcommits_free(c, n);
		if (n == 2) {
			p->culprit = xstrdup(t->commits[p->at].id);
			p->subject = xstrdup(t->commits[p->at].subject);
			p->author = xstrdup(t->commits[p->at].author);
			p->outcome = xstrdup("adjacent");
			tlog(x, "change point at %.12s: the only commit after %.12s", p->culprit, t->commits[p->from].id);
			return save_state(x, d);
		}
		r = bisect_session_new(&b, x->w, x->root, s,
				       &(struct bisect_params){ .experiment = t->experiment, .good = t->commits[p->from].id,
								.bad = t->commits[p->at].id, .metric = t->metric,
								.kernel = t->kernel, .threshold_pct = t->threshold,
								.direction = p->change > 0 ? 1 : -1, .alpha = t->alpha },
				       d);
		if (r < 0) {
			bisect_session_release(&b);
			return -1;
		}
		p->bisect = xstrdup(b.id);
		save_state(x, d);
		tlog(x, "change point between %.12s and %.12s: bisect %s over %zu commits", t->commits[p->from].id,
		     t->commits[p->at].id, b.id, n - 1);
	} else if (bisect_session_open(&b, x->w, x->root, p->bisect, d) < 0) {
		bisect_session_release(&b);
		return -1;
	} else {
		_cleanup_free_ char *why = NULL;

		if (!track_point_bisect_matches(t, p, &b.b, &why)) {
			diags_add(d, NULL, "track %s: its change point between %.12s and %.12s names bisect %s, which is "
					   "not its own: %s",
				  x->id, t->commits[p->from].id, t->commits[p->at].id, p->bisect, why);
			bisect_session_release(&b);
			return -1;
		}
	}
	r = bisect_session_walk(&b, opened, &state, d);
	if (r == 0) {
		unsigned lo, hi, next;
		_cleanup_free_ char *why = NULL;

		bisect_status(&b.b, &lo, &hi, &next, &why);
		p->outcome = xstrdup(bisect_state_name(state));
		if (state == BISECT_FOUND) {
			p->culprit = xstrdup(b.b.commits[hi].id);
			p->subject = xstrdup(b.b.subjects.v[hi - 1]);
			p->author = xstrdup(b.b.commits[hi].author);
		}
		r = save_state(x, d);
	}
	bisect_session_release(&b);
	return r;
}

/* The track's folder as a stored run of its comparisons' runs. */
static int gather(struct track_session *x, struct diags *d)
{
	_cleanup_free_ char *first = track_kernel_name(&x->t, 0);
	_cleanup_free_ const char **runs = xcalloc(x->t.ncommits, sizeof(*runs));

	for (size_t i = 0; i + 1 < x->t.ncommits; i++)
		runs[i] = x->t.pairs[i].run;
	return runs_gather(x->t.experiment, first, runs, x->t.ncommits - 1, x->root, x->dir, x->id, d);
}

static int walk(struct track_session *x, bool resumed, struct diags *d)
{
	struct track *t = &x->t;

	tlog(x, "%s %s: %s over %zu commits of %s's %s (every %u)", resumed ? "resuming" : "started", x->id, t->metric,
	     t->ncommits, t->kernel, t->branch, t->step);
	for (size_t i = 0; i + 1 < t->ncommits; i++)
		if (!t->pairs[i].done && run_pair(x, i, d) < 0) {
			tlog(x, "stopped: lab track --resume %s goes on", x->id);
			return -1;
		}
	if (!t->decided && decide(x, d) < 0)
		return -1;
	for (size_t i = 0; i < t->npoints; i++)
		if (!t->points[i].outcome && culprit(x, &t->points[i], d) < 0) {
			tlog(x, "stopped: lab track --resume %s goes on", x->id);
			return -1;
		}
	tlog(x, "done: %zu change point%s", t->npoints, t->npoints == 1 ? "" : "s");
	return 0;
}

/* <root>/accepted.json, or none; a file lab cannot read is said and counts as none. */
static void read_accepted(struct track_session *x, struct track_accepted *a)
{
	_cleanup_free_ char *path = path_join(x->root, TRACK_ACCEPTED_FILE), *err = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	memset(a, 0, sizeof(*a));
	if (strbuf_read_file(&sb, path, TRACK_MAX_BYTES) < 0)
		return;
	if (track_accepted_parse(path, sb.buf, sb.len, a, &err) < 0)
		tlog(x, "ignoring %s: %s", path, err);
}

/* The earliest other track under root, of the same experiment and metric, whose change points
 * name culprit, or NULL. */
static char *reported_by(struct track_session *x, const char *culprit)
{
	_cleanup_strv_ struct strv ids = STRV_INIT;

	store_list(x->root, &ids); /* sorted: the earliest first */
	for (size_t i = 0; i < ids.n && strcmp(ids.v[i], x->id) < 0; i++) {
		_cleanup_free_ char *path = xasprintf("%s/%s/%s", x->root, ids.v[i], TRACK_FILE), *err = NULL;
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct track other;
		bool hit = false;

		if (strbuf_read_file(&sb, path, TRACK_MAX_BYTES) < 0 || track_parse(path, sb.buf, sb.len, &other, &err) < 0)
			continue;
		for (size_t k = 0; k < other.npoints && !hit; k++)
			hit = other.points[k].culprit && streq(other.points[k].culprit, culprit) &&
			      streq(other.metric, x->t.metric) && streq(other.experiment, x->t.experiment);
		track_release(&other);
		if (hit)
			return xstrdup(ids.v[i]);
	}
	return NULL;
}

/* Each culprit: a known trade-off (accepted.json), or reported by an earlier track, or news. */
static int classify_culprits(struct track_session *x, struct diags *d)
{
	struct track_accepted a;

	read_accepted(x, &a);
	for (size_t i = 0; i < x->t.npoints; i++) {
		struct track_point *p = &x->t.points[i];
		const char *why;

		if (!p->culprit)
			continue;
		free(p->accepted);
		free(p->known);
		why = track_accepted_why(&a, p->culprit, x->t.metric);
		p->accepted = why ? xstrdup(why) : NULL;
		p->known = reported_by(x, p->culprit);
	}
	track_accepted_release(&a);
	return save_state(x, d);
}

int track_accept(const char *root, const char *commit, const char *metric, const char *why, struct diags *d)
{
	_cleanup_free_ char *path = path_join(root, TRACK_ACCEPTED_FILE), *err = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT, out = STRBUF_INIT;
	struct track_accepted a = { 0 };
	size_t n = strlen(commit);
	char when[32];
	time_t now = time(NULL);
	struct tm tm;
	int r;

	if (n < 7 || n > 40 || strspn(commit, "0123456789abcdef") != n) {
		diags_add(d, NULL, "track: --accept '%s' is not 7 to 40 hex digits of a commit id", commit);
		return -EINVAL;
	}
	if (strlen(why) > 1000 || strpbrk(why, "\n\r")) {
		diags_add(d, NULL, "track: --why is one line of at most 1000 bytes");
		return -EINVAL;
	}
	if (strbuf_read_file(&sb, path, TRACK_MAX_BYTES) >= 0 && track_accepted_parse(path, sb.buf, sb.len, &a, &err) < 0) {
		diags_add(d, NULL, "track: %s", err);
		return -EINVAL;
	}
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	GROW(a.v, a.alloc, a.n + 1);
	a.v[a.n++] = (struct track_accept){ .commit = xstrdup(commit), .metric = xstrdup(metric), .why = xstrdup(why),
					    .when = xstrdup(when) };
	track_accepted_format_json(&a, &out);
	track_accepted_release(&a);
	if ((r = path_mkdir_p(root, 0755)) < 0 || (r = fs_write_atomic(path, out.buf, out.len, 0644)) < 0) {
		diags_add(d, NULL, "cannot write %s: %s", path, strerror(-r));
		return r;
	}
	return 0;
}

int track_session_walk(struct track_session *x, bool resumed, struct diags *d)
{
	int r = walk(x, resumed, d);

	if (r == 0)
		r = classify_culprits(x, d);
	/* a stored run whatever stopped it: lab report and lab bundle take it, a resume finds it */
	if (gather(x, d) < 0)
		r = -1;
	return r;
}

void track_session_release(struct track_session *x)
{
	track_release(&x->t);
	free(x->root);
	free(x->dir);
	free(x->id);
	*x = (struct track_session){ 0 };
}
