/* kpt_fp8.cu - FP8 E4M3/E5M2 quantize and dequantize (contracts in
 * kpt_kernels.h). Conversions use CUDA's cvt with satfinite (round to
 * nearest even, saturate to the largest finite value, NaN stays NaN); the
 * scale is an IEEE division (no fast math), so kernels/ref/ matches bit for
 * bit.
 *
 * Kernels, all reading each input once from DRAM:
 *   quant_rows   per token and 1x128: one warp per group, 4 elements per
 *                lane per 128-column chunk; groups of <= 128*CHUNKS columns
 *                stay in registers, longer rows are re-read (from L1/L2)
 *   quant_tiles  128x128: one block per tile, 16 rows per warp in registers
 *   amax_tensor + quant_tensor   per tensor: two passes over x
 */
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "kpt_kernels.h"
#include "kpt_launch.h"

#define CHUNKS 4          /* 128-column chunks a warp keeps in registers */
#define ROWS_THREADS 256
#define TILE 128
#define TILE_WARPS 8
#define TILE_ROWS_PER_WARP (TILE / TILE_WARPS)

template <int FMT> struct fp8_traits;
template <> struct fp8_traits<KPT_FP8_E4M3> {
	static constexpr float max = 448.0f;
	static constexpr __nv_fp8_interpretation_t kind = __NV_E4M3;
};
template <> struct fp8_traits<KPT_FP8_E5M2> {
	static constexpr float max = 57344.0f;
	static constexpr __nv_fp8_interpretation_t kind = __NV_E5M2;
};

/* Four elements at x[i..i+3] as floats; vec: one 16- or 8-byte load. Elements
 * at or past `end` read as 0 (they do not change amax). */
static __device__ __forceinline__ void load4(float v[4], const float *x, size_t i, size_t end, bool vec)
{
	if (vec && i + 3 < end) {
		float4 t = __ldcs((const float4 *)(x + i));
		v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
		return;
	}
#pragma unroll
	for (int k = 0; k < 4; k++)
		v[k] = i + k < end ? x[i + k] : 0.0f;
}

static __device__ __forceinline__ void load4(float v[4], const __nv_bfloat16 *x, size_t i, size_t end, bool vec)
{
	if (vec && i + 3 < end) {
		uint2 t = __ldcs((const uint2 *)(x + i));
		v[0] = __uint_as_float(t.x << 16);
		v[1] = __uint_as_float(t.x & 0xFFFF0000u);
		v[2] = __uint_as_float(t.y << 16);
		v[3] = __uint_as_float(t.y & 0xFFFF0000u);
		return;
	}
#pragma unroll
	for (int k = 0; k < 4; k++)
		v[k] = i + k < end ? __bfloat162float(x[i + k]) : 0.0f;
}

template <int FMT>
static __device__ __forceinline__ void store4(uint8_t *q, size_t i, size_t end, bool vec, const float v[4], float scale)
{
	__nv_fp8x2_storage_t lo = __nv_cvt_float2_to_fp8x2(make_float2(v[0] * scale, v[1] * scale), __NV_SATFINITE,
							   fp8_traits<FMT>::kind);
	__nv_fp8x2_storage_t hi = __nv_cvt_float2_to_fp8x2(make_float2(v[2] * scale, v[3] * scale), __NV_SATFINITE,
							   fp8_traits<FMT>::kind);

	if (vec && i + 3 < end) {
		__stcs((unsigned int *)(q + i), (unsigned int)lo | ((unsigned int)hi << 16));
		return;
	}
	if (i < end)
		q[i] = (uint8_t)(lo & 0xFF);
	if (i + 1 < end)
		q[i + 1] = (uint8_t)(lo >> 8);
	if (i + 2 < end)
		q[i + 2] = (uint8_t)(hi & 0xFF);
	if (i + 3 < end)
		q[i + 3] = (uint8_t)(hi >> 8);
}

static __device__ __forceinline__ float absmax4(float m, const float v[4])
{
	return fmaxf(fmaxf(m, fmaxf(fabsf(v[0]), fabsf(v[1]))), fmaxf(fabsf(v[2]), fabsf(v[3])));
}

