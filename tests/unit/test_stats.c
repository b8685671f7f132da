/* test_stats.c - quantiles by selection, mean, SD, geometric mean. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_stats.h"

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Type-7 quantile of a sorted copy: the reference the selection must match. */
static double ref_quantile(const double *v, size_t n, double q)
{
	double *s = malloc(n * sizeof *s), h, r;
	size_t k;

	memcpy(s, v, n * sizeof *s);
	qsort(s, n, sizeof *s, cmp_d);
	h = q * (double)(n - 1);
	k = (size_t)h;
	r = k + 1 < n ? s[k] + (h - (double)k) * (s[k + 1] - s[k]) : s[n - 1];
	free(s);
	return r;
}

static void test_median_of_odd_and_even_counts(void **state)
{
	double a[] = { 5, 1, 3 }, b[] = { 4, 1, 3, 2 };
	uint64_t c[] = { 10, 40, 20, 30 };

	assert_true(kpt_median_f64(a, 3) == 3.0);
	assert_true(kpt_median_f64(b, 4) == 2.5);
	assert_true(kpt_median_u64(c, 4) == 25.0);
}

static void test_quantile_ends_are_min_and_max(void **state)
{
	double a[] = { 7, -2, 9, 4 };

	assert_true(kpt_quantile_f64(a, 4, 0.0) == -2.0);
	assert_true(kpt_quantile_f64(a, 4, 1.0) == 9.0);
}

static void test_quantile_matches_sorting_on_random_data(void **state)
{
	double v[1001], w[1001];
	const double qs[] = { 0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0 };
	unsigned seed = 7;

	for (size_t n = 1; n <= 1001; n += 50) {
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			/* few distinct values: duplicates stress the partition */
			v[i] = (double)((seed >> 16) % (n < 200 ? 7 : 5000));
		}
		for (size_t k = 0; k < sizeof qs / sizeof *qs; k++) {
			memcpy(w, v, n * sizeof *v);
			assert_true(fabs(kpt_quantile_f64(w, n, qs[k]) - ref_quantile(v, n, qs[k])) < 1e-9);
		}
	}
}

static void test_u64_quantile_keeps_large_values(void **state)
{
	uint64_t v[] = { 4000000000000ull, 4000000000010ull, 4000000000020ull };

	assert_true(kpt_quantile_u64(v, 3, 0.75) == 4000000000015.0);
}

static void test_empty_input_is_nan(void **state)
{
	double x = 1;
	uint64_t y = 1;

	assert_true(isnan(kpt_median_f64(&x, 0)));
	assert_true(isnan(kpt_median_u64(&y, 0)));
	assert_true(isnan(kpt_mean_f64(&x, 0)));
	assert_true(isnan(kpt_sd_f64(&x, 1)));
	assert_true(isnan(kpt_geomean_f64(&x, 0)));
}

static void test_mean_sd_geomean(void **state)
{
	const double v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	const double g[] = { 1, 10, 100 };
	const double bad[] = { 1, 0 };

	assert_true(fabs(kpt_mean_f64(v, 8) - 5.0) < 1e-12);
	assert_true(fabs(kpt_sd_f64(v, 8) - sqrt(32.0 / 7.0)) < 1e-12);
	assert_true(fabs(kpt_geomean_f64(g, 3) - 10.0) < 1e-9);
	assert_true(isnan(kpt_geomean_f64(bad, 2)));
}

static void test_selection_is_linear_on_sorted_and_constant_input(void **state)
{
	size_t n = 2000000;
	double *v = malloc(n * sizeof *v);

	for (size_t i = 0; i < n; i++)
		v[i] = (double)i;
	assert_true(kpt_median_f64(v, n) == (double)(n - 1) / 2.0);
	for (size_t i = 0; i < n; i++)
		v[i] = 3.0;
	assert_true(kpt_median_f64(v, n) == 3.0);
	free(v);
}

/* Reference values from tables (R's qchisq): the closed forms for 1 and 2
 * df, the series and the continued fraction sides of the gamma. */
static void test_chi2_quantile_matches_tables(void **state)
{
	static const struct { double q, df, x; } t[] = {
		{ 0.05, 1, 0.00393214 }, { 0.05, 2, 0.1025866 }, { 0.05, 3, 0.3518463 },
		{ 0.05, 6, 1.6353829 },  { 0.95, 3, 7.8147279 },  { 0.5, 10, 9.3418180 },
		{ 0.975, 30, 46.979242 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		assert_true(fabs(kpt_chi2_quantile(t[i].q, t[i].df) - t[i].x) < 1e-5 * (1 + t[i].x));
	assert_true(isnan(kpt_chi2_quantile(0, 3)));
	assert_true(isnan(kpt_chi2_quantile(0.5, 0)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_of_odd_and_even_counts),
		cmocka_unit_test(test_quantile_ends_are_min_and_max),
		cmocka_unit_test(test_quantile_matches_sorting_on_random_data),
		cmocka_unit_test(test_u64_quantile_keeps_large_values),
		cmocka_unit_test(test_empty_input_is_nan),
		cmocka_unit_test(test_mean_sd_geomean),
		cmocka_unit_test(test_selection_is_linear_on_sorted_and_constant_input),
		cmocka_unit_test(test_chi2_quantile_matches_tables),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
