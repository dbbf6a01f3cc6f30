/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/dirs.h"
#include "../util/tarball.h"
#include "../cache/cache.h"
#include "source.h"
#include "../util/banned.h"

void ksource_release(struct ksource *k)
{
	free(k->key);
	free(k->identity);
	free(k->tree);
	free(k->subject);
	free(k->author);
	memset(k, 0, sizeof(*k));
}

static int debian_version(const char *package, char **ret)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_command_ struct command c = { 0 };
	int r;

	command_init(&c, "dpkg-query");
	command_args(&c, "-W", "-f=${Status}\t${Version}", package, NULL);
	c.out = &out;
	r = command_run(&c);
	if (r != 0 || !strstr(out.buf, "install ok installed"))
		return -ENOENT;
	*ret = xstrdup(strchr(out.buf, '\t') + 1);
	return 0;
}

/* Unpack a tarball into dir (strip the top folder), atomically via a temp
 * dir, in this process (libarchive; util/tarball.h says how it stays
 * inside the folder whatever the names in the archive). */
static int unpack(const char *tarball, const char *dir, struct strbuf *log, struct diags *d, const struct pos *pos)
{
	_cleanup_free_ char *tmp = xasprintf("%s.XXXXXX", dir), *parent = path_dirname(dir);
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	_cleanup_close_ int fd = -1;
	size_t members = 0;
	int r;

	/* a fresh folder of a random name: nothing planted there is followed */
	if ((r = path_mkdir_p(parent, 0755)) < 0 || !mkdtemp(tmp) || chmod(tmp, 0755) < 0) {
		r = r < 0 ? r : -errno;
		diags_add(d, pos, "cannot create a folder beside '%s': %s", dir, strerror(-r));
		return r;
	}
	if ((fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		r = -errno;
		strbuf_addf(&err, "cannot open '%s': %s", tmp, strerror(-r));
	} else
		r = tarball_extract(tarball, fd, 1, &members, &err);
	if (log)
		strbuf_addf(log, "unpacking %s into %s: %s\n", tarball, tmp, r < 0 ? err.buf : "done");
	if (r < 0)
		diags_add(d, pos, "unpacking the source failed: %s", err.buf);
	if (r == 0 && members == 0) {
		diags_add(d, pos, "'%s' holds no files", tarball);
		r = -ENOENT;
	}
	if (r == 0 && rename(tmp, dir) < 0) {
		r = -errno;
		diags_add(d, pos, "cannot rename '%s' to '%s': %s", tmp, dir, strerror(errno));
	}
	if (r < 0)
		fs_remove_tree(tmp);
	return r;
}

static void set_key(struct ksource *k, const char *identity)
{
	char hex[SHA256_HEX_LEN + 1];

	sha256_hex(identity, strlen(identity), hex);
	k->identity = xstrdup(identity);
	k->key = xstrndup(hex, 16);
}

static int prepare_debian(const char *cache, const struct spec_source *src, struct strbuf *log, struct ksource *k,
			  struct diags *d)
{
	_cleanup_free_ char *version = NULL, *tarball = NULL, *id = NULL, *dir = NULL;
	int r;

	/* linux-source-6.1 ships /usr/src/linux-source-6.1.tar.xz */
	tarball = xasprintf("/usr/src/%s.tar.xz", src->package);
	if (debian_version(src->package, &version) < 0 || !path_is_file(tarball)) {
		_cleanup_command_ struct command c = { 0 };

		command_init(&c, "apt-get");
		command_args(&c, "install", "-y", "-q", "--no-install-recommends", src->package, NULL);
		command_env(&c, "DEBIAN_FRONTEND", "noninteractive");
		r = command_run_logged(&c, log, d, &src->pos, "installing the source package");
		if (r < 0)
			return r;
		free(version);
		version = NULL;
		if (debian_version(src->package, &version) < 0 || !path_is_file(tarball)) {
			diags_add(d, &src->pos, "package '%s' is installed but '%s' is missing", src->package, tarball);
			return -ENOENT;
		}
	}
	id = xasprintf("%s=%s", src->package, version);
	set_key(k, id);
	dir = xasprintf("%s/sources/%s", cache, k->key);
	if (!path_is_dir(dir)) {
		_cleanup_free_ char *parent = xasprintf("%s/sources", cache);

		path_mkdir_p(parent, 0755);
		r = unpack(tarball, dir, log, d, &src->pos);
		if (r < 0)
			return r;
	}
	cache_touch(dir);
	k->tree = TAKE_PTR(dir);
	return 0;
}

static int prepare_tarball(const char *cache, const struct spec_source *src, struct strbuf *log,
			   struct ksource *k, struct diags *d)
{
	char hex[SHA256_HEX_LEN + 1];
	_cleanup_free_ char *id = NULL, *dir = NULL, *parent = xasprintf("%s/sources", cache);
	int r = sha256_file(src->path, hex);

	if (r < 0) {
		diags_add(d, &src->pos, "cannot read tarball '%s': %s", src->path, strerror(-r));
		return r;
	}
	id = xasprintf("tarball:%s", hex);
	set_key(k, id);
	dir = xasprintf("%s/%s", parent, k->key);
	if (!path_is_dir(dir)) {
		path_mkdir_p(parent, 0755);
		r = unpack(src->path, dir, log, d, &src->pos);
		if (r < 0)
			return r;
	}
	cache_touch(dir);
	k->tree = TAKE_PTR(dir);
	return 0;
}

static int prepare_directory(const struct spec_source *src, struct ksource *k, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_command_ struct command c = { 0 };
	_cleanup_free_ char *mk = path_join(src->path, "Makefile");
	char hex[SHA256_HEX_LEN + 1];

	if (!path_is_file(mk)) {
		diags_add(d, &src->pos, "'%s' has no Makefile: not a kernel tree", src->path);
		return -ENOENT;
	}
	/* a git tree is identified by its commit and its uncommitted changes */
	command_init(&c, "git");
	command_args(&c, "-C", src->path, "rev-parse", "HEAD", NULL);
	c.out = &out;
	if (command_run(&c) == 0) {
		_cleanup_command_ struct command diff = { 0 };
		_cleanup_strbuf_ struct strbuf dout = STRBUF_INIT;
		_cleanup_free_ char *id = NULL;

		command_init(&diff, "git");
		command_args(&diff, "-C", src->path, "diff", "HEAD", NULL);
		diff.out = &dout;
		command_run(&diff);
		sha256_hex(dout.buf, dout.len, hex);
		id = xasprintf("dir:%s@%.40s+%.16s", src->path, out.buf, hex);
		set_key(k, id);
	} else {
		_cleanup_free_ char *id = xasprintf("dir:%s", src->path);

		/* without git lab cannot see edits: the folder's path is its identity */
		set_key(k, id);
	}
	k->tree = xstrdup(src->path);
	return 0;
}

/* The commit a ref names, its id (40 hex digits, into `id`), subject and
 * author, in one git log; -ENOENT when the ref names no commit. */
static int resolve_commit(const char *mirror, const char *ref, struct strbuf *id, struct ksource *k)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	char *subject, *author;

	command_init(&c, "git");
	command_args(&c, "-C", mirror, "log", "-1", "--no-show-signature", "--format=%H%n%s%n%an <%ae>", NULL);
	command_argf(&c, "%s^{commit}", ref);
	command_arg(&c, "--");
	c.out = &out;
	if (command_run(&c) != 0 || !out.buf || strcspn(out.buf, "\n") != 40 || !(subject = strchr(out.buf, '\n')) ||
	    !(author = strchr(subject + 1, '\n')))
		return -ENOENT;
	strbuf_add(id, out.buf, 40);
	*author++ = '\0';
	k->subject = xstrdup(subject + 1);
	k->author = xstrndup(author, strcspn(author, "\n"));
	return 0;
}

