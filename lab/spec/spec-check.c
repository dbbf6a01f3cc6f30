/* SPDX-License-Identifier: MIT */
/*
 * Rules that span entries of lab.yaml: references resolve, `from:` chains
 * end, NUMA cells partition the vCPUs and the memory, distance matrices are
 * square and symmetric unless declared otherwise, files exist, workload
 * parameters match what the catalogue declares. Also the model's
 * destructor and lookups.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/path.h"
#include "../util/units.h"
#include "spec.h"
#include "../util/dirs.h"
#include "../util/banned.h"

static const struct spec_source default_source = {
	.name = (char *)"debian",
	.type = SOURCE_DEBIAN,
	.package = (char *)"linux-source-6.1",
};

/* ---- lookups ---- */

const struct spec_kernel *spec_find_kernel(const struct spec *s, const char *name)
{
	for (size_t i = 0; i < s->nkernels; i++)
		if (streq(s->kernels[i].name, name))
			return &s->kernels[i];
	return NULL;
}

char *spec_cache_dir(const struct spec *s)
{
	return dirs_cache(s ? s->settings.cache : NULL);
}

const struct spec_topology *spec_find_topology(const struct spec *s, const char *name)
{
	for (size_t i = 0; i < s->ntopologies; i++)
		if (streq(s->topologies[i].name, name))
			return &s->topologies[i];
	return NULL;
}

const struct spec_experiment *spec_find_experiment(const struct spec *s, const char *name)
{
	for (size_t i = 0; i < s->nexperiments; i++)
		if (streq(s->experiments[i].name, name))
			return &s->experiments[i];
	return NULL;
}

static const struct spec_source *find_source(const struct spec *s, const char *name)
{
	for (size_t i = 0; i < s->nsources; i++)
		if (streq(s->sources[i].name, name))
			return &s->sources[i];
	return NULL;
}

static bool has_image(const struct spec *s, const char *name)
{
	for (size_t i = 0; i < s->nimages; i++)
		if (streq(s->images[i].name, name))
			return true;
	return false;
}

static const struct spec_host *find_host(const struct spec *s, const char *name)
{
	for (size_t i = 0; i < s->nhosts; i++)
		if (streq(s->hosts[i].name, name))
			return &s->hosts[i];
	return NULL;
}

static bool has_host(const struct spec *s, const char *name)
{
	return find_host(s, name) || streq(name, "local");
}

const struct catalogue_entry *spec_find_catalogue(const struct spec *s, const char *name, bool monitor)
{
	for (size_t i = 0; i < s->ncatalogue; i++)
		if (s->catalogue[i].monitor == monitor && streq(s->catalogue[i].name, name))
			return &s->catalogue[i];
	return NULL;
}

static bool refs_host_source(const struct spec *s, const struct spec_refs *r, const char *source)
{
	const struct catalogue_entry *m;

	for (size_t i = 0; i < r->n; i++)
		if ((m = spec_find_catalogue(s, r->v[i].name, true)) && m->host && streq(m->host, source))
			return true;
	return false;
}

bool spec_experiment_host_source(const struct spec *s, const struct spec_experiment *e, const char *source)
{
	if (refs_host_source(s, &e->monitors, source))
		return true;
	for (size_t j = 0; j < e->njobs; j++)
		if (refs_host_source(s, &e->jobs[j].monitors, source))
			return true;
	return false;
}

unsigned spec_topology_vcpus(const struct spec_topology *t)
{
	return t->sockets * t->dies * t->cores * t->threads;
}

void spec_experiment_variants(const struct spec *s, const struct spec_experiment *e, struct strv *ret)
{
	for (size_t i = 0; i < e->kernels.n; i++) {
		const struct spec_kernel *k = spec_find_kernel(s, e->kernels.v[i].name);

		if (k && k->nsweep) {
			for (size_t j = 0; j < k->nsweep; j++)
				strv_push_take(ret, xasprintf("%s@%u", k->name, k->sweep[j]));
		} else {
			strv_push(ret, e->kernels.v[i].name);
		}
	}
}

/* ---- kernels ---- */

static size_t count_patches(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)))
		if (str_endswith(de->d_name, ".patch") || str_endswith(de->d_name, ".mbox") ||
		    str_endswith(de->d_name, ".diff"))
			n++;
	closedir(d);
	return n;
}

