/* SPDX-License-Identifier: MIT */
/* The worker pool: every task once, never more workers than slots, and
 * more than one at a time; lines and exit statuses reach the parent; a
 * worker whose pipe outlives it (a forked VM holder keeps it open) still
 * ends its task. */
#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "unit.h"
#include "engine/pool.h"
#include "util/alloc.h"
#include "util/diag.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"

#define NTASKS 7
#define NSLOTS 3

struct rec {
	char *dir; /* a file per running worker */
	int status[NTASKS];
	int ended[NTASKS];
	unsigned slot[NTASKS];
	int max_running;
	struct strbuf lines[NTASKS];
	pid_t grandchild;
};

static int count_running(const char *dir)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	int n = 0;

	if (!dh)
		return -1;
	while ((de = readdir(dh)))
		n += de->d_name[0] != '.';
	closedir(dh);
	return n;
}

static int work(void *userdata, size_t task, unsigned slot, int fd)
{
	struct rec *r = userdata;
	_cleanup_free_ char *me = xasprintf("%s/%zu", r->dir, task);
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	fs_write_atomic(me, "", 0, 0644);
	pool_send(fd, "start %zu on %u", task, slot);
	nanosleep(&ts, NULL);
	pool_send(fd, "running %d", count_running(r->dir));
	unlink(me);
	if (task == 5)
		raise(SIGKILL);
	if (task == 6) {
		/* a line longer than one read, then one without its newline */
		_cleanup_strbuf_ struct strbuf big = STRBUF_INIT;

		for (int i = 0; i < 1000; i++)
			strbuf_addstr(&big, "0123456789");
		pool_send(fd, "%s", big.buf);
		if (write(fd, "tail", 4) != 4)
			return 99;
	}
	return (int)task % 3;
}

static void message(void *userdata, size_t task, unsigned slot, const char *line)
{
	struct rec *r = userdata;
	int n;

	(void)slot;
	if (sscanf(line, "running %d", &n) == 1 && n > r->max_running)
		r->max_running = n;
	strbuf_addf(&r->lines[task], "%s|", line);
}

static void ended(void *userdata, size_t task, unsigned slot, pid_t pid, int status)
{
	struct rec *r = userdata;

	(void)pid;
	r->ended[task]++;
	r->status[task] = status;
	r->slot[task] = slot;
}

static void test_pool_runs_every_task(void **state)
{
	struct rec r = { 0 };
	struct pool_ops ops = { .work = work, .message = message, .ended = ended, .userdata = &r };
	struct diags d = { 0 };
	char tmpl[] = "/tmp/lab-pool.XXXXXX";

	(void)state;
	r.dir = mkdtemp(tmpl);
	assert_non_null(r.dir);
	for (int i = 0; i < NTASKS; i++)
		strbuf_init(&r.lines[i], 0);
	assert_int_equal(pool_run(NTASKS, NSLOTS, &ops, &d), 0);
	for (int i = 0; i < NTASKS; i++) {
		_cleanup_free_ char *want = xasprintf("start %d on %u|", i, r.slot[i]);

		assert_int_equal(r.ended[i], 1);
		assert_true(r.slot[i] < NSLOTS);
		assert_non_null(r.lines[i].buf);
		assert_true(strncmp(r.lines[i].buf, want, strlen(want)) == 0);
		if (i == 5)
			assert_int_equal(r.status[i], 128 + SIGKILL);
		else
			assert_int_equal(r.status[i], i % 3);
	}
	assert_true(r.max_running <= NSLOTS);
	assert_true(r.max_running >= 2);
	{
		/* the long line whole, then the one without a newline */
		const char *big = strstr(r.lines[6].buf, "0123456789");

		assert_non_null(big);
		assert_int_equal(strchr(big, '|') - big, 10000);
		assert_string_equal(big + 10000, "|tail|");
	}
	for (int i = 0; i < NTASKS; i++)
		strbuf_release(&r.lines[i]);
	diags_release(&d);
	rmdir(r.dir);
}

static int holder_work(void *userdata, size_t task, unsigned slot, int fd)
{
	pid_t pid;

	(void)userdata;
	(void)task;
	(void)slot;
	pid = fork();
	if (pid == 0) {
		/* keeps the pipe's write end open, like a VM holder */
		for (;;)
			pause();
	}
	pool_send(fd, "%d", (int)pid);
	return 0;
}

static void holder_message(void *userdata, size_t task, unsigned slot, const char *line)
{
	struct rec *r = userdata;

	(void)task;
	(void)slot;
	r->grandchild = atoi(line);
}

static void test_pool_end_is_not_eof(void **state)
{
	struct rec r = { 0 };
	struct pool_ops ops = { .work = holder_work, .message = holder_message, .ended = ended, .userdata = &r };
	struct diags d = { 0 };

	(void)state;
	assert_int_equal(pool_run(1, 1, &ops, &d), 0);
	assert_int_equal(r.ended[0], 1);
	assert_int_equal(r.status[0], 0);
	assert_true(r.grandchild > 0);
	/* the pool returned while the pipe was still open */
	assert_int_equal(kill(r.grandchild, 0), 0);
	kill(r.grandchild, SIGKILL);
	diags_release(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pool_runs_every_task),
		cmocka_unit_test(test_pool_end_is_not_eof),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
