/* moe_ffn_sm90_mc.cu - the MoE expert FFN's two grouped wgmma GEMMs in
 * clusters of 2 with the weight tile multicast by TMA
 * (KPT_MOE_FFN_GROUPED_SM90_MC; moe_ffn_sm90.h). Issue 39, deliverable 1.
 *
 * The same GEMMs, tiles and pipeline as moe_ffn_sm90.cu (read its header
 * first: gather, 128B swizzle, LAG, registers, --plant), which stays
 * unchanged (the `default` suite and its committed baselines run it).
 * What differs:
 *
 * Clusters of 2 (__cluster_dims__(2, 1, 1); grid even, at most the SMs and
 * the clusters that fit at once, persistent). Work item w of a cluster's
 * grid-stride loop is pair w / (N / BN), column tile w % (N / BN); a pair is
 * two adjacent 128-row tiles of ONE expert (pairs of expert e: ceil(tiles_e
 * / 2), numbered by pp[], a prefix sum every block computes into shared
 * memory from moe_scan's tiles[] at its start). CTA rank r of the cluster
 * takes row tile 2 * (pair - pp[e]) + r. When an expert has an odd tile
 * count, rank 1's tile of its last pair is empty (m0 >= m1): it still loads
 * its half of B and runs the barrier protocol, but loads no A (GEMM 2:
 * expect_tx without the A bytes; GEMM 1: the gather's rows are zero-filled
 * without reads), issues no wgmma and stores nothing.
 *
 * B by multicast: both CTAs need the same W_e[n0 .. n0 + BN) tile; CTA r
 * loads rows [r * BN / 2, (r + 1) * BN / 2) of it (a TMA box of BN / 2
 * rows) with .multicast::cluster, ctaMask 0b11, into the same offset of both
 * CTAs' stage (a 1024-byte multiple: the 128B swizzle's pattern follows the
 * shared address, so the halves form the layout one whole box would), each
 * completing on the full barrier at the same offset in each CTA. Each CTA's
 * full barrier therefore expects the whole B_BYTES (+ its own A_BYTES in
 * GEMM 2) from one local expect_tx arrive (+ the gather's 128 arrivals in
 * GEMM 1). A partner's half may land before the local expect_tx: the
 * transaction count goes negative within the phase, which cannot complete
 * before the local arrive (pending arrivals).
 *
 * Release: a stage may be overwritten only when both CTAs' consumers are
 * done with it (each CTA writes half of the other's B). Every consumer warp
 * arrives on the empty barrier of both CTAs (its own locally, the partner's through mapa + mbarrier.arrive
 * .shared::cluster): empty counts 2 x 8. A producer waits on
 * its own empty barrier only; a partner's multicast for use it of stage s
 * is issued after both consumers released use it - ST, so it never lands in
 * a full-barrier phase still open (the counting argument of the old kernel,
 * per CTA, with the partner's writes ordered by the shared empty barrier).
 * Both CTAs walk the same work items, so they run the same number of K
 * steps and stage uses (it) in the same order: the parities agree.
 *
 * Cluster barriers: barrier.cluster arrive + wait after the mbarrier init
 * (fence.mbarrier_init.release.cluster), before any remote arrive or
 * multicast; and at the very end, by every thread (no early return of the
 * producer's idle threads), so that no CTA exits while its partner may
 * still arrive on its barriers. Every mbarrier wait gives up after ~2^26
 * polls and sets kpt_moe_ffn_sm90_mc_hung (this kernel's own flag); the
 * epilogue then writes NaN, which the checks catch, instead of hanging.
 * (The final cluster barrier waits unbounded, but each CTA reaches it in
 * bounded time since all its mbarrier waits are bounded.)
 *
 * Gather (GEMM 1): the 128 token indices of a tile are read from src_row
 * once per tile by the producer warpgroup into shared memory (tok[2][128],
 * double-buffered by tile parity; one named barrier of the 128 producer
 * threads per tile orders write before reads, and a buffer is rewritten
 * only two tiles later, after every producer thread passed the barrier of
 * the tile between), not re-read from global memory every K step; -1 marks
 * rows past the expert's end (zero-filled, no read).
 *
 * Tiles: BN 256 with 4 stages, BN 128 with 6 (moe_ffn_sm90.cu's ffn_cfg;
 * BN from moe_sm90_pick_bn, moe_ffn_sm90_host.cuh; shared memory + 1 KiB of token indices + pp[257] + 18 KiB of
 * epilogue staging; with TST 16 KiB, 1024-byte aligned); B's tensor map
 * has boxes of BN / 2 rows. Registers (ptxas -v, sm_90a, CUDA 13): 168 at
 * entry in all eight instantiations (setmaxnreg: producer 40, consumers
 * 232); 0 bytes of spills in seven, 8 in <256, GATHER, !TST> (as before
 * the TMA store; the unclustered kernel's same instantiation spills 8 too;
 * not the GELU's overlap: fencing every 2 or 4 GELU pairs, 32-bit shared
 * addresses or the swizzled staging layout leave 4 to 8). The empty tile of rank 1 is a
 * branch of its own in the consumers (waits and releases only): with the
 * check inside the K loop, ptxas injected warpgroup waits (C7517).
 *
 * Epilogue (both GEMMs): each consumer warpgroup writes its 64 rows 64
 * columns at a time into a staging tile (bf16, rows 144 bytes apart: no
 * bank conflicts either way), then stores whole 128-byte row pieces, 16
 * bytes a thread, rows past the expert's end skipped; two named barriers of
 * the warpgroup per pass. A box store alone cannot do it: at an expert's
 * last, partial tile a box would also write the next expert's first rows.
 *
 * TMA store (template TST; the default; KPT_MOE_MC_TMA_STORE=0, read once
 * per process, goes back to the row stores above): the epilogue goes warp by warp, without the
 * warpgroup's barriers. Each warp writes its 16 rows of a pass's 64
 * columns into its own 2 KiB of the staging tile (dense 128-byte rows,
 * 1024-byte aligned, chunk ch of row r at ch ^ (r & 7), the 128B swizzle:
 * still no bank conflicts); where all 16 rows are the expert's (r0 + 16 <=
 * offsets[e + 1]) lane 0 stores them as one 64 x 16 box
 * (cp.async.bulk.tensor.2d.global.shared::cta.bulk_group, one bulk group
 * a pass) through an output map with the 128B swizzle (hb: rows x ffn, yb:
 * rows x hidden; encoded per call, only with TST), else the warp stores
 * 128-byte row pieces from the same layout, rows past the end skipped.
 * Order per pass: lane 0 waits for its last box's shared-memory reads
 * (cp.async.bulk.wait_group.read 0), __syncwarp (also: the last pass's row
 * reads are done); the writes; each lane's fence.proxy.async.shared::cta
 * (generic writes before the async proxy's reads); __syncwarp; the box.
 * Lane 0 waits for its boxes' completion (wait_group 0) before the final
 * cluster barrier. One staging tile a warp: the wait for a box's reads is
 * in each pass (a second one does not fit beside BN 256's 4 stages: 1 KiB
 * over 227 KiB). The hung flag's NaN goes through the same writes. The
 * !TST kernels' PTX is the same as before (but for the unused map
 * parameter). Measured (scripts/gpu/kernels_diag.sh with MOE_TMA=1, a
 * fresh H200, 2026-11-29): kpt-attn-moe check passes both ways (bit for bit
 * against the unclustered kernel), and the E128 layer's FFN runs at 491-493
 * TFLOP/s against 485-487 with row stores (3 interleaved rounds each).
 *
 * The protocol (pairs, odd tile counts, experts with no rows, plants, ST /
 * LAG 4 / 2 and 6 / 3) was run through a randomised CPU model of both CTAs'
 * producers, 8 consumer warps each and out-of-order TMA / cp.async
 * completions: no deadlock, no write into a stage a consumer still reads,
 * no transaction landing in the wrong phase over 2000 random cases; the
 * model catches a local-only release (overwrites) and LAG = ST - 1
 * (deadlock): bench/kernels/moe_mc_protocol.py, run by
 * tests/cli/test_moe_mc_protocol.sh (400 cases and both planted bugs).
 *
 * --plant PCT: PCT% more work items (pairs x column tiles), each a real item
 * done again by both CTAs: whole pairs, output bit-identical.
 *
 * Measured (H200s, 2026-11-29, bench/RESULTS.md "Session 18"): the E128
 * top-8 layer 1.168x the unclustered kernel with the TMA store (15 rounds
 * with the gate's 3 ms idle gap: 3570 against 4161 us, 462 FFN TFLOP/s of
 * the layer; with row stores, "Issue 39 on fresh H200s": 1.138x, 451); the
 * seed shape 0.98-0.99x (1.15x back to back): AUTO takes this
 * kernel from 256 GFLOP of FFN work (kpt_moe_path.h). What it took (back
 * to back, kpt-attn-moe bench moe): the first version released the
 * partner's stage with mbarrier.arrive.release.cluster, a fence per
 * arrive (30% of GEMM 2's stalls, ncu) and ran 0.79x; at CTA scope 1.02x;
 * the staged epilogue took it to 1.15x, the TMA store to 1.17x (15
 * rounds with the 3 ms gap, 2026-11-29: 1.168x, 3570 us, 462 FFN TFLOP/s
 * of the layer). Not done: A is not multicast (the two CTAs have
 * different rows by design); a tile's epilogue does not overlap the next
 * tile's main loop; CUTLASS's grouped GEMMs alone still take 0.81x our
 * layer's time.
 */
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <atomic>

