/* SPDX-License-Identifier: MIT */
/*
 * The Slurm executor (lab/engine/exec-slurm.c) driven whole, without a
 * cluster: a command hook plays Slurm and its nodes. sinfo lists two
 * nodes; sbatch records its argv, reads the job script it is handed (array
 * task -> shard) and answers a job id; squeue --json answers a document
 * shaped like tests/data/squeue/ from the fake queue; a fake node ends a
 * task as `lab shard` does (the shard's run folder resumed, its runs
 * ended, the folder bundled to shard-N/result.tar.zst) or refuses it
 * (shard-N/error). Each test is a story told at the squeue polls (engine:
 * poll: 1s, a few polls each): the happy path, a task lost, a node's
 * refusal, a node excluded after two failed boots, a requeue, a resumed
 * run, Slurm unreachable, Ctrl-C, sbatch refusing a submission.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "unit.h"
#include "store/bundle.h"
#include "engine/catalogue-tar.h"
#include "engine/engine-priv.h"
#include "store/index.h"
#include "engine/shard.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"

#define MAX_JOBS 8
#define MAX_TASKS 8

/* ---- the fake cluster ---- */

enum task_state { T_PENDING, T_RUNNING, T_ENDED, T_GONE };

struct ftask {
	unsigned shard;
	enum task_state st;
	bool split;                /* it ran once: its own record from then on, as Slurm splits an array */
	unsigned long long own_id; /* that record's job id */
	char node[16], state[24], reason[32];
};

struct fjob {
	unsigned long long id;
	struct ftask t[MAX_TASKS];
	size_t n;
};

struct fake;
/* What the cluster does at squeue poll `poll` (1-based): before lab's answer is made, and after it. */
typedef void (*story_fn)(struct fake *f, size_t poll, bool answered);

struct fake {
	char *jobdir, *run_id;
	struct fjob jobs[MAX_JOBS];
	size_t njobs;
	unsigned long long next_job, next_own;
	struct strv sbatch[MAX_JOBS]; /* each submission's argv */
	struct strv scripts;          /* and its job script */
	size_t nsbatch;
	struct strv scancel; /* the last scancel's argv */
	size_t nscancel, nsqueue, nsinfo;
	char *squeue_jobs; /* the last squeue's --jobs= */
	bool down;         /* the controller does not answer */
	size_t refuse_sbatch; /* this sbatch (1-based) is refused, 0: none */
	story_fn story;
};

static struct ftask *task_of(struct fake *f, unsigned shard)
{
	for (size_t j = f->njobs; j-- > 0;)
		for (size_t k = 0; k < f->jobs[j].n; k++)
			if (f->jobs[j].t[k].shard == shard)
				return &f->jobs[j].t[k];
	fail_msg("shard %u was never submitted", shard);
	return NULL;
}

static void run_on(struct fake *f, unsigned shard, const char *node)
{
	struct ftask *t = task_of(f, shard);

	t->st = T_RUNNING;
	if (!t->split) {
		t->split = true;
		t->own_id = f->next_own++;
	}
	snprintf(t->node, sizeof(t->node), "%s", node);
	snprintf(t->reason, sizeof(t->reason), "None");
}

/* Back in the queue after it ran (a node went down: Slurm requeues it). */
static void requeue(struct fake *f, unsigned shard, const char *reason)
{
	struct ftask *t = task_of(f, shard);

	t->st = T_PENDING;
	t->node[0] = 0;
	snprintf(t->reason, sizeof(t->reason), "%s", reason);
}

/* Ended, still listed (MinJobAge) as `state`. */
static void end_as(struct fake *f, unsigned shard, const char *state, const char *reason)
{
	struct ftask *t = task_of(f, shard);

	t->st = T_ENDED;
	snprintf(t->state, sizeof(t->state), "%s", state);
	snprintf(t->reason, sizeof(t->reason), "%s", reason);
}

static void vanish(struct fake *f, unsigned shard)
{
	task_of(f, shard)->st = T_GONE;
}

static char *shard_path(const struct fake *f, unsigned shard, const char *name)
{
	return xasprintf("%s/shard-%u/%s", f->jobdir, shard, name);
}

/*
 * The node's `lab shard`: the shard's run folder resumed, its pending runs
 * ended (ok with a metric, or failed with `error`; the first `leave` stay
 * pending, as a task stopped half way leaves them), a boot per variant
 * numbered from 1 as a node numbers them, then the folder bundled.
 */
static void node_finish(struct fake *f, unsigned shard, const char *node, const char *error, size_t leave)
{
	_cleanup_free_ char *work = xasprintf("%s/shard-%u/work/%s", f->jobdir, shard, f->run_id);
	_cleanup_free_ char *part = shard_path(f, shard, "result.tar.zst.part");
	_cleanup_free_ char *bundle = shard_path(f, shard, "result.tar.zst");
	_cleanup_result_set_ struct result_set *rs = NULL;
	struct diags d = { 0 };
	unsigned pos[2] = { 0, 0 };

	if (store_load(work, &rs, &d) < 0)
		fail_msg("node %s: shard %u has no run folder %s: %s", node, shard, work, d.n ? d.v[0].msg : "?");
	for (size_t i = 0; i < rs->n; i++) {
		struct result_run *r = &rs->runs[i];
		size_t v = streq(r->variant, "base") ? 0 : 1;

		if (r->status != RUN_PENDING)
			continue;
		if (leave) {
			leave--;
			continue;
		}
		r->status = error ? RUN_FAILED : RUN_OK;
		r->error = error ? xstrdup(error) : NULL;
		r->node = xstrdup(node);
		r->guest = xasprintf("lab-%s-0", r->variant);
		if (!error) {
			_cleanup_free_ char *rd = xasprintf("%s/runs/%s", work, r->id), *mp = path_join(rd, "metrics");

			r->release = xasprintf("6.1.0-%s", r->variant);
			r->boot = xasprintf("e.b%zu", v + 1);
			r->boot_pos = ++pos[v];
			assert_int_equal(path_mkdir_p(rd, 0755), 0);
			assert_int_equal(fs_write_atomic(mp, "ops 123.5\n", 10, 0644), 0);
		}
	}
	if (store_save(work, rs, &d) < 0 || bundle_write(work, NULL, 0, part, -1, &d) < 0)
		fail_msg("node %s: shard %u: %s", node, shard, d.n ? d.v[0].msg : "?");
	assert_int_equal(rename(part, bundle), 0);
	diags_release(&d);
}

