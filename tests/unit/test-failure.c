/* SPDX-License-Identifier: MIT */
/*
 * Whose failure it is, on recorded evidence (tests/data/failures/):
 * - boot-panic.console: the test kernel booted by QEMU with no root
 *   device (VFS: Unable to mount root fs, then the panic);
 * - boot-hang.console: the same kernel told to wait for /dev/vda, which
 *   never comes (rootwait): it prints, then stops before user space;
 * - boot-userspace.console: a guest of lab's minimal image booting the
 *   test kernel into systemd;
 * - build-error.log: Kbuild compiling a module with a missing ';' against
 *   the test kernel's build.
 * Each is wrapped in the error lab records (vm.c's boot failure: the
 * reason, then the last 50 console lines; command.c's failed command: its
 * output), as a run's or a build's error holds it.
 */
#include <errno.h>
#include "unit.h"
#include "result/failure.h"
#include "util/strbuf.h"

static char *slurp(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 1 << 20) < 0)
		fail_msg("cannot read %s", path);
	return strbuf_detach(&sb, NULL);
}

/* The last n lines of text. */
static const char *tail_lines(const char *text, size_t n)
{
	const char *p = text + strlen(text);
	size_t lines = 0;

	while (p > text && lines <= n) {
		p--;
		if (*p == '\n')
			lines++;
	}
	return *p == '\n' ? p + 1 : p;
}

/* A boot failure as vm.c words it: the reason, then the console's last 50 lines. */
static char *boot_error(const char *why, const char *console_file, size_t drop_last)
{
	char *c = slurp(console_file), *t, *end;
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < drop_last; i++) {
		end = c + strlen(c);
		while (end > c && end[-1] == '\n')
			*--end = '\0';
		if ((t = strrchr(c, '\n')))
			t[1] = '\0';
	}
	strbuf_addf(&sb, "VM 'quick-2x2-1' (base on quick-2x2): %s after 41.3 s; the last console lines:\n%s", why,
		    tail_lines(c, 50));
	free(c);
	return strbuf_detach(&sb, NULL);
}

static void expect(enum failure_stage stage, const char *text, enum failure_kind kind, const char *evidence)
{
	struct failure f;

	failure_classify(stage, text, &f);
	if (f.kind != kind)
		fail_msg("classified %s, not %s: evidence '%s' in:\n%s", failure_kind_name(f.kind),
			 failure_kind_name(kind), f.evidence ? f.evidence : "(none)", text ? text : "(null)");
	if (evidence) {
		assert_non_null(f.evidence);
		if (!strstr(f.evidence, evidence))
			fail_msg("evidence '%s' does not hold '%s'", f.evidence, evidence);
	}
	failure_release(&f);
}

static void test_recorded_boots(void **state)
{
	char *e;

	(void)state;
	/* the panic: vm.c stops at the first sign, the console says why */
	e = boot_error("boot failure: the console says 'Kernel panic - not syncing'",
		       "tests/data/failures/boot-panic.console", 0);
	expect(FAILURE_AT_BOOT, e, FAILURE_PANIC, "VFS: Cannot open root device");
	free(e);
	/* the hang: silence after the kernel's lines, no user space */
	e = boot_error("the console printed nothing for 120 s", "tests/data/failures/boot-hang.console", 0);
	expect(FAILURE_AT_BOOT, e, FAILURE_HANG, "Waiting for root device /dev/vda");
	free(e);
	/* a hang with no line that names it: the kernel's own lines, then nothing */
	e = boot_error("not ready after 600 s", "tests/data/failures/boot-hang.console", 6);
	expect(FAILURE_AT_BOOT, e, FAILURE_HANG, NULL);
	free(e);
	/* user space ran, ssh never answered: not the kernel's */
	e = boot_error("not ready after 600 s", "tests/data/failures/boot-userspace.console", 0);
	expect(FAILURE_AT_BOOT, e, FAILURE_SSH, NULL);
	free(e);
	/* nothing on the console: no evidence against the kernel */
	expect(FAILURE_AT_BOOT,
	       "VM 'v' (base on quick-2x2): the console printed nothing for 120 s after 120.2 s; the last console "
	       "lines:\n(nothing)",
	       FAILURE_UNKNOWN, NULL);
}

