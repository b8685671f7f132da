/* kpt_cupti_backend.c - the CUPTI backend of libkptinject.so (the one row
 * of struct kpt_backend_ops today, kpt_inject_core.h): the subscription and
 * its callbacks, the activity buffers' conversion into the writer, the
 * activity kinds and work-API callbacks a window switches, per-stream drop
 * queries, the device properties, the counters pass's launch hooks, the
 * detach (cuptiFinalize) and the CUDA injection entry point. NVTX does
 * not go through CUPTI: the core is NVTX's tool itself (kpt_nvtx_inject.c).
 */
#define _GNU_SOURCE
#include "kpt_grow.h"
#include "kpt_cupti_backend.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#include "kpt_counters_cupti.h"
#include "kpt_cupti_convert.h"

#define KPT_MAX_CONTEXTS 256    /* contexts whose drops are queried per stream */
#define KPT_NAME_CACHE 4096     /* kernel-name cache slots (direct-mapped) */
#define KPT_API_CBIDS 1024      /* API name cache per domain */

struct ctx_slot {
	uint32_t ctx_id;
	uint32_t ordinal;
	CUcontext ctx;
	int alive;
};

/* The backend's state; the core's is kpt_g (kpt_inject_core.h). */
static struct {
	CUpti_SubscriberHandle sub;
	/* contexts (under kpt_g.devlock; the table only grows) */
	struct ctx_slot ctx[KPT_MAX_CONTEXTS];
	uint32_t nctx;
	/* the work-API callbacks of range links (ops->work_list) */
	struct work_cb { CUpti_CallbackDomain dom; CUpti_CallbackId cbid; } *work_cbs;
	unsigned nwork_cbs;
	/* writer-side caches (under kpt_g.lock) */
	struct { const char *p; char *copy; uint32_t id; } name_cache[KPT_NAME_CACHE];
	uint32_t api_names[2][KPT_API_CBIDS];
	uint32_t sync_names[8];
} cb;

static int cupti_err(struct kpt_diag *d, CUptiResult r, const char *what)
{
	const char *s = NULL;

	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		kpt_diag_set(d, KPT_E_BUSY, "another profiler is already attached to process %u (%s)",
			     (unsigned)kpt_g.pid, s);
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

/* ops->device: the ordinal's properties from the driver API. */
static void cupti_device(uint32_t ordinal, struct kpt_device *r)
{
	CUdevice dev;
	CUuuid uuid;
	char name[256] = "", uuids[64] = "";
	size_t mem = 0;
	int drv = 0;

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
	r->name = kpt_core_strdup(name);
	r->uuid = kpt_core_strdup(uuids);
}

/* ---- contexts and drops ------------------------------------------------------ */

static void context_add(CUcontext ctx)
{
	uint32_t id = 0, ordinal = 0;

	if (cuptiGetContextId(ctx, &id) != CUPTI_SUCCESS || cuptiGetDeviceId(ctx, &ordinal) != CUPTI_SUCCESS)
		return;
	kpt_core_device(ordinal);
	pthread_mutex_lock(&kpt_g.devlock);
	if (cb.nctx < KPT_MAX_CONTEXTS)
		cb.ctx[cb.nctx++] = (struct ctx_slot){ .ctx_id = id, .ordinal = ordinal, .ctx = ctx, .alive = 1 };
	pthread_mutex_unlock(&kpt_g.devlock);
}

static uint32_t context_device(uint32_t ctx_id)
{
	uint32_t ordinal = KPT_NONE;

	pthread_mutex_lock(&kpt_g.devlock);
	for (uint32_t i = 0; i < cb.nctx; i++)
		if (cb.ctx[i].ctx_id == ctx_id)
			ordinal = cb.ctx[i].ordinal;
	pthread_mutex_unlock(&kpt_g.devlock);
	return ordinal == KPT_NONE ? KPT_NONE : kpt_core_device(ordinal);
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
	if (kpt_grow(&g_streams, &g_capstreams, g_nstreams + 1, sizeof *g_streams) < 0)
		return;
	g_streams[g_nstreams++] = (struct stream_seen){ ctx_id, stream };
}

/* Asks CUPTI for the drops of every known stream of ctx (NULL: the global
 * queue). Under kpt_g.lock. */
static void drops_collect(const struct ctx_slot *c)
{
	size_t n = 0;

	if (!c) {
		if (cuptiActivityGetNumDroppedRecords(NULL, 0, &n) == CUPTI_SUCCESS)
			kpt_core_drop_add(KPT_NONE, KPT_NONE, n);
		return;
	}
	for (size_t i = 0; i < g_nstreams; i++) {
		if (g_streams[i].ctx_id != c->ctx_id)
			continue;
		n = 0;
		if (cuptiActivityGetNumDroppedRecords(c->ctx, g_streams[i].stream, &n) == CUPTI_SUCCESS)
			kpt_core_drop_add(kpt_core_device(c->ordinal), g_streams[i].stream, n);
	}
}

/* ---- activity buffers ------------------------------------------------------ */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*max_records = 0;
	*buffer = kpt_core_buffer_get(size);
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
	if (cb.name_cache[h].p == s && cb.name_cache[h].copy && strcmp(cb.name_cache[h].copy, s) == 0)
		return cb.name_cache[h].id;
	if (kpt_writer_intern_cstr(kpt_g.w, s, &id, NULL) < 0)
		return KPT_NONE;
	free(cb.name_cache[h].copy);
	cb.name_cache[h].copy = strdup(s);
	cb.name_cache[h].p = s;
	cb.name_cache[h].id = id;
	return id;
}

