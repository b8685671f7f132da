/* attention_bwd_sm90.cu - Hopper backward attention with wgmma and TMA (the
 * sm_90a path of kpt_attn_bwd; attention_bwd_sm90.h).
 *
 * Contract of kpt_attn_bwd (kpt_attention.h) for bf16, head dim 64 or 128,
 * causal or not; the math and notation are attention_bwd.cu's (S = Q K^T,
 * P = exp(scale S - lse), dP = dO V^T, Delta = rowsum(dO * O),
 * dS = P * (dP - Delta), dV = P^T dO, dK = scale dS^T Q, dQ = scale dS K).
 * Needs sm_90a (wgmma, setmaxnreg): compiled for that target alone; for any
 * other target the kernel is an empty stub the host never launches.
 * attention_bwd.cu keeps the FlashAttention-2 style mma.sync kernel for
 * every other GPU and falls back to it when the driver refuses a tensor map.
 *
 * Three kernels (FlashAttention-3's backward design, written anew):
 *   1. bwd90_pre_kernel: per row, lse * log2(e) (+inf for the padding rows, so
 *      their P is 0 without a mask) and Delta, in arrays padded to whole
 *      64-row query blocks (seq_pad) so that the main kernel loads a block's
 *      256 bytes of each with one bulk copy; the dQ accumulator is cleared
 *      with a memset.
 *   2. attn_bwd_sm90_kernel: one block per BN = 128 keys of one (batch, head), a
 *      producer warpgroup and two consumer warpgroups of 64 keys each
 *      (setmaxnreg 24 / 240). The producer's one thread loads K and V once
 *      (TMA, 4-D maps (d, s, h, b), 128B swizzle, rows past seq zero-filled)
 *      and then, two stages deep, each query block's Q and dO (64 rows) and
 *      its lse and Delta (bulk copies), completing on mbarriers. Per query
 *      block each consumer warpgroup, with its keys as the wgmma M dimension:
 *        S^T  = K_c Q^T   (m64n64k16, both from shared memory, K-major)
 *        dP^T = V_c dO^T  (same)
 *        P^T, dS^T in registers (exp2 of the log2e-prescaled scores),
 *        dV_c += P^T dO, dK_c += dS^T Q (m64nDk16, A = P^T / dS^T packed
 *        to bf16 in registers, B = dO / Q MN-major: the transpose bit),
 *      dS^T (bf16) also goes to shared memory (128B-swizzled, queries
 *      contiguous, double-buffered), and then
 *        dQ_tile = dS K   (m64n64k16, A = dS read MN-major from dS^T, B = K
 *                         read MN-major: both transpose bits)
 *      d128: warpgroup c computes dQ columns 64c..64c+63 over all 128 keys
 *      (a barrier of both warpgroups after the dS^T stores); d64: each
 *      warpgroup its own 64 keys' partial over all 64 columns (no
 *      cross-warpgroup barrier; twice the reductions, each half the size).
 *      The fp32 dQ tile is written to shared memory in the accumulator's
 *      own register order (one float2 per thread and register pair,
 *      consecutive threads consecutive: no bank conflicts) and added into
 *      the fp32 accumulator in global memory with one bulk reduction
 *      (cp.reduce.async.bulk .add.f32, 16 KB) instead of BM x D scalar
 *      atomics; the accumulator keeps that order, tile by tile, and only
 *      kernel 3 knows it. dK and dV stay in registers (d128: 2 x 64 of the
 *      240) and are stored once at the end.
 *   3. bwd90_dq_kernel: the accumulator, unpermuted, scaled and rounded to dq.
 *
 * Why these choices: the backward's five matmuls per (key block, query
 * block) are tensor-core work that mma.sync runs at about half of what
 * wgmma does on Hopper, and the old kernel's 64-key blocks re-read Q and dO
 * twice as often and did twice the dQ atomics of 128-key blocks. Keeping
 * keys as M for the first four matmuls lets P^T and dS^T feed the dV / dK
 * wgmmas straight from registers (the forward's P V trick); only dQ needs
 * dS through shared memory. Keys past seq (the last key block of a seq
 * that is no multiple of 128; K and V rows read as zeros) get P = 0: their
 * score 0 would give P = exp(-lse), +inf for a query row whose lse is below
 * about -88, and dS * 0 a NaN in dQ (the `.far` check entries); the mask
 * is a branch uniform per block, only the last block takes it. Query rows
 * past seq get P = 0 from the +inf lse; causal blocks start at their first
 * key's query block and mask only the query blocks that cross the
 * diagonal (which also masks the keys past seq there).
 *
 * Planted slowdown (plant_pct): every block first runs pct% more query-block
 * steps (sm90_plant_extra: floor or ceil, dithered over the blocks), each a
 * real step on real query blocks (loads, all five wgmmas, exp2, dS^T
 * stores, the dQ reduction), its dQ going into a second accumulator nothing
 * reads; the first real step's dK and dV wgmmas overwrite what the planted
 * ones summed (scale-d 0), so the outputs are unchanged and each block's
 * work grows by pct%. (Extra blocks, the mma.sync kernel's plant, would add
 * whole waves here: 2048 blocks of d128 s16384 fill 15.5 waves of 132 SMs,
 * 10% more made 17.1, +12% measured.) H100, 2026-11-26, plant 10%: 1.092 to
 * 1.099 on the four s16384 rows. Clearing dK / dV by scale-d instead of a
 * branch, and reading a thread's 16 lse and Delta values once per step as
 * float2 instead of per element from shared memory, made d128 s16384 7%
 * faster (10.28 -> 9.57 ms).
 *
 * Measured (H100 80GB HBM3, 2026-11-26, kpt-workloads --settle-us 3000,
 * medians of 3 rounds interleaved with torch SDPA's cuDNN backend, 2 rounds;
 * B = 16384 / S, H = 2048 / D): d128 s16384 9.57 ms (574 TFLOP/s, cuDNN
 * 9.52), causal 4.91 (cuDNN 4.92); d64 s16384 12.15 (cuDNN 11.87), causal
 * 6.38 (cuDNN 6.29); s2048 d128 1.50 / causal 0.99, d64 1.97 / 1.24 (cuDNN
 * 1.64 / 1.10, 1.97 / 1.34). The mma.sync kernel on another H100: 40.2 ms
 * at d128 s16384. Registers: 168 at launch, no spills (ptxas, all four).
 *
 * wgmma operands (16-bit, 128B swizzle: 8 rows of 128 bytes = one 1024-byte
 * atom; tiles are chunks of 64 columns):
 *   - K-major A (K, V rows 64c..) and B (Q, dO): SBO 1024; k-step kk at
 *     chunk kk / 4, byte kk % 4 * 32 of the row.
 *   - MN-major B (dO, Q for dV / dK; N = D): LBO = chunk stride of the Q
 *     tile (64 x 128 B), SBO 1024; k-step of 16 query rows = 2048 bytes.
 *   - dQ: A = dS^T tile (128 keys x 64 queries, one chunk), B = K chunk
 *     (64 columns; d64 its rows 64c..), both one chunk wide in M / N (LBO
 *     unused), SBO 1024, k-step of 16 keys = 2048 bytes.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h> /* CUtensorMap (headers only: no libcuda link) */
