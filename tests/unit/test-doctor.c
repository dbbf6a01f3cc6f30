/* SPDX-License-Identifier: MIT */
/* lab doctor's checks from a described machine (no probing) and its pure
 * formatters: a ready KVM machine, and one with TCG, no libvirt, no
 * mmdebstrap and a small disk. */
#include <stdlib.h>
#include "unit.h"
#include "doctor/doctor.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/strbuf.h"

static char *have_all(void *userdata, const char *prog)
{
	(void)userdata;
	return xasprintf("/usr/bin/%s", prog);
}

/* everything but what userdata names (space separated, padded) */
static char *have_but(void *userdata, const char *prog)
{
	char pad[64];

	snprintf(pad, sizeof(pad), " %s ", prog);
	return strstr((const char *)userdata, pad) ? NULL : xasprintf("/usr/bin/%s", prog);
}

#define GIB (1024ULL * 1024 * 1024)

static void run(const struct doctor_machine *m, const char *txt, const char *js, enum doctor_status want)
{
	struct doctor_check *c = NULL;
	struct strbuf t = STRBUF_INIT, j = STRBUF_INIT;
	struct json w;
	size_t n = 0;

	doctor_checks(m, &c, &n);
	assert_int_equal(doctor_worst(c, n), want);
	doctor_format_text(c, n, &t);
	assert_golden(txt, t.buf);
	if (js) {
		json_init(&w, &j, true);
		doctor_format_json(c, n, &w);
		json_finish(&w);
		assert_golden(js, j.buf);
	}
	doctor_checks_free(c, n);
	strbuf_release(&t);
	strbuf_release(&j);
}

static void test_ready(void **state)
{
	struct doctor_machine m = {
		.kvm = true, .root = true, .cgroup2 = true, .cgroup_controllers = (char *)"cpuset cpu io memory pids",
		.libvirt = (char *)"libvirt 9.0.0, QEMU 7.2.0", .cache_free = 120 * GIB,
		.cache_dir = (char *)"/var/cache/lab", .mem_total = 64 * GIB, .cpus = 32, .kernel_source = true,
		.libelf = true, .which = have_all,
	};

	(void)state;
	run(&m, "tests/data/doctor/ready.txt", NULL, DOCTOR_OK);
}

static void test_missing(void **state)
{
	struct doctor_machine m = {
		.kvm = false, .root = false, .cgroup2 = false,
		.libvirt_error = (char *)"cannot open qemu:///embed?root=/tmp/x: no QEMU driver",
		.cache_free = 3 * GIB + GIB / 2, .cache_dir = (char *)"/home/u/.cache/lab", .mem_total = 8 * GIB,
		.cpus = 1, .kernel_source = false, .libelf = true, .which = have_but,
		.userdata = (void *)" mmdebstrap ccache perf ",
	};

	(void)state;
	run(&m, "tests/data/doctor/missing.txt", "tests/data/doctor/missing.json", DOCTOR_MISSING);
}

static void test_warnings_only(void **state)
{
	/* TCG and a mid-size disk: ready, with warnings (exit 0) */
	struct doctor_machine m = {
		.kvm = false, .root = true, .cgroup2 = true, .cgroup_controllers = (char *)"cpu",
		.libvirt = (char *)"libvirt 9.0.0, QEMU 7.2.22", .cache_free = 10 * GIB, .cache_dir = (char *)"/c",
		.mem_total = 24 * GIB, .cpus = 2, .kernel_source = true, .libelf = true, .which = have_all,
	};
	struct doctor_check *c = NULL;
	struct strbuf t = STRBUF_INIT;
	size_t n = 0;

	(void)state;
	doctor_checks(&m, &c, &n);
	assert_int_equal(doctor_worst(c, n), DOCTOR_WARN);
	doctor_format_text(c, n, &t);
	assert_non_null(strstr(t.buf, "\nready, with 2 warnings\n"));
	assert_non_null(strstr(t.buf, "warn disk ("));
	assert_null(strstr(t.buf, "missing "));
	doctor_checks_free(c, n);
	strbuf_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ready),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_warnings_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
