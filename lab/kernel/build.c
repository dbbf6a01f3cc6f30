/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/clock.h"
#include "../util/units.h"
#include "../util/fs.h"
#include "../util/json.h"
#include "../util/json-read.h"
#include "../util/path.h"
#include "../cache/cache.h"
#include "build.h"
#include "patch.h"
#include "source.h"
#include "worktree.h"
#include "../util/banned.h"

/* Bump when the way lab builds changes what comes out. */
#define KBUILD_RECIPE "lab-kbuild-1"
#define KBUILD_TIMESTAMP "2026-01-01 00:00:00 UTC"

void kartifact_release(struct kartifact *a)
{
	free(a->name);
	free(a->key);
	free(a->dir);
	free(a->release);
	free(a->source_identity);
	free(a->subject);
	free(a->author);
	free(a->config_hash);
	free(a->compiler);
	free(a->bzimage);
	free(a->config);
	free(a->system_map);
	free(a->log);
	strv_release(&a->patches);
	strv_release(&a->checked);
	free(a->checks);
	memset(a, 0, sizeof(*a));
}

static void step(const struct kbuild_progress *p, const char *variant, const char *what)
{
	if (p && p->step)
		p->step(p->userdata, variant, what);
}

/* Asked once per process: `kernel list` resolves every variant. */
static char *compiler_id(void)
{
	static char *id;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_command_ struct command c = { 0 };
	char *nl;

	if (id)
		return xstrdup(id);
	command_init(&c, "gcc");
	command_arg(&c, "--version");
	c.out = &out;
	if (command_run(&c) != 0)
		return xstrdup("unknown");
	nl = strchr(out.buf, '\n');
	if (nl)
		*nl = '\0';
	id = xstrdup(out.buf);
	return xstrdup(id);
}

/* ---- identity ---- */

struct inputs {
	struct ksource src;
	struct patch **patches;
	size_t npatches;
	char *compiler;
	char key[SHA256_HEX_LEN + 1];
	char confkey[SHA256_HEX_LEN + 1]; /* the fragments alone: one object folder per set */
	char *localversion;
};

static void inputs_release(struct inputs *in)
{
	ksource_release(&in->src);
	for (size_t i = 0; i < in->npatches; i++)
		patch_free(in->patches[i]);
	free(in->patches);
	free(in->compiler);
	free(in->localversion);
}

static int compute_inputs(const char *cache, const struct kvariant *v, bool fetch, struct strbuf *log,
			  struct inputs *in, struct diags *d)
{
	struct hasher *h, *hc;
	int r;

	if (!v->source) {
		diags_add(d, &v->kernel->pos, "kernel '%s' has no resolvable source", v->name);
		return -EINVAL;
	}
	r = fetch ? ksource_prepare(cache, v->source, log, &in->src, d) : ksource_identify(cache, v->source, &in->src);
	if (r < 0)
		return r;
	in->patches = xcalloc(v->patches.n + 1, sizeof(*in->patches));
	for (size_t i = 0; i < v->patches.n; i++) {
		r = patch_load(v->patches.v[i], &in->patches[i], d);
		if (r < 0)
			return r;
		in->npatches++;
	}
	in->compiler = compiler_id();
	h = hasher_new();
	hc = hasher_new();
	hasher_add_str(h, KBUILD_RECIPE);
	hasher_add_str(h, in->src.identity);
	hasher_add_str(h, in->compiler);
	hasher_add_str(h, v->name);
	hasher_add_str(hc, KBUILD_RECIPE);
	/* one object folder for every commit of a git source: consecutive
	 * commits build incrementally (the identity for any other source) */
	hasher_add_str(hc, in->src.lineage);
	/* defconfig adds nothing, so that keys made before `start:` existed hold */
	if (!streq(v->start, "defconfig")) {
		hasher_add_str(h, v->start);
		hasher_add_str(hc, v->start);
	}
	for (size_t i = 0; i < in->npatches; i++)
		hasher_add_str(h, in->patches[i]->sha256);
	for (size_t i = 0; i < v->configs.n; i++) {
		char hex[SHA256_HEX_LEN + 1];

		r = sha256_file(v->configs.v[i], hex);
		if (r < 0) {
			struct pos pos = { .file = v->configs.v[i] };

			diags_add(d, &pos, "cannot read config fragment: %s", strerror(-r));
			hasher_finish(h, in->key);
			hasher_finish(hc, in->confkey);
			return r;
		}
		hasher_add_str(h, hex);
		hasher_add_str(hc, hex);
	}
	hasher_finish(h, in->key);
	hasher_finish(hc, in->confkey);
	in->localversion = kvariant_localversion(v->name, in->key);
	return 0;
}

