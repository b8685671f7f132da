/* test_units.c - durations and sizes as every table prints them
 * (lib/kpt_units.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kpt_units.h"

static void expect_duration(double ns, const char *want)
{
	char b[KPT_UNITS_BUF];

	assert_string_equal(kpt_fmt_duration(ns, b, sizeof b), want);
}

static void expect_bytes(double bytes, const char *want)
{
	char b[KPT_UNITS_BUF];

	assert_string_equal(kpt_fmt_bytes(bytes, b, sizeof b), want);
}

static void test_duration_units(void **state)
{
	(void)state;
	expect_duration(0, "0 ns");
	expect_duration(812, "812 ns");
	expect_duration(8050, "8.05 us");
	expect_duration(12345, "12.35 us");
	expect_duration(289420, "289.42 us");
	expect_duration(2225000, "2.225 ms");
	expect_duration(2.5e9, "2.50 s");
	expect_duration(0.0 / 0.0, "-");
	expect_duration(-1, "-");
}

static void test_duration_never_rounds_to_the_next_unit(void **state)
{
	(void)state;
	expect_duration(999.6, "1.00 us");
	expect_duration(999996, "1.000 ms");
	expect_duration(999999600.0, "1.00 s");
}

static void test_sizes_as_sizes(void **state)
{
	(void)state;
	expect_bytes(512, "512 B");
	expect_bytes(1536, "1.5 KiB");
	expect_bytes(8388608, "8.0 MiB");
	expect_bytes(100000, "97.7 KiB");
	expect_bytes(80.0 * 1024 * 1024 * 1024, "80.0 GiB");
	expect_bytes(1048575, "1.0 MiB"); /* never "1024.0 KiB" */
	expect_bytes(-5, "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_duration_units),
		cmocka_unit_test(test_duration_never_rounds_to_the_next_unit),
		cmocka_unit_test(test_sizes_as_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
