/* SPDX-License-Identifier: MIT */
/* engine/bisect.c: how a bisect narrows, judges, stops; bisect.json read back
 * strictly; the summary against golden files. */
#include <errno.h>
#include <math.h>
#include "unit.h"
#include "engine/bisect.h"
#include "util/alloc.h"
#include "util/strbuf.h"

static void setup(struct bisect *b, unsigned good, unsigned bad, unsigned n)
{
	memset(b, 0, sizeof(*b));
	b->experiment = xstrdup("proc");
	b->series = xstrdup("slowproc");
	b->from = xstrdup("base");
	b->npatches = n;
	for (unsigned i = 1; i <= n; i++)
		strv_push_take(&b->subjects, xasprintf("patch number %u", i));
	b->good = good;
	b->bad = bad;
	b->metric = xstrdup("procread.usec_per_read");
	b->threshold = 20;
	b->alpha = 0.05;
	b->max_boots = 4;
}

/* Judge the step for prefix with verdict v and a change of `change` %. */
static void judge(struct bisect *b, unsigned prefix, enum verdict v, double change)
{
	struct cmp_delta d = { .have = true };
	struct cmp_verdict cv = { .metric = "procread.usec_per_read", .variant = "x", .v = v, .d = &d,
				  .alpha = bisect_step_alpha(b), .why = (char *)"because" };
	struct bisect_step *st = bisect_step(b, prefix);

	d.e.change = change;
	d.e.lo = change - 5;
	d.e.hi = change + 5;
	d.e.boots[0] = d.e.boots[1] = 2;
	d.e.runs[0] = d.e.runs[1] = 4;
	free(st->run);
	st->run = xasprintf("20261202-1300%02u-abcd", prefix);
	st->seconds = 100 + prefix;
	bisect_judge(b, st, &cv);
}

static enum bisect_state status(const struct bisect *b, unsigned *lo, unsigned *hi, unsigned *next)
{
	char *why = NULL;
	enum bisect_state s = bisect_status(b, lo, hi, next, &why);

	free(why);
	return s;
}

static void test_narrows_to_the_first_bad(void **state)
{
	struct bisect b;
	unsigned lo, hi, next;

	(void)state;
	setup(&b, 0, 8, 8);
	assert_int_equal(bisect_planned_steps(&b), 4);
	assert_true(fabs(bisect_step_alpha(&b) - 0.0125) < 1e-12);
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_RUNNING);
	assert_int_equal(next, 8); /* the ends first */
	assert_int_equal(bisect_expect(&b), DIR_UNCHANGED);
	judge(&b, 8, VERDICT_CHANGED, 300);
	assert_int_equal(b.direction, 1); /* it got bigger: the bad way is up */
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_RUNNING);
	assert_int_equal(next, 4);
	assert_int_equal(bisect_expect(&b), DIR_INCREASE);
	judge(&b, 4, VERDICT_UNCHANGED, 1);
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_RUNNING);
	assert_int_equal(lo, 4);
	assert_int_equal(next, 6);
	judge(&b, 6, VERDICT_IMPROVED, 290); /* moved the bad way */
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_RUNNING);
	assert_int_equal(next, 5);
	judge(&b, 5, VERDICT_SMALLER, 3); /* real, but within the threshold: good */
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_FOUND);
	assert_int_equal(lo, 5);
	assert_int_equal(hi, 6);
	bisect_release(&b);
}

