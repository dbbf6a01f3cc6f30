/* SPDX-License-Identifier: MIT */
/*
 * A performance bisect over the prefixes of a patch series: prefix 0 is
 * the series' `from` kernel, prefix k the first k patches (NAME@k); or
 * over the commits of a git source between a good and a bad commit
 * (commits[0] the good one, 1..n the range in topological order, each
 * built as NAME-g<id12>), merges included, as git bisect walks them. A
 * series is the graph where patch k's one parent is k - 1. Each
 * step is a lab run of the experiment with two kernels, the good end and
 * the prefix under test, interleaved on one machine, with boots added
 * until the decision engine decides the metric (repeat: auto):
 *
 *   the endpoints first: good against bad must differ beyond the
 *   threshold (a decided "changed"; its sign is the bad way), else there
 *   is nothing to bisect, or the bisect says it could not tell;
 *   then the middle of what is left (git rev-list --bisect's choice: the
 *   candidate with as many candidates among its ancestors as not, so that
 *   either verdict halves the rest): moved the bad way (the interval
 *   excludes 0 that way and is not within the threshold) is bad; within
 *   the threshold (equivalence), a smaller real change or a change the
 *   other way is good; undecided within the budget stops the bisect with
 *   the range it could not narrow and why, never a guess.
 *
 * Each step is judged at alpha / (1 + the steps a bisect of that range
 * needs at worst): 1 + ceil(log2(bad - good)) for a line of patches or
 * commits, worked out over the graph for a range with merges. By the
 * union bound the chance that any step is judged wrongly stays below
 * alpha; a bisect that would need more (skips moved it off the middle)
 * stops and says so.
 *
 * The state is bisect.json in the bisect's folder, rewritten after every
 * step, so an interrupted bisect resumes where it stopped (a step whose
 * run started is resumed, not restarted). Pure apart from the file
 * reading and writing helpers; nothing here prints.
 */
#pragma once

#include <stdbool.h>
#include "../result/compare.h"
#include "../util/strbuf.h"
#include "../util/strv.h"

#define BISECT_FILE "bisect.json"
#define BISECT_MAX_BYTES (4u << 20)
/* commits a commit bisect takes at most (a step is a build and boots: a
 * range of a thousand commits is ten steps, but a day of builds) */
#define BISECT_MAX_COMMITS 999

/* SKIPPED: the prefix's kernel failed on its own account (it does not
 * build or boot, a workload crashes on it: result/failure.h), so it can
 * be called neither good nor bad, as git bisect skip. */
enum bisect_mark { BISECT_UNTESTED, BISECT_GOOD, BISECT_BAD, BISECT_UNDECIDED, BISECT_SKIPPED };
/* AMBIGUOUS: only skipped prefixes are left between the last good and the
 * first bad: the first bad is one of them, or the first bad itself. */
enum bisect_state { BISECT_RUNNING, BISECT_FOUND, BISECT_STUCK, BISECT_NO_CHANGE, BISECT_AMBIGUOUS };

struct bisect_step {
	unsigned prefix;   /* patches applied; the endpoints' step tests the bad end */
	char *run;         /* the step's stored run id; NULL before it started */
	bool done;         /* judged (mark set) */
	enum bisect_mark mark;
	char *verdict;     /* the decision engine's word, NULL before */
	double change, lo, hi; /* % against the good end; NaN: none */
	unsigned boots[2], runs[2]; /* good end, prefix */
	double alpha;      /* its share of the bisect's alpha (spent over its looks) */
	double seconds;    /* wall time of the step: builds and runs */
	char *why;         /* the verdict's reason */
};

/* A commit of a commit bisect: its parents as indexes into the range
 * (always below its own; 0 is the good end or outside the range). */
struct bisect_commit {
	char *id;          /* 40 hex digits */
	char *author;      /* "Name <mail>" */
	unsigned *parents;
	size_t nparents;
};

