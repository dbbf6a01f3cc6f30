/* SPDX-License-Identifier: MIT */
/*
 * lab snapshot show RUN_OR_DIR: a stored run's snapshot listing, every
 * object checked (store/snapshot.h); for a run stored before snapshots, the
 * list of what it lacks (exit 1).
 * lab snapshot checkout RUN_OR_DIR DIR: its files into the empty folder
 * DIR, a project tree `lab validate` checks.
 * lab snapshot write EXPERIMENT DIR [--kernel-config VARIANT=FILE]...
 * [--packages IMAGE=FILE]...: plumbing, what `lab run` keeps in a new run
 * folder, written into DIR from lab.yaml as it is (tests make stored runs
 * with it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "store/snapshot.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/escape.h"
#include "util/fs.h"
#include "util/json.h"
#include "util/path.h"
#include "util/dirs.h"
#include "util/banned.h"

struct snap_opts {
	struct strv configs, packages;
};

const struct lab_option snapshot_options[] = {
	OPT(struct snap_opts, configs, OPT_LIST, 0, "kernel-config", "VARIANT=FILE",
	    "a built variant's merged .config to keep", .subs = "write"),
	OPT(struct snap_opts, packages, OPT_LIST, 0, "packages", "IMAGE=FILE", "an image's package list to keep",
	    .subs = "write"),
	{ 0 },
};

const char *const snapshot_subs[] = { "show", "checkout", "write", NULL };

static void snap_opts_release(struct snap_opts *o)
{
	strv_release(&o->configs);
	strv_release(&o->packages);
}

/* A folder as it is, else a stored run's id; NULL after the error was said. */
static char *run_dir(const struct lab_ctx *ctx, const char *arg)
{
	_cleanup_free_ char *root = NULL;
	char *dir;

	if (path_is_dir(arg))
		return xstrdup(arg);
	if (!(root = cmd_results_root(ctx)))
		return NULL;
	if (!(dir = store_find(root, arg)))
		cmd_error(ctx, "'%s' is neither a run folder nor a stored run under %s (lab ls lists them)", arg, root);
	return dir;
}

int cmd_snapshot_missing(const struct lab_ctx *ctx, const char *dir)
{
	_cleanup_strv_ struct strv missing = STRV_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	if (snapshot_missing(dir, &missing, &d) < 0 && !missing.n) {
		cmd_report_diags(ctx, &d);
		return EXIT_FAILED;
	}
	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		json_object_begin(&j);
		json_kv_string(&j, "run", dir);
		json_key(&j, "snapshot");
		json_bool(&j, false);
		json_key(&j, "missing");
		json_array_begin(&j);
		for (size_t i = 0; i < missing.n; i++)
			json_string(&j, missing.v[i]);
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
		cmd_write(&out);
	} else {
		/* the names come from the run's lab.yaml: cmd_error escapes them */
		strbuf_addf(&out, "%s has no snapshot of what its lab.yaml names; missing:", dir);
		for (size_t i = 0; i < missing.n; i++)
			strbuf_addf(&out, "\n  %s", missing.v[i]);
		if (d.n) {
			strbuf_addstr(&out, "\n  (and what its lab.yaml names: it cannot be read)\n");
			diags_format(&d, &out);
			while (out.len && out.buf[out.len - 1] == '\n')
				strbuf_setlen(&out, out.len - 1);
		}
		cmd_error(ctx, "%s", out.buf);
	}
	/* the run lacks what its lab.yaml names: the input's fault */
	return EXIT_USAGE;
}

