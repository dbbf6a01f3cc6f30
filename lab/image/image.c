/* SPDX-License-Identifier: MIT */
/*
 * Building, finding and listing guest images (see image.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../cache/cache.h"
#include "../util/alloc.h"
#include "../util/command.h"
#include "../util/clock.h"
#include "../util/fs.h"
#include "../util/hash.h"
#include "../util/json.h"
#include "../util/json-read.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../util/units.h"
#include "image.h"
#include "recipe.h"
#include "../util/banned.h"

#define KEY_SHORT 16

void image_artifact_release(struct image_artifact *a)
{
	free(a->name);
	free(a->id);
	free(a->recipe_key);
	free(a->dir);
	free(a->qcow2);
	free(a->packages);
	free(a->log);
	free(a->suite);
	free(a->created);
	memset(a, 0, sizeof(*a));
}

void image_artifacts_free(struct image_artifact *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		image_artifact_release(&v[i]);
	free(v);
}

static void step(const struct image_progress *p, const char *name, const char *what)
{
	if (p && p->step)
		p->step(p->userdata, name, what);
}

static char *images_dir(const struct spec *s)
{
	_cleanup_free_ char *cache = spec_cache_dir(s);

	return path_join(cache, "images");
}

static char *index_path(const char *images, const char *name, const char *recipe_key)
{
	return xasprintf("%s/recipes/%s-%.*s", images, name, KEY_SHORT, recipe_key);
}

/* Fill `a` from <dir>/meta.json; -ENOENT when the folder is not a complete image. */
int image_artifact_load(const char *dir, struct image_artifact *a)
{
	_cleanup_free_ char *meta = path_join(dir, "meta.json"), *qcow2 = path_join(dir, "image.qcow2");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	_cleanup_free_ char *err = NULL;
	double v;

	/* a damaged meta.json is an incomplete image: built again */
	if (!path_is_file(qcow2) || strbuf_read_file(&sb, meta, 1 << 20) < 0 ||
	    json_doc_parse(sb.buf ? sb.buf : "", sb.len, &doc, &err) < 0)
		return -ENOENT;
	a->name = json_doc_string(doc, "name");
	a->id = json_doc_string(doc, "id");
	a->recipe_key = json_doc_string(doc, "recipe_key");
	a->suite = json_doc_string(doc, "suite");
	a->created = json_doc_string(doc, "created");
	if (!a->name || !a->id || !a->recipe_key) {
		image_artifact_release(a);
		return -ENOENT;
	}
	if (json_doc_number(doc, "packages", &v) == 0)
		a->npackages = (size_t)v;
	if (json_doc_number(doc, "build_seconds", &v) == 0)
		a->seconds = v;
	if (json_doc_number(doc, "virtual_bytes", &v) == 0)
		a->virtual_bytes = (uint64_t)v;
	a->dir = xstrdup(dir);
	a->qcow2 = TAKE_PTR(qcow2);
	a->packages = path_join(dir, "packages.txt");
	a->log = path_join(dir, "build.log");
	{
		struct stat st;

		if (stat(a->qcow2, &st) == 0)
			a->disk_bytes = (uint64_t)st.st_size;
	}
	return 0;
}

static int lookup_index(const char *images, const char *name, const char *key, struct image_artifact *ret)
{
	_cleanup_free_ char *idx = index_path(images, name, key), *dir = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r;

	if (strbuf_read_file(&sb, idx, 4096) < 0)
		return -ENOENT;
	while (sb.len && sb.buf[sb.len - 1] == '\n')
		strbuf_setlen(&sb, sb.len - 1);
	if (sb.len < KEY_SHORT || strchr(sb.buf, '/'))
		return -ENOENT;
	dir = xasprintf("%s/%s-%.*s", images, name, KEY_SHORT, sb.buf);
	if ((r = image_artifact_load(dir, ret)) < 0)
		return r;
	/* a lookup is a use (a run's, a boot's; a listing's too: lab gc errs
	 * toward keeping) */
	cache_touch(dir);
	return 0;
}

