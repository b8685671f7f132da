/* kpt_floor_inject.c - libkptfloor.so: the raw-CUPTI floor for any program.
 *
 * Loaded like the collector (CUDA_INJECTION64_PATH), it enables the CUPTI
 * activity kinds named by KPT_FLOOR_KINDS (the words of KPT_ACTIVITY_KINDS:
 * kernel, memcpy, memset, sync; default all four, the collector's default)
 * and nothing else: buffers from malloc, records counted and freed, no NVTX,
 * no NVML, no file. What any tracer with those kinds must pay; the
 * collector's overhead is compared with it (scripts/gpu/overhead.sh).
 * A benchmark tool: it prints one line to stderr at exit. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cupti.h>

#include "kpt_inject.h"

static _Atomic unsigned long long g_records;
static int g_ok;

static void CUPTIAPI floor_request(uint8_t **buf, size_t *size, size_t *max)
{
	*size = 8u << 20;
	*buf = aligned_alloc(8, *size);
	*max = 0;
}

static void CUPTIAPI floor_complete(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size, size_t valid)
{
	CUpti_Activity *r = NULL;
	unsigned long long n = 0;

	(void)ctx, (void)stream, (void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &r) == CUPTI_SUCCESS)
		n++;
	atomic_fetch_add(&g_records, n);
	free(buf);
}

static void floor_exit(void)
{
	if (g_ok)
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "kpt-floor: %s, %llu records\n", g_ok ? "enabled" : "FAILED", atomic_load(&g_records));
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	static const CUpti_ActivityKind kinds[] = { /* kpt_inject_kinds() bit order */
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
		CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
	};
	const char *s = getenv("KPT_FLOOR_KINDS"), *bad = NULL;
	int badlen = 0, mask = s ? kpt_inject_kinds(s, &bad, &badlen) : KPT_KINDS_ALL;
	static int once;

	if (once++)
		return 1;
	atexit(floor_exit);
	if (mask < 0) {
		fprintf(stderr, "kpt-floor: unknown kind '%.*s' in KPT_FLOOR_KINDS\n", badlen, bad);
		return 1;
	}
	if (cuptiActivityRegisterCallbacks(floor_request, floor_complete) != CUPTI_SUCCESS)
		return 1;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if ((mask & 1 << i) && cuptiActivityEnable(kinds[i]) != CUPTI_SUCCESS)
			return 1;
	g_ok = 1;
	return 1;
}
