/* kpt_fp8.cu - FP8 E4M3/E5M2 quantize and dequantize (contracts in
 * kpt_kernels.h). Conversions use CUDA's cvt with satfinite (round to
 * nearest even, saturate to the largest finite value, NaN stays NaN); the
 * scale is an IEEE division (no fast math), so kernels/ref/ matches bit for
 * bit.
 *
 * Kernels, all reading each input once from DRAM:
 *   quant_rowblock  per token: one block per row, up to 8192 elements held in
 *                   registers, longer rows re-read from L2
 *   quant_g128      1x128 on aligned rows of whole groups: half a warp per
 *                   group, 8 elements per lane, 8 groups per warp in flight
 *   quant_groups    1x128 otherwise (and per token on rows of <= 128): a warp
 *                   per group, 4 elements per lane, 8 groups per warp
 *   quant_tiles     128x128: one block per tile, 16 rows per warp in registers
 *   amax_tensor + quant_tensor   per tensor: two passes over x
 * --plant (extra_pct): the same launches over rows of zeros past the data
 * (kpt_kernels.h); no kernel has code or a parameter for it.
 */
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#include "kpt_kernels.h"
#include "kpt_launch.h"

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

/* Raw 4-element vectors kept in registers between the amax and the quantize
 * step: float4 for fp32, uint2 (four packed bf16) for bf16, so a bf16 row
 * costs half the registers. Elements at or past `end` read as 0. */
static __device__ __forceinline__ void raw_load(float4 &r, const float *x, size_t i, size_t end, bool vec)
{
	float v[4];

	if (vec && i + 3 < end) {
		r = __ldcs((const float4 *)(x + i));
		return;
	}
	load4(v, x, i, end, false);
	r = make_float4(v[0], v[1], v[2], v[3]);
}

static __device__ __forceinline__ void raw_load(uint2 &r, const __nv_bfloat16 *x, size_t i, size_t end, bool vec)
{
	const unsigned short *u = (const unsigned short *)x;
	unsigned int e[4];

	if (vec && i + 3 < end) {
		r = __ldcs((const uint2 *)(x + i));
		return;
	}
#pragma unroll
	for (int k = 0; k < 4; k++)
		e[k] = i + k < end ? u[i + k] : 0u;
	r = make_uint2(e[0] | (e[1] << 16), e[2] | (e[3] << 16));
}

static __device__ __forceinline__ void unpack(float v[4], float4 r)
{
	v[0] = r.x; v[1] = r.y; v[2] = r.z; v[3] = r.w;
}

static __device__ __forceinline__ void unpack(float v[4], uint2 r)
{
	v[0] = __uint_as_float(r.x << 16);
	v[1] = __uint_as_float(r.x & 0xFFFF0000u);
	v[2] = __uint_as_float(r.y << 16);
	v[3] = __uint_as_float(r.y & 0xFFFF0000u);
}

template <typename T> struct raw_of;
template <> struct raw_of<float> { typedef float4 type; };
template <> struct raw_of<__nv_bfloat16> { typedef uint2 type; };

template <typename R> static __device__ __forceinline__ float absmax_raw(float m, R r)
{
	float v[4];

	unpack(v, r);
	return absmax4(m, v);
}

template <int FMT, typename R>
static __device__ __forceinline__ void store_raw(uint8_t *q, size_t i, size_t end, bool vec, R r, float scale)
{
	float v[4];

	unpack(v, r);
	store4<FMT>(q, i, end, vec, v, scale);
}

/* Max over the block (every thread gets it); sh holds one float per warp. */
static __device__ __forceinline__ float block_max(float m, float *sh)
{
	m = warp_max(m);
	if (threadIdx.x % 32 == 0)
		sh[threadIdx.x / 32] = m;
	__syncthreads();
	m = 0.0f;
	for (unsigned w = 0; w < blockDim.x / 32; w++)
		m = fmaxf(m, sh[w]);
	return m;
}

/* Per token, rows longer than 128: one block per row, the first
 * ROW_CHUNKS * 4 * ROWS_THREADS elements held raw in registers, the rest
 * re-read after the amax (from L2: only ~8 rows per SM are in flight).
 * A block b >= rows would repeat row b % rows: the first plant's, which no
 * launch uses now (kpt_fp8_quantize plants rows past the data); the line
 * stays so that the kernel is the code its committed baselines ran. */