static uint32_t api_name(uint32_t kind, uint32_t cbid)
{
	int dom = kind == KPT_EVENT_DRIVER;
	const char *s = NULL;
	uint32_t id = KPT_NONE;

	if (cbid < KPT_API_CBIDS && cb.api_names[dom][cbid])
		return cb.api_names[dom][cbid] - 1;
	if (cuptiGetCallbackName(dom ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API,
				 cbid, &s) != CUPTI_SUCCESS || !s)
		return KPT_NONE;
	if (kpt_writer_intern_cstr(kpt_g.w, s, &id, NULL) < 0)
		return KPT_NONE;
	if (cbid < KPT_API_CBIDS)
		cb.api_names[dom][cbid] = id + 1;
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
	if (cb.sync_names[type])
		return cb.sync_names[type] - 1;
	if (kpt_writer_intern_cstr(kpt_g.w, names[type], &id, NULL) < 0)
		return KPT_NONE;
	cb.sync_names[type] = id + 1;
	return id;
}

/* Whether rec was launched in a pre-roll (kpt_core_preroll_drop). Under
 * kpt_g.lock. */
static int preroll_drop(const CUpti_Activity *rec)
{
	uint32_t corr;
	uint64_t start, end;
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
	return kpt_core_preroll_drop(corr, start, end, kernel ? KPT_CORE_KERNEL : memop ? KPT_CORE_MEMOP : 0);
}

