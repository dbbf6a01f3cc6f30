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

static int resolve(const struct spec *s, const char *name, bool files, struct kvariant *ret, struct diags *d)
{
	const char *at = strchr(name, '@');
	_cleanup_free_ char *base = at ? xstrndup(name, (size_t)(at - name)) : xstrdup(name);
	const struct spec_kernel *chain[64];
	const struct spec_kernel *k = spec_find_kernel(s, base);
	size_t depth = 0;
	uint64_t step = 0;
	struct kvariant v = { 0 };
	size_t req_alloc = 0;
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
	for (const struct spec_kernel *c = k; c; c = c->from.name ? spec_find_kernel(s, c->from.name) : NULL) {
		if (depth == ELEMENTSOF(chain))
			return -ELOOP; /* spec_check refuses cycles; a 64-deep chain is absurd */
		chain[depth++] = c;
	}
	v.name = xstrdup(name);
	v.kernel = k;
	v.source = k->root_source;
	v.start = "defconfig";
	for (size_t i = depth; i-- > 0;) {
		const struct spec_kernel *c = chain[i];
		struct strv own = STRV_INIT;
		int r = files ? kvariant_own_patches(c, &own, d) : 0;

		if (r < 0) {
			strv_release(&own);
			kvariant_release(&v);
			return r;
		}
		if (i == 0 && step && files) {
			if (step > own.n) {
				diags_add(d, &c->sweep_pos, "sweep step %llu of '%s' is beyond its %zu patches",
					  (unsigned long long)step, c->name, own.n);
				strv_release(&own);
				kvariant_release(&v);
				return -EINVAL;
			}
		}
		for (size_t j = 0; j < own.n && (i != 0 || !step || j < step); j++)
			push_abs(&v.patches, own.v[j]);
		strv_release(&own);
		for (size_t j = 0; j < c->configs.n; j++)
			push_abs(&v.configs, c->configs.v[j]);
		for (size_t j = 0; j < c->nrequire; j++) {
			/* a descendant's assertion of the same symbol replaces its ancestor's */
			size_t x;

			for (x = 0; x < v.nrequire; x++)
				if (streq(v.require[x]->symbol, c->require[j].symbol))
					break;
			if (x == v.nrequire) {
				GROW(v.require, req_alloc, v.nrequire + 1);
				v.nrequire++;
			}
			v.require[x] = &c->require[j];
		}
		if (c->start)
			v.start = c->start;
		if (c->cmdline) {
			free(v.cmdline);
			v.cmdline = xstrdup(c->cmdline);
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
