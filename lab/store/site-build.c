/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "../result/compare.h"
#include "../result/report.h"
#include "../result/site.h"
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/strmap.h"
#include "calib-store.h"
#include "site-build.h"
#include "store.h"
#include "store-v1.h"
#include "../util/banned.h"

void site_summary_release(struct site_summary *s)
{
	strv_release(&s->damaged);
	strv_release(&s->why);
}

/* A folder of the site: DIR/<sub>, made when missing, never through a link. */
struct site_dir {
	int fd;
	char *shown;       /* "DIR/runs", for errors */
	struct strv names; /* the pages written this time */
};

/* data as `name` in the folder: a temporary name first, then renamed over
 * the old file, so a reader sees the old page or the new one. */
static int write_file(struct site_dir *sd, const char *name, const struct strbuf *sb, struct diags *d)
{
	_cleanup_free_ char *tmp = xasprintf(".%s.%ld.tmp", name, (long)getpid());
	_cleanup_free_ char *shown = xasprintf("%s/%s", sd->shown, name);
	struct pos pos = { .file = shown };
	int fd = openat(sd->fd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644), e = 0;

	if (fd < 0) {
		diags_add(d, &pos, "cannot write it: %s", strerror(errno));
		return -errno;
	}
	e = fs_write_all(fd, sb->buf, sb->len);
	if (close(fd) < 0 && !e)
		e = -errno;
	if (!e && renameat(sd->fd, tmp, sd->fd, name) < 0)
		e = -errno;
	if (e) {
		unlinkat(sd->fd, tmp, 0);
		diags_add(d, &pos, "cannot write it: %s", strerror(-e));
		return e;
	}
	return 0;
}

/* A page: written, and its name kept for the manifest. */
static int write_page(struct site_dir *sd, const char *name, const struct strbuf *sb, struct diags *d)
{
	int r = write_file(sd, name, sb, d);

	if (r == 0)
		strv_push(&sd->names, name);
	return r;
}

