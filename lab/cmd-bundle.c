/* SPDX-License-Identifier: MIT */
/*
 * lab bundle RUN_ID [-o FILE]: a stored run, its reports and a MANIFEST in
 * one .tar.zst (or .tar.gz by name; "-" writes to stdout). lab fetch, which
 * unpacks one, is cmd-fetch.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "result/compare.h"
#include "result/report.h"
#include "store/bundle.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/path.h"
#include "util/banned.h"

int cmd_bundle_pack(const struct lab_ctx *ctx, const char *dir, const char *out, int out_fd)
{
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *c = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf txt = STRBUF_INIT, md = STRBUF_INIT, js = STRBUF_INIT, html = STRBUF_INIT;
	struct report_opts all = { .all = true };

	if (store_load(dir, &rs, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	c = compare_build(rs);
	report_format_text(c, &all, &txt);
	report_format_md(c, &all, &md);
	report_format_json(c, NULL, &js);
	report_format_html(c, &all, &html);
	/* in bundle_reports' order: what bundle_same_run leaves out */
	struct bundle_extra extra[] = {
		{ bundle_reports[0], &html },
		{ bundle_reports[1], &txt },
		{ bundle_reports[2], &md },
		{ bundle_reports[3], &js },
	};
	if (bundle_write(dir, extra, ELEMENTSOF(extra), out, out_fd, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	return 0;
}

struct bundle_opts {
	const char *output;
};

const struct lab_option bundle_options[] = {
	OPT(struct bundle_opts, output, OPT_STRING, 'o', "output", "FILE",
	    "the archive (default RUN_ID.tar.zst; .tar.gz: gzip; -: standard output)"),
	{ 0 },
};

int cmd_bundle(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *dir = NULL, *out = NULL;
	struct bundle_opts o = { 0 };
	int first = cmd_options_parse(ctx, "bundle", NULL, OPTS_ANYWHERE, argc, argv, &o);

	if (first < 0)
		return cmd_options_exit(first);
	out = o.output ? xstrdup(o.output) : NULL;
	if (!(dir = cmd_stored_run(ctx, "bundle", argc - first, argv + first)))
		return EXIT_USAGE;
	if (!out) {
		_cleanup_free_ char *id = path_basename(dir);

		out = xasprintf("%s.tar.zst", id);
	}
	if (cmd_bundle_pack(ctx, dir, out, -1) < 0)
		return EXIT_FAILED;
	if (!streq(out, "-"))
		cmd_print_path(ctx, "bundle", out);
	return EXIT_OK;
}

/* ssh://[user@]host[:port]/RUN_ID -> ssh argv pieces. */
