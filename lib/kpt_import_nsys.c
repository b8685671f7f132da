/* kpt_import_nsys.c - Nsight Systems SQLite export (`nsys export --type
 * sqlite`): tables CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY, _MEMSET, _RUNTIME,
 * NVTX_EVENTS, TARGET_INFO_GPU and StringIds, read with SQLite (read-only).
 *
 * Tables are created lazily by nsys, so a missing table is no error (a
 * trace without memsets has none); columns that changed between nsys
 * versions are looked up first (PRAGMA table_info) and the query uses what
 * is there. docs/import.md lists the columns used.
 *
 * Why here and not in analyzer/: importers are lib/'s (one file per
 * format, docs/architecture.md); libkpt links SQLite when the build found it, which it
 * already does for the history store. Without SQLite this file compiles to
 * a function that says so.
 */
#include "kpt_import_int.h"
#include "kpt_text.h"

#ifndef KPT_HAVE_SQLITE

int kpt_import_nsys(struct kpt_import_ctx *c, struct kpt_diag *d)
{
	kpt_diag_set(d, KPT_E_UNSUPPORTED, "cannot import '%s': this kptprof was built without SQLite", c->path);
	return kpt_diag_hint(d, "rebuild with libsqlite3-dev installed to read Nsight Systems exports");
}

#else

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* globalPid / globalTid: pid in bits 24..47, tid in bits 0..23 */
#define NSYS_PID(g) ((uint32_t)(((uint64_t)(g) >> 24) & 0xffffff))
#define NSYS_PROC_KEY(g) ((uint64_t)(g) & ~(uint64_t)0xffffff)

/* NVTX_EVENTS.eventType values used */
enum { NSYS_NVTX_MARK = 34, NSYS_NVTX_PUSHPOP = 59, NSYS_NVTX_STARTEND = 60, NSYS_NVTX_DOMAIN = 75 };

/* Limits for a file from someone else (docs/security.md "Imported traces").
 * A real export names a handful of GPUs; more are refused, so that a file
 * cannot declare a device per kernel. */
#define NSYS_MAX_DEVICES 64
/* One value (a kernel name) of at most this many bytes. */
#define NSYS_MAX_VALUE (16 << 20)
/* SQLite's heap during an import: 256 MiB + 4 bytes per byte of export.
 * ORDER BY start sorts in memory (temp_store=MEMORY), never in temp files. */
#define NSYS_HEAP_BASE ((int64_t)256 << 20)
/* Wall-clock budget: 30 s + 2 s per MiB of export. */
#define NSYS_TIME_BASE_S 30
#define NSYS_TIME_PER_MIB_S 2
/* A GPU activity longer than a day is no real record. */
#define NSYS_MAX_DURATION_NS (INT64_C(86400) * 1000000000)

/* CUpti_ActivityMemcpyKind -> kpt_memop_kind */
static const uint32_t copy_kinds[] = {
	[1] = KPT_MEMCPY_HTOD, [2] = KPT_MEMCPY_DTOH, [3] = KPT_MEMCPY_OTHER, [4] = KPT_MEMCPY_OTHER,
	[5] = KPT_MEMCPY_OTHER, [6] = KPT_MEMCPY_OTHER, [7] = KPT_MEMCPY_OTHER, [8] = KPT_MEMCPY_DTOD,
	[9] = KPT_MEMCPY_HTOH, [10] = KPT_MEMCPY_PTOP,
};

/* CUpti_ActivityMemoryKind -> kpt_mem_kind (the static kinds fold in) */
static const uint32_t mem_kinds[] = {
	[1] = KPT_MEM_PAGEABLE, [2] = KPT_MEM_PINNED, [3] = KPT_MEM_DEVICE, [4] = KPT_MEM_ARRAY,
	[5] = KPT_MEM_MANAGED, [6] = KPT_MEM_DEVICE, [7] = KPT_MEM_MANAGED,
};

/* Open-addressing map from a 64-bit key to a 64-bit value: O(1) expected
 * per lookup and insert. The hash is seeded per import so that a file
 * cannot choose keys that collide. */
struct idmap {
	uint64_t *key, *val;
	unsigned char *used;
	size_t cap, n;              /* cap a power of two (or 0), n <= cap / 2 */
	uint64_t seed;
};

static size_t idmap_slot(const struct idmap *m, uint64_t key)
{
	uint64_t x = key ^ m->seed;

	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	x ^= x >> 33;
	return (size_t)x & (m->cap - 1);
}

