/* kpt_wl_memory.c - the memory family's workloads (see kpt_workload.h).
 *
 * Small workloads rotate over several buffer sets so that one pass of the
 * rotation (>= 128 MiB) exceeds the 50 MB L2 of an H100: every iteration then
 * reads from DRAM, as its byte count claims. Checks compare the set the last
 * run wrote. */
#include <stdlib.h>
#include <string.h>

#include "kpt_kernels.h"
#include "kpt_workload.h"
#include "ref/kpt_ref.h"

enum mem_op { OP_COPY, OP_MEMSET, OP_TRIAD, OP_TRANSPOSE_F32, OP_TRANSPOSE_BF16, OP_REDUCE, OP_H2D, OP_D2H, OP_D2D };

/* n: bytes (copy, memset, h2d, d2h, d2d) or float elements (triad, reduce);
 * rows x cols for transposes. */
struct mem_cfg {
	enum mem_op op;
	size_t n, rows, cols;
};

#define MAX_SETS 64
#define ROTATE_BYTES ((size_t)128 << 20)
#define MEMSET_VALUE 0x5A
#define TRIAD_Q 0.4375f

struct mem_state {
	size_t nsets, next, last;
	size_t in_bytes, out_bytes;   /* per set; triad has two inputs of in_bytes */
	size_t in_alloc, out_alloc;   /* the same, grown by the planted extension */
	void *in[MAX_SETS], *in2[MAX_SETS], *out[MAX_SETS];
	void *host;                   /* pinned: source of h2d, destination of d2h */
	void *ws;                     /* reduction workspace */
};

static size_t round16(size_t b)
{
	return b ? (b + 15) / 16 * 16 : 16;
}

static void sizes(const struct mem_cfg *m, size_t *in, size_t *out)
{
	switch (m->op) {
	case OP_COPY: case OP_H2D: case OP_D2H: case OP_D2D: *in = m->n; *out = m->n; break;
	case OP_MEMSET: *in = 0; *out = m->n; break;
	case OP_TRIAD: *in = m->n * 4; *out = m->n * 4; break;
	case OP_TRANSPOSE_F32: *in = *out = m->rows * m->cols * 4; break;
	case OP_TRANSPOSE_BF16: *in = *out = m->rows * m->cols * 2; break;
	case OP_REDUCE: *in = m->n * 4; *out = 4; break;
	}
}

static void mem_teardown(const struct kpt_workload *w, struct kpt_wl_ctx *c)
{
	struct mem_state *st = c->state;

	if (!st)
		return;
	for (size_t i = 0; i < MAX_SETS; i++) {
		cudaFree(st->in[i]);
		cudaFree(st->in2[i]);
		cudaFree(st->out[i]);
	}
	cudaFree(st->ws);
	cudaFreeHost(st->host);
	free(st);
	c->state = NULL;
}