#define ROW_CHUNKS 8
template <typename T, int FMT>
static __global__ void __launch_bounds__(ROWS_THREADS) quant_rowblock(uint8_t *__restrict__ q, float *__restrict__ sinv,
								       const T *__restrict__ x, size_t rows, size_t cols,
								       bool vec)
{
	typedef typename raw_of<T>::type R;
	__shared__ float sh[ROWS_THREADS / 32];
	size_t row = blockIdx.x < rows ? blockIdx.x : blockIdx.x % rows;
	const T *xr = x + row * cols;
	uint8_t *qr = q + row * cols;
	size_t span = 4 * (size_t)ROWS_THREADS, t4 = 4 * (size_t)threadIdx.x;
	R r[ROW_CHUNKS];
	float amax = 0.0f, scale;

#pragma unroll
	for (int k = 0; k < ROW_CHUNKS; k++) {
		raw_load(r[k], xr, k * span + t4, cols, vec);
		amax = absmax_raw(amax, r[k]);
	}
	for (size_t base = ROW_CHUNKS * span; base < cols; base += span) {
		R t;

		raw_load(t, xr, base + t4, cols, vec);
		amax = absmax_raw(amax, t);
	}
	amax = block_max(amax, sh);
	scale = scale_of<FMT>(amax);
	if (threadIdx.x == 0)
		sinv[row] = scale_inv_of<FMT>(amax);
#pragma unroll
	for (int k = 0; k < ROW_CHUNKS; k++)
		store_raw<FMT>(qr, k * span + t4, cols, vec, r[k], scale);
	for (size_t base = ROW_CHUNKS * span; base < cols; base += span) {
		R t;

		raw_load(t, xr, base + t4, cols, vec);
		store_raw<FMT>(qr, base + t4, cols, vec, t, scale);
	}
}

/* Groups of gc <= 128 columns of one row (1x128, or per token when the row
 * is that short): a warp takes GROUPS_PER_WARP consecutive groups at once,
 * 4 elements per lane each, so several loads are in flight per lane. */
#define GROUPS_PER_WARP 8
template <typename T, int FMT, bool CONTIG>
static __global__ void __launch_bounds__(ROWS_THREADS) quant_groups(uint8_t *__restrict__ q, float *__restrict__ sinv,
								     const T *__restrict__ x, size_t cols, size_t gc,
								     size_t gpr, size_t ngroups, bool vec)
{
	typedef typename raw_of<T>::type R;
	unsigned lane = threadIdx.x % 32;
	size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
	size_t nwarps = (size_t)gridDim.x * blockDim.x / 32;

	for (size_t g0 = warp * GROUPS_PER_WARP; g0 < ngroups; g0 += nwarps * GROUPS_PER_WARP) {
		R r[GROUPS_PER_WARP];


		size_t off[GROUPS_PER_WARP], len[GROUPS_PER_WARP];
		float amax[GROUPS_PER_WARP];

#pragma unroll
		for (int j = 0; j < GROUPS_PER_WARP; j++) {
			size_t g = g0 + j;

			if (CONTIG) { /* cols % gc == 0: group g is elements [g*gc, g*gc + gc) */
				off[j] = g * gc;
				len[j] = g < ngroups ? gc : 0;
			} else {
				size_t row = g / gpr, c0 = (g % gpr) * gc;

				off[j] = row * cols + c0;
				len[j] = g < ngroups ? (cols - c0 < gc ? cols - c0 : gc) : 0;
			}
			raw_load(r[j], x + off[j], 4 * (size_t)lane, len[j], vec);
		}
#pragma unroll
		for (int j = 0; j < GROUPS_PER_WARP; j++)
			amax[j] = warp_max(absmax_raw(0.0f, r[j]));
#pragma unroll
		for (int j = 0; j < GROUPS_PER_WARP; j++) {
			if (len[j] == 0)
				continue;
			if (lane == 0)
				sinv[g0 + j] = scale_inv_of<FMT>(amax[j]);
			store_raw<FMT>(q + off[j], 4 * (size_t)lane, len[j], vec, r[j], scale_of<FMT>(amax[j]));
		}
	}
}