/* The value of key, NULL when absent. */
static uint64_t *idmap_get(const struct idmap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = idmap_slot(m, key);; i = (i + 1) & (m->cap - 1)) {
		if (!m->used[i])
			return NULL;
		if (m->key[i] == key)
			return &m->val[i];
	}
}

static void idmap_release(struct idmap *m)
{
	free(m->key);
	free(m->val);
	free(m->used);
	m->key = m->val = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
}

/* Inserts key (value 0) unless present; *slot its value. 1 inserted, 0
 * present, KPT_E_NOMEM. */
static int idmap_put(struct idmap *m, uint64_t key, uint64_t **slot)
{
	size_t i;

	if ((*slot = idmap_get(m, key)))
		return 0;
	if (m->n + 1 > m->cap / 2) {
		struct idmap g = { .cap = m->cap ? m->cap * 2 : 256, .seed = m->seed, .n = m->n };

		g.key = malloc(g.cap * sizeof *g.key);
		g.val = malloc(g.cap * sizeof *g.val);
		g.used = calloc(g.cap, 1);
		if (!g.key || !g.val || !g.used) {
			idmap_release(&g);
			return KPT_E_NOMEM;
		}
		for (size_t j = 0; j < m->cap; j++)
			if (m->used[j]) {
				for (i = idmap_slot(&g, m->key[j]); g.used[i]; i = (i + 1) & (g.cap - 1))
					;
				g.used[i] = 1;
				g.key[i] = m->key[j];
				g.val[i] = m->val[j];
			}
		idmap_release(m);
		*m = g;
	}
	for (i = idmap_slot(m, key); m->used[i]; i = (i + 1) & (m->cap - 1))
		;
	m->used[i] = 1;
	m->key[i] = key;
	m->val[i] = 0;
	m->n++;
	*slot = &m->val[i];
	return 1;
}

struct proc {
	uint64_t key;               /* globalPid */
	uint32_t index;             /* process index in the recording */
	int64_t lo, hi;
};

/* A row of TARGET_INFO_GPU, by its CUDA ordinal. */
struct gpu_info {
	uint32_t ordinal, sm_count, cc_major, cc_minor;
	uint64_t mem_bytes, l2_bytes;
	char *name, *uuid;          /* owned, NULL unknown */
};

struct nsys {
	struct kpt_import_ctx *c;
	sqlite3 *db;
	struct proc *procs;
	size_t nprocs, capprocs;
	struct idmap proc_of;       /* globalPid key -> index into procs */
	struct { uint32_t ordinal, index; } devs[NSYS_MAX_DEVICES];
	size_t ndevs;
	struct gpu_info gpus[NSYS_MAX_DEVICES];
	size_t ngpus;
	struct idmap string_of;     /* StringIds.id -> offset into strings + 1 */
	char *strings;              /* the StringIds values, NUL-terminated */
	size_t nstrings, capstrings;
	char *cols;                 /* "|col|col|...|" of the table last checked */
	uint64_t nread;             /* rows read so far, all tables */
	struct timespec deadline;
	int timed_out;
	struct kpt_import_rows rows;
};

static int sql_fail(struct nsys *n, const char *what, struct kpt_diag *d)
{
	if (n->timed_out)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': %s: took longer than %llu s", n->c->path,
				    what, (unsigned long long)(NSYS_TIME_BASE_S + NSYS_TIME_PER_MIB_S * (n->c->len >> 20)));
	/* SQLite's message may quote the file's schema: one line, cut short */
	char *msg = kpt_text_dup(KPT_TEXT_TERM, n->db ? sqlite3_errmsg(n->db) : "cannot open");
	int rc;

	if (msg && strlen(msg) > 200)
		strcpy(msg + 197, "...");
	rc = kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': %s: %s", n->c->path, what, msg ? msg : "out of memory");
	free(msg);
	return rc;
}

static int oom(struct nsys *n, struct kpt_diag *d)
{
	return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", n->c->path);
}

/* SQLite's progress handler: nonzero interrupts the statement. */
static int over_time(void *arg)
{
	struct nsys *n = arg;
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec > n->deadline.tv_sec ||
	    (now.tv_sec == n->deadline.tv_sec && now.tv_nsec > n->deadline.tv_nsec))
		n->timed_out = 1;
	return n->timed_out;
}

