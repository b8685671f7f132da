/* ref_attention.h - float64 CPU reference of attention, forward and
 * backward, one row at a time (tests sample rows of large problems) or a
 * whole (batch, head). No CUDA. */
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
/* The same, and *lse = log(sum_j exp(scale * q . k_j)) (natural log), the
 * logsumexp the backward pass starts from. */
int kpt_ref_attn_row_lse(const float *q, const float *k, const float *v, long long stride, int nkeys,
			 int head_dim, double scale, double *out, double *lse);

/* Backward, for the loss sum(dO * O). Per query row i, given its lse[i] and
 * delta[i] = dO_i . O_i: P_ij = exp(scale q_i . k_j - lse_i), dP_ij =
 * dO_i . v_j, dS_ij = P_ij (dP_ij - delta_i); then dQ_i = scale sum_j dS_ij
 * k_j, dK_j = scale sum_i dS_ij q_i, dV_j = sum_i P_ij dO_i. All row arrays
 * hold row r at base + r * stride (floats).
 *
 * One query row: dq[0..head_dim) over the keys j in [0, nkeys) (causal: the
 * row's index + 1). O(nkeys * head_dim). */
void kpt_ref_attn_bwd_dq_row(const float *q, const float *dout, double lse, double delta, const float *k,
			     const float *v, long long stride, int nkeys, int head_dim, double scale, double *dq);
/* One key row (k, v point at it): dk and dv over the query rows i in
 * [i0, i1) of q, dout, lse and delta (causal: i0 = the key's index). */
void kpt_ref_attn_bwd_kv_row(const float *k, const float *v, const float *q, const float *dout, const double *lse,
			     const double *delta, long long stride, int i0, int i1, int head_dim, double scale,
			     double *dk, double *dv);
/* The whole backward of one (batch, head) of seq rows from q, k, v and dout
 * (recomputing O and lse): dq, dk, dv are seq * head_dim doubles, row r at
 * r * head_dim. O(seq^2 * head_dim); returns -1 when scratch allocation
 * fails, else 0. */
int kpt_ref_attn_bwd(const float *q, const float *k, const float *v, const float *dout, long long stride, int seq,
		     int head_dim, double scale, int causal, double *dq, double *dk, double *dv);

#ifdef __cplusplus
}
#endif

#endif