static void check_kernels(struct spec *s, const struct spec_load_opts *opts, struct diags *d)
{
	for (size_t i = 0; i < s->nkernels; i++) {
		struct spec_kernel *k = &s->kernels[i];
		const struct spec_kernel *cur = k;
		size_t hops = 0;

		if (k->source.name && !find_source(s, k->source.name))
			diags_add(d, &k->source.pos, "kernel '%s' uses source '%s', which is not defined in sources",
				  k->name, k->source.name);
		if (k->from.name && !spec_find_kernel(s, k->from.name))
			diags_add(d, &k->from.pos, "kernel '%s' starts from '%s', which is not a defined kernel",
				  k->name, k->from.name);
		/* follow `from` to the variant that names the source */
		while (cur && cur->from.name) {
			if (++hops > s->nkernels) {
				diags_add(d, &k->from.pos, "kernel '%s' is part of a 'from' cycle", k->name);
				cur = NULL;
				break;
			}
			cur = spec_find_kernel(s, cur->from.name);
		}
		if (cur)
			k->root_source = cur->source.name ? find_source(s, cur->source.name) : &default_source;

		if (opts && (opts->no_filesystem || opts->catalogue))
			continue;
		if (k->patches.n && k->patches_dir && !path_is_dir(k->patches.v[0]))
			diags_add(d, &k->patches_pos, "patch folder '%s' does not exist", k->patches.v[0]);
		else if (k->patches.n && !k->patches_dir)
			for (size_t j = 0; j < k->patches.n; j++)
				if (!path_is_file(k->patches.v[j]))
					diags_add(d, &k->patches_pos, "patch '%s' does not exist", k->patches.v[j]);
		for (size_t j = 0; j < k->configs.n; j++)
			if (!path_is_file(k->configs.v[j]))
				diags_add(d, &k->configs_pos, "config fragment '%s' does not exist", k->configs.v[j]);
		if (k->nsweep && k->patches.n && k->patches_dir && path_is_dir(k->patches.v[0])) {
			size_t have = count_patches(k->patches.v[0]);

			if (have && k->sweep[k->nsweep - 1] > have)
				diags_add(d, &k->sweep_pos, "sweep step %u is beyond the %zu patches in '%s'",
					  k->sweep[k->nsweep - 1], have, k->patches.v[0]);
		}
	}
}

/* ---- topologies ---- */

static bool bit(const uint8_t *bits, size_t i)
{
	return bits[i / 8] & (1u << (i % 8));
}

/* the vCPUs cell i names exist and no earlier cell names them too */
static void check_cell_cpus(const struct spec_topology *t, size_t i, unsigned vcpus, struct diags *d)
{
	const struct spec_cell *c = &t->cells[i];

	if (!c->cpulist)
		return;
	for (size_t cpu = 0; cpu < SPEC_MAX_VCPUS; cpu++) {
		if (!bit(c->cpus, cpu))
			continue;
		if (cpu >= vcpus) {
			diags_add(d, &c->pos, "numa cell %zu names vCPU %zu, but topology '%s' has %u vCPUs (0-%u)", i,
				  cpu, t->name, vcpus, vcpus - 1);
			return;
		}
		for (size_t j = 0; j < i; j++)
			if (t->cells[j].cpulist && bit(t->cells[j].cpus, cpu)) {
				diags_add(d, &c->pos, "numa cells %zu and %zu overlap: vCPU %zu is in both", j, i, cpu);
				return;
			}
	}
}

/* well-formed cells together hold every vCPU and the declared memory */
static void check_cells_cover(const struct spec_topology *t, unsigned vcpus, struct diags *d)
{
	uint64_t mem = 0;

	if (!t->ncells)
		return;
	for (size_t i = 0; i < t->ncells; i++) {
		if (!t->cells[i].cpulist || !t->cells[i].memory)
			return; /* already reported where the cell is wrong */
		mem += t->cells[i].memory;
	}
	for (unsigned cpu = 0; cpu < vcpus; cpu++) {
		size_t i;

		for (i = 0; i < t->ncells; i++)
			if (t->cells[i].cpulist && bit(t->cells[i].cpus, cpu))
				break;
		if (i == t->ncells) {
			diags_add(d, &t->pos, "numa cells of topology '%s' leave vCPU %u out of every cell", t->name,
				  cpu);
			break;
		}
	}
	if (t->memory && mem != t->memory) {
		_cleanup_free_ char *a = format_size(mem), *b = format_size(t->memory);

		diags_add(d, &t->pos, "numa cells of topology '%s' add up to %s of memory, not the %s it declares",
			  t->name, a, b);
	}
}

/* false when the matrix does not fit the cells, and checking the topology stops there */
static bool check_distances(const struct spec_topology *t, struct diags *d)
{
	size_t m = t->ncells;

	if (!m) {
		diags_add(d, &t->pos, "topology '%s' gives distances but no numa cells", t->name);
		return false;
	}
	if (t->ndistances != m) {
		diags_add(d, &t->pos, "topology '%s' gives a %zux%zu distance matrix for %zu numa cells", t->name,
			  t->ndistances, t->ndistances, m);
		return false;
	}
	for (size_t i = 0; i < m; i++) {
		for (size_t j = 0; j < m; j++) {
			unsigned x = t->distances[i * m + j], y = t->distances[j * m + i];

			if (!x)
				continue; /* a malformed row, already reported */
			if (i == j && x != 10)
				diags_add(d, &t->pos, "distance from cell %zu to itself must be 10, not %u", i, x);
			else if (i != j && x <= 10)
				diags_add(d, &t->pos, "distance from cell %zu to cell %zu must be above 10, not %u", i, j,
					  x);
			else if (i < j && y && x != y && !t->asymmetric)
				diags_add(d, &t->pos,
					  "distances of topology '%s' are asymmetric (%zu->%zu is %u, %zu->%zu is %u); say 'asymmetric: true' if that is intended",
					  t->name, i, j, x, j, i, y);
		}
	}
	return true;
}

static void check_pin_list(const struct spec_topology *t, unsigned vcpus, struct diags *d)
{
	uint8_t bits[SPEC_MAX_VCPUS / 8] = { 0 };
	unsigned n = 0;

	parse_cpulist(t->pin_cpus, bits, SPEC_MAX_VCPUS, NULL);
	for (size_t i = 0; i < SPEC_MAX_VCPUS; i++)
		n += bit(bits, i);
	if (n < vcpus)
		diags_add(d, &t->pos, "pinning lists %u host CPUs for the %u vCPUs of topology '%s'", n, vcpus,
			  t->name);
}

