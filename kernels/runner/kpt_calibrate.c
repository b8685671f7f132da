/* kpt_calibrate.c - `kpt-workloads --calibrate`, and each run of a suite
 * recording: this GPU's ceilings (kpt_calibrate.h).
 *
 * The denominators of "% of ceiling" in reports and `kptprof compare`:
 * copy_gbps, the registered memory.copy.512MiB workload (the kernel the
 * suites time), and bf16_tflops, a cuBLASLt bf16 GEMM 8192^3 with fp32
 * accumulation on random inputs (zeros would draw less power and flatter
 * the clocks); each the best of KPT_CAL_ITERS timed iterations.
 *
 * The probes of the decision rule's calibration (docs/decision-rule.md,
 * "Calibration"): the median of KPT_CAL_ITERS iterations, each after the
 * suite's idle gap, of a device-to-device cudaMemcpyAsync (the driver's
 * copy, not ours: a pull request that slows our copy kernel must not also
 * lower the ceiling the rule divides it by), the same bf16 GEMM, an e4m3
 * GEMM 8192^3 (cuBLASLt, TN, bf16 out) and the SM clock under an FMA load
 * (kpt_calibrate_probe.cu). About a second on an H100.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublasLt.h>

#include "kpt_calibrate.h"
#include "kpt_stats.h"
#include "kpt_workload.h"

#define KPT_CAL_ITERS 10
#define KPT_CAL_WARMUP 3
#define KPT_CAL_GEMM 8192
#define KPT_CAL_WORKSPACE (32u << 20)
#define KPT_CAL_COPY ((size_t)512 << 20)

static int lt_check(struct kpt_diag *d, cublasStatus_t st, const char *where)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return 0;
	return kpt_diag_set(d, KPT_E_CUDA, "calibration: cublasLt call failed: %s: %s", where,
			    cublasLtGetStatusString(st));
}
#define CAL_LT(d, call) lt_check((d), (call), __FILE__ ":" KPT_STR(__LINE__) ": " #call)

/* Seconds of KPT_CAL_ITERS calls of fn(arg) on s after warm-up calls: the
 * best into *best, the median into *med (may be NULL); with settle_us > 0
 * the GPU idles that long before each timed call, as the suite's
 * iterations do under `--settle-us`. */
static int time_calls(int (*fn)(void *arg, struct kpt_diag *d), void *arg, cudaStream_t s, long settle_us,
		      double *best, double *med, struct kpt_diag *d)
{
	cudaEvent_t ev[2 * KPT_CAL_ITERS];
	double t[KPT_CAL_ITERS];
	int rc = 0, made = 0;

	*best = 0;
	if (med)
		*med = 0;
	for (; made < 2 * KPT_CAL_ITERS && rc == 0; made++)
		rc = KPT_CUDA(d, cudaEventCreate(&ev[made]));
	if (rc < 0)
		made--;
	for (int i = 0; i < KPT_CAL_WARMUP && rc == 0; i++)
		rc = fn(arg, d);
	for (int i = 0; i < KPT_CAL_ITERS && rc == 0; i++) {
		if (settle_us > 0 && (rc = KPT_CUDA(d, cudaStreamSynchronize(s))) == 0) {
			struct timespec ts = { settle_us / 1000000, (settle_us % 1000000) * 1000 };

			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		}
		if (rc == 0 && (rc = KPT_CUDA(d, cudaEventRecord(ev[2 * i], s))) == 0 && (rc = fn(arg, d)) == 0)
			rc = KPT_CUDA(d, cudaEventRecord(ev[2 * i + 1], s));
	}
	if (rc == 0)
		rc = KPT_CUDA(d, cudaStreamSynchronize(s));
	for (int i = 0; i < KPT_CAL_ITERS && rc == 0; i++) {
		float ms = 0;

		if ((rc = KPT_CUDA(d, cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]))) == 0)
			t[i] = ms * 1e-3;
	}
	for (int i = 0; i < made; i++)
		cudaEventDestroy(ev[i]);
	if (rc == 0) {
		*best = t[0];
		for (int i = 1; i < KPT_CAL_ITERS; i++)
			*best = t[i] < *best ? t[i] : *best;
		if (med)
			*med = kpt_median_f64(t, KPT_CAL_ITERS);
	}
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
		rc = time_calls(copy_once, &a, s, 0, &t, NULL, d);
	if (w->teardown)
		w->teardown(w, &c);
	*gbps = rc == 0 && t > 0 ? w->bytes / t * 1e-9 : 0;
	return rc;
}

