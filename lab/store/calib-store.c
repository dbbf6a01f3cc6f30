/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/json-read.h"
#include "../util/json.h"
#include "../util/strv.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../vm/machine.h"
#include "calib-store.h"
#include "../util/banned.h"

#define CALIB_MAX_BYTES (64u << 20)

static char *cpu_model(void)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *p;

	if (strbuf_read_file(&sb, "/proc/cpuinfo", 1 << 20) < 0 || !(p = strstr(sb.buf, "model name")))
		return xstrdup("unknown");
	p = strchr(p, ':');
	if (!p)
		return xstrdup("unknown");
	p += strspn(p + 1, " \t") + 1;
	return xstrndup(p, strcspn(p, "\n"));
}

void calib_host_here(struct calib_host *h)
{
	struct utsname u;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	h->cpu = cpu_model();
	h->kernel = xstrdup(uname(&u) == 0 ? u.release : "unknown");
	h->accel = xstrdup(vm_kvm_usable(NULL) ? "kvm" : "tcg");
	h->cpus = n > 0 ? (unsigned)n : 0;
}

void calib_host_release(struct calib_host *h)
{
	free(h->cpu);
	free(h->kernel);
	free(h->accel);
	memset(h, 0, sizeof(*h));
}

char *calib_host_differs(const struct calib_host *a, const struct calib_host *b)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (strcmp(a->cpu, b->cpu) != 0)
		strbuf_addf(&sb, "CPU %s, here %s; ", a->cpu, b->cpu);
	if (a->cpus != b->cpus)
		strbuf_addf(&sb, "%u CPUs, here %u; ", a->cpus, b->cpus);
	if (strcmp(a->accel, b->accel) != 0)
		strbuf_addf(&sb, "%s, here %s; ", a->accel, b->accel);
	if (strcmp(a->kernel, b->kernel) != 0)
		strbuf_addf(&sb, "host kernel %s, here %s; ", a->kernel, b->kernel);
	if (!sb.len)
		return NULL;
	strbuf_setlen(&sb, sb.len - 2);
	return strbuf_detach(&sb, NULL);
}

void calib_record_release(struct calib_record *r)
{
	free(r->experiment);
	free(r->date);
	calib_host_release(&r->host);
	calibration_free(r->c);
	memset(r, 0, sizeof(*r));
}

char *calib_path(const char *root, const char *experiment)
{
	return xasprintf("%s/calibration/%s.json", root, experiment);
}

void calib_format_json(const struct calib_record *r, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_string(&j, "experiment", r->experiment);
	json_kv_string(&j, "date", r->date);
	json_key(&j, "host");
	json_object_begin(&j);
	json_kv_string(&j, "cpu", r->host.cpu);
	json_kv_uint(&j, "cpus", r->host.cpus);
	json_kv_string(&j, "kernel", r->host.kernel);
	json_kv_string(&j, "accel", r->host.accel);
	json_object_end(&j);
	json_kv_double(&j, "seconds_per_run", isfinite(r->seconds_per_run) ? r->seconds_per_run : 0);
	json_kv_double(&j, "alpha", r->c->alpha);
	json_kv_double(&j, "power", r->c->power);
	json_kv_uint(&j, "boots_per_side", r->c->boots_per_side);
	json_kv_uint(&j, "runs_per_boot", r->c->runs_per_boot);
	calibration_json_metrics(&j, r->c);
	calibration_json_overheads(&j, r->c);
	json_object_end(&j);
	json_finish(&j);
}

int calib_save(const char *root, const struct calib_record *r, char **ret_err)
{
	_cleanup_free_ char *dir = xasprintf("%s/calibration", root), *path = calib_path(root, r->experiment);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e;

	calib_format_json(r, &sb);
	if ((e = path_mkdir_p(dir, 0755)) < 0 || (e = fs_write_atomic(path, sb.buf, sb.len, 0644)) < 0) {
		*ret_err = xasprintf("cannot write %s: %s", path, strerror(-e));
		return e;
	}
	return 0;
}

static int read_metric(struct json_reader *r, const struct json_doc *o, struct calibration *c)
{
	struct calib_metric m = { 0 };
	size_t splits = 0;
	int e = 0;

	if (!o || json_doc_type(o) != JSON_DOC_OBJECT)
		return json_reader_bad(r, "has an element that is not an object", "metrics");
	if (json_reader_string(r, o, "metric", &m.metric) < 0 || json_reader_string(r, o, "group", &m.group) < 0 ||
	    json_reader_uint(r, o, "boots", 1000000, &m.boots) < 0 || json_reader_uint(r, o, "runs", 100000000, &m.runs) < 0 ||
	    json_reader_uint(r, o, "splits", 1000000, &splits) < 0 ||
	    json_reader_num(r, o, "mean", -HUGE_VAL, HUGE_VAL, true, &m.mean) < 0 ||
	    json_reader_num(r, o, "cv_between_boots_pct", 0, HUGE_VAL, true, &m.cv_between) < 0 ||
	    json_reader_num(r, o, "cv_within_boot_pct", 0, HUGE_VAL, true, &m.cv_within) < 0 ||
	    json_reader_num(r, o, "false_positive_rate", 0, 1, true, &m.false_positive_rate) < 0 ||
	    json_reader_num(r, o, "mde_pct", 0, HUGE_VAL, true, &m.mde_pct) < 0)
		e = -EINVAL;
	m.splits = (unsigned)splits;
	GROW(c->m, c->alloc, c->n + 1);
	c->m[c->n++] = m;
	return e;
}

