/* SPDX-License-Identifier: MIT */
/*
 * The workload and monitor catalogue: workloads/<name>/workload.yaml and
 * workloads/monitors/<name>/monitor.yaml. Only the declarations are read
 * here (name, parameters with types and defaults, packages, timeout); the
 * scripts beside them run in the guest and are never compiled into lab.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/path.h"
#include "../util/units.h"
#include "spec.h"
#include "../util/banned.h"

/* ---- parameter types ---- */

static const char *const param_type_names[] = {
	[PARAM_STRING] = "string", [PARAM_INT] = "int", [PARAM_UINT] = "uint",
	[PARAM_BOOL] = "bool", [PARAM_DURATION] = "duration", [PARAM_SIZE] = "size",
	[PARAM_CPUS] = "cpus", [PARAM_PERCENT] = "percent", [PARAM_ENUM] = "enum",
	[PARAM_CPULIST] = "cpulist",
};

const char *param_type_name(enum param_type t)
{
	return param_type_names[t];
}

const char *catalogue_param_check(const struct catalogue_param *p, const char *value)
{
	uint64_t u;
	double f;
	bool b;

	switch (p->type) {
	case PARAM_STRING:
		return NULL;
	case PARAM_INT:
		if (*value == '-')
			value++;
		/* fallthrough */
	case PARAM_UINT:
		return parse_uint(value, INT64_MAX, &u) < 0 ? "a whole number" : NULL;
	case PARAM_BOOL:
		return streq(value, "true") || streq(value, "false") || streq(value, "yes") ||
				       streq(value, "no")
			       ? NULL
			       : "true or false";
	case PARAM_DURATION:
		return parse_duration(value, &u) < 0 ? "a duration such as 30s or 5m" : NULL;
	case PARAM_SIZE:
		return parse_size(value, &u) < 0 ? "a size such as 512M or 4G" : NULL;
	case PARAM_CPUS:
		return parse_count_or_percent(value, &b, &f) < 0 ? "a CPU count such as 8 or a share such as 75%"
								  : NULL;
	case PARAM_PERCENT:
		return parse_percent(value, &f) < 0 ? "a percentage such as 50%" : NULL;
	case PARAM_ENUM:
		return strv_contains(&p->values, value) ? NULL : "one of the listed values";
	case PARAM_CPULIST: {
		uint8_t bits[SPEC_MAX_VCPUS / 8] = { 0 };

		return parse_cpulist(value, bits, SPEC_MAX_VCPUS, NULL) < 0 ? "a cpu list such as 0-3,8" : NULL;
	}
	}
	return "?";
}

static const char *const entry_keys[] = {
	"name", "description", "packages", "timeout", "params", "metrics", "provides", "overhead-budget", "work", "host",
};
/* What a host-side monitor (`host:`) reads; lab does the reading (engine/guest-run.c). */
static const char *const host_sources[] = { CATALOGUE_HOST_INSN_PLUGIN };
static const char *const param_keys[] = { "type", "default", "values", "description" };

static int load_param(struct catalogue_param *p, const struct node *key, const struct node *n, struct diags *d)
{
	const struct node *t, *def, *vals, *desc;
	size_t i;

	p->name = xstrdup(key->scalar);
	if (n->kind != NODE_MAP) {
		diags_add(d, &n->pos, "parameter '%s' must be a mapping with 'type'", key->scalar);
		return -EINVAL;
	}
	node_check_keys(n, param_keys, ELEMENTSOF(param_keys), "a parameter", d);
	t = node_map_get(n, "type");
	if (!t || t->kind != NODE_SCALAR) {
		diags_add(d, &n->pos, "parameter '%s' needs a 'type'", key->scalar);
		return -EINVAL;
	}
	for (i = 0; i <= PARAM_CPULIST; i++)
		if (streq(t->scalar, param_type_name((enum param_type)i)))
			break;
	if (i > PARAM_CPULIST) {
		diags_add(d, &t->pos,
			  "parameter type '%s' is not one of string, int, uint, bool, duration, size, cpus, percent, enum, cpulist",
			  t->scalar);
		return -EINVAL;
	}
	p->type = (enum param_type)i;
	vals = node_map_get(n, "values");
	if (p->type == PARAM_ENUM) {
		if (!vals || vals->kind != NODE_SEQ || !vals->n) {
			diags_add(d, &n->pos, "enum parameter '%s' needs a list of 'values'", key->scalar);
			return -EINVAL;
		}
		for (size_t j = 0; j < vals->n; j++) {
			if (vals->items[j]->kind != NODE_SCALAR) {
				diags_add(d, &vals->items[j]->pos, "values must be scalars");
				return -EINVAL;
			}
			strv_push(&p->values, vals->items[j]->scalar);
		}
	} else if (vals) {
		diags_add(d, &vals->pos, "only enum parameters take 'values'");
		return -EINVAL;
	}
	def = node_map_get(n, "default");
	if (def) {
		const char *why;

		if (def->kind != NODE_SCALAR) {
			diags_add(d, &def->pos, "the default of '%s' must be a scalar", key->scalar);
			return -EINVAL;
		}
		p->def = xstrdup(def->scalar);
		if (!(p->type == PARAM_STRING && !*p->def) && (why = catalogue_param_check(p, p->def))) {
			diags_add(d, &def->pos, "the default of '%s' must be %s, not '%s'", key->scalar, why, p->def);
			return -EINVAL;
		}
	}
	desc = node_map_get(n, "description");
	if (desc && desc->kind == NODE_SCALAR)
		p->description = xstrdup(desc->scalar);
	return 0;
}