/* Whether `table` is there to read: 1 a plain table (its column names then
 * in n->cols), 0 absent. Absent means no row of that name in
 * sqlite_schema; anything else that goes wrong (a locked or corrupt file)
 * is an error, never "absent". A view, a virtual table or a table with
 * generated columns is refused: reading it would run SQL the file
 * carries. */
static int check_table(struct nsys *n, const char *table, struct kpt_diag *d)
{
	sqlite3_stmt *st;
	char sql[160], *p;
	size_t len = 2;
	int rc, kind = 0;

	free(n->cols);
	n->cols = NULL;
	if (sqlite3_prepare_v2(n->db, "SELECT type, sql FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE", -1, &st,
			       NULL) != SQLITE_OK)
		return sql_fail(n, "reading its schema", d);
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0);
		const char *text = (const char *)sqlite3_column_text(st, 1);

		if (!type || strcmp(type, "table") != 0 || !text || strncasecmp(text, "CREATE TABLE", 12) != 0)
			kind = -1;
		else if (!kind)
			kind = 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(n, "reading its schema", d);
	if (kind < 0)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': '%s' is not a plain table (a view or virtual table)",
				    n->c->path, table);
	if (!kind)
		return 0;
	snprintf(sql, sizeof sql, "PRAGMA table_xinfo(\"%s\")", table);
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(n, "reading its schema", d);
	if (!(n->cols = malloc(len))) {
		sqlite3_finalize(st);
		return oom(n, d);
	}
	strcpy(n->cols, "|");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *name = (const char *)sqlite3_column_text(st, 1);
		size_t nl = name ? strlen(name) : 0;

		if (sqlite3_column_int(st, 6) != 0) {   /* hidden: 2 and 3 are generated */
			sqlite3_finalize(st);
			return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': table '%s' has a generated column",
					    n->c->path, table);
		}
		if (!(p = realloc(n->cols, len + nl + 1))) {
			sqlite3_finalize(st);
			return oom(n, d);
		}
		n->cols = p;
		memcpy(p + len - 1, name ? name : "", nl);
		strcpy(p + len - 1 + nl, "|");
		len += nl + 1;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return sql_fail(n, "reading its schema", d);
	return 1;
}

/* 1 when the table last checked has column col. */
static int has_col(const struct nsys *n, const char *col)
{
	size_t cl = strlen(col);

	for (const char *p = n->cols; p && p[1]; p = strchr(p + 1, '|'))
		if (strncasecmp(p + 1, col, cl) == 0 && p[1 + cl] == '|')
			return 1;
	return 0;
}

/* Column text for a select list: col when the table last checked has it,
 * else dflt. */
static const char *col_or(const struct nsys *n, const char *col, const char *dflt)
{
	return has_col(n, col) ? col : dflt;
}

static int64_t i64(sqlite3_stmt *st, int i) { return sqlite3_column_int64(st, i); }

static uint32_t u32(sqlite3_stmt *st, int i)
{
	int64_t v = sqlite3_column_int64(st, i);

	return v >= 0 && v < KPT_NONE ? (uint32_t)v : 0;
}

/* The recording's process index for a globalPid/globalTid. O(1). */
static int process_of(struct nsys *n, int64_t global, int64_t t0, int64_t t1, uint32_t *index,
		      struct kpt_diag *d)
{
	uint64_t key = NSYS_PROC_KEY(global), *slot;
	struct proc *p;
	int rc = idmap_put(&n->proc_of, key, &slot);

	if (rc < 0)
		return oom(n, d);
	if (rc) {
		if (kpt_grow(&n->procs, &n->capprocs, n->nprocs + 1, sizeof *n->procs) < 0)
			return oom(n, d);
		*slot = n->nprocs;
		p = &n->procs[n->nprocs++];
		p->key = key;
		p->index = n->c->next_process++;
		p->lo = INT64_MAX;
		p->hi = INT64_MIN;
	}
	p = &n->procs[*slot];
	if (t0 < p->lo)
		p->lo = t0;
	if (t1 > p->hi)
		p->hi = t1;
	*index = p->index;
	return 0;
}

/* Runs sql and calls row() on each result row. Every row read counts
 * against the file's size: no table holds more rows than the file bytes. */
