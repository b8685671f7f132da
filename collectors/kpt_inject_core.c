/* kpt_inject_core.c - the backend-neutral core of libkptinject.so: its
 * lifecycle (start, the final write, signals, fork), the status file, the
 * device table, drop accounting, the activity buffer pool and the NVML
 * sampler. Capture windows and NVTX ranges are kpt_inject_trace.c; the
 * contract with a backend, threads and locks are kpt_inject_core.h.
 */
#define _GNU_SOURCE
#include "kpt_grow.h"
#include "kpt_inject_core.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct kpt_core kpt_g = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.devlock = PTHREAD_MUTEX_INITIALIZER,
	.winlock = PTHREAD_MUTEX_INITIALIZER,
	.prelock = PTHREAD_MUTEX_INITIALIZER,
	.detlock = PTHREAD_MUTEX_INITIALIZER,
};

__thread struct kpt_thread_log *kpt_tls_log;

uint64_t kpt_core_now(void)
{
	uint64_t t = 0;

	/* detaching or detached: no backend call (one would race the detach
	 * or attach the backend again); its clock carried on by the monotonic
	 * clock from the offset taken when the detach was armed */
	if (kpt_core_gone())
		return (uint64_t)((int64_t)kpt_core_mono() + kpt_g.clock_off);
	if (kpt_g.ops->timestamp(&t) < 0) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		t = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	return t;
}

/* The sampler thread's clock: the backend's, except in a sampled run,
 * where the sampler never calls the backend (it may be attaching or
 * detaching on a program thread at any time; CUPTI's own tracer hit a
 * crash racing cuptiFinalize from another thread): the monotonic clock
 * from the offset taken at the last attach. */
static uint64_t sampler_now(void)
{
	if (kpt_g.sampled)
		return (uint64_t)((int64_t)kpt_core_mono() + kpt_g.clock_off);
	return kpt_core_now();
}

unsigned kpt_core_env_uint(const char *name, unsigned dflt, unsigned max)
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

	if (!kpt_g.status[0])
		return;
	f = fopen(kpt_g.status, "w");
	if (!f)
		return;
	fprintf(f, "%s\n", line1);
	if (line2 && line2[0])
		fprintf(f, "hint %s\n", line2);
	fclose(f);
}

void kpt_core_fail(const struct kpt_diag *d)
{
	char line[1200];

	if (kpt_g.failed++)
		return;
	kpt_g.diag = *d;
	snprintf(line, sizeof line, "error %s %s", kpt_err_name(d->code), d->msg);
	status_write(line, d->hint);
}

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
		if (kpt_grow(&buf, &cap, n + 2, 1) < 0)
			break;
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

	kpt_g.status[0] = '\0';
	if (st && *st && kpt_inject_expand(st, kpt_g.pid, kpt_g.rank, kpt_g.status, sizeof kpt_g.status) < 0)
		kpt_g.status[0] = '\0';
	if (!out || !*out)
		out = "kptprof-%p.kpt";
	if (kpt_inject_expand(out, kpt_g.pid, kpt_g.rank, kpt_g.path, sizeof kpt_g.path) < 0)
		return kpt_diag_set(d, KPT_E_INVAL, "bad output pattern '%s' in %s (escapes: %%p %%r %%%%)",
				    out, KPT_ENV_OUTPUT);
	return 0;
}

/* ---- devices ---------------------------------------------------------------- */

char *kpt_core_strdup(const char *s)
{
	char *r = strdup(s ? s : "");

	return r ? r : (char *)"";
}

