/* SPDX-License-Identifier: MIT */
#include <archive.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/path.h"
#include "../util/strmap.h"
#include "../util/strv.h"
#include "../util/tempdir.h"
#include "bundle.h"
#include "index.h"
#include "store.h"
#include "../util/banned.h"

/* <into>/.fetch-<pid>-XXXXXX: a dot folder, which the store does not list */
#define UNPACK_PREFIX ".fetch-"

#define MANIFEST "MANIFEST"

/* Every regular file under dir, as paths relative to it, sorted. */
static int walk(const char *dir, const char *rel, struct strv *out)
{
	_cleanup_free_ char *full = rel ? path_join(dir, rel) : xstrdup(dir);
	DIR *dh = opendir(full);
	struct dirent *de;

	if (!dh)
		return -errno;
	while ((de = readdir(dh))) {
		_cleanup_free_ char *r = NULL, *p = NULL;
		struct stat st;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		r = rel ? path_join(rel, de->d_name) : xstrdup(de->d_name);
		p = path_join(dir, r);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			walk(dir, r, out);
		else if (S_ISREG(st.st_mode))
			strv_push(out, r);
	}
	closedir(dh);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void archive_freep(struct archive **a)
{
	if (*a)
		archive_write_free(*a);
}

static int add_data(struct archive *a, const char *name, const void *data, size_t len, struct diags *d,
		    const struct pos *pos)
{
	struct archive_entry *e = archive_entry_new();
	int r = 0;

	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, (la_int64_t)len);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, 0, 0);
	if (archive_write_header(a, e) != ARCHIVE_OK || (len && archive_write_data(a, data, len) < 0)) {
		diags_add(d, pos, "cannot write %s: %s", name, archive_error_string(a));
		r = -EIO;
	}
	archive_entry_free(e);
	return r;
}

/* A file streamed into the archive, hashed on the way (raw outputs can be large). */
static int add_file(struct archive *a, const char *name, const char *path, char hex[SHA256_HEX_LEN + 1],
		    struct diags *d)
{
	struct pos pos = { .file = path };
	struct archive_entry *e;
	struct hasher *h;
	struct stat st;
	char buf[1 << 16];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		diags_add(d, &pos, "cannot read: %s", strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	e = archive_entry_new();
	archive_entry_set_pathname(e, name);
	archive_entry_set_size(e, (la_int64_t)st.st_size);
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_mtime(e, 0, 0);
	h = hasher_new();
	if (archive_write_header(a, e) != ARCHIVE_OK) {
		diags_add(d, &pos, "cannot write %s: %s", name, archive_error_string(a));
		r = -EIO;
	}
	/* exactly the size announced in the header, even if the file grows */
	for (off_t left = st.st_size; !r && left > 0; left -= n) {
		n = read(fd, buf, (size_t)(left < (off_t)sizeof(buf) ? left : (off_t)sizeof(buf)));
		if (n <= 0) {
			diags_add(d, &pos, "cannot read: %s", n < 0 ? strerror(errno) : "the file shrank");
			r = -EIO;
			break;
		}
		hasher_add(h, buf, (size_t)n);
		if (archive_write_data(a, buf, (size_t)n) < 0) {
			diags_add(d, &pos, "cannot write %s: %s", name, archive_error_string(a));
			r = -EIO;
		}
	}
	hasher_finish(h, hex);
	archive_entry_free(e);
	close(fd);
	return r;
}

int bundle_write(const char *dir_, const struct bundle_extra *extra, size_t nextra, const char *out, int out_fd,
		 struct diags *d)
{
	_cleanup_strv_ struct strv files = STRV_INIT;
	_cleanup_strbuf_ struct strbuf manifest = STRBUF_INIT;
	__attribute__((cleanup(archive_freep))) struct archive *a = NULL;
	_cleanup_free_ char *id = path_basename(dir_), *dir = xstrdup(dir_);
	struct pos pos = { .file = out };
	int r;

