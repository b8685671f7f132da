/* kpt_test_rec.h - a small recording with hand-computable numbers, written
 * with the real writer, shared by test_summary.c and test_export.c.
 *
 * Devices 0 ("NVIDIA H100 80GB HBM3") and 1; processes 0 (run 0) and 1 (run 1).
 * Kernels (device 0 unless said), durations in ns, base time T0:
 *   _Z4axpyPfS_f ("axpy(float*, float*, float)"): 100, 200 in range 3,
 *       300, 400 in range 5 (both paths "work/launch")
 *   plain_kernel: 1000, 2000 in range 1 ("work"), 3000 outside any range
 *   _Z5otherv ("other()"): 500 on device 1
 * Ranges: 1 "work" > 2 "kpt:iter" > 3 "launch"; 1 > 4 "kpt:iter" > 5 "launch";
 *   6 a mark "note" on a thread with a 64-bit id; 7 "open" never closed.
 * Memops: one 1 MiB pinned HtoD copy of 1000 ns; one memset.
 * Env: device 0: SM 1980/1755/1980 MHz, 40/45/50 C, 100/200/300 W,
 *   throttle 0, sw_power_cap, gpu_idle; device 1: one sample.
 * Events: cudaLaunchKernel (correlation 40, the first kernel) and a sync,
 *   both on process 0, thread 11.
 * Meta: command "app --x", host "box", time "2026-11-21T00:00:00Z".
 * Drops: 7 records in process 1.
 */
#ifndef KPT_TEST_REC_H
#define KPT_TEST_REC_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_format.h"

#define T0 UINT64_C(1700000000000000000)

static const struct {
	const char *name;
	uint64_t start, dur;
	uint32_t range, device, stream, process;
} test_kernels[] = {
	{ "_Z4axpyPfS_f", 1000, 100, 3, 0, 7, 0 },
	{ "plain_kernel", 2000, 1000, 1, 0, 7, 0 },
	{ "_Z4axpyPfS_f", 4000, 200, 3, 0, 13, 0 },
	{ "plain_kernel", 5000, 2000, 1, 0, 7, 0 },
	{ "_Z4axpyPfS_f", 1234567, 300, 5, 0, 7, 1 },
	{ "plain_kernel", 1300000, 3000, KPT_NONE, 0, 7, 1 },
	{ "_Z4axpyPfS_f", 1400000, 400, 5, 0, 7, 1 },
	{ "_Z5otherv", 1500000, 500, KPT_NONE, 1, 3, 1 },
};
#define N_TEST_KERNELS (sizeof test_kernels / sizeof test_kernels[0])

