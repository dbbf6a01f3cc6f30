/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <string.h>
#include <yaml.h>
#include "../util/alloc.h"
#include "node.h"
#include "../util/banned.h"

/* Nodes one document may expand to through aliases. */
#define NODE_BUDGET 200000
#define MAX_DEPTH 64

const char *node_kind_name(enum node_kind k)
{
	switch (k) {
	case NODE_SCALAR: return "a scalar";
	case NODE_MAP: return "a mapping";
	case NODE_SEQ: return "a sequence";
	}
	return "?";
}

const char *node_files_intern(struct node_files *f, const char *name)
{
	ssize_t i = strv_index(&f->names, name);

	if (i >= 0)
		return f->names.v[i];
	strv_push(&f->names, name);
	return f->names.v[f->names.n - 1];
}

void node_files_release(struct node_files *f)
{
	strv_release(&f->names);
}

struct node *node_new(enum node_kind kind, const struct pos *pos)
{
	struct node *n = xcalloc(1, sizeof(*n));

	n->kind = kind;
	if (pos)
		n->pos = *pos;
	return n;
}

void node_free(struct node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			node_free(n->keys[i]);
		node_free(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->scalar);
	free(n);
}

static struct node *copy_counted(const struct node *n, size_t *budget)
{
	struct node *c;

	if (!*budget)
		return NULL;
	(*budget)--;
	c = node_new(n->kind, &n->pos);
	c->plain = n->plain;
	if (n->scalar)
		c->scalar = xstrdup(n->scalar);
	for (size_t i = 0; i < n->n; i++) {
		struct node *k = NULL, *v;

		if (n->keys) {
			k = copy_counted(n->keys[i], budget);
			if (!k) {
				node_free(c);
				return NULL;
			}
		}
		v = copy_counted(n->items[i], budget);
		if (!v) {
			node_free(k);
			node_free(c);
			return NULL;
		}
		if (n->kind == NODE_MAP)
			node_map_append(c, k, v);
		else
			node_seq_append(c, v);
	}
	return c;
}

struct node *node_copy(const struct node *n)
{
	size_t budget = (size_t)-1;

	return copy_counted(n, &budget);
}

void node_map_append(struct node *map, struct node *key, struct node *value)
{
	size_t a = map->alloc;

	GROW(map->items, map->alloc, map->n + 1);
	GROW(map->keys, a, map->n + 1);
	map->keys[map->n] = key;
	map->items[map->n] = value;
	map->n++;
}

void node_seq_append(struct node *seq, struct node *item)
{
	GROW(seq->items, seq->alloc, seq->n + 1);
	seq->items[seq->n++] = item;
}

long node_map_index(const struct node *map, const char *key)
{
	if (!map || map->kind != NODE_MAP)
		return -1;
	for (size_t i = 0; i < map->n; i++)
		if (streq(map->keys[i]->scalar, key))
			return (long)i;
	return -1;
}

struct node *node_map_get(const struct node *map, const char *key)
{
	long i = node_map_index(map, key);

	return i < 0 ? NULL : map->items[i];
}

bool node_is_null(const struct node *n)
{
	return n->kind == NODE_SCALAR && n->plain &&
	       (!*n->scalar || streq(n->scalar, "~") || streq(n->scalar, "null") ||
		streq(n->scalar, "Null") || streq(n->scalar, "NULL"));
}

void node_check_keys(const struct node *map, const char *const *allowed, size_t nallowed, const char *what,
		     struct diags *d)
{
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->scalar;
		const char *hint;
		size_t j;

		if (map->keys[i]->poisoned)
			continue;
		for (j = 0; j < nallowed; j++)
			if (streq(k, allowed[j]))
				break;
		if (j < nallowed)
			continue;
		hint = str_suggest(k, allowed, nallowed);
		if (hint)
			diags_add(d, &map->keys[i]->pos, "unknown key '%s' in %s (did you mean '%s'?)", k, what, hint);
		else
			diags_add(d, &map->keys[i]->pos, "unknown key '%s' in %s", k, what);
	}
}

/* ---- parser ---- */

struct anchor {
	char *name;
	struct node *node; /* borrowed: lives in the tree, or NULL once discarded */
};

struct parser {
	yaml_parser_t yp;
	const char *file;
	const char *data; /* the text parsed, for what libyaml's errors leave out */
	size_t len;
	struct diags *d;
	struct anchor *anchors;
	size_t nanchors, anchors_alloc;
	/* nodes applied and taken out of the tree ("<<" keys and merged values): aliases may still name them */
	struct node *kept;
	size_t budget;
	bool failed;
};

