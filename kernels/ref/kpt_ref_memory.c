/* kpt_ref_memory.c - CPU references of the memory kernels (see kpt_ref.h). */
#include <math.h>
#include <string.h>

#include "kpt_ref.h"

void kpt_ref_triad(float *a, const float *b, const float *c, float q, size_t n)
{
	for (size_t i = 0; i < n; i++)
		a[i] = fmaf(q, c[i], b[i]);
}

void kpt_ref_transpose(void *out, const void *in, size_t rows, size_t cols, size_t esize)
{
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++)
			memcpy((char *)out + (c * rows + r) * esize, (const char *)in + (r * cols + c) * esize, esize);
}

double kpt_ref_sum(const float *x, size_t n, double *abs_sum)
{
	double s = 0.0, a = 0.0;

	for (size_t i = 0; i < n; i++) {
		s += x[i];
		a += fabs((double)x[i]);
	}
	if (abs_sum)
		*abs_sum = a;
	return s;
}

size_t kpt_ref_first_mismatch_f32(const float *got, const float *want, size_t n, double rtol, double atol)
{
	for (size_t i = 0; i < n; i++) {
		double g = got[i], w = want[i];

		if (isnan(g) || !(fabs(g - w) <= atol + rtol * fabs(w)))
			return i;
	}
	return n;
}
