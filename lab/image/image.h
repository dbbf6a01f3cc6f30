/* SPDX-License-Identifier: MIT */
/*
 * Guest images, built from recipes and cached by content.
 *
 * A build runs mmdebstrap into a folder (no loop mounts, no kernel in the
 * image), lab's guest layer and the recipe's files and commands on top,
 * then `mkfs.ext4 -d` and `qemu-img convert -c` to a compressed qcow2.
 *
 * Two names: the recipe key (recipe + layer, known before building) and
 * the image id (recipe key + every installed package=version, known
 * after). <cache>/images/recipes/<name>-<recipe key> points at the image
 * id, so building an unchanged recipe again is a lookup; --refresh
 * resolves the packages anew and, when the archive moved, makes a new id.
 *
 *   <cache>/images/<name>-<id16>/image.qcow2   never written after the build
 *                               /packages.txt  name=version, sorted
 *                               /recipe.yaml   the recipe as built
 *                               /meta.json
 *                               /build.log
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "../spec/spec.h"
#include "../util/diag.h"

struct image_opts {
	const char *layer; /* lab's guest layer folder (images/layer) */
	bool refresh;      /* resolve packages again even when the recipe is unchanged */
};

struct image_progress {
	void (*step)(void *userdata, const char *image, const char *what);
	void *userdata;
};

struct image_artifact {
	char *name;
	char *id;         /* 64 hex */
	char *recipe_key; /* 64 hex */
	char *dir;
	char *qcow2;
	char *packages;   /* path of packages.txt */
	char *log;
	char *suite;
	char *created;    /* UTC, ISO 8601 */
	uint64_t disk_bytes;    /* the qcow2 file */
	uint64_t virtual_bytes; /* the file system */
	size_t npackages;
	double seconds;   /* build time */
	bool cached;      /* found, not built */
	bool current;     /* list: the recipe as it is now names this image */
};

int image_build(const struct spec *s, const struct spec_image *im, const struct image_opts *o,
		const struct image_progress *p, struct image_artifact *ret, struct diags *d);
/* The image the recipe as it is now was built into; -ENOENT when not built. Never builds. */
int image_lookup(const struct spec *s, const struct spec_image *im, const struct image_opts *o,
		 struct image_artifact *ret, struct diags *d);
/* Every image in the cache, by name then newest first. */
int image_list(const char *cache, struct image_artifact **ret, size_t *n, struct diags *d);
void image_artifact_release(struct image_artifact *a);
/* An image folder as it is (its meta.json and image.qcow2): -ENOENT when it is
 * not a complete image. A cluster node's copy in the spool, found by id. */
int image_artifact_load(const char *dir, struct image_artifact *a);
void image_artifacts_free(struct image_artifact *v, size_t n);
