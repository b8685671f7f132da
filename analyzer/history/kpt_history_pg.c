/* kpt_history_pg.c - the PostgreSQL backend of the history store, through
 * libpq. Reads go through a cursor, 50000 rows at a time, so that a
 * long history is never held in memory twice (libpq would keep a whole
 * result set). Notices (CREATE ... IF NOT EXISTS) are dropped: a library
 * does not print. */
#include "kpt_history_db.h"

#ifdef KPT_HAVE_PQ
#include <ctype.h>
#include <libpq-fe.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CONNECT_TIMEOUT_S "10"

struct kpt_hdb {
	PGconn *conn;
	char *shown;                /* the URL with any password masked */
	char *url;                  /* as given, to scrub its secrets from messages */
	char *extra[3];             /* password, sslpassword as libpq parsed them; NULL-terminated */
};

struct pg_row {
	PGresult *res;
	int r;
	char **dec;                 /* texts decoded for this row (pg_text), freed after it */
	size_t ndec;
};

/* ---- text that is not UTF-8 ------------------------------------------------
 * A PostgreSQL text column holds valid UTF-8 only; names and paths from a
 * recording may hold any bytes. Such a parameter is stored escaped,
 * reversibly: each byte b that is not part of a valid UTF-8 character as
 * ESC followed by U+0100 + b, and ESC itself (U+FFFF, a noncharacter no
 * kernel name holds) as ESC ESC; every other string, all of them in
 * practice, is stored as it is. pg_text undoes it, so both backends give
 * back the bytes that were added. */
#define ESC "\xef\xbf\xbf"

/* Length of the valid UTF-8 character at s (Unicode table 3-7: no
 * overlong forms, no surrogates, at most U+10FFFF), 0 when invalid. */
static int utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		unsigned lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		unsigned lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80 ? 4 : 0;
	}
	return 0;
}

/* s escaped as above, malloc'd; NULL with *plain = 1 when s needs none
 * (NULL with *plain = 0: out of memory). */
static char *escape_text(const char *s, int *plain)
{
	const unsigned char *p = (const unsigned char *)s;
	char *out, *o;
	int need = 0;

	for (int n; *p && !need; p += n)
		need = !(n = utf8_len(p)) || (n == 3 && memcmp(p, ESC, 3) == 0);
	*plain = !need;
	if (!need || !(out = malloc(strlen(s) * 6 + 1)))
		return NULL;
	o = out;
	for (p = (const unsigned char *)s; *p;) {
		int n = utf8_len(p);

		if (n == 3 && memcmp(p, ESC, 3) == 0) {
			memcpy(o, ESC ESC, 6);
			o += 6;
		} else if (n) {
			memcpy(o, p, (size_t)n);
			o += n;
		} else {
			unsigned c = 0x100u + *p;

			memcpy(o, ESC, 3);
			o[3] = (char)(0xc0 | (c >> 6));
			o[4] = (char)(0x80 | (c & 0x3f));
			o += 5;
			n = 1;
		}
		p += n;
	}
	*o = '\0';
	return out;
}

/* The bytes escape_text was given; malloc'd, NULL when out of memory. */
static char *unescape_text(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	if (!out)
		return NULL;
	while (*s) {
		if (memcmp(s, ESC ESC, 6) == 0) {
			memcpy(o, ESC, 3);
			o += 3;
			s += 6;
		} else if (memcmp(s, ESC, 3) == 0 && (unsigned char)s[3] >= 0xc4 && (unsigned char)s[3] <= 0xc7 &&
			   ((unsigned char)s[4] & 0xc0) == 0x80) {
			*o++ = (char)(((((unsigned char)s[3] & 0x1f) << 6) | ((unsigned char)s[4] & 0x3f)) - 0x100);
			s += 5;
		} else {
			*o++ = *s++;
		}
	}
	*o = '\0';
	return out;
}

