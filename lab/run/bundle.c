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
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/path.h"
#include "../util/strmap.h"
#include "../util/strv.h"
#include "bundle.h"
#include "../util/banned.h"

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

int bundle_write(const char *dir, const struct bundle_extra *extra, size_t nextra, const char *out,
		 struct diags *d)
{
	_cleanup_strv_ struct strv files = STRV_INIT;
	_cleanup_strbuf_ struct strbuf manifest = STRBUF_INIT;
	__attribute__((cleanup(archive_freep))) struct archive *a = NULL;
	const char *id = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
	struct pos pos = { .file = out };
	int r;

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
	if (archive_write_open_filename(a, streq(out, "-") ? NULL : out) != ARCHIVE_OK) {
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

/* A path inside the bundle is ID/relative, relative free of "..", "." and empty parts. */
static bool safe_name(const char *name, const char *id)
{
	size_t n = strlen(id);
	const char *p;

	if (strncmp(name, id, n) != 0 || name[n] != '/' || !name[n + 1])
		return false;
	p = name + n + 1;
	if (*p == '/')
		return false;
	for (const char *c = p; *c;) {
		const char *e = strchrnul(c, '/');
		size_t len = (size_t)(e - c);

		if (len == 0 || (len == 1 && c[0] == '.') || (len == 2 && c[0] == '.' && c[1] == '.'))
			return false;
		c = *e ? e + 1 : e;
	}
	return true;
}

static void archive_read_freep(struct archive **a)
{
	if (*a)
		archive_read_free(*a);
}

int bundle_read(const char *in, const char *into, bool replace, char **ret_id, struct diags *d)
{
	__attribute__((cleanup(archive_read_freep))) struct archive *a = archive_read_new();
	struct archive_entry *e;
	struct pos pos = { .file = in };
	_cleanup_free_ char *id = NULL, *tmp = NULL, *final = NULL;
	int r;

	archive_read_support_format_tar(a);
	archive_read_support_filter_all(a);
	if (archive_read_open_filename(a, streq(in, "-") ? NULL : in, 1 << 16) != ARCHIVE_OK) {
		diags_add(d, &pos, "cannot open the bundle: %s", archive_error_string(a));
		return -EIO;
	}
	while ((r = archive_read_next_header(a, &e)) == ARCHIVE_OK) {
		const char *name = archive_entry_pathname(e);
		_cleanup_free_ char *path = NULL, *parent = NULL;
		mode_t type = archive_entry_filetype(e);

		if (!name || name[0] == '/') {
			diags_add(d, &pos, "refused: absolute path '%s' in the bundle", name ? name : "");
			goto fail;
		}
		if (!id) {
			const char *slash = strchr(name, '/');

			id = slash ? xstrndup(name, (size_t)(slash - name)) : xstrdup(name);
			if (!str_is_name(id)) {
				diags_add(d, &pos, "refused: '%s' is not a run id", id);
				goto fail;
			}
			final = path_join(into, id);
			if (path_is_dir(final) && !replace) {
				diags_add(d, &pos, "run %s is already in %s (it is not replaced)", id, into);
				goto fail;
			}
			tmp = xasprintf("%s/.fetch-%s-%d", into, id, (int)getpid());
			fs_remove_tree(tmp);
			if ((r = path_mkdir_p(tmp, 0755)) < 0) {
				diags_add(d, &pos, "cannot create %s: %s", tmp, strerror(-r));
				goto fail;
			}
		}
		if (type == AE_IFDIR && (streq(name, id) || (str_startswith(name, id) && name[strlen(id)] == '/' &&
							      !name[strlen(id) + 1])))
			continue;
		if (!safe_name(name, id)) {
			diags_add(d, &pos, "refused: '%s' is outside %s/ or has '..' in it", name, id);
			goto fail;
		}
		if (type == AE_IFDIR)
			continue;
		if (type != AE_IFREG) {
			diags_add(d, &pos, "refused: '%s' is a link or a special file", name);
			goto fail;
		}
		path = path_join(tmp, name + strlen(id) + 1);
		parent = path_dirname(path);
		path_mkdir_p(parent, 0755);
		{
			int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);

			if (fd < 0) {
				diags_add(d, &pos, "cannot write %s: %s", path, strerror(errno));
				goto fail;
			}
			if (archive_read_data_into_fd(a, fd) != ARCHIVE_OK) {
				diags_add(d, &pos, "cannot unpack %s: %s", name, archive_error_string(a));
				close(fd);
				goto fail;
			}
			fsync(fd);
			close(fd);
		}
	}
	if (r != ARCHIVE_EOF) {
		diags_add(d, &pos, "a damaged bundle: %s", archive_error_string(a));
		goto fail;
	}
	if (!id) {
		diags_add(d, &pos, "an empty bundle");
		return -EINVAL;
	}
	if (bundle_verify(tmp, d) < 0)
		goto fail;
	if (replace)
		fs_remove_tree(final);
	if (rename(tmp, final) < 0) {
		diags_add(d, &pos, "cannot move the run into %s: %s", final, strerror(errno));
		goto fail;
	}
	*ret_id = TAKE_PTR(id);
	return 0;
fail:
	if (tmp)
		fs_remove_tree(tmp);
	return -EINVAL;
}

int bundle_verify(const char *dir, struct diags *d)
{
	_cleanup_free_ char *mp = path_join(dir, MANIFEST);
	_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;
	_cleanup_strv_ struct strv files = STRV_INIT;
	_cleanup_strmap_ struct strmap listed = STRMAP_INIT;
	struct pos pos = { .file = mp };
	char *save = NULL;
	size_t lineno = 0;

	if (strbuf_read_file(&m, mp, 64 << 20) < 0) {
		diags_add(d, &pos, "no MANIFEST: not a lab bundle");
		return -EINVAL;
	}
	for (char *l = strtok_r(m.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		_cleanup_free_ char *p = NULL;
		char hex[SHA256_HEX_LEN + 1];

		pos.line = ++lineno;
		if (strlen(l) < SHA256_HEX_LEN + 3 || l[SHA256_HEX_LEN] != ' ' || l[SHA256_HEX_LEN + 1] != ' ') {
			diags_add(d, &pos, "malformed MANIFEST line");
			return -EINVAL;
		}
		p = path_join(dir, l + SHA256_HEX_LEN + 2);
		if (sha256_file(p, hex) < 0) {
			diags_add(d, &pos, "%s is missing", l + SHA256_HEX_LEN + 2);
			return -EINVAL;
		}
		if (strncmp(hex, l, SHA256_HEX_LEN) != 0) {
			diags_add(d, &pos, "%s does not match its checksum", l + SHA256_HEX_LEN + 2);
			return -EINVAL;
		}
		strmap_put(&listed, l + SHA256_HEX_LEN + 2, 1); /* points into m, which outlives the map */
	}
	walk(dir, NULL, &files);
	for (size_t i = 0; i < files.n; i++) {
		size_t one;

		if (!streq(files.v[i], MANIFEST) && !strmap_get(&listed, files.v[i], &one)) {
			pos.line = 0;
			diags_add(d, &pos, "%s is not in the MANIFEST", files.v[i]);
			return -EINVAL;
		}
	}
	return 0;
}
