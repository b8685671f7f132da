/* attention_fwd.cu - FlashAttention-2 style forward attention (see kpt_attention.h).
 *
 * One block owns BR query rows of one (batch, head); each of its BR/16 warps
 * owns 16 rows, keeps its Q fragments, the fp32 output accumulator and the
 * running max / sum of its rows in registers, and walks the key tiles:
 * S = Q K^T (mma.sync m16n8k16, K through ldmatrix), mask, online softmax in
 * log2 space (exp2 of a pre-scaled score), P packed to 16-bit A fragments in
 * registers, O += P V (V through ldmatrix.trans). K and V tiles are loaded
 * with cp.async into swizzled shared memory: V(j) streams in while S(j) is
 * computed and K(j+1) while P(j) V(j) is. Nothing of size S x S touches
 * memory. Rows and keys past seq are zero-filled and masked (any seq >= 1).
 * LSE: the epilogue also stores each row's logsumexp for the backward pass;
 * a template flag of the body and a kernel of its own (attn_fwd_lse_kernel,
 * the lse pointer its own parameter), so the kernels built without it are
 * the code (PTX), and carry the names, they had before it existed (only the AUTO bf16 tiles are built with it).
 * e4m3 (KPT_ATTN_E4M3) is dispatched from here to its only kernel,
 * attention_fwd_sm90_fp8.cu, whose packed V^T kpt_attn_e4m3_pack_v (below)
 * makes.
 */
#include <math.h>

#include <atomic>

#include <nvtx3/nvToolsExt.h>

#include "kpt_attention.h"
#include "kpt_attn_path.h"
#include "kpt_mma.cuh"
/* KPT_ATTN_SM90: the build compiled attention_fwd_sm90.cu (for sm_90a; the
 * build defines it when 90 is among the CUDA architectures). Without it the
 * WGMMA variant is refused and AUTO is the mma.sync kernel everywhere. */
#if KPT_ATTN_SM90
#include "attention_fwd_sm90.h"
#endif

