/* kpt_inject_core.h - the backend-neutral core of libkptinject.so and the
 * seam a tracing backend plugs into (struct kpt_backend_ops).
 *
 * The core owns what any backend needs: the activity buffer pool, the
 * device table (properties from the backend, NVML handles), drop
 * accounting, the capture window's state and its switches, NVTX range logs
 * and the launch -> range table, the pre-roll log, the NVML sampler, the
 * status file, signals and fork, and the final write of the .kpt file
 * (meta included). A backend (collectors/cupti/: CUPTI, the one today)
 * subscribes to the vendor's tracing API, converts its records into the
 * writer under kpt_g.lock, and calls the core at its events (a range
 * pushed, a buffer completed, a work API entered). The core calls it only
 * through the ops table: it includes no vendor header, and a second
 * backend is a new folder beside cupti/, not a copy of this one.
 *
 * Threads and locks (the same for every backend):
 * - application threads run NVTX's calls (kpt_nvtx_inject.c), the
 *   backend's callbacks (API enter, resource) and its buffer requests. On the launch path they never take
 *   kpt_g.lock: NVTX ranges go into per-thread logs, launch -> range links
 *   into a lock-free table (kpt_core_corr_range), and buffers come
 *   from a pool allocated up front (atomic flags). Off it they do, once
 *   each: a context's destruction, and the detach after the last window
 *   (kpt_core_detach_maybe holds detlock and takes kpt_g.lock, then
 *   winlock, one at a time under it; kpt_core_finish takes detlock
 *   alone, first; nothing takes detlock under another lock).
 * - the backend's worker thread (and whoever flushes) runs the
 *   buffer-complete callback, which converts records and hands them to
 *   the writer under kpt_g.lock.
 * - the sampler thread polls NVML every KPT_SAMPLE_MS and performs the final
 *   flush when a SIGINT/SIGTERM handler asks it to.
 *
 * Internal to libkptinject.so (hidden symbols); the library's contract with
 * its launcher is kpt_inject.h.
 */
#ifndef KPT_INJECT_CORE_H
#define KPT_INJECT_CORE_H

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "kpt_format.h"
#include "kpt_inject.h"
#include "kpt_nvml_api.h"
#include "kpt_nvtx_stack.h"
#include "kpt_window.h"

/* Limits. Past them the collector degrades, never fails the target. */
#define KPT_MAX_DEVICES 64      /* ordinals recorded; higher: device KPT_NONE */
#define KPT_POOL_MAX 272        /* activity buffers; then the backend drops (counted) */
#define KPT_CORR_BITS 22        /* launch -> range table: 4M entries, 32 MB, made
				   at the first NVTX push; an entry is overwritten
				   4M launches later (its kernel is long flushed) */
#define KPT_RANGE_CHUNK 1024    /* ranges per per-thread log chunk */

/* What the core asks of a tracing backend. Every function is called with
 * no core lock held unless its line says otherwise; d, where present,
 * receives the reason of a negative return. One const row per backend
 * (kpt_cupti_backend in collectors/cupti/). */
