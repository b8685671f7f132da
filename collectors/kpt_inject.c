/* kpt_inject.c - libkptinject.so: CUPTI activity collection into one .kpt
 * file per process. The contract (environment, lifecycle) is kpt_inject.h.
 *
 * Threads and locks:
 * - application threads run the CUPTI callbacks (NVTX, API enter, resource)
 *   and the buffer-request callback. On the launch path they never take
 *   g.lock: NVTX ranges go into per-thread logs, launch -> range links into
 *   a lock-free table, and buffers come from a pool allocated up front
 *   (atomic flags). Off it they do, once each: a context's destruction, and
 *   the detach after the last window (detach_maybe holds detlock and takes
 *   g.lock, then winlock, one at a time under it; finish() takes detlock
 *   alone, first; nothing takes detlock under another lock).
 * - CUPTI's worker thread (and whoever calls cuptiActivityFlushAll) runs the
 *   buffer-complete callback, which converts records and hands them to the
 *   writer under g.lock.
 * - the sampler thread polls NVML every KPT_SAMPLE_MS and performs the final
 *   flush when a SIGINT/SIGTERM handler asks it to.
 */
#define _GNU_SOURCE
#include "kpt_inject.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>
#include <generated_nvtx_meta.h>

#include "kpt_counters_cupti.h"
#include "kpt_cupti_convert.h"
#include "kpt_format.h"
#include "kpt_nvml_api.h"
#include "kpt_nvtx_stack.h"
#include "kpt_window.h"

#define KPT_EXPORT __attribute__((visibility("default")))

/* Limits. Past them the collector degrades, never fails the target. */
#define KPT_MAX_DEVICES 64      /* CUDA ordinals recorded; higher: device KPT_NONE */
#define KPT_MAX_CONTEXTS 256    /* contexts whose drops are queried per stream */
#define KPT_POOL_MAX 272        /* activity buffers; then CUPTI drops (counted) */
#define KPT_CORR_BITS 22        /* launch -> range table: 4M entries, 32 MB, made
				   at the first NVTX push; an entry is overwritten
				   4M launches later (its kernel is long flushed) */
#define KPT_NAME_CACHE 4096     /* kernel-name cache slots (direct-mapped) */
#define KPT_RANGE_CHUNK 1024    /* ranges per per-thread log chunk */
#define KPT_API_CBIDS 1024      /* API name cache per domain */

/* ---- per-thread NVTX logs ---------------------------------------------- */

struct range_rec {
	struct kpt_range row;       /* name/domain filled at write time */
	char *name;                 /* owned copy */
	const char *domain;         /* owned by the domain table, NULL default */
};

struct range_chunk {
	struct range_chunk *next;
	_Atomic uint32_t n;
	struct range_rec recs[KPT_RANGE_CHUNK];
};

struct thread_log {
	struct thread_log *next;    /* registry, pushed with CAS */
	uint64_t tid;
	struct kpt_nvtx_stack st;   /* open push/pop ranges, all domains; rec: range_rec */
	struct range_chunk *head, *tail;
};

static __thread struct thread_log *tls_log;

/* ---- devices, contexts ---------------------------------------------------- */

struct dev_slot {
	int used;
	uint32_t index;             /* file device index */
	kpt_nvmlDevice_t nvml;
};

struct ctx_slot {
	uint32_t ctx_id;
	uint32_t ordinal;
	CUcontext ctx;
	int alive;
};

/* ---- the collector -------------------------------------------------------- */

static struct {
	pthread_mutex_t lock;       /* writer, drops, devices, env samples */
	struct kpt_writer *w;
	char path[4096];
	char status[4096];
	int enabled;                /* CUPTI subscribed and collecting */
	int forked_child;
	_Atomic int finished;
	CUpti_SubscriberHandle sub;
	uint32_t pid, ppid, rank;
	uint64_t start_ns;
	uint64_t start_mono;        /* mono_ns() at start_ns: the clock of --delay/--duration */
	int api;
	char *command;

	/* devices by CUDA ordinal */
	pthread_mutex_t devlock;
	struct dev_slot dev[KPT_MAX_DEVICES];
	struct kpt_device rows[KPT_MAX_DEVICES];
	uint32_t ndev;
	struct ctx_slot ctx[KPT_MAX_CONTEXTS];
	uint32_t nctx;

	/* activity buffers */
	size_t buf_size;
	uint8_t *pool[KPT_POOL_MAX];
	_Atomic int busy[KPT_POOL_MAX];
	_Atomic int npool;
	_Atomic uint64_t pool_exhausted;

	/* launch correlation id -> innermost range (corr << 32 | range) */
	_Atomic uint64_t *corr;
	_Atomic int api_cb_on;
	int link;                   /* KPT_RANGE_LINK: 0 api, 1 runtime only, 2 off */
	_Atomic unsigned api_cbs, api_cbs_failed; /* work callbacks listed, failed to switch */
	_Atomic uint32_t next_range;
	_Atomic(struct thread_log *) logs;
	/* NVTX handles (kpt_nvtx_stack.h): domain names by handle (scope 0),
	 * registered strings and open start/end ranges by (domain, handle) */
	struct kpt_nvtx_handles domains, strings, startend;
	_Atomic int nvtx_payload;   /* NVTX payload extension push/pop handled here */

	/* capture window (kpt_window.h): win_set is fixed after start(); the
	 * state and the CUPTI kinds it switches are under winlock */
	int win_set;
	pthread_mutex_t winlock;
	struct kpt_window win;
	int kinds_mask;             /* activity kinds of this run (kpt_inject_kinds bits) */
	int kinds_on;               /* enabled in CUPTI now */
	/* pre-roll (kpt_window.h): the largest launch correlation id the work
	 * callbacks saw (kept only with a pre-roll: preroll_track, fixed after
	 * start()); its periods under prelock, a leaf lock (taken under
	 * winlock and under lock, nothing taken or called while held); the
	 * counts of what ran into a window under lock (record_one) */
	int preroll_track;
	_Atomic uint32_t corr_seen;
	pthread_mutex_t prelock;
	struct kpt_preroll_log prelog;
	int preroll_was;            /* g.win.preroll at the last window_apply (under winlock) */
	/* what the transitions cost the thread that crossed them (under
	 * winlock; meta collector.window_switch*): CLOCK_MONOTONIC ns spent
	 * switching the activity kinds and the work callbacks, and how often
	 * the kinds switched (on or off) */
	uint64_t switch_kinds_ns, switch_cbs_ns, switches;
	int test_off;               /* KPT_WINDOW_TEST_OFF bits (test_off_names) */
	uint64_t kernels_before, kernels_before_ns, memops_before, preroll_dropped;
	/* the work-API callbacks of range links (enable_launch_callbacks),
	 * listed at the first NVTX push; on only inside windows */
	struct work_cb { CUpti_CallbackDomain dom; CUpti_CallbackId cbid; } *work_cbs;
	unsigned nwork_cbs;
	int work_cbs_on;
	/* detach after the last window (kpt_window_done): CUPTI is finalized
	 * at the first work-API exit on a program thread once DETACH_GRACE
	 * has passed since the window closed (the window's work done and its
	 * records flushed by then); see detach_maybe */
	_Atomic int detach;         /* enum detach_state */
	int detach_ok;              /* allowed: a window, not a --delay/--duration one, not KPT_DETACH=0, no counters */
	uint64_t detach_at;         /* mono_ns() from which it may happen */
	uint64_t win_open_mono, win_longest; /* mono_ns() the window opened; its longest */
	int win_was_on;             /* the window's state at the last window_apply */
	uint64_t detached_mono;     /* mono_ns() at the detach */
	int64_t clock_off;          /* CUPTI's clock - mono_ns(), taken when the detach was armed */
	pthread_mutex_t detlock;    /* held through a detach, and by finish() against one;
				     * the outermost lock (g.lock, winlock under it) */

	/* writer-side caches (under lock) */
	struct { const char *p; char *copy; uint32_t id; } name_cache[KPT_NAME_CACHE];
	uint32_t api_names[2][KPT_API_CBIDS];
	uint32_t sync_names[8];

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
	_Atomic uint64_t last_sample_ns; /* now_ns() of the sampler's last NVML sample */
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
	_Atomic int counters;       /* KPT_COUNTERS: range profiler, no activity */
	int counters_mode;          /* KPT_COUNTERS was set (counters may have failed since) */
} g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.devlock = PTHREAD_MUTEX_INITIALIZER,
	.winlock = PTHREAD_MUTEX_INITIALIZER,
	.prelock = PTHREAD_MUTEX_INITIALIZER,
	.detlock = PTHREAD_MUTEX_INITIALIZER,
};

/* The least time between two NVML samples that window openings ask for. */
#define KPT_WINDOW_SAMPLE_GAP_NS 1000000000ull
/* The least time from the last window's closing to the detach
 * (detach_maybe): the window's queued work done, its records complete. */
#define KPT_DETACH_GRACE_NS 2000000000ull
/* ... and the most: a window's queued work is bounded by the launch queue,
 * not by the window's length */
#define KPT_DETACH_GRACE_MAX_NS 10000000000ull

/* NO: not armed; PENDING: armed, waiting for a work-API exit after the
 * grace; BUSY: a thread is detaching; DONE: detached (no CUPTI call from
 * then on); FAILED: cuptiFinalize refused (CUPTI stays); OFF: cancelled
 * (finish() began, or a forked child's inherited state). */
enum detach_state { DETACH_NO = 0, DETACH_PENDING, DETACH_BUSY, DETACH_DONE, DETACH_FAILED, DETACH_OFF };

/* Whether CUPTI may be being finalized or is gone: no CUPTI call then. */
static int cupti_gone(void)
{
	int st = atomic_load_explicit(&g.detach, memory_order_acquire);

	return st == DETACH_BUSY || st == DETACH_DONE;
}

static uint64_t mono_ns(void);

static uint64_t now_ns(void)
{
	uint64_t t = 0;

	/* detaching or detached: no CUPTI call (one would race
	 * cuptiFinalize or attach CUPTI again); CUPTI's clock carried on by
	 * the monotonic clock from the offset taken when the detach was armed */
	if (cupti_gone())
		return (uint64_t)((int64_t)mono_ns() + g.clock_off);
	if (cuptiGetTimestamp(&t) != CUPTI_SUCCESS) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	return t;
}

