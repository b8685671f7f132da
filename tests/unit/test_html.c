/* test_html.c - HTML escaping and human units of the report
 * (viewer/kpt_html.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kpt_html.h"

/* Escapes s (len bytes) into a malloc'd string. */
static char *escaped_n(const char *s, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);

	assert_non_null(fp);
	assert_int_equal(kpt_html_escape_n(fp, s, len), 0);
	fclose(fp);
	return buf;
}

static char *escaped(const char *s)
{
	return escaped_n(s, strlen(s));
}

static void test_escapes_markup_characters_of_kernel_names(void **state)
{
	char *e = escaped("void k<float, (a&b)>(\"x\", 'y')");

	(void)state;
	assert_string_equal(e, "void k&lt;float, (a&amp;b)&gt;(&quot;x&quot;, &#39;y&#39;)");
	free(e);
}

static void test_leaves_plain_text_and_utf8_alone(void **state)
{
	char *e = escaped("plain_kernel \xce\xbc" "s \xe2\x9c\x93 \xf0\x9f\x9a\x80 tab\tnl\n");

	(void)state;
	assert_string_equal(e, "plain_kernel \xce\xbc" "s \xe2\x9c\x93 \xf0\x9f\x9a\x80 tab\tnl\n");
	free(e);
}

static void test_invalid_utf8_becomes_replacement_character(void **state)
{
	/* stray continuation, overlong '/', surrogate, truncated sequence */
	char *e = escaped("a\x80" "b\xc0\xaf" "c\xed\xa0\x80" "d\xe2\x9c");

	(void)state;
	assert_string_equal(e, "a&#xfffd;b&#xfffd;&#xfffd;c&#xfffd;&#xfffd;&#xfffd;d&#xfffd;&#xfffd;");
	free(e);
}

static void test_control_characters_replaced(void **state)
{
	char *e = escaped("x\x01y\x1b[31mz\x7f");

	(void)state;
	assert_string_equal(e, "x&#xfffd;y&#xfffd;[31mz&#xfffd;");
	free(e);
}

static void test_embedded_nul_with_explicit_length(void **state)
{
	char *e = escaped_n("a\0<", 3);

	(void)state;
	assert_string_equal(e, "a&#xfffd;&lt;");
	free(e);
}

static void test_null_writes_nothing(void **state)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *fp = open_memstream(&buf, &n);

	(void)state;
	assert_int_equal(kpt_html_escape(fp, NULL), 0);
	fclose(fp);
	assert_int_equal(n, 0);
	free(buf);
}

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
		cmocka_unit_test(test_escapes_markup_characters_of_kernel_names),
		cmocka_unit_test(test_leaves_plain_text_and_utf8_alone),
		cmocka_unit_test(test_invalid_utf8_becomes_replacement_character),
		cmocka_unit_test(test_control_characters_replaced),
		cmocka_unit_test(test_embedded_nul_with_explicit_length),
		cmocka_unit_test(test_null_writes_nothing),
		cmocka_unit_test(test_human_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
