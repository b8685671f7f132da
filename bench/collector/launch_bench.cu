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

#include <cuda.h>
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

/* kpt_launch_cupti_toggle(on, how): a capture window by hand, to find what
 * returns a launch to its cost without CUPTI after a window closes
 * (scripts/gpu/windows_launch.sh, the toggle modes). how:
 *   kinds           CONCURRENT_KERNEL enabled / disabled (+ flush), what
 *                   the collector does between windows
 *   kinds-ctx       the same per context (cuptiActivityEnableContext)
 *   kinds-finalize  off also flushes and calls cuptiFinalize (CUPTI
 *                   detached; the next on registers and enables again)
 *   cbs             a subscriber's callbacks for the launch APIs (driver
 *                   cuLaunchKernel, runtime cudaLaunchKernel) enabled /
 *                   disabled one by one, what the collector does
 *   cbs-domain      off also disables both API domains (cuptiEnableDomain)
 *   cbs-unsub       off unsubscribes; on subscribes again
 *   cbs-finalize    off unsubscribes and calls cuptiFinalize
 * Returns 0, or -1 with a line on stderr naming the failed call. */
static CUpti_SubscriberHandle g_tsub;
static unsigned long long g_tcalls;

static void CUPTIAPI toggle_cb(void *, CUpti_CallbackDomain, CUpti_CallbackId, const void *)
{
	g_tcalls++;
}

#define TOGGLE_CUPTI(call)                                                                  \
	do {                                                                                \
		CUptiResult r_ = (call);                                                    \
		if (r_ != CUPTI_SUCCESS) {                                                  \
			const char *m_ = nullptr;                                           \
			cuptiGetResultString(r_, &m_);                                      \
			fprintf(stderr, "kpt-launch-bench: %s: %s\n", #call, m_ ? m_ : "?"); \
			return -1;                                                          \
		}                                                                           \
	} while (0)

/* The current context, through the runtime (no libcuda link). */
static int current_ctx(CUcontext *ctx)
{
	CUresult (*get)(CUcontext *) = nullptr;
	cudaDriverEntryPointQueryResult q;

	if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", (void **)&get, 12000, cudaEnableDefault, &q) != cudaSuccess ||
	    q != cudaDriverEntryPointSuccess || !get || get(ctx) != CUDA_SUCCESS || !*ctx) {
		fprintf(stderr, "kpt-launch-bench: cannot get the current context\n");
		return -1;
	}
	return 0;
}

extern "C" __attribute__((visibility("default"))) int kpt_launch_cupti_toggle(int on, const char *how)
{
	static int registered;
	CUcontext ctx = nullptr;

	if (!strncmp(how, "kinds", 5)) {
		if (on) {
			if (!registered)
				TOGGLE_CUPTI(cuptiActivityRegisterCallbacks(floor_request, floor_complete));
			registered = 1;
			if (!strcmp(how, "kinds-ctx")) {
				if (current_ctx(&ctx) != 0)
					return -1;
				TOGGLE_CUPTI(cuptiActivityEnableContext(ctx, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
			} else
				TOGGLE_CUPTI(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
			return 0;
		}
		if (!strcmp(how, "kinds-ctx")) {
			if (current_ctx(&ctx) != 0)
				return -1;
			TOGGLE_CUPTI(cuptiActivityDisableContext(ctx, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		} else
			TOGGLE_CUPTI(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		TOGGLE_CUPTI(cuptiActivityFlushAll(0));
		if (!strcmp(how, "kinds-finalize")) {
			TOGGLE_CUPTI(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
			TOGGLE_CUPTI(cuptiFinalize());
			registered = 0;
		}
		return 0;
	}
	if (strncmp(how, "cbs", 3) != 0) {
		fprintf(stderr, "kpt-launch-bench: unknown toggle %s\n", how);
		return -1;
	}
	if (on) {
		if (!g_tsub)
			TOGGLE_CUPTI(cuptiSubscribe(&g_tsub, toggle_cb, nullptr));
		TOGGLE_CUPTI(cuptiEnableCallback(1, g_tsub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
		TOGGLE_CUPTI(cuptiEnableCallback(1, g_tsub, CUPTI_CB_DOMAIN_RUNTIME_API,
						 CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
		return 0;
	}
	TOGGLE_CUPTI(cuptiEnableCallback(0, g_tsub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
	TOGGLE_CUPTI(cuptiEnableCallback(0, g_tsub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
	if (!strcmp(how, "cbs-domain")) {
		TOGGLE_CUPTI(cuptiEnableDomain(0, g_tsub, CUPTI_CB_DOMAIN_DRIVER_API));
		TOGGLE_CUPTI(cuptiEnableDomain(0, g_tsub, CUPTI_CB_DOMAIN_RUNTIME_API));
	} else if (!strcmp(how, "cbs-unsub") || !strcmp(how, "cbs-finalize")) {
		TOGGLE_CUPTI(cuptiUnsubscribe(g_tsub));
		g_tsub = nullptr;
		if (!strcmp(how, "cbs-finalize"))
			TOGGLE_CUPTI(cuptiFinalize());
	}
	return 0;
}

extern "C" __attribute__((visibility("default"))) unsigned long long kpt_launch_cupti_toggle_calls(void)
{
	return g_tcalls;
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
