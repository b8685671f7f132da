/* test_record_probes.c - the recorder's reader of the calibration probes
 * that a suite's runs append (kpt_record_probes_read, kpt_record_int.h):
 * the median of each probe over the lines of one GPU, lines of another GPU,
 * an older runner's four fields and garbage left out, a missing e4m3 probe
 * (before compute capability 8.9) kept apart, no link or device read; and which
 * commands are the runner. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "kpt_record_int.h"

#define U1 "GPU-11111111-2222-3333-4444-555555555555"
#define U2 "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"

static char dir[PATH_MAX], path[PATH_MAX + 32];

static void write_file(const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "%s/kpt-probes-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof path, "%s/" KPT_RECORD_CALIBRATION, dir);
	return 0;
}

static int teardown(void **state)
{
	char link[PATH_MAX + 16];

	(void)state;
	snprintf(link, sizeof link, "%s/link", dir);
	unlink(link);
	unlink(path);
	return rmdir(dir);
}

static void medians_of_one_gpu(void **state)
{
	struct kpt_record_probes c;

	(void)state;
	write_file(U1 "\t4270.0\t800.0\tNVIDIA H200\t3900.0\t700.0\t1300.0\t1830.0\n"
	           U2 "\t1.0\t1.0\tother\t9.0\t9.0\t9.0\t9.0\n"                 /* another GPU */
	           U1 "\t4270.0\t800.0\tNVIDIA H200\n"                         /* an older runner */
	           U1 "\t4270.0\t800.0\tNVIDIA H200\t3800.0\t720.0\t1310.0\t1790.0\n"
	           "garbage\n\n"
	           U1 "\t4270.0\t800.0\tNVIDIA H200\t3950.0\t710.0\t1290.0\t1800.0\n"
	           U1 "\t4270.0\t800.0\tNVIDIA H200\tnan\t710.0\t1290.0\t1800.0\n"); /* not a number */
	assert_int_equal(kpt_record_probes_read(path, U1, &c), 0);
	assert_int_equal(c.runs, 3);
	assert_true(c.copy_gbps == 3900.0);
	assert_true(c.bf16_tflops == 710.0);
	assert_true(c.fp8_tflops == 1300.0);
	assert_true(c.sm_mhz == 1800.0);
	assert_int_equal(kpt_record_probes_read(path, U2, &c), 0);
	assert_int_equal(c.runs, 1);
	assert_true(c.copy_gbps == 9.0);
	assert_int_equal(kpt_record_probes_read(path, "GPU-none", &c), -1);
	assert_int_equal(c.runs, 0);
}

static void no_fp8_before_ada(void **state)
{
	struct kpt_record_probes c;

	(void)state;
	write_file(U1 "\t1900.0\t300.0\tA100\t1800.0\t280.0\t0.0\t1400.0\n"
	           U1 "\t1900.0\t300.0\tA100\t1810.0\t282.0\t0.0\t1410.0\n");
	assert_int_equal(kpt_record_probes_read(path, U1, &c), 0);
	assert_int_equal(c.runs, 2);
	assert_true(c.fp8_tflops == 0);
	assert_true(c.copy_gbps == 1805.0);
	assert_true(c.sm_mhz == 1405.0);
}

static void refuses_links_and_missing(void **state)
{
	struct kpt_record_probes c;
	char link[PATH_MAX + 16];

	(void)state;
	assert_int_equal(kpt_record_probes_read(path, U1, &c), -1); /* no file yet */
	write_file(U1 "\t4270.0\t800.0\tNVIDIA H200\t3900.0\t700.0\t1300.0\t1830.0\n");
	snprintf(link, sizeof link, "%s/link", dir);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(kpt_record_probes_read(link, U1, &c), -1);
	assert_int_equal(kpt_record_probes_read(path, U1, &c), 0);
}

static void refuses_a_device(void **state)
{
	struct kpt_record_probes c;

	(void)state;
	/* a copy of /dev/zero where the file should be (mknod in the test's
	 * own folder, root only): refused at once; read, its endless lines
	 * of NULs would keep the recorder in the loop for ever */
	if (geteuid() != 0) {
		skip();
		return;
	}
	assert_int_equal(mknod(path, S_IFCHR | 0600, makedev(1, 5)), 0);
	assert_int_equal(kpt_record_probes_read(path, U1, &c), -1);
	assert_int_equal(c.runs, 0);
}

static void runner_commands(void **state)
{
	char *runner[] = { "/opt/k/build/cli/kpt-workloads", "--suite", "default", NULL };
	char *bare[] = { "kpt-workloads", NULL };
	char *other[] = { "python3", "kpt-workloads", NULL };
	char *suffix[] = { "/x/kpt-workloads2", NULL };

	(void)state;
	assert_int_equal(kpt_record_cmd_is_runner(runner), 1);
	assert_int_equal(kpt_record_cmd_is_runner(bare), 1);
	assert_int_equal(kpt_record_cmd_is_runner(other), 0);
	assert_int_equal(kpt_record_cmd_is_runner(suffix), 0);
	assert_int_equal(kpt_record_cmd_is_runner(NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(medians_of_one_gpu, setup, teardown),
		cmocka_unit_test_setup_teardown(no_fp8_before_ada, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_links_and_missing, setup, teardown),
		cmocka_unit_test_setup_teardown(refuses_a_device, setup, teardown),
		cmocka_unit_test(runner_commands),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
