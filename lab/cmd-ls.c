/* SPDX-License-Identifier: MIT */
/*
 * lab ls: the stored runs, from the result index (store/index.h), with a
 * warning naming the run folders the index lacks (the folders are the
 * truth; lab gc --reindex adds them).
 */
#include <errno.h>
#include <stdio.h>
#include "cmd.h"
#include "store/index.h"
#include "util/alloc.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/table.h"
#include "util/banned.h"

int cmd_ls(struct lab_ctx *ctx, int argc, char **argv)
{
	static const char *const cols[] = { "ID:id", "EXPERIMENT:experiment", "RUNS:runs", "OK:ok", "FAILED:failed",
					    "PENDING:pending", "VERDICTS:verdicts", NULL };
	_cleanup_free_ char *root = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_table_ struct table *t = table_new(cols);
	_cleanup_strv_ struct strv missing = STRV_INIT;
	struct index_entry *e = NULL;
	size_t n = 0;
	int r, i = cmd_parse_options(ctx, command_find("ls"), argc, argv);

	if (i < 0)
		return cmd_options_exit(i);
	if (!(root = cmd_results_root(ctx)))
		return EXIT_USAGE;
	if (!path_is_dir(root)) {
		if (ctx->json)
			fputs("[]\n", stdout);
		return EXIT_OK;
	}
	if ((r = index_list(root, &e, &n, &d)) < 0 && r != -ENOENT) {
		cmd_report_diags(ctx, &d);
		index_entries_free(e, n);
		return EXIT_FAILED;
	}
	/* the folders are the truth: say when the index lacks some of them */
	if (index_unindexed(root, e, n, &missing) == 0 && missing.n) {
		_cleanup_strbuf_ struct strbuf ids = STRBUF_INIT;

		for (size_t k = 0; k < missing.n; k++)
			strbuf_addf(&ids, "%s%s", k ? ", " : "", missing.v[k]);
		fprintf(stderr, "lab: warning: %zu stored run%s not in the index (lab gc --reindex adds them): %s\n",
			missing.n, missing.n == 1 ? " is" : "s are", ids.buf);
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
	if (ctx->json || n)
		cmd_write_table(ctx, t);
	return EXIT_OK;
}
