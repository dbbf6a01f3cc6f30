/* SPDX-License-Identifier: MIT */
/*
 * A string -> size_t map (open addressing, FNV-1a). Keys are borrowed:
 * they must outlive the map.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "macro.h"

struct strmap {
	const char **keys;
	size_t *vals;
	size_t n, cap;
};

#define STRMAP_INIT { NULL, NULL, 0, 0 }

/* The value of key, or false. */
bool strmap_get(const struct strmap *m, const char *key, size_t *ret);
/* Sets key (replacing its value). */
void strmap_put(struct strmap *m, const char *key, size_t val);
void strmap_release(struct strmap *m);

static inline void strmap_releasep(struct strmap *m)
{
	strmap_release(m);
}
#define _cleanup_strmap_ _cleanup_(strmap_releasep)
