/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "alloc.h"
#include "command.h"
#include "sigchain.h"
#include "diag.h"
#include "banned.h"

extern char **environ;

static command_hook_t hook;
static void *hook_data;

void command_set_hook(command_hook_t h, void *userdata)
{
	hook = h;
	hook_data = userdata;
}

void command_init(struct command *c, const char *prog)
{
	memset(c, 0, sizeof(*c));
	c->out_fd = c->err_fd = -1;
	command_arg(c, prog);
}

void command_release(struct command *c)
{
	strv_release(&c->argv);
	strv_release(&c->env);
	free(c->cwd);
	c->cwd = NULL;
}

void command_arg(struct command *c, const char *arg)
{
	strv_push(&c->argv, arg);
}

void command_argf(struct command *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strv_push_take(&c->argv, xvasprintf(fmt, ap));
	va_end(ap);
}

void command_args(struct command *c, ...)
{
	va_list ap;
	const char *a;

	va_start(ap, c);
	while ((a = va_arg(ap, const char *)))
		command_arg(c, a);
	va_end(ap);
}

void command_env(struct command *c, const char *name, const char *value)
{
	strv_push_take(&c->env, xasprintf("%s=%s", name, value));
}

void shell_quote(struct strbuf *sb, const char *word)
{
	bool plain = *word != '\0';

	for (const char *p = word; *p && plain; p++)
		plain = strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_-+=:,./", *p);
	if (plain) {
		strbuf_addstr(sb, word);
		return;
	}
	strbuf_addch(sb, '\'');
	for (const char *p = word; *p; p++) {
		if (*p == '\'')
			strbuf_addstr(sb, "'\\''");
		else
			strbuf_addch(sb, *p);
	}
	strbuf_addch(sb, '\'');
}

void shell_quote_argv(struct strbuf *sb, const char *const *argv)
{
	for (size_t i = 0; argv[i]; i++) {
		if (i)
			strbuf_addch(sb, ' ');
		shell_quote(sb, argv[i]);
	}
}

char *command_to_string(const struct command *c)
{
	struct strbuf sb = STRBUF_INIT;

	if (c->cwd) {
		strbuf_addstr(&sb, "cd ");
		shell_quote(&sb, c->cwd);
		strbuf_addstr(&sb, " && ");
	}
	for (size_t i = 0; i < c->env.n; i++) {
		const char *eq = strchr(c->env.v[i], '=');

		strbuf_add(&sb, c->env.v[i], (size_t)(eq - c->env.v[i]) + 1);
		shell_quote(&sb, eq + 1);
		strbuf_addch(&sb, ' ');
	}
	if (c->argv.n)
		shell_quote_argv(&sb, (const char *const *)c->argv.v);
	return strbuf_detach(&sb, NULL);
}

static uint64_t now_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Build the child's environment: ours, with c->env replacing same names. */
static char **make_env(const struct command *c)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = xcalloc(n + c->env.n + 1, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);
		bool replaced = false;

		for (size_t j = 0; j < c->env.n && !replaced; j++)
			replaced = strncmp(c->env.v[j], environ[i], len) == 0;
		if (!replaced)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < c->env.n; j++)
		env[k++] = c->env.v[j];
	return env;
}

/*
 * A child runs in a process group of its own (a timeout kills all of it),
 * so a ^C at the terminal reaches lab but not the child's descendants:
 * PR_SET_PDEATHSIG kills only the direct child, and the compilers of a
 * `make` would go on for minutes. While children run, SIGINT, SIGTERM and
 * SIGHUP, when left at their default action (lab run has handlers of its
 * own), kill the children's process groups first (util/sigchain.h); then
 * lab dies of the signal as it would have.
 */
#define MAX_RUNNING 8
static volatile pid_t running[MAX_RUNNING];

static void kill_running(void)
{
	for (int i = 0; i < MAX_RUNNING; i++)
		if (running[i] > 0)
			kill(-running[i], SIGKILL);
}

/* Track a running child's process group (pid > 0), or forget it (pid < 0). */
static void track_child(pid_t pid)
{
	sigchain_push(kill_running);
	for (int i = 0; i < MAX_RUNNING; i++) {
		if (pid > 0 && running[i] == 0) {
			running[i] = pid;
			return;
		}
		if (pid < 0 && running[i] == -pid) {
			running[i] = 0;
			return;
		}
	}
}

