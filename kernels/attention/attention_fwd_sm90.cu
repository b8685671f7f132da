/* attention_fwd_sm90.cu - Hopper forward attention with wgmma and TMA (the
 * WGMMA variant of kpt_attn_fwd; attention_fwd_sm90.h).
 *
 * Contract of kpt_attn_fwd (kpt_attention.h) for head dim 64 or 128, bf16 or
 * fp16, causal or not. Needs sm_90a (wgmma, setmaxnreg): the build compiles
 * this file for that target alone; compiled for any other target the kernels
 * are empty stubs (__CUDA_ARCH_FEAT_SM90_ALL guard) that the host never
 * launches. One body (fwd_body) serves both head dims through fwd_cfg; each
 * has its own __global__ entry so the d128 kernel keeps the name the
 * committed baselines recorded (attn_fwd_sm90_kernel<FP16, CAUSAL>).
 *
 * One block owns BM = 64 * NC query rows of one (batch, head): NC consumer
 * warpgroups and a producer warpgroup, 1 block per SM. The producer's one
 * thread issues TMA loads (4-D tensor maps (d, s, h, b) with element
 * strides, so [B, S, H, D] and [B, H, S, D] both work; 128B-swizzled boxes
 * of 64 columns (128 B, one swizzle row) x BM or BN rows; rows past seq
 * zero-filled) of Q once and of K and V tiles of BN keys into ST stages,
 * each completing on an mbarrier. Each consumer warpgroup owns 64 query rows
 * (setmaxnreg raises it, lowers the producer): S = Q K^T with wgmma
 * m64nBNk16 (both operands from shared memory, K-major), online softmax in
 * registers (exp2 of log2e-prescaled scores), P packed to 16-bit A
 * fragments in registers, O += P V with wgmma m64nHDk16 (A from registers,
 * V from shared memory MN-major). In iteration j a warpgroup issues S(j) and
 * P(j-1) V(j-1) back to back, waits for S(j) only and does the softmax of
 * tile j while P V runs. K and V stages are released separately (after
 * S(j), after P(j) V(j)) so the producer refills K early. Keys past seq
 * (and, causal, past the query row) are masked to -inf; causal blocks stop
 * at the last tile holding a key of their last row and run heaviest first.
 *
 * Tiles:
 *   d128: BM 128 (2 consumer warpgroups, 240 registers, producer 24),
 *         BN 128, 2 stages (3 measured slower); 160 KB of shared memory.
 *         H100, B=1 H=16 S=16384 bf16 non-causal: ~680 TFLOP/s (the
 *         mma.sync kernel: 330). Design notes and measurements: issue 6.
 *   d64:  BM 192 (3 consumer warpgroups, 160 registers, producer 32: 128 x
 *         (32 + 3 x 160) = 65536, the register file), BN 128, 2 stages;
 *         88 KB of shared memory. FlashAttention-3's choice for d64 on H100
 *         (tile_size_fwd_sm90: 192 x 128, P V with P from registers, the
 *         same intra-warpgroup overlap). Why: at d64 a score costs 256
 *         tensor FLOPs against 512 at d128 but the same exp2 and softmax
 *         work, so the MUFU and FMA pipes are about as busy as the tensor
 *         cores (H100: ~16 exp2 and ~4096 tensor FLOPs per SM clock); a
 *         third consumer warpgroup gives the scheduler another warpgroup's
 *         wgmma to overlap with each softmax, and every K / V tile feeds 192
 *         query rows instead of 128 (a third less shared-memory and L2
 *         traffic per FLOP). The accumulators shrink to fit 160 registers:
 *         O 32 + S 64 + P 32 (d128: 64 + 64 + 32 in 240). BN 128 keeps the
 *         S tile at 64 registers (192 would not fit 160) and the causal cut
 *         simple. H100, B=1 H=16 S=16384 bf16 (kpt-workloads, median of 40,
 *         2026-11-26): ~505-520 TFLOP/s non-causal, ~475-490 causal; the
 *         same kernel with BM 128 (2 consumer warpgroups at 240 registers)
 *         437 / 458, with 3 stages no faster (issue 24).
 *
 * wgmma operands, 16-bit elements, 128B swizzle (the TMA writes each box
 * row of 64 columns as one 128-byte swizzled row; 8 rows = one 1024-byte
 * swizzle atom):
 *   - K-major A (Q) and B (K): LBO unused by the 128B-swizzled K-major
 *     layout (16 by convention), SBO = 1024 (next 8 rows). k-step kk of 16
 *     columns starts kk % 4 * 32 bytes into the row, in 64-column chunk
 *     kk / 4 (d128: two chunks of 128 rows x 128 B; d64: one chunk, 4
 *     k-steps). A warpgroup's Q starts 64 rows x 128 B into the chunk.
 *   - MN-major B (V, imm-trans-b): LBO = stride between 64-column chunks
 *     (BN x 128 B; d64's N of 64 is one chunk, so unused), SBO = 1024 (next
 *     8 keys); k-step kk of 16 keys is 2048 bytes on.
 *   - mbarrier transaction bytes: Q BM x HD x 2 (d64: 24576), a K or V
 *     tile BN x HD x 2 (d64: 16384); zero-filled rows count (whole boxes).
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h> /* CUtensorMap, PFN_cuTensorMapEncodeTiled (headers only: no libcuda link) */
#include <math.h>
#include <stdint.h>

