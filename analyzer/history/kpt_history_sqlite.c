/* kpt_history_sqlite.c - the SQLite backend of the history store: one file,
 * WAL journal (readers never block the writer; writers queue on a 60 s busy
 * timeout), synchronous=NORMAL (a committed add survives a crash of the
 * process; a power cut may lose the last ones, never corrupt the file). */
#include "kpt_history_db.h"

#ifdef KPT_HAVE_SQLITE
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BUSY_MS 60000

struct kpt_hdb {
	sqlite3 *db;
	char *path;
	char *shown;                /* path for messages: a PostgreSQL URL mistyped as a path is masked too */
};

static int fail(struct kpt_hdb *h, int rc, const char *what, struct kpt_diag *d)
{
	enum kpt_err code = rc == SQLITE_NOTADB || rc == SQLITE_CORRUPT ? KPT_E_FORMAT :
		rc == SQLITE_NOMEM ? KPT_E_NOMEM : KPT_E_IO;

	return kpt_diag_set(d, code, "history store '%s': %s: %s", h->shown, what,
			    h->db ? sqlite3_errmsg(h->db) : sqlite3_errstr(rc));
}

static void sq_close(struct kpt_hdb *h)
{
	if (!h)
		return;
	if (h->db)
		sqlite3_close_v2(h->db); /* SQLITE_OK or BUSY with statements left: we leave none */
	free(h->path);
	free(h->shown);
	free(h);
}

/* The folder of path, made when absent (one level, like .kptprof/). */
static int make_parent(const char *path, struct kpt_diag *d)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int rc = 0;

	if (!slash || slash == path)
		return 0;
	dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	if (mkdir(dir, 0777) != 0 && errno != EEXIST)
		rc = kpt_diag_set(d, KPT_E_IO, "cannot make folder '%s': %s", dir, strerror(errno));
	free(dir);
	return rc;
}

static int sq_exec(struct kpt_hdb *h, const char *sql, struct kpt_diag *d)
{
	int rc = sqlite3_exec(h->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : fail(h, rc, "statement failed", d);
}

static int sq_query(struct kpt_hdb *h, const char *sql, int nparams, const char *const *params,
		    kpt_hdb_row_fn fn, void *ctx, struct kpt_diag *d)
{
	sqlite3_stmt *st = NULL;
	struct kpt_hdb_row row = { kpt_hdb_sqlite, NULL, 0 };
	int rc = sqlite3_prepare_v2(h->db, sql, -1, &st, NULL), out = 0;

	if (rc != SQLITE_OK)
		return fail(h, rc, "cannot prepare a query", d);
	for (int i = 0; i < nparams && rc == SQLITE_OK; i++)
		rc = params[i] ? sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_STATIC) :
			sqlite3_bind_null(st, i + 1);
	if (rc != SQLITE_OK) {
		out = fail(h, rc, "cannot bind a parameter", d);
		sqlite3_finalize(st);
		return out;
	}
	row.impl = st;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (fn && (out = fn(ctx, &row)) < 0)
			break;
		row.index++;
	}
	if (out == 0 && rc != SQLITE_DONE)
		out = fail(h, rc, "query failed", d);
	sqlite3_finalize(st); /* repeats step's error, already reported */
	return out;
}

static const char *sq_text(const struct kpt_hdb_row *r, int col)
{
	const unsigned char *s = sqlite3_column_text(r->impl, col);

	return s ? (const char *)s : "";
}

static double sq_real(const struct kpt_hdb_row *r, int col)
{
	return sqlite3_column_type(r->impl, col) == SQLITE_NULL ? NAN : sqlite3_column_double(r->impl, col);
}

static int64_t sq_integer(const struct kpt_hdb_row *r, int col)
{
	return sqlite3_column_int64(r->impl, col);
}

static int sq_is_null(const struct kpt_hdb_row *r, int col)
{
	return sqlite3_column_type(r->impl, col) == SQLITE_NULL;
}

/* Switches the file to the WAL journal (kept in the file: once per store).
 * The switch takes an exclusive lock without waiting in the busy handler,
 * so writers opening a fresh store at once get SQLITE_BUSY here: retried
 * for up to the busy timeout, with a short random pause. 0, or a diag. */
static int switch_to_wal(struct kpt_hdb *h, struct kpt_diag *d)
{
	struct timespec start, now, pause;
	unsigned seed = (unsigned)getpid();
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		sqlite3_stmt *st = NULL;
		int wal = 0;

		rc = sqlite3_prepare_v2(h->db, "PRAGMA journal_mode=WAL", -1, &st, NULL);
		if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
			const unsigned char *mode = sqlite3_column_text(st, 0);

			wal = mode && strcmp((const char *)mode, "wal") == 0;
			rc = SQLITE_OK;
		}
		sqlite3_finalize(st);
		if (rc == SQLITE_OK && wal)
			return 0;
		if (rc == SQLITE_OK)
			return kpt_diag_set(d, KPT_E_IO, "history store '%s': cannot switch to the WAL journal", h->shown);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) ||
		    (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 > BUSY_MS)
			return fail(h, rc, "cannot switch to the WAL journal", d);
		pause.tv_sec = 0;
		pause.tv_nsec = (long)(5 + rand_r(&seed) % 20) * 1000000L;
		nanosleep(&pause, NULL);
	}
}

/* Reopens h's file read-only as immutable: SQLite then takes no locks and
 * needs no -shm file. The path is written into a file: URI, every byte
 * outside [A-Za-z0-9/._~-] percent-encoded. Returns a SQLite code. */
