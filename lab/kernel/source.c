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
	free(k->lineage);
	free(k->lineage_key);
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

/* A source's lineage (source.h); the identity's unless given. */
static void set_lineage(struct ksource *k, const char *lineage)
{
	char hex[SHA256_HEX_LEN + 1];

	free(k->lineage);
	free(k->lineage_key);
	k->lineage = xstrdup(lineage ? lineage : k->identity);
	sha256_hex(k->lineage, strlen(k->lineage), hex);
	k->lineage_key = xstrndup(hex, 16);
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

static char *mirror_path(const char *cache, const char *url)
{
	char hex[SHA256_HEX_LEN + 1];

	sha256_hex(url, strlen(url), hex);
	return xasprintf("%s/git/%.16s.git", cache, hex);
}

/* The source's bare mirror, cloned on first use, fetched after (offline,
 * the mirror may still have the ref: a failed fetch is not fatal). */
static int git_mirror(const char *cache, const struct spec_source *src, struct strbuf *log, char **ret,
		      struct diags *d)
{
	_cleanup_free_ char *mirror = mirror_path(cache, src->url);
	_cleanup_command_ struct command c = { 0 };
	int r;

	if (src->url[0] == '-' || src->ref[0] == '-') {
		diags_add(d, &src->pos, "git url and ref must not start with '-'");
		return -EINVAL;
	}
	command_init(&c, "git");
	if (!path_is_dir(mirror)) {
		command_args(&c, "clone", "--bare", "--", src->url, mirror, NULL);
		r = command_run_logged(&c, log, d, &src->pos, "cloning the git source");
		if (r < 0)
			return r;
	} else {
		struct diags ignored = { 0 };

		command_args(&c, "-C", mirror, "fetch", "--tags", "origin", "+refs/heads/*:refs/heads/*", NULL);
		command_run_logged(&c, log, &ignored, &src->pos, "git fetch");
		diags_release(&ignored);
	}
	cache_touch(mirror);
	*ret = TAKE_PTR(mirror);
	return 0;
}

/* git -C mirror diff --name-only between two commits, NUL-separated, into
 * ret: the deleted files (deleted) or all others. */
static int changed_files(const char *mirror, const char *from, const char *to, bool deleted, struct strv *ret)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	command_init(&c, "git");
	command_args(&c, "-C", mirror, "diff", "--name-only", "-z", "--no-renames", deleted ? "--diff-filter=D"
											 : "--diff-filter=d",
		     from, to, "--", NULL);
	c.out = &out;
	if (command_run(&c) != 0)
		return -EIO;
	for (size_t i = 0; i < out.len;) {
		const char *p = out.buf + i;
		size_t n = strnlen(p, out.len - i);

		if (!path_is_safe_relative(p))
			return -EINVAL; /* git does not make such names; a hostile mirror might */
		strv_push(ret, p);
		i += n + 1;
	}
	return 0;
}

/*
 * dir, the export of commit `id`, made from the mirror's last export
 * (<mirror>.last: "commit key"): a hard-link copy of it, the files the
 * commits differ in deleted or unpacked from git archive. A kernel tree
 * is 1.2 GB and a full export half a minute; consecutive commits differ
 * in a few files. The files are new inodes where they differ (unpacking
 * replaces, never writes into, a file), so the trees share only what
 * both have. -ENOENT when there is no last export to start from.
 */
static int derive_export(const char *cache, const char *mirror, const char *id, const char *dir,
			 struct strbuf *log, struct diags *d, const struct pos *pos)
{
	_cleanup_free_ char *lastf = xasprintf("%s.last", mirror), *old = NULL, *tmp = xasprintf("%s.XXXXXX", dir);
	_cleanup_free_ char *archive = NULL;
	_cleanup_strbuf_ struct strbuf last = STRBUF_INIT, err = STRBUF_INIT;
	_cleanup_strv_ struct strv gone = STRV_INIT, files = STRV_INIT;
	_cleanup_command_ struct command cp = { 0 }, ar = { 0 };
	_cleanup_close_ int fd = -1;
	char prev[41];
	int r;

