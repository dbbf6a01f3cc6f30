/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include "../util/alloc.h"
#include "../util/diag.h"
#include "../util/strbuf.h"
#include "pool.h"
#include "../util/banned.h"

#define POOL_MAX_SLOTS 256

/* The running workers, for pool_terminate() from a signal handler. */
static volatile pid_t running[POOL_MAX_SLOTS];

struct slot {
	pid_t pid;
	int fd; /* read end; -1 at EOF */
	size_t task;
	struct strbuf buf;
};

void pool_send(int fd, const char *fmt, ...)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	va_list ap;
	size_t off = 0;

	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	/* one line per message: a newline inside would split it */
	for (size_t i = 0; i < sb.len; i++)
		if (sb.buf[i] == '\n')
			sb.buf[i] = ' ';
	strbuf_addch(&sb, '\n');
	while (off < sb.len) {
		ssize_t w = write(fd, sb.buf + off, sb.len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		off += (size_t)w;
	}
}

void pool_terminate(void)
{
	for (size_t i = 0; i < POOL_MAX_SLOTS; i++)
		if (running[i] > 0)
			kill(running[i], SIGTERM);
	for (size_t i = 0; i < POOL_MAX_SLOTS; i++)
		if (running[i] > 0) {
			waitpid(running[i], NULL, 0);
			running[i] = 0;
		}
}

static int start(struct slot *s, unsigned k, size_t task, const struct pool_ops *ops)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		int rc;

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(128 + SIGTERM);
		close(p[0]);
		rc = ops->work(ops->userdata, task, k, p[1]);
		fflush(stdout);
		fflush(stderr);
		/* no atexit handlers: they belong to the parent */
		_exit(rc);
	}
	close(p[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	s->pid = pid;
	s->fd = p[0];
	s->task = task;
	running[k] = pid;
	return 0;
}

static void deliver(struct slot *s, unsigned k, const struct pool_ops *ops, bool flush)
{
	size_t start = 0;

	for (size_t i = 0; i < s->buf.len; i++)
		if (s->buf.buf[i] == '\n') {
			s->buf.buf[i] = '\0';
			if (ops->message)
				ops->message(ops->userdata, s->task, k, s->buf.buf + start);
			start = i + 1;
		}
	if (flush && start < s->buf.len) {
		strbuf_addch(&s->buf, '\0');
		if (ops->message)
			ops->message(ops->userdata, s->task, k, s->buf.buf + start);
		start = s->buf.len;
	}
	if (start) {
		memmove(s->buf.buf, s->buf.buf + start, s->buf.len - start);
		strbuf_setlen(&s->buf, s->buf.len - start);
	}
}

/* Read what a worker wrote (nonblocking); false at EOF. */
static bool drain(struct slot *s, unsigned k, const struct pool_ops *ops)
{
	char tmp[4096];

	for (;;) {
		ssize_t n = read(s->fd, tmp, sizeof(tmp));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno == EAGAIN;
		strbuf_add(&s->buf, tmp, (size_t)n);
		deliver(s, k, ops, false);
	}
}

/*
 * Reap the worker if it has ended. Its pipe may stay open after it exits
 * (a VM holder it forked inherits the write end), so the end is told by
 * waitpid, not by EOF. Returns true when the slot is free again.
 */
static bool reap(struct slot *s, unsigned k, const struct pool_ops *ops)
{
	int st, status;
	pid_t r = waitpid(s->pid, &st, WNOHANG);

	if (r == 0 || (r < 0 && errno == EINTR))
		return false;
	if (r < 0)
		st = 0xff00;
	if (s->fd >= 0) {
		drain(s, k, ops);
		close(s->fd);
		s->fd = -1;
	}
	deliver(s, k, ops, true);
	status = WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 255;
	running[k] = 0;
	if (ops->ended)
		ops->ended(ops->userdata, s->task, k, s->pid, status);
	s->pid = 0;
	strbuf_reset(&s->buf);
	return true;
}

int pool_run(size_t ntasks, unsigned nslots, const struct pool_ops *ops, struct diags *d)
{
	_cleanup_free_ struct slot *slots = NULL;
	_cleanup_free_ struct pollfd *pfd = NULL;
	size_t next = 0, busy = 0;
	int ret = 0;

	if (nslots < 1)
		nslots = 1;
	if (nslots > POOL_MAX_SLOTS)
		nslots = POOL_MAX_SLOTS;
	slots = xcalloc(nslots, sizeof(*slots));
	pfd = xcalloc(nslots, sizeof(*pfd));
	for (unsigned k = 0; k < nslots; k++) {
		slots[k].fd = -1;
		strbuf_init(&slots[k].buf, 0);
	}
	for (;;) {
		nfds_t n = 0;

		for (unsigned k = 0; k < nslots && next < ntasks && !ret; k++) {
			int r;

			if (slots[k].pid)
				continue;
			if ((r = start(&slots[k], k, next, ops)) < 0) {
				diags_add(d, NULL, "cannot start a worker: %s", strerror(-r));
				ret = r;
				break;
			}
			next++;
			busy++;
		}
		if (!busy)
			break;
		for (unsigned k = 0; k < nslots; k++) {
			pfd[k].fd = slots[k].pid ? slots[k].fd : -1;
			pfd[k].events = POLLIN;
			pfd[k].revents = 0;
			n++;
		}
		/* a short timeout: a worker's end is seen by waitpid */
		if (poll(pfd, n, 100) < 0 && errno != EINTR) {
			ret = -errno;
			diags_add(d, NULL, "poll: %s", strerror(errno));
			pool_terminate();
			break;
		}
		for (unsigned k = 0; k < nslots; k++) {
			if (!slots[k].pid)
				continue;
			if (slots[k].fd >= 0 && (pfd[k].revents & (POLLIN | POLLHUP | POLLERR)) &&
			    !drain(&slots[k], k, ops)) {
				close(slots[k].fd);
				slots[k].fd = -1;
			}
			if (reap(&slots[k], k, ops))
				busy--;
		}
	}
	/* tasks never started (a worker could not be forked) */
	for (; next < ntasks; next++)
		if (ops->ended)
			ops->ended(ops->userdata, next, 0, 0, -1);
	for (unsigned k = 0; k < nslots; k++)
		strbuf_release(&slots[k].buf);
	return ret;
}
