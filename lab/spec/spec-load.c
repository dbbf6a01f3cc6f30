/* SPDX-License-Identifier: MIT */
/*
 * lab.yaml -> struct spec. Three passes over the node tree: includes are
 * merged, ${vars} substituted, then each section is read into the typed
 * model with its keys, types and units checked. Cross references and
 * semantic rules are in spec-check.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/path.h"
#include "../util/units.h"
#include "getters.h"
#include "spec.h"
#include "../util/banned.h"

#define MAX_INCLUDE_DEPTH 16

struct ctx {
	struct spec *s;
	struct diags *d;
	const struct spec_load_opts *opts;
	struct node *vars; /* merged "vars" map, borrowed */
};

/* One error per node: a value whose ${var} failed is not reported again as a bad size. */
#define err(c, node, ...) node_err((c)->d, node, __VA_ARGS__)

/* ---- small typed getters ---- */

static bool want_kind(struct ctx *c, const struct node *n, enum node_kind k, const char *what)
{
	return node_want(c->d, n, k, what);
}

static void check_keys(struct ctx *c, const struct node *map, const char *const *allowed,
		       size_t nallowed, const char *what)
{
	node_check_keys(map, allowed, nallowed, what, c->d);
}

/* `at`: the node to point at, usually the key that names the entry. */
static void require_key(struct ctx *c, const struct node *map, const struct node *at, const char *key,
			const char *what)
{
	if (!node_map_get(map, key))
		err(c, at, "%s needs '%s'", what, key);
}

#define get_string(c, n, what) node_get_string((c)->d, (n), (what))
#define get_uint(c, n, what, min, max, ret) node_get_uint((c)->d, (n), (what), (min), (max), (ret))
#define get_size(c, n, what, ret) node_get_size((c)->d, (n), (what), (ret))
#define get_duration(c, n, what, ret) node_get_duration((c)->d, (n), (what), (ret))
#define get_bool(c, n, what, ret) node_get_bool((c)->d, (n), (what), (ret))

static char *resolve_path(const struct node *n)
{
	_cleanup_free_ char *dir = path_dirname(n->pos.file);

	return path_join_user(dir, n->scalar);
}

/*
 * A path lab.yaml names (`what`: "include", "patch", ...), resolved; in a
 * snapshot's lab.yaml (opts->confine), NULL after the refusal of one the
 * snapshot does not list, before anything opens it.
 */
static char *confined_path(struct ctx *c, const struct node *n, const char *what, bool folder)
{
	_cleanup_free_ char *path = resolve_path(n);
	const char *why;

	if (c->opts && c->opts->confine && (why = spec_confine_refuses(c->opts->confine, path, folder))) {
		spec_confine_refused(c->d, n, what, why);
		return NULL;
	}
	return TAKE_PTR(path);
}

/*
 * A reference longer than any name (a kernel's "@step" aside) is said to be
 * one, not reported as unknown with all of its text.
 */
static bool ref_length_ok(struct ctx *c, const struct node *n)
{
	size_t len = strcspn(n->scalar, "@");

	if (len <= STR_NAME_MAX)
		return true;
	err(c, n, "name too long (%zu characters, at most %d)", len, STR_NAME_MAX);
	return false;
}

static void refs_push(struct ctx *c, struct spec_refs *r, const struct node *n)
{
	if (!ref_length_ok(c, n))
		return;
	GROW(r->v, r->alloc, r->n + 1);
	r->v[r->n].name = xstrdup(n->scalar);
	r->v[r->n].pos = n->pos;
	r->n++;
}

/* A name or a list of names; each checked to be a plain identifier. */
static void get_refs(struct ctx *c, const struct node *n, const char *what, struct spec_refs *ret)
{
	if (n->kind == NODE_SCALAR) {
		if (node_is_null(n))
			err(c, n, "%s must not be empty", what);
		else
			refs_push(c, ret, n);
		return;
	}
	if (!want_kind(c, n, NODE_SEQ, what))
		return;
	for (size_t i = 0; i < n->n; i++) {
		const struct node *it = n->items[i];

		if (!want_kind(c, it, NODE_SCALAR, what) || node_is_null(it)) {
			if (it->kind == NODE_SCALAR)
				err(c, it, "%s must not be empty", what);
			continue;
		}
		for (size_t j = 0; j < ret->n; j++)
			if (streq(ret->v[j].name, it->scalar)) {
				err(c, it, "'%s' is listed twice in %s", it->scalar, what);
				goto next;
			}
		refs_push(c, ret, it);
next:;
	}
}

static void ref_set(struct ctx *c, struct spec_ref *r, const struct node *n)
{
	if (!ref_length_ok(c, n))
		return;
	r->name = xstrdup(n->scalar);
	r->pos = n->pos;
}

static bool check_name(struct ctx *c, const struct node *key, const char *what)
{
	size_t len = strlen(key->scalar);

	if (len > STR_NAME_MAX) {
		err(c, key, "%s name too long (%zu characters, at most %d)", what, len, STR_NAME_MAX);
		return false;
	}
	if (str_is_name(key->scalar) && !strchr(key->scalar, '@'))
		return true;
	err(c, key, "%s name '%s' must start with a letter or digit and use only letters, digits, '-', '_' and '.'",
	    what, key->scalar);
	return false;
}

/* ---- includes and vars ---- */

static const char *const top_keys[] = {
	"version", "include", "vars", "settings", "engine", "sources", "kernels",
	"topologies", "images", "hosts", "experiments",
};

/* Sections whose entries are named objects: includes add entries. */
static bool is_named_section(const char *k)
{
	return streq(k, "sources") || streq(k, "kernels") || streq(k, "topologies") ||
	       streq(k, "images") || streq(k, "hosts") || streq(k, "experiments") || streq(k, "vars");
}

static void merge_section(struct ctx *c, struct node *into, struct node *from)
{
	for (size_t i = 0; i < from->n; i++) {
		long j = node_map_index(into, from->keys[i]->scalar);

		if (j >= 0) {
			const struct pos *p = &into->keys[j]->pos;

			err(c, from->keys[i], "'%s' is already defined at %s:%u:%u", from->keys[i]->scalar,
			    p->file, p->line, p->col);
			continue;
		}
		node_map_append(into, from->keys[i], from->items[i]);
		from->keys[i] = from->items[i] = NULL;
	}
}

static void load_includes(struct ctx *c, struct node *root, struct strv *stack, unsigned depth);

/* Merge an included document's sections into root. */
static void merge_document(struct ctx *c, struct node *root, struct node *doc)
{
	for (size_t i = 0; i < doc->n; i++) {
		struct node *k = doc->keys[i], *v = doc->items[i];
		long j = node_map_index(root, k->scalar);

		if (streq(k->scalar, "include"))
			continue; /* handled recursively before the merge */
		if (streq(k->scalar, "version")) {
			continue; /* checked in the included file itself */
		}
		if (j < 0) {
			node_map_append(root, k, v);
			doc->keys[i] = doc->items[i] = NULL;
			continue;
		}
		if (is_named_section(k->scalar) && v->kind == NODE_MAP && root->items[j]->kind == NODE_MAP) {
			merge_section(c, root->items[j], v);
			continue;
		}
		err(c, k, "'%s' is already set at %s:%u:%u; only named sections can be merged by include",
		    k->scalar, root->keys[j]->pos.file, root->keys[j]->pos.line, root->keys[j]->pos.col);
	}
}

static void load_includes(struct ctx *c, struct node *root, struct strv *stack, unsigned depth)
{
	long idx = node_map_index(root, "include");
	struct node *inc;
	struct node *list;

	if (idx < 0)
		return;
	inc = root->items[idx];
	if (inc->kind == NODE_SCALAR) {
		list = node_new(NODE_SEQ, &inc->pos);
		node_seq_append(list, node_copy(inc));
	} else if (inc->kind == NODE_SEQ) {
		list = node_copy(inc);
	} else {
		err(c, inc, "include must be a file name or a list of file names");
		return;
	}
	for (size_t i = 0; i < list->n; i++) {
		struct node *it = list->items[i];
		_cleanup_free_ char *path = NULL;
		_cleanup_node_ struct node *doc = NULL;

		if (it->kind != NODE_SCALAR || node_is_null(it)) {
			err(c, it, "include must list file names");
			continue;
		}
		/* a snapshot's refusal first: the fuzzer, which reads no include, sees it too */
		if (!(path = confined_path(c, it, "include", false)))
			continue;
		if (c->opts && c->opts->no_include) {
			err(c, it, "include is not allowed here");
			continue;
		}
		if (strv_contains(stack, path)) {
			err(c, it, "include cycle: '%s' includes this file back", it->scalar);
			continue;
		}
		if (depth >= MAX_INCLUDE_DEPTH) {
			err(c, it, "includes nested deeper than %d", MAX_INCLUDE_DEPTH);
			continue;
		}
		if (!path_is_file(path)) {
			err(c, it, "included file '%s' does not exist", it->scalar);
			continue;
		}
		doc = node_parse_file(&c->s->files, path, c->d);
		if (!doc)
			continue;
		if (doc->kind != NODE_MAP) {
			err(c, doc, "an included file must be a mapping of lab.yaml sections");
			continue;
		}
		strv_push(stack, path);
		load_includes(c, doc, stack, depth + 1);
		free(stack->v[--stack->n]);
		stack->v[stack->n] = NULL;
		check_keys(c, doc, top_keys, ELEMENTSOF(top_keys), "an included file");
		merge_document(c, root, doc);
	}
	node_free(list);
}

