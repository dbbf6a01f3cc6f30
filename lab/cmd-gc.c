/* SPDX-License-Identifier: MIT */
/*
 * lab gc [--dry-run] [--reindex] [--keep-days N] [--max-size SIZE]: remove
 * what a killed lab left behind: VMs whose holder process is gone (their
 * QEMU, overlay and folder), and image builds that never finished; with
 * --keep-days or --max-size, prune the build cache too (cache/cache.h):
 * kernels, images, unpacked sources, work trees, git mirrors and ccache not
 * used in N days, then the least recently used until the cache fits SIZE.
 * An entry a process has open, or a work tree a build holds, stays.
 * Also the unpack folders of a lab fetch, compare or reproduce that was
 * killed (SIGKILL; Ctrl-C removes them itself): .fetch-* in the results
 * folder and lab-compare-* in $TMPDIR whose flock is free and whose process
 * is gone (or that are over an hour old).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "cache/cache.h"
#include "store/bundle.h"
#include "store/index.h"
#include "kernel/source.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/units.h"
#include "util/path.h"
#include "vm/vm.h"
#include "util/dirs.h"
#include "util/tempdir.h"
#include "util/banned.h"

static void stale_image_builds(const char *cache, struct strv *ret)
{
	_cleanup_free_ char *images = path_join(cache, "images");
	DIR *dir = opendir(images);
	struct dirent *e;

	if (!dir)
		return;
	while ((e = readdir(dir))) {
		const char *dash = strrchr(e->d_name, '-');
		_cleanup_free_ char *proc = NULL;

		if (!str_startswith(e->d_name, "tmp-") || !dash)
			continue;
		/* tmp-<image>-<pid>: a build whose process still runs is not stale */
		proc = xasprintf("/proc/%s", dash + 1);
		if (!path_is_dir(proc))
			strv_push_take(ret, path_join(images, e->d_name));
	}
	closedir(dir);
}

/* The unpack folders killed labs left: in the results folder, and lab compare's in $TMPDIR. */
static void stale_unpacks(const char *root, struct strv *ret)
{
	const char *tmpdir = getenv("TMPDIR");
	time_t now = time(NULL);

	bundle_list_stale_unpacks(root, now, ret);
	tempdir_list_stale(tmpdir && *tmpdir == '/' ? tmpdir : "/tmp", COMPARE_TMP_PREFIX, now, ret);
}

static void json_strings(struct json *j, const char *key, const struct strv *v)
{
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < v->n; i++)
		json_string(j, v->v[i]);
	json_array_end(j);
}

