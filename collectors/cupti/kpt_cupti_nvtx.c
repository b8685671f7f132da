/* kpt_cupti_nvtx.c - NVTX through CUPTI: the NVTX callback domain's
 * events into the core's range logs (kpt_core_range_*), the NVTX
 * injection entry points (NVTX_INJECTION64_PATH names this library) and the
 * payload extension CUPTI does not report.
 */
#define _GNU_SOURCE
#include "kpt_cupti_backend.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <generated_nvtx_meta.h>

/* The message of a push/start/mark: an owned copy, NULL without one. A
 * registered string is looked up in the event's domain (0: default). */
static char *attr_message(const nvtxEventAttributes_t *a, uint64_t domain)
{
	const char *s;

	if (!a)
		return NULL;
	switch (a->messageType) {
	case NVTX_MESSAGE_TYPE_ASCII:
		return a->message.ascii ? strdup(a->message.ascii) : NULL;
	case NVTX_MESSAGE_TYPE_REGISTERED:
		s = kpt_nvtx_handles_get(&kpt_g.strings, domain, (uint64_t)(uintptr_t)a->message.registered, 0);
		return s ? strdup(s) : strdup("(registered string)");
	case NVTX_MESSAGE_TYPE_UNICODE:
		return strdup("(wide string)");
	default:
		return strdup("");
	}
}

static uint64_t dom_key(nvtxDomainHandle_t h)
{
	return (uint64_t)(uintptr_t)h;
}

static char *msg_copy(const char *m)
{
	return strdup(m ? m : "");
}

void kpt_cupti_nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *nd)
{
	const void *p = nd->functionParams;
	const void *ret = nd->functionReturnValue;

	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		kpt_core_range_push(msg_copy(((const nvtxRangePushA_params *)p)->message), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushW:
		kpt_core_range_push(strdup("(wide string)"), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		kpt_core_range_push(attr_message(((const nvtxRangePushEx_params *)p)->eventAttrib, 0), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
		const nvtxDomainRangePushEx_params *q = p;

		kpt_core_range_push(attr_message(q->core.eventAttrib, dom_key(q->domain)), dom_key(q->domain));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePop:
		kpt_core_range_pop(0);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		kpt_core_range_pop(dom_key(((const nvtxDomainRangePop_params *)p)->domain));
		break;
	case CUPTI_CBID_NVTX_nvtxMarkA:
		kpt_core_range_mark(msg_copy(((const nvtxMarkA_params *)p)->message), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxMarkW:
		kpt_core_range_mark(strdup("(wide string)"), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxMarkEx:
		kpt_core_range_mark(attr_message(((const nvtxMarkEx_params *)p)->eventAttrib, 0), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
		const nvtxDomainMarkEx_params *q = p;

		kpt_core_range_mark(attr_message(q->core.eventAttrib, dom_key(q->domain)), dom_key(q->domain));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
		kpt_core_range_start(msg_copy(((const nvtxRangeStartA_params *)p)->message), 0, ret);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartW:
		kpt_core_range_start(strdup("(wide string)"), 0, ret);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		kpt_core_range_start(attr_message(((const nvtxRangeStartEx_params *)p)->eventAttrib, 0), 0, ret);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
		const nvtxDomainRangeStartEx_params *q = p;

		kpt_core_range_start(attr_message(q->core.eventAttrib, dom_key(q->domain)), dom_key(q->domain), ret);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangeEnd:
		kpt_core_range_end(0, ((const nvtxRangeEnd_params *)p)->id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
		const nvtxDomainRangeEnd_params *q = p;

		kpt_core_range_end(dom_key(q->domain), q->core.id);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainCreateA:
		if (ret)
			kpt_nvtx_handles_put(&kpt_g.domains, 0, dom_key(*(const nvtxDomainHandle_t *)ret),
					     kpt_core_strdup(((const nvtxDomainCreateA_params *)p)->name));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainCreateW:
		if (ret)
			kpt_nvtx_handles_put(&kpt_g.domains, 0, dom_key(*(const nvtxDomainHandle_t *)ret),
					     kpt_core_strdup("(wide string)"));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
		const nvtxDomainRegisterStringA_params *q = p;

		if (ret)
			kpt_nvtx_handles_put(&kpt_g.strings, dom_key(q->domain),
					     (uint64_t)(uintptr_t)*(const nvtxStringHandle_t *)ret, kpt_core_strdup(q->string));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW: {
		const nvtxDomainRegisterStringW_params *q = p;

		if (ret)
			kpt_nvtx_handles_put(&kpt_g.strings, dom_key(q->domain),
					     (uint64_t)(uintptr_t)*(const nvtxStringHandle_t *)ret, kpt_core_strdup("(wide string)"));
		break;
	}
	default:
		break;
	}
}

KPT_EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));

/* NVTX_INJECTION64_PATH names this library (not libcupti.so) so that NVTX
 * reaches the very libcupti instance we subscribed with (a process may load
 * a second copy, e.g. PyTorch's), and so that ranges pushed before the
 * first CUDA call are seen: collection starts here when NVTX initialises
 * first, and cuInit's later InitializeInjection() call is a no-op. CUPTI
 * then fills NVTX's function table as if it had been named directly. */
/* The libcupti instance we subscribed with: its entry point `name`, NULL
 * when absent. */
static void *cupti_entry(const char *name)
{
	Dl_info info;
	void *h;

	if (!dladdr((void *)cuptiSubscribe, &info) || !info.dli_fname)
		return NULL;
	if (!(h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD)))
		return NULL;
	return dlsym(h, name);
}

int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t))
{
	int (*cupti_nvtx)(const void *(*)(uint32_t));

	InitializeInjection();
	*(void **)&cupti_nvtx = cupti_entry("InitializeInjectionNvtx2");
	return cupti_nvtx ? cupti_nvtx(get_export_table) : 0;
}

/* ---- NVTX extensions ------------------------------------------------------ */

/* The NVTX extension ABI (nvtx3/nvtxDetail/nvtxExtTypes.h and the payload
 * extension's ids in nvtx3/nvToolsExtPayload.h), restated: that header,
 * included after nvToolsExt.h's implementation, declares every payload
 * function static. NVTX hands each extension module's function slots to
 * InitializeInjectionNvtxExtension; a slot the tool leaves empty is a
 * no-op, and CUPTI's callback API has no ids for extension functions. */
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
	KPT_NVTX_EXT_DISABLED = 1,  /* NVTX_EXTENSION_DISABLED */
	KPT_NVTX_PAYLOAD_MODULE = 2, /* NVTX_EXT_PAYLOAD_MODULEID */
	KPT_NVTX_PUSH_PAYLOAD = 3,  /* NVTX3EXT_CBID_nvtxRangePushPayload */
	KPT_NVTX_POP_PAYLOAD = 4,   /* NVTX3EXT_CBID_nvtxRangePopPayload */
};