static const struct node *var_lookup(struct ctx *c, const char *name, size_t len)
{
	if (!c->vars)
		return NULL;
	for (size_t i = 0; i < c->vars->n; i++)
		if (strlen(c->vars->keys[i]->scalar) == len && strneq(c->vars->keys[i]->scalar, name, len))
			return c->vars->items[i];
	return NULL;
}

/* Expand ${name} and ${env:NAME} in s; "$${" is a literal "${". */
static char *expand(struct ctx *c, const struct node *n, const char *s, unsigned depth)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	const char *p = s;

	while (*p) {
		const char *end, *name;
		size_t len;

		if (p[0] == '$' && p[1] == '$' && p[2] == '{') {
			strbuf_addstr(&sb, "${");
			p += 3;
			continue;
		}
		if (p[0] != '$' || p[1] != '{') {
			strbuf_addch(&sb, *p++);
			continue;
		}
		name = p + 2;
		end = strchr(name, '}');
		if (!end) {
			err(c, n, "unterminated '${' in '%s'", s);
			return NULL;
		}
		len = (size_t)(end - name);
		if (len > 4 && strneq(name, "env:", 4)) {
			_cleanup_free_ char *ev = xstrndup(name + 4, len - 4);
			const char *val = getenv(ev);

			if (!val) {
				err(c, n, "environment variable '%s' is not set", ev);
				return NULL;
			}
			strbuf_addstr(&sb, val);
		} else {
			const struct node *v = var_lookup(c, name, len);
			_cleanup_free_ char *sub = NULL;

			if (!v) {
				_cleanup_free_ char *nm = xstrndup(name, len);
				const char **cands = xcalloc(c->vars ? c->vars->n + 1 : 1, sizeof(char *));
				const char *hint;

				for (size_t i = 0; c->vars && i < c->vars->n; i++)
					cands[i] = c->vars->keys[i]->scalar;
				hint = str_suggest(nm, cands, c->vars ? c->vars->n : 0);
				if (hint)
					err(c, n, "undefined variable '%s' (did you mean '%s'?)", nm, hint);
				else
					err(c, n, "undefined variable '%s'", nm);
				free(cands);
				return NULL;
			}
			if (v->kind != NODE_SCALAR) {
				err(c, n, "variable '%.*s' is not a scalar", (int)len, name);
				return NULL;
			}
			if (depth > 8) {
				err(c, n, "variables refer to each other too deeply (a cycle?)");
				return NULL;
			}
			sub = expand(c, n, v->scalar, depth + 1);
			if (!sub)
				return NULL;
			strbuf_addstr(&sb, sub);
		}
		p = end + 1;
	}
	return strbuf_detach(&sb, NULL);
}

static void substitute(struct ctx *c, struct node *n)
{
	if (n->kind == NODE_SCALAR) {
		char *x;

		if (!strchr(n->scalar, '$'))
			return;
		x = expand(c, n, n->scalar, 0);
		if (x) {
			free(n->scalar);
			n->scalar = x;
		} else {
			n->poisoned = true;
		}
		return;
	}
	for (size_t i = 0; i < n->n; i++)
		substitute(c, n->items[i]);
}

/* ---- sections ---- */

static void load_settings(struct ctx *c, const struct node *n)
{
	static const char *const keys[] = { "cache", "results", "workloads" };

	if (!want_kind(c, n, NODE_MAP, "settings"))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), "settings");
	for (size_t i = 0; i < n->n; i++) {
		const char *k = n->keys[i]->scalar;
		const struct node *v = n->items[i];
		char **dst = streq(k, "cache") ? &c->s->settings.cache
			     : streq(k, "results") ? &c->s->settings.results
			     : streq(k, "workloads") ? &c->s->settings.catalogue : NULL;
		_cleanup_free_ char *what = NULL;
		_cleanup_free_ char *val = NULL;

		if (!dst)
			continue;
		what = xasprintf("settings.%s", k);
		val = get_string(c, v, what);
		if (val)
			/* the catalogue is the snapshot's own; the cache and results are this machine's */
			*dst = dst == &c->s->settings.catalogue ? confined_path(c, v, what, true) : resolve_path(v);
	}
}

/* ---- engine ---- */

static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* A Slurm name (partition, account, ...): it becomes one sbatch argument. */
static void load_engine_name(struct ctx *c, const struct node *v, const char *key, char **ret)
{
	_cleanup_free_ char *what = xasprintf("engine.%s", key);
	_cleanup_free_ char *s = get_string(c, v, what);

	if (!s)
		return;
	if (s[0] == '-' || strchr(s, ' ') || has_control(s)) {
		err(c, v, "%s '%s' must not start with '-' or contain spaces or control characters: it becomes an "
			  "sbatch argument", what, s);
		return;
	}
	free(*ret);
	*ret = TAKE_PTR(s);
}

/* A path written relative to its file's folder, made absolute: the nodes do not share lab's folder. */
static char *absolute_path(struct ctx *c, const struct node *v)
{
	_cleanup_free_ char *p = resolve_path(v);
	_cleanup_free_ char *cwd = NULL;

	if (p[0] == '/')
		return TAKE_PTR(p);
	cwd = getcwd(NULL, 0);
	if (!cwd) {
		err(c, v, "cannot make '%s' absolute: %s", v->scalar, strerror(errno));
		return NULL;
	}
	return path_join(cwd, p);
}

static void load_engine_spool(struct ctx *c, struct spec_engine *e, const struct node *v)
{
	_cleanup_free_ char *s = get_string(c, v, "engine.spool");

	if (!s)
		return;
	if (has_control(s)) {
		err(c, v, "engine.spool '%s' must not contain control characters", s);
		return;
	}
	e->spool = absolute_path(c, v);
}

/* sbatch: the site's own options, each one argument: --gres=gpu:1, --exclusive. */
static void load_engine_sbatch(struct ctx *c, struct spec_engine *e, const struct node *v)
{
	const struct node *const *items = (const struct node *const *)v->items;
	size_t n = v->n;

	if (v->kind == NODE_SCALAR) {
		items = &v;
		n = 1;
	} else if (!want_kind(c, v, NODE_SEQ, "engine.sbatch")) {
		return;
	}
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *s = get_string(c, items[i], "an engine.sbatch option");

		if (!s)
			continue;
		if (!str_startswith(s, "--") || !s[2] || s[2] == '-' || s[2] == '=' || has_control(s)) {
			err(c, items[i], "engine.sbatch option '%s' must be one sbatch long option such as --gres=gpu:1 "
					 "(starting with '--', no control characters)", s);
			continue;
		}
		strv_push(&e->sbatch, s);
	}
}

static void load_engine_type(struct ctx *c, struct spec_engine *e, const struct node *v, bool *ret_ok)
{
	static const char *const types[] = { [SPEC_ENGINE_LOCAL] = "local", [SPEC_ENGINE_SLURM] = "slurm" };
	const char *hint;

	*ret_ok = false;
	if (!want_kind(c, v, NODE_SCALAR, "engine.type"))
		return;
	for (size_t i = 0; i < ELEMENTSOF(types); i++)
		if (streq(v->scalar, types[i])) {
			e->type = (enum spec_engine_type)i;
			*ret_ok = true;
			return;
		}
	hint = str_suggest(v->scalar, types, ELEMENTSOF(types));
	if (hint)
		err(c, v, "engine.type must be local or slurm, not '%s' (did you mean '%s'?)", v->scalar, hint);
	else
		err(c, v, "engine.type must be local or slurm, not '%s'", v->scalar);
}

/*
 * engine: where the boots run (see struct spec_engine). `key` is the
 * section's key: errors about the section as a whole point there.
 */
static void load_engine(struct ctx *c, const struct node *key, const struct node *n)
{
	static const char *const keys[] = { "type", "partition", "constraint", "account", "qos", "reservation",
					    "time", "tasks", "spool", "retries", "poll", "sbatch", "lab" };
	static const char *const names[] = { "partition", "constraint", "account", "qos", "reservation" };
	struct spec_engine *e = &c->s->engine;
	char **const name_dst[] = { &e->partition, &e->constraint, &e->account, &e->qos, &e->reservation };
	const struct node *v;
	bool type_ok = true;
	uint64_t usec;

	e->declared = true;
	e->pos = key->pos;
	e->type = SPEC_ENGINE_SLURM;
	if (!want_kind(c, n, NODE_MAP, "engine"))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), "engine");
	if ((v = node_map_get(n, "type")))
		load_engine_type(c, e, v, &type_ok);
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if ((v = node_map_get(n, names[i])))
			load_engine_name(c, v, names[i], name_dst[i]);
	if ((v = node_map_get(n, "time")) && get_duration(c, v, "engine.time", &usec) == 0) {
		if (usec && usec < 60ULL * 1000000)
			err(c, v, "engine.time must be at least 1m (Slurm counts minutes), or 0 for the partition's "
				  "limit, not '%s'", v->scalar);
		else
			e->time_limit_sec = (usec + 999999) / 1000000;
	}
	if ((v = node_map_get(n, "tasks")))
		get_uint(c, v, "engine.tasks", 0, 1000000, &e->max_tasks);
	if ((v = node_map_get(n, "spool")))
		load_engine_spool(c, e, v);
	if ((v = node_map_get(n, "retries")))
		get_uint(c, v, "engine.retries", 0, 100, &e->retries);
	if ((v = node_map_get(n, "poll")) && get_duration(c, v, "engine.poll", &usec) == 0) {
		if (usec < 1000000 || usec > 3600ULL * 1000000)
			err(c, v, "engine.poll must be from 1s to 1h, not '%s'", v->scalar);
		else
			e->poll_sec = (unsigned)(usec / 1000000);
	}
	if ((v = node_map_get(n, "sbatch")))
		load_engine_sbatch(c, e, v);
	if ((v = node_map_get(n, "lab"))) {
		_cleanup_free_ char *s = get_string(c, v, "engine.lab");

		if (s && (s[0] != '/' || has_control(s)))
			err(c, v, "engine.lab must be an absolute path (lab's executable on the nodes), not '%s'", s);
		else if (s)
			e->lab = TAKE_PTR(s);
	}
	if (type_ok && e->type == SPEC_ENGINE_SLURM && !node_map_get(n, "spool"))
		err(c, key, "engine: type slurm needs spool: (a directory the head and every node see)");
}

