/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../result/result.h"
#include "../util/alloc.h"
#include "../util/json-read.h"
#include "../util/json.h"
#include "bisect.h"
#include "track.h"
#include "../util/banned.h"

static void point_release(struct track_point *p)
{
	free(p->bisect);
	free(p->culprit);
	free(p->subject);
	free(p->author);
	free(p->outcome);
	free(p->known);
	free(p->accepted);
}

bool track_point_bisect_matches(const struct track *t, const struct track_point *p, const struct bisect *b,
				char **ret_why)
{
	unsigned lo, hi, next;
	_cleanup_free_ char *why = NULL;
	enum bisect_state state;

	*ret_why = NULL;
	if (!streq(b->experiment, t->experiment) || !streq(b->metric, t->metric)) {
		*ret_why = xasprintf("it bisects %s of experiment %s, not %s of %s", b->metric, b->experiment, t->metric,
				     t->experiment);
		return false;
	}
	if (!b->commits || !streq(b->commits[0].id, t->commits[p->from].id) ||
	    !streq(b->commits[b->npatches].id, t->commits[p->at].id)) {
		*ret_why = b->commits ? xasprintf("it bisects %.12s..%.12s, not %.12s..%.12s", b->commits[0].id,
						  b->commits[b->npatches].id, t->commits[p->from].id,
						  t->commits[p->at].id) :
					xstrdup("it bisects a patch series, not commits");
		return false;
	}
	state = bisect_status(b, &lo, &hi, &next, &why);
	if (state == BISECT_FOUND && p->culprit && !streq(b->commits[hi].id, p->culprit)) {
		*ret_why = xasprintf("it found %.12s, not the culprit %.12s", b->commits[hi].id, p->culprit);
		return false;
	}
	return true;
}

void track_release(struct track *t)
{
	free(t->experiment);
	free(t->kernel);
	free(t->branch);
	free(t->metric);
	for (size_t i = 0; i < t->ncommits; i++) {
		free(t->commits[i].id);
		free(t->commits[i].subject);
		free(t->commits[i].author);
	}
	for (size_t i = 0; t->pairs && i + 1 < t->ncommits; i++) {
		free(t->pairs[i].run);
		free(t->pairs[i].failed);
	}
	for (size_t i = 0; i < t->npoints; i++)
		point_release(&t->points[i]);
	free(t->commits);
	free(t->pairs);
	free(t->points);
	memset(t, 0, sizeof(*t));
}

char *track_kernel_name(const struct track *t, size_t i)
{
	return bisect_commit_kernel(t->kernel, t->commits[i].id);
}

/* ---- the series ---- */

struct boot_sum {
	size_t commit;
	const struct result_set *rs;
	const char *boot;
	double sum;
	unsigned n;
};

static int by_commit(const void *a, const void *b)
{
	const struct boot_sum *x = a, *y = b;

	return x->commit < y->commit ? -1 : x->commit > y->commit;
}

void track_series(const struct track *t, struct result_set *const *runs, double **ret_value, size_t **ret_commit,
		  size_t *ret_n, size_t **ret_kept, size_t *ret_ncommits)
{
	struct boot_sum *b = NULL;
	size_t nb = 0, ab = 0, nkept = 0;
	size_t *kept = xcalloc(t->ncommits + 1, sizeof(size_t));

	for (size_t i = 0; i + 1 < t->ncommits; i++) {
		_cleanup_free_ char *good = track_kernel_name(t, i), *test = track_kernel_name(t, i + 1);
		const struct result_set *rs = runs[i];

		for (size_t k = 0; rs && k < rs->n; k++) {
			const struct result_run *r = &rs->runs[k];
			size_t c, j;

			if (r->status != RUN_OK || !r->boot || !r->variant)
				continue;
			if (streq(r->variant, good))
				c = i;
			else if (streq(r->variant, test))
				c = i + 1;
			else
				continue;
			for (size_t m = 0; m < r->nm; m++) {
				if (!streq(r->m[m].name, t->metric) || !isfinite(r->m[m].value))
					continue;
				for (j = 0; j < nb && !(b[j].rs == rs && streq(b[j].boot, r->boot)); j++)
					;
				if (j == nb) {
					GROW(b, ab, nb + 1);
					b[nb++] = (struct boot_sum){ .commit = c, .rs = rs, .boot = r->boot };
				}
				b[j].sum += r->m[m].value;
				b[j].n++;
			}
		}
	}
	if (nb) /* qsort of NULL is undefined, even of none */
		qsort(b, nb, sizeof(*b), by_commit); /* ties: any order, a commit's boots are alike */
	*ret_value = xcalloc(nb + 1, sizeof(double));
	*ret_commit = xcalloc(nb + 1, sizeof(size_t));
	for (size_t j = 0; j < nb; j++) {
		if (!nkept || kept[nkept - 1] != b[j].commit)
			kept[nkept++] = b[j].commit;
		(*ret_value)[j] = b[j].sum / b[j].n;
		(*ret_commit)[j] = nkept - 1;
	}
	free(b);
	*ret_n = nb;
	*ret_kept = kept;
	*ret_ncommits = nkept;
}

