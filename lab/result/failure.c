/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/strbuf.h"
#include "failure.h"
#include "../util/banned.h"

static const struct {
	enum failure_kind kind;
	const char *name;
	bool kernels;
} kinds[] = {
	{ FAILURE_BUILD, "build", true },
	{ FAILURE_PANIC, "panic", true },
	{ FAILURE_HANG, "hang", true },
	{ FAILURE_WORKLOAD_CRASH, "workload-crash", true },
	{ FAILURE_WORKLOAD, "workload", true },
	{ FAILURE_QEMU, "qemu", false },
	{ FAILURE_LIBVIRT, "libvirt", false },
	{ FAILURE_SSH, "ssh", false },
	{ FAILURE_DISK_FULL, "disk-full", false },
	{ FAILURE_HOST_MEMORY, "host-memory", false },
	{ FAILURE_NODE_LOST, "node-lost", false },
	{ FAILURE_INTERRUPTED, "interrupted", false },
	{ FAILURE_UNKNOWN, "unknown", false },
};

#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

bool failure_is_kernels(enum failure_kind k)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (kinds[i].kind == k)
			return kinds[i].kernels;
	return false;
}

const char *failure_kind_name(enum failure_kind k)
{
	for (size_t i = 0; i < NKINDS; i++)
		if (kinds[i].kind == k)
			return kinds[i].name;
	return "unknown";
}

const char *failure_owner_name(enum failure_kind k)
{
	return failure_is_kernels(k) ? "kernel" : "infrastructure";
}

int failure_kind_parse(const char *name, enum failure_kind *ret)
{
	for (size_t i = 0; name && i < NKINDS; i++)
		if (strcmp(kinds[i].name, name) == 0) {
			*ret = kinds[i].kind;
			return 0;
		}
	return -EINVAL;
}

void failure_release(struct failure *f)
{
	free(f->evidence);
	f->evidence = NULL;
}

struct pattern {
	const char *needle;
	enum failure_kind kind;
};

/* The host's troubles come first, at every stage: a full disk or a lost
 * node is not the commit's doing, whatever else the text says. */
static const struct pattern host_patterns[] = {
	{ "No space left on device", FAILURE_DISK_FULL },
	{ "Disk quota exceeded", FAILURE_DISK_FULL },
	{ "NODE_FAIL", FAILURE_NODE_LOST },
	{ "node lost", FAILURE_NODE_LOST },
	{ "the node was lost", FAILURE_NODE_LOST },
	{ ": interrupted after ", FAILURE_INTERRUPTED },
};

/* A build's host ran out of memory: the compiler killed, an allocation
 * refused. (In a guest the same words may be the kernel's doing.) */
static const struct pattern build_host_patterns[] = {
	{ "Killed signal terminated program", FAILURE_HOST_MEMORY },
	{ "virtual memory exhausted", FAILURE_HOST_MEMORY },
	{ "Cannot allocate memory", FAILURE_HOST_MEMORY },
	{ "out of memory allocating", FAILURE_HOST_MEMORY },
};

/* What a kernel says when it dies or stops making progress. */
static const struct pattern console_patterns[] = {
	{ "Kernel panic - not syncing", FAILURE_PANIC },
	{ "kernel BUG at", FAILURE_PANIC },
	{ "BUG: unable to handle", FAILURE_PANIC },
	{ "BUG: kernel NULL pointer", FAILURE_PANIC },
	{ "Oops: ", FAILURE_PANIC },
	{ "general protection fault", FAILURE_PANIC },
	{ "Unable to mount root fs", FAILURE_PANIC },
	{ "VFS: Cannot open root device", FAILURE_PANIC },
	{ "---[ end trace", FAILURE_PANIC },
	{ "Kernel Offset: ", FAILURE_PANIC },
	{ "watchdog: BUG: soft lockup", FAILURE_HANG },
	{ "rcu: INFO: rcu_sched self-detected stall", FAILURE_HANG },
	{ "rcu_sched detected stalls", FAILURE_HANG },
	{ "rcu: INFO: rcu_preempt detected stalls", FAILURE_HANG },
	{ "blocked for more than", FAILURE_HANG },
	{ "Watchdog detected hard LOCKUP", FAILURE_HANG },
	{ "Waiting for root device", FAILURE_HANG },
	/* lab's images: the seed's boot work failed (a sysctl the kernel refused) */
	{ "lab-seed: FAILED", FAILURE_PANIC },
};

/* Where a boot failure's console lines begin (vm.c) */
#define CONSOLE_LINES "the last console lines:\n"

/* Signs on the console that user space ran: the kernel got that far. */
static const char *const userspace_signs[] = {
	"systemd[1]:", "Welcome to ", "Reached target", "login:", "cloud-init[", "Started ", "Run /sbin/init",
	"Run /init",
};

