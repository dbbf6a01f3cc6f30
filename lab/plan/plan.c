/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/strbuf.h"
#include "../util/strmap.h"
#include "../util/strv.h"
#include "../util/table.h"
#include "plan.h"
#include "../util/banned.h"

/* Parameters of one matrix cell: catalogue order, defaults filled in. */
static void fill_params(const struct spec *s, const struct spec_job *job, const size_t *pick,
			struct plan_run *r)
{
	const struct catalogue_entry *w = spec_find_catalogue(s, job->workload.name, false);
	size_t n = (w ? w->nparams : 0) + job->nparams;

	r->params = xcalloc(n, sizeof(*r->params));
	for (size_t i = 0; w && i < w->nparams; i++) {
		struct plan_param *pp = &r->params[r->nparams++];

		pp->key = xstrdup(w->params[i].name);
		pp->value = xstrdup(w->params[i].def ? w->params[i].def : "");
		pp->is_default = true;
	}
	for (size_t i = 0; i < job->nparams; i++) {
		const struct spec_param *sp = &job->params[i];
		struct plan_param *pp = NULL;

		for (size_t j = 0; j < r->nparams; j++)
			if (streq(r->params[j].key, sp->key))
				pp = &r->params[j];
		if (!pp) {
			pp = &r->params[r->nparams++];
			pp->key = xstrdup(sp->key);
		} else {
			free(pp->value);
		}
		pp->value = xstrdup(sp->values[pick[i]]);
		pp->is_default = false;
	}
}

unsigned plan_repeats(const struct spec_experiment *e)
{
	unsigned hosts = e->hosts.n ? (unsigned)e->hosts.n : 1;

	if (e->repeat_auto)
		return e->decide.max_boots * e->decide.runs_per_boot * hosts;
	return e->repeat;
}

/* The boot of its variant a repetition belongs to, 1-based. */
static unsigned boot_of(const struct spec_experiment *e, unsigned rep)
{
	unsigned hosts = e->hosts.n ? (unsigned)e->hosts.n : 1, k = (rep - 1) / hosts;
	unsigned boots = e->decide.min_boots ? e->decide.min_boots : 2;

	if (e->boot == BOOT_PER_RUN)
		return k + 1;
	if (e->repeat_auto)
		return k / (e->decide.runs_per_boot ? e->decide.runs_per_boot : 1) + 1;
	return k % boots + 1;
}

/* A run of job j's matrix cell pick, with all its monitors but `off` (NULL: all). */
static void add_run(const struct spec *s, const struct spec_experiment *e, struct plan *p, size_t *seq, size_t j,
		    const size_t *pick, const char *kernel, unsigned rep, unsigned boot, const char *off)
{
	const struct spec_job *job = &e->jobs[j];
	struct plan_run *r;

	GROW(p->runs, p->alloc, p->n + 1);
	r = &p->runs[p->n++];
	memset(r, 0, sizeof(*r));
	r->id = xasprintf("%s.%04zu", e->name, ++*seq);
	r->experiment = e->name;
	r->kernel = xstrdup(kernel);
	r->topology = e->topology.name;
	r->image = e->image.name;
	r->host = e->hosts.n ? e->hosts.v[(rep - 1) % e->hosts.n].name : "local";
	r->workload = job->workload.name;
	r->job = j;
	r->repeat = rep;
	r->boot = boot;
	r->monitor_off = off ? xstrdup(off) : NULL;
	for (size_t m = 0; m < e->monitors.n; m++)
		if (!off || !streq(e->monitors.v[m].name, off))
			strv_push(&r->monitors, e->monitors.v[m].name);
	for (size_t m = 0; m < job->monitors.n; m++)
		if (!strv_contains(&r->monitors, job->monitors.v[m].name) && (!off || !streq(job->monitors.v[m].name, off)))
			strv_push(&r->monitors, job->monitors.v[m].name);
	fill_params(s, job, pick, r);
}

