/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for util/tarball.c's extraction, which unpacks what a guest
 * sends back (its raw outputs, a tar it made) and the kernel source: any
 * bytes as a tar (possibly compressed) unpacked into a scratch folder,
 * with and without a stripped component. Never a crash, a leak, or a file
 * outside the scratch folder (three levels above it are checked after
 * every input); whatever was made inside is removed again.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "util/alloc.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/tarball.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *tmpdir;

static void remove_tmpdir(void)
{
	fs_remove_tree(tmpdir);
}

/* Only `want` (and "in.tar" at the top) may be in dir. */
static void check_only(const char *dir, const char *want)
{
	DIR *dh = opendir(dir);
	struct dirent *de;

	if (!dh)
		abort();
	while ((de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, want) &&
		    strcmp(de->d_name, "in.tar"))
			abort();
	closedir(dh);
}

/* The archive unpacks into tmpdir/a/b/into: a member that climbed out by
 * up to three levels, through a name or a link, shows in a, b or tmpdir. */
static void check_nothing_left(void)
{
	_cleanup_free_ char *a = path_join(tmpdir, "a"), *b = path_join(a, "b");

	check_only(tmpdir, "a");
	check_only(a, "b");
	check_only(b, "into");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	_cleanup_free_ char *tar = NULL, *into = NULL;

	if (!tmpdir) {
		char tmpl[] = "/tmp/lab-fuzz-tarball.XXXXXX";

		if (!mkdtemp(tmpl))
			abort();
		tmpdir = xstrdup(tmpl);
		atexit(remove_tmpdir);
	}
	tar = path_join(tmpdir, "in.tar");
	into = path_join(tmpdir, "a/b/into");
	if (fs_write_atomic(tar, (const char *)data, size, 0600) < 0)
		abort();
	for (unsigned strip = 0; strip < 2; strip++) {
		struct strbuf err = STRBUF_INIT;
		size_t members = 0;
		int dfd;

		if (path_mkdir_p(into, 0700) < 0 || (dfd = open(into, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			abort();
		(void)tarball_extract(tar, dfd, strip, &members, &err);
		close(dfd);
		strbuf_release(&err);
		/* what it made goes, through the same careful removal lab uses */
		if (fs_remove_tree(into) < 0 || path_mkdir_p(into, 0700) < 0)
			abort();
		check_nothing_left();
	}
	return 0;
}
