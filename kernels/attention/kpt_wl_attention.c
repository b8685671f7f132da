/* kpt_wl_attention.c - the attention family's workloads (see kpt_workload.h).
 *
 * Forward: batch * seq = 16k tokens of hidden 2048 (heads = 2048 / head_dim)
 * unless the table says otherwise, [B, H, S, D] layout. Decode: 8 sequences
 * of 32 heads against a KV cache of ctx rows; small caches rotate over
 * several buffer sets so one pass exceeds the L2 (every iteration reads the
 * cache from DRAM, as its byte count claims). Checks compare sampled rows
 * with the float64 reference of ref_attention.h (relative error < 1e-2 for
 * bf16, 5e-3 for fp16). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_attention.h"
#include "kpt_workload.h"
#include "ref_attention.h"

enum attn_op { OP_FWD, OP_DECODE };

struct attn_cfg {
	enum attn_op op;
	enum kpt_attn_dtype dt;
	int batch, heads, seq, head_dim; /* seq: the cache length for decode */
	int causal;
};

#define MAX_SETS 16
#define ROTATE_BYTES ((size_t)128 << 20)
#define CHECK_ROWS 24

struct attn_state {
	size_t nsets, next, last;
	size_t nq, nkv;              /* elements of q (and o), of k (and v) per set */
	void *q[MAX_SETS], *k[MAX_SETS], *v[MAX_SETS], *o[MAX_SETS];
	void *ws;
	size_t ws_bytes;
};

static void attn_teardown(const struct kpt_workload *w, struct kpt_wl_ctx *c)
{
	struct attn_state *st = c->state;

	if (!st)
		return;
	for (size_t i = 0; i < MAX_SETS; i++) {
		cudaFree(st->q[i]);
		cudaFree(st->k[i]);
		cudaFree(st->v[i]);
		cudaFree(st->o[i]);
	}
	cudaFree(st->ws);
	free(st);
	c->state = NULL;
}

static int attn_setup(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct attn_cfg *a = w->cfg;
	struct attn_state *st = calloc(1, sizeof *st);
	size_t foot, plant; /* plant: decode --plant memory after each K cache */
	int rc = 0;

	if (!(c->state = st))
		return kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory", w->name);
	if (a->op == OP_FWD) {
		st->nq = st->nkv = (size_t)a->batch * a->heads * a->seq * a->head_dim;
	} else {
		st->nq = (size_t)a->batch * a->heads * a->head_dim;
		st->nkv = (size_t)a->batch * a->heads * a->seq * a->head_dim;
	}
	foot = (2 * st->nq + 2 * st->nkv) * 2;
	st->nsets = a->op == OP_FWD || foot >= ROTATE_BYTES ? 1 : (ROTATE_BYTES + foot - 1) / foot;
	if (st->nsets > MAX_SETS)
		st->nsets = MAX_SETS;
	plant = a->op == OP_DECODE ? kpt_attn_decode_plant_bytes(a->batch, a->heads, a->seq, a->head_dim, c->plant_pct) : 0;
	for (size_t i = 0; i < st->nsets && rc == 0; i++) {
		if ((rc = KPT_CUDA(d, cudaMalloc(&st->q[i], st->nq * 2))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc(&st->o[i], st->nq * 2))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc(&st->k[i], st->nkv * 2 + plant))) < 0 ||
		    (plant && (rc = KPT_CUDA(d, cudaMemsetAsync((char *)st->k[i] + st->nkv * 2, 0x3c, plant, c->stream))) < 0) ||
		    (rc = KPT_CUDA(d, cudaMalloc(&st->v[i], st->nkv * 2))) < 0)
			break;
		/* bf16 fill for both types: fp16 workloads read the same bits as
		 * fp16 numbers, which for values in [-1, 1) are finite and non-zero
		 * except with negligible probability. */
		if ((rc = kpt_wl_fill_bf16(st->q[i], st->nq, kpt_wl_subseed(c->seed, 4 * i), -1.f, 1.f, c->stream, d)) < 0 ||
		    (rc = kpt_wl_fill_bf16(st->k[i], st->nkv, kpt_wl_subseed(c->seed, 4 * i + 1), -1.f, 1.f, c->stream,
					   d)) < 0 ||
		    (rc = kpt_wl_fill_bf16(st->v[i], st->nkv, kpt_wl_subseed(c->seed, 4 * i + 2), -1.f, 1.f, c->stream,
					   d)) < 0)
			break;
	}
	if (rc == 0 && a->op == OP_DECODE) {
		st->ws_bytes = kpt_attn_decode_ws_bytes(a->batch, a->heads, a->seq, a->head_dim);
		rc = KPT_CUDA(d, cudaMalloc(&st->ws, st->ws_bytes));
	}
	if (rc == 0)
		rc = KPT_CUDA(d, cudaStreamSynchronize(c->stream));
	return rc;
}

