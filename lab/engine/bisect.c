/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
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

static void commits_release(struct bisect_commit *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++) {
		free(c[i].id);
		free(c[i].author);
		free(c[i].parents);
	}
	free(c);
}

void bisect_release(struct bisect *b)
{
	commits_release(b->commits, b->commits ? b->npatches + 1 : 0);
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

char *bisect_commit_kernel(const char *kernel, const char *id)
{
	return xasprintf("%s-g%.12s", kernel, id);
}

char *bisect_kernel_name(const struct bisect *b, unsigned prefix)
{
	if (b->commits)
		return bisect_commit_kernel(b->series, b->commits[prefix].id);
	return prefix ? xasprintf("%s@%u", b->series, prefix) : xstrdup(b->from);
}

/* ---- the range as a graph ---- */

/*
 * Every prefix or commit 1..n with the set of its ancestors (itself
 * included) inside the range, as bit rows: a series is a line (k's parent
 * is k - 1), a commit range a graph. Sets of a few hundred bits make every
 * question below a few word operations.
 */
struct graph {
	size_t n, words;
	uint64_t *anc; /* row k: the ancestors of k, k included; row 0: none */
};

static uint64_t *row(const struct graph *g, unsigned k)
{
	return g->anc + (size_t)k * g->words;
}

static bool has(const uint64_t *set, unsigned k)
{
	return (set[k / 64] >> (k % 64)) & 1;
}

static unsigned count(const struct graph *g, const uint64_t *set)
{
	unsigned c = 0;

	for (size_t w = 0; w < g->words; w++)
		c += (unsigned)__builtin_popcountll(set[w]);
	return c;
}

static void graph_build(const struct bisect *b, struct graph *g)
{
	g->n = b->npatches;
	g->words = g->n / 64 + 1;
	g->anc = xcalloc((g->n + 1) * g->words, sizeof(uint64_t));
	for (unsigned k = 1; k <= g->n; k++) {
		uint64_t *r = row(g, k);

		r[k / 64] |= 1ull << (k % 64);
		if (!b->commits) {
			for (size_t w = 0; w < g->words; w++)
				r[w] |= row(g, k - 1)[w];
			continue;
		}
		for (size_t p = 0; p < b->commits[k].nparents; p++) {
			unsigned q = b->commits[k].parents[p];

			if (q && q < k) /* parents come first: bisect_parse holds a file to it */
				for (size_t w = 0; w < g->words; w++)
					r[w] |= row(g, q)[w];
		}
	}
}

static void graph_release(struct graph *g)
{
	free(g->anc);
}

/* Whether the range is a line: each commit's one parent inside it the one
 * before it (a merge whose other parents are all on the good side is on
 * the line too). */
static bool is_line(const struct bisect *b)
{
	if (!b->commits)
		return true;
	for (unsigned k = 1; k <= b->npatches; k++) {
		size_t inside = 0;

		for (size_t p = 0; p < b->commits[k].nparents; p++) {
			unsigned q = b->commits[k].parents[p];

			if (q && q != k - 1)
				return false;
			inside += q != 0;
		}
		if (inside != (k > 1))
			return false;
	}
	return true;
}

static bool is_skipped(const struct bisect *b, unsigned prefix);

/*
 * The next to test among the suspects `cand` (hi, the bad one, among
 * them), skipping those `skip` says: git rev-list --bisect's choice, the
 * candidate with as many suspects among its ancestors as not (half of
 * them, rounded down: the middle of a line); at the same distance from
 * half the one with more ancestors (the next above the middle of a line
 * first); then the lowest. 0 when none is left. *ret_best: whether it is
 * the best of all, skipped ones included.
 */
static unsigned choose(const struct graph *g, const uint64_t *cand, unsigned hi, const struct bisect *b,
		       bool skips, bool *ret_best)
{
	uint64_t *tmp = xcalloc(g->words, sizeof(uint64_t));
	unsigned n = count(g, cand), half = n / 2, pick = 0, pick_dist = UINT_MAX, pick_a = 0, best_dist = UINT_MAX;

	for (unsigned c = 1; c <= g->n; c++) {
		unsigned a, dist;

		if (c == hi || !has(cand, c))
			continue;
		for (size_t w = 0; w < g->words; w++)
			tmp[w] = row(g, c)[w] & cand[w];
		a = count(g, tmp);
		dist = a > half ? a - half : half - a;
		if (dist < best_dist)
			best_dist = dist;
		if (skips && b && is_skipped(b, c))
			continue;
		if (dist < pick_dist || (dist == pick_dist && a > pick_a)) {
			pick = c;
			pick_dist = dist;
			pick_a = a;
		}
	}
	free(tmp);
	if (ret_best)
		*ret_best = pick && pick_dist == best_dist;
	return pick;
}

/* The suspects: ancestors of hi that are no good one's. */
static void suspects(const struct graph *g, unsigned hi, const uint64_t *goods, uint64_t *ret)
{
	for (size_t w = 0; w < g->words; w++)
		ret[w] = row(g, hi)[w] & ~goods[w];
}

/* The most steps after the ends a bisect from (hi, goods) needs, deciding
 * every step; *budget bounds the walk (0 when it ran out). */
static unsigned worst_steps(const struct graph *g, unsigned hi, const uint64_t *goods, unsigned *budget)
{
	uint64_t *cand = xcalloc(g->words, sizeof(uint64_t)), *more = NULL;
	unsigned c, bad, good;

	suspects(g, hi, goods, cand);
	if (count(g, cand) <= 1 || !*budget || !(c = choose(g, cand, hi, NULL, false, NULL))) {
		free(cand);
		return 0;
	}
	(*budget)--;
	more = xcalloc(g->words, sizeof(uint64_t));
	for (size_t w = 0; w < g->words; w++)
		more[w] = goods[w] | row(g, c)[w];
	bad = worst_steps(g, c, goods, budget);
	good = worst_steps(g, hi, more, budget);
	free(cand);
	free(more);
	return 1 + (bad > good ? bad : good);
}

unsigned bisect_planned_steps(const struct bisect *b)
{
	unsigned n = 1, span = b->bad > b->good ? b->bad - b->good : 1;
	struct graph g;
	/* a node costs n * n / 64 word operations: 20,000 of them over 999
	 * commits stay under a second; past them, the bound below */
	unsigned budget = 20000, worst;

	if (is_line(b)) {
		while ((1u << (n - 1)) < span)
			n++;
		return n; /* 1 + ceil(log2(span)) */
	}
	graph_build(b, &g);
	worst = worst_steps(&g, b->bad, row(&g, b->good), &budget);
	graph_release(&g);
	/* out of budget: every step rules out one suspect at least */
	return 1 + (budget ? worst : span - 1);
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

static bool is_skipped(const struct bisect *b, unsigned prefix)
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

/* "patches 4..6 were skipped ..., one of 4..7", or the commits by name. */
static char *ambiguous_why(const struct bisect *b, const struct graph *g, const uint64_t *cand, unsigned lo,
			   unsigned hi)
{
	struct strbuf sb = STRBUF_INIT;
	size_t listed = 0;

	if (!b->commits || is_line(b))
		return xasprintf("%s %u..%u were skipped (their kernels failed on their own account): the first bad "
				 "%s is one of %u..%u",
				 b->commits ? "commits" : "patches", lo + 1, hi - 1, b->commits ? "commit" : "patch",
				 lo + 1, hi);
	strbuf_addstr(&sb, "commits");
	for (unsigned c = 1; c <= g->n; c++)
		if (c != hi && has(cand, c) && listed++ < 8)
			strbuf_addf(&sb, " %.12s", b->commits[c].id);
	if (listed > 8)
		strbuf_addf(&sb, " and %zu more", listed - 8);
	strbuf_addf(&sb, " were skipped (their kernels failed on their own account): the first bad commit is one "
			 "of them or %.12s",
		    b->commits[hi].id);
	return strbuf_detach(&sb, NULL);
}

/* Where the walk stands once the ends are bad: every judged step inside the
 * suspects, in the order they ran, narrows them. */
static enum bisect_state narrow(const struct bisect *b, unsigned *lo, unsigned *hi, unsigned *next, char **why,
				unsigned *ret_suspects)
{
	struct graph g;
	_cleanup_free_ uint64_t *goods = NULL, *cand = NULL;
	enum bisect_state state = BISECT_RUNNING;
	bool best;

	graph_build(b, &g);
	goods = xcalloc(g.words, sizeof(uint64_t));
	cand = xcalloc(g.words, sizeof(uint64_t));
	memcpy(goods, row(&g, b->good), g.words * sizeof(uint64_t));
	for (size_t i = 0; i < b->nsteps; i++) {
		const struct bisect_step *st = &b->steps[i];

		suspects(&g, *hi, goods, cand);
		if (st->prefix == b->bad || !st->done || st->mark == BISECT_SKIPPED || st->prefix > g.n ||
		    !has(cand, st->prefix) || st->prefix == *hi)
			continue;
		if (st->mark == BISECT_GOOD) {
			for (size_t w = 0; w < g.words; w++)
				goods[w] |= row(&g, st->prefix)[w];
			if (st->prefix > *lo)
				*lo = st->prefix;
		} else if (st->mark == BISECT_BAD) {
			*hi = st->prefix;
		} else {
			*why = xasprintf("step %u (%s %u) could not be decided within %u boots a side: %s", (unsigned)i + 1,
					 b->commits ? "commit" : "prefix", st->prefix, b->max_boots,
					 st->why ? st->why : "undecided");
			state = BISECT_STUCK;
			goto out;
		}
	}
	suspects(&g, *hi, goods, cand);
	/* the last good below hi: on a line, where the suspects begin */
	while (*lo > b->good && !(has(row(&g, *hi), *lo) && has(goods, *lo)))
		(*lo)--;
	if (ret_suspects)
		*ret_suspects = count(&g, cand);
	if (count(&g, cand) <= 1) {
		state = BISECT_FOUND;
		goto out;
	}
	*next = choose(&g, cand, *hi, b, true, &best);
	if (!*next) {
		*why = ambiguous_why(b, &g, cand, *lo, *hi);
		state = BISECT_AMBIGUOUS;
	} else if (judged(b) >= bisect_planned_steps(b)) {
		*why = xasprintf("the %u steps alpha was split over are spent%s", bisect_planned_steps(b),
				 best ? "" : ": skipped patches moved the steps off the middle of the range");
		state = BISECT_STUCK;
	}
out:
	graph_release(&g);
	return state;
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
		*why = xasprintf("the ends (%u and %u %s) could not be told apart within %u boots a side: %s", b->good,
				 b->bad, b->commits ? "commits" : "patches", b->max_boots, ends->why ? ends->why : "undecided");
		return BISECT_STUCK;
	}
	if (ends->mark == BISECT_SKIPPED) {
		*why = xasprintf("the bad end (%u %s) cannot be tested: %s", b->bad, b->commits ? "commits" : "patches",
				 ends->why ? ends->why : "skipped");
		return BISECT_STUCK;
	}
	if (ends->mark == BISECT_GOOD) {
		*why = xasprintf("the ends do not differ by more than %g%%: %s", b->threshold,
				 ends->why ? ends->why : "unchanged");
		return BISECT_NO_CHANGE;
	}
	return narrow(b, lo, hi, next, why, NULL);
}

unsigned bisect_suspects(const struct bisect *b)
{
	unsigned lo, hi, next, n = 0;
	_cleanup_free_ char *why = NULL;
	const struct bisect_step *ends = find_step(b, b->bad);

	if (!ends || !ends->done || ends->mark != BISECT_BAD)
		return b->bad - b->good;
	lo = b->good;
	hi = b->bad;
	narrow(b, &lo, &hi, &next, &why, &n);
	return n;
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

/* A commit bisect's range: first_parent and every commit with its parents. */
static void json_commits(struct json *j, const struct bisect *b)
{
	json_key(j, "first_parent");
	json_bool(j, b->first_parent);
	json_key(j, "commits");
	json_array_begin(j);
	for (unsigned k = 0; k <= b->npatches; k++) {
		json_object_begin(j);
		json_kv_string(j, "id", b->commits[k].id);
		json_kv_string(j, "author", b->commits[k].author);
		json_key(j, "parents");
		json_array_begin(j);
		for (size_t p = 0; p < b->commits[k].nparents; p++)
			json_uint(j, b->commits[k].parents[p]);
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
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
	if (b->commits)
		json_commits(&j, b);
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
		json_kv_double(&j, "change_pct", st->change);
		json_kv_double(&j, "lo_pct", st->lo);
		json_kv_double(&j, "hi_pct", st->hi);
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
	if (json_reader_uint(r, o, "prefix", b->npatches, &prefix) < 0 || json_reader_opt_string(r, o, "run", &st.run) < 0 ||
	    json_reader_string(r, o, "mark", &mark) < 0 || json_reader_opt_string(r, o, "verdict", &st.verdict) < 0 ||
	    json_reader_num(r, o, "change_pct", -100, HUGE_VAL, true, &st.change) < 0 ||
	    json_reader_num(r, o, "lo_pct", -HUGE_VAL, HUGE_VAL, true, &st.lo) < 0 ||
	    json_reader_num(r, o, "hi_pct", -HUGE_VAL, HUGE_VAL, true, &st.hi) < 0 ||
	    uint_pair(r, o, "boots", st.boots) < 0 || uint_pair(r, o, "runs", st.runs) < 0 ||
	    json_reader_num(r, o, "alpha", 0, 1, false, &st.alpha) < 0 ||
	    json_reader_num(r, o, "seconds", 0, 1e9, false, &st.seconds) < 0 || json_reader_opt_string(r, o, "why", &st.why) < 0)
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

static bool is_commit_id(const char *s)
{
	size_t n = 0;

	for (; s && ((s[n] >= '0' && s[n] <= '9') || (s[n] >= 'a' && s[n] <= 'f')); n++)
		;
	return s && n == 40 && !s[n];
}

/* A commit bisect's commits: the good one, then the range, each parent below its child. */
static int read_commits(struct json_reader *r, const struct json_doc *a, struct bisect *b)
{
	static const char *const known[] = { "id", "author", "parents", NULL };

	if (json_doc_type(a) != JSON_DOC_ARRAY || json_doc_array_size(a) != (size_t)b->npatches + 1)
		return json_reader_bad(r, "is not the good commit and one per commit of the range", "commits");
	b->commits = xcalloc((size_t)b->npatches + 1, sizeof(*b->commits));
	for (unsigned k = 0; k <= b->npatches; k++) {
		const struct json_doc *o = json_doc_array_get(a, k), *ps = json_doc_get(o, "parents");
		struct bisect_commit *c = &b->commits[k];
		const char *unknown;

		if (json_doc_type(o) != JSON_DOC_OBJECT)
			return json_reader_bad(r, "has an element that is not an object", "commits");
		if ((unknown = json_doc_unknown_key(o, known)))
			return json_reader_bad(r, "is not a member of a commit", unknown);
		if (json_reader_string(r, o, "id", &c->id) < 0 || json_reader_string(r, o, "author", &c->author) < 0)
			return -EINVAL;
		if (!is_commit_id(c->id))
			return json_reader_bad(r, "is not a commit id (40 hex digits)", "id");
		if (json_doc_type(ps) != JSON_DOC_ARRAY || json_doc_array_size(ps) > 64 ||
		    (k == 0 && json_doc_array_size(ps)))
			return json_reader_bad(r, "is not a list of at most 64 parents (none for the good commit)",
					       "parents");
		c->parents = xcalloc(json_doc_array_size(ps) + 1, sizeof(unsigned));
		for (size_t p = 0; p < json_doc_array_size(ps); p++) {
			long long v;

			/* parents first: a commit's parents are below it, 0 the good side */
			if (json_doc_int_value(json_doc_array_get(ps, p), 0, k ? k - 1 : 0, &v) < 0)
				return json_reader_bad(r, "has a parent that is not a commit before it", "parents");
			c->parents[c->nparents++] = (unsigned)v;
		}
	}
	return 0;
}

/* A commit bisect's commits, held to its ends and its from kernel; a series has none. */
static int read_range(struct json_reader *r, const struct json_doc *doc, struct bisect *b)
{
	const struct json_doc *fp = json_doc_get(doc, "first_parent");
	_cleanup_free_ char *from = NULL;

	if (!json_doc_get(doc, "commits"))
		return fp ? json_reader_bad(r, "is for a commit bisect, which has commits", "first_parent") : 0;
	if (read_commits(r, json_doc_get(doc, "commits"), b) < 0)
		return -EINVAL;
	if (json_doc_type(fp) != JSON_DOC_BOOL)
		return json_reader_bad(r, "is missing or not a boolean", "first_parent");
	b->first_parent = json_doc_bool(doc, "first_parent");
	if (b->good != 0 || b->bad != b->npatches)
		return json_reader_bad(r, "is not the whole range of a commit bisect (good 0, bad the last)", "good");
	from = bisect_commit_kernel(b->series, b->commits[0].id);
	if (!streq(from, b->from))
		return json_reader_bad(r, "is not the good commit's kernel", "from");
	return 0;
}

static int read_bisect(struct json_reader *r, const struct json_doc *doc, struct bisect *b)
{
	static const char *const known[] = { "format", "experiment", "series", "from", "patches", "subjects",
					     "good", "bad", "metric", "threshold_pct", "direction", "alpha",
					     "max_boots", "steps", "state", "range_good", "range_bad", "why",
					     "first_parent", "commits", NULL };
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
	if (read_range(r, doc, b) < 0)
		return -EINVAL;
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

/* "in 3..5" of a series; "one of 4 commits up to <id>" of a commit bisect. */
static void add_suspects(const struct bisect *b, unsigned lo, unsigned hi, struct strbuf *out)
{
	if (b->commits)
		strbuf_addf(out, "one of %u commits up to %s", bisect_suspects(b), b->commits[hi].id);
	else
		strbuf_addf(out, "in %u..%u", lo + 1, hi);
}

/* How it ended, or where it stands: a commit bisect names the first bad
 * commit in full, with its subject and author. */
static void format_outcome(const struct bisect *b, enum bisect_state state, unsigned lo, unsigned hi,
			   unsigned next, const char *why, struct strbuf *out)
{
	const char *what = b->commits ? "commit" : "patch";

	switch (state) {
	case BISECT_FOUND:
		if (b->commits)
			strbuf_addf(out, "first bad commit: %s (%s)\nauthor: %s\n", b->commits[hi].id,
				    b->subjects.v[hi - 1], b->commits[hi].author);
		else {
			strbuf_addstr(out, "first bad: ");
			add_prefix(b, hi, out);
			strbuf_addch(out, '\n');
		}
		break;
	case BISECT_STUCK:
		strbuf_addf(out, "not narrowed: the first bad %s is ", what);
		add_suspects(b, lo, hi, out);
		strbuf_addf(out, ": %s\n", why);
		break;
	case BISECT_NO_CHANGE:
		strbuf_addf(out, "nothing to bisect: %s\n", why);
		break;
	case BISECT_AMBIGUOUS:
		strbuf_addf(out, "ambiguous: %s\n", why);
		break;
	case BISECT_RUNNING:
		strbuf_addf(out, "running: the first bad %s is ", what);
		add_suspects(b, lo, hi, out);
		strbuf_addstr(out, "; next: ");
		add_prefix(b, next, out);
		strbuf_addch(out, '\n');
		break;
	}
}

void bisect_format_text(const struct bisect *b, struct strbuf *out)
{
	unsigned lo, hi, next;
	_cleanup_free_ char *why = NULL;
	enum bisect_state state = bisect_status(b, &lo, &hi, &next, &why);
	_cleanup_free_ char *g = bisect_kernel_name(b, b->good), *bd = bisect_kernel_name(b, b->bad);

	strbuf_addf(out, "bisect of %s over %s%s: good %s, bad %s; %s moves by more than %g%%", b->experiment,
		    b->series, !b->commits ? "" : b->first_parent ? "'s commits (first parents)" : "'s commits", g, bd,
		    b->metric, b->threshold);
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
	format_outcome(b, state, lo, hi, next, why, out);
}
