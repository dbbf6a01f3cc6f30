/* SPDX-License-Identifier: MIT */
/*
 * Tar archives through libarchive, no tar process: a kernel source
 * tarball unpacked into lab's cache, a modules tree packed for a host.
 *
 * Unpacking is safe against a hostile archive: every name (after the
 * stripped components) must pass path_is_safe_relative(), nothing is
 * written through a symlink (each folder is opened O_NOFOLLOW from the
 * top, as fs_open_beneath does), a symlink's target must stay inside the
 * folder by its text (not absolute, never climbing above the top), a hard
 * link must name a member unpacked before, devices and FIFOs are refused,
 * and modes keep only their permission bits.
 */
#pragma once
#include <stddef.h>

struct strbuf;

/* Unpack `path` (tar, compressed or not) into the folder `dirfd` with the
 * first `strip` components of each name dropped (tar --strip-components),
 * mtimes kept. *ret_members (may be NULL) counts what was made. 0, or a
 * negative errno with why in err. */
int tarball_extract(const char *path, int dirfd, unsigned strip, size_t *ret_members, struct strbuf *err);

/* Pack dir/top into the tar file `out` (members named top/...): folders,
 * regular files and symlinks, in a stable order. 0, or a negative errno
 * with why in err. */
int tarball_create(const char *dir, const char *top, const char *out, struct strbuf *err);