/* ---- cached artifacts ---- */

int kartifact_load(const char *dir, const char *name, const char *key, struct kartifact *a)
{
	_cleanup_free_ char *meta = path_join(dir, "meta.json");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	_cleanup_free_ char *err = NULL;
	double x;
	int r = strbuf_read_file(&sb, meta, 1 << 20);

	if (r < 0)
		return r;
	/* a damaged meta.json is no artifact: the kernel is built again */
	if (json_doc_parse(sb.buf ? sb.buf : "", sb.len, &doc, &err) < 0)
		return -ENOENT;
	a->name = xstrdup(name);
	a->key = xstrdup(key);
	a->dir = xstrdup(dir);
	a->release = json_doc_string(doc, "release");
	a->source_identity = json_doc_string(doc, "source");
	a->subject = json_doc_string(doc, "subject");
	a->author = json_doc_string(doc, "author");
	a->config_hash = json_doc_string(doc, "config_sha256");
	a->compiler = json_doc_string(doc, "compiler");
	a->seconds = json_doc_number(doc, "build_seconds", &x) == 0 ? x : 0;
	a->compiled = json_doc_number(doc, "compiled_objects", &x) == 0 ? (size_t)x : 0;
	a->modules = json_doc_bool(doc, "modules");
	a->bzimage = path_join(dir, "bzImage");
	a->config = path_join(dir, "config");
	a->system_map = path_join(dir, "System.map");
	a->log = path_join(dir, "build.log");
	a->cached = true;
	if (!a->release || !path_is_file(a->bzimage))
		return -ENOENT;
	return 0;
}

/* A cached artifact's assertions, checked again against its own .config. */
static void recheck(const struct kvariant *v, struct kartifact *a)
{
	struct kconfig k = { 0 };

	if (kconfig_load(a->config, &k) < 0)
		return;
	free(a->checks);
	a->checks = xcalloc(v->nrequire + 1, sizeof(*a->checks));
	a->nchecks = v->nrequire;
	kconfig_check_require(&k, v->require, v->nrequire, a->checks);
	kconfig_release(&k);
}

static void fill_patch_list(const struct inputs *in, struct kartifact *a)
{
	for (size_t i = 0; i < in->npatches; i++)
		strv_push_take(&a->patches, xasprintf("%s %s", in->patches[i]->sha256, in->patches[i]->path));
}

int kernel_key(const struct spec *s, const struct kvariant *v, char **ret, struct diags *d)
{
	_cleanup_free_ char *cache = spec_cache_dir(s);
	struct inputs in = { 0 };
	int r = compute_inputs(cache, v, false, NULL, &in, d);

	if (r == 0)
		*ret = xstrdup(in.key);
	inputs_release(&in);
	return r;
}

int kernel_lookup(const struct spec *s, const struct kvariant *v, struct kartifact *ret, struct diags *d)
{
	_cleanup_free_ char *cache = spec_cache_dir(s), *dir = NULL;
	struct inputs in = { 0 };
	struct kartifact a = { 0 };
	int r = compute_inputs(cache, v, false, NULL, &in, d);

	if (r == 0) {
		dir = xasprintf("%s/kernels/%.16s", cache, in.key);
		r = kartifact_load(dir, v->name, in.key, &a);
		if (r == 0) {
			/* a lookup is a use (a run's, a boot's; a listing's too:
			 * lab gc errs toward keeping) */
			cache_touch(dir);
			fill_patch_list(&in, &a);
			recheck(v, &a);
		}
	}
	inputs_release(&in);
	if (r < 0) {
		kartifact_release(&a);
		return r;
	}
	*ret = a;
	return 0;
}

/* ---- the work tree ---- */

/* ---- configuration ---- */

static void make_base(struct command *c, const char *tree, const char *obj)
{
	command_init(c, "make");
	command_argf(c, "-C%s", tree);
	command_argf(c, "O=%s", obj);
	command_env(c, "KBUILD_BUILD_TIMESTAMP", KBUILD_TIMESTAMP);
	command_env(c, "KBUILD_BUILD_USER", "lab");
	command_env(c, "KBUILD_BUILD_HOST", "lab");
	command_env(c, "KBUILD_BUILD_VERSION", "1");
}