/* 1x128 when cols % 128 == 0 and the data is aligned: half a warp per
 * group, 8 elements per lane (one 16-byte load for bf16, two for fp32),
 * G128_PAIRS group pairs per warp loaded before any is reduced, no bounds
 * checks. Against a whole warp per group with 4 elements per lane this
 * halves the instructions per element (one IEEE division and 4 shuffles
 * per 8 elements instead of per 4: the 1x128 kernel was issue-bound at 77%
 * of the DRAM bandwidth, H100, bench/RESULTS.md). Handles the first
 * nsuper * G128_GROUPS groups; quant_groups does the rest. */
#define G128_PAIRS 4
#define G128_GROUPS (2 * G128_PAIRS)

template <typename T> struct raw8_of;
template <> struct raw8_of<float> { struct type { float4 a, b; }; };
template <> struct raw8_of<__nv_bfloat16> { typedef uint4 type; };

static __device__ __forceinline__ void load8(raw8_of<float>::type &r, const float *x)
{
	r.a = __ldcs((const float4 *)x);
	r.b = __ldcs((const float4 *)x + 1);
}
static __device__ __forceinline__ void load8(uint4 &r, const __nv_bfloat16 *x)
{
	r = __ldcs((const uint4 *)x);
}
static __device__ __forceinline__ void unpack8(float v[8], const raw8_of<float>::type &r)
{
	unpack(v, r.a);
	unpack(v + 4, r.b);
}
static __device__ __forceinline__ void unpack8(float v[8], uint4 r)
{
	unpack(v, make_uint2(r.x, r.y));
	unpack(v + 4, make_uint2(r.z, r.w));
}

template <typename T, int FMT>
static __global__ void __launch_bounds__(ROWS_THREADS) quant_g128(uint8_t *__restrict__ q, float *__restrict__ sinv,
								   const T *__restrict__ x, size_t nsuper)
{
	typedef typename raw8_of<T>::type R;
	unsigned lane = threadIdx.x % 32, hl = lane % 16, half = lane / 16;
	size_t warp = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) / 32;
	size_t nwarps = (size_t)gridDim.x * blockDim.x / 32;

	for (size_t sg = warp; sg < nsuper; sg += nwarps) {
		size_t g0 = sg * G128_GROUPS + half;
		R r[G128_PAIRS];

#pragma unroll
		for (int j = 0; j < G128_PAIRS; j++)
			load8(r[j], x + (g0 + 2 * j) * 128 + 8 * hl);
#pragma unroll
		for (int j = 0; j < G128_PAIRS; j++) {
			size_t g = g0 + 2 * j;
			float v[8], amax = 0.0f, scale;
			__nv_fp8x2_storage_t p[4];

			unpack8(v, r[j]);
			amax = absmax4(absmax4(amax, v), v + 4);
#pragma unroll
			for (int o = 8; o > 0; o /= 2) /* within each half warp */
				amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
			if (hl == 0)
				sinv[g] = scale_inv_of<FMT>(amax);
			scale = scale_of<FMT>(amax);
#pragma unroll
			for (int k = 0; k < 4; k++)
				p[k] = __nv_cvt_float2_to_fp8x2(make_float2(v[2 * k] * scale, v[2 * k + 1] * scale),
								__NV_SATFINITE, fp8_traits<FMT>::kind);
			__stcs((uint2 *)(q + g * 128 + 8 * hl),
			       make_uint2((unsigned)p[0] | (unsigned)p[1] << 16, (unsigned)p[2] | (unsigned)p[3] << 16));
		}
	}
}

/* One 128x128 tile per block; warp w holds rows 16w..16w+15, 4 columns per
 * lane, raw in registers between the amax and the quantize step. */
