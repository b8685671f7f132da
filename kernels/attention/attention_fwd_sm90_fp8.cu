/* attention_fwd_sm90_fp8.cu - Hopper forward attention on e4m3 inputs
 * (the KPT_ATTN_E4M3 variant of kpt_attn_fwd; attention_fwd_sm90.h).
 *
 * Contract of kpt_attn_fwd (kpt_attention.h) for head dim 64 or 128, dtype
 * KPT_ATTN_E4M3, causal or not: Q and K e4m3 [.., S, D], V^T e4m3 in the
 * packed layout of kpt_attn_e4m3_pack_v, per-tensor float descales, O bf16.
 * Needs sm_90a; built for that target alone like attention_fwd_sm90.cu
 * (stub kernels elsewhere, never launched). A file of its own, with its own
 * __global__ entry (attn_fwd_sm90_e4m3_kernel<HDIM, CAUSAL, PP, ST>), so the bf16 / fp16
 * kernels' code and names, which committed baselines record, stay as they
 * were (their PTX is byte-identical with this file added).
 *
 * The pipeline is the bf16 kernel's (attention_fwd_sm90.cu: a producer
 * warpgroup issuing TMA loads into ST stages on mbarriers, NC consumer
 * warpgroups of 64 query rows, S(j) and P(j-1) V(j-1) issued back to back,
 * K and V stages released separately, causal blocks heaviest first, the
 * planted tiles). What differs:
 *   - S = Q K^T by wgmma m64n128k32 e4m3 (both operands from shared memory,
 *     K-major along d, as FP8 wgmma requires: it has no transposed form).
 *     A Q or K row is HD bytes: d128 one 128B-swizzle row (SBO 1024, 8
 *     rows), d64 one 64B-swizzle row (the TMA's SWIZZLE_64B, descriptor
 *     layout type 2, SBO 512); one TMA box per tile either way; k-step kk
 *     (32 bytes of d) starts kk * 32 bytes into the row; LBO unused.
 *   - The softmax exponent scale folds q_descale * k_descale * scale *
 *     log2(e); O is multiplied by v_descale / l at the end.
 *   - P is scaled by 256 (2^8 added inside the exp2, FlashAttention-3's
 *     Max_offset) so that its values span [0, 256] instead of [0, 1]: e4m3
 *     keeps its 3 mantissa bits down to 2^-6 / 256 instead of 2^-6, fewer
 *     small probabilities flush to zero; l carries the same factor, so O / l
 *     is unchanged. P is rounded to e4m3 (cvt.rn.satfinite) into the A
 *     fragments of O += P V, wgmma m64nHDk32 with A from registers and B =
 *     V^T from shared memory (K-major: keys contiguous).
 *   - V^T tiles: HD rows (d) x BN = 128 keys (128 bytes, one swizzle row),
 *     the same descriptor as K (SBO 1024); k-step kk of 32 keys is 32 bytes
 *     on.
 *
 * Why V^T is packed with a key permutation (kpt_attn_e4m3_vt_pos,
 * kpt_attn_path.h). In a 32-key chunk of the S accumulator (fp32, 4 groups
 * j of 8 columns) thread t = lane % 4 holds, for rows g and g + 8, columns
 * c = 8j + 2t + e (e = 0, 1). The e4m3 A fragment of a k32 step (PTX ISA,
 * the mma.m16n8k32 8-bit A layout that wgmma's 64N32 A layout stacks per
 * warp) wants in thread t register 0 row g, k = 4t .. 4t + 3; register 1
 * row g + 8, the same k; registers 2 and 3 likewise for k = 16 + 4t ..
 * 19 + 4t; byte f of a register is k + f. Thread t holds 8 of a row's 32
 * columns and needs 8 k positions: packing its groups j = 0, 1 into
 * registers 0 / 1 and j = 2, 3 into 2 / 3 (in register order j, e) puts
 * column c at k position p = 16 (j / 2) + 4t + 2 (j % 2) + e, a bijection
 * of the chunk. So P needs no shuffle (FlashAttention-3 does the same
 * register swap, permute_Cregs_fp8) if V^T holds key c at position p: the
 * pack does that once, outside the timed loop. tests/unit/
 * test_attn_path.c checks the map against both fragment layouts.
 *
 * Tiles: the bf16 kernel's, for the same reasons (its header comment).
 *   d128: BM 128 (2 consumer warpgroups, 240 registers; producer 24), BN
 *         128, 2 stages; 80 KB of shared memory (Q 16 KB, K and V^T 16 KB a
 *         stage).
 *   d64:  BM 192 (3 consumer warpgroups, 160 registers; producer 32), BN
 *         128, 2 stages; 44 KB (Q 12 KB, K and V^T 8 KB a stage).
 * mbarrier transaction bytes: Q BM x HD, K and V^T tiles 128 x HD, whole
 * boxes (zero-filled rows and keys included). Wider key tiles (shared
 * memory is plentiful at one byte an element) were not tried; 3 stages
 * only with the ping-pong schedule (below).
 *
 * Three kernels, one body (e4m3_body<HDIM, CAUSAL, PP, ST>; the kernel
 * carries the same template arguments, so profiles tell them apart), picked per call by
 * kpt_attn_fwd_args' e4m3_kernel (kpt_attn_e4m3_kernel_pick, kpt_attn_path.h:
 * the default per head dim is one table line there):
 *   - attn_fwd_sm90_e4m3_kernel<HDIM, CAUSAL, false, 2> (SERIAL): each consumer
 *     warpgroup issues S(j) and P(j-1) V(j-1) back to back and does the
 *     softmax of S(j) while P(j-1) V(j-1) runs (the intra-warpgroup overlap
 *     of FlashAttention-3 is already this); the warpgroups are not ordered
 *     among themselves, so their GEMMs and their softmaxes collide at will.
 *   - attn_fwd_sm90_e4m3_kernel<HDIM, CAUSAL, true, 2> (PINGPONG): the same, plus the
 *     inter-warpgroup schedule of FlashAttention-3 (its "warp scheduler
 *     barriers"): the consumer warpgroups take turns issuing their GEMMs,
 *     so while one warpgroup's S(j+1) and P(j) V(j) occupy the tensor
 *     cores, the other runs its softmax (exp2 on the MUFU, which the
 *     tensor cores do not need). A round of warpgroup c is the GEMMs it
 *     issues at once: round 0 S(0); round j (1 .. n_tot - 1) S(j) and P(j-1)
 *     V(j-1); round n_tot the last P V. Before a round c waits on the
 *     mbarriers of its tiles (K(j) and V(j-1): both, so the two GEMMs leave
 *     together), then bar.sync on named barrier PP_BAR + c (count 256: its
 *     own 128 threads and the 128 of the predecessor's arrive); after
 *     issuing (commit, no wait) it bar.arrives on PP_BAR + (c + 1) % NC.
 *     Order: round r goes 0, 1, .., NC - 1, then round r + 1; warpgroup
 *     NC - 1 arrives on PP_BAR once at the start (so that 0 goes first)
 *     and skips its arrive after its last round, so each barrier sees as
 *     many arrives as syncs and the kernel ends with none pending. n_tot is
 *     the block's (causal masking has no early exit; masked tiles run the
 *     same rounds), so every warpgroup passes the same n_tot + 1 turns in
 *     every branch. No arrive can run a lap ahead (warpgroup c - 1's next
 *     arrive needs its own next turn, which needs c's). A timed-out
 *     mbarrier wait (the hung flag) falls through to the turn as usual,
 *     so the named barriers stay balanced and the block ends with NaN.
 *     No deadlock with the producer: before its round j, warpgroup c has
 *     finished its round j - 1 turn, so every warpgroup has issued round
 *     j - 2 and releases K(j - 2) and V(j - 3) without another turn, which
 *     is all the producer needs to load K(j) and V(j - 1).
 *     d128: 2 warpgroups (ping-pong proper), d64: 3 (a ring of turns).
 *     Tiles, stages and registers: the serial kernel's (BN 128, 2 stages).
 *     The serial kernels' PTX is the previous kernel's, instruction for
 *     instruction (PP false and ST 2 compile the same code; checked with
 *     nvcc -ptx, CUDA 13.0).
 *   - attn_fwd_sm90_e4m3_kernel<HDIM, CAUSAL, true, 3> (PINGPONG3): the
 *     ping-pong kernel with 3 K / V^T stages (d128 112 KB of shared
 *     memory, d64 60 KB): with 2 stages the producer's K(j + 1) queues
 *     behind V(j), which waits until every warpgroup released V(j - 2)
 *     (after its round j - 1 P V), so with the warpgroups half a round
 *     apart the load has about one round of lead; a third stage gives it
 *     one more. The stage and parity
 *     arithmetic is ST-generic (j % ST, (j / ST) & 1), as before.
 *   Registers (ptxas, sm_90a, CUDA 13.0): d128 168, d64 128 at launch (the
 *   consumers' setmaxnreg 240 at d128, 160 at d64), 0 bytes of stack or
 *   spills, for every variant; the ping-pong ones list 16 named barriers
 *   (the ids are in a register), the serial one 1.
 *   Measured (H200, 2026-11-29, bench/RESULTS.md "Issue 39 on fresh
 *   H200s", 3 rounds at 16k tokens): all three pass the e4m3 checks; the
 *   ping-pong is slower than the serial kernel (d128 792 against 847
 *   TFLOP/s, 3 stages 836; d64 causal with 3 stages 569 against 554, the
 *   one row it wins), so SERIAL stays the default: the serial kernel
 *   already issues S(j) and P(j-1) V(j-1) back to back, and a turn adds a
 *   wait for the other warpgroup. FlashAttention-3's wider fp8 key tiles
 *   (224 keys at d128, 160 at d64) are not tried: V^T rows of more than
 *   128 keys leave the one-swizzle-row layout (two TMA boxes, a new
 *   descriptor stride) and S of 224 keys needs 112 accumulator registers
 *   next to O's 64.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h> /* CUtensorMap, PFN_cuTensorMapEncodeTiled (headers only: no libcuda link) */
