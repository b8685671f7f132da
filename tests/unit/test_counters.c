/* test_counters.c - counter sets, filled values -> rows, pass accounting,
 * counter tables, derived metrics, diff deltas, and the compare table. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_counters_compare.h"
#include "kpt_diff.h"
#include "kpt_diff_report.h"
#include "kpt_synth.h"

static void test_default_set_is_the_one_pass_hopper_list(void **state)
{
	static const char *const want[] = {
		"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
		"sm__inst_executed.sum", "sm__cycles_active.avg", "lts__t_sectors.sum",
		"sm__pipe_tensor_op_hmma_cycles_active.sum",
		"sm__warps_active.avg.pct_of_peak_sustained_active",
	};
	struct kpt_metric_list l;

	(void)state;
	assert_int_equal(kpt_metric_list_parse(NULL, &l, NULL), 0);
	assert_int_equal(l.n, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(l.names[i], want[i]);
	kpt_metric_list_release(&l);
	assert_int_equal(kpt_metric_list_parse("", &l, NULL), 0);
	assert_int_equal(l.n, 8);
	kpt_metric_list_release(&l);
}

static void test_sets_and_metrics_mix_without_duplicates(void **state)
{
	struct kpt_metric_list l;
	const struct kpt_counter_set *mem = kpt_counter_set_find("memory");
	size_t nmem = 0;
	char *j;

	(void)state;
	assert_non_null(mem);
	while (mem->metrics[nmem])
		nmem++;
	assert_int_equal(kpt_metric_list_parse("memory,dram__bytes_read.sum,smsp__inst_executed.sum", &l, NULL), 0);
	assert_int_equal(l.n, nmem + 1);
	assert_string_equal(l.names[0], mem->metrics[0]);
	assert_string_equal(l.names[l.n - 1], "smsp__inst_executed.sum");
	j = kpt_metric_list_join(&l);
	assert_non_null(j);
	assert_non_null(strstr(j, ",smsp__inst_executed.sum"));
	assert_null(strstr(j, ",,"));
	free(j);
	kpt_metric_list_release(&l);
	assert_int_equal(l.n, 0);
}

static void test_every_set_parses_and_has_about(void **state)
{
	size_t n;
	const struct kpt_counter_set *s = kpt_counter_sets(&n);

	(void)state;
	assert_true(n >= 4);
	for (size_t i = 0; i < n; i++) {
		struct kpt_metric_list l;

		assert_true(strlen(s[i].about) > 10);
		assert_int_equal(kpt_metric_list_parse(s[i].name, &l, NULL), 0);
		assert_true(l.n >= 4);
		kpt_metric_list_release(&l);
	}
}

static void test_rejects_unknown_set_with_hint(void **state)
{
	struct kpt_metric_list l;
	struct kpt_diag d;

	(void)state;
	kpt_diag_clear(&d);
	assert_int_equal(kpt_metric_list_parse("default,bogus", &l, &d), KPT_E_NOTFOUND);
	assert_non_null(strstr(d.msg, "'bogus'"));
	assert_non_null(strstr(d.hint, "memory"));
	assert_int_equal(l.n, 0);
	/* shaped wrong: upper case, no rollup, no unit separator */
	assert_int_equal(kpt_metric_list_parse("DRAM__bytes.sum", &l, NULL), KPT_E_NOTFOUND);
	assert_int_equal(kpt_metric_list_parse("dram__bytes", &l, NULL), KPT_E_NOTFOUND);
	assert_int_equal(kpt_metric_list_parse("dram_bytes.sum", &l, NULL), KPT_E_NOTFOUND);
}

static void test_rejects_empty_items(void **state)
{
	struct kpt_metric_list l;

	(void)state;
	assert_int_equal(kpt_metric_list_parse("default,,memory", &l, NULL), KPT_E_INVAL);
	assert_int_equal(kpt_metric_list_parse("default,", &l, NULL), KPT_E_INVAL);
	assert_int_equal(kpt_metric_list_parse(",default", &l, NULL), KPT_E_INVAL);
}

