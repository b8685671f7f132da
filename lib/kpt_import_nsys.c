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

/* globalPid / globalTid: pid in bits 24..47, tid in bits 0..23 */
#define NSYS_PID(g) ((uint32_t)(((uint64_t)(g) >> 24) & 0xffffff))
#define NSYS_PROC_KEY(g) ((uint64_t)(g) & ~(uint64_t)0xffffff)

/* NVTX_EVENTS.eventType values used */
enum { NSYS_NVTX_MARK = 34, NSYS_NVTX_PUSHPOP = 59, NSYS_NVTX_STARTEND = 60, NSYS_NVTX_DOMAIN = 75 };

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

struct proc {
	uint64_t key;               /* globalPid */
	uint32_t index;             /* process index in the recording */
	int64_t lo, hi;
};

struct nsys {
	struct kpt_import_ctx *c;
	sqlite3 *db;
	struct proc *procs;
	size_t nprocs, capprocs;
	struct { uint32_t ordinal, index; } *devs;
	size_t ndevs, capdevs;
	struct kpt_import_rows rows;
};

static int sql_fail(struct nsys *n, const char *what, struct kpt_diag *d)
{
	return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': %s: %s", n->c->path, what,
			    n->db ? sqlite3_errmsg(n->db) : "cannot open");
}

static int oom(struct nsys *n, struct kpt_diag *d)
{
	return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", n->c->path);
}

/* 1 when table has column col (or, col NULL, when the table exists). */
static int has(struct nsys *n, const char *table, const char *col)
{
	char sql[160];
	sqlite3_stmt *st;
	int found = 0;

	snprintf(sql, sizeof sql, "PRAGMA table_info(%s)", table);
	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (!found && sqlite3_step(st) == SQLITE_ROW) {
		const unsigned char *name = sqlite3_column_text(st, 1);

		found = !col || (name && strcmp((const char *)name, col) == 0);
	}
	sqlite3_finalize(st);
	return found;
}

/* Column text for a select list: col when the table has it, else dflt. */
static const char *col_or(struct nsys *n, const char *table, const char *col, const char *dflt)
{
	return has(n, table, col) ? col : dflt;
}

static int64_t i64(sqlite3_stmt *st, int i) { return sqlite3_column_int64(st, i); }

static uint32_t u32(sqlite3_stmt *st, int i)
{
	int64_t v = sqlite3_column_int64(st, i);

	return v >= 0 && v < KPT_NONE ? (uint32_t)v : 0;
}

/* The recording's process index for a globalPid/globalTid. */
static int process_of(struct nsys *n, int64_t global, int64_t t0, int64_t t1, uint32_t *index,
		      struct kpt_diag *d)
{
	uint64_t key = NSYS_PROC_KEY(global);
	struct proc *p;

	for (size_t i = 0; i < n->nprocs; i++)
		if (n->procs[i].key == key) {
			p = &n->procs[i];
			goto found;
		}
	if (kpt_import_grow(&n->procs, &n->capprocs, n->nprocs + 1, sizeof *n->procs) < 0)
		return oom(n, d);
	p = &n->procs[n->nprocs++];
	p->key = key;
	p->index = n->c->next_process++;
	p->lo = INT64_MAX;
	p->hi = INT64_MIN;
found:
	if (t0 < p->lo)
		p->lo = t0;
	if (t1 > p->hi)
		p->hi = t1;
	*index = p->index;
	return 0;
}

