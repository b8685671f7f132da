/* test_attn_path.c - which forward-attention kernel each GPU generation gets
 * (kernels/attention/kpt_attn_path.c): a build for 80;86;89;90 must keep the
 * mma.sync path where the Hopper instructions are missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "kpt_attn_path.h"

static void test_ampere_and_ada_use_mma_sync(void **state)
{
	(void)state;
	/* A100 8.0, A10G 8.6, L4 / RTX 4090 8.9: with and without the sm_90a kernel built */
	assert_int_equal(kpt_attn_fwd_path(8, 0, 128, 1), KPT_ATTN_PATH_MMA_SYNC);
	assert_int_equal(kpt_attn_fwd_path(8, 6, 128, 1), KPT_ATTN_PATH_MMA_SYNC);
	assert_int_equal(kpt_attn_fwd_path(8, 9, 128, 1), KPT_ATTN_PATH_MMA_SYNC);
	assert_int_equal(kpt_attn_fwd_path(8, 9, 64, 0), KPT_ATTN_PATH_MMA_SYNC);
}

static void test_hopper_d128_uses_wgmma_when_built(void **state)
{
	(void)state;
	assert_int_equal(kpt_attn_fwd_path(9, 0, 128, 1), KPT_ATTN_PATH_SM90_WGMMA);
	assert_int_equal(kpt_attn_fwd_path(9, 0, 128, 0), KPT_ATTN_PATH_MMA_SYNC);
}

static void test_hopper_d64_uses_wgmma_when_built(void **state)
{
	(void)state;
	assert_int_equal(kpt_attn_fwd_path(9, 0, 64, 1), KPT_ATTN_PATH_SM90_WGMMA);
	assert_int_equal(kpt_attn_fwd_path(9, 0, 64, 0), KPT_ATTN_PATH_MMA_SYNC);
}

static void test_d64_keeps_mma_sync_off_hopper(void **state)
{
	(void)state;
	/* A100, A10G, L4 / RTX 4090, B200, RTX 50: the sm_90a kernel built or not */
	static const int cc[][2] = { { 8, 0 }, { 8, 6 }, { 8, 9 }, { 10, 0 }, { 10, 3 }, { 12, 0 } };
	for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++) {
		assert_int_equal(kpt_attn_fwd_path(cc[i][0], cc[i][1], 64, 1), KPT_ATTN_PATH_MMA_SYNC);
		assert_int_equal(kpt_attn_fwd_path(cc[i][0], cc[i][1], 64, 0), KPT_ATTN_PATH_MMA_SYNC);
	}
	/* 9.0 is Hopper's only compute capability with sm_90a; a made-up 9.x is not it */
	assert_int_equal(kpt_attn_fwd_path(9, 1, 64, 1), KPT_ATTN_PATH_MMA_SYNC);
}

static void test_newer_than_hopper_falls_back_to_mma_sync(void **state)
{
	(void)state;
	/* sm_90a code does not run on 10.0 or 12.0 */
	assert_int_equal(kpt_attn_fwd_path(10, 0, 128, 1), KPT_ATTN_PATH_MMA_SYNC);
	assert_int_equal(kpt_attn_fwd_path(10, 0, 64, 1), KPT_ATTN_PATH_MMA_SYNC);
	assert_int_equal(kpt_attn_fwd_path(12, 0, 128, 1), KPT_ATTN_PATH_MMA_SYNC);
}

static void test_turing_and_odd_head_dims_are_unsupported(void **state)
{
	(void)state;
	assert_int_equal(kpt_attn_fwd_path(7, 5, 128, 1), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_fwd_path(7, 5, 64, 0), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_fwd_path(9, 0, 96, 1), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_fwd_path(8, 0, 256, 1), KPT_ATTN_PATH_UNSUPPORTED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ampere_and_ada_use_mma_sync),
		cmocka_unit_test(test_hopper_d128_uses_wgmma_when_built),
		cmocka_unit_test(test_hopper_d64_uses_wgmma_when_built),
		cmocka_unit_test(test_d64_keeps_mma_sync_off_hopper),
		cmocka_unit_test(test_newer_than_hopper_falls_back_to_mma_sync),
		cmocka_unit_test(test_turing_and_odd_head_dims_are_unsupported),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