#include <math.h>
#include <stdint.h>

#include <atomic>

#include "attention_fwd_sm90.h"
#include "kpt_attn_path.h"
#include "kpt_sm90.cuh"
#include "kpt_wgmma.cuh"

namespace {

/* Tiles per head dim: the bf16 kernel's (attention_fwd_sm90.cu fwd_cfg). */
template <int HDIM> struct e4m3_tiles;
template <> struct e4m3_tiles<128> {
	static constexpr int NC = 2;        /* consumer warpgroups */
	static constexpr int REG_PROD = 24; /* setmaxnreg */
	static constexpr int REG_CONS = 240;
};
template <> struct e4m3_tiles<64> {
	static constexpr int NC = 3;
	static constexpr int REG_PROD = 32;
	static constexpr int REG_CONS = 160;
};

/* Sizes. Shared memory: Q, K[ST], V^T[ST] (1024-byte aligned), then the
 * mbarriers barQ, fullK[ST], fullV[ST], emptyK[ST], emptyV[ST]. Q and K
 * rows are HD bytes: one 128-byte (d128) or 64-byte (d64) swizzle row. */
template <int HDIM, int STAGES = 2> struct e4m3_cfg : e4m3_tiles<HDIM> {
	using T = e4m3_tiles<HDIM>;
	static constexpr int HD = HDIM;
	static constexpr int NC = T::NC;
	static constexpr int BM = 64 * NC;  /* query rows per block */
	static constexpr int BN = 128;      /* keys per tile */
	static constexpr int ST = STAGES;   /* K / V^T stages */
	static constexpr int NTHREADS = 128 * (NC + 1);
	static constexpr int Q_BYTES = BM * HD;  /* BM rows of HD bytes */
	static constexpr int K_BYTES = BN * HD;  /* BN rows of HD bytes */
	static constexpr int VT_BYTES = HD * BN; /* HD rows of BN keys */
	static constexpr int SM_K = Q_BYTES;
	static constexpr int SM_V = SM_K + ST * K_BYTES;
	static constexpr int SM_BARS = SM_V + ST * VT_BYTES;
	static constexpr int SM_BYTES = SM_BARS + (1 + 4 * ST) * 8 + 1024; /* + alignment slack */
	static_assert(HD == 128 || HD == 64, "Q and K rows are one 128- or 64-byte swizzle row");
	static_assert(BN == 128, "V^T rows are one 128-byte swizzle row");
	static_assert(BN % 32 == 0, "V^T is permuted in chunks of 32 keys, one k32 step");
	static_assert(Q_BYTES % 1024 == 0 && K_BYTES % 1024 == 0 && VT_BYTES % 1024 == 0,
		      "swizzled tiles stay 1024-byte aligned");
	static_assert(BM <= 256 && BN <= 256 && HD <= 256, "a TMA box has at most 256 rows");
	static_assert(128 * (T::REG_PROD + NC * T::REG_CONS) <= 65536, "setmaxnreg over the register file");
	static_assert(SM_BYTES <= 227 * 1024, "shared memory of one block");
};

struct e4m3_params {
	void *o;
	long long sb, sh, ss;
	int seq;
	float scale_log2; /* scale * log2(e) * q_descale * k_descale */
	float v_descale;
	int plant_pct; /* --plant: extra key tiles, fully masked (kpt_attn_fwd_args) */
};

} /* namespace */

