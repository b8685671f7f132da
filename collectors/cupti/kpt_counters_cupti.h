/* kpt_counters_cupti.h - hardware counters in libkptinject.so: the CUPTI
 * range profiler of CUDA 13 (cupti_range_profiler.h + cupti_profiler_host.h),
 * auto range (one range per kernel) and kernel replay (CUPTI replays each
 * kernel once per pass, saving and restoring memory).
 *
 * Enabled by KPT_COUNTERS (a comma list of metric names; `kptprof record
 * --counters` sets it for a separate pass of the target, after the timing
 * runs, because replay distorts time). In that mode the collector records
 * counters and devices: no activity and no NVTX ranges.
 *
 * Threads: the launch hooks run on the application's launching thread;
 * state per context is under one mutex (a counters pass is not about speed).
 * Lifecycle: a context is set up at its first kernel launch (API enter),
 * its counter image is decoded when KPT_COUNTERS_RANGES launches have been
 * profiled, when the context is being destroyed, and at process exit.
 */
#ifndef KPT_COUNTERS_CUPTI_H
#define KPT_COUNTERS_CUPTI_H

#include <stdint.h>

#include <cuda.h>

#include "kpt_err.h"
#include "kpt_format.h"
#include "kpt_inject.h"         /* KPT_ENV_COUNTERS, _RANGES, _LOCK */

/* Parses metrics (comma list, copied); the CUPTI profiler is initialised
 * at the first launch. max_ranges: kernels profiled per counter image. */
int kpt_ccount_init(const char *metrics, unsigned max_ranges, struct kpt_diag *d);
/* Driver launch callback, API enter: sets ctx up on its first launch
 * (device: the file's device index, ordinal: the CUDA ordinal). */
int kpt_ccount_launch_enter(CUcontext ctx, uint32_t device, uint32_t ordinal, struct kpt_diag *d);
/* Driver launch callback, API exit: remembers the kernel's (mangled)
 * symbol name and decodes the image when it is full. */
int kpt_ccount_launch_exit(CUcontext ctx, const char *symbol, struct kpt_diag *d);
/* A CUDA graph launch on ctx (API enter: pause; exit: resume). Graph kernel
 * nodes are not profiled: their ranges would carry no launch symbol and
 * misname every range of the image. Pausing decodes what was profiled so
 * far; the pauses are counted (meta counters.graph_launches_skipped). */
int kpt_ccount_pause(CUcontext ctx, struct kpt_diag *d);
int kpt_ccount_resume(CUcontext ctx, struct kpt_diag *d);
/* A kernel launch into a capturing stream (it runs later, in a graph, not
 * now): counted (meta counters.captured_launches), not profiled. */
void kpt_ccount_captured(void);
/* After a counters error: releases this process's contexts and GPU locks,
 * so that the program's other processes do not wait for it. */
void kpt_ccount_abandon(void);
/* Decodes what ctx has profiled and stops profiling it (context destroy). */
int kpt_ccount_context_end(CUcontext ctx, struct kpt_diag *d);
/* Decodes every context, then writes the counter rows (process index
 * process) and meta "counters.metrics", "counters.passes",
 * "counters.ranges_dropped" into w. Call with the writer's lock held. */
int kpt_ccount_write(struct kpt_writer *w, uint32_t process, struct kpt_diag *d);
/* Passes CUPTI needs per kernel for the configuration; 0 before setup. */
unsigned kpt_ccount_passes(void);

#endif
