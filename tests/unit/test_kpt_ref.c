/* test_kpt_ref.c - the plain-C references of the memory and FP8 kernels
 * (kernels/ref/): the FP8 and bf16 conversions against values worked out by
 * hand from the OCP FP8 spec and IEEE 754, and the quantize layout. The GPU
 * tests then compare the kernels against these bit for bit. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kpt_ref.h"

#define E4 KPT_REF_E4M3
#define E5 KPT_REF_E5M2

static void test_e4m3_exact_values(void **state)
{
	assert_int_equal(kpt_ref_fp8_from_f32(1.0f, E4), 0x38);
	assert_int_equal(kpt_ref_fp8_from_f32(-1.0f, E4), 0xB8);
	assert_int_equal(kpt_ref_fp8_from_f32(448.0f, E4), 0x7E);
	assert_int_equal(kpt_ref_fp8_from_f32(0x1p-6f, E4), 0x08);   /* smallest normal */
	assert_int_equal(kpt_ref_fp8_from_f32(0x1p-9f, E4), 0x01);   /* smallest subnormal */
	assert_int_equal(kpt_ref_fp8_from_f32(7 * 0x1p-9f, E4), 0x07);
	assert_int_equal(kpt_ref_fp8_from_f32(0.0f, E4), 0x00);
	assert_int_equal(kpt_ref_fp8_from_f32(-0.0f, E4), 0x80);
}

static void test_e4m3_saturates(void **state)
{
	assert_int_equal(kpt_ref_fp8_from_f32(464.0f, E4), 0x7E);  /* rounds to 480, saturates */
	assert_int_equal(kpt_ref_fp8_from_f32(1e30f, E4), 0x7E);
	assert_int_equal(kpt_ref_fp8_from_f32(INFINITY, E4), 0x7E);
	assert_int_equal(kpt_ref_fp8_from_f32(-INFINITY, E4), 0xFE);
	assert_int_equal(kpt_ref_fp8_from_f32(-500.0f, E4), 0xFE);
}

static void test_e4m3_rounds_ties_to_even(void **state)
{
	/* 1.0625 lies halfway between 1.0 (mantissa 0) and 1.125 (mantissa 1) */
	assert_int_equal(kpt_ref_fp8_from_f32(1.0625f, E4), 0x38);
	/* 1.1875 halfway between 1.125 (1) and 1.25 (2): even is 1.25 */
	assert_int_equal(kpt_ref_fp8_from_f32(1.1875f, E4), 0x3A);
	/* just above a tie rounds up */
	assert_int_equal(kpt_ref_fp8_from_f32(nextafterf(1.0625f, 2.0f), E4), 0x39);
	/* subnormal ties: 2^-10 between 0 and 2^-9 -> 0; 3 * 2^-10 -> 2 * 2^-9 */
	assert_int_equal(kpt_ref_fp8_from_f32(0x1p-10f, E4), 0x00);
	assert_int_equal(kpt_ref_fp8_from_f32(3 * 0x1p-10f, E4), 0x02);
	/* 15 * 2^-10 is between the largest subnormal 7 * 2^-9 and 2^-6: even is 2^-6 */
	assert_int_equal(kpt_ref_fp8_from_f32(15 * 0x1p-10f, E4), 0x08);
}

static void test_e5m2_values_and_saturation(void **state)
{
	assert_int_equal(kpt_ref_fp8_from_f32(1.0f, E5), 0x3C);
	assert_int_equal(kpt_ref_fp8_from_f32(57344.0f, E5), 0x7B);
	assert_int_equal(kpt_ref_fp8_from_f32(61440.0f, E5), 0x7B); /* tie to 65536, saturates */
	assert_int_equal(kpt_ref_fp8_from_f32(INFINITY, E5), 0x7B);
	assert_int_equal(kpt_ref_fp8_from_f32(0x1p-16f, E5), 0x01);
	assert_int_equal(kpt_ref_fp8_from_f32(0x1p-17f, E5), 0x00); /* tie to even zero */
	assert_int_equal(kpt_ref_fp8_from_f32(1.125f, E5), 0x3C);   /* tie between 1.0 and 1.25 */
	assert_int_equal(kpt_ref_fp8_from_f32(1.375f, E5), 0x3E);   /* tie between 1.25 and 1.5 */
}

static void test_decode_and_encode_round_trip_every_code(void **state)
{
	for (int fmt = E4; fmt <= E5; fmt++)
		for (int b = 0; b < 256; b++) {
			float v = kpt_ref_f32_from_fp8((uint8_t)b, fmt);

			if (isnan(v) || isinf(v))
				continue;
			assert_int_equal(kpt_ref_fp8_from_f32(v, fmt), b);
		}
}

static void test_special_codes_decode(void **state)
{
	assert_true(isnan(kpt_ref_f32_from_fp8(0x7F, E4)));
	assert_true(isnan(kpt_ref_f32_from_fp8(0xFF, E4)));
	assert_true(kpt_ref_f32_from_fp8(0x7E, E4) == 448.0f);
	assert_true(isinf(kpt_ref_f32_from_fp8(0x7C, E5)));
	assert_true(isnan(kpt_ref_f32_from_fp8(0x7D, E5)));
	assert_true(kpt_ref_f32_from_fp8(0x01, E4) == 0x1p-9f);
	assert_int_equal(kpt_ref_fp8_from_f32(NAN, E4), 0x7F);
}

