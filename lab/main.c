/* SPDX-License-Identifier: MIT */
/*
 * lab: build base and patched kernels, boot them on the same machine shape,
 * run the same workloads on both and compare. This file holds the command
 * table; `lab --help`, the man page and bash completion follow it (a test
 * keeps them in sync).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "util/dirs.h"
#include "util/strv.h"
#include "util/banned.h"

#ifndef LAB_VERSION
#define LAB_VERSION "0.1"
#endif

const struct cli_command commands[] = {
	{ "init", cmd_init, 0, 1, "[--force] [DIR]", "Write a commented lab.yaml and the folders it uses into DIR", init_options, NULL },
	{ "validate", cmd_validate, 0, 1, "[FILE]", "Check lab.yaml: prints nothing and exits 0 when valid" },
	{ "plan", cmd_plan, 0, -1, "[--as-declared] [EXPERIMENT...]", "List the runs experiments expand to, in execution "
	  "order (an experiment's without-kvm stand-in where KVM does not work here)", plan_options, NULL },
	{ "kernel", cmd_kernel, 0, -1, "build|check|config|list|show [-e EXPERIMENT] [--jobs N] [--force] [VARIANT...]",
	  "Build, check and inspect kernel variants", kernel_options, kernel_subs },
	{ "image", cmd_image, 0, -1, "build|list|show|instance [--refresh] [--packages] [NAME...] [DIR]",
	  "Build, list and inspect guest images; prepare a VM's overlay and seed", image_options, image_subs },
	{ "vm", cmd_vm, 0, -1, "up|ssh|cp|console|reset|down|ls|xml [--kernel VARIANT] [--image NAME] [--name NAME] [-e EXPERIMENT] ...",
	  "Boot a kernel variant on a topology and drive it (libvirt)", vm_options, vm_subs },
	{ "host", cmd_host, 0, -1, "trust|check|facts|restore HOST, boot HOST VARIANT [--via kexec|grub] [--cmdline ARGS] [--timeout T]",
	  "Bare-metal hosts over SSH: pin the key, check what lab needs, read CPUs and NUMA nodes, kexec a variant", host_options, host_subs },
	{ "run", cmd_run, 0, -1, "[-j N] [--oversubscribe] [--resume RUN_ID] [--engine local|slurm] [--as-declared] [EXPERIMENT...]",
	  "Run experiments (N guests at a time, each on its own host CPUs) and store results", run_options, NULL },
	{ "reproduce", cmd_reproduce, 0, -1, "BUNDLE|RUN_DIR|RUN_ID [--repeat N] [--keep-checkout]",
	  "Make a stored run again from its snapshot alone (in any folder): kernels held to the recorded sources and "
	  ".configs, the same plan, a new run linked to it, and whether it reproduced", reproduce_options, NULL },
	{ "calibrate", cmd_calibrate, 0, -1, "EXPERIMENT [--boots N] [--runs-per-boot N] [-j N]",
	  "A/A runs of the baseline kernel: each metric's noise between and within boots, the false-positive rate "
	  "of lab's test here, the smallest change the budget can decide", calibrate_options, NULL },
	{ "bisect", cmd_bisect, 0, -1,
	  "EXPERIMENT --good KERNEL|REF --bad KERNEL|REF --metric METRIC [--threshold PERCENT] [--first-parent] | --resume ID",
	  "Find the patch of a series, or the commit of a git source, that moved a metric: each step decided with "
	  "sequential runs, or said undecided",
	  bisect_options, NULL },
	{ "track", cmd_track, 0, -1,
	  "EXPERIMENT --branch REF --since REF --metric METRIC [--step N] [--threshold PERCENT] | --resume ID | "
	  "--accept COMMIT --metric METRIC --why TEXT",
	  "Follow a branch of a git source: each tracked commit against the one before, the change points over the "
	  "whole series, each bisected to its culprit",
	  track_options, NULL },
	{ "ls", cmd_ls, 0, 0, "", "List stored runs (from the result index)" },
	{ "report", cmd_report, 0, -1, "RUN_ID [--format text|md|html|json] [--all] [--allow-mixed]", "Compare the variants of a stored run (of a track: the robot's report)", report_options, NULL },
	{ "site", cmd_site, 0, -1, "DIR [--all] [--allow-mixed]",
	  "Write static pages for every stored run into DIR: an index, each run's report, each experiment's "
	  "declared metrics over time", site_options, NULL },
	{ "compare", cmd_compare, 0, -1, "RUN_OR_BUNDLE... [--format text|json] [--allow-mixed]",
	  "Compare stored runs or bundles side by side, where measured alike", compare_options, NULL },
	{ "judge", cmd_judge, 0, -1, "FILE.csv [--base NAME] [--expect METRIC:DIR[:MDE]]... [--alpha A] [--q Q] [--statistic S] [--all] [--fingerprint VARIANT=FILE]... [--allow-mixed]",
	  "Judge results from anywhere (CSV: variant,boot,run,metric,value) with lab's decision engine", judge_options, NULL },
	{ "bundle", cmd_bundle, 0, -1, "RUN_ID [-o FILE]", "Pack a stored run, its reports and a MANIFEST into a .tar.zst", bundle_options, NULL },
	{ "snapshot", cmd_snapshot, 0, -1, "show RUN | checkout RUN DIR | write EXPERIMENT DIR [--kernel-config VARIANT=FILE] [--packages IMAGE=FILE]",
	  "A stored run's snapshot of what its lab.yaml names: list and check it, check it out into a project folder, "
	  "or (plumbing) write one", snapshot_options, snapshot_subs },
	{ "fetch", cmd_fetch, 0, -1, "RUN_ID|PATH|-|ssh://HOST/RUN_ID [-o DIR] [--replace] [--max-size SIZE]",
	  "Bring a bundle in, check every checksum, unpack it safely and index it", fetch_options, NULL },
	{ "doctor", cmd_doctor, 0, -1, "[--engine local|slurm]",
	  "Check this machine for what lab needs (KVM or TCG, libvirt, QEMU, build and image tools, disk, cgroup v2), "
	  "or the Slurm cluster of lab.yaml's engine: section and its nodes",
	  doctor_options, NULL },
	{ "gc", cmd_gc, 0, -1, "[--dry-run] [--reindex] [--keep-days N] [--max-size SIZE]",
	  "Remove what a killed lab left behind (VMs, unfinished image builds and bundle unpacks); --reindex rebuilds the result index; "
	  "--keep-days and --max-size prune the build cache", gc_options, NULL },
};
const size_t ncommands = ELEMENTSOF(commands);

/* Not for people, so not in --help: what a cluster node's array task runs (the job script lab writes). */
static const struct cli_command shard_command = {
	"shard", cmd_shard, 2, 2, "JOB_DIR SHARD", "Run one shard of a lab run on this cluster node",
};