struct kpt_backend_ops {
	const char *name;
	/* Subscribes to the tracing API and registers the buffer callbacks
	 * (buffers from kpt_core_buffer_get). A counters pass is set up
	 * here too (kpt_g.counters, .counters_mode): the core then arms no
	 * activity kinds and no window. */
	int (*start)(struct kpt_diag *d);
	/* The last step of a successful start: the lifecycle (context)
	 * callbacks on. (NVTX reaches the core without the backend:
	 * kpt_nvtx_inject.c.) */
	int (*listen)(struct kpt_diag *d);
	/* start or listen failed: unsubscribe (what was buffered is flushed
	 * first); the core then destroys the writer. */
	void (*stop)(void);
	/* The backend's clock (the records' time base) into *ns; 0, or
	 * negative when it cannot be read (the core then takes
	 * CLOCK_REALTIME). Never called once detached. */
	int (*timestamp)(uint64_t *ns);
	/* Turns the activity kinds of mask (kpt_inject_kinds bits; api: the
	 * runtime and driver API kinds too) on or off. Under winlock. */
	int (*kinds)(int on, int mask, int api, struct kpt_diag *d);
	/* Lists the work-API callbacks (kpt_inject_is_work_api) that link
	 * launches to ranges; link 0: the driver's (a runtime launch reaches
	 * the driver under the same correlation id), 1: runtime only, 3: both.
	 * Returns how many, negative when out of memory. Once. */
	int (*work_list)(int link);
	/* Turns the listed work callbacks on or off. Under winlock. Returns
	 * how many failed to switch. */
	unsigned (*work_switch)(int on);
	/* Enables the callbacks of a cudaProfilerStart/Stop window: the
	 * backend calls kpt_core_window_profiler at them. */
	int (*profiler_api)(struct kpt_diag *d);
	/* Hands every completed and pending buffer to the buffer-complete
	 * path now. */
	void (*flush)(void);
	/* Adds the drop counts of every queue still alive (the global one
	 * and each context's streams) with kpt_core_drop_add. Under
	 * kpt_g.lock. */
	void (*drops)(void);
	/* Detaches from the tracing API (records flushed and drops taken
	 * before); 0 when detached. No backend call follows a success but
	 * attach. */
	int (*detach)(void);
	/* Attaches again after a detach, for the next window of a sampled
	 * run (--sample-every, --on-demand): what start and listen did,
	 * without a counters pass; the activity kinds and work callbacks off.
	 * Called under winlock on a program thread outside any of the
	 * backend's callbacks (an NVTX range opening). 0, or negative with d
	 * saying why (the backend then stays detached). */
	int (*attach)(struct kpt_diag *d);
	/* Fills row's properties (SMs, clocks, versions, memory) for device
	 * ordinal, and row->name and row->uuid (owned, never NULL: "" when
	 * unknown; kpt_core_strdup); the core set index and cuda_ordinal and
	 * sets the slug. Under devlock. */
	void (*device)(uint32_t ordinal, struct kpt_device *row);
	/* Writes the backend's own sections (the counters of a counters
	 * pass) before the file is committed. Under kpt_g.lock. */
	int (*write)(struct kpt_writer *w, struct kpt_diag *d);
};

/* ---- per-thread NVTX logs ---------------------------------------------- */

struct kpt_range_rec {
	struct kpt_range row;       /* name/domain filled at write time */
	char *name;                 /* owned copy */
	const char *domain;         /* owned by the domain table, NULL default */
	int traced;                 /* opened while tracing (a sampled run keeps it) */
	uint32_t gen;               /* kpt_g.trace_gen when it opened */
};

struct kpt_range_chunk {
	struct kpt_range_chunk *next;
	_Atomic uint32_t n;
	struct kpt_range_rec recs[KPT_RANGE_CHUNK];
};

struct kpt_thread_log {
	struct kpt_thread_log *next; /* registry, pushed with CAS */
	uint64_t tid;
	struct kpt_nvtx_stack st;   /* open push/pop ranges, all domains; rec: kpt_range_rec */
	struct kpt_range_chunk *head, *tail;
};

/* The core's two globals are hidden in the library (its symbols are,
 * kptinject.map), and declared so: the backend's files reach them as the
 * core's own do, PC-relative, without a GOT load on the launch path. */
#define KPT_CORE_HIDDEN __attribute__((visibility("hidden")))

/* This thread's log, NULL before its first range. */
extern __thread struct kpt_thread_log *kpt_tls_log KPT_CORE_HIDDEN;

/* NO: not armed; PENDING: armed, waiting for a work-API exit after the
 * grace; BUSY: a thread is detaching; DONE: detached (no backend call from
 * then on); FAILED: the backend refused (it stays); OFF: cancelled
 * (finish began, or a forked child's inherited state). */
enum kpt_detach_state {
	KPT_DETACH_NO = 0, KPT_DETACH_PENDING, KPT_DETACH_BUSY, KPT_DETACH_DONE,
	KPT_DETACH_FAILED, KPT_DETACH_OFF
};

struct kpt_dev_slot {
	int used;
	uint32_t index;             /* file device index */
	kpt_nvmlDevice_t nvml;
};

/* ---- the collector -------------------------------------------------------- */

struct kpt_core {
	const struct kpt_backend_ops *ops;
	pthread_mutex_t lock;       /* writer, drops, devices, env samples */
	struct kpt_writer *w;
	char path[4096];
	char status[4096];
	int enabled;                /* subscribed and collecting */
	int forked_child;
	_Atomic int finished;
	uint32_t pid, ppid, rank;
	uint64_t start_ns;
	uint64_t start_mono;        /* mono_ns() at start_ns: the clock of --delay/--duration */
	int api;
	char *command;

