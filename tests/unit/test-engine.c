/* SPDX-License-Identifier: MIT */
/* The run engine without a VM: the fixed policy's order and its end, a
 * policy that adds a repeat, the boots' bookkeeping (boot id, place, guest),
 * the worker lines' JSON round trip with hostile strings, a group served
 * by a real worker process over the pool's two channels, and the
 * catalogue archive. */
#include <archive.h>
#include <archive_entry.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "unit.h"
#include "engine/catalogue-tar.h"
#include "engine/engine-priv.h"
#include "engine/pool.h"
#include "engine/series.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"

/* Four runs of experiment "exp": base and patched, two repeats each, one group in the plan's order. */
struct fixture {
	struct result_set *rs;
	struct plan_run pr[4];
	struct plan plan;
	struct run_group g;
	size_t order[4];
	struct engine x;
};

static void fixture_init(struct fixture *f)
{
	static const char *const ids[] = { "exp.0001", "exp.0002", "exp.0003", "exp.0004" };
	static const char *const variants[] = { "base", "patched", "base", "patched" };

	memset(f, 0, sizeof(*f));
	f->rs = result_set_new("20260101-000000-abcd", "exp");
	for (size_t i = 0; i < 4; i++) {
		result_add_run(f->rs, ids[i], variants[i], "stress-ng", 0, (unsigned)(i / 2 + 1));
		f->pr[i] = (struct plan_run){ .id = (char *)ids[i], .experiment = "exp", .kernel = (char *)variants[i],
					      .topology = "small", .host = "local", .workload = "stress-ng",
					      .repeat = (unsigned)(i / 2 + 1) };
		f->order[i] = i;
	}
	f->plan = (struct plan){ .runs = f->pr, .n = 4 };
	f->g = (struct run_group){ .runs = f->order, .n = 4 };
	f->x.rs = f->rs;
	f->x.p = &f->plan;
	f->x.groups = &f->g;
	f->x.ngroups = 1;
}

static void fixture_release(struct fixture *f)
{
	if (f->g.runs != f->order)
		free(f->g.runs);
	/* the groups are the fixture's, not the engine's */
	f->x.groups = NULL;
	f->x.ngroups = 0;
	engine_release(&f->x);
	result_set_free(f->rs);
}

static void test_fixed_order(void **state)
{
	struct fixture f;
	size_t i, got[8], n = 0;

	(void)state;
	fixture_init(&f);
	/* the plan's order, not the variants' */
	f.order[0] = 2;
	f.order[2] = 0;
	engine_sched_init(&f.x);
	assert_ptr_equal(f.x.policy.ops, &run_policy_fixed_ops);
	while (n < 8 && engine_next(&f.x, 0, &i) == 0) {
		got[n++] = i;
		/* a run handed out is not handed out again, ended or not */
		if (n != 2)
			f.rs->runs[i].status = RUN_OK;
	}
	assert_int_equal(n, 4);
	assert_int_equal(got[0], 2);
	assert_int_equal(got[1], 1);
	assert_int_equal(got[2], 0);
	assert_int_equal(got[3], 3);
	assert_true(run_policy_fixed_ops.group_done(NULL,
						    &(struct engine_view){ .rs = f.rs, .groups = &f.g, .ngroups = 1,
									   .issued = f.x.issued },
						    0));
	assert_int_equal(f.rs->n, 4);
	fixture_release(&f);
}

static void test_fixed_skips_ended(void **state)
{
	struct fixture f;
	size_t i;

	(void)state;
	fixture_init(&f);
	/* a resumed run: what ended stays ended */
	f.rs->runs[0].status = RUN_OK;
	f.rs->runs[1].status = RUN_FAILED;
	engine_sched_init(&f.x);
	assert_int_equal(engine_next(&f.x, 0, &i), 0);
	assert_int_equal(i, 2);
	assert_int_equal(engine_next(&f.x, 0, &i), 0);
	assert_int_equal(i, 3);
	assert_int_equal(engine_next(&f.x, 0, &i), 1);
	fixture_release(&f);
}

/* A policy that wants one more repeat of the group's first run once the plan is done. */
static bool more_done(void *data, const struct engine_view *v, size_t group)
{
	(void)v;
	(void)group;
	return *(int *)data == 0;
}

static void more_next(void *data, const struct engine_view *v, size_t group, struct run_choice *ret)
{
	int *left = data;

	(void)v;
	(void)group;
	(*left)--;
	*ret = (struct run_choice){ .kind = CHOICE_REPEAT, .like = 0 };
}

