/* SPDX-License-Identifier: MIT */
/*
 * Temporary folders that do not outlive lab (git's tempfile.c): made by
 * tempdir_make as <parent>/<prefix><pid>-XXXXXX (mode 0700) and, until
 * tempdir_remove or tempdir_forget, removed when lab dies of SIGINT,
 * SIGTERM or SIGHUP (util/sigchain.h). The handler only walks the tree
 * with openat, getdents64, unlinkat and close, from descriptors and names
 * kept when the folder was made: nothing is allocated or looked up then. A
 * process forked from lab does not remove its parent's folders.
 *
 * While it is registered the folder holds an flock (on a descriptor of its
 * own), so lab gc tells a folder in use from one that a lab killed beyond
 * cleaning up (SIGKILL, a crash, a power cut) left: tempdir_list_stale.
 */
#pragma once

#include <time.h>

struct strv;

/* A fresh folder <parent>/<prefix><pid>-XXXXXX; its path in *ret_path. 0 or -errno. */
int tempdir_make(const char *parent, const char *prefix, char **ret_path);
/* Remove the folder made by tempdir_make now and stop watching it. NULL
 * and a folder already gone are fine. 0 or -errno. */
int tempdir_remove(const char *path);
/* Stop watching it; it stays where it is (it was renamed into its place). */
void tempdir_forget(const char *path);

/* The folders <parent>/<prefix>* of this user that nothing uses: their
 * flock is free, and the process named in them is gone, or they were last
 * changed over an hour before now (the pid went to another process; a
 * folder from an older lab names none). */
int tempdir_list_stale(const char *parent, const char *prefix, time_t now, struct strv *ret);
/* Remove a folder tempdir_list_stale listed, if its flock is still free:
 * 0, -EBUSY when a process took it meanwhile, or another -errno. */
int tempdir_remove_stale(const char *path);

/* The tree parent_fd/name removed with only async-signal-safe calls (what
 * the handler does; for tests): whatever can be removed is. */
void tempdir_remove_tree_at(int parent_fd, const char *name);
