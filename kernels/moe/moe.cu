/* moe.cu - the mixture-of-experts layer (see kpt_moe.h).
 *
 * Stages and their kernels:
 *   router   cuBLAS logits (bf16 x bf16 -> fp32), then moe_topk: one warp per
 *            token does softmax, top-k and renormalisation and counts tokens
 *            per expert; moe_scan turns counts into row offsets and GEMM tile
 *            offsets (one block, O(experts));
 *   permute  moe_permute: one warp per (token, k) slot claims a row of its
 *            expert's range; the grouped GEMM gathers the token rows itself
 *            (src_row), the cuBLAS path needs them copied (16-byte vectors);
 *   ffn      moe_grouped_gemm twice (GELU fused into the first epilogue), the
 *            cuBLAS loop, or on Hopper the wgmma grouped GEMMs of
 *            moe_ffn_sm90.cu (KPT_MOE_FFN_GROUPED_SM90, built when the build
 *            defines KPT_MOE_SM90) or their clustered variant with TMA
 *            multicast (moe_ffn_sm90_mc.cu, KPT_MOE_FFN_GROUPED_SM90_MC);
 *            kpt_moe_ffn_path chooses;
 *   combine  moe_combine: y[t] = sum_k w[t][k] * rows[slot(t, k)], fp32 sums.
 * The order of rows inside an expert's range depends on atomics, but every
 * output row is computed from its own input row alone, so y does not.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cublas_v2.h>
#include <nvtx3/nvToolsExt.h>

#include "kpt_moe.h"
#include "../attention/kpt_mma.cuh"
#if KPT_MOE_SM90
#include "moe_ffn_sm90.h"
#endif

typedef __nv_bfloat16 bf16;

namespace {

constexpr int MOE_MAX_EXPERTS = 256;
constexpr int MOE_MAX_TOPK = 16;
constexpr int GG_BK = 64, GG_STAGES = 3;

/* Softmax over the logits a warp holds (lane + 32 i for i < EPL), top-k with
 * ties to the lower index, weights renormalised over the chosen k; lane j < k
 * writes choice j of token t and counts it. */
template <int EPL>
__device__ __forceinline__ void topk_select(float v[EPL], int lane, long long t, int experts, int top_k, int *ids,
					    float *wts, int *counts)
{
	float mx = -INFINITY;
#pragma unroll
	for (int i = 0; i < EPL; i++) {
		if (lane + 32 * i >= experts)
			v[i] = -INFINITY;
		mx = fmaxf(mx, v[i]);
	}
	for (int o = 16; o > 0; o >>= 1)
		mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	/* Unnormalised probabilities: the softmax denominator cancels in the
	 * renormalised weights and does not change the order. */
#pragma unroll
	for (int i = 0; i < EPL; i++)
		v[i] = lane + 32 * i < experts ? expf(v[i] - mx) : -1.f;
	int myid = 0;
	float myp = 0.f, psum = 0.f;
	for (int j = 0; j < top_k; j++) {
		float best = -2.f;
		int bi = 0x7fffffff;
#pragma unroll
		for (int i = 0; i < EPL; i++) {
			if (v[i] > best) { /* strict: keeps the lower index of a tie */
				best = v[i];
				bi = lane + 32 * i;
			}
		}
		for (int o = 16; o > 0; o >>= 1) {
			float ob = __shfl_xor_sync(0xffffffffu, best, o);
			int oi = __shfl_xor_sync(0xffffffffu, bi, o);
			if (ob > best || (ob == best && oi < bi)) {
				best = ob;
				bi = oi;
			}
		}
#pragma unroll
		for (int i = 0; i < EPL; i++)
			if (lane + 32 * i == bi)
				v[i] = -2.f;
		psum += best;
		if (lane == j) {
			myid = bi;
			myp = best;
		}
	}
	if (lane < top_k) {
		ids[t * top_k + lane] = myid;
		wts[t * top_k + lane] = myp / psum;
		atomicAdd(&counts[myid], 1);
	}
}

/* Router top-k from fp32 logits [tokens][experts]; one warp per token. */
__global__ void moe_topk(const float *logits, int tokens, int experts, int top_k, int *ids, float *wts,
			 int *counts)
{
	constexpr int EPL = MOE_MAX_EXPERTS / 32;
	const int lane = threadIdx.x & 31;
	const int t = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
	if (t >= tokens)
		return;
	const float *lg = logits + (long long)t * experts;
	float v[EPL];
#pragma unroll
	for (int i = 0; i < EPL; i++)
		v[i] = lane + 32 * i < experts ? lg[lane + 32 * i] : 0.f;
	topk_select<EPL>(v, lane, t, experts, top_k, ids, wts, counts);
}

/* The whole router for small gates (experts <= 32, experts * hidden * 2 <=
 * ROUTER_SMALL_BYTES): Wg staged in shared memory, one warp per token computes
 * its logits in fp32 (x read as 16-byte vectors, lanes split hidden) and
 * selects as moe_topk does. Saves the cuBLAS call and the logits round trip. */
