/* test_strtab.c - string interning. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"
#include "kpt_strtab.h"

static void test_same_bytes_get_same_id(void **state)
{
	struct kpt_strtab t;
	uint32_t a, b, c;

	kpt_strtab_init(&t);
	assert_int_equal(kpt_strtab_intern(&t, "gemm", 4, &a), 0);
	assert_int_equal(kpt_strtab_intern(&t, "gemm_kernel", 4, &b), 0);  /* prefix only */
	assert_int_equal(kpt_strtab_intern(&t, "softmax", 7, &c), 0);
	assert_int_equal(a, 0);
	assert_int_equal(b, 0);
	assert_int_equal(c, 1);
	assert_int_equal(kpt_strtab_count(&t), 2);
	kpt_strtab_release(&t);
}

static void test_empty_string_is_a_string(void **state)
{
	struct kpt_strtab t;
	uint32_t a, b;
	size_t len = 9;

	kpt_strtab_init(&t);
	assert_int_equal(kpt_strtab_intern(&t, "", 0, &a), 0);
	assert_int_equal(kpt_strtab_intern(&t, "x", 0, &b), 0);
	assert_int_equal(a, b);
	assert_string_equal(kpt_strtab_get(&t, a, &len), "");
	assert_int_equal(len, 0);
	kpt_strtab_release(&t);
}

static void test_rejects_embedded_nul(void **state)
{
	struct kpt_strtab t;
	uint32_t id;

	kpt_strtab_init(&t);
	assert_int_equal(kpt_strtab_intern(&t, "a\0b", 3, &id), KPT_E_INVAL);
	assert_int_equal(kpt_strtab_count(&t), 0);
	kpt_strtab_release(&t);
}

static void test_get_out_of_range_is_null(void **state)
{
	struct kpt_strtab t;
	uint32_t id;

	kpt_strtab_init(&t);
	assert_null(kpt_strtab_get(&t, 0, NULL));
	assert_int_equal(kpt_strtab_intern(&t, "a", 1, &id), 0);
	assert_non_null(kpt_strtab_get(&t, 0, NULL));
	assert_null(kpt_strtab_get(&t, 1, NULL));
	assert_null(kpt_strtab_get(&t, UINT32_MAX, NULL));
	kpt_strtab_release(&t);
}

static void test_many_strings_survive_growth(void **state)
{
	struct kpt_strtab t;
	char buf[64];
	uint32_t id;
	const uint32_t n = 100000;

	kpt_strtab_init(&t);
	for (uint32_t i = 0; i < n; i++) {
		int len = snprintf(buf, sizeof buf, "_ZN3kpt6kernelILi%uEEvv", i);

		assert_int_equal(kpt_strtab_intern(&t, buf, (size_t)len, &id), 0);
		assert_int_equal(id, i);
	}
	for (uint32_t i = 0; i < n; i += 997) {
		int len = snprintf(buf, sizeof buf, "_ZN3kpt6kernelILi%uEEvv", i);

		assert_string_equal(kpt_strtab_get(&t, i, NULL), buf);
		assert_int_equal(kpt_strtab_find(&t, buf, (size_t)len, &id), 1);
		assert_int_equal(id, i);
		assert_int_equal(kpt_strtab_intern(&t, buf, (size_t)len, &id), 0);
		assert_int_equal(id, i);
	}
	assert_int_equal(kpt_strtab_count(&t), n);
	assert_int_equal(kpt_strtab_find(&t, "absent", 6, &id), 0);
	kpt_strtab_release(&t);
}

static void test_long_strings_are_kept_whole(void **state)
{
	struct kpt_strtab t;
	size_t n = 1 << 20, len;
	char *s = malloc(n + 1);
	uint32_t id;

	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		s[i] = (char)('a' + i % 26);
	s[n] = '\0';
	kpt_strtab_init(&t);
	assert_int_equal(kpt_strtab_intern(&t, s, n, &id), 0);
	assert_string_equal(kpt_strtab_get(&t, id, &len), s);
	assert_int_equal(len, n);
	kpt_strtab_release(&t);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_bytes_get_same_id),
		cmocka_unit_test(test_empty_string_is_a_string),
		cmocka_unit_test(test_rejects_embedded_nul),
		cmocka_unit_test(test_get_out_of_range_is_null),
		cmocka_unit_test(test_many_strings_survive_growth),
		cmocka_unit_test(test_long_strings_are_kept_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
