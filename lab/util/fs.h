/* SPDX-License-Identifier: MIT */
/* File operations that report errors as negative errno values. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Write data to path atomically: temp file, fsync, rename. */
int fs_write_atomic(const char *path, const void *data, size_t len, unsigned mode);
/* Copy a file (regular files only). */
int fs_copy_file(const char *from, const char *to, bool overwrite);
/*
 * Copy a tree of folders and regular files; links and special files are
 * skipped. Existing files are kept unless `overwrite`. *ret_copied counts files.
 */
int fs_copy_tree(const char *from, const char *to, bool overwrite, size_t *ret_copied);
