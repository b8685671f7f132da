/* attention_bwd.cu - FlashAttention-2 style backward attention (kpt_attn_bwd,
 * kpt_attention.h), mma.sync for sm_80+.
 *
 * Notation per (batch, head): scores S = Q K^T (seq x seq), P = exp(scale S -
 * lse) with the forward's logsumexp, dP = dO V^T, Delta_i = rowsum(dO_i * O_i),
 * dS = P * (dP - Delta) (elementwise; 0 where masked). Then
 *     dV = P^T dO,   dK = scale dS^T Q,   dQ = scale dS K.
 *
 * Three kernels:
 *   1. bwd_pre: Delta (fp32, ws) and a zeroed fp32 dQ accumulator (ws).
 *   2. bwd_kv: one block per BC = 64 keys of one (batch, head), 4 warps of 16
 *      keys each. dK and dV of the block's keys stay in registers while it
 *      walks every query block of BR rows (causal: only those at or after its
 *      first key). Per query block, with the key rows as the mma M dimension:
 *        S^T = K Q^T -> P^T (in registers) -> dV += P^T dO
 *        dP^T = V dO^T -> dS^T -> dK += dS^T Q
 *      dS^T goes to shared memory (bf16) and the block adds scale dS K, its
 *      part of dQ for those BR rows, into the fp32 accumulator with atomics.
 *   3. bwd_dq: the accumulator to 16-bit dq.
 *
 * Why atomics for dQ rather than a separate dQ pass (blocks over query rows
 * walking the keys): the separate pass recomputes S and dP, 7 matmuls of
 * seq x seq x D in place of 5, 40% more tensor-core work; the atomics cost
 * BR x D fp32 reductions in L2 per (key block, query block) and make dq's
 * summation order, hence its last bit, vary between runs. FlashAttention-2
 * made the same choice.
 *
 * Fragment layouts are those of kpt_mma.cuh. Tiles in shared memory: K, V
 * (BC x D), Q, dO (BR x D) swizzled as in the forward; dS^T (BC x BR) with
 * rows padded by 8 elements (16 bytes), which keeps the 8 row addresses of
 * an ldmatrix in different bank groups for BR = 32 and 64. Rows past seq are
 * zero-filled on load and their P is forced to 0, so any seq >= 1 works.
 */
#include <math.h>

#include <nvtx3/nvToolsExt.h>

#include "attention_bwd_sm90.h"
#include "kpt_attention.h"
#include "kpt_attn_path.h"
#include "kpt_mma.cuh"

/* KPT_ATTN_BWD_SM90: the build compiled attention_bwd_sm90.cu (sm_90a),
 * which kpt_attn_bwd runs on compute capability 9.0 (kpt_attn_bwd_path). */
#ifndef KPT_ATTN_BWD_SM90
#define KPT_ATTN_BWD_SM90 0
#endif