	if (strbuf_read_file(&last, lastf, 256) < 0 || last.len < 58 || last.buf[40] != ' ' ||
	    strspn(last.buf, "0123456789abcdef") != 40 || strspn(last.buf + 41, "0123456789abcdef") != 16)
		return -ENOENT; /* none, or not lab's: a full export */
	memcpy(prev, last.buf, 40);
	prev[40] = '\0';
	old = xasprintf("%s/sources/%.16s", cache, last.buf + 41);
	if (!path_is_dir(old) || changed_files(mirror, prev, id, true, &gone) < 0 ||
	    changed_files(mirror, prev, id, false, &files) < 0)
		return -ENOENT;
	if (!mkdtemp(tmp)) {
		diags_add(d, pos, "cannot create a folder beside '%s': %s", dir, strerror(errno));
		return -errno;
	}
	command_init(&cp, "cp");
	command_args(&cp, "-alT", "--", old, tmp, NULL);
	if ((r = command_run_logged(&cp, log, d, pos, "copying the last export")) < 0)
		goto fail;
	for (size_t i = 0; i < gone.n; i++) {
		_cleanup_free_ char *f = path_join(tmp, gone.v[i]);

		if (unlink(f) < 0 && errno != ENOENT) {
			r = -errno;
			diags_add(d, pos, "cannot remove '%s': %s", f, strerror(errno));
			goto fail;
		}
	}
	if (files.n) {
		archive = xasprintf("%s.tar", tmp);
		command_init(&ar, "git");
		/* literal: a file named '*' or ':x' is that file, not a pattern */
		command_args(&ar, "--literal-pathspecs", "-C", mirror, "archive", "--prefix=linux/", "-o", archive, id,
			     "--", NULL);
		for (size_t i = 0; i < files.n; i++)
			command_arg(&ar, files.v[i]);
		r = command_run_logged(&ar, log, d, pos, "exporting the files the commits differ in");
		if (r == 0 && (fd = open(tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			r = -errno;
		if (r == 0 && (r = tarball_extract(archive, fd, 1, NULL, &err)) < 0)
			diags_add(d, pos, "unpacking the files the commits differ in failed: %s", err.buf);
		unlink(archive);
		if (r < 0)
			goto fail;
	}
	if (log)
		strbuf_addf(log, "%s: %s with %zu files changed and %zu deleted\n", dir, old, files.n, gone.n);
	if (rename(tmp, dir) < 0) {
		r = -errno;
		diags_add(d, pos, "cannot rename '%s' to '%s': %s", tmp, dir, strerror(errno));
		goto fail;
	}
	return 0;
fail:
	fs_remove_tree(tmp);
	return r;
}

/* Remember the export as the one the next commit starts from. */
static void set_last_export(const char *mirror, const char *id, const char *key)
{
	_cleanup_free_ char *lastf = xasprintf("%s.last", mirror), *line = xasprintf("%s %s\n", id, key);

	fs_write_atomic(lastf, line, strlen(line), 0644);
}

static int prepare_git(const char *cache, const struct spec_source *src, struct strbuf *log, struct ksource *k,
		       struct diags *d)
{
	_cleanup_free_ char *mirror = NULL, *dir = NULL, *id = NULL, *archive = NULL, *lineage = NULL;
	_cleanup_strbuf_ struct strbuf commit = STRBUF_INIT;
	int r;

	if ((r = git_mirror(cache, src, log, &mirror, d)) < 0)
		return r;
	if (resolve_commit(mirror, src->ref, &commit, k) < 0) {
		diags_add(d, &src->pos, "ref '%s' not found in '%s'", src->ref, src->url);
		return -ENOENT;
	}
	id = xasprintf("git:%s", commit.buf);
	set_key(k, id);
	lineage = xasprintf("git-url:%s", src->url);
	set_lineage(k, lineage);
	dir = xasprintf("%s/sources/%s", cache, k->key);
	if (!path_is_dir(dir)) {
		_cleanup_free_ char *parent = xasprintf("%s/sources", cache);

		path_mkdir_p(parent, 0755);
		r = derive_export(cache, mirror, commit.buf, dir, log, d, &src->pos);
		if (r == -ENOENT) {
			_cleanup_command_ struct command c = { 0 };

			archive = xasprintf("%s/sources/%s.tar", cache, k->key);
			command_init(&c, "git");
			command_args(&c, "-C", mirror, "archive", "--prefix=linux/", "-o", archive, commit.buf, NULL);
			r = command_run_logged(&c, log, d, &src->pos, "exporting the git commit");
			if (r == 0)
				r = unpack(archive, dir, log, d, &src->pos);
			unlink(archive);
		}
		if (r < 0)
			return r;
	}
	set_last_export(mirror, commit.buf, k->key);
	cache_touch(dir);
	k->tree = TAKE_PTR(dir);
	return 0;
}

void kcommits_free(struct kcommit *c, size_t n)
{
	for (size_t i = 0; c && i < n; i++) {
		free(c[i].subject);
		free(c[i].author);
		free(c[i].parents);
	}
	free(c);
}

/* Parse `git log -z --format=%H%n%P%n%an <%ae>%n%s` of the range into ret[1..]. */
static int parse_range(const struct strbuf *out, bool first_parent, size_t max, struct kcommit **ret, size_t *n,
		       size_t *alloc)
{
	for (size_t i = 0; i < out->len;) {
		const char *rec = out->buf + i, *p, *a, *sub;
		size_t len = strnlen(rec, out->len - i);
		struct kcommit *c;

		i += len + 1;
		if (len < 42 || rec[40] != '\n' || !(a = memchr(rec + 41, '\n', len - 41)) ||
		    !(sub = memchr(a + 1, '\n', len - (size_t)(a + 1 - rec))))
			return -EINVAL;
		if (*n > max)
			return -E2BIG;
		GROW(*ret, *alloc, *n + 1);
		c = &(*ret)[*n];
		memset(c, 0, sizeof(*c));
		memcpy(c->id, rec, 40);
		c->author = xstrndup(a + 1, (size_t)(sub - a - 1));
		c->subject = xstrndup(sub + 1, len - (size_t)(sub + 1 - rec));
		c->parents = xcalloc(64, sizeof(unsigned));
		/* parents: ids seen before are indexes, others the good side (0) */
		for (p = rec + 41; p + 40 <= a && c->nparents < 64; p += 41) {
			unsigned idx = 0;

			for (size_t j = 1; j < *n; j++)
				if (!memcmp((*ret)[j].id, p, 40))
					idx = (unsigned)j;
			c->parents[c->nparents++] = idx;
			if (first_parent)
				break;
		}
		(*n)++;
	}
	return 0;
}

int ksource_git_range(const char *cache, const struct spec_source *src, const char *good, const char *bad,
		      bool first_parent, size_t max, struct kcommit **ret, size_t *ret_n, struct strbuf *log,
		      struct diags *d)
{
	_cleanup_free_ char *mirror = NULL, *range = NULL;
	_cleanup_strbuf_ struct strbuf g = STRBUF_INIT, b = STRBUF_INIT, out = STRBUF_INIT;
	_cleanup_command_ struct command anc = { 0 }, lg = { 0 };
	struct ksource gk = { 0 }, bk = { 0 };
	struct kcommit *c = NULL;
	size_t n = 1, alloc = 1;
	int r;

	if (good[0] == '-' || bad[0] == '-') {
		diags_add(d, NULL, "bisect: a ref must not start with '-'");
		return -EINVAL;
	}
	if ((r = git_mirror(cache, src, log, &mirror, d)) < 0)
		return r;
	if (resolve_commit(mirror, good, &g, &gk) < 0 || resolve_commit(mirror, bad, &b, &bk) < 0) {
		diags_add(d, &src->pos, "bisect: '%s' names no commit in '%s'", g.len ? bad : good, src->url);
		ksource_release(&gk);
		ksource_release(&bk);
		return -ENOENT;
	}
	command_init(&anc, "git");
	command_args(&anc, "-C", mirror, "merge-base", "--is-ancestor", g.buf, b.buf, NULL);
	if (command_run(&anc) != 0 || streq(g.buf, b.buf)) {
		diags_add(d, &src->pos, "bisect: the good commit %.12s (%s) is not an ancestor of the bad commit %.12s (%s)",
			  g.buf, good, b.buf, bad);
		ksource_release(&gk);
		ksource_release(&bk);
		return -EINVAL;
	}
	c = xcalloc(1, sizeof(*c));
	memcpy(c[0].id, g.buf, 40);
	c[0].subject = TAKE_PTR(gk.subject);
	c[0].author = TAKE_PTR(gk.author);
	ksource_release(&gk);
	ksource_release(&bk);
	range = xasprintf("%s..%s", g.buf, b.buf);
	command_init(&lg, "git");
	command_args(&lg, "-C", mirror, "log", "-z", "--no-show-signature", "--topo-order", "--reverse",
		     "--format=%H%n%P%n%an <%ae>%n%s", NULL);
	if (first_parent)
		command_arg(&lg, "--first-parent");
	command_args(&lg, range, "--", NULL);
	lg.out = &out;
	if ((r = command_run_logged(&lg, log, d, &src->pos, "listing the commits")) < 0) {
		kcommits_free(c, n);
		return r;
	}
	r = parse_range(&out, first_parent, max, &c, &n, &alloc);
	if (r == -E2BIG)
		diags_add(d, &src->pos, "bisect: more than %zu commits between %.12s and %.12s: narrow the range%s", max,
			  g.buf, b.buf, first_parent ? "" : " or follow --first-parent");
	else if (r < 0 || n < 2 || memcmp(c[n - 1].id, b.buf, 40))
		diags_add(d, &src->pos, "bisect: git log of %s is not a range ending in the bad commit", range);
	if (r < 0 || n < 2 || memcmp(c[n - 1].id, b.buf, 40)) {
		kcommits_free(c, n);
		return r < 0 ? r : -EINVAL;
	}
	*ret = c;
	*ret_n = n;
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
	if (!k.lineage)
		set_lineage(&k, NULL);
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
		set_lineage(&k, NULL);
		k.tree = xasprintf("%s/sources/%s", cache, k.key);
		*ret = k;
		return 0;
	}
	if (src->type == SOURCE_GIT) {
		_cleanup_free_ char *mirror = mirror_path(cache, src->url);

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
