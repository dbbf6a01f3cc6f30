/* SPDX-License-Identifier: MIT */
/*
 * Image recipes (images/<name>.yaml): what a guest root file system holds.
 *
 *   description: text
 *   suite: bookworm                 # required
 *   mirror: http://deb.debian.org/debian
 *   components: [main]
 *   variant: apt                    # mmdebstrap variant
 *   size: 4G                        # ext4 size; the qcow2 is sparse and compressed
 *   packages: [postgresql, ...]
 *   files:                          # extra files, copied in before commands
 *     - {path: /etc/x, content: "...", mode: "0644"}
 *     - {path: /usr/local/bin/y, source: files/y, mode: "0755"}
 *   commands: ["..."]               # run in the image (chroot) in order
 *   services: {disable: [...], enable: [...], mask: [...]}
 *
 * On top of every recipe lab adds its guest layer (images/layer/): the
 * packages, files and settings that make a guest boot fast and answer ssh
 * with lab's keys. The recipe key hashes the recipe and that layer.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "../spec/node.h"
#include "../spec/spec.h"
#include "../util/diag.h"
#include "../util/hash.h"
#include "../util/strv.h"

struct recipe_file {
	char *path;    /* absolute path inside the image */
	char *content; /* inline content, or NULL */
	char *source;  /* resolved host path, or NULL */
	unsigned mode;
	struct pos pos;
};

struct recipe {
	char *name;
	char *path;
	char *description;
	char *suite;
	char *mirror;
	struct strv components;
	char *variant;
	uint64_t size;
	struct strv packages;
	struct recipe_file *files;
	size_t nfiles, files_alloc;
	struct strv commands;
	struct strv enable, disable, mask;
	struct node_files nfiles_names; /* positions point into these */
};

#define RECIPE_DEFAULT_MIRROR "http://deb.debian.org/debian"
#define RECIPE_DEFAULT_SIZE (4ULL << 30)

int recipe_load(const char *path, const char *name, struct recipe **ret, struct diags *d);
/* A snapshot's recipe: each files: source one the snapshot lists (spec.h: struct spec_confine), else refused. */
int recipe_load_confined(const char *path, const char *name, const struct spec_confine *cf, struct recipe **ret,
			 struct diags *d);
int recipe_load_buffer(const char *file, const char *data, size_t len, const char *name, struct recipe **ret,
		       struct diags *d);
void recipe_free(struct recipe *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct recipe *, recipe_free)
#define _cleanup_recipe_ _cleanup_(recipe_freep)

/*
 * The recipe key: sha256 over the recipe as lab reads it (package order
 * ignored), the contents of its source files and every file of the guest
 * layer folder `layer` (NULL: none). Errors reading files go to d.
 */
int recipe_key(const struct recipe *r, const char *layer, char out[SHA256_HEX_LEN + 1], struct diags *d);

/* Every package the image installs: the layer's list, then the recipe's, without repeats. */
void recipe_all_packages(const struct recipe *r, const char *layer, struct strv *ret);
