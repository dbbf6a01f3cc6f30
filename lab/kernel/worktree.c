/* SPDX-License-Identifier: MIT */
/*
 * The work tree of a source: a hard-link copy of the pristine tree
 * (<cache>/work/<source>/src) that carries exactly one variant's patch
 * series at a time, recorded in <work>/applied ("sha256 path" per line,
 * rewritten after every patch so it never lies). Switching restores from
 * the pristine tree only the files applied patches touched: what make
 * sees change is what the patches change. Those files are recorded in
 * <work>/touched before each patch is applied, because the cache outlives
 * the projects that use it: a test's or a bundle's patch may be gone by
 * the time another project switches the tree.
 *
 * A tree moves from one pristine tree to another (the commits of one git
 * source, <work>/src.pristine says which it carries) file by file: what
 * is the same file (the same inode: the exports share what they share) or
 * the same bytes stays as it is, with its mtime; what differs is a fresh
 * copy, so that make rebuilds what the commits change and nothing else.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "worktree.h"
#include "../util/banned.h"

/* Whether two regular files of the same size hold the same bytes. */
static bool same_bytes(const char *a, const char *b)
{
	_cleanup_close_ int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
	char x[65536], y[65536];

	if (fa < 0 || fb < 0)
		return false;
	for (;;) {
		ssize_t n = read(fa, x, sizeof(x)), m;

		if (n < 0)
			return false;
		m = n ? read(fb, y, (size_t)n) : read(fb, y, 1);
		if (m != n || (n && memcmp(x, y, (size_t)n)))
			return false;
		if (!n)
			return true;
	}
}

struct move_count {
	size_t changed, removed;
};

/* Replace w with a fresh copy of o (a symlink as a symlink): a new mtime, so make sees it. */
static int replace_one(const char *w, const char *o, const struct stat *ost, struct move_count *mc)
{
	struct stat st;
	int r;

	if (lstat(w, &st) == 0) {
		r = S_ISDIR(st.st_mode) ? fs_remove_tree(w) : unlink(w) < 0 ? -errno : 0;
		if (r < 0)
			return r;
	}
	if (S_ISLNK(ost->st_mode)) {
		char target[4096];
		ssize_t n = readlink(o, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = '\0';
		r = symlink(target, w) < 0 ? -errno : 0;
	} else {
		r = fs_copy_file(o, w, true);
	}
	mc->changed += r == 0;
	return r;
}

/* Bring the folder work/rel to new/rel: every entry of new kept or copied, every other removed. */
static int move_dir(const char *work, const char *pristine, struct move_count *mc)
{
	DIR *d = opendir(pristine);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -errno;
	if ((r = path_mkdir_p(work, 0755)) < 0) {
		closedir(d);
		return r;
	}
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_free_ char *o = NULL, *w = NULL;
		struct stat ost, wst;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		o = path_join(pristine, de->d_name);
		w = path_join(work, de->d_name);
		if (lstat(o, &ost) < 0) {
			r = -errno;
			break;
		}
		if (S_ISDIR(ost.st_mode)) {
			if (lstat(w, &wst) == 0 && !S_ISDIR(wst.st_mode))
				unlink(w);
			r = move_dir(w, o, mc);
			continue;
		}
		if (!S_ISREG(ost.st_mode) && !S_ISLNK(ost.st_mode))
			continue; /* a pristine tree holds folders, files and symlinks */
		if (lstat(w, &wst) == 0 && (wst.st_mode & S_IFMT) == (ost.st_mode & S_IFMT)) {
			if (wst.st_ino == ost.st_ino && wst.st_dev == ost.st_dev)
				continue; /* the same file */
			if (S_ISREG(ost.st_mode) && wst.st_size == ost.st_size && (wst.st_mode & 0777) == (ost.st_mode & 0777) &&
			    same_bytes(w, o))
				continue;
			if (S_ISLNK(ost.st_mode)) {
				char a[4096], b[4096];
				ssize_t n = readlink(w, a, sizeof(a)), m = readlink(o, b, sizeof(b));

				if (n >= 0 && n == m && !memcmp(a, b, (size_t)n))
					continue;
			}
		}
		r = replace_one(w, o, &ost, mc);
	}
	closedir(d);
	if (r < 0)
		return r;
	/* what the new tree does not have */
	if (!(d = opendir(work)))
		return -errno;
	while (r >= 0 && (de = readdir(d))) {
		_cleanup_free_ char *o = NULL, *w = NULL;
		struct stat st;

		if (streq(de->d_name, ".") || streq(de->d_name, ".."))
			continue;
		o = path_join(pristine, de->d_name);
		if (lstat(o, &st) == 0)
			continue;
		w = path_join(work, de->d_name);
		r = fs_remove_tree(w);
		mc->removed++;
	}
	closedir(d);
	return r;
}

