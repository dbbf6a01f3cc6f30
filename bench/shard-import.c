/* SPDX-License-Identifier: MIT */
/*
 * The head's cost per finished shard (bench/shard-import runs it): one
 * run folder of SHARDS x RUNS pending runs (two variants, interleaved),
 * SHARDS result bundles made the way a cluster node makes them (its
 * shard's runs ok, METRICS metrics each, two boots, its node and
 * fingerprint), then each bundle imported by engine_import_shard(), the
 * executor's own code path (unpack, MANIFEST, store_load_as, per run the
 * folder moved, the metrics read back, the journal and the index rows).
 * Only the imports are timed. Afterwards every run must be ok with its
 * metrics, in the journal on disk and in the index, else exit 1.
 *
 * Usage: shard-import [SHARDS] [RUNS] [METRICS]   (default 1000 20 50)
 * The results root is made under $TMPDIR (default /tmp) and removed.
 * SHARD_IMPORT_CHECK_EACH=1: the check after every shard too (untimed).
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "store/bundle.h"
#include "engine/engine-priv.h"
#include "store/index.h"
#include "store/store.h"
#include "util/alloc.h"
#include "util/macro.h"
#include "util/fs.h"
#include "util/path.h"
#include "util/strbuf.h"
#include "util/strv.h"
#include "util/banned.h"

#define GOAL_MS 100.0

static const char *const variants[] = { "base", "patched" };

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static size_t arg(int argc, char **argv, int i, size_t def)
{
	char *end;
	unsigned long v;

	if (argc <= i)
		return def;
	errno = 0;
	v = strtoul(argv[i], &end, 10);
	if (errno || *end || !v) {
		fprintf(stderr, "shard-import: '%s' is not a positive number\n", argv[i]);
		exit(2);
	}
	return v;
}

static void say_diags(const char *what, const struct diags *d)
{
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;

	diags_format(d, &sb);
	fprintf(stderr, "shard-import: %s: %s", what, sb.len ? sb.buf : "?\n");
}

/* What the engine says: the import's warnings (a journal or index write that failed) count. */
static void on_event(void *userdata, const struct engine_event *ev)
{
	if (ev->type == ENGINE_EV_WARNING || ev->type == ENGINE_EV_ERROR) {
		fprintf(stderr, "shard-import: %s\n", ev->text);
		++*(size_t *)userdata;
	} else if (ev->type == ENGINE_EV_DIAGS) {
		say_diags("engine", ev->diags);
		++*(size_t *)userdata;
	}
}

static char *run_id(size_t shard, size_t runs, size_t j)
{
	return xasprintf("bench.%06zu", shard * runs + j + 1);
}

/* Shard k's bundle as its node leaves it: <stage>/<id>/ with only the
 * shard's runs (ok, metrics, boots bench.b1 and b2 numbered by the node),
 * packed to <bundles>/shard-<k>.tar.zst. */