static int load_recipe(const struct spec_image *im, const struct image_opts *o, struct recipe **ret,
		       char key[SHA256_HEX_LEN + 1], struct diags *d)
{
	int r = recipe_load(im->recipe, im->name, ret, d);

	if (r < 0)
		return r;
	return recipe_key(*ret, o ? o->layer : NULL, key, d);
}

int image_lookup(const struct spec *s, const struct spec_image *im, const struct image_opts *o,
		 struct image_artifact *ret, struct diags *d)
{
	_cleanup_recipe_ struct recipe *rc = NULL;
	_cleanup_free_ char *images = images_dir(s);
	char key[SHA256_HEX_LEN + 1];
	int r = load_recipe(im, o, &rc, key, d);

	if (r < 0)
		return r;
	r = lookup_index(images, im->name, key, ret);
	if (r == 0)
		ret->cached = ret->current = true;
	return r;
}

/* ---- building ---- */

struct build {
	const struct spec_image *im;
	const struct recipe *rc;
	const struct image_opts *o;
	const char *tmp;
	struct strbuf *log;
	struct diags *d;
};

static int run(struct build *b, struct command *c, const char *what)
{
	return command_run_logged(c, b->log, b->d, &b->im->pos, what);
}

static int stage_files(struct build *b, const char *files)
{
	for (size_t i = 0; i < b->rc->nfiles; i++) {
		const struct recipe_file *f = &b->rc->files[i];
		_cleanup_free_ char *to = xasprintf("%s%s", files, f->path), *dir = path_dirname(to);
		int r = path_mkdir_p(dir, 0755);

		if (r == 0 && f->content)
			r = fs_write_atomic(to, f->content, strlen(f->content), f->mode);
		else if (r == 0)
			r = fs_copy_file(f->source, to, true);
		if (r == 0 && chmod(to, f->mode) < 0)
			r = -errno;
		if (r < 0) {
			diags_add(b->d, &f->pos, "cannot stage '%s': %s", f->path, strerror(-r));
			return r;
		}
	}
	return 0;
}

static void hook(struct command *c, const char *fmt, const char *arg)
{
	_cleanup_strbuf_ struct strbuf q = STRBUF_INIT;
	_cleanup_free_ char *h = NULL;

	shell_quote(&q, arg);
	h = xasprintf(fmt, q.buf);
	command_argf(c, "--customize-hook=%s", h);
}

static void service_hooks(struct command *c, const char *verb, const struct strv *units)
{
	for (size_t i = 0; i < units->n; i++) {
		_cleanup_free_ char *fmt = xasprintf("chroot \"$1\" systemctl %s %%s", verb);

		hook(c, fmt, units->v[i]);
	}
}

