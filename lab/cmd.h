/* SPDX-License-Identifier: MIT */
/*
 * The command layer: each `lab <noun>` is a function in lab/cmd-<noun>.c
 * that parses its arguments, calls the library layers and prints. Only
 * this layer prints or decides exit codes.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
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

/*
 * Options are declared once, in a table per command (git's parse-options):
 * cmd_options_parse() parses argv with it, `--help`, `lab help --options`
 * (from which docs/lab.1's OPTIONS and the bash completion are generated)
 * print it. Each entry says where its value goes: `offset` into the
 * command's own options struct, whose type the entry's type fixes.
 */
enum lab_option_type {
	OPT_END = 0,
	OPT_FLAG,     /* bool: true */
	OPT_STRING,   /* const char *: the argument, the last one given */
	OPT_UINT,     /* unsigned: a number from min to max */
	OPT_SIZE,     /* uint64_t: bytes (16G), at least min */
	OPT_DURATION, /* uint64_t: microseconds (10m), at least min */
	OPT_CHOICE,   /* const char *: one of `choices` ("kvm|tcg") */
	OPT_CPULIST,  /* const char *: a host cpu list (2-3,8) */
	OPT_LIST,     /* struct strv: each use appends; at most max uses when max */
	OPT_CSV,      /* struct strv: comma-separated values, appended */
	OPT_COUNT,    /* int: += 1 */
	OPT_SET_INT,  /* int: = min */
	OPT_JSON,     /* the global --json, also accepted after the command: ctx->json */
};

struct lab_option {
	const char *long_name; /* without "--"; NULL when there is only a short name */
	char short_name;       /* 0: none */
	enum lab_option_type type;
	size_t offset;
	const char *arg_name; /* NULL for options without an argument */
	const char *help;
	const char *subs;     /* the subcommands it goes with, space-separated; NULL: all */
	long min, max;
	const char *choices;
	const char *what; /* what a value is, for errors ("a number of guests at a time"); NULL: from the type */
};

#define OPT(st, field, type_, short_, long_, arg_, help_, ...)                                                   \
	{ .long_name = long_, .short_name = short_, .type = type_, .offset = offsetof(st, field), .arg_name = arg_, \
	  .help = help_, __VA_ARGS__ }
#define OPT_JSON_ENTRY { .long_name = "json", .type = OPT_JSON, .help = "the global --json, given after the command" }

/* Options only before the first operand (later ones are operands), else anywhere (GNU getopt's order). */
enum { OPTS_ANYWHERE = 0, OPTS_FIRST = 1 };

struct cli_command {
	const char *name;
	int (*fn)(struct lab_ctx *ctx, int argc, char **argv);
	int min_args, max_args; /* positional arguments; -1: unlimited */
	const char *args;       /* synopsis after the name */
	const char *summary;
	const struct lab_option *options; /* ends with { 0 }; NULL: only --json and --help */
	const char *const *subs;          /* subcommand names, NULL-terminated; NULL: none */
};

extern const struct cli_command commands[];
extern const size_t ncommands;
extern const struct lab_option global_options[];

/* The options tables of the commands (lab/cmd-*.c). */
extern const struct lab_option init_options[], kernel_options[], image_options[], vm_options[], host_options[],
	run_options[], plan_options[], calibrate_options[], bisect_options[], track_options[], report_options[], compare_options[], bundle_options[], fetch_options[],
	gc_options[], judge_options[], doctor_options[], site_options[], snapshot_options[],
	reproduce_options[];
