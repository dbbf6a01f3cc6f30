/* SPDX-License-Identifier: MIT */
/*
 * lab shard JOB_DIR N: what a Slurm array task runs on a cluster node (the
 * job script lab wrote calls it; not for people). One shard of a lab run:
 * the node's lab must be the head's version; the kernels and the image
 * are taken from the spool only after their digests match; the shard's
 * run folder (JOB_DIR/shard-N/work/<run id>, its runs pending) is resumed
 * on this node's libvirt, so a task run again repeats nothing finished;
 * then the folder goes back as a bundle, JOB_DIR/shard-N/result.tar.zst.
 * A refusal (another version, a spool that does not match) is written to
 * JOB_DIR/shard-N/error for the head, naming the node.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "image/image.h"
#include "kernel/build.h"
#include "store/bundle.h"
#include "engine/engine.h"
#include "engine/shard.h"
#include "engine/spool.h"
#include "util/alloc.h"
#include "util/escape.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/paths.h"
#include "vm/vm.h"
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

/* The node's refusal, for the head: <shard>/error, and on stderr. */
static int refuse(const char *sd, const char *node, const char *fmt, ...) _printf_(3, 4);
static int refuse(const char *sd, const char *node, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL, *line = NULL, *p = path_join(sd, "error");
	va_list ap;
	_cleanup_strbuf_ struct strbuf esc = STRBUF_INIT;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	/* the message quotes the shard's files, which came from elsewhere: escaped, here and in the error file
	 * the head prints */
	term_escape(&esc, msg);
	line = xasprintf("node %s: %s\n", node, esc.buf ? esc.buf : "");
	fs_write_atomic(p, line, strlen(line), 0644);
	fprintf(stderr, "lab shard: %s", line);
	return EXIT_FAILED;
}

/* A file of lines (set, kernels) into v; nothing when there is none. */
static void read_lines(const char *path, struct strv *v)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, path, 64 * 1024) < 0 || !sb.buf)
		return;
	for (char *p = sb.buf, *nl; *p; p = nl + (*nl != 0)) {
		nl = strchrnul(p, '\n');
		if (nl > p) {
			_cleanup_free_ char *l = xstrndup(p, (size_t)(nl - p));

			strv_push(v, l);
		}
	}
}