constexpr int ROUTER_SMALL_BYTES = 32768;
__global__ void __launch_bounds__(256) moe_router_small(const bf16 *x, const bf16 *wg, int tokens, int hidden,
							int experts, int top_k, int *ids, float *wts, int *counts)
{
	__shared__ __align__(16) bf16 sw[ROUTER_SMALL_BYTES / 2];
	const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
	const int nw = experts * hidden / 8;
	for (int i = threadIdx.x; i < nw; i += blockDim.x)
		reinterpret_cast<uint4 *>(sw)[i] = reinterpret_cast<const uint4 *>(wg)[i];
	__syncthreads();
	for (int t = blockIdx.x * 8 + warp; t < tokens; t += gridDim.x * 8) {
		float dot = 0.f; /* lane e ends with logit e */
		for (int e = 0; e < experts; e++) {
			float part = 0.f;
			for (int c = lane * 8; c < hidden; c += 256) {
				uint4 xv = *reinterpret_cast<const uint4 *>(x + (long long)t * hidden + c);
				uint4 wv = *reinterpret_cast<const uint4 *>(sw + e * hidden + c);
				const uint32_t *xp = reinterpret_cast<const uint32_t *>(&xv);
				const uint32_t *wp = reinterpret_cast<const uint32_t *>(&wv);
#pragma unroll
				for (int k = 0; k < 4; k++) {
					float2 a = kpt::mma_t<bf16>::unpack(xp[k]), b = kpt::mma_t<bf16>::unpack(wp[k]);
					part = fmaf(a.x, b.x, fmaf(a.y, b.y, part));
				}
			}
			for (int o = 16; o > 0; o >>= 1)
				part += __shfl_xor_sync(0xffffffffu, part, o);
			if (lane == e)
				dot = part;
		}
		float v[1] = { dot };
		topk_select<1>(v, lane, t, experts, top_k, ids, wts, counts);
	}
}

/* offsets[e] = first row of expert e (offsets[experts] = tokens * top_k);
 * tiles[e] = first 128-row GEMM tile of expert e (tiles[experts] = total),
 * tiles[experts + 1 + e] the same for 64-row tiles. */
__global__ void moe_scan(const int *counts, int experts, int *offsets, int *tiles)
{
	if (threadIdx.x != 0)
		return;
	int row = 0, tile = 0, tile64 = 0;
	for (int e = 0; e < experts; e++) {
		offsets[e] = row;
		tiles[e] = tile;
		tiles[experts + 1 + e] = tile64;
		row += counts[e];
		tile += (counts[e] + 127) / 128;
		tile64 += (counts[e] + 63) / 64;
	}
	offsets[experts] = row;
	tiles[experts] = tile;
	tiles[2 * experts + 1] = tile64;
}

/* Claims a row for each (token, k) slot: slot_pos[slot] = row, src_row[row] =
 * token. xp == NULL: no copy (the grouped GEMM gathers rows through src_row). */
__global__ void moe_permute(const bf16 *x, int tokens, int hidden, int top_k, const int *ids,
			    const int *offsets, int *cursor, int *slot_pos, int *src_row, bf16 *xp)
{
	const int lane = threadIdx.x & 31;
	const long long slot = (long long)blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
	if (slot >= (long long)tokens * top_k)
		return;
	int pos = 0;
	if (lane == 0) {
		int e = ids[slot];
		pos = offsets[e] + atomicAdd(&cursor[e], 1);
		slot_pos[slot] = pos;
		src_row[pos] = (int)(slot / top_k);
	}
	if (!xp)
		return;
	pos = __shfl_sync(0xffffffffu, pos, 0);
	const uint4 *src = reinterpret_cast<const uint4 *>(x + (slot / top_k) * hidden);
	uint4 *dst = reinterpret_cast<uint4 *>(xp + (long long)pos * hidden);
	for (int i = lane; i < hidden / 8; i += 32)
		dst[i] = src[i];
}

__global__ void moe_combine(const bf16 *rows, int tokens, int hidden, int top_k, const int *slot_pos,
			    const float *wts, bf16 *y)
{
	const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	const int per = hidden / 8;
	if (i >= (long long)tokens * per)
		return;
	const long long t = i / per;
	const int c = (int)(i % per) * 8;
	float acc[8] = { 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f };
	for (int j = 0; j < top_k; j++) {
		float w = wts[t * top_k + j];
		uint4 u = *reinterpret_cast<const uint4 *>(rows + (long long)slot_pos[t * top_k + j] * hidden + c);
		const uint32_t *pu = reinterpret_cast<const uint32_t *>(&u);
#pragma unroll
		for (int k = 0; k < 4; k++) {
			float2 f = kpt::mma_t<bf16>::unpack(pu[k]);
			acc[2 * k] = fmaf(w, f.x, acc[2 * k]);
			acc[2 * k + 1] = fmaf(w, f.y, acc[2 * k + 1]);
		}
	}
	uint4 o;
	uint32_t *po = reinterpret_cast<uint32_t *>(&o);
#pragma unroll
	for (int k = 0; k < 4; k++)
		po[k] = kpt::mma_t<bf16>::pack(acc[2 * k], acc[2 * k + 1]);
	*reinterpret_cast<uint4 *>(y + t * hidden + c) = o;
}

