/* test_history_detect.c - change points in one series (kpt_cp_detect). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "kpt_history.h"

#define N 300

static uint64_t seed = 88172645463325252ull;

/* Normal noise (Box-Muller on xorshift64). */
static double gauss(void)
{
	double u, v;

	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	u = ((seed >> 11) + 0.5) / 9007199254740992.0;
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	v = ((seed >> 11) + 0.5) / 9007199254740992.0;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* 100 us with sd_pct noise; times (1 + step_pct/100) from index at on. */
static void series(double *x, uint32_t n, double sd_pct, uint32_t at, double step_pct)
{
	for (uint32_t i = 0; i < n; i++)
		x[i] = 100000 * exp(sd_pct / 100 * gauss()) * (i >= at ? 1 + step_pct / 100 : 1);
}

static void test_finds_a_planted_step_where_it_is(void **state)
{
	double x[N];
	struct kpt_cp *cp = NULL;
	uint32_t n = 0;

	(void)state;
	series(x, N, 0.3, 200, 2);
	assert_int_equal(kpt_cp_detect(x, N, NULL, &cp, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_true(cp[0].at >= 198 && cp[0].at <= 202);
	assert_true(cp[0].step_pct > 1.7 && cp[0].step_pct < 2.3);
	assert_true(cp[0].p < 1e-6);
	assert_true(cp[0].after_ns > cp[0].before_ns);
	free(cp);
}

static void test_finds_a_faster_step_too(void **state)
{
	double x[N];
	struct kpt_cp *cp = NULL;
	uint32_t n = 0;

	(void)state;
	series(x, N, 0.3, 100, -5);
	assert_int_equal(kpt_cp_detect(x, N, NULL, &cp, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_true(cp[0].step_pct < -4.5);
	free(cp);
}

static void test_no_change_point_in_pure_noise(void **state)
{
	double x[N];
	struct kpt_cp *cp = NULL;
	uint32_t n = 0, total = 0;

	(void)state;
	for (int rep = 0; rep < 20; rep++) {
		series(x, N, 1, N, 0);
		assert_int_equal(kpt_cp_detect(x, N, NULL, &cp, &n, NULL), 0);
		total += n;
		free(cp);
	}
	assert_int_equal(total, 0);
}

static void test_step_smaller_than_min_step_is_not_reported(void **state)
{
	double x[N];
	struct kpt_cp *cp = NULL;
	uint32_t n = 0;
	struct kpt_cp_opts o = { .min_step_pct = 1 };

	(void)state;
	series(x, N, 0.05, 150, 0.5); /* significant, but below 1% */
	assert_int_equal(kpt_cp_detect(x, N, &o, &cp, &n, NULL), 0);
	assert_int_equal(n, 0);
	o.min_step_pct = 0.25;
	assert_int_equal(kpt_cp_detect(x, N, &o, &cp, &n, NULL), 0);
	assert_int_equal(n, 1);
	free(cp);
}

static void test_one_outlier_is_not_a_step(void **state)
{
	double x[N];
	struct kpt_cp *cp = NULL;
	uint32_t n = 0;

	(void)state;
	series(x, N, 0.3, N, 0);
	x[150] *= 1.3; /* a throttled machine */
	x[151] *= 1.3;
	assert_int_equal(kpt_cp_detect(x, N, NULL, &cp, &n, NULL), 0);
	assert_int_equal(n, 0);
}

static void test_one_high_point_at_the_head_is_not_a_step(void **state)
{
	double x[40];
	struct kpt_cp *cp = NULL;
	uint32_t n = 0;
	struct kpt_cp_opts o = { .min_seg = 3 };

	(void)state;
	series(x, 40, 0.2, 39, 10); /* one point after: could be an outlier */
	assert_int_equal(kpt_cp_detect(x, 40, &o, &cp, &n, NULL), 0);
	assert_int_equal(n, 0);
	series(x, 40, 0.2, 37, 10); /* three: a step at the head */
	assert_int_equal(kpt_cp_detect(x, 40, &o, &cp, &n, NULL), 0);
	assert_int_equal(n, 1);
	assert_int_equal(cp[0].at, 37);
	free(cp);
}

static void test_several_steps_are_all_found(void **state)
{
	double x[N];
	struct kpt_cp *cp = NULL;
	uint32_t n = 0;

	(void)state;
	series(x, N, 0.3, 100, 5);
	for (uint32_t i = 200; i < N; i++)
		x[i] *= 0.97;
	assert_int_equal(kpt_cp_detect(x, N, NULL, &cp, &n, NULL), 0);
	assert_int_equal(n, 2);
	assert_true(abs((int)cp[0].at - 100) <= 2 && cp[0].step_pct > 4);
	assert_true(abs((int)cp[1].at - 200) <= 2 && cp[1].step_pct < -2.5);
	free(cp);
}

static void test_rejects_a_non_positive_value(void **state)
{
	double x[10] = { 1, 2, 3, 0, 5, 6, 7, 8, 9, 10 };
	struct kpt_cp *cp = NULL;
	uint32_t n = 0;
	struct kpt_diag d = { 0 };

	(void)state;
	assert_int_equal(kpt_cp_detect(x, 10, NULL, &cp, &n, &d), KPT_E_INVAL);
	assert_null(cp);
	x[3] = NAN;
	assert_int_equal(kpt_cp_detect(x, 10, NULL, &cp, &n, &d), KPT_E_INVAL);
}

static void test_noise_is_the_point_to_point_sd(void **state)
{
	double x[N];

	(void)state;
	series(x, N, 0.5, N, 0);
	assert_true(fabs(kpt_cp_noise(x, N) - 0.005) < 0.001);
	assert_true(isnan(kpt_cp_noise(x, 1)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_finds_a_planted_step_where_it_is),
		cmocka_unit_test(test_finds_a_faster_step_too),
		cmocka_unit_test(test_no_change_point_in_pure_noise),
		cmocka_unit_test(test_step_smaller_than_min_step_is_not_reported),
		cmocka_unit_test(test_one_outlier_is_not_a_step),
		cmocka_unit_test(test_one_high_point_at_the_head_is_not_a_step),
		cmocka_unit_test(test_several_steps_are_all_found),
		cmocka_unit_test(test_rejects_a_non_positive_value),
		cmocka_unit_test(test_noise_is_the_point_to_point_sd),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