/* ---- track.json ---- */

void track_format_json(const struct track *t, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_uint(&j, "format", 1);
	json_kv_string(&j, "experiment", t->experiment);
	json_kv_string(&j, "kernel", t->kernel);
	json_kv_string(&j, "branch", t->branch);
	json_kv_string(&j, "metric", t->metric);
	json_kv_uint(&j, "step", t->step);
	json_kv_double(&j, "threshold_pct", t->threshold);
	json_kv_double(&j, "alpha", t->alpha);
	json_key(&j, "commits");
	json_array_begin(&j);
	for (size_t i = 0; i < t->ncommits; i++) {
		const struct track_commit *c = &t->commits[i];
		const struct track_pair *p = i ? &t->pairs[i - 1] : NULL;

		json_object_begin(&j);
		json_kv_string(&j, "id", c->id);
		json_kv_string(&j, "subject", c->subject);
		json_kv_string(&j, "author", c->author);
		if (p) { /* its comparison with the commit before */
			json_kv_string(&j, "run", p->run);
			json_key(&j, "done");
			json_bool(&j, p->done);
			json_kv_string(&j, "failed", p->failed);
			json_kv_double(&j, "seconds", p->seconds);
		}
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "decided");
	json_bool(&j, t->decided);
	json_key(&j, "points");
	json_array_begin(&j);
	for (size_t i = 0; i < t->npoints; i++) {
		const struct track_point *p = &t->points[i];

		json_object_begin(&j);
		json_kv_uint(&j, "from", p->from);
		json_kv_uint(&j, "at", p->at);
		json_kv_double(&j, "change_pct", p->change);
		json_kv_double(&j, "lo_pct", p->lo);
		json_kv_double(&j, "hi_pct", p->hi);
		json_kv_double(&j, "p", p->p);
		json_kv_string(&j, "bisect", p->bisect);
		json_kv_string(&j, "culprit", p->culprit);
		json_kv_string(&j, "subject", p->subject);
		json_kv_string(&j, "author", p->author);
		json_kv_string(&j, "outcome", p->outcome);
		json_kv_string(&j, "known", p->known);
		json_kv_string(&j, "accepted", p->accepted);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
	strbuf_addch(out, '\n');
}

static bool is_commit_id(const char *s)
{
	return s && strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

static int read_commit(struct json_reader *r, const struct json_doc *o, size_t i, struct track *t)
{
	static const char *const known[] = { "id", "subject", "author", "run", "done", "failed", "seconds", NULL };
	struct track_commit *c = &t->commits[i];
	struct track_pair *p = i ? &t->pairs[i - 1] : NULL;
	const char *unknown;

	if (json_doc_type(o) != JSON_DOC_OBJECT)
		return json_reader_bad(r, "has an element that is not an object", "commits");
	if ((unknown = json_doc_unknown_key(o, known)))
		return json_reader_bad(r, "is not a member of a tracked commit", unknown);
	if (json_reader_string(r, o, "id", &c->id) < 0 || json_reader_string(r, o, "subject", &c->subject) < 0 ||
	    json_reader_string(r, o, "author", &c->author) < 0)
		return -EINVAL;
	if (!is_commit_id(c->id))
		return json_reader_bad(r, "is not a commit id (40 hex digits)", "id");
	if (!p)
		return json_doc_get(o, "run") ? json_reader_bad(r, "is on the start, which is compared with nothing", "run")
					       : 0;
	if (json_reader_opt_string(r, o, "run", &p->run) < 0 || json_reader_opt_string(r, o, "failed", &p->failed) < 0 ||
	    json_reader_num(r, o, "seconds", 0, 1e9, false, &p->seconds) < 0)
		return -EINVAL;
	if (json_doc_type(json_doc_get(o, "done")) != JSON_DOC_BOOL)
		return json_reader_bad(r, "is missing or not a boolean", "done");
	p->done = json_doc_bool(o, "done");
	if (p->run && !str_is_name(p->run))
		return json_reader_bad(r, "is not a run id", "run");
	return 0;
}

static int read_point(struct json_reader *r, const struct json_doc *o, struct track *t, struct track_point *p)
{
	static const char *const known[] = { "from", "at", "change_pct", "lo_pct", "hi_pct", "p", "bisect", "culprit",
					     "subject", "author", "outcome", "known", "accepted", NULL };
	const char *unknown;
	size_t at = 0, from = 0;

	if (json_doc_type(o) != JSON_DOC_OBJECT)
		return json_reader_bad(r, "has an element that is not an object", "points");
	if ((unknown = json_doc_unknown_key(o, known)))
		return json_reader_bad(r, "is not a member of a change point", unknown);
	if (json_reader_uint(r, o, "from", (long long)t->ncommits - 1, &from) < 0 ||
	    json_reader_uint(r, o, "at", (long long)t->ncommits - 1, &at) < 0 ||
	    json_reader_num(r, o, "change_pct", -HUGE_VAL, HUGE_VAL, true, &p->change) < 0 ||
	    json_reader_num(r, o, "lo_pct", -HUGE_VAL, HUGE_VAL, true, &p->lo) < 0 ||
	    json_reader_num(r, o, "hi_pct", -HUGE_VAL, HUGE_VAL, true, &p->hi) < 0 ||
	    json_reader_num(r, o, "p", 0, 1, false, &p->p) < 0 || json_reader_opt_string(r, o, "bisect", &p->bisect) < 0 ||
	    json_reader_opt_string(r, o, "culprit", &p->culprit) < 0 || json_reader_opt_string(r, o, "subject", &p->subject) < 0 ||
	    json_reader_opt_string(r, o, "author", &p->author) < 0 || json_reader_opt_string(r, o, "outcome", &p->outcome) < 0 ||
	    json_reader_opt_string(r, o, "known", &p->known) < 0 ||
	    json_reader_opt_string(r, o, "accepted", &p->accepted) < 0)
		return -EINVAL;
	if (p->known && !str_is_name(p->known))
		return json_reader_bad(r, "is not a run id", "known");
	p->at = (unsigned)at;
	p->from = (unsigned)from;
	if (p->from >= p->at)
		return json_reader_bad(r, "is not before the commit the change lies before", "from");
	if (p->bisect && !str_is_name(p->bisect))
		return json_reader_bad(r, "is not a run id", "bisect");
	if (p->culprit && !is_commit_id(p->culprit))
		return json_reader_bad(r, "is not a commit id (40 hex digits)", "culprit");
	return 0;
}

static int read_track(struct json_reader *r, const struct json_doc *doc, struct track *t)
{
	static const char *const known[] = { "format", "experiment", "kernel", "branch", "metric", "step",
					     "threshold_pct", "alpha", "commits", "decided", "points", NULL };
	const struct json_doc *cs = json_doc_get(doc, "commits"), *ps = json_doc_get(doc, "points");
	size_t format = 0, step = 0;
	const char *unknown;

	if ((unknown = json_doc_unknown_key(doc, known)))
		return json_reader_bad(r, "is not a member of track.json", unknown);
	if (json_reader_uint(r, doc, "format", 1000000, &format) < 0)
		return -EINVAL;
	if (format != 1)
		return json_reader_bad(r, "is not format 1", "format");
	if (json_reader_string(r, doc, "experiment", &t->experiment) < 0 ||
	    json_reader_string(r, doc, "kernel", &t->kernel) < 0 || json_reader_string(r, doc, "branch", &t->branch) < 0 ||
	    json_reader_string(r, doc, "metric", &t->metric) < 0 || json_reader_uint(r, doc, "step", 100000, &step) < 0 ||
	    json_reader_num(r, doc, "threshold_pct", 0, 1e6, false, &t->threshold) < 0 ||
	    json_reader_num(r, doc, "alpha", 1e-9, 0.5, false, &t->alpha) < 0)
		return -EINVAL;
	t->step = (unsigned)step;
	if (!t->step)
		return json_reader_bad(r, "is 0: every Nth commit needs N >= 1", "step");
	if (!str_is_name(t->experiment) || !str_is_name(t->kernel))
		return json_reader_bad(r, "is not a name", "experiment or kernel");
	if (json_doc_type(cs) != JSON_DOC_ARRAY || json_doc_array_size(cs) < 2 ||
	    json_doc_array_size(cs) > TRACK_MAX_COMMITS)
		return json_reader_bad(r, "is missing or not 2 to 200 tracked commits", "commits");
	t->ncommits = json_doc_array_size(cs);
	t->commits = xcalloc(t->ncommits, sizeof(*t->commits));
	t->pairs = xcalloc(t->ncommits, sizeof(*t->pairs));
	for (size_t i = 0; i < t->ncommits; i++)
		if (read_commit(r, json_doc_array_get(cs, i), i, t) < 0)
			return -EINVAL;
	if (json_doc_type(json_doc_get(doc, "decided")) != JSON_DOC_BOOL)
		return json_reader_bad(r, "is missing or not a boolean", "decided");
	t->decided = json_doc_bool(doc, "decided");
	if (json_doc_type(ps) != JSON_DOC_ARRAY || json_doc_array_size(ps) >= t->ncommits ||
	    (!t->decided && json_doc_array_size(ps)))
		return json_reader_bad(r, "is missing, longer than the comparisons, or there before the points were decided",
				       "points");
	t->points = xcalloc(json_doc_array_size(ps) + 1, sizeof(*t->points));
	for (size_t i = 0; i < json_doc_array_size(ps); i++) {
		if (read_point(r, json_doc_array_get(ps, i), t, &t->points[i]) < 0) {
			t->npoints = i + 1; /* released with it */
			return -EINVAL;
		}
		t->npoints = i + 1;
		if (i && t->points[i].at <= t->points[i - 1].at)
			return json_reader_bad(r, "is not in commit order", "points");
	}
	return 0;
}

int track_parse(const char *path, const char *text, size_t len, struct track *ret, char **ret_err)
{
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	struct json_reader r = { .path = path };

	memset(ret, 0, sizeof(*ret));
	if (json_doc_parse_file(path, text, len, &doc, ret_err) < 0)
		return -EINVAL;
	if (json_doc_type(doc) != JSON_DOC_OBJECT) {
		*ret_err = xasprintf("%s: not an object", path);
		return -EINVAL;
	}
	if (read_track(&r, doc, ret) < 0) {
		*ret_err = r.err ? r.err : xasprintf("%s: malformed", path);
		track_release(ret);
		return -EINVAL;
	}
	return 0;
}

/* ---- the summary ---- */

void track_format_text(const struct track *t, struct strbuf *out)
{
	size_t done = 0;

	for (size_t i = 0; i + 1 < t->ncommits; i++)
		done += t->pairs[i].done;
	strbuf_addf(out, "track of %s over %s's %s (every %u commit%s of the first-parent line): %s, %zu commits "
			 "tracked, %zu of %zu comparisons done\n",
		    t->experiment, t->kernel, t->branch, t->step, t->step == 1 ? "" : "s", t->metric, t->ncommits, done,
		    t->ncommits - 1);
	for (size_t i = 0; i < t->ncommits; i++) {
		const struct track_pair *p = i ? &t->pairs[i - 1] : NULL;

		strbuf_addf(out, "  %2zu. %.12s %s", i, t->commits[i].id, t->commits[i].subject);
		if (p && p->failed)
			strbuf_addf(out, " (not measured: %s)", p->failed);
		else if (p && p->run)
			strbuf_addf(out, " (run %s%s)", p->run, p->done ? "" : ", not done");
		strbuf_addch(out, '\n');
	}
	if (!t->decided) {
		strbuf_addstr(out, "change points: not decided yet\n");
		return;
	}
	if (!t->npoints)
		strbuf_addf(out, "no change point in %s over the %zu commits\n", t->metric, t->ncommits);
	for (size_t i = 0; i < t->npoints; i++) {
		const struct track_point *p = &t->points[i];

		strbuf_addf(out, "change point: %s %+.1f%% [%+.1f, %+.1f]%% (p=%.3g) between %.12s and %.12s\n",
			    t->metric, p->change, p->lo, p->hi, p->p, t->commits[p->from].id, t->commits[p->at].id);
		if (p->culprit && p->accepted)
			strbuf_addf(out, "  accepted: commit %.12s (\"%s\"), a known trade-off: %s\n", p->culprit,
				    p->subject ? p->subject : "", p->accepted);
		else if (p->culprit && p->known)
			strbuf_addf(out, "  known: commit %.12s (\"%s\"), reported by track %s\n", p->culprit,
				    p->subject ? p->subject : "", p->known);
		else if (p->culprit)
			/* the robot's line */
			strbuf_addf(out, "  FYI: a %+.1f%% change of %s (%s) due to commit %.12s (\"%s\") by %s\n", p->change,
				    t->metric, t->experiment, p->culprit, p->subject ? p->subject : "",
				    p->author ? p->author : "?");
		else if (p->outcome)
			strbuf_addf(out, "  %s%s%s\n", p->outcome, p->bisect ? ": bisect " : "", p->bisect ? p->bisect : "");
	}
}

/* ---- accepted.json ---- */

void track_accepted_release(struct track_accepted *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->v[i].commit);
		free(a->v[i].metric);
		free(a->v[i].why);
		free(a->v[i].when);
	}
	free(a->v);
	memset(a, 0, sizeof(*a));
}

