/* SPDX-License-Identifier: MIT */
/*
 * Escapers for strings lab did not write itself (run folders fetched from
 * others, tool and console output) on their way to a terminal or into
 * Markdown; XML and JSON have their own (xml.h, json.h). Pure: each
 * appends to a strbuf and never fails.
 *
 * The terminal form shows every byte a terminal could act on, visibly and
 * one way only: "\\" for a backslash, "\t" "\n" "\r", "\xHH" for another
 * C0 control, DEL, or a byte that is not valid UTF-8 (HH >= 80 only
 * then), and "\uHHHH" for a C1 control (U+0080..U+009F, which some
 * terminals take for ESC sequences) or a character that reorders or
 * breaks what is shown (bidirectional controls, line and paragraph
 * separators). Printable UTF-8 is kept as it is.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "strbuf.h"

/* The length (1..4) of the valid UTF-8 sequence at s and its code point in
 * *ret_cp, or 0 when the bytes there are not one (overlong, a surrogate,
 * beyond U+10FFFF, cut short, a stray continuation byte). */
size_t utf8_decode(const char *s, uint32_t *ret_cp);
/* C0, DEL, C1, and the bidirectional and line-breaking format characters. */
bool unicode_is_control(uint32_t cp);

/* One single-line field (a name, an id, an error message) in the terminal form. */
void term_escape(struct strbuf *sb, const char *s);
/* Text of several lines read as written (a diagnostic quoting tool output or
 * a patch hunk): newlines, tabs, a CR before a newline and backslashes stay,
 * every other control is escaped as in term_escape(). */
void term_escape_lines(struct strbuf *sb, const char *s);
/* Inline Markdown text (a table cell, a heading) that renders as
 * term_escape() shows s: no HTML (<, >, & as entities), no emphasis, code,
 * link, strikethrough or cell break (\ ` * _ [ ] ~ | escaped), and nothing
 * that starts a heading, list or underline where it begins a line. */
void md_escape(struct strbuf *sb, const char *s);
/* s in a code span when that needs no escaping (escapes do not work inside
 * one): non-empty printable text without ` | \ < > & or blanks at its ends;
 * anything else as md_escape(). */
void md_code(struct strbuf *sb, const char *s);