static void test_qemu_ends(void **state)
{
	(void)state;
	expect(FAILURE_AT_BOOT,
	       "VM 'v' (base on t): the domain stopped during boot (libvirt: QEMU stopped, reason=host-signal; QEMU "
	       "said: qemu-system-x86_64: terminating on signal 9 from pid 4242) after 3.0 s; the last console "
	       "lines:\nLinux version 6.1.192\n",
	       FAILURE_QEMU, "reason=host-signal");
	expect(FAILURE_AT_BOOT,
	       "VM 'v' (base on t): the domain stopped during boot (libvirt: QEMU stopped, reason=crashed) after 3.0 "
	       "s; the last console lines:\n(nothing)",
	       FAILURE_QEMU, "reason=crashed");
	/* the guest reset itself during boot (a triple fault under -no-reboot): the kernel's */
	expect(FAILURE_AT_BOOT,
	       "VM 'v' (base on t): the domain stopped during boot (libvirt: QEMU stopped, reason=guest-reset) after "
	       "1.0 s; the last console lines:\nLinux version 6.1.192\n",
	       FAILURE_PANIC, "reason=guest-reset");
	/* a panic on the console wins over how QEMU ended */
	expect(FAILURE_AT_BOOT,
	       "the domain stopped during boot (libvirt: QEMU stopped, reason=host-signal); the last console "
	       "lines:\nKernel panic - not syncing: Attempted to kill init!\n",
	       FAILURE_PANIC, "Attempted to kill init");
}

static void test_builds(void **state)
{
	char *log = slurp("tests/data/failures/build-error.log");
	struct strbuf sb = STRBUF_INIT;

	(void)state;
	strbuf_addf(&sb, "make bzImage failed (exit status 2): make -C src O=obj bzImage\n%s", log);
	expect(FAILURE_AT_BUILD, sb.buf, FAILURE_BUILD, "broken.c:6:9: error: expected");
	strbuf_release(&sb);
	free(log);
	/* the host's trouble is not the commit's, whatever the compiler said after it */
	expect(FAILURE_AT_BUILD,
	       "make failed (exit status 2):\ngcc: fatal error: Killed signal terminated program cc1\n"
	       "compilation terminated.\nkernel/sched/fair.c:1:1: error: whatever",
	       FAILURE_HOST_MEMORY, "Killed signal terminated program cc1");
	expect(FAILURE_AT_BUILD, "kernel/fork.o: No space left on device\n", FAILURE_DISK_FULL, "No space left");
	/* a file of lab's work tree is named as the kernel tree names it */
	{
		struct failure f;

		failure_classify(FAILURE_AT_BUILD,
				 "make failed (exit status 2):\n/home/u/.cache/lab/work/271ba7fe1ae24e44/src/fs/proc/"
				 "uptime.c:12:31: error: unknown type name 'brokenstruct'\n",
				 &f);
		assert_int_equal(f.kind, FAILURE_BUILD);
		assert_string_equal(f.evidence, "fs/proc/uptime.c:12:31: error: unknown type name 'brokenstruct'");
		failure_release(&f);
		/* a user's own tree keeps its path */
		failure_classify(FAILURE_AT_BUILD, "/home/u/linux/fs/x.c:1:2: error: y\n", &f);
		assert_string_equal(f.evidence, "/home/u/linux/fs/x.c:1:2: error: y");
		failure_release(&f);
	}
	/* a build with no error line is still the build's */
	expect(FAILURE_AT_BUILD, "make failed (exit status 2)", FAILURE_BUILD, NULL);
}

