/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/json.h"
#include "result.h"
#include "../util/banned.h"

struct result_set *result_set_new(const char *id, const char *experiment)
{
	struct result_set *rs = xcalloc(1, sizeof(*rs));

	rs->id = xstrdup(id);
	rs->experiment = xstrdup(experiment);
	rs->decide = DECIDE_PARAMS_DEFAULT;
	return rs;
}

static void run_release(struct result_run *r)
{
	free(r->id);
	free(r->variant);
	free(r->group);
	free(r->release);
	free(r->error);
	free(r->boot);
	free(r->guest);
	free(r->node);
	free(r->m);
}

size_t result_drop_runs(struct result_set *rs, const bool *drop)
{
	size_t k = 0;

	for (size_t i = 0; i < rs->n; i++) {
		if (drop[i]) {
			run_release(&rs->runs[i]);
			continue;
		}
		if (k != i)
			rs->runs[k] = rs->runs[i];
		k++;
	}
	size_t dropped = rs->n - k;

	rs->n = k;
	return dropped;
}

void result_set_free(struct result_set *rs)
{
	if (!rs)
		return;
	for (size_t i = 0; i < rs->n; i++)
		run_release(&rs->runs[i]);
	for (size_t i = 0; i < rs->nexpect; i++)
		free(rs->expect[i].metric);
	free(rs->expect);
	free(rs->runs);
	strv_release(&rs->variants);
	strmap_release(&rs->name_index);
	strv_release(&rs->names);
	strv_release(&rs->mechanism);
	strv_release(&rs->cluster);
	for (size_t i = 0; i < rs->nobserve; i++) {
		free(rs->observe[i].metric);
		free(rs->observe[i].says);
		strv_release(&rs->observe[i].kernels);
	}
	free(rs->observe);
	for (size_t i = 0; i < rs->nseries; i++) {
		struct result_series *x = &rs->series[i];

		free(x->kernel);
		strv_release(&x->chain);
		free(x->steps);
		for (size_t k = 0; k < x->npatches; k++)
			free(x->patches[k].subject);
		free(x->patches);
	}
	free(rs->series);
	for (size_t i = 0; i < rs->nfps; i++)
		fingerprint_release(&rs->fps[i]);
	free(rs->fps);
	free(rs->id);
	free(rs->experiment);
	free(rs);
}

struct result_series *result_add_series(struct result_set *rs, const char *kernel)
{
	struct result_series *s;

	rs->series = xrealloc(rs->series, (rs->nseries + 1) * sizeof(*rs->series));
	s = &rs->series[rs->nseries++];
	memset(s, 0, sizeof(*s));
	s->kernel = xstrdup(kernel);
	return s;
}

void result_series_add_step(struct result_series *s, const char *variant, unsigned step)
{
	s->steps = xrealloc(s->steps, (s->chain.n + 1) * sizeof(*s->steps));
	s->steps[s->chain.n] = step;
	strv_push(&s->chain, variant);
}

void result_series_add_patch(struct result_series *s, unsigned number, const char *subject)
{
	s->patches = xrealloc(s->patches, (s->npatches + 1) * sizeof(*s->patches));
	s->patches[s->npatches].number = number;
	s->patches[s->npatches++].subject = xstrdup(subject);
}

const char *result_series_subject(const struct result_series *s, unsigned number)
{
	for (size_t i = 0; i < s->npatches; i++)
		if (s->patches[i].number == number)
			return s->patches[i].subject;
	return NULL;
}

unsigned result_series_step_of(const char *kernel, const char *variant)
{
	size_t n = strlen(kernel);
	unsigned long v = 0;
	const char *p;

	if (strncmp(variant, kernel, n) || variant[n] != '@' || !variant[n + 1] || variant[n + 1] == '0')
		return 0;
	for (p = variant + n + 1; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000)
			return 0;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	return (unsigned)v;
}

static const char *const rel_names[] = { "==", "<", "<=", ">", ">=", "higher", "lower", "differs", "same" };

const char *observe_rel_name(enum observe_rel r)
{
	return r < ELEMENTSOF(rel_names) ? rel_names[r] : "?";
}

int observe_rel_from_name(const char *s, enum observe_rel *ret)
{
	for (size_t i = 0; i < ELEMENTSOF(rel_names); i++)
		if (streq(s, rel_names[i])) {
			*ret = (enum observe_rel)i;
			return 0;
		}
	return -EINVAL;
}

char *observe_describe(const struct result_observe *o)
{
	if (o->rel <= OBS_GE)
		return xasprintf("%s %g", rel_names[o->rel], o->value);
	if (o->rel == OBS_DIFFERS)
		return xstrdup("differs from the baseline");
	if (o->rel == OBS_SAME)
		return xstrdup("same as the baseline");
	return xasprintf("%s than the baseline", rel_names[o->rel]);
}

