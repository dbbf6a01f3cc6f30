/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <ftw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "alloc.h"
#include "diag.h"
#include "fs.h"
#include "path.h"
#include "strbuf.h"
#include "strv.h"
#include "banned.h"

int fs_write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int fs_write_atomic(const char *path, const void *data, size_t len, unsigned mode)
{
	/* an unpredictable name created with O_EXCL: nothing planted there is followed */
	_cleanup_free_ char *dir = path_dirname(path), *tmp = NULL;
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	_cleanup_close_ int fd = -1;
	int r;

	tmp = xasprintf("%s/.%s.XXXXXX", dir, base);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return -errno;
	r = fchmod(fd, mode) < 0 ? -errno : 0;
	if (r == 0)
		r = fs_write_all(fd, data, len);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

int fs_open_beneath(int dirfd, const char *rel, int flags, unsigned mode)
{
	_cleanup_free_ char *copy = NULL;
	_cleanup_close_ int cur = -1;
	char *c, *slash;
	int fd;

	if (!path_is_safe_relative(rel))
		return -EINVAL;
	copy = xstrdup(rel);
	c = copy;
	cur = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return -errno;
	while ((slash = strchr(c, '/'))) {
		int next;

		*slash = '\0';
		next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT && (flags & O_CREAT)) {
			if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST)
				return -errno;
			next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0)
			return errno == ELOOP ? -ELOOP : -errno;
		close(cur);
		cur = next;
		c = slash + 1;
	}
	fd = openat(cur, c, flags | O_NOFOLLOW | O_CLOEXEC, mode);
	return fd < 0 ? -errno : fd;
}

int fs_append(const char *path, const void *data, size_t len)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	const char *p = data;

	if (fd < 0)
		return -errno;
	while (len) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int fs_copy_file(const char *from, const char *to, bool overwrite)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct stat st;
	int r;

	if (!overwrite && access(to, F_OK) == 0)
		return -EEXIST;
	if (stat(from, &st) < 0)
		return -errno;
	r = strbuf_read_file(&sb, from, 0);
	if (r < 0)
		return r;
	return fs_write_atomic(to, sb.buf, sb.len, st.st_mode & 0777);
}

int fs_copy_tree(const char *from, const char *to, bool overwrite, size_t *ret_copied)
{
	DIR *d = opendir(from);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	r = path_mkdir_p(to, 0755);
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_free_ char *a = NULL, *b = NULL;
		struct stat st;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		a = path_join(from, de->d_name);
		b = path_join(to, de->d_name);
		if (lstat(a, &st) < 0) {
			r = -errno;
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			r = fs_copy_tree(a, b, overwrite, ret_copied);
		} else if (S_ISREG(st.st_mode)) {
			r = fs_copy_file(a, b, overwrite);
			if (r == -EEXIST)
				r = 0;
			else if (r == 0 && ret_copied)
				(*ret_copied)++;
		}
	}
	closedir(d);
	return r < 0 ? r : 0;
}

int fs_lock(const char *path, void (*on_wait)(void *userdata), void *userdata)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	if (on_wait)
		on_wait(userdata);
	if (flock(fd, LOCK_EX) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (type == FTW_DP ? rmdir(path) : unlink(path)) < 0 ? -errno : 0;
}

int fs_remove_tree(const char *path)
{
	int r;

	if (access(path, F_OK) < 0 && errno == ENOENT)
		return 0;
	r = nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	return r < 0 ? -errno : r;
}

int fs_check_private(const char *path, enum fs_privacy level, struct diags *d)
{
	struct pos pos = { .file = path };
	struct stat st;
	unsigned bad = level == FS_PRIVATE ? 077 : 022;

	if ((level == FS_PRIVATE_FILE ? lstat(path, &st) : stat(path, &st)) < 0) {
		diags_add(d, &pos, "cannot check: %s", strerror(errno));
		return -errno;
	}
	if (level == FS_PRIVATE_FILE) {
		bad = 077;
		if (!S_ISREG(st.st_mode)) {
			diags_add(d, &pos, "refused: not a regular file (a link or a special file)");
			return -EPERM;
		}
	}
	if (st.st_uid != geteuid()) {
		diags_add(d, &pos, "refused: it belongs to uid %u, not to you (uid %u)", (unsigned)st.st_uid,
			  (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & bad) {
		diags_add(d, &pos, "refused: other users can %s it (mode %04o; chmod go-%s fixes it)",
			  bad == 022 ? "write to" : "reach", (unsigned)(st.st_mode & 07777), bad == 022 ? "w" : "rwx");
		return -EPERM;
	}
	return 0;
}

int fs_read_lines(const char *path, size_t max, struct strv *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = strbuf_read_file(&sb, path, max);

	if (r < 0)
		return r;
	for (const char *p = sb.buf ? sb.buf : "", *nl; *p; p = *nl ? nl + 1 : nl) {
		nl = strchrnul(p, '\n');
		if (nl > p) {
			_cleanup_free_ char *line = xstrndup(p, (size_t)(nl - p));

			strv_push(ret, line);
		}
	}
	return 0;
}

int fs_write_lines(const char *path, const struct strv *v, unsigned mode)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < v->n; i++)
		strbuf_addf(&sb, "%s\n", v->v[i]);
	return fs_write_atomic(path, sb.buf ? sb.buf : "", sb.len, mode);
}