static void test_runs(void **state)
{
	(void)state;
	expect(FAILURE_AT_RUN, "the run step failed (exit 3); see raw/*.log", FAILURE_WORKLOAD, "run step failed");
	expect(FAILURE_AT_RUN, "the driver failed (exit 139): /lab/run.sh: line 4: 311 Segmentation fault",
	       FAILURE_WORKLOAD_CRASH, "Segmentation fault");
	expect(FAILURE_AT_RUN,
	       "the driver failed (exit 255): ssh: connect to host 127.0.0.1 port 40022: Connection refused",
	       FAILURE_SSH, "Connection refused");
	expect(FAILURE_AT_RUN, "the driver failed (exit 255): ", FAILURE_SSH, "exit 255");
	expect(FAILURE_AT_RUN, "timeout after 300 s (the run's limit)", FAILURE_UNKNOWN, NULL);
	expect(FAILURE_AT_RUN, "the run step failed (exit 3): tar: /lab/out: No space left on device",
	       FAILURE_DISK_FULL, NULL);
	expect(FAILURE_AT_RUN, "slurm: job 17 ended NODE_FAIL on node c2", FAILURE_NODE_LOST, "NODE_FAIL");
	/* in a guest, a refused allocation may be the kernel's: a workload failure, not the host's */
	expect(FAILURE_AT_RUN, "the driver failed (exit 1): fork: Cannot allocate memory", FAILURE_WORKLOAD, NULL);
	expect(FAILURE_AT_RUN, "the guest panicked: Kernel panic - not syncing: hung_task: blocked tasks",
	       FAILURE_WORKLOAD_CRASH, "Kernel panic");
	expect(FAILURE_AT_RUN, NULL, FAILURE_UNKNOWN, NULL);
	expect(FAILURE_AT_RUN, "", FAILURE_UNKNOWN, NULL);
}

static void test_names(void **state)
{
	enum failure_kind all[] = { FAILURE_BUILD,     FAILURE_PANIC,      FAILURE_HANG,        FAILURE_WORKLOAD_CRASH,
				    FAILURE_WORKLOAD,  FAILURE_QEMU,       FAILURE_LIBVIRT,     FAILURE_SSH,
				    FAILURE_DISK_FULL, FAILURE_HOST_MEMORY, FAILURE_NODE_LOST, FAILURE_INTERRUPTED,
				    FAILURE_UNKNOWN };
	size_t kernels = 0;

	(void)state;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		enum failure_kind k;

		assert_int_equal(failure_kind_parse(failure_kind_name(all[i]), &k), 0);
		assert_int_equal(k, all[i]);
		kernels += failure_is_kernels(all[i]);
		assert_string_equal(failure_owner_name(all[i]), failure_is_kernels(all[i]) ? "kernel" : "infrastructure");
	}
	assert_int_equal(kernels, 5);
	assert_false(failure_is_kernels(FAILURE_UNKNOWN));
	{
		enum failure_kind k;

		assert_int_equal(failure_kind_parse("Panic", &k), -EINVAL);
		assert_int_equal(failure_kind_parse(NULL, &k), -EINVAL);
	}
}

/* Hostile text: control bytes and long lines in the evidence come out printable and bounded. */
static void test_hostile(void **state)
{
	struct strbuf sb = STRBUF_INIT;
	struct failure f;

	(void)state;
	for (int i = 0; i < 2000; i++)
		strbuf_addch(&sb, 'x');
	strbuf_addstr(&sb, "\x1b[31mKernel panic - not syncing\x07\r");
	for (int i = 0; i < 2000; i++)
		strbuf_addch(&sb, 'y');
	failure_classify(FAILURE_AT_BOOT, sb.buf, &f);
	assert_int_equal(f.kind, FAILURE_PANIC);
	assert_non_null(f.evidence);
	assert_true(strlen(f.evidence) <= 300);
	for (const char *p = f.evidence; *p; p++)
		assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
	failure_release(&f);
	strbuf_release(&sb);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recorded_boots), cmocka_unit_test(test_qemu_ends), cmocka_unit_test(test_builds),
		cmocka_unit_test(test_runs),           cmocka_unit_test(test_names),     cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