static unsigned env_uint(const char *name, unsigned dflt, unsigned max)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return dflt;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return dflt;
	return (unsigned)v;
}

/* ---- status file ---------------------------------------------------------- */

static void status_write(const char *line1, const char *line2)
{
	FILE *f;

	if (!g.status[0])
		return;
	f = fopen(g.status, "w");
	if (!f)
		return;
	fprintf(f, "%s\n", line1);
	if (line2 && line2[0])
		fprintf(f, "hint %s\n", line2);
	fclose(f);
}

static void fail(const struct kpt_diag *d)
{
	char line[1200];

	if (g.failed++)
		return;
	g.diag = *d;
	snprintf(line, sizeof line, "error %s %s", kpt_err_name(d->code), d->msg);
	status_write(line, d->hint);
}

static int cupti_err(struct kpt_diag *d, CUptiResult r, const char *what)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		kpt_diag_set(d, KPT_E_BUSY, "another profiler is already attached to process %u (%s)",
			     (unsigned)g.pid, s);
		return kpt_diag_hint(d, "CUPTI allows one tool per process: run without "
				     "Nsight Systems, torch.profiler or another CUPTI tool");
	}
	if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ||
	    r == CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) {
		kpt_diag_set(d, KPT_E_PERM, "insufficient privileges to profile the GPU (%s: %s)", what, s);
		return kpt_diag_hint(d, "run as root, or load the nvidia module with "
				     "NVreg_RestrictProfilingToAdminUsers=0");
	}
	return kpt_diag_set(d, KPT_E_CUPTI, "%s failed: %s", what, s);
}

#define KPT_CUPTI(d, call) \
	do { CUptiResult r_ = (call); \
	     if (r_ != CUPTI_SUCCESS) return cupti_err((d), r_, #call); } while (0)

/* ---- output path ---------------------------------------------------------- */

static char *read_cmdline(void)
{
	FILE *f = fopen("/proc/self/cmdline", "r");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int c;

	if (!f)
		return strdup("");
	while ((c = fgetc(f)) != EOF) {
		if (n + 2 > cap) {
			char *nb = realloc(buf, cap ? cap * 2 : 256);

			if (!nb)
				break;
			buf = nb;
			cap = cap ? cap * 2 : 256;
		}
		buf[n++] = c ? (char)c : ' ';
	}
	fclose(f);
	if (!buf)
		return strdup("");
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return buf;
}

static int paths_init(struct kpt_diag *d)
{
	const char *out = getenv(KPT_ENV_OUTPUT);
	const char *st = getenv(KPT_ENV_STATUS);

	g.status[0] = '\0';
	if (st && *st && kpt_inject_expand(st, g.pid, g.rank, g.status, sizeof g.status) < 0)
		g.status[0] = '\0';
	if (!out || !*out)
		out = "kptprof-%p.kpt";
	if (kpt_inject_expand(out, g.pid, g.rank, g.path, sizeof g.path) < 0)
		return kpt_diag_set(d, KPT_E_INVAL, "bad output pattern '%s' in %s (escapes: %%p %%r %%%%)",
				    out, KPT_ENV_OUTPUT);
	return 0;
}

/* ---- devices ---------------------------------------------------------------- */

static char *xstrdup(const char *s)
{
	char *r = strdup(s ? s : "");

	return r ? r : (char *)"";
}

static void uuid_string(const CUuuid *u, char *out, size_t cap)
{
	const unsigned char *b = (const unsigned char *)u->bytes;

	snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11],
		 b[12], b[13], b[14], b[15]);
}

static int attr(CUdevice dev, CUdevice_attribute a)
{
	int v = 0;

	if (cuDeviceGetAttribute(&v, a, dev) != CUDA_SUCCESS)
		return 0;
	return v;
}

/* File device index for CUDA ordinal; registers the device (properties from
 * the driver API, NVML handle by UUID) on first use. KPT_NONE when the
 * ordinal is out of range. */
static uint32_t device_index(uint32_t ordinal)
{
	struct kpt_device *r;
	CUdevice dev;
	CUuuid uuid;
	char name[256] = "", uuids[64] = "", slug[256];
	size_t mem = 0;
	int drv = 0;
	uint32_t idx;

	if (ordinal >= KPT_MAX_DEVICES)
		return KPT_NONE;
	if (__atomic_load_n(&g.dev[ordinal].used, __ATOMIC_ACQUIRE))
		return g.dev[ordinal].index;
	pthread_mutex_lock(&g.devlock);
	if (g.dev[ordinal].used) {
		pthread_mutex_unlock(&g.devlock);
		return g.dev[ordinal].index;
	}
	idx = g.ndev++;
	r = &g.rows[idx];
	memset(r, 0, sizeof *r);
	r->index = idx;
	r->cuda_ordinal = ordinal;
	if (cuDeviceGet(&dev, (int)ordinal) == CUDA_SUCCESS) {
		cuDeviceGetName(name, sizeof name, dev);
		if (cuDeviceGetUuid(&uuid, dev) == CUDA_SUCCESS)
			uuid_string(&uuid, uuids, sizeof uuids);
		cuDeviceTotalMem(&mem, dev);
		r->sm_count = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
		r->cc_major = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
		r->cc_minor = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
		r->l2_bytes = (uint64_t)attr(dev, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
		r->sm_clock_max_mhz = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE) / 1000;
		r->mem_clock_max_mhz = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) / 1000;
		r->mem_bus_width_bits = (uint32_t)attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
	}
	if (cuDriverGetVersion(&drv) == CUDA_SUCCESS)
		r->driver_version = (uint32_t)drv;
	{
		/* The program's CUDA runtime, when it links libcudart dynamically
		 * (PyTorch does): by the time a context exists the library is
		 * loaded. A statically linked runtime exports no symbol: 0, unknown. */
		int (*rtver)(int *) = NULL;
		int rv = 0;

		*(void **)&rtver = dlsym(RTLD_DEFAULT, "cudaRuntimeGetVersion");
		if (rtver && rtver(&rv) == 0 && rv > 0)
			r->runtime_version = (uint32_t)rv;
	}
	r->mem_bytes = mem;
	kpt_slug(name, slug, sizeof slug);
	r->name = xstrdup(name);
	r->slug = xstrdup(slug);
	r->uuid = xstrdup(uuids);
	r->driver_string = g.driver_string;
	if (g.nvml_ok && uuids[0])
		g.nvml.nvmlDeviceGetHandleByUUID(uuids, &g.dev[ordinal].nvml);
	g.dev[ordinal].index = idx;
	__atomic_store_n(&g.dev[ordinal].used, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g.devlock);
	return idx;
}

static void context_add(CUcontext ctx)
{
	uint32_t id = 0, ordinal = 0;

	if (cuptiGetContextId(ctx, &id) != CUPTI_SUCCESS || cuptiGetDeviceId(ctx, &ordinal) != CUPTI_SUCCESS)
		return;
	device_index(ordinal);
	pthread_mutex_lock(&g.devlock);
	if (g.nctx < KPT_MAX_CONTEXTS)
		g.ctx[g.nctx++] = (struct ctx_slot){ .ctx_id = id, .ordinal = ordinal, .ctx = ctx, .alive = 1 };
	pthread_mutex_unlock(&g.devlock);
}

static uint32_t context_device(uint32_t ctx_id)
{
	uint32_t ordinal = KPT_NONE;

	pthread_mutex_lock(&g.devlock);
	for (uint32_t i = 0; i < g.nctx; i++)
		if (g.ctx[i].ctx_id == ctx_id)
			ordinal = g.ctx[i].ordinal;
	pthread_mutex_unlock(&g.devlock);
	return ordinal == KPT_NONE ? KPT_NONE : device_index(ordinal);
}

/* ---- drops (under g.lock) ------------------------------------------------- */

static void drop_add(uint32_t device, uint32_t stream, uint64_t count)
{
	if (!count)
		return;
	g.dropped += count;
	for (size_t i = 0; i < g.ndrops; i++)
		if (g.drops[i].device == device && g.drops[i].stream == stream) {
			g.drops[i].count += count;
			return;
		}
	if (g.ndrops == g.capdrops) {
		size_t cap = g.capdrops ? g.capdrops * 2 : 16;
		struct kpt_drop *nd = realloc(g.drops, cap * sizeof *nd);

		if (!nd)
			return;
		g.drops = nd;
		g.capdrops = cap;
	}
	g.drops[g.ndrops++] = (struct kpt_drop){ .process = 0, .device = device, .stream = stream, .count = count };
}

/* Streams whose records we saw, per context, for per-stream drop queries. */
struct stream_seen {
	uint32_t ctx_id, stream;
};
static struct stream_seen *g_streams;
static size_t g_nstreams, g_capstreams;

static void stream_note(uint32_t ctx_id, uint32_t stream)
{
	static uint32_t last_ctx = KPT_NONE, last_stream = KPT_NONE;

	if (ctx_id == last_ctx && stream == last_stream)
		return;
	last_ctx = ctx_id;
	last_stream = stream;
	for (size_t i = 0; i < g_nstreams; i++)
		if (g_streams[i].ctx_id == ctx_id && g_streams[i].stream == stream)
			return;
	if (g_nstreams == g_capstreams) {
		size_t cap = g_capstreams ? g_capstreams * 2 : 32;
		struct stream_seen *ns = realloc(g_streams, cap * sizeof *ns);

		if (!ns)
			return;
		g_streams = ns;
		g_capstreams = cap;
	}
	g_streams[g_nstreams++] = (struct stream_seen){ ctx_id, stream };
}

/* Asks CUPTI for the drops of every known stream of ctx (NULL: the global
 * queue). Under g.lock. */