static int gpu_row(struct nsys *n, uint32_t ordinal, uint32_t *index, struct kpt_diag *d)
{
	sqlite3_stmt *st = NULL;
	struct kpt_device dev = { .cuda_ordinal = ordinal };
	char sql[512], *name = NULL, *uuid = NULL;
	int rc;

	for (size_t i = 0; i < n->ndevs; i++)
		if (n->devs[i].ordinal == ordinal) {
			*index = n->devs[i].index;
			return 0;
		}
	if (has(n, "TARGET_INFO_GPU", NULL)) {
		snprintf(sql, sizeof sql,
			 "SELECT name, %s, %s, %s, %s, %s, %s FROM TARGET_INFO_GPU WHERE %s = ? LIMIT 1",
			 col_or(n, "TARGET_INFO_GPU", "smCount", "0"),
			 col_or(n, "TARGET_INFO_GPU", "computeMajor", "0"),
			 col_or(n, "TARGET_INFO_GPU", "computeMinor", "0"),
			 col_or(n, "TARGET_INFO_GPU", "totalMemory", "0"),
			 col_or(n, "TARGET_INFO_GPU", "l2CacheSize", "0"),
			 col_or(n, "TARGET_INFO_GPU", "uuid", "''"),
			 col_or(n, "TARGET_INFO_GPU", "cuDevice", "id"));
		if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
			return sql_fail(n, "reading TARGET_INFO_GPU", d);
		sqlite3_bind_int64(st, 1, ordinal);
		if ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const unsigned char *t = sqlite3_column_text(st, 0), *u = sqlite3_column_text(st, 6);

			if ((t && !(name = strdup((const char *)t))) || (u && !(uuid = strdup((const char *)u)))) {
				sqlite3_finalize(st);
				free(name);
				return oom(n, d);
			}
			dev.sm_count = u32(st, 1);
			dev.cc_major = u32(st, 2);
			dev.cc_minor = u32(st, 3);
			dev.mem_bytes = (uint64_t)(i64(st, 4) > 0 ? i64(st, 4) : 0);
			dev.l2_bytes = (uint64_t)(i64(st, 5) > 0 ? i64(st, 5) : 0);
		} else if (rc != SQLITE_DONE) {
			sqlite3_finalize(st);
			return sql_fail(n, "reading TARGET_INFO_GPU", d);
		}
		sqlite3_finalize(st);
	}
	if (!name)
		n->c->lacks |= KPT_LACK_DEVICE_PROPS;
	dev.name = name;
	dev.uuid = uuid;
	rc = kpt_import_grow(&n->devs, &n->capdevs, n->ndevs + 1, sizeof *n->devs) < 0 ? oom(n, d)
		: kpt_import_device(n->c, &dev, index, d);
	free(name);
	free(uuid);
	if (rc < 0)
		return rc;
	n->devs[n->ndevs].ordinal = ordinal;
	n->devs[n->ndevs++].index = *index;
	return 0;
}

/* Runs sql and calls row() on each result row. */
static int each_row(struct nsys *n, const char *sql, const char *what,
		    int (*row)(struct nsys *, sqlite3_stmt *, struct kpt_diag *), struct kpt_diag *d)
{
	sqlite3_stmt *st;
	int rc = 0, s;

	if (sqlite3_prepare_v2(n->db, sql, -1, &st, NULL) != SQLITE_OK)
		return sql_fail(n, what, d);
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		if ((rc = row(n, st, d)) < 0)
			break;
	if (rc >= 0 && s != SQLITE_DONE)
		rc = sql_fail(n, what, d);
	sqlite3_finalize(st);
	return rc;
}

static int kernel_row(struct nsys *n, sqlite3_stmt *st, struct kpt_diag *d)
{
	struct kpt_kernel *r;
	const unsigned char *name = sqlite3_column_text(st, 6);
	int64_t t0 = i64(st, 0), t1 = i64(st, 1);
	int rc;

	if (t0 < 0 || t1 < t0)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': a kernel with start %lld and end %lld",
				    n->c->path, (long long)t0, (long long)t1);
	if (!(r = kpt_import_add_kernel(n->c, &n->rows, d)))
		return KPT_E_NOMEM;
	r->start_ns = (uint64_t)t0;
	r->end_ns = (uint64_t)t1;
	if ((rc = gpu_row(n, u32(st, 2), &r->device, d)) < 0 ||
	    (rc = process_of(n, i64(st, 5), t0, t1, &r->process, d)) < 0 ||
	    (rc = kpt_writer_intern_cstr(n->c->w, name ? (const char *)name : "", &r->name, d)) < 0)
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

	if (t0 < 0 || t1 < t0)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': a memcpy/memset with start %lld and end %lld",
				    n->c->path, (long long)t0, (long long)t1);
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
	size_t i;
	uint64_t key = NSYS_PROC_KEY(i64(st, 1));

	if (corr <= 0 || corr >= KPT_NONE)
		return 0;
	/* only processes with GPU work matter for links */
	for (i = 0; i < n->nprocs && n->procs[i].key != key; i++)
		;
	if (i == n->nprocs)
		return 0;
	proc = n->procs[i].index;
	return kpt_import_add_launch(n->c, &n->rows, &(struct kpt_import_launch){
		.process = proc, .correlation = (uint32_t)corr, .thread = (uint64_t)i64(st, 1), .ts = i64(st, 0),
	}, d);
}