static void check_topology(const struct spec_topology *t, struct diags *d)
{
	unsigned vcpus = spec_topology_vcpus(t);

	if ((uint64_t)t->sockets * t->dies * t->cores * t->threads > SPEC_MAX_VCPUS) {
		diags_add(d, &t->pos, "topology '%s' has %llu vCPUs; lab supports at most %d", t->name,
			  (unsigned long long)t->sockets * t->dies * t->cores * t->threads, SPEC_MAX_VCPUS);
		return;
	}
	for (size_t i = 0; i < t->ncells; i++)
		check_cell_cpus(t, i, vcpus, d);
	check_cells_cover(t, vcpus, d);
	if (t->distances && !check_distances(t, d))
		return;
	if (t->pin == PIN_LIST)
		check_pin_list(t, vcpus, d);
	/* QEMU runs icount's vCPUs in turn on one thread; on 7.2 the boot CPU
	 * takes each time slice and the others never finish coming up */
	if (t->timing == TIMING_ICOUNT && vcpus > 1)
		diags_add(d, &t->timing_pos,
			  "topology '%s' has %u vCPUs but timing: icount allows 1: with icount QEMU runs vCPUs in "
			  "turn and the guest hangs at SMP bring-up ('Booting SMP configuration')",
			  t->name, vcpus);
}

/* ---- experiments ---- */

static const struct spec_kernel *find_variant(const struct spec *s, const char *name, unsigned *ret_step)
{
	const char *at = strchr(name, '@');
	_cleanup_free_ char *base = NULL;
	const struct spec_kernel *k;
	uint64_t step;

	*ret_step = 0;
	if (!at)
		return spec_find_kernel(s, name);
	base = xstrndup(name, (size_t)(at - name));
	k = spec_find_kernel(s, base);
	if (!k || parse_uint(at + 1, 999, &step) < 0)
		return NULL;
	for (size_t i = 0; i < k->nsweep; i++)
		if (k->sweep[i] == step) {
			*ret_step = (unsigned)step;
			return k;
		}
	return NULL;
}

static void suggest_ref(struct diags *d, const struct spec_ref *r, const char *what, const char *const *cands,
			size_t n)
{
	const char *hint = str_suggest(r->name, cands, n);

	if (hint)
		diags_add(d, &r->pos, "unknown %s '%s' (did you mean '%s'?)", what, r->name, hint);
	else
		diags_add(d, &r->pos, "unknown %s '%s'", what, r->name);
}

#define NAMES(arr, count, field)                                              \
	({                                                                    \
		const char **v_ = xcalloc((count) + 1, sizeof(char *));       \
		for (size_t i_ = 0; i_ < (count); i_++)                       \
			v_[i_] = (arr)[i_].field;                             \
		v_;                                                           \
	})


/* The catalogue entries whose metrics a job reports: its workload, its monitors and the experiment's. */
static size_t job_entries(const struct spec *s, const struct spec_experiment *e, const struct spec_job *job,
			  const struct catalogue_entry **out, size_t max)
{
	size_t n = 0;
	const struct catalogue_entry *w = job->workload.name ? spec_find_catalogue(s, job->workload.name, false) : NULL;

	if (w && n < max)
		out[n++] = w;
	for (size_t i = 0; i < job->monitors.n && n < max; i++)
		if ((w = spec_find_catalogue(s, job->monitors.v[i].name, true)))
			out[n++] = w;
	for (size_t i = 0; i < e->monitors.n && n < max; i++)
		if ((w = spec_find_catalogue(s, e->monitors.v[i].name, true)))
			out[n++] = w;
	return n;
}

#define MAX_ENTRIES 64

/*
 * A metric an expectation or an observe entry names must be one that the
 * entries report (their declared `metrics:`); when one of them declares
 * none, nothing can be said. `job` NULL: any job of the experiment.
 */
static void check_metric(const struct spec *s, const struct spec_experiment *e, const struct spec_job *job,
			 const char *metric, const struct pos *pos, struct diags *d)
{
	const struct catalogue_entry *ents[MAX_ENTRIES];
	_cleanup_strv_ struct strv names = STRV_INIT, pats = STRV_INIT, inst = STRV_INIT;
	_cleanup_strbuf_ struct strbuf who = STRBUF_INIT;
	size_t n = 0;
	const char *hint;

	/* lab's own, for every run on a guest of this machine (lab/engine/hostload.c) */
	if (streq(metric, "host.busy_pct") || streq(metric, "host.qemu_pct") || streq(metric, "host.other_pct"))
		return;
	for (size_t j = 0; j < e->njobs; j++)
		if (!job || job == &e->jobs[j])
			n += job_entries(s, e, &e->jobs[j], ents + n, MAX_ENTRIES - n);
	for (size_t i = 0; i < n; i++) {
		if (!ents[i]->metrics.n || catalogue_metric_matches(ents[i], metric))
			return;
		if (strv_contains(&names, ents[i]->name))
			continue;
		strv_push(&names, ents[i]->name);
		strbuf_addf(&who, "%s%s", who.len ? ", " : "", ents[i]->name);
		for (size_t k = 0; k < ents[i]->metrics.n; k++)
			strv_push(&pats, ents[i]->metrics.v[k]);
	}
	if (!n)
		return;
	/* suggest a pattern filled in with the metric's own parts (stress-ng.switch.ops_per_sec) */
	for (size_t k = 0; k < pats.n; k++) {
		char *filled = catalogue_metric_instance(pats.v[k], metric);

		if (filled)
			strv_push_take(&inst, filled);
	}
	hint = str_suggest_within(metric, (const char *const *)inst.v, inst.n, strlen(metric) / 4 + 1);
	if (!hint)
		hint = str_suggest(metric, (const char *const *)pats.v, pats.n);
	if (hint)
		diags_add(d, pos, "no workload or monitor of this %s reports metric '%s' (see the metrics: of %s; did you mean '%s'?)",
			  job ? "job" : "experiment", metric, who.buf, hint);
	else
		diags_add(d, pos, "no workload or monitor of this %s reports metric '%s' (see the metrics: of %s)",
			  job ? "job" : "experiment", metric, who.buf);
}

