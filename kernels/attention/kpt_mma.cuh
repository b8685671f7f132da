/* kpt_mma.cuh - warp-level tensor-core and async-copy helpers shared by the
 * attention and MoE kernels (sm_80+: mma.sync, ldmatrix, cp.async).
 *
 * Fragment layouts are those of PTX mma.m16n8k16 with 16-bit inputs and fp32
 * accumulators; g = lane / 4 and t = lane % 4:
 *   A (16x16, row): a0 (g, 2t..2t+1) a1 (g+8, 2t..) a2 (g, 2t+8..) a3 (g+8, 2t+8..)
 *   B (16x8, col):  b0 (k 2t..2t+1, n g) b1 (k 2t+8.., n g)
 *   C (16x8):       c0,c1 (g, 2t..2t+1) c2,c3 (g+8, 2t..2t+1)
 * Shared-memory tiles of 16-bit elements use rows of W 16-byte chunks with
 * chunk c of row r stored at chunk c ^ (r & 7) (W >= 8), so the 8 row
 * addresses of one ldmatrix hit 8 different bank groups.
 */
#ifndef KPT_MMA_CUH
#define KPT_MMA_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace kpt {

__device__ __forceinline__ uint32_t smem_addr(const void *p)
{
	return (uint32_t)__cvta_generic_to_shared(p);
}

/* 16-byte global->shared copy; pred false writes 16 zero bytes and reads nothing. */
__device__ __forceinline__ void cp_async16(uint32_t dst, const void *src, bool pred)
{
	int n = pred ? 16 : 0;
	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(n));
}

__device__ __forceinline__ void cp_async_commit()
{
	asm volatile("cp.async.commit_group;\n" ::);
}

template <int N> __device__ __forceinline__ void cp_async_wait()
{
	asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

__device__ __forceinline__ void ldsm_x4(uint32_t r[4], uint32_t addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

__device__ __forceinline__ void ldsm_x4_t(uint32_t r[4], uint32_t addr)
{
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
		     : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
		     : "r"(addr));
}

/* Element type traits: the mma spelling and fp32 pair packing. */
template <typename T> struct mma_t;

template <> struct mma_t<__nv_bfloat16> {
	static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
	{
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
			     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
	}
	static __device__ __forceinline__ uint32_t pack(float lo, float hi)
	{
		__nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
		return *reinterpret_cast<uint32_t *>(&v);
	}
	static __device__ __forceinline__ float2 unpack(uint32_t u)
	{
		__nv_bfloat162 v = *reinterpret_cast<__nv_bfloat162 *>(&u);
		return __bfloat1622float2(v);
	}
};

template <> struct mma_t<__half> {
	static __device__ __forceinline__ void mma(float c[4], const uint32_t a[4], uint32_t b0, uint32_t b1)
	{
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
			     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
			     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
	}
	static __device__ __forceinline__ uint32_t pack(float lo, float hi)
	{
		__half2 v = __floats2half2_rn(lo, hi);
		return *reinterpret_cast<uint32_t *>(&v);
	}
	static __device__ __forceinline__ float2 unpack(uint32_t u)
	{
		__half2 v = *reinterpret_cast<__half2 *>(&u);
		return __half22float2(v);
	}
};

__device__ __forceinline__ float fast_exp2(float x)
{
	float y;
	asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
	return y;
}

/* Element offset of (row r, 16-byte chunk c) in a swizzled tile of W chunks per row. */
template <int W> __device__ __forceinline__ int swz(int r, int c)
{
	return r * (W * 8) + ((c ^ (r & 7)) << 3);
}

/* cp.async a ROWS x D tile of 16-bit T starting at row r0 of g (rows ss
 * elements apart) into s, swizzled with W = D / 8; rows at or past seq
 * become zeros. NT threads (tid in [0, NT)) share the copies. */
template <typename T, int D, int ROWS, int NT>
__device__ __forceinline__ void load_tile(T *s, const T *g, int r0, int seq, long long ss, int tid)
{
	constexpr int W = D / 8;
#pragma unroll
	for (int i = tid; i < ROWS * W; i += NT) {
		int r = i / W, c = i % W;
		bool ok = r0 + r < seq;
		const T *src = g + (ok ? (long long)(r0 + r) * ss : 0) + c * 8;
		cp_async16(smem_addr(s + swz<W>(r, c)), src, ok);
	}
}

} /* namespace kpt */

#endif
