/* kpt_ref_fp8.c - FP8 (OCP E4M3/E5M2) and bf16 conversions, quantize and
 * dequantize on the CPU (see kpt_ref.h). */
#include <math.h>
#include <string.h>

#include "kpt_ref.h"

struct fp8_fmt {
	int mbits;      /* mantissa bits */
	int bias;
	int emin;       /* exponent of the smallest normal */
	uint8_t maxbits;
	float max;
};

static const struct fp8_fmt fmts[] = {
	[KPT_REF_E4M3] = { .mbits = 3, .bias = 7, .emin = -6, .maxbits = 0x7E, .max = 448.0f },
	[KPT_REF_E5M2] = { .mbits = 2, .bias = 15, .emin = -14, .maxbits = 0x7B, .max = 57344.0f },
};

static uint32_t f32_bits(float x)
{
	uint32_t u;

	memcpy(&u, &x, sizeof u);
	return u;
}

static float f32_from_bits(uint32_t u)
{
	float x;

	memcpy(&x, &u, sizeof x);
	return x;
}

uint16_t kpt_ref_bf16_from_f32(float x)
{
	uint32_t u = f32_bits(x);

	if (isnan(x))
		return (uint16_t)(((u >> 16) & 0x8000u) | 0x7FC0u);
	u += 0x7FFFu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

float kpt_ref_f32_from_bf16(uint16_t b)
{
	return f32_from_bits((uint32_t)b << 16);
}

float kpt_ref_fp8_max(int fmt)
{
	return fmts[fmt].max;
}

uint8_t kpt_ref_fp8_from_f32(float x, int fmt)
{
	const struct fp8_fmt *f = &fmts[fmt];
	uint8_t sign = (uint8_t)((f32_bits(x) >> 24) & 0x80u);
	double a = fabs((double)x), quantum, r;
	int e;

	if (isnan(x))
		return (uint8_t)(sign | 0x7F);
	if (a == 0.0)
		return sign;
	if (isinf(x) || a >= f->max)
		return (uint8_t)(sign | f->maxbits);
	frexp(a, &e);             /* a = m * 2^e, m in [0.5, 1) */
	e -= 1;                   /* a in [2^e, 2^(e+1)) */
	if (e < f->emin)
		e = f->emin;      /* subnormal: fixed quantum */
	quantum = ldexp(1.0, e - f->mbits);
	r = nearbyint(a / quantum) * quantum; /* exact scaling; ties to even */
	if (r > f->max)
		return (uint8_t)(sign | f->maxbits);
	if (r == 0.0)
		return sign;
	frexp(r, &e);
	e -= 1;
	if (e < f->emin) /* still subnormal: mantissa counts quanta of 2^(emin - mbits) */
		return (uint8_t)(sign | (uint8_t)(r / ldexp(1.0, f->emin - f->mbits)));
	return (uint8_t)(sign | (uint8_t)((e + f->bias) << f->mbits) |
			 (uint8_t)(r / ldexp(1.0, e - f->mbits) - (double)(1 << f->mbits)));
}

float kpt_ref_f32_from_fp8(uint8_t b, int fmt)
{
	const struct fp8_fmt *f = &fmts[fmt];
	int ebits = 7 - f->mbits;
	int ef = (b >> f->mbits) & ((1 << ebits) - 1);
	int m = b & ((1 << f->mbits) - 1);
	double s = (b & 0x80) ? -1.0 : 1.0;

	if (fmt == KPT_REF_E4M3 && ef == 15 && m == 7)
		return (float)(s * NAN);
	if (fmt == KPT_REF_E5M2 && ef == 31)
		return m ? (float)(s * NAN) : (float)(s * INFINITY);
	if (ef == 0)
		return (float)(s * ldexp((double)m, f->emin - f->mbits));
	return (float)(s * ldexp(1.0 + (double)m / (1 << f->mbits), ef - f->bias));
}

void kpt_ref_fp8_group(int scaling, size_t rows, size_t cols, size_t *gr, size_t *gc)
{
	static const size_t shape[][2] = {
		[KPT_REF_PER_TENSOR] = { 0, 0 },
		[KPT_REF_PER_TOKEN] = { 1, 0 },
		[KPT_REF_BLOCK_1x128] = { 1, 128 },
		[KPT_REF_BLOCK_128x128] = { 128, 128 },
	};

	*gr = shape[scaling][0] ? shape[scaling][0] : (rows ? rows : 1);
	*gc = shape[scaling][1] ? shape[scaling][1] : (cols ? cols : 1);
}

size_t kpt_ref_fp8_scale_count(int scaling, size_t rows, size_t cols)
{
	size_t gr, gc;

	if (rows == 0 || cols == 0)
		return scaling == KPT_REF_PER_TENSOR ? 1 : 0;
	kpt_ref_fp8_group(scaling, rows, cols, &gr, &gc);
	return ((rows + gr - 1) / gr) * ((cols + gc - 1) / gc);
}

float kpt_ref_load(const void *x, int xt, size_t i)
{
	if (xt == KPT_REF_BF16)
		return kpt_ref_f32_from_bf16(((const uint16_t *)x)[i]);
	return ((const float *)x)[i];
}

static void store(void *y, int yt, size_t i, float v)
{
	if (yt == KPT_REF_BF16)
		((uint16_t *)y)[i] = kpt_ref_bf16_from_f32(v);
	else
		((float *)y)[i] = v;
}

void kpt_ref_fp8_quantize(uint8_t *q, float *scale_inv, const void *x, int xt, size_t rows, size_t cols,
			  int fmt, int scaling)
{
	float fmax = kpt_ref_fp8_max(fmt);
	size_t gr, gc, gpc;

	if (rows == 0 || cols == 0) {
		if (scaling == KPT_REF_PER_TENSOR)
			scale_inv[0] = 1.0f;
		return;
	}
	kpt_ref_fp8_group(scaling, rows, cols, &gr, &gc);
	gpc = (cols + gc - 1) / gc;
	for (size_t r0 = 0; r0 < rows; r0 += gr)
		for (size_t c0 = 0; c0 < cols; c0 += gc) {
			size_t r1 = r0 + gr < rows ? r0 + gr : rows, c1 = c0 + gc < cols ? c0 + gc : cols;
			float amax = 0.0f, scale;

			for (size_t r = r0; r < r1; r++)
				for (size_t c = c0; c < c1; c++)
					amax = fmaxf(amax, fabsf(kpt_ref_load(x, xt, r * cols + c)));
			scale = amax > 0.0f ? fmax / amax : 1.0f;
			scale_inv[(r0 / gr) * gpc + c0 / gc] = amax > 0.0f ? amax / fmax : 1.0f;
			for (size_t r = r0; r < r1; r++)
				for (size_t c = c0; c < c1; c++)
					q[r * cols + c] = kpt_ref_fp8_from_f32(kpt_ref_load(x, xt, r * cols + c) * scale, fmt);
		}
}

void kpt_ref_fp8_dequantize(void *y, int yt, const uint8_t *q, const float *scale_inv, size_t rows,
			    size_t cols, int fmt, int scaling)
{
	size_t gr, gc, gpc;

	if (rows == 0 || cols == 0)
		return;
	kpt_ref_fp8_group(scaling, rows, cols, &gr, &gc);
	gpc = (cols + gc - 1) / gc;
	for (size_t r = 0; r < rows; r++)
		for (size_t c = 0; c < cols; c++)
			store(y, yt, r * cols + c,
			      kpt_ref_f32_from_fp8(q[r * cols + c], fmt) * scale_inv[(r / gr) * gpc + c / gc]);
}
