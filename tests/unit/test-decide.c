/* SPDX-License-Identifier: MIT */
/*
 * The decision engine's numbers and error rates (issue 21 item 8).
 *
 * 1. Its figures against an independent implementation: SciPy/NumPy (and
 *    statsmodels for Benjamini-Hochberg) computed them once with
 *    tests/tools/stats-reference.py into tests/data/stats-reference.txt;
 *    every disagreement is printed (lab's figure and the reference's)
 *    before the test fails.
 * 2. Its error rates, by seeded simulation: A/A false positives with boots
 *    as units (and without, to show why boots matter), a sequential design's
 *    spent alpha (and naive re-testing), the equivalence test's error at the
 *    bound, Benjamini-Hochberg's false discoveries, the planner's power, and
 *    degenerate data. Each rate is printed on one line ("rate ...").
 * The margins are 3 binomial standard errors: sqrt(p (1 - p) / N).
 */
#include <math.h>
#include "unit.h"
#include "result/compare.h"
#include "result/decide.h"
#include "result/result.h"
#include "result/stats.h"

#define REF_FILE "tests/data/stats-reference.txt"
#define REF_MAX 64

#define ALPHA 0.05
#define POWER 0.8
#define TOL 1e-9      /* relative: exact figures */
#define TOL_NORM 1e-6 /* relative: p-values from the normal approximation */

/* ---- the reference file ---- */

struct ref {
	char name[16], key[32];
	size_t n;
	double v[REF_MAX];
};

static struct ref *refs;
static size_t nrefs;
static unsigned mismatches; /* per test: every disagreement is printed, then the test fails */

static FILE *open_ref(void)
{
	const char *src = getenv("LAB_SRCDIR");
	char path[4096];

	if (src && *src) {
		snprintf(path, sizeof(path), "%s/%s", src, REF_FILE);
		return fopen(path, "r");
	}
	return fopen(REF_FILE, "r");
}

static int load_refs(void **state)
{
	FILE *f = open_ref();
	char line[8192];
	size_t alloc = 0;

	(void)state;
	if (!f) {
		print_error("%s: cannot open (run from the source tree or set LAB_SRCDIR)\n", REF_FILE);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct ref r = { .n = 0 };
		char *p = line, *end;
		int used = 0;

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(p, "%15s %31s %zu%n", r.name, r.key, &r.n, &used) != 3 || r.n > REF_MAX)
			return print_error("%s: bad line: %s", REF_FILE, line), fclose(f), -1;
		p += used;
		for (size_t i = 0; i < r.n; i++, p = end) {
			r.v[i] = strtod(p, &end);
			if (end == p)
				return print_error("%s: bad value: %s", REF_FILE, line), fclose(f), -1;
		}
		if (nrefs == alloc)
			refs = realloc(refs, (alloc = alloc ? 2 * alloc : 256) * sizeof(*refs));
		refs[nrefs++] = r;
	}
	fclose(f);
	return nrefs ? 0 : -1;
}

static int free_refs(void **state)
{
	(void)state;
	free(refs);
	return 0;
}

static const struct ref *ref_find(const char *name, const char *key)
{
	for (size_t i = 0; i < nrefs; i++)
		if (!strcmp(refs[i].name, name) && !strcmp(refs[i].key, key))
			return &refs[i];
	return NULL;
}

static double ref_get(const char *name, const char *key)
{
	const struct ref *r = ref_find(name, key);

	if (!r)
		fail_msg("%s: no %s %s", REF_FILE, name, key);
	return r->v[0];
}

/* lab's x against the reference: relative tolerance, both NaN agree. */
static void check(const char *name, const char *key, double x, double tol)
{
	double r = ref_get(name, key);
	bool ok = (isnan(r) && isnan(x)) || fabs(x - r) <= tol * fabs(r) + 1e-13;

	if (!ok) {
		mismatches++;
		print_message("MISMATCH %s %s: lab %.17g, reference %.17g (rel %.3g)\n", name, key, x, r,
			      fabs(x - r) / fabs(r));
	}
}

static void end_checks(const char *what)
{
	unsigned n = mismatches;

	mismatches = 0;
	print_message("reference %s: %u mismatch(es)\n", what, n);
	assert_int_equal(n, 0);
}

/* The reference cases named like prefix ("d01", "d02" ... or "g01" ...). */
static size_t ref_cases(char prefix, const char *names[], size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < nrefs && n < max; i++)
		if (refs[i].name[0] == prefix && !strcmp(refs[i].key, "a"))
			names[n++] = refs[i].name;
	return n;
}

/* ---- 1. the figures against SciPy ---- */

static void side_of(const struct ref *r, struct side *s)
{
	*s = (struct side){ .v = r->v, .boot = NULL, .n = r->n };
}

static void check_effect(const char *name, const char *pre, const struct effect *e, double ptol)
{
	char k[32];

	snprintf(k, sizeof(k), "%s.p", pre);
	if (ref_find(name, k))
		check(name, k, e->p, ptol);
	snprintf(k, sizeof(k), "%s.change", pre), check(name, k, e->change, TOL);
	snprintf(k, sizeof(k), "%s.lo", pre), check(name, k, e->lo, TOL);
	snprintf(k, sizeof(k), "%s.hi", pre), check(name, k, e->hi, TOL);
	snprintf(k, sizeof(k), "%s.elo", pre), check(name, k, e->elo, TOL);
	snprintf(k, sizeof(k), "%s.ehi", pre), check(name, k, e->ehi, TOL);
	snprintf(k, sizeof(k), "%s.mde", pre);
	if (ref_find(name, k))
		check(name, k, e->mde, TOL);
}