__device__ __forceinline__ float gelu_erf(float v)
{
	return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
}

__global__ void moe_gelu(bf16 *h, long long n)
{
	long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		h[i] = __float2bfloat16_rn(gelu_erf(__bfloat162float(h[i])));
}

/* C[r][n] = sum_k A[r][k] * B_e[n][k] for the rows r of each expert e
 * (offsets), B_e = B + e * N * K. One block per (BN-column tile, BM-row tile
 * of some expert); tiles[] maps the row tile to its expert. WM x WN warps,
 * each computing a (BM/WM) x (BN/WN) tile with mma.sync; GG_STAGES-deep
 * cp.async pipeline over 64-wide K slices. K % 64 == 0, N % BN == 0.
 * GELU: apply gelu_erf before rounding. */
template <int BM, int BN, int WM, int WN, int MINB, bool GELU>
__global__ void __launch_bounds__(WM * WN * 32, MINB)
moe_grouped_gemm(const bf16 *A, const bf16 *B, bf16 *C, int N, int K, int experts, const int *offsets,
		 const int *tiles, const int *arow)
{
	using M = kpt::mma_t<bf16>;
	constexpr int NT = WM * WN * 32;
	constexpr int W = GG_BK / 8;
	constexpr int MTL = BM / WM / 16, NTL = BN / WN / 8;
	static_assert(NTL % 2 == 0, "warp tile width must be a multiple of 16");
	extern __shared__ __align__(128) unsigned char smem[];
	bf16 *sA = reinterpret_cast<bf16 *>(smem);
	bf16 *sB = sA + GG_STAGES * BM * GG_BK;

	if (BM == 64)
		tiles += experts + 1;
	const int tile = blockIdx.y;
	if (tile >= tiles[experts])
		return;
	int lo = 0, hi = experts - 1; /* the last e with tiles[e] <= tile */
	while (lo < hi) {
		int mid = (lo + hi + 1) >> 1;
		if (tiles[mid] <= tile)
			lo = mid;
		else
			hi = mid - 1;
	}
	const int e = lo;
	const int m0 = offsets[e] + (tile - tiles[e]) * BM;
	const int m1 = offsets[e + 1];
	const int n0 = blockIdx.x * BN;
	const bf16 *gA = A + (long long)m0 * K;
	const bf16 *gB = B + ((long long)e * N + n0) * K;

	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	const int wm = warp / WN, wn = warp % WN;
	const int KT = K / GG_BK;

	/* This thread's A rows, fixed over the K loop; arow (if not NULL) maps a
	 * row to the A row it gathers (the token), else rows are contiguous. */
	constexpr int AL = BM * W / NT;
	const bf16 *arp[AL];
	bool aok[AL];
#pragma unroll
	for (int j = 0; j < AL; j++) {
		int r = (tid + j * NT) / W;
		aok[j] = m0 + r < m1;
		arp[j] = aok[j] ? (arow ? A + (long long)arow[m0 + r] * K : gA + (long long)r * K) : A;
		arp[j] += ((tid + j * NT) % W) * 8;
	}
	auto load = [&](int stage, int kt) {
		bf16 *a = sA + stage * BM * GG_BK;
		bf16 *b = sB + stage * BN * GG_BK;
		const int k0 = kt * GG_BK;
#pragma unroll
		for (int j = 0; j < AL; j++) {
			int i = tid + j * NT;
			kpt::cp_async16(kpt::smem_addr(a + kpt::swz<W>(i / W, i % W)), arp[j] + k0, aok[j]);
		}
#pragma unroll
		for (int i = tid; i < BN * W; i += NT) {
			int r = i / W, c = i % W;
			kpt::cp_async16(kpt::smem_addr(b + kpt::swz<W>(r, c)), gB + (long long)r * K + k0 + c * 8, true);
		}
	};

	float acc[MTL][NTL][4];
#pragma unroll
	for (int i = 0; i < MTL; i++)
#pragma unroll
		for (int j = 0; j < NTL; j++)
			acc[i][j][0] = acc[i][j][1] = acc[i][j][2] = acc[i][j][3] = 0.f;

#pragma unroll
	for (int st = 0; st < GG_STAGES - 1; st++) {
		if (st < KT)
			load(st, st);
		kpt::cp_async_commit();
	}
	for (int kt = 0; kt < KT; kt++) {
		kpt::cp_async_wait<GG_STAGES - 2>();
		__syncthreads();
		if (kt + GG_STAGES - 1 < KT)
			load((kt + GG_STAGES - 1) % GG_STAGES, kt + GG_STAGES - 1);
		kpt::cp_async_commit();
		const bf16 *a = sA + (kt % GG_STAGES) * BM * GG_BK;
		const bf16 *b = sB + (kt % GG_STAGES) * BN * GG_BK;
#pragma unroll
		for (int kk = 0; kk < GG_BK / 16; kk++) {
			uint32_t af[MTL][4], bfr[NTL / 2][4];
#pragma unroll
			for (int mt = 0; mt < MTL; mt++)
				kpt::ldsm_x4(af[mt], kpt::smem_addr(a + kpt::swz<W>(wm * (BM / WM) + mt * 16 + (lane & 15),
										   kk * 2 + (lane >> 4))));
#pragma unroll
			for (int np = 0; np < NTL / 2; np++)
				kpt::ldsm_x4(bfr[np], kpt::smem_addr(b + kpt::swz<W>(wn * (BN / WN) + np * 16 + (lane & 7) +
											    ((lane >> 4) << 3),
										    kk * 2 + ((lane >> 3) & 1))));
#pragma unroll
			for (int mt = 0; mt < MTL; mt++)
#pragma unroll
				for (int nt = 0; nt < NTL; nt++)
					M::mma(acc[mt][nt], af[mt], bfr[nt >> 1][(nt & 1) * 2], bfr[nt >> 1][(nt & 1) * 2 + 1]);
		}
	}
	kpt::cp_async_wait<0>();

#pragma unroll
	for (int mt = 0; mt < MTL; mt++) {
#pragma unroll
		for (int h = 0; h < 2; h++) {
			int r = m0 + wm * (BM / WM) + mt * 16 + (lane >> 2) + h * 8;
			if (r >= m1)
				continue;
			bf16 *crow = C + (long long)r * N + n0 + wn * (BN / WN) + 2 * (lane & 3);
#pragma unroll
			for (int nt = 0; nt < NTL; nt++) {
				float v0 = acc[mt][nt][2 * h], v1 = acc[mt][nt][2 * h + 1];
				if (GELU) {
					v0 = gelu_erf(v0);
					v1 = gelu_erf(v1);
				}
				*reinterpret_cast<uint32_t *>(crow + nt * 8) = M::pack(v0, v1);
			}
		}
	}
}