static void test_stops_honestly(void **state)
{
	struct bisect b;
	unsigned lo, hi, next;
	char *why = NULL;

	(void)state;
	/* a middle step the budget could not decide: the range it had, and why */
	setup(&b, 0, 8, 8);
	judge(&b, 8, VERDICT_CHANGED, -40);
	assert_int_equal(b.direction, -1);
	judge(&b, 4, VERDICT_REGRESSED, 10); /* the other way: not bad */
	judge(&b, 6, VERDICT_INCONCLUSIVE, -10);
	assert_int_equal(bisect_status(&b, &lo, &hi, &next, &why), BISECT_STUCK);
	assert_int_equal(lo, 4);
	assert_int_equal(hi, 8);
	assert_non_null(strstr(why, "could not be decided within 4 boots a side"));
	free(why);
	bisect_release(&b);

	/* the ends do not differ */
	setup(&b, 2, 7, 8);
	judge(&b, 7, VERDICT_UNCHANGED, 1);
	assert_int_equal(bisect_status(&b, &lo, &hi, &next, &why), BISECT_NO_CHANGE);
	assert_non_null(strstr(why, "do not differ by more than 20%"));
	free(why);
	bisect_release(&b);

	/* the ends cannot be told apart; a metric no run measured is undecided too */
	setup(&b, 0, 1, 1);
	assert_int_equal(bisect_planned_steps(&b), 1);
	bisect_judge(&b, bisect_step(&b, 1), NULL);
	assert_int_equal(b.steps[0].mark, BISECT_UNDECIDED);
	assert_int_equal(bisect_status(&b, &lo, &hi, &next, &why), BISECT_STUCK);
	assert_non_null(strstr(why, "could not be told apart"));
	free(why);
	bisect_release(&b);

	/* one patch apart and bad: found at once */
	setup(&b, 3, 4, 8);
	judge(&b, 4, VERDICT_CHANGED, 50);
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_FOUND);
	assert_int_equal(hi, 4);
	bisect_release(&b);
}

static void test_json_and_text(void **state)
{
	struct bisect b, back;
	struct strbuf j = STRBUF_INIT, j2 = STRBUF_INIT, t = STRBUF_INIT;
	char *err = NULL;

	(void)state;
	setup(&b, 0, 8, 8);
	judge(&b, 8, VERDICT_CHANGED, 300);
	judge(&b, 4, VERDICT_UNCHANGED, 1);
	judge(&b, 6, VERDICT_IMPROVED, 290);
	/* a step whose run started and did not end */
	bisect_step(&b, 5)->run = xstrdup("20261202-130500-abcd");
	bisect_format_json(&b, &j);
	assert_golden("tests/data/bisect/running.json", j.buf);
	bisect_format_text(&b, &t);
	assert_golden("tests/data/bisect/running.txt", t.buf);
	assert_int_equal(bisect_parse("bisect.json", j.buf, j.len, &back, &err), 0);
	bisect_format_json(&back, &j2);
	assert_string_equal(j.buf, j2.buf);
	bisect_release(&back);
	judge(&b, 5, VERDICT_UNCHANGED, 2);
	strbuf_reset(&t);
	bisect_format_text(&b, &t);
	assert_golden("tests/data/bisect/found.txt", t.buf);
	bisect_release(&b);
	strbuf_release(&j);
	strbuf_release(&j2);
	strbuf_release(&t);
}

/* A prefix whose kernel fails on its own account is skipped, as git bisect
 * skip: it narrows nothing, the next step is the untested prefix nearest
 * the middle, and where only skipped prefixes are left the result names
 * the range they leave. Skips spend no alpha; a bisect pushed off the
 * middle stops when the steps its alpha was split over are spent. */
