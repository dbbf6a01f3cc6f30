/* SPDX-License-Identifier: MIT */
/*
 * lab: build base and patched kernels, boot them on the same machine shape,
 * run the same workloads on both and compare. This file holds the command
 * table; `lab --help`, the man page and bash completion follow it (a test
 * keeps them in sync).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "util/paths.h"
#include "util/strv.h"
#include "util/banned.h"

#ifndef LAB_VERSION
#define LAB_VERSION "0.1"
#endif

const struct cli_command commands[] = {
	{ "init", cmd_init, 0, 1, "[--force] [DIR]", "Write a commented lab.yaml and the folders it uses into DIR" },
	{ "validate", cmd_validate, 0, 1, "[FILE]", "Check lab.yaml: prints nothing and exits 0 when valid" },
	{ "plan", cmd_plan, 0, -1, "[EXPERIMENT...]", "List the runs experiments expand to, in execution order" },
	{ "kernel", cmd_kernel, 0, -1, "build|check|config|list|show [-e EXPERIMENT] [--jobs N] [--force] [VARIANT...]",
	  "Build, check and inspect kernel variants" },
	{ "image", cmd_image, 0, -1, "build|list|show|instance [--refresh] [--packages] [NAME...] [DIR]",
	  "Build, list and inspect guest images; prepare a VM's overlay and seed" },
	{ "vm", cmd_vm, 0, -1, "up|ssh|cp|console|reset|down|ls|xml [--kernel VARIANT] [--image NAME] [--name NAME] [-e EXPERIMENT] ...",
	  "Boot a kernel variant on a topology and drive it (libvirt)" },
	{ "host", cmd_host, 0, -1, "trust|check|facts|restore HOST, boot HOST VARIANT [--via kexec|grub] [--cmdline ARGS] [--timeout T]",
	  "Bare-metal hosts over SSH: pin the key, check what lab needs, read CPUs and NUMA nodes, kexec a variant" },
	{ "run", cmd_run, 0, -1, "[-j N] [--oversubscribe] [--resume RUN_ID] [EXPERIMENT...]",
	  "Run experiments (N guests at a time, each on its own host CPUs) and store results" },
	{ "ls", cmd_ls, 0, 0, "", "List stored runs (from the result index)" },
	{ "report", cmd_report, 0, -1, "RUN_ID [--format text|md|html|json] [--all]", "Compare the variants of a stored run" },
	{ "compare", cmd_compare, 0, -1, "RUN_A RUN_B [--format text|md|json] [--all]",
	  "Compare two stored runs, kernel by kernel (RUN_A is the baseline)" },
	{ "bundle", cmd_bundle, 0, -1, "RUN_ID [-o FILE]", "Pack a stored run, its reports and a MANIFEST into a .tar.zst" },
	{ "fetch", cmd_fetch, 0, -1, "RUN_ID|PATH|-|ssh://HOST/RUN_ID [-o DIR] [--replace] [--max-size SIZE]",
	  "Bring a bundle in, check every checksum, unpack it safely and index it" },
	{ "doctor", cmd_doctor, 0, -1, "",
	  "Check this machine for what lab needs (KVM or TCG, libvirt, QEMU, build and image tools, disk, cgroup v2)" },
	{ "gc", cmd_gc, 0, -1, "[--dry-run] [--reindex]",
	  "Remove what a killed lab left behind (VMs, unfinished image builds); --reindex rebuilds the result index" },
};
const size_t ncommands = ELEMENTSOF(commands);

static void usage(FILE *out)
{
	fprintf(out,
		"usage: lab [-f FILE] [-C DIR] [--set NAME=VALUE] [--kernels LIST] [--json] [-v|-q] <command> [args]\n"
		"       lab --help | --version | help <command>\n"
		"\n"
		"Global options:\n"
		"  -f, --file FILE   experiment file (default: ./lab.yaml)\n"
		"  -C DIR            run as if started in DIR\n"
		"      --set NAME=VALUE  give a variable of lab.yaml's vars: another value\n"
		"      --kernels A,B,...  experiments compare only these variants (or sweep steps NAME@N)\n"
		"      --json        machine-readable output; errors as {\"error\": ...}\n"
		"  -v, --verbose     more detail\n"
		"  -q, --quiet       only errors\n"
		"  -h, --help        this help\n"
		"      --version     print the version\n"
		"\n"
		"Commands:\n");
	for (size_t i = 0; i < ncommands; i++)
		fprintf(out, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(out,
		"\n"
		"Exit status: 0 ok, 1 a run failed or an expectation was not met, 2 bad input or usage.\n"
		"See lab(1) for lab.yaml and the commands.\n");
}

static void ctx_release(struct lab_ctx *ctx)
{
	strv_release(&ctx->set);
	strv_release(&ctx->kernels);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "set", required_argument, NULL, 's' },
		{ "kernels", required_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	_cleanup_(ctx_release) struct lab_ctx ctx = { .file = "lab.yaml" };
	const struct cli_command *cmd;
	const char *name;
	int c;

	opterr = 0;
	/* a closed pipe must not kill lab in the middle of a teardown: writes fail instead */
	signal(SIGPIPE, SIG_IGN);
	while ((c = getopt_long(argc, argv, "+f:C:vqh", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			ctx.file = optarg;
			ctx.file_given = true;
			break;
		case 's':
			strv_push(&ctx.set, optarg);
			break;
		case 'k':
			strv_split(&ctx.kernels, optarg, ',');
			break;
		case 'C':
			if (chdir(optarg) < 0) {
				cmd_error(&ctx, "cannot change to '%s': %s", optarg, strerror(errno));
				return EXIT_USAGE;
			}
			break;
		case 'j':
			ctx.json = true;
			break;
		case 'v':
			ctx.verbosity++;
			break;
		case 'q':
			ctx.verbosity = -1;
			break;
		case 'h':
			usage(stdout);
			return EXIT_OK;
		case 'V':
			printf("lab %s\n", LAB_VERSION);
			return EXIT_OK;
		case ':':
			cmd_error(&ctx, "option '%s' needs an argument", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			cmd_error(&ctx, "unknown option '%s' (see 'lab --help')", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return EXIT_USAGE;
	}
	name = argv[optind];
	if (streq(name, "help")) {
		if (optind + 1 < argc && (cmd = command_find(argv[optind + 1]))) {
			command_usage(cmd, stdout);
			return EXIT_OK;
		}
		if (optind + 1 < argc) {
			cmd_error(&ctx, "no command '%s'", argv[optind + 1]);
			return EXIT_USAGE;
		}
		usage(stdout);
		return EXIT_OK;
	}
	cmd = command_find(name);
	if (!cmd) {
		const char *names[ELEMENTSOF(commands)];
		const char *hint;

		for (size_t i = 0; i < ncommands; i++)
			names[i] = commands[i].name;
		hint = str_suggest(name, names, ncommands);
		if (hint)
			cmd_error(&ctx, "no command '%s' (did you mean '%s'?)", name, hint);
		else
			cmd_error(&ctx, "no command '%s' (see 'lab --help')", name);
		return EXIT_USAGE;
	}
	/* without a home, the cache and the state have no private place: no /tmp fallback */
	if (!paths_have_home()) {
		cmd_error(&ctx, "HOME is not set and uid %u has no home in the passwd database: set HOME, "
				"or XDG_CACHE_HOME and XDG_STATE_HOME",
			  (unsigned)geteuid());
		return EXIT_USAGE;
	}
	return cmd->fn(&ctx, argc - optind, argv + optind);
}