/* In the child: only async-signal-safe calls until exec. */
static _noreturn_ void child(const struct command *c, char **env, const sigset_t *mask, int in, int out, int err)
{
	int devnull = open("/dev/null", O_RDWR);

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_DFL);
	sigprocmask(SIG_SETMASK, mask, NULL);
	if (in < 0)
		in = devnull;
	if (out == -1)
		out = devnull;
	if (err == -1)
		err = devnull;
	if (dup2(in, 0) < 0 || (out != -2 && dup2(out, 1) < 0) || (err != -2 && dup2(err, 2) < 0))
		_exit(127);
	if (c->cwd && chdir(c->cwd) < 0)
		_exit(126);
	execvpe(c->argv.v[0], c->argv.v, env);
	_exit(errno == ENOENT ? 127 : 126);
}

static void feed_lines(struct command *c, struct strbuf *pending, const char *buf, size_t n)
{
	if (!c->on_line)
		return;
	strbuf_add(pending, buf, n);
	for (;;) {
		char *nl = memchr(pending->buf, '\n', pending->len);
		size_t len;

		if (!nl)
			break;
		len = (size_t)(nl - pending->buf);
		*nl = '\0';
		c->on_line(c->userdata, pending->buf, len);
		memmove(pending->buf, nl + 1, pending->len - len - 1);
		strbuf_setlen(pending, pending->len - len - 1);
	}
}

/* A running child's pipes (-1: closed or not wanted) and how much of c->in it took. */
struct pipes {
	int in[2], out[2], err[2];
	size_t in_off;
};

static void pipes_close(struct pipes *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->in[i] >= 0)
			close(p->in[i]);
		if (p->out[i] >= 0)
			close(p->out[i]);
		if (p->err[i] >= 0)
			close(p->err[i]);
	}
}

/* The parent closes the child's ends; stdin is written without blocking, an empty one closed at once. */
static void pipes_parent(const struct command *c, struct pipes *p)
{
	if (p->in[0] >= 0) {
		close(p->in[0]);
		p->in[0] = -1;
		fcntl(p->in[1], F_SETFL, O_NONBLOCK);
	}
	if (p->out[1] >= 0) {
		close(p->out[1]);
		p->out[1] = -1;
	}
	if (p->err[1] >= 0) {
		close(p->err[1]);
		p->err[1] = -1;
	}
	if (c->in && c->in_len == 0 && !c->in_open) {
		close(p->in[1]);
		p->in[1] = -1;
	}
}

/* One descriptor poll found ready: more of stdin written, or output read into c. */
static void pump_one(struct command *c, struct pipes *p, int fd, struct strbuf *pending)
{
	char buf[65536];
	ssize_t n;

	if (fd == p->in[1]) {
		n = write(p->in[1], c->in + p->in_off, c->in_len - p->in_off);
		if (n > 0)
			p->in_off += (size_t)n;
		if ((n < 0 && errno != EAGAIN && errno != EINTR) || (p->in_off == c->in_len && !c->in_open)) {
			close(p->in[1]);
			p->in[1] = -1;
		}
		return;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		if (fd == p->out[0])
			p->out[0] = -1;
		else
			p->err[0] = -1;
		close(fd);
		return;
	}
	if (fd == p->out[0]) {
		if (c->out)
			strbuf_add(c->out, buf, (size_t)n);
		feed_lines(c, pending, buf, (size_t)n);
	} else {
		strbuf_add(c->err, buf, (size_t)n);
	}
}

/* Feed stdin and read stdout and stderr until all are closed or the deadline
 * passes (c->timed_out). 0, or a negative errno of poll. */