static void drops_collect(const struct ctx_slot *c)
{
	size_t n = 0;

	if (!c) {
		if (cuptiActivityGetNumDroppedRecords(NULL, 0, &n) == CUPTI_SUCCESS)
			drop_add(KPT_NONE, KPT_NONE, n);
		return;
	}
	for (size_t i = 0; i < g_nstreams; i++) {
		if (g_streams[i].ctx_id != c->ctx_id)
			continue;
		n = 0;
		if (cuptiActivityGetNumDroppedRecords(c->ctx, g_streams[i].stream, &n) == CUPTI_SUCCESS)
			drop_add(device_index(c->ordinal), g_streams[i].stream, n);
	}
}

/* ---- activity buffers ------------------------------------------------------ */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	int n = atomic_load(&g.npool);

	*max_records = 0;
	*size = g.buf_size;
	for (int i = 0; i < n; i++) {
		int zero = 0;

		if (atomic_compare_exchange_strong(&g.busy[i], &zero, 1)) {
			*buffer = g.pool[i];
			return;
		}
	}
	/* Pool exhausted: the consumer is behind. Grow once per slot; past the
	 * cap CUPTI drops records and counts them. */
	n = atomic_fetch_add(&g.npool, 1);
	if (n < KPT_POOL_MAX) {
		uint8_t *b = aligned_alloc(8, g.buf_size);

		if (b) {
			atomic_store(&g.busy[n], 1);
			g.pool[n] = b;
			*buffer = b;
			atomic_fetch_add(&g.pool_exhausted, 1);
			return;
		}
	}
	atomic_store(&g.npool, KPT_POOL_MAX);
	*buffer = NULL;
	*size = 0;
}

static void buffer_release(uint8_t *b)
{
	int n = atomic_load(&g.npool);

	if (n > KPT_POOL_MAX)
		n = KPT_POOL_MAX;
	for (int i = 0; i < n; i++)
		if (g.pool[i] == b) {
			atomic_store(&g.busy[i], 0);
			return;
		}
}

static uint32_t corr_range(uint32_t corr)
{
	uint64_t e;

	if (!g.corr)
		return KPT_NONE;
	e = atomic_load_explicit(&g.corr[corr & ((1u << KPT_CORR_BITS) - 1)], memory_order_relaxed);
	return (uint32_t)(e >> 32) == corr ? (uint32_t)e : KPT_NONE;
}

/* Kernel name -> string id, cached by CUPTI's name pointer (shared by all
 * records of one kernel). The cached copy is compared too: after a module
 * is unloaded CUPTI may hand the same address to another name. */
static uint32_t intern_name(const char *s)
{
	size_t h = ((uintptr_t)s >> 4) % KPT_NAME_CACHE;
	uint32_t id = KPT_NONE;

	if (!s)
		return KPT_NONE;
	if (g.name_cache[h].p == s && g.name_cache[h].copy && strcmp(g.name_cache[h].copy, s) == 0)
		return g.name_cache[h].id;
	if (kpt_writer_intern_cstr(g.w, s, &id, NULL) < 0)
		return KPT_NONE;
	free(g.name_cache[h].copy);
	g.name_cache[h].copy = strdup(s);
	g.name_cache[h].p = s;
	g.name_cache[h].id = id;
	return id;
}

static uint32_t api_name(uint32_t kind, uint32_t cbid)
{
	int dom = kind == KPT_EVENT_DRIVER;
	const char *s = NULL;
	uint32_t id = KPT_NONE;

	if (cbid < KPT_API_CBIDS && g.api_names[dom][cbid])
		return g.api_names[dom][cbid] - 1;
	if (cuptiGetCallbackName(dom ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
				 cbid, &s) != CUPTI_SUCCESS || !s)
		return KPT_NONE;
	if (kpt_writer_intern_cstr(g.w, s, &id, NULL) < 0)
		return KPT_NONE;
	if (cbid < KPT_API_CBIDS)
		g.api_names[dom][cbid] = id + 1;
	return id;
}

static uint32_t sync_name(uint32_t type)
{
	static const char *const names[] = {
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_UNKNOWN] = "sync_unknown",
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE] = "event_synchronize",
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT] = "stream_wait_event",
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE] = "stream_synchronize",
		[CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE] = "context_synchronize",
	};
	uint32_t id = KPT_NONE;

	if (type >= sizeof names / sizeof names[0] || !names[type])
		type = 0;
	if (g.sync_names[type])
		return g.sync_names[type] - 1;
	if (kpt_writer_intern_cstr(g.w, names[type], &id, NULL) < 0)
		return KPT_NONE;
	g.sync_names[type] = id + 1;
	return id;
}

/* Whether rec was launched in a pre-roll (kpt_window.h): such records are
 * not written; of those that ran into the window, kernels and memops are
 * counted with the kernels' time after it opened (meta
 * collector.kernels_before_window...). Under g.lock. */
static int preroll_drop(const CUpti_Activity *rec)
{
	enum kpt_preroll_class c;
	uint32_t corr;
	uint64_t start, end, into = 0;
	int kernel = 0, memop = 0;

	/* every kind traced carries the launch's correlation id and its times */
#define KPT_TIMES(type) do {                                                      \
		const type *x_ = (const type *)rec;                               \
		corr = x_->correlationId, start = x_->start, end = x_->end;       \
	} while (0)
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		KPT_TIMES(CUpti_ActivityKernel10);
		kernel = 1;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		KPT_TIMES(CUpti_ActivityMemcpy6);
		memop = 1;
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		KPT_TIMES(CUpti_ActivityMemcpyPtoP4);
		memop = 1;
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		KPT_TIMES(CUpti_ActivityMemset4);
		memop = 1;
		break;
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		KPT_TIMES(CUpti_ActivitySynchronization2);
		break;
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		KPT_TIMES(CUpti_ActivityAPI);
		break;
	default:
		return 0;
	}
#undef KPT_TIMES
	pthread_mutex_lock(&g.prelock);
	c = kpt_preroll_classify(&g.prelog, corr, start, end, &into);
	pthread_mutex_unlock(&g.prelock);
	if (c == KPT_PREROLL_NOT)
		return 0;
	if (c == KPT_PREROLL_BEFORE && kernel)
		g.preroll_dropped++;
	else if (c == KPT_PREROLL_INTO && kernel)
		g.kernels_before++, g.kernels_before_ns += into;
	else if (c == KPT_PREROLL_INTO && memop)
		g.memops_before++;
	return 1;
}

