/* kpt_kernels.h - launchers of the memory and FP8 kernels (libkptkernels).
 *
 * Every launcher enqueues its work on stream s and returns without
 * synchronising: 0, or a negative enum kpt_err with d filled (KPT_E_INVAL for
 * bad arguments, KPT_E_CUDA when a launch fails). Each launch site is wrapped
 * in an NVTX range named after the launcher ("kpt_copy", ...). Device
 * pointers come from cudaMalloc (256-byte aligned); unaligned pointers are
 * accepted and take a slower scalar path. n = 0 is valid and does nothing
 * visible. The CPU references with the same contracts are in kernels/ref/.
 */
#ifndef KPT_KERNELS_H
#define KPT_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* lib/kpt_err.h has no C++ guard of its own: include it as C. */
#include "kpt_err.h"

/* ---- memory --------------------------------------------------------------- */

/* Buffer size that kpt_copy / kpt_triad touch for `bytes` of data with
 * extra_pct% planted work: the extra part is whole 16-byte vectors. */
static inline size_t kpt_planted_bytes(size_t bytes, int extra_pct)
{
	return bytes + 16 * (size_t)((double)(bytes / 16) * (extra_pct > 0 ? extra_pct : 0) / 100.0);
}

/* dst[0..bytes) = src[0..bytes), 16-byte vector accesses. extra_pct > 0 is
 * the analyzer's planted slowdown: the same kernel also copies the next
 * extra_pct% of the buffers (src and dst must then hold
 * kpt_planted_bytes(bytes, extra_pct) bytes), so it does extra_pct% more real
 * work on memory that no other part of the launch touches. dst[0..bytes) is
 * unchanged. (Re-copying the first part of the data instead made the extra
 * work hit L2: +0.6% for a planted 2% on an H100, none for small copies.) */
int kpt_copy(void *dst, const void *src, size_t bytes, int extra_pct, cudaStream_t s, struct kpt_diag *d);
/* Every byte of dst[0..bytes) = value & 0xFF, 16-byte vector stores.
 * extra_pct as for kpt_copy (planted: the same value is also stored past
 * the data; dst then holds kpt_planted_bytes(bytes, extra_pct) bytes). */
int kpt_memset(void *dst, int value, size_t bytes, int extra_pct, cudaStream_t s, struct kpt_diag *d);
/* STREAM triad a[i] = b[i] + q * c[i] (float32, fused multiply-add).
 * extra_pct as for kpt_copy: a, b and c then hold
 * kpt_planted_bytes(4 * n, extra_pct) bytes. */
int kpt_triad(float *a, const float *b, const float *c, float q, size_t n, int extra_pct,
	      cudaStream_t s, struct kpt_diag *d);
/* out[c][r] = in[r][c] for an in of rows x cols, row-major, tiled through
 * shared memory. _bf16 moves 16-bit elements (bit copies). */
int kpt_transpose_f32(float *out, const float *in, size_t rows, size_t cols, cudaStream_t s, struct kpt_diag *d);
int kpt_transpose_bf16(uint16_t *out, const uint16_t *in, size_t rows, size_t cols, cudaStream_t s, struct kpt_diag *d);
/* *out = sum of in[0..n) (float32 partials per thread and block, summed by
 * the last block in a fixed order: the result is deterministic for a given
 * n and GPU). ws is device memory of kpt_reduce_sum_ws_bytes() bytes, zeroed
 * once before first use; the kernel leaves it ready for the next call. n = 0
 * writes 0. */
size_t kpt_reduce_sum_ws_bytes(void);
/* extra_pct > 0 (planted slowdown, n a multiple of 4 and in 16-byte
 * aligned; else ignored): the kernel also reads the next extra_pct% of in,
 * which must then hold kpt_planted_bytes(4 * n, extra_pct) bytes, zeros
 * past the data (the sum is bit-identical unless a partial sum is -0). */
int kpt_reduce_sum_f32(float *out, const float *in, size_t n, int extra_pct, void *ws, cudaStream_t s,
		       struct kpt_diag *d);
/* Pinned host <-> device copies (cudaMemcpyAsync); host memory from
 * cudaMallocHost/cudaHostAlloc. kpt_copy_d2d: the driver's device-to-device
 * cudaMemcpyAsync, the anchor kpt_copy is measured against. */
int kpt_copy_h2d(void *dst, const void *host_src, size_t bytes, cudaStream_t s, struct kpt_diag *d);
int kpt_copy_d2h(void *host_dst, const void *src, size_t bytes, cudaStream_t s, struct kpt_diag *d);
int kpt_copy_d2d(void *dst, const void *src, size_t bytes, cudaStream_t s, struct kpt_diag *d);

/* ---- FP8 ------------------------------------------------------------------ */

enum kpt_dtype { KPT_DT_F32 = 0, KPT_DT_BF16 = 1 };
/* OCP FP8: E4M3 (max 448, no infinities, NaN = S.1111.111) and E5M2
 * (max 57344, IEEE-like). */