	for (size_t n = strlen(dir); n > 1 && dir[n - 1] == '/'; n--)
		dir[n - 1] = '\0';
	if (!str_is_name(id)) {
		struct pos dp = { .file = dir };

		diags_add(d, &dp, "'%s' is not a run id", id);
		return -EINVAL;
	}
	if ((r = walk(dir, NULL, &files)) < 0) {
		struct pos dp = { .file = dir };

		diags_add(d, &dp, "cannot read the run folder: %s", strerror(-r));
		return r;
	}
	for (size_t i = 0; i < nextra; i++)
		strv_push(&files, extra[i].name);
	if (files.n)
		qsort(files.v, files.n, sizeof(char *), cmp_str);
	a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	if (str_endswith(out, ".tar.gz") || str_endswith(out, ".tgz"))
		archive_write_add_filter_gzip(a);
	else if (str_endswith(out, ".tar"))
		archive_write_add_filter_none(a);
	else
		archive_write_add_filter_zstd(a);
	/* no padding to a tape block after the compressed stream: libarchive pads
	 * output that is not a regular file (a pipe, ssh), and zstd then reads
	 * the zeros as a damaged frame */
	archive_write_set_bytes_in_last_block(a, 1);
	if ((out_fd >= 0 ? archive_write_open_fd(a, out_fd)
			 : archive_write_open_filename(a, streq(out, "-") ? NULL : out)) != ARCHIVE_OK) {
		diags_add(d, &pos, "cannot create the bundle: %s", archive_error_string(a));
		return -EIO;
	}
	for (size_t i = 0; i < files.n; i++) {
		_cleanup_free_ char *name = xasprintf("%s/%s", id, files.v[i]);
		const struct strbuf *data = NULL;
		char hex[SHA256_HEX_LEN + 1];

		if (streq(files.v[i], MANIFEST))
			continue; /* a stale one from an earlier import: made anew below */
		for (size_t k = 0; k < nextra; k++)
			if (streq(extra[k].name, files.v[i]))
				data = extra[k].data;
		if (data) {
			sha256_hex(data->buf ? data->buf : "", data->len, hex);
			if ((r = add_data(a, name, data->buf ? data->buf : "", data->len, d, &pos)) < 0)
				return r;
		} else {
			_cleanup_free_ char *p = path_join(dir, files.v[i]);

			if ((r = add_file(a, name, p, hex, d)) < 0)
				return r;
		}
		strbuf_addf(&manifest, "%s  %s\n", hex, files.v[i]);
	}
	{
		_cleanup_free_ char *name = xasprintf("%s/" MANIFEST, id);

		if ((r = add_data(a, name, manifest.buf ? manifest.buf : "", manifest.len, d, &pos)) < 0)
			return r;
	}
	if (archive_write_close(a) != ARCHIVE_OK) {
		diags_add(d, &pos, "cannot finish the bundle: %s", archive_error_string(a));
		return -EIO;
	}
	return 0;
}


static void archive_read_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}

static const char *member_kind(struct archive_entry *e)
{
	if (archive_entry_hardlink(e))
		return "a hard link";
	switch (archive_entry_filetype(e)) {
	case AE_IFLNK: return "a symbolic link";
	case AE_IFCHR: return "a character device";
	case AE_IFBLK: return "a block device";
	case AE_IFIFO: return "a FIFO";
	case AE_IFSOCK: return "a socket";
	case AE_IFDIR: return "a folder";
	case AE_IFREG: return "a file";
	}
	return "of an unknown type";
}

/* The state of one unpacking: what the limits have seen so far. */
struct unpack {
	struct archive *a;
	const struct bundle_limits *lim;
	struct pos pos;
	uint64_t bytes, members; /* bytes: the sizes the members declare, so far */
	uint64_t seen;           /* what the reader has unpacked so far: the ratio's numerator */
	int64_t in_size; /* the bundle file's size; -1: a pipe */
	struct diags *d;
};

static int over_ratio(struct unpack *u)
{
	int64_t in = archive_filter_bytes(u->a, -1);

	if (u->seen <= u->lim->ratio_floor || in <= 0 || u->seen / (uint64_t)in <= u->lim->max_ratio)
		return 0;
	/* in: what the reader has taken of the bundle so far, not its size */
	if (u->in_size >= 0)
		diags_add(u->d, &u->pos, "refused: the bundle unpacks to more than %u times its size (its first %" PRId64
			  " bytes of %" PRId64 " unpack to %" PRIu64 " bytes)", u->lim->max_ratio, in, u->in_size, u->seen);
	else
		diags_add(u->d, &u->pos, "refused: the bundle unpacks to more than %u times its size (its first %" PRId64
			  " bytes read unpack to %" PRIu64 " bytes)", u->lim->max_ratio, in, u->seen);
	return -EFBIG;
}