template <typename T, int FMT>
static __global__ void __launch_bounds__(TILE_WARPS * 32, sizeof(T) == 2 ? 3 : 2) quant_tiles(uint8_t *__restrict__ q, float *__restrict__ sinv,
								       const T *__restrict__ x, size_t rows,
								       size_t cols, size_t tiles_per_row, bool vec)
{
	typedef typename raw_of<T>::type R;
	__shared__ float sh[TILE_WARPS];
	unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	size_t tr = blockIdx.y, tc = blockIdx.x;
	size_t c0 = tc * TILE, len = cols - c0 < TILE ? cols - c0 : TILE;
	size_t r0 = tr * TILE + warp * TILE_ROWS_PER_WARP;
	int nr = r0 >= rows ? 0 : rows - r0 < TILE_ROWS_PER_WARP ? (int)(rows - r0) : TILE_ROWS_PER_WARP;
	const T *p = x + r0 * cols + c0;
	uint8_t *o = q + r0 * cols + c0;
	unsigned l4 = lane * 4;
	R v[TILE_ROWS_PER_WARP];
	float amax = 0.0f, scale;

#pragma unroll
	for (int k = 0; k < TILE_ROWS_PER_WARP; k++) {
		raw_load(v[k], p + k * cols, l4, k < nr ? len : 0, vec);
		amax = absmax_raw(amax, v[k]);
	}
	amax = block_max(amax, sh);
	scale = scale_of<FMT>(amax);
	if (threadIdx.x == 0)
		sinv[tr * tiles_per_row + tc] = scale_inv_of<FMT>(amax);
#pragma unroll
	for (int k = 0; k < TILE_ROWS_PER_WARP; k++)
		if (k < nr)
			store_raw<FMT>(o + k * cols, l4, len, vec, v[k], scale);
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

/* y = f32(q) * sinv[group]: thread x of row r handles columns 4x..4x+3
 * (vec: cols % 4 == 0, so the four share a row and a group, and move as one
 * 4-byte load and one 8- or 16-byte store). Rows stride by gridDim.y. */
static __device__ __forceinline__ void store_y(float *y, size_t i, const float v[4])
{
	*(float4 *)(y + i) = make_float4(v[0], v[1], v[2], v[3]);
}

static __device__ __forceinline__ void store_y(__nv_bfloat16 *y, size_t i, const float v[4])
{
	__nv_bfloat162 a = __floats2bfloat162_rn(v[0], v[1]), b = __floats2bfloat162_rn(v[2], v[3]);

	*(uint2 *)(y + i) = make_uint2(*(unsigned int *)&a, *(unsigned int *)&b);
}

template <int FMT> static __device__ __forceinline__ float fp8_to_f32(unsigned b)
{
	__half_raw h = __nv_cvt_fp8_to_halfraw((__nv_fp8_storage_t)b, fp8_traits<FMT>::kind);

	return __half2float(__half(h));
}

template <typename Y, int FMT>
static __global__ void __launch_bounds__(ROWS_THREADS) dequant(Y *__restrict__ y, const uint8_t *__restrict__ q,
								const float *__restrict__ sinv, size_t rows, size_t cols,
								size_t gr, size_t gc, size_t gpc, bool vec)
{
	size_t c = 4 * (blockIdx.x * (size_t)blockDim.x + threadIdx.x);

	if (c >= cols)
		return;
	for (size_t r = blockIdx.y; r < rows; r += gridDim.y) {
		size_t i = r * cols + c;
		const float *srow = sinv + (r / gr) * gpc;

		if (vec) {
			unsigned int w = __ldcs((const unsigned int *)(q + i));
			float s = srow[c / gc], v[4];

#pragma unroll
			for (int k = 0; k < 4; k++)
				v[k] = fp8_to_f32<FMT>((w >> (8 * k)) & 0xFFu) * s;
			store_y(y + 0, i, v);
			continue;
		}
		for (size_t k = 0; k < 4 && c + k < cols; k++) {
			float v = fp8_to_f32<FMT>(q[i + k]) * srow[(c + k) / gc];

			if constexpr (sizeof(Y) == 2)
				y[i + k] = __float2bfloat16_rn(v);
			else
				y[i + k] = v;
		}
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
		    float *amax, cudaStream_t s, struct kpt_diag *d)
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
	if (sc == KPT_FP8_PER_TOKEN && cols > 128) {
		if (rows > 0x7FFFFFFFu)
			return kpt_diag_set(d, KPT_E_INVAL, "fp8 quantize: too many rows (%zu)", rows);
		KPT_LAUNCH(d, "kpt_fp8_quantize",
			   (quant_rowblock<T, FMT><<<(unsigned)rows, ROWS_THREADS, 0, s>>>(q, sinv, x, rows, cols, vec)));
		return 0;
	}
	size_t gc = sc == KPT_FP8_PER_TOKEN ? cols : 128, gpr = (cols + gc - 1) / gc;
	size_t ngroups = rows * gpr;
	unsigned grid = kpt_grid_for(ngroups, ROWS_THREADS / 32 * GROUPS_PER_WARP, 8);

	if (sc == KPT_FP8_BLOCK_1x128 && cols % 128 == 0 && vec && (uintptr_t)x % 16 == 0 &&
	    (uintptr_t)q % 8 == 0 && ngroups >= G128_GROUPS) {
		size_t nsuper = ngroups / G128_GROUPS, done = nsuper * G128_GROUPS;

		/* exactly one resident wave: the loop balances the work, a second
		 * partial wave of blocks would not */
		int per_sm = 0;
		unsigned g128;

		if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, quant_g128<T, FMT>, ROWS_THREADS, 0) !=
			    cudaSuccess || per_sm < 1)
			per_sm = 4;
		g128 = kpt_grid_for(nsuper, ROWS_THREADS / 32, (unsigned)per_sm);
		KPT_LAUNCH(d, "kpt_fp8_quantize", (quant_g128<T, FMT><<<g128, ROWS_THREADS, 0, s>>>(q, sinv, x, nsuper)));
		if (done == ngroups)
			return 0;
		q += done * 128;
		x += done * 128;
		sinv += done;
		ngroups -= done;
	}

	if (cols % gc == 0)
		KPT_LAUNCH(d, "kpt_fp8_quantize", (quant_groups<T, FMT, true><<<grid, ROWS_THREADS, 0, s>>>(
							   q, sinv, x, cols, gc, gpr, ngroups, vec)));
	else
		KPT_LAUNCH(d, "kpt_fp8_quantize", (quant_groups<T, FMT, false><<<grid, ROWS_THREADS, 0, s>>>(
							   q, sinv, x, cols, gc, gpr, ngroups, vec)));
	return 0;
}