struct bisect {
	char *experiment;
	char *series;      /* the kernel variant whose patches (or whose git source's commits) are bisected */
	char *from;        /* its `from` kernel: prefix 0 (a commit bisect: the good commit's kernel) */
	/* a commit bisect: commits[0] the good end, commits[1..npatches] the
	 * range (subjects.v[k - 1] is commit k's subject); NULL for a series */
	struct bisect_commit *commits;
	bool first_parent; /* the range is the bad commit's first-parent line */
	unsigned npatches;
	struct strv subjects; /* patch k's subject is subjects.v[k - 1] */
	unsigned good, bad;   /* prefixes */
	char *metric;
	double threshold;     /* %: the smallest change that counts as bad */
	int direction;        /* the bad way: +1 up, -1 down, 0 not known yet */
	double alpha;
	unsigned max_boots;
	struct bisect_step *steps;
	size_t nsteps, alloc;
};

void bisect_release(struct bisect *b);
/* "base" for prefix 0, "series@k" else; a commit bisect's "NAME-g<id12>" (allocated). */
char *bisect_kernel_name(const struct bisect *b, unsigned prefix);
/* The kernel name of a git source's commit: "NAME-g<first 12 hex digits>" (allocated). */
char *bisect_commit_kernel(const char *kernel, const char *id);
/* Steps a bisect of the range needs (endpoints included), and each step's alpha. */
unsigned bisect_planned_steps(const struct bisect *b);
double bisect_step_alpha(const struct bisect *b);

/*
 * Where the bisect stands: the range left (*lo good, *hi bad), and the
 * state. RUNNING with *next the prefix to test next (the step may exist
 * already, started and not done: resume it); FOUND: *hi is the first bad
 * prefix; STUCK: a step could not be decided, or the steps the bisect's
 * alpha was split over are spent (skips moved steps off the middle) (*why
 * says which, allocated); NO_CHANGE: the endpoints do not differ beyond
 * the threshold; AMBIGUOUS: the prefixes between *lo and *hi were all
 * skipped (*why names them). A skipped prefix never narrows the range:
 * the next step is the untested prefix nearest the middle. Over a graph,
 * *lo is the last good step below *hi (the good end when none).
 */
enum bisect_state bisect_status(const struct bisect *b, unsigned *lo, unsigned *hi, unsigned *next, char **why);
/* Commits still suspect (a commit bisect; a series' *hi - *lo), the first bad among them. */
unsigned bisect_suspects(const struct bisect *b);
/* The step for a prefix (made when new). */
struct bisect_step *bisect_step(struct bisect *b, unsigned prefix);
/* The expectation the next step runs with: until the ends gave the bad way,
 * "unchanged" within the threshold; then the bad way. */
enum expect_direction bisect_expect(const struct bisect *b);
/* Judge a step from its run's verdict on the metric (NULL: missing, undecided). */
void bisect_judge(struct bisect *b, struct bisect_step *st, const struct cmp_verdict *v);
/* Skip a step: its kernel's own failure, `why` (copied) the evidence. */
void bisect_skip(struct bisect_step *st, const char *why);

const char *bisect_mark_name(enum bisect_mark m); /* "untested", "good", "bad", "undecided", "skipped" */
const char *bisect_state_name(enum bisect_state s); /* "running", "found", "stuck", "no-change", "ambiguous" */

/* bisect.json, pretty, and back: strict, the first problem in *ret_err. */
void bisect_format_json(const struct bisect *b, struct strbuf *out);
int bisect_parse(const char *path, const char *text, size_t len, struct bisect *ret, char **ret_err);

/* The summary a person reads: the steps in order with their verdicts, then
 * the outcome ("first bad: pcp-auto@7 (mm: tune PCP high automatically)"). */
void bisect_format_text(const struct bisect *b, struct strbuf *out);

struct diags;
/* The bisect's folder dir (<root>/<id>) as a stored run: every step's
 * runs found under root, renumbered <experiment>.NNNN with their boots
 * and files, saved there and indexed; the decisions stay bisect.json's
 * (bisect-folder.c). 0, or -1 with d. */
int bisect_gather(const struct bisect *b, const char *root, const char *dir, const char *id, struct diags *d);
/* The same for any stored runs (NULL entries skipped): `first` the baseline variant. */
int runs_gather(const char *experiment, const char *first, const char *const *runs, size_t nruns, const char *root,
		const char *dir, const char *id, struct diags *d);