/* The slow path of kpt_core_device: the ordinal's first use. */
uint32_t kpt_core_device_add(uint32_t ordinal)
{
	struct kpt_device *r;
	char slug[256];
	uint32_t idx;

	if (ordinal >= KPT_MAX_DEVICES)
		return KPT_NONE;
	pthread_mutex_lock(&kpt_g.devlock);
	if (kpt_g.dev[ordinal].used) {
		pthread_mutex_unlock(&kpt_g.devlock);
		return kpt_g.dev[ordinal].index;
	}
	idx = kpt_g.ndev++;
	r = &kpt_g.rows[idx];
	memset(r, 0, sizeof *r);
	r->index = idx;
	r->cuda_ordinal = ordinal;
	kpt_g.ops->device(ordinal, r);
	kpt_slug(r->name ? r->name : "", slug, sizeof slug);
	r->slug = kpt_core_strdup(slug);
	r->driver_string = kpt_g.driver_string;
	if (kpt_g.nvml_ok && r->uuid && r->uuid[0])
		kpt_g.nvml.nvmlDeviceGetHandleByUUID(r->uuid, &kpt_g.dev[ordinal].nvml);
	kpt_g.dev[ordinal].index = idx;
	__atomic_store_n(&kpt_g.dev[ordinal].used, 1, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&kpt_g.devlock);
	return idx;
}
/* ---- drops (under kpt_g.lock) ------------------------------------------------- */

void kpt_core_drop_add(uint32_t device, uint32_t stream, uint64_t count)
{
	if (!count)
		return;
	kpt_g.dropped += count;
	for (size_t i = 0; i < kpt_g.ndrops; i++)
		if (kpt_g.drops[i].device == device && kpt_g.drops[i].stream == stream) {
			kpt_g.drops[i].count += count;
			return;
		}
	if (kpt_grow(&kpt_g.drops, &kpt_g.capdrops, kpt_g.ndrops + 1, sizeof *kpt_g.drops) < 0)
		return;
	kpt_g.drops[kpt_g.ndrops++] = (struct kpt_drop){ .process = 0, .device = device, .stream = stream, .count = count };
}

/* ---- pre-roll ------------------------------------------------------------ */

int kpt_core_preroll_drop(uint32_t corr, uint64_t start, uint64_t end, int what)
{
	enum kpt_preroll_class c;
	uint64_t into = 0;

	pthread_mutex_lock(&kpt_g.prelock);
	c = kpt_preroll_classify(&kpt_g.prelog, corr, start, end, &into);
	pthread_mutex_unlock(&kpt_g.prelock);
	if (c == KPT_PREROLL_NOT)
		return 0;
	if (c == KPT_PREROLL_BEFORE && what == KPT_CORE_KERNEL)
		kpt_g.preroll_dropped++;
	else if (c == KPT_PREROLL_INTO && what == KPT_CORE_KERNEL)
		kpt_g.kernels_before++, kpt_g.kernels_before_ns += into;
	else if (c == KPT_PREROLL_INTO && what == KPT_CORE_MEMOP)
		kpt_g.memops_before++;
	return 1;
}

/* ---- activity buffers ------------------------------------------------------ */

uint8_t *kpt_core_buffer_get(size_t *size)
{
	int n = atomic_load(&kpt_g.npool);

	*size = kpt_g.buf_size;
	for (int i = 0; i < n; i++) {
		int zero = 0;

		if (atomic_compare_exchange_strong(&kpt_g.busy[i], &zero, 1))
			return kpt_g.pool[i];
	}
	/* Pool exhausted: the consumer is behind. Grow once per slot; past the
	 * cap the backend drops records and counts them. */
	n = atomic_fetch_add(&kpt_g.npool, 1);
	if (n < KPT_POOL_MAX) {
		uint8_t *b = aligned_alloc(8, kpt_g.buf_size);

		if (b) {
			atomic_store(&kpt_g.busy[n], 1);
			kpt_g.pool[n] = b;
			atomic_fetch_add(&kpt_g.pool_exhausted, 1);
			return b;
		}
	}
	atomic_store(&kpt_g.npool, KPT_POOL_MAX);
	*size = 0;
	return NULL;
}

void kpt_core_buffer_release(uint8_t *b)
{
	int n = atomic_load(&kpt_g.npool);

	if (n > KPT_POOL_MAX)
		n = KPT_POOL_MAX;
	for (int i = 0; i < n; i++)
		if (kpt_g.pool[i] == b) {
			atomic_store(&kpt_g.busy[i], 0);
			return;
		}
}

