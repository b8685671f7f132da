/* kpt_inject_trace.c - the core's capture windows (kpt_window.h: the
 * state machine; here its switches, the pre-roll periods, the detach after
 * the last window) and NVTX range logs (per thread, lock-free on the
 * program's threads; the launch -> range links), and their meta.
 * Backend-neutral: the backend is reached through kpt_g.ops only.
 */
#define _GNU_SOURCE
#include "kpt_inject_core.h"
#include "kpt_control.h"
#include "kpt_grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The least time between two NVML samples that window openings ask for. */
#define KPT_WINDOW_SAMPLE_GAP_NS 1000000000ull
/* The least time from the last window's closing to the detach
 * (kpt_core_detach_maybe): the window's queued work done, its records
 * complete. */
#define KPT_DETACH_GRACE_NS 2000000000ull
/* ... and the most: a window's queued work is bounded by the launch queue,
 * not by the window's length */
#define KPT_DETACH_GRACE_MAX_NS 10000000000ull
/* A sampled run detaches after every window: 2 x its longest window (a
 * window is a pre-roll step and the picked ones: the queue the CPU ran
 * ahead is done by then), within these bounds */
#define KPT_SAMPLE_GRACE_MIN_NS 50000000ull
#define KPT_SAMPLE_GRACE_MAX_NS 2000000000ull

/* ---- capture windows (kpt_window.h) ------------------------------------ */

/* Turns the work callbacks on or off (off outside a capture window: they
 * are not needed to find the next one). Under winlock. */
static void work_callbacks_switch(int on)
{
	uint64_t t0;

	if (!kpt_g.work_listed || kpt_g.work_cbs_on == on)
		return;
	t0 = kpt_core_mono();
	kpt_g.work_cbs_on = on;
	atomic_fetch_add(&kpt_g.api_cbs_failed, kpt_g.ops->work_switch(on));
	kpt_g.switch_cbs_ns += kpt_core_mono() - t0;
}

/* Turns the run's activity kinds (and API kinds with KPT_API) on or off in
 * the backend. Under winlock, or before any other thread can see kpt_g.
 * Records of work launched while the kinds are off never exist: the
 * backend decides at launch; work launched while on is recorded when it
 * completes. */
static int kinds_switch(int on, struct kpt_diag *d)
{
	uint64_t t0;
	int rc;

	if (on == kpt_g.kinds_on)
		return 0;
	kpt_g.kinds_on = on;
	kpt_g.switches++;
	work_callbacks_switch(on);
	if (kpt_g.test_off & KPT_TEST_OFF_KINDS)
		return 0;
	t0 = kpt_core_mono();
	if ((rc = kpt_g.ops->kinds(on, kpt_g.kinds_mask, kpt_g.api, d)) < 0)
		return rc;
	kpt_g.switch_kinds_ns += kpt_core_mono() - t0;
	return 0;
}

/* Arms the detach (kpt_core_detach_maybe) grace ns from now, within the
 * bounds of the run's kind. Under winlock. */
static void detach_arm(uint64_t grace)
{
	uint64_t lo = kpt_g.sampled ? KPT_SAMPLE_GRACE_MIN_NS : KPT_DETACH_GRACE_NS;
	uint64_t hi = kpt_g.sampled ? KPT_SAMPLE_GRACE_MAX_NS : KPT_DETACH_GRACE_MAX_NS;

	if (!kpt_g.detach_ok || kpt_g.kinds_on || !kpt_g.work_listed || atomic_load(&kpt_g.detach) != KPT_DETACH_NO)
		return;
	grace = grace < lo ? lo : grace > hi ? hi : grace;
	kpt_g.clock_off = (int64_t)kpt_core_now() - (int64_t)kpt_core_mono();
	kpt_g.detach_at = kpt_core_mono() + grace;
	work_callbacks_switch(1);
	atomic_store_explicit(&kpt_g.detach, KPT_DETACH_PENDING, memory_order_release);
}

/* A sampled run's window is about to trace: the backend attached (a
 * pending detach cancelled, a done one undone). Under winlock. Returns 0
 * when attached, -1 when not (a thread is detaching it now, or the attach
 * failed: this window goes untraced and is counted). */
