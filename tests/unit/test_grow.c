/* test_grow.c - kpt_grow, the one array growth helper. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "kpt_err.h"
#include "kpt_grow.h"

static void test_grows_from_nothing(void **state)
{
	int *a = NULL;
	size_t cap = 0;

	assert_int_equal(kpt_grow(&a, &cap, 1, sizeof *a), 0);
	assert_non_null(a);
	assert_true(cap >= 1);
	a[cap - 1] = 7;
	free(a);
}

static void test_keeps_array_with_room(void **state)
{
	int *a = malloc(4 * sizeof *a), *before = a;
	size_t cap = 4;

	assert_int_equal(kpt_grow(&a, &cap, 4, sizeof *a), 0);
	assert_ptr_equal(a, before);
	assert_int_equal(cap, 4);
	free(a);
}

static void test_doubles_and_keeps_contents(void **state)
{
	int *a = NULL;
	size_t cap = 0, n, grows = 0, last = 0;

	for (n = 0; n < 100000; n++) {
		assert_int_equal(kpt_grow(&a, &cap, n + 1, sizeof *a), 0);
		if (cap != last)
			grows++;
		last = cap;
		a[n] = (int)n;
	}
	for (n = 0; n < 100000; n++)
		assert_int_equal(a[n], (int)n);
	assert_true(grows <= 16); /* doubling: O(log n) reallocs */
	free(a);
}

static void test_takes_a_large_need_at_once(void **state)
{
	char *a = NULL;
	size_t cap = 16;

	a = malloc(cap);
	assert_int_equal(kpt_grow(&a, &cap, 1000, 1), 0);
	assert_int_equal(cap, 1000);
	free(a);
}

static void test_refuses_overflow_and_keeps_array(void **state)
{
	int *a = malloc(8 * sizeof *a), *before = a;
	size_t cap = 8;

	assert_int_equal(kpt_grow(&a, &cap, SIZE_MAX / 2, sizeof *a), KPT_E_NOMEM);
	assert_ptr_equal(a, before);
	assert_int_equal(cap, 8);
	free(a);
}

static void test_u32_capacity_stops_at_uint32_max(void **state)
{
	char *a = NULL;
	uint32_t cap = 0;

	assert_int_equal(kpt_grow_u32(&a, &cap, 3, 1), 0);
	assert_int_equal(cap, 8);
	assert_int_equal(kpt_grow_u32(&a, &cap, (size_t)UINT32_MAX + 1, 1), KPT_E_NOMEM);
	assert_int_equal(cap, 8);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grows_from_nothing),
		cmocka_unit_test(test_keeps_array_with_room),
		cmocka_unit_test(test_doubles_and_keeps_contents),
		cmocka_unit_test(test_takes_a_large_need_at_once),
		cmocka_unit_test(test_refuses_overflow_and_keeps_array),
		cmocka_unit_test(test_u32_capacity_stops_at_uint32_max),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