/* nvtxRangePushPayload / nvtxRangePopPayload. NCCL >= 2.25 pushes its
 * communicator ranges (ncclCommInitRankConfig, ...) with
 * nvtxDomainRangePushEx, which CUPTI reports, and pops them with
 * nvtxRangePopPayload, which it does not: the pop is taken here, or the
 * range stayed open for the rest of the run. The payload (a schema'd
 * struct) is not decoded: a payload push is named "(payload range)". */
static int nvtx_push_payload(nvtxDomainHandle_t dom, const void *payload, size_t count)
{
	(void)payload;
	(void)count;
	/* after a detach NVTX's other calls no longer reach us: neither do these */
	if (kpt_g.enabled && !kpt_core_gone())
		kpt_core_range_push(strdup("(payload range)"), dom_key(dom));
	return kpt_tls_log ? (int)kpt_tls_log->st.depth : 0;
}

static int nvtx_pop_payload(nvtxDomainHandle_t dom, const void *payload, size_t count)
{
	(void)payload;
	(void)count;
	if (kpt_g.enabled && !kpt_core_gone())
		kpt_core_range_pop(dom_key(dom));
	return kpt_tls_log ? (int)kpt_tls_log->st.depth : 0;
}

KPT_EXPORT int InitializeInjectionNvtxExtension(struct kpt_nvtx_ext_module *m);

/* Called once per extension module of each NVTX instance (a program may
 * hold several: its own, NCCL's, PyTorch's). CUPTI fills what it handles;
 * then the payload module's push/pop slots are taken over (not chained:
 * were CUPTI to report them as NVTX callbacks too, they would count twice). */
int InitializeInjectionNvtxExtension(struct kpt_nvtx_ext_module *m)
{
	int (*cupti_ext)(struct kpt_nvtx_ext_module *);
	struct kpt_nvtx_ext_segment *seg;
	int ok = 0;

	InitializeInjection();
	*(void **)&cupti_ext = cupti_entry("InitializeInjectionNvtxExtension");
	if (cupti_ext)
		ok = cupti_ext(m);
	if (!m || m->module_id != KPT_NVTX_PAYLOAD_MODULE || m->nsegments < 1 || !m->segments)
		return ok;
	seg = &m->segments[0];
	if (!seg->slots || seg->nslots <= KPT_NVTX_POP_PAYLOAD)
		return ok;
	/* CUPTI refused the module: what it may have set is not to be called */
	if (!ok)
		for (size_t i = 0; i < seg->nslots; i++)
			seg->slots[i] = KPT_NVTX_EXT_DISABLED;
	seg->slots[KPT_NVTX_PUSH_PAYLOAD] = (intptr_t)nvtx_push_payload;
	seg->slots[KPT_NVTX_POP_PAYLOAD] = (intptr_t)nvtx_pop_payload;
	atomic_store(&kpt_g.nvtx_payload, 1);
	return 1;
}