static int sampled_attach(void)
{
	int st = KPT_DETACH_PENDING;
	struct kpt_diag d;
	uint64_t t0;

	if (atomic_compare_exchange_strong(&kpt_g.detach, &st, KPT_DETACH_NO))
		return 0; /* armed, not begun: the work callbacks are still on */
	if (st == KPT_DETACH_NO || st == KPT_DETACH_FAILED)
		return 0; /* attached (a refused detach leaves it so) */
	if (st != KPT_DETACH_DONE || kpt_g.forked_child || atomic_load(&kpt_g.finished) ||
	    !atomic_compare_exchange_strong(&kpt_g.detach, &st, KPT_DETACH_BUSY)) {
		kpt_g.windows_missed++;
		return -1;
	}
	kpt_diag_clear(&d);
	t0 = kpt_core_mono();
	if (kpt_g.ops->attach(&d) < 0) {
		atomic_store_explicit(&kpt_g.detach, KPT_DETACH_DONE, memory_order_release);
		if (kpt_g.attach_failed++ == 0)
			kpt_core_fail(&d);
		kpt_g.windows_missed++;
		return -1;
	}
	/* a new subscription: nothing of it is on yet; the backend's
	 * correlation ids may start over, so the pre-roll periods of earlier
	 * attachments (all their records were flushed at the detach) go */
	kpt_g.kinds_on = 0;
	kpt_g.work_cbs_on = 0;
	pthread_mutex_lock(&kpt_g.prelock);
	kpt_g.prelog.n = 0;
	atomic_store(&kpt_g.corr_seen, 0);
	pthread_mutex_unlock(&kpt_g.prelock);
	kpt_g.attaches++;
	kpt_g.attach_ns += kpt_core_mono() - t0;
	atomic_store_explicit(&kpt_g.detach, KPT_DETACH_NO, memory_order_release);
	/* the offset of the clocks again (the sampler's, and the stand-in's
	 * while detached), so that it does not drift over a long run */
	kpt_g.clock_off = (int64_t)kpt_core_now() - (int64_t)kpt_core_mono();
	return 0;
}

/* A sampled run's window rows: one per window, from its opening to its
 * closing (the pre-roll not counted). Under winlock. */
static void sample_row(int on)
{
	if (on && !kpt_g.sample_open) {
		if (kpt_grow(&kpt_g.samples, &kpt_g.capsamples, kpt_g.nsamples + 1, sizeof *kpt_g.samples) == 0) {
			kpt_g.samples[kpt_g.nsamples] = (struct kpt_sample_row){
				.step = kpt_g.win.steps_seen ? kpt_g.win.steps_seen - 1 : 0,
				.open_ns = kpt_core_now(),
				.open_wall_ns = kpt_control_now_ns(), /* the trigger's clock */
			};
			kpt_g.nsamples++;
			kpt_g.sample_open = 1;
		}
	} else if (!on && kpt_g.sample_open) {
		kpt_g.samples[kpt_g.nsamples - 1].close_ns = kpt_core_now();
		kpt_g.sample_open = 0;
	}
}

/* Applies the window's state after an event (on is its result; the kinds
 * follow kpt_window_tracing: in a window or its pre-roll). A pre-roll
 * period begins or ends here; it ends with the window's opening time when
 * the window opened. Called with winlock held. A backend failure is
 * reported and recording goes on. */
