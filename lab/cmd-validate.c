/* SPDX-License-Identifier: MIT */
/* lab validate [FILE]: load and check (the plan included); silent and 0 when valid. */
#include <stdio.h>
#include "cmd.h"
#include "plan/plan.h"
#include "util/json.h"
#include "util/banned.h"

int cmd_validate(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_spec_ struct spec *s = NULL;
	const char *path;
	int i = cmd_parse_options(ctx, command_find("validate"), argc, argv);

	if (i < 0)
		return i == -2 ? EXIT_OK : EXIT_USAGE;
	path = i < argc ? argv[i] : ctx->file;
	if (i < argc)
		ctx->file_given = true;
	if (cmd_load_spec(ctx, path, &s) < 0)
		return EXIT_USAGE;
	{
		/* what only the expanded runs show (two jobs that would share a group) */
		_cleanup_plan_ struct plan *p = NULL;
		_cleanup_diags_ struct diags d = { 0 };

		if (plan_build(s, NULL, &p, &d) < 0) {
			cmd_report_diags(ctx, &d);
			return EXIT_USAGE;
		}
	}
	if (ctx->json) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
		struct json j;

		json_init(&j, &sb, true);
		json_object_begin(&j);
		json_kv_string(&j, "file", path);
		json_key(&j, "valid");
		json_bool(&j, true);
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
