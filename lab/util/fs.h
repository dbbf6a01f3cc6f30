/* SPDX-License-Identifier: MIT */
/* File operations that report errors as negative errno values. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* Write data to path atomically: a fresh temp file beside it (random name,
 * O_EXCL), fsync, rename. */
int fs_write_atomic(const char *path, const void *data, size_t len, unsigned mode);
struct strv;
/* The file's non-empty lines (without their newlines) appended to ret; at
 * most max bytes read. 0, or a negative errno (-ENOENT: no file). */
int fs_read_lines(const char *path, size_t max, struct strv *ret);
/* One line per value, written atomically (fs_write_atomic) with mode. */
int fs_write_lines(const char *path, const struct strv *v, unsigned mode);
/* All of data to fd, again after EINTR and short writes: 0 or -errno. */
int fs_write_all(int fd, const void *data, size_t len);
/*
 * openat() of `rel` below the folder `dirfd` that cannot leave it: `rel`
 * must pass path_is_safe_relative(), and no component is followed through
 * a symlink. With O_CREAT in flags, missing folders on the way are made
 * (0755). Returns the descriptor or a negative errno (-EINVAL: unsafe name,
 * -ELOOP: a symlink on the way).
 */
int fs_open_beneath(int dirfd, const char *rel, int flags, unsigned mode);
/* Append data to path (created 0644 when missing): a log line. */
int fs_append(const char *path, const void *data, size_t len);
/* Copy a file (regular files only). */
int fs_copy_file(const char *from, const char *to, bool overwrite);
/*
 * Copy a tree of folders and regular files; links and special files are
 * skipped. Existing files are kept unless `overwrite`. *ret_copied counts files.
 */
int fs_copy_tree(const char *from, const char *to, bool overwrite, size_t *ret_copied);

/*
 * Take an exclusive flock on `path` (created if missing); blocks until it
 * is free. `on_wait` (may be NULL) is called once when another process
 * holds it. Returns the descriptor to close, or a negative errno.
 */
int fs_lock(const char *path, void (*on_wait)(void *userdata), void *userdata);

/* Remove a folder and everything under it (not following symlinks, not
 * crossing into other file systems); a missing path is fine. 0 or -errno. */
int fs_remove_tree(const char *path);

struct diags;
enum fs_privacy {
	FS_NOT_SHARED,   /* a folder: yours, nobody else may write to it (the cache) */
	FS_PRIVATE,      /* a folder: yours, nobody else may even look (state, keys) */
	FS_PRIVATE_FILE, /* a regular file, not a link: yours, mode 0600 or less (a key) */
};
/* Refuse what another user owns or could change: 0, or -EPERM with why in d. */
int fs_check_private(const char *path, enum fs_privacy level, struct diags *d);