static void test_bf16_rounds_to_nearest_even(void **state)
{
	assert_int_equal(kpt_ref_bf16_from_f32(1.0f), 0x3F80);
	assert_int_equal(kpt_ref_bf16_from_f32(1.0f + 0x1p-8f), 0x3F80);     /* tie, even down */
	assert_int_equal(kpt_ref_bf16_from_f32(1.0f + 3 * 0x1p-8f), 0x3F82); /* tie, even up */
	assert_int_equal(kpt_ref_bf16_from_f32(-2.0f), 0xC000);
	assert_int_equal(kpt_ref_bf16_from_f32(NAN) & 0x7FC0, 0x7FC0);
	assert_true(kpt_ref_f32_from_bf16(0x3F82) == 1.015625f);
}

static void test_scale_counts_follow_the_groups(void **state)
{
	assert_int_equal(kpt_ref_fp8_scale_count(KPT_REF_PER_TENSOR, 300, 300), 1);
	assert_int_equal(kpt_ref_fp8_scale_count(KPT_REF_PER_TOKEN, 300, 300), 300);
	assert_int_equal(kpt_ref_fp8_scale_count(KPT_REF_BLOCK_1x128, 300, 300), 300 * 3);
	assert_int_equal(kpt_ref_fp8_scale_count(KPT_REF_BLOCK_128x128, 300, 300), 3 * 3);
	assert_int_equal(kpt_ref_fp8_scale_count(KPT_REF_PER_TOKEN, 0, 5), 0);
	assert_int_equal(kpt_ref_fp8_scale_count(KPT_REF_PER_TENSOR, 0, 0), 1);
}

static void test_quantize_per_token_scales_each_row(void **state)
{
	const float x[2][3] = { { 1.0f, -2.0f, 0.5f }, { 0.0f, 0.0f, 0.0f } };
	uint8_t q[6];
	float sinv[2];

	kpt_ref_fp8_quantize(q, sinv, x, KPT_REF_F32, 2, 3, E4, KPT_REF_PER_TOKEN);
	assert_true(sinv[0] == 2.0f / 448.0f);
	assert_true(sinv[1] == 1.0f);                     /* amax 0 -> scale 1 */
	assert_int_equal(q[1], 0xFE);                      /* -amax -> -max */
	assert_int_equal(q[0], kpt_ref_fp8_from_f32(1.0f * (448.0f / 2.0f), E4));
	assert_int_equal(q[3], 0x00);
}

static void test_dequantize_inverts_within_fp8_precision(void **state)
{
	float x[4 * 200], y[4 * 200], sinv[4 * 2];
	uint8_t q[4 * 200];

	for (int i = 0; i < 800; i++)
		x[i] = sinf((float)i) * (float)(1 + i % 7);
	kpt_ref_fp8_quantize(q, sinv, x, KPT_REF_F32, 4, 200, E4, KPT_REF_BLOCK_1x128);
	kpt_ref_fp8_dequantize(y, KPT_REF_F32, q, sinv, 4, 200, E4, KPT_REF_BLOCK_1x128);
	for (int i = 0; i < 800; i++)
		assert_true(fabsf(y[i] - x[i]) <= fabsf(x[i]) * 0x1p-4f + sinv[(i / 200) * 2 + (i % 200) / 128] * 0x1p-9f);
}

static void test_triad_fuses_multiply_add(void **state)
{
	const float b[2] = { 1.0f, 1e8f }, c[2] = { 3.0f, 1.0f };
	float a[2];

	kpt_ref_triad(a, b, c, 0.5f, 2);
	assert_true(a[0] == 2.5f);
	assert_true(a[1] == fmaf(0.5f, 1.0f, 1e8f));
}

static void test_transpose_moves_every_element(void **state)
{
	const uint16_t in[2][3] = { { 1, 2, 3 }, { 4, 5, 6 } };
	uint16_t out[3][2];

	kpt_ref_transpose(out, in, 2, 3, 2);
	assert_int_equal(out[0][1], 4);
	assert_int_equal(out[2][0], 3);
	assert_int_equal(out[2][1], 6);
}

static void test_sum_reports_magnitude(void **state)
{
	const float x[3] = { 1.0f, -2.0f, 4.0f };
	double a;

	assert_true(kpt_ref_sum(x, 3, &a) == 3.0);
	assert_true(a == 7.0);
	assert_int_equal(kpt_ref_first_mismatch_f32(x, x, 3, 0.0, 0.0), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_e4m3_exact_values),
		cmocka_unit_test(test_e4m3_saturates),
		cmocka_unit_test(test_e4m3_rounds_ties_to_even),
		cmocka_unit_test(test_e5m2_values_and_saturation),
		cmocka_unit_test(test_decode_and_encode_round_trip_every_code),
		cmocka_unit_test(test_special_codes_decode),
		cmocka_unit_test(test_bf16_rounds_to_nearest_even),
		cmocka_unit_test(test_scale_counts_follow_the_groups),
		cmocka_unit_test(test_quantize_per_token_scales_each_row),
		cmocka_unit_test(test_dequantize_inverts_within_fp8_precision),
		cmocka_unit_test(test_triad_fuses_multiply_add),
		cmocka_unit_test(test_transpose_moves_every_element),
		cmocka_unit_test(test_sum_reports_magnitude),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