namespace {

using kpt::load_tile;
using kpt::smem_addr;

constexpr int BWD_NW = 4;            /* warps per dK/dV block */
constexpr int BWD_BC = 16 * BWD_NW;  /* keys per dK/dV block, 16 per warp */
constexpr float LOG2E = 1.4426950408889634f;

struct bwd_params {
	const void *q, *k, *v, *o, *dout;
	const float *lse;  /* [bh][seq] */
	void *dq, *dk, *dv;
	float *delta;      /* ws: [bh][seq] */
	float *dqacc;      /* ws: [bh][seq][D], unscaled sum of dS K */
	float *dqplant;    /* ws: the same again, where planted blocks add their dQ (never read) */
	long long sb, sh, ss;
	int heads, seq;
	float scale, scale_log2;
	int nkb;           /* key blocks of one (batch, head): ceil(seq / BC) */
	long long plant_blocks; /* planted key-block recomputations over the whole grid */
};

template <int N> __device__ __forceinline__ void zero_frags(float c[N][4])
{
#pragma unroll
	for (int i = 0; i < N; i++)
		c[i][0] = c[i][1] = c[i][2] = c[i][3] = 0.f;
}

/* C (16 x N, C fragments) += A B^T: A = rows a0.. a0 + 15 of sA, B = rows
 * 0..N-1 of sB, both D wide and swizzled (the forward's S = Q K^T). */
template <typename T, int D, int N>
__device__ __forceinline__ void warp_mma_abt(float c[N / 8][4], const T *sA, int a0, const T *sB, int lane)
{
	constexpr int W = D / 8;
	using M = kpt::mma_t<T>;
#pragma unroll
	for (int kk = 0; kk < D / 16; kk++) {
		uint32_t a[4];
		kpt::ldsm_x4(a, smem_addr(sA + kpt::swz<W>(a0 + (lane & 15), kk * 2 + (lane >> 4))));
#pragma unroll
		for (int nn = 0; nn < N / 16; nn++) {
			uint32_t b[4];
			kpt::ldsm_x4(b, smem_addr(sB + kpt::swz<W>(nn * 16 + (lane & 7) + ((lane >> 4) << 3),
								    kk * 2 + ((lane >> 3) & 1))));
			M::mma(c[2 * nn], a, b[0], b[1]);
			M::mma(c[2 * nn + 1], a, b[2], b[3]);
		}
	}
}

/* The A fragment of k-step kk of a 16 x K operand held as C fragments
 * (the forward's P packed for P V). */
template <typename T, int K>
__device__ __forceinline__ void c_to_a(uint32_t a[4], const float c[K / 8][4], int kk)
{
	using M = kpt::mma_t<T>;
	a[0] = M::pack(c[2 * kk][0], c[2 * kk][1]);
	a[1] = M::pack(c[2 * kk][2], c[2 * kk][3]);
	a[2] = M::pack(c[2 * kk + 1][0], c[2 * kk + 1][1]);
	a[3] = M::pack(c[2 * kk + 1][2], c[2 * kk + 1][3]);
}

/* C (16 x D) += P B: P (16 x K) as C fragments, B = rows 0..K-1 of sB, D
 * wide and swizzled, read transposed (the forward's O += P V). */
template <typename T, int D, int K>
__device__ __forceinline__ void warp_mma_pb(float c[D / 8][4], const float p[K / 8][4], const T *sB, int lane)
{
	constexpr int W = D / 8;
	using M = kpt::mma_t<T>;
#pragma unroll
	for (int kk = 0; kk < K / 16; kk++) {
		uint32_t a[4];
		c_to_a<T, K>(a, p, kk);
#pragma unroll
		for (int dn = 0; dn < D / 16; dn++) {
			uint32_t b[4];
			kpt::ldsm_x4_t(b, smem_addr(sB + kpt::swz<W>(kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3),
								     dn * 2 + (lane >> 4))));
			M::mma(c[2 * dn], a, b[0], b[1]);
			M::mma(c[2 * dn + 1], a, b[2], b[3]);
		}
	}
}

/* Kernel 1: one warp per row of one (batch, head): Delta = rowsum(dO * O) in
 * fp32 and the row of the dQ accumulator cleared. Grid-stride over rows. */
template <typename T, int D>
__global__ void __launch_bounds__(256) attn_bwd_pre_kernel(bwd_params p, long long rows)
{
	using M = kpt::mma_t<T>;
	const int lane = threadIdx.x & 31;
	const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
	for (long long r = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); r < rows; r += warps) {
		const long long bh = r / p.seq;
		const int i = (int)(r % p.seq);
		const long long off = (bh / p.heads) * p.sb + (bh % p.heads) * p.sh + (long long)i * p.ss;
		const uint32_t *o2 = reinterpret_cast<const uint32_t *>(reinterpret_cast<const T *>(p.o) + off);
		const uint32_t *g2 = reinterpret_cast<const uint32_t *>(reinterpret_cast<const T *>(p.dout) + off);
		float acc = 0.f;
#pragma unroll
		for (int c = lane; c < D / 2; c += 32) {
			float2 a = M::unpack(o2[c]), b = M::unpack(g2[c]);
			acc = fmaf(a.x, b.x, fmaf(a.y, b.y, acc));
		}
#pragma unroll
		for (int m = 16; m >= 1; m >>= 1)
			acc += __shfl_xor_sync(0xffffffffu, acc, m);
		if (lane == 0)
			p.delta[r] = acc;
		float4 *z = reinterpret_cast<float4 *>(p.dqacc + r * D);
#pragma unroll
		for (int c = lane; c < D / 4; c += 32)
			z[c] = make_float4(0.f, 0.f, 0.f, 0.f);
	}
}

