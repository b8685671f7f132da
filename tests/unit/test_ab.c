/* test_ab.c - the A/B orchestration (collectors/kpt_ab.h) without
 * processes: which workloads both revisions have, the ABBA order of the
 * pairs, the merge of each side and what a failed run says, through a
 * recorder stand-in (kpt_ab_opts.record) that writes a small recording. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_ab.h"
#include "kpt_format.h"

#define T0 UINT64_C(1700000000000000000)

/* What the stand-in saw, in call order: "A" or "B" per call, and the
 * workloads of the last call. */
static char order[64];
static size_t last_n;
static int fail_call = -1;      /* this call (from 0) exits 3 */

/* A one-kernel recording at path; side 'a' or 'b' in its meta. */
static int write_one(const char *path, const char *side, struct kpt_diag *d)
{
	struct kpt_writer *w;
	struct kpt_device dev = { .index = 0, .name = "NVIDIA H100 80GB HBM3", .slug = "nvidia-h100-80gb-hbm3",
				  .uuid = "GPU-0", .sm_count = 132, .cc_major = 9 };
	struct kpt_process p = { .run = 0, .pid = 100, .ppid = 1, .rank = KPT_NONE, .start_ns = T0, .end_ns = T0 + 9000 };
	struct kpt_kernel k = { .start_ns = T0 + 1000, .end_ns = T0 + 2000, .grid = { 1, 1, 1 }, .block = { 32, 1, 1 },
				.range = KPT_NONE, .graph = KPT_NONE };
	int rc = kpt_writer_create(path, NULL, &w, d);

	if (rc >= 0)
		rc = kpt_writer_meta(w, "side", side, d);
	if (rc >= 0)
		rc = kpt_writer_device(w, &dev, d);
	if (rc >= 0)
		rc = kpt_writer_process(w, &p, d);
	if (rc >= 0)
		rc = kpt_writer_intern_cstr(w, "k", &k.name, d);
	if (rc >= 0)
		rc = kpt_writer_kernels(w, &k, 1, d);
	if (rc >= 0)
		rc = kpt_writer_commit(w, d);
	kpt_writer_destroy(w);
	return rc;
}

static int fake_record(const struct kpt_project *p, const char *const *names, size_t n,
		       const struct kpt_record_opts *o, struct kpt_record_result *r, struct kpt_diag *d)
{
	size_t k = strlen(order);

	memset(r, 0, sizeof *r);
	assert_int_equal(o->runs, 1);
	assert_non_null(o->child_log);
	order[k] = p->name[0];
	order[k + 1] = '\0';
	last_n = n;
	(void)names;
	snprintf(r->slug, sizeof r->slug, "slug-%s", p->name);
	snprintf(r->note[0].text, sizeof r->note[0].text, "a note every run");
	r->nnotes = 1;
	if ((int)k == fail_call)
		r->status = 3;
	return write_one(o->out, p->name, d);
}

/* A project named name ("A" or "B") with the workloads of the
 * space-separated list. */
struct proj {
	struct kpt_project p;
	struct kpt_project_workload wl[8];
	char names[8][16];
};

static void proj_init(struct proj *q, const char *name, const char *list)
{
	char copy[128], *save = NULL;

	memset(q, 0, sizeof *q);
	q->p.name = name;
	q->p.wl = q->wl;
	snprintf(copy, sizeof copy, "%s", list);
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		snprintf(q->names[q->p.nwl], sizeof q->names[0], "%s", t);
		q->wl[q->p.nwl].name = q->names[q->p.nwl];
		q->p.nwl++;
	}
}

static void test_common_names_are_in_b_order_and_one_sided_ones_noted(void **state)
{
	struct proj a, b;
	struct kpt_ab_notes notes = { 0 };
	const char *names[8];

	(void)state;
	proj_init(&a, "A", "x old y");
	proj_init(&b, "B", "y new x");
	assert_int_equal(kpt_ab_common(&a.p, &b.p, names, 8, &notes), 2);
	assert_string_equal(names[0], "y");
	assert_string_equal(names[1], "x");
	assert_int_equal(notes.n, 2);
	assert_non_null(strstr(notes.note[0].text, "'new' is only in B"));
	assert_non_null(strstr(notes.note[1].text, "'old' is only in A"));
}

