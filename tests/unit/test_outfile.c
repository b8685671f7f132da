/* test_outfile.c - output files (lib/kpt_outfile.h): the size notice of
 * output streams (once per stream, before the write that takes it past the
 * size, for kpt_out_watch and kpt_out_create alike); what an output path
 * may be (a FIFO in place, a link refused, an input refused); names inside
 * a folder replace a planted link; temporaries are removed on abandon and
 * by kpt_out_remove_temps. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
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
	kpt_out_inputs_clear();
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

/* Files in dir whose name holds part. */
static int count_named(const char *part)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (dp && (e = readdir(dp)))
		n += strstr(e->d_name, part) != NULL;
	if (dp)
		closedir(dp);
	return n;
}

static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static void test_a_link_is_refused_and_left_as_it_is(void **state)
{
	char victim[128], link[128], buf[64];
	struct kpt_diag d = { 0 };
	FILE *f;

	(void)state;
	snprintf(victim, sizeof victim, "%s/victim", dir);
	snprintf(link, sizeof link, "%s/link", dir);
	f = fopen(victim, "w");
	fputs("keep", f);
	fclose(f);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(kpt_out_check(link, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, "it is a symbolic link"));
	assert_int_equal(kpt_out_create(link, &f, NULL), KPT_E_INVAL); /* no diag: still refused */
	assert_null(f);
	slurp(victim, buf, sizeof buf);
	assert_string_equal(buf, "keep");
	assert_int_equal(count_named(".tmp"), 0);
}

