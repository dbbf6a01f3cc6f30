/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "store.h"
#include "../util/banned.h"

#define JOURNAL_HEAD "# lab journal 1 experiment="

static const char *const dir_names[] = { [DIR_INCREASE] = "increase", [DIR_DECREASE] = "decrease",
					 [DIR_UNCHANGED] = "unchanged" };

int store_create(const char *root, char **ret_id, struct diags *d)
{
	struct pos pos = { .file = root };
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	int r = path_mkdir_p(root, 0755);

	if (r < 0) {
		diags_add(d, &pos, "cannot create the results folder: %s", strerror(-r));
		return r;
	}
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	for (int tries = 0; tries < 64; tries++) {
		unsigned rnd;
		_cleanup_free_ char *id = NULL, *dir = NULL;
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || read(fd, &rnd, sizeof(rnd)) != sizeof(rnd))
			rnd = (unsigned)getpid() ^ (unsigned)tries;
		if (fd >= 0)
			close(fd);
		id = xasprintf("%s-%04x", stamp, rnd & 0xffff);
		dir = path_join(root, id);
		if (mkdir(dir, 0755) == 0) {
			_cleanup_free_ char *runs = path_join(dir, "runs");

			if (mkdir(runs, 0755) < 0) {
				diags_add(d, &pos, "cannot create %s: %s", runs, strerror(errno));
				return -errno;
			}
			*ret_id = TAKE_PTR(id);
			return 0;
		}
		if (errno != EEXIST) {
			diags_add(d, &pos, "cannot create %s: %s", dir, strerror(errno));
			return -errno;
		}
	}
	diags_add(d, &pos, "cannot find a free run id under %s", root);
	return -EEXIST;
}

/* One journal field: no tab, no newline. */
static void field(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++)
		strbuf_addch(sb, *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

static int write_file(const char *dir, const char *name, const struct strbuf *sb, struct diags *d)
{
	_cleanup_free_ char *p = path_join(dir, name);
	struct pos pos = { .file = p };
	int r = fs_write_atomic(p, sb->buf ? sb->buf : "", sb->len, 0644);

	if (r < 0)
		diags_add(d, &pos, "cannot write: %s", strerror(-r));
	return r;
}

static void journal_text(const struct result_set *rs, struct strbuf *j)
{
	strbuf_addstr(j, JOURNAL_HEAD);
	field(j, rs->experiment);
	strbuf_addch(j, '\n');
	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];

		field(j, r->id);
		strbuf_addf(j, "\t%s\t", run_status_name(r->status));
		field(j, r->variant);
		strbuf_addf(j, "\t%zu\t%u\t", r->job, r->repeat);
		field(j, r->group);
		strbuf_addch(j, '\t');
		field(j, r->release ? r->release : "-");
		strbuf_addch(j, '\t');
		field(j, r->error ? r->error : "-");
		strbuf_addch(j, '\n');
	}
}

int store_save_journal(const char *dir, const struct result_set *rs, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf j = STRBUF_INIT;

	journal_text(rs, &j);
	return write_file(dir, "journal", &j, d) < 0 ? -EIO : 0;
}

