/* SPDX-License-Identifier: MIT */
/*
 * A cluster node's side of a shard (shard-node.h).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../image/image.h"
#include "../kernel/build.h"
#include "../store/bundle.h"
#include "../util/alloc.h"
#include "../util/escape.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "../vm/vm.h"
#include "policy.h"
#include "shard.h"
#include "shard-node.h"
#include "spool.h"
#include "../util/banned.h"

/* One shard being run here: what it is and what it took from the spool. */
struct node_run {
	const struct shard_node_opts *o;
	char *sd; /* JOB_DIR/shard-N */
	struct shard_spec spec;
	struct kartifact *arts;
	struct image_artifact img;
	struct spec *s;
	struct strv set, kernels;
	char *why; /* the refusal, as written to the error file */
};

static void node_run_release(struct node_run *nr)
{
	for (size_t i = 0; nr->arts && i < nr->spec.nkernels; i++)
		kartifact_release(&nr->arts[i]);
	free(nr->arts);
	image_artifact_release(&nr->img);
	spec_free(nr->s);
	strv_release(&nr->set);
	strv_release(&nr->kernels);
	shard_spec_release(&nr->spec);
	free(nr->sd);
}

/* The node's refusal, for the head: <shard>/error, and kept in nr->why. -EPERM. */
static int refuse(struct node_run *nr, const char *fmt, ...) _printf_(2, 3);
static int refuse(struct node_run *nr, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL, *p = path_join(nr->sd, "error");
	_cleanup_strbuf_ struct strbuf esc = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	/* the message quotes the shard's files, which came from elsewhere: escaped, here and in the error file
	 * the head prints */
	term_escape(&esc, msg);
	free(nr->why);
	nr->why = xasprintf("node %s: %s\n", nr->o->node, esc.buf ? esc.buf : "");
	fs_write_atomic(p, nr->why, strlen(nr->why), 0644);
	return -EPERM;
}

/* shard.json read and checked: this lab's version, the run its folder names. The spool's folder in *ret_spool. */
static int check_shard(struct node_run *nr, char **ret_spool)
{
	const struct shard_node_opts *o = nr->o;
	_cleanup_free_ char *sp = path_join(nr->sd, "shard.json"), *err = NULL, *jobs = NULL, *base = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (!path_is_dir(nr->sd) || strbuf_read_file(&sb, sp, 1 << 20) < 0)
		return -ENOENT;
	if (shard_spec_parse(sp, sb.buf ? sb.buf : "", sb.len, &nr->spec, &err) < 0)
		return refuse(nr, "%s", err);
	if (!streq(nr->spec.lab, o->version))
		return refuse(nr, "lab %s here, the head runs lab %s: install the head's version on the nodes "
			      "(engine: lab: names its path)", o->version, nr->spec.lab);
	jobs = path_dirname(o->jobdir);
	base = path_basename(o->jobdir);
	if (!streq(base, nr->spec.run))
		return refuse(nr, "the shard is of run %s, its folder %s", nr->spec.run, o->jobdir);
	*ret_spool = path_dirname(jobs);
	return 0;
}

/* Nothing here is built: the head's kernels and image, if they are what it says. */
static int take_from_spool(struct node_run *nr, const char *spool)
{
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *id = xasprintf("%s/images/%s", spool, nr->spec.image_id);

	nr->arts = xcalloc(nr->spec.nkernels + 1, sizeof(*nr->arts));
	for (size_t i = 0; i < nr->spec.nkernels; i++) {
		_cleanup_free_ char *kd = xasprintf("%s/kernels/%.16s", spool, nr->spec.kernels[i].key);

		if (spool_check(kd, nr->spec.kernels[i].digest, &d) < 0 ||
		    kartifact_load(kd, nr->spec.kernels[i].variant, nr->spec.kernels[i].key, &nr->arts[i]) < 0)
			return refuse(nr, "kernel %s in the spool: %s", nr->spec.kernels[i].variant,
				      d.n ? d.v[0].msg : "not a complete build");
	}
	if (spool_check(id, nr->spec.image_digest, &d) < 0 || image_artifact_load(id, &nr->img) < 0)
		return refuse(nr, "image %s in the spool: %s", nr->spec.image_id,
			      d.n ? d.v[0].msg : "not a complete image");
	return 0;
}

