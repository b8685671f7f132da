/* moe_ffn_sm90.h - the MoE expert FFN as two grouped wgmma GEMMs on Hopper
 * (KPT_MOE_FFN_GROUPED_SM90 of kpt_moe.h; moe_ffn_sm90.cu, compiled for
 * sm_90a alone). Internal to kernels/moe: moe.cu calls it only where the
 * build defines KPT_MOE_SM90. */
#ifndef KPT_MOE_FFN_SM90_H
#define KPT_MOE_FFN_SM90_H

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include "kpt_moe.h"

namespace kpt {

/* Device arrays of one forward (kpt_moe's workspace and the caller's
 * weights), all device pointers, 16-byte aligned. */
struct moe_sm90_args {
	const __nv_bfloat16 *x;  /* [tokens][hidden], gathered through src_row */
	const __nv_bfloat16 *w1; /* [experts][ffn][hidden] */
	const __nv_bfloat16 *w2; /* [experts][hidden][ffn] */
	__nv_bfloat16 *hb;       /* [rows][ffn]: gelu(x W1^T), rows grouped by expert */
	__nv_bfloat16 *yb;       /* [rows][hidden]: hb W2^T */
	const int *src_row;      /* [rows]: the token of each row */
	const int *offsets;      /* [experts + 1]: first row of each expert (moe_scan) */
	const int *tiles;        /* [experts + 1]: first 128-row tile of each expert (moe_scan) */
	long long rows;          /* tokens * top_k */
	int hidden, ffn, experts;
	int sms;                 /* persistent grid: one block per SM at most */
	int plant_pct;           /* --plant: PCT% more tiles (real ones done again), output unchanged; 0 = none */
};

/* True when the current device is compute capability 9.0, the sm_90a image
 * of the kernels loads and the driver encodes tensor maps. Probed once per
 * device (thread-safe); clears any CUDA error its probe raised. */
bool moe_sm90_usable(void);

/* Enqueues GEMM 1 (gathered x, W1, GELU -> hb) and GEMM 2 (hb, W2 -> yb) on
 * s: two launches, no host synchronisation (graph-capturable); the expert
 * row ranges are read on the device. KPT_E_UNSUPPORTED when
 * !moe_sm90_usable() or the driver refuses a tensor map. */
int moe_ffn_sm90(const struct moe_sm90_args *a, cudaStream_t s, struct kpt_diag *d);

/* The same two GEMMs in clusters of 2 CTAs with the weight tile multicast
 * by TMA (KPT_MOE_FFN_GROUPED_SM90_MC; moe_ffn_sm90_mc.cu): the same
 * arguments, contract and output; its own usability probe. */
bool moe_sm90_mc_usable(void);
int moe_ffn_sm90_mc(const struct moe_sm90_args *a, cudaStream_t s, struct kpt_diag *d);

} /* namespace kpt */

#endif