static void check_observe(const struct spec *s, const struct spec_experiment *e, const struct spec_load_opts *opts,
			  struct diags *d)
{
	for (size_t i = 0; i < e->nobserve; i++) {
		const struct spec_observe *o = &e->observe[i];
		bool vs = o->op >= OBSERVE_HIGHER;

		if (vs && e->kernels.n < 2)
			diags_add(d, &o->pos, "vs-baseline needs at least two kernels in experiment '%s'", e->name);
		for (size_t k = 0; k < o->kernels.n; k++) {
			const struct spec_ref *r = &o->kernels.v[k];
			bool found = false;

			for (size_t j = 0; j < e->kernels.n && !found; j++)
				found = streq(e->kernels.v[j].name, r->name) ||
					(str_startswith(r->name, e->kernels.v[j].name) &&
					 r->name[strlen(e->kernels.v[j].name)] == '@');
			if (!found)
				diags_add(d, &r->pos, "kernel '%s' is not compared in experiment '%s' (kernels: or a sweep step NAME@N)",
					  r->name, e->name);
			else if (vs && e->kernels.n && streq(r->name, e->kernels.v[0].name))
				diags_add(d, &r->pos, "'%s' is the baseline: vs-baseline compares the other kernels with it",
					  r->name);
		}
		if (!(opts && opts->no_filesystem))
			check_metric(s, e, NULL, o->metric, &o->pos, d);
	}
}

static void check_job(const struct spec *s, const struct spec_experiment *e, const struct spec_job *job,
		      const struct spec_load_opts *opts, struct diags *d)
{
	const struct catalogue_entry *w;

	if (!job->workload.name)
		return;
	for (size_t i = 0; i < job->nexpect; i++) {
		const char *m = job->expect[i].metric;

		if (!strchr(m, '.') || m[0] == '.' || str_endswith(m, "."))
			diags_add(d, &job->expect[i].pos,
				  "metric '%s' is not a dotted name such as sysbench.tps or stress-ng.switch.ops_per_sec", m);
	}
	if (job->nexpect && e->kernels.n < 2)
		diags_add(d, &job->pos, "expectations need at least two kernels to compare in experiment '%s'",
			  e->name);
	/* the guest's seed creates the groups of every "cgroup" parameter (seed_experiment_cgroups) */
	for (size_t i = 0; i < job->nparams; i++)
		for (size_t j = 0; streq(job->params[i].key, "cgroup") && j < job->params[i].nvalues; j++) {
			const char *cg = job->params[i].values[j];

			if (cg && *cg && !path_is_cgroup(cg))
				diags_add(d, &job->params[i].value_pos[j], "cgroup '%s' must be " PATH_CGROUP_RULE, cg);
		}
	if (opts && opts->no_filesystem)
		return;
	for (size_t i = 0; i < job->monitors.n; i++)
		if (!spec_find_catalogue(s, job->monitors.v[i].name, true))
			diags_add(d, &job->monitors.v[i].pos, "unknown monitor '%s' (no %s/monitors/%s/monitor.yaml)",
				  job->monitors.v[i].name, s->settings.catalogue, job->monitors.v[i].name);
	w = spec_find_catalogue(s, job->workload.name, false);
	if (!w) {
		diags_add(d, &job->workload.pos, "unknown workload '%s' (no %s/%s/workload.yaml)", job->workload.name,
			  s->settings.catalogue, job->workload.name);
		return;
	}
	for (size_t i = 0; i < job->nexpect; i++)
		if (strchr(job->expect[i].metric, '.')) /* the others are said above */
			check_metric(s, e, job, job->expect[i].metric, &job->expect[i].pos, d);
	for (size_t i = 0; i < job->nparams; i++) {
		const struct spec_param *p = &job->params[i];
		const struct catalogue_param *cp = NULL;

		for (size_t j = 0; j < w->nparams; j++)
			if (streq(w->params[j].name, p->key))
				cp = &w->params[j];
		if (!cp) {
			_cleanup_free_ const char **names = NAMES(w->params, w->nparams, name);
			const char *hint = str_suggest(p->key, names, w->nparams);

			if (hint)
				diags_add(d, &p->pos, "workload '%s' has no parameter '%s' (did you mean '%s'?)", w->name,
					  p->key, hint);
			else
				diags_add(d, &p->pos, "workload '%s' has no parameter '%s'", w->name, p->key);
			continue;
		}
		for (size_t j = 0; j < p->nvalues; j++) {
			const char *why = catalogue_param_check(cp, p->values[j]);

			if (why)
				diags_add(d, &p->value_pos[j], "parameter '%s' of workload '%s' must be %s (%s), not '%s'",
					  p->key, w->name, why, param_type_name(cp->type), p->values[j]);
		}
	}
	for (size_t j = 0; j < w->nparams; j++) {
		size_t i;

		if (w->params[j].def)
			continue;
		for (i = 0; i < job->nparams; i++)
			if (streq(job->params[i].key, w->params[j].name))
				break;
		if (i == job->nparams)
			diags_add(d, &job->pos, "workload '%s' needs parameter '%s'", w->name, w->params[j].name);
	}
}

