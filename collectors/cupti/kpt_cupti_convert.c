/* kpt_cupti_convert.c - CUPTI activity records -> kpt rows (see the header). */
#include "kpt_cupti_convert.h"

#include <string.h>

static const uint8_t memcpy_kinds[] = {
	[CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN] = KPT_MEMCPY_OTHER,
	[CUPTI_ACTIVITY_MEMCPY_KIND_HTOD] = KPT_MEMCPY_HTOD,
	[CUPTI_ACTIVITY_MEMCPY_KIND_DTOH] = KPT_MEMCPY_DTOH,
	[CUPTI_ACTIVITY_MEMCPY_KIND_HTOA] = KPT_MEMCPY_OTHER,
	[CUPTI_ACTIVITY_MEMCPY_KIND_ATOH] = KPT_MEMCPY_OTHER,
	[CUPTI_ACTIVITY_MEMCPY_KIND_ATOA] = KPT_MEMCPY_OTHER,
	[CUPTI_ACTIVITY_MEMCPY_KIND_ATOD] = KPT_MEMCPY_OTHER,
	[CUPTI_ACTIVITY_MEMCPY_KIND_DTOA] = KPT_MEMCPY_OTHER,
	[CUPTI_ACTIVITY_MEMCPY_KIND_DTOD] = KPT_MEMCPY_DTOD,
	[CUPTI_ACTIVITY_MEMCPY_KIND_HTOH] = KPT_MEMCPY_HTOH,
	[CUPTI_ACTIVITY_MEMCPY_KIND_PTOP] = KPT_MEMCPY_PTOP,
};

static const uint8_t mem_kinds[] = {
	[CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN] = KPT_MEM_UNKNOWN,
	[CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE] = KPT_MEM_PAGEABLE,
	[CUPTI_ACTIVITY_MEMORY_KIND_PINNED] = KPT_MEM_PINNED,
	[CUPTI_ACTIVITY_MEMORY_KIND_DEVICE] = KPT_MEM_DEVICE,
	[CUPTI_ACTIVITY_MEMORY_KIND_ARRAY] = KPT_MEM_ARRAY,
	[CUPTI_ACTIVITY_MEMORY_KIND_MANAGED] = KPT_MEM_MANAGED,
	[CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC] = KPT_MEM_DEVICE,
	[CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC] = KPT_MEM_MANAGED,
};

uint32_t kpt_cupti_memcpy_kind(uint32_t k)
{
	if (k >= sizeof memcpy_kinds / sizeof memcpy_kinds[0])
		return KPT_MEMCPY_OTHER;
	return memcpy_kinds[k];
}

uint32_t kpt_cupti_mem_kind(uint32_t k)
{
	if (k >= sizeof mem_kinds / sizeof mem_kinds[0])
		return KPT_MEM_UNKNOWN;
	return mem_kinds[k];
}

static uint32_t nonneg(int32_t v)
{
	return v < 0 ? 0 : (uint32_t)v;
}

static uint32_t graph_id(uint32_t g)
{
	return g == 0 ? KPT_NONE : g;
}

void kpt_cupti_kernel(const CUpti_ActivityKernel10 *k, const struct kpt_cupti_ids *ids,
		      struct kpt_kernel *out)
{
	memset(out, 0, sizeof *out);
	out->start_ns = k->start;
	out->end_ns = k->end;
	out->name = ids->name;
	out->device = ids->device;
	out->stream = k->streamId;
	out->process = ids->process;
	out->grid[0] = nonneg(k->gridX);
	out->grid[1] = nonneg(k->gridY);
	out->grid[2] = nonneg(k->gridZ);
	out->block[0] = nonneg(k->blockX);
	out->block[1] = nonneg(k->blockY);
	out->block[2] = nonneg(k->blockZ);
	out->registers = k->registersPerThread;
	out->shared_static = nonneg(k->staticSharedMemory);
	out->shared_dynamic = nonneg(k->dynamicSharedMemory);
	out->correlation = k->correlationId;
	out->range = ids->range;
	out->graph = graph_id(k->graphId);
	out->graph_node = k->graphId ? k->graphNodeId : 0;
}

/* Fields every copy and set record has, under the same CUPTI names. */
#define KPT_MEMOP_COMMON(out, m, ids)                                            \
	do {                                                                     \
		memset((out), 0, sizeof *(out));                                 \
		(out)->start_ns = (m)->start;                                    \
		(out)->end_ns = (m)->end;                                        \
		(out)->bytes = (m)->bytes;                                       \
		(out)->device = (ids)->device;                                   \
		(out)->stream = (m)->streamId;                                   \
		(out)->process = (ids)->process;                                 \
		(out)->correlation = (m)->correlationId;                         \
		(out)->range = (ids)->range;                                     \
		(out)->graph = graph_id((m)->graphId);                           \
		(out)->graph_node = (m)->graphId ? (m)->graphNodeId : 0;         \
	} while (0)

void kpt_cupti_memcpy(const CUpti_ActivityMemcpy6 *m, const struct kpt_cupti_ids *ids,
		      struct kpt_memop *out)
{
	KPT_MEMOP_COMMON(out, m, ids);
	out->kind = kpt_cupti_memcpy_kind(m->copyKind);
	out->src_mem = kpt_cupti_mem_kind(m->srcKind);
	out->dst_mem = kpt_cupti_mem_kind(m->dstKind);
}

void kpt_cupti_memcpy_p2p(const CUpti_ActivityMemcpyPtoP4 *m, const struct kpt_cupti_ids *ids,
			  struct kpt_memop *out)
{
	KPT_MEMOP_COMMON(out, m, ids);
	out->kind = KPT_MEMCPY_PTOP;
	out->src_mem = kpt_cupti_mem_kind(m->srcKind);
	out->dst_mem = kpt_cupti_mem_kind(m->dstKind);
}

void kpt_cupti_memset(const CUpti_ActivityMemset4 *m, const struct kpt_cupti_ids *ids,
		      struct kpt_memop *out)
{
	KPT_MEMOP_COMMON(out, m, ids);
	out->kind = KPT_MEMSET;
	out->src_mem = KPT_MEM_UNKNOWN;
	out->dst_mem = kpt_cupti_mem_kind(m->memoryKind);
	out->value = m->value;
}

void kpt_cupti_sync(const CUpti_ActivitySynchronization2 *s, const struct kpt_cupti_ids *ids,
		    struct kpt_event *out)
{
	memset(out, 0, sizeof *out);
	out->start_ns = s->start;
	out->end_ns = s->end;
	out->kind = KPT_EVENT_SYNC;
	out->sub = (uint32_t)s->type;
	out->name = ids->name;
	out->process = ids->process;
	out->device = ids->device;
	out->stream = s->streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? KPT_NONE : s->streamId;
	out->correlation = s->correlationId;
	out->thread = ids->thread;
}

void kpt_cupti_api(const CUpti_ActivityAPI *a, uint32_t kind, const struct kpt_cupti_ids *ids,
		   struct kpt_event *out)
{
	memset(out, 0, sizeof *out);
	out->start_ns = a->start;
	out->end_ns = a->end;
	out->kind = kind;
	out->sub = (uint32_t)a->cbid;
	out->name = ids->name;
	out->process = ids->process;
	out->device = KPT_NONE;
	out->stream = KPT_NONE;
	out->correlation = a->correlationId;
	out->thread = a->threadId;
}