static __device__ __forceinline__ float warp_max(float m)
{
#pragma unroll
	for (int o = 16; o > 0; o /= 2)
		m = fmaxf(m, __shfl_xor_sync(0xFFFFFFFFu, m, o));
	return m;
}

/* Scale and inverse scale of a group from its amax (amax = 0 -> 1, 1). */
template <int FMT> static __device__ __forceinline__ float scale_of(float amax)
{
	return amax > 0.0f ? __fdiv_rn(fp8_traits<FMT>::max, amax) : 1.0f;
}
template <int FMT> static __device__ __forceinline__ float scale_inv_of(float amax)
{
	return amax > 0.0f ? __fdiv_rn(amax, fp8_traits<FMT>::max) : 1.0f;
}

/* Groups of gc columns of one row (gc = cols for per token, 128 for 1x128).
 * Group g for g >= ngroups repeats group g % ngroups (planted work). */
template <typename T, int FMT>
static __global__ void __launch_bounds__(ROWS_THREADS) quant_rows(uint8_t *__restrict__ q, float *__restrict__ sinv,
								   const T *__restrict__ x, size_t cols, size_t gc,
								   size_t gpr, size_t ngroups, size_t total, bool vec)
{
	unsigned lane = threadIdx.x % 32;
	size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
	size_t nwarps = (size_t)gridDim.x * blockDim.x / 32;

	for (size_t g = warp; g < total; g += nwarps) {
		size_t gg = g < ngroups ? g : g % ngroups;
		size_t row = gg / gpr, c0 = (gg % gpr) * gc;
		size_t len = cols - c0 < gc ? cols - c0 : gc;
		const T *xr = x + row * cols + c0;
		uint8_t *qr = q + row * cols + c0;
		float v[CHUNKS][4];
		float amax = 0.0f, scale;

#pragma unroll
		for (int k = 0; k < CHUNKS; k++) {
			load4(v[k], xr, k * 128 + lane * 4, len, vec);
			amax = absmax4(amax, v[k]);
		}
		for (size_t base = CHUNKS * 128; base < len; base += CHUNKS * 128) {
#pragma unroll
			for (int k = 0; k < CHUNKS; k++) {
				float t[4];

				load4(t, xr, base + k * 128 + lane * 4, len, vec);
				amax = absmax4(amax, t);
			}
		}
		amax = warp_max(amax);
		scale = scale_of<FMT>(amax);
		if (lane == 0)
			sinv[gg] = scale_inv_of<FMT>(amax);
#pragma unroll
		for (int k = 0; k < CHUNKS; k++)
			store4<FMT>(qr, k * 128 + lane * 4, len, vec, v[k], scale);
		for (size_t base = CHUNKS * 128; base < len; base += CHUNKS * 128) {
#pragma unroll
			for (int k = 0; k < CHUNKS; k++) {
				float t[4];

				load4(t, xr, base + k * 128 + lane * 4, len, vec);
				store4<FMT>(qr, base + k * 128 + lane * 4, len, vec, t, scale);
			}
		}
	}
}

/* One 128x128 tile per block; warp w holds rows 16w..16w+15, 4 columns per
 * lane, in registers between the amax and the quantize step. */