/* libpq's message on one line: lines joined with "; ", tabs and the
 * trailing newline dropped. Writes into buf. */
static const char *one_line(const char *msg, char *buf, size_t cap)
{
	size_t n = 0;

	for (const char *p = msg; *p && n + 3 < cap; p++) {
		if (*p == '\n') {
			while (p[1] == '\t' || p[1] == ' ')
				p++;
			if (p[1])
				buf[n++] = ';', buf[n++] = ' ';
		} else {
			buf[n++] = *p == '\t' ? ' ' : *p;
		}
	}
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	return buf;
}

/* libpq's message on one line with every secret of the URL as ***
 * (libpq echoes parts of what it was given); with quotes, each "..."
 * as "***" too when the URL has a secret (a parse error quotes pieces of
 * a password it split elsewhere). Writes into buf. */
static const char *clean(const struct kpt_hdb *h, const char *msg, int quotes, char *buf, size_t cap)
{
	char line[768], *s;
	int hidden;

	one_line(msg, line, sizeof line);
	s = kpt_history_scrub(h->url, (const char *const *)h->extra, line);
	if (!s) {
		snprintf(buf, cap, "(message withheld: out of memory)");
		return buf;
	}
	hidden = strcmp(h->shown, h->url) != 0;
	if (quotes && hidden) {
		size_t n = 0;

		for (const char *p = s; *p && n + 6 < cap; p++) {
			const char *q = *p == '"' ? strchr(p + 1, '"') : NULL;

			buf[n++] = *p;
			if (q) {
				memcpy(buf + n, "***\"", 4);
				n += 4;
				p = q;
			}
		}
		buf[n] = '\0';
	} else {
		snprintf(buf, cap, "%s", s);
	}
	free(s);
	return buf;
}

static int fail(struct kpt_hdb *h, const char *what, struct kpt_diag *d)
{
	char line[768];

	return kpt_diag_set(d, KPT_E_IO, "history store '%s': %s: %s", h->shown, what,
			    clean(h, PQerrorMessage(h->conn), 0, line, sizeof line));
}