#include <math.h>
#include <stdint.h>

#include <atomic>

#include <nvtx3/nvToolsExt.h>

#include "attention_bwd_sm90.h"
#include "kpt_sm90.cuh"
#include "kpt_wgmma.cuh"

namespace {

constexpr float LOG2E_F = 1.4426950408889634f;

template <int HDIM> struct bwd_dims {
	static constexpr int HD = HDIM;
	static constexpr int BN = 128;                      /* keys per block */
	static constexpr int BM = kpt::ATTN_BWD_SM90_BM;    /* query rows per step */
	static constexpr int NC = 2;                        /* consumer warpgroups, 64 keys each */
	static constexpr int ST = 2;                        /* Q / dO stages */
	static constexpr int NTHREADS = 128 * (NC + 1);
	static constexpr int REG_PROD = 24, REG_CONS = 240;
	static constexpr bool DQ_KSPLIT = HD == 64;         /* dQ: split keys (d64) or columns (d128) */
	static constexpr int DQ_KSTEPS = DQ_KSPLIT ? 4 : 8; /* 16-key steps of a warpgroup's dQ */
	static constexpr int KV_CHUNK = BN * 128;           /* one 64-column chunk of K or V */
	static constexpr int Q_CHUNK = BM * 128;            /* one of Q or dO */
	static constexpr int KV_BYTES = KV_CHUNK * (HD / 64);
	static constexpr int Q_BYTES = Q_CHUNK * (HD / 64);
	static constexpr int DS_BYTES = BN * BM * 2;        /* dS^T: 128 keys x 64 queries */
	static constexpr int DQ_TILE = BM * HD;             /* floats of one query block's dQ */
	static constexpr int STG_WG = 64 * 64 * 4;          /* a warpgroup's fp32 dQ part */
	static constexpr int SM_K = 0;
	static constexpr int SM_V = SM_K + KV_BYTES;
	static constexpr int SM_Q = SM_V + KV_BYTES;
	static constexpr int SM_G = SM_Q + ST * Q_BYTES;
	static constexpr int SM_DS = SM_G + ST * Q_BYTES;
	static constexpr int SM_STG = SM_DS + 2 * DS_BYTES;
	static constexpr int SM_L = SM_STG + NC * STG_WG;   /* lse * log2e, ST x BM floats */
	static constexpr int SM_D = SM_L + ST * BM * 4;     /* Delta */
	static constexpr int SM_BARS = SM_D + ST * BM * 4;  /* barKV, full[ST], empty[ST] */
	static constexpr int SM_BYTES = SM_BARS + (1 + 2 * ST) * 8 + 1024;
	static_assert(HD == 64 || HD == 128, "one or two 64-column chunks");
	static_assert(DQ_TILE * 4 == (DQ_KSPLIT ? 1 : NC) * STG_WG,
		      "d64: each warpgroup's partial is the whole tile; d128: the two column halves are");
	static_assert(128 * (REG_PROD + NC * REG_CONS) <= 65536, "setmaxnreg over the register file");
	static_assert(SM_BYTES <= 227 * 1024, "shared memory of one block");
};

struct bwd90_params {
	void *dq, *dk, *dv;
	const void *o, *dout;
	const float *lse;
	float *lse2, *delta;     /* ws: [bh][seq_pad] */
	float *dqacc, *dqplant;  /* ws: [bh][seq_pad / BM][DQ_TILE], the kernel's register order */
	long long sb, sh, ss;
	int heads, seq, seq_pad, nkb;
	float scale, scale_log2;
	int plant_pct;           /* --plant: extra query-block steps per block (header comment) */
};

} /* namespace */