static void test_rejects_more_than_the_limit(void **state)
{
	char buf[KPT_METRICS_MAX * 40];
	size_t len = 0;
	struct kpt_metric_list l;

	(void)state;
	for (int i = 0; i <= KPT_METRICS_MAX; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%sx__m%d.sum", i ? "," : "", i);
	assert_int_equal(kpt_metric_list_parse(buf, &l, NULL), KPT_E_INVAL);
}

static void test_filled_values_become_rows_skipping_nan(void **state)
{
	const uint32_t names[] = { 7, 9 }, metrics[] = { 100, 101, 102 };
	const double v[] = { 1, NAN, 3, 4, 5, 6 };
	struct kpt_counter out[6];
	size_t n;

	(void)state;
	n = kpt_counter_rows_fill(names, 2, metrics, 3, v, 4, 1, 10, out);
	assert_int_equal(n, 5);
	assert_int_equal(out[0].kernel_name, 7);
	assert_int_equal(out[0].ordinal, 10);
	assert_int_equal(out[0].metric, 100);
	assert_true(out[0].value == 1);
	assert_int_equal(out[1].metric, 102); /* the NaN was skipped */
	assert_int_equal(out[2].kernel_name, 9);
	assert_int_equal(out[2].ordinal, 11);
	assert_true(out[4].value == 6);
	assert_int_equal(out[4].process, 4);
	assert_int_equal(out[4].device, 1);
}

static void test_census_counts_kernels_missing_duplicates_replays(void **state)
{
	/* process 0: ordinals 0 and 1 with metrics 5,6; ordinal 1 lacks 6;
	 * process 1: ordinal 0 (same ordinal, other process) with 5, 6, 6. */
	const struct kpt_counter rows[] = {
		{ .process = 0, .ordinal = 0, .metric = 5 }, { .process = 0, .ordinal = 0, .metric = 6 },
		{ .process = 0, .ordinal = 1, .metric = 5 }, { .process = 1, .ordinal = 0, .metric = 6 },
		{ .process = 1, .ordinal = 0, .metric = 5 }, { .process = 1, .ordinal = 0, .metric = 6 },
	};
	struct kpt_counter_census c;

	(void)state;
	assert_int_equal(kpt_counter_census(rows, 6, 3, &c, NULL), 0);
	assert_int_equal(c.rows, 6);
	assert_int_equal(c.kernels, 3);
	assert_int_equal(c.metrics, 2);
	assert_int_equal(c.missing, 1);
	assert_int_equal(c.duplicates, 1);
	assert_int_equal(c.passes, 3);
	assert_int_equal(c.replays, 9);
	assert_int_equal(kpt_counter_census(NULL, 0, 1, &c, NULL), 0);
	assert_int_equal(c.kernels, 0);
	assert_int_equal(c.missing, 0);
}

static const char *const strs[] = { "_Z4copyPf", "_Z4gemmv", "dram__bytes_read.sum",
				     "sm__inst_executed.sum", "gpu__time_duration.sum",
				     "dram__bytes_write.sum" };

static void test_table_means_each_kernel_metric(void **state)
{
	const struct kpt_counter rows[] = {
		{ .kernel_name = 0, .ordinal = 0, .metric = 2, .value = 100 },
		{ .kernel_name = 0, .ordinal = 1, .metric = 2, .value = 300 },
		{ .kernel_name = 1, .ordinal = 2, .metric = 2, .value = 7 },
		{ .kernel_name = 0, .ordinal = 0, .metric = 3, .value = 10 },
	};
	struct kpt_counter_table *t;
	struct kpt_diag d;

	(void)state;
	assert_int_equal(kpt_counter_table_build(rows, 4, strs, 6, &t, NULL), 0);
	assert_int_equal(kpt_counter_table_size(t), 3);
	assert_true(kpt_counter_table_get(t, "_Z4copyPf", "dram__bytes_read.sum") == 200);
	assert_true(kpt_counter_table_get(t, "_Z4gemmv", "dram__bytes_read.sum") == 7);
	assert_true(kpt_counter_table_get(t, "_Z4copyPf", "sm__inst_executed.sum") == 10);
	assert_true(isnan(kpt_counter_table_get(t, "_Z4gemmv", "sm__inst_executed.sum")));
	assert_true(isnan(kpt_counter_table_get(t, "nope", "dram__bytes_read.sum")));
	assert_int_equal(kpt_counter_table_nkernels(t), 2);
	assert_string_equal(kpt_counter_table_kernel(t, 0), "_Z4copyPf");
	assert_string_equal(kpt_counter_table_kernel(t, 1), "_Z4gemmv");
	assert_null(kpt_counter_table_kernel(t, 2));
	kpt_counter_table_destroy(t);
	kpt_diag_clear(&d);
	assert_int_equal(kpt_counter_table_build(rows, 4, strs, 3, &t, &d), KPT_E_FORMAT);
	assert_null(t);
}

struct kv {
	const char *const *k;
	const double *v;
	size_t n;
};

static double kv_get(void *ctx, const char *m)
{
	const struct kv *kv = ctx;

	for (size_t i = 0; i < kv->n; i++)
		if (strcmp(kv->k[i], m) == 0)
			return kv->v[i];
	return NAN;
}

static void test_derived_metrics(void **state)
{
	static const char *const k[] = { "dram__bytes_read.sum", "dram__bytes_write.sum",
					 "gpu__time_duration.sum", "sm__inst_executed.sum",
					 "sm__cycles_active.avg", "sm__pipe_tensor_op_hmma_cycles_active.sum",
					 "lts__t_sectors.sum" };
	static const double v[] = { 3e9, 1e9, 2e6, 5e6, 1e6, 33e6, 1000 };
	struct kv kv = { k, v, 7 };
	struct kpt_counter_derived o;

	(void)state;
	kpt_counter_derive(kv_get, &kv, 132, 3200, &o);
	assert_true(o.dram_bytes == 4e9);
	assert_true(fabs(o.dram_gbps - 2000) < 1e-9);       /* 4e9 B / 2 ms */
	assert_true(fabs(o.ipc - 5.0 / 132) < 1e-12);        /* 5e6 / (1e6 * 132) */
	assert_true(fabs(o.tensor_active_pct - 25) < 1e-9); /* 33e6 / (1e6 * 132) */
	assert_true(o.l2_bytes == 32000);
	assert_true(fabs(o.copy_ceiling_pct - 62.5) < 1e-9);
	kpt_counter_derive(kv_get, &kv, 0, 0, &o);
	assert_true(isnan(o.tensor_active_pct));
	assert_true(isnan(o.copy_ceiling_pct));
	kv.n = 1;                                            /* write bytes missing */
	kpt_counter_derive(kv_get, &kv, 132, 3200, &o);
	assert_true(isnan(o.dram_bytes));
	assert_true(isnan(o.dram_gbps));
}

static void test_ceiling_pct_needs_positive_numbers(void **state)
{
	(void)state;
	assert_true(fabs(kpt_ceiling_pct(1500, 3000) - 50) < 1e-12);
	assert_true(isnan(kpt_ceiling_pct(1500, 0)));
	assert_true(isnan(kpt_ceiling_pct(NAN, 3000)));
	assert_true(isnan(kpt_ceiling_pct(-1, 3000)));
}

static void test_deltas_largest_first_and_text(void **state)
{
	const struct kpt_counter base[] = {
		{ .kernel_name = 0, .metric = 2, .value = 1000 }, { .kernel_name = 0, .metric = 3, .value = 500 },
		{ .kernel_name = 0, .metric = 4, .value = 10 }, { .kernel_name = 0, .metric = 5, .value = 200 },
	};
	const struct kpt_counter new_[] = {
		{ .kernel_name = 0, .metric = 2, .value = 1980 }, { .kernel_name = 0, .metric = 3, .value = 500 },
		{ .kernel_name = 0, .metric = 4, .value = 99 }, { .kernel_name = 0, .metric = 5, .value = 202 },
	};
	struct kpt_counter_table *b, *n;
	struct kpt_counter_delta dl[8];
	char text[256];
	size_t k;

	(void)state;
	assert_int_equal(kpt_counter_table_build(base, 4, strs, 6, &b, NULL), 0);
	assert_int_equal(kpt_counter_table_build(new_, 4, strs, 6, &n, NULL), 0);
	k = kpt_counter_deltas(b, n, "_Z4copyPf", dl, 8);
	assert_int_equal(k, 3); /* time is left out */
	assert_string_equal(dl[0].metric, "dram__bytes_read.sum");
	assert_true(fabs(dl[0].change_pct - 98) < 1e-9);
	assert_string_equal(dl[1].label, "dram bytes written");
	assert_string_equal(dl[2].label, "instructions");
	assert_true(dl[2].change_pct == 0);
	kpt_counter_deltas_text(dl, k, 3, text, sizeof text);
	assert_string_equal(text, "dram bytes read +98%, dram bytes written +1%, instructions +0%");
	kpt_counter_deltas_text(dl, k, 1, text, sizeof text);
	assert_string_equal(text, "dram bytes read +98%");
	/* cap smaller than the candidates keeps the largest */
	k = kpt_counter_deltas(b, n, "_Z4copyPf", dl, 1);
	assert_int_equal(k, 1);
	assert_string_equal(dl[0].metric, "dram__bytes_read.sum");
	assert_int_equal(kpt_counter_deltas(b, n, "_Z4gemmv", dl, 8), 0);
	assert_int_equal(kpt_counter_deltas(b, NULL, "_Z4copyPf", dl, 8), 0);
	kpt_counter_table_destroy(b);
	kpt_counter_table_destroy(n);
}

static void synth(const char *path, const char *gpu, double pct, const char *bytes)
{
	struct kpt_synth_opts o;
	struct kpt_diag d;

	kpt_synth_defaults(&o);
	o.gpu = gpu;
	o.runs = 3;
	o.iterations = 5;
	o.names = 20;
	o.noise_pct = 0.2;
	if (pct != 0) {
		o.slow[0] = (struct kpt_synth_slow){ "", pct };
		o.nslow = 1;
	}
	o.meta[o.nmeta++] = (struct kpt_meta_kv){ "workload.synth.workload.bytes", bytes };
	o.meta[o.nmeta++] = (struct kpt_meta_kv){ "workload.synth.workload.flops", "1e9" };
	kpt_diag_clear(&d);
	assert_int_equal(kpt_synth_write(&o, path, &d), 0);
}

static void test_compare_two_gpu_models(void **state)
{
	char a[64], b[64];
	const char *paths[2] = { a, b };
	struct kpt_compare *c;
	struct kpt_diag d;
	const struct kpt_compare_cell *c0, *c1;

	(void)state;
	snprintf(a, sizeof a, "/tmp/test_counters_%d_a.kpt", (int)getpid());
	snprintf(b, sizeof b, "/tmp/test_counters_%d_b.kpt", (int)getpid());
	synth(a, "NVIDIA H100 80GB HBM3", 0, "4e9");
	synth(b, "NVIDIA H200", -20, "4e9");
	kpt_diag_clear(&d);
	assert_int_equal(kpt_compare_paths(paths, 2, &c, &d), 0);
	assert_int_equal(c->ncols, 2);
	assert_string_equal(c->cols[0].gpu, "NVIDIA H100 80GB HBM3");
	assert_string_equal(c->cols[1].gpu, "NVIDIA H200");
	assert_true(c->cols[1].copy_gbps > c->cols[0].copy_gbps);
	assert_int_equal(c->nrows, 2);
	assert_string_equal(c->rows[0].workload, "synth.workload");
	assert_string_equal(c->rows[1].workload, "(all)");
	c0 = &c->rows[0].cells[0];
	c1 = &c->rows[0].cells[1];
	assert_true(c0->speedup == 1);
	assert_true(fabs(c1->speedup - 1.25) < 0.03); /* -20% time */
	assert_true(fabs(c0->gbps - 4e9 / c0->ns) < 1e-9);
	assert_true(fabs(c1->copy_pct - 100 * c1->gbps / c->cols[1].copy_gbps) < 1e-9);
	assert_true(fabs(c1->bf16_pct - 100 * (1e9 / c1->ns / 1e3) / c->cols[1].bf16_tflops) < 1e-9);
	assert_true(isnan(c->rows[1].cells[0].gbps)); /* no bytes for "(all)" */
	assert_true(fabs(c->rows[1].cells[1].speedup - 1.25) < 0.03);
	kpt_compare_destroy(c);
	assert_int_equal(kpt_compare_paths(paths, 1, &c, &d), KPT_E_INVAL);
	unlink(a);
	unlink(b);
}

/* Writes r of df as text, Markdown and JSON into one string (caller frees). */
static char *reports(const struct kpt_diff *df)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(kpt_diff_write_text(df, f, NULL, NULL), 0);
	assert_int_equal(kpt_diff_write_markdown(df, f, NULL, NULL), 0);
	assert_int_equal(kpt_diff_write_json(df, f, NULL, NULL), 0);
	fclose(f);
	return buf;
}

