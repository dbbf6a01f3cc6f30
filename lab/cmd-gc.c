/* SPDX-License-Identifier: MIT */
/*
 * lab gc [--dry-run]: remove what a killed lab left behind: VMs whose
 * holder process is gone (their QEMU, overlay and folder), and image
 * builds that never finished.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "run/index.h"
#include "kernel/source.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/path.h"
#include "vm/vm.h"
#include "util/paths.h"
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

static void json_strings(struct json *j, const char *key, const struct strv *v)
{
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < v->n; i++)
		json_string(j, v->v[i]);
	json_array_end(j);
}

static void gc_json(bool dry, const struct strv *vms, size_t reindexed, const struct strv *skipped,
		    const struct strv *builds, struct strbuf *out)
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
	json_object_end(&j);
	json_finish(&j);
}

struct gc_opts {
	bool dry_run, reindex;
};

const struct lab_option gc_options[] = {
	OPT(struct gc_opts, dry_run, OPT_FLAG, 'n', "dry-run", NULL, "say what would be removed, remove nothing"),
	OPT(struct gc_opts, reindex, OPT_FLAG, 0, "reindex", NULL, "rebuild the result index from the run folders"),
	{ 0 },
};

int cmd_gc(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *state = paths_state(), *cache = NULL;
	_cleanup_strv_ struct strv vms = STRV_INIT, builds = STRV_INIT, skipped = STRV_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_spec_ struct spec *s = NULL;
	struct gc_opts o = { 0 };
	bool dry, reindex;
	size_t reindexed = 0;
	int c, ret = EXIT_OK;

	if ((c = cmd_options_parse(ctx, "gc", NULL, OPTS_ANYWHERE, argc, argv, &o)) < 0)
		return c == -2 ? EXIT_OK : EXIT_USAGE;
	dry = o.dry_run;
	reindex = o.reindex;
	/* the cache is lab.yaml's when there is one here, else the default */
	if (path_is_file(ctx->file))
		cmd_load_spec(ctx, ctx->file, &s);
	cache = lab_cache_dir(s);
	if (vm_gc(state, dry, &vms, &d) < 0) {
		cmd_report_diags(ctx, &d);
		ret = EXIT_FAILED;
	}
	stale_image_builds(cache, &builds);
	if (reindex && !dry) {
		_cleanup_free_ char *root = cmd_results_dir(s);

		/* runs that do not load are skipped, said, and make the exit 1 */
		if (index_rebuild(root, &reindexed, &skipped, &d) < 0 || skipped.n) {
			cmd_report_diags(ctx, &d);
			ret = EXIT_FAILED;
		}
	}
	for (size_t i = 0; i < builds.n && !dry; i++)
		if (fs_remove_tree(builds.v[i]) < 0)
			ret = EXIT_FAILED;
	if (ctx->json) {
		gc_json(dry, &vms, reindexed, &skipped, &builds, &out);
	} else {
		for (size_t i = 0; i < vms.n; i++)
			strbuf_addf(&out, "%s VM %s (its holder or its lab run is gone)\n", dry ? "would remove" : "removed", vms.v[i]);
		for (size_t i = 0; i < builds.n; i++)
			strbuf_addf(&out, "%s unfinished image build %s\n", dry ? "would remove" : "removed", builds.v[i]);
		if (reindex && !dry)
			strbuf_addf(&out, "reindexed %zu stored runs\n", reindexed);
		for (size_t i = 0; i < skipped.n; i++)
			strbuf_addf(&out, "not indexed: %s (it does not load, see above)\n", skipped.v[i]);
	}
	cmd_write(&out);
	return ret;
}
