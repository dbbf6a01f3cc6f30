/* SPDX-License-Identifier: MIT */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/json.h"
#include "../util/strbuf.h"
#include "../util/strmap.h"
#include "calibrate.h"
#include "decide.h"
#include "stats.h"
#include "../util/banned.h"

/* One metric's values and boots, and the distinct boots in order of appearance. */
struct series {
	double *v;
	const char **boot;
	size_t n, alloc, balloc;
	size_t *which; /* per value: index of its boot */
	size_t nb;
};

static void series_push(struct series *s, double v, const char *boot)
{
	GROW(s->v, s->alloc, s->n + 1);
	GROW(s->boot, s->balloc, s->n + 1);
	s->v[s->n] = v;
	s->boot[s->n++] = boot;
}

/* Each value's boot number; false when a value has no boot. */
static bool number_boots(struct series *s)
{
	struct side all = { s->v, s->boot, s->n };

	s->which = xcalloc(s->n + 1, sizeof(size_t));
	s->nb = decide_boot_index(&all, s->which);
	return s->nb > 0;
}

/* Judges one split (mask: the boots of side b) as two kernels: p < alpha? -1 when untested. */
static int split_positive(const struct series *s, uint64_t mask, const struct decide_params *dp)
{
	_cleanup_free_ double *va = xmalloc((s->n + 1) * sizeof(double)), *vb = xmalloc((s->n + 1) * sizeof(double));
	_cleanup_free_ const char **ba = xmalloc((s->n + 1) * sizeof(char *)), **bb = xmalloc((s->n + 1) * sizeof(char *));
	struct side a = { va, ba, 0 }, b = { vb, bb, 0 };
	struct effect e;

	for (size_t i = 0; i < s->n; i++) {
		if (mask >> s->which[i] & 1) {
			vb[b.n] = s->v[i];
			bb[b.n++] = s->boot[i];
		} else {
			va[a.n] = s->v[i];
			ba[a.n++] = s->boot[i];
		}
	}
	decide_effect(&a, &b, false, dp->method, dp->alpha, dp->power, mask, &e);
	if (!e.tested || isnan(e.p))
		return -1;
	return e.p < dp->alpha;
}

/* The balanced splits with boot 0 on side a (each split once): the share judged p < alpha. */
static double false_positive_rate(const struct series *s, const struct decide_params *dp, unsigned *ret_splits)
{
	size_t half = s->nb / 2, pos = 0, all = 0;
	uint64_t seed = 0x5eed;

	*ret_splits = 0;
	if (s->nb < 4 || s->nb > 62)
		return NAN;
	/* enumerate masks of `half` bits over boots 1..nb-1 (boot 0 stays on side a); sample when too many */
	for (uint64_t mask = 0; mask < (1ULL << s->nb) && all < CALIB_MAX_SPLITS; mask += 2) {
		uint64_t m = mask;

		if (s->nb > 16)
			m = (stats_rand(&seed) & ((1ULL << s->nb) - 1)) & ~1ULL;
		if ((size_t)__builtin_popcountll(m) != half)
			continue;
		int r = split_positive(s, m, dp);

		if (r < 0)
			continue;
		pos += (size_t)r;
		all++;
	}
	*ret_splits = (unsigned)all;
	return all ? (double)pos / (double)all : NAN;
}

static void add_metric(struct calibration *c, const char *group, const char *metric, struct series *s,
		       const struct decide_params *dp, unsigned bps, unsigned rpb)
{
	struct side all = { s->v, s->boot, s->n };
	struct calib_metric *m;
	bool booted = number_boots(s);

	GROW(c->m, c->alloc, c->n + 1);
	m = &c->m[c->n++];
	memset(m, 0, sizeof(*m));
	m->group = xstrdup(group);
	m->metric = xstrdup(metric);
	m->runs = s->n;
	m->boots = booted ? s->nb : 0;
	decide_variance_parts(&all, &m->mean, &m->cv_between, &m->cv_within);
	m->false_positive_rate = booted ? false_positive_rate(s, dp, &m->splits) : NAN;
	if (!bps)
		bps = m->boots / 2;
	if (!rpb)
		rpb = m->boots ? (unsigned)(m->runs / m->boots) : 1;
	m->mde_pct = decide_mde_pct(m->cv_between, m->cv_within, rpb, bps, dp->alpha, dp->power);
}

