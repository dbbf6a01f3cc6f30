/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "../result/compare.h"
#include "../util/alloc.h"
#include "../util/path.h"
#include "../util/strbuf.h"
#include "../util/strmap.h"
#include "../util/strv.h"
#include "index.h"
#include "store.h"
#include "../util/banned.h"

/* How long a command waits for another one's write before it gives up. */
#define BUSY_TIMEOUT_MS 60000

static const char schema[] =
	"BEGIN IMMEDIATE;"
	"CREATE TABLE IF NOT EXISTS labruns(id TEXT PRIMARY KEY, experiment TEXT, total INT, ok INT,"
	" failed INT, pending INT, verdicts TEXT);"
	"CREATE TABLE IF NOT EXISTS runs(labrun TEXT, id TEXT, variant TEXT, grp TEXT, status TEXT,"
	" release TEXT, PRIMARY KEY(labrun, id));"
	"CREATE TABLE IF NOT EXISTS metrics(labrun TEXT, run TEXT, name TEXT, value REAL);"
	"CREATE INDEX IF NOT EXISTS metrics_by_run ON metrics(labrun, run);"
	"CREATE INDEX IF NOT EXISTS metrics_by_name ON metrics(name);"
	"COMMIT;";

/*
 * An open index: the database and the lock that keeps a reindex (which
 * renames a new file over the old one) from running under it.
 */
static void stmt_finalizep(sqlite3_stmt **s)
{
	if (*s)
		sqlite3_finalize(*s);
}

struct index_db {
	sqlite3 *db;
	int lock;
};

static void index_db_close(struct index_db *x)
{
	if (x->db)
		sqlite3_close(x->db);
	if (x->lock >= 0)
		close(x->lock); /* drops the flock */
	x->db = NULL;
	x->lock = -1;
}

/* flock on <root>/index.lock: shared for every use, exclusive for a
 * reindex. Read-only users of a folder without one take none (nothing
 * can be writing there). */
static int index_lock(const char *root, bool exclusive, bool readonly, int *ret, struct diags *d)
{
	_cleanup_free_ char *p = path_join(root, "index.lock");
	struct pos pos = { .file = p };
	int fd = open(p, (readonly ? O_RDONLY : O_RDWR | O_CREAT) | O_NOFOLLOW | O_CLOEXEC, 0644);

	*ret = -1;
	if (fd < 0 && readonly && (errno == ENOENT || errno == EACCES))
		return 0;
	if (fd < 0) {
		diags_add(d, &pos, "cannot open the index lock: %s", strerror(errno));
		return -errno;
	}
	while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) < 0) {
		if (errno == EINTR)
			continue;
		diags_add(d, &pos, "cannot lock the index: %s", strerror(errno));
		close(fd);
		return -errno;
	}
	*ret = fd;
	return 0;
}

/* Open (and create) the database file p: the busy timeout first of all,
 * so that no statement, not even the journal mode switch, fails at once
 * because another lab holds the file. */
static int db_open_file(const char *p, bool readonly, sqlite3 **ret, struct diags *d)
{
	struct pos pos = { .file = p };
	sqlite3 *db = NULL;
	char *err = NULL;
	int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;

	if (sqlite3_open_v2(p, &db, flags, NULL) != SQLITE_OK || sqlite3_busy_timeout(db, BUSY_TIMEOUT_MS) != SQLITE_OK ||
	    (!readonly && (sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, &err) != SQLITE_OK ||
			   sqlite3_exec(db, schema, NULL, NULL, &err) != SQLITE_OK))) {
		diags_add(d, &pos, "cannot open the result index: %s", err ? err : sqlite3_errmsg(db));
		sqlite3_free(err);
		if (!readonly)
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(db);
		return -EIO;
	}
	*ret = db;
	return 0;
}

/* Remove database file p's -wal and -shm, and p itself when whole. */
static void db_unlink(const char *p, bool whole)
{
	for (const char *const *suffix = (const char *const[]){ "", "-wal", "-shm", NULL }; *suffix; suffix++) {
		_cleanup_free_ char *f = xasprintf("%s%s", p, *suffix);

		if (whole || **suffix)
			unlink(f);
	}
}

