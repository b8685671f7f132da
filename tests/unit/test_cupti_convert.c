/* test_cupti_convert.c - CUPTI activity records (the real cupti_activity.h
 * structs of CUDA 13, filled here) converted into kpt rows, field by field;
 * plus the injection library's output-path expansion and rank lookup. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "kpt_cupti_convert.h"
#include "kpt_inject.h"

static const struct kpt_cupti_ids ids = {
	.process = 3, .device = 1, .name = 42, .range = 7, .thread = 4242,
};

static void test_kernel_fields(void **state)
{
	CUpti_ActivityKernel10 k;
	struct kpt_kernel r;

	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 1000000123;
	k.end = 1000004567;
	k.deviceId = 5;        /* CUDA ordinal: the caller maps it to ids.device */
	k.contextId = 1;
	k.streamId = 13;
	k.gridX = 120; k.gridY = 2; k.gridZ = 1;
	k.blockX = 256; k.blockY = 1; k.blockZ = 4;
	k.registersPerThread = 40;
	k.staticSharedMemory = 4096;
	k.dynamicSharedMemory = 49152;
	k.correlationId = 987654;
	k.name = "_Z6kernelPfi";
	kpt_cupti_kernel(&k, &ids, &r);
	assert_int_equal(r.start_ns, 1000000123);
	assert_int_equal(r.end_ns, 1000004567);
	assert_int_equal(r.name, 42);
	assert_int_equal(r.device, 1);
	assert_int_equal(r.stream, 13);
	assert_int_equal(r.process, 3);
	assert_int_equal(r.grid[0], 120);
	assert_int_equal(r.grid[1], 2);
	assert_int_equal(r.grid[2], 1);
	assert_int_equal(r.block[0], 256);
	assert_int_equal(r.block[1], 1);
	assert_int_equal(r.block[2], 4);
	assert_int_equal(r.registers, 40);
	assert_int_equal(r.shared_static, 4096);
	assert_int_equal(r.shared_dynamic, 49152);
	assert_int_equal(r.correlation, 987654);
	assert_int_equal(r.range, 7);
	assert_int_equal(r.graph, KPT_NONE);
	assert_int_equal(r.graph_node, 0);
}

static void test_kernel_graph_node_ids(void **state)
{
	CUpti_ActivityKernel10 k;
	struct kpt_kernel r;

	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.graphId = 9;
	k.graphNodeId = 0x100000004ull;
	kpt_cupti_kernel(&k, &ids, &r);
	assert_int_equal(r.graph, 9);
	assert_true(r.graph_node == 0x100000004ull);
}

static void test_kernel_node_id_ignored_without_graph(void **state)
{
	CUpti_ActivityKernel10 k;
	struct kpt_kernel r;

	memset(&k, 0, sizeof k);
	k.graphId = 0;
	k.graphNodeId = 77;
	kpt_cupti_kernel(&k, &ids, &r);
	assert_int_equal(r.graph, KPT_NONE);
	assert_int_equal(r.graph_node, 0);
}

static void test_kernel_negative_dims_stored_as_zero(void **state)
{
	CUpti_ActivityKernel10 k;
	struct kpt_kernel r;

	memset(&k, 0, sizeof k);
	k.gridX = -1;
	k.blockZ = -5;
	k.dynamicSharedMemory = -1;
	kpt_cupti_kernel(&k, &ids, &r);
	assert_int_equal(r.grid[0], 0);
	assert_int_equal(r.block[2], 0);
	assert_int_equal(r.shared_dynamic, 0);
}

static void test_memcpy_fields(void **state)
{
	CUpti_ActivityMemcpy6 m;
	struct kpt_memop r;

	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 1u << 20;
	m.start = 5000;
	m.end = 9000;
	m.deviceId = 0;
	m.streamId = 14;
	m.correlationId = 55;
	kpt_cupti_memcpy(&m, &ids, &r);
	assert_int_equal(r.start_ns, 5000);
	assert_int_equal(r.end_ns, 9000);
	assert_int_equal(r.bytes, 1u << 20);
	assert_int_equal(r.kind, KPT_MEMCPY_HTOD);
	assert_int_equal(r.src_mem, KPT_MEM_PINNED);
	assert_int_equal(r.dst_mem, KPT_MEM_DEVICE);
	assert_int_equal(r.value, 0);
	assert_int_equal(r.device, 1);
	assert_int_equal(r.stream, 14);
	assert_int_equal(r.process, 3);
	assert_int_equal(r.correlation, 55);
	assert_int_equal(r.range, 7);
	assert_int_equal(r.graph, KPT_NONE);
}