static int reopen_immutable(struct kpt_hdb *h)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(h->path);
	char *uri = malloc(3 * n + 32), *o;
	int rc;

	if (!uri)
		return SQLITE_NOMEM;
	o = uri + sprintf(uri, "file:");
	for (const unsigned char *p = (const unsigned char *)h->path; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("/._~-", *p)) {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	strcpy(o, "?immutable=1");
	sqlite3_close_v2(h->db);
	h->db = NULL;
	rc = sqlite3_open_v2(uri, &h->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, NULL);
	free(uri);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(h->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
	return rc;
}

/* A read-only connection cannot recover a WAL store (a -wal file left by
 * a writer, or a -shm it cannot map): reopened read-write when this
 * process may write the file (recovery only replays committed
 * transactions; nothing else is written), else read as immutable when no
 * -wal file holds changes (what the main file holds is then all there
 * is). A -wal with changes that nobody here can recover is an error:
 * reading past it would show a stale store. Returns a SQLite code. */
static int reopen_for_reading(struct kpt_hdb *h)
{
	size_t n = strlen(h->path);
	char *wal = malloc(n + 5);
	struct stat st;
	int rc, has_wal;

	if (!wal)
		return SQLITE_NOMEM;
	memcpy(wal, h->path, n);
	memcpy(wal + n, "-wal", 5);
	has_wal = stat(wal, &st) == 0 && st.st_size > 0;
	free(wal);
	if (access(h->path, W_OK) == 0) {
		sqlite3_close_v2(h->db);
		h->db = NULL;
		rc = sqlite3_open_v2(h->path, &h->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
		if (rc == SQLITE_OK && (rc = sqlite3_busy_timeout(h->db, BUSY_MS)) == SQLITE_OK)
			rc = sqlite3_exec(h->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
		if (rc == SQLITE_OK || has_wal)
			return rc;
	}
	return has_wal ? SQLITE_READONLY_RECOVERY : reopen_immutable(h);
}

/* A store only read (flags & KPT_HDB_READ_ONLY) is opened read-only and
 * left in whatever journal mode it has: that works on a read-only file,
 * folder or mount and on a file of another user. A WAL store whose folder
 * cannot hold the -shm file is then read as immutable (nobody can be
 * writing it through this path either). */
static int sq_open(const char *path, int flags, struct kpt_hdb **out, struct kpt_diag *d)
{
	struct kpt_hdb *h = calloc(1, sizeof *h);
	struct stat st;
	int rc, create = flags & KPT_HDB_CREATE, ro = flags & KPT_HDB_READ_ONLY;

	*out = NULL;
	if (!h || !(h->path = strdup(path)) || !(h->shown = kpt_history_mask_url(path))) {
		sq_close(h);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	if (stat(path, &st) != 0) {
		if (!create || ro) {
			kpt_diag_set(d, KPT_E_NOTFOUND, "no history store at '%s'", h->shown);
			sq_close(h);
			return kpt_diag_hint(d, "'kptprof history add FILE' makes one; --db or $KPTPROF_DB names another");
		}
		if ((rc = make_parent(path, d)) < 0) {
			sq_close(h);
			return rc;
		}
	} else if (!S_ISREG(st.st_mode)) {
		rc = kpt_diag_set(d, KPT_E_FORMAT, "history store '%s' is not a file", h->shown);
		sq_close(h);
		return rc;
	}
	rc = sqlite3_open_v2(path, &h->db, (ro ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
			     (create && !ro ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		rc = fail(h, rc, "cannot open", d);
		sq_close(h);
		return rc;
	}
	if ((rc = sqlite3_busy_timeout(h->db, BUSY_MS)) != SQLITE_OK) {
		rc = fail(h, rc, "cannot set the busy timeout", d);
		sq_close(h);
		return rc;
	}
	if (ro) {
		/* The first read: a file that is not a database fails here. */
		sqlite3_extended_result_codes(h->db, 1);
		rc = sqlite3_exec(h->db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
		if ((rc & 0xff) == SQLITE_CANTOPEN || (rc & 0xff) == SQLITE_READONLY)
			rc = reopen_for_reading(h);
		if (rc == SQLITE_READONLY_RECOVERY) {
			rc = kpt_diag_set(d, KPT_E_IO, "history store '%s': its -wal file holds changes that only a"
					  " user who may write the store can recover", h->shown);
			kpt_diag_hint(d, "any kptprof history command run by such a user recovers them");
			sq_close(h);
			return rc;
		}
		if (rc != SQLITE_OK) {
			rc = fail(h, rc, "cannot read", d);
			sq_close(h);
			return rc;
		}
	} else if ((rc = switch_to_wal(h, d)) < 0 || (rc = sq_exec(h, "PRAGMA synchronous=NORMAL", d)) < 0) {
		sq_close(h);
		return rc;
	}
	*out = h;
	return 0;
}

static const struct kpt_hdb_ops sqlite_ops = {
	.name = "sqlite",
	.id_type = "INTEGER PRIMARY KEY",
	.begin_write = "BEGIN IMMEDIATE",
	.migrate_lock = "",
	.open = sq_open,
	.close = sq_close,
	.exec = sq_exec,
	.query = sq_query,
	.text = sq_text,
	.real = sq_real,
	.integer = sq_integer,
	.is_null = sq_is_null,
};
const struct kpt_hdb_ops *const kpt_hdb_sqlite = &sqlite_ops;
#else
const struct kpt_hdb_ops *const kpt_hdb_sqlite = NULL;
#endif
