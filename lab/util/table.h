/* SPDX-License-Identifier: MIT */
/*
 * One data model rendered as an aligned text table or as JSON (systemd's
 * format-table). Cells are strings or numbers; formatting is pure. Text
 * shows every string through term_escape() (escape.h), JSON through the
 * JSON escaper: cells can hold what a fetched run folder says.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "strbuf.h"
#include "json.h"

enum cell_type { CELL_STRING, CELL_UINT, CELL_NULL };

struct cell {
	enum cell_type type;
	char *s;
	uint64_t u;
};

struct table {
	size_t ncols;
	char **headers;   /* text headers, e.g. "ID" */
	char **keys;      /* JSON keys, e.g. "id" */
	struct cell *cells;
	size_t ncells, alloc;
};

/* Columns given as "HEADER:key" pairs, NULL-terminated. */
struct table *table_new(const char *const *columns);
void table_free(struct table *t);
void table_add_string(struct table *t, const char *s);
void table_add_uint(struct table *t, uint64_t u);
void table_add_null(struct table *t);
size_t table_rows(const struct table *t);
void table_format_text(const struct table *t, struct strbuf *out);
void table_format_json(const struct table *t, struct strbuf *out);

DEFINE_TRIVIAL_CLEANUP_FUNC(struct table *, table_free)
#define _cleanup_table_ _cleanup_(table_freep)