extern const char *const kernel_subs[], *const image_subs[], *const vm_subs[], *const host_subs[], *const snapshot_subs[];

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
int cmd_shard(struct lab_ctx *ctx, int argc, char **argv);
int cmd_report(struct lab_ctx *ctx, int argc, char **argv);
int cmd_calibrate(struct lab_ctx *ctx, int argc, char **argv);
int cmd_bisect(struct lab_ctx *ctx, int argc, char **argv);
int cmd_track(struct lab_ctx *ctx, int argc, char **argv);
int cmd_ls(struct lab_ctx *ctx, int argc, char **argv);
int cmd_bundle(struct lab_ctx *ctx, int argc, char **argv);
int cmd_compare(struct lab_ctx *ctx, int argc, char **argv);
/* lab compare's temporary folder in $TMPDIR (util/tempdir.h), for lab gc */
#define COMPARE_TMP_PREFIX "lab-compare-"
int cmd_fetch(struct lab_ctx *ctx, int argc, char **argv);
int cmd_judge(struct lab_ctx *ctx, int argc, char **argv);
int cmd_site(struct lab_ctx *ctx, int argc, char **argv);
int cmd_snapshot(struct lab_ctx *ctx, int argc, char **argv);
struct snapshot;
/* A run folder's snapshot, read and every object checked: EXIT_OK, or the
 * exit code after the error (or, for a run without one, what it lacks) was said. */
int cmd_snapshot_open(const struct lab_ctx *ctx, const char *dir, struct snapshot *ret);
/* What a run folder without a snapshot lacks, said; EXIT_USAGE (the input lacks it). */
int cmd_snapshot_missing(const struct lab_ctx *ctx, const char *dir);
/* The run's snapshot (opened: cmd_snapshot_open) checked out into a fresh
 * private folder *ret_tmp = <parent>/lab-<what>-XXXXXX (remove it after),
 * the project in *ret_tmp/project; *ret_spec: lab.yaml's path inside it.
 * The run's --set and --kernels go into ctx unless some were given.
 * EXIT_OK, or the exit code after the error was said. */
int cmd_snapshot_project(struct lab_ctx *ctx, const char *dir, const struct snapshot *snap, const char *parent,
			 const char *what, char **ret_tmp, char **ret_spec);
/* What the lab.yaml of a checkout of snap may name, from inside the checkout's project folder (root "."). */
void cmd_snapshot_confine(const struct snapshot *snap, struct spec_confine *ret);
int cmd_reproduce(struct lab_ctx *ctx, int argc, char **argv);

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
/* What a command made: its path on a line (not with -q), or {"KEY": path} with --json. */
void cmd_print_path(const struct lab_ctx *ctx, const char *key, const char *path);
/* lab bundle's bundle of the stored run in dir (its reports and MANIFEST
 * included) to the file out, or to out_fd when it is >= 0: 0, or -1 said. */
int cmd_bundle_pack(const struct lab_ctx *ctx, const char *dir, const char *out, int out_fd);
struct table;
/* A listing: the table as JSON with --json, else as text; to stdout. */
void cmd_write_table(const struct lab_ctx *ctx, const struct table *t);
struct comparison;
/* Whether the comparison must be refused: its runs' environments differ in
 * what matters (result/mixed.h) and allow (--allow-mixed) is not set; then
 * the error, listing the differences, is said. */
bool cmd_refuse_mixed(const struct lab_ctx *ctx, const char *noun, const struct comparison *c, bool allow);
/* Print {"KEY": "VALUE", ...} (a NULL value: null) for KEY, VALUE, ..., NULL: a command's summary under --json. */
void cmd_json_strings(const char *key, ...) __attribute__((sentinel));
/*
 * Parse argv[1..argc) with the options table of `noun` (`sub`: its
 * subcommand or NULL) into `values`; every command also takes --json and
 * -h/--help. Operands are moved, in order, to the end of argv. Returns the
 * index of the first operand; -1 after a reported error (exit 2); -2 after
 * --help was printed (exit 0).
 */
int cmd_options_parse(struct lab_ctx *ctx, const char *noun, const char *sub, unsigned flags, int argc, char **argv,
		      void *values);
/* The same with a table of one's own (main's global options): errors say "lab". */
int options_parse(struct lab_ctx *ctx, const char *who, const struct lab_option *opts, const char *sub,
		  unsigned flags, int argc, char **argv, void *values);
/* cmd_options_parse for commands without options of their own and the table's argument counts. */
int cmd_parse_options(struct lab_ctx *ctx, const struct cli_command *cmd, int argc, char **argv);
/* The exit status of a command whose parse returned r < 0: EXIT_OK after
 * --help was printed (-2), EXIT_USAGE after a reported error (-1). */
