/* kpt_nvtx_inject.c - the collector's own NVTX tool: NVTX_INJECTION64_PATH
 * names libkptinject.so, whose InitializeInjectionNvtx2 fills NVTX's
 * function tables with the handlers below, which feed the core's range
 * logs (kpt_core_range_*). No vendor tracing API is between the program's
 * NVTX calls and the core, so ranges keep reaching kptprof while the
 * backend is detached (issue 37: CUPTI detached between capture windows).
 * Backend-neutral: no CUPTI or CUDA header. The payload extension's
 * push/pop (InitializeInjectionNvtxExtension) is here too.
 *
 * A program may hold several NVTX instances (its own, NCCL's, PyTorch's),
 * each with its own tables: each calls InitializeInjectionNvtx2 and gets
 * the same handlers. Handles (domains, registered strings, start/end
 * range ids) come from process-wide counters, so they are unique across
 * instances too.
 */
#define _GNU_SOURCE
#include "kpt_inject_core.h"

#include <stdlib.h>
#include <string.h>
#include <wchar.h>

/* ---- the NVTX ABI, restated ------------------------------------------------
 * From the CUDA toolkit's nvtx3 (nvToolsExt.h, nvtxDetail/nvtxTypes.h,
 * nvtxImpl.h): restated so that the core builds without a CUDA toolkit.
 * tests/unit/test_nvtx_inject.c checks every id against the real header. */

enum { KPT_NVTX_ETID_CALLBACKS = 1 };                  /* NVTX_ETID_CALLBACKS */
enum { KPT_NVTX_MODULE_CORE = 1, KPT_NVTX_MODULE_CORE2 = 5 }; /* NVTX_CB_MODULE_* */

enum { /* NVTX_CBID_CORE_* */
	KPT_NVTX_CORE_MarkEx = 1, KPT_NVTX_CORE_MarkA = 2, KPT_NVTX_CORE_MarkW = 3,
	KPT_NVTX_CORE_RangeStartEx = 4, KPT_NVTX_CORE_RangeStartA = 5, KPT_NVTX_CORE_RangeStartW = 6,
	KPT_NVTX_CORE_RangeEnd = 7,
	KPT_NVTX_CORE_RangePushEx = 8, KPT_NVTX_CORE_RangePushA = 9, KPT_NVTX_CORE_RangePushW = 10,
	KPT_NVTX_CORE_RangePop = 11,
};

enum { /* NVTX_CBID_CORE2_* */
	KPT_NVTX_CORE2_DomainMarkEx = 1, KPT_NVTX_CORE2_DomainRangeStartEx = 2,
	KPT_NVTX_CORE2_DomainRangeEnd = 3, KPT_NVTX_CORE2_DomainRangePushEx = 4,
	KPT_NVTX_CORE2_DomainRangePop = 5,
	KPT_NVTX_CORE2_DomainRegisterStringA = 10, KPT_NVTX_CORE2_DomainRegisterStringW = 11,
	KPT_NVTX_CORE2_DomainCreateA = 12, KPT_NVTX_CORE2_DomainCreateW = 13,
	KPT_NVTX_CORE2_DomainDestroy = 14, KPT_NVTX_CORE2_Initialize = 15,
};

enum { /* nvtxMessageType_t */
	KPT_NVTX_MSG_ASCII = 1, KPT_NVTX_MSG_UNICODE = 2, KPT_NVTX_MSG_REGISTERED = 3,
};

/* nvtxEventAttributes_v2 */
struct kpt_nvtx_attr {
	uint16_t version, size;
	uint32_t category;
	int32_t color_type;
	uint32_t color;
	int32_t payload_type, reserved0;
	uint64_t payload;
	int32_t message_type;
	union {
		const char *ascii;
		const wchar_t *unicode;
		const void *registered;
	} message;
};
_Static_assert(sizeof(struct kpt_nvtx_attr) == 48, "NVTX nvtxEventAttributes_v2 layout");
_Static_assert(offsetof(struct kpt_nvtx_attr, message) == 40, "NVTX nvtxEventAttributes_v2 layout");

/* NvtxFunctionPointer: what a table slot points at (NVTX casts it back) */
typedef void (*kpt_nvtx_fn)(void);

/* NvtxExportTableCallbacks. A module's table is an array of pointers to
 * NVTX's function pointers, indexed by the module's ids (0 unused), *size
 * entries. */