static int read_overhead(struct json_reader *r, const struct json_doc *o, struct calibration *c)
{
	struct calib_overhead ov = { 0 };
	int e = 0;

	if (!o || json_doc_type(o) != JSON_DOC_OBJECT)
		return json_reader_bad(r, "has an element that is not an object", "overheads");
	if (json_reader_string(r, o, "group", &ov.group) < 0 || json_reader_string(r, o, "monitor", &ov.monitor) < 0 ||
	    json_reader_string(r, o, "metric", &ov.metric) < 0 || json_reader_uint(r, o, "boots", 1000000, &ov.boots) < 0 ||
	    json_reader_uint(r, o, "runs_without", 100000000, &ov.runs_without) < 0 ||
	    json_reader_uint(r, o, "runs_with", 100000000, &ov.runs_with) < 0 ||
	    json_reader_num(r, o, "mean_without", -HUGE_VAL, HUGE_VAL, true, &ov.mean_without) < 0 ||
	    json_reader_num(r, o, "mean_with", -HUGE_VAL, HUGE_VAL, true, &ov.mean_with) < 0 ||
	    json_reader_num(r, o, "change_pct", -HUGE_VAL, HUGE_VAL, true, &ov.change) < 0 ||
	    json_reader_num(r, o, "lo_pct", -HUGE_VAL, HUGE_VAL, true, &ov.lo) < 0 ||
	    json_reader_num(r, o, "hi_pct", -HUGE_VAL, HUGE_VAL, true, &ov.hi) < 0 ||
	    json_reader_num(r, o, "p", 0, 1, true, &ov.p) < 0 ||
	    json_reader_num(r, o, "budget_pct", 0, HUGE_VAL, true, &ov.budget_pct) < 0)
		e = -EINVAL;
	GROW(c->ov, c->ov_alloc, c->nov + 1);
	c->ov[c->nov++] = ov;
	return e;
}

static int read_record(struct json_reader *r, const struct json_doc *doc, struct calib_record *rec)
{
	const struct json_doc *h = json_doc_get(doc, "host"), *ms = json_doc_get(doc, "metrics"),
			      *ov = json_doc_get(doc, "overheads");
	size_t cpus = 0, bps = 0, rpb = 0;
	struct calibration *c = xcalloc(1, sizeof(*c));

	rec->c = c;
	if (json_reader_string(r, doc, "experiment", &rec->experiment) < 0 || json_reader_string(r, doc, "date", &rec->date) < 0 ||
	    json_reader_num(r, doc, "seconds_per_run", 0, 1e9, false, &rec->seconds_per_run) < 0 ||
	    json_reader_num(r, doc, "alpha", 1e-9, 0.5, false, &c->alpha) < 0 ||
	    json_reader_num(r, doc, "power", 0.01, 0.9999, false, &c->power) < 0 ||
	    json_reader_uint(r, doc, "boots_per_side", 1000000, &bps) < 0 || json_reader_uint(r, doc, "runs_per_boot", 1000000, &rpb) < 0)
		return -EINVAL;
	c->boots_per_side = (unsigned)bps;
	c->runs_per_boot = (unsigned)rpb;
	if (!h || json_doc_type(h) != JSON_DOC_OBJECT)
		return json_reader_bad(r, "is missing or not an object", "host");
	if (json_reader_string(r, h, "cpu", &rec->host.cpu) < 0 || json_reader_string(r, h, "kernel", &rec->host.kernel) < 0 ||
	    json_reader_string(r, h, "accel", &rec->host.accel) < 0 || json_reader_uint(r, h, "cpus", 1 << 20, &cpus) < 0)
		return -EINVAL;
	rec->host.cpus = (unsigned)cpus;
	if (!ms || json_doc_type(ms) != JSON_DOC_ARRAY)
		return json_reader_bad(r, "is missing or not an array", "metrics");
	for (size_t i = 0; i < json_doc_array_size(ms); i++)
		if (read_metric(r, json_doc_array_get(ms, i), c) < 0)
			return -EINVAL;
	/* lab calibrate --monitors: absent from the others and from records made before it */
	if (!ov)
		return 0;
	if (json_doc_type(ov) != JSON_DOC_ARRAY)
		return json_reader_bad(r, "is not an array", "overheads");
	for (size_t i = 0; i < json_doc_array_size(ov); i++)
		if (read_overhead(r, json_doc_array_get(ov, i), c) < 0)
			return -EINVAL;
	return 0;
}

int calib_load(const char *root, const char *experiment, struct calib_record *rec, char **ret_err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int e;

	memset(rec, 0, sizeof(*rec));
	/* a stored run's experiment name is hostile: one that is no name lab.yaml
	 * accepts has no calibration, and never becomes a path */
	if (!str_is_name(experiment))
		return -ENOENT;
	path = calib_path(root, experiment);
	if ((e = strbuf_read_file(&sb, path, CALIB_MAX_BYTES)) < 0) {
		if (e != -ENOENT)
			*ret_err = xasprintf("cannot read %s: %s", path, strerror(-e));
		return e;
	}
	return calib_parse(path, sb.buf, sb.len, experiment, rec, ret_err);
}

int calib_parse(const char *path, const char *text, size_t len, const char *experiment, struct calib_record *rec,
		char **ret_err)
{
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	struct json_reader r = { .path = path };

	memset(rec, 0, sizeof(*rec));
	if (json_doc_parse_file(path, text, len, &doc, ret_err) < 0)
		return -EINVAL;
	if (read_record(&r, doc, rec) < 0 || (strcmp(rec->experiment, experiment) != 0 &&
					      json_reader_bad(&r, "names another experiment", "experiment") < 0)) {
		*ret_err = r.err ? r.err : xasprintf("%s: malformed", path);
		calib_record_release(rec);
		return -EINVAL;
	}
	return 0;
}
