/* SPDX-License-Identifier: MIT */
/*
 * lab shard JOB_DIR N: what a Slurm array task runs on a cluster node (the
 * job script lab wrote calls it; not for people). The node's side of a
 * shard is engine/shard-node.c; here the node's name, the signals, and
 * the engine's events as lines on stdout (Slurm keeps them in the task's
 * output file); a refusal also goes to stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "engine/engine.h"
#include "engine/shard-node.h"
#include "util/alloc.h"
#include "util/dirs.h"
#include "util/banned.h"

#ifndef LAB_VERSION
#define LAB_VERSION "0.1"
#endif

static void on_signal(int sig)
{
	engine_cancel();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* The engine's events as lines on stdout: Slurm keeps them in the task's output file. */
static void on_event(void *userdata, const struct engine_event *ev)
{
	const char *node = userdata;

	switch (ev->type) {
	case ENGINE_EV_STARTED:
		printf("lab shard on %s: run %s, %zu runs\n", node, ev->id, ev->nruns);
		break;
	case ENGINE_EV_NOTE:
	case ENGINE_EV_WARNING:
	case ENGINE_EV_ERROR:
		printf("lab shard on %s: %s%s\n", node, ev->type == ENGINE_EV_ERROR ? "error: " : "", ev->text);
		break;
	case ENGINE_EV_STEP:
		printf("lab shard on %s: %s %s: %s\n", node, ev->run->id, ev->run->variant, ev->what);
		break;
	case ENGINE_EV_RUN_DONE:
		printf("lab shard on %s: %s %s %s%s%s\n", node, ev->run->id, ev->run->variant,
		       ev->run->status == RUN_OK ? "ok" : "FAILED", ev->run->error ? ": " : "",
		       ev->run->error ? ev->run->error : "");
		break;
	case ENGINE_EV_DIAGS:
		for (size_t i = 0; i < ev->diags->n; i++)
			printf("lab shard on %s: error: %s\n", node, ev->diags->v[i].msg);
		break;
	default:
		break;
	}
	fflush(stdout);
}

static int run_shard(struct lab_ctx *ctx, const char *jobdir, const char *n)
{
	const char *env = getenv("SLURMD_NODENAME");
	char host[256] = "";
	_cleanup_free_ char *layer = dirs_layer_dir(), *plugin = dirs_insn_plugin(), *state = dirs_state();
	_cleanup_free_ char *bundle = NULL, *why = NULL;
	/* the tests play a node with another lab: LAB_TEST_VERSION */
	const char *version = getenv("LAB_TEST_VERSION") ? getenv("LAB_TEST_VERSION") : LAB_VERSION;
	struct shard_node_opts o = { .jobdir = jobdir, .shard = n, .version = version, .layer = layer,
				     .insn_plugin = plugin, .state = state, .event = on_event };
	size_t nruns = 0;
	int r;

	gethostname(host, sizeof(host) - 1);
	o.node = env && str_is_name(env) ? env : host[0] ? host : "?";
	o.userdata = (void *)o.node;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	r = shard_node_run(&o, &bundle, &nruns, &why);
	if (r == -ENOENT) {
		cmd_error(ctx, "shard: no shard %s (%s/shard-%s/shard.json)", n, jobdir, n);
		return EXIT_USAGE;
	}
	if (r < 0) {
		fprintf(stderr, "lab shard: %s", why ? why : "refused\n");
		return EXIT_FAILED;
	}
	printf("lab shard on %s: %zu runs, result in %s\n", o.node, nruns, bundle);
	return EXIT_OK;
}

int cmd_shard(struct lab_ctx *ctx, int argc, char **argv)
{
	if (argc != 3 || !*argv[2] || strspn(argv[2], "0123456789") != strlen(argv[2]) || strlen(argv[2]) > 7) {
		cmd_error(ctx, "usage: lab shard JOB_DIR SHARD (a cluster node's array task runs it; SHARD a number)");
		return EXIT_USAGE;
	}
	return run_shard(ctx, argv[1], argv[2]);
}
