/* test_json.c - the streaming JSON writer: escaping, numbers, structure, errors. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_json.h"

/* A writer on a memory stream; text() finishes and returns the document. */
struct doc {
	char *buf;
	size_t len;
	FILE *f;
	struct kpt_json j;
	struct kpt_diag d;
};

static void doc_open(struct doc *x, int pretty_depth)
{
	memset(x, 0, sizeof *x);
	x->f = open_memstream(&x->buf, &x->len);
	assert_non_null(x->f);
	kpt_json_init(&x->j, x->f, pretty_depth);
}

static int doc_finish(struct doc *x)
{
	int rc = kpt_json_finish(&x->j, &x->d);

	fclose(x->f);
	return rc;
}

static void doc_close(struct doc *x)
{
	free(x->buf);
}

static void check_escaped(const char *in, size_t len, const char *want)
{
	struct doc x;

	doc_open(&x, 0);
	kpt_json_strn(&x.j, in, len);
	assert_int_equal(doc_finish(&x), 0);
	assert_string_equal(x.buf, want);
	doc_close(&x);
}

static void test_escapes_quotes_backslash_and_controls(void **state)
{
	check_escaped("a\"b\\c", 5, "\"a\\\"b\\\\c\"\n");
	check_escaped("\n\t\r\b\f", 5, "\"\\n\\t\\r\\b\\f\"\n");
	check_escaped("\x01\x1f", 2, "\"\\u0001\\u001f\"\n");
	check_escaped("a\0b", 3, "\"a\\u0000b\"\n");
	check_escaped("x</y>&", 6, "\"x</y>&\"\n");
}

static void test_keeps_valid_utf8(void **state)
{
	/* 2-, 3- and 4-byte sequences, the highest code point U+10FFFF. */
	const char *s = "\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf";

	check_escaped(s, strlen(s), "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf\"\n");
}

