/* SPDX-License-Identifier: MIT */
/* Path helpers. All return newly allocated strings. */
#pragma once

#include <stdbool.h>

char *path_dirname(const char *path);
/* `rel` relative to `dir`; an absolute `rel` (or "~/..." with HOME) is kept. */
char *path_join(const char *dir, const char *rel);
bool path_is_dir(const char *path);
bool path_is_file(const char *path);
/* mkdir -p; returns 0 or a negative errno. */
int path_mkdir_p(const char *path, unsigned mode);
/*
 * A cgroup v2 group below the hierarchy's root ("lab/pg"): plain names
 * (str_is_name) joined by single '/', none an interface file's "cgroup.*".
 * One rule for lab.yaml's checker and the seed that creates the groups.
 */
bool path_is_cgroup(const char *p);
#define PATH_CGROUP_RULE "a relative path of plain names such as lab/pg"
