/* kpt_ref.h - CPU references of the memory and FP8 kernels, in plain C.
 *
 * Same contracts as the launchers in kpt_kernels.h, on host memory. The FP8
 * and bf16 conversions here are written from the OCP 8-bit floating point
 * specification (v1.0) and IEEE 754 round-to-nearest-even, independently of
 * CUDA's intrinsics, so the GPU tests compare two implementations bit for
 * bit. No CUDA headers: this compiles and is unit-tested anywhere.
 */
#ifndef KPT_REF_H
#define KPT_REF_H

#include <stddef.h>
#include <stdint.h>

/* kpt_kernels.h values, repeated so this header needs no CUDA. */
enum { KPT_REF_E4M3 = 0, KPT_REF_E5M2 = 1 };
enum { KPT_REF_F32 = 0, KPT_REF_BF16 = 1 };
enum { KPT_REF_PER_TENSOR = 0, KPT_REF_PER_TOKEN = 1, KPT_REF_BLOCK_1x128 = 2, KPT_REF_BLOCK_128x128 = 3 };

/* float -> bf16 bits, round to nearest even; NaN -> quiet NaN (0x7FC0 | sign). */
uint16_t kpt_ref_bf16_from_f32(float x);
float kpt_ref_f32_from_bf16(uint16_t b);

/* Largest finite value: 448 (E4M3) or 57344 (E5M2). */
float kpt_ref_fp8_max(int fmt);
/* float -> FP8 bits, round to nearest even, saturating: values (and
 * infinities) beyond the largest finite magnitude give +-max; NaN gives
 * 0x7F | sign (E4M3 NaN; an E5M2 NaN too). */
uint8_t kpt_ref_fp8_from_f32(float x, int fmt);
/* FP8 bits -> float, exact. E4M3 S.1111.111 and E5M2 exponent 31 with a
 * non-zero mantissa are NaN; E5M2 S.11111.00 is +-infinity. */
float kpt_ref_f32_from_fp8(uint8_t b, int fmt);

/* Group shape of a scaling: rows x cols per scale for a rows x cols tensor
 * (per tensor: the whole tensor; per token: 1 x cols). */
void kpt_ref_fp8_group(int scaling, size_t rows, size_t cols, size_t *gr, size_t *gc);
size_t kpt_ref_fp8_scale_count(int scaling, size_t rows, size_t cols);

/* Element i of x (type xt) as float. */
float kpt_ref_load(const void *x, int xt, size_t i);

/* Quantize / dequantize exactly as kpt_fp8_quantize / kpt_fp8_dequantize
 * specify: scale = max / amax (1 when amax = 0), q = fp8(x * scale),
 * scale_inv = amax / max; y = f32(q) * scale_inv, rounded to yt. */
void kpt_ref_fp8_quantize(uint8_t *q, float *scale_inv, const void *x, int xt, size_t rows, size_t cols,
			  int fmt, int scaling);
void kpt_ref_fp8_dequantize(void *y, int yt, const uint8_t *q, const float *scale_inv, size_t rows,
			    size_t cols, int fmt, int scaling);

/* a[i] = fmaf(q, c[i], b[i]): the GPU triad rounds once too, so equal bits. */
void kpt_ref_triad(float *a, const float *b, const float *c, float q, size_t n);
/* out (cols x rows) = transpose of in (rows x cols), elements of esize bytes. */
void kpt_ref_transpose(void *out, const void *in, size_t rows, size_t cols, size_t esize);
/* Sum in double; *abs_sum (may be NULL) receives sum |x| for error bounds. */
double kpt_ref_sum(const float *x, size_t n, double *abs_sum);

/* Index of the first of n float pairs with |got - want| > atol + rtol*|want|
 * (NaN in got always counts), or n when none. */
size_t kpt_ref_first_mismatch_f32(const float *got, const float *want, size_t n, double rtol, double atol);

#endif
