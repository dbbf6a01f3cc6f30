/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/json-read.h"
#include "../util/json.h"
#include "bisect.h"
#include "../util/banned.h"

static const char *const mark_names[] = { [BISECT_UNTESTED] = "untested", [BISECT_GOOD] = "good",
					  [BISECT_BAD] = "bad", [BISECT_UNDECIDED] = "undecided",
					  [BISECT_SKIPPED] = "skipped" };
static const char *const state_names[] = { [BISECT_RUNNING] = "running", [BISECT_FOUND] = "found",
					   [BISECT_STUCK] = "stuck", [BISECT_NO_CHANGE] = "no-change",
					   [BISECT_AMBIGUOUS] = "ambiguous" };

const char *bisect_mark_name(enum bisect_mark m)
{
	return mark_names[m];
}

const char *bisect_state_name(enum bisect_state s)
{
	return state_names[s];
}

static void step_release(struct bisect_step *st)
{
	free(st->run);
	free(st->verdict);
	free(st->why);
}

void bisect_release(struct bisect *b)
{
	free(b->experiment);
	free(b->series);
	free(b->from);
	free(b->metric);
	strv_release(&b->subjects);
	for (size_t i = 0; i < b->nsteps; i++)
		step_release(&b->steps[i]);
	free(b->steps);
	memset(b, 0, sizeof(*b));
}

char *bisect_kernel_name(const struct bisect *b, unsigned prefix)
{
	return prefix ? xasprintf("%s@%u", b->series, prefix) : xstrdup(b->from);
}

unsigned bisect_planned_steps(const struct bisect *b)
{
	unsigned n = 1, span = b->bad > b->good ? b->bad - b->good : 1;

	while ((1u << (n - 1)) < span)
		n++;
	return n; /* 1 + ceil(log2(span)) */
}

double bisect_step_alpha(const struct bisect *b)
{
	return b->alpha / bisect_planned_steps(b);
}

struct bisect_step *bisect_step(struct bisect *b, unsigned prefix)
{
	for (size_t i = 0; i < b->nsteps; i++)
		if (b->steps[i].prefix == prefix)
			return &b->steps[i];
	GROW(b->steps, b->alloc, b->nsteps + 1);
	b->steps[b->nsteps] = (struct bisect_step){ .prefix = prefix, .change = NAN, .lo = NAN, .hi = NAN };
	return &b->steps[b->nsteps++];
}

static const struct bisect_step *find_step(const struct bisect *b, unsigned prefix)
{
	for (size_t i = 0; i < b->nsteps; i++)
		if (b->steps[i].prefix == prefix)
			return &b->steps[i];
	return NULL;
}

static bool skipped(const struct bisect *b, unsigned prefix)
{
	const struct bisect_step *st = find_step(b, prefix);

	return st && st->done && st->mark == BISECT_SKIPPED;
}

/* Judged steps (skips are not judgements: they spend no alpha). */
static unsigned judged(const struct bisect *b)
{
	unsigned n = 0;

	for (size_t i = 0; i < b->nsteps; i++)
		n += b->steps[i].done && b->steps[i].mark != BISECT_SKIPPED;
	return n;
}

/* The next prefix in (lo, hi): the middle, or the one nearest it that was
 * not skipped (git bisect skip's way), within the steps the alpha was
 * split over. */
static enum bisect_state next_step(const struct bisect *b, unsigned lo, unsigned hi, unsigned *next, char **why)
{
	unsigned mid = lo + (hi - lo) / 2;

