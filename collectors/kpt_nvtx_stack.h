/* kpt_nvtx_stack.h - the collector's NVTX bookkeeping without CUDA: the
 * per-thread stack of open push/pop ranges across NVTX domains, and the
 * handle tables (domains, registered strings, open start/end ranges).
 * The collector's core (kpt_inject_trace.c) keeps them, fed by NVTX's
 * calls (kpt_nvtx_inject.c: the tool NVTX_INJECTION64_PATH names, and the
 * NVTX payload extension); tests/unit/test_nvtx_stack.c drives them
 * directly.
 *
 * The range path rule (docs/cli.md, "NVTX ranges"):
 * - push/pop ranges nest per thread. Each NVTX domain (the default one,
 *   NCCL's, PyTorch's, ...) has its own stack: a pop pops the innermost
 *   open range of its own domain, never another domain's.
 * - a new range's parent is the innermost range open on the thread, of any
 *   domain, so the user's "step" with NCCL's "ncclAllReduce" opened inside
 *   it gives the path step/ncclAllReduce, and a kernel links to the
 *   innermost open range of any domain.
 * - a path is a nesting: when a range closes, ranges of other domains
 *   still open inside it close with it (counted in `crossed`). This keeps a
 *   lost pop (a library popping through an API the collector cannot see)
 *   from going stale past the enclosing range.
 * - start/end ranges are not on the stack: they may overlap and end on
 *   another thread, so they never enter a kernel's path (they are recorded,
 *   with the enclosing push/pop range of the starting thread as parent).
 */
#ifndef KPT_NVTX_STACK_H
#define KPT_NVTX_STACK_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define KPT_NVTX_STACK_MAX 256     /* frames stored per thread; deeper pushes are counted only */
#define KPT_NVTX_HANDLES_MAX 65536 /* entries per handle table; slots are not reused */

/* One open push/pop range. domain is the NVTX domain handle's value, 0 for
 * the default domain (NVTX treats a NULL domain as the default one). */
struct kpt_nvtx_frame {
	uint64_t domain;
	uint32_t id;                /* the range's id in the recording */
	void *rec;                  /* the caller's record of the range, not owned */
};

/* One thread's open ranges, innermost last. Touched only by its thread;
 * zero-initialised is an empty stack. */
struct kpt_nvtx_stack {
	uint32_t depth;             /* frames stored */
	uint32_t hidden;            /* pushes past KPT_NVTX_STACK_MAX, not stored */
	/* read by the thread writing the recording: atomic, relaxed */
	_Atomic uint64_t unmatched; /* pops with no open range of their domain on this thread */
	_Atomic uint64_t crossed;   /* ranges closed because an enclosing range closed */
	struct kpt_nvtx_frame f[KPT_NVTX_STACK_MAX];
};

/* The innermost open range of the thread (any domain), NULL when none. This
 * is the parent of a new range and the range a launch is linked to. */
const struct kpt_nvtx_frame *kpt_nvtx_stack_top(const struct kpt_nvtx_stack *s);

/* Opens a range. Returns 1 when stored, 0 when past KPT_NVTX_STACK_MAX (then
 * counted in hidden: the next pop of any domain takes it back, so programs
 * that nest correctly stay exact; launches under it link to the deepest
 * stored range). */
int kpt_nvtx_stack_push(struct kpt_nvtx_stack *s, uint64_t domain, uint32_t id, void *rec);

/* Closes the innermost open range of domain and every range opened inside
 * it on this thread (of other domains). Returns how many frames closed and
 * points *closed at them: (*closed)[0] is domain's range, the others were
 * crossed; valid until the next push. Returns 0 (nothing closed) for a pop
 * of a hidden frame or an unmatched pop (domain has no open range here:
 * counted, e.g. a push on one thread popped on another, which NVTX does
 * not allow for push/pop ranges). */
size_t kpt_nvtx_stack_pop(struct kpt_nvtx_stack *s, uint64_t domain, const struct kpt_nvtx_frame **closed);

/* Handles handed out by NVTX calls, kept by (scope, key): scope is the
 * domain for registered strings and start/end ranges (handles need only be
 * unique within their domain), 0 for domains themselves. Append-only,
 * lock-free: writers are NVTX calls on any thread. Zero-initialised is
 * empty. Lookups scan from the newest entry: O(entries). */
struct kpt_nvtx_handle {
	_Atomic uint64_t key;       /* 0: empty or taken */
	uint64_t scope;
	void *val;
};

struct kpt_nvtx_handles {
	_Atomic uint32_t n;
	struct kpt_nvtx_handle ent[KPT_NVTX_HANDLES_MAX];
};

/* Returns 0, or -1 when key is 0 or the table is full (val is not kept). */
int kpt_nvtx_handles_put(struct kpt_nvtx_handles *h, uint64_t scope, uint64_t key, void *val);

/* The newest value under (scope, key), NULL when none. With take, the entry
 * is removed; of threads taking the same entry at once, one gets it. */
void *kpt_nvtx_handles_get(struct kpt_nvtx_handles *h, uint64_t scope, uint64_t key, int take);

#endif
