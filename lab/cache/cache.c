/* SPDX-License-Identifier: MIT */
/* lab's build cache as entries to keep or prune (cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cache.h"
#include "../util/alloc.h"
#include "../util/fs.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../util/strv.h"
#include "../util/units.h"
#include "../util/banned.h"

const char *cache_kind_name(enum cache_kind k)
{
	static const char *const names[] = { "kernel", "image", "source", "work tree", "git mirror", "ccache" };

	return k < ELEMENTSOF(names) ? names[k] : "?";
}

/* Bytes on disk below the folder open at fd (closed here), not crossing
 * into other file systems nor following links; a file with n links counts
 * 1/n, so that a source and its hard-link work trees add up to what they
 * take together. */
static uint64_t tree_bytes(int fd, dev_t dev, unsigned depth)
{
	DIR *dir = fdopendir(fd);
	struct dirent *e;
	uint64_t sum = 0;

	if (!dir) {
		close(fd);
		return 0;
	}
	while ((e = readdir(dir))) {
		struct stat st;

		if (streq(e->d_name, ".") || streq(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(dir), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		sum += (uint64_t)st.st_blocks * 512 / (st.st_nlink > 1 && !S_ISDIR(st.st_mode) ? st.st_nlink : 1);
		if (S_ISDIR(st.st_mode) && st.st_dev == dev && depth < 64) {
			int sub = openat(dirfd(dir), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				sum += tree_bytes(sub, dev, depth + 1);
		}
	}
	closedir(dir);
	return sum;
}

static uint64_t path_bytes(const char *path)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return (uint64_t)st.st_blocks * 512 / (st.st_nlink > 1 ? st.st_nlink : 1);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return (uint64_t)st.st_blocks * 512 + (fd >= 0 ? tree_bytes(fd, st.st_dev, 0) : 0);
}

/* What every process has open or works in: readlinks of /proc/PID/fd/N and
 * /proc/PID/cwd (other users' are not readable unless root: then an entry
 * may look free that is not, as with any cache two users share) */
static void open_paths(struct strv *ret)
{
	DIR *proc = opendir("/proc");
	struct dirent *p;

	if (!proc)
		return;
	while ((p = readdir(proc))) {
		_cleanup_free_ char *fds = NULL, *cwd = NULL;
		char buf[4096];
		ssize_t n;
		DIR *dir;
		struct dirent *f;

		if (p->d_name[0] < '0' || p->d_name[0] > '9')
			continue;
		cwd = xasprintf("/proc/%s/cwd", p->d_name);
		if ((n = readlink(cwd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = 0;
			strv_push(ret, buf);
		}
		fds = xasprintf("/proc/%s/fd", p->d_name);
		if (!(dir = opendir(fds)))
			continue;
		while ((f = readdir(dir))) {
			if (f->d_name[0] == '.')
				continue;
			if ((n = readlinkat(dirfd(dir), f->d_name, buf, sizeof(buf) - 1)) > 0 && buf[0] == '/') {
				buf[n] = 0;
				strv_push(ret, buf);
			}
		}
		closedir(dir);
	}
	closedir(proc);
}

static bool under(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(p, dir, n) == 0 && (p[n] == 0 || p[n] == '/');
}

static char *busy_why(const struct cache_entry *e, const struct strv *opened)
{
	for (size_t i = 0; i < opened->n; i++)
		if (under(opened->v[i], e->path))
			return xasprintf("a process has %s open", opened->v[i]);
	if (e->kind == CACHE_WORK) {
		_cleanup_free_ char *lock = path_join(e->path, "lock");
		int fd = open(lock, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			int r = flock(fd, LOCK_EX | LOCK_NB);

			close(fd);
			if (r < 0 && errno == EWOULDBLOCK)
				return xstrdup("a kernel build holds its lock");
		}
	}
	return NULL;
}

static time_t last_use(const char *path)
{
	_cleanup_free_ char *stamp = xasprintf("%s.used", path);
	struct stat st;

	if (stat(stamp, &st) == 0)
		return st.st_mtime;
	return lstat(path, &st) == 0 ? st.st_mtime : 0;
}

static void add(struct cache_list *l, enum cache_kind kind, const char *cache, const char *name,
		const struct strv *opened)
{
	struct cache_entry *e;

	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	e = &l->v[l->n++];
	*e = (struct cache_entry){ .kind = kind, .name = xstrdup(name), .path = path_join(cache, name) };
	e->used = last_use(e->path);
	e->bytes = path_bytes(e->path);
	e->busy = busy_why(e, opened);
	l->bytes += e->bytes;
}

/* the entries of one kind: the folders of cache/sub, but for the cache's
 * own files (stamps, locks, indexes, builds in progress) */
static void add_folder(struct cache_list *l, enum cache_kind kind, const char *cache, const char *sub,
		       const struct strv *opened)
{
	_cleanup_free_ char *dir = path_join(cache, sub);
	DIR *d = opendir(dir);
	struct dirent *e;
	_cleanup_strv_ struct strv names = STRV_INIT;

	if (!d)
		return;
	while ((e = readdir(d))) {
		_cleanup_free_ char *p = NULL;

		if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp.") || str_startswith(e->d_name, "tmp-") ||
		    (kind == CACHE_IMAGE && streq(e->d_name, "recipes")) ||
		    (kind == CACHE_GIT && !str_endswith(e->d_name, ".git")))
			continue;
		p = path_join(dir, e->d_name);
		if (path_is_dir(p))
			strv_pushf(&names, "%s/%s", sub, e->d_name);
	}
	closedir(d);
	for (size_t i = 0; i < names.n; i++)
		add(l, kind, cache, names.v[i], opened);
}

static int by_use(const void *a, const void *b)
{
	const struct cache_entry *x = a, *y = b;

	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int by_use_ptr(const void *a, const void *b)
{
	return by_use(*(const struct cache_entry *const *)a, *(const struct cache_entry *const *)b);
}

int cache_list(const char *cache, struct cache_list *ret)
{
	_cleanup_strv_ struct strv opened = STRV_INIT;
	_cleanup_free_ char *cc = path_join(cache, "ccache");

	*ret = (struct cache_list){ 0 };
	if (!path_is_dir(cache))
		return 0;
	open_paths(&opened);
	add_folder(ret, CACHE_KERNEL, cache, "kernels", &opened);
	add_folder(ret, CACHE_IMAGE, cache, "images", &opened);
	add_folder(ret, CACHE_SOURCE, cache, "sources", &opened);
	add_folder(ret, CACHE_WORK, cache, "work", &opened);
	add_folder(ret, CACHE_GIT, cache, "git", &opened);
	if (path_is_dir(cc))
		add(ret, CACHE_CCACHE, cache, "ccache", &opened);
	if (ret->n)
		qsort(ret->v, ret->n, sizeof(*ret->v), by_use);
	return 0;
}

void cache_list_release(struct cache_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].name);
		free(l->v[i].busy);
		free(l->v[i].why);
	}
	free(l->v);
	*l = (struct cache_list){ 0 };
}

uint64_t cache_prune_plan(struct cache_list *l, time_t now, uint64_t keep_seconds, uint64_t max_bytes)
{
	uint64_t total = 0, freed = 0;
	struct cache_entry **order;

	for (size_t i = 0; i < l->n; i++) {
		struct cache_entry *e = &l->v[i];

		free(e->why);
		e->why = NULL;
		e->remove = false;
		total += e->bytes;
		if (keep_seconds && !e->busy && e->used < now && (uint64_t)(now - e->used) > keep_seconds) {
			e->remove = true;
			e->why = xasprintf("not used in %llu days", (unsigned long long)((uint64_t)(now - e->used) / 86400));
			freed += e->bytes;
		}
	}
	if (max_bytes == UINT64_MAX || total - freed <= max_bytes)
		return freed;
	/* least recently used first, whatever order the list is in */
	order = xcalloc(l->n + 1, sizeof(*order));
	for (size_t i = 0; i < l->n; i++)
		order[i] = &l->v[i];
	qsort(order, l->n, sizeof(*order), by_use_ptr);
	for (size_t i = 0; i < l->n && total - freed > max_bytes; i++) {
		struct cache_entry *e = order[i];

		if (e->remove || e->busy)
			continue;
		e->remove = true;
		e->why = xstrdup("least recently used, over the size limit");
		freed += e->bytes;
	}
	free(order);
	return freed;
}

int cache_remove(const struct cache_entry *e)
{
	_cleanup_free_ char *stamp = xasprintf("%s.used", e->path);
	int r = fs_remove_tree(e->path);

	if (r < 0)
		return r;
	if (unlink(stamp) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

void cache_touch(const char *path)
{
	_cleanup_free_ char *stamp = NULL;
	int fd;

	if (access(path, F_OK) < 0)
		return;
	stamp = xasprintf("%s.used", path);
	if ((fd = open(stamp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0)
		return;
	futimens(fd, NULL);
	close(fd);
}

/* "517M", "8.27M", "0": bytes at a glance, SI (human_number) */
static char *bytes_human(uint64_t b)
{
	_cleanup_free_ char *n = human_number((double)b, 3);

	return xasprintf("%sB", n);
}

void cache_format_plan(const struct cache_list *l, uint64_t freed, bool dry, const struct strv *failed,
		     struct strbuf *out)
{
	size_t gone = 0;

	for (size_t i = 0; i < l->n; i++) {
		const struct cache_entry *e = &l->v[i];
		_cleanup_free_ char *size = bytes_human(e->bytes);

		if (e->remove) {
			gone++;
			strbuf_addf(out, "%s %s %s (%s; %s)\n", dry ? "would remove" : "removed", cache_kind_name(e->kind),
				    e->name, size, e->why);
		} else if (e->busy) {
			strbuf_addf(out, "kept %s %s (%s): in use, %s\n", cache_kind_name(e->kind), e->name, size, e->busy);
		}
	}
	for (size_t i = 0; i < failed->n; i++)
		strbuf_addf(out, "could not remove %s\n", failed->v[i]);
	{
		_cleanup_free_ char *total = bytes_human(l->bytes), *f = bytes_human(freed),
				    *left = bytes_human(l->bytes - freed);

		strbuf_addf(out, "cache: %zu entries, %s; %s %zu, %s; %s left\n", l->n, total,
			    dry ? "would remove" : "removed", gone, f, left);
	}
}
