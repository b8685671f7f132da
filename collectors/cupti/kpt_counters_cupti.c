/* kpt_counters_cupti.c - the CUPTI range profiler inside libkptinject.so.
 * Contract in kpt_counters_cupti.h. Call sequence per context (CUDA 13):
 * chip name and counter availability -> profiler host object -> metrics
 * into a config image (passes known here) -> range profiler enabled on the
 * context -> counter data image sized for max_ranges -> SetConfig (auto
 * range, kernel replay) -> Start; later Stop -> DecodeData -> per range:
 * name and EvaluateToGpuValues -> image re-initialised -> SetConfig ->
 * Start again.
 *
 * One process at a time can hold a GPU's counters (a second gets
 * CUPTI_ERROR_HARDWARE_BUSY), so when the launcher names a lock file
 * (KPT_COUNTERS_LOCK) the processes of one counters pass hand them over,
 * GPU by GPU: a process takes LOCK.<gpu uuid> (flock) before its first
 * profiled launch on that GPU; while it waits it holds a shared lock on
 * LOCK.<gpu uuid>.want; the holder's watchdog thread, seeing a waiter and
 * no launch of its own in flight for KPT_CCOUNT_IDLE_MS, decodes and
 * releases its contexts and its locks. The next launch takes them again.
 * So a parent waiting for a child, or two ranks on one GPU waiting for
 * each other in a collective, pass the counters on instead of failing.
 *
 * cupti_profiler_host.h includes <string>, a C++ header: collectors/cupti/cshim
 * supplies an empty one so this file stays C (nothing of it is used).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include "kpt_counters.h"
#include "kpt_counters_cupti.h"
#include "kpt_grow.h"
#include "kpt_inject.h"

#define KPT_CCOUNT_MAX_CTX 64
#define KPT_CCOUNT_MAX_DEV 64
#define KPT_CCOUNT_IDLE_MS 20       /* no launch for this long: hand the counters over */

/* One decoded range: a profiled kernel launch. */
struct result {
	char *kernel;               /* owned */
	uint32_t device, ordinal;
	double *values;             /* [nmetrics], NAN where CUPTI had none */
};

struct cctx {
	CUcontext ctx;
	uint32_t device, ordinal;
	int dl;                     /* its GPU's lock in C.dl, -1 none */
	int active;                 /* profiler started and not yet ended */
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *rp;
	uint8_t *config, *data;
	uint8_t *avail;             /* counter availability image: the host object keeps
				     * a pointer to it (ConfigAddMetrics read it after a
				     * free: the crash seen on the H100) */
	size_t config_size, data_size;
	char **names;               /* [max_ranges] symbols launched since the last decode */
	unsigned nnames;
};

static struct {
	pthread_mutex_t lock;
	char *metrics_buf;
	const char *metrics[KPT_METRICS_MAX];
	size_t nmetrics;
	unsigned max_ranges, passes;
	int profiler_on;
	uint64_t dropped;
	uint64_t misaligned;        /* decodes whose ranges did not pair with launches */
	uint64_t lost;              /* contexts that could not be decoded at the end */
	char lost_msg[256];         /* why the first of them could not */
	uint64_t graph_skipped;     /* graph launches run with the profiler paused */
	uint64_t captured;          /* kernel launches into a capturing stream */
	struct cctx ctx[KPT_CCOUNT_MAX_CTX];
	unsigned nctx;
	struct result *res;
	size_t nres, capres;
	uint32_t next_ordinal;
	/* the hand-over between processes (file comment); lock_path NULL: none */
	char *lock_path;
	int nolock;                 /* the file system has no flock: no hand-over */
	struct dlock {              /* one GPU's lock: LOCK.<uuid> and LOCK.<uuid>.want */
		char key[40];
		int lock_fd, want_fd;
		int held;
	} dl[KPT_CCOUNT_MAX_DEV];
	unsigned ndl;
	int watching;
	unsigned in_flight;         /* profiled launches (and graph launches) between API enter and exit */
	uint64_t last_ns;           /* last launch enter or exit, CLOCK_MONOTONIC */
	uint64_t waits;             /* times this process waited for a lock */
	CUptiResult last_err;       /* the CUPTI result ccount_err saw last */
} C = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- errors ------------------------------------------------------------------ */