#include "moe_ffn_sm90.h"
#include "../attention/kpt_mma.cuh"
#include "../attention/kpt_sm90.cuh"
#include "../attention/kpt_wgmma.cuh"
#include "moe_ffn_sm90_host.cuh"

typedef __nv_bfloat16 bf16;

namespace {

constexpr int MC_MAX_EXPERTS = 256; /* moe.cu's MOE_MAX_EXPERTS: pp[] in shared memory */

template <int BN> struct mc_cfg;
template <> struct mc_cfg<256> {
	static constexpr int ST = 4;  /* stages */
	static constexpr int LAG = 2; /* gather: stages a producer thread keeps in flight before it arrives */
};
template <> struct mc_cfg<128> {
	static constexpr int ST = 6;
	static constexpr int LAG = 3;
};

/* The epilogue through shared memory (EPI), in both GEMMs: GEMM 2's alone
 * took the E128 layer from 1.02x to 1.15x the unclustered kernel, GEMM 1's
 * too 1.15x (kpt-attn-moe bench moe, back to back, H200, 2026-11-29; with
 * row stores 1.138x in 15 rounds with the gate's 3 ms gap); the staging
 * tiles (18 KiB) fit beside GEMM 1's 4 stages too.
 * A parameter so that one GEMM can go back to direct stores. */
__host__ __device__ constexpr bool mc_epi(bool gather)
{
	return gather || !gather;
}

/* Shared memory: A[ST] (BM x 128 B), B[ST] (BN x 128 B), 1024-byte
 * aligned, then the mbarriers full[ST], empty[ST], tok[2][BM], pp[E + 1],
 * and with EPI each consumer warpgroup's staging tile: 64 rows x 64
 * columns of bf16, rows 144 bytes apart (128 + 16: the accumulator writes,
 * 8 rows x 4 words a warp, fall in 32 banks; the 16-byte reads of a
 * quarter warp are one row's 128 bytes). With TST (the TMA store) each
 * warp's 16 rows are what the output tensor map's box is: dense 128-byte
 * rows, 1024-byte aligned, 16-byte chunk ch of row r at chunk ch ^ (r & 7)
 * (the 128B swizzle): the writes' 8 rows of a warp still fall in 8
 * different chunks, 32 banks, and a quarter warp's reads are still one
 * row. */
template <int BN, bool EPI = false, bool TST = false> struct mc_dims : mc_cfg<BN> {
	using C = mc_cfg<BN>;
	static constexpr int BM = 128, BK = 64, NTHREADS = 384, CLUSTER = 2;
	static constexpr int REG_PROD = 40, REG_CONS = 232;
	static constexpr int A_BYTES = BM * BK * 2;
	static constexpr int B_BYTES = BN * BK * 2;
	static constexpr int B_HALF = B_BYTES / CLUSTER; /* one CTA's multicast share */
	static constexpr int SM_B = C::ST * A_BYTES;
	static constexpr int SM_BARS = SM_B + C::ST * B_BYTES;
	static constexpr int SM_TOK = SM_BARS + 2 * C::ST * 8;
	static constexpr int SM_PP = SM_TOK + 2 * BM * 4;
	static constexpr int STG_PITCH = 64 * 2 + (TST ? 0 : 16), STG_BYTES = 64 * STG_PITCH; /* per consumer warpgroup */
	static constexpr int STG_ALIGN = TST ? 1024 : 16;
	static constexpr int SM_STG = (SM_PP + (MC_MAX_EXPERTS + 1) * 4 + STG_ALIGN - 1) & ~(STG_ALIGN - 1);
	static constexpr int SM_BYTES = SM_STG + (EPI ? 2 * STG_BYTES : 0) + 1024; /* + alignment slack */
	static_assert(C::LAG >= 1 && C::LAG <= C::ST - 2, "gather arrivals must not wait on their own release");
	static_assert(SM_BYTES <= 227 * 1024, "shared memory of one block");
	static_assert(B_HALF % 1024 == 0, "a multicast half must keep the 128B swizzle's 1024-byte pattern");
	static_assert(128 * (REG_PROD + 2 * REG_CONS) <= 65536, "setmaxnreg over the register file");
	static_assert(BN / CLUSTER <= 256, "a TMA box has at most 256 rows");
	static_assert(BN % 64 == 0, "the staged epilogue goes 64 columns at a time");
	static_assert(!TST || EPI, "the TMA store stores the staging tile");
};

struct mc_params {
	const bf16 *x;       /* GEMM 1: gathered A; NULL for GEMM 2 (A by TMA) */
	const int *src_row;  /* GEMM 1: the token of each row */
	bf16 *c;             /* output [rows][n] */
	const int *offsets, *tiles;
	int n, k, experts;
	int plant_pct;       /* --plant: PCT% more work items, each a real one done again; 0 = none */
};

} /* namespace */

