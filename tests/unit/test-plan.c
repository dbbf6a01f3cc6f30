/* SPDX-License-Identifier: MIT */
/* Plan expansion: matrix order, interleaving, sweeps, hosts, selection. */
#include "unit.h"
#include <errno.h>
#include <stdlib.h>
#include "plan/plan.h"
#include "util/alloc.h"

static const struct spec_load_opts memonly = { .no_include = true, .no_filesystem = true };

static const char *const yaml =
	"version: 1\n"
	"kernels:\n"
	"  base: {}\n"
	"  p: {from: base, patches: d, sweep: [1, 3]}\n"
	"  q: {from: base, patches: d}\n"
	"topologies: {t: {memory: 1G}}\n"
	"images: {i: {recipe: r}}\n"
	"hosts: {h1: {uri: \"qemu:///a\"}, h2: {uri: \"qemu:///b\"}}\n"
	"experiments:\n"
	"  e1:\n"
	"    kernels: [base, p]\n"
	"    topology: t\n"
	"    image: i\n"
	"    hosts: [h1, h2]\n"
	"    repeat: 2\n"
	"    monitors: [m1]\n"
	"    workloads:\n"
	"      - workload: w\n"
	"        params: {a: [1, 2], b: [x, y], c: z}\n"
	"        monitors: [m2, m1]\n"
	"  e2:\n"
	"    kernels: [base]\n"
	"    topology: t\n"
	"    image: i\n"
	"    repeat: 1\n"
	"    workloads: [w2]\n"
	"  e3:\n"
	"    kernels: [base, q]\n"
	"    topology: t\n"
	"    image: i\n"
	"    boot: once\n"
	"    repeat: 3\n"
	"    workloads: [w2]\n"
	"  e4:\n"
	"    kernels: [base, q]\n"
	"    topology: t\n"
	"    image: i\n"
	"    boot: once\n"
	"    repeat: auto\n"
	"    decide: {max-boots: 3, runs-per-boot: 2}\n"
	"    workloads: [w2]\n";

static struct spec *load(void)
{
	struct diags d = { 0 };
	struct spec *s = NULL;

	assert_int_equal(spec_load_buffer("t.yaml", yaml, strlen(yaml), &memonly, &s, &d), 0);
	diags_release(&d);
	return s;
}

static const char *param(const struct plan_run *r, const char *k)
{
	for (size_t i = 0; i < r->nparams; i++)
		if (streq(r->params[i].key, k))
			return r->params[i].value;
	return NULL;
}

static void test_expansion_order(void **state)
{
	struct spec *s = load();
	struct diags d = { 0 };
	struct plan *p = NULL;
	const struct plan_run *r;

	(void)state;
	assert_int_equal(plan_build(s, NULL, &p, &d), 0);
	/* e1: 4 matrix cells x 2 repeats x 3 variants; e2: 1; e3: 3 x 2; e4: 3 boots x 2 runs x 2 */
	assert_int_equal(p->n, 4 * 2 * 3 + 1 + 6 + 12);
	r = p->runs;
	assert_string_equal(r[0].id, "e1.0001");
	assert_string_equal(r[0].kernel, "base");
	assert_string_equal(r[1].kernel, "p@1");
	assert_string_equal(r[2].kernel, "p@3");
	assert_string_equal(r[3].kernel, "base");
	/* repeats inside a matrix cell, hosts alternate by repeat */
	assert_int_equal(r[0].repeat, 1);
	assert_int_equal(r[3].repeat, 2);
	assert_string_equal(r[0].host, "h1");
	assert_string_equal(r[2].host, "h1");
	assert_string_equal(r[3].host, "h2");
	/* the last parameter varies fastest */
	assert_string_equal(param(&r[0], "a"), "1");
	assert_string_equal(param(&r[0], "b"), "x");
	assert_string_equal(param(&r[6], "a"), "1");
	assert_string_equal(param(&r[6], "b"), "y");
	assert_string_equal(param(&r[12], "a"), "2");
	assert_string_equal(param(&r[12], "b"), "x");
	assert_string_equal(param(&r[23], "c"), "z");
	/* experiment monitors first, job monitors added once */
	assert_int_equal(r[0].monitors.n, 2);
	assert_string_equal(r[0].monitors.v[0], "m1");
	assert_string_equal(r[0].monitors.v[1], "m2");
	/* ids restart per experiment; default host */
	assert_string_equal(r[24].id, "e2.0001");
	assert_string_equal(r[24].host, "local");
	assert_string_equal(r[24].workload, "w2");
	plan_free(p);
	spec_free(s);
	diags_release(&d);
}

