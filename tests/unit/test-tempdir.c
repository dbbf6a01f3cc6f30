/* SPDX-License-Identifier: MIT */
/* Temporary folders (util/tempdir.h): removed by the handler of SIGINT,
 * SIGTERM and SIGHUP (and then lab dies of the signal), not by a forked
 * child's, not once forgotten, not when the signal is ignored; the
 * handler's allocation-free walk; lab gc's view of stale folders. Also the
 * line files of util/fs.h the run folders hold (set, kernels, applied). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>
#include "unit.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strv.h"
#include "util/tempdir.h"

static char base[] = "/tmp/lab-unit-tempdir.XXXXXX";

static int setup(void **state)
{
	char sentinel[sizeof(base) + 16];
	int fd;

	(void)state;
	if (!mkdtemp(base))
		return -1;
	/* the folders' links point at base: nothing of it may go */
	snprintf(sentinel, sizeof(sentinel), "%s/sentinel", base);
	fd = open(sentinel, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	return fd < 0 ? -1 : close(fd);
}

static bool sentinel_stays(void)
{
	_cleanup_free_ char *p = path_join(base, "sentinel");

	return path_is_file(p);
}

static int teardown(void **state)
{
	(void)state;
	return fs_remove_tree(base);
}

static void write_file(const char *dir, const char *name, size_t bytes)
{
	_cleanup_free_ char *p = path_join(dir, name);
	_cleanup_free_ char *data = xcalloc(bytes + 1, 1);

	memset(data, 'x', bytes);
	assert_int_equal(fs_write_atomic(p, data, bytes, 0644), 0);
}

/* A run folder's shape: files, nested folders, an empty one, a link out. */
static void fill(const char *dir, const char *outside)
{
	_cleanup_free_ char *runs = path_join(dir, "runs"), *r1 = path_join(dir, "runs/e.0001"),
			    *raw = path_join(dir, "runs/e.0001/raw"), *r2 = path_join(dir, "runs/e.0002"),
			    *empty = path_join(dir, "empty"), *link = path_join(dir, "runs/out"),
			    *flink = path_join(dir, "runs/e.0002/file-out");
	_cleanup_free_ char *target = path_join(outside, "keep");

	assert_int_equal(mkdir(runs, 0755), 0);
	assert_int_equal(mkdir(r1, 0755), 0);
	assert_int_equal(mkdir(raw, 0755), 0);
	assert_int_equal(mkdir(r2, 0755), 0);
	assert_int_equal(mkdir(empty, 0755), 0);
	write_file(dir, "run.json", 100);
	write_file(dir, "MANIFEST", 100);
	write_file(r1, "metrics", 10);
	write_file(raw, "w.raw", 70000);
	write_file(r2, "metrics", 10);
	for (int i = 0; i < 300; i++) { /* more than one getdents buffer */
		char name[64];

		snprintf(name, sizeof(name), "file-with-a-long-name-%03d", i);
		write_file(r2, name, 1);
	}
	assert_int_equal(symlink(outside, link), 0);
	assert_int_equal(symlink(target, flink), 0);
}

static void test_walk(void **state)
{
	_cleanup_free_ char *outside = path_join(base, "outside"), *dir = path_join(base, "tree"),
			    *keep = path_join(base, "outside/keep");
	int parent;

	(void)state;
	assert_int_equal(mkdir(outside, 0755), 0);
	write_file(outside, "keep", 3);
	assert_int_equal(mkdir(dir, 0700), 0);
	fill(dir, outside);
	parent = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(parent >= 0);
	tempdir_remove_tree_at(parent, "tree");
	assert_false(path_is_dir(dir));
	assert_true(path_is_file(keep)); /* links are removed, never followed */
	/* a missing folder, a file: nothing happens */
	tempdir_remove_tree_at(parent, "tree");
	tempdir_remove_tree_at(parent, "outside/keep");
	assert_true(path_is_file(keep));
	close(parent);
	assert_int_equal(fs_remove_tree(outside), 0);
}