/* Kernel 3: dq = scale * dqacc, rounded to T; one thread per 2 elements. */
template <typename T, int D>
__global__ void __launch_bounds__(256) attn_bwd_dq_kernel(bwd_params p, long long rows)
{
	using M = kpt::mma_t<T>;
	const long long n = rows * (D / 2);
	for (long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x; x < n; x += (long long)gridDim.x * blockDim.x) {
		const long long r = x / (D / 2);
		const int c = (int)(x % (D / 2)) * 2;
		const long long bh = r / p.seq;
		const int i = (int)(r % p.seq);
		const long long off = (bh / p.heads) * p.sb + (bh % p.heads) * p.sh + (long long)i * p.ss + c;
		const float2 a = *reinterpret_cast<const float2 *>(p.dqacc + r * D + c);
		*reinterpret_cast<uint32_t *>(reinterpret_cast<T *>(p.dq) + off) = M::pack(a.x * p.scale, a.y * p.scale);
	}
}

/* Kernel 2. Grid (nkb + planted columns, heads, batch), BWD_NW warps. BR:
 * query rows per step (64 for d64, 32 for d128, which keeps the S^T and dP^T
 * fragments small beside the 2 x 64 dK/dV accumulators of d128).
 *
 * Planted blocks (blockIdx.x >= nkb) redo the work of key block e % nkb of
 * their (batch, head), e their planted index: the same mma work and dQ
 * atomics, into a second accumulator nothing reads (a plant without the
 * atomics slowed by a quarter of its size on an H200); only the dK and dV
 * stores are skipped, so the outputs do not change. */
