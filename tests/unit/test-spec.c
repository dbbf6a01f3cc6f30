/* SPDX-License-Identifier: MIT */
/*
 * The YAML node layer and the lab.yaml model, loaded from memory (no
 * filesystem checks): positions, aliases and merge keys, budgets, vars,
 * NUMA rules, from-cycles. The error-per-file cases with exact line and
 * column live in tests/data/err-*.yaml (t0100-golden.sh).
 */
#include "unit.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "spec/spec.h"
#include "util/alloc.h"

static const struct spec_load_opts memonly = { .no_include = true, .no_filesystem = true };

/* Load; return the formatted errors (empty string when valid). */
static char *load(const char *yaml, struct spec **ret)
{
	struct diags d = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct spec *s = NULL;
	int r = spec_load_buffer("t.yaml", yaml, strlen(yaml), &memonly, &s, &d);

	diags_sort(&d);
	diags_format(&d, &sb);
	assert_true((r == 0) == (d.n == 0));
	diags_release(&d);
	if (ret)
		*ret = s;
	else
		spec_free(s);
	return strbuf_detach(&sb, NULL);
}

static void assert_errors(const char *yaml, const char *want)
{
	char *got = load(yaml, NULL);

	if (!strstr(got, want))
		fail_msg("expected error containing\n  %s\ngot:\n%s", want, got);
	free(got);
}

static void assert_valid(const char *yaml)
{
	char *got = load(yaml, NULL);

	if (*got)
		fail_msg("expected valid, got:\n%s", got);
	free(got);
}

static void test_node_positions(void **state)
{
	struct node_files f = { STRV_INIT };
	struct diags d = { 0 };
	const char *y = "a:\n  b: [1, 2]\n  c: {x: y}\n";
	struct node *n = node_parse(&f, "p.yaml", y, strlen(y), &d);
	struct node *b;

	(void)state;
	assert_non_null(n);
	b = node_map_get(node_map_get(n, "a"), "b");
	assert_int_equal(b->kind, NODE_SEQ);
	assert_int_equal(b->items[1]->pos.line, 2);
	assert_int_equal(b->items[1]->pos.col, 10);
	assert_string_equal(b->items[1]->pos.file, "p.yaml");
	assert_int_equal(node_map_get(n, "a")->keys[1]->pos.line, 3);
	node_free(n);
	node_files_release(&f);
	diags_release(&d);
}

static void test_node_alias_and_merge(void **state)
{
	struct node_files f = { STRV_INIT };
	struct diags d = { 0 };
	const char *y = "base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  y: 3\nref: *b\n";
	struct node *n = node_parse(&f, "p.yaml", y, strlen(y), &d);
	struct node *c;

	(void)state;
	assert_non_null(n);
	c = node_map_get(n, "child");
	assert_string_equal(node_map_get(c, "x")->scalar, "1");
	assert_string_equal(node_map_get(c, "y")->scalar, "3"); /* explicit key wins */
	assert_int_equal(node_map_get(n, "ref")->n, 2);
	node_free(n);
	node_files_release(&f);
	diags_release(&d);
}

/* An anchor on a merge value or on the "<<" key still names its node once the merge is applied. */
static void test_node_anchor_on_merge(void **state)
{
	struct node_files f = { STRV_INIT };
	struct diags d = { 0 };
	const char *y = "child:\n  <<: &m {x: 1, y: 2}\n  y: 3\nref: *m\nlist: {<<: [&n {z: 4}, {w: 5}]}\nn: *n\n";
	struct node *n = node_parse(&f, "p.yaml", y, strlen(y), &d);

	(void)state;
	assert_non_null(n);
	assert_int_equal(d.n, 0);
	assert_string_equal(node_map_get(node_map_get(n, "child"), "x")->scalar, "1");
	assert_string_equal(node_map_get(node_map_get(n, "ref"), "y")->scalar, "2");
	assert_int_equal(node_map_get(n, "list")->n, 2);
	assert_string_equal(node_map_get(node_map_get(n, "n"), "z")->scalar, "4");
	node_free(n);
	node_files_release(&f);
	diags_release(&d);
}

/* Nodes dropped after an error are not copied by a later alias (they were freed). */
static void test_node_alias_to_dropped(void **state)
{
	(void)state;
	assert_errors("? &a [k]\n: v\nvars: *a\n",
		      "t.yaml:3:7: alias '*a' refers to a node dropped because of an error above");
	assert_errors("? k\n: &a [v]\nx: {[1]: 2}\nvars: *a\n", "t.yaml:3:5: mapping keys must be scalars");
	assert_errors("[k]: &a {v: 1}\nvars: *a\n", "t.yaml:2:7: alias '*a' refers to a node dropped");
	assert_errors("a: 1\na: &d [x]\nvars: *d\n", "t.yaml:3:7: alias '*d' refers to a node dropped");
	assert_errors("&k a: 1\n&k a: 2\nb: *k\n", "t.yaml:3:4: alias '*k' refers to a node dropped");
	assert_errors("a: {[x]: [&deep {v: 1}]}\nb: *deep\n", "t.yaml:2:4: alias '*deep' refers to a node dropped");
	/* shadowing: the newest anchor of a name decides */
	assert_errors("a: &s 1\nb: {[x]: &s 2}\nc: *s\n", "t.yaml:3:4: alias '*s' refers to a node dropped");
	assert_errors("[x]: &s 1\nb: &s 2\nvars: {c: *s}\n", "t.yaml:1:1: mapping keys must be scalars");
}

/* A key over libyaml's 1024 characters is a name too long, wherever it is, not a puzzling syntax error. */
static void test_node_long_key(void **state)
{
	static const char *const shapes[] = {
		"%s: 1\n",                /* the first key: "mapping values are not allowed" */
		"a: 1\n%s: 1\n",          /* a later one: "could not find expected ':'" */
		"a:\n  %s: 1\n",          /* nested */
		"a: {b: 1, %s: 1}\n",      /* flow */
		"a:\n  - %s: 1\n",        /* in a list */
		"a:\n  \"%s\": 1\n",      /* quoted: the quotes do not count */
	};
	static const char *const want[] = {
		"t.yaml:1:1: name too long (1500 characters, at most 64)",
		"t.yaml:2:1: name too long (1500 characters, at most 64)",
		"t.yaml:2:3: name too long (1500 characters, at most 64)",
		"t.yaml:1:11: name too long (1500 characters, at most 64)",
		"t.yaml:2:5: name too long (1500 characters, at most 64)",
		"t.yaml:2:3: name too long (1500 characters, at most 64)",
	};
	char key[1501];

	(void)state;
	memset(key, 'k', 1500);
	key[1500] = 0;
	for (size_t i = 0; i < ELEMENTSOF(shapes); i++) {
		char *y = xasprintf(shapes[i], key);

		assert_errors(y, want[i]);
		free(y);
	}
	/* characters, not bytes */
	memcpy(key, "\xc3\xa9", 2);
	{
		char *y = xasprintf("a:\n  %s: 1\n", key);

		assert_errors(y, "t.yaml:2:3: name too long (1499 characters, at most 64)");
		free(y);
	}
	/* a key of 1024 characters is read, then refused by the model */
	key[1024] = 0;
	memcpy(key, "kk", 2);
	{
		char *y = xasprintf("version: 1\nkernels:\n  %s: {config: [a.config]}\n", key);

		assert_errors(y, "t.yaml:3:3: kernel name too long (1024 characters, at most 64)");
		free(y);
	}
	assert_errors("a: b: c\n", "t.yaml:1:5: yaml syntax error: mapping values are not allowed");
}

