/* test_nvtx_inject.c - the collector's own NVTX tool
 * (collectors/kpt_nvtx_inject.c) against the real NVTX ABI, without a GPU:
 * this program includes the CUDA toolkit's nvtx3 (header-only) and names
 * InitializeInjectionNvtx2 as its statically linked tool
 * (InitializeInjectionNvtx2_fnptr; NVTX_INJECTION64_PATH unset), so every
 * nvtx* call below goes through the tables kptprof filled, into the
 * core's range logs, which the tests read back. A second NVTX instance is
 * faked with tables laid out as nvtx3's (the ids from the real header).
 * A wrong slot id, a wrong attribute layout or a missing slot fails here.
 *
 * The core (kpt_g) is one per process, under a clock-only backend
 * (nvtx_clock_tool.c): the tests run in order on it. nvtx_dyn_app.c checks
 * the same tool loaded through NVTX_INJECTION64_PATH.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

#include "kpt_inject_core.h"
#include "nvtx_clock_tool.h"

/* NVTX's static tool hooks: this program links the tool in. */
int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table);
int InitializeInjectionNvtxExtension(nvtxExtModuleInfo_t *m);
NvtxInitializeInjectionNvtxFunc_t InitializeInjectionNvtx2_fnptr = InitializeInjectionNvtx2;
NvtxExtInitializeInjectionFunc_t InitializeInjectionNvtxExtension_fnptr = InitializeInjectionNvtxExtension;

/* The newest range record named name (any thread), NULL when none. */
static const struct kpt_range_rec *rec(const char *name)
{
	const struct kpt_range_rec *found = NULL;

	for (struct kpt_thread_log *t = atomic_load(&kpt_g.logs); t; t = t->next)
		for (struct kpt_range_chunk *c = t->head; c; c = c->next)
			for (uint32_t i = 0; i < atomic_load(&c->n); i++)
				if (strcmp(c->recs[i].name, name) == 0 &&
				    (!found || c->recs[i].row.id > found->row.id))
					found = &c->recs[i];
	return found;
}

static size_t nrecs(void)
{
	size_t n = 0;

	for (struct kpt_thread_log *t = atomic_load(&kpt_g.logs); t; t = t->next)
		for (struct kpt_range_chunk *c = t->head; c; c = c->next)
			n += atomic_load(&c->n);
	return n;
}

static nvtxEventAttributes_t attr_ascii(const char *m)
{
	nvtxEventAttributes_t a = { .version = NVTX_VERSION, .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
				    .messageType = NVTX_MESSAGE_TYPE_ASCII };

	a.message.ascii = m;
	return a;
}

/* ---- tests, in order ------------------------------------------------------ */

static void test_first_nvtx_call_starts_collection(void **state)
{
	const struct kpt_range_rec *a;

	(void)state;
	assert_int_equal(kpt_test_nvtx_inits, 0);
	assert_int_equal(nvtxRangePushA("a"), 0);   /* level 0 */
	assert_int_equal(kpt_test_nvtx_inits, 1);                 /* InitializeInjection first */
	a = rec("a");
	assert_non_null(a);
	assert_int_equal(a->row.kind, KPT_RANGE_PUSHPOP);
	assert_null(a->domain);
	assert_int_equal(a->row.end_ns, 0);
	assert_int_equal(nvtxRangePop(), 0);
	assert_int_not_equal(a->row.end_ns, 0);
}

static void test_domain_push_with_registered_string_nests(void **state)
{
	nvtxDomainHandle_t dom, dom2;
	nvtxStringHandle_t s;
	nvtxEventAttributes_t at = attr_ascii(NULL);
	const struct kpt_range_rec *a, *b;

	(void)state;
	dom = nvtxDomainCreateA("NCCL");
	dom2 = nvtxDomainCreateA("other");
	assert_non_null(dom);
	assert_non_null(dom2);
	assert_ptr_not_equal(dom, dom2);
	s = nvtxDomainRegisterStringA(dom, "allreduce");
	assert_non_null(s);
	assert_ptr_not_equal((void *)s, (void *)nvtxDomainRegisterStringA(dom, "allreduce"));

	assert_int_equal(nvtxRangePushA("step"), 0);
	at.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	at.message.registered = s;
	assert_int_equal(nvtxDomainRangePushEx(dom, &at), 1);
	a = rec("step");
	b = rec("allreduce");
	assert_non_null(b);
	assert_string_equal(b->domain, "NCCL");
	assert_int_equal(b->row.parent, a->row.id);
	/* a pop of another domain does not close NCCL's range */
	assert_int_equal(nvtxDomainRangePop(dom2), 2);
	assert_int_equal(b->row.end_ns, 0);
	assert_int_equal(nvtxDomainRangePop(dom), 1);
	assert_int_not_equal(b->row.end_ns, 0);
	assert_int_equal(a->row.end_ns, 0);
	assert_int_equal(nvtxRangePop(), 0);
	assert_int_not_equal(a->row.end_ns, 0);
	/* a string handle is looked up in its own domain only */
	assert_int_equal(nvtxRangePushEx(&at), 0);
	assert_non_null(rec("(registered string)"));
	nvtxRangePop();
}

