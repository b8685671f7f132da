/* kpt_history_db.h - the two history backends behind one small interface;
 * private to analyzer/history/kpt_history*.c.
 *
 * The store's logic (schema, migrations, add, queries: kpt_history.c) is
 * written once in SQL that both SQLite and PostgreSQL accept: '?'
 * placeholders (the PostgreSQL backend numbers them $1, $2...), parameters
 * passed as text (NULL: SQL NULL), and a few words that differ substituted
 * by the backend (@ID@: an integer primary key the database numbers).
 */
#ifndef KPT_HISTORY_DB_H
#define KPT_HISTORY_DB_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"
#include "kpt_history.h"

struct kpt_hdb;

#define KPT_HDB_CREATE 1
#define KPT_HDB_READ_ONLY 2

/* One result row, valid during the callback. Columns from 0; NULL values
 * read as "" / NAN / 0. */
struct kpt_hdb_row {
	const struct kpt_hdb_ops *ops;
	void *impl;
	int index;
};

/* Returns 0 to go on, or a negative kpt_err to stop (the query returns it). */
typedef int (*kpt_hdb_row_fn)(void *ctx, const struct kpt_hdb_row *row);

struct kpt_hdb_ops {
	const char *name;           /* "sqlite", "postgresql" */
	const char *id_type;        /* what @ID@ becomes */
	const char *begin_write;    /* starts a write transaction */
	/* Statement run first in the migration transaction, serialising
	 * migrations between processes; "" when begin_write already does. */
	const char *migrate_lock;
	/* flags: KPT_HDB_CREATE makes a missing store (SQLite); KPT_HDB_READ_ONLY
	 * opens it for reading only (no journal switch, no migration, read-only
	 * transactions). */
	int (*open)(const char *url, int flags, struct kpt_hdb **out, struct kpt_diag *d);
	void (*close)(struct kpt_hdb *db);
	/* SQL without parameters; may hold several statements. */
	int (*exec)(struct kpt_hdb *db, const char *sql, struct kpt_diag *d);
	/* One statement with nparams text parameters; fn (may be NULL) per row. */
	int (*query)(struct kpt_hdb *db, const char *sql, int nparams, const char *const *params,
		     kpt_hdb_row_fn fn, void *ctx, struct kpt_diag *d);
	const char *(*text)(const struct kpt_hdb_row *r, int col);
	double (*real)(const struct kpt_hdb_row *r, int col);
	int64_t (*integer)(const struct kpt_hdb_row *r, int col);
	int (*is_null)(const struct kpt_hdb_row *r, int col);
};

/* An open store (kpt_history.h), shared by kpt_history.c (open, migrate,
 * add) and kpt_history_query.c. */
struct kpt_history {
	const struct kpt_hdb_ops *ops;
	struct kpt_hdb *db;
	char *shown;                /* the URL, password masked */
	int schema;                 /* version of the open store */
	struct kpt_history_open_opts o;
};

/* url with any password (user:PASSWORD@, password=..., ?password=...,
 * each one) as ***, for messages; malloc'd, NULL when out of memory.
 * kpt_history.c says what counts as a password. */
char *kpt_history_mask_url(const char *url);
/* msg (a library's message about url) with every secret of url, and each
 * string of extra (NULL-terminated, may be NULL: what libpq parsed as
 * passwords), raw or percent-decoded, as ***; malloc'd, NULL when out of
 * memory. Secrets under 3 bytes are left (they would garble the text). */
char *kpt_history_scrub(const char *url, const char *const *extra, const char *msg);

/* The sessions columns of struct kpt_history_diff_env (schema 3), one
 * table for add and the queries (kpt_history.c). */
enum kpt_hcol_type { KPT_HCOL_TEXT, KPT_HCOL_INT, KPT_HCOL_REAL };
struct kpt_hcol {
	const char *name;
	enum kpt_hcol_type type;
	size_t off;                 /* in struct kpt_history_diff_env */
};
extern const struct kpt_hcol kpt_history_env_cols[];
extern const size_t kpt_history_n_env_cols;
/* ", PREFIXcol1, PREFIXcol2, ..." of those columns; malloc'd, NULL when
 * out of memory. */
char *kpt_history_env_cols_sql(const char *prefix);
/* Reads those columns of row from column `first` on into *e (have = 1 when
 * the session has them); strings into a. 0 or KPT_E_NOMEM. */
int kpt_history_env_read(const struct kpt_hdb_row *row, int first, struct kpt_arena *a,
			 struct kpt_history_diff_env *e);

/* NULL when this build lacks the library. */
extern const struct kpt_hdb_ops *const kpt_hdb_sqlite;
extern const struct kpt_hdb_ops *const kpt_hdb_pg;

#endif