static void window_apply(int on)
{
	struct kpt_diag d;
	int pre = kpt_g.win.preroll;

	kpt_diag_clear(&d);
	if (on && !kpt_g.win_was_on)
		kpt_g.win_open_mono = kpt_core_mono();
	else if (!on && kpt_g.win_was_on && kpt_core_mono() - kpt_g.win_open_mono > kpt_g.win_longest)
		kpt_g.win_longest = kpt_core_mono() - kpt_g.win_open_mono;
	kpt_g.win_was_on = on;
	/* a sampled run: attached again at a window's (or pre-roll's) opening */
	if (kpt_g.sampled && kpt_window_tracing(&kpt_g.win) && sampled_attach() < 0)
		return;
	if (kpt_g.sampled)
		sample_row(on);
	if (kpt_window_tracing(&kpt_g.win) && !kpt_g.kinds_on)
		atomic_fetch_add(&kpt_g.trace_gen, 1);
	if (kpt_g.preroll_track && pre != kpt_g.preroll_was) {
		uint32_t seen = atomic_load_explicit(&kpt_g.corr_seen, memory_order_relaxed);
		uint64_t t = on ? kpt_core_now() : UINT64_MAX;

		pthread_mutex_lock(&kpt_g.prelock);
		if (pre && kpt_preroll_begin(&kpt_g.prelog, seen) < 0)
			kpt_diag_set(&d, KPT_E_NOMEM, "out of memory for the pre-roll of a capture window");
		else if (!pre)
			kpt_preroll_end(&kpt_g.prelog, seen, t);
		pthread_mutex_unlock(&kpt_g.prelock);
		kpt_g.preroll_was = pre;
		if (d.code < 0)
			kpt_core_fail(&d);
		kpt_diag_clear(&d);
	}
	/* no backend call while it is detached or a thread detaches it */
	if (!kpt_core_gone() && kinds_switch(kpt_window_tracing(&kpt_g.win), &d) < 0)
		kpt_core_fail(&d);
	/* The last window closed (a sampled run: any window): detach once its
	 * work is done (detach_maybe); a work-API exit on a program thread
	 * does it, so the work callbacks stay on until then */
	if (kpt_g.sampled ? kpt_window_idle(&kpt_g.win) : kpt_window_done(&kpt_g.win))
		detach_arm(kpt_g.sampled ? 2 * kpt_g.win_longest : 4 * kpt_g.win_longest);
	/* NVML follows the tracing: the sampler skips its queries between
	 * windows and is woken at an opening for one sample at once (a window
	 * of a few ms would otherwise often hold none), at most once a second:
	 * fewer queries beside the program's launches (1 step in 20 of a 3.3 ms
	 * step read +1.2% with a sample at every opening and +0.0% with none on
	 * one H100, no difference on another: bench/RESULTS.md) */
	if (atomic_exchange(&kpt_g.sample_on, kpt_g.kinds_on) != kpt_g.kinds_on && kpt_g.kinds_on && kpt_g.sampler_on &&
	    kpt_core_now() - atomic_load(&kpt_g.last_sample_ns) >= KPT_WINDOW_SAMPLE_GAP_NS)
		sem_post(&kpt_g.wake);
}

/* cudaProfilerStart/Stop entered (cudaProfilerApi window): the backend
 * calls this at its callbacks (ops->profiler_api). */
void kpt_core_window_profiler(int start)
{
	pthread_mutex_lock(&kpt_g.winlock);
	window_apply(kpt_window_profiler(&kpt_g.win, start));
	pthread_mutex_unlock(&kpt_g.winlock);
}

/* The clock of a --delay/--duration window: applies it and returns how
 * many ms the sampler may wait before the next change (at most ms). It
 * runs on the sampler thread and reads the monotonic clock, not CUPTI's
 * (no CUPTI call on this thread but the window's own switches); once the
 * window is done nothing is left to apply. */
unsigned kpt_core_window_clock(unsigned ms)
{
	uint64_t t, next;

	if (!kpt_g.win_set || !kpt_g.win.spec.timed || kpt_core_gone())
		return ms;
	t = kpt_core_mono() - kpt_g.start_mono;
	pthread_mutex_lock(&kpt_g.winlock);
	if (kpt_window_done(&kpt_g.win)) {
		pthread_mutex_unlock(&kpt_g.winlock);
		return ms;
	}
	window_apply(kpt_window_clock(&kpt_g.win, t));
	next = kpt_window_next_tick(&kpt_g.win, t);
	pthread_mutex_unlock(&kpt_g.winlock);
	if (next != UINT64_MAX && (next - t) / 1000000u + 1 < ms)
		ms = (unsigned)((next - t) / 1000000u + 1);
	return ms;
}

static void launch_callbacks_list(int force);

