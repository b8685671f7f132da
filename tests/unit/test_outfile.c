/* test_outfile.c - the size notice of output streams (lib/kpt_outfile.h):
 * once per stream, before the write that takes it past the size, for
 * kpt_out_watch and kpt_out_create alike. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "kpt_outfile.h"

static char dir[64];
static int notices;
static char last_what[4096];
static uint64_t last_at;
static off_t size_at_notice; /* of the file being written, when the notice came */
static const char *watched_path;

static void on_notice(const char *what, uint64_t at)
{
	struct stat st;

	notices++;
	snprintf(last_what, sizeof last_what, "%s", what);
	last_at = at;
	size_at_notice = watched_path && stat(watched_path, &st) == 0 ? st.st_size : -1;
}

static int setup(void **state)
{
	(void)state;
	snprintf(dir, sizeof dir, "/tmp/kpt-test-outfile.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	notices = 0;
	last_at = 0;
	watched_path = NULL;
	kpt_out_set_notice(on_notice, 1000);
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	kpt_out_set_notice(NULL, 0);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void write_bytes(FILE *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		assert_int_not_equal(fputc('x', f), EOF);
}

static void test_notice_once_before_the_crossing_write(void **state)
{
	char path[128];
	FILE *f;
	int fd;

	(void)state;
	snprintf(path, sizeof path, "%s/plain", dir);
	watched_path = path;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	f = kpt_out_watch(fd, "the output", 1, 0); /* line buffered: every line is a write */
	assert_non_null(f);
	write_bytes(f, 999);
	assert_int_equal(fflush(f), 0);
	assert_int_equal(notices, 0); /* 999 bytes: not past 1000 */
	write_bytes(f, 10);
	assert_int_equal(fflush(f), 0);
	assert_int_equal(notices, 1);
	assert_string_equal(last_what, "the output");
	assert_int_equal(last_at, 1000);
	assert_int_equal(size_at_notice, 999); /* said before the crossing bytes were written */
	write_bytes(f, 5000);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(notices, 1); /* once per stream */
	watched_path = NULL;
}

static void test_out_create_streams_are_watched(void **state)
{
	char path[128];
	FILE *f;
	struct stat st;

	(void)state;
	snprintf(path, sizeof path, "%s/report.json", dir);
	assert_int_equal(kpt_out_create(path, &f, NULL), 0);
	write_bytes(f, 3000);
	assert_int_equal(kpt_out_publish(f, path, 1, NULL), 0); /* with the sync */
	assert_int_equal(notices, 1);
	assert_string_equal(last_what, path);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 3000);
}

static void test_small_output_and_no_notice_set_say_nothing(void **state)
{
	char path[128];
	FILE *f;

	(void)state;
	snprintf(path, sizeof path, "%s/small", dir);
	assert_int_equal(kpt_out_create(path, &f, NULL), 0);
	write_bytes(f, 1000); /* exactly the size: not past it */
	assert_int_equal(kpt_out_publish(f, path, 0, NULL), 0);
	assert_int_equal(notices, 0);
	kpt_out_set_notice(NULL, 0);
	assert_int_equal(kpt_out_create(path, &f, NULL), 0);
	write_bytes(f, 5000);
	assert_int_equal(kpt_out_publish(f, path, 0, NULL), 0);
	assert_int_equal(notices, 0);
}

static void test_write_errors_reach_the_stream(void **state)
{
	FILE *f;
	int fd = open("/dev/full", O_WRONLY);

	(void)state;
	if (fd < 0)
		skip();
	f = kpt_out_watch(fd, "/dev/full", 1, 65536);
	assert_non_null(f);
	write_bytes(f, 100);
	assert_int_not_equal(fflush(f), 0);
	assert_true(ferror(f));
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_notice_once_before_the_crossing_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_create_streams_are_watched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_output_and_no_notice_set_say_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_errors_reach_the_stream, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