/* Deeper than the walk goes: it stops (what it cannot reach stays) and
 * returns; everything it reached is gone. */
static void test_walk_too_deep(void **state)
{
	_cleanup_free_ char *dir = path_join(base, "deep"), *side = path_join(base, "deep/side");
	int parent, fd;

	(void)state;
	assert_int_equal(mkdir(dir, 0700), 0);
	assert_int_equal(mkdir(side, 0700), 0);
	write_file(side, "f", 1);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 300; i++) {
		int next;

		assert_int_equal(mkdirat(fd, "d", 0700), 0);
		next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
		assert_true(fd >= 0);
	}
	assert_int_equal(openat(fd, "bottom", O_WRONLY | O_CREAT | O_CLOEXEC, 0644) >= 0, 1);
	close(fd);
	parent = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	tempdir_remove_tree_at(parent, "deep");
	close(parent);
	assert_true(path_is_dir(dir));
	assert_false(path_is_dir(side));
	assert_int_equal(fs_remove_tree(dir), 0);
}

/* The one temporary folder under base whose name starts with prefix, or NULL. */
static char *find_one(const char *prefix)
{
	_cleanup_strv_ struct strv all = STRV_INIT;

	/* tempdir_list_stale lists folders nothing holds: an hour from now, all of them */
	assert_int_equal(tempdir_list_stale(base, prefix, time(NULL) + 7200, &all), 0);
	return all.n ? xstrdup(all.v[0]) : NULL;
}

/* A child that makes a folder, fills it, says where, then waits for a signal. */
static pid_t child_with_tempdir(const char *prefix, int sig_disposition, bool forget, int *ret_fd)
{
	int p[2];
	pid_t pid;

	assert_int_equal(pipe(p), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char *path;

		close(p[0]);
		signal(SIGINT, sig_disposition == 0 ? SIG_DFL : SIG_IGN);
		signal(SIGTERM, SIG_DFL);
		if (tempdir_make(base, prefix, &path) < 0)
			_exit(3);
		fill(path, base);
		if (forget)
			tempdir_forget(path);
		if (write(p[1], path, strlen(path) + 1) < 0)
			_exit(4);
		for (;;)
			pause();
	}
	close(p[1]);
	*ret_fd = p[0];
	return pid;
}

static char *read_path(int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	assert_true(n > 0);
	buf[n] = '\0';
	close(fd);
	return xstrdup(buf);
}

/* SIGINT: the folder is gone and the process died of SIGINT; the same for SIGTERM. */
static void test_signal_removes(void **state)
{
	static const int sigs[] = { SIGINT, SIGTERM };

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		int fd, status;
		pid_t pid = child_with_tempdir("sig-", 0, false, &fd);
		_cleanup_free_ char *path = read_path(fd);

		assert_true(str_startswith(path, base));
		assert_true(path_is_dir(path));
		kill(pid, sigs[i]);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFSIGNALED(status));
		assert_int_equal(WTERMSIG(status), sigs[i]);
		assert_false(path_is_dir(path));
		assert_true(sentinel_stays());
	}
}

/* An ignored SIGINT stays ignored (nohup, a background job): nothing removed. */
static void test_signal_ignored(void **state)
{
	int fd, status;
	pid_t pid = child_with_tempdir("ign-", 1, false, &fd);
	_cleanup_free_ char *path = read_path(fd);

	(void)state;
	kill(pid, SIGINT);
	usleep(100000);
	assert_int_equal(waitpid(pid, &status, WNOHANG), 0);
	assert_true(path_is_dir(path));
	kill(pid, SIGTERM);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WTERMSIG(status), SIGTERM);
	assert_false(path_is_dir(path));
	assert_true(sentinel_stays());
}

