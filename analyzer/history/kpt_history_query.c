/* kpt_history_query.c - reading the history store: sessions, series per
 * key, the gate's baseline, key lookup (kpt_history.h). Every query is
 * one SQL text for both backends (kpt_history_db.h). */
#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_grow.h"
#include "kpt_history.h"
#include "kpt_history_db.h"

#define SESSION_COLS "s.id, s.added, s.run_time, s.commit_sha, s.branch, s.suite, s.gpu_name," \
	" s.gpu_slug, s.gpu_uuid, s.driver, s.cuda, s.host, s.source, s.runs, s.sm_mhz, s.temp_c," \
	" s.throttled_frac"
/* Each field as two parameters: '1' when any value matches, and the value. */
#define SESSION_WHERE "(? = '1' OR s.suite = ?) AND (? = '1' OR s.gpu_slug = ?) AND (? = '1' OR s.branch = ?)"

struct growth {
	void *p;
	size_t n, cap, size;
};

static void *grow(struct growth *g)
{
	if (kpt_grow(&g->p, &g->cap, g->n + 1, g->size) < 0)
		return NULL;
	return (char *)g->p + g->size * g->n++;
}

struct qctx {
	struct kpt_history_set *set;
	struct growth sessions;     /* struct kpt_history_session */
	struct growth keys;         /* struct kpt_history_series */
	int with_runs;
	int schema;                 /* the store's: 3 reads the diff env, mangled names, run info */
	const char *where;          /* the store, for messages (password masked) */
	struct kpt_diag *d;
};

/* Every value read from a store came from whoever could write it: before
 * it sizes an allocation, indexes an array or reaches the decision rule it
 * is checked here, and a bad one is a one-line KPT_E_FORMAT naming the
 * store, the row and the value. */
#define BAD_ROW(q, fmt, ...) kpt_diag_set((q)->d, KPT_E_FORMAT, "history store '%s': " fmt, (q)->where, __VA_ARGS__)

static int bad_int(struct qctx *q, const char *row, int64_t id, const char *col, int64_t v, int64_t lo, int64_t hi)
{
	return BAD_ROW(q, "%s %" PRId64 ": %s %" PRId64 " is out of range (%" PRId64 " to %" PRId64 ")",
		       row, id, col, v, lo, hi);
}

/* v is NAN (unknown) or finite in [lo, hi]. */
static int real_ok(double v, double lo, double hi)
{
	return isnan(v) || (isfinite(v) && v >= lo && v <= hi);
}

static int bad_real(struct qctx *q, const char *row, int64_t id, const char *col, double v)
{
	return BAD_ROW(q, "%s %" PRId64 ": %s %g is out of range", row, id, col, v);
}

/* The session's numbers the gate and the reports compute with. */
static int check_session(struct qctx *q, const struct kpt_history_session *s, int64_t runs)
{
	const struct kpt_history_diff_env *e = &s->env;
	const struct { const char *col; int64_t v; } ints[] = {
		{ "kernels", e->kernels }, { "samples", e->samples }, { "skipped", e->skipped },
		{ "outside", e->outside }, { "dropped_throttle", e->dropped_throttle },
		{ "dropped_clock", e->dropped_clock }, { "env_samples", e->env_samples },
	};
	const struct { const char *col; double v, lo, hi; } reals[] = {
		{ "sm_mhz", s->sm_mhz, 0, 1e6 }, { "temp_c", s->temp_c, -300, 1e4 },
		{ "throttled_frac", s->throttled_frac, 0, 1 }, { "copy_gbps", e->copy_gbps, 0, 1e9 },
		{ "bf16_tflops", e->bf16_tflops, 0, 1e9 }, { "sm_mhz_min", e->sm_mhz_min, 0, 1e6 },
		{ "sm_mhz_max", e->sm_mhz_max, 0, 1e6 }, { "temp_c_max", e->temp_c_max, -300, 1e4 },
		{ "capped_frac", e->capped_frac, 0, 1 },
	};

	if (runs < 0 || runs > KPT_HISTORY_MAX_RUNS)
		return bad_int(q, "session", s->id, "runs", runs, 0, KPT_HISTORY_MAX_RUNS);
	if (e->iterated < 0 || e->iterated > 1)
		return bad_int(q, "session", s->id, "iterated", e->iterated, 0, 1);
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
		if (ints[i].v < 0)
			return bad_int(q, "session", s->id, ints[i].col, ints[i].v, 0, INT64_MAX);
	for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
		if (!real_ok(reals[i].v, reals[i].lo, reals[i].hi))
			return bad_real(q, "session", s->id, reals[i].col, reals[i].v);
	return 0;
}

