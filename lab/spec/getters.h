/* SPDX-License-Identifier: MIT */
/*
 * Typed reads of positioned YAML nodes, shared by every file lab reads
 * (lab.yaml, workload declarations, image recipes). Each reports at most
 * one error per node, at the node, and never a follow-up error for a node
 * already marked poisoned.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include "../util/diag.h"
#include "../util/strv.h"
#include "node.h"

#define node_err(d, node, ...)                                         \
	do {                                                           \
		if (!(node)->poisoned)                                 \
			diags_add((d), &(node)->pos, __VA_ARGS__);     \
	} while (0)

bool node_want(struct diags *d, const struct node *n, enum node_kind k, const char *what);
/* A non-empty scalar, copied; NULL after reporting. */
char *node_get_string(struct diags *d, const struct node *n, const char *what);
int node_get_uint(struct diags *d, const struct node *n, const char *what, uint64_t min, uint64_t max,
		  unsigned *ret);
int node_get_size(struct diags *d, const struct node *n, const char *what, uint64_t *ret);
int node_get_duration(struct diags *d, const struct node *n, const char *what, uint64_t *ret);
int node_get_bool(struct diags *d, const struct node *n, const char *what, bool *ret);
/* A scalar or a list of non-empty scalars, appended to ret; duplicates reported when !dups. */
void node_get_strv(struct diags *d, const struct node *n, const char *what, bool dups, struct strv *ret);