static int prepare_git(const char *cache, const struct spec_source *src, struct strbuf *log, struct ksource *k,
		       struct diags *d)
{
	char hex[SHA256_HEX_LEN + 1];
	_cleanup_free_ char *mirror = NULL, *dir = NULL, *id = NULL, *archive = NULL;
	_cleanup_strbuf_ struct strbuf commit = STRBUF_INIT;
	int r;

	if (src->url[0] == '-' || src->ref[0] == '-') {
		diags_add(d, &src->pos, "git url and ref must not start with '-'");
		return -EINVAL;
	}
	sha256_hex(src->url, strlen(src->url), hex);
	mirror = xasprintf("%s/git/%.16s.git", cache, hex);
	if (!path_is_dir(mirror)) {
		_cleanup_command_ struct command c = { 0 };

		command_init(&c, "git");
		command_args(&c, "clone", "--bare", "--", src->url, mirror, NULL);
		r = command_run_logged(&c, log, d, &src->pos, "cloning the git source");
		if (r < 0)
			return r;
	} else {
		_cleanup_command_ struct command c = { 0 };

		struct diags ignored = { 0 };

		/* offline, the mirror may still have the ref: a failed fetch is not fatal */
		command_init(&c, "git");
		command_args(&c, "-C", mirror, "fetch", "--tags", "origin", "+refs/heads/*:refs/heads/*", NULL);
		command_run_logged(&c, log, &ignored, &src->pos, "git fetch");
		diags_release(&ignored);
	}
	cache_touch(mirror);
	if (resolve_commit(mirror, src->ref, &commit, k) < 0) {
		diags_add(d, &src->pos, "ref '%s' not found in '%s'", src->ref, src->url);
		return -ENOENT;
	}
	id = xasprintf("git:%s", commit.buf);
	set_key(k, id);
	dir = xasprintf("%s/sources/%s", cache, k->key);
	if (!path_is_dir(dir)) {
		_cleanup_command_ struct command c = { 0 };
		_cleanup_free_ char *parent = xasprintf("%s/sources", cache);

		path_mkdir_p(parent, 0755);
		archive = xasprintf("%s/sources/%s.tar", cache, k->key);
		command_init(&c, "git");
		command_args(&c, "-C", mirror, "archive", "--prefix=linux/", "-o", archive, commit.buf, NULL);
		r = command_run_logged(&c, log, d, &src->pos, "exporting the git commit");
		if (r == 0)
			r = unpack(archive, dir, log, d, &src->pos);
		unlink(archive);
		if (r < 0)
			return r;
	}
	cache_touch(dir);
	k->tree = TAKE_PTR(dir);
	return 0;
}

