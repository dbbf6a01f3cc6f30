/* SPDX-License-Identifier: MIT */
/* Environment fingerprints: the rule (what matters, what is noted), JSON in
 * and out, hostile JSON, the probes' parsers, mixed environments in a
 * report, and lab compare's model and formatters (goldens). */
#include <errno.h>
#include "unit.h"
#include "result/fingerprint.h"
#include "result/mixed.h"
#include "result/report.h"
#include "result/compare-inputs.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/json.h"

static void fp_fill(struct fingerprint *fp, const char *host, const char *model, const char *config)
{
	fingerprint_set(fp, FP_HOST, host);
	fingerprint_set(fp, FP_CPU_MODEL, model);
	fingerprint_set(fp, FP_CPUS, "2");
	fingerprint_set(fp, FP_MICROCODE, "0x1");
	fingerprint_set(fp, FP_HOST_KERNEL, "6.1.0-28-amd64");
	fingerprint_set(fp, FP_QEMU, "7.2.13");
	fingerprint_set(fp, FP_LIBVIRT, "9.0.0");
	fingerprint_set(fp, FP_ACCEL, "tcg");
	fingerprint_set(fp, FP_TIMING, "host");
	fingerprint_set(fp, FP_TOPOLOGY, "quick-2x1");
	fingerprint_set(fp, FP_TOPOLOGY_DIGEST, "aa11");
	fingerprint_set(fp, FP_PINNING, "vcpus floating, emulator auto");
	fingerprint_set(fp, FP_KERNEL_CONFIG, config);
	fingerprint_set(fp, FP_IMAGE, "ee22");
	fingerprint_set(fp, FP_LAB, "0.1");
}

static void test_diff_rules(void **state)
{
	struct fingerprint a = { 0 }, b = { 0 };
	struct fp_diff d[FP_NFIELDS];
	size_t m, n;
	struct strbuf why = STRBUF_INIT;

	(void)state;
	fp_fill(&a, "hostA", "AMD EPYC 7B13", "c0");
	fp_fill(&b, "hostA", "AMD EPYC 7B13", "c0");
	/* a git source's kernel: built from this commit */
	fingerprint_set(&a, FP_KERNEL_COMMIT, "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00");
	fingerprint_set(&b, FP_KERNEL_COMMIT, "c0ffee00c0ffee00c0ffee00c0ffee00c0ffee00");
	assert_true(fingerprint_equal(&a, &b));
	assert_int_equal(fingerprint_diff(&a, &b, true, d, &m), 0);
	/* noted only: host, host kernel, microcode, libvirt, lab */
	fingerprint_set(&b, FP_HOST, "hostB");
	fingerprint_set(&b, FP_HOST_KERNEL, "6.12.0");
	fingerprint_set(&b, FP_MICROCODE, "0x2");
	fingerprint_set(&b, FP_LIBVIRT, "10.0.0");
	fingerprint_set(&b, FP_LAB, "0.2");
	n = fingerprint_diff(&a, &b, true, d, &m);
	assert_int_equal(n, 5);
	assert_int_equal(m, 0);
	/* each field that matters */
	for (enum fp_field f = 0; f < FP_NFIELDS; f++) {
		struct fingerprint c = { 0 };

		fingerprint_copy(&c, &a);
		fingerprint_set(&c, f, "other");
		n = fingerprint_diff(&a, &c, false, d, &m);
		/* between variants, configs and commits differ by design */
		assert_int_equal(n, f != FP_KERNEL_CONFIG && f != FP_KERNEL_COMMIT);
		if (n)
			assert_int_equal(d[0].field, f);
		assert_int_equal(m, f == FP_CPU_MODEL || f == FP_CPUS || f == FP_QEMU || f == FP_ACCEL ||
					    f == FP_TIMING || f == FP_TOPOLOGY_DIGEST || f == FP_PINNING || f == FP_IMAGE);
		/* the kernel config and commit matter between runs of the same variant only */
		n = fingerprint_diff(&a, &c, true, d, &m);
		assert_int_equal(m, fp_field_weight(f) != FP_NOTED);
		fingerprint_release(&c);
	}
	/* unknown on one side: noted, never refused */
	fingerprint_set(&b, FP_CPU_MODEL, NULL);
	fingerprint_set(&b, FP_QEMU, "8.2.2");
	n = fingerprint_diff(&a, &b, false, d, &m);
	assert_int_equal(m, 1);
	assert_int_equal(d[0].field, FP_QEMU); /* what matters first */
	assert_true(d[0].matters);
	fp_diff_why(d, n, &why);
	assert_string_equal(why.buf, "qemu version differs");
	strbuf_release(&why);
	fingerprint_release(&a);
	fingerprint_release(&b);
}