struct calibration *calibrate_build(const struct result_set *rs, const bool *skip, const struct decide_params *dp,
				    unsigned boots_per_side, unsigned runs_per_boot)
{
	struct calibration *c = xcalloc(1, sizeof(*c));
	_cleanup_strmap_ struct strmap idx = STRMAP_INIT;
	_cleanup_strv_ struct strv keys = STRV_INIT; /* the map's keys live as long as it does */
	struct series *ss = NULL;
	const char **gname = NULL, **mname = NULL;
	size_t ns = 0, salloc = 0, galloc = 0, malloc_ = 0;

	c->alpha = dp->alpha;
	c->power = dp->power;
	c->boots_per_side = boots_per_side;
	c->runs_per_boot = runs_per_boot;
	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];

		if (r->status != RUN_OK || !rs->variants.n || strcmp(r->variant, rs->variants.v[0]) != 0 ||
		    (skip && skip[i]))
			continue;
		for (size_t k = 0; k < r->nm; k++) {
			_cleanup_free_ char *key = xasprintf("%s\n%s", r->group, r->m[k].name);
			size_t at;

			if (!strmap_get(&idx, key, &at)) {
				GROW(ss, salloc, ns + 1);
				GROW(gname, galloc, ns + 1);
				GROW(mname, malloc_, ns + 1);
				memset(&ss[ns], 0, sizeof(ss[ns]));
				gname[ns] = r->group;
				mname[ns] = r->m[k].name;
				strv_push(&keys, key);
				strmap_put(&idx, keys.v[keys.n - 1], ns);
				at = ns++;
			}
			series_push(&ss[at], r->m[k].value, r->boot);
		}
	}
	for (size_t k = 0; k < ns; k++) {
		add_metric(c, gname[k], mname[k], &ss[k], dp, boots_per_side, runs_per_boot);
		free(ss[k].v);
		free(ss[k].boot);
		free(ss[k].which);
	}
	free(ss);
	free(gname);
	free(mname);
	return c;
}

/* The metric's value in run r, or NaN. */
static double metric_of(const struct result_run *r, const char *metric)
{
	for (size_t k = 0; k < r->nm; k++)
		if (streq(r->m[k].name, metric))
			return r->m[k].value;
	return NAN;
}

/* Side `off` (NULL: every monitor on) of job and group: the metric's values and boots. */
static void overhead_side(const struct result_set *rs, const struct calib_run_tag *tags, size_t job,
			  const char *group, const char *off, const char *metric, struct series *s)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct calib_run_tag *t = &tags[i];
		double v;

		if (rs->runs[i].status != RUN_OK || !t->group || t->job != job || !streq(t->group, group) ||
		    !!t->monitor_off != !!off || (off && !streq(t->monitor_off, off)))
			continue;
		if (!isnan(v = metric_of(&rs->runs[i], metric)))
			series_push(s, v, rs->runs[i].boot);
	}
}

static void add_overhead(struct calibration *c, const struct result_set *rs, const struct calib_run_tag *tags,
			 size_t job, const char *group, const char *off, const char *metric,
			 const struct decide_params *dp)
{
	struct series with = { 0 }, without = { 0 };
	struct calib_overhead *o;
	struct effect e;

	overhead_side(rs, tags, job, group, NULL, metric, &with);
	overhead_side(rs, tags, job, group, off, metric, &without);
	if (with.n && without.n) {
		struct side a = { without.v, without.boot, without.n }, b = { with.v, with.boot, with.n };

		decide_effect(&a, &b, false, dp->method, dp->alpha, dp->power, 0x0ee7, &e);
		GROW(c->ov, c->ov_alloc, c->nov + 1);
		o = &c->ov[c->nov++];
		*o = (struct calib_overhead){
			.group = xstrdup(group), .monitor = xstrdup(off), .metric = xstrdup(metric),
			.boots = e.boots[0] > e.boots[1] ? e.boots[0] : e.boots[1], .runs_without = e.runs[0],
			.runs_with = e.runs[1], .mean_without = e.mean[0], .mean_with = e.mean[1],
			.change = e.change, .lo = e.lo, .hi = e.hi, .p = e.tested ? e.p : NAN, .budget_pct = NAN,
		};
	}
	free(with.v);
	free(with.boot);
	free(without.v);
	free(without.boot);
}