static void load_source(struct ctx *c, struct spec_source *src, const struct node *key, const struct node *n)
{
	static const char *const keys[] = { "type", "package", "path", "url", "ref" };
	static const char *const types[] = { "debian", "tarball", "directory", "git" };
	const struct node *t;
	_cleanup_free_ char *what = xasprintf("source '%s'", key->scalar);

	src->name = xstrdup(key->scalar);
	src->pos = key->pos;
	src->type = SOURCE_DEBIAN;
	if (!want_kind(c, n, NODE_MAP, what))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), what);
	t = node_map_get(n, "type");
	if (t) {
		size_t i;

		for (i = 0; i < ELEMENTSOF(types); i++)
			if (t->kind == NODE_SCALAR && streq(t->scalar, types[i]))
				break;
		if (i == ELEMENTSOF(types)) {
			const char *hint = t->kind == NODE_SCALAR ? str_suggest(t->scalar, types, ELEMENTSOF(types)) : NULL;

			err(c, t, "source type must be debian, tarball, directory or git%s%s%s",
			    hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
			return;
		}
		src->type = (enum source_type)i;
	} else if (node_map_get(n, "url")) {
		src->type = SOURCE_GIT;
	} else if (node_map_get(n, "path")) {
		src->type = SOURCE_DIRECTORY;
	}
	for (size_t i = 0; i < n->n; i++) {
		const char *k = n->keys[i]->scalar;
		const struct node *v = n->items[i];

		if (streq(k, "package"))
			src->package = get_string(c, v, "package");
		else if (streq(k, "path")) {
			_cleanup_free_ char *p = get_string(c, v, "path");

			if (p)
				src->path = resolve_path(v);
		} else if (streq(k, "url"))
			src->url = get_string(c, v, "url");
		else if (streq(k, "ref"))
			src->ref = get_string(c, v, "ref");
	}
	switch (src->type) {
	case SOURCE_DEBIAN:
		if (!src->package)
			src->package = xstrdup("linux-source-6.1");
		if (src->path || src->url)
			err(c, key, "a debian source takes 'package', not 'path' or 'url'");
		break;
	case SOURCE_TARBALL:
	case SOURCE_DIRECTORY:
		require_key(c, n, key, "path", what);
		break;
	case SOURCE_GIT:
		require_key(c, n, key, "url", what);
		require_key(c, n, key, "ref", what);
		break;
	}
}

static void load_require(struct ctx *c, struct spec_kernel *k, const struct node *n)
{
	if (!want_kind(c, n, NODE_MAP, "require"))
		return;
	k->require = xcalloc(n->n, sizeof(*k->require));
	for (size_t i = 0; i < n->n; i++) {
		const struct node *key = n->keys[i], *v = n->items[i];
		const char *sym = key->scalar;
		bool ok = str_startswith(sym, "CONFIG_") && sym[7];

		for (const char *p = sym; ok && *p; p++)
			ok = (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
			     (*p >= 'a' && *p <= 'z');
		if (!ok) {
			err(c, key, "require takes kernel config symbols such as CONFIG_FAIR_GROUP_SCHED, not '%s'", sym);
			continue;
		}
		if (v->kind != NODE_SCALAR || node_is_null(v)) {
			err(c, v, "the required value of %s must be y, m, n or a literal value", sym);
			continue;
		}
		k->require[k->nrequire].symbol = xstrdup(sym);
		/* YAML 1.1 readers would turn y/n into booleans; lab keeps Kconfig's words */
		k->require[k->nrequire].value = xstrdup(v->scalar);
		k->require[k->nrequire].pos = key->pos;
		k->nrequire++;
	}
}

/*
 * patches: or config: (`what`), a file each of `item`; a scalar is one
 * file, or with `folder` a folder ("patch folder"). False when a snapshot's
 * lab.yaml named one the snapshot does not list (refused, not kept).
 */
static bool load_paths(struct ctx *c, const struct node *n, const char *what, const char *item, const char *folder,
		       struct strv *ret, struct pos *ret_pos)
{
	bool ok = true;
	char *p;

	*ret_pos = n->pos;
	if (n->kind == NODE_SCALAR) {
		if (node_is_null(n)) {
			err(c, n, "%s must not be empty", what);
			return true;
		}
		if (!(p = confined_path(c, n, folder ? folder : item, folder)))
			return false;
		strv_push_take(ret, p);
		return true;
	}
	if (!want_kind(c, n, NODE_SEQ, what))
		return true;
	if (!n->n)
		err(c, n, "%s lists no files", what);
	for (size_t i = 0; i < n->n; i++) {
		if (n->items[i]->kind != NODE_SCALAR || node_is_null(n->items[i])) {
			err(c, n->items[i], "%s must list file names", what);
			continue;
		}
		if ((p = confined_path(c, n->items[i], item, false)))
			strv_push_take(ret, p);
		else
			ok = false;
	}
	return ok;
}

static void load_kernel(struct ctx *c, struct spec_kernel *k, const struct node *key, const struct node *n)
{
	static const char *const keys[] = { "source", "from", "start", "patches", "config", "require", "cmdline", "sweep" };
	_cleanup_free_ char *what = xasprintf("kernel '%s'", key->scalar);
	bool patches_ok = true;

	k->name = xstrdup(key->scalar);
	k->pos = key->pos;
	if (!want_kind(c, n, NODE_MAP, what))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), what);
	for (size_t i = 0; i < n->n; i++) {
		const char *kk = n->keys[i]->scalar;
		const struct node *v = n->items[i];

		if (streq(kk, "source") || streq(kk, "from")) {
			_cleanup_free_ char *s = get_string(c, v, kk);

			if (s)
				ref_set(c, streq(kk, "source") ? &k->source : &k->from, v);
		} else if (streq(kk, "patches")) {
			patches_ok = load_paths(c, v, "patches", "patch", "patch folder", &k->patches, &k->patches_pos);
			k->patches_dir = v->kind == NODE_SCALAR;
		} else if (streq(kk, "config")) {
			load_paths(c, v, "config", "config fragment", NULL, &k->configs, &k->configs_pos);
		} else if (streq(kk, "start")) {
			_cleanup_free_ char *st = get_string(c, v, "start");

			if (!st)
				continue;
			if (!streq(st, "defconfig") && !streq(st, "tinyconfig") && !streq(st, "allnoconfig")) {
				err(c, v, "start must be defconfig, tinyconfig or allnoconfig, not '%s'", st);
				continue;
			}
			k->start = TAKE_PTR(st);
		} else if (streq(kk, "require")) {
			load_require(c, k, v);
		} else if (streq(kk, "cmdline")) {
			k->cmdline = get_string(c, v, "cmdline");
		} else if (streq(kk, "sweep")) {
			k->sweep_pos = v->pos;
			if (!want_kind(c, v, NODE_SEQ, "sweep"))
				continue;
			k->sweep = xcalloc(v->n, sizeof(unsigned));
			for (size_t j = 0; j < v->n; j++) {
				unsigned step;

				if (get_uint(c, v->items[j], "a sweep step", 1, 999, &step) < 0)
					continue;
				if (k->nsweep && step <= k->sweep[k->nsweep - 1]) {
					err(c, v->items[j], "sweep steps must increase: %u after %u", step,
					    k->sweep[k->nsweep - 1]);
					continue;
				}
				k->sweep[k->nsweep++] = step;
			}
		}
	}
	if (k->source.name && k->from.name)
		err(c, key, "%s has both 'source' and 'from'; a variant starts from one of them", what);
	if (k->nsweep && !k->patches.n && patches_ok)
		err(c, node_map_get(n, "sweep"), "%s sweeps a patch series but has no 'patches'", what);
}

static void load_cells(struct ctx *c, struct spec_topology *t, const struct node *n)
{
	static const char *const keys[] = { "cpus", "memory" };

	if (!want_kind(c, n, NODE_SEQ, "numa"))
		return;
	if (n->n == 0 || n->n > SPEC_MAX_CELLS) {
		err(c, n, "numa must list from 1 to %d cells", SPEC_MAX_CELLS);
		return;
	}
	t->cells = xcalloc(n->n, sizeof(*t->cells));
	for (size_t i = 0; i < n->n; i++) {
		const struct node *cell = n->items[i], *cpus, *mem;
		struct spec_cell *x = &t->cells[t->ncells++];

		x->pos = cell->pos;
		if (!want_kind(c, cell, NODE_MAP, "a numa cell"))
			continue;
		check_keys(c, cell, keys, ELEMENTSOF(keys), "a numa cell");
		require_key(c, cell, cell, "cpus", "a numa cell");
		require_key(c, cell, cell, "memory", "a numa cell");
		cpus = node_map_get(cell, "cpus");
		mem = node_map_get(cell, "memory");
		if (cpus && want_kind(c, cpus, NODE_SCALAR, "cpus")) {
			int r = parse_cpulist(cpus->scalar, x->cpus, SPEC_MAX_VCPUS, NULL);

			if (r == -ERANGE)
				err(c, cpus, "cpus '%s' names a vCPU above %d", cpus->scalar, SPEC_MAX_VCPUS - 1);
			else if (r < 0)
				err(c, cpus, "cpus must be a cpu list such as 0-3,8, not '%s'", cpus->scalar);
			else
				x->cpulist = xstrdup(cpus->scalar);
		}
		if (mem)
			get_size(c, mem, "memory", &x->memory);
	}
}

