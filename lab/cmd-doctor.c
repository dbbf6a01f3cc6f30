/* SPDX-License-Identifier: MIT */
/*
 * lab doctor: is this machine ready for lab? What to install or fix. With
 * --engine slurm: is the cluster of lab.yaml's engine: section ready (the
 * controller, the partition, the spool, each idle node's lab, accel and
 * libvirt)? `lab doctor --node-probe [SPOOL [MARKER]]` is what the head
 * runs on a node with srun (not for people): one line of JSON.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "doctor/cluster.h"
#include "doctor/doctor.h"
#include "kernel/source.h"
#include "spec/spec.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/banned.h"

#ifndef LAB_VERSION
#define LAB_VERSION "0.1"
#endif

struct doctor_opts {
	const char *engine;
};

const struct lab_option doctor_options[] = {
	OPT(struct doctor_opts, engine, OPT_CHOICE, 0, "engine", "ENGINE",
	    "what to check: local (this machine, the default), or slurm (the cluster of lab.yaml's engine: "
	    "section, each idle node probed with srun)",
	    .choices = "local|slurm"),
	{ 0 },
};

/* On a node, under srun: the head reads the one line. */
static int node_probe(int argc, char **argv)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	struct doctor_node_report r;

	if (argc > 4) {
		fprintf(stderr, "lab doctor --node-probe: usage: lab doctor --node-probe [SPOOL [MARKER]]\n");
		return EXIT_USAGE;
	}
	doctor_node_probe(LAB_VERSION, argc > 2 ? argv[2] : NULL, argc > 3 ? argv[3] : NULL, &r);
	doctor_node_report_format(&r, &out);
	doctor_node_report_release(&r);
	cmd_write(&out);
	return EXIT_OK;
}

static void on_progress(void *userdata, const char *what)
{
	const struct lab_ctx *ctx = userdata;

	if (ctx->verbosity >= 0)
		fprintf(stderr, "doctor: %s\n", what);
}

static void cluster_checks(const struct lab_ctx *ctx, const struct spec *s, struct doctor_check **c, size_t *n)
{
	_cleanup_free_ char *self = realpath("/proc/self/exe", NULL);
	const struct spec_engine *e = s ? &s->engine : NULL;
	struct doctor_cluster o = {
		.file = ctx->file,
		.have_file = s != NULL,
		.declared = e && e->declared,
		.partition = e ? e->partition : NULL,
		.account = e ? e->account : NULL,
		.qos = e ? e->qos : NULL,
		.reservation = e ? e->reservation : NULL,
		.spool = e ? e->spool : NULL,
		.lab = e && e->lab ? e->lab : self ? self : "lab",
		.version = LAB_VERSION,
		.progress = on_progress,
		.userdata = (void *)ctx,
	};

	doctor_cluster_checks(&o, c, n);
}

int cmd_doctor(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_free_ char *cache = NULL;
	struct doctor_opts opts = { 0 };
	struct doctor_machine m = { 0 };
	struct doctor_check *c = NULL;
	enum doctor_status worst;
	bool slurm;
	size_t n = 0;
	int o;

	if (argc > 1 && streq(argv[1], "--node-probe"))
		return node_probe(argc, argv);
	if ((o = cmd_options_parse(ctx, "doctor", NULL, OPTS_ANYWHERE, argc, argv, &opts)) < 0)
		return cmd_options_exit(o);
	if (o != argc) {
		cmd_error(ctx, "doctor takes no arguments");
		return EXIT_USAGE;
	}
	slurm = opts.engine && streq(opts.engine, "slurm");
	/* the cache is lab.yaml's when there is one here, else the default */
	if (path_is_file(ctx->file) && cmd_load_spec(ctx, ctx->file, &s) < 0)
		return EXIT_USAGE;
	if (slurm) {
		cluster_checks(ctx, s, &c, &n);
	} else {
		cache = spec_cache_dir(s);
		doctor_probe_machine(&m, cache);
		doctor_checks(&m, &c, &n);
	}
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
