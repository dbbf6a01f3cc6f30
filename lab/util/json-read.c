/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "json-read.h"
#include "banned.h"

/* The document is jansson's value itself: the struct only names the type. */
static json_t *val(const struct json_doc *doc)
{
	return (json_t *)doc;
}

int json_doc_parse(const char *text, size_t len, struct json_doc **ret, char **ret_err)
{
	_cleanup_free_ char *what = NULL;
	unsigned line, col;
	int r = json_doc_parse_at(text, len, ret, &line, &col, &what);

	if (r < 0)
		*ret_err = xasprintf("line %u, column %u: %s", line, col, what);
	return r;
}

void json_doc_free(struct json_doc *doc)
{
	if (doc)
		json_decref(val(doc));
}

char *json_doc_string(const struct json_doc *doc, const char *key)
{
	json_t *m = json_object_get(val(doc), key);

	return json_is_string(m) ? xstrndup(json_string_value(m), json_string_length(m)) : NULL;
}

int json_doc_number(const struct json_doc *doc, const char *key, double *ret)
{
	json_t *m = json_object_get(val(doc), key);

	if (!m)
		return -ENOENT;
	if (!json_is_number(m))
		return -EINVAL;
	*ret = json_number_value(m);
	return 0;
}

bool json_doc_bool(const struct json_doc *doc, const char *key)
{
	return json_is_true(json_object_get(val(doc), key));
}

enum json_doc_type json_doc_type(const struct json_doc *v)
{
	if (!v)
		return JSON_DOC_NULL; /* a missing member: callers test for it first when it matters */
	switch (json_typeof(val(v))) {
	case JSON_OBJECT: return JSON_DOC_OBJECT;
	case JSON_ARRAY: return JSON_DOC_ARRAY;
	case JSON_STRING: return JSON_DOC_STRING;
	case JSON_INTEGER: return JSON_DOC_INTEGER;
	case JSON_REAL: return JSON_DOC_REAL;
	case JSON_TRUE:
	case JSON_FALSE: return JSON_DOC_BOOL;
	case JSON_NULL: break;
	}
	return JSON_DOC_NULL;
}

const char *json_doc_type_name(const struct json_doc *v)
{
	static const char *const names[] = {
		[JSON_DOC_NULL] = "null", [JSON_DOC_BOOL] = "a boolean", [JSON_DOC_INTEGER] = "an integer",
		[JSON_DOC_REAL] = "a number", [JSON_DOC_STRING] = "a string", [JSON_DOC_ARRAY] = "an array",
		[JSON_DOC_OBJECT] = "an object",
	};

	return names[json_doc_type(v)];
}

const struct json_doc *json_doc_get(const struct json_doc *v, const char *key)
{
	return (const struct json_doc *)json_object_get(val(v), key);
}

const char *json_doc_unknown_key(const struct json_doc *v, const char *const *known)
{
	const char *key;
	json_t *m;

	/* jansson keeps members in the order of the text: the first unknown one is named */
	json_object_foreach(val(v), key, m) {
		size_t i = 0;

		while (known[i] && !streq(known[i], key))
			i++;
		if (!known[i])
			return key;
	}
	return NULL;
}

size_t json_doc_array_size(const struct json_doc *v)
{
	return json_array_size(val(v));
}

const struct json_doc *json_doc_array_get(const struct json_doc *v, size_t i)
{
	return (const struct json_doc *)json_array_get(val(v), i);
}

const char *json_doc_string_value(const struct json_doc *v)
{
	return json_string_value(val(v));
}

int json_doc_int_value(const struct json_doc *v, long long min, long long max, long long *ret)
{
	json_int_t i;

	if (!json_is_integer(val(v)))
		return -EINVAL;
	i = json_integer_value(val(v));
	if (i < min || i > max)
		return -ERANGE;
	*ret = i;
	return 0;
}

int json_doc_number_value(const struct json_doc *v, double *ret)
{
	if (!json_is_number(val(v)))
		return -EINVAL;
	*ret = json_number_value(val(v));
	return 0;
}

int json_doc_parse_at(const char *text, size_t len, struct json_doc **ret, unsigned *ret_line, unsigned *ret_col,
		      char **ret_err)
{
	json_error_t e;
	json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);

	if (!v) {
		*ret_line = e.line > 0 ? (unsigned)e.line : 0;
		*ret_col = e.column > 0 ? (unsigned)e.column : 0;
		*ret_err = xstrdup(e.text);
		return -EINVAL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		*ret_line = *ret_col = 1;
		*ret_err = xstrdup("not a JSON object");
		return -EINVAL;
	}
	*ret = (struct json_doc *)v;
	return 0;
}

int json_doc_parse_file(const char *path, const char *text, size_t len, struct json_doc **ret, char **ret_err)
{
	char *perr = NULL;
	unsigned line = 0, col = 0;

	if (json_doc_parse_at(text, len, ret, &line, &col, &perr) < 0) {
		*ret_err = xasprintf("%s:%u:%u: %s", path, line, col, perr);
		free(perr);
		return -EINVAL;
	}
	return 0;
}

int json_reader_bad(struct json_reader *r, const char *what, const char *key)
{
	if (!r->err)
		r->err = xasprintf("%s: \"%s\" %s", r->path, key, what);
	return -EINVAL;
}

int json_reader_string(struct json_reader *r, const struct json_doc *o, const char *key, char **ret)
{
	const char *s = json_doc_string_value(json_doc_get(o, key));

	if (!s)
		return json_reader_bad(r, "is missing or not a string", key);
	*ret = xstrdup(s);
	return 0;
}

int json_reader_opt_string(struct json_reader *r, const struct json_doc *o, const char *key, char **ret)
{
	const struct json_doc *v = json_doc_get(o, key);

	if (v && json_doc_type(v) == JSON_DOC_NULL) {
		*ret = NULL;
		return 0;
	}
	return json_reader_string(r, o, key, ret);
}

int json_reader_uint(struct json_reader *r, const struct json_doc *o, const char *key, long long max, size_t *ret)
{
	long long v;

	if (json_doc_int_value(json_doc_get(o, key), 0, max, &v) < 0)
		return json_reader_bad(r, "is missing or not a whole number in range", key);
	*ret = (size_t)v;
	return 0;
}

int json_reader_num(struct json_reader *r, const struct json_doc *o, const char *key, double lo, double hi,
		    bool nullable, double *ret)
{
	const struct json_doc *v = json_doc_get(o, key);

	if (nullable && v && json_doc_type(v) == JSON_DOC_NULL) {
		*ret = NAN;
		return 0;
	}
	if (json_doc_number_value(v, ret) < 0 || !(*ret >= lo && *ret <= hi))
		return json_reader_bad(r, "is missing or not a number in range", key);
	return 0;
}