/* Fragment symbols Kconfig did not keep, e.g. one whose dependencies are off. */
static size_t check_fragments(const struct kvariant *v, const struct kconfig *final, struct diags *d)
{
	struct want {
		char *symbol, *value;
		struct pos pos;
	} *want = NULL;
	size_t n = 0, alloc = 0, bad = 0;

	/* the effective fragment: a later file's word on a symbol replaces an earlier one's */
	for (size_t i = 0; i < v->configs.n; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		unsigned lineno = 0;

		if (strbuf_read_file(&sb, v->configs.v[i], 1 << 20) < 0)
			continue;
		for (char *line = sb.buf; *line;) {
			char *nl = strchr(line, '\n');
			struct kconfig one = { 0 };
			size_t j;

			if (nl)
				*nl = '\0';
			lineno++;
			kconfig_parse(line, &one);
			if (one.n == 1) {
				for (j = 0; j < n; j++)
					if (streq(want[j].symbol, one.v[0].symbol))
						break;
				if (j == n) {
					GROW(want, alloc, n + 1);
					want[n++].symbol = xstrdup(one.v[0].symbol);
				} else {
					free(want[j].value);
				}
				want[j].value = xstrdup(one.v[0].value);
				want[j].pos = (struct pos){ .file = v->configs.v[i], .line = lineno, .col = 1 };
			}
			kconfig_release(&one);
			line = nl ? nl + 1 : line + strlen(line);
		}
	}
	for (size_t j = 0; j < n; j++) {
		const char *got = kconfig_get(final, want[j].symbol);

		if (!streq(want[j].value, got)) {
			diags_add(d, &want[j].pos,
				  "%s=%s was dropped by Kconfig: the final .config has %s (a dependency is off, or the symbol is not in this tree)",
				  want[j].symbol, want[j].value, streq(got, "n") ? "it unset" : got);
			bad++;
		}
		free(want[j].symbol);
		free(want[j].value);
	}
	free(want);
	return bad;
}

/*
 * What the final .config depends on: the fragments and source (confkey)
 * and the patches that touch Kconfig files. Same stamp, same .config: the
 * three configuration steps (15-20 s here) are skipped.
 */
static char *config_stamp(const struct inputs *in)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "%s\n", in->confkey);
	/* a git source's commits share the object folder: each its own .config */
	if (!streq(in->src.lineage, in->src.identity))
		strbuf_addf(&sb, "%s\n", in->src.identity);
	for (size_t i = 0; i < in->npatches; i++)
		for (size_t j = 0; j < in->patches[i]->nfiles; j++) {
			const char *f = in->patches[i]->files[j].path, *base = strrchr(f, '/');

			if (str_startswith(base ? base + 1 : f, "Kconfig")) {
				strbuf_addf(&sb, "%s\n", in->patches[i]->sha256);
				break;
			}
		}
	return strbuf_detach(&sb, NULL);
}

static int configure(const char *tree, const char *obj, const struct kvariant *v, const struct inputs *in,
		     struct strbuf *log, struct kconfig *ret_config, struct kartifact *a, struct diags *d)
{
	_cleanup_command_ struct command def = { 0 }, merge = { 0 }, old = { 0 };
	_cleanup_free_ char *dotconfig = path_join(obj, ".config");
	_cleanup_free_ char *merge_sh = path_join(tree, "scripts/kconfig/merge_config.sh");
	_cleanup_free_ char *kvm = path_join(tree, "kernel/configs/kvm_guest.config");
	_cleanup_free_ char *stampf = path_join(obj, ".lab-config-stamp"), *stamp = config_stamp(in);
	_cleanup_strbuf_ struct strbuf old_stamp = STRBUF_INIT;
	_cleanup_free_ char *what = xasprintf("make %s", v->start);
	struct kconfig final = { 0 };
	char hex[SHA256_HEX_LEN + 1];
	int r;