static void test_node_billion_laughs(void **state)
{
	struct strbuf y = STRBUF_INIT;
	struct node_files f = { STRV_INIT };
	struct diags d = { 0 };
	struct node *n;

	(void)state;
	strbuf_addstr(&y, "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
	for (int i = 1; i < 10; i++)
		strbuf_addf(&y, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i - 1,
			    i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1, i - 1);
	n = node_parse(&f, "p.yaml", y.buf, y.len, &d);
	assert_null(n);
	assert_int_equal(d.n, 1);
	assert_non_null(strstr(d.v[0].msg, "document too large"));
	strbuf_release(&y);
	node_files_release(&f);
	diags_release(&d);
}

static void test_node_errors(void **state)
{
	(void)state;
	assert_errors("a: [1, 2\n", "t.yaml:2:1: yaml syntax error");
	assert_errors("a: 1\na: 2\n", "t.yaml:2:1: duplicate key 'a' (first at line 1, column 1)");
	assert_errors("x: *nope\n", "t.yaml:1:4: unknown alias '*nope'");
	assert_errors("[a, b]: 1\n", "mapping keys must be scalars");
	assert_errors("a: 1\n---\nb: 2\n", "more than one yaml document");
}

static const char *const good =
	"version: 1\n"
	"vars: {mem: 4G, half: 2G}\n"
	"kernels:\n"
	"  base: {config: [a.config]}\n"
	"  p: {from: base, patches: pdir, sweep: [1, 2]}\n"
	"topologies:\n"
	"  t:\n"
	"    sockets: 2\n"
	"    cores: 2\n"
	"    memory: ${mem}\n"
	"    numa:\n"
	"      - {cpus: 0-1, memory: \"${half}\"}\n"
	"      - {cpus: 2-3, memory: \"${half}\"}\n"
	"    distances: [[10, 20], [20, 10]]\n"
	"images: {img: {recipe: r.yaml}}\n"
	"experiments:\n"
	"  e:\n"
	"    kernels: [base, p]\n"
	"    topology: t\n"
	"    image: img\n"
	"    repeat: 2\n"
	"    workloads:\n"
	"      - workload: w\n"
	"        params: {a: [1, 2], b: x}\n"
	"        expect: {w.metric: {direction: increase, min: 5%}}\n";

static void test_spec_good(void **state)
{
	struct spec *s = NULL;
	char *errs = load(good, &s);
	const struct spec_topology *t;
	struct strv v = STRV_INIT;

	(void)state;
	assert_string_equal(errs, "");
	free(errs);
	assert_non_null(s);
	t = spec_find_topology(s, "t");
	assert_int_equal(spec_topology_vcpus(t), 4);
	assert_int_equal(t->memory, 4ULL << 30);
	assert_int_equal(t->ncells, 2);
	assert_int_equal(t->distances[1], 20);
	assert_non_null(spec_find_kernel(s, "p")->root_source);
	assert_string_equal(spec_find_kernel(s, "p")->root_source->package, "linux-source-6.1");
	spec_experiment_variants(s, spec_find_experiment(s, "e"), &v);
	assert_int_equal(v.n, 3);
	assert_string_equal(v.v[0], "base");
	assert_string_equal(v.v[1], "p@1");
	assert_string_equal(v.v[2], "p@2");
	assert_true(spec_find_experiment(s, "e")->jobs[0].expect[0].effect > 0.0499);
	strv_release(&v);
	spec_free(s);
}

static void test_spec_numa_rules(void **state)
{
	(void)state;
	assert_errors("version: 1\ntopologies:\n  t:\n    cores: 4\n    memory: 4G\n"
		      "    numa: [{cpus: 0-2, memory: 2G}, {cpus: 2-3, memory: 2G}]\n",
		      "numa cells 0 and 1 overlap: vCPU 2 is in both");
	assert_errors("version: 1\ntopologies:\n  t:\n    cores: 4\n    memory: 4G\n"
		      "    numa: [{cpus: 0-1, memory: 2G}, {cpus: 2, memory: 2G}]\n",
		      "leave vCPU 3 out of every cell");
	assert_errors("version: 1\ntopologies:\n  t:\n    cores: 4\n    memory: 4G\n"
		      "    numa: [{cpus: 0-1, memory: 2G}, {cpus: 2-3, memory: 1G}]\n",
		      "add up to 3G of memory, not the 4G it declares");
	assert_errors("version: 1\ntopologies:\n  t:\n    cores: 4\n    memory: 4G\n"
		      "    numa: [{cpus: 0-1, memory: 2G}, {cpus: 2-4, memory: 2G}]\n",
		      "names vCPU 4, but topology 't' has 4 vCPUs");
	assert_errors("version: 1\ntopologies:\n  t:\n    cores: 2\n    memory: 2G\n"
		      "    numa: [{cpus: 0, memory: 1G}, {cpus: 1, memory: 1G}]\n"
		      "    distances: [[10, 20], [30, 10]]\n",
		      "asymmetric (0->1 is 20, 1->0 is 30)");
	assert_valid("version: 1\ntopologies:\n  t:\n    cores: 2\n    memory: 2G\n"
		     "    numa: [{cpus: 0, memory: 1G}, {cpus: 1, memory: 1G}]\n"
		     "    distances: [[10, 20], [30, 10]]\n    asymmetric: true\n");
	assert_errors("version: 1\ntopologies:\n  t:\n    cores: 2\n    memory: 2G\n"
		      "    numa: [{cpus: 0, memory: 1G}, {cpus: 1, memory: 1G}]\n"
		      "    distances: [[10, 20, 20], [20, 10]]\n",
		      "distances must be a 2x2 matrix: row 1 has 3 entries");
	assert_errors("version: 1\ntopologies:\n  t:\n    cores: 2\n    memory: 2G\n"
		      "    numa: [{cpus: 0, memory: 1G}, {cpus: 1, memory: 1G}]\n"
		      "    distances: [[12, 20], [20, 10]]\n",
		      "distance from cell 0 to itself must be 10, not 12");
	assert_errors("version: 1\ntopologies:\n  t:\n    cores: 4\n    memory: 2G\n    pinning: 0-1\n",
		      "pinning lists 2 host CPUs for the 4 vCPUs");
}

/* timing: host | icount; icount with one vCPU only (QEMU 7.2 hangs at SMP bring-up) */
static void test_spec_topology_timing(void **state)
{
	struct spec *s = NULL;
	char *got;

	(void)state;
	assert_valid("version: 1\ntopologies:\n  t: {memory: 1G, timing: icount}\n");
	assert_valid("version: 1\ntopologies:\n  t: {cores: 4, memory: 1G, timing: host}\n");
	assert_errors("version: 1\ntopologies:\n  t:\n    memory: 1G\n    timing: wall\n",
		      "t.yaml:5:13: timing must be host or icount, not 'wall'");
	assert_errors("version: 1\ntopologies:\n  t:\n    memory: 1G\n    timing: {a: 1}\n",
		      "t.yaml:5:13: timing must be a scalar, not a mapping");
	assert_errors("version: 1\ntopologies:\n  t:\n    sockets: 2\n    memory: 1G\n    timing: icount\n",
		      "t.yaml:6:13: topology 't' has 2 vCPUs but timing: icount allows 1: with icount QEMU runs "
		      "vCPUs in turn and the guest hangs at SMP bring-up");
	assert_errors("version: 1\ntopologies:\n  t: {vcpus: 3, memory: 1G, timing: icount}\n",
		      "t.yaml:3:37: topology 't' has 3 vCPUs but timing: icount allows 1");
	/* the default is host */
	got = load("version: 1\ntopologies:\n  t: {memory: 1G}\n  i: {memory: 1G, timing: icount}\n", &s);
	assert_string_equal(got, "");
	assert_int_equal(s->topologies[0].timing, TIMING_HOST);
	assert_int_equal(s->topologies[1].timing, TIMING_ICOUNT);
	free(got);
	spec_free(s);
}

static void test_spec_kernels(void **state)
{
	(void)state;
	assert_errors("version: 1\nkernels:\n  a: {from: b}\n  b: {from: a}\n", "kernel 'a' is part of a 'from' cycle");
	assert_errors("version: 1\nkernels:\n  a: {from: zz}\n", "starts from 'zz', which is not a defined kernel");
	assert_errors("version: 1\nkernels:\n  a: {source: nope}\n", "uses source 'nope', which is not defined");
	assert_errors("version: 1\nkernels:\n  a: {require: {FAIR_GROUP_SCHED: y}}\n", "require takes kernel config symbols");
	assert_errors("version: 1\nkernels:\n  a: {patches: p, sweep: [3, 1]}\n", "sweep steps must increase: 1 after 3");
	assert_errors("version: 1\nkernels:\n  a: {sweep: [1]}\n", "sweeps a patch series but has no 'patches'");
	assert_errors("version: 1\nsources:\n  s1: {type: dir}\n", "source type must be debian, tarball, directory or git");
	assert_errors("version: 1\nsources:\n  g: {type: git, url: x}\n", "source 'g' needs 'ref'");
	assert_errors("version: 1\nsources:\n  a: {}\n  b: {type: directory, path: /x}\nkernels:\n"
		      "  k1: {source: a}\n  k2: {source: b}\ntopologies: {t: {memory: 1G}}\nimages: {i: {recipe: r}}\n"
		      "experiments:\n  e: {kernels: [k1, k2], topology: t, image: i, workloads: [w]}\n",
		      "variants compared in one experiment must share a source");
}

static void test_spec_vars(void **state)
{
	(void)state;
	assert_errors("version: 1\nvars: {a: 1}\ntopologies: {t: {memory: \"${b}\"}}\n", "undefined variable 'b'");
	assert_errors("version: 1\nvars: {abc: 1}\ntopologies: {t: {memory: \"${abd}\"}}\n", "(did you mean 'abc'?)");
	assert_errors("version: 1\nvars: {a: '${b}', b: '${a}'}\ntopologies: {t: {memory: \"${a}\"}}\n", "too deeply");
	assert_errors("version: 1\ntopologies: {t: {memory: ${x}\n", "yaml syntax error");
	assert_errors("version: 1\ntopologies: {t: {memory: \"${x\"}}\n", "unterminated '${'");
	assert_valid("version: 1\nvars: {a: '1G'}\ntopologies: {t: {memory: \"${a}\"}}\nhosts: {h: {uri: \"qemu:///x$${y}\"}}\n");
	setenv("LAB_TEST_MEM", "2G", 1);
	assert_valid("version: 1\ntopologies: {t: {memory: \"${env:LAB_TEST_MEM}\"}}\n");
	assert_errors("version: 1\ntopologies: {t: {memory: \"${env:LAB_TEST_UNSET_X}\"}}\n",
		      "environment variable 'LAB_TEST_UNSET_X' is not set");
}

static void test_spec_hosts(void **state)
{
	struct spec *s = NULL;
	char *errs;

	(void)state;
	errs = load("version: 1\nhosts:\n  b: {ssh: \"root@[::1]:2222\"}\n  c: {ssh: box}\n", &s);
	assert_string_equal(errs, "");
	free(errs);
	assert_string_equal(s->hosts[0].user, "root");
	assert_string_equal(s->hosts[0].address, "::1");
	assert_int_equal(s->hosts[0].port, 2222);
	assert_int_equal(s->hosts[1].port, 22);
	assert_null(s->hosts[1].user);
	spec_free(s);
	assert_errors("version: 1\nhosts: {b: {ssh: -oProxyCommand=x}}\n", "starts with '-'");
	assert_errors("version: 1\nhosts: {b: {ssh: \"a;b\"}}\n", "contains shell characters");
	assert_errors("version: 1\nhosts: {b: {ssh: \"a:99999\"}}\n", "port in 'a:99999' must be from 1 to 65535");
	assert_errors("version: 1\nhosts: {b: {ssh: a, uri: \"qemu:///system\"}}\n", "needs exactly one of 'uri'");
	assert_errors("version: 1\nhosts: {b: {uri: system}}\n", "is not a libvirt URI");

	/* a remote libvirt host: ssh from its URI, lab's folder there */
	errs = load("version: 1\nhosts:\n  r: {uri: \"qemu+ssh://lab@hv1:2200/system?keyfile=/k\"}\n"
		    "  d: {uri: \"qemu+ssh://hv2/system\", dir: /srv/lab}\n  l: {uri: \"qemu:///system\"}\n", &s);
	assert_string_equal(errs, "");
	free(errs);
	assert_string_equal(s->hosts[0].user, "lab");
	assert_string_equal(s->hosts[0].address, "hv1");
	assert_int_equal(s->hosts[0].port, 2200);
	assert_string_equal(s->hosts[0].dir, "/var/lib/lab");
	assert_null(s->hosts[1].user);
	assert_string_equal(s->hosts[1].address, "hv2");
	assert_int_equal(s->hosts[1].port, 22);
	assert_string_equal(s->hosts[1].dir, "/srv/lab");
	assert_null(s->hosts[2].address);
	assert_null(s->hosts[2].dir);
	spec_free(s);
}

static void test_spec_top(void **state)
{
	(void)state;
	assert_errors("kernels: {}\n", "missing 'version: 1'");
	assert_errors("version: 2\n", "schema version 2 is not supported");
	assert_errors("version: 1\nexperimnts: {}\n", "unknown key 'experimnts' in lab.yaml (did you mean 'experiments'?)");
	assert_errors("- a\n- b\n", "lab.yaml must be a mapping of sections, not a sequence");
	assert_errors("version: 1\ninclude: other.yaml\n", "include is not allowed here");
	assert_valid("version: 1\n");
	assert_errors("", "missing 'version: 1'");
}


/* An experiment e (line 5) whose last lines are `extra`, each indented 4. */
#define EXP(extra)                                                                                 \
	"version: 1\nkernels: {a: {}, b: {from: a}}\ntopologies: {t: {memory: 1G}}\nimages: {i: {recipe: r}}\n" \
	"experiments:\n  e:\n    kernels: [a, b]\n    topology: t\n    image: i\n    workloads: [w]\n" extra

static const struct spec_experiment *load_exp(const char *yaml, struct spec **s)
{
	char *errs = load(yaml, s);

	if (*errs)
		fail_msg("expected valid, got:\n%s", errs);
	free(errs);
	return spec_find_experiment(*s, "e");
}

static void test_spec_decide(void **state)
{
	struct spec *s = NULL;
	const struct spec_experiment *e;

	(void)state;
	/* the defaults: a fixed design of 3 runs */
	e = load_exp(EXP(""), &s);
	assert_int_equal(e->repeat, 3);
	assert_false(e->repeat_auto);
	assert_true(e->decide.alpha == 0.05 && e->decide.power == 0.8 && e->decide.q == 0.05);
	assert_int_equal(e->decide.statistic, SPEC_STAT_WELCH_LOG);
	assert_int_equal(e->decide.min_boots, 2);
	assert_int_equal(e->decide.max_boots, 2);
	assert_int_equal(e->decide.runs_per_boot, 3);
	assert_int_equal(e->decide.max_runs, 0);
	assert_int_equal(e->decide.max_time_usec, 0);
	assert_null(e->decide.alpha_pos.file);
	spec_free(s);

	/* every key */
	e = load_exp(EXP("    decide: {alpha: 0.01, power: 90%, q: 0.1, statistic: mann-whitney, min-boots: 3,\n"
			 "             max-boots: 5, max-runs: 40, max-time: 30m}\n"), &s);
	assert_true(e->decide.alpha == 0.01 && e->decide.power > 0.8999 && e->decide.power < 0.9001);
	assert_true(e->decide.q == 0.1);
	assert_int_equal(e->decide.statistic, SPEC_STAT_MANN_WHITNEY);
	assert_int_equal(e->decide.min_boots, 3);
	assert_int_equal(e->decide.max_boots, 5);
	assert_int_equal(e->decide.max_runs, 40);
	assert_int_equal(e->decide.max_time_usec, 30ULL * 60 * 1000000);
	assert_int_equal(e->decide.alpha_pos.line, 11);
	assert_int_equal(e->decide.alpha_pos.col, 21);
	assert_string_equal(spec_statistic_name(e->decide.statistic), "mann-whitney");
	spec_free(s);

	/* repeat: auto: runs per boot instead of runs, 6 boots at most unless said */
	e = load_exp(EXP("    repeat: auto\n"), &s);
	assert_true(e->repeat_auto);
	assert_int_equal(e->repeat, 0);
	assert_int_equal(e->decide.runs_per_boot, 3);
	assert_int_equal(e->decide.min_boots, 2);
	assert_int_equal(e->decide.max_boots, 6);
	spec_free(s);
	e = load_exp(EXP("    repeat: auto\n    decide: {runs-per-boot: 5, min-boots: 8, statistic: bootstrap}\n"), &s);
	assert_int_equal(e->decide.runs_per_boot, 5);
	assert_int_equal(e->decide.max_boots, 8); /* at least min-boots */
	assert_int_equal(e->decide.statistic, SPEC_STAT_BOOTSTRAP);
	spec_free(s);
	e = load_exp(EXP("    decide: {min-boots: 4}\n"), &s);
	assert_int_equal(e->decide.max_boots, 4);
	spec_free(s);
}

static void test_spec_decide_errors(void **state)
{
	static const struct {
		const char *yaml, *err;
	} cases[] = {
		{ EXP("    decide: {alpha: 0.5}\n"),
		  "t.yaml:11:21: decide.alpha must be a number between 0 and 0.5 (both excluded), not '0.5'" },
		{ EXP("    decide: {alpha: 0}\n"), "t.yaml:11:21: decide.alpha must be a number between 0 and 0.5" },
		{ EXP("    decide: {alpha: five}\n"), "t.yaml:11:21: decide.alpha must be a number between 0 and 0.5" },
		{ EXP("    decide: {alpha: [1]}\n"), "t.yaml:11:21: decide.alpha must be a number, not a sequence" },
		{ EXP("    decide: {power: 0.995}\n"),
		  "t.yaml:11:21: decide.power must be a number from 0.5 to 0.99, not '0.995'" },
		{ EXP("    decide: {power: 0.4}\n"), "t.yaml:11:21: decide.power must be a number from 0.5 to 0.99" },
		{ EXP("    decide: {q: 60%}\n"), "t.yaml:11:17: decide.q must be a number between 0 and 0.5 (both excluded), not '60%'" },
		{ EXP("    decide: {q: ''}\n"), "t.yaml:11:17: decide.q must be a number between 0 and 0.5" },
		{ EXP("    decide: {statistic: welch}\n"),
		  "t.yaml:11:25: statistic must be welch-log, mann-whitney or bootstrap, not 'welch'" },
		{ EXP("    decide: {statistic: bootstrp}\n"), "not 'bootstrp' (did you mean 'bootstrap'?)" },
		{ EXP("    decide: {min-boots: 0}\n"),
		  "t.yaml:11:25: decide.min-boots must be a whole number from 1 to 1000, not '0'" },
		{ EXP("    decide: {max-boots: 1}\n"), "t.yaml:11:25: decide.max-boots must be a whole number from 2 to 1000" },
		{ EXP("    decide: {min-boots: 4, max-boots: 3}\n"),
		  "t.yaml:11:39: decide.max-boots (3) is below decide.min-boots (4)" },
		{ EXP("    decide: {max-runs: -1}\n"), "t.yaml:11:24: decide.max-runs must be a whole number from 0 to 1000000" },
		{ EXP("    repeat: auto\n    decide: {max-runs: 5}\n"),
		  "t.yaml:12:24: decide.max-runs (5) is below min-boots x runs-per-boot (2 x 3): the first look never comes" },
		{ EXP("    decide: {max-time: soon}\n"),
		  "t.yaml:11:24: decide.max-time must be a duration such as 30s, 5m or 1h30m, not 'soon'" },
		{ EXP("    decide: {max-time: 10ms}\n"), "t.yaml:11:24: decide.max-time must be at least 1s" },
		{ EXP("    decide: {runs-per-boot: 0}\n"),
		  "t.yaml:11:29: decide.runs-per-boot must be a whole number from 1 to 1000, not '0'" },
		{ EXP("    decide: {runs-per-boot: 2}\n"),
		  "t.yaml:11:29: decide.runs-per-boot goes with repeat: auto; a fixed design runs each variant 'repeat' times" },
		{ EXP("    decide: {alfa: 0.01}\n"), "t.yaml:11:14: unknown key 'alfa' in decide (did you mean 'alpha'?)" },
		{ EXP("    decide: 0.05\n"), "t.yaml:11:13: decide must be a mapping, not a scalar" },
		{ EXP("    repeat: sometimes\n"), "t.yaml:11:13: repeat must be a whole number from 1 to 1000 or auto, not 'sometimes'" },
		{ EXP("    repeat: 0\n"), "t.yaml:11:13: repeat must be a whole number from 1 to 1000 or auto, not '0'" },
		{ EXP("    repeat: [auto]\n"), "t.yaml:11:13: repeat must be a scalar, not a sequence" },
	};

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		assert_errors(cases[i].yaml, cases[i].err);
}

/* A topology t (line 3) whose last lines are `extra`, each indented 4. */
#define TOPO(extra) "version: 1\ntopologies:\n  t:\n    vcpus: 2\n    memory: 1G\n" extra

/* emulator: (QEMU's threads) and quiesce: (the guest before each run). */
static void test_spec_placement(void **state)
{
	static const struct {
		const char *yaml, *err;
	} cases[] = {
		{ TOPO("    pinning: auto\n    emulator: yes\n"),
		  "t.yaml:7:15: emulator must be none, auto or a host cpu list, not 'yes'" },
		{ TOPO("    emulator: [0]\n"), "t.yaml:6:15: emulator must be a scalar, not a sequence" },
		{ TOPO("    emulator: auto\n"),
		  "t.yaml:6:15: emulator: auto puts QEMU's threads on the host CPUs the vCPUs leave: it needs pinning: "
		  "auto or a host cpu list" },
		{ TOPO("    pinning: none\n    emulator: auto\n"), "t.yaml:7:15: emulator: auto puts QEMU's threads" },
		{ TOPO("    emulater: auto\n"), "t.yaml:6:5: unknown key 'emulater' in topology 't' (did you mean 'emulator'?)" },
		{ EXP("    quiesce: maybe\n"), "t.yaml:11:14: quiesce must be true or false, not 'maybe'" },
	};
	struct spec *s = NULL;
	const struct spec_topology *t;
	const struct spec_experiment *e;
	char *errs;

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++)
		assert_errors(cases[i].yaml, cases[i].err);
	assert_valid(TOPO("    emulator: 0,3\n")); /* a list needs no pinned vCPUs */
	errs = load(TOPO("    pinning: 0-1\n    emulator: auto\n"), &s);
	assert_string_equal(errs, "");
	free(errs);
	t = spec_find_topology(s, "t");
	assert_int_equal(t->emulator, PIN_AUTO);
	assert_null(t->emulator_cpus);
	spec_free(s);
	s = NULL;
	errs = load(TOPO("    emulator: 2-3\n"), &s);
	assert_string_equal(errs, "");
	free(errs);
	t = spec_find_topology(s, "t");
	assert_int_equal(t->emulator, PIN_LIST);
	assert_string_equal(t->emulator_cpus, "2-3");
	assert_int_equal(t->pin, PIN_NONE);
	spec_free(s);
	s = NULL;
	/* quiesce: true unless said */
	e = load_exp(EXP(""), &s);
	assert_true(e->quiesce);
	assert_int_equal(spec_find_topology(s, "t")->emulator, PIN_NONE);
	spec_free(s);
	s = NULL;
	e = load_exp(EXP("    quiesce: false\n"), &s);
	assert_false(e->quiesce);
	spec_free(s);
}

