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
	KPT_MOE_FFN_GROUPED_SM90_MC = 4, /* the same in clusters of 2, the weight tile multicast
	                                  * by TMA (moe_ffn_sm90_mc.cu); where GROUPED_SM90 runs */
};
/* AUTO's crossovers (measured, bench/RESULTS.md): cuBLAS per expert above
 * the first, else the mma.sync grouped GEMM; on 9.0 with the sm_90a code the
 * wgmma grouped FFN from the second (the smallest layer measured: the seed
 * shape, 34 GFLOP, 1.40x the mma.sync GEMM; E128, 1649 GFLOP, 1.10x
 * per-expert cuBLAS; 15 interleaved rounds on an H100, 2026-11-26). */
#define KPT_MOE_AUTO_CUBLAS_FLOPS 64e9
#define KPT_MOE_AUTO_SM90_FLOPS 32e9
/* From this much FFN work on, AUTO's wgmma FFN is the clustered one
 * (GROUPED_SM90_MC). Measured on H200s, 2026-11-29 (bench/RESULTS.md): the
 * E128 layer (1650 GFLOP) 1.14x the unclustered kernel with the 3 ms idle
 * gap of a gate (1.15x back to back; 1.17x since its TMA store); the seed
 * shape (34 GFLOP) 0.98x with the gap (0.99x with the TMA store; 1.15x
 * back to back):
 * below the line it stays GROUPED_SM90. Between them nothing is measured.
 * The `default` suite's entries ask for GROUPED_SM90 themselves
 * (kpt_wl_moe.c), so this line leaves the gate's keys alone. */
#define KPT_MOE_AUTO_SM90_MC_FLOPS 256e9

/* req: an enum kpt_moe_ffn_impl (kpt_moe.h); ffn_flops: 4 * tokens * top_k *
 * hidden * ffn; sm90_usable: the sm_90a FFN req may resolve to (GROUPED_SM90,
 * or _MC where asked for or AUTO's) is built and loads. Returns the implementation to run (GROUPED, CUBLAS,
 * GROUPED_SM90 or GROUPED_SM90_MC; AUTO resolved), KPT_E_UNSUPPORTED for
 * GROUPED_SM90(_MC) where it cannot run, KPT_E_INVAL for an unknown req.
 * AUTO: on 9.0 (when usable) GROUPED_SM90 from KPT_MOE_AUTO_SM90_FLOPS on,
 * GROUPED_SM90_MC from KPT_MOE_AUTO_SM90_MC_FLOPS on; else CUBLAS above KPT_MOE_AUTO_CUBLAS_FLOPS,
 * else GROUPED. The `default` suite's MoE workloads ask for GROUPED_SM90
 * where AUTO would take a wgmma FFN (kpt_wl_moe.c): a change of that rule
 * moves the gate's keys, and the committed baselines must be recorded
 * again (baselines/README.md). */
int kpt_moe_ffn_path(int req, int cc_major, int cc_minor, int sm90_usable, double ffn_flops);

#ifdef __cplusplus
}
#endif

#endif
