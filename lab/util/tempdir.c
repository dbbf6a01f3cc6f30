/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "alloc.h"
#include "fs.h"
#include "macro.h"
#include "path.h"
#include "sigchain.h"
#include "strv.h"
#include "tempdir.h"
#include "banned.h"

/* Folders at a time: lab compare nests a bundle's in its own, no more. */
#define TEMPDIR_MAX 16
/* Folders the walk may fail to empty (not ours to remove) before it gives up. */
#define STUCK_MAX 64
/* How deep the walk goes: a run folder is a few levels. */
#define DEPTH_MAX 256
/* A folder whose pid names another process by now is stale after this. */
#define STALE_SECONDS 3600

struct slot {
	volatile sig_atomic_t active;
	pid_t owner;                /* the process that made it: a fork does not remove it */
	int parent_fd, fd;          /* fd holds the flock */
	char name[NAME_MAX + 1];
	char *path;                 /* as tempdir_make returned it, to find the slot */
};

static struct slot slots[TEMPDIR_MAX];

struct stuck {
	dev_t dev;
	ino_t ino;
};

static bool is_stuck(const struct stuck *v, size_t n, const struct stat *st)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].dev == st->st_dev && v[i].ino == st->st_ino)
			return true;
	return false;
}

/*
 * Depth first with one descriptor at a time and no memory but the stack's:
 * each folder is read from its start, its files unlinked and its empty
 * folders removed; at the first folder that is not empty the walk goes
 * into it, and when a folder is as empty as it gets, back up through "..",
 * where reading starts over (what went is gone, so that is cheap). A folder
 * that cannot be emptied (a file not ours, another file system, too deep)
 * is remembered and not entered again, so the walk ends.
 */
