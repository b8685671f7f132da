/* test_export.c - Chrome trace, CSV and JSON exports of a small recording
 * (kpt_test_rec.h), parsed back with jansson where it is installed. */
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

#include "kpt_export.h"
#include "kpt_test_rec.h"
#ifdef KPT_HAVE_JANSSON
#include <jansson.h>
#endif

/* The export of the fixture in fmt, as a malloc'd string. */
static char *export_text(void **state, enum kpt_export_format fmt)
{
	struct rec_fixture *fx = *state;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	struct kpt_diag d;

	assert_non_null(out);
	assert_int_equal(kpt_export(fx->f, fmt, out, &d), 0);
	fclose(out);
	return buf;
}

static size_t count_lines(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void test_format_names_parse_from_a_table(void **state)
{
	enum kpt_export_format fmt;
	struct kpt_diag d;

	assert_int_equal(kpt_export_format_parse("chrome", &fmt, &d), 0);
	assert_int_equal(fmt, KPT_EXPORT_CHROME);
	assert_int_equal(kpt_export_format_parse("csv", &fmt, &d), 0);
	assert_int_equal(fmt, KPT_EXPORT_CSV);
	assert_int_equal(kpt_export_format_parse("json", &fmt, &d), 0);
	assert_int_equal(fmt, KPT_EXPORT_JSON);
	assert_int_equal(kpt_export_format_parse("perfetto", &fmt, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, "'perfetto'"));
	assert_string_equal(kpt_export_format_name(KPT_EXPORT_CSV), "csv");
}

static void test_chrome_timestamps_are_relative_us_with_ns_precision(void **state)
{
	char *text = export_text(state, KPT_EXPORT_CHROME);

	/* base: the earliest timestamp (the env sample at T0 + 10); the kernel
	 * at T0 + 1234567 for 300 ns */
	assert_non_null(strstr(text, "\"baseTimeNanoseconds\": 1700000000000000010"));
	assert_non_null(strstr(text, "\"ts\":1234.557,\"dur\":0.300"));
	free(text);
}

static void test_csv_field_quotes_only_when_needed(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	assert_int_equal(kpt_csv_field(out, "plain"), 0);
	putc('|', out);
	assert_int_equal(kpt_csv_field(out, "f<a, b>(\"x\")"), 0);
	putc('|', out);
	assert_int_equal(kpt_csv_field(out, "two\nlines"), 0);
	fclose(out);
	assert_string_equal(buf, "plain|\"f<a, b>(\"\"x\"\")\"|\"two\nlines\"");
	free(buf);
}

static void test_csv_has_one_row_per_kernel_and_memop(void **state)
{
	char *text = export_text(state, KPT_EXPORT_CSV);

	assert_int_equal(count_lines(text), 1 + N_TEST_KERNELS + 2);
	assert_true(strncmp(text, "kind,start_ns,end_ns,duration_ns,", 33) == 0);
	assert_non_null(strstr(text, "kernel,1700000000000001000,1700000000000001100,100,0,0,0,7,40,"
				     "108,2,1,256,1,1,32,1024,4096,,3,work/launch,\"axpy(float*, float*, float)\"\n"));
	assert_non_null(strstr(text, "kernel,1700000000001300000,1700000000001303000,3000,1,1,0,7,45,"));
	assert_non_null(strstr(text, "memcpy,1700000000000000100,1700000000000001100,1000,0,0,0,7,30,"
				     ",,,,,,,,,1048576,,,Memcpy HtoD\n"));
	free(text);
}

static void test_export_to_path_replaces_the_file_atomically(void **state)
{
	struct rec_fixture *fx = *state;
	char dir[64], path[128];
	struct kpt_diag d;
	struct stat st;
	DIR *dh;
	struct dirent *e;
	int entries = 0;
	FILE *old;

	snprintf(dir, sizeof dir, "test_export_dir.%d", (int)getpid());
	assert_int_equal(mkdir(dir, 0755), 0);
	snprintf(path, sizeof path, "%s/out.csv", dir);
	old = fopen(path, "w");
	fputs("old", old);
	fclose(old);
	assert_int_equal(kpt_export_to_path(fx->f, KPT_EXPORT_CSV, path, &d), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_true(st.st_size > 100);
	dh = opendir(dir);
	while ((e = readdir(dh)))
		entries += e->d_name[0] != '.';
	closedir(dh);
	assert_int_equal(entries, 1);   /* no temporary file left beside it */
	unlink(path);
	rmdir(dir);
}

static void test_export_to_unwritable_path_fails_and_leaves_nothing(void **state)
{
	struct rec_fixture *fx = *state;
	struct kpt_diag d;
	struct stat st;

	assert_int_equal(kpt_export_to_path(fx->f, KPT_EXPORT_CHROME, "no-such-dir/x/trace.json", &d), KPT_E_IO);
	assert_non_null(strstr(d.msg, "'no-such-dir/x/trace.json'"));
	assert_int_not_equal(stat("no-such-dir", &st), 0);
}

static void test_write_error_is_reported(void **state)
{
	struct rec_fixture *fx = *state;
	FILE *full = fopen("/dev/full", "w");
	struct kpt_diag d;

	if (!full)
		skip();
	assert_int_equal(kpt_export(fx->f, KPT_EXPORT_JSON, full, &d), KPT_E_IO);
	fclose(full);
}

#ifdef KPT_HAVE_JANSSON
static json_t *export_json(void **state, enum kpt_export_format fmt)
{
	char *text = export_text(state, fmt);
	json_error_t err;
	json_t *root = json_loads(text, 0, &err);

	if (!root)
		fail_msg("export does not parse: line %d: %s", err.line, err.text);
	free(text);
	return root;
}

/* Number of events with ph and cat (cat NULL: any). */
static size_t count_events(json_t *events, const char *ph, const char *cat)
{
	size_t i, n = 0;
	json_t *e;

	json_array_foreach(events, i, e) {
		const char *eph = json_string_value(json_object_get(e, "ph"));
		const char *ecat = json_string_value(json_object_get(e, "cat"));

		n += eph && strcmp(eph, ph) == 0 && (!cat || (ecat && strcmp(ecat, cat) == 0));
	}
	return n;
}

/* The metadata event what ("thread_name", ...) for pid/tid, or NULL. */
static json_t *find_meta(json_t *events, const char *what, json_int_t pid, json_int_t tid, int match_tid)
{
	size_t i;
	json_t *e;

	json_array_foreach(events, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));

		if (ph && strcmp(ph, "M") == 0 && name && strcmp(name, what) == 0 &&
		    json_integer_value(json_object_get(e, "pid")) == pid &&
		    (!match_tid || json_integer_value(json_object_get(e, "tid")) == tid))
			return e;
	}
	return NULL;
}