/* without-kvm names another experiment that answers the same question
 * where KVM does not work: the same kernels, in the same order, on the
 * local host, and no stand-in of its own. */
static void check_without_kvm(const struct spec *s, const struct spec_experiment *e, struct diags *d)
{
	const struct spec_experiment *w;
	const struct spec_ref *r = &e->without_kvm;
	bool same = true;

	if (!r->name)
		return;
	if (!(w = spec_find_experiment(s, r->name))) {
		_cleanup_free_ const char **names = NAMES(s->experiments, s->nexperiments, name);

		suggest_ref(d, r, "experiment", names, s->nexperiments);
		return;
	}
	if (w == e) {
		diags_add(d, &r->pos, "without-kvm names experiment '%s' itself: name the experiment lab runs in its "
			  "place where KVM does not work", e->name);
		return;
	}
	if (w->without_kvm.name) {
		diags_add(d, &r->pos, "without-kvm: experiment '%s' has a without-kvm of its own ('%s'): a stand-in "
			  "must run as declared", w->name, w->without_kvm.name);
		return;
	}
	if (e->hosts.n || w->hosts.n)
		diags_add(d, &r->pos, "without-kvm: experiment '%s' runs on hosts: a stand-in is for guests on "
			  "this machine, where lab knows whether KVM works", e->hosts.n ? e->name : w->name);
	same = w->kernels.n == e->kernels.n;
	for (size_t i = 0; same && i < e->kernels.n; i++)
		same = streq(w->kernels.v[i].name, e->kernels.v[i].name);
	if (!same)
		diags_add(d, &r->pos, "without-kvm: experiment '%s' compares other kernels than '%s': a stand-in "
			  "compares the same ones, baseline first", w->name, e->name);
}

static void check_experiment(const struct spec *s, const struct spec_experiment *e,
			     const struct spec_load_opts *opts, struct diags *d)
{
	const struct spec_source *src = NULL;
	const struct spec_kernel *first = NULL;

	for (size_t i = 0; i < e->kernels.n; i++) {
		unsigned step;
		const struct spec_kernel *k = find_variant(s, e->kernels.v[i].name, &step);

		if (!k) {
			_cleanup_free_ const char **names = NAMES(s->kernels, s->nkernels, name);

			suggest_ref(d, &e->kernels.v[i], "kernel", names, s->nkernels);
			continue;
		}
		if (!k->root_source)
			continue;
		if (!src) {
			src = k->root_source;
			first = k;
		} else if (src != k->root_source) {
			diags_add(d, &e->kernels.v[i].pos,
				  "kernel '%s' builds from source '%s' but '%s' from '%s': variants compared in one experiment must share a source",
				  k->name, k->root_source->name, first->name, src->name);
		}
	}
	if (e->topology.name && !spec_find_topology(s, e->topology.name)) {
		_cleanup_free_ const char **names = NAMES(s->topologies, s->ntopologies, name);

		suggest_ref(d, &e->topology, "topology", names, s->ntopologies);
	}
	check_without_kvm(s, e, d);
	if (e->image.name && !has_image(s, e->image.name)) {
		_cleanup_free_ const char **names = NAMES(s->images, s->nimages, name);

		suggest_ref(d, &e->image, "image", names, s->nimages);
	}
	for (size_t i = 0; i < e->hosts.n; i++) {
		const struct spec_host *h = find_host(s, e->hosts.v[i].name);

		if (!has_host(s, e->hosts.v[i].name)) {
			_cleanup_free_ const char **names = NAMES(s->hosts, s->nhosts, name);

			suggest_ref(d, &e->hosts.v[i], "host", names, s->nhosts);
		} else if (h && h->type == HOST_SSH && e->boot == BOOT_SIDE_BY_SIDE)
			diags_add(d, &e->boot_pos,
				  "boot: side-by-side keeps a guest per kernel up at once, but host '%s' is bare metal "
				  "and runs one kernel at a time (use boot: once, or per-run)", h->name);
	}
	if (e->boot == BOOT_SIDE_BY_SIDE) {
		_cleanup_strv_ struct strv vs = STRV_INIT;

		spec_experiment_variants(s, e, &vs);
		if (vs.n > SPEC_MAX_SIDE_BY_SIDE)
			diags_add(d, &e->boot_pos, "boot: side-by-side would keep %zu guests up at once (one per kernel); "
				  "at most %d (use boot: once)", vs.n, SPEC_MAX_SIDE_BY_SIDE);
	}
	if (!(opts && opts->no_filesystem))
		for (size_t i = 0; i < e->monitors.n; i++)
			if (!spec_find_catalogue(s, e->monitors.v[i].name, true))
				diags_add(d, &e->monitors.v[i].pos, "unknown monitor '%s' (no %s/monitors/%s/monitor.yaml)",
					  e->monitors.v[i].name, s->settings.catalogue, e->monitors.v[i].name);
	for (size_t i = 0; i < e->njobs; i++)
		check_job(s, e, &e->jobs[i], opts, d);
	check_observe(s, e, opts, d);
	for (size_t i = 0; i < e->noverhead_budget; i++)
		if (!spec_experiment_monitors(e, e->overhead_budget[i].key))
			diags_add(d, &e->overhead_budget[i].pos, "overhead-budget names '%s', a monitor experiment '%s' does not use",
				  e->overhead_budget[i].key, e->name);
}

