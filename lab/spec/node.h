/* SPDX-License-Identifier: MIT */
/*
 * A YAML document as a tree of positioned nodes (libyaml events in, no
 * types yet). Every node remembers FILE:LINE:COL so every later check can
 * point at the text the user wrote. Aliases are expanded (within a budget,
 * so "billion laughs" input fails cleanly) and "<<" merge keys applied.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "../util/diag.h"
#include "../util/strv.h"

enum node_kind { NODE_SCALAR, NODE_MAP, NODE_SEQ };

struct node {
	enum node_kind kind;
	struct pos pos;
	char *scalar;        /* NODE_SCALAR */
	bool plain;          /* unquoted scalar: may be null/bool/number */
	bool poisoned;       /* an error was reported here already: no follow-up errors */
	size_t anchor;       /* parser only: 1 + index in its anchor table, 0 = no anchor */
	struct node **keys;  /* NODE_MAP: scalar keys */
	struct node **items; /* NODE_MAP: values; NODE_SEQ: items */
	size_t n, alloc;
};

/* Names of files nodes point into; owned by whoever loads documents. */
struct node_files {
	struct strv names;
};

/*
 * Parse `len` bytes of YAML named `file`. Returns the root node (an empty
 * map for an empty document) or NULL with errors added to `d`.
 */
struct node *node_parse(struct node_files *files, const char *file, const char *data,
			size_t len, struct diags *d);
struct node *node_parse_file(struct node_files *files, const char *path, struct diags *d);

void node_free(struct node *n);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct node *, node_free)
#define _cleanup_node_ _cleanup_(node_freep)

struct node *node_new(enum node_kind kind, const struct pos *pos);
struct node *node_copy(const struct node *n);
void node_map_append(struct node *map, struct node *key, struct node *value);
void node_seq_append(struct node *seq, struct node *item);
/* Value of `key` in a map, or NULL. */
struct node *node_map_get(const struct node *map, const char *key);
/* Index of `key` in a map, or -1. */
long node_map_index(const struct node *map, const char *key);
/* Scalar null: "~", "null", "" when plain. */
bool node_is_null(const struct node *n);
const char *node_kind_name(enum node_kind k);

/* Report keys of `map` not in `allowed`, with a "did you mean" where one is close. */
void node_check_keys(const struct node *map, const char *const *allowed, size_t nallowed, const char *what,
		     struct diags *d);

void node_files_release(struct node_files *f);
const char *node_files_intern(struct node_files *f, const char *name);