static struct pos mark_pos(const struct parser *p, const yaml_mark_t *m)
{
	return (struct pos){ .file = p->file, .line = (unsigned)m->line + 1, .col = (unsigned)m->column + 1 };
}

/* Number of characters (not bytes) in s[0, n). */
static size_t utf8_count(const char *s, size_t n)
{
	size_t chars = 0;

	for (size_t i = 0; i < n; i++)
		chars += ((unsigned char)s[i] & 0xc0) != 0x80;
	return chars;
}

/*
 * libyaml reads at most 1024 characters of a key before its ':' (YAML's
 * limit on implicit keys). A longer key fails with an error that does not
 * say so: "could not find expected ':'", "mapping values are not allowed
 * in this context", "did not find expected ',' or '}'", all pointing at
 * the ':'. The keys of lab.yaml are names or keywords, so say what the
 * user must change: the name's length. Returns true when it reported.
 */
static bool long_key_error(struct parser *p)
{
	const yaml_mark_t *m = &p->yp.problem_mark;
	const char *line = p->data, *end = p->data + p->len, *colon, *key, *name;
	size_t keylen;
	struct pos pos;

	if (m->line == 0 && p->len >= 3 && memcmp(line, "\xef\xbb\xbf", 3) == 0)
		line += 3; /* a byte order mark is not a column */
	for (size_t l = 0; l < m->line; l++) {
		line = memchr(line, '\n', (size_t)(end - line));
		if (!line)
			return false;
		line++;
	}
	colon = line;
	for (size_t col = 0; col < m->column; col++) {
		if (colon == end || *colon == '\n')
			return false;
		do
			colon++;
		while (colon < end && ((unsigned char)*colon & 0xc0) == 0x80);
	}
	if (colon == end || *colon != ':')
		return false;
	/* the key starts after the indentation, "- " and "? ", or after a flow '{', '[' or ',' */
	key = colon;
	while (key > line && key[-1] != '{' && key[-1] != '[' && key[-1] != ',')
		key--;
	for (;;) {
		while (key < colon && (*key == ' ' || *key == '\t'))
			key++;
		if (key + 1 < colon && (*key == '-' || *key == '?') && (key[1] == ' ' || key[1] == '\t'))
			key++;
		else
			break;
	}
	keylen = (size_t)(colon - key);
	while (keylen && (key[keylen - 1] == ' ' || key[keylen - 1] == '\t'))
		keylen--;
	name = key;
	if (keylen >= 2 && (*key == '"' || *key == '\'') && key[keylen - 1] == *key) {
		name++; /* the quotes are not part of the name */
		keylen -= 2;
	}
	keylen = utf8_count(name, keylen);
	if (keylen <= 1024)
		return false;
	pos = (struct pos){ .file = p->file, .line = (unsigned)m->line + 1,
			    .col = (unsigned)utf8_count(line, (size_t)(key - line)) + 1 };
	diags_add(p->d, &pos, "name too long (%zu characters, at most %d)", keylen, STR_NAME_MAX);
	return true;
}

static void syntax_error(struct parser *p)
{
	struct pos pos = mark_pos(p, &p->yp.problem_mark);
	const char *problem = p->yp.problem ? p->yp.problem : "invalid YAML";

	if (long_key_error(p)) {
		p->failed = true;
		return;
	}
	if (p->yp.context) {
		struct pos ctx = mark_pos(p, &p->yp.context_mark);

		diags_add(p->d, &pos, "yaml syntax error: %s %s (line %u, column %u)", problem,
			  p->yp.context, ctx.line, ctx.col);
	} else {
		diags_add(p->d, &pos, "yaml syntax error: %s", problem);
	}
	p->failed = true;
}

static bool next_event(struct parser *p, yaml_event_t *ev)
{
	if (!yaml_parser_parse(&p->yp, ev)) {
		syntax_error(p);
		return false;
	}
	return true;
}

static void anchor_add(struct parser *p, const yaml_char_t *name, struct node *n)
{
	if (!name)
		return;
	/* a later anchor of the same name shadows the earlier one */
	GROW(p->anchors, p->anchors_alloc, p->nanchors + 1);
	p->anchors[p->nanchors].name = xstrdup((const char *)name);
	p->anchors[p->nanchors].node = n;
	p->nanchors++;
	n->anchor = p->nanchors;
}

