/* SPDX-License-Identifier: MIT */
/*
 * Fuzz target for bundle extraction: any bytes as a bundle (tar, possibly
 * compressed) unpacked into a scratch folder with small limits, then the
 * unpacked run loaded. Never a crash, a leak, or a file outside the
 * scratch folder (its parent is checked after every input).
 */
#include <dirent.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "store/bundle.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *scratch(void)
{
	static char *dir;

	if (!dir) {
		char tmpl[] = "/tmp/lab-fuzz-bundle.XXXXXX";

		if (!mkdtemp(tmpl))
			abort();
		dir = xasprintf("%s/into", tmpl);
		if (path_mkdir_p(dir, 0700) < 0)
			abort();
	}
	return dir;
}

/* Only "into" may be in the scratch folder's parent; into itself empty. */
static void check_nothing_left(const char *into)
{
	_cleanup_free_ char *parent = path_dirname(into);
	DIR *dh = opendir(parent);
	struct dirent *de;

	if (!dh)
		abort();
	while ((de = readdir(dh)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "into"))
			abort();
	closedir(dh);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct bundle_limits lim = { .max_bytes = 1 << 20, .max_members = 256, .ratio_floor = 1 << 16,
						  .max_ratio = 100 };
	const char *into = scratch();
	char *dir = NULL, *id = NULL;
	struct diags d = { 0 };
	int fd = memfd_create("bundle", MFD_CLOEXEC);

	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size) || lseek(fd, 0, SEEK_SET) < 0)
		abort();
	if (bundle_unpack(fd, "fuzz.tar", into, &lim, &dir, &id, &d) == 0) {
		struct result_set *rs = NULL;

		if (store_load_as(dir, id, id, &rs, &d) == 0)
			result_set_free(rs);
		fs_remove_tree(dir);
		free(dir);
		free(id);
	}
	close(fd);
	diags_release(&d);
	check_nothing_left(into);
	{
		DIR *dh = opendir(into);
		struct dirent *de;

		while (dh && (de = readdir(dh)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				abort(); /* a failed unpack left its folder behind */
		if (dh)
			closedir(dh);
	}
	return 0;
}
