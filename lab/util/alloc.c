/* SPDX-License-Identifier: MIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "banned.h"

static void *check(void *p)
{
	if (!p)
		abort();
	return p;
}

void *xmalloc(size_t n)
{
	return check(malloc(n ? n : 1));
}

void *xcalloc(size_t nmemb, size_t size)
{
	return check(calloc(nmemb ? nmemb : 1, size ? size : 1));
}

void *xrealloc(void *p, size_t n)
{
	return check(realloc(p, n ? n : 1));
}

char *xstrdup(const char *s)
{
	return check(strdup(s));
}

char *xstrndup(const char *s, size_t n)
{
	return check(strndup(s, n));
}

char *xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	return s;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void *grow_array(void *array, size_t *alloc, size_t want, size_t size)
{
	size_t n;

	if (want <= *alloc)
		return array;
	n = *alloc ? *alloc : 8;
	while (n < want)
		n *= 2;
	array = xrealloc(array, n * size);
	memset((char *)array + *alloc * size, 0, (n - *alloc) * size);
	*alloc = n;
	return array;
}