static void test_json_round_trip(void **state)
{
	struct fingerprint a = { 0 }, b = { 0 };
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	char *err = NULL;

	(void)state;
	fp_fill(&a, "hostA", "Intel(R) Xeon(R) \"Gold\" 6338 \\ CPU", NULL);
	fingerprint_format_json(&a, &sb);
	assert_non_null(strstr(sb.buf, "\"kernel_config\": null"));
	assert_int_equal(fingerprint_parse(sb.buf, sb.len, &b, &err), 0);
	assert_true(fingerprint_equal(&a, &b));
	assert_null(b.f[FP_KERNEL_CONFIG]);
	fingerprint_format_json(&b, &sb2);
	assert_string_equal(sb.buf, sb2.buf);
	fingerprint_release(&a);
	fingerprint_release(&b);
	strbuf_release(&sb);
	strbuf_release(&sb2);
	/* missing members are unknown */
	assert_int_equal(fingerprint_parse("{\"accel\":\"kvm\"}", 15, &b, &err), 0);
	assert_string_equal(b.f[FP_ACCEL], "kvm");
	assert_null(b.f[FP_CPU_MODEL]);
	fingerprint_release(&b);
}

static void test_hostile_json(void **state)
{
	static const char *const bad[] = {
		"[]", "\"x\"", "{\"cpu_model\": 3}", "{\"cpu_model\": {}}", "{\"cpu_model\": [\"a\"]}",
		"{\"cpus\": true}", "{\"nope\": \"x\"}", "{\"qemu\": \"a\\nb\"}", "{\"qemu\": \"a\", \"qemu\": \"b\"}",
		"{", "",
	};
	struct fingerprint fp;
	_cleanup_free_ char *huge = NULL;
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		char *err = NULL;

		assert_int_equal(fingerprint_parse(bad[i], strlen(bad[i]), &fp, &err), -EINVAL);
		assert_non_null(err);
		free(err);
	}
	strbuf_addstr(&sb, "{\"cpu_model\": \"");
	strbuf_addchars(&sb, 'x', FP_MAX_VALUE + 1);
	strbuf_addstr(&sb, "\"}");
	{
		char *err = NULL;

		assert_int_equal(fingerprint_parse(sb.buf, sb.len, &fp, &err), -EINVAL);
		assert_non_null(strstr(err, "cpu_model"));
		free(err);
	}
	strbuf_release(&sb);
}

static void test_probe_parsers(void **state)
{
	static const char cpuinfo[] = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13 64-Core Processor  \n"
				      "microcode\t: 0xffffffff\n\nprocessor\t: 1\nmodel name\t: AMD EPYC 7B13 64-Core Processor\n";
	struct fingerprint fp = { 0 };
	_cleanup_free_ char *q = fingerprint_qemu_version("QEMU emulator version 7.2.13 (Debian 1:7.2+dfsg-7+deb12u7)\nCopyright\n");
	_cleanup_free_ char *l = fingerprint_libvirt_version("9.0.0\n");
	_cleanup_free_ char *none = fingerprint_qemu_version("garbage\n");

	(void)state;
	fingerprint_from_cpuinfo(&fp, cpuinfo);
	assert_string_equal(fp.f[FP_CPU_MODEL], "AMD EPYC 7B13 64-Core Processor");
	assert_string_equal(fp.f[FP_CPUS], "2");
	assert_string_equal(fp.f[FP_MICROCODE], "0xffffffff");
	assert_string_equal(q, "7.2.13");
	assert_string_equal(l, "9.0.0");
	assert_null(none);
	fingerprint_release(&fp);
}