template <typename T, int D, int BR, bool CAUSAL>
__global__ void __launch_bounds__(BWD_NW * 32, 1) attn_bwd_kv_kernel(bwd_params p)
{
	constexpr int NT = BWD_NW * 32;
	constexpr int BC = BWD_BC;
	constexpr int W = D / 8;          /* 16-byte chunks per row of a D-wide tile */
	constexpr int DSLD = BR + 8;      /* row length (elements) of the padded dS^T tile */
	/* dQ of a query block: BR/16 row tiles x DQC column groups over the warps. */
	constexpr int DQR = BR / 16;
	constexpr int DQC = BWD_NW / DQR;
	constexpr int DQN = D / DQC;      /* dQ columns per warp */
	static_assert(BWD_NW % DQR == 0 && D % (16 * DQC) == 0, "dQ split");
	static_assert(BC % BR == 0, "causal: a key block starts on a query block");
	using M = kpt::mma_t<T>;

	extern __shared__ __align__(128) unsigned char smem[];
	T *const sK = reinterpret_cast<T *>(smem);
	T *const sV = sK + BC * D;
	T *const sQ = sV + BC * D;
	T *const sG = sQ + BR * D;        /* dO */
	T *const sS = sG + BR * D;        /* dS^T, BC x DSLD */
	float *const sL = reinterpret_cast<float *>(sS + BC * DSLD); /* lse * log2(e), BR */
	float *const sD = sL + BR;                                   /* Delta, BR */

	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int seq = p.seq;
	const long long bh = (long long)blockIdx.z * p.heads + blockIdx.y;
	int kb = blockIdx.x;
	bool planted = false;
	if (kb >= p.nkb) {
		long long e = (long long)(kb - p.nkb) * ((long long)gridDim.y * gridDim.z) + bh;
		if (e >= p.plant_blocks)
			return;
		planted = true;
		kb = (int)(e % p.nkb);
	}
	const int k0 = kb * BC;
	const long long base = blockIdx.z * p.sb + blockIdx.y * p.sh;
	const T *gq = reinterpret_cast<const T *>(p.q) + base;
	const T *gk = reinterpret_cast<const T *>(p.k) + base;
	const T *gv = reinterpret_cast<const T *>(p.v) + base;
	const T *gg = reinterpret_cast<const T *>(p.dout) + base;
	const float *glse = p.lse + bh * seq;
	const float *gdel = p.delta + bh * seq;
	/* planted blocks do a real block's work, its dQ atomics included, into
	 * a second accumulator nothing reads: the output is unchanged */
	float *gdq = (planted ? p.dqplant : p.dqacc) + bh * seq * D;

	/* Causal: query rows before k0 see none of these keys. k0 is a multiple
	 * of BC, hence of BR. */
	const int qb_first = CAUSAL ? k0 / BR : 0;
	const int qb_end = (seq + BR - 1) / BR;

	load_tile<T, D, BC, NT>(sK, gk, k0, seq, p.ss, tid);
	load_tile<T, D, BC, NT>(sV, gv, k0, seq, p.ss, tid);
	kpt::cp_async_commit();
	/* The first query block; later ones are loaded while dQ is computed. */
	{
		const int q0 = qb_first * BR;
		load_tile<T, D, BR, NT>(sQ, gq, q0, seq, p.ss, tid);
		load_tile<T, D, BR, NT>(sG, gg, q0, seq, p.ss, tid);
		kpt::cp_async_commit();
		for (int i = tid; i < BR; i += NT) {
			bool ok = q0 + i < seq;
			sL[i] = ok ? glse[q0 + i] * LOG2E : 0.f;
			sD[i] = ok ? gdel[q0 + i] : 0.f;
		}
	}

	float dk[D / 8][4], dv[D / 8][4];
	zero_frags<D / 8>(dk);
	zero_frags<D / 8>(dv);

	const int wk0 = warp * 16;                  /* this warp's first key row in the tile */
	const int g = lane >> 2, t = lane & 3;
	const float sl2 = p.scale_log2;

	for (int qb = qb_first; qb < qb_end; qb++) {
		const int q0 = qb * BR;
		kpt::cp_async_wait<0>();
		/* Q, dO, lse, Delta of this block landed; every warp is done with
		 * the previous block's dS^T. */
		__syncthreads();

		/* S^T (16 keys x BR queries) = K_w Q^T. */
		float st[BR / 8][4];
		zero_frags<BR / 8>(st);
		warp_mma_abt<T, D, BR>(st, sK, wk0, sQ, lane);
		/* P^T = exp2(scale_log2 S - lse log2 e); 0 for keys or queries past
		 * seq and, causal, for a key after its query. Element e of n-tile
		 * nt: key k0 + wk0 + g + 8 (e >> 1), query q0 + 8 nt + 2 t + (e & 1). */
#pragma unroll
		for (int nt = 0; nt < BR / 8; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int key = k0 + wk0 + g + 8 * (e >> 1);
				const int ql = nt * 8 + 2 * t + (e & 1);
				const int qrow = q0 + ql;
				float pv = kpt::fast_exp2(fmaf(st[nt][e], sl2, -sL[ql]));
				if (key >= seq || qrow >= seq || (CAUSAL && key > qrow))
					pv = 0.f;
				st[nt][e] = pv;
			}

		/* dV_w += P^T dO: P^T repacked as A fragments (as the forward's P). */
		warp_mma_pb<T, D, BR>(dv, st, sG, lane);

		/* dP^T (16 keys x BR queries) = V_w dO^T. */
		float dpt[BR / 8][4];
		zero_frags<BR / 8>(dpt);
		warp_mma_abt<T, D, BR>(dpt, sV, wk0, sG, lane);
		/* dS^T = P^T * (dP^T - Delta[query]), kept in st. */
#pragma unroll
		for (int nt = 0; nt < BR / 8; nt++)
#pragma unroll
			for (int e = 0; e < 4; e++)
				st[nt][e] *= dpt[nt][e] - sD[nt * 8 + 2 * t + (e & 1)];

		/* dS^T to shared memory, row = key (wk0 + g + 8 h), columns =
		 * queries 8 nt + 2 t, +1; dK_w += dS^T Q (scale applied at the end). */
		uint32_t *sS32 = reinterpret_cast<uint32_t *>(sS);
#pragma unroll
		for (int kk = 0; kk < BR / 16; kk++) {
			uint32_t a[4];
			c_to_a<T, BR>(a, st, kk);
			sS32[((wk0 + g) * DSLD + kk * 16 + 2 * t) >> 1] = a[0];
			sS32[((wk0 + g + 8) * DSLD + kk * 16 + 2 * t) >> 1] = a[1];
			sS32[((wk0 + g) * DSLD + kk * 16 + 8 + 2 * t) >> 1] = a[2];
			sS32[((wk0 + g + 8) * DSLD + kk * 16 + 8 + 2 * t) >> 1] = a[3];
		}
		warp_mma_pb<T, D, BR>(dk, st, sQ, lane);
		/* dS^T complete; every warp is done with Q, dO, lse and Delta. */
		__syncthreads();
		if (qb + 1 < qb_end) {
			const int n0 = q0 + BR;
			load_tile<T, D, BR, NT>(sQ, gq, n0, seq, p.ss, tid);
			load_tile<T, D, BR, NT>(sG, gg, n0, seq, p.ss, tid);
			kpt::cp_async_commit();
			for (int i = tid; i < BR; i += NT) {
				bool ok = n0 + i < seq;
				sL[i] = ok ? glse[n0 + i] * LOG2E : 0.f;
				sD[i] = ok ? gdel[n0 + i] : 0.f;
			}
		}

		/* dQ[q0 + 16 mr .. +16][DQN cols from cn0] += dS K over this block's
		 * 64 keys. A = dS (queries x keys) read transposed from dS^T: matrix
		 * m = lane / 8 of the x4 covers keys 8 (m >> 1).. and queries
		 * 8 (m & 1).. of the 16 x 16 step, giving a0..a3 in order. */
		{
			const int mr = warp % DQR, cn0 = (warp / DQR) * DQN;
			float dq[DQN / 8][4];
			zero_frags<DQN / 8>(dq);
#pragma unroll
			for (int kk = 0; kk < BC / 16; kk++) {
				uint32_t a[4];
				const int m = lane >> 3;
				kpt::ldsm_x4_t(a, smem_addr(sS + (kk * 16 + (lane & 7) + ((m >> 1) << 3)) * DSLD +
								   mr * 16 + ((m & 1) << 3)));
#pragma unroll
				for (int dn = 0; dn < DQN / 16; dn++) {
					uint32_t b[4];
					kpt::ldsm_x4_t(b, smem_addr(sK + kpt::swz<W>(kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3),
										     cn0 / 8 + dn * 2 + (lane >> 4))));
					M::mma(dq[2 * dn], a, b[0], b[1]);
					M::mma(dq[2 * dn + 1], a, b[2], b[3]);
				}
			}
#pragma unroll
			for (int nt = 0; nt < DQN / 8; nt++)
#pragma unroll
				for (int e = 0; e < 4; e++) {
					const int row = q0 + mr * 16 + g + 8 * (e >> 1);
					const int col = cn0 + nt * 8 + 2 * t + (e & 1);
					if (row < seq)
						atomicAdd(gdq + (long long)row * D + col, dq[nt][e]);
				}
		}
	}
	if (planted)
		return;

	/* Stage dK (scaled) and dV of this warp's 16 keys in sK and sV (every
	 * warp is past its last read of them after the barrier), then store
	 * 16-byte chunks. */
	__syncthreads();
	uint32_t *sK32 = reinterpret_cast<uint32_t *>(sK), *sV32 = reinterpret_cast<uint32_t *>(sV);
