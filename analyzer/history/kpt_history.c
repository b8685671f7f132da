/* kpt_history.c - the history store: schema and migrations, opening,
 * loading a recording, add (reads: kpt_history_query.c). Written once for
 * both backends (kpt_history_db.h). */
#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "kpt_diff.h"
#include "kpt_format.h"
#include "kpt_history.h"
#include "kpt_grow.h"
#include "kpt_history_db.h"
#include "kpt_model.h"
#include "kpt_progress.h"
#include "kpt_stats.h"

#define CHUNK 200                   /* points per INSERT */
#define POINT_COLS 5


/* ---- schema ------------------------------------------------------------ */

/* Migration v reaches schema version v from v-1; never edit a shipped one,
 * add the next. @ID@: the backend's self-numbering integer primary key. */
static const char *const migrations[] = {
	[1] =
	"CREATE TABLE sessions ("
	" id @ID@,"
	" added TEXT NOT NULL, run_time TEXT NOT NULL, commit_sha TEXT NOT NULL,"
	" branch TEXT NOT NULL, suite TEXT NOT NULL, gpu_name TEXT NOT NULL,"
	" gpu_slug TEXT NOT NULL, gpu_uuid TEXT NOT NULL, driver TEXT NOT NULL,"
	" cuda TEXT NOT NULL, host TEXT NOT NULL, source TEXT NOT NULL,"
	" runs INTEGER NOT NULL, sm_mhz DOUBLE PRECISION, temp_c DOUBLE PRECISION,"
	" throttled_frac DOUBLE PRECISION);"
	"CREATE INDEX sessions_series ON sessions (suite, gpu_slug, branch, id);"
	"CREATE TABLE kernel_keys ("
	" id @ID@, ident TEXT NOT NULL UNIQUE, name TEXT NOT NULL, path TEXT NOT NULL,"
	" workload TEXT NOT NULL, grid TEXT NOT NULL, block TEXT NOT NULL,"
	" ordinal INTEGER NOT NULL);"
	"CREATE TABLE points ("
	" session_id BIGINT NOT NULL REFERENCES sessions (id),"
	" key_id BIGINT NOT NULL REFERENCES kernel_keys (id),"
	" runs INTEGER NOT NULL, centre_ns DOUBLE PRECISION NOT NULL, run_ns TEXT NOT NULL,"
	" PRIMARY KEY (session_id, key_id));",
	[2] =
	"CREATE TABLE session_labels ("
	" session_id BIGINT NOT NULL REFERENCES sessions (id),"
	" name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (session_id, name));"
	"CREATE INDEX points_key ON points (key_id, session_id);",
	[3] =
	"ALTER TABLE sessions ADD COLUMN boot TEXT;"
	"ALTER TABLE sessions ADD COLUMN iterated INTEGER;"
	"ALTER TABLE sessions ADD COLUMN copy_gbps DOUBLE PRECISION;"
	"ALTER TABLE sessions ADD COLUMN bf16_tflops DOUBLE PRECISION;"
	"ALTER TABLE sessions ADD COLUMN sm_mhz_min DOUBLE PRECISION;"
	"ALTER TABLE sessions ADD COLUMN sm_mhz_max DOUBLE PRECISION;"
	"ALTER TABLE sessions ADD COLUMN temp_c_max DOUBLE PRECISION;"
	"ALTER TABLE sessions ADD COLUMN capped_frac DOUBLE PRECISION;"
	"ALTER TABLE sessions ADD COLUMN kernels BIGINT;"
	"ALTER TABLE sessions ADD COLUMN samples BIGINT;"
	"ALTER TABLE sessions ADD COLUMN skipped BIGINT;"
	"ALTER TABLE sessions ADD COLUMN outside BIGINT;"
	"ALTER TABLE sessions ADD COLUMN dropped_throttle BIGINT;"
	"ALTER TABLE sessions ADD COLUMN dropped_clock BIGINT;"
	"ALTER TABLE sessions ADD COLUMN env_samples BIGINT;"
	"ALTER TABLE sessions ADD COLUMN throttle_bits BIGINT;"
	"ALTER TABLE kernel_keys ADD COLUMN mangled TEXT;"
	"ALTER TABLE points ADD COLUMN run_info TEXT;"
	"ALTER TABLE points ADD COLUMN dropped BIGINT;",
};

#define ENV_COL(n, t) { #n, KPT_HCOL_##t, offsetof(struct kpt_history_diff_env, n) }
/* Migration 3's sessions columns, in its order; `iterated` (never NULL
 * when written) tells a session added since from an older one. */
const struct kpt_hcol kpt_history_env_cols[] = {
	ENV_COL(boot, TEXT), ENV_COL(iterated, INT), ENV_COL(copy_gbps, REAL),
	ENV_COL(bf16_tflops, REAL), ENV_COL(sm_mhz_min, REAL), ENV_COL(sm_mhz_max, REAL),
	ENV_COL(temp_c_max, REAL), ENV_COL(capped_frac, REAL), ENV_COL(kernels, INT),
	ENV_COL(samples, INT), ENV_COL(skipped, INT), ENV_COL(outside, INT),
	ENV_COL(dropped_throttle, INT), ENV_COL(dropped_clock, INT), ENV_COL(env_samples, INT),
	ENV_COL(throttle_bits, INT),
};
const size_t kpt_history_n_env_cols = sizeof kpt_history_env_cols / sizeof kpt_history_env_cols[0];
#define ENV_ITERATED 1              /* index of `iterated` above */
_Static_assert(sizeof migrations / sizeof migrations[0] == KPT_HISTORY_SCHEMA + 1,
	       "one migration per schema version");