/* What `lab shard` leaves when it will not run the shard. */
static void node_refuse(struct fake *f, unsigned shard, const char *line)
{
	_cleanup_free_ char *p = shard_path(f, shard, "error");

	assert_int_equal(fs_write_atomic(p, line, strlen(line), 0644), 0);
}

static const char *arg_value(const struct strv *argv, const char *prefix)
{
	for (size_t i = 0; i < argv->n; i++)
		if (str_startswith(argv->v[i], prefix))
			return argv->v[i] + strlen(prefix);
	return NULL;
}

/* sbatch --parsable ... SCRIPT: the script's "N) shard=M ;;" lines are the array. */
static int fake_sbatch(struct fake *f, struct command *c)
{
	const char *script = c->argv.v[c->argv.n - 1];
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct fjob *j;

	assert_true(f->nsbatch < MAX_JOBS && f->njobs < MAX_JOBS);
	for (size_t i = 0; i < c->argv.n; i++)
		strv_push(&f->sbatch[f->nsbatch], c->argv.v[i]);
	f->nsbatch++;
	assert_int_equal(strbuf_read_file(&sb, script, 1 << 16), 0);
	if (f->nsbatch == f->refuse_sbatch) {
		strbuf_addstr(c->err, "sbatch: error: Batch job submission failed: Invalid partition name specified\n");
		return 1;
	}
	assert_int_equal(access(script, X_OK), 0);
	strv_push(&f->scripts, sb.buf);
	j = &f->jobs[f->njobs++];
	*j = (struct fjob){ .id = f->next_job++ };
	for (const char *p = sb.buf; (p = strstr(p, ") shard=")); p++) {
		const char *q = p;
		unsigned long task, shard;
		char *end;

		while (q > sb.buf && q[-1] >= '0' && q[-1] <= '9')
			q--;
		task = strtoul(q, NULL, 10);
		shard = strtoul(p + 8, &end, 10);
		assert_int_equal(task, j->n);
		assert_true(j->n < MAX_TASKS);
		j->t[j->n++] = (struct ftask){ .shard = (unsigned)shard, .st = T_PENDING, .reason = "None" };
	}
	assert_true(j->n > 0);
	strbuf_addf(c->out, "%llu\n", j->id);
	return 0;
}

static void add_record(struct strbuf *sb, unsigned long long job_id, unsigned long long array_job, long task,
		       const char *tasks, const char *state, const char *reason, const char *nodes)
{
	_cleanup_free_ char *task_id = task < 0 ? xstrdup("null") : xasprintf("%ld", task);

	if (sb->buf[sb->len - 1] == '}')
		strbuf_addstr(sb, ",");
	strbuf_addf(sb,
		    "\n    {\n      \"account\": \"\",\n      \"array_job_id\": %llu,\n      \"array_task_id\": %s,\n"
		    "      \"array_max_tasks\": 0,\n      \"array_task_string\": \"%s\",\n      \"batch_flag\": true,\n"
		    "      \"batch_host\": \"%s\",\n      \"cluster\": \"lab-test\",\n      \"comment\": \"\",\n"
		    "      \"job_id\": %llu,\n      \"job_state\": \"%s\",\n      \"name\": \"wrap\",\n"
		    "      \"nodes\": \"%s\",\n      \"partition\": \"batch\",\n      \"requeue\": true,\n"
		    "      \"state_reason\": \"%s\",\n      \"user_name\": \"lab\"\n    }",
		    array_job, task_id, tasks, nodes, job_id, state, nodes, reason);
}

/* squeue --json: every job of the cluster (22.05 lists them all), pending tasks never run as one record. */
static int fake_squeue(struct fake *f, struct command *c)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	assert_true(strv_contains(&c->argv, "--json"));
	assert_true(strv_contains(&c->env, "SLURM_BITSTR_LEN=0"));
	free(f->squeue_jobs);
	f->squeue_jobs = xstrdup(arg_value(&c->argv, "--jobs=") ? arg_value(&c->argv, "--jobs=") : "");
	f->nsqueue++;
	if (f->story)
		f->story(f, f->nsqueue, false);
	strbuf_addstr(&sb, "{\n  \"meta\": {\n    \"plugin\": {\n      \"type\": \"openapi\\/v0.0.38\",\n"
			   "      \"name\": \"Slurm OpenAPI v0.0.38\"\n    },\n    \"Slurm\": {\n      \"version\": {\n"
			   "        \"major\": 22,\n        \"micro\": 8,\n        \"minor\": 5\n      },\n"
			   "      \"release\": \"22.05.8\"\n    }\n  },\n  \"errors\": [\n  ],\n  \"jobs\": [");
	for (size_t j = 0; j < f->njobs; j++) {
		const struct fjob *jb = &f->jobs[j];
		_cleanup_strbuf_ struct strbuf unsplit = STRBUF_INIT;

		for (size_t k = 0; k < jb->n; k++) {
			const struct ftask *t = &jb->t[k];

			if (t->st == T_GONE)
				continue;
			if (t->split)
				add_record(&sb, t->own_id, jb->id, (long)k, "",
					   t->st == T_RUNNING ? "RUNNING" : t->st == T_ENDED ? t->state : "PENDING",
					   t->reason, t->st == T_PENDING ? "" : t->node);
			else if (t->st == T_PENDING)
				strbuf_addf(&unsplit, "%s%zu", unsplit.len ? "," : "", k);
		}
		if (unsplit.len)
			add_record(&sb, jb->id, jb->id, -1, unsplit.buf, "PENDING", "None", "");
	}
	strbuf_addstr(&sb, "\n  ]\n}\n");
	strbuf_addstr(c->out, sb.buf);
	if (f->story)
		f->story(f, f->nsqueue, true);
	return 0;
}

