/* SPDX-License-Identifier: MIT */
/*
 * The reproduce workflow, once the original run's snapshot is checked out
 * and its lab.yaml loaded (the command's part): each kernel's source and
 * merged .config held to the recorded ones (reproduce.h), refusing before
 * anything boots when one differs; the experiment run again through the
 * caller's engine call (workflow.h) as a new run whose `reproduces` file
 * names the original; then the verdict of the reproduction
 * (result/reproduction.h) and the image's package versions that moved.
 * Never prints, never exits: lines go to the workflow's say(), what it
 * decided to *out, errors to diags.
 */
#pragma once

#include <stdbool.h>
#include "../kernel/build.h"
#include "../util/diag.h"
#include "../util/strv.h"
#include "workflow.h"

#define REPRODUCES_FILE "reproduces"

struct spec;
struct snapshot;
struct reproduction;
struct result_set;
struct comparison;

struct reproduce_params {
	unsigned repeat; /* runs a kernel instead of the original's (a fixed design); 0: the original's */
	const struct kbuild_progress *progress; /* a .config made to be compared; NULL: quiet */
};

struct reproduce_outcome {
	struct result_set *orig_rs, *rs; /* the original's runs and the new ones (rp borrows both) */
	struct comparison *co, *cr;
	struct strv refused;     /* why the kernels are not the recorded ones; nothing booted */
	char *id;                /* the new run's id */
	struct reproduction *rp; /* the verdict, against the original */
	struct strv packages;    /* "NAME: A -> B": the image's packages that differ, recorded first */
	const char *image;       /* the image they are of (s's) */
	bool failed;             /* a run failed, or it was not reproduced */
};
void reproduce_outcome_release(struct reproduce_outcome *out);

/*
 * The run in dir (its snapshot snap; s loaded from its checkout, its
 * experiment changed in place by p) made again under root. 0 with *out
 * (d may hold an error the run survived: said, not fatal); -EINVAL with d
 * when the snapshot's experiment is not in s; -EPERM with out->refused;
 * -EIO when the runs failed (said by the workflow's run) or the original
 * could not be read back (d).
 */
int reproduce_run(const struct workflow *w, struct spec *s, const char *root, const char *dir,
		  const struct snapshot *snap, const struct reproduce_params *p, struct reproduce_outcome *out,
		  struct diags *d);
