/* test_cli_common.c - the helpers every kptprof subcommand shares: option
 * scanning, value parsing and human units (cli/cli_common.c). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_cli.h"

/* kptprof's command table is in cli/main.c; the helpers only need one. */
static int cmd_stub(int argc, char **argv) { return 0; }
const struct kpt_cmd kpt_cmds[] = {
	{ "report", cmd_stub, "summarise", "kptprof report FILE" },
};
const int kpt_ncmds = 1;

const struct kpt_cmd *kpt_cmd_find(const char *name)
{
	return strcmp(name, "report") == 0 ? &kpt_cmds[0] : NULL;
}

static void check_ns(double ns, const char *want)
{
	char buf[32];

	assert_string_equal(kpt_cli_fmt_ns(ns, buf, sizeof buf), want);
}

static void test_fmt_ns_picks_unit_and_four_digits(void **state)
{
	check_ns(0, "0 ns");
	check_ns(999, "999 ns");
	check_ns(1000, "1.000 us");
	check_ns(12345, "12.35 us");
	check_ns(123456, "123.5 us");
	check_ns(999940, "999.9 us");
	check_ns(999960, "1.000 ms");      /* would round to 1000.0 us */
	check_ns(2.5e9, "2.500 s");
	check_ns(1234.5e9, "1234 s");
}

static void test_fmt_bytes_uses_binary_units(void **state)
{
	char buf[32];

	assert_string_equal(kpt_cli_fmt_bytes(512, buf, sizeof buf), "512 B");
	assert_string_equal(kpt_cli_fmt_bytes(1536, buf, sizeof buf), "1.500 KiB");
	assert_string_equal(kpt_cli_fmt_bytes(52428800, buf, sizeof buf), "50.00 MiB");
	assert_string_equal(kpt_cli_fmt_bytes(85899345920.0, buf, sizeof buf), "80.00 GiB");
}

static void test_opt_takes_separate_and_joined_values(void **state)
{
	char *argv[] = { "report", "--top", "5", "--by=range", "--topx", "--format" };
	const char *v = NULL;
	int i = 1;

	assert_int_equal(kpt_cli_opt(6, argv, &i, "--top", &v), 1);
	assert_string_equal(v, "5");
	assert_int_equal(i, 2);
	i = 3;
	assert_int_equal(kpt_cli_opt(6, argv, &i, "--by", &v), 1);
	assert_string_equal(v, "range");
	assert_int_equal(i, 3);
	i = 4;
	assert_int_equal(kpt_cli_opt(6, argv, &i, "--top", &v), 0);   /* --topx is another option */
	i = 5;
	assert_int_equal(kpt_cli_opt(6, argv, &i, "--format", &v), -1); /* no value left */
}

static void test_parse_u64_checks_range_and_syntax(void **state)
{
	uint64_t v = 7;

	assert_int_equal(kpt_cli_parse_u64("report", "--top", "42", 0, 100, &v), 0);
	assert_int_equal(v, 42);
	assert_int_equal(kpt_cli_parse_u64("report", "--top", "101", 0, 100, &v), KPT_EXIT_ERROR);
	assert_int_equal(kpt_cli_parse_u64("report", "--top", "-1", 0, 100, &v), KPT_EXIT_ERROR);
	assert_int_equal(kpt_cli_parse_u64("report", "--top", "4x", 0, 100, &v), KPT_EXIT_ERROR);
	assert_int_equal(kpt_cli_parse_u64("report", "--top", "", 0, 100, &v), KPT_EXIT_ERROR);
	assert_int_equal(kpt_cli_parse_u64("report", "--top", "99999999999999999999", 0, UINT64_MAX, &v),
			 KPT_EXIT_ERROR);
	assert_int_equal(v, 42);   /* untouched by the failures */
}

static void test_parse_choice_looks_up_a_table(void **state)
{
	static const char *const names[] = { "text", "md", "csv", "json" };
	int idx = -1;

	assert_int_equal(kpt_cli_parse_choice("report", "--format", "csv", names, 4, &idx), 0);
	assert_int_equal(idx, 2);
	assert_int_equal(kpt_cli_parse_choice("report", "--format", "xml", names, 4, &idx), KPT_EXIT_ERROR);
	assert_int_equal(idx, 2);
}

static void test_is_help_knows_both_spellings(void **state)
{
	assert_true(kpt_cli_is_help("--help"));
	assert_true(kpt_cli_is_help("-h"));
	assert_false(kpt_cli_is_help("--helpful"));
	assert_false(kpt_cli_is_help("help"));
}

static void test_color_never_off_a_terminal(void **state)
{
	FILE *f = tmpfile();

	assert_non_null(f);
	unsetenv("NO_COLOR");
	assert_false(kpt_cli_color(fileno(f)));
	assert_int_equal(kpt_cli_term_width(fileno(f)), 0);
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_ns_picks_unit_and_four_digits),
		cmocka_unit_test(test_fmt_bytes_uses_binary_units),
		cmocka_unit_test(test_opt_takes_separate_and_joined_values),
		cmocka_unit_test(test_parse_u64_checks_range_and_syntax),
		cmocka_unit_test(test_parse_choice_looks_up_a_table),
		cmocka_unit_test(test_is_help_knows_both_spellings),
		cmocka_unit_test(test_color_never_off_a_terminal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