#include <atomic>

#include "attention_fwd_sm90.h"
#include "kpt_sm90.cuh"
#include "kpt_wgmma.cuh"

namespace {

/* Tile configuration per head dim (see the header comment). */
template <int HDIM> struct fwd_cfg;
template <> struct fwd_cfg<128> {
	static constexpr int NC = 2;         /* consumer warpgroups */
	static constexpr int BN = 128;       /* keys per tile */
	static constexpr int ST = 2;         /* K / V stages (3 measured slower) */
	static constexpr int REG_PROD = 24;  /* setmaxnreg */
	static constexpr int REG_CONS = 240;
};
template <> struct fwd_cfg<64> {
	static constexpr int NC = 3;
	static constexpr int BN = 128;
	static constexpr int ST = 2;
	static constexpr int REG_PROD = 32;
	static constexpr int REG_CONS = 160;
};

/* Derived sizes. Shared memory: Q, K[ST], V[ST] (1024-byte aligned for the
 * 128B swizzle), then the mbarriers barQ, fullK[ST], fullV[ST], emptyK[ST],
 * emptyV[ST]. */
template <int HDIM> struct fwd_dims : fwd_cfg<HDIM> {
	using C = fwd_cfg<HDIM>;
	static constexpr int HD = HDIM;
	static constexpr int BM = 64 * C::NC;          /* query rows per block */
	static constexpr int NTHREADS = 128 * (C::NC + 1);
	static constexpr int Q_CHUNK = BM * 128;       /* one 64-column chunk of Q */
	static constexpr int KV_CHUNK = C::BN * 128;   /* one 64-column chunk of a K / V tile */
	static constexpr int Q_BYTES = Q_CHUNK * (HD / 64);
	static constexpr int KV_BYTES = KV_CHUNK * (HD / 64);
	static constexpr int SM_K = Q_BYTES;
	static constexpr int SM_V = SM_K + C::ST * KV_BYTES;
	static constexpr int SM_BARS = SM_V + C::ST * KV_BYTES;
	static constexpr int SM_BYTES = SM_BARS + (1 + 4 * C::ST) * 8 + 1024; /* + alignment slack */
	static_assert(HD == 64 || HD == 128, "one or two 64-column (128-byte) swizzle chunks per row");
	/* issue_qk steps Q and K by the same chunk offset. */
	static_assert(HD == 64 || Q_CHUNK == KV_CHUNK, "two chunks need BM == BN");
	static_assert(Q_BYTES % 1024 == 0 && KV_BYTES % 1024 == 0, "128B-swizzled tiles are 1024-byte aligned");
	static_assert(BM <= 256 && C::BN <= 256, "a TMA box has at most 256 rows");
	static_assert(128 * (C::REG_PROD + C::NC * C::REG_CONS) <= 65536, "setmaxnreg over the register file");
	static_assert(SM_BYTES <= 227 * 1024, "shared memory of one block");
};

struct sm90_params {
	void *o;
	long long sb, sh, ss;
	int seq;
	float scale_log2;
	int plant_pct; /* --plant: extra key tiles, fully masked (kpt_attn_fwd_args) */
};

} /* namespace */

