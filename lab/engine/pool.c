/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <sys/wait.h>
#include "../util/alloc.h"
#include "../util/diag.h"
#include "../util/strbuf.h"
#include "pool.h"
#include "../util/banned.h"

#define POOL_MAX_SLOTS 256

/* The running workers, for pool_terminate() from a signal handler. */
static volatile pid_t running[POOL_MAX_SLOTS];
/* In the parent: the slots of the pool_run going on, for pool_reply. */
static struct slot *cur_slots;
static unsigned cur_nslots;
/* In a worker: its end of the reply channel. */
static int worker_rfd = -1;

struct slot {
	pid_t pid;
	int fd; /* read end; -1 at EOF */
	int rfd; /* the parent's end of the reply channel; -1 when closed */
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

int pool_reply(unsigned slot, const char *line)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	size_t off = 0;

	if (slot >= cur_nslots || !cur_slots || cur_slots[slot].rfd < 0)
		return -EPIPE;
	strbuf_addstr(&sb, line);
	strbuf_addch(&sb, '\n');
	while (off < sb.len) {
		/* a socket: a worker that is gone is EPIPE, not SIGPIPE */
		ssize_t w = send(cur_slots[slot].rfd, sb.buf + off, sb.len - off, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -EPIPE;
		off += (size_t)w;
	}
	return 0;
}

int pool_recv(struct strbuf *line)
{
	strbuf_reset(line);
	for (;;) {
		char c;
		ssize_t n = worker_rfd < 0 ? 0 : read(worker_rfd, &c, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		if (c == '\n')
			return 0;
		strbuf_addch(line, c);
	}
}

static int start(struct slot *s, unsigned k, size_t task, const struct pool_ops *ops)
{
	int p[2], r[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, r) < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		close(r[0]);
		close(r[1]);
		return -e;
	}
	if (pid == 0) {
		int rc;

		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(128 + SIGTERM);
		close(p[0]);
		close(r[0]);
		worker_rfd = r[1];
		rc = ops->work(ops->userdata, task, k, p[1]);
		fflush(stdout);
		fflush(stderr);
		/* no atexit handlers: they belong to the parent */
		_exit(rc);
	}
	close(p[1]);
	close(r[1]);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	s->pid = pid;
	s->fd = p[0];
	s->rfd = r[0];
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
	if (s->rfd >= 0) {
		close(s->rfd);
		s->rfd = -1;
	}
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
		slots[k].rfd = -1;
		strbuf_init(&slots[k].buf, 0);
	}
	cur_slots = slots;
	cur_nslots = nslots;
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
	for (unsigned k = 0; k < nslots; k++) {
		if (slots[k].rfd >= 0)
			close(slots[k].rfd);
		strbuf_release(&slots[k].buf);
	}
	cur_slots = NULL;
	cur_nslots = 0;
	return ret;
}
