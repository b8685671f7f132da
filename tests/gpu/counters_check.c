/* counters_check FILE WORKLOAD TOLERANCE_PCT - checks the counters of a
 * recording made with `kptprof record --counters --workload WORKLOAD`:
 * the kernel with the most GPU time in the timing runs has counters, its
 * DRAM bytes (read + write, mean over its profiled launches) are within
 * TOLERANCE_PCT of the bytes the workload declares per iteration
 * (meta workload.<name>.bytes; the workload must be one kernel per
 * iteration), its counted time is positive, and meta counters.passes is
 * present, and the device row carries plausible measured ceilings (copy
 * 100..20000 GB/s, bf16 10..10000 TFLOP/s). Prints what it compared;
 * exit 0 pass, 1 fail, 2 bad input.
 *
 * counters_check --write FILE [KERNELS] - writes a small recording as a
 * counters pass leaves it, for CPU tests of record/report without a GPU:
 * one H100 device with ceilings (copy 3000 GB/s, bf16 800 TFLOP/s, 132
 * SMs), one process, and per launch the default set's counters: "copy"
 * launches 1 ms moving 1.5 GB each way (3000 GB/s, 100% of copy),
 * "gemm" 2 ms with tensor cycles 25% of active SM cycles. KERNELS (default
 * "ccg") names the launches in order: c copy, g gemm.
 *
 * counters_check --list FILE - prints every counter row, one a line:
 * rank (of its process; -1 none), device index, mangled kernel name,
 * metric, value, tab-separated (tests/gpu/nccl_counters_test.sh reads it
 * per rank). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_counters.h"
#include "kpt_format.h"

static int write_recording(const char *path, const char *launches)
{
	static const char *const metrics[] = {
		"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
		"sm__inst_executed.sum", "sm__cycles_active.avg", "lts__t_sectors.sum",
		"sm__pipe_tensor_op_hmma_cycles_active.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
	};
	static const double copy_v[] = { 1e6, 1.5e9, 1.5e9, 4e8, 1.7e6, 9.4e7, 0, 80 };
	static const double gemm_v[] = { 2e6, 2e8, 1e8, 8e8, 3.4e6, 1e7, 1.122e8, 40 };
	struct kpt_writer *w = NULL;
	struct kpt_device dev = { .name = "NVIDIA H100 80GB HBM3", .slug = "nvidia-h100-80gb-hbm3",
				  .uuid = "GPU-00000000-0000-0000-0000-000000000001", .sm_count = 132, .cc_major = 9,
				  .copy_gbps = 3000, .bf16_tflops = 800, .driver_string = "" };
	struct kpt_process p = { .exit_status = 0, .rank = KPT_NONE };
	struct kpt_diag d;
	uint32_t names[2], mids[8];
	int rc;

	kpt_diag_clear(&d);
	if ((rc = kpt_writer_create(path, NULL, &w, &d)) < 0 ||
	    (rc = kpt_writer_intern_cstr(w, "_Z8copy_vecPvPKvm", &names[0], &d)) < 0 ||
	    (rc = kpt_writer_intern_cstr(w, "_Z4gemmPKvS0_Pv", &names[1], &d)) < 0 ||
	    (rc = kpt_writer_intern_cstr(w, "counters_check", &p.command, &d)) < 0 ||
	    (rc = kpt_writer_device(w, &dev, &d)) < 0 || (rc = kpt_writer_process(w, &p, &d)) < 0)
		goto out;
	for (int m = 0; m < 8 && rc == 0; m++)
		rc = kpt_writer_intern_cstr(w, metrics[m], &mids[m], &d);
	for (uint32_t i = 0; launches[i] && rc == 0; i++) {
		int g = launches[i] == 'g';
		struct kpt_counter rows[8];

		for (int m = 0; m < 8; m++)
			rows[m] = (struct kpt_counter){ .kernel_name = names[g], .ordinal = i, .metric = mids[m],
							.value = g ? gemm_v[m] : copy_v[m] };
		rc = kpt_writer_counters(w, rows, 8, &d);
	}
	/* no launches: what the collector writes when a program's kernels
	 * all went through graphs and its last image was lost */
	if (rc == 0 && !launches[0] && (rc = kpt_writer_meta(w, "counters.graph_launches_skipped", "3", &d)) == 0)
		rc = kpt_writer_meta(w, "counters.captured_launches", "2", &d);
	if (rc == 0 && (rc = kpt_writer_meta(w, "counters.passes", "1", &d)) == 0)
		rc = kpt_writer_commit(w, &d);
out:
	kpt_writer_destroy(w);
	if (rc < 0)
		fprintf(stderr, "counters_check: %s\n", d.msg);
	return rc < 0 ? 2 : 0;
}

