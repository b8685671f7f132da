/* kpt_sm90.cuh - Hopper building blocks shared by the sm_90a kernels
 * (attention_fwd_sm90.cu, attention_fwd_sm90_fp8.cu, kernels/moe/moe_ffn_sm90.cu): mbarriers,
 * 2-D and 4-D TMA loads, wgmma fences, warpgroup register budgets, shared-memory matrix
 * descriptors, exp2, the attention plants' dithered tile count and the
 * attention kernels' 4-D tensor maps.
 *
 * Needs sm_90a: include only from code compiled for it and use only under
 * __CUDA_ARCH_FEAT_SM90_ALL (the host helpers tma_encode_fn, sm90_attn_map16 and
 * sm90_device_usable excepted).
 * Contracts:
 *   - mbar_wait spins at most ~2^26 polls (seconds), then sets *hung and
 *     returns: a pipeline bug then shows as NaN outputs (the caller turns
 *     *hung into NaN), never as a hung GPU.
 *   - make_desc: 128B swizzle, K-major operand in rows of 128 bytes, 8-row
 *     atoms SBO = 1024 bytes apart; the tile base must be 1024-byte aligned.
 */
#ifndef KPT_SM90_CUH
#define KPT_SM90_CUH

#include <cuda_runtime.h>
#include <cudaTypedefs.h> /* CUtensorMap, PFN_cuTensorMapEncodeTiled (headers only: no libcuda link) */
#include <stdint.h>

#include <atomic>

namespace kpt {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ uint32_t sm90_smem_u32(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void sm90_mbar_init(uint32_t bar, uint32_t count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void sm90_mbar_expect_tx(uint32_t bar, uint32_t bytes)
{
	asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void sm90_mbar_arrive(uint32_t bar)
{
	asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void sm90_mbar_wait(uint32_t bar, uint32_t parity, int *hung)
{
	uint32_t done, spins = 0;
	do {
		asm volatile("{\n.reg .pred p;\n"
			     "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
			     "selp.u32 %0, 1, 0, p;\n}\n"
			     : "=r"(done)
			     : "r"(bar), "r"(parity)
			     : "memory");
		/* Bounded: __trap() here would make ptxas cap the consumers
		 * at the entry register limit and spill. */
		if (++spins == (1u << 26)) {
			*hung = 1;
			break;
		}
	} while (!done);
}

/* Box at (c0, c1, c2, c3) of a 4-D tensor map into dst (1024-byte aligned),
 * completing on bar (the attention forwards' (d, s, h, b) maps). */
__device__ __forceinline__ void sm90_tma_load_4d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1,
						 int c2, int c3)
{
	asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
		     "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
		     : "memory");
}

/* 2^x, MUFU.EX2 (flushes denormals). */
__device__ __forceinline__ float sm90_ex2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

/* Planted slowdown: extra tiles this block adds to its n for pct% more
 * work; the fraction is dithered over the blocks (floor or ceil), so the
 * grid adds pct% even when n is small; 0 when pct is 0. */
__device__ __forceinline__ int sm90_plant_extra(int n, int pct)
{
	const unsigned blk = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
	return (n * pct + (int)(blk * 37u % 100u)) / 100;
}

/* Box (c0 = column, c1 = row) of a 2-D tensor map into dst (1024-byte
 * aligned for the 128B swizzle), completing on bar. */
__device__ __forceinline__ void sm90_tma_load_2d(uint32_t dst, const CUtensorMap *map, uint32_t bar, int c0, int c1)
{
	asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
		     " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
		     "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(bar)
		     : "memory");
}

/* Orders this thread's generic-proxy shared-memory writes (st.shared, a
 * completed cp.async) before later async-proxy reads (wgmma, TMA). */
__device__ __forceinline__ void sm90_fence_proxy_async()
{
	asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ __forceinline__ void sm90_wg_fence()
{
	asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void sm90_wg_commit()
{
	asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
template <int N> __device__ __forceinline__ void sm90_wg_wait()
{
	asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

/* Pins registers after a wgmma wait: the compiler may neither read them
 * earlier nor reuse them while an async wgmma still owns them. */
template <int N> __device__ __forceinline__ void sm90_reg_fence(float (&r)[N])
{
#pragma unroll
	for (int i = 0; i < N; i++)
		asm volatile("" : "+f"(r[i])::"memory");
}
template <int N> __device__ __forceinline__ void sm90_reg_fence(uint32_t (&r)[N])
{
#pragma unroll
	for (int i = 0; i < N; i++)
		asm volatile("" : "+r"(r[i])::"memory");
}

/* After the mbarrier inits of a block, before any thread uses them. */
__device__ __forceinline__ void sm90_mbar_init_fence()
{
	asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/* Warp-specialised register budgets: the producer warpgroup gives registers
 * up (dec), the consumers take them (inc); N a multiple of 8 in 24..256. */
template <int N> __device__ __forceinline__ void sm90_setmaxnreg_dec()
{
	asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N) : "memory");
}
template <int N> __device__ __forceinline__ void sm90_setmaxnreg_inc()
{
	asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N) : "memory");
}

/* Shared-memory matrix descriptor, 128B swizzle; lbo / sbo in bytes. */
__device__ __forceinline__ uint64_t sm90_make_desc(uint32_t saddr, uint32_t lbo, uint32_t sbo)
{
	return (uint64_t)((saddr & 0x3FFFF) >> 4) | ((uint64_t)(lbo >> 4) << 16) | ((uint64_t)(sbo >> 4) << 32) |
	       (1ull << 62);
}
#endif /* __CUDA_ARCH_FEAT_SM90_ALL */

/* Whether sm90_plant_extra's int arithmetic holds n tiles at pct% (host:
 * a launch refuses a plant that would overflow it). */
inline bool sm90_plant_fits(long long n, int pct)
{
	return n * pct + 99 <= 2147483647LL;
}

/* The driver's cuTensorMapEncodeTiled through the runtime (no libcuda
 * link); NULL when the driver has none. Looked up once per process. */
inline PFN_cuTensorMapEncodeTiled_v12000 tma_encode_fn(void)
{
	static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
		void *f = NULL;
		cudaDriverEntryPointQueryResult q;
		if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) !=
			    cudaSuccess ||
		    q != cudaDriverEntryPointSuccess) {
			(void)cudaGetLastError();
			f = NULL;
		}
		return (PFN_cuTensorMapEncodeTiled_v12000)f;
	}();
	return fn;
}