	/* devices by ordinal */
	pthread_mutex_t devlock;
	struct kpt_dev_slot dev[KPT_MAX_DEVICES];
	struct kpt_device rows[KPT_MAX_DEVICES];
	uint32_t ndev;

	/* activity buffers */
	size_t buf_size;
	uint8_t *pool[KPT_POOL_MAX];
	_Atomic int busy[KPT_POOL_MAX];
	_Atomic int npool;
	_Atomic uint64_t pool_exhausted;

	/* launch correlation id -> innermost range (corr << 32 | range) */
	_Atomic uint64_t *corr;
	_Atomic int api_cb_on;
	int link;                   /* KPT_RANGE_LINK: 0 api (driver callbacks), 1 runtime only, 2 off,
				     * 3 both (runtime and driver) */
	_Atomic unsigned api_cbs, api_cbs_failed; /* work callbacks listed, failed to switch */
	_Atomic uint32_t next_range;
	_Atomic(struct kpt_thread_log *) logs;
	/* NVTX handles (kpt_nvtx_stack.h): domain names by handle (scope 0),
	 * registered strings and open start/end ranges by (domain, handle) */
	struct kpt_nvtx_handles domains, strings, startend;
	_Atomic int nvtx_payload;   /* NVTX payload extension push/pop handled here */

	/* capture window (kpt_window.h): win_set is fixed after start; the
	 * state and the kinds it switches are under winlock */
	int win_set;
	pthread_mutex_t winlock;
	struct kpt_window win;
	int kinds_mask;             /* activity kinds of this run (kpt_inject_kinds bits) */
	int kinds_on;               /* enabled in the backend now */
	/* pre-roll (kpt_window.h): the largest launch correlation id the work
	 * callbacks saw (kept only with a pre-roll: preroll_track, fixed after
	 * start); its periods under prelock, a leaf lock (taken under
	 * winlock and under lock, nothing taken or called while held); the
	 * counts of what ran into a window under lock (the backend's
	 * conversion) */
	int preroll_track;
	_Atomic uint32_t corr_seen;
	pthread_mutex_t prelock;
	struct kpt_preroll_log prelog;
	int preroll_was;            /* win.preroll at the last window_apply (under winlock) */
	/* what the transitions cost the thread that crossed them (under
	 * winlock; meta collector.window_switch*): CLOCK_MONOTONIC ns spent
	 * switching the activity kinds and the work callbacks, and how often
	 * the kinds switched (on or off) */
	uint64_t switch_kinds_ns, switch_cbs_ns, switches;
	int test_off;               /* KPT_WINDOW_TEST_OFF bits */
	uint64_t kernels_before, kernels_before_ns, memops_before, preroll_dropped;
	/* the work-API callbacks of range links, listed at the first NVTX
	 * push (work_listed); on only inside windows */
	int work_listed;
	int work_cbs_on;
	/* detach after the last window (kpt_window_done): the backend is
	 * detached at the first work-API exit on a program thread once
	 * DETACH_GRACE has passed since the window closed (the window's work
	 * done and its records flushed by then); kpt_core_detach_maybe */
	_Atomic int detach;         /* enum kpt_detach_state */
	int detach_ok;              /* allowed: a window, not a --delay/--duration one, not KPT_DETACH=0, no counters */
	uint64_t detach_at;         /* mono_ns() from which it may happen */
	uint64_t win_open_mono, win_longest; /* mono_ns() the window opened; its longest */
	int win_was_on;             /* the window's state at the last window_apply */
	uint64_t detached_mono;     /* mono_ns() at the detach */
	int64_t clock_off;          /* backend clock - mono_ns(), taken when the detach was armed */
	pthread_mutex_t detlock;    /* held through a detach, and by finish against one;
				     * the outermost lock (lock, winlock under it) */
	/* a sampled run (--sample-every, --on-demand; fixed after start): the
	 * backend is detached between windows and attached again at the
	 * opening of each (sampled_attach, under winlock); NVTX keeps
	 * reaching the core while detached (the window needs the steps), and
	 * ranges that open and close outside every window are not kept */
	int sampled;
	uint64_t attaches, attach_ns, attach_failed, detaches, detach_ns;
	uint64_t windows_missed;    /* openings while a detach was under way: not traced */
	_Atomic uint64_t ranges_dropped; /* untraced ranges not kept (sampled) */
	_Atomic uint32_t trace_gen; /* times tracing began (window_apply) */
	/* on demand (KPT_CONTROL_DIR): the sampler polls the folder and
	 * arms a capture (kpt_window_request); it acknowledges once it
	 * opened (control_* under winlock) */
	char *control_dir;
	uint64_t control_seq, control_pending_seq, control_windows_at, requests;
	/* one row per window of a sampled run (meta collector.sample_windows) */
	struct kpt_sample_row { uint64_t step, open_ns, close_ns, open_wall_ns; } *samples;
	size_t nsamples, capsamples;
	int sample_open;            /* the last row's window is open */