enum kpt_fp8_fmt { KPT_FP8_E4M3 = 0, KPT_FP8_E5M2 = 1 };
enum kpt_fp8_scaling {
	KPT_FP8_PER_TENSOR = 0,   /* one scale; amax computed on the GPU (two passes) */
	KPT_FP8_PER_TOKEN = 1,    /* one scale per row */
	KPT_FP8_BLOCK_1x128 = 2,  /* one per row and 128 columns */
	KPT_FP8_BLOCK_128x128 = 3 /* one per 128 rows and 128 columns */
};

/* Largest finite value of fmt (448 or 57344). */
float kpt_fp8_max(enum kpt_fp8_fmt fmt);
/* Number of scales quantize writes for a rows x cols tensor, row-major in the
 * order of the groups (per block: [ceil(rows/gr)][ceil(cols/128)]). */
size_t kpt_fp8_scale_count(size_t rows, size_t cols, enum kpt_fp8_scaling sc);

/* Rows that a planted quantize or dequantize touches: rows and extra_pct%
 * more (rounded to nearest), past the data (kpt_fp8_quantize). */
static inline size_t kpt_fp8_planted_rows(size_t rows, int extra_pct)
{
	return rows + (size_t)((double)rows * (extra_pct > 0 ? extra_pct : 0) / 100.0 + 0.5);
}

/* q = fp8(x * (max / amax_g)) per group g, rounded to nearest even and
 * saturated to +-max (NaN stays NaN); scale_inv[g] = amax_g / max, the
 * factor dequantize multiplies by. amax_g = 0 gives scale 1. x is rows x cols
 * row-major of type xt; q holds rows*cols bytes. amax: device float[1],
 * used (and left holding the tensor's amax) for KPT_FP8_PER_TENSOR only,
 * may be NULL otherwise. extra_pct > 0 (any scaling) is the analyzer's
 * planted slowdown, like kpt_copy's: the same kernels also quantize the
 * kpt_fp8_planted_rows(rows, extra_pct) - rows rows past the data, so x must
 * hold those rows, as zeros (zeros raise no group's amax: the data's q and
 * scale_inv stay bit-identical, also for a 128x128 tile or the per-tensor
 * amax they share), and q and scale_inv room for the planted rows and
 * kpt_fp8_scale_count(planted rows, cols, sc) scales. (The first plan
 * re-quantized the first extra_pct% of the rows, which the next call then
 * read from L2: no slowdown.) */
int kpt_fp8_quantize(uint8_t *q, float *scale_inv, const void *x, enum kpt_dtype xt,
		     size_t rows, size_t cols, enum kpt_fp8_fmt fmt, enum kpt_fp8_scaling sc,
		     float *amax, int extra_pct, cudaStream_t s, struct kpt_diag *d);
/* y = float(q) * scale_inv[g], stored as yt (bf16: round to nearest even).
 * No plant argument: a planted dequantize is a call for
 * kpt_fp8_planted_rows(rows, pct) rows whose extra rows' q (and scales) are
 * zeros; the data rows' y is unchanged. */
int kpt_fp8_dequantize(void *y, enum kpt_dtype yt, const uint8_t *q, const float *scale_inv,
		       size_t rows, size_t cols, enum kpt_fp8_fmt fmt, enum kpt_fp8_scaling sc,
		       cudaStream_t s, struct kpt_diag *d);

/* FP8 GEMM through cuBLASLt: D[m][n] = a_scale * b_scale * sum_k A[m][k] * B[n][k]
 * with A (m x k) and B (n x k) row-major FP8 (B as stored by a linear layer),
 * D row-major bf16, float32 accumulation. a_scale and b_scale are device
 * float[1] (CUBLASLT_MATMUL_DESC_{B,A}_SCALE_POINTER). m, n, k multiples of
 * 16; E5M2 x E5M2 is refused (cuBLASLt has no such kernel). The plan owns
 * a cuBLASLt handle, layouts, the chosen algorithm and a 32 MiB workspace. */
struct kpt_fp8_gemm;
enum kpt_fp8_gemm_flags {
	KPT_FP8_GEMM_FAST_ACCUM = 1 /* CUBLASLT_MATMUL_DESC_FAST_ACCUM: faster, less exact sums */
};
int kpt_fp8_gemm_create(struct kpt_fp8_gemm **out, size_t m, size_t n, size_t k,
			enum kpt_fp8_fmt fa, enum kpt_fp8_fmt fb, unsigned flags, struct kpt_diag *d);
int kpt_fp8_gemm_run(struct kpt_fp8_gemm *g, uint16_t *dmat, const uint8_t *a, const uint8_t *b,
		     const float *a_scale, const float *b_scale, cudaStream_t s, struct kpt_diag *d);
/* Accepts NULL and half-built plans. */
void kpt_fp8_gemm_destroy(struct kpt_fp8_gemm *g);

#ifdef __cplusplus
}
#endif

#include "kpt_attention.h"
#include "kpt_moe.h"

#endif