/* The newest anchor called `name`, or NULL; its node is NULL when that node was discarded. */
static const struct anchor *anchor_find(const struct parser *p, const char *name)
{
	for (size_t i = p->nanchors; i-- > 0;)
		if (streq(p->anchors[i].name, name))
			return &p->anchors[i];
	return NULL;
}

static void anchors_forget(struct parser *p, const struct node *n)
{
	if (n->anchor)
		p->anchors[n->anchor - 1].node = NULL;
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			anchors_forget(p, n->keys[i]);
		anchors_forget(p, n->items[i]);
	}
}

/*
 * Free a node the parser drops (after an error, or a half-built one): every
 * node the parser frees goes through here, so no alias reads freed memory.
 */
static void discard(struct parser *p, struct node *n)
{
	if (!n)
		return;
	anchors_forget(p, n);
	node_free(n);
}

/* Take a node out of the tree that aliases may still copy: freed with the parser. */
static void keep(struct parser *p, struct node *n)
{
	node_seq_append(p->kept, n);
}

static struct node *parse_node(struct parser *p, yaml_event_t *ev, unsigned depth);

static bool spend(struct parser *p, const struct pos *pos)
{
	if (!p->budget) {
		if (!p->failed)
			diags_add(p->d, pos, "document too large (more than %d nodes after alias expansion)",
				  NODE_BUDGET);
		p->failed = true;
		return false;
	}
	p->budget--;
	return true;
}

/* Apply a "<<" merge: copy keys of src (a map) not already in dst. */
static void merge_into(struct parser *p, struct node *dst, const struct node *src,
		       const struct pos *pos)
{
	if (src->kind != NODE_MAP) {
		diags_add(p->d, pos, "'<<' merges a mapping or a list of mappings, not %s",
			  node_kind_name(src->kind));
		p->failed = true;
		return;
	}
	for (size_t i = 0; i < src->n; i++) {
		struct node *k, *v;

		if (node_map_index(dst, src->keys[i]->scalar) >= 0)
			continue;
		k = copy_counted(src->keys[i], &p->budget);
		v = k ? copy_counted(src->items[i], &p->budget) : NULL;
		if (!v) {
			discard(p, k);
			spend(p, pos);
			return;
		}
		node_map_append(dst, k, v);
	}
}

static struct node *parse_mapping(struct parser *p, yaml_event_t *start, unsigned depth)
{
	struct pos pos = mark_pos(p, &start->start_mark);
	struct node *map = node_new(NODE_MAP, &pos);
	struct node **merges = NULL; /* borrowed: kept by the parser */
	size_t nmerges = 0, merges_alloc = 0;

	anchor_add(p, start->data.mapping_start.anchor, map);
	for (;;) {
		yaml_event_t ev;
		struct node *key, *value;

		if (!next_event(p, &ev))
			goto fail;
		if (ev.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&ev);
			break;
		}
		key = parse_node(p, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!key)
			goto fail;
		if (!next_event(p, &ev)) {
			discard(p, key);
			goto fail;
		}
		value = parse_node(p, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!value) {
			discard(p, key);
			goto fail;
		}
		if (key->kind != NODE_SCALAR) {
			diags_add(p->d, &key->pos, "mapping keys must be scalars, not %s",
				  node_kind_name(key->kind));
			p->failed = true;
			discard(p, key);
			discard(p, value);
			continue;
		}
		if (key->plain && streq(key->scalar, "<<")) {
			GROW(merges, merges_alloc, nmerges + 1);
			merges[nmerges++] = value;
			keep(p, key);
			keep(p, value);
			continue;
		}
		if (node_map_index(map, key->scalar) >= 0) {
			const struct node *first = map->keys[node_map_index(map, key->scalar)];

			diags_add(p->d, &key->pos, "duplicate key '%s' (first at line %u, column %u)",
				  key->scalar, first->pos.line, first->pos.col);
			p->failed = true;
			discard(p, key);
			discard(p, value);
			continue;
		}
		node_map_append(map, key, value);
	}
	/* explicit keys win over merged ones, whatever their order */
	for (size_t i = 0; i < nmerges; i++) {
		if (merges[i]->kind == NODE_SEQ) {
			for (size_t j = 0; j < merges[i]->n; j++)
				merge_into(p, map, merges[i]->items[j], &merges[i]->pos);
		} else {
			merge_into(p, map, merges[i], &merges[i]->pos);
		}
	}
	free(merges);
	return map;
