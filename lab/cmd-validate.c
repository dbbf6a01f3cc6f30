/* SPDX-License-Identifier: MIT */
/*
 * lab validate [FILE]: load and check (the plan included); silent and 0
 * when valid. The lab.yaml of a stored run, or of an unpacked bundle of
 * one, is checked against the run's snapshot (store/snapshot.h): its files
 * are checked out into a private folder, FILE takes the snapshot's
 * lab.yaml's place there, and the --set and --kernels values the run was
 * made with apply unless others are given; lab.yaml and its recipes may
 * name only the snapshot's files (spec.h: struct spec_confine), and an
 * unpacked bundle without a snapshot none: a bundle never reads the host's
 * files. A run folder without a snapshot that fails says what it lacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "plan/plan.h"
#include "store/snapshot.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/path.h"
#include "util/banned.h"

/* Load and plan `path` (a snapshot's: naming only what cf lists); the spec into *ret. */
static int check(struct lab_ctx *ctx, const char *path, const struct spec_confine *cf, struct spec **ret)
{
	/* what only the expanded runs show (two jobs that would share a group) */
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_diags_ struct diags d = { 0 };

	if (cmd_load_spec_confined(ctx, path, cf, ret) < 0)
		return EXIT_USAGE;
	if (plan_build(*ret, NULL, &p, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* A stored run's folder (or an unpacked bundle's): what lab writes into one. */
static bool is_run_folder(const char *dir)
{
	static const char *const marks[] = { "run.json", "journal", "MANIFEST", SNAPSHOT_LISTING };

	for (size_t i = 0; i < ELEMENTSOF(marks); i++) {
		_cleanup_free_ char *p = path_join(dir, marks[i]);

		if (access(p, F_OK) == 0)
			return true;
	}
	return false;
}

/* An unpacked bundle (or a fetched run): a MANIFEST beside a run's record. */
static bool is_bundle_folder(const char *dir)
{
	_cleanup_free_ char *m = path_join(dir, "MANIFEST"), *rj = path_join(dir, "run.json");
	_cleanup_free_ char *j = path_join(dir, "journal");

	return access(m, F_OK) == 0 && (access(rj, F_OK) == 0 || access(j, F_OK) == 0);
}

/*
 * `path` checked inside a checkout of the run's snapshot (in a private
 * temporary folder, removed after), from there: errors name the files as
 * the project has them (lab.yaml:14:7, kernels/configs/guest.config).
 */
static int check_in_snapshot(struct lab_ctx *ctx, const char *path, const char *dir, struct spec **ret)
{
	_cleanup_(snapshot_release) struct snapshot snap = { 0 };
	_cleanup_(spec_confine_release) struct spec_confine cf = { 0 };
	_cleanup_free_ char *tmp = NULL, *yaml = NULL, *project = NULL;
	_cleanup_close_ int here = -1;
	const char *tmpdir = getenv("TMPDIR");
	int r;

	if ((r = cmd_snapshot_open(ctx, dir, &snap)) != EXIT_OK)
		return r == EXIT_FAILED ? EXIT_USAGE : r;
	if ((r = cmd_snapshot_project(ctx, dir, &snap, tmpdir && *tmpdir ? tmpdir : "/tmp", "validate", &tmp,
				      &yaml)) != EXIT_OK)
		return r;
	project = path_join(tmp, "project");
	if (fs_copy_file(path, yaml, true) < 0 || (here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    chdir(project) < 0) {
		cmd_error(ctx, "cannot check %s in the snapshot's checkout %s: %s", path, tmp, strerror(errno));
		fs_remove_tree(tmp);
		return EXIT_FAILED;
	}
	/* the bundle's lab.yaml reads the snapshot's files, never the host's */
	cmd_snapshot_confine(&snap, &cf);
	r = check(ctx, yaml + strlen(project) + 1, &cf, ret);
	if (fchdir(here) < 0)
		r = EXIT_FAILED;
	fs_remove_tree(tmp);
	return r;
}

int cmd_validate(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *dir = NULL, *listing = NULL;
	const char *path;
	bool snapshot;
	int r, i = cmd_parse_options(ctx, command_find("validate"), argc, argv);

	if (i < 0)
		return cmd_options_exit(i);
	path = i < argc ? argv[i] : ctx->file;
	if (i < argc)
		ctx->file_given = true;
	dir = path_dirname(path);
	listing = path_join(dir, SNAPSHOT_LISTING);
	snapshot = path_is_file(path) && access(listing, F_OK) == 0;
	if (snapshot) {
		r = check_in_snapshot(ctx, path, dir, &s);
	} else if (path_is_file(path) && is_bundle_folder(dir)) {
		/* a bundle from before snapshots holds lab.yaml alone: it names nothing of the host's either */
		_cleanup_(spec_confine_release) struct spec_confine cf = { 0 };
		_cleanup_free_ char *name = path_basename(path);
		const char *files[] = { name };

		spec_confine_init(&cf, dir, files, 1);
		r = check(ctx, path, &cf, &s);
	} else {
		r = check(ctx, path, NULL, &s);
	}
	if (r != EXIT_OK) {
		if (!snapshot && path_is_file(path) && is_run_folder(dir))
			cmd_snapshot_missing(ctx, dir);
		return r;
	}
	if (ctx->json) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct json j;

		json_init(&j, &sb, true);
		json_object_begin(&j);
		json_kv_string(&j, "file", path);
		json_key(&j, "valid");
		json_bool(&j, true);
		if (snapshot) {
			json_key(&j, "snapshot");
			json_bool(&j, true);
		}
		json_kv_uint(&j, "experiments", s->nexperiments);
		json_kv_uint(&j, "kernels", s->nkernels);
		json_kv_uint(&j, "topologies", s->ntopologies);
		json_kv_string(&j, "engine", s->engine.type == SPEC_ENGINE_SLURM ? "slurm" : "local");
		json_object_end(&j);
		json_finish(&j);
		cmd_write(&sb);
	}
	return EXIT_OK;
}