/* Two variants, 4 runs each of one group, the given environment per variant. */
static struct result_set *fixture(const char *id, const struct fingerprint *fb, const struct fingerprint *fp,
				  double base, double patched)
{
	struct result_set *rs = result_set_new(id, "quick");
	int kb = fb ? result_add_fingerprint(rs, fb) : -1, kp = fp ? result_add_fingerprint(rs, fp) : -1;

	for (unsigned r = 1; r <= 4; r++) {
		const char *v[] = { "base", "tg-ratelimit" };

		for (size_t k = 0; k < 2; k++) {
			_cleanup_free_ char *rid = xasprintf("quick.%04u", (r - 1) * 2 + (unsigned)k + 1);
			_cleanup_free_ char *boot = xasprintf("quick.b%zu", k + 1);
			struct result_run *run = result_add_run(rs, rid, v[k], "stress-ng stressor=switch", 0, r);

			run->status = RUN_OK;
			run->boot = xstrdup(boot);
			run->boot_pos = r;
			run->fp = k ? kp : kb;
			result_add_metric(run, "stress-ng.switch.ops_per_sec", (k ? patched : base) + r * 0.5);
			result_add_metric(run, "tg.load_avg_writes", k ? 100 + r : 200 + r);
		}
	}
	return rs;
}

static void test_mixed_report(void **state)
{
	struct fingerprint a = { 0 }, b = { 0 };
	struct result_set *rs;
	struct comparison *c;
	struct strbuf t = STRBUF_INIT, js = STRBUF_INIT;
	struct report_opts o = { 0 };

	(void)state;
	fp_fill(&a, "hostA", "AMD EPYC 7B13", "c0");
	fp_fill(&b, "hostA", "AMD EPYC 7B13", "c1");
	/* two variants, different configs: that is what a variant is, not even noted */
	rs = fixture("20261202-120000-f001", &a, &b, 1000, 1100);
	c = compare_build(rs);
	assert_int_equal(c->nenv, 0);
	comparison_free(c);
	result_set_free(rs);
	/* the same variant rebuilt with another config within one group: unfair */
	rs = fixture("20261202-120000-f005", &a, &b, 1000, 1100);
	rs->runs[3].fp = rs->runs[0].fp; /* a patched run in base's environment (config c0) */
	c = compare_build(rs);
	assert_int_equal(env_pairs_matter(c->env, c->nenv), 1);
	assert_true(c->env[0].same_variant);
	assert_int_equal(c->env[0].d[0].field, FP_KERNEL_CONFIG);
	comparison_free(c);
	result_set_free(rs);
	/* the patched kernel measured on another CPU: unfair */
	fingerprint_set(&b, FP_CPU_MODEL, "Intel Xeon Gold 6338");
	rs = fixture("20261202-120000-f002", &a, &b, 1000, 1100);
	c = compare_build(rs);
	assert_int_equal(env_pairs_matter(c->env, c->nenv), 1);
	report_format_text(c, &o, &t);
	assert_golden("tests/data/compare/mixed-report.txt", t.buf);
	report_format_json(c, NULL, &js);
	assert_non_null(strstr(js.buf, "\"mixed_environments\""));
	assert_non_null(strstr(js.buf, "\"field\": \"cpu_model\""));
	comparison_free(c);
	result_set_free(rs);
	/* runs stored before fingerprints: no section */
	rs = fixture("20261202-120000-f003", NULL, NULL, 1000, 1100);
	c = compare_build(rs);
	assert_int_equal(c->nenv, 0);
	comparison_free(c);
	result_set_free(rs);
	strbuf_release(&t);
	strbuf_release(&js);
	fingerprint_release(&a);
	fingerprint_release(&b);
}

static void xcompare_case(const char *golden, const struct fingerprint *fa, const struct fingerprint *fb,
			  bool allow, size_t want_comparable_cols)
{
	struct result_set *sa = fixture("20261202-120000-aaaa", fa, fa, 1000, 1100);
	struct result_set *sb = fixture("20261202-130000-bbbb", fb, fb, 1010, 1090);
	const struct result_set *sets[] = { sa, sb };
	char *labels[2] = { 0 };
	struct xcmp_input in[2];
	struct xcmp *x;
	struct strbuf t = STRBUF_INIT, js = STRBUF_INIT;
	_cleanup_free_ char *gt = xasprintf("tests/data/compare/%s.txt", golden);
	_cleanup_free_ char *gj = xasprintf("tests/data/compare/%s.json", golden);
	size_t comparable = 0;

	xcmp_labels(sets, 2, labels);
	for (size_t i = 0; i < 2; i++)
		in[i] = (struct xcmp_input){ .label = labels[i], .rs = sets[i] };
	x = xcmp_build(in, 2, allow);
	assert_int_equal(x->columns.n, 4);
	assert_int_equal(x->ngroups, 1);
	for (size_t c = 1; c < 4; c++)
		comparable += !x->groups[0].metrics[0].cells[c].why;
	assert_int_equal(comparable, want_comparable_cols);
	/* hostB's columns against hostA's same kernel */
	assert_int_equal(x->base[2], 0);
	assert_int_equal(x->base[3], 1);
	for (size_t c = 1; c < 4; c++)
		assert_true((x->groups[0].metrics[0].cells[c].d != NULL) ==
			    (allow || !x->groups[0].metrics[0].cells[c].why));
	xcmp_format_text(x, &t);
	xcmp_format_json(x, &js);
	assert_golden(gt, t.buf);
	assert_golden(gj, js.buf);
	xcmp_free(x);
	for (size_t i = 0; i < 2; i++)
		free(labels[i]);
	result_set_free(sa);
	result_set_free(sb);
	strbuf_release(&t);
	strbuf_release(&js);
}

