/* SPDX-License-Identifier: MIT */
/*
 * Experiment snapshots: everything a stored run's lab.yaml names, kept in
 * the run folder so that the run can be checked (and rebuilt) without the
 * project it came from:
 *
 *   <run>/snapshot/SNAPSHOT            the listing (below)
 *   <run>/snapshot/objects/<sha256>    each file's content, once, shared
 *                                      by every run of the folder
 *
 * What goes in: lab.yaml as the run read it (role spec) and its includes;
 * every kernel's config fragments and patch files (a patches folder whole);
 * every image recipe, the files it copies in and lab's guest layer; the
 * whole workload and monitor catalogue; each built variant's merged
 * .config and the image's package list (under built/); each source's
 * identity (Debian package and version and the tarball's sha256, a git
 * commit and URL, a tarball's sha256, a folder's identity). A file outside
 * the project folder is listed as absent, never stored under a made-up name.
 *
 * The listing, version 1: UTF-8 lines, fields split by one space, the last
 * field the rest of the line; '#' lines are comments.
 *
 *   lab-snapshot 1
 *   experiment NAME
 *   set NAME=VALUE                    each --set the run was made with
 *   kernels NAME                      each --kernels name
 *   source NAME TYPE IDENTITY DIGEST WHERE
 *                                     TYPE debian|tarball|directory|git;
 *                                     IDENTITY, DIGEST "-" when not known
 *   file SHA256 SIZE MODE ROLE PATH   MODE 644 or 755
 *   absent ROLE PATH                  named by lab.yaml, not in the snapshot
 *
 * A listing is hostile until checked: the reader refuses an unknown
 * version or keyword, a PATH that is absolute, has "..", "~", an empty
 * part or a control character, a PATH twice or one that is another's
 * folder, more than SNAPSHOT_MAX_FILES files or SNAPSHOT_MAX_BYTES of
 * listing; each error names the file and line. Objects are opened without
 * following links and must have their size and sha256; a checkout writes
 * only below its target folder, each file created anew. Never prints.
 */
#pragma once

#include <stdint.h>
#include "../spec/spec.h"
#include "../util/diag.h"
#include "../util/hash.h"
#include "../util/strbuf.h"
#include "../util/strmap.h"
#include "../util/strv.h"

#define SNAPSHOT_DIR "snapshot"
#define SNAPSHOT_LISTING "snapshot/SNAPSHOT"
#define SNAPSHOT_FORMAT 1
#define SNAPSHOT_MAX_BYTES (4u << 20)
#define SNAPSHOT_MAX_FILES 100000
#define SNAPSHOT_MAX_OBJECT ((uint64_t)1 << 32)

enum snapshot_role {
	SNAP_SPEC,          /* lab.yaml */
	SNAP_INCLUDE,       /* a file lab.yaml includes */
	SNAP_CONFIG,        /* a kernel config fragment */
	SNAP_PATCH,         /* a kernel patch (a patches folder's every file) */
	SNAP_RECIPE,        /* an image recipe */
	SNAP_RECIPE_FILE,   /* a file a recipe copies into the image */
	SNAP_LAYER,         /* lab's guest layer, when inside the project */
	SNAP_CATALOGUE,     /* the workload and monitor catalogue */
	SNAP_KERNEL_CONFIG, /* a built variant's merged .config: built/kernels/VARIANT.config */
	SNAP_PACKAGES,      /* an image's packages.txt: built/images/NAME.packages.txt */
	SNAP_ROLE_COUNT,
};
const char *snapshot_role_name(enum snapshot_role r);

struct snapshot_file {
	char *path; /* relative to the project folder */
	char sha256[SHA256_HEX_LEN + 1];
	uint64_t size;
	unsigned mode; /* 0644 or 0755 */
	enum snapshot_role role;
	unsigned line; /* in the listing read; 0: made here */
	char *from;    /* the file it was made from (writer only) */
};

struct snapshot_source {
	char *name, *type;
	char *identity; /* NULL: not known */
	char *digest;   /* the tarball's sha256; NULL: not known or none */
	char *where;    /* the package, tarball, folder or URL */
};

struct snapshot_absent {
	char *path;
	enum snapshot_role role;
};

struct snapshot {
	char *experiment;
	struct strv set, kernels;
	struct snapshot_source *sources;
	size_t nsources, sources_alloc;
	struct snapshot_file *files;
	size_t nfiles, files_alloc;
	struct snapshot_absent *absent;
	size_t nabsent, absent_alloc;
	struct strmap paths; /* path -> index in files */
};
void snapshot_release(struct snapshot *snap);

/* A built artifact the snapshot records: a variant's merged .config, an image's packages.txt. */
struct snapshot_built {
	const char *name;
	const char *path;
};

struct snapshot_input {
	const struct spec *s;
	const char *spec_file;            /* lab.yaml's text as the run read it (its folder's copy); NULL: s->path */
	const char *experiment;
	const struct strv *set, *kernels; /* NULL: none */
	const char *layer;                /* lab's guest layer folder; NULL: none */
	const struct snapshot_built *configs;
	size_t nconfigs;
	const struct snapshot_built *packages;
	size_t npackages;
	/* each source's identity; NULL: asked of kernel/source.c (never fetching) */
	const struct snapshot_source *sources;
	size_t nsources;
};

/* The snapshot of in (files hashed, nothing written): 0 or a negative errno with the reason in d. */
int snapshot_collect(const struct snapshot_input *in, struct snapshot *ret, struct diags *d);
/* The listing's text: sorted, one form for one snapshot. */
void snapshot_format(const struct snapshot *snap, struct strbuf *out);
/* Each file's object into <rundir>/snapshot/objects (those there kept), then the listing, atomically. */
int snapshot_store(const struct snapshot *snap, const char *rundir, struct diags *d);
/* collect + store */
int snapshot_write(const struct snapshot_input *in, const char *rundir, struct diags *d);

/* Parse a listing from memory (`file` for errors); the first problem goes to d, with its line. */
int snapshot_parse(const char *buf, size_t len, const char *file, struct snapshot *ret, struct diags *d);
/* <rundir>/snapshot/SNAPSHOT read and parsed; -ENOENT (d untouched) when the run has none. */
int snapshot_load(const char *rundir, struct snapshot *ret, struct diags *d);
/* Every object there, of its size and sha256; the first problem goes to d. */
int snapshot_verify(const char *rundir, const struct snapshot *snap, struct diags *d);
/* The file at `path` (as listed) appended to out, checked against its size
 * and sha256: -ENOENT (d untouched) when the listing has no such file. */
int snapshot_read(const char *rundir, const struct snapshot *snap, const char *path, struct strbuf *out,
		  struct diags *d);
/* Every file into `target` (missing or an empty folder), each checked as it is copied. */
int snapshot_checkout(const char *rundir, const struct snapshot *snap, const char *target, struct diags *d);
/*
 * What a run without a snapshot lacks to be checked on its own: the
 * listing itself, then each file and folder its lab.yaml names ("config
 * fragment kernels/configs/guest.config", "workload stress-ng", ...), from
 * the run's lab.yaml read without touching the file system. Lines into ret.
 */
int snapshot_missing(const char *rundir, struct strv *ret, struct diags *d);