static int each_row(struct nsys *n, const char *sql, const char *what,
		    int (*row)(struct nsys *, sqlite3_stmt *, struct kpt_diag *), struct kpt_diag *d)
{
	sqlite3_stmt *st;
	int rc = 0, s;

	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(n, what, d);
	while ((s = sqlite3_step(st)) == SQLITE_ROW) {
		if (++n->nread > n->c->len) {
			rc = kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': %s: more rows than the file has bytes",
					  n->c->path, what);
			break;
		}
		if ((rc = row(n, st, d)) < 0)
			break;
	}
	if (rc >= 0 && s != SQLITE_DONE)
		rc = sql_fail(n, what, d);
	sqlite3_finalize(st);
	return rc;
}

/* ---- StringIds and TARGET_INFO_GPU: read once, looked up in memory ----- */

static int string_row(struct nsys *n, sqlite3_stmt *st, struct kpt_diag *d)
{
	const char *v = (const char *)sqlite3_column_text(st, 1);
	size_t len = (size_t)sqlite3_column_bytes(st, 1);
	uint64_t *slot;
	int rc;

	if (!v)
		return 0;
	if ((rc = idmap_put(&n->string_of, (uint64_t)i64(st, 0), &slot)) < 0)
		return oom(n, d);
	if (!rc)
		return 0;           /* the first value of an id wins */
	if (kpt_grow(&n->strings, &n->capstrings, n->nstrings + len + 1, 1) < 0)
		return oom(n, d);
	memcpy(n->strings + n->nstrings, v, len);
	n->strings[n->nstrings + len] = '\0';
	*slot = n->nstrings + 1;
	n->nstrings += len + 1;
	return 0;
}

/* The StringIds value whose id is in column col, NULL when none. */
static const char *string_of(const struct nsys *n, sqlite3_stmt *st, int col)
{
	uint64_t *slot;

	if (sqlite3_column_type(st, col) == SQLITE_NULL)
		return NULL;
	slot = idmap_get(&n->string_of, (uint64_t)i64(st, col));
	return slot ? n->strings + *slot - 1 : NULL;
}

static int gpu_info_row(struct nsys *n, sqlite3_stmt *st, struct kpt_diag *d)
{
	const unsigned char *t = sqlite3_column_text(st, 0), *u = sqlite3_column_text(st, 6);
	uint32_t ordinal = u32(st, 7);
	struct gpu_info *g;

	for (size_t i = 0; i < n->ngpus; i++)
		if (n->gpus[i].ordinal == ordinal)
			return 0;
	if (n->ngpus == NSYS_MAX_DEVICES)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': TARGET_INFO_GPU names more than %d GPUs",
				    n->c->path, NSYS_MAX_DEVICES);
	g = &n->gpus[n->ngpus++];
	g->ordinal = ordinal;
	if ((t && !(g->name = strdup((const char *)t))) || (u && !(g->uuid = strdup((const char *)u))))
		return oom(n, d);
	g->sm_count = u32(st, 1);
	g->cc_major = u32(st, 2);
	g->cc_minor = u32(st, 3);
	g->mem_bytes = (uint64_t)(i64(st, 4) > 0 ? i64(st, 4) : 0);
	g->l2_bytes = (uint64_t)(i64(st, 5) > 0 ? i64(st, 5) : 0);
	return 0;
}

static int read_lookups(struct nsys *n, struct kpt_diag *d)
{
	static const char G[] = "TARGET_INFO_GPU";
	char sql[512];
	int rc;

	if ((rc = check_table(n, "StringIds", d)) < 0)
		return rc;
	if (rc && (rc = each_row(n, "SELECT id, value FROM StringIds", "reading StringIds", string_row, d)) < 0)
		return rc;
	if ((rc = check_table(n, G, d)) <= 0)
		return rc;
	snprintf(sql, sizeof sql, "SELECT %s, %s, %s, %s, %s, %s, %s, %s FROM %s",
		 col_or(n, "name", "NULL"), col_or(n, "smCount", "0"), col_or(n, "computeMajor", "0"),
		 col_or(n, "computeMinor", "0"), col_or(n, "totalMemory", "0"), col_or(n, "l2CacheSize", "0"),
		 col_or(n, "uuid", "''"), col_or(n, "cuDevice", col_or(n, "id", "0")), G);
	return each_row(n, sql, "reading TARGET_INFO_GPU", gpu_info_row, d);
}

/* The recording's device index for a CUDA ordinal; at most
 * NSYS_MAX_DEVICES of them, so the scans are bounded. */