/* An expectation of job w: `x` is its value. */
#define EXPECT(x)                                                                                  \
	"version: 1\nkernels: {a: {}, b: {from: a}}\ntopologies: {t: {memory: 1G}}\nimages: {i: {recipe: r}}\n" \
	"experiments:\n  e:\n    kernels: [a, b]\n    topology: t\n    image: i\n    workloads:\n"           \
	"      - workload: w\n        expect:\n          w.m: " x "\n"

static void test_spec_expect_mde(void **state)
{
	static const struct {
		const char *x;
		enum expect_dir dir;
		double effect;
		int statistic;
	} ok[] = {
		{ "increase", EXPECT_INCREASE, 0, -1 },
		{ "{direction: increase, mde: 5%}", EXPECT_INCREASE, 0.05, -1 },
		{ "{direction: decrease, mde: 2%, statistic: bootstrap}", EXPECT_DECREASE, 0.02, SPEC_STAT_BOOTSTRAP },
		{ "{direction: unchanged, mde: 1%}", EXPECT_UNCHANGED, 0.01, -1 },
		{ "{direction: unchanged, within: 3%, statistic: mann-whitney}", EXPECT_UNCHANGED, 0.03,
		  SPEC_STAT_MANN_WHITNEY },
		{ "{direction: increase, min: 4%}", EXPECT_INCREASE, 0.04, -1 },
		{ "{direction: increase, statistic: welch-log}", EXPECT_INCREASE, 0, SPEC_STAT_WELCH_LOG },
	};
	static const struct {
		const char *x, *err;
	} bad[] = {
		{ "{direction: increase, mde: 5%, min: 5%}",
		  "t.yaml:13:52: give one of 'mde', 'min' or 'within': 'mde' is already given at 13:43" },
		{ "{direction: unchanged, within: 2%, mde: 2%}",
		  "t.yaml:13:56: give one of 'mde', 'min' or 'within': 'within' is already given at 13:47" },
		{ "{direction: increase, mde: five}", "t.yaml:13:43: mde must be a positive percentage such as 5%" },
		{ "{direction: increase, mde: -5%}", "t.yaml:13:43: mde must be a positive percentage such as 5%" },
		{ "{direction: increase, statistic: t-test}",
		  "t.yaml:13:49: statistic must be welch-log, mann-whitney or bootstrap, not 't-test'" },
		{ "{direction: increase, statistics: bootstrap}",
		  "t.yaml:13:38: unknown key 'statistics' in an expectation (did you mean 'statistic'?)" },
		{ "{direction: increase, min: 5%, within: 2%, mde: 1%}",
		  "t.yaml:13:64: give one of 'mde', 'min' or 'within': 'min' is already given at 13:43" },
	};

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(ok); i++) {
		struct spec *s = NULL;
		char *yaml = xasprintf(EXPECT("%s"), ok[i].x);
		const struct spec_expect *x = &load_exp(yaml, &s)->jobs[0].expect[0];

		assert_int_equal(x->dir, ok[i].dir);
		assert_true(x->has_effect == (ok[i].effect > 0));
		assert_true(x->effect > ok[i].effect - 1e-9 && x->effect < ok[i].effect + 1e-9);
		assert_int_equal(x->statistic, ok[i].statistic);
		spec_free(s);
		free(yaml);
	}
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		char *yaml = xasprintf(EXPECT("%s"), bad[i].x);

		assert_errors(yaml, bad[i].err);
		free(yaml);
	}
}

