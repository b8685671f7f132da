/* kpt_wl_fp8.c - the fp8 family's workloads (see kpt_workload.h).
 *
 * Quantize and dequantize are checked bit for bit against kernels/ref/; the
 * GEMM against a double-precision dot product of the dequantized inputs on
 * up to 256 sampled outputs, within bf16 rounding plus the float32 (or, with
 * fast accumulation, the tensor cores' reduced) accumulation error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_kernels.h"
#include "kpt_workload.h"
#include "ref/kpt_ref.h"

enum fp8_op { OP_QUANT, OP_DEQUANT, OP_GEMM };

struct fp8_cfg {
	enum fp8_op op;
	enum kpt_fp8_fmt fmt, fmt_b;   /* fmt_b: GEMM's B */
	enum kpt_dtype dt;             /* quantize input / dequantize output */
	enum kpt_fp8_scaling sc;
	size_t rows, cols;             /* quantize, dequantize */
	size_t m, n, k;                /* GEMM */
	unsigned flags;                /* GEMM: enum kpt_fp8_gemm_flags */
};

#define MAX_SETS 32
#define ROTATE_BYTES ((size_t)128 << 20)
#define GEMM_SAMPLES 256

struct fp8_set {
	void *x;        /* quantize input (dt) / dequantize output (dt) / GEMM D (bf16) */
	uint8_t *q;     /* quantized data / GEMM A */
	uint8_t *qb;    /* GEMM B */
	float *sinv;    /* scales / GEMM a_scale */
	float *sinvb;   /* GEMM b_scale */
	float *amax;
};

struct fp8_state {
	size_t nsets, next, last, nscale;
	size_t prows, pscale; /* --plant: rows and scales the kernels touch (rows past the data are zeros) */
	struct fp8_set set[MAX_SETS];
	struct kpt_fp8_gemm *gemm;
};

static size_t esize(enum kpt_dtype dt)
{
	return dt == KPT_DT_BF16 ? 2 : 4;
}

static void fp8_teardown(const struct kpt_workload *w, struct kpt_wl_ctx *c)
{
	struct fp8_state *st = c->state;

	if (!st)
		return;
	for (size_t i = 0; i < MAX_SETS; i++) {
		cudaFree(st->set[i].x);
		cudaFree(st->set[i].q);
		cudaFree(st->set[i].qb);
		cudaFree(st->set[i].sinv);
		cudaFree(st->set[i].sinvb);
		cudaFree(st->set[i].amax);
	}
	kpt_fp8_gemm_destroy(st->gemm);
	free(st);
	c->state = NULL;
}

/* Random FP8 data: uniform floats in [-1, 1) quantized with scaling sc. */
static int random_fp8(uint8_t *q, float *sinv, float *amax, size_t rows, size_t cols, enum kpt_fp8_fmt fmt,
		      enum kpt_fp8_scaling sc, uint64_t seed, cudaStream_t s, struct kpt_diag *d)
{
	void *tmp = NULL;
	int rc;

	if (rows * cols == 0)
		return 0;
	if ((rc = KPT_CUDA(d, cudaMalloc(&tmp, rows * cols * 4))) == 0 &&
	    (rc = kpt_wl_fill_f32(tmp, rows * cols, seed, -1.0f, 1.0f, s, d)) == 0 &&
	    (rc = kpt_fp8_quantize(q, sinv, tmp, KPT_DT_F32, rows, cols, fmt, sc, amax, 0, s, d)) == 0)
		rc = KPT_CUDA(d, cudaStreamSynchronize(s));
	cudaFree(tmp);
	return rc;
}