static int fake_hook(struct command *c, void *userdata)
{
	struct fake *f = userdata;
	const char *prog = c->argv.v[0];

	assert_non_null(c->out);
	if (streq(prog, "sinfo")) {
		f->nsinfo++;
		if (f->down) {
			strbuf_addstr(c->err,
				      "slurm_load_partitions: Unable to contact slurm controller (connect failure)\n");
			return 1;
		}
		strbuf_addstr(c->out, "n1\nn2\n");
		return 0;
	}
	if (streq(prog, "sbatch"))
		return fake_sbatch(f, c);
	if (streq(prog, "squeue"))
		return fake_squeue(f, c);
	if (streq(prog, "scancel")) {
		f->nscancel++;
		strv_release(&f->scancel);
		for (size_t i = 0; i < c->argv.n; i++)
			strv_push(&f->scancel, c->argv.v[i]);
		for (size_t j = 0; j < f->njobs; j++) {
			char id[32];

			snprintf(id, sizeof(id), "%llu", f->jobs[j].id);
			if (strv_contains(&c->argv, id))
				for (size_t k = 0; k < f->jobs[j].n; k++)
					f->jobs[j].t[k].st = T_GONE;
		}
		return 0;
	}
	fail_msg("the executor ran '%s'", prog);
	return 127;
}

/* ---- the head ---- */

/* Experiment e: base and patched, repeat 2: four runs in two comparison blocks (plan boots 1 and 2). */
struct tenv {
	char *tmp, *root, *spool, *dir, *id, *yaml;
	struct spec *s;
	const struct spec_experiment *e;
	struct plan *p;
	struct result_set *rs;
	struct strv variants;
	struct kartifact arts[2];
	struct image_artifact img;
	struct engine_opts o;
	struct engine x;
	struct strv errors, warnings, notes;
	struct fake f;
};

static void on_event(void *userdata, const struct engine_event *ev)
{
	struct tenv *t = userdata;

	if (ev->type == ENGINE_EV_ERROR)
		strv_push(&t->errors, ev->text);
	else if (ev->type == ENGINE_EV_WARNING)
		strv_push(&t->warnings, ev->text);
	else if (ev->type == ENGINE_EV_NOTE)
		strv_push(&t->notes, ev->text);
	else if (ev->type == ENGINE_EV_DIAGS)
		for (size_t i = 0; i < ev->diags->n; i++)
			strv_push(&t->errors, ev->diags->v[i].msg);
	if (getenv("TEST_EXEC_SLURM_VERBOSE") && ev->text)
		print_message("event %d: %s\n", (int)ev->type, ev->text);
}

static void write_file(const char *dir, const char *name, const char *text)
{
	_cleanup_free_ char *p = path_join(dir, name), *parent = path_dirname(p);

	assert_int_equal(path_mkdir_p(parent, 0755), 0);
	assert_int_equal(fs_write_atomic(p, text, strlen(text), 0644), 0);
}

