/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/json-read.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../util/strmap.h"
#include "store.h"
#include "store-v1.h"
#include "../util/banned.h"

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

static int write_file(const char *dir, const char *name, const struct strbuf *sb, struct diags *d)
{
	_cleanup_free_ char *p = path_join(dir, name);
	struct pos pos = { .file = p };
	int r = fs_write_atomic(p, sb->buf ? sb->buf : "", sb->len, 0644);

	if (r < 0)
		diags_add(d, &pos, "cannot write: %s", strerror(-r));
	return r;
}


/* ---- writing run.json ---- */

static void json_strv(struct json *j, const char *k, const struct strv *v)
{
	json_key(j, k);
	json_array_begin(j);
	for (size_t i = 0; i < v->n; i++)
		json_string(j, v->v[i]);
	json_array_end(j);
}

static void runs_json(struct json *j, const struct result_set *rs)
{
	json_key(j, "runs");
	json_array_begin(j);
	for (size_t i = 0; i < rs->n; i++)
		result_run_json(j, &rs->runs[i]);
	json_array_end(j);
}

static void expect_json(struct json *j, const struct result_set *rs)
{
	json_key(j, "expect");
	json_array_begin(j);
	for (size_t i = 0; i < rs->nexpect; i++) {
		const struct result_expect *x = &rs->expect[i];

		json_object_begin(j);
		json_kv_uint(j, "job", x->job);
		json_kv_string(j, "metric", x->metric);
		json_kv_string(j, "direction", expect_direction_name(x->dir));
		json_key(j, "effect");
		if (x->has_effect)
			json_double(j, x->effect);
		else
			json_null(j);
		json_key(j, "statistic");
		if (x->method >= 0 && x->method < STAT_METHOD_COUNT)
			json_string(j, stat_method_name((enum stat_method)x->method));
		else
			json_null(j); /* the experiment's */
		json_object_end(j);
	}
	json_array_end(j);
}

/* How the run decides (lab.yaml decide: and repeat: auto). */
static void decide_json(struct json *j, const struct decide_params *p)
{
	json_key(j, "decide");
	json_object_begin(j);
	json_kv_double(j, "alpha", p->alpha);
	json_kv_double(j, "power", p->power);
	json_kv_double(j, "q", p->q);
	json_kv_string(j, "statistic", stat_method_name(p->method));
	json_key(j, "sequential");
	json_bool(j, p->sequential);
	json_kv_uint(j, "min_boots", p->min_boots);
	json_kv_uint(j, "max_boots", p->max_boots);
	json_object_end(j);
}

static void observe_json(struct json *j, const struct result_set *rs)
{
	json_key(j, "observe");
	json_array_begin(j);
	for (size_t i = 0; i < rs->nobserve; i++) {
		const struct result_observe *x = &rs->observe[i];

		json_object_begin(j);
		json_kv_string(j, "metric", x->metric);
		json_kv_string(j, "rel", observe_rel_name(x->rel));
		json_kv_double(j, "value", x->value);
		json_strv(j, "kernels", &x->kernels);
		json_kv_string(j, "says", x->says);
		if (x->margin > 0)
			json_kv_double(j, "margin", x->margin);
		json_object_end(j);
	}
	json_array_end(j);
}

/* Only when the run has a series: a run without one writes what it always did. */
static void series_json(struct json *j, const struct result_set *rs)
{
	if (!rs->nseries)
		return;
	json_key(j, "series");
	json_array_begin(j);
	for (size_t i = 0; i < rs->nseries; i++) {
		const struct result_series *x = &rs->series[i];

		json_object_begin(j);
		json_kv_string(j, "kernel", x->kernel);
		json_strv(j, "chain", &x->chain);
		json_key(j, "patches");
		json_array_begin(j);
		for (size_t k = 0; k < x->npatches; k++) {
			json_object_begin(j);
			json_kv_uint(j, "number", x->patches[k].number);
			json_kv_string(j, "subject", x->patches[k].subject);
			json_object_end(j);
		}
		json_array_end(j);
		json_object_end(j);
	}
	json_array_end(j);
}

