/* test_moe_path.c - which expert-FFN implementation each GPU generation and
 * request gets (kernels/moe/kpt_moe_path.c): a build for 80;86;89;90 must
 * keep today's paths where the Hopper instructions are missing; on 9.0 AUTO
 * takes the wgmma grouped FFN from KPT_MOE_AUTO_SM90_FLOPS of work on (the
 * gate's `default` MoE workloads too: kpt_wl_moe.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "kpt_err.h"
#include "kpt_moe_path.h"

/* FFN FLOPs of the moe workloads: e8 h512 f2048 (4096 tokens, top-2),
 * e8 h1024 f4096, e128 top-8 h2048 f768 (32768 tokens). */
#define SEED_FLOPS (4.0 * 4096 * 2 * 512 * 2048)
#define BIG_E8_FLOPS (4.0 * 4096 * 2 * 1024 * 4096)
#define E128_FLOPS (4.0 * 32768 * 8 * 2048 * 768)

/* A100, A10G, L4 / RTX 4090, a made-up 9.1, B200, B300, RTX 50 */
static const int other_cc[][2] = { { 8, 0 }, { 8, 6 }, { 8, 9 }, { 9, 1 }, { 10, 0 }, { 10, 3 }, { 12, 0 } };

static void test_auto_takes_wgmma_on_hopper_from_its_crossover(void **state)
{
	(void)state;
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 1, SEED_FLOPS), KPT_MOE_FFN_GROUPED_SM90);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 1, BIG_E8_FLOPS), KPT_MOE_FFN_GROUPED_SM90);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 1, KPT_MOE_AUTO_SM90_FLOPS), KPT_MOE_FFN_GROUPED_SM90);
	/* the clustered kernel from its own crossover on (E128) */
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 1, E128_FLOPS), KPT_MOE_FFN_GROUPED_SM90_MC);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 1, KPT_MOE_AUTO_SM90_MC_FLOPS),
			 KPT_MOE_FFN_GROUPED_SM90_MC);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 1, KPT_MOE_AUTO_SM90_MC_FLOPS / 2),
			 KPT_MOE_FFN_GROUPED_SM90);
	/* below it, and where the sm_90a code is not usable: the old rule */
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 1, KPT_MOE_AUTO_SM90_FLOPS / 2), KPT_MOE_FFN_GROUPED);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 0, SEED_FLOPS), KPT_MOE_FFN_GROUPED);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 0, E128_FLOPS), KPT_MOE_FFN_CUBLAS);
}

static void test_auto_keeps_the_measured_crossover_off_hopper(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof other_cc / sizeof other_cc[0]; i++) {
		assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, other_cc[i][0], other_cc[i][1], 1, SEED_FLOPS),
				 KPT_MOE_FFN_GROUPED);
		assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, other_cc[i][0], other_cc[i][1], 0, E128_FLOPS),
				 KPT_MOE_FFN_CUBLAS);
	}
	/* exactly at the crossover: still the grouped GEMM */
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 8, 0, 0, KPT_MOE_AUTO_CUBLAS_FLOPS), KPT_MOE_FFN_GROUPED);
}

static void test_explicit_requests_are_kept(void **state)
{
	(void)state;
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED, 9, 0, 1, E128_FLOPS), KPT_MOE_FFN_GROUPED);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_CUBLAS, 9, 0, 1, SEED_FLOPS), KPT_MOE_FFN_CUBLAS);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED, 8, 6, 0, SEED_FLOPS), KPT_MOE_FFN_GROUPED);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_CUBLAS, 12, 0, 0, SEED_FLOPS), KPT_MOE_FFN_CUBLAS);
}

static void test_sm90_runs_on_hopper_when_usable(void **state)
{
	(void)state;
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90, 9, 0, 1, SEED_FLOPS), KPT_MOE_FFN_GROUPED_SM90);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90, 9, 0, 1, E128_FLOPS), KPT_MOE_FFN_GROUPED_SM90);
	/* not built, or its image does not load on this device */
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90, 9, 0, 0, SEED_FLOPS), KPT_E_UNSUPPORTED);
}

static void test_sm90_mc_runs_where_sm90_does(void **state)
{
	(void)state;
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90_MC, 9, 0, 1, SEED_FLOPS),
			 KPT_MOE_FFN_GROUPED_SM90_MC);
	/* asked for, it runs below AUTO's crossover too */
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90_MC, 9, 0, 1, KPT_MOE_AUTO_SM90_FLOPS / 100),
			 KPT_MOE_FFN_GROUPED_SM90_MC);
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90_MC, 9, 0, 0, E128_FLOPS), KPT_E_UNSUPPORTED);
	for (size_t i = 0; i < sizeof other_cc / sizeof other_cc[0]; i++)
		assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90_MC, other_cc[i][0], other_cc[i][1], 1, E128_FLOPS),
				 KPT_E_UNSUPPORTED);
}

/* AUTO's clustered kernel needs the sm_90a code too: not usable, never it. */
static void test_auto_sm90_mc_needs_the_sm90_code(void **state)
{
	(void)state;
	assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, 9, 0, 0, E128_FLOPS), KPT_MOE_FFN_CUBLAS);
	for (size_t i = 0; i < sizeof other_cc / sizeof other_cc[0]; i++)
		assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_AUTO, other_cc[i][0], other_cc[i][1], 1, E128_FLOPS),
				 KPT_MOE_FFN_CUBLAS);
}

static void test_sm90_is_unsupported_off_hopper(void **state)
{
	(void)state;
	/* sm_90a code runs on 9.0 alone, built or not */
	for (size_t i = 0; i < sizeof other_cc / sizeof other_cc[0]; i++) {
		assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90, other_cc[i][0], other_cc[i][1], 1, SEED_FLOPS),
				 KPT_E_UNSUPPORTED);
		assert_int_equal(kpt_moe_ffn_path(KPT_MOE_FFN_GROUPED_SM90, other_cc[i][0], other_cc[i][1], 0, SEED_FLOPS),
				 KPT_E_UNSUPPORTED);
	}
}

static void test_unknown_request_is_invalid(void **state)
{
	(void)state;
	assert_int_equal(kpt_moe_ffn_path(5, 9, 0, 1, SEED_FLOPS), KPT_E_INVAL);
	assert_int_equal(kpt_moe_ffn_path(-1, 8, 0, 0, SEED_FLOPS), KPT_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auto_takes_wgmma_on_hopper_from_its_crossover),
		cmocka_unit_test(test_auto_keeps_the_measured_crossover_off_hopper),
		cmocka_unit_test(test_explicit_requests_are_kept),
		cmocka_unit_test(test_sm90_runs_on_hopper_when_usable),
		cmocka_unit_test(test_sm90_mc_runs_where_sm90_does),
		cmocka_unit_test(test_auto_sm90_mc_needs_the_sm90_code),
		cmocka_unit_test(test_sm90_is_unsupported_off_hopper),
		cmocka_unit_test(test_unknown_request_is_invalid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
