/* ref_attention.c - float64 reference of attention, forward and backward
 * (ref_attention.h). */
#include "ref_attention.h"

#include <math.h>
#include <stdlib.h>

int kpt_ref_attn_row(const float *q, const float *k, const float *v, long long stride, int nkeys,
		     int head_dim, double scale, double *out)
{
	double lse;

	return kpt_ref_attn_row_lse(q, k, v, stride, nkeys, head_dim, scale, out, &lse);
}

int kpt_ref_attn_row_lse(const float *q, const float *k, const float *v, long long stride, int nkeys,
			 int head_dim, double scale, double *out, double *lse)
{
	double *s = malloc((size_t)nkeys * sizeof *s);
	double mx = -INFINITY, sum = 0.0;

	if (!s)
		return -1;
	for (int j = 0; j < nkeys; j++) {
		double dot = 0.0;

		for (int c = 0; c < head_dim; c++)
			dot += (double)q[c] * (double)k[j * stride + c];
		s[j] = dot * scale;
		if (s[j] > mx)
			mx = s[j];
	}
	for (int c = 0; c < head_dim; c++)
		out[c] = 0.0;
	for (int j = 0; j < nkeys; j++) {
		double w = exp(s[j] - mx);

		sum += w;
		for (int c = 0; c < head_dim; c++)
			out[c] += w * (double)v[j * stride + c];
	}
	for (int c = 0; c < head_dim; c++)
		out[c] /= sum;
	*lse = mx + log(sum);
	free(s);
	return 0;
}

static double dot(const float *a, const float *b, int n)
{
	double s = 0.0;

	for (int c = 0; c < n; c++)
		s += (double)a[c] * (double)b[c];
	return s;
}

void kpt_ref_attn_bwd_dq_row(const float *q, const float *dout, double lse, double delta, const float *k,
			     const float *v, long long stride, int nkeys, int head_dim, double scale, double *dq)
{
	for (int c = 0; c < head_dim; c++)
		dq[c] = 0.0;
	for (int j = 0; j < nkeys; j++) {
		double p = exp(scale * dot(q, k + j * stride, head_dim) - lse);
		double ds = p * (dot(dout, v + j * stride, head_dim) - delta);

		for (int c = 0; c < head_dim; c++)
			dq[c] += scale * ds * (double)k[j * stride + c];
	}
}

void kpt_ref_attn_bwd_kv_row(const float *k, const float *v, const float *q, const float *dout, const double *lse,
			     const double *delta, long long stride, int i0, int i1, int head_dim, double scale,
			     double *dk, double *dv)
{
	for (int c = 0; c < head_dim; c++)
		dk[c] = dv[c] = 0.0;
	for (int i = i0; i < i1; i++) {
		const float *qi = q + i * stride, *gi = dout + i * stride;
		double p = exp(scale * dot(qi, k, head_dim) - lse[i]);
		double ds = p * (dot(gi, v, head_dim) - delta[i]);

		for (int c = 0; c < head_dim; c++) {
			dk[c] += scale * ds * (double)qi[c];
			dv[c] += p * (double)gi[c];
		}
	}
}

int kpt_ref_attn_bwd(const float *q, const float *k, const float *v, const float *dout, long long stride, int seq,
		     int head_dim, double scale, int causal, double *dq, double *dk, double *dv)
{
	double *lse = malloc((size_t)seq * sizeof *lse), *delta = malloc((size_t)seq * sizeof *delta);
	double *o = malloc((size_t)head_dim * sizeof *o);
	int rc = -1;

	if (!lse || !delta || !o)
		goto done;
	for (int i = 0; i < seq; i++) {
		if (kpt_ref_attn_row_lse(q + i * stride, k, v, stride, causal ? i + 1 : seq, head_dim, scale, o, &lse[i]))
			goto done;
		delta[i] = 0.0;
		for (int c = 0; c < head_dim; c++)
			delta[i] += (double)dout[i * stride + c] * o[c];
	}
	for (int i = 0; i < seq; i++)
		kpt_ref_attn_bwd_dq_row(q + i * stride, dout + i * stride, lse[i], delta[i], k, v, stride,
					causal ? i + 1 : seq, head_dim, scale, dq + (size_t)i * head_dim);
	for (int j = 0; j < seq; j++)
		kpt_ref_attn_bwd_kv_row(k + j * stride, v + j * stride, q, dout, lse, delta, stride, causal ? j : 0, seq,
					head_dim, scale, dk + (size_t)j * head_dim, dv + (size_t)j * head_dim);
	rc = 0;
done:
	free(lse);
	free(delta);
	free(o);
	return rc;
}