int cmd_snapshot_open(const struct lab_ctx *ctx, const char *dir, struct snapshot *ret)
{
	_cleanup_diags_ struct diags d = { 0 };
	int r = snapshot_load(dir, ret, &d);

	if (r == -ENOENT)
		return cmd_snapshot_missing(ctx, dir);
	if (r >= 0 && (r = snapshot_verify(dir, ret, &d)) < 0)
		snapshot_release(ret);
	if (r < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

int cmd_snapshot_project(struct lab_ctx *ctx, const char *dir, const struct snapshot *snap, const char *parent,
			 const char *what, char **ret_tmp, char **ret_spec)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *tmp = xasprintf("%s/lab-%s-XXXXXX", parent, what), *project = NULL;
	const char *spec = NULL;

	for (size_t i = 0; i < snap->nfiles && !spec; i++)
		if (snap->files[i].role == SNAP_SPEC)
			spec = snap->files[i].path;
	if (!spec) {
		cmd_error(ctx, "%s: its snapshot lists no lab.yaml", dir);
		return EXIT_USAGE;
	}
	if (!mkdtemp(tmp)) {
		cmd_error(ctx, "cannot create a folder under %s to check the snapshot out into: %s", parent,
			  strerror(errno));
		return EXIT_FAILED;
	}
	project = path_join(tmp, "project");
	if (snapshot_checkout(dir, snap, project, &d) < 0) {
		if (!d.n)
			cmd_error(ctx, "cannot check out the snapshot of %s into %s: %s", dir, tmp, strerror(errno));
		cmd_report_diags(ctx, &d);
		fs_remove_tree(tmp);
		return EXIT_FAILED;
	}
	/* the run's own --set and --kernels, unless others are given */
	if (!ctx->set.n)
		for (size_t i = 0; i < snap->set.n; i++)
			strv_push(&ctx->set, snap->set.v[i]);
	if (!ctx->kernels.n)
		for (size_t i = 0; i < snap->kernels.n; i++)
			strv_push(&ctx->kernels, snap->kernels.v[i]);
	*ret_spec = path_join(project, spec);
	*ret_tmp = TAKE_PTR(tmp);
	return EXIT_OK;
}

void cmd_snapshot_confine(const struct snapshot *snap, struct spec_confine *ret)
{
	_cleanup_free_ const char **files = xcalloc(snap->nfiles + 1, sizeof(*files));

	for (size_t i = 0; i < snap->nfiles; i++)
		files[i] = snap->files[i].path;
	spec_confine_init(ret, ".", files, snap->nfiles);
}

static int snap_show(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_(snap_opts_release) struct snap_opts o = { 0 };
	_cleanup_(snapshot_release) struct snapshot snap = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_free_ char *dir = NULL;
	int first = cmd_options_parse(ctx, "snapshot", "show", OPTS_ANYWHERE, argc, argv, &o), r;

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first != 1) {
		cmd_error(ctx, "snapshot show: name one stored run or run folder");
		return EXIT_USAGE;
	}
	if (!(dir = run_dir(ctx, argv[first])))
		return EXIT_USAGE;
	if ((r = cmd_snapshot_open(ctx, dir, &snap)) != EXIT_OK)
		return r;
	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		json_object_begin(&j);
		json_kv_string(&j, "run", dir);
		json_key(&j, "snapshot");
		json_bool(&j, true);
		json_kv_string(&j, "experiment", snap.experiment);
		json_key(&j, "files");
		json_array_begin(&j);
		for (size_t i = 0; i < snap.nfiles; i++) {
			json_object_begin(&j);
			json_kv_string(&j, "path", snap.files[i].path);
			json_kv_string(&j, "role", snapshot_role_name(snap.files[i].role));
			json_kv_string(&j, "sha256", snap.files[i].sha256);
			json_kv_uint(&j, "size", snap.files[i].size);
			json_object_end(&j);
		}
		json_array_end(&j);
		json_key(&j, "absent");
		json_array_begin(&j);
		for (size_t i = 0; i < snap.nabsent; i++)
			json_string(&j, snap.absent[i].path);
		json_array_end(&j);
		json_object_end(&j);
		json_finish(&j);
	} else {
		_cleanup_strbuf_ struct strbuf raw = STRBUF_INIT;

		/* paths and set lines came with the run, from elsewhere: a terminal gets them escaped */
		snapshot_format(&snap, &raw);
		term_escape_lines(&out, raw.buf ? raw.buf : "");
	}
	cmd_write(&out);
	return EXIT_OK;
}

