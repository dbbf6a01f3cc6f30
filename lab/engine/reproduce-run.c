/* SPDX-License-Identifier: MIT */
/*
 * The reproduce workflow (reproduce-run.h), out of the command, which now
 * finds the original, checks its snapshot out and renders the outcome.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "../result/compare.h"
#include "../result/reproduction.h"
#include "../spec/spec.h"
#include "../store/snapshot.h"
#include "../store/store.h"
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "reproduce.h"
#include "reproduce-run.h"
#include "../util/banned.h"

static void say(const struct workflow *w, const char *fmt, ...) _printf_(2, 3);
static void say(const struct workflow *w, const char *fmt, ...)
{
	_cleanup_free_ char *msg = NULL;
	va_list ap;

	if (!w->say)
		return;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	w->say(w->userdata, msg);
}

/* Sources and .configs against the recorded ones: -EPERM with out->refused, -EIO with d. */
static int hold_to_record(const struct workflow *w, const struct spec *s, const struct spec_experiment *e,
			  const char *dir, const struct snapshot *snap, const struct reproduce_params *p,
			  struct reproduce_outcome *out, struct diags *d)
{
	_cleanup_strv_ struct strv variants = STRV_INIT, notes = STRV_INIT;

	for (size_t i = 0; i < e->kernels.n; i++)
		strv_push(&variants, e->kernels.v[i].name);
	say(w, "holding %zu kernels to the recorded sources and .configs", variants.n);
	/* a source that is not the recorded one refuses before anything is configured */
	if (reproduce_check_sources(s, &variants, snap, &out->refused, d) < 0 ||
	    (!out->refused.n && reproduce_check_configs(s, &variants, dir, snap, p->progress,
							&out->refused, &notes, d) < 0))
		return -EIO;
	for (size_t i = 0; i < notes.n; i++)
		say(w, "%s", notes.v[i]);
	return out->refused.n ? -EPERM : 0;
}

struct link {
	const char *root, *orig_id;
	char *id;
	int err;
};

/* The new run names the original as soon as its folder exists. */
static void started(void *userdata, const char *id)
{
	struct link *l = userdata;
	_cleanup_free_ char *dir = path_join(l->root, id), *p = path_join(dir, REPRODUCES_FILE);
	_cleanup_free_ char *line = xasprintf("%s\n", l->orig_id);

	free(l->id);
	l->id = xstrdup(id);
	l->err = fs_write_atomic(p, line, strlen(line), 0644);
}

/* The verdict against the original in orig_dir, and the image's packages that moved. */
static int judge(const char *orig_dir, const struct snapshot *osnap, const char *new_dir, const char *image,
		 struct reproduce_outcome *out, struct diags *d)
{
	_cleanup_(snapshot_release) struct snapshot nsnap = { 0 };
	_cleanup_diags_ struct diags quiet = { 0 };

	if (store_load(orig_dir, &out->orig_rs, d) < 0)
		return -EIO;
	out->co = compare_build(out->orig_rs);
	out->cr = compare_build(out->rs);
	out->rp = reproduction_build(out->orig_rs, out->co, out->rs, out->cr);
	out->image = image;
	/* a run without a snapshot or package list: nothing to tell */
	if (snapshot_load(new_dir, &nsnap, &quiet) == 0)
		reproduce_packages(orig_dir, osnap, new_dir, &nsnap, image, &out->packages, &quiet);
	out->failed = out->rp->verdict == REPRO_NOT_REPRODUCED;
	for (size_t i = 0; i < out->rs->n; i++)
		if (out->rs->runs[i].status != RUN_OK)
			out->failed = true; /* a failed run: said in the report */
	return 0;
}

int reproduce_run(const struct workflow *w, struct spec *s, const char *root, const char *dir,
		  const struct snapshot *snap, const struct reproduce_params *p, struct reproduce_outcome *out,
		  struct diags *d)
{
	_cleanup_free_ char *orig_id = path_basename(dir), *new_dir = NULL;
	struct spec_experiment *e = (struct spec_experiment *)spec_find_experiment(s, snap->experiment);
	struct link l = { .root = root, .orig_id = orig_id };
	int r;

	if (!e) {
		diags_add(d, NULL, "%s: the snapshot's experiment '%s' is not in its lab.yaml", dir, snap->experiment);
		return -EINVAL;
	}
	if (p->repeat) {
		e->repeat = p->repeat;
		e->repeat_auto = false;
	}
	if ((r = hold_to_record(w, s, e, dir, snap, p, out, d)) < 0)
		return r;
	say(w, "run %s, experiment %s", orig_id, e->name);
	if (w->run(w->userdata, s, e, NULL, root, started, &l, &out->rs) < 0) {
		free(l.id);
		return -EIO;
	}
	out->id = l.id;
	if (l.err < 0)
		diags_add(d, NULL, "the new run %s could not record that it reproduces %s: %s", l.id, orig_id,
			  strerror(-l.err));
	new_dir = path_join(root, l.id);
	return judge(dir, snap, new_dir, e->image.name, out, d);
}

void reproduce_outcome_release(struct reproduce_outcome *out)
{
	reproduction_free(out->rp);
	comparison_free(out->co);
	comparison_free(out->cr);
	result_set_free(out->orig_rs);
	result_set_free(out->rs);
	strv_release(&out->refused);
	strv_release(&out->packages);
	free(out->id);
	*out = (struct reproduce_outcome){ 0 };
}