/* Set when an mbarrier wait gave up (a pipeline bug): every block then
 * writes NaN, which the checks catch, instead of hanging the GPU. Sticky for
 * the process. (Every compile pass must see it: external linkage keeps the
 * stub targets from warning that it is unused.) */
__device__ int kpt_attn_fwd_sm90_hung;

namespace {

/* The device code exists only for sm_90a (the stub kernel of other targets
 * references none of it). */
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
using namespace kpt; /* kpt_sm90.cuh */

template <bool FP16> __device__ __forceinline__ uint32_t pack2(float lo, float hi)
{
	if constexpr (FP16) {
		__half2 v = __floats2half2_rn(lo, hi);
		return *reinterpret_cast<uint32_t *>(&v);
	} else {
		__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
		return *reinterpret_cast<uint32_t *>(&v);
	}
}

/* S(64 x BN) = Q K^T for this warpgroup's rows: HD / 16 k-steps over the
 * head dimension; step kk reads chunk kk / 4 at byte kk % 4 * 32 of the
 * swizzled row (the hardware applies the swizzle to the full address). With
 * two chunks (d128) Q and K chunks have the same size (fwd_dims). */
template <int HD, bool FP16, int R> __device__ __forceinline__ void issue_qk(float (&s)[R], uint64_t dq, uint64_t dk)
{
#pragma unroll
	for (int kk = 0; kk < HD / 16; kk++) {
		uint64_t off = (uint64_t)(((kk >> 2) * fwd_dims<HD>::KV_CHUNK + (kk & 3) * 32) >> 4);
		kpt::wgmma_ss<FP16>(s, dq + off, dk + off, kk > 0);
	}
}

/* O(64 x HD) += P(64 x BN keys) V: BN / 16 k-steps over keys, 16 V rows
 * (2048 bytes, two swizzle atoms) each. */
template <bool FP16, int RO, int RP>
__device__ __forceinline__ void issue_pv(float (&o)[RO], const uint32_t (&p)[RP], uint64_t dv)
{
#pragma unroll
	for (int kk = 0; kk < RP / 4; kk++) {
		const uint32_t a[4] = { p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3] };
		kpt::wgmma_rs_tb<FP16>(o, a, dv + (uint64_t)((kk * 2048) >> 4));
	}
}

/* Online softmax of the score tile of keys kv0.. : s becomes P (fp32,
 * unnormalised), m / l the running max (log2 units) and this thread's partial
 * row sums; alpha the two rescale factors for O. This thread's rows: row0
 * (regs 4j, 4j+1) and row0 + 8 (4j+2, 4j+3); columns 8j + 2t + {0, 1}. Keys
 * at or past seq and, causal, past the row are masked: only the last tile of
 * a block has any, or (d64 causal, 192 rows over 128-key tiles) the last two
 * (every row keeps key 0, so the max is finite after the first tile, whose
 * m = -inf gives alpha = 0; a later tile masked whole for a row, as a
 * planted one, leaves m, gives alpha = 1 and P = 0). */
