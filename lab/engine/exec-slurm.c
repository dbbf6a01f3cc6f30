/* SPDX-License-Identifier: MIT */
/*
 * The Slurm executor: the engine's groups as shards (shard.h: whole
 * comparison blocks), each an array task run with --exclusive --requeue by
 * lab itself on a node (`lab shard`) against the node's own libvirt. lab
 * plans, builds and judges; Slurm places and runs.
 *
 * - Kernels and the image go into the spool content-addressed (spool.h);
 *   the node checks them against their digests before a boot.
 * - Each shard has a folder <spool>/jobs/<run id>/shard-<N>/ with its
 *   shard.json and its run folder (work/<run id>, the shard's runs pending):
 *   the node resumes that folder, so a task Slurm requeues, or lab submits
 *   again, never repeats a finished run. At its end the node packs the
 *   folder as a bundle (result.tar.zst); lab imports it with every rule of
 *   a hostile bundle (bundle_unpack, store_load) and takes only the
 *   shard's own pending runs.
 * - One `squeue --json` for all of lab's jobs per poll (engine: poll:), and
 *   a finished shard is seen from its bundle in the spool first.
 * - The journal of submissions (<run folder>/slurm.json) lets `lab run
 *   --resume` re-attach to queued jobs and submit only what is missing.
 * - A task that left the queue without a bundle is submitted again (at
 *   most engine: retries: times); one the node refused (another lab
 *   version, a spool folder that does not match) fails its runs with the
 *   node's reason. A node that failed two boots, or lost a task, is
 *   excluded from later submissions. Every retry is recorded with why.
 * - With repeat: auto, blocks are submitted one shard each as task slots
 *   free up, each asked of the policy first: a decided comparison submits
 *   no more, an undecided one gets the next boots.
 * - Ctrl-C (engine_cancel) cancels lab's own jobs (scancel) and keeps every
 *   imported shard; the run stays resumable.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../util/alloc.h"
#include "../util/clock.h"
#include "../util/command.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/tarball.h"
#include "../util/tempdir.h"
#include "../store/bundle.h"
#include "executor.h"
#include "../image/image.h"
#include "../kernel/build.h"
#include "../plan/plan.h"
#include "../util/strmap.h"
#include "shard.h"
#include "slurm-queue.h"
#include "spool.h"
#include "../store/store.h"
#include "../util/banned.h"

#ifndef LAB_VERSION
#define LAB_VERSION "0.1"
#endif

struct slurm_exec {
	const struct executor_run *x;
	const struct spec_engine *c;
	char *jobdir;  /* <spool>/jobs/<run id> */
	char *journal; /* <run folder>/slurm.json */
	char *self;    /* lab on the nodes */
	struct shard_journal j;
	struct shard_spec spec; /* what every shard.json says but its index */
	struct shard_block *blocks;
	size_t nblocks, next_block;
	unsigned slots; /* tasks at once */
	bool seq;       /* the policy decides as results arrive: a block a shard, submitted as slots free */
	char *said;     /* the last progress line */
	struct strv boot_failed; /* a node per boot that failed on it */
};

static void say(struct slurm_exec *se, const char *fmt, ...) _printf_(2, 3);
static void say(struct slurm_exec *se, const char *fmt, ...)
{
	_cleanup_free_ char *t = NULL;
	va_list ap;

	va_start(ap, fmt);
	t = xvasprintf(fmt, ap);
	va_end(ap);
	engine_emit_text(se->x->engine, ENGINE_EV_NOTE, "slurm: %s", t);
}

/* A Slurm command's output; the error (stderr's first line) in *ret_err. */
static int slurm_cmd(struct command *c, struct strbuf *out, char **ret_err)
{
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	int r;

	c->out = out;
	c->err = &err;
	c->timeout_usec = 120 * 1000000ULL;
	r = command_run(c);
	if (r != 0) {
		size_t n = err.buf ? strcspn(err.buf, "\n") : 0;

		*ret_err = r < 0 ? xasprintf("%s: %s", c->argv.v[0], strerror(-r))
				 : xasprintf("%s failed (exit status %d)%s%.*s", c->argv.v[0], r, n ? ": " : "", (int)n,
					     err.buf ? err.buf : "");
		return -1;
	}
	return 0;
}

static void save_journal(struct slurm_exec *se)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	shard_journal_format(&se->j, &sb);
	if (fs_write_atomic(se->journal, sb.buf, sb.len, 0644) < 0)
		engine_emit_text(se->x->engine, ENGINE_EV_WARNING, "cannot write %s: %s", se->journal, strerror(errno));
}

/* A retry and why: into the journal, the run (the report lists them) and the progress. */
static void retry_note(struct slurm_exec *se, const char *fmt, ...) _printf_(2, 3);
static void retry_note(struct slurm_exec *se, const char *fmt, ...)
{
	va_list ap;
	char *t;

	va_start(ap, fmt);
	t = xvasprintf(fmt, ap);
	va_end(ap);
	for (char *p = t; *p; p++)
		if (*p == '\n' || *p == '\t')
			*p = ' ';
	engine_note_cluster(se->x->engine, t, false);
	say(se, "%s", t);
	strv_push_take(&se->j.retries, t);
}