static void test_a_fifo_is_written_in_place(void **state)
{
	char fifo[128], buf[64] = "";
	int rd;
	FILE *f;
	struct stat st;

	(void)state;
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	rd = open(fifo, O_RDONLY | O_NONBLOCK); /* a reader, so the writer's open does not wait */
	assert_true(rd >= 0);
	assert_int_equal(kpt_out_create(fifo, &f, NULL), 0);
	fputs("hello", f);
	assert_int_equal(kpt_out_publish(f, fifo, 1, NULL), 0);
	assert_int_equal(read(rd, buf, sizeof buf - 1), 5);
	assert_string_equal(buf, "hello");
	close(rd);
	assert_int_equal(lstat(fifo, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
}

static void test_a_seekable_output_onto_a_fifo_goes_through_memory(void **state)
{
	char fifo[128], buf[64] = "";
	struct kpt_out o;
	int rd;

	(void)state;
	snprintf(fifo, sizeof fifo, "%s/fifo", dir);
	assert_int_equal(mkfifo(fifo, 0600), 0);
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(kpt_out_open(fifo, KPT_OUT_SEEKABLE, &o, NULL), 0);
	assert_int_equal(pwrite(o.fd, "world", 5, 5), 5);
	assert_int_equal(pwrite(o.fd, "hello", 5, 0), 5);
	assert_int_equal(kpt_out_close(&o, 1, NULL), 0);
	assert_int_equal(read(rd, buf, sizeof buf - 1), 10);
	assert_string_equal(buf, "helloworld");
	close(rd);
}

static void test_an_input_is_refused_by_any_spelling(void **state)
{
	char in[128], hard[128], odd[160], sub[128], session[160];
	struct kpt_diag d = { 0 };
	FILE *f;

	(void)state;
	snprintf(in, sizeof in, "%s/in.kpt", dir);
	snprintf(hard, sizeof hard, "%s/hard.kpt", dir);
	snprintf(odd, sizeof odd, "%s/./../%s/in.kpt", dir, strrchr(dir, '/') + 1);
	snprintf(sub, sizeof sub, "%s/folder", dir);
	snprintf(session, sizeof session, "%s/folder/s1.kpt", dir);
	f = fopen(in, "w");
	fclose(f);
	assert_int_equal(link(in, hard), 0);
	assert_int_equal(mkdir(sub, 0755), 0);
	f = fopen(session, "w");
	fclose(f);
	assert_int_equal(kpt_out_check(hard, NULL), 0);
	assert_int_equal(kpt_out_input(in), 0);
	assert_int_equal(kpt_out_input(sub), 0);
	assert_int_equal(kpt_out_check(hard, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, "it is an input of this command"));
	assert_int_equal(kpt_out_check(odd, NULL), KPT_E_INVAL);
	assert_int_equal(kpt_out_check(session, NULL), KPT_E_INVAL);
	assert_int_equal(kpt_out_create(in, &f, NULL), KPT_E_INVAL);
	assert_int_equal(kpt_out_create_at(sub, "s1.kpt", &f, NULL), KPT_E_INVAL);
	/* an input that does not exist yet, by its path */
	snprintf(odd, sizeof odd, "%s/later.kpt", dir);
	assert_int_equal(kpt_out_input(odd), 0);
	assert_int_equal(kpt_out_check(odd, NULL), KPT_E_INVAL);
	assert_int_equal(kpt_out_check(sub, &d), KPT_E_INVAL); /* and a folder is no output file */
	snprintf(odd, sizeof odd, "%s/new/", dir);
	assert_int_equal(kpt_out_check(odd, NULL), KPT_E_INVAL);
}

static void test_a_name_in_a_folder_replaces_a_planted_link(void **state)
{
	char victim[128], planted[128], buf[64];
	struct stat st;
	FILE *f;

	(void)state;
	snprintf(victim, sizeof victim, "%s/victim", dir);
	snprintf(planted, sizeof planted, "%s/plot.gp", dir);
	f = fopen(victim, "w");
	fputs("keep", f);
	fclose(f);
	assert_int_equal(symlink(victim, planted), 0);
	assert_int_equal(kpt_out_create_at(dir, "plot.gp", &f, NULL), 0);
	fputs("new", f);
	assert_int_equal(kpt_out_publish(f, planted, 0, NULL), 0);
	assert_int_equal(lstat(planted, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	slurp(victim, buf, sizeof buf);
	assert_string_equal(buf, "keep");
	slurp(planted, buf, sizeof buf);
	assert_string_equal(buf, "new");
	assert_int_equal(kpt_out_create_at(dir, "../escape", &f, NULL), KPT_E_INVAL);
}

static void test_temporaries_go_on_abandon_and_on_a_signal(void **state)
{
	char path[128];
	struct kpt_out o;
	FILE *f;

	(void)state;
	snprintf(path, sizeof path, "%s/out.kpt", dir);
	assert_int_equal(kpt_out_create(path, &f, NULL), 0);
	assert_int_equal(count_named("out.kpt.tmp-"), 1);
	kpt_out_discard(f, path);
	assert_int_equal(count_named("out.kpt"), 0);
	assert_int_equal(kpt_out_open(path, KPT_OUT_SEEKABLE, &o, NULL), 0);
	assert_int_equal(count_named("out.kpt.tmp-"), 1);
	kpt_out_remove_temps(); /* what the handler of SIGTERM does */
	assert_int_equal(count_named("out.kpt"), 0);
	kpt_out_abandon(&o);
	kpt_out_abandon(&o); /* twice: closed already */
	assert_int_equal(count_named("out.kpt"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_notice_once_before_the_crossing_write, setup, teardown),
		cmocka_unit_test_setup_teardown(test_out_create_streams_are_watched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_output_and_no_notice_set_say_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_write_errors_reach_the_stream, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_link_is_refused_and_left_as_it_is, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_fifo_is_written_in_place, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_seekable_output_onto_a_fifo_goes_through_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_an_input_is_refused_by_any_spelling, setup, teardown),
		cmocka_unit_test_setup_teardown(test_a_name_in_a_folder_replaces_a_planted_link, setup, teardown),
		cmocka_unit_test_setup_teardown(test_temporaries_go_on_abandon_and_on_a_signal, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