namespace {

using kpt::cp_async16;
using kpt::load_tile;
using kpt::smem_addr;

struct fwd_params {
	const void *q, *k, *v;
	void *o;
	long long sb, sh, ss;
	int seq;
	float scale_log2;
};

/* MT: m16 row tiles per warp (rows per warp = 16 * MT; with MT = 2 every K
 * and V fragment read from shared memory feeds two mma, halving shared-memory
 * traffic per FLOP). QREG: Q fragments stay in registers for the whole loop
 * (else they are re-read from shared memory for each key tile). DB: K and V
 * double-buffered, one barrier per key tile, K(j+1) and V(j+1) loading during
 * all of tile j (else one buffer each, V(j) loads during S(j) and K(j+1)
 * during P(j) V(j), two barriers per tile). */
template <typename T, int D, int BR, int BC, bool CAUSAL, int MT, bool QREG, bool DB, bool LSE>
__device__ __forceinline__ void attn_fwd_body(const fwd_params &p, float *lse)
{
	constexpr int NW = BR / (16 * MT);
	constexpr int NT = NW * 32;
	constexpr int W = D / 8;
	constexpr int RW = 16 * MT; /* rows per warp */
	using M = kpt::mma_t<T>;
	extern __shared__ __align__(128) unsigned char smem[];
	T *sQ = reinterpret_cast<T *>(smem);
	constexpr int NB = DB ? 2 : 1;
	T *const sK0 = sQ + BR * D;
	T *const sV0 = sK0 + NB * BC * D;

	const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
	/* Causal: the heaviest query blocks first, for a better tail. */
	const int mb = CAUSAL ? (int)(gridDim.x - 1 - blockIdx.x) : (int)blockIdx.x;
	const int m0 = mb * BR;
	const int seq = p.seq;
	const long long base = blockIdx.z * p.sb + blockIdx.y * p.sh;
	const T *gq = reinterpret_cast<const T *>(p.q) + base;
	const T *gk = reinterpret_cast<const T *>(p.k) + base;
	const T *gv = reinterpret_cast<const T *>(p.v) + base;
	T *go = reinterpret_cast<T *>(p.o) + base;

	int n_tiles = (seq + BC - 1) / BC;
	if (CAUSAL)
		n_tiles = min(n_tiles, (m0 + BR + BC - 1) / BC);

	load_tile<T, D, BR, NT>(sQ, gq, m0, seq, p.ss, tid);
	kpt::cp_async_commit();
	load_tile<T, D, BC, NT>(sK0, gk, 0, seq, p.ss, tid);
	if (DB)
		load_tile<T, D, BC, NT>(sV0, gv, 0, seq, p.ss, tid);
	kpt::cp_async_commit();
	kpt::cp_async_wait<1>();
	__syncthreads();

	const int wrow0 = warp * RW;
	uint32_t qf[MT][QREG ? D / 16 : 1][4];
	if (QREG) {
#pragma unroll
		for (int mt = 0; mt < MT; mt++)
#pragma unroll
			for (int kk = 0; kk < (QREG ? D / 16 : 1); kk++)
				kpt::ldsm_x4(qf[mt][kk], smem_addr(sQ + kpt::swz<W>(wrow0 + mt * 16 + (lane & 15),
										  kk * 2 + (lane >> 4))));
	}

	float acc[MT][D / 8][4];
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
#pragma unroll
		for (int i = 0; i < D / 8; i++)
			acc[mt][i][0] = acc[mt][i][1] = acc[mt][i][2] = acc[mt][i][3] = 0.f;
	float mrow[MT][2], lrow[MT][2];
#pragma unroll
	for (int mt = 0; mt < MT; mt++)
		mrow[mt][0] = mrow[mt][1] = -INFINITY, lrow[mt][0] = lrow[mt][1] = 0.f;
	const float sl2 = p.scale_log2;
	const int qrow = m0 + wrow0 + (lane >> 2); /* rows qrow + 16 mt + 8 h */

	for (int j = 0; j < n_tiles; j++) {
		const int kv0 = j * BC;
		T *const sK = sK0 + (j % NB) * BC * D;
		T *const sV = sV0 + (j % NB) * BC * D;
		kpt::cp_async_wait<0>();
		/* K(j) (and with DB V(j)) landed; every warp is done with V(j-1), so
		 * with DB the other buffers are free. */
		__syncthreads();
		if (DB) {
			if (j + 1 < n_tiles) {
				T *const nK = sK0 + ((j + 1) % NB) * BC * D, *const nV = sV0 + ((j + 1) % NB) * BC * D;
				load_tile<T, D, BC, NT>(nK, gk, kv0 + BC, seq, p.ss, tid);
				load_tile<T, D, BC, NT>(nV, gv, kv0 + BC, seq, p.ss, tid);
				kpt::cp_async_commit();
			}
		} else {
			load_tile<T, D, BC, NT>(sV, gv, kv0, seq, p.ss, tid);
			kpt::cp_async_commit();
		}

		/* Warps whose rows all precede this tile have nothing to add. */
		const bool active = !CAUSAL || kv0 <= m0 + wrow0 + RW - 1;
		float sc[MT][BC / 8][4];
		if (active) {
#pragma unroll
			for (int mt = 0; mt < MT; mt++)
#pragma unroll
				for (int i = 0; i < BC / 8; i++)
					sc[mt][i][0] = sc[mt][i][1] = sc[mt][i][2] = sc[mt][i][3] = 0.f;
#pragma unroll
			for (int kk = 0; kk < D / 16; kk++) {
				uint32_t qa[MT][4];
#pragma unroll
				for (int mt = 0; mt < MT; mt++) {
					if (QREG) {
#pragma unroll
						for (int r = 0; r < 4; r++)
							qa[mt][r] = qf[mt][QREG ? kk : 0][r];
					} else {
						kpt::ldsm_x4(qa[mt], smem_addr(sQ + kpt::swz<W>(wrow0 + mt * 16 + (lane & 15),
												 kk * 2 + (lane >> 4))));
					}
				}
#pragma unroll
				for (int nn = 0; nn < BC / 16; nn++) {
					uint32_t b[4];
					kpt::ldsm_x4(b, smem_addr(sK + kpt::swz<W>(nn * 16 + (lane & 7) + ((lane >> 4) << 3),
									       kk * 2 + ((lane >> 3) & 1))));
#pragma unroll
					for (int mt = 0; mt < MT; mt++) {
						M::mma(sc[mt][2 * nn], qa[mt], b[0], b[1]);
						M::mma(sc[mt][2 * nn + 1], qa[mt], b[2], b[3]);
					}
				}
			}
			const bool tail = kv0 + BC > seq;
			const bool diag = CAUSAL && kv0 + BC - 1 > m0 + wrow0;
			if (tail || diag) {
#pragma unroll
				for (int mt = 0; mt < MT; mt++)
#pragma unroll
					for (int nt = 0; nt < BC / 8; nt++)
#pragma unroll
						for (int e = 0; e < 4; e++) {
							int col = kv0 + nt * 8 + 2 * (lane & 3) + (e & 1);
							int row = qrow + mt * 16 + (e >> 1) * 8;
							if (col >= seq || (CAUSAL && col > row))
								sc[mt][nt][e] = -INFINITY;
						}
			}
			/* Online softmax: new max, rescale the old sum and output. */
#pragma unroll
			for (int mt = 0; mt < MT; mt++) {
				float mx[2] = { -INFINITY, -INFINITY };
#pragma unroll
				for (int nt = 0; nt < BC / 8; nt++) {
					mx[0] = fmaxf(mx[0], fmaxf(sc[mt][nt][0], sc[mt][nt][1]));
					mx[1] = fmaxf(mx[1], fmaxf(sc[mt][nt][2], sc[mt][nt][3]));
				}
				float alpha[2];
#pragma unroll
				for (int r = 0; r < 2; r++) {
					mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 1));
					mx[r] = fmaxf(mx[r], __shfl_xor_sync(0xffffffffu, mx[r], 2));
					/* A row with every key so far masked keeps max -inf: use 0
					 * as the exponent base so exp2 gives 0, not NaN. */
					float mnew = fmaxf(mrow[mt][r], mx[r] * sl2);
					float mb2 = mnew == -INFINITY ? 0.f : mnew;
					alpha[r] = kpt::fast_exp2(mrow[mt][r] - mb2);
					mrow[mt][r] = mnew;
					lrow[mt][r] *= alpha[r];
					mx[r] = mb2;
				}
#pragma unroll
				for (int nt = 0; nt < BC / 8; nt++) {
#pragma unroll
					for (int e = 0; e < 4; e++) {
						float pv = kpt::fast_exp2(fmaf(sc[mt][nt][e], sl2, -mx[e >> 1]));
						sc[mt][nt][e] = pv;
						lrow[mt][e >> 1] += pv;
					}
				}
				/* Once the running max settles (most tiles), alpha is 1 for the
				 * whole warp: skip the D/2 multiplies per row then. */
				if (__any_sync(0xffffffffu, alpha[0] != 1.f || alpha[1] != 1.f)) {
#pragma unroll
					for (int dn = 0; dn < D / 8; dn++) {
						acc[mt][dn][0] *= alpha[0];
						acc[mt][dn][1] *= alpha[0];
						acc[mt][dn][2] *= alpha[1];
						acc[mt][dn][3] *= alpha[1];
					}
				}
			}
		}