/* How many nodes the partition has (sinfo); -1 with *ret_err when Slurm cannot be reached. */
static int partition_nodes(const struct spec_engine *c, char **ret_err)
{
	_cleanup_(command_release) struct command cmd = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	int n = 0;

	command_init(&cmd, "sinfo");
	command_args(&cmd, "--noheader", "--Node", "--format=%N", NULL);
	if (c->partition)
		command_argf(&cmd, "--partition=%s", c->partition);
	if (slurm_cmd(&cmd, &out, ret_err) < 0)
		return -1;
	for (const char *p = out.buf ? out.buf : ""; *p; p++)
		n += *p == '\n';
	if (!n) {
		*ret_err = c->partition ? xasprintf("Slurm has no nodes in partition '%s'", c->partition)
					: xstrdup("Slurm lists no nodes");
		return -1;
	}
	return n;
}

/* ---- the spool ---- */

static char *shard_dir(const struct slurm_exec *se, unsigned index)
{
	return xasprintf("%s/shard-%u", se->jobdir, index);
}

/* Kernels, image, catalogue and the run's lab.yaml where the nodes see them. */
static int publish(struct slurm_exec *se)
{
	const struct executor_run *x = se->x;
	const char *spool = se->c->spool;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *cat = path_join(se->jobdir, "catalogue");
	char digest[SHA256_HEX_LEN + 1];
	static const char *const files[] = { "lab.yaml", "set", "kernels", "workloads.tar" };

	se->spec.lab = xstrdup(LAB_VERSION);
	se->spec.run = xstrdup(x->rs->id);
	se->spec.experiment = xstrdup(x->e->name);
	se->spec.nkernels = x->variants->n;
	se->spec.kernels = xcalloc(x->variants->n + 1, sizeof(*se->spec.kernels));
	for (size_t i = 0; i < x->variants->n; i++) {
		_cleanup_free_ char *name = xasprintf("%.16s", x->arts[i].key);

		if (spool_put(spool, "kernels", name, x->arts[i].dir, digest, &d) < 0)
			goto fail;
		se->spec.kernels[i] = (struct shard_kernel){ .variant = xstrdup(x->variants->v[i]),
							     .key = xstrdup(x->arts[i].key), .digest = xstrdup(digest) };
	}
	if (spool_put(spool, "images", x->img->id, x->img->dir, digest, &d) < 0)
		goto fail;
	se->spec.image_id = xstrdup(x->img->id);
	se->spec.image_digest = xstrdup(digest);
	if (path_mkdir_p(se->jobdir, 0755) < 0) {
		engine_emit_text(x->engine, ENGINE_EV_ERROR, "cannot create %s: %s", se->jobdir, strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		_cleanup_free_ char *from = path_join(x->dir, files[i]), *to = path_join(se->jobdir, files[i]);

		if (path_is_file(from) && fs_copy_file(from, to, true) < 0) {
			engine_emit_text(x->engine, ENGINE_EV_ERROR, "cannot copy %s to %s: %s", from, to, strerror(errno));
			return -1;
		}
	}
	if (!path_is_dir(cat)) {
		_cleanup_free_ char *tmp = xasprintf("%s.tmp-%d", cat, (int)getpid()), *tar = path_join(se->jobdir, "workloads.tar");
		_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
		_cleanup_close_ int fd = -1;

		fs_remove_tree(tmp);
		if (path_mkdir_p(tmp, 0755) < 0 || (fd = open(tmp, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
		    tarball_extract(tar, fd, 0, NULL, &err) < 0 || rename(tmp, cat) < 0) {
			engine_emit_text(x->engine, ENGINE_EV_ERROR, "cannot unpack the catalogue into %s: %s", cat,
					 err.buf ? err.buf : strerror(errno));
			fs_remove_tree(tmp);
			return -1;
		}
	}
	return 0;
fail:
	engine_emit(x->engine, &(struct engine_event){ .type = ENGINE_EV_DIAGS, .diags = &d });
	return -1;
}

/* The shard's run folder for the node: this run with only the shard's runs, all pending. */
static int write_seed(struct slurm_exec *se, const struct shard_entry *e)
{
	const struct executor_run *x = se->x;
	_cleanup_free_ char *sd = shard_dir(se, e->index), *work = xasprintf("%s/work/%s", sd, x->rs->id);
	_cleanup_free_ char *sp = path_join(sd, "shard.json");
	_cleanup_strbuf_ struct strbuf text = STRBUF_INIT, sj = STRBUF_INIT;
	_cleanup_result_set_ struct result_set *sub = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ bool *drop = NULL;
	static const char *const files[] = { "lab.yaml", "set", "kernels", "plan.json", "workloads.tar" };

	se->spec.index = e->index;
	shard_spec_format(&se->spec, &sj);
	if (path_mkdir_p(sd, 0755) < 0 || fs_write_atomic(sp, sj.buf, sj.len, 0644) < 0) {
		engine_emit_text(x->engine, ENGINE_EV_ERROR, "cannot write %s: %s", sp, strerror(errno));
		return -1;
	}
	/* a shard submitted again goes on from its own folder: what it finished stays */
	if (path_is_dir(work))
		return 0;
	store_format(x->rs, &text);
	if (store_parse(x->rs->id, text.buf, text.len, "run.json", &sub, &d) < 0) {
		engine_emit(x->engine, &(struct engine_event){ .type = ENGINE_EV_DIAGS, .diags = &d });
		return -1;
	}
	drop = xcalloc(sub->n + 1, sizeof(bool));
	for (size_t i = 0; i < sub->n; i++) {
		drop[i] = !strv_contains(&e->runs, sub->runs[i].id) || sub->runs[i].status != RUN_PENDING;
		/* the node's boots are its own */
		free(sub->runs[i].boot);
		sub->runs[i].boot = NULL;
	}
	result_drop_runs(sub, drop);
	strv_release(&sub->cluster);
	if (path_mkdir_p(work, 0755) < 0 || store_save(work, sub, &d) < 0) {
		if (!d.n)
			engine_emit_text(x->engine, ENGINE_EV_ERROR, "cannot create %s: %s", work, strerror(errno));
		else
			engine_emit(x->engine, &(struct engine_event){ .type = ENGINE_EV_DIAGS, .diags = &d });
		return -1;
	}
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		_cleanup_free_ char *from = path_join(x->dir, files[i]), *to = path_join(work, files[i]);

		if (path_is_file(from))
			fs_copy_file(from, to, true);
	}
	return 0;
}

/* ---- submitting ---- */

/* The job script of one submission: array task -> shard, then lab on the node. */
static char *write_script(struct slurm_exec *se, unsigned sub, struct shard_entry **es, size_t n)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	char *p = xasprintf("%s/submit-%u.sh", se->jobdir, sub);

	strbuf_addf(&sb, "#!/bin/sh\n# lab run %s (experiment %s): submission %u, %zu shard%s\nset -u\n"
			 "case \"${SLURM_ARRAY_TASK_ID:-}\" in\n",
		    se->x->rs->id, se->x->e->name, sub, n, n == 1 ? "" : "s");
	for (size_t i = 0; i < n; i++)
		strbuf_addf(&sb, "%zu) shard=%u ;;\n", i, es[i]->index);
	strbuf_addstr(&sb, "*) echo \"lab: no shard for array task ${SLURM_ARRAY_TASK_ID:-}\" >&2; exit 2 ;;\nesac\nexec ");
	shell_quote(&sb, se->self);
	strbuf_addstr(&sb, " shard ");
	shell_quote(&sb, se->jobdir);
	strbuf_addstr(&sb, " \"$shard\"\n");
	if (fs_write_atomic(p, sb.buf, sb.len, 0755) < 0) {
		free(p);
		return NULL;
	}
	return p;
}

/* "1-02:03:04" for --time. */
static char *slurm_time(uint64_t sec)
{
	uint64_t m = (sec + 59) / 60;

	return xasprintf("%llu-%02llu:%02llu:00", (unsigned long long)(m / 1440), (unsigned long long)(m / 60 % 24),
			 (unsigned long long)(m % 60));
}

/* sbatch's command line for an array of n shards running script: lab's
 * own options, then engine:'s (partition, constraint, ... sbatch:). */
static void sbatch_command(struct slurm_exec *se, size_t n, const char *script, struct command *cmd)
{
	const struct executor_run *x = se->x;
	const struct spec_engine *c = se->c;

	command_init(cmd, "sbatch");
	command_args(cmd, "--parsable", "--exclusive", "--requeue", NULL);
	command_argf(cmd, "--job-name=lab:%s:%s", x->e->name, x->rs->id);
	command_argf(cmd, "--comment=lab run %s", x->rs->id);
	if (se->slots && se->slots < n)
		command_argf(cmd, "--array=0-%zu%%%u", n - 1, se->slots);
	else
		command_argf(cmd, "--array=0-%zu", n - 1);
	command_argf(cmd, "--output=%s/slurm-%%A_%%a.out", se->jobdir);
	if (c->partition)
		command_argf(cmd, "--partition=%s", c->partition);
	if (c->constraint)
		command_argf(cmd, "--constraint=%s", c->constraint);
	if (c->account)
		command_argf(cmd, "--account=%s", c->account);
	if (c->qos)
		command_argf(cmd, "--qos=%s", c->qos);
	if (c->reservation)
		command_argf(cmd, "--reservation=%s", c->reservation);
	if (c->time_limit_sec) {
		_cleanup_free_ char *t = slurm_time(c->time_limit_sec);

		command_argf(cmd, "--time=%s", t);
	}
	if (se->j.exclude.n) {
		_cleanup_strbuf_ struct strbuf ex = STRBUF_INIT;

		for (size_t i = 0; i < se->j.exclude.n; i++)
			strbuf_addf(&ex, "%s%s", i ? "," : "", se->j.exclude.v[i]);
		command_argf(cmd, "--exclude=%s", ex.buf);
	}
	for (size_t i = 0; i < c->sbatch.n; i++)
		command_arg(cmd, c->sbatch.v[i]);
	command_arg(cmd, script);
}

/* Submit these shards as one array job; each records its job and task. */
static int submit(struct slurm_exec *se, struct shard_entry **es, size_t n)
{
	const struct executor_run *x = se->x;
	_cleanup_(command_release) struct command cmd = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;
	_cleanup_free_ char *script = NULL, *err = NULL;
	unsigned sub = 0;
	unsigned long long job = 0;
	size_t runs = 0;
	char *end;

	if (!n)
		return 0;
	/* submit-N.sh: the first N not used, so every submission's script stays */
	for (;; sub++) {
		_cleanup_free_ char *p = xasprintf("%s/submit-%u.sh", se->jobdir, sub);

		if (access(p, F_OK) < 0)
			break;
	}
	for (size_t i = 0; i < n; i++)
		if (write_seed(se, es[i]) < 0)
			return -1;
	if (!(script = write_script(se, sub, es, n))) {
		engine_emit_text(x->engine, ENGINE_EV_ERROR, "cannot write the job script in %s: %s", se->jobdir, strerror(errno));
		return -1;
	}
	sbatch_command(se, n, script, &cmd);
	if (slurm_cmd(&cmd, &out, &err) < 0) {
		engine_emit_text(x->engine, ENGINE_EV_ERROR, "cannot submit to Slurm: %s", err);
		return -1;
	}
	errno = 0;
	job = strtoull(out.buf ? out.buf : "", &end, 10);
	if (errno || !job || (*end && *end != ';' && *end != '\n')) {
		engine_emit_text(x->engine, ENGINE_EV_ERROR, "sbatch answered '%s', not a job id", out.buf ? out.buf : "");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		es[i]->state = SHARD_QUEUED;
		es[i]->job = job;
		es[i]->task = (unsigned)i;
		es[i]->attempts++;
	}
	save_journal(se);
	for (size_t i = 0; i < n; i++)
		runs += es[i]->runs.n;
	say(se, "job %llu: %zu shard%s of %s (%zu runs)%s", job, n, n == 1 ? "" : "s", x->rs->id, runs,
	    se->j.exclude.n ? ", excluding nodes lab saw fail" : "");
	return 0;
}

/* ---- the shards ---- */

static struct shard_entry *new_entry(struct slurm_exec *se)
{
	struct shard_entry *e;
	unsigned index = 0;

	for (size_t i = 0; i < se->j.n; i++)
		if (se->j.v[i].index >= index)
			index = se->j.v[i].index + 1;
	GROW(se->j.v, se->j.alloc, se->j.n + 1);
	e = &se->j.v[se->j.n++];
	*e = (struct shard_entry){ .index = index, .state = SHARD_NEW, .runs = STRV_INIT };
	return e;
}

/* The runs of a block, as the policy hands them out (none: it is not needed). */
static void take_block(struct slurm_exec *se, const struct shard_block *b, struct strv *runs)
{
	for (size_t k = 0; k < b->n; k++) {
		size_t i;

		while (engine_next(se->x->engine, b->groups[k], &i) == 0)
			strv_push(runs, se->x->rs->runs[i].id);
	}
}

static size_t count_state(const struct slurm_exec *se, enum shard_state st)
{
	size_t n = 0;

	for (size_t i = 0; i < se->j.n; i++)
		n += se->j.v[i].state == st;
	return n;
}

/* New shards from the blocks not taken yet: all of them at once for a
 * fixed plan (balanced onto the slots), a block a shard while slots are
 * free under repeat: auto. */
static void plan_shards(struct slurm_exec *se)
{
	if (!se->seq) {
		struct shard *sh;
		size_t ns;

		if (se->next_block >= se->nblocks)
			return;
		shard_plan(se->blocks + se->next_block, se->nblocks - se->next_block, se->slots, &sh, &ns);
		for (size_t k = 0; k < ns; k++) {
			_cleanup_strv_ struct strv runs = STRV_INIT;

			for (size_t q = 0; q < sh[k].n; q++)
				take_block(se, &se->blocks[se->next_block + sh[k].blocks[q]], &runs);
			if (runs.n) {
				struct shard_entry *e = new_entry(se);

				e->runs = runs;
				runs = (struct strv)STRV_INIT;
			}
		}
		shards_free(sh, ns);
		se->next_block = se->nblocks;
		return;
	}
	while (se->next_block < se->nblocks && count_state(se, SHARD_QUEUED) + count_state(se, SHARD_NEW) < se->slots) {
		_cleanup_strv_ struct strv runs = STRV_INIT;

		take_block(se, &se->blocks[se->next_block++], &runs);
		if (runs.n) {
			struct shard_entry *e = new_entry(se);

			e->runs = runs;
			runs = (struct strv)STRV_INIT;
		}
	}
}

static int submit_new(struct slurm_exec *se)
{
	_cleanup_free_ struct shard_entry **es = xcalloc(se->j.n + 1, sizeof(*es));
	size_t n = 0;

	for (size_t i = 0; i < se->j.n; i++)
		if (se->j.v[i].state == SHARD_NEW)
			es[n++] = &se->j.v[i];
	return submit(se, es, n);
}

/* The shard's runs still pending fail with why. */
static void fail_shard(struct slurm_exec *se, struct shard_entry *e, const char *why)
{
	for (size_t k = 0; k < e->runs.n; k++) {
		ssize_t i = engine_find_run(se->x->rs, e->runs.v[k]);

		if (i >= 0)
			engine_fail_run(se->x->engine, (size_t)i, xstrdup(why));
	}
	e->state = SHARD_FAILED;
}

/* A node that failed a second boot is excluded from later submissions. */
static void note_boot_failure(struct slurm_exec *se, const char *node)
{
	size_t n = 0;

	strv_push(&se->boot_failed, node);
	for (size_t i = 0; i < se->boot_failed.n; i++)
		n += streq(se->boot_failed.v[i], node);
	if (n == 2 && !strv_contains(&se->j.exclude, node)) {
		strv_push(&se->j.exclude, node);
		retry_note(se, "node %s failed two boots: excluded from the rest of the experiment", node);
	}
}

int engine_import_shard(const struct executor_run *x, const char *path, const struct strv *runs, struct strv *boot_failed,
			char **ret_why)
{
	_cleanup_free_ char *tmp = NULL, *id = NULL;
	_cleanup_result_set_ struct result_set *from = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strmap_ struct strmap boots = STRMAP_INIT;
	_cleanup_free_ size_t *done = NULL;
	size_t ndone = 0;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	/* the bundle's <id>/ is unpacked as the folder tmp itself */
	if (bundle_unpack(fd, path, x->o->root, NULL, &tmp, &id, &d) < 0 || !streq(id, x->rs->id) ||
	    store_load_as(tmp, id, id, &from, &d) < 0) {
		*ret_why = xasprintf("its result %s was refused: %s", path, d.n ? d.v[0].msg : "it is of another run");
		tempdir_remove(tmp);
		return -1;
	}
	done = xcalloc(from->n + 1, sizeof(*done));
	for (size_t k = 0; k < from->n; k++) {
		const struct result_run *fr = &from->runs[k];
		ssize_t i = engine_find_run(x->rs, fr->id);

		if (i < 0 || !strv_contains(runs, fr->id) || fr->status == RUN_PENDING)
			continue;
		if (engine_import_run(x->engine, (size_t)i, from, fr, tmp, &boots))
			done[ndone++] = (size_t)i;
		if (boot_failed && fr->status == RUN_FAILED && fr->node && fr->error &&
		    str_startswith(fr->error, "boot failed"))
			strv_push(boot_failed, fr->node);
	}
	/* one journal write and one index transaction a shard, not one a run:
	 * the journal is the whole run's, and a cluster run is thousands */
	if (ndone)
		engine_save_runs(x->engine, done, ndone);
	tempdir_remove(tmp);
	return 1;
}

/* The shard's bundle into the run: only its own pending runs. 1 imported, 0 none there, -1 refused. */
static int import_shard(struct slurm_exec *se, struct shard_entry *e)
{
	const struct executor_run *x = se->x;
	_cleanup_free_ char *sd = shard_dir(se, e->index), *bp = path_join(sd, "result.tar.zst"), *why = NULL;
	_cleanup_strv_ struct strv failed = STRV_INIT;
	int r = engine_import_shard(x, bp, &e->runs, &failed, &why);

	if (r < 0) {
		retry_note(se, "shard %u: not retried: %s", e->index, why);
		fail_shard(se, e, why);
		return -1;
	}
	if (!r)
		return 0;
	for (size_t k = 0; k < failed.n; k++)
		note_boot_failure(se, failed.v[k]);
	/* what the node left pending (it was stopped): its turn comes again */
	for (size_t k = 0; k < e->runs.n; k++) {
		ssize_t i = engine_find_run(x->rs, e->runs.v[k]);

		if (i >= 0 && x->rs->runs[i].status == RUN_PENDING) {
			e->state = SHARD_NEW;
			unlink(bp);
			retry_note(se, "shard %u came back with runs not done: submitted again", e->index);
			return 1;
		}
	}
	e->state = SHARD_DONE;
	return 1;
}

/* Why the node refused the shard (<shard>/error), NULL when it did not. */
static char *node_refusal(const struct slurm_exec *se, const struct shard_entry *e)
{
	_cleanup_free_ char *sd = shard_dir(se, e->index), *p = path_join(sd, "error");
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	if (strbuf_read_file(&sb, p, 4096) < 0 || !sb.buf || !sb.len)
		return NULL;
	for (char *c = sb.buf; *c; c++)
		if (*c == '\n' || *c == '\t' || (unsigned char)*c < 0x20)
			*c = ' ';
	while (sb.len && sb.buf[sb.len - 1] == ' ')
		strbuf_setlen(&sb, sb.len - 1);
	return strbuf_detach(&sb, NULL);
}

/* A task that left the queue: imported, refused by its node, or submitted again. */
static void task_gone(struct slurm_exec *se, struct shard_entry *e, const char *last_node, const char *state,
		      const char *reason)
{
	_cleanup_free_ char *refused = NULL;

	if (import_shard(se, e) != 0)
		return;
	if ((refused = node_refusal(se, e))) {
		_cleanup_free_ char *sd = shard_dir(se, e->index), *p = path_join(sd, "error");

		/* the note first: the runs' journal, saved as they fail, has it */
		retry_note(se, "shard %u: refused by its node, not retried: %s", e->index, refused);
		fail_shard(se, e, refused);
		unlink(p);
		return;
	}
	if (e->attempts > se->c->retries) {
		_cleanup_free_ char *why = xasprintf("its shard %u ended without a result %u times (engine: retries: %u)",
						     e->index, e->attempts, se->c->retries);

		retry_note(se, "shard %u ended without a result on its last attempt: its runs fail", e->index);
		fail_shard(se, e, why);
		return;
	}
	retry_note(se, "shard %u (job %llu task %u%s%s) ended %s%s%s%s without a result: submitted again (attempt %u of %u)",
		   e->index, e->job, e->task, last_node ? ", node " : "", last_node ? last_node : "",
		   state ? state : "(squeue no longer lists it)", reason && !streq(reason, "None") ? " (" : "",
		   reason && !streq(reason, "None") ? reason : "", reason && !streq(reason, "None") ? ")" : "",
		   e->attempts + 1, se->c->retries + 1);
	if (last_node)
		note_boot_failure(se, last_node);
	e->state = SHARD_NEW;
}

/* The last node each queued shard was seen on, and whether it ran. */
struct seen {
	char *node;
	bool running;
};

/* What one poll saw of the queued shards, for its progress line. */
struct poll_tally {
	size_t pending, running;
	struct strbuf why, where;
};

/* Queued shard e as squeue lists it (q): gone, ended, running or pending; seen is what was seen of it before. */
static void poll_one(struct slurm_exec *se, struct shard_entry *e, struct seen *seen, const struct slurm_queue *q,
		     struct poll_tally *pt)
{
	const struct slurm_task *t = NULL;

	if (!slurm_queue_has_task(q, e->job, e->task, &t)) {
		task_gone(se, e, seen->node, NULL, NULL);
		free(seen->node);
		*seen = (struct seen){ 0 };
		return;
	}
	if (t && t->state && !streq(t->state, "PENDING") && !streq(t->state, "RUNNING") &&
	    !streq(t->state, "COMPLETING") && !streq(t->state, "CONFIGURING") && !streq(t->state, "REQUEUED") &&
	    !streq(t->state, "SUSPENDED")) {
		/* ended (COMPLETED, FAILED, CANCELLED, NODE_FAIL, TIMEOUT, ...): squeue keeps it a while */
		if (!seen->node && t->nodes)
			seen->node = xstrdup(t->nodes);
		task_gone(se, e, seen->node, t->state, t->reason);
		free(seen->node);
		*seen = (struct seen){ 0 };
		return;
	}
	if (t && t->state && (streq(t->state, "RUNNING") || streq(t->state, "COMPLETING"))) {
		pt->running++;
		if (t->nodes && (!seen->node || !streq(seen->node, t->nodes))) {
			free(seen->node);
			seen->node = xstrdup(t->nodes);
		}
		strbuf_addf(&pt->where, "%s%u on %s", pt->where.len ? ", " : "", e->index, t->nodes ? t->nodes : "?");
		seen->running = true;
		return;
	}
	pt->pending++;
	if (seen->running) {
		/* it ran and is back in the queue: Slurm requeued it */
		retry_note(se, "shard %u (job %llu task %u) requeued by Slurm after it ran on %s: %s", e->index, e->job,
			   e->task, seen->node ? seen->node : "?", t && t->reason ? t->reason : "?");
		seen->running = false;
	}
	if (t && t->reason && !strstr(pt->why.buf ? pt->why.buf : "", t->reason))
		strbuf_addf(&pt->why, "%s%s", pt->why.len ? ", " : "", t->reason);
}

/* One squeue for all of lab's jobs: progress, requeues, tasks gone. */
static int poll_queue(struct slurm_exec *se, struct seen *seen)
{
	_cleanup_(command_release) struct command cmd = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, jobs = STRBUF_INIT, line = STRBUF_INIT;
	_cleanup_strv_ struct strv ids = STRV_INIT;
	_cleanup_free_ char *err = NULL;
	struct slurm_queue q = { 0 };
	struct poll_tally pt = { 0, 0, STRBUF_INIT, STRBUF_INIT };

	for (size_t i = 0; i < se->j.n; i++)
		if (se->j.v[i].state == SHARD_QUEUED) {
			_cleanup_free_ char *id = xasprintf("%llu", se->j.v[i].job);

			if (!strv_contains(&ids, id)) {
				strv_push(&ids, id);
				strbuf_addf(&jobs, "%s%s", jobs.len ? "," : "", id);
			}
		}
	if (!jobs.len)
		return 0;
	command_init(&cmd, "squeue");
	command_args(&cmd, "--json", NULL);
	command_argf(&cmd, "--jobs=%s", jobs.buf); /* 22.05 lists every job with --json anyway */
	/* a pending array's task list whole, never cut with "..." */
	command_env(&cmd, "SLURM_BITSTR_LEN", "0");
	if (slurm_cmd(&cmd, &out, &err) < 0 || slurm_queue_parse(out.buf ? out.buf : "", out.len, &q, &err) < 0) {
		/* a controller that does not answer is no empty queue: nothing is concluded this time */
		engine_emit_text(se->x->engine, ENGINE_EV_WARNING, "slurm: %s", err ? err : "squeue failed");
		return -1;
	}
	for (size_t i = 0; i < se->j.n; i++)
		if (se->j.v[i].state == SHARD_QUEUED)
			poll_one(se, &se->j.v[i], &seen[i], &q, &pt);
	slurm_queue_release(&q);
	strbuf_addf(&line, "%zu pending%s%s%s, %zu running%s%s%s, %zu done, %zu failed", pt.pending,
		    pt.why.len ? " (" : "", pt.why.len ? pt.why.buf : "", pt.why.len ? ")" : "", pt.running,
		    pt.where.len ? " (shard " : "", pt.where.len ? pt.where.buf : "", pt.where.len ? ")" : "",
		    count_state(se, SHARD_DONE), count_state(se, SHARD_FAILED));
	strbuf_release(&pt.why);
	strbuf_release(&pt.where);
	if (!se->said || !streq(se->said, line.buf)) {
		free(se->said);
		se->said = xstrdup(line.buf);
		say(se, "%s", line.buf);
	}
	return 0;
}

static void cancel_all(struct slurm_exec *se)
{
	_cleanup_(command_release) struct command cmd = { 0 };
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT, ids = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;
	size_t n = 0;

	command_init(&cmd, "scancel");
	for (size_t i = 0; i < se->j.n; i++)
		if (se->j.v[i].state == SHARD_QUEUED) {
			_cleanup_free_ char *id = xasprintf("%llu", se->j.v[i].job);

			if (!strv_contains(&cmd.argv, id)) {
				command_arg(&cmd, id);
				strbuf_addf(&ids, "%s%s", ids.len ? " " : "", id);
				n++;
			}
			/* resubmitted by --resume as new, not counted as a retry */
			se->j.v[i].state = SHARD_NEW;
			se->j.v[i].attempts--;
		}
	save_journal(se);
	if (!n)
		return;
	if (slurm_cmd(&cmd, &out, &err) < 0)
		engine_emit_text(se->x->engine, ENGINE_EV_WARNING, "slurm: scancel %s: %s", ids.buf, err);
	else
		say(se, "cancelled job%s %s", n == 1 ? "" : "s", ids.buf);
}

/* Sleep up to sec seconds, less when a signal asks to stop. */
static void nap(unsigned sec)
{
	for (unsigned k = 0; k < sec * 10 && !engine_cluster_cancel; k++) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
}

/* The journal of a run lab resumes: its shards, their jobs; runs already in the run leave them. */
static int load_journal(struct slurm_exec *se)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *err = NULL;

	if (strbuf_read_file(&sb, se->journal, 64 << 20) < 0)
		return 0;
	if (shard_journal_parse(se->journal, sb.buf ? sb.buf : "", sb.len, &se->j, &err) < 0) {
		engine_emit_text(se->x->engine, ENGINE_EV_ERROR, "%s", err);
		return -1;
	}
	for (size_t i = 0; i < se->j.retries.n; i++)
		engine_note_cluster(se->x->engine, se->j.retries.v[i], true);
	for (size_t i = 0; i < se->j.n; i++) {
		struct shard_entry *e = &se->j.v[i];
		bool pending = false;

		for (size_t k = 0; k < e->runs.n; k++) {
			ssize_t r = engine_find_run(se->x->rs, e->runs.v[k]);

			if (r >= 0 && se->x->rs->runs[r].status == RUN_PENDING) {
				pending = true;
				engine_mark_issued(se->x->engine, (size_t)r); /* its shard has it */
			}
		}
		if (!pending && e->state != SHARD_FAILED)
			e->state = SHARD_DONE;
		else if (pending && e->state == SHARD_DONE)
			e->state = SHARD_NEW;
	}
	return 0;
}