static int mem_setup(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct mem_cfg *m = w->cfg;
	struct mem_state *st = calloc(1, sizeof *st);
	size_t foot;
	int rc = 0;

	if (!(c->state = st))
		return kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory", w->name);
	sizes(m, &st->in_bytes, &st->out_bytes);
	st->in_alloc = st->in_bytes;
	st->out_alloc = st->out_bytes;
	if (c->plant_pct > 0 && (m->op == OP_COPY || m->op == OP_TRIAD || m->op == OP_MEMSET || m->op == OP_REDUCE)) {
		/* planted work runs over memory beyond the data (kpt_copy) */
		st->in_alloc = kpt_planted_bytes(st->in_bytes, c->plant_pct);
		st->out_alloc = m->op == OP_REDUCE ? st->out_bytes : kpt_planted_bytes(st->out_bytes, c->plant_pct);
	}

	/* The set count and the fills do not depend on the plant: only the
	 * planted kernel itself may differ from an unplanted run (a fill over
	 * the extension would be a second, unintended change). */
	foot = st->in_bytes * (m->op == OP_TRIAD ? 2 : 1) + st->out_bytes;
	st->nsets = (m->op == OP_H2D || m->op == OP_D2H || foot == 0 || foot >= ROTATE_BYTES)
		? 1 : (ROTATE_BYTES + foot - 1) / foot;
	if (st->nsets > MAX_SETS)
		st->nsets = MAX_SETS;
	for (size_t i = 0; i < st->nsets && rc == 0; i++) {
		uint64_t s0 = kpt_wl_subseed(c->seed, 2 * i), s1 = kpt_wl_subseed(c->seed, 2 * i + 1);

		if (m->op != OP_MEMSET && m->op != OP_H2D)
			rc = KPT_CUDA(d, cudaMalloc(&st->in[i], round16(st->in_alloc)));
		if (rc == 0 && m->op == OP_TRIAD)
			rc = KPT_CUDA(d, cudaMalloc(&st->in2[i], round16(st->in_alloc)));
		if (rc == 0 && m->op != OP_D2H)
			rc = KPT_CUDA(d, cudaMalloc(&st->out[i], round16(st->out_alloc)));
		if (rc == 0 && st->in[i])
			rc = kpt_wl_fill_f32(st->in[i], round16(st->in_bytes) / 4, s0, 0.25f, 1.25f, c->stream, d);
		if (rc == 0 && st->in2[i])
			rc = kpt_wl_fill_f32(st->in2[i], round16(st->in_bytes) / 4, s1, -1.5f, -0.5f, c->stream, d);
		/* the extension holds a constant, non-zero pattern (a memset,
		 * which is no kernel of the workload) */
		if (rc == 0 && st->in[i] && st->in_alloc > round16(st->in_bytes))
			/* reduce: zeros, which leave its sum unchanged */
			rc = KPT_CUDA(d, cudaMemsetAsync((char *)st->in[i] + round16(st->in_bytes), m->op == OP_REDUCE ? 0 : 0x3c,
							 round16(st->in_alloc) - round16(st->in_bytes), c->stream));
		if (rc == 0 && st->in2[i] && st->in_alloc > round16(st->in_bytes))
			rc = KPT_CUDA(d, cudaMemsetAsync((char *)st->in2[i] + round16(st->in_bytes), 0xbc,
							 round16(st->in_alloc) - round16(st->in_bytes), c->stream));
	}
	if (rc == 0 && m->op == OP_REDUCE &&
	    (rc = KPT_CUDA(d, cudaMalloc(&st->ws, kpt_reduce_sum_ws_bytes()))) == 0)
		rc = KPT_CUDA(d, cudaMemsetAsync(st->ws, 0, kpt_reduce_sum_ws_bytes(), c->stream));
	if (rc == 0 && (m->op == OP_H2D || m->op == OP_D2H))
		rc = KPT_CUDA(d, cudaMallocHost(&st->host, round16(st->in_bytes)));
	if (rc == 0 && m->op == OP_H2D) { /* random host data via a scratch device buffer */
		void *tmp = NULL;

		if ((rc = KPT_CUDA(d, cudaMalloc(&tmp, round16(st->in_bytes)))) == 0 &&
		    (rc = kpt_wl_fill_f32(tmp, round16(st->in_bytes) / 4, kpt_wl_subseed(c->seed, 99), 0.25f, 1.25f,
					  c->stream, d)) == 0)
			rc = KPT_CUDA(d, cudaMemcpyAsync(st->host, tmp, round16(st->in_bytes), cudaMemcpyDeviceToHost,
							 c->stream));
		if (rc == 0)
			rc = KPT_CUDA(d, cudaStreamSynchronize(c->stream));
		cudaFree(tmp);
	}
	if (rc == 0)
		rc = KPT_CUDA(d, cudaStreamSynchronize(c->stream));
	return rc;
}

static int mem_run(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct mem_cfg *m = w->cfg;
	struct mem_state *st = c->state;
	size_t i = st->next;
	int rc = 0;

	switch (m->op) {
	case OP_COPY: rc = kpt_copy(st->out[i], st->in[i], m->n, c->plant_pct, c->stream, d); break;
	case OP_MEMSET: rc = kpt_memset(st->out[i], MEMSET_VALUE, m->n, c->plant_pct, c->stream, d); break;
	case OP_TRIAD:
		rc = kpt_triad(st->out[i], st->in[i], st->in2[i], TRIAD_Q, m->n, c->plant_pct, c->stream, d);
		break;
	case OP_TRANSPOSE_F32: rc = kpt_transpose_f32(st->out[i], st->in[i], m->rows, m->cols, c->stream, d); break;
	case OP_TRANSPOSE_BF16: rc = kpt_transpose_bf16(st->out[i], st->in[i], m->rows, m->cols, c->stream, d); break;
	case OP_REDUCE: rc = kpt_reduce_sum_f32(st->out[i], st->in[i], m->n, c->plant_pct, st->ws, c->stream, d); break;
	case OP_H2D: rc = kpt_copy_h2d(st->out[i], st->host, m->n, c->stream, d); break;
	case OP_D2H: rc = kpt_copy_d2h(st->host, st->in[i], m->n, c->stream, d); break;
	case OP_D2D: rc = kpt_copy_d2d(st->out[i], st->in[i], m->n, c->stream, d); break;
	}
	st->last = i;
	st->next = (i + 1) % st->nsets;
	return rc;
}