/* One GEMM tile configuration: its two instantiations and launch shape. */
struct gg_cfg {
	int bm, bn, threads, smem;
	void (*gelu)(const bf16 *, const bf16 *, bf16 *, int, int, int, const int *, const int *, const int *);
	void (*plain)(const bf16 *, const bf16 *, bf16 *, int, int, int, const int *, const int *, const int *);
};

#define GG_CFG(BM, BN, WM, WN, MINB)                                                                    \
	{ BM, BN, WM * WN * 32, GG_STAGES * (BM + BN) * GG_BK * 2, moe_grouped_gemm<BM, BN, WM, WN, MINB, true>, \
	  moe_grouped_gemm<BM, BN, WM, WN, MINB, false> }

/* Index = enum kpt_moe_tiles - 1. */
static const gg_cfg gg_cfgs[] = {
	GG_CFG(128, 128, 2, 4, 2), /* 8 warps of 64 x 32 */
	GG_CFG(128, 128, 2, 2, 2), /* 4 warps of 64 x 64 */
	GG_CFG(128, 64, 4, 2, 3),  /* 8 warps of 32 x 32 */
	GG_CFG(128, 256, 2, 4, 1), /* 8 warps of 64 x 64 */
	GG_CFG(64, 128, 2, 4, 3),  /* 8 warps of 32 x 32 */
};
#define GG_NCFG ((int)(sizeof gg_cfgs / sizeof gg_cfgs[0]))

/* Largest-tile configuration that still gives every SM 2 waves' worth of
 * blocks, else the one with the most blocks. */
static int gg_pick(long long rows, int experts, int n, int sms, int smem_max)
{
	static const int order[] = { 0, 4, 2 }; /* cfg indices, big tiles first */
	for (int i = 0; i < 3; i++) {
		const gg_cfg *c = &gg_cfgs[order[i]];
		if (n % c->bn || c->smem > smem_max)
			continue;
		long long blocks = (rows / c->bm + experts / 2) * (n / c->bn);
		if (blocks >= 4LL * sms)
			return order[i];
	}
	return 2;
}

} /* namespace */