/* Welch on the values (stats_welch and decide_effect in points), on logs
 * (decide_effect welch-log) and Fieller's ratio when a value is not positive. */
static void welch_case(const char *name)
{
	struct side a, b;
	struct sample_stats sa, sb;
	struct welch w;
	struct effect e;

	side_of(ref_find(name, "a"), &a);
	side_of(ref_find(name, "b"), &b);
	if (!ref_find(name, "w.p"))
		return;
	stats_describe(a.v, a.n, &sa);
	stats_describe(b.v, b.n, &sb);
	stats_welch(&sa, &sb, 1 - ALPHA, &w);
	check(name, "w.diff", w.diff, TOL);
	check(name, "w.se", w.se, TOL);
	check(name, "w.df", w.df, TOL);
	check(name, "w.p", w.p, TOL);
	check(name, "w.lo", w.lo, TOL);
	check(name, "w.hi", w.hi, TOL);
	decide_effect(&a, &b, true, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
	assert_string_equal(e.method, "welch");
	check(name, "w.p", e.p, TOL);
	check(name, "w.diff", e.change, TOL);
	check(name, "w.lo", e.lo, TOL);
	check(name, "w.hi", e.hi, TOL);
	decide_effect(&a, &b, false, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
	assert_false(e.by_boot);
	if (ref_find(name, "wl.p")) {
		assert_string_equal(e.method, "welch-log");
		check_effect(name, "wl", &e, TOL);
		return;
	}
	assert_string_equal(e.method, "fieller");
	check_effect(name, "fi", &e, TOL);
}

static void fieller_case(const char *name)
{
	double lo, hi;
	bool ok;

	if (!ref_find(name, "fi.ma"))
		return;
	ok = stats_fieller(ref_get(name, "fi.ma"), ref_get(name, "fi.va"), ref_get(name, "fi.mb"),
			   ref_get(name, "fi.vb"), ref_get(name, "fi.tq"), &lo, &hi);
	assert_true(ok == !isnan(ref_get(name, "fi.ratio_lo")));
	check(name, "fi.ratio_lo", lo, TOL);
	check(name, "fi.ratio_hi", hi, TOL);
	ok = stats_fieller(ref_get(name, "fi.ma"), ref_get(name, "fi.va"), ref_get(name, "fi.mb"),
			   ref_get(name, "fi.vb"), ref_get(name, "fi.etq"), &lo, &hi);
	check(name, "fi.eratio_lo", lo, TOL);
	check(name, "fi.eratio_hi", hi, TOL);
}

static void test_reference_welch_fieller(void **state)
{
	const char *names[64];
	size_t n = ref_cases('d', names, 64);

	(void)state;
	assert_true(n >= 12);
	for (size_t i = 0; i < n; i++) {
		welch_case(names[i]);
		fieller_case(names[i]);
	}
	end_checks("welch, welch-log, fieller");
}

static void test_reference_mann_whitney(void **state)
{
	const char *names[64];
	size_t n = ref_cases('d', names, 64);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		struct side a, b;
		struct rank_test r;
		struct effect e;

		side_of(ref_find(names[i], "a"), &a);
		side_of(ref_find(names[i], "b"), &b);
		stats_mann_whitney(a.v, a.n, b.v, b.n, 1 - ALPHA, &r);
		assert_true(r.ok);
		check(names[i], "mw.u", r.u, TOL);
		check(names[i], "mw.p", r.p, ref_get(names[i], "mw.exact") ? TOL : TOL_NORM);
		check(names[i], "mw.shift", r.shift, TOL);
		check(names[i], "mw.lo", r.lo, TOL);
		check(names[i], "mw.hi", r.hi, TOL);
		if (!ref_find(names[i], "mwl.change"))
			continue;
		decide_effect(&a, &b, false, STAT_MANN_WHITNEY, ALPHA, POWER, 1, &e);
		assert_string_equal(e.method, "mann-whitney");
		check(names[i], "mw.p", e.p, ref_get(names[i], "mw.exact") ? TOL : TOL_NORM);
		check_effect(names[i], "mwl", &e, TOL);
	}
	end_checks("mann-whitney, hodges-lehmann");
}

static void test_reference_permutation(void **state)
{
	const char *names[64];
	size_t n = ref_cases('d', names, 64);

	(void)state;
	for (size_t i = 0; i < n; i++) {
		struct side a, b;
		double p;

		side_of(ref_find(names[i], "a"), &a);
		side_of(ref_find(names[i], "b"), &b);
		p = stats_permutation_p(a.v, a.n, b.v, b.n, 42);
		if (ref_get(names[i], "perm.exact")) {
			check(names[i], "perm.p", p, TOL);
			continue;
		}
		/* 20,000 sampled arrangements: within 5 standard errors of the exact p */
		double r = ref_get(names[i], "perm.p"), se = sqrt(r * (1 - r) / 20000);

		print_message("permutation %s: lab (sampled) %.5f, exact %.5f\n", names[i], p, r);
		assert_true(fabs(p - r) <= 5 * se + 1e-4);
	}
	end_checks("permutation");
}

static void test_reference_bh(void **state)
{
	const struct ref *p = ref_find("bh", "p"), *q = ref_find("bh", "q");
	double out[REF_MAX];

	(void)state;
	assert_non_null(p);
	assert_non_null(q);
	stats_bh(p->v, p->n, out);
	for (size_t i = 0; i < p->n; i++) {
		bool ok = (isnan(q->v[i]) && isnan(out[i])) || fabs(out[i] - q->v[i]) <= TOL * fabs(q->v[i]) + 1e-13;

		if (!ok) {
			mismatches++;
			print_message("MISMATCH bh q[%zu]: lab %.17g, reference %.17g\n", i, out[i], q->v[i]);
		}
	}
	end_checks("benjamini-hochberg");
}

static const char *const boot_ids[] = { "b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7",
					"b8", "b9", "b10", "b11", "b12", "b13", "b14", "b15" };

/* A grouped side: each run named by its boot. */
static void grouped_side(const char *name, const char *s, const char **ids, struct side *out)
{
	char k[32];
	const struct ref *v, *sizes;
	size_t at = 0;

	snprintf(k, sizeof(k), "%s.sizes", s);
	sizes = ref_find(name, k);
	v = ref_find(name, s);
	assert_non_null(sizes);
	assert_non_null(v);
	for (size_t g = 0; g < sizes->n; g++)
		for (size_t j = 0; j < (size_t)sizes->v[g]; j++)
			ids[at++] = boot_ids[g];
	assert_int_equal(at, v->n);
	*out = (struct side){ .v = v->v, .boot = ids, .n = v->n };
}

static void test_reference_variance_parts(void **state)
{
	const char *names[16];
	size_t n = ref_cases('g', names, 16);

	(void)state;
	assert_true(n >= 2);
	for (size_t i = 0; i < n; i++) {
		const char *ia[REF_MAX], *ib[REF_MAX];
		struct side a, b;
		struct effect e;

		grouped_side(names[i], "a", ia, &a);
		grouped_side(names[i], "b", ib, &b);
		decide_effect(&a, &b, false, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
		assert_true(e.by_boot);
		assert_int_equal(e.units[0], e.boots[0]);
		check(names[i], "a.cvb", e.cv_between[0], TOL);
		check(names[i], "a.cvw", e.cv_within[0], TOL);
		check(names[i], "b.cvb", e.cv_between[1], TOL);
		check(names[i], "b.cvw", e.cv_within[1], TOL);
		check_effect(names[i], "bw", &e, TOL);
	}
	end_checks("variance parts, welch-log on boot means");
}

/* ---- 2. error rates by simulation ---- */

#define MAX_RUNS 64

/* A simulated experiment's two sides: boots x runs, lognormal. */
struct sim {
	double a[MAX_RUNS], b[MAX_RUNS];
	const char *boot[MAX_RUNS];
	size_t n; /* runs a side */
};

/* Boots with a per-boot offset (SD sd_b on logs) and runs within (sd_w); b scaled by 1 + effect. */
static void sim_draw(struct sim *s, unsigned boots, unsigned runs, double sd_b, double sd_w, double effect,
		     uint64_t *st)
{
	s->n = (size_t)boots * runs;
	assert_true(s->n <= MAX_RUNS);
	for (int side = 0; side < 2; side++) {
		double *v = side ? s->b : s->a, shift = side ? log1p(effect) : 0;

		for (unsigned k = 0; k < boots; k++) {
			double off = sd_b * stats_normal(st);

			for (unsigned j = 0; j < runs; j++) {
				v[k * runs + j] = 100 * exp(shift + off + sd_w * stats_normal(st));
				s->boot[k * runs + j] = boot_ids[k];
			}
		}
	}
}

/* The effect on the first n runs a side: by boot or by run. */
static void sim_effect(const struct sim *s, size_t n, bool by_boot, double alpha, struct effect *e)
{
	struct side a = { s->a, by_boot ? s->boot : NULL, n }, b = { s->b, by_boot ? s->boot : NULL, n };

	decide_effect(&a, &b, false, STAT_WELCH_LOG, alpha, POWER, 1, e);
}

/* The verdict on the first n runs a side: by boot or by run. */
static enum verdict sim_verdict(const struct sim *s, size_t n, bool by_boot, double mde, double alpha)
{
	struct effect e;
	char *why = NULL;
	enum verdict v;

	sim_effect(s, n, by_boot, alpha, &e);
	v = decide_verdict(&e, DIR_INCREASE, mde, alpha, &why);
	free(why);
	return v;
}

/* A claim of a real change: improved, regressed, or a real change below the mde. */
static bool claims_change(enum verdict v)
{
	return v == VERDICT_IMPROVED || v == VERDICT_REGRESSED || v == VERDICT_SMALLER;
}

static double margin(double p, unsigned n)
{
	return 3 * sqrt(p * (1 - p) / n);
}

static void test_aa_fixed(void **state)
{
	const unsigned N = 2000;
	unsigned fp_boot = 0, ir_boot = 0, fp_runs = 0;
	uint64_t st = 0x5eed0001;
	struct sim s;

	(void)state;
	for (unsigned i = 0; i < N; i++) {
		enum verdict v;

		sim_draw(&s, 4, 3, 0.05, 0.05, 0, &st);
		v = sim_verdict(&s, s.n, true, 5, ALPHA);
		fp_boot += claims_change(v);
		ir_boot += v == VERDICT_IMPROVED || v == VERDICT_REGRESSED;
		fp_runs += claims_change(sim_verdict(&s, s.n, false, 5, ALPHA));
	}
	print_message("rate A/A fixed 4 boots x 3 runs, boots as units: %.4f false changes (improved/regressed %.4f) "
		      "of %u, limit %.4f\n", (double)fp_boot / N, (double)ir_boot / N, N, ALPHA + margin(ALPHA, N));
	print_message("rate A/A fixed, runs as units (boots ignored): %.4f false changes of %u, must be > 0.10\n",
		      (double)fp_runs / N, N);
	assert_true((double)fp_boot / N <= ALPHA + margin(ALPHA, N));
	assert_true((double)fp_runs / N > 0.10);
}

/* A vs-baseline check's outcome on the first n runs a side, boots as units. */
static enum check_outcome sim_check(const struct sim *s, enum check_rel rel, double margin_pct)
{
	struct effect e;
	char *why = NULL;
	enum check_outcome o;

	sim_effect(s, s->n, true, ALPHA, &e);
	o = decide_check(&e, rel, margin_pct, ALPHA, &why);
	free(why);
	return o;
}

/* The three-outcome mechanism checks' error rates, by seeded simulation
 * (4 boots x 3 runs a side, CV 5% between and within boots): with no
 * change, "lower" holds (a false mechanism) and FAILS the other way each at
 * most alpha/2; with a real 20% fall it FAILS (a wrong verdict) next to
 * never, with or without a margin, and holds nearly always; "same" within
 * ±5% holds under a real 20% change at most alpha. */
static void test_check_error_rates(void **state)
{
	const unsigned N = 2000;
	unsigned aa_holds = 0, aa_fails = 0, fall_holds = 0, fall_fails = 0, fall_fails_m = 0, same_holds = 0;
	uint64_t st = 0x5eed00c4;
	struct sim s;

	(void)state;
	for (unsigned i = 0; i < N; i++) {
		enum check_outcome o;

		sim_draw(&s, 4, 3, 0.05, 0.05, 0, &st);
		o = sim_check(&s, CHECK_LOWER, 0);
		aa_holds += o == CHECK_HOLDS;
		aa_fails += o == CHECK_FAILS;
		sim_draw(&s, 4, 3, 0.05, 0.05, -0.20, &st);
		o = sim_check(&s, CHECK_LOWER, 0);
		fall_holds += o == CHECK_HOLDS;
		fall_fails += o == CHECK_FAILS;
		fall_fails_m += sim_check(&s, CHECK_LOWER, 5) == CHECK_FAILS;
		same_holds += sim_check(&s, CHECK_SAME, 5) == CHECK_HOLDS;
	}
	print_message("rate check lower, no change: holds %.4f, FAILS %.4f of %u, limit %.4f each\n", (double)aa_holds / N,
		      (double)aa_fails / N, N, ALPHA / 2 + margin(ALPHA / 2, N));
	print_message("rate check lower, a 20%% fall: holds %.4f, FAILS %.4f (margin 5%%: %.4f); same within 5%% holds "
		      "%.4f\n", (double)fall_holds / N, (double)fall_fails / N, (double)fall_fails_m / N,
		      (double)same_holds / N);
	assert_true((double)aa_holds / N <= ALPHA / 2 + margin(ALPHA / 2, N));
	assert_true((double)aa_fails / N <= ALPHA / 2 + margin(ALPHA / 2, N));
	assert_true((double)fall_holds / N >= 0.95);
	assert_true(fall_fails == 0 && fall_fails_m == 0);
	assert_true((double)same_holds / N <= ALPHA + margin(ALPHA, N));
}

/* A sequential A/A experiment: boots 2..8 a side, stopping at the first decided verdict. */
static enum verdict sequential(const struct sim *s, bool spend, unsigned *stopped)
{
	const unsigned min_boots = 2, max_boots = 8, looks = max_boots - min_boots + 1;

	for (unsigned look = 1; look <= looks; look++) {
		double alpha = spend ? decide_look_alpha(ALPHA, look, looks) : ALPHA;
		enum verdict v = sim_verdict(s, (size_t)(min_boots + look - 1) * 3, true, 5, alpha);

		if (verdict_decided(v) || look == looks) {
			*stopped = look;
			return v;
		}
	}
	return VERDICT_INCONCLUSIVE;
}

static void test_aa_sequential(void **state)
{
	const unsigned N = 1000;
	unsigned fp = 0, naive = 0, looks = 0, stopped;
	uint64_t st = 0x5eed0002;
	struct sim s;

	(void)state;
	assert_true(fabs(decide_look_alpha(ALPHA, 3, 7) - ALPHA / 7) < 1e-15);
	assert_true(decide_look_alpha(ALPHA, 1, 1) == ALPHA);
	for (unsigned i = 0; i < N; i++) {
		sim_draw(&s, 8, 3, 0.05, 0.05, 0, &st);
		fp += claims_change(sequential(&s, true, &stopped));
		looks += stopped;
		naive += claims_change(sequential(&s, false, &stopped));
	}
	print_message("rate A/A sequential 2..8 boots (7 looks at alpha/7): %.4f false changes of %u, limit %.4f "
		      "(mean stopping look %.2f)\n", (double)fp / N, N, ALPHA + margin(ALPHA, N), (double)looks / N);
	print_message("rate A/A sequential, naive alpha 0.05 at every look: %.4f false changes, must be > %.2f\n",
		      (double)naive / N, ALPHA);
	assert_true((double)fp / N <= ALPHA + margin(ALPHA, N));
	assert_true((double)naive / N > ALPHA);
}

/* A true change of exactly the mde: "unchanged" (or "smaller") is the equivalence test's error. */
static void test_equivalence_error(void **state)
{
	const unsigned N = 2000;
	unsigned err = 0, eq0 = 0;
	uint64_t st = 0x5eed0003;
	struct sim s;

	(void)state;
	for (unsigned i = 0; i < N; i++) {
		enum verdict v;

		/* precise enough that equivalence is often shown when nothing changed */
		sim_draw(&s, 6, 3, 0.01, 0.01, 0.05, &st);
		v = sim_verdict(&s, s.n, true, 5, ALPHA);
		err += v == VERDICT_UNCHANGED || v == VERDICT_SMALLER;
		sim_draw(&s, 6, 3, 0.01, 0.01, 0, &st);
		eq0 += sim_verdict(&s, s.n, true, 5, ALPHA) == VERDICT_UNCHANGED;
	}
	print_message("rate equivalence at a true change of +mde (5%%), 6 boots x 3 runs, SD 1%%: %.4f "
		      "unchanged of %u, limit %.4f (unchanged at no change: %.4f)\n",
		      (double)err / N, N, ALPHA + margin(ALPHA, N), (double)eq0 / N);
	assert_true((double)err / N <= ALPHA + margin(ALPHA, N));
	assert_true((double)eq0 / N > 0.5); /* the test can say unchanged at all */
}

#define FDR_METRICS 500
#define FDR_RUNS 5

/* One comparison's p-values: `real` of the metrics changed by +10% (2 x mde), 5 runs a side, SD 2%
 * (precise enough that Benjamini-Hochberg finds most real ones: the proportion is then informative). */
static void fdr_pvalues(double *p, unsigned real, uint64_t *st)
{
	struct sim s;

	for (unsigned m = 0; m < FDR_METRICS; m++) {
		struct side a, b;
		struct effect e;

		sim_draw(&s, FDR_RUNS, 1, 0, 0.02, m < real ? 0.10 : 0, st);
		a = (struct side){ s.a, NULL, s.n };
		b = (struct side){ s.b, NULL, s.n };
		decide_effect(&a, &b, false, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
		p[m] = e.p;
	}
}

static void test_fdr(void **state)
{
	const unsigned N = 200, real = 50;
	double p[FDR_METRICS], q[FDR_METRICS], fdp_sum = 0, fdp_sq = 0, se;
	unsigned any = 0, found = 0;
	uint64_t st = 0x5eed0004;

	(void)state;
	for (unsigned i = 0; i < N; i++) {
		unsigned k = 0;

		fdr_pvalues(p, 0, &st);
		stats_bh(p, FDR_METRICS, q);
		for (unsigned m = 0; m < FDR_METRICS; m++)
			k += q[m] <= ALPHA;
		any += k > 0;
	}
	print_message("rate FDR full null (500 null metrics, 5 runs a side): %.4f comparisons with any discovery of %u, "
		      "limit %.4f\n", (double)any / N, N, ALPHA + margin(ALPHA, N));
	assert_true((double)any / N <= ALPHA + margin(ALPHA, N));
	for (unsigned i = 0; i < N; i++) {
		unsigned fd = 0, d = 0;
		double fdp;

		fdr_pvalues(p, real, &st);
		stats_bh(p, FDR_METRICS, q);
		for (unsigned m = 0; m < FDR_METRICS; m++) {
			d += q[m] <= ALPHA;
			fd += q[m] <= ALPHA && m >= real;
		}
		found += d - fd;
		fdp = d ? (double)fd / d : 0;
		fdp_sum += fdp;
		fdp_sq += fdp * fdp;
	}
	se = sqrt((fdp_sq / N - (fdp_sum / N) * (fdp_sum / N)) / N);
	print_message("rate FDR 450 null + 50 real (+10%%, 5 runs a side, SD 2%%): mean false discovery proportion %.4f over %u, limit "
		      "%.4f (q + 3 SE); real ones found %.3f\n", fdp_sum / N, N, ALPHA + 3 * se,
		      (double)found / (N * real));
	assert_true(fdp_sum / N <= ALPHA + 3 * se);
}

static void test_power(void **state)
{
	const unsigned N = 1000, runs = 3;
	/* the simulation's spreads as CV %: a lognormal's sqrt(exp(sd^2) - 1) */
	double cv = 100 * sqrt(expm1(0.05 * 0.05));
	/* by hand, the normal approximation decide.h documents: 2 v z^2 / mde^2 with z = z(0.975) + z(0.8)
	 * and v = 5^2 + 5^2 / 3: 5.23 -> 6 boots; Student's t (t > z) can only need a little more */
	const double z = 1.959963985 + 0.841621234, hand = ceil(2 * (25 + 25.0 / 3) * z * z / 100);
	unsigned planned = decide_boots_needed(5, 5, 3, 10, ALPHA, POWER), between_only;
	unsigned boots = decide_boots_needed(cv, cv, runs, 10, ALPHA, POWER), improved = 0;
	uint64_t st = 0x5eed0005;
	struct sim s;

	(void)state;
	print_message("planner: 5%% between, 5%% within, 3 runs, mde 10%%: %u boots a side (by hand, normal "
		      "approximation: %.0f)\n", planned, hand);
	assert_true(hand == 6);
	assert_true(planned >= hand && planned <= hand + 2);
	assert_int_equal(decide_boots_needed(0, 0, 3, 10, ALPHA, POWER), 2); /* at least 2 */
	assert_int_equal(decide_boots_needed(5, 5, 3, 0, ALPHA, POWER), 0);  /* no mde: no plan */
	between_only = decide_boots_needed(5, 0, 3, 5, ALPHA, POWER);       /* 2 * 25 * z^2 / 25 = 15.7 -> 16 */
	assert_true(between_only >= 16 && between_only <= 20);
	assert_true(decide_boots_needed(5, 5, 3, 5, ALPHA, POWER) >= 3 * planned); /* half the mde: ~4x */
	assert_true(decide_boots_needed(5, 5, 30, 10, ALPHA, POWER) < planned);   /* more runs a boot: fewer */
	for (unsigned i = 0; i < N; i++) {
		sim_draw(&s, boots, runs, 0.05, 0.05, 0.10, &st);
		improved += sim_verdict(&s, s.n, true, 5, ALPHA) == VERDICT_IMPROVED;
	}
	print_message("rate power at +10%% (2 x mde 5%%), planner's %u boots x %u runs (CV %.3f%% each): %.4f improved "
		      "of %u, must be >= %.4f\n", boots, runs, cv, (double)improved / N, N, POWER - margin(POWER, N));
	assert_true((double)improved / N >= POWER - margin(POWER, N));
}

/* ---- degenerate data ---- */

static void test_no_variance(void **state)
{
	const double one[] = { 1, 1, 1 }, zero[] = { 0, 0, 0 };
	struct side a = { one, NULL, 3 }, b = { zero, NULL, 3 };
	struct effect e;
	char *why = NULL;

	(void)state;
	assert_true(fabs(stats_permutation_p(one, 3, zero, 3, 1) - 0.1) < 1e-12);
	decide_effect(&a, &b, false, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
	assert_true(e.tested);
	assert_string_equal(e.method, "permutation");
	assert_true(e.p > 0);
	assert_true(fabs(e.p - 0.1) < 1e-12);
	assert_true(isnan(e.lo) && isnan(e.hi)); /* no point interval */
	assert_true(fabs(e.change + 100) < 1e-12);
	assert_int_equal(decide_verdict(&e, DIR_DECREASE, 0, ALPHA, &why), VERDICT_INCONCLUSIVE);
	print_message("no variance 1,1,1 vs 0,0,0: p %.4f, %s\n", e.p, why);
	free(why);
}

static struct result_run *add_run(struct result_set *rs, int *seq, const char *variant, const char *boot)
{
	char id[32];
	struct result_run *r;

	snprintf(id, sizeof(id), "x.%04d", ++*seq);
	r = result_add_run(rs, id, variant, "w", 0, 1);
	r->status = RUN_OK;
	r->boot = strdup(boot);
	return r;
}

static void test_two_runs_inconclusive(void **state)
{
	struct result_set *rs = result_set_new("20261130-101500-ab12", "x");
	struct comparison *c;
	int seq = 0;

	(void)state;
	strv_push(&rs->variants, "base");
	strv_push(&rs->variants, "new");
	for (int i = 0; i < 2; i++) {
		result_add_metric(add_run(rs, &seq, "base", boot_ids[i]), "w.ops", 100 + i);
		result_add_metric(add_run(rs, &seq, "new", boot_ids[2 + i]), "w.ops", 130 + i);
	}
	result_add_expect(rs, 0, "w.ops", DIR_INCREASE, 0.05, true);
	c = compare_build(rs);
	assert_int_equal(c->nverdicts, 1);
	assert_int_equal(c->verdicts[0].v, VERDICT_INCONCLUSIVE);
	assert_non_null(strstr(c->verdicts[0].why, "fewer than 3 a side"));
	print_message("2 runs a side: %s: %s\n", verdict_name(c->verdicts[0].v), c->verdicts[0].why);
	comparison_free(c);
	result_set_free(rs);
}

static const struct cmp_row *row_of(const struct comparison *c, const char *metric)
{
	for (size_t i = 0; i < c->groups[0].nrows; i++)
		if (!strcmp(c->groups[0].rows[i].metric, metric))
			return &c->groups[0].rows[i];
	return NULL;
}

/* A profile symbol only the compared kernel's runs sampled: 0 in the
 * baseline's runs (they have perf-profile.samples), tested, not inconclusive. */
static void test_sparse_profile(void **state)
{
	struct result_set *rs = result_set_new("20261130-101500-ab12", "x");
	const struct cmp_row *row;
	struct comparison *c;
	int seq = 0;

	(void)state;
	strv_push(&rs->variants, "base");
	strv_push(&rs->variants, "new");
	for (int i = 0; i < 5; i++) {
		struct result_run *r = add_run(rs, &seq, "base", boot_ids[i]);

		result_add_metric(r, "perf-profile.samples", 1000 + i);
		r = add_run(rs, &seq, "new", boot_ids[5 + i]);
		result_add_metric(r, "perf-profile.samples", 1002 + i);
		result_add_metric(r, "perf-profile.self.cycles-pp.foo", 5);
		result_add_metric(r, "perf-profile.self.cycles-pp.bar", 5);
	}
	result_add_expect(rs, 0, "perf-profile.self.cycles-pp.bar", DIR_INCREASE, 0, false);
	c = compare_build(rs);
	row = row_of(c, "perf-profile.self.cycles-pp.foo");
	assert_non_null(row);
	assert_true(row->sparse);
	assert_int_equal(row->d[1].e.runs[0], 5); /* the baseline's zeros */
	assert_true(fabs(row->d[1].e.change - 5) < 1e-12);
	assert_true(row->d[1].e.tested);
	assert_true(row->d[1].flagged);
	print_message("sparse foo 0 vs 5: change %+.2f points, p %.4f, q %.4f, flagged %d\n", row->d[1].e.change,
		      row->d[1].e.p, row->d[1].q, row->d[1].flagged);
	assert_int_equal(c->nverdicts, 1);
	assert_int_equal(c->verdicts[0].v, VERDICT_IMPROVED);
	print_message("sparse bar declared: %s: %s\n", verdict_name(c->verdicts[0].v), c->verdicts[0].why);
	comparison_free(c);
	result_set_free(rs);
}


/* ---- corners (issue 37) ---- */

/* Both means negative: a fall is a fall (-20%), and a declared decrease is
 * improved; the same data against a declared increase is regressed. */
static void test_negative_baseline(void **state)
{
	const double a[] = { -10.2, -10.5, -9.7 }, b[] = { -12.1, -11.8, -12.6 };
	struct side sa = { a, NULL, 3 }, sb = { b, NULL, 3 };
	struct effect e;
	char *why = NULL;

	(void)state;
	decide_effect(&sa, &sb, false, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
	assert_string_equal(e.method, "fieller");
	assert_true(e.change < -20 && e.change > -20.1);
	assert_true(e.lo < e.change && e.change < e.hi && e.hi < 0);
	assert_int_equal(decide_verdict(&e, DIR_DECREASE, 5, ALPHA, &why), VERDICT_IMPROVED);
	print_message("negative means, decrease:5: %s\n", why);
	assert_null(strstr(why, "wrong way"));
	free(why);
	assert_int_equal(decide_verdict(&e, DIR_INCREASE, 5, ALPHA, &why), VERDICT_REGRESSED);
	assert_non_null(strstr(why, "the wrong way"));
	free(why);
	/* no variation at all: the permutation path's change follows the sign too */
	const double c[] = { -10, -10, -10 }, d[] = { -12, -12, -12 };
	struct side sc = { c, NULL, 3 }, sd = { d, NULL, 3 };

	decide_effect(&sc, &sd, false, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
	assert_string_equal(e.method, "permutation");
	assert_true(fabs(e.change + 20) < 1e-12);
}

/* The test is scale-free: values near 1e80 or 1e-80 get the p of the same
 * values near 1 (0.033), not a NaN made into p = 1e-300; a figure past the
 * largest double is no test, with its reason. */
static void test_extreme_scale(void **state)
{
	const double a1[] = { 1, 0.95, 1.1 }, b1[] = { 1.2, 1.15, 1.3 };
	const double scales[] = { 1e80, 1e-80, 1e300, 1e-300 };
	struct side sa = { a1, NULL, 3 }, sb = { b1, NULL, 3 };
	struct effect e1, e;
	char *why = NULL;

	(void)state;
	decide_effect(&sa, &sb, true, STAT_WELCH_LOG, ALPHA, POWER, 1, &e1);
	assert_true(e1.tested && fabs(e1.p - 0.033) < 0.001);
	for (size_t k = 0; k < ELEMENTSOF(scales); k++) {
		double a[3], b[3];
		struct side xa = { a, NULL, 3 }, xb = { b, NULL, 3 };

		for (int i = 0; i < 3; i++)
			a[i] = a1[i] * scales[k], b[i] = b1[i] * scales[k];
		/* points (a _pct metric): Welch on the values */
		decide_effect(&xa, &xb, true, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
		print_message("x %g: %s p %.17g (at 1: %.17g)\n", scales[k], e.method, e.p, e1.p);
		assert_true(e.tested);
		assert_string_equal(e.method, "welch");
		assert_true(fabs(e.p - e1.p) <= 1e-12 * e1.p);
		assert_true(fabs(e.lo / scales[k] - e1.lo) <= 1e-9 * fabs(e1.lo));
		decide_verdict(&e, DIR_INCREASE, 0, ALPHA, &why);
		assert_null(strstr(why, "(null)"));
		free(why);
		/* negated: values not positive, Fieller's ratio, the same relative change */
		for (int i = 0; i < 3; i++)
			a[i] = -a[i], b[i] = -b[i];
		decide_effect(&xa, &xb, false, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
		assert_string_equal(e.method, "fieller");
		assert_true(e.tested && fabs(e.p - e1.p) <= 1e-12 * e1.p);
		assert_true(e.change < 0 && !isnan(e.lo) && !isnan(e.hi));
	}
	/* the difference of the means is past the largest double: no test */
	const double big_a[] = { -1.7e308, -1.6e308, -1.5e308 }, big_b[] = { 1.7e308, 1.6e308, 1.5e308 };
	struct side ba = { big_a, NULL, 3 }, bb = { big_b, NULL, 3 };

	decide_effect(&ba, &bb, true, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
	assert_false(e.tested);
	assert_true(isnan(e.p));
	assert_non_null(strstr(e.why, "not finite"));
	assert_int_equal(decide_verdict(&e, DIR_INCREASE, 0, ALPHA, &why), VERDICT_INCONCLUSIVE);
	print_message("past the largest double: %s\n", why);
	free(why);
}

/* Logs or values is decided on the runs: boots whose runs have mixed signs
 * but positive means are judged on values (Fieller on the boot means), not
 * on the logs of the means. */
static void test_logs_from_values(void **state)
{
	const double a[] = { 5, -1, 4, 2, 6, 0 }, b[] = { 20, 1, 30, -2, 25, 3 };
	const char *const ab[] = { "a1", "a1", "a2", "a2", "a3", "a3" }, *const bb[] = { "b1", "b1", "b2", "b2", "b3", "b3" };
	struct side sa = { a, ab, 6 }, sb = { b, bb, 6 };
	struct effect e;

	(void)state;
	decide_effect(&sa, &sb, false, STAT_WELCH_LOG, ALPHA, POWER, 1, &e);
	assert_true(e.by_boot);
	assert_string_equal(e.method, "fieller");
	/* boot means 2, 3, 3 and 10.5, 14, 14: +584.6% on values */
	assert_true(fabs(e.change - 100 * (38.5 / 3 - 8.0 / 3) / (8.0 / 3)) < 1e-9);
	print_message("mixed-sign runs, positive boot means: %s %+.2f%%\n", e.method, e.change);
}

static int cmp_dbl(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* The Hodges-Lehmann shift and interval, selected without the pairwise
 * differences, against all the differences sorted (here, by brute force),
 * on random sides with ties, negative values and unequal sizes. */
static void test_hodges_lehmann_selection(void **state)
{
	uint64_t seed = 37;

	(void)state;
	for (int round = 0; round < 200; round++) {
		size_t na = 1 + (size_t)(stats_uniform(&seed) * 60), nb = 1 + (size_t)(stats_uniform(&seed) * 70), k = 0;
		double a[64], b[72], *d = malloc(na * nb * sizeof(double)), shift;
		struct rank_test r;

		for (size_t i = 0; i < na; i++)
			a[i] = round % 3 ? stats_normal(&seed) * 10 : (double)(int)(stats_uniform(&seed) * 7) - 3;
		for (size_t j = 0; j < nb; j++)
			b[j] = round % 3 ? stats_normal(&seed) * 10 + 2 : (double)(int)(stats_uniform(&seed) * 7) - 2;
		for (size_t i = 0; i < na; i++)
			for (size_t j = 0; j < nb; j++)
				d[k++] = b[j] - a[i];
		qsort(d, k, sizeof(double), cmp_dbl);
		shift = k % 2 ? d[k / 2] : (d[k / 2 - 1] + d[k / 2]) / 2;
		stats_mann_whitney(a, na, b, nb, 0.95, &r);
		assert_true(r.shift == shift);
		if (!isnan(r.lo)) {
			/* the interval's ends are order statistics c and k - 1 - c (for
			 * some c among the ties of the lower end) */
			bool found = false;

			for (size_t c = 0; c < k; c++)
				found |= d[c] == r.lo && d[k - 1 - c] == r.hi;
			assert_true(found);
			assert_true(r.lo <= r.shift && r.shift <= r.hi);
		}
		free(d);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_welch_fieller),
		cmocka_unit_test(test_reference_mann_whitney),
		cmocka_unit_test(test_reference_permutation),
		cmocka_unit_test(test_reference_bh),
		cmocka_unit_test(test_reference_variance_parts),
		cmocka_unit_test(test_aa_fixed),
		cmocka_unit_test(test_check_error_rates),
		cmocka_unit_test(test_aa_sequential),
		cmocka_unit_test(test_equivalence_error),
		cmocka_unit_test(test_fdr),
		cmocka_unit_test(test_power),
		cmocka_unit_test(test_no_variance),
		cmocka_unit_test(test_two_runs_inconclusive),
		cmocka_unit_test(test_sparse_profile),
		cmocka_unit_test(test_negative_baseline),
		cmocka_unit_test(test_extreme_scale),
		cmocka_unit_test(test_logs_from_values),
		cmocka_unit_test(test_hodges_lehmann_selection),
	};

	return cmocka_run_group_tests(tests, load_refs, free_refs);
}