template <bool CAUSAL, int R>
__device__ __forceinline__ void softmax_tile(float (&s)[R], float (&m)[2], float (&l)[2], float (&alpha)[2],
					     float sl2, int kv0, int seq, int row0, int m0, int t)
{
	constexpr int BN = 2 * R; /* keys of the tile */
	if (kv0 + BN > seq || (CAUSAL && kv0 + BN - 1 > m0)) {
#pragma unroll
		for (int j = 0; j < R / 4; j++)
#pragma unroll
			for (int e = 0; e < 4; e++) {
				const int key = kv0 + 8 * j + 2 * t + (e & 1);
				if (key >= seq || (CAUSAL && key > row0 + 8 * (e >> 1)))
					s[4 * j + e] = -INFINITY;
			}
	}
	float mx[2] = { -INFINITY, -INFINITY };
#pragma unroll
	for (int j = 0; j < R / 4; j++) {
		mx[0] = fmaxf(mx[0], fmaxf(s[4 * j], s[4 * j + 1]));
		mx[1] = fmaxf(mx[1], fmaxf(s[4 * j + 2], s[4 * j + 3]));
	}
	float nm[2];
#pragma unroll
	for (int r = 0; r < 2; r++) {
		mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
		mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
		nm[r] = fmaxf(m[r], mx[r] * sl2);
		alpha[r] = sm90_ex2(m[r] - nm[r]);
		m[r] = nm[r];
	}
	float sum[2] = { 0.f, 0.f };
#pragma unroll
	for (int j = 0; j < R / 4; j++) {
#pragma unroll
		for (int e = 0; e < 4; e++) {
			float pv = sm90_ex2(fmaf(s[4 * j + e], sl2, -nm[e >> 1]));
			s[4 * j + e] = pv;
			sum[e >> 1] += pv;
		}
	}
	l[0] = l[0] * alpha[0] + sum[0];
	l[1] = l[1] * alpha[1] + sum[1];
}

/* P as wgmma A fragments: key step kk covers accumulator groups 2kk, 2kk+1. */
template <bool FP16, int R> __device__ __forceinline__ void pack_p(uint32_t (&p)[R / 2], const float (&s)[R])
{
#pragma unroll
	for (int kk = 0; kk < R / 8; kk++) {
		p[4 * kk + 0] = pack2<FP16>(s[8 * kk + 0], s[8 * kk + 1]);
		p[4 * kk + 1] = pack2<FP16>(s[8 * kk + 2], s[8 * kk + 3]);
		p[4 * kk + 2] = pack2<FP16>(s[8 * kk + 4], s[8 * kk + 5]);
		p[4 * kk + 3] = pack2<FP16>(s[8 * kk + 6], s[8 * kk + 7]);
	}
}

/* The whole kernel for head dim HDIM (fwd_cfg); the __global__ entries
 * below differ only in name and launch bounds. The tensor maps are the
 * entries' __grid_constant__ parameters (their addresses go to the TMA). */
