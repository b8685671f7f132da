/* test_attn_path.c - which forward-attention kernel each GPU generation gets
 * (kernels/attention/kpt_attn_path.c): a build for 80;86;89;90 must keep the
 * mma.sync path where the Hopper instructions are missing, and e4m3 (which
 * only the sm_90a kernel reads) is refused there. Also the e4m3 kernel's V^T
 * key order (kpt_attn_path.h) against the wgmma fragment layouts it joins. */
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

static void test_backward_uses_wgmma_only_on_hopper_when_built(void **state)
{
	(void)state;
	static const int hd[] = { 64, 128 };
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(kpt_attn_bwd_path(9, 0, hd[i], 1), KPT_ATTN_PATH_SM90_WGMMA);
		assert_int_equal(kpt_attn_bwd_path(9, 0, hd[i], 0), KPT_ATTN_PATH_MMA_SYNC);
	}
}

static void test_backward_keeps_mma_sync_off_hopper(void **state)
{
	(void)state;
	/* A100, A10G, L4 / RTX 4090, a made-up 9.1, B200, RTX 50: built or not */
	static const int cc[][2] = { { 8, 0 }, { 8, 6 }, { 8, 9 }, { 9, 1 }, { 10, 0 }, { 10, 3 }, { 12, 0 } };
	static const int hd[] = { 64, 128 };
	for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++)
		for (size_t j = 0; j < 2; j++)
			for (int built = 0; built < 2; built++)
				assert_int_equal(kpt_attn_bwd_path(cc[i][0], cc[i][1], hd[j], built),
						 KPT_ATTN_PATH_MMA_SYNC);
}

static void test_backward_refuses_turing_and_odd_head_dims(void **state)
{
	(void)state;
	assert_int_equal(kpt_attn_bwd_path(7, 5, 128, 1), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_bwd_path(7, 0, 64, 0), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_bwd_path(9, 0, 96, 1), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_bwd_path(9, 0, 256, 1), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_bwd_path(8, 0, 32, 0), KPT_ATTN_PATH_UNSUPPORTED);
}

static void test_e4m3_runs_only_on_hopper_with_the_kernel_built(void **state)
{
	(void)state;
	assert_int_equal(kpt_attn_fwd_path_e4m3(9, 0, 128, 1), KPT_ATTN_PATH_SM90_WGMMA);
	/* no mma.sync e4m3 kernel to fall back to */
	assert_int_equal(kpt_attn_fwd_path_e4m3(9, 0, 128, 0), KPT_ATTN_PATH_UNSUPPORTED);
	static const int cc[][2] = { { 7, 5 }, { 8, 0 }, { 8, 6 }, { 8, 9 }, { 9, 1 }, { 10, 0 }, { 10, 3 }, { 12, 0 } };
	for (size_t i = 0; i < sizeof cc / sizeof cc[0]; i++) {
		assert_int_equal(kpt_attn_fwd_path_e4m3(cc[i][0], cc[i][1], 128, 1), KPT_ATTN_PATH_UNSUPPORTED);
		assert_int_equal(kpt_attn_fwd_path_e4m3(cc[i][0], cc[i][1], 128, 0), KPT_ATTN_PATH_UNSUPPORTED);
	}
}

static void test_e4m3_head_dims_64_and_128_only(void **state)
{
	(void)state;
	assert_int_equal(kpt_attn_fwd_path_e4m3(9, 0, 64, 1), KPT_ATTN_PATH_SM90_WGMMA);
	assert_int_equal(kpt_attn_fwd_path_e4m3(9, 0, 64, 0), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_fwd_path_e4m3(8, 9, 64, 1), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_fwd_path_e4m3(9, 0, 96, 1), KPT_ATTN_PATH_UNSUPPORTED);
	assert_int_equal(kpt_attn_fwd_path_e4m3(9, 0, 256, 1), KPT_ATTN_PATH_UNSUPPORTED);
	/* the 16-bit path is unchanged by the e4m3 rule */
	assert_int_equal(kpt_attn_fwd_path(9, 0, 64, 1), KPT_ATTN_PATH_SM90_WGMMA);
}