static void test_policy_adds_a_repeat(void **state)
{
	static const struct run_policy_ops ops = { .name = "more", .group_done = more_done, .next = more_next };
	struct fixture f;
	int left = 1;
	size_t i;
	const struct plan_run *pr;

	(void)state;
	fixture_init(&f);
	f.x.policy = (struct run_policy){ .ops = &ops, .data = &left };
	engine_sched_init(&f.x);
	/* the group's runs must be growable: the engine's own array */
	{
		size_t *runs = xcalloc(4, sizeof(size_t));

		memcpy(runs, f.order, sizeof(f.order));
		f.g.runs = runs;
		f.g.alloc = 4;
	}
	assert_int_equal(engine_next(&f.x, 0, &i), 0);
	assert_int_equal(i, 4);
	assert_string_equal(f.rs->runs[4].id, "exp.0005");
	assert_string_equal(f.rs->runs[4].variant, "base");
	assert_int_equal(f.rs->runs[4].repeat, 3);
	assert_int_equal(f.rs->runs[4].status, RUN_PENDING);
	assert_true(f.x.issued[4]);
	assert_int_equal(f.g.n, 5);
	assert_int_equal(f.g.runs[4], 4);
	assert_int_equal(f.x.prog.total, 1);
	pr = engine_plan_run(&f.x, "exp.0005");
	assert_non_null(pr);
	assert_int_equal(pr->repeat, 3);
	assert_string_equal(pr->kernel, "base");
	assert_int_equal(engine_next(&f.x, 0, &i), 1);
	fixture_release(&f);
}

/*
 * The sequential policy on a plan of 4 boots x 2 runs a variant (boot:
 * once, groups A1 B1 B2 A2 A3 B3 B4 A4): runs are "measured" as they are
 * handed out, each group in order on its own boot.
 */
struct seqfix {
	struct result_set *rs;
	struct plan plan;
	struct plan_run pr[24];
	char ids[24][32];
	struct spec_experiment e;
	struct engine x;
	struct seq_policy sp;
	const double *ratios; /* per variant, NULL: base 100, the other 100 * ratio */
};

static const char *const two_kernels[] = { "base", "patched" };

/* nv kernels (the first the baseline), A B C in odd boots, C B A in even ones. */
static void seqfix_init_kernels(struct seqfix *f, unsigned max_runs, const char *const *kernels, size_t nv)
{
	memset(f, 0, sizeof(*f));
	f->rs = result_set_new("20260101-000000-abcd", "exp");
	f->rs->decide.sequential = true;
	f->rs->decide.min_boots = 2;
	f->rs->decide.max_boots = 4;
	for (size_t v = 0; v < nv; v++)
		strv_push(&f->rs->variants, kernels[v]);
	result_add_expect(f->rs, 0, "m", DIR_INCREASE, 0.05, true);
	for (size_t i = 0; i < 8 * nv; i++) {
		unsigned rep = (unsigned)(i / nv + 1), boot = (rep - 1) / 2 + 1;
		const char *v = kernels[boot % 2 == 1 ? i % nv : nv - 1 - i % nv];

		snprintf(f->ids[i], sizeof(f->ids[i]), "exp.%04zu", i + 1);
		result_add_run(f->rs, f->ids[i], v, "w", 0, rep);
		f->pr[i] = (struct plan_run){ .id = f->ids[i], .experiment = "exp", .kernel = (char *)v,
					      .topology = "t", .host = "local", .workload = "w", .repeat = rep,
					      .boot = boot };
	}
	f->plan = (struct plan){ .runs = f->pr, .n = 8 * nv };
	f->e.boot = BOOT_ONCE;
	f->x.e = &f->e;
	f->x.rs = f->rs;
	f->x.p = &f->plan;
	f->sp = (struct seq_policy){ .min_boots = 2, .max_runs = max_runs };
	f->x.policy = (struct run_policy){ .ops = &run_policy_sequential_ops, .data = &f->sp };
	engine_sched_init(&f->x);
	engine_make_groups(&f->x);
}

static void seqfix_init(struct seqfix *f, unsigned max_runs)
{
	seqfix_init_kernels(f, max_runs, two_kernels, 2);
}

/* Serves every group in order: base about 100, patched 100 * ratio, runs +- spread and each
 * boot 0.3 spread higher than the one before; how many groups ran. */