static json_t *find_event(json_t *events, const char *cat, json_int_t correlation)
{
	size_t i;
	json_t *e;

	json_array_foreach(events, i, e) {
		const char *ecat = json_string_value(json_object_get(e, "cat"));
		json_t *args = json_object_get(e, "args");

		if (ecat && strcmp(ecat, cat) == 0 &&
		    json_integer_value(json_object_get(args, "correlation")) == correlation)
			return e;
	}
	return NULL;
}

static void test_chrome_trace_parses_and_has_every_record(void **state)
{
	json_t *root = export_json(state, KPT_EXPORT_CHROME);
	json_t *ev = json_object_get(root, "traceEvents");

	assert_true(json_is_array(ev));
	assert_int_equal(count_events(ev, "X", "kernel"), N_TEST_KERNELS);
	assert_int_equal(count_events(ev, "X", "gpu_memcpy"), 1);
	assert_int_equal(count_events(ev, "X", "gpu_memset"), 1);
	assert_int_equal(count_events(ev, "X", "nvtx"), 5);   /* range 7 never closed */
	assert_int_equal(count_events(ev, "i", "nvtx"), 1);
	assert_int_equal(count_events(ev, "C", NULL), 4 * 4); /* 4 samples x 4 counters */
	assert_int_equal(json_array_size(json_object_get(root, "deviceProperties")), 2);
	assert_string_equal(json_string_value(json_object_get(json_object_get(root, "otherData"), "command")),
			    "app --x");
	json_decref(root);
}

static void test_chrome_kernel_args_use_kineto_names(void **state)
{
	json_t *root = export_json(state, KPT_EXPORT_CHROME);
	json_t *k = find_event(json_object_get(root, "traceEvents"), "kernel", 40);
	json_t *args = json_object_get(k, "args");

	assert_non_null(k);
	assert_string_equal(json_string_value(json_object_get(k, "name")), "axpy(float*, float*, float)");
	json_t *grid = json_pack("[iii]", 108, 2, 1), *block = json_pack("[iii]", 256, 1, 1);

	assert_true(json_equal(json_object_get(args, "grid"), grid));
	assert_true(json_equal(json_object_get(args, "block"), block));
	json_decref(grid);
	json_decref(block);
	assert_int_equal(json_integer_value(json_object_get(args, "registers per thread")), 32);
	assert_int_equal(json_integer_value(json_object_get(args, "shared memory")), 1024 + 4096);
	assert_int_equal(json_integer_value(json_object_get(args, "stream")), 7);
	assert_int_equal(json_integer_value(json_object_get(args, "device")), 0);
	assert_string_equal(json_string_value(json_object_get(args, "nvtx range")), "work/launch");
	assert_float_equal(json_number_value(json_object_get(k, "ts")), 0.990, 1e-9);
	assert_float_equal(json_number_value(json_object_get(k, "dur")), 0.100, 1e-9);
	json_decref(root);
}

