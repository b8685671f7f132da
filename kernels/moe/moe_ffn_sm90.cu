/* moe_ffn_sm90.cu - the MoE expert FFN as two grouped GEMMs on Hopper's
 * wgmma (KPT_MOE_FFN_GROUPED_SM90; moe_ffn_sm90.h).
 *
 *   GEMM 1: hb[r] = gelu(x[src_row[r]] W1_e^T)  (exact erf GELU, bf16 out)
 *   GEMM 2: yb[r] = hb[r] W2_e^T                (bf16 out)
 * for the rows r of every expert e (offsets[e] <= r < offsets[e + 1]), one
 * launch per GEMM for all experts. The row ranges and the 128-row tile
 * numbering (tiles[]) come from moe_scan on the device: no host sync, and
 * the launch is graph-capturable (the grid is sized for the worst routing;
 * blocks loop over the tiles that exist).
 *
 * Needs sm_90a (wgmma, setmaxnreg): the build compiles this file for that
 * target alone; for any other target the kernels are empty stubs
 * (__CUDA_ARCH_FEAT_SM90_ALL guard) that the host never launches
 * (moe_sm90_usable).
 *
 * Kernel: persistent (grid = min(SMs, tiles of the worst routing)), 384
 * threads = a producer warpgroup and two consumer warpgroups, one block per
 * SM. A tile is BM = 128 rows of one expert x BN output columns; tile t of
 * the grid-stride loop is row tile t / (N / BN), column tile t % (N / BN),
 * so the blocks running at once share row tiles (the gathered A rows) and an
 * expert's weights in L2. K advances in BK = 64 columns (128 bytes: one
 * 128B-swizzle row) through ST stages, each guarded by a full and an empty
 * mbarrier; the producer runs ahead across tiles, so it loads the next
 * tile while the consumers run the epilogue. Each consumer warpgroup owns 64
 * rows: wgmma m64nBNk16, A and B from shared memory (both K-major), one
 * wgmma group in flight (a stage is released once the next one's wgmma is
 * issued and the older one retired); the epilogue writes bf16 straight from
 * the accumulators, rows past the expert's end skipped.
 *
 * Operand A of GEMM 1 (the gather). TMA cannot gather rows on Hopper. We
 * load the rows with cp.async by the whole producer warpgroup (16-byte
 * chunks placed where the 128B swizzle puts them: chunk c of row r at
 * r * 128 + ((c ^ (r & 7)) << 4), what the TMA would write) rather than
 * having moe_permute write the gathered copy xp and TMA it: xp costs one
 * extra write and read of rows x hidden x 2 bytes (2 x 1 GiB at E128 top-8
 * h2048, ~0.6 ms of HBM time against ~3.7 ms for the whole layer at the
 * 450 TFLOP/s goal), while the gather reads the same bytes from x (in L2:
 * each token row serves top_k experts and N / BN column tiles). The
 * producer thread waits for its own cp.async group (wait_group, LAG stages
 * behind the newest), fences the generic proxy against the async proxy
 * (wgmma reads shared memory through the async proxy) and arrives on the
 * stage's full barrier: 128 arrivals + 1 for the B tile's TMA transaction.
 * Rows past the expert's end are zero-filled (src-size 0). B (W1_e, W2_e)
 * and A of GEMM 2 (hb, contiguous per expert) come by TMA (2-D maps,
 * 128B-swizzled boxes of 64 columns; rows past the last row read as zeros
 * and count in the transaction bytes).
 *
 * Tiles (chosen without measurements; see moe_sm90_pick_bn):
 *   BN 256, 4 stages (48 KiB a stage, 192 KiB): a consumer holds 64 x 256
 *         fp32 accumulators (128 registers); the most FLOPs per byte of
 *         shared memory read (wgmma at N 256 reads A once per 256 columns)
 *         and per L2 byte loaded (85 FLOP/B). Used when N is a multiple of
 *         256 and gives >= 2 tiles per SM for an even routing: E128 h2048
 *         f768 (GEMM 1: 3 column tiles x ~2100 row tiles), the seed
 *         shape's GEMM 1 (ffn 2048: 8 x ~68).
 *   BN 128, 6 stages (32 KiB a stage, 192 KiB): otherwise (hidden or ffn
 *         an odd multiple of 128, or too few tiles: the seed shape's GEMM
 *         2, hidden 512, 2 x 68 = 136 tiles of 256 on 132 SMs is 1.03
 *         waves, 4 x 68 = 272 of 128 is 2.06).
 *   BM 128 (two consumer warpgroups of 64 rows) matches the 128-row tiles
 *         moe_scan numbers; an expert's last tile holds on average 64
 *         wasted rows, <= 3% at E128 (2048 rows an expert) and 6% at the
 *         seed shape (1024).
 *   Registers: producer 40 (setmaxnreg.dec), consumers 232 (.inc): 128 x
 *         (40 + 2 x 232) = 64512 of 65536.
 *
 * --plant PCT (ffn_params.plant_pct, kpt_moe_set_plant): the grid-stride
 * loop runs PCT% more tiles (plant_tiles), each a whole real tile done again
 * - loads, wgmma, epilogue and stores, which write the bits the tile's first
 * pass wrote (the same inputs through the same code), so the output is
 * bit-identical and an extra tile costs what a real one does. Extra K slices
 * per tile were tried first: they scale the main loop alone, not the
 * epilogue and pipeline drain of each tile, and measured about half the
 * PCT asked (H100: +3.9% for 10% on the seed-shape layer, +4.8% at E128).
 * Whole extra tiles round to whole tile rounds per block: proportional
 * where each block loops over many tiles (E128: ~48 and ~127 a block),
 * coarse where it has few (the seed shape: 4-5). Since 2026-11-26 the
 * default suite's MoE entries run this kernel and the committed baselines
 * hold its timings: a change here means recording them again
 * (baselines/README.md).
 *
 * Measured limits (ncu, E128 top-8 h2048 f768 on an H100; bench/RESULTS.md,
 * session 12): GEMM 2 is bound by L2 bandwidth (84.5% of it, tensor pipe
 * 52.5%): each block loads its own A and B tiles, 48 KiB a K step. GEMM 1
 * is latency-bound (L1TEX waits of the gather's row reads; spills). CUTLASS's
 * grouped GEMM (torch._grouped_mm) runs the same tile in clusters of 2 with
 * the B tile multicast by TMA, 1.3-1.7x faster per GEMM (its A is not
 * gathered): done in moe_ffn_sm90_mc.cu (2026-11-29), AUTO's pick for
 * large layers; this kernel stays what the `default` suite records.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

#include <atomic>

#include "moe_ffn_sm90.h"
#include "../attention/kpt_mma.cuh"
#include "../attention/kpt_sm90.cuh"
#include "../attention/kpt_wgmma.cuh"
#include "moe_ffn_sm90_host.cuh"

typedef __nv_bfloat16 bf16;

namespace {

template <int BN> struct ffn_cfg;
template <> struct ffn_cfg<256> {
	static constexpr int ST = 4;  /* stages */
	static constexpr int LAG = 2; /* gather: stages a producer thread keeps in flight before it arrives */
};
template <> struct ffn_cfg<128> {
	static constexpr int ST = 6;
	static constexpr int LAG = 3;
};