/* Set when an mbarrier wait gave up (a pipeline bug): dK and dV are then
 * NaN, which the checks catch, instead of a hung GPU. Sticky. */
__device__ int kpt_attn_bwd_sm90_hung;

namespace {

/* Kernel 1: one warp per padded row. */
template <int D> __global__ void __launch_bounds__(256) bwd90_pre_kernel(bwd90_params p, long long rows)
{
	const int lane = threadIdx.x & 31;
	const long long warps = (long long)gridDim.x * (blockDim.x >> 5);
	for (long long r = (long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5); r < rows; r += warps) {
		const long long bh = r / p.seq_pad;
		const int i = (int)(r % p.seq_pad);
		float acc = 0.f;
		if (i < p.seq) {
			const long long off = (bh / p.heads) * p.sb + (bh % p.heads) * p.sh + (long long)i * p.ss;
			const __nv_bfloat162 *o2 = reinterpret_cast<const __nv_bfloat162 *>(
				reinterpret_cast<const __nv_bfloat16 *>(p.o) + off);
			const __nv_bfloat162 *g2 = reinterpret_cast<const __nv_bfloat162 *>(
				reinterpret_cast<const __nv_bfloat16 *>(p.dout) + off);
#pragma unroll
			for (int c = lane; c < D / 2; c += 32) {
				const float2 a = __bfloat1622float2(o2[c]), b = __bfloat1622float2(g2[c]);
				acc = fmaf(a.x, b.x, fmaf(a.y, b.y, acc));
			}
		}
#pragma unroll
		for (int m = 16; m >= 1; m >>= 1)
			acc += __shfl_xor_sync(0xffffffffu, acc, m);
		if (lane == 0) {
			p.delta[r] = acc;
			p.lse2[r] = i < p.seq ? p.lse[bh * p.seq + i] * LOG2E_F : INFINITY;
		}
	}
}

/* Where float2 number f of a dQ tile (kernel 2's staging order: column
 * half c, register pair q, thread lt of the warpgroup) lands: row and
 * column in the 64-row tile. */
__device__ __forceinline__ void dq_tile_pos(int f, int &row, int &col)
{
	const int c = f >> 11, q = (f >> 7) & 15, lt = f & 127;
	const int lane = lt & 31;
	row = 16 * (lt >> 5) + (lane >> 2) + 8 * (q & 1);
	col = 64 * c + 8 * (q >> 1) + 2 * (lane & 3);
}

/* Kernel 3: dq = scale * dqacc, one thread per float2 of the accumulator
 * (coalesced reads, 4-byte writes). */
template <int D> __global__ void __launch_bounds__(256) bwd90_dq_kernel(bwd90_params p, long long n2)
{
	constexpr int T2 = kpt::ATTN_BWD_SM90_BM * D / 2; /* float2 per tile */
	const int nqb = p.seq_pad / kpt::ATTN_BWD_SM90_BM;
	for (long long x = (long long)blockIdx.x * blockDim.x + threadIdx.x; x < n2; x += (long long)gridDim.x * blockDim.x) {
		const long long tile = x / T2;
		int row, col;
		dq_tile_pos((int)(x % T2), row, col);
		const long long bh = tile / nqb;
		const int i = (int)(tile % nqb) * kpt::ATTN_BWD_SM90_BM + row;
		if (i >= p.seq)
			continue;
		const float2 a = reinterpret_cast<const float2 *>(p.dqacc)[x];
		const long long off = (bh / p.heads) * p.sb + (bh % p.heads) * p.sh + (long long)i * p.ss + col;
		*reinterpret_cast<__nv_bfloat162 *>(reinterpret_cast<__nv_bfloat16 *>(p.dq) + off) =
			__floats2bfloat162_rn(a.x * p.scale, a.y * p.scale);
	}
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
using namespace kpt; /* kpt_sm90.cuh */

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&v);
}