struct kpt_nvtx_callbacks {
	size_t struct_size;
	int (*module_table)(uint32_t module, kpt_nvtx_fn ***table, unsigned *size);
};

/* ---- handlers ----------------------------------------------------------------- */

/* Whether an NVTX event goes to the core now: collecting, and the backend
 * neither detaching nor gone, except in a sampled run (--sample-every,
 * --on-demand), whose windows need the steps while the backend is
 * detached (the core makes no backend call then). The one place that
 * decides it. */
static inline int nvtx_live(void)
{
	return kpt_g.enabled && (kpt_g.sampled || !kpt_core_gone());
}

/* Handles NVTX hands out for this process: domains and registered strings
 * (one counter: never 0, never reused) and start/end range ids. */
static _Atomic uint64_t next_handle = 1, next_range_id = 1;

static uint64_t dom_key(const void *h)
{
	return (uint64_t)(uintptr_t)h;
}

static char *msg_copy(const char *m)
{
	return strdup(m ? m : "");
}

/* The message of a push/start/mark: an owned copy, NULL without one. A
 * registered string is looked up in the event's domain (0: default). */
static char *attr_message(const struct kpt_nvtx_attr *a, uint64_t domain)
{
	const char *s;

	if (!a)
		return NULL;
	switch (a->message_type) {
	case KPT_NVTX_MSG_ASCII:
		return a->message.ascii ? strdup(a->message.ascii) : NULL;
	case KPT_NVTX_MSG_REGISTERED:
		s = kpt_nvtx_handles_get(&kpt_g.strings, domain, dom_key(a->message.registered), 0);
		return s ? strdup(s) : strdup("(registered string)");
	case KPT_NVTX_MSG_UNICODE:
		return strdup("(wide string)");
	default:
		return strdup("");
	}
}

/* nvtxRangePush*'s result: the 0-based level of the range opened (ranges
 * of every domain on this thread count); nvtxRangePop's: the level of the
 * range closed, which is the depth left. */
static int push_level(void)
{
	return kpt_tls_log && kpt_tls_log->st.depth ? (int)kpt_tls_log->st.depth - 1 : 0;
}

static int pop_level(void)
{
	return kpt_tls_log ? (int)kpt_tls_log->st.depth : 0;
}

static int push(char *name, uint64_t dom)
{
	if (!nvtx_live()) {
		free(name);
		return 0;
	}
	kpt_core_range_push(name, dom);
	return push_level();
}

static int pop(uint64_t dom)
{
	if (!nvtx_live())
		return 0;
	kpt_core_range_pop(dom);
	return pop_level();
}

static uint64_t start(char *name, uint64_t dom)
{
	uint64_t id = atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed);

	if (nvtx_live())
		kpt_core_range_start(name, dom, &id);
	else
		free(name);
	return id;
}

static void end(uint64_t dom, uint64_t id)
{
	if (nvtx_live())
		kpt_core_range_end(dom, id);
}

static void mark(char *name, uint64_t dom)
{
	if (nvtx_live())
		kpt_core_range_mark(name, dom);
	else
		free(name);
}

/* The message is copied before nvtx_live() is asked (one place decides):
 * outside collection the helpers above free the copy, a strdup per event
 * for nothing, cheap next to the program's own NVTX call. */
static int range_push_a(const char *m) { return push(msg_copy(m), 0); }
static int range_push_w(const wchar_t *m) { (void)m; return push(strdup("(wide string)"), 0); }
static int range_push_ex(const struct kpt_nvtx_attr *a) { return push(attr_message(a, 0), 0); }
static int range_pop(void) { return pop(0); }
static uint64_t range_start_a(const char *m) { return start(msg_copy(m), 0); }
static uint64_t range_start_w(const wchar_t *m) { (void)m; return start(strdup("(wide string)"), 0); }
static uint64_t range_start_ex(const struct kpt_nvtx_attr *a) { return start(attr_message(a, 0), 0); }
static void range_end(uint64_t id) { end(0, id); }
static void mark_a(const char *m) { mark(msg_copy(m), 0); }
static void mark_w(const wchar_t *m) { (void)m; mark(strdup("(wide string)"), 0); }
static void mark_ex(const struct kpt_nvtx_attr *a) { mark(attr_message(a, 0), 0); }