/* Derived sizes. Shared memory: A[ST] (BM x 128 B), B[ST] (BN x 128 B),
 * 1024-byte aligned, then the mbarriers full[ST], empty[ST]. */
template <int BN> struct ffn_dims : ffn_cfg<BN> {
	using C = ffn_cfg<BN>;
	static constexpr int BM = 128, BK = 64, NTHREADS = 384;
	static constexpr int REG_PROD = 40, REG_CONS = 232;
	static constexpr int A_BYTES = BM * BK * 2;
	static constexpr int B_BYTES = BN * BK * 2;
	static constexpr int SM_B = C::ST * A_BYTES;
	static constexpr int SM_BARS = SM_B + C::ST * B_BYTES;
	static constexpr int SM_BYTES = SM_BARS + 2 * C::ST * 8 + 1024; /* + alignment slack */
	/* The producer waits for stage it - ST to be released before it
	 * arrives for it - LAG; the consumers release it - ST only after the
	 * wgmma of it - ST + 1 is issued, which needs that arrival: LAG <= ST - 2
	 * (ST - 1 deadlocks; a randomised model of the protocol agrees). */
	static_assert(C::LAG >= 1 && C::LAG <= C::ST - 2, "gather arrivals must not wait on their own release");
	static_assert(SM_BYTES <= 227 * 1024, "shared memory of one block");
	static_assert(128 * (REG_PROD + 2 * REG_CONS) <= 65536, "setmaxnreg over the register file");
	static_assert(BN <= 256, "a TMA box has at most 256 rows");
};

