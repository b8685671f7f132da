/* test_summary.c - kpt_summary: per-kernel and per-range numbers against
 * hand-computed values on a small recording (kpt_test_rec.h). */
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

#include "kpt_summary.h"
#include "kpt_test_rec.h"

static struct kpt_summary *summarize(void **state, enum kpt_summary_by by, uint32_t device)
{
	struct rec_fixture *fx = *state;
	struct kpt_summary_opts o = { .by = by, .device = device };
	struct kpt_summary *s = NULL;
	struct kpt_diag d;

	assert_int_equal(kpt_summary_create(fx->f, &o, &s, &d), 0);
	assert_non_null(s);
	return s;
}

static void test_by_kernel_numbers_match_hand_computed(void **state)
{
	struct kpt_summary *s = summarize(state, KPT_SUMMARY_BY_KERNEL, 0);
	const struct kpt_summary_row *b = &s->rows[0], *a = &s->rows[1];

	assert_int_equal(s->n, 2);
	assert_int_equal(s->kernels, 7);
	assert_int_equal(s->total_ns, 7000);
	assert_string_equal(b->name, "plain_kernel");
	assert_int_equal(b->instances, 3);
	assert_int_equal(b->total_ns, 6000);
	assert_int_equal(b->min_ns, 1000);
	assert_int_equal(b->max_ns, 3000);
	assert_float_equal(b->median_ns, 2000, 1e-9);
	assert_float_equal(b->avg_ns, 2000, 1e-9);
	assert_float_equal(b->stddev_ns, 1000, 1e-9);
	assert_float_equal(b->time_pct, 600.0 / 7, 1e-9);

	assert_string_equal(a->name, "_Z4axpyPfS_f");
	assert_int_equal(a->instances, 4);
	assert_int_equal(a->total_ns, 1000);
	assert_int_equal(a->min_ns, 100);
	assert_int_equal(a->max_ns, 400);
	assert_float_equal(a->median_ns, 250, 1e-9);     /* even count: mean of 200 and 300 */
	assert_float_equal(a->avg_ns, 250, 1e-9);
	assert_float_equal(a->stddev_ns, sqrt(50000.0 / 3), 1e-9);
	assert_float_equal(a->time_pct, 100.0 / 7, 1e-9);
	kpt_summary_destroy(s);
}

static void test_names_are_demangled_for_display(void **state)
{
	struct kpt_summary *s = summarize(state, KPT_SUMMARY_BY_KERNEL, KPT_NONE);

	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->rows[i].name, "_Z4axpyPfS_f") == 0)
			assert_string_equal(s->rows[i].display, "axpy(float*, float*, float)");
		if (strcmp(s->rows[i].name, "plain_kernel") == 0)
			assert_string_equal(s->rows[i].display, "plain_kernel");
	}
	kpt_summary_destroy(s);
}

static void test_durations_are_sorted_and_complete(void **state)
{
	struct kpt_summary *s = summarize(state, KPT_SUMMARY_BY_KERNEL, 0);
	static const uint64_t want[] = { 100, 200, 300, 400 };

	assert_memory_equal(s->rows[1].durations, want, sizeof want);
	kpt_summary_destroy(s);
}

static void test_all_devices_by_default(void **state)
{
	struct rec_fixture *fx = *state;
	struct kpt_summary *s = NULL;
	struct kpt_diag d;

	assert_int_equal(kpt_summary_create(fx->f, NULL, &s, &d), 0);
	assert_int_equal(s->n, 3);
	assert_int_equal(s->kernels, 8);
	assert_int_equal(s->total_ns, 7500);
	assert_string_equal(s->rows[2].name, "_Z5otherv");
	assert_int_equal(s->first_ns, T0 + 1000);
	assert_int_equal(s->last_ns, T0 + 1500500);
	kpt_summary_destroy(s);
}

static void test_device_filter_keeps_only_that_device(void **state)
{
	struct kpt_summary *s = summarize(state, KPT_SUMMARY_BY_KERNEL, 1);

	assert_int_equal(s->n, 1);
	assert_int_equal(s->total_ns, 500);
	assert_float_equal(s->rows[0].time_pct, 100, 1e-9);
	kpt_summary_destroy(s);
}

static void test_by_range_groups_paths_across_iterations(void **state)
{
	struct kpt_summary *s = summarize(state, KPT_SUMMARY_BY_RANGE, 0);

	/* "" and "work" tie at 3000 ns: by name. kpt:iter is not in paths. */
	assert_int_equal(s->n, 3);
	assert_string_equal(s->rows[0].name, "");
	assert_string_equal(s->rows[0].display, "(no range)");
	assert_int_equal(s->rows[0].total_ns, 3000);
	assert_int_equal(s->rows[0].instances, 1);
	assert_string_equal(s->rows[1].name, "work");
	assert_int_equal(s->rows[1].total_ns, 3000);
	assert_int_equal(s->rows[1].instances, 2);
	assert_float_equal(s->rows[1].median_ns, 1500, 1e-9);
	assert_string_equal(s->rows[2].name, "work/launch");
	assert_int_equal(s->rows[2].instances, 4);
	assert_int_equal(s->rows[2].total_ns, 1000);
	assert_float_equal(s->rows[2].time_pct, 100.0 / 7, 1e-9);
	kpt_summary_destroy(s);
}

