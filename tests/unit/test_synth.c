/* test_synth.c - the kpt-synth generator: structure, determinism, planted
 * slowdowns, noise. Built by tests/synth/synth.cmake (links kpt_synth). */
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

#include "kpt_demangle.h"
#include "kpt_format.h"
#include "kpt_stats.h"
#include "kpt_synth.h"

static void path_for(char *buf, size_t cap, const char *tag)
{
	snprintf(buf, cap, "/tmp/kpt_test_synth_%d_%s.kpt", (int)getpid(), tag);
}

static void write_ok(const struct kpt_synth_opts *o, const char *path)
{
	struct kpt_diag d = { 0 };
	int rc = kpt_synth_write(o, path, &d);

	if (rc)
		fail_msg("%s", d.msg);
}

/* Median duration per run of kernels whose demangled name contains sub. */
static void run_medians(const char *path, const char *sub, uint32_t runs, double *med)
{
	struct kpt_file *f;
	struct kpt_kernel_cursor *c;
	const struct kpt_kernel *rows;
	struct kpt_diag d = { 0 };
	size_t n, cap = 1 << 16;
	uint64_t **dur = calloc(runs, sizeof *dur);
	size_t *nd = calloc(runs, sizeof *nd);

	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_int_equal(kpt_file_load_strings(f, &d), 0);
	for (uint32_t r = 0; r < runs; r++)
		dur[r] = malloc(cap * sizeof **dur);
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	while (kpt_kernel_cursor_next(c, &rows, &n, &d) == 1)
		for (size_t i = 0; i < n; i++) {
			char *dem = kpt_demangle(kpt_file_string(f, rows[i].name));
			int hit = dem && strstr(dem, sub);

			free(dem);
			if (hit && nd[rows[i].process] < cap)
				dur[rows[i].process][nd[rows[i].process]++] = rows[i].end_ns - rows[i].start_ns;
		}
	for (uint32_t r = 0; r < runs; r++) {
		assert_true(nd[r] > 0);
		med[r] = kpt_median_u64(dur[r], nd[r]);
		free(dur[r]);
	}
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
	free(dur);
	free(nd);
}

static void test_structure_matches_options(void **state)
{
	struct kpt_synth_opts o;
	struct kpt_file *f;
	struct kpt_diag d = { 0 };
	struct kpt_counts cn;
	const struct kpt_process *p;
	const struct kpt_device *dev;
	struct kpt_kernel_cursor *c;
	const struct kpt_kernel *rows;
	char path[128];
	size_t n;
	uint64_t last_start[4] = { 0 }, names_with_template = 0;
	char seen[64] = { 0 };
	int distinct = 0;

	path_for(path, sizeof path, "structure");
	kpt_synth_defaults(&o);
	o.runs = 4;
	o.iterations = 7;
	o.kernels_per_iter = 30;
	o.names = 20;
	o.gpu = "NVIDIA H200";
	write_ok(&o, path);
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_int_equal(kpt_file_counts(f, &cn, &d), 0);
	assert_int_equal(cn.kernels, 4 * 7 * 30);
	assert_int_equal(cn.runs, 4);
	assert_int_equal(cn.processes, 4);
	assert_int_equal(cn.memops, 4 * 7 * 2);
	assert_true(cn.env_samples > 4);
	assert_true(cn.ranges >= 4 * (1 + 7 * (1 + 30 / 4)));
	assert_int_equal(kpt_file_processes(f, &p, &n, &d), 0);
	for (uint32_t r = 0; r < 4; r++) {
		assert_int_equal(p[r].run, r);
		assert_true(p[r].end_ns > p[r].start_ns);
		assert_true(r == 0 || p[r].start_ns >= p[r - 1].end_ns);
	}
	assert_int_equal(kpt_file_devices(f, &dev, &n, &d), 0);
	assert_string_equal(dev[0].name, "NVIDIA H200");
	assert_string_equal(dev[0].slug, "nvidia-h200");
	assert_string_equal(kpt_file_meta_get(f, "suite"), "synth");
	assert_string_equal(kpt_file_meta_get(f, "runs"), "4");
	assert_int_equal(kpt_file_load_strings(f, &d), 0);
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	while (kpt_kernel_cursor_next(c, &rows, &n, &d) == 1)
		for (size_t i = 0; i < n; i++) {
			char *dem = kpt_demangle(kpt_file_string(f, rows[i].name));

			/* timestamps increase within a process */
			assert_true(rows[i].start_ns > last_start[rows[i].process]);
			assert_true(rows[i].start_ns > p[rows[i].process].start_ns);
			assert_true(rows[i].end_ns < p[rows[i].process].end_ns);
			assert_true(rows[i].end_ns > rows[i].start_ns);
			assert_int_not_equal(rows[i].range, KPT_NONE);
			last_start[rows[i].process] = rows[i].start_ns;
			names_with_template += dem && strchr(dem, '<') && strchr(dem, '>');
			assert_true(rows[i].name < sizeof seen);
			distinct += !seen[rows[i].name];
			seen[rows[i].name] = 1;
			free(dem);
		}
	assert_true(names_with_template > cn.kernels / 2);
	assert_int_equal(distinct, 20);  /* every name of the pool is used */
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
	unlink(path);
}