static void test_messages_of_every_form(void **state)
{
	nvtxEventAttributes_t at = attr_ascii("ex");
	nvtxDomainHandle_t dom = nvtxDomainCreateW(L"wide");

	(void)state;
	nvtxRangePushEx(&at);
	assert_non_null(rec("ex"));
	nvtxRangePop();
	assert_int_not_equal(rec("ex")->row.end_ns, 0);
	nvtxRangePushW(L"w");
	assert_non_null(rec("(wide string)"));
	assert_null(rec("(wide string)")->domain);
	nvtxRangePop();
	nvtxMarkA("m");
	assert_int_equal(rec("m")->row.kind, KPT_RANGE_MARK);
	at.message.ascii = "mx";
	nvtxMarkEx(&at);
	assert_int_equal(rec("mx")->row.kind, KPT_RANGE_MARK);
	at.message.ascii = "dmx";
	nvtxDomainMarkEx(dom, &at);
	assert_int_equal(rec("dmx")->row.kind, KPT_RANGE_MARK);
	assert_string_equal(rec("dmx")->domain, "(wide string)");
	nvtxMarkW(L"mw");
	assert_int_equal(rec("(wide string)")->row.kind, KPT_RANGE_MARK);
}

static nvtxRangeId_t started;

static void *start_on_a_thread(void *arg)
{
	(void)arg;
	started = nvtxRangeStartA("load");
	return NULL;
}