static int domain_range_push_ex(const void *d, const struct kpt_nvtx_attr *a)
{
	return push(attr_message(a, dom_key(d)), dom_key(d));
}

static int domain_range_pop(const void *d) { return pop(dom_key(d)); }

static uint64_t domain_range_start_ex(const void *d, const struct kpt_nvtx_attr *a)
{
	return start(attr_message(a, dom_key(d)), dom_key(d));
}

static void domain_range_end(const void *d, uint64_t id) { end(dom_key(d), id); }

static void domain_mark_ex(const void *d, const struct kpt_nvtx_attr *a)
{
	mark(attr_message(a, dom_key(d)), dom_key(d));
}

/* A new handle naming name (owned) in table tab under scope. The name is
 * kept even outside collection (nvtx_live): a handle is made once and
 * used for the rest of the run. A full table keeps no name: the handle
 * still works, its ranges are unnamed ("(registered string)") or in an
 * unnamed domain. */
static void *handle_new(struct kpt_nvtx_handles *tab, uint64_t scope, char *name)
{
	uint64_t h = atomic_fetch_add_explicit(&next_handle, 1, memory_order_relaxed);

	if (kpt_nvtx_handles_put(tab, scope, h, name) < 0 && *name)
		free(name);
	return (void *)(uintptr_t)h;
}

static void *domain_create_a(const char *name) { return handle_new(&kpt_g.domains, 0, kpt_core_strdup(name)); }
static void *domain_create_w(const wchar_t *name) { (void)name; return handle_new(&kpt_g.domains, 0, kpt_core_strdup("(wide string)")); }
static void domain_destroy(const void *d) { (void)d; } /* names stay: handles are not reused */

static void *domain_register_string_a(const void *d, const char *s)
{
	return handle_new(&kpt_g.strings, dom_key(d), kpt_core_strdup(s));
}

static void *domain_register_string_w(const void *d, const wchar_t *s)
{
	(void)s;
	return handle_new(&kpt_g.strings, dom_key(d), kpt_core_strdup("(wide string)"));
}

static void initialize(const void *reserved) { (void)reserved; }

/* The slots kptprof fills, by module. The others (the names of categories,
 * threads, CUDA and OpenCL objects, resources, sync) stay as NVTX leaves
 * them after initialisation: no-ops. */
static const struct {
	uint32_t module, id;
	kpt_nvtx_fn fn;
} nvtx_slots[] = {
#define SLOT(mod, id, fn) { KPT_NVTX_MODULE_##mod, KPT_NVTX_##mod##_##id, (kpt_nvtx_fn)(fn) }
	SLOT(CORE, MarkEx, mark_ex),
	SLOT(CORE, MarkA, mark_a),
	SLOT(CORE, MarkW, mark_w),
	SLOT(CORE, RangeStartEx, range_start_ex),
	SLOT(CORE, RangeStartA, range_start_a),
	SLOT(CORE, RangeStartW, range_start_w),
	SLOT(CORE, RangeEnd, range_end),
	SLOT(CORE, RangePushEx, range_push_ex),
	SLOT(CORE, RangePushA, range_push_a),
	SLOT(CORE, RangePushW, range_push_w),
	SLOT(CORE, RangePop, range_pop),
	SLOT(CORE2, DomainMarkEx, domain_mark_ex),
	SLOT(CORE2, DomainRangeStartEx, domain_range_start_ex),
	SLOT(CORE2, DomainRangeEnd, domain_range_end),
	SLOT(CORE2, DomainRangePushEx, domain_range_push_ex),
	SLOT(CORE2, DomainRangePop, domain_range_pop),
	SLOT(CORE2, DomainRegisterStringA, domain_register_string_a),
	SLOT(CORE2, DomainRegisterStringW, domain_register_string_w),
	SLOT(CORE2, DomainCreateA, domain_create_a),
	SLOT(CORE2, DomainCreateW, domain_create_w),
	SLOT(CORE2, DomainDestroy, domain_destroy),
	SLOT(CORE2, Initialize, initialize),
#undef SLOT
};

KPT_EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));

/* Called by each NVTX instance at its first call (NVTX_INJECTION64_PATH
 * names this library). Collection starts here when NVTX initialises
 * before CUDA (cuInit's later InitializeInjection() is then a no-op), so
 * ranges pushed before the first CUDA call are seen. Returns 1 when the
 * tables were filled; 0 makes NVTX turn every call into a no-op. A slot
 * past the module's size or without storage (an older NVTX) is skipped. */
