/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>
#include "alloc.h"
#include "strv.h"
#include "banned.h"

void strv_push_take(struct strv *s, char *str)
{
	GROW(s->v, s->alloc, s->n + 2);
	s->v[s->n++] = str;
	s->v[s->n] = NULL;
}

void strv_pushf(struct strv *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strv_push_take(s, xvasprintf(fmt, ap));
	va_end(ap);
}

void strv_push(struct strv *s, const char *str)
{
	strv_push_take(s, xstrdup(str));
}

void strv_split(struct strv *s, const char *str, char sep)
{
	for (const char *p = str;; p++) {
		const char *e = strchr(p, sep);

		strv_push_take(s, e ? xstrndup(p, (size_t)(e - p)) : xstrdup(p));
		if (!e)
			return;
		p = e;
	}
}

void strv_release(struct strv *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	s->v = NULL;
	s->n = s->alloc = 0;
}

ssize_t strv_index(const struct strv *s, const char *str)
{
	for (size_t i = 0; i < s->n; i++)
		if (streq(s->v[i], str))
			return (ssize_t)i;
	return -1;
}

bool strv_contains(const struct strv *s, const char *str)
{
	return strv_index(s, str) >= 0;
}

size_t str_distance(const char *a, const char *b)
{
	/* Optimal string alignment: insertions, deletions, substitutions and
	 * adjacent transpositions ("vpcus" -> "vcpus") each cost one. */
	size_t la = strlen(a), lb = strlen(b);
	size_t d[65][65];

	if (la > 64 || lb > 64)
		return (size_t)-1;
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
			size_t v = d[i - 1][j - 1] + cost;

			v = MIN(v, d[i - 1][j] + 1);
			v = MIN(v, d[i][j - 1] + 1);
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
				v = MIN(v, d[i - 2][j - 2] + 1);
			d[i][j] = v;
		}
	}
	return d[la][lb];
}

const char *str_suggest(const char *word, const char *const *candidates, size_t n)
{
	size_t len = strlen(word);

	return str_suggest_within(word, candidates, n, len <= 3 ? 1 : len <= 6 ? 2 : 3);
}

const char *str_suggest_within(const char *word, const char *const *candidates, size_t n, size_t limit)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1;

	for (size_t i = 0; i < n; i++) {
		size_t d = str_distance(word, candidates[i]);

		if (d < best_d) {
			best_d = d;
			best = candidates[i];
		}
	}
	return best_d <= limit ? best : NULL;
}

bool str_startswith(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

bool str_endswith(const char *s, const char *suffix)
{
	size_t ls = strlen(s), lx = strlen(suffix);

	return ls >= lx && memcmp(s + ls - lx, suffix, lx) == 0;
}

bool str_is_variant_name(const char *s)
{
	const char *at = strchr(s, '@');
	_cleanup_free_ char *base = NULL;

	if (!at)
		return str_is_name(s);
	if (at[1] < '1' || at[1] > '9' || strlen(at + 1) > 6 || strspn(at + 1, "0123456789") != strlen(at + 1))
		return false;
	base = xstrndup(s, (size_t)(at - s));
	return str_is_name(base);
}

bool str_is_name(const char *s)
{
	if (!*s || strlen(s) > STR_NAME_MAX)
		return false;
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
		return false;
	for (; *s; s++) {
		char c = *s;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_' || c == '.'))
			return false;
	}
	return true;
}