/* One regular member into fd, holes of sparse members kept as holes. */
static int unpack_data(struct unpack *u, struct archive_entry *e, const char *name, int fd)
{
	int64_t size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
	const void *buf;
	size_t len;
	la_int64_t off;
	int r;

	if (size < 0 || (uint64_t)size > u->lim->max_bytes - u->bytes) {
		diags_add(u->d, &u->pos, "refused: the bundle unpacks to more than %" PRIu64 " bytes ('%s' is %" PRId64 ")",
			  u->lim->max_bytes, name, size);
		return -EFBIG;
	}
	/*
	 * The ratio counts what has come out, not what the member declares: a
	 * large file's declared size against the first block read made any
	 * member past 64 MiB a "bomb" (200 MB from 131,072 bytes). Holes of a
	 * sparse member count for max_bytes only.
	 */
	const uint64_t before = u->seen;

	u->bytes += (uint64_t)size;
	while ((r = archive_read_data_block(u->a, &buf, &len, &off)) == ARCHIVE_OK) {
		const char *p = buf;

		if (off < 0 || (uint64_t)off + len > (uint64_t)size) {
			diags_add(u->d, &u->pos, "a damaged bundle: '%s' has more data than its size", name);
			return -EINVAL;
		}
		while (len) {
			ssize_t w = pwrite(fd, p, len, off);

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0) {
				diags_add(u->d, &u->pos, "cannot write '%s': %s", name, strerror(errno));
				return -errno;
			}
			p += w;
			off += w;
			len -= (size_t)w;
		}
		u->seen = before + (uint64_t)off;
		if ((r = over_ratio(u)) < 0)
			return r;
	}
	if (r != ARCHIVE_EOF) {
		diags_add(u->d, &u->pos, "a damaged bundle: cannot unpack '%s': %s", name, archive_error_string(u->a));
		return -EINVAL;
	}
	/* a sparse member may end in a hole: the file still has its full size */
	if (ftruncate(fd, (off_t)size) < 0 || fsync(fd) < 0) {
		diags_add(u->d, &u->pos, "cannot write '%s': %s", name, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Every member into the folder dirfd; the run id from the first name. */
/* checks the next member's name and kind: 1 with *ret_rel its path below the run's folder (pointing
 * into *ret_trimmed), 0 for a folder to pass over, or a negative error; the first member sets *id */
static int member_path(struct unpack *u, struct archive_entry *e, char **id, char **ret_trimmed,
		       const char **ret_rel)
{
	const char *name = archive_entry_pathname(e), *rel;
	char *trimmed;

	if (++u->members > u->lim->max_members) {
		diags_add(u->d, &u->pos, "refused: more than %" PRIu64 " members in the bundle", u->lim->max_members);
		return -EFBIG;
	}
	if (!name || !*name) {
		diags_add(u->d, &u->pos, "refused: a member without a name");
		return -EINVAL;
	}
	if (name[0] == '/') {
		diags_add(u->d, &u->pos, "refused: absolute path '%s' in the bundle", name);
		return -EINVAL;
	}
	trimmed = *ret_trimmed = xstrdup(name);
	for (size_t n = strlen(trimmed); n > 1 && trimmed[n - 1] == '/'; n--)
		trimmed[n - 1] = '\0'; /* folders may be named "ID/sub/" */
	if (!*id) {
		*id = xstrndup(trimmed, strcspn(trimmed, "/"));
		if (!str_is_name(*id)) {
			diags_add(u->d, &u->pos, "refused: '%s' is not a run id", *id);
			return -EINVAL;
		}
	}
	size_t idlen = strlen(*id);

	if (strncmp(trimmed, *id, idlen) != 0 || (trimmed[idlen] && trimmed[idlen] != '/')) {
		diags_add(u->d, &u->pos, "refused: '%s' is outside %s/", name, *id);
		return -EINVAL;
	}
	if (!trimmed[idlen] && archive_entry_filetype(e) == AE_IFDIR)
		return 0; /* the run's own folder */
	rel = trimmed + idlen + (trimmed[idlen] ? 1 : 0);
	if (!path_is_safe_relative(rel)) {
		diags_add(u->d, &u->pos, "refused: '%s' has '..', '.', '~', an empty part or a control character in it",
			  name);
		return -EINVAL;
	}
	if (archive_entry_filetype(e) == AE_IFDIR && !archive_entry_hardlink(e))
		return 0; /* folders are made for the files in them */
	if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e)) {
		diags_add(u->d, &u->pos, "refused: '%s' is %s (a bundle holds only files)", name, member_kind(e));
		return -EINVAL;
	}
	*ret_rel = rel;
	return 1;
}

