/* SPDX-License-Identifier: MIT */
/*
 * Growable string buffer (git's strbuf). `buf` is never NULL and always
 * NUL-terminated; strbuf_detach() hands the string out and resets the buffer.
 */
#pragma once

#include <stddef.h>
#include <stdarg.h>
#include "macro.h"

struct strbuf {
	size_t alloc;
	size_t len;
	char *buf;
};

extern char strbuf_slopbuf[];
#define STRBUF_INIT { 0, 0, strbuf_slopbuf }

void strbuf_init(struct strbuf *sb, size_t hint);
void strbuf_release(struct strbuf *sb);
char *strbuf_detach(struct strbuf *sb, size_t *ret_len);
void strbuf_grow(struct strbuf *sb, size_t extra);
void strbuf_reset(struct strbuf *sb);
void strbuf_setlen(struct strbuf *sb, size_t len);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addchars(struct strbuf *sb, int c, size_t n);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) _printf_(2, 3);
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Read a whole file; returns 0 or a negative errno. */
int strbuf_read_file(struct strbuf *sb, const char *path, size_t limit);

static inline void strbuf_releasep(struct strbuf *sb)
{
	strbuf_release(sb);
}
#define _cleanup_strbuf_ _cleanup_(strbuf_releasep)
