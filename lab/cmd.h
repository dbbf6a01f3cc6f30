/* SPDX-License-Identifier: MIT */
/*
 * The command layer: each `lab <noun>` is a function in lab/cmd-<noun>.c
 * that parses its arguments, calls the library layers and prints. Only
 * this layer prints or decides exit codes.
 */
#pragma once

#include <stdbool.h>
#include "util/diag.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "spec/spec.h"

enum {
	EXIT_OK = 0,
	EXIT_FAILED = 1, /* a run failed or an expectation was not met */
	EXIT_USAGE = 2,  /* bad input or usage */
};

struct lab_ctx {
	const char *file; /* -f, default lab.yaml */
	bool file_given;
	bool json;
	int verbosity; /* -1 quiet, 0 normal, 1+ verbose */
	struct strv set; /* --set NAME=VALUE overrides of lab.yaml's vars */
	struct strv kernels; /* --kernels: the variants experiments are cut down to */
};

struct cli_command {
	const char *name;
	int (*fn)(struct lab_ctx *ctx, int argc, char **argv);
	int min_args, max_args; /* positional arguments; -1: unlimited */
	const char *args;       /* synopsis after the name */
	const char *summary;
};

extern const struct cli_command commands[];
extern const size_t ncommands;

int cmd_init(struct lab_ctx *ctx, int argc, char **argv);
int cmd_validate(struct lab_ctx *ctx, int argc, char **argv);
int cmd_doctor(struct lab_ctx *ctx, int argc, char **argv);
int cmd_plan(struct lab_ctx *ctx, int argc, char **argv);
int cmd_kernel(struct lab_ctx *ctx, int argc, char **argv);
int cmd_image(struct lab_ctx *ctx, int argc, char **argv);
int cmd_vm(struct lab_ctx *ctx, int argc, char **argv);
int cmd_host(struct lab_ctx *ctx, int argc, char **argv);
int cmd_gc(struct lab_ctx *ctx, int argc, char **argv);
int cmd_run(struct lab_ctx *ctx, int argc, char **argv);
int cmd_report(struct lab_ctx *ctx, int argc, char **argv);
int cmd_ls(struct lab_ctx *ctx, int argc, char **argv);
int cmd_bundle(struct lab_ctx *ctx, int argc, char **argv);
int cmd_compare(struct lab_ctx *ctx, int argc, char **argv);
int cmd_fetch(struct lab_ctx *ctx, int argc, char **argv);

/* Shared helpers of the command layer (lab/cmd-common.c). */
struct subcommand {
	const char *name;
	int (*fn)(struct lab_ctx *ctx, int argc, char **argv);
};
/* `lab NOUN SUB ...`: usage without SUB, a list of SUBs for an unknown one. */
int cmd_dispatch(struct lab_ctx *ctx, const char *noun, const struct subcommand *subs, size_t n, int argc,
		 char **argv);
void cmd_error(const struct lab_ctx *ctx, const char *fmt, ...) _printf_(2, 3);
/* Print sorted diagnostics: stderr as text, or a JSON error object on stdout. */
void cmd_report_diags(const struct lab_ctx *ctx, struct diags *d);
void cmd_write(const struct strbuf *sb);
/* Parse the common per-command options (--json, -h); returns the index of the first operand or -1. */
int cmd_parse_options(struct lab_ctx *ctx, const struct cli_command *cmd, int argc, char **argv);
const struct cli_command *command_find(const char *name);
void command_usage(const struct cli_command *cmd, FILE *out);
/* Load ctx->file; on failure the errors are already reported. */
int cmd_load_spec(const struct lab_ctx *ctx, const char *path, struct spec **ret);
/* Index of `name` among `names`, or -1 after "no WHAT 'name' in FILE; did you mean ...". */
long cmd_lookup(const struct lab_ctx *ctx, const char *what, const char *name, const char *const *names, size_t n,
		const char *file);
const struct spec_image *cmd_find_image(const struct lab_ctx *ctx, const struct spec *s, const char *name);
/* The results folder: lab.yaml's settings.results, else <its folder>/results; ./results without a spec. */
char *cmd_results_dir(const struct spec *s);
/* The same for commands that work without lab.yaml: ./results then; NULL after a reported error. */
char *cmd_results_root(const struct lab_ctx *ctx);
/* The folder of the one stored run named in args (an id or a path), or NULL after an error. */
char *cmd_stored_run(const struct lab_ctx *ctx, const char *noun, int nargs, char **args);
/* lab's guest layer (images/layer) in the shipped data. */
char *lab_layer_dir(void);
/* Where lab's shipped data (lab.yaml, workloads/, kernels/, images/) lives. */
char *lab_datadir(void);