static void fwd_args(const struct attn_cfg *a, const struct attn_state *st, size_t set, struct kpt_attn_fwd_args *f)
{
	memset(f, 0, sizeof *f);
	f->q = st->q[set], f->k = st->k[set], f->v = st->v[set], f->o = st->o[set];
	f->batch = a->batch, f->heads = a->heads, f->seq = a->seq, f->head_dim = a->head_dim;
	f->stride_s = a->head_dim;
	f->stride_h = (long long)a->seq * a->head_dim;
	f->stride_b = (long long)a->heads * a->seq * a->head_dim;
	f->scale = 1.0f / sqrtf((float)a->head_dim);
	f->causal = a->causal;
	f->dtype = a->dt;
	f->tiles = KPT_ATTN_TILES_AUTO;
}

static void dec_args(const struct attn_cfg *a, const struct attn_state *st, size_t set, struct kpt_attn_decode_args *f)
{
	memset(f, 0, sizeof *f);
	f->q = st->q[set], f->k_cache = st->k[set], f->v_cache = st->v[set], f->o = st->o[set];
	f->batch = a->batch, f->heads = a->heads, f->kv_heads = a->heads, f->ctx = a->seq;
	f->head_dim = a->head_dim;
	f->kv_stride_s = a->head_dim;
	f->kv_stride_h = (long long)a->seq * a->head_dim;
	f->kv_stride_b = (long long)a->heads * a->seq * a->head_dim;
	f->scale = 1.0f / sqrtf((float)a->head_dim);
	f->dtype = a->dt;
	f->ws = st->ws, f->ws_bytes = st->ws_bytes;
}

static int attn_run(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct attn_cfg *a = w->cfg;
	struct attn_state *st = c->state;
	int rc;

	if (a->op == OP_FWD) {
		struct kpt_attn_fwd_args f;

		fwd_args(a, st, st->next, &f);
		f.plant_pct = c->plant_pct;
		rc = kpt_attn_fwd(&f, c->stream, d);
	} else {
		struct kpt_attn_decode_args f;

		dec_args(a, st, st->next, &f);
		f.plant_pct = c->plant_pct;
		f.plant = (char *)st->k[st->next] + st->nkv * 2;
		f.plant_bytes = kpt_attn_decode_plant_bytes(a->batch, a->heads, a->seq, a->head_dim, c->plant_pct);
		rc = kpt_attn_decode(&f, c->stream, d);
	}
	st->last = st->next;
	st->next = (st->next + 1) % st->nsets;
	return rc;
}

static int attn_poison(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	struct attn_state *st = c->state;

	return kpt_wl_poison(st->o[st->next], st->nq * 2, c->stream, d);
}

