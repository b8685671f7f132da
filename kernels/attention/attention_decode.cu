/* attention_decode.cu - split-K decode attention (see kpt_attention.h).
 *
 * Kernel 1, one block per (chunk, head, batch): scores of the query against
 * the chunk's keys (each key row read as 16-byte vectors by D/8 threads, dot
 * products finished with shuffles), the chunk's max and exp-sum, then the
 * exp-weighted sum of its value rows; writes an unnormalised fp32 partial
 * output and (max, sum) to ws, or the final output when there is only one
 * chunk. Kernel 2 (more than one chunk), one block per (head, batch): merges
 * the chunks' partials with the usual log-sum-exp rescaling. The cache is
 * read exactly once; the workspace traffic is 4 * (D + 2) bytes per chunk.
 */
#include <math.h>

#include <nvtx3/nvToolsExt.h>

#include "kpt_attention.h"
#include "kpt_mma.cuh"

namespace {

constexpr int DEC_THREADS = 128;
constexpr int DEC_MAX_CHUNK = 4096;
constexpr int DEC_UNROLL = 4;

struct dec_params {
	const void *q, *k, *v;
	void *o;
	float *ws_o;  /* [batch][heads][nchunks][D] */
	float2 *ws_ml; /* [batch][heads][nchunks] (max in log2 units, sum) */
	long long sb, sh, ss;
	int heads, group, ctx, chunk, nchunks;
	float scale_log2;
};

/* --plant: rows [r0 * pct / 100, r1 * pct / 100) of each (batch, head)'s two
 * regions of rows rows (kpt_attn_decode_plant_bytes) are read by the block
 * of rows [r0, r1). A parameter of the planted kernel alone, so the kernels
 * without a plant are the code (and names: the gate's keys) they were
 * before plants existed; an epilogue here cost the 23 us ctx512 chunk
 * kernel +2.6% on an H200 (a fresh host's README gate, 2026-11-26). */
struct dec_plant {
	const void *buf;
	int pct, rows;
	float sink; /* NaN: a compare with it is false, which the compiler cannot know */
};

template <typename T> __device__ __forceinline__ T to16(float f);
template <> __device__ __forceinline__ __nv_bfloat16 to16<__nv_bfloat16>(float f)
{
	return __float2bfloat16_rn(f);
}
template <> __device__ __forceinline__ __half to16<__half>(float f)
{
	return __float2half_rn(f);
}

template <typename T> __device__ __forceinline__ void unpack8(const uint4 &u, float f[8])
{
	using M = kpt::mma_t<T>;
	float2 a = M::unpack(u.x), b = M::unpack(u.y), c = M::unpack(u.z), d = M::unpack(u.w);
	f[0] = a.x, f[1] = a.y, f[2] = b.x, f[3] = b.y, f[4] = c.x, f[5] = c.y, f[6] = d.x, f[7] = d.y;
}

__device__ __forceinline__ uint4 ld_stream(const void *p)
{
	uint4 r;
	asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
		     : "l"(p));
	return r;
}