static int pump(struct command *c, struct pipes *p, uint64_t deadline, struct strbuf *pending)
{
	for (;;) {
		/* stdin held open with nothing to write waits for output (in_open) */
		bool in_ready = p->in[1] >= 0 && p->in_off < c->in_len;
		struct pollfd fds[3];
		int nfds = 0, timeout = -1;

		if (p->in[1] >= 0 && p->in_off == c->in_len && !c->in_open) {
			close(p->in[1]);
			p->in[1] = -1;
		}
		if (!in_ready && p->out[0] < 0 && p->err[0] < 0)
			break;
		if (in_ready)
			fds[nfds++] = (struct pollfd){ .fd = p->in[1], .events = POLLOUT };
		if (p->out[0] >= 0)
			fds[nfds++] = (struct pollfd){ .fd = p->out[0], .events = POLLIN };
		if (p->err[0] >= 0)
			fds[nfds++] = (struct pollfd){ .fd = p->err[0], .events = POLLIN };
		if (deadline) {
			uint64_t now = now_usec();

			if (now >= deadline) {
				c->timed_out = true;
				return 0;
			}
			timeout = (int)((deadline - now + 999) / 1000);
		}
		if (poll(fds, (nfds_t)nfds, timeout) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < nfds; i++)
			if (fds[i].revents)
				pump_one(c, p, fds[i].fd, pending);
	}
	return 0;
}

int command_run(struct command *c)
{
	struct pipes p = { { -1, -1 }, { -1, -1 }, { -1, -1 }, 0 };
	_cleanup_strbuf_ struct strbuf pending = STRBUF_INIT;
	_cleanup_free_ char **env = NULL;
	bool want_out = c->out || c->on_line;
	uint64_t deadline = c->timeout_usec ? now_usec() + c->timeout_usec : 0;
	int status = 0, r = 0;
	sigset_t block, old_mask;
	pid_t pid;

	c->status = -1;
	c->timed_out = false;
	if (hook)
		return hook(c, hook_data);
	if ((c->in && pipe2(p.in, O_CLOEXEC) < 0) || (want_out && pipe2(p.out, O_CLOEXEC) < 0) ||
	    (c->err && pipe2(p.err, O_CLOEXEC) < 0)) {
		r = -errno;
		goto out;
	}
	env = make_env(c);
	/*
	 * ^C between fork and track_child would kill lab and leave the child's
	 * group running: the fatal signals wait until the child is tracked
	 * (the child restores the mask before exec).
	 */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old_mask);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		sigprocmask(SIG_SETMASK, &old_mask, NULL);
		goto out;
	}
	if (pid == 0)
		child(c, env, &old_mask, p.in[0], want_out ? p.out[1] : c->out_fd, c->err ? p.err[1] : c->err_fd);
	setpgid(pid, pid); /* also in the parent: no race with a fast timeout */
	track_child(pid);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
	pipes_parent(c, &p);
	r = pump(c, &p, deadline, &pending);
	if (c->timed_out || r < 0)
		kill(-pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			r = r ? r : -errno;
			break;
		}
	track_child(-pid);
	if (pending.len && c->on_line)
		c->on_line(c->userdata, pending.buf, pending.len);
	if (r == 0) {
		c->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		r = c->timed_out ? -ETIME : c->status;
	}
out:
	pipes_close(&p);
	return r;
}

int command_run_logged(struct command *c, struct strbuf *log, struct diags *d, const struct pos *pos,
		       const char *what)
{
	_cleanup_free_ char *line = command_to_string(c);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	int r;

	if (!c->out)
		c->out = &out;
	if (!c->err)
		c->err = c->out;
	r = command_run(c);
	if (log) {
		strbuf_addf(log, "$ %s\n", line);
		strbuf_add(log, c->out->buf, c->out->len);
	}
	if (r != 0) {
		size_t len = c->out->len;
		const char *tail = len > 3000 ? c->out->buf + len - 3000 : c->out->buf;

		diags_add(d, pos, "%s failed (%s %d): %s\n%s", what, r < 0 ? "error" : "exit status", r < 0 ? -r : r,
			  line, tail);
		r = r < 0 ? r : -EIO;
	}
	if (c->out == &out)
		c->out = NULL;
	if (c->err == &out)
		c->err = NULL;
	return r;
}

int command_exec(struct command *c)
{
	char **env = make_env(c);

	if (c->cwd && chdir(c->cwd) < 0)
		return -errno;
	fflush(NULL);
	execvpe(c->argv.v[0], c->argv.v, env);
	free(env);
	return -errno;
}
