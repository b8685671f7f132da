// launch_bench.cu - per-launch cost of an empty kernel, for the collector
// overhead benchmark (bench/RESULTS.md, "Collector").
//
// libkptlaunch.so exports the timed loop so the same code runs plain, under
// `kptprof record`, under a raw-CUPTI floor, and from Python under
// torch.profiler (ctypes):
//   double kpt_launch_us(int n)   n launches of an empty kernel on one
//                                 stream; host us per launch spent in the
//                                 launch calls (what a tracer adds on the
//                                 launching thread; the GPU's own pace, which
//                                 follows its clock, is left out)
//   double kpt_launch_last_wall_us(void)  the last call's wall us per
//                                 launch including the final sync
//   int kpt_launch_cupti_floor(void)  enable CUPTI CONCURRENT_KERNEL and
//                                 nothing else (buffers from malloc, records
//                                 counted and dropped): the cheapest possible
//                                 kernel tracing, the floor kptprof is
//                                 compared with. 0 on success.
//   int kpt_launch_cupti_floor_all(void)  the same with every activity kind
//                                 kptprof records by default (CONCURRENT_KERNEL,
//                                 MEMCPY, MEMCPY2, MEMSET, SYNCHRONIZATION)
//   unsigned long long kpt_launch_cupti_records(void)  records seen so far
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>
#include <cupti.h>

__global__ void kpt_bench_empty() {}

static unsigned long long g_records;

static void CUPTIAPI floor_request(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 8 << 20;
	*buf = (uint8_t *)aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI floor_complete(CUcontext, uint32_t, uint8_t *buf, size_t, size_t valid)
{
	CUpti_Activity *r = nullptr;

	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		g_records++;
	free(buf);
}

/* The first n of kptprof's default activity kinds, raw: 1 is the floor. */
static int floor_enable(size_t n)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMCPY2,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	};

	if (cuptiActivityRegisterCallbacks(floor_request, floor_complete) != CUPTI_SUCCESS)
		return -1;
	for (size_t i = 0; i < n && i < sizeof kinds / sizeof kinds[0]; i++)
		if (cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS)
			return -1;
	return 0;
}

extern "C" __attribute__((visibility("default"))) int kpt_launch_cupti_floor(void)
{
	return floor_enable(1);
}

extern "C" __attribute__((visibility("default"))) int kpt_launch_cupti_floor_all(void)
{
	return floor_enable(5);
}

extern "C" __attribute__((visibility("default"))) unsigned long long kpt_launch_cupti_records(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return g_records;
}

static double g_last_wall;

extern "C" __attribute__((visibility("default"))) double kpt_launch_last_wall_us(void)
{
	return g_last_wall;
}

extern "C" __attribute__((visibility("default"))) double kpt_launch_us(int n)
{
	static cudaStream_t s;

	if (!s && cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
		return -1.0;
	cudaStreamSynchronize(s);
	auto t0 = std::chrono::steady_clock::now();
	for (int i = 0; i < n; i++)
		kpt_bench_empty<<<1, 1, 0, s>>>();
	auto t1 = std::chrono::steady_clock::now();
	if (cudaStreamSynchronize(s) != cudaSuccess)
		return -1.0;
	auto t2 = std::chrono::steady_clock::now();
	g_last_wall = std::chrono::duration<double, std::micro>(t2 - t0).count() / n;
	return std::chrono::duration<double, std::micro>(t1 - t0).count() / n;
}