struct kpt_moe {
	struct kpt_moe_cfg cfg;
	enum kpt_moe_ffn_impl impl; /* GROUPED, CUBLAS, GROUPED_SM90 or _MC (AUTO resolved at creation) */
	cublasHandle_t blas;
	void *ws;
	float *logits, *wts;
	int *ids, *counts, *cursor, *offsets, *tiles, *slot_pos, *src_row;
	cudaEvent_t *ev; /* NULL, or 5 events recorded at the stage boundaries */
	bf16 *xp, *hb, *yb;
	int *h_offsets; /* pinned, cuBLAS path */
	int sms;
	int smem_max;   /* opt-in shared memory per block: configurations above it are skipped */
	int g1, g2;     /* gg_cfgs index of FFN GEMM 1 and 2; -1 = choose by size */
	int plant_pct;  /* kpt_moe_set_plant (GROUPED_SM90 and _MC only) */
};

static size_t align256(size_t n)
{
	return (n + 255) & ~(size_t)255;
}

extern "C" void kpt_moe_destroy(struct kpt_moe *m)
{
	if (!m)
		return;
	if (m->blas)
		cublasDestroy(m->blas);
	cudaFree(m->ws);
	cudaFreeHost(m->h_offsets);
	free(m);
}

extern "C" int kpt_moe_create(struct kpt_moe **out, const struct kpt_moe_cfg *cfg, enum kpt_moe_ffn_impl impl,
			      struct kpt_diag *d)
{
	*out = NULL;
	if (cfg->tokens < 1 || cfg->experts < 1 || cfg->experts > MOE_MAX_EXPERTS || cfg->top_k < 1 ||
	    cfg->top_k > cfg->experts || cfg->top_k > MOE_MAX_TOPK)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: tokens %d, experts %d (1..%d), top-k %d (1..%d) out of range",
				    cfg->tokens, cfg->experts, MOE_MAX_EXPERTS, cfg->top_k, MOE_MAX_TOPK);
	if (cfg->hidden < 128 || cfg->hidden % 128 || cfg->ffn < 128 || cfg->ffn % 128)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: hidden %d and ffn %d must be positive multiples of 128",
				    cfg->hidden, cfg->ffn);
	int dev = 0, cc_major = 0, cc_minor = 0, sm90_usable = 0;
	cudaError_t e = cudaGetDevice(&dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&cc_minor, cudaDevAttrComputeCapabilityMinor, dev);
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "moe: cannot query the device: %s", cudaGetErrorString(e));
	const double ffn_flops = kpt_moe_ffn_flops(cfg);
	bool mc_usable = false;
#if KPT_MOE_SM90
	sm90_usable = cc_major == 9 && cc_minor == 0 && kpt::moe_sm90_usable();
	/* The clustered kernel's own probe only where it may run (_MC asked
	 * for, or AUTO from its crossover on). */
	if (sm90_usable && (impl == KPT_MOE_FFN_GROUPED_SM90_MC ||
			    (impl == KPT_MOE_FFN_AUTO && ffn_flops >= KPT_MOE_AUTO_SM90_MC_FLOPS)))
		mc_usable = kpt::moe_sm90_mc_usable();