static void test_chrome_names_a_track_per_device_and_stream(void **state)
{
	json_t *root = export_json(state, KPT_EXPORT_CHROME);
	json_t *ev = json_object_get(root, "traceEvents");
	json_t *k40 = find_event(ev, "kernel", 40), *k42 = find_event(ev, "kernel", 42);
	json_t *k47 = find_event(ev, "kernel", 47), *k44 = find_event(ev, "kernel", 44);
	json_int_t pid = json_integer_value(json_object_get(k40, "pid"));
	json_t *tn, *pn;
	size_t i;
	json_t *e;

	/* streams 7 and 13 of one process and device: one pid, two tids */
	assert_int_equal(json_integer_value(json_object_get(k42, "pid")), pid);
	assert_int_equal(json_integer_value(json_object_get(k42, "tid")), 13);
	/* device 1, and process 1 on device 0: other pids */
	assert_int_not_equal(json_integer_value(json_object_get(k47, "pid")), pid);
	assert_int_not_equal(json_integer_value(json_object_get(k44, "pid")), pid);
	tn = find_meta(ev, "thread_name", pid, 13, 1);
	assert_non_null(tn);
	assert_string_equal(json_string_value(json_object_get(json_object_get(tn, "args"), "name")), "stream 13");
	pn = find_meta(ev, "process_name", pid, 0, 0);
	assert_non_null(pn);
	assert_non_null(strstr(json_string_value(json_object_get(json_object_get(pn, "args"), "name")),
			       "GPU 0: NVIDIA H100 80GB HBM3"));
	/* every slice sits on a named thread of a named process; pid and tid
	 * fit the 32 bits Perfetto reads */
	json_array_foreach(ev, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));
		json_int_t epid = json_integer_value(json_object_get(e, "pid"));

		assert_true(epid >= 0 && epid <= UINT32_MAX);
		assert_true(json_integer_value(json_object_get(e, "tid")) <= UINT32_MAX);

		if (strcmp(ph, "X") != 0 && strcmp(ph, "i") != 0)
			continue;
		assert_non_null(find_meta(ev, "process_name", epid, 0, 0));
		assert_non_null(find_meta(ev, "thread_name", epid, json_integer_value(json_object_get(e, "tid")), 1));
	}
	json_decref(root);
}

static void test_chrome_nvtx_ranges_sit_on_their_host_thread(void **state)
{
	json_t *root = export_json(state, KPT_EXPORT_CHROME);
	json_t *ev = json_object_get(root, "traceEvents");
	size_t i;
	json_t *e;
	int seen = 0;

	json_array_foreach(ev, i, e) {
		const char *name = json_string_value(json_object_get(e, "name"));

		if (name && strcmp(name, "work") == 0) {
			assert_int_equal(json_integer_value(json_object_get(e, "tid")), 11);
			assert_float_equal(json_number_value(json_object_get(e, "dur")), 7.5, 1e-9);
			seen++;
		}
		assert_false(name && strcmp(name, "open") == 0);
	}
	assert_int_equal(seen, 1);
	json_decref(root);
}

static void test_chrome_memcpy_has_bytes_and_bandwidth(void **state)
{
	json_t *root = export_json(state, KPT_EXPORT_CHROME);
	json_t *m = find_event(json_object_get(root, "traceEvents"), "gpu_memcpy", 30);
	json_t *args = json_object_get(m, "args");

	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(m, "name")), "Memcpy HtoD (Pinned -> Device)");
	assert_int_equal(json_integer_value(json_object_get(args, "bytes")), 1048576);
	assert_float_equal(json_number_value(json_object_get(args, "memory bandwidth (GB/s)")), 1048.576, 1e-9);
	json_decref(root);
}

