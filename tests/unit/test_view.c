/* test_view.c - kpt_view_write on hand-made recordings: a recording without
 * kernels still gives a report that says what is missing; names are escaped
 * in the page; a failure leaves no folder behind. */
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

#include "kpt_format.h"
#include "kpt_view.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/kpt-view-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A recording with one device, meta and nkernels kernels named name. */
static void write_rec(const char *path, const char *name, int nkernels)
{
	struct kpt_writer *w = NULL;
	struct kpt_device dev;
	struct kpt_process pr;
	uint32_t nm, cmd;

	assert_int_equal(kpt_writer_create(path, NULL, &w, NULL), 0);
	assert_int_equal(kpt_writer_meta(w, "command", "./app --flag=<x> & more", NULL), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, name, &nm, NULL), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "app", &cmd, NULL), 0);
	memset(&dev, 0, sizeof dev);
	dev.name = "NVIDIA H100 80GB HBM3";
	dev.slug = "nvidia-h100-80gb-hbm3";
	dev.uuid = "";
	dev.driver_string = "";
	assert_int_equal(kpt_writer_device(w, &dev, NULL), 0);
	memset(&pr, 0, sizeof pr);
	pr.rank = KPT_NONE;
	pr.command = cmd;
	assert_int_equal(kpt_writer_process(w, &pr, NULL), 0);
	for (int i = 0; i < nkernels; i++) {
		struct kpt_kernel k;

		memset(&k, 0, sizeof k);
		k.start_ns = 1000 + 100 * (uint64_t)i;
		k.end_ns = k.start_ns + 50;
		k.name = nm;
		k.stream = 7;
		k.range = KPT_NONE;
		k.graph = KPT_NONE;
		k.grid[0] = k.block[0] = 1;
		assert_int_equal(kpt_writer_kernels(w, &k, 1, NULL), 0);
	}
	assert_int_equal(kpt_writer_commit(w, NULL), 0);
	kpt_writer_destroy(w);
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "r");
	char *buf;
	long n;

	assert_non_null(fp);
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, fp), (size_t)n);
	buf[n] = '\0';
	fclose(fp);
	return buf;
}

static void test_recording_without_kernels_still_reports(void **state)
{
	struct kpt_view_opts o = { .no_render = 1 };
	struct kpt_view_result res;
	char rec[128], dir[128], html[160], png[160];
	struct kpt_diag d;
	char *page;

	(void)state;
	snprintf(rec, sizeof rec, "%s/empty.kpt", tmpdir);
	snprintf(dir, sizeof dir, "%s/empty-view", tmpdir);
	write_rec(rec, "k", 0);
	if (kpt_view_write(rec, &o, dir, &res, &d) != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(res.has_timeline, 0);
	assert_true(res.notes >= 1);
	snprintf(png, sizeof png, "%s/timeline.png", dir);
	assert_int_equal(access(png, F_OK), -1);
	snprintf(html, sizeof html, "%s/index.html", dir);
	page = slurp(html);
	assert_non_null(strstr(page, "nothing to draw"));
	assert_non_null(strstr(page, "no kernels"));   /* the top-kernels plot's reason */
	free(page);
}

static void test_names_and_meta_escaped_in_page(void **state)
{
	struct kpt_view_opts o = { .no_render = 1 };
	char rec[128], dir[128], html[160];
	struct kpt_diag d;
	char *page;

	(void)state;
	snprintf(rec, sizeof rec, "%s/evil.kpt", tmpdir);
	snprintf(dir, sizeof dir, "%s/evil-view", tmpdir);
	write_rec(rec, "<script>alert(1)</script>&<img src=x>", 3);
	if (kpt_view_write(rec, &o, dir, NULL, &d) != 0)
		fail_msg("%s", d.msg);
	snprintf(html, sizeof html, "%s/index.html", dir);
	page = slurp(html);
	assert_null(strstr(page, "<script"));
	assert_null(strstr(page, "<img src=x"));
	assert_non_null(strstr(page, "&lt;script&gt;alert(1)&lt;/script&gt;&amp;&lt;img src=x&gt;"));
	assert_non_null(strstr(page, "./app --flag=&lt;x&gt; &amp; more"));
	free(page);
}

static void test_failure_leaves_no_folder(void **state)
{
	char rec[128], dir[128], cmd[300];
	struct kpt_diag d;
	FILE *fp;

	(void)state;
	snprintf(rec, sizeof rec, "%s/garbage.kpt", tmpdir);
	snprintf(dir, sizeof dir, "%s/garbage-view", tmpdir);
	fp = fopen(rec, "w");
	assert_non_null(fp);
	fputs("garbage, not a recording", fp);
	fclose(fp);
	assert_true(kpt_view_write(rec, NULL, dir, NULL, &d) < 0);
	assert_non_null(strstr(d.msg, "garbage.kpt"));
	assert_int_equal(access(dir, F_OK), -1);
	/* nothing beside it either (DIR.tmp-XXXXXX) */
	snprintf(cmd, sizeof cmd, "ls -d '%s'.* 2>/dev/null | grep -q .", dir);
	assert_int_not_equal(system(cmd), 0);
}

static void test_refuses_a_folder_it_did_not_write(void **state)
{
	char rec[128], dir[128], file[160];
	struct kpt_diag d;
	FILE *fp;

	(void)state;
	snprintf(rec, sizeof rec, "%s/ok.kpt", tmpdir);
	snprintf(dir, sizeof dir, "%s/users", tmpdir);
	write_rec(rec, "k", 2);
	assert_int_equal(mkdir(dir, 0777), 0);
	snprintf(file, sizeof file, "%s/thesis.tex", dir);
	fp = fopen(file, "w");
	assert_non_null(fp);
	fclose(fp);
	assert_int_equal(kpt_view_write(rec, NULL, dir, NULL, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, "not a kptprof view"));
	assert_int_equal(access(file, F_OK), 0);
	/* the same without a diag to fill */
	assert_int_equal(kpt_view_write(rec, NULL, dir, NULL, NULL), KPT_E_INVAL);
	assert_int_equal(access(file, F_OK), 0);
	/* an empty folder is fine */
	unlink(file);
	assert_int_equal(kpt_view_write(rec, &(struct kpt_view_opts){ .no_render = 1 }, dir, NULL, &d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recording_without_kernels_still_reports),
		cmocka_unit_test(test_names_and_meta_escaped_in_page),
		cmocka_unit_test(test_failure_leaves_no_folder),
		cmocka_unit_test(test_refuses_a_folder_it_did_not_write),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