#endif
	int path = kpt_moe_ffn_path(impl, cc_major, cc_minor,
				    impl == KPT_MOE_FFN_GROUPED_SM90_MC ? mc_usable : sm90_usable, ffn_flops);
	/* AUTO's clustered pick whose image does not load: the unclustered one */
	if (path == KPT_MOE_FFN_GROUPED_SM90_MC && !mc_usable)
		path = KPT_MOE_FFN_GROUPED_SM90;
	if (path == KPT_E_UNSUPPORTED && (cc_major != 9 || cc_minor != 0))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "moe: the wgmma FFN needs a compute capability 9.0 GPU, not %d.%d",
				    cc_major, cc_minor);
	if (path == KPT_E_UNSUPPORTED)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "moe: the wgmma FFN's sm_90a code is not in this build or does not load (KPT_MOE_SM90)");
	if (path < 0)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: unknown FFN implementation %d", (int)impl);
	impl = (enum kpt_moe_ffn_impl)path;
	long long rows = (long long)cfg->tokens * cfg->top_k;
	if (rows / 64 + cfg->experts + 1 > 65535)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: %lld token rows exceed one launch", rows);
	struct kpt_moe *m = (struct kpt_moe *)calloc(1, sizeof *m);
	if (!m)
		return kpt_diag_set(d, KPT_E_NOMEM, "moe: out of host memory");
	m->cfg = *cfg;
	m->impl = impl;
	const int E = cfg->experts;
	size_t sz[] = {
		align256((size_t)cfg->tokens * E * 4),          /* logits */
		align256((size_t)rows * 4),                     /* wts */
		align256((size_t)rows * 4),                     /* ids */
		align256((size_t)2 * E * 4),                    /* counts, cursor (zeroed together) */
		align256((size_t)(E + 1) * 4),                  /* offsets */
		align256((size_t)(2 * E + 2) * 4),              /* tiles (128- and 64-row) */
		align256((size_t)rows * 4),                     /* slot_pos */
		align256((size_t)rows * 4),                     /* src_row */
		align256(impl == KPT_MOE_FFN_CUBLAS ? (size_t)rows * cfg->hidden * 2 : 0), /* xp (cuBLAS only) */
		align256((size_t)rows * cfg->ffn * 2),          /* hb */
		align256((size_t)rows * cfg->hidden * 2),       /* yb */
	};
	size_t total = 0;
	for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
		total += sz[i];
	e = cudaMalloc(&m->ws, total);
	if (e != cudaSuccess) {
		kpt_moe_destroy(m);
		return kpt_diag_set(d, KPT_E_CUDA, "moe: cannot allocate %zu bytes of workspace: %s", total,
				    cudaGetErrorString(e));
	}
	char *p = (char *)m->ws;
	m->logits = (float *)p, p += sz[0];
	m->wts = (float *)p, p += sz[1];
	m->ids = (int *)p, p += sz[2];
	m->counts = (int *)p, m->cursor = m->counts + E, p += sz[3];
	m->offsets = (int *)p, p += sz[4];
	m->tiles = (int *)p, p += sz[5];
	m->slot_pos = (int *)p, p += sz[6];
	m->src_row = (int *)p, p += sz[7];
	m->xp = (bf16 *)p, p += sz[8];
	m->hb = (bf16 *)p, p += sz[9];
	m->yb = (bf16 *)p;
	if (cublasCreate(&m->blas) != CUBLAS_STATUS_SUCCESS) {
		kpt_moe_destroy(m);
		return kpt_diag_set(d, KPT_E_CUDA, "moe: cublasCreate failed");
	}
	if (impl == KPT_MOE_FFN_CUBLAS && cudaMallocHost(&m->h_offsets, (size_t)(E + 1) * 4) != cudaSuccess) {
		kpt_moe_destroy(m);
		return kpt_diag_set(d, KPT_E_CUDA, "moe: cannot allocate pinned host memory");
	}
	m->g1 = m->g2 = -1;
	e = cudaDeviceGetAttribute(&m->sms, cudaDevAttrMultiProcessorCount, dev);
	if (e == cudaSuccess)
		e = cudaDeviceGetAttribute(&m->smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
	for (int i = 0; i < GG_NCFG && e == cudaSuccess; i++) {
		if (gg_cfgs[i].smem > m->smem_max)
			continue;
		e = cudaFuncSetAttribute((const void *)gg_cfgs[i].gelu, cudaFuncAttributeMaxDynamicSharedMemorySize,
					 gg_cfgs[i].smem);
		if (e == cudaSuccess)
			e = cudaFuncSetAttribute((const void *)gg_cfgs[i].plain,
						 cudaFuncAttributeMaxDynamicSharedMemorySize, gg_cfgs[i].smem);
	}
	if (e != cudaSuccess) {
		kpt_moe_destroy(m);
		return kpt_diag_set(d, KPT_E_CUDA, "moe: cannot raise the GEMM shared-memory limit: %s",
				    cudaGetErrorString(e));
	}
	*out = m;
	return 0;
}

extern "C" int kpt_moe_set_gemm_tiles(struct kpt_moe *m, int ffn1, int ffn2, struct kpt_diag *d)
{
	if (ffn1 < 0 || ffn1 > GG_NCFG || ffn2 < 0 || ffn2 > GG_NCFG)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: GEMM tiles %d, %d not in 0..%d", ffn1, ffn2, GG_NCFG);
	if ((ffn1 && m->cfg.ffn % gg_cfgs[ffn1 - 1].bn) || (ffn2 && m->cfg.hidden % gg_cfgs[ffn2 - 1].bn))
		return kpt_diag_set(d, KPT_E_INVAL, "moe: GEMM tiles wider than ffn %d or hidden %d allow",
				    m->cfg.ffn, m->cfg.hidden);
	if ((ffn1 && gg_cfgs[ffn1 - 1].smem > m->smem_max) || (ffn2 && gg_cfgs[ffn2 - 1].smem > m->smem_max))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "moe: GEMM tiles need more shared memory than this GPU's %d bytes",
				    m->smem_max);
	m->g1 = ffn1 - 1;
	m->g2 = ffn2 - 1;
	return 0;
}

extern "C" int kpt_moe_set_plant(struct kpt_moe *m, int pct, struct kpt_diag *d)
{
	if (pct < 0 || pct > 10000)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: plant %d%% not in 0..10000", pct);
	if (pct > 0 && m->impl != KPT_MOE_FFN_GROUPED_SM90 && m->impl != KPT_MOE_FFN_GROUPED_SM90_MC)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "moe: a planted slowdown needs the wgmma FFN (compute capability 9.0, sm_90a built); "
				    "this plan runs the %s FFN",
				    m->impl == KPT_MOE_FFN_CUBLAS ? "cuBLAS" : "mma.sync grouped");
	m->plant_pct = pct;
	return 0;
}