static size_t seqfix_serve_shift(struct seqfix *f, double ratio, double spread, double shift, size_t *ret_runs)
{
	size_t ran = 0, runs = 0;

	for (size_t g = 0; g < f->x.ngroups; g++) {
		_cleanup_free_ char *boot = xasprintf("exp.b%zu", g + 1);
		size_t i, k = 0;

		while (engine_next(&f->x, g, &i) == 0) {
			struct result_run *r = &f->rs->runs[i];
			double noise = spread * ((k++ % 2 ? 1.0 : -1.0) + 0.3 * (double)g) + shift * (double)g;

			r->status = RUN_OK;
			r->boot = xstrdup(boot);
			double mean = f->ratios ? 100 * f->ratios[strv_index(&f->rs->variants, r->variant)]
						: streq(r->variant, "base") ? 100 : 100 * ratio;

			result_add_metric(r, "m", mean + noise);
		}
		ran += k > 0;
		runs += k;
	}
	if (ret_runs)
		*ret_runs = runs;
	return ran;
}

static size_t seqfix_serve(struct seqfix *f, double ratio, double spread)
{
	return seqfix_serve_shift(f, ratio, spread, 0, NULL);
}

static void seqfix_release(struct seqfix *f)
{
	seq_policy_release(&f->sp);
	engine_release(&f->x);
	result_set_free(f->rs);
}

/* Serves group g: base and patched both 100, +-50 run to run (nothing decides). */
static void seqfix_serve_group(struct seqfix *f, size_t g)
{
	size_t i, k = 0;

	while (engine_next(&f->x, g, &i) == 0) {
		struct result_run *r = &f->rs->runs[i];

		r->status = RUN_OK;
		r->boot = xasprintf("exp.b%zu", g + 1);
		result_add_metric(r, "m", 100 + (k++ % 2 ? 50 : -50));
	}
}

static double clock_zero(void)
{
	return 0;
}

/* The progress counts the runs to the next look (before boot 3, then 4);
 * none once every boot has started. */
static void test_progress_to_the_next_look(void **state)
{
	struct seqfix f;
	size_t g3 = SIZE_MAX, g4 = SIZE_MAX, i;

	(void)state;
	seqfix_init(&f, 0);
	f.sp.deadline = 5000;
	f.sp.clock = clock_zero;
	engine_progress_looks(&f.x);
	assert_int_equal(f.x.prog.to_look, 8); /* boots 1 and 2 of both kernels */
	for (size_t g = 0; g < f.x.ngroups; g++) {
		if (f.x.groups[g].boot <= 2) {
			seqfix_serve_group(&f, g);
			engine_progress_looks(&f.x);
		}
		if (f.x.groups[g].boot == 3 && g3 == SIZE_MAX)
			g3 = g;
		if (f.x.groups[g].boot == 4 && g4 == SIZE_MAX)
			g4 = g;
	}
	assert_true(g3 != SIZE_MAX && g4 != SIZE_MAX);
	assert_int_equal(f.x.prog.to_look, 0); /* the look before boot 3 is next */
	assert_int_equal(engine_next(&f.x, g3, &i), 0); /* it looked, undecided: boot 3 starts */
	assert_int_equal(f.sp.looks, 1);
	assert_int_equal(f.x.prog.to_look, 4); /* boot 3's runs, the one issued still running */
	for (size_t g = 0; g < f.x.ngroups; g++)
		if (f.x.groups[g].boot == 3)
			seqfix_serve_group(&f, g);
	assert_int_equal(engine_next(&f.x, g4, &i), 0);
	assert_int_equal(f.x.prog.to_look, -1); /* the last boot started: no look ahead */
	seqfix_release(&f);
}

/* What the progress line says of the time left. */
static void test_progress_eta(void **state)
{
	struct {
		struct engine_progress p;
		double now;
		const char *want;
	} cases[] = {
		{ { .done = 10, .total = 40, .to_look = -1 }, 0, "1m40s, ETA 5m00s" },
		{ { .done = 10, .total = 40, .to_look = 6 }, 0, "1m40s, next look in 1m00s, budget ends in 5m00s" },
		{ { .done = 10, .total = 40, .to_look = 6, .budget_end = 220 }, 100, "1m40s, next look in 1m00s, budget ends in 2m00s" },
		{ { .done = 10, .total = 40, .to_look = 0, .budget_end = 90 }, 100, "1m40s, budget ends in 0s" },
		{ { .done = 10, .total = 400, .to_look = -1, .budget_end = 99999 }, 0, "1m40s, budget ends in 1h05m" },
		{ { .done = 0, .total = 40, .to_look = 6 }, 0, "1m40s" },
		{ { .done = 40, .total = 40, .to_look = -1 }, 0, "1m40s" },
	};

	(void)state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		engine_format_time(&cases[k].p, 100, cases[k].now, &sb);
		assert_string_equal(sb.buf ? sb.buf : "", cases[k].want);
	}
}