/* packages: the Debian packages the guest installs for it */
static void load_entry_packages(struct catalogue_entry *w, const struct node *v, struct diags *d)
{
	if (v->kind != NODE_SEQ)
		diags_add(d, &v->pos, "packages must be a list of Debian package names");
	else
		for (size_t i = 0; i < v->n; i++)
			if (v->items[i]->kind == NODE_SCALAR)
				strv_push(&w->packages, v->items[i]->scalar);
}

/* metrics: the dotted metric names its parser prints, UPPERCASE words varying */
static void load_entry_metrics(struct catalogue_entry *w, const struct node *v, struct diags *d)
{
	if (v->kind != NODE_SEQ)
		diags_add(d, &v->pos, "metrics must list the metric names the parser prints "
				      "(an UPPERCASE word for a part that varies, as in stress-ng.STRESSOR.ops_per_sec)");
	else
		for (size_t i = 0; i < v->n; i++) {
			const struct node *m = v->items[i];

			if (m->kind != NODE_SCALAR || !strchr(m->scalar, '.') || strpbrk(m->scalar, " \t*?["))
				diags_add(d, &m->pos, "'%s' is not a dotted metric name", m->kind == NODE_SCALAR ? m->scalar : "?");
			else
				strv_push(&w->metrics, m->scalar);
		}
}

/* the metric that counts the workload's units of work (per-work figures divide by it) */
static void load_entry_work(struct catalogue_entry *w, const struct node *v, struct diags *d)
{
	if (w->monitor)
		diags_add(d, &v->pos, "only a workload names its unit of 'work'");
	else if (v->kind != NODE_SCALAR || !strchr(v->scalar, '.'))
		diags_add(d, &v->pos, "work must name one of the workload's metrics");
	else if (w->metrics.n && !catalogue_metric_matches(w, v->scalar))
		diags_add(d, &v->pos, "work names '%s', which is not one of the metrics: above", v->scalar);
	else
		w->work = xstrdup(v->scalar);
}

/* host: what a monitor has lab read on the host instead of running in the guest */
static void load_entry_host(struct catalogue_entry *w, const struct node *v, struct diags *d)
{
	if (!w->monitor)
		diags_add(d, &v->pos, "only a monitor runs on the host ('host:')");
	else if (v->kind != NODE_SCALAR || !streq(v->scalar, host_sources[0]))
		diags_add(d, &v->pos, "host must be '%s' (what lab reads at the window's start and stop)",
			  host_sources[0]);
	else
		w->host = xstrdup(v->scalar);
}

/* overhead-budget: how much a monitor may slow the workload, as a fraction */
static void load_entry_budget(struct catalogue_entry *w, const struct node *v, struct diags *d)
{
	double f;

	if (!w->monitor)
		diags_add(d, &v->pos, "only a monitor has an overhead-budget");
	else if (v->kind != NODE_SCALAR || parse_percent(v->scalar, &f) < 0 || !(f > 0 && f <= 1))
		diags_add(d, &v->pos, "overhead-budget must be a percentage above 0%% such as 3%%");
	else
		w->overhead_budget_pct = f * 100;
}

/* params: the mapping of parameter names to their declarations */
static int load_entry_params(struct catalogue_entry *w, const struct node *v, struct diags *d)
{
	if (v->kind != NODE_MAP) {
		diags_add(d, &v->pos, "params must be a mapping of parameter names");
		return -EINVAL;
	}
	w->params = xcalloc(v->n, sizeof(*w->params));
	for (size_t i = 0; i < v->n; i++)
		load_param(&w->params[w->nparams++], v->keys[i], v->items[i], d);
	return 0;
}