/* Set when an mbarrier wait gave up: every block then writes NaN (see
 * attention_fwd_sm90.cu's kpt_attn_fwd_sm90_hung). Sticky for the process. */
__device__ int kpt_attn_fwd_sm90_e4m3_hung;

namespace {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
using namespace kpt; /* kpt_sm90.cuh */

/* Four floats to e4m3 (round to nearest even, saturating), byte f = xf. */
__device__ __forceinline__ uint32_t pack4_e4m3(float x0, float x1, float x2, float x3)
{
	uint32_t r;
	/* cvt ... e4m3x2 d, a, b puts a in the upper byte, b in the lower. */
	asm("{\n.reg .b16 lo, hi;\n"
	    "cvt.rn.satfinite.e4m3x2.f32 lo, %2, %1;\n"
	    "cvt.rn.satfinite.e4m3x2.f32 hi, %4, %3;\n"
	    "mov.b32 %0, {lo, hi};\n}\n"
	    : "=r"(r)
	    : "f"(x0), "f"(x1), "f"(x2), "f"(x3));
	return r;
}

__device__ __forceinline__ uint32_t pack2_bf16(float lo, float hi)
{
	__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
	return *reinterpret_cast<uint32_t *>(&v);
}

/* Named barriers (bar.sync / bar.arrive id, count) of the ping-pong
 * variant (header comment): ids PP_BAR .. PP_BAR + NC - 1, one per
 * consumer warpgroup; 0 is __syncthreads'. */
constexpr int PP_BAR = 1;
__device__ __forceinline__ void named_bar_sync(int id, int count)
{
	asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int count)
{
	asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

/* K-major shared-memory descriptor for rows of row_bytes (128: 128B
 * swizzle, layout type 1; 64: 64B swizzle, type 2): LBO unused (16), SBO
 * = 8 rows. For 128 the same value as kpt::sm90_make_desc(saddr, 16, 1024). */
template <int ROW_BYTES> __device__ __forceinline__ uint64_t desc_kmajor(uint32_t saddr)
{
	static_assert(ROW_BYTES == 128 || ROW_BYTES == 64, "128B or 64B swizzle");
	return (uint64_t)((saddr & 0x3FFFF) >> 4) | (1ull << 16) | ((uint64_t)(8 * ROW_BYTES >> 4) << 32) |
	       ((ROW_BYTES == 128 ? 1ull : 2ull) << 62);
}

/* S(64 x BN) = Q K^T: HD / 32 k-steps of 32 bytes along the swizzled row
 * (the hardware applies the swizzle to the full address). */
template <int HD, int R> __device__ __forceinline__ void issue_qk(float (&s)[R], uint64_t dq, uint64_t dk)
{
#pragma unroll
	for (int kk = 0; kk < HD / 32; kk++)
		kpt::wgmma_ss_e4m3(s, dq + (uint64_t)(kk * 32 >> 4), dk + (uint64_t)(kk * 32 >> 4), kk > 0);
}

/* O(64 x HD) += P(64 x BN keys) V: BN / 32 k-steps, each 32 bytes (keys)
 * along the V^T rows. */
template <int RO, int RP>
__device__ __forceinline__ void issue_pv(float (&o)[RO], const uint32_t (&p)[RP], uint64_t dvt)
{
#pragma unroll
	for (int kk = 0; kk < RP / 4; kk++) {
		const uint32_t a[4] = { p[4 * kk], p[4 * kk + 1], p[4 * kk + 2], p[4 * kk + 3] };
		kpt::wgmma_rs_e4m3(o, a, dvt + (uint64_t)(kk * 32 >> 4));
	}
}

/* Online softmax of the score tile of keys kv0.. (attention_fwd_sm90.cu's
 * softmax_tile, the same masking and running max), except that P comes out
 * scaled by 2^8 (the + 8 inside exp2; see the header comment); l carries
 * the same factor. */
template <bool CAUSAL, int R>
__device__ __forceinline__ void softmax_tile(float (&s)[R], float (&m)[2], float (&l)[2], float (&alpha)[2],
					     float sl2, int kv0, int seq, int row0, int m0, int t)
{
	constexpr int BN = 2 * R;
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
	float nm[2], off[2];
#pragma unroll
	for (int r = 0; r < 2; r++) {
		mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
		mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
		nm[r] = fmaxf(m[r], mx[r] * sl2);
		alpha[r] = sm90_ex2(m[r] - nm[r]);
		m[r] = nm[r];
		off[r] = 8.f - nm[r];
	}
	float sum[2] = { 0.f, 0.f };
#pragma unroll
	for (int j = 0; j < R / 4; j++) {
#pragma unroll
		for (int e = 0; e < 4; e++) {
			float pv = sm90_ex2(fmaf(s[4 * j + e], sl2, off[e >> 1]));
			s[4 * j + e] = pv;
			sum[e >> 1] += pv;
		}
	}
	l[0] = l[0] * alpha[0] + sum[0];
	l[1] = l[1] * alpha[1] + sum[1];
}

/* P as e4m3 A fragments, one k32 step per 32-key chunk c (accumulator
 * groups j = 4c .. 4c + 3; s[4j + e] row g, s[4j + 2 + e] row g + 8):
 * register 0 row g = groups 4c, 4c + 1; register 1 the same for row g + 8;
 * registers 2, 3 groups 4c + 2, 4c + 3. Column 8j + 2t + e lands at k
 * position kpt_attn_e4m3_vt_pos (header comment). */
template <int R> __device__ __forceinline__ void pack_p(uint32_t (&p)[R / 4], const float (&s)[R])
{
#pragma unroll
	for (int c = 0; c < R / 16; c++) {
		const float *x = s + 16 * c;
		p[4 * c + 0] = pack4_e4m3(x[0], x[1], x[4], x[5]);
		p[4 * c + 1] = pack4_e4m3(x[2], x[3], x[6], x[7]);
		p[4 * c + 2] = pack4_e4m3(x[8], x[9], x[12], x[13]);
		p[4 * c + 3] = pack4_e4m3(x[10], x[11], x[14], x[15]);
	}
}

template <int HDIM, bool CAUSAL, bool PP, int STAGES>
__device__ __forceinline__ void e4m3_body(const CUtensorMap &tmq, const CUtensorMap &tmk, const CUtensorMap &tmvt,
					  const e4m3_params &p)
{
	using F = e4m3_cfg<HDIM, STAGES>;
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
	const int wg = __shfl_sync(0xffffffffu, tid / 128, 0);
	const int mb = CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
	const int m0 = mb * BM, h = blockIdx.y, b = blockIdx.z;
	const int seq = p.seq;
	int n_tiles = (seq + BN - 1) / BN;
	if (CAUSAL)
		n_tiles = min(n_tiles, (m0 + BM + BN - 1) / BN);
	const int n_tot = n_tiles + sm90_plant_extra(n_tiles, p.plant_pct);

	if (tid == 0) {
		sm90_mbar_init(barQ, 1);
		for (int s = 0; s < ST; s++) {
			sm90_mbar_init(fullK(s), 1);
			sm90_mbar_init(fullV(s), 1);
			sm90_mbar_init(emptyK(s), 4 * NC);
			sm90_mbar_init(emptyV(s), 4 * NC);
		}
		sm90_mbar_init_fence();
	}
	__syncthreads();

	if (wg == 0) {
		sm90_setmaxnreg_dec<F::T::REG_PROD>();
		if (tid == 0) {
			sm90_mbar_expect_tx(barQ, F::Q_BYTES);
			sm90_tma_load_4d(sQ, &tmq, barQ, 0, m0, h, b);
			for (int j = 0; j < n_tot; j++) {
				const int s = j % ST;
				const uint32_t ph = ((j / ST) - 1) & 1;
				const int kt = j < n_tiles ? j : (j - n_tiles) % n_tiles;
				if (j >= ST)
					sm90_mbar_wait(emptyK(s), ph, &kpt_attn_fwd_sm90_e4m3_hung);
				sm90_mbar_expect_tx(fullK(s), F::K_BYTES);
				sm90_tma_load_4d(sK + s * F::K_BYTES, &tmk, fullK(s), 0, kt * BN, h, b);
				if (j >= ST)
					sm90_mbar_wait(emptyV(s), ph, &kpt_attn_fwd_sm90_e4m3_hung);
				sm90_mbar_expect_tx(fullV(s), F::VT_BYTES);
				/* V^T map: (key, d, h, b) */
				sm90_tma_load_4d(sV + s * F::VT_BYTES, &tmvt, fullV(s), kt * BN, 0, h, b);
			}
		}
	} else {
		sm90_setmaxnreg_inc<F::T::REG_CONS>();
		const int c = wg - 1, ltid = tid - 128 * wg, warp = ltid / 32, lane = tid & 31;
		/* PP: warpgroup c issues its GEMMs of round r (S(0); S(j) and
		 * P(j-1) V(j-1); the last P V) only after warpgroup c - 1 (mod NC)
		 * issued its round r (round r - 1 for c = 0): bar.sync on its own
		 * barrier (128 threads) completes with the 128 of the
		 * predecessor's bar.arrive. Every warpgroup passes n_tot + 1
		 * rounds, each one turn_begin and one turn_end, in every branch
		 * (n_tot is the block's, the same for all of them); warpgroup NC -
		 * 1 arrives once ahead (so that 0 starts) and skips its last
		 * arrive, so each barrier gets exactly as many arrives as syncs. */
		auto turn_begin = [&]() {
			if (PP)
				named_bar_sync(PP_BAR + c, 256);
		};
		auto turn_end = [&](bool last) {
			if (PP && !(last && c == NC - 1))
				named_bar_arrive(PP_BAR + (c + 1) % NC, 256);
		};
		if (PP && c == NC - 1)
			named_bar_arrive(PP_BAR, 256);
		const int g = lane >> 2, t = lane & 3;
		const int row0 = m0 + c * 64 + warp * 16 + g;
		const bool warp_leader = lane == 0;
		const float sl2 = p.scale_log2;
		/* K-major; Q and K rows of HD bytes, V^T rows of BN = 128 keys */
		const uint64_t dq = desc_kmajor<HD>(sQ + c * 64 * HD);
		const uint64_t dk0 = desc_kmajor<HD>(sK);
		const uint64_t dv0 = desc_kmajor<BN>(sV);
		constexpr uint64_t k_step = F::K_BYTES >> 4, v_step = F::VT_BYTES >> 4;

		float o[HD / 2], s[BN / 2], m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.f, 0.f }, alpha[2];
		uint32_t pf[BN / 8];
#pragma unroll
		for (int i = 0; i < HD / 2; i++)
			o[i] = 0.f;

		sm90_mbar_wait(barQ, 0, &kpt_attn_fwd_sm90_e4m3_hung);
		sm90_mbar_wait(fullK(0), 0, &kpt_attn_fwd_sm90_e4m3_hung);
		turn_begin();
		sm90_wg_fence();
		issue_qk<HD>(s, dq, dk0);
		sm90_wg_commit();
		turn_end(false);
		sm90_wg_wait<0>();
		sm90_reg_fence(s);
		if (warp_leader)
			sm90_mbar_arrive(emptyK(0));
		softmax_tile<CAUSAL>(s, m, l, alpha, sl2, 0, seq, row0, m0, t);
		pack_p(pf, s);

		for (int j = 1; j < n_tot; j++) {
			const int sj = j % ST, sp = (j - 1) % ST;
			sm90_mbar_wait(fullK(sj), (j / ST) & 1, &kpt_attn_fwd_sm90_e4m3_hung);
			if (PP) { /* both tiles in before the turn: the GEMMs go out together */
				sm90_mbar_wait(fullV(sp), ((j - 1) / ST) & 1, &kpt_attn_fwd_sm90_e4m3_hung);
				turn_begin();
			}
			sm90_wg_fence();
			issue_qk<HD>(s, dq, dk0 + sj * k_step);
			sm90_wg_commit();
			if (!PP)
				sm90_mbar_wait(fullV(sp), ((j - 1) / ST) & 1, &kpt_attn_fwd_sm90_e4m3_hung);
			sm90_wg_fence();
			issue_pv(o, pf, dv0 + sp * v_step);
			sm90_wg_commit();
			turn_end(false);
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
			pack_p(pf, s);
		}
		{
			const int sp = (n_tot - 1) % ST;
			sm90_mbar_wait(fullV(sp), ((n_tot - 1) / ST) & 1, &kpt_attn_fwd_sm90_e4m3_hung);
			turn_begin();
			sm90_wg_fence();
			issue_pv(o, pf, dv0 + sp * v_step);
			sm90_wg_commit();
			turn_end(true);
			sm90_wg_wait<0>();
			sm90_reg_fence(o);
			sm90_reg_fence(pf);
			if (warp_leader)
				sm90_mbar_arrive(emptyV(sp));
		}

		const float hung = *(volatile int *)&kpt_attn_fwd_sm90_e4m3_hung ? __int_as_float(0x7fffffff) : 0.f;
		float inv[2];
#pragma unroll
		for (int r = 0; r < 2; r++) {
			float lr = l[r];
			lr += __shfl_xor_sync(0xffffffffu, lr, 1);
			lr += __shfl_xor_sync(0xffffffffu, lr, 2);
			inv[r] = p.v_descale / lr + hung;
		}
		uint16_t *go = reinterpret_cast<uint16_t *>(p.o) + b * p.sb + h * p.sh;
#pragma unroll
		for (int r = 0; r < 2; r++) {
			const int row = row0 + 8 * r;
			if (row < seq) {
				uint32_t *dst = reinterpret_cast<uint32_t *>(go + (long long)row * p.ss + 2 * t);
#pragma unroll
				for (int j = 0; j < HD / 8; j++)
					dst[4 * j] = pack2_bf16(o[4 * j + 2 * r] * inv[r], o[4 * j + 2 * r + 1] * inv[r]);
			}
		}
	}
}

#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

/* PP: the ping-pong variant (header comment), true in its name in profiles. */
template <int HDIM, bool CAUSAL, bool PP, int ST>
__global__ void __launch_bounds__(e4m3_cfg<HDIM>::NTHREADS, 1)
	attn_fwd_sm90_e4m3_kernel(const __grid_constant__ CUtensorMap tmq, const __grid_constant__ CUtensorMap tmk,
				  const __grid_constant__ CUtensorMap tmvt, e4m3_params p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	e4m3_body<HDIM, CAUSAL, PP, ST>(tmq, tmk, tmvt, p);
#else
	(void)tmq, (void)tmk, (void)tmvt, (void)p;
#endif
}

/* ------------------------------------------------------------------ host */

std::atomic<int> dev_state[kpt::SM90_MAX_DEVICES];

bool device_usable(void)
{
	return kpt::sm90_device_usable(dev_state, (const void *)attn_fwd_sm90_e4m3_kernel<128, false, false, 2>);
}

/* 4-D byte tensor map, box inner x rows, the swizzle of inner-byte rows
 * (128 or 64), out-of-range reads as zeros. A dimension of extent 1 gets the
 * stride below it (never used; the driver refuses zero). */
bool make_map(CUtensorMap *m, const void *ptr, const cuuint64_t dims[4], const cuuint64_t strides[3], int inner,
	      int rows)
{
	const CUtensorMapSwizzle sw = inner == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_64B;
	cuuint64_t st[3] = { strides[0], dims[2] > 1 ? strides[1] : strides[0], dims[3] > 1 ? strides[2] : strides[0] };
	cuuint32_t box[4] = { (cuuint32_t)inner, (cuuint32_t)rows, 1, 1 };
	cuuint32_t estr[4] = { 1, 1, 1, 1 };
	CUresult r = kpt::tma_encode_fn()(m, CU_TENSOR_MAP_DATA_TYPE_UINT8, 4, const_cast<void *>(ptr), dims, st, box,
					  estr, CU_TENSOR_MAP_INTERLEAVE_NONE, sw,
					  CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	return r == CUDA_SUCCESS;
}

template <int HDIM, bool CAUSAL, bool PP, int ST>
cudaError_t launch(const CUtensorMap &mq, const CUtensorMap &mk, const CUtensorMap &mvt, const e4m3_params &p,
		   int batch, int heads, cudaStream_t s)
{
	using F = e4m3_cfg<HDIM, ST>;
	auto kern = attn_fwd_sm90_e4m3_kernel<HDIM, CAUSAL, PP, ST>;
	cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, F::SM_BYTES);
	if (e != cudaSuccess)
		return e;
	dim3 grid((p.seq + F::BM - 1) / F::BM, heads, batch);
	kern<<<grid, F::NTHREADS, F::SM_BYTES, s>>>(mq, mk, mvt, p);
	return cudaGetLastError();
}

} /* namespace */

