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

/*
 * Any value of a parsed document, for nested data (run.json): a member, an
 * element, or the document itself (a struct json_doc is its top-level
 * object). Values belong to the document and live as long as it does.
 * Each accessor returns NULL / -EINVAL when the value has another type, so
 * a reader can be strict: check the type, say what it found.
 */
enum json_doc_type {
	JSON_DOC_NULL, JSON_DOC_BOOL, JSON_DOC_INTEGER, JSON_DOC_REAL, JSON_DOC_STRING, JSON_DOC_ARRAY,
	JSON_DOC_OBJECT,
};
/* NULL (a missing member) reads as JSON_DOC_NULL. */
enum json_doc_type json_doc_type(const struct json_doc *v);
/* "null", "a boolean", "an integer", "a number", "a string", "an array", "an object" */
const char *json_doc_type_name(const struct json_doc *v);
/* The member `key` of an object; NULL when missing or v is no object. */
const struct json_doc *json_doc_get(const struct json_doc *v, const char *key);
/* The first member of an object whose key is not in `known` (NULL-terminated); NULL if none. */
const char *json_doc_unknown_key(const struct json_doc *v, const char *const *known);
/* An array's length (0 for other values) and its element i (NULL past the end). */
size_t json_doc_array_size(const struct json_doc *v);
const struct json_doc *json_doc_array_get(const struct json_doc *v, size_t i);
/* A string's text (no NUL inside: the parser refuses \u0000); NULL for other values. */
const char *json_doc_string_value(const struct json_doc *v);
/* An integer within [min, max]: 0, -EINVAL (not an integer) or -ERANGE. */
int json_doc_int_value(const struct json_doc *v, long long min, long long max, long long *ret);
/* A number (integer or real): 0 or -EINVAL. */
int json_doc_number_value(const struct json_doc *v, double *ret);
/* json_doc_parse with the position apart: *ret_line and *ret_col (1-based,
 * 0 when jansson has none) and *ret_err the message alone (free it). */
int json_doc_parse_at(const char *text, size_t len, struct json_doc **ret, unsigned *ret_line, unsigned *ret_col,
		      char **ret_err);

/* json_doc_parse_at for a file's text: *ret_err is "<path>:L:C: what". */
int json_doc_parse_file(const char *path, const char *text, size_t len, struct json_doc **ret, char **ret_err);

/*
 * Strict members for a reader of a whole file: the first problem is kept
 * in r->err, "<path>: \"<key>\" <what>", and each getter returns -EINVAL.
 */
struct json_reader {
	const char *path;
	char *err; /* the first problem (free it) */
};
int json_reader_bad(struct json_reader *r, const char *what, const char *key);
/* A string member, copied into *ret. */
int json_reader_string(struct json_reader *r, const struct json_doc *o, const char *key, char **ret);
/* A string member or null (*ret NULL), copied into *ret. */
int json_reader_opt_string(struct json_reader *r, const struct json_doc *o, const char *key, char **ret);
/* A whole number in [0, max]. */
int json_reader_uint(struct json_reader *r, const struct json_doc *o, const char *key, long long max, size_t *ret);
/* A number in [lo, hi], or null (NaN) when nullable. */
int json_reader_num(struct json_reader *r, const struct json_doc *o, const char *key, double lo, double hi,
		    bool nullable, double *ret);