struct gemm {
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	void *a, *b, *c, *ws;
	cudaStream_t s;
};

static int gemm_once(void *arg, struct kpt_diag *d)
{
	struct gemm *g = arg;
	float one = 1, zero = 0;

	return CAL_LT(d, cublasLtMatmul(g->lt, g->op, &one, g->a, g->la, g->b, g->lb, &zero, g->c, g->lc, g->c, g->lc,
					&g->algo, g->ws, KPT_CAL_WORKSPACE, g->s));
}

/* A GEMM n^3 with fp32 accumulation and bf16 out on random inputs: bf16
 * inputs, or e4m3 in cuBLASLt's TN form (its FP8 kernels want A
 * transposed; no scales: 1). Best and median TFLOP/s; settle_us as
 * time_calls. */
static int measure_gemm(cudaStream_t s, int fp8, long settle_us, double *best_tf, double *med_tf, struct kpt_diag *d)
{
	const size_t n = KPT_CAL_GEMM, elems = n * n, in_bytes = fp8 ? elems : elems * 2;
	const cudaDataType_t in = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF;
	const double flop = 2.0 * (double)n * (double)n * (double)n;
	struct gemm g = { .s = s };
	cublasOperation_t opt = CUBLAS_OP_T;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	size_t wsb = KPT_CAL_WORKSPACE;
	int found = 0, rc;
	double best = 0, med = 0;

	*best_tf = 0;
	if (med_tf)
		*med_tf = 0;
	if ((rc = CAL_LT(d, cublasLtCreate(&g.lt))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatmulDescCreate(&g.op, CUBLAS_COMPUTE_32F, CUDA_R_32F))) < 0 ||
	    (fp8 && (rc = CAL_LT(d, cublasLtMatmulDescSetAttribute(g.op, CUBLASLT_MATMUL_DESC_TRANSA, &opt,
								    sizeof opt))) < 0) ||
	    (rc = CAL_LT(d, cublasLtMatrixLayoutCreate(&g.la, in, n, n, (int64_t)n))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatrixLayoutCreate(&g.lb, in, n, n, (int64_t)n))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatrixLayoutCreate(&g.lc, CUDA_R_16BF, n, n, (int64_t)n))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&g.a, in_bytes))) < 0 || (rc = KPT_CUDA(d, cudaMalloc(&g.b, in_bytes))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&g.c, elems * 2))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&g.ws, KPT_CAL_WORKSPACE))) < 0)
		goto out;
	if ((rc = fp8 ? kpt_cal_fill_e4m3(g.a, elems, 1, s, d) : kpt_wl_fill_bf16(g.a, elems, 1, -1, 1, s, d)) == 0)
		rc = fp8 ? kpt_cal_fill_e4m3(g.b, elems, 2, s, d) : kpt_wl_fill_bf16(g.b, elems, 2, -1, 1, s, d);
	if (rc < 0 || (rc = CAL_LT(d, cublasLtMatmulPreferenceCreate(&pref))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
								  &wsb, sizeof wsb))) < 0 ||
	    (rc = CAL_LT(d, cublasLtMatmulAlgoGetHeuristic(g.lt, g.op, g.la, g.lb, g.lc, g.lc, pref, 1, &res, &found))) < 0)
		goto out;
	if (!found) {
		rc = kpt_diag_set(d, KPT_E_UNSUPPORTED, "calibration: cuBLASLt has no %s GEMM for this GPU",
				  fp8 ? "e4m3" : "bf16");
		goto out;
	}
	g.algo = res.algo;
	if ((rc = time_calls(gemm_once, &g, s, settle_us, &best, &med, d)) == 0 && best > 0 && med > 0) {
		*best_tf = flop / best * 1e-12;
		if (med_tf)
			*med_tf = flop / med * 1e-12;
	}
out:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	if (g.lc)
		cublasLtMatrixLayoutDestroy(g.lc);
	if (g.lb)
		cublasLtMatrixLayoutDestroy(g.lb);
	if (g.la)
		cublasLtMatrixLayoutDestroy(g.la);
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

/* The driver's device-to-device copy of KPT_CAL_COPY bytes: median GB/s,
 * read + write. */
struct memcpy_arg {
	void *dst, *src;
	cudaStream_t s;
};

