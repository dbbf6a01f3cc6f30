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