static int fp8_setup(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct fp8_cfg *f = w->cfg;
	struct fp8_state *st = calloc(1, sizeof *st);
	size_t n = f->rows * f->cols, pn, foot;
	int rc = 0;

	if (!(c->state = st))
		return kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory", w->name);
	if (f->op == OP_GEMM) {
		struct fp8_set *s = &st->set[0];

		st->nsets = 1;
		if ((rc = kpt_fp8_gemm_create(&st->gemm, f->m, f->n, f->k, f->fmt, f->fmt_b, f->flags, d)) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc(&s->x, f->m * f->n * 2))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc((void **)&s->q, f->m * f->k))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc((void **)&s->qb, f->n * f->k))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc((void **)&s->sinv, 4))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc((void **)&s->sinvb, 4))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc((void **)&s->amax, 4))) < 0 ||
		    (rc = random_fp8(s->q, s->sinv, s->amax, f->m, f->k, f->fmt, KPT_FP8_PER_TENSOR,
				     kpt_wl_subseed(c->seed, 0), c->stream, d)) < 0)
			return rc;
		return random_fp8(s->qb, s->sinvb, s->amax, f->n, f->k, f->fmt_b, KPT_FP8_PER_TENSOR,
				  kpt_wl_subseed(c->seed, 1), c->stream, d);
	}
	st->nscale = kpt_fp8_scale_count(f->rows, f->cols, f->sc);
	st->prows = kpt_fp8_planted_rows(f->rows, c->plant_pct);
	st->pscale = kpt_fp8_scale_count(st->prows, f->cols, f->sc);
	pn = st->prows * f->cols;
	/* the sets of the unplanted run: a plant adds rows to each, not sets */
	foot = n * (esize(f->dt) + 1) + st->nscale * 4;
	st->nsets = foot == 0 || foot >= ROTATE_BYTES ? 1 : (ROTATE_BYTES + foot - 1) / foot;
	if (st->nsets > MAX_SETS)
		st->nsets = MAX_SETS;
	for (size_t i = 0; i < st->nsets && rc == 0; i++) {
		struct fp8_set *s = &st->set[i];

		if ((rc = KPT_CUDA(d, cudaMalloc(&s->x, pn * esize(f->dt) + 16))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc((void **)&s->q, pn + 16))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc((void **)&s->sinv, st->pscale * 4 + 16))) < 0 ||
		    (rc = KPT_CUDA(d, cudaMalloc((void **)&s->amax, 4))) < 0)
			break;
		/* planted rows: zero inputs (quantize: no amax changes; dequantize:
		 * q and scales 0), read by nothing but the planted launches */
		if (pn > n &&
		    ((rc = KPT_CUDA(d, cudaMemsetAsync((char *)s->x + n * esize(f->dt), 0, (pn - n) * esize(f->dt),
						       c->stream))) < 0 ||
		     (rc = KPT_CUDA(d, cudaMemsetAsync(s->q + n, 0, pn - n, c->stream))) < 0 ||
		     (rc = KPT_CUDA(d, cudaMemsetAsync(s->sinv + st->nscale, 0, (st->pscale - st->nscale) * 4,
						       c->stream))) < 0))
			break;
		if (f->op == OP_DEQUANT)
			rc = random_fp8(s->q, s->sinv, s->amax, f->rows, f->cols, f->fmt, f->sc,
					kpt_wl_subseed(c->seed, i), c->stream, d);
		else if (f->dt == KPT_DT_BF16)
			rc = kpt_wl_fill_bf16(s->x, n, kpt_wl_subseed(c->seed, i), -3.0f, 3.0f, c->stream, d);
		else
			rc = kpt_wl_fill_f32(s->x, n, kpt_wl_subseed(c->seed, i), -3.0f, 3.0f, c->stream, d);
	}
	if (rc == 0)
		rc = KPT_CUDA(d, cudaStreamSynchronize(c->stream));
	return rc;
}

static int fp8_run(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct fp8_cfg *f = w->cfg;
	struct fp8_state *st = c->state;
	struct fp8_set *s = &st->set[st->next];
	int rc = 0;

	switch (f->op) {
	case OP_QUANT:
		rc = kpt_fp8_quantize(s->q, s->sinv, s->x, f->dt, f->rows, f->cols, f->fmt, f->sc, s->amax,
				      c->plant_pct, c->stream, d);
		break;
	case OP_DEQUANT:
		rc = kpt_fp8_dequantize(s->x, f->dt, s->q, s->sinv, st->prows, f->cols, f->fmt, f->sc, c->stream, d);
		break;
	case OP_GEMM:
		rc = kpt_fp8_gemm_run(st->gemm, s->x, s->q, s->qb, s->sinv, s->sinvb, c->stream, d);
		break;
	}
	st->last = st->next;
	st->next = (st->next + 1) % st->nsets;
	return rc;
}