static void test_sequential_stops_when_decided(void **state)
{
	struct seqfix f;

	(void)state;
	seqfix_init(&f, 0);
	assert_int_equal(f.x.ngroups, 8);
	/* the plan's A1 B1 B2 A2 ...: groups follow it */
	assert_int_equal(f.x.groups[0].boot, 1);
	assert_int_equal(f.x.groups[2].boot, 2);
	assert_string_equal(f.rs->runs[f.x.groups[2].runs[0]].variant, "patched");
	/* +50%: decided after the 2 boots every experiment gets */
	assert_int_equal(seqfix_serve(&f, 1.5, 1), 4);
	assert_int_equal(f.sp.stop, SEQ_DECIDED);
	assert_int_equal(f.sp.stop_boot, 3);
	assert_int_equal(f.sp.looks, 1);
	seqfix_release(&f);
}

static double late_clock(void)
{
	return 1000;
}

static void test_sequential_runs_the_budget(void **state)
{
	struct seqfix f;

	(void)state;
	/* no change with ±1% noise: equivalent within ±5% once 3 boots a side tighten the interval */
	seqfix_init(&f, 0);
	assert_int_equal(seqfix_serve(&f, 1.0, 1), 6);
	assert_int_equal(f.sp.stop, SEQ_DECIDED);
	assert_int_equal(f.sp.stop_boot, 4);
	assert_int_equal(f.sp.looks, 2);
	seqfix_release(&f);
	/* no change with ±30% noise: undecided, every boot runs */
	seqfix_init(&f, 0);
	assert_int_equal(seqfix_serve(&f, 1.0, 30), 8);
	assert_int_equal(f.sp.stop, SEQ_RUNNING);
	assert_int_equal(f.sp.looks, 2);
	seqfix_release(&f);
	/* the budget's time: past the deadline before boot 3 */
	seqfix_init(&f, 0);
	f.sp.deadline = 100;
	f.sp.clock = late_clock;
	assert_int_equal(seqfix_serve(&f, 1.0, 30), 4);
	assert_int_equal(f.sp.stop, SEQ_BUDGET_TIME);
	assert_int_equal(f.sp.stop_boot, 3);
	seqfix_release(&f);
	/* the budget's runs: 4 a variant are 2 boots */
	seqfix_init(&f, 4);
	assert_int_equal(seqfix_serve(&f, 1.0, 30), 4);
	assert_int_equal(f.sp.stop, SEQ_BUDGET_RUNS);
	assert_int_equal(f.sp.stop_boot, 3);
	seqfix_release(&f);
}

/* Boots whose means differ far more than their runs do: after the first look each later boot
 * runs each variant once, and the runs it passes over are marked for leaving the run. */
static void test_sequential_prefers_boots(void **state)
{
	struct seqfix f;
	size_t runs = 0, skipped = 0;

	(void)state;
	seqfix_init(&f, 0);
	assert_int_equal(seqfix_serve_shift(&f, 1.0, 0.1, 10, &runs), 8);
	assert_int_equal(f.sp.one_run_a_boot, 1);
	assert_int_equal(f.sp.cut_from, 3);
	assert_int_equal(runs, 2 * 2 * 2 + 2 * 1 * 2);
	for (size_t i = 0; i < f.rs->n; i++)
		skipped += seq_policy_skipped(&f.sp, i);
	assert_int_equal(skipped, 4);
	seqfix_release(&f);
}

/*
 * A sweep base -> p@1 -> p@2 (400, 1200, 1240; runs +-5, boots drifting):
 * both verdicts against the baseline (+200%, +210%) are decided after 2
 * boots, the step @1->@2 (+3.3%) is neither a change nor inside ±5% yet:
 * with the series recorded the policy goes on for it and says which step;
 * without, it stops as before.
 */
static void test_sequential_goes_on_for_a_step(void **state)
{
	static const char *const kernels[] = { "base", "p@1", "p@2" };
	static const double ratios[] = { 4.0, 12.0, 12.4 };
	struct seqfix f;
	struct result_series *x;

	(void)state;
	seqfix_init_kernels(&f, 0, kernels, 3);
	f.ratios = ratios;
	assert_int_equal(seqfix_serve(&f, 0, 5), 6);
	assert_int_equal(f.sp.stop, SEQ_DECIDED);
	assert_int_equal(f.sp.stop_boot, 3);
	assert_null(f.sp.kept_by);
	seqfix_release(&f);

	seqfix_init_kernels(&f, 0, kernels, 3);
	f.ratios = ratios;
	x = result_add_series(f.rs, "p");
	for (size_t v = 0; v < 3; v++)
		result_series_add_step(x, kernels[v], (unsigned)v);
	assert_int_equal(seqfix_serve(&f, 0, 5), 9);
	assert_int_equal(f.sp.stop, SEQ_DECIDED);
	assert_int_equal(f.sp.stop_boot, 4);
	assert_int_equal(f.sp.looks, 2);
	assert_non_null(f.sp.kept_by);
	assert_string_equal(f.sp.kept_by, "m [w] undecided at step @1->@2 of p");
	assert_int_equal(f.sp.kept_by_look, 1);
	assert_true(f.sp.kept_by_series_only);
	seqfix_release(&f);
}

