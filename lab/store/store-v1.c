/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../util/strmap.h"
#include "store-v1.h"
#include "../util/banned.h"

#define JOURNAL_HEAD "# lab journal 1 experiment="

const char *const store_v1_files[] = { STORE_V1_JOURNAL, "variants", "expect", "mechanism", "observe", NULL };

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

/* A decimal number up to UINT_MAX (what run.json reads back too). */
static int parse_uint(const char *s, unsigned long *ret)
{
	char *end;

	errno = 0;
	*ret = strtoul(s, &end, 10);
	return errno || end == s || *end || *ret > UINT_MAX ? -EINVAL : 0;
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
		if (!str_is_variant_name(l)) {
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
		if (!str_is_variant_name(f[2]) || (rs->variants.n && strv_index(&rs->variants, f[2]) < 0)) {
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
		enum expect_direction dir;
		double eff = 0;

		pos.line++;
		if (!split(l, f, 4) || parse_uint(f[0], &job) < 0 || !*f[1]) {
			diags_add(d, &pos, "malformed expectation line (want job, metric, direction, effect)");
			return -EINVAL;
		}
		if (expect_direction_parse(f[2], &dir) < 0) {
			diags_add(d, &pos, "unknown direction '%s' (increase, decrease or unchanged)", f[2]);
			return -EINVAL;
		}
		if (!streq(f[3], "-") && (!is_number(f[3], &eff) || eff < 0)) {
			diags_add(d, &pos, "effect '%s' is not a number >= 0", f[3]);
			return -EINVAL;
		}
		result_add_expect(rs, job, f[1], dir, eff, !streq(f[3], "-"));
	}
	return 0;
}

/* "a,b,c" into ks; empty names between commas are skipped. */
static void split_kernels(const char *s, struct strv *ks)
{
	while (*s) {
		size_t n = strcspn(s, ",");

		if (n)
			strv_push_take(ks, xstrndup(s, n));
		s += n + (s[n] == ',');
	}
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
			split_kernels(f[3], &ks);
		result_add_observe(rs, f[0], rel, val, &ks, streq(f[4], "-") ? NULL : f[4]);
	}
	return 0;
}

int store_v1_parse(const char *id, const struct store_v1_text *t, struct result_set **ret, struct diags *d)
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

int store_v1_load(const char *dir, const char *id, const char *shown, struct result_set **ret,
		  char **ret_journal, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf j = STRBUF_INIT, v = STRBUF_INIT, e = STRBUF_INIT, m = STRBUF_INIT;
	_cleanup_strbuf_ struct strbuf o = STRBUF_INIT;
	_cleanup_free_ char *jp = NULL, *vp = NULL, *ep = NULL, *mp = NULL, *op = NULL;
	struct store_v1_text t;

	if (read_part(dir, shown, STORE_V1_JOURNAL, false, 64 << 20, &j, &jp, d) < 0 ||
	    read_part(dir, shown, "variants", false, 1 << 20, &v, &vp, d) < 0 ||
	    read_part(dir, shown, "expect", false, 1 << 20, &e, &ep, d) < 0 ||
	    read_part(dir, shown, "mechanism", true, 1 << 20, &m, &mp, d) < 0 ||
	    read_part(dir, shown, "observe", true, 1 << 20, &o, &op, d) < 0)
		return -EINVAL;
	t = (struct store_v1_text){
		.journal = j.buf ? j.buf : "", .journal_file = jp,
		.variants = v.buf ? v.buf : "", .variants_file = vp,
		.expect = e.buf ? e.buf : "", .expect_file = ep,
		.mechanism = m.buf, .observe = o.buf, .observe_file = op,
	};
	if (store_v1_parse(id, &t, ret, d) < 0)
		return -EINVAL;
	*ret_journal = TAKE_PTR(jp);
	return 0;
}