/* engine: where the boots run (issue 26). */
static void test_spec_engine(void **state)
{
	static const char *const all =
		"version: 1\n"
		"vars: {part: batch}\n"
		"engine:\n"
		"  type: slurm\n"
		"  partition: ${part}\n"
		"  constraint: \"skylake&numa2\"\n"
		"  account: kern\n"
		"  qos: normal\n"
		"  reservation: maint\n"
		"  time: 2h\n"
		"  tasks: 8\n"
		"  spool: /shared/lab\n"
		"  retries: 3\n"
		"  poll: 30s\n"
		"  sbatch:\n"
		"    - --gres=gpu:1\n"
		"    - --exclusive\n"
		"  lab: /opt/lab/bin/lab\n";
	struct spec *s = NULL;
	const struct spec_engine *e;
	char *errs = load(all, &s);

	(void)state;
	assert_string_equal(errs, "");
	free(errs);
	e = &s->engine;
	assert_true(e->declared);
	assert_int_equal(e->type, SPEC_ENGINE_SLURM);
	assert_string_equal(e->pos.file, "t.yaml");
	assert_int_equal(e->pos.line, 3);
	assert_int_equal(e->pos.col, 1);
	assert_string_equal(e->partition, "batch"); /* ${vars} as everywhere */
	assert_string_equal(e->constraint, "skylake&numa2");
	assert_string_equal(e->account, "kern");
	assert_string_equal(e->qos, "normal");
	assert_string_equal(e->reservation, "maint");
	assert_int_equal(e->time_limit_sec, 7200);
	assert_int_equal(e->max_tasks, 8);
	assert_string_equal(e->spool, "/shared/lab");
	assert_int_equal(e->retries, 3);
	assert_int_equal(e->poll_sec, 30);
	assert_int_equal(e->sbatch.n, 2);
	assert_string_equal(e->sbatch.v[0], "--gres=gpu:1");
	assert_string_equal(e->sbatch.v[1], "--exclusive");
	assert_string_equal(e->lab, "/opt/lab/bin/lab");
	spec_free(s);

	/* no section: local, with the defaults a later section would have */
	errs = load("version: 1\n", &s);
	assert_string_equal(errs, "");
	free(errs);
	e = &s->engine;
	assert_false(e->declared);
	assert_int_equal(e->type, SPEC_ENGINE_LOCAL);
	assert_null(e->partition);
	assert_null(e->spool);
	assert_null(e->lab);
	assert_int_equal(e->sbatch.n, 0);
	assert_int_equal(e->time_limit_sec, 0);
	assert_int_equal(e->max_tasks, 0);
	assert_int_equal(e->retries, 2);
	assert_int_equal(e->poll_sec, 15);
	spec_free(s);

	/* a section without type is slurm; the defaults stay */
	errs = load("version: 1\nengine: {spool: /s, sbatch: --exclusive, time: 0}\n", &s);
	assert_string_equal(errs, "");
	free(errs);
	e = &s->engine;
	assert_true(e->declared);
	assert_int_equal(e->type, SPEC_ENGINE_SLURM);
	assert_int_equal(e->retries, 2);
	assert_int_equal(e->poll_sec, 15);
	assert_int_equal(e->time_limit_sec, 0);
	assert_int_equal(e->sbatch.n, 1);
	spec_free(s);

	/* type: local needs no spool and keeps the other keys (checked, unused) */
	errs = load("version: 1\nengine: {type: local, partition: batch}\n", &s);
	assert_string_equal(errs, "");
	free(errs);
	assert_true(s->engine.declared);
	assert_int_equal(s->engine.type, SPEC_ENGINE_LOCAL);
	assert_string_equal(s->engine.partition, "batch");
	spec_free(s);
}