/* What main() parses before the command; ctx is what the commands get. */
struct globals {
	struct lab_ctx ctx;
	struct strv dirs; /* -C, in order */
	bool help, version;
};

const struct lab_option global_options[] = {
	OPT(struct globals, ctx.file, OPT_STRING, 'f', "file", "FILE", "experiment file (default: ./lab.yaml)"),
	OPT(struct globals, dirs, OPT_LIST, 'C', NULL, "DIR", "run as if started in DIR"),
	OPT(struct globals, ctx.set, OPT_LIST, 0, "set", "NAME=VALUE", "give a variable of lab.yaml's vars: another value"),
	OPT(struct globals, ctx.kernels, OPT_CSV, 0, "kernels", "A,B,...",
	    "experiments compare only these variants (or sweep steps NAME@N)"),
	{ .long_name = "json", .type = OPT_JSON, .help = "machine-readable output; errors as {\"error\": ...}" },
	OPT(struct globals, ctx.verbosity, OPT_COUNT, 'v', "verbose", NULL, "more detail"),
	OPT(struct globals, ctx.verbosity, OPT_SET_INT, 'q', "quiet", NULL, "only errors", .min = -1),
	OPT(struct globals, help, OPT_FLAG, 'h', "help", NULL, "this help"),
	OPT(struct globals, version, OPT_FLAG, 0, "version", NULL, "print the version"),
	{ 0 },
};