		if (!DB) {
			kpt::cp_async_wait<0>();
			__syncthreads(); /* V(j) landed; every warp is done with K(j) */
			if (j + 1 < n_tiles) {
				load_tile<T, D, BC, NT>(sK, gk, kv0 + BC, seq, p.ss, tid);
				kpt::cp_async_commit();
			}
		}
		if (active) {
#pragma unroll
			for (int kk = 0; kk < BC / 16; kk++) {
				uint32_t pa[MT][4];
#pragma unroll
				for (int mt = 0; mt < MT; mt++) {
					pa[mt][0] = M::pack(sc[mt][2 * kk][0], sc[mt][2 * kk][1]);
					pa[mt][1] = M::pack(sc[mt][2 * kk][2], sc[mt][2 * kk][3]);
					pa[mt][2] = M::pack(sc[mt][2 * kk + 1][0], sc[mt][2 * kk + 1][1]);
					pa[mt][3] = M::pack(sc[mt][2 * kk + 1][2], sc[mt][2 * kk + 1][3]);
				}
#pragma unroll
				for (int dn = 0; dn < D / 16; dn++) {
					uint32_t b[4];
					kpt::ldsm_x4_t(b, smem_addr(sV + kpt::swz<W>(kk * 16 + (lane & 7) + (((lane >> 3) & 1) << 3),
										  dn * 2 + (lane >> 4))));
#pragma unroll
					for (int mt = 0; mt < MT; mt++) {
						M::mma(acc[mt][2 * dn], pa[mt], b[0], b[1]);
						M::mma(acc[mt][2 * dn + 1], pa[mt], b[2], b[3]);
					}
				}
			}
		}
	}

	/* Normalise and stage this warp's rows in its own part of sQ (only this
	 * warp ever reads it), then store 16-byte chunks. */
	uint32_t *sQw = reinterpret_cast<uint32_t *>(sQ);