/* Load `yaml` named `name`; the engine's spool. */
static char *engine_spool(const char *name, const char *yaml)
{
	struct diags d = { 0 };
	struct spec *s = NULL;
	char *spool;

	assert_int_equal(spec_load_buffer(name, yaml, strlen(yaml), &memonly, &s, &d), 0);
	diags_release(&d);
	spool = xstrdup(s->engine.spool);
	spec_free(s);
	return spool;
}

/* A relative spool is its file's folder's, made absolute; ~/ is the user's home. */
static void test_spec_engine_spool(void **state)
{
	char *cwd = getcwd(NULL, 0);
	char *got, *want;

	(void)state;
	assert_non_null(cwd);
	got = engine_spool("/etc/lab/lab.yaml", "version: 1\nengine: {spool: spool}\n");
	assert_string_equal(got, "/etc/lab/spool");
	free(got);
	got = engine_spool("/etc/lab/lab.yaml", "version: 1\nengine: {spool: /shared/lab/}\n");
	assert_string_equal(got, "/shared/lab/");
	free(got);
	got = engine_spool("t.yaml", "version: 1\nengine: {spool: sp/ool}\n");
	want = xasprintf("%s/sp/ool", cwd);
	assert_string_equal(got, want);
	free(got);
	free(want);
	got = engine_spool("proj/t.yaml", "version: 1\nengine: {spool: spool}\n");
	want = xasprintf("%s/proj/spool", cwd);
	assert_string_equal(got, want);
	free(got);
	free(want);
	setenv("HOME", "/home/u", 1);
	got = engine_spool("/etc/lab/lab.yaml", "version: 1\nengine: {spool: ~/spool}\n");
	assert_string_equal(got, "/home/u/spool");
	free(got);
	free(cwd);
}