/* Move the complete tree <work>/src from the pristine tree it carries to `pristine`. */
static int move_tree(const char *work, const char *pristine, struct strbuf *log, struct diags *d,
		     const struct pos *pos)
{
	_cleanup_free_ char *tree = path_join(work, "src"), *done = path_join(work, "src.complete");
	_cleanup_free_ char *applied = path_join(work, "applied"), *touched = path_join(work, "touched");
	struct move_count mc = { 0 };
	int r;

	/* half moved is neither tree: made again from scratch if this stops */
	unlink(done);
	r = move_dir(tree, pristine, &mc);
	if (r < 0) {
		diags_add(d, pos, "cannot move the work tree '%s' to '%s': %s", tree, pristine, strerror(-r));
		return r;
	}
	if (log)
		strbuf_addf(log, "work tree moved to %s: %zu files changed, %zu removed\n", pristine, mc.changed,
			    mc.removed);
	/* patched files differed from the new tree: they are its files now */
	unlink(applied);
	unlink(touched);
	return fs_write_atomic(done, "", 0, 0644);
}

/* A hard-link copy of the pristine tree: cheap, and patching breaks the links it touches. */
int worktree_ensure(const char *work, const char *pristine, struct strbuf *log, struct diags *d,
		    const struct pos *pos)
{
	_cleanup_free_ char *tree = path_join(work, "src"), *done = path_join(work, "src.complete");
	_cleanup_free_ char *from = path_join(work, "src.pristine");
	_cleanup_strbuf_ struct strbuf was = STRBUF_INIT;
	_cleanup_command_ struct command cp = { 0 };
	int r;

	if (path_is_file(done)) {
		/* a tree from before src.pristine was written carries its own source's */
		if (strbuf_read_file(&was, from, 4096) < 0 || streq(was.buf, pristine))
			return 0;
		/* patched files differ from the new tree too: the move puts them back */
		if ((r = move_tree(work, pristine, log, d, pos)) < 0)
			return r;
		return fs_write_atomic(from, pristine, strlen(pristine), 0644);
	}
	if ((r = fs_remove_tree(tree)) < 0) {
		diags_add(d, pos, "cannot remove the stale work tree '%s': %s", tree, strerror(-r));
		return r;
	}
	command_init(&cp, "cp");
	command_args(&cp, "-al", "--", pristine, tree, NULL);
	r = command_run_logged(&cp, log, d, pos, "making the work tree");
	if (r < 0)
		return r;
	if ((r = fs_write_atomic(from, pristine, strlen(pristine), 0644)) < 0)
		return r;
	return fs_write_atomic(done, "", 0, 0644);
}

/* "sha256 path" lines of the patches currently applied to the work tree. */
static void read_applied(const char *work, struct strv *ret)
{
	_cleanup_free_ char *f = path_join(work, "applied");

	fs_read_lines(f, 1 << 20, ret); /* none applied yet: no file */
}

static int write_applied(const char *work, const struct strv *applied)
{
	_cleanup_free_ char *f = path_join(work, "applied");

	return fs_write_lines(f, applied, 0644);
}

/* Put back, from the pristine tree, one file a patch touched. */
static int restore_one(const char *tree, const char *pristine, const char *file, struct diags *d)
{
	_cleanup_free_ char *w = path_join(tree, file), *o = path_join(pristine, file);

	unlink(w);
	/* a fresh copy, not a link: its new mtime makes make recompile it */
	if (path_is_file(o)) {
		int r = fs_copy_file(o, w, true);

		if (r < 0) {
			diags_add(d, NULL, "cannot restore '%s': %s", w, strerror(-r));
			return r;
		}
	}
	return 0;
}

/* Add the files `p` touches to <work>/touched (before it is applied). */
static int record_touched(const char *work, const struct patch *p)
{
	_cleanup_strv_ struct strv touched = STRV_INIT;
	_cleanup_free_ char *f = path_join(work, "touched");

	fs_read_lines(f, 1 << 20, &touched);
	for (size_t j = 0; j < p->nfiles; j++)
		if (!strv_contains(&touched, p->files[j].path))
			strv_push(&touched, p->files[j].path);
	return fs_write_lines(f, &touched, 0644);
}

/*
 * Put back, from the pristine tree, every file an applied patch touched:
 * the list in <work>/touched, or for a tree recorded before it existed,
 * the files the applied patches name.
 */