uint64_t kpt_core_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* KPT_WINDOW_TEST_OFF (kpt_window.h), the bits of kpt_inject_core.h */
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

/* ---- NVML sampler and the final write -------------------------------------- */

static int nvml_load(void)
{
	void *so = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!so)
		return -1;
	kpt_g.nvml.so = so;
#define KPT_NVML_LOAD(name, ret, args) \
	if (!(*(void **)&kpt_g.nvml.name = dlsym(so, #name))) return -1;
	KPT_NVML_FUNCS(KPT_NVML_LOAD)
#undef KPT_NVML_LOAD
	*(void **)&kpt_g.nvml_reasons = dlsym(so, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!kpt_g.nvml_reasons)
		kpt_g.nvml_reasons = kpt_g.nvml.nvmlDeviceGetCurrentClocksThrottleReasons;
	if (kpt_g.nvml.nvmlInit_v2() != KPT_NVML_SUCCESS)
		return -1;
	kpt_g.nvml.nvmlSystemGetDriverVersion(kpt_g.driver_string, sizeof kpt_g.driver_string);
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

	atomic_store(&kpt_g.last_sample_ns, sampler_now());

	for (uint32_t o = 0; o < KPT_MAX_DEVICES; o++) {
		struct kpt_env_sample s = { 0 };
		unsigned v = 0;
		unsigned long long reasons = 0;
		kpt_nvmlDevice_t h;

		if (!__atomic_load_n(&kpt_g.dev[o].used, __ATOMIC_ACQUIRE) || !(h = kpt_g.dev[o].nvml))
			continue;
		s.t_ns = sampler_now();
		s.device = kpt_g.dev[o].index;
		s.process = 0;
		if (kpt_g.nvml.nvmlDeviceGetClockInfo(h, KPT_NVML_CLOCK_SM, &v) == KPT_NVML_SUCCESS)
			s.sm_mhz = v;
		if (slow || !last[o].mem_mhz) {
			if (kpt_g.nvml.nvmlDeviceGetClockInfo(h, KPT_NVML_CLOCK_MEM, &v) == KPT_NVML_SUCCESS)
				last[o].mem_mhz = v;
			if (kpt_g.nvml.nvmlDeviceGetTemperature(h, KPT_NVML_TEMPERATURE_GPU, &v) == KPT_NVML_SUCCESS)
				last[o].temp_c = v;
		}
		s.mem_mhz = last[o].mem_mhz;
		s.temp_c = last[o].temp_c;
		if (kpt_g.nvml.nvmlDeviceGetPowerUsage(h, &v) == KPT_NVML_SUCCESS)
			s.power_mw = v;
		if (kpt_g.nvml_reasons && kpt_g.nvml_reasons(h, &reasons) == KPT_NVML_SUCCESS)
			s.throttle = reasons;
		pthread_mutex_lock(&kpt_g.lock);
		if (kpt_grow(&kpt_g.env, &kpt_g.capenv, kpt_g.nenv + 1, sizeof *kpt_g.env) == 0)
			kpt_g.env[kpt_g.nenv++] = s;
		pthread_mutex_unlock(&kpt_g.lock);
	}
}

static void *sampler_main(void *arg)
{
	/* Below the program's threads: a sample may come late, a launch
	 * should not wait for a sample. */
	(void)setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10); /* best effort */
	for (;;) {
		struct timespec ts;
		unsigned ms = kpt_core_window_clock(kpt_g.sample_ms && atomic_load(&kpt_g.sample_on) ? kpt_g.sample_ms : 1000);

		/* on demand: the control folder polled every 100 ms */
		if (kpt_g.control_dir && ms > 100)
			ms = 100;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)(ms % 1000) * 1000000L;
		ts.tv_sec += ms / 1000 + ts.tv_nsec / 1000000000L;
		ts.tv_nsec %= 1000000000L;
		sem_timedwait(&kpt_g.wake, &ts);
		if (kpt_g.sig_pending) {
			kpt_core_finish();
			kpt_g.sig_done = 1;
			return NULL;
		}
		if (atomic_load(&kpt_g.stop))
			return NULL;
		kpt_core_control_poll();
		if (kpt_g.nvml_ok && kpt_g.sample_ms && atomic_load(&kpt_g.sample_on))
			sample_once();
	}
}

