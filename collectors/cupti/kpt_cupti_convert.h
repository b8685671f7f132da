/* kpt_cupti_convert.h - CUPTI activity records -> kpt rows.
 *
 * Pure functions: no CUPTI call, no allocation, no global state, so the unit
 * test (tests/unit/test_cupti_convert.c) can fill real cupti_activity.h
 * structs and check every field. What a record cannot say by itself (the
 * file's device index for a CUDA ordinal, the interned name, the innermost
 * NVTX range of the launch) the caller resolves and passes in struct
 * kpt_cupti_ids.
 *
 * Record versions are the ones CUDA 13 hands out: Kernel10, Memcpy6,
 * MemcpyPtoP4, Memset4, Synchronization2, API.
 */
#ifndef KPT_CUPTI_CONVERT_H
#define KPT_CUPTI_CONVERT_H

#include <stdint.h>

#include <cupti_activity.h>

#include "kpt_model.h"

struct kpt_cupti_ids {
	uint32_t process;           /* process index in the file */
	uint32_t device;            /* file device index, KPT_NONE when unknown */
	uint32_t name;              /* string id (kernel name, API name), KPT_NONE */
	uint32_t range;             /* innermost NVTX range of the launch, KPT_NONE */
	uint64_t thread;            /* OS thread id (events) */
};

/* enum kpt_memop_kind for a CUpti_ActivityMemcpyKind; KPT_MEMCPY_OTHER for
 * array copies and values this table does not know. */
uint32_t kpt_cupti_memcpy_kind(uint32_t cupti_copy_kind);
/* enum kpt_mem_kind for a CUpti_ActivityMemoryKind (static device and
 * managed memory fold into device and managed); KPT_MEM_UNKNOWN otherwise. */
uint32_t kpt_cupti_mem_kind(uint32_t cupti_mem_kind);

/* CUPTI writes graphId 0 and graphNodeId 0 for work not launched by a graph;
 * kpt stores KPT_NONE and 0. Negative grid/block/shared values (never seen,
 * but the fields are signed) are stored as 0. */
void kpt_cupti_kernel(const CUpti_ActivityKernel10 *k, const struct kpt_cupti_ids *ids,
		      struct kpt_kernel *out);
void kpt_cupti_memcpy(const CUpti_ActivityMemcpy6 *m, const struct kpt_cupti_ids *ids,
		      struct kpt_memop *out);
/* Peer copies: kind KPT_MEMCPY_PTOP, device is the source device. */
void kpt_cupti_memcpy_p2p(const CUpti_ActivityMemcpyPtoP4 *m, const struct kpt_cupti_ids *ids,
			  struct kpt_memop *out);
void kpt_cupti_memset(const CUpti_ActivityMemset4 *m, const struct kpt_cupti_ids *ids,
		      struct kpt_memop *out);
/* KPT_EVENT_SYNC, sub = CUpti_ActivitySynchronizationType; the stream is
 * KPT_NONE for context synchronization (CUPTI's invalid value). */
void kpt_cupti_sync(const CUpti_ActivitySynchronization2 *s, const struct kpt_cupti_ids *ids,
		    struct kpt_event *out);
/* RUNTIME or DRIVER API call (kind says which); sub = callback id. The
 * record's own threadId is used (the collector asks CUPTI for system tids). */
void kpt_cupti_api(const CUpti_ActivityAPI *a, uint32_t kind, const struct kpt_cupti_ids *ids,
		   struct kpt_event *out);

#endif
