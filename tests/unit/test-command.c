/* SPDX-License-Identifier: MIT */
/* The command API: capture, stdin, status, timeout, process groups, quoting, hook. */
#include "unit.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "util/alloc.h"
#include "util/command.h"

static void test_capture_and_status(void **state)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT;
	struct command c;

	(void)state;
	command_init(&c, "sh");
	command_args(&c, "-c", "echo out; echo err >&2; exit 3", NULL);
	c.out = &out;
	c.err = &err;
	assert_int_equal(command_run(&c), 3);
	assert_int_equal(c.status, 3);
	assert_string_equal(out.buf, "out\n");
	assert_string_equal(err.buf, "err\n");
	command_release(&c);
	strbuf_release(&out);
	strbuf_release(&err);
}

static void test_stdin_large(void **state)
{
	struct strbuf out = STRBUF_INIT, in = STRBUF_INIT;
	struct command c;

	(void)state;
	for (int i = 0; i < 100000; i++)
		strbuf_addf(&in, "line %d\n", i);
	command_init(&c, "cat");
	c.in = in.buf;
	c.in_len = in.len;
	c.out = &out;
	assert_int_equal(command_run(&c), 0);
	assert_int_equal(out.len, in.len);
	assert_memory_equal(out.buf, in.buf, in.len);
	command_release(&c);
	strbuf_release(&out);
	strbuf_release(&in);
}

/* All three pipes busy at once, more than a pipe holds each way: no deadlock, nothing lost. */
static void test_three_pipes(void **state)
{
	struct strbuf out = STRBUF_INIT, err = STRBUF_INIT, in = STRBUF_INIT;
	struct command c;

	(void)state;
	for (int i = 0; i < 50000; i++)
		strbuf_addf(&in, "line %d\n", i);
	command_init(&c, "sh");
	command_args(&c, "-c", "tee /dev/stderr", NULL);
	c.in = in.buf;
	c.in_len = in.len;
	c.out = &out;
	c.err = &err;
	assert_int_equal(command_run(&c), 0);
	assert_int_equal(out.len, in.len);
	assert_int_equal(err.len, in.len);
	assert_memory_equal(out.buf, in.buf, in.len);
	assert_memory_equal(err.buf, in.buf, in.len);
	command_release(&c);
	strbuf_release(&out);
	strbuf_release(&err);
	strbuf_release(&in);
}

/* An empty stdin is closed at once; a child that stops reading early is no error of lab's. */
static void test_stdin_empty_and_unread(void **state)
{
	struct strbuf out = STRBUF_INIT, in = STRBUF_INIT;
	struct command c;
	void (*old)(int) = signal(SIGPIPE, SIG_IGN); /* as lab's main() has it */

	(void)state;
	command_init(&c, "cat");
	c.in = "";
	c.in_len = 0;
	c.out = &out;
	assert_int_equal(command_run(&c), 0);
	assert_int_equal(out.len, 0);
	command_release(&c);
	for (int i = 0; i < 100000; i++)
		strbuf_addf(&in, "line %d\n", i);
	command_init(&c, "head");
	command_args(&c, "-c", "5", NULL);
	c.in = in.buf;
	c.in_len = in.len;
	c.out = &out;
	assert_int_equal(command_run(&c), 0);
	assert_string_equal(out.buf, "line ");
	command_release(&c);
	signal(SIGPIPE, old);
	strbuf_release(&out);
	strbuf_release(&in);
}

/* Gone, or a zombie nobody reaped (PID 1 here may not reap orphans). */
static bool process_alive(pid_t pid)
{
	char path[64], buf[256];
	FILE *f;
	char *close_paren;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	close_paren = strrchr(buf, ')');
	return !(close_paren && close_paren[1] == ' ' && (close_paren[2] == 'Z' || close_paren[2] == 'X'));
}

static void test_timeout_kills_group(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct command c;
	pid_t grandchild;

	(void)state;
	command_init(&c, "sh");
	/* the grandchild must die too: the whole process group is killed */
	command_args(&c, "-c", "sleep 30 & echo $!; wait", NULL);
	c.out = &out;
	/* long enough for sh to start and print on a loaded machine */
	c.timeout_usec = 2000000;
	assert_int_equal(command_run(&c), -ETIME);
	assert_true(c.timed_out);
	grandchild = (pid_t)strtol(out.buf, NULL, 10);
	assert_true(grandchild > 0);
	/* SIGKILL was sent; how soon the kernel acts on it depends on the load */
	for (int i = 0; i < 1000 && process_alive(grandchild); i++)
		usleep(10000);
	assert_false(process_alive(grandchild));
	command_release(&c);
	strbuf_release(&out);
}

