/* SPDX-License-Identifier: MIT */
/*
 * The guest side of one run as a POSIX shell script (a pure formatter,
 * golden-tested): setup, the guest quiesced (lab_quiesce in
 * workloads/lib/lab.sh: cloud-init done, timers stopped, page cache
 * dropped), warm-up, monitors started, the measured run,
 * monitors stopped, every raw output and log under OUT. Its exit status
 * names the step that failed. The same script is kept in the run folder,
 * to be run whole by hand in a guest.
 *
 * With a host-side monitor (lab reads it, not the guest) the script prints
 * DRIVER_WINDOW_START when the window is about to open and
 * DRIVER_WINDOW_STOP when it has closed, each the last line of a step: the
 * runner sends the script up to a marker, reads its host monitors when the
 * marker comes back (the guest waits on its input meanwhile), then sends
 * the next step. Run whole, the markers are plain output.
 */
#pragma once

#include <stdint.h>
#include "../plan/plan.h"
#include "../util/strbuf.h"

#define DRIVER_GUEST_DIR "/var/lib/lab"

enum driver_exit {
	DRIVER_OK = 0,
	DRIVER_SETUP = 10,
	DRIVER_WARMUP = 11,
	DRIVER_MONITOR = 12,
	DRIVER_RUN = 13,
};

#define DRIVER_WINDOW_START "lab: window start"
#define DRIVER_WINDOW_STOP "lab: window stop"

struct driver_monitor {
	const char *name;
	bool host; /* lab reads it on the host: nothing of it runs in the guest */
	const struct plan_param *params; /* the monitor's defaults */
	size_t nparams;
};

struct driver_config {
	const struct plan_run *run;
	const struct driver_monitor *monitors;
	size_t nmonitors;
	bool has_setup;
	uint64_t warmup_sec; /* 0: none; sets the workload's duration parameter */
	bool has_duration;   /* the workload has a `duration` parameter */
	bool quiesce;        /* lab_quiesce before the warm-up (experiment `quiesce:`) */
};

void driver_format(const struct driver_config *c, struct strbuf *out);
/* Where the script's steps end (just after each marker's line); 0 where there is none. */
void driver_steps(const char *script, size_t *ret_start, size_t *ret_stop);
/* "setup", "warm-up", "monitor start", "run" or NULL for DRIVER_OK/unknown. */
const char *driver_step_name(int status);
