/* test_diff_report.c - the text, Markdown, JUnit and JSON writers of a diff
 * (analyzer/diff/kpt_diff_report.h), on a diff built by hand. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "kpt_diff_report.h"

static const double runs_b[3] = { 1000, 1010, 990 }, runs_n[3] = { 1100, 1110, 1090 };

static struct kpt_diff_row make_row(const char *name, enum kpt_verdict v, double change)
{
	struct kpt_diff_row r;

	memset(&r, 0, sizeof r);
	r.name = name;
	r.mangled = name;
	r.path = "wl/site";
	r.workload = "wl";
	r.grid[0] = 128;
	r.grid[1] = r.grid[2] = 1;
	r.block[0] = 256;
	r.block[1] = r.block[2] = 1;
	r.verdict = v;
	r.base_ns = 1000;
	r.new_ns = 1000 * (1 + change / 100);
	r.change_pct = change;
	r.ci_low_pct = change - 1;
	r.ci_high_pct = change + 1;
	r.noise_pct = 0.5;
	r.threshold_pct = 5;
	r.p = r.p_holm = 0.001;
	r.cycles_change_pct = NAN;
	r.base_runs = r.new_runs = 3;
	r.base_run_ns = runs_b;
	r.new_run_ns = runs_n;
	return r;
}

static void make_env(struct kpt_diff_env *e, const char *path)
{
	memset(e, 0, sizeof *e);
	e->path = path;
	e->gpu_name = "NVIDIA H100 80GB HBM3";
	e->gpu_slug = "nvidia-h100-80gb-hbm3";
	e->driver = "580.1";
	e->cuda = "13.0";
	e->suite = "quick";
	e->host = e->time = e->commit = "";
	e->runs = 3;
	e->sm_mhz_median = 1980;
	e->temp_c_median = e->temp_c_max = NAN;
}

struct fixture {
	struct kpt_diff df;
	struct kpt_diff_row rows[4];
	struct kpt_diff_total totals[1];
	struct kpt_diff_note notes[1];
};

static struct fixture *fixture(void)
{
	struct fixture *f = calloc(1, sizeof *f);

	f->rows[0] = make_row("void gemm<float, 128>(float const*, float*) & <|>", KPT_V_SLOW, 10);
	f->rows[1] = make_row("add_kernel", KPT_V_AMBG, 3);
	f->rows[1].more_runs = 4;
	f->rows[2] = make_row("copy_kernel", KPT_V_FAST, -8);
	f->rows[3] = make_row("softmax_kernel", KPT_V_SAME, 0.1);
	f->df.rows = f->rows;
	f->df.nrows = 4;
	f->df.result = KPT_DIFF_REGRESSION;
	f->df.counts[KPT_V_SLOW] = f->df.counts[KPT_V_AMBG] = f->df.counts[KPT_V_FAST] = 1;
	f->df.counts[KPT_V_SAME] = 1;
	f->df.n_tested = 4;
	f->df.opts.threshold_pct = 2;
	f->df.opts.short_threshold_pct = 5;
	f->df.opts.short_ns = 10000;
	f->df.opts.alpha = 0.05;
	f->df.opts.min_clock_frac = 0.75;
	make_env(&f->df.base, "base.kpt");
	make_env(&f->df.new_, "new.kpt");
	f->totals[0] = (struct kpt_diff_total){ .kind = KPT_TOTAL_ALL, .name = "all", .keys = 4,
						 .base_ns = 4000, .new_ns = 4050, .change_pct = 1.25,
						 .geomean_change_pct = 1.0 };
	f->df.totals = f->totals;
	f->df.ntotals = 1;
	f->notes[0] = (struct kpt_diff_note){ "sm_clock", "median SM clock 1980 MHz -> 1755 MHz", 1 };
	f->df.notes = f->notes;
	f->df.nnotes = 1;
	return f;
}

typedef int (*writer)(const struct kpt_diff *, FILE *, const struct kpt_report_opts *, struct kpt_diag *);

/* Runs a writer into memory; the caller frees the text. */
/* The stream's buffer and length live on the heap: gcc 12's
 * -Wdangling-pointer at -O3 takes a returned buffer that open_memstream
 * wrote through a local's address for a pointer to that local. */