#pragma unroll
	for (int mt = 0; mt < MT; mt++) {
		float inv[2];
#pragma unroll
		for (int r = 0; r < 2; r++) {
			float l = lrow[mt][r];
			l += __shfl_xor_sync(0xffffffffu, l, 1);
			l += __shfl_xor_sync(0xffffffffu, l, 2);
			inv[r] = 1.f / l;
			/* mrow is in log2 units of the scaled score (every lane of a
			 * quad holds the same value after the shuffles above). */
			int row = m0 + wrow0 + mt * 16 + (lane >> 2) + r * 8;
			if (LSE && (lane & 3) == 0 && row < seq)
				lse[((long long)blockIdx.z * gridDim.y + blockIdx.y) * seq + row] =
					(mrow[mt][r] + __log2f(l)) * 0.6931471805599453f;
		}
#pragma unroll
		for (int dn = 0; dn < D / 8; dn++) {
#pragma unroll
			for (int r = 0; r < 2; r++) {
				int row = wrow0 + mt * 16 + (lane >> 2) + r * 8;
				int col = dn * 8 + 2 * (lane & 3);
				int off = kpt::swz<W>(row, col >> 3) + (col & 7);
				sQw[off >> 1] = M::pack(acc[mt][dn][2 * r] * inv[r], acc[mt][dn][2 * r + 1] * inv[r]);
			}
		}
	}
	__syncwarp();
#pragma unroll
	for (int i = lane; i < RW * W; i += 32) {
		int r = wrow0 + i / W, c = i % W;
		if (m0 + r < seq)
			*reinterpret_cast<uint4 *>(go + (long long)(m0 + r) * p.ss + c * 8) =
				*reinterpret_cast<const uint4 *>(sQ + kpt::swz<W>(r, c));
	}
}

/* Two kernels of one body: LSE gets its own name, so the kernels without
 * it keep the demangled names (the gate's keys) they had before it existed. */
template <typename T, int D, int BR, int BC, bool CAUSAL, int MINB, int MT, bool QREG, bool DB = false>
__global__ void __launch_bounds__(BR / (16 * MT) * 32, MINB) attn_fwd_kernel(fwd_params p)
{
	attn_fwd_body<T, D, BR, BC, CAUSAL, MT, QREG, DB, false>(p, nullptr);
}