static void test_rejects_unknown_grouping(void **state)
{
	struct rec_fixture *fx = *state;
	struct kpt_summary_opts o = { .by = (enum kpt_summary_by)9, .device = KPT_NONE };
	struct kpt_summary *s = (struct kpt_summary *)&o;
	struct kpt_diag d;

	assert_int_equal(kpt_summary_create(fx->f, &o, &s, &d), KPT_E_INVAL);
	assert_null(s);
}

static void test_empty_recording_has_no_rows(void **state)
{
	char path[64];
	struct kpt_writer *w;
	struct kpt_file *f;
	struct kpt_summary *s;
	struct kpt_diag d;

	snprintf(path, sizeof path, "test_summary_empty.%d.kpt", (int)getpid());
	assert_int_equal(kpt_writer_create(path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	kpt_writer_destroy(w);
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_int_equal(kpt_summary_create(f, NULL, &s, &d), 0);
	assert_int_equal(s->n, 0);
	assert_int_equal(s->kernels, 0);
	assert_int_equal(s->total_ns, 0);
	kpt_summary_destroy(s);
	kpt_file_close(f);
	unlink(path);
}

static void test_range_paths_name_each_range(void **state)
{
	struct rec_fixture *fx = *state;
	struct kpt_range_paths *rp;
	struct kpt_diag d;

	assert_int_equal(kpt_range_paths_create(fx->f, &rp, &d), 0);
	assert_string_equal(kpt_range_paths_get(rp, 3), "work/launch");
	assert_ptr_equal(kpt_range_paths_get(rp, 5), kpt_range_paths_get(rp, 3)); /* shared */
	assert_string_equal(kpt_range_paths_get(rp, 1), "work");
	assert_string_equal(kpt_range_paths_get(rp, 2), "work");   /* kpt:iter is not a path part */
	assert_string_equal(kpt_range_paths_get(rp, 6), "note");
	assert_string_equal(kpt_range_paths_get(rp, KPT_NONE), "");
	assert_string_equal(kpt_range_paths_get(rp, 99), "");
	kpt_range_paths_destroy(rp);
}

static void test_env_summary_per_device(void **state)
{
	struct rec_fixture *fx = *state;
	struct kpt_env_summary *e;
	size_t n;
	struct kpt_diag d;

	assert_int_equal(kpt_env_summarize(fx->f, &e, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(e[0].device, 0);
	assert_int_equal(e[0].samples, 3);
	assert_int_equal(e[0].sm_mhz_min, 1755);
	assert_int_equal(e[0].sm_mhz_median, 1980);
	assert_int_equal(e[0].sm_mhz_max, 1980);
	assert_int_equal(e[0].temp_c_min, 40);
	assert_int_equal(e[0].temp_c_max, 50);
	assert_int_equal(e[0].power_mw_median, 200000);
	assert_int_equal(e[0].power_mw_max, 300000);
	assert_int_equal(e[0].throttle_any, 0x5);
	assert_int_equal(e[0].slowdown_samples, 1);   /* gpu_idle is not a slowdown */
	assert_int_equal(e[1].device, 1);
	assert_int_equal(e[1].samples, 1);
	assert_int_equal(e[1].sm_mhz_median, 2040);
	free(e);
}

static void test_throttle_format_names_bits(void **state)
{
	char buf[128];

	assert_int_equal(kpt_throttle_format(0, buf, sizeof buf), 4);
	assert_string_equal(buf, "none");
	kpt_throttle_format(KPT_THROTTLE_SW_POWER_CAP | KPT_THROTTLE_SW_THERMAL, buf, sizeof buf);
	assert_string_equal(buf, "sw_power_cap,sw_thermal");
	kpt_throttle_format(0x10001, buf, sizeof buf);
	assert_string_equal(buf, "gpu_idle,0x10000");
	/* too small: cut, NUL-terminated, returns the needed length */
	assert_int_equal(kpt_throttle_format(0x24, buf, 5), (int)strlen("sw_power_cap,sw_thermal"));
	assert_string_equal(buf, "sw_p");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_by_kernel_numbers_match_hand_computed),
		cmocka_unit_test(test_names_are_demangled_for_display),
		cmocka_unit_test(test_durations_are_sorted_and_complete),
		cmocka_unit_test(test_all_devices_by_default),
		cmocka_unit_test(test_device_filter_keeps_only_that_device),
		cmocka_unit_test(test_by_range_groups_paths_across_iterations),
		cmocka_unit_test(test_rejects_unknown_grouping),
		cmocka_unit_test(test_empty_recording_has_no_rows),
		cmocka_unit_test(test_range_paths_name_each_range),
		cmocka_unit_test(test_env_summary_per_device),
		cmocka_unit_test(test_throttle_format_names_bits),
	};

	return cmocka_run_group_tests(tests, rec_setup, rec_teardown);
}