static int memcpy_once(void *arg, struct kpt_diag *d)
{
	struct memcpy_arg *m = arg;

	return KPT_CUDA(d, cudaMemcpyAsync(m->dst, m->src, KPT_CAL_COPY, cudaMemcpyDeviceToDevice, m->s));
}

static int measure_memcpy(cudaStream_t s, long settle_us, double *gbps, struct kpt_diag *d)
{
	struct memcpy_arg m = { NULL, NULL, s };
	double best = 0, med = 0;
	int rc;

	*gbps = 0;
	if ((rc = KPT_CUDA(d, cudaMalloc(&m.src, KPT_CAL_COPY))) == 0 &&
	    (rc = KPT_CUDA(d, cudaMalloc(&m.dst, KPT_CAL_COPY))) == 0 &&
	    (rc = kpt_wl_fill_f32(m.src, KPT_CAL_COPY / 4, 3, -1, 1, s, d)) == 0 &&
	    (rc = time_calls(memcpy_once, &m, s, settle_us, &best, &med, d)) == 0 && med > 0)
		*gbps = 2.0 * (double)KPT_CAL_COPY / med * 1e-9;
	cudaFree(m.src);
	cudaFree(m.dst);
	return rc;
}

/* The SM clock under an all-SM FMA load, MHz: per call the mean over
 * blocks of cycles / ns, then the median over calls. */
struct clock_arg {
	unsigned long long *dev, *host;
	int blocks;
	double mhz[KPT_CAL_WARMUP + KPT_CAL_ITERS];
	int n;
	cudaStream_t s;
};

static int clock_once(void *arg, struct kpt_diag *d)
{
	struct clock_arg *c = arg;
	double sum = 0;
	int rc, used = 0;

	if ((rc = kpt_cal_clock_run(c->s, c->dev, c->blocks, d)) < 0 ||
	    (rc = KPT_CUDA(d, cudaMemcpyAsync(c->host, c->dev, 2 * sizeof *c->host * (size_t)c->blocks,
					      cudaMemcpyDeviceToHost, c->s))) < 0 ||
	    (rc = KPT_CUDA(d, cudaStreamSynchronize(c->s))) < 0)
		return rc;
	for (int b = 0; b < c->blocks; b++)
		if (c->host[2 * b + 1] > 0) {
			sum += (double)c->host[2 * b] / (double)c->host[2 * b + 1] * 1e3;
			used++;
		}
	if (used && c->n < KPT_CAL_WARMUP + KPT_CAL_ITERS)
		c->mhz[c->n++] = sum / used;
	return 0;
}

static int measure_clock(cudaStream_t s, long settle_us, int sms, double *mhz, struct kpt_diag *d)
{
	struct clock_arg c = { .blocks = 2 * sms, .s = s };
	double best = 0;
	int rc;

	*mhz = 0;
	if ((rc = KPT_CUDA(d, cudaMalloc((void **)&c.dev, 2 * sizeof *c.dev * (size_t)c.blocks))) == 0 &&
	    (rc = KPT_CUDA(d, cudaMallocHost((void **)&c.host, 2 * sizeof *c.host * (size_t)c.blocks))) == 0 &&
	    (rc = time_calls(clock_once, &c, s, settle_us, &best, NULL, d)) == 0 && c.n > KPT_CAL_WARMUP)
		*mhz = kpt_median_f64(c.mhz + KPT_CAL_WARMUP, (size_t)(c.n - KPT_CAL_WARMUP));
	cudaFree(c.dev);
	cudaFreeHost(c.host);
	return rc;
}

int kpt_calibrate(cudaStream_t s, long settle_us, struct kpt_ceilings *out, struct kpt_diag *d)
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
	if ((rc = measure_copy(s, &out->copy_gbps, d)) < 0 ||
	    (rc = measure_gemm(s, 0, settle_us, &out->bf16_tflops, &out->p_bf16_tflops, d)) < 0 ||
	    (rc = measure_memcpy(s, settle_us, &out->p_copy_gbps, d)) < 0 ||
	    (rc = measure_clock(s, settle_us, p.multiProcessorCount, &out->p_sm_mhz, d)) < 0)
		return rc;
	/* e4m3 tensor cores: compute capability 8.9 and later */
	if (p.major * 10 + p.minor >= 89)
		rc = measure_gemm(s, 1, settle_us, &(double){ 0 }, &out->p_fp8_tflops, d);
	return rc;
}