static int site_dir_open(int top, const char *dir, const char *sub, struct site_dir *ret, struct diags *d)
{
	struct pos pos = { .file = ret->shown = path_join(dir, sub) };

	if (mkdirat(top, sub, 0755) < 0 && errno != EEXIST) {
		diags_add(d, &pos, "cannot create the folder: %s", strerror(errno));
		return -errno;
	}
	if ((ret->fd = openat(top, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		int e = errno;

		diags_add(d, &pos, "%s", e == ELOOP || e == ENOTDIR ? "not a folder (a link or a file is in the way)" : strerror(e));
		return e == ELOOP ? -ENOTDIR : -e;
	}
	return 0;
}

static void site_dir_close(struct site_dir *sd)
{
	if (sd->fd >= 0)
		close(sd->fd);
	sd->fd = -1;
	free(sd->shown);
	sd->shown = NULL;
	strv_release(&sd->names);
}

/* The site's folder for a manifest path ("runs/x.html" -> runs, "x.html"). */
static struct site_dir *manifest_dir(const char *path, struct site_dir *top, struct site_dir *runs,
				     struct site_dir *exp, const char **ret_name)
{
	const char *slash = strchr(path, '/');

	*ret_name = slash ? slash + 1 : path;
	if (!slash)
		return top;
	return str_startswith(path, "runs/") ? runs : exp;
}

/* The files the last build listed in DIR/.lab-site (none without one). */
static void manifest_read(struct site_dir *top, struct strv *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_close_ int fd = openat(top->fd, SITE_MANIFEST, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char buf[8192];
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(&sb, buf, (size_t)n);
	site_manifest_parse(sb.buf, sb.len, ret);
}

/* DIR/.lab-site listing `files`, atomically as every page. */
static int manifest_write(struct site_dir *top, const struct strv *files, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	site_manifest_format(files, &sb);
	return write_file(top, SITE_MANIFEST, &sb, d);
}

/* Remove what the last build wrote (`old`) and this one did not
 * (`now`): pages of runs and experiments no longer stored. Only files the
 * manifest lists, and only regular files, not links: nothing else in DIR
 * is lab's. */
static size_t prune(const struct strv *old, const struct strmap *now, struct site_dir *top, struct site_dir *runs,
		    struct site_dir *exp)
{
	size_t removed = 0, one;

	for (size_t i = 0; i < old->n; i++) {
		const char *name;
		struct site_dir *sd = manifest_dir(old->v[i], top, runs, exp, &name);
		struct stat st;

		if (strmap_get(now, old->v[i], &one) || fstatat(sd->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		removed += unlinkat(sd->fd, name, 0) == 0;
	}
	return removed;
}

/* The pages this build wrote, as the manifest names them. */
static void written(const struct site_dir *top, const struct site_dir *runs, const struct site_dir *exp,
		    struct strv *ret)
{
	for (size_t i = 0; i < top->names.n; i++)
		strv_push(ret, top->names.v[i]);
	for (size_t i = 0; i < runs->names.n; i++)
		strv_pushf(ret, "runs/%s", runs->names.v[i]);
	for (size_t i = 0; i < exp->names.n; i++)
		strv_pushf(ret, "exp/%s", exp->names.v[i]);
}

/* Why a folder does not load, in one line: its first error. */
static char *first_error(struct diags *bad)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char *nl;

	diags_sort(bad);
	diags_format(bad, &sb);
	if ((nl = strchr(sb.buf, '\n')))
		strbuf_setlen(&sb, (size_t)(nl - sb.buf));
	return strbuf_detach(&sb, NULL);
}

/* runs/<id>.html */
static int write_run_page(struct site_dir *runs, const char *id, const struct strbuf *html, struct site_run *ret,
			  struct diags *d)
{
	_cleanup_free_ char *file = site_file_name(id), *page = xasprintf("%s.html", file);
	int r = write_page(runs, page, html, d);

	if (r < 0)
		return r;
	ret->report = true;
	return 0;
}

/* Run `id`: loaded, compared, its report (or its own page) written; its
 * summary in *ret either way (a folder with its own page: no verdicts). */
static int build_run(const char *root, const char *id, const struct site_opts *o, struct site_dir *runs,
		     struct site_run *ret, struct diags *d)
{
	_cleanup_free_ char *dir = path_join(root, id);
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *c = NULL;
	_cleanup_strbuf_ struct strbuf html = STRBUF_INIT;
	_cleanup_diags_ struct diags bad = { 0 };
	struct report_opts ro = { .all = o->all };
	struct calib_record rec = { 0 };
	_cleanup_free_ char *calib_err = NULL;
	bool mixed;
	int r;

	if (store_load(dir, &rs, &bad) < 0) {
		_cleanup_free_ char *why = first_error(&bad);

		site_run_damaged(id, *why ? why : "it does not load", ret);
		return 0;
	}
	c = compare_build(rs);
	mixed = env_pairs_matter(c->env, c->nenv) && !o->allow_mixed;
	if (o->own_page) {
		_cleanup_diags_ struct diags why = { 0 };

		r = o->own_page(root, dir, &html, &why);
		if (r != 0)
			site_run_from(c, false, ret);
		if (r < 0) {
			_cleanup_free_ char *e = first_error(&why);

			ret->error = xstrdup(*e ? e : "its page cannot be drawn");
			return 0;
		}
		if (r > 0)
			return write_run_page(runs, id, &html, ret, d);
	}
	site_run_from(c, !mixed, ret);
	if (mixed) {
		ret->error = xstrdup("its runs' environments differ in what matters (lab site --allow-mixed reports it)");
		return 0;
	}
	/* the experiment's calibration, as lab report has it */
	if (calib_load(root, rs->experiment, &rec, &calib_err) == 0)
		ro.calib = rec.c;
	report_format_html(c, &ro, &html);
	calib_record_release(&rec);
	return write_run_page(runs, id, &html, ret, d);
}

static int cmp_newest_first(const void *a, const void *b)
{
	return strcmp((*(const struct site_run *const *)b)->id, (*(const struct site_run *const *)a)->id);
}

/* Each experiment's page: its runs, newest first (as in `all`). */
static int build_experiments(const struct site_run **all, size_t n, struct site_dir *exp, struct site_summary *ret,
			     struct diags *d)
{
	_cleanup_strmap_ struct strmap seen = STRMAP_INIT;
	_cleanup_free_ const struct site_run **mine = xcalloc(n ? n : 1, sizeof(*mine));
	size_t one;
	int r;

	for (size_t i = 0; i < n; i++) {
		const char *name = all[i]->experiment;
		_cleanup_strbuf_ struct strbuf html = STRBUF_INIT;
		_cleanup_free_ char *file = NULL, *page = NULL;
		size_t m = 0;

		if (!name || strmap_get(&seen, name, &one))
			continue;
		strmap_put(&seen, name, 1);
		for (size_t k = i; k < n; k++)
			if (all[k]->experiment && streq(all[k]->experiment, name))
				mine[m++] = all[k];
		site_format_experiment(name, mine, m, &html);
		file = site_file_name(name);
		page = xasprintf("%s.html", file);
		if ((r = write_page(exp, page, &html, d)) < 0)
			return r;
		ret->experiments++;
		ret->pages++;
	}
	return 0;
}

/* Every run's report, then the experiments' pages, then the index. */
static int build_pages(const char *root, const struct site_opts *o, struct site_dir *top, struct site_dir *runs,
		       struct site_dir *exp, struct site_summary *ret, struct diags *d)
{
	_cleanup_strv_ struct strv ids = STRV_INIT;
	_cleanup_strbuf_ struct strbuf html = STRBUF_INIT;
	struct site_run *all = NULL;
	const struct site_run **order = NULL;
	size_t n = 0;
	int r;

	if ((r = store_list(root, &ids)) < 0) {
		struct pos pos = { .file = root };

		diags_add(d, &pos, "cannot list the stored runs: %s", strerror(-r));
		return r;
	}
	all = xcalloc(ids.n + 1, sizeof(*all));
	order = xcalloc(ids.n + 1, sizeof(*order));
	for (; n < ids.n; n++) {
		if ((r = build_run(root, ids.v[n], o, runs, &all[n], d)) < 0)
			goto cleanup;
		order[n] = &all[n];
		ret->runs++;
		ret->pages += all[n].report;
		if (!all[n].experiment) {
			strv_push(&ret->damaged, all[n].id);
			strv_push(&ret->why, all[n].error);
		}
	}
	qsort(order, n, sizeof(*order), cmp_newest_first);
	if ((r = build_experiments(order, n, exp, ret, d)) < 0)
		goto cleanup;
	site_format_index(order, n, &html);
	if ((r = write_page(top, "index.html", &html, d)) < 0)
		goto cleanup;
	ret->pages++;
	{
		_cleanup_strv_ struct strv old = STRV_INIT, now = STRV_INIT, both = STRV_INIT;
		_cleanup_strmap_ struct strmap new = STRMAP_INIT;
		size_t one;

		/* the manifest lists every file of the old build's until they are gone, then only the new
		 * build's: a build stopped half-way never leaves a file of lab's unlisted */
		manifest_read(top, &old);
		written(top, runs, exp, &now);
		for (size_t i = 0; i < now.n; i++) {
			strv_push(&both, now.v[i]);
			strmap_put(&new, now.v[i], 1);
		}
		for (size_t i = 0; i < old.n; i++)
			if (!strmap_get(&new, old.v[i], &one))
				strv_push(&both, old.v[i]);
		if ((r = manifest_write(top, &both, d)) < 0)
			goto cleanup;
		ret->removed = prune(&old, &new, top, runs, exp);
		r = manifest_write(top, &now, d);
	}
cleanup:
	for (size_t i = 0; i < n; i++)
		site_run_release(&all[i]);
	free(all);
	free(order);
	return r;
}

/* The deepest part of path that exists: path itself, or it without its last components. */
static char *existing_part(const char *path)
{
	char *p = xstrdup(path), *slash;
	struct stat st;

	while (stat(p, &st) < 0) {
		if (!(slash = strrchr(p, '/'))) {
			free(p);
			return xstrdup(".");
		}
		slash[slash == p] = '\0'; /* "/x" -> "/" */
	}
	return p;
}

/* A run folder: run.json, or an older lab's journal (its first line
 * says so: a "journal" of anything else's is no run). */
static bool stored_run(const char *dir)
{
	_cleanup_free_ char *j = path_join(dir, STORE_FILE), *o = path_join(dir, STORE_V1_JOURNAL);
	_cleanup_close_ int fd = -1;
	static const char head[] = "# lab journal ";
	char buf[sizeof(head) - 1];
	struct stat st;

	if (stat(j, &st) == 0 && S_ISREG(st.st_mode))
		return true;
	fd = open(o, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	return fd >= 0 && read(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) && memcmp(buf, head, sizeof(buf)) == 0;
}

/* Refuse a dir in the results store: the results folder or below it, or
 * in a run folder anywhere (pages there would go into the run's next
 * bundle). Compared by real path and inode, so neither a link nor ".."
 * gets around it; dir need not exist yet (its existing part is checked). */
static int check_place(const char *root, const char *dir, struct diags *d)
{
	_cleanup_free_ char *have = existing_part(dir), *real = realpath(have, NULL);
	struct pos pos = { .file = dir };
	struct stat rst, st;
	bool rooted = stat(root, &rst) == 0, self = streq(have, dir);

	for (char *slash; real; self = false) {
		if (rooted && stat(real, &st) == 0 && st.st_dev == rst.st_dev && st.st_ino == rst.st_ino) {
			if (self)
				diags_add(d, &pos, "the results folder itself: the site needs a folder of its own");
			else
				diags_add(d, &pos, "inside the results folder %s: the site needs a folder of its own", root);
			return -EINVAL;
		}
		if (stored_run(real)) {
			if (self)
				diags_add(d, &pos, "a stored run: the pages would go into its bundle");
			else
				diags_add(d, &pos, "inside the stored run %s: the pages would go into its bundle", real);
			return -EINVAL;
		}
		if (streq(real, "/") || !(slash = strrchr(real, '/')))
			break;
		slash[slash == real] = '\0';
	}
	return 0;
}

int site_build(const char *root, const char *dir, const struct site_opts *o, struct site_summary *ret,
	       struct diags *d)
{
	_cleanup_(site_dir_close) struct site_dir top = { .fd = -1 }, runs = { .fd = -1 }, exp = { .fd = -1 };
	struct pos pos = { .file = dir };
	int r;

	*ret = (struct site_summary){ .damaged = STRV_INIT, .why = STRV_INIT };
	top.shown = xstrdup(dir);
	/* before anything is made, and again once dir exists (a ".." in its new part) */
	if ((r = check_place(root, dir, d)) < 0)
		return r;
	if ((r = path_mkdir_p(dir, 0755)) < 0 || (top.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		r = r < 0 ? r : -errno;
		diags_add(d, &pos, "%s", r == -ENOTDIR || r == -EEXIST ? "not a folder" : strerror(-r));
		return r == -EEXIST ? -ENOTDIR : r;
	}
	if ((r = check_place(root, dir, d)) < 0)
		return r;
	if ((r = site_dir_open(top.fd, dir, "runs", &runs, d)) < 0 || (r = site_dir_open(top.fd, dir, "exp", &exp, d)) < 0)
		return r;
	return build_pages(root, o, &top, &runs, &exp, ret, d);
}