/* Set when an mbarrier wait of the cluster kernel gave up (a protocol bug):
 * every block then writes NaN instead of hanging the GPU. Sticky for the
 * process; separate from the old kernel's kpt_moe_ffn_sm90_hung. */
__device__ int kpt_moe_ffn_sm90_mc_hung;

namespace {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
using namespace kpt;

__device__ __forceinline__ uint32_t mc_cluster_rank()
{
	uint32_t r;
	asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
	return r;
}
__device__ __forceinline__ uint32_t mc_cluster_id()
{
	uint32_t r;
	asm volatile("mov.u32 %0, %%clusterid.x;\n" : "=r"(r));
	return r;
}
__device__ __forceinline__ uint32_t mc_cluster_count()
{
	uint32_t r;
	asm volatile("mov.u32 %0, %%nclusterid.x;\n" : "=r"(r));
	return r;
}

/* Every thread of both CTAs: arrive (release) then wait (acquire). */
__device__ __forceinline__ void mc_cluster_sync()
{
	asm volatile("barrier.cluster.arrive.release;\n"
		     "barrier.cluster.wait.acquire;\n" ::
			     : "memory");
}

/* Arrive on the mbarrier at local offset bar in the partner CTA (rank
 * cta). The default semantics (release at CTA scope), as CUTLASS's
 * ClusterBarrier::arrive(cta_id) does: what it orders is the consumers'
 * shared-memory reads, which wgmma (the async proxy) made and wait_group
 * completed before the arrive. The first version said .release.cluster:
 * a fence per arrive, 30% of GEMM 2's stall cycles in ncu (H200,
 * 2026-11-29) and the kernel 0.78x the unclustered one. */
__device__ __forceinline__ void mc_mbar_arrive_cluster(uint32_t bar, uint32_t cta)
{
	asm volatile("{\n.reg .b32 ra;\n"
		     "mapa.shared::cluster.u32 ra, %0, %1;\n"
		     "mbarrier.arrive.shared::cluster.b64 _, [ra];\n}\n" ::"r"(bar),
		     "r"(cta)
		     : "memory");
}

/* Box (c0 = column, c1 = row) of a 2-D tensor map into offset dst of every
 * CTA in mask, each completing on its mbarrier at offset bar. */
__device__ __forceinline__ void mc_tma_load_2d_multicast(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0,
							 int c1, uint16_t mask)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		     ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
		     "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
		     : "memory");
}

