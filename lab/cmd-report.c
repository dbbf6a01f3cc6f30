/* SPDX-License-Identifier: MIT */
/*
 * lab report RUN_ID [--format text|md|html|json] [--all]: the comparison of
 * a stored run (RUN_ID under the results folder, or the path of a run
 * folder), refused when its runs' environments differ in what matters
 * unless --allow-mixed; of a track (lab track), the robot's report of its
 * change points instead. lab ls: the stored runs from the index (--reindex
 * in lab gc rebuilds it). lab compare is cmd-compare.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "engine/track-report.h"
#include "result/compare.h"
#include "result/report.h"
#include "result/reproduction.h"
#include "store/calib-store.h"
#include "store/index.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/path.h"
#include "util/escape.h"
#include "util/table.h"
#include "util/banned.h"

/* lab report's options. */
struct ropts {
	const char *format;
	bool all;
	bool allow_mixed;
};

const struct lab_option report_options[] = {
	OPT(struct ropts, format, OPT_CHOICE, 0, "format", "FORMAT", "text, md, html or json (default text, json with --json)",
	    .choices = "text|md|html|json"),
	OPT(struct ropts, all, OPT_FLAG, 0, "all", NULL, "every row, not only the significant changes"),
	OPT(struct ropts, allow_mixed, OPT_FLAG, 0, "allow-mixed", NULL,
	    "compare runs whose environments differ in what matters (listed under Mixed environments)"),
	{ 0 },
};

/* The index of the first operand, -1 (usage) or -2 (help shown). */
static int parse_report_options(struct lab_ctx *ctx, const char *noun, int argc, char **argv, const char **format,
				struct report_opts *ro, bool *allow_mixed)
{
	struct ropts o = { 0 };
	int first = cmd_options_parse(ctx, noun, NULL, OPTS_ANYWHERE, argc, argv, &o);

	/* the global --json is the default format; --format still chooses */
	*format = o.format ? o.format : ctx->json ? "json" : "text";
	ro->all = o.all;
	if (allow_mixed)
		*allow_mixed = o.allow_mixed;
	return first;
}

/* The experiment's calibration beside the stored run (its results folder's
 * calibration/), for the monitors over their overhead budget; a bad one is
 * said and the report goes on without it. */
static void calib_of(const char *dir, const char *experiment, struct calib_record *rec)
{
	_cleanup_free_ char *root = path_dirname(dir), *err = NULL;

	if (calib_load(root, experiment, rec, &err) < 0 && err)
		fprintf(stderr, "lab: warning: %s\n", err);
}

/* A run lab reproduce made names its original in its "reproduces" file:
 * the original from the same results folder, and the verdict of the
 * reproduction (NULL when the run reproduces none, or said why not). */
struct repro_of {
	struct result_set *rs;
	struct comparison *c;
	struct reproduction *r;
};

static void repro_of_release(struct repro_of *x)
{
	reproduction_free(x->r);
	comparison_free(x->c);
	result_set_free(x->rs);
}

static void repro_of(const char *dir, const struct result_set *rs, const struct comparison *c, struct repro_of *ret)
{
	_cleanup_free_ char *p = path_join(dir, "reproduces"), *root = path_dirname(dir), *odir = NULL;
	_cleanup_strbuf_ struct strbuf id = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };

	if (strbuf_read_file(&id, p, 256) < 0)
		return;
	while (id.len && (id.buf[id.len - 1] == '\n' || id.buf[id.len - 1] == ' '))
		strbuf_setlen(&id, id.len - 1);
	if (!id.len || !path_is_safe_relative(id.buf) || strchr(id.buf, '/')) {
		fprintf(stderr, "lab: warning: %s does not hold a run id: the reproduction is not shown\n", p);
		return;
	}
	if (!(odir = store_find(root, id.buf))) {
		fprintf(stderr, "lab: warning: run %s reproduces %s, which is not in %s: the reproduction is not shown\n",
			rs->id, id.buf, root);
		return;
	}
	if (store_load(odir, &ret->rs, &d) < 0) {
		_cleanup_strbuf_ struct strbuf why = STRBUF_INIT;

		diags_format(&d, &why);
		fprintf(stderr, "lab: warning: the original run %s cannot be read: %s", id.buf, why.buf ? why.buf : "\n");
		return;
	}
	ret->c = compare_build(ret->rs);
	ret->r = reproduction_build(ret->rs, ret->c, rs, c);
}

/* A track's folder (track.json in it): the robot's report of each change
 * point (engine/track-report.h); what it names and cannot read (a
 * comparison, a bisect) is left out, and the report says so. */
static int report_track(struct lab_ctx *ctx, const char *dir, const char *format)
{
	_cleanup_free_ char *root = path_dirname(dir);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, raw = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct track_report r;
	int ret = track_report_load(root, dir, &r, &d);

	if (ret < 0) {
		cmd_report_diags(ctx, &d);
		return cmd_exit_of(ret);
	}
	if (streq(format, "json")) {
		track_report_format_json(&r, &out);
	} else if (streq(format, "html")) {
		track_report_format_html(&r, &out);
	} else if (streq(format, "md")) {
		track_report_format_md(&r, &out);
	} else {
		track_report_format_text(&r, &raw);
		term_escape_lines(&out, raw.buf ? raw.buf : "");
	}
	cmd_write(&out);
	track_report_release(&r);
	return EXIT_OK;
}

int cmd_report(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_(repro_of_release) struct repro_of orig = { 0 };
	struct report_part part;
	_cleanup_free_ char *dir = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *cmp = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct report_opts ro = { 0 };
	struct calib_record rec = { 0 };
	const char *format;
	bool allow_mixed = false;
	int first = parse_report_options(ctx, "report", argc, argv, &format, &ro, &allow_mixed), r;

	if (first < 0)
		return cmd_options_exit(first);
	if (!(dir = cmd_stored_run(ctx, "report", argc - first, argv + first)))
		return EXIT_USAGE;
	{
		_cleanup_free_ char *tf = path_join(dir, TRACK_FILE);

		if (access(tf, F_OK) == 0)
			return report_track(ctx, dir, format);
	}
	if ((r = store_load(dir, &rs, &d)) < 0) {
		cmd_report_diags(ctx, &d);
		return cmd_exit_of(r);
	}
	cmp = compare_build(rs);
	if (cmd_refuse_mixed(ctx, "report", cmp, allow_mixed))
		return EXIT_USAGE;
	calib_of(dir, rs->experiment, &rec);
	ro.calib = rec.c;
	repro_of(dir, rs, cmp, &orig);
	if (orig.r) {
		reproduction_report_part(orig.r, &part);
		ro.part = &part;
	}
	if (streq(format, "json"))
		report_format_json(cmp, &ro, &out);
	else if (streq(format, "html"))
		report_format_html(cmp, &ro, &out);
	else if (streq(format, "md"))
		report_format_md(cmp, &ro, &out);
	else
		report_format_text(cmp, &ro, &out);
	cmd_write(&out);
	calib_record_release(&rec);
	return EXIT_OK;
}