bool kpt::attn_fwd_sm90_e4m3_supports(const struct kpt_attn_fwd_args *a)
{
	return (a->head_dim == 128 || a->head_dim == 64) && a->dtype == KPT_ATTN_E4M3 && device_usable();
}

int kpt::attn_fwd_sm90_e4m3(const struct kpt_attn_fwd_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (!attn_fwd_sm90_e4m3_supports(a))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: the e4m3 kernel needs head dim 64 or 128 on a compute capability "
				    "9.0 GPU with sm_90a code built");
	const bool d128 = a->head_dim == 128;
	const int bm = d128 ? e4m3_cfg<128>::BM : e4m3_cfg<64>::BM, bn = e4m3_cfg<128>::BN;
	const cuuint64_t hd = (cuuint64_t)a->head_dim, vts = (cuuint64_t)kpt_attn_e4m3_vt_seq(a->seq);
	const cuuint64_t qk_dims[4] = { hd, (cuuint64_t)a->seq, (cuuint64_t)a->heads, (cuuint64_t)a->batch };
	const cuuint64_t qk_str[3] = { (cuuint64_t)a->stride_s, (cuuint64_t)a->stride_h, (cuuint64_t)a->stride_b };
	/* V^T, packed: [batch][heads][head_dim][vts] contiguous */
	const cuuint64_t vt_dims[4] = { vts, hd, (cuuint64_t)a->heads, (cuuint64_t)a->batch };
	const cuuint64_t vt_str[3] = { vts, vts * hd, vts * hd * (cuuint64_t)a->heads };
	CUtensorMap mq, mk, mvt;
	if (!make_map(&mq, a->q, qk_dims, qk_str, a->head_dim, bm) || !make_map(&mk, a->k, qk_dims, qk_str, a->head_dim, bn) ||
	    !make_map(&mvt, a->v, vt_dims, vt_str, bn, a->head_dim))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: the driver refuses these strides for a TMA tensor map");
	e4m3_params p;
	kpt::attn_fwd_base_params(p, a);
	p.scale_log2 = p.scale_log2 * a->q_descale * a->k_descale; /* (scale x log2 e) x q x k, as before */
	p.v_descale = a->v_descale;
	p.plant_pct = a->plant_pct;
	/* [d128][causal][kernel - SERIAL]: SERIAL, PINGPONG, PINGPONG3 */
	using launch_fn = cudaError_t (*)(const CUtensorMap &, const CUtensorMap &, const CUtensorMap &,
					  const e4m3_params &, int, int, cudaStream_t);
	static const launch_fn table[2][2][3] = {
		{ { launch<64, false, false, 2>, launch<64, false, true, 2>, launch<64, false, true, 3> },
		  { launch<64, true, false, 2>, launch<64, true, true, 2>, launch<64, true, true, 3> } },
		{ { launch<128, false, false, 2>, launch<128, false, true, 2>, launch<128, false, true, 3> },
		  { launch<128, true, false, 2>, launch<128, true, true, 2>, launch<128, true, true, 3> } },
	};
	static_assert(KPT_ATTN_E4M3_KERNEL_COUNT - KPT_ATTN_E4M3_KERNEL_SERIAL == 3, "one column per kernel");
	const int kern = kpt_attn_e4m3_kernel_pick(a->e4m3_kernel, a->head_dim) - KPT_ATTN_E4M3_KERNEL_SERIAL;
	cudaError_t e = table[d128][a->causal != 0][kern](mq, mk, mvt, p, a->batch, a->heads, s);
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "attention forward: e4m3 wgmma launch failed: %s",
				    cudaGetErrorString(e));
	return 0;
}
