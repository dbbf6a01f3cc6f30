/* SPDX-License-Identifier: MIT */
/*
 * An escaping XML writer (for libvirt domain XML): element and attribute
 * names are lab's own constants; every value, attribute or text, goes
 * through the escaper. Two-space indentation; an element with text stays
 * on one line.
 */
#pragma once
#include <stdbool.h>
#include "macro.h"
#include "strbuf.h"

#define XML_MAX_DEPTH 32

struct xml {
	struct strbuf *out;
	const char *stack[XML_MAX_DEPTH];
	unsigned depth;
	bool tag_open; /* "<name attr..." written, '>' not yet */
	bool text;     /* the open element got text: close on the same line */
};

void xml_init(struct xml *x, struct strbuf *out);
void xml_open(struct xml *x, const char *name);
void xml_attr(struct xml *x, const char *name, const char *value);
void xml_attrf(struct xml *x, const char *name, const char *fmt, ...) _printf_(3, 4);
void xml_text(struct xml *x, const char *text);
void xml_close(struct xml *x);
/* <name>text</name> */
void xml_element(struct xml *x, const char *name, const char *text);
/* <name/> with attributes given as NULL-terminated name, value pairs */
void xml_empty(struct xml *x, const char *name, ...) __attribute__((sentinel));
void xml_escape(struct strbuf *sb, const char *s);