static void add_runs(const struct spec *s, const struct spec_experiment *e, struct plan *p, size_t *seq)
{
	_cleanup_strv_ struct strv variants = STRV_INIT;
	unsigned reps = plan_repeats(e);

	spec_experiment_variants(s, e, &variants);
	for (size_t j = 0; j < e->njobs; j++) {
		const struct spec_job *job = &e->jobs[j];
		_cleanup_free_ size_t *pick = xcalloc(job->nparams + 1, sizeof(size_t));

		for (;;) {
			for (unsigned rep = 1; rep <= reps; rep++) {
				unsigned boot = boot_of(e, rep);

				for (size_t k = 0; k < variants.n; k++) {
					/* every other boot in the other order: A B, B A, A B ... */
					size_t v = boot % 2 ? k : variants.n - 1 - k;
					size_t with = p->n;

					add_run(s, e, p, seq, j, pick, variants.v[v], rep, boot, NULL);
					for (size_t m = 0; e->monitors_off && m < p->runs[with].monitors.n; m++)
						add_run(s, e, p, seq, j, pick, variants.v[v], rep, boot,
							p->runs[with].monitors.v[m]);
				}
			}
			/* next matrix cell: the last parameter varies fastest */
			size_t k = job->nparams;

			while (k > 0) {
				if (++pick[k - 1] < job->params[k - 1].nvalues)
					break;
				pick[k - 1] = 0;
				k--;
			}
			if (k == 0)
				break;
		}
	}
}

char *plan_run_group(const struct plan_run *pr)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, pr->workload);
	for (size_t i = 0; i < pr->nparams; i++)
		if (!pr->params[i].is_default)
			strbuf_addf(&sb, " %s=%s", pr->params[i].key, pr->params[i].value);
	if (pr->monitor_off)
		strbuf_addf(&sb, " without=%s", pr->monitor_off);
	return strbuf_detach(&sb, NULL);
}

/*
 * Runs are grouped for comparison by workload and parameters (and the
 * monitor a calibration turned off): two jobs of one experiment that run
 * the same workload with the same parameters would share a group, and one
 * job's expectations would judge the other's runs. Refused, naming both.
 */
static void check_groups(const struct spec_experiment *e, const struct plan *p, size_t from, struct diags *d)
{
	_cleanup_strv_ struct strv keys = STRV_INIT;
	_cleanup_strmap_ struct strmap job_of = STRMAP_INIT;
	_cleanup_free_ bool *said = xcalloc(e->njobs * e->njobs + 1, sizeof(bool));

	for (size_t i = from; i < p->n; i++)
		strv_push_take(&keys, plan_run_group(&p->runs[i]));
	for (size_t i = 0; i < keys.n; i++) {
		const struct plan_run *r = &p->runs[from + i];
		size_t j;

		if (!strmap_get(&job_of, keys.v[i], &j)) {
			strmap_put(&job_of, keys.v[i], r->job);
			continue;
		}
		if (j == r->job || said[j * e->njobs + r->job])
			continue;
		said[j * e->njobs + r->job] = true;
		diags_add(d, &e->jobs[r->job].pos,
			  "experiment '%s': jobs %zu and %zu both run '%s' with the same parameters, so their runs would "
			  "be compared as one group; give one of them a parameter of its own",
			  e->name, j + 1, r->job + 1, r->workload);
	}
}