/* A growing string; on allocation failure .oom is set and appends stop. */
struct sbuf {
	char *s;
	size_t n, cap;
	int oom;
};

static void sb_add(struct sbuf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (kpt_grow(&b->s, &b->cap, b->n + n + 1, 1) < 0) {
		b->oom = 1;
		return;
	}
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
}

static void sb_str(struct sbuf *b, const char *s)
{
	sb_add(b, s, strlen(s));
}

/* text with every "@ID@" as the backend's id type. */
static char *substitute(const char *text, const char *id_type)
{
	struct sbuf b = { 0 };
	const char *p = text, *q;

	while ((q = strstr(p, "@ID@")) != NULL) {
		sb_add(&b, p, (size_t)(q - p));
		sb_str(&b, id_type);
		p = q + 4;
	}
	sb_str(&b, p);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

char *kpt_history_env_cols_sql(const char *prefix)
{
	struct sbuf b = { 0 };

	for (size_t i = 0; i < kpt_history_n_env_cols; i++) {
		sb_str(&b, ", ");
		sb_str(&b, prefix);
		sb_str(&b, kpt_history_env_cols[i].name);
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

int kpt_history_env_read(const struct kpt_hdb_row *row, int first, struct kpt_arena *a,
			 struct kpt_history_diff_env *e)
{
	memset(e, 0, sizeof *e);
	e->have = !row->ops->is_null(row, first + ENV_ITERATED);
	for (size_t i = 0; i < kpt_history_n_env_cols; i++) {
		const struct kpt_hcol *c = &kpt_history_env_cols[i];
		char *f = (char *)e + c->off;
		int col = first + (int)i;

		if (c->type == KPT_HCOL_TEXT) {
			const char *t = row->ops->text(row, col);

			if (!(*(const char **)f = kpt_arena_strndup(a, t, strlen(t))))
				return KPT_E_NOMEM;
		} else if (c->type == KPT_HCOL_INT) {
			*(int64_t *)f = row->ops->integer(row, col);
		} else {
			*(double *)f = e->have ? row->ops->real(row, col) : 0;
		}
	}
	if (!e->have)
		e->sm_mhz_min = e->sm_mhz_max = e->temp_c_max = NAN;
	return 0;
}

static int get_int(void *ctx, const struct kpt_hdb_row *row)
{
	*(int64_t *)ctx = row->ops->is_null(row, 0) ? 0 : row->ops->integer(row, 0);
	return 0;
}

static void rollback(struct kpt_history *h)
{
	h->ops->exec(h->db, "ROLLBACK", NULL); /* its own failure changes nothing */
}

/* Brings the schema to `want` in one transaction, serialised between
 * processes (a fresh store opened by many writers at once is migrated once). */
static int migrate(struct kpt_history *h, int want, struct kpt_diag *d)
{
	int64_t have = 0;
	int rc;

	if ((rc = h->ops->exec(h->db, h->ops->begin_write, d)) < 0)
		return rc;
	if ((h->ops->migrate_lock[0] &&
	     (rc = h->ops->query(h->db, h->ops->migrate_lock, 0, NULL, NULL, NULL, d)) < 0) ||
	    (rc = h->ops->exec(h->db, "CREATE TABLE IF NOT EXISTS kpt_schema (version INTEGER NOT NULL)", d)) < 0 ||
	    (rc = h->ops->query(h->db, "SELECT max(version) FROM kpt_schema", 0, NULL, get_int, &have, d)) < 0)
		goto out;
	if (have < 0) {
		rc = kpt_diag_set(d, KPT_E_FORMAT, "history store '%s': kpt_schema version %" PRId64
				  " is not a schema version", h->shown, have);
		goto out;
	}
	if (have > KPT_HISTORY_SCHEMA) {
		rc = kpt_diag_set(d, KPT_E_VERSION, "history store has schema version %" PRId64
				  ", newer than this kptprof knows (%d)", have, KPT_HISTORY_SCHEMA);
		kpt_diag_hint(d, "use a newer kptprof");
		goto out;
	}
	for (int v = (int)have + 1; v <= want; v++) {
		char *sql = substitute(migrations[v], h->ops->id_type), num[16];
		const char *param[] = { num };

		if (!sql) {
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
			goto out;
		}
		rc = h->ops->exec(h->db, sql, d);
		free(sql);
		snprintf(num, sizeof num, "%d", v);
		if (rc < 0 || (rc = h->ops->query(h->db, "INSERT INTO kpt_schema (version) VALUES (?)",
						  1, param, NULL, NULL, d)) < 0) {
			kpt_diag_set(d, rc, "cannot migrate the history store to schema %d: %s", v, d ? d->msg : "");
			goto out;
		}
	}
	if ((rc = h->ops->exec(h->db, "COMMIT", d)) < 0)
		goto out;
	h->schema = have > want ? (int)have : want;
	return 0;
out:
	rollback(h);
	return rc;
}

/* The schema version of a store opened read-only: what it has, never
 * migrated (the queries read every older schema). */
static int read_schema(struct kpt_history *h, struct kpt_diag *d)
{
	int64_t have = 0;

	if (h->ops->query(h->db, "SELECT max(version) FROM kpt_schema", 0, NULL, get_int, &have, d) < 0)
		return kpt_diag_set(d, KPT_E_FORMAT, "history store '%s' has no readable schema version: %s", h->shown,
				    d ? d->msg : "");
	if (have < 1)
		return kpt_diag_set(d, KPT_E_FORMAT, "history store '%s': kpt_schema version %" PRId64
				    " is not a schema version", h->shown, have);
	if (have > KPT_HISTORY_SCHEMA) {
		kpt_diag_set(d, KPT_E_VERSION, "history store has schema version %" PRId64
			     ", newer than this kptprof knows (%d)", have, KPT_HISTORY_SCHEMA);
		return kpt_diag_hint(d, "use a newer kptprof");
	}
	h->schema = (int)have;
	return 0;
}

/* ---- secrets in store URLs -------------------------------------------------
 * A URL may carry passwords in several places, and libpq accepts more
 * shapes than it documents; what is masked errs towards too much:
 *   - after each "://": from the first ':' to the LAST '@' of that token
 *     (a password holding an unencoded '@', '/' or '?' included);
 *   - after each "password" (any case, so also sslpassword, PASSWORD) with
 *     or without '=' or "%3D": the value, quoted ('...' with \' escapes)
 *     or up to a blank or '&';
 *   - in a URI's query, each parameter whose percent-decoded name ends in
 *     "password" ("pass%77ord=..."). */

struct span {
	size_t at, len;
};

#define MAX_SPANS 64

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void add_span(struct span *sp, size_t *n, size_t at, size_t len)
{
	if (len && *n < MAX_SPANS)
		sp[(*n)++] = (struct span){ at, len };
}

/* s[0..n) with each %XY decoded, into out (n + 1 bytes); its length. */
static size_t pct_decode(const char *s, size_t n, char *out)
{
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
			out[m++] = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
		} else {
			out[m++] = s[i];
		}
	}
	out[m] = '\0';
	return m;
}

/* Whether key[0..n), decoded, ends in "password" (any case); out of
 * memory counts as yes. */
static int ends_with_password(const char *key, size_t n)
{
	char *dec = malloc(n + 1);
	size_t m;
	int yes;

	if (!dec)
		return 1;
	m = pct_decode(key, n, dec);
	yes = m >= 8 && strncasecmp(dec + m - 8, "password", 8) == 0;
	free(dec);
	return yes;
}

/* The spans of url that hold secrets (see above), at most MAX_SPANS. */
static size_t secret_spans(const char *url, struct span *sp)
{
	size_t n = 0, len = strlen(url);

	for (const char *p = strstr(url, "://"); p; p = strstr(p + 3, "://")) {
		const char *a = p + 3, *e = a, *at = NULL, *colon;

		while (*e && !isspace((unsigned char)*e))
			e++;
		for (const char *q = a; q < e; q++)
			if (*q == '@')
				at = q;
		colon = at ? memchr(a, ':', (size_t)(at - a)) : NULL;
		if (colon)
			add_span(sp, &n, (size_t)(colon + 1 - url), (size_t)(at - colon - 1));
		/* the query's parameters, names decoded */
		for (const char *q = memchr(a, '?', (size_t)(e - a)); q && q < e;) {
			const char *k = q + 1, *eq = k, *v;

			while (eq < e && *eq != '=' && *eq != '&')
				eq++;
			v = eq < e && *eq == '=' ? eq + 1 : eq;
			q = v;
			while (q < e && *q != '&')
				q++;
			if (ends_with_password(k, (size_t)(eq - k)))
				add_span(sp, &n, (size_t)(v - url), (size_t)(q - v));
			if (q >= e)
				break;
		}
	}
	for (size_t i = 0; i + 8 <= len; i++) {
		size_t j = i + 8;

		if (strncasecmp(url + i, "password", 8) != 0)
			continue;
		while (j < len && isspace((unsigned char)url[j]))
			j++;
		if (url[j] == '=')
			j++;
		else if (url[j] == '%' && url[j + 1] == '3' && (url[j + 2] == 'd' || url[j + 2] == 'D'))
			j += 3;
		while (j < len && isspace((unsigned char)url[j]))
			j++;
		if (url[j] == '\'') {
			size_t k = j + 1;

			while (k < len && url[k] != '\'')
				k += url[k] == '\\' && k + 1 < len ? 2 : 1;
			add_span(sp, &n, j, (k < len ? k + 1 : len) - j);
		} else {
			size_t k = j;

			while (k < len && !isspace((unsigned char)url[k]) && url[k] != '&')
				k++;
			add_span(sp, &n, j, k - j);
		}
		i = j;
	}
	return n;
}

char *kpt_history_mask_url(const char *url)
{
	struct span sp[MAX_SPANS];
	size_t n = secret_spans(url, sp), len = strlen(url), o = 0;
	char *hide = calloc(len + 1, 1), *s = malloc(len + 1 + 3 * MAX_SPANS);

	if (!hide || !s) {
		free(hide);
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		memset(hide + sp[i].at, 1, sp[i].len);
	for (size_t i = 0; i < len; i++) {
		if (!hide[i]) {
			s[o++] = url[i];
		} else if (i == 0 || !hide[i - 1]) {
			memcpy(s + o, "***", 3);
			o += 3;
		}
	}
	s[o] = '\0';
	free(hide);
	/* a secret repeated elsewhere in the URL ("?port=SECRET") */
	if (n) {
		char *t = kpt_history_scrub(url, NULL, s);

		free(s);
		s = t;
	}
	return s;
}

/* Appends secret to list (its percent-decoded form too), skipping those
 * under 3 bytes: so short a string is no secret worth hiding in text. */
static void add_secret(char ***list, size_t *n, const char *secret, size_t len)
{
	char *raw, *dec, **l;
	size_t m;

	if (len < 3 || !(l = realloc(*list, (*n + 2) * sizeof *l)))
		return;
	*list = l;
	raw = strndup(secret, len);
	dec = malloc(len + 1);
	if (!raw || !dec) {
		free(raw);
		free(dec);
		return;
	}
	m = pct_decode(secret, len, dec);
	l[(*n)++] = raw;
	if (m >= 3 && strcmp(dec, raw) != 0 && dec[0])
		l[(*n)++] = dec;
	else
		free(dec);
}

/* Whether seg[0..n) and a secret have 4 bytes in a row in common (all of
 * seg when shorter; segments under 3 bytes never). */
static int shares_a_piece(const char *seg, size_t n, char *const *sec, size_t ns)
{
	size_t k = n < 4 ? n : 4;

	if (n < 3)
		return 0;
	for (size_t i = 0; i < ns; i++)
		for (const char *p = sec[i]; strlen(p) >= k; p++)
			for (size_t j = 0; j + k <= n; j++)
				if (memcmp(seg + j, p, k) == 0)
					return 1;
	return 0;
}

char *kpt_history_scrub(const char *url, const char *const *extra, const char *msg)
{
	struct span sp[MAX_SPANS];
	size_t n = secret_spans(url, sp), ns = 0;
	char **sec = NULL;
	struct sbuf b = { 0 };

	for (size_t i = 0; i < n; i++) {
		size_t at = sp[i].at, len = sp[i].len;

		/* a quoted value: the text inside the quotes too */
		if (len >= 2 && url[at] == '\'')
			add_secret(&sec, &ns, url + at + 1, len - 2);
		add_secret(&sec, &ns, url + at, len);
	}
	for (size_t i = 0; extra && extra[i]; i++)
		add_secret(&sec, &ns, extra[i], strlen(extra[i]));
	for (const char *p = msg; *p;) {
		const char *q = *p == '"' ? strchr(p + 1, '"') : NULL;
		size_t best = 0;

		if (q && shares_a_piece(p + 1, (size_t)(q - p - 1), sec, ns)) {
			/* a quoted piece of a secret: libpq split the URL elsewhere
			 * than the masking did ("top" of "u:top/secret@h") */
			sb_str(&b, "\"***\"");
			p = q + 1;
			continue;
		}
		for (size_t i = 0; i < ns; i++) {
			size_t l = strlen(sec[i]);

			if (l > best && strncmp(p, sec[i], l) == 0)
				best = l;
		}
		if (best) {
			sb_str(&b, "***");
			p += best;
		} else {
			sb_add(&b, p, 1);
			p++;
		}
	}
	if (!b.s)
		sb_str(&b, "");
	for (size_t i = 0; i < ns; i++)
		free(sec[i]);
	free(sec);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

static int is_pg_url(const char *url)
{
	return strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0;
}

static const struct kpt_hdb_ops *backend_of(const char *url)
{
	return is_pg_url(url) ? kpt_hdb_pg : kpt_hdb_sqlite;
}

int kpt_history_supported(const char *url)
{
	return backend_of(url) != NULL;
}

int kpt_history_open(const char *url, const struct kpt_history_open_opts *o,
		     struct kpt_history **out, struct kpt_diag *d)
{
	const struct kpt_hdb_ops *ops = backend_of(url);
	struct kpt_history *h;
	int rc;

	*out = NULL;
	if (!url[0])
		return kpt_diag_set(d, KPT_E_INVAL, "empty history store name");
	if (!ops) {
		kpt_diag_set(d, KPT_E_UNSUPPORTED, "this kptprof was built without %s: cannot open history store '%s'",
			     is_pg_url(url) ? "PostgreSQL (libpq)" : "SQLite", is_pg_url(url) ? "postgresql://..." : url);
		return kpt_diag_hint(d, "install %s and rebuild kptprof", is_pg_url(url) ? "libpq-dev" : "libsqlite3-dev");
	}
	h = calloc(1, sizeof *h);
	if (!h)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	h->ops = ops;
	if (!(h->shown = kpt_history_mask_url(url))) {
		free(h);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	if (o)
		h->o = *o;
	if ((rc = ops->open(url, (h->o.create ? KPT_HDB_CREATE : 0) | (h->o.read_only ? KPT_HDB_READ_ONLY : 0),
			    &h->db, d)) < 0 ||
	    (rc = h->o.read_only ? read_schema(h, d) :
	     migrate(h, h->o.schema > 0 && h->o.schema < KPT_HISTORY_SCHEMA ? h->o.schema : KPT_HISTORY_SCHEMA, d)) < 0) {
		kpt_history_close(h);
		return rc;
	}
	*out = h;
	return 0;
}

void kpt_history_close(struct kpt_history *h)
{
	if (!h)
		return;
	if (h->db)
		h->ops->close(h->db);
	free(h->shown);
	free(h);
}

const char *kpt_history_where(const struct kpt_history *h)
{
	return h->shown;
}

const char *kpt_history_backend(const struct kpt_history *h)
{
	return h->ops->name;
}

int kpt_history_schema(const struct kpt_history *h)
{
	return h->schema;
}

/* ---- loading a recording ----------------------------------------------- */

static const char *adup(struct kpt_arena *a, const char *s)
{
	return kpt_arena_strndup(a, s ? s : "", s ? strlen(s) : 0);
}

static int load_points(struct kpt_history_run *run, const struct kpt_diff_side *side,
		       struct kpt_diag *d)
{
	const uint32_t *runs;
	uint32_t nr;
	size_t nk = kpt_diff_side_keys(side);

	kpt_diff_side_runs(side, &runs, &nr);
	run->points = kpt_arena_calloc(&run->arena, nk ? nk : 1, sizeof *run->points);
	if (!run->points)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	for (size_t k = 0; k < nk; k++) {
		struct kpt_history_point *p = &run->points[run->npoints];
		struct kpt_diff_key_info ki;
		double *v = kpt_arena_alloc(&run->arena, (nr ? nr : 1) * sizeof *v);
		struct kpt_history_run_info *ri = kpt_arena_alloc(&run->arena, (nr ? nr : 1) * sizeof *ri);
		uint64_t dropped = 0;
		uint32_t n = 0;

		if (!v || !ri)
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		for (uint32_t r = 0; r < nr; r++) {
			double m = kpt_diff_side_run_median(side, k, r);
			uint64_t dr;

			kpt_diff_side_run_stats(side, k, r, &ri[n].samples, &ri[n].cyc, &dr);
			dropped += dr;
			if (isfinite(m) && m > 0) {
				ri[n].slot = r;
				v[n++] = m;
			}
		}
		if (!n)
			continue; /* every sample of the key dropped by the env filter */
		kpt_diff_side_key(side, k, &ki);
		p->key.name = adup(&run->arena, ki.name);
		p->key.mangled = adup(&run->arena, ki.mangled);
		p->key.path = adup(&run->arena, ki.path);
		p->key.workload = adup(&run->arena, ki.workload);
		if (!p->key.name || !p->key.mangled || !p->key.path || !p->key.workload)
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		p->run_info = ri;
		p->dropped = dropped;
		memcpy(p->key.grid, ki.grid, sizeof p->key.grid);
		memcpy(p->key.block, ki.block, sizeof p->key.block);
		p->key.ordinal = ki.ordinal;
		p->nruns = n;
		p->run_ns = v;
		p->centre_ns = kpt_geomean_f64(v, n); /* the diff's centre of a side */
		run->npoints++;
	}
	return 0;
}

int kpt_history_run_load(const char *path, struct kpt_history_run *run, struct kpt_diag *d)
{
	struct kpt_history_session *s = &run->session;
	struct kpt_file *f = NULL;
	struct kpt_diff_side *side = NULL;
	const struct kpt_diff_env *env;
	const struct kpt_device *dev = NULL;
	size_t ndev = 0;
	const char *branch;
	int rc;

	memset(run, 0, sizeof *run);
	kpt_arena_init(&run->arena);
	if ((rc = kpt_file_open(path, &f, d)) < 0 ||
	    (rc = kpt_diff_side_load(f, NULL, &side, d)) < 0 ||
	    (rc = kpt_file_devices(f, &dev, &ndev, d)) < 0)
		goto out;
	env = kpt_diff_side_env(side);
	branch = kpt_file_meta_get(f, "branch");
	s->time = adup(&run->arena, env->time);
	s->commit = adup(&run->arena, env->commit);
	s->branch = adup(&run->arena, branch && branch[0] ? branch : "main");
	s->suite = adup(&run->arena, env->suite);
	s->gpu_name = adup(&run->arena, env->gpu_name);
	s->gpu_slug = adup(&run->arena, env->gpu_slug);
	s->gpu_uuid = "";
	for (size_t i = 0; i < ndev; i++)
		if (strcmp(dev[i].slug, env->gpu_slug) == 0) {
			s->gpu_uuid = adup(&run->arena, dev[i].uuid);
			break;
		}
	s->driver = adup(&run->arena, env->driver);
	s->cuda = adup(&run->arena, env->cuda);
	s->host = adup(&run->arena, env->host);
	s->source = adup(&run->arena, path);
	s->runs = env->runs;
	s->sm_mhz = env->sm_mhz_median;
	s->temp_c = env->temp_c_median;
	s->throttled_frac = env->env_samples ? env->throttled_frac : NAN;
	{
		struct kpt_history_diff_env *x = &s->env;
		int iterated;

		kpt_diff_side_session_info(side, &iterated, &x->boot, &x->copy_gbps, &x->bf16_tflops);
		x->have = 1;
		x->boot = adup(&run->arena, x->boot);
		x->iterated = iterated;
		x->sm_mhz_min = env->sm_mhz_min;
		x->sm_mhz_max = env->sm_mhz_max;
		x->temp_c_max = env->temp_c_max;
		x->capped_frac = env->capped_frac;
		x->kernels = (int64_t)env->kernels;
		x->samples = (int64_t)env->samples;
		x->skipped = (int64_t)env->skipped;
		x->outside = (int64_t)env->outside;
		x->dropped_throttle = (int64_t)env->dropped_throttle;
		x->dropped_clock = (int64_t)env->dropped_clock;
		x->env_samples = (int64_t)env->env_samples;
		x->throttle_bits = (int64_t)env->throttle_bits;
		if (!x->boot) {
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
			goto out;
		}
	}
	if (!s->time || !s->commit || !s->branch || !s->suite || !s->gpu_name || !s->gpu_slug ||
	    !s->gpu_uuid || !s->driver || !s->cuda || !s->host || !s->source) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto out;
	}
	rc = load_points(run, side, d);
out:
	kpt_diff_side_destroy(side);
	kpt_file_close(f);
	if (rc < 0)
		kpt_history_run_release(run);
	return rc;
}

void kpt_history_run_release(struct kpt_history_run *run)
{
	kpt_arena_release(&run->arena);
	memset(run, 0, sizeof *run);
}

/* ---- add ----------------------------------------------------------------- */

/* The key's identity as text: a 64-bit FNV-1a of every field, in hex. The
 * key's fields may be kilobytes (template names), too long for an index
 * entry in PostgreSQL; 64 bits make a collision among a store's keys
 * (thousands) about 1e-12 likely. */
static void key_ident(const struct kpt_history_key *k, char out[17])
{
	uint64_t h = 0xcbf29ce484222325ull;
	char num[128];
	const char *parts[] = { k->name, k->path, num };

	snprintf(num, sizeof num, "%u,%u,%u/%u,%u,%u/%u", k->grid[0], k->grid[1], k->grid[2],
		 k->block[0], k->block[1], k->block[2], k->ordinal);
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
		for (const char *p = parts[i];; p++) {
			h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
			if (!*p)
				break;
		}
	snprintf(out, 17, "%016" PRIx64, h);
}

struct add_key {
	char ident[17];
	size_t point;               /* index in run->points */
	int64_t id;                 /* 0 until known */
	int dup;                    /* same ident as an earlier entry: not written */
};

static int cmp_add_key(const void *a, const void *b)
{
	const struct add_key *x = a, *y = b;
	int c = strcmp(x->ident, y->ident);

	return c ? c : (x->point > y->point) - (x->point < y->point);
}

struct id_fill {
	struct add_key *keys;
	size_t n;
};

static int fill_id(void *ctx, const struct kpt_hdb_row *row)
{
	struct id_fill *f = ctx;
	struct add_key probe;
	size_t lo = 0, hi = f->n;

	snprintf(probe.ident, sizeof probe.ident, "%s", row->ops->text(row, 1));
	while (lo < hi) { /* first entry with this ident */
		size_t mid = (lo + hi) / 2;

		if (strcmp(f->keys[mid].ident, probe.ident) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < f->n && strcmp(f->keys[lo].ident, probe.ident) == 0; lo++)
		f->keys[lo].id = row->ops->integer(row, 0);
	return 0;
}

/* ",(?,?,...)" (cols placeholders), without the comma for the first row. */
static void placeholders(struct sbuf *b, int first, int cols)
{
	sb_str(b, first ? "(" : ",(");
	for (int c = 0; c < cols; c++)
		sb_str(b, c ? ",?" : "?");
	sb_str(b, ")");
}

struct key_nums {
	char grid[40], block[40], ordinal[16];
};

/* Looks up the ids of keys[0..n) (sorted by ident), creating missing keys:
 * pass 0 looks up, pass 1 inserts the missing (another writer may insert
 * the same key at once: ON CONFLICT DO NOTHING), pass 2 looks them up. */
static int key_ids(struct kpt_history *h, const struct kpt_history_run *run,
		   struct add_key *keys, size_t n, struct kpt_diag *d)
{
	struct id_fill fill = { keys, n };
	int kc = h->schema >= 3 ? 8 : 7; /* columns of a key: mangled from schema 3 */
	const char **par = malloc(CHUNK * 8 * sizeof *par);
	struct key_nums *num = malloc(CHUNK * sizeof *num);
	int rc = 0;

	if (!par || !num) {
		free(par);
		free(num);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	for (int pass = 0; pass < 3 && rc == 0; pass++) {
		for (size_t i = 0; i < n && rc == 0;) {
			struct sbuf sql = { 0 };
			size_t m = 0;

			sb_str(&sql, pass != 1 ? "SELECT id, ident FROM kernel_keys WHERE ident IN (" : kc == 8 ?
			       "INSERT INTO kernel_keys (ident, name, path, workload, grid, block, ordinal, mangled) VALUES " :
			       "INSERT INTO kernel_keys (ident, name, path, workload, grid, block, ordinal) VALUES ");
			for (; i < n && m < CHUNK; i++) {
				const struct kpt_history_key *k = &run->points[keys[i].point].key;

				if (keys[i].dup || (pass > 0 && keys[i].id))
					continue;
				if (pass != 1) {
					sb_str(&sql, m ? ",?" : "?");
					par[m] = keys[i].ident;
				} else {
					const char **p = par + m * kc;

					placeholders(&sql, m == 0, kc);
					snprintf(num[m].grid, sizeof num[m].grid, "%u,%u,%u", k->grid[0], k->grid[1], k->grid[2]);
					snprintf(num[m].block, sizeof num[m].block, "%u,%u,%u", k->block[0], k->block[1], k->block[2]);
					snprintf(num[m].ordinal, sizeof num[m].ordinal, "%u", k->ordinal);
					p[0] = keys[i].ident;
					p[1] = k->name;
					p[2] = k->path;
					p[3] = k->workload;
					p[4] = num[m].grid;
					p[5] = num[m].block;
					p[6] = num[m].ordinal;
					if (kc == 8)
						p[7] = k->mangled ? k->mangled : "";
				}
				m++;
			}
			sb_str(&sql, pass == 1 ? " ON CONFLICT (ident) DO NOTHING" : ")");
			if (sql.oom)
				rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
			else if (m)
				rc = h->ops->query(h->db, sql.s, (int)(m * (pass == 1 ? (size_t)kc : 1)), par,
						   pass == 1 ? NULL : fill_id, &fill, d);
			free(sql.s);
		}
	}
	free(par);
	free(num);
	for (size_t i = 0; i < n && rc == 0; i++)
		if (!keys[i].dup && !keys[i].id)
			rc = kpt_diag_set(d, KPT_E_IO, "history store: kernel key '%s' was not stored",
					  run->points[keys[i].point].key.name);
	return rc;
}

static void fmt_real(char *buf, size_t cap, double v)
{
	if (isfinite(v))
		snprintf(buf, cap, "%.12g", v);
	else
		buf[0] = '\0';
}

static int insert_session(struct kpt_history *h, const struct kpt_history_session *s,
			  int64_t *id, struct kpt_diag *d)
{
	char added[32], runs[16], mhz[32], temp[32], thr[32], env[16][32], *cols = NULL;
	time_t now = time(NULL);
	struct tm tm;
	const char *par[16 + 16];
	struct sbuf sql = { 0 };
	int rc, npar = 16;

	gmtime_r(&now, &tm);
	strftime(added, sizeof added, "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(runs, sizeof runs, "%u", s->runs);
	fmt_real(mhz, sizeof mhz, s->sm_mhz);
	fmt_real(temp, sizeof temp, s->temp_c);
	fmt_real(thr, sizeof thr, s->throttled_frac);
	par[0] = added;
	par[1] = s->time ? s->time : "";
	par[2] = s->commit ? s->commit : "";
	par[3] = s->branch ? s->branch : "";
	par[4] = s->suite ? s->suite : "";
	par[5] = s->gpu_name ? s->gpu_name : "";
	par[6] = s->gpu_slug ? s->gpu_slug : "";
	par[7] = s->gpu_uuid ? s->gpu_uuid : "";
	par[8] = s->driver ? s->driver : "";
	par[9] = s->cuda ? s->cuda : "";
	par[10] = s->host ? s->host : "";
	par[11] = s->source ? s->source : "";
	par[12] = runs;
	par[13] = mhz[0] ? mhz : NULL;
	par[14] = temp[0] ? temp : NULL;
	par[15] = thr[0] ? thr : NULL;
	*id = 0;
	_Static_assert(sizeof env / sizeof env[0] >= sizeof kpt_history_env_cols / sizeof kpt_history_env_cols[0],
		       "a buffer per diff-env column");
	sb_str(&sql, "INSERT INTO sessions (added, run_time, commit_sha, branch, suite, gpu_name,"
	       " gpu_slug, gpu_uuid, driver, cuda, host, source, runs, sm_mhz, temp_c, throttled_frac");
	if (h->schema >= 3) {
		if (!(cols = kpt_history_env_cols_sql("")))
			sql.oom = 1;
		else
			sb_str(&sql, cols);
		for (size_t i = 0; i < kpt_history_n_env_cols; i++) {
			const struct kpt_hcol *c = &kpt_history_env_cols[i];
			const char *f = (const char *)&s->env + c->off;

			par[npar] = env[i];
			if (c->type == KPT_HCOL_TEXT)
				par[npar] = *(const char *const *)f ? *(const char *const *)f : "";
			else if (c->type == KPT_HCOL_INT)
				snprintf(env[i], sizeof env[i], "%" PRId64, *(const int64_t *)f);
			else {
				fmt_real(env[i], sizeof env[i], *(const double *)f);
				if (!env[i][0])
					par[npar] = NULL;
			}
			npar++;
		}
	}
	sb_str(&sql, ") VALUES (");
	for (int i = 0; i < npar; i++)
		sb_str(&sql, i ? ",?" : "?");
	sb_str(&sql, ") RETURNING id");
	free(cols);
	if (sql.oom) {
		free(sql.s);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	rc = h->ops->query(h->db, sql.s, npar, par, get_int, id, d);
	free(sql.s);
	if (rc == 0 && *id <= 0)
		rc = kpt_diag_set(d, KPT_E_IO, "history store: the new session got no id");
	for (uint32_t i = 0; rc == 0 && i < s->nlabels; i++) {
		char sid[24];
		const char *lp[] = { sid, s->labels[i].name, s->labels[i].value };

		snprintf(sid, sizeof sid, "%" PRId64, *id);
		if (h->schema < 2)
			return kpt_diag_set(d, KPT_E_UNSUPPORTED, "history store schema %d has no labels", h->schema);
		rc = h->ops->query(h->db, "INSERT INTO session_labels (session_id, name, value) VALUES (?,?,?)",
				   3, lp, NULL, NULL, d);
	}
	return rc;
}

/* "v1,v2,..." of a point's run medians. */
static void runs_text(struct sbuf *b, const struct kpt_history_point *p)
{
	char num[32];

	b->n = 0;
	if (b->s)
		b->s[0] = '\0';
	for (uint32_t r = 0; r < p->nruns; r++) {
		snprintf(num, sizeof num, r ? ",%.12g" : "%.12g", p->run_ns[r]);
		sb_str(b, num);
	}
	if (!b->s)
		sb_str(b, "");
}

/* "slot:samples:cycles,..." of a point's run medians (cycles "" unknown). */
static void info_text(struct sbuf *b, const struct kpt_history_point *p)
{
	char num[64];

	b->n = 0;
	if (b->s)
		b->s[0] = '\0';
	for (uint32_t r = 0; p->run_info && r < p->nruns; r++) {
		const struct kpt_history_run_info *ri = &p->run_info[r];
		int n = snprintf(num, sizeof num, r ? ",%u:%u:" : "%u:%u:", ri->slot, ri->samples);

		if (isfinite(ri->cyc) && n > 0 && (size_t)n < sizeof num)
			snprintf(num + n, sizeof num - (size_t)n, "%.12g", ri->cyc);
		sb_str(b, num);
	}
	if (!b->s)
		sb_str(b, "");
}

struct point_text {
	char nruns[16], centre[32], dropped[24];
	struct sbuf runs, info;
};

static int insert_points(struct kpt_history *h, const struct kpt_history_run *run,
			 const struct add_key *keys, size_t n, int64_t sid, struct kpt_diag *d)
{
	int pc = h->schema >= 3 ? POINT_COLS + 2 : POINT_COLS; /* run_info, dropped from schema 3 */
	const char **par = malloc(CHUNK * (POINT_COLS + 2) * sizeof *par);
	struct point_text *pt = calloc(CHUNK, sizeof *pt);
	char (*kid)[24] = malloc(CHUNK * sizeof *kid), sidtxt[24];
	size_t written = 0;
	int rc = 0;

	if (!par || !pt || !kid)
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	snprintf(sidtxt, sizeof sidtxt, "%" PRId64, sid);
	for (size_t i = 0; i < n && rc == 0;) {
		struct sbuf sql = { 0 };
		size_t m = 0, i0 = i;

		sb_str(&sql, pc > POINT_COLS ?
		       "INSERT INTO points (session_id, key_id, runs, centre_ns, run_ns, run_info, dropped) VALUES " :
		       "INSERT INTO points (session_id, key_id, runs, centre_ns, run_ns) VALUES ");
		for (; i < n && m < CHUNK; i++) {
			const struct kpt_history_point *p = &run->points[keys[i].point];
			const char **q = par + m * (size_t)pc;

			if (keys[i].dup)
				continue;
			placeholders(&sql, m == 0, pc);
			snprintf(kid[m], sizeof kid[m], "%" PRId64, keys[i].id);
			snprintf(pt[m].nruns, sizeof pt[m].nruns, "%u", p->nruns);
			snprintf(pt[m].centre, sizeof pt[m].centre, "%.12g", p->centre_ns);
			runs_text(&pt[m].runs, p);
			q[0] = sidtxt;
			q[1] = kid[m];
			q[2] = pt[m].nruns;
			q[3] = pt[m].centre;
			q[4] = pt[m].runs.s;
			if (pc > POINT_COLS) {
				info_text(&pt[m].info, p);
				snprintf(pt[m].dropped, sizeof pt[m].dropped, "%" PRIu64, p->dropped);
				q[5] = p->run_info ? pt[m].info.s : NULL;
				q[6] = pt[m].dropped;
			}
			if (pt[m].runs.oom || pt[m].info.oom)
				sql.oom = 1;
			m++;
		}
		if (sql.oom)
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		else if (m)
			rc = h->ops->query(h->db, sql.s, (int)(m * (size_t)pc), par, NULL, NULL, d);
		free(sql.s);
		kpt_progress_add(i - i0);
		written += m;
		if (rc == 0 && m && h->o.on_chunk)
			h->o.on_chunk(h->o.ctx, written);
	}
	for (size_t i = 0; pt && i < CHUNK; i++) {
		free(pt[i].runs.s);
		free(pt[i].info.s);
	}
	free(par);
	free(pt);
	free(kid);
	return rc;
}

int kpt_history_add(struct kpt_history *h, const struct kpt_history_run *run,
		    int64_t *id, struct kpt_diag *d)
{
	struct add_key *keys = calloc(run->npoints ? run->npoints : 1, sizeof *keys);
	int64_t sid = 0;
	int rc;

	if (id)
		*id = 0;
	if (!keys)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	for (size_t i = 0; i < run->npoints; i++) {
		const struct kpt_history_point *p = &run->points[i];

		if (!(p->centre_ns > 0) || !isfinite(p->centre_ns) || !p->nruns) {
			free(keys);
			return kpt_diag_set(d, KPT_E_INVAL, "kernel '%s' has no positive run median", p->key.name);
		}
		key_ident(&p->key, keys[i].ident);
		keys[i].point = i;
	}
	qsort(keys, run->npoints, sizeof *keys, cmp_add_key);
	for (size_t i = 1; i < run->npoints; i++)
		keys[i].dup = strcmp(keys[i].ident, keys[i - 1].ident) == 0;
	if ((rc = h->ops->exec(h->db, h->ops->begin_write, d)) < 0) {
		free(keys);
		return rc;
	}
	if ((rc = insert_session(h, &run->session, &sid, d)) < 0 ||
	    (rc = key_ids(h, run, keys, run->npoints, d)) < 0 ||
	    (rc = insert_points(h, run, keys, run->npoints, sid, d)) < 0 ||
	    (rc = h->ops->exec(h->db, "COMMIT", d)) < 0)
		rollback(h);
	free(keys);
	if (rc == 0 && id)
		*id = sid;
	return rc;
}
