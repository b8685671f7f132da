/* kpt_launch.h - what the kernel sources of libkptkernels share (internal). */
#ifndef KPT_LAUNCH_H
#define KPT_LAUNCH_H

#include <nvtx3/nvToolsExt.h>

#include "kpt_workload.h"

/* Streaming multiprocessors of the current device (cached per process;
 * 132 when the query fails, which the launch after it then reports). */
static inline int kpt_sm_count(void)
{
	static int n;
	int dev = 0;

	if (n == 0 && cudaGetDevice(&dev) == cudaSuccess &&
	    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess)
		n = 0;
	return n > 0 ? n : 132;
}

/* Grid-stride launches: enough blocks to fill every SM `per_sm` times, but
 * not more than the work needs. */
static inline unsigned kpt_grid_for(size_t items, unsigned threads, unsigned per_sm)
{
	size_t need = (items + threads - 1) / threads;
	size_t cap = (size_t)kpt_sm_count() * per_sm;

	return need < 1 ? 1 : need > cap ? (unsigned)cap : (unsigned)need;
}

/* Wraps one launch site in an NVTX range and checks the launch. */
#define KPT_LAUNCH(d, name, launch)                                                  \
	do {                                                                         \
		nvtxRangePushA(name);                                                \
		launch;                                                              \
		nvtxRangePop();                                                      \
		int kpt_rc_ = KPT_CUDA((d), cudaGetLastError());                     \
		if (kpt_rc_)                                                         \
			return kpt_rc_;                                              \
	} while (0)

#endif