static void usage(FILE *out)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "usage: lab [-f FILE] [-C DIR] [--set NAME=VALUE] [--kernels LIST] [--json] [-v|-q] <command> [args]\n"
			   "       lab --help | --version | help [--options] [<command>]\n"
			   "\n"
			   "Global options:\n");
	options_format_help(NULL, &sb);
	strbuf_addstr(&sb, "\nCommands:\n");
	for (size_t i = 0; i < ncommands; i++)
		strbuf_addf(&sb, "  %-10s %s\n", commands[i].name, commands[i].summary);
	strbuf_addstr(&sb, "\n"
			   "Exit status: 0 ok, 1 a run failed or an expectation was not met, 2 bad input or usage.\n"
			   "See lab(1) for lab.yaml and the commands; 'lab help --options' lists every command's options.\n");
	fwrite(sb.buf, 1, sb.len, out);
}

static void globals_release(struct globals *g)
{
	strv_release(&g->ctx.set);
	strv_release(&g->ctx.kernels);
	strv_release(&g->dirs);
}

/* -1 and the index of the command in *ret_cmd, or main's exit code when it is done. */
static int parse_globals(struct globals *g, int argc, char **argv, int *ret_cmd)
{
	int i = options_parse(&g->ctx, NULL, global_options, NULL, OPTS_FIRST, argc, argv, g);

	if (i < 0)
		return EXIT_USAGE;
	if (g->help) {
		usage(stdout);
		return EXIT_OK;
	}
	if (g->version) {
		printf("lab %s\n", LAB_VERSION);
		return EXIT_OK;
	}
	g->ctx.file_given = g->ctx.file != NULL;
	if (!g->ctx.file)
		g->ctx.file = "lab.yaml";
	for (size_t k = 0; k < g->dirs.n; k++)
		if (chdir(g->dirs.v[k]) < 0) {
			cmd_error(&g->ctx, "cannot change to '%s': %s", g->dirs.v[k], strerror(errno));
			return EXIT_USAGE;
		}
	if (i >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	*ret_cmd = i;
	return -1;
}

/* lab help [--options] [COMMAND] */
static int help_cmd(struct lab_ctx *ctx, int argc, char **argv)
{
	const struct cli_command *cmd;

	/* --json: the tables are what help has as a record */
	if ((argc > 1 && streq(argv[1], "--options")) || ctx->json) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		options_format_all(ctx->json, &sb);
		cmd_write(&sb);
		return EXIT_OK;
	}
	if (argc > 1 && (cmd = command_find(argv[1]))) {
		command_usage(cmd, stdout);
		return EXIT_OK;
	}
	if (argc > 1) {
		cmd_error(ctx, "no command '%s'", argv[1]);
		return EXIT_USAGE;
	}
	usage(stdout);
	return EXIT_OK;
}

static int no_command(const struct lab_ctx *ctx, const char *name)
{
	const char *names[ELEMENTSOF(commands)];
	const char *hint;

	for (size_t i = 0; i < ncommands; i++)
		names[i] = commands[i].name;
	hint = str_suggest(name, names, ncommands);
	if (hint)
		cmd_error(ctx, "no command '%s' (did you mean '%s'?)", name, hint);
	else
		cmd_error(ctx, "no command '%s' (see 'lab --help')", name);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	_cleanup_(globals_release) struct globals g = { 0 };
	const struct cli_command *cmd;
	int i = 0, r;

	/* a closed pipe must not kill lab in the middle of a teardown: writes fail instead */
	signal(SIGPIPE, SIG_IGN);
	if ((r = parse_globals(&g, argc, argv, &i)) >= 0)
		return r;
	if (streq(argv[i], "help"))
		return help_cmd(&g.ctx, argc - i, argv + i);
	if (streq(argv[i], shard_command.name))
		cmd = &shard_command;
	else if (!(cmd = command_find(argv[i])))
		return no_command(&g.ctx, argv[i]);
	/* without a home, the cache and the state have no private place: no /tmp fallback */
	if (!dirs_have_home()) {
		cmd_error(&g.ctx, "HOME is not set and uid %u has no home in the passwd database: set HOME, "
				  "or XDG_CACHE_HOME and XDG_STATE_HOME",
			  (unsigned)geteuid());
		return EXIT_USAGE;
	}
	return cmd->fn(&g.ctx, argc - i, argv + i);
}