static int gpu_row(struct nsys *n, uint32_t ordinal, uint32_t *index, struct kpt_diag *d)
{
	struct kpt_device dev = { .cuda_ordinal = ordinal };
	const struct gpu_info *g = NULL;
	int rc;

	for (size_t i = 0; i < n->ndevs; i++)
		if (n->devs[i].ordinal == ordinal) {
			*index = n->devs[i].index;
			return 0;
		}
	if (n->ndevs == NSYS_MAX_DEVICES)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': GPU work on more than %d GPUs",
				    n->c->path, NSYS_MAX_DEVICES);
	for (size_t i = 0; i < n->ngpus && !g; i++)
		if (n->gpus[i].ordinal == ordinal)
			g = &n->gpus[i];
	if (g) {
		dev.name = g->name;
		dev.uuid = g->uuid;
		dev.sm_count = g->sm_count;
		dev.cc_major = g->cc_major;
		dev.cc_minor = g->cc_minor;
		dev.mem_bytes = g->mem_bytes;
		dev.l2_bytes = g->l2_bytes;
	}
	if (!dev.name)
		n->c->lacks |= KPT_LACK_DEVICE_PROPS;
	if ((rc = kpt_import_device(n->c, &dev, index, d)) < 0)
		return rc;
	n->devs[n->ndevs].ordinal = ordinal;
	n->devs[n->ndevs++].index = *index;
	return 0;
}

/* The times of a GPU activity: 0 <= start <= end, at most a day apart. */
static int bad_times(struct nsys *n, const char *what, int64_t t0, int64_t t1, struct kpt_diag *d)
{
	if (t0 >= 0 && t1 >= t0 && t1 - t0 <= NSYS_MAX_DURATION_NS)
		return 0;
	return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': a %s with start %lld and end %lld", n->c->path,
			    what, (long long)t0, (long long)t1);
}

static int kernel_row(struct nsys *n, sqlite3_stmt *st, struct kpt_diag *d)
{
	struct kpt_kernel *r;
	const char *name = string_of(n, st, 6);
	int64_t t0 = i64(st, 0), t1 = i64(st, 1);
	int rc;

	if ((rc = bad_times(n, "kernel", t0, t1, d)) < 0)
		return rc;
	if (!(r = kpt_import_add_kernel(n->c, &n->rows, d)))
		return KPT_E_NOMEM;
	r->start_ns = (uint64_t)t0;
	r->end_ns = (uint64_t)t1;
	if ((rc = gpu_row(n, u32(st, 2), &r->device, d)) < 0 ||
	    (rc = process_of(n, i64(st, 5), t0, t1, &r->process, d)) < 0 ||
	    (rc = kpt_writer_intern_cstr(n->c->w, name ? name : "", &r->name, d)) < 0)
		return rc;
	r->stream = u32(st, 3);
	r->correlation = u32(st, 4);
	for (int i = 0; i < 3; i++) {
		r->grid[i] = u32(st, 7 + i);
		r->block[i] = u32(st, 10 + i);
	}
	r->registers = u32(st, 13);
	r->shared_static = u32(st, 14);
	r->shared_dynamic = u32(st, 15);
	r->graph_node = (uint64_t)(i64(st, 16) > 0 ? i64(st, 16) : 0);
	r->graph = r->graph_node && u32(st, 17) ? u32(st, 17) : KPT_NONE;
	return 0;
}

static int memop_row(struct nsys *n, sqlite3_stmt *st, struct kpt_diag *d)
{
	struct kpt_memop *r;
	int64_t t0 = i64(st, 0), t1 = i64(st, 1), kind = i64(st, 7), src = i64(st, 8), dst = i64(st, 9);
	int is_set = sqlite3_column_int(st, 11);
	int rc;

	if ((rc = bad_times(n, "memcpy/memset", t0, t1, d)) < 0)
		return rc;
	if (!(r = kpt_import_add_memop(n->c, &n->rows, d)))
		return KPT_E_NOMEM;
	r->start_ns = (uint64_t)t0;
	r->end_ns = (uint64_t)t1;
	if ((rc = gpu_row(n, u32(st, 2), &r->device, d)) < 0 ||
	    (rc = process_of(n, i64(st, 5), t0, t1, &r->process, d)) < 0)
		return rc;
	r->stream = u32(st, 3);
	r->correlation = u32(st, 4);
	r->bytes = (uint64_t)(i64(st, 6) > 0 ? i64(st, 6) : 0);
	if (is_set) {
		r->kind = KPT_MEMSET;
		r->value = (uint32_t)kind;
	} else {
		r->kind = kind > 0 && kind < (int64_t)(sizeof copy_kinds / sizeof copy_kinds[0]) ? copy_kinds[kind]
												  : KPT_MEMCPY_OTHER;
		r->src_mem = src > 0 && src < (int64_t)(sizeof mem_kinds / sizeof mem_kinds[0]) ? mem_kinds[src] : 0;
	}
	r->dst_mem = dst > 0 && dst < (int64_t)(sizeof mem_kinds / sizeof mem_kinds[0]) ? mem_kinds[dst] : 0;
	r->graph_node = (uint64_t)(i64(st, 10) > 0 ? i64(st, 10) : 0);
	return 0;
}

