/* SPDX-License-Identifier: MIT */
/*
 * images/<name>.yaml -> struct recipe, with every error positioned; and the
 * recipe key that names what a build of it would produce.
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "../spec/getters.h"
#include "../util/alloc.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "recipe.h"
#include "../util/banned.h"

static const char *const variants[] = { "apt", "essential", "extract", "custom", "minbase",
					"buildd", "required", "important", "standard" };

void recipe_free(struct recipe *r)
{
	if (!r)
		return;
	free(r->name);
	free(r->path);
	free(r->description);
	free(r->suite);
	free(r->mirror);
	strv_release(&r->components);
	free(r->variant);
	strv_release(&r->packages);
	for (size_t i = 0; i < r->nfiles; i++) {
		free(r->files[i].path);
		free(r->files[i].content);
		free(r->files[i].source);
	}
	free(r->files);
	strv_release(&r->commands);
	strv_release(&r->enable);
	strv_release(&r->disable);
	strv_release(&r->mask);
	node_files_release(&r->nfiles_names);
	free(r);
}

/* Debian package names: lowercase letters, digits, + - . ; at least two, starting alphanumeric. */
static bool package_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || strchr("+-.", s[i])))
			return false;
	return true;
}

static bool unit_name_ok(const char *s)
{
	if (!*s || *s == '-')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr(":-_.@\\", *s)))
			return false;
	return true;
}

static bool image_path_ok(const char *p)
{
	if (p[0] != '/' || p[1] == '\0')
		return false;
	for (const char *s = p; *s; s++)
		if (*s == '\n')
			return false;
	return !strstr(p, "/../") && !str_endswith(p, "/..") && !strstr(p, "//") && !str_endswith(p, "/");
}

static int parse_mode(const struct node *n, unsigned *ret, struct diags *d)
{
	char *end;
	unsigned long v;

	if (!node_want(d, n, NODE_SCALAR, "mode"))
		return -EINVAL;
	errno = 0;
	v = strtoul(n->scalar, &end, 8);
	if (errno || end == n->scalar || *end || v > 07777 || n->scalar[0] == '-') {
		node_err(d, n, "mode must be octal such as \"0644\", not '%s'", n->scalar);
		return -EINVAL;
	}
	*ret = (unsigned)v;
	return 0;
}

static void load_file(struct recipe *r, const struct node *n, const struct spec_confine *cf, struct diags *d)
{
	static const char *const keys[] = { "path", "content", "source", "mode" };
	const struct node *p = node_map_get(n, "path"), *c = node_map_get(n, "content"),
			  *s = node_map_get(n, "source"), *m = node_map_get(n, "mode");
	struct recipe_file f = { .mode = 0644, .pos = n->pos };

	if (!node_want(d, n, NODE_MAP, "a files entry"))
		return;
	node_check_keys(n, keys, ELEMENTSOF(keys), "a files entry", d);
	if (!p) {
		node_err(d, n, "a files entry needs 'path'");
		return;
	}
	f.path = node_get_string(d, p, "path");
	if (f.path && !image_path_ok(f.path)) {
		node_err(d, p, "path '%s' must be absolute and plain (no '..', '//' or trailing '/')", f.path);
		goto fail;
	}
	if (!!c == !!s) {
		node_err(d, n, "a files entry needs exactly one of 'content' or 'source'");
		goto fail;
	}
	if (c) {
		if (!node_want(d, c, NODE_SCALAR, "content"))
			goto fail;
		f.content = xstrdup(c->scalar);
	} else {
		_cleanup_free_ char *rel = node_get_string(d, s, "source"), *dir = NULL;
		const char *why;

		if (!rel)
			goto fail;
		dir = path_dirname(s->pos.file);
		f.source = path_join(dir, rel);
		/* a snapshot's recipe copies in only the snapshot's files, refused before a look at the host's */
		if (cf && (why = spec_confine_refuses(cf, f.source, false))) {
			spec_confine_refused(d, s, "source", why);
			goto fail;
		}
		if (!path_is_file(f.source)) {
			node_err(d, s, "source file '%s' does not exist", f.source);
			goto fail;
		}
	}
	if (m && parse_mode(m, &f.mode, d) < 0)
		goto fail;
	if (!f.path)
		goto fail;
	for (size_t i = 0; i < r->nfiles; i++)
		if (streq(r->files[i].path, f.path)) {
			node_err(d, p, "'%s' is written twice (first at line %u)", f.path, r->files[i].pos.line);
			goto fail;
		}
	GROW(r->files, r->files_alloc, r->nfiles + 1);
	r->files[r->nfiles++] = f;
	return;
fail:
	free(f.path);
	free(f.content);
	free(f.source);
}

static void load_names(const struct node *n, const char *what, bool (*ok)(const char *), const char *rule,
		       struct strv *ret, struct diags *d)
{
	size_t count = n->kind == NODE_SEQ ? n->n : 1;

