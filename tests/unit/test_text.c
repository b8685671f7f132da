/* test_text.c - untrusted text cleaned per sink (lib/kpt_text.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kpt_text.h"

/* s (len bytes) written for sink into a malloc'd string. */
static char *clean_n(enum kpt_text_sink sink, const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);

	assert_non_null(fp);
	assert_int_equal(kpt_text_write_n(fp, sink, s, len), 0);
	fclose(fp);
	return buf;
}

static char *clean(enum kpt_text_sink sink, const char *s)
{
	return clean_n(sink, s, strlen(s));
}

static void expect(enum kpt_text_sink sink, const char *in, const char *want)
{
	char *got = clean(sink, in);

	assert_string_equal(got, want);
	free(got);
}

static void test_term_shows_controls_as_escapes(void **state)
{
	(void)state;
	expect(KPT_TEXT_TERM, "a\033[2Jb\r\nc\td\x7f" "e\x01", "a\\e[2Jb\\r\\nc\\td\\x7f" "e\\x01");
	/* C1 controls as code points (CSI U+009B), invalid bytes as \xNN */
	expect(KPT_TEXT_TERM, "x\xc2\x9b" "31m y\x9b" "z\xff", "x\\u{009b}31m y\\x9bz\\xff");
	/* bidi override and line separator */
	expect(KPT_TEXT_TERM, "a\xe2\x80\xae" "b\xe2\x80\xa8", "a\\u{202e}b\\u{2028}");
}

static void test_term_keeps_names_and_utf8(void **state)
{
	(void)state;
	expect(KPT_TEXT_TERM, "void k<float, 128>(float const*) \xce\xbcs \xe2\x9c\x93 'q' \"d\" `b` \\",
	       "void k<float, 128>(float const*) \xce\xbcs \xe2\x9c\x93 'q' \"d\" `b` \\");
}

static void test_embedded_nul_with_explicit_length(void **state)
{
	char *e = clean_n(KPT_TEXT_TERM, "a\0b", 3);

	(void)state;
	assert_string_equal(e, "a\\x00b");
	free(e);
	e = clean_n(KPT_TEXT_MARKUP, "a\0<", 3);
	assert_string_equal(e, "a\xef\xbf\xbd&lt;");
	free(e);
}