/* ^C to lab while a command runs: the command's whole process group dies with lab */
static void test_sigint_kills_group(void **state)
{
	char dir[] = "/tmp/lab-unit-cmd.XXXXXX", path[64];
	pid_t lab, grandchild = 0;
	int status;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pid", dir);
	lab = fork();
	assert_true(lab >= 0);
	if (lab == 0) {
		struct command c;
		_cleanup_free_ char *script = xasprintf("sleep 30 & echo $! >%s.tmp; mv %s.tmp %s; wait", path, path, path);

		command_init(&c, "sh");
		command_args(&c, "-c", script, NULL);
		command_run(&c);
		_exit(0); /* not reached: SIGINT ends this process */
	}
	for (int i = 0; i < 500 && !(f = fopen(path, "r")); i++)
		usleep(10000);
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &grandchild), 1);
	fclose(f);
	assert_true(process_alive(grandchild));
	kill(lab, SIGINT);
	assert_int_equal(waitpid(lab, &status, 0), lab);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGINT);
	for (int i = 0; i < 1000 && process_alive(grandchild); i++)
		usleep(10000);
	assert_false(process_alive(grandchild));
	unlink(path);
	rmdir(dir);
}

/* SIGKILL every child of this process (/proc/self/task/TID/children). */
static void kill_children(void)
{
	char path[64];
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	f = fopen(path, "re");
	if (!f)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		kill(pid, SIGKILL);
	fclose(f);
}

/*
 * ^C at any instant of command_run, the instant between fork and the
 * child's tracking included: nothing the command started outlives lab.
 * This process adopts the orphans (a subreaper), so a child that escaped
 * the kill shows up here as a child still running.
 */