static void cache_json(struct json *j, const struct cache_list *l, uint64_t freed, const struct strv *failed)
{
	json_key(j, "cache");
	json_object_begin(j);
	json_key(j, "bytes");
	json_uint(j, l->bytes);
	json_key(j, "freed_bytes");
	json_uint(j, freed);
	json_key(j, "entries");
	json_array_begin(j);
	for (size_t i = 0; i < l->n; i++) {
		const struct cache_entry *e = &l->v[i];

		json_object_begin(j);
		json_key(j, "name");
		json_string(j, e->name);
		json_key(j, "kind");
		json_string(j, cache_kind_name(e->kind));
		json_key(j, "bytes");
		json_uint(j, e->bytes);
		json_key(j, "last_used");
		json_uint(j, (uint64_t)e->used);
		json_key(j, "remove");
		json_bool(j, e->remove);
		json_key(j, "why");
		if (e->why)
			json_string(j, e->why);
		else
			json_null(j);
		json_key(j, "busy");
		if (e->busy)
			json_string(j, e->busy);
		else
			json_null(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_strings(j, "not_removed", failed);
	json_object_end(j);
}

static void gc_json(bool dry, const struct strv *vms, size_t reindexed, const struct strv *skipped,
		    const struct strv *builds, const struct strv *unpacks, const struct cache_list *cl, uint64_t freed,
		    const struct strv *failed, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_key(&j, "dry_run");
	json_bool(&j, dry);
	json_strings(&j, "vms", vms);
	json_key(&j, "reindexed");
	json_uint(&j, reindexed);
	json_strings(&j, "not_indexed", skipped);
	json_strings(&j, "image_builds", builds);
	json_strings(&j, "unpacks", unpacks);
	if (cl)
		cache_json(&j, cl, freed, failed);
	json_object_end(&j);
	json_finish(&j);
}

struct gc_opts {
	bool dry_run, reindex;
	unsigned keep_days;
	uint64_t max_size; /* UINT64_MAX: not given */
};

const struct lab_option gc_options[] = {
	OPT(struct gc_opts, dry_run, OPT_FLAG, 'n', "dry-run", NULL, "say what would be removed, remove nothing"),
	OPT(struct gc_opts, reindex, OPT_FLAG, 0, "reindex", NULL, "rebuild the result index from the run folders"),
	OPT(struct gc_opts, keep_days, OPT_UINT, 0, "keep-days", "N",
	    "prune the build cache: what lab has not used in N days goes", .min = 1, .max = 100000,
	    .what = "a number of days (1-100000)"),
	OPT(struct gc_opts, max_size, OPT_SIZE, 0, "max-size", "SIZE",
	    "prune the build cache: the least recently used goes until it holds SIZE or less (0: all that is free)"),
	{ 0 },
};

/* The build cache listed into *cl and pruned as --keep-days and --max-size say (removing nothing with
 * --dry-run) into *freed; a removal that fails is kept, named in *failed, and makes it -1. */
static int prune_cache(const char *cache, const struct gc_opts *o, struct cache_list *cl, uint64_t *freed,
		       struct strv *failed)
{
	int ret = 0;

	cache_list(cache, cl);
	*freed = cache_prune_plan(cl, time(NULL), (uint64_t)o->keep_days * 86400, o->max_size);
	for (size_t i = 0; i < cl->n && !o->dry_run; i++) {
		int r;

		if (cl->v[i].remove && (r = cache_remove(&cl->v[i])) < 0) {
			strv_pushf(failed, "%s: %s", cl->v[i].path, strerror(-r));
			cl->v[i].remove = false;
			*freed -= cl->v[i].bytes;
			ret = -1;
		}
	}
	return ret;
}

/* What gc removed (or would remove), as text; cl NULL when the cache was not pruned. */
static void gc_text(bool dry, bool reindex, const struct strv *vms, size_t reindexed, const struct strv *skipped,
		    const struct strv *builds, const struct strv *unpacks, const struct cache_list *cl, uint64_t freed,
		    const struct strv *failed, struct strbuf *out)
{
	for (size_t i = 0; i < vms->n; i++)
		strbuf_addf(out, "%s VM %s (its holder or its lab run is gone)\n", dry ? "would remove" : "removed",
			    vms->v[i]);
	for (size_t i = 0; i < builds->n; i++)
		strbuf_addf(out, "%s unfinished image build %s\n", dry ? "would remove" : "removed", builds->v[i]);
	for (size_t i = 0; i < unpacks->n; i++)
		strbuf_addf(out, "%s unfinished unpack %s (its lab was killed)\n", dry ? "would remove" : "removed",
			    unpacks->v[i]);
	if (reindex && !dry)
		strbuf_addf(out, "reindexed %zu stored runs\n", reindexed);
	for (size_t i = 0; i < skipped->n; i++)
		strbuf_addf(out, "not indexed: %s (it does not load, see above)\n", skipped->v[i]);
	if (cl)
		cache_format_plan(cl, freed, dry, failed, out);
}

int cmd_gc(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *state = dirs_state(), *cache = NULL;
	_cleanup_strv_ struct strv vms = STRV_INIT, builds = STRV_INIT, skipped = STRV_INIT, unpacks = STRV_INIT,
			      stale = STRV_INIT;
	_cleanup_free_ char *root = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_spec_ struct spec *s = NULL;
	struct gc_opts o = { .max_size = UINT64_MAX };
	_cleanup_(cache_list_release) struct cache_list cl = { 0 };
	_cleanup_strv_ struct strv failed = STRV_INIT;
	bool dry, reindex, prune;
	uint64_t freed = 0;
	size_t reindexed = 0;
	int c, ret = EXIT_OK;

	if ((c = cmd_options_parse(ctx, "gc", NULL, OPTS_ANYWHERE, argc, argv, &o)) < 0)
		return cmd_options_exit(c);
	dry = o.dry_run;
	reindex = o.reindex;
	prune = o.keep_days || o.max_size != UINT64_MAX;
	/* the cache is lab.yaml's when there is one here, else the default */
	if (path_is_file(ctx->file))
		cmd_load_spec(ctx, ctx->file, &s);
	cache = spec_cache_dir(s);
	if (vm_gc(state, dry, &vms, &d) < 0) {
		cmd_report_diags(ctx, &d);
		ret = EXIT_FAILED;
	}
	stale_image_builds(cache, &builds);
	root = cmd_results_dir(s);
	stale_unpacks(root, &stale);
	if (reindex && !dry) {
		/* runs that do not load are skipped, said, and make the exit 1 */
		if (index_rebuild(root, &reindexed, &skipped, &d) < 0 || skipped.n) {
			cmd_report_diags(ctx, &d);
			ret = EXIT_FAILED;
		}
	}
	for (size_t i = 0; i < builds.n && !dry; i++)
		if (fs_remove_tree(builds.v[i]) < 0)
			ret = EXIT_FAILED;
	for (size_t i = 0; i < stale.n; i++) {
		int r = dry ? 0 : tempdir_remove_stale(stale.v[i]);

		if (r == 0)
			strv_push(&unpacks, stale.v[i]);
		else if (r != -EBUSY) { /* -EBUSY: a lab took it up meanwhile */
			cmd_error(ctx, "gc: cannot remove %s: %s", stale.v[i], strerror(-r));
			ret = EXIT_FAILED;
		}
	}
	if (prune && prune_cache(cache, &o, &cl, &freed, &failed) < 0)
		ret = EXIT_FAILED;
	if (ctx->json)
		gc_json(dry, &vms, reindexed, &skipped, &builds, &unpacks, prune ? &cl : NULL, freed, &failed, &out);
	else
		gc_text(dry, reindex, &vms, reindexed, &skipped, &builds, &unpacks, prune ? &cl : NULL, freed, &failed,
			&out);
	cmd_write(&out);
	return ret;
}
