/* SPDX-License-Identifier: MIT */
/* lab plan [EXPERIMENT...]: the runs, in execution order. */
#include <stdio.h>
#include "cmd.h"
#include "plan/plan.h"
#include "util/banned.h"

int cmd_plan(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_plan_ struct plan *p = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strv_ struct strv only = STRV_INIT;
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	int i = cmd_parse_options(ctx, command_find("plan"), argc, argv);

	if (i < 0)
		return i == -2 ? EXIT_OK : EXIT_USAGE;
	for (; i < argc; i++)
		strv_push(&only, argv[i]);
	if (cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (plan_build(s, &only, &p, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return EXIT_USAGE;
	}
	if (ctx->json)
		plan_format_json(p, &out);
	else
		plan_format_text(p, &out);
	cmd_write(&out);
	return EXIT_OK;
}