static int unpack_all(struct unpack *u, int dirfd, char **ret_id)
{
	_cleanup_strmap_ struct strmap seen = STRMAP_INIT;
	_cleanup_strv_ struct strv names = STRV_INIT;
	_cleanup_free_ char *id = NULL;
	struct archive_entry *e;
	int r;

	while ((r = archive_read_next_header(u->a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e), *rel = NULL;
		_cleanup_free_ char *trimmed = NULL;
		size_t one = 1;
		int fd;

		r = member_path(u, e, &id, &trimmed, &rel);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		if (strmap_get(&seen, rel, &one)) {
			diags_add(u->d, &u->pos, "refused: '%s' is in the bundle twice", name);
			return -EINVAL;
		}
		strv_push(&names, rel);
		strmap_put(&seen, names.v[names.n - 1], 1);
		fd = fs_open_beneath(dirfd, rel, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0) {
			diags_add(u->d, &u->pos, "cannot write '%s': %s", name, strerror(-fd));
			return fd;
		}
		r = unpack_data(u, e, name, fd);
		close(fd);
		if (r < 0)
			return r;
	}
	if (r != ARCHIVE_EOF) {
		diags_add(u->d, &u->pos, "a damaged bundle: %s", archive_error_string(u->a));
		return -EINVAL;
	}
	if (!id) {
		diags_add(u->d, &u->pos, "an empty bundle");
		return -EINVAL;
	}
	*ret_id = TAKE_PTR(id);
	return 0;
}

int bundle_unpack(int in_fd, const char *in_name, const char *into, const struct bundle_limits *lim,
		  char **ret_dir, char **ret_id, struct diags *d)
{
	__attribute__((cleanup(archive_read_freep))) struct archive *a = archive_read_new();
	static const struct bundle_limits defaults = BUNDLE_LIMITS_DEFAULT;
	struct unpack u = { .a = a, .lim = lim ? lim : &defaults, .pos = { .file = in_name }, .in_size = -1, .d = d };
	struct stat st;
	_cleanup_free_ char *tmp = NULL, *id = NULL;
	_cleanup_close_ int dirfd = -1;
	int r;

	if (fstat(in_fd, &st) == 0 && S_ISREG(st.st_mode))
		u.in_size = (int64_t)st.st_size;
	archive_read_support_format_tar(a);
	archive_read_support_filter_all(a);
	if (archive_read_open_fd(a, in_fd, 1 << 16) != ARCHIVE_OK) {
		diags_add(d, &u.pos, "cannot open the bundle: %s", archive_error_string(a));
		return -EBADMSG; /* not a bundle lab can read: the input's fault */
	}
	/* removed should lab be stopped: the signal's handler takes it, lab gc if lab was killed */
	if ((r = tempdir_make(into, UNPACK_PREFIX, &tmp)) < 0) {
		struct pos ip = { .file = into };

		diags_add(d, &ip, "cannot create a folder to unpack into: %s", strerror(-r));
		return r;
	}
	dirfd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0) {
		r = -errno;
		diags_add(d, &u.pos, "cannot open %s: %s", tmp, strerror(errno));
	} else
		r = unpack_all(&u, dirfd, &id);
	if (r >= 0)
		r = bundle_verify(tmp, d);
	if (r < 0) {
		tempdir_remove(tmp);
		return r;
	}
	*ret_dir = TAKE_PTR(tmp);
	*ret_id = TAKE_PTR(id);
	return 0;
}

int bundle_list_stale_unpacks(const char *into, time_t now, struct strv *ret)
{
	return tempdir_list_stale(into, UNPACK_PREFIX, now, ret);
}

/* tmp (a checked run) becomes into/id; with replace, the run there is kept
 * aside until the index has the new one. */
static int place_and_index(const char *tmp, const char *into, const char *id, bool replace,
			   const struct result_set *rs, struct diags *d)
{
	_cleanup_free_ char *final = path_join(into, id), *sum = NULL;
	struct pos pos = { .file = final };
	bool swapped = false;
	int r;

	if (chmod(tmp, 0755) < 0) {
		diags_add(d, &pos, "cannot set the run folder's mode: %s", strerror(errno));
		return -errno;
	}
	if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_NOREPLACE) < 0) {
		if (errno != EEXIST) {
			diags_add(d, &pos, "cannot move the run into %s: %s", into, strerror(errno));
			return -errno;
		}
		if (!replace) {
			diags_add(d, &pos, "run %s is already in %s (it is not replaced)", id, into);
			return -EEXIST;
		}
		if (renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE) < 0) {
			diags_add(d, &pos, "cannot replace the run: %s", strerror(errno));
			return -errno;
		}
		swapped = true; /* tmp holds the old run now */
	}
	sum = index_verdict_summary(rs);
	if ((r = index_put(into, rs, sum, d)) < 0) {
		/* the index did not take it: the store goes back to what it was */
		if (swapped)
			renameat2(AT_FDCWD, tmp, AT_FDCWD, final, RENAME_EXCHANGE);
		else
			rename(final, tmp);
		return r;
	}
	if (swapped)
		fs_remove_tree(tmp);
	return 0;
}