static void test_diff_explains_slow_keys_with_counters(void **state)
{
	char a[64], b[64], *out;
	struct kpt_synth_opts o;
	struct kpt_diff *df;
	struct kpt_diag d;
	const struct kpt_diff_row *slow = NULL;
	struct kpt_counter_table *tb, *tn;
	const char *names[4];
	struct kpt_counter rb[3], rn[3];

	(void)state;
	snprintf(a, sizeof a, "/tmp/test_counters_%d_d1.kpt", (int)getpid());
	snprintf(b, sizeof b, "/tmp/test_counters_%d_d2.kpt", (int)getpid());
	kpt_synth_defaults(&o);
	o.runs = 4;
	o.iterations = 5;
	o.names = 20;
	o.noise_pct = 0.2;
	assert_int_equal(kpt_synth_write(&o, a, NULL), 0);
	o.slow[0] = (struct kpt_synth_slow){ "gemm_kernel", 30 };
	o.nslow = 1;
	assert_int_equal(kpt_synth_write(&o, b, NULL), 0);
	kpt_diag_clear(&d);
	assert_int_equal(kpt_diff_paths(a, b, NULL, &df, &d), 0);
	for (size_t i = 0; i < df->nrows; i++) {
		assert_null(df->rows[i].counters); /* the files have no counters */
		if (!slow && df->rows[i].verdict == KPT_V_SLOW)
			slow = &df->rows[i];
	}
	assert_non_null(slow);
	assert_non_null(strstr(slow->name, "gemm_kernel"));
	names[0] = slow->mangled;
	names[1] = "dram__bytes_read.sum";
	names[2] = "sm__inst_executed.sum";
	names[3] = "gpu__time_duration.sum";
	for (uint32_t m = 0; m < 3; m++) {
		rb[m] = (struct kpt_counter){ .kernel_name = 0, .metric = m + 1, .value = 1000 };
		rn[m] = (struct kpt_counter){ .kernel_name = 0, .metric = m + 1, .value = m == 0 ? 1980 : 1000 };
	}
	assert_int_equal(kpt_counter_table_build(rb, 3, names, 4, &tb, NULL), 0);
	assert_int_equal(kpt_counter_table_build(rn, 3, names, 4, &tn, NULL), 0);
	assert_int_equal(kpt_diff_attach_counters(df, tb, NULL), 0);
	assert_null(slow->counters);
	assert_int_equal(kpt_diff_attach_counters(df, tb, tn), 0);
	assert_non_null(slow->counters);
	assert_string_equal(slow->counters, "dram bytes read +98%, instructions +0%");
	/* Counters are per kernel name: every SLOW key of that kernel, no other. */
	for (size_t i = 0; i < df->nrows; i++)
		if (df->rows[i].verdict == KPT_V_SLOW && strcmp(df->rows[i].mangled, slow->mangled) == 0)
			assert_string_equal(df->rows[i].counters, slow->counters);
		else
			assert_null(df->rows[i].counters);
	out = reports(df);
	assert_non_null(strstr(out, "  counters: dram bytes read +98%, instructions +0%\n"));
	assert_non_null(strstr(out, "**Counters that moved**"));
	assert_non_null(strstr(out, "\"counters\":\"dram bytes read +98%, instructions +0%\""));
	free(out);
	kpt_counter_table_destroy(tb);
	kpt_counter_table_destroy(tn);
	kpt_diff_destroy(df);
	unlink(a);
	unlink(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_set_is_the_one_pass_hopper_list),
		cmocka_unit_test(test_sets_and_metrics_mix_without_duplicates),
		cmocka_unit_test(test_every_set_parses_and_has_about),
		cmocka_unit_test(test_rejects_unknown_set_with_hint),
		cmocka_unit_test(test_rejects_empty_items),
		cmocka_unit_test(test_rejects_more_than_the_limit),
		cmocka_unit_test(test_filled_values_become_rows_skipping_nan),
		cmocka_unit_test(test_census_counts_kernels_missing_duplicates_replays),
		cmocka_unit_test(test_table_means_each_kernel_metric),
		cmocka_unit_test(test_derived_metrics),
		cmocka_unit_test(test_ceiling_pct_needs_positive_numbers),
		cmocka_unit_test(test_deltas_largest_first_and_text),
		cmocka_unit_test(test_compare_two_gpu_models),
		cmocka_unit_test(test_diff_explains_slow_keys_with_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