/* Converts and writes one record. Under kpt_g.lock with kpt_g.w set. */
static void record_one(const CUpti_Activity *rec)
{
	struct kpt_cupti_ids ids = { .process = 0, .device = KPT_NONE, .name = KPT_NONE,
				     .range = KPT_NONE, .thread = 0 };
	struct kpt_diag d;
	int rc = 0;

	if (kpt_g.preroll_track && preroll_drop(rec))
		return;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
		struct kpt_kernel row;

		ids.device = kpt_core_device(k->deviceId);
		ids.name = intern_name(k->name);
		ids.range = kpt_core_corr_range(k->correlationId);
		stream_note(k->contextId, k->streamId);
		kpt_cupti_kernel(k, &ids, &row);
		rc = kpt_writer_kernels(kpt_g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
		struct kpt_memop row;

		ids.device = kpt_core_device(m->deviceId);
		ids.range = kpt_core_corr_range(m->correlationId);
		stream_note(m->contextId, m->streamId);
		kpt_cupti_memcpy(m, &ids, &row);
		rc = kpt_writer_memops(kpt_g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
		struct kpt_memop row;

		ids.device = kpt_core_device(m->srcDeviceId);
		ids.range = kpt_core_corr_range(m->correlationId);
		kpt_cupti_memcpy_p2p(m, &ids, &row);
		rc = kpt_writer_memops(kpt_g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
		struct kpt_memop row;

		ids.device = kpt_core_device(m->deviceId);
		ids.range = kpt_core_corr_range(m->correlationId);
		stream_note(m->contextId, m->streamId);
		kpt_cupti_memset(m, &ids, &row);
		rc = kpt_writer_memops(kpt_g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const CUpti_ActivitySynchronization2 *)rec;
		struct kpt_event row;

		ids.device = context_device(s->contextId);
		ids.name = sync_name((uint32_t)s->type);
		kpt_cupti_sync(s, &ids, &row);
		rc = kpt_writer_events(kpt_g.w, &row, 1, &d);
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
		uint32_t kind = rec->kind == CUPTI_ACTIVITY_KIND_DRIVER ? KPT_EVENT_DRIVER : KPT_EVENT_RUNTIME;
		struct kpt_event row;

		ids.name = api_name(kind, (uint32_t)a->cbid);
		kpt_cupti_api(a, kind, &ids, &row);
		rc = kpt_writer_events(kpt_g.w, &row, 1, &d);
		break;
	}
	default:
		break;
	}
	if (rc < 0)
		kpt_core_fail(&d);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;

	pthread_mutex_lock(&kpt_g.lock);
	if (kpt_g.w && !kpt_g.forked_child)
		while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
			record_one(rec);
	drops_collect(NULL);
	pthread_mutex_unlock(&kpt_g.lock);
	kpt_core_buffer_release(buffer);
}

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET,
	CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
};
static const CUpti_ActivityKind api_kinds[] = {
	CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
};

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

/* Appends to out the ids of dom for the API calls that start GPU
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

/* ---- CUPTI callbacks -------------------------------------------------------- */

static void flush_cupti(void)
{
	if (kpt_g.enabled && !kpt_g.forked_child && !kpt_core_gone())
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* ---- counters mode (kpt_counters_cupti.h) ----------------------------------- */

/* A counters failure is reported once and ends counter collection; the
 * target runs on. */
static void counters_fail(const struct kpt_diag *d)
{
	atomic_store(&kpt_g.counters, 0);
	kpt_ccount_abandon();
	kpt_core_fail(d);
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
		rc = kpt_ccount_launch_enter(cd->context, kpt_core_device(ordinal), ordinal, &d);
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

/* cudaProfilerStart/Stop entered: the cudaProfilerApi window */
static void window_profiler(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	for (size_t i = 0; i < sizeof profiler_calls / sizeof profiler_calls[0]; i++)
		if (profiler_calls[i].dom == domain && profiler_calls[i].cbid == cbid) {
			kpt_core_window_profiler(profiler_calls[i].start);
			return;
		}
}

static void CUPTIAPI callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
			      const void *data)
{
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
		const CUpti_CallbackData *cd = data;

		if (domain == CUPTI_CB_DOMAIN_DRIVER_API && atomic_load(&kpt_g.counters))
			counters_launch(cbid, cd);
		if (cd->callbackSite != CUPTI_API_ENTER) {
			if (atomic_load_explicit(&kpt_g.detach, memory_order_acquire) == KPT_DETACH_PENDING)
				kpt_core_detach_maybe();
			return;
		}
		kpt_core_work_seen(cd->correlationId);
		if (kpt_g.win_set && kpt_g.win.spec.trigger == KPT_WINDOW_PROFILER_API)
			window_profiler(domain, cbid);
		kpt_core_work_link(cd->correlationId);
		return;
	}
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		const CUpti_ResourceData *rd = data;

		if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
			context_add(rd->context);
		} else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
			if (atomic_load(&kpt_g.counters))
				counters_context_end(rd->context);
			flush_cupti();
			pthread_mutex_lock(&kpt_g.lock);
			for (uint32_t i = 0; i < cb.nctx; i++)
				if (cb.ctx[i].ctx == rd->context && cb.ctx[i].alive) {
					drops_collect(&cb.ctx[i]);
					cb.ctx[i].alive = 0;
				}
			pthread_mutex_unlock(&kpt_g.lock);
		}
	}
}