/*
 * The series a run records: an experiment listing a swept kernel (its
 * steps expanded) or some of its steps, with and without its `from`; the
 * subjects are the real patch files' (run from the source tree).
 */
static void test_series_recorded(void **state)
{
	static const char yaml[] =
		"version: 1\n"
		"kernels:\n"
		"  base: {}\n"
		"  pcp: {from: base, sweep: [1, 3], patches: [\n"
		"    kernels/patches/mm-pcp-high-auto-tuning/0001-mm-pcp-avoid-to-drain-PCP-when-process-exit.patch,\n"
		"    kernels/patches/mm-pcp-high-auto-tuning/0002-cacheinfo-calculate-size-of-per-CPU-data-cache-slice.patch,\n"
		"    kernels/patches/mm-pcp-high-auto-tuning/0003-mm-pcp-reduce-lock-contention-for-draining-high-orde.patch]}\n"
		"  other: {from: base, patches: [x.patch]}\n"
		"topologies: {t: {memory: 1G}}\n"
		"images: {i: {recipe: r}}\n"
		"experiments:\n"
		"  e: {kernels: [base, pcp], topology: t, image: i, repeat: 1, workloads: [w]}\n";
	static const struct spec_load_opts memonly = { .no_include = true, .no_filesystem = true };
	struct diags d = { 0 };
	struct spec *s = NULL;
	struct result_set *rs;

	(void)state;
	assert_int_equal(spec_load_buffer("t.yaml", yaml, strlen(yaml), &memonly, &s, &d), 0);
	/* base, pcp@1, pcp@3: the chain from base, patches 1-3 with their subjects */
	rs = result_set_new("20260101-000000-abcd", "e");
	strv_push(&rs->variants, "base");
	strv_push(&rs->variants, "pcp@1");
	strv_push(&rs->variants, "pcp@3");
	strv_push(&rs->variants, "other");
	run_series_record(rs, s);
	assert_int_equal(rs->nseries, 1);
	assert_string_equal(rs->series[0].kernel, "pcp");
	assert_int_equal(rs->series[0].chain.n, 3);
	assert_string_equal(rs->series[0].chain.v[0], "base");
	assert_string_equal(rs->series[0].chain.v[2], "pcp@3");
	assert_int_equal(rs->series[0].steps[0], 0);
	assert_int_equal(rs->series[0].steps[2], 3);
	assert_int_equal(rs->series[0].npatches, 3);
	assert_string_equal(result_series_subject(&rs->series[0], 1),
			    "mm, pcp: avoid to drain PCP when process exit");
	assert_string_equal(result_series_subject(&rs->series[0], 3),
			    "mm, pcp: reduce lock contention for draining high-order pages");
	result_set_free(rs);
	/* steps listed without the from, in another order: the sweep's order, patches up to the last */
	rs = result_set_new("20260101-000000-abcd", "e");
	strv_push(&rs->variants, "pcp@3");
	strv_push(&rs->variants, "pcp@1");
	run_series_record(rs, s);
	assert_int_equal(rs->nseries, 1);
	assert_string_equal(rs->series[0].chain.v[0], "pcp@1");
	assert_int_equal(rs->series[0].steps[0], 1);
	assert_int_equal(rs->series[0].npatches, 3);
	result_set_free(rs);
	/* one step alone orders nothing */
	rs = result_set_new("20260101-000000-abcd", "e");
	strv_push(&rs->variants, "other");
	strv_push(&rs->variants, "pcp@3");
	run_series_record(rs, s);
	assert_int_equal(rs->nseries, 0);
	result_set_free(rs);
	spec_free(s);
	diags_release(&d);
}

