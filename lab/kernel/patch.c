/* SPDX-License-Identifier: MIT */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "patch.h"
#include "../util/banned.h"

void patch_free(struct patch *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nfiles; i++) {
		free(p->files[i].path);
		free(p->files[i].hunks);
	}
	free(p->files);
	free(p->path);
	free(p->subject);
	free(p->text);
	free(p);
}

/* "a/foo/bar.c" -> "foo/bar.c"; "/dev/null" -> NULL. Strips a tab-separated timestamp. */
static char *strip_prefix(const char *s, size_t len)
{
	const char *tab = memchr(s, '\t', len);
	const char *slash;

	if (tab)
		len = (size_t)(tab - s);
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\r'))
		len--;
	if (len == 9 && strneq(s, "/dev/null", 9))
		return NULL;
	slash = memchr(s, '/', len);
	if (!slash)
		return xstrndup(s, len);
	return xstrndup(slash + 1, len - (size_t)(slash + 1 - s));
}

static bool parse_range(const char **p, unsigned *start, unsigned *len)
{
	char *end;
	unsigned long v = strtoul(*p, &end, 10);

	if (end == *p)
		return false;
	*start = (unsigned)v;
	*len = 1;
	if (*end == ',') {
		const char *q = end + 1;

		v = strtoul(q, &end, 10);
		if (end == q)
			return false;
		*len = (unsigned)v;
	}
	*p = end;
	return true;
}

/* a "--- old" and "+++ new" pair starts the next file; a missing new path is a deletion */
static struct patch_file *add_file(struct patch *p, size_t *files_alloc, const char *old, char *newp)
{
	struct patch_file *f;

	GROW(p->files, *files_alloc, p->nfiles + 1);
	f = &p->files[p->nfiles++];
	f->created = streq(old, "/dev/null");
	f->deleted = !newp;
	f->path = newp ? newp : xstrdup(old);
	return f;
}

/* the hunk runs while its counts last: returns the line after it and sets its last line */
static const char *skip_hunk_body(const char *l2, struct patch_hunk *h, unsigned *lineno)
{
	unsigned old_left = h->old_len, new_left = h->new_len;

	while ((old_left || new_left) && *l2) {
		const char *nl2 = strchr(l2, '\n');

		(*lineno)++;
		if (*l2 == ' ') {
			old_left -= old_left > 0;
			new_left -= new_left > 0;
		} else if (*l2 == '-') {
			old_left -= old_left > 0;
		} else if (*l2 == '+') {
			new_left -= new_left > 0;
		} else if (*l2 != '\\') {
			break;
		}
		l2 = nl2 ? nl2 + 1 : l2 + strlen(l2);
	}
	h->last_line = *lineno;
	return l2;
}

int patch_load(const char *path, struct patch **ret, struct diags *d)
{
	_cleanup_(patch_freep) struct patch *p = xcalloc(1, sizeof(*p));
	struct strbuf sb = STRBUF_INIT;
	struct patch_file *cur = NULL;
	size_t files_alloc = 0, hunks_alloc = 0;
	const char *line, *next;
	unsigned lineno = 0;
	struct pos pos = { .file = path };
	char *pending_old = NULL;
	bool folded = false, continues; /* the line before was the subject's; this one goes on with it */
	int r = strbuf_read_file(&sb, path, 64 << 20);

	if (r < 0) {
		diags_add(d, &pos, "cannot read patch: %s", strerror(-r));
		strbuf_release(&sb);
		return r;
	}
	p->path = xstrdup(path);
	p->text = strbuf_detach(&sb, NULL);
	sha256_hex(p->text, strlen(p->text), p->sha256);
	for (line = p->text; *line; line = next) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		next = nl ? nl + 1 : line + len;
		lineno++;
		continues = folded && len && (line[0] == ' ' || line[0] == '\t');
		folded = false;
		if (!p->subject && str_startswith(line, "Subject: ")) {
			p->subject = xstrndup(line + 9, len - 9);
			folded = true;
		} else if (continues) {
			/* a long subject goes on in the next header line (RFC 5322 folding) */
			char *longer = xasprintf("%s %.*s", p->subject, (int)(len - strspn(line, " \t")),
						 line + strspn(line, " \t"));

			free(p->subject);
			p->subject = longer;
			folded = true;
		} else if (len > 4 && strneq(line, "--- ", 4)) {
			free(pending_old);
			pending_old = strip_prefix(line + 4, len - 4);
			if (!pending_old)
				pending_old = xstrdup("/dev/null");
		} else if (len > 4 && strneq(line, "+++ ", 4) && pending_old) {
			cur = add_file(p, &files_alloc, pending_old, strip_prefix(line + 4, len - 4));
			hunks_alloc = 0;
			free(pending_old);
			pending_old = NULL;
		} else if (cur && len > 3 && strneq(line, "@@ -", 4)) {
			struct patch_hunk h = { .first_line = lineno };
			const char *q = line + 4;

			if (!parse_range(&q, &h.old_start, &h.old_len) || strncmp(q, " +", 2) != 0 ||
			    (q += 2, !parse_range(&q, &h.new_start, &h.new_len))) {
				pos.line = lineno;
				pos.col = 1;
				diags_add(d, &pos, "malformed hunk header");
				free(pending_old);
				return -EINVAL;
			}
			next = skip_hunk_body(next, &h, &lineno);
			GROW(cur->hunks, hunks_alloc, cur->nhunks + 1);
			cur->hunks[cur->nhunks++] = h;
		}
	}
	free(pending_old);
	if (!p->nfiles) {
		diags_add(d, &pos, "no diff in this file: is it a patch?");
		return -EINVAL;
	}
	*ret = TAKE_PTR(p);
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int patch_series_list(const char *dir, struct strv *ret)
{
	DIR *dh = opendir(dir);
	struct dirent *de;
	struct strv names = STRV_INIT;

	if (!dh)
		return -errno;
	while ((de = readdir(dh)))
		if (de->d_name[0] != '.' && (str_endswith(de->d_name, ".patch") || str_endswith(de->d_name, ".mbox") ||
					     str_endswith(de->d_name, ".diff")))
			strv_push(&names, de->d_name);
	closedir(dh);
	if (names.n)
		qsort(names.v, names.n, sizeof(char *), name_cmp);
	for (size_t i = 0; i < names.n; i++)
		strv_push_take(ret, path_join(dir, names.v[i]));
	strv_release(&names);
	return 0;
}

const struct patch_hunk *patch_find_hunk(const struct patch *p, const char *file, unsigned old_line,
					 const struct patch_file **ret_file)
{
	for (size_t i = 0; i < p->nfiles; i++) {
		if (!streq(p->files[i].path, file))
			continue;
		for (size_t j = 0; j < p->files[i].nhunks; j++)
			if (p->files[i].hunks[j].old_start == old_line) {
				if (ret_file)
					*ret_file = &p->files[i];
				return &p->files[i].hunks[j];
			}
	}
	return NULL;
}

char *patch_lines(const struct patch *p, unsigned first, unsigned last)
{
	struct strbuf sb = STRBUF_INIT;
	const char *line = p->text;
	unsigned n = 1;

	while (*line && n <= last) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) + 1 : strlen(line);

		if (n >= first)
			strbuf_add(&sb, line, len);
		line += len;
		n++;
	}
	return strbuf_detach(&sb, NULL);
}

const char *patch_subject_line(const char *s)
{
	const char *end = s[0] == '[' ? strchr(s, ']') : NULL;

	if (!end)
		return s;
	end += strspn(end + 1, " \t") + 1;
	return *end ? end : s;
}
