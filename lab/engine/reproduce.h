/* SPDX-License-Identifier: MIT */
/*
 * What `lab reproduce` checks against a stored run's snapshot (snapshot.h)
 * before it boots anything, and what it compares after:
 *
 *   sources   each kernel's source here has the identity the run recorded
 *             (Debian package and version, tarball sha256, git commit);
 *   configs   each kernel's merged .config (the cached build's when its
 *             content key is there, else configured now, not compiled) has
 *             the recorded one's sha256; when it does not, the options that
 *             differ are named, recorded value first;
 *   packages  the image's package list against the recorded one: the
 *             versions that differ, the packages only one side has.
 *
 * A mismatch of a source or a .config refuses the reproduction (a line per
 * reason into `refused`); package differences are told, not refused (the
 * archive moves on). Never prints, never exits.
 */
#pragma once

#include "../kernel/build.h"
#include "../spec/spec.h"
#include "../util/diag.h"
#include "../util/strv.h"
#include "../store/snapshot.h"

/* Where the snapshot keeps a variant's merged .config and an image's package list. */
char *reproduce_config_path(const char *variant);
char *reproduce_packages_path(const char *image);

/* The sources of `variants` (spec s, a checkout of the snapshot) against snap's. */
int reproduce_check_sources(const struct spec *s, const struct strv *variants, const struct snapshot *snap,
			    struct strv *refused, struct diags *d);

/* Each variant's merged .config against the one the run in rundir recorded;
 * what matched goes to notes ("kernel base: .config as recorded (built)"). */
int reproduce_check_configs(const struct spec *s, const struct strv *variants, const char *rundir,
			    const struct snapshot *snap, const struct kbuild_progress *p, struct strv *refused,
			    struct strv *notes, struct diags *d);

/* Two packages.txt texts (name=version lines): "NAME: A -> B", "NAME: A -> (none)",
 * "NAME: (none) -> B", in name order. Pure. */
void reproduce_package_diff(const char *recorded, const char *here, struct strv *out);

/* The package lists of image `image` in two stored runs' snapshots; a run
 * without one gives a line saying so. */
int reproduce_packages(const char *a_dir, const struct snapshot *a, const char *b_dir, const struct snapshot *b,
		       const char *image, struct strv *out, struct diags *d);