static float h16(uint16_t b, enum kpt_attn_dtype dt)
{
	if (dt == KPT_ATTN_BF16) {
		uint32_t u = (uint32_t)b << 16;
		float f;

		memcpy(&f, &u, 4);
		return f;
	}
	/* IEEE half -> float */
	uint32_t s = (uint32_t)(b >> 15) << 31, e = (b >> 10) & 31, m = b & 1023, u;
	float f;

	if (e == 0) {
		f = ldexpf((float)m, -24);
		return s ? -f : f;
	}
	u = e == 31 ? s | 0x7F800000u | (m << 13) : s | ((e + 112) << 23) | (m << 13);
	memcpy(&f, &u, 4);
	return f;
}

static int to_float(float **out, const void *dev, size_t n, enum kpt_attn_dtype dt, struct kpt_diag *d)
{
	uint16_t *h = malloc(n * 2 + 2);
	int rc;

	*out = malloc(n * 4 + 4);
	if (!h || !*out) {
		free(h);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for a check (%zu elements)", n);
	}
	if ((rc = KPT_CUDA(d, cudaMemcpy(h, dev, n * 2, cudaMemcpyDeviceToHost))) == 0)
		for (size_t i = 0; i < n; i++)
			(*out)[i] = h16(h[i], dt);
	free(h);
	return rc;
}

static int attn_check(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct attn_cfg *a = w->cfg;
	struct attn_state *st = c->state;
	const size_t s = st->last;
	const int D = a->head_dim;
	float *q = NULL, *k = NULL, *v = NULL, *o = NULL;
	double *ref = malloc((size_t)D * sizeof *ref), num = 0, den = 0, tol = a->dt == KPT_ATTN_BF16 ? 1e-2 : 5e-3;
	long long bad = 0;
	int rc;

	if (!ref)
		return kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory for the check", w->name);
	if ((rc = to_float(&q, st->q[s], st->nq, a->dt, d)) < 0 || (rc = to_float(&k, st->k[s], st->nkv, a->dt, d)) < 0 ||
	    (rc = to_float(&v, st->v[s], st->nkv, a->dt, d)) < 0 || (rc = to_float(&o, st->o[s], st->nq, a->dt, d)) < 0)
		goto done;
	for (size_t i = 0; i < st->nq; i++)
		bad += !isfinite(o[i]);
	/* The first and the last (batch, head); up to CHECK_ROWS rows of each
	 * including the last row. */
	for (int pick = 0; pick < 2; pick++) {
		int b = pick ? a->batch - 1 : 0, h = pick ? a->heads - 1 : 0;
		int rows = a->op == OP_FWD ? a->seq : 1, step = rows > CHECK_ROWS ? rows / CHECK_ROWS : 1;
		size_t kvbase = ((size_t)b * a->heads + h) * (size_t)a->seq * D;

		for (int r = 0; r < rows; r = r + step < rows || r == rows - 1 ? r + step : rows - 1) {
			size_t qi = a->op == OP_FWD ? kvbase + (size_t)r * D : ((size_t)b * a->heads + h) * D;
			int nkeys = a->op == OP_FWD && a->causal ? r + 1 : a->seq;

			if (kpt_ref_attn_row(q + qi, k + kvbase, v + kvbase, D, nkeys, D, 1.0 / sqrt((double)D), ref)) {
				rc = kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory for the check", w->name);
				goto done;
			}
			for (int x = 0; x < D; x++) {
				num += (o[qi + x] - ref[x]) * (o[qi + x] - ref[x]);
				den += ref[x] * ref[x];
			}
		}
	}
	if (bad)
		rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: %lld outputs not written or not finite", w->name, bad);
	else if (!(sqrt(num / den) < tol))
		rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: relative error %.3g against the float64 reference (tolerance %.0e)",
				  w->name, sqrt(num / den), tol);
done:
	free(q);
	free(k);
	free(v);
	free(o);
	free(ref);
	return rc;
}