/* Signs that the kernel itself started (the console is its, not silent firmware). */
static const char *const kernel_signs[] = {
	"Linux version ", "Command line: ", "Kernel command line:", "x86/fpu:", "Booting paravirtualized kernel",
	"smpboot: ", "Freeing unused kernel", "NET: Registered ", "PCI: ", "clocksource: ", "io scheduler ",
	"Serial: 8250", "rtc_cmos ", "EXT4-fs (", "virtio_blk ", "sched_clock: ",
};

/* The whole line of text around p, at most 300 bytes, without control
 * characters. */
static char *line_at(const char *text, const char *p)
{
	const char *b = p, *e = p;
	struct strbuf sb = STRBUF_INIT;

	while (b > text && b[-1] != '\n' && p - b < 150)
		b--;
	while (*e && *e != '\n' && e - p < 150)
		e++;
	for (const char *q = b; q < e; q++)
		if (*q != '\r')
			strbuf_addch(&sb, ((unsigned char)*q >= 0x20 && *q != 0x7f) ? *q : '?');
	return strbuf_detach(&sb, NULL);
}

static bool match(const char *text, const struct pattern *v, size_t n, struct failure *ret)
{
	const char *best = NULL;
	enum failure_kind kind = FAILURE_UNKNOWN;

	/* the earliest sign in the text: the first thing that went wrong */
	for (size_t i = 0; i < n; i++) {
		const char *p = strstr(text, v[i].needle);

		if (p && (!best || p < best)) {
			best = p;
			kind = v[i].kind;
		}
	}
	if (!best)
		return false;
	ret->kind = kind;
	ret->evidence = line_at(text, best);
	return true;
}

#define MATCH(text, table, ret) match((text), (table), sizeof(table) / sizeof((table)[0]), (ret))

static const char *any(const char *text, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *p = strstr(text, v[i]);

		if (p)
			return p;
	}
	return NULL;
}

/* The compiler's or the linker's first error in a build's output; a build
 * that failed without one is still the build's. */
static const struct pattern build_errors[] = {
	{ ": error: ", FAILURE_BUILD },    { ": fatal error: ", FAILURE_BUILD },
	{ "undefined reference to ", FAILURE_BUILD }, { ": Error ", FAILURE_BUILD },
	{ "*** No rule to make target", FAILURE_BUILD }, { "ld: ", FAILURE_BUILD },
	{ "Error: ", FAILURE_BUILD },
};

/* A workload that died of a signal. */
static const struct pattern crashes[] = {
	{ "Segmentation fault", FAILURE_WORKLOAD_CRASH }, { "core dumped", FAILURE_WORKLOAD_CRASH },
	{ "Bus error", FAILURE_WORKLOAD_CRASH },          { "Illegal instruction", FAILURE_WORKLOAD_CRASH },
	{ "Aborted", FAILURE_WORKLOAD_CRASH },            { "exit 139", FAILURE_WORKLOAD_CRASH },
	{ "exit 134", FAILURE_WORKLOAD_CRASH },           { "exit 135", FAILURE_WORKLOAD_CRASH },
	{ "exit 132", FAILURE_WORKLOAD_CRASH },
};

/* QEMU's own end ("shutting down, reason=" as libvirt's log keeps it):
 * the guest's doing, or the host's. */
static const struct pattern qemu_patterns[] = {
	{ "reason=guest-panic", FAILURE_PANIC },  { "reason=guest-reset", FAILURE_PANIC },
	{ "reason=guest-shutdown", FAILURE_PANIC }, { "triple fault", FAILURE_PANIC },
	{ "reason=host-signal", FAILURE_QEMU },   { "reason=host-error", FAILURE_QEMU },
	{ "reason=crashed", FAILURE_QEMU },       { "reason=host-qmp-quit", FAILURE_QEMU },
	{ "reason=host-ui", FAILURE_QEMU },       { "reason=destroyed", FAILURE_QEMU },
	{ "QEMU exited", FAILURE_QEMU },          { "killed by signal", FAILURE_QEMU },
	{ "terminated by signal", FAILURE_QEMU },
};

/* libvirt's and ssh's own errors */
static const struct pattern infra_patterns[] = {
	{ "libvirt: ", FAILURE_LIBVIRT },
	{ "virDomain", FAILURE_LIBVIRT },
	{ "Failed to connect socket to", FAILURE_LIBVIRT },
	{ "cannot connect to libvirt", FAILURE_LIBVIRT },
	{ "internal error:", FAILURE_LIBVIRT },
	{ "ssh: connect to host", FAILURE_SSH },
	{ "Connection refused", FAILURE_SSH },
	{ "Connection reset", FAILURE_SSH },
	{ "Connection timed out", FAILURE_SSH },
	{ "Connection closed by", FAILURE_SSH },
	{ "client_loop: send disconnect", FAILURE_SSH },
	{ "Broken pipe", FAILURE_SSH },
	{ "kex_exchange_identification", FAILURE_SSH },
	{ "Host key verification failed", FAILURE_SSH },
	{ "Permission denied (publickey", FAILURE_SSH },
};