fail:
	free(merges);
	discard(p, map);
	return NULL;
}

static struct node *parse_sequence(struct parser *p, yaml_event_t *start, unsigned depth)
{
	struct pos pos = mark_pos(p, &start->start_mark);
	struct node *seq = node_new(NODE_SEQ, &pos);

	anchor_add(p, start->data.sequence_start.anchor, seq);
	for (;;) {
		yaml_event_t ev;
		struct node *item;

		if (!next_event(p, &ev)) {
			discard(p, seq);
			return NULL;
		}
		if (ev.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&ev);
			return seq;
		}
		item = parse_node(p, &ev, depth + 1);
		yaml_event_delete(&ev);
		if (!item) {
			discard(p, seq);
			return NULL;
		}
		node_seq_append(seq, item);
	}
}

static struct node *parse_node(struct parser *p, yaml_event_t *ev, unsigned depth)
{
	struct pos pos = mark_pos(p, &ev->start_mark);
	const struct anchor *anchor;
	const char *name;
	struct node *n;

	if (depth > MAX_DEPTH) {
		diags_add(p->d, &pos, "nesting deeper than %d levels", MAX_DEPTH);
		p->failed = true;
		return NULL;
	}
	if (!spend(p, &pos))
		return NULL;
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n = node_new(NODE_SCALAR, &pos);
		n->scalar = xstrndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		if (strlen(n->scalar) != ev->data.scalar.length) {
			diags_add(p->d, &pos, "scalar contains a NUL character");
			p->failed = true;
		}
		n->plain = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag;
		anchor_add(p, ev->data.scalar.anchor, n);
		return n;
	case YAML_MAPPING_START_EVENT:
		return parse_mapping(p, ev, depth);
	case YAML_SEQUENCE_START_EVENT:
		return parse_sequence(p, ev, depth);
	case YAML_ALIAS_EVENT:
		name = (const char *)ev->data.alias.anchor;
		anchor = anchor_find(p, name);
		if (!anchor)
			diags_add(p->d, &pos, "unknown alias '*%s'", name);
		else if (!anchor->node)
			diags_add(p->d, &pos, "alias '*%s' refers to a node dropped because of an error above", name);
		if (!anchor || !anchor->node) {
			p->failed = true;
			return NULL;
		}
		n = copy_counted(anchor->node, &p->budget);
		if (!n)
			spend(p, &pos);
		return n;
	default:
		diags_add(p->d, &pos, "unexpected yaml event");
		p->failed = true;
		return NULL;
	}
}

struct node *node_parse(struct node_files *files, const char *file, const char *data,
			size_t len, struct diags *d)
{
	struct parser p = { .file = node_files_intern(files, file), .data = data, .len = len, .d = d,
			    .budget = NODE_BUDGET, .kept = node_new(NODE_SEQ, NULL) };
	struct node *root = NULL;
	yaml_event_t ev;
	bool done = false;

	if (!yaml_parser_initialize(&p.yp))
		abort();
	yaml_parser_set_input_string(&p.yp, (const unsigned char *)data, len);
	while (!done && next_event(&p, &ev)) {
		switch (ev.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (root) {
				struct pos pos = mark_pos(&p, &ev.start_mark);

				diags_add(d, &pos, "more than one yaml document in the file");
				p.failed = true;
				done = true;
			}
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			root = parse_node(&p, &ev, 0);
			if (!root)
				done = true;
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p.yp);
	for (size_t i = 0; i < p.nanchors; i++)
		free(p.anchors[i].name);
	free(p.anchors);
	node_free(p.kept);
	if (p.failed) {
		node_free(root);
		return NULL;
	}
	if (!root || node_is_null(root)) {
		struct pos pos = { .file = p.file, .line = 1, .col = 1 };

		node_free(root);
		root = node_new(NODE_MAP, &pos);
	}
	return root;
}

struct node *node_parse_file(struct node_files *files, const char *path, struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	int r = strbuf_read_file(&sb, path, 16 << 20);

	if (r < 0) {
		struct pos pos = { .file = node_files_intern(files, path) };

		diags_add(d, &pos, "cannot read: %s", strerror(-r));
		return NULL;
	}
	return node_parse(files, path, sb.buf, sb.len, d);
}