static int restore_touched(const char *work, const char *pristine, const struct strv *applied, struct diags *d)
{
	_cleanup_free_ char *tree = path_join(work, "src"), *f = path_join(work, "touched");
	_cleanup_strv_ struct strv touched = STRV_INIT;
	int r;

	if (path_is_file(f)) {
		fs_read_lines(f, 1 << 20, &touched);
		for (size_t i = 0; i < touched.n; i++)
			if ((r = restore_one(tree, pristine, touched.v[i], d)) < 0)
				return r;
		return 0;
	}
	for (size_t i = 0; i < applied->n; i++) {
		const char *path = strchr(applied->v[i], ' ');
		_cleanup_(patch_freep) struct patch *p = NULL;
		struct diags ignored = { 0 };

		if (!path)
			continue;
		if (patch_load(path + 1, &p, &ignored) < 0) {
			diags_release(&ignored);
			diags_add(d, NULL, "cannot re-read applied patch '%s' to undo it; remove '%s' to start afresh",
				  path + 1, work);
			return -ENOENT;
		}
		for (size_t j = 0; j < p->nfiles; j++)
			if ((r = restore_one(tree, pristine, p->files[j].path, d)) < 0)
				return r;
	}
	return 0;
}

static int apply_patch(const char *tree, const struct patch *p, struct strbuf *log, struct diags *d)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_free_ char *parent = path_dirname(tree), *line = NULL;
	struct pos pos = { .file = p->path };
	const char *failed;
	int r;

	command_init(&c, "git");
	command_args(&c, "apply", "--verbose", "--whitespace=nowarn", p->path, NULL);
	/* never let git find a repository above the tree and apply relative to it */
	command_env(&c, "GIT_CEILING_DIRECTORIES", parent);
	c.cwd = xstrdup(tree);
	c.out = &out;
	c.err = &out;
	line = command_to_string(&c);
	r = command_run(&c);
	if (log)
		strbuf_addf(log, "$ %s\n%s", line, out.buf);
	if (r == 0)
		return 0;
	failed = strstr(out.buf, "patch failed: ");
	if (failed) {
		char file[4096];
		unsigned at = 0;
		const char *colon = strrchr(failed, ':');
		const char *start = failed + strlen("patch failed: ");
		const struct patch_file *pf = NULL;
		const struct patch_hunk *h;

		/* "patch failed: kernel/sched/fair.c:3664" */
		colon = memchr(start, '\n', strlen(start));
		colon = colon ? colon : start + strlen(start);
		while (colon > start && colon[-1] != ':')
			colon--;
		if (colon > start && (size_t)(colon - start - 1) < sizeof(file)) {
			memcpy(file, start, (size_t)(colon - start - 1));
			file[colon - start - 1] = '\0';
			at = (unsigned)strtoul(colon, NULL, 10);
			h = patch_find_hunk(p, file, at, &pf);
			if (h) {
				_cleanup_free_ char *text = patch_lines(p, h->first_line, h->last_line);
				size_t idx = (size_t)(h - pf->hunks) + 1;

				pos.line = h->first_line;
				pos.col = 1;
				diags_add(d, &pos, "hunk %zu of %s (patch lines %u-%u) does not apply at line %u of the tree:\n%s",
					  idx, file, h->first_line, h->last_line, at, text);
				return -EIO;
			}
		}
	}
	diags_add(d, &pos, "patch does not apply: %s", out.buf);
	return -EIO;
}

int worktree_switch(const char *work, const char *pristine, struct patch *const *patches, size_t npatches,
		    struct strbuf *log, struct diags *d)
{
	_cleanup_strv_ struct strv applied = STRV_INIT, want = STRV_INIT;
	_cleanup_free_ char *tree = path_join(work, "src");
	size_t common = 0;
	int r;

	read_applied(work, &applied);
	for (size_t i = 0; i < npatches; i++)
		strv_push_take(&want, xasprintf("%s %s", patches[i]->sha256, patches[i]->path));
	/* compare by content: the same patch moved to another folder is the same patch */
	while (common < applied.n && common < want.n && strneq(applied.v[common], want.v[common], SHA256_HEX_LEN))
		common++;
	if (common < applied.n) {
		/* the tree carries patches the variant does not want: back to pristine */
		_cleanup_free_ char *touched = path_join(work, "touched");

		r = restore_touched(work, pristine, &applied, d);
		if (r < 0)
			return r;
		strv_release(&applied);
		r = write_applied(work, &applied);
		if (r < 0)
			return r;
		if (unlink(touched) < 0 && errno != ENOENT) {
			diags_add(d, NULL, "cannot remove '%s': %s", touched, strerror(errno));
			return -errno;
		}
		common = 0;
	}
	for (size_t i = common; i < npatches; i++) {
		r = record_touched(work, patches[i]);
		if (r < 0) {
			diags_add(d, NULL, "cannot record the files of '%s' in '%s': %s", patches[i]->path, work,
				  strerror(-r));
			return r;
		}
		r = apply_patch(tree, patches[i], log, d);
		if (r < 0) {
			/* leave the record true: what did apply stays recorded */
			return r;
		}
		strv_push(&applied, want.v[i]);
		r = write_applied(work, &applied);
		if (r < 0)
			return r;
	}
	return 0;
}