/* Writes the recording to path; returns 0 or a negative kpt_err. */
static inline int write_test_recording(const char *path)
{
	struct kpt_writer *w;
	struct kpt_diag d;
	uint32_t id[16];
	int rc = kpt_writer_create(path, NULL, &w, &d);
	static const char *const strs[] = { "work", "kpt:iter", "launch", "note", "open", "app --x" };

	for (size_t i = 0; rc >= 0 && i < sizeof strs / sizeof strs[0]; i++)
		rc = kpt_writer_intern_cstr(w, strs[i], &id[i], &d);
	if (rc >= 0)
		rc = kpt_writer_meta(w, "command", "app --x", &d);
	if (rc >= 0)
		rc = kpt_writer_meta(w, "host", "box", &d);
	if (rc >= 0)
		rc = kpt_writer_meta(w, "time", "2026-11-21T00:00:00Z", &d);
	for (uint32_t i = 0; rc >= 0 && i < 2; i++) {
		struct kpt_device dev = {
			.index = i, .name = i ? "NVIDIA L4" : "NVIDIA H100 80GB HBM3",
			.slug = i ? "nvidia-l4" : "nvidia-h100-80gb-hbm3", .uuid = i ? "GPU-1" : "GPU-0",
			.cuda_ordinal = i, .sm_count = i ? 58 : 132, .cc_major = i ? 8 : 9, .cc_minor = i ? 9 : 0,
			.mem_bytes = UINT64_C(85031714816), .l2_bytes = 52428800, .sm_clock_max_mhz = 1980,
			.mem_clock_max_mhz = 2619, .mem_bus_width_bits = 5120, .driver_version = 13000,
			.runtime_version = 13000, .driver_string = "580.95.05",
		};
		rc = kpt_writer_device(w, &dev, &d);
	}
	for (uint32_t i = 0; rc >= 0 && i < 2; i++) {
		struct kpt_process p = {
			.index = i, .run = i, .pid = 100 + i, .ppid = 1, .rank = KPT_NONE, .exit_status = 0,
			.start_ns = T0, .end_ns = T0 + 2000000, .command = id[5], .dropped = i ? 7 : 0,
		};
		rc = kpt_writer_process(w, &p, &d);
	}
	if (rc >= 0)
		rc = kpt_writer_drop(w, &(struct kpt_drop){ .process = 1, .device = 0, .stream = 7, .count = 7 }, &d);
	for (size_t i = 0; rc >= 0 && i < N_TEST_KERNELS; i++) {
		struct kpt_kernel k = {
			.start_ns = T0 + test_kernels[i].start,
			.end_ns = T0 + test_kernels[i].start + test_kernels[i].dur,
			.device = test_kernels[i].device, .stream = test_kernels[i].stream,
			.process = test_kernels[i].process,
			.grid = { 108, 2, 1 }, .block = { 256, 1, 1 }, .registers = 32,
			.shared_static = 1024, .shared_dynamic = 4096, .correlation = 40 + (uint32_t)i,
			.range = test_kernels[i].range, .graph = KPT_NONE,
		};
		rc = kpt_writer_intern_cstr(w, test_kernels[i].name, &k.name, &d);
		if (rc >= 0)
			rc = kpt_writer_kernels(w, &k, 1, &d);
	}
	if (rc >= 0) {
		const struct kpt_range r[] = {
			{ 1, KPT_NONE, id[0], KPT_NONE, KPT_RANGE_PUSHPOP, 0, 11, T0 + 500, T0 + 8000 },
			{ 2, 1, id[1], KPT_NONE, KPT_RANGE_PUSHPOP, 0, 11, T0 + 900, T0 + 4500 },
			{ 3, 2, id[2], KPT_NONE, KPT_RANGE_PUSHPOP, 0, 11, T0 + 950, T0 + 4300 },
			{ 4, 1, id[1], KPT_NONE, KPT_RANGE_PUSHPOP, 1, 12, T0 + 1200000, T0 + 1450000 },
			{ 5, 4, id[2], KPT_NONE, KPT_RANGE_PUSHPOP, 1, 12, T0 + 1230000, T0 + 1440000 },
			{ 6, KPT_NONE, id[3], KPT_NONE, KPT_RANGE_MARK, 0, UINT64_C(0x7f1234567890), T0 + 600, T0 + 600 },
			{ 7, KPT_NONE, id[4], KPT_NONE, KPT_RANGE_PUSHPOP, 0, 11, T0 + 700, 0 },
		};
		rc = kpt_writer_ranges(w, r, sizeof r / sizeof r[0], &d);
	}
	if (rc >= 0) {
		const struct kpt_memop m[] = {
			{ .start_ns = T0 + 100, .end_ns = T0 + 1100, .bytes = 1048576, .kind = KPT_MEMCPY_HTOD,
			  .src_mem = KPT_MEM_PINNED, .dst_mem = KPT_MEM_DEVICE, .device = 0, .stream = 7,
			  .process = 0, .correlation = 30, .range = KPT_NONE, .graph = KPT_NONE },
			{ .start_ns = T0 + 1200, .end_ns = T0 + 1300, .bytes = 4096, .kind = KPT_MEMSET,
			  .dst_mem = KPT_MEM_DEVICE, .device = 0, .stream = 7, .process = 0, .correlation = 31,
			  .range = KPT_NONE, .graph = KPT_NONE },
		};
		rc = kpt_writer_memops(w, m, 2, &d);
	}
	if (rc >= 0) {
		const struct kpt_env_sample e[] = {
			{ T0 + 10, 0, 0, 1980, 2619, 40, 100000, 0 },
			{ T0 + 20, 0, 0, 1755, 2619, 45, 200000, 0x4 },
			{ T0 + 30, 0, 0, 1980, 2619, 50, 300000, 0x1 },
			{ T0 + 40, 1, 1, 2040, 6251, 60, 70000, 0 },
		};
		rc = kpt_writer_env(w, e, 4, &d);
	}
	if (rc >= 0) {
		uint32_t launch;
		struct kpt_event ev[] = {
			{ T0 + 980, T0 + 995, KPT_EVENT_RUNTIME, 211, 0, 0, 0, 7, 40, 11 },
			{ T0 + 7000, T0 + 7100, KPT_EVENT_SYNC, 3, KPT_NONE, 0, 0, KPT_NONE, 0, 11 },
		};

		rc = kpt_writer_intern_cstr(w, "cudaLaunchKernel", &launch, &d);
		ev[0].name = launch;
		if (rc >= 0)
			rc = kpt_writer_events(w, ev, 2, &d);
	}
	if (rc >= 0)
		rc = kpt_writer_commit(w, &d);
	kpt_writer_destroy(w);
	return rc;
}

/* cmocka group fixture: the recording written to a per-process file and
 * opened; *state is a struct rec_fixture. */
struct rec_fixture {
	char path[64];
	struct kpt_file *f;
};

static inline int rec_setup(void **state)
{
	struct rec_fixture *fx = calloc(1, sizeof *fx);
	struct kpt_diag d;

	if (!fx)
		return -1;
	snprintf(fx->path, sizeof fx->path, "kpt_test_rec.%d.kpt", (int)getpid());
	if (write_test_recording(fx->path) < 0 || kpt_file_open(fx->path, &fx->f, &d) < 0) {
		free(fx);
		return -1;
	}
	*state = fx;
	return 0;
}

static inline int rec_teardown(void **state)
{
	struct rec_fixture *fx = *state;

	kpt_file_close(fx->f);
	unlink(fx->path);
	free(fx);
	return 0;
}

#endif
