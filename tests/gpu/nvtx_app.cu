// nvtx_app.cu - NVTX used the way NCCL and a training loop use it, so the
// GPU test (nvtx_test.sh) can assert the exact range path of every kernel.
//
// Two threads (own stream each) run 4 steps. Each step:
//   nvtxRangePushA("hstep")                               default domain
//     step 0: NCCL domain push, registered string "ncclCommInitRankConfig",
//             nvtx_init kernel, popped with nvtxRangePopPayload (as NCCL
//             >= 2.25 pops its communicator ranges)
//     nvtx_fwd kernel
//     NCCL domain push, registered "ncclAllReduce"; nvtx_allreduce kernel;
//             nvtxDomainRangePop(NCCL)
//     NCCL start/end range "ncclGroup" (ascii) around nvtx_group; ended
//             after the threads join, by the main thread
//     "PyTorch" domain push, registered string with the same handle value
//             as NCCL's when the tool numbers them per domain: "aten::mm";
//             nvtx_mm kernel; popped
//     step 2, thread 0 only: NCCL push "ncclLost", nvtx_lost kernel, never
//             popped (a pop the collector cannot see): nvtx_bwd of that
//             step runs under it too, and hstep's pop closes it
//     nvtx_bwd kernel
//   nvtxRangePop()
// then nvtx_outside once per thread with no range open, and thread 1 pops
// the NCCL domain with nothing open (an unmatched pop).
//
// Expected paths (nvtx_test.sh): nvtx_init 2 x hstep/ncclCommInitRankConfig,
// nvtx_fwd/nvtx_group 8 x hstep, nvtx_bwd 7 x hstep + 1 x hstep/ncclLost,
// nvtx_allreduce 8 x hstep/ncclAllReduce, nvtx_mm 8 x hstep/aten::mm,
// nvtx_lost 1 x hstep/ncclLost, nvtx_outside 2 x no range; 8 ncclGroup start/end ranges,
// all closed; meta collector.nvtx_unmatched_pops 1,
// collector.nvtx_closed_by_parent 1.
#include <cstdio>
#include <cstdlib>
#include <thread>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#define CK(call)                                                                          \
	do {                                                                              \
		cudaError_t e_ = (call);                                                  \
		if (e_ != cudaSuccess) {                                                  \
			fprintf(stderr, "nvtx_app: %s: %s\n", #call, cudaGetErrorString(e_)); \
			exit(3);                                                          \
		}                                                                         \
	} while (0)

#define STEPS 4
#define THREADS 2

__global__ void nvtx_init(float *x) { x[threadIdx.x] += 1.0f; }
__global__ void nvtx_fwd(float *x) { x[threadIdx.x] += 2.0f; }
__global__ void nvtx_allreduce(float *x) { x[threadIdx.x] += 3.0f; }
__global__ void nvtx_group(float *x) { x[threadIdx.x] += 4.0f; }
__global__ void nvtx_mm(float *x) { x[threadIdx.x] += 5.0f; }
__global__ void nvtx_lost(float *x) { x[threadIdx.x] += 6.0f; }
__global__ void nvtx_bwd(float *x) { x[threadIdx.x] += 7.0f; }
__global__ void nvtx_outside(float *x) { x[threadIdx.x] += 8.0f; }

static nvtxDomainHandle_t nccl, torch_dom;
static nvtxStringHandle_t s_init, s_allreduce, s_lost, s_mm;
static nvtxRangeId_t group_ids[THREADS][STEPS];

// Event attributes with a registered string (s) or an ASCII message (m).
static nvtxEventAttributes_t attr(nvtxStringHandle_t s, const char *m = nullptr)
{
	nvtxEventAttributes_t a = {};

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = m ? NVTX_MESSAGE_TYPE_ASCII : NVTX_MESSAGE_TYPE_REGISTERED;
	if (m)
		a.message.ascii = m;
	else
		a.message.registered = s;
	return a;
}

static void worker(int tid)
{
	cudaStream_t s;
	float *x;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&x, 32 * sizeof(float)));
	CK(cudaMemsetAsync(x, 0, 32 * sizeof(float), s));
	for (int step = 0; step < STEPS; step++) {
		nvtxEventAttributes_t a;

		nvtxRangePushA("hstep");
		if (step == 0) {
			uint64_t comm_hash = 0x1234 + tid;
			nvtxPayloadData_t pl = { NVTX_PAYLOAD_ENTRY_TYPE_UINT64, sizeof comm_hash, &comm_hash };

			a = attr(s_init);
			nvtxDomainRangePushEx(nccl, &a);
			nvtx_init<<<1, 32, 0, s>>>(x);
			nvtxRangePopPayload(nccl, &pl, 1);
		}
		nvtx_fwd<<<1, 32, 0, s>>>(x);
		a = attr(s_allreduce);
		nvtxDomainRangePushEx(nccl, &a);
		nvtx_allreduce<<<1, 32, 0, s>>>(x);
		nvtxDomainRangePop(nccl);
		a = attr(nullptr, "ncclGroup");
		group_ids[tid][step] = nvtxDomainRangeStartEx(nccl, &a);
		nvtx_group<<<1, 32, 0, s>>>(x);
		a = attr(s_mm);
		nvtxDomainRangePushEx(torch_dom, &a);
		nvtx_mm<<<1, 32, 0, s>>>(x);
		nvtxDomainRangePop(torch_dom);
		if (step == 2 && tid == 0) {
			a = attr(s_lost);
			nvtxDomainRangePushEx(nccl, &a);
			nvtx_lost<<<1, 32, 0, s>>>(x);
		}
		nvtx_bwd<<<1, 32, 0, s>>>(x);
		nvtxRangePop();
		CK(cudaStreamSynchronize(s));
	}
	nvtx_outside<<<1, 32, 0, s>>>(x);
	if (tid == 1)
		nvtxDomainRangePop(nccl);
	CK(cudaStreamSynchronize(s));
	CK(cudaFree(x));
	CK(cudaStreamDestroy(s));
}

int main()
{
	std::thread t[THREADS];

	CK(cudaFree(0));
	nccl = nvtxDomainCreateA("NCCL");
	torch_dom = nvtxDomainCreateA("PyTorch");
	s_init = nvtxDomainRegisterStringA(nccl, "ncclCommInitRankConfig");
	s_allreduce = nvtxDomainRegisterStringA(nccl, "ncclAllReduce");
	s_lost = nvtxDomainRegisterStringA(nccl, "ncclLost");
	s_mm = nvtxDomainRegisterStringA(torch_dom, "aten::mm");
	for (int i = 0; i < THREADS; i++)
		t[i] = std::thread(worker, i);
	for (int i = 0; i < THREADS; i++)
		t[i].join();
	// start/end ranges closed on another thread than the one that opened them
	for (int i = 0; i < THREADS; i++)
		for (int j = 0; j < STEPS; j++)
			nvtxDomainRangeEnd(nccl, group_ids[i][j]);
	CK(cudaDeviceSynchronize());
	printf("nvtx_app: done\n");
	return 0;
}