static void load_distances(struct ctx *c, struct spec_topology *t, const struct node *n)
{
	size_t m = n->kind == NODE_SEQ ? n->n : 0;

	if (!want_kind(c, n, NODE_SEQ, "distances"))
		return;
	t->distances = xcalloc(m * m + 1, sizeof(unsigned));
	t->ndistances = m;
	for (size_t i = 0; i < m; i++) {
		const struct node *row = n->items[i];

		if (!want_kind(c, row, NODE_SEQ, "a row of distances"))
			continue;
		if (row->n != m) {
			err(c, row, "distances must be a %zux%zu matrix: row %zu has %zu %s", m, m, i + 1, row->n,
			    row->n == 1 ? "entry" : "entries");
			continue;
		}
		for (size_t j = 0; j < m; j++)
			get_uint(c, row->items[j], "a distance", 10, 255, &t->distances[i * m + j]);
	}
}

/* none | auto | a host cpu list (pinning:, emulator:); -1 when it is none of them. */
static int load_pin(struct ctx *c, const struct node *v, const char *what, enum pin_policy *ret, char **ret_cpus)
{
	uint8_t bits[SPEC_MAX_VCPUS / 8] = { 0 };

	if (!want_kind(c, v, NODE_SCALAR, what))
		return -1;
	if (streq(v->scalar, "none"))
		*ret = PIN_NONE;
	else if (streq(v->scalar, "auto"))
		*ret = PIN_AUTO;
	else if (parse_cpulist(v->scalar, bits, SPEC_MAX_VCPUS, NULL) == 0) {
		*ret = PIN_LIST;
		*ret_cpus = xstrdup(v->scalar);
	} else {
		err(c, v, "%s must be none, auto or a host cpu list, not '%s'", what, v->scalar);
		return -1;
	}
	return 0;
}

static void load_topology(struct ctx *c, struct spec_topology *t, const struct node *key, const struct node *n)
{
	static const char *const keys[] = { "sockets", "dies", "cores", "threads", "vcpus", "memory", "numa",
					    "distances", "asymmetric", "pinning", "emulator", "cpu", "hugepages", "timing" };
	_cleanup_free_ char *what = xasprintf("topology '%s'", key->scalar);
	const struct node *v;

	t->name = xstrdup(key->scalar);
	t->pos = key->pos;
	t->sockets = t->dies = t->cores = t->threads = 1;
	t->cpu = xstrdup("auto");
	if (!want_kind(c, n, NODE_MAP, what))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), what);
	require_key(c, n, key, "memory", what);
	if ((v = node_map_get(n, "sockets")))
		get_uint(c, v, "sockets", 1, 64, &t->sockets);
	if ((v = node_map_get(n, "dies")))
		get_uint(c, v, "dies", 1, 64, &t->dies);
	if ((v = node_map_get(n, "cores")))
		get_uint(c, v, "cores", 1, SPEC_MAX_VCPUS, &t->cores);
	if ((v = node_map_get(n, "threads")))
		get_uint(c, v, "threads", 1, 8, &t->threads);
	if ((v = node_map_get(n, "vcpus"))) {
		unsigned vcpus, per = t->sockets * t->dies * t->threads;

		/* vcpus alone: cores per socket follow; with cores: a cross-check */
		if (get_uint(c, v, "vcpus", 1, SPEC_MAX_VCPUS, &vcpus) == 0) {
			if (node_map_get(n, "cores") && vcpus != spec_topology_vcpus(t))
				err(c, v, "vcpus is %u but sockets x dies x cores x threads is %u", vcpus,
				    spec_topology_vcpus(t));
			else if (vcpus % per)
				err(c, v, "%u vcpus do not divide into %u sockets x %u dies x %u threads", vcpus,
				    t->sockets, t->dies, t->threads);
			else
				t->cores = vcpus / per;
		}
	}
	if ((v = node_map_get(n, "memory")))
		get_size(c, v, "memory", &t->memory);
	if ((v = node_map_get(n, "numa")))
		load_cells(c, t, v);
	if ((v = node_map_get(n, "distances")))
		load_distances(c, t, v);
	if ((v = node_map_get(n, "asymmetric")))
		get_bool(c, v, "asymmetric", &t->asymmetric);
	if ((v = node_map_get(n, "pinning")))
		load_pin(c, v, "pinning", &t->pin, &t->pin_cpus);
	if ((v = node_map_get(n, "emulator")) && load_pin(c, v, "emulator", &t->emulator, &t->emulator_cpus) == 0 &&
	    t->emulator == PIN_AUTO && t->pin == PIN_NONE)
		err(c, v, "emulator: auto puts QEMU's threads on the host CPUs the vCPUs leave: it needs pinning: "
			  "auto or a host cpu list");
	if ((v = node_map_get(n, "cpu"))) {
		char *s = get_string(c, v, "cpu");

		if (s) {
			free(t->cpu);
			t->cpu = s;
		}
	}
	if ((v = node_map_get(n, "hugepages")) && want_kind(c, v, NODE_SCALAR, "hugepages")) {
		if (streq(v->scalar, "2M") || streq(v->scalar, "1G"))
			t->hugepages = xstrdup(v->scalar);
		else if (!streq(v->scalar, "none"))
			err(c, v, "hugepages must be none, 2M or 1G, not '%s'", v->scalar);
	}
	if ((v = node_map_get(n, "timing")) && want_kind(c, v, NODE_SCALAR, "timing")) {
		t->timing_pos = v->pos;
		if (streq(v->scalar, "icount"))
			t->timing = TIMING_ICOUNT;
		else if (!streq(v->scalar, "host"))
			err(c, v, "timing must be host or icount, not '%s'", v->scalar);
	}
}

static void load_image(struct ctx *c, struct spec_image *im, const struct node *key, const struct node *n)
{
	static const char *const keys[] = { "recipe" };
	_cleanup_free_ char *what = xasprintf("image '%s'", key->scalar);
	const struct node *v;

	im->name = xstrdup(key->scalar);
	im->pos = key->pos;
	if (!want_kind(c, n, NODE_MAP, what))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), what);
	require_key(c, n, key, "recipe", what);
	if ((v = node_map_get(n, "recipe"))) {
		_cleanup_free_ char *s = get_string(c, v, "recipe");

		if (s)
			im->recipe = confined_path(c, v, "image recipe", false);
	}
}

/* "user@host:port", "host", "[::1]:22"; refuses what ssh would read as an option. */
static int parse_ssh_target(struct ctx *c, struct spec_host *h, const struct node *v, const char *s)
{
	const char *at = strchr(s, '@'), *hostpart = at ? at + 1 : s;
	const char *colon;
	_cleanup_free_ char *addr = NULL;
	unsigned port = 22;

	if (at) {
		if (at == s || *s == '-') {
			err(c, v, "ssh user in '%s' is empty or starts with '-'", s);
			return -EINVAL;
		}
		h->user = xstrndup(s, (size_t)(at - s));
	}
	if (*hostpart == '[') {
		const char *close = strchr(hostpart, ']');

		if (!close) {
			err(c, v, "unterminated '[' in ssh address '%s'", s);
			return -EINVAL;
		}
		addr = xstrndup(hostpart + 1, (size_t)(close - hostpart - 1));
		colon = close[1] == ':' ? close + 1 : NULL;
		if (close[1] && !colon) {
			err(c, v, "unexpected text after ']' in '%s'", s);
			return -EINVAL;
		}
	} else {
		colon = strrchr(hostpart, ':');
		addr = colon ? xstrndup(hostpart, (size_t)(colon - hostpart)) : xstrdup(hostpart);
	}
	if (colon) {
		uint64_t p;

		if (parse_uint(colon + 1, 65535, &p) < 0 || p == 0) {
			err(c, v, "ssh port in '%s' must be from 1 to 65535", s);
			return -EINVAL;
		}
		port = (unsigned)p;
	}
	if (!*addr || addr[0] == '-' || strpbrk(addr, " \t\n'\"`$;&|<>\\")) {
		err(c, v, "ssh host '%s' is empty, starts with '-' or contains shell characters", addr);
		return -EINVAL;
	}
	h->address = TAKE_PTR(addr);
	h->port = port;
	return 0;
}

