/* kpt_moe.h - a mixture-of-experts layer (libkptkernels, kernels/moe/).
 *
 * y = sum over the top_k experts e of token t of w[t][e] * FFN_e(x[t]), with
 *   router:  logits = x Wg^T (fp32), p = softmax(logits), the top_k largest
 *            p (ties to the lower expert index), w = p / sum of those top_k;
 *   permute: token rows gathered into one buffer grouped by expert;
 *   FFN_e:   gelu(x W1_e^T) W2_e^T (exact erf GELU; the hidden activation is
 *            rounded to bf16 between the GEMMs);
 *   combine: the weighted sum of each token's top_k expert rows (fp32, then bf16).
 * All tensors bf16, row-major: x, y [tokens][hidden], Wg [experts][hidden],
 * W1 [experts][ffn][hidden], W2 [experts][hidden][ffn] (torch Linear weights).
 * Each stage is one NVTX range ("moe.router", "moe.permute", "moe.ffn",
 * "moe.combine"). FLOPs of the expert FFN: 4 * tokens * top_k * hidden * ffn
 * (the router adds 2 * tokens * hidden * experts).
 * The float64 CPU reference is in ref_moe.h.
 */
#ifndef KPT_MOE_H
#define KPT_MOE_H

#include <stddef.h>

#include <cuda_runtime_api.h>

/* kpt_err.h has no C++ guard of its own: include it with C linkage so that
 * CUDA C++ sources calling kpt_diag_set link against libkpt. */
#ifdef __cplusplus
extern "C" {
#endif
#include "kpt_err.h"
#include "kpt_moe_path.h" /* enum kpt_moe_ffn_impl */

struct kpt_moe_cfg {
	int tokens, hidden, ffn, experts, top_k; /* hidden and ffn multiples of 128 */
};

/* The expert FFN's work, 4 x tokens x top_k x hidden x ffn FLOPs: what
 * kpt_moe_ffn_path's crossovers are in. */
static inline double kpt_moe_ffn_flops(const struct kpt_moe_cfg *c)
{
	return 4.0 * c->tokens * c->top_k * (double)c->hidden * c->ffn;
}

/* A plan: a cuBLAS handle and the workspace for one configuration. */
struct kpt_moe;
/* impl is resolved by kpt_moe_ffn_path for the current device:
 * KPT_E_UNSUPPORTED when GROUPED_SM90 or GROUPED_SM90_MC cannot run there. */
int kpt_moe_create(struct kpt_moe **out, const struct kpt_moe_cfg *cfg, enum kpt_moe_ffn_impl impl,
		   struct kpt_diag *d);
/* Accepts NULL and half-built plans. */
void kpt_moe_destroy(struct kpt_moe *m);

/* Tile configuration of the two FFN GEMMs of KPT_MOE_FFN_GROUPED, for
 * benchmarking: 0 = choose by size (default); 1..5 = 128x128 (8 warps),
 * 128x128 (4 warps), 128x64, 128x256, 64x128 rows x columns. KPT_E_INVAL
 * when a tile is wider than ffn (GEMM 1) or hidden (GEMM 2) divides. */
int kpt_moe_set_gemm_tiles(struct kpt_moe *m, int ffn1, int ffn2, struct kpt_diag *d);

/* --plant (kpt-workloads): each GEMM of the wgmma FFN (GROUPED_SM90, _MC) runs
 * pct% more output tiles, real ones computed and stored again, output
 * bit-identical (moe_ffn_sm90.cu); 0 turns it off. KPT_E_UNSUPPORTED for a pct > 0 on a plan with another FFN,
 * KPT_E_INVAL outside 0..10000. */
int kpt_moe_set_plant(struct kpt_moe *m, int pct, struct kpt_diag *d);

/* Enqueues the layer on s (KPT_MOE_FFN_CUBLAS synchronises s once; the
 * other implementations never synchronise and can be captured in a graph). */
int kpt_moe_forward(struct kpt_moe *m, void *y, const void *x, const void *w_gate, const void *w1,
		    const void *w2, cudaStream_t s, struct kpt_diag *d);

/* Profiling: ev (NULL to stop) holds 5 events that each forward records on
 * its stream at the start and after router, permute, FFN and combine. The
 * caller owns the events and keeps the array alive. */
void kpt_moe_set_stage_events(struct kpt_moe *m, cudaEvent_t *ev);

/* Device arrays of the last forward, valid until the next one: the chosen
 * experts and weights, [tokens][top_k] (int32, fp32). */
const int *kpt_moe_topk_ids(const struct kpt_moe *m);
const float *kpt_moe_topk_weights(const struct kpt_moe *m);

#ifdef __cplusplus
}
#endif

#endif