static void test_skips(void **state)
{
	struct bisect b, back;
	struct strbuf j = STRBUF_INIT, t = STRBUF_INIT;
	unsigned lo, hi, next;
	char *why = NULL, *err = NULL;

	(void)state;
	setup(&b, 0, 8, 8);
	judge(&b, 8, VERDICT_CHANGED, 300);
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_RUNNING);
	assert_int_equal(next, 4);
	bisect_skip(bisect_step(&b, 4), "the kernel's failure (panic) in every run: Kernel panic - not syncing");
	assert_int_equal(b.steps[1].mark, BISECT_SKIPPED);
	assert_true(b.steps[1].done);
	assert_true(b.steps[1].alpha == 0);
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_RUNNING);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 8);
	assert_int_equal(next, 5); /* the nearest to the middle, above first */
	judge(&b, 5, VERDICT_IMPROVED, 280);
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_RUNNING);
	assert_int_equal(hi, 5);
	assert_int_equal(next, 2);
	judge(&b, 2, VERDICT_UNCHANGED, 1);
	assert_int_equal(next = (status(&b, &lo, &hi, &next), next), 3);
	judge(&b, 3, VERDICT_UNCHANGED, 2);
	/* only 4 is left between 3 (good) and 5 (bad), and it was skipped */
	assert_int_equal(bisect_status(&b, &lo, &hi, &next, &why), BISECT_AMBIGUOUS);
	assert_int_equal(lo, 3);
	assert_int_equal(hi, 5);
	assert_non_null(strstr(why, "patches 4..4 were skipped"));
	assert_non_null(strstr(why, "one of 4..5"));
	free(why);
	/* read back as written, the skip with it */
	bisect_format_json(&b, &j);
	assert_non_null(strstr(j.buf, "\"mark\": \"skipped\""));
	assert_int_equal(bisect_parse("bisect.json", j.buf, j.len, &back, &err), 0);
	assert_int_equal(bisect_status(&back, &lo, &hi, &next, &why), BISECT_AMBIGUOUS);
	free(why);
	bisect_format_text(&b, &t);
	assert_golden("tests/data/bisect/skipped.txt", t.buf);
	bisect_release(&back);
	bisect_release(&b);

	/* the bad end itself cannot be tested: nothing to bisect against */
	setup(&b, 0, 8, 8);
	bisect_skip(bisect_step(&b, 8), "the kernel's failure (build) in every run: fair.c:1: error: x");
	assert_int_equal(bisect_status(&b, &lo, &hi, &next, &why), BISECT_STUCK);
	assert_non_null(strstr(why, "the bad end (8 patches) cannot be tested"));
	free(why);
	bisect_release(&b);

	/* off the middle with the alpha's steps spent: stop, never judge more */
	setup(&b, 0, 8, 8);
	judge(&b, 8, VERDICT_CHANGED, 300);
	judge(&b, 2, VERDICT_UNCHANGED, 1);
	judge(&b, 3, VERDICT_UNCHANGED, 1);
	judge(&b, 7, VERDICT_IMPROVED, 290);
	bisect_skip(bisect_step(&b, 5), "skipped");
	assert_int_equal(bisect_status(&b, &lo, &hi, &next, &why), BISECT_STUCK);
	assert_non_null(strstr(why, "the 4 steps alpha was split over are spent"));
	free(why);
	bisect_release(&b);
	strbuf_release(&j);
	strbuf_release(&t);
}

/* A bisect.json with `from` replaced by `to`: refused, saying `says`. */
struct refusal {
	const char *from, *to, *says;
};

static void assert_refusals(const char *json, const struct refusal *bad, size_t n)
{
	struct bisect back;

	for (size_t i = 0; i < n; i++) {
		const char *at = strstr(json, bad[i].from);
		struct strbuf doc = STRBUF_INIT;
		char *err = NULL;

		if (!at)
			fail_msg("case %zu: '%s' is not in the file", i, bad[i].from);
		strbuf_add(&doc, json, (size_t)(at - json));
		strbuf_addstr(&doc, bad[i].to);
		strbuf_addstr(&doc, at + strlen(bad[i].from));
		assert_int_equal(bisect_parse("bisect.json", doc.buf, doc.len, &back, &err), -EINVAL);
		if (!strstr(err, bad[i].says))
			fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].says);
		free(err);
		strbuf_release(&doc);
	}
}