int kpt_core_window_start(struct kpt_diag *d)
{
	struct kpt_window_spec spec;
	const char *pre;
	int rc;

	if ((rc = kpt_window_parse(getenv(KPT_ENV_WINDOW_CAPTURE), getenv(KPT_ENV_WINDOW_STEPS),
				   getenv(KPT_ENV_WINDOW_EVERY), getenv(KPT_ENV_WINDOW_DELAY),
				   getenv(KPT_ENV_WINDOW_DURATION), &spec, d)) < 0 ||
	    (rc = kpt_window_parse_sampling(getenv(KPT_ENV_WINDOW_SAMPLE_EVERY), getenv(KPT_ENV_WINDOW_SAMPLE_STEPS),
					    getenv(KPT_ENV_WINDOW_ON_DEMAND), &spec, d)) < 0)
		return rc;
	/* A pre-roll's records are told from the window's by the correlation
	 * ids the work callbacks see: all launches only with the driver's
	 * (KPT_RANGE_LINK=api, the default, or both; runtime would miss
	 * cuBLAS's, off sees none). */
	if (kpt_g.link == 1 || kpt_g.link == 2 || ((pre = getenv(KPT_ENV_WINDOW_PREROLL)) && strcmp(pre, "0") == 0))
		spec.preroll = 0;
	kpt_g.win_set = kpt_window_is_set(&spec);
	/* Not after a --delay/--duration window: the sampler thread switches
	 * those (window_clock), and a cuptiFinalize after such a window
	 * crashed the program inside CUPTI at the detach in 7 of 26 runs on
	 * H100s (CUDA 13.0), while the windows that program threads switch
	 * (nvtx --steps, the same program, short or 100k-kernel windows)
	 * detached in 27 of 27 (bench/RESULTS.md, "The detach after a timed
	 * window crashed the program") */
	kpt_g.detach_ok = kpt_g.win_set && !spec.timed && !kpt_g.counters_mode &&
		      !((pre = getenv(KPT_ENV_WINDOW_DETACH)) && strcmp(pre, "0") == 0);
	kpt_g.preroll_track = spec.preroll;
	/* sampled: detached between windows (unless KPT_DETACH=0, a
	 * measurement's knob), from the first work-API exit on */
	kpt_g.sampled = kpt_window_sampled(&spec) && kpt_g.detach_ok;
	kpt_window_init(&kpt_g.win, &spec);
	if (spec.trigger == KPT_WINDOW_PROFILER_API && (rc = kpt_g.ops->profiler_api(d)) < 0)
		return rc;
	if ((rc = kinds_switch(kpt_g.win.on, d)) < 0)
		return rc;
	atomic_store(&kpt_g.sample_on, kpt_g.kinds_on);
	if (kpt_g.sampled) {
		const char *dir = getenv(KPT_ENV_CONTROL_DIR);

		if (dir && *dir && !(kpt_g.control_dir = strdup(dir)))
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		launch_callbacks_list(1);
		pthread_mutex_lock(&kpt_g.winlock);
		detach_arm(0);
		pthread_mutex_unlock(&kpt_g.winlock);
	}
	return 0;
}

/* ---- NVTX ------------------------------------------------------------------ */

/* A range opening or closing, for an NVTX capture window (the window's
 * spec is fixed after start(): its name is compared without the lock). */
static void window_range(const struct kpt_range_rec *r, int open)
{
	const struct kpt_window_spec *s = &kpt_g.win.spec;

	if (!kpt_g.win_set || s->trigger != KPT_WINDOW_NVTX || !r || strcmp(r->name, s->range) != 0)
		return;
	pthread_mutex_lock(&kpt_g.winlock);
	window_apply(open ? kpt_window_range_open_at(&kpt_g.win, r->name, r->domain, kpt_core_mono() - kpt_g.start_mono) :
			    kpt_window_range_close(&kpt_g.win, r->name, r->domain));
	pthread_mutex_unlock(&kpt_g.winlock);
}

static struct kpt_thread_log *thread_log(void)
{
	struct kpt_thread_log *t = kpt_tls_log, *head;

	if (t)
		return t;
	t = calloc(1, sizeof *t);
	if (!t)
		return NULL;
	t->tid = (uint64_t)syscall(SYS_gettid);
	head = atomic_load(&kpt_g.logs);
	do
		t->next = head;
	while (!atomic_compare_exchange_weak(&kpt_g.logs, &head, t));
	kpt_tls_log = t;
	return t;
}

/* Lists the work-API callbacks (range links, the pre-roll's ids, the
 * detach's program-thread exit) and the launch -> range table, once: at
 * the first NVTX push, or at start for a sampled run (force: even with
 * range links off, for its detaches). */
static void launch_callbacks_list(int force)
{
	_Atomic uint64_t *t;
	int n;

	if (atomic_exchange(&kpt_g.api_cb_on, 1))
		return;
	if (kpt_g.link == 2 && !force)
		return;
	t = calloc((size_t)1 << KPT_CORR_BITS, sizeof *t);
	if (!t || (n = kpt_g.ops->work_list(kpt_g.link == 2 ? 0 : kpt_g.link)) < 0) {
		free(t);
		return;
	}
	kpt_g.corr = t;
	atomic_store(&kpt_g.api_cbs, (unsigned)n);
	pthread_mutex_lock(&kpt_g.winlock);
	kpt_g.work_listed = 1;
	work_callbacks_switch(!kpt_g.win_set || kpt_g.kinds_on);
	pthread_mutex_unlock(&kpt_g.winlock);
}