	node_get_strv(d, n, what, false, ret);
	for (size_t i = 0; i < count; i++) {
		const struct node *it = n->kind == NODE_SEQ ? n->items[i] : n;

		if (it->kind == NODE_SCALAR && !node_is_null(it) && *it->scalar && !ok(it->scalar))
			node_err(d, it, "'%s' in %s is not %s", it->scalar, what, rule);
	}
}

static void load_services(struct recipe *r, const struct node *n, struct diags *d)
{
	static const char *const keys[] = { "enable", "disable", "mask" };
	struct strv *lists[] = { &r->enable, &r->disable, &r->mask };

	if (!node_want(d, n, NODE_MAP, "services"))
		return;
	node_check_keys(n, keys, ELEMENTSOF(keys), "services", d);
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		const struct node *v = node_map_get(n, keys[i]);

		if (v)
			load_names(v, keys[i], unit_name_ok, "a systemd unit name", lists[i], d);
	}
}

static void load_root(struct recipe *r, const struct node *root, const struct spec_confine *cf, struct diags *d)
{
	static const char *const keys[] = { "description", "suite", "mirror", "components", "variant",
					    "size", "packages", "files", "commands", "services" };
	const struct node *v;

	if (!node_want(d, root, NODE_MAP, "an image recipe"))
		return;
	node_check_keys(root, keys, ELEMENTSOF(keys), "an image recipe", d);
	if ((v = node_map_get(root, "description")))
		r->description = node_get_string(d, v, "description");
	if (!(v = node_map_get(root, "suite")))
		node_err(d, root, "an image recipe needs 'suite' (a Debian suite such as bookworm)");
	else if ((r->suite = node_get_string(d, v, "suite")) && !str_is_name(r->suite))
		node_err(d, v, "suite '%s' is not a suite name", r->suite);
	r->mirror = xstrdup(RECIPE_DEFAULT_MIRROR);
	if ((v = node_map_get(root, "mirror"))) {
		_cleanup_free_ char *m = node_get_string(d, v, "mirror");

		if (m && !str_startswith(m, "http://") && !str_startswith(m, "https://") &&
		    !str_startswith(m, "file://"))
			node_err(d, v, "mirror must be an http://, https:// or file:// address, not '%s'", m);
		else if (m)
			{
			free(r->mirror);
			r->mirror = TAKE_PTR(m);
		}
	}
	if ((v = node_map_get(root, "components")))
		load_names(v, "components", str_is_name, "a component name", &r->components, d);
	if (!r->components.n)
		strv_push(&r->components, "main");
	r->variant = xstrdup("apt");
	if ((v = node_map_get(root, "variant"))) {
		_cleanup_free_ char *s = node_get_string(d, v, "variant");
		bool known = false;

		for (size_t i = 0; s && i < ELEMENTSOF(variants); i++)
			known |= streq(s, variants[i]);
		if (s && !known) {
			const char *near = str_suggest(s, variants, ELEMENTSOF(variants));

			if (near)
				node_err(d, v, "unknown mmdebstrap variant '%s'; did you mean '%s'?", s, near);
			else
				node_err(d, v, "unknown mmdebstrap variant '%s'", s);
		} else if (s) {
			free(r->variant);
			r->variant = TAKE_PTR(s);
		}
	}
	r->size = RECIPE_DEFAULT_SIZE;
	if ((v = node_map_get(root, "size")) && node_get_size(d, v, "size", &r->size) == 0 && r->size < (256ULL << 20))
		node_err(d, v, "size must be at least 256M");
	if ((v = node_map_get(root, "packages")))
		load_names(v, "packages", package_name_ok, "a Debian package name", &r->packages, d);
	if ((v = node_map_get(root, "files")) && node_want(d, v, NODE_SEQ, "files"))
		for (size_t i = 0; i < v->n; i++)
			load_file(r, v->items[i], cf, d);
	if ((v = node_map_get(root, "commands")))
		node_get_strv(d, v, "commands", true, &r->commands);
	if ((v = node_map_get(root, "services")))
		load_services(r, v, d);
}

static int finish(struct recipe *r, struct node *root, const struct spec_confine *cf, struct diags *d,
		  struct recipe **ret)
{
	size_t before = d->n;

	if (root)
		load_root(r, root, cf, d);
	node_free(root);
	if (!root || d->n > before) {
		recipe_free(r);
		return -EINVAL;
	}
	*ret = r;
	return 0;
}

static struct recipe *recipe_new(const char *path, const char *name)
{
	struct recipe *r = xcalloc(1, sizeof(*r));

	r->path = xstrdup(path);
	r->name = xstrdup(name);
	return r;
}

int recipe_load_confined(const char *path, const char *name, const struct spec_confine *cf, struct recipe **ret,
			 struct diags *d)
{
	struct recipe *r = recipe_new(path, name);

	return finish(r, node_parse_file(&r->nfiles_names, path, d), cf, d, ret);
}

int recipe_load(const char *path, const char *name, struct recipe **ret, struct diags *d)
{
	return recipe_load_confined(path, name, NULL, ret, d);
}

