/* SPDX-License-Identifier: MIT */
#include <string.h>
#include "escape.h"
#include "banned.h"

size_t utf8_decode(const char *s, uint32_t *ret_cp)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp, min;
	size_t n;

	if (p[0] < 0x80) {
		*ret_cp = p[0];
		return 1;
	}
	if (p[0] >= 0xc2 && p[0] <= 0xdf) {
		n = 2, cp = p[0] & 0x1f, min = 0x80;
	} else if ((p[0] & 0xf0) == 0xe0) {
		n = 3, cp = p[0] & 0x0f, min = 0x800;
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		n = 4, cp = p[0] & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	/* a NUL is no continuation byte: a sequence cut short by the end stops here */
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*ret_cp = cp;
	return n;
}

bool unicode_is_control(uint32_t cp)
{
	return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f) ||
	       cp == 0x061c ||                    /* arabic letter mark */
	       cp == 0x200e || cp == 0x200f ||    /* left-to-right, right-to-left marks */
	       (cp >= 0x2028 && cp <= 0x202e) ||  /* line, paragraph separators; embeddings, overrides */
	       (cp >= 0x2066 && cp <= 0x2069);    /* isolates */
}

static void escape_term(struct strbuf *sb, const char *s, bool lines)
{
	while (*s) {
		uint32_t cp;
		size_t n = utf8_decode(s, &cp);

		if (!n) {
			strbuf_addf(sb, "\\x%02x", (unsigned char)*s);
			s++;
			continue;
		}
		if (lines && (cp == '\n' || cp == '\t' || cp == '\\' || (cp == '\r' && s[1] == '\n')))
			strbuf_addch(sb, (int)cp);
		else if (cp == '\\')
			strbuf_addstr(sb, "\\\\");
		else if (cp == '\t')
			strbuf_addstr(sb, "\\t");
		else if (cp == '\n')
			strbuf_addstr(sb, "\\n");
		else if (cp == '\r')
			strbuf_addstr(sb, "\\r");
		else if (cp < 0x80 && unicode_is_control(cp))
			strbuf_addf(sb, "\\x%02x", cp);
		else if (unicode_is_control(cp))
			strbuf_addf(sb, "\\u%04x", cp);
		else
			strbuf_add(sb, s, n);
		s += n;
	}
}

void term_escape(struct strbuf *sb, const char *s)
{
	escape_term(sb, s, false);
}

void term_escape_lines(struct strbuf *sb, const char *s)
{
	escape_term(sb, s, true);
}

/* Where the text would start a block if it began a line: a heading (#), a
 * list item ("- ", "+ ", "1. ", "1) "), a setext underline or a thematic
 * break (a run of = or -); the offset of the character to escape there,
 * or SIZE_MAX. */
static size_t block_marker(const char *s)
{
	size_t i = strspn(s, " "), d;
	char c = s[i];

	if (c == '#')
		return i;
	if ((c == '-' || c == '+' || c == '=') &&
	    (!s[i + 1] || s[i + 1] == ' ' || ((c == '-' || c == '=') && !s[i + strspn(s + i, c == '-' ? "- " : "= ")])))
		return i;
	d = strspn(s + i, "0123456789");
	if (d >= 1 && d <= 9 && (s[i + d] == '.' || s[i + d] == ')') && (!s[i + d + 1] || s[i + d + 1] == ' '))
		return i + d;
	return SIZE_MAX;
}

void md_escape(struct strbuf *sb, const char *s)
{
	_cleanup_strbuf_ struct strbuf t = STRBUF_INIT;
	size_t lead;

	/* controls and bad bytes as a terminal shows them, then that text as Markdown */
	term_escape(&t, s);
	lead = block_marker(t.buf);
	for (size_t i = 0; i < t.len; i++) {
		char c = t.buf[i];

		switch (c) {
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '\\': case '`': case '*': case '_': case '[': case ']': case '~': case '|':
			strbuf_addch(sb, '\\');
			strbuf_addch(sb, c);
			break;
		default:
			if (i == lead)
				strbuf_addch(sb, '\\');
			strbuf_addch(sb, c);
		}
	}
}

static bool code_plain(const char *s)
{
	size_t len = strlen(s);

	if (!len || s[0] == ' ' || s[len - 1] == ' ')
		return false;
	while (*s) {
		uint32_t cp;
		size_t n = utf8_decode(s, &cp);

		if (!n || unicode_is_control(cp) || (cp < 0x80 && strchr("`|\\<>&", (int)cp)))
			return false;
		s += n;
	}
	return true;
}

void md_code(struct strbuf *sb, const char *s)
{
	if (!code_plain(s)) {
		md_escape(sb, s);
		return;
	}
	strbuf_addch(sb, '`');
	strbuf_addstr(sb, s);
	strbuf_addch(sb, '`');
}