/* A fresh folder for one run; removed by rm_dir. */
static void make_dir(char *dir, size_t cap)
{
	snprintf(dir, cap, "%s/kpt-test-ab.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	assert_non_null(mkdtemp(dir));
}

static void rm_dir(const char *dir)
{
	static const char *const names[] = { "a.kpt", "b.kpt", "ab.log", "a-0.kpt", "b-0.kpt", "a-1.kpt", "b-1.kpt" };
	char p[PATH_MAX + 16];

	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	assert_int_equal(rmdir(dir), 0);
}

static void run_opts(struct kpt_ab_opts *o, struct proj *a, struct proj *b, const char *dir,
		     const struct kpt_record_opts *base, long pairs)
{
	memset(o, 0, sizeof *o);
	o->a = &a->p;
	o->b = &b->p;
	o->pairs = pairs;
	o->settle_us = -1;
	o->dir = dir;
	o->base = base;
	o->record = fake_record;
	order[0] = '\0';
	fail_call = -1;
}

static void test_pairs_run_abba_and_each_side_is_merged(void **state)
{
	struct proj a, b;
	struct kpt_record_opts base = { 0 };
	struct kpt_ab_opts o;
	struct kpt_ab_result r;
	struct kpt_diag d = { 0 };
	struct kpt_file *f = NULL;
	char dir[PATH_MAX], path[PATH_MAX + 16];

	(void)state;
	proj_init(&a, "A", "w v");
	proj_init(&b, "B", "v w");
	make_dir(dir, sizeof dir);
	run_opts(&o, &a, &b, dir, &base, 4);
	assert_int_equal(kpt_ab_run(&o, &r, &d), 0);
	assert_string_equal(order, "ABBAABBA");
	assert_int_equal(last_n, 2);
	assert_int_equal(r.nnames, 2);
	assert_string_equal(r.slug, "slug-B");
	assert_int_equal(r.notes.n, 1); /* the recorder's note, once */
	snprintf(path, sizeof path, "%s/a.kpt", dir);
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_string_equal(kpt_file_meta_get(f, "ab_side"), "A");
	assert_string_equal(kpt_file_meta_get(f, "runs"), "4");
	kpt_file_close(f);
	snprintf(path, sizeof path, "%s/b.kpt", dir);
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_string_equal(kpt_file_meta_get(f, "ab_side"), "B");
	kpt_file_close(f);
	snprintf(path, sizeof path, "%s/a-0.kpt", dir);
	assert_int_not_equal(access(path, F_OK), 0); /* parts removed */
	rm_dir(dir);
}

static void test_failed_run_names_pair_side_and_log(void **state)
{
	struct proj a, b;
	struct kpt_record_opts base = { 0 };
	struct kpt_ab_opts o;
	struct kpt_ab_result r;
	struct kpt_diag d = { 0 };
	char dir[PATH_MAX];

	(void)state;
	proj_init(&a, "A", "w");
	proj_init(&b, "B", "w");
	make_dir(dir, sizeof dir);
	run_opts(&o, &a, &b, dir, &base, 2);
	fail_call = 2; /* pair 1, B first */
	assert_int_equal(kpt_ab_run(&o, &r, &d), KPT_E_UNSUPPORTED);
	assert_string_equal(order, "ABB");
	assert_non_null(strstr(d.msg, "run 1 of B failed (exit status 3)"));
	assert_non_null(strstr(d.msg, r.log));
	rm_dir(dir);
}

static void test_named_workload_missing_on_a_side_is_notfound(void **state)
{
	struct proj a, b;
	struct kpt_record_opts base = { 0 };
	struct kpt_ab_opts o;
	struct kpt_ab_result r;
	struct kpt_diag d = { 0 };
	const char *names[] = { "w", "v" };
	char dir[PATH_MAX];

	(void)state;
	proj_init(&a, "A", "w");
	proj_init(&b, "B", "w v");
	make_dir(dir, sizeof dir);
	run_opts(&o, &a, &b, dir, &base, 2);
	o.names = names;
	o.nnames = 2;
	assert_int_equal(kpt_ab_run(&o, &r, &d), KPT_E_NOTFOUND);
	assert_non_null(strstr(d.msg, "no workload 'v' in A"));
	assert_string_equal(order, "");
	/* nothing in common: refused before any run */
	proj_init(&a, "A", "u");
	o.names = NULL;
	o.nnames = 0;
	assert_int_equal(kpt_ab_run(&o, &r, &d), KPT_E_NOTFOUND);
	assert_non_null(strstr(d.msg, "no workload in common"));
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_common_names_are_in_b_order_and_one_sided_ones_noted),
		cmocka_unit_test(test_pairs_run_abba_and_each_side_is_merged),
		cmocka_unit_test(test_failed_run_names_pair_side_and_log),
		cmocka_unit_test(test_named_workload_missing_on_a_side_is_notfound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