void store_format(const struct result_set *rs, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_uint(&j, "format", STORE_FORMAT);
	json_kv_string(&j, "experiment", rs->experiment);
	json_strv(&j, "variants", &rs->variants);
	json_strv(&j, "mechanism", &rs->mechanism);
	if (rs->cluster.n) /* only runs a cluster ran */
		json_strv(&j, "cluster", &rs->cluster);
	json_kv_string(&j, "timing", rs->icount ? "icount" : "host");
	decide_json(&j, &rs->decide);
	expect_json(&j, rs);
	observe_json(&j, rs);
	series_json(&j, rs);
	if (rs->nfps) {
		json_key(&j, "fingerprints");
		json_array_begin(&j);
		for (size_t i = 0; i < rs->nfps; i++)
			fingerprint_write_json(&rs->fps[i], &j);
		json_array_end(&j);
	}
	runs_json(&j, rs);
	json_object_end(&j);
	json_finish(&j);
}

int store_save(const char *dir, const struct result_set *rs, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	store_format(rs, &sb);
	if (write_file(dir, STORE_FILE, &sb, d) < 0)
		return -EIO;
	/* a run stored before run.json is now in it: the old files go (run.json
	 * wins over them should this stop half-way) */
	for (size_t i = 0; store_v1_files[i]; i++) {
		_cleanup_free_ char *p = path_join(dir, store_v1_files[i]);

		if (unlink(p) < 0 && errno != ENOENT) {
			struct pos pos = { .file = p };

			diags_add(d, &pos, "cannot remove: %s", strerror(errno));
			return -EIO;
		}
	}
	return 0;
}