/* a libvirt host; a qemu+ssh one also gets the ssh target and folder lab copies files to */
static void load_host_uri(struct ctx *c, struct spec_host *h, const struct node *uri)
{
	h->type = HOST_LIBVIRT;
	h->uri = get_string(c, uri, "uri");
	if (h->uri && !strstr(h->uri, "://"))
		err(c, uri, "uri '%s' is not a libvirt URI such as qemu:///system or qemu+ssh://host/system", h->uri);
	else if (h->uri && str_startswith(h->uri, "qemu+ssh://")) {
		/* a remote hypervisor: lab copies files and reaches guests over the same ssh */
		const char *a = h->uri + strlen("qemu+ssh://");
		_cleanup_free_ char *auth = xstrndup(a, strcspn(a, "/?"));

		if (!*auth)
			err(c, uri, "uri '%s' names no host", h->uri);
		else if (parse_ssh_target(c, h, uri, auth) == 0)
			h->dir = xstrdup("/var/lib/lab");
	} else if (h->uri && !str_startswith(h->uri, "qemu:///")) {
		err(c, uri, "uri '%s': lab reaches other hypervisor hosts over ssh (qemu+ssh://user@host/system), "
			    "where it also copies kernels and disks", h->uri);
	}
}

static void load_host_dir(struct ctx *c, struct spec_host *h, const struct node *v)
{
	_cleanup_free_ char *dir = get_string(c, v, "dir");

	if (!h->dir)
		err(c, v, "dir is the folder lab uses on a remote libvirt host (uri: qemu+ssh://...)");
	else if (dir && (dir[0] != '/' || strstr(dir, "/../") || strpbrk(dir, " \t\n'\"`$;&|<>\\")))
		err(c, v, "dir '%s' must be an absolute path without '..' or shell characters", dir);
	else if (dir) {
		free(h->dir);
		h->dir = TAKE_PTR(dir);
	}
}

static void load_power_cycle(struct ctx *c, struct spec_host *h, const struct node *v)
{
	/* a command lab runs on this machine: never one a bundle or snapshot brought */
	if (c->opts && c->opts->confine) {
		err(c, v, "refused: a snapshot's lab.yaml runs no command on this machine (power-cycle); "
			  "declare the host in a lab.yaml of your own");
		return;
	}
	if (v->kind == NODE_SEQ && v->n) {
		for (size_t i = 0; i < v->n; i++) {
			_cleanup_free_ char *s = get_string(c, v->items[i], "a power-cycle argument");

			if (s)
				strv_push(&h->power_cycle, s);
		}
	} else {
		err(c, v, "power-cycle must be a command as a list of arguments");
	}
}

static void load_host_boot(struct ctx *c, struct spec_host *h, const struct node *v)
{
	static const char *const boots[] = { "kexec", "grub" };
	size_t b;

	for (b = 0; b < ELEMENTSOF(boots); b++)
		if (streq(v->scalar, boots[b]))
			break;
	if (b < ELEMENTSOF(boots)) {
		h->boot = (enum host_boot)b;
	} else {
		const char *hint = str_suggest(v->scalar, boots, ELEMENTSOF(boots));

		err(c, v, "boot '%s' is not kexec or grub%s%s%s", v->scalar, hint ? " (did you mean '" : "",
		    hint ? hint : "", hint ? "'?)" : "");
	}
}

static void load_host(struct ctx *c, struct spec_host *h, const struct node *key, const struct node *n)
{
	static const char *const keys[] = { "uri", "ssh", "identity", "dir", "power-cycle", "cmdline", "boot", "initrd" };
	_cleanup_free_ char *what = xasprintf("host '%s'", key->scalar);
	const struct node *uri, *ssh, *v;

	h->name = xstrdup(key->scalar);
	h->pos = key->pos;
	if (!want_kind(c, n, NODE_MAP, what))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), what);
	uri = node_map_get(n, "uri");
	ssh = node_map_get(n, "ssh");
	if (!!uri == !!ssh) {
		err(c, key, "%s needs exactly one of 'uri' (a libvirt host) or 'ssh' (a bare-metal host)", what);
		return;
	}
	if (uri) {
		load_host_uri(c, h, uri);
	} else {
		h->type = HOST_SSH;
		if (want_kind(c, ssh, NODE_SCALAR, "ssh") && !node_is_null(ssh))
			parse_ssh_target(c, h, ssh, ssh->scalar);
	}
	if ((v = node_map_get(n, "identity"))) {
		_cleanup_free_ char *s = get_string(c, v, "identity");

		if (s)
			h->identity = resolve_path(v);
	}
	if ((v = node_map_get(n, "dir")))
		load_host_dir(c, h, v);
	if ((v = node_map_get(n, "power-cycle")))
		load_power_cycle(c, h, v);
	if ((v = node_map_get(n, "cmdline")))
		h->cmdline = get_string(c, v, "cmdline");
	if ((v = node_map_get(n, "boot")) && want_kind(c, v, NODE_SCALAR, "boot"))
		load_host_boot(c, h, v);
	if ((v = node_map_get(n, "initrd")))
		get_bool(c, v, "initrd", &h->initrd);
	if (h->boot == HOST_BOOT_GRUB && h->cmdline)
		err(c, node_map_get(n, "cmdline"), "cmdline goes with boot: kexec; a GRUB entry takes "
						   "GRUB_CMDLINE_LINUX of the host's /etc/default/grub");
	if (h->type == HOST_LIBVIRT &&
	    (h->power_cycle.n || h->cmdline || node_map_get(n, "boot") || node_map_get(n, "initrd")))
		err(c, key, "power-cycle, cmdline, boot and initrd are for bare-metal (ssh) hosts");
}

static const char *const statistic_names[] = { [SPEC_STAT_WELCH_LOG] = "welch-log",
						[SPEC_STAT_MANN_WHITNEY] = "mann-whitney",
						[SPEC_STAT_BOOTSTRAP] = "bootstrap" };

const char *spec_statistic_name(enum spec_statistic t)
{
	return statistic_names[t];
}

/* welch-log, mann-whitney or bootstrap: 0 and *ret, or -EINVAL after reporting. */
static int get_statistic(struct ctx *c, const struct node *v, enum spec_statistic *ret)
{
	const char *hint;

	if (!want_kind(c, v, NODE_SCALAR, "statistic"))
		return -EINVAL;
	for (size_t i = 0; i < ELEMENTSOF(statistic_names); i++)
		if (streq(v->scalar, statistic_names[i])) {
			*ret = (enum spec_statistic)i;
			return 0;
		}
	hint = str_suggest(v->scalar, statistic_names, ELEMENTSOF(statistic_names));
	if (hint)
		err(c, v, "statistic must be welch-log, mann-whitney or bootstrap, not '%s' (did you mean '%s'?)",
		    v->scalar, hint);
	else
		err(c, v, "statistic must be welch-log, mann-whitney or bootstrap, not '%s'", v->scalar);
	return -EINVAL;
}

static bool node_before(const struct node *a, const struct node *b)
{
	return a->pos.line < b->pos.line || (a->pos.line == b->pos.line && a->pos.col < b->pos.col);
}

/*
 * The mapping form of an expectation: its direction node, the node of the
 * smallest change that matters (mde, or its older spellings min and
 * within; one of them) with the key that gave it, and its statistic.
 */
static int load_expect_map(struct ctx *c, struct spec_expect *x, const struct node *v, const struct node **ret_dir,
			   const struct node **ret_eff, const char **ret_kname)
{
	static const char *const keys[] = { "direction", "mde", "min", "within", "statistic" };
	static const char *const effs[] = { "mde", "min", "within" };
	const struct node *st;

	check_keys(c, v, keys, ELEMENTSOF(keys), "an expectation");
	*ret_dir = node_map_get(v, "direction");
	if (!*ret_dir) {
		err(c, v, "an expectation needs 'direction'");
		return -EINVAL;
	}
	for (size_t i = 0; i < ELEMENTSOF(effs); i++) {
		const struct node *e = node_map_get(v, effs[i]);

		if (!e)
			continue;
		if (*ret_eff) {
			bool e_first = node_before(e, *ret_eff);
			const struct node *first = e_first ? e : *ret_eff;

			err(c, e_first ? *ret_eff : e, "give one of 'mde', 'min' or 'within': '%s' is already given at %u:%u",
			    e_first ? effs[i] : *ret_kname, first->pos.line, first->pos.col);
			return -EINVAL;
		}
		*ret_eff = e;
		*ret_kname = effs[i];
	}
	if ((st = node_map_get(v, "statistic"))) {
		enum spec_statistic t;

		if (get_statistic(c, st, &t) < 0)
			return -EINVAL;
		x->statistic = (int)t;
	}
	return 0;
}

/* The smallest change that matters, as a fraction; kname: the key that gave it. */
static int load_expect_effect(struct ctx *c, struct spec_expect *x, const struct node *eff, const char *kname)
{
	if (eff->kind != NODE_SCALAR || parse_percent(eff->scalar, &x->effect) < 0 || x->effect <= 0) {
		err(c, eff, "%s must be a positive percentage such as 5%%", kname);
		return -EINVAL;
	}
	if (x->dir == EXPECT_UNCHANGED && streq(kname, "min")) {
		err(c, eff, "an 'unchanged' expectation takes 'within', not 'min'");
		return -EINVAL;
	}
	if (x->dir != EXPECT_UNCHANGED && streq(kname, "within")) {
		err(c, eff, "'within' goes with 'unchanged'; use 'min' for the smallest effect");
		return -EINVAL;
	}
	x->has_effect = true;
	return 0;
}

/*
 * expect: metric: increase | decrease | unchanged, or a mapping
 * {direction: D, mde: 5%, statistic: S} (min: and within: are mde's older
 * spellings, for increase/decrease and unchanged).
 */
