/* SPDX-License-Identifier: MIT */
/*
 * The decision engine: from each side's runs (value and boot) to an effect
 * with its interval and p-value, and from an effect and what was declared
 * to a verdict. The boot is the unit: with two boots or more a side the
 * tests see each boot's mean, so the variation between boots is in the
 * interval; with fewer they see runs and say so. Relative changes come from
 * the ratio (Welch on logs, Fieller when a value is not positive), never
 * beyond -100%. A sequential design spends its alpha over its looks
 * (equal parts: a union bound keeps the error at alpha whatever look
 * stops). Pure functions; nothing here prints.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum stat_method { STAT_WELCH_LOG, STAT_MANN_WHITNEY, STAT_BOOTSTRAP };
#define STAT_METHOD_COUNT (STAT_BOOTSTRAP + 1)
const char *stat_method_name(enum stat_method m); /* "welch-log", "mann-whitney", "bootstrap" */
int stat_method_from_name(const char *s, enum stat_method *ret);

/* CHANGED: an "unchanged" expectation the data contradicts, whichever way it
 * moved; SMALLER: a real change the expected way, decidedly below the mde. */
enum verdict {
	VERDICT_IMPROVED, VERDICT_REGRESSED, VERDICT_UNCHANGED, VERDICT_INCONCLUSIVE, VERDICT_CHANGED, VERDICT_SMALLER
};
#define VERDICT_COUNT (VERDICT_SMALLER + 1)
const char *verdict_name(enum verdict v);
bool verdict_decided(enum verdict v);

enum expect_direction { DIR_INCREASE, DIR_DECREASE, DIR_UNCHANGED };
#define DIR_COUNT (DIR_UNCHANGED + 1)
/* "increase", "decrease", "unchanged": the one table of their names. */
extern const char *const expect_direction_names[DIR_COUNT];
const char *expect_direction_name(enum expect_direction d);
/* The direction named s: 0, or -EINVAL. */
int expect_direction_parse(const char *s, enum expect_direction *ret);

/* How an experiment decides (lab.yaml `decide:`), stored with its run. */
struct decide_params {
	double alpha; /* declared verdicts, two-sided (0.05) */
	double power; /* for the smallest detectable change and the planner (0.8) */
	double q;     /* false discovery rate of the exploratory rows (0.05) */
	enum stat_method method;
	bool sequential;      /* repeat: auto */
	unsigned min_boots;   /* per variant before the first look (2) */
	unsigned max_boots;   /* per variant, the budget's last look */
};
#define DECIDE_PARAMS_DEFAULT \
	((struct decide_params){ .alpha = 0.05, .power = 0.8, .q = 0.05, .method = STAT_WELCH_LOG, .min_boots = 2, .max_boots = 2 })

/* One side: a value per run and the boot it came from (boot NULL or an entry NULL: unknown). */
struct side {
	const double *v;
	const char *const *boot;
	size_t n;
};

struct effect {
	bool tested;        /* p is a test's */
	const char *why;    /* static: why there is no test or no interval */
	const char *method; /* the test used: welch-log, welch, fieller, permutation, mann-whitney, bootstrap */
	bool points;        /* change in absolute points */
	bool by_boot;       /* the units are boot means */
	size_t units[2], runs[2], boots[2]; /* [0] baseline, [1] compared */
	double cv_between[2], cv_within[2]; /* %, NaN when not estimable */
	double mean[2];
	double change;      /* %, or points; NaN: none */
	double lo, hi;      /* interval at 1 - alpha; NaN: none */
	double elo, ehi;    /* at 1 - 2 alpha: the equivalence test's */
	double p;           /* NaN: no test */
	double mde;         /* smallest change detectable at alpha with power; NaN: none */
};

/* The distinct boots of a side, numbered in order of appearance (which[i]:
 * run i's, s->n entries); 0 when a run names none. */
size_t decide_boot_index(const struct side *s, size_t *which);

/* b against a at level alpha. */
void decide_effect(const struct side *a, const struct side *b, bool points, enum stat_method m, double alpha,
		   double power, uint64_t seed, struct effect *out);

/* The verdict on an effect for an expected direction and smallest change
 * that matters (mde, in the effect's unit; 0: none declared, so no
 * equivalence can be claimed). *why: allocated. */
enum verdict decide_verdict(const struct effect *e, enum expect_direction dir, double mde, double alpha, char **why);

/* A mechanism check against the baseline (lab.yaml observe: vs-baseline):
 * the compared kernel higher, lower, different, or the same. Three
 * outcomes, never two: HOLDS, decided the declared way (the interval at
 * 1 - alpha beyond 0, or for SAME inside ±margin by two one-sided tests);
 * FAILS, decided against it (the other way, or equivalent within ±margin,
 * or for SAME a change beyond the margin); INCONCLUSIVE, neither, with the
 * smallest change the data could have shown. "Not shown" is not "shown
 * not to happen": overlapping ranges alone never fail a check. */
enum check_rel { CHECK_HIGHER, CHECK_LOWER, CHECK_DIFFERS, CHECK_SAME };
enum check_outcome { CHECK_HOLDS, CHECK_FAILS, CHECK_INCONCLUSIVE };

/* margin in the effect's unit (% or points); 0: none declared, so no
 * equivalence can be claimed (SAME then holds never). *why: allocated. */
enum check_outcome decide_check(const struct effect *e, enum check_rel rel, double margin, double alpha, char **why);

/* The alpha of look `look` (1-based) of `looks`: alpha / looks each. */
double decide_look_alpha(double alpha, unsigned look, unsigned looks);

/* Boots a side that make a relative change of mde_pct decidable at alpha
 * with power, for boots whose means vary cv_between % and runs cv_within %
 * with m runs a boot: Welch on logs, sized with Student's t at 2n - 2
 * degrees of freedom (at least 2; 0 without an mde or CVs). */
unsigned decide_boots_needed(double cv_between, double cv_within, unsigned m, double mde_pct, double alpha,
			     double power);

/* One side's mean and the parts of its variance as CV % (between boots,
 * within a boot; NaN when not estimable: fewer than 2 boots, or one run each). */
void decide_variance_parts(const struct side *s, double *mean, double *cv_between, double *cv_within);

/* The smallest relative change (%) decidable at alpha with power with
 * `boots` boots a side of m runs each, for those CVs (the same model;
 * NaN under 2 boots). */
double decide_mde_pct(double cv_between, double cv_within, unsigned m, unsigned boots, double alpha, double power);
