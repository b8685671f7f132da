/* test_format.c - the .kpt writer and reader: round trip of every field,
 * forward compatibility, bad input, merging, atomic commit. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "kpt_format.h"
#include "kpt_format_int.h"

/* ---- helpers ---------------------------------------------------------- */

struct tmp {
	char dir[64];
	char path[128];
};

static void tmp_make(struct tmp *t)
{
	strcpy(t->dir, "/tmp/kpt_test_format_XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	snprintf(t->path, sizeof t->path, "%s/run.kpt", t->dir);
}

static int dir_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void tmp_clean(struct tmp *t)
{
	DIR *d = opendir(t->dir);
	struct dirent *e;
	char p[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof p, "%s/%s", t->dir, e->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(t->dir);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void spit(const char *path, const void *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	if (len)
		assert_int_equal(fwrite(buf, 1, len, f), len);
	fclose(f);
}

/* Everything a recording can hold, with distinct values per field. */
#define NKERN (2 * KPT_CHUNK_ROWS + 77)
#define LONG_NAME_LEN 5000

struct fixture {
	char *long_name;
	uint32_t s_long, s_short, s_cmd, s_range, s_domain, s_metric, s_api;
};

static struct kpt_kernel kernel_row(const struct fixture *fx, size_t i)
{
	struct kpt_kernel k = {
		.start_ns = 1000000000ull + i * 5000 + (i % 7) * 13,
		.name = i % 3 ? fx->s_short : fx->s_long,
		.device = (uint32_t)(i % 2), .stream = i % 5 == 0 ? KPT_NONE : (uint32_t)(7 + i % 3),
		.process = (uint32_t)(i % 2),
		.grid = { (uint32_t)(1 + i % 4), 2, 3 }, .block = { 128, (uint32_t)(1 + i % 2), 1 },
		.registers = 64, .shared_static = (uint32_t)(i % 2 ? 0 : 4096),
		.shared_dynamic = 98304, .correlation = (uint32_t)(10 + 2 * i),
		.range = i % 4 ? (uint32_t)(i / 4) : KPT_NONE,
		.graph = i % 10 ? KPT_NONE : 3, .graph_node = i % 10 ? 0 : 0x7000000000ull + i,
	};

	k.end_ns = k.start_ns + 1000 + (i * 37) % 9000;
	return k;
}

static void assert_kernel_equal(const struct kpt_kernel *a, const struct kpt_kernel *b)
{
	assert_int_equal(a->start_ns, b->start_ns);
	assert_int_equal(a->end_ns, b->end_ns);
	assert_int_equal(a->name, b->name);
	assert_int_equal(a->device, b->device);
	assert_int_equal(a->stream, b->stream);
	assert_int_equal(a->process, b->process);
	assert_memory_equal(a->grid, b->grid, sizeof a->grid);
	assert_memory_equal(a->block, b->block, sizeof a->block);
	assert_int_equal(a->registers, b->registers);
	assert_int_equal(a->shared_static, b->shared_static);
	assert_int_equal(a->shared_dynamic, b->shared_dynamic);
	assert_int_equal(a->correlation, b->correlation);
	assert_int_equal(a->range, b->range);
	assert_int_equal(a->graph, b->graph);
	assert_int_equal(a->graph_node, b->graph_node);
}

static const struct kpt_device dev0 = {
	.index = 0, .name = "NVIDIA H100 80GB HBM3", .slug = "nvidia-h100-80gb-hbm3",
	.uuid = "GPU-11111111-2222-3333-4444-555555555555", .cuda_ordinal = 0, .sm_count = 132,
	.cc_major = 9, .cc_minor = 0, .mem_bytes = 85520809984ull, .l2_bytes = 52428800,
	.sm_clock_max_mhz = 1980, .mem_clock_max_mhz = 2619, .mem_bus_width_bits = 5120,
	.driver_version = 13000, .runtime_version = 12080, .driver_string = "580.95.05",
	.copy_gbps = 3012.5, .bf16_tflops = 798.25,
};

static const struct kpt_device dev1 = {
	.index = 1, .name = "NVIDIA H200", .slug = "nvidia-h200", .uuid = "",
	.cuda_ordinal = 1, .sm_count = 132, .cc_major = 9, .cc_minor = 0,
	.driver_string = "", .copy_gbps = 0, .bf16_tflops = 0,
};

static void fixture_write(const char *path, struct fixture *fx)
{
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	struct kpt_kernel *ks = malloc(NKERN * sizeof *ks);
	struct kpt_process p0 = { .index = 0, .run = 0, .pid = 1234, .ppid = 1, .rank = KPT_NONE,
				  .start_ns = 900000000000ull };
	struct kpt_process p1 = { .index = 1, .run = 3, .pid = 1240, .ppid = 1234, .rank = 7,
				  .start_ns = 5, .dropped = 42 };

	assert_non_null(ks);
	fx->long_name = malloc(LONG_NAME_LEN + 1);
	for (int i = 0; i < LONG_NAME_LEN; i++)
		fx->long_name[i] = "_Z3abcIiE<>&x"[i % 13];
	fx->long_name[LONG_NAME_LEN] = '\0';
	assert_int_equal(kpt_writer_create(path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, fx->long_name, &fx->s_long, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "_Z6kernelPf", &fx->s_short, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "python train.py --x 'a b'", &fx->s_cmd, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "kpt:iter", &fx->s_range, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "kpt", &fx->s_domain, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "dram__bytes_read.sum", &fx->s_metric, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "cudaLaunchKernel", &fx->s_api, &d), 0);
	p0.command = fx->s_cmd;
	p0.end_ns = p0.start_ns + 123456789;
	p1.command = KPT_NONE;
	p1.exit_status = INT32_MIN;
	assert_int_equal(kpt_writer_meta(w, "tool_version", "0.1.0", &d), 0);
	assert_int_equal(kpt_writer_meta(w, "suite", "old", &d), 0);
	assert_int_equal(kpt_writer_meta(w, "suite", "default", &d), 0);
	assert_int_equal(kpt_writer_meta(w, "label.empty", "", &d), 0);
	assert_int_equal(kpt_writer_device(w, &dev0, &d), 0);
	assert_int_equal(kpt_writer_device(w, &dev1, &d), 0);
	assert_int_equal(kpt_writer_process(w, &p0, &d), 0);
	assert_int_equal(kpt_writer_process(w, &p1, &d), 0);
	assert_int_equal(kpt_writer_drop(w, &(struct kpt_drop){ 1, KPT_NONE, 7, 99 }, &d), 0);
	assert_int_equal(kpt_writer_drop(w, &(struct kpt_drop){ 0, 1, KPT_NONE, 1 }, &d), 0);
	for (size_t i = 0; i < NKERN; i++)
		ks[i] = kernel_row(fx, i);
	/* In uneven pieces, across chunk boundaries. */
	assert_int_equal(kpt_writer_kernels(w, ks, 1000, &d), 0);
	assert_int_equal(kpt_writer_kernels(w, ks + 1000, NKERN - 1000, &d), 0);
	assert_int_equal(kpt_writer_memops(w, (struct kpt_memop[]){
		{ 5, 900, 1 << 20, KPT_MEMCPY_HTOD, KPT_MEM_PINNED, KPT_MEM_DEVICE, 0, 0, 7, 0, 3, 4, KPT_NONE, 0 },
		{ 1000, 1100, 4096, KPT_MEMSET, KPT_MEM_UNKNOWN, KPT_MEM_DEVICE, 0xab, 1, KPT_NONE, 1, 9, KPT_NONE, 5, 77 },
	}, 2, &d), 0);
	assert_int_equal(kpt_writer_ranges(w, (struct kpt_range[]){
		{ 4, KPT_NONE, fx->s_range, fx->s_domain, KPT_RANGE_PUSHPOP, 0, 140000000001ull, 0, 500 },
		{ 9, 4, fx->s_range, KPT_NONE, KPT_RANGE_STARTEND, 1, 2, 100, 0 },
		{ 10, 4, fx->s_range, KPT_NONE, KPT_RANGE_MARK, 1, 2, 300, 300 },
	}, 3, &d), 0);
	assert_int_equal(kpt_writer_events(w, (struct kpt_event[]){
		{ 10, 20, KPT_EVENT_SYNC, 3, KPT_NONE, 0, 0, 7, 11, 99 },
		{ 30, 25, KPT_EVENT_RUNTIME, 211, fx->s_api, 1, KPT_NONE, KPT_NONE, 12, 98 },
	}, 2, &d), 0);
	assert_int_equal(kpt_writer_env(w, (struct kpt_env_sample[]){
		{ 100, 0, 0, 1980, 2619, 45, 650000, 0 },
		{ 10000100, 1, 1, 1755, 2619, 81, 699000, 0x40ull | (1ull << 40) },
	}, 2, &d), 0);
	assert_int_equal(kpt_writer_counters(w, (struct kpt_counter[]){
		{ 0, 0, fx->s_short, 0, fx->s_metric, 1.5e9 },
		{ 1, 1, fx->s_long, 7, fx->s_metric, -0.25 },
	}, 2, &d), 0);
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	kpt_writer_destroy(w);
	free(ks);
}

static void open_ok(const char *path, struct kpt_file **f)
{
	struct kpt_diag d = { 0 };
	int rc = kpt_file_open(path, f, &d);

	if (rc)
		print_error("open: %s\n", d.msg);
	assert_int_equal(rc, 0);
}

/* ---- round trip ------------------------------------------------------- */

static void test_round_trip_keeps_every_field(void **state)
{
	struct tmp t;
	struct fixture fx;
	struct kpt_file *f;
	struct kpt_diag d = { 0 };
	struct kpt_counts c;
	const struct kpt_meta_kv *kv;
	const struct kpt_device *dv;
	const struct kpt_process *pr;
	const struct kpt_drop *dr;
	const struct kpt_memop *mo;
	const struct kpt_range *rg;
	const struct kpt_event *ev;
	const struct kpt_env_sample *en;
	const struct kpt_counter *ct;
	size_t n;
	uint32_t major, minor;

	tmp_make(&t);
	fixture_write(t.path, &fx);
	open_ok(t.path, &f);
	kpt_file_version(f, &major, &minor);
	assert_int_equal(major, KPT_FORMAT_MAJOR);
	assert_int_equal(minor, KPT_FORMAT_MINOR);
	assert_string_equal(kpt_file_path(f), t.path);
	assert_int_equal(kpt_file_counts(f, &c, &d), 0);
	assert_int_equal(c.kernels, NKERN);
	assert_int_equal(c.memops, 2);
	assert_int_equal(c.ranges, 3);
	assert_int_equal(c.events, 2);
	assert_int_equal(c.env_samples, 2);
	assert_int_equal(c.counters, 2);
	assert_int_equal(c.devices, 2);
	assert_int_equal(c.processes, 2);
	assert_int_equal(c.runs, 2);
	assert_int_equal(c.dropped_records, 100);

	assert_int_equal(kpt_file_load_strings(f, &d), 0);
	assert_int_equal(kpt_file_string_count(f), 7);
	assert_string_equal(kpt_file_string(f, fx.s_long), fx.long_name);
	assert_string_equal(kpt_file_string(f, fx.s_cmd), "python train.py --x 'a b'");
	assert_string_equal(kpt_file_string(f, KPT_NONE), "");
	assert_null(kpt_file_string(f, 7));

	assert_int_equal(kpt_file_meta(f, &kv, &n, &d), 0);
	assert_int_equal(n, 3);
	assert_string_equal(kv[0].key, "tool_version");
	assert_string_equal(kv[0].value, "0.1.0");
	assert_string_equal(kpt_file_meta_get(f, "suite"), "default");
	assert_string_equal(kpt_file_meta_get(f, "label.empty"), "");
	assert_null(kpt_file_meta_get(f, "commit"));

	assert_int_equal(kpt_file_devices(f, &dv, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(dv[0].index, 0);
	assert_string_equal(dv[0].name, dev0.name);
	assert_string_equal(dv[0].slug, dev0.slug);
	assert_string_equal(dv[0].uuid, dev0.uuid);
	assert_int_equal(dv[0].sm_count, 132);
	assert_int_equal(dv[0].cc_major, 9);
	assert_int_equal(dv[0].cc_minor, 0);
	assert_int_equal(dv[0].mem_bytes, dev0.mem_bytes);
	assert_int_equal(dv[0].l2_bytes, dev0.l2_bytes);
	assert_int_equal(dv[0].sm_clock_max_mhz, 1980);
	assert_int_equal(dv[0].mem_clock_max_mhz, 2619);
	assert_int_equal(dv[0].mem_bus_width_bits, 5120);
	assert_int_equal(dv[0].driver_version, 13000);
	assert_int_equal(dv[0].runtime_version, 12080);
	assert_string_equal(dv[0].driver_string, "580.95.05");
	assert_true(dv[0].copy_gbps == 3012.5);
	assert_true(dv[0].bf16_tflops == 798.25);
	assert_int_equal(dv[1].index, 1);
	assert_int_equal(dv[1].cuda_ordinal, 1);
	assert_string_equal(dv[1].uuid, "");

	assert_int_equal(kpt_file_processes(f, &pr, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(pr[0].index, 0);
	assert_int_equal(pr[0].pid, 1234);
	assert_int_equal(pr[0].ppid, 1);
	assert_int_equal(pr[0].rank, KPT_NONE);
	assert_int_equal(pr[0].start_ns, 900000000000ull);
	assert_int_equal(pr[0].end_ns, 900000000000ull + 123456789);
	assert_int_equal(pr[0].command, fx.s_cmd);
	assert_int_equal(pr[1].run, 3);
	assert_int_equal(pr[1].rank, 7);
	assert_int_equal(pr[1].exit_status, INT32_MIN);
	assert_int_equal(pr[1].command, KPT_NONE);
	assert_int_equal(pr[1].dropped, 42);

	assert_int_equal(kpt_file_drops(f, &dr, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(dr[0].process, 1);
	assert_int_equal(dr[0].device, KPT_NONE);
	assert_int_equal(dr[0].stream, 7);
	assert_int_equal(dr[0].count, 99);
	assert_int_equal(dr[1].stream, KPT_NONE);

	assert_int_equal(kpt_file_memops(f, &mo, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(mo[0].start_ns, 5);
	assert_int_equal(mo[0].end_ns, 900);
	assert_int_equal(mo[0].bytes, 1 << 20);
	assert_int_equal(mo[0].kind, KPT_MEMCPY_HTOD);
	assert_int_equal(mo[0].src_mem, KPT_MEM_PINNED);
	assert_int_equal(mo[0].dst_mem, KPT_MEM_DEVICE);
	assert_int_equal(mo[0].stream, 7);
	assert_int_equal(mo[0].correlation, 3);
	assert_int_equal(mo[0].range, 4);
	assert_int_equal(mo[0].graph, KPT_NONE);
	assert_int_equal(mo[1].value, 0xab);
	assert_int_equal(mo[1].device, 1);
	assert_int_equal(mo[1].stream, KPT_NONE);
	assert_int_equal(mo[1].process, 1);
	assert_int_equal(mo[1].range, KPT_NONE);
	assert_int_equal(mo[1].graph, 5);
	assert_int_equal(mo[1].graph_node, 77);

	assert_int_equal(kpt_file_ranges(f, &rg, &n, &d), 0);
	assert_int_equal(n, 3);
	assert_int_equal(rg[0].id, 4);
	assert_int_equal(rg[0].parent, KPT_NONE);
	assert_int_equal(rg[0].domain, fx.s_domain);
	assert_int_equal(rg[0].thread, 140000000001ull);
	assert_int_equal(rg[0].end_ns, 500);
	assert_int_equal(rg[1].kind, KPT_RANGE_STARTEND);
	assert_int_equal(rg[1].end_ns, 0);  /* never closed */
	assert_int_equal(rg[1].domain, KPT_NONE);
	assert_int_equal(rg[2].start_ns, rg[2].end_ns);

	assert_int_equal(kpt_file_events(f, &ev, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ev[0].sub, 3);
	assert_int_equal(ev[0].name, KPT_NONE);
	assert_int_equal(ev[0].thread, 99);
	assert_int_equal(ev[1].end_ns, 25);  /* end before start survives */
	assert_int_equal(ev[1].name, fx.s_api);
	assert_int_equal(ev[1].device, KPT_NONE);

	assert_int_equal(kpt_file_env(f, &en, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(en[1].t_ns, 10000100);
	assert_int_equal(en[1].sm_mhz, 1755);
	assert_int_equal(en[1].temp_c, 81);
	assert_int_equal(en[1].power_mw, 699000);
	assert_int_equal(en[1].throttle, 0x40ull | (1ull << 40));

	assert_int_equal(kpt_file_counters(f, &ct, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_int_equal(ct[1].kernel_name, fx.s_long);
	assert_int_equal(ct[1].ordinal, 7);
	assert_true(ct[0].value == 1.5e9);
	assert_true(ct[1].value == -0.25);

	kpt_file_close(f);
	free(fx.long_name);
	tmp_clean(&t);
}

static void test_kernels_stream_across_chunks(void **state)
{
	struct tmp t;
	struct fixture fx;
	struct kpt_file *f;
	struct kpt_kernel_cursor *c, *c2;
	const struct kpt_kernel *rows;
	struct kpt_diag d = { 0 };
	size_t n, seen = 0;
	int chunks = 0, rc;

	tmp_make(&t);
	fixture_write(t.path, &fx);
	open_ok(t.path, &f);
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	assert_int_equal(kpt_kernel_cursor_create(f, &c2, &d), 0);
	while ((rc = kpt_kernel_cursor_next(c, &rows, &n, &d)) == 1) {
		assert_true(n <= KPT_CHUNK_ROWS);
		for (size_t i = 0; i < n; i++) {
			struct kpt_kernel want = kernel_row(&fx, seen + i);

			assert_kernel_equal(&rows[i], &want);
		}
		seen += n;
		chunks++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(seen, NKERN);
	assert_int_equal(chunks, 3);
	/* A second cursor is independent of the first. */
	assert_int_equal(kpt_kernel_cursor_next(c2, &rows, &n, &d), 1);
	assert_int_equal(n, KPT_CHUNK_ROWS);
	assert_int_equal(rows[5].correlation, 20);
	kpt_kernel_cursor_destroy(c);
	kpt_kernel_cursor_destroy(c2);
	kpt_file_close(f);
	free(fx.long_name);
	tmp_clean(&t);
}

static void test_empty_recording_round_trips(void **state)
{
	struct tmp t;
	struct kpt_writer *w;
	struct kpt_file *f;
	struct kpt_kernel_cursor *c;
	const struct kpt_kernel *rows;
	const struct kpt_memop *mo;
	struct kpt_counts cn;
	struct kpt_diag d = { 0 };
	size_t n;

	tmp_make(&t);
	assert_int_equal(kpt_writer_create(t.path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	kpt_writer_destroy(w);
	open_ok(t.path, &f);
	assert_int_equal(kpt_file_counts(f, &cn, &d), 0);
	assert_int_equal(cn.kernels, 0);
	assert_int_equal(cn.runs, 0);
	assert_int_equal(kpt_file_memops(f, &mo, &n, &d), 0);
	assert_int_equal(n, 0);
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	assert_int_equal(kpt_kernel_cursor_next(c, &rows, &n, &d), 0);
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
	tmp_clean(&t);
}

/* ---- writer contract -------------------------------------------------- */

static void test_writer_leaves_no_file_without_commit(void **state)
{
	struct tmp t;
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	uint32_t id;

	tmp_make(&t);
	assert_int_equal(kpt_writer_create(t.path, NULL, &w, &d), 0);
	assert_int_equal(dir_entries(t.dir), 1);  /* the temporary file */
	assert_int_equal(kpt_writer_intern_cstr(w, "x", &id, &d), 0);
	kpt_writer_destroy(w);
	assert_int_equal(access(t.path, F_OK), -1);
	assert_int_equal(dir_entries(t.dir), 0);
	kpt_writer_destroy(NULL);
	tmp_clean(&t);
}

static void test_writer_commit_replaces_atomically(void **state)
{
	struct tmp t;
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	struct kpt_file *f;
	struct stat st;

	tmp_make(&t);
	spit(t.path, "old", 3);
	assert_int_equal(kpt_writer_create(t.path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_meta(w, "k", "v", &d), 0);
	/* Until commit, the old file is untouched. */
	assert_int_equal(stat(t.path, &st), 0);
	assert_int_equal(st.st_size, 3);
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	assert_int_equal(kpt_writer_meta(w, "k", "v", &d), KPT_E_INVAL);
	kpt_writer_destroy(w);
	assert_int_equal(dir_entries(t.dir), 1);
	open_ok(t.path, &f);
	assert_string_equal(kpt_file_meta_get(f, "k"), "v");
	kpt_file_close(f);
	tmp_clean(&t);
}

static void test_writer_rejects_unknown_string_id(void **state)
{
	struct tmp t;
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	struct kpt_device dv = dev0;
	struct kpt_process p = { .index = 0, .command = KPT_NONE };
	struct kpt_kernel k = { .name = 5, .range = KPT_NONE, .graph = KPT_NONE };

	tmp_make(&t);
	assert_int_equal(kpt_writer_create(t.path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_device(w, &dv, &d), 0);
	assert_int_equal(kpt_writer_process(w, &p, &d), 0);
	assert_int_equal(kpt_writer_kernels(w, &k, 1, &d), 0);
	assert_int_equal(kpt_writer_commit(w, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, "string 5"));
	kpt_writer_destroy(w);
	assert_int_equal(dir_entries(t.dir), 0);
	tmp_clean(&t);
}

static void test_writer_rejects_undeclared_process(void **state)
{
	struct tmp t;
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	struct kpt_device dv = dev0;
	struct kpt_env_sample e = { .device = 0, .process = 2 };

	tmp_make(&t);
	assert_int_equal(kpt_writer_create(t.path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_device(w, &dv, &d), 0);
	assert_int_equal(kpt_writer_env(w, &e, 1, &d), 0);
	assert_int_equal(kpt_writer_commit(w, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, "process 2"));
	kpt_writer_destroy(w);
	tmp_clean(&t);
}

static void test_writer_checks_table_indices(void **state)
{
	struct tmp t;
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	struct kpt_device dv = dev1;  /* index 1 first */
	struct kpt_process p = { .index = 3 };
	uint32_t id;

	tmp_make(&t);
	assert_int_equal(kpt_writer_create(t.path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_device(w, &dv, &d), KPT_E_INVAL);
	assert_int_equal(kpt_writer_process(w, &p, &d), KPT_E_INVAL);
	assert_int_equal(kpt_writer_intern(w, "a\0b", 3, &id, &d), KPT_E_INVAL);
	kpt_writer_destroy(w);
	tmp_clean(&t);
}

static void test_writer_create_fails_in_missing_dir(void **state)
{
	struct kpt_writer *w = (void *)1;
	struct kpt_diag d = { 0 };

	assert_int_equal(kpt_writer_create("/nonexistent-dir/x/run.kpt", NULL, &w, &d), KPT_E_IO);
	assert_null(w);
	assert_non_null(strstr(d.msg, "/nonexistent-dir/x/run.kpt"));
}

/* ---- file surgery for compatibility and bad-input tests --------------- */

struct image {
	uint8_t *buf;
	size_t len;
	struct kpt_disk_header *h;
};

static void image_load(struct image *im, const char *path)
{
	im->buf = slurp(path, &im->len);
	im->h = (struct kpt_disk_header *)im->buf;
}

static struct kpt_disk_toc *image_toc(struct image *im, uint32_t i)
{
	return (struct kpt_disk_toc *)(im->buf + im->h->toc_offset + (size_t)i * sizeof(struct kpt_disk_toc));
}

static int image_find(struct image *im, uint32_t id)
{
	for (uint32_t i = 0; i < im->h->toc_count; i++)
		if (image_toc(im, i)->id == id)
			return (int)i;
	return -1;
}

/* Adds a section (raw bytes, zstd-compressed here) before the TOC. */
static void image_add_section(struct image *im, uint32_t id, const void *raw, size_t raw_len,
			      uint64_t rows)
{
	size_t bound = ZSTD_compressBound(raw_len), csize, pad;
	uint8_t *comp = malloc(bound);
	size_t toc_off = im->h->toc_offset, toc_len = im->len - toc_off;
	uint8_t *nb;
	struct kpt_disk_toc e = { 0 };

	csize = ZSTD_compress(comp, bound, raw, raw_len, 3);
	assert_false(ZSTD_isError(csize));
	/* Padding after the frame keeps the TOC 8-aligned for image_toc(). */
	pad = (8 - csize % 8) % 8;
	nb = calloc(1, im->len + csize + pad + sizeof e);
	memcpy(nb, im->buf, toc_off);
	memcpy(nb + toc_off, comp, csize);
	csize += pad;
	memcpy(nb + toc_off + csize, im->buf + toc_off, toc_len);
	e.id = id;
	e.codec = KPT_CODEC_ZSTD;
	e.offset = toc_off;
	e.size = csize - pad;
	e.raw_size = raw_len;
	e.rows = rows;
	memcpy(nb + toc_off + csize + toc_len, &e, sizeof e);
	free(im->buf);
	free(comp);
	im->buf = nb;
	im->len += csize + sizeof e;
	im->h = (struct kpt_disk_header *)nb;
	im->h->toc_offset = toc_off + csize;
	im->h->toc_count++;
	im->h->file_size = im->len;
}

static void small_file(const char *path)
{
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	struct kpt_device dv = dev0;
	struct kpt_process p = { .index = 0, .command = KPT_NONE, .rank = KPT_NONE };
	struct kpt_kernel k[3];
	uint32_t name;

	assert_int_equal(kpt_writer_create(path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "_Z6kernelPf", &name, &d), 0);
	assert_int_equal(kpt_writer_meta(w, "suite", "quick", &d), 0);
	assert_int_equal(kpt_writer_device(w, &dv, &d), 0);
	assert_int_equal(kpt_writer_process(w, &p, &d), 0);
	for (int i = 0; i < 3; i++)
		k[i] = (struct kpt_kernel){ .start_ns = 100u * i, .end_ns = 100u * i + 50, .name = name,
					    .grid = { 1, 1, 1 }, .block = { 32, 1, 1 },
					    .range = KPT_NONE, .graph = KPT_NONE };
	assert_int_equal(kpt_writer_kernels(w, k, 3, &d), 0);
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	kpt_writer_destroy(w);
}

/* Opens im (written to path) and expects code with a message naming path
 * and containing want. Returns nothing; asserts. */
static void expect_open_fails(struct tmp *t, struct image *im, int code, const char *want)
{
	struct kpt_file *f = (void *)1;
	struct kpt_diag d = { 0 };

	spit(t->path, im->buf, im->len);
	assert_int_equal(kpt_file_open(t->path, &f, &d), code);
	assert_null(f);
	if (!strstr(d.msg, want) || !strstr(d.msg, t->path))
		fail_msg("message '%s' lacks '%s' or the path", d.msg, want);
	assert_null(strchr(d.msg, '\n'));
}

static void test_unknown_section_is_skipped(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_file *f;
	struct kpt_kernel_cursor *c;
	const struct kpt_kernel *rows;
	struct kpt_counts cn;
	struct kpt_diag d = { 0 };
	size_t n;
	static const char junk[] = "a section from the future";

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	image_add_section(&im, 200, junk, sizeof junk, 1);
	spit(t.path, im.buf, im.len);
	open_ok(t.path, &f);
	assert_int_equal(kpt_file_counts(f, &cn, &d), 0);
	assert_int_equal(cn.kernels, 3);
	assert_string_equal(kpt_file_meta_get(f, "suite"), "quick");
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	assert_int_equal(kpt_kernel_cursor_next(c, &rows, &n, &d), 1);
	assert_int_equal(n, 3);
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
	free(im.buf);
	tmp_clean(&t);
}

static void test_higher_minor_version_reads(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_file *f;
	uint32_t major, minor;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	im.h->minor = KPT_FORMAT_MINOR + 3;
	spit(t.path, im.buf, im.len);
	open_ok(t.path, &f);
	kpt_file_version(f, &major, &minor);
	assert_int_equal(minor, KPT_FORMAT_MINOR + 3);
	assert_string_equal(kpt_file_meta_get(f, "suite"), "quick");
	kpt_file_close(f);
	free(im.buf);
	tmp_clean(&t);
}

/* A later minor may lengthen the header and TOC entries: readers skip the
 * bytes they do not know. */
static void test_longer_header_and_toc_entries_read(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_file *f;
	struct kpt_diag d = { 0 };
	struct kpt_counts cn;
	struct kpt_kernel_cursor *c;
	const struct kpt_kernel *rows;
	const size_t extra_h = 16, extra_e = 8;
	uint8_t *nb;
	size_t ntoc, data_len, len, n;
	struct kpt_disk_header h;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	h = *im.h;
	ntoc = h.toc_count;
	data_len = h.toc_offset - sizeof h;
	len = sizeof h + extra_h + data_len + ntoc * (sizeof(struct kpt_disk_toc) + extra_e);
	nb = calloc(1, len);
	memcpy(nb + sizeof h + extra_h, im.buf + sizeof h, data_len);
	for (size_t i = 0; i < ntoc; i++) {
		struct kpt_disk_toc e = *image_toc(&im, (uint32_t)i);

		e.offset += extra_h;
		memcpy(nb + sizeof h + extra_h + data_len + i * (sizeof e + extra_e), &e, sizeof e);
		memset(nb + sizeof h + extra_h + data_len + i * (sizeof e + extra_e) + sizeof e, 0xee, extra_e);
	}
	memset(nb + sizeof h, 0xdd, extra_h);  /* future header fields */
	h.header_size = (uint32_t)(sizeof h + extra_h);
	h.toc_offset = sizeof h + extra_h + data_len;
	h.toc_entry_size = (uint32_t)(sizeof(struct kpt_disk_toc) + extra_e);
	h.file_size = len;
	h.minor = KPT_FORMAT_MINOR + 1;
	memcpy(nb, &h, sizeof h);
	spit(t.path, nb, len);
	open_ok(t.path, &f);
	assert_int_equal(kpt_file_counts(f, &cn, &d), 0);
	assert_int_equal(cn.kernels, 3);
	assert_string_equal(kpt_file_meta_get(f, "suite"), "quick");
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	assert_int_equal(kpt_kernel_cursor_next(c, &rows, &n, &d), 1);
	assert_int_equal(rows[2].end_ns, 250);
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
	free(nb);
	free(im.buf);
	tmp_clean(&t);
}

/* A later minor may append columns to a section: readers ignore them. */
static void test_appended_columns_are_ignored(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_file *f;
	struct kpt_buf raw = { 0 };
	struct kpt_meta_kv kv = { "label.x", "y" };
	static const uint8_t future[] = { 3, 'a', 'b', 'c' };

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	assert_int_equal(kpt_cols_encode(kpt_sections[KPT_SEC_META].tab, &kv, 1, &raw), 0);
	assert_int_equal(kpt_buf_reserve(&raw, sizeof future), 0);
	memcpy(raw.p + raw.len, future, sizeof future);
	raw.len += sizeof future;
	image_add_section(&im, KPT_SEC_META, raw.p, raw.len, 1);
	spit(t.path, im.buf, im.len);
	open_ok(t.path, &f);
	assert_string_equal(kpt_file_meta_get(f, "label.x"), "y");
	assert_string_equal(kpt_file_meta_get(f, "suite"), "quick");
	kpt_file_close(f);
	kpt_buf_free(&raw);
	free(im.buf);
	tmp_clean(&t);
}

static void test_rejects_newer_major_version(void **state)
{
	struct tmp t;
	struct image im;
	char want[64];

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	im.h->major = KPT_FORMAT_MAJOR + 2;
	snprintf(want, sizeof want, "written by a newer kptprof (format %d > %d)",
		 KPT_FORMAT_MAJOR + 2, KPT_FORMAT_MAJOR);
	expect_open_fails(&t, &im, KPT_E_VERSION, want);
	free(im.buf);
	tmp_clean(&t);
}

static void test_rejects_missing_file(void **state)
{
	struct kpt_file *f;
	struct kpt_diag d = { 0 };

	assert_int_equal(kpt_file_open("/nonexistent/run.kpt", &f, &d), KPT_E_NOTFOUND);
	assert_non_null(strstr(d.msg, "cannot read '/nonexistent/run.kpt'"));
}

static void test_rejects_directory(void **state)
{
	struct kpt_file *f;
	struct kpt_diag d = { 0 };

	assert_int_equal(kpt_file_open("/tmp", &f, &d), KPT_E_IO);
	assert_non_null(strstr(d.msg, "directory"));
}

static void test_rejects_empty_file(void **state)
{
	struct tmp t;
	struct image im = { .buf = NULL, .len = 0 };

	tmp_make(&t);
	expect_open_fails(&t, &im, KPT_E_FORMAT, "empty file");
	tmp_clean(&t);
}

static void test_rejects_wrong_magic(void **state)
{
	struct tmp t;
	struct image im;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	im.buf[0] = '{';
	expect_open_fails(&t, &im, KPT_E_FORMAT, "not a .kpt file");
	free(im.buf);
	tmp_clean(&t);
}

static void test_rejects_every_truncation(void **state)
{
	struct tmp t;
	struct image im;
	size_t full;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	full = im.len;
	for (size_t len = 1; len < full; len++) {
		struct kpt_file *f = (void *)1;
		struct kpt_diag d = { 0 };

		spit(t.path, im.buf, len);
		assert_int_equal(kpt_file_open(t.path, &f, &d), KPT_E_FORMAT);
		assert_null(f);
		if (len >= sizeof(struct kpt_disk_header) && !strstr(d.msg, "truncated"))
			fail_msg("length %zu: '%s'", len, d.msg);
	}
	free(im.buf);
	tmp_clean(&t);
}

static void test_rejects_trailing_garbage(void **state)
{
	struct tmp t;
	struct image im;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	im.buf = realloc(im.buf, im.len + 5);
	memcpy(im.buf + im.len, "xxxxx", 5);
	im.len += 5;
	im.h = (struct kpt_disk_header *)im.buf;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "after the end");
	free(im.buf);
	tmp_clean(&t);
}

static void test_rejects_nonzero_reserved_fields(void **state)
{
	struct tmp t;
	struct image im;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	im.h->reserved[1] = 1;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "reserved header field");
	im.h->reserved[1] = 0;
	image_toc(&im, 0)->reserved = 9;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "reserved field of TOC entry 0");
	free(im.buf);
	tmp_clean(&t);
}

static void test_rejects_absurd_toc(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_disk_toc *e, save;
	int k;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	im.h->toc_count = 0x7fffffff;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "table of contents lies outside");
	im.h->toc_count = (uint32_t)((im.len - im.h->toc_offset) / sizeof *e);
	im.h->toc_offset = UINT64_MAX - 8;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "table of contents lies outside");
	im.h->toc_offset = im.len - im.h->toc_count * sizeof *e;

	k = image_find(&im, KPT_SEC_KERNELS);
	assert_true(k >= 0);
	e = image_toc(&im, (uint32_t)k);
	save = *e;
	e->size = UINT64_MAX - 2;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "kernels section (TOC entry");
	*e = save;
	e->offset = UINT64_MAX - 100;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "lies outside the file's data");
	*e = save;
	e->rows = 1000000000ull;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "claims 1000000000 rows");
	*e = save;
	e->raw_size = 1ull << 40;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "claims 1099511627776 bytes");
	*e = save;
	e->codec = 77;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "unknown codec 77");
	*e = save;
	im.h->header_size = 12;
	expect_open_fails(&t, &im, KPT_E_FORMAT, "header size 12");
	free(im.buf);
	tmp_clean(&t);
}

static void test_corrupt_zstd_section_fails_on_load(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_file *f;
	struct kpt_kernel_cursor *c;
	const struct kpt_kernel *rows;
	struct kpt_diag d = { 0 };
	struct kpt_disk_toc *e;
	size_t n;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	e = image_toc(&im, (uint32_t)image_find(&im, KPT_SEC_KERNELS));
	im.buf[e->offset + e->size - 6] ^= 0x5a;  /* in the data or checksum */
	spit(t.path, im.buf, im.len);
	open_ok(t.path, &f);  /* open reads no section */
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	assert_int_equal(kpt_kernel_cursor_next(c, &rows, &n, &d), KPT_E_FORMAT);
	assert_non_null(strstr(d.msg, "kernels section at offset"));
	assert_non_null(strstr(d.msg, t.path));
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
	free(im.buf);
	tmp_clean(&t);
}

static void test_rejects_string_id_out_of_range(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_file *f;
	struct kpt_diag d = { 0 };
	const struct kpt_counter *ct;
	struct kpt_counter row = { .process = 0, .device = 0, .kernel_name = 0, .metric = 500 };
	struct kpt_buf raw = { 0 };
	size_t n;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	assert_int_equal(kpt_cols_encode(kpt_sections[KPT_SEC_COUNTERS].tab, &row, 1, &raw), 0);
	image_add_section(&im, KPT_SEC_COUNTERS, raw.p, raw.len, 1);
	spit(t.path, im.buf, im.len);
	open_ok(t.path, &f);
	assert_int_equal(kpt_file_counters(f, &ct, &n, &d), KPT_E_FORMAT);
	assert_non_null(strstr(d.msg, "metric of row 0 is out of range: 500"));
	kpt_file_close(f);
	kpt_buf_free(&raw);
	free(im.buf);
	tmp_clean(&t);
}

static void test_rejects_truncated_section_payload(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_file *f;
	struct kpt_diag d = { 0 };
	const struct kpt_env_sample *en;
	/* One env row: seven one-byte varints, then a varint that never ends. */
	const uint8_t raw[] = { 1, 0, 0, 2, 2, 2, 2, 0x80 };
	size_t n;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	image_add_section(&im, KPT_SEC_ENV, raw, sizeof raw, 1);
	spit(t.path, im.buf, im.len);
	open_ok(t.path, &f);
	assert_int_equal(kpt_file_env(f, &en, &n, &d), KPT_E_FORMAT);
	assert_non_null(strstr(d.msg, "column throttle ends early at row 0"));
	kpt_file_close(f);
	free(im.buf);
	tmp_clean(&t);
}

static void test_open_mem_matches_open(void **state)
{
	struct tmp t;
	struct image im;
	struct kpt_file *f;
	struct kpt_diag d = { 0 };
	struct kpt_counts cn;

	tmp_make(&t);
	small_file(t.path);
	image_load(&im, t.path);
	assert_int_equal(kpt_file_open_mem(im.buf, im.len, "mem.kpt", &f, &d), 0);
	assert_int_equal(kpt_file_counts(f, &cn, &d), 0);
	assert_int_equal(cn.kernels, 3);
	assert_string_equal(kpt_file_path(f), "mem.kpt");
	kpt_file_close(f);
	assert_int_equal(kpt_file_open_mem(im.buf, 10, "mem.kpt", &f, &d), KPT_E_FORMAT);
	assert_non_null(strstr(d.msg, "'mem.kpt'"));
	free(im.buf);
	tmp_clean(&t);
}

/* ---- merge ------------------------------------------------------------ */

static void test_copy_into_merges_processes(void **state)
{
	struct tmp t;
	struct fixture fx;
	char merged[160];
	struct kpt_file *src, *f;
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	struct kpt_counts cn;
	const struct kpt_process *pr;
	const struct kpt_device *dv;
	const struct kpt_range *rg;
	struct kpt_kernel_cursor *c;
	const struct kpt_kernel *rows;
	size_t n, seen = 0;

	tmp_make(&t);
	fixture_write(t.path, &fx);
	snprintf(merged, sizeof merged, "%s/merged.kpt", t.dir);
	open_ok(t.path, &src);
	assert_int_equal(kpt_writer_create(merged, NULL, &w, &d), 0);
	assert_int_equal(kpt_file_copy_into(src, w, 0, 1, &d), 0);
	assert_int_equal(kpt_file_copy_into(src, w, 1, 0, &d), 0);
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	kpt_writer_destroy(w);
	kpt_file_close(src);

	open_ok(merged, &f);
	assert_int_equal(kpt_file_counts(f, &cn, &d), 0);
	assert_int_equal(cn.kernels, 2 * NKERN);
	assert_int_equal(cn.processes, 4);
	assert_int_equal(cn.runs, 2);
	assert_int_equal(cn.ranges, 6);
	assert_int_equal(cn.dropped_records, 200);
	/* dev0 has a UUID and is merged; dev1 has none and is kept apart. */
	assert_int_equal(kpt_file_devices(f, &dv, &n, &d), 0);
	assert_int_equal(n, 3);
	assert_int_equal(kpt_file_processes(f, &pr, &n, &d), 0);
	assert_int_equal(pr[0].run, 0);
	assert_int_equal(pr[1].run, 0);
	assert_int_equal(pr[2].run, 1);
	assert_int_equal(pr[3].pid, 1240);
	assert_string_equal(kpt_file_meta_get(f, "suite"), "default");
	assert_int_equal(kpt_file_ranges(f, &rg, &n, &d), 0);
	assert_int_equal(rg[3].id, 11 + 4);  /* second copy shifted past id 10 */
	assert_int_equal(rg[4].parent, rg[3].id);
	assert_int_equal(kpt_file_load_strings(f, &d), 0);
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	while (kpt_kernel_cursor_next(c, &rows, &n, &d) == 1) {
		for (size_t i = 0; i < n; i++) {
			size_t j = (seen + i) % NKERN;
			struct kpt_kernel want = kernel_row(&fx, j);

			assert_string_equal(kpt_file_string(f, rows[i].name), j % 3 ? "_Z6kernelPf" : fx.long_name);
			assert_int_equal(rows[i].start_ns, want.start_ns);
			if (seen + i >= NKERN) {
				assert_int_equal(rows[i].process, want.process + 2);
				assert_int_equal(rows[i].range, want.range == KPT_NONE ? KPT_NONE : want.range + 11);
				assert_int_equal(rows[i].device, want.device == 0 ? 0 : 2);
			}
		}
		seen += n;
	}
	assert_int_equal(seen, 2 * NKERN);
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
	free(fx.long_name);
	tmp_clean(&t);
}

/* A file written by format 1.0 (committed; made by tests/fuzz/make_corpus.c)
 * must stay readable: a writer change that breaks it is a major version. */
static void test_reads_committed_1_0_file(void **state)
{
	struct kpt_file *f;
	struct kpt_diag d = { 0 };
	struct kpt_counts cn;
	struct kpt_kernel_cursor *c;
	const struct kpt_kernel *rows;
	const struct kpt_device *dv;
	const struct kpt_counter *ct;
	size_t n;

	open_ok(KPT_SRC_DIR "/tests/fuzz/corpus/all-kinds.kpt", &f);
	assert_int_equal(kpt_file_counts(f, &cn, &d), 0);
	assert_int_equal(cn.kernels, 4);
	assert_int_equal(cn.memops, 1);
	assert_int_equal(cn.ranges, 1);
	assert_int_equal(cn.events, 1);
	assert_int_equal(cn.env_samples, 1);
	assert_int_equal(cn.counters, 1);
	assert_int_equal(cn.dropped_records, 3);
	assert_string_equal(kpt_file_meta_get(f, "suite"), "quick");
	assert_int_equal(kpt_file_devices(f, &dv, &n, &d), 0);
	assert_string_equal(dv[0].slug, "nvidia-h100-80gb-hbm3");
	assert_true(dv[0].copy_gbps == 3000);
	assert_int_equal(kpt_file_load_strings(f, &d), 0);
	assert_int_equal(kpt_file_counters(f, &ct, &n, &d), 0);
	assert_string_equal(kpt_file_string(f, ct[0].metric), "dram__bytes_read.sum");
	assert_true(ct[0].value == 1.5);
	assert_int_equal(kpt_kernel_cursor_create(f, &c, &d), 0);
	assert_int_equal(kpt_kernel_cursor_next(c, &rows, &n, &d), 1);
	assert_int_equal(n, 4);
	assert_string_equal(kpt_file_string(f, rows[3].name), "_ZN3kpt4gemmILi128EEEvPKfPfRKi");
	assert_int_equal(rows[3].start_ns, 300);
	assert_int_equal(rows[3].end_ns, 340);
	assert_int_equal(rows[3].range, 1);
	assert_int_equal(rows[2].range, KPT_NONE);
	assert_int_equal(rows[3].block[0], 128);
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
}

/* Peak resident set in KiB since the last reset (Linux VmHWM). */
static long peak_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static int reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (!f)
		return -1;
	fputs("5", f);
	return fclose(f);
}

static void test_writer_memory_is_bounded(void **state)
{
	struct tmp t;
	struct kpt_writer *w;
	struct kpt_diag d = { 0 };
	struct kpt_device dv = dev0;
	struct kpt_process p = { .index = 0, .command = KPT_NONE, .rank = KPT_NONE };
	struct kpt_kernel k[1000];
	const size_t total = 3000000;  /* 264 MB as structs */
	uint32_t name;
	long before = reset_peak() ? -1 : peak_kib();

	if (before < 0)
		skip();  /* no /proc: nothing to measure with */
	tmp_make(&t);
	assert_int_equal(kpt_writer_create(t.path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "_Z6kernelPf", &name, &d), 0);
	assert_int_equal(kpt_writer_device(w, &dv, &d), 0);
	assert_int_equal(kpt_writer_process(w, &p, &d), 0);
	for (size_t done = 0; done < total; done += 1000) {
		for (size_t i = 0; i < 1000; i++) {
			uint64_t t0 = (done + i) * 4000;

			k[i] = (struct kpt_kernel){ .start_ns = t0, .end_ns = t0 + 1000 + (i * 7919) % 3000,
						    .name = name, .grid = { 64, 1, 1 },
						    .block = { 256, 1, 1 }, .correlation = (uint32_t)(done + i),
						    .range = KPT_NONE, .graph = KPT_NONE };
		}
		assert_int_equal(kpt_writer_kernels(w, k, 1000, &d), 0);
	}
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	kpt_writer_destroy(w);
	/* One 64K-row chunk with its launch table and buffers is about 20 MB. */
	assert_true(peak_kib() - before < 48 * 1024);
	tmp_clean(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_keeps_every_field),
		cmocka_unit_test(test_kernels_stream_across_chunks),
		cmocka_unit_test(test_empty_recording_round_trips),
		cmocka_unit_test(test_writer_leaves_no_file_without_commit),
		cmocka_unit_test(test_writer_commit_replaces_atomically),
		cmocka_unit_test(test_writer_rejects_unknown_string_id),
		cmocka_unit_test(test_writer_rejects_undeclared_process),
		cmocka_unit_test(test_writer_checks_table_indices),
		cmocka_unit_test(test_writer_create_fails_in_missing_dir),
		cmocka_unit_test(test_unknown_section_is_skipped),
		cmocka_unit_test(test_higher_minor_version_reads),
		cmocka_unit_test(test_longer_header_and_toc_entries_read),
		cmocka_unit_test(test_appended_columns_are_ignored),
		cmocka_unit_test(test_rejects_newer_major_version),
		cmocka_unit_test(test_rejects_missing_file),
		cmocka_unit_test(test_rejects_directory),
		cmocka_unit_test(test_rejects_empty_file),
		cmocka_unit_test(test_rejects_wrong_magic),
		cmocka_unit_test(test_rejects_every_truncation),
		cmocka_unit_test(test_rejects_trailing_garbage),
		cmocka_unit_test(test_rejects_nonzero_reserved_fields),
		cmocka_unit_test(test_rejects_absurd_toc),
		cmocka_unit_test(test_corrupt_zstd_section_fails_on_load),
		cmocka_unit_test(test_rejects_string_id_out_of_range),
		cmocka_unit_test(test_rejects_truncated_section_payload),
		cmocka_unit_test(test_open_mem_matches_open),
		cmocka_unit_test(test_copy_into_merges_processes),
		cmocka_unit_test(test_reads_committed_1_0_file),
		cmocka_unit_test(test_writer_memory_is_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