/* ---- the ops ------------------------------------------------------------------- */

/* The subscription and the activity buffers: start's, and attach's again. */
static int subscribe(struct kpt_diag *d)
{
	size_t dev_buf = (size_t)kpt_core_env_uint(KPT_ENV_DEVICE_BUFFER_MB, 32, 1024) << 20;

	KPT_CUPTI(d, cuptiSubscribe(&cb.sub, callback, NULL));
	cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	KPT_CUPTI(d, cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE,
					       &(size_t){ sizeof dev_buf }, &dev_buf));
	KPT_CUPTI(d, cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
	return 0;
}

static int cupti_start(struct kpt_diag *d)
{
	const char *counters = getenv(KPT_ENV_COUNTERS);
	int rc;

	if ((rc = subscribe(d)) < 0)
		return rc;
	if (counters && *counters) {
		/* Counters pass: no activity (replay would distort it and the
		 * timing runs have it); kernel launches set contexts up. */
		if ((rc = kpt_ccount_init(counters, kpt_core_env_uint(KPT_ENV_COUNTERS_RANGES, 1024, 65536), d)) < 0)
			return rc;
		atomic_store(&kpt_g.counters, 1);
		kpt_g.counters_mode = 1;
		for (size_t i = 0; i < KPT_COUNTER_LAUNCHES; i++)
			KPT_CUPTI(d, cuptiEnableCallback(1, cb.sub, CUPTI_CB_DOMAIN_DRIVER_API, counter_launches[i].cbid));
	}
	return 0;
}

static int cupti_listen(struct kpt_diag *d)
{
	/* Of the resource domain only the two ids callback() handles: the
	 * others (streams, modules, CUDA graph nodes: torch.compile and graph
	 * capture create many) would call in for nothing, windows or not. */
	KPT_CUPTI(d, cuptiEnableCallback(1, cb.sub, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED));
	KPT_CUPTI(d, cuptiEnableCallback(1, cb.sub, CUPTI_CB_DOMAIN_RESOURCE,
					 CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING));
	/* No runtime API callback here: enabling even one makes every launch
	 * pass through CUPTI's callback dispatch. cudaDeviceReset is seen as
	 * CONTEXT_DESTROY_STARTING (flush there). */
	return 0;
}

static void cupti_stop(void)
{
	if (cb.sub) {
		cuptiActivityFlushAll(0);
		cuptiUnsubscribe(cb.sub);
	}
}

static int cupti_timestamp(uint64_t *ns)
{
	return cuptiGetTimestamp(ns) == CUPTI_SUCCESS ? 0 : -1;
}

static int cupti_kinds(int on, int mask, int api, struct kpt_diag *d)
{
	CUptiResult (*fn)(CUpti_ActivityKind) = on ? cuptiActivityEnable : cuptiActivityDisable;

	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (mask & 1 << i)
			KPT_CUPTI(d, fn(kinds[i]));
	if (api)
		for (size_t i = 0; i < sizeof api_kinds / sizeof api_kinds[0]; i++)
			KPT_CUPTI(d, fn(api_kinds[i]));
	return 0;
}

