/* kpt_calibrate_probe.cu - the SM clock probe and the e4m3 fill of
 * kpt_calibrate.c.
 *
 * The clock probe: every SM busy with FP32 FMAs (8 independent chains per
 * thread, 2 blocks of 1024 threads per SM), so that the clock read is the
 * one the power controller gives a full SM load, not the idle boost NVML
 * reports (1980 MHz in every H200 session). Thread 0 of each block reads
 * clock64() (SM cycles) and %globaltimer (ns) around its loop; the host
 * takes cycles / ns of each block. */
#include <stdint.h>

#include "kpt_calibrate.h"
#include "kpt_workload.h"

#define CAL_CLOCK_ITERS 32768
#define CAL_CLOCK_THREADS 1024

static __device__ __forceinline__ unsigned long long global_ns(void)
{
	unsigned long long t;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static __global__ void __launch_bounds__(CAL_CLOCK_THREADS) cal_clock(unsigned long long *cyc_ns, int iters)
{
	float x[8];
	const float m = 0.999999f, a = 1e-7f;
	unsigned long long c0 = 0, t0 = 0;

	for (int j = 0; j < 8; j++)
		x[j] = (float)(threadIdx.x + j) * 1e-3f;
	__syncthreads();
	if (threadIdx.x == 0) {
		t0 = global_ns();
		c0 = clock64();
	}
	for (int i = 0; i < iters; i++)
#pragma unroll
		for (int j = 0; j < 8; j++)
			x[j] = fmaf(x[j], m, a);
	__syncthreads();
	if (threadIdx.x == 0) {
		unsigned long long c1 = clock64(), t1 = global_ns();

		cyc_ns[2 * blockIdx.x] = c1 - c0;
		cyc_ns[2 * blockIdx.x + 1] = t1 - t0;
	}
	/* keeps the chains: never true for these inputs (they stay in [0, 2)) */
	if (x[0] + x[1] + x[2] + x[3] + x[4] + x[5] + x[6] + x[7] < -1.0f)
		cyc_ns[0] = 0;
}

int kpt_cal_clock_run(cudaStream_t s, unsigned long long *dev_cyc_ns, int blocks, struct kpt_diag *d)
{
	cal_clock<<<blocks, CAL_CLOCK_THREADS, 0, s>>>(dev_cyc_ns, CAL_CLOCK_ITERS);
	return KPT_CUDA(d, cudaGetLastError());
}

/* Random e4m3 bytes with bit 6 clear: exponent <= 7, |x| < 2, never NaN
 * (0x7F/0xFF) and never all zeros (which would draw less power). */
static __global__ void fill_e4m3(uint8_t *p, size_t n, unsigned long long seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		unsigned long long x = seed + i * 0x9E3779B97F4A7C15ull;

		x = (x ^ (x >> 31)) * 0xBF58476D1CE4E5B9ull;
		x ^= x >> 29;
		p[i] = (uint8_t)(x & 0xBF);
	}
}

int kpt_cal_fill_e4m3(void *p, size_t n, unsigned long long seed, cudaStream_t s, struct kpt_diag *d)
{
	fill_e4m3<<<1024, 256, 0, s>>>((uint8_t *)p, n, seed);
	return KPT_CUDA(d, cudaGetLastError());
}