/* bytes from global memory at src (16-byte aligned) to dst, completing on
 * bar. */
__device__ __forceinline__ void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
	asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
		     "l"(src), "r"(bytes), "r"(bar)
		     : "memory");
}

/* dst[i] += src[i] for bytes / 4 floats, in L2 (a bulk async-group). */
__device__ __forceinline__ void bulk_reduce_add(float *dst, uint32_t src, uint32_t bytes)
{
	asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(src),
		     "r"(bytes)
		     : "memory");
	asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

__device__ __forceinline__ void bulk_wait_read()
{
	asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

__device__ __forceinline__ void bulk_wait_all()
{
	asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

__device__ __forceinline__ void named_bar(int id, int n)
{
	asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}

/* C (64 x 64) = A B^T over the head dimension, both K-major from shared
 * memory (S^T = K_c Q^T, dP^T = V_c dO^T). */
template <int HD>
__device__ __forceinline__ void issue_abt(float (&c)[32], uint64_t da, uint64_t db)
{
	using F = bwd_dims<HD>;
#pragma unroll
	for (int kk = 0; kk < HD / 16; kk++) {
		const uint64_t oa = (uint64_t)(((kk >> 2) * F::KV_CHUNK + (kk & 3) * 32) >> 4);
		const uint64_t ob = (uint64_t)(((kk >> 2) * F::Q_CHUNK + (kk & 3) * 32) >> 4);
		kpt::wgmma_ss<false>(c, da + oa, db + ob, kk > 0);
	}
}

/* C (64 keys x HD) (+)= A (64 keys x 64 queries, packed bf16 registers) B
 * (64 queries x HD, MN-major): dV += P^T dO, dK += dS^T Q; acc 0
 * overwrites C (the first real step: no branch clears it). */
template <int R>
__device__ __forceinline__ void issue_rs(float (&c)[R], const uint32_t (&a)[16], uint64_t db, int acc)
{
#pragma unroll
	for (int kk = 0; kk < 4; kk++) {
		const uint32_t f[4] = { a[4 * kk], a[4 * kk + 1], a[4 * kk + 2], a[4 * kk + 3] };
		if (kk == 0)
			kpt::wgmma_rs_tb_sd_bf16(c, f, db, acc);
		else
			kpt::wgmma_rs_tb<false>(c, f, db + (uint64_t)((kk * 2048) >> 4));
	}
}

/* The m64n64k16 accumulator as wgmma A fragments: 16-column step kk covers
 * accumulator groups 2kk, 2kk+1 (the forward's pack_p). */
__device__ __forceinline__ void pack_a(uint32_t (&p)[16], const float (&s)[32])
{
#pragma unroll
	for (int u = 0; u < 16; u++)
		p[u] = pack_bf16(s[2 * u], s[2 * u + 1]);
}

template <int HDIM, bool CAUSAL>
__device__ __forceinline__ void bwd_body(const CUtensorMap &tmq, const CUtensorMap &tmk, const CUtensorMap &tmv,
					 const CUtensorMap &tmg, const bwd90_params &p)
{
	using F = bwd_dims<HDIM>;
	constexpr int HD = F::HD, BN = F::BN, BM = F::BM, ST = F::ST;
	extern __shared__ unsigned char smem_raw[];
	const uint32_t raw = sm90_smem_u32(smem_raw);
	const uint32_t base = (raw + 1023) & ~1023u;
	unsigned char *const gsm = smem_raw + (base - raw); /* the same bytes, generic address */
	const uint32_t sK = base + F::SM_K, sV = base + F::SM_V, sQ = base + F::SM_Q, sG = base + F::SM_G;
	const uint32_t sDS = base + F::SM_DS, sSTG = base + F::SM_STG;
	const uint32_t barKV = base + F::SM_BARS;
	auto full = [&](int s) { return barKV + 8 * (1 + s); };
	auto empty = [&](int s) { return barKV + 8 * (1 + ST + s); };

	const int tid = threadIdx.x;
	const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
	const int h = blockIdx.y, b = blockIdx.z;
	const long long bh = (long long)b * p.heads + h;
	const int k0 = blockIdx.x * BN;
	const int nqb = p.seq_pad / BM;
	const int qb0 = CAUSAL ? k0 / BM : 0;
	const int nsteps = nqb - qb0;
	/* Planted steps come first: real query blocks qb0 + i % nsteps, their
	 * dQ into the plant accumulator, their dK / dV overwritten by the first
	 * real step (header comment). */
	const int extra = sm90_plant_extra(nsteps, p.plant_pct), ntot = nsteps + extra;
	auto step_qb = [&](int i) { return qb0 + (i < extra ? i % nsteps : i - extra); };

	if (tid == 0) {
		sm90_mbar_init(barKV, 1);
		for (int s = 0; s < ST; s++) {
			sm90_mbar_init(full(s), 1);
			sm90_mbar_init(empty(s), 4 * F::NC); /* one arrive per consumer warp */
		}
		sm90_mbar_init_fence();
	}
	__syncthreads();

	if (wg == 0) {
		sm90_setmaxnreg_dec<F::REG_PROD>();
		if (tid == 0) {
			sm90_mbar_expect_tx(barKV, 2 * F::KV_BYTES);
#pragma unroll
			for (int ch = 0; ch < HD / 64; ch++) {
				sm90_tma_load_4d(sK + ch * F::KV_CHUNK, &tmk, barKV, 64 * ch, k0, h, b);
				sm90_tma_load_4d(sV + ch * F::KV_CHUNK, &tmv, barKV, 64 * ch, k0, h, b);
			}
			const float *gl = p.lse2 + bh * p.seq_pad, *gd = p.delta + bh * p.seq_pad;
			for (int j = 0; j < ntot; j++) {
				const int s = j % ST, q0 = step_qb(j) * BM;
				if (j >= ST)
					sm90_mbar_wait(empty(s), ((j / ST) - 1) & 1, &kpt_attn_bwd_sm90_hung);
				sm90_mbar_expect_tx(full(s), 2 * F::Q_BYTES + 2 * BM * 4);
#pragma unroll
				for (int ch = 0; ch < HD / 64; ch++) {
					sm90_tma_load_4d(sQ + s * F::Q_BYTES + ch * F::Q_CHUNK, &tmq, full(s), 64 * ch, q0, h, b);
					sm90_tma_load_4d(sG + s * F::Q_BYTES + ch * F::Q_CHUNK, &tmg, full(s), 64 * ch, q0, h, b);
				}
				bulk_load(base + F::SM_L + s * BM * 4, gl + q0, BM * 4, full(s));
				bulk_load(base + F::SM_D + s * BM * 4, gd + q0, BM * 4, full(s));
			}
		}
	} else {
		sm90_setmaxnreg_inc<F::REG_CONS>();
		const int c = wg - 1, ltid = tid - 128 * wg, warp = ltid >> 5, lane = tid & 31;
		const int g = lane >> 2, t = lane & 3;
		const int krow = 64 * c + 16 * warp + g; /* this thread's key rows: krow, krow + 8 (in the block) */
		const bool tail = k0 + BN > p.seq;       /* keys past seq in this block (the last one) */
		const float sl2 = p.scale_log2;
		/* K_c, V_c: rows 64c.. of each chunk (K-major A). */
		const uint64_t dKc = sm90_make_desc(sK + c * 64 * 128, 16, 1024);
		const uint64_t dVc = sm90_make_desc(sV + c * 64 * 128, 16, 1024);
		const uint64_t dQ0 = sm90_make_desc(sQ, 16, 1024), dG0 = sm90_make_desc(sG, 16, 1024);
		/* Q, dO as MN-major B (N = HD): LBO = chunk stride. */
		const uint64_t dQt0 = sm90_make_desc(sQ, F::Q_CHUNK, 1024), dGt0 = sm90_make_desc(sG, F::Q_CHUNK, 1024);
		/* dQ operands: dS^T (d64: this warpgroup's 64 key rows) and K (d128:
		 * column chunk c; d64: key rows 64c..). */
		const uint32_t dsA = F::DQ_KSPLIT ? c * 64 * 128 : 0;
		const uint64_t dDS0 = sm90_make_desc(sDS + dsA, 16, 1024);
		const uint64_t dKt = sm90_make_desc(sK + (F::DQ_KSPLIT ? c * 64 * 128 : c * F::KV_CHUNK), 16, 1024);
		constexpr uint64_t q_step = F::Q_BYTES >> 4, ds_step = F::DS_BYTES >> 4;
		const float *const sLg = reinterpret_cast<const float *>(gsm + F::SM_L);
		const float *const sDg = reinterpret_cast<const float *>(gsm + F::SM_D);
		float2 *const stg = reinterpret_cast<float2 *>(gsm + F::SM_STG + c * F::STG_WG);
		const long long gacc_off = (bh * nqb) * (long long)F::DQ_TILE + (F::DQ_KSPLIT ? 0 : c * 4096);

		float dk[HD / 2], dv[HD / 2];
#pragma unroll
		for (int i = 0; i < HD / 2; i++)
			dk[i] = dv[i] = 0.f;

		sm90_mbar_wait(barKV, 0, &kpt_attn_bwd_sm90_hung);
		for (int j = 0; j < ntot; j++) {
			const int s = j % ST, qb = step_qb(j), q0 = qb * BM;
			sm90_mbar_wait(full(s), (j / ST) & 1, &kpt_attn_bwd_sm90_hung);
			float st[32], dp[32];
			sm90_wg_fence();
			issue_abt<HD>(st, dKc, dQ0 + s * q_step);
			sm90_wg_commit();
			issue_abt<HD>(dp, dVc, dG0 + s * q_step);
			sm90_wg_commit();
			sm90_wg_wait<1>();
			sm90_reg_fence(st);
			/* this thread's 16 query columns 8 j8 + 2t, +1: lse and Delta */
			float2 lse_q[8], del_q[8];
#pragma unroll
			for (int j8 = 0; j8 < 8; j8++) {
				lse_q[j8] = *reinterpret_cast<const float2 *>(sLg + s * BM + 8 * j8 + 2 * t);
				del_q[j8] = *reinterpret_cast<const float2 *>(sDg + s * BM + 8 * j8 + 2 * t);
			}
			/* P^T: element r is key krow + 8 ((r >> 1) & 1), query
			 * q0 + 8 (r >> 2) + 2t + (r & 1). Causal: only the two
			 * query blocks crossing this key block's diagonal mask. */
			const bool diag = CAUSAL && q0 < k0 + BN;
#pragma unroll
			for (int r = 0; r < 32; r++) {
				const int col = 8 * (r >> 2) + 2 * t + (r & 1);
				const float lse = (r & 1) ? lse_q[r >> 2].y : lse_q[r >> 2].x;
				float pv = sm90_ex2(fmaf(st[r], sl2, -lse));
				if (diag && k0 + krow + 8 * ((r >> 1) & 1) > q0 + col)
					pv = 0.f;
				st[r] = pv;
			}
			if (!CAUSAL && tail) {
#pragma unroll
				for (int r = 0; r < 32; r++)
					if (k0 + krow + 8 * ((r >> 1) & 1) >= p.seq)
						st[r] = 0.f;
			}
			uint32_t pp[16], ps[16];
			pack_a(pp, st);
			sm90_wg_wait<0>();
			sm90_reg_fence(dp);
#pragma unroll
			for (int r = 0; r < 32; r++)
				dp[r] = st[r] * (dp[r] - ((r & 1) ? del_q[r >> 2].y : del_q[r >> 2].x));
			pack_a(ps, dp);
			/* dS^T to shared memory: row = key, 64 queries = one
			 * 128-byte swizzled row; ps[u] holds queries 8 j8 + 2t, +1
			 * of key row krow + 8 (u & 1), j8 = 2 (u >> 2) + ((u >> 1) & 1). */
			{
				unsigned char *ds = gsm + F::SM_DS + (j & 1) * F::DS_BYTES;
#pragma unroll
				for (int u = 0; u < 16; u++) {
					const int row = krow + 8 * (u & 1), j8 = 2 * (u >> 2) + ((u >> 1) & 1);
					*reinterpret_cast<uint32_t *>(ds + row * 128 + ((j8 ^ (row & 7)) << 4) + 4 * t) = ps[u];
				}
			}
			sm90_fence_proxy_async();
			sm90_wg_fence();
			issue_rs(dv, pp, dGt0 + s * q_step, j != extra);
			issue_rs(dk, ps, dQt0 + s * q_step, j != extra);
			sm90_wg_commit();
			/* every dS^T row of this step stored (d128: both warpgroups') */
			if (F::DQ_KSPLIT)
				named_bar(2 + c, 128);
			else
				named_bar(1, 256);
			float dq[32];
			sm90_wg_fence();
			{
				const uint64_t da = dDS0 + (j & 1) * ds_step;
#pragma unroll
				for (int kk = 0; kk < F::DQ_KSTEPS; kk++)
					kpt::wgmma_ss_tt_bf16(dq, da + (uint64_t)((kk * 2048) >> 4),
							      dKt + (uint64_t)((kk * 2048) >> 4), kk > 0);
			}
			sm90_wg_commit();
			sm90_wg_wait<1>();
			sm90_reg_fence(dv);
			sm90_reg_fence(dk);
			sm90_reg_fence(pp);
			sm90_reg_fence(ps);
			if (lane == 0)
				sm90_mbar_arrive(empty(s));
			sm90_wg_wait<0>();
			sm90_reg_fence(dq);
			/* The staging buffer is free once the previous reduction
			 * has read it. */
			if (ltid == 0)
				bulk_wait_read();
			named_bar(2 + c, 128);
#pragma unroll
			for (int q = 0; q < 16; q++)
				stg[q * 128 + ltid] = make_float2(dq[2 * q], dq[2 * q + 1]);
			sm90_fence_proxy_async();
			named_bar(2 + c, 128);
			if (ltid == 0)
				bulk_reduce_add((j < extra ? p.dqplant : p.dqacc) + gacc_off + (long long)qb * F::DQ_TILE,
						sSTG + c * F::STG_WG, F::STG_WG);
		}
		if (ltid == 0)
			bulk_wait_all();
		const float hung = *(volatile int *)&kpt_attn_bwd_sm90_hung ? __int_as_float(0x7fffffff) : 0.f;
		__nv_bfloat16 *gdk = reinterpret_cast<__nv_bfloat16 *>(p.dk) + b * p.sb + h * p.sh;
		__nv_bfloat16 *gdv = reinterpret_cast<__nv_bfloat16 *>(p.dv) + b * p.sb + h * p.sh;
#pragma unroll
		for (int hh = 0; hh < 2; hh++) {
			const int key = k0 + krow + 8 * hh;
			if (key < p.seq) {
				uint32_t *rk = reinterpret_cast<uint32_t *>(gdk + (long long)key * p.ss + 2 * t);
				uint32_t *rv = reinterpret_cast<uint32_t *>(gdv + (long long)key * p.ss + 2 * t);
#pragma unroll
				for (int j8 = 0; j8 < HD / 8; j8++) {
					rk[4 * j8] = pack_bf16(dk[4 * j8 + 2 * hh] * p.scale + hung,
							       dk[4 * j8 + 2 * hh + 1] * p.scale + hung);
					rv[4 * j8] = pack_bf16(dv[4 * j8 + 2 * hh] + hung, dv[4 * j8 + 2 * hh + 1] + hung);
				}
			}
		}
	}
}
#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

template <int HDIM, bool CAUSAL>
__global__ void __launch_bounds__(bwd_dims<HDIM>::NTHREADS, 1)
	attn_bwd_sm90_kernel(const __grid_constant__ CUtensorMap tmq, const __grid_constant__ CUtensorMap tmk,
			     const __grid_constant__ CUtensorMap tmv, const __grid_constant__ CUtensorMap tmg,
			     bwd90_params p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	bwd_body<HDIM, CAUSAL>(tmq, tmk, tmv, tmg, p);
#else
	(void)tmq, (void)tmk, (void)tmv, (void)tmg, (void)p;
#endif
}

/* ------------------------------------------------------------------ host */

std::atomic<int> dev_state[kpt::SM90_MAX_DEVICES];

bool device_usable(void)
{
	return kpt::sm90_device_usable(dev_state, (const void *)attn_bwd_sm90_kernel<128, false>);
}

/* The 4-D map of one of a's bf16 tensors, box 64 columns x rows (BM for Q
 * and dO, BN for K and V): kpt::sm90_attn_map16. */
bool make_map(CUtensorMap *m, const void *ptr, const struct kpt_attn_bwd_args *a, int rows)
{
	return kpt::sm90_attn_map16(m, ptr, false, a->head_dim, a->seq, a->heads, a->batch, a->stride_s, a->stride_h,
				    a->stride_b, rows);
}

unsigned grid_blocks(long long work, int per_block)
{
	const long long n = (work + per_block - 1) / per_block;
	return (unsigned)(n < 1048560 ? (n > 0 ? n : 1) : 1048560);
}

template <int HDIM, bool CAUSAL>
cudaError_t launch(const CUtensorMap (&mp)[4], const bwd90_params &p, int batch, int heads, cudaStream_t s)
{
	using F = bwd_dims<HDIM>;
	const long long rows = (long long)batch * heads * p.seq_pad;
	bwd90_pre_kernel<HDIM><<<grid_blocks(rows, 8), 256, 0, s>>>(p, rows);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		return e;
	if ((e = cudaMemsetAsync(p.dqacc, 0, (size_t)rows * HDIM * sizeof(float), s)) != cudaSuccess)
		return e;
	auto kern = attn_bwd_sm90_kernel<HDIM, CAUSAL>;
	if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, F::SM_BYTES)) != cudaSuccess)
		return e;
	dim3 grid((unsigned)p.nkb, heads, batch);
	kern<<<grid, F::NTHREADS, F::SM_BYTES, s>>>(mp[0], mp[1], mp[2], mp[3], p);
	if ((e = cudaGetLastError()) != cudaSuccess)
		return e;
	const long long n2 = rows * HDIM / 2;
	bwd90_dq_kernel<HDIM><<<grid_blocks(n2, 256), 256, 0, s>>>(p, n2);
	return cudaGetLastError();
}