static int launch_row(struct nsys *n, sqlite3_stmt *st, struct kpt_diag *d)
{
	int64_t corr = i64(st, 2);
	uint32_t proc;
	uint64_t *slot;

	if (corr <= 0 || corr >= KPT_NONE)
		return 0;
	/* only processes with GPU work matter for links */
	if (!(slot = idmap_get(&n->proc_of, NSYS_PROC_KEY(i64(st, 1)))))
		return 0;
	proc = n->procs[*slot].index;
	return kpt_import_add_launch(n->c, &n->rows, &(struct kpt_import_launch){
		.process = proc, .correlation = (uint32_t)corr, .thread = (uint64_t)i64(st, 1), .ts = i64(st, 0),
	}, d);
}

static int nvtx_row(struct nsys *n, sqlite3_stmt *st, struct kpt_diag *d)
{
	struct kpt_import_span *s;
	const char *text = (const char *)sqlite3_column_text(st, 3), *domain = (const char *)sqlite3_column_text(st, 5);
	int64_t t0 = i64(st, 0), type = i64(st, 2);
	int is_step, rc;
	const char *name;

	if (t0 < 0)
		return 0;
	if (!text)
		text = string_of(n, st, 6);
	if (!(s = kpt_import_add_span(n->c, &n->rows, d)))
		return KPT_E_NOMEM;
	s->start = t0;
	s->end = sqlite3_column_type(st, 1) == SQLITE_NULL ? INT64_MAX : i64(st, 1);
	if (type == NSYS_NVTX_MARK)
		s->end = t0;
	if (s->end < t0)
		s->end = t0;
	s->thread = (uint64_t)i64(st, 4);
	s->kind = type == NSYS_NVTX_PUSHPOP ? KPT_RANGE_PUSHPOP : type == NSYS_NVTX_STARTEND ? KPT_RANGE_STARTEND
											       : KPT_RANGE_MARK;
	name = kpt_import_range_name(text ? text : "", &is_step);
	s->is_step = is_step && s->kind == KPT_RANGE_PUSHPOP;
	if (!s->is_step)
		name = text ? text : "";
	if ((rc = process_of(n, i64(st, 4), t0, s->end == INT64_MAX ? t0 : s->end, &s->process, d)) < 0 ||
	    (rc = kpt_writer_intern_cstr(n->c->w, name, &s->name, d)) < 0 ||
	    (domain && (rc = kpt_writer_intern_cstr(n->c->w, domain, &s->domain, d)) < 0))
		return rc;
	return 0;
}