static struct kpt_range_rec *range_new(struct kpt_thread_log *t, uint32_t kind, char *name, const char *domain)
{
	struct kpt_range_chunk *c = t->tail;
	struct kpt_range_rec *r;
	uint32_t n;

	if (!c || atomic_load_explicit(&c->n, memory_order_relaxed) == KPT_RANGE_CHUNK) {
		struct kpt_range_chunk *nc = malloc(sizeof *nc);

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
	r->row.id = atomic_fetch_add(&kpt_g.next_range, 1);
	r->row.parent = kpt_nvtx_stack_top(&t->st) ? kpt_nvtx_stack_top(&t->st)->id : KPT_NONE;
	r->row.kind = kind;
	r->row.thread = t->tid;
	r->row.start_ns = kpt_core_now();
	r->row.end_ns = kind == KPT_RANGE_MARK ? r->row.start_ns : 0;
	r->name = name ? name : strdup("");
	r->domain = domain;
	atomic_store_explicit(&c->n, n + 1, memory_order_release);
	return r;
}

/* The name of a domain handle (owned by the domain table), NULL for the
 * default domain or one created before collection started. */
static const char *dom_name(uint64_t dom)
{
	return dom ? kpt_nvtx_handles_get(&kpt_g.domains, 0, dom, 0) : NULL;
}

/* Opens a push/pop range of domain on this thread; takes name. */
void kpt_core_range_push(char *name, uint64_t dom)
{
	struct kpt_thread_log *t = thread_log();
	struct kpt_range_rec *r;

	if (!t) {
		free(name);
		return;
	}
	launch_callbacks_list(0);
	/* without a record (out of memory) the frame still keeps the nesting */
	r = range_new(t, KPT_RANGE_PUSHPOP, name, dom_name(dom));
	kpt_nvtx_stack_push(&t->st, dom, r ? r->row.id : KPT_NONE, r);
	window_range(r, 1);
	if (r && kpt_g.sampled) {
		r->traced = atomic_load_explicit(&kpt_g.sample_on, memory_order_relaxed);
		r->gen = atomic_load_explicit(&kpt_g.trace_gen, memory_order_relaxed);
	}
}

/* A sampled run keeps no push/pop range that opened and closed with no
 * tracing in between (a week of steps would fill the memory): a closed
 * range is taken back when it is still the last record of its thread's
 * log (its children, closed before it, were taken back first), opened
 * untraced, and tracing has not begun since (then a launch could link
 * to it). Not once the file is being written. */
static void range_retract(struct kpt_thread_log *t, struct kpt_range_rec *r)
{
	struct kpt_range_chunk *c = t->tail;
	uint32_t n;

	if (!kpt_g.sampled || !r || r->traced || !c || atomic_load(&kpt_g.finished) ||
	    atomic_load_explicit(&kpt_g.sample_on, memory_order_relaxed) ||
	    r->gen != atomic_load_explicit(&kpt_g.trace_gen, memory_order_relaxed))
		return;
	n = atomic_load_explicit(&c->n, memory_order_relaxed);
	if (!n || &c->recs[n - 1] != r)
		return;
	free(r->name);
	r->name = NULL;
	atomic_store_explicit(&c->n, n - 1, memory_order_release);
	atomic_fetch_add_explicit(&kpt_g.ranges_dropped, 1, memory_order_relaxed);
}

/* Closes the innermost open range of domain on this thread, and the ranges
 * of other domains opened inside it (kpt_nvtx_stack.h). */
void kpt_core_range_pop(uint64_t dom)
{
	struct kpt_thread_log *t = thread_log();
	const struct kpt_nvtx_frame *c;
	uint64_t now;
	size_t n;

	if (!t || !(n = kpt_nvtx_stack_pop(&t->st, dom, &c)))
		return;
	now = kpt_core_now();
	for (size_t i = 0; i < n; i++)
		if (c[i].rec) {
			__atomic_store_n(&((struct kpt_range_rec *)c[i].rec)->row.end_ns, now, __ATOMIC_RELAXED);
			window_range(c[i].rec, 0);
		}
	for (size_t i = n; i-- > 0;) /* the crossed (inner) ones first */
		range_retract(t, c[i].rec);
}

/* Opens a start/end range; its end may come from any thread. */
void kpt_core_range_start(char *name, uint64_t dom, const uint64_t *id)
{
	struct kpt_thread_log *t = thread_log();
	struct kpt_range_rec *r;

	if (!t) {
		free(name);
		return;
	}
	r = range_new(t, KPT_RANGE_STARTEND, name, dom_name(dom));
	if (r && id)
		kpt_nvtx_handles_put(&kpt_g.startend, dom, *id, r);
	window_range(r, 1);
}

void kpt_core_range_end(uint64_t dom, uint64_t id)
{
	struct kpt_range_rec *r = kpt_nvtx_handles_get(&kpt_g.startend, dom, id, 1);

	if (r) {
		__atomic_store_n(&r->row.end_ns, kpt_core_now(), __ATOMIC_RELAXED);
		window_range(r, 0);
	}
}

void kpt_core_range_mark(char *name, uint64_t dom)
{
	struct kpt_thread_log *t = thread_log();

	if (!t) {
		free(name);
		return;
	}
	range_new(t, KPT_RANGE_MARK, name, dom_name(dom));
}

/* Detaches the backend (CUPTI: cuptiFinalize) after the last window
 * (kpt_window_done), at the exit of a work API on a program thread, where
 * CUPTI's documentation of
 * cuptiFinalize asks for it, once KPT_DETACH_GRACE_NS (or 4 x the longest
 * window, at most KPT_DETACH_GRACE_MAX_NS) has passed since the window
 * closed (one thread: detlock; kpt_core_finish() cancels a pending one): the work it launched is
 * done by then (a kernel of the window still running at the detach would
 * be lost; the meta says when it happened), its records are flushed here,
 * the drop counts taken (under kpt_g.lock: once, on one thread, so a program
 * thread takes it here). Why: with the kinds disabled, each later launch
 * still paid about 20% more host time than without CUPTI on an H100
 * (kpt-launch-bench, bench/RESULTS.md); after cuptiFinalize, +0.8%
 * [-3.6, +5.3]. Later NVTX ranges are not recorded (no window needs
 * them); ranges open at the detach stay open in the file. */
void kpt_core_detach_maybe(void)
{
	int pend = KPT_DETACH_PENDING;
	int rc;

	if (kpt_g.forked_child || kpt_core_mono() < kpt_g.detach_at || pthread_mutex_trylock(&kpt_g.detlock) != 0)
		return;
	if (!atomic_compare_exchange_strong(&kpt_g.detach, &pend, KPT_DETACH_BUSY)) {
		pthread_mutex_unlock(&kpt_g.detlock);
		return;
	}
	kpt_g.ops->flush();
	pthread_mutex_lock(&kpt_g.lock);
	kpt_g.ops->drops();
	pthread_mutex_unlock(&kpt_g.lock);
	kpt_g.detached_mono = kpt_core_mono();
	rc = kpt_g.ops->detach();
	kpt_g.detaches += rc == 0;
	kpt_g.detach_ns += kpt_core_mono() - kpt_g.detached_mono;
	if (rc < 0) {
		pthread_mutex_lock(&kpt_g.winlock);
		work_callbacks_switch(0);
		pthread_mutex_unlock(&kpt_g.winlock);
	}
	atomic_store_explicit(&kpt_g.detach, rc == 0 ? KPT_DETACH_DONE : KPT_DETACH_FAILED, memory_order_release);
	pthread_mutex_unlock(&kpt_g.detlock);
}

/* On demand (KPT_CONTROL_DIR; the sampler thread, every 100 ms): a new
 * request arms a capture of its steps at the next step opening
 * (kpt_window_request); once that window opened, each process
 * acknowledges it (its first step and when it opened), which is what
 * `kptprof trigger` waits for. */
void kpt_core_control_poll(void)
{
	uint64_t seq = kpt_g.control_seq, nsteps = 0, ack_seq = 0, step = 0, opened = 0;

	if (!kpt_g.control_dir || atomic_load(&kpt_g.finished))
		return;
	if (kpt_control_poll(kpt_g.control_dir, &seq, &nsteps, NULL) == 1) {
		pthread_mutex_lock(&kpt_g.winlock);
		kpt_window_request(&kpt_g.win, nsteps);
		kpt_g.requests++;
		kpt_g.control_pending_seq = seq;
		kpt_g.control_windows_at = kpt_g.nsamples;
		pthread_mutex_unlock(&kpt_g.winlock);
		kpt_g.control_seq = seq;
	}
	pthread_mutex_lock(&kpt_g.winlock);
	if (kpt_g.control_pending_seq && kpt_g.nsamples > kpt_g.control_windows_at) {
		const struct kpt_sample_row *r = &kpt_g.samples[kpt_g.control_windows_at];

		ack_seq = kpt_g.control_pending_seq;
		step = r->step;
		opened = r->open_wall_ns;
		kpt_g.control_pending_seq = 0;
	}
	pthread_mutex_unlock(&kpt_g.winlock);
	if (ack_seq)
		(void)kpt_control_ack(kpt_g.control_dir, (long)kpt_g.pid, ack_seq, step, opened, NULL);
}

/* A sampled run's attachments and windows: counts and times (meta), and
 * one row per window, the newest KPT_SAMPLE_ROWS_MAX, as
 * "step:opened_ns:length_ns" (the records' clock) joined with commas
 * (collector.sample_windows; `report` reads it). Under kpt_g.lock. */
#define KPT_SAMPLE_ROWS_MAX 4096
static void sampled_meta(struct kpt_diag *d)
{
	char buf[64];
	const struct { const char *key; uint64_t v; } kv[] = {
		{ "collector.attaches", kpt_g.attaches },
		{ "collector.attach_us", kpt_g.attach_ns / 1000 },
		{ "collector.attach_failed", kpt_g.attach_failed },
		{ "collector.detaches", kpt_g.detaches },
		{ "collector.detach_us", kpt_g.detach_ns / 1000 },
		{ "collector.windows_missed", kpt_g.windows_missed },
		{ "collector.ranges_untraced_dropped", atomic_load(&kpt_g.ranges_dropped) },
		{ "collector.requests", kpt_g.requests },
		{ "collector.samples", kpt_g.nsamples },
	};
	size_t first, cap, len = 0;
	char *rows;

	for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)kv[i].v);
		kpt_writer_meta(kpt_g.w, kv[i].key, buf, d);
	}
	first = kpt_g.nsamples > KPT_SAMPLE_ROWS_MAX ? kpt_g.nsamples - KPT_SAMPLE_ROWS_MAX : 0;
	cap = (kpt_g.nsamples - first) * 64 + 1;
	if (!kpt_g.nsamples || !(rows = malloc(cap)))
		return;
	rows[0] = 0;
	for (size_t i = first; i < kpt_g.nsamples; i++) {
		const struct kpt_sample_row *r = &kpt_g.samples[i];

		len += (size_t)snprintf(rows + len, cap - len, "%s%llu:%llu:%llu", i > first ? "," : "",
					(unsigned long long)r->step, (unsigned long long)r->open_ns,
					(unsigned long long)(r->close_ns > r->open_ns ? r->close_ns - r->open_ns : 0));
	}
	kpt_writer_meta(kpt_g.w, "collector.sample_windows", rows, d);
	free(rows);
}

