/* SPDX-License-Identifier: MIT */
/*
 * Shard planning: groups into comparison blocks, blocks onto nodes.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "../util/alloc.h"
#include "../util/json.h"
#include "../util/json-read.h"
#include "../util/strv.h"
#include "shard.h"
#include "../util/banned.h"

void shard_blocks(const struct run_group *groups, size_t ngroups, const char *const *hosts, struct shard_block **ret,
		  size_t *ret_n)
{
	struct shard_block *b = xcalloc(ngroups + 1, sizeof(*b));
	size_t *host_of = xcalloc(ngroups + 1, sizeof(*host_of)); /* per block: a group of it, for its host */
	size_t n = 0;

	for (size_t g = 0; g < ngroups; g++) {
		const char *h = hosts && hosts[g] ? hosts[g] : "";
		struct shard_block *k = NULL;

		for (size_t i = 0; groups[g].boot && i < n && !k; i++) {
			const char *bh = hosts && hosts[host_of[i]] ? hosts[host_of[i]] : "";

			if (b[i].boot == groups[g].boot && streq(bh, h))
				k = &b[i];
		}
		if (!k) {
			host_of[n] = g;
			k = &b[n++];
			k->boot = groups[g].boot;
		}
		GROW(k->groups, k->alloc, k->n + 1);
		k->groups[k->n++] = g;
		k->runs += groups[g].n;
	}
	free(host_of);
	*ret = b;
	*ret_n = n;
}

void shard_plan(const struct shard_block *blocks, size_t nblocks, size_t ntasks, struct shard **ret, size_t *ret_n)
{
	size_t n = ntasks < nblocks ? ntasks : nblocks, used = 0;
	struct shard *s;

	if (!n)
		n = nblocks ? 1 : 0;
	s = xcalloc(n + 1, sizeof(*s));
	for (size_t i = 0; i < nblocks; i++) {
		size_t best = 0;

		for (size_t k = 1; k < n; k++)
			if (s[k].runs < s[best].runs)
				best = k;
		GROW(s[best].blocks, s[best].alloc, s[best].n + 1);
		s[best].blocks[s[best].n++] = i;
		s[best].runs += blocks[i].runs;
	}
	for (size_t k = 0; k < n; k++)
		used += s[k].n > 0;
	*ret = s;
	*ret_n = used; /* with n <= nblocks every shard got a block */
}

void shard_blocks_free(struct shard_block *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(b[i].groups);
	free(b);
}

void shards_free(struct shard *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].blocks);
	free(s);
}

/* ---- shard.json ---- */

