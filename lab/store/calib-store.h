/* SPDX-License-Identifier: MIT */
/*
 * A calibration kept for later (`lab calibrate` writes it, `lab plan`
 * reads it): <results>/calibration/<experiment>.json with the figures and
 * the host they were measured on (CPU model and count, kernel, KVM or TCG).
 * With --monitors, what each monitor costs the workloads too. Read back
 * strictly: it may come from another machine's results folder; a record
 * made before monitors were measured reads as one without overheads.
 */
#pragma once

#include "../result/calibrate.h"

struct calib_host {
	char *cpu, *kernel, *accel;
	unsigned cpus;
};

/* This host. */
void calib_host_here(struct calib_host *h);
void calib_host_release(struct calib_host *h);
/* NULL when a and b are the same machine for noise; else what differs (free it). */
char *calib_host_differs(const struct calib_host *a, const struct calib_host *b);

struct calib_record {
	char *experiment, *date;
	struct calib_host host;
	double seconds_per_run; /* wall time of the calibration over its runs: boots and all */
	struct calibration *c;
};

void calib_record_release(struct calib_record *r);
char *calib_path(const char *root, const char *experiment);
int calib_save(const char *root, const struct calib_record *r, char **ret_err);
/* -ENOENT when there is none (an experiment name that is no name has
 * none: it never becomes a path); another negative errno with *ret_err naming the file. */
int calib_load(const char *root, const char *experiment, struct calib_record *r, char **ret_err);
/* The same from a document's text (path: for messages); experiment: the one it must name. */
int calib_parse(const char *path, const char *text, size_t len, const char *experiment, struct calib_record *rec,
		char **ret_err);
/* The stored document (also `lab calibrate --json`). */
void calib_format_json(const struct calib_record *r, struct strbuf *out);
