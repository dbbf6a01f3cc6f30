/* SPDX-License-Identifier: MIT */
/*
 * lab's build cache as entries to keep or prune: built kernels, images,
 * unpacked sources, kernel work trees, git mirrors and ccache. Every key is
 * content-based, so an entry removed is built again from its inputs the
 * next time it is wanted, never found wrong. Each entry's last use is the
 * mtime of its stamp, <entry>.used beside it, which lab touches when it
 * uses the entry (cache_touch); an entry without a stamp was last used when
 * it was written. This layer never prints.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

enum cache_kind {
	CACHE_KERNEL, /* kernels/<key>: a built kernel (bzImage, config, System.map) */
	CACHE_IMAGE,  /* images/<name>-<key>: a guest image */
	CACHE_SOURCE, /* sources/<key>: an unpacked source tree */
	CACHE_WORK,   /* work/<source>[-check]: a work tree with its objects */
	CACHE_GIT,    /* git/<url-hash>.git: a git source's mirror */
	CACHE_CCACHE, /* ccache: the compiler cache, as one entry */
};

struct cache_entry {
	enum cache_kind kind;
	char *path;      /* absolute */
	char *name;      /* below the cache: kernels/0123..., ccache */
	uint64_t bytes;  /* on disk; a file with n hard links counts 1/n here */
	time_t used;     /* last use */
	char *busy;      /* why it cannot go now (a process has it open, its lock is held), or NULL */
	bool remove;     /* set by cache_prune_plan */
	char *why;       /* why it goes: "not used in 12 days", "least recently used" */
};

struct cache_list {
	struct cache_entry *v;
	size_t n;
	uint64_t bytes; /* the sum of every entry's */
};

/* Every entry of the cache at `cache`, oldest use first. A missing cache is
 * an empty list. */
int cache_list(const char *cache, struct cache_list *ret);
void cache_list_release(struct cache_list *l);

/*
 * Mark what goes, a pure function of the list: with keep_seconds, every
 * entry not used within keep_seconds before now; then with max_bytes, the
 * least recently used of the rest until the total is max_bytes or less.
 * A busy entry never goes (and counts toward the total). keep_seconds 0
 * and max_bytes UINT64_MAX turn the rules off. Returns the bytes the
 * marked entries hold.
 */
uint64_t cache_prune_plan(struct cache_list *l, time_t now, uint64_t keep_seconds, uint64_t max_bytes);

/* Remove one entry (and its stamp): 0 or -errno. */
int cache_remove(const struct cache_entry *e);

/* Record a use of the entry at `path` (its stamp's mtime is now); nothing
 * when there is no entry. Best effort: a cache lab cannot stamp is still
 * used. */
void cache_touch(const char *path);

const char *cache_kind_name(enum cache_kind k);

struct strbuf;
struct strv;
/* lab gc's words for a plan: each entry that goes (and why), each kept
 * because it is busy, what could not be removed, the totals. Pure. */
void cache_format_plan(const struct cache_list *l, uint64_t freed, bool dry, const struct strv *failed,
		       struct strbuf *out);