static void test_sigint_any_instant(void **state)
{
	int escaped = 0;

	(void)state;
	assert_int_equal(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
	for (int i = 0; i < 300; i++) {
		struct timespec delay = { 0, (i % 30) * 20000L };
		pid_t lab = fork(), left;
		int status;

		assert_true(lab >= 0);
		if (lab == 0) {
			struct command c;

			command_init(&c, "sleep");
			command_args(&c, "30", NULL);
			command_run(&c);
			_exit(0);
		}
		nanosleep(&delay, NULL);
		kill(lab, SIGINT);
		assert_int_equal(waitpid(lab, &status, 0), lab);
		/* the killed group's sleep, if it started, is reaped here */
		for (int t = 0; t < 500; t++) {
			left = waitpid(-1, &status, WNOHANG);
			if (left < 0)
				break;
			if (left == 0)
				usleep(10000);
		}
		if (left == 0) {
			escaped++;
			kill_children();
			while (waitpid(-1, &status, 0) > 0)
				;
		}
	}
	prctl(PR_SET_CHILD_SUBREAPER, 0);
	assert_int_equal(escaped, 0);
}

static void test_env_cwd(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct command c;

	(void)state;
	setenv("LAB_T_A", "outer", 1);
	command_init(&c, "sh");
	command_args(&c, "-c", "echo $LAB_T_A $LAB_T_B; pwd", NULL);
	command_env(&c, "LAB_T_A", "inner");
	command_env(&c, "LAB_T_B", "b");
	c.cwd = xstrdup("/");
	c.out = &out;
	assert_int_equal(command_run(&c), 0);
	assert_string_equal(out.buf, "inner b\n/\n");
	command_release(&c);
	strbuf_release(&out);
}

static void test_missing_program(void **state)
{
	struct command c;

	(void)state;
	command_init(&c, "/nonexistent/lab-program");
	assert_int_equal(command_run(&c), 127);
	command_release(&c);
}

static void count_line(void *userdata, const char *line, size_t len)
{
	int *n = userdata;

	assert_int_equal(strlen(line), len);
	if (len && line[0] == 'L')
		(*n)++;
}

static void test_on_line(void **state)
{
	struct command c;
	int n = 0;

	(void)state;
	command_init(&c, "sh");
	command_args(&c, "-c", "for i in 1 2 3 4 5; do echo L$i; done; printf Lnoeol", NULL);
	c.on_line = count_line;
	c.userdata = &n;
	assert_int_equal(command_run(&c), 0);
	assert_int_equal(n, 6);
	command_release(&c);
}

/* A shell reading its script from stdin in steps: each step goes once the
 * shell said it ran the one before (what the runner does around its window). */
struct staged {
	struct command *c;
	size_t cut2, full;
	int ready;
};

static void stage_line(void *userdata, const char *line, size_t len)
{
	struct staged *st = userdata;

	(void)len;
	if (strcmp(line, "ready 1") == 0) {
		/* nothing past the first step has reached the shell yet */
		st->ready++;
		st->c->in_len = st->cut2;
	} else if (strcmp(line, "ready 2") == 0) {
		st->ready++;
		st->c->in_len = st->full;
		st->c->in_open = false;
	}
}

static void test_staged_stdin(void **state)
{
	static const char script[] = "echo ready 1\n" "echo ready 2\n" "echo done\n";
	struct strbuf out = STRBUF_INIT;
	struct command c;
	struct staged st = { .c = &c, .cut2 = 26, .full = sizeof(script) - 1 };

	(void)state;
	assert_int_equal(script[st.cut2 - 1], '\n');
	command_init(&c, "sh");
	command_args(&c, "-s", NULL);
	c.in = script;
	c.in_len = 13;
	c.in_open = true;
	c.out = &out;
	c.on_line = stage_line;
	c.userdata = &st;
	c.timeout_usec = 10ULL * 1000000;
	assert_int_equal(command_run(&c), 0);
	assert_int_equal(st.ready, 2);
	assert_string_equal(out.buf, "ready 1\nready 2\ndone\n");
	/* a child that exits while stdin waits for more ends the run: no hang */
	command_release(&c);
	command_init(&c, "sh");
	command_args(&c, "-c", "echo gone", NULL);
	c.in = script;
	c.in_len = 0;
	c.in_open = true;
	c.timeout_usec = 10ULL * 1000000;
	assert_int_equal(command_run(&c), 0);
	assert_false(c.timed_out);
	command_release(&c);
	strbuf_release(&out);
}

static void test_quote_roundtrip(void **state)
{
	static const char *const words[] = { "plain", "", "it's", "a b", "$(id)", "`x`", "-n", "new\nline", "\\", "\"" };

	(void)state;
	for (size_t i = 0; i < ELEMENTSOF(words); i++) {
		struct strbuf script = STRBUF_INIT, out = STRBUF_INIT;
		struct command c;

		strbuf_addstr(&script, "printf %s ");
		shell_quote(&script, words[i]);
		command_init(&c, "sh");
		command_args(&c, "-c", script.buf, NULL);
		c.out = &out;
		assert_int_equal(command_run(&c), 0);
		assert_string_equal(out.buf, words[i]);
		command_release(&c);
		strbuf_release(&script);
		strbuf_release(&out);
	}
}

static int record(struct command *c, void *userdata)
{
	char **s = userdata;

	*s = command_to_string(c);
	if (c->out)
		strbuf_addstr(c->out, "canned\n");
	c->status = 0;
	return 0;
}

static void test_hook(void **state)
{
	struct strbuf out = STRBUF_INIT;
	struct command c;
	char *seen = NULL;

	(void)state;
	command_set_hook(record, &seen);
	command_init(&c, "make");
	command_args(&c, "-C", "/src tree", "O=/b", NULL);
	command_env(&c, "KBUILD_BUILD_TIMESTAMP", "@0");
	c.out = &out;
	assert_int_equal(command_run(&c), 0);
	command_set_hook(NULL, NULL);
	assert_string_equal(seen, "KBUILD_BUILD_TIMESTAMP=@0 make -C '/src tree' O=/b");
	assert_string_equal(out.buf, "canned\n");
	free(seen);
	command_release(&c);
	strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_capture_and_status),
		cmocka_unit_test(test_stdin_large),
		cmocka_unit_test(test_three_pipes),
		cmocka_unit_test(test_stdin_empty_and_unread),
		cmocka_unit_test(test_timeout_kills_group),
		cmocka_unit_test(test_sigint_kills_group),
		cmocka_unit_test(test_sigint_any_instant),
		cmocka_unit_test(test_env_cwd),
		cmocka_unit_test(test_missing_program),
		cmocka_unit_test(test_on_line),
		cmocka_unit_test(test_staged_stdin),
		cmocka_unit_test(test_quote_roundtrip),
		cmocka_unit_test(test_hook),
	};

	/* the ^C tests need SIGINT as a terminal gives it: started from a
	 * background job of a non-interactive shell (`.ci/run &`), this process
	 * inherits it ignored (POSIX), the killed children would live on, and
	 * each of test_sigint_any_instant's 300 rounds would wait for its
	 * `sleep 30` */
	signal(SIGINT, SIG_DFL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