static void test_replaces_invalid_utf8(void **state)
{
	check_escaped("a\x80z", 3, "\"a\\ufffdz\"\n");           /* stray continuation */
	check_escaped("\xc0\xaf", 2, "\"\\ufffd\\ufffd\"\n");    /* overlong '/' */
	check_escaped("\xe0\x80\xaf", 3, "\"\\ufffd\\ufffd\\ufffd\"\n"); /* overlong */
	check_escaped("\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"\n"); /* surrogate */
	check_escaped("\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"\n"); /* > U+10FFFF */
	check_escaped("ok\xe2\x82", 4, "\"ok\\ufffd\\ufffd\"\n");   /* truncated at the end */
	check_escaped("\xff", 1, "\"\\ufffd\"\n");
}

static void test_null_string_is_null(void **state)
{
	struct doc x;

	doc_open(&x, 0);
	kpt_json_str(&x.j, NULL);
	assert_int_equal(doc_finish(&x), 0);
	assert_string_equal(x.buf, "null\n");
	doc_close(&x);
}

static void test_numbers(void **state)
{
	struct doc x;

	doc_open(&x, 0);
	kpt_json_begin_array(&x.j);
	kpt_json_u64(&x.j, UINT64_MAX);
	kpt_json_i64(&x.j, INT64_MIN);
	kpt_json_double(&x.j, 0.1);
	kpt_json_double(&x.j, 1.0 / 3.0);
	kpt_json_double(&x.j, 1e300);
	kpt_json_double(&x.j, NAN);
	kpt_json_double(&x.j, INFINITY);
	kpt_json_double(&x.j, -INFINITY);
	kpt_json_bool(&x.j, 1);
	kpt_json_bool(&x.j, 0);
	kpt_json_null(&x.j);
	kpt_json_end_array(&x.j);
	assert_int_equal(doc_finish(&x), 0);
	assert_string_equal(x.buf, "[18446744073709551615,-9223372036854775808,0.1,"
			    "0.33333333333333331,1e+300,null,null,null,true,false,null]\n");
	doc_close(&x);
}

static void test_doubles_round_trip(void **state)
{
	static const double vals[] = { 0.1, 2.0 / 3.0, 123456.789, 5e-324, 1.7976931348623157e308, -0.0 };

	for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
		struct doc x;

		doc_open(&x, 0);
		kpt_json_double(&x.j, vals[i]);
		assert_int_equal(doc_finish(&x), 0);
		assert_true(strtod(x.buf, NULL) == vals[i]);
		doc_close(&x);
	}
}

static void test_ns_as_us_keeps_nanoseconds(void **state)
{
	struct doc x;

	doc_open(&x, 0);
	kpt_json_begin_array(&x.j);
	kpt_json_ns_as_us(&x.j, 1234567);
	kpt_json_ns_as_us(&x.j, 5);
	kpt_json_ns_as_us(&x.j, 0);
	kpt_json_ns_as_us(&x.j, -1500);
	kpt_json_ns_as_us(&x.j, INT64_C(1700000000123456789));
	kpt_json_end_array(&x.j);
	assert_int_equal(doc_finish(&x), 0);
	assert_string_equal(x.buf, "[1234.567,0.005,0.000,-1.500,1700000000123456.789]\n");
	doc_close(&x);
}

static void test_nested_containers_and_commas(void **state)
{
	struct doc x;

	doc_open(&x, 0);
	kpt_json_begin_object(&x.j);
	kpt_json_kv_str(&x.j, "a", "x");
	kpt_json_key(&x.j, "b");
	kpt_json_begin_array(&x.j);
	kpt_json_begin_object(&x.j);
	kpt_json_end_object(&x.j);
	kpt_json_begin_array(&x.j);
	kpt_json_end_array(&x.j);
	kpt_json_u64(&x.j, 1);
	kpt_json_end_array(&x.j);
	kpt_json_kv_u64(&x.j, "c", 2);
	kpt_json_kv_i64(&x.j, "d", -3);
	kpt_json_kv_double(&x.j, "e", 0.5);
	kpt_json_kv_bool(&x.j, "f", 1);
	kpt_json_end_object(&x.j);
	assert_int_equal(doc_finish(&x), 0);
	assert_string_equal(x.buf, "{\"a\":\"x\",\"b\":[{},[],1],\"c\":2,\"d\":-3,\"e\":0.5,\"f\":true}\n");
	doc_close(&x);
}

static void test_pretty_depth_puts_elements_on_lines(void **state)
{
	struct doc x;

	doc_open(&x, 2);
	kpt_json_begin_object(&x.j);
	kpt_json_key(&x.j, "ev");
	kpt_json_begin_array(&x.j);
	kpt_json_begin_object(&x.j);
	kpt_json_kv_u64(&x.j, "ts", 1);
	kpt_json_end_object(&x.j);
	kpt_json_begin_object(&x.j);
	kpt_json_end_object(&x.j);
	kpt_json_end_array(&x.j);
	kpt_json_end_object(&x.j);
	assert_int_equal(doc_finish(&x), 0);
	assert_string_equal(x.buf, "{\n  \"ev\": [\n    {\"ts\":1},\n    {}\n  ]\n}\n");
	doc_close(&x);
}

static void test_escapes_keys(void **state)
{
	struct doc x;

	doc_open(&x, 0);
	kpt_json_begin_object(&x.j);
	kpt_json_kv_u64(&x.j, "a\"\n", 1);
	kpt_json_end_object(&x.j);
	assert_int_equal(doc_finish(&x), 0);
	assert_string_equal(x.buf, "{\"a\\\"\\n\":1}\n");
	doc_close(&x);
}

static void test_rejects_value_without_key(void **state)
{
	struct doc x;

	doc_open(&x, 0);
	kpt_json_begin_object(&x.j);
	kpt_json_u64(&x.j, 1);
	kpt_json_end_object(&x.j);
	assert_int_equal(doc_finish(&x), KPT_E_INVAL);
	assert_int_equal(x.d.code, KPT_E_INVAL);
	doc_close(&x);
}

static void test_rejects_unbalanced_documents(void **state)
{
	struct doc x;

	doc_open(&x, 0);
	kpt_json_begin_array(&x.j);
	assert_int_equal(doc_finish(&x), KPT_E_INVAL);
	doc_close(&x);

	doc_open(&x, 0);
	kpt_json_begin_array(&x.j);
	kpt_json_end_object(&x.j);
	assert_int_equal(doc_finish(&x), KPT_E_INVAL);
	doc_close(&x);

	doc_open(&x, 0);
	assert_int_equal(doc_finish(&x), KPT_E_INVAL);   /* no value at all */
	doc_close(&x);

	doc_open(&x, 0);
	kpt_json_u64(&x.j, 1);
	kpt_json_u64(&x.j, 2);                         /* two top-level values */
	assert_int_equal(doc_finish(&x), KPT_E_INVAL);
	doc_close(&x);

	doc_open(&x, 0);
	kpt_json_begin_object(&x.j);
	kpt_json_key(&x.j, "dangling");
	kpt_json_end_object(&x.j);
	assert_int_equal(doc_finish(&x), KPT_E_INVAL);
	doc_close(&x);
}

static void test_rejects_nesting_beyond_max_depth(void **state)
{
	struct doc x;

	doc_open(&x, 0);
	for (int i = 0; i <= KPT_JSON_MAX_DEPTH; i++)
		kpt_json_begin_array(&x.j);
	assert_int_equal(doc_finish(&x), KPT_E_INVAL);
	doc_close(&x);
}

static void test_reports_write_errors(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	struct kpt_json j;
	struct kpt_diag d;

	if (!f)
		skip();
	kpt_json_init(&j, f, 0);
	kpt_json_begin_array(&j);
	for (int i = 0; i < 100000; i++)
		kpt_json_str(&j, "some text that fills the stdio buffer");
	kpt_json_end_array(&j);
	assert_int_equal(kpt_json_finish(&j, &d), KPT_E_IO);
	assert_non_null(strstr(d.msg, "cannot write JSON"));
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes_quotes_backslash_and_controls),
		cmocka_unit_test(test_keeps_valid_utf8),
		cmocka_unit_test(test_replaces_invalid_utf8),
		cmocka_unit_test(test_null_string_is_null),
		cmocka_unit_test(test_numbers),
		cmocka_unit_test(test_doubles_round_trip),
		cmocka_unit_test(test_ns_as_us_keeps_nanoseconds),
		cmocka_unit_test(test_nested_containers_and_commas),
		cmocka_unit_test(test_pretty_depth_puts_elements_on_lines),
		cmocka_unit_test(test_escapes_keys),
		cmocka_unit_test(test_rejects_value_without_key),
		cmocka_unit_test(test_rejects_unbalanced_documents),
		cmocka_unit_test(test_rejects_nesting_beyond_max_depth),
		cmocka_unit_test(test_reports_write_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