static void test_start_end_across_threads(void **state)
{
	nvtxEventAttributes_t at = attr_ascii("dse");
	nvtxDomainHandle_t dom = nvtxDomainCreateA("io");
	nvtxRangeId_t id, id2;
	pthread_t th;

	(void)state;
	assert_int_equal(pthread_create(&th, NULL, start_on_a_thread, NULL), 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	assert_non_null(rec("load"));
	assert_int_equal(rec("load")->row.kind, KPT_RANGE_STARTEND);
	assert_int_equal(rec("load")->row.end_ns, 0);
	nvtxRangeEnd(started);
	assert_int_not_equal(rec("load")->row.end_ns, 0);

	id = nvtxDomainRangeStartEx(dom, &at);
	at.message.ascii = "se";
	id2 = nvtxRangeStartEx(&at);
	assert_true(id != id2 && id != started && id2 != started);
	assert_string_equal(rec("dse")->domain, "io");
	nvtxDomainRangeEnd(dom, id);
	assert_int_not_equal(rec("dse")->row.end_ns, 0);
	assert_int_equal(rec("se")->row.end_ns, 0);
	nvtxRangeEnd(id2);
	assert_int_not_equal(rec("se")->row.end_ns, 0);
	id = nvtxRangeStartW(L"x");
	assert_int_equal(rec("(wide string)")->row.kind, KPT_RANGE_STARTEND);
	nvtxRangeEnd(id);
}

static void test_payload_push_pop(void **state)
{
	nvtxDomainHandle_t dom = nvtxDomainCreateA("NCCL2");
	const struct kpt_range_rec *r;

	(void)state;
	nvtxRangePushPayload(dom, NULL, 0);
	r = rec("(payload range)");
	assert_non_null(r);
	assert_string_equal(r->domain, "NCCL2");
	assert_int_equal(r->row.end_ns, 0);
	nvtxRangePopPayload(dom, NULL, 0);
	assert_int_not_equal(r->row.end_ns, 0);
	assert_int_equal(atomic_load(&kpt_g.nvtx_payload), 1);
}

/* ---- a second NVTX instance, faked ----------------------------------------- */

static NvtxFunctionPointer core_fn[NVTX_CBID_CORE_SIZE], core2_fn[NVTX_CBID_CORE2_SIZE];
static NvtxFunctionPointer *core_tab[NVTX_CBID_CORE_SIZE + 1], *core2_tab[NVTX_CBID_CORE2_SIZE + 1];
static unsigned asked;                  /* modules asked for, bits */

static int fake_module_table(NvtxCallbackModule m, NvtxFunctionTable *out, unsigned *size)
{
	asked |= 1u << m;
	if (m == NVTX_CB_MODULE_CORE) {
		*out = core_tab;
		*size = NVTX_CBID_CORE_SIZE;
	} else if (m == NVTX_CB_MODULE_CORE2) {
		*out = core2_tab;
		*size = NVTX_CBID_CORE2_SIZE;
	} else {
		return 0;
	}
	return 1;
}

static const NvtxExportTableCallbacks fake_callbacks = { sizeof fake_callbacks, fake_module_table };

static const void *fake_export_table(uint32_t id)
{
	return id == NVTX_ETID_CALLBACKS ? &fake_callbacks : NULL;
}

static void test_second_instance_gets_the_same_tool(void **state)
{
	nvtxDomainHandle_t dom, real_dom = nvtxDomainCreateA("torch");
	nvtxEventAttributes_t at = attr_ascii("fake-dom");
	int inits_before = kpt_test_nvtx_inits;

	(void)state;
	for (int i = 1; i < NVTX_CBID_CORE_SIZE; i++)
		core_tab[i] = &core_fn[i];
	for (int i = 1; i < NVTX_CBID_CORE2_SIZE; i++)
		core2_tab[i] = &core2_fn[i];
	assert_int_equal(InitializeInjectionNvtx2(fake_export_table), 1);
	assert_int_equal(kpt_test_nvtx_inits, inits_before + 1); /* called first again: a no-op in the backend */
	assert_int_equal(asked, 1u << NVTX_CB_MODULE_CORE | 1u << NVTX_CB_MODULE_CORE2);
	/* the names of categories and threads, resources: left to NVTX */
	assert_null(core_fn[NVTX_CBID_CORE_NameCategoryA]);
	assert_null(core_fn[NVTX_CBID_CORE_NameOsThreadW]);
	assert_null(core2_fn[NVTX_CBID_CORE2_DomainResourceCreate]);
	assert_non_null(core2_fn[NVTX_CBID_CORE2_Initialize]);
	for (int i = NVTX_CBID_CORE_MarkEx; i <= NVTX_CBID_CORE_RangePop; i++)
		assert_non_null(core_fn[i]);

	assert_int_equal(((nvtxRangePushA_impl_fntype)core_fn[NVTX_CBID_CORE_RangePushA])("fake"), 0);
	assert_non_null(rec("fake"));
	dom = ((nvtxDomainCreateA_impl_fntype)core2_fn[NVTX_CBID_CORE2_DomainCreateA])("fake-domain");
	assert_non_null(dom);
	assert_ptr_not_equal(dom, real_dom);  /* handles unique across instances */
	((nvtxDomainRangePushEx_impl_fntype)core2_fn[NVTX_CBID_CORE2_DomainRangePushEx])(dom, &at);
	assert_string_equal(rec("fake-dom")->domain, "fake-domain");
	assert_int_equal(rec("fake-dom")->row.parent, rec("fake")->row.id);
	/* the real instance pops the fake one's default-domain range: one stack per thread */
	assert_int_equal(((nvtxDomainRangePop_impl_fntype)core2_fn[NVTX_CBID_CORE2_DomainRangePop])(dom), 1);
	assert_int_equal(nvtxRangePop(), 0);
	assert_int_not_equal(rec("fake")->row.end_ns, 0);
}

static void test_nothing_reaches_the_core_once_gone(void **state)
{
	size_t n = nrecs();
	nvtxDomainHandle_t dom;
	nvtxRangeId_t id;

	(void)state;
	atomic_store(&kpt_g.detach, KPT_DETACH_DONE);
	nvtxRangePushA("late");
	nvtxMarkA("late");
	id = nvtxRangeStartA("late");
	nvtxRangeEnd(id);
	nvtxRangePop();
	dom = nvtxDomainCreateA("late-domain");
	assert_non_null(dom);                   /* the program still gets handles */
	assert_non_null(nvtxDomainRegisterStringA(dom, "s"));
	assert_int_equal(nrecs(), n);
	atomic_store(&kpt_g.detach, KPT_DETACH_NO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_nvtx_call_starts_collection),
		cmocka_unit_test(test_domain_push_with_registered_string_nests),
		cmocka_unit_test(test_messages_of_every_form),
		cmocka_unit_test(test_start_end_across_threads),
		cmocka_unit_test(test_payload_push_pop),
		cmocka_unit_test(test_second_instance_gets_the_same_tool),
		cmocka_unit_test(test_nothing_reaches_the_core_once_gone),
	};

	/* the tool is this program (static injection), not a library */
	unsetenv("NVTX_INJECTION64_PATH");
	unsetenv("NVTX_INJECTION32_PATH");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