/* The head's lab.yaml with its --set and kernels, and the shard's experiment in it. */
static int load_experiment(struct node_run *nr, const struct spec_experiment **ret)
{
	const char *jobdir = nr->o->jobdir;
	_cleanup_free_ char *yaml = path_join(jobdir, "lab.yaml"), *cat = path_join(jobdir, "catalogue");
	_cleanup_free_ char *p_set = path_join(jobdir, "set"), *p_kernels = path_join(jobdir, "kernels");
	_cleanup_diags_ struct diags d = { 0 };

	/* a run made without --set or --kernels has no such file */
	fs_read_lines(p_set, 64 * 1024, &nr->set);
	fs_read_lines(p_kernels, 64 * 1024, &nr->kernels);
	{
		const struct spec_load_opts lo = { .set = (const char *const *)nr->set.v, .nset = nr->set.n,
						   .catalogue = cat };

		if (spec_load(yaml, &lo, &nr->s, &d) < 0 ||
		    (nr->kernels.n && spec_only_kernels(nr->s, &nr->kernels, &d) < 0))
			return refuse(nr, "%s: %s", yaml, d.n ? d.v[0].msg : "cannot load");
	}
	if (!(*ret = spec_find_experiment(nr->s, nr->spec.experiment)))
		return refuse(nr, "%s has no experiment '%s'", yaml, nr->spec.experiment);
	return 0;
}

/* The shard's runs, resumed in rundir with the spool's kernels and image. */
static int run_runs(struct node_run *nr, const struct spec_experiment *e, const char *work, const char *rundir,
		    struct result_set **ret_rs)
{
	const struct shard_node_opts *o = nr->o;
	struct run_policy fixed = { .ops = &run_policy_fixed_ops };
	_cleanup_free_ char *tar = path_join(rundir, "workloads.tar");
	struct engine_prebuilt pb = { .kernels = nr->arts, .nkernels = nr->spec.nkernels, .image = &nr->img,
				      .catalogue_tar = tar };
	struct engine_opts eo = { .s = nr->s, .root = work, .layer = o->layer, .insn_plugin = o->insn_plugin,
				  .set = &nr->set, .kernels = &nr->kernels, .policy = &fixed, .prebuilt = &pb,
				  .node = o->node, .event = o->event, .userdata = o->userdata };
	{
		/* VMs a killed task left behind go first */
		_cleanup_strv_ struct strv removed = STRV_INIT;
		_cleanup_diags_ struct diags gd = { 0 };

		vm_gc(o->state, false, &removed, &gd);
	}
	if (engine_run(&eo, e, rundir, ret_rs) < 0)
		return refuse(nr, "the shard's runs could not go on (see its output file)");
	return 0;
}

int shard_node_run(const struct shard_node_opts *o, char **ret_bundle, size_t *ret_nruns, char **ret_why)
{
	struct node_run nr = { .o = o, .sd = xasprintf("%s/shard-%s", o->jobdir, o->shard), .set = STRV_INIT,
			       .kernels = STRV_INIT };
	_cleanup_free_ char *spool = NULL, *work = path_join(nr.sd, "work"), *rundir = NULL, *bundle = NULL;
	_cleanup_free_ char *part = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	const struct spec_experiment *e;
	int r;

	if ((r = check_shard(&nr, &spool)) < 0 || (r = take_from_spool(&nr, spool)) < 0 ||
	    (r = load_experiment(&nr, &e)) < 0)
		goto out;
	rundir = path_join(work, nr.spec.run);
	if ((r = run_runs(&nr, e, work, rundir, &rs)) < 0)
		goto out;
	/* the head takes it from here: the whole folder, checked there as any bundle */
	bundle = path_join(nr.sd, "result.tar.zst");
	part = path_join(nr.sd, "result.tar.zst.part");
	unlink(part);
	if (bundle_write(rundir, NULL, 0, part, -1, &d) < 0 || rename(part, bundle) < 0) {
		r = refuse(&nr, "cannot write %s: %s", bundle, d.n ? d.v[0].msg : strerror(errno));
		goto out;
	}
	*ret_nruns = rs->n;
	*ret_bundle = TAKE_PTR(bundle);
out:
	if (r < 0)
		*ret_why = TAKE_PTR(nr.why);
	free(nr.why);
	node_run_release(&nr);
	return r;
}
