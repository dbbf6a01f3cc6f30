/* SPDX-License-Identifier: MIT */
/*
 * A kernel .config as data: symbol -> value ("y", "m", a number, a quoted
 * string; an unset symbol reads as "n"). Assertions from `require:` are
 * checked against the final file, and two variants' configs are compared.
 */
#pragma once

#include <stdbool.h>
#include "../spec/spec.h"
#include "../util/strbuf.h"

struct kconfig_entry {
	char *symbol;
	char *value; /* "n" for "# CONFIG_X is not set" */
};

struct kconfig {
	struct kconfig_entry *v;
	size_t n, alloc;
};

int kconfig_parse(const char *text, struct kconfig *ret);
int kconfig_load(const char *path, struct kconfig *ret);
void kconfig_release(struct kconfig *k);
/* The value of CONFIG_X, "n" when absent. */
const char *kconfig_get(const struct kconfig *k, const char *symbol);

struct kconfig_check {
	const struct spec_require *req;
	char actual[256]; /* a copy: checks outlive the parsed config */
	bool ok;
};

/* Check every assertion; returns the number that failed. */
size_t kconfig_check_require(const struct kconfig *k, const struct spec_require *const *req, size_t n,
			     struct kconfig_check *ret);

/*
 * Symbols whose values differ between a and b, one "CONFIG_X: a -> b" line
 * each into `out`, skipping symbols in `allowed` (those the patches define).
 * Returns the number of differences reported.
 */
size_t kconfig_diff(const struct kconfig *a, const struct kconfig *b, const struct strv *allowed,
		    struct strbuf *out);