template <typename T, int D, int BR, int BC, bool CAUSAL, int MINB, int MT, bool QREG, bool DB>
__global__ void __launch_bounds__(BR / (16 * MT) * 32, MINB) attn_fwd_lse_kernel(fwd_params p, float *lse)
{
	attn_fwd_body<T, D, BR, BC, CAUSAL, MT, QREG, DB, true>(p, lse);
}

typedef cudaError_t (*fwd_launch_fn)(const fwd_params &p, float *lse, int batch, int heads, cudaStream_t s);

template <typename T, int D, int BR, int BC, bool CAUSAL, int MINB, int MT, bool QREG, bool DB = false,
	  bool LSE = false>
cudaError_t launch_fwd(const fwd_params &p, float *lse, int batch, int heads, cudaStream_t s)
{
	constexpr int smem = (BR + (DB ? 4 : 2) * BC) * D * (int)sizeof(T);
	const dim3 grid((p.seq + BR - 1) / BR, heads, batch);
	cudaError_t e;
	if constexpr (LSE) {
		auto kern = attn_fwd_lse_kernel<T, D, BR, BC, CAUSAL, MINB, MT, QREG, DB>;
		if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) != cudaSuccess)
			return e;
		kern<<<grid, BR / (16 * MT) * 32, smem, s>>>(p, lse);
	} else {
		auto kern = attn_fwd_kernel<T, D, BR, BC, CAUSAL, MINB, MT, QREG, DB>;
		if ((e = cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem)) != cudaSuccess)
			return e;
		kern<<<grid, BR / (16 * MT) * 32, smem, s>>>(p);
	}
	return cudaGetLastError();
}

/* Launch table: [dtype][d64/d128][causal][tiles], in the order of enum
 * kpt_attn_tiles (its last column, WGMMA, stays NULL: attention_fwd_sm90.cu
 * runs it). Shapes measured slower everywhere on an H100 (128x32 with 16- or
 * 32-row warps, 2-warp 64x64 blocks; bench/RESULTS.md) were dropped. */
#define KPT_FWD_ROW(T, D, C)                                                                           \
	{                                                                                              \
		NULL, launch_fwd<T, D, 128, 64, C, 1, 1, true>, launch_fwd<T, D, 64, 64, C, 2, 1, true>,  \
			launch_fwd<T, D, 64, 128, C, 1, 1, true>, launch_fwd<T, D, 128, 64, C, 1, 2, false>, \
			launch_fwd<T, D, 128, 128, C, 1, 2, false>, launch_fwd<T, D, 256, 64, C, 1, 2, false>, \
			launch_fwd<T, D, 128, 64, C, 2, 2, false, true>,                               \
			launch_fwd<T, D, 128, 128, C, 1, 2, false, true>                               \
	}
/* fp16 builds only the AUTO tiles (compile time; bf16 carries the variants). */
#define KPT_FWD_ROW16(T, D, C)                                                                         \
	{                                                                                              \
		NULL, NULL, NULL, NULL, launch_fwd<T, D, 128, 64, C, 1, 2, false>, NULL, NULL, NULL,     \
			launch_fwd<T, D, 128, 128, C, 1, 2, false, true>                               \
	}
static const fwd_launch_fn fwd_table[2][2][2][KPT_ATTN_TILES_COUNT] = {
	{ { KPT_FWD_ROW(__nv_bfloat16, 64, false), KPT_FWD_ROW(__nv_bfloat16, 64, true) },
	  { KPT_FWD_ROW(__nv_bfloat16, 128, false), KPT_FWD_ROW(__nv_bfloat16, 128, true) } },
	{ { KPT_FWD_ROW16(__half, 64, false), KPT_FWD_ROW16(__half, 64, true) },
	  { KPT_FWD_ROW16(__half, 128, false), KPT_FWD_ROW16(__half, 128, true) } },
};

