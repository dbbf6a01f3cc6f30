/* SPDX-License-Identifier: MIT */
/* lab doctor: is this machine ready for lab? What to install or fix. */
#include <stdlib.h>
#include "cmd.h"
#include "doctor/doctor.h"
#include "kernel/source.h"
#include "spec/spec.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/banned.h"

int cmd_doctor(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *cache = NULL;
	struct doctor_machine m;
	struct doctor_check *c = NULL;
	enum doctor_status worst;
	size_t n = 0;
	int o;

	if ((o = cmd_options_parse(ctx, "doctor", NULL, OPTS_ANYWHERE, argc, argv, NULL)) < 0)
		return o == -2 ? EXIT_OK : EXIT_USAGE;
	if (o != argc) {
		cmd_error(ctx, "doctor takes no arguments");
		return EXIT_USAGE;
	}
	/* the cache is lab.yaml's when there is one here, else the default */
	if (path_is_file(ctx->file) && cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	cache = lab_cache_dir(s);
	doctor_probe_machine(&m, cache);
	doctor_checks(&m, &c, &n);
	worst = doctor_worst(c, n);
	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		doctor_format_json(c, n, &j);
		json_finish(&j);
	} else {
		doctor_format_text(c, n, &out);
	}
	cmd_write(&out);
	doctor_checks_free(c, n);
	doctor_machine_release(&m);
	return worst == DOCTOR_MISSING ? EXIT_FAILED : EXIT_OK;
}
