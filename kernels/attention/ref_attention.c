/* ref_attention.c - float64 reference of one attention row (ref_attention.h). */
#include "ref_attention.h"

#include <math.h>
#include <stdlib.h>

int kpt_ref_attn_row(const float *q, const float *k, const float *v, long long stride, int nkeys,
		     int head_dim, double scale, double *out)
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
	free(s);
	return 0;
}