/* AUTO choice of the mma.sync kernel per head dimension (index 0: d64, 1:
 * d128), the fastest on an H100 at 2k and 16k tokens, causal or not
 * (bench/RESULTS.md, 2026-11-22); AUTO takes WGMMA before it where that runs. */
static const enum kpt_attn_tiles fwd_auto[2] = { KPT_ATTN_TILES_128x128_R32_DB, KPT_ATTN_TILES_128x64_R32 };

#ifndef KPT_ATTN_SM90
#define KPT_ATTN_SM90 0
#endif

/* The current device's compute capability as major * 10 + minor, 0 when
 * unknown (no device); read once per device (later calls cost a
 * cudaGetDevice). */
int device_cc(void)
{
	constexpr int MAXDEV = 64;
	static std::atomic<int> cc[MAXDEV]; /* 0 not read yet, else major * 10 + minor */
	int dev = 0, v = 0, major = 0, minor = 0;
	if (cudaGetDevice(&dev) != cudaSuccess)
		dev = -1;
	if (dev >= 0 && dev < MAXDEV)
		v = cc[dev].load(std::memory_order_relaxed);
	if (!v && dev >= 0) {
		if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
		    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess)
			v = major * 10 + minor;
		if (dev < MAXDEV)
			cc[dev].store(v, std::memory_order_relaxed);
	}
	(void)cudaGetLastError();
	return v;
}

/* kpt_attn_fwd_path (kpt_attn_fwd_path_e4m3 for e4m3) for a on the current
 * device. */
enum kpt_attn_path device_path(const struct kpt_attn_fwd_args *a)
{
	const int v = device_cc();
	if (a->dtype == KPT_ATTN_E4M3)
		return kpt_attn_fwd_path_e4m3(v / 10, v % 10, a->head_dim, KPT_ATTN_SM90);
	/* Unknown (no device): let the launch report the error. */
	if (!v)
		return KPT_ATTN_PATH_MMA_SYNC;
	return kpt_attn_fwd_path(v / 10, v % 10, a->head_dim, KPT_ATTN_SM90);
}

/* The e4m3 forward: the sm_90a kernel or nothing (kpt_attention.h). */
int fwd_e4m3(const struct kpt_attn_fwd_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (a->lse || (a->tiles != KPT_ATTN_TILES_AUTO && a->tiles != KPT_ATTN_TILES_128x128_WGMMA))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: e4m3 runs only the wgmma kernel, without lse (asked: tiles %d%s)",
				    (int)a->tiles, a->lse ? ", lse" : "");
	if (device_path(a) != KPT_ATTN_PATH_SM90_WGMMA)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: e4m3 needs head dim 64 or 128 on a compute capability 9.0 GPU with "
				    "the sm_90a kernel built (CUDA architecture 90)");
#if KPT_ATTN_SM90
	nvtxRangePushA("kpt_attn_fwd");
	int rc = kpt::attn_fwd_sm90_e4m3(a, s, d);
	nvtxRangePop();
	return rc;
#else
	(void)s;
	return kpt_diag_set(d, KPT_E_UNSUPPORTED, "attention forward: the wgmma kernel is not built");
#endif
}

/* kpt_attn_e4m3_pack_v: one thread per byte of vt, block (x, h, b) covers
 * 256 of the head's head_dim * vts bytes. */
__global__ void attn_e4m3_pack_v_kernel(uint8_t *vt, const uint8_t *v, int seq, int head_dim, int vts,
					long long sb, long long sh, long long ss)
{
	const long long i = blockIdx.x * 256ll + threadIdx.x;
	if (i >= (long long)head_dim * vts)
		return;
	const int x = (int)(i / vts), p = (int)(i % vts);
	const int key = (p & ~31) + kpt_attn_e4m3_vt_key(p & 31);
	const long long head = (long long)blockIdx.z * gridDim.y + blockIdx.y;
	vt[head * head_dim * vts + i] = key < seq ? v[blockIdx.z * sb + blockIdx.y * sh + key * ss + x] : 0;
}

