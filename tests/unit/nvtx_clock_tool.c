/* nvtx_clock_tool.c - the collector's core under a clock-only backend, for
 * the NVTX tool's tests (test_nvtx_inject.c links it in; libkpt_nvtx_tool.so
 * is it with the core, for NVTX_INJECTION64_PATH: nvtx_dyn_app.c). No
 * file is written: the tests read the range logs back.
 */
#define _GNU_SOURCE
#include <stdio.h>

#include "kpt_inject_core.h"
#include "nvtx_clock_tool.h"

int kpt_test_nvtx_inits;

static _Atomic uint64_t clock_ns = 1000;

static int clock_timestamp(uint64_t *ns)
{
	*ns = atomic_fetch_add(&clock_ns, 10);
	return 0;
}

static const struct kpt_backend_ops clock_backend = { .name = "clock", .timestamp = clock_timestamp };

/* The backend's entry point: collection on, no launch links (link off:
 * no work callbacks to list), no window. */
int InitializeInjection(void)
{
	if (!kpt_test_nvtx_inits++) {
		kpt_g.ops = &clock_backend;
		kpt_g.link = 2;
		kpt_g.enabled = 1;
	}
	return 1;
}

int kpt_test_nvtx_dump(char *buf, size_t cap)
{
	size_t o = 0;

	for (struct kpt_thread_log *t = atomic_load(&kpt_g.logs); t; t = t->next)
		for (struct kpt_range_chunk *c = t->head; c; c = c->next)
			for (uint32_t i = 0; i < atomic_load(&c->n); i++) {
				const struct kpt_range_rec *r = &c->recs[i];
				const struct kpt_range_rec *p = NULL;
				int n;

				for (uint32_t j = 0; j < i; j++)
					if (c->recs[j].row.id == r->row.parent)
						p = &c->recs[j];
				n = snprintf(buf + o, cap - o, "%u %s %s parent=%s %s\n", r->row.kind, r->name,
					     r->domain ? r->domain : "-", p ? p->name : "-",
					     r->row.end_ns ? "ended" : "open");
				if (n < 0 || (size_t)n >= cap - o)
					return -1;
				o += (size_t)n;
			}
	return (int)o;
}