	for (unsigned d = 0; d < hi - lo; d++) {
		unsigned c[2] = { mid + d, mid >= d ? mid - d : 0 }; /* 0 <= lo: never taken */

		for (int k = 0; k < 2; k++) {
			if (c[k] <= lo || c[k] >= hi || skipped(b, c[k]))
				continue;
			if (c[k] != mid && judged(b) >= bisect_planned_steps(b)) {
				*why = xasprintf("the %u steps alpha was split over are spent: skipped patches moved the "
						 "steps off the middle of the range",
						 bisect_planned_steps(b));
				return BISECT_STUCK;
			}
			*next = c[k];
			return BISECT_RUNNING;
		}
	}
	*why = xasprintf("patches %u..%u were skipped (their kernels failed on their own account): the first bad "
			 "patch is one of %u..%u",
			 lo + 1, hi - 1, lo + 1, hi);
	return BISECT_AMBIGUOUS;
}

enum bisect_state bisect_status(const struct bisect *b, unsigned *lo, unsigned *hi, unsigned *next, char **why)
{
	const struct bisect_step *ends = find_step(b, b->bad);

	*lo = b->good;
	*hi = b->bad;
	*next = b->bad;
	*why = NULL;
	if (!ends || !ends->done)
		return BISECT_RUNNING;
	if (ends->mark == BISECT_UNDECIDED) {
		*why = xasprintf("the ends (%u and %u patches) could not be told apart within %u boots a side: %s",
				 b->good, b->bad, b->max_boots, ends->why ? ends->why : "undecided");
		return BISECT_STUCK;
	}
	if (ends->mark == BISECT_SKIPPED) {
		*why = xasprintf("the bad end (%u patches) cannot be tested: %s", b->bad, ends->why ? ends->why : "skipped");
		return BISECT_STUCK;
	}
	if (ends->mark == BISECT_GOOD) {
		*why = xasprintf("the ends do not differ by more than %g%%: %s", b->threshold,
				 ends->why ? ends->why : "unchanged");
		return BISECT_NO_CHANGE;
	}
	/* narrow with every judged step inside the range, in the order they ran */
	for (size_t i = 0; i < b->nsteps; i++) {
		const struct bisect_step *st = &b->steps[i];

		if (st->prefix == b->bad || !st->done || st->prefix <= *lo || st->prefix >= *hi ||
		    st->mark == BISECT_SKIPPED)
			continue;
		if (st->mark == BISECT_GOOD)
			*lo = st->prefix;
		else if (st->mark == BISECT_BAD)
			*hi = st->prefix;
		else {
			*why = xasprintf("step %u (%u patches) could not be decided within %u boots a side: %s",
					 (unsigned)i + 1, st->prefix, b->max_boots, st->why ? st->why : "undecided");
			return BISECT_STUCK;
		}
	}
	if (*hi - *lo <= 1)
		return BISECT_FOUND;
	return next_step(b, *lo, *hi, next, why);
}

enum expect_direction bisect_expect(const struct bisect *b)
{
	if (!b->direction)
		return DIR_UNCHANGED;
	return b->direction > 0 ? DIR_INCREASE : DIR_DECREASE;
}

void bisect_skip(struct bisect_step *st, const char *why)
{
	free(st->verdict);
	free(st->why);
	st->done = true;
	st->mark = BISECT_SKIPPED;
	st->alpha = 0; /* no judgement, no alpha spent */
	st->verdict = xstrdup("skipped");
	st->why = xstrdup(why ? why : "");
	st->change = st->lo = st->hi = NAN;
}

