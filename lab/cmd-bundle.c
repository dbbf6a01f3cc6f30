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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd.h"
#include "result/compare.h"
#include "result/report.h"
#include "store/bundle.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/json.h"
#include "util/path.h"
#include "util/units.h"
#include "util/banned.h"

static int pack(const struct lab_ctx *ctx, const char *dir, const char *out, int out_fd)
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
	c = compare_build(rs);
	report_format_text(c, &all, &txt);
	report_format_md(c, &all, &md);
	report_format_json(c, NULL, &js);
	report_format_html(c, &all, &html);
	/* in bundle_reports' order: what bundle_same_run leaves out */
	struct bundle_extra extra[] = {
		{ bundle_reports[0], &html },
		{ bundle_reports[1], &txt },
		{ bundle_reports[2], &md },
		{ bundle_reports[3], &js },
	};
	if (bundle_write(dir, extra, ELEMENTSOF(extra), out, out_fd, &d) < 0) {
		cmd_report_diags(ctx, &d);
		return -1;
	}
	return 0;
}

/* What bundle and fetch made: its path on a line, or {"KEY": path} with --json. */
static void print_result(const struct lab_ctx *ctx, const char *key, const char *path)
{
	_cleanup_strbuf_ struct strbuf out = STRBUF_INIT;

	if (ctx->json) {
		struct json j;

		json_init(&j, &out, true);
		json_object_begin(&j);
		json_kv_string(&j, key, path);
		json_object_end(&j);
		json_finish(&j);
	} else if (ctx->verbosity >= 0) {
		strbuf_addf(&out, "%s\n", path);
	}
	cmd_write(&out);
}

struct bundle_opts {
	const char *output;
};

const struct lab_option bundle_options[] = {
	OPT(struct bundle_opts, output, OPT_STRING, 'o', "output", "FILE",
	    "the archive (default RUN_ID.tar.zst; .tar.gz: gzip; -: standard output)"),
	{ 0 },
};

int cmd_bundle(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *dir = NULL, *out = NULL;
	struct bundle_opts o = { 0 };
	int first = cmd_options_parse(ctx, "bundle", NULL, OPTS_ANYWHERE, argc, argv, &o);

	if (first < 0)
		return cmd_options_exit(first);
	out = o.output ? xstrdup(o.output) : NULL;
	if (!(dir = cmd_stored_run(ctx, "bundle", argc - first, argv + first)))
		return EXIT_USAGE;
	if (!out) {
		_cleanup_free_ char *id = path_basename(dir);

		out = xasprintf("%s.tar.zst", id);
	}
	if (pack(ctx, dir, out, -1) < 0)
		return EXIT_FAILED;
	if (!streq(out, "-"))
		print_result(ctx, "bundle", out);
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

/* An unnamed file in dir (O_TMPFILE): nothing to plant a link at, gone
 * when closed. Where the file system has no O_TMPFILE, a random O_EXCL name
 * removed at once does the same. */
static int scratch_file(const struct lab_ctx *ctx, const char *dir)
{
	int fd = open(dir, O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);

	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		_cleanup_free_ char *p = xasprintf("%s/.fetch-XXXXXX", dir);

		if ((fd = mkostemp(p, O_CLOEXEC)) >= 0)
			unlink(p);
	}
	if (fd < 0)
		cmd_error(ctx, "cannot create a scratch file in %s: %s", dir, strerror(errno));
	return fd;
}

/* The remote host's `lab bundle RUN_ID -o -` into fd. */
static int fetch_remote(const struct lab_ctx *ctx, const char *src, int fd)
{
	_cleanup_command_ struct command cmd = { 0 };
	_cleanup_free_ char *dest = NULL, *rid = NULL;
	_cleanup_strbuf_ struct strbuf err = STRBUF_INIT;
	unsigned port;
	int r;

	if (parse_remote(src, &dest, &port, &rid) < 0) {
		cmd_error(ctx, "fetch: '%s' is not ssh://[USER@]HOST[:PORT]/RUN_ID", src);
		return EXIT_USAGE;
	}
	command_init(&cmd, "ssh");
	command_argf(&cmd, "-p%u", port);
	command_args(&cmd, "-o", "BatchMode=yes", "--", dest, "lab", "bundle", rid, "-o", "-", NULL);
	cmd.out_fd = fd;
	cmd.err = &err;
	r = command_run(&cmd);
	if (r != 0) {
		cmd_error(ctx, "fetch: `lab bundle %s` on %s failed (exit %d): %s", rid, dest, r, err.buf ? err.buf : "");
		return EXIT_FAILED;
	}
	return EXIT_OK;
}