int kpt_core_ranges_write(struct kpt_diag *d)
{
	for (struct kpt_thread_log *t = atomic_load(&kpt_g.logs); t; t = t->next)
		for (struct kpt_range_chunk *c = t->head; c; c = c->next) {
			uint32_t n = atomic_load_explicit(&c->n, memory_order_acquire);

			for (uint32_t i = 0; i < n; i++) {
				struct kpt_range row = c->recs[i].row;
				int rc;

				row.end_ns = __atomic_load_n(&c->recs[i].row.end_ns, __ATOMIC_RELAXED);
				row.process = 0;
				row.domain = KPT_NONE;
				if ((rc = kpt_writer_intern_cstr(kpt_g.w, c->recs[i].name, &row.name, d)) < 0)
					return rc;
				if (c->recs[i].domain &&
				    (rc = kpt_writer_intern_cstr(kpt_g.w, c->recs[i].domain, &row.domain, d)) < 0)
					return rc;
				if ((rc = kpt_writer_ranges(kpt_g.w, &row, 1, d)) < 0)
					return rc;
			}
		}
	return 0;
}

/* What the range stacks could not follow (kpt_nvtx_stack.h), summed over
 * threads; written only when it happened. */
void kpt_core_nvtx_meta(struct kpt_diag *d)
{
	uint64_t unmatched = 0, crossed = 0;
	char buf[32];

	for (struct kpt_thread_log *t = atomic_load(&kpt_g.logs); t; t = t->next) {
		unmatched += atomic_load_explicit(&t->st.unmatched, memory_order_relaxed);
		crossed += atomic_load_explicit(&t->st.crossed, memory_order_relaxed);
	}
	if (unmatched) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)unmatched);
		kpt_writer_meta(kpt_g.w, "collector.nvtx_unmatched_pops", buf, d);
	}
	if (crossed) {
		snprintf(buf, sizeof buf, "%llu", (unsigned long long)crossed);
		kpt_writer_meta(kpt_g.w, "collector.nvtx_closed_by_parent", buf, d);
	}
	if (atomic_load(&kpt_g.nvtx_payload))
		kpt_writer_meta(kpt_g.w, "collector.nvtx_payload", "1", d);
}