void bisect_judge(struct bisect *b, struct bisect_step *st, const struct cmp_verdict *v)
{
	bool ends = st->prefix == b->bad;
	enum expect_direction dir = bisect_expect(b);

	free(st->verdict);
	free(st->why);
	st->done = true;
	/* the step's share of the bisect's alpha (a sequential step spends it over its looks) */
	st->alpha = bisect_step_alpha(b);
	if (!v || !v->d) {
		st->verdict = xstrdup(verdict_name(VERDICT_INCONCLUSIVE));
		st->why = xasprintf("no run measured %s", b->metric);
		st->mark = BISECT_UNDECIDED;
		return;
	}
	st->verdict = xstrdup(verdict_name(v->v));
	st->why = xstrdup(v->why ? v->why : "");
	st->change = v->d->e.change;
	st->lo = v->d->e.lo;
	st->hi = v->d->e.hi;
	for (int i = 0; i < 2; i++) {
		st->boots[i] = (unsigned)v->d->e.boots[i];
		st->runs[i] = (unsigned)v->d->e.runs[i];
	}
	switch (v->v) {
	case VERDICT_CHANGED: /* the ends, no direction given: the bad way is the one they moved */
		st->mark = BISECT_BAD;
		if (ends && dir == DIR_UNCHANGED)
			b->direction = st->change > 0 ? 1 : -1;
		break;
	case VERDICT_IMPROVED: /* moved the bad way */
		st->mark = BISECT_BAD;
		break;
	case VERDICT_UNCHANGED:
	case VERDICT_SMALLER:
	case VERDICT_REGRESSED:
		st->mark = BISECT_GOOD;
		break;
	default:
		st->mark = BISECT_UNDECIDED;
		break;
	}
}

/* ---- bisect.json ---- */

static void json_num_or_null(struct json *j, const char *k, double v)
{
	json_key(j, k);
	if (isnan(v))
		json_null(j);
	else
		json_double(j, v);
}

void bisect_format_json(const struct bisect *b, struct strbuf *out)
{
	struct json j;
	unsigned lo, hi, next;
	_cleanup_free_ char *why = NULL;
	enum bisect_state state = bisect_status(b, &lo, &hi, &next, &why);

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_uint(&j, "format", 1);
	json_kv_string(&j, "experiment", b->experiment);
	json_kv_string(&j, "series", b->series);
	json_kv_string(&j, "from", b->from);
	json_kv_uint(&j, "patches", b->npatches);
	json_key(&j, "subjects");
	json_array_begin(&j);
	for (size_t i = 0; i < b->subjects.n; i++)
		json_string(&j, b->subjects.v[i]);
	json_array_end(&j);
	json_kv_uint(&j, "good", b->good);
	json_kv_uint(&j, "bad", b->bad);
	json_kv_string(&j, "metric", b->metric);
	json_kv_double(&j, "threshold_pct", b->threshold);
	json_key(&j, "direction");
	json_int(&j, b->direction);
	json_kv_double(&j, "alpha", b->alpha);
	json_kv_uint(&j, "max_boots", b->max_boots);
	json_key(&j, "steps");
	json_array_begin(&j);
	for (size_t i = 0; i < b->nsteps; i++) {
		const struct bisect_step *st = &b->steps[i];

		json_object_begin(&j);
		json_kv_uint(&j, "prefix", st->prefix);
		json_kv_string(&j, "run", st->run);
		json_key(&j, "done");
		json_bool(&j, st->done);
		json_kv_string(&j, "mark", bisect_mark_name(st->mark));
		json_kv_string(&j, "verdict", st->verdict);
		json_num_or_null(&j, "change_pct", st->change);
		json_num_or_null(&j, "lo_pct", st->lo);
		json_num_or_null(&j, "hi_pct", st->hi);
		json_key(&j, "boots");
		json_array_begin(&j);
		json_uint(&j, st->boots[0]);
		json_uint(&j, st->boots[1]);
		json_array_end(&j);
		json_key(&j, "runs");
		json_array_begin(&j);
		json_uint(&j, st->runs[0]);
		json_uint(&j, st->runs[1]);
		json_array_end(&j);
		json_kv_double(&j, "alpha", st->alpha);
		json_kv_double(&j, "seconds", st->seconds);
		json_kv_string(&j, "why", st->why);
		json_object_end(&j);
	}
	json_array_end(&j);
	/* derived, for readers without lab; ignored when read back */
	json_kv_string(&j, "state", bisect_state_name(state));
	json_kv_uint(&j, "range_good", lo);
	json_kv_uint(&j, "range_bad", hi);
	json_kv_string(&j, "why", why);
	json_object_end(&j);
	json_finish(&j);
	strbuf_addch(out, '\n');
}

