/* test_baseline.c - analyzer/baseline's folder kind: the listing made once
 * at open, the newest session's idle gap, session naming on update (two
 * recordings with no date and no boot are both kept; nothing is written
 * over another session; a byte-identical copy is not added twice), and
 * the directory-descriptor walk (a level swapped for a symbolic link makes
 * update fail with one message and write nothing outside). Recordings are
 * made in-process by kpt_synth. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_baseline.h"
#include "kpt_synth.h"

#define SLUG "nvidia-h100-80gb-hbm3"

struct fx {
	char root[64];              /* temp folder */
	char dir[128];              /* root/baselines */
	char out[128];              /* root/outside */
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof *f);

	snprintf(f->root, sizeof f->root, "/tmp/kpt-baseline.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->dir, sizeof f->dir, "%s/baselines", f->root);
	snprintf(f->out, sizeof f->out, "%s/outside", f->root);
	assert_int_equal(mkdir(f->out, 0755), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

/* A recording of suite "quick", seed s (GPU UUID from it), 3 runs; time
 * and boot as given ("" none: meta time "" reads as undated); slow: a
 * --slow percentage so two files of one seed differ. */
static void synth(const char *path, uint64_t seed, const char *time, const char *boot, double slow, long settle)
{
	struct kpt_synth_opts o;
	struct kpt_diag d = { 0 };
	char gap[24];

	kpt_synth_defaults(&o);
	o.runs = 3;
	o.iterations = 3;
	o.kernels_per_iter = 4;
	o.names = 4;
	o.suite = "quick";
	o.seed = seed;
	o.meta[o.nmeta++] = (struct kpt_meta_kv){ "time", time };
	if (boot)
		o.meta[o.nmeta++] = (struct kpt_meta_kv){ "boot_id", boot };
	if (settle >= 0) {
		snprintf(gap, sizeof gap, "%ld", settle);
		o.meta[o.nmeta++] = (struct kpt_meta_kv){ "settle_us", gap };
	}
	if (slow != 0) {
		o.slow[0] = (struct kpt_synth_slow){ "_", slow };
		o.nslow = 1;
	}
	assert_int_equal(kpt_synth_write(&o, path, &d), 0);
}

/* Files in folder (not starting with '.'), or -1 when it cannot be read. */
static int count_files(const char *folder)
{
	DIR *dd = opendir(folder);
	struct dirent *e;
	int n = 0;

	if (!dd)
		return -1;
	while ((e = readdir(dd)))
		n += e->d_name[0] != '.';
	closedir(dd);
	return n;
}

static int add(struct fx *f, const char *rec, struct kpt_baseline_add_result *r, struct kpt_diag *d)
{
	struct kpt_baseline_add_opts o = { 0 };

	kpt_diag_clear(d);
	return kpt_baseline_add(f->dir, rec, &o, r, d);
}

static void test_open_lists_sessions_once_oldest_first(void **state)
{
	struct fx *f = *state;
	struct kpt_baseline_where w = { .dir = f->dir };
	struct kpt_baseline *b = NULL;
	struct kpt_baseline_add_result r;
	struct kpt_baseline_desc ds;
	struct kpt_diag d = { 0 };
	const char *const *files;
	char rec[160], folder[256], stray[300];
	size_t n;

	snprintf(rec, sizeof rec, "%s/a.kpt", f->root);
	synth(rec, 1, "2026-11-02T00:00:00Z", "b1", 0, 1000);
	assert_int_equal(add(f, rec, &r, &d), 0);
	synth(rec, 2, "2026-11-01T00:00:00Z", "b2", 0, 3000);
	assert_int_equal(add(f, rec, &r, &d), 0);
	assert_int_equal(kpt_baseline_open(SLUG, "quick", &w, &b, &d), 0);
	kpt_baseline_describe(b, &ds);
	assert_string_equal(ds.kind, "folder");
	assert_int_equal(ds.sessions, 2);
	assert_false(ds.one_file);
	snprintf(folder, sizeof folder, "%s/%s/quick", f->dir, SLUG);
	assert_string_equal(ds.where, folder);
	files = kpt_baseline_files(b, &n);
	assert_int_equal(n, 2);
	assert_non_null(strstr(files[0], "20261101"));
	assert_non_null(strstr(files[1], "20261102"));
	assert_null(kpt_baseline_side(b));
	/* a file added after open is not seen: the listing is the one made at open */
	snprintf(stray, sizeof stray, "%s/20261103T000000Z-zz.kpt", folder);
	assert_int_equal(symlink(files[0], stray), 0);
	files = kpt_baseline_files(b, &n);
	assert_int_equal(n, 2);
	/* the newest session (by name: its time) was recorded with 1000 us */
	assert_int_equal(kpt_baseline_settle_us(b), 1000);
	kpt_baseline_close(b);
}

static void test_open_missing_is_notfound_and_one_file_layout_reads(void **state)
{
	struct fx *f = *state;
	struct kpt_baseline_where w = { .dir = f->dir };
	struct kpt_baseline *b = NULL;
	struct kpt_baseline_desc ds;
	struct kpt_diag d = { 0 };
	char p[256];

	assert_int_equal(kpt_baseline_open(SLUG, "quick", &w, &b, &d), KPT_E_NOTFOUND);
	assert_null(b);
	assert_non_null(strstr(d.msg, "no baseline for GPU '" SLUG "' and suite 'quick'"));
	snprintf(p, sizeof p, "%s/%s", f->dir, SLUG);
	assert_int_equal(mkdir(f->dir, 0755), 0);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/%s/quick.kpt", f->dir, SLUG);
	synth(p, 3, "2026-11-01T00:00:00Z", "b", 0, -1);
	assert_int_equal(kpt_baseline_open(SLUG, "quick", &w, &b, &d), 0);
	kpt_baseline_describe(b, &ds);
	assert_true(ds.one_file);
	assert_int_equal(ds.sessions, 1);
	assert_string_equal(ds.where, p);
	/* no settle_us key: recorded before the gap existed */
	assert_int_equal(kpt_baseline_settle_us(b), 0);
	kpt_baseline_close(b);
	assert_int_equal(kpt_baseline_open("../x", "quick", &w, &b, &d), KPT_E_INVAL);
	assert_int_equal(kpt_baseline_open(SLUG, "a/b", &w, &b, &d), KPT_E_INVAL);
}

/* issue 34 item 5: two imported recordings with no date and no boot have
 * one name (undated-<uuid8>.kpt); the second must not replace the first */
static void test_update_keeps_two_undated_recordings(void **state)
{
	struct fx *f = *state;
	struct kpt_baseline_add_result r;
	struct kpt_diag d = { 0 };
	char a[160], b[160], folder[256], first[sizeof r.path];

	snprintf(a, sizeof a, "%s/a.kpt", f->root);
	snprintf(b, sizeof b, "%s/b.kpt", f->root);
	synth(a, 7, "", NULL, 0, -1);
	synth(b, 7, "", NULL, 20, -1);
	assert_int_equal(add(f, a, &r, &d), 0);
	snprintf(first, sizeof first, "%s", r.path);
	assert_non_null(strstr(first, "/undated-"));
	assert_int_equal(add(f, b, &r, &d), 0);
	assert_string_not_equal(r.path, first);
	assert_false(r.duplicate);
	assert_int_equal(r.sessions, 2);
	snprintf(folder, sizeof folder, "%s/%s/quick", f->dir, SLUG);
	assert_int_equal(count_files(folder), 2);
	/* the first is still the first recording's bytes */
	{
		char cmd[2 * sizeof r.path + 200];

		snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", a, first);
		assert_int_equal(system(cmd), 0);
		snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", b, r.path);
		assert_int_equal(system(cmd), 0);
	}
	/* the same file again is not added */
	assert_int_equal(add(f, b, &r, &d), 0);
	assert_true(r.duplicate);
	assert_int_equal(count_files(folder), 2);
	/* a third, again with the same name: a third file */
	synth(b, 7, "", NULL, 40, -1);
	assert_int_equal(add(f, b, &r, &d), 0);
	assert_int_equal(count_files(folder), 3);
}

/* same GPU and boot is the same session: the newer recording replaces it */
static void test_update_replaces_only_the_same_session(void **state)
{
	struct fx *f = *state;
	struct kpt_baseline_add_result r;
	struct kpt_diag d = { 0 };
	char a[160], folder[256];

	snprintf(a, sizeof a, "%s/a.kpt", f->root);
	snprintf(folder, sizeof folder, "%s/%s/quick", f->dir, SLUG);
	synth(a, 9, "2026-11-01T00:00:00Z", "boot-1", 0, -1);
	assert_int_equal(add(f, a, &r, &d), 0);
	synth(a, 9, "2026-11-02T00:00:00Z", "boot-2", 0, -1);
	assert_int_equal(add(f, a, &r, &d), 0);
	assert_int_equal(count_files(folder), 2);
	synth(a, 9, "2026-11-02T05:00:00Z", "boot-2", 5, -1);
	assert_int_equal(add(f, a, &r, &d), 0);
	assert_int_equal(count_files(folder), 2);
	assert_non_null(strstr(r.path, "20261102T050000Z"));
}

static void test_update_rejects_one_run_and_names_the_rule(void **state)
{
	struct fx *f = *state;
	struct kpt_synth_opts o;
	struct kpt_baseline_add_result r;
	struct kpt_diag d = { 0 };
	char a[160];

	snprintf(a, sizeof a, "%s/one.kpt", f->root);
	kpt_synth_defaults(&o);
	o.runs = 1;
	o.iterations = 2;
	o.suite = "quick";
	assert_int_equal(kpt_synth_write(&o, a, &d), 0);
	assert_int_equal(add(f, a, &r, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, ">= 2 runs"));
	assert_int_equal(count_files(f->dir), -1); /* nothing made */
}

/* issue 34 item 7: a level of the path that is a symbolic link (here the
 * suite folder, pointing outside) is refused: one message, nothing written
 * outside, and a link at the slug level likewise */
static void test_update_refuses_a_linked_level(void **state)
{
	struct fx *f = *state;
	struct kpt_baseline_add_result r;
	struct kpt_diag d = { 0 };
	char a[160], p[256];

	snprintf(a, sizeof a, "%s/a.kpt", f->root);
	synth(a, 11, "2026-11-01T00:00:00Z", "b", 0, -1);
	assert_int_equal(mkdir(f->dir, 0755), 0);
	snprintf(p, sizeof p, "%s/%s", f->dir, SLUG);
	assert_int_equal(mkdir(p, 0755), 0);
	snprintf(p, sizeof p, "%s/%s/quick", f->dir, SLUG);
	assert_int_equal(symlink(f->out, p), 0);
	assert_int_equal(add(f, a, &r, &d), KPT_E_IO);
	assert_non_null(strstr(d.msg, "is not a plain folder"));
	assert_null(strchr(d.msg, '\n'));
	assert_int_equal(count_files(f->out), 0);
	assert_int_equal(unlink(p), 0);
	snprintf(p, sizeof p, "%s/%s", f->dir, SLUG);
	assert_int_equal(rmdir(p), 0);
	assert_int_equal(symlink(f->out, p), 0);
	assert_int_equal(add(f, a, &r, &d), KPT_E_IO);
	assert_int_equal(count_files(f->out), 0);
}

/* --keep: only files named as sessions are pruned, the oldest first */
static void test_update_prunes_oldest_sessions_only(void **state)
{
	struct fx *f = *state;
	struct kpt_baseline_add_opts o = { .keep = 2 };
	struct kpt_baseline_add_result r;
	struct kpt_diag d = { 0 };
	char a[160], folder[256], mine[300];
	FILE *fp;

	snprintf(a, sizeof a, "%s/a.kpt", f->root);
	snprintf(folder, sizeof folder, "%s/%s/quick", f->dir, SLUG);
	for (int i = 1; i <= 4; i++) {
		char t[32], b[8];

		snprintf(t, sizeof t, "2026-11-0%dT00:00:00Z", i);
		snprintf(b, sizeof b, "b%d", i);
		synth(a, 20 + (uint64_t)i, t, b, 0, -1);
		assert_int_equal(kpt_baseline_add(f->dir, a, &o, &r, &d), 0);
		if (i == 1) {
			snprintf(mine, sizeof mine, "%s/my-notes.kpt", folder);
			assert_non_null(fp = fopen(mine, "w"));
			fclose(fp);
		}
	}
	assert_int_equal(r.sessions, 2);
	assert_int_equal(count_files(folder), 3);
	assert_int_equal(access(mine, F_OK), 0);
}

static void test_path_is_dir_slug_suite_and_refuses_to_cut(void **state)
{
	char buf[32];

	assert_int_equal(kpt_baseline_path("baselines", "nvidia-h200", "default", buf, sizeof buf), 0);
	assert_string_equal(buf, "baselines/nvidia-h200/default");
	assert_int_equal(kpt_baseline_path("baselines", "nvidia-h200", "default-longer", buf, sizeof buf),
			 KPT_E_INVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_open_lists_sessions_once_oldest_first, setup, teardown),
		cmocka_unit_test_setup_teardown(test_open_missing_is_notfound_and_one_file_layout_reads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_keeps_two_undated_recordings, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_replaces_only_the_same_session, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_rejects_one_run_and_names_the_rule, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_refuses_a_linked_level, setup, teardown),
		cmocka_unit_test_setup_teardown(test_update_prunes_oldest_sessions_only, setup, teardown),
		cmocka_unit_test(test_path_is_dir_slug_suite_and_refuses_to_cut),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
