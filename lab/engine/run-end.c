/* SPDX-License-Identifier: MIT */
/*
 * How a run ends, whoever ran it: done on a local worker (its wire
 * message), failed where it never came back, or imported from a cluster
 * node's shard; its metrics read back, the progress counted, the event
 * said, the journal and the index saved. What an executor hands back to
 * the engine goes through here; it calls the scheduler's boot bookkeeping
 * and the events below it, never the engine above.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../result/fingerprint.h"
#include "../store/index.h"
#include "../store/store.h"
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "engine-priv.h"
#include "../util/banned.h"

/*
 * The index is a cache of the folders: a write that fails (another lab
 * held it past the busy timeout, a full disk) is tried again, then said,
 * and never stops the run from saving its folder or printing its report
 * (`lab gc --reindex` rebuilds the index from the folders).
 */
static void index_with_retry(struct engine *x, const struct result_set *rs, const size_t *runs, size_t n)
{
	_cleanup_diags_ struct diags d = { 0 };

	for (int attempt = 0; attempt < 3; attempt++) {
		_cleanup_free_ char *sum = NULL;

		diags_release(&d);
		if (runs ? index_put_runs(x->o->root, rs, runs, n, &d) == 0
			     : (sum = index_verdict_summary(rs), index_put(x->o->root, rs, sum, &d) == 0))
			return;
		sleep(1u << attempt);
	}
	engine_emit_diags(x, &d);
	engine_emit_text(x, ENGINE_EV_WARNING, "run %s is saved but not indexed (lab gc --reindex adds it)", rs->id);
}

/* The folder and the whole index entry (with the verdicts: a comparison of every run). */
int engine_save(struct engine *x, const char *dir, const struct result_set *rs)
{
	_cleanup_diags_ struct diags d = { 0 };

	if (store_save(dir, rs, &d) < 0) {
		engine_emit_diags(x, &d);
		return -1;
	}
	index_with_retry(x, rs, NULL, 0);
	return 0;
}

void engine_save_runs(struct engine *x, const size_t *runs, size_t n)
{
	_cleanup_diags_ struct diags d = { 0 };

	if (store_save_journal(x->dir, x->rs, &d) < 0) {
		engine_emit_diags(x, &d);
		return;
	}
	index_with_retry(x, x->rs, runs, n);
}

void engine_save_run(struct engine *x, size_t i)
{
	engine_save_runs(x, &i, 1);
}

/* A worker's text on one line, as the journal keeps it. */
static char *one_line(const char *s)
{
	char *t;

	if (!s || !*s)
		return NULL;
	t = xstrdup(s);
	for (char *c = t; *c; c++)
		if (*c == '\t' || *c == '\n')
			*c = ' ';
	return t;
}

/* The environment the worker wrote next to the run, into the set (once per distinct one). */
static void run_fingerprint(struct engine *x, struct result_run *r)
{
	_cleanup_free_ char *p = xasprintf("%s/runs/%s/fingerprint.json", x->dir, r->id), *err = NULL;
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	struct fingerprint fp;

	if (strbuf_read_file(&sb, p, 1 << 20) < 0 || !sb.buf)
		return;
	if (fingerprint_parse(sb.buf, sb.len, &fp, &err) < 0) {
		engine_emit_text(x, ENGINE_EV_WARNING, "%s: %s", p, err);
		return;
	}
	r->fp = result_add_fingerprint(x->rs, &fp);
	fingerprint_release(&fp);
}

/* A run that ended (here or on a node): its metrics read back from its folder, said. */
static void run_ended(struct engine *x, struct result_run *r)
{
	_cleanup_diags_ struct diags d = { 0 };

	if (r->status == RUN_OK && store_load_metrics(x->dir, r, &d) < 0) {
		r->status = RUN_FAILED;
		free(r->error);
		r->error = xasprintf("its metrics cannot be read back: %s", d.n ? d.v[0].msg : "?");
	}
	x->prog.done++;
	x->prog.failed += r->status == RUN_FAILED;
	engine_progress_looks(x);
	engine_emit(x, &(struct engine_event){ .type = ENGINE_EV_RUN_DONE, .run = r });
}

void engine_run_done(struct engine *x, size_t i, const struct wire_msg *m)
{
	struct result_run *r = &x->rs->runs[i];

	if (r->status != RUN_PENDING)
		return;
	r->status = m->ok ? RUN_OK : RUN_FAILED;
	free(r->release);
	r->release = one_line(m->release);
	free(r->error);
	r->error = one_line(m->error);
	engine_boot_run(x, i, m->guest);
	free(r->node);
	r->node = x->o->node ? xstrdup(x->o->node) : NULL;
	run_fingerprint(x, r);
	run_ended(x, r);
	/* a failed journal write is said; the final save writes it all again */
	engine_save_run(x, i);
}

void engine_fail_run(struct engine *x, size_t i, char *why)
{
	struct result_run *r = &x->rs->runs[i];

	if (r->status != RUN_PENDING) {
		free(why);
		return;
	}
	r->status = RUN_FAILED;
	free(r->error);
	r->error = why;
	x->prog.done++;
	x->prog.failed++;
	engine_progress_looks(x);
	engine_emit(x, &(struct engine_event){ .type = ENGINE_EV_RUN_DONE, .run = r, .lost = true });
	engine_save_run(x, i);
}

bool engine_import_run(struct engine *x, size_t i, const struct result_set *from, const struct result_run *fr,
		       const char *from_dir, struct strmap *boots)
{
	struct result_run *r = &x->rs->runs[i];
	_cleanup_free_ char *src = xasprintf("%s/runs/%s", from_dir, fr->id);
	_cleanup_free_ char *dst = xasprintf("%s/runs/%s", x->dir, r->id), *runs = path_join(x->dir, "runs");
	size_t b = SIZE_MAX;

	if (r->status != RUN_PENDING || fr->status == RUN_PENDING)
		return false;
	path_mkdir_p(runs, 0755);
	if (path_is_dir(src)) {
		if (access(dst, F_OK) == 0)
			fs_remove_tree(dst);
		if (rename(src, dst) < 0)
			fs_copy_tree(src, dst, true, NULL);
	}
	r->status = fr->status;
	free(r->release);
	r->release = one_line(fr->release);
	free(r->error);
	r->error = one_line(fr->error);
	free(r->guest);
	r->guest = fr->guest ? xstrdup(fr->guest) : NULL;
	free(r->node);
	r->node = fr->node ? xstrdup(fr->node) : NULL;
	free(r->boot);
	r->boot = NULL;
	r->boot_pos = 0;
	/* the node numbered its boots from 1: they get this run's next numbers */
	if (fr->boot && !strmap_get(boots, fr->boot, &b)) {
		engine_boot_begin(x, fr->guest ? fr->guest : "?", fr->variant);
		b = x->nboots - 1;
		strmap_put(boots, fr->boot, b);
	}
	if (b != SIZE_MAX) {
		struct boot *bt = &x->boots[b];

		GROW(bt->runs, bt->alloc, bt->n + 1);
		bt->runs[bt->n++] = i;
		r->boot = xstrdup(bt->id);
		r->boot_pos = fr->boot_pos;
	}
	r->fp = fr->fp >= 0 && (size_t)fr->fp < from->nfps ? result_add_fingerprint(x->rs, &from->fps[fr->fp]) : -1;
	r->nm = 0;
	run_ended(x, r);
	return true;
}
