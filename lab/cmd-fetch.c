/* SPDX-License-Identifier: MIT */
/*
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
#include "store/bundle.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/command.h"
#include "util/path.h"
#include "util/units.h"
#include "util/banned.h"

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
		if (cmd_bundle_pack(ctx, dir, "bundle.tar.zst", fd) < 0)
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

		cmd_print_path(ctx, "run", dir);
	}
	return EXIT_OK;
}