static void test_memcpy_kind_table(void **state)
{
	assert_int_equal(kpt_cupti_memcpy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD), KPT_MEMCPY_HTOD);
	assert_int_equal(kpt_cupti_memcpy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH), KPT_MEMCPY_DTOH);
	assert_int_equal(kpt_cupti_memcpy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD), KPT_MEMCPY_DTOD);
	assert_int_equal(kpt_cupti_memcpy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH), KPT_MEMCPY_HTOH);
	assert_int_equal(kpt_cupti_memcpy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_PTOP), KPT_MEMCPY_PTOP);
	assert_int_equal(kpt_cupti_memcpy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_ATOD), KPT_MEMCPY_OTHER);
	assert_int_equal(kpt_cupti_memcpy_kind(CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN), KPT_MEMCPY_OTHER);
	assert_int_equal(kpt_cupti_memcpy_kind(999), KPT_MEMCPY_OTHER);
}

static void test_mem_kind_table(void **state)
{
	assert_int_equal(kpt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE), KPT_MEM_PAGEABLE);
	assert_int_equal(kpt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC), KPT_MEM_DEVICE);
	assert_int_equal(kpt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC), KPT_MEM_MANAGED);
	assert_int_equal(kpt_cupti_mem_kind(CUPTI_ACTIVITY_MEMORY_KIND_ARRAY), KPT_MEM_ARRAY);
	assert_int_equal(kpt_cupti_mem_kind(0x7ffffffe), KPT_MEM_UNKNOWN);
}

static void test_memcpy_p2p_fields(void **state)
{
	CUpti_ActivityMemcpyPtoP4 m;
	struct kpt_memop r;

	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = 4096;
	m.start = 10;
	m.end = 20;
	m.streamId = 7;
	m.correlationId = 8;
	m.graphId = 2;
	m.graphNodeId = 3;
	kpt_cupti_memcpy_p2p(&m, &ids, &r);
	assert_int_equal(r.kind, KPT_MEMCPY_PTOP);
	assert_int_equal(r.bytes, 4096);
	assert_int_equal(r.src_mem, KPT_MEM_DEVICE);
	assert_int_equal(r.dst_mem, KPT_MEM_DEVICE);
	assert_int_equal(r.stream, 7);
	assert_int_equal(r.correlation, 8);
	assert_int_equal(r.graph, 2);
	assert_int_equal(r.graph_node, 3);
}

static void test_memset_fields(void **state)
{
	CUpti_ActivityMemset4 m;
	struct kpt_memop r;

	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = 0xab;
	m.bytes = 65536;
	m.start = 100;
	m.end = 300;
	m.streamId = 21;
	m.correlationId = 77;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.graphId = 4;
	m.graphNodeId = 12;
	kpt_cupti_memset(&m, &ids, &r);
	assert_int_equal(r.kind, KPT_MEMSET);
	assert_int_equal(r.value, 0xab);
	assert_int_equal(r.bytes, 65536);
	assert_int_equal(r.start_ns, 100);
	assert_int_equal(r.end_ns, 300);
	assert_int_equal(r.src_mem, KPT_MEM_UNKNOWN);
	assert_int_equal(r.dst_mem, KPT_MEM_DEVICE);
	assert_int_equal(r.stream, 21);
	assert_int_equal(r.correlation, 77);
	assert_int_equal(r.graph, 4);
	assert_int_equal(r.graph_node, 12);
	assert_int_equal(r.device, 1);
}

static void test_sync_fields(void **state)
{
	CUpti_ActivitySynchronization2 s;
	struct kpt_event r;

	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 40;
	s.end = 90;
	s.correlationId = 31;
	s.contextId = 1;
	s.streamId = 16;
	kpt_cupti_sync(&s, &ids, &r);
	assert_int_equal(r.kind, KPT_EVENT_SYNC);
	assert_int_equal(r.sub, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE);
	assert_int_equal(r.start_ns, 40);
	assert_int_equal(r.end_ns, 90);
	assert_int_equal(r.stream, 16);
	assert_int_equal(r.device, 1);
	assert_int_equal(r.correlation, 31);
	assert_int_equal(r.name, 42);
	assert_int_equal(r.thread, 4242);
}

static void test_context_sync_has_no_stream(void **state)
{
	CUpti_ActivitySynchronization2 s;
	struct kpt_event r;

	memset(&s, 0, sizeof s);
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	kpt_cupti_sync(&s, &ids, &r);
	assert_int_equal(r.stream, KPT_NONE);
	assert_int_equal(r.sub, CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE);
}