static const char *rdup(struct kpt_arena *a, const struct kpt_hdb_row *row, int col)
{
	const char *s = row->ops->text(row, col);

	return kpt_arena_strndup(a, s, strlen(s));
}

static int read_session(void *ctx, const struct kpt_hdb_row *row)
{
	struct qctx *q = ctx;
	struct kpt_history_session *s = grow(&q->sessions);
	struct kpt_arena *a = &q->set->arena;
	const char **str[] = { &s->added, &s->time, &s->commit, &s->branch, &s->suite, &s->gpu_name,
			       &s->gpu_slug, &s->gpu_uuid, &s->driver, &s->cuda, &s->host, &s->source };
	int64_t runs;

	if (!s)
		return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	memset(s, 0, sizeof *s);
	s->id = row->ops->integer(row, 0);
	for (int i = 0; i < 12; i++)
		if (!(*str[i] = rdup(a, row, i + 1)))
			return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	runs = row->ops->integer(row, 13);
	s->runs = (uint32_t)(runs >= 0 && runs <= KPT_HISTORY_MAX_RUNS ? runs : 0);
	s->sm_mhz = row->ops->real(row, 14);
	s->temp_c = row->ops->real(row, 15);
	s->throttled_frac = row->ops->real(row, 16);
	s->keys = (uint32_t)row->ops->integer(row, 17); /* count(*): the database's own */
	if (q->schema >= 3) {
		if (kpt_history_env_read(row, 18, a, &s->env) < 0)
			return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	} else {
		s->env.boot = "";
		s->env.sm_mhz_min = s->env.sm_mhz_max = s->env.temp_c_max = NAN;
	}
	return check_session(q, s, runs);
}

static void parse3(const char *s, uint32_t v[3])
{
	char *end;

	for (int i = 0; i < 3; i++) {
		v[i] = (uint32_t)strtoul(s, &end, 10);
		s = *end == ',' ? end + 1 : end;
	}
}

static int read_key(void *ctx, const struct kpt_hdb_row *row)
{
	struct qctx *q = ctx;
	struct kpt_history_series *se = grow(&q->keys);
	struct kpt_arena *a = &q->set->arena;
	int64_t ord;

	if (!se)
		return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	memset(se, 0, sizeof *se);
	se->key.id = row->ops->integer(row, 0);
	se->key.name = rdup(a, row, 1);
	se->key.path = rdup(a, row, 2);
	se->key.workload = rdup(a, row, 3);
	parse3(row->ops->text(row, 4), se->key.grid);
	parse3(row->ops->text(row, 5), se->key.block);
	ord = row->ops->integer(row, 6);
	if (ord < 0 || ord > UINT32_MAX)
		return bad_int(q, "kernel key", se->key.id, "ordinal", ord, 0, UINT32_MAX);
	se->key.ordinal = (uint32_t)ord;
	se->key.mangled = q->schema >= 3 ? rdup(a, row, 7) : "";
	if (!se->key.name || !se->key.mangled || !se->key.path || !se->key.workload)
		return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	return 0;
}

/* Points arrive in any order; each series grows in malloc'd arrays (moved
 * into the arena at the end). */
struct pt_grow {
	struct growth sess, centre, nruns, runs, info, dropped;
};

struct pctx {
	struct qctx *q;
	struct pt_grow *g;          /* [nseries] */
};