int ksource_prepare(const char *cache, const struct spec_source *src, struct strbuf *log, struct ksource *ret,
		    struct diags *d)
{
	struct ksource k = { 0 };
	int r;

	switch (src->type) {
	case SOURCE_DEBIAN:
		r = prepare_debian(cache, src, log, &k, d);
		break;
	case SOURCE_TARBALL:
		r = prepare_tarball(cache, src, log, &k, d);
		break;
	case SOURCE_DIRECTORY:
		r = prepare_directory(src, &k, d);
		break;
	case SOURCE_GIT:
		r = prepare_git(cache, src, log, &k, d);
		break;
	default:
		r = -EINVAL;
	}
	if (r < 0) {
		ksource_release(&k);
		return r;
	}
	*ret = k;
	return 0;
}

int ksource_identify(const char *cache, const struct spec_source *src, struct ksource *ret)
{
	struct diags d = { 0 };
	int r;

	if (src->type == SOURCE_DEBIAN) {
		_cleanup_free_ char *version = NULL, *id = NULL;
		struct ksource k = { 0 };

		if (debian_version(src->package, &version) < 0)
			return -ENOENT;
		id = xasprintf("%s=%s", src->package, version);
		set_key(&k, id);
		k.tree = xasprintf("%s/sources/%s", cache, k.key);
		*ret = k;
		return 0;
	}
	if (src->type == SOURCE_GIT) {
		_cleanup_free_ char *mirror = NULL;
		char hex[SHA256_HEX_LEN + 1];

		sha256_hex(src->url, strlen(src->url), hex);
		mirror = xasprintf("%s/git/%.16s.git", cache, hex);
		if (!path_is_dir(mirror))
			return -ENOENT;
	}
	/* tarballs hash their file, directories ask git, a git mirror exists: nothing is fetched */
	r = ksource_prepare(cache, src, NULL, ret, &d);
	diags_release(&d);
	return r;
}

const char *ksource_commit(const char *identity)
{
	return identity && strncmp(identity, "git:", 4) == 0 ? identity + 4 : NULL;
}