static void test_markup_escapes_for_text_and_attributes(void **state)
{
	(void)state;
	expect(KPT_TEXT_MARKUP, "void k<float, (a&b)>(\"x\", 'y')",
	       "void k&lt;float, (a&amp;b)&gt;(&quot;x&quot;, &#39;y&#39;)");
	expect(KPT_TEXT_MARKUP, "</script><script>alert(1)</script>",
	       "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
	/* TAB LF CR never raw (an attribute keeps them), other controls U+FFFD */
	expect(KPT_TEXT_MARKUP, "a\tb\nc\rd\033e\x7f", "a&#9;b&#10;c&#13;d\xef\xbf\xbd" "e\xef\xbf\xbd");
	expect(KPT_TEXT_MARKUP, "caf\xc3\xa9 \xf0\x9f\x9a\x80", "caf\xc3\xa9 \xf0\x9f\x9a\x80");
}

static void test_invalid_utf8_becomes_replacement_character(void **state)
{
	(void)state;
	/* stray continuation, overlong '/', surrogate, truncated sequence */
	expect(KPT_TEXT_MARKUP, "a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe2\x9c",
	       "a\xef\xbf\xbd" "b\xef\xbf\xbd\xef\xbf\xbd" "c\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
	       "d\xef\xbf\xbd\xef\xbf\xbd");
	assert_int_equal(kpt_utf8_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0); /* > U+10FFFF */
	assert_int_equal(kpt_utf8_len((const unsigned char *)"\xe2\x9c\x93", 3), 3);
	assert_int_equal(kpt_utf8_len((const unsigned char *)"\xe2\x9c\x93", 2), 0);
}

static void test_markdown_text_escapes_markup(void **state)
{
	(void)state;
	expect(KPT_TEXT_MD, "x|y`z*<T>&_\n[a]", "x\\|y\\`z\\*\\<T\\>\\&\\_\xef\xbf\xbd\\[a\\]");
	expect(KPT_TEXT_MD, "H100 80GB", "H100 80GB");
	expect(KPT_TEXT_MD, "a\\b 580.1 @team $x$", "a\\\\b 580.1 \\@team \\$x\\$");
	/* what would start a block at the start of a list item */
	expect(KPT_TEXT_MD, "- x", "\\- x");
	expect(KPT_TEXT_MD, "12. x", "12\\. x");
	expect(KPT_TEXT_MD, "12 x.", "12 x.");
	expect(KPT_TEXT_MD, "580.159.04", "580.159.04");
	expect(KPT_TEXT_MD, "-x --- =", "-x --- =");
	expect(KPT_TEXT_MD, "---", "\\---");
}

static void test_markdown_code_span_has_no_backslashes(void **state)
{
	(void)state;
	/* GFM: inside a code span a backslash is literal: no "\_" */
	expect(KPT_TEXT_MD_CODE, "heldout_h100_plant.kpt", "`heldout_h100_plant.kpt`");
	expect(KPT_TEXT_MD_CODE, "a\\b|c", "`a\\b|c`");
	/* a fence longer than the longest backtick run, padded next to one */
	expect(KPT_TEXT_MD_CODE, "a``b`c", "```a``b`c```");
	expect(KPT_TEXT_MD_CODE, "`x", "`` `x ``");
	expect(KPT_TEXT_MD_CODE, " x ", "`  x  `");
	expect(KPT_TEXT_MD_CODE, "", "` `");
	expect(KPT_TEXT_MD_CODE, "a\nb", "`a\xef\xbf\xbd" "b`");
	/* in a table cell the table parser removes the backslash of "\|" first */
	expect(KPT_TEXT_MD_CELL_CODE, "a|b_c", "`a\\|b_c`");
}

static void test_csv_quotes_when_needed(void **state)
{
	(void)state;
	expect(KPT_TEXT_CSV, "plain", "plain");
	expect(KPT_TEXT_CSV, "f<a, b>(\"x\")", "\"f<a, b>(\"\"x\"\")\"");
	expect(KPT_TEXT_CSV, "two\nlines", "\"two\nlines\"");
	expect(KPT_TEXT_CSV, "esc\033x\xff", "esc\033x\xef\xbf\xbd");
}

static void test_gnuplot_strings_survive_quotes(void **state)
{
	(void)state;
	expect(KPT_TEXT_GNUPLOT, "it's system(\"rm\") `cmd` a\\b", "'it''s system(\"rm\") `cmd` a\\b'");
	expect(KPT_TEXT_GNUPLOT, "a\nb\033", "'a\xef\xbf\xbd" "b\xef\xbf\xbd'");
	expect(KPT_TEXT_GNUPLOT_FIELD, "say \"hi\"\n", "\"say 'hi'\xef\xbf\xbd\"");
}

static void test_file_names_use_a_safe_alphabet(void **state)
{
	char long_name[300];

	(void)state;
	expect(KPT_TEXT_FILENAME, "nvidia-h100", "nvidia-h100");
	expect(KPT_TEXT_FILENAME, "../../etc/passwd", "_._.._etc_passwd");
	expect(KPT_TEXT_FILENAME, "..", "_.");
	expect(KPT_TEXT_FILENAME, "-rf", "_rf");
	expect(KPT_TEXT_FILENAME, "", "_");
	expect(KPT_TEXT_FILENAME, "a b\033\xc3\xa9", "a_b___");
	memset(long_name, 'x', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	{
		char *e = clean(KPT_TEXT_FILENAME, long_name);

		assert_int_equal(strlen(e), 120);
		free(e);
	}
}

static void test_null_writes_the_empty_form(void **state)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);

	(void)state;
	assert_int_equal(kpt_text_write(fp, KPT_TEXT_MARKUP, NULL), 0);
	fclose(fp);
	assert_int_equal(n, 0);
	free(buf);
}

static void test_pool_copies_only_what_changes(void **state)
{
	struct kpt_text_pool p = { 0 };
	const char *plain = "moe.layer.e8", *evil = "x\033[31m";
	const char *a = kpt_text_pool_clean(&p, KPT_TEXT_TERM, plain);
	const char *b = kpt_text_pool_clean(&p, KPT_TEXT_TERM, evil);
	const char *c = kpt_text_pool_clean(&p, KPT_TEXT_TERM, "caf\xc3\xa9");

	(void)state;
	assert_ptr_equal(a, plain);
	assert_string_equal(b, "x\\e[31m");
	assert_string_equal(c, "caf\xc3\xa9");
	assert_non_null(p.head); /* the evil one was copied */
	assert_string_equal(kpt_text_pool_clean(&p, KPT_TEXT_MD, "- item"), "\\- item");
	kpt_text_pool_release(&p);
	assert_null(p.head);
}

