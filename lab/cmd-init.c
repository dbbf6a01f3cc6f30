/* SPDX-License-Identifier: MIT */
/*
 * lab init [--force] [DIR]: the shipped, commented lab.yaml and the folders
 * it references (images/, kernels/, workloads/), copied from lab's data
 * directory. Existing files are kept unless --force.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/path.h"
#include "util/dirs.h"
#include "util/banned.h"

struct init_opts {
	bool force;
};

const struct lab_option init_options[] = {
	OPT(struct init_opts, force, OPT_FLAG, 0, "force", NULL, "replace files that exist"),
	{ 0 },
};

/* lab.yaml and the trees it references from data into dir; an exit code. */
static int init_copy(struct lab_ctx *ctx, const char *data, const char *dir, bool force, char **ret_dst,
		     size_t *copied)
{
	static const char *const trees[] = { "images", "kernels", "workloads" };
	_cleanup_free_ char *src = path_join(data, "lab.yaml"), *dst = NULL;
	int r;

	if (!path_is_file(src)) {
		cmd_error(ctx, "init: lab's data is missing: no '%s' (set LAB_DATADIR)", src);
		return EXIT_FAILED;
	}
	r = path_mkdir_p(dir, 0755);
	if (r < 0) {
		cmd_error(ctx, "init: cannot create '%s': %s", dir, strerror(-r));
		return EXIT_FAILED;
	}
	dst = path_join(dir, "lab.yaml");
	r = fs_copy_file(src, dst, force);
	if (r == -EEXIST) {
		cmd_error(ctx, "init: '%s' exists already (use --force to replace it)", dst);
		return EXIT_USAGE;
	}
	if (r < 0) {
		cmd_error(ctx, "init: cannot write '%s': %s", dst, strerror(-r));
		return EXIT_FAILED;
	}
	(*copied)++;
	for (size_t i = 0; i < ELEMENTSOF(trees); i++) {
		_cleanup_free_ char *a = path_join(data, trees[i]), *b = path_join(dir, trees[i]);

		if (!path_is_dir(a))
			continue;
		r = fs_copy_tree(a, b, force, copied);
		if (r < 0) {
			cmd_error(ctx, "init: cannot copy '%s' to '%s': %s", a, b, strerror(-r));
			return EXIT_FAILED;
		}
	}
	*ret_dst = TAKE_PTR(dst);
	return EXIT_OK;
}

int cmd_init(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *data = dirs_datadir(), *dst = NULL;
	struct init_opts o = { 0 };
	const char *dir = ".";
	size_t copied = 0;
	int r, first = cmd_options_parse(ctx, "init", NULL, OPTS_ANYWHERE, argc, argv, &o);

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first > 1) {
		cmd_error(ctx, "init: takes at most one folder");
		return EXIT_USAGE;
	}
	if (first < argc)
		dir = argv[first];
	if (dir[0] == '-') {
		cmd_error(ctx, "init: refusing folder name '%s' that starts with '-'", dir);
		return EXIT_USAGE;
	}
	if ((r = init_copy(ctx, data, dir, o.force, &dst, &copied)) != EXIT_OK)
		return r;
	if (ctx->json) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct json j;

		json_init(&j, &sb, true);
		json_object_begin(&j);
		json_kv_string(&j, "file", dst);
		json_kv_uint(&j, "files", copied);
		json_object_end(&j);
		json_finish(&j);
		cmd_write(&sb);
	} else if (ctx->verbosity >= 0) {
		printf("wrote %s and %zu more files; next: lab -C %s validate && lab -C %s plan\n", dst, copied - 1,
		       dir, dir);
	}
	return EXIT_OK;
}
