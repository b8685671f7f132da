/* test_folder.c - the recordings of a folder (lib/kpt_folder.h). */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_folder.h"

static void touch(const char *dir, const char *name)
{
	char p[4096];
	FILE *f;

	snprintf(p, sizeof p, "%s/%s", dir, name);
	f = fopen(p, "w");
	assert_non_null(f);
	fclose(f);
}

static void test_recording_name_rule(void **state)
{
	assert_true(kpt_recording_name("a.kpt"));
	assert_true(kpt_recording_name("20261124T101010Z-abc.kpt"));
	assert_false(kpt_recording_name(".kpt"));
	assert_false(kpt_recording_name(".hidden.kpt"));
	assert_false(kpt_recording_name("a.kpt.tmp123"));
	assert_false(kpt_recording_name("a.txt"));
}

static void test_lists_recordings_sorted_and_keeps_fd(void **state)
{
	char dir[] = "/tmp/test_folder.XXXXXX";
	char **names;
	size_t n;
	int fd;

	assert_non_null(mkdtemp(dir));
	touch(dir, "b.kpt");
	touch(dir, "a.kpt");
	touch(dir, ".x.kpt");
	touch(dir, "notes.txt");
	touch(dir, "c.kpt.tmp99");
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_true(fd >= 0);
	for (int pass = 0; pass < 2; pass++) { /* fd stays open and usable */
		assert_int_equal(kpt_folder_recordings(fd, dir, &names, &n, NULL), 0);
		assert_int_equal(n, 2);
		assert_string_equal(names[0], "a.kpt");
		assert_string_equal(names[1], "b.kpt");
		kpt_names_free(names, n);
	}
	close(fd);
	const char *rm[] = { "a.kpt", "b.kpt", ".x.kpt", "notes.txt", "c.kpt.tmp99" };
	for (size_t i = 0; i < 5; i++) {
		char p[4096];

		snprintf(p, sizeof p, "%s/%s", dir, rm[i]);
		unlink(p);
	}
	rmdir(dir);
}

static void test_empty_folder_is_no_names(void **state)
{
	char dir[] = "/tmp/test_folder.XXXXXX";
	char **names = (char **)1;
	size_t n = 9;
	int fd;

	assert_non_null(mkdtemp(dir));
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	assert_int_equal(kpt_folder_recordings(fd, dir, &names, &n, NULL), 0);
	assert_int_equal(n, 0);
	assert_null(names);
	kpt_names_free(names, n);
	close(fd);
	rmdir(dir);
}

static void test_bad_fd_is_an_io_error_naming_the_folder(void **state)
{
	struct kpt_diag d = { 0 };
	char **names;
	size_t n;

	assert_int_equal(kpt_folder_recordings(-1, "gone/folder", &names, &n, &d), KPT_E_IO);
	assert_non_null(strstr(d.msg, "'gone/folder'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recording_name_rule),
		cmocka_unit_test(test_lists_recordings_sorted_and_keeps_fd),
		cmocka_unit_test(test_empty_folder_is_no_names),
		cmocka_unit_test(test_bad_fd_is_an_io_error_naming_the_folder),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