int plan_build(const struct spec *s, const struct strv *only, struct plan **ret, struct diags *d)
{
	_cleanup_plan_ struct plan *p = xcalloc(1, sizeof(*p));
	size_t before = d->n;

	if (only && only->n) {
		_cleanup_free_ const char **names = xcalloc(s->nexperiments + 1, sizeof(char *));

		for (size_t i = 0; i < s->nexperiments; i++)
			names[i] = s->experiments[i].name;
		for (size_t i = 0; i < only->n; i++) {
			const struct spec_experiment *e = spec_find_experiment(s, only->v[i]);
			struct pos pos = { .file = s->path };

			if (e) {
				size_t seq = 0, from = p->n;

				add_runs(s, e, p, &seq);
				check_groups(e, p, from, d);
				continue;
			}
			const char *hint = str_suggest(only->v[i], names, s->nexperiments);

			if (hint)
				diags_add(d, &pos, "no experiment '%s' (did you mean '%s'?)", only->v[i], hint);
			else
				diags_add(d, &pos, "no experiment '%s'", only->v[i]);
		}
	} else {
		for (size_t i = 0; i < s->nexperiments; i++) {
			size_t seq = 0, from = p->n;

			add_runs(s, &s->experiments[i], p, &seq);
			check_groups(&s->experiments[i], p, from, d);
		}
	}
	if (d->n != before)
		return -EINVAL;
	*ret = TAKE_PTR(p);
	return 0;
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct plan_run *r = &p->runs[i];

		free(r->id);
		free(r->kernel);
		free(r->monitor_off);
		for (size_t j = 0; j < r->nparams; j++) {
			free(r->params[j].key);
			free(r->params[j].value);
		}
		free(r->params);
		strv_release(&r->monitors);
	}
	free(p->runs);
	free(p);
}

void plan_format_text(const struct plan *p, struct strbuf *out)
{
	static const char *const cols[] = { "ID:id", "KERNEL:kernel", "TOPOLOGY:topology", "HOST:host",
					    "WORKLOAD:workload", "REPEAT:repeat", "BOOT:boot", "PARAMS:params", NULL };
	_cleanup_table_ struct table *t = table_new(cols);

	for (size_t i = 0; i < p->n; i++) {
		const struct plan_run *r = &p->runs[i];
		_cleanup_strbuf_ struct strbuf params = STRBUF_INIT;

		for (size_t j = 0; j < r->nparams; j++) {
			if (r->params[j].is_default)
				continue; /* text shows what lab.yaml set; --json has every value */
			strbuf_addf(&params, "%s%s=%s", params.len ? " " : "", r->params[j].key, r->params[j].value);
		}
		if (r->monitor_off)
			strbuf_addf(&params, "%swithout=%s", params.len ? " " : "", r->monitor_off);
		table_add_string(t, r->id);
		table_add_string(t, r->kernel);
		table_add_string(t, r->topology);
		table_add_string(t, r->host);
		table_add_string(t, r->workload);
		table_add_uint(t, r->repeat);
		table_add_uint(t, r->boot);
		table_add_string(t, params.len ? params.buf : NULL);
	}
	table_format_text(t, out);
}

void plan_format_json(const struct plan *p, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_array_begin(&j);
	for (size_t i = 0; i < p->n; i++) {
		const struct plan_run *r = &p->runs[i];

		json_object_begin(&j);
		json_kv_string(&j, "id", r->id);
		json_kv_string(&j, "experiment", r->experiment);
		json_kv_string(&j, "kernel", r->kernel);
		json_kv_string(&j, "topology", r->topology);
		json_kv_string(&j, "image", r->image);
		json_kv_string(&j, "host", r->host);
		json_kv_string(&j, "workload", r->workload);
		json_key(&j, "params");
		json_object_begin(&j);
		for (size_t k = 0; k < r->nparams; k++)
			json_kv_string(&j, r->params[k].key, r->params[k].value);
		json_object_end(&j);
		json_key(&j, "monitors");
		json_array_begin(&j);
		for (size_t k = 0; k < r->monitors.n; k++)
			json_string(&j, r->monitors.v[k]);
		json_array_end(&j);
		if (r->monitor_off)
			json_kv_string(&j, "monitor_off", r->monitor_off);
		json_kv_uint(&j, "repeat", r->repeat);
		json_kv_uint(&j, "boot", r->boot);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_finish(&j);
}
