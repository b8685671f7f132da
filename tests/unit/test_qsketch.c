/* test_qsketch.c - the log-bucketed quantile sketch against exact quantiles. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_qsketch.h"
#include "kpt_stats.h"

/* xorshift64*: the same data on every run */
static uint64_t rng(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * UINT64_C(2685821657736338717);
}

static double unif(uint64_t *s)
{
	return (double)(rng(s) >> 11) / 9007199254740992.0;
}

/* Relative error of approx against exact, with a little room for double
 * rounding at bucket edges. */
static void assert_within(double approx, double exact)
{
	double tol = KPT_QSKETCH_REL_ERR * (1 + 1e-9) * fabs(exact) + 1e-12;

	if (!(fabs(approx - exact) <= tol))
		fail_msg("approx %.17g exact %.17g: off by %.3g relative", approx, exact,
			 fabs(approx - exact) / fabs(exact));
}

static void check_quantiles(const double *v, size_t n)
{
	static const double qs[] = { 0, 0.001, 0.1, 0.25, 0.5, 0.75, 0.9, 0.999, 1 };
	struct kpt_qsketch s;
	double *copy = malloc(n * sizeof *copy);

	assert_non_null(copy);
	kpt_qsketch_init(&s);
	for (size_t i = 0; i < n; i++)
		assert_int_equal(kpt_qsketch_add(&s, v[i]), 0);
	assert_int_equal(s.count, n);
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++) {
		memcpy(copy, v, n * sizeof *copy);
		assert_within(kpt_qsketch_quantile(&s, qs[i]), kpt_quantile_f64(copy, n, qs[i]));
	}
	kpt_qsketch_release(&s);
	free(copy);
}

static void test_median_within_relative_error_on_random_data(void **state)
{
	static const size_t sizes[] = { 1, 2, 3, 10, 101, 1000, 100000, 300001 };
	uint64_t seed = 20261126;

	(void)state;
	for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
		size_t n = sizes[z];
		double *v = malloc(n * sizeof *v);

		assert_non_null(v);
		/* integer durations spread over 1 ns .. 10 s (log-uniform) */
		for (size_t i = 0; i < n; i++)
			v[i] = floor(exp(unif(&seed) * log(1e10)));
		check_quantiles(v, n);
		/* a kernel: 12.3 us with 2% noise, whole ns */
		for (size_t i = 0; i < n; i++)
			v[i] = round(12300 * (1 + 0.02 * (unif(&seed) + unif(&seed) + unif(&seed) - 1.5)));
		check_quantiles(v, n);
		/* floats with a few exact zeros and heavy ties */
		for (size_t i = 0; i < n; i++)
			v[i] = i % 7 == 0 ? 0 : (double)(1 + rng(&seed) % 5) * 1000.5;
		check_quantiles(v, n);
		free(v);
	}
}

static void test_equal_values_give_that_value(void **state)
{
	struct kpt_qsketch s;

	(void)state;
	kpt_qsketch_init(&s);
	for (int i = 0; i < 100000; i++)
		assert_int_equal(kpt_qsketch_add(&s, 1003.0), 0);
	assert_true(kpt_qsketch_quantile(&s, 0.5) == 1003.0);
	assert_true(kpt_qsketch_quantile(&s, 0) == 1003.0);
	assert_true(kpt_qsketch_quantile(&s, 1) == 1003.0);
	kpt_qsketch_release(&s);
}

static void test_empty_sketch_is_nan(void **state)
{
	struct kpt_qsketch s;

	(void)state;
	kpt_qsketch_init(&s);
	assert_true(isnan(kpt_qsketch_quantile(&s, 0.5)));
	kpt_qsketch_release(&s);
}

static void test_merge_equals_one_sketch_of_both(void **state)
{
	struct kpt_qsketch a, b, all;
	uint64_t seed = 7;

	(void)state;
	kpt_qsketch_init(&a);
	kpt_qsketch_init(&b);
	kpt_qsketch_init(&all);
	for (int i = 0; i < 50000; i++) {
		double v = 100 + (double)(rng(&seed) % 100000);

		assert_int_equal(kpt_qsketch_add(i % 3 ? &a : &b, v), 0);
		assert_int_equal(kpt_qsketch_add(&all, v), 0);
	}
	assert_int_equal(kpt_qsketch_merge(&a, &b), 0);
	assert_int_equal(a.count, all.count);
	for (double q = 0; q <= 1; q += 0.125)
		assert_true(kpt_qsketch_quantile(&a, q) == kpt_qsketch_quantile(&all, q));
	kpt_qsketch_release(&a);
	kpt_qsketch_release(&b);
	kpt_qsketch_release(&all);
}

/* 10 million values of 5 durations: the memory is that of 5 buckets. */
static void test_memory_does_not_grow_with_count(void **state)
{
	struct kpt_qsketch s;

	(void)state;
	kpt_qsketch_init(&s);
	for (uint32_t i = 0; i < 10000000; i++)
		assert_int_equal(kpt_qsketch_add(&s, 1000 + (double)(i * 7 % 5)), 0);
	assert_int_equal(s.count, 10000000);
	assert_true(kpt_qsketch_bytes(&s) < 4096);
	assert_within(kpt_qsketch_quantile(&s, 0.5), 1002);
	kpt_qsketch_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_within_relative_error_on_random_data),
		cmocka_unit_test(test_equal_values_give_that_value),
		cmocka_unit_test(test_empty_sketch_is_nan),
		cmocka_unit_test(test_merge_equals_one_sketch_of_both),
		cmocka_unit_test(test_memory_does_not_grow_with_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