static void load_expect(struct ctx *c, struct spec_job *job, const struct node *n)
{
	static const char *const dirs[] = { "increase", "decrease", "unchanged" };

	if (!want_kind(c, n, NODE_MAP, "expect"))
		return;
	job->expect = xcalloc(n->n, sizeof(*job->expect));
	for (size_t i = 0; i < n->n; i++) {
		const struct node *key = n->keys[i], *v = n->items[i], *dir = v, *eff = NULL;
		struct spec_expect *x = &job->expect[job->nexpect];
		const char *kname = NULL;
		size_t d;

		x->statistic = -1;
		if (v->kind == NODE_MAP && load_expect_map(c, x, v, &dir, &eff, &kname) < 0)
			continue;
		if (dir->kind != NODE_SCALAR) {
			err(c, dir, "an expectation is increase, decrease or unchanged");
			continue;
		}
		for (d = 0; d < ELEMENTSOF(dirs); d++)
			if (streq(dir->scalar, dirs[d]))
				break;
		if (d == ELEMENTSOF(dirs)) {
			const char *hint = str_suggest(dir->scalar, dirs, ELEMENTSOF(dirs));

			if (hint)
				err(c, dir, "expectation '%s' is not increase, decrease or unchanged (did you mean '%s'?)",
				    dir->scalar, hint);
			else
				err(c, dir, "expectation '%s' is not increase, decrease or unchanged", dir->scalar);
			continue;
		}
		x->dir = (enum expect_dir)d;
		if (eff && load_expect_effect(c, x, eff, kname) < 0)
			continue;
		x->metric = xstrdup(key->scalar);
		x->pos = key->pos;
		job->nexpect++;
	}
}

/* is: "OP NUMBER", a comparison every run of the variant must pass. */
static int load_observe_is(struct ctx *c, struct spec_observe *o, const struct node *is)
{
	static const char *const ops[] = { "==", "<", "<=", ">", ">=" };
	char op[3] = { 0 };
	const char *p = is->kind == NODE_SCALAR ? is->scalar : "";
	size_t d, ol = strspn(p, "=<>");
	char *end;

	if (ol >= 1 && ol <= 2)
		memcpy(op, p, ol);
	for (d = 0; d < ELEMENTSOF(ops); d++)
		if (streq(op, ops[d]))
			break;
	errno = 0;
	o->value = d < ELEMENTSOF(ops) ? strtod(p + ol, &end) : 0;
	if (d == ELEMENTSOF(ops) || errno || end == p + ol || *end) {
		err(c, is, "'is' is a comparison such as \"> 0\" or \"== 0\" (==, <, <=, >, >=, then a number)");
		return -EINVAL;
	}
	o->op = (enum observe_op)(OBSERVE_EQ + d);
	return 0;
}

/* vs-baseline: higher, lower, differs or same, decided against the baseline kernel. */
static int load_observe_vs(struct ctx *c, struct spec_observe *o, const struct node *vs)
{
	static const char *const rel[] = { "higher", "lower", "differs", "same" };
	size_t d;

	for (d = 0; vs->kind == NODE_SCALAR && d < ELEMENTSOF(rel); d++)
		if (streq(vs->scalar, rel[d]))
			break;
	if (vs->kind != NODE_SCALAR || d == ELEMENTSOF(rel)) {
		const char *hint = vs->kind == NODE_SCALAR ? str_suggest(vs->scalar, rel, ELEMENTSOF(rel)) : NULL;

		if (hint)
			err(c, vs, "vs-baseline is higher, lower, differs or same, not '%s' (did you mean '%s'?)",
			    vs->scalar, hint);
		else
			err(c, vs, "vs-baseline is higher, lower, differs or same");
		return -EINVAL;
	}
	o->op = (enum observe_op)(OBSERVE_HIGHER + d);
	return 0;
}

/*
 * observe: a list of mechanism checks:
 *   - metric: zoneinfo-pcp.high_spread_max
 *     kernels: [base]               # optional
 *     is: "== 0"                    # every run of the variant: == < <= > >= NUMBER
 *     says: pcp high stays fixed on the base
 *   - metric: perf-profile.self.cycles-pp.update_cfs_group
 *     vs-baseline: lower            # higher, lower, differs, same: decided, boots as the unit
 *     margin: 5%                    # optional: within it the kernels count as the same
 */
static void load_observe(struct ctx *c, struct spec_experiment *e, const struct node *n)
{
	static const char *const keys[] = { "metric", "kernels", "is", "vs-baseline", "margin", "says" };

	if (!want_kind(c, n, NODE_SEQ, "observe"))
		return;
	e->observe = xcalloc(n->n + 1, sizeof(*e->observe));
	for (size_t i = 0; i < n->n; i++) {
		const struct node *v = n->items[i], *m, *is, *vs, *k, *says, *mg;
		struct spec_observe *o = &e->observe[e->nobserve];

		if (!want_kind(c, v, NODE_MAP, "an observe entry"))
			continue;
		check_keys(c, v, keys, ELEMENTSOF(keys), "an observe entry");
		m = node_map_get(v, "metric");
		is = node_map_get(v, "is");
		vs = node_map_get(v, "vs-baseline");
		if (!m || m->kind != NODE_SCALAR || !*m->scalar) {
			err(c, m ? m : v, "an observe entry needs 'metric', the metric it checks");
			continue;
		}
		if (!is == !vs) {
			err(c, v, "an observe entry takes one of 'is' (\"> 0\") or 'vs-baseline' (higher, lower, differs, same)");
			continue;
		}
		if ((is ? load_observe_is(c, o, is) : load_observe_vs(c, o, vs)) < 0)
			continue;
		if ((mg = node_map_get(v, "margin"))) {
			if (is) {
				err(c, mg, "'margin' goes with 'vs-baseline': an 'is' check holds in every run or fails");
				continue;
			}
			if (mg->kind != NODE_SCALAR || parse_percent(mg->scalar, &o->margin) < 0 || !(o->margin > 0)) {
				err(c, mg, "'margin' is a positive percentage, such as 5%%");
				continue;
			}
		}
		if ((k = node_map_get(v, "kernels")))
			get_refs(c, k, "kernels", &o->kernels);
		if ((says = node_map_get(v, "says")))
			o->says = get_string(c, says, "says");
		o->metric = xstrdup(m->scalar);
		o->pos = m->pos;
		e->nobserve++;
	}
}

static void load_params(struct ctx *c, struct spec_job *job, const struct node *n)
{
	if (!want_kind(c, n, NODE_MAP, "params"))
		return;
	job->params = xcalloc(n->n, sizeof(*job->params));
	for (size_t i = 0; i < n->n; i++) {
		const struct node *key = n->keys[i], *v = n->items[i];
		struct spec_param *p = &job->params[job->nparams];

		if (v->kind == NODE_MAP) {
			err(c, v, "parameter '%s' must be a value or a list of values", key->scalar);
			continue;
		}
		if (v->kind == NODE_SEQ && v->n == 0) {
			err(c, v, "parameter '%s' lists no values", key->scalar);
			continue;
		}
		p->key = xstrdup(key->scalar);
		p->pos = key->pos;
		p->is_list = v->kind == NODE_SEQ;
		p->nvalues = p->is_list ? v->n : 1;
		p->values = xcalloc(p->nvalues, sizeof(char *));
		p->value_pos = xcalloc(p->nvalues, sizeof(struct pos));
		for (size_t j = 0; j < p->nvalues; j++) {
			const struct node *x = p->is_list ? v->items[j] : v;

			p->value_pos[j] = x->pos;
			if (x->kind != NODE_SCALAR) {
				err(c, x, "values of parameter '%s' must be scalars", key->scalar);
				p->values[j] = xstrdup("");
				continue;
			}
			p->values[j] = xstrdup(x->scalar);
		}
		job->nparams++;
	}
}

static void load_job(struct ctx *c, struct spec_job *job, const struct node *n)
{
	static const char *const keys[] = { "workload", "params", "monitors", "expect" };
	const struct node *v;

	job->pos = n->pos;
	if (n->kind == NODE_SCALAR) { /* "- hackbench": the workload with its defaults */
		if (!node_is_null(n))
			ref_set(c, &job->workload, n);
		else
			err(c, n, "a workload entry must not be empty");
		return;
	}
	if (!want_kind(c, n, NODE_MAP, "a workload entry"))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), "a workload entry");
	require_key(c, n, n, "workload", "a workload entry");
	if ((v = node_map_get(n, "workload"))) {
		_cleanup_free_ char *s = get_string(c, v, "workload");

		if (s)
			ref_set(c, &job->workload, v);
	}
	if ((v = node_map_get(n, "params")))
		load_params(c, job, v);
	if ((v = node_map_get(n, "monitors")))
		get_refs(c, v, "monitors", &job->monitors);
	if ((v = node_map_get(n, "expect")))
		load_expect(c, job, v);
}

static void load_boot_mode(struct ctx *c, struct spec_experiment *e, const struct node *v)
{
	e->boot_pos = v->pos;
	if (streq(v->scalar, "per-run"))
		e->boot = BOOT_PER_RUN;
	else if (streq(v->scalar, "once"))
		e->boot = BOOT_ONCE;
	else if (streq(v->scalar, "side-by-side"))
		e->boot = BOOT_SIDE_BY_SIDE;
	else
		err(c, v, "boot must be per-run, once or side-by-side, not '%s'", v->scalar);
}