static int opt_string(struct json_reader *r, const struct json_doc *o, const char *key, char **ret)
{
	const struct json_doc *v = json_doc_get(o, key);

	if (v && json_doc_type(v) == JSON_DOC_NULL) {
		*ret = NULL;
		return 0;
	}
	return json_reader_string(r, o, key, ret);
}

static int uint_pair(struct json_reader *r, const struct json_doc *o, const char *key, unsigned ret[2])
{
	const struct json_doc *a = json_doc_get(o, key);

	if (json_doc_type(a) != JSON_DOC_ARRAY || json_doc_array_size(a) != 2)
		return json_reader_bad(r, "is missing or not an array of two numbers", key);
	for (size_t i = 0; i < 2; i++) {
		long long v;

		if (json_doc_int_value(json_doc_array_get(a, i), 0, 1000000, &v) < 0)
			return json_reader_bad(r, "is missing or not an array of two numbers", key);
		ret[i] = (unsigned)v;
	}
	return 0;
}

static int read_step(struct json_reader *r, const struct json_doc *o, struct bisect *b)
{
	static const char *const known[] = { "prefix", "run", "done", "mark", "verdict", "change_pct", "lo_pct",
					     "hi_pct", "boots", "runs", "alpha", "seconds", "why", NULL };
	_cleanup_free_ char *mark = NULL;
	struct bisect_step st = { 0 };
	size_t prefix = 0;
	const struct json_doc *done = json_doc_get(o, "done");
	const char *unknown;
	int e = 0;

	if (json_doc_type(o) != JSON_DOC_OBJECT)
		return json_reader_bad(r, "has an element that is not an object", "steps");
	if ((unknown = json_doc_unknown_key(o, known)))
		return json_reader_bad(r, "is not a member of a step", unknown);
	if (json_reader_uint(r, o, "prefix", b->npatches, &prefix) < 0 || opt_string(r, o, "run", &st.run) < 0 ||
	    json_reader_string(r, o, "mark", &mark) < 0 || opt_string(r, o, "verdict", &st.verdict) < 0 ||
	    json_reader_num(r, o, "change_pct", -100, HUGE_VAL, true, &st.change) < 0 ||
	    json_reader_num(r, o, "lo_pct", -HUGE_VAL, HUGE_VAL, true, &st.lo) < 0 ||
	    json_reader_num(r, o, "hi_pct", -HUGE_VAL, HUGE_VAL, true, &st.hi) < 0 ||
	    uint_pair(r, o, "boots", st.boots) < 0 || uint_pair(r, o, "runs", st.runs) < 0 ||
	    json_reader_num(r, o, "alpha", 0, 1, false, &st.alpha) < 0 ||
	    json_reader_num(r, o, "seconds", 0, 1e9, false, &st.seconds) < 0 || opt_string(r, o, "why", &st.why) < 0)
		e = -EINVAL;
	else if (json_doc_type(done) != JSON_DOC_BOOL)
		e = json_reader_bad(r, "is missing or not a boolean", "done");
	else if (st.run && !str_is_name(st.run))
		e = json_reader_bad(r, "is not a run id", "run");
	else {
		size_t i = 0;

		while (i < ELEMENTSOF(mark_names) && !streq(mark, mark_names[i]))
			i++;
		if (i == ELEMENTSOF(mark_names))
			e = json_reader_bad(r, "is not a mark (untested, good, bad, undecided, skipped)", "mark");
		st.mark = (enum bisect_mark)(i % ELEMENTSOF(mark_names));
	}
	st.prefix = (unsigned)prefix;
	st.done = json_doc_bool(o, "done");
	if (!e && find_step(b, st.prefix))
		e = json_reader_bad(r, "names a prefix twice", "steps");
	if (!e && st.done != (st.mark != BISECT_UNTESTED))
		e = json_reader_bad(r, "says done without a mark, or a mark without done", "done");
	if (e) {
		step_release(&st);
		return e;
	}
	GROW(b->steps, b->alloc, b->nsteps + 1);
	b->steps[b->nsteps++] = st;
	return 0;
}