static int file_finish(struct kpt_diag *d)
{
	struct kpt_process p = { 0 };
	char buf[64];
	int rc;

	if (!kpt_g.w && (rc = kpt_writer_create(kpt_g.path, NULL, &kpt_g.w, d)) < 0)
		return rc;
	for (uint32_t i = 0; i < kpt_g.ndev; i++)
		if ((rc = kpt_writer_device(kpt_g.w, &kpt_g.rows[i], d)) < 0)
			return rc;
	p.index = 0;
	p.run = 0;
	p.pid = kpt_g.pid;
	p.ppid = kpt_g.ppid;
	p.rank = kpt_g.rank;
	p.exit_status = INT32_MIN;
	p.start_ns = kpt_g.start_ns;
	p.end_ns = kpt_core_now();
	p.dropped = kpt_g.dropped;
	if ((rc = kpt_writer_intern_cstr(kpt_g.w, kpt_g.command ? kpt_g.command : "", &p.command, d)) < 0)
		return rc;
	if ((rc = kpt_writer_process(kpt_g.w, &p, d)) < 0)
		return rc;
	for (size_t i = 0; i < kpt_g.ndrops; i++)
		if ((rc = kpt_writer_drop(kpt_g.w, &kpt_g.drops[i], d)) < 0)
			return rc;
	/* A counters pass writes no NVTX ranges: merged beside the timing
	 * runs, its kpt:iter ranges would count iterations without kernels. */
	if (!kpt_g.counters_mode && (rc = kpt_core_ranges_write(d)) < 0)
		return rc;
	if (kpt_g.nenv && (rc = kpt_writer_env(kpt_g.w, kpt_g.env, kpt_g.nenv, d)) < 0)
		return rc;
	kpt_writer_meta(kpt_g.w, "command", kpt_g.command ? kpt_g.command : "", d);
	kpt_writer_meta(kpt_g.w, "collector", "libkptinject " KPT_VERSION, d);
	kpt_writer_meta(kpt_g.w, "collector.api", kpt_g.api ? "1" : "0", d);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)atomic_load(&kpt_g.pool_exhausted));
	kpt_writer_meta(kpt_g.w, "collector.buffers_grown", buf, d);
	kpt_writer_meta(kpt_g.w, "collector.nvml", kpt_g.nvml_ok ? "1" : "0", d);
	/* NVTX range links: API callbacks enabled at the first push (0: no
	 * NVTX, no callback); a failure leaves launches without their range */
	snprintf(buf, sizeof buf, "%u", atomic_load(&kpt_g.api_cbs));
	kpt_writer_meta(kpt_g.w, "collector.api_callbacks", buf, d);
	if (atomic_load(&kpt_g.api_cbs_failed)) {
		snprintf(buf, sizeof buf, "%u", atomic_load(&kpt_g.api_cbs_failed));
		kpt_writer_meta(kpt_g.w, "collector.api_callbacks_failed", buf, d);
	}
	kpt_core_nvtx_meta(d);
	kpt_core_window_meta(d);
	if (atomic_load(&kpt_g.counters) && !kpt_g.forked_child && (rc = kpt_g.ops->write(kpt_g.w, d)) < 0)
		return rc;
	if (kpt_g.forked_child)
		kpt_writer_meta(kpt_g.w, "collector.forked_child", "1", d);
	return kpt_writer_commit(kpt_g.w, d);
}