static void test_hostile(void **state)
{
	static const struct refusal bad[] = {
		{ "\"format\": 1", "\"format\": 2", "\"format\" is not format 1" },
		{ "\"good\": 0", "\"good\": 9", "\"good\" is not a range inside the series" },
		{ "\"prefix\": 4", "\"prefix\": 8", "\"steps\" names a prefix twice" },
		{ "\"prefix\": 4", "\"prefix\": 99", "\"prefix\" is missing or not a whole number in range" },
		{ "\"run\": \"20261202-130004-abcd\"", "\"run\": \"../../etc\"", "\"run\" is not a run id" },
		{ "\"mark\": \"good\"", "\"mark\": \"fine\"", "\"mark\" is not a mark" },
		{ "\"mark\": \"good\"", "\"mark\": \"untested\"", "\"done\" says done without a mark" },
		{ "\"series\": \"slowproc\"", "\"series\": \"a/b\"", "is not a name" },
		{ "\"direction\": 1", "\"direction\": 2", "\"direction\" is missing or not -1, 0 or 1" },
		{ "\"boots\": [", "\"boots\": [1, ", "\"boots\" is missing or not an array of two numbers" },
		{ "\"seconds\"", "\"extra\": 1, \"seconds\"", "\"extra\" is not a member of a step" },
		{ "\"patch number 8\"", "\"patch number 8\", \"nine\"", "\"subjects\" is missing or not a subject per patch" },
		{ "{", "[", "bisect.json:2:11:" },
	};
	struct bisect b;
	struct strbuf j = STRBUF_INIT;

	(void)state;
	setup(&b, 0, 8, 8);
	judge(&b, 8, VERDICT_CHANGED, 300);
	judge(&b, 4, VERDICT_UNCHANGED, 1);
	bisect_format_json(&b, &j);
	assert_refusals(j.buf, bad, ELEMENTSOF(bad));
	bisect_release(&b);
	strbuf_release(&j);
}

/* A commit bisect over `n` commits whose parents are parents[k] (a list
 * ending in -1; commit 0 is the good one). */
static void setup_commits(struct bisect *b, unsigned n, const int parents[][4])
{
	setup(b, 0, n, n);
	free(b->series);
	free(b->from);
	b->series = xstrdup("mainline");
	b->commits = xcalloc(n + 1, sizeof(*b->commits));
	for (unsigned k = 0; k <= n; k++) {
		struct bisect_commit *c = &b->commits[k];

		c->id = xasprintf("c0ffee%02u%032x", k, k);
		c->author = xasprintf("Dev %u <dev%u@example.org>", k, k);
		c->parents = xcalloc(4, sizeof(unsigned));
		for (size_t p = 0; k && p < 4 && parents[k][p] >= 0; p++)
			c->parents[c->nparents++] = (unsigned)parents[k][p];
	}
	b->from = bisect_commit_kernel(b->series, b->commits[0].id);
}

/* Whether commit `culprit` is commit k or one of its ancestors. */
static bool descends(const struct bisect *b, unsigned k, unsigned culprit)
{
	if (k == culprit)
		return true;
	for (size_t p = 0; p < b->commits[k].nparents; p++)
		if (b->commits[k].parents[p] && descends(b, b->commits[k].parents[p], culprit))
			return true;
	return false;
}

/* Walk the bisect with `culprit` the first bad commit: every step judged
 * bad when it descends from the culprit, good else. The steps it took. */
static unsigned walk(struct bisect *b, unsigned culprit, enum bisect_state *ret, unsigned *ret_hi)
{
	unsigned lo, hi, next, steps = 0;
	enum bisect_state s;

	while ((s = status(b, &lo, &hi, &next)) == BISECT_RUNNING) {
		bool bad = descends(b, next, culprit);

		judge(b, next, bad ? (next == b->bad ? VERDICT_CHANGED : VERDICT_IMPROVED) : VERDICT_UNCHANGED,
		      bad ? 200 : 1);
		steps++;
		assert_true(steps <= b->npatches + 1);
	}
	*ret = s;
	*ret_hi = hi;
	return steps;
}

/*
 * Merges included: good (0) -> A (1) -> B (2), and a side branch from the
 * good commit X (3) -> Y (4), merged by M (5) -> C (6) -> D (7, bad).
 * The culprit Y is on the side branch: a bisect over the line by index
 * would call it wrong; over the graph, as git bisect walks it, B is good
 * without saying anything about Y, and Y is found.
 */
