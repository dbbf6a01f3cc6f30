/* SPDX-License-Identifier: MIT */
/*
 * Whose failure it is: a failed build, boot or run, classified from what
 * lab recorded of it (the error it stored, which for a boot holds the last
 * console lines, and for a build the compiler's output).
 *
 * The kernel's failures are evidence against a commit (a bisect may look
 * for the first commit that has one): it does not build, it panics, it
 * hangs with the console showing the kernel stuck, a workload crashes on
 * it. Infrastructure's failures say nothing about the commit: QEMU killed
 * by a signal or a host error, libvirt and ssh errors, a full disk, a lost
 * cluster node. They are retried, up to a limit, and never counted against
 * a commit.
 *
 * A failure with no evidence either way (an empty console, an error lab
 * does not know) is infrastructure's: a wrong "the kernel's" sends a
 * bisect to the wrong commit; a wrong "infrastructure's" costs a retry and
 * a skipped commit.
 *
 * Pure; nothing here prints.
 */
#pragma once

#include <stdbool.h>

enum failure_stage {
	FAILURE_AT_BUILD, /* building the kernel */
	FAILURE_AT_BOOT,  /* booting it, until ssh answered */
	FAILURE_AT_RUN,   /* running a workload on it */
};

enum failure_kind {
	/* the kernel's */
	FAILURE_BUILD,          /* it does not build: the compiler's or the linker's first error */
	FAILURE_PANIC,          /* a panic, an oops, a BUG on the console */
	FAILURE_HANG,           /* the console shows the kernel started and stuck before user space */
	FAILURE_WORKLOAD_CRASH, /* a workload killed by a signal, or the guest died under it */
	FAILURE_WORKLOAD,       /* a workload exited with an error */
	/* infrastructure's */
	FAILURE_QEMU,           /* QEMU killed by a signal or stopped by a host error */
	FAILURE_LIBVIRT,        /* libvirt refused or lost the domain */
	FAILURE_SSH,            /* the guest reached user space and ssh did not answer, or the connection broke */
	FAILURE_DISK_FULL,      /* no space left on a device of the host */
	FAILURE_HOST_MEMORY,    /* the host ran out of memory (the compiler killed, an allocation refused) */
	FAILURE_NODE_LOST,      /* the cluster node running it was lost */
	FAILURE_INTERRUPTED,    /* the user stopped it */
	FAILURE_UNKNOWN,        /* no evidence either way */
};

struct failure {
	enum failure_kind kind;
	char *evidence; /* the line that decided it (a console line, the compiler's error), or NULL */
};

/* The kernel's (true) or infrastructure's (false). */
bool failure_is_kernels(enum failure_kind k);
/* "build", "panic", "hang", "workload-crash", "workload", "qemu", "libvirt",
 * "ssh", "disk-full", "host-memory", "node-lost", "interrupted", "unknown" */
const char *failure_kind_name(enum failure_kind k);
/* "kernel" or "infrastructure" */
const char *failure_owner_name(enum failure_kind k);
/* Its name back: 0, or -EINVAL. */
int failure_kind_parse(const char *name, enum failure_kind *ret);

/*
 * `text`: what lab recorded of the failure at `stage` (a run's error, a
 * build's log); NULL counts as empty. Fills *ret (release it with
 * failure_release()). Never fails.
 */
void failure_classify(enum failure_stage stage, const char *text, struct failure *ret);
/* A failed run's stored error (result_run.error): a boot's failure when it
 * holds the console's last lines or says the boot failed, else the run's. */
void failure_of_run(const char *error, struct failure *ret);
void failure_release(struct failure *f);
