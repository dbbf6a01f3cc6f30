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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "worktree.h"
#include "../util/banned.h"

/* A hard-link copy of the pristine tree: cheap, and patching breaks the links it touches. */
int worktree_ensure(const char *work, const char *pristine, struct strbuf *log, struct diags *d,
		    const struct pos *pos)
{
	_cleanup_free_ char *tree = path_join(work, "src"), *done = path_join(work, "src.complete");
	_cleanup_command_ struct command cp = { 0 };
	int r;

	if (path_is_file(done))
		return 0;
	if ((r = fs_remove_tree(tree)) < 0) {
		diags_add(d, pos, "cannot remove the stale work tree '%s': %s", tree, strerror(-r));
		return r;
	}
	command_init(&cp, "cp");
	command_args(&cp, "-al", "--", pristine, tree, NULL);
	r = command_run_logged(&cp, log, d, pos, "making the work tree");
	if (r < 0)
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