/* The blocks of the groups no recorded shard holds. */
static void make_blocks(struct slurm_exec *se)
{
	const struct executor_run *x = se->x;
	const char **hosts = xcalloc(x->ngroups + 1, sizeof(char *));
	struct run_group *gs = xcalloc(x->ngroups + 1, sizeof(*gs));
	size_t *map = xcalloc(x->ngroups + 1, sizeof(size_t)), n = 0;

	for (size_t g = 0; g < x->ngroups; g++) {
		const struct run_group *rg = &x->groups[g];
		const struct plan_run *pr = rg->n ? engine_plan_run(x->engine, x->rs->runs[rg->runs[0]].id) : NULL;

		if (!rg->n || engine_issued(x->engine, rg->runs[0]))
			continue;
		gs[n] = *rg;
		hosts[n] = pr ? pr->host : "";
		map[n++] = g;
	}
	shard_blocks(gs, n, hosts, &se->blocks, &se->nblocks);
	for (size_t b = 0; b < se->nblocks; b++)
		for (size_t k = 0; k < se->blocks[b].n; k++)
			se->blocks[b].groups[k] = map[se->blocks[b].groups[k]];
	free(hosts);
	free(gs);
	free(map);
}

int engine_cluster_check(const struct executor_run *x, bool ask_slurm, char **ret_err)
{
	const struct spec_engine *c = x->o->cluster;
	_cleanup_free_ char *err = NULL;

	if (!c->spool || !*c->spool) {
		*ret_err = xasprintf("engine: slurm needs spool: in %s (a folder the head and every node see)",
				     x->s->path);
		return -1;
	}
	/* the cluster's nodes are the hosts: a bare-metal host's kexec would look like a node
	 * failure to Slurm, and another hypervisor is not the node's to drive */
	for (size_t i = 0; i < x->e->hosts.n; i++) {
		const char *h = x->e->hosts.v[i].name;
		const struct spec_host *lh = engine_find_host(x->s, h, HOST_LIBVIRT);

		if (engine_find_host(x->s, h, HOST_SSH) || (lh && lh->address)) {
			*ret_err = xasprintf("experiment %s runs on %s host %s: with engine: slurm the cluster's nodes "
					     "are the hosts (bare-metal and qemu+ssh hosts run with 'lab run --engine local')",
					     x->e->name, lh ? "hypervisor" : "bare-metal", h);
			return -1;
		}
	}
	if (ask_slurm && partition_nodes(c, &err) < 0) {
		*ret_err = xasprintf("Slurm cannot be reached (nothing was submitted): %s", err);
		return -1;
	}
	return 0;
}

