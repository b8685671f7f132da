/* test_json_read.c - the bounded JSON reader: trees, streaming, string
 * decoding, exact microsecond-to-nanosecond numbers, and rejected input. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kpt_json_read.h"

/* Parses text as one whole document into a (tree) and returns rc. */
static int parse_doc(const char *text, struct kpt_arena *a, struct kpt_jv **v, struct kpt_diag *d)
{
	struct kpt_jr r;
	int rc;

	kpt_jr_init(&r, text, strlen(text));
	rc = kpt_jr_parse(&r, a, v, d);
	return rc < 0 ? rc : kpt_jr_finish(&r, d);
}

static void test_reads_a_tree(void **state)
{
	struct kpt_arena a;
	struct kpt_jv *v;
	struct kpt_diag d;
	const struct kpt_jv *g;
	uint64_t u;
	int64_t i;

	(void)state;
	kpt_arena_init(&a);
	assert_int_equal(parse_doc(" {\"name\": \"k\", \"grid\": [4, 1, 2], \"neg\": -7, \"t\": true, \"n\": null} ",
				   &a, &v, &d), 0);
	assert_int_equal(v->type, KPT_JV_OBJECT);
	assert_int_equal(v->n, 5);
	assert_string_equal(kpt_jv_str(kpt_jv_get(v, "name")), "k");
	g = kpt_jv_get(v, "grid");
	assert_int_equal(g->type, KPT_JV_ARRAY);
	assert_int_equal(g->n, 3);
	assert_int_equal(kpt_jv_u32_or(g->child->next->next, 0), 2);
	assert_int_equal(kpt_jv_i64(kpt_jv_get(v, "neg"), &i), 0);
	assert_int_equal(i, -7);
	assert_int_equal(kpt_jv_u64(kpt_jv_get(v, "neg"), &u), -1);  /* negative is no u64 */
	assert_int_equal(kpt_jv_get(v, "t")->type, KPT_JV_TRUE);
	assert_int_equal(kpt_jv_get(v, "n")->type, KPT_JV_NULL);
	assert_null(kpt_jv_get(v, "absent"));
	assert_null(kpt_jv_str(kpt_jv_get(v, "grid")));
	assert_int_equal(kpt_jv_u32_or(kpt_jv_get(v, "absent"), 9), 9);
	kpt_arena_release(&a);
}

static void test_decodes_escapes_and_surrogates(void **state)
{
	struct kpt_arena a;
	struct kpt_jv *v;
	struct kpt_diag d;

	(void)state;
	kpt_arena_init(&a);
	assert_int_equal(parse_doc("\"a\\\"b\\\\c\\/\\n\\u00e9\\ud83d\\ude00\"", &a, &v, &d), 0);
	assert_string_equal(v->s, "a\"b\\c/\n\xc3\xa9\xf0\x9f\x98\x80");
	assert_int_equal(v->len, strlen(v->s));
	/* \u0000 and a lone surrogate become U+FFFD: no NUL inside a name */
	assert_int_equal(parse_doc("\"x\\u0000y\\udc00\"", &a, &v, &d), 0);
	assert_string_equal(v->s, "x\xef\xbf\xbdy\xef\xbf\xbd");
	kpt_arena_release(&a);
}

static void test_milli_is_exact_for_epoch_microseconds(void **state)
{
	struct kpt_arena a;
	struct kpt_jv *v;
	struct kpt_diag d;
	int64_t ns;

	(void)state;
	kpt_arena_init(&a);
	/* an epoch in us with ns decimals: 19 digits, beyond a double */
	assert_int_equal(parse_doc("1764000000000030.251", &a, &v, &d), 0);
	assert_int_equal(kpt_jv_milli(v, &ns), 0);
	assert_true(ns == INT64_C(1764000000000030251));
	assert_int_equal(parse_doc("5.0005", &a, &v, &d), 0);      /* rounds half away */
	assert_int_equal(kpt_jv_milli(v, &ns), 0);
	assert_int_equal(ns, 5001);
	assert_int_equal(parse_doc("-1.5", &a, &v, &d), 0);
	assert_int_equal(kpt_jv_milli(v, &ns), 0);
	assert_int_equal(ns, -1500);
	assert_int_equal(parse_doc("12", &a, &v, &d), 0);
	assert_int_equal(kpt_jv_milli(v, &ns), 0);
	assert_int_equal(ns, 12000);
	assert_int_equal(parse_doc("2.5e3", &a, &v, &d), 0);
	assert_int_equal(kpt_jv_milli(v, &ns), 0);
	assert_int_equal(ns, 2500000);
	assert_int_equal(parse_doc("99999999999999999999", &a, &v, &d), 0);
	assert_int_equal(kpt_jv_milli(v, &ns), -1);               /* does not fit */
	assert_int_equal(parse_doc("\"1\"", &a, &v, &d), 0);
	assert_int_equal(kpt_jv_milli(v, &ns), -1);               /* not a number */
	kpt_arena_release(&a);
}