/* The capture window and how many times it opened. */
void kpt_core_window_meta(struct kpt_diag *d)
{
	char buf[2 * KPT_WINDOW_NAME_MAX + 128];

	if (!kpt_g.win_set)
		return;
	kpt_window_describe(&kpt_g.win.spec, buf, sizeof buf);
	kpt_writer_meta(kpt_g.w, "collector.window", buf, d);
	pthread_mutex_lock(&kpt_g.winlock);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)kpt_g.win.windows);
	pthread_mutex_unlock(&kpt_g.winlock);
	kpt_writer_meta(kpt_g.w, "collector.windows", buf, d);
	/* what crossing the windows cost the program's threads (issue 22:
	 * attributing a window's overhead); us, summed over the run */
	pthread_mutex_lock(&kpt_g.winlock);
	{
		const struct { const char *key; uint64_t v; } sw[] = {
			{ "collector.window_switches", kpt_g.switches },
			{ "collector.window_switch_kinds_us", kpt_g.switch_kinds_ns / 1000 },
			{ "collector.window_switch_callbacks_us", kpt_g.switch_cbs_ns / 1000 },
		};

		for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
			snprintf(buf, sizeof buf, "%llu", (unsigned long long)sw[i].v);
			kpt_writer_meta(kpt_g.w, sw[i].key, buf, d);
		}
	}
	pthread_mutex_unlock(&kpt_g.winlock);
	if (getenv(KPT_ENV_WINDOW_TEST_OFF))
		kpt_writer_meta(kpt_g.w, "collector.window_test_off", getenv(KPT_ENV_WINDOW_TEST_OFF), d);
	if (kpt_g.sampled) {
		pthread_mutex_lock(&kpt_g.winlock);
		sampled_meta(d);
		pthread_mutex_unlock(&kpt_g.winlock);
	}
	switch (kpt_g.forked_child ? KPT_DETACH_NO : atomic_load(&kpt_g.detach)) {
	case KPT_DETACH_DONE:
		kpt_writer_meta(kpt_g.w, "collector.detached", "1", d);
		snprintf(buf, sizeof buf, "%llu",
			 (unsigned long long)((int64_t)kpt_g.detached_mono + kpt_g.clock_off - (int64_t)kpt_g.start_ns));
		kpt_writer_meta(kpt_g.w, "collector.detached_after_ns", buf, d);
		break;
	case KPT_DETACH_FAILED:
		kpt_writer_meta(kpt_g.w, "collector.detach_failed", "1", d);
		break;
	default:
		break;
	}
	if (!kpt_g.preroll_track)
		return;
	/* under kpt_g.lock (file_finish): the counts of record_one */
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)kpt_g.kernels_before);
	kpt_writer_meta(kpt_g.w, "collector.kernels_before_window", buf, d);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)kpt_g.kernels_before_ns);
	kpt_writer_meta(kpt_g.w, "collector.kernels_before_window_ns", buf, d);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)kpt_g.memops_before);
	kpt_writer_meta(kpt_g.w, "collector.memops_before_window", buf, d);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)kpt_g.preroll_dropped);
	kpt_writer_meta(kpt_g.w, "collector.preroll_kernels_dropped", buf, d);
	pthread_mutex_lock(&kpt_g.winlock);
	snprintf(buf, sizeof buf, "%llu", (unsigned long long)kpt_g.win.prerolls);
	pthread_mutex_unlock(&kpt_g.winlock);
	kpt_writer_meta(kpt_g.w, "collector.prerolls", buf, d);
}