static void test_column_cuts_keep_rows_apart(void **state)
{
	const char *s[5] = {
		"fp8.quant.e4m3.bf16.block128x128.8192x8192",
		"fp8.quant.e4m3.bf16.block1x128.8192x8192",
		"fp8.quant.e4m3.bf16.per_tensor.8192x8192",
		"fp8.quant.e4m3.bf16.per_token.8192x8192",
		"memory.copy.4MiB",
	};
	char *out[5];

	(void)state;
	assert_int_equal(kpt_text_column(s, 5, 0, KPT_CUT_TAIL, out), 0);
	for (int i = 0; i < 5; i++)
		assert_string_equal(out[i], s[i]);
	kpt_text_column_free(out, 5);
	for (size_t cols = 8; cols <= 30; cols++) {
		assert_int_equal(kpt_text_column(s, 5, cols, KPT_CUT_TAIL, out), 0);
		for (int i = 0; i < 5; i++)
			for (int j = i + 1; j < 5; j++)
				assert_string_not_equal(out[i], out[j]);
		/* below 12 columns a window cannot show enough: whole names */
		for (int i = 0; cols >= 12 && i < 5; i++)
			assert_true(kpt_text_columns(out[i]) <= cols);
		kpt_text_column_free(out, 5);
	}
	assert_int_equal(kpt_text_column(s, 5, 20, KPT_CUT_TAIL, out), 0);
	assert_string_equal(out[4], "memory.copy.4MiB");
	assert_int_equal(strncmp(out[0], "...", 3), 0);
	kpt_text_column_free(out, 5);
}

/* The forms of name, joined by " | ". */
static void expect_forms(const char *name, const char *want)
{
	char **f, *got = NULL;
	size_t n, len = 0;
	FILE *fp = open_memstream(&got, &len);

	assert_non_null(fp);
	assert_int_equal(kpt_text_cxx_forms(name, &f, &n), 0);
	for (size_t i = 0; i < n; i++)
		fprintf(fp, "%s%s", i ? " | " : "", f[i]);
	fclose(fp);
	kpt_text_cxx_forms_free(f, n);
	assert_string_equal(got, want);
	free(got);
}

static void test_cxx_forms_drop_return_type_parameters_then_arguments(void **state)
{
	(void)state;
	expect_forms("void foo<float, 128, true>(CUtensorMap, int)",
		     "void foo<float, 128, true>(CUtensorMap, int) | foo<float,128,true> | foo<float,128,...> | "
		     "foo<float,...> | foo<...>");
	expect_forms("void (anonymous namespace)::attn_fwd_sm90_kernel<false, true>(CUtensorMap_st, "
		     "(anonymous namespace)::sm90_params)",
		     "void (anonymous namespace)::attn_fwd_sm90_kernel<false, true>(CUtensorMap_st, "
		     "(anonymous namespace)::sm90_params) | attn_fwd_sm90_kernel<false,true> | "
		     "attn_fwd_sm90_kernel<false,...> | attn_fwd_sm90_kernel<...>");
	expect_forms("(anonymous namespace)::moe_scan(int const*, int, int*, int*)",
		     "(anonymous namespace)::moe_scan(int const*, int, int*, int*) | moe_scan");
}

static void test_cxx_forms_of_nested_templates(void **state)
{
	(void)state;
	expect_forms("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
		     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>)",
		     "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
		     "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, at::detail::Array<char*, 1>) | "
		     "at::native::vectorized_elementwise_kernel<4,at::native::FillFunctor<float>,at::detail::Array<char*,1>> | "
		     "vectorized_elementwise_kernel<4,at::native::FillFunctor<float>,at::detail::Array<char*,1>> | "
		     "vectorized_elementwise_kernel<4,FillFunctor<float>,Array<char*,1>> | "
		     "vectorized_elementwise_kernel<4,FillFunctor<...>,Array<...>> | "
		     "vectorized_elementwise_kernel<4,FillFunctor<...>,...> | vectorized_elementwise_kernel<4,...> | "
		     "vectorized_elementwise_kernel<...>");
}

