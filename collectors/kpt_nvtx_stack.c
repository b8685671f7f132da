/* kpt_nvtx_stack.c - per-thread NVTX range stacks across domains and the
 * NVTX handle tables (kpt_nvtx_stack.h). No CUDA: unit-tested on CPU. */
#include "kpt_nvtx_stack.h"

const struct kpt_nvtx_frame *kpt_nvtx_stack_top(const struct kpt_nvtx_stack *s)
{
	return s->depth ? &s->f[s->depth - 1] : NULL;
}

int kpt_nvtx_stack_push(struct kpt_nvtx_stack *s, uint64_t domain, uint32_t id, void *rec)
{
	if (s->hidden || s->depth == KPT_NVTX_STACK_MAX) {
		s->hidden++;
		return 0;
	}
	s->f[s->depth++] = (struct kpt_nvtx_frame){ .domain = domain, .id = id, .rec = rec };
	return 1;
}

size_t kpt_nvtx_stack_pop(struct kpt_nvtx_stack *s, uint64_t domain, const struct kpt_nvtx_frame **closed)
{
	uint32_t i = s->depth;
	size_t n;

	*closed = NULL;
	if (s->hidden) {
		s->hidden--;
		return 0;
	}
	while (i > 0 && s->f[i - 1].domain != domain)
		i--;
	if (i == 0) {
		atomic_fetch_add_explicit(&s->unmatched, 1, memory_order_relaxed);
		return 0;
	}
	i--;
	n = s->depth - i;
	if (n > 1)
		atomic_fetch_add_explicit(&s->crossed, n - 1, memory_order_relaxed);
	s->depth = i;
	*closed = &s->f[i];
	return n;
}

int kpt_nvtx_handles_put(struct kpt_nvtx_handles *h, uint64_t scope, uint64_t key, void *val)
{
	uint32_t n = atomic_load(&h->n);

	if (key == 0)
		return -1;
	/* reserve a slot, fill it, then publish the key (release) */
	do {
		if (n >= KPT_NVTX_HANDLES_MAX)
			return -1;
	} while (!atomic_compare_exchange_weak(&h->n, &n, n + 1));
	h->ent[n].scope = scope;
	h->ent[n].val = val;
	atomic_store_explicit(&h->ent[n].key, key, memory_order_release);
	return 0;
}

void *kpt_nvtx_handles_get(struct kpt_nvtx_handles *h, uint64_t scope, uint64_t key, int take)
{
	uint32_t n = atomic_load(&h->n);

	if (key == 0)
		return NULL;
	if (n > KPT_NVTX_HANDLES_MAX)
		n = KPT_NVTX_HANDLES_MAX;
	for (uint32_t i = n; i-- > 0;) {
		uint64_t k = atomic_load_explicit(&h->ent[i].key, memory_order_acquire);

		if (k != key || h->ent[i].scope != scope)
			continue;
		if (take && !atomic_compare_exchange_strong(&h->ent[i].key, &k, (uint64_t)0))
			continue;       /* another thread took it */
		return h->ent[i].val;
	}
	return NULL;
}
