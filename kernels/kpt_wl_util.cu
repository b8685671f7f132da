/* kpt_wl_util.cu - helpers for workload hooks (see kpt_workload.h). */
#include <cuda_bf16.h>

#include "kpt_workload.h"

int kpt_cuda_check(struct kpt_diag *d, cudaError_t e, const char *where)
{
	if (e == cudaSuccess)
		return 0;
	kpt_diag_set(d, e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver ? KPT_E_NODEV : KPT_E_CUDA,
		     "cuda call failed: %s: %s (%s)", where, cudaGetErrorString(e), cudaGetErrorName(e));
	return d ? d->code : KPT_E_CUDA;
}

static __host__ __device__ inline uint64_t mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

uint64_t kpt_wl_subseed(uint64_t seed, uint64_t k)
{
	return mix64(seed ^ mix64(k + 1));
}

static __device__ inline float uniform_at(uint64_t seed, size_t i, float lo, float hi)
{
	float u = (float)(mix64(seed + (uint64_t)i * 0xD1B54A32D192ED03ull) >> 40) * (1.0f / 16777216.0f);

	return lo + (hi - lo) * u;
}

static __global__ void fill_f32(float *p, size_t n, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = uniform_at(seed, i, lo, hi);
}

static __global__ void fill_bf16(__nv_bfloat16 *p, size_t n, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = __float2bfloat16_rn(uniform_at(seed, i, lo, hi));
}

static unsigned fill_blocks(size_t n)
{
	size_t b = (n + 255) / 256;

	return b > 4096 ? 4096 : b < 1 ? 1 : (unsigned)b;
}

int kpt_wl_fill_f32(float *p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s, struct kpt_diag *d)
{
	if (n == 0)
		return 0;
	fill_f32<<<fill_blocks(n), 256, 0, s>>>(p, n, seed, lo, hi);
	return KPT_CUDA(d, cudaGetLastError());
}

int kpt_wl_fill_bf16(void *p, size_t n, uint64_t seed, float lo, float hi, cudaStream_t s, struct kpt_diag *d)
{
	if (n == 0)
		return 0;
	fill_bf16<<<fill_blocks(n), 256, 0, s>>>((__nv_bfloat16 *)p, n, seed, lo, hi);
	return KPT_CUDA(d, cudaGetLastError());
}

int kpt_wl_poison(void *p, size_t bytes, cudaStream_t s, struct kpt_diag *d)
{
	if (bytes == 0)
		return 0;
	return KPT_CUDA(d, cudaMemsetAsync(p, 0xFF, bytes, s));
}
