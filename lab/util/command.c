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
	for (size_t i = 0; i < c->argv.n; i++) {
		if (i)
			strbuf_addch(&sb, ' ');
		shell_quote(&sb, c->argv.v[i]);
	}
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
 * own), kill the children's process groups first; then lab dies of the
 * signal as it would have.
 */
#define MAX_RUNNING 8
static volatile pid_t running[MAX_RUNNING];
static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_fatal_signal(int sig)
{
	for (int i = 0; i < MAX_RUNNING; i++)
		if (running[i] > 0)
			kill(-running[i], SIGKILL);
	signal(sig, SIG_DFL);
	raise(sig); /* delivered when the handler returns */
}

/* Track a running child's process group (pid > 0), or forget it (pid < 0). */
static void track_child(pid_t pid)
{
	static bool installed;

	if (!installed) {
		for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(fatal_signals[0]); i++) {
			struct sigaction old, sa = { .sa_handler = on_fatal_signal };

			sigemptyset(&sa.sa_mask);
			if (sigaction(fatal_signals[i], NULL, &old) == 0 && !(old.sa_flags & SA_SIGINFO) &&
			    old.sa_handler == SIG_DFL)
				sigaction(fatal_signals[i], &sa, NULL);
		}
		installed = true;
	}
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
static _noreturn_ void child(const struct command *c, char **env, int in, int out, int err)
{
	int devnull = open("/dev/null", O_RDWR);

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	signal(SIGPIPE, SIG_DFL);
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

int command_run(struct command *c)
{
	int inp[2] = { -1, -1 }, outp[2] = { -1, -1 }, errp[2] = { -1, -1 };
	_cleanup_strbuf_ struct strbuf pending = STRBUF_INIT;
	_cleanup_free_ char **env = NULL;
	bool want_out = c->out || c->on_line;
	uint64_t deadline = c->timeout_usec ? now_usec() + c->timeout_usec : 0;
	size_t in_off = 0;
	int status = 0, r = 0;
	pid_t pid;

	c->status = -1;
	c->timed_out = false;
	if (hook)
		return hook(c, hook_data);
	if ((c->in && pipe2(inp, O_CLOEXEC) < 0) || (want_out && pipe2(outp, O_CLOEXEC) < 0) ||
	    (c->err && pipe2(errp, O_CLOEXEC) < 0)) {
		r = -errno;
		goto out;
	}
	env = make_env(c);
	pid = fork();
	if (pid < 0) {
		r = -errno;
		goto out;
	}
	if (pid == 0)
		child(c, env, inp[0], want_out ? outp[1] : c->out_fd, c->err ? errp[1] : c->err_fd);
	setpgid(pid, pid); /* also in the parent: no race with a fast timeout */
	track_child(pid);
	if (inp[0] >= 0) {
		close(inp[0]);
		inp[0] = -1;
		fcntl(inp[1], F_SETFL, O_NONBLOCK);
	}
	if (outp[1] >= 0) {
		close(outp[1]);
		outp[1] = -1;
	}
	if (errp[1] >= 0) {
		close(errp[1]);
		errp[1] = -1;
	}
	if (c->in && c->in_len == 0) {
		close(inp[1]);
		inp[1] = -1;
	}
	while (inp[1] >= 0 || outp[0] >= 0 || errp[0] >= 0) {
		struct pollfd fds[3];
		int nfds = 0, timeout = -1;
		char buf[65536];

		if (inp[1] >= 0)
			fds[nfds++] = (struct pollfd){ .fd = inp[1], .events = POLLOUT };
		if (outp[0] >= 0)
			fds[nfds++] = (struct pollfd){ .fd = outp[0], .events = POLLIN };
		if (errp[0] >= 0)
			fds[nfds++] = (struct pollfd){ .fd = errp[0], .events = POLLIN };
		if (deadline) {
			uint64_t now = now_usec();

			if (now >= deadline) {
				c->timed_out = true;
				break;
			}
			timeout = (int)((deadline - now + 999) / 1000);
		}
		if (poll(fds, (nfds_t)nfds, timeout) < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		for (int i = 0; i < nfds; i++) {
			ssize_t n;

			if (!fds[i].revents)
				continue;
			if (fds[i].fd == inp[1]) {
				n = write(inp[1], c->in + in_off, c->in_len - in_off);
				if (n > 0)
					in_off += (size_t)n;
				if ((n < 0 && errno != EAGAIN && errno != EINTR) || in_off == c->in_len) {
					close(inp[1]);
					inp[1] = -1;
				}
				continue;
			}
			n = read(fds[i].fd, buf, sizeof(buf));
			if (n < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (n <= 0) {
				if (fds[i].fd == outp[0])
					outp[0] = -1;
				else
					errp[0] = -1;
				close(fds[i].fd);
				continue;
			}
			if (fds[i].fd == outp[0]) {
				if (c->out)
					strbuf_add(c->out, buf, (size_t)n);
				feed_lines(c, &pending, buf, (size_t)n);
			} else {
				strbuf_add(c->err, buf, (size_t)n);
			}
		}
	}
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
	for (int i = 0; i < 2; i++) {
		if (inp[i] >= 0)
			close(inp[i]);
		if (outp[i] >= 0)
			close(outp[i]);
		if (errp[i] >= 0)
			close(errp[i]);
	}
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