static size_t find_by_id(const void *base, size_t n, size_t size, size_t off, int64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int64_t v;

		memcpy(&v, (const char *)base + mid * size + off, sizeof v);
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static double *parse_runs(struct kpt_arena *a, const char *s, uint32_t *n)
{
	uint32_t k = 1;
	double *v;
	char *end;

	for (const char *p = s; *p; p++)
		k += *p == ',';
	v = kpt_arena_alloc(a, k * sizeof *v);
	if (!v)
		return NULL;
	*n = 0;
	while (*s) {
		v[(*n)++] = strtod(s, &end);
		if (end == s)
			break;
		s = *end == ',' ? end + 1 : end;
	}
	return v;
}

/* A decimal number at s; UINT32_MAX when larger or negative, so that
 * the checks see it out of range rather than wrapped. */
static uint32_t u32_sat(const char *s, char **end)
{
	const char *p = s;
	unsigned long long v;

	while (isspace((unsigned char)*p))
		p++;
	v = strtoull(s, end, 10);
	return *p == '-' && v ? UINT32_MAX : v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

/* The run info text of n run medians ("slot:samples:cycles,..."); NULL
 * (and *bad = 0) when the point has none (stored before schema 3), *bad
 * = 1 when out of memory. A malformed entry reads as slot r, 1 sample. */
static struct kpt_history_run_info *parse_info(struct kpt_arena *a, const char *s, uint32_t n, int null,
					       int *bad)
{
	struct kpt_history_run_info *v;
	char *end;

	*bad = 0;
	if (null)
		return NULL;
	if (!(v = kpt_arena_alloc(a, (n ? n : 1) * sizeof *v))) {
		*bad = 1;
		return NULL;
	}
	for (uint32_t r = 0; r < n; r++) {
		v[r] = (struct kpt_history_run_info){ r, 1, NAN };
		if (!*s)
			continue;
		v[r].slot = u32_sat(s, &end);
		s = *end == ':' ? end + 1 : end;
		v[r].samples = u32_sat(s, &end);
		s = *end == ':' ? end + 1 : end;
		if (*s && *s != ',') {
			v[r].cyc = strtod(s, &end);
			s = end;
		}
		while (*s && *s != ',')
			s++;
		if (*s == ',')
			s++;
	}
	return v;
}

/* A point's numbers: positive finite times, run slots a session can
 * have, cycle medians positive or unknown. */
static int check_point(struct qctx *q, int64_t sid, int64_t kid, double centre, const double *runs, uint32_t nr,
		       const struct kpt_history_run_info *ri, int64_t dropped)
{
	const char *what = NULL;
	double v = centre;

	if (!(isfinite(centre) && centre > 0))
		what = "centre_ns";
	else if (nr == 0 || nr > KPT_HISTORY_MAX_RUNS)
		return BAD_ROW(q, "point (session %" PRId64 ", key %" PRId64 "): %u run medians (1 to %d)",
			       sid, kid, nr, KPT_HISTORY_MAX_RUNS);
	else if (dropped < 0)
		return bad_int(q, "point of session", sid, "dropped", dropped, 0, INT64_MAX);
	for (uint32_t r = 0; !what && r < nr; r++) {
		if (!(isfinite(runs[r]) && runs[r] > 0))
			what = "run_ns", v = runs[r];
		else if (ri && ri[r].slot >= KPT_HISTORY_MAX_RUNS)
			return BAD_ROW(q, "point (session %" PRId64 ", key %" PRId64 "): run_info slot %u is out of range (0 to %d)",
				       sid, kid, ri[r].slot, KPT_HISTORY_MAX_RUNS - 1);
		else if (ri && !real_ok(ri[r].cyc, 0, INFINITY))
			what = "run_info cycles", v = ri[r].cyc;
	}
	if (what)
		return BAD_ROW(q, "point (session %" PRId64 ", key %" PRId64 "): %s %g is not a positive time",
			       sid, kid, what, v);
	return 0;
}

static int read_point(void *ctx, const struct kpt_hdb_row *row)
{
	struct pctx *p = ctx;
	struct qctx *q = p->q;
	int64_t sid = row->ops->integer(row, 0), kid = row->ops->integer(row, 1);
	size_t si = find_by_id(q->sessions.p, q->sessions.n, sizeof(struct kpt_history_session),
			       offsetof(struct kpt_history_session, id), sid);
	size_t ki = find_by_id(q->keys.p, q->keys.n, sizeof(struct kpt_history_series),
			       offsetof(struct kpt_history_series, key.id), kid);
	struct pt_grow *g;
	uint32_t *ps;
	double *pc;
	int64_t drop;
	int rc;

	if (si >= q->sessions.n || ((struct kpt_history_session *)q->sessions.p)[si].id != sid ||
	    ki >= q->keys.n || ((struct kpt_history_series *)q->keys.p)[ki].key.id != kid)
		return 0; /* a session or key added after the first queries */
	g = &p->g[ki];
	ps = grow(&g->sess);
	pc = grow(&g->centre);
	if (!ps || !pc)
		return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	*ps = (uint32_t)si;
	*pc = row->ops->real(row, 2);
	if (q->with_runs) {
		uint32_t *nr = grow(&g->nruns);
		double **rv = grow(&g->runs);

		struct kpt_history_run_info **ri = grow(&g->info);
		uint64_t *dr = grow(&g->dropped);
		int v3 = q->schema >= 3, bad;

		if (!nr || !rv || !ri || !dr || !(*rv = parse_runs(&q->set->arena, row->ops->text(row, 3), nr)))
			return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
		*ri = parse_info(&q->set->arena, v3 ? row->ops->text(row, 4) : "", *nr,
				 !v3 || row->ops->is_null(row, 4), &bad);
		drop = v3 ? row->ops->integer(row, 5) : 0;
		*dr = (uint64_t)drop;
		if (bad)
			return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
		if ((rc = check_point(q, sid, kid, *pc, *rv, *nr, *ri, drop)) < 0)
			return rc;
	} else if (!(isfinite(*pc) && *pc > 0)) {
		return BAD_ROW(q, "point (session %" PRId64 ", key %" PRId64 "): centre_ns %g is not a positive time",
			       sid, kid, *pc);
	}
	return 0;
}

struct sort_pt {
	uint32_t sess, nruns;
	double centre;
	double *runs;
	struct kpt_history_run_info *info;
	uint64_t dropped;
};

static int cmp_sort_pt(const void *a, const void *b)
{
	const struct sort_pt *x = a, *y = b;

	return (x->sess > y->sess) - (x->sess < y->sess);
}

/* Moves one key's points into the arena, ordered by session. */
static int settle(struct qctx *q, struct kpt_history_series *se, struct pt_grow *g)
{
	struct kpt_arena *a = &q->set->arena;
	uint32_t *sess = g->sess.p, *nr = g->nruns.p;
	double *c = g->centre.p, **rv = g->runs.p;
	struct kpt_history_run_info **ri = g->info.p;
	uint64_t *dr = g->dropped.p;
	size_t n = g->sess.n;
	int sorted = 1;

	se->n = (uint32_t)n;
	se->sess = kpt_arena_alloc(a, (n ? n : 1) * sizeof *se->sess);
	se->centre_ns = kpt_arena_alloc(a, (n ? n : 1) * sizeof *se->centre_ns);
	if (q->with_runs) {
		se->nruns = kpt_arena_alloc(a, (n ? n : 1) * sizeof *se->nruns);
		se->run_ns = kpt_arena_alloc(a, (n ? n : 1) * sizeof *se->run_ns);
		se->run_info = kpt_arena_alloc(a, (n ? n : 1) * sizeof *se->run_info);
		se->dropped = kpt_arena_alloc(a, (n ? n : 1) * sizeof *se->dropped);
		if (!se->nruns || !se->run_ns || !se->run_info || !se->dropped)
			return KPT_E_NOMEM;
	}
	if (!se->sess || !se->centre_ns)
		return KPT_E_NOMEM;
	for (size_t i = 1; i < n; i++)
		sorted &= sess[i - 1] < sess[i];
	if (sorted) {
		memcpy(se->sess, sess, n * sizeof *sess);
		memcpy(se->centre_ns, c, n * sizeof *c);
		if (q->with_runs) {
			memcpy(se->nruns, nr, n * sizeof *nr);
			memcpy(se->run_ns, rv, n * sizeof *rv);
			memcpy(se->run_info, ri, n * sizeof *ri);
			memcpy(se->dropped, dr, n * sizeof *dr);
		}
		return 0;
	}
	{
		struct sort_pt *t = malloc(n * sizeof *t);

		if (!t)
			return KPT_E_NOMEM;
		for (size_t i = 0; i < n; i++)
			t[i] = (struct sort_pt){ sess[i], nr ? nr[i] : 0, c[i], rv ? rv[i] : NULL, ri ? ri[i] : NULL,
						 dr ? dr[i] : 0 };
		qsort(t, n, sizeof *t, cmp_sort_pt);
		for (size_t i = 0; i < n; i++) {
			se->sess[i] = t[i].sess;
			se->centre_ns[i] = t[i].centre;
			if (q->with_runs) {
				se->nruns[i] = t[i].nruns;
				se->run_ns[i] = t[i].runs;
				se->run_info[i] = t[i].info;
				se->dropped[i] = t[i].dropped;
			}
		}
		free(t);
	}
	return 0;
}

static int read_label(void *ctx, const struct kpt_hdb_row *row)
{
	struct qctx *q = ctx;
	struct kpt_history_session *ss = q->set->sessions;
	int64_t sid = row->ops->integer(row, 0);
	size_t si = find_by_id(ss, q->set->nsessions, sizeof *ss, offsetof(struct kpt_history_session, id), sid);
	struct kpt_history_label *l;

	if (si >= q->set->nsessions || ss[si].id != sid)
		return 0;
	/* labels of a session arrive together (ORDER BY): grow in place */
	l = kpt_arena_alloc(&q->set->arena, (ss[si].nlabels + 1) * sizeof *l);
	if (!l)
		return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	if (ss[si].nlabels)
		memcpy(l, ss[si].labels, ss[si].nlabels * sizeof *l);
	l[ss[si].nlabels].name = rdup(&q->set->arena, row, 1);
	l[ss[si].nlabels].value = rdup(&q->set->arena, row, 2);
	if (!l[ss[si].nlabels].name || !l[ss[si].nlabels].value)
		return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	ss[si].labels = l;
	ss[si].nlabels++;
	return 0;
}

static void filter_params(const struct kpt_history_filter *f, const char **par)
{
	const char *v[3] = { f ? f->suite : NULL, f ? f->gpu_slug : NULL, f ? f->branch : NULL };

	for (int i = 0; i < 3; i++) {
		par[2 * i] = v[i] ? "0" : "1";
		par[2 * i + 1] = v[i] ? v[i] : "";
	}
}

/* Reads the sessions of f into q (ascending id); with last, only the last. */
static int query_sessions(struct kpt_history *h, const struct kpt_history_filter *f,
			  struct qctx *q, int count_points)
{
	const char *par[7];
	char last[24], *env = h->schema >= 3 ? kpt_history_env_cols_sql("s.") : NULL, *sql;
	size_t n;
	int rc;

	if (h->schema >= 3 && !env)
		return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	q->schema = h->schema;
	q->where = h->shown;
	filter_params(f, par);
	snprintf(last, sizeof last, "%" PRId64, f && f->last ? (int64_t)f->last : INT64_MAX);
	par[6] = last;
	n = strlen(env ? env : "") + 512 + sizeof SESSION_COLS + sizeof SESSION_WHERE;
	if (!(sql = malloc(n))) {
		free(env);
		return kpt_diag_set(q->d, KPT_E_NOMEM, "out of memory");
	}
	snprintf(sql, n, "SELECT * FROM (SELECT " SESSION_COLS ", %s AS npoints%s FROM sessions s WHERE "
		 SESSION_WHERE " ORDER BY s.id DESC LIMIT ?) t ORDER BY id",
		 count_points ? "(SELECT count(*) FROM points p WHERE p.session_id = s.id)" : "0",
		 env ? env : "");
	rc = h->ops->query(h->db, sql, 7, par, read_session, q, q->d);
	free(sql);
	free(env);
	return rc;
}

static int set_create(struct kpt_history_set **out, struct qctx *q, struct kpt_diag *d)
{
	*out = calloc(1, sizeof **out);
	if (!*out)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	kpt_arena_init(&(*out)->arena);
	memset(q, 0, sizeof *q);
	q->set = *out;
	q->sessions.size = sizeof(struct kpt_history_session);
	q->keys.size = sizeof(struct kpt_history_series);
	q->d = d;
	return 0;
}

/* Moves q's growing arrays into the set. */
static int set_finish(struct qctx *q)
{
	struct kpt_history_set *s = q->set;

	s->nsessions = q->sessions.n;
	s->sessions = kpt_arena_alloc(&s->arena, (s->nsessions ? s->nsessions : 1) * sizeof *s->sessions);
	if (!s->sessions)
		return KPT_E_NOMEM;
	if (s->nsessions)
		memcpy(s->sessions, q->sessions.p, s->nsessions * sizeof *s->sessions);
	free(q->sessions.p);
	q->sessions.p = NULL;
	return 0;
}

static int query_labels(struct kpt_history *h, const struct kpt_history_filter *f, struct qctx *q)
{
	const char *par[6];

	if (h->schema < 2 || !q->set->nsessions)
		return 0;
	filter_params(f, par);
	return h->ops->query(h->db, "SELECT l.session_id, l.name, l.value FROM session_labels l"
			     " JOIN sessions s ON s.id = l.session_id WHERE " SESSION_WHERE
			     " ORDER BY l.session_id, l.name", 6, par, read_label, q, q->d);
}

int kpt_history_sessions(struct kpt_history *h, const struct kpt_history_filter *f,
			 struct kpt_history_set **out, struct kpt_diag *d)
{
	struct qctx q;
	int rc = set_create(out, &q, d);

	if (rc < 0)
		return rc;
	if ((rc = query_sessions(h, f, &q, 1)) == 0 && (rc = set_finish(&q)) == 0)
		rc = query_labels(h, f, &q);
	free(q.sessions.p);
	if (rc < 0) {
		kpt_history_set_destroy(*out);
		*out = NULL;
		return d && d->code ? rc : kpt_diag_set(d, rc, "out of memory");
	}
	return 0;
}

#define KEY_COLS "k.id, k.name, k.path, k.workload, k.grid, k.block, k.ordinal"
#define KEY_COLS3 KEY_COLS ", k.mangled"
#define POINTS_SQL(extra) "SELECT p.session_id, p.key_id, p.centre_ns" extra \
	" FROM points p JOIN sessions s ON s.id = p.session_id WHERE " SESSION_WHERE \
	" AND s.id >= ? AND (? = '0' OR p.key_id = ?)"

int kpt_history_query(struct kpt_history *h, const struct kpt_history_filter *f,
		      struct kpt_history_set **out, struct kpt_diag *d)
{
	struct qctx q;
	struct pctx pc = { &q, NULL };
	const char *par[9];
	char kid[24], first[24];
	int rc = set_create(out, &q, d);

	if (rc < 0)
		return rc;
	q.with_runs = f && f->with_runs;
	if ((rc = query_sessions(h, f, &q, 0)) < 0)
		goto out;
	snprintf(kid, sizeof kid, "%" PRId64, f && f->key_id ? f->key_id : 0);
	par[0] = par[1] = kid;
	par[2] = par[3] = f && f->workload ? f->workload : "";
	par[4] = f && f->workload ? "1" : "0";
#define KEYS_SQL(cols) "SELECT " cols " FROM kernel_keys k WHERE (? = '0' OR k.id = ?)" \
	" AND (k.workload = ? OR ? = '' AND ? = '0') ORDER BY k.id"
	rc = h->ops->query(h->db, q.schema >= 3 ? KEYS_SQL(KEY_COLS3) : KEYS_SQL(KEY_COLS), 5,
			   par, read_key, &q, d);
	if (rc < 0)
		goto out;
	pc.g = calloc(q.keys.n ? q.keys.n : 1, sizeof *pc.g);
	if (!pc.g) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < q.keys.n; i++) {
		pc.g[i].sess.size = sizeof(uint32_t);
		pc.g[i].centre.size = sizeof(double);
		pc.g[i].nruns.size = sizeof(uint32_t);
		pc.g[i].runs.size = sizeof(double *);
		pc.g[i].info.size = sizeof(struct kpt_history_run_info *);
		pc.g[i].dropped.size = sizeof(uint64_t);
	}
	if (q.sessions.n && q.keys.n) {
		filter_params(f, par);
		snprintf(first, sizeof first, "%" PRId64, ((struct kpt_history_session *)q.sessions.p)[0].id);
		par[6] = first;
		par[7] = par[8] = kid;
		rc = h->ops->query(h->db, !q.with_runs ? POINTS_SQL("") : q.schema >= 3 ?
				   POINTS_SQL(", p.run_ns, p.run_info, p.dropped") : POINTS_SQL(", p.run_ns"),
				   9, par, read_point, &pc, d);
		if (rc < 0)
			goto out;
	}
	if ((rc = set_finish(&q)) < 0)
		goto out;
	/* keep the keys that have points */
	{
		struct kpt_history_series *all = q.keys.p;
		size_t m = 0;

		q.set->series = kpt_arena_alloc(&q.set->arena, (q.keys.n ? q.keys.n : 1) * sizeof *all);
		if (!q.set->series) {
			rc = KPT_E_NOMEM;
			goto out;
		}
		for (size_t i = 0; i < q.keys.n; i++) {
			if (!pc.g[i].sess.n)
				continue;
			q.set->series[m] = all[i];
			if ((rc = settle(&q, &q.set->series[m], &pc.g[i])) < 0)
				goto out;
			m++;
		}
		q.set->nseries = m;
	}
	rc = query_labels(h, f, &q);
out:
	for (size_t i = 0; pc.g && i < q.keys.n; i++) {
		free(pc.g[i].sess.p);
		free(pc.g[i].centre.p);
		free(pc.g[i].nruns.p);
		free(pc.g[i].runs.p);
		free(pc.g[i].info.p);
		free(pc.g[i].dropped.p);
	}
	free(pc.g);
	free(q.sessions.p);
	free(q.keys.p);
	if (rc < 0) {
		kpt_history_set_destroy(*out);
		*out = NULL;
		return d && d->code ? rc : kpt_diag_set(d, rc, "out of memory");
	}
	return 0;
}

int kpt_history_baseline(struct kpt_history *h, const char *suite, const char *gpu_slug,
			 const char *branch, uint32_t n, struct kpt_history_set **out,
			 struct kpt_diag *d)
{
	struct kpt_history_filter f = { .suite = suite, .gpu_slug = gpu_slug, .branch = branch,
					.last = n, .with_runs = 1 };

	if (!n)
		return kpt_diag_set(d, KPT_E_INVAL, "a baseline needs at least one session");
	return kpt_history_query(h, &f, out, d);
}

int kpt_history_find_keys(struct kpt_history *h, const char *name,
			  struct kpt_history_set **out, struct kpt_diag *d)
{
	struct qctx q;
	char *end;
	int numeric = name[0] && (strtoll(name, &end, 10), *end == '\0');
	int rc = set_create(out, &q, d);
	const char *par[] = { name };

	if (rc < 0)
		return rc;
	q.schema = h->schema;
	q.where = h->shown;
	rc = h->ops->query(h->db, numeric ? (q.schema >= 3 ? "SELECT " KEY_COLS3 " FROM kernel_keys k WHERE k.id = ?" :
					     "SELECT " KEY_COLS " FROM kernel_keys k WHERE k.id = ?") :
			   q.schema >= 3 ? "SELECT " KEY_COLS3 " FROM kernel_keys k WHERE k.name = ? ORDER BY k.id" :
			   "SELECT " KEY_COLS " FROM kernel_keys k WHERE k.name = ? ORDER BY k.id", 1, par,
			   read_key, &q, d);
	if (rc == 0 && !q.keys.n && !numeric) {
		/* a substring, taken literally: % _ and the escape \ escaped */
		char *lit = malloc(2 * strlen(name) + 1), *o = lit;

		if (!lit) {
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		} else {
			for (const char *p = name; *p; p++) {
				if (*p == '%' || *p == '_' || *p == '\\')
					*o++ = '\\';
				*o++ = *p;
			}
			*o = '\0';
			par[0] = lit;
			rc = h->ops->query(h->db, q.schema >= 3 ? "SELECT " KEY_COLS3 " FROM kernel_keys k WHERE"
					   " lower(k.name) LIKE '%' || lower(?) || '%' ESCAPE '\\' ORDER BY k.id" :
					   "SELECT " KEY_COLS " FROM kernel_keys k WHERE"
					   " lower(k.name) LIKE '%' || lower(?) || '%' ESCAPE '\\' ORDER BY k.id", 1, par,
					   read_key, &q, d);
			free(lit);
		}
	}
	if (rc == 0) {
		q.set->nseries = q.keys.n;
		q.set->series = kpt_arena_alloc(&q.set->arena, (q.keys.n ? q.keys.n : 1) * sizeof *q.set->series);
		if (!q.set->series)
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		else if (q.keys.n)
			memcpy(q.set->series, q.keys.p, q.keys.n * sizeof *q.set->series);
	}
	free(q.keys.p);
	if (rc < 0) {
		kpt_history_set_destroy(*out);
		*out = NULL;
	}
	return rc;
}

void kpt_history_set_destroy(struct kpt_history_set *s)
{
	if (!s)
		return;
	kpt_arena_release(&s->arena);
	free(s);
}