static void test_same_seed_same_bytes(void **state)
{
	struct kpt_synth_opts o;
	char a[128], b[128], cmd[400];

	path_for(a, sizeof a, "seed_a");
	path_for(b, sizeof b, "seed_b");
	kpt_synth_defaults(&o);
	o.seed = 42;
	write_ok(&o, a);
	write_ok(&o, b);
	snprintf(cmd, sizeof cmd, "cmp -s %s %s", a, b);
	assert_int_equal(system(cmd), 0);
	o.seed = 43;
	write_ok(&o, b);
	assert_int_not_equal(system(cmd), 0);
	unlink(a);
	unlink(b);
}

static void test_slow_substring_plants_a_slowdown(void **state)
{
	struct kpt_synth_opts o;
	char base[128], slow[128];
	double mb[3], ms[3], other_b[3], other_s[3];

	path_for(base, sizeof base, "base");
	path_for(slow, sizeof slow, "slow");
	kpt_synth_defaults(&o);
	o.runs = 3;
	o.noise_pct = 0;
	o.within_pct = 0;
	write_ok(&o, base);
	o.slow[0].substr = "softmax_fwd";
	o.slow[0].pct = 10;
	o.nslow = 1;
	write_ok(&o, slow);
	run_medians(base, "softmax_fwd", 3, mb);
	run_medians(slow, "softmax_fwd", 3, ms);
	run_medians(base, "gemm_kernel", 3, other_b);
	run_medians(slow, "gemm_kernel", 3, other_s);
	for (int r = 0; r < 3; r++) {
		assert_true(fabs(ms[r] / mb[r] - 1.10) < 0.002);
		assert_true(fabs(other_s[r] / other_b[r] - 1.0) < 0.002);
	}
	unlink(base);
	unlink(slow);
}

static void test_run_to_run_noise_has_the_requested_spread(void **state)
{
	struct kpt_synth_opts o;
	char path[128];
	double med[40], lg[40];

	path_for(path, sizeof path, "noise");
	kpt_synth_defaults(&o);
	o.runs = 40;
	o.iterations = 5;
	o.noise_pct = 3;
	o.within_pct = 0;
	write_ok(&o, path);
	run_medians(path, "gemm_kernel", 40, med);
	for (int r = 0; r < 40; r++)
		lg[r] = log(med[r]);
	/* SD of log run medians near 3%: well inside 1.5%..5% for 40 runs. */
	assert_true(kpt_sd_f64(lg, 40) > 0.015 && kpt_sd_f64(lg, 40) < 0.05);
	unlink(path);
}

static void test_total_kernels_is_exact(void **state)
{
	struct kpt_synth_opts o;
	struct kpt_file *f;
	struct kpt_counts cn;
	struct kpt_diag d = { 0 };
	char path[128];

	path_for(path, sizeof path, "total");
	kpt_synth_defaults(&o);
	o.total_kernels = 100003;
	write_ok(&o, path);
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_int_equal(kpt_file_counts(f, &cn, &d), 0);
	assert_int_equal(cn.kernels, 100003);
	kpt_file_close(f);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_structure_matches_options),
		cmocka_unit_test(test_same_seed_same_bytes),
		cmocka_unit_test(test_slow_substring_plants_a_slowdown),
		cmocka_unit_test(test_run_to_run_noise_has_the_requested_spread),
		cmocka_unit_test(test_total_kernels_is_exact),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
