// window_app.cu - a program whose capture windows are known exactly, for
// window_test.sh. 10 steps, each an NVTX range "hstep" (default domain)
// around win_step<<<step + 1, 32>>>, so a kernel's grid names its step.
// In step 4, win_tail (about 50 ms) is launched last: it ends after the
// step's range closed. Options:
//   --profiler  cudaProfilerStart before step 5, cudaProfilerStop after 6
//   --sleep     sleep 3 s between step 4 and step 5
//   --overrun   step 5 ends with a second win_tail launched after its
//               win_step finished, and no synchronisation before step 6:
//               the tail runs into step 6 (the pre-roll's case)
//   --after S   then S more seconds of steps "hstep" around win_after<<<1,
//               32>>> (synchronised): the program goes on long after a
//               --steps window (the collector detaches CUPTI then)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "window_app: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(3);                                                          \
		}                                                                         \
	} while (0)

__global__ void win_step(float *x) { x[threadIdx.x] += 1.0f; }

__global__ void win_after(float *x) { x[threadIdx.x] *= 0.5f; }

__global__ void win_tail(unsigned long long ns)
{
	unsigned long long t0 = clock64();
	// clock64 counts SM cycles: ~1.5-2 GHz, so ns cycles is 25-35 ms or more
	while (clock64() - t0 < ns)
		;
}

int main(int argc, char **argv)
{
	int profiler = 0, sleep = 0, overrun = 0;
	double after = 0;
	float *x;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--profiler"))
			profiler = 1;
		else if (!strcmp(argv[i], "--sleep"))
			sleep = 1;
		else if (!strcmp(argv[i], "--overrun"))
			overrun = 1;
		else if (!strcmp(argv[i], "--after") && i + 1 < argc)
			after = atof(argv[++i]);
		else {
			fprintf(stderr, "window_app: unknown option '%s'\n", argv[i]);
			return 2;
		}
	}
	CK(cudaMalloc(&x, 32 * sizeof(float)));
	for (int step = 0; step < 10; step++) {
		if (profiler && step == 5)
			CK(cudaProfilerStart());
		nvtxRangePushA("hstep");
		win_step<<<step + 1, 32>>>(x);
		if (step == 4)
			win_tail<<<1, 1>>>(100000000ull);
		if (overrun && step == 5) {
			CK(cudaDeviceSynchronize()); /* win_step ends before step 6 */
			win_tail<<<1, 1>>>(100000000ull);
		}
		nvtxRangePop();
		if (!(overrun && step == 5))
			CK(cudaDeviceSynchronize());
		if (profiler && step == 6)
			CK(cudaProfilerStop());
		if (sleep && step == 4)
			std::this_thread::sleep_for(std::chrono::seconds(3));
	}
	if (after > 0) {
		auto t0 = std::chrono::steady_clock::now();
		long n = 0;

		while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < after) {
			nvtxRangePushA("hstep");
			win_after<<<1, 32>>>(x);
			nvtxRangePop();
			CK(cudaDeviceSynchronize());
			n++;
		}
		printf("window_app: %ld steps after\n", n);
	}
	CK(cudaFree(x));
	printf("window_app: done\n");
	return 0;
}