static void test_boots(void **state)
{
	struct fixture f;
	struct boot *b;

	(void)state;
	fixture_init(&f);
	engine_sched_init(&f.x);
	b = engine_boot_begin(&f.x, "run-100", "base");
	assert_string_equal(b->id, "exp.b1");
	engine_boot_run(&f.x, 0, "run-100");
	b = engine_boot_begin(&f.x, "run-200", "patched");
	assert_string_equal(b->id, "exp.b2");
	engine_boot_run(&f.x, 1, "run-200");
	engine_boot_run(&f.x, 2, "run-100");
	/* a run that never reached a guest */
	engine_boot_run(&f.x, 3, NULL);
	assert_string_equal(f.rs->runs[0].boot, "exp.b1");
	assert_int_equal(f.rs->runs[0].boot_pos, 1);
	assert_string_equal(f.rs->runs[0].guest, "run-100");
	assert_string_equal(f.rs->runs[1].boot, "exp.b2");
	assert_int_equal(f.rs->runs[1].boot_pos, 1);
	assert_string_equal(f.rs->runs[1].guest, "run-200");
	assert_string_equal(f.rs->runs[2].boot, "exp.b1");
	assert_int_equal(f.rs->runs[2].boot_pos, 2);
	assert_null(f.rs->runs[3].boot);
	assert_int_equal(f.rs->runs[3].boot_pos, 0);
	assert_null(f.rs->runs[3].guest);
	/* the guest booted again: its next run is the new boot's first */
	engine_boot_begin(&f.x, "run-100", "base");
	engine_boot_run(&f.x, 3, "run-100");
	assert_string_equal(f.rs->runs[3].boot, "exp.b3");
	assert_int_equal(f.rs->runs[3].boot_pos, 1);
	assert_int_equal(f.x.nboots, 3);
	assert_int_equal(f.x.boots[0].n, 2);
	assert_int_equal(f.x.boots[0].runs[1], 2);
	fixture_release(&f);
}

static void test_boots_resumed(void **state)
{
	struct fixture f;

	(void)state;
	fixture_init(&f);
	/* a stored run's boots: numbering goes on after the last */
	f.rs->runs[0].boot = xstrdup("exp.b7");
	f.rs->runs[1].boot = xstrdup("exp.b12");
	f.rs->runs[2].boot = xstrdup("other.b99");
	engine_sched_init(&f.x);
	assert_string_equal(engine_boot_begin(&f.x, "run-1", "base")->id, "exp.b13");
	fixture_release(&f);
}

static void roundtrip(const struct wire_msg *m, struct wire_msg *back)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;

	wire_format(m, &sb);
	/* one line, whatever the strings hold */
	assert_null(strchr(sb.buf, '\n'));
	assert_null(strchr(sb.buf, '\t'));
	if (wire_parse(sb.buf, back, &err) < 0)
		fail_msg("%s: %s", sb.buf, err);
	assert_int_equal(back->type, m->type);
}

static void test_wire_roundtrip(void **state)
{
	const char *hostile = "tab\there\nnew line \"quoted\" back\\slash \x01 ctl \xc3\xa9 ok";
	struct wire_msg back = { 0 };

	(void)state;
	roundtrip(&(struct wire_msg){ .type = WIRE_STEP, .run = (char *)"exp.0001", .what = (char *)hostile }, &back);
	assert_string_equal(back.run, "exp.0001");
	assert_string_equal(back.what, hostile);
	wire_msg_release(&back);

	roundtrip(&(struct wire_msg){ .type = WIRE_DONE, .run = (char *)"exp.0002", .ok = false,
				      .error = (char *)hostile, .guest = (char *)"run-42" },
		  &back);
	assert_false(back.ok);
	assert_string_equal(back.error, hostile);
	assert_null(back.release);
	assert_string_equal(back.guest, "run-42");
	wire_msg_release(&back);

	/* bytes that are not UTF-8 arrive as U+FFFD, the rest intact */
	roundtrip(&(struct wire_msg){ .type = WIRE_DONE, .run = (char *)"exp.0003", .ok = true,
				      .release = (char *)"6.1.0-lab", .error = (char *)"a\xff" "b\xc3(" },
		  &back);
	assert_true(back.ok);
	assert_string_equal(back.release, "6.1.0-lab");
	assert_string_equal(back.error, "a\xef\xbf\xbd" "b\xef\xbf\xbd(");
	assert_null(back.guest);
	wire_msg_release(&back);

	roundtrip(&(struct wire_msg){ .type = WIRE_BOOT, .guest = (char *)"run-1-0", .variant = (char *)"base" }, &back);
	assert_string_equal(back.guest, "run-1-0");
	assert_string_equal(back.variant, "base");
	wire_msg_release(&back);

	roundtrip(&(struct wire_msg){ .type = WIRE_RUN, .run = (char *)"exp.0009", .like = (char *)"exp.0001",
				      .repeat = 4 },
		  &back);
	assert_string_equal(back.like, "exp.0001");
	assert_int_equal(back.repeat, 4);
	wire_msg_release(&back);

	roundtrip(&(struct wire_msg){ .type = WIRE_NEXT }, &back);
	wire_msg_release(&back);
	roundtrip(&(struct wire_msg){ .type = WIRE_STOP }, &back);
	wire_msg_release(&back);
}