	if (path_is_file(dotconfig) && strbuf_read_file(&old_stamp, stampf, 1 << 16) == 0 &&
	    streq(old_stamp.buf, stamp)) {
		strbuf_addstr(log, "# .config is current (same fragments, no Kconfig patch): not reconfigured\n");
		goto check;
	}
	unlink(stampf);
	make_base(&def, tree, obj);
	command_arg(&def, v->start);
	r = command_run_logged(&def, log, d, &v->kernel->pos, what);
	if (r < 0)
		return r;
	command_init(&merge, merge_sh);
	command_args(&merge, "-m", "-O", obj, dotconfig, kvm, NULL);
	for (size_t i = 0; i < v->configs.n; i++)
		command_arg(&merge, v->configs.v[i]);
	merge.cwd = xstrdup(obj);
	r = command_run_logged(&merge, log, d, &v->kernel->pos, "merging config fragments");
	if (r < 0)
		return r;
	make_base(&old, tree, obj);
	command_arg(&old, "olddefconfig");
	r = command_run_logged(&old, log, d, &v->kernel->pos, "make olddefconfig");
	if (r < 0)
		return r;
	fs_write_atomic(stampf, stamp, strlen(stamp), 0644);
check:
	r = kconfig_load(dotconfig, &final);
	if (r < 0) {
		diags_add(d, &v->kernel->pos, "cannot read '%s': %s", dotconfig, strerror(-r));
		return r;
	}
	sha256_file(dotconfig, hex);
	a->config_hash = xstrdup(hex);
	a->checks = xcalloc(v->nrequire + 1, sizeof(*a->checks));
	a->nchecks = v->nrequire;
	if (kconfig_check_require(&final, v->require, v->nrequire, a->checks)) {
		for (size_t i = 0; i < v->nrequire; i++)
			if (!a->checks[i].ok)
				diags_add(d, &a->checks[i].req->pos,
					  "kernel '%s' requires %s=%s but the final .config has %s", v->name,
					  a->checks[i].req->symbol, a->checks[i].req->value,
					  streq(a->checks[i].actual, "n") ? "it unset" : a->checks[i].actual);
		r = -EINVAL;
	}
	if (check_fragments(v, &final, d))
		r = -EINVAL;
	if (r < 0) {
		kconfig_release(&final);
		return r;
	}
	*ret_config = final;
	return 0;
}

/* ---- objects a patch feeds ---- */

static bool file_mentions(const char *path, const char *needle)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	return strbuf_read_file(&sb, path, 4 << 20) == 0 && strstr(sb.buf, needle);
}

/* The .c files in `dir` that #include `base` ("rt.c", "sched.h"), and which make builds directly. */
static void touched_objects(const char *tree, const struct strv *files, struct strv *ret, unsigned depth);

static void includers(const char *tree, const char *dir, const char *base, struct strv *ret, unsigned depth)
{
	_cleanup_free_ char *full = path_join(tree, dir);
	_cleanup_free_ char *needle = xasprintf("#include \"%s\"", base);
	DIR *dh = opendir(full);
	struct dirent *de;

	/* .c files #including .c files: follow two levels, never a cycle */
	if (!dh || depth > 2) {
		if (dh)
			closedir(dh);
		return;
	}
	while ((de = readdir(dh))) {
		_cleanup_free_ char *f = NULL, *rel = NULL;

		if (!str_endswith(de->d_name, ".c"))
			continue;
		f = path_join(full, de->d_name);
		if (!file_mentions(f, needle))
			continue;
		rel = path_join(dir, de->d_name);
		{
			_cleanup_strv_ struct strv one = STRV_INIT;

			strv_push(&one, rel);
			touched_objects(tree, &one, ret, depth + 1);
		}
	}
	closedir(dh);
}

void kernel_touched_objects(const char *tree, const struct strv *files, struct strv *ret)
{
	touched_objects(tree, files, ret, 0);
}

static void touched_objects(const char *tree, const struct strv *files, struct strv *ret, unsigned depth)
{
	for (size_t i = 0; i < files->n; i++) {
		const char *f = files->v[i];
		_cleanup_free_ char *dir = path_dirname(f);
		const char *base = strrchr(f, '/') ? strrchr(f, '/') + 1 : f;

		if (str_endswith(f, ".c")) {
			_cleanup_free_ char *mk = path_join(tree, dir), *mkf = NULL, *obj = NULL;
			_cleanup_free_ char *stem = xstrndup(base, strlen(base) - 2);

			mkf = path_join(mk, "Makefile");
			obj = xasprintf("%s.o", stem);
			if (file_mentions(mkf, obj)) {
				_cleanup_free_ char *target = xasprintf("%s/%s", dir, obj);

				if (!strv_contains(ret, target))
					strv_push(ret, target);
			} else {
				/* 6.1's kernel/sched/build_*.c #include the .c files */
				includers(tree, dir, base, ret, depth);
			}
		} else if (str_endswith(f, ".h") && !str_startswith(f, "include/") && !str_startswith(f, "arch/")) {
			includers(tree, dir, base, ret, depth);
		}
	}
}