extern "C" int kpt_fp8_quantize(uint8_t *q, float *scale_inv, const void *x, enum kpt_dtype xt, size_t rows,
				size_t cols, enum kpt_fp8_fmt fmt, enum kpt_fp8_scaling sc, float *amax,
				int extra_pct, cudaStream_t s, struct kpt_diag *d)
{
	int rc;

	if ((rc = check_args(fmt, xt, sc, d)) < 0)
		return rc;
	if (extra_pct < 0 || extra_pct > 10000)
		return kpt_diag_set(d, KPT_E_INVAL, "fp8 quantize: planted work %d%% not in 0..10000", extra_pct);
	/* planted: the same kernels over the zero rows past the data (kpt_kernels.h) */
	rows = kpt_fp8_planted_rows(rows, extra_pct);
	if (xt == KPT_DT_F32)
		return fmt == KPT_FP8_E4M3
			? quantize<float, KPT_FP8_E4M3>(q, scale_inv, (const float *)x, rows, cols, sc, amax, s, d)
			: quantize<float, KPT_FP8_E5M2>(q, scale_inv, (const float *)x, rows, cols, sc, amax, s, d);
	return fmt == KPT_FP8_E4M3
		? quantize<__nv_bfloat16, KPT_FP8_E4M3>(q, scale_inv, (const __nv_bfloat16 *)x, rows, cols, sc, amax, s, d)
		: quantize<__nv_bfloat16, KPT_FP8_E5M2>(q, scale_inv, (const __nv_bfloat16 *)x, rows, cols, sc, amax, s, d);
}

template <typename Y, int FMT>
static int dequantize(Y *y, const uint8_t *q, const float *sinv, size_t rows, size_t cols, enum kpt_fp8_scaling sc,
		      cudaStream_t s, struct kpt_diag *d)
{
	size_t gr, gc, n = rows * cols;

	if (n == 0)
		return 0;
	group_shape(sc, rows, cols, &gr, &gc);
	{
		bool vec = cols % 4 == 0 && (uintptr_t)q % 4 == 0 && (uintptr_t)y % (4 * sizeof(Y)) == 0;
		size_t gx = (cols + 4 * ROWS_THREADS - 1) / (4 * ROWS_THREADS);
		size_t gy = rows < 65535 ? rows : 65535;

		if (gx > 0x7FFFFFFFu)
			return kpt_diag_set(d, KPT_E_INVAL, "fp8 dequantize: too many columns (%zu)", cols);
		if (gx * gy > (size_t)kpt_sm_count() * 64)
			gy = ((size_t)kpt_sm_count() * 64 + gx - 1) / gx;
		KPT_LAUNCH(d, "kpt_fp8_dequantize",
			   (dequant<Y, FMT><<<dim3((unsigned)gx, (unsigned)gy), ROWS_THREADS, 0, s>>>(
				   y, q, sinv, rows, cols, gr, gc, (cols + gc - 1) / gc, vec)));
	}
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