template <typename T, int FMT>
static __global__ void __launch_bounds__(TILE_WARPS * 32) quant_tiles(uint8_t *__restrict__ q, float *__restrict__ sinv,
								       const T *__restrict__ x, size_t rows,
								       size_t cols, size_t tiles_per_row, bool vec)
{
	__shared__ float wmax[TILE_WARPS];
	unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	size_t tr = blockIdx.y, tc = blockIdx.x;
	size_t c0 = tc * TILE, len = cols - c0 < TILE ? cols - c0 : TILE;
	size_t r0 = tr * TILE + warp * TILE_ROWS_PER_WARP;
	float v[TILE_ROWS_PER_WARP][4];
	float amax = 0.0f, scale;

#pragma unroll
	for (int k = 0; k < TILE_ROWS_PER_WARP; k++) {
		if (r0 + k < rows)
			load4(v[k], x + (r0 + k) * cols + c0, lane * 4, len, vec);
		else
			v[k][0] = v[k][1] = v[k][2] = v[k][3] = 0.0f;
		amax = absmax4(amax, v[k]);
	}
	amax = warp_max(amax);
	if (lane == 0)
		wmax[warp] = amax;
	__syncthreads();
#pragma unroll
	for (int w = 0; w < TILE_WARPS; w++)
		amax = fmaxf(amax, wmax[w]);
	scale = scale_of<FMT>(amax);
	if (threadIdx.x == 0)
		sinv[tr * tiles_per_row + tc] = scale_inv_of<FMT>(amax);
#pragma unroll
	for (int k = 0; k < TILE_ROWS_PER_WARP; k++)
		if (r0 + k < rows)
			store4<FMT>(q + (r0 + k) * cols + c0, lane * 4, len, vec, v[k], scale);
}

/* Per tensor, pass 1: *amax = max |x| (atomicMax on the bits: for
 * non-negative floats the integer order is the float order). *amax must be
 * 0 on entry. */
template <typename T>
static __global__ void __launch_bounds__(ROWS_THREADS) amax_tensor(float *amax, const T *__restrict__ x, size_t n, bool vec)
{
	__shared__ float wmax[ROWS_THREADS / 32];
	size_t stride = (size_t)gridDim.x * blockDim.x * 4;
	float m = 0.0f;

	for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 4; i < n; i += stride) {
		float v[4];

		load4(v, x, i, n, vec);
		m = absmax4(m, v);
	}
	m = warp_max(m);
	if (threadIdx.x % 32 == 0)
		wmax[threadIdx.x / 32] = m;
	__syncthreads();
	if (threadIdx.x == 0) {
		for (int w = 1; w < ROWS_THREADS / 32; w++)
			m = fmaxf(m, wmax[w]);
		atomicMax((unsigned int *)amax, __float_as_uint(m));
	}
}

/* Per tensor, pass 2. */
template <typename T, int FMT>
static __global__ void __launch_bounds__(ROWS_THREADS) quant_tensor(uint8_t *__restrict__ q, float *__restrict__ sinv,
								     const T *__restrict__ x, size_t n,
								     const float *__restrict__ amax, bool vec)
{
	size_t stride = (size_t)gridDim.x * blockDim.x * 4;
	float a = *amax, scale = scale_of<FMT>(a);

	if (blockIdx.x == 0 && threadIdx.x == 0)
		sinv[0] = scale_inv_of<FMT>(a);
	for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * 4; i < n; i += stride) {
		float v[4];

		load4(v, x, i, n, vec);
		store4<FMT>(q, i, n, vec, v, scale);
	}
}

/* y = f32(q) * sinv[group]; 4 consecutive elements of one row per step
 * (vec requires cols % 4 == 0 so they share a row and a group). */
template <typename Y, int FMT>
static __global__ void __launch_bounds__(ROWS_THREADS) dequant(Y *__restrict__ y, const uint8_t *__restrict__ q,
								const float *__restrict__ sinv, size_t rows, size_t cols,
								size_t gr, size_t gc, size_t gpc)
{
	size_t n = rows * cols, stride = (size_t)gridDim.x * blockDim.x;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
		size_t r = i / cols, c = i % cols;
		__half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)q[i], fp8_traits<FMT>::kind);
		float v = __half2float(__half(h)) * sinv[(r / gr) * gpc + c / gc];

		if constexpr (sizeof(Y) == 2)
			y[i] = __float2bfloat16_rn(v);
		else
			y[i] = v;
	}
}

/* ---- launchers ------------------------------------------------------------- */

extern "C" float kpt_fp8_max(enum kpt_fp8_fmt fmt)
{
	return fmt == KPT_FP8_E5M2 ? 57344.0f : 448.0f;
}

