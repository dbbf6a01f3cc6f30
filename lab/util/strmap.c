/* SPDX-License-Identifier: MIT */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "strmap.h"
#include "banned.h"

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static size_t slot(const struct strmap *m, const char *key)
{
	size_t i = fnv1a(key) & (m->cap - 1);

	while (m->keys[i] && strcmp(m->keys[i], key) != 0)
		i = (i + 1) & (m->cap - 1);
	return i;
}

bool strmap_get(const struct strmap *m, const char *key, size_t *ret)
{
	size_t i;

	if (!m->cap)
		return false;
	i = slot(m, key);
	if (!m->keys[i])
		return false;
	*ret = m->vals[i];
	return true;
}

static void rehash(struct strmap *m, size_t cap)
{
	struct strmap old = *m;

	m->cap = cap;
	m->keys = xcalloc(cap, sizeof(*m->keys));
	m->vals = xcalloc(cap, sizeof(*m->vals));
	for (size_t i = 0; i < old.cap; i++)
		if (old.keys[i]) {
			size_t j = slot(m, old.keys[i]);

			m->keys[j] = old.keys[i];
			m->vals[j] = old.vals[i];
		}
	free(old.keys);
	free(old.vals);
}

void strmap_put(struct strmap *m, const char *key, size_t val)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		rehash(m, m->cap ? m->cap * 2 : 16);
	i = slot(m, key);
	if (!m->keys[i]) {
		m->keys[i] = key;
		m->n++;
	}
	m->vals[i] = val;
}

void strmap_release(struct strmap *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