bool spec_experiment_monitors(const struct spec_experiment *e, const char *monitor)
{
	for (size_t i = 0; i < e->monitors.n; i++)
		if (streq(e->monitors.v[i].name, monitor))
			return true;
	for (size_t j = 0; j < e->njobs; j++)
		for (size_t i = 0; i < e->jobs[j].monitors.n; i++)
			if (streq(e->jobs[j].monitors.v[i].name, monitor))
				return true;
	return false;
}

double spec_overhead_budget_pct(const struct spec *s, const struct spec_experiment *e, const char *monitor)
{
	const struct catalogue_entry *m = spec_find_catalogue(s, monitor, true);
	double f;

	for (size_t i = 0; i < e->noverhead_budget; i++)
		if (streq(e->overhead_budget[i].key, monitor) && parse_percent(e->overhead_budget[i].value, &f) == 0)
			return f * 100;
	return m ? m->overhead_budget_pct : NAN;
}

void spec_check(struct spec *s, const struct spec_load_opts *opts, struct diags *d)
{
	if (opts && opts->catalogue) {
		free(s->settings.catalogue);
		s->settings.catalogue = xstrdup(opts->catalogue);
	}
	if (!s->settings.catalogue)
		s->settings.catalogue = path_join(s->dir, "workloads");
	if (opts && opts->catalogue && !opts->no_filesystem)
		catalogue_load(s, d);
	else if (!(opts && opts->no_filesystem)) {
		for (size_t i = 0; i < s->nimages; i++)
			if (s->images[i].recipe && !path_is_file(s->images[i].recipe))
				diags_add(d, &s->images[i].pos, "image recipe '%s' does not exist", s->images[i].recipe);
		for (size_t i = 0; i < s->nsources; i++) {
			const struct spec_source *src = &s->sources[i];

			if (src->type == SOURCE_DIRECTORY && src->path && !path_is_dir(src->path))
				diags_add(d, &src->pos, "source folder '%s' does not exist", src->path);
			if (src->type == SOURCE_TARBALL && src->path && !path_is_file(src->path))
				diags_add(d, &src->pos, "source tarball '%s' does not exist", src->path);
		}
		catalogue_load(s, d);
	}
	check_kernels(s, opts, d);
	for (size_t i = 0; i < s->ntopologies; i++)
		check_topology(&s->topologies[i], d);
	for (size_t i = 0; i < s->nexperiments; i++)
		check_experiment(s, &s->experiments[i], opts, d);
}

/* ---- destructor ---- */

static void refs_release(struct spec_refs *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->v[i].name);
	free(r->v);
}

/* ---- lab --kernels ---- */

int spec_only_kernels(struct spec *s, const struct strv *only, struct diags *d)
{
	bool *used = xcalloc(only->n + 1, sizeof(bool));
	size_t before = d->n;

	for (size_t i = 0; i < s->nexperiments; i++) {
		struct spec_experiment *e = &s->experiments[i];
		_cleanup_strv_ struct strv all = STRV_INIT;
		struct spec_refs kept = { 0 };

		spec_experiment_variants(s, e, &all);
		for (size_t j = 0; j < all.n; j++) {
			ssize_t k = strv_index(only, all.v[j]);

			if (k < 0)
				continue;
			used[k] = true;
			if (kept.n == kept.alloc) {
				kept.alloc = kept.alloc ? 2 * kept.alloc : 4;
				kept.v = xrealloc(kept.v, kept.alloc * sizeof(*kept.v));
			}
			kept.v[kept.n++] = (struct spec_ref){ .name = xstrdup(all.v[j]), .pos = e->pos };
		}
		if (!kept.n)
			continue; /* an experiment of other kernels stays as it is */
		refs_release(&e->kernels);
		e->kernels = kept;
		/* a mechanism check of kernels left out checks the ones kept, or goes */
		for (size_t o = 0; o < e->nobserve; o++) {
			struct spec_refs *ok = &e->observe[o].kernels;
			size_t n = 0;

			if (!ok->n)
				continue;
			for (size_t j = 0; j < ok->n; j++) {
				if (strv_index(only, ok->v[j].name) >= 0)
					ok->v[n++] = ok->v[j];
				else
					free(ok->v[j].name);
			}
			ok->n = n;
			if (!n) {
				free(e->observe[o].metric);
				free(e->observe[o].says);
				free(ok->v);
				memmove(&e->observe[o], &e->observe[o + 1], (e->nobserve - o - 1) * sizeof(*e->observe));
				e->nobserve--;
				o--;
			}
		}
	}
	for (size_t k = 0; k < only->n; k++)
		if (!used[k])
			diags_add(d, NULL, "--kernels: no experiment of %s compares '%s' (lab kernel list names the variants)",
				  s->path, only->v[k]);
	free(used);
	return d->n == before ? 0 : -EINVAL;
}