static int read_tables(struct nsys *n, struct kpt_diag *d)
{
	static const char K[] = "CUPTI_ACTIVITY_KIND_KERNEL", MC[] = "CUPTI_ACTIVITY_KIND_MEMCPY",
			  MS[] = "CUPTI_ACTIVITY_KIND_MEMSET", RT[] = "CUPTI_ACTIVITY_KIND_RUNTIME", NV[] = "NVTX_EVENTS";
	char sql[1024];
	int rc;

	if ((rc = read_lookups(n, d)) < 0 || (rc = check_table(n, K, d)) < 0)
		return rc;
	if (rc) {
		int mangled = has_col(n, "mangledName");

		if (!mangled)
			n->c->lacks |= KPT_LACK_MANGLED;
		/* names are StringIds ids, looked up in memory (string_of) */
		snprintf(sql, sizeof sql,
			 "SELECT start, end, deviceId, streamId, correlationId, globalPid, "
			 "%s, gridX, gridY, gridZ, blockX, blockY, blockZ, "
			 "registersPerThread, staticSharedMemory, dynamicSharedMemory, %s, %s FROM %s ORDER BY start",
			 mangled ? "mangledName" : "demangledName", col_or(n, "graphNodeId", "0"),
			 col_or(n, "graphId", "0"), K);
		if ((rc = each_row(n, sql, "reading CUPTI_ACTIVITY_KIND_KERNEL", kernel_row, d)) < 0)
			return rc;
	}
	if ((rc = check_table(n, MC, d)) < 0)
		return rc;
	if (rc) {
		snprintf(sql, sizeof sql,
			 "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, copyKind, %s, %s, %s, 0 "
			 "FROM %s ORDER BY start",
			 col_or(n, "srcKind", "0"), col_or(n, "dstKind", "0"), col_or(n, "graphNodeId", "0"), MC);
		if ((rc = each_row(n, sql, "reading CUPTI_ACTIVITY_KIND_MEMCPY", memop_row, d)) < 0)
			return rc;
	}
	if ((rc = check_table(n, MS, d)) < 0)
		return rc;
	if (rc) {
		snprintf(sql, sizeof sql,
			 "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, value, 0, %s, %s, 1 "
			 "FROM %s ORDER BY start",
			 col_or(n, "memKind", "0"), col_or(n, "graphNodeId", "0"), MS);
		if ((rc = each_row(n, sql, "reading CUPTI_ACTIVITY_KIND_MEMSET", memop_row, d)) < 0)
			return rc;
	}
	if ((rc = check_table(n, RT, d)) < 0 ||
	    (rc && (rc = each_row(n, "SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
				  "reading CUPTI_ACTIVITY_KIND_RUNTIME", launch_row, d)) < 0))
		return rc;
	if ((rc = check_table(n, NV, d)) < 0)
		return rc;
	if (rc) {
		int tid = has_col(n, "textId"), dom = has_col(n, "domainId");

		/* text is NULL when textId names a StringIds value (string_of) */
		snprintf(sql, sizeof sql,
			 "SELECT e.start, e.end, e.eventType, e.text, e.globalTid, %s, %s FROM %s e %s "
			 "WHERE e.eventType IN (%d, %d, %d) AND e.globalTid IS NOT NULL",
			 dom ? "dm.name" : "NULL", tid ? "e.textId" : "NULL", NV,
			 /* domain names: the text of the domain-create events */
			 dom ? "LEFT JOIN (SELECT domainId AS id, MIN(text) AS name FROM NVTX_EVENTS "
			       "WHERE eventType = 75 GROUP BY domainId) dm ON dm.id = e.domainId AND e.domainId != 0" : "",
			 NSYS_NVTX_MARK, NSYS_NVTX_PUSHPOP, NSYS_NVTX_STARTEND);
		if ((rc = each_row(n, sql, "reading NVTX_EVENTS", nvtx_row, d)) < 0)
			return rc;
	}
	return 0;
}

static int write_rows(struct nsys *n, struct kpt_diag *d)
{
	int rc;

	for (size_t i = 0; i < n->nprocs; i++) {
		struct proc *p = &n->procs[i];
		struct kpt_process row = {
			.index = p->index, .run = n->c->run, .pid = NSYS_PID(p->key), .rank = KPT_NONE,
			.exit_status = INT32_MIN, .start_ns = (uint64_t)p->lo, .end_ns = (uint64_t)p->hi,
			.command = KPT_NONE,
		};

		if ((uint64_t)p->lo < n->c->first_ns)
			n->c->first_ns = (uint64_t)p->lo;
		if ((rc = kpt_writer_process(n->c->w, &row, d)) < 0)
			return rc;
	}
	return kpt_import_rows_write(n->c, &n->rows, d);
}

/* "file:PATH?mode=ro[&immutable=1]" with PATH percent-encoded; malloc'd. */
static char *db_uri(const char *path, int immutable)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(path);
	char *u = malloc(3 * len + 32), *p = u;

	if (!u)
		return NULL;
	p += sprintf(p, "file:");
	for (const unsigned char *s = (const unsigned char *)path; *s; s++) {
		if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		    strchr("/-._~", *s)) {
			*p++ = (char)*s;
		} else {
			*p++ = '%';
			*p++ = hex[*s >> 4];
			*p++ = hex[*s & 15];
		}
	}
	strcpy(p, immutable ? "?mode=ro&immutable=1" : "?mode=ro");
	return u;
}

/* Opens the export as an untrusted database (docs/security.md): read-only,
 * nothing written beside it, no SQL from its schema run (no views,
 * triggers or untrusted functions), bounded values, and a deadline.
 * A rollback-journal file (every nsys export) is opened mode=ro, so a
 * writer's lock is honoured (SQLITE_BUSY is an error) and no -journal is
 * made; a WAL-mode file immutable=1 (no -wal/-shm), after refusing one
 * with a -wal beside it (its last writes would be missing). */