#pragma unroll
	for (int dn = 0; dn < D / 8; dn++)
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int row = wk0 + g + 8 * h, col = dn * 8 + 2 * t;
			const int off = (kpt::swz<W>(row, col >> 3) + (col & 7)) >> 1;
			sK32[off] = M::pack(dk[dn][2 * h] * p.scale, dk[dn][2 * h + 1] * p.scale);
			sV32[off] = M::pack(dv[dn][2 * h], dv[dn][2 * h + 1]);
		}
	__syncwarp();
	T *gdk = reinterpret_cast<T *>(p.dk) + base, *gdv = reinterpret_cast<T *>(p.dv) + base;
#pragma unroll
	for (int i = lane; i < 16 * W; i += 32) {
		const int r = wk0 + i / W, c = i % W;
		if (k0 + r < seq) {
			*reinterpret_cast<uint4 *>(gdk + (long long)(k0 + r) * p.ss + c * 8) =
				*reinterpret_cast<const uint4 *>(sK + kpt::swz<W>(r, c));
			*reinterpret_cast<uint4 *>(gdv + (long long)(k0 + r) * p.ss + c * 8) =
				*reinterpret_cast<const uint4 *>(sV + kpt::swz<W>(r, c));
		}
	}
}

template <int D> constexpr int bwd_br()
{
	return D == 64 ? 64 : 32;
}