/* Converts and writes one record. Under g.lock with g.w set. */
static void record_one(const CUpti_Activity *rec)
{
	struct kpt_cupti_ids ids = { .process = 0, .device = KPT_NONE, .name = KPT_NONE,
				     .range = KPT_NONE, .thread = 0 };
	struct kpt_diag d;
	int rc = 0;

	if (g.preroll_track && preroll_drop(rec))
		return;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
		struct kpt_kernel row;

		ids.device = device_index(k->deviceId);
		ids.name = intern_name(k->name);
		ids.range = corr_range(k->correlationId);
		stream_note(k->contextId, k->streamId);
		kpt_cupti_kernel(k, &ids, &row);
		rc = kpt_writer_kernels(g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
		struct kpt_memop row;

		ids.device = device_index(m->deviceId);
		ids.range = corr_range(m->correlationId);
		stream_note(m->contextId, m->streamId);
		kpt_cupti_memcpy(m, &ids, &row);
		rc = kpt_writer_memops(g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
		struct kpt_memop row;

		ids.device = device_index(m->srcDeviceId);
		ids.range = corr_range(m->correlationId);
		kpt_cupti_memcpy_p2p(m, &ids, &row);
		rc = kpt_writer_memops(g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
		struct kpt_memop row;

		ids.device = device_index(m->deviceId);
		ids.range = corr_range(m->correlationId);
		stream_note(m->contextId, m->streamId);
		kpt_cupti_memset(m, &ids, &row);
		rc = kpt_writer_memops(g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)rec;
		struct kpt_event row;

		ids.device = context_device(s->contextId);
		ids.name = sync_name((uint32_t)s->type);
		kpt_cupti_sync(s, &ids, &row);
		rc = kpt_writer_events(g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
		uint32_t kind = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER ? KPT_EVENT_DRIVER : KPT_EVENT_RUNTIME;
		struct kpt_event row;

		ids.name = api_name(kind, (uint32_t)a->cbid);
		kpt_cupti_api(a, kind, &ids, &row);
		rc = kpt_writer_events(g.w, &row, 1, &d);
		break;
	}
	default:
		break;
	}
	if (rc < 0)
		fail(&d);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;

	pthread_mutex_lock(&g.lock);
	if (g.w && !g.forked_child)
		while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
			record_one(rec);
	drops_collect(NULL);
	pthread_mutex_unlock(&g.lock);
	buffer_release(buffer);
}

/* ---- capture windows (kpt_window.h) ------------------------------------ */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* KPT_WINDOW_TEST_OFF (kpt_window.h): parts of the collector a
 * measurement turns off, to attribute a capture window's cost. */
enum {
	KPT_TEST_OFF_NVML = 1,      /* no NVML sample at all, in windows either */
	KPT_TEST_OFF_CALLBACKS = 2, /* no work callbacks: no range links, no pre-roll */
	KPT_TEST_OFF_KINDS = 4,     /* activity never enabled: windows open and close, nothing is traced */
};
static const struct { const char *name; int bit; } test_off_names[] = {
	{ "nvml", KPT_TEST_OFF_NVML },
	{ "callbacks", KPT_TEST_OFF_CALLBACKS },
	{ "kinds", KPT_TEST_OFF_KINDS },
};

/* The bits of a comma list of test_off_names; unknown words are ignored
 * (a test knob: the meta collector.window_test_off shows what was set). */
static int test_off_parse(const char *s)
{
	int bits = 0;

	while (s && *s) {
		size_t n = strcspn(s, ",");

		for (size_t i = 0; i < sizeof test_off_names / sizeof test_off_names[0]; i++)
			if (strlen(test_off_names[i].name) == n && strncmp(s, test_off_names[i].name, n) == 0)
				bits |= test_off_names[i].bit;
		s += n + (s[n] == ',');
	}
	return bits;
}

/* Turns the work callbacks on or off (off outside a capture window: they
 * are not needed to find the next one). Under winlock. */
static void work_callbacks_switch(int on)
{
	unsigned failed = 0;
	uint64_t t0;

	if (!g.work_cbs || g.work_cbs_on == on)
		return;
	t0 = mono_ns();
	g.work_cbs_on = on;
	for (unsigned i = 0; i < g.nwork_cbs; i++)
		if (cuptiEnableCallback(on, g.sub, g.work_cbs[i].dom, g.work_cbs[i].cbid) != CUPTI_SUCCESS)
			failed++;
	atomic_fetch_add(&g.api_cbs_failed, failed);
	g.switch_cbs_ns += mono_ns() - t0;
}

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
static const CUpti_ActivityKind api_kinds[] = {
	CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};

/* Turns the run's activity kinds (and API kinds with KPT_API) on or off in
 * CUPTI. Under winlock, or before any other thread can see g. Records of
 * work launched while the kinds are off never exist: CUPTI decides at
 * launch; work launched while on is recorded when it completes. */
static int kinds_switch(int on, struct kpt_diag *d)
{
	CUptiResult (*fn)(CUpti_ActivityKind) = on ? cuptiActivityEnable : cuptiActivityDisable;
	uint64_t t0;

	if (on == g.kinds_on)
		return 0;
	g.kinds_on = on;
	g.switches++;
	work_callbacks_switch(on);
	if (g.test_off & KPT_TEST_OFF_KINDS)
		return 0;
	t0 = mono_ns();
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (g.kinds_mask & 1 << i)
			KPT_CUPTI(d, fn(kinds[i]));
	if (g.api)
		for (size_t i = 0; i < sizeof api_kinds / sizeof api_kinds[0]; i++)
			KPT_CUPTI(d, fn(api_kinds[i]));
	g.switch_kinds_ns += mono_ns() - t0;
	return 0;
}

/* Applies the window's state after an event (on is its result; the kinds
 * follow kpt_window_tracing: in a window or its pre-roll). A pre-roll
 * period begins or ends here; it ends with the window's opening time when
 * the window opened. Called with winlock held. A CUPTI failure is
 * reported and recording goes on. */
static void window_apply(int on)
{
	struct kpt_diag d;
	int pre = g.win.preroll;

	kpt_diag_clear(&d);
	if (on && !g.win_was_on)
		g.win_open_mono = mono_ns();
	else if (!on && g.win_was_on && mono_ns() - g.win_open_mono > g.win_longest)
		g.win_longest = mono_ns() - g.win_open_mono;
	g.win_was_on = on;
	if (g.preroll_track && pre != g.preroll_was) {
		uint32_t seen = atomic_load_explicit(&g.corr_seen, memory_order_relaxed);
		uint64_t t = on ? now_ns() : UINT64_MAX;

		pthread_mutex_lock(&g.prelock);
		if (pre && kpt_preroll_begin(&g.prelog, seen) < 0)
			kpt_diag_set(&d, KPT_E_NOMEM, "out of memory for the pre-roll of a capture window");
		else if (!pre)
			kpt_preroll_end(&g.prelog, seen, t);
		pthread_mutex_unlock(&g.prelock);
		g.preroll_was = pre;
		if (d.code < 0)
			fail(&d);
		kpt_diag_clear(&d);
	}
	if (kinds_switch(kpt_window_tracing(&g.win), &d) < 0)
		fail(&d);
	/* The last window closed: detach once its work is done (detach_maybe);
	 * a work-API exit on a program thread does it, so the work callbacks
	 * stay on until then */
	if (g.detach_ok && !g.kinds_on && g.work_cbs && atomic_load(&g.detach) == DETACH_NO &&
	    kpt_window_done(&g.win)) {
		uint64_t grace = 4 * g.win_longest;

		grace = grace < KPT_DETACH_GRACE_NS ? KPT_DETACH_GRACE_NS : grace > KPT_DETACH_GRACE_MAX_NS ? KPT_DETACH_GRACE_MAX_NS : grace;
		g.clock_off = (int64_t)now_ns() - (int64_t)mono_ns();
		g.detach_at = mono_ns() + grace;
		work_callbacks_switch(1);
		atomic_store_explicit(&g.detach, DETACH_PENDING, memory_order_release);
	}
	/* NVML follows the tracing: the sampler skips its queries between
	 * windows and is woken at an opening for one sample at once (a window
	 * of a few ms would otherwise often hold none), at most once a second:
	 * fewer queries beside the program's launches (1 step in 20 of a 3.3 ms
	 * step read +1.2% with a sample at every opening and +0.0% with none on
	 * one H100, no difference on another: bench/RESULTS.md) */
	if (atomic_exchange(&g.sample_on, g.kinds_on) != g.kinds_on && g.kinds_on && g.sampler_on &&
	    now_ns() - atomic_load(&g.last_sample_ns) >= KPT_WINDOW_SAMPLE_GAP_NS)
		sem_post(&g.wake);
}

/* cudaProfilerStart/Stop, runtime and driver: the cudaProfilerApi window */
static const struct {
	CUpti_CallbackDomain dom;
	CUpti_CallbackId cbid;
	int start;
} profiler_calls[] = {
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, 1 },
	{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, 0 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, 1 },
	{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, 0 },
};

/* cudaProfilerStart/Stop entered (cudaProfilerApi window). */
static void window_profiler(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < sizeof profiler_calls / sizeof profiler_calls[0]; i++)
		if (profiler_calls[i].dom == domain && profiler_calls[i].cbid == cbid) {
			pthread_mutex_lock(&g.winlock);
			window_apply(kpt_window_profiler(&g.win, profiler_calls[i].start));
			pthread_mutex_unlock(&g.winlock);
			return;
		}
}

/* The clock of a --delay/--duration window: applies it and returns how
 * many ms the sampler may wait before the next change (at most ms). It
 * runs on the sampler thread and reads the monotonic clock, not CUPTI's
 * (no CUPTI call on this thread but the window's own switches); once the
 * window is done nothing is left to apply. */
static unsigned window_clock(unsigned ms)
{
	uint64_t t, next;

	if (!g.win_set || !g.win.spec.timed || cupti_gone())
		return ms;
	t = mono_ns() - g.start_mono;
	pthread_mutex_lock(&g.winlock);
	if (kpt_window_done(&g.win)) {
		pthread_mutex_unlock(&g.winlock);
		return ms;
	}
	window_apply(kpt_window_clock(&g.win, t));
	next = kpt_window_next_tick(&g.win, t);
	pthread_mutex_unlock(&g.winlock);
	if (next != UINT64_MAX && (next - t) / 1000000u + 1 < ms)
		ms = (unsigned)((next - t) / 1000000u + 1);
	return ms;
}

static int window_start(struct kpt_diag *d)
{
	struct kpt_window_spec spec;
	const char *pre;
	int rc;

	if ((rc = kpt_window_parse(getenv(KPT_ENV_WINDOW_CAPTURE), getenv(KPT_ENV_WINDOW_STEPS),
				   getenv(KPT_ENV_WINDOW_EVERY), getenv(KPT_ENV_WINDOW_DELAY),
				   getenv(KPT_ENV_WINDOW_DURATION), &spec, d)) < 0)
		return rc;
	/* A pre-roll's records are told from the window's by the correlation
	 * ids the work callbacks see: all launches only with the driver's
	 * (KPT_RANGE_LINK=api, the default; runtime would miss cuBLAS's, off
	 * sees none). */
	if (g.link != 0 || ((pre = getenv(KPT_ENV_WINDOW_PREROLL)) && strcmp(pre, "0") == 0))
		spec.preroll = 0;
	g.win_set = kpt_window_is_set(&spec);
	/* Not after a --delay/--duration window: the sampler thread switches
	 * those (window_clock), and a cuptiFinalize after such a window
	 * crashed the program inside CUPTI at the detach in 7 of 26 runs on
	 * H100s (CUDA 13.0), while the windows that program threads switch
	 * (nvtx --steps, the same program, short or 100k-kernel windows)
	 * detached in 27 of 27 (bench/RESULTS.md, "The detach after a timed
	 * window crashed the program") */
	g.detach_ok = g.win_set && !spec.timed && !g.counters_mode &&
		      !((pre = getenv(KPT_ENV_WINDOW_DETACH)) && strcmp(pre, "0") == 0);
	g.preroll_track = spec.preroll;
	kpt_window_init(&g.win, &spec);
	if (spec.trigger == KPT_WINDOW_PROFILER_API)
		for (size_t i = 0; i < sizeof profiler_calls / sizeof profiler_calls[0]; i++)
			KPT_CUPTI(d, cuptiEnableCallback(1, g.sub, profiler_calls[i].dom, profiler_calls[i].cbid));
	if ((rc = kinds_switch(g.win.on, d)) < 0)
		return rc;
	atomic_store(&g.sample_on, g.kinds_on);
	return 0;
}

/* ---- NVTX ------------------------------------------------------------------ */

/* A range opening or closing, for an NVTX capture window (the window's
 * spec is fixed after start(): its name is compared without the lock). */
static void window_range(const struct range_rec *r, int open)
{
	const struct kpt_window_spec *s = &g.win.spec;

	if (!g.win_set || s->trigger != KPT_WINDOW_NVTX || !r || strcmp(r->name, s->range) != 0)
		return;
	pthread_mutex_lock(&g.winlock);
	window_apply(open ? kpt_window_range_open(&g.win, r->name, r->domain) :
			    kpt_window_range_close(&g.win, r->name, r->domain));
	pthread_mutex_unlock(&g.winlock);
}

static struct thread_log *thread_log(void)
{
	struct thread_log *t = tls_log, *head;

	if (t)
		return t;
	t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tid = (uint64_t)syscall(SYS_gettid);
	head = atomic_load(&g.logs);
	do
		t->next = head;
	while (!atomic_compare_exchange_weak(&g.logs, &head, t));
	tls_log = t;
	return t;
}

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
		s = kpt_nvtx_handles_get(&g.strings, domain, (uint64_t)(uintptr_t)a->message.registered, 0);
		return s ? strdup(s) : strdup("(registered string)");
	case NVTX_MESSAGE_TYPE_UNICODE:
		return strdup("(wide string)");
	default:
		return strdup("");
	}
}