static void test_wire_refuses(void **state)
{
	static const char *const bad[] = {
		"step\t0\tboot",                              /* the old TSV */
		"",                                           /* nothing */
		"[1]",                                        /* not an object */
		"{\"type\":\"reboot\"}",                      /* unknown type */
		"{\"type\":\"step\",\"run\":\"x\"}",          /* no what */
		"{\"type\":\"done\",\"run\":\"x\",\"status\":\"maybe\"}",
		"{\"type\":\"done\",\"run\":7,\"status\":\"ok\"}",
		"{\"type\":\"run\",\"run\":\"x\",\"like\":\"y\",\"repeat\":-1}",
		"{\"type\":\"step\",\"type\":\"done\"}",      /* a key twice */
		"{\"type\":\"step\",\"run\":\"\xff\",\"what\":\"x\"}", /* not UTF-8 */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct wire_msg m = { 0 };
		char *err = NULL;

		if (wire_parse(bad[i], &m, &err) == 0)
			fail_msg("accepted: %s", bad[i]);
		assert_non_null(err);
		free(err);
	}
}

/* A stand-in worker: the runs handed out, each on a guest booted per run, reported failed. */
static int fake_work(void *userdata, size_t task, unsigned slot, int fd)
{
	_cleanup_strbuf_ struct strbuf line = STRBUF_INIT, out = STRBUF_INIT;
	static const char *const guests[] = { "guest-1", "guest-2", "guest-2", "guest-3" };
	static const bool boots[] = { true, true, false, true };
	size_t k = 0;

	(void)userdata;
	(void)task;
	(void)slot;
	for (;;) {
		struct wire_msg m = { 0 };
		char *err = NULL, *guest;
		bool booted;

		strbuf_reset(&out);
		wire_format(&(struct wire_msg){ .type = WIRE_NEXT }, &out);
		pool_send(fd, "%s", out.buf);
		if (pool_recv(&line) < 0 || wire_parse(line.buf, &m, &err) < 0 || m.type != WIRE_RUN) {
			free(err);
			wire_msg_release(&m);
			return 0;
		}
		guest = xstrdup(guests[k % 4]);
		booted = boots[k++ % 4];
		if (booted) {
			strbuf_reset(&out);
			wire_format(&(struct wire_msg){ .type = WIRE_BOOT, .guest = guest, .variant = (char *)"base" },
				    &out);
			pool_send(fd, "%s", out.buf);
		}
		strbuf_reset(&out);
		wire_format(&(struct wire_msg){ .type = WIRE_DONE, .run = m.run, .error = (char *)"no\tguest\nhere",
						.guest = guest },
			    &out);
		pool_send(fd, "%s", out.buf);
		free(guest);
		wire_msg_release(&m);
	}
}

static void fake_message(void *userdata, size_t task, unsigned slot, const char *line)
{
	engine_message(userdata, task, slot, line);
}

static void count_event(void *userdata, const struct engine_event *ev)
{
	if (ev->type == ENGINE_EV_RUN_DONE)
		++*(int *)userdata;
}

static void test_worker_over_the_pool(void **state)
{
	char tmpl[] = "/tmp/lab-engine-XXXXXX";
	char *root = mkdtemp(tmpl), *id = NULL;
	_cleanup_free_ char *dir = NULL;
	struct diags d = { 0 };
	struct fixture f;
	int done = 0;
	struct engine_opts o = { .event = count_event, .userdata = &done };
	struct pool_ops ops = { .work = fake_work, .message = fake_message, .userdata = &f.x };

	(void)state;
	assert_non_null(root);
	fixture_init(&f);
	assert_int_equal(store_create(root, &id, &d), 0);
	dir = path_join(root, id);
	o.root = root;
	f.x.o = &o;
	f.x.dir = dir;
	engine_sched_init(&f.x);
	assert_int_equal(pool_run(1, 1, &ops, &d), 0);
	assert_int_equal(done, 4);
	for (size_t i = 0; i < 4; i++) {
		const struct result_run *r = &f.rs->runs[i];

		assert_int_equal(r->status, RUN_FAILED);
		/* as the journal keeps it: one line */
		assert_string_equal(r->error, "no guest here");
		assert_string_equal(r->guest, i < 1 ? "guest-1" : i < 3 ? "guest-2" : "guest-3");
	}
	/* boots: guest-1 (run 1), guest-2 (runs 2, 3), guest-3 (run 4) */
	assert_string_equal(f.rs->runs[0].boot, "exp.b1");
	assert_string_equal(f.rs->runs[1].boot, "exp.b2");
	assert_int_equal(f.rs->runs[1].boot_pos, 1);
	assert_string_equal(f.rs->runs[2].boot, "exp.b2");
	assert_int_equal(f.rs->runs[2].boot_pos, 2);
	assert_string_equal(f.rs->runs[3].boot, "exp.b3");
	fixture_release(&f);
	free(id);
	diags_release(&d);
	fs_remove_tree(root);
}

