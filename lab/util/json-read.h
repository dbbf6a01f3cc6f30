/* SPDX-License-Identifier: MIT */
/*
 * The one JSON reader: what lab reads back (its meta.json and vm.json
 * files, and whatever comes next) goes through jansson, a strict RFC 8259
 * parser whose errors carry a line and a column; no string scanning.
 * Lookups are of members of the top-level object. Never prints.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

struct json_doc;

/* Parse text (len bytes, NUL bytes refused); *ret_err on failure:
 * "line L, column C: what" (free it). Duplicate keys are refused. */
int json_doc_parse(const char *text, size_t len, struct json_doc **ret, char **ret_err);
void json_doc_free(struct json_doc *doc);
/* The member's string, copied; NULL when missing or not a string. */
char *json_doc_string(const struct json_doc *doc, const char *key);
/* The member's number: 0, -ENOENT when missing, -EINVAL when not a number. */
int json_doc_number(const struct json_doc *doc, const char *key, double *ret);
/* The member's boolean: false when missing or not a boolean. */
bool json_doc_bool(const struct json_doc *doc, const char *key);

static inline void json_doc_freep(struct json_doc **d)
{
	json_doc_free(*d);
}
#define _cleanup_json_doc_ __attribute__((cleanup(json_doc_freep)))
