/* SPDX-License-Identifier: MIT */
/*
 * Kernel sources: a pristine tree per source identity under lab's cache,
 * never modified after it is complete. Debian's linux-source package is
 * installed with apt-get when missing; a tarball is unpacked; a local
 * directory is used in place (read only); a git URL + ref is fetched into
 * a bare mirror and its commit exported.
 */
#pragma once

#include "../spec/spec.h"
#include "../util/hash.h"

struct ksource {
	char *key;      /* short content identity: 16 hex digits */
	char *identity; /* human-readable: "linux-source-6.1=6.1.158-1", a commit, a sha256 */
	char *tree;     /* the pristine tree */
	/* a git source's commit: its subject and author ("Name <mail>"); NULL
	 * for other sources (the commit's id is in the identity:
	 * ksource_commit()) */
	char *subject, *author;
};

/* A git source's commit id from its identity ("git:<id>"), else NULL. */
const char *ksource_commit(const char *identity);


/*
 * Resolve (and on first use, fetch and unpack) a source. `log` receives
 * what was run and its output. Returns 0 or a negative errno with the
 * reason in `d`.
 */
int ksource_prepare(const char *cache, const struct spec_source *src, struct strbuf *log, struct ksource *ret,
		    struct diags *d);
void ksource_release(struct ksource *k);
/* The identity alone, without installing or fetching: -ENOENT when unknown yet. */
int ksource_identify(const char *cache, const struct spec_source *src, struct ksource *ret);
