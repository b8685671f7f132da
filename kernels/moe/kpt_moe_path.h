/* kpt_moe_path.h - which expert-FFN implementation a MoE plan gets (pure C,
 * no CUDA: unit-tested in tests/unit/test_moe_path.c).
 *
 * kpt_moe_create asks this once per plan; the answer depends only on the
 * request, the compute capability, whether the sm_90a wgmma kernels are
 * usable (built, and their image loads on this device) and the FFN work,
 * so a build for 80;86;89;90 keeps today's paths on A100 / A10G / L4 / RTX
 * 4090 and on GPUs newer than Hopper (wgmma is sm_90a only).
 */
#ifndef KPT_MOE_PATH_H
#define KPT_MOE_PATH_H

#ifdef __cplusplus
extern "C" {
#endif

enum kpt_moe_ffn_impl {
	KPT_MOE_FFN_GROUPED = 0,      /* own grouped GEMM (mma.sync, sm_80+) reading the expert counts
	                               * on the device: no host synchronisation, graph-capturable */
	KPT_MOE_FFN_CUBLAS = 1,       /* one cublasGemmEx per expert and GEMM; copies the expert counts
	                               * to the host (one stream synchronisation per call) */
	KPT_MOE_FFN_AUTO = 2,         /* see kpt_moe_ffn_path */
	KPT_MOE_FFN_GROUPED_SM90 = 3, /* grouped GEMM on wgmma + TMA (moe_ffn_sm90.cu): compute
	                               * capability 9.0 with sm_90a code built; no host sync */
};
/* AUTO's crossover (measured, bench/RESULTS.md) */
#define KPT_MOE_AUTO_CUBLAS_FLOPS 64e9

/* req: an enum kpt_moe_ffn_impl (kpt_moe.h); ffn_flops: 4 * tokens * top_k *
 * hidden * ffn. Returns the implementation to run (GROUPED, CUBLAS or
 * GROUPED_SM90; AUTO resolved), KPT_E_UNSUPPORTED for GROUPED_SM90 where
 * it cannot run, KPT_E_INVAL for an unknown req.
 * AUTO: CUBLAS above KPT_MOE_AUTO_CUBLAS_FLOPS, else GROUPED, on every GPU:
 * the wgmma path is chosen only on request until it has passed the check
 * suite on an H100 (issue 24). */
int kpt_moe_ffn_path(int req, int cc_major, int cc_minor, int sm90_usable, double ffn_flops);

#ifdef __cplusplus
}
#endif

#endif