static void group_shape(enum kpt_fp8_scaling sc, size_t rows, size_t cols, size_t *gr, size_t *gc)
{
	static const size_t shape[][2] = {
		[KPT_FP8_PER_TENSOR] = { 0, 0 },
		[KPT_FP8_PER_TOKEN] = { 1, 0 },
		[KPT_FP8_BLOCK_1x128] = { 1, 128 },
		[KPT_FP8_BLOCK_128x128] = { 128, 128 },
	};

	*gr = shape[sc][0] ? shape[sc][0] : (rows ? rows : 1);
	*gc = shape[sc][1] ? shape[sc][1] : (cols ? cols : 1);
}

extern "C" size_t kpt_fp8_scale_count(size_t rows, size_t cols, enum kpt_fp8_scaling sc)
{
	size_t gr, gc;

	if (rows == 0 || cols == 0)
		return sc == KPT_FP8_PER_TENSOR ? 1 : 0;
	group_shape(sc, rows, cols, &gr, &gc);
	return ((rows + gr - 1) / gr) * ((cols + gc - 1) / gc);
}

static int check_args(int fmt, int dt, int sc, struct kpt_diag *d)
{
	if (fmt != KPT_FP8_E4M3 && fmt != KPT_FP8_E5M2)
		return kpt_diag_set(d, KPT_E_INVAL, "fp8: unknown format %d", fmt);
	if (dt != KPT_DT_F32 && dt != KPT_DT_BF16)
		return kpt_diag_set(d, KPT_E_INVAL, "fp8: unknown element type %d", dt);
	if (sc < KPT_FP8_PER_TENSOR || sc > KPT_FP8_BLOCK_128x128)
		return kpt_diag_set(d, KPT_E_INVAL, "fp8: unknown scaling %d", sc);
	return 0;
}

template <typename T, int FMT>
static int quantize(uint8_t *q, float *sinv, const T *x, size_t rows, size_t cols, enum kpt_fp8_scaling sc,
		    float *amax, int extra_pct, cudaStream_t s, struct kpt_diag *d)
{
	size_t n = rows * cols;
	bool vec = cols % 4 == 0 && (uintptr_t)x % (4 * sizeof(T)) == 0 && (uintptr_t)q % 4 == 0;

	if (sc == KPT_FP8_PER_TENSOR) {
		int rc;

		if (!amax)
			return kpt_diag_set(d, KPT_E_INVAL, "fp8 per-tensor quantize needs an amax buffer");
		vec = n % 4 == 0 && (uintptr_t)x % (4 * sizeof(T)) == 0 && (uintptr_t)q % 4 == 0;
		if ((rc = KPT_CUDA(d, cudaMemsetAsync(amax, 0, sizeof *amax, s))) < 0)
			return rc;
		KPT_LAUNCH(d, "kpt_fp8_amax",
			   (amax_tensor<T><<<kpt_grid_for(n / 4 + 1, ROWS_THREADS, 8), ROWS_THREADS, 0, s>>>(amax, x, n, vec)));
		KPT_LAUNCH(d, "kpt_fp8_quantize",
			   (quant_tensor<T, FMT><<<kpt_grid_for(n / 4 + 1, ROWS_THREADS, 8), ROWS_THREADS, 0, s>>>(
				   q, sinv, x, n, amax, vec)));
		return 0;
	}
	if (n == 0)
		return 0;
	if (sc == KPT_FP8_BLOCK_128x128) {
		size_t tpr = (cols + TILE - 1) / TILE, tcol = (rows + TILE - 1) / TILE;

		if (tcol > 65535 || tpr > 0x7FFFFFFFu)
			return kpt_diag_set(d, KPT_E_INVAL, "fp8 quantize: %zu x %zu is too large", rows, cols);
		KPT_LAUNCH(d, "kpt_fp8_quantize",
			   (quant_tiles<T, FMT><<<dim3((unsigned)tpr, (unsigned)tcol), TILE_WARPS * 32, 0, s>>>(
				   q, sinv, x, rows, cols, tpr, vec)));
		return 0;
	}
	size_t gc = sc == KPT_FP8_PER_TOKEN ? cols : 128, gpr = (cols + gc - 1) / gc;
	size_t ngroups = rows * gpr, total = ngroups + (size_t)((double)ngroups * extra_pct / 100.0);

	KPT_LAUNCH(d, "kpt_fp8_quantize",
		   (quant_rows<T, FMT><<<kpt_grid_for(total, ROWS_THREADS / 32, 16), ROWS_THREADS, 0, s>>>(
			   q, sinv, x, cols, gc, gpr, ngroups, total, vec)));
	return 0;
}

