/* test_demangle.c - C++ names for display via __cxa_demangle. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kpt_demangle.h"

static void expect(const char *mangled, const char *want)
{
	char *s = kpt_demangle(mangled);

	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
}

static void test_demangles_plain_function(void **state)
{
	expect("_Z6kernelPfi", "kernel(float*, int)");
}

static void test_demangles_templates_and_references(void **state)
{
	expect("_ZN3kpt4gemmILi128ELi64EN3kpt7functor3addIfEEEEvPKvPvmRKi",
	       "void kpt::gemm<128, 64, kpt::functor::add<float> >(void const*, void*, unsigned long, int const&)");
}

static void test_plain_names_are_not_demangled(void **state)
{
	assert_null(kpt_demangle("ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn"));
	assert_null(kpt_demangle("i"));  /* would be the type "int" */
	assert_null(kpt_demangle(""));
	assert_null(kpt_demangle(NULL));
}

static void test_invalid_mangled_names_give_null(void **state)
{
	assert_null(kpt_demangle("_Z"));
	assert_null(kpt_demangle("_Z3abcIiE<>&x"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangles_plain_function),
		cmocka_unit_test(test_demangles_templates_and_references),
		cmocka_unit_test(test_plain_names_are_not_demangled),
		cmocka_unit_test(test_invalid_mangled_names_give_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