static void source_release(struct spec_source *x)
{
	free(x->name);
	free(x->package);
	free(x->path);
	free(x->url);
	free(x->ref);
}

static void job_release(struct spec_job *job);

static bool job_measures(const struct spec *s, const struct spec_job *job, const char *metric)
{
	const struct catalogue_entry *w = spec_find_catalogue(s, job->workload.name, false);

	for (size_t i = 0; i < job->nexpect; i++)
		if (streq(job->expect[i].metric, metric))
			return true;
	return w && catalogue_metric_matches(w, metric);
}

int spec_kernel_at_commit(struct spec *s, const char *kernel, const char *name, const char *id, struct diags *d)
{
	const struct spec_kernel *k = spec_find_kernel(s, kernel);
	const struct spec_source *root = k ? k->root_source : NULL;
	const struct spec_source *base = s->sources;
	struct spec_source *src;
	struct spec_kernel *nk;
	struct pos pos = { .file = s->path };
	_cleanup_free_ size_t *at = NULL;
	size_t idx;

	if (!k) {
		diags_add(d, &pos, "no kernel variant '%s' in %s", kernel, s->path);
		return -ENOENT;
	}
	if (!root || root->type != SOURCE_GIT) {
		diags_add(d, &k->pos, "kernel '%s' does not build from a git source: it has no commits to name", kernel);
		return -EINVAL;
	}
	if (spec_find_kernel(s, name))
		return 0;
	/* the kernels' root sources point into the array that moves: as indexes first */
	at = xcalloc(s->nkernels + 1, sizeof(*at));
	for (size_t i = 0; i < s->nkernels; i++) {
		at[i] = SIZE_MAX;
		for (size_t j = 0; j < s->nsources; j++)
			if (s->kernels[i].root_source == &base[j])
				at[i] = j;
	}
	idx = (size_t)(root - base);
	s->sources = xrealloc(s->sources, (s->nsources + 1) * sizeof(*s->sources));
	for (size_t i = 0; i < s->nkernels; i++)
		if (at[i] != SIZE_MAX)
			s->kernels[i].root_source = &s->sources[at[i]];
	root = &s->sources[idx];
	src = &s->sources[s->nsources++];
	*src = (struct spec_source){ .name = xstrdup(name), .pos = root->pos, .type = SOURCE_GIT,
				     .url = xstrdup(root->url), .ref = xstrdup(id) };
	s->kernels = xrealloc(s->kernels, (s->nkernels + 1) * sizeof(*s->kernels));
	nk = &s->kernels[s->nkernels++];
	k = spec_find_kernel(s, kernel);
	*nk = (struct spec_kernel){ .name = xstrdup(name), .pos = k->pos, .from = { .name = xstrdup(kernel), .pos = k->pos },
				    .root_source = src };
	return 0;
}

int spec_bisect_step(struct spec *s, struct spec_experiment *e, const struct spec_bisect_step *st, struct diags *d)
{
	struct spec_kernel *k = (struct spec_kernel *)spec_find_kernel(s, st->series);
	struct pos pos = e->pos;
	size_t kept = 0, npatches = st->npatches;

	if (!k) {
		diags_add(d, &pos, "no kernel variant '%s' in %s", st->series, s->path);
		return -ENOENT;
	}
	/* a series: every prefix a sweep step (a commit bisect's kernels are its own) */
	if (npatches) {
		free(k->sweep);
		k->sweep = xcalloc(npatches + 1, sizeof(unsigned));
		for (k->nsweep = 0; k->nsweep < npatches; k->nsweep++)
			k->sweep[k->nsweep] = (unsigned)k->nsweep + 1;
	}
	for (size_t j = 0; j < e->njobs; j++) {
		struct spec_job *job = &e->jobs[j];
		struct pos xpos = job->nexpect ? job->expect[0].pos : job->pos;

		if (!job_measures(s, job, st->metric)) {
			job_release(job);
			continue;
		}
		for (size_t i = 0; i < job->nexpect; i++)
			free(job->expect[i].metric);
		free(job->expect);
		job->expect = xcalloc(1, sizeof(*job->expect));
		job->expect[0] = (struct spec_expect){ .metric = xstrdup(st->metric), .dir = st->dir,
						       .effect = st->threshold_pct / 100, .has_effect = true,
						       .statistic = -1, .pos = xpos };
		job->nexpect = 1;
		e->jobs[kept++] = *job;
	}
	e->njobs = kept;
	if (!kept) {
		diags_add(d, &e->pos, "no workload of experiment '%s' measures '%s'", e->name, st->metric);
		return -ENOENT;
	}
	for (size_t j = 0; j < e->nobserve; j++) {
		free(e->observe[j].metric);
		free(e->observe[j].says);
		refs_release(&e->observe[j].kernels);
	}
	e->nobserve = 0;
	refs_release(&e->kernels);
	e->kernels = (struct spec_refs){ 0 };
	GROW(e->kernels.v, e->kernels.alloc, 2);
	e->kernels.v[0] = (struct spec_ref){ .name = xstrdup(st->good), .pos = pos };
	e->kernels.v[1] = (struct spec_ref){ .name = xstrdup(st->test), .pos = pos };
	e->kernels.n = 2;
	e->repeat_auto = true;
	e->repeat = 0;
	e->decide.alpha = st->alpha;
	if (st->max_boots)
		e->decide.max_boots = st->max_boots;
	if (e->decide.max_boots < e->decide.min_boots)
		e->decide.max_boots = e->decide.min_boots;
	if (!e->decide.runs_per_boot)
		e->decide.runs_per_boot = 3;
	return 0;
}