static int execute_slurm(const struct executor_run *x)
{
	const struct spec_engine *c = x->o->cluster;
	struct slurm_exec se = { .x = x, .c = c, .seq = x->e->repeat_auto && !(x->o && x->o->policy) };
	_cleanup_free_ char *err = NULL;
	struct seen *seen = NULL;
	size_t seen_alloc = 0;
	int nodes, ret = -1;

	if (engine_cluster_check(x, false, &err) < 0) {
		engine_emit_text(x->engine, ENGINE_EV_ERROR, "%s", err);
		return -1;
	}
	if ((nodes = partition_nodes(c, &err)) < 0) {
		engine_emit_text(x->engine, ENGINE_EV_ERROR, "Slurm cannot be reached (nothing was submitted): %s", err);
		return -1;
	}
	se.slots = c->max_tasks ? c->max_tasks : (unsigned)nodes;
	se.jobdir = xasprintf("%s/jobs/%s", c->spool, x->rs->id);
	se.journal = path_join(x->dir, "slurm.json");
	se.self = c->lab ? xstrdup(c->lab) : x->o->self ? xstrdup(x->o->self) : realpath("/proc/self/exe", NULL);
	if (!se.self)
		se.self = xstrdup("lab");
	if (load_journal(&se) < 0 || publish(&se) < 0)
		goto out;
	make_blocks(&se);
	say(&se, "%zu runs in %zu comparison block%s, shards on up to %u node%s at a time (partition %s: %d node%s); "
		 "spool %s", x->total, se.nblocks, se.nblocks == 1 ? "" : "s", se.slots, se.slots == 1 ? "" : "s",
	    c->partition ? c->partition : "default", nodes, nodes == 1 ? "" : "s", c->spool);
	engine_cluster_active = 1;
	for (;;) {
		size_t queued;

		if (engine_cluster_cancel) {
			cancel_all(&se);
			engine_emit_text(x->engine, ENGINE_EV_ERROR, "interrupted: lab's jobs were cancelled, every finished shard "
					 "is kept ('lab run --resume %s' goes on)", x->rs->id);
			goto out;
		}
		plan_shards(&se);
		/* the error went out: the run stops, and what is queued is cancelled at out */
		if (submit_new(&se) < 0)
			goto out;
		GROW(seen, seen_alloc, se.j.n + 1);
		queued = count_state(&se, SHARD_QUEUED);
		if (!queued && se.next_block >= se.nblocks && !count_state(&se, SHARD_NEW))
			break;
		engine_set_running(x->engine, (unsigned)queued);
		nap(c->poll_sec ? c->poll_sec : 15);
		/* a finished shard shows first as its bundle in the spool */
		for (size_t i = 0; i < se.j.n; i++)
			if (se.j.v[i].state == SHARD_QUEUED)
				import_shard(&se, &se.j.v[i]);
		poll_queue(&se, seen);
		save_journal(&se);
	}
	ret = 0;
out:
	engine_cluster_active = 0;
	if (ret < 0 && !engine_cluster_cancel && count_state(&se, SHARD_QUEUED))
		cancel_all(&se); /* nothing half-submitted stays behind lab's back */
	save_journal(&se);
	for (size_t i = 0; seen && i < se.j.n; i++)
		free(seen[i].node);
	free(seen);
	shard_blocks_free(se.blocks, se.nblocks);
	shard_journal_release(&se.j);
	shard_spec_release(&se.spec);
	strv_release(&se.boot_failed);
	free(se.jobdir);
	free(se.journal);
	free(se.self);
	free(se.said);
	return ret;
}

const struct executor_ops executor_slurm = { .name = "slurm", .execute = execute_slurm };