static void test_xcompare_goldens(void **state)
{
	struct fingerprint a = { 0 }, b = { 0 }, c = { 0 };

	(void)state;
	fp_fill(&a, "hostA", "AMD EPYC 7B13", "c0");
	fp_fill(&b, "hostB", "Intel Xeon Gold 6338", "c0");
	fp_fill(&c, "hostB", "AMD EPYC 7B13", "c0");
	fingerprint_set(&c, FP_HOST_KERNEL, "6.12.0"); /* noted only */
	xcompare_case("cpu-differs", &a, &b, false, 1);
	xcompare_case("cpu-differs-allowed", &a, &b, true, 1);
	xcompare_case("comparable", &a, &c, false, 3);
	fingerprint_release(&a);
	fingerprint_release(&b);
	fingerprint_release(&c);
}

/* run.json keeps each distinct environment once, runs name it; old files have none */
static void test_store_round_trip(void **state)
{
	struct fingerprint a = { 0 }, b = { 0 };
	struct result_set *rs, *back = NULL;
	struct strbuf sb = STRBUF_INIT, sb2 = STRBUF_INIT;
	struct diags d = { 0 };
	char *bad;

	(void)state;
	fp_fill(&a, "hostA", "AMD EPYC 7B13", "c0");
	fp_fill(&b, "hostA", "AMD EPYC 7B13", "c1");
	rs = fixture("20261202-120000-f004", &a, &b, 1000, 1100);
	rs->runs[0].fp = -1; /* one run with none */
	store_format(rs, &sb);
	assert_non_null(strstr(sb.buf, "\"fingerprints\": ["));
	assert_int_equal(store_parse(rs->id, sb.buf, sb.len, "run.json", &back, &d), 0);
	assert_int_equal(back->nfps, 2);
	assert_int_equal(back->runs[0].fp, -1);
	assert_null(result_run_fingerprint(&back->runs[0]));
	assert_true(fingerprint_equal(result_run_fingerprint(&back->runs[1]), &b));
	assert_true(fingerprint_equal(result_run_fingerprint(&back->runs[2]), &a));
	store_format(back, &sb2);
	assert_string_equal(sb.buf, sb2.buf);
	result_set_free(back);
	back = NULL;
	/* an index past the list, and a hostile fingerprint, name their place */
	bad = xstrdup(sb.buf);
	{
		char *at = strstr(bad, "\"fingerprint\": 1");

		assert_non_null(at);
		at[15] = '7';
	}
	assert_int_equal(store_parse(rs->id, bad, strlen(bad), "run.json", &back, &d), -EINVAL);
	assert_non_null(strstr(d.v[d.n - 1].msg, "'fingerprint' is out of range"));
	free(bad);
	bad = xstrdup(sb.buf);
	{
		char *at = strstr(bad, "\"cpus\": \"2\"");

		memcpy(at, "\"cpus\": 2  ", 11);
	}
	assert_int_equal(store_parse(rs->id, bad, strlen(bad), "run.json", &back, &d), -EINVAL);
	assert_non_null(strstr(d.v[d.n - 1].msg, "fingerprints[0]: 'cpus' is an integer"));
	free(bad);
	diags_release(&d);
	result_set_free(rs);
	strbuf_release(&sb);
	strbuf_release(&sb2);
	fingerprint_release(&a);
	fingerprint_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_rules),     cmocka_unit_test(test_json_round_trip),
		cmocka_unit_test(test_hostile_json),   cmocka_unit_test(test_probe_parsers),
		cmocka_unit_test(test_mixed_report),   cmocka_unit_test(test_xcompare_goldens),
		cmocka_unit_test(test_store_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