template <int HDIM, bool FP16, bool CAUSAL>
__device__ __forceinline__ void fwd_body(const CUtensorMap &tmq, const CUtensorMap &tmk, const CUtensorMap &tmv,
					 const sm90_params &p)
{
	using F = fwd_dims<HDIM>;
	constexpr int HD = F::HD, BM = F::BM, BN = F::BN, ST = F::ST, NC = F::NC;
	extern __shared__ unsigned char smem_raw[];
	const uint32_t base = (sm90_smem_u32(smem_raw) + 1023) & ~1023u;
	const uint32_t sQ = base, sK = base + F::SM_K, sV = base + F::SM_V;
	const uint32_t barQ = base + F::SM_BARS;
	auto fullK = [&](int s) { return barQ + 8 * (1 + s); };
	auto fullV = [&](int s) { return barQ + 8 * (1 + ST + s); };
	auto emptyK = [&](int s) { return barQ + 8 * (1 + 2 * ST + s); };
	auto emptyV = [&](int s) { return barQ + 8 * (1 + 3 * ST + s); };

	const int tid = threadIdx.x;
	/* Warp-uniform role index (a shuffle makes it provably uniform). */
	const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
	/* Causal: the heaviest query blocks first, for a better tail. */
	const int mb = CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
	const int m0 = mb * BM, h = blockIdx.y, b = blockIdx.z;
	const int seq = p.seq;
	int n_tiles = (seq + BN - 1) / BN;
	if (CAUSAL)
		n_tiles = min(n_tiles, (m0 + BM + BN - 1) / BN);
	/* Planted work: tiles n_tiles..n_tot-1 reload key tile j - n_tiles (mod
	 * n_tiles) and are masked whole (softmax_tile with seq 0): P = 0, the
	 * max and alpha = 1 stay, so O and l are bit-identical. */
	const int n_tot = n_tiles + sm90_plant_extra(n_tiles, p.plant_pct);

	if (tid == 0) {
		sm90_mbar_init(barQ, 1);
		for (int s = 0; s < ST; s++) {
			sm90_mbar_init(fullK(s), 1);
			sm90_mbar_init(fullV(s), 1);
			sm90_mbar_init(emptyK(s), 4 * NC); /* one arrive per consumer warp */
			sm90_mbar_init(emptyV(s), 4 * NC);
		}
		sm90_mbar_init_fence();
	}
	__syncthreads();

	if (wg == 0) {
		sm90_setmaxnreg_dec<F::REG_PROD>();
		if (tid == 0) {
			/* One box per 64-column chunk; the barrier counts whole
			 * boxes (Q_BYTES, KV_BYTES), zero-filled rows included. */
			sm90_mbar_expect_tx(barQ, F::Q_BYTES);
#pragma unroll
			for (int ch = 0; ch < HD / 64; ch++)
				sm90_tma_load_4d(sQ + ch * F::Q_CHUNK, &tmq, barQ, 64 * ch, m0, h, b);
			for (int j = 0; j < n_tot; j++) {
				const int s = j % ST;
				const uint32_t ph = ((j / ST) - 1) & 1;
				const int kt = j < n_tiles ? j : (j - n_tiles) % n_tiles;
				if (j >= ST)
					sm90_mbar_wait(emptyK(s), ph, &kpt_attn_fwd_sm90_hung);
				sm90_mbar_expect_tx(fullK(s), F::KV_BYTES);
#pragma unroll
				for (int ch = 0; ch < HD / 64; ch++)
					sm90_tma_load_4d(sK + s * F::KV_BYTES + ch * F::KV_CHUNK, &tmk, fullK(s), 64 * ch, kt * BN, h, b);
				if (j >= ST)
					sm90_mbar_wait(emptyV(s), ph, &kpt_attn_fwd_sm90_hung);
				sm90_mbar_expect_tx(fullV(s), F::KV_BYTES);
#pragma unroll
				for (int ch = 0; ch < HD / 64; ch++)
					sm90_tma_load_4d(sV + s * F::KV_BYTES + ch * F::KV_CHUNK, &tmv, fullV(s), 64 * ch, kt * BN, h, b);
			}
		}
	} else {
		sm90_setmaxnreg_inc<F::REG_CONS>();
		const int c = wg - 1, ltid = tid - 128 * wg, warp = ltid / 32, lane = tid & 31;
		const int g = lane >> 2, t = lane & 3;
		const int row0 = m0 + c * 64 + warp * 16 + g;
		const bool warp_leader = lane == 0;
		const float sl2 = p.scale_log2;
		/* Q: this warpgroup's 64 rows start 64 * 128 B into each chunk
		 * (K-major, 128B swizzle: LBO unused, SBO = 8 rows of 128 B). */
		const uint64_t dq = sm90_make_desc(sQ + c * 64 * 128, 16, 1024);
		const uint64_t dk0 = sm90_make_desc(sK, 16, 1024);
		/* V (MN-major): LBO = stride between 64-column chunks (d64: one
		 * chunk, LBO unused), SBO = 8 rows. */
		const uint64_t dv0 = sm90_make_desc(sV, F::KV_CHUNK, 1024);
		constexpr uint64_t tile_step = F::KV_BYTES >> 4;

		/* Accumulators of m64nNk16: N / 2 floats a thread. */
		float o[HD / 2], s[BN / 2], m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.f, 0.f }, alpha[2];
		uint32_t pf[BN / 4];
#pragma unroll
		for (int i = 0; i < HD / 2; i++)
			o[i] = 0.f;

		sm90_mbar_wait(barQ, 0, &kpt_attn_fwd_sm90_hung);
		sm90_mbar_wait(fullK(0), 0, &kpt_attn_fwd_sm90_hung);
		sm90_wg_fence();
		issue_qk<HD, FP16>(s, dq, dk0);
		sm90_wg_commit();
		sm90_wg_wait<0>();
		sm90_reg_fence(s);
		if (warp_leader)
			sm90_mbar_arrive(emptyK(0));
		softmax_tile<CAUSAL>(s, m, l, alpha, sl2, 0, seq, row0, m0, t);
		pack_p<FP16>(pf, s);

		for (int j = 1; j < n_tot; j++) {
			const int sj = j % ST, sp = (j - 1) % ST;
			sm90_mbar_wait(fullK(sj), (j / ST) & 1, &kpt_attn_fwd_sm90_hung);
			sm90_wg_fence();
			issue_qk<HD, FP16>(s, dq, dk0 + sj * tile_step);
			sm90_wg_commit();
			sm90_mbar_wait(fullV(sp), ((j - 1) / ST) & 1, &kpt_attn_fwd_sm90_hung);
			/* The fence ptxas would insert here anyway (note C7519). */
			sm90_wg_fence();
			issue_pv<FP16>(o, pf, dv0 + sp * tile_step);
			sm90_wg_commit();
			sm90_wg_wait<1>();
			sm90_reg_fence(s);
			if (warp_leader)
				sm90_mbar_arrive(emptyK(sj));
			softmax_tile<CAUSAL>(s, m, l, alpha, sl2, j * BN, j < n_tiles ? seq : 0, row0, m0, t);
			sm90_wg_wait<0>();
			sm90_reg_fence(o);
			sm90_reg_fence(pf);
			if (warp_leader)
				sm90_mbar_arrive(emptyV(sp));
#pragma unroll
			for (int i = 0; i < HD / 2; i++)
				o[i] *= alpha[(i >> 1) & 1];
			pack_p<FP16>(pf, s);
		}
		{
			const int sp = (n_tot - 1) % ST;
			sm90_mbar_wait(fullV(sp), ((n_tot - 1) / ST) & 1, &kpt_attn_fwd_sm90_hung);
			sm90_wg_fence();
			issue_pv<FP16>(o, pf, dv0 + sp * tile_step);
			sm90_wg_commit();
			sm90_wg_wait<0>();
			sm90_reg_fence(o);
			sm90_reg_fence(pf);
			if (warp_leader)
				sm90_mbar_arrive(emptyV(sp));
		}

		/* NaN for every output once any wait gave up. */
		const float hung = *(volatile int *)&kpt_attn_fwd_sm90_hung ? __int_as_float(0x7fffffff) : 0.f;
		float inv[2];
#pragma unroll
		for (int r = 0; r < 2; r++) {
			float lr = l[r];
			lr += __shfl_xor_sync(0xffffffffu, lr, 1);
			lr += __shfl_xor_sync(0xffffffffu, lr, 2);
			inv[r] = 1.f / lr + hung;
		}
		uint16_t *go = reinterpret_cast<uint16_t *>(p.o) + b * p.sb + h * p.sh;
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const int row = row0 + 8 * r;
			if (row < seq) {
				uint32_t *dst = reinterpret_cast<uint32_t *>(go + (long long)row * p.ss + 2 * t);
#pragma unroll
				for (int j = 0; j < HD / 8; j++)
					dst[4 * j] = pack2<FP16>(o[4 * j + 2 * r] * inv[r], o[4 * j + 2 * r + 1] * inv[r]);
			}
		}
	}
}