/*
 * A new index appears whole: made with its schema under a temporary name,
 * then linked into place (link fails, harmlessly, when another lab's was
 * first). Opened in place, the file would exist from sqlite3_open_v2 on
 * and a reader in between would find no tables ("no such table:
 * labruns", seen with lab ls beside 12 fetches).
 */
static int db_create(const char *root, const char *p, struct diags *d)
{
	_cleanup_free_ char *tmp = path_join(root, ".index-XXXXXX");
	struct pos pos = { .file = p };
	sqlite3 *db = NULL;
	int fd, r = 0;

	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		r = -errno;
		diags_add(d, &pos, "cannot create a new index: %s", strerror(-r));
		return r;
	}
	close(fd);
	if ((r = db_open_file(tmp, false, &db, d)) == 0) {
		sqlite3_close(db); /* checkpoints and removes its -wal */
		if (link(tmp, p) < 0 && errno != EEXIST) {
			r = -errno;
			diags_add(d, &pos, "cannot put the new index in place: %s", strerror(-r));
		}
	}
	db_unlink(tmp, true);
	return r;
}

static int db_open(const char *root, bool readonly, struct index_db *x, struct diags *d)
{
	_cleanup_free_ char *p = path_join(root, "index.sqlite");
	struct pos pos = { .file = p };
	int r;

	x->db = NULL;
	x->lock = -1;
	if (readonly && access(p, F_OK) < 0)
		return -ENOENT;
	if (!readonly && (r = path_mkdir_p(root, 0755)) < 0) {
		diags_add(d, &pos, "cannot create the results folder: %s", strerror(-r));
		return r;
	}
	if ((r = index_lock(root, false, readonly, &x->lock, d)) < 0)
		return r;
	if (!readonly && access(p, F_OK) < 0 && (r = db_create(root, p, d)) < 0) {
		index_db_close(x);
		return r;
	}
	if ((r = db_open_file(p, readonly, &x->db, d)) < 0) {
		index_db_close(x);
		return r;
	}
	return 0;
}

