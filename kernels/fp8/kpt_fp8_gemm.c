/* kpt_fp8_gemm.c - FP8 GEMM through cuBLASLt with scale pointers (see
 * kpt_kernels.h for the row-major contract).
 *
 * cuBLASLt is column-major and its FP8 kernels want the "TN" form. Our
 * row-major D (m x n) is a column-major n x m matrix, and
 *     D^T = B * A^T   with B (n x k) and A (m x k) row-major,
 * so cuBLASLt's A is our B read as a column-major k x n matrix with op T, its
 * B is our A read as a column-major k x m matrix with op N, and its
 * (M, N, K) is our (n, m, k). Its A scale is therefore our b_scale. */
#include <stdlib.h>

#include <cublasLt.h>
#include <nvtx3/nvToolsExt.h>

#include "kpt_kernels.h"
#include "kpt_workload.h"

#define WORKSPACE_BYTES (32u << 20)

struct kpt_fp8_gemm {
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulAlgo_t algo;
	void *ws;
};

static int lt_check(struct kpt_diag *d, cublasStatus_t st, const char *where)
{
	if (st == CUBLAS_STATUS_SUCCESS)
		return 0;
	return kpt_diag_set(d, st == CUBLAS_STATUS_NOT_SUPPORTED ? KPT_E_UNSUPPORTED : KPT_E_CUDA,
			    "cublasLt call failed: %s: %s", where, cublasLtGetStatusString(st));
}
#define KPT_LT(d, call) lt_check((d), (call), __FILE__ ":" KPT_STR(__LINE__) ": " #call)

static cudaDataType_t fp8_type(enum kpt_fp8_fmt f)
{
	return f == KPT_FP8_E5M2 ? CUDA_R_8F_E5M2 : CUDA_R_8F_E4M3;
}

int kpt_fp8_gemm_create(struct kpt_fp8_gemm **out, size_t m, size_t n, size_t k, enum kpt_fp8_fmt fa,
			enum kpt_fp8_fmt fb, unsigned flags, struct kpt_diag *d)
{
	struct kpt_fp8_gemm *g;
	cublasOperation_t opt = CUBLAS_OP_T, opn = CUBLAS_OP_N;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res;
	size_t wsb = WORKSPACE_BYTES;
	int8_t fast = (flags & KPT_FP8_GEMM_FAST_ACCUM) ? 1 : 0;
	int found = 0, rc;

	*out = NULL;
	if (m == 0 || n == 0 || k == 0 || m % 16 || n % 16 || k % 16)
		return kpt_diag_set(d, KPT_E_INVAL, "fp8 gemm: %zu x %zu x %zu: sizes must be non-zero multiples of 16",
				    m, n, k);
	if (fa == KPT_FP8_E5M2 && fb == KPT_FP8_E5M2)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "fp8 gemm: e5m2 x e5m2 is not supported by cuBLASLt");
	if (!(g = calloc(1, sizeof *g)))
		return kpt_diag_set(d, KPT_E_NOMEM, "fp8 gemm: out of memory");
	if ((rc = KPT_LT(d, cublasLtCreate(&g->lt))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &opt, sizeof opt))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &opn, sizeof opn))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast,
							    sizeof fast))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatrixLayoutCreate(&g->la, fp8_type(fb), k, n, (int64_t)k))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatrixLayoutCreate(&g->lb, fp8_type(fa), k, m, (int64_t)k))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatrixLayoutCreate(&g->ld, CUDA_R_16BF, n, m, (int64_t)n))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&g->ws, WORKSPACE_BYTES))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatmulPreferenceCreate(&pref))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
								  &wsb, sizeof wsb))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatmulAlgoGetHeuristic(g->lt, g->op, g->la, g->lb, g->ld, g->ld, pref, 1, &res,
							    &found))) < 0)
		goto fail;
	if (found < 1) {
		rc = kpt_diag_set(d, KPT_E_UNSUPPORTED, "fp8 gemm: cuBLASLt has no algorithm for %zu x %zu x %zu on this GPU",
				  m, n, k);
		goto fail;
	}
	g->algo = res.algo;
	cublasLtMatmulPreferenceDestroy(pref);
	*out = g;
	return 0;
fail:
	if (pref)
		cublasLtMatmulPreferenceDestroy(pref);
	kpt_fp8_gemm_destroy(g);
	return rc;
}

int kpt_fp8_gemm_run(struct kpt_fp8_gemm *g, uint16_t *dmat, const uint8_t *a, const uint8_t *b,
		     const float *a_scale, const float *b_scale, cudaStream_t s, struct kpt_diag *d)
{
	const float one = 1.0f, zero = 0.0f;
	int rc;

	/* cuBLASLt's A is our B (see the top of this file). */
	if ((rc = KPT_LT(d, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &b_scale,
							   sizeof b_scale))) < 0 ||
	    (rc = KPT_LT(d, cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &a_scale,
							   sizeof a_scale))) < 0)
		return rc;
	nvtxRangePushA("kpt_fp8_gemm");
	rc = KPT_LT(d, cublasLtMatmul(g->lt, g->op, &one, b, g->la, a, g->lb, &zero, dmat, g->ld, dmat, g->ld,
				      &g->algo, g->ws, WORKSPACE_BYTES, s));
	nvtxRangePop();
	return rc;
}

void kpt_fp8_gemm_destroy(struct kpt_fp8_gemm *g)
{
	if (!g)
		return;
	if (g->ws)
		cudaFree(g->ws);
	if (g->ld)
		cublasLtMatrixLayoutDestroy(g->ld);
	if (g->lb)
		cublasLtMatrixLayoutDestroy(g->lb);
	if (g->la)
		cublasLtMatrixLayoutDestroy(g->la);
	if (g->op)
		cublasLtMatmulDescDestroy(g->op);
	if (g->lt)
		cublasLtDestroy(g->lt);
	free(g);
}