static void test_chrome_links_launch_calls_to_kernels(void **state)
{
	json_t *root = export_json(state, KPT_EXPORT_CHROME);
	json_t *ev = json_object_get(root, "traceEvents");
	json_t *launch = find_event(ev, "cuda_runtime", 40), *k = find_event(ev, "kernel", 40);
	json_t *e, *s = NULL, *f = NULL;
	size_t i;

	assert_non_null(launch);
	assert_string_equal(json_string_value(json_object_get(launch, "name")), "cudaLaunchKernel");
	assert_int_equal(json_integer_value(json_object_get(launch, "tid")), 11);
	assert_int_equal(count_events(ev, "X", "cuda_sync"), 1);
	assert_int_equal(count_events(ev, "s", "ac2g"), 1);   /* the sync has no flow */
	json_array_foreach(ev, i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));

		if (strcmp(ph, "s") == 0)
			s = e;
		if (strcmp(ph, "f") == 0 && json_integer_value(json_object_get(e, "id")) ==
		    json_integer_value(json_object_get(s ? s : e, "id")))
			f = e;
	}
	assert_non_null(s);
	assert_non_null(f);
	assert_int_equal(json_integer_value(json_object_get(f, "pid")), json_integer_value(json_object_get(k, "pid")));
	assert_float_equal(json_number_value(json_object_get(f, "ts")), json_number_value(json_object_get(k, "ts")), 1e-9);
	assert_string_equal(json_string_value(json_object_get(f, "bp")), "e");
	json_decref(root);
}

static void test_json_export_has_every_record(void **state)
{
	json_t *root = export_json(state, KPT_EXPORT_JSON);
	json_t *k0 = json_array_get(json_object_get(root, "kernels"), 0);

	assert_string_equal(json_string_value(json_object_get(root, "format_version")), "1.0");
	assert_int_equal(json_array_size(json_object_get(root, "kernels")), N_TEST_KERNELS);
	assert_int_equal(json_array_size(json_object_get(root, "memops")), 2);
	assert_int_equal(json_array_size(json_object_get(root, "ranges")), 7);
	assert_int_equal(json_array_size(json_object_get(root, "env")), 4);
	assert_int_equal(json_array_size(json_object_get(root, "events")), 2);
	assert_int_equal(json_array_size(json_object_get(root, "processes")), 2);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(root, "counts"), "dropped_records")), 7);
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(root, "devices"), 0),
							      "slug")), "nvidia-h100-80gb-hbm3");
	assert_string_equal(json_string_value(json_object_get(json_array_get(json_object_get(root, "devices"), 1),
							      "compute_capability")), "8.9");
	assert_string_equal(json_string_value(json_object_get(k0, "mangled")), "_Z4axpyPfS_f");
	assert_int_equal(json_integer_value(json_object_get(k0, "start_ns")), (json_int_t)(T0 + 1000));
	assert_int_equal(json_integer_value(json_object_get(k0, "range")), 3);
	assert_string_equal(json_string_value(json_object_get(k0, "range_path")), "work/launch");
	json_decref(root);
}
#else
static void test_chrome_trace_parses_and_has_every_record(void **state) { skip(); }
static void test_chrome_kernel_args_use_kineto_names(void **state) { skip(); }
static void test_chrome_names_a_track_per_device_and_stream(void **state) { skip(); }
static void test_chrome_nvtx_ranges_sit_on_their_host_thread(void **state) { skip(); }
static void test_chrome_memcpy_has_bytes_and_bandwidth(void **state) { skip(); }
static void test_chrome_links_launch_calls_to_kernels(void **state) { skip(); }
static void test_json_export_has_every_record(void **state) { skip(); }
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_names_parse_from_a_table),
		cmocka_unit_test(test_chrome_timestamps_are_relative_us_with_ns_precision),
		cmocka_unit_test(test_csv_field_quotes_only_when_needed),
		cmocka_unit_test(test_csv_has_one_row_per_kernel_and_memop),
		cmocka_unit_test(test_export_to_path_replaces_the_file_atomically),
		cmocka_unit_test(test_export_to_unwritable_path_fails_and_leaves_nothing),
		cmocka_unit_test(test_write_error_is_reported),
		cmocka_unit_test(test_chrome_trace_parses_and_has_every_record),
		cmocka_unit_test(test_chrome_kernel_args_use_kineto_names),
		cmocka_unit_test(test_chrome_names_a_track_per_device_and_stream),
		cmocka_unit_test(test_chrome_nvtx_ranges_sit_on_their_host_thread),
		cmocka_unit_test(test_chrome_memcpy_has_bytes_and_bandwidth),
		cmocka_unit_test(test_chrome_links_launch_calls_to_kernels),
		cmocka_unit_test(test_json_export_has_every_record),
	};

	return cmocka_run_group_tests(tests, rec_setup, rec_teardown);
}