/* What a snapshot's lab.yaml may name: the listed files, and the folders of them, by name alone. */
static void test_spec_confine_names(void **state)
{
	static const char *const files[] = { "lab.yaml", "kernels/p/0001.patch", "kernels/c.config" };
	static const char *const outside[] = { "/etc/passwd", "../x", "kernels/../lab.yaml", "../../../../etc/passwd",
					       "kernels/./c.config", "~/x", "kernels//c.config", "" };
	struct spec_confine cf, sub;

	(void)state;
	spec_confine_init(&cf, ".", files, ELEMENTSOF(files));
	assert_null(spec_confine_refuses(&cf, "lab.yaml", false));
	assert_null(spec_confine_refuses(&cf, "kernels/p/0001.patch", false));
	assert_null(spec_confine_refuses(&cf, "./kernels/p/0001.patch", false));
	assert_null(spec_confine_refuses(&cf, "kernels/p", true));
	assert_null(spec_confine_refuses(&cf, "kernels/p/", true));
	assert_null(spec_confine_refuses(&cf, "kernels", true));
	assert_string_equal(spec_confine_refuses(&cf, "kernels/p/0002.patch", false), "not a file of the run's snapshot");
	assert_string_equal(spec_confine_refuses(&cf, "kernels/q", true), "not a folder of the run's snapshot");
	assert_string_equal(spec_confine_refuses(&cf, "kernels/p", false), "not a file of the run's snapshot");
	assert_string_equal(spec_confine_refuses(&cf, "lab.yaml", true), "not a folder of the run's snapshot");
	for (size_t i = 0; i < ELEMENTSOF(outside); i++)
		if (!spec_confine_refuses(&cf, outside[i], false) || !spec_confine_refuses(&cf, outside[i], true))
			fail_msg("'%s' taken as inside the snapshot", outside[i]);
	assert_string_equal(spec_confine_refuses(&cf, "/etc", true), "not a path inside the run's snapshot");
	spec_confine_release(&cf);

	/* a root other than "." (lab.yaml read as proj/lab.yaml) */
	spec_confine_init(&sub, "proj/", files, ELEMENTSOF(files));
	assert_null(spec_confine_refuses(&sub, "proj/kernels/c.config", false));
	assert_non_null(spec_confine_refuses(&sub, "kernels/c.config", false));
	assert_non_null(spec_confine_refuses(&sub, "projx/kernels/c.config", false));
	assert_non_null(spec_confine_refuses(&sub, "proj/../proj/kernels/c.config", false));
	spec_confine_release(&sub);
}