static int fp8_poison(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct fp8_cfg *f = w->cfg;
	struct fp8_state *st = c->state;
	struct fp8_set *s = &st->set[st->next];
	int rc;

	switch (f->op) {
	case OP_QUANT:
		if ((rc = kpt_wl_poison(s->q, f->rows * f->cols, c->stream, d)) < 0)
			return rc;
		return kpt_wl_poison(s->sinv, st->nscale * 4, c->stream, d);
	case OP_DEQUANT:
		return kpt_wl_poison(s->x, f->rows * f->cols * esize(f->dt), c->stream, d);
	case OP_GEMM:
		return kpt_wl_poison(s->x, f->m * f->n * 2, c->stream, d);
	}
	return 0;
}

static int fetch(void **host, const void *dev, size_t bytes, struct kpt_diag *d)
{
	if (!(*host = malloc(bytes ? bytes : 1)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for a check (%zu bytes)", bytes);
	return bytes ? KPT_CUDA(d, cudaMemcpy(*host, dev, bytes, cudaMemcpyDeviceToHost)) : 0;
}

static int first_diff(const void *a, const void *b, size_t n, size_t esz)
{
	for (size_t i = 0; i < n; i++)
		if (memcmp((const char *)a + i * esz, (const char *)b + i * esz, esz) != 0)
			return (int)(i < 0x7FFFFFFF ? i : 0x7FFFFFFF);
	return -1;
}

static int check_quant(const struct kpt_workload *w, const struct fp8_cfg *f, struct fp8_state *st,
		       struct fp8_set *s, struct kpt_diag *d)
{
	size_t n = f->rows * f->cols;
	void *x = NULL, *q = NULL, *sinv = NULL, *wq = malloc(n + 1), *ws = malloc(st->nscale * 4 + 4);
	int rc, bad;

	if ((rc = fetch(&x, s->x, n * esize(f->dt), d)) < 0 || (rc = fetch(&q, s->q, n, d)) < 0 ||
	    (rc = fetch(&sinv, s->sinv, st->nscale * 4, d)) < 0)
		goto done;
	if (!wq || !ws) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory for the check", w->name);
		goto done;
	}
	kpt_ref_fp8_quantize(wq, ws, x, (int)f->dt, f->rows, f->cols, (int)f->fmt, (int)f->sc);
	if ((bad = first_diff(sinv, ws, st->nscale, 4)) >= 0)
		rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: scale_inv[%d] = %.9g, want %.9g", w->name, bad,
				  ((float *)sinv)[bad], ((float *)ws)[bad]);
	else if ((bad = first_diff(q, wq, n, 1)) >= 0)
		rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: q[%d] (row %zu) = 0x%02x, want 0x%02x from x = %.9g",
				  w->name, bad, (size_t)bad / f->cols, ((uint8_t *)q)[bad], ((uint8_t *)wq)[bad],
				  kpt_ref_load(x, (int)f->dt, (size_t)bad));
done:
	free(x);
	free(q);
	free(sinv);
	free(wq);
	free(ws);
	return rc;
}

static int check_dequant(const struct kpt_workload *w, const struct fp8_cfg *f, struct fp8_state *st,
			 struct fp8_set *s, struct kpt_diag *d)
{
	size_t n = f->rows * f->cols, es = esize(f->dt);
	void *y = NULL, *q = NULL, *sinv = NULL, *wy = malloc(n * es + 1);
	int rc, bad;

	if ((rc = fetch(&y, s->x, n * es, d)) < 0 || (rc = fetch(&q, s->q, n, d)) < 0 ||
	    (rc = fetch(&sinv, s->sinv, st->nscale * 4, d)) < 0)
		goto done;
	if (!wy) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory for the check", w->name);
		goto done;
	}
	kpt_ref_fp8_dequantize(wy, (int)f->dt, q, sinv, f->rows, f->cols, (int)f->fmt, (int)f->sc);
	if ((bad = first_diff(y, wy, n, es)) >= 0)
		rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: y[%d] = %.9g, want %.9g (q = 0x%02x)", w->name,
				  bad, kpt_ref_load(y, (int)f->dt, (size_t)bad), kpt_ref_load(wy, (int)f->dt, (size_t)bad),
				  ((uint8_t *)q)[bad]);
done:
	free(y);
	free(q);
	free(sinv);
	free(wy);
	return rc;
}