/* Forgotten (it took its place): the signal leaves it. */
static void test_forgotten(void **state)
{
	int fd, status;
	pid_t pid = child_with_tempdir("fgt-", 0, true, &fd);
	_cleanup_free_ char *path = read_path(fd);

	(void)state;
	kill(pid, SIGINT);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WTERMSIG(status), SIGINT);
	assert_true(path_is_dir(path));
	assert_int_equal(fs_remove_tree(path), 0);
}

/* A forked child dying of a signal does not take its parent's folders. */
static void test_fork_keeps_parents(void **state)
{
	char *path;
	pid_t pid;
	int status;

	(void)state;
	assert_int_equal(tempdir_make(base, "own-", &path), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		raise(SIGTERM);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WTERMSIG(status), SIGTERM);
	assert_true(path_is_dir(path));
	/* in use: its flock is held, so lab gc leaves it, however old */
	assert_null(find_one("own-"));
	assert_int_equal(tempdir_remove_stale(path), -EBUSY);
	assert_int_equal(tempdir_remove(path), 0);
	assert_false(path_is_dir(path));
	free(path);
}

/* Not gone and not a zombie (nobody may reap it here). */
static bool process_alive(pid_t pid)
{
	char path[64], buf[256], *paren;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "re")))
		return false;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	paren = strrchr(buf, ')');
	return !(paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'));
}

/* With a command running: its process group is killed and the folder removed. */
static void test_signal_with_command(void **state)
{
	_cleanup_free_ char *pidfile = path_join(base, "grandchild");
	pid_t pid, grandchild = 0;
	int status, p[2];
	FILE *f = NULL;
	char buf[4096];
	ssize_t n;

	(void)state;
	assert_int_equal(pipe(p), 0);
	pid = fork();
	if (pid == 0) {
		_cleanup_free_ char *script =
			xasprintf("sleep 30 & echo $! >%s.tmp; mv %s.tmp %s; wait", pidfile, pidfile, pidfile);
		struct command c;
		char *path;

		signal(SIGINT, SIG_DFL);
		if (tempdir_make(base, "cmd-", &path) < 0 || write(p[1], path, strlen(path) + 1) < 0)
			_exit(3);
		command_init(&c, "sh");
		command_args(&c, "-c", script, NULL);
		command_run(&c);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf) - 1);
	close(p[0]);
	assert_true(n > 0);
	buf[n] = '\0';
	for (int i = 0; i < 500 && !(f = fopen(pidfile, "r")); i++)
		usleep(10000);
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &grandchild), 1);
	fclose(f);
	kill(pid, SIGINT);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_int_equal(WTERMSIG(status), SIGINT);
	assert_false(path_is_dir(buf));
	for (int i = 0; i < 100 && process_alive(grandchild); i++)
		usleep(10000);
	assert_false(process_alive(grandchild));
	unlink(pidfile);
}

static void set_mtime(const char *path, time_t t)
{
	struct timeval tv[2] = { { t, 0 }, { t, 0 } };

	assert_int_equal(utimes(path, tv), 0);
}

/* lab gc's view: a folder whose maker was SIGKILLed is stale at once; one
 * whose pid lives (and holds no lock) only after an hour; an older lab's
 * (no pid) after an hour; one in use never. */
