/* SPDX-License-Identifier: MIT */
/*
 * A track: a branch of a git source followed commit by commit (every Nth
 * of the first-parent line since a start), each tracked commit measured
 * against the one before it in a lab run of the experiment (the two
 * kernels interleaved in boots, sequential as a bisect's step), the runs
 * read as one series ordered by commit, and its change points decided
 * over the whole series (result/changepoint.h: the boot is the unit).
 * A change point between two tracked commits with commits between them is
 * bisected (bisect.h) to its culprit.
 *
 * The state is track.json in the track's folder, rewritten after every
 * comparison and bisect, so a track killed anywhere resumes without
 * running anything finished again. Pure apart from the file helpers;
 * nothing here prints.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "../util/strbuf.h"

#define TRACK_FILE "track.json"
#define TRACK_MAX_BYTES (4u << 20)
#define TRACK_MAX_COMMITS 200

struct track_commit {
	char *id;      /* 40 hex digits */
	char *subject, *author;
};

/* commits[at - 1] against commits[at] */
struct track_pair {
	char *run;       /* its stored run; NULL before it started */
	bool done;
	char *failed;    /* the tracked commit did not build or boot (the kernel's failure): why; NULL else */
	double seconds;
};

struct track_point {
	unsigned from, at;      /* the change lies between tracked commits `from` and `at` (the last
				   measured one before it: from < at) */
	double change, lo, hi;  /* %, Welch's 95% interval */
	double p;
	char *bisect;           /* the bisect of the commits between, once begun; NULL: none needed or not yet */
	char *culprit;          /* its first bad commit, once found (40 hex digits) */
	char *subject, *author; /* the culprit's */
	char *outcome;          /* the bisect's state (found, stuck, ...); "adjacent": no commit between */
	char *known;            /* the track that reported this culprit and metric first; NULL: news */
	char *accepted;         /* why the culprit's change of this metric is a known trade-off; NULL: none */
};

struct track {
	char *experiment, *kernel, *branch, *metric;
	unsigned step;       /* every Nth commit of the first-parent line */
	double threshold;    /* %: the smallest change a bisect calls bad */
	double alpha;
	struct track_commit *commits; /* [0] the start */
	size_t ncommits;
	struct track_pair *pairs;     /* pairs[i]: commits[i] against commits[i + 1] */
	bool decided;                 /* the change points are decided (points holds them) */
	struct track_point *points;
	size_t npoints;
};

void track_release(struct track *t);
/* "K-g<id12>" of tracked commit i (allocated). */
char *track_kernel_name(const struct track *t, size_t i);

/*
 * The series: each boot of a tracked commit's kernel (in any comparison it
 * was in) its mean value of the metric, in commit order. value[] and
 * commit[] (indexes into the commits that have boots, *ret_kept the
 * tracked commit each stands for) are allocated; *ret_n boots, *ret_ncommits
 * commits with boots. runs[i] is pair i's result set (NULL: none).
 */
struct result_set;
void track_series(const struct track *t, struct result_set *const *runs, double **ret_value, size_t **ret_commit,
		  size_t *ret_n, size_t **ret_kept, size_t *ret_ncommits);

/*
 * Whether b is point p's bisect: of t's experiment and metric, over the
 * commits between p's two tracked commits (its good end t's commit
 * p->from, its bad end p->at), and, when it found its first bad commit
 * and p names a culprit, that one. Else false, with why (allocated): a
 * track.json from elsewhere that names another bisect would otherwise
 * lend it that bisect's culprit.
 */
struct bisect;
bool track_point_bisect_matches(const struct track *t, const struct track_point *p, const struct bisect *b,
				char **ret_why);

/* track.json, pretty, and back: strict, the first problem in *ret_err. */
void track_format_json(const struct track *t, struct strbuf *out);
int track_parse(const char *path, const char *text, size_t len, struct track *ret, char **ret_err);

/*
 * Known trade-offs (<results>/accepted.json): a commit (7 to 40 hex digits,
 * matched as a prefix of a culprit's id) and a metric whose change is
 * accepted, with why. One writer: lab track --accept.
 */
#define TRACK_ACCEPTED_FILE "accepted.json"
struct track_accept {
	char *commit, *metric, *why, *when;
};
struct track_accepted {
	struct track_accept *v;
	size_t n, alloc;
};
void track_accepted_release(struct track_accepted *a);
void track_accepted_format_json(const struct track_accepted *a, struct strbuf *out);
int track_accepted_parse(const char *path, const char *text, size_t len, struct track_accepted *ret, char **ret_err);
/* Why culprit's change of metric is accepted, or NULL. */
const char *track_accepted_why(const struct track_accepted *a, const char *culprit, const char *metric);

/* The summary a person reads: the tracked commits, the comparisons, each
 * change point with its culprit in the robot's words. */
void track_format_text(const struct track *t, struct strbuf *out);