void result_add_observe(struct result_set *rs, const char *metric, enum observe_rel rel, double value,
			const struct strv *kernels, const char *says)
{
	struct result_observe *o;

	rs->observe = xrealloc(rs->observe, (rs->nobserve + 1) * sizeof(*rs->observe));
	o = &rs->observe[rs->nobserve++];
	memset(o, 0, sizeof(*o));
	o->metric = xstrdup(metric);
	o->rel = rel;
	o->value = value;
	for (size_t i = 0; kernels && i < kernels->n; i++)
		strv_push(&o->kernels, kernels->v[i]);
	o->says = says ? xstrdup(says) : NULL;
}

struct result_run *result_add_run(struct result_set *rs, const char *id, const char *variant,
				  const char *group, size_t job, unsigned repeat)
{
	struct result_run *r;

	GROW(rs->runs, rs->alloc, rs->n + 1);
	r = &rs->runs[rs->n++];
	memset(r, 0, sizeof(*r));
	r->id = xstrdup(id);
	r->variant = xstrdup(variant);
	r->group = xstrdup(group);
	r->job = job;
	r->repeat = repeat;
	r->set = rs;
	r->fp = -1;
	if (!strv_contains(&rs->variants, variant))
		strv_push(&rs->variants, variant);
	return r;
}

int result_add_fingerprint(struct result_set *rs, const struct fingerprint *fp)
{
	for (size_t i = 0; i < rs->nfps; i++)
		if (fingerprint_equal(&rs->fps[i], fp))
			return (int)i;
	GROW(rs->fps, rs->fps_alloc, rs->nfps + 1);
	fingerprint_copy(&rs->fps[rs->nfps], fp);
	return (int)rs->nfps++;
}

const struct fingerprint *result_run_fingerprint(const struct result_run *r)
{
	return r->fp >= 0 && (size_t)r->fp < r->set->nfps ? &r->set->fps[r->fp] : NULL;
}

const char *result_intern(struct result_set *rs, const char *name)
{
	size_t at;

	if (strmap_get(&rs->name_index, name, &at))
		return rs->names.v[at];
	strv_push(&rs->names, name);
	strmap_put(&rs->name_index, rs->names.v[rs->names.n - 1], rs->names.n - 1);
	return rs->names.v[rs->names.n - 1];
}

void result_add_metric(struct result_run *r, const char *name, double value)
{
	GROW(r->m, r->alloc, r->nm + 1);
	r->m[r->nm].name = result_intern(r->set, name);
	r->m[r->nm++].value = value;
}

void result_add_expect(struct result_set *rs, size_t job, const char *metric, enum expect_direction dir,
		       double effect, bool has_effect)
{
	struct result_expect *e;

	GROW(rs->expect, rs->expect_alloc, rs->nexpect + 1);
	e = &rs->expect[rs->nexpect++];
	e->job = job;
	e->metric = xstrdup(metric);
	e->dir = dir;
	e->effect = effect;
	e->has_effect = has_effect;
	e->method = -1;
}

static const char *const status_names[] = { [RUN_PENDING] = "pending", [RUN_OK] = "ok", [RUN_FAILED] = "failed" };

const char *run_status_name(enum run_status s)
{
	return status_names[s];
}

int run_status_from_name(const char *s, enum run_status *ret)
{
	for (size_t i = 0; i < ELEMENTSOF(status_names); i++)
		if (streq(s, status_names[i])) {
			*ret = i;
			return 0;
		}
	return -EINVAL;
}

int result_parse_metrics(struct result_run *r, const char *text, char **err)
{
	size_t lineno = 0;

	for (const char *p = text; *p;) {
		const char *eol = strchrnul(p, '\n');
		_cleanup_free_ char *line = xstrndup(p, eol - p);
		char *sp, *end;
		double v;

		lineno++;
		p = *eol ? eol + 1 : eol;
		if (!*line)
			continue;
		sp = strchr(line, ' ');
		if (!sp || sp == line || strchr(sp + 1, ' ')) {
			*err = xasprintf("line %zu: not a 'metric value' line: '%s'", lineno, line);
			return -EINVAL;
		}
		*sp = '\0';
		errno = 0;
		v = strtod(sp + 1, &end);
		if (errno || *end || end == sp + 1 || !isfinite(v)) {
			*err = xasprintf("line %zu: '%s' is not a finite number (metric %s)", lineno, sp + 1, line);
			return -EINVAL;
		}
		result_add_metric(r, line, v);
	}
	return 0;
}

void result_run_json(struct json *j, const struct result_run *r)
{
	json_object_begin(j);
	json_kv_string(j, "id", r->id);
	json_kv_string(j, "status", run_status_name(r->status));
	json_kv_string(j, "variant", r->variant);
	json_kv_uint(j, "job", r->job);
	json_kv_uint(j, "repeat", r->repeat);
	json_kv_string(j, "group", r->group);
	json_kv_string(j, "release", r->release);
	json_kv_string(j, "error", r->error);
	json_kv_string(j, "boot", r->boot);
	json_kv_uint(j, "boot_pos", r->boot_pos);
	json_kv_string(j, "guest", r->guest);
	if (r->node) /* only runs a cluster node ran */
		json_kv_string(j, "node", r->node);
	if (r->fp >= 0) /* runs stored before fingerprints, and runs that never booted, have none */
		json_kv_uint(j, "fingerprint", (unsigned)r->fp);
	json_object_end(j);
}