static void load_sysctl(struct ctx *c, struct spec_experiment *e, const struct node *v)
{
	e->sysctl = xcalloc(v->n, sizeof(*e->sysctl));
	for (size_t i = 0; i < v->n; i++) {
		const struct node *k = v->keys[i], *x = v->items[i];
		bool ok = *k->scalar && k->scalar[0] != '.' && k->scalar[0] != '/';

		for (const char *p = k->scalar; ok && *p; p++)
			ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_' ||
			     *p == '.' || *p == '-' || *p == '/' || (*p >= 'A' && *p <= 'Z');
		if (!ok || strstr(k->scalar, "..")) {
			err(c, k, "'%s' is not a sysctl name such as vm.percpu_pagelist_high_fraction",
			    k->scalar);
			continue;
		}
		if (x->kind != NODE_SCALAR || node_is_null(x)) {
			err(c, x, "sysctl '%s' needs a value", k->scalar);
			continue;
		}
		e->sysctl[e->nsysctl].key = xstrdup(k->scalar);
		e->sysctl[e->nsysctl].value = xstrdup(x->scalar);
		e->sysctl[e->nsysctl].pos = k->pos;
		e->nsysctl++;
	}
}

/* overhead-budget: {MONITOR: PERCENT}; whether each monitor is the
 * experiment's is spec-check's. */
static void load_overhead_budget(struct ctx *c, struct spec_experiment *e, const struct node *v)
{
	e->overhead_budget = xcalloc(v->n, sizeof(*e->overhead_budget));
	for (size_t i = 0; i < v->n; i++) {
		const struct node *k = v->keys[i], *x = v->items[i];
		double f;

		if (x->kind != NODE_SCALAR || parse_percent(x->scalar, &f) < 0 || !(f > 0 && f <= 1)) {
			err(c, x, "overhead-budget of '%s' must be a percentage above 0%% such as 3%%", k->scalar);
			continue;
		}
		e->overhead_budget[e->noverhead_budget++] =
			(struct spec_kv){ .key = xstrdup(k->scalar), .value = xstrdup(x->scalar), .pos = k->pos };
	}
}

/* A probability written 0.05 or 5%, within (lo, hi) or [lo, hi] when closed. */
static int get_probability(struct ctx *c, const struct node *v, const char *what, double lo, double hi, bool closed,
			   double *ret)
{
	double x = 0;
	bool ok = v->kind == NODE_SCALAR && *v->scalar &&
		  (v->scalar[strlen(v->scalar) - 1] == '%' ? parse_percent(v->scalar, &x) : parse_double(v->scalar, &x)) == 0;

	if (ok)
		ok = closed ? x >= lo && x <= hi : x > lo && x < hi;
	if (!ok) {
		if (v->kind == NODE_SCALAR)
			err(c, v, "%s must be a number %s %g %s %g%s, not '%s'", what, closed ? "from" : "between", lo,
			    closed ? "to" : "and", hi, closed ? "" : " (both excluded)", v->scalar);
		else
			err(c, v, "%s must be a number, not %s", what, node_kind_name(v->kind));
		return -EINVAL;
	}
	*ret = x;
	return 0;
}

/* Each key of decide: read into d with its position. */
static void load_decide_keys(struct ctx *c, struct spec_decide *d, const struct node *n)
{
	for (size_t i = 0; i < n->n; i++) {
		const char *k = n->keys[i]->scalar;
		const struct node *v = n->items[i];

		if (streq(k, "alpha") && get_probability(c, v, "decide.alpha", 0, 0.5, false, &d->alpha) == 0)
			d->alpha_pos = v->pos;
		else if (streq(k, "power") && get_probability(c, v, "decide.power", 0.5, 0.99, true, &d->power) == 0)
			d->power_pos = v->pos;
		else if (streq(k, "q") && get_probability(c, v, "decide.q", 0, 0.5, false, &d->q) == 0)
			d->q_pos = v->pos;
		else if (streq(k, "statistic") && get_statistic(c, v, &d->statistic) == 0)
			d->statistic_pos = v->pos;
		else if (streq(k, "min-boots") && get_uint(c, v, "decide.min-boots", 1, 1000, &d->min_boots) == 0)
			d->min_boots_pos = v->pos;
		else if (streq(k, "max-boots") && get_uint(c, v, "decide.max-boots", 2, 1000, &d->max_boots) == 0)
			d->max_boots_pos = v->pos;
		else if (streq(k, "runs-per-boot") &&
			 get_uint(c, v, "decide.runs-per-boot", 1, 1000, &d->runs_per_boot) == 0)
			d->runs_per_boot_pos = v->pos;
		else if (streq(k, "max-runs") && get_uint(c, v, "decide.max-runs", 0, 1000000, &d->max_runs) == 0)
			d->max_runs_pos = v->pos;
		else if (streq(k, "max-time") && get_duration(c, v, "decide.max-time", &d->max_time_usec) == 0) {
			d->max_time_pos = v->pos;
			if (d->max_time_usec < 1000000)
				err(c, v, "decide.max-time must be at least 1s");
		}
	}
}

/*
 * decide: how the experiment's verdicts are reached (every key optional):
 *   alpha: 0.05  power: 0.8  q: 0.05  statistic: welch-log
 *   min-boots: 2  max-boots: 2 (6 with repeat: auto)  runs-per-boot: 3 (repeat: auto)
 *   max-runs: 0 (no limit)  max-time: 30m
 * Read after repeat: (the defaults of max-boots follow it).
 */
static void load_decide(struct ctx *c, struct spec_experiment *e, const struct node *n)
{
	static const char *const keys[] = { "alpha", "power", "q", "statistic", "min-boots", "max-boots",
					    "runs-per-boot", "max-runs", "max-time" };
	struct spec_decide *d = &e->decide;

	if (n) {
		d->pos = n->pos;
		if (!want_kind(c, n, NODE_MAP, "decide"))
			return;
		check_keys(c, n, keys, ELEMENTSOF(keys), "decide");
		load_decide_keys(c, d, n);
	}
	if (!d->max_boots_pos.file)
		d->max_boots = MAX(e->repeat_auto ? 6u : 2u, d->min_boots);
	else if (d->min_boots_pos.file && d->max_boots < d->min_boots)
		err(c, node_map_get(n, "max-boots"), "decide.max-boots (%u) is below decide.min-boots (%u)",
		    d->max_boots, d->min_boots);
	if (d->runs_per_boot_pos.file && !e->repeat_auto)
		err(c, node_map_get(n, "runs-per-boot"),
		    "decide.runs-per-boot goes with repeat: auto; a fixed design runs each variant 'repeat' times");
	if (e->repeat_auto && d->max_runs && d->max_runs < d->min_boots * d->runs_per_boot)
		err(c, node_map_get(n, "max-runs"),
		    "decide.max-runs (%u) is below min-boots x runs-per-boot (%u x %u): the first look never comes",
		    d->max_runs, d->min_boots, d->runs_per_boot);
}

/* repeat: N runs of each variant, or auto: boots added until the verdicts are reached. */
static void load_repeat(struct ctx *c, struct spec_experiment *e, const struct node *v)
{
	uint64_t x;

	e->repeat_pos = v->pos;
	if (!want_kind(c, v, NODE_SCALAR, "repeat"))
		return;
	if (streq(v->scalar, "auto")) {
		e->repeat_auto = true;
		e->repeat = 0;
		return;
	}
	if (parse_uint(v->scalar, 1000, &x) < 0 || x < 1) {
		err(c, v, "repeat must be a whole number from 1 to 1000 or auto, not '%s'", v->scalar);
		return;
	}
	e->repeat = (unsigned)x;
}

static void decide_defaults(struct spec_decide *d)
{
	*d = (struct spec_decide){ .alpha = 0.05, .power = 0.8, .q = 0.05, .statistic = SPEC_STAT_WELCH_LOG,
				   .min_boots = 2, .max_boots = 2, .runs_per_boot = 3 };
}

/* What an experiment runs on: its description, kernels, topology, image, hosts and without-kvm. */
static void load_experiment_refs(struct ctx *c, struct spec_experiment *e, const struct node *n)
{
	const struct node *v;

	if ((v = node_map_get(n, "description")))
		e->description = get_string(c, v, "description");
	if ((v = node_map_get(n, "kernels"))) {
		get_refs(c, v, "kernels", &e->kernels);
		if (v->kind == NODE_SCALAR)
			err(c, v, "kernels must list the variants to compare, baseline first");
	}
	if ((v = node_map_get(n, "topology"))) {
		_cleanup_free_ char *s = get_string(c, v, "topology");

		if (s)
			ref_set(c, &e->topology, v);
	}
	if ((v = node_map_get(n, "image"))) {
		_cleanup_free_ char *s = get_string(c, v, "image");

		if (s)
			ref_set(c, &e->image, v);
	}
	if ((v = node_map_get(n, "hosts")))
		get_refs(c, v, "hosts", &e->hosts);
	if ((v = node_map_get(n, "without-kvm"))) {
		_cleanup_free_ char *s = get_string(c, v, "without-kvm");

		if (s)
			ref_set(c, &e->without_kvm, v);
	}
}