int recipe_load_buffer(const char *file, const char *data, size_t len, const char *name, struct recipe **ret,
		       struct diags *d)
{
	struct recipe *r = recipe_new(file, name);

	return finish(r, node_parse(&r->nfiles_names, file, data, len, d), NULL, d, ret);
}

/* ---- the key ---- */

static int hash_file(struct hasher *h, const char *path, struct diags *d)
{
	char hex[SHA256_HEX_LEN + 1];
	int r = sha256_file(path, hex);

	if (r < 0) {
		diags_add(d, NULL, "cannot read '%s': %s", path, strerror(-r));
		return r;
	}
	hasher_add_str(h, hex);
	return 0;
}

/* Every regular file and symlink under dir, sorted, with its relative path and mode. */
static int hash_tree(struct hasher *h, const char *dir, const char *rel, struct diags *d)
{
	_cleanup_free_ char *full = rel[0] ? path_join(dir, rel) : xstrdup(dir);
	struct dirent **names = NULL;
	int n = scandir(full, &names, NULL, alphasort), r = 0;

	if (n < 0) {
		diags_add(d, NULL, "cannot read folder '%s': %s", full, strerror(errno));
		return -errno;
	}
	for (int i = 0; i < n; i++) {
		const char *e = names[i]->d_name;
		_cleanup_free_ char *sub = NULL, *p = NULL;
		struct stat st;

		if (r < 0 || streq(e, ".") || streq(e, ".."))
			goto next;
		sub = rel[0] ? xasprintf("%s/%s", rel, e) : xstrdup(e);
		p = path_join(dir, sub);
		if (lstat(p, &st) < 0) {
			r = -errno;
			diags_add(d, NULL, "cannot stat '%s': %s", p, strerror(errno));
			goto next;
		}
		if (S_ISDIR(st.st_mode)) {
			r = hash_tree(h, dir, sub, d);
			goto next;
		}
		hasher_add_str(h, sub);
		{
			_cleanup_free_ char *mode = xasprintf("%o", (unsigned)(st.st_mode & 07777));

			hasher_add_str(h, mode);
		}
		if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t len = readlink(p, target, sizeof(target) - 1);

			if (len >= 0) {
				target[len] = '\0';
				hasher_add_str(h, target);
			}
		} else if (S_ISREG(st.st_mode)) {
			r = hash_file(h, p, d);
		}
next:
		free(names[i]);
	}
	free(names);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void hash_list(struct hasher *h, const char *what, const struct strv *l, bool sorted)
{
	_cleanup_free_ char **v = xcalloc(l->n + 1, sizeof(char *));

	if (l->n)
		memcpy(v, l->v, l->n * sizeof(char *));
	if (sorted)
		qsort(v, l->n, sizeof(char *), cmp_str);
	hasher_add_str(h, what);
	for (size_t i = 0; i < l->n; i++)
		hasher_add_str(h, v[i]);
	hasher_add_str(h, "");
}

static void read_layer_packages(const char *layer, struct strv *ret)
{
	_cleanup_free_ char *path = layer ? path_join(layer, "packages") : NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char *save = NULL;

	if (!path || strbuf_read_file(&sb, path, 1 << 20) < 0)
		return;
	for (char *line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		line += strspn(line, " \t");
		if (*line && *line != '#' && !strv_contains(ret, line))
			strv_push(ret, line);
	}
}

void recipe_all_packages(const struct recipe *r, const char *layer, struct strv *ret)
{
	read_layer_packages(layer, ret);
	for (size_t i = 0; i < r->packages.n; i++)
		if (!strv_contains(ret, r->packages.v[i]))
			strv_push(ret, r->packages.v[i]);
}

int recipe_key(const struct recipe *r, const char *layer, char out[SHA256_HEX_LEN + 1], struct diags *d)
{
	struct hasher *h = hasher_new();
	_cleanup_free_ char *size = xasprintf("%llu", (unsigned long long)r->size);
	int ret = 0;

	hasher_add_str(h, "lab-image-v1");
	hasher_add_str(h, r->suite);
	hasher_add_str(h, r->mirror);
	hash_list(h, "components", &r->components, false);
	hasher_add_str(h, r->variant);
	hasher_add_str(h, size);
	hash_list(h, "packages", &r->packages, true);
	for (size_t i = 0; i < r->nfiles; i++) {
		_cleanup_free_ char *mode = xasprintf("%o", r->files[i].mode);

		hasher_add_str(h, r->files[i].path);
		hasher_add_str(h, mode);
		if (r->files[i].content)
			hasher_add_str(h, r->files[i].content);
		else if (hash_file(h, r->files[i].source, d) < 0)
			ret = -EIO;
	}
	hash_list(h, "commands", &r->commands, false);
	hash_list(h, "enable", &r->enable, false);
	hash_list(h, "disable", &r->disable, false);
	hash_list(h, "mask", &r->mask, false);
	hasher_add_str(h, "layer");
	if (layer && hash_tree(h, layer, "", d) < 0)
		ret = -EIO;
	hasher_finish(h, out);
	return ret;
}