template <int D> constexpr int bwd_smem()
{
	return (2 * BWD_BC * D + 2 * bwd_br<D>() * D + BWD_BC * (bwd_br<D>() + 8)) * 2 + 2 * bwd_br<D>() * 4;
}

typedef cudaError_t (*bwd_launch_fn)(const bwd_params &p, int batch, int heads, long long plant_cols,
				     cudaStream_t s);

/* The three kernels; the caller wraps them in one NVTX range. */
template <typename T, int D, bool CAUSAL>
cudaError_t launch_bwd(const bwd_params &p, int batch, int heads, long long plant_cols, cudaStream_t s)
{
	const long long rows = (long long)batch * heads * p.seq;
	const long long rb = (rows + 7) / 8;
	const unsigned row_blocks = (unsigned)(rb < 1048560 ? rb : 1048560);
	attn_bwd_pre_kernel<T, D><<<row_blocks, 256, 0, s>>>(p, rows);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		return e;

	constexpr int smem = bwd_smem<D>();
	auto kern = attn_bwd_kv_kernel<T, D, bwd_br<D>(), CAUSAL>;
	if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) != cudaSuccess)
		return e;
	dim3 grid((unsigned)(p.nkb + plant_cols), heads, batch);
	kern<<<grid, BWD_NW * 32, smem, s>>>(p);
	if ((e = cudaGetLastError()) != cudaSuccess)
		return e;

	const long long pairs = rows * (D / 2);
	const long long qbk = (pairs + 255) / 256;
	const unsigned dq_blocks = (unsigned)(qbk < 1048560 ? qbk : 1048560);
	attn_bwd_dq_kernel<T, D><<<dq_blocks, 256, 0, s>>>(p, rows);
	return cudaGetLastError();
}

/* [d64/d128][causal]; bf16 only. */
static const bwd_launch_fn bwd_table[2][2] = {
	{ launch_bwd<__nv_bfloat16, 64, false>, launch_bwd<__nv_bfloat16, 64, true> },
	{ launch_bwd<__nv_bfloat16, 128, false>, launch_bwd<__nv_bfloat16, 128, true> },
};

size_t align256(size_t n)
{
	return (n + 255) & ~(size_t)255;
}

} /* namespace */

extern "C" size_t kpt_attn_bwd_ws_bytes(int batch, int heads, int seq, int head_dim)
{
	if (batch < 1 || heads < 1 || seq < 1 || head_dim < 1)
		return 0;
	size_t rows = (size_t)batch * heads * seq;
	/* delta, the dQ accumulator and the planted blocks' accumulator; the
	 * sm_90a kernel's layout (padded rows) where that is larger, so one
	 * size serves whichever kernel the device runs */
	size_t mma = align256(rows * sizeof(float)) + 2 * align256(rows * head_dim * sizeof(float));
	size_t sm90 = kpt::attn_bwd_sm90_ws_bytes(batch, heads, seq, head_dim);
	return mma > sm90 ? mma : sm90;
}

/* kpt_attn_bwd_path for a on the current device (two attribute queries). */
static enum kpt_attn_path bwd_device_path(const struct kpt_attn_bwd_args *a)
{
	int dev = 0, major = 0, minor = 0;
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) != cudaSuccess) {
		(void)cudaGetLastError();
		return KPT_ATTN_PATH_MMA_SYNC; /* let the launch report the error */
	}
	return kpt_attn_bwd_path(major, minor, a->head_dim, KPT_ATTN_BWD_SM90);
}