static void test_catalogue_archive(void **state)
{
	char tmpl[] = "/tmp/lab-cat-XXXXXX";
	char *root = mkdtemp(tmpl);
	_cleanup_free_ char *cat = path_join(root, "cat"), *elsewhere = path_join(root, "elsewhere");
	_cleanup_free_ char *tarp = path_join(root, "w.tar"), *p = NULL;
	_cleanup_strbuf_ struct strbuf names = STRBUF_INIT;
	struct diags d = { 0 };
	struct archive *a;
	struct archive_entry *e;

	(void)state;
	assert_non_null(root);
	p = xasprintf("%s/wl/__pycache__", cat);
	assert_int_equal(path_mkdir_p(p, 0755), 0);
	free(p);
	p = xasprintf("%s/wl/__pycache__/x.pyc", cat);
	fs_write_atomic(p, "junk", 4, 0644);
	free(p);
	p = xasprintf("%s/wl/run", cat);
	fs_write_atomic(p, "#!/bin/sh\n", 10, 0755);
	free(p);
	assert_int_equal(path_mkdir_p(elsewhere, 0755), 0);
	p = path_join(elsewhere, "parse");
	fs_write_atomic(p, "echo m 1\n", 9, 0755);
	free(p);
	p = path_join(cat, "linked");
	assert_int_equal(symlink(elsewhere, p), 0);
	assert_int_equal(catalogue_archive(cat, tarp, &d), 0);

	a = archive_read_new();
	archive_read_support_format_all(a);
	assert_int_equal(archive_read_open_filename(a, tarp, 10240), ARCHIVE_OK);
	while (archive_read_next_header(a, &e) == ARCHIVE_OK) {
		strbuf_addf(&names, "%s %c\n", archive_entry_pathname(e),
			    archive_entry_filetype(e) == AE_IFDIR ? 'd' : archive_entry_filetype(e) == AE_IFREG ? 'f' : '?');
		if (streq(archive_entry_pathname(e), "./linked/parse")) {
			char buf[32] = { 0 };

			assert_int_equal(archive_read_data(a, buf, sizeof(buf) - 1), 9);
			assert_string_equal(buf, "echo m 1\n");
		}
	}
	archive_read_free(a);
	/* named as `tar -C cat -cf - .` names them; the link's target's contents; no __pycache__ */
	assert_non_null(strstr(names.buf, "./linked/parse f\n"));
	assert_non_null(strstr(names.buf, "./linked/ d\n"));
	assert_non_null(strstr(names.buf, "./wl/run f\n"));
	assert_int_equal(strncmp(names.buf, "./ d\n", 5), 0);
	assert_null(strstr(names.buf, "pycache"));
	assert_null(strstr(names.buf, root));
	diags_release(&d);
	fs_remove_tree(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixed_order),
		cmocka_unit_test(test_fixed_skips_ended),
		cmocka_unit_test(test_policy_adds_a_repeat),
		cmocka_unit_test(test_progress_to_the_next_look),
		cmocka_unit_test(test_progress_eta),
		cmocka_unit_test(test_sequential_stops_when_decided),
		cmocka_unit_test(test_sequential_runs_the_budget),
		cmocka_unit_test(test_sequential_prefers_boots),
		cmocka_unit_test(test_sequential_goes_on_for_a_step),
		cmocka_unit_test(test_series_recorded),
		cmocka_unit_test(test_boots),
		cmocka_unit_test(test_boots_resumed),
		cmocka_unit_test(test_wire_roundtrip),
		cmocka_unit_test(test_wire_refuses),
		cmocka_unit_test(test_worker_over_the_pool),
		cmocka_unit_test(test_catalogue_archive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
