/* SPDX-License-Identifier: MIT */
/*
 * A bisect's or a track's own folder as a stored run (bisect.h: runs_gather): every
 * step's runs gathered into one result set, renumbered, with their files,
 * so that lab report, lab bundle and lab site take a bisect as any run.
 */
#include <stdio.h>
#include "../store/index.h"
#include "../store/store.h"
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/strmap.h"
#include "bisect.h"
#include "../util/banned.h"

/* Stored runs gathered into the folder dir (<root>/<id>) as one stored
 * run: every run renumbered, with its files copied; again at the end of
 * every lab bisect or lab track, interrupted or not. */
int runs_gather(const char *experiment, const char *first, const char *const *runs, size_t nruns, const char *root,
		const char *dir, const char *id, struct diags *d)
{
	_cleanup_result_set_ struct result_set *all = NULL;
	unsigned seq = 0, boots = 0;

	all = result_set_new(id, experiment);
	strv_push(&all->variants, first);
	for (size_t i = 0; i < nruns; i++) {
		_cleanup_free_ char *sdir = runs[i] ? store_find(root, runs[i]) : NULL;
		_cleanup_result_set_ struct result_set *rs = NULL;
		_cleanup_strmap_ struct strmap boot_ids = STRMAP_INIT;

		if (!sdir || store_load(sdir, &rs, d) < 0)
			continue;
		for (size_t v = 1; v < rs->variants.n; v++)
			if (!strv_contains(&all->variants, rs->variants.v[v]))
				strv_push(&all->variants, rs->variants.v[v]);
		/* the record of what ran; the decisions are bisect.json's (each step
		 * had its own expectation: a verdict against one of them over every
		 * prefix would be wrong for the others) */
		all->decide = rs->decide;
		all->icount = rs->icount;
		for (size_t k = 0; k < rs->n; k++) {
			const struct result_run *r = &rs->runs[k];
			_cleanup_free_ char *nid = xasprintf("%s.%04u", experiment, ++seq);
			_cleanup_free_ char *from = NULL, *to = NULL;
			struct result_run *n = result_add_run(all, nid, r->variant, r->group, r->job, r->repeat);
			size_t bi = 0;

			n->status = r->status;
			n->release = r->release ? xstrdup(r->release) : NULL;
			n->error = r->error ? xstrdup(r->error) : NULL;
			n->guest = r->guest ? xstrdup(r->guest) : NULL;
			n->boot_pos = r->boot_pos;
			if (result_run_fingerprint(r))
				n->fp = result_add_fingerprint(all, result_run_fingerprint(r));
			if (r->boot) {
				if (!strmap_get(&boot_ids, r->boot, &bi)) {
					bi = ++boots;
					strmap_put(&boot_ids, r->boot, bi);
				}
				n->boot = xasprintf("%s.b%zu", experiment, bi);
			}
			for (size_t m = 0; m < r->nm; m++)
				result_add_metric(n, r->m[m].name, r->m[m].value);
			from = xasprintf("%s/runs/%s", sdir, r->id);
			to = xasprintf("%s/runs/%s", dir, nid);
			if (path_is_dir(from) && !path_is_dir(to))
				fs_copy_tree(from, to, false, NULL);
		}
	}
	if (store_save(dir, all, d) < 0 || index_put(root, all, NULL, d) < 0)
		return -1;
	return 0;
}

int bisect_gather(const struct bisect *b, const char *root, const char *dir, const char *id, struct diags *d)
{
	_cleanup_free_ char *g = bisect_kernel_name(b, b->good);
	_cleanup_free_ const char **runs = xcalloc(b->nsteps + 1, sizeof(*runs));

	for (size_t i = 0; i < b->nsteps; i++)
		runs[i] = b->steps[i].run;
	return runs_gather(b->experiment, g, runs, b->nsteps, root, dir, id, d);
}
