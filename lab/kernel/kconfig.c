/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "kconfig.h"
#include "../util/banned.h"

void kconfig_release(struct kconfig *k)
{
	for (size_t i = 0; i < k->n; i++) {
		free(k->v[i].symbol);
		free(k->v[i].value);
	}
	free(k->v);
	memset(k, 0, sizeof(*k));
}

static void add(struct kconfig *k, const char *sym, size_t symlen, const char *val, size_t vallen)
{
	GROW(k->v, k->alloc, k->n + 1);
	k->v[k->n].symbol = xstrndup(sym, symlen);
	k->v[k->n].value = xstrndup(val, vallen);
	k->n++;
}

int kconfig_parse(const char *text, struct kconfig *ret)
{
	struct kconfig k = { 0 };

	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len > 7 && strneq(line, "CONFIG_", 7)) {
			const char *eq = memchr(line, '=', len);

			if (eq)
				add(&k, line, (size_t)(eq - line), eq + 1, len - (size_t)(eq + 1 - line));
		} else if (len > 9 && strneq(line, "# CONFIG_", 9) && len > 13 &&
			   strneq(line + len - 11, " is not set", 11)) {
			add(&k, line + 2, len - 13, "n", 1);
		}
		line += len + (nl ? 1 : 0);
	}
	*ret = k;
	return 0;
}

int kconfig_load(const char *path, struct kconfig *ret)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = strbuf_read_file(&sb, path, 16 << 20);

	if (r < 0)
		return r;
	return kconfig_parse(sb.buf, ret);
}

const char *kconfig_get(const struct kconfig *k, const char *symbol)
{
	for (size_t i = 0; i < k->n; i++)
		if (streq(k->v[i].symbol, symbol))
			return k->v[i].value;
	return "n";
}

/* "y" matches y; "\"foo\"" matches foo; numbers compare as written. */
static bool value_matches(const char *want, const char *actual)
{
	size_t la = strlen(actual);

	if (streq(want, actual))
		return true;
	return la >= 2 && actual[0] == '"' && actual[la - 1] == '"' && strlen(want) == la - 2 &&
	       strneq(want, actual + 1, la - 2);
}

size_t kconfig_check_require(const struct kconfig *k, const struct spec_require *const *req, size_t n,
			     struct kconfig_check *ret)
{
	size_t failed = 0;

	for (size_t i = 0; i < n; i++) {
		const char *actual = kconfig_get(k, req[i]->symbol);

		ret[i].req = req[i];
		snprintf(ret[i].actual, sizeof(ret[i].actual), "%s", actual);
		ret[i].ok = value_matches(req[i]->value, actual);
		failed += !ret[i].ok;
	}
	return failed;
}

size_t kconfig_diff(const struct kconfig *a, const struct kconfig *b, const struct strv *allowed,
		    struct strbuf *out)
{
	size_t n = 0;

	for (size_t i = 0; i < a->n; i++) {
		const char *bv = kconfig_get(b, a->v[i].symbol);

		if (streq(a->v[i].value, bv) || (allowed && strv_contains(allowed, a->v[i].symbol)))
			continue;
		strbuf_addf(out, "%s: %s -> %s\n", a->v[i].symbol, a->v[i].value, bv);
		n++;
	}
	for (size_t i = 0; i < b->n; i++) {
		bool in_a = false;

		for (size_t j = 0; j < a->n && !in_a; j++)
			in_a = streq(a->v[j].symbol, b->v[i].symbol);
		if (in_a || streq(b->v[i].value, "n") || (allowed && strv_contains(allowed, b->v[i].symbol)))
			continue;
		strbuf_addf(out, "%s: n -> %s\n", b->v[i].symbol, b->v[i].value);
		n++;
	}
	return n;
}