void calibrate_overheads(struct calibration *c, const struct result_set *rs, const struct calib_run_tag *tags,
			 calib_keep_fn keep, void *data, const struct decide_params *dp)
{
	_cleanup_strmap_ struct strmap seen = STRMAP_INIT;
	_cleanup_strv_ struct strv keys = STRV_INIT;

	/* each (job, group, monitor, metric) once, in the order the runs without it first show it */
	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *r = &rs->runs[i];
		const struct calib_run_tag *t = &tags[i];

		if (r->status != RUN_OK || !t->group || !t->monitor_off)
			continue;
		for (size_t k = 0; k < r->nm; k++) {
			_cleanup_free_ char *key = NULL;
			size_t at;

			if (keep && !keep(data, r, r->m[k].name))
				continue;
			key = xasprintf("%zu\n%s\n%s\n%s", t->job, t->group, t->monitor_off, r->m[k].name);
			if (strmap_get(&seen, key, &at))
				continue;
			strv_push(&keys, key);
			strmap_put(&seen, keys.v[keys.n - 1], keys.n - 1);
			add_overhead(c, rs, tags, t->job, t->group, t->monitor_off, r->m[k].name, dp);
		}
	}
}

bool calib_overhead_decided(const struct calibration *c, const struct calib_overhead *o)
{
	return isfinite(o->p) && o->p < c->alpha && isfinite(o->change);
}

bool calib_overhead_over_budget(const struct calibration *c, const struct calib_overhead *o)
{
	return calib_overhead_decided(c, o) && isfinite(o->budget_pct) && fabs(o->change) > o->budget_pct;
}

void calib_overhead_figure(const struct calib_overhead *o, struct strbuf *out)
{
	if (!isfinite(o->change)) {
		strbuf_addstr(out, "no figure");
		return;
	}
	strbuf_addf(out, "%+.1f%%", o->change);
	if (isfinite(o->lo) && isfinite(o->hi))
		strbuf_addf(out, " [%+.1f, %+.1f]%%", o->lo, o->hi);
}

void calibration_free(struct calibration *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++) {
		free(c->m[i].group);
		free(c->m[i].metric);
	}
	for (size_t i = 0; i < c->nov; i++) {
		free(c->ov[i].group);
		free(c->ov[i].monitor);
		free(c->ov[i].metric);
	}
	free(c->m);
	free(c->ov);
	free(c);
}

const struct calib_metric *calibration_find(const struct calibration *c, const char *group, const char *metric)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (!strcmp(c->m[i].metric, metric) && (!group || !strcmp(c->m[i].group, group)))
			return &c->m[i];
	return NULL;
}

void calibration_json_metrics(struct json *j, const struct calibration *c)
{
	json_key(j, "metrics");
	json_array_begin(j);
	for (size_t i = 0; i < c->n; i++) {
		const struct calib_metric *m = &c->m[i];

		json_object_begin(j);
		json_kv_string(j, "metric", m->metric);
		json_kv_string(j, "group", m->group);
		json_kv_uint(j, "boots", m->boots);
		json_kv_uint(j, "runs", m->runs);
		json_kv_double(j, "mean", m->mean);
		json_kv_double(j, "cv_between_boots_pct", m->cv_between);
		json_kv_double(j, "cv_within_boot_pct", m->cv_within);
		json_kv_double(j, "false_positive_rate", m->false_positive_rate);
		json_kv_uint(j, "splits", m->splits);
		json_kv_double(j, "mde_pct", m->mde_pct);
		json_object_end(j);
	}
	json_array_end(j);
}