static void test_cxx_forms_of_operators_and_lambdas(void **state)
{
	(void)state;
	expect_forms("Foo::operator()(int) const", "Foo::operator()(int) const | Foo::operator()");
	expect_forms("auto ns::Op<int>::operator<<(int)",
		     "auto ns::Op<int>::operator<<(int) | ns::Op<int>::operator<< | Op<int>::operator<< | "
		     "Op<...>::operator<<");
	expect_forms("void kernel<[lambda(int)#1]>(int)",
		     "void kernel<[lambda(int)#1]>(int) | kernel<[lambda(int)#1]> | kernel<[...]> | kernel<...>");
	expect_forms("void bar<main::{lambda(int)#1}>(int)",
		     "void bar<main::{lambda(int)#1}>(int) | bar<main::{lambda(int)#1}> | bar<{lambda(int)#1}> | "
		     "bar<{...}> | bar<...>");
}

static void test_cxx_forms_leave_other_names_whole(void **state)
{
	(void)state;
	expect_forms("nvjet_sm90_qqtst_144x128_128x6_1x2_h_bz_coopA_algo2_TNN",
		     "nvjet_sm90_qqtst_144x128_128x6_1x2_h_bz_coopA_algo2_TNN");
	expect_forms("step time (NVTX range)", "step time (NVTX range)");
	expect_forms("", "");
}

static void test_column_fits_cxx_names_by_their_forms(void **state)
{
	const char *s[1] = { "void (anonymous namespace)::attn_fwd_kernel<__nv_bfloat16, 64, 128>(fwd_params)" };
	char *out[1];

	(void)state;
	assert_int_equal(kpt_text_column(s, 1, 40, KPT_CUT_CXX, out), 0);
	assert_string_equal(out[0], "attn_fwd_kernel<__nv_bfloat16,64,128>");
	kpt_text_column_free(out, 1);
	assert_int_equal(kpt_text_column(s, 1, 24, KPT_CUT_CXX, out), 0);
	assert_string_equal(out[0], "attn_fwd_kernel<...>");
	kpt_text_column_free(out, 1);
	assert_int_equal(kpt_text_column(s, 1, 20, KPT_CUT_MIDDLE, out), 0);
	assert_int_equal(kpt_text_columns(out[0]), 20);
	kpt_text_column_free(out, 1);
}

/* Names that differ only in template arguments keep the arguments that
 * differ; names alike but for parameters keep their parameters. */
static void test_column_keeps_what_tells_cxx_names_apart(void **state)
{
	const char *s[4] = {
		"void (anonymous namespace)::attn_fwd_sm90_kernel<false, true>(CUtensorMap_st, CUtensorMap_st)",
		"void (anonymous namespace)::attn_fwd_sm90_kernel<false, false>(CUtensorMap_st, CUtensorMap_st)",
		"void (anonymous namespace)::attn_fwd_sm90_kernel<true, false>(CUtensorMap_st, CUtensorMap_st)",
		"void very_long_kernel_name_without_any_template_arguments_at_all_here(int)",
	};
	const char *p[2] = { "void scale(float*, int)", "void scale(double*, int)" };
	char *out[4];

	(void)state;
	for (size_t cols = 14; cols <= 60; cols++) {
		assert_int_equal(kpt_text_column(s, 4, cols, KPT_CUT_CXX, out), 0);
		for (int i = 0; i < 4; i++) {
			assert_true(kpt_text_columns(out[i]) <= cols);
			for (int j = i + 1; j < 4; j++)
				assert_string_not_equal(out[i], out[j]);
		}
		kpt_text_column_free(out, 4);
	}
	assert_int_equal(kpt_text_column(s, 4, 36, KPT_CUT_CXX, out), 0);
	assert_string_equal(out[0], "attn_fwd_sm90_kernel<false,true>");
	assert_string_equal(out[1], "attn_fwd_sm90_kernel<false,false>");
	assert_string_equal(out[2], "attn_fwd_sm90_kernel<true,false>");
	kpt_text_column_free(out, 4);
	assert_int_equal(kpt_text_column(p, 2, 30, KPT_CUT_CXX, out), 0);
	assert_string_equal(out[0], "void scale(float*, int)");
	assert_string_equal(out[1], "void scale(double*, int)");
	kpt_text_column_free(out, 2);
}