static int check_gemm(const struct kpt_workload *w, const struct fp8_cfg *f, struct fp8_set *s, uint64_t seed,
		      struct kpt_diag *d)
{
	void *dm = NULL, *a = NULL, *b = NULL, *sa = NULL, *sb = NULL;
	size_t total = f->m * f->n, samples = total < GEMM_SAMPLES ? total : GEMM_SAMPLES;
	/* Hopper's FP8 tensor cores add products into a sum with about 14
	 * mantissa bits before cuBLASLt promotes it to float32 (each few
	 * k-steps, or, with fast accumulation, rarely): measured errors reach
	 * 2^-16 of sum |a*b| at k = 256; allow 2^-11. A wrong layout or scale
	 * is off by the order of the value itself. */
	double acc_eps = (f->flags & KPT_FP8_GEMM_FAST_ACCUM) ? 0x1p-9 : 0x1p-11;
	int rc;

	if ((rc = fetch(&dm, s->x, total * 2, d)) < 0 || (rc = fetch(&a, s->q, f->m * f->k, d)) < 0 ||
	    (rc = fetch(&b, s->qb, f->n * f->k, d)) < 0 || (rc = fetch(&sa, s->sinv, 4, d)) < 0 ||
	    (rc = fetch(&sb, s->sinvb, 4, d)) < 0)
		goto done;
	for (size_t t = 0; t < samples && rc == 0; t++) {
		size_t idx = samples == total ? t : (size_t)(kpt_wl_subseed(seed, t) % total);
		size_t i = idx / f->n, j = idx % f->n;
		double sum = 0.0, mag = 0.0, scale = (double)*(float *)sa * (double)*(float *)sb, got, want, tol;

		for (size_t k = 0; k < f->k; k++) {
			double p = (double)kpt_ref_f32_from_fp8(((uint8_t *)a)[i * f->k + k], (int)f->fmt) *
				   (double)kpt_ref_f32_from_fp8(((uint8_t *)b)[j * f->k + k], (int)f->fmt_b);

			sum += p;
			mag += fabs(p);
		}
		want = sum * scale;
		got = kpt_ref_f32_from_bf16(((uint16_t *)dm)[idx]);
		tol = 0x1p-8 * fabs(want) + acc_eps * mag * scale + 1e-30;
		if (!(fabs(got - want) <= tol))
			rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: D[%zu][%zu] = %.6g, want %.6g (tolerance %.3g)",
					  w->name, i, j, got, want, tol);
	}
done:
	free(dm);
	free(a);
	free(b);
	free(sa);
	free(sb);
	return rc;
}

static int fp8_check(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct fp8_cfg *f = w->cfg;
	struct fp8_state *st = c->state;
	struct fp8_set *s = &st->set[st->last];
	int rc;

	if ((rc = KPT_CUDA(d, cudaStreamSynchronize(c->stream))) < 0)
		return rc;
	switch (f->op) {
	case OP_QUANT: return check_quant(w, f, st, s, d);
	case OP_DEQUANT: return check_dequant(w, f, st, s, d);
	case OP_GEMM: return check_gemm(w, f, s, c->seed, d);
	}
	return 0;
}

/* ---- the table --------------------------------------------------------------- */

#define CDIV(a, b) (((a) + (b) - 1) / (b))
#define NSCALES(sc, r, c)                                                                     \
	((sc) == KPT_FP8_PER_TENSOR ? 1.0                                                     \
	 : (sc) == KPT_FP8_PER_TOKEN ? (double)(r)                                            \
	 : (sc) == KPT_FP8_BLOCK_1x128 ? (double)(r) * CDIV((c), 128)                         \
				      : (double)CDIV((r), 128) * CDIV((c), 128))
#define DTSZ(dt) ((dt) == KPT_DT_BF16 ? 2.0 : 4.0)
#define HOOKS .setup = fp8_setup, .run = fp8_run, .poison = fp8_poison, .check = fp8_check, .teardown = fp8_teardown

/* Quantize: reads x once, writes q and the scales once. Quantize and
 * dequantize are plantable: --plant PCT runs the same kernels over PCT% more
 * rows of zeros past the data (kpt_fp8_planted_rows; kpt_kernels.h), which
 * nothing else reads, so the extra bytes come from DRAM and the data's
 * outputs are bit-identical. (The first plan re-quantized the first PCT% of
 * the rows: the next iteration found them in L2, 69.94 -> 70.04 us on an
 * H100, no slowdown.) */