static int read_bisect(struct json_reader *r, const struct json_doc *doc, struct bisect *b)
{
	static const char *const known[] = { "format", "experiment", "series", "from", "patches", "subjects",
					     "good", "bad", "metric", "threshold_pct", "direction", "alpha",
					     "max_boots", "steps", "state", "range_good", "range_bad", "why", NULL };
	const struct json_doc *subj = json_doc_get(doc, "subjects"), *steps = json_doc_get(doc, "steps");
	size_t format = 0, n = 0, good = 0, bad = 0, boots = 0;
	long long dir = 0;
	const char *unknown;

	if ((unknown = json_doc_unknown_key(doc, known)))
		return json_reader_bad(r, "is not a member of bisect.json", unknown);
	if (json_reader_uint(r, doc, "format", 1000000, &format) < 0)
		return -EINVAL;
	if (format != 1)
		return json_reader_bad(r, "is not format 1", "format");
	if (json_reader_string(r, doc, "experiment", &b->experiment) < 0 ||
	    json_reader_string(r, doc, "series", &b->series) < 0 || json_reader_string(r, doc, "from", &b->from) < 0 ||
	    json_reader_uint(r, doc, "patches", 999, &n) < 0 || json_reader_uint(r, doc, "good", 999, &good) < 0 ||
	    json_reader_uint(r, doc, "bad", 999, &bad) < 0 || json_reader_string(r, doc, "metric", &b->metric) < 0 ||
	    json_reader_num(r, doc, "threshold_pct", 0, 1e6, false, &b->threshold) < 0 ||
	    json_reader_num(r, doc, "alpha", 1e-9, 0.5, false, &b->alpha) < 0 ||
	    json_reader_uint(r, doc, "max_boots", 1000, &boots) < 0)
		return -EINVAL;
	if (json_doc_int_value(json_doc_get(doc, "direction"), -1, 1, &dir) < 0)
		return json_reader_bad(r, "is missing or not -1, 0 or 1", "direction");
	b->npatches = (unsigned)n;
	b->good = (unsigned)good;
	b->bad = (unsigned)bad;
	b->direction = (int)dir;
	b->max_boots = (unsigned)boots;
	if (!b->max_boots)
		return json_reader_bad(r, "is 0: a step needs at least a boot a kernel", "max_boots");
	if (json_doc_get(doc, "state")) {
		/* written for readers; lab works it out from the steps, but an unknown one is not lab's */
		const char *st = json_doc_string_value(json_doc_get(doc, "state"));
		size_t i = 0;

		while (st && i < ELEMENTSOF(state_names) && !(state_names[i] && streq(st, state_names[i])))
			i++;
		if (!st || i == ELEMENTSOF(state_names))
			return json_reader_bad(r, "is not a state of a bisect", "state");
	}
	if (!str_is_name(b->experiment) || !str_is_name(b->series) || !str_is_name(b->from))
		return json_reader_bad(r, "is not a name", "experiment, series or from");
	if (!(b->good < b->bad && b->bad <= b->npatches))
		return json_reader_bad(r, "is not a range inside the series (good < bad <= patches)", "good");
	if (json_doc_type(subj) != JSON_DOC_ARRAY || json_doc_array_size(subj) != b->npatches)
		return json_reader_bad(r, "is missing or not a subject per patch", "subjects");
	for (size_t i = 0; i < b->npatches; i++) {
		const char *s = json_doc_string_value(json_doc_array_get(subj, i));

		if (!s)
			return json_reader_bad(r, "has an element that is not a string", "subjects");
		strv_push(&b->subjects, s);
	}
	if (json_doc_type(steps) != JSON_DOC_ARRAY || json_doc_array_size(steps) > 1000)
		return json_reader_bad(r, "is missing or not an array (at most 1000 steps)", "steps");
	for (size_t i = 0; i < json_doc_array_size(steps); i++)
		if (read_step(r, json_doc_array_get(steps, i), b) < 0)
			return -EINVAL;
	return 0;
}

