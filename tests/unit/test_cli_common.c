/* test_cli_common.c - the helpers every kptprof subcommand shares: option
 * scanning, value parsing and human units (cli/cli_common.c), and the one
 * option parser over a struct kpt_opt table (cli/cli_opt.c). */
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
	{ .name = "report", .fn = cmd_stub, .summary = "summarise", .usage = "kptprof report FILE" },
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

/* the CLI's units are lib/kpt_units.h's, the ones diff prints */
static void test_fmt_ns_picks_unit_and_four_digits(void **state)
{
	check_ns(0, "0 ns");
	check_ns(999, "999 ns");
	check_ns(1000, "1.00 us");
	check_ns(8050, "8.05 us");
	check_ns(12345, "12.35 us");
	check_ns(999996, "1.000 ms");      /* would round to 1000.00 us */
	check_ns(2.5e9, "2.50 s");
}

static void test_fmt_bytes_uses_binary_units(void **state)
{
	char buf[32];

	assert_string_equal(kpt_cli_fmt_bytes(512, buf, sizeof buf), "512 B");
	assert_string_equal(kpt_cli_fmt_bytes(1536, buf, sizeof buf), "1.5 KiB");
	assert_string_equal(kpt_cli_fmt_bytes(52428800, buf, sizeof buf), "50.0 MiB");
	assert_string_equal(kpt_cli_fmt_bytes(85899345920.0, buf, sizeof buf), "80.0 GiB");
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

/* An args struct with one option of every kind. */
struct t_args {
	int flag, choice;
	const char *str;
	uint64_t n;
	double x;
};

static const char *const t_choices[] = { "kernel", "range", NULL };

static const struct kpt_opt t_opts[] = {
	KPT_OPT_OPERAND("FILE", "a recording"),
	KPT_OPT_FLAG('q', "quiet", struct t_args, flag, "no table"),
	KPT_OPT_STRING('o', "output", "F", struct t_args, str, "output file"),
	KPT_OPT_U64(0, "top", "N", struct t_args, n, 1, 100, "rows"),
	KPT_OPT_DOUBLE(0, "alpha", "A", struct t_args, x, 1e-9, 0.5, "error rate"),
	KPT_OPT_CHOICE(0, "by", "kernel|range", struct t_args, choice, t_choices, "grouping"),
	KPT_OPT_END,
};

static void test_opt_parse_stores_every_kind_and_keeps_operands_in_order(void **state)
{
	char *argv[] = { "t", "a.kpt", "-q", "--output=o.txt", "--top", "7", "b.kpt", "--alpha", "0.01",
			 "--by", "range", "-", "--", "--top", NULL };
	struct t_args a = { 0 };
	int n = -1;

	assert_int_equal(kpt_opt_parse("report", t_opts, &a, 14, argv, &n, NULL), KPT_OPT_GO);
	assert_int_equal(a.flag, 1);
	assert_string_equal(a.str, "o.txt");
	assert_int_equal(a.n, 7);
	assert_true(a.x > 0.0099 && a.x < 0.0101);
	assert_int_equal(a.choice, 1);
	/* operands, "-" among them, and what follows "--" */
	assert_int_equal(n, 4);
	assert_string_equal(argv[1], "a.kpt");
	assert_string_equal(argv[2], "b.kpt");
	assert_string_equal(argv[3], "-");
	assert_string_equal(argv[4], "--top");
}

static void test_opt_parse_stops_at_dashdash_when_asked(void **state)
{
	char *argv[] = { "t", "-o", "x", "--", "prog", "--top", NULL };
	struct t_args a = { 0 };
	int n = -1, rest = -1;

	assert_int_equal(kpt_opt_parse("report", t_opts, &a, 6, argv, &n, &rest), KPT_OPT_GO);
	assert_int_equal(n, 0);
	assert_int_equal(rest, 4);
	assert_string_equal(argv[rest], "prog");
	assert_int_equal(a.n, 0);  /* --top after "--" belongs to the program */
}

static void test_opt_parse_refuses_unknown_options_and_bad_values(void **state)
{
	char *unknown[] = { "t", "--tpo", "3", NULL };
	char *range[] = { "t", "--top", "101", NULL };
	char *choice[] = { "t", "--by", "rank", NULL };
	char *missing[] = { "t", "--top", NULL };
	char *flagval[] = { "t", "--quiet=1", NULL };
	char *empty[] = { "t", "-o", "", NULL };
	struct t_args a = { 0 };
	int n;

	assert_int_equal(kpt_opt_parse("report", t_opts, &a, 3, unknown, &n, NULL), KPT_EXIT_ERROR);
	assert_int_equal(kpt_opt_parse("report", t_opts, &a, 3, range, &n, NULL), KPT_EXIT_ERROR);
	assert_int_equal(kpt_opt_parse("report", t_opts, &a, 3, choice, &n, NULL), KPT_EXIT_ERROR);
	assert_int_equal(kpt_opt_parse("report", t_opts, &a, 2, missing, &n, NULL), KPT_EXIT_ERROR);
	assert_int_equal(kpt_opt_parse("report", t_opts, &a, 2, flagval, &n, NULL), KPT_EXIT_ERROR);
	assert_int_equal(kpt_opt_parse("report", t_opts, &a, 3, empty, &n, NULL), KPT_EXIT_ERROR);
	assert_int_equal(a.n, 0);
	assert_int_equal(a.choice, 0);
}

static void test_nearest_suggests_only_close_names(void **state)
{
	static const char *const names[] = { "--top", "--by", "--format", "history", "report" };

	assert_string_equal(kpt_cli_nearest("--tpo", names, 5), "--top");
	assert_string_equal(kpt_cli_nearest("--fromat", names, 5), "--format");
	assert_string_equal(kpt_cli_nearest("hist", names, 5), "history");
	assert_null(kpt_cli_nearest("--bogus", names, 5));
	assert_null(kpt_cli_nearest("xyz", names, 5));
}

static void test_short_commit_keeps_twelve_characters_or_a_dash(void **state)
{
	char buf[13];

	assert_string_equal(kpt_cli_short_commit("0123456789abcdef0123", buf), "0123456789ab");
	assert_ptr_equal(kpt_cli_short_commit("abc", buf), buf);
	assert_string_equal(buf, "abc");
	assert_string_equal(kpt_cli_short_commit("", buf), "-");
	assert_string_equal(kpt_cli_short_commit(NULL, buf), "-");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fmt_ns_picks_unit_and_four_digits),
		cmocka_unit_test(test_fmt_bytes_uses_binary_units),
		cmocka_unit_test(test_parse_u64_checks_range_and_syntax),
		cmocka_unit_test(test_parse_choice_looks_up_a_table),
		cmocka_unit_test(test_is_help_knows_both_spellings),
		cmocka_unit_test(test_color_never_off_a_terminal),
		cmocka_unit_test(test_opt_parse_stores_every_kind_and_keeps_operands_in_order),
		cmocka_unit_test(test_opt_parse_stops_at_dashdash_when_asked),
		cmocka_unit_test(test_opt_parse_refuses_unknown_options_and_bad_values),
		cmocka_unit_test(test_nearest_suggests_only_close_names),
		cmocka_unit_test(test_short_commit_keeps_twelve_characters_or_a_dash),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
