/* kpt_calibrate.c - `kpt-workloads --calibrate`: this GPU's ceilings, the
 * denominators of "% of ceiling" in reports and `kptprof compare`.
 *
 * copy_gbps: the registered memory.copy.512MiB workload (the same kernel
 * the suites time; bytes read + written per iteration as it declares), the
 * best of KPT_CAL_ITERS timed iterations after warm-up.
 * bf16_tflops: a cuBLASLt bf16 GEMM 8192^3 with fp32 accumulation on
 * random inputs (zeros would draw less power and flatter the clocks), the
 * best of KPT_CAL_ITERS; 2*M*N*K FLOPs.
 * Best, not median: a ceiling is what the GPU can do. Costs about a second
 * on an H100; `kptprof record` caches the result per GPU UUID.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "kpt_calibrate.h"
#include "kpt_workload.h"

#define KPT_CAL_ITERS 10
#define KPT_CAL_WARMUP 3
#define KPT_CAL_GEMM 8192
#define KPT_CAL_WORKSPACE (32u << 20)

static int lt_check(struct kpt_diag *d, cublasStatus_t st, const char *where)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return 0;
	return kpt_diag_set(d, KPT_E_CUDA, "calibration: cublasLt call failed: %s: %s", where,
			    cublasLtGetStatusString(st));
}
#define CAL_LT(d, call) lt_check((d), (call), __FILE__ ":" KPT_STR(__LINE__) ": " #call)

/* Best seconds of iters calls of fn(arg) on s, after warm-up calls. */
static int best_time(int (*fn)(void *arg, struct kpt_diag *d), void *arg, cudaStream_t s, double *best,
		     struct kpt_diag *d)
{
	cudaEvent_t ev[2 * KPT_CAL_ITERS];
	int rc = 0, made = 0;

	*best = 0;
	for (; made < 2 * KPT_CAL_ITERS && rc == 0; made++)
		rc = KPT_CUDA(d, cudaEventCreate(&ev[made]));
	if (rc < 0)
		made--;
	for (int i = 0; i < KPT_CAL_WARMUP && rc == 0; i++)
		rc = fn(arg, d);
	for (int i = 0; i < KPT_CAL_ITERS && rc == 0; i++)
		if ((rc = KPT_CUDA(d, cudaEventRecord(ev[2 * i], s))) == 0 && (rc = fn(arg, d)) == 0)
			rc = KPT_CUDA(d, cudaEventRecord(ev[2 * i + 1], s));
	if (rc == 0)
		rc = KPT_CUDA(d, cudaStreamSynchronize(s));
	for (int i = 0; i < KPT_CAL_ITERS && rc == 0; i++) {
		float ms = 0;

		if ((rc = KPT_CUDA(d, cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]))) == 0 &&
		    (*best == 0 || ms * 1e-3 < *best))
			*best = ms * 1e-3;
	}
	for (int i = 0; i < made; i++)
		cudaEventDestroy(ev[i]);
	return rc;
}

struct copy_arg {
	const struct kpt_workload *w;
	struct kpt_wl_ctx *c;
};

static int copy_once(void *arg, struct kpt_diag *d)
{
	struct copy_arg *a = arg;

	return a->w->run(a->w, a->c, d);
}

static int measure_copy(cudaStream_t s, double *gbps, struct kpt_diag *d)
{
	const struct kpt_workload *w = kpt_workload_find("memory.copy.512MiB");
	struct kpt_wl_ctx c = { .stream = s, .seed = 1 };
	struct copy_arg a = { w, &c };
	double t = 0;
	int rc;

	if (!w)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "calibration: workload 'memory.copy.512MiB' is not registered");
	if ((rc = w->setup(w, &c, d)) == 0)
		rc = best_time(copy_once, &a, s, &t, d);
	if (w->teardown)
		w->teardown(w, &c);
	*gbps = rc == 0 && t > 0 ? w->bytes / t * 1e-9 : 0;
	return rc;
}

struct gemm {
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t l;
	cublasLtMatmulAlgo_t algo;
	void *a, *b, *c, *ws;
	cudaStream_t s;
};

static int gemm_once(void *arg, struct kpt_diag *d)
{
	struct gemm *g = arg;
	float one = 1, zero = 0;

	return CAL_LT(d, cublasLtMatmul(g->lt, g->op, &one, g->a, g->l, g->b, g->l, &zero, g->c, g->l, g->c, g->l,
					&g->algo, g->ws, KPT_CAL_WORKSPACE, g->s));
}

static int measure_bf16(cudaStream_t s, double *tflops, struct kpt_diag *d)
{
	const size_t n = KPT_CAL_GEMM, elems = n * n;
	struct gemm g = { .s = s };
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	size_t wsb = KPT_CAL_WORKSPACE;
	int found = 0, rc;
	double t = 0;

	*tflops = 0;
	if ((rc = CAL_LT(d, cublasLtCreate(&g.lt))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatrixLayoutCreate(&g.l, CUDA_R_16BF, n, n, (int64_t)n))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&g.a, elems * 2))) < 0 || (rc = KPT_CUDA(d, cudaMalloc(&g.b, elems * 2))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&g.c, elems * 2))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&g.ws, KPT_CAL_WORKSPACE))) < 0 ||
	    (rc = kpt_wl_fill_bf16(g.a, elems, 1, -1, 1, s, d)) < 0 ||
	    (rc = kpt_wl_fill_bf16(g.b, elems, 2, -1, 1, s, d)) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatmulPreferenceCreate(&pref))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
								  &wsb, sizeof wsb))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatmulAlgoGetHeuristic(g.lt, g.op, g.l, g.l, g.l, g.l, pref, 1, &res, &found))) < 0)
		goto out;
	if (!found) {
		rc = kpt_diag_set(d, KPT_E_UNSUPPORTED, "calibration: cuBLASLt has no bf16 GEMM for this GPU");
		goto out;
	}
	g.algo = res.algo;
	if ((rc = best_time(gemm_once, &g, s, &t, d)) == 0 && t > 0)
		*tflops = 2.0 * (double)n * (double)n * (double)n / t * 1e-12;
out:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (g.l)
		cublasLtMatrixLayoutDestroy(g.l);
	if (g.op)
		cublasLtMatmulDescDestroy(g.op);
	if (g.lt)
		cublasLtDestroy(g.lt);
	cudaFree(g.a);
	cudaFree(g.b);
	cudaFree(g.c);
	cudaFree(g.ws);
	return rc;
}

int kpt_calibrate(cudaStream_t s, struct kpt_ceilings *out, struct kpt_diag *d)
{
	struct cudaDeviceProp p;
	const unsigned char *b = (const unsigned char *)p.uuid.bytes;
	int dev = 0, rc;

	memset(out, 0, sizeof *out);
	if ((rc = KPT_CUDA(d, cudaGetDevice(&dev))) < 0 || (rc = KPT_CUDA(d, cudaGetDeviceProperties(&p, dev))) < 0)
		return rc;
	snprintf(out->name, sizeof out->name, "%s", p.name);
	snprintf(out->uuid, sizeof out->uuid,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
	if ((rc = measure_copy(s, &out->copy_gbps, d)) < 0)
		return rc;
	return measure_bf16(s, &out->bf16_tflops, d);
}