struct ffn_params {
	const bf16 *x;       /* GEMM 1: gathered A; NULL for GEMM 2 (A by TMA) */
	const int *src_row;  /* GEMM 1: the token of each row */
	bf16 *c;             /* output [rows][n] */
	const int *offsets, *tiles;
	int n, k, experts;
	int plant_pct;       /* --plant: PCT% more tiles, each a real tile done again (plant_tiles); 0 = none */
};

} /* namespace */

/* Set when an mbarrier wait gave up (a pipeline bug): every block then
 * writes NaN, which the checks catch, instead of hanging the GPU. Sticky for
 * the process. External linkage: every compile pass sees it used. */
__device__ int kpt_moe_ffn_sm90_hung;

namespace {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
using namespace kpt;

struct tile_pos {
	int e, m0, m1, n0;
};

/* Tile t of the grid-stride loop: its expert, rows [m0, min(m0 + BM, m1))
 * and first column. */
template <int BN> __device__ __forceinline__ tile_pos locate(int t, int n_col, const ffn_params &p)
{
	const int rt = t / n_col;
	int lo = 0, hi = p.experts - 1; /* the last e with tiles[e] <= rt: skips experts with no rows */
	while (lo < hi) {
		const int mid = (lo + hi + 1) >> 1;
		if (p.tiles[mid] <= rt)
			lo = mid;
		else
			hi = mid - 1;
	}
	tile_pos q;
	q.e = lo;
	q.m0 = p.offsets[lo] + (rt - p.tiles[lo]) * ffn_dims<BN>::BM;
	q.m1 = p.offsets[lo + 1];
	q.n0 = (t - rt * n_col) * BN;
	return q;
}

/* --plant: the launch's extra tiles, PCT% of its total rounded to nearest
 * (plant_pct 0: none). Tile t >= total of the grid-stride loop redoes real
 * tile (t - total) % total. */
__device__ __forceinline__ int plant_tiles(int total, int pct)
{
	return pct > 0 ? (int)(((long long)total * pct + 50) / 100) : 0;
}

__device__ __forceinline__ float gelu_erf(float v)
{
	return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
}

/* The whole kernel; GATHER: GEMM 1 (A gathered by cp.async, GELU epilogue),
 * else GEMM 2 (A by TMA through tma). */
template <int BN, bool GATHER>
__device__ __forceinline__ void ffn_body(const CUtensorMap &tma, const CUtensorMap &tmb, const ffn_params &p)
{
	using F = ffn_dims<BN>;
	constexpr int BM = F::BM, BK = F::BK, ST = F::ST, LAG = F::LAG;
	extern __shared__ unsigned char smem_raw[];
	const uint32_t base = (sm90_smem_u32(smem_raw) + 1023) & ~1023u;
	const uint32_t sA = base, sB = base + F::SM_B, bars = base + F::SM_BARS;
	auto full = [&](int s) { return bars + 8 * s; };
	auto empty = [&](int s) { return bars + 8 * (ST + s); };

	const int tid = threadIdx.x;
	const int wg = __shfl_sync(0xffffffffu, tid / 128, 0); /* warp-uniform role */
	const int n_col = p.n / BN, KT = p.k / BK;
	const int total = p.tiles[p.experts] * n_col, all = total + plant_tiles(total, p.plant_pct);

	if (tid == 0) {
		for (int s = 0; s < ST; s++) {
			/* GATHER: 128 producer threads + the B transaction's arrive */
			sm90_mbar_init(full(s), GATHER ? 129 : 1);
			sm90_mbar_init(empty(s), 8); /* one arrive per consumer warp */
		}
		sm90_mbar_init_fence();
	}
	__syncthreads();

	if (wg == 0) {
		sm90_setmaxnreg_dec<F::REG_PROD>();
		if (!GATHER && tid != 0)
			return;
		/* GATHER: thread tid copies 16-byte chunk tid % 8 of rows
		 * tid / 8 + 16 j (4 whole 128-byte rows per warp instruction). */
		const int ch = tid & 7, r0 = tid >> 3;
		int it = 0;
		for (int t = blockIdx.x; t < all; t += gridDim.x) {
			const tile_pos q = locate<BN>(t < total ? t : (t - total) % total, n_col, p);
			for (int kt = 0; kt < KT; kt++, it++) {
				const int s = it % ST;
				if (it >= ST)
					sm90_mbar_wait(empty(s), ((it / ST) + 1) & 1, &kpt_moe_ffn_sm90_hung);
				if (tid == 0) {
					sm90_mbar_expect_tx(full(s), GATHER ? F::B_BYTES : F::A_BYTES + F::B_BYTES);
					if (!GATHER)
						sm90_tma_load_2d(sA + s * F::A_BYTES, &tma, full(s), kt * BK, q.m0);
					sm90_tma_load_2d(sB + s * F::B_BYTES, &tmb, full(s), kt * BK, q.e * p.n + q.n0);
				}
				if (GATHER) {
					/* The token of each row is re-read (L1) every stage: kept
					 * in registers the 8 row addresses spill the producer's 40. */
#pragma unroll
					for (int j = 0; j < BM / 16; j++) {
						const int r = r0 + 16 * j;
						const bool ok = q.m0 + r < q.m1;
						const int tok = ok ? p.src_row[q.m0 + r] : 0;
						const bf16 *src = p.x + (long long)tok * p.k + kt * BK + ch * 8;
						cp_async16(sA + s * F::A_BYTES + r * 128 + ((ch ^ (r & 7)) << 4), src, ok);
					}
					cp_async_commit();
					if (it >= LAG) {
						cp_async_wait<LAG>();
						sm90_fence_proxy_async();
						sm90_mbar_arrive(full((it - LAG) % ST));
					}
				}
			}
		}
		if (GATHER) {
			cp_async_wait<0>();
			sm90_fence_proxy_async();
			for (int i = it > LAG ? it - LAG : 0; i < it; i++)
				sm90_mbar_arrive(full(i % ST));
		}
		return;
	}

	sm90_setmaxnreg_inc<F::REG_CONS>();
	const int c = wg - 1, warp = (tid >> 5) & 3, lane = tid & 31;
	const bool warp_leader = lane == 0;
	/* This warpgroup's 64 rows start 64 x 128 B into the A stage. */
	const uint64_t da0 = sm90_make_desc(sA + c * 64 * 128, 16, 1024);
	const uint64_t db0 = sm90_make_desc(sB, 16, 1024);
	float acc[BN / 2];
	int it = 0;
	for (int t = blockIdx.x; t < all; t += gridDim.x) {
		const tile_pos q = locate<BN>(t < total ? t : (t - total) % total, n_col, p);
		for (int kt = 0; kt < KT; kt++, it++) {
			const int s = it % ST;
			sm90_mbar_wait(full(s), (it / ST) & 1, &kpt_moe_ffn_sm90_hung);
			sm90_wg_fence();
#pragma unroll
			for (int kk = 0; kk < BK / 16; kk++) /* 16 columns = 32 bytes into the swizzled row */
				wgmma_ss<false>(acc, da0 + (uint64_t)((s * F::A_BYTES + kk * 32) >> 4),
						db0 + (uint64_t)((s * F::B_BYTES + kk * 32) >> 4), (kt | kk) != 0);
			sm90_wg_commit();
			if (kt > 0) {
				sm90_wg_wait<1>();
				if (warp_leader)
					sm90_mbar_arrive(empty((it - 1) % ST));
			}
		}
		sm90_wg_wait<0>();
		sm90_reg_fence(acc);
		if (warp_leader)
			sm90_mbar_arrive(empty((it - 1) % ST));

		/* NaN for every output once any wait gave up. */
		const float hung = *(volatile int *)&kpt_moe_ffn_sm90_hung ? __int_as_float(0x7fffffff) : 0.f;
		const int rb = q.m0 + c * 64 + warp * 16 + (lane >> 2);
		if (GATHER) {
			/* GELU 16 accumulators at a time: the fence after each group
			 * keeps the scheduler from overlapping all BN / 2 erff (40
			 * bytes of spills at BN 256; 8 remain, ptxas -v). */
#pragma unroll
			for (int g = 0; g < BN / 32; g++) {
#pragma unroll
				for (int i = 16 * g; i < 16 * g + 16; i++)
					acc[i] = gelu_erf(acc[i]);
				sm90_reg_fence(acc);
			}
		}
#pragma unroll
		for (int h = 0; h < 2; h++) {
			const int row = rb + 8 * h;
			if (row >= q.m1)
				continue;
			uint32_t *dst = reinterpret_cast<uint32_t *>(p.c + (long long)row * p.n + q.n0 + 2 * (lane & 3));
#pragma unroll
			for (int j = 0; j < BN / 8; j++) {
				dst[4 * j] = mma_t<bf16>::pack(acc[4 * j + 2 * h] + hung, acc[4 * j + 2 * h + 1] + hung);
			}
		}
	}
}
#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

template <int BN, bool GATHER>
__global__ void __launch_bounds__(384, 1)
	moe_ffn_sm90_kernel(const __grid_constant__ CUtensorMap tma, const __grid_constant__ CUtensorMap tmb,
			    ffn_params p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	ffn_body<BN, GATHER>(tma, tmb, p);
#else
	(void)tma, (void)tmb, (void)p;
#endif
}

/* ------------------------------------------------------------------ host */

/* kpt::sm90_device_usable's memo. */
std::atomic<int> dev_state[kpt::SM90_MAX_DEVICES];

/* One GEMM: C[rows][n] (rows of expert e times W_e[n][k]^T). A by TMA
 * (a_map) or gathered (p.x). */
template <int BN, bool GATHER>
cudaError_t launch(const CUtensorMap &a_map, const CUtensorMap &b_map, const ffn_params &p, long long rows, int sms,
		   cudaStream_t s)
{
	using F = ffn_dims<BN>;
	auto kern = moe_ffn_sm90_kernel<BN, GATHER>;
	cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, F::SM_BYTES);
	if (e != cudaSuccess)
		return e;
	const long long most = ((rows + F::BM - 1) / F::BM + p.experts) * (p.n / BN); /* tiles of the worst routing */
	const unsigned grid = (unsigned)(most < sms ? most : sms);
	kern<<<grid, F::NTHREADS, F::SM_BYTES, s>>>(a_map, b_map, p);
	return cudaGetLastError();
}

} /* namespace */

bool kpt::moe_sm90_usable(void)
{
	return sm90_device_usable(dev_state, (const void *)moe_ffn_sm90_kernel<256, true>);
}

int kpt::moe_ffn_sm90(const struct moe_sm90_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (!moe_sm90_usable())
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "moe: the wgmma FFN needs a compute capability 9.0 GPU with sm_90a code built");
	auto go = [&](int bn, bool gather, const CUtensorMap &am, const CUtensorMap &bm, const ffn_params &p) {
		if (bn == 256)
			return gather ? launch<256, true>(am, bm, p, a->rows, a->sms, s)
				      : launch<256, false>(am, bm, p, a->rows, a->sms, s);
		return gather ? launch<128, true>(am, bm, p, a->rows, a->sms, s)
			      : launch<128, false>(am, bm, p, a->rows, a->sms, s);
	};
	return moe_sm90_ffn_run<ffn_params>(a, 1, "wgmma FFN", go, d);
}
