/* test_slug.c - GPU slugs (docs/architecture.md, "GPU slug": lower case, runs of non-alphanumerics as '-'). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "kpt_model.h"

static void expect_slug(const char *name, const char *want)
{
	char out[128];
	int n = kpt_slug(name, out, sizeof out);

	assert_string_equal(out, want);
	assert_int_equal(n, (int)strlen(want));
}

static void test_slug_of_h100(void **state)
{
	expect_slug("NVIDIA H100 80GB HBM3", "nvidia-h100-80gb-hbm3");
}

static void test_slug_collapses_runs_and_trims(void **state)
{
	expect_slug("  NVIDIA A100-SXM4-80GB  ", "nvidia-a100-sxm4-80gb");
	expect_slug("Tesla T4 (rev. 2)!!", "tesla-t4-rev-2");
	expect_slug("--", "");
	expect_slug("", "");
}

static void test_slug_ignores_non_ascii(void **state)
{
	expect_slug("GeForce\xc2\xae RTX 4090", "geforce-rtx-4090");
}

static void test_slug_truncates_like_snprintf(void **state)
{
	char out[8];
	int n = kpt_slug("NVIDIA H100 80GB HBM3", out, sizeof out);

	assert_int_equal(n, (int)strlen("nvidia-h100-80gb-hbm3"));
	assert_string_equal(out, "nvidia-");
	assert_int_equal(kpt_slug("NVIDIA", NULL, 0), 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slug_of_h100),
		cmocka_unit_test(test_slug_collapses_runs_and_trims),
		cmocka_unit_test(test_slug_ignores_non_ascii),
		cmocka_unit_test(test_slug_truncates_like_snprintf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