/* A snapshot's lab.yaml naming the host's files: each refused where it is written; a project's: as before. */
static void test_spec_confine_refused(void **state)
{
	static const char *const files[] = { "lab.yaml", "kernels/p/0001.patch", "kernels/c.config", "inc.yaml" };
	static const char *const yaml = "version: 1\n"
					"include: /etc/lab-host.yaml\n"
					"settings: {workloads: ../workloads}\n"
					"sources: {s: {type: debian, package: linux-source-6.1}}\n"
					"kernels:\n"
					"  a:\n"
					"    source: s\n"
					"    patches: [kernels/p/0001.patch, /abs/x.patch, ../y.patch]\n"
					"  b:\n"
					"    from: a\n"
					"    patches: /abs/series\n"
					"    sweep: [1]\n"
					"  c:\n"
					"    from: a\n"
					"    patches: kernels/p\n"
					"    config: [kernels/c.config, ~/.config]\n"
					"images:\n"
					"  i:\n"
					"    recipe: /etc/recipe.yaml\n";
	static const char *const want[] = {
		"lab.yaml:2:10: refused: include '/etc/lab-host.yaml' is not a path inside the run's snapshot",
		"lab.yaml:3:23: refused: settings.workloads '../workloads' is not a path inside the run's snapshot",
		"lab.yaml:8:37: refused: patch '/abs/x.patch' is not a path inside the run's snapshot",
		"lab.yaml:8:51: refused: patch '../y.patch' is not a path inside the run's snapshot",
		"lab.yaml:11:14: refused: patch folder '/abs/series' is not a path inside the run's snapshot",
		"lab.yaml:16:32: refused: config fragment '~/.config' is not a path inside the run's snapshot",
		"lab.yaml:19:13: refused: image recipe '/etc/recipe.yaml' is not a path inside the run's snapshot",
	};
	struct spec_confine cf;
	struct spec_load_opts o = { .no_include = true, .no_filesystem = true, .confine = &cf };
	struct diags d = { 0 };
	struct strbuf sb = STRBUF_INIT;
	struct spec *s = NULL;
	size_t refused = 0;

	(void)state;
	setenv("HOME", "/home/u", 1);
	spec_confine_init(&cf, ".", files, ELEMENTSOF(files));
	assert_true(spec_load_buffer("lab.yaml", yaml, strlen(yaml), &o, &s, &d) < 0);
	diags_sort(&d);
	diags_format(&d, &sb);
	for (size_t i = 0; i < ELEMENTSOF(want); i++)
		if (!strstr(sb.buf, want[i]))
			fail_msg("expected\n  %s\ngot:\n%s", want[i], sb.buf);
	for (const char *p = sb.buf; (p = strstr(p, "refused: ")); p++)
		refused++;
	assert_int_equal(refused, ELEMENTSOF(want));
	/* a refused series is not also "no patches" for its sweep; what is listed is not refused */
	assert_null(strstr(sb.buf, "sweeps a patch series"));
	assert_null(strstr(sb.buf, "kernels/p/0001.patch"));
	assert_null(strstr(sb.buf, "kernels/c.config"));
	strbuf_release(&sb);
	diags_release(&d);
	spec_confine_release(&cf);

	/* a user's own project names what it likes */
	o.confine = NULL;
	assert_true(spec_load_buffer("lab.yaml", yaml, strlen(yaml), &o, &s, &d) < 0); /* include is off here */
	diags_format(&d, &sb);
	assert_null(strstr(sb.buf, "refused"));
	assert_non_null(strstr(sb.buf, "lab.yaml:2:10: include is not allowed here"));
	strbuf_release(&sb);
	diags_release(&d);
}