int bundle_import(int in_fd, const char *in_name, const char *into, bool replace, const struct bundle_limits *lim,
		  char **ret_id, struct diags *d)
{
	_cleanup_free_ char *tmp = NULL, *id = NULL, *final = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	int r;

	if ((r = bundle_unpack(in_fd, in_name, into, lim, &tmp, &id, d)) < 0)
		return r;
	final = path_join(into, id);
	if (!replace && access(final, F_OK) == 0) {
		struct pos pos = { .file = in_name };

		diags_add(d, &pos, "run %s is already in %s (it is not replaced)", id, into);
		r = -EEXIST;
	} else if ((r = store_load_as(tmp, id, id, &rs, d)) >= 0) {
		r = place_and_index(tmp, into, id, replace, rs, d);
	}
	/* gone when the run took its place; else the refused run or the replaced one */
	tempdir_remove(tmp);
	if (r < 0)
		return r;
	*ret_id = TAKE_PTR(id);
	return 0;
}

void bundle_manifest_release(struct bundle_manifest *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].name);
	free(m->v);
	strmap_release(&m->names);
	memset(m, 0, sizeof(*m));
}

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

int bundle_manifest_parse(const char *buf, size_t len, const char *file, struct bundle_manifest *ret,
			  struct diags *d)
{
	struct bundle_manifest m = { 0 };
	struct pos pos = { .file = file };
	size_t alloc = 0;

