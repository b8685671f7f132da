/* test_diff_env.c - kpt_diff_env_combined: the environment of a side made
 * of sessions (files combined, or the history store's sessions). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kpt_diff_private.h"

static void test_first_session_identity_and_newest_time(void **state)
{
	struct kpt_diff_side c = { 0 };
	char gpu[] = "NVIDIA H200";
	const struct kpt_diff_env first = {
		.gpu_name = gpu, .gpu_slug = "nvidia-h200", .driver = "580.1", .cuda = "13.0",
		.suite = "default", .host = "box", .commit = "abc", .time = "2026-01-01",
		.sm_mhz_median = 1980, .sm_mhz_min = 1900, .sm_mhz_max = 1990, .temp_c_median = 40, .temp_c_max = 51,
	};

	kpt_arena_init(&c.arena);
	c.nruns = 7;
	assert_int_equal(kpt_diff_env_combined(&c, &first, "baselines/x", "2026-02-02", 0, 0, 0), 0);
	gpu[0] = 'X'; /* the strings are copies */
	assert_string_equal(c.env.gpu_name, "NVIDIA H200");
	assert_string_equal(c.env.path, "baselines/x");
	assert_string_equal(c.env.time, "2026-02-02");
	assert_string_equal(c.env.commit, "abc");
	assert_int_equal(c.env.runs, 7);
	assert_true(c.env.sm_mhz_median == 1980 && c.env.temp_c_max == 51);
	assert_true(c.env.capped_frac == 0 && c.env.throttled_frac == 0); /* no env samples */
	kpt_arena_release(&c.arena);
}

static void test_shares_are_weighted_by_env_samples(void **state)
{
	struct kpt_diff_side c = { 0 };
	const struct kpt_diff_env first = { .sm_mhz_min = NAN };

	kpt_arena_init(&c.arena);
	/* 100 samples 50% capped, 300 samples none: 50 / 400 */
	assert_int_equal(kpt_diff_env_combined(&c, &first, NULL, "", 400, 50, 100), 0);
	assert_true(fabs(c.env.capped_frac - 0.125) < 1e-12);
	assert_true(fabs(c.env.throttled_frac - 0.25) < 1e-12);
	assert_string_equal(c.env.path, ""); /* NULL: empty, never NULL */
	assert_string_equal(c.env.host, "");
	assert_true(isnan(c.env.sm_mhz_min));
	kpt_arena_release(&c.arena);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_session_identity_and_newest_time),
		cmocka_unit_test(test_shares_are_weighted_by_env_samples),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
