/* SPDX-License-Identifier: MIT */
/*
 * A pool of worker processes (make -j's job slots): `ntasks` tasks handed
 * out in order to at most `nslots` forked workers at a time. A worker
 * runs ops->work in its own process (a crash or a hang takes only that
 * task), talks back in lines over a pipe (pool_send), may be answered
 * over a second channel (pool_reply, pool_recv), and ends with an exit
 * status. The parent sees each line as it arrives and each end.
 * Workers get SIGTERM when the parent dies (PR_SET_PDEATHSIG).
 *
 * Processes rather than threads: a worker boots a VM, runs commands and
 * libvirt calls that keep global state; a process keeps them apart and
 * lets the parent outlive a worker that dies.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>
#include "../util/macro.h"

struct diags;
struct strbuf;

struct pool_ops {
	/* In the worker: do `task` on `slot` (0..nslots-1); lines to the parent
	 * with pool_send(fd, ...). The return value is the worker's exit status. */
	int (*work)(void *userdata, size_t task, unsigned slot, int fd);
	/* In the parent: a line a worker sent (without its newline). */
	void (*message)(void *userdata, size_t task, unsigned slot, const char *line);
	/* In the parent: the worker of `task` ended; `status` is its exit code
	 * or 128 + the signal that killed it. */
	void (*ended)(void *userdata, size_t task, unsigned slot, pid_t pid, int status);
	void *userdata;
};

/* Run every task; returns once all workers have ended. 0, or a negative
 * errno when a worker could not be started (the tasks not started then
 * are reported ended with status -1). */
int pool_run(size_t ntasks, unsigned nslots, const struct pool_ops *ops, struct diags *d);
/* One line to the parent (a newline is added). Async-signal-unsafe. */
void pool_send(int fd, const char *fmt, ...) _printf_(2, 3);
/* In the parent: one line (a newline is added) back to the worker on
 * `slot`, which reads it with pool_recv. -EPIPE when that worker is gone. */
int pool_reply(unsigned slot, const char *line);
/* In a worker: the next line the parent sent with pool_reply, without its
 * newline; -EPIPE when the parent closed the channel. Blocks. */
int pool_recv(struct strbuf *line);
/* From a signal handler in the parent: SIGTERM to every running worker,
 * then wait for them. Async-signal-safe. */
void pool_terminate(void);