static const int dag[][4] = { { -1 }, { 0, -1 }, { 1, -1 }, { 0, -1 }, { 3, -1 }, { 2, 4, -1 }, { 5, -1 }, { 6, -1 } };

static void test_commits_graph(void **state)
{
	struct bisect b, back;
	struct strbuf j = STRBUF_INIT, j2 = STRBUF_INIT, t = STRBUF_INIT;
	unsigned lo, hi, next;
	char *err = NULL, *why = NULL;

	(void)state;
	setup_commits(&b, 7, dag);
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_RUNNING);
	assert_int_equal(next, 7);
	judge(&b, 7, VERDICT_CHANGED, 200);
	assert_int_equal(bisect_suspects(&b), 7);
	/* B and Y have 2 of the 7 suspects below them, nearest half: B, the lower */
	assert_int_equal((status(&b, &lo, &hi, &next), next), 2);
	judge(&b, 2, VERDICT_UNCHANGED, 1);
	/* A and B are out; Y has X and itself, 2 of 5 */
	assert_int_equal(bisect_suspects(&b), 5);
	assert_int_equal((status(&b, &lo, &hi, &next), next), 4);
	judge(&b, 4, VERDICT_IMPROVED, 210);
	assert_int_equal((status(&b, &lo, &hi, &next), next), 3);
	judge(&b, 3, VERDICT_UNCHANGED, 2);
	assert_int_equal(status(&b, &lo, &hi, &next), BISECT_FOUND);
	assert_int_equal(hi, 4);
	bisect_format_text(&b, &t);
	assert_golden("tests/data/bisect/commits-found.txt", t.buf);
	/* read back as written, commits and parents with it */
	bisect_format_json(&b, &j);
	assert_golden("tests/data/bisect/commits-found.json", j.buf);
	assert_non_null(strstr(j.buf, "\"first_parent\": false"));
	assert_int_equal(bisect_parse("bisect.json", j.buf, j.len, &back, &err), 0);
	bisect_format_json(&back, &j2);
	assert_string_equal(j.buf, j2.buf);
	assert_int_equal(status(&back, &lo, &hi, &next), BISECT_FOUND);
	assert_int_equal(hi, 4);
	bisect_release(&back);
	bisect_release(&b);

	/* a skipped commit on the side branch: the other one is tried, then it is ambiguous */
	setup_commits(&b, 7, dag);
	judge(&b, 7, VERDICT_CHANGED, 200);
	judge(&b, 2, VERDICT_UNCHANGED, 1);
	bisect_skip(bisect_step(&b, 4), "the kernel's failure (build): fair.c:1: error: x");
	assert_int_equal((status(&b, &lo, &hi, &next), next), 5); /* 3 of 5 below it; X has 1 */
	judge(&b, 5, VERDICT_IMPROVED, 200);
	assert_int_equal((status(&b, &lo, &hi, &next), next), 3);
	judge(&b, 3, VERDICT_UNCHANGED, 1);
	assert_int_equal(bisect_status(&b, &lo, &hi, &next, &why), BISECT_AMBIGUOUS);
	assert_non_null(strstr(why, "commits c0ffee040000 were skipped"));
	assert_non_null(strstr(why, "the first bad commit is one of them or c0ffee050000"));
	free(why);
	bisect_release(&b);
	strbuf_release(&j);
	strbuf_release(&j2);
	strbuf_release(&t);
}

/* Every culprit found, within the steps the alpha was split over, over
 * random graphs with merges (seeded), and over a line the steps are the
 * series' 1 + ceil(log2 n). */
