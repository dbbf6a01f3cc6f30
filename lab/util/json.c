/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "json.h"
#include "banned.h"

void json_init(struct json *j, struct strbuf *out, bool pretty)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
	j->pretty = pretty;
	j->first[0] = true;
}

static void newline(struct json *j)
{
	if (!j->pretty)
		return;
	strbuf_addch(j->out, '\n');
	strbuf_addchars(j->out, ' ', 2 * j->depth);
}

/* Separator and indentation before a value or a key. */
static void before_item(struct json *j, bool is_key)
{
	if (j->after_key) {
		if (is_key)
			abort(); /* a key must be followed by a value */
		j->after_key = false;
		return;
	}
	if (j->depth && j->in_obj[j->depth] && !is_key)
		abort(); /* value in an object without a key */
	if (!j->first[j->depth])
		strbuf_addch(j->out, ',');
	if (j->depth)
		newline(j);
	j->first[j->depth] = false;
}

void json_escape(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	while (*s) {
		uint32_t cp;
		size_t n, plain = 0;

		/* printable ASCII but the two that need a backslash goes in one piece:
		 * a run's journal is mostly that */
		while (s[plain] >= 0x20 && s[plain] < 0x7f && s[plain] != '"' && s[plain] != '\\')
			plain++;
		if (plain) {
			strbuf_add(sb, s, plain);
			s += plain;
			continue;
		}
		n = utf8_decode(s, &cp);

		if (!n) {
			/* JSON is UTF-8 (RFC 8259 8.1): a byte that is not becomes U+FFFD */
			strbuf_addstr(sb, "\\ufffd");
			s++;
			continue;
		}
		switch (cp) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		case '\b': strbuf_addstr(sb, "\\b"); break;
		case '\f': strbuf_addstr(sb, "\\f"); break;
		default:
			/* C0 must be escaped; DEL, C1 and the bidirectional controls
			 * may be, and are, so JSON read on a terminal is safe too */
			if (unicode_is_control(cp))
				strbuf_addf(sb, "\\u%04x", cp);
			else
				strbuf_add(sb, s, n);
		}
		s += n;
	}
	strbuf_addch(sb, '"');
}

static void open_container(struct json *j, bool obj)
{
	before_item(j, false);
	strbuf_addch(j->out, obj ? '{' : '[');
	if (j->depth + 1 >= ELEMENTSOF(j->first))
		abort();
	j->depth++;
	j->first[j->depth] = true;
	j->in_obj[j->depth] = obj;
}

static void close_container(struct json *j, bool obj)
{
	if (!j->depth || j->in_obj[j->depth] != obj || j->after_key)
		abort();
	j->depth--;
	if (!j->first[j->depth + 1])
		newline(j);
	strbuf_addch(j->out, obj ? '}' : ']');
}

void json_object_begin(struct json *j) { open_container(j, true); }
void json_object_end(struct json *j) { close_container(j, true); }
void json_array_begin(struct json *j) { open_container(j, false); }
void json_array_end(struct json *j) { close_container(j, false); }

void json_key(struct json *j, const char *key)
{
	if (!j->depth || !j->in_obj[j->depth])
		abort();
	before_item(j, true);
	json_escape(j->out, key);
	strbuf_addstr(j->out, j->pretty ? ": " : ":");
	j->after_key = true;
}

void json_string(struct json *j, const char *s)
{
	before_item(j, false);
	json_escape(j->out, s);
}

void json_int(struct json *j, int64_t v)
{
	before_item(j, false);
	strbuf_addf(j->out, "%lld", (long long)v);
}

void json_uint(struct json *j, uint64_t v)
{
	before_item(j, false);
	strbuf_addf(j->out, "%llu", (unsigned long long)v);
}

void json_double(struct json *j, double v)
{
	before_item(j, false);
	if (!isfinite(v))
		strbuf_addstr(j->out, "null");
	else {
		char tmp[40];

		/* shortest form that reads back as the same double */
		snprintf(tmp, sizeof(tmp), "%.15g", v);
		if (strtod(tmp, NULL) != v)
			snprintf(tmp, sizeof(tmp), "%.17g", v);
		strbuf_addstr(j->out, tmp);
	}
}

void json_bool(struct json *j, bool v)
{
	before_item(j, false);
	strbuf_addstr(j->out, v ? "true" : "false");
}

void json_null(struct json *j)
{
	before_item(j, false);
	strbuf_addstr(j->out, "null");
}

void json_finish(struct json *j)
{
	if (j->depth)
		abort();
	if (j->pretty)
		strbuf_addch(j->out, '\n');
}