static int list_counters(const char *path)
{
	const struct kpt_counter *c;
	const struct kpt_process *p;
	struct kpt_file *f = NULL;
	struct kpt_diag d;
	size_t n, np;

	kpt_diag_clear(&d);
	if (kpt_file_open(path, &f, &d) < 0 || kpt_file_load_strings(f, &d) < 0 ||
	    kpt_file_processes(f, &p, &np, &d) < 0 || kpt_file_counters(f, &c, &n, &d) < 0)
		return fprintf(stderr, "counters_check: %s\n", d.msg), 2;
	for (size_t i = 0; i < n; i++) {
		long rank = c[i].process < np && p[c[i].process].rank != KPT_NONE ? (long)p[c[i].process].rank : -1;
		const char *k = kpt_file_string(f, c[i].kernel_name), *m = kpt_file_string(f, c[i].metric);

		printf("%ld\t%u\t%s\t%s\t%.17g\n", rank, c[i].device, k ? k : "?", m ? m : "?", c[i].value);
	}
	kpt_file_close(f);
	return 0;
}

int main(int argc, char **argv)
{
	struct kpt_file *f = NULL;
	struct kpt_kernel_cursor *cur = NULL;
	struct kpt_counter_table *t = NULL;
	const struct kpt_kernel *rows;
	struct kpt_diag d;
	uint64_t *total;
	uint32_t ns, best = KPT_NONE;
	size_t n;
	char key[512];
	const char *declared, *passes;
	double tol, want, rd, wr, got, dur;
	int rc;

	if (argc == 3 && strcmp(argv[1], "--list") == 0)
		return list_counters(argv[2]);
	if (argc >= 3 && strcmp(argv[1], "--write") == 0)
		return write_recording(argv[2], argc > 3 ? argv[3] : "ccg");
	if (argc != 4 || !(tol = atof(argv[3])))
		return fprintf(stderr, "usage: counters_check FILE WORKLOAD TOLERANCE_PCT\n"), 2;
	kpt_diag_clear(&d);
	if (kpt_file_open(argv[1], &f, &d) < 0 || kpt_file_load_strings(f, &d) < 0 ||
	    kpt_counter_table_load(f, &t, &d) < 0)
		return fprintf(stderr, "counters_check: %s\n", d.msg), 2;
	snprintf(key, sizeof key, "workload.%s.bytes", argv[2]);
	declared = kpt_file_meta_get(f, key);
	passes = kpt_file_meta_get(f, "counters.passes");
	if (!declared || !(want = atof(declared)))
		return fprintf(stderr, "counters_check: no '%s' in meta\n", key), 2;
	ns = kpt_file_string_count(f);
	total = calloc(ns + 1, sizeof *total);
	if (!total || kpt_kernel_cursor_create(f, &cur, &d) < 0)
		return fprintf(stderr, "counters_check: %s\n", d.msg), 2;
	while ((rc = kpt_kernel_cursor_next(cur, &rows, &n, &d)) > 0)
		for (size_t i = 0; i < n; i++)
			if (rows[i].name < ns)
				total[rows[i].name] += rows[i].end_ns - rows[i].start_ns;
	for (uint32_t i = 0; i < ns; i++)
		if (total[i] && (best == KPT_NONE || total[i] > total[best]))
			best = i;
	if (rc < 0 || best == KPT_NONE)
		return fprintf(stderr, "counters_check: no kernels in the timing runs\n"), 1;
	rd = kpt_counter_table_get(t, kpt_file_string(f, best), "dram__bytes_read.sum");
	wr = kpt_counter_table_get(t, kpt_file_string(f, best), "dram__bytes_write.sum");
	dur = kpt_counter_table_get(t, kpt_file_string(f, best), "gpu__time_duration.sum");
	got = rd + wr;
	printf("kernel %s: dram read %.0f + write %.0f = %.0f bytes, declared %.0f (%+.2f%%), "
	       "counted time %.0f ns, passes %s, %zu counter entries\n",
	       kpt_file_string(f, best), rd, wr, got, want, 100.0 * (got / want - 1), dur,
	       passes ? passes : "?", kpt_counter_table_size(t));
	rc = 0;
	if (isnan(got) || fabs(got / want - 1) * 100 > tol) {
		printf("FAIL: dram bytes not within %.1f%% of the declared bytes\n", tol);
		rc = 1;
	}
	if (!(dur > 0)) {
		printf("FAIL: no positive gpu__time_duration.sum\n");
		rc = 1;
	}
	{
		const struct kpt_device *dev;
		size_t nd = 0;

		if (kpt_file_devices(f, &dev, &nd, &d) < 0 || nd == 0) {
			printf("FAIL: no device rows\n");
			rc = 1;
		} else {
			printf("ceilings: copy %.0f GB/s, bf16 %.0f TFLOP/s\n", dev[0].copy_gbps, dev[0].bf16_tflops);
			if (!(dev[0].copy_gbps >= 100 && dev[0].copy_gbps <= 20000) ||
			    !(dev[0].bf16_tflops >= 10 && dev[0].bf16_tflops <= 10000)) {
				printf("FAIL: ceilings missing or implausible\n");
				rc = 1;
			}
		}
	}
	if (!passes || atoi(passes) < 1) {
		printf("FAIL: meta counters.passes missing\n");
		rc = 1;
	}
	free(total);
	kpt_kernel_cursor_destroy(cur);
	kpt_counter_table_destroy(t);
	kpt_file_close(f);
	return rc;
}