/* Enables the callbacks of dom for the API calls that start GPU work
 * (kpt_inject_is_work_api: launches, graph launches, memcpy, memset), to
 * link their correlation ids to the innermost NVTX range. Every enabled
 * id costs its calls a pass through CUPTI's dispatch: PyTorch makes
 * several other runtime calls per op (cudaGetDevice, cudaStreamIsCapturing,
 * event records), which the whole runtime domain, enabled here before,
 * sent through it for nothing. Returns how many; failures into *failed. */
/* Appends to g.work_cbs the ids of dom for the API calls that start GPU
 * work (kpt_inject_is_work_api: launches, graph launches, memcpy, memset).
 * Their callbacks link correlation ids to the innermost NVTX range. Every
 * enabled id costs its calls a pass through CUPTI's dispatch: PyTorch
 * makes several other runtime calls per op (cudaGetDevice,
 * cudaStreamIsCapturing, event records), which the whole runtime domain,
 * enabled here before, sent through it for nothing. */
static void collect_work_callbacks(struct work_cb *out, unsigned *n, CUpti_CallbackDomain dom, uint32_t ncbid)
{
	for (uint32_t cbid = 1; cbid < ncbid; cbid++) {
		const char *name = NULL;

		if (cuptiGetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
			continue;
		if (kpt_inject_is_work_api(name))
			out[(*n)++] = (struct work_cb){ .dom = dom, .cbid = cbid };
	}
}

static void enable_launch_callbacks(void)
{
	_Atomic uint64_t *t;
	struct work_cb *cbs;
	unsigned n = 0;

	if (atomic_exchange(&g.api_cb_on, 1))
		return;
	if (g.link == 2)
		return;
	t = calloc((size_t)1 << KPT_CORR_BITS, sizeof *t);
	cbs = calloc(CUPTI_RUNTIME_TRACE_CBID_SIZE + CUPTI_DRIVER_TRACE_CBID_SIZE, sizeof *cbs);
	if (!t || !cbs) {
		free(t);
		free(cbs);
		return;
	}
	g.corr = t;
	collect_work_callbacks(cbs, &n, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
	if (g.link == 0)
		collect_work_callbacks(cbs, &n, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
	atomic_store(&g.api_cbs, n);
	pthread_mutex_lock(&g.winlock);
	g.work_cbs = cbs;
	g.nwork_cbs = n;
	work_callbacks_switch(!g.win_set || g.kinds_on);
	pthread_mutex_unlock(&g.winlock);
}

static struct range_rec *range_new(struct thread_log *t, uint32_t kind, char *name, const char *domain)
{
	struct range_chunk *c = t->tail;
	struct range_rec *r;
	uint32_t n;

	if (!c || atomic_load_explicit(&c->n, memory_order_relaxed) == KPT_RANGE_CHUNK) {
		struct range_chunk *nc = malloc(sizeof *nc);

		if (!nc) {
			free(name);
			return NULL;
		}
		nc->next = NULL;
		atomic_init(&nc->n, 0);
		if (c)
			c->next = nc;
		else
			t->head = nc;
		t->tail = nc;
		c = nc;
	}
	n = atomic_load_explicit(&c->n, memory_order_relaxed);
	r = &c->recs[n];
	memset(r, 0, sizeof *r);
	r->row.id = atomic_fetch_add(&g.next_range, 1);
	r->row.parent = kpt_nvtx_stack_top(&t->st) ? kpt_nvtx_stack_top(&t->st)->id : KPT_NONE;
	r->row.kind = kind;
	r->row.thread = t->tid;
	r->row.start_ns = now_ns();
	r->row.end_ns = kind == KPT_RANGE_MARK ? r->row.start_ns : 0;
	r->name = name ? name : strdup("");
	r->domain = domain;
	atomic_store_explicit(&c->n, n + 1, memory_order_release);
	return r;
}

static uint64_t dom_key(nvtxDomainHandle_t h)
{
	return (uint64_t)(uintptr_t)h;
}

/* The name of a domain handle (owned by the domain table), NULL for the
 * default domain or one created before collection started. */
static const char *dom_name(uint64_t dom)
{
	return dom ? kpt_nvtx_handles_get(&g.domains, 0, dom, 0) : NULL;
}

/* Opens a push/pop range of domain on this thread; takes name. */
static void nvtx_push(char *name, uint64_t dom)
{
	struct thread_log *t = thread_log();
	struct range_rec *r;

	if (!t) {
		free(name);
		return;
	}
	enable_launch_callbacks();
	/* without a record (out of memory) the frame still keeps the nesting */
	r = range_new(t, KPT_RANGE_PUSHPOP, name, dom_name(dom));
	kpt_nvtx_stack_push(&t->st, dom, r ? r->row.id : KPT_NONE, r);
	window_range(r, 1);
}

/* Closes the innermost open range of domain on this thread, and the ranges
 * of other domains opened inside it (kpt_nvtx_stack.h). */
static void nvtx_pop(uint64_t dom)
{
	struct thread_log *t = thread_log();
	const struct kpt_nvtx_frame *c;
	uint64_t now;
	size_t n;

	if (!t || !(n = kpt_nvtx_stack_pop(&t->st, dom, &c)))
		return;
	now = now_ns();
	for (size_t i = 0; i < n; i++)
		if (c[i].rec) {
			__atomic_store_n(&((struct range_rec *)c[i].rec)->row.end_ns, now, __ATOMIC_RELAXED);
			window_range(c[i].rec, 0);
		}
}

/* Opens a start/end range; its end may come from any thread. */
static void nvtx_start(char *name, uint64_t dom, const void *ret)
{
	struct thread_log *t = thread_log();
	struct range_rec *r;

	if (!t) {
		free(name);
		return;
	}
	r = range_new(t, KPT_RANGE_STARTEND, name, dom_name(dom));
	if (r && ret)
		kpt_nvtx_handles_put(&g.startend, dom, *(const nvtxRangeId_t *)ret, r);
	window_range(r, 1);
}

static void nvtx_end(uint64_t dom, nvtxRangeId_t id)
{
	struct range_rec *r = kpt_nvtx_handles_get(&g.startend, dom, id, 1);

	if (r) {
		__atomic_store_n(&r->row.end_ns, now_ns(), __ATOMIC_RELAXED);
		window_range(r, 0);
	}
}

static void nvtx_mark(char *name, uint64_t dom)
{
	struct thread_log *t = thread_log();

	if (!t) {
		free(name);
		return;
	}
	range_new(t, KPT_RANGE_MARK, name, dom_name(dom));
}

static char *msg_copy(const char *m)
{
	return strdup(m ? m : "");
}

static void nvtx_callback(CUpti_CallbackId cbid, const CUpti_NvtxData *nd)
{
	const void *p = nd->functionParams;
	const void *ret = nd->functionReturnValue;

	switch (cbid) {
	case CUPTI_CBID_NVTX_nvtxRangePushA:
		nvtx_push(msg_copy(((const nvtxRangePushA_params *)p)->message), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushW:
		nvtx_push(strdup("(wide string)"), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxRangePushEx:
		nvtx_push(attr_message(((const nvtxRangePushEx_params *)p)->eventAttrib, 0), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
		const nvtxDomainRangePushEx_params *q = p;

		nvtx_push(attr_message(q->core.eventAttrib, dom_key(q->domain)), dom_key(q->domain));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangePop:
		nvtx_pop(0);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangePop:
		nvtx_pop(dom_key(((const nvtxDomainRangePop_params *)p)->domain));
		break;
	case CUPTI_CBID_NVTX_nvtxMarkA:
		nvtx_mark(msg_copy(((const nvtxMarkA_params *)p)->message), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxMarkW:
		nvtx_mark(strdup("(wide string)"), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxMarkEx:
		nvtx_mark(attr_message(((const nvtxMarkEx_params *)p)->eventAttrib, 0), 0);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainMarkEx: {
		const nvtxDomainMarkEx_params *q = p;

		nvtx_mark(attr_message(q->core.eventAttrib, dom_key(q->domain)), dom_key(q->domain));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangeStartA:
		nvtx_start(msg_copy(((const nvtxRangeStartA_params *)p)->message), 0, ret);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartW:
		nvtx_start(strdup("(wide string)"), 0, ret);
		break;
	case CUPTI_CBID_NVTX_nvtxRangeStartEx:
		nvtx_start(attr_message(((const nvtxRangeStartEx_params *)p)->eventAttrib, 0), 0, ret);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
		const nvtxDomainRangeStartEx_params *q = p;

		nvtx_start(attr_message(q->core.eventAttrib, dom_key(q->domain)), dom_key(q->domain), ret);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxRangeEnd:
		nvtx_end(0, ((const nvtxRangeEnd_params *)p)->id);
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRangeEnd: {
		const nvtxDomainRangeEnd_params *q = p;

		nvtx_end(dom_key(q->domain), q->core.id);
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainCreateA:
		if (ret)
			kpt_nvtx_handles_put(&g.domains, 0, dom_key(*(const nvtxDomainHandle_t *)ret),
					     xstrdup(((const nvtxDomainCreateA_params *)p)->name));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainCreateW:
		if (ret)
			kpt_nvtx_handles_put(&g.domains, 0, dom_key(*(const nvtxDomainHandle_t *)ret),
					     xstrdup("(wide string)"));
		break;
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringA: {
		const nvtxDomainRegisterStringA_params *q = p;

		if (ret)
			kpt_nvtx_handles_put(&g.strings, dom_key(q->domain),
					     (uint64_t)(uintptr_t)*(const nvtxStringHandle_t *)ret, xstrdup(q->string));
		break;
	}
	case CUPTI_CBID_NVTX_nvtxDomainRegisterStringW: {
		const nvtxDomainRegisterStringW_params *q = p;

		if (ret)
			kpt_nvtx_handles_put(&g.strings, dom_key(q->domain),
					     (uint64_t)(uintptr_t)*(const nvtxStringHandle_t *)ret, xstrdup("(wide string)"));
		break;
	}
	default:
		break;
	}
}

/* ---- CUPTI callbacks -------------------------------------------------------- */

static void flush_cupti(void)
{
	if (g.enabled && !g.forked_child && !cupti_gone())
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* ---- counters mode (kpt_counters_cupti.h) ----------------------------------- */

/* A counters failure is reported once and ends counter collection; the
 * target runs on. */
static void counters_fail(const struct kpt_diag *d)
{
	atomic_store(&g.counters, 0);
	kpt_ccount_abandon();
	fail(d);
}

/* The driver launches a counters pass hooks (start() enables exactly
 * these): kernel launches are profiled, one auto range each, unless they
 * go into a capturing stream (they run later, inside a graph); graph
 * launches pause the profiler (kpt_ccount_pause). The stream comes from
 * the call's parameters: at an offset, or in a CUlaunchConfig. */
enum launch_kind { LAUNCH_KERNEL, LAUNCH_KERNEL_EX, LAUNCH_GRAPH };
static const struct {
	CUpti_CallbackId cbid;
	enum launch_kind kind;
	size_t stream_off;          /* LAUNCH_KERNEL, LAUNCH_GRAPH */
} counter_launches[] = {
	{ CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, LAUNCH_KERNEL, offsetof(cuLaunchKernel_params, hStream) },
	{ CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, LAUNCH_KERNEL, offsetof(cuLaunchKernel_ptsz_params, hStream) },
	{ CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, LAUNCH_KERNEL,
	  offsetof(cuLaunchCooperativeKernel_params, hStream) },
	{ CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, LAUNCH_KERNEL_EX, 0 },
	{ CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, LAUNCH_KERNEL_EX, 0 },
	{ CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, LAUNCH_GRAPH, offsetof(cuGraphLaunch_params, hStream) },
	{ CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, LAUNCH_GRAPH, offsetof(cuGraphLaunch_ptsz_params, hStream) },
};
#define KPT_COUNTER_LAUNCHES (sizeof counter_launches / sizeof counter_launches[0])

static int stream_capturing(size_t i, const void *params)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUstream s;

	if (!params)
		return 0;
	if (counter_launches[i].kind == LAUNCH_KERNEL_EX) {
		const CUlaunchConfig *cfg = ((const cuLaunchKernelEx_params *)params)->config;

		if (!cfg)
			return 0;
		s = cfg->hStream;
	} else {
		memcpy(&s, (const char *)params + counter_launches[i].stream_off, sizeof s);
	}
	/* allowed during global capture; a failure reads as not capturing */
	return cuStreamIsCapturing(s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE;
}

static void counters_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cd)
{
	struct kpt_diag d;
	uint32_t ordinal = 0;
	size_t i;
	int rc = 0, enter = cd->callbackSite == CUPTI_API_ENTER;

	for (i = 0; i < KPT_COUNTER_LAUNCHES && counter_launches[i].cbid != cbid; i++)
		;
	if (i == KPT_COUNTER_LAUNCHES || !cd->context)
		return;
	kpt_diag_clear(&d);
	if (counter_launches[i].kind == LAUNCH_GRAPH) {
		rc = enter ? kpt_ccount_pause(cd->context, &d) : kpt_ccount_resume(cd->context, &d);
	} else if (stream_capturing(i, cd->functionParams)) {
		if (enter)
			kpt_ccount_captured();
	} else if (enter) {
		if (cuptiGetDeviceId(cd->context, &ordinal) != CUPTI_SUCCESS)
			return;
		rc = kpt_ccount_launch_enter(cd->context, device_index(ordinal), ordinal, &d);
	} else {
		rc = kpt_ccount_launch_exit(cd->context, cd->symbolName, &d);
	}
	if (rc < 0)
		counters_fail(&d);
}

static void counters_context_end(CUcontext ctx)
{
	struct kpt_diag d;

	kpt_diag_clear(&d);
	if (kpt_ccount_context_end(ctx, &d) < 0)
		counters_fail(&d);
}

/* Detaches CUPTI after the last window (kpt_window_done), at the exit of a
 * work API on a program thread, where CUPTI's documentation of
 * cuptiFinalize asks for it, once KPT_DETACH_GRACE_NS (or 4 x the longest
 * window, at most KPT_DETACH_GRACE_MAX_NS) has passed since the window
 * closed (one thread: detlock; finish() cancels a pending one): the work it launched is
 * done by then (a kernel of the window still running at the detach would
 * be lost; the meta says when it happened), its records are flushed here,
 * the drop counts taken (under g.lock: once, on one thread, so a program
 * thread takes it here). Why: with the kinds disabled, each later launch
 * still paid about 20% more host time than without CUPTI on an H100
 * (kpt-launch-bench, bench/RESULTS.md); after cuptiFinalize, +0.8%
 * [-3.6, +5.3]. Later NVTX ranges are not recorded (no window needs
 * them); ranges open at the detach stay open in the file. */
static void detach_maybe(void)
{
	int pend = DETACH_PENDING;
	CUptiResult r;

	if (g.forked_child || mono_ns() < g.detach_at || pthread_mutex_trylock(&g.detlock) != 0)
		return;
	if (!atomic_compare_exchange_strong(&g.detach, &pend, DETACH_BUSY)) {
		pthread_mutex_unlock(&g.detlock);
		return;
	}
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_lock(&g.lock);
	drops_collect(NULL);
	for (uint32_t i = 0; i < g.nctx; i++)
		if (g.ctx[i].alive)
			drops_collect(&g.ctx[i]);
	pthread_mutex_unlock(&g.lock);
	g.detached_mono = mono_ns();
	r = cuptiFinalize();
	if (r != CUPTI_SUCCESS) {
		pthread_mutex_lock(&g.winlock);
		work_callbacks_switch(0);
		pthread_mutex_unlock(&g.winlock);
	}
	atomic_store_explicit(&g.detach, r == CUPTI_SUCCESS ? DETACH_DONE : DETACH_FAILED, memory_order_release);
	pthread_mutex_unlock(&g.detlock);
}

static void CUPTIAPI callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			      const void *data)
{
	if (domain == CUPTI_CB_DOMAIN_NVTX) {
		nvtx_callback(cbid, data);
		return;
	}
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		const CUpti_CallbackData *cd = data;
		struct thread_log *t = tls_log;

		if (domain == CUPTI_CB_DOMAIN_DRIVER_API && atomic_load(&g.counters))
			counters_launch(cbid, cd);
		if (cd->callbackSite != CUPTI_API_ENTER) {
			if (atomic_load_explicit(&g.detach, memory_order_acquire) == DETACH_PENDING)
				detach_maybe();
			return;
		}
		if (g.preroll_track) {
			/* the largest id so far (ids increase; threads race) */
			uint32_t seen = atomic_load_explicit(&g.corr_seen, memory_order_relaxed);

			while ((int32_t)(cd->correlationId - seen) > 0 &&
			       !atomic_compare_exchange_weak_explicit(&g.corr_seen, &seen, cd->correlationId,
								      memory_order_relaxed, memory_order_relaxed))
				;
		}
		if (g.win_set && g.win.spec.trigger == KPT_WINDOW_PROFILER_API)
			window_profiler(domain, cbid);
		if (t && g.corr && kpt_nvtx_stack_top(&t->st)) {
			uint64_t e = (uint64_t)cd->correlationId << 32 | kpt_nvtx_stack_top(&t->st)->id;

			atomic_store_explicit(&g.corr[cd->correlationId & ((1u << KPT_CORR_BITS) - 1)], e,
					      memory_order_relaxed);
		}
		return;
	}
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *rd = data;

		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			context_add(rd->context);
		} else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			if (atomic_load(&g.counters))
				counters_context_end(rd->context);
			flush_cupti();
			pthread_mutex_lock(&g.lock);
			for (uint32_t i = 0; i < g.nctx; i++)
				if (g.ctx[i].ctx == rd->context && g.ctx[i].alive) {
					drops_collect(&g.ctx[i]);
					g.ctx[i].alive = 0;
				}
			pthread_mutex_unlock(&g.lock);
		}
	}
}

/* ---- NVML sampler and the final write -------------------------------------- */

static int nvml_load(void)
{
	void *so = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!so)
		return -1;
	g.nvml.so = so;
#define KPT_NVML_LOAD(name, ret, args) \
	if (!(*(void **)&g.nvml.name = dlsym(so, #name))) return -1;
	KPT_NVML_FUNCS(KPT_NVML_LOAD)
#undef KPT_NVML_LOAD
	*(void **)&g.nvml_reasons = dlsym(so, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!g.nvml_reasons)
		g.nvml_reasons = g.nvml.nvmlDeviceGetCurrentClocksThrottleReasons;
	if (g.nvml.nvmlInit_v2() != KPT_NVML_SUCCESS)
		return -1;
	g.nvml.nvmlSystemGetDriverVersion(g.driver_string, sizeof g.driver_string);
	return 0;
}

/* One env sample per device in use. Every tick reads what the decision
 * rule filters on (SM clock, throttle reasons) and the power; memory clock
 * and temperature, which move slowly, every KPT_SLOW_EVERY-th tick (the
 * last values are repeated between): each NVML query is an ioctl into the
 * driver, and at 10 ms the sampler's cost showed in the launch overhead
 * (bench/RESULTS.md, Collector). */
#define KPT_SLOW_EVERY 10
static void sample_once(void)
{
	static unsigned tick;
	static struct { unsigned mem_mhz, temp_c; } last[KPT_MAX_DEVICES];
	int slow = tick++ % KPT_SLOW_EVERY == 0;

	atomic_store(&g.last_sample_ns, now_ns());

	for (uint32_t o = 0; o < KPT_MAX_DEVICES; o++) {
		struct kpt_env_sample s = { 0 };
		unsigned v = 0;
		unsigned long long reasons = 0;
		kpt_nvmlDevice_t h;

		if (!__atomic_load_n(&g.dev[o].used, __ATOMIC_ACQUIRE) || !(h = g.dev[o].nvml))
			continue;
		s.t_ns = now_ns();
		s.device = g.dev[o].index;
		s.process = 0;
		if (g.nvml.nvmlDeviceGetClockInfo(h, KPT_NVML_CLOCK_SM, &v) == KPT_NVML_SUCCESS)
			s.sm_mhz = v;
		if (slow || !last[o].mem_mhz) {
			if (g.nvml.nvmlDeviceGetClockInfo(h, KPT_NVML_CLOCK_MEM, &v) == KPT_NVML_SUCCESS)
				last[o].mem_mhz = v;
			if (g.nvml.nvmlDeviceGetTemperature(h, KPT_NVML_TEMPERATURE_GPU, &v) == KPT_NVML_SUCCESS)
				last[o].temp_c = v;
		}
		s.mem_mhz = last[o].mem_mhz;
		s.temp_c = last[o].temp_c;
		if (g.nvml.nvmlDeviceGetPowerUsage(h, &v) == KPT_NVML_SUCCESS)
			s.power_mw = v;
		if (g.nvml_reasons && g.nvml_reasons(h, &reasons) == KPT_NVML_SUCCESS)
			s.throttle = reasons;
		pthread_mutex_lock(&g.lock);
		if (g.nenv == g.capenv) {
			size_t cap = g.capenv ? g.capenv * 2 : 1024;
			struct kpt_env_sample *ne = realloc(g.env, cap * sizeof *ne);

			if (ne) {
				g.env = ne;
				g.capenv = cap;
			}
		}
		if (g.nenv < g.capenv)
			g.env[g.nenv++] = s;
		pthread_mutex_unlock(&g.lock);
	}
}

static void finish(void);

static void *sampler_main(void *arg)
{
	/* Below the program's threads: a sample may come late, a launch
	 * should not wait for a sample. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10); /* best effort */
	for (;;) {
		struct timespec ts;
		unsigned ms = window_clock(g.sample_ms && atomic_load(&g.sample_on) ? g.sample_ms : 1000);

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(ms % 1000) * 1000000L;
		ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		sem_timedwait(&g.wake, &ts);
		if (g.sig_pending) {
			finish();
			g.sig_done = 1;
			return NULL;
		}
		if (atomic_load(&g.stop))
			return NULL;
		if (g.nvml_ok && g.sample_ms && atomic_load(&g.sample_on))
			sample_once();
	}
}

static int ranges_write(struct kpt_diag *d)
{
	for (struct thread_log *t = atomic_load(&g.logs); t; t = t->next)
		for (struct range_chunk *c = t->head; c; c = c->next) {
			uint32_t n = atomic_load_explicit(&c->n, memory_order_acquire);

			for (uint32_t i = 0; i < n; i++) {
				struct kpt_range row = c->recs[i].row;
				int rc;

				row.end_ns = __atomic_load_n(&c->recs[i].row.end_ns, __ATOMIC_RELAXED);
				row.process = 0;
				row.domain = KPT_NONE;
				if ((rc = kpt_writer_intern_cstr(g.w, c->recs[i].name, &row.name, d)) < 0)
					return rc;
				if (c->recs[i].domain &&
				    (rc = kpt_writer_intern_cstr(g.w, c->recs[i].domain, &row.domain, d)) < 0)
					return rc;
				if ((rc = kpt_writer_ranges(g.w, &row, 1, d)) < 0)
					return rc;
			}
		}
	return 0;
}

/* What the range stacks could not follow (kpt_nvtx_stack.h), summed over
 * threads; written only when it happened. */
static void nvtx_meta(struct kpt_diag *d)
{
	uint64_t unmatched = 0, crossed = 0;
	char buf[32];

	for (struct thread_log *t = atomic_load(&g.logs); t; t = t->next) {
		unmatched += atomic_load_explicit(&t->st.unmatched, memory_order_relaxed);
		crossed += atomic_load_explicit(&t->st.crossed, memory_order_relaxed);
	}
	if (unmatched) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)unmatched);
		kpt_writer_meta(g.w, "collector.nvtx_unmatched_pops", buf, d);
	}
	if (crossed) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)crossed);
		kpt_writer_meta(g.w, "collector.nvtx_closed_by_parent", buf, d);
	}
	if (atomic_load(&g.nvtx_payload))
		kpt_writer_meta(g.w, "collector.nvtx_payload", "1", d);
}

/* The capture window and how many times it opened. */
static void window_meta(struct kpt_diag *d)
{
	char buf[2 * KPT_WINDOW_NAME_MAX + 128];

	if (!g.win_set)
		return;
	kpt_window_describe(&g.win.spec, buf, sizeof buf);
	kpt_writer_meta(g.w, "collector.window", buf, d);
	pthread_mutex_lock(&g.winlock);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)g.win.windows);
	pthread_mutex_unlock(&g.winlock);
	kpt_writer_meta(g.w, "collector.windows", buf, d);
	/* what crossing the windows cost the program's threads (issue 22:
	 * attributing a window's overhead); us, summed over the run */
	pthread_mutex_lock(&g.winlock);
	{
		const struct { const char *key; uint64_t v; } sw[] = {
			{ "collector.window_switches", g.switches },
			{ "collector.window_switch_kinds_us", g.switch_kinds_ns / 1000 },
			{ "collector.window_switch_callbacks_us", g.switch_cbs_ns / 1000 },
		};

		for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
			snprintf(buf, sizeof buf, "%llu", (unsigned long long)sw[i].v);
			kpt_writer_meta(g.w, sw[i].key, buf, d);
		}
	}
	pthread_mutex_unlock(&g.winlock);
	if (getenv(KPT_ENV_WINDOW_TEST_OFF))
		kpt_writer_meta(g.w, "collector.window_test_off", getenv(KPT_ENV_WINDOW_TEST_OFF), d);
	switch (g.forked_child ? DETACH_NO : atomic_load(&g.detach)) {
	case DETACH_DONE:
		kpt_writer_meta(g.w, "collector.detached", "1", d);
		snprintf(buf, sizeof buf, "%llu",
			 (unsigned long long)((int64_t)g.detached_mono + g.clock_off - (int64_t)g.start_ns));
		kpt_writer_meta(g.w, "collector.detached_after_ns", buf, d);
		break;
	case DETACH_FAILED:
		kpt_writer_meta(g.w, "collector.detach_failed", "1", d);
		break;
	default:
		break;
	}
	if (!g.preroll_track)
		return;
	/* under g.lock (file_finish): the counts of record_one */
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)g.kernels_before);
	kpt_writer_meta(g.w, "collector.kernels_before_window", buf, d);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)g.kernels_before_ns);
	kpt_writer_meta(g.w, "collector.kernels_before_window_ns", buf, d);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)g.memops_before);
	kpt_writer_meta(g.w, "collector.memops_before_window", buf, d);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)g.preroll_dropped);
	kpt_writer_meta(g.w, "collector.preroll_kernels_dropped", buf, d);
	pthread_mutex_lock(&g.winlock);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)g.win.prerolls);
	pthread_mutex_unlock(&g.winlock);
	kpt_writer_meta(g.w, "collector.prerolls", buf, d);
}

