/* test_html.c - human units of the HTML report (viewer/kpt_html.h);
 * its escaping is tests/unit/test_text.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kpt_html.h"

static void test_human_units(void **state)
{
	char b[32];

	(void)state;
	kpt_fmt_ns(b, sizeof b, 812);
	assert_string_equal(b, "812 ns");
	kpt_fmt_ns(b, sizeof b, 12345);
	assert_string_equal(b, "12.3 us");
	kpt_fmt_ns(b, sizeof b, 4.56e6);
	assert_string_equal(b, "4.56 ms");
	kpt_fmt_ns(b, sizeof b, 1.2e9);
	assert_string_equal(b, "1.20 s");
	kpt_fmt_ns(b, sizeof b, 0.0 / 0.0);
	assert_string_equal(b, "-");
	kpt_fmt_bytes(b, sizeof b, 512);
	assert_string_equal(b, "512 B");
	kpt_fmt_bytes(b, sizeof b, 80.0 * 1024 * 1024 * 1024);
	assert_string_equal(b, "80.0 GiB");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_human_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