static void test_commits_every_culprit(void **state)
{
	unsigned seed = 12345;

	(void)state;
	for (int round = 0; round < 60; round++) {
		unsigned n = 2 + (unsigned)(round % 20);
		int (*parents)[4] = xcalloc(n + 1, sizeof(*parents));

		parents[0][0] = -1;
		for (unsigned k = 1; k <= n; k++) {
			/* the one before, and now and then a second parent further back (a merge) */
			seed = seed * 1103515245u + 12345u;
			parents[k][0] = (int)k - 1;
			parents[k][1] = -1;
			if (round >= 10 && k > 2 && (seed >> 16) % 3 == 0) {
				parents[k][0] = (int)((seed >> 8) % (k - 1)); /* a branch from further back */
				parents[k][1] = (int)k - 1;
				parents[k][2] = -1;
			}
		}
		for (unsigned culprit = 1; culprit <= n; culprit++) {
			struct bisect b;
			enum bisect_state s;
			unsigned hi, steps;

			setup_commits(&b, n, (const int (*)[4])parents);
			if (round < 10) {
				unsigned want = 1;

				while ((1u << (want - 1)) < n)
					want++;
				assert_int_equal(bisect_planned_steps(&b), want);
			}
			steps = walk(&b, culprit, &s, &hi);
			if (s != BISECT_FOUND || hi != culprit || steps > bisect_planned_steps(&b))
				fail_msg("round %d, %u commits, culprit %u: %s at %u after %u steps of %u", round, n, culprit,
					 bisect_state_name(s), hi, steps, bisect_planned_steps(&b));
			bisect_release(&b);
		}
		free(parents);
	}
}

/* A commit bisect's file from elsewhere: ids, parents and ends checked. */
static void test_commits_hostile(void **state)
{
	static const struct refusal bad[] = {
		{ "\"id\": \"c0ffee04", "\"id\": \"C0FFEE04", "\"id\" is not a commit id" },
		{ "\"id\": \"c0ffee04", "\"id\": \"../ee04", "\"id\" is not a commit id" },
		{ "\"parents\": [\n        2,\n        4", "\"parents\": [\n        2,\n        6",
		  "\"parents\" has a parent that is not a commit before it" },
		{ "\"parents\": [\n        3", "\"parents\": [\n        -1", "has a parent that is not a commit before" },
		{ "\"parents\": []", "\"parents\": [1]", "none for the good commit" },
		{ "\"first_parent\": false", "\"first_parent\": 0", "\"first_parent\" is missing or not a boolean" },
		{ "\"from\": \"mainline-gc0ffee000000\"", "\"from\": \"base\"", "\"from\" is not the good commit's kernel" },
		{ "\"good\": 0", "\"good\": 2", "\"good\" is not the whole range of a commit bisect" },
		{ "\"author\": \"Dev 0", "\"writer\": \"Dev 0", "\"writer\" is not a member of a commit" },
	};
	struct bisect b, back;
	struct strbuf j = STRBUF_INIT;

	(void)state;
	setup_commits(&b, 7, dag);
	judge(&b, 7, VERDICT_CHANGED, 300);
	bisect_format_json(&b, &j);
	assert_refusals(j.buf, bad, ELEMENTSOF(bad));
	bisect_release(&b);
	/* a series does not carry first_parent */
	setup(&b, 0, 8, 8);
	strbuf_reset(&j);
	bisect_format_json(&b, &j);
	{
		struct strbuf doc = STRBUF_INIT;
		const char *at = strstr(j.buf, "\"good\"");
		char *err = NULL;

		strbuf_add(&doc, j.buf, (size_t)(at - j.buf));
		strbuf_addstr(&doc, "\"first_parent\": true, ");
		strbuf_addstr(&doc, at);
		assert_int_equal(bisect_parse("bisect.json", doc.buf, doc.len, &back, &err), -EINVAL);
		assert_non_null(strstr(err, "is for a commit bisect"));
		free(err);
		strbuf_release(&doc);
	}
	bisect_release(&b);
	strbuf_release(&j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_narrows_to_the_first_bad),
		cmocka_unit_test(test_stops_honestly),
		cmocka_unit_test(test_json_and_text),
		cmocka_unit_test(test_skips),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_commits_graph),
		cmocka_unit_test(test_commits_every_culprit),
		cmocka_unit_test(test_commits_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