int store_save(const char *dir, const struct result_set *rs, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf v = STRBUF_INIT, e = STRBUF_INIT, m = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf o = STRBUF_INIT;

	for (size_t i = 0; i < rs->mechanism.n; i++) {
		field(&m, rs->mechanism.v[i]);
		strbuf_addch(&m, '\n');
	}
	for (size_t i = 0; i < rs->variants.n; i++)
		strbuf_addf(&v, "%s\n", rs->variants.v[i]);
	for (size_t i = 0; i < rs->nexpect; i++) {
		const struct result_expect *x = &rs->expect[i];

		strbuf_addf(&e, "%zu\t", x->job);
		field(&e, x->metric);
		strbuf_addf(&e, "\t%s\t", dir_names[x->dir]);
		if (x->has_effect)
			strbuf_addf(&e, "%.17g\n", x->effect);
		else
			strbuf_addstr(&e, "-\n");
	}
	for (size_t i = 0; i < rs->nobserve; i++) {
		const struct result_observe *x = &rs->observe[i];

		field(&o, x->metric);
		strbuf_addf(&o, "\t%s\t%.17g\t", observe_rel_name(x->rel), x->value);
		for (size_t k = 0; k < x->kernels.n; k++) {
			strbuf_addstr(&o, k ? "," : "");
			field(&o, x->kernels.v[k]);
		}
		strbuf_addstr(&o, x->kernels.n ? "\t" : "-\t");
		field(&o, x->says ? x->says : "-");
		strbuf_addch(&o, '\n');
	}
	if (write_file(dir, "variants", &v, d) < 0 || write_file(dir, "expect", &e, d) < 0 ||
	    write_file(dir, "mechanism", &m, d) < 0 || write_file(dir, "observe", &o, d) < 0)
		return -EIO;
	/* the journal last: it is what --resume trusts */
	return store_save_journal(dir, rs, d);
}

/* Split a line on tabs into exactly n fields (in place). */
static bool split(char *line, char **f, size_t n)
{
	size_t k = 0;

	for (char *p = line;; p++) {
		if (*p == '\t' || !*p) {
			bool end = !*p;

			if (k == n)
				return false;
			f[k++] = line;
			*p = '\0';
			line = p + 1;
			if (end)
				break;
		}
	}
	return k == n;
}

static int parse_uint(const char *s, unsigned long *ret)
{
	char *end;

	errno = 0;
	*ret = strtoul(s, &end, 10);
	return errno || end == s || *end ? -EINVAL : 0;
}

int store_load_metrics(const char *dir, struct result_run *r, struct diags *d)
{
	_cleanup_free_ char *p = xasprintf("%s/runs/%s/metrics", dir, r->id);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	struct pos pos = { .file = p };

	if (strbuf_read_file(&sb, p, 64 << 20) < 0) {
		if (errno == ENOENT)
			return 0;
		diags_add(d, &pos, "cannot read: %s", strerror(errno));
		return -errno;
	}
	if (result_parse_metrics(r, sb.buf, &err) < 0) {
		diags_add(d, &pos, "%s", err);
		return -EINVAL;
	}
	return 0;
}