static void test_e4m3_kernel_asked_runs_and_default_is_per_head_dim(void **state)
{
	(void)state;
	for (int hd = 64; hd <= 128; hd += 64) {
		assert_int_equal(kpt_attn_e4m3_kernel_pick(KPT_ATTN_E4M3_KERNEL_SERIAL, hd), KPT_ATTN_E4M3_KERNEL_SERIAL);
		assert_int_equal(kpt_attn_e4m3_kernel_pick(KPT_ATTN_E4M3_KERNEL_PINGPONG, hd),
				 KPT_ATTN_E4M3_KERNEL_PINGPONG);
		assert_int_equal(kpt_attn_e4m3_kernel_pick(KPT_ATTN_E4M3_KERNEL_PINGPONG3, hd),
				 KPT_ATTN_E4M3_KERNEL_PINGPONG3);
		const enum kpt_attn_e4m3_kernel k = kpt_attn_e4m3_kernel_pick(KPT_ATTN_E4M3_KERNEL_DEFAULT, hd);
		assert_true(k > KPT_ATTN_E4M3_KERNEL_DEFAULT && k < KPT_ATTN_E4M3_KERNEL_COUNT);
	}
	assert_int_equal(kpt_attn_e4m3_kernel_pick(KPT_ATTN_E4M3_KERNEL_DEFAULT, 96), KPT_ATTN_E4M3_KERNEL_SERIAL);
}

static void test_e4m3_kernel_out_of_range_is_refused(void **state)
{
	(void)state;
	/* DEFAULT back: kpt_attn_fwd answers KPT_E_INVAL */
	assert_int_equal(kpt_attn_e4m3_kernel_pick(-1, 128), KPT_ATTN_E4M3_KERNEL_DEFAULT);
	assert_int_equal(kpt_attn_e4m3_kernel_pick(KPT_ATTN_E4M3_KERNEL_COUNT, 128), KPT_ATTN_E4M3_KERNEL_DEFAULT);
	assert_int_equal(kpt_attn_e4m3_kernel_pick(1 << 30, 64), KPT_ATTN_E4M3_KERNEL_DEFAULT);
}

static void test_e4m3_vt_order_is_a_permutation_of_each_chunk(void **state)
{
	int seen[32] = { 0 };

	(void)state;
	for (int c = 0; c < 32; c++) {
		int p = kpt_attn_e4m3_vt_pos(c);

		assert_in_range(p, 0, 31);
		seen[p]++;
		assert_int_equal(kpt_attn_e4m3_vt_key(p), c);
	}
	for (int p = 0; p < 32; p++)
		assert_int_equal(seen[p], 1);
	assert_int_equal(kpt_attn_e4m3_vt_seq(1), 32);
	assert_int_equal(kpt_attn_e4m3_vt_seq(32), 32);
	assert_int_equal(kpt_attn_e4m3_vt_seq(1031), 1056);
}

/* The two layouts, as the PTX ISA draws them for one warp's 16 rows of a
 * 32-key step. The fp32 accumulator (wgmma D, m64nNk*): element e of
 * group j (registers 4j + e, e = 0..3) of the thread with lane % 4 = t is
 * row g + 8 (e / 2), column 8j + 2t + e % 2. The 8-bit A operand from
 * registers (wgmma 64N32 A, per warp the mma.m16n8k32 A layout): byte f of
 * register r of thread t is row g + 8 (r % 2), k = 16 (r / 2) + 4t + f. */
static int acc_col(int t, int j, int e)
{
	return 8 * j + 2 * t + (e & 1);
}

static int a_k(int t, int r, int f)
{
	return 16 * (r / 2) + 4 * t + f;
}

static void test_e4m3_packed_p_meets_the_key_the_vt_order_puts_there(void **state)
{
	/* attention_fwd_sm90_fp8.cu's pack_p: register r, byte f of a chunk
	 * takes accumulator group 2 (r / 2) + f / 2, element 2 (r % 2) + f % 2
	 * (x[0], x[1], x[4], x[5] for register 0, ...). */
	(void)state;
	for (int t = 0; t < 4; t++)
		for (int r = 0; r < 4; r++)
			for (int f = 0; f < 4; f++) {
				int j = 2 * (r / 2) + f / 2, e = 2 * (r % 2) + f % 2;
				/* same row in both layouts */
				assert_int_equal(e / 2, r % 2);
				/* the key of that P element sits where the
				 * A fragment's k position multiplies V^T */
				assert_int_equal(kpt_attn_e4m3_vt_pos(acc_col(t, j, e)), a_k(t, r, f));
			}
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
		cmocka_unit_test(test_backward_uses_wgmma_only_on_hopper_when_built),
		cmocka_unit_test(test_backward_keeps_mma_sync_off_hopper),
		cmocka_unit_test(test_backward_refuses_turing_and_odd_head_dims),
		cmocka_unit_test(test_e4m3_runs_only_on_hopper_with_the_kernel_built),
		cmocka_unit_test(test_e4m3_head_dims_64_and_128_only),
		cmocka_unit_test(test_e4m3_kernel_asked_runs_and_default_is_per_head_dim),
		cmocka_unit_test(test_e4m3_kernel_out_of_range_is_refused),
		cmocka_unit_test(test_e4m3_vt_order_is_a_permutation_of_each_chunk),
		cmocka_unit_test(test_e4m3_packed_p_meets_the_key_the_vt_order_puts_there),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
