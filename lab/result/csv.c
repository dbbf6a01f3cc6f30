/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/strmap.h"
#include "csv.h"
#include "../util/banned.h"

enum { COL_VARIANT, COL_BOOT, COL_RUN, COL_METRIC, COL_VALUE, NCOLS };
static const char *const col_names[NCOLS] = { "variant", "boot", "run", "metric", "value" };
#define COLUMNS "variant, boot, run, metric and value"
/* how much of a name or value an error quotes */
#define QUOTE_MAX 80

struct field {
	struct strbuf sb;
	unsigned line, col;
};

/* The line of each metric of a run, in the order of its metrics. */
struct run_lines {
	unsigned *v;
	size_t n, alloc;
};

struct csv {
	const char *p, *end, *line_start;
	const char *file;
	unsigned line;
	struct diags *d;
	/* the record read last: its first NCOLS + 1 fields (later ones go to scratch) and their count */
	struct field f[NCOLS + 1], scratch;
	size_t nf;
	unsigned rec_line;
	int col_of[NCOLS]; /* the header's field of each column */
	size_t rows;
	struct result_set *rs;
	struct strmap runs; /* "variant\x1fboot\x1frun" -> the run's index; no field has a control character */
	struct strv keys;   /* the map's keys */
	struct strbuf key, last_key;
	size_t last_run;    /* rows of one run usually come together: the previous row's */
	struct run_lines *lines; /* as many as runs were made */
	size_t nlines, lines_alloc;
	size_t errors;
	size_t *per_variant, pv_alloc; /* runs so far of each variant: the next run's repeat */
};

static void csv_release(struct csv *x)
{
	for (size_t i = 0; i < ELEMENTSOF(x->f); i++)
		strbuf_release(&x->f[i].sb);
	strbuf_release(&x->scratch.sb);
	strmap_release(&x->runs);
	strv_release(&x->keys);
	strbuf_release(&x->key);
	strbuf_release(&x->last_key);
	for (size_t i = 0; i < x->nlines; i++)
		free(x->lines[i].v);
	free(x->lines);
	free(x->per_variant);
	result_set_free(x->rs);
}

_printf_(4, 5) static void error_at(struct csv *x, unsigned line, unsigned col, const char *fmt, ...)
{
	struct pos pos = { .file = x->file, .line = line, .col = col };
	va_list ap;

	va_start(ap, fmt);
	diags_addv(x->d, &pos, fmt, ap);
	va_end(ap);
	x->errors++;
}

static bool diags_full(const struct csv *x)
{
	return x->errors >= (x->d->limit ? x->d->limit : 200);
}

static unsigned col_at(const struct csv *x, const char *p)
{
	return (unsigned)(p - x->line_start) + 1;
}

/* A line ends at LF, CRLF, a CR that ends the text, or the end. */
static bool at_eol(const struct csv *x, const char *p)
{
	return p == x->end || *p == '\n' || (*p == '\r' && (p + 1 == x->end || p[1] == '\n'));
}

static void skip_eol(struct csv *x)
{
	if (x->p < x->end && *x->p == '\r')
		x->p++;
	if (x->p < x->end && *x->p == '\n') {
		x->p++;
		x->line++;
		x->line_start = x->p;
	}
}

static void skip_line(struct csv *x)
{
	const char *nl = memchr(x->p, '\n', (size_t)(x->end - x->p));

	x->p = nl ? nl : x->end;
	skip_eol(x);
}

static int read_quoted(struct csv *x, struct field *f)
{
	const char *p = x->p + 1;

	for (;;) {
		if (p == x->end) {
			x->p = p;
			error_at(x, f->line, f->col, "a quoted field without its closing quote");
			return -1;
		}
		if (*p == '"') {
			if (p + 1 < x->end && p[1] == '"') {
				strbuf_addch(&f->sb, '"');
				p += 2;
				continue;
			}
			p++;
			break;
		}
		if (*p == '\n') {
			x->line++;
			x->line_start = p + 1;
		}
		strbuf_addch(&f->sb, *p++);
	}
	x->p = p;
	if (p < x->end && *p != ',' && !at_eol(x, p)) {
		error_at(x, x->line, col_at(x, p), "text after the closing quote of a field (a quote inside a "
						   "quoted field is written \"\")");
		return -1;
	}
	return 0;
}