static char *render(writer fn, const struct kpt_diff *df, const struct kpt_report_opts *o)
{
	struct { char *buf; size_t len; } *m = calloc(1, sizeof *m);
	struct kpt_diag d = { 0 };
	FILE *f;
	char *buf;

	assert_non_null(m);
	f = open_memstream(&m->buf, &m->len);
	assert_non_null(f);
	assert_int_equal(fn(df, f, o, &d), 0);
	fclose(f);
	buf = m->buf;
	free(m);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_junit_fails_only_slow_keys(void **state)
{
	struct fixture *f = fixture();
	struct kpt_report_opts o = { 0 };
	char *x = render(kpt_diff_write_junit, &f->df, &o);

	(void)state;
	assert_int_equal(count(x, "<testcase "), 4);
	assert_int_equal(count(x, "<failure "), 1);
	assert_int_equal(count(x, "classname=\"nvidia-h100-80gb-hbm3/quick\""), 4);
	assert_non_null(strstr(x, "void gemm&lt;float, 128&gt;(float const*, float*) &amp; &lt;|&gt;"));
	assert_null(strstr(x, "gemm<"));
	assert_non_null(strstr(x, "failures=\"1\""));
	assert_non_null(strstr(x, "SLOW: +10.0%"));
	free(x);
	o.suite = "seed";
	x = render(kpt_diff_write_junit, &f->df, &o);
	assert_int_equal(count(x, "classname=\"nvidia-h100-80gb-hbm3/seed\""), 4);
	free(x);
	free(f);
}

static void test_markdown_puts_slow_table_before_details(void **state)
{
	struct fixture *f = fixture();
	char *m = render(kpt_diff_write_markdown, &f->df, NULL);
	const char *slow, *details;

	(void)state;
	assert_true(strncmp(m, "## :x: kptprof: 1 kernel SLOW", 29) == 0);
	slow = strstr(m, "### SLOW");
	details = strstr(m, "<details>");
	assert_non_null(slow);
	assert_non_null(details);
	assert_true(slow < details);
	assert_non_null(strstr(m, "| 1 | 1 | 1 | 1 | 0 | 0 |"));
	/* names are code spans: '<' stays, '|' is escaped for the table */
	assert_non_null(strstr(m, "| `void gemm<float, 128>(float const*, float*) & <\\|>` |"));
	assert_non_null(strstr(m, "- **base**: `base.kpt`, "));
	assert_non_null(strstr(m, "AMBG (~4 more runs)"));
	assert_non_null(strstr(m, ":warning: median SM clock"));
	free(m);
	f->df.result = KPT_DIFF_OK;
	f->df.counts[KPT_V_SLOW] = 0;
	f->rows[0].verdict = KPT_V_SAME;
	m = render(kpt_diff_write_markdown, &f->df, NULL);
	assert_true(strncmp(m, "## :white_check_mark: kptprof: no regression", 44) == 0);
	assert_null(strstr(m, "### SLOW"));
	free(m);
	free(f);
}

static void test_markdown_caps_long_tables(void **state)
{
	struct fixture *f = fixture();
	struct kpt_diff_row *rows = calloc(400, sizeof *rows);
	char *m;

	(void)state;
	for (int i = 0; i < 400; i++)
		rows[i] = make_row("same_kernel", KPT_V_SAME, 0.1);
	f->df.rows = rows;
	f->df.nrows = 400;
	f->df.counts[KPT_V_SLOW] = 0;
	m = render(kpt_diff_write_markdown, &f->df, NULL);
	assert_non_null(strstr(m, "(100 more keys: see the JSON report)"));
	assert_int_equal(count(m, "| `same_kernel` |"), 300);
	free(m);
	free(rows);
	free(f);
}

static void test_json_has_result_and_key_fields(void **state)
{
	struct fixture *f = fixture();
	char *j = render(kpt_diff_write_json, &f->df, NULL);

	(void)state;
	assert_non_null(strstr(j, "\"result\": \"regression\""));
	assert_int_equal(count(j, "\"verdict\":"), 4);
	assert_int_equal(count(j, "\"change_pct\":"), 5); /* 4 keys + 1 total */
	assert_int_equal(count(j, "\"ci_low_pct\":"), 4);
	assert_int_equal(count(j, "\"ci_high_pct\":"), 4);
	assert_non_null(strstr(j, "\"cycles_change_pct\":null")); /* NAN */
	assert_non_null(strstr(j, "\"base_run_ns\":[1000,1010,990]"));
	free(j);
	free(f);
}

static void test_json_error_document(void **state)
{
	struct kpt_diag e = { 0 }, d = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	kpt_diag_set(&e, KPT_E_MISMATCH, "cannot compare \"a\" with 'b'");
	assert_int_equal(kpt_diff_write_json_error(&e, f, &d), 0);
	fclose(f);
	assert_non_null(strstr(buf, "\"result\": \"error\""));
	assert_non_null(strstr(buf, "cannot compare \\\"a\\\""));
	free(buf);
}

static void test_text_colours_only_when_asked(void **state)
{
	struct fixture *f = fixture();
	struct kpt_report_opts o = { 0 };
	char *t = render(kpt_diff_write_text, &f->df, &o);

	(void)state;
	assert_null(strchr(t, '\033'));
	assert_non_null(strstr(t, "REGRESSION"));
	assert_non_null(strstr(t, "(128,1,1)x(256,1,1)"));
	assert_non_null(strstr(t, "+10.0%"));
	assert_non_null(strstr(t, "[+9.0, +11.0]"));
	free(t);
	o.color = 1;
	t = render(kpt_diff_write_text, &f->df, &o);
	assert_non_null(strstr(t, "\033[1;31mSLOW\033[0m"));
	free(t);
	free(f);
}

/* A fixture whose names differ only in the middle and at the end. */
static struct fixture *lookalikes(void)
{
	static const char *const names[4] = {
		"void fp8_quant_kernel<__nv_bfloat16, per_tensor, 128>(float const*, __nv_fp8_e4m3*, int)",
		"void fp8_quant_kernel<__nv_bfloat16, per_token, 128>(float const*, __nv_fp8_e4m3*, int)",
		"void fp8_quant_kernel<__nv_bfloat16, per_token, 256>(float const*, __nv_fp8_e4m3*, int)",
		"void fp8_quant_kernel<__nv_bfloat16, per_token, 256>(float const*, __nv_fp8_e4m3*, int)",
	};
	static const char *const paths[4] = {
		"fp8.quant.e4m3.bf16.per_tensor.8192x8192/kpt_fp8_quant",
		"fp8.quant.e4m3.bf16.per_token.8192x8192/kpt_fp8_quant",
		"fp8.quant.e4m3.bf16.per_token.8192x8192/kpt_fp8_quant",
		"moe.layer.e128.top8.h2048.f768.b32.s1024/kpt_fp8_quant",
	};
	struct fixture *f = fixture();

	for (int i = 0; i < 4; i++) {
		f->rows[i].name = names[i];
		f->rows[i].path = paths[i];
	}
	return f;
}

/* The Kernel and Range cells of line i (0: the header) of table t. */
static void cells_of(const char *t, int i, char *out, size_t cap)
{
	const char *p = strstr(t, "Kernel ");
	const char *cfg;

	assert_non_null(p);
	while (i-- > 0)
		p = strchr(p, '\n') + 1;
	/* the cells end where the first duration starts (Config, when shown,
	 * stays with them) */
	cfg = strstr(p, " us");
	assert_non_null(cfg);
	while (cfg > p && (cfg[-1] == '.' || (cfg[-1] >= '0' && cfg[-1] <= '9')))
		cfg--;
	while (cfg > p && cfg[-1] == ' ')
		cfg--;
	assert_true((size_t)(cfg - p) < cap);
	snprintf(out, cap, "%.*s", (int)(cfg - p), p);
}

static void test_text_names_whole_when_not_a_terminal(void **state)
{
	struct fixture *f = lookalikes();
	struct kpt_report_opts o = { .all = 1 };
	char *t = render(kpt_diff_write_text, &f->df, &o);

	(void)state;
	for (int i = 0; i < 4; i++) {
		assert_non_null(strstr(t, f->rows[i].name));
		assert_non_null(strstr(t, f->rows[i].path));
	}
	assert_null(strstr(t, "..."));
	free(t);
	free(f);
}

static void test_text_cut_never_makes_rows_alike(void **state)
{
	struct fixture *f = lookalikes();
	char *t, c[4][512];

	(void)state;
	f->rows[3].ordinal = 2;
	for (int width = 140; width <= 200; width += 20) {
		struct kpt_report_opts o = { .all = 1, .width = width };

		t = render(kpt_diff_write_text, &f->df, &o);
		for (int i = 0; i < 4; i++)
			cells_of(t, i + 1, c[i], sizeof c[i]);
		for (int i = 0; i < 4; i++)
			for (int j = i + 1; j < 4; j++)
				assert_string_not_equal(c[i], c[j]);
		/* a cut range keeps its tail: the parameters */
		assert_non_null(strstr(c[3], width >= 160 ? "b32.s1024/kpt_fp8_quant" : "4/kpt_fp8_quant"));
		/* the ordinal is never cut away */
		assert_non_null(strstr(c[3], " #2"));
		/* every line of the table fits the terminal */
		for (int i = 0; i < 5; i++) {
			const char *p = strstr(t, "Kernel "), *e;

			for (int k = 0; k < i; k++)
				p = strchr(p, '\n') + 1;
			e = strchr(p, '\n');
			assert_true(e - p <= width);
		}
		free(t);
	}
	free(f);
}

static void test_text_range_grows_before_kernel(void **state)
{
	struct fixture *f = lookalikes();
	struct kpt_report_opts o = { .all = 1, .width = 190 };
	char *t = render(kpt_diff_write_text, &f->df, &o);

	(void)state;
	/* 190 columns leave room for every range whole, not every name */
	for (int i = 0; i < 4; i++)
		assert_non_null(strstr(t, f->rows[i].path));
	assert_null(strstr(t, f->rows[0].name));
	free(t);
	free(f);
}

static void test_text_escapes_hostile_names(void **state)
{
	struct fixture *f = fixture();
	struct kpt_report_opts o = { .all = 1 };
	char *t;

	(void)state;
	f->rows[1].name = "evil\033]0;title\007\r\nall SAME\x9b" "2J\xc2\x9b";
	f->rows[1].path = "range\033[2J";
	f->df.new_.path = "new\rfake.kpt";
	f->notes[0].text = "note\033[31m";
	t = render(kpt_diff_write_text, &f->df, &o);
	assert_null(strchr(t, '\033'));
	assert_null(strchr(t, '\r'));
	assert_null(strstr(t, "\x9b"));
	assert_non_null(strstr(t, "evil\\e]0;title\\x07\\r\\nall SAME\\x9b2J\\u{009b}"));
	assert_non_null(strstr(t, "new\\rfake.kpt"));
	free(t);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_junit_fails_only_slow_keys),
		cmocka_unit_test(test_markdown_puts_slow_table_before_details),
		cmocka_unit_test(test_markdown_caps_long_tables),
		cmocka_unit_test(test_json_has_result_and_key_fields),
		cmocka_unit_test(test_json_error_document),
		cmocka_unit_test(test_text_colours_only_when_asked),
		cmocka_unit_test(test_text_names_whole_when_not_a_terminal),
		cmocka_unit_test(test_text_cut_never_makes_rows_alike),
		cmocka_unit_test(test_text_range_grows_before_kernel),
		cmocka_unit_test(test_text_escapes_hostile_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
