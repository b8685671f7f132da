// collector_app.cu - a CUDA program whose recording is known exactly; the
// GPU test records it with `kptprof record` and check_collector.c compares.
//
// What it does (check_collector.c holds the same numbers):
//   range "outer" { memcpy HtoD 1 MiB pinned on s1;
//                   range "inner" { kpt_t_add<<<64,128,0,s1>>> x3 }
//                   kpt_t_scale<<<(2,3),(32,4),1024,s2>>> x2 }
//   kpt_t_empty<<<1,1>>> x5 on the legacy default stream, no range
//   memset 65536 bytes to 0x5a on s1; memcpy DtoH 4096 bytes into pageable memory
//   mark "mark1"
//   domain "kptdom" range "dom_range" { graph (kpt_t_graph_a<<<4,64>>> ->
//                   kpt_t_graph_b<<<8,32>>>) launched 3 times on s3 }
//   fork + exec of itself with --child: kpt_t_child<<<1,32>>> x1 in range
//                   "child_range" (a second recorded process)
//   fork without exec: range "forked_nvtx" in the child, which then exits
//                   (not with --no-fork: Nsight Compute spins in such a child)
//   --big (for the counters test; first argument, or after --no-fork): at the
//   end evict_l2 reads a 64 MiB buffer (dirty lines of the memsets before
//   are written back during it, and L2 then holds clean lines only), then
//   kpt_t_touch reads another 64 MiB and kpt_t_stream copies 256 MiB, so
//   their DRAM bytes are their own and not what an earlier operation left in
//   L2 (Nsight Compute flushes caches before each kernel; kptprof's pass
//   does not)
//   sleep 300 ms so the 10 ms NVML sampler has samples
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "collector_app: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(3);                                                          \
		}                                                                         \
	} while (0)

__global__ void kpt_t_add(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

__global__ void kpt_t_scale(float *x, float s)
{
	extern __shared__ float sh[];
	int i = threadIdx.y * blockDim.x + threadIdx.x;
	sh[i % 256] = s;
	__syncthreads();
	x[(blockIdx.y * gridDim.x + blockIdx.x) * 128 + i] *= sh[i % 256];
}

__global__ void kpt_t_empty() {}

__global__ void kpt_t_graph_a(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] += 2.0f; }
__global__ void kpt_t_graph_b(float *x) { x[blockIdx.x * blockDim.x + threadIdx.x] *= 0.5f; }
__global__ void kpt_t_child(float *x) { x[threadIdx.x] = 1.0f; }

/* Reads x (for --big); not a kpt_t_ kernel: the counters test leaves it out. */
__global__ void evict_l2(const float4 *x, size_t n, float *out)
{
	float acc = 0.0f;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		acc += x[i].y + x[i].z;
	if (acc == 12345.0f)
		out[1] = acc;
}

__global__ void kpt_t_touch(const float4 *x, size_t n, float *out)
{
	float acc = 0.0f;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		acc += x[i].x + x[i].w;
	if (acc == 12345.0f) /* never, for these values: keeps the loads */
		out[0] = acc;
}

