/* SPDX-License-Identifier: MIT */
/*
 * The spool: the folder the head and every cluster node see (lab.yaml
 * `engine: spool:`). Kernels and images go into it content-addressed,
 * <spool>/kernels/<key16>/ and <spool>/images/<id>/, each with a MANIFEST
 * in sha256sum's format written last (a folder without one is not there
 * yet); the MANIFEST's own sha256 names the whole folder. A node checks a
 * folder against that digest and its MANIFEST before a boot; later shards
 * and later experiments reuse what is there. Never prints.
 */
#pragma once

#include "../util/diag.h"
#include "../util/hash.h"

/* The flat folder `from` into <spool>/<kind>/<name>/ unless it is there
 * (complete); the MANIFEST's sha256 in digest. Files are hard-linked when
 * the spool is on the same file system, else copied. */
int spool_put(const char *spool, const char *kind, const char *name, const char *from,
	      char digest[SHA256_HEX_LEN + 1], struct diags *d);
/* Whether `dir` is what `digest` names: its MANIFEST's sha256 is digest
 * and every file matches the MANIFEST, none missing, none extra. */
int spool_check(const char *dir, const char *digest, struct diags *d);