static int mem_poison(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct mem_cfg *m = w->cfg;
	struct mem_state *st = c->state;
	int rc;

	if (m->op != OP_D2H)
		return kpt_wl_poison(st->out[st->next], st->out_bytes, c->stream, d);
	if ((rc = KPT_CUDA(d, cudaStreamSynchronize(c->stream))) < 0)
		return rc;
	memset(st->host, 0xFF, st->out_bytes);
	return 0;
}

static int mismatch_bytes(const struct kpt_workload *w, const unsigned char *got, const unsigned char *want,
			  size_t n, struct kpt_diag *d)
{
	for (size_t i = 0; i < n; i++)
		if (got[i] != want[i])
			return kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: byte %zu of %zu is 0x%02x, want 0x%02x",
					    w->name, i, n, got[i], want[i]);
	return 0;
}

static int mem_check(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct mem_cfg *m = w->cfg;
	struct mem_state *st = c->state;
	size_t i = st->last, nin = st->in_bytes, nout = st->out_bytes;
	unsigned char *in = malloc(round16(nin)), *in2 = malloc(round16(nin)), *out = malloc(round16(nout));
	unsigned char *want = malloc(round16(nout));
	int rc;

	if (!in || !in2 || !out || !want) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory for the check", w->name);
		goto done;
	}
	if ((rc = KPT_CUDA(d, cudaStreamSynchronize(c->stream))) < 0)
		goto done;
	if (m->op == OP_H2D)
		memcpy(in, st->host, nin);
	else if (nin && (rc = KPT_CUDA(d, cudaMemcpy(in, st->in[i], nin, cudaMemcpyDeviceToHost))) < 0)
		goto done;
	if (m->op == OP_TRIAD && (rc = KPT_CUDA(d, cudaMemcpy(in2, st->in2[i], nin, cudaMemcpyDeviceToHost))) < 0)
		goto done;
	if (m->op == OP_D2H)
		memcpy(out, st->host, nout);
	else if (nout && (rc = KPT_CUDA(d, cudaMemcpy(out, st->out[i], nout, cudaMemcpyDeviceToHost))) < 0)
		goto done;
	switch (m->op) {
	case OP_COPY: case OP_H2D: case OP_D2H: case OP_D2D: rc = mismatch_bytes(w, out, in, nout, d); break;
	case OP_MEMSET:
		memset(want, MEMSET_VALUE, nout);
		rc = mismatch_bytes(w, out, want, nout, d);
		break;
	case OP_TRIAD: {
		size_t bad;

		kpt_ref_triad((float *)want, (const float *)in, (const float *)in2, TRIAD_Q, m->n);
		bad = kpt_ref_first_mismatch_f32((const float *)out, (const float *)want, m->n, 0.0, 0.0);
		if (bad < m->n)
			rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: a[%zu] = %.9g, want %.9g (fmaf)", w->name,
					  bad, ((float *)out)[bad], ((float *)want)[bad]);
		break;
	}
	case OP_TRANSPOSE_F32: case OP_TRANSPOSE_BF16:
		kpt_ref_transpose(want, in, m->rows, m->cols, m->op == OP_TRANSPOSE_F32 ? 4 : 2);
		rc = mismatch_bytes(w, out, want, nout, d);
		break;
	case OP_REDUCE: {
		double abs_sum, ref = kpt_ref_sum((const float *)in, m->n, &abs_sum), got = *(float *)out;
		/* Worst-case float32 error of the GPU's summation order: the
		 * longest chain (one thread's partial, then tree levels) times
		 * the unit roundoff, over sum |x|; >= 4096 threads run. */
		double tol = ((double)m->n / 4096.0 + 64.0) * 0x1p-24 * abs_sum + 0x1p-24 * abs_sum;

		if (!(got - ref <= tol && ref - got <= tol))
			rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: sum %.9g, want %.9g (tolerance %.3g)",
					  w->name, got, ref, tol);
		break;
	}
	}
done:
	free(in);
	free(in2);
	free(out);
	free(want);
	return rc;
}

#define MEMWL(nm, st, op, n, r, c, nbytes, nflops, plant)                                            \
	{ .name = nm, .family = "memory", .suites = st, .flops = (nflops), .bytes = (nbytes),         \
	  .cfg = &(const struct mem_cfg){ op, n, r, c }, .plantable = plant, .setup = mem_setup,      \
	  .run = mem_run, .poison = mem_poison, .check = mem_check, .teardown = mem_teardown }
