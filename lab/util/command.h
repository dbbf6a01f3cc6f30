/* SPDX-License-Identifier: MIT */
/*
 * The one way lab runs programs (libvirt's virCommand, git's run-command):
 * an argv vector, never a shell; optional captured output, a stdin buffer,
 * a working directory, extra environment, a timeout. The child gets its own
 * process group (a timeout kills all of it) and SIGKILL when lab dies
 * (PR_SET_PDEATHSIG). All descriptors lab opens are O_CLOEXEC.
 *
 * Tests install a hook (command_set_hook) that sees every command instead
 * of running it, to record argv and answer with canned output.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "strbuf.h"
#include "strv.h"

struct command {
	struct strv argv;
	struct strv env; /* "NAME=value" added to (or replacing in) the environment */
	char *cwd;
	struct strbuf *out; /* capture stdout here (NULL: see out_fd) */
	struct strbuf *err; /* capture stderr here (NULL: see err_fd) */
	int out_fd, err_fd; /* where stdout/stderr go when not captured: -1 /dev/null, -2 inherit */
	const char *in;     /* stdin data (NULL: /dev/null) */
	size_t in_len;
	/* stdin stays open once in_len bytes are written, until on_line raises
	 * in_len (more of `in` goes) or clears in_open: a child that reads its
	 * input in steps, each sent when its output says it is ready */
	bool in_open;
	uint64_t timeout_usec; /* 0: none */
	/* called for each complete line of stdout as it arrives (progress) */
	void (*on_line)(void *userdata, const char *line, size_t len);
	void *userdata;
	/* results */
	int status;     /* exit code, or 128 + signal */
	bool timed_out;
};

void command_init(struct command *c, const char *prog);
void command_release(struct command *c);
void command_arg(struct command *c, const char *arg);
void command_argf(struct command *c, const char *fmt, ...) _printf_(2, 3);
/* Append arguments up to a NULL. */
void command_args(struct command *c, ...) __attribute__((sentinel));
void command_env(struct command *c, const char *name, const char *value);

/*
 * Run and wait. Returns 0 when the program exited 0; a positive exit
 * status (or 128 + signal); -ETIME on timeout (the whole process group is
 * killed); another negative errno when it could not be started.
 */
int command_run(struct command *c);

struct diags;
struct pos;
/*
 * Run; append "$ command" and its output (stdout and stderr, unless c->out
 * is set) to `log` when given; on failure add "WHAT failed (exit status N):
 * COMMAND" and the output's last 3000 bytes to `d`. 0 or a negative errno.
 */
int command_run_logged(struct command *c, struct strbuf *log, struct diags *d, const struct pos *pos,
		       const char *what);

/*
 * Replace this process with the command (stdio inherited, same process
 * group: for an interactive handoff such as `lab vm ssh`). Returns a
 * negative errno only when exec failed.
 */
int command_exec(struct command *c);

/* The command as a shell-quoted line, for logs and reproduce scripts. */
char *command_to_string(const struct command *c);
/* Quote one word for a POSIX shell: 'it'\''s'. */
void shell_quote(struct strbuf *sb, const char *word);
/* A NULL-terminated argv as one shell line: each word quoted, a space between. */
void shell_quote_argv(struct strbuf *sb, const char *const *argv);

/* Test hook: when set, command_run calls it instead of running anything. */
typedef int (*command_hook_t)(struct command *c, void *userdata);
void command_set_hook(command_hook_t hook, void *userdata);

static inline void command_releasep(struct command *c)
{
	command_release(c);
}
#define _cleanup_command_ _cleanup_(command_releasep)