static void test_streams_members_and_elements(void **state)
{
	const char *text = "{\"skip\": {\"x\": [1, 2]}, \"ev\": [ {\"a\": 1}, {\"a\": 2} ], \"z\": 3}";
	struct kpt_arena a;
	struct kpt_jr r;
	struct kpt_diag d;
	const char *key;
	int sum = 0, members = 0;

	(void)state;
	kpt_arena_init(&a);
	kpt_jr_init(&r, text, strlen(text));
	assert_int_equal(kpt_jr_begin_object(&r, &d), 0);
	while (kpt_jr_next_member(&r, &a, &key, &d) == 1) {
		members++;
		if (strcmp(key, "ev") == 0) {
			assert_int_equal(kpt_jr_begin_array(&r, &d), 0);
			while (kpt_jr_next_element(&r, &d) == 1) {
				struct kpt_jv *v;

				assert_int_equal(kpt_jr_parse(&r, &a, &v, &d), 0);
				sum += (int)kpt_jv_u32_or(kpt_jv_get(v, "a"), 100);
			}
		} else {
			assert_int_equal(kpt_jr_parse(&r, NULL, NULL, &d), 0);
		}
	}
	assert_int_equal(members, 3);
	assert_int_equal(sum, 3);
	assert_int_equal(kpt_jr_finish(&r, &d), 0);
	kpt_arena_release(&a);
}

static void test_rejects_bad_json_with_its_offset(void **state)
{
	static const struct {
		const char *text, *msg;
	} cases[] = {
		{ "[1, 2,]", "bad JSON at byte 6: unexpected character" },
		{ "{\"a\" 1}", "bad JSON at byte 5: expected ':'" },
		{ "{\"a\": 1,}", "bad JSON at byte 8: expected a member name" },
		{ "\"abc", "unterminated string" },
		{ "\"a\nb\"", "control character in a string" },
		{ "\"\\x\"", "bad escape" },
		{ "\"\\u12g4\"", "bad \\u escape" },
		{ "01", "more after the top-level value" },
		{ "1.", "no digit after '.'" },
		{ "-", "bad number" },
		{ "1e+", "no digit in the exponent" },
		{ "NaN", "unexpected character" },
		{ "tru", "unexpected character" },
		{ "[1] [2]", "more after the top-level value" },
		{ "", "input ends where a value is due" },
		{ "[1, 2", "expected ']', input ends" },
	};
	struct kpt_arena a;

	(void)state;
	kpt_arena_init(&a);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kpt_jv *v;
		struct kpt_diag d;

		kpt_diag_clear(&d);
		assert_int_equal(parse_doc(cases[i].text, &a, &v, &d), KPT_E_FORMAT);
		if (!strstr(d.msg, cases[i].msg))
			fail_msg("'%s': got '%s', want '%s'", cases[i].text, d.msg, cases[i].msg);
		/* the skipping reader agrees */
		assert_int_equal(parse_doc(cases[i].text, NULL, NULL, &d), KPT_E_FORMAT);
	}
	kpt_arena_release(&a);
}

static void test_rejects_nesting_beyond_max_depth(void **state)
{
	char deep[2 * (KPT_JR_MAX_DEPTH + 2) + 1];
	struct kpt_arena a;
	struct kpt_jv *v;
	struct kpt_diag d;
	size_t n = KPT_JR_MAX_DEPTH + 1;

	(void)state;
	kpt_arena_init(&a);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	assert_int_equal(parse_doc(deep, &a, &v, &d), KPT_E_FORMAT);
	assert_non_null(strstr(d.msg, "nested deeper than 64"));
	n = KPT_JR_MAX_DEPTH;       /* the bound itself is fine */
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	deep[2 * n] = '\0';
	assert_int_equal(parse_doc(deep, &a, &v, &d), 0);
	kpt_arena_release(&a);
}

static void test_bounds_the_nodes_of_one_tree(void **state)
{
	size_t n = KPT_JR_MAX_NODES + 1, len = 2 * n + 2;
	char *big = malloc(len + 1);
	struct kpt_arena a;
	struct kpt_jv *v;
	struct kpt_diag d;

	(void)state;
	assert_non_null(big);
	big[0] = '[';
	for (size_t i = 0; i < n; i++) {
		big[1 + 2 * i] = '0';
		big[2 + 2 * i] = i + 1 < n ? ',' : ']';
	}
	big[2 * n + 1] = '\0';
	kpt_arena_init(&a);
	assert_int_equal(parse_doc(big, &a, &v, &d), KPT_E_FORMAT);
	assert_non_null(strstr(d.msg, "more than 2^20 items"));
	/* skipping builds nothing, so it has no such bound */
	assert_int_equal(parse_doc(big, NULL, NULL, &d), 0);
	kpt_arena_release(&a);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reads_a_tree),
		cmocka_unit_test(test_decodes_escapes_and_surrogates),
		cmocka_unit_test(test_milli_is_exact_for_epoch_microseconds),
		cmocka_unit_test(test_streams_members_and_elements),
		cmocka_unit_test(test_rejects_bad_json_with_its_offset),
		cmocka_unit_test(test_rejects_nesting_beyond_max_depth),
		cmocka_unit_test(test_bounds_the_nodes_of_one_tree),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