void kpt_core_finish(void)
{
	struct kpt_diag d;
	char line[4200];
	int rc;

	if (atomic_exchange(&kpt_g.finished, 1))
		return;
	if (!kpt_g.enabled)
		return;
	/* a detach under way ends first; a pending one is cancelled, so no
	 * thread detaches the backend while this one still calls it */
	pthread_mutex_lock(&kpt_g.detlock);
	{
		int pend = KPT_DETACH_PENDING;

		atomic_compare_exchange_strong(&kpt_g.detach, &pend, KPT_DETACH_OFF);
	}
	pthread_mutex_unlock(&kpt_g.detlock);
	if (!kpt_g.forked_child && !kpt_core_gone())
		kpt_g.ops->flush();
	if (kpt_g.sampler_on && !pthread_equal(pthread_self(), kpt_g.sampler)) {
		atomic_store(&kpt_g.stop, 1);
		sem_post(&kpt_g.wake);
		pthread_join(kpt_g.sampler, NULL);
		kpt_g.sampler_on = 0;
	}
	pthread_mutex_lock(&kpt_g.lock);
	if (!kpt_g.forked_child && !kpt_core_gone())
		kpt_g.ops->drops();
	kpt_diag_clear(&d);
	rc = file_finish(&d);
	kpt_writer_destroy(kpt_g.w);
	kpt_g.w = NULL;
	pthread_mutex_unlock(&kpt_g.lock);
	if (rc < 0) {
		kpt_core_fail(&d);
	} else if (!kpt_g.failed) {
		snprintf(line, sizeof line, "ok %s", kpt_g.path);
		status_write(line, NULL);
	}
}

/* ---- signals, fork ------------------------------------------------------------ */

static void on_signal(int sig)
{
	struct timespec ts = { 0, 10 * 1000000L };
	struct sigaction *old = sig == SIGINT ? &kpt_g.old_int : &kpt_g.old_term;

	kpt_g.sig_pending = 1;
	if (kpt_g.sampler_on) {
		sem_post(&kpt_g.wake);
		for (int i = 0; i < 1000 && !kpt_g.sig_done; i++)
			nanosleep(&ts, NULL);
	}
	sigaction(sig, old, NULL);
	raise(sig);
}