#define QUANT(fs, fm, ds, dty, ss, sca, r, c, st)                                                       \
	{ .name = "fp8.quant." fs "." ds "." ss "." #r "x" #c, .family = "fp8", .suites = st,        \
	  .flops = 0, .bytes = (double)(r) * (c) * (DTSZ(dty) + 1.0) + 4.0 * NSCALES(sca, r, c),        \
	  .cfg = &(const struct fp8_cfg){ .op = OP_QUANT, .fmt = fm, .dt = dty, .sc = sca, .rows = r, .cols = c }, \
	  .plantable = 1, HOOKS }
#define DEQUANT(fs, fm, ds, dty, ss, sca, r, c, st)                                                     \
	{ .name = "fp8.dequant." fs "." ds "." ss "." #r "x" #c, .family = "fp8", .suites = st,      \
	  .flops = 0, .bytes = (double)(r) * (c) * (DTSZ(dty) + 1.0) + 4.0 * NSCALES(sca, r, c),        \
	  .cfg = &(const struct fp8_cfg){ .op = OP_DEQUANT, .fmt = fm, .dt = dty, .sc = sca, .rows = r, .cols = c }, \
	  .plantable = 1, HOOKS }
#define GEMM(fs, fa, fb, m_, n_, k_, fl, tail, st)                                                     \
	{ .name = "fp8.gemm." fs "." #m_ "x" #n_ "x" #k_ tail, .family = "fp8", .suites = st,        \
	  .flops = 2.0 * (m_) * (n_) * (k_), .bytes = (double)(m_) * (k_) + (double)(n_) * (k_) + 2.0 * (m_) * (n_), \
	  .cfg = &(const struct fp8_cfg){ .op = OP_GEMM, .fmt = fa, .fmt_b = fb, .m = m_, .n = n_, .k = k_, .flags = fl }, \
	  .plantable = 0, HOOKS } /* cuBLASLt's kernel: kernels/README.md */

#define E4 "e4m3", KPT_FP8_E4M3
#define E5 "e5m2", KPT_FP8_E5M2
#define BF "bf16", KPT_DT_BF16
#define F32 "f32", KPT_DT_F32
#define TENSOR "per_tensor", KPT_FP8_PER_TENSOR
#define TOKEN "per_token", KPT_FP8_PER_TOKEN
#define B1 "block1x128", KPT_FP8_BLOCK_1x128
#define B128 "block128x128", KPT_FP8_BLOCK_128x128

/* QUANT/DEQUANT take their arguments through these so E4 etc. expand first. */
#define Q(...) QUANT(__VA_ARGS__)
#define DQ(...) DEQUANT(__VA_ARGS__)
/* Every scaling of one format and type at one awkward shape (check suite). */
#define Q4(fs, fm, ds, dty, r, c) Q(fs, fm, ds, dty, TENSOR, r, c, "check"), \
	Q(fs, fm, ds, dty, TOKEN, r, c, "check"), Q(fs, fm, ds, dty, B1, r, c, "check"), \
	Q(fs, fm, ds, dty, B128, r, c, "check")
#define QSH(fs, fm, ds, dty) Q4(fs, fm, ds, dty, 1, 1), Q4(fs, fm, ds, dty, 257, 1001), \
	Q4(fs, fm, ds, dty, 131, 4100)
#define QSHAPES(...) QSH(__VA_ARGS__)

