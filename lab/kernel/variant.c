/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/units.h"
#include "patch.h"
#include "variant.h"
#include "../util/banned.h"

void kvariant_release(struct kvariant *v)
{
	free(v->name);
	strv_release(&v->patches);
	strv_release(&v->configs);
	free(v->require);
	free(v->cmdline);
	memset(v, 0, sizeof(*v));
}

void kvariant_names(const struct spec *s, struct strv *ret)
{
	for (size_t i = 0; i < s->nkernels; i++) {
		const struct spec_kernel *k = &s->kernels[i];

		strv_push(ret, k->name);
		for (size_t j = 0; j < k->nsweep; j++)
			strv_push_take(ret, xasprintf("%s@%u", k->name, k->sweep[j]));
	}
}

/* Commands run in other folders: hand them absolute paths. */
static void push_abs(struct strv *v, const char *path)
{
	char *abs = realpath(path, NULL);

	strv_push_take(v, abs ? abs : xstrdup(path));
}

int kvariant_own_patches(const struct spec_kernel *k, struct strv *ret, struct diags *d)
{
	if (k->patches_dir && k->patches.n) {
		int r = patch_series_list(k->patches.v[0], ret);

		if (r < 0) {
			diags_add(d, &k->patches_pos, "cannot list patch folder '%s': %s", k->patches.v[0], strerror(-r));
			return r;
		}
		return 0;
	}
	for (size_t i = 0; i < k->patches.n; i++)
		strv_push(ret, k->patches.v[i]);
	return 0;
}

/* The kernel a variant name (KERNEL or KERNEL@STEP) names, and its sweep step (0: none). */
static int find_variant(const struct spec *s, const char *name, const struct spec_kernel **ret_kernel,
			uint64_t *ret_step, struct diags *d)
{
	const char *at = strchr(name, '@');
	_cleanup_free_ char *base = at ? xstrndup(name, (size_t)(at - name)) : xstrdup(name);
	const struct spec_kernel *k = spec_find_kernel(s, base);
	uint64_t step = 0;
	struct pos pos = { .file = s->path };

	if (!k) {
		diags_add(d, &pos, "no kernel variant '%s' in %s", name, s->path);
		return -ENOENT;
	}
	if (at) {
		bool ok = parse_uint(at + 1, 999, &step) == 0;

		for (size_t i = 0; ok && i < k->nsweep; i++)
			if (k->sweep[i] == step)
				goto found;
		diags_add(d, &k->pos, "kernel '%s' has no sweep step '%s'", base, at + 1);
		return -ENOENT;
	}
found:
	*ret_kernel = k;
	*ret_step = step;
	return 0;
}

/* Add a requirement to v; a descendant's assertion of the same symbol replaces its ancestor's. */
static void add_require(struct kvariant *v, const struct spec_require *req, size_t *req_alloc)
{
	size_t x;

	for (x = 0; x < v->nrequire; x++)
		if (streq(v->require[x]->symbol, req->symbol))
			break;
	if (x == v->nrequire) {
		GROW(v->require, *req_alloc, v->nrequire + 1);
		v->nrequire++;
	}
	v->require[x] = req;
}

/* Lay kernel c over v: its patches (the first cut of them when cut is not 0), configs,
 * requirements, start and cmdline. */
static int add_layer(const struct spec_kernel *c, uint64_t cut, bool files, struct kvariant *v, size_t *req_alloc,
		     struct diags *d)
{
	struct strv own = STRV_INIT;
	int r = files ? kvariant_own_patches(c, &own, d) : 0;

	if (r < 0) {
		strv_release(&own);
		return r;
	}
	if (cut && files) {
		if (cut > own.n) {
			diags_add(d, &c->sweep_pos, "sweep step %llu of '%s' is beyond its %zu patches",
				  (unsigned long long)cut, c->name, own.n);
			strv_release(&own);
			return -EINVAL;
		}
	}
	for (size_t j = 0; j < own.n && (!cut || j < cut); j++)
		push_abs(&v->patches, own.v[j]);
	strv_release(&own);
	for (size_t j = 0; j < c->configs.n; j++)
		push_abs(&v->configs, c->configs.v[j]);
	for (size_t j = 0; j < c->nrequire; j++)
		add_require(v, &c->require[j], req_alloc);
	if (c->start)
		v->start = c->start;
	if (c->cmdline) {
		free(v->cmdline);
		v->cmdline = xstrdup(c->cmdline);
	}
	return 0;
}

static int resolve(const struct spec *s, const char *name, bool files, struct kvariant *ret, struct diags *d)
{
	const struct spec_kernel *chain[64];
	const struct spec_kernel *k;
	size_t depth = 0;
	uint64_t step;
	struct kvariant v = { 0 };
	size_t req_alloc = 0;
	int r = find_variant(s, name, &k, &step, d);

	if (r < 0)
		return r;
	for (const struct spec_kernel *c = k; c; c = c->from.name ? spec_find_kernel(s, c->from.name) : NULL) {
		if (depth == ELEMENTSOF(chain))
			return -ELOOP; /* spec_check refuses cycles; a 64-deep chain is absurd */
		chain[depth++] = c;
	}
	v.name = xstrdup(name);
	v.kernel = k;
	v.source = k->root_source;
	v.start = "defconfig";
	/* the root ancestor first, the variant's own kernel last */
	for (size_t i = depth; i-- > 0;) {
		r = add_layer(chain[i], i == 0 ? step : 0, files, &v, &req_alloc, d);
		if (r < 0) {
			kvariant_release(&v);
			return r;
		}
	}
	*ret = v;
	return 0;
}

int kvariant_resolve(const struct spec *s, const char *name, struct kvariant *ret, struct diags *d)
{
	return resolve(s, name, true, ret, d);
}

int kvariant_resolve_built(const struct spec *s, const char *name, struct kvariant *ret, struct diags *d)
{
	return resolve(s, name, false, ret, d);
}

char *kvariant_localversion(const char *name, const char *hash)
{
	struct strbuf sb = STRBUF_INIT;
	size_t max = 40; /* "6.1.123" + "-lab-" + name + "-" + 8 hex stays under 64 */

	strbuf_addstr(&sb, "-lab-");
	for (const char *p = name; *p && sb.len < 5 + max; p++) {
		char c = *p;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
			c = '.';
		strbuf_addch(&sb, c);
	}
	strbuf_addf(&sb, "-%.8s", hash);
	return strbuf_detach(&sb, NULL);
}
