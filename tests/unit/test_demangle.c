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

static void canon(const char *mangled, const char *want)
{
	char *s = kpt_mangled_canon(mangled);

	assert_non_null(s);
	assert_string_equal(s, want);
	free(s);
}

/* The same kernel from two checkouts (/tmp/fresh and /work/main: real names
 * of the committed H200 baselines) is one name; another file's is not. */
static void test_canon_zeroes_anonymous_namespace_hashes(void **state)
{
	const char *a = "_ZN54_GLOBAL__N__34955f92_21_attention_fwd_sm90_cu_9306747520attn_fwd_sm90_kernelILb0ELb0EEEv14CUtensorMap_stS1_S1_NS_11sm90_paramsE";
	const char *b = "_ZN54_GLOBAL__N__49e6f729_21_attention_fwd_sm90_cu_9306747520attn_fwd_sm90_kernelILb0ELb0EEEv14CUtensorMap_stS1_S1_NS_11sm90_paramsE";
	const char *want = "_ZN54_GLOBAL__N__00000000_21_attention_fwd_sm90_cu_0000000020attn_fwd_sm90_kernelILb0ELb0EEEv14CUtensorMap_stS1_S1_NS_11sm90_paramsE";
	char *x;

	canon(a, want);
	canon(b, want);
	/* still a valid mangled name, demangling as before */
	x = kpt_demangle(want);
	assert_non_null(x);
	assert_non_null(strstr(x, "(anonymous namespace)::attn_fwd_sm90_kernel<false, false>"));
	free(x);
	canon("_ZN46_GLOBAL__N__0a1b2c3d_15_other_file_cu_ab12cd343fooEv",
	      "_ZN46_GLOBAL__N__00000000_15_other_file_cu_000000003fooEv");
}

static void test_canon_leaves_other_names(void **state)
{
	canon("_Z6kernelPfi", "_Z6kernelPfi");
	canon("nvjet_sm90_tss_128x256_64x4_1x2_h_bz_coopA_TNN", "nvjet_sm90_tss_128x256_64x4_1x2_h_bz_coopA_TNN");
	canon("", "");
	/* a truncated or odd name: zeroes what it can, never reads past the end */
	canon("_ZN99_GLOBAL__N__abc", "_ZN99_GLOBAL__N__000");
	canon("_GLOBAL__N__", "_GLOBAL__N__");
	assert_null(kpt_mangled_canon(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangles_plain_function),
		cmocka_unit_test(test_demangles_templates_and_references),
		cmocka_unit_test(test_plain_names_are_not_demangled),
		cmocka_unit_test(test_invalid_mangled_names_give_null),
		cmocka_unit_test(test_canon_zeroes_anonymous_namespace_hashes),
		cmocka_unit_test(test_canon_leaves_other_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