static void kernel_release(struct spec_kernel *k)
{
	free(k->name);
	free(k->source.name);
	free(k->from.name);
	strv_release(&k->patches);
	strv_release(&k->configs);
	for (size_t j = 0; j < k->nrequire; j++) {
		free(k->require[j].symbol);
		free(k->require[j].value);
	}
	free(k->require);
	free(k->cmdline);
	free(k->start);
	free(k->sweep);
}

static void topology_release(struct spec_topology *t)
{
	free(t->name);
	for (size_t j = 0; j < t->ncells; j++)
		free(t->cells[j].cpulist);
	free(t->cells);
	free(t->distances);
	free(t->pin_cpus);
	free(t->emulator_cpus);
	free(t->cpu);
	free(t->hugepages);
}

static void host_release(struct spec_host *h)
{
	free(h->name);
	free(h->uri);
	free(h->user);
	free(h->address);
	free(h->dir);
	free(h->identity);
	strv_release(&h->power_cycle);
	free(h->cmdline);
}

static void job_release(struct spec_job *job)
{
	free(job->workload.name);
	for (size_t k = 0; k < job->nparams; k++) {
		for (size_t l = 0; l < job->params[k].nvalues; l++)
			free(job->params[k].values[l]);
		free(job->params[k].values);
		free(job->params[k].value_pos);
		free(job->params[k].key);
	}
	free(job->params);
	refs_release(&job->monitors);
	for (size_t k = 0; k < job->nexpect; k++)
		free(job->expect[k].metric);
	free(job->expect);
}

static void experiment_release(struct spec_experiment *e)
{
	free(e->name);
	free(e->description);
	refs_release(&e->kernels);
	free(e->topology.name);
	free(e->image.name);
	free(e->without_kvm.name);
	refs_release(&e->hosts);
	refs_release(&e->monitors);
	for (size_t j = 0; j < e->nsysctl; j++) {
		free(e->sysctl[j].key);
		free(e->sysctl[j].value);
	}
	free(e->sysctl);
	for (size_t j = 0; j < e->noverhead_budget; j++) {
		free(e->overhead_budget[j].key);
		free(e->overhead_budget[j].value);
	}
	free(e->overhead_budget);
	for (size_t j = 0; j < e->njobs; j++)
		job_release(&e->jobs[j]);
	free(e->jobs);
	for (size_t j = 0; j < e->nobserve; j++) {
		free(e->observe[j].metric);
		free(e->observe[j].says);
		refs_release(&e->observe[j].kernels);
	}
	free(e->observe);
}

static void catalogue_entry_release(struct catalogue_entry *w)
{
	free(w->name);
	free(w->dir);
	free(w->description);
	free(w->work);
	free(w->host);
	strv_release(&w->packages);
	strv_release(&w->metrics);
	for (size_t j = 0; j < w->nparams; j++) {
		free(w->params[j].name);
		free(w->params[j].def);
		free(w->params[j].description);
		strv_release(&w->params[j].values);
	}
	free(w->params);
}

static void engine_release(struct spec_engine *e)
{
	free(e->partition);
	free(e->constraint);
	free(e->account);
	free(e->qos);
	free(e->reservation);
	free(e->spool);
	strv_release(&e->sbatch);
	free(e->lab);
}

void spec_free(struct spec *s)
{
	if (!s)
		return;
	free(s->settings.cache);
	free(s->settings.results);
	free(s->settings.catalogue);
	engine_release(&s->engine);
	for (size_t i = 0; i < s->nsources; i++)
		source_release(&s->sources[i]);
	free(s->sources);
	for (size_t i = 0; i < s->nkernels; i++)
		kernel_release(&s->kernels[i]);
	free(s->kernels);
	for (size_t i = 0; i < s->ntopologies; i++)
		topology_release(&s->topologies[i]);
	free(s->topologies);
	for (size_t i = 0; i < s->nimages; i++) {
		free(s->images[i].name);
		free(s->images[i].recipe);
	}
	free(s->images);
	for (size_t i = 0; i < s->nhosts; i++)
		host_release(&s->hosts[i]);
	free(s->hosts);
	for (size_t i = 0; i < s->nexperiments; i++)
		experiment_release(&s->experiments[i]);
	free(s->experiments);
	for (size_t i = 0; i < s->ncatalogue; i++)
		catalogue_entry_release(&s->catalogue[i]);
	free(s->catalogue);
	free(s->path);
	free(s->dir);
	node_files_release(&s->files);
	free(s);
}