__global__ void kpt_t_stream(float4 *dst, const float4 *src, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

/* --big: see the header. */
static void big_kernels()
{
	const size_t scratch = 64u << 20, stream = 256u << 20;
	float *e, *t, *src, *dst;

	CK(cudaMalloc(&e, scratch));
	CK(cudaMalloc(&t, scratch));
	CK(cudaMalloc(&src, stream));
	CK(cudaMalloc(&dst, stream));
	CK(cudaMemset(t, 0x3f, scratch));  /* floats of about 0.75 */
	CK(cudaMemset(src, 0x41, stream)); /* about 12.1 */
	CK(cudaMemset(e, 0x3e, scratch));  /* about 0.19 */
	evict_l2<<<528, 256>>>((const float4 *)e, scratch / sizeof(float4), dst);
	kpt_t_touch<<<528, 256>>>((const float4 *)t, scratch / sizeof(float4), dst);
	kpt_t_stream<<<1056, 256>>>((float4 *)dst, (const float4 *)src, stream / sizeof(float4));
	CK(cudaDeviceSynchronize());
	CK(cudaFree(e));
	CK(cudaFree(t));
	CK(cudaFree(src));
	CK(cudaFree(dst));
}

static int child_main()
{
	float *d;

	/* The range opens before the first CUDA call: NVTX initialisation
	 * starts the collector (kpt_nvtx_inject.c, InitializeInjectionNvtx2). */
	nvtxRangePushA("child_range");
	CK(cudaMalloc(&d, 32 * sizeof(float)));
	kpt_t_child<<<1, 32>>>(d);
	CK(cudaDeviceSynchronize());
	nvtxRangePop();
	CK(cudaFree(d));
	return 0;
}

/* --reset: 4 kernels, cudaDeviceReset (the collector flushes), 3 more in a
 * new context. */
static int reset_main()
{
	for (int i = 0; i < 4; i++)
		kpt_t_empty<<<1, 1>>>();
	CK(cudaDeviceReset());
	for (int i = 0; i < 3; i++)
		kpt_t_empty<<<1, 1>>>();
	CK(cudaDeviceSynchronize());
	return 0;
}

/* --wait: 10 kernels, then "ready" on stdout and sleep until a signal
 * ends the process (the collector must flush on SIGTERM/SIGINT). */
static int wait_main()
{
	for (int i = 0; i < 10; i++)
		kpt_t_empty<<<1, 1>>>();
	CK(cudaDeviceSynchronize());
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	const size_t big = 1 << 20;
	float *d, *h_pinned, h_page[1024];
	cudaStream_t s1, s2, s3;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	pid_t pid;
	int status;

	if (argc > 1 && strcmp(argv[1], "--child") == 0)
		return child_main();
	if (argc > 1 && strcmp(argv[1], "--reset") == 0)
		return reset_main();
	if (argc > 1 && strcmp(argv[1], "--wait") == 0)
		return wait_main();
	int no_fork = argc > 1 && strcmp(argv[1], "--no-fork") == 0;
	int big_run = argc > 1 + no_fork && strcmp(argv[1 + no_fork], "--big") == 0;
	CK(cudaMalloc(&d, big));
	CK(cudaMallocHost(&h_pinned, big));
	memset(h_pinned, 0, big);
	CK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&s3, cudaStreamNonBlocking));

	nvtxRangePushA("outer");
	CK(cudaMemcpyAsync(d, h_pinned, big, cudaMemcpyHostToDevice, s1));
	nvtxRangePushA("inner");
	for (int i = 0; i < 3; i++)
		kpt_t_add<<<64, 128, 0, s1>>>(d, 64 * 128);
	nvtxRangePop();
	for (int i = 0; i < 2; i++)
		kpt_t_scale<<<dim3(2, 3), dim3(32, 4), 1024, s2>>>(d, 0.5f);
	nvtxRangePop();
	CK(cudaDeviceSynchronize());

	for (int i = 0; i < 5; i++)
		kpt_t_empty<<<1, 1>>>();
	CK(cudaMemsetAsync(d, 0x5a, 65536, s1));
	CK(cudaStreamSynchronize(s1));
	CK(cudaMemcpy(h_page, d, 4096, cudaMemcpyDeviceToHost));
	nvtxMarkA("mark1");

	CK(cudaStreamBeginCapture(s3, cudaStreamCaptureModeGlobal));
	kpt_t_graph_a<<<4, 64, 0, s3>>>(d);
	kpt_t_graph_b<<<8, 32, 0, s3>>>(d);
	CK(cudaStreamEndCapture(s3, &graph));
	CK(cudaGraphInstantiate(&exec, graph, 0));
	nvtxDomainHandle_t dom = nvtxDomainCreateA("kptdom");
	nvtxEventAttributes_t a;
	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = "dom_range";
	nvtxDomainRangePushEx(dom, &a);
	for (int i = 0; i < 3; i++)
		CK(cudaGraphLaunch(exec, s3));
	nvtxDomainRangePop(dom);
	CK(cudaStreamSynchronize(s3));

	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", argv[0], "--child", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "collector_app: the exec'd child failed\n");
		return 4;
	}
	pid = no_fork ? 0 : fork();
	if (pid == 0 && !no_fork) {
		nvtxRangePushA("forked_nvtx");
		nvtxRangePop();
		exit(0);
	}
	if (!no_fork && (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)) {
		fprintf(stderr, "collector_app: the forked child failed\n");
		return 5;
	}
	if (big_run)
		big_kernels();
	usleep(300000);
	CK(cudaGraphExecDestroy(exec));
	CK(cudaGraphDestroy(graph));
	CK(cudaFreeHost(h_pinned));
	CK(cudaFree(d));
	printf("collector_app: done (pid %d)\n", (int)getpid());
	return 0;
}