void kernel_patch_symbols(const struct strv *patches, struct strv *ret)
{
	for (size_t i = 0; i < patches->n; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		if (strbuf_read_file(&sb, patches->v[i], 64 << 20) < 0)
			continue;
		for (char *line = sb.buf; *line;) {
			char *nl = strchr(line, '\n');
			const char *p = line;

			if (nl)
				*nl = '\0';
			if (*p == '+' || *p == '-') {
				p++;
				while (*p == ' ' || *p == '\t')
					p++;
				if (str_startswith(p, "config ") || str_startswith(p, "menuconfig ")) {
					_cleanup_free_ char *sym = NULL;

					p = strchr(p, ' ') + 1;
					while (*p == ' ')
						p++;
					sym = xasprintf("CONFIG_%s", p);
					if (!strv_contains(ret, sym))
						strv_push(ret, sym);
				}
			}
			line = nl ? nl + 1 : line + strlen(line);
		}
	}
}

/* ---- building ---- */

struct counter {
	const struct kbuild_progress *p;
	const char *variant;
	size_t done, expected;
};

void kbuild_format_progress(size_t done, size_t expected, double elapsed, struct strbuf *out)
{
	bool known = expected && done <= expected;
	_cleanup_free_ char *el = format_elapsed(elapsed), *eta = NULL;

	if (known)
		strbuf_addf(out, "%zu/%zu objects, ", done, expected);
	else
		strbuf_addf(out, "%zu object%s, ", done, done == 1 ? "" : "s");
	strbuf_addstr(out, el);
	if (known && done >= 20 && done < expected) {
		eta = format_elapsed(elapsed / (double)done * (double)(expected - done));
		strbuf_addf(out, ", ETA %s", eta);
	}
}

static void count_object(void *userdata, const char *line, size_t len)
{
	struct counter *c = userdata;

	/* kbuild's quiet lines: "  CC      kernel/sched/fair.o" */
	if (len > 4 && line[0] == ' ' && line[1] == ' ' && line[2] == 'C' && line[3] == 'C' && line[4] == ' ') {
		c->done++;
		if (c->p && c->p->objects)
			c->p->objects(c->p->userdata, c->variant, c->done, c->expected);
	}
}

static size_t read_count(const char *path)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	return strbuf_read_file(&sb, path, 64) == 0 ? (size_t)strtoul(sb.buf, NULL, 10) : 0;
}

static bool has_modules(const struct kconfig *k)
{
	for (size_t i = 0; i < k->n; i++)
		if (streq(k->v[i].value, "m"))
			return true;
	return false;
}

static int write_meta(const char *dir, const struct kvariant *v, const struct inputs *in, const struct kartifact *a)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *path = path_join(dir, "meta.json");
	struct json j;

	json_init(&j, &sb, true);
	json_object_begin(&j);
	json_kv_string(&j, "name", v->name);
	json_kv_string(&j, "key", in->key);
	json_kv_string(&j, "release", a->release);
	json_kv_string(&j, "source", in->src.identity);
	if (ksource_commit(in->src.identity)) {
		json_kv_string(&j, "commit", ksource_commit(in->src.identity));
		json_kv_string(&j, "subject", in->src.subject);
		json_kv_string(&j, "author", in->src.author);
	}
	json_kv_string(&j, "config_sha256", a->config_hash);
	json_kv_string(&j, "compiler", in->compiler);
	json_key(&j, "build_seconds");
	json_double(&j, a->seconds);
	json_kv_uint(&j, "compiled_objects", a->compiled);
	json_key(&j, "modules");
	json_bool(&j, a->modules);
	json_key(&j, "patches");
	json_array_begin(&j);
	for (size_t i = 0; i < in->npatches; i++) {
		json_object_begin(&j);
		json_kv_string(&j, "file", in->patches[i]->path);
		json_kv_string(&j, "sha256", in->patches[i]->sha256);
		json_kv_string(&j, "subject", in->patches[i]->subject ? in->patches[i]->subject : "");
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "fragments");
	json_array_begin(&j);
	for (size_t i = 0; i < v->configs.n; i++)
		json_string(&j, v->configs.v[i]);
	json_array_end(&j);
	json_object_end(&j);
	json_finish(&j);
	return fs_write_atomic(path, sb.buf, sb.len, 0644);
}

static int copy_artifacts(const char *obj, const char *tmp, struct diags *d)
{
	static const char *const files[][2] = {
		{ "arch/x86/boot/bzImage", "bzImage" },
		{ ".config", "config" },
		{ "System.map", "System.map" },
	};

	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		_cleanup_free_ char *from = path_join(obj, files[i][0]), *to = path_join(tmp, files[i][1]);
		int r = fs_copy_file(from, to, true);

		if (r < 0) {
			diags_add(d, NULL, "cannot copy '%s' to '%s': %s", from, to, strerror(-r));
			return r;
		}
	}
	return 0;
}