void tempdir_remove_tree_at(int parent_fd, const char *name)
{
	struct stuck stuck[STUCK_MAX];
	size_t nstuck = 0;
	char buf[4096] __attribute__((aligned(8)));
	unsigned depth = 0;
	struct stat top;
	int fd = openat(parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &top) < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	for (;;) {
		bool descended = false, left = false;
		ssize_t n;
		struct stat st;

		if (lseek(fd, 0, SEEK_SET) < 0)
			break;
		while (!descended && (n = getdents64(fd, buf, sizeof(buf))) > 0) {
			for (ssize_t off = 0; off < n && !descended;) {
				struct dirent64 *e = (struct dirent64 *)(buf + off);
				const char *c = e->d_name;
				int sub, err;

				off += e->d_reclen;
				if (c[0] == '.' && (!c[1] || (c[1] == '.' && !c[2])))
					continue;
				if (unlinkat(fd, c, 0) == 0 || errno == ENOENT)
					continue;
				err = errno;
				if (err == EISDIR || err == EPERM) { /* a folder (EPERM: POSIX allows it) */
					if (unlinkat(fd, c, AT_REMOVEDIR) == 0 || errno == ENOENT)
						continue;
					err = errno;
				}
				if ((err == ENOTEMPTY || err == EEXIST) && depth < DEPTH_MAX &&
				    fstatat(fd, c, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
				    st.st_dev == top.st_dev && !is_stuck(stuck, nstuck, &st) &&
				    (sub = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
					close(fd);
					fd = sub;
					depth++;
					descended = true;
				} else {
					left = true;
				}
			}
		}
		if (descended)
			continue;
		if (left) {
			/* as empty as it gets: not to be entered again */
			if (nstuck == STUCK_MAX || fstat(fd, &st) < 0)
				break;
			stuck[nstuck++] = (struct stuck){ st.st_dev, st.st_ino };
		}
		if (depth == 0) {
			close(fd);
			unlinkat(parent_fd, name, AT_REMOVEDIR);
			return;
		}
		{
			int up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

			close(fd);
			if ((fd = up) < 0)
				return;
			depth--;
		}
	}
	close(fd);
}

static void remove_all(void)
{
	int e = errno;
	pid_t me = getpid();

	for (size_t i = 0; i < TEMPDIR_MAX; i++)
		if (slots[i].active && slots[i].owner == me)
			tempdir_remove_tree_at(slots[i].parent_fd, slots[i].name);
	errno = e;
}

static struct slot *find(const char *path)
{
	for (size_t i = 0; path && i < TEMPDIR_MAX; i++)
		if (slots[i].path && streq(slots[i].path, path))
			return &slots[i];
	return NULL;
}

static void slot_release(struct slot *s)
{
	s->active = 0;
	atomic_signal_fence(memory_order_seq_cst);
	if (s->fd >= 0)
		close(s->fd);
	if (s->parent_fd >= 0)
		close(s->parent_fd);
	free(s->path);
	*s = (struct slot){ .fd = -1, .parent_fd = -1 };
}

int tempdir_make(const char *parent, const char *prefix, char **ret_path)
{
	_cleanup_free_ char *path = xasprintf("%s/%s%ld-XXXXXX", parent, prefix, (long)getpid());
	const char *name = strrchr(path, '/') + 1;
	struct slot *s = NULL;
	int r;

	for (size_t i = 0; i < TEMPDIR_MAX && !s; i++)
		if (!slots[i].path)
			s = &slots[i];
	if (!s)
		return -EMFILE;
	if (strlen(name) >= sizeof(s->name))
		return -ENAMETOOLONG;
	sigchain_push(remove_all);
	if (!mkdtemp(path))
		return -errno;
	*s = (struct slot){ .owner = getpid(), .fd = -1, .parent_fd = -1 };
	memcpy(s->name, name, strlen(name) + 1);
	s->path = xstrdup(path);
	s->parent_fd = open(parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (s->parent_fd >= 0)
		s->fd = openat(s->parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* blocks only while a lab gc looks whether it is in use */
	if (s->fd < 0 || flock(s->fd, LOCK_EX) < 0) {
		r = -errno;
		rmdir(path);
		slot_release(s);
		return r;
	}
	atomic_signal_fence(memory_order_seq_cst);
	s->active = 1;
	*ret_path = TAKE_PTR(path);
	return 0;
}

int tempdir_remove(const char *path)
{
	struct slot *s = find(path);
	int r = path ? fs_remove_tree(path) : 0;

	if (s)
		slot_release(s);
	return r;
}

void tempdir_forget(const char *path)
{
	struct slot *s = find(path);

	if (s)
		slot_release(s);
}

/* The pid in <prefix><pid>-XXXXXX, or 0 (an older lab's <prefix>XXXXXX). */
static pid_t name_pid(const char *rest)
{
	char *end;
	long pid = strtol(rest, &end, 10);

	return end != rest && *end == '-' && strlen(end + 1) == 6 && pid > 0 && pid <= INT_MAX ? (pid_t)pid : 0;
}

/* Whether pid is a process that runs: not gone, not a zombie nobody reaped. */
static bool running(pid_t pid)
{
	_cleanup_free_ char *stat = xasprintf("/proc/%ld/stat", (long)pid);
	_cleanup_close_ int fd = -1;
	char buf[512], *paren;
	ssize_t n;

	if (kill(pid, 0) < 0 && errno == ESRCH)
		return false;
	if ((fd = open(stat, O_RDONLY | O_CLOEXEC)) < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return true;
	buf[n] = '\0';
	paren = strrchr(buf, ')');
	return !(paren && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X'));
}

/* Whether a process holds the folder's flock; fd is the folder's. */
static bool locked(int fd)
{
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK;
	flock(fd, LOCK_UN);
	return false;
}

int tempdir_list_stale(const char *parent, const char *prefix, time_t now, struct strv *ret)
{
	DIR *dh = opendir(parent);
	struct dirent *e;

	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dh))) {
		const char *rest = e->d_name + strlen(prefix);
		_cleanup_close_ int fd = -1;
		struct stat st;
		pid_t pid;
		bool alive;

		if (!str_startswith(e->d_name, prefix) || !*rest ||
		    fstatat(dirfd(dh), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		fd = openat(dirfd(dh), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || locked(fd))
			continue;
		pid = name_pid(rest);
		alive = pid > 0 && running(pid);
		if ((pid > 0 && !alive) || now - st.st_mtime > STALE_SECONDS)
			strv_push_take(ret, path_join(parent, e->d_name));
	}
	closedir(dh);
	return 0;
}

int tempdir_remove_stale(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* held while it goes: a lab that opened it meanwhile keeps it */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? -EBUSY : -errno;
	return fs_remove_tree(path);
}
