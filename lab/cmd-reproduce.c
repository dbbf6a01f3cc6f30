/* SPDX-License-Identifier: MIT */
/*
 * lab reproduce BUNDLE_OR_RUN [--repeat N] [--keep-checkout]: a stored run
 * made again from its snapshot alone (store/snapshot.h), in any folder,
 * with no checkout of the project it came from:
 *
 *   1. the run: a bundle file is fetched into the results folder (every
 *      checksum checked, as lab fetch; a run stored under its id already
 *      must be the bundle's, file for file, else refused), an unpacked
 *      bundle's folder is checked against its MANIFEST, a stored run is
 *      found by its id;
 *   2. its snapshot is checked (every object's size and sha256) and
 *      checked out into a private folder under $TMPDIR; a run stored
 *      before snapshots gets the list of what it lacks;
 *   3. lab.yaml from there is validated with the run's --set and
 *      --kernels, naming only the snapshot's files (never the host's),
 *      and the experiment planned;
 *   4. the workflow (engine/reproduce-run.h): each kernel's source and
 *      merged .config held to the recorded ones (a difference refuses,
 *      naming the options, before anything is booted); the experiment
 *      run (its kernels and image from the cache when their content keys
 *      match, else built), stored as a new run whose `reproduces` file
 *      names the original;
 *   5. the verdict of the reproduction (result/reproduction.h) and the
 *      image's package versions that differ from the original's.
 *
 * Exit 0 when it reproduced or could not decide, 1 when something was not
 * reproduced (or the runs failed), 2 on bad input.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "plan/plan.h"
#include "result/compare.h"
#include "result/reproduction.h"
#include "store/bundle.h"
#include "engine/engine.h"
#include "engine/reproduce-run.h"
#include "store/snapshot.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/escape.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/tempdir.h"
#include "util/banned.h"

struct repro_opts {
	unsigned repeat;
	bool keep;
};

const struct lab_option reproduce_options[] = {
	OPT(struct repro_opts, repeat, OPT_UINT, 0, "repeat", "N",
	    "runs a kernel instead of the original's (a fixed design of N)", .min = 1, .max = 1000,
	    .what = "a number of runs (1-1000)"),
	OPT(struct repro_opts, keep, OPT_FLAG, 0, "keep-checkout", NULL,
	    "keep the snapshot's checkout (its folder is said) instead of removing it"),
	{ 0 },
};

/*
 * A bundle file into the store: *ret the stored run's folder; EXIT_OK or
 * the exit code after the error was said. A run already stored under the
 * bundle's id is reproduced only when it is the bundle's run (the same
 * files, bundle_same_run): another run under that id, or one changed since,
 * is refused, for the reproduction would be of it, not of the bundle.
 */
static int fetched(const struct lab_ctx *ctx, const char *file, const char *root, char **ret)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_close_ int fd = open(file, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *id = NULL, *tmp = NULL, *stored = NULL;
	int r;

	if (fd < 0) {
		cmd_error(ctx, "reproduce: cannot open %s: %s", file, strerror(errno));
		return EXIT_FAILED;
	}
	if ((r = path_mkdir_p(root, 0755)) < 0) {
		cmd_error(ctx, "cannot create %s: %s", root, strerror(-r));
		return EXIT_FAILED;
	}
	if ((r = bundle_import(fd, file, root, false, NULL, &id, &d)) == 0) {
		*ret = path_join(root, id);
		return EXIT_OK;
	}
	if (r != -EEXIST || lseek(fd, 0, SEEK_SET) < 0) {
		cmd_report_diags(ctx, &d);
		return cmd_exit_of(r);
	}
	/* already here: the bundle is checked, then held to the stored copy */
	diags_release(&d);
	free(id);
	id = NULL;
	if ((r = bundle_unpack(fd, file, root, NULL, &tmp, &id, &d)) < 0) {
		cmd_report_diags(ctx, &d);
		return cmd_exit_of(r);
	}
	stored = path_join(root, id);
	r = bundle_same_run(tmp, stored, &d);
	tempdir_remove(tmp);
	if (r < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_FAILED;
	}
	if (r == 0) {
		cmd_error(ctx, "reproduce: refused: run %s is already stored in %s, and the stored copy differs from the "
			       "bundle %s (%s: %s); nothing was reproduced (lab fetch --replace %s puts the bundle's run "
			       "in its place)",
			  id, root, file, d.v[0].file, d.v[0].msg, file);
		return EXIT_USAGE;
	}
	if (ctx->verbosity >= 0)
		fprintf(stderr, "lab: reproduce: run %s is already stored in %s, the same as the bundle's: reproducing "
				"the stored copy\n",
			id, root);
	*ret = TAKE_PTR(stored);
	return EXIT_OK;
}