int store_load(const char *dir, struct result_set **ret, struct diags *d)
{
	_cleanup_free_ char *jp = path_join(dir, "journal"), *vp = path_join(dir, "variants");
	_cleanup_free_ char *ep = path_join(dir, "expect");
	_cleanup_strbuf_ struct strbuf j = STRBUF_INIT, v = STRBUF_INIT, e = STRBUF_INIT;
	_cleanup_result_set_ struct result_set *rs = NULL;
	struct pos pos = { .file = jp };
	char *save = NULL, *line;
	size_t lineno = 1;
	const char *base = strrchr(dir, '/');

	if (strbuf_read_file(&j, jp, 64 << 20) < 0 || strbuf_read_file(&v, vp, 1 << 20) < 0 ||
	    strbuf_read_file(&e, ep, 1 << 20) < 0) {
		diags_add(d, &pos, "not a lab run folder (%s)", strerror(errno));
		return -ENOENT;
	}
	if (!str_startswith(j.buf, JOURNAL_HEAD)) {
		pos.line = 1;
		diags_add(d, &pos, "not a lab journal (the first line must start with '%s')", JOURNAL_HEAD);
		return -EINVAL;
	}
	line = strtok_r(j.buf + strlen(JOURNAL_HEAD), "\n", &save);
	rs = result_set_new(base ? base + 1 : dir, line ? line : "");
	for (char *s2 = NULL, *l = strtok_r(v.buf, "\n", &s2); l; l = strtok_r(NULL, "\n", &s2))
		strv_push(&rs->variants, l);
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *f[8];
		unsigned long job, rep;
		struct result_run *r;
		enum run_status st;

		lineno++;
		pos.line = lineno;
		if (!split(line, f, 8) || parse_uint(f[3], &job) < 0 || parse_uint(f[4], &rep) < 0 ||
		    run_status_from_name(f[1], &st) < 0) {
			diags_add(d, &pos, "malformed journal line");
			return -EINVAL;
		}
		r = result_add_run(rs, f[0], f[2], f[5], job, rep);
		r->status = st;
		r->release = streq(f[6], "-") ? NULL : xstrdup(f[6]);
		r->error = streq(f[7], "-") ? NULL : xstrdup(f[7]);
		if (st == RUN_OK && store_load_metrics(dir, r, d) < 0)
			return -EINVAL;
	}
	{
		_cleanup_free_ char *mp = path_join(dir, "mechanism");
		_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;

		if (strbuf_read_file(&m, mp, 1 << 20) >= 0 && m.buf)
			for (char *s2 = NULL, *l = strtok_r(m.buf, "\n", &s2); l; l = strtok_r(NULL, "\n", &s2))
				strv_push(&rs->mechanism, l);
	}
	lineno = 0;
	for (char *s2 = NULL, *l = strtok_r(e.buf, "\n", &s2); l; l = strtok_r(NULL, "\n", &s2)) {
		char *f[4];
		unsigned long job;
		enum expect_direction dir_ = DIR_INCREASE;
		struct pos epos = { .file = ep, .line = ++lineno };
		char *end;
		double eff = 0;

		if (!split(l, f, 4) || parse_uint(f[0], &job) < 0) {
			diags_add(d, &epos, "malformed expectation line");
			return -EINVAL;
		}
		for (size_t k = 0; k < ELEMENTSOF(dir_names); k++)
			if (streq(f[2], dir_names[k]))
				dir_ = k;
		if (!streq(f[3], "-"))
			eff = strtod(f[3], &end);
		result_add_expect(rs, job, f[1], dir_, eff, !streq(f[3], "-"));
	}
	{
		/* mechanism checks; runs stored before they existed have none */
		_cleanup_free_ char *op = path_join(dir, "observe");
		_cleanup_strbuf_ struct strbuf ob = STRBUF_INIT;

		lineno = 0;
		if (strbuf_read_file(&ob, op, 1 << 20) >= 0 && ob.buf)
			for (char *s2 = NULL, *l = strtok_r(ob.buf, "\n", &s2); l; l = strtok_r(NULL, "\n", &s2)) {
				_cleanup_strv_ struct strv ks = STRV_INIT;
				struct pos opos = { .file = op, .line = ++lineno };
				enum observe_rel rel;
				char *f[5], *end;
				double val;

				if (!split(l, f, 5) || observe_rel_from_name(f[1], &rel) < 0 ||
				    (val = strtod(f[2], &end), end == f[2] || *end)) {
					diags_add(d, &opos, "malformed observe line");
					return -EINVAL;
				}
				if (!streq(f[3], "-"))
					for (char *s3 = NULL, *k = strtok_r(f[3], ",", &s3); k; k = strtok_r(NULL, ",", &s3))
						strv_push(&ks, k);
				result_add_observe(rs, f[0], rel, val, &ks, streq(f[4], "-") ? NULL : f[4]);
			}
	}
	*ret = TAKE_PTR(rs);
	return 0;
}

char *store_find(const char *root, const char *id)
{
	_cleanup_free_ char *p = NULL, *j = NULL;
	struct stat st;

	if (strchr(id, '/')) {
		p = xstrdup(id);
	} else {
		p = path_join(root, id);
	}
	j = path_join(p, "journal");
	if (stat(j, &st) < 0)
		return NULL;
	return TAKE_PTR(p);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int store_list(const char *root, struct strv *ret)
{
	DIR *dh = opendir(root);
	struct dirent *de;

	if (!dh)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(dh))) {
		_cleanup_free_ char *j = NULL;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		j = xasprintf("%s/%s/journal", root, de->d_name);
		if (stat(j, &st) == 0)
			strv_push(ret, de->d_name);
	}
	closedir(dh);
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(char *), cmp_str);
	return 0;
}
