/* SPDX-License-Identifier: MIT */
#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "alloc.h"
#include "path.h"
#include "strbuf.h"
#include "strv.h"
#include "tarball.h"
#include "banned.h"

static void read_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}

static void write_freep(struct archive **a)
{
	if (*a)
		archive_write_free(*a);
}

/* The unpacking in progress: the top folder, and the last folder opened
 * below it (members come folder by folder: most reuse it). */
struct unpack {
	struct archive *a;
	int top;
	char *dir; /* relative to top; "" is top itself */
	int dirfd;
	size_t members;
	struct strbuf *err;
};

/* The folder `rel` below u->top (made when missing), no component
 * followed through a symlink; a descriptor owned by u. */
static int open_dir(struct unpack *u, const char *rel)
{
	_cleanup_free_ char *copy = xstrdup(rel);
	int cur, next;

	if (u->dir && streq(u->dir, rel))
		return u->dirfd;
	if (u->dirfd >= 0 && u->dirfd != u->top)
		close(u->dirfd);
	free(u->dir);
	u->dir = NULL;
	u->dirfd = -1;
	if ((cur = fcntl(u->top, F_DUPFD_CLOEXEC, 3)) < 0)
		return -errno;
	for (char *c = copy, *slash; *rel && c; c = slash ? slash + 1 : NULL) {
		if ((slash = strchr(c, '/')))
			*slash = '\0';
		next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 && errno == ENOENT) {
			if (mkdirat(cur, c, 0755) < 0 && errno != EEXIST) {
				next = -errno;
				close(cur);
				return next;
			}
			next = openat(cur, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (next < 0) {
			next = -errno;
			close(cur);
			return next;
		}
		close(cur);
		cur = next;
	}
	u->dir = xstrdup(rel);
	u->dirfd = cur;
	return cur;
}

/* A symlink target that stays below the top, read as text from the link's folder. */
static bool target_inside(const char *rel, const char *target)
{
	long depth = 0;

	if (!*target || target[0] == '/')
		return false;
	for (const char *c = rel; (c = strchr(c, '/')); c++)
		depth++;
	for (const char *c = target; *c;) {
		size_t len = strcspn(c, "/");

		if (len == 2 && c[0] == '.' && c[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (len && !(len == 1 && c[0] == '.'))
			depth++;
		c += len;
		c += *c == '/';
	}
	return true;
}

/* A member's name as a path below the top: the first `strip` components
 * dropped, then any "./" (tar -C DIR -cf - . makes "./x") and a folder's
 * trailing "/"; NULL when nothing is left (the top itself). */
static char *clean_name(const char *name, unsigned strip)
{
	char *s;
	size_t n;

	for (unsigned i = 0; i < strip && name; i++) {
		name = strchr(name, '/');
		name = name ? name + 1 : NULL;
	}
	while (name && name[0] == '.' && name[1] == '/')
		name += 2;
	if (!name || !*name || streq(name, "."))
		return NULL;
	s = xstrdup(name);
	for (n = strlen(s); n > 1 && s[n - 1] == '/'; n--)
		s[n - 1] = '\0';
	return s;
}

static int fail(struct unpack *u, int r, const char *name, const char *why)
{
	strbuf_addf(u->err, "'%s': %s", name, why ? why : strerror(-r));
	return r;
}

static int write_data(struct unpack *u, int fd, const char *name)
{
	const void *buf;
	size_t len;
	la_int64_t off;
	int r;

	while ((r = archive_read_data_block(u->a, &buf, &len, &off)) == ARCHIVE_OK) {
		const char *p = buf;

		while (len) {
			ssize_t w = pwrite(fd, p, len, off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return fail(u, -errno, name, NULL);
			p += w;
			off += w;
			len -= (size_t)w;
		}
	}
	if (r != ARCHIVE_EOF)
		return fail(u, -EIO, name, archive_error_string(u->a));
	return 0;
}

/* One member below u->top at rel (a safe name). */
static int unpack_one(struct unpack *u, struct archive_entry *e, const char *rel, unsigned strip)
{
	_cleanup_free_ char *parent = path_dirname(rel), *base = NULL;
	const char *link = archive_entry_hardlink(e);
	mode_t type = archive_entry_filetype(e), perm = archive_entry_perm(e) & 0777;
	struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { archive_entry_mtime(e), archive_entry_mtime_nsec(e) } };
	int dfd, fd, r;

	base = xstrdup(strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel);
	if (streq(parent, "."))
		parent[0] = '\0';
	if ((dfd = open_dir(u, parent)) < 0)
		return fail(u, dfd, rel, NULL);
	if (link) {
		_cleanup_free_ char *from = clean_name(link, strip);
		_cleanup_free_ char *fparent = NULL, *fbase = NULL;
		int sfd;

		if (!from || !path_is_safe_relative(from))
			return fail(u, -EINVAL, rel, "a hard link to an unsafe name");
		fparent = path_dirname(from);
		fbase = xstrdup(strrchr(from, '/') ? strrchr(from, '/') + 1 : from);
		if (streq(fparent, "."))
			fparent[0] = '\0';
		/* the link's own folder stays cached; the source's is opened apart */
		{
			struct unpack other = { .top = u->top, .dirfd = -1, .err = u->err };

			if ((sfd = open_dir(&other, fparent)) < 0)
				return fail(u, sfd, rel, NULL);
			r = linkat(sfd, fbase, dfd, base, 0) < 0 ? -errno : 0;
			close(sfd);
			free(other.dir);
		}
		return r < 0 ? fail(u, r, rel, NULL) : 0;
	}
	switch (type) {
	case AE_IFDIR:
		if (mkdirat(dfd, base, 0755) < 0 && errno != EEXIST)
			return fail(u, -errno, rel, NULL);
		return 0;
	case AE_IFLNK: {
		const char *target = archive_entry_symlink(e);

		if (!target || !target_inside(rel, target))
			return fail(u, -EINVAL, rel, "a symlink that points outside the tree");
		if (symlinkat(target, dfd, base) < 0 && (errno != EEXIST || unlinkat(dfd, base, 0) < 0 ||
							   symlinkat(target, dfd, base) < 0))
			return fail(u, -errno, rel, NULL);
		utimensat(dfd, base, ts, AT_SYMLINK_NOFOLLOW);
		return 0;
	}
	case AE_IFREG:
		break;
	default:
		return fail(u, -EINVAL, rel, "not a file, folder or link (a device or FIFO)");
	}
	fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST && unlinkat(dfd, base, 0) == 0) /* a later copy of the same name wins, as with tar */
		fd = openat(dfd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return fail(u, -errno, rel, NULL);
	r = write_data(u, fd, rel);
	/* a sparse member may end in a hole: the file still has its full size */
	if (r >= 0 && archive_entry_size_is_set(e) && ftruncate(fd, archive_entry_size(e)) < 0)
		r = fail(u, -errno, rel, NULL);
	if (r >= 0 && (fchmod(fd, perm) < 0 || futimens(fd, ts) < 0))
		r = fail(u, -errno, rel, NULL);
	close(fd);
	return r < 0 ? r : 0;
}

int tarball_extract(const char *path, int dirfd, unsigned strip, size_t *ret_members, struct strbuf *err)
{
	__attribute__((cleanup(read_freep))) struct archive *a = archive_read_new();
	struct unpack u = { .a = a, .top = dirfd, .dirfd = -1, .err = err };
	struct archive_entry *e;
	int r;

	archive_read_support_format_tar(a);
	archive_read_support_format_gnutar(a);
	archive_read_support_filter_all(a);
	if (archive_read_open_filename(a, path, 1 << 20) != ARCHIVE_OK) {
		strbuf_addf(err, "cannot open '%s': %s", path, archive_error_string(a));
		return -EIO;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		_cleanup_free_ char *trimmed = name ? clean_name(name, strip) : NULL;

		if (!trimmed)
			continue; /* the top folder itself */
		if (!path_is_safe_relative(trimmed)) {
			r = fail(&u, -EINVAL, name, "'..', '.', '~', an empty part or a control character in the name");
			goto out;
		}
		if ((r = unpack_one(&u, e, trimmed, strip)) < 0)
			goto out;
		u.members++;
	}
	if (r != ARCHIVE_EOF) {
		strbuf_addf(err, "'%s' is damaged: %s", path, archive_error_string(a));
		r = -EIO;
		goto out;
	}
	r = 0;
	if (ret_members)
		*ret_members = u.members;
out:
	if (u.dirfd >= 0)
		close(u.dirfd);
	free(u.dir);
	return r;
}

/* Every name below dir/rel, sorted, folders before what they hold. */
static int walk(const char *dir, const char *rel, struct strv *out)
{
	_cleanup_free_ char *path = path_join(dir, rel);
	struct dirent **names = NULL;
	int n = scandir(path, &names, NULL, alphasort), r = 0;

	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		_cleanup_free_ char *sub = NULL, *full = NULL;
		struct stat st;

		if (!r && !streq(names[i]->d_name, ".") && !streq(names[i]->d_name, "..")) {
			sub = path_join(rel, names[i]->d_name);
			full = path_join(dir, sub);
			strv_push(out, sub);
			if (lstat(full, &st) == 0 && S_ISDIR(st.st_mode))
				r = walk(dir, sub, out);
		}
		free(names[i]);
	}
	free(names);
	return r;
}

static int sys_fail(struct strbuf *err, const char *what, const char *path)
{
	int r = -errno;

	strbuf_addf(err, "cannot %s '%s': %s", what, path, strerror(-r));
	return r;
}

static int add_member(struct archive *a, const char *dir, const char *rel, struct strbuf *err)
{
	_cleanup_free_ char *full = path_join(dir, rel);
	struct archive_entry *e;
	struct stat st;
	char buf[1 << 16], target[4096];
	ssize_t n = 0;
	int fd = -1, r = 0;

	if (lstat(full, &st) < 0)
		return sys_fail(err, "read", full);
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode))
		return 0; /* sockets and the like: nothing a tree of modules has */
	if (S_ISLNK(st.st_mode) && (n = readlink(full, target, sizeof(target) - 1)) < 0)
		return sys_fail(err, "read", full);
	if (S_ISREG(st.st_mode) && (fd = open(full, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		return sys_fail(err, "read", full);
	e = archive_entry_new();
	archive_entry_copy_stat(e, &st);
	archive_entry_set_pathname(e, rel);
	archive_entry_set_uid(e, 0);
	archive_entry_set_gid(e, 0);
	if (S_ISLNK(st.st_mode)) {
		target[n] = '\0';
		archive_entry_set_symlink(e, target);
	}
	if (archive_write_header(a, e) != ARCHIVE_OK)
		r = -EIO;
	while (!r && fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		if (archive_write_data(a, buf, (size_t)n) != n)
			r = -EIO;
	if (!r && fd >= 0 && n < 0)
		r = -errno;
	if (r < 0)
		strbuf_addf(err, "cannot pack '%s': %s", full, r == -EIO ? archive_error_string(a) : strerror(-r));
	if (fd >= 0)
		close(fd);
	archive_entry_free(e);
	return r;
}

int tarball_create(const char *dir, const char *top, const char *out, struct strbuf *err)
{
	__attribute__((cleanup(write_freep))) struct archive *a = archive_write_new();
	_cleanup_strv_ struct strv names = STRV_INIT;
	int r;

	strv_push(&names, top);
	if ((r = walk(dir, top, &names)) < 0) {
		strbuf_addf(err, "cannot read '%s/%s': %s", dir, top, strerror(-r));
		return r;
	}
	archive_write_set_format_pax_restricted(a);
	archive_write_add_filter_none(a);
	if (archive_write_open_filename(a, out) != ARCHIVE_OK) {
		strbuf_addf(err, "cannot create '%s': %s", out, archive_error_string(a));
		return -EIO;
	}
	for (size_t i = 0; i < names.n; i++)
		if ((r = add_member(a, dir, names.v[i], err)) < 0)
			return r;
	if (archive_write_close(a) != ARCHIVE_OK) {
		strbuf_addf(err, "cannot finish '%s': %s", out, archive_error_string(a));
		return -EIO;
	}
	return 0;
}