static void load_experiment(struct ctx *c, struct spec_experiment *e, const struct node *key,
			    const struct node *n)
{
	static const char *const keys[] = { "description", "kernels", "topology", "image", "hosts",
					    "repeat", "warmup", "quiesce", "timeout", "boot", "monitors", "sysctl",
					    "workloads", "observe", "decide", "overhead-budget", "without-kvm" };
	_cleanup_free_ char *what = xasprintf("experiment '%s'", key->scalar);
	const struct node *v;

	e->name = xstrdup(key->scalar);
	e->pos = key->pos;
	e->repeat = 3;
	decide_defaults(&e->decide);
	e->decide.pos = key->pos;
	e->timeout_usec = 3600ULL * 1000000;
	e->boot = BOOT_PER_RUN;
	e->quiesce = true;
	if (!want_kind(c, n, NODE_MAP, what))
		return;
	check_keys(c, n, keys, ELEMENTSOF(keys), what);
	require_key(c, n, key, "kernels", what);
	require_key(c, n, key, "topology", what);
	require_key(c, n, key, "image", what);
	require_key(c, n, key, "workloads", what);
	load_experiment_refs(c, e, n);
	if ((v = node_map_get(n, "repeat")))
		load_repeat(c, e, v);
	load_decide(c, e, node_map_get(n, "decide"));
	if ((v = node_map_get(n, "warmup")))
		get_duration(c, v, "warmup", &e->warmup_usec);
	if ((v = node_map_get(n, "quiesce")))
		get_bool(c, v, "quiesce", &e->quiesce);
	if ((v = node_map_get(n, "timeout"))) {
		if (get_duration(c, v, "timeout", &e->timeout_usec) == 0 && e->timeout_usec < 1000000)
			err(c, v, "timeout must be at least 1s");
	}
	if ((v = node_map_get(n, "boot")) && want_kind(c, v, NODE_SCALAR, "boot"))
		load_boot_mode(c, e, v);
	if ((v = node_map_get(n, "monitors")))
		get_refs(c, v, "monitors", &e->monitors);
	if ((v = node_map_get(n, "observe")))
		load_observe(c, e, v);
	if ((v = node_map_get(n, "sysctl")) && want_kind(c, v, NODE_MAP, "sysctl"))
		load_sysctl(c, e, v);
	if ((v = node_map_get(n, "overhead-budget")) && want_kind(c, v, NODE_MAP, "overhead-budget"))
		load_overhead_budget(c, e, v);
	if ((v = node_map_get(n, "workloads")) && want_kind(c, v, NODE_SEQ, "workloads")) {
		if (!v->n)
			err(c, v, "workloads lists nothing to run");
		e->jobs = xcalloc(v->n, sizeof(*e->jobs));
		for (size_t i = 0; i < v->n; i++)
			load_job(c, &e->jobs[e->njobs++], v->items[i]);
	}
}

/* Allocate and load every entry of a named section. */
#define LOAD_SECTION(c, sec_, what, section, arr, count, loader)                             \
	do {                                                                          \
		if ((sec_)->kind != NODE_MAP) {                                       \
			err((c), (sec_), "%s must be a mapping of names to entries, not %s", \
			    (section), node_kind_name((sec_)->kind));                     \
			break;                                                        \
		}                                                                     \
		(arr) = xcalloc((sec_)->n, sizeof(*(arr)));                           \
		for (size_t i_ = 0; i_ < (sec_)->n; i_++) {                           \
			check_name((c), (sec_)->keys[i_], (what));                    \
			loader((c), &(arr)[(count)++], (sec_)->keys[i_], (sec_)->items[i_]); \
		}                                                                     \
	} while (0)

static void load_root(struct ctx *c, struct node *root)
{
	const struct node *v;
	long i;

	check_keys(c, root, top_keys, ELEMENTSOF(top_keys), "lab.yaml");
	v = node_map_get(root, "version");
	if (!v) {
		err(c, root, "missing 'version: %d' at the top of the file", SPEC_VERSION);
	} else if (get_uint(c, v, "version", 1, 1000, &c->s->version) == 0 && c->s->version != SPEC_VERSION) {
		err(c, v, "schema version %u is not supported (this lab reads version %d)", c->s->version,
		    SPEC_VERSION);
	}
	if ((v = node_map_get(root, "settings")))
		load_settings(c, v);
	if ((i = node_map_index(root, "engine")) >= 0)
		load_engine(c, root->keys[i], root->items[i]);
	if ((v = node_map_get(root, "sources")))
		LOAD_SECTION(c, v, "source", "sources", c->s->sources, c->s->nsources, load_source);
	if ((v = node_map_get(root, "kernels")))
		LOAD_SECTION(c, v, "kernel", "kernels", c->s->kernels, c->s->nkernels, load_kernel);
	if ((v = node_map_get(root, "topologies")))
		LOAD_SECTION(c, v, "topology", "topologies", c->s->topologies, c->s->ntopologies, load_topology);
	if ((v = node_map_get(root, "images")))
		LOAD_SECTION(c, v, "image", "images", c->s->images, c->s->nimages, load_image);
	if ((v = node_map_get(root, "hosts")))
		LOAD_SECTION(c, v, "host", "hosts", c->s->hosts, c->s->nhosts, load_host);
	if ((v = node_map_get(root, "experiments")))
		LOAD_SECTION(c, v, "experiment", "experiments", c->s->experiments, c->s->nexperiments, load_experiment);
}

/* --set NAME=VALUE: replace a var's value before anything is substituted. */
static void apply_set(struct ctx *c, const char *arg)
{
	const struct pos cli = { .file = NULL };
	const char *eq = strchr(arg, '=');
	_cleanup_free_ char *name = eq ? xstrndup(arg, (size_t)(eq - arg)) : NULL;
	const char **cands;
	const char *hint;

	if (!eq || eq == arg) {
		diags_add(c->d, &cli, "--set %s: expected NAME=VALUE, NAME one of the vars: in %s", arg, c->s->path);
		return;
	}
	for (size_t i = 0; c->vars && i < c->vars->n; i++) {
		struct node *v = c->vars->items[i];

		if (!streq(c->vars->keys[i]->scalar, name))
			continue;
		if (v->kind != NODE_SCALAR)
			return; /* reported above */
		free(v->scalar);
		v->scalar = xstrdup(eq + 1);
		v->plain = true;
		return;
	}
	if (!c->vars || !c->vars->n) {
		diags_add(c->d, &cli, "--set %s: %s has no vars: section to set '%s' in", arg, c->s->path, name);
		return;
	}
	cands = xcalloc(c->vars->n + 1, sizeof(char *));
	for (size_t i = 0; i < c->vars->n; i++)
		cands[i] = c->vars->keys[i]->scalar;
	hint = str_suggest(name, cands, c->vars->n);
	if (hint)
		diags_add(c->d, &cli, "--set %s: %s has no variable '%s' (did you mean '%s'?)", arg, c->s->path, name, hint);
	else {
		_cleanup_strbuf_ struct strbuf all = STRBUF_INIT;

		for (size_t i = 0; i < c->vars->n; i++)
			strbuf_addf(&all, "%s%s", i ? ", " : "", cands[i]);
		diags_add(c->d, &cli, "--set %s: %s has no variable '%s' (vars: %s)", arg, c->s->path, name, all.buf);
	}
	free(cands);
}

static int load_tree(struct spec *s, struct node *root, const struct spec_load_opts *opts, struct diags *d)
{
	struct ctx c = { .s = s, .d = d, .opts = opts };
	_cleanup_strv_ struct strv stack = STRV_INIT;
	size_t before = d->n;
	long vi;

	if (root->kind != NODE_MAP) {
		diags_add(d, &root->pos, "lab.yaml must be a mapping of sections, not %s", node_kind_name(root->kind));
		return -EINVAL;
	}
	strv_push_take(&stack, xstrdup(s->path));
	load_includes(&c, root, &stack, 0);
	vi = node_map_index(root, "vars");
	if (vi >= 0) {
		struct node *vars = root->items[vi];

		if (vars->kind != NODE_MAP) {
			err(&c, vars, "vars must be a mapping of names to values");
		} else {
			c.vars = vars;
			for (size_t i = 0; i < vars->n; i++)
				if (vars->items[i]->kind != NODE_SCALAR)
					err(&c, vars->items[i], "variable '%s' must be a scalar", vars->keys[i]->scalar);
		}
	}
	for (size_t i = 0; opts && i < opts->nset; i++)
		apply_set(&c, opts->set[i]);
	for (size_t i = 0; i < root->n; i++)
		if (!streq(root->keys[i]->scalar, "vars"))
			substitute(&c, root->items[i]);
	load_root(&c, root);
	/* cross-checks run even after errors, so one pass reports everything */
	spec_check(s, opts, d);
	return d->n == before ? 0 : -EINVAL;
}

static struct spec *spec_new(const char *path)
{
	struct spec *s = xcalloc(1, sizeof(*s));

	s->path = xstrdup(path);
	s->dir = path_dirname(path);
	s->engine.retries = SPEC_ENGINE_RETRIES;
	s->engine.poll_sec = SPEC_ENGINE_POLL_SEC;
	return s;
}

int spec_load_buffer(const char *name, const char *data, size_t len, const struct spec_load_opts *opts,
		     struct spec **ret, struct diags *d)
{
	_cleanup_spec_ struct spec *s = spec_new(name);
	_cleanup_node_ struct node *root = node_parse(&s->files, name, data, len, d);
	int r;

	if (!root)
		return -EINVAL;
	r = load_tree(s, root, opts, d);
	if (r < 0)
		return r;
	*ret = TAKE_PTR(s);
	return 0;
}

int spec_load(const char *path, const struct spec_load_opts *opts, struct spec **ret, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = strbuf_read_file(&sb, path, 16 << 20);

	if (r < 0) {
		struct pos pos = { .file = path };

		diags_add(d, &pos, "cannot read: %s", strerror(-r));
		return r;
	}
	return spec_load_buffer(path, sb.buf, sb.len, opts, ret, d);
}