/* The original run's folder into *ret: a bundle file, a run folder (an
 * unpacked bundle's checked against its MANIFEST) or a stored run's id;
 * EXIT_OK or the exit code after the error was said. */
static int original(const struct lab_ctx *ctx, const char *arg, const char *root, char **ret)
{
	if (path_is_file(arg))
		return fetched(ctx, arg, root, ret);
	if (!(*ret = store_find(root, arg))) {
		cmd_error(ctx, "reproduce: '%s' is neither a bundle file, a run folder nor a stored run under %s", arg,
			  root);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* An unpacked bundle's folder against its MANIFEST (after its snapshot's
 * own check, which names a changed file by its project path). */
static int manifest_checked(const struct lab_ctx *ctx, const char *dir)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *manifest = path_join(dir, "MANIFEST");

	if (access(manifest, F_OK) == 0 && bundle_verify(dir, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* Loaded and planned like lab validate: the errors name the checkout's files by their project names;
 * lab.yaml and its recipes name only the snapshot's files, never the host's. */
static int load_checked(struct lab_ctx *ctx, const char *spec, const struct snapshot *snap, struct spec **ret)
{
	_cleanup_(spec_confine_release) struct spec_confine cf = { 0 };
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_diags_ struct diags d = { 0 };

	cmd_snapshot_confine(snap, &cf);
	if (cmd_load_spec_confined(ctx, spec, &cf, ret) < 0)
		return EXIT_USAGE;
	if (plan_build(*ret, NULL, &p, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

static void step(void *userdata, const char *variant, const char *what)
{
	const struct lab_ctx *ctx = userdata;

	if (ctx->verbosity > 0)
		fprintf(stderr, "lab: reproduce: kernel %s: %s\n", variant, what);
}

/* The packages that moved, said, then the verdict; the exit code. */
static int render(const struct lab_ctx *ctx, const struct reproduce_outcome *out)
{
	_cleanup_strbuf_ struct strbuf rep = STRBUF_INIT;

	if (out->packages.n && ctx->verbosity >= 0) {
		/* the lines come from two runs' package lists: escaped for the terminal */
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		strbuf_addstr(&sb, "lab: reproduce: image ");
		term_escape(&sb, out->image);
		strbuf_addf(&sb, ": %zu packages differ from the original's (recorded first):", out->packages.n);
		for (size_t i = 0; i < out->packages.n; i++) {
			strbuf_addstr(&sb, "\n  ");
			term_escape(&sb, out->packages.v[i]);
		}
		strbuf_addch(&sb, '\n');
		fputs(sb.buf, stderr);
	}
	if (ctx->json)
		reproduction_format_json(out->rp, &rep);
	else
		reproduction_format_text(out->rp, &rep);
	cmd_write(&rep);
	return out->failed ? EXIT_FAILED : EXIT_OK;
}

/* The results folder, made absolute (the run is stored from inside the checkout), into *ret;
 * EXIT_OK or the exit code after the error was said. */
static int results_root(const struct lab_ctx *ctx, char **ret)
{
	_cleanup_free_ char *rel = NULL;

	if (!(rel = cmd_results_root(ctx)))
		return EXIT_USAGE;
	if (rel[0] == '/') {
		*ret = TAKE_PTR(rel);
	} else {
		_cleanup_free_ char *cwd = getcwd(NULL, 0);

		if (!cwd) {
			cmd_error(ctx, "reproduce: the current folder: %s", strerror(errno));
			return EXIT_FAILED;
		}
		*ret = path_join(cwd, rel);
	}
	return EXIT_OK;
}

/* The snapshot checked out under $TMPDIR: *tmp its folder, *spec its lab.yaml; EXIT_OK or the exit
 * code after the error was said. */
static int checked_out(struct lab_ctx *ctx, const char *root, const char *dir, const struct snapshot *snap,
		       char **tmp, char **spec)
{
	const char *tmpdir;
	int r;

	if ((r = path_mkdir_p(root, 0755)) < 0) {
		cmd_error(ctx, "cannot create %s: %s", root, strerror(-r));
		return EXIT_FAILED;
	}
	tmpdir = getenv("TMPDIR");
	/* a private folder outside the results: a killed lab leaves nothing there */
	return cmd_snapshot_project(ctx, dir, snap, tmpdir && *tmpdir ? tmpdir : "/tmp", "reproduce", tmp, spec);
}

/* The snapshot's experiment held to the record, then run again as a new run that names the original,
 * and the verdict said (engine/reproduce-run.h); the exit code. */
static int run_again(struct lab_ctx *ctx, const struct repro_opts *o, struct spec *s, const char *root,
		     const char *dir, const struct snapshot *snap)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_(reproduce_outcome_release) struct reproduce_outcome out = { 0 };
	struct kbuild_progress progress = { .step = step, .userdata = ctx };
	struct cmd_workflow cw = { .ctx = ctx, .noun = "reproduce" };
	struct workflow w;
	int r;

	cmd_workflow_init(&cw, &w);
	r = reproduce_run(&w, s, root, dir, snap, &(struct reproduce_params){ .repeat = o->repeat, .progress = &progress },
			  &out, &d);
	cmd_report_errors(ctx, &d);
	if (r == -EPERM) {
		for (size_t i = 0; i < out.refused.n; i++)
			cmd_error(ctx, "%s", out.refused.v[i]);
		cmd_error(ctx, "reproduce: refused, nothing was booted: these kernels would not be the ones run %s "
			       "measured",
			  snap->experiment);
	}
	if (r < 0)
		return r == -EINVAL ? EXIT_USAGE : EXIT_FAILED;
	return render(ctx, &out);
}

int cmd_reproduce(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_(snapshot_release) struct snapshot snap = { 0 };
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *root = NULL, *dir = NULL, *tmp = NULL, *spec = NULL;
	_cleanup_close_ int here = -1;
	struct repro_opts o = { 0 };
	int first = cmd_options_parse(ctx, "reproduce", NULL, OPTS_ANYWHERE, argc, argv, &o), rc;

	if (first < 0)
		return cmd_options_exit(first);
	if (argc - first != 1) {
		cmd_error(ctx, "reproduce: name one bundle file, run folder or stored run");
		return EXIT_USAGE;
	}
	if (ctx->set.n || ctx->kernels.n) {
		/* other values make another plan: not a reproduction */
		cmd_error(ctx, "reproduce: the run is made again with the --set and --kernels values it was made with; "
			       "give none");
		return EXIT_USAGE;
	}
	if ((rc = results_root(ctx, &root)) != EXIT_OK)
		return rc;
	if ((rc = original(ctx, argv[first], root, &dir)) != EXIT_OK)
		return rc;
	if ((rc = cmd_snapshot_open(ctx, dir, &snap)) != EXIT_OK || (rc = manifest_checked(ctx, dir)) != EXIT_OK)
		return rc;
	if ((rc = checked_out(ctx, root, dir, &snap, &tmp, &spec)) != EXIT_OK)
		return rc;
	/* from inside the checkout, errors name the project's files as they were */
	{
		_cleanup_free_ char *project = path_join(tmp, "project");

		if ((here = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 || chdir(project) < 0) {
			cmd_error(ctx, "cannot enter the checkout %s: %s", project, strerror(errno));
			rc = EXIT_FAILED;
			goto out;
		}
		rc = load_checked(ctx, spec + strlen(project) + 1, &snap, &s);
	}
	if (rc == EXIT_OK)
		rc = run_again(ctx, &o, s, root, dir, &snap);
out:
	if (here >= 0 && fchdir(here) < 0)
		rc = EXIT_FAILED;
	if (o.keep && ctx->verbosity >= 0)
		fprintf(stderr, "lab: reproduce: the snapshot's checkout stays in %s\n", tmp);
	else
		fs_remove_tree(tmp);
	return rc;
}
