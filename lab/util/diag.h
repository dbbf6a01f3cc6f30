/* SPDX-License-Identifier: MIT */
/*
 * Diagnostics: positioned error messages collected by the library layers
 * and printed once by the command (systemd's non-logging library split).
 * Messages are lowercase without a trailing period (git's guidelines).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include "macro.h"
#include "strbuf.h"

struct pos {
	const char *file; /* interned by the owner (spec), not freed here */
	unsigned line;    /* 1-based; 0 when unknown */
	unsigned col;     /* 1-based */
};

struct diag {
	char *file;
	unsigned line, col;
	char *msg;
	size_t seq; /* discovery order, for a stable sort */
};

struct diags {
	struct diag *v;
	size_t n, alloc;
	size_t limit; /* stop collecting after this many (0: default 200) */
};

void diags_add(struct diags *d, const struct pos *pos, const char *fmt, ...) _printf_(3, 4);
void diags_addv(struct diags *d, const struct pos *pos, const char *fmt, va_list ap);
void diags_sort(struct diags *d);
void diags_release(struct diags *d);
/* "FILE:LINE:COL: msg" (or "FILE: msg" without a position) into sb, one per line. */
void diags_format(const struct diags *d, struct strbuf *sb);

static inline void diags_releasep(struct diags *d)
{
	diags_release(d);
}
#define _cleanup_diags_ _cleanup_(diags_releasep)