void calibration_json_overheads(struct json *j, const struct calibration *c)
{
	if (!c->nov)
		return;
	json_key(j, "overheads");
	json_array_begin(j);
	for (size_t i = 0; i < c->nov; i++) {
		const struct calib_overhead *o = &c->ov[i];

		json_object_begin(j);
		json_kv_string(j, "group", o->group);
		json_kv_string(j, "monitor", o->monitor);
		json_kv_string(j, "metric", o->metric);
		json_kv_uint(j, "boots", o->boots);
		json_kv_uint(j, "runs_without", o->runs_without);
		json_kv_uint(j, "runs_with", o->runs_with);
		json_kv_double(j, "mean_without", o->mean_without);
		json_kv_double(j, "mean_with", o->mean_with);
		json_kv_double(j, "change_pct", o->change);
		json_kv_double(j, "lo_pct", o->lo);
		json_kv_double(j, "hi_pct", o->hi);
		json_kv_double(j, "p", o->p);
		json_kv_double(j, "budget_pct", o->budget_pct);
		json_key(j, "decided");
		json_bool(j, calib_overhead_decided(c, o));
		json_key(j, "over_budget");
		json_bool(j, calib_overhead_over_budget(c, o));
		json_object_end(j);
	}
	json_array_end(j);
}

static void cell_pct(struct strbuf *out, double v, const char *fmt)
{
	if (isfinite(v))
		strbuf_addf(out, fmt, v);
	else
		strbuf_addf(out, "%9s", "-");
}

void calibration_format_text(const struct calibration *c, struct strbuf *out)
{
	_cleanup_strbuf_ struct strbuf e = STRBUF_INIT;

	strbuf_addf(out, "%5s %5s %9s %9s %9s %9s  %s\n", "boots", "runs", "between%", "within%", "false+",
		    "mde%", "metric [group]");
	for (size_t i = 0; i < c->n; i++) {
		const struct calib_metric *m = &c->m[i];

		strbuf_addf(out, "%5zu %5zu ", m->boots, m->runs);
		cell_pct(out, m->cv_between, "%9.2f");
		strbuf_addch(out, ' ');
		cell_pct(out, m->cv_within, "%9.2f");
		strbuf_addch(out, ' ');
		cell_pct(out, m->false_positive_rate, "%9.3f");
		strbuf_addch(out, ' ');
		cell_pct(out, m->mde_pct, "%9.2f");
		strbuf_reset(&e);
		term_escape(&e, m->metric);
		strbuf_addf(out, "  %s [", e.buf);
		strbuf_reset(&e);
		term_escape(&e, m->group);
		strbuf_addf(out, "%s]\n", e.buf);
	}
	strbuf_addf(out, "between%%, within%%: CV of boot means and of runs within a boot; false+: share of the "
			 "balanced A/A splits of the boots judged p < %g (should be near %g); mde%%: the smallest "
			 "change decidable with %u boots x %u runs a side at power %g\n",
		    c->alpha, c->alpha, c->boots_per_side, c->runs_per_boot, c->power);
	if (!c->nov)
		return;
	strbuf_addf(out, "\nmonitor overheads: each figure with every monitor against the runs of the same boots "
			 "with the one named off (alpha %g)\n",
		    c->alpha);
	for (size_t i = 0; i < c->nov; i++) {
		const struct calib_overhead *o = &c->ov[i];

		strbuf_addstr(out, "  ");
		strbuf_reset(&e);
		term_escape(&e, o->monitor);
		strbuf_addf(out, "%-16s ", e.buf);
		calib_overhead_figure(o, out);
		strbuf_addstr(out, " of ");
		strbuf_reset(&e);
		term_escape(&e, o->metric);
		strbuf_addstr(out, e.buf);
		strbuf_addstr(out, " [");
		strbuf_reset(&e);
		term_escape(&e, o->group);
		strbuf_addf(out, "%s]: %.4g without, %.4g with, %zu boots", e.buf, o->mean_without, o->mean_with,
			    o->boots);
		if (isfinite(o->budget_pct))
			strbuf_addf(out, ", budget %g%%", o->budget_pct);
		strbuf_addstr(out, calib_overhead_over_budget(c, o) ? ": over budget\n"
				   : !calib_overhead_decided(c, o)    ? ": not told from 0\n"
								      : "\n");
	}
}