/* 4-D TMA map (d, s, h, b) over one 16-bit attention tensor (head dim
 * contiguous, the others at element strides ss, sh, sb): box 64 columns
 * (128 B: the 128B swizzle's widest inner box) x rows rows (at most 256),
 * 128B swizzle, rows past seq read as zeros. A dimension of extent 1 gets
 * the row stride (never used; the driver refuses zero). False when the
 * driver refuses the strides. Host only; the attention forward and
 * backward (attention_fwd_sm90.cu, attention_bwd_sm90.cu). */
inline bool sm90_attn_map16(CUtensorMap *m, const void *ptr, bool fp16, int head_dim, int seq, int heads, int batch,
			    long long ss_el, long long sh_el, long long sb_el, int rows)
{
	const cuuint64_t ss = (cuuint64_t)ss_el * 2;
	cuuint64_t dims[4] = { (cuuint64_t)head_dim, (cuuint64_t)seq, (cuuint64_t)heads, (cuuint64_t)batch };
	cuuint64_t strides[3] = { ss, heads > 1 ? (cuuint64_t)sh_el * 2 : ss, batch > 1 ? (cuuint64_t)sb_el * 2 : ss };
	cuuint32_t box[4] = { 64, (cuuint32_t)rows, 1, 1 };
	cuuint32_t estr[4] = { 1, 1, 1, 1 };
	CUresult r = tma_encode_fn()(m, fp16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 4,
				     const_cast<void *>(ptr), dims, strides, box, estr, CU_TENSOR_MAP_INTERLEAVE_NONE,
				     CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
				     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	return r == CUDA_SUCCESS;
}

/* Whether the current device runs a kernel of an sm_90a object: compute
 * capability 9.0, the kernel's image loads (cudaFuncGetAttributes fails
 * without one) and the driver encodes tensor maps. Memoised per device in
 * state[0 .. SM90_MAX_DEVICES) (0 not probed, 1 usable, -1 not; the
 * caller's static array, zero-initialised); clears any error the probe
 * raised, so that it never surfaces as a later launch's. */
constexpr int SM90_MAX_DEVICES = 64;
inline bool sm90_device_usable(std::atomic<int> *state, const void *kernel)
{
	int dev;
	if (cudaGetDevice(&dev) != cudaSuccess) {
		(void)cudaGetLastError();
		return false;
	}
	int st = dev >= 0 && dev < SM90_MAX_DEVICES ? state[dev].load(std::memory_order_relaxed) : 0;
	if (st)
		return st > 0;
	int major = 0, minor = 0;
	bool ok = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
		  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess &&
		  major == 9 && minor == 0;
	cudaFuncAttributes fa;
	ok = ok && cudaFuncGetAttributes(&fa, kernel) == cudaSuccess && fa.binaryVersion == 90;
	ok = ok && tma_encode_fn() != NULL;
	(void)cudaGetLastError();
	if (dev >= 0 && dev < SM90_MAX_DEVICES)
		state[dev].store(ok ? 1 : -1, std::memory_order_relaxed);
	return ok;
}

} /* namespace kpt */

#endif