typedef cudaError_t (*launch_fn)(const CUtensorMap (&mp)[4], const bwd90_params &p, int batch, int heads,
				 cudaStream_t s);
/* [d64/d128][causal] */
const launch_fn launch_table[2][2] = {
	{ launch<64, false>, launch<64, true> },
	{ launch<128, false>, launch<128, true> },
};

} /* namespace */

bool kpt::attn_bwd_sm90_supports(const struct kpt_attn_bwd_args *a)
{
	return (a->head_dim == 64 || a->head_dim == 128) && a->dtype == KPT_ATTN_BF16 && device_usable();
}

int kpt::attn_bwd_sm90(const struct kpt_attn_bwd_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (!attn_bwd_sm90_supports(a))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention backward: the wgmma kernel needs bf16, head dim 64 or 128 on a compute "
				    "capability 9.0 GPU with sm_90a code built");
	CUtensorMap mp[4];
	if (!make_map(&mp[0], a->q, a, bwd_dims<64>::BM) || !make_map(&mp[1], a->k, a, bwd_dims<64>::BN) ||
	    !make_map(&mp[2], a->v, a, bwd_dims<64>::BN) || !make_map(&mp[3], a->dout, a, bwd_dims<64>::BM))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention backward: the driver refuses these strides for a TMA tensor map");
	if (!sm90_plant_fits((a->seq + ATTN_BWD_SM90_BM - 1) / ATTN_BWD_SM90_BM, a->plant_pct))
		return kpt_diag_set(d, KPT_E_INVAL, "attention backward: a %d%% plant of seq %d is too large", a->plant_pct,
				    a->seq);
	bwd90_params p;
	p.dq = a->dq, p.dk = a->dk, p.dv = a->dv;
	p.o = a->o, p.dout = a->dout, p.lse = a->lse;
	p.sb = a->stride_b, p.sh = a->stride_h, p.ss = a->stride_s;
	p.heads = a->heads, p.seq = a->seq;
	p.seq_pad = (a->seq + ATTN_BWD_SM90_BM - 1) / ATTN_BWD_SM90_BM * ATTN_BWD_SM90_BM;
	p.nkb = (a->seq + bwd_dims<64>::BN - 1) / bwd_dims<64>::BN;
	p.scale = a->scale;
	p.scale_log2 = a->scale * LOG2E_F;
	size_t vec, acc;
	attn_bwd_sm90_ws_parts(a->batch, a->heads, a->seq, a->head_dim, &vec, &acc);
	char *ws = static_cast<char *>(a->ws);
	p.lse2 = reinterpret_cast<float *>(ws);
	p.delta = reinterpret_cast<float *>(ws + vec);
	p.dqacc = reinterpret_cast<float *>(ws + 2 * vec);
	p.dqplant = reinterpret_cast<float *>(ws + 2 * vec + acc);
	p.plant_pct = a->plant_pct;
	nvtxRangePushA("kpt_attn_bwd");
	cudaError_t e = launch_table[a->head_dim == 128][a->causal ? 1 : 0](mp, p, a->batch, a->heads, s);
	nvtxRangePop();
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "attention backward: wgmma launch failed: %s", cudaGetErrorString(e));
	return 0;
}