/* The kernel's signs, in the console lines lab recorded first (the first
 * thing that went wrong there), else anywhere in the text (lab's reason
 * names what it saw). */
static bool kernel_says(const char *text, struct failure *ret)
{
	const char *console = strstr(text, CONSOLE_LINES);

	return (console && MATCH(console + strlen(CONSOLE_LINES), console_patterns, ret)) ||
	       MATCH(text, console_patterns, ret);
}

static void boot_failure(const char *text, struct failure *ret)
{
	const char *p;

	if (kernel_says(text, ret))
		return;
	if (MATCH(text, qemu_patterns, ret))
		return;
	if (strstr(text, "not the variant's")) {
		/* another kernel answered: the boot path took the wrong kernel */
		p = strstr(text, "not the variant's");
		ret->kind = FAILURE_UNKNOWN;
		ret->evidence = line_at(text, p);
		return;
	}
	if ((p = any(text, userspace_signs, sizeof(userspace_signs) / sizeof(userspace_signs[0])))) {
		/* user space ran, and ssh did not answer: not the kernel's */
		ret->kind = FAILURE_SSH;
		ret->evidence = line_at(text, p);
		return;
	}
	if ((p = any(text, kernel_signs, sizeof(kernel_signs) / sizeof(kernel_signs[0])))) {
		/* the kernel started, printed, and never reached user space */
		ret->kind = FAILURE_HANG;
		ret->evidence = line_at(text, p);
		return;
	}
	if (MATCH(text, infra_patterns, ret))
		return;
	ret->kind = FAILURE_UNKNOWN;
}

static void run_failure(const char *text, struct failure *ret)
{
	const char *p;

	/* the guest died under the workload: its console, or QEMU's end */
	if (kernel_says(text, ret)) {
		if (ret->kind == FAILURE_HANG)
			return;
		ret->kind = FAILURE_WORKLOAD_CRASH;
		return;
	}
	if (MATCH(text, qemu_patterns, ret)) {
		if (ret->kind == FAILURE_PANIC)
			ret->kind = FAILURE_WORKLOAD_CRASH;
		return;
	}
	if (MATCH(text, infra_patterns, ret))
		return;
	if (MATCH(text, crashes, ret))
		return;
	/* ssh's own failure is its exit status 255: the connection, not the workload */
	if ((p = strstr(text, "(exit 255)"))) {
		ret->kind = FAILURE_SSH;
		ret->evidence = line_at(text, p);
		return;
	}
	if ((p = strstr(text, " step failed (exit ")) || (p = strstr(text, "the driver failed (exit ")) ||
	    (p = strstr(text, "a parser printed a malformed line"))) {
		ret->kind = FAILURE_WORKLOAD;
		ret->evidence = line_at(text, p);
		return;
	}
	/* a run past its time limit, a catalogue that did not ship, a guest
	 * that answers with another kernel: no evidence against the commit */
	ret->kind = FAILURE_UNKNOWN;
}

/* A compiler's line about a file of lab's work tree (<cache>/work/<16 hex>/src/fs/x.c:1:2: error: ...)
 * names the file as the kernel tree does (fs/x.c:1:2: error: ...), whatever machine built it. */
static void tree_relative(char *line)
{
	char *w = line;

	while (w && (w = strstr(w, "/work/"))) {
		const char *k = w + 6;

		if (strspn(k, "0123456789abcdef") == 16 && strncmp(k + 16, "/src/", 5) == 0) {
			char *start = w;

			while (start > line && start[-1] != ' ' && start[-1] != '\'' && start[-1] != '"')
				start--;
			memmove(start, k + 21, strlen(k + 21) + 1);
			w = start;
		} else {
			w += 6;
		}
	}
}

void failure_classify(enum failure_stage stage, const char *text, struct failure *ret)
{
	*ret = (struct failure){ .kind = FAILURE_UNKNOWN };
	if (!text)
		text = "";
	if (MATCH(text, host_patterns, ret))
		return;
	switch (stage) {
	case FAILURE_AT_BUILD:
		if (!MATCH(text, build_host_patterns, ret) && !MATCH(text, build_errors, ret))
			ret->kind = FAILURE_BUILD;
		tree_relative(ret->evidence);
		return;
	case FAILURE_AT_BOOT:
		boot_failure(text, ret);
		return;
	case FAILURE_AT_RUN:
		run_failure(text, ret);
		return;
	}
}

void failure_of_run(const char *error, struct failure *ret)
{
	static const char *const boot[] = { CONSOLE_LINES, "boot failure: ", "during boot", "not ready after " };
	bool at_boot = error && any(error, boot, sizeof(boot) / sizeof(boot[0]));

	failure_classify(at_boot ? FAILURE_AT_BOOT : FAILURE_AT_RUN, error, ret);
}