#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

/* One __global__ entry per head dim, HDIM's launch bounds; the d128 entry
 * keeps the name the committed baselines recorded
 * (attn_fwd_sm90_kernel<FP16, CAUSAL>), so the head dim is in the name, not
 * a template argument. */
#define KPT_SM90_ENTRY(NAME, HDIM)                                                                        \
	template <bool FP16, bool CAUSAL>                                                                  \
	__global__ void __launch_bounds__(fwd_dims<HDIM>::NTHREADS, 1)                                     \
		NAME(const __grid_constant__ CUtensorMap tmq, const __grid_constant__ CUtensorMap tmk,      \
		     const __grid_constant__ CUtensorMap tmv, sm90_params p)                                \
	{                                                                                                  \
		KPT_SM90_BODY(HDIM);                                                                       \
	}
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define KPT_SM90_BODY(HDIM) fwd_body<HDIM, FP16, CAUSAL>(tmq, tmk, tmv, p)
#else
#define KPT_SM90_BODY(HDIM) ((void)tmq, (void)tmk, (void)tmv, (void)p)
#endif
KPT_SM90_ENTRY(attn_fwd_sm90_kernel, 128)
KPT_SM90_ENTRY(attn_fwd_sm90_d64_kernel, 64)
#undef KPT_SM90_BODY
#undef KPT_SM90_ENTRY