/* The engine as lab run leaves it for its executor; `engine` the engine: section's lines past spool, poll and lab. */
static void tenv_init(struct tenv *t, const char *engine)
{
	static const struct spec_load_opts memonly = { .no_include = true, .no_filesystem = true };
	static const char *const keys[] = { "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
					    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210" };
	_cleanup_strv_ struct strv only = STRV_INIT;
	_cleanup_free_ char *cat = NULL, *tarp = NULL, *sum = NULL;
	struct diags d = { 0 };

	memset(t, 0, sizeof(*t));
	t->tmp = xstrdup("/tmp/lab-exec-slurm-XXXXXX");
	assert_non_null(mkdtemp(t->tmp));
	t->root = path_join(t->tmp, "results");
	t->spool = path_join(t->tmp, "spool");
	assert_int_equal(path_mkdir_p(t->root, 0755), 0);
	assert_int_equal(path_mkdir_p(t->spool, 0755), 0);
	t->yaml = xasprintf("version: 1\n"
			    "kernels:\n"
			    "  base: {}\n"
			    "  patched: {from: base, patches: [x.patch]}\n"
			    "topologies: {t: {memory: 1G}}\n"
			    "images: {i: {recipe: r}}\n"
			    "engine:\n"
			    "  type: slurm\n"
			    "  spool: %s\n"
			    "  poll: 1s\n"
			    "  lab: /opt/lab/bin/lab\n"
			    "%s"
			    "experiments:\n"
			    "  e: {kernels: [base, patched], topology: t, image: i, repeat: 2, workloads: [w]}\n",
			    t->spool, engine ? engine : "");
	if (spec_load_buffer("lab.yaml", t->yaml, strlen(t->yaml), &memonly, &t->s, &d) < 0)
		fail_msg("lab.yaml: %s", d.n ? d.v[0].msg : "?");
	assert_non_null(t->e = spec_find_experiment(t->s, "e"));
	strv_push(&only, "e");
	assert_int_equal(plan_build(t->s, &only, &t->p, &d), 0);
	assert_int_equal(t->p->n, 4);

	/* the run folder: every run pending, saved and indexed, its lab.yaml and catalogue archive */
	assert_int_equal(store_create(t->root, &t->id, &d), 0);
	t->dir = path_join(t->root, t->id);
	t->rs = result_set_new(t->id, "e");
	spec_experiment_variants(t->s, t->e, &t->variants);
	for (size_t i = 0; i < t->variants.n; i++)
		strv_push(&t->rs->variants, t->variants.v[i]);
	for (size_t i = 0; i < t->p->n; i++) {
		const struct plan_run *pr = &t->p->runs[i];
		_cleanup_free_ char *g = plan_run_group(pr);

		result_add_run(t->rs, pr->id, pr->kernel, g, pr->job, pr->repeat);
	}
	sum = index_verdict_summary(t->rs);
	assert_int_equal(store_save(t->dir, t->rs, &d), 0);
	assert_int_equal(index_put(t->root, t->rs, sum, &d), 0);
	write_file(t->dir, "lab.yaml", t->yaml);
	cat = path_join(t->tmp, "catalogue");
	write_file(cat, "w/run", "#!/bin/sh\necho ops 1\n");
	tarp = path_join(t->dir, "workloads.tar");
	assert_int_equal(catalogue_archive(cat, tarp, &d), 0);

	/* built kernels and image: flat folders for the spool */
	assert_int_equal(t->variants.n, 2);
	for (size_t i = 0; i < 2; i++) {
		t->arts[i].name = xstrdup(t->variants.v[i]);
		t->arts[i].key = xstrdup(keys[i]);
		t->arts[i].dir = xasprintf("%s/kernel-%s", t->tmp, t->variants.v[i]);
		write_file(t->arts[i].dir, "bzImage", t->variants.v[i]);
		write_file(t->arts[i].dir, "meta.json", "{}\n");
	}
	t->img.id = xstrdup("1111111111111111111111111111111111111111111111111111111111111111");
	t->img.dir = path_join(t->tmp, "image");
	write_file(t->img.dir, "disk.qcow2", "qcow2");
	write_file(t->img.dir, "meta.json", "{}\n");

	t->f = (struct fake){ .jobdir = xasprintf("%s/jobs/%s", t->spool, t->id), .run_id = xstrdup(t->id),
			      .next_job = 100, .next_own = 1000 };
	t->o = (struct engine_opts){ .s = t->s, .root = t->root, .cluster = &t->s->engine, .event = on_event,
				     .userdata = t };
	t->x = (struct engine){ .o = &t->o, .s = t->s, .e = t->e, .p = t->p, .rs = t->rs, .dir = t->dir,
				.variants = &t->variants, .arts = t->arts, .img = &t->img };
	engine_cluster_cancel = 0;
	command_set_hook(fake_hook, &t->f);
	diags_release(&d);
}

/* As the engine's execute(): groups and policy from the result set, then the executor. */
static int tenv_execute(struct tenv *t)
{
	struct executor_run er;

	engine_sched_init(&t->x);
	engine_make_groups(&t->x);
	for (size_t i = 0; i < t->rs->n; i++)
		t->x.prog.total += t->rs->runs[i].status == RUN_PENDING;
	engine_executor_run(&t->x, &er);
	return executor_slurm.execute(&er);
}

static void assert_lines(const struct strv *got, const char *const *want, size_t n)
{
	for (size_t i = 0; i < got->n && i < n; i++)
		assert_string_equal(got->v[i], want[i]);
	assert_int_equal(got->n, n);
}

static void tenv_release(struct tenv *t)
{
	command_set_hook(NULL, NULL);
	engine_cluster_cancel = 0;
	/* no journal or index write failed */
	assert_lines(&t->warnings, NULL, 0);
	assert_int_equal(engine_cluster_active, 0);
	engine_release(&t->x);
	for (size_t i = 0; i < 2; i++) {
		free(t->arts[i].name);
		free(t->arts[i].key);
		free(t->arts[i].dir);
	}
	free(t->img.id);
	free(t->img.dir);
	for (size_t i = 0; i < MAX_JOBS; i++)
		strv_release(&t->f.sbatch[i]);
	strv_release(&t->f.scripts);
	strv_release(&t->f.scancel);
	free(t->f.squeue_jobs);
	free(t->f.jobdir);
	free(t->f.run_id);
	strv_release(&t->errors);
	strv_release(&t->warnings);
	strv_release(&t->notes);
	strv_release(&t->variants);
	result_set_free(t->rs);
	plan_free(t->p);
	spec_free(t->s);
	fs_remove_tree(t->tmp);
	free(t->tmp);
	free(t->root);
	free(t->spool);
	free(t->dir);
	free(t->id);
	free(t->yaml);
}

static void read_journal(const struct tenv *t, struct shard_journal *j)
{
	_cleanup_free_ char *p = path_join(t->dir, "slurm.json"), *err = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	memset(j, 0, sizeof(*j));
	assert_int_equal(strbuf_read_file(&sb, p, 1 << 20), 0);
	if (shard_journal_parse(p, sb.buf, sb.len, j, &err) < 0)
		fail_msg("%s", err);
}

static void assert_entry(const struct shard_entry *e, unsigned index, enum shard_state st, unsigned long long job,
			 unsigned task, unsigned attempts)
{
	assert_int_equal(e->index, index);
	if (e->state != st)
		fail_msg("shard %u is %s, not %s", e->index, shard_state_name(e->state), shard_state_name(st));
	assert_int_equal(e->job, job);
	assert_int_equal(e->task, task);
	assert_int_equal(e->attempts, attempts);
	assert_int_equal(e->runs.n, 2);
}

static const struct result_run *run_named(const struct tenv *t, const char *id)
{
	ssize_t i = engine_find_run(t->rs, id);

	assert_true(i >= 0);
	return &t->rs->runs[i];
}

/* Every run of the shard ended ok on `node`, its metric read back. */
static void assert_shard_ok(const struct tenv *t, const struct shard_entry *e, const char *node)
{
	for (size_t k = 0; k < e->runs.n; k++) {
		const struct result_run *r = run_named(t, e->runs.v[k]);
		_cleanup_free_ char *release = xasprintf("6.1.0-%s", r->variant);

		if (r->status != RUN_OK)
			fail_msg("run %s is not ok: %s", r->id, r->error ? r->error : "(no error)");
		assert_string_equal(r->node, node);
		assert_string_equal(r->release, release);
		assert_non_null(r->boot);
		assert_int_equal(r->nm, 1);
	}
}

static void assert_shard_failed(const struct tenv *t, const struct shard_entry *e, const char *error)
{
	for (size_t k = 0; k < e->runs.n; k++) {
		const struct result_run *r = run_named(t, e->runs.v[k]);

		assert_int_equal(r->status, RUN_FAILED);
		assert_string_equal(r->error, error);
	}
}

static void assert_all_pending(const struct tenv *t)
{
	for (size_t i = 0; i < t->rs->n; i++)
		assert_int_equal(t->rs->runs[i].status, RUN_PENDING);
}

/* The same runs in the journal on disk as in memory. */
static void assert_saved(const struct tenv *t)
{
	_cleanup_result_set_ struct result_set *back = NULL;
	struct diags d = { 0 };

	if (store_load(t->dir, &back, &d) < 0)
		fail_msg("%s: %s", t->dir, d.n ? d.v[0].msg : "?");
	assert_int_equal(back->n, t->rs->n);
	for (size_t i = 0; i < back->n; i++) {
		assert_string_equal(back->runs[i].id, t->rs->runs[i].id);
		assert_int_equal(back->runs[i].status, t->rs->runs[i].status);
		assert_string_equal(back->runs[i].node ? back->runs[i].node : "-",
				    t->rs->runs[i].node ? t->rs->runs[i].node : "-");
	}
	diags_release(&d);
}

/* ---- the stories ---- */

/* Both tasks run at the first poll, one on each node, and their bundles are there before the next. */
static void story_happy(struct fake *f, size_t poll, bool answered)
{
	if (poll == 1 && !answered) {
		run_on(f, 0, "n1");
		run_on(f, 1, "n2");
	} else if (poll == 1) {
		node_finish(f, 0, "n1", NULL, 0);
		node_finish(f, 1, "n2", NULL, 0);
		end_as(f, 0, "COMPLETED", "None");
		end_as(f, 1, "COMPLETED", "None");
	} else {
		fail_msg("squeue asked again at poll %zu", poll);
	}
}

static void test_happy_path(void **state)
{
	struct tenv t;
	struct shard_journal j;
	_cleanup_free_ char *name = NULL, *comment = NULL, *output = NULL, *script = NULL, *exec = NULL;

	(void)state;
	tenv_init(&t, "  partition: batch\n"
		      "  constraint: \"skylake&numa2\"\n"
		      "  time: 26h\n"
		      "  sbatch: [--gres=gpu:1, --mem=0]\n");
	t.f.story = story_happy;
	assert_int_equal(tenv_execute(&t), 0);
	assert_lines(&t.errors, NULL, 0);
	assert_lines(&t.warnings, NULL, 0);

	/* one array job of both shards, with every engine: option */
	assert_int_equal(t.f.nsinfo, 1);
	assert_int_equal(t.f.nsbatch, 1);
	name = xasprintf("--job-name=lab:e:%s", t.id);
	comment = xasprintf("--comment=lab run %s", t.id);
	output = xasprintf("--output=%s/slurm-%%A_%%a.out", t.f.jobdir);
	script = xasprintf("%s/submit-0.sh", t.f.jobdir);
	{
		const char *const want[] = { "sbatch", "--parsable", "--exclusive", "--requeue", name, comment,
					     "--array=0-1", output, "--partition=batch", "--constraint=skylake&numa2",
					     "--time=1-02:00:00", "--gres=gpu:1", "--mem=0", script };

		assert_lines(&t.f.sbatch[0], want, ELEMENTSOF(want));
	}
	/* the script maps the array's tasks to the shards and runs lab on the node */
	assert_non_null(
		strstr(t.f.scripts.v[0], "case \"${SLURM_ARRAY_TASK_ID:-}\" in\n0) shard=0 ;;\n1) shard=1 ;;\n*)"));
	exec = xasprintf("\nexec /opt/lab/bin/lab shard %s \"$shard\"\n", t.f.jobdir);
	assert_non_null(strstr(t.f.scripts.v[0], exec));
	assert_int_equal(t.f.nsqueue, 1);
	assert_string_equal(t.f.squeue_jobs, "100");

	/* both bundles imported: every run ok on its shard's node, the boots numbered here */
	read_journal(&t, &j);
	assert_int_equal(j.n, 2);
	assert_entry(&j.v[0], 0, SHARD_DONE, 100, 0, 1);
	assert_entry(&j.v[1], 1, SHARD_DONE, 100, 1, 1);
	assert_shard_ok(&t, &j.v[0], "n1");
	assert_shard_ok(&t, &j.v[1], "n2");
	assert_int_equal(j.exclude.n, 0);
	assert_int_equal(j.retries.n, 0);
	assert_int_equal(t.rs->cluster.n, 0);
	assert_int_equal(t.x.nboots, 4);
	assert_int_equal(t.x.prog.done, 4);
	assert_int_equal(t.x.prog.failed, 0);
	for (size_t i = 0; i < t.rs->n; i++)
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(t.rs->runs[i].boot, t.rs->runs[k].boot);
	assert_saved(&t);
	shard_journal_release(&j);
	tenv_release(&t);
}

/* Shard 0's task leaves the queue with no bundle, twice; shard 1 ends well. */
static void story_lost(struct fake *f, size_t poll, bool answered)
{
	if (poll == 1 && !answered) {
		run_on(f, 0, "n1");
		run_on(f, 1, "n2");
	} else if (poll == 1) {
		node_finish(f, 1, "n2", NULL, 0);
		end_as(f, 1, "COMPLETED", "None");
	} else if (poll == 2 && !answered) {
		vanish(f, 0);
	} else if (poll == 3 && !answered) {
		/* the second submission's task, never run */
		vanish(f, 0);
	} else if (poll > 3) {
		fail_msg("squeue asked again at poll %zu", poll);
	}
}

static void test_lost_task(void **state)
{
	struct tenv t;
	struct shard_journal j;
	_cleanup_free_ char *script = NULL;
	static const char *const want[] = {
		"shard 0 (job 100 task 0, node n1) ended (squeue no longer lists it) without a result: submitted again "
		"(attempt 2 of 2)",
		"shard 0 ended without a result on its last attempt: its runs fail",
	};

	(void)state;
	tenv_init(&t, "  retries: 1\n");
	t.f.story = story_lost;
	assert_int_equal(tenv_execute(&t), 0);
	assert_lines(&t.errors, NULL, 0);

	/* submitted again alone: array task 0 is shard 0 */
	assert_int_equal(t.f.nsbatch, 2);
	assert_true(strv_contains(&t.f.sbatch[1], "--array=0-0"));
	script = xasprintf("%s/submit-1.sh", t.f.jobdir);
	assert_string_equal(t.f.sbatch[1].v[t.f.sbatch[1].n - 1], script);
	assert_non_null(strstr(t.f.scripts.v[1], "in\n0) shard=0 ;;\n*)"));
	assert_null(strstr(t.f.scripts.v[1], "shard=1"));
	assert_int_equal(t.f.nsqueue, 3);
	assert_string_equal(t.f.squeue_jobs, "101");

	read_journal(&t, &j);
	assert_int_equal(j.n, 2);
	assert_entry(&j.v[0], 0, SHARD_FAILED, 101, 0, 2);
	assert_entry(&j.v[1], 1, SHARD_DONE, 100, 1, 1);
	assert_shard_failed(&t, &j.v[0], "its shard 0 ended without a result 2 times (engine: retries: 1)");
	assert_shard_ok(&t, &j.v[1], "n2");
	/* every retry with why, in the run and in the journal */
	assert_lines(&t.rs->cluster, want, ELEMENTSOF(want));
	assert_lines(&j.retries, want, ELEMENTSOF(want));
	/* a task lost on n1 once is no reason to leave n1 out */
	assert_int_equal(j.exclude.n, 0);
	assert_saved(&t);
	shard_journal_release(&j);
	tenv_release(&t);
}

#define REFUSAL "node n2: lab 9.9 here, the head runs lab 0.1: install the head's version on the nodes " \
		"(engine: lab: names its path)"

/* Shard 0's node runs another lab and refuses it; shard 1 ends well. */
static void story_refused(struct fake *f, size_t poll, bool answered)
{
	if (poll == 1 && !answered) {
		run_on(f, 0, "n2");
		run_on(f, 1, "n1");
	} else if (poll == 1) {
		node_refuse(f, 0, REFUSAL "\n");
		end_as(f, 0, "FAILED", "NonZeroExitCode");
		node_finish(f, 1, "n1", NULL, 0);
		end_as(f, 1, "COMPLETED", "None");
	} else if (poll > 2) {
		fail_msg("squeue asked again at poll %zu", poll);
	}
}

static void test_node_refusal(void **state)
{
	struct tenv t;
	struct shard_journal j;
	_cleanup_free_ char *errp = NULL;
	static const char *const want[] = { "shard 0: refused by its node, not retried: " REFUSAL };

	(void)state;
	tenv_init(&t, NULL);
	t.f.story = story_refused;
	assert_int_equal(tenv_execute(&t), 0);
	assert_lines(&t.errors, NULL, 0);
	/* never submitted again: another node would say the same */
	assert_int_equal(t.f.nsbatch, 1);
	assert_int_equal(t.f.nsqueue, 2);

	read_journal(&t, &j);
	assert_entry(&j.v[0], 0, SHARD_FAILED, 100, 0, 1);
	assert_entry(&j.v[1], 1, SHARD_DONE, 100, 1, 1);
	assert_shard_failed(&t, &j.v[0], REFUSAL);
	assert_shard_ok(&t, &j.v[1], "n1");
	assert_lines(&t.rs->cluster, want, ELEMENTSOF(want));
	/* a refusal is no failed boot */
	assert_int_equal(j.exclude.n, 0);
	errp = shard_path(&t.f, 0, "error");
	assert_false(path_is_file(errp));
	assert_saved(&t);
	shard_journal_release(&j);
	tenv_release(&t);
}

#define BOOT_FAILED "boot failed: the guest did not answer on ssh within 300 s"

/* n2 fails both boots of shard 1; shard 0 comes back from n1 with a run not done and goes again. */
static void story_boots_fail(struct fake *f, size_t poll, bool answered)
{
	if (poll == 1 && !answered) {
		run_on(f, 0, "n1");
		run_on(f, 1, "n2");
	} else if (poll == 1) {
		node_finish(f, 0, "n1", NULL, 1);
		end_as(f, 0, "COMPLETED", "None");
		node_finish(f, 1, "n2", BOOT_FAILED, 0);
		end_as(f, 1, "COMPLETED", "None");
	} else if (poll == 2 && !answered) {
		run_on(f, 0, "n1");
	} else if (poll == 2) {
		node_finish(f, 0, "n1", NULL, 0);
		end_as(f, 0, "COMPLETED", "None");
	} else {
		fail_msg("squeue asked again at poll %zu", poll);
	}
}

static void test_node_excluded(void **state)
{
	struct tenv t;
	struct shard_journal j;
	static const char *const want[] = { "shard 0 came back with runs not done: submitted again",
					    "node n2 failed two boots: excluded from the rest of the experiment" };

	(void)state;
	tenv_init(&t, NULL);
	t.f.story = story_boots_fail;
	assert_int_equal(tenv_execute(&t), 0);
	assert_lines(&t.errors, NULL, 0);

	assert_int_equal(t.f.nsbatch, 2);
	assert_null(arg_value(&t.f.sbatch[0], "--exclude="));
	assert_string_equal(arg_value(&t.f.sbatch[1], "--exclude="), "n2");
	assert_true(strv_contains(&t.f.sbatch[1], "--array=0-0"));
	assert_non_null(strstr(t.f.scripts.v[1], "in\n0) shard=0 ;;\n*)"));
	assert_lines(&t.rs->cluster, want, ELEMENTSOF(want));

	read_journal(&t, &j);
	assert_entry(&j.v[0], 0, SHARD_DONE, 101, 0, 2);
	assert_entry(&j.v[1], 1, SHARD_DONE, 100, 1, 1);
	assert_int_equal(j.exclude.n, 1);
	assert_string_equal(j.exclude.v[0], "n2");
	/* the run n1 did not finish the first time is done by the second task; the boots of n2 failed */
	assert_shard_ok(&t, &j.v[0], "n1");
	assert_shard_failed(&t, &j.v[1], BOOT_FAILED);
	for (size_t k = 0; k < 2; k++)
		assert_string_equal(run_named(&t, j.v[1].runs.v[k])->node, "n2");
	assert_saved(&t);
	shard_journal_release(&j);
	tenv_release(&t);
}

/* Shard 0 runs on n1, is requeued by Slurm (n1 went down), and ends on n2. */
static void story_requeued(struct fake *f, size_t poll, bool answered)
{
	if (poll == 1 && !answered) {
		run_on(f, 0, "n1");
		run_on(f, 1, "n2");
	} else if (poll == 2 && !answered) {
		requeue(f, 0, "BeginTime");
	} else if (poll == 2) {
		node_finish(f, 1, "n2", NULL, 0);
		end_as(f, 1, "COMPLETED", "None");
	} else if (poll == 3 && !answered) {
		run_on(f, 0, "n2");
	} else if (poll == 3) {
		node_finish(f, 0, "n2", NULL, 0);
		end_as(f, 0, "COMPLETED", "None");
	} else if (poll > 3) {
		fail_msg("squeue asked again at poll %zu", poll);
	}
}

static void test_requeued_by_slurm(void **state)
{
	struct tenv t;
	struct shard_journal j;
	static const char *const want[] = {
		"shard 0 (job 100 task 0) requeued by Slurm after it ran on n1: BeginTime",
	};

	(void)state;
	tenv_init(&t, NULL);
	t.f.story = story_requeued;
	assert_int_equal(tenv_execute(&t), 0);
	assert_lines(&t.errors, NULL, 0);
	/* Slurm's own requeue: lab submits nothing */
	assert_int_equal(t.f.nsbatch, 1);
	assert_int_equal(t.f.nsqueue, 3);
	assert_lines(&t.rs->cluster, want, ELEMENTSOF(want));

	read_journal(&t, &j);
	assert_entry(&j.v[0], 0, SHARD_DONE, 100, 0, 1);
	assert_entry(&j.v[1], 1, SHARD_DONE, 100, 1, 1);
	assert_shard_ok(&t, &j.v[0], "n2");
	assert_shard_ok(&t, &j.v[1], "n2");
	assert_lines(&j.retries, want, ELEMENTSOF(want));
	assert_int_equal(j.exclude.n, 0);
	assert_saved(&t);
	shard_journal_release(&j);
	tenv_release(&t);
}

/* The resumed run's shard 0 still runs on n1 (job 77); its bundle comes at the first poll. */
static void story_resumed(struct fake *f, size_t poll, bool answered)
{
	if (poll == 1 && answered) {
		node_finish(f, 0, "n1", NULL, 0);
		end_as(f, 0, "COMPLETED", "None");
	} else if (poll > 1) {
		fail_msg("squeue asked again at poll %zu", poll);
	}
}

static void test_resume(void **state)
{
	struct tenv t;
	struct shard_journal j = { 0 }, back;
	struct result_set *seed;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	_cleanup_free_ char *jp = NULL, *work = NULL;
	struct diags d = { 0 };

	(void)state;
	tenv_init(&t, NULL);
	/* what the first lab left: shard 0 (the plan's boot 1) queued as job 77 task 0 and its run folder
	 * for the node; shard 1 done, its runs ok in the run */
	j.v = xcalloc(3, sizeof(*j.v));
	j.n = j.alloc = 2;
	j.v[0] = (struct shard_entry){ .index = 0, .state = SHARD_QUEUED, .job = 77, .task = 0, .attempts = 1 };
	j.v[1] = (struct shard_entry){ .index = 1, .state = SHARD_DONE, .job = 77, .task = 1, .attempts = 1 };
	seed = result_set_new(t.id, "e");
	for (size_t i = 0; i < t.variants.n; i++)
		strv_push(&seed->variants, t.variants.v[i]);
	for (size_t i = 0; i < t.p->n; i++) {
		struct result_run *r = &t.rs->runs[i];

		assert_string_equal(r->id, t.p->runs[i].id);
		if (t.p->runs[i].boot == 1) {
			strv_push(&j.v[0].runs, r->id);
			result_add_run(seed, r->id, r->variant, r->group, r->job, r->repeat);
		} else {
			_cleanup_free_ char *rd = xasprintf("%s/runs/%s", t.dir, r->id);

			strv_push(&j.v[1].runs, r->id);
			r->status = RUN_OK;
			r->node = xstrdup("n2");
			write_file(rd, "metrics", "ops 123.5\n");
		}
	}
	work = xasprintf("%s/shard-0/work/%s", t.f.jobdir, t.id);
	assert_int_equal(path_mkdir_p(work, 0755), 0);
	assert_int_equal(store_save(work, seed, &d), 0);
	result_set_free(seed);
	assert_int_equal(store_save(t.dir, t.rs, &d), 0);
	shard_journal_format(&j, &sb);
	jp = path_join(t.dir, "slurm.json");
	assert_int_equal(fs_write_atomic(jp, sb.buf, sb.len, 0644), 0);
	/* and Slurm still runs it */
	t.f.jobs[0] = (struct fjob){ .id = 77, .n = 2 };
	t.f.jobs[0].t[0] = (struct ftask){ .shard = 0, .st = T_RUNNING, .split = true, .own_id = 78, .node = "n1",
					   .reason = "None" };
	t.f.jobs[0].t[1] = (struct ftask){ .shard = 1, .st = T_GONE };
	t.f.njobs = 1;
	t.f.story = story_resumed;

	assert_int_equal(tenv_execute(&t), 0);
	assert_lines(&t.errors, NULL, 0);
	/* re-attached, nothing submitted */
	assert_int_equal(t.f.nsbatch, 0);
	assert_int_equal(t.f.nsqueue, 1);
	assert_string_equal(t.f.squeue_jobs, "77");
	read_journal(&t, &back);
	assert_int_equal(back.n, 2);
	assert_entry(&back.v[0], 0, SHARD_DONE, 77, 0, 1);
	assert_entry(&back.v[1], 1, SHARD_DONE, 77, 1, 1);
	assert_shard_ok(&t, &back.v[0], "n1");
	assert_int_equal(t.x.prog.done, 2);
	assert_saved(&t);
	shard_journal_release(&back);
	shard_journal_release(&j);
	diags_release(&d);
	tenv_release(&t);
}

static void test_slurm_unreachable(void **state)
{
	struct tenv t;
	_cleanup_free_ char *jp = NULL;
	static const char *const want[] = {
		"Slurm cannot be reached (nothing was submitted): sinfo failed (exit status 1): slurm_load_partitions: "
		"Unable to contact slurm controller (connect failure)",
	};

	(void)state;
	tenv_init(&t, NULL);
	t.f.down = true;
	assert_int_equal(tenv_execute(&t), -1);
	assert_lines(&t.errors, want, ELEMENTSOF(want));
	assert_int_equal(t.f.nsinfo, 1);
	assert_int_equal(t.f.nsbatch, 0);
	assert_int_equal(t.f.nsqueue, 0);
	assert_all_pending(&t);
	jp = path_join(t.dir, "slurm.json");
	assert_false(path_is_file(jp));
	assert_false(path_is_dir(t.f.jobdir));
	tenv_release(&t);
}

/* Ctrl-C while shard 0 runs and shard 1 waits. */
static void story_cancelled(struct fake *f, size_t poll, bool answered)
{
	if (poll == 1 && !answered) {
		run_on(f, 0, "n1");
		engine_cluster_cancel = 1;
	} else if (poll > 1) {
		fail_msg("squeue asked again at poll %zu", poll);
	}
}

static void test_cancel(void **state)
{
	struct tenv t;
	struct shard_journal j;
	_cleanup_free_ char *msg = NULL;
	static const char *const scancel[] = { "scancel", "100" };

	(void)state;
	tenv_init(&t, NULL);
	t.f.story = story_cancelled;
	assert_int_equal(tenv_execute(&t), -1);
	assert_int_equal(t.f.nsbatch, 1);
	assert_int_equal(t.f.nscancel, 1);
	assert_lines(&t.f.scancel, scancel, ELEMENTSOF(scancel));
	msg = xasprintf("interrupted: lab's jobs were cancelled, every finished shard is kept ('lab run --resume %s' "
			"goes on)", t.id);
	{
		const char *const want[] = { msg };

		assert_lines(&t.errors, want, ELEMENTSOF(want));
	}
	/* new again, the cancelled submission not counted: --resume submits them as the first time */
	read_journal(&t, &j);
	assert_int_equal(j.n, 2);
	assert_entry(&j.v[0], 0, SHARD_NEW, 100, 0, 0);
	assert_entry(&j.v[1], 1, SHARD_NEW, 100, 1, 0);
	assert_int_equal(t.rs->cluster.n, 0);
	assert_all_pending(&t);
	shard_journal_release(&j);
	tenv_release(&t);
}

#define SBATCH_REFUSED "cannot submit to Slurm: sbatch failed (exit status 1): sbatch: error: Batch job submission " \
		       "failed: Invalid partition name specified"

/* sbatch refuses the first submission: the run stops, -1, nothing was queued. */
static void test_sbatch_refused(void **state)
{
	struct tenv t;
	struct shard_journal j;
	static const char *const want[] = { SBATCH_REFUSED };

	(void)state;
	tenv_init(&t, NULL);
	t.f.refuse_sbatch = 1;
	assert_int_equal(tenv_execute(&t), -1);
	assert_lines(&t.errors, want, ELEMENTSOF(want));
	assert_int_equal(t.f.nsbatch, 1);
	assert_int_equal(t.f.nsqueue, 0);
	assert_int_equal(t.f.nscancel, 0);
	read_journal(&t, &j);
	assert_int_equal(j.n, 2);
	assert_entry(&j.v[0], 0, SHARD_NEW, 0, 0, 0);
	assert_entry(&j.v[1], 1, SHARD_NEW, 0, 0, 0);
	assert_all_pending(&t);
	shard_journal_release(&j);
	tenv_release(&t);
}

/* Shard 0's task is lost while shard 1 runs; sbatch refuses shard 0's second submission. */
static void story_lost_then_refused(struct fake *f, size_t poll, bool answered)
{
	if (poll == 1 && !answered) {
		run_on(f, 0, "n1");
		run_on(f, 1, "n2");
	} else if (poll == 2 && !answered) {
		vanish(f, 0);
	} else if (poll > 2) {
		fail_msg("squeue asked again at poll %zu", poll);
	}
}

/* A submission refused half way: -1, and the job still queued is cancelled, not left behind lab's back. */
static void test_sbatch_refused_later(void **state)
{
	struct tenv t;
	struct shard_journal j;
	static const char *const want[] = { SBATCH_REFUSED };
	static const char *const scancel[] = { "scancel", "100" };

	(void)state;
	tenv_init(&t, NULL);
	t.f.refuse_sbatch = 2;
	t.f.story = story_lost_then_refused;
	assert_int_equal(tenv_execute(&t), -1);
	assert_lines(&t.errors, want, ELEMENTSOF(want));
	assert_int_equal(t.f.nsbatch, 2);
	assert_int_equal(t.f.nsqueue, 2);
	assert_int_equal(t.f.nscancel, 1);
	assert_lines(&t.f.scancel, scancel, ELEMENTSOF(scancel));
	read_journal(&t, &j);
	assert_int_equal(j.n, 2);
	/* shard 0 was submitted once and lost; shard 1's cancelled submission is not counted */
	assert_entry(&j.v[0], 0, SHARD_NEW, 100, 0, 1);
	assert_entry(&j.v[1], 1, SHARD_NEW, 100, 1, 0);
	assert_int_equal(t.rs->cluster.n, 1);
	assert_all_pending(&t);
	shard_journal_release(&j);
	tenv_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_happy_path),
		cmocka_unit_test(test_lost_task),
		cmocka_unit_test(test_node_refusal),
		cmocka_unit_test(test_node_excluded),
		cmocka_unit_test(test_requeued_by_slurm),
		cmocka_unit_test(test_resume),
		cmocka_unit_test(test_slurm_unreachable),
		cmocka_unit_test(test_cancel),
		cmocka_unit_test(test_sbatch_refused),
		cmocka_unit_test(test_sbatch_refused_later),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
