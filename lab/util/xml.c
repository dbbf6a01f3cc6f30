/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include "alloc.h"
#include "escape.h"
#include "xml.h"
#include "banned.h"

void xml_escape(struct strbuf *sb, const char *s)
{
	while (*s) {
		uint32_t cp;
		size_t n = utf8_decode(s, &cp);

		switch (n ? cp : 0) {
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&apos;"); break;
		case '\t': case '\n': case '\r':
			strbuf_addf(sb, "&#%u;", cp);
			break;
		default:
			/* XML 1.0 has no other C0 control, even escaped, and
			 * discourages DEL and C1; a document that is not UTF-8
			 * is not well-formed */
			if (!n || cp < 0x20 || (cp >= 0x7f && cp <= 0x9f))
				strbuf_addch(sb, '?');
			else
				strbuf_add(sb, s, n);
		}
		s += n ? n : 1;
	}
}

void xml_init(struct xml *x, struct strbuf *out)
{
	*x = (struct xml){ .out = out };
}

static void finish_tag(struct xml *x)
{
	if (x->tag_open) {
		strbuf_addch(x->out, '>');
		x->tag_open = false;
	}
}

void xml_open(struct xml *x, const char *name)
{
	if (x->depth >= XML_MAX_DEPTH)
		abort();
	finish_tag(x);
	if (x->depth || x->out->len)
		strbuf_addch(x->out, '\n');
	strbuf_addchars(x->out, ' ', 2 * x->depth);
	strbuf_addf(x->out, "<%s", name);
	x->stack[x->depth++] = name;
	x->tag_open = true;
	x->text = false;
}

void xml_attr(struct xml *x, const char *name, const char *value)
{
	strbuf_addf(x->out, " %s='", name);
	xml_escape(x->out, value ? value : "");
	strbuf_addch(x->out, '\'');
}

void xml_attrf(struct xml *x, const char *name, const char *fmt, ...)
{
	_cleanup_strbuf_ struct strbuf v = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(&v, fmt, ap);
	va_end(ap);
	xml_attr(x, name, v.buf);
}

void xml_text(struct xml *x, const char *text)
{
	finish_tag(x);
	xml_escape(x->out, text);
	x->text = true;
}

void xml_close(struct xml *x)
{
	const char *name = x->stack[--x->depth];

	if (x->tag_open) {
		strbuf_addstr(x->out, "/>");
		x->tag_open = false;
	} else {
		if (!x->text) {
			strbuf_addch(x->out, '\n');
			strbuf_addchars(x->out, ' ', 2 * x->depth);
		}
		strbuf_addf(x->out, "</%s>", name);
	}
	x->text = false;
	if (!x->depth)
		strbuf_addch(x->out, '\n');
}

void xml_element(struct xml *x, const char *name, const char *text)
{
	xml_open(x, name);
	xml_text(x, text);
	xml_close(x);
}

void xml_empty(struct xml *x, const char *name, ...)
{
	va_list ap;
	const char *k;

	xml_open(x, name);
	va_start(ap, name);
	while ((k = va_arg(ap, const char *))) {
		const char *v = va_arg(ap, const char *);

		xml_attr(x, k, v);
	}
	va_end(ap);
	xml_close(x);
}