/* The fwd_auto tiles for bf16 with the logsumexp output, [d64/d128][causal]
 * (kpt_attn_fwd_args.lse; the backward pass is bf16 only). */
static const fwd_launch_fn fwd_lse_table[2][2] = {
	{ launch_fwd<__nv_bfloat16, 64, 128, 128, false, 1, 2, false, true, true>,
	  launch_fwd<__nv_bfloat16, 64, 128, 128, true, 1, 2, false, true, true> },
	{ launch_fwd<__nv_bfloat16, 128, 128, 64, false, 1, 2, false, false, true>,
	  launch_fwd<__nv_bfloat16, 128, 128, 64, true, 1, 2, false, false, true> },
};

} /* namespace */

extern "C" enum kpt_attn_tiles kpt_attn_fwd_tiles(const struct kpt_attn_fwd_args *a)
{
	if (a->tiles != KPT_ATTN_TILES_AUTO || a->dtype == KPT_ATTN_E4M3)
		return a->dtype == KPT_ATTN_E4M3 ? KPT_ATTN_TILES_128x128_WGMMA : a->tiles;
#if KPT_ATTN_SM90
	if (!a->lse && device_path(a) == KPT_ATTN_PATH_SM90_WGMMA && kpt::attn_fwd_sm90_supports(a))
		return KPT_ATTN_TILES_128x128_WGMMA;
#endif
	return fwd_auto[a->head_dim == 128];
}

extern "C" int kpt_attn_fwd(const struct kpt_attn_fwd_args *a, cudaStream_t s, struct kpt_diag *d)
{
	if (!a || !a->q || !a->k || !a->v || !a->o)
		return kpt_diag_set(d, KPT_E_INVAL, "attention forward: a tensor pointer is NULL");
	if (a->batch < 1 || a->heads < 1 || a->seq < 1)
		return kpt_diag_set(d, KPT_E_INVAL, "attention forward: batch %d, heads %d, seq %d must be >= 1",
				    a->batch, a->heads, a->seq);
	if (a->head_dim != 64 && a->head_dim != 128)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "attention forward: head dim %d is not 64 or 128",
				    a->head_dim);
	if ((unsigned)a->dtype > KPT_ATTN_E4M3 || (unsigned)a->tiles >= KPT_ATTN_TILES_COUNT)
		return kpt_diag_set(d, KPT_E_INVAL, "attention forward: unknown dtype %d or tiles %d",
				    (int)a->dtype, (int)a->tiles);
	if (a->stride_s % 8 || a->stride_h % 8 || a->stride_b % 8 || a->stride_s < a->head_dim ||
	    (((uintptr_t)a->q | (uintptr_t)a->k | (uintptr_t)a->v | (uintptr_t)a->o) & 15) || ((uintptr_t)a->lse & 3))
		return kpt_diag_set(d, KPT_E_INVAL, "attention forward: pointers and strides must be 16-byte aligned");
	if (a->heads > 65535 || a->batch > 65535)
		return kpt_diag_set(d, KPT_E_INVAL, "attention forward: batch or heads above 65535");
	if (a->dtype == KPT_ATTN_E4M3) {
		/* 1-byte Q and K: the TMA needs 16-byte strides */
		if (a->stride_s % 16 || a->stride_h % 16 || a->stride_b % 16)
			return kpt_diag_set(d, KPT_E_INVAL, "attention forward: e4m3 strides must be multiples of 16");
		if (kpt_attn_e4m3_kernel_pick(a->e4m3_kernel, a->head_dim) == KPT_ATTN_E4M3_KERNEL_DEFAULT)
			return kpt_diag_set(d, KPT_E_INVAL, "attention forward: unknown e4m3 kernel %d", a->e4m3_kernel);
		return fwd_e4m3(a, s, d);
	}
	if (device_path(a) == KPT_ATTN_PATH_UNSUPPORTED)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: needs compute capability 8.0 or newer (mma.sync with bf16)");
	int di = a->head_dim == 128;
	enum kpt_attn_tiles t = kpt_attn_fwd_tiles(a);
	if (t == KPT_ATTN_TILES_128x128_WGMMA && a->lse)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "attention forward: the wgmma kernel does not write lse");
	if (t == KPT_ATTN_TILES_128x128_WGMMA) {
#if KPT_ATTN_SM90
		nvtxRangePushA("kpt_attn_fwd");
		int rc = kpt::attn_fwd_sm90(a, s, d);
		nvtxRangePop();
		/* AUTO falls back when the driver refuses the strides as a TMA
		 * tensor map (the only refusal left after _tiles chose it). */
		if (rc != KPT_E_UNSUPPORTED || a->tiles != KPT_ATTN_TILES_AUTO)
			return rc;
		t = fwd_auto[di];
#else
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: the wgmma kernel is not built (needs CUDA architecture 90)");
#endif
	}
	/* The mma.sync kernels have no plant: a runtime loop bound raised their
	 * register counts (ptxas -v, sm_90: 140 -> 147 and more), which would
	 * change the unplanted timings of the committed baselines. */
	if (a->plant_pct > 0)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: a planted slowdown needs the wgmma kernel (head dim 64 or 128 "
				    "on a compute capability 9.0 GPU, tiles AUTO or WGMMA)");
	if (a->lse && (a->dtype != KPT_ATTN_BF16 || t != fwd_auto[di]))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED,
				    "attention forward: lse is written only by the bf16 AUTO mma.sync tiles (asked: dtype %d, tiles %d)",
				    (int)a->dtype, (int)t);
	fwd_launch_fn fn = a->lse ? fwd_lse_table[di][a->causal ? 1 : 0] : fwd_table[a->dtype][di][a->causal ? 1 : 0][t];
	if (!fn)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "attention forward: tiles %d not built", (int)t);
	fwd_params p;
	p.q = a->q;
	p.k = a->k;
	p.v = a->v;
	kpt::attn_fwd_base_params(p, a);
	nvtxRangePushA("kpt_attn_fwd");
	cudaError_t e = fn(p, a->lse, a->batch, a->heads, s);
	nvtxRangePop();
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "attention forward: launch failed: %s", cudaGetErrorString(e));
	return 0;
}