	/* drops, per (device, stream); process total */
	struct kpt_drop *drops;
	size_t ndrops, capdrops;
	uint64_t dropped;

	/* NVML sampler, also the signal flusher */
	struct kpt_nvml nvml;
	int nvml_ok;
	char driver_string[KPT_NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE];
	kpt_nvmlReturn_t (*nvml_reasons)(kpt_nvmlDevice_t, unsigned long long *);
	unsigned sample_ms;
	pthread_t sampler;
	int sampler_on;
	/* the sampler queries NVML: always without a window, else only while
	 * tracing (window_apply sets it and wakes the sampler at an opening) */
	_Atomic int sample_on;
	_Atomic uint64_t last_sample_ns; /* now() of the sampler's last NVML sample */
	_Atomic int stop;
	sem_t wake;
	struct kpt_env_sample *env;
	size_t nenv, capenv;

	/* signals */
	struct sigaction old_int, old_term;
	volatile sig_atomic_t sig_pending, sig_done;

	/* first error, for the status file */
	struct kpt_diag diag;
	int failed;
	_Atomic int counters;       /* a counters pass collecting (the backend's) */
	int counters_mode;          /* a counters pass was asked for (counters may have failed since) */
};

/* KPT_WINDOW_TEST_OFF (kpt_window.h): parts of the collector a
 * measurement turns off, to attribute a capture window's cost. */
enum kpt_test_off {
	KPT_TEST_OFF_NVML = 1,      /* no NVML sample at all, in windows either */
	KPT_TEST_OFF_CALLBACKS = 2, /* no work callbacks: no range links, no pre-roll */
	KPT_TEST_OFF_KINDS = 4,     /* activity never enabled: windows open and close, nothing is traced */
};
/* The one collector of this process. */
extern struct kpt_core kpt_g KPT_CORE_HIDDEN;

/* ---- the core's calls (kpt_inject_core.c, kpt_inject_trace.c) ---------- */

/* Symbols libkptinject.so exports (kptinject.map lists them). */
#define KPT_EXPORT __attribute__((visibility("default")))

/* The CUDA injection entry point (the driver calls it during cuInit): the
 * backend defines it, starting the core with its ops, once. NVTX's entry
 * points (kpt_nvtx_inject.c) call it first. */
KPT_EXPORT int InitializeInjection(void);

/* Starts collecting with backend ops (once per process; the backend's
 * entry point calls it). Never stops the target: a failure goes to the
 * status file and the process runs on unrecorded. */
void kpt_core_init(const struct kpt_backend_ops *ops);
/* Flushes and writes the file (atexit, signals); once. */
void kpt_core_finish(void);

/* Whether the backend may be detaching or is gone: no backend call then. */
static inline int kpt_core_gone(void)
{
	int st = atomic_load_explicit(&kpt_g.detach, memory_order_acquire);

	return st == KPT_DETACH_BUSY || st == KPT_DETACH_DONE;
}

uint64_t kpt_core_now(void);  /* the backend's clock, or its stand-in */
uint64_t kpt_core_mono(void); /* CLOCK_MONOTONIC ns */

/* Records the first failure (status file); later ones are dropped. */
void kpt_core_fail(const struct kpt_diag *d);

/* The number in environment variable name, dflt when unset, not a
 * number or above max. */
unsigned kpt_core_env_uint(const char *name, unsigned dflt, unsigned max);

/* An owned copy of s ("" for NULL; never NULL). */
char *kpt_core_strdup(const char *s);

/* File device index of ordinal: registers it (ops->device, the NVML
 * handle) on first use. KPT_NONE when out of range. */
uint32_t kpt_core_device_add(uint32_t ordinal);
static inline uint32_t kpt_core_device(uint32_t ordinal)
{
	if (ordinal >= KPT_MAX_DEVICES)
		return KPT_NONE;
	if (__atomic_load_n(&kpt_g.dev[ordinal].used, __ATOMIC_ACQUIRE))
		return kpt_g.dev[ordinal].index;
	return kpt_core_device_add(ordinal);
}

