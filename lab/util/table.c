/* SPDX-License-Identifier: MIT */
#include <string.h>
#include "alloc.h"
#include "escape.h"
#include "strv.h"
#include "table.h"
#include "banned.h"

struct table *table_new(const char *const *columns)
{
	struct table *t = xcalloc(1, sizeof(*t));
	size_t n = 0;

	while (columns[n])
		n++;
	t->ncols = n;
	t->headers = xcalloc(n, sizeof(char *));
	t->keys = xcalloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++) {
		const char *colon = strchr(columns[i], ':');

		if (!colon)
			abort();
		t->headers[i] = xstrndup(columns[i], (size_t)(colon - columns[i]));
		t->keys[i] = xstrdup(colon + 1);
	}
	return t;
}

void table_free(struct table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->ncols; i++) {
		free(t->headers[i]);
		free(t->keys[i]);
	}
	for (size_t i = 0; i < t->ncells; i++)
		free(t->cells[i].s);
	free(t->headers);
	free(t->keys);
	free(t->cells);
	free(t);
}

static struct cell *next_cell(struct table *t)
{
	GROW(t->cells, t->alloc, t->ncells + 1);
	return &t->cells[t->ncells++];
}

void table_add_string(struct table *t, const char *s)
{
	struct cell *c = next_cell(t);

	c->type = s ? CELL_STRING : CELL_NULL;
	c->s = s ? xstrdup(s) : NULL;
}

void table_add_uint(struct table *t, uint64_t u)
{
	struct cell *c = next_cell(t);

	c->type = CELL_UINT;
	c->u = u;
	c->s = xasprintf("%llu", (unsigned long long)u);
}

void table_add_null(struct table *t)
{
	next_cell(t)->type = CELL_NULL;
}

size_t table_rows(const struct table *t)
{
	return t->ncols ? t->ncells / t->ncols : 0;
}

static const char *cell_text(const struct cell *c)
{
	return c->type == CELL_NULL ? "-" : c->s;
}

/* Display width: count UTF-8 lead bytes, not bytes. */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

void table_format_text(const struct table *t, struct strbuf *out)
{
	size_t rows = table_rows(t), n = (rows + 1) * t->ncols;
	_cleanup_free_ size_t *width = xcalloc(t->ncols, sizeof(size_t));
	_cleanup_strv_ struct strv text = STRV_INIT;

	/* cells hold what the data said (a fetched run's names): shown escaped */
	for (size_t i = 0; i < n; i++) {
		_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

		term_escape(&sb, i < t->ncols ? t->headers[i] : cell_text(&t->cells[i - t->ncols]));
		strv_push_take(&text, strbuf_detach(&sb, NULL));
		width[i % t->ncols] = MAX(width[i % t->ncols], text_width(text.v[i]));
	}
	for (size_t r = 0; r <= rows; r++) {
		size_t pending = 0;

		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = text.v[r * t->ncols + c];

			/* pad lazily so lines carry no trailing blanks */
			if (c) {
				strbuf_addchars(out, ' ', pending + 2);
			}
			strbuf_addstr(out, s);
			pending = width[c] - text_width(s);
		}
		strbuf_addch(out, '\n');
	}
}

void table_format_json(const struct table *t, struct strbuf *out)
{
	struct json j;
	size_t rows = table_rows(t);

	json_init(&j, out, true);
	json_array_begin(&j);
	for (size_t r = 0; r < rows; r++) {
		json_object_begin(&j);
		for (size_t c = 0; c < t->ncols; c++) {
			const struct cell *x = &t->cells[r * t->ncols + c];

			json_key(&j, t->keys[c]);
			if (x->type == CELL_UINT)
				json_uint(&j, x->u);
			else if (x->type == CELL_STRING)
				json_string(&j, x->s);
			else
				json_null(&j);
		}
		json_object_end(&j);
	}
	json_array_end(&j);
	json_finish(&j);
}
