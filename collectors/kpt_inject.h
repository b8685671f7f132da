/* kpt_inject.h - the contract between libkptinject.so and its launcher.
 *
 * libkptinject.so is loaded into a CUDA process by the driver when
 * CUDA_INJECTION64_PATH names it; the driver calls InitializeInjection()
 * during cuInit. The library then records, with CUPTI, every kernel, memcpy,
 * memset and synchronization of the process (plus runtime/driver API calls
 * when asked), NVTX ranges (NVTX_INJECTION64_PATH names this library too: it
 * fills NVTX's function tables itself, kpt_nvtx_inject.c, without CUPTI),
 * device properties, and NVML
 * samples, and writes one .kpt file per process when the process exits.
 *
 * Environment read by the library (the launcher, `kptprof record`, sets
 * them; a user may set them by hand):
 *   KPT_OUTPUT      output path pattern; %p pid, %r rank (RANK,
 *                   OMPI_COMM_WORLD_RANK or SLURM_PROCID; 0 when none), %%
 *                   a percent sign. Default "kptprof-%p.kpt".
 *   KPT_STATUS      status file pattern (same escapes). When set, the
 *                   library writes one line there: "ok PATH" after writing
 *                   its recording, or "error NAME MESSAGE" (NAME from
 *                   kpt_err_name()) and possibly "hint TEXT" when it could
 *                   not record. The target process is never stopped.
 *   KPT_API         "1": also record runtime and driver API calls.
 *   KPT_SAMPLE_MS   NVML sampling period in ms (default 10; 0 disables).
 *   KPT_BUFFER_MB   size of one host activity buffer (default 8).
 *   KPT_BUFFERS     buffers allocated up front (default 16; up to 256 more
 *                   are allocated on demand before records are dropped).
 *   KPT_DEVICE_BUFFER_MB  CUPTI device buffer per context (default 32).
 *   KPT_COUNTERS    comma list of metrics: a counters pass (CUPTI range
 *                   profiler, auto range, kernel replay; no activity
 *                   and no NVTX ranges are recorded). See kpt_counters_cupti.h.
 *   KPT_COUNTERS_RANGES  kernels per counter image before decoding (1024).
 *   KPT_CAPTURE_RANGE, KPT_STEPS, KPT_EVERY, KPT_DELAY, KPT_DURATION
 *                   a capture window (kpt_window.h): activity is recorded
 *                   only inside it. Ignored by a counters pass.
 *
 * Lifecycle: records are flushed into the file at exit (atexit), when a
 * context is destroyed (cudaDeviceReset: CUPTI's CONTEXT_DESTROY_STARTING
 * resource callback), and on SIGINT/SIGTERM when the
 * target left the default action in place (the signal is then re-raised
 * with its default action; a handler installed by the target is left alone
 * and the process's normal exit writes the file). A process forked by a
 * recorded process writes its own file (its NVTX ranges; CUDA is not usable
 * in a forked child) when it exits normally; a child that execs a CUDA
 * program is recorded as a new process.
 */
#ifndef KPT_INJECT_H
#define KPT_INJECT_H

#define KPT_ENV_OUTPUT "KPT_OUTPUT"
#define KPT_ENV_STATUS "KPT_STATUS"
#define KPT_ENV_API "KPT_API"
#define KPT_ENV_SAMPLE_MS "KPT_SAMPLE_MS"
#define KPT_ENV_BUFFER_MB "KPT_BUFFER_MB"
#define KPT_ENV_BUFFERS "KPT_BUFFERS"
#define KPT_ENV_DEVICE_BUFFER_MB "KPT_DEVICE_BUFFER_MB"
#define KPT_ENV_ACTIVITY_KINDS "KPT_ACTIVITY_KINDS"
#define KPT_ENV_RANGE_LINK "KPT_RANGE_LINK" /* api (default: driver callbacks), runtime, both, off */
#define KPT_ENV_COUNTERS "KPT_COUNTERS"     /* metrics of a counters pass (kpt_counters_cupti.h) */
/* Ranges per counter image before it is decoded (default 1024, 1..65536). */
#define KPT_ENV_COUNTERS_RANGES "KPT_COUNTERS_RANGES"
/* A lock file the processes of one counters pass share, to hand the GPU's
 * counters from one to the next (kptprof record sets it; unset: no hand-
 * over, a second process that launches while the first holds them fails). */
#define KPT_ENV_COUNTERS_LOCK "KPT_COUNTERS_LOCK"

/* Bits of kpt_inject_kinds(), in the order the collector enables the CUPTI
 * activity kinds (memcpy covers MEMCPY and MEMCPY2). */
#define KPT_KINDS_ALL 31

/* Expands %p, %r and %% of pattern into out (cap bytes). Returns the length
 * written, or -1 when it does not fit or pattern has another % escape. */
int kpt_inject_expand(const char *pattern, unsigned pid, unsigned rank, char *out, int cap);

/* Parses a KPT_ACTIVITY_KINDS list: words kernel, memcpy, memset, sync
 * separated by commas (empty items are skipped). Returns the mask of
 * kinds, or -1 with *bad and *badlen set to the first word it does not
 * know. Shared by the collector and `kptprof record --kinds`. */
int kpt_inject_kinds(const char *list, const char **bad, int *badlen);

/* Whether the CUDA API function called name (as cuptiGetCallbackName
 * gives it: "cudaLaunchKernel_v7000", "__cudaLaunchKernel_v13000",
 * "cuMemcpyHtoDAsync_v2") starts GPU work: a kernel or graph launch, a
 * memcpy or a memset, runtime or driver. The collector enables API
 * callbacks for these only. */
int kpt_inject_is_work_api(const char *name);

/* Rank from RANK, OMPI_COMM_WORLD_RANK or SLURM_PROCID (the first that is
 * set and a number), else 0xFFFFFFFF (KPT_NONE). */
unsigned kpt_inject_rank(void);

#endif
