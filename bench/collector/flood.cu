// flood.cu - kpt-flood: as many tiny kernels per second as the machine
// runs, for a fixed time, through CUDA graphs (one graph of N empty kernels
// per stream, relaunched by one host thread per stream), to test the
// collector at >= 1 million kernels/s.
//   kpt-flood [--seconds S] [--streams K] [--nodes N] [--floor]
// --floor enables raw CUPTI CONCURRENT_KERNEL in-process (launch_bench.cu)
// to show CUPTI's own cost. Prints "flood seconds=... kernels=...
// rate_per_s=...": kernels is exact (graph launches x nodes), for comparing
// with what was recorded.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

extern "C" int kpt_launch_cupti_floor(void);
extern "C" unsigned long long kpt_launch_cupti_records(void);

__global__ void kpt_flood_empty() {}

int main(int argc, char **argv)
{
	double seconds = 30;
	int streams = 4, nodes = 1000, floor_mode = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--streams") && i + 1 < argc)
			streams = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			nodes = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--floor"))
			floor_mode = 1;
		else {
			fprintf(stderr, "usage: kpt-flood [--seconds S] [--streams K] [--nodes N] [--floor]\n");
			return 2;
		}
	}
	if (floor_mode && kpt_launch_cupti_floor() != 0) {
		fprintf(stderr, "kpt-flood: cannot enable CUPTI\n");
		return 1;
	}
	std::vector<cudaStream_t> s(streams);
	std::vector<cudaGraphExec_t> ex(streams);
	for (int k = 0; k < streams; k++) {
		cudaGraph_t g;

		cudaStreamCreateWithFlags(&s[k], cudaStreamNonBlocking);
		cudaStreamBeginCapture(s[k], cudaStreamCaptureModeThreadLocal);
		for (int i = 0; i < nodes; i++)
			kpt_flood_empty<<<1, 1, 0, s[k]>>>();
		cudaStreamEndCapture(s[k], &g);
		if (cudaGraphInstantiate(&ex[k], g, 0) != cudaSuccess) {
			fprintf(stderr, "kpt-flood: graph instantiate failed\n");
			return 1;
		}
		cudaGraphDestroy(g);
	}
	cudaDeviceSynchronize();
	std::atomic<unsigned long long> launches{0};
	auto t0 = std::chrono::steady_clock::now();
	std::vector<std::thread> th;
	for (int k = 0; k < streams; k++)
		th.emplace_back([&, k] {
			unsigned long long n = 0;
			/* The launch queue blocks the thread when full. */
			while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
				cudaGraphLaunch(ex[k], s[k]);
				n++;
			}
			launches += n;
		});
	for (auto &t : th)
		t.join();
	cudaDeviceSynchronize();
	double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		fprintf(stderr, "kpt-flood: %s\n", cudaGetErrorString(e));
		return 1;
	}
	unsigned long long kernels = launches * (unsigned long long)nodes;
	printf("flood seconds=%.3f streams=%d nodes=%d kernels=%llu rate_per_s=%.0f", el, streams, nodes, kernels,
	       kernels / el);
	if (floor_mode)
		printf(" records=%llu", kpt_launch_cupti_records());
	printf("\n");
	return 0;
}