static void test_api_fields(void **state)
{
	CUpti_ActivityAPI a;
	struct kpt_event r;

	memset(&a, 0, sizeof a);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = 211;
	a.start = 7;
	a.end = 11;
	a.processId = 1234;
	a.threadId = 5678;
	a.correlationId = 99;
	kpt_cupti_api(&a, KPT_EVENT_RUNTIME, &ids, &r);
	assert_int_equal(r.kind, KPT_EVENT_RUNTIME);
	assert_int_equal(r.sub, 211);
	assert_int_equal(r.start_ns, 7);
	assert_int_equal(r.end_ns, 11);
	assert_int_equal(r.thread, 5678);
	assert_int_equal(r.correlation, 99);
	assert_int_equal(r.device, KPT_NONE);
	assert_int_equal(r.stream, KPT_NONE);
	assert_int_equal(r.name, 42);
	assert_int_equal(r.process, 3);
}

static void test_output_pattern_expands_pid_rank_percent(void **state)
{
	char out[64];

	assert_int_equal(kpt_inject_expand("run-%p-%r.kpt", 321, 4, out, sizeof out), 13);
	assert_string_equal(out, "run-321-4.kpt");
	assert_true(kpt_inject_expand("a%%b", 1, 0xFFFFFFFFu, out, sizeof out) > 0);
	assert_string_equal(out, "a%b");
	assert_true(kpt_inject_expand("r%r", 1, 0xFFFFFFFFu, out, sizeof out) > 0);
	assert_string_equal(out, "r0");
}

static void test_output_pattern_rejects_unknown_escape_and_overflow(void **state)
{
	char out[8];

	assert_int_equal(kpt_inject_expand("x%q", 1, 0, out, sizeof out), -1);
	assert_int_equal(kpt_inject_expand("abcdefgh", 1, 0, out, sizeof out), -1);
	assert_int_equal(kpt_inject_expand("%p%p%p", 123456, 0, out, sizeof out), -1);
}

static void test_rank_from_environment_in_order(void **state)
{
	unsetenv("RANK");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("SLURM_PROCID");
	assert_int_equal(kpt_inject_rank(), 0xFFFFFFFFu);
	setenv("SLURM_PROCID", "9", 1);
	assert_int_equal(kpt_inject_rank(), 9);
	setenv("OMPI_COMM_WORLD_RANK", "5", 1);
	assert_int_equal(kpt_inject_rank(), 5);
	setenv("RANK", "x", 1);
	assert_int_equal(kpt_inject_rank(), 5);
	setenv("RANK", "2", 1);
	assert_int_equal(kpt_inject_rank(), 2);
	unsetenv("RANK");
	unsetenv("OMPI_COMM_WORLD_RANK");
	unsetenv("SLURM_PROCID");
}

static void test_work_apis_are_launches_copies_and_sets(void **state)
{
	static const char *const yes[] = {
		"cudaLaunchKernel_v7000", "__cudaLaunchKernel_v13000", "cudaLaunchKernelExC_ptsz_v11060",
		"cudaGraphLaunch_v10000", "cudaMemcpyAsync_v3020", "cudaMemset2DAsync_v3020",
		"cuLaunchKernel", "cuLaunchKernelEx_ptsz", "cuGraphLaunch", "cuMemcpyHtoDAsync_v2", "cuMemsetD8_v2",
	};
	static const char *const no[] = {
		"cudaGetDevice_v3020", "cudaStreamIsCapturing_v10000", "cudaEventRecord_v3020",
		"cudaStreamSynchronize_v3020", "cudaMalloc_v3020", "cuCtxSynchronize", "cuStreamWaitEvent", "",
	};

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
		assert_true(kpt_inject_is_work_api(yes[i]));
	for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
		assert_false(kpt_inject_is_work_api(no[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel_fields),
		cmocka_unit_test(test_kernel_graph_node_ids),
		cmocka_unit_test(test_kernel_node_id_ignored_without_graph),
		cmocka_unit_test(test_kernel_negative_dims_stored_as_zero),
		cmocka_unit_test(test_memcpy_fields),
		cmocka_unit_test(test_memcpy_kind_table),
		cmocka_unit_test(test_mem_kind_table),
		cmocka_unit_test(test_memcpy_p2p_fields),
		cmocka_unit_test(test_memset_fields),
		cmocka_unit_test(test_sync_fields),
		cmocka_unit_test(test_context_sync_has_no_stream),
		cmocka_unit_test(test_api_fields),
		cmocka_unit_test(test_output_pattern_expands_pid_rank_percent),
		cmocka_unit_test(test_output_pattern_rejects_unknown_escape_and_overflow),
		cmocka_unit_test(test_rank_from_environment_in_order),
		cmocka_unit_test(test_work_apis_are_launches_copies_and_sets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