static int read_unquoted(struct csv *x, struct field *f)
{
	const char *p = x->p;
	size_t n;

	while (p < x->end && *p != ',' && *p != '\n') {
		if (*p == '"') {
			error_at(x, x->line, col_at(x, p), "a quote inside an unquoted field (quote the whole "
							   "field and write the quote as \"\")");
			return -1;
		}
		p++;
	}
	n = (size_t)(p - x->p);
	if (n && p[-1] == '\r' && at_eol(x, p - 1))
		n--; /* the CR of a CRLF stays for skip_eol */
	strbuf_add(&f->sb, x->p, n);
	x->p += n;
	return 0;
}

/* 1: a record in x->f and x->nf; 0: the end of the text; -1: a bad record, reported and skipped. */
static int read_record(struct csv *x)
{
	while (x->p < x->end && at_eol(x, x->p)) /* blank lines are no records */
		skip_eol(x);
	if (x->p == x->end)
		return 0;
	x->rec_line = x->line;
	x->nf = 0;
	for (;;) {
		struct field *f = x->nf < ELEMENTSOF(x->f) ? &x->f[x->nf] : &x->scratch;
		int r;

		strbuf_reset(&f->sb);
		f->line = x->line;
		f->col = col_at(x, x->p);
		r = x->p < x->end && *x->p == '"' ? read_quoted(x, f) : read_unquoted(x, f);
		if (r < 0) {
			skip_line(x);
			return -1;
		}
		x->nf++;
		if (x->p < x->end && *x->p == ',') {
			x->p++;
			continue;
		}
		skip_eol(x);
		return 1;
	}
}

static bool field_is(const struct field *f, const char *s)
{
	return f->sb.len == strlen(s) && memcmp(f->sb.buf, s, f->sb.len) == 0;
}

static int read_header(struct csv *x)
{
	int r = read_record(x);
	bool ok = r > 0;

	if (r == 0)
		error_at(x, 0, 0, "empty: no header line (" COLUMNS ")");
	for (size_t k = 0; k < NCOLS; k++)
		x->col_of[k] = -1;
	for (size_t i = 0; r > 0 && i < x->nf && i < ELEMENTSOF(x->f); i++) {
		const struct field *f = &x->f[i];
		size_t k;

		for (k = 0; k < NCOLS && !field_is(f, col_names[k]); k++)
			;
		if (k == NCOLS)
			error_at(x, f->line, f->col, "unknown column '%.*s' (the columns are " COLUMNS ")", QUOTE_MAX,
				 f->sb.buf);
		else if (x->col_of[k] >= 0)
			error_at(x, f->line, f->col, "column '%s' twice in the header", col_names[k]);
		else
			x->col_of[k] = (int)i;
		ok &= k < NCOLS && x->col_of[k] == (int)i;
	}
	for (size_t k = 0; r > 0 && k < NCOLS; k++)
		if (x->col_of[k] < 0) {
			error_at(x, x->rec_line, 0, "no column '%s' in the header (it names " COLUMNS ")", col_names[k]);
			ok = false;
		}
	return ok ? 0 : -1;
}

/* A name: no control character, and not empty unless it may be. */
static bool check_name(struct csv *x, const struct field *f, const char *what, bool required)
{
	if (required && !f->sb.len) {
		error_at(x, f->line, f->col, "empty %s", what);
		return false;
	}
	for (size_t i = 0; i < f->sb.len; i++) {
		unsigned char c = (unsigned char)f->sb.buf[i];

		if (c < 0x20 || c == 0x7f) {
			error_at(x, f->line, f->col, "a control character (0x%02x) in the %s", c, what);
			return false;
		}
	}
	return true;
}