struct lock_wait {
	const struct kbuild_progress *p;
	const char *name;
};

static void on_lock_wait(void *userdata)
{
	const struct lock_wait *w = userdata;

	step(w->p, w->name, "waiting for another lab using the same work tree");
}

static int lock_work(const char *work, const struct kbuild_progress *p, const char *name, int *ret_fd)
{
	_cleanup_free_ char *lock = path_join(work, "lock");
	struct lock_wait w = { p, name };
	int fd = fs_lock(lock, on_lock_wait, &w);

	if (fd < 0)
		return fd;
	*ret_fd = fd;
	return 0;
}

/* One kernel_build in progress: what its steps share. */
struct kbuild {
	const struct kvariant *v;
	const struct kbuild_progress *p;
	char *cache, *work, *tree, *obj;
	unsigned jobs;
	struct inputs in;
	struct kartifact a;
	struct kconfig final;
	struct strbuf log;
};

/*
 * The source's work tree, locked, carrying the variant's patches; its
 * object folder. A config or a check alone (scratch) has a tree of its
 * own (work/<source>-check, another hard-link copy): switching the build
 * tree's patches gives the files they touch new mtimes, and the next real
 * build there recompiled everything that includes them (1,845 of 1,948
 * objects for tg-ratelimit after a check of pcp-auto, which touches
 * mmzone.h). It does not wait for a build either. Its object folders sit
 * beside it, as ../src from each, so ccache's base folder (work/) serves
 * both trees.
 */
static int kb_tree(struct kbuild *b, bool scratch, int *lockfd, struct diags *d)
{
	int r;

	b->work = xasprintf("%s/work/%s%s", b->cache, b->in.src.lineage_key, scratch ? "-check" : "");
	r = path_mkdir_p(b->work, 0755);
	if (r < 0 || (r = lock_work(b->work, b->p, b->v->name, lockfd)) < 0) {
		diags_add(d, NULL, "cannot use work folder '%s': %s", b->work, strerror(-r));
		return r;
	}
	/* uses, for lab gc (the source stamps its own tree) */
	cache_touch(b->work);
	{
		_cleanup_free_ char *cc = path_join(b->cache, "ccache");

		cache_touch(cc);
	}
	step(b->p, b->v->name, "patches");
	if ((r = worktree_ensure(b->work, b->in.src.tree, &b->log, d, &b->v->kernel->pos)) < 0 ||
	    (r = worktree_switch(b->work, b->in.src.tree, b->in.patches, b->in.npatches, &b->log, d)) < 0)
		return r;
	b->tree = path_join(b->work, "src");
	b->obj = xasprintf("%s/obj-%.16s", b->work, b->in.confkey);
	path_mkdir_p(b->obj, 0755);
	return 0;
}

/* The object folder is shared: keep this variant's final .config apart. */
static void kb_keep_config(struct kbuild *b)
{
	_cleanup_free_ char *dirc = path_join(b->work, "configs"), *from = path_join(b->obj, ".config");
	_cleanup_free_ char *lv = kvariant_localversion(b->v->name, b->in.key);

	path_mkdir_p(dirc, 0755);
	b->a.config = xasprintf("%s/%s.config", dirc, lv + 5);
	fs_copy_file(from, b->a.config, true);
}

/*
 * ccache through its masquerade folder first in PATH, not CC=ccache gcc:
 * kbuild rebuilds every object whose command line changed, so a build
 * with ccache after one without it (or a --check's) would be a full
 * build. This way the command line is the same either way.
 *
 * In depend mode: by default a miss runs the preprocessor once more to
 * hash its output, and a kernel file's preprocessed text is large. Timed
 * here, fs/ext4/ and mm/ of the test kernel from cold: 65 s without
 * ccache, 93 s with it by default, 68 s in depend mode, which takes the
 * headers from the -MMD file kbuild asks gcc for anyway; 13 s warm, every
 * object a direct hit (bench/ccache-modes repeats it).
 */