static int bootstrap(struct build *b, const char *root, const char *files)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strv_ struct strv pkgs = STRV_INIT;
	_cleanup_strbuf_ struct strbuf list = STRBUF_INIT, comps = STRBUF_INIT;
	_cleanup_free_ char *layer_files = b->o->layer ? path_join(b->o->layer, "files") : NULL;

	recipe_all_packages(b->rc, b->o->layer, &pkgs);
	for (size_t i = 0; i < pkgs.n; i++)
		strbuf_addf(&list, "%s%s", i ? "," : "", pkgs.v[i]);
	for (size_t i = 0; i < b->rc->components.n; i++)
		strbuf_addf(&comps, "%s%s", i ? "," : "", b->rc->components.v[i]);

	command_init(&c, "mmdebstrap");
	command_args(&c, "--mode=root", "--format=directory", NULL);
	command_argf(&c, "--variant=%s", b->rc->variant);
	command_argf(&c, "--components=%s", comps.buf);
	/* apt's _apt sandbox user cannot always write /dev/null in containers */
	command_arg(&c, "--aptopt=APT::Sandbox::User \"root\"");
	if (list.len)
		command_argf(&c, "--include=%s", list.buf);
	if (layer_files && path_is_dir(layer_files)) {
		_cleanup_free_ char *src = xasprintf("%s/", layer_files);

		hook(&c, "sync-in %s /", src);
	}
	if (b->rc->nfiles) {
		_cleanup_free_ char *src = xasprintf("%s/", files);

		hook(&c, "sync-in %s /", src);
	}
	if (b->o->layer) {
		_cleanup_free_ char *s = path_join(b->o->layer, "customize");

		hook(&c, "%s \"$1\"", s);
	}
	service_hooks(&c, "enable", &b->rc->enable);
	service_hooks(&c, "disable", &b->rc->disable);
	service_hooks(&c, "mask", &b->rc->mask);
	for (size_t i = 0; i < b->rc->commands.n; i++)
		hook(&c, "chroot \"$1\" /bin/sh -ec %s", b->rc->commands.v[i]);
	if (b->o->layer) {
		_cleanup_free_ char *s = path_join(b->o->layer, "finalize");

		hook(&c, "%s \"$1\"", s);
	}
	command_args(&c, b->rc->suite, root, b->rc->mirror, NULL);
	return run(b, &c, "mmdebstrap");
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* packages.txt: name=version of everything installed, sorted; checks the recipe's packages are there. */
static int list_packages(struct build *b, const char *root, struct strbuf *ret, size_t *ret_n)
{
	_cleanup_command_ struct command c = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_strv_ struct strv lines = STRV_INIT, wanted = STRV_INIT;
	_cleanup_free_ char *admin = path_join(root, "var/lib/dpkg");
	char *save = NULL;
	size_t before = b->d->n;
	int r;

	command_init(&c, "dpkg-query");
	command_argf(&c, "--admindir=%s", admin);
	command_args(&c, "-W", "-f", "${db:Status-Abbrev} ${Package}=${Version}\n", NULL);
	c.out = &out;
	r = command_run(&c);
	if (r != 0) {
		diags_add(b->d, &b->im->pos, "cannot list the packages of image '%s' (dpkg-query exit %d)",
			  b->im->name, r);
		return -EIO;
	}
	for (char *l = strtok_r(out.buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(l, ' ');

		/* "ii " installed; skip config-files and half-installed leftovers */
		if (!str_startswith(l, "ii") || !sp)
			continue;
		strv_push(&lines, sp + 1);
	}
	qsort(lines.v, lines.n, sizeof(char *), cmp_line);
	for (size_t i = 0; i < lines.n; i++)
		strbuf_addf(ret, "%s\n", lines.v[i]);
	recipe_all_packages(b->rc, b->o->layer, &wanted);
	for (size_t i = 0; i < wanted.n; i++) {
		_cleanup_free_ char *prefix = xasprintf("%s=", wanted.v[i]);
		bool found = false;

		for (size_t j = 0; j < lines.n && !found; j++)
			found = str_startswith(lines.v[j], prefix);
		if (!found)
			diags_add(b->d, &b->im->pos, "image '%s': package '%s' is not installed after the build",
				  b->im->name, wanted.v[i]);
	}
	*ret_n = lines.n;
	return b->d->n > before ? -EINVAL : 0;
}

static int make_disk(struct build *b, const char *root, const char *out)
{
	_cleanup_free_ char *raw = path_join(b->tmp, "root.ext4");
	_cleanup_command_ struct command mk = { 0 };
	_cleanup_command_ struct command cv = { 0 };
	int r;

	command_init(&mk, "mkfs.ext4");
	command_args(&mk, "-q", "-F", "-L", "lab-root", "-d", root, raw, NULL);
	command_argf(&mk, "%lluk", (unsigned long long)(b->rc->size >> 10));
	r = run(b, &mk, "mkfs.ext4");
	if (r < 0) {
		_cleanup_free_ char *sz = format_size(b->rc->size);

		diags_add(b->d, &b->im->pos, "image '%s': the tree may not fit in size %s; raise 'size:' in %s",
			  b->im->name, sz, b->rc->path);
		return r;
	}
	command_init(&cv, "qemu-img");
	command_args(&cv, "convert", "-c", "-O", "qcow2", raw, out, NULL);
	r = run(b, &cv, "qemu-img convert");
	unlink(raw);
	return r;
}

static int write_meta(const char *dir, const struct build *b, const struct image_artifact *a)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *path = path_join(dir, "meta.json");
	struct json j;

	json_init(&j, &sb, true);
	json_object_begin(&j);
	json_kv_string(&j, "name", a->name);
	json_kv_string(&j, "id", a->id);
	json_kv_string(&j, "recipe_key", a->recipe_key);
	json_kv_string(&j, "recipe", b->rc->path);
	json_kv_string(&j, "suite", b->rc->suite);
	json_kv_string(&j, "mirror", b->rc->mirror);
	json_kv_string(&j, "variant", b->rc->variant);
	json_kv_string(&j, "created", a->created);
	json_key(&j, "build_seconds");
	json_double(&j, a->seconds);
	json_kv_uint(&j, "packages", a->npackages);
	json_kv_uint(&j, "virtual_bytes", a->virtual_bytes);
	json_object_end(&j);
	json_finish(&j);
	return fs_write_atomic(path, sb.buf, sb.len, 0644);
}

