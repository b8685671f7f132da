/* test_open_ranges.c - the "any thread" rule: kpt_open_ranges_at. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "kpt_model.h"

#define R(proc, s, e, k) { .kind = (k), .process = (proc), .start_ns = (s), .end_ns = (e) }

static const struct kpt_range ranges[] = {
	R(1, 100, 200, KPT_RANGE_PUSHPOP),   /* 0: outer, process 1 */
	R(1, 120, 150, KPT_RANGE_STARTEND),  /* 1: inner, other thread */
	R(1, 130, 130, KPT_RANGE_MARK),      /* 2: a mark never counts */
	R(0, 100, 0, KPT_RANGE_PUSHPOP),     /* 3: process 0, never closed */
	R(2, 50, 60, KPT_RANGE_PUSHPOP),     /* 4: process 2 */
};

static void test_innermost_open_range_wins(void **state)
{
	struct kpt_open_ranges o;

	assert_int_equal(kpt_open_ranges_init(&o, ranges, 5), 0);
	assert_int_equal(kpt_open_ranges_at(&o, 1, 140), 1);
	assert_int_equal(kpt_open_ranges_at(&o, 1, 130), 1); /* not the mark */
	assert_int_equal(kpt_open_ranges_at(&o, 1, 160), 0); /* inner ended */
	assert_int_equal(kpt_open_ranges_at(&o, 1, 150), 0); /* ended at t */
	kpt_open_ranges_release(&o);
}

static void test_none_outside_and_other_processes(void **state)
{
	struct kpt_open_ranges o;

	assert_int_equal(kpt_open_ranges_init(&o, ranges, 5), 0);
	assert_int_equal(kpt_open_ranges_at(&o, 1, 99), KPT_NONE);
	assert_int_equal(kpt_open_ranges_at(&o, 1, 200), KPT_NONE);
	assert_int_equal(kpt_open_ranges_at(&o, 2, 100), KPT_NONE);
	assert_int_equal(kpt_open_ranges_at(&o, 3, 100), KPT_NONE);
	kpt_open_ranges_release(&o);
}

static void test_never_closed_range_stays_open(void **state)
{
	struct kpt_open_ranges o;

	assert_int_equal(kpt_open_ranges_init(&o, ranges, 5), 0);
	assert_int_equal(kpt_open_ranges_at(&o, 0, 1000000), 3);
	kpt_open_ranges_release(&o);
}

static void test_no_ranges_is_indexed_and_finds_none(void **state)
{
	struct kpt_open_ranges o;

	assert_int_equal(kpt_open_ranges_init(&o, NULL, 0), 0);
	assert_non_null(o.idx);
	assert_int_equal(kpt_open_ranges_at(&o, 0, 5), KPT_NONE);
	kpt_open_ranges_release(&o);
	assert_null(o.idx);
	kpt_open_ranges_release(&o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_innermost_open_range_wins),
		cmocka_unit_test(test_none_outside_and_other_processes),
		cmocka_unit_test(test_never_closed_range_stays_open),
		cmocka_unit_test(test_no_ranges_is_indexed_and_finds_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
