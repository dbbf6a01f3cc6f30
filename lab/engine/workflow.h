/* SPDX-License-Identifier: MIT */
/*
 * What a workflow that drives the engine (bisect-run.h, calibrate-run.h,
 * reproduce-run.h) needs from the command that starts it, and nothing
 * more: a way to run an experiment, lab.yaml loaded again as the command
 * loaded it, and somewhere to say a line. The workflows are library code:
 * they never print or exit; what they decide comes back as data and their
 * errors as diags (a message without a place is said as the command's own).
 *
 * lab's commands give lab run's engine call (its progress on stderr) and
 * the terminal (cmd_workflow in cmd.h); a test gives fabricated runs.
 */
#pragma once

#include <stdbool.h>
#include "../util/macro.h"

struct spec;
struct spec_experiment;
struct result_set;

struct workflow {
	/*
	 * Experiment e of s: a new run under root (NULL: the spec's results
	 * folder), or the stored one in resume_dir. started(started_data, id)
	 * as soon as the run's folder exists. 0 with *ret_rs; -1 after the
	 * error was said (the run, when it began, stays stored).
	 */
	int (*run)(void *userdata, const struct spec *s, const struct spec_experiment *e, const char *resume_dir,
		   const char *root, void (*started)(void *started_data, const char *id), void *started_data,
		   struct result_set **ret_rs);
	/* lab.yaml loaded again, as the command loaded it (a step cuts its
	 * experiment in place). 0 with *ret; -1 after the error was said. */
	int (*load_spec)(void *userdata, struct spec **ret);
	/*
	 * Kernel `name` of s built, or found built, before a run needs it (a
	 * bisect's commit, so that one that does not build is told from one
	 * that does). 0; 1 when it did not build, with what the build said in
	 * *ret_log (allocated). NULL: the run builds its kernels.
	 */
	int (*build)(void *userdata, const struct spec *s, const char *name, char **ret_log);
	/* A line for whoever watches (not escaped yet); NULL: nobody. */
	void (*say)(void *userdata, const char *line);
	void *userdata;
};

/* A workflow's own log, <dir>/<file> (bisect.log, track.log): a line
 * timestamped and escaped (subjects and metrics may come from a stored
 * file), and the same line said. */
void workflow_log(const struct workflow *w, const char *dir, const char *file, const char *fmt, ...) _printf_(4, 5);
/* The workflow's state, <dir>/<file>, replaced atomically: 0, or a negative
 * errno (said in d when d is not NULL). */
struct strbuf;
struct diags;
int workflow_save(const char *dir, const char *file, const struct strbuf *text, struct diags *d);
/* The stored folder `id` under root (*ret_dir) and its state file (*ret_path,
 * at most max bytes into text): 0, or -1 with d ("bisect: no stored bisect
 * 'ID' under ROOT" for noun "bisect"). */
int workflow_open(const char *root, const char *id, const char *noun, const char *file, size_t max, char **ret_dir,
		  char **ret_path, struct strbuf *text, struct diags *d);
/*
 * Kernel `name` built through w->build (none: 0, the run builds it). 0 when
 * built; 1 when it does not build on its own account, the compiler's first
 * error in *ret_why ("the kernel's failure (build): fs/x.c:1:2: error:
 * ..."); -1 with d for any other failure (a full disk, the compiler
 * killed, a build with no compiler's line): a resume tries again.
 */
int workflow_build_kernel(const struct workflow *w, const struct spec *s, const char *noun, const char *name,
			  char **ret_why, struct diags *d);