int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
	const struct kpt_nvtx_callbacks *cb;
	kpt_nvtx_fn **table = NULL;
	unsigned size = 0;
	uint32_t module = 0;

	InitializeInjection();
	if (!get_export_table || !(cb = get_export_table(KPT_NVTX_ETID_CALLBACKS)) ||
	    cb->struct_size < offsetof(struct kpt_nvtx_callbacks, module_table) + sizeof cb->module_table ||
	    !cb->module_table)
		return 0;
	for (size_t i = 0; i < sizeof nvtx_slots / sizeof nvtx_slots[0]; i++) {
		if (nvtx_slots[i].module != module) {
			module = nvtx_slots[i].module;
			if (!cb->module_table(module, &table, &size) || !table)
				size = 0;
		}
		if (nvtx_slots[i].id < size && table[nvtx_slots[i].id])
			*table[nvtx_slots[i].id] = nvtx_slots[i].fn;
	}
	return 1;
}

/* ---- NVTX extensions ------------------------------------------------------ */

/* The NVTX extension ABI (nvtx3/nvtxDetail/nvtxExtTypes.h and the payload
 * extension's ids in nvtx3/nvToolsExtPayload.h), restated: that header,
 * included after nvToolsExt.h's implementation, declares every payload
 * function static. NVTX hands each extension module's function slots to
 * InitializeInjectionNvtxExtension; a slot the tool leaves empty is a
 * no-op. */
struct kpt_nvtx_ext_segment {
	size_t id;
	size_t nslots;
	intptr_t *slots;
};

struct kpt_nvtx_ext_module {
	uint16_t nvtx_version, struct_size, module_id, compat_id;
	size_t nsegments;
	struct kpt_nvtx_ext_segment *segments;
	intptr_t (*get_export)(uint32_t);
	const void *ext_info;
};
_Static_assert(sizeof(struct kpt_nvtx_ext_module) == 40, "NVTX nvtxExtModuleInfo_t layout");

enum {
	KPT_NVTX_PAYLOAD_MODULE = 2, /* NVTX_EXT_PAYLOAD_MODULEID */
	KPT_NVTX_PUSH_PAYLOAD = 3,  /* NVTX3EXT_CBID_nvtxRangePushPayload */
	KPT_NVTX_POP_PAYLOAD = 4,   /* NVTX3EXT_CBID_nvtxRangePopPayload */
};

/* nvtxRangePushPayload / nvtxRangePopPayload. NCCL >= 2.25 pushes its
 * communicator ranges (ncclCommInitRankConfig, ...) with
 * nvtxDomainRangePushEx and pops them with nvtxRangePopPayload: without
 * this pop the range stayed open for the rest of the run. The payload (a
 * schema'd struct) is not decoded: a payload push is named "(payload
 * range)". */
static int nvtx_push_payload(const void *dom, const void *payload, size_t count)
{
	(void)payload;
	(void)count;
	return push(strdup("(payload range)"), dom_key(dom));
}

static int nvtx_pop_payload(const void *dom, const void *payload, size_t count)
{
	(void)payload;
	(void)count;
	return pop(dom_key(dom));
}

KPT_EXPORT int InitializeInjectionNvtxExtension(struct kpt_nvtx_ext_module *m);

/* Called once per extension module of each NVTX instance. Only the payload
 * module's push/pop slots are taken; every other module and slot is left
 * empty (a no-op). */
int InitializeInjectionNvtxExtension(struct kpt_nvtx_ext_module *m)
{
	struct kpt_nvtx_ext_segment *seg;

	InitializeInjection();
	if (!m || m->module_id != KPT_NVTX_PAYLOAD_MODULE || m->nsegments < 1 || !m->segments)
		return 1;
	seg = &m->segments[0];
	if (!seg->slots || seg->nslots <= KPT_NVTX_POP_PAYLOAD)
		return 1;
	seg->slots[KPT_NVTX_PUSH_PAYLOAD] = (intptr_t)nvtx_push_payload;
	seg->slots[KPT_NVTX_POP_PAYLOAD] = (intptr_t)nvtx_pop_payload;
	atomic_store(&kpt_g.nvtx_payload, 1);
	return 1;
}