#define COPY(nm, st, b) MEMWL("memory.copy." nm, st, OP_COPY, (size_t)(b), 0, 0, 2.0 * (b), 0, 1)
#define MSET(nm, st, b) MEMWL("memory.memset." nm, st, OP_MEMSET, (size_t)(b), 0, 0, 1.0 * (b), 0, 1)
#define TRIAD(nm, st, n) MEMWL("memory.triad.f32." nm, st, OP_TRIAD, (size_t)(n), 0, 0, 12.0 * (n), 2.0 * (n), 1)
#define TRF(st, r, c) MEMWL("memory.transpose.f32." #r "x" #c, st, OP_TRANSPOSE_F32, 0, r, c, 8.0 * (r) * (c), 0, 0)
#define TRB(st, r, c) MEMWL("memory.transpose.bf16." #r "x" #c, st, OP_TRANSPOSE_BF16, 0, r, c, 4.0 * (r) * (c), 0, 0)
#define RED(nm, st, n) MEMWL("memory.reduce.f32." nm, st, OP_REDUCE, (size_t)(n), 0, 0, 4.0 * (n), 1.0 * (n), 1)
#define H2D(nm, st, b) MEMWL("memory.h2d.pinned." nm, st, OP_H2D, (size_t)(b), 0, 0, 1.0 * (b), 0, 0)
#define D2H(nm, st, b) MEMWL("memory.d2h.pinned." nm, st, OP_D2H, (size_t)(b), 0, 0, 1.0 * (b), 0, 0)
/* the driver's device-to-device copy (cudaMemcpyAsync), the anchor of
 * memory.copy: the same bytes through the copy engines' path */
#define D2D(nm, st, b) MEMWL("memory.memcpy.d2d." nm, st, OP_D2D, (size_t)(b), 0, 0, 2.0 * (b), 0, 0)

#define MiB(x) ((x) * 1048576.0)
#define M(x) ((x) * 1048576.0)

static const struct kpt_workload memory_workloads[] = {
	COPY("4MiB", "quick default", MiB(4)),       /* ~7 us, launch- and latency-bound */
	COPY("24MiB", "default", MiB(24)),           /* ~17 us: the short planted-slowdown target */
	COPY("64MiB", "default", MiB(64)),
	COPY("128MiB", "default", MiB(128)),        /* ~90 us: the >= 50 us planted-slowdown target */
	COPY("512MiB", "default bench", MiB(512)),   /* ~350 us: the long planted-slowdown target */
	COPY("1GiB", "bench", MiB(1024)),
	MSET("4MiB", "quick", MiB(4)),
	MSET("256MiB", "default", MiB(256)),
	MSET("1GiB", "bench", MiB(1024)),
	TRIAD("1M", "quick", M(1)),
	TRIAD("64M", "default", M(64)),
	TRIAD("256M", "bench", M(256)),
	TRF("quick", 1024, 1000),
	TRF("default", 8192, 8192),
	TRF("bench", 16384, 16384),
	TRB("quick", 1000, 1024),
	TRB("default", 8192, 8192),
	TRB("bench", 16384, 16384),
	RED("1M", "quick", M(1)),
	RED("64M", "default", M(64)),
	RED("256M", "bench", M(256)),
	H2D("4MiB", "quick", MiB(4)),
	H2D("64MiB", "default bench", MiB(64)),
	D2H("4MiB", "quick", MiB(4)),
	D2H("64MiB", "default bench", MiB(64)),
	D2D("1GiB", "bench", MiB(1024)),
	/* awkward sizes for the GPU tests */
	COPY("0B", "check", 0),
	COPY("1B", "check", 1),
	COPY("1000003B", "check", 1000003),
	MSET("1B", "check", 1),
	MSET("1000003B", "check", 1000003),
	TRIAD("0", "check", 0),
	TRIAD("1", "check", 1),
	TRIAD("1000003", "check", 1000003),
	TRF("check", 1, 1),
	TRF("check", 0, 7),
	TRF("check", 1000, 1003),
	TRF("check", 33, 4097),
	TRB("check", 1, 1),
	TRB("check", 37, 1001),
	TRB("check", 999, 66),
	TRB("check", 130, 4096),
	TRB("check", 66, 130),
	TRB("check", 2, 2),
	RED("0", "check", 0),
	RED("1", "check", 1),
	RED("1000003", "check", 1000003),
	RED("16777217", "check", 16777217),
	H2D("1B", "check", 1),
	H2D("1000003B", "check", 1000003),
	D2H("1000003B", "check", 1000003),
	D2D("1000003B", "check", 1000003),
};

const struct kpt_wl_family kpt_wl_family_memory = {
	"memory", memory_workloads, sizeof memory_workloads / sizeof memory_workloads[0]
};
