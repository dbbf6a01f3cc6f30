/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <math.h>
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
#include "../util/strmap.h"
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

	int k = strbuf_read_file(&sb, p, 64 << 20);

	if (k < 0) {
		if (k == -ENOENT)
			return 0;
		diags_add(d, &pos, "cannot read: %s", strerror(-k));
		return k;
	}
	if (result_parse_metrics(r, sb.buf ? sb.buf : "", &err) < 0) {
		diags_add(d, &pos, "%s", err);
		return -EINVAL;
	}
	return 1;
}

/* Lines of a buffer, in place: each call returns the next (without '\n'). */
static char *next_line(char **cur)
{
	char *l = *cur, *nl;

	if (!l || !*l)
		return NULL;
	nl = strchr(l, '\n');
	*cur = nl ? nl + 1 : l + strlen(l);
	if (nl)
		*nl = '\0';
	return l;
}

static bool is_number(const char *s, double *ret)
{
	char *end;

	errno = 0;
	*ret = strtod(s, &end);
	return !errno && end != s && !*end && isfinite(*ret);
}

static int parse_variants(struct result_set *rs, char *text, const char *file, struct diags *d)
{
	struct pos pos = { .file = file };

	for (char *l; (l = next_line(&text));) {
		pos.line++;
		if (!str_is_name(l)) {
			diags_add(d, &pos, "'%s' is not a kernel name", l);
			return -EINVAL;
		}
		if (strv_index(&rs->variants, l) >= 0) {
			diags_add(d, &pos, "kernel '%s' is listed twice", l);
			return -EINVAL;
		}
		strv_push(&rs->variants, l);
	}
	return 0;
}

static int parse_journal(struct result_set *rs, char *text, const char *file, struct diags *d)
{
	_cleanup_strmap_ struct strmap ids = STRMAP_INIT;
	struct pos pos = { .file = file, .line = 1 };

	for (char *line; (line = next_line(&text));) {
		size_t one;
		char *f[8];
		unsigned long job, rep;
		struct result_run *r;
		enum run_status st;

		pos.line++;
		if (!split(line, f, 8) || parse_uint(f[3], &job) < 0 || parse_uint(f[4], &rep) < 0 ||
		    run_status_from_name(f[1], &st) < 0) {
			diags_add(d, &pos, "malformed journal line (want 8 tab-separated fields: id, status, kernel, job, "
					   "repeat, group, release, error)");
			return -EINVAL;
		}
		if (!str_is_name(f[0])) {
			diags_add(d, &pos, "'%s' is not a run id", f[0]);
			return -EINVAL;
		}
		if (strmap_get(&ids, f[0], &one)) {
			diags_add(d, &pos, "run '%s' is in the journal twice", f[0]);
			return -EINVAL;
		}
		if (!str_is_name(f[2]) || (rs->variants.n && strv_index(&rs->variants, f[2]) < 0)) {
			diags_add(d, &pos, "run '%s' names kernel '%s', which the run's variants do not list", f[0], f[2]);
			return -EINVAL;
		}
		strmap_put(&ids, f[0], 1); /* points into text, which outlives the map */
		r = result_add_run(rs, f[0], f[2], f[5], job, rep);
		r->status = st;
		r->release = streq(f[6], "-") ? NULL : xstrdup(f[6]);
		r->error = streq(f[7], "-") ? NULL : xstrdup(f[7]);
	}
	return 0;
}

static int parse_expect(struct result_set *rs, char *text, const char *file, struct diags *d)
{
	struct pos pos = { .file = file };

	for (char *l; (l = next_line(&text));) {
		char *f[4];
		unsigned long job;
		size_t k;
		double eff = 0;

		pos.line++;
		if (!split(l, f, 4) || parse_uint(f[0], &job) < 0 || !*f[1]) {
			diags_add(d, &pos, "malformed expectation line (want job, metric, direction, effect)");
			return -EINVAL;
		}
		for (k = 0; k < ELEMENTSOF(dir_names); k++)
			if (streq(f[2], dir_names[k]))
				break;
		if (k == ELEMENTSOF(dir_names)) {
			diags_add(d, &pos, "unknown direction '%s' (increase, decrease or unchanged)", f[2]);
			return -EINVAL;
		}
		if (!streq(f[3], "-") && (!is_number(f[3], &eff) || eff < 0)) {
			diags_add(d, &pos, "effect '%s' is not a number >= 0", f[3]);
			return -EINVAL;
		}
		result_add_expect(rs, job, f[1], (enum expect_direction)k, eff, !streq(f[3], "-"));
	}
	return 0;
}

static int parse_observe(struct result_set *rs, char *text, const char *file, struct diags *d)
{
	struct pos pos = { .file = file };

	for (char *l; (l = next_line(&text));) {
		_cleanup_strv_ struct strv ks = STRV_INIT;
		enum observe_rel rel;
		char *f[5];
		double val;

		pos.line++;
		if (!split(l, f, 5) || !*f[0] || observe_rel_from_name(f[1], &rel) < 0 || !is_number(f[2], &val)) {
			diags_add(d, &pos, "malformed observe line");
			return -EINVAL;
		}
		if (!streq(f[3], "-"))
			for (char *s3 = NULL, *k = strtok_r(f[3], ",", &s3); k; k = strtok_r(NULL, ",", &s3))
				strv_push(&ks, k);
		result_add_observe(rs, f[0], rel, val, &ks, streq(f[4], "-") ? NULL : f[4]);
	}
	return 0;
}

