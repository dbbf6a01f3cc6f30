/* SPDX-License-Identifier: MIT */
/*
 * Bundles: a stored run as one archive to share (libarchive: tar with
 * zstd or gzip by the file name), every file under <RUN_ID>/ plus
 * <RUN_ID>/MANIFEST ("sha256  path" per file) and the reports.
 *
 * A bundle is hostile until checked. Unpacking writes only below a fresh
 * private folder, through descriptors that never follow a symlink
 * (fs_open_beneath); it refuses absolute names, "..", "~", control
 * characters, anything outside <RUN_ID>/, links, devices, FIFOs, a name
 * twice, and stops at the limits (bytes, members, ratio to the packed
 * size). Sparse members keep their full size. Every file must then match
 * the MANIFEST (no missing, extra or changed file) and the run must load
 * (run.json or an older lab's journal, ids, metrics) before it takes the
 * place of anything.
 *
 * The MANIFEST stays in sha256sum's own format, not JSON: `sha256sum -c
 * MANIFEST` checks a bundle without lab, and its reader is a fixed-width,
 * fuzzed line parser (64 lowercase hex digits, two spaces, a safe relative
 * path, none twice), so one format serves old and new bundles alike.
 * Never prints.
 */
#pragma once

#include "../util/diag.h"
#include <stdint.h>
#include <time.h>
#include "../util/hash.h"
#include "../util/strbuf.h"
#include "../util/strmap.h"
#include "../util/strv.h"

struct bundle_extra {
	const char *name; /* path inside <RUN_ID>/ */
	const struct strbuf *data;
};

/* How much one bundle may unpack to. The ratio counts only past ratio_floor
 * bytes, so small bundles of very compressible text pass. */
struct bundle_limits {
	uint64_t max_bytes, max_members;
	uint64_t ratio_floor;
	unsigned max_ratio;
};
#define BUNDLE_LIMITS_DEFAULT                                                                          \
	{ .max_bytes = (uint64_t)16 << 30, .max_members = 100000, .ratio_floor = (uint64_t)64 << 20, \
	  .max_ratio = 1000 }

/* Pack the run folder `dir` (its last component is the id) into `out_fd`
 * when >= 0, else the file `out` ("-": stdout); the compression follows
 * the name `out`: .tar.gz/.tgz gzip, .tar none, else zstd. */
int bundle_write(const char *dir, const struct bundle_extra *extra, size_t nextra, const char *out, int out_fd,
		 struct diags *d);
/* Unpack the bundle read from in_fd (in_name for messages) into a fresh
 * folder <into>/.fetch-<pid>-XXXXXX (mode 0700, util/tempdir.h: removed
 * should lab die of SIGINT, SIGTERM or SIGHUP, found by lab gc should it
 * be killed) and check it against its MANIFEST; *ret_dir is that folder,
 * to be given to tempdir_remove, *ret_id the run id. On failure nothing
 * is left behind. lim NULL: BUNDLE_LIMITS_DEFAULT. */
int bundle_unpack(int in_fd, const char *in_name, const char *into, const struct bundle_limits *lim,
		  char **ret_dir, char **ret_id, struct diags *d);
/* The unpack folders in `into` that nothing uses any more: a lab killed
 * mid-unpack left them (SIGKILL; a signal that lets lab clean up removes
 * its own). tempdir_list_stale's rule: the folder's flock is free and its
 * process is gone, or it is over an hour old. */
int bundle_list_stale_unpacks(const char *into, time_t now, struct strv *ret);
/* Fetch as a transaction: unpack, check, load the run fully (journal, ids,
 * metrics), then put it at <into>/<RUN_ID> (atomically exchanged with the
 * one there when replace) and index it. On any failure, the results
 * folder and its index are as they were. */
int bundle_import(int in_fd, const char *in_name, const char *into, bool replace, const struct bundle_limits *lim,
		  char **ret_id, struct diags *d);

struct bundle_manifest_entry {
	char *name;
	char sha256[SHA256_HEX_LEN + 1];
	unsigned line;
};
struct bundle_manifest {
	struct bundle_manifest_entry *v;
	size_t n;
	struct strmap names; /* name -> index in v */
};
/* Parse a MANIFEST from memory: every line "SHA256  PATH" with a safe
 * relative PATH, none twice. The first problem goes to d, positioned. */
int bundle_manifest_parse(const char *buf, size_t len, const char *file, struct bundle_manifest *ret,
			  struct diags *d);
void bundle_manifest_release(struct bundle_manifest *m);
/* Check <dir>/MANIFEST against the files; the first problem goes to d. */
int bundle_verify(const char *dir, struct diags *d);

/* What `lab bundle` adds beside the run's files: reports made from the run when it is bundled. NULL-terminated. */
extern const char *const bundle_reports[];
/*
 * Whether the run folder `stored` is the run that a checked bundle holds,
 * unpacked in `unpacked` (bundle_unpack's folder): every file its MANIFEST
 * lists is there with the same sha256, and no other file is. The MANIFEST
 * and bundle_reports are left out on both sides: they are made from the
 * run, not part of it (a run stored by lab run has neither). 1 when the
 * same; 0 when they differ, the first difference in d (FILE: its path in
 * the run); a negative errno when one cannot be read (said in d).
 */
int bundle_same_run(const char *unpacked, const char *stored, struct diags *d);