static int make_bundle(const char *stage, const char *bundles, const char *id, size_t k, size_t runs,
		       size_t metrics)
{
	_cleanup_free_ char *dir = path_join(stage, id), *out = xasprintf("%s/shard-%zu.tar.zst", bundles, k);
	_cleanup_free_ char *node = xasprintf("n%zu", k);
	_cleanup_result_set_ struct result_set *rs = result_set_new(id, "bench");
	_cleanup_diags_ struct diags d = { 0 };
	struct fingerprint fp = { 0 };
	unsigned pos[2] = { 0, 0 };
	int fpi;

	fingerprint_set(&fp, FP_HOST, node);
	fingerprint_set(&fp, FP_CPU_MODEL, "Bench CPU @ 2.00GHz");
	fingerprint_set(&fp, FP_CPUS, "64");
	fingerprint_set(&fp, FP_ACCEL, "kvm");
	fingerprint_set(&fp, FP_TIMING, "host");
	fingerprint_set(&fp, FP_LAB, LAB_VERSION);
	fpi = result_add_fingerprint(rs, &fp);
	fingerprint_release(&fp);
	for (size_t v = 0; v < 2; v++)
		strv_push(&rs->variants, variants[v]);
	for (size_t j = 0; j < runs; j++) {
		_cleanup_free_ char *rid = run_id(k, runs, j), *rd = xasprintf("%s/runs/%s", dir, rid);
		_cleanup_free_ char *mp = path_join(rd, "metrics");
		_cleanup_strbuf_ struct strbuf m = STRBUF_INIT;
		size_t v = j % 2;
		struct result_run *r = result_add_run(rs, rid, variants[v], "w p=1", 0, (unsigned)((k * runs + j) / 2 + 1));

		r->status = RUN_OK;
		r->release = xasprintf("6.1.0-lab-%s", variants[v]);
		r->boot = xasprintf("bench.b%zu", v + 1);
		r->boot_pos = ++pos[v];
		r->guest = xasprintf("lab-%s-0", variants[v]);
		r->node = xstrdup(node);
		r->fp = fpi;
		for (size_t q = 0; q < metrics; q++)
			strbuf_addf(&m, "bench.m%zu %.6g\n", q, 100.0 + (double)q + (double)((k * 7 + j * 13 + q) % 97) / 50.0);
		if (path_mkdir_p(rd, 0755) < 0 || fs_write_atomic(mp, m.buf, m.len, 0644) < 0) {
			fprintf(stderr, "shard-import: cannot write %s: %s\n", mp, strerror(errno));
			return -1;
		}
	}
	if (store_save(dir, rs, &d) < 0 || bundle_write(dir, NULL, 0, out, -1, &d) < 0) {
		say_diags(out, &d);
		return -1;
	}
	fs_remove_tree(dir);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Run i as it must be after `done` runs were imported. */
static bool run_ok(const struct result_run *r, size_t i, size_t done, size_t metrics)
{
	if (i >= done)
		return r->status == RUN_PENDING && !r->nm;
	return r->status == RUN_OK && r->nm == metrics && r->boot && r->node && r->fp >= 0;
}

/* The first `done` runs ok with their metrics, the others pending: in
 * memory, in the journal on disk, in the index. */
static int check(const char *root, const char *dir, const struct result_set *rs, size_t done, size_t metrics)
{
	_cleanup_result_set_ struct result_set *back = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ char *db = path_join(root, "index.sqlite");
	struct index_entry *e = NULL;
	size_t n = 0, bad = 0;
	long long rows = -1, okrows = -1;
	sqlite3 *h = NULL;
	sqlite3_stmt *s = NULL;

	for (size_t i = 0; i < rs->n; i++)
		bad += !run_ok(&rs->runs[i], i, done, metrics);
	if (bad) {
		fprintf(stderr, "shard-import: %zu of %zu runs are not as imported\n", bad, rs->n);
		return -1;
	}
	if (store_load(dir, &back, &d) < 0) {
		say_diags("the journal", &d);
		return -1;
	}
	for (size_t i = 0; i < back->n; i++)
		bad += !run_ok(&back->runs[i], i, done, metrics) || !streq(back->runs[i].id, rs->runs[i].id) ||
		       !streq(back->runs[i].boot ? back->runs[i].boot : "", rs->runs[i].boot ? rs->runs[i].boot : "");
	if (back->n != rs->n || bad) {
		fprintf(stderr, "shard-import: the journal: %zu of %zu runs are not as imported\n", bad, back->n);
		return -1;
	}
	if (index_list(root, &e, &n, &d) < 0 || n != 1 || e[0].total != rs->n || e[0].ok != done ||
	    e[0].pending != rs->n - done || e[0].failed) {
		fprintf(stderr, "shard-import: the index lists %zu runs, the first with %zu ok of %zu (want %zu)\n", n,
			n ? e[0].ok : 0, n ? e[0].total : 0, done);
		index_entries_free(e, n);
		return -1;
	}
	index_entries_free(e, n);
	if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(h, "SELECT (SELECT count(*) FROM metrics WHERE labrun = ?1),"
				  " (SELECT count(*) FROM runs WHERE labrun = ?1 AND status = 'ok')", -1, &s, NULL) == SQLITE_OK) {
		sqlite3_bind_text(s, 1, rs->id, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW) {
			rows = sqlite3_column_int64(s, 0);
			okrows = sqlite3_column_int64(s, 1);
		}
	}
	sqlite3_finalize(s);
	sqlite3_close(h);
	if (rows != (long long)(done * metrics) || okrows != (long long)done) {
		fprintf(stderr, "shard-import: the index has %lld metric rows (want %zu) and %lld ok runs (want %zu)\n", rows,
			done * metrics, okrows, done);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	size_t shards = arg(argc, argv, 1, 1000), runs = arg(argc, argv, 2, 20), metrics = arg(argc, argv, 3, 50);
	size_t total = shards * runs, warnings = 0;
	bool each = getenv("SHARD_IMPORT_CHECK_EACH") && *getenv("SHARD_IMPORT_CHECK_EACH");
	const char *tmpdir = getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	_cleanup_free_ char *tmpl = xasprintf("%s/lab-shard-import-XXXXXX", tmpdir);
	_cleanup_free_ char *root = NULL, *stage = NULL, *bundles = NULL, *id = NULL, *dir = NULL, *sum = NULL;
	_cleanup_result_set_ struct result_set *rs = NULL;
	_cleanup_diags_ struct diags d = { 0 };
	_cleanup_free_ double *ms = NULL;
	struct engine_opts o = { .event = on_event, .userdata = &warnings };
	struct engine x = { 0 };
	struct rusage ru;
	double t0, made, sum_ms = 0, t_all, first = 0, last = 0;
	int rc = 1;

	if (argc > 4) {
		fprintf(stderr, "usage: shard-import [SHARDS] [RUNS] [METRICS]\n");
		return 2;
	}
	if (!mkdtemp(tmpl)) {
		fprintf(stderr, "shard-import: cannot make %s: %s\n", tmpl, strerror(errno));
		return 1;
	}
	root = path_join(tmpl, "results");
	stage = path_join(tmpl, "node");
	bundles = path_join(tmpl, "bundles");
	path_mkdir_p(stage, 0755);
	path_mkdir_p(bundles, 0755);

	/* the head's run folder, every run pending, saved and indexed as lab run makes it */
	if (store_create(root, &id, &d) < 0)
		goto fail_diags;
	dir = path_join(root, id);
	rs = result_set_new(id, "bench");
	for (size_t v = 0; v < 2; v++)
		strv_push(&rs->variants, variants[v]);
	for (size_t k = 0; k < shards; k++)
		for (size_t j = 0; j < runs; j++) {
			_cleanup_free_ char *rid = run_id(k, runs, j);

			result_add_run(rs, rid, variants[j % 2], "w p=1", 0, (unsigned)((k * runs + j) / 2 + 1));
		}
	sum = index_verdict_summary(rs);
	if (store_save(dir, rs, &d) < 0 || index_put(root, rs, sum, &d) < 0)
		goto fail_diags;

	/* what the nodes send back; not timed */
	t0 = mono();
	for (size_t k = 0; k < shards; k++)
		if (make_bundle(stage, bundles, id, k, runs, metrics) < 0)
			goto out;
	made = mono() - t0;
	fprintf(stderr, "shard-import: %zu bundles made in %.1f s\n", shards, made);

	/* the executor's engine, as far as the import reads it */
	o.root = root;
	x.o = &o;
	x.rs = rs;
	x.dir = dir;
	engine_sched_init(&x);

	ms = xcalloc(shards, sizeof(*ms));
	t_all = mono();
	for (size_t k = 0; k < shards; k++) {
		_cleanup_free_ char *bp = xasprintf("%s/shard-%zu.tar.zst", bundles, k), *why = NULL;
		_cleanup_strv_ struct strv ids = STRV_INIT, failed = STRV_INIT;
		struct executor_run er;
		double t;
		int r;

		for (size_t j = 0; j < runs; j++)
			strv_push_take(&ids, run_id(k, runs, j));
		t = mono();
		engine_executor_run(&x, &er);
		r = engine_import_shard(&er, bp, &ids, &failed, &why);
		ms[k] = (mono() - t) * 1000.0;
		sum_ms += ms[k];
		if (r != 1) {
			fprintf(stderr, "shard-import: shard %zu: %s\n", k, why ? why : "no bundle");
			goto out;
		}
		unlink(bp);
		if (each && check(root, dir, rs, (k + 1) * runs, metrics) < 0) {
			fprintf(stderr, "shard-import: after shard %zu\n", k);
			goto out;
		}
		if (isatty(STDERR_FILENO) && (k + 1) % 10 == 0)
			fprintf(stderr, "\rshard-import: %zu/%zu shards, %.1f ms a shard so far", k + 1, shards,
				sum_ms / (double)(k + 1));
	}
	t_all = mono() - t_all;
	if (isatty(STDERR_FILENO))
		fputc('\n', stderr);
	getrusage(RUSAGE_SELF, &ru);
	if (check(root, dir, rs, total, metrics) < 0)
		goto out;
	{
		size_t tenth = shards >= 10 ? shards / 10 : 1;

		for (size_t k = 0; k < tenth; k++) {
			first += ms[k];
			last += ms[shards - 1 - k];
		}
		first /= (double)tenth;
		last /= (double)tenth;
	}
	qsort(ms, shards, sizeof(*ms), cmp_double);
	{
		double mean = sum_ms / (double)shards, median = ms[shards / 2], p95 = ms[(shards * 95 + 99) / 100 - 1];

		printf("shard import: %zu shards x %zu runs x %zu metrics (results under %s)\n", shards, runs, metrics,
		       tmpdir);
		printf("  total:           %.2f s for %zu runs (%.0f runs/s)\n", t_all, total, (double)total / t_all);
		printf("  per shard:       mean %.1f ms, median %.1f ms, p95 %.1f ms, max %.1f ms\n", mean, median, p95,
		       ms[shards - 1]);
		printf("  first / last 10%%: %.1f ms / %.1f ms a shard (mean, import order)\n", first, last);
		printf("  head peak RSS:   %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
		printf("  warnings:        %zu\n", warnings);
		printf("  goal (mean <= %.0f ms a shard): %s\n", GOAL_MS, mean <= GOAL_MS ? "met" : "NOT met");
	}
	rc = 0;
	goto out;
fail_diags:
	say_diags("setup", &d);
out:
	engine_release(&x);
	fs_remove_tree(tmpl);
	return rc;
}
