/* SPDX-License-Identifier: MIT */
/*
 * Bundles: a stored run as one archive to share (libarchive: tar with
 * zstd or gzip by the file name), every file under <RUN_ID>/ plus
 * <RUN_ID>/MANIFEST ("sha256  path" per file) and the reports. Unpacking
 * refuses absolute paths, "..", links and anything outside <RUN_ID>/, then
 * checks every file against the MANIFEST (no missing, extra or changed
 * file). Never prints.
 */
#pragma once

#include "../util/diag.h"
#include "../util/strbuf.h"

struct bundle_extra {
	const char *name; /* path inside <RUN_ID>/ */
	const struct strbuf *data;
};

/* Pack the run folder `dir` (its last component is the id) into `out`
 * ("-": stdout; the compression follows the name: .tar.gz, else zstd). */
int bundle_write(const char *dir, const struct bundle_extra *extra, size_t nextra, const char *out,
		 struct diags *d);
/* Unpack `in` ("-": stdin) into <into>/<RUN_ID>; the id goes to *ret_id.
 * An existing <into>/<RUN_ID> is an error unless replace. */
int bundle_read(const char *in, const char *into, bool replace, char **ret_id, struct diags *d);
/* Check <dir>/MANIFEST against the files; the first problem goes to d. */
int bundle_verify(const char *dir, struct diags *d);