static int finish_build(struct build *b, const char *images, const char *key, const char *root,
			struct image_artifact *ret, double t0, const struct image_progress *p)
{
	_cleanup_strbuf_ struct strbuf pk = STRBUF_INIT, idbuf = STRBUF_INIT;
	_cleanup_free_ char *out = NULL, *final = NULL, *idx = NULL, *idxdir = NULL, *tmpq = NULL;
	struct image_artifact a = { 0 };
	char id[SHA256_HEX_LEN + 1];
	int r;

	step(p, b->im->name, "listing packages");
	if ((r = list_packages(b, root, &pk, &a.npackages)) < 0)
		return r;
	strbuf_addf(&idbuf, "%s\n%s", key, pk.buf);
	sha256_hex(idbuf.buf, idbuf.len, id);
	final = xasprintf("%s/%s-%.*s", images, b->im->name, KEY_SHORT, id);
	idx = index_path(images, b->im->name, key);
	idxdir = path_join(images, "recipes");
	if ((r = path_mkdir_p(idxdir, 0755)) < 0)
		return r;

	if (image_artifact_load(final, ret) == 0) {
		/* the archive gave the same packages as last time: same image */
		step(p, b->im->name, "same packages as the cached image");
		ret->cached = ret->current = true;
		return fs_write_atomic(idx, id, strlen(id), 0644);
	}

	out = path_join(b->tmp, "out");
	tmpq = path_join(out, "image.qcow2");
	if ((r = path_mkdir_p(out, 0755)) < 0)
		return r;
	step(p, b->im->name, "making the qcow2 image");
	if ((r = make_disk(b, root, tmpq)) < 0)
		return r;
	a.name = xstrdup(b->im->name);
	a.id = xstrdup(id);
	a.recipe_key = xstrdup(key);
	a.created = utc_now();
	a.virtual_bytes = b->rc->size;
	a.seconds = now_sec() - t0;
	{
		_cleanup_free_ char *pkf = path_join(out, "packages.txt"), *rcp = path_join(out, "recipe.yaml");
		_cleanup_free_ char *logf = path_join(out, "build.log");

		r = fs_write_atomic(pkf, pk.buf, pk.len, 0644);
		if (r == 0)
			r = fs_copy_file(b->rc->path, rcp, true);
		if (r == 0)
			r = write_meta(out, b, &a);
		if (r == 0)
			r = fs_write_atomic(logf, b->log->buf, b->log->len, 0644);
	}
	if (r == 0 && rename(out, final) < 0)
		r = -errno;
	if (r == 0)
		r = fs_write_atomic(idx, id, strlen(id), 0644);
	image_artifact_release(&a);
	if (r < 0) {
		diags_add(b->d, &b->im->pos, "cannot store image '%s' in '%s': %s", b->im->name, final, strerror(-r));
		return r;
	}
	r = image_artifact_load(final, ret);
	if (r == 0)
		ret->current = true;
	return r;
}