static void signals_install(void)
{
	static const int sigs[] = { SIGINT, SIGTERM };

	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
		struct sigaction sa, *old = sigs[i] == SIGINT ? &kpt_g.old_int : &kpt_g.old_term;

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
	struct kpt_thread_log *t = kpt_tls_log;
	struct kpt_diag d;

	if (!kpt_g.enabled)
		return;
	/* The parent's writer, buffers and threads belong to the parent: leak
	 * the copies (never destroy: that would unlink the parent's temporary
	 * file), keep only what this child does from now on. */
	kpt_g.w = NULL;
	kpt_g.forked_child = 1;
	/* the parent's detach is not the child's: a pending or running one is
	 * off here (detach_maybe checks forked_child too); detached stays
	 * detached (no CUPTI call), without the meta */
	if (atomic_load(&kpt_g.detach) != KPT_DETACH_DONE)
		atomic_store(&kpt_g.detach, KPT_DETACH_OFF);
	pthread_mutex_init(&kpt_g.detlock, NULL);
	kpt_g.sampler_on = 0;
	kpt_g.ppid = kpt_g.pid;
	kpt_g.pid = (uint32_t)getpid();
	kpt_g.start_ns = kpt_core_now();
	kpt_g.start_mono = kpt_core_mono();
	kpt_g.nenv = 0;
	kpt_g.ndrops = 0;
	kpt_g.dropped = 0;
	kpt_g.kernels_before = kpt_g.kernels_before_ns = kpt_g.memops_before = kpt_g.preroll_dropped = 0;
	atomic_store(&kpt_g.logs, NULL);
	atomic_store(&kpt_g.finished, 0);
	pthread_mutex_init(&kpt_g.lock, NULL);
	pthread_mutex_init(&kpt_g.devlock, NULL);
	pthread_mutex_init(&kpt_g.prelock, NULL);
	if (t) {
		t->next = NULL;
		t->head = t->tail = NULL;
		memset(&t->st, 0, sizeof t->st);
		atomic_store(&kpt_g.logs, t);
	}
	if (paths_init(&d) < 0)
		kpt_g.enabled = 0;
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
	unsigned nbuf = kpt_core_env_uint(KPT_ENV_BUFFERS, 16, KPT_POOL_MAX);
	int rc;

	kpt_g.buf_size = (size_t)kpt_core_env_uint(KPT_ENV_BUFFER_MB, 8, 256) << 20;
	if (kpt_g.buf_size == 0)
		kpt_g.buf_size = 8u << 20;
	kpt_g.api = getenv(KPT_ENV_API) && strcmp(getenv(KPT_ENV_API), "1") == 0;
	kpt_g.sample_ms = kpt_core_env_uint(KPT_ENV_SAMPLE_MS, 10, 60000);
	{
		const char *l = getenv(KPT_ENV_RANGE_LINK);

		kpt_g.link = !l || !*l || !strcmp(l, "api") ? 0 : !strcmp(l, "runtime") ? 1 : !strcmp(l, "off") ? 2 :
			     !strcmp(l, "both") ? 3 : 0;
	}
	kpt_g.test_off = test_off_parse(getenv(KPT_ENV_WINDOW_TEST_OFF));
	if (kpt_g.test_off & KPT_TEST_OFF_CALLBACKS)
		kpt_g.link = 2;
	if (kpt_g.test_off & KPT_TEST_OFF_NVML)
		kpt_g.sample_ms = 0;
	atomic_store(&kpt_g.sample_on, 1);
	kpt_g.command = read_cmdline();
	if ((rc = paths_init(d)) < 0)
		return rc;
	if ((rc = kpt_writer_create(kpt_g.path, NULL, &kpt_g.w, d)) < 0)
		return rc;
	for (unsigned i = 0; i < nbuf; i++) {
		if (!(kpt_g.pool[i] = aligned_alloc(8, kpt_g.buf_size)))
			return kpt_diag_set(d, KPT_E_NOMEM, "cannot allocate %u activity buffers of %zu MB",
					    nbuf, kpt_g.buf_size >> 20);
		atomic_store(&kpt_g.npool, (int)i + 1);
	}
	if ((rc = kpt_g.ops->start(d)) < 0)
		return rc;
	if (!kpt_g.counters_mode) {
		/* the timing run: its kinds, on now unless a window waits */
		if ((kpt_g.kinds_mask = activity_kinds(d)) < 0)
			return kpt_g.kinds_mask;
		if ((rc = kpt_core_window_start(d)) < 0)
			return rc;
	}
	if ((rc = kpt_g.ops->listen(d)) < 0)
		return rc;
	kpt_g.enabled = 1;
	return 0;
}

void kpt_core_init(const struct kpt_backend_ops *ops)
{
	/* The driver (cuInit) and NVTX's injection can call this from two
	 * threads at once: the first caller initialises, any other returns at
	 * once (it must not wait: the first may be inside cuInit's lock). */
	static atomic_flag once = ATOMIC_FLAG_INIT;
	struct kpt_diag d;

	if (atomic_flag_test_and_set(&once))
		return;
	kpt_g.ops = ops;
	kpt_diag_clear(&d);
	kpt_g.pid = (uint32_t)getpid();
	kpt_g.ppid = (uint32_t)getppid();
	kpt_g.rank = kpt_inject_rank();
	kpt_g.start_ns = kpt_core_now();
	kpt_g.start_mono = kpt_core_mono();
	kpt_g.nvml_ok = nvml_load() == 0;
	if (start(&d) < 0) {
		/* Never stop the target: report and let it run unrecorded. */
		kpt_g.ops->stop();
		kpt_writer_destroy(kpt_g.w);
		kpt_g.w = NULL;
		kpt_g.enabled = 0;
		kpt_core_fail(&d);
		return;
	}
	sem_init(&kpt_g.wake, 0, 0);
	if (pthread_create(&kpt_g.sampler, NULL, sampler_main, NULL) == 0)
		kpt_g.sampler_on = 1;
	signals_install();
	pthread_atfork(NULL, NULL, after_fork_child);
	atexit(kpt_core_finish);
}