static int load_entry(struct spec *s, struct catalogue_entry *w, const char *name, const char *dir,
		      const char *file, bool monitor, struct diags *d)
{
	_cleanup_node_ struct node *root = node_parse_file(&s->files, file, d);
	const struct node *v;
	const char *what = monitor ? "a monitor" : "a workload";

	w->name = xstrdup(name);
	w->dir = xstrdup(dir);
	w->monitor = monitor;
	w->timeout_usec = 3600ULL * 1000000;
	w->overhead_budget_pct = CATALOGUE_OVERHEAD_BUDGET_PCT;
	if (!root)
		return -EINVAL;
	/* the name becomes file names and shell words in the guest */
	if (!str_is_name(name)) {
		diags_add(d, &root->pos, "'%s' cannot name %s: use letters, digits, '-', '_' and '.'", name, what);
		return -EINVAL;
	}
	if (root->kind != NODE_MAP) {
		diags_add(d, &root->pos, "%s declaration must be a mapping", what);
		return -EINVAL;
	}
	node_check_keys(root, entry_keys, ELEMENTSOF(entry_keys), what, d);
	v = node_map_get(root, "name");
	if (!v || v->kind != NODE_SCALAR || !streq(v->scalar, name))
		diags_add(d, v ? &v->pos : &root->pos, "%s in folder '%s' must say 'name: %s'", what, name, name);
	if ((v = node_map_get(root, "description")) && v->kind == NODE_SCALAR)
		w->description = xstrdup(v->scalar);
	if ((v = node_map_get(root, "packages")))
		load_entry_packages(w, v, d);
	if ((v = node_map_get(root, "metrics")))
		load_entry_metrics(w, v, d);
	if ((v = node_map_get(root, "work")))
		load_entry_work(w, v, d);
	if ((v = node_map_get(root, "host")))
		load_entry_host(w, v, d);
	if ((v = node_map_get(root, "timeout")) &&
	    (v->kind != NODE_SCALAR || parse_duration(v->scalar, &w->timeout_usec) < 0))
		diags_add(d, &v->pos, "timeout must be a duration such as 10m");
	if ((v = node_map_get(root, "overhead-budget")))
		load_entry_budget(w, v, d);
	if ((v = node_map_get(root, "params")))
		return load_entry_params(w, v, d);
	return 0;
}

static bool is_upper_word(const char *p, size_t *len)
{
	size_t n = 0;

	while ((p[n] >= 'A' && p[n] <= 'Z') || (n && p[n] >= '0' && p[n] <= '9'))
		n++;
	*len = n;
	/* a whole word: what follows is not a letter or digit */
	return n && !((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= '0' && p[n] <= '9'));
}

/* Does `name` match `pattern` from `p` on, an UPPERCASE word standing for one or more characters? */
static bool metric_match(const char *pat, const char *name, bool word_start)
{
	size_t wl;

	for (; *pat; pat++, name++) {
		if (word_start && is_upper_word(pat, &wl)) {
			for (size_t k = 1; name[k - 1]; k++)
				if (metric_match(pat + wl, name + k, false))
					return true;
			return false;
		}
		if (*pat != *name)
			return false;
		word_start = !((*pat >= 'a' && *pat <= 'z') || (*pat >= 'A' && *pat <= 'Z') || (*pat >= '0' && *pat <= '9'));
	}
	return !*name;
}

char *catalogue_metric_instance(const char *pattern, const char *metric)
{
	_cleanup_strv_ struct strv ps = STRV_INIT, ms = STRV_INIT;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strv_split(&ps, pattern, '.');
	strv_split(&ms, metric, '.');
	if (ps.n != ms.n)
		return NULL;
	for (size_t j = 0; j < ps.n; j++) {
		size_t wl;
		bool word = is_upper_word(ps.v[j], &wl) && !ps.v[j][wl];

		strbuf_addf(&sb, "%s%s", j ? "." : "", word ? ms.v[j] : ps.v[j]);
	}
	return strbuf_detach(&sb, NULL);
}

bool catalogue_pattern_matches(const char *pattern, const char *metric)
{
	return metric_match(pattern, metric, true);
}

bool catalogue_metric_matches(const struct catalogue_entry *w, const char *metric)
{
	for (size_t i = 0; i < w->metrics.n; i++)
		if (metric_match(w->metrics.v[i], metric, true))
			return true;
	return false;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void scan(struct spec *s, const char *dir, const char *decl, bool monitor, size_t *alloc, struct diags *d)
{
	_cleanup_strv_ struct strv names = STRV_INIT;
	DIR *dh = opendir(dir);
	struct dirent *de;

	if (!dh)
		return;
	while ((de = readdir(dh))) {
		_cleanup_free_ char *sub = NULL, *file = NULL;

		if (de->d_name[0] == '.')
			continue;
		sub = path_join(dir, de->d_name);
		file = path_join(sub, decl);
		if (path_is_file(file))
			strv_push(&names, de->d_name);
	}
	closedir(dh);
	/* readdir order is the filesystem's: sort so errors come out the same everywhere */
	if (names.n)
		qsort(names.v, names.n, sizeof(char *), name_cmp);
	for (size_t i = 0; i < names.n; i++) {
		_cleanup_free_ char *sub = path_join(dir, names.v[i]);
		_cleanup_free_ char *file = path_join(sub, decl);

		GROW(s->catalogue, *alloc, s->ncatalogue + 1);
		load_entry(s, &s->catalogue[s->ncatalogue++], names.v[i], sub, file, monitor, d);
	}
}

int catalogue_load(struct spec *s, struct diags *d)
{
	_cleanup_free_ char *mon = path_join(s->settings.catalogue, "monitors");
	size_t alloc = 0;

	/* a missing catalogue shows up as unknown workloads where one is named */
	if (!path_is_dir(s->settings.catalogue))
		return -ENOENT;
	scan(s, s->settings.catalogue, "workload.yaml", false, &alloc, d);
	scan(s, mon, "monitor.yaml", true, &alloc, d);
	return 0;
}
