/* ref_attention.h - float64 CPU reference of attention, one query row at a
 * time (tests sample rows of large problems). No CUDA. */
#ifndef KPT_REF_ATTENTION_H
#define KPT_REF_ATTENTION_H

#ifdef __cplusplus
extern "C" {
#endif

/* out[0..head_dim) = softmax_j(scale * q . k_j) weighted sum of v_j over the
 * keys j in [0, nkeys); k and v hold row j at k + j * stride (floats).
 * nkeys >= 1. O(nkeys * head_dim) time, O(nkeys) scratch from the heap;
 * returns -1 when that allocation fails, else 0. */
int kpt_ref_attn_row(const float *q, const float *k, const float *v, long long stride, int nkeys,
		     int head_dim, double scale, double *out);

#ifdef __cplusplus
}
#endif

#endif