static int cupti_work_list(int link)
{
	struct work_cb *cbs = calloc(CUPTI_RUNTIME_TRACE_CBID_SIZE + CUPTI_DRIVER_TRACE_CBID_SIZE, sizeof *cbs);
	unsigned n = 0;

	if (!cbs)
		return -1;
	/* The driver's callbacks alone see every launch: a runtime launch
	 * calls the driver under the runtime call's correlation id (the
	 * collector-compare modes recorded the same range paths with both
	 * domains and with the driver's alone, H200, 2026-11-28), at half the
	 * callbacks per launch; runtime-only misses the driver-API launches
	 * of cuBLAS, cuDNN, Triton. */
	if (link == 1 || link == 3)
		collect_work_callbacks(cbs, &n, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE);
	if (link == 0 || link == 3)
		collect_work_callbacks(cbs, &n, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
	/* read under winlock, with the core's work_listed set after this */
	cb.work_cbs = cbs;
	cb.nwork_cbs = n;
	return (int)n;
}

static unsigned cupti_work_switch(int on)
{
	unsigned failed = 0;

	for (unsigned i = 0; i < cb.nwork_cbs; i++)
		if (cuptiEnableCallback(on, cb.sub, cb.work_cbs[i].dom, cb.work_cbs[i].cbid) != CUPTI_SUCCESS)
			failed++;
	return failed;
}

static int cupti_profiler_api(struct kpt_diag *d)
{
	for (size_t i = 0; i < sizeof profiler_calls / sizeof profiler_calls[0]; i++)
		KPT_CUPTI(d, cuptiEnableCallback(1, cb.sub, profiler_calls[i].dom, profiler_calls[i].cbid));
	return 0;
}

static void cupti_flush(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

/* The context table only grows; no devlock here: drops_collect takes it
 * through kpt_core_device(). */
static void cupti_drops(void)
{
	drops_collect(NULL);
	for (uint32_t i = 0; i < cb.nctx; i++)
		if (cb.ctx[i].alive)
			drops_collect(&cb.ctx[i]);
}

static int cupti_detach(void)
{
	return cuptiFinalize() == CUPTI_SUCCESS ? 0 : -1;
}

/* After cuptiFinalize, any CUPTI call initialises CUPTI again: the
 * subscription, buffers and lifecycle callbacks as at the start (a context
 * created while detached is not in the context table: its drops are not
 * counted). A failure half-way detaches what was made. */
static int cupti_attach(struct kpt_diag *d)
{
	int rc;

	cb.sub = NULL;
	if ((rc = subscribe(d)) < 0 || (rc = cupti_listen(d)) < 0) {
		if (cb.sub)
			cuptiUnsubscribe(cb.sub);
		cuptiFinalize();
		cb.sub = NULL;
		return rc;
	}
	return 0;
}

static int cupti_write(struct kpt_writer *w, struct kpt_diag *d)
{
	return kpt_ccount_write(w, 0, d);
}

static const struct kpt_backend_ops kpt_cupti_backend = {
	.name = "cupti",
	.start = cupti_start,
	.listen = cupti_listen,
	.stop = cupti_stop,
	.timestamp = cupti_timestamp,
	.kinds = cupti_kinds,
	.work_list = cupti_work_list,
	.work_switch = cupti_work_switch,
	.profiler_api = cupti_profiler_api,
	.flush = cupti_flush,
	.drops = cupti_drops,
	.detach = cupti_detach,
	.attach = cupti_attach,
	.device = cupti_device,
	.write = cupti_write,
};

/* The CUDA driver calls it during cuInit when CUDA_INJECTION64_PATH names
 * this library (kpt_inject.h); NVTX's entry points too (kpt_nvtx_inject.c).
 * Always 1: a failure is in the status file, the program runs on. */
int InitializeInjection(void)
{
	kpt_core_init(&kpt_cupti_backend);
	return 1;
}