static const struct {
	CUptiResult r;
	enum kpt_err code;
	const char *msg, *hint;
} errmap[] = {
	{ CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, KPT_E_PERM, "insufficient privileges to read GPU counters",
	  "run as root, or load the nvidia module with NVreg_RestrictProfilingToAdminUsers=0" },
	{ CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES, KPT_E_PERM,
	  "insufficient privileges to read GPU counters on this virtual GPU",
	  "the host must allow profiling for the vGPU (NVreg_RestrictProfilingToAdminUsers=0)" },
	{ CUPTI_ERROR_HARDWARE_BUSY, KPT_E_BUSY, "another profiler holds the GPU's counters",
	  "stop Nsight Compute, DCGM profiling or other counter tools and retry" },
	{ CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED, KPT_E_BUSY, "another profiler (old CUPTI profiler API) is attached",
	  "run without other CUPTI tools" },
	{ CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, KPT_E_BUSY, "another profiler is already attached",
	  "CUPTI allows one tool per process: run without Nsight Systems, torch.profiler or another CUPTI tool" },
	{ CUPTI_ERROR_INVALID_METRIC_NAME, KPT_E_NOTFOUND, "a counter is unknown on this GPU", NULL },
	{ CUPTI_ERROR_NOT_SUPPORTED, KPT_E_UNSUPPORTED, "counters are not supported on this GPU", NULL },
	{ CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED, KPT_E_UNSUPPORTED, "counters are not supported on a virtual GPU", NULL },
	{ CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED, KPT_E_UNSUPPORTED, "counters are not supported on a MIG instance", NULL },
	{ CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED, KPT_E_UNSUPPORTED, "counters are not supported on this GPU (CMP)", NULL },
	{ CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED, KPT_E_UNSUPPORTED, "counters are not supported under WSL", NULL },
	{ CUPTI_ERROR_INVALID_CHIP_NAME, KPT_E_UNSUPPORTED, "this CUPTI does not know the GPU's chip", NULL },
};

static int ccount_err(struct kpt_diag *d, CUptiResult r, const char *what)
{
	const char *s = NULL;

	C.last_err = r;
	if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
		s = "unknown CUPTI error";
	for (size_t i = 0; i < sizeof errmap / sizeof errmap[0]; i++)
		if (errmap[i].r == r) {
			kpt_diag_set(d, errmap[i].code, "%s (%s: %s)", errmap[i].msg, what, s);
			return errmap[i].hint ? kpt_diag_hint(d, "%s", errmap[i].hint) : errmap[i].code;
		}
	return kpt_diag_set(d, KPT_E_CUPTI, "%s failed: %s", what, s);
}