template <typename T, int D, bool PLANT>
__device__ __forceinline__ void attn_decode_body(const dec_params &p, const dec_plant &q)
{
	constexpr int TPR = D / 8;                /* threads per cache row */
	constexpr int RPB = DEC_THREADS / TPR;    /* rows per block step */
	__shared__ float sc[DEC_MAX_CHUNK];
	__shared__ float red[DEC_THREADS / 32];
	__shared__ float part[RPB][D];

	const int split = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
	const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
	const int sub = tid % TPR, rg = tid / TPR;
	const int r0 = split * p.chunk, r1 = min(p.ctx, r0 + p.chunk), n = r1 - r0;
	const long long kvbase = b * p.sb + (long long)(h / p.group) * p.sh;
	const T *gk = reinterpret_cast<const T *>(p.k) + kvbase + (long long)r0 * p.ss + sub * 8;
	const T *gv = reinterpret_cast<const T *>(p.v) + kvbase + (long long)r0 * p.ss + sub * 8;
	const long long qo = ((long long)b * p.heads + h) * D;

	float qv[8];
	unpack8<T>(*reinterpret_cast<const uint4 *>(reinterpret_cast<const T *>(p.q) + qo + sub * 8), qv);
#pragma unroll
	for (int i = 0; i < 8; i++)
		qv[i] *= p.scale_log2;

	/* Scores, DEC_UNROLL independent 16-byte loads in flight per thread. */
	float mx = -INFINITY;
	for (int rb = 0; rb < n; rb += RPB * DEC_UNROLL) { /* warp-uniform trip count */
		const int r = rb + rg;
		uint4 kv[DEC_UNROLL];
#pragma unroll
		for (int u = 0; u < DEC_UNROLL; u++)
			if (r + u * RPB < n)
				kv[u] = ld_stream(gk + (long long)(r + u * RPB) * p.ss);
#pragma unroll
		for (int u = 0; u < DEC_UNROLL; u++) {
			float f[8], s = 0.f;
			if (r + u * RPB < n) {
				unpack8<T>(kv[u], f);
#pragma unroll
				for (int i = 0; i < 8; i++)
					s = fmaf(qv[i], f[i], s);
			}
#pragma unroll
			for (int o = TPR / 2; o > 0; o >>= 1)
				s += __shfl_xor_sync(0xffffffffu, s, o);
			if (r + u * RPB < n) {
				if (sub == 0)
					sc[r + u * RPB] = s;
				mx = fmaxf(mx, s);
			}
		}
	}
	for (int o = 16; o > 0; o >>= 1)
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	if (lane == 0)
		red[warp] = mx;
	__syncthreads();
	mx = red[0];
#pragma unroll
	for (int w = 1; w < DEC_THREADS / 32; w++)
		mx = fmaxf(mx, red[w]);

	/* Values: each thread sums the rows of its row group for 8 columns. */
	float acc[8] = { 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f };
	float lsum = 0.f;
	for (int rb = 0; rb < n; rb += RPB * DEC_UNROLL) {
		const int r = rb + rg;
		uint4 vv[DEC_UNROLL];
#pragma unroll
		for (int u = 0; u < DEC_UNROLL; u++)
			if (r + u * RPB < n)
				vv[u] = ld_stream(gv + (long long)(r + u * RPB) * p.ss);
#pragma unroll
		for (int u = 0; u < DEC_UNROLL; u++) {
			if (r + u * RPB < n) {
				float f[8];
				float w = kpt::fast_exp2(sc[r + u * RPB] - mx);
				lsum += w;
				unpack8<T>(vv[u], f);
#pragma unroll
				for (int i = 0; i < 8; i++)
					acc[i] = fmaf(w, f[i], acc[i]);
			}
		}
	}
#pragma unroll
	for (int i = 0; i < 8; i++)
		part[rg][sub * 8 + i] = acc[i];
	/* Each row's weight was added by all TPR threads of its group: count once. */
	if (sub != 0)
		lsum = 0.f;
	for (int o = 16; o > 0; o >>= 1)
		lsum += __shfl_xor_sync(0xffffffffu, lsum, o);
	__syncthreads();
	if (lane == 0)
		red[warp] = lsum;
	__syncthreads();
	float l = 0.f;
#pragma unroll
	for (int w = 0; w < DEC_THREADS / 32; w++)
		l += red[w];
	const long long wsi = ((long long)b * p.heads + h) * p.nchunks + split;
	for (int c = tid; c < D; c += DEC_THREADS) {
		float s = 0.f;
#pragma unroll
		for (int g = 0; g < RPB; g++)
			s += part[g][c];
		if (p.nchunks == 1) /* the whole cache in one chunk: final output, no combine */
			reinterpret_cast<T *>(p.o)[qo + c] = to16<T>(s / l);
		else
			p.ws_o[wsi * D + c] = s;
	}
	if (tid == 0 && p.nchunks > 1)
		p.ws_ml[wsi] = make_float2(mx, l);

	/* Planted work: stream pct% more K and V rows from memory that nothing
	 * else in the launch touches, reduce them into a value that is stored
	 * only when it equals NaN (never), so nothing observable changes. */
	if (PLANT) {
		const int q0 = (int)((long long)r0 * q.pct / 100), q1 = (int)((long long)r1 * q.pct / 100);
		const T *pk = reinterpret_cast<const T *>(q.buf) + ((long long)b * p.heads + h) * 2 * q.rows * D +
			      (long long)q0 * D + sub * 8;
		float junk = 0.f;
		for (int r = rg; r < q1 - q0; r += RPB) {
			float f[8], g[8];
			unpack8<T>(ld_stream(pk + (long long)r * D), f);
			unpack8<T>(ld_stream(pk + ((long long)q.rows + r) * D), g);
#pragma unroll
			for (int i = 0; i < 8; i++)
				junk = fmaf(f[i], g[i], junk);
		}
		if (junk == q.sink)
			*reinterpret_cast<float *>(const_cast<void *>(q.buf)) = junk;
	}
}