#define CCACHE_MASQUERADE "/usr/lib/ccache"
static void kb_ccache(const struct kbuild *b, struct command *c)
{
	_cleanup_free_ char *gcc = path_join(CCACHE_MASQUERADE, "gcc"), *ccdir = NULL, *full = NULL, *work = NULL;
	const char *path = getenv("PATH");

	if (getenv("LAB_NO_CCACHE") || access(gcc, X_OK) < 0)
		return;
	ccdir = path_join(b->cache, "ccache");
	work = path_join(b->cache, "work");
	full = xasprintf("%s:%s", CCACHE_MASQUERADE, path && *path ? path : "/usr/bin:/bin");
	command_env(c, "CCACHE_DIR", ccdir);
	/* paths relative to the object folder: every source's tree is
	 * work/<source>/src beside work/<source>/obj-*, so two sources (two
	 * git commits, two tarballs) share the objects of the files they share */
	command_env(c, "CCACHE_BASEDIR", work);
	command_env(c, "CCACHE_DEPEND", "1");
	command_env(c, "PATH", full);
}

/* --check: make prepare, then only the objects the patches touch, with -Werror. */
static int kb_check(struct kbuild *b, struct diags *d)
{
	_cleanup_strv_ struct strv files = STRV_INIT;
	_cleanup_command_ struct command prep = { 0 }, cc = { 0 };
	int r;

	for (size_t i = 0; i < b->in.npatches; i++)
		for (size_t j = 0; j < b->in.patches[i]->nfiles; j++)
			if (!strv_contains(&files, b->in.patches[i]->files[j].path))
				strv_push(&files, b->in.patches[i]->files[j].path);
	kernel_touched_objects(b->tree, &files, &b->a.checked);
	step(b->p, b->v->name, "prepare");
	make_base(&prep, b->tree, b->obj);
	kb_ccache(b, &prep);
	command_argf(&prep, "-j%u", b->jobs);
	command_arg(&prep, "prepare");
	r = command_run_logged(&prep, &b->log, d, &b->v->kernel->pos, "make prepare");
	if (r < 0 || !b->a.checked.n)
		return r;
	step(b->p, b->v->name, "compile");
	make_base(&cc, b->tree, b->obj);
	kb_ccache(b, &cc);
	command_argf(&cc, "-j%u", b->jobs);
	command_arg(&cc, "KCFLAGS=-Werror");
	for (size_t i = 0; i < b->a.checked.n; i++)
		command_arg(&cc, b->a.checked.v[i]);
	return command_run_logged(&cc, &b->log, d, &b->v->kernel->pos, "compiling the objects the patches touch");
}

/* make bzImage (and modules), objects counted for the progress; then the release it built. */
static int kb_make(struct kbuild *b, struct diags *d)
{
	_cleanup_command_ struct command mk = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, rel = STRBUF_INIT;
	_cleanup_free_ char *count_file = path_join(b->work, "objects-estimate");
	_cleanup_free_ char *relf = path_join(b->obj, "include/config/kernel.release");
	struct counter counter = { .p = b->p, .variant = b->v->name, .expected = read_count(count_file) };
	int r;

	b->a.modules = has_modules(&b->final);
	step(b->p, b->v->name, "build");
	make_base(&mk, b->tree, b->obj);
	command_argf(&mk, "-j%u", b->jobs);
	command_argf(&mk, "LOCALVERSION=%s", b->in.localversion);
	kb_ccache(b, &mk);
	command_arg(&mk, "bzImage");
	if (b->a.modules)
		command_arg(&mk, "modules");
	mk.out = &out;
	mk.on_line = count_object;
	mk.userdata = &counter;
	r = command_run_logged(&mk, &b->log, d, &b->v->kernel->pos, "building the kernel");
	b->a.compiled = counter.done;
	if (r < 0)
		return r;
	if (counter.done > counter.expected) {
		_cleanup_free_ char *n = xasprintf("%zu\n", counter.done);

		fs_write_atomic(count_file, n, strlen(n), 0644);
	}
	if (strbuf_read_file(&rel, relf, 4096) < 0) {
		diags_add(d, NULL, "the build left no '%s'", relf);
		return -ENOENT;
	}
	while (rel.len && rel.buf[rel.len - 1] == '\n')
		strbuf_setlen(&rel, rel.len - 1);
	b->a.release = strbuf_detach(&rel, NULL);
	return 0;
}

