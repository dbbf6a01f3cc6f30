/* SPDX-License-Identifier: MIT */
/*
 * JSON writer: every string goes through the escaper, structure is checked
 * (keys only inside objects), output is pretty-printed with two spaces or
 * compact. Writes into a strbuf; never prints.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include "strbuf.h"

struct json {
	struct strbuf *out;
	bool pretty;
	unsigned depth;
	bool first[64];   /* per depth: no element written yet */
	bool in_obj[64];  /* per depth: object (true) or array */
	bool after_key;
};

void json_init(struct json *j, struct strbuf *out, bool pretty);
void json_object_begin(struct json *j);
void json_object_end(struct json *j);
void json_array_begin(struct json *j);
void json_array_end(struct json *j);
void json_key(struct json *j, const char *key);
void json_string(struct json *j, const char *s);
void json_int(struct json *j, int64_t v);
void json_uint(struct json *j, uint64_t v);
void json_double(struct json *j, double v);
void json_bool(struct json *j, bool v);
void json_null(struct json *j);
/* Finish: a trailing newline when pretty. */
void json_finish(struct json *j);

/* Escape s as a JSON string literal (with quotes) into sb. */
void json_escape(struct strbuf *sb, const char *s);

static inline void json_kv_string(struct json *j, const char *k, const char *v)
{
	json_key(j, k);
	if (v)
		json_string(j, v);
	else
		json_null(j);
}

static inline void json_kv_uint(struct json *j, const char *k, uint64_t v)
{
	json_key(j, k);
	json_uint(j, v);
}

/* null when v is not finite (NaN: no such figure) */
static inline void json_kv_double(struct json *j, const char *k, double v)
{
	json_key(j, k);
	json_double(j, v);
}
