/* SPDX-License-Identifier: MIT */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "diag.h"
#include "escape.h"
#include "banned.h"

void diags_addv(struct diags *d, const struct pos *pos, const char *fmt, va_list ap)
{
	size_t limit = d->limit ? d->limit : 200;
	struct diag *x;

	if (d->n >= limit)
		return;
	GROW(d->v, d->alloc, d->n + 1);
	x = &d->v[d->n];
	x->file = xstrdup(pos && pos->file ? pos->file : "");
	x->line = pos ? pos->line : 0;
	x->col = pos ? pos->col : 0;
	x->msg = xvasprintf(fmt, ap);
	x->seq = d->n;
	d->n++;
}

void diags_add(struct diags *d, const struct pos *pos, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	diags_addv(d, pos, fmt, ap);
	va_end(ap);
}

static int diag_cmp(const void *a, const void *b)
{
	const struct diag *x = a, *y = b;
	int r = strcmp(x->file, y->file);

	if (r)
		return r;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void diags_sort(struct diags *d)
{
	if (d->n > 1)
		qsort(d->v, d->n, sizeof(*d->v), diag_cmp);
}

void diags_release(struct diags *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].file);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = d->alloc = 0;
}

/* Messages quote what they are about, and that can be anything a fetched run
 * folder or a tool's output holds: shown so a terminal acts on none of it. */
void diags_format(const struct diags *d, struct strbuf *sb)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct diag *x = &d->v[i];

		if (*x->file) {
			term_escape(sb, x->file);
			if (x->line)
				strbuf_addf(sb, ":%u", x->line);
			if (x->line && x->col)
				strbuf_addf(sb, ":%u", x->col);
			strbuf_addstr(sb, ": ");
		}
		term_escape_lines(sb, x->msg);
		strbuf_addch(sb, '\n');
	}
}