#define HOOKS 1, attn_setup, attn_run, attn_poison, attn_check, attn_teardown
/* Forward: plantable at head dim 128 (the wgmma kernel; kpt_attention.h). */
#define HOOKSD(D) D == 128, attn_setup, attn_run, attn_poison, attn_check, attn_teardown
/* Forward with batch * seq = 16k tokens of hidden 2048. */
#define FWD(DT, DTN, D, S, C, CN, SUITES)                                                                 \
	{ "attention.fwd." DTN ".d" #D ".s" #S CN, "attention", SUITES,                                      \
	  4.0 * (16384 / S) * (2048 / D) * (double)S * S * D / (C ? 2 : 1), 4.0 * 16384 * 2048 * 2,          \
	  &(const struct attn_cfg){ OP_FWD, DT, 16384 / S, 2048 / D, S, D, C }, HOOKSD(D) }
/* Forward at an explicit shape (small and awkward sizes). */
#define FWDX(DT, DTN, B, H, S, D, C, CN, SUITES)                                                          \
	{ "attention.fwd." DTN ".d" #D ".s" #S ".b" #B "h" #H CN, "attention", SUITES,                     \
	  4.0 * B * H * (double)S * S * D / (C ? 2 : 1), 4.0 * B * H * S * D * 2,                           \
	  &(const struct attn_cfg){ OP_FWD, DT, B, H, S, D, C }, HOOKSD(D) }
/* Decode: one token of B sequences x H heads against a cache of L rows. */
#define DEC(B, H, L, D, SUITES)                                                                            \
	{ "attention.decode.bf16.d" #D ".ctx" #L ".b" #B "h" #H, "attention", SUITES,                       \
	  4.0 * B * H * (double)L * D, 2.0 * B * H * (double)L * D * 2 + 2.0 * B * H * D * 2,             \
	  &(const struct attn_cfg){ OP_DECODE, KPT_ATTN_BF16, B, H, L, D, 0 }, HOOKS }

static const struct kpt_workload attention_workloads[] = {
	FWDX(KPT_ATTN_BF16, "bf16", 1, 4, 256, 64, 0, "", "quick"),
	DEC(1, 8, 128, 128, "quick"),

	FWD(KPT_ATTN_BF16, "bf16", 128, 2048, 0, "", "seed default"),
	FWD(KPT_ATTN_BF16, "bf16", 128, 16384, 0, "", "seed default bench"),
	FWD(KPT_ATTN_BF16, "bf16", 128, 2048, 1, ".causal", "default"),
	FWD(KPT_ATTN_BF16, "bf16", 128, 16384, 1, ".causal", "bench"),
	FWD(KPT_ATTN_BF16, "bf16", 64, 2048, 0, "", "default"),
	FWD(KPT_ATTN_BF16, "bf16", 64, 16384, 0, "", "bench"),
	FWD(KPT_ATTN_BF16, "bf16", 64, 16384, 1, ".causal", "bench"),
	FWD(KPT_ATTN_FP16, "fp16", 128, 2048, 0, "", "default"),
	FWD(KPT_ATTN_FP16, "fp16", 128, 16384, 0, "", "bench"),
	DEC(8, 32, 128, 128, "seed"),
	DEC(8, 32, 256, 128, "seed"),
	DEC(8, 32, 512, 128, "seed default"),
	DEC(8, 32, 1024, 128, "seed default"),
	DEC(8, 32, 4096, 128, "default bench"),
	DEC(8, 32, 32768, 128, "bench"),

	FWDX(KPT_ATTN_BF16, "bf16", 2, 3, 1, 128, 0, "", "check"),
	FWDX(KPT_ATTN_BF16, "bf16", 2, 3, 77, 128, 1, ".causal", "check"),
	FWDX(KPT_ATTN_FP16, "fp16", 1, 2, 1031, 64, 0, "", "check"),
	FWDX(KPT_ATTN_BF16, "bf16", 1, 2, 1031, 64, 1, ".causal", "check"),
	DEC(3, 4, 1, 128, "check"),
	DEC(2, 4, 1000, 64, "check"),
};

const struct kpt_wl_family kpt_wl_family_attention = {
	"attention", attention_workloads, sizeof attention_workloads / sizeof attention_workloads[0]
};
