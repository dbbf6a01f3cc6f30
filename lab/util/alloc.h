/* SPDX-License-Identifier: MIT */
/*
 * Allocation helpers. Running out of memory is not a condition lab can
 * report usefully, so these abort() rather than push NULL checks into every
 * caller (git's xmalloc). Everything else returns errors.
 */
#pragma once

#include <stddef.h>
#include <stdarg.h>
#include "macro.h"

void *xmalloc(size_t n);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) _printf_(1, 2);
char *xvasprintf(const char *fmt, va_list ap);

/* Grow *array to hold at least `want` elements of `size` bytes. */
void *grow_array(void *array, size_t *alloc, size_t want, size_t size);
#define GROW(array, alloc, want) \
	((array) = grow_array((array), &(alloc), (want), sizeof(*(array))))