static bool parse_value(struct csv *x, const struct field *f, double *ret)
{
	const char *s = f->sb.buf;
	char *end = NULL;
	double v;

	if (!f->sb.len) {
		error_at(x, f->line, f->col, "empty value");
		return false;
	}
	v = strtod(s, &end);
	/* strtod skips leading space, and a NUL would end the number early: the whole field or nothing */
	if ((unsigned char)*s <= ' ' || end != s + f->sb.len) {
		error_at(x, f->line, f->col, "value '%.*s' is not a number", QUOTE_MAX, s);
		return false;
	}
	if (!isfinite(v)) {
		error_at(x, f->line, f->col, "value '%.*s' is not a finite number", QUOTE_MAX, s);
		return false;
	}
	*ret = v;
	return true;
}

static size_t new_run(struct csv *x, const struct field *const *f)
{
	struct result_set *rs = x->rs;
	ssize_t vi = strv_index(&rs->variants, f[COL_VARIANT]->sb.buf);
	size_t v = vi < 0 ? rs->variants.n : (size_t)vi, at = rs->n;
	struct result_run *r;

	GROW(x->per_variant, x->pv_alloc, v + 1);
	if (vi < 0)
		x->per_variant[v] = 0;
	r = result_add_run(rs, f[COL_RUN]->sb.buf, f[COL_VARIANT]->sb.buf, RESULT_CSV_GROUP, 0,
			   (unsigned)++x->per_variant[v]);
	r->status = RUN_OK;
	r->boot = f[COL_BOOT]->sb.len ? xstrdup(f[COL_BOOT]->sb.buf) : NULL;
	GROW(x->lines, x->lines_alloc, rs->n);
	memset(&x->lines[at], 0, sizeof(x->lines[at]));
	x->nlines = rs->n;
	strv_push(&x->keys, x->key.buf);
	strmap_put(&x->runs, x->keys.v[x->keys.n - 1], at);
	return at;
}

static void add_row(struct csv *x, const struct field *const *f, double value)
{
	struct run_lines *l;

	strbuf_reset(&x->key);
	strbuf_add(&x->key, f[COL_VARIANT]->sb.buf, f[COL_VARIANT]->sb.len);
	strbuf_addch(&x->key, 0x1f);
	strbuf_add(&x->key, f[COL_BOOT]->sb.buf, f[COL_BOOT]->sb.len);
	strbuf_addch(&x->key, 0x1f);
	strbuf_add(&x->key, f[COL_RUN]->sb.buf, f[COL_RUN]->sb.len);
	if (!x->rs->n || x->key.len != x->last_key.len || memcmp(x->key.buf, x->last_key.buf, x->key.len) != 0) {
		if (!strmap_get(&x->runs, x->key.buf, &x->last_run))
			x->last_run = new_run(x, f);
		strbuf_reset(&x->last_key);
		strbuf_add(&x->last_key, x->key.buf, x->key.len);
	}
	result_add_metric(&x->rs->runs[x->last_run], f[COL_METRIC]->sb.buf, value);
	l = &x->lines[x->last_run];
	GROW(l->v, l->alloc, l->n + 1);
	l->v[l->n++] = x->rec_line;
}

static void read_row(struct csv *x)
{
	const struct field *f[NCOLS];
	bool ok = true;
	double value = 0;

	if (x->nf != NCOLS) {
		error_at(x, x->rec_line, 1, "%zu field%s where the header has %d", x->nf, x->nf == 1 ? "" : "s", NCOLS);
		return;
	}
	for (size_t k = 0; k < NCOLS; k++)
		f[k] = &x->f[x->col_of[k]];
	ok &= check_name(x, f[COL_VARIANT], "variant", true);
	ok &= check_name(x, f[COL_BOOT], "boot", false);
	ok &= check_name(x, f[COL_RUN], "run", true);
	ok &= check_name(x, f[COL_METRIC], "metric", true);
	ok &= parse_value(x, f[COL_VALUE], &value);
	if (ok)
		add_row(x, f, value);
}