/* Every error alone, at its FILE:LINE:COL: an engine section from line 2. */
#define ENGINE(body) "version: 1\nengine:\n" body

static void test_spec_engine_errors(void **state)
{
	static const struct {
		const char *yaml, *err;
	} cases[] = {
		{ ENGINE("  spool: /s\n  partiton: batch\n"),
		  "t.yaml:4:3: unknown key 'partiton' in engine (did you mean 'partition'?)\n" },
		{ ENGINE("  spool: /s\n  nodes: 4\n"), "t.yaml:4:3: unknown key 'nodes' in engine\n" },
		{ ENGINE("  type: slurmm\n  spool: /s\n"),
		  "t.yaml:3:9: engine.type must be local or slurm, not 'slurmm' (did you mean 'slurm'?)\n" },
		/* a bad type is one error, not a missing spool too */
		{ ENGINE("  type: pbs\n"), "t.yaml:3:9: engine.type must be local or slurm, not 'pbs'\n" },
		{ ENGINE("  type: [slurm]\n  spool: /s\n"), "t.yaml:3:9: engine.type must be a scalar, not a sequence\n" },
		{ ENGINE("  partition: batch\n"),
		  "t.yaml:2:1: engine: type slurm needs spool: (a directory the head and every node see)\n" },
		{ ENGINE("  type: slurm\n  spool:\n"), "t.yaml:4:9: engine.spool must not be empty\n" },
		{ "version: 1\nengine: slurm\n", "t.yaml:2:9: engine must be a mapping, not a scalar\n" },
		{ ENGINE("  spool: /s\n  time: soon\n"),
		  "t.yaml:4:9: engine.time must be a duration such as 30s, 5m or 1h30m, not 'soon'\n" },
		{ ENGINE("  spool: /s\n  time: 30s\n"),
		  "t.yaml:4:9: engine.time must be at least 1m (Slurm counts minutes), or 0 for the partition's limit, "
		  "not '30s'\n" },
		{ ENGINE("  spool: /s\n  poll: 1h30m\n"), "t.yaml:4:9: engine.poll must be from 1s to 1h, not '1h30m'\n" },
		{ ENGINE("  spool: /s\n  poll: 500ms\n"), "t.yaml:4:9: engine.poll must be from 1s to 1h, not '500ms'\n" },
		{ ENGINE("  spool: /s\n  poll: often\n"),
		  "t.yaml:4:9: engine.poll must be a duration such as 30s, 5m or 1h30m, not 'often'\n" },
		{ ENGINE("  spool: /s\n  partition: -x\n"),
		  "t.yaml:4:14: engine.partition '-x' must not start with '-' or contain spaces or control characters: "
		  "it becomes an sbatch argument\n" },
		{ ENGINE("  spool: /s\n  account: \"a b\"\n"),
		  "t.yaml:4:12: engine.account 'a b' must not start with '-' or contain spaces or control characters" },
		{ ENGINE("  spool: /s\n  qos: \"hi\\x01\"\n"),
		  "t.yaml:4:8: engine.qos 'hi\\x01' must not start with '-' or contain spaces or control characters" },
		{ ENGINE("  spool: /s\n  sbatch:\n    - --gres=gpu:1\n    - -N2\n"),
		  "t.yaml:6:7: engine.sbatch option '-N2' must be one sbatch long option such as --gres=gpu:1 "
		  "(starting with '--', no control characters)\n" },
		{ ENGINE("  spool: /s\n  sbatch: [\"--\"]\n"), "t.yaml:4:12: engine.sbatch option '--' must be one" },
		{ ENGINE("  spool: /s\n  sbatch: exclusive\n"), "t.yaml:4:11: engine.sbatch option 'exclusive' must be one" },
		{ ENGINE("  spool: /s\n  sbatch: {gres: gpu}\n"),
		  "t.yaml:4:11: engine.sbatch must be a sequence, not a mapping\n" },
		{ ENGINE("  spool: /s\n  lab: bin/lab\n"),
		  "t.yaml:4:8: engine.lab must be an absolute path (lab's executable on the nodes), not 'bin/lab'\n" },
		{ ENGINE("  spool: /s\n  tasks: -1\n"),
		  "t.yaml:4:10: engine.tasks must be a whole number from 0 to 1000000, not '-1'\n" },
		{ ENGINE("  spool: /s\n  retries: 101\n"),
		  "t.yaml:4:12: engine.retries must be a whole number from 0 to 100, not '101'\n" },
		{ ENGINE("  spool: \"${nope}\"\n"), "t.yaml:3:10: undefined variable 'nope'\n" },
	};

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
		char *got = load(cases[i].yaml, NULL);
		size_t n = strlen(cases[i].err);

		/* the whole output when the case ends with a newline, else its start */
		if (cases[i].err[n - 1] == '\n' ? strcmp(got, cases[i].err) != 0 : strncmp(got, cases[i].err, n) != 0)
			fail_msg("case %zu: expected\n  %s\ngot:\n%s", i, cases[i].err, got);
		free(got);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_node_positions),
		cmocka_unit_test(test_node_alias_and_merge),
		cmocka_unit_test(test_node_anchor_on_merge),
		cmocka_unit_test(test_node_alias_to_dropped),
		cmocka_unit_test(test_node_long_key),
		cmocka_unit_test(test_node_billion_laughs),
		cmocka_unit_test(test_node_errors),
		cmocka_unit_test(test_spec_good),
		cmocka_unit_test(test_spec_numa_rules),
		cmocka_unit_test(test_spec_topology_timing),
		cmocka_unit_test(test_spec_kernels),
		cmocka_unit_test(test_spec_vars),
		cmocka_unit_test(test_spec_hosts),
		cmocka_unit_test(test_spec_top),
		cmocka_unit_test(test_spec_decide),
		cmocka_unit_test(test_spec_decide_errors),
		cmocka_unit_test(test_spec_placement),
		cmocka_unit_test(test_spec_expect_mde),
		cmocka_unit_test(test_spec_engine),
		cmocka_unit_test(test_spec_engine_spool),
		cmocka_unit_test(test_spec_engine_errors),
		cmocka_unit_test(test_spec_confine_names),
		cmocka_unit_test(test_spec_confine_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