static void test_selection(void **state)
{
	struct spec *s = load();
	struct diags d = { 0 };
	struct plan *p = NULL;
	struct strv only = STRV_INIT;

	(void)state;
	strv_push(&only, "e2");
	assert_int_equal(plan_build(s, &only, &p, &d), 0);
	assert_int_equal(p->n, 1);
	plan_free(p);
	p = NULL;
	strv_push(&only, "e5");
	assert_int_equal(plan_build(s, &only, &p, &d), -EINVAL);
	assert_null(p);
	assert_int_equal(d.n, 1);
	assert_string_equal(d.v[0].msg, "no experiment 'e5' (did you mean 'e1'?)");
	strv_release(&only);
	spec_free(s);
	diags_release(&d);
}

static void test_formatters(void **state)
{
	struct spec *s = load();
	struct diags d = { 0 };
	struct plan *p = NULL;
	struct strbuf text = STRBUF_INIT, js = STRBUF_INIT;
	struct strv only = STRV_INIT;

	(void)state;
	strv_push(&only, "e2");
	assert_int_equal(plan_build(s, &only, &p, &d), 0);
	plan_format_text(p, &text);
	assert_string_equal(text.buf, "ID       KERNEL  TOPOLOGY  HOST   WORKLOAD  REPEAT  BOOT  PARAMS\n"
				      "e2.0001  base    t         local  w2        1       1     -\n");
	plan_format_json(p, &js);
	assert_non_null(strstr(js.buf, "\"params\": {},"));
	assert_non_null(strstr(js.buf, "\"monitors\": [],"));
	strbuf_release(&text);
	strbuf_release(&js);
	strv_release(&only);
	plan_free(p);
	spec_free(s);
	diags_release(&d);
}

/* Boots: the repetitions spread over min-boots boots, the variants reversed in even ones. */
static void test_boots_alternate(void **state)
{
	static const char *const order3[] = { "base", "q", "q", "base", "base", "q" };
	static const unsigned boot3[] = { 1, 1, 2, 2, 1, 1 };
	struct spec *s = load();
	struct diags d = { 0 };
	struct plan *p = NULL;
	struct strv only = STRV_INIT;

	(void)state;
	strv_push(&only, "e3");
	assert_int_equal(plan_build(s, &only, &p, &d), 0);
	assert_int_equal(p->n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_string_equal(p->runs[i].kernel, order3[i]);
		assert_int_equal(p->runs[i].boot, boot3[i]);
	}
	plan_free(p);
	p = NULL;
	/* repeat: auto holds the budget: 3 boots x 2 runs a variant, boot-major */
	strv_release(&only);
	strv_push(&only, "e4");
	assert_int_equal(plan_build(s, &only, &p, &d), 0);
	assert_int_equal(p->n, 12);
	for (size_t i = 0; i < 12; i++) {
		unsigned boot = (unsigned)(i / 4 + 1);

		assert_int_equal(p->runs[i].boot, boot);
		assert_string_equal(p->runs[i].kernel, (i % 2 == 0) == (boot % 2 == 1) ? "base" : "q");
	}
	strv_release(&only);
	plan_free(p);
	spec_free(s);
	diags_release(&d);
}

/* lab calibrate --monitors: each run, then the same run without each of its
 * monitors in turn (the experiment's and the job's), in the same boot. */
static void test_monitors_off(void **state)
{
	static const char *const off[] = { NULL, "m1", "m2" };
	struct spec *s = load();
	struct diags d = { 0 };
	struct plan *p = NULL;
	struct strv only = STRV_INIT;
	struct strbuf t = STRBUF_INIT;

	(void)state;
	((struct spec_experiment *)spec_find_experiment(s, "e1"))->monitors_off = true;
	strv_push(&only, "e1");
	assert_int_equal(plan_build(s, &only, &p, &d), 0);
	/* 4 cells x 2 repeats x 3 variants, each thrice */
	assert_int_equal(p->n, 4 * 2 * 3 * 3);
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_run *r = &p->runs[i], *with = &p->runs[i - i % 3];

		if (!off[i % 3]) {
			assert_null(r->monitor_off);
			assert_int_equal(r->monitors.n, 2);
		} else {
			assert_string_equal(r->monitor_off, off[i % 3]);
			assert_int_equal(r->monitors.n, 1);
			assert_false(strv_contains(&r->monitors, off[i % 3]));
			assert_string_equal(r->kernel, with->kernel);
			assert_int_equal(r->boot, with->boot);
			assert_int_equal(r->repeat, with->repeat);
			assert_string_equal(r->host, with->host);
		}
	}
	plan_format_text(p, &t);
	assert_non_null(strstr(t.buf, "a=1 b=x c=z without=m2"));
	strbuf_reset(&t);
	plan_format_json(p, &t);
	assert_non_null(strstr(t.buf, "\"monitor_off\": \"m1\""));
	strbuf_release(&t);
	strv_release(&only);
	plan_free(p);
	spec_free(s);
	diags_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_expansion_order),
		cmocka_unit_test(test_selection),
		cmocka_unit_test(test_formatters),
		cmocka_unit_test(test_boots_alternate),
		cmocka_unit_test(test_monitors_off),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
