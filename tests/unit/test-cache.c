/* SPDX-License-Identifier: MIT */
/* lab gc's pruning of the build cache: the plan (age, then least recently
 * used under a size), busy entries kept, the listing of a real folder and
 * the words lab gc prints (golden). */
#include "unit.h"
#include "cache/cache.h"
#include "util/alloc.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define DAY 86400
#define NOW ((time_t)1800000000)

static void entry(struct cache_list *l, enum cache_kind k, const char *name, uint64_t bytes, time_t used,
		  const char *busy)
{
	struct cache_entry *e;

	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	e = &l->v[l->n++];
	*e = (struct cache_entry){ .kind = k, .name = xstrdup(name), .path = xasprintf("/c/%s", name),
				   .bytes = bytes, .used = used, .busy = busy ? xstrdup(busy) : NULL };
	l->bytes += bytes;
}

/* oldest first, as cache_list gives them */
static void sample(struct cache_list *l)
{
	*l = (struct cache_list){ 0 };
	entry(l, CACHE_SOURCE, "sources/aa", 500, NOW - 40 * DAY, NULL);
	entry(l, CACHE_KERNEL, "kernels/k1", 10, NOW - 20 * DAY, NULL);
	entry(l, CACHE_IMAGE, "images/minimal-i1", 150, NOW - 9 * DAY, "a process has /c/images/minimal-i1/image.qcow2 open");
	entry(l, CACHE_KERNEL, "kernels/k2", 10, NOW - 5 * DAY, NULL);
	entry(l, CACHE_WORK, "work/aa", 900, NOW - 2 * DAY, NULL);
	entry(l, CACHE_CCACHE, "ccache", 180, NOW - 3600, NULL);
}

static bool removed(const struct cache_list *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].name, name))
			return l->v[i].remove;
	fail_msg("no entry %s", name);
	return false;
}

static void test_plan_age(void **state)
{
	struct cache_list l;

	(void)state;
	sample(&l);
	/* not used in 7 days: the source, k1; the image is 9 days old but busy */
	assert_int_equal(cache_prune_plan(&l, NOW, 7 * DAY, UINT64_MAX), 510);
	assert_true(removed(&l, "sources/aa") && removed(&l, "kernels/k1"));
	assert_false(removed(&l, "images/minimal-i1") || removed(&l, "kernels/k2") || removed(&l, "work/aa") ||
		     removed(&l, "ccache"));
	assert_string_equal(l.v[0].why, "not used in 40 days");
	/* exactly the limit stays: 5 days old against --keep-days 5 */
	assert_int_equal(cache_prune_plan(&l, NOW, 5 * DAY, UINT64_MAX), 510);
	assert_false(removed(&l, "kernels/k2"));
	/* neither rule: nothing, and a second plan forgets the first */
	assert_int_equal(cache_prune_plan(&l, NOW, 0, UINT64_MAX), 0);
	for (size_t i = 0; i < l.n; i++)
		assert_false(l.v[i].remove);
	cache_list_release(&l);
}

static void test_plan_size(void **state)
{
	struct cache_list l;

	(void)state;
	sample(&l);
	/* 1,750 bytes in all; to 1,100: least recently used first, the busy
	 * image skipped: the source (500) and k1 (10), then k2 (10) is not
	 * enough (1,230), the work tree (900) goes: 330 left */
	assert_int_equal(cache_prune_plan(&l, NOW, 0, 1100), 1420);
	assert_true(removed(&l, "sources/aa") && removed(&l, "kernels/k1") && removed(&l, "kernels/k2") &&
		    removed(&l, "work/aa"));
	assert_false(removed(&l, "images/minimal-i1") || removed(&l, "ccache"));
	/* a limit the cache meets: nothing goes */
	assert_int_equal(cache_prune_plan(&l, NOW, 0, 1750), 0);
	/* 0: everything that is not busy */
	assert_int_equal(cache_prune_plan(&l, NOW, 0, 0), 1600);
	assert_false(removed(&l, "images/minimal-i1"));
	/* both rules: age first, then size over what is left */
	assert_int_equal(cache_prune_plan(&l, NOW, 7 * DAY, 1200), 510 + 10 + 900);
	assert_string_equal(l.v[3].why, "least recently used, over the size limit");
	cache_list_release(&l);
}

/* the order is the use, not the list's: a list out of order prunes the same */
static void test_plan_order(void **state)
{
	struct cache_list l = { 0 };

	(void)state;
	entry(&l, CACHE_KERNEL, "kernels/new", 100, NOW - DAY, NULL);
	entry(&l, CACHE_KERNEL, "kernels/old", 100, NOW - 3 * DAY, NULL);
	assert_int_equal(cache_prune_plan(&l, NOW, 0, 150), 100);
	assert_true(removed(&l, "kernels/old"));
	assert_false(removed(&l, "kernels/new"));
	cache_list_release(&l);
}

