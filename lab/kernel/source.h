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
	/* what stays the same from one version of the source to the next: a
	 * git source's URL, else the identity; its key names the source's one
	 * work tree and object folders, so that the commits of a git source
	 * build incrementally one after another */
	char *lineage, *lineage_key;
};

/* A commit of a git range (ksource_git_range). */
struct kcommit {
	char id[41];
	char *subject, *author;
	/* its parents as indexes into the range (0: the good commit or outside it) */
	unsigned *parents;
	size_t nparents;
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

/*
 * The commits of git source src between `good` and `bad` (refs or ids),
 * as git bisect sees them: [0] the good commit, then good..bad in
 * topological order, parents first, the bad commit last; first_parent:
 * only the bad commit's first-parent line. The mirror is fetched as
 * ksource_prepare does. Refused, naming why: a ref that names no commit,
 * a good commit that is not an ancestor of the bad one, more than `max`
 * commits. 0 with *ret (*ret_n entries, [0] included), or a negative
 * errno with d.
 */
int ksource_git_range(const char *cache, const struct spec_source *src, const char *good, const char *bad,
		      bool first_parent, size_t max, struct kcommit **ret, size_t *ret_n, struct strbuf *log,
		      struct diags *d);
void kcommits_free(struct kcommit *c, size_t n);
/* The identity alone, without installing or fetching: -ENOENT when unknown yet. */
int ksource_identify(const char *cache, const struct spec_source *src, struct ksource *ret);