	for (const char *l = buf, *end = buf + len; l < end;) {
		const char *nl = memchr(l, '\n', (size_t)(end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(end - l);
		_cleanup_free_ char *name = NULL;
		size_t one;

		pos.line++;
		if (n < SHA256_HEX_LEN + 3 || !is_hex(l, SHA256_HEX_LEN) || l[SHA256_HEX_LEN] != ' ' ||
		    l[SHA256_HEX_LEN + 1] != ' ' || memchr(l, '\0', n)) {
			diags_add(d, &pos, "malformed MANIFEST line (want 64 hex digits, two spaces, a path)");
			goto fail;
		}
		name = xstrndup(l + SHA256_HEX_LEN + 2, n - SHA256_HEX_LEN - 2);
		if (!path_is_safe_relative(name) || streq(name, MANIFEST)) {
			diags_add(d, &pos, "refused: the MANIFEST names '%s', not a path inside the run", name);
			goto fail;
		}
		if (strmap_get(&m.names, name, &one)) {
			diags_add(d, &pos, "refused: the MANIFEST names '%s' twice", name);
			goto fail;
		}
		GROW(m.v, alloc, m.n + 1);
		strmap_put(&m.names, name, m.n); /* the string moves into v, not elsewhere */
		m.v[m.n] = (struct bundle_manifest_entry){ .name = TAKE_PTR(name), .line = pos.line };
		memcpy(m.v[m.n].sha256, l, SHA256_HEX_LEN);
		m.v[m.n].sha256[SHA256_HEX_LEN] = '\0';
		m.n++;
		l = nl ? nl + 1 : end;
	}
	*ret = m;
	return 0;
fail:
	bundle_manifest_release(&m);
	return -EINVAL;
}

int bundle_verify(const char *dir, struct diags *d)
{
	_cleanup_free_ char *mp = path_join(dir, MANIFEST);
	_cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
	_cleanup_strv_ struct strv files = STRV_INIT;
	_cleanup_(bundle_manifest_release) struct bundle_manifest m = { 0 };
	_cleanup_close_ int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct pos pos = { .file = mp };
	int r;

	if (dirfd < 0 || strbuf_read_file(&buf, mp, 64 << 20) < 0) {
		diags_add(d, &pos, "no MANIFEST: not a lab bundle");
		return -EINVAL;
	}
	if ((r = bundle_manifest_parse(buf.buf ? buf.buf : "", buf.len, mp, &m, d)) < 0)
		return r;
	for (size_t i = 0; i < m.n; i++) {
		char hex[SHA256_HEX_LEN + 1];
		_cleanup_close_ int fd = fs_open_beneath(dirfd, m.v[i].name, O_RDONLY, 0);
		struct stat st;

		pos.line = m.v[i].line;
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			diags_add(d, &pos, "%s is missing", m.v[i].name);
			return -EINVAL;
		}
		if ((r = sha256_fd(fd, hex)) < 0) {
			diags_add(d, &pos, "cannot read %s: %s", m.v[i].name, strerror(-r));
			return -EIO;
		}
		if (!streq(hex, m.v[i].sha256)) {
			diags_add(d, &pos, "%s does not match its checksum", m.v[i].name);
			return -EINVAL;
		}
	}
	walk(dir, NULL, &files);
	for (size_t i = 0; i < files.n; i++) {
		size_t one;

		if (!streq(files.v[i], MANIFEST) && !strmap_get(&m.names, files.v[i], &one)) {
			pos.line = 0;
			diags_add(d, &pos, "%s is not in the MANIFEST", files.v[i]);
			return -EINVAL;
		}
	}
	return 0;
}

const char *const bundle_reports[] = { "report.html", "report.txt", "report.md", "report.json", NULL };

/* MANIFEST or a report: made from the run, not part of it */
static bool made_from_run(const char *rel)
{
	if (streq(rel, MANIFEST))
		return true;
	for (size_t i = 0; bundle_reports[i]; i++)
		if (streq(rel, bundle_reports[i]))
			return true;
	return false;
}

/* The first difference, named by its path in the run; 0 (they differ). */
_printf_(3, 4) static int differs(struct diags *d, const char *rel, const char *fmt, ...)
{
	struct pos pos = { .file = rel };
	va_list ap;

	va_start(ap, fmt);
	diags_addv(d, &pos, fmt, ap);
	va_end(ap);
	return 0;
}

int bundle_same_run(const char *unpacked, const char *stored, struct diags *d)
{
	_cleanup_free_ char *mp = path_join(unpacked, MANIFEST);
	_cleanup_strbuf_ struct strbuf buf = STRBUF_INIT;
	_cleanup_strv_ struct strv files = STRV_INIT;
	_cleanup_(bundle_manifest_release) struct bundle_manifest m = { 0 };
	_cleanup_free_ bool *seen = NULL;
	_cleanup_close_ int dirfd = -1;
	struct pos pos = { .file = mp };
	int r;

	if ((r = strbuf_read_file(&buf, mp, 64 << 20)) < 0) {
		diags_add(d, &pos, "cannot read: %s", strerror(-r));
		return r;
	}
	if ((r = bundle_manifest_parse(buf.buf ? buf.buf : "", buf.len, mp, &m, d)) < 0)
		return r;
	pos.file = stored;
	if ((dirfd = open(stored, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || (r = walk(stored, NULL, &files)) < 0) {
		r = dirfd < 0 ? -errno : r;
		diags_add(d, &pos, "cannot read the run folder: %s", strerror(-r));
		return r;
	}
	if (files.n)
		qsort(files.v, files.n, sizeof(char *), cmp_str);
	seen = xcalloc(m.n + 1, sizeof(*seen));
	for (size_t i = 0; i < files.n; i++) {
		const char *rel = files.v[i];
		_cleanup_close_ int fd = -1;
		char hex[SHA256_HEX_LEN + 1];
		size_t at;

		if (made_from_run(rel))
			continue;
		if (!strmap_get(&m.names, rel, &at))
			return differs(d, rel, "only the stored copy has it");
		seen[at] = true;
		if ((fd = fs_open_beneath(dirfd, rel, O_RDONLY, 0)) < 0 || (r = sha256_fd(fd, hex)) < 0) {
			r = fd < 0 ? fd : r;
			pos.file = rel;
			diags_add(d, &pos, "cannot read it in %s: %s", stored, strerror(-r));
			return r;
		}
		if (!streq(hex, m.v[at].sha256))
			return differs(d, rel, "not the bundle's (sha256 %.12s here, %.12s in the bundle)", hex,
				       m.v[at].sha256);
	}
	for (size_t i = 0; i < m.n; i++)
		if (!seen[i] && !made_from_run(m.v[i].name))
			return differs(d, m.v[i].name, "only the bundle has it");
	return 1;
}
