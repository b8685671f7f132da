/* test_progress.c - the progress line (lib/kpt_progress.h) on a fake clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kpt_progress.h"

static int64_t now_ms;
static unsigned clock_reads;

static int64_t fake_clock(void)
{
	clock_reads++;
	return now_ms;
}

static char *buf;
static size_t len;
static FILE *out;

/* Reporting on into a memory stream, at fake time 0. */
static void start(int tty)
{
	struct kpt_progress_opts o = { .prog = "kptprof view", .tty = tty, .after_ms = -1, .clock_ms = fake_clock };

	now_ms = 0;
	clock_reads = 0;
	out = open_memstream(&buf, &len);
	assert_non_null(out);
	o.out = out;
	kpt_progress_setup(&o);
}

/* What was written so far (flushed; the stream stays open). */
static const char *text(void)
{
	fflush(out);
	return buf;
}

static void finish(void)
{
	kpt_progress_stop();
	fclose(out);
	free(buf);
	buf = NULL;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_nothing_within_two_seconds(void **state)
{
	(void)state;
	start(1);
	kpt_progress_begin("trace", 1000, "kernels");
	for (int i = 0; i < 1000; i++) {
		now_ms = i * 1999 / 999;
		kpt_progress_add(1);
	}
	kpt_progress_end();
	assert_int_equal(strlen(text()), 0);
	finish();
}

static void test_terminal_line_overwrites_itself(void **state)
{
	(void)state;
	start(1);
	kpt_progress_begin("trace", 2000000, "kernels");
	now_ms = 3000;
	kpt_progress_add(900000);
	assert_string_equal(text(), "\rkptprof view: trace 45% (900k of 2.0M kernels), 3 s\033[K");
	finish();
}

static void test_terminal_at_most_four_a_second(void **state)
{
	(void)state;
	start(1);
	kpt_progress_begin("trace", 0, "kernels");
	/* 10 s past the quiet time, a report every 50 ms: 200 reports */
	for (now_ms = 2000; now_ms < 12000; now_ms += 50)
		kpt_progress_add(1);
	assert_in_range(count(text(), "\r"), 38, 41);
	assert_int_equal(count(text(), "\n"), 0);
	assert_non_null(strstr(text(), "kptprof view: trace 196 kernels, 11 s\033[K"));
	finish();
}

static void test_log_one_line_every_ten_seconds(void **state)
{
	(void)state;
	start(0);
	kpt_progress_begin("loading", 0, "kernels");
	kpt_progress_expect(2000000);
	for (now_ms = 0; now_ms <= 25000; now_ms += 100)
		kpt_progress_add(1000);
	kpt_progress_end();
	assert_string_equal(text(), "kptprof view: loading 1% (21k of 2.0M kernels), 2 s\n"
				    "kptprof view: loading 6% (121k of 2.0M kernels), 12 s\n"
				    "kptprof view: loading 11% (221k of 2.0M kernels), 22 s\n");
	finish();
}

static void test_end_erases_the_line(void **state)
{
	(void)state;
	start(1);
	kpt_progress_begin("summary", 10, "kernels");
	now_ms = 2500;
	kpt_progress_add(10);
	kpt_progress_end();
	assert_string_equal(text(), "\rkptprof view: summary 100% (10 of 10 kernels), 2 s\033[K\r\033[K");
	/* outside a phase: nothing; stop after end: nothing more */
	now_ms = 5000;
	kpt_progress_add(10);
	kpt_progress_stop();
	assert_string_equal(text(), "\rkptprof view: summary 100% (10 of 10 kernels), 2 s\033[K\r\033[K");
	finish();
}

static void test_a_fixed_total_ignores_expect(void **state)
{
	(void)state;
	start(0);
	kpt_progress_begin("storing", 4000, "keys");
	kpt_progress_expect(1000000);
	now_ms = 2000;
	kpt_progress_add(1000);
	assert_string_equal(text(), "kptprof view: storing 25% (1.0k of 4.0k keys), 2 s\n");
	finish();
}

/* the hot loop: a frozen clock is read a few dozen times in 10 million
 * reports, not once a report */
static void test_clock_read_only_every_stride_items(void **state)
{
	(void)state;
	start(1);
	kpt_progress_begin("trace", 0, "kernels");
	for (int i = 0; i < 10000000; i++)
		kpt_progress_add(1);
	assert_in_range(clock_reads, 2, 40);
	kpt_progress_end();
	finish();
}

static void test_off_until_setup_and_after_stop(void **state)
{
	(void)state;
	start(0);
	kpt_progress_stop();
	clock_reads = 0;
	kpt_progress_begin("trace", 10, "kernels");
	now_ms = 60000;
	kpt_progress_add(5);
	kpt_progress_end();
	assert_int_equal(clock_reads, 0);
	assert_int_equal(strlen(text()), 0);
	fclose(out);
	free(buf);
	buf = NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_within_two_seconds),
		cmocka_unit_test(test_terminal_line_overwrites_itself),
		cmocka_unit_test(test_terminal_at_most_four_a_second),
		cmocka_unit_test(test_log_one_line_every_ten_seconds),
		cmocka_unit_test(test_end_erases_the_line),
		cmocka_unit_test(test_a_fixed_total_ignores_expect),
		cmocka_unit_test(test_clock_read_only_every_stride_items),
		cmocka_unit_test(test_off_until_setup_and_after_stop),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