static int run_shard(struct lab_ctx *ctx, const char *jobdir, const char *n)
{
	const char *env = getenv("SLURMD_NODENAME");
	char host[256] = "";
	_cleanup_free_ char *sd = xasprintf("%s/shard-%s", jobdir, n), *sp = path_join(sd, "shard.json");
	_cleanup_free_ char *spool = NULL, *jobs = NULL, *err = NULL, *yaml = path_join(jobdir, "lab.yaml");
	_cleanup_free_ char *cat = path_join(jobdir, "catalogue"), *work = path_join(sd, "work"), *rundir = NULL;
	_cleanup_free_ char *layer = paths_layer_dir(), *plugin = paths_insn_plugin(), *state = paths_state();
	_cleanup_free_ char *bundle = path_join(sd, "result.tar.zst"), *part = path_join(sd, "result.tar.zst.part");
	_cleanup_free_ char *p_set = path_join(jobdir, "set"), *p_kernels = path_join(jobdir, "kernels");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_(shard_spec_release) struct shard_spec spec = { 0 };
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_spec_ struct spec *s = NULL;
	_cleanup_strv_ struct strv set = STRV_INIT, kernels = STRV_INIT;
	_cleanup_result_set_ struct result_set *rs = NULL;
	struct kartifact *arts = NULL;
	struct image_artifact img = { 0 };
	const struct spec_experiment *e;
	const char *node;
	/* the tests play a node with another lab: LAB_TEST_VERSION */
	const char *version = getenv("LAB_TEST_VERSION") ? getenv("LAB_TEST_VERSION") : LAB_VERSION;
	int rc = EXIT_FAILED;

	gethostname(host, sizeof(host) - 1);
	node = env && str_is_name(env) ? env : host[0] ? host : "?";
	if (!path_is_dir(sd) || strbuf_read_file(&sb, sp, 1 << 20) < 0) {
		cmd_error(ctx, "shard: no shard %s (%s)", n, sp);
		return EXIT_USAGE;
	}
	if (shard_spec_parse(sp, sb.buf ? sb.buf : "", sb.len, &spec, &err) < 0)
		return refuse(sd, node, "%s", err);
	if (!streq(spec.lab, version))
		return refuse(sd, node, "lab %s here, the head runs lab %s: install the head's version on the nodes "
			      "(engine: lab: names its path)", version, spec.lab);
	jobs = path_dirname(jobdir);
	spool = path_dirname(jobs);
	{
		_cleanup_free_ char *base = path_basename(jobdir);

		if (!streq(base, spec.run))
			return refuse(sd, node, "the shard is of run %s, its folder %s", spec.run, jobdir);
	}
	/* nothing here is built: the head's kernels and image, if they are what it says */
	arts = xcalloc(spec.nkernels + 1, sizeof(*arts));
	for (size_t i = 0; i < spec.nkernels; i++) {
		_cleanup_free_ char *kd = xasprintf("%s/kernels/%.16s", spool, spec.kernels[i].key);

		if (spool_check(kd, spec.kernels[i].digest, &d) < 0 ||
		    kartifact_load(kd, spec.kernels[i].variant, spec.kernels[i].key, &arts[i]) < 0) {
			rc = refuse(sd, node, "kernel %s in the spool: %s", spec.kernels[i].variant,
				    d.n ? d.v[0].msg : "not a complete build");
			goto out;
		}
	}
	{
		_cleanup_free_ char *id = xasprintf("%s/images/%s", spool, spec.image_id);

		if (spool_check(id, spec.image_digest, &d) < 0 || image_artifact_load(id, &img) < 0) {
			rc = refuse(sd, node, "image %s in the spool: %s", spec.image_id, d.n ? d.v[0].msg : "not a complete image");
			goto out;
		}
	}
	read_lines(p_set, &set);
	read_lines(p_kernels, &kernels);
	{
		const struct spec_load_opts o = { .set = (const char *const *)set.v, .nset = set.n, .catalogue = cat };

		if (spec_load(yaml, &o, &s, &d) < 0 || (kernels.n && spec_only_kernels(s, &kernels, &d) < 0)) {
			rc = refuse(sd, node, "%s: %s", yaml, d.n ? d.v[0].msg : "cannot load");
			goto out;
		}
	}
	if (!(e = spec_find_experiment(s, spec.experiment))) {
		rc = refuse(sd, node, "%s has no experiment '%s'", yaml, spec.experiment);
		goto out;
	}
	{
		struct run_policy fixed = { .ops = &run_policy_fixed_ops };
		struct engine_prebuilt pb = { .kernels = arts, .nkernels = spec.nkernels, .image = &img,
					      .catalogue_tar = NULL };
		_cleanup_free_ char *tar = NULL;
		struct engine_opts o = { .s = s, .root = work, .layer = layer, .insn_plugin = plugin, .set = &set,
					 .kernels = &kernels, .policy = &fixed, .prebuilt = &pb, .node = node,
					 .event = on_event, .userdata = (void *)node };

		rundir = path_join(work, spec.run);
		tar = path_join(rundir, "workloads.tar");
		pb.catalogue_tar = tar;
		{
			/* VMs a killed task left behind go first */
			_cleanup_strv_ struct strv removed = STRV_INIT;
			_cleanup_diags_ struct diags gd = { 0 };

			vm_gc(state, false, &removed, &gd);
		}
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		if (engine_run(&o, e, rundir, &rs) < 0) {
			rc = refuse(sd, node, "the shard's runs could not go on (see its output file)");
			goto out;
		}
	}
	/* the head takes it from here: the whole folder, checked there as any bundle */
	unlink(part);
	if (bundle_write(rundir, NULL, 0, part, -1, &d) < 0 || rename(part, bundle) < 0) {
		rc = refuse(sd, node, "cannot write %s: %s", bundle, d.n ? d.v[0].msg : strerror(errno));
		goto out;
	}
	printf("lab shard on %s: %zu runs, result in %s\n", node, rs->n, bundle);
	rc = EXIT_OK;
out:
	for (size_t i = 0; arts && i < spec.nkernels; i++)
		kartifact_release(&arts[i]);
	free(arts);
	image_artifact_release(&img);
	return rc;
}

int cmd_shard(struct lab_ctx *ctx, int argc, char **argv)
{
	if (argc != 3 || !*argv[2] || strspn(argv[2], "0123456789") != strlen(argv[2]) || strlen(argv[2]) > 7) {
		cmd_error(ctx, "usage: lab shard JOB_DIR SHARD (a cluster node's array task runs it; SHARD a number)");
		return EXIT_USAGE;
	}
	return run_shard(ctx, argv[1], argv[2]);
}