static int open_db(struct nsys *n, struct kpt_diag *d)
{
	static const struct { int id, value; } limits[] = {
		{ SQLITE_LIMIT_LENGTH, NSYS_MAX_VALUE }, { SQLITE_LIMIT_SQL_LENGTH, 1 << 16 },
		{ SQLITE_LIMIT_COLUMN, 2000 }, { SQLITE_LIMIT_EXPR_DEPTH, 100 },
		{ SQLITE_LIMIT_COMPOUND_SELECT, 4 }, { SQLITE_LIMIT_VDBE_OP, 25000 },
		{ SQLITE_LIMIT_FUNCTION_ARG, 8 }, { SQLITE_LIMIT_ATTACHED, 0 },
		{ SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 50 }, { SQLITE_LIMIT_VARIABLE_NUMBER, 10 },
		{ SQLITE_LIMIT_TRIGGER_DEPTH, 1 }, { SQLITE_LIMIT_WORKER_THREADS, 0 },
	};
	int wal = n->c->len >= 20 && (n->c->data[18] == 2 || n->c->data[19] == 2);
	size_t pl = strlen(n->c->path);
	char *uri, *side;
	int rc, on;

	if (wal) {
		if (!(side = malloc(pl + 5)))
			return oom(n, d);
		memcpy(side, n->c->path, pl);
		strcpy(side + pl, "-wal");
		on = access(side, F_OK) == 0;
		free(side);
		if (on) {
			kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': a write-ahead log ('-wal') lies beside it",
				     n->c->path);
			return kpt_diag_hint(d, "it is still being written or was not closed: export it again");
		}
	}
	if (!(uri = db_uri(n->c->path, wal)))
		return oom(n, d);
	rc = sqlite3_open_v2(uri, &n->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, NULL);
	free(uri);
	if (rc != SQLITE_OK)
		return sql_fail(n, "cannot open it with SQLite", d);
	sqlite3_extended_result_codes(n->db, 1);
	if (sqlite3_db_config(n->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, &on) != SQLITE_OK || on ||
	    sqlite3_db_config(n->db, SQLITE_DBCONFIG_DEFENSIVE, 1, &on) != SQLITE_OK || !on ||
	    sqlite3_db_config(n->db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, &on) != SQLITE_OK || on ||
	    sqlite3_db_config(n->db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, &on) != SQLITE_OK || on)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "cannot import '%s': this SQLite cannot open a file safely",
				    n->c->path);
	for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
		sqlite3_limit(n->db, limits[i].id, limits[i].value);
	clock_gettime(CLOCK_MONOTONIC, &n->deadline);
	n->deadline.tv_sec += NSYS_TIME_BASE_S + NSYS_TIME_PER_MIB_S * (time_t)(n->c->len >> 20);
	sqlite3_progress_handler(n->db, 1000, over_time, n);
	if (sqlite3_exec(n->db, "PRAGMA temp_store = MEMORY", NULL, NULL, NULL) != SQLITE_OK)
		return sql_fail(n, "setting it up", d);
	return 0;
}

int kpt_import_nsys(struct kpt_import_ctx *c, struct kpt_diag *d)
{
	struct nsys n;
	struct timespec now;
	/* SQLite's heap limit is the process's: set for this import, then
	 * put back */
	int64_t heap = sqlite3_hard_heap_limit64(-1);
	int rc;

	memset(&n, 0, sizeof n);
	n.c = c;
	clock_gettime(CLOCK_MONOTONIC, &now);
	n.proc_of.seed = n.string_of.seed =
		(uint64_t)now.tv_nsec * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)(uintptr_t)&n ^ (uint64_t)getpid();
	sqlite3_hard_heap_limit64(NSYS_HEAP_BASE + 4 * (int64_t)c->len);
	rc = open_db(&n, d);
	if (rc >= 0)
		rc = read_tables(&n, d);
	if (rc >= 0)
		rc = write_rows(&n, d);
	sqlite3_close(n.db);
	sqlite3_hard_heap_limit64(heap);
	free(n.procs);
	for (size_t i = 0; i < n.ngpus; i++) {
		free(n.gpus[i].name);
		free(n.gpus[i].uuid);
	}
	idmap_release(&n.proc_of);
	idmap_release(&n.string_of);
	free(n.strings);
	free(n.cols);
	kpt_import_rows_release(&n.rows);
	return rc;
}

#endif
