/* SPDX-License-Identifier: MIT */
#include <stdlib.h>
#include <string.h>
#include "../kernel/patch.h"
#include "../kernel/variant.h"
#include "../util/alloc.h"
#include "series.h"
#include "../util/banned.h"

void run_series_record(struct result_set *rs, const struct spec *s)
{
	for (size_t i = 0; i < rs->variants.n; i++) {
		const char *at = strchr(rs->variants.v[i], '@');
		_cleanup_free_ char *name = at ? xstrndup(rs->variants.v[i], (size_t)(at - rs->variants.v[i])) : NULL;
		const struct spec_kernel *k = name ? spec_find_kernel(s, name) : NULL;
		_cleanup_strv_ struct strv patches = STRV_INIT, chain = STRV_INIT;
		_cleanup_diags_ struct diags d = { 0 };
		struct result_series *x;
		bool seen = false;

		for (size_t j = 0; j < rs->nseries && !seen; j++)
			seen = streq(rs->series[j].kernel, name ? name : "");
		if (!k || !k->nsweep || seen)
			continue;
		if (k->from.name && strv_contains(&rs->variants, k->from.name))
			strv_push(&chain, k->from.name);
		for (size_t j = 0; j < k->nsweep; j++) {
			char *step = xasprintf("%s@%u", name, k->sweep[j]);

			if (strv_contains(&rs->variants, step))
				strv_push_take(&chain, step);
			else
				free(step);
		}
		if (chain.n < 2) /* one variant orders nothing */
			continue;
		x = result_add_series(rs, name);
		for (size_t j = 0; j < chain.n; j++)
			result_series_add_step(x, chain.v[j], result_series_step_of(name, chain.v[j]));
		if (kvariant_own_patches(k, &patches, &d) < 0)
			continue;
		for (size_t j = 0; j < patches.n && j < x->steps[chain.n - 1]; j++) {
			_cleanup_(patch_freep) struct patch *p = NULL;

			if (patch_load(patches.v[j], &p, &d) == 0 && p->subject)
				result_series_add_patch(x, (unsigned)j + 1, patch_subject_line(p->subject));
		}
	}
}