struct fetch_opts {
	const char *output;
	bool replace;
	uint64_t max_size;
};

const struct lab_option fetch_options[] = {
	OPT(struct fetch_opts, output, OPT_STRING, 'o', "output", "DIR", "where the run goes (default: the results folder)"),
	OPT(struct fetch_opts, replace, OPT_FLAG, 0, "replace", NULL, "exchange a stored run of the same id"),
	OPT(struct fetch_opts, max_size, OPT_SIZE, 0, "max-size", "SIZE", "stop unpacking past SIZE bytes (default 16G)",
	    .min = 1),
	{ 0 },
};

/* The bundle of src (ssh://, -, a file or a stored run) as a readable fd at its start; an exit code. */
static int fetch_source(const struct lab_ctx *ctx, const char *src, const char *root, const char *into, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	int r;

	if (str_startswith(src, "ssh://")) {
		if ((fd = scratch_file(ctx, into)) < 0)
			return EXIT_FAILED;
		if ((r = fetch_remote(ctx, src, fd)) != EXIT_OK)
			return r;
	} else if (streq(src, "-")) {
		fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	} else if (path_is_file(src)) {
		if ((fd = open(src, O_RDONLY | O_CLOEXEC)) < 0) {
			cmd_error(ctx, "fetch: cannot open %s: %s", src, strerror(errno));
			return EXIT_FAILED;
		}
	} else {
		_cleanup_free_ char *dir = store_find(root, src);

		if (!dir) {
			cmd_error(ctx, "fetch: '%s' is neither a bundle file nor a stored run under %s", src, root);
			return EXIT_USAGE;
		}
		if ((fd = scratch_file(ctx, into)) < 0)
			return EXIT_FAILED;
		if (pack(ctx, dir, "bundle.tar.zst", fd) < 0)
			return EXIT_FAILED;
	}
	if (fd < 0 || lseek(fd, 0, SEEK_SET) < 0) {
		if (fd < 0 || errno != ESPIPE) {
			cmd_error(ctx, "fetch: cannot read %s: %s", src, strerror(errno));
			return EXIT_FAILED;
		}
	}
	*ret_fd = TAKE_FD(fd);
	return EXIT_OK;
}

int cmd_fetch(struct lab_ctx *ctx, int argc, char **argv)
{
	_cleanup_free_ char *into = NULL, *id = NULL, *root = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_close_ int fd = -1;
	struct bundle_limits lim = BUNDLE_LIMITS_DEFAULT;
	struct fetch_opts o = { 0 };
	const char *src;
	int r, first = cmd_options_parse(ctx, "fetch", NULL, OPTS_ANYWHERE, argc, argv, &o);

	if (first < 0)
		return cmd_options_exit(first);
	if (o.max_size)
		lim.max_bytes = o.max_size;
	if (argc - first != 1) {
		cmd_error(ctx, "fetch: name one run: RUN_ID, a bundle file, or ssh://HOST/RUN_ID");
		return EXIT_USAGE;
	}
	src = argv[first];
	if (!(root = cmd_results_root(ctx)))
		return EXIT_USAGE;
	into = xstrdup(o.output ? o.output : root);
	if ((r = path_mkdir_p(into, 0755)) < 0) {
		cmd_error(ctx, "cannot create %s: %s", into, strerror(-r));
		return EXIT_FAILED;
	}
	if ((r = fetch_source(ctx, src, root, into, &fd)) != EXIT_OK)
		return r;
	if ((r = bundle_import(fd, src, into, o.replace, &lim, &id, &d)) < 0) {
		cmd_report_diags(ctx, &d);
		return cmd_exit_of(r);
	}
	{
		_cleanup_free_ char *dir = path_join(into, id);

		print_result(ctx, "run", dir);
	}
	return EXIT_OK;
}
