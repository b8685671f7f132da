/* ref_moe.c - float64 reference of the MoE layer (ref_moe.h). */
#include "ref_moe.h"

#include <math.h>
#include <stdlib.h>

static double gelu(double v)
{
	return 0.5 * v * (1.0 + erf(v / sqrt(2.0)));
}

int kpt_ref_moe(const struct kpt_ref_moe_shape *sh, const float *x, const float *wg, const float *w1,
		const float *w2, int t0, int t1, double *y, int *ids, double *wts, double *margin)
{
	const int H = sh->hidden, F = sh->ffn, E = sh->experts, K = sh->top_k;
	double *p = malloc((size_t)E * sizeof *p);
	double *h = malloc((size_t)F * sizeof *h);
	char *taken = malloc((size_t)E);

	if (!p || !h || !taken) {
		free(p);
		free(h);
		free(taken);
		return -1;
	}
	for (int t = t0; t < t1; t++) {
		const float *xt = x + (size_t)t * H;
		double mx = -INFINITY, sum = 0.0, psum = 0.0;
		double *yt = y + (size_t)(t - t0) * H;
		int *it = ids + (size_t)(t - t0) * K;
		double *wt = wts + (size_t)(t - t0) * K;

		for (int e = 0; e < E; e++) {
			double s = 0.0;

			for (int c = 0; c < H; c++)
				s += (double)xt[c] * (double)wg[(size_t)e * H + c];
			p[e] = s;
			mx = s > mx ? s : mx;
			taken[e] = 0;
		}
		for (int e = 0; e < E; e++) {
			p[e] = exp(p[e] - mx);
			sum += p[e];
		}
		for (int e = 0; e < E; e++)
			p[e] /= sum;
		for (int j = 0; j < K; j++) {
			int best = -1;

			for (int e = 0; e < E; e++)
				if (!taken[e] && (best < 0 || p[e] > p[best]))
					best = e;
			taken[best] = 1;
			it[j] = best;
			psum += p[best];
		}
		margin[t - t0] = 1.0;
		for (int e = 0; e < E; e++)
			if (!taken[e] && p[it[K - 1]] - p[e] < margin[t - t0])
				margin[t - t0] = p[it[K - 1]] - p[e];
		for (int c = 0; c < H; c++)
			yt[c] = 0.0;
		for (int j = 0; j < K; j++) {
			const int e = it[j];
			const float *a = w1 + (size_t)e * F * H;
			const float *b = w2 + (size_t)e * H * F;

			wt[j] = p[e] / psum;
			for (int f = 0; f < F; f++) {
				double s = 0.0;

				for (int c = 0; c < H; c++)
					s += (double)xt[c] * (double)a[(size_t)f * H + c];
				h[f] = gelu(s);
			}
			for (int c = 0; c < H; c++) {
				double s = 0.0;

				for (int f = 0; f < F; f++)
					s += h[f] * (double)b[(size_t)c * F + f];
				yt[c] += wt[j] * s;
			}
		}
	}
	free(p);
	free(h);
	free(taken);
	return 0;
}