static int file_finish(struct kpt_diag *d)
{
	struct kpt_process p = { 0 };
	char buf[64];
	int rc;

	if (!g.w && (rc = kpt_writer_create(g.path, NULL, &g.w, d)) < 0)
		return rc;
	for (uint32_t i = 0; i < g.ndev; i++)
		if ((rc = kpt_writer_device(g.w, &g.rows[i], d)) < 0)
			return rc;
	p.index = 0;
	p.run = 0;
	p.pid = g.pid;
	p.ppid = g.ppid;
	p.rank = g.rank;
	p.exit_status = INT32_MIN;
	p.start_ns = g.start_ns;
	p.end_ns = now_ns();
	p.dropped = g.dropped;
	if ((rc = kpt_writer_intern_cstr(g.w, g.command ? g.command : "", &p.command, d)) < 0)
		return rc;
	if ((rc = kpt_writer_process(g.w, &p, d)) < 0)
		return rc;
	for (size_t i = 0; i < g.ndrops; i++)
		if ((rc = kpt_writer_drop(g.w, &g.drops[i], d)) < 0)
			return rc;
	/* A counters pass writes no NVTX ranges: merged beside the timing
	 * runs, its kpt:iter ranges would count iterations without kernels. */
	if (!g.counters_mode && (rc = ranges_write(d)) < 0)
		return rc;
	if (g.nenv && (rc = kpt_writer_env(g.w, g.env, g.nenv, d)) < 0)
		return rc;
	kpt_writer_meta(g.w, "command", g.command ? g.command : "", d);
	kpt_writer_meta(g.w, "collector", "libkptinject " KPT_VERSION, d);
	kpt_writer_meta(g.w, "collector.api", g.api ? "1" : "0", d);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)atomic_load(&g.pool_exhausted));
	kpt_writer_meta(g.w, "collector.buffers_grown", buf, d);
	kpt_writer_meta(g.w, "collector.nvml", g.nvml_ok ? "1" : "0", d);
	/* NVTX range links: API callbacks enabled at the first push (0: no
	 * NVTX, no callback); a failure leaves launches without their range */
	snprintf(buf, sizeof buf, "%u", atomic_load(&g.api_cbs));
	kpt_writer_meta(g.w, "collector.api_callbacks", buf, d);
	if (atomic_load(&g.api_cbs_failed)) {
		snprintf(buf, sizeof buf, "%u", atomic_load(&g.api_cbs_failed));
		kpt_writer_meta(g.w, "collector.api_callbacks_failed", buf, d);
	}
	nvtx_meta(d);
	window_meta(d);
	if (atomic_load(&g.counters) && !g.forked_child && (rc = kpt_ccount_write(g.w, 0, d)) < 0)
		return rc;
	if (g.forked_child)
		kpt_writer_meta(g.w, "collector.forked_child", "1", d);
	return kpt_writer_commit(g.w, d);
}