#define CC(d, call) \
	do { CUptiResult r_ = (call); \
	     if (r_ != CUPTI_SUCCESS) return ccount_err((d), r_, #call); } while (0)

/* ---- setup ----------------------------------------------------------------------- */

static void after_fork_child(void);

int kpt_ccount_init(const char *metrics, unsigned max_ranges, struct kpt_diag *d)
{
	char *save = NULL, *tok;
	const char *lock;

	if (!(C.metrics_buf = strdup(metrics)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	for (tok = strtok_r(C.metrics_buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (C.nmetrics == KPT_METRICS_MAX)
			return kpt_diag_set(d, KPT_E_INVAL, "too many counters in %s (at most %d)",
					    KPT_ENV_COUNTERS, KPT_METRICS_MAX);
		C.metrics[C.nmetrics++] = tok;
	}
	if (!C.nmetrics)
		return kpt_diag_set(d, KPT_E_INVAL, "%s names no counter", KPT_ENV_COUNTERS);
	C.max_ranges = max_ranges ? max_ranges : 1024;
	if ((lock = getenv(KPT_ENV_COUNTERS_LOCK)) && *lock && !(C.lock_path = strdup(lock)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	pthread_atfork(NULL, NULL, after_fork_child);
	return 0;
}

/* Names the first metric this chip does not know (CUPTI's error does not). */
static int unknown_metric(struct cctx *c, const char *chip, struct kpt_diag *d)
{
	for (size_t i = 0; i < C.nmetrics; i++) {
		CUpti_Profiler_Host_GetMetricProperties_Params mp = { .structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE };

		mp.pHostObject = c->host;
		mp.pMetricName = C.metrics[i];
		if (cuptiProfilerHostGetMetricProperties(&mp) != CUPTI_SUCCESS) {
			kpt_diag_set(d, KPT_E_NOTFOUND, "counter '%s' is unknown on this GPU (chip %s)",
				     C.metrics[i], chip);
			return kpt_diag_hint(d, "'kptprof record --help' lists the counter sets; "
					     "'ncu --query-metrics' lists this chip's metrics");
		}
	}
	return 0;
}

static int host_setup(struct cctx *c, struct kpt_diag *d)
{
	CUpti_Device_GetChipName_Params cn = { .structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE };
	CUpti_Profiler_GetCounterAvailability_Params ca = { .structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_Initialize_Params hi = { .structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_ConfigAddMetrics_Params am = { .structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetConfigImageSize_Params cs = { .structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetConfigImage_Params ci = { .structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_GetNumOfPasses_Params np = { .structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE };
	CUptiResult r;

	cn.deviceIndex = c->ordinal;
	CC(d, cuptiDeviceGetChipName(&cn));
	ca.ctx = c->ctx;
	CC(d, cuptiProfilerGetCounterAvailability(&ca));
	if (!(c->avail = malloc(ca.counterAvailabilityImageSize ? ca.counterAvailabilityImageSize : 1)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	ca.pCounterAvailabilityImage = c->avail;
	r = cuptiProfilerGetCounterAvailability(&ca);
	if (r == CUPTI_SUCCESS) {
		hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
		hi.pChipName = cn.pChipName;
		hi.pCounterAvailabilityImage = c->avail;
		r = cuptiProfilerHostInitialize(&hi);
	}
	if (r != CUPTI_SUCCESS)
		return ccount_err(d, r, "cuptiProfilerHostInitialize");
	c->host = hi.pHostObject;
	am.pHostObject = c->host;
	am.ppMetricNames = C.metrics;
	am.numMetrics = C.nmetrics;
	if ((r = cuptiProfilerHostConfigAddMetrics(&am)) != CUPTI_SUCCESS) {
		if (unknown_metric(c, cn.pChipName, d) < 0)
			return d ? d->code : KPT_E_NOTFOUND;
		return ccount_err(d, r, "cuptiProfilerHostConfigAddMetrics");
	}
	cs.pHostObject = c->host;
	CC(d, cuptiProfilerHostGetConfigImageSize(&cs));
	if (!(c->config = malloc(cs.configImageSize ? cs.configImageSize : 1)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	c->config_size = cs.configImageSize;
	ci.pHostObject = c->host;
	ci.configImageSize = c->config_size;
	ci.pConfigImage = c->config;
	CC(d, cuptiProfilerHostGetConfigImage(&ci));
	np.configImageSize = c->config_size;
	np.pConfigImage = c->config;
	CC(d, cuptiProfilerHostGetNumOfPasses(&np));
	if (np.numOfPasses > C.passes)
		C.passes = (unsigned)np.numOfPasses;
	return 0;
}

/* (Re)initialises the counter image, applies the configuration, starts. */
static int arm(struct cctx *c, struct kpt_diag *d)
{
	CUpti_RangeProfiler_CounterDataImage_Initialize_Params ii = { .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_SetConfig_Params sc = { .structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_Start_Params st = { .structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE };

	ii.pRangeProfilerObject = c->rp;
	ii.counterDataSize = c->data_size;
	ii.pCounterData = c->data;
	CC(d, cuptiRangeProfilerCounterDataImageInitialize(&ii));
	sc.pRangeProfilerObject = c->rp;
	sc.configSize = c->config_size;
	sc.pConfig = c->config;
	sc.counterDataImageSize = c->data_size;
	sc.pCounterDataImage = c->data;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_KernelReplay;
	sc.maxRangesPerPass = C.max_ranges;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.passIndex = 0;
	sc.targetNestingLevel = 1;
	CC(d, cuptiRangeProfilerSetConfig(&sc));
	st.pRangeProfilerObject = c->rp;
	CC(d, cuptiRangeProfilerStart(&st));
	c->active = 1;
	return 0;
}

static int ctx_setup(struct cctx *c, struct kpt_diag *d)
{
	CUpti_RangeProfiler_Enable_Params en = { .structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_GetCounterDataSize_Params ds = { .structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE };
	int rc;

	if ((rc = host_setup(c, d)) < 0)
		return rc;
	en.ctx = c->ctx;
	CC(d, cuptiRangeProfilerEnable(&en));
	c->rp = en.pRangeProfilerObject;
	ds.pRangeProfilerObject = c->rp;
	ds.pMetricNames = C.metrics;
	ds.numMetrics = C.nmetrics;
	ds.maxNumOfRanges = C.max_ranges;
	ds.maxNumRangeTreeNodes = C.max_ranges;
	CC(d, cuptiRangeProfilerGetCounterDataSize(&ds));
	c->data_size = ds.counterDataSize;
	if (!(c->data = calloc(1, c->data_size ? c->data_size : 1)) ||
	    !(c->names = calloc(C.max_ranges, sizeof *c->names)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for a counter image of %zu bytes", c->data_size);
	return arm(c, d);
}

static struct cctx *ctx_find(CUcontext ctx)
{
	for (unsigned i = 0; i < C.nctx; i++)
		if (C.ctx[i].ctx == ctx)
			return &C.ctx[i];
	return NULL;
}

/* ---- decoding ---------------------------------------------------------------------- */

/* A range name that is only digits (or empty) says nothing: a range that
 * the launch symbols cannot name either is stored as "(unknown)". */
static int name_useless(const char *s)
{
	if (!s || !*s)
		return 1;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

static int result_add(struct cctx *c, const char *range_name, size_t idx, int use_symbols, struct kpt_diag *d)
{
	CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = { .structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE };
	struct result *r;
	const char *name;

	if (kpt_grow(&C.res, &C.capres, C.nres + 1, sizeof *C.res) < 0)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory storing counters");
	r = &C.res[C.nres];
	/* The symbol recorded at launch is the mangled name that activity
	 * records carry, so counters and timings match by name. */
	name = use_symbols && c->names[idx] ? c->names[idx] : name_useless(range_name) ? "(unknown)" : range_name;
	if (!(r->kernel = strdup(name)) || !(r->values = malloc(C.nmetrics * sizeof *r->values))) {
		free(r->kernel);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory storing counters");
	}
	r->device = c->device;
	r->ordinal = C.next_ordinal++;
	ev.pHostObject = c->host;
	ev.pCounterDataImage = c->data;
	ev.counterDataImageSize = c->data_size;
	ev.rangeIndex = idx;
	ev.ppMetricNames = C.metrics;
	ev.numMetrics = C.nmetrics;
	ev.pMetricValues = r->values;
	if (cuptiProfilerHostEvaluateToGpuValues(&ev) != CUPTI_SUCCESS)
		for (size_t m = 0; m < C.nmetrics; m++)
			r->values[m] = NAN;
	C.nres++;
	return 0;
}

/* Stops ctx, decodes its image into results, forgets the launch names.
 * The profiler is left stopped; arm() restarts it. */
static int decode(struct cctx *c, struct kpt_diag *d)
{
	CUpti_RangeProfiler_Stop_Params sp = { .structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_DecodeData_Params dd = { .structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE };
	CUpti_RangeProfiler_GetCounterDataInfo_Params gi = { .structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE };
	int rc = 0;

	if (!c->active)
		return 0;
	c->active = 0;
	sp.pRangeProfilerObject = c->rp;
	CC(d, cuptiRangeProfilerStop(&sp));
	dd.pRangeProfilerObject = c->rp;
	CC(d, cuptiRangeProfilerDecodeData(&dd));
	C.dropped += dd.numOfRangeDropped;
	gi.pCounterDataImage = c->data;
	gi.counterDataImageSize = c->data_size;
	CC(d, cuptiRangeProfilerGetCounterDataInfo(&gi));
	/* Symbols name the ranges only when they pair up one to one; else
	 * something other than our launches made ranges, and CUPTI's names
	 * are used. */
	if (gi.numTotalRanges != c->nnames)
		C.misaligned++;
	for (size_t i = 0; i < gi.numTotalRanges && rc == 0; i++) {
		CUpti_RangeProfiler_CounterData_GetRangeInfo_Params ri = { .structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE };

		ri.pCounterDataImage = c->data;
		ri.counterDataImageSize = c->data_size;
		ri.rangeIndex = i;
		ri.rangeDelimiter = "/";
		if (cuptiRangeProfilerCounterDataGetRangeInfo(&ri) != CUPTI_SUCCESS)
			ri.rangeName = NULL;
		rc = result_add(c, ri.rangeName, i, gi.numTotalRanges == c->nnames, d);
	}
	for (unsigned i = 0; i < c->nnames; i++) {
		free(c->names[i]);
		c->names[i] = NULL;
	}
	c->nnames = 0;
	return rc;
}

/* decode() with c's context current on this thread (exit handlers and
 * context teardown may run where another context, or none, is current). */
static int decode_current(struct cctx *c, struct kpt_diag *d)
{
	CUcontext popped;
	int rc;

	if (!c->active)
		return 0;
	if (cuCtxPushCurrent(c->ctx) != CUDA_SUCCESS)
		return kpt_diag_set(d, KPT_E_CUDA, "cannot make a CUDA context current to read its counters");
	rc = decode(c, d);
	cuCtxPopCurrent(&popped);
	return rc;
}

static void ctx_release(struct cctx *c)
{
	CUpti_RangeProfiler_Disable_Params dp = { .structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE };
	CUpti_Profiler_Host_Deinitialize_Params hd = { .structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE };

	if (c->rp) {
		dp.pRangeProfilerObject = c->rp;
		cuptiRangeProfilerDisable(&dp);
		c->rp = NULL;
	}
	if (c->host) {
		hd.pHostObject = c->host;
		cuptiProfilerHostDeinitialize(&hd);
		c->host = NULL;
	}
	for (unsigned i = 0; c->names && i < c->nnames; i++)
		free(c->names[i]);
	free(c->names);
	free(c->config);
	free(c->data);
	free(c->avail);
	c->names = NULL;
	c->config = c->data = c->avail = NULL;
	c->nnames = 0;
	c->ctx = NULL;
}

/* ---- hand-over between processes --------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int flock_retry(int fd, int op)
{
	int r;

	while ((r = flock(fd, op)) < 0 && errno == EINTR)
		;
	return r;
}

/* Another process of the pass waits for l's GPU (holds LOCK.<gpu>.want). */
static int someone_waits(const struct dlock *l)
{
	if (flock_retry(l->want_fd, LOCK_EX | LOCK_NB) == 0) {
		flock_retry(l->want_fd, LOCK_UN);
		return 0;
	}
	return errno == EWOULDBLOCK;
}

/* Decodes and releases every context of this process, then its locks.
 * Called with C.lock held. A context that cannot be decoded loses its
 * image, as at exit (counters.lost_contexts). */
static void release_all(void)
{
	for (unsigned i = 0; i < C.nctx; i++)
		if (C.ctx[i].ctx) {
			struct kpt_diag lost;

			kpt_diag_clear(&lost);
			if (decode_current(&C.ctx[i], &lost) < 0 && C.lost++ == 0)
				snprintf(C.lost_msg, sizeof C.lost_msg, "%.*s", (int)sizeof C.lost_msg - 1, lost.msg);
			ctx_release(&C.ctx[i]);
		}
	for (unsigned i = 0; i < C.ndl; i++)
		if (C.dl[i].held) {
			flock_retry(C.dl[i].lock_fd, LOCK_UN);
			C.dl[i].held = 0;
		}
}

static void *watchdog(void *arg)
{
	const struct timespec tick = { 0, 5 * 1000000L };

	(void)arg;
	for (;;) {
		int wanted = 0;

		nanosleep(&tick, NULL);
		pthread_mutex_lock(&C.lock);
		if (!C.in_flight && now_ns() - C.last_ns >= KPT_CCOUNT_IDLE_MS * 1000000ull)
			for (unsigned i = 0; i < C.ndl && !wanted; i++)
				wanted = C.dl[i].held && someone_waits(&C.dl[i]);
		if (wanted)
			release_all();
		pthread_mutex_unlock(&C.lock);
	}
	return NULL;
}

/* At exit, before the CUDA runtime's own exit handler (registered earlier,
 * at its initialisation, so run later) tears the contexts down: the last
 * images are decoded while their contexts can still be made current (the
 * collector's own handler runs after the runtime's, too late), and the
 * counters go to the next process. */
static pid_t exit_pid;

static void exit_decode(void)
{
	if (getpid() != exit_pid)
		return;
	pthread_mutex_lock(&C.lock);
	release_all();
	pthread_mutex_unlock(&C.lock);
}

/* A child forked without exec: the parent's contexts, locks and watchdog
 * are not its own. Its copies of the lock descriptions are closed at once,
 * so that a lock the parent holds ends with the parent (closing them here
 * does not release it: the parent's descriptor still refers to it). */
static void after_fork_child(void)
{
	pthread_mutex_init(&C.lock, NULL);
	for (unsigned i = 0; i < C.ndl; i++) {
		close(C.dl[i].lock_fd);
		close(C.dl[i].want_fd);
	}
	C.ndl = 0;
	C.watching = 0;
	C.in_flight = 0;
	for (unsigned i = 0; i < C.nctx; i++)
		C.ctx[i].ctx = NULL; /* the parent's; left allocated */
	C.nctx = 0;
}

/* The lock of CUDA ordinal's GPU, opened on first use: the counters are
 * per GPU, so ranks on different GPUs never wait for each other. Keyed by
 * the GPU's UUID (ordinals depend on CUDA_VISIBLE_DEVICES). Returns its
 * index, or < 0 with d set. Called with C.lock held. */
static int dlock_for(uint32_t ordinal, struct kpt_diag *d)
{
	CUdevice dev;
	CUuuid u;
	char key[40], path[PATH_MAX];
	struct dlock *l;

	if (cuDeviceGet(&dev, (int)ordinal) == CUDA_SUCCESS && cuDeviceGetUuid_v2(&u, dev) == CUDA_SUCCESS) {
		for (int i = 0; i < 16; i++)
			snprintf(key + 2 * i, 3, "%02x", (unsigned char)u.bytes[i]);
	} else {
		snprintf(key, sizeof key, "ordinal%u", ordinal);
	}
	for (unsigned i = 0; i < C.ndl; i++)
		if (strcmp(C.dl[i].key, key) == 0)
			return (int)i;
	if (C.ndl == KPT_CCOUNT_MAX_DEV)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "too many GPUs for counters (at most %d)", KPT_CCOUNT_MAX_DEV);
	l = &C.dl[C.ndl];
	memset(l, 0, sizeof *l);
	snprintf(l->key, sizeof l->key, "%s", key);
	if (snprintf(path, sizeof path, "%s.%s", C.lock_path, key) >= (int)sizeof path - 5)
		return kpt_diag_set(d, KPT_E_INVAL, "the counters lock path %s is too long", C.lock_path);
	if ((l->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot open the counters lock %s: %s", path, strerror(errno));
	strcat(path, ".want");
	if ((l->want_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0) {
		close(l->lock_fd);
		return kpt_diag_set(d, KPT_E_IO, "cannot open the counters lock %s: %s", path, strerror(errno));
	}
	return (int)C.ndl++;
}

static int no_flock(int e)
{
	return e == ENOSYS || e == EOPNOTSUPP || e == ENOLCK || e == EINVAL;
}

/* Takes GPU li's lock, waiting for the process that holds it, and starts
 * this process's watchdog. Called with C.lock held; releases it while it
 * waits (the program's other threads, its signal handlers and exit go on).
 * Where the file system has no flock the hand-over is off, as without
 * KPT_COUNTERS_LOCK. */
static int acquire(int li, struct kpt_diag *d)
{
	struct dlock *l = &C.dl[li];
	int r, e;

	if (l->held)
		return 0;
	if ((r = flock_retry(l->lock_fd, LOCK_EX | LOCK_NB)) < 0) {
		int lfd = l->lock_fd, wfd = l->want_fd;

		if (no_flock(errno)) {
			C.nolock = 1;
			return 0;
		}
		if (errno != EWOULDBLOCK)
			return kpt_diag_set(d, KPT_E_IO, "cannot lock %s.%s: %s", C.lock_path, l->key, strerror(errno));
		C.waits++;
		pthread_mutex_unlock(&C.lock);
		r = flock_retry(wfd, LOCK_SH);
		if (r == 0)
			r = flock_retry(lfd, LOCK_EX);
		e = errno;
		flock_retry(wfd, LOCK_UN);
		pthread_mutex_lock(&C.lock);
		if (r < 0)
			return kpt_diag_set(d, KPT_E_IO, "cannot lock %s.%s: %s", C.lock_path, l->key, strerror(e));
	}
	l->held = 1;
	if (!C.watching) {
		pthread_t t;
		sigset_t all, old;

		/* the program's signals are not the watchdog's to take */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		if (pthread_create(&t, NULL, watchdog, NULL) == 0) {
			pthread_detach(t);
			C.watching = 1;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	return 0;
}

/* ctx_setup, retried for up to 2 s while the counters are busy and the
 * hand-over is on: the process that released them may not have let the
 * hardware go yet. */
static int ctx_setup_retry(struct cctx *c, struct kpt_diag *d)
{
	CUcontext ctx = c->ctx;
	uint32_t device = c->device, ordinal = c->ordinal;
	const struct timespec pause = { 0, 50 * 1000000L };
	int rc;

	int dl = c->dl;

	for (int tries = 0;; tries++) {
		/* only CUPTI_ERROR_HARDWARE_BUSY passes; another tool attached does not */
		C.last_err = CUPTI_SUCCESS;
		if ((rc = ctx_setup(c, d)) != KPT_E_BUSY || !C.lock_path || C.nolock || tries == 40 ||
		    C.last_err != CUPTI_ERROR_HARDWARE_BUSY)
			return rc;
		ctx_release(c);
		memset(c, 0, sizeof *c);
		c->ctx = ctx;
		c->device = device;
		c->ordinal = ordinal;
		c->dl = dl;
		kpt_diag_clear(d);
		nanosleep(&pause, NULL);
	}
}

/* ---- hooks ------------------------------------------------------------------------ */

int kpt_ccount_launch_enter(CUcontext ctx, uint32_t device, uint32_t ordinal, struct kpt_diag *d)
{
	struct cctx *c;
	int rc = 0;

	if (!ctx || !C.nmetrics)
		return 0;
	pthread_mutex_lock(&C.lock);
	/* Initialised here, not in kpt_ccount_init: that runs inside cuInit. */
	if (!C.profiler_on) {
		CUpti_Profiler_Initialize_Params ip = { .structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE };
		CUptiResult r = cuptiProfilerInitialize(&ip);

		if (r != CUPTI_SUCCESS) {
			C.nmetrics = 0;
			pthread_mutex_unlock(&C.lock);
			return ccount_err(d, r, "cuptiProfilerInitialize");
		}
		C.profiler_on = 1;
	}
	if (!ctx_find(ctx)) {
		unsigned i;
		int li = -1;

		/* the GPU's lock first: acquire() lets C.lock go while it waits */
		if (C.lock_path && !C.nolock && (rc = li = dlock_for(ordinal, d)) >= 0)
			rc = acquire(li, d);
		for (i = 0; i < C.nctx && C.ctx[i].ctx; i++)
			; /* a slot released by a hand-over, or a new one */
		if (rc < 0 || ctx_find(ctx)) {
			; /* failed, or another thread set ctx up meanwhile */
		} else if (i == KPT_CCOUNT_MAX_CTX) {
			rc = kpt_diag_set(d, KPT_E_UNSUPPORTED, "too many CUDA contexts for counters (at most %d)",
					  KPT_CCOUNT_MAX_CTX);
		} else {
			c = &C.ctx[i];
			if (i == C.nctx)
				C.nctx++;
			memset(c, 0, sizeof *c);
			c->ctx = ctx;
			c->device = device;
			c->ordinal = ordinal;
			c->dl = C.nolock ? -1 : li;
			rc = ctx_setup_retry(c, d);
			if (rc == 0 && exit_pid != getpid() && atexit(exit_decode) == 0)
				exit_pid = getpid();
		}
	}
	if (rc == 0) {
		C.in_flight++;
		C.last_ns = now_ns();
	}
	pthread_mutex_unlock(&C.lock);
	return rc;
}

/* Takes C.lock for a launch-side event (the caller lets it go): one launch
 * more in flight (delta 1) or one fewer (-1, never below 0), last_ns now.
 * Returns ctx's state, NULL when it has none. */
static struct cctx *event_lock(CUcontext ctx, int delta)
{
	pthread_mutex_lock(&C.lock);
	if (delta > 0)
		C.in_flight++;
	else if (C.in_flight)
		C.in_flight--;
	C.last_ns = now_ns();
	return ctx_find(ctx);
}

int kpt_ccount_launch_exit(CUcontext ctx, const char *symbol, struct kpt_diag *d)
{
	struct cctx *c = event_lock(ctx, -1);
	int rc = 0;

	if (c && c->active) {
		if (c->nnames < C.max_ranges)
			c->names[c->nnames++] = symbol ? strdup(symbol) : NULL;
		if (c->nnames == C.max_ranges && (rc = decode(c, d)) == 0)
			rc = arm(c, d);
	}
	pthread_mutex_unlock(&C.lock);
	return rc;
}

int kpt_ccount_pause(CUcontext ctx, struct kpt_diag *d)
{
	struct cctx *c = event_lock(ctx, 1); /* no hand-over in the middle of a graph launch */
	int rc = 0;

	if (c && c->active) {
		C.graph_skipped++;
		rc = decode(c, d);
	}
	pthread_mutex_unlock(&C.lock);
	return rc;
}

int kpt_ccount_resume(CUcontext ctx, struct kpt_diag *d)
{
	struct cctx *c = event_lock(ctx, -1);
	int rc = 0;

	if (c && c->rp && !c->active)
		rc = arm(c, d);
	pthread_mutex_unlock(&C.lock);
	return rc;
}

void kpt_ccount_abandon(void)
{
	pthread_mutex_lock(&C.lock);
	C.in_flight = 0;
	release_all();
	pthread_mutex_unlock(&C.lock);
}

void kpt_ccount_captured(void)
{
	pthread_mutex_lock(&C.lock);
	C.captured++;
	pthread_mutex_unlock(&C.lock);
}

int kpt_ccount_context_end(CUcontext ctx, struct kpt_diag *d)
{
	struct cctx *c;
	int rc = 0;

	pthread_mutex_lock(&C.lock);
	if ((c = ctx_find(ctx))) {
		rc = decode_current(c, d);
		ctx_release(c);
	}
	pthread_mutex_unlock(&C.lock);
	return rc;
}

unsigned kpt_ccount_passes(void)
{
	return C.passes;
}

int kpt_ccount_write(struct kpt_writer *w, uint32_t process, struct kpt_diag *d)
{
	uint32_t metric_ids[KPT_METRICS_MAX], name_id;
	struct kpt_counter rows[KPT_METRICS_MAX];
	char buf[64];
	int rc = 0;

	pthread_mutex_lock(&C.lock);
	/* A context that cannot be decoded now (CUDA already torn down at
	 * exit) loses its last image; the others are still written, and
	 * counters.lost_contexts says so. */
	release_all();
	for (size_t m = 0; m < C.nmetrics && rc == 0; m++)
		rc = kpt_writer_intern_cstr(w, C.metrics[m], &metric_ids[m], d);
	for (size_t i = 0; i < C.nres && rc == 0; i++) {
		struct result *r = &C.res[i];
		size_t n;

		if ((rc = kpt_writer_intern_cstr(w, r->kernel, &name_id, d)) < 0)
			break;
		n = kpt_counter_rows_fill(&name_id, 1, metric_ids, C.nmetrics, r->values, process, r->device,
					  r->ordinal, rows);
		if (n)
			rc = kpt_writer_counters(w, rows, n, d);
	}
	if (rc == 0) {
		char *joined;
		struct kpt_metric_list l = { .n = C.nmetrics };

		memcpy(l.names, C.metrics, C.nmetrics * sizeof *C.metrics);
		if ((joined = kpt_metric_list_join(&l))) {
			kpt_writer_meta(w, "counters.metrics", joined, d);
			free(joined);
		}
		snprintf(buf, sizeof buf, "%u", C.passes);
		kpt_writer_meta(w, "counters.passes", buf, d);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)C.dropped);
		kpt_writer_meta(w, "counters.ranges_dropped", buf, d);
		snprintf(buf, sizeof buf, "%zu", C.nres);
		kpt_writer_meta(w, "counters.kernels", buf, d);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)C.misaligned);
		kpt_writer_meta(w, "counters.names_from_ranges", buf, d);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)C.lost);
		kpt_writer_meta(w, "counters.lost_contexts", buf, d);
		if (C.lost_msg[0])
			kpt_writer_meta(w, "counters.lost_reason", C.lost_msg, d);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)C.graph_skipped);
		kpt_writer_meta(w, "counters.graph_launches_skipped", buf, d);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)C.captured);
		kpt_writer_meta(w, "counters.captured_launches", buf, d);
		snprintf(buf, sizeof buf, "%u", C.nctx);
		kpt_writer_meta(w, "counters.contexts", buf, d);
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)C.waits);
		kpt_writer_meta(w, "counters.waits", buf, d);
	}
	for (size_t i = 0; i < C.nres; i++) {
		free(C.res[i].kernel);
		free(C.res[i].values);
	}
	C.nres = 0;
	pthread_mutex_unlock(&C.lock);
	return rc;
}
