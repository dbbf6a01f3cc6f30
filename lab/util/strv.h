/* SPDX-License-Identifier: MIT */
/* NULL-terminated string vectors and small string helpers. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "macro.h"

struct strv {
	char **v; /* NULL-terminated, never NULL after strv_push */
	size_t n;
	size_t alloc;
};

#define STRV_INIT { NULL, 0, 0 }

void strv_push(struct strv *s, const char *str);
void strv_push_take(struct strv *s, char *str);
/* A formatted string pushed. */
void strv_pushf(struct strv *s, const char *fmt, ...) _printf_(2, 3);
/* Every part of str between the separators (empty ones too). */
void strv_split(struct strv *s, const char *str, char sep);
void strv_release(struct strv *s);
bool strv_contains(const struct strv *s, const char *str);
ssize_t strv_index(const struct strv *s, const char *str);

static inline void strv_releasep(struct strv *s)
{
	strv_release(s);
}
#define _cleanup_strv_ _cleanup_(strv_releasep)

/* Edit distance for "did you mean" suggestions. */
size_t str_distance(const char *a, const char *b);
/* The closest candidate within a sensible distance, or NULL. */
const char *str_suggest(const char *word, const char *const *candidates, size_t n);
/* The same with an edit distance limit of the caller's. */
const char *str_suggest_within(const char *word, const char *const *candidates, size_t n, size_t limit);

bool str_startswith(const char *s, const char *prefix);
bool str_endswith(const char *s, const char *suffix);
/*
 * Names become libvirt domain names, file and folder names, run ids and
 * words in guest shells: short enough for all of them.
 */
#define STR_NAME_MAX 64
/* A name usable as an identifier in lab.yaml: [A-Za-z0-9][A-Za-z0-9._-]*, at most STR_NAME_MAX */
bool str_is_name(const char *s);
/* A kernel variant: a name, or a sweep step NAME@N (N from 1, decimal). */
bool str_is_variant_name(const char *s);
