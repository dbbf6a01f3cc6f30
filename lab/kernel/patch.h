/* SPDX-License-Identifier: MIT */
/*
 * Reading patch files (git format-patch output, mbox, or plain unified
 * diffs): the subject, the files each touches, the hunks with the lines of
 * the patch file they occupy. Used for identities (sha256), for restoring
 * exactly the files a series touched, for naming the objects to recompile,
 * and for showing a rejected hunk.
 */
#pragma once

#include <stdbool.h>
#include "../util/diag.h"
#include "../util/hash.h"
#include "../util/strv.h"

struct patch_hunk {
	unsigned old_start, old_len, new_start, new_len;
	unsigned first_line, last_line; /* in the patch file, 1-based, inclusive */
};

struct patch_file {
	char *path;     /* new path relative to the tree (-p1); the old one for deletions */
	bool created, deleted;
	struct patch_hunk *hunks;
	size_t nhunks;
};

struct patch {
	char *path; /* the patch file */
	char *subject;
	char sha256[SHA256_HEX_LEN + 1];
	struct patch_file *files;
	size_t nfiles;
	char *text; /* the whole file */
};

/* Read and parse one patch file; a file with no diff in it is an error. */
int patch_load(const char *path, struct patch **ret, struct diags *d);
/* The subject as git am keeps it: "[PATCH 3/9] mm: x" -> "mm: x" (a pointer into s). */
const char *patch_subject_line(const char *s);
void patch_free(struct patch *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct patch *, patch_free)

/* The patch files of a series folder, in name order (*.patch, *.mbox, *.diff). */
int patch_series_list(const char *dir, struct strv *ret);

/* The hunk of `file` whose old range starts at `old_line` (git apply's "patch failed: F:N"). */
const struct patch_hunk *patch_find_hunk(const struct patch *p, const char *file, unsigned old_line,
					 const struct patch_file **ret_file);
/* Lines first..last of the patch text. */
char *patch_lines(const struct patch *p, unsigned first, unsigned last);