static void read_rows(struct csv *x)
{
	int r;

	while (!diags_full(x) && (r = read_record(x)) != 0) {
		if (++x->rows > RESULT_CSV_MAX_ROWS) {
			error_at(x, x->rec_line, 0, "more than %u rows, the most this reads: split the file",
				 RESULT_CSV_MAX_ROWS);
			return;
		}
		if (r > 0)
			read_row(x);
	}
	if (!x->rows && !x->errors)
		error_at(x, 0, 0, "no rows after the header");
}

struct named_line {
	const char *name;
	unsigned line;
};

static int named_line_cmp(const void *a, const void *b)
{
	const struct named_line *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* A metric twice in one run: which value would count? Both lines are named. */
static void check_duplicates(struct csv *x)
{
	_cleanup_free_ struct named_line *nl = NULL;
	size_t alloc = 0;

	for (size_t i = 0; i < x->rs->n && !diags_full(x); i++) {
		const struct result_run *r = &x->rs->runs[i];

		if (r->nm < 2)
			continue;
		GROW(nl, alloc, r->nm);
		for (size_t k = 0; k < r->nm; k++)
			nl[k] = (struct named_line){ r->m[k].name, x->lines[i].v[k] };
		qsort(nl, r->nm, sizeof(*nl), named_line_cmp);
		for (size_t k = 1, first = 0; k < r->nm; k++) {
			if (!streq(nl[k].name, nl[first].name)) {
				first = k;
				continue;
			}
			error_at(x, nl[k].line, 0, "metric '%.*s' twice in run '%.*s' of variant '%.*s'%s%.*s%s: lines %u and %u",
				 QUOTE_MAX, nl[k].name, QUOTE_MAX, r->id, QUOTE_MAX, r->variant, r->boot ? ", boot '" : "",
				 QUOTE_MAX, r->boot ? r->boot : "", r->boot ? "'" : "", nl[first].line, nl[k].line);
		}
	}
}

static void order_variants(struct csv *x, const char *base)
{
	struct strv *v = &x->rs->variants;
	ssize_t i;

	if (!v->n)
		return;
	if (base && (i = strv_index(v, base)) < 0) {
		_cleanup_strbuf_ struct strbuf all = STRBUF_INIT;

		for (size_t k = 0; k < v->n; k++)
			strbuf_addf(&all, "%s'%.*s'", k ? ", " : "", QUOTE_MAX, v->v[k]);
		error_at(x, 0, 0, "no variant '%.*s' in the file (its variants: %s)", QUOTE_MAX, base, all.buf);
	} else if (base && i > 0) {
		char *b = v->v[i];

		memmove(v->v + 1, v->v, (size_t)i * sizeof(*v->v));
		v->v[0] = b;
	}
	if (v->n < 2 && !x->errors) /* a bad row may have been the other variant's */
		error_at(x, 0, 0, "nothing to compare: every row is of variant '%.*s'", QUOTE_MAX, v->v[0]);
}

int result_csv_parse(const char *text, size_t len, const char *file, const char *base, struct result_set **ret,
		     struct diags *d)
{
	_cleanup_(csv_release) struct csv x = { .p = text, .line_start = text, .file = file, .line = 1, .d = d,
						.key = STRBUF_INIT, .last_key = STRBUF_INIT, .runs = STRMAP_INIT,
						.keys = STRV_INIT };
	for (size_t i = 0; i < ELEMENTSOF(x.f); i++)
		strbuf_init(&x.f[i].sb, 0);
	strbuf_init(&x.scratch.sb, 0);
	if (len > RESULT_CSV_MAX_BYTES) {
		error_at(&x, 0, 0, "%zu MiB, more than the %zu MiB this reads: split the file", len >> 20,
			 RESULT_CSV_MAX_BYTES >> 20);
		return -EINVAL;
	}
	x.end = text + len;
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) /* a UTF-8 byte order mark, as spreadsheets write */
		x.p = x.line_start = text + 3;
	x.rs = result_set_new(file, "judge");
	if (read_header(&x) < 0)
		return -EINVAL;
	read_rows(&x);
	check_duplicates(&x);
	order_variants(&x, base);
	if (x.errors)
		return -EINVAL;
	*ret = TAKE_PTR(x.rs);
	return 0;
}