static bool is_hex(const char *s, size_t min, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

void shard_spec_format(const struct shard_spec *s, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_kv_string(&j, "lab", s->lab);
	json_kv_string(&j, "run", s->run);
	json_kv_string(&j, "experiment", s->experiment);
	json_kv_uint(&j, "shard", s->index);
	json_key(&j, "kernels");
	json_array_begin(&j);
	for (size_t i = 0; i < s->nkernels; i++) {
		json_object_begin(&j);
		json_kv_string(&j, "variant", s->kernels[i].variant);
		json_kv_string(&j, "key", s->kernels[i].key);
		json_kv_string(&j, "digest", s->kernels[i].digest);
		json_object_end(&j);
	}
	json_array_end(&j);
	json_key(&j, "image");
	json_object_begin(&j);
	json_kv_string(&j, "id", s->image_id);
	json_kv_string(&j, "digest", s->image_digest);
	json_object_end(&j);
	json_object_end(&j);
	json_finish(&j);
}

static int known_keys(struct json_reader *r, const struct json_doc *o, const char *const *known, const char *what)
{
	const char *k;

	if (json_doc_type(o) != JSON_DOC_OBJECT)
		return json_reader_bad(r, "is not an object", what);
	if ((k = json_doc_unknown_key(o, known)))
		return json_reader_bad(r, "is not a member lab knows", k);
	return 0;
}

/* A lab version: 1 to 64 of [A-Za-z0-9.+~_-] (a git describe, a Debian version), nothing a terminal acts on. */
static bool is_version(const char *v)
{
	size_t n = strlen(v);

	if (!n || n > 64)
		return false;
	for (const char *p = v; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(".+~_-", *p))
			return false;
	return true;
}

int shard_spec_parse(const char *path, const char *text, size_t len, struct shard_spec *ret, char **ret_err)
{
	static const char *const top[] = { "lab", "run", "experiment", "shard", "kernels", "image", NULL };
	static const char *const kk[] = { "variant", "key", "digest", NULL };
	static const char *const ik[] = { "id", "digest", NULL };
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	struct json_reader r = { .path = path };
	struct shard_spec s = { 0 };
	const struct json_doc *ks, *im;
	size_t idx = 0;

	if (json_doc_parse_file(path, text, len, &doc, ret_err) < 0)
		return -EINVAL;
	if (known_keys(&r, doc, top, "the file") < 0 || json_reader_string(&r, doc, "lab", &s.lab) < 0 ||
	    json_reader_string(&r, doc, "run", &s.run) < 0 ||
	    json_reader_string(&r, doc, "experiment", &s.experiment) < 0 ||
	    json_reader_uint(&r, doc, "shard", 1000000, &idx) < 0)
		goto bad;
	s.index = (unsigned)idx;
	if (!str_is_name(s.run) || !str_is_name(s.experiment) || !is_version(s.lab)) {
		json_reader_bad(&r, "is not a name", !str_is_name(s.run) ? "run" : !str_is_name(s.experiment) ? "experiment" : "lab");
		goto bad;
	}
	ks = json_doc_get(doc, "kernels");
	if (json_doc_type(ks) != JSON_DOC_ARRAY || json_doc_array_size(ks) > 1000) {
		json_reader_bad(&r, "is not an array of at most 1000 kernels", "kernels");
		goto bad;
	}
	s.nkernels = json_doc_array_size(ks);
	s.kernels = xcalloc(s.nkernels + 1, sizeof(*s.kernels));
	for (size_t i = 0; i < s.nkernels; i++) {
		const struct json_doc *k = json_doc_array_get(ks, i);
		struct shard_kernel *sk = &s.kernels[i];

		if (known_keys(&r, k, kk, "kernels[]") < 0 || json_reader_string(&r, k, "variant", &sk->variant) < 0 ||
		    json_reader_string(&r, k, "key", &sk->key) < 0 || json_reader_string(&r, k, "digest", &sk->digest) < 0)
			goto bad;
		if (!str_is_variant_name(sk->variant) || !is_hex(sk->key, 16, 64) || !is_hex(sk->digest, 64, 64)) {
			json_reader_bad(&r, "has a variant that is not a name, or a key or digest that is not hex", "kernels");
			goto bad;
		}
	}
	im = json_doc_get(doc, "image");
	if (known_keys(&r, im, ik, "image") < 0 || json_reader_string(&r, im, "id", &s.image_id) < 0 ||
	    json_reader_string(&r, im, "digest", &s.image_digest) < 0)
		goto bad;
	if (!is_hex(s.image_id, 16, 64) || !is_hex(s.image_digest, 64, 64)) {
		json_reader_bad(&r, "has an id or digest that is not hex", "image");
		goto bad;
	}
	*ret = s;
	return 0;
bad:
	*ret_err = r.err ? r.err : xasprintf("%s: not a shard file", path);
	shard_spec_release(&s);
	return -EINVAL;
}

void shard_spec_release(struct shard_spec *s)
{
	free(s->lab);
	free(s->run);
	free(s->experiment);
	for (size_t i = 0; i < s->nkernels; i++) {
		free(s->kernels[i].variant);
		free(s->kernels[i].key);
		free(s->kernels[i].digest);
	}
	free(s->kernels);
	free(s->image_id);
	free(s->image_digest);
	memset(s, 0, sizeof(*s));
}

/* ---- slurm.json ---- */

static const char *const state_names[] = {
	[SHARD_NEW] = "new", [SHARD_QUEUED] = "queued", [SHARD_DONE] = "done", [SHARD_FAILED] = "failed",
};

const char *shard_state_name(enum shard_state s)
{
	return s < SHARD_STATE_COUNT ? state_names[s] : "?";
}

static void strv_json(struct json *j, const char *key, const struct strv *v)
{
	json_key(j, key);
	json_array_begin(j);
	for (size_t i = 0; i < v->n; i++)
		json_string(j, v->v[i]);
	json_array_end(j);
}

void shard_journal_format(const struct shard_journal *jl, struct strbuf *out)
{
	struct json j;

	json_init(&j, out, true);
	json_object_begin(&j);
	json_key(&j, "shards");
	json_array_begin(&j);
	for (size_t i = 0; i < jl->n; i++) {
		const struct shard_entry *e = &jl->v[i];

		json_object_begin(&j);
		json_kv_uint(&j, "shard", e->index);
		json_kv_string(&j, "state", shard_state_name(e->state));
		json_kv_uint(&j, "job", e->job);
		json_kv_uint(&j, "task", e->task);
		json_kv_uint(&j, "attempts", e->attempts);
		strv_json(&j, "runs", &e->runs);
		json_object_end(&j);
	}
	json_array_end(&j);
	strv_json(&j, "exclude", &jl->exclude);
	strv_json(&j, "retries", &jl->retries);
	json_object_end(&j);
	json_finish(&j);
}

/* An array of strings each passing ok() (NULL: any line of text), at most max. */
static int read_strv(struct json_reader *r, const struct json_doc *o, const char *key, bool (*ok)(const char *),
		     size_t max, struct strv *ret)
{
	const struct json_doc *a = json_doc_get(o, key);

	if (json_doc_type(a) != JSON_DOC_ARRAY || json_doc_array_size(a) > max)
		return json_reader_bad(r, "is missing or not an array of strings", key);
	for (size_t i = 0; i < json_doc_array_size(a); i++) {
		const char *s = json_doc_string_value(json_doc_array_get(a, i));

		if (!s || (ok && !ok(s)) || strlen(s) > 4096 || strchr(s, '\n'))
			return json_reader_bad(r, "has an element that is not a valid name or line", key);
		strv_push(ret, s);
	}
	return 0;
}

int shard_journal_parse(const char *path, const char *text, size_t len, struct shard_journal *ret, char **ret_err)
{
	static const char *const top[] = { "shards", "exclude", "retries", NULL };
	static const char *const sk[] = { "shard", "state", "job", "task", "attempts", "runs", NULL };
	_cleanup_json_doc_ struct json_doc *doc = NULL;
	struct json_reader r = { .path = path };
	struct shard_journal jl = { 0 };
	const struct json_doc *a;

	if (json_doc_parse_file(path, text, len, &doc, ret_err) < 0)
		return -EINVAL;
	if (known_keys(&r, doc, top, "the file") < 0)
		goto bad;
	a = json_doc_get(doc, "shards");
	if (json_doc_type(a) != JSON_DOC_ARRAY || json_doc_array_size(a) > 1000000) {
		json_reader_bad(&r, "is missing or not an array", "shards");
		goto bad;
	}
	for (size_t i = 0; i < json_doc_array_size(a); i++) {
		const struct json_doc *o = json_doc_array_get(a, i);
		size_t idx = 0, job = 0, task = 0, att = 0;
		const char *st;
		struct shard_entry *e;
		int k = -1;

		if (known_keys(&r, o, sk, "shards[]") < 0 || json_reader_uint(&r, o, "shard", 1000000, &idx) < 0 ||
		    json_reader_uint(&r, o, "job", (1LL << 53), &job) < 0 ||
		    json_reader_uint(&r, o, "task", 1000000, &task) < 0 ||
		    json_reader_uint(&r, o, "attempts", 1000, &att) < 0)
			goto bad;
		st = json_doc_string_value(json_doc_get(o, "state"));
		for (int q = 0; st && q < SHARD_STATE_COUNT; q++)
			if (streq(st, state_names[q]))
				k = q;
		if (k < 0) {
			json_reader_bad(&r, "is not new, queued, done or failed", "state");
			goto bad;
		}
		for (size_t q = 0; q < jl.n; q++)
			if (jl.v[q].index == idx) {
				json_reader_bad(&r, "names a shard twice", "shard");
				goto bad;
			}
		GROW(jl.v, jl.alloc, jl.n + 1);
		e = &jl.v[jl.n++];
		*e = (struct shard_entry){ .index = (unsigned)idx, .state = (enum shard_state)k, .job = job,
					   .task = (unsigned)task, .attempts = (unsigned)att, .runs = STRV_INIT };
		if (read_strv(&r, o, "runs", str_is_name, 1000000, &e->runs) < 0)
			goto bad;
	}
	if (read_strv(&r, doc, "exclude", str_is_name, 100000, &jl.exclude) < 0 ||
	    read_strv(&r, doc, "retries", NULL, 100000, &jl.retries) < 0)
		goto bad;
	*ret = jl;
	return 0;
bad:
	*ret_err = r.err ? r.err : xasprintf("%s: not lab's journal of cluster jobs", path);
	shard_journal_release(&jl);
	return -EINVAL;
}

void shard_journal_release(struct shard_journal *j)
{
	for (size_t i = 0; i < j->n; i++)
		strv_release(&j->v[i].runs);
	free(j->v);
	strv_release(&j->exclude);
	strv_release(&j->retries);
	memset(j, 0, sizeof(*j));
}