static int snap_checkout(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_(snap_opts_release) struct snap_opts o = { 0 };
	_cleanup_(snapshot_release) struct snapshot snap = { 0 };
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *dir = NULL;
	int first = cmd_options_parse(ctx, "snapshot", "checkout", OPTS_ANYWHERE, argc, argv, &o), r;

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first != 2) {
		cmd_error(ctx, "snapshot checkout: name a stored run or run folder and an empty folder to write into");
		return EXIT_USAGE;
	}
	if (!(dir = run_dir(ctx, argv[first])))
		return EXIT_USAGE;
	if ((r = cmd_snapshot_open(ctx, dir, &snap)) != EXIT_OK)
		return r;
	if ((r = snapshot_checkout(dir, &snap, argv[first + 1], &d)) < 0) {
		cmd_report_diags(ctx, &d);
		return r == -ENOTEMPTY || r == -EINVAL ? EXIT_USAGE : EXIT_FAILED;
	}
	if (ctx->json)
		cmd_json_strings("checkout", argv[first + 1], NULL);
	else if (ctx->verbosity >= 0)
		printf("%s\n", argv[first + 1]);
	return EXIT_OK;
}

/* VARIANT=FILE values as built artifacts; false after the error was said. */
static bool built_list(const struct lab_ctx *ctx, const char *opt, const struct strv *in, struct snapshot_built *out,
		       char **names)
{
	for (size_t i = 0; i < in->n; i++) {
		const char *eq = strchr(in->v[i], '=');

		if (!eq || eq == in->v[i] || !eq[1]) {
			cmd_error(ctx, "snapshot write: --%s %s: expected NAME=FILE", opt, in->v[i]);
			return false;
		}
		names[i] = xstrndup(in->v[i], (size_t)(eq - in->v[i]));
		out[i] = (struct snapshot_built){ .name = names[i], .path = eq + 1 };
		/* a file lab cannot read is an error, not an "absent" line in the snapshot */
		if (!path_is_file(eq + 1) || access(eq + 1, R_OK) < 0) {
			cmd_error(ctx, "snapshot write: --%s %s: '%s' is not a file lab can read", opt, in->v[i], eq + 1);
			return false;
		}
	}
	return true;
}

static void free_names(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static int snap_write(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_(snap_opts_release) struct snap_opts o = { 0 };
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *layer = dirs_layer_dir();
	_cleanup_free_ struct snapshot_built *configs = NULL, *packages = NULL;
	char **cnames = NULL, **pnames = NULL;
	int first = cmd_options_parse(ctx, "snapshot", "write", OPTS_ANYWHERE, argc, argv, &o), rc = EXIT_OK;

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first != 2) {
		cmd_error(ctx, "snapshot write: name an experiment and the run folder to write into");
		return EXIT_USAGE;
	}
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (!spec_find_experiment(s, argv[first])) {
		cmd_error(ctx, "snapshot write: no experiment '%s' in %s", argv[first], s->path);
		return EXIT_USAGE;
	}
	if (!path_is_dir(argv[first + 1])) {
		cmd_error(ctx, "snapshot write: '%s' is not a folder", argv[first + 1]);
		return EXIT_USAGE;
	}
	configs = xcalloc(o.configs.n + 1, sizeof(*configs));
	packages = xcalloc(o.packages.n + 1, sizeof(*packages));
	cnames = xcalloc(o.configs.n + 1, sizeof(char *));
	pnames = xcalloc(o.packages.n + 1, sizeof(char *));
	if (!built_list(ctx, "kernel-config", &o.configs, configs, cnames) ||
	    !built_list(ctx, "packages", &o.packages, packages, pnames)) {
		rc = EXIT_USAGE;
	} else {
		struct snapshot_input in = { .s = s, .experiment = argv[first], .set = &ctx->set, .kernels = &ctx->kernels,
					     .layer = layer, .configs = configs, .nconfigs = o.configs.n,
					     .packages = packages, .npackages = o.packages.n };

		if (snapshot_write(&in, argv[first + 1], &d) < 0) {
			cmd_report_diags(ctx, &d);
			rc = EXIT_FAILED;
		}
	}
	free_names(cnames, o.configs.n);
	free_names(pnames, o.packages.n);
	return rc;
}

int cmd_snapshot(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct subcommand subs[] = {
		{ "show", snap_show },
		{ "checkout", snap_checkout },
		{ "write", snap_write },
	};

	return cmd_dispatch(ctx, "snapshot", subs, ELEMENTSOF(subs), argc, argv);
}