extern "C" size_t kpt_attn_e4m3_vt_bytes(int batch, int heads, int seq, int head_dim)
{
	if (batch < 1 || heads < 1 || seq < 1 || head_dim < 1)
		return 0;
	return (size_t)batch * heads * head_dim * kpt_attn_e4m3_vt_seq(seq);
}

extern "C" int kpt_attn_e4m3_pack_v(void *vt, const void *v, int batch, int heads, int seq, int head_dim,
				    long long stride_b, long long stride_h, long long stride_s, cudaStream_t s,
				    struct kpt_diag *d)
{
	if (!vt || !v || batch < 1 || heads < 1 || seq < 1 || head_dim < 1 || batch > 65535 || heads > 65535 ||
	    stride_s < head_dim || seq > (1 << 30) - 32)
		return kpt_diag_set(d, KPT_E_INVAL, "attention e4m3 V pack: bad shape or strides");
	const int vts = kpt_attn_e4m3_vt_seq(seq);
	const long long n = (long long)head_dim * vts;
	if ((n + 255) / 256 > 0x7fffffffll)
		return kpt_diag_set(d, KPT_E_INVAL, "attention e4m3 V pack: a head of %lld bytes is too large", n);
	dim3 grid((unsigned)((n + 255) / 256), heads, batch);
	attn_e4m3_pack_v_kernel<<<grid, 256, 0, s>>>((uint8_t *)vt, (const uint8_t *)v, seq, head_dim, vts, stride_b,
						     stride_h, stride_s);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "attention e4m3 V pack: launch failed: %s", cudaGetErrorString(e));
	return 0;
}
