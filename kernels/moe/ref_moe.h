/* ref_moe.h - float64 CPU reference of the MoE layer of kpt_moe.h, for a
 * range of tokens (tests check samples of large problems). No CUDA. */
#ifndef KPT_REF_MOE_H
#define KPT_REF_MOE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Shapes as in struct kpt_moe_cfg (repeated so this header needs no CUDA). */
struct kpt_ref_moe_shape {
	int tokens, hidden, ffn, experts, top_k;
};

/* For tokens t in [t0, t1): y[(t - t0) * hidden + c], the chosen experts
 * ids[(t - t0) * top_k + j] (descending probability, ties to the lower index),
 * their renormalised weights wts[...], and margin[t - t0] = p_k - p_(k+1), the
 * gap between the last chosen and the first unchosen probability (1 when
 * top_k == experts): a caller comparing against a device whose logits differ
 * by rounding should skip tokens with a tiny margin. Weights as in kpt_moe.h,
 * all float. Returns 0, or -1 when scratch allocation fails. */
int kpt_ref_moe(const struct kpt_ref_moe_shape *sh, const float *x, const float *wg, const float *w1,
		const float *w2, int t0, int t1, double *y, int *ids, double *wts, double *margin);

#ifdef __cplusplus
}
#endif

#endif