static void no_notice(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static void pg_close(struct kpt_hdb *h)
{
	if (!h)
		return;
	PQfinish(h->conn); /* accepts NULL */
	free(h->shown);
	free(h->url);
	for (int i = 0; h->extra[i]; i++)
		free(h->extra[i]);
	free(h);
}

static int pg_exec(struct kpt_hdb *h, const char *sql, struct kpt_diag *d)
{
	PGresult *res = PQexec(h->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	int rc = st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK ? 0 : fail(h, "statement failed", d);

	PQclear(res);
	return rc;
}

static int pg_open(const char *url, int flags, struct kpt_hdb **out, struct kpt_diag *d)
{
	const char *keys[] = { "connect_timeout", "application_name", "dbname", NULL };
	const char *vals[] = { CONNECT_TIMEOUT_S, "kptprof", url, NULL };
	struct kpt_hdb *h = calloc(1, sizeof *h);
	PQconninfoOption *opts;
	char *err = NULL, line[768];
	int ne = 0;

	/* the database must exist (KPT_HDB_CREATE makes only the schema) */
	*out = NULL;
	if (!h || !(h->shown = kpt_history_mask_url(url)) || !(h->url = strdup(url))) {
		pg_close(h);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	opts = PQconninfoParse(url, &err);
	if (!opts) {
		kpt_diag_set(d, err ? KPT_E_INVAL : KPT_E_NOMEM, "bad PostgreSQL URL '%s': %s", h->shown,
			     err ? clean(h, err, 1, line, sizeof line) : "out of memory");
		kpt_diag_hint(d, "write it as postgresql://USER:PASSWORD@HOST:PORT/DATABASE");
		PQfreemem(err);
		pg_close(h);
		return KPT_E_INVAL;
	}
	for (PQconninfoOption *o = opts; o->keyword && ne < 2; o++)
		if (o->val && o->val[0] && (strcmp(o->keyword, "password") == 0 || strcmp(o->keyword, "sslpassword") == 0))
			h->extra[ne++] = strdup(o->val); /* NULL when out of memory: fewer to scrub */
	PQconninfoFree(opts);
	h->conn = PQconnectdbParams(keys, vals, 1);
	if (!h->conn) {
		pg_close(h);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory connecting to PostgreSQL");
	}
	if (PQstatus(h->conn) != CONNECTION_OK) {
		int rc = kpt_diag_set(d, KPT_E_IO, "cannot connect to history store '%s': %s", h->shown,
				      clean(h, PQerrorMessage(h->conn), 0, line, sizeof line));

		pg_close(h);
		return rc;
	}
	PQsetNoticeProcessor(h->conn, no_notice, NULL);
	{
		/* cursors are read to the end: plan them for the whole result,
		 * not for the first rows (the default 0.1) */
		int rc = pg_exec(h, "SET cursor_tuple_fraction = 1.0", d);

		if (rc == 0 && (flags & KPT_HDB_READ_ONLY))
			rc = pg_exec(h, "SET default_transaction_read_only = on", d);

		if (rc < 0) {
			pg_close(h);
			return rc;
		}
	}
	*out = h;
	return 0;
}


/* sql with the i-th '?' (outside quotes) as $i; malloc'd. */
static char *number_params(const char *sql, const char *prefix)
{
	size_t n = strlen(sql), np = strlen(prefix), q = 0;
	char *out, *o;
	int inq = 0, k = 0;

	for (const char *p = sql; *p; p++)
		q += *p == '?';
	out = malloc(np + n + q * 11 + 1);
	if (!out)
		return NULL;
	memcpy(out, prefix, np);
	o = out + np;
	for (const char *p = sql; *p; p++) {
		if (*p == '\'')
			inq = !inq;
		if (*p == '?' && !inq)
			o += sprintf(o, "$%d", ++k);
		else
			*o++ = *p;
	}
	*o = '\0';
	return out;
}

static int each_row(PGresult *res, kpt_hdb_row_fn fn, void *ctx, int *index)
{
	struct pg_row pr = { res, 0, NULL, 0 };
	struct kpt_hdb_row row = { kpt_hdb_pg, &pr, 0 };
	int rc = 0;

	for (int r = 0, nt = PQntuples(res); fn && r < nt && rc == 0; r++) {
		pr.r = r;
		row.index = (*index)++;
		rc = fn(ctx, &row);
		for (size_t i = 0; i < pr.ndec; i++)
			free(pr.dec[i]);
		pr.ndec = 0;
	}
	free(pr.dec);
	return rc;
}

static int is_select(const char *sql)
{
	while (isspace((unsigned char)*sql))
		sql++;
	return strncasecmp(sql, "SELECT", 6) == 0;
}

static void free_params(char **esc, const char **par, int n)
{
	for (int i = 0; esc && i < n; i++)
		free(esc[i]);
	free(esc);
	free(par);
}

/* A SELECT: DECLARE a cursor (in a transaction of its own when none is
 * open), FETCH until empty. Anything else: one PQexecParams. */
static int pg_query(struct kpt_hdb *h, const char *sql, int nparams, const char *const *params,
		    kpt_hdb_row_fn fn, void *ctx, struct kpt_diag *d)
{
	int cursor = is_select(sql), own = 0, index = 0, rc = 0;
	char *text = number_params(sql, cursor ? "DECLARE kpt_cur NO SCROLL CURSOR FOR " : "");
	PGresult *res;
	/* parameters that are not UTF-8 go escaped (escape_text) */
	char **esc = calloc(nparams > 0 ? (size_t)nparams : 1, sizeof *esc);
	const char **par = malloc((nparams > 0 ? (size_t)nparams : 1) * sizeof *par);
	int oom = !text || !esc || !par;

	for (int i = 0; !oom && i < nparams; i++) {
		int plain;

		esc[i] = params[i] ? escape_text(params[i], &plain) : NULL;
		oom = params[i] && !esc[i] && !plain;
		par[i] = esc[i] ? esc[i] : params[i];
	}
	if (oom) {
		free_params(esc, par, nparams);
		free(text);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	if (cursor && PQtransactionStatus(h->conn) == PQTRANS_IDLE) {
		if ((rc = pg_exec(h, "BEGIN READ ONLY", d)) < 0) {
			free_params(esc, par, nparams);
			free(text);
			return rc;
		}
		own = 1;
	}
	res = PQexecParams(h->conn, text, nparams, NULL, par, NULL, NULL, 0);
	free_params(esc, par, nparams);
	free(text);
	if (PQresultStatus(res) != PGRES_COMMAND_OK && PQresultStatus(res) != PGRES_TUPLES_OK)
		rc = fail(h, "query failed", d);
	else if (!cursor)
		rc = each_row(res, fn, ctx, &index);
	PQclear(res);
	while (cursor && rc == 0) {
		res = PQexec(h->conn, "FETCH 50000 FROM kpt_cur");
		if (PQresultStatus(res) != PGRES_TUPLES_OK)
			rc = fail(h, "query failed", d);
		else if (PQntuples(res) == 0)
			cursor = 0;
		else
			rc = each_row(res, fn, ctx, &index);
		PQclear(res);
	}
	if (own) {
		/* ends the cursor too; after an error the transaction is aborted
		 * and ROLLBACK is what COMMIT does */
		int rc2 = pg_exec(h, rc == 0 ? "COMMIT" : "ROLLBACK", rc == 0 ? d : NULL);

		rc = rc == 0 ? rc2 : rc;
	} else if (is_select(sql) && rc == 0) {
		rc = pg_exec(h, "CLOSE kpt_cur", d);
	}
	return rc;
}

/* Valid during the row's callback. An escaped text that cannot be
 * decoded for want of memory reads as it is stored. */
static const char *pg_text(const struct kpt_hdb_row *r, int col)
{
	struct pg_row *p = r->impl;
	const char *v = PQgetvalue(p->res, p->r, col); /* "" for NULL */
	char **grown, *dec;

	if (!strstr(v, ESC) || !(grown = realloc(p->dec, (p->ndec + 1) * sizeof *grown)))
		return v;
	p->dec = grown;
	if (!(dec = unescape_text(v)))
		return v;
	p->dec[p->ndec++] = dec;
	return dec;
}

static double pg_real(const struct kpt_hdb_row *r, int col)
{
	const struct pg_row *p = r->impl;

	return PQgetisnull(p->res, p->r, col) ? NAN : strtod(PQgetvalue(p->res, p->r, col), NULL);
}

static int64_t pg_integer(const struct kpt_hdb_row *r, int col)
{
	const struct pg_row *p = r->impl;

	return strtoll(PQgetvalue(p->res, p->r, col), NULL, 10);
}

static int pg_is_null(const struct kpt_hdb_row *r, int col)
{
	const struct pg_row *p = r->impl;

	return PQgetisnull(p->res, p->r, col);
}

static const struct kpt_hdb_ops pg_ops = {
	.name = "postgresql",
	.id_type = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY",
	.begin_write = "BEGIN",
	.migrate_lock = "SELECT pg_advisory_xact_lock(7405112)",
	.open = pg_open,
	.close = pg_close,
	.exec = pg_exec,
	.query = pg_query,
	.text = pg_text,
	.real = pg_real,
	.integer = pg_integer,
	.is_null = pg_is_null,
};
const struct kpt_hdb_ops *const kpt_hdb_pg = &pg_ops;
#else
const struct kpt_hdb_ops *const kpt_hdb_pg = NULL;
#endif