static int exec(sqlite3 *db, const char *sql, const struct pos *pos, struct diags *d)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
		diags_add(d, pos, "result index: %s", err ? err : sqlite3_errmsg(db));
		sqlite3_free(err);
		return -EIO;
	}
	return 0;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **s, const struct pos *pos, struct diags *d)
{
	if (sqlite3_prepare_v2(db, sql, -1, s, NULL) != SQLITE_OK) {
		diags_add(d, pos, "result index: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

static void count(const struct result_set *rs, size_t *ok, size_t *failed, size_t *pending)
{
	*ok = *failed = *pending = 0;
	for (size_t i = 0; i < rs->n; i++) {
		*ok += rs->runs[i].status == RUN_OK;
		*failed += rs->runs[i].status == RUN_FAILED;
		*pending += rs->runs[i].status == RUN_PENDING;
	}
}

/* One run's row and its metrics (run: INSERT INTO runs, met: INSERT INTO metrics). */
static int insert_run(sqlite3_stmt *run, sqlite3_stmt *met, const struct result_set *rs, const struct result_run *r)
{
	sqlite3_reset(run);
	sqlite3_bind_text(run, 1, rs->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(run, 2, r->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(run, 3, r->variant, -1, SQLITE_STATIC);
	sqlite3_bind_text(run, 4, r->group, -1, SQLITE_STATIC);
	sqlite3_bind_text(run, 5, run_status_name(r->status), -1, SQLITE_STATIC);
	sqlite3_bind_text(run, 6, r->release, -1, SQLITE_STATIC);
	if (sqlite3_step(run) != SQLITE_DONE)
		return -EIO;
	for (size_t k = 0; k < r->nm; k++) {
		sqlite3_reset(met);
		sqlite3_bind_text(met, 1, rs->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(met, 2, r->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(met, 3, r->m[k].name, -1, SQLITE_STATIC);
		sqlite3_bind_double(met, 4, r->m[k].value);
		if (sqlite3_step(met) != SQLITE_DONE)
			return -EIO;
	}
	return 0;
}

static int put(sqlite3 *db, const struct result_set *rs, const char *verdicts, const struct pos *pos, struct diags *d)
{
	__attribute__((cleanup(stmt_finalizep))) sqlite3_stmt *del1 = NULL, *del2 = NULL, *del3 = NULL;
	__attribute__((cleanup(stmt_finalizep))) sqlite3_stmt *lr = NULL, *run = NULL, *met = NULL;
	size_t ok = 0, failed = 0, pending = 0;

	if (prepare(db, "DELETE FROM labruns WHERE id = ?1", &del1, pos, d) < 0 ||
	    prepare(db, "DELETE FROM runs WHERE labrun = ?1", &del2, pos, d) < 0 ||
	    prepare(db, "DELETE FROM metrics WHERE labrun = ?1", &del3, pos, d) < 0 ||
	    prepare(db, "INSERT INTO labruns VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)", &lr, pos, d) < 0 ||
	    prepare(db, "INSERT INTO runs VALUES(?1, ?2, ?3, ?4, ?5, ?6)", &run, pos, d) < 0 ||
	    prepare(db, "INSERT INTO metrics VALUES(?1, ?2, ?3, ?4)", &met, pos, d) < 0)
		return -EIO;
	sqlite3_stmt *dels[] = { del1, del2, del3 };

	for (size_t i = 0; i < ELEMENTSOF(dels); i++) {
		sqlite3_bind_text(dels[i], 1, rs->id, -1, SQLITE_STATIC);
		if (sqlite3_step(dels[i]) != SQLITE_DONE)
			goto fail;
	}
	for (size_t i = 0; i < rs->n; i++)
		if (insert_run(run, met, rs, &rs->runs[i]) < 0)
			goto fail;
	count(rs, &ok, &failed, &pending);
	sqlite3_bind_text(lr, 1, rs->id, -1, SQLITE_STATIC);
	sqlite3_bind_text(lr, 2, rs->experiment, -1, SQLITE_STATIC);
	sqlite3_bind_int64(lr, 3, (sqlite3_int64)rs->n);
	sqlite3_bind_int64(lr, 4, (sqlite3_int64)ok);
	sqlite3_bind_int64(lr, 5, (sqlite3_int64)failed);
	sqlite3_bind_int64(lr, 6, (sqlite3_int64)pending);
	sqlite3_bind_text(lr, 7, verdicts, -1, SQLITE_STATIC);
	if (sqlite3_step(lr) != SQLITE_DONE)
		goto fail;
	return 0;
fail:
	diags_add(d, pos, "result index: %s", sqlite3_errmsg(db));
	return -EIO;
}

int index_put(const char *root, const struct result_set *rs, const char *verdicts, struct diags *d)
{
	_cleanup_(index_db_close) struct index_db x = { .lock = -1 };
	struct pos pos = { .file = root };
	sqlite3 *db;
	int r;

	if ((r = db_open(root, false, &x, d)) < 0)
		return r;
	db = x.db;
	if (exec(db, "BEGIN IMMEDIATE", &pos, d) < 0)
		return -EIO;
	if (put(db, rs, verdicts, &pos, d) < 0) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		return -EIO;
	}
	return exec(db, "COMMIT", &pos, d);
}

int index_put_runs(const char *root, const struct result_set *rs, const size_t *runs, size_t n, struct diags *d)
{
	_cleanup_(index_db_close) struct index_db x = { .lock = -1 };
	__attribute__((cleanup(stmt_finalizep))) sqlite3_stmt *del1 = NULL, *del2 = NULL, *upd = NULL;
	__attribute__((cleanup(stmt_finalizep))) sqlite3_stmt *run = NULL, *met = NULL;
	struct pos pos = { .file = root };
	size_t ok, failed, pending;
	sqlite3 *db;
	int ret;

	if ((ret = db_open(root, false, &x, d)) < 0)
		return ret;
	db = x.db;
	if (prepare(db, "DELETE FROM runs WHERE labrun = ?1 AND id = ?2", &del1, &pos, d) < 0 ||
	    prepare(db, "DELETE FROM metrics WHERE labrun = ?1 AND run = ?2", &del2, &pos, d) < 0 ||
	    prepare(db, "UPDATE labruns SET ok = ?2, failed = ?3, pending = ?4 WHERE id = ?1", &upd, &pos, d) < 0 ||
	    prepare(db, "INSERT INTO runs VALUES(?1, ?2, ?3, ?4, ?5, ?6)", &run, &pos, d) < 0 ||
	    prepare(db, "INSERT INTO metrics VALUES(?1, ?2, ?3, ?4)", &met, &pos, d) < 0 ||
	    exec(db, "BEGIN IMMEDIATE", &pos, d) < 0)
		return -EIO;
	count(rs, &ok, &failed, &pending);
	sqlite3_bind_text(upd, 1, rs->id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(upd, 2, (sqlite3_int64)ok);
	sqlite3_bind_int64(upd, 3, (sqlite3_int64)failed);
	sqlite3_bind_int64(upd, 4, (sqlite3_int64)pending);
	if (sqlite3_step(upd) != SQLITE_DONE)
		goto fail;
	for (size_t k = 0; k < n; k++) {
		const struct result_run *r = &rs->runs[runs[k]];

		sqlite3_reset(del1);
		sqlite3_reset(del2);
		sqlite3_bind_text(del1, 1, rs->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(del1, 2, r->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(del2, 1, rs->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(del2, 2, r->id, -1, SQLITE_STATIC);
		if (sqlite3_step(del1) != SQLITE_DONE || sqlite3_step(del2) != SQLITE_DONE || insert_run(run, met, rs, r) < 0)
			goto fail;
	}
	return exec(db, "COMMIT", &pos, d);
fail:
	diags_add(d, &pos, "result index: %s", sqlite3_errmsg(db));
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return -EIO;
}

int index_put_run(const char *root, const struct result_set *rs, size_t i, struct diags *d)
{
	return index_put_runs(root, rs, &i, 1, d);
}

static char *col(sqlite3_stmt *s, int i)
{
	const unsigned char *t = sqlite3_column_text(s, i);

	return xstrdup(t ? (const char *)t : "");
}

int index_list(const char *root, struct index_entry **ret, size_t *n, struct diags *d)
{
	_cleanup_(index_db_close) struct index_db x = { .lock = -1 };
	__attribute__((cleanup(stmt_finalizep))) sqlite3_stmt *s = NULL;
	struct pos pos = { .file = root };
	struct index_entry *v = NULL;
	size_t alloc = 0;
	sqlite3 *db;
	int r;

	*ret = NULL;
	*n = 0;
	if ((r = db_open(root, true, &x, d)) < 0)
		return r;
	db = x.db;
	if (prepare(db, "SELECT id, experiment, total, ok, failed, pending, verdicts FROM labruns ORDER BY id", &s,
		    &pos, d) < 0)
		return -EIO;
	while ((r = sqlite3_step(s)) == SQLITE_ROW) {
		GROW(v, alloc, *n + 1);
		v[*n] = (struct index_entry){
			.id = col(s, 0),
			.experiment = col(s, 1),
			.total = (size_t)sqlite3_column_int64(s, 2),
			.ok = (size_t)sqlite3_column_int64(s, 3),
			.failed = (size_t)sqlite3_column_int64(s, 4),
			.pending = (size_t)sqlite3_column_int64(s, 5),
			.verdicts = col(s, 6),
		};
		(*n)++;
	}
	*ret = v;
	if (r != SQLITE_DONE) {
		diags_add(d, &pos, "result index: %s", sqlite3_errmsg(db));
		return -EIO;
	}
	return 0;
}

void index_entries_free(struct index_entry *e, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(e[i].id);
		free(e[i].experiment);
		free(e[i].verdicts);
	}
	free(e);
}

char *index_verdict_summary(const struct result_set *rs)
{
	_cleanup_comparison_ struct comparison *c = compare_build(rs);
	_cleanup_strbuf_ struct strbuf sb = STRBUF_INIT;
	size_t count[VERDICT_COUNT] = { 0 };

	for (size_t i = 0; i < c->nverdicts; i++)
		count[c->verdicts[i].v]++;
	for (size_t v = 0; v < VERDICT_COUNT; v++)
		if (count[v])
			strbuf_addf(&sb, "%s%s %zu", sb.len ? ", " : "", verdict_name(v), count[v]);
	return strbuf_detach(&sb, NULL);
}

int index_rebuild(const char *root, size_t *ret_n, struct strv *ret_skipped, struct diags *d)
{
	_cleanup_free_ char *p = path_join(root, "index.sqlite"), *tmp = path_join(root, ".index-XXXXXX");
	_cleanup_(index_db_close) struct index_db x = { .lock = -1 };
	_cleanup_strv_ struct strv ids = STRV_INIT;
	struct pos pos = { .file = p };
	int r, fd;

	*ret_n = 0;
	if ((r = path_mkdir_p(root, 0755)) < 0) {
		diags_add(d, &pos, "cannot create the results folder: %s", strerror(-r));
		return r;
	}
	/* nobody has the old index open while it is replaced */
	if ((r = index_lock(root, true, false, &x.lock, d)) < 0)
		return r;
	if ((fd = mkostemp(tmp, O_CLOEXEC)) < 0) {
		diags_add(d, &pos, "cannot create a new index: %s", strerror(errno));
		return -errno;
	}
	close(fd);
	if ((r = store_list(root, &ids)) < 0 || (r = db_open_file(tmp, false, &x.db, d)) < 0 ||
	    (r = exec(x.db, "BEGIN IMMEDIATE", &pos, d)) < 0)
		goto fail;
	for (size_t i = 0; i < ids.n; i++) {
		_cleanup_free_ char *dir = path_join(root, ids.v[i]), *sum = NULL;
		_cleanup_result_set_ struct result_set *rs = NULL;
		_cleanup_diags_ struct diags bad = { 0 };

		if (store_load(dir, &rs, &bad) < 0) {
			/* one damaged folder does not cost the others their place */
			for (size_t k = 0; k < bad.n; k++) {
				struct pos bp = { .file = bad.v[k].file, .line = bad.v[k].line, .col = bad.v[k].col };

				diags_add(d, &bp, "%s", bad.v[k].msg);
			}
			strv_push(ret_skipped, ids.v[i]);
			continue;
		}
		sum = index_verdict_summary(rs);
		if ((r = put(x.db, rs, sum, &pos, d)) < 0)
			goto fail;
		(*ret_n)++;
	}
	if ((r = exec(x.db, "COMMIT", &pos, d)) < 0)
		goto fail;
	sqlite3_close(x.db); /* checkpoints and removes its -wal */
	x.db = NULL;
	db_unlink(p, false);
	if (rename(tmp, p) < 0) {
		diags_add(d, &pos, "cannot put the new index in place: %s", strerror(errno));
		r = -errno;
		goto fail;
	}
	return 0;
fail:
	if (x.db)
		sqlite3_close(x.db);
	x.db = NULL;
	db_unlink(tmp, true);
	return r < 0 ? r : -EIO;
}

int index_unindexed(const char *root, const struct index_entry *e, size_t n, struct strv *ret)
{
	_cleanup_strv_ struct strv ids = STRV_INIT;
	_cleanup_strmap_ struct strmap have = STRMAP_INIT;
	size_t one;
	int r;

	if ((r = store_list(root, &ids)) < 0)
		return r;
	for (size_t i = 0; i < n; i++)
		strmap_put(&have, e[i].id, 1);
	for (size_t i = 0; i < ids.n; i++)
		if (!strmap_get(&have, ids.v[i], &one))
			strv_push(ret, ids.v[i]);
	return 0;
}