int store_save_journal(const char *dir, const struct result_set *rs, struct diags *d)
{
	return store_save(dir, rs, d);
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

/* ---- reading run.json ---- */

/* One reading: the file named in errors, and where in the document we are. */
struct rd {
	const char *file;
	struct diags *d;
	char where[64]; /* "runs[12]", "" at the top */
};

_printf_(2, 3) static int bad(struct rd *x, const char *fmt, ...)
{
	struct pos pos = { .file = x->file };
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (*x->where)
		diags_add(x->d, &pos, "%s: %s", x->where, msg);
	else
		diags_add(x->d, &pos, "%s", msg);
	return -EINVAL;
}

/* The member `key` of obj, of type t (or null when nullable: *ret NULL). */
static int member(struct rd *x, const struct json_doc *obj, const char *key, enum json_doc_type t, bool nullable,
		  const struct json_doc **ret)
{
	static const char *const want[] = {
		[JSON_DOC_NULL] = "null", [JSON_DOC_BOOL] = "a boolean", [JSON_DOC_INTEGER] = "an integer",
		[JSON_DOC_REAL] = "a number", [JSON_DOC_STRING] = "a string", [JSON_DOC_ARRAY] = "an array",
		[JSON_DOC_OBJECT] = "an object",
	};
	const struct json_doc *v = json_doc_get(obj, key);
	enum json_doc_type have;

	if (!v)
		return bad(x, "member '%s' is missing", key);
	have = json_doc_type(v);
	if (nullable && have == JSON_DOC_NULL) {
		*ret = NULL;
		return 0;
	}
	if (have != t && !(t == JSON_DOC_REAL && have == JSON_DOC_INTEGER))
		return bad(x, "'%s' is %s, not %s%s", key, json_doc_type_name(v), want[t],
			   nullable ? " or null" : "");
	*ret = v;
	return 0;
}

static int member_string(struct rd *x, const struct json_doc *obj, const char *key, bool nullable, const char **ret)
{
	const struct json_doc *v;
	int r = member(x, obj, key, JSON_DOC_STRING, nullable, &v);

	if (r < 0)
		return r;
	*ret = v ? json_doc_string_value(v) : NULL;
	return 0;
}

static int member_uint(struct rd *x, const struct json_doc *obj, const char *key, unsigned long long max,
		       unsigned long long *ret)
{
	const struct json_doc *v;
	long long n;
	int r = member(x, obj, key, JSON_DOC_INTEGER, false, &v);

	if (r < 0)
		return r;
	if (json_doc_int_value(v, 0, max > LLONG_MAX ? LLONG_MAX : (long long)max, &n) < 0)
		return bad(x, "'%s' is out of range (0 to %llu)", key, max);
	*ret = (unsigned long long)n;
	return 0;
}

static int member_number(struct rd *x, const struct json_doc *obj, const char *key, bool nullable, bool *ret_set,
			 double *ret)
{
	const struct json_doc *v;
	int r = member(x, obj, key, JSON_DOC_REAL, nullable, &v);

	if (r < 0)
		return r;
	*ret_set = v != NULL;
	*ret = 0;
	if (v)
		json_doc_number_value(v, ret);
	return 0;
}

/* A non-empty string from a fixed list: its index. */
static int member_enum(struct rd *x, const struct json_doc *obj, const char *key, const char *const *names,
		       size_t n, const char *hint, unsigned *ret)
{
	const char *s;
	int r = member_string(x, obj, key, false, &s);

	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		if (names[i] && streq(s, names[i])) {
			*ret = (unsigned)i;
			return 0;
		}
	return bad(x, "unknown %s '%s' (%s)", key, s, hint);
}

/* obj is an object with only the `known` members. */
static int object(struct rd *x, const struct json_doc *obj, const char *const *known)
{
	const char *k;

	if (json_doc_type(obj) != JSON_DOC_OBJECT)
		return bad(x, "%s, not an object", json_doc_type_name(obj));
	if ((k = json_doc_unknown_key(obj, known)))
		return bad(x, "unknown member '%s'", k);
	return 0;
}

/* An array of strings (names when `names`) into v, none twice when unique. */
static int strings(struct rd *x, const struct json_doc *obj, const char *key, bool names, bool unique,
		   struct strv *v)
{
	const struct json_doc *a;
	int r = member(x, obj, key, JSON_DOC_ARRAY, false, &a);

	for (size_t i = 0; r >= 0 && i < json_doc_array_size(a); i++) {
		const char *s = json_doc_string_value(json_doc_array_get(a, i));

		if (!s)
			return bad(x, "%s[%zu] is %s, not a string", key, i, json_doc_type_name(json_doc_array_get(a, i)));
		if (names && !str_is_variant_name(s))
			return bad(x, "%s[%zu]: '%s' is not a kernel name", key, i, s);
		if (unique && strv_contains(v, s))
			return bad(x, "%s[%zu]: '%s' is listed twice", key, i, s);
		strv_push(v, s);
	}
	return r;
}

/* Element i of the array `key`, which errors now name. */
static const struct json_doc *element(struct rd *x, const struct json_doc *a, const char *key, size_t i)
{
	snprintf(x->where, sizeof(x->where), "%s[%zu]", key, i);
	return json_doc_array_get(a, i);
}

static int read_run(struct rd *x, struct result_set *rs, struct strmap *ids, const struct json_doc *o)
{
	static const char *const known[] = { "id", "status", "variant", "job", "repeat", "group", "release",
					     "error", "boot", "boot_pos", "guest", "node", "fingerprint", NULL };
	static const char *const status[] = { [RUN_PENDING] = "pending", [RUN_OK] = "ok", [RUN_FAILED] = "failed" };
	const char *id = NULL, *variant = NULL, *group = NULL, *release = NULL, *error = NULL, *boot = NULL,
		   *guest = NULL, *node = NULL;
	unsigned long long job = 0, repeat = 0, boot_pos = 0, fp = 0;
	unsigned st = 0;
	struct result_run *r;
	size_t one;

	if (object(x, o, known) < 0 || member_string(x, o, "id", false, &id) < 0 ||
	    member_enum(x, o, "status", status, ELEMENTSOF(status), "pending, ok or failed", &st) < 0 ||
	    member_string(x, o, "variant", false, &variant) < 0 || member_uint(x, o, "job", UINT_MAX, &job) < 0 ||
	    member_uint(x, o, "repeat", UINT_MAX, &repeat) < 0 || member_string(x, o, "group", false, &group) < 0 ||
	    member_string(x, o, "release", true, &release) < 0 || member_string(x, o, "error", true, &error) < 0 ||
	    member_string(x, o, "boot", true, &boot) < 0 || member_uint(x, o, "boot_pos", UINT_MAX, &boot_pos) < 0 ||
	    member_string(x, o, "guest", true, &guest) < 0 ||
	    (json_doc_get(o, "node") && member_string(x, o, "node", true, &node) < 0))
		return -EINVAL;
	if (json_doc_get(o, "fingerprint")) {
		if (!rs->nfps)
			return bad(x, "'fingerprint' names an environment, but the file lists none");
		if (member_uint(x, o, "fingerprint", rs->nfps - 1, &fp) < 0)
			return -EINVAL;
	}
	if (!str_is_name(id))
		return bad(x, "'%s' is not a run id", id);
	if (strmap_get(ids, id, &one))
		return bad(x, "run '%s' is in the file twice", id);
	if (!str_is_variant_name(variant) || (rs->variants.n && strv_index(&rs->variants, variant) < 0))
		return bad(x, "run '%s' names kernel '%s', which the run's variants do not list", id, variant);
	if (boot && !str_is_name(boot))
		return bad(x, "'%s' is not a boot id", boot);
	if (node && !str_is_name(node))
		return bad(x, "'%s' is not a node name", node);
	r = result_add_run(rs, id, variant, group, job, (unsigned)repeat);
	strmap_put(ids, r->id, 1); /* r->id lives as long as rs */
	r->status = (enum run_status)st;
	r->release = release ? xstrdup(release) : NULL;
	r->error = error ? xstrdup(error) : NULL;
	r->boot = boot ? xstrdup(boot) : NULL;
	r->boot_pos = (unsigned)boot_pos;
	r->guest = guest ? xstrdup(guest) : NULL;
	r->node = node ? xstrdup(node) : NULL;
	r->fp = json_doc_get(o, "fingerprint") ? (int)fp : -1;
	return 0;
}

/* "fingerprints": the distinct environments the runs name; absent in runs
 * stored before they were recorded. Each as fingerprint.h reads it. */
static int read_fingerprints(struct rd *x, struct result_set *rs, const struct json_doc *top)
{
	const struct json_doc *a;

	if (!json_doc_get(top, "fingerprints"))
		return 0;
	if (member(x, top, "fingerprints", JSON_DOC_ARRAY, false, &a) < 0)
		return -EINVAL;
	if (json_doc_array_size(a) > STORE_MAX_FINGERPRINTS)
		return bad(x, "%zu fingerprints, more than %d", json_doc_array_size(a), STORE_MAX_FINGERPRINTS);
	for (size_t i = 0; i < json_doc_array_size(a); i++) {
		_cleanup_free_ char *err = NULL;
		struct fingerprint fp;

		if (fingerprint_read_json(element(x, a, "fingerprints", i), &fp, &err) < 0)
			return bad(x, "%s", err);
		GROW(rs->fps, rs->fps_alloc, rs->nfps + 1);
		rs->fps[rs->nfps++] = fp;
	}
	*x->where = '\0';
	return 0;
}

/* A statistic's name, or null (-1: the experiment's) when nullable; absent
 * when optional (files written before statistics were stored). */
static int member_statistic(struct rd *x, const struct json_doc *obj, const char *key, bool optional, int *ret)
{
	const char *s = NULL;
	enum stat_method m;

	*ret = -1;
	if (optional && !json_doc_get(obj, key))
		return 0;
	if (member_string(x, obj, key, optional, &s) < 0)
		return -EINVAL;
	if (!s)
		return 0;
	if (stat_method_from_name(s, &m) < 0)
		return bad(x, "unknown %s '%s' (welch-log, mann-whitney or bootstrap)", key, s);
	*ret = (int)m;
	return 0;
}

/* A number member within (lo, hi), or [lo, hi] when closed. */
static int member_range(struct rd *x, const struct json_doc *obj, const char *key, double lo, double hi, bool closed,
			double *ret)
{
	bool set;

	if (member_number(x, obj, key, false, &set, ret) < 0)
		return -EINVAL;
	if (closed ? *ret >= lo && *ret <= hi : *ret > lo && *ret < hi)
		return 0;
	return bad(x, "'%s' is %g, not %s %g %s %g%s", key, *ret, closed ? "from" : "between", lo, closed ? "to" : "and",
		   hi, closed ? "" : " (both excluded)");
}

/* "decide": the run's decision parameters, lab.yaml's ranges; absent in
 * files written before they were stored: the defaults. */
static int read_decide(struct rd *x, struct result_set *rs, const struct json_doc *top)
{
	static const char *const known[] = { "alpha", "power", "q", "statistic", "sequential", "min_boots",
					     "max_boots", NULL };
	struct decide_params p = DECIDE_PARAMS_DEFAULT;
	const struct json_doc *o, *b;
	unsigned long long lo = 0, hi = 0;
	int m = -1;

	if (!json_doc_get(top, "decide"))
		return 0;
	if (member(x, top, "decide", JSON_DOC_OBJECT, false, &o) < 0)
		return -EINVAL;
	snprintf(x->where, sizeof(x->where), "decide");
	if (object(x, o, known) < 0 || member_range(x, o, "alpha", 0, 0.5, false, &p.alpha) < 0 ||
	    member_range(x, o, "power", 0.5, 0.99, true, &p.power) < 0 ||
	    member_range(x, o, "q", 0, 0.5, false, &p.q) < 0 || member_statistic(x, o, "statistic", false, &m) < 0 ||
	    member(x, o, "sequential", JSON_DOC_BOOL, false, &b) < 0 ||
	    member_uint(x, o, "min_boots", 1000, &lo) < 0 || member_uint(x, o, "max_boots", 1000, &hi) < 0)
		return -EINVAL;
	if (lo < 1)
		return bad(x, "'min_boots' is %llu, not from 1 to 1000", lo);
	if (hi < lo)
		return bad(x, "'max_boots' %llu is below 'min_boots' %llu", hi, lo);
	*x->where = '\0';
	p.method = (enum stat_method)m;
	p.sequential = json_doc_bool(o, "sequential");
	p.min_boots = (unsigned)lo;
	p.max_boots = (unsigned)hi;
	rs->decide = p;
	return 0;
}

static int read_expect(struct rd *x, struct result_set *rs, const struct json_doc *o)
{
	static const char *const known[] = { "job", "metric", "direction", "effect", "statistic", NULL };
	unsigned long long job = 0;
	const char *metric = NULL;
	unsigned dir = 0;
	bool has_effect = false;
	double effect = 0;
	int method = -1;

	if (object(x, o, known) < 0 || member_uint(x, o, "job", UINT_MAX, &job) < 0 ||
	    member_string(x, o, "metric", false, &metric) < 0 ||
	    member_enum(x, o, "direction", expect_direction_names, DIR_COUNT, "increase, decrease or unchanged",
			&dir) < 0 ||
	    member_number(x, o, "effect", true, &has_effect, &effect) < 0 ||
	    member_statistic(x, o, "statistic", true, &method) < 0)
		return -EINVAL;
	if (!*metric)
		return bad(x, "an empty metric name");
	if (effect < 0)
		return bad(x, "effect %g is not >= 0", effect);
	result_add_expect(rs, job, metric, (enum expect_direction)dir, effect, has_effect);
	rs->expect[rs->nexpect - 1].method = method;
	return 0;
}

static int read_observe(struct rd *x, struct result_set *rs, const struct json_doc *o)
{
	static const char *const known[] = { "metric", "rel", "value", "kernels", "says", "margin", NULL };
	static const char *const rels[] = { "==", "<", "<=", ">", ">=", "higher", "lower", "differs", "same" };
	_cleanup_strv_ struct strv ks = STRV_INIT;
	const char *metric = NULL, *says = NULL;
	unsigned rel = 0;
	bool set = false, has_margin = false;
	double value = 0, margin = 0;

	if (object(x, o, known) < 0 || member_string(x, o, "metric", false, &metric) < 0 ||
	    member_enum(x, o, "rel", rels, ELEMENTSOF(rels), "==, <, <=, >, >=, higher, lower, differs or same",
			&rel) < 0 ||
	    member_number(x, o, "value", false, &set, &value) < 0 || strings(x, o, "kernels", false, false, &ks) < 0 ||
	    member_string(x, o, "says", true, &says) < 0 ||
	    (json_doc_get(o, "margin") && member_number(x, o, "margin", false, &has_margin, &margin) < 0))
		return -EINVAL;
	if (!*metric)
		return bad(x, "an empty metric name");
	for (size_t i = 0; i < ks.n; i++)
		if (!*ks.v[i])
			return bad(x, "kernels[%zu] is empty", i);
	if (has_margin && !(margin > 0 && margin <= 1e6))
		return bad(x, "margin %g is not a positive fraction", margin);
	if (has_margin && rel < OBS_HIGHER)
		return bad(x, "margin given to a check against a value (%s)", rels[rel]);
	result_add_observe(rs, metric, (enum observe_rel)rel, value, &ks, says);
	rs->observe[rs->nobserve - 1].margin = margin;
	return 0;
}

/* One series: its chain orders compared variants (the first may be its
 * `from`, then the kernel's steps, rising), its patches rise from 1. */
static int read_one_series(struct rd *x, struct result_set *rs, const struct json_doc *o)
{
	static const char *const known[] = { "kernel", "chain", "patches", NULL };
	static const char *const pknown[] = { "number", "subject", NULL };
	_cleanup_strv_ struct strv chain = STRV_INIT;
	const struct json_doc *pa;
	const char *kernel = NULL;
	struct result_series *s;
	unsigned last = 0;

	if (object(x, o, known) < 0 || member_string(x, o, "kernel", false, &kernel) < 0 ||
	    strings(x, o, "chain", true, true, &chain) < 0 || member(x, o, "patches", JSON_DOC_ARRAY, false, &pa) < 0)
		return -EINVAL;
	if (!str_is_variant_name(kernel) || strchr(kernel, '@'))
		return bad(x, "'%s' is not a kernel name", kernel);
	if (chain.n < 2)
		return bad(x, "a chain of %zu variants: a series orders 2 or more", chain.n);
	for (size_t i = 0; i < chain.n; i++) {
		unsigned k = result_series_step_of(kernel, chain.v[i]);

		if (strv_index(&rs->variants, chain.v[i]) < 0)
			return bad(x, "chain[%zu]: '%s' is not one of the run's variants", i, chain.v[i]);
		if (i && !k)
			return bad(x, "chain[%zu]: '%s' is not a step of '%s'", i, chain.v[i], kernel);
		if (i && k <= last)
			return bad(x, "chain[%zu]: step %u after step %u: steps rise", i, k, last);
		last = k;
	}
	s = result_add_series(rs, kernel);
	for (size_t i = 0; i < chain.n; i++)
		result_series_add_step(s, chain.v[i], result_series_step_of(kernel, chain.v[i]));
	last = 0;
	for (size_t i = 0; i < json_doc_array_size(pa); i++) {
		const struct json_doc *p = json_doc_array_get(pa, i);
		unsigned long long n = 0;
		const char *subject = NULL;

		if (object(x, p, pknown) < 0 || member_uint(x, p, "number", 999, &n) < 0 ||
		    member_string(x, p, "subject", false, &subject) < 0)
			return -EINVAL;
		if (n <= last)
			return bad(x, "patches[%zu]: number %llu after %u: numbers rise from 1", i, n, last);
		last = (unsigned)n;
		result_series_add_patch(s, last, subject);
	}
	return 0;
}

/* "series": absent in runs stored before series were recorded, and in runs without one. */
static int read_series(struct rd *x, struct result_set *rs, const struct json_doc *top)
{
	const struct json_doc *a;

	if (!json_doc_get(top, "series"))
		return 0;
	if (member(x, top, "series", JSON_DOC_ARRAY, false, &a) < 0)
		return -EINVAL;
	for (size_t i = 0; i < json_doc_array_size(a); i++)
		if (read_one_series(x, rs, element(x, a, "series", i)) < 0)
			return -EINVAL;
	*x->where = '\0';
	return 0;
}

/* The arrays of objects: expect, observe, runs (after variants: runs are checked against them). */
static int read_lists(struct rd *x, struct result_set *rs, const struct json_doc *top)
{
	_cleanup_strmap_ struct strmap ids = STRMAP_INIT;
	const struct json_doc *ex, *ob, *ru;

	if (member(x, top, "expect", JSON_DOC_ARRAY, false, &ex) < 0 ||
	    member(x, top, "observe", JSON_DOC_ARRAY, false, &ob) < 0 ||
	    member(x, top, "runs", JSON_DOC_ARRAY, false, &ru) < 0)
		return -EINVAL;
	for (size_t i = 0; i < json_doc_array_size(ex); i++)
		if (read_expect(x, rs, element(x, ex, "expect", i)) < 0)
			return -EINVAL;
	for (size_t i = 0; i < json_doc_array_size(ob); i++)
		if (read_observe(x, rs, element(x, ob, "observe", i)) < 0)
			return -EINVAL;
	for (size_t i = 0; i < json_doc_array_size(ru); i++)
		if (read_run(x, rs, &ids, element(x, ru, "runs", i)) < 0)
			return -EINVAL;
	*x->where = '\0';
	return 0;
}

int store_parse(const char *id, const char *text, size_t len, const char *file, struct result_set **ret,
		struct diags *d)
{
	static const char *const known[] = { "format", "experiment", "variants", "mechanism", "cluster", "timing",
					     "decide", "expect", "observe", "series", "fingerprints", "runs", NULL };
	static const char *const timings[] = { "host", "icount" };
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_free_ char *err = NULL;
	struct rd x = { .file = file, .d = d };
	struct pos pos = { .file = file };
	unsigned long long format = 0;
	const char *experiment = NULL;
	unsigned timing = 0;

	if (!str_is_name(id))
		return bad(&x, "'%s' is not a run id", id);
	if (json_doc_parse_at(text, len, &doc, &pos.line, &pos.col, &err) < 0) {
		diags_add(d, &pos, "%s", err);
		return -EINVAL;
	}
	if (object(&x, (const struct json_doc *)doc, known) < 0 ||
	    member_uint(&x, doc, "format", UINT_MAX, &format) < 0)
		return -EINVAL;
	if (format != STORE_FORMAT)
		return bad(&x, "format %llu: this lab reads format %d (a newer lab wrote it?)", format, STORE_FORMAT);
	if (member_string(&x, doc, "experiment", false, &experiment) < 0)
		return -EINVAL;
	/* a run stored before timing: was recorded ran under host timing */
	if (json_doc_get(doc, "timing") &&
	    member_enum(&x, doc, "timing", timings, ELEMENTSOF(timings), "host or icount", &timing) < 0)
		return -EINVAL;
	rs = result_set_new(id, experiment);
	rs->icount = timing == 1;
	if (strings(&x, doc, "variants", true, true, &rs->variants) < 0 ||
	    strings(&x, doc, "mechanism", false, false, &rs->mechanism) < 0 ||
	    (json_doc_get(doc, "cluster") && strings(&x, doc, "cluster", false, false, &rs->cluster) < 0) ||
	    read_decide(&x, rs, doc) < 0 ||
	    read_series(&x, rs, doc) < 0 || read_fingerprints(&x, rs, doc) < 0 ||
	    read_lists(&x, rs, doc) < 0)
		return -EINVAL;
	*ret = TAKE_PTR(rs);
	return 0;
}


/* Every ok run has its metrics file, read into it. */
static int load_all_metrics(const char *dir, struct result_set *rs, const char *shown_file, unsigned first_line,
			    struct diags *d)
{
	for (size_t i = 0; i < rs->n; i++) {
		struct result_run *r = &rs->runs[i];
		int k;

		if (r->status != RUN_OK)
			continue;
		if ((k = store_load_metrics(dir, r, d)) < 0)
			return k;
		if (k == 0) {
			struct pos pos = { .file = shown_file, .line = first_line ? first_line + (unsigned)i : 0 };

			diags_add(d, &pos, "run '%s' is ok but has no metrics file (runs/%s/metrics)", r->id, r->id);
			return -EINVAL;
		}
	}
	return 0;
}

int store_load_as(const char *dir, const char *id, const char *shown, struct result_set **ret, struct diags *d)
{
	_cleanup_free_ char *p = path_join(dir, STORE_FILE), *old = path_join(dir, STORE_V1_JOURNAL);
	_cleanup_free_ char *sp = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_result_set_ struct result_set *rs = NULL;
	unsigned first_line = 0;
	int r;

	if (!shown)
		shown = dir;
	if (access(p, F_OK) < 0 && errno == ENOENT && access(old, F_OK) == 0) {
		/* stored before run.json: read as it is (store_save converts it) */
		if (store_v1_load(dir, id, shown, &rs, &sp, d) < 0)
			return -EINVAL;
		first_line = 2;
	} else {
		struct pos pos;

		sp = path_join(shown, STORE_FILE);
		pos = (struct pos){ .file = sp };
		if ((r = strbuf_read_file(&sb, p, 64 << 20)) < 0) {
			if (r == -ENOENT)
				diags_add(d, &pos, "missing: not a lab run folder");
			else
				diags_add(d, &pos, "cannot read: %s", strerror(-r));
			return r;
		}
		if (store_parse(id, sb.buf ? sb.buf : "", sb.len, sp, &rs, d) < 0)
			return -EINVAL;
	}
	if ((r = load_all_metrics(dir, rs, sp, first_line, d)) < 0)
		return r;
	*ret = TAKE_PTR(rs);
	return 0;
}

int store_load(const char *dir, struct result_set **ret, struct diags *d)
{
	_cleanup_free_ char *id = path_basename(dir);

	return store_load_as(dir, id, NULL, ret, d);
}

/* A run folder: it has run.json, or a journal from before it. */
static bool is_run_folder(const char *dir)
{
	_cleanup_free_ char *j = path_join(dir, STORE_FILE), *o = path_join(dir, STORE_V1_JOURNAL);
	struct stat st;

	return stat(j, &st) == 0 || stat(o, &st) == 0;
}

char *store_find(const char *root, const char *id)
{
	_cleanup_free_ char *p = NULL;

	if (strchr(id, '/')) {
		p = xstrdup(id);
	} else {
		p = path_join(root, id);
	}
	if (!is_run_folder(p))
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
		_cleanup_free_ char *dir = NULL;

		if (!str_is_name(de->d_name))
			continue; /* dot folders (fetches under way) and names lab never makes */
		dir = path_join(root, de->d_name);
		if (is_run_folder(dir))
			strv_push(ret, de->d_name);
	}
	closedir(dh);
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(char *), cmp_str);
	return 0;
}