static void finish(void)
{
	struct kpt_diag d;
	char line[4200];
	int rc;

	if (atomic_exchange(&g.finished, 1))
		return;
	if (!g.enabled)
		return;
	/* a detach under way ends first; a pending one is cancelled, so no
	 * thread finalizes CUPTI while this one still calls it */
	pthread_mutex_lock(&g.detlock);
	{
		int pend = DETACH_PENDING;

		atomic_compare_exchange_strong(&g.detach, &pend, DETACH_OFF);
	}
	pthread_mutex_unlock(&g.detlock);
	flush_cupti();
	if (g.sampler_on && !pthread_equal(pthread_self(), g.sampler)) {
		atomic_store(&g.stop, 1);
		sem_post(&g.wake);
		pthread_join(g.sampler, NULL);
		g.sampler_on = 0;
	}
	pthread_mutex_lock(&g.lock);
	if (!g.forked_child && !cupti_gone()) {
		drops_collect(NULL);
		/* The context table only grows; no devlock here: drops_collect
		 * takes it through device_index(). */
		for (uint32_t i = 0; i < g.nctx; i++)
			if (g.ctx[i].alive)
				drops_collect(&g.ctx[i]);
	}
	kpt_diag_clear(&d);
	rc = file_finish(&d);
	kpt_writer_destroy(g.w);
	g.w = NULL;
	pthread_mutex_unlock(&g.lock);
	if (rc < 0) {
		fail(&d);
	} else if (!g.failed) {
		snprintf(line, sizeof line, "ok %s", g.path);
		status_write(line, NULL);
	}
}

