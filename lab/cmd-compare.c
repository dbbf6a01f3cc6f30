/* SPDX-License-Identifier: MIT */
/*
 * lab compare INPUT... [--format text|json] [--allow-mixed]: stored runs
 * side by side, each INPUT a stored run id, a run folder or a bundle file
 * as lab bundle writes it (e.g. the same kernels on two hosts). Columns are
 * INPUT:VARIANT; the decision engine compares only runs measured alike
 * (result/compare-inputs.h). A bundle is unpacked and checked (store/bundle.h)
 * into a private temporary folder, read, and removed: the result store is
 * never touched. A signal that stops lab removes that folder too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd.h"
#include "result/compare-inputs.h"
#include "store/bundle.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/path.h"
#include "util/tempdir.h"
#include "util/banned.h"

struct copts {
	const char *format;
	bool allow_mixed;
};

const struct lab_option compare_options[] = {
	OPT(struct copts, format, OPT_CHOICE, 0, "format", "FORMAT", "text or json (default text, json with --json)",
	    .choices = "text|json"),
	OPT(struct copts, allow_mixed, OPT_FLAG, 0, "allow-mixed", NULL,
	    "decide between runs whose environments differ in what matters, and say so"),
	{ 0 },
};

/* The most inputs one comparison takes. */
#define COMPARE_MAX_INPUTS 16

/* A bundle file unpacked under tmp, loaded. */
static int load_bundle(const char *path, const char *tmp, struct result_set **ret, struct diags *d)
{
	_cleanup_free_ char *dir = NULL, *id = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;

	if (fd < 0) {
		struct pos pos = { .file = path };

		diags_add(d, &pos, "cannot open: %s", strerror(errno));
		return -errno;
	}
	r = bundle_unpack(fd, path, tmp, NULL, &dir, &id, d);
	close(fd);
	if (r < 0)
		return r;
	r = store_load_as(dir, id, path, ret, d);
	tempdir_remove(dir);
	return r;
}

/* Each argument as a result set: a regular file is a bundle, anything else a stored run; an exit code. */
static int load_input(struct lab_ctx *ctx, const char *root, const char *arg, const char *tmp,
		      struct result_set **ret)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *dir = NULL;
	struct stat st;

	int r;

	if (stat(arg, &st) == 0 && S_ISREG(st.st_mode)) {
		if ((r = load_bundle(arg, tmp, ret, &d)) < 0) {
			cmd_report_diags(ctx, &d);
			return cmd_exit_of(r);
		}
		return EXIT_OK;
	}
	if (!(dir = store_find(root, arg))) {
		cmd_error(ctx, "compare: '%s' is neither a stored run under %s nor a bundle file", arg, root);
		return EXIT_USAGE;
	}
	if ((r = store_load(dir, ret, &d)) < 0) {
		cmd_report_diags(ctx, &d);
		return cmd_exit_of(r);
	}
	return EXIT_OK;
}

int cmd_compare(struct lab_ctx *ctx, int argc, char **argv)
{
	struct copts o = { 0 };
	struct result_set *sets[COMPARE_MAX_INPUTS] = { 0 };
	char *labels[COMPARE_MAX_INPUTS] = { 0 };
	struct xcmp_input in[COMPARE_MAX_INPUTS];
	_cleanup_free_ char *root = NULL, *tmp = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct xcmp *x = NULL;
	const char *format, *tmpdir = getenv("TMPDIR");
	int first = cmd_options_parse(ctx, "compare", NULL, OPTS_ANYWHERE, argc, argv, &o), rc = EXIT_USAGE, r;
	size_t n;

	if (first < 0)
		return cmd_options_exit(first);
	n = (size_t)(argc - first);
	format = o.format ? o.format : ctx->json ? "json" : "text";
	if (n < 1 || n > COMPARE_MAX_INPUTS) {
		cmd_error(ctx, "compare: name 1 to %d stored runs or bundles, the baseline's first (lab ls lists runs)",
			  COMPARE_MAX_INPUTS);
		return EXIT_USAGE;
	}
	if (!(root = cmd_results_root(ctx)))
		return EXIT_USAGE;
	tmpdir = tmpdir && *tmpdir == '/' ? tmpdir : "/tmp";
	/* removed at the end, or by the handler of SIGINT, SIGTERM or SIGHUP */
	if ((r = tempdir_make(tmpdir, COMPARE_TMP_PREFIX, &tmp)) < 0) {
		cmd_error(ctx, "compare: cannot create a temporary folder in %s: %s", tmpdir, strerror(-r));
		return EXIT_FAILED;
	}
	for (size_t i = 0; i < n; i++)
		if ((r = load_input(ctx, root, argv[first + (int)i], tmp, &sets[i])) != EXIT_OK) {
			rc = r;
			goto cleanup;
		}
	xcmp_labels((const struct result_set *const *)sets, n, labels);
	for (size_t i = 0; i < n; i++)
		in[i] = (struct xcmp_input){ .label = labels[i], .rs = sets[i] };
	x = xcmp_build(in, n, o.allow_mixed);
	if (streq(format, "json"))
		xcmp_format_json(x, &out);
	else
		xcmp_format_text(x, &out);
	cmd_write(&out);
	rc = EXIT_OK;
cleanup:
	xcmp_free(x);
	for (size_t i = 0; i < n; i++) {
		result_set_free(sets[i]);
		free(labels[i]);
	}
	tempdir_remove(tmp);
	return rc;
}