template <typename T, int D> __global__ void __launch_bounds__(DEC_THREADS) attn_decode_chunk(dec_params p)
{
	attn_decode_body<T, D, false>(p, dec_plant{});
}

template <typename T, int D>
__global__ void __launch_bounds__(DEC_THREADS) attn_decode_chunk_plant(dec_params p, dec_plant q)
{
	attn_decode_body<T, D, true>(p, q);
}

template <typename T, int D> __global__ void __launch_bounds__(D) attn_decode_combine(dec_params p)
{
	const int h = blockIdx.x, b = blockIdx.y, c = threadIdx.x;
	const long long bh = (long long)b * p.heads + h;
	const float2 *ml = p.ws_ml + bh * p.nchunks;
	float m = -INFINITY;
	for (int i = 0; i < p.nchunks; i++)
		m = fmaxf(m, ml[i].x);
	float l = 0.f, acc = 0.f;
	for (int i = 0; i < p.nchunks; i++) {
		float w = kpt::fast_exp2(ml[i].x - m);
		l = fmaf(w, ml[i].y, l);
		acc = fmaf(w, p.ws_o[(bh * p.nchunks + i) * D + c], acc);
	}
	reinterpret_cast<T *>(p.o)[bh * D + c] = to16<T>(acc / l);
}

int decode_chunk(int batch, int heads, int ctx)
{
	/* Aim for about 8 blocks per SM of a 132-SM part, chunks of 256..1024 rows
	 * (longer chunks left SMs idle at 32k: 2.89 against 3.04 TB/s). */
	long long bh = (long long)batch * heads;
	long long want = (1056 + bh - 1) / bh;
	int chunk = (int)((ctx + want - 1) / want);
	chunk = (chunk + 63) / 64 * 64;
	if (chunk < 256)
		chunk = 256;
	if (chunk > 1024)
		chunk = 1024;
	return chunk;
}

typedef void (*dec_fn)(const dec_params &p, const dec_plant &q, int batch, cudaStream_t s);

template <typename T, int D> void launch_decode(const dec_params &p, const dec_plant &q, int batch, cudaStream_t s)
{
	if (q.buf)
		attn_decode_chunk_plant<T, D><<<dim3(p.nchunks, p.heads, batch), DEC_THREADS, 0, s>>>(p, q);
	else
		attn_decode_chunk<T, D><<<dim3(p.nchunks, p.heads, batch), DEC_THREADS, 0, s>>>(p);
	if (p.nchunks > 1)
		attn_decode_combine<T, D><<<dim3(p.heads, batch), D, 0, s>>>(p);
}

static const dec_fn dec_table[2][2] = {
	{ launch_decode<__nv_bfloat16, 64>, launch_decode<__nv_bfloat16, 128> },
	{ launch_decode<__half, 64>, launch_decode<__half, 128> },
};

} /* namespace */

extern "C" size_t kpt_attn_decode_ws_bytes(int batch, int heads, int ctx, int head_dim)
{
	if (batch < 1 || heads < 1 || ctx < 1 || head_dim < 1)
		return 0;
	size_t nmax = (size_t)(ctx + 63) / 64; /* the smallest chunk allowed */
	return (size_t)batch * heads * nmax * ((size_t)head_dim * 4 + 8);
}