static void test_format(void **state)
{
	struct cache_list l;
	struct strbuf out = STRBUF_INIT;
	struct strv failed = STRV_INIT;
	uint64_t freed;

	(void)state;
	sample(&l);
	l.v[4].bytes = 900000000;
	l.bytes += 900000000 - 900;
	freed = cache_prune_plan(&l, NOW, 7 * DAY, 1000000);
	assert_int_equal(freed, 900000520);
	cache_format_plan(&l, freed, true, &failed, &out);
	strv_push(&failed, "/c/work/aa: Permission denied");
	cache_format_plan(&l, freed, false, &failed, &out);
	assert_golden("tests/data/cache/plan.txt", out.buf);
	strbuf_release(&out);
	strv_release(&failed);
	cache_list_release(&l);
}

static void write_file(const char *path, size_t n)
{
	_cleanup_free_ char *buf = xcalloc(1, n + 1);

	memset(buf, 'x', n);
	assert_int_equal(fs_write_atomic(path, buf, n, 0644), 0);
}

/* a real folder: what is an entry and what is the cache's own (locks,
 * stamps, indexes, unfinished builds), the stamp's time as the last use,
 * a work tree whose lock a build holds is busy, removal takes the stamp */
static void test_list_folder(void **state)
{
	char tmpl[] = "/tmp/lab-cache-XXXXXX";
	char *c = mkdtemp(tmpl);
	struct cache_list l = { 0 };
	static const char *const dirs[] = { "kernels/k1", "kernels/k2.tmp.99", "images/minimal-i1", "images/recipes",
					    "images/tmp-minimal-99", "sources/s1", "work/s1", "work/s1-check",
					    "git/abc.git", "git/notamirror", "ccache" };
	_cleanup_free_ char *stamp = NULL, *lockp = NULL, *k1 = NULL, *src = NULL;
	time_t then = time(NULL) - 10 * DAY;
	struct timespec old[2] = { { .tv_sec = then }, { .tv_sec = then } };
	int lockfd;

	(void)state;
	assert_non_null(c);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		_cleanup_free_ char *p = path_join(c, dirs[i]);

		assert_int_equal(path_mkdir_p(p, 0755), 0);
	}
	k1 = path_join(c, "kernels/k1/bzImage");
	write_file(k1, 100000);
	/* no entry, no stamp */
	src = path_join(c, "kernels/nosuch");
	cache_touch(src);
	free(src);
	src = path_join(c, "kernels/nosuch.used");
	assert_int_equal(access(src, F_OK), -1);
	/* k1's stamp says 10 days ago, whatever its folder's mtime */
	free(k1);
	k1 = path_join(c, "kernels/k1");
	cache_touch(k1);
	stamp = path_join(c, "kernels/k1.used");
	assert_int_equal(utimensat(AT_FDCWD, stamp, old, 0), 0);
	lockp = path_join(c, "work/s1/lock");
	lockfd = open(lockp, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	assert_true(lockfd >= 0);
	assert_int_equal(flock(lockfd, LOCK_EX), 0);
	assert_int_equal(cache_list(c, &l), 0);
	/* k1 ccache images/minimal-i1 sources/s1 work/s1 work/s1-check git/abc.git */
	assert_int_equal(l.n, 7);
	assert_string_equal(l.v[0].name, "kernels/k1");
	assert_int_equal(l.v[0].used, then);
	assert_true(l.v[0].bytes >= 100000);
	for (size_t i = 0; i < l.n; i++) {
		assert_null(strstr(l.v[i].name, "tmp"));
		assert_null(strstr(l.v[i].name, "recipes"));
		assert_null(strstr(l.v[i].name, "notamirror"));
		if (!strcmp(l.v[i].name, "work/s1"))
			assert_non_null(l.v[i].busy);
		else if (!strcmp(l.v[i].name, "work/s1-check"))
			assert_null(l.v[i].busy);
	}
	assert_int_equal(cache_remove(&l.v[0]), 0);
	assert_false(path_is_dir(k1));
	assert_int_equal(access(stamp, F_OK), -1);
	close(lockfd);
	cache_list_release(&l);
	assert_int_equal(cache_list(c, &l), 0);
	assert_int_equal(l.n, 6);
	for (size_t i = 0; i < l.n; i++)
		assert_null(l.v[i].busy);
	cache_list_release(&l);
	assert_int_equal(fs_remove_tree(c), 0);
	/* no cache at all: an empty list */
	assert_int_equal(cache_list("/nonexistent/lab-cache", &l), 0);
	assert_int_equal(l.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plan_age),
		cmocka_unit_test(test_plan_size),
		cmocka_unit_test(test_plan_order),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_list_folder),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
