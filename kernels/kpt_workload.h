/* kpt_workload.h - the registry of named workloads that kpt-workloads runs.
 *
 * A workload is one kernel (or a short fixed sequence) at one size, named
 * `family.kernel.params` (docs/architecture.md, "Built-in workloads"), with the FLOPs and
 * bytes of one iteration so reports can show TFLOP/s, GB/s and percent of the
 * GPU's ceilings. Each family keeps one table (kernels/<family>/); the list
 * of family tables is in kernels/kpt_registry.c.
 *
 * Life of one workload in the runner (all hooks return 0 or a negative
 * enum kpt_err and fill d):
 *
 *     setup(w, c, d)          allocate, fill inputs from c->seed (never zeros);
 *                             KPT_E_UNSUPPORTED with c->no_kernel set: no
 *                             kernel for this GPU's compute capability, the
 *                             runner skips the workload (teardown still runs);
 *                             with a plant asked for, or without no_kernel
 *                             (a refusal on a GPU that has the kernel), it is
 *                             an error
 *     run(w, c, d) x W+N      one iteration, enqueued on c->stream, no sync;
 *                             honours c->plant_pct when w->plantable
 *     poison(w, c, d)         overwrite every output (kpt_wl_poison) ...
 *     run(w, c, d)            ... recompute it ...
 *     check(w, c, d)          ... and compare against the CPU reference
 *                             (kernels/ref/); KPT_E_MISMATCH when wrong
 *     teardown(w, c)          free everything; must accept a failed setup
 *
 * Hooks must not print or exit. run must not synchronise (the runner times
 * it with events); setup, poison, check and teardown may. Everything here is
 * usable from C and from CUDA C++.
 */
#ifndef KPT_WORKLOAD_H
#define KPT_WORKLOAD_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

/* lib/kpt_err.h has no C++ guard of its own: include it as C. */
#include "kpt_err.h"

/* What the runner hands to each hook of one workload in one process. */
struct kpt_wl_ctx {
	cudaStream_t stream;  /* run and poison enqueue their work here */
	uint64_t seed;        /* fresh per process (--seed fixes it); setup derives inputs from it */
	int plant_pct;        /* --plant: PCT% more real GPU work inside the kernel; 0 = none */
	void *state;          /* owned by the workload: set in setup, freed in teardown */
	int no_kernel;        /* setup: this GPU has no kernel for the workload (its compute
	                       * capability), with KPT_E_UNSUPPORTED: the runner skips it */
};

struct kpt_workload;
typedef int (*kpt_wl_hook)(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d);

struct kpt_workload {
	const char *name;     /* family.kernel.params; unique over the registry */
	const char *family;   /* "memory", "fp8", "attention", "moe" */
	const char *suites;   /* space-separated suite names, e.g. "quick default"; "" = none */
	double flops;         /* per iteration; 0 for pure data movement */
	double bytes;         /* per iteration, the fewest possible: each input read once,
	                       * each output written once */
	const void *cfg;      /* family-specific parameters read by the hooks; may be NULL */
	int plantable;        /* run honours c->plant_pct (the runner refuses --plant otherwise) */
	kpt_wl_hook setup;
	kpt_wl_hook run;
	kpt_wl_hook poison;   /* NULL: nothing to check */
	kpt_wl_hook check;    /* NULL: nothing to check */
	void (*teardown)(const struct kpt_workload *w, struct kpt_wl_ctx *c);
};

/* One family's table; defined next to the family's kernels. */
struct kpt_wl_family {
	const char *name;
	const struct kpt_workload *workloads;
	size_t count;
};

/* Known suites, for --list and for refusing unknown --suite names. */
struct kpt_wl_suite {
	const char *name;
	const char *summary;
};

/* ---- the registry (kernels/kpt_registry.c); no GPU needed ---------------- */

/* All workloads in a stable order (family list order, then table order).
 * Index i in [0, kpt_workload_count()); out of range gives NULL. */
size_t kpt_workload_count(void);
const struct kpt_workload *kpt_workload_at(size_t i);
/* Exact name lookup; NULL when absent. */
const struct kpt_workload *kpt_workload_find(const char *name);
/* 1 when w lists suite (whole-word match in w->suites), else 0. */
int kpt_workload_in_suite(const struct kpt_workload *w, const char *suite);
/* The suite table; *n receives its length. */
const struct kpt_wl_suite *kpt_wl_suites(size_t *n);
const struct kpt_wl_suite *kpt_wl_suite_find(const char *name);

/* ---- helpers for hooks (kernels/kpt_wl_util.cu) --------------------------- */

/* Turns a failed CUDA runtime call into KPT_E_CUDA with "where" (file:line:
 * call text) and the CUDA error string in d; returns 0 for cudaSuccess. */
int kpt_cuda_check(struct kpt_diag *d, cudaError_t e, const char *where);
#define KPT_STR_(x) #x
#define KPT_STR(x) KPT_STR_(x)
#define KPT_CUDA(d, call) kpt_cuda_check((d), (call), __FILE__ ":" KPT_STR(__LINE__) ": " #call)

/* Fill n elements with values uniform in [lo, hi) derived from (seed, index)
 * on the GPU (O(n), enqueued on s). Ranges that exclude 0 give no zeros;
 * with lo < 0 < hi an exact zero is possible but has probability ~2^-24. */
int kpt_wl_fill_f32(float *p, size_t n, uint64_t seed, float lo, float hi,
		    cudaStream_t s, struct kpt_diag *d);
/* Same, stored as bf16 (round to nearest even); p holds n uint16_t. */
int kpt_wl_fill_bf16(void *p, size_t n, uint64_t seed, float lo, float hi,
		     cudaStream_t s, struct kpt_diag *d);
/* Overwrite bytes with 0xFF: NaN in fp32, bf16, fp16 and both FP8 formats. */
int kpt_wl_poison(void *p, size_t bytes, cudaStream_t s, struct kpt_diag *d);
/* Derive an independent seed for input number k of a workload. */
uint64_t kpt_wl_subseed(uint64_t seed, uint64_t k);

#define KPT_KiB 1024.0
#define KPT_MiB (1024.0 * 1024.0)

#ifdef __cplusplus
}
#endif

#endif