extern "C" int kpt_fp8_quantize(uint8_t *q, float *scale_inv, const void *x, enum kpt_dtype xt, size_t rows,
				size_t cols, enum kpt_fp8_fmt fmt, enum kpt_fp8_scaling sc, float *amax,
				int extra_pct, cudaStream_t s, struct kpt_diag *d)
{
	int rc;

	if ((rc = check_args(fmt, xt, sc, d)) < 0)
		return rc;
	if (extra_pct < 0 || (extra_pct > 0 && sc != KPT_FP8_PER_TOKEN))
		return kpt_diag_set(d, KPT_E_INVAL, "fp8 quantize: extra work %d%% is only for per-token scaling",
				    extra_pct);
	if (xt == KPT_DT_F32)
		return fmt == KPT_FP8_E4M3
			? quantize<float, KPT_FP8_E4M3>(q, scale_inv, (const float *)x, rows, cols, sc, amax, extra_pct, s, d)
			: quantize<float, KPT_FP8_E5M2>(q, scale_inv, (const float *)x, rows, cols, sc, amax, extra_pct, s, d);
	return fmt == KPT_FP8_E4M3
		? quantize<__nv_bfloat16, KPT_FP8_E4M3>(q, scale_inv, (const __nv_bfloat16 *)x, rows, cols, sc, amax,
							 extra_pct, s, d)
		: quantize<__nv_bfloat16, KPT_FP8_E5M2>(q, scale_inv, (const __nv_bfloat16 *)x, rows, cols, sc, amax,
							 extra_pct, s, d);
}

template <typename Y, int FMT>
static int dequantize(Y *y, const uint8_t *q, const float *sinv, size_t rows, size_t cols, enum kpt_fp8_scaling sc,
		      cudaStream_t s, struct kpt_diag *d)
{
	size_t gr, gc, n = rows * cols;

	if (n == 0)
		return 0;
	group_shape(sc, rows, cols, &gr, &gc);
	KPT_LAUNCH(d, "kpt_fp8_dequantize",
		   (dequant<Y, FMT><<<kpt_grid_for(n, ROWS_THREADS, 8), ROWS_THREADS, 0, s>>>(
			   y, q, sinv, rows, cols, gr, gc, (cols + gc - 1) / gc)));
	return 0;
}

extern "C" int kpt_fp8_dequantize(void *y, enum kpt_dtype yt, const uint8_t *q, const float *scale_inv, size_t rows,
				  size_t cols, enum kpt_fp8_fmt fmt, enum kpt_fp8_scaling sc, cudaStream_t s,
				  struct kpt_diag *d)
{
	int rc;

	if ((rc = check_args(fmt, yt, sc, d)) < 0)
		return rc;
	if (yt == KPT_DT_F32)
		return fmt == KPT_FP8_E4M3
			? dequantize<float, KPT_FP8_E4M3>((float *)y, q, scale_inv, rows, cols, sc, s, d)
			: dequantize<float, KPT_FP8_E5M2>((float *)y, q, scale_inv, rows, cols, sc, s, d);
	return fmt == KPT_FP8_E4M3
		? dequantize<__nv_bfloat16, KPT_FP8_E4M3>((__nv_bfloat16 *)y, q, scale_inv, rows, cols, sc, s, d)
		: dequantize<__nv_bfloat16, KPT_FP8_E5M2>((__nv_bfloat16 *)y, q, scale_inv, rows, cols, sc, s, d);
}