extern "C" const int *kpt_moe_topk_ids(const struct kpt_moe *m)
{
	return m->ids;
}

extern "C" const float *kpt_moe_topk_weights(const struct kpt_moe *m)
{
	return m->wts;
}

/* C_rowmajor[rows][n] = A_rowmajor[rows][k] * W_rowmajor[n][k]^T through
 * column-major cuBLAS: C^T = W * A^T. */
static cublasStatus_t gemm_nt(cublasHandle_t h, int rows, int n, int k, const bf16 *A, const bf16 *Wt, bf16 *C)
{
	const float one = 1.f, zero = 0.f;
	return cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, rows, k, &one, Wt, CUDA_R_16BF, k, A, CUDA_R_16BF, k,
			    &zero, C, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

static int ffn_cublas(struct kpt_moe *m, const bf16 *w1, const bf16 *w2, cudaStream_t s, struct kpt_diag *d)
{
	const struct kpt_moe_cfg *c = &m->cfg;
	const int E = c->experts;
	cudaError_t e = cudaMemcpyAsync(m->h_offsets, m->offsets, (size_t)(E + 1) * 4, cudaMemcpyDeviceToHost, s);
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(s);
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "moe: reading expert offsets failed: %s", cudaGetErrorString(e));
	for (int x = 0; x < E; x++) {
		int r0 = m->h_offsets[x], n = m->h_offsets[x + 1] - r0;
		if (n == 0)
			continue;
		if (gemm_nt(m->blas, n, c->ffn, c->hidden, m->xp + (size_t)r0 * c->hidden,
			    w1 + (size_t)x * c->ffn * c->hidden, m->hb + (size_t)r0 * c->ffn) != CUBLAS_STATUS_SUCCESS)
			return kpt_diag_set(d, KPT_E_CUDA, "moe: cuBLAS GEMM 1 of expert %d failed", x);
	}
	long long nh = (long long)c->tokens * c->top_k * c->ffn;
	moe_gelu<<<(unsigned)((nh + 255) / 256), 256, 0, s>>>(m->hb, nh);
	for (int x = 0; x < E; x++) {
		int r0 = m->h_offsets[x], n = m->h_offsets[x + 1] - r0;
		if (n == 0)
			continue;
		if (gemm_nt(m->blas, n, c->hidden, c->ffn, m->hb + (size_t)r0 * c->ffn,
			    w2 + (size_t)x * c->hidden * c->ffn, m->yb + (size_t)r0 * c->hidden) != CUBLAS_STATUS_SUCCESS)
			return kpt_diag_set(d, KPT_E_CUDA, "moe: cuBLAS GEMM 2 of expert %d failed", x);
	}
	return 0;
}

/* kpt_moe_create chose GROUPED_SM90 or _MC only where moe_sm90_usable() and
 * moe_sm90_mc_usable() held. */
static int ffn_sm90(struct kpt_moe *m, const bf16 *x, const bf16 *w1, const bf16 *w2, cudaStream_t s,
		    struct kpt_diag *d)
{
#if KPT_MOE_SM90
	const struct kpt_moe_cfg *c = &m->cfg;
	const kpt::moe_sm90_args a = { x, w1, w2, m->hb, m->yb, m->src_row, m->offsets, m->tiles,
				       (long long)c->tokens * c->top_k, c->hidden, c->ffn, c->experts, m->sms,
				       m->plant_pct };
	return m->impl == KPT_MOE_FFN_GROUPED_SM90_MC ? kpt::moe_ffn_sm90_mc(&a, s, d) : kpt::moe_ffn_sm90(&a, s, d);
#else
	(void)m, (void)x, (void)w1, (void)w2, (void)s;
	return kpt_diag_set(d, KPT_E_UNSUPPORTED, "moe: this build has no wgmma FFN (KPT_MOE_SM90)");
#endif
}