/* ---- signals, fork ------------------------------------------------------------ */

static void on_signal(int sig)
{
	struct timespec ts = { 0, 10 * 1000000L };
	struct sigaction *old = sig == SIGINT ? &g.old_int : &g.old_term;

	g.sig_pending = 1;
	if (g.sampler_on) {
		sem_post(&g.wake);
		for (int i = 0; i < 1000 && !g.sig_done; i++)
			nanosleep(&ts, NULL);
	}
	sigaction(sig, old, NULL);
	raise(sig);
}

static void signals_install(void)
{
	static const int sigs[] = { SIGINT, SIGTERM };

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa, *old = sigs[i] == SIGINT ? &g.old_int : &g.old_term;

		if (sigaction(sigs[i], NULL, old) < 0)
			continue;
		/* The target's own handler (or SIG_IGN) stays: it decides whether
		 * the process ends, and a normal exit writes the file. */
		if ((old->sa_flags & SA_SIGINFO) || old->sa_handler != SIG_DFL)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

static void after_fork_child(void)
{
	struct thread_log *t = tls_log;
	struct kpt_diag d;

	if (!g.enabled)
		return;
	/* The parent's writer, buffers and threads belong to the parent: leak
	 * the copies (never destroy: that would unlink the parent's temporary
	 * file), keep only what this child does from now on. */
	g.w = NULL;
	g.forked_child = 1;
	/* the parent's detach is not the child's: a pending or running one is
	 * off here (detach_maybe checks forked_child too); detached stays
	 * detached (no CUPTI call), without the meta */
	if (atomic_load(&g.detach) != DETACH_DONE)
		atomic_store(&g.detach, DETACH_OFF);
	pthread_mutex_init(&g.detlock, NULL);
	g.sampler_on = 0;
	g.ppid = g.pid;
	g.pid = (uint32_t)getpid();
	g.start_ns = now_ns();
	g.start_mono = mono_ns();
	g.nenv = 0;
	g.ndrops = 0;
	g.dropped = 0;
	g.kernels_before = g.kernels_before_ns = g.memops_before = g.preroll_dropped = 0;
	atomic_store(&g.logs, NULL);
	atomic_store(&g.finished, 0);
	pthread_mutex_init(&g.lock, NULL);
	pthread_mutex_init(&g.devlock, NULL);
	pthread_mutex_init(&g.prelock, NULL);
	if (t) {
		t->next = NULL;
		t->head = t->tail = NULL;
		memset(&t->st, 0, sizeof t->st);
		atomic_store(&g.logs, t);
	}
	if (paths_init(&d) < 0)
		g.enabled = 0;
}

/* ---- entry point ---------------------------------------------------------------- */

/* KPT_ACTIVITY_KINDS (a diagnostic knob, docs/cli.md): a comma list of
 * kernel, memcpy, memset, sync; the kinds left out are not enabled. Unset:
 * all. Returns a mask over start()'s kinds[] (memcpy covers MEMCPY and
 * MEMCPY2), or -1 naming a word it does not know. */
static int activity_kinds(struct kpt_diag *d)
{
	const char *s = getenv(KPT_ENV_ACTIVITY_KINDS), *bad = NULL;
	int badlen = 0, mask;

	if (!s)
		return KPT_KINDS_ALL;
	if ((mask = kpt_inject_kinds(s, &bad, &badlen)) < 0)
		return kpt_diag_set(d, KPT_E_INVAL, "KPT_ACTIVITY_KINDS: unknown kind '%.*s' "
				    "(kernel, memcpy, memset, sync)", badlen, bad);
	return mask;
}

static int start(struct kpt_diag *d)
{
	const char *counters = getenv(KPT_ENV_COUNTERS);
	size_t dev_buf = (size_t)env_uint(KPT_ENV_DEVICE_BUFFER_MB, 32, 1024) << 20;
	unsigned nbuf = env_uint(KPT_ENV_BUFFERS, 16, KPT_POOL_MAX);
	int rc;

	g.buf_size = (size_t)env_uint(KPT_ENV_BUFFER_MB, 8, 256) << 20;
	if (g.buf_size == 0)
		g.buf_size = 8u << 20;
	g.api = getenv(KPT_ENV_API) && strcmp(getenv(KPT_ENV_API), "1") == 0;
	g.sample_ms = env_uint(KPT_ENV_SAMPLE_MS, 10, 60000);
	{
		const char *l = getenv(KPT_ENV_RANGE_LINK);

		g.link = !l || !*l || !strcmp(l, "api") ? 0 : !strcmp(l, "runtime") ? 1 : !strcmp(l, "off") ? 2 : 0;
	}
	g.test_off = test_off_parse(getenv(KPT_ENV_WINDOW_TEST_OFF));
	if (g.test_off & KPT_TEST_OFF_CALLBACKS)
		g.link = 2;
	if (g.test_off & KPT_TEST_OFF_NVML)
		g.sample_ms = 0;
	atomic_store(&g.sample_on, 1);
	g.command = read_cmdline();
	if ((rc = paths_init(d)) < 0)
		return rc;
	if ((rc = kpt_writer_create(g.path, NULL, &g.w, d)) < 0)
		return rc;
	for (unsigned i = 0; i < nbuf; i++) {
		if (!(g.pool[i] = aligned_alloc(8, g.buf_size)))
			return kpt_diag_set(d, KPT_E_NOMEM, "cannot allocate %u activity buffers of %zu MB",
					    nbuf, g.buf_size >> 20);
		atomic_store(&g.npool, (int)i + 1);
	}
	KPT_CUPTI(d, cuptiSubscribe(&g.sub, callback, NULL));
	cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	KPT_CUPTI(d, cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE,
					       &(size_t){ sizeof dev_buf }, &dev_buf));
	KPT_CUPTI(d, cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
	if (counters && *counters) {
		/* Counters pass: no activity (replay would distort it and the
		 * timing runs have it); kernel launches set contexts up. */
		if ((rc = kpt_ccount_init(counters, env_uint(KPT_ENV_COUNTERS_RANGES, 1024, 65536), d)) < 0)
			return rc;
		atomic_store(&g.counters, 1);
		g.counters_mode = 1;
		for (size_t i = 0; i < KPT_COUNTER_LAUNCHES; i++)
			KPT_CUPTI(d, cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_DRIVER_API, counter_launches[i].cbid));
	} else {
		/* the timing run: its kinds, on now unless a window waits */
		if ((g.kinds_mask = activity_kinds(d)) < 0)
			return g.kinds_mask;
		if ((rc = window_start(d)) < 0)
			return rc;
	}
	/* Of the resource domain only the two ids callback() handles: the
	 * others (streams, modules, CUDA graph nodes: torch.compile and graph
	 * capture create many) would call in for nothing, windows or not. */
	KPT_CUPTI(d, cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
	KPT_CUPTI(d, cuptiEnableCallback(1, g.sub, CUPTI_CB_DOMAIN_RESOURCE,
					 CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
	KPT_CUPTI(d, cuptiEnableDomain(1, g.sub, CUPTI_CB_DOMAIN_NVTX));
	/* No runtime API callback here: enabling even one makes every launch
	 * pass through CUPTI's callback dispatch. cudaDeviceReset is seen as
	 * CONTEXT_DESTROY_STARTING (flush there). */
	g.enabled = 1;
	return 0;
}

KPT_EXPORT int InitializeInjection(void);
KPT_EXPORT int InitializeInjectionNvtx2(const void *(*get_export_table)(uint32_t));

int InitializeInjection(void)
{
	static int once;
	struct kpt_diag d;

	if (once++)
		return 1;
	kpt_diag_clear(&d);
	g.pid = (uint32_t)getpid();
	g.ppid = (uint32_t)getppid();
	g.rank = kpt_inject_rank();
	g.start_ns = now_ns();
	g.start_mono = mono_ns();
	g.nvml_ok = nvml_load() == 0;
	if (start(&d) < 0) {
		/* Never stop the target: report and let it run unrecorded. */
		if (g.sub) {
			cuptiActivityFlushAll(0);
			cuptiUnsubscribe(g.sub);
		}
		kpt_writer_destroy(g.w);
		g.w = NULL;
		g.enabled = 0;
		fail(&d);
		return 1;
	}
	sem_init(&g.wake, 0, 0);
	if (pthread_create(&g.sampler, NULL, sampler_main, NULL) == 0)
		g.sampler_on = 1;
	signals_install();
	pthread_atfork(NULL, NULL, after_fork_child);
	atexit(finish);
	return 1;
}

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
	if (g.enabled && !cupti_gone())
		nvtx_push(strdup("(payload range)"), dom_key(dom));
	return tls_log ? (int)tls_log->st.depth : 0;
}

static int nvtx_pop_payload(nvtxDomainHandle_t dom, const void *payload, size_t count)
{
	(void)payload;
	(void)count;
	if (g.enabled && !cupti_gone())
		nvtx_pop(dom_key(dom));
	return tls_log ? (int)tls_log->st.depth : 0;
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
	atomic_store(&g.nvtx_payload, 1);
	return 1;
}