int cmd_options_exit(int r);
/* "  -e, --experiment EXPERIMENT  help" lines of cmd's options (with --json and -h), NULL: the global ones. */
void options_format_help(const struct cli_command *cmd, struct strbuf *out);
/* Every table (global first) as text lines or, json, as one JSON array: `lab help --options`. */
void options_format_all(bool json, struct strbuf *out);
const struct cli_command *command_find(const char *name);
void command_usage(const struct cli_command *cmd, FILE *out);
/* Load ctx->file; on failure the errors are already reported. */
int cmd_load_spec(const struct lab_ctx *ctx, const char *path, struct spec **ret);
/* cmd_load_spec of a snapshot's lab.yaml: it and its recipes may name only what cf lists (spec.h). */
int cmd_load_spec_confined(const struct lab_ctx *ctx, const char *path, const struct spec_confine *cf,
			   struct spec **ret);
/* Index of `name` among `names`, or -1 after "no WHAT 'name' in FILE; did you mean ...". */
long cmd_lookup(const struct lab_ctx *ctx, const char *what, const char *name, const char *const *names, size_t n,
		const char *file);
const struct spec_image *cmd_find_image(const struct lab_ctx *ctx, const struct spec *s, const char *name);
/* The results folder: lab.yaml's settings.results, else <its folder>/results; ./results without a spec. */
char *cmd_results_dir(const struct spec *s);
/* The experiments to run for the names given, into ret: one with a
 * without-kvm stand-in is replaced by it where KVM does not work here
 * (unless as_declared), and stderr says so and why. Unknown names are
 * kept for the planner to report. */
void cmd_stand_ins(const struct lab_ctx *ctx, const struct spec *s, int n, char **names, bool as_declared,
		   struct strv *ret);
struct result_set;
/* lab run's engine call with its progress line and events on stderr:
 * experiment e, a new run or the one in resume_dir; 0 with *ret_rs. */
int cmd_engine_run(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
		   const char *resume_dir, unsigned jobs, bool oversubscribe, struct result_set **ret_rs);
/* The same, telling `started` the run's id as soon as its folder exists. */
struct cmd_engine_hook {
	void (*started)(void *userdata, const char *id);
	void *userdata;
	const char *root; /* the results folder; NULL: lab.yaml's */
	const char *engine; /* lab run --engine: the engine: section's type overridden (NULL: as it says) */
};
int cmd_engine_run_hooked(const struct lab_ctx *ctx, const struct spec *s, const struct spec_experiment *e,
			  const char *resume_dir, unsigned jobs, bool oversubscribe, const struct cmd_engine_hook *hook,
			  struct result_set **ret_rs);
/*
 * A workflow's way into lab (engine/workflow.h), as a command gives it:
 * run is lab run's engine call with its progress on stderr (jobs,
 * oversubscribe as given), load_spec loads ctx->file with ctx's --set and
 * --kernels, say writes "lab: NOUN: LINE" on stderr, escaped (not with -q).
 * cw must outlive w.
 */
struct cmd_workflow {
	const struct lab_ctx *ctx;
	const char *noun;
	unsigned jobs;
	bool oversubscribe;
};
struct workflow;
void cmd_workflow_init(struct cmd_workflow *cw, struct workflow *w);
/* A library's errors said: a message without a place as the command's own
 * ("lab: MSG", cmd_error), the rest as cmd_report_diags. */
void cmd_report_errors(const struct lab_ctx *ctx, struct diags *d);
/* The same for commands that work without lab.yaml: ./results then; NULL after a reported error. */
char *cmd_results_root(const struct lab_ctx *ctx);
/* The folder of the one stored run named in args (an id or a path), or NULL after an error. */
char *cmd_stored_run(const struct lab_ctx *ctx, const char *noun, int nargs, char **args);
/*
 * The exit status of a library call that failed with r (a negative errno)
 * reading data lab was given: EXIT_FAILED when the machine failed (no
 * space, an I/O error, no memory, a read-only disk), EXIT_USAGE for the
 * data itself (malformed, hostile, too large, missing, already there). The
 * rule (lab(1) EXIT STATUS): 2 for bad input, 1 for a verdict, a refused
 * comparison, a failed run or a failure of the machine.
 */
int cmd_exit_of(int r);
