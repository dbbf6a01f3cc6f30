/* SPDX-License-Identifier: MIT */
#include <stdbool.h>
#include <string.h>
#include "yamlw.h"
#include "banned.h"

void yaml_quote(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		default:
			if (*p < 0x20 || *p == 0x7f)
				strbuf_addf(sb, "\\x%02x", *p);
			else
				strbuf_addch(sb, *p);
		}
	}
	strbuf_addch(sb, '"');
}

static bool literal_ok(const char *s)
{
	if (!*s || *s == ' ' || *s == '\n')
		return false;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\n') || *p == 0x7f)
			return false;
	return true;
}

void yaml_block(struct strbuf *sb, const char *s, unsigned indent)
{
	const char *p = s;
	size_t n = strlen(s);

	if (!literal_ok(s)) {
		yaml_quote(sb, s);
		strbuf_addch(sb, '\n');
		return;
	}
	/* "|" keeps one final newline, "|-" none; more than one needs "|+" */
	if (n && s[n - 1] == '\n')
		strbuf_addstr(sb, n > 1 && s[n - 2] == '\n' ? "|+\n" : "|\n");
	else
		strbuf_addstr(sb, "|-\n");
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len)
			strbuf_addchars(sb, ' ', indent);
		strbuf_add(sb, p, len);
		strbuf_addch(sb, '\n');
		if (!nl)
			break;
		p = nl + 1;
	}
}