extern "C" int kpt_moe_forward(struct kpt_moe *m, void *y, const void *x, const void *w_gate, const void *w1,
			       const void *w2, cudaStream_t s, struct kpt_diag *d)
{
	if (!m || !y || !x || !w_gate || !w1 || !w2)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: a pointer is NULL");
	if (((uintptr_t)y | (uintptr_t)x | (uintptr_t)w1 | (uintptr_t)w2) & 15)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: tensors must be 16-byte aligned");
	const struct kpt_moe_cfg *c = &m->cfg;
	const int E = c->experts, T = c->tokens, K = c->top_k;
	const long long rows = (long long)T * K;
	const float one = 1.f, zero = 0.f;
	cudaError_t e;
	int rc = 0;

	if (m->ev)
		cudaEventRecord(m->ev[0], s);
	nvtxRangePushA("moe.router");
	cublasSetStream(m->blas, s);
	e = cudaMemsetAsync(m->counts, 0, (size_t)2 * E * 4, s);
	const bool small = E <= 32 && (size_t)E * c->hidden * 2 <= ROUTER_SMALL_BYTES;
	if (e == cudaSuccess && small) {
		unsigned blocks = (unsigned)((T + 7) / 8 < 4 * m->sms ? (T + 7) / 8 : 4 * m->sms);
		moe_router_small<<<blocks, 256, 0, s>>>((const bf16 *)x, (const bf16 *)w_gate, T, c->hidden, E, K, m->ids,
						       m->wts, m->counts);
		moe_scan<<<1, 32, 0, s>>>(m->counts, E, m->offsets, m->tiles);
		e = cudaGetLastError();
	} else if (e == cudaSuccess &&
	    cublasGemmEx(m->blas, CUBLAS_OP_T, CUBLAS_OP_N, E, T, c->hidden, &one, w_gate, CUDA_R_16BF, c->hidden, x,
			 CUDA_R_16BF, c->hidden, &zero, m->logits, CUDA_R_32F, E, CUBLAS_COMPUTE_32F,
			 CUBLAS_GEMM_DEFAULT) != CUBLAS_STATUS_SUCCESS)
		rc = kpt_diag_set(d, KPT_E_CUDA, "moe: router cuBLAS GEMM failed");
	if (e == cudaSuccess && rc == 0 && !small) {
		moe_topk<<<(T + 7) / 8, 256, 0, s>>>(m->logits, T, E, K, m->ids, m->wts, m->counts);
		moe_scan<<<1, 32, 0, s>>>(m->counts, E, m->offsets, m->tiles);
		e = cudaGetLastError();
	}
	nvtxRangePop();
	if (rc)
		return rc;
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "moe: router launch failed: %s", cudaGetErrorString(e));

	if (m->ev)
		cudaEventRecord(m->ev[1], s);
	nvtxRangePushA("moe.permute");
	moe_permute<<<(unsigned)((rows + 7) / 8), 256, 0, s>>>((const bf16 *)x, T, c->hidden, K, m->ids, m->offsets,
							     m->cursor, m->slot_pos, m->src_row,
							     m->impl == KPT_MOE_FFN_CUBLAS ? m->xp : NULL);
	e = cudaGetLastError();
	nvtxRangePop();
	if (m->ev)
		cudaEventRecord(m->ev[2], s);
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "moe: permute launch failed: %s", cudaGetErrorString(e));

	nvtxRangePushA("moe.ffn");
	if (m->impl == KPT_MOE_FFN_CUBLAS) {
		rc = ffn_cublas(m, (const bf16 *)w1, (const bf16 *)w2, s, d);
	} else if (m->impl == KPT_MOE_FFN_GROUPED_SM90 || m->impl == KPT_MOE_FFN_GROUPED_SM90_MC) {
		rc = ffn_sm90(m, (const bf16 *)x, (const bf16 *)w1, (const bf16 *)w2, s, d);
	} else {
		/* The grid covers the most row tiles any routing can produce; blocks
		 * past the real count (tiles[experts]) return at once. */
		const gg_cfg *g1 = &gg_cfgs[m->g1 >= 0 ? m->g1 : gg_pick(rows, E, c->ffn, m->sms, m->smem_max)];
		const gg_cfg *g2 = &gg_cfgs[m->g2 >= 0 ? m->g2 : gg_pick(rows, E, c->hidden, m->sms, m->smem_max)];
		g1->gelu<<<dim3(c->ffn / g1->bn, (unsigned)((rows + g1->bm - 1) / g1->bm + E)), g1->threads, g1->smem, s>>>(
			(const bf16 *)x, (const bf16 *)w1, m->hb, c->ffn, c->hidden, E, m->offsets, m->tiles, m->src_row);
		g2->plain<<<dim3(c->hidden / g2->bn, (unsigned)((rows + g2->bm - 1) / g2->bm + E)), g2->threads, g2->smem,
			    s>>>(m->hb, (const bf16 *)w2, m->yb, c->hidden, c->ffn, E, m->offsets, m->tiles, NULL);
	}
	e = cudaGetLastError();
	nvtxRangePop();
	if (rc)
		return rc;
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "moe: expert FFN launch failed: %s", cudaGetErrorString(e));

	if (m->ev)
		cudaEventRecord(m->ev[3], s);
	nvtxRangePushA("moe.combine");
	long long nthreads = (long long)T * (c->hidden / 8);
	moe_combine<<<(unsigned)((nthreads + 255) / 256), 256, 0, s>>>(m->yb, T, c->hidden, K, m->slot_pos, m->wts,
								      (bf16 *)y);
	e = cudaGetLastError();
	nvtxRangePop();
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "moe: combine launch failed: %s", cudaGetErrorString(e));
	if (m->ev)
		cudaEventRecord(m->ev[4], s);
	return 0;
}

extern "C" void kpt_moe_set_stage_events(struct kpt_moe *m, cudaEvent_t *ev)
{
	m->ev = ev;
}