int store_parse(const char *id, const struct store_text *t, struct result_set **ret, struct diags *d)
{
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_free_ char *j = xstrdup(t->journal), *v = xstrdup(t->variants), *e = xstrdup(t->expect);
	_cleanup_free_ char *m = xstrdup(t->mechanism ? t->mechanism : ""), *o = xstrdup(t->observe ? t->observe : "");
	struct pos pos = { .file = t->journal_file, .line = 1 };
	char *cur = j, *head;

	if (!str_is_name(id)) {
		struct pos ip = { .file = t->journal_file };

		diags_add(d, &ip, "'%s' is not a run id", id);
		return -EINVAL;
	}
	head = next_line(&cur);
	if (!head || !str_startswith(head, JOURNAL_HEAD)) {
		diags_add(d, &pos, "not a lab journal (the first line must start with '%s')", JOURNAL_HEAD);
		return -EINVAL;
	}
	rs = result_set_new(id, head + strlen(JOURNAL_HEAD));
	if (parse_variants(rs, v, t->variants_file, d) < 0 || parse_journal(rs, cur, t->journal_file, d) < 0 ||
	    parse_expect(rs, e, t->expect_file, d) < 0 || parse_observe(rs, o, t->observe_file, d) < 0)
		return -EINVAL;
	cur = m;
	for (char *l; (l = next_line(&cur));)
		strv_push(&rs->mechanism, l);
	*ret = TAKE_PTR(rs);
	return 0;
}

/* A run folder's file, or NULL when missing and optional (an error otherwise). */
static int read_part(const char *dir, const char *shown, const char *name, bool optional, size_t max,
		     struct strbuf *sb, char **ret_path, struct diags *d)
{
	_cleanup_free_ char *p = path_join(dir, name), *sp = path_join(shown, name);
	struct pos pos = { .file = sp };
	int r = strbuf_read_file(sb, p, max);

	if (r < 0 && !(optional && r == -ENOENT)) {
		if (r == -ENOENT)
			diags_add(d, &pos, "missing: not a lab run folder");
		else
			diags_add(d, &pos, "cannot read: %s", strerror(-r));
		return r;
	}
	if (sb->buf && strlen(sb->buf) != sb->len) {
		diags_add(d, &pos, "a NUL byte in a text file");
		return -EINVAL;
	}
	*ret_path = TAKE_PTR(sp);
	return 0;
}

int store_load_as(const char *dir, const char *id, const char *shown, struct result_set **ret, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf j = STRBUF_INIT, v = STRBUF_INIT, e = STRBUF_INIT, m = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf o = STRBUF_INIT;
	_cleanup_free_ char *jp = NULL, *vp = NULL, *ep = NULL, *mp = NULL, *op = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	struct store_text t;

	if (!shown)
		shown = dir;
	if (read_part(dir, shown, "journal", false, 64 << 20, &j, &jp, d) < 0 ||
	    read_part(dir, shown, "variants", false, 1 << 20, &v, &vp, d) < 0 ||
	    read_part(dir, shown, "expect", false, 1 << 20, &e, &ep, d) < 0 ||
	    read_part(dir, shown, "mechanism", true, 1 << 20, &m, &mp, d) < 0 ||
	    read_part(dir, shown, "observe", true, 1 << 20, &o, &op, d) < 0)
		return -EINVAL;
	t = (struct store_text){
		.journal = j.buf ? j.buf : "", .journal_file = jp,
		.variants = v.buf ? v.buf : "", .variants_file = vp,
		.expect = e.buf ? e.buf : "", .expect_file = ep,
		.mechanism = m.buf, .observe = o.buf, .observe_file = op,
	};
	if (store_parse(id, &t, &rs, d) < 0)
		return -EINVAL;
	for (size_t i = 0; i < rs->n; i++) {
		struct result_run *r = &rs->runs[i];
		int k;

		if (r->status != RUN_OK)
			continue;
		if ((k = store_load_metrics(dir, r, d)) < 0)
			return k;
		if (k == 0) {
			struct pos pos = { .file = jp, .line = (unsigned)i + 2 };

			diags_add(d, &pos, "run '%s' is ok but has no metrics file (runs/%s/metrics)", r->id, r->id);
			return -EINVAL;
		}
	}
	*ret = TAKE_PTR(rs);
	return 0;
}

int store_load(const char *dir, struct result_set **ret, struct diags *d)
{
	_cleanup_free_ char *id = path_basename(dir);

	return store_load_as(dir, id, NULL, ret, d);
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

		if (!str_is_name(de->d_name))
			continue; /* dot folders (fetches under way) and names lab never makes */
		j = xasprintf("%s/%s/journal", root, de->d_name);
		if (stat(j, &st) == 0)
			strv_push(ret, de->d_name);
	}
	closedir(dh);
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(char *), cmp_str);
	return 0;
}
