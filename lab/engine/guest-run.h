/* SPDX-License-Identifier: MIT */
/*
 * One planned run on a guest that is up: the catalogue and the variant's
 * System.map shipped in, the driver script run over SSH (setup, warm-up,
 * monitors, measured window), every raw output brought back into the run
 * folder, parsed on the controller into `metrics`, and the evidence kept
 * (uname, dmesg, console, kernel config, image packages, reproduce.sh).
 * A failure marks the run failed with its reason; what was measured
 * before it stays on disk. Never prints: steps go to the callback.
 */
#pragma once

#include "../image/image.h"
#include "../kernel/build.h"
#include "../plan/plan.h"
#include "../result/result.h"
#include "../spec/spec.h"
#include "../vm/vm.h"

struct runner_progress {
	void (*step)(void *userdata, const char *run, const char *what);
	void *userdata;
};

struct runner_config {
	const struct spec *s;
	const struct spec_experiment *e;
	const char *rundir;       /* <results>/<id>/runs/<plan id>, created */
	const char *catalogue_tar; /* the workloads folder as a tar on the controller */
	const struct vm *vm;           /* the guest, or NULL on a bare-metal host: */
	const struct ssh_target *host; /* the host's target when vm is NULL */
	const struct kartifact *kernel;
	const struct image_artifact *image;
	const struct runner_progress *progress;
	/* the guest already has this catalogue and System.map (a guest that
	 * serves several runs, `boot: once`); set once they are shipped */
	bool *shipped;
};

/* Fills out->status, ->release, ->error and the metrics. 0 even when the
 * run failed (see out->status); negative only when the folder is unusable. */
int runner_exec(const struct runner_config *c, const struct plan_run *pr, struct result_run *out);