static const struct kpt_workload fp8_workloads[] = {
	Q(E4, BF, TENSOR, 1024, 1024, "quick"),
	Q(E4, BF, TOKEN, 1024, 1024, "quick"),
	Q(E4, BF, B1, 1024, 1024, "quick"),
	Q(E4, BF, B128, 1024, 1024, "quick"),
	Q(E5, F32, TOKEN, 1024, 1024, "quick"),
	DQ(E4, BF, TOKEN, 1024, 1024, "quick"),
	GEMM("e4m3xe4m3", KPT_FP8_E4M3, KPT_FP8_E4M3, 256, 256, 256, 0, "", "quick"),

	Q(E4, BF, TENSOR, 8192, 8192, "default"),
	Q(E4, BF, TOKEN, 8192, 8192, "default"),
	Q(E4, BF, B1, 8192, 8192, "default"),
	Q(E4, BF, B128, 8192, 8192, "default"),
	Q(E4, F32, TOKEN, 8192, 8192, "default"),
	DQ(E4, BF, TOKEN, 8192, 8192, "default"),

	Q(E4, BF, TENSOR, 4096, 7168, "seed"),
	Q(E4, BF, TOKEN, 4096, 7168, "seed"),
	Q(E4, BF, B1, 4096, 7168, "seed"),
	Q(E4, BF, B128, 4096, 7168, "seed"),
	Q(E5, BF, TENSOR, 4096, 7168, "seed"),
	Q(E5, BF, TOKEN, 4096, 7168, "seed"),
	Q(E5, BF, B1, 4096, 7168, "seed"),
	Q(E5, BF, B128, 4096, 7168, "seed"),
	DQ(E4, BF, B128, 4096, 7168, "seed"),
	DQ(E5, BF, TOKEN, 4096, 7168, "seed"),
	GEMM("e4m3xe4m3", KPT_FP8_E4M3, KPT_FP8_E4M3, 4096, 4096, 4096, 0, "", "default"),
	GEMM("e4m3xe4m3", KPT_FP8_E4M3, KPT_FP8_E4M3, 8192, 8192, 8192, 0, "", "default seed bench"),
	GEMM("e4m3xe4m3", KPT_FP8_E4M3, KPT_FP8_E4M3, 8192, 8192, 8192, KPT_FP8_GEMM_FAST_ACCUM, ".fastacc", "bench"),
	GEMM("e4m3xe5m2", KPT_FP8_E4M3, KPT_FP8_E5M2, 8192, 8192, 8192, 0, "", "seed"),

	Q(E4, BF, TENSOR, 16384, 8192, "bench"),
	Q(E4, BF, TOKEN, 16384, 8192, "bench"),
	Q(E4, BF, B1, 16384, 8192, "bench"),
	Q(E4, BF, B128, 16384, 8192, "bench"),
	Q(E4, F32, TENSOR, 16384, 8192, "bench"),
	Q(E4, F32, TOKEN, 16384, 8192, "bench"),
	Q(E4, F32, B1, 16384, 8192, "bench"),
	Q(E4, F32, B128, 16384, 8192, "bench"),
	Q(E5, BF, TOKEN, 16384, 8192, "bench"),
	DQ(E4, BF, TOKEN, 16384, 8192, "bench"),

	/* awkward shapes for the GPU tests: bit-exact against kernels/ref/ */
	QSHAPES(E4, BF), QSHAPES(E4, F32), QSHAPES(E5, BF), QSHAPES(E5, F32),
	Q(E4, BF, TOKEN, 0, 0, "check"),
	Q(E4, BF, TENSOR, 0, 0, "check"),
	Q(E4, BF, B128, 300, 384, "check"),
	Q(E4, BF, B1, 300, 384, "check"),
	Q(E5, F32, B1, 5, 256, "check"),
	Q(E4, F32, TOKEN, 7, 128, "check"),
	Q(E4, BF, TOKEN, 3, 100003, "check"),
	DQ(E4, BF, TOKEN, 257, 1001, "check"),
	DQ(E4, F32, B128, 300, 384, "check"),
	DQ(E5, BF, B1, 131, 4100, "check"),
	DQ(E5, F32, TENSOR, 257, 1001, "check"),
	GEMM("e4m3xe4m3", KPT_FP8_E4M3, KPT_FP8_E4M3, 48, 80, 272, 0, "", "check"),
	GEMM("e4m3xe5m2", KPT_FP8_E4M3, KPT_FP8_E5M2, 48, 80, 272, 0, "", "check"),
	GEMM("e4m3xe4m3", KPT_FP8_E4M3, KPT_FP8_E4M3, 48, 80, 272, KPT_FP8_GEMM_FAST_ACCUM, ".fastacc", "check"),
};

const struct kpt_wl_family kpt_wl_family_fp8 = {
	"fp8", fp8_workloads, sizeof fp8_workloads / sizeof fp8_workloads[0]
};
