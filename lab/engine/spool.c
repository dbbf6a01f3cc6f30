/* SPDX-License-Identifier: MIT */
/*
 * Content-addressed folders in the spool shared with cluster nodes.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "../store/bundle.h"
#include "spool.h"
#include "../util/banned.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The regular files of a flat folder, sorted (no MANIFEST). */
static int list_files(const char *dir, struct strv *ret)
{
	DIR *dp = opendir(dir);
	struct dirent *de;

	if (!dp)
		return -errno;
	while ((de = readdir(dp))) {
		_cleanup_free_ char *p = path_join(dir, de->d_name);

		if (de->d_name[0] != '.' && !streq(de->d_name, "MANIFEST") && path_is_file(p))
			strv_push(ret, de->d_name);
	}
	closedir(dp);
	qsort(ret->v, ret->n, sizeof(*ret->v), cmp_str);
	return 0;
}

static int manifest_digest(const char *dir, char digest[SHA256_HEX_LEN + 1])
{
	_cleanup_free_ char *mp = path_join(dir, "MANIFEST");

	return sha256_file(mp, digest);
}

int spool_put(const char *spool, const char *kind, const char *name, const char *from,
	      char digest[SHA256_HEX_LEN + 1], struct diags *d)
{
	_cleanup_free_ char *kd = path_join(spool, kind), *final = path_join(kd, name), *tmp = NULL;
	_cleanup_free_ char *fm = path_join(final, "MANIFEST");
	_cleanup_strv_ struct strv files = STRV_INIT;
	_cleanup_strbuf_ struct strbuf man = STRBUF_INIT;
	struct pos pos = { .file = final };
	int r;

	if (!str_is_name(name)) {
		diags_add(d, &pos, "'%s' is not a name for the spool", name);
		return -EINVAL;
	}
	if (path_is_file(fm))
		return manifest_digest(final, digest) < 0 ? -EIO : 0;
	if ((r = path_mkdir_p(kd, 0755)) < 0) {
		diags_add(d, &pos, "cannot create %s: %s", kd, strerror(-r));
		return r;
	}
	tmp = xasprintf("%s/.tmp-%s-XXXXXX", kd, name);
	if (!mkdtemp(tmp)) {
		diags_add(d, &pos, "cannot create a folder in %s: %s", kd, strerror(errno));
		return -errno;
	}
	chmod(tmp, 0755);
	if ((r = list_files(from, &files)) < 0) {
		diags_add(d, &pos, "cannot read %s: %s", from, strerror(-r));
		goto fail;
	}
	for (size_t i = 0; i < files.n; i++) {
		_cleanup_free_ char *src = path_join(from, files.v[i]), *dst = path_join(tmp, files.v[i]);
		char hex[SHA256_HEX_LEN + 1];

		if (link(src, dst) < 0 && (r = fs_copy_file(src, dst, false)) < 0) {
			diags_add(d, &pos, "cannot copy %s into the spool: %s", src, strerror(-r));
			goto fail;
		}
		if ((r = sha256_file(dst, hex)) < 0) {
			diags_add(d, &pos, "cannot read %s: %s", dst, strerror(-r));
			goto fail;
		}
		strbuf_addf(&man, "%s  %s\n", hex, files.v[i]);
	}
	{
		_cleanup_free_ char *mp = path_join(tmp, "MANIFEST");

		if ((r = fs_write_atomic(mp, man.buf ? man.buf : "", man.len, 0644)) < 0) {
			diags_add(d, &pos, "cannot write %s: %s", mp, strerror(-r));
			goto fail;
		}
	}
	if (rename(tmp, final) < 0) {
		r = -errno;
		fs_remove_tree(tmp);
		/* another lab put it there first */
		if ((r == -ENOTEMPTY || r == -EEXIST) && path_is_file(fm))
			return manifest_digest(final, digest) < 0 ? -EIO : 0;
		diags_add(d, &pos, "cannot put %s into the spool: %s", name, strerror(-r));
		return r;
	}
	return manifest_digest(final, digest) < 0 ? -EIO : 0;
fail:
	fs_remove_tree(tmp);
	return r < 0 ? r : -EIO;
}

int spool_check(const char *dir, const char *digest, struct diags *d)
{
	char have[SHA256_HEX_LEN + 1];
	struct pos pos = { .file = dir };

	if (manifest_digest(dir, have) < 0) {
		diags_add(d, &pos, "not in the spool (no MANIFEST)");
		return -ENOENT;
	}
	if (!streq(have, digest)) {
		diags_add(d, &pos, "its MANIFEST is not the one the head put there (sha256 %.16s, expected %.16s)", have,
			  digest);
		return -EINVAL;
	}
	return bundle_verify(dir, d);
}