/* Names whose shorter forms are alike show the template argument that
 * tells them apart, not a longer form cut in the middle. */
static void test_column_shows_the_differing_template_argument(void **state)
{
	const char *s[2] = {
		"void at::mta<at::TensorListMetadata<1>, at::BinaryOpScalarFunctor<float, 1>, std::multiplies<float>, "
		"float>(int, at::TensorListMetadata<1>)",
		"void at::mta<at::TensorListMetadata<1>, at::UnaryOpFunctor<float, 2>, at::Sqrt<float> >(int, "
		"at::TensorListMetadata<1>)",
	};
	char *out[2], *f;

	(void)state;
	f = kpt_text_cxx_arg_form(s[1], 1, 0);
	assert_string_equal(f, "mta<...,UnaryOpFunctor<...>,...>");
	free(f);
	f = kpt_text_cxx_arg_form(s[1], 2, 1);
	assert_string_equal(f, "mta<...,Sqrt<float>>");
	free(f);
	assert_null(kpt_text_cxx_arg_form(s[1], 3, 0));
	assert_null(kpt_text_cxx_arg_form("plain_kernel(int)", 0, 0));
	assert_int_equal(kpt_text_column(s, 2, 40, KPT_CUT_CXX, out), 0);
	assert_string_equal(out[0], "mta<...,BinaryOpScalarFunctor<...>,...>");
	assert_string_equal(out[1], "mta<...,UnaryOpFunctor<...>,...>");
	kpt_text_column_free(out, 2);
	/* narrower: another argument that differs, or the argument's tail */
	assert_int_equal(kpt_text_column(s, 2, 30, KPT_CUT_CXX, out), 0);
	assert_true(strstr(out[0], "multiplies") || strstr(out[0], "BinaryOp"));
	assert_true(strstr(out[1], "Sqrt") || strstr(out[1], "UnaryOp"));
	assert_true(kpt_text_columns(out[0]) <= 30 && kpt_text_columns(out[1]) <= 30);
	kpt_text_column_free(out, 2);
}

static void test_wrap_breaks_at_spaces_under_the_width(void **state)
{
	char *got = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&got, &len);

	(void)state;
	assert_non_null(fp);
	assert_int_equal(kpt_text_wrap(fp, "one two three four five", 4, 14, 4), 0);
	assert_int_equal(kpt_text_wrap(fp, "abcdefghijklmnop", 0, 10, 2), 0);
	assert_int_equal(kpt_text_wrap(fp, "no limit at all", 0, 0, 2), 0);
	fclose(fp);
	assert_string_equal(got, "one two\n    three four\n    five\n"
				 "abcdefghij\n  klmnop\n"
				 "no limit at all\n");
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_term_shows_controls_as_escapes),
		cmocka_unit_test(test_term_keeps_names_and_utf8),
		cmocka_unit_test(test_embedded_nul_with_explicit_length),
		cmocka_unit_test(test_markup_escapes_for_text_and_attributes),
		cmocka_unit_test(test_invalid_utf8_becomes_replacement_character),
		cmocka_unit_test(test_markdown_text_escapes_markup),
		cmocka_unit_test(test_markdown_code_span_has_no_backslashes),
		cmocka_unit_test(test_csv_quotes_when_needed),
		cmocka_unit_test(test_gnuplot_strings_survive_quotes),
		cmocka_unit_test(test_file_names_use_a_safe_alphabet),
		cmocka_unit_test(test_null_writes_the_empty_form),
		cmocka_unit_test(test_pool_copies_only_what_changes),
		cmocka_unit_test(test_column_cuts_keep_rows_apart),
		cmocka_unit_test(test_cxx_forms_drop_return_type_parameters_then_arguments),
		cmocka_unit_test(test_cxx_forms_of_nested_templates),
		cmocka_unit_test(test_cxx_forms_of_operators_and_lambdas),
		cmocka_unit_test(test_cxx_forms_leave_other_names_whole),
		cmocka_unit_test(test_column_fits_cxx_names_by_their_forms),
		cmocka_unit_test(test_column_keeps_what_tells_cxx_names_apart),
		cmocka_unit_test(test_column_shows_the_differing_template_argument),
		cmocka_unit_test(test_wrap_breaks_at_spaces_under_the_width),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