void track_accepted_format_json(const struct track_accepted *a, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_uint(&j, "format", 1);
	json_key(&j, "accepted");
	json_array_begin(&j);
	for (size_t i = 0; i < a->n; i++) {
		json_object_begin(&j);
		json_kv_string(&j, "commit", a->v[i].commit);
		json_kv_string(&j, "metric", a->v[i].metric);
		json_kv_string(&j, "why", a->v[i].why);
		json_kv_string(&j, "when", a->v[i].when);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
	strbuf_addch(out, '\n');
}

static int read_accept(struct json_reader *r, const struct json_doc *o, struct track_accept *x)
{
	static const char *const known[] = { "commit", "metric", "why", "when", NULL };
	const char *unknown;
	size_t n;

	if (json_doc_type(o) != JSON_DOC_OBJECT)
		return json_reader_bad(r, "has an element that is not an object", "accepted");
	if ((unknown = json_doc_unknown_key(o, known)))
		return json_reader_bad(r, "is not a member of an accepted trade-off", unknown);
	if (json_reader_string(r, o, "commit", &x->commit) < 0 || json_reader_string(r, o, "metric", &x->metric) < 0 ||
	    json_reader_string(r, o, "why", &x->why) < 0 || json_reader_string(r, o, "when", &x->when) < 0)
		return -EINVAL;
	n = strlen(x->commit);
	if (n < 7 || n > 40 || strspn(x->commit, "0123456789abcdef") != n)
		return json_reader_bad(r, "is not 7 to 40 hex digits of a commit id", "commit");
	if (strlen(x->why) > 1000)
		return json_reader_bad(r, "is longer than 1000 bytes", "why");
	return 0;
}

int track_accepted_parse(const char *path, const char *text, size_t len, struct track_accepted *ret, char **ret_err)
{
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	struct json_reader r = { .path = path };
	const struct json_doc *a;
	size_t format = 0;
	const char *unknown;
	static const char *const known[] = { "format", "accepted", NULL };

	memset(ret, 0, sizeof(*ret));
	if (json_doc_parse_file(path, text, len, &doc, ret_err) < 0)
		return -EINVAL;
	a = json_doc_get(doc, "accepted");
	if (json_doc_type(doc) != JSON_DOC_OBJECT)
		json_reader_bad(&r, "is not an object", "accepted.json");
	else if ((unknown = json_doc_unknown_key(doc, known)))
		json_reader_bad(&r, "is not a member of accepted.json", unknown);
	else if (json_reader_uint(&r, doc, "format", 1000000, &format) < 0 || format != 1)
		json_reader_bad(&r, "is not format 1", "format");
	else if (json_doc_type(a) != JSON_DOC_ARRAY || json_doc_array_size(a) > 10000)
		json_reader_bad(&r, "is missing or not an array (at most 10000)", "accepted");
	else
		for (size_t i = 0; i < json_doc_array_size(a); i++) {
			GROW(ret->v, ret->alloc, ret->n + 1);
			memset(&ret->v[ret->n], 0, sizeof(ret->v[ret->n]));
			ret->n++;
			if (read_accept(&r, json_doc_array_get(a, i), &ret->v[ret->n - 1]) < 0)
				break;
		}
	if (r.err) {
		*ret_err = r.err;
		track_accepted_release(ret);
		return -EINVAL;
	}
	return 0;
}

const char *track_accepted_why(const struct track_accepted *a, const char *culprit, const char *metric)
{
	for (size_t i = 0; culprit && i < a->n; i++)
		if (streq(a->v[i].metric, metric) && strncmp(culprit, a->v[i].commit, strlen(a->v[i].commit)) == 0)
			return a->v[i].why;
	return NULL;
}