static int nvtx_row(struct nsys *n, sqlite3_stmt *st, struct kpt_diag *d)
{
	struct kpt_import_span *s;
	const unsigned char *text = sqlite3_column_text(st, 3), *domain = sqlite3_column_text(st, 5);
	int64_t t0 = i64(st, 0), type = i64(st, 2);
	int is_step, rc;
	const char *name;

	if (t0 < 0)
		return 0;
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
	name = kpt_import_range_name(text ? (const char *)text : "", &is_step);
	s->is_step = is_step && s->kind == KPT_RANGE_PUSHPOP;
	if (!s->is_step)
		name = text ? (const char *)text : "";
	if ((rc = process_of(n, i64(st, 4), t0, s->end == INT64_MAX ? t0 : s->end, &s->process, d)) < 0 ||
	    (rc = kpt_writer_intern_cstr(n->c->w, name, &s->name, d)) < 0 ||
	    (domain && (rc = kpt_writer_intern_cstr(n->c->w, (const char *)domain, &s->domain, d)) < 0))
		return rc;
	return 0;
}

static int read_tables(struct nsys *n, struct kpt_diag *d)
{
	static const char K[] = "CUPTI_ACTIVITY_KIND_KERNEL", MC[] = "CUPTI_ACTIVITY_KIND_MEMCPY",
			  MS[] = "CUPTI_ACTIVITY_KIND_MEMSET", RT[] = "CUPTI_ACTIVITY_KIND_RUNTIME", NV[] = "NVTX_EVENTS";
	char sql[1024];
	int rc;

	if (has(n, K, NULL)) {
		int mangled = has(n, K, "mangledName");

		if (!mangled)
			n->c->lacks |= KPT_LACK_MANGLED;
		snprintf(sql, sizeof sql,
			 "SELECT start, end, deviceId, streamId, correlationId, globalPid, "
			 "(SELECT value FROM StringIds WHERE id = %s), gridX, gridY, gridZ, blockX, blockY, blockZ, "
			 "registersPerThread, staticSharedMemory, dynamicSharedMemory, %s, %s FROM %s ORDER BY start",
			 mangled ? "mangledName" : "demangledName", col_or(n, K, "graphNodeId", "0"),
			 col_or(n, K, "graphId", "0"), K);
		if ((rc = each_row(n, sql, "reading " "CUPTI_ACTIVITY_KIND_KERNEL", kernel_row, d)) < 0)
			return rc;
	}
	if (has(n, MC, NULL)) {
		snprintf(sql, sizeof sql,
			 "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, copyKind, %s, %s, %s, 0 "
			 "FROM %s ORDER BY start",
			 col_or(n, MC, "srcKind", "0"), col_or(n, MC, "dstKind", "0"), col_or(n, MC, "graphNodeId", "0"),
			 MC);
		if ((rc = each_row(n, sql, "reading CUPTI_ACTIVITY_KIND_MEMCPY", memop_row, d)) < 0)
			return rc;
	}
	if (has(n, MS, NULL)) {
		snprintf(sql, sizeof sql,
			 "SELECT start, end, deviceId, streamId, correlationId, globalPid, bytes, value, 0, %s, %s, 1 "
			 "FROM %s ORDER BY start",
			 col_or(n, MS, "memKind", "0"), col_or(n, MS, "graphNodeId", "0"), MS);
		if ((rc = each_row(n, sql, "reading CUPTI_ACTIVITY_KIND_MEMSET", memop_row, d)) < 0)
			return rc;
	}
	if (has(n, RT, NULL) &&
	    (rc = each_row(n, "SELECT start, globalTid, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME",
			   "reading CUPTI_ACTIVITY_KIND_RUNTIME", launch_row, d)) < 0)
		return rc;
	if (has(n, NV, NULL)) {
		int tid = has(n, NV, "textId"), dom = has(n, NV, "domainId");

		snprintf(sql, sizeof sql,
			 "SELECT e.start, e.end, e.eventType, %s, e.globalTid, %s FROM %s e %s "
			 "WHERE e.eventType IN (%d, %d, %d) AND e.globalTid IS NOT NULL",
			 tid ? "COALESCE(e.text, (SELECT value FROM StringIds WHERE id = e.textId))" : "e.text",
			 dom ? "dm.name" : "NULL", NV,
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

int kpt_import_nsys(struct kpt_import_ctx *c, struct kpt_diag *d)
{
	struct nsys n;
	int rc;

	memset(&n, 0, sizeof n);
	n.c = c;
	if (sqlite3_open_v2(c->path, &n.db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
		rc = sql_fail(&n, "cannot open it with SQLite", d);
	else
		rc = read_tables(&n, d);
	if (rc >= 0)
		rc = write_rows(&n, d);
	sqlite3_close(n.db);
	free(n.procs);
	free(n.devs);
	kpt_import_rows_release(&n.rows);
	return rc;
}

#endif