extern "C" int kpt_attn_bwd(const struct kpt_attn_bwd_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (!a || !a->q || !a->k || !a->v || !a->o || !a->dout || !a->lse || !a->dq || !a->dk || !a->dv || !a->ws)
		return kpt_diag_set(d, KPT_E_INVAL, "attention backward: a tensor or workspace pointer is NULL");
	if (a->batch < 1 || a->heads < 1 || a->seq < 1)
		return kpt_diag_set(d, KPT_E_INVAL, "attention backward: batch %d, heads %d, seq %d must be >= 1",
				    a->batch, a->heads, a->seq);
	if (a->head_dim != 64 && a->head_dim != 128)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "attention backward: head dim %d is not 64 or 128",
				    a->head_dim);
	if (a->dtype != KPT_ATTN_BF16)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "attention backward: dtype %d is not bf16 (only bf16 is built)",
				    (int)a->dtype);
	if (a->stride_s % 8 || a->stride_h % 8 || a->stride_b % 8 || a->stride_s < a->head_dim ||
	    (((uintptr_t)a->q | (uintptr_t)a->k | (uintptr_t)a->v | (uintptr_t)a->o | (uintptr_t)a->dout |
	      (uintptr_t)a->dq | (uintptr_t)a->dk | (uintptr_t)a->dv | (uintptr_t)a->ws) & 15) ||
	    ((uintptr_t)a->lse & 3))
		return kpt_diag_set(d, KPT_E_INVAL, "attention backward: pointers and strides must be 16-byte aligned");
	if (a->heads > 65535 || a->batch > 65535)
		return kpt_diag_set(d, KPT_E_INVAL, "attention backward: batch or heads above 65535");
	size_t need = kpt_attn_bwd_ws_bytes(a->batch, a->heads, a->seq, a->head_dim);
	if (a->ws_bytes < need)
		return kpt_diag_set(d, KPT_E_INVAL, "attention backward: workspace of %zu bytes, %zu needed",
				    a->ws_bytes, need);
	if (a->plant_pct < 0 || a->plant_pct > 10000)
		return kpt_diag_set(d, KPT_E_INVAL, "attention backward: plant_pct %d is not in 0..10000", a->plant_pct);

	if (bwd_device_path(a) == KPT_ATTN_PATH_SM90_WGMMA) {
#if KPT_ATTN_BWD_SM90
		/* falls back to mma.sync only where the driver refuses the strides
		 * as TMA tensor maps (or the sm_90a image does not load) */
		int rc = kpt::attn_bwd_sm90(a, s, d);
		if (rc != KPT_E_UNSUPPORTED)
			return rc;
		kpt_diag_clear(d); /* the fallback succeeds or says its own error */
#endif
	}

	bwd_params p;
	p.q = a->q, p.k = a->k, p.v = a->v, p.o = a->o, p.dout = a->dout;
	p.lse = a->lse;
	p.dq = a->dq, p.dk = a->dk, p.dv = a->dv;
	const size_t rows = (size_t)a->batch * a->heads * a->seq;
	p.delta = static_cast<float *>(a->ws);
	p.dqacc = reinterpret_cast<float *>(static_cast<char *>(a->ws) + align256(rows * sizeof(float)));
	p.dqplant = reinterpret_cast<float *>(reinterpret_cast<char *>(p.dqacc) +
					      align256(rows * (size_t)a->head_dim * sizeof(float)));
	p.sb = a->stride_b, p.sh = a->stride_h, p.ss = a->stride_s;
	p.heads = a->heads, p.seq = a->seq;
	p.scale = a->scale;
	p.scale_log2 = a->scale * LOG2E;
	p.nkb = (a->seq + BWD_BC - 1) / BWD_BC;
	/* Planted work in whole key blocks spread over every (batch, head):
	 * round(pct% of all key blocks), in extra grid columns of B x H each. */
	const long long bhn = (long long)a->batch * a->heads;
	p.plant_blocks = ((long long)p.nkb * bhn * a->plant_pct + 50) / 100;
	const long long plant_cols = (p.plant_blocks + bhn - 1) / bhn;
	if (p.nkb + plant_cols > 0x7fffffffLL)
		return kpt_diag_set(d, KPT_E_INVAL, "attention backward: seq %d with plant %d%% needs too many blocks",
				    a->seq, a->plant_pct);

	bwd_launch_fn fn = bwd_table[a->head_dim == 128][a->causal ? 1 : 0];
	nvtxRangePushA("kpt_attn_bwd");
	cudaError_t e = fn(p, a->batch, a->heads, plant_cols, s);
	nvtxRangePop();
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "attention backward: launch failed: %s", cudaGetErrorString(e));
	return 0;
}
