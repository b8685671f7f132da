// flood.cu - kpt-flood: as many tiny kernels per second as the GPU runs,
// for a fixed time, through CUDA graphs (one graph of N empty kernels per
// stream, relaunched), to test the collector at >= 1 million kernels/s.
//   kpt-flood [--seconds S] [--streams K] [--nodes N]
// Prints "flood seconds=... kernels=... rate_per_s=...": kernels is exact
// (graph launches x nodes), for comparing with what was recorded.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

__global__ void kpt_flood_empty() {}

int main(int argc, char **argv)
{
	double seconds = 30;
	int streams = 4, nodes = 1000;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--streams") && i + 1 < argc)
			streams = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--nodes") && i + 1 < argc)
			nodes = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: kpt-flood [--seconds S] [--streams K] [--nodes N]\n");
			return 2;
		}
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
	unsigned long long launches = 0;
	auto t0 = std::chrono::steady_clock::now();
	double el = 0;
	while (el < seconds) {
		for (int k = 0; k < streams; k++) {
			cudaGraphLaunch(ex[k], s[k]);
			launches++;
		}
		/* No explicit bound: the launch queue blocks the host when full. */
		el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	}
	cudaDeviceSynchronize();
	el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess) {
		fprintf(stderr, "kpt-flood: %s\n", cudaGetErrorString(e));
		return 1;
	}
	unsigned long long kernels = launches * (unsigned long long)nodes;
	printf("flood seconds=%.3f streams=%d nodes=%d kernels=%llu rate_per_s=%.0f\n", el, streams, nodes, kernels,
	       kernels / el);
	return 0;
}
