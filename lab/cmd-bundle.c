/* SPDX-License-Identifier: MIT */
/*
 * lab bundle RUN_ID [-o FILE]: a stored run, its reports and a MANIFEST in
 * one .tar.zst (or .tar.gz by name; "-" writes to stdout).
 * lab fetch RUN_ID|PATH|ssh://[USER@]HOST[:PORT]/RUN_ID [-o DIR] [--replace]:
 * a bundle from the local store, a file, or a remote lab host (its `lab
 * bundle RUN_ID -o -` over ssh), checked and unpacked into DIR (the results
 * folder by default) and indexed there, so `lab report` works on it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "result/compare.h"
#include "result/report.h"
#include "run/bundle.h"
#include "run/index.h"
#include "run/store.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/path.h"
#include "util/banned.h"

static int pack(const struct lab_ctx *ctx, const char *dir, const char *out)
{
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_comparison_ struct comparison *c = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_strbuf_ struct strbuf txt = STRBUF_INIT, md = STRBUF_INIT, js = STRBUF_INIT, html = STRBUF_INIT;
	struct report_opts all = { .all = true };

	if (store_load(dir, &rs, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	c = compare_build(rs, 0.95);
	report_format_text(c, &all, &txt);
	report_format_md(c, &all, &md);
	report_format_json(c, &js);
	report_format_html(c, &all, &html);
	struct bundle_extra extra[] = {
		{ "report.html", &html },
		{ "report.txt", &txt },
		{ "report.md", &md },
		{ "report.json", &js },
	};
	if (bundle_write(dir, extra, ELEMENTSOF(extra), out, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	return 0;
}

int cmd_bundle(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	_cleanup_free_ char *dir = NULL, *out = NULL;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			free(out);
			out = xstrdup(optarg);
			break;
		case 'h':
			command_usage(command_find("bundle"), stdout);
			return EXIT_OK;
		default:
			cmd_error(ctx, "bundle: unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (!(dir = cmd_stored_run(ctx, "bundle", argc - optind, argv + optind)))
		return EXIT_USAGE;
	if (!out) {
		const char *id = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;

		out = xasprintf("%s.tar.zst", id);
	}
	if (pack(ctx, dir, out) < 0)
		return EXIT_FAILED;
	if (!streq(out, "-") && ctx->verbosity >= 0)
		printf("%s\n", out);
	return EXIT_OK;
}

/* ssh://[user@]host[:port]/RUN_ID -> ssh argv pieces. */
static int parse_remote(const char *url, char **dest, unsigned *port, char **id)
{
	const char *rest = url + strlen("ssh://"), *slash = strchr(rest, '/'), *colon;
	_cleanup_free_ char *hostpart = NULL;

	if (!slash || slash == rest || !slash[1] || strchr(slash + 1, '/'))
		return -EINVAL;
	hostpart = xstrndup(rest, (size_t)(slash - rest));
	colon = strrchr(hostpart, ':');
	*port = 22;
	if (colon) {
		char *end;
		unsigned long p = strtoul(colon + 1, &end, 10);

		if (*end || !p || p > 65535)
			return -EINVAL;
		*port = (unsigned)p;
		hostpart[colon - hostpart] = '\0';
	}
	if (!*hostpart || hostpart[0] == '-' || !str_is_name(slash + 1))
		return -EINVAL;
	*dest = TAKE_PTR(hostpart);
	*id = xstrdup(slash + 1);
	return 0;
}

int cmd_fetch(struct lab_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "replace", no_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	_cleanup_free_ char *into = NULL, *tmp = NULL, *id = NULL, *root = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	const char *src, *in;
	bool replace = false;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			free(into);
			into = xstrdup(optarg);
			break;
		case 'r':
			replace = true;
			break;
		case 'h':
			command_usage(command_find("fetch"), stdout);
			return EXIT_OK;
		default:
			cmd_error(ctx, "fetch: unknown option '%s'", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 1) {
		cmd_error(ctx, "fetch: name one run: RUN_ID, a bundle file, or ssh://HOST/RUN_ID");
		return EXIT_USAGE;
	}
	src = argv[optind];
	if (!(root = cmd_results_root(ctx)))
		return EXIT_USAGE;
	if (!into)
		into = xstrdup(root);
	if (path_mkdir_p(into, 0755) < 0) {
		cmd_error(ctx, "cannot create %s: %s", into, strerror(errno));
		return EXIT_FAILED;
	}
	in = src;
	if (str_startswith(src, "ssh://")) {
		_cleanup_command_ struct command cmd = { 0 };
		_cleanup_free_ char *dest = NULL, *rid = NULL;
		_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
		unsigned port;
		int fd, r;

		if (parse_remote(src, &dest, &port, &rid) < 0) {
			cmd_error(ctx, "fetch: '%s' is not ssh://[USER@]HOST[:PORT]/RUN_ID", src);
			return EXIT_USAGE;
		}
		tmp = xasprintf("%s/.fetch-%d.tar.zst", into, (int)getpid());
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			cmd_error(ctx, "cannot write %s: %s", tmp, strerror(errno));
			return EXIT_FAILED;
		}
		command_init(&cmd, "ssh");
		command_argf(&cmd, "-p%u", port);
		command_args(&cmd, "-o", "BatchMode=yes", "--", dest, "lab", "bundle", rid, "-o", "-", NULL);
		cmd.out_fd = fd;
		cmd.err = &err;
		r = command_run(&cmd);
		close(fd);
		if (r != 0) {
			cmd_error(ctx, "fetch: `lab bundle %s` on %s failed (exit %d): %s", rid, dest, r,
				  err.buf ? err.buf : "");
			unlink(tmp);
			return EXIT_FAILED;
		}
		in = tmp;
	} else if (!path_is_file(src)) {
		_cleanup_free_ char *dir = store_find(root, src);

		if (!dir) {
			cmd_error(ctx, "fetch: '%s' is neither a bundle file nor a stored run under %s", src, root);
			return EXIT_USAGE;
		}
		tmp = xasprintf("%s/.fetch-%d.tar.zst", into, (int)getpid());
		if (pack(ctx, dir, tmp) < 0)
			return EXIT_FAILED;
		in = tmp;
	}
	if (bundle_read(in, into, replace, &id, &d) < 0) {
		cmd_report_diags(ctx, &d);
		if (tmp)
			unlink(tmp);
		return EXIT_FAILED;
	}
	if (tmp)
		unlink(tmp);
	{
		_cleanup_free_ char *dir = path_join(into, id), *sum = NULL;
		_cleanup_result_set_ struct result_set *rs = NULL;

		if (store_load(dir, &rs, &d) < 0 || (sum = index_verdict_summary(rs), index_put(into, rs, sum, &d) < 0)) {
			cmd_report_diags(ctx, &d);
			return EXIT_FAILED;
		}
		if (ctx->verbosity >= 0)
			printf("%s\n", dir);
	}
	return EXIT_OK;
}
