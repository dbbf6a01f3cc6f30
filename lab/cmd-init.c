/* SPDX-License-Identifier: MIT */
/*
 * lab init [--force] [DIR]: the shipped, commented lab.yaml and the folders
 * it references (images/, kernels/, workloads/), copied from lab's data
 * directory. Existing files are kept unless --force.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include "cmd.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/path.h"
#include "util/banned.h"

int cmd_init(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "force", no_argument, NULL, 'F' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static const char *const trees[] = { "images", "kernels", "workloads" };
	_cleanup_free_ char *data = lab_datadir(), *src = NULL, *dst = NULL;
	const char *dir = ".";
	bool force = false;
	size_t copied = 0;
	int c, r;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'F':
			force = true;
			break;
		case 'j':
			ctx->json = true;
			break;
		case 'h':
			command_usage(command_find("init"), stdout);
			return EXIT_OK;
		default:
			cmd_error(ctx, "init: unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (argc - optind > 1) {
		cmd_error(ctx, "init: takes at most one folder");
		return EXIT_USAGE;
	}
	if (optind < argc)
		dir = argv[optind];
	if (dir[0] == '-') {
		cmd_error(ctx, "init: refusing folder name '%s' that starts with '-'", dir);
		return EXIT_USAGE;
	}
	src = path_join(data, "lab.yaml");
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
	copied++;
	for (size_t i = 0; i < ELEMENTSOF(trees); i++) {
		_cleanup_free_ char *a = path_join(data, trees[i]), *b = path_join(dir, trees[i]);

		if (!path_is_dir(a))
			continue;
		r = fs_copy_tree(a, b, force, &copied);
		if (r < 0) {
			cmd_error(ctx, "init: cannot copy '%s' to '%s': %s", a, b, strerror(-r));
			return EXIT_FAILED;
		}
	}
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