static void test_stale(void **state)
{
	_cleanup_strv_ struct strv stale = STRV_INIT;
	_cleanup_free_ char *killed = NULL, *live = xasprintf("%s/st-%d-abcdef", base, (int)getppid()),
			    *old_live = xasprintf("%s/st-1-ghijkl", base), *legacy = path_join(base, "st-XYZabc"),
			    *legacy_old = path_join(base, "st-XYZdef"), *other = path_join(base, "stx"),
			    *file = path_join(base, "st-2-qrstuv");
	char *mine;
	int fd, status;
	pid_t pid = child_with_tempdir("st-", 0, false, &fd);
	time_t now = time(NULL);

	(void)state;
	killed = read_path(fd);
	kill(pid, SIGKILL);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(path_is_dir(killed)); /* SIGKILL: nothing could clean up */
	assert_int_equal(mkdir(live, 0700), 0);
	assert_int_equal(mkdir(old_live, 0700), 0);
	set_mtime(old_live, now - 7200);
	assert_int_equal(mkdir(legacy, 0700), 0);
	assert_int_equal(mkdir(legacy_old, 0700), 0);
	set_mtime(legacy_old, now - 7200);
	assert_int_equal(mkdir(other, 0700), 0);
	set_mtime(other, now - 7200);
	write_file(base, "st-2-qrstuv", 1);
	assert_int_equal(tempdir_make(base, "st-", &mine), 0);
	set_mtime(mine, now - 7200);

	assert_int_equal(tempdir_list_stale(base, "st-", now, &stale), 0);
	assert_int_equal(stale.n, 3);
	assert_true(strv_contains(&stale, killed));
	assert_true(strv_contains(&stale, old_live));
	assert_true(strv_contains(&stale, legacy_old));
	for (size_t i = 0; i < stale.n; i++) {
		assert_int_equal(tempdir_remove_stale(stale.v[i]), 0);
		assert_false(path_is_dir(stale.v[i]));
	}
	assert_true(path_is_dir(live) && path_is_dir(legacy) && path_is_dir(other) && path_is_dir(mine));
	assert_true(path_is_file(file));
	assert_int_equal(tempdir_remove(mine), 0);
	free(mine);
	rmdir(live);
	rmdir(legacy);
	rmdir(other);
	unlink(file);
	/* a missing parent is no error */
	strv_release(&stale);
	assert_int_equal(tempdir_list_stale("/nonexistent/lab", "st-", now, &stale), 0);
	assert_int_equal(stale.n, 0);
}

/* Lines round trip; blank lines and a missing last newline read as the
 * lines they hold; a missing file and one over the limit add nothing. */
static void test_lines(void **state)
{
	_cleanup_free_ char *p = path_join(base, "lines"), *q = path_join(base, "no-such");
	_cleanup_strv_ struct strv v = STRV_INIT, back = STRV_INIT;
	static const char text[] = "\n a=1\n\n\nb = two\nlast";

	(void)state;
	strv_push(&v, "x=1");
	strv_push(&v, "kernel base");
	assert_int_equal(fs_write_lines(p, &v, 0644), 0);
	assert_int_equal(fs_read_lines(p, 1024, &back), 0);
	assert_int_equal(back.n, 2);
	assert_string_equal(back.v[0], "x=1");
	assert_string_equal(back.v[1], "kernel base");
	strv_release(&back);
	assert_int_equal(fs_write_atomic(p, text, sizeof(text) - 1, 0644), 0);
	assert_int_equal(fs_read_lines(p, 1024, &back), 0);
	assert_int_equal(back.n, 3);
	assert_string_equal(back.v[0], " a=1");
	assert_string_equal(back.v[1], "b = two");
	assert_string_equal(back.v[2], "last");
	strv_release(&back);
	assert_int_equal(fs_read_lines(q, 1024, &back), -ENOENT);
	assert_int_equal(fs_read_lines(p, 8, &back), -EFBIG);
	assert_int_equal(back.n, 0);
	/* no lines: an empty file */
	strv_release(&v);
	assert_int_equal(fs_write_lines(p, &v, 0644), 0);
	assert_int_equal(fs_read_lines(p, 1024, &back), 0);
	assert_int_equal(back.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: no folder of this process's yet, so the handler is not installed */
		cmocka_unit_test(test_signal_ignored),
		cmocka_unit_test(test_walk),
		cmocka_unit_test(test_walk_too_deep),
		cmocka_unit_test(test_signal_removes),
		cmocka_unit_test(test_forgotten),
		cmocka_unit_test(test_signal_with_command),
		cmocka_unit_test(test_stale),
		cmocka_unit_test(test_fork_keeps_parents),
		cmocka_unit_test(test_lines),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