/* count records lost on (device, stream) (KPT_NONE: unknown). Under lock. */
void kpt_core_drop_add(uint32_t device, uint32_t stream, uint64_t count);

/* Whether a record of launch corr, running start..end, was launched in a
 * pre-roll (kpt_window.h; only with kpt_g.preroll_track): such records
 * are not written; of those that ran into the window, kernels and memops
 * (what) are counted, kernels with their time after it opened (meta
 * collector.kernels_before_window...). Under kpt_g.lock. */
enum { KPT_CORE_KERNEL = 1, KPT_CORE_MEMOP = 2 };
int kpt_core_preroll_drop(uint32_t corr, uint64_t start, uint64_t end, int what);

/* A buffer of the pool for the backend to fill (*size: its size), NULL
 * (and *size 0) when the pool is exhausted: the backend drops and counts.
 * Lock-free. */
uint8_t *kpt_core_buffer_get(size_t *size);
/* Gives a buffer back once its records were converted. */
void kpt_core_buffer_release(uint8_t *b);

/* The innermost range of the launch with correlation id corr, KPT_NONE. */
static inline uint32_t kpt_core_corr_range(uint32_t corr)
{
	uint64_t e;

	if (!kpt_g.corr)
		return KPT_NONE;
	e = atomic_load_explicit(&kpt_g.corr[corr & ((1u << KPT_CORR_BITS) - 1)], memory_order_relaxed);
	return (uint32_t)(e >> 32) == corr ? (uint32_t)e : KPT_NONE;
}

/* A work API entered with correlation id corr: the pre-roll tracks the
 * largest id so far (ids increase; threads race). Before any window
 * switch the same call makes. */
static inline void kpt_core_work_seen(uint32_t corr)
{
	uint32_t seen;

	if (!kpt_g.preroll_track)
		return;
	seen = atomic_load_explicit(&kpt_g.corr_seen, memory_order_relaxed);
	while ((int32_t)(corr - seen) > 0 &&
	       !atomic_compare_exchange_weak_explicit(&kpt_g.corr_seen, &seen, corr,
						      memory_order_relaxed, memory_order_relaxed))
		;
}

/* ... and is linked to this thread's innermost open range, if any. */
static inline void kpt_core_work_link(uint32_t corr)
{
	struct kpt_thread_log *t = kpt_tls_log;

	/* no open range stores KPT_NONE too: a sampled run attaches again,
	 * and an entry of an earlier attachment must not be read as this
	 * launch's (the backend's ids may start over) */
	if (kpt_g.corr) {
		const struct kpt_nvtx_frame *top = t ? kpt_nvtx_stack_top(&t->st) : NULL;
		uint64_t e = (uint64_t)corr << 32 | (top ? top->id : KPT_NONE);

		atomic_store_explicit(&kpt_g.corr[corr & ((1u << KPT_CORR_BITS) - 1)], e,
				      memory_order_relaxed);
	}
}

/* Capture windows (kpt_inject_trace.c). */
int kpt_core_window_start(struct kpt_diag *d);
void kpt_core_window_profiler(int start); /* cudaProfilerStart (1) / Stop (0) entered */
unsigned kpt_core_window_clock(unsigned ms);
/* A work-API exit on a program thread with a detach pending. */
void kpt_core_detach_maybe(void);
/* On demand: the sampler's poll of the control folder (no lock held). */
void kpt_core_control_poll(void);

/* NVTX events; name is taken (owned, may be NULL on push/start/mark), dom
 * is the domain's handle (0: the default domain). */
void kpt_core_range_push(char *name, uint64_t dom);
void kpt_core_range_pop(uint64_t dom);
/* id: the start/end range's id as NVTX returned it (NULL: none) */
void kpt_core_range_start(char *name, uint64_t dom, const uint64_t *id);
void kpt_core_range_end(uint64_t dom, uint64_t id);
void kpt_core_range_mark(char *name, uint64_t dom);

/* Ranges and NVTX meta into the writer (kpt_inject_trace.c). Under lock. */
int kpt_core_ranges_write(struct kpt_diag *d);
void kpt_core_nvtx_meta(struct kpt_diag *d);
void kpt_core_window_meta(struct kpt_diag *d);

#endif
