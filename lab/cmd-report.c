/* SPDX-License-Identifier: MIT */
/*
 * lab report RUN_ID [--format text|md|json] [--all]: the comparison of a
 * stored run (RUN_ID under the results folder, or the path of a run
 * folder). lab ls: the stored runs from the index (--reindex in lab gc
 * rebuilds it).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "result/compare.h"
#include "result/report.h"
#include "run/index.h"
#include "run/store.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/path.h"
#include "util/table.h"
#include "util/banned.h"

int cmd_report(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'J' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	_cleanup_free_ char *dir = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *cmp = NULL;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_diags_ struct diags d = { 0 };
	struct report_opts ro = { 0 };
	const char *format = "text";
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			format = optarg;
			break;
		case 'a':
			ro.all = true;
			break;
		case 'J':
			format = "json";
			break;
		case 'h':
			command_usage(command_find("report"), stdout);
			return EXIT_OK;
		default:
			cmd_error(ctx, "report: unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (!streq(format, "text") && !streq(format, "md") && !streq(format, "json") && !streq(format, "html")) {
		cmd_error(ctx, "report: --format is text, md, html or json, not '%s'", format);
		return EXIT_USAGE;
	}
	if (!(dir = cmd_stored_run(ctx, "report", argc - optind, argv + optind)))
		return EXIT_USAGE;
	if (store_load(dir, &rs, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_FAILED;
	}
	cmp = compare_build(rs, 0.95);
	if (streq(format, "json"))
		report_format_json(cmp, &out);
	else if (streq(format, "html"))
		report_format_html(cmp, &ro, &out);
	else if (streq(format, "md"))
		report_format_md(cmp, &ro, &out);
	else
		report_format_text(cmp, &ro, &out);
	cmd_write(&out);
	return EXIT_OK;
}

int cmd_ls(struct lab_ctx *ctx, int argc, char **argv)
{
	static const char *const cols[] = { "ID:id", "EXPERIMENT:experiment", "RUNS:runs", "OK:ok", "FAILED:failed",
					    "PENDING:pending", "VERDICTS:verdicts", NULL };
	_cleanup_free_ char *root = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_table_ struct table *t = table_new(cols);
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct index_entry *e = NULL;
	size_t n = 0;
	int i = cmd_parse_options(ctx, command_find("ls"), argc, argv);

	if (i < 0)
		return i == -2 ? EXIT_OK : EXIT_USAGE;
	if (!(root = cmd_results_root(ctx)))
		return EXIT_USAGE;
	if (!path_is_dir(root)) {
		if (ctx->json)
			fputs("[]\n", stdout);
		return EXIT_OK;
	}
	if (index_list(root, &e, &n, &d) < 0) {
		cmd_report_diags(ctx, &d);
		index_entries_free(e, n);
		return EXIT_FAILED;
	}
	for (size_t k = 0; k < n; k++) {
		table_add_string(t, e[k].id);
		table_add_string(t, e[k].experiment);
		table_add_uint(t, e[k].total);
		table_add_uint(t, e[k].ok);
		table_add_uint(t, e[k].failed);
		table_add_uint(t, e[k].pending);
		table_add_string(t, *e[k].verdicts ? e[k].verdicts : "-");
	}
	index_entries_free(e, n);
	if (ctx->json)
		table_format_json(t, &out);
	else if (n)
		table_format_text(t, &out);
	cmd_write(&out);
	return EXIT_OK;
}