int bisect_parse(const char *path, const char *text, size_t len, struct bisect *ret, char **ret_err)
{
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	struct json_reader r = { .path = path };

	memset(ret, 0, sizeof(*ret));
	if (json_doc_parse_file(path, text, len, &doc, ret_err) < 0)
		return -EINVAL;
	if (read_bisect(&r, doc, ret) < 0) {
		*ret_err = r.err ? r.err : xasprintf("%s: malformed", path);
		bisect_release(ret);
		return -EINVAL;
	}
	return 0;
}

/* ---- the summary ---- */

static void add_prefix(const struct bisect *b, unsigned prefix, struct strbuf *out)
{
	_cleanup_free_ char *k = bisect_kernel_name(b, prefix);

	strbuf_addstr(out, k);
	if (prefix && prefix <= b->subjects.n)
		strbuf_addf(out, " (%s)", b->subjects.v[prefix - 1]);
}

void bisect_format_text(const struct bisect *b, struct strbuf *out)
{
	unsigned lo, hi, next;
	_cleanup_free_ char *why = NULL;
	enum bisect_state state = bisect_status(b, &lo, &hi, &next, &why);
	_cleanup_free_ char *g = bisect_kernel_name(b, b->good), *bd = bisect_kernel_name(b, b->bad);

	strbuf_addf(out, "bisect of %s over %s: good %s, bad %s; %s moves by more than %g%%", b->experiment,
		    b->series, g, bd, b->metric, b->threshold);
	if (b->direction)
		strbuf_addf(out, " (the bad way: %s)", b->direction > 0 ? "up" : "down");
	strbuf_addf(out, "\neach step at alpha %.4g (%g over %u steps), at most %u boots a side\n",
		    bisect_step_alpha(b), b->alpha, bisect_planned_steps(b), b->max_boots);
	for (size_t i = 0; i < b->nsteps; i++) {
		const struct bisect_step *st = &b->steps[i];
		_cleanup_free_ char *k = bisect_kernel_name(b, st->prefix);

		strbuf_addf(out, "  %zu. %-22s %-9s", i + 1, k, st->done ? bisect_mark_name(st->mark) : "running");
		if (st->done && !isnan(st->change))
			strbuf_addf(out, " %+.1f%%", st->change);
		if (st->done && !isnan(st->lo) && !isnan(st->hi))
			strbuf_addf(out, " [%+.1f, %+.1f]%%", st->lo, st->hi);
		if (st->done && st->mark == BISECT_SKIPPED)
			strbuf_addf(out, " %s, %.0f s", st->why ? st->why : "", st->seconds);
		else if (st->done)
			strbuf_addf(out, " %s, %u+%u boots, %.0f s", st->verdict ? st->verdict : "-", st->boots[0],
				    st->boots[1], st->seconds);
		if (st->run)
			strbuf_addf(out, " (run %s)", st->run);
		strbuf_addch(out, '\n');
	}
	switch (state) {
	case BISECT_FOUND:
		strbuf_addstr(out, "first bad: ");
		add_prefix(b, hi, out);
		strbuf_addch(out, '\n');
		break;
	case BISECT_STUCK:
		strbuf_addf(out, "not narrowed: the first bad patch is in %u..%u: %s\n", lo + 1, hi, why);
		break;
	case BISECT_NO_CHANGE:
		strbuf_addf(out, "nothing to bisect: %s\n", why);
		break;
	case BISECT_AMBIGUOUS:
		strbuf_addf(out, "ambiguous: %s\n", why);
		break;
	case BISECT_RUNNING:
		strbuf_addf(out, "running: the first bad patch is in %u..%u; next: ", lo + 1, hi);
		add_prefix(b, next, out);
		strbuf_addch(out, '\n');
		break;
	}
}