/* Box (c0 = column, c1 = row) of a 2-D tensor map from the CTA's shared
 * memory at src to global memory, in this thread's current bulk group.
 * src's generic-proxy writes must be fenced (sm90_fence_proxy_async) by
 * the threads that made them and ordered before (a barrier). */
__device__ __forceinline__ void mc_tma_store_2d(const CUtensorMap *map, uint32_t src, int c0, int c1)
{
	asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(
			     (uint64_t)map),
		     "r"(c0), "r"(c1), "r"(src)
		     : "memory");
}
__device__ __forceinline__ void mc_bulk_commit()
{
	asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/* This thread's bulk groups have read their shared memory (it may be
 * written again); their global writes may still be in flight. */
__device__ __forceinline__ void mc_bulk_wait_read()
{
	asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}
/* This thread's bulk groups are complete, their writes done. */
__device__ __forceinline__ void mc_bulk_wait()
{
	asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
}

/* Consumer warpgroup c's 128 threads (named barrier 2 + c): its staging
 * tile of the epilogue. */
__device__ __forceinline__ void mc_consumer_sync(int c)
{
	asm volatile("bar.sync %0, 128;\n" ::"r"(2 + c) : "memory");
}

/* The producer warpgroup's 128 threads (named barrier 1). */
__device__ __forceinline__ void mc_producer_sync()
{
	asm volatile("bar.sync 1, 128;\n" ::: "memory");
}

struct mc_pos {
	int e, m0, m1, n0;
};

/* Work item w (pair w / n_col, column tile w % n_col) for CTA rank: its
 * expert, rows [m0, min(m0 + BM, m1)) (empty when m0 >= m1) and first
 * column. pp: the pair prefix sums in shared memory. */
template <int BN>
__device__ __forceinline__ mc_pos mc_locate(int w, int n_col, int rank, const int *pp, const mc_params &p)
{
	const int pr = w / n_col;
	int lo = 0, hi = p.experts - 1; /* the last e with pp[e] <= pr: skips experts with no rows */
	while (lo < hi) {
		const int mid = (lo + hi + 1) >> 1;
		if (pp[mid] <= pr)
			lo = mid;
		else
			hi = mid - 1;
	}
	mc_pos q;
	q.e = lo;
	q.m0 = p.offsets[lo] + (2 * (pr - pp[lo]) + rank) * mc_dims<BN, true>::BM;
	q.m1 = p.offsets[lo + 1];
	q.n0 = (w - pr * n_col) * BN;
	return q;
}

__device__ __forceinline__ int mc_plant_items(int total, int pct)
{
	return pct > 0 ? (int)(((long long)total * pct + 50) / 100) : 0;
}

__device__ __forceinline__ float mc_gelu_erf(float v)
{
	return 0.5f * v * (1.f + erff(v * 0.70710678118654752f));
}

/* pp[e] = sum over e' < e of ceil(tiles_e' / 2), e = 0..experts; by warp 0. */
__device__ __forceinline__ void mc_pair_prefix(int *pp, const int *tiles, int experts, int lane)
{
	int carry = 0;
	if (lane == 0)
		pp[0] = 0;
	for (int b = 0; b < experts; b += 32) {
		const int e = b + lane;
		int v = e < experts ? (tiles[e + 1] - tiles[e] + 1) >> 1 : 0;
#pragma unroll
		for (int o = 1; o < 32; o <<= 1) {
			const int u = __shfl_up_sync(0xffffffffu, v, o);
			if (lane >= o)
				v += u;
		}
		if (e < experts)
			pp[e + 1] = carry + v;
		carry += __shfl_sync(0xffffffffu, v, 31);
	}
}

template <int BN, bool GATHER, bool TST>
__device__ __forceinline__ void mc_body(const CUtensorMap &tma, const CUtensorMap &tmb, const CUtensorMap &tmc,
					const mc_params &p)
{
	using F = mc_dims<BN, mc_epi(GATHER), TST>;
	constexpr int BM = F::BM, BK = F::BK, ST = F::ST, LAG = F::LAG;
	extern __shared__ unsigned char smem_raw[];
	const uint32_t base = (sm90_smem_u32(smem_raw) + 1023) & ~1023u;
	const uint32_t sA = base, sB = base + F::SM_B, bars = base + F::SM_BARS;
	unsigned char *gbase = smem_raw + (base - sm90_smem_u32(smem_raw));
	int *tok = reinterpret_cast<int *>(gbase + F::SM_TOK); /* [2][BM] */
	int *pp = reinterpret_cast<int *>(gbase + F::SM_PP);
	auto full = [&](int s) { return bars + 8 * s; };
	auto empty = [&](int s) { return bars + 8 * (ST + s); };

	const int tid = threadIdx.x;
	const int wg = __shfl_sync(0xffffffffu, tid / 128, 0); /* warp-uniform role */
	const int rank = (int)mc_cluster_rank();
	const int cid = (int)mc_cluster_id(), ncl = (int)mc_cluster_count();
	const int n_col = p.n / BN, KT = p.k / BK;

	if (tid < 32)
		mc_pair_prefix(pp, p.tiles, p.experts, tid);
	if (tid == 0) {
		for (int s = 0; s < ST; s++) {
			/* GATHER: 128 producer threads + the local expect_tx arrive */
			sm90_mbar_init(full(s), GATHER ? 129 : 1);
			sm90_mbar_init(empty(s), 2 * 8); /* one arrive per consumer warp of both CTAs */
		}
		sm90_mbar_init_fence();
	}
	__syncthreads();
	mc_cluster_sync(); /* both CTAs' barriers initialised before any remote use */
	const int total = pp[p.experts] * n_col, all = total + mc_plant_items(total, p.plant_pct);

	if (wg == 0) {
		sm90_setmaxnreg_dec<F::REG_PROD>();
		if (GATHER || tid == 0) {
			/* GATHER: thread tid copies 16-byte chunk tid % 8 of rows
			 * tid / 8 + 16 j (4 whole 128-byte rows per warp instruction). */
			const int ch = tid & 7, r0 = tid >> 3;
			int it = 0, ti = 0;
			for (int w = cid; w < all; w += ncl, ti++) {
				const mc_pos q = mc_locate<BN>(w < total ? w : (w - total) % total, n_col, rank, pp, p);
				const bool live = q.m0 < q.m1;
				int *tk = tok + (ti & 1) * BM;
				if (GATHER) {
					tk[tid] = q.m0 + tid < q.m1 ? p.src_row[q.m0 + tid] : -1;
					mc_producer_sync();
				}
				for (int kt = 0; kt < KT; kt++, it++) {
					const int s = it % ST;
					if (it >= ST)
						sm90_mbar_wait(empty(s), ((it / ST) + 1) & 1, &kpt_moe_ffn_sm90_mc_hung);
					if (tid == 0) {
						sm90_mbar_expect_tx(full(s), F::B_BYTES + (!GATHER && live ? F::A_BYTES : 0));
						if (!GATHER && live)
							sm90_tma_load_2d(sA + s * F::A_BYTES, &tma, full(s), kt * BK, q.m0);
						mc_tma_load_2d_multicast(sB + s * F::B_BYTES + rank * F::B_HALF, &tmb, full(s),
									 kt * BK, q.e * p.n + q.n0 + rank * (BN / 2), 0x3);
					}
					if (GATHER) {
#pragma unroll
						for (int j = 0; j < BM / 16; j++) {
							const int r = r0 + 16 * j;
							const int tkn = tk[r];
							const bool ok = tkn >= 0;
							const bf16 *src = p.x + (long long)(ok ? tkn : 0) * p.k + kt * BK + ch * 8;
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
		}
	} else {
		sm90_setmaxnreg_inc<F::REG_CONS>();
		const int c = wg - 1, warp = (tid >> 5) & 3, lane = tid & 31;
		const bool warp_leader = lane == 0;
		/* Releases stage s in both CTAs (one arrive per warp on each). */
		auto release = [&](int s) {
			if (warp_leader) {
				sm90_mbar_arrive(empty(s));
				mc_mbar_arrive_cluster(empty(s), (uint32_t)(rank ^ 1));
			}
		};
		const uint64_t da0 = sm90_make_desc(sA + c * 64 * 128, 16, 1024);
		const uint64_t db0 = sm90_make_desc(sB, 16, 1024);
		float acc[BN / 2];
		int it = 0;
		for (int w = cid; w < all; w += ncl) {
			const mc_pos q = mc_locate<BN>(w < total ? w : (w - total) % total, n_col, rank, pp, p);
			if (q.m0 >= q.m1) {
				/* Rank 1's empty tile: B arrived for the partner; nothing
				 * to compute (a branch of its own: no wgmma in flight on
				 * this path). */
				for (int kt = 0; kt < KT; kt++, it++) {
					sm90_mbar_wait(full(it % ST), (it / ST) & 1, &kpt_moe_ffn_sm90_mc_hung);
					release(it % ST);
				}
				continue;
			}
			for (int kt = 0; kt < KT; kt++, it++) {
				const int s = it % ST;
				sm90_mbar_wait(full(s), (it / ST) & 1, &kpt_moe_ffn_sm90_mc_hung);
				sm90_wg_fence();
#pragma unroll
				for (int kk = 0; kk < BK / 16; kk++)
					wgmma_ss<false>(acc, da0 + (uint64_t)((s * F::A_BYTES + kk * 32) >> 4),
							db0 + (uint64_t)((s * F::B_BYTES + kk * 32) >> 4), (kt | kk) != 0);
				sm90_wg_commit();
				if (kt > 0) {
					sm90_wg_wait<1>();
					release((it - 1) % ST);
				}
			}
			sm90_wg_wait<0>();
			sm90_reg_fence(acc);
			release((it - 1) % ST);

			const float hung = *(volatile int *)&kpt_moe_ffn_sm90_mc_hung ? __int_as_float(0x7fffffff) : 0.f;
			/* Two accumulators as a bf16 pair (GEMM 1: GELU at the store,
			 * two values at a time: the old kernel's in-place pass over all
			 * BN / 2 spills 12 bytes here; this way 0, ptxas -v). */
			auto pack2 = [&](float a, float b) {
				return GATHER ? mma_t<bf16>::pack(mc_gelu_erf(a) + hung, mc_gelu_erf(b) + hung)
					      : mma_t<bf16>::pack(a + hung, b + hung);
			};
			if (TST) {
				/* Warp by warp (no barrier of the warpgroup): 64 columns
				 * at a time, the warp's 16 rows into its 2 KiB of the
				 * staging tile, then one 64 x 16 box by lane 0 where all
				 * 16 rows are the expert's, else 128-byte row pieces
				 * (16 bytes a lane), rows past the expert's end
				 * skipped. */
				const int so = F::SM_STG + c * F::STG_BYTES + warp * 2048;
				unsigned char *stg = gbase + so;
				const int lr = lane >> 2, r0 = q.m0 + c * 64 + warp * 16;
				const bool box = r0 + 16 <= q.m1;
#pragma unroll
				for (int ps = 0; ps < BN / 64; ps++) {
					if (lane == 0)
						mc_bulk_wait_read(); /* the last box read the rows */
					__syncwarp(); /* and the last pass's row reads are done */
#pragma unroll
					for (int h = 0; h < 2; h++) {
#pragma unroll
						for (int jj = 0; jj < 8; jj++) {
							const int j = 8 * ps + jj;
							*reinterpret_cast<uint32_t *>(stg + (lr + 8 * h) * 128 +
										      ((jj ^ lr) << 4) + 4 * (lane & 3)) =
								pack2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
						}
						sm90_reg_fence(acc); /* as below */
					}
					if (box)
						sm90_fence_proxy_async(); /* this lane's writes, to the TMA's proxy */
					__syncwarp();
					if (box) {
						if (lane == 0) {
							mc_tma_store_2d(&tmc, base + so, q.n0 + 64 * ps, r0);
							mc_bulk_commit();
						}
						continue;
					}
#pragma unroll
					for (int i = 0; i < 4; i++) {
						const int row = 4 * i + (lane >> 3), ch = lane & 7;
						if (r0 + row < q.m1)
							*reinterpret_cast<uint4 *>(p.c + (long long)(r0 + row) * p.n + q.n0 +
										   64 * ps + 8 * ch) =
								*reinterpret_cast<const uint4 *>(stg + row * 128 +
												 ((ch ^ (row & 7)) << 4));
					}
				}
			} else if (mc_epi(GATHER)) {
				/* 64 columns at a time: the warpgroup's accumulators into
				 * its staging tile, then whole 128-byte row pieces to
				 * global memory (16 bytes a thread, a quarter warp a row),
				 * rows past the expert's end skipped. */
				unsigned char *stg = gbase + F::SM_STG + c * F::STG_BYTES;
				const int t = tid & 127, rl = warp * 16 + (lane >> 2);
#pragma unroll
				for (int ps = 0; ps < BN / 64; ps++) {
					mc_consumer_sync(c); /* the last pass's reads are done */
#pragma unroll
					for (int h = 0; h < 2; h++) {
#pragma unroll
						for (int jj = 0; jj < 8; jj++) {
							const int j = 8 * ps + jj;
							*reinterpret_cast<uint32_t *>(stg + (rl + 8 * h) * F::STG_PITCH +
										      16 * jj + 4 * (lane & 3)) =
								pack2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
						}
						/* 8 GELU pairs at a time: the scheduler would
						 * overlap all of a pass's and spill */
						sm90_reg_fence(acc);
					}
					mc_consumer_sync(c);
#pragma unroll
					for (int i = 0; i < 4; i++) {
						const int row = 16 * i + (t >> 3), ch = t & 7;
						const long long grow = q.m0 + c * 64 + row;
						if (grow < q.m1)
							*reinterpret_cast<uint4 *>(p.c + grow * p.n + q.n0 + 64 * ps + 8 * ch) =
								*reinterpret_cast<const uint4 *>(stg + row * F::STG_PITCH + 16 * ch);
					}
				}
			} else {
				const int rb = q.m0 + c * 64 + warp * 16 + (lane >> 2);
#pragma unroll
				for (int h = 0; h < 2; h++) {
					const int row = rb + 8 * h;
					if (row >= q.m1)
						continue;
					uint32_t *dst = reinterpret_cast<uint32_t *>(p.c + (long long)row * p.n + q.n0 +
										     2 * (lane & 3));
#pragma unroll
					for (int j = 0; j < BN / 8; j++)
						dst[4 * j] = pack2(acc[4 * j + 2 * h], acc[4 * j + 2 * h + 1]);
				}
			}
		}
		/* The box stores read shared memory and write the output: both
		 * done before the CTA may exit. */
		if (TST && lane == 0)
			mc_bulk_wait();
	}
	/* No CTA exits while its partner may still arrive on its barriers. */
	mc_cluster_sync();
}
#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

/* TST: full warps' output rows by TMA box stores through tmc (the output c
 * in boxes of 64 columns x 16 rows, 128B swizzle); without, tmc is unused. */
template <int BN, bool GATHER, bool TST>
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(384, 1)
	moe_ffn_sm90_mc_kernel(const __grid_constant__ CUtensorMap tma, const __grid_constant__ CUtensorMap tmb,
			       const __grid_constant__ CUtensorMap tmc, mc_params p)
{
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
	mc_body<BN, GATHER, TST>(tma, tmb, tmc, p);
#else
	(void)tma, (void)tmb, (void)tmc, (void)p;
#endif
}

/* ------------------------------------------------------------------ host */

std::atomic<int> mc_dev_state[kpt::SM90_MAX_DEVICES];

/* Clusters of the kernel that fit on the device at once (0: unknown);
 * probed on the first launch of each kernel, cached for the process. */
template <int BN, bool GATHER, bool TST> int mc_max_clusters(void)
{
	static std::atomic<int> cached(0);
	int n = cached.load(std::memory_order_relaxed);
	if (n > 0)
		return n;
	cudaLaunchConfig_t cfg = {};
	cfg.gridDim = dim3(2, 1, 1);
	cfg.blockDim = dim3(mc_dims<BN, mc_epi(GATHER), TST>::NTHREADS, 1, 1);
	cfg.dynamicSmemBytes = mc_dims<BN, mc_epi(GATHER), TST>::SM_BYTES;
	if (cudaOccupancyMaxActiveClusters(&n, moe_ffn_sm90_mc_kernel<BN, GATHER, TST>, &cfg) != cudaSuccess || n < 1) {
		(void)cudaGetLastError();
		return 0;
	}
	cached.store(n, std::memory_order_relaxed);
	return n;
}

/* One GEMM: C[rows][n] (rows of expert e times W_e[n][k]^T). A by TMA
 * (a_map) or gathered (p.x); b_map's box is BN / 2 rows; c_map: p.c in
 * boxes of 64 columns x 16 rows (read only with TST). */
template <int BN, bool GATHER, bool TST>
cudaError_t mc_launch(const CUtensorMap &a_map, const CUtensorMap &b_map, const CUtensorMap &c_map, const mc_params &p,
		      long long rows, int sms, cudaStream_t s)
{
	using F = mc_dims<BN, mc_epi(GATHER), TST>;
	auto kern = moe_ffn_sm90_mc_kernel<BN, GATHER, TST>;
	cudaError_t e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, F::SM_BYTES);
	if (e != cudaSuccess)
		return e;
	/* Pairs of the worst routing: sum over e of ceil(t_e / 2) <= (sum t_e
	 * + experts) / 2, sum t_e <= rows / BM + experts. */
	const long long pairs = ((rows + F::BM - 1) / F::BM + 2LL * p.experts + 1) / 2;
	const long long most = pairs * (p.n / BN);
	long long clusters = sms / 2;
	const int fit = mc_max_clusters<BN, GATHER, TST>();
	if (fit > 0 && fit < clusters)
		clusters = fit;
	if (most < clusters)
		clusters = most;
	if (clusters < 1)
		clusters = 1;
	kern<<<(unsigned)(2 * clusters), F::NTHREADS, F::SM_BYTES, s>>>(a_map, b_map, c_map, p);
	return cudaGetLastError();
}

/* KPT_MOE_MC_TMA_STORE, read once per process: 1 or unset = TMA box
 * stores where a warp's 16 rows are all its expert's (the default: E128
 * layer 1.172x the unclustered kernel against 1.150x with row stores, 3
 * interleaved rounds each, H200, 2026-11-29), 0 = row stores everywhere;
 * -1 for any other value. */
int mc_tma_store_env(void)
{
	static const int v = [] {
		const char *e = getenv("KPT_MOE_MC_TMA_STORE");
		if (!e || !*e || strcmp(e, "1") == 0)
			return 1;
		return strcmp(e, "0") == 0 ? 0 : -1;
	}();
	return v;
}

/* The kernel for (bn, gather, tst): 8 instantiations. */
template <bool TST>
cudaError_t mc_go(int bn, bool gather, const CUtensorMap &am, const CUtensorMap &bm, const CUtensorMap &cm,
		  const mc_params &p, long long rows, int sms, cudaStream_t s)
{
	if (bn == 256)
		return gather ? mc_launch<256, true, TST>(am, bm, cm, p, rows, sms, s)
			      : mc_launch<256, false, TST>(am, bm, cm, p, rows, sms, s);
	return gather ? mc_launch<128, true, TST>(am, bm, cm, p, rows, sms, s)
		      : mc_launch<128, false, TST>(am, bm, cm, p, rows, sms, s);
}

} /* namespace */

bool kpt::moe_sm90_mc_usable(void)
{
	return sm90_device_usable(mc_dev_state, (const void *)moe_ffn_sm90_mc_kernel<256, true, false>);
}

int kpt::moe_ffn_sm90_mc(const struct moe_sm90_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (!moe_sm90_mc_usable())
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "moe: the clustered wgmma FFN needs a compute capability 9.0 GPU with sm_90a code built");
	const int tst = mc_tma_store_env();
	if (tst < 0)
		return kpt_diag_set(d, KPT_E_INVAL, "moe: KPT_MOE_MC_TMA_STORE=%.40s: not 0 or 1",
				    getenv("KPT_MOE_MC_TMA_STORE"));
	/* The outputs' store maps (GEMM 1: hb, rows x ffn; GEMM 2: yb, rows x
	 * hidden), encoded only for the TMA store. */
	CUtensorMap mhc = {}, myc = {};
	if (tst && (!moe_sm90_bf16_map(&mhc, a->hb, a->rows, a->ffn, 16) ||
		    !moe_sm90_bf16_map(&myc, a->yb, a->rows, a->hidden, 16)))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "moe: the driver refuses a TMA store map of the clustered wgmma FFN");
	auto go = [&](int bn, bool gather, const CUtensorMap &am, const CUtensorMap &bm, const mc_params &p) {
		const CUtensorMap &cm = gather ? mhc : myc;
		return tst ? mc_go<true>(bn, gather, am, bm, cm, p, a->rows, a->sms, s)
			   : mc_go<false>(bn, gather, am, bm, cm, p, a->rows, a->sms, s);
	};
	return moe_sm90_ffn_run<mc_params>(a, 2, "clustered wgmma FFN", go, d);
}
