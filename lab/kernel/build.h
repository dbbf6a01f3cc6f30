/* SPDX-License-Identifier: MIT */
/*
 * Building a kernel variant, cached by content.
 *
 * Inputs -> key: the source identity, every patch's sha256 in order, every
 * config fragment's content, the release name and the compiler version.
 * The artifact (bzImage, .config, System.map, build log, modules if any,
 * meta.json) lives in <cache>/kernels/<key>; a second build of the same
 * inputs is a lookup.
 *
 * Variants of one source share one work tree (<cache>/work/<source>/src, a
 * hard-link copy of the pristine tree) and one object folder per set of
 * config fragments. Switching variants restores from the pristine tree
 * only the files the applied patches touched and applies the new series,
 * so make recompiles only what those files feed: a one-file patch on top
 * of a built base costs tens of seconds, not a full build.
 */
#pragma once

#include <stdbool.h>
#include "../spec/spec.h"
#include "kconfig.h"
#include "variant.h"

struct kbuild_progress {
	void (*step)(void *userdata, const char *variant, const char *step);
	/* each object compiled: done so far, expected (a full build of this
	 * work tree compiled that many before; 0: unknown) */
	void (*objects)(void *userdata, const char *variant, size_t done, size_t expected);
	void *userdata;
};

/* "812/1948 objects, 3m10s, ETA 4m26s", or "812 objects, 3m10s" with no
 * expected count (a first build here) or one it went past. The ETA is
 * linear in objects, said once 20 are done. */
void kbuild_format_progress(size_t done, size_t expected, double elapsed, struct strbuf *out);

struct kbuild_opts {
	unsigned jobs;   /* make -j; 0: online CPUs */
	bool force;      /* rebuild even when the artifact exists */
	bool check_only; /* apply, configure, assert, compile the touched objects; no artifact */
	bool config_only; /* apply, configure, assert; no artifact */
};

struct kartifact {
	char *name;
	char *key;
	char *dir;
	char *release; /* uname -r of the built kernel */
	char *source_identity;
	char *subject, *author; /* a git source's commit's (source.h: its id, ksource_commit()); NULL otherwise */
	char *config_hash;
	char *compiler;
	char *bzimage, *config, *system_map, *log;
	bool cached;
	bool modules;
	double seconds;     /* wall time of this build (or of the cached one) */
	size_t compiled;    /* objects compiled by this build */
	struct strv patches; /* "sha256 path" */
	struct strv checked; /* check_only: objects compiled */
	struct kconfig_check *checks;
	size_t nchecks;
};

int kernel_build(const struct spec *s, const struct kvariant *v, const struct kbuild_opts *o,
		 const struct kbuild_progress *p, struct kartifact *ret, struct diags *d);
/* The content key a build of the variant gets (its artifact folder is <cache>/kernels/<key16>). */
int kernel_key(const struct spec *s, const struct kvariant *v, char **ret, struct diags *d);
/* The cached artifact of a variant, if built; -ENOENT otherwise. Never builds, never fetches. */
int kernel_lookup(const struct spec *s, const struct kvariant *v, struct kartifact *ret, struct diags *d);
void kartifact_release(struct kartifact *a);
/* A built kernel's folder as it is (meta.json, bzImage, config, ...), named
 * `name` with build key `key`: -ENOENT when it is not a complete build. A
 * cluster node's copy in the spool; no assertion is checked again. */
int kartifact_load(const char *dir, const char *name, const char *key, struct kartifact *a);
/* The objects a set of touched files feeds (kbuild targets relative to the tree). */
void kernel_touched_objects(const char *tree, const struct strv *files, struct strv *ret);
/* CONFIG_ symbols that patches define (added "config FOO" lines in Kconfig files). */
void kernel_patch_symbols(const struct strv *patches, struct strv *ret);
