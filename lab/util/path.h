/* SPDX-License-Identifier: MIT */
/* Path helpers. All return newly allocated strings. */
#pragma once

#include <stdbool.h>

char *path_dirname(const char *path);
/* The last component; trailing slashes do not count ("results/ID/" -> "ID"). */
char *path_basename(const char *path);
/* `rel` relative to `dir`; an absolute `rel` is kept. Nothing is expanded:
 * names that come from data (bundles, journals) go through here. */
char *path_join(const char *dir, const char *rel);
/* path_join, but "~/..." is the user's home: only for paths a user wrote
 * (lab.yaml, the command line), never for names read from data. */
char *path_join_user(const char *dir, const char *rel);
/* A relative path that stays below its folder: no leading '/', no empty,
 * "." or ".." component, no component starting with '~', no control
 * character or backslash, at most PATH_SAFE_DEPTH components of at most
 * 255 bytes and PATH_SAFE_MAX bytes in all. */
#define PATH_SAFE_MAX 1024
#define PATH_SAFE_DEPTH 16
bool path_is_safe_relative(const char *rel);
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