int image_build(const struct spec *s, const struct spec_image *im, const struct image_opts *o,
		const struct image_progress *p, struct image_artifact *ret, struct diags *d)
{
	static const struct image_opts none = { 0 };
	_cleanup_recipe_ struct recipe *rc = NULL;
	_cleanup_free_ char *images = images_dir(s), *tmp = NULL, *root = NULL, *files = NULL;
	_cleanup_strbuf_ struct strbuf log = STRBUF_INIT;
	_cleanup_close_ int lockfd = -1;
	char key[SHA256_HEX_LEN + 1];
	double t0 = now_sec();
	struct build b;
	int r;

	if (!o)
		o = &none;
	if ((r = load_recipe(im, o, &rc, key, d)) < 0)
		return r;
	if (!o->refresh && lookup_index(images, im->name, key, ret) == 0) {
		ret->cached = ret->current = true;
		return 0;
	}
	if (geteuid() != 0) {
		diags_add(d, &im->pos, "building image '%s' needs root (mmdebstrap --mode=root, mkfs.ext4 -d "
			  "keeps the tree's owners)", im->name);
		return -EPERM;
	}
	if ((r = path_mkdir_p(images, 0755)) == 0) {
		_cleanup_free_ char *lock = path_join(images, "lock");

		r = lockfd = fs_lock(lock, NULL, NULL);
	}
	if (r < 0) {
		diags_add(d, &im->pos, "cannot use the image cache '%s': %s", images, strerror(-r));
		return r;
	}
	/* another lab may have built it while we waited for the lock */
	if (!o->refresh && lookup_index(images, im->name, key, ret) == 0) {
		ret->cached = ret->current = true;
		return 0;
	}
	tmp = xasprintf("%s/tmp-%s-%d", images, im->name, (int)getpid());
	root = path_join(tmp, "root");
	files = path_join(tmp, "files");
	fs_remove_tree(tmp);
	if ((r = path_mkdir_p(files, 0755)) < 0) {
		diags_add(d, &im->pos, "cannot create '%s': %s", files, strerror(-r));
		return r;
	}
	b = (struct build){ .im = im, .rc = rc, .o = o, .tmp = tmp, .log = &log, .d = d };
	r = stage_files(&b, files);
	if (r == 0) {
		step(p, im->name, "mmdebstrap");
		r = bootstrap(&b, root, files);
	}
	if (r == 0)
		r = finish_build(&b, images, key, root, ret, t0, p);
	if (r == 0) {
		_cleanup_free_ char *failed = xasprintf("%s/%s-failed.log", images, im->name);

		cache_touch(ret->dir);
		unlink(failed);
	} else {
		/* keep the log of a failed build where the user can read it */
		_cleanup_free_ char *failed = xasprintf("%s/%s-failed.log", images, im->name);

		if (fs_write_atomic(failed, log.buf, log.len, 0644) == 0)
			diags_add(d, &im->pos, "image '%s' failed; its log is '%s'", im->name, failed);
	}
	fs_remove_tree(tmp);
	return r;
}

/* ---- listing ---- */

static int cmp_images(const void *x, const void *y)
{
	const struct image_artifact *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	return -strcmp(a->created ? a->created : "", b->created ? b->created : "");
}

int image_list(const char *cache, struct image_artifact **ret, size_t *n, struct diags *d)
{
	_cleanup_free_ char *images = path_join(cache, "images");
	struct image_artifact *v = NULL;
	size_t alloc = 0, count = 0;
	DIR *dir = opendir(images);
	struct dirent *e;

	(void)d;
	*ret = NULL;
	*n = 0;
	if (!dir)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(dir))) {
		_cleanup_free_ char *p = NULL;
		struct image_artifact a = { 0 };

		if (e->d_name[0] == '.' || streq(e->d_name, "recipes") || str_startswith(e->d_name, "tmp-"))
			continue;
		p = path_join(images, e->d_name);
		if (image_artifact_load(p, &a) < 0)
			continue;
		GROW(v, alloc, count + 1);
		v[count++] = a;
	}
	closedir(dir);
	if (count)
		qsort(v, count, sizeof(*v), cmp_images);
	*ret = v;
	*n = count;
	return 0;
}
