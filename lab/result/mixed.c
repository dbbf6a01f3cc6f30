/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "mixed.h"
#include "../util/banned.h"

static struct env_pair *find(struct env_pair *p, size_t n, int fa, int fb)
{
	for (size_t i = 0; i < n; i++)
		if (p[i].fa == fa && p[i].fb == fb)
			return &p[i];
	return NULL;
}

size_t env_pairs_build(const struct result_set *rs, struct env_pair **ret)
{
	struct env_pair *p = NULL;
	size_t n = 0, alloc = 0;

	*ret = NULL;
	if (rs->nfps < 2)
		return 0;
	/* quadratic in the runs of a set: a few thousand at most */
	for (size_t i = 0; i < rs->n; i++) {
		const struct result_run *a = &rs->runs[i];

		if (a->fp < 0 || a->status == RUN_PENDING)
			continue;
		for (size_t k = i + 1; k < rs->n; k++) {
			const struct result_run *b = &rs->runs[k];
			const struct result_run *lo = a, *hi = b;
			struct env_pair *e;

			if (b->fp < 0 || b->fp == a->fp || b->status == RUN_PENDING || !streq(a->group, b->group))
				continue;
			if (b->fp < a->fp) {
				lo = b;
				hi = a;
			}
			if (!(e = find(p, n, lo->fp, hi->fp))) {
				GROW(p, alloc, n + 1);
				e = &p[n++];
				*e = (struct env_pair){ .fa = lo->fp, .fb = hi->fp, .va = lo->variant, .vb = hi->variant,
							.group = a->group };
			}
			if (streq(a->variant, b->variant) && !e->same_variant) {
				e->same_variant = true;
				e->va = lo->variant;
				e->vb = hi->variant;
			}
		}
	}
	{
		size_t k = 0;

		/* two variants whose environments differ in their configs alone are no mix */
		for (size_t i = 0; i < n; i++) {
			p[i].n = fingerprint_diff(&rs->fps[p[i].fa], &rs->fps[p[i].fb], p[i].same_variant, p[i].d,
						  &p[i].nmatters);
			if (p[i].n)
				p[k++] = p[i];
		}
		n = k;
	}
	if (!n) {
		free(p);
		p = NULL;
	}
	*ret = p;
	return n;
}

size_t env_pairs_matter(const struct env_pair *p, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		m += p[i].nmatters > 0;
	return m;
}

void env_pair_describe(const struct env_pair *p, struct strbuf *out)
{
	strbuf_addf(out, "%s vs %s in '%s': ", p->va, p->vb, p->group);
	fp_diffs_describe(p->d, p->n, out);
}
