/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <jansson.h>
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
	json_error_t e;
	json_t *v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e);

	if (!v) {
		*ret_err = xasprintf("line %d, column %d: %s", e.line, e.column, e.text);
		return -EINVAL;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		*ret_err = xstrdup("line 1, column 1: not a JSON object");
		return -EINVAL;
	}
	*ret = (struct json_doc *)v;
	return 0;
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