/* The artifact into tmp (kernel, modules, log, meta.json), then renamed to dir. */
static int kb_install(struct kbuild *b, const char *dir, const char *tmp, double t0, struct diags *d)
{
	_cleanup_free_ char *logf = path_join(tmp, "build.log");
	int r;

	step(b->p, b->v->name, "install");
	r = path_mkdir_p(tmp, 0755);
	if (r < 0 || (r = copy_artifacts(b->obj, tmp, d)) < 0)
		return r;
	if (b->a.modules) {
		_cleanup_command_ struct command mi = { 0 };

		make_base(&mi, b->tree, b->obj);
		command_argf(&mi, "LOCALVERSION=%s", b->in.localversion);
		command_argf(&mi, "INSTALL_MOD_PATH=%s/modules", tmp);
		command_args(&mi, "INSTALL_MOD_STRIP=1", "modules_install", NULL);
		r = command_run_logged(&mi, &b->log, d, &b->v->kernel->pos, "installing modules");
		if (r < 0)
			return r;
	}
	b->a.seconds = now_sec() - t0;
	fs_write_atomic(logf, b->log.buf, b->log.len, 0644);
	if ((r = write_meta(tmp, b->v, &b->in, &b->a)) < 0)
		return r;
	fs_remove_tree(dir);
	if (rename(tmp, dir) < 0) {
		r = -errno;
		diags_add(d, NULL, "cannot move '%s' to '%s': %s", tmp, dir, strerror(errno));
		return r;
	}
	b->a.dir = xstrdup(dir);
	b->a.bzimage = path_join(dir, "bzImage");
	b->a.config = path_join(dir, "config");
	b->a.system_map = path_join(dir, "System.map");
	b->a.log = path_join(dir, "build.log");
	return 0;
}

static void kb_release(struct kbuild *b)
{
	free(b->cache);
	free(b->work);
	free(b->tree);
	free(b->obj);
	kconfig_release(&b->final);
	inputs_release(&b->in);
	strbuf_release(&b->log);
}

int kernel_build(const struct spec *s, const struct kvariant *v, const struct kbuild_opts *o,
		 const struct kbuild_progress *p, struct kartifact *ret, struct diags *d)
{
	struct kbuild b = { .v = v, .p = p, .cache = spec_cache_dir(s), .log = STRBUF_INIT,
			    .jobs = o && o->jobs ? o->jobs : (unsigned)sysconf(_SC_NPROCESSORS_ONLN) };
	bool config_only = o && o->config_only, check_only = o && o->check_only;
	_cleanup_free_ char *dir = NULL, *tmp = NULL;
	_cleanup_close_ int lockfd = -1;
	double t0 = now_sec();
	int r;

	step(p, v->name, "source");
	if ((r = compute_inputs(b.cache, v, true, &b.log, &b.in, d)) < 0)
		goto out;
	dir = xasprintf("%s/kernels/%.16s", b.cache, b.in.key);
	if (!(o && o->force) && !config_only && !check_only && kartifact_load(dir, v->name, b.in.key, &b.a) == 0) {
		cache_touch(dir);
		fill_patch_list(&b.in, &b.a);
		recheck(v, &b.a);
		goto out;
	}
	kartifact_release(&b.a);
	b.a.name = xstrdup(v->name);
	b.a.key = xstrdup(b.in.key);
	b.a.source_identity = xstrdup(b.in.src.identity);
	b.a.subject = b.in.src.subject ? xstrdup(b.in.src.subject) : NULL;
	b.a.author = b.in.src.author ? xstrdup(b.in.src.author) : NULL;
	b.a.compiler = xstrdup(b.in.compiler);
	fill_patch_list(&b.in, &b.a);
	if ((r = kb_tree(&b, config_only || check_only, &lockfd, d)) < 0)
		goto out;
	step(p, v->name, "config");
	r = configure(b.tree, b.obj, v, &b.in, &b.log, &b.final, &b.a, d);
	if (r == 0 && (config_only || check_only))
		kb_keep_config(&b);
	if (r < 0 || config_only)
		goto out;
	if (check_only) {
		r = kb_check(&b, d);
		goto out;
	}
	tmp = xasprintf("%s.tmp.%ld", dir, (long)getpid());
	if ((r = kb_make(&b, d)) < 0 || (r = kb_install(&b, dir, tmp, t0, d)) < 0)
		goto out;
	cache_touch(dir);
out:
	if (r < 0 && b.work) {
		/* keep the evidence: the log of the failed attempt */
		_cleanup_free_ char *failed = path_join(b.work, "last-failed-build.log");

		fs_write_atomic(failed, b.log.buf, b.log.len, 0644);
	}
	if (tmp && r < 0)
		fs_remove_tree(tmp);
	if (r < 0)
		kartifact_release(&b.a);
	else {
		if (!b.a.seconds)
			b.a.seconds = now_sec() - t0;
		*ret = b.a;
	}
	kb_release(&b);
	return r < 0 ? r : 0;
}