/* ------------------------------------------------------------------ host */

/* kpt::sm90_device_usable's memo. */
std::atomic<int> dev_state[kpt::SM90_MAX_DEVICES];

bool device_usable(void)
{
	return kpt::sm90_device_usable(dev_state, (const void *)attn_fwd_sm90_kernel<false, false>);
}

/* The 4-D map of one of a's tensors, box 64 columns x rows (BM for Q, BN
 * for K and V): kpt::sm90_attn_map16. */
bool make_map(CUtensorMap *m, const void *ptr, const struct kpt_attn_fwd_args *a, int rows)
{
	return kpt::sm90_attn_map16(m, ptr, a->dtype == KPT_ATTN_FP16, a->head_dim, a->seq, a->heads, a->batch,
				    a->stride_s, a->stride_h, a->stride_b, rows);
}

template <int HDIM, bool FP16, bool CAUSAL>
cudaError_t launch(const CUtensorMap &mq, const CUtensorMap &mk, const CUtensorMap &mv, const sm90_params &p,
		   int batch, int heads, cudaStream_t s)
{
	using F = fwd_dims<HDIM>;
	auto kern = HDIM == 128 ? attn_fwd_sm90_kernel<FP16, CAUSAL> : attn_fwd_sm90_d64_kernel<FP16, CAUSAL>;
	cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, F::SM_BYTES);
	if (e != cudaSuccess)
		return e;
	dim3 grid((p.seq + F::BM - 1) / F::BM, heads, batch);
	kern<<<grid, F::NTHREADS, F::SM_BYTES, s>>>(mq, mk, mv, p);
	return cudaGetLastError();
}

template <int HDIM>
cudaError_t launch_hd(bool fp16, bool causal, const CUtensorMap &mq, const CUtensorMap &mk, const CUtensorMap &mv,
		      const sm90_params &p, int batch, int heads, cudaStream_t s)
{
	if (fp16)
		return causal ? launch<HDIM, true, true>(mq, mk, mv, p, batch, heads, s)
			      : launch<HDIM, true, false>(mq, mk, mv, p, batch, heads, s);
	return causal ? launch<HDIM, false, true>(mq, mk, mv, p, batch, heads, s)
		      : launch<HDIM, false, false>(mq, mk, mv, p, batch, heads, s);
}

} /* namespace */

bool kpt::attn_fwd_sm90_supports(const struct kpt_attn_fwd_args *a)
{
	return (a->head_dim == 64 || a->head_dim == 128) && (a->dtype == KPT_ATTN_BF16 || a->dtype == KPT_ATTN_FP16) && device_usable();
}

int kpt::attn_fwd_sm90(const struct kpt_attn_fwd_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (!attn_fwd_sm90_supports(a))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: the wgmma kernel needs head dim 64 or 128 on a compute capability "
				    "9.0 GPU with sm_90a code built");
	const bool d128 = a->head_dim == 128;
	const int bm = d128 ? fwd_dims<128>::BM : fwd_dims<64>::BM, bn = d128 ? fwd_dims<128>::BN : fwd_dims<64>::BN;
	if (!sm90_plant_fits((a->seq + bn - 1) / bn, a->plant_pct))
		return kpt_diag_set(d, KPT_E_INVAL, "attention forward: a %d%% plant of seq %d is too large", a->plant_pct,
				    a->seq);
	CUtensorMap mq, mk, mv;
	if (!make_map(&mq, a->q, a, bm) || !make_map(&mk, a->k, a, bn) || !make_map(&mv, a->v, a, bn))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: the driver refuses these strides for a TMA tensor map");
	sm90_params p;
	kpt::attn_fwd_base_params(p, a);
	p.plant_pct = a->plant_pct;
	const bool fp16 = a->dtype == KPT_ATTN_FP16, causal = a->causal != 0;
	cudaError_t e = d128 ? launch_hd<128>(fp16, causal, mq, mk, mv, p, a->batch, a->heads, s)
			     : launch_hd<64>(fp16, causal, mq, mk, mv, p, a->batch, a->heads, s);
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "attention forward: wgmma launch failed: %s", cudaGetErrorString(e));
	return 0;
}
