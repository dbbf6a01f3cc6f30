/* SPDX-License-Identifier: MIT */
/*
 * The calibrate workflow: A/A runs on this host. The experiment's plan
 * with its baseline kernel alone, over `boots` boots, run through the
 * caller's engine call (workflow.h), which the calibration
 * (result/calibrate.h) splits into halves every balanced way and judges as
 * if they were two kernels: per metric the between-boot and within-boot
 * CV, the false-positive rate of lab's own test here, and the smallest
 * change the experiment's budget can decide. With monitors, each run is
 * followed in its boot by the same run with each of its monitors off in
 * turn, and each monitor's cost to the workload's figures is measured.
 * Saved under the results folder with the host's description
 * (store/calib-store.h). Never prints, never exits.
 */
#pragma once

#include <stdbool.h>
#include "../store/calib-store.h"
#include "../util/diag.h"
#include "workflow.h"

struct spec;

struct calibrate_params {
	const char *experiment;
	unsigned boots;   /* of the baseline kernel; 0: 6 */
	unsigned runs;    /* a boot; 0: the experiment's runs-per-boot */
	bool monitors;    /* measure what each monitor costs */
};

/*
 * Calibrate p's experiment of s (cut in place) into *rec, saved under root
 * (*ret_path the file). 0; -EINVAL with d when the input cannot be
 * calibrated (nothing ran); -EIO when the runs failed (said by the
 * workflow's run) or the record could not be saved (d).
 */
int calibrate_run(const struct workflow *w, struct spec *s, const char *root, const struct calibrate_params *p,
		  struct calib_record *rec, char **ret_path, struct diags *d);