extern "C" size_t kpt_attn_decode_plant_bytes(int batch, int heads, int ctx, int head_dim, int plant_pct)
{
	if (batch < 1 || heads < 1 || ctx < 1 || head_dim < 1 || plant_pct <= 0)
		return 0;
	return (size_t)batch * heads * 2 * (size_t)((long long)ctx * plant_pct / 100) * head_dim * 2;
}

extern "C" int kpt_attn_decode(const struct kpt_attn_decode_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (!a || !a->q || !a->k_cache || !a->v_cache || !a->o || !a->ws)
		return kpt_diag_set(d, KPT_E_INVAL, "attention decode: a pointer is NULL");
	if (a->batch < 1 || a->heads < 1 || a->ctx < 1 || a->kv_heads < 1 || a->heads % a->kv_heads)
		return kpt_diag_set(d, KPT_E_INVAL, "attention decode: batch %d, heads %d, kv heads %d, ctx %d",
				    a->batch, a->heads, a->kv_heads, a->ctx);
	if (a->head_dim != 64 && a->head_dim != 128)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "attention decode: head dim %d is not 64 or 128",
				    a->head_dim);
	if ((unsigned)a->dtype > KPT_ATTN_FP16)
		return kpt_diag_set(d, KPT_E_INVAL, "attention decode: unknown dtype %d", (int)a->dtype);
	if (a->chunk < 0 || a->chunk % 64 || a->chunk > DEC_MAX_CHUNK)
		return kpt_diag_set(d, KPT_E_INVAL, "attention decode: chunk %d is not a multiple of 64 in 0..%d",
				    a->chunk, DEC_MAX_CHUNK);
	if (a->kv_stride_s % 8 || a->kv_stride_h % 8 || a->kv_stride_b % 8 ||
	    (((uintptr_t)a->q | (uintptr_t)a->k_cache | (uintptr_t)a->v_cache | (uintptr_t)a->o) & 15))
		return kpt_diag_set(d, KPT_E_INVAL, "attention decode: pointers and strides must be 16-byte aligned");
	size_t need = kpt_attn_decode_ws_bytes(a->batch, a->heads, a->ctx, a->head_dim);
	if (a->ws_bytes < need)
		return kpt_diag_set(d, KPT_E_INVAL, "attention decode: workspace of %zu bytes, %zu needed",
				    a->ws_bytes, need);
	dec_params p;
	p.q = a->q;
	p.k = a->k_cache;
	p.v = a->v_cache;
	p.o = a->o;
	p.sb = a->kv_stride_b;
	p.sh = a->kv_stride_h;
	p.ss = a->kv_stride_s;
	p.heads = a->heads;
	p.group = a->heads / a->kv_heads;
	p.ctx = a->ctx;
	p.chunk = a->chunk ? a->chunk : decode_chunk(a->batch, a->heads, a->ctx);
	p.nchunks = (a->ctx + p.chunk - 1) / p.chunk;
	size_t nws = (size_t)a->batch * a->heads * p.nchunks;
	p.ws_o = reinterpret_cast<float *>(a->ws);
	p.ws_ml = reinterpret_cast<float2 *>(p.ws_o + nws * a->head_dim);
	p.scale_log2 = a->scale * 1.4426950408889634f;
	dec_plant q = { NULL, 0, 0, NAN };
	if (a->plant_pct > 0) {
		size_t pneed = kpt_attn_decode_plant_bytes(a->batch, a->heads, a->ctx, a->head_dim, a->plant_pct);
		if (pneed && (!a->plant || a->plant_bytes < pneed || ((uintptr_t)a->plant & 15)))
			return kpt_diag_set(d, KPT_E_INVAL,
					    "attention decode: a plant of %d%% needs %zu bytes of 16-byte aligned memory",
					    a->plant_pct, pneed);
		if (pneed) {
			q.buf = a->plant;
			q.pct = a->plant_pct;
			q.rows = (int)((long long)a->ctx * a->plant_pct / 100);
		}
	}
	nvtxRangePushA("kpt_attn_decode");
	dec_table[a->dtype][a->head_dim == 128](p, q, a->batch, s);
	cudaError_t e = cudaGetLastError();
	nvtxRangePop();
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "attention decode: launch failed: %s", cudaGetErrorString(e));
	return 0;
}
