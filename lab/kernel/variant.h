/* SPDX-License-Identifier: MIT */
/*
 * A kernel variant resolved for building: the `from:` chain flattened
 * (ancestors' patches, fragments and assertions first), a sweep step
 * ("pcp-auto@3") cut to the first N patches of its own series, and the
 * release suffix that makes `uname -r` name the variant.
 */
#pragma once

#include "../spec/spec.h"

struct kvariant {
	char *name; /* as named in lab.yaml, "pcp-auto@3" for a sweep step */
	const struct spec_kernel *kernel;
	const struct spec_source *source;
	struct strv patches; /* files, in application order */
	struct strv configs; /* fragment files, in merge order */
	const char *start;   /* the make target the .config starts from: the nearest `start:` up the chain, else defconfig */
	const struct spec_require **require;
	size_t nrequire;
	char *cmdline;
};

int kvariant_resolve(const struct spec *s, const char *name, struct kvariant *ret, struct diags *d);
/* The same for a kernel built elsewhere (a cluster node: the build is in
 * the spool): its chain, assertions and cmdline, no patch file read. */
int kvariant_resolve_built(const struct spec *s, const char *name, struct kvariant *ret, struct diags *d);
void kvariant_release(struct kvariant *v);
/* k's own patch files (not its ancestors'), in series order: a folder's listed. */
int kvariant_own_patches(const struct spec_kernel *k, struct strv *ret, struct diags *d);
/* Every buildable name: plain variants, and name@N for each sweep step. */
void kvariant_names(const struct spec *s, struct strv *ret);
/* "pcp-auto@3" + hash -> "-lab-pcp-auto.3-1a2b3c4d" (kernel release limits: <= 64 chars, [a-z0-9.-]). */
char *kvariant_localversion(const char *name, const char *hash);
