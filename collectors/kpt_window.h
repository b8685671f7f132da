/* kpt_window.h - capture windows without CUDA: which stretches of a
 * process the collector records (`kptprof record --capture-range`,
 * `--steps`, `--every`, `--delay`, `--duration`; docs/cli.md "Capture
 * windows"). `kptprof record` parses the options with kpt_window_parse and
 * hands them to the collector in the KPT_ENV_WINDOW_* variables; the
 * collector parses them again (the same function) and feeds the events it
 * sees (ranges opening and closing, cudaProfilerStart/Stop, the clock) to
 * a struct kpt_window, which says when collection turns on and off. Each
 * process applies the window to itself: ranks count their own steps.
 *
 * Rules:
 * - trigger `cudaProfilerApi`: on between cudaProfilerStart and
 *   cudaProfilerStop (each pair a window).
 * - trigger `nvtx:NAME[@DOMAIN]`: on while a range named NAME (push/pop or
 *   start/end; of DOMAIN, or of the default domain without @DOMAIN) is open.
 *   Each time one opens at the outermost level is one step, numbered from 0.
 * - `--steps A-B` and `--every K` pick steps: A..B inclusive, or every K-th
 *   (steps 0, K, 2K, ...). Their range is the trigger's NAME, else kpt:iter
 *   (kpt-workloads' per-iteration range).
 * - `--delay S` / `--duration S`: on only from S seconds after the process
 *   started, for S seconds (S decimal digits, a duration more than 0; no
 *   --duration: to the end). Alone they are the window; with a trigger
 *   both must hold.
 * - no option at all: always on (the whole process).
 * - pre-roll: with --steps or --every the next window is known one step
 *   ahead, so the collector traces from the opening of the step before a
 *   window (and the gaps between picked steps) on, and keeps of what it
 *   traced there only the count and GPU time of the kernels that were
 *   still running or queued when the window opened (struct
 *   kpt_preroll_log). CUPTI decides at launch whether a kernel is traced:
 *   without this, a kernel launched just before a window and running into
 *   it is lost without a trace. No pre-roll before step 0 (nothing says
 *   when it comes) nor for cudaProfilerApi, nvtx: without --steps/--every
 *   or time windows (not known ahead).
 *   Why from the opening of the step before, not its closing: what runs
 *   into a window is what the step before launched and the GPU had not
 *   finished when the window opened, and with no synchronisation between
 *   steps (the usual training loop) that is the tail of the step before,
 *   launched before its closing, up to a whole step's worth of queue when
 *   the CPU runs ahead. Tracing from the closing would see only the
 *   launches of the gap (between the ranges: usually none), so it would
 *   miss exactly those kernels. Nothing tells at launch which of the step
 *   before's launches will still be running at the opening, so the whole
 *   step is traced.
 */
#ifndef KPT_WINDOW_H
#define KPT_WINDOW_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"

#define KPT_ENV_WINDOW_CAPTURE "KPT_CAPTURE_RANGE" /* cudaProfilerApi | nvtx:NAME[@DOMAIN] */
#define KPT_ENV_WINDOW_STEPS "KPT_STEPS"           /* A-B */
#define KPT_ENV_WINDOW_EVERY "KPT_EVERY"           /* K */
#define KPT_ENV_WINDOW_DELAY "KPT_DELAY"           /* seconds, decimal */
#define KPT_ENV_WINDOW_DURATION "KPT_DURATION"     /* seconds, decimal */
#define KPT_ENV_WINDOW_PREROLL "KPT_PREROLL"       /* 0: no pre-roll (the collector reads it) */
#define KPT_ENV_WINDOW_DETACH "KPT_DETACH"         /* 0: stay attached after the last window */
#define KPT_ENV_WINDOW_SAMPLE_EVERY "KPT_SAMPLE_EVERY" /* seconds, decimal: --sample-every */
#define KPT_ENV_WINDOW_SAMPLE_STEPS "KPT_SAMPLE_STEPS" /* N: --sample-steps */
#define KPT_ENV_WINDOW_ON_DEMAND "KPT_ON_DEMAND"       /* 1: --on-demand */
/* A measurement knob, not for users: a comma list of parts of the
 * collector to leave off, to attribute what a window costs
 * (scripts/gpu/windows.sh): nvml (no NVML sampling, in windows either),
 * callbacks (no work-API callbacks: no range links, no pre-roll), kinds
 * (the activity kinds are never enabled: windows open and close, nothing
 * is traced). Recorded as meta collector.window_test_off. */
#define KPT_ENV_WINDOW_TEST_OFF "KPT_WINDOW_TEST_OFF"

/* The window's settings as `kptprof record` passes them (NULL: not
 * given), in this order: --capture-range, --steps, --every, --delay,
 * --duration, --sample-every, --sample-steps, --on-demand ("1"). */
#define KPT_WINDOW_SETTINGS 8

#define KPT_WINDOW_NAME_MAX 256
#define KPT_WINDOW_SAMPLE_STEPS_MAX 1000000 /* --sample-steps, kptprof trigger --steps */  /* bytes of NAME and of DOMAIN, with the NUL */

enum kpt_window_trigger {
	KPT_WINDOW_ALWAYS = 0,       /* no trigger: time window or everything */
	KPT_WINDOW_PROFILER_API,     /* cudaProfilerStart/Stop */
	KPT_WINDOW_NVTX,             /* a named range */
};

struct kpt_window_spec {
	enum kpt_window_trigger trigger;
	char range[KPT_WINDOW_NAME_MAX];   /* the step range (NVTX trigger, --steps, --every) */
	char domain[KPT_WINDOW_NAME_MAX];  /* "" the default domain */
	int steps;                         /* --steps given */
	uint64_t first, last;              /* --steps A-B */
	uint64_t every;                    /* --every K; 0 not given */
	uint64_t delay_ns, duration_ns;    /* duration 0: to the end */
	int timed;                         /* --delay or --duration given */
	int preroll;                       /* trace the step before each window (set with --steps/--every;
					    * the collector clears it when it cannot tell launches apart) */
	/* sampled (kpt_window_parse_sampling): a capture of sample_steps
	 * steps every sample_ns (0: not timed) and/or at each request
	 * (on_demand, kpt_window_request) */
	uint64_t sample_ns;
	uint64_t sample_steps;
	int on_demand;
};

/* Parses the five settings (each NULL when not given) into *spec. Returns
 * 0, or KPT_E_INVAL with d naming the bad value: an unknown trigger, an
 * empty NAME or DOMAIN or one of KPT_WINDOW_NAME_MAX bytes or more, A-B
 * not two numbers with A <= B, K < 1, a negative or non-numeric time,
 * --steps with --every, --steps/--every with cudaProfilerApi. */
int kpt_window_parse(const char *capture, const char *steps, const char *every, const char *delay,
		     const char *duration, struct kpt_window_spec *spec, struct kpt_diag *d);

/* Sparse sampling and on-demand capture (`--sample-every S`,
 * `--sample-steps N`, `--on-demand`; each NULL when not given), parsed
 * into spec after kpt_window_parse: a capture is N steps (default 1) of
 * the step range (the trigger's NAME, else kpt:iter), armed at a step's
 * opening once S seconds have passed since the last capture was armed
 * (the first S seconds after the start), or after a request; with the
 * pre-roll that opening's step is the pre-roll and the capture the steps
 * after it. Not with --steps, --every, cudaProfilerApi, --delay or
 * --duration. Returns 0 or KPT_E_INVAL with d naming the bad value. */
int kpt_window_parse_sampling(const char *sample_every, const char *sample_steps, const char *on_demand,
			      struct kpt_window_spec *spec, struct kpt_diag *d);

/* Whether spec samples (--sample-every or --on-demand): the collector
 * then detaches between captures. */
int kpt_window_sampled(const struct kpt_window_spec *spec);

/* Whether spec restricts recording at all. */
int kpt_window_is_set(const struct kpt_window_spec *spec);

/* One line describing the window ("steps 100-110 of range 'hstep'"), for
 * the recording's meta and `report`. Returns snprintf's count. */
int kpt_window_describe(const struct kpt_window_spec *spec, char *out, unsigned long cap);

/* The state of one process. Not thread-safe: the collector serialises. */
struct kpt_window {
	struct kpt_window_spec spec;
	uint64_t steps_seen;        /* outermost openings of the step range */
	uint32_t open;              /* nesting of the step range now */
	int step_on;                /* the open step is picked */
	int profiler_on;            /* between cudaProfilerStart and Stop */
	int time_on;                /* inside the time window */
	int time_over;              /* past the end of a --duration window */
	int on;                     /* collection on now */
	int preroll;                /* off, but the next step is picked: tracing ahead of it */
	uint64_t windows;           /* times collection turned on */
	uint64_t prerolls;          /* times the pre-roll began */
	/* sampled: the capture armed (steps cap_from .. cap_from + cap_n - 1;
	 * cap_n 0: none), when the next timed one is due (ns since the
	 * start), a request waiting for the next opening (its steps), counts */
	uint64_t cap_from, cap_n;
	uint64_t next_sample_ns;
	uint64_t request_steps;
	uint64_t requests, captures;
};

/* Starts the state: time 0 is the process start. Returns whether
 * collection is on from the start. */
int kpt_window_init(struct kpt_window *w, const struct kpt_window_spec *spec);

/* Events. Each returns the state after it: 1 on, 0 off (compare with the
 * state before to find a transition). name/domain: the range's name and
 * domain name (NULL or "" the default domain). */
int kpt_window_range_open(struct kpt_window *w, const char *name, const char *domain);
/* The same at since_start_ns (a sampled window arms by the clock). */
int kpt_window_range_open_at(struct kpt_window *w, const char *name, const char *domain, uint64_t since_start_ns);
/* On demand: capture nsteps steps (0: spec's sample_steps) from the next
 * step opening. A request while one waits keeps the larger count; one
 * while a capture is armed or running waits for the opening after it.
 * Counted in w->requests. */
void kpt_window_request(struct kpt_window *w, uint64_t nsteps);
/* Whether nothing is traced now and nothing is armed to be: a sampled
 * run may detach. */
int kpt_window_idle(const struct kpt_window *w);
int kpt_window_range_close(struct kpt_window *w, const char *name, const char *domain);
int kpt_window_profiler(struct kpt_window *w, int start);
int kpt_window_clock(struct kpt_window *w, uint64_t since_start_ns);

/* Whether the collector traces now: in a window or in its pre-roll. */
int kpt_window_tracing(const struct kpt_window *w);

/* Whether no window can open again: tracing is off and either the last
 * step of --steps A-B has closed or a --duration window has ended. (Never
 * for --every, cudaProfilerApi, a plain nvtx: trigger or no window, unless
 * with a --duration.) After the last step of --steps A-B with no
 * --delay/--duration, the collector then detaches CUPTI (kpt_inject_trace.c,
 * kpt_core_detach_maybe; docs/cli.md "After the last window"): disabling the
 * activity kinds leaves every later launch paying about a fifth more host
 * time on an H100 (bench/RESULTS.md), cuptiFinalize takes that away. A
 * timed window stops the sampler's clock (kpt_core_window_clock) but keeps
 * CUPTI attached: a detach after one crashed the program inside CUPTI. */
int kpt_window_done(const struct kpt_window *w);

/* The next time (ns since the start) at which the clock alone changes the
 * state, UINT64_MAX when never. */
uint64_t kpt_window_next_tick(const struct kpt_window *w, uint64_t since_start_ns);

/* Pre-roll periods, to tell the records traced ahead of a window from the
 * window's own. A period spans the launches whose CUPTI correlation ids
 * (one process-wide counter, increasing, 32 bits wrapping) come after the
 * largest id seen when it began and up to the largest seen when the window
 * opened. The collector serialises calls. Memory: one entry per period. */
struct kpt_preroll {
	uint32_t after;             /* largest correlation id seen before the period */
	uint32_t last;              /* largest seen when it ended (ended) */
	uint64_t open_ns;           /* when the window opened; UINT64_MAX none followed */
	int ended;
};

struct kpt_preroll_log {
	struct kpt_preroll *v;
	size_t n, cap;
};

enum kpt_preroll_class {
	KPT_PREROLL_NOT = 0,        /* not launched in a pre-roll: the window's own */
	KPT_PREROLL_BEFORE,         /* launched in a pre-roll, ended before the window opened */
	KPT_PREROLL_INTO,           /* launched in a pre-roll, ran (or waited) into the window */
};

/* A period begins; corr_seen is the largest correlation id seen so far.
 * Returns 0 or KPT_E_NOMEM (the period is then not logged). */
int kpt_preroll_begin(struct kpt_preroll_log *l, uint32_t corr_seen);

/* The open period ends: the window opened at open_ns (the records' clock),
 * or UINT64_MAX when tracing stopped without a window. No-op without an
 * open period. */
void kpt_preroll_end(struct kpt_preroll_log *l, uint32_t corr_seen, uint64_t open_ns);

/* Which kind a record of launch correlation id corr, running start..end,
 * is. For KPT_PREROLL_INTO, *into_ns (may be NULL) is its time after the
 * window opened. O(periods since its own), one step for a window's record. */
enum kpt_preroll_class kpt_preroll_classify(const struct kpt_preroll_log *l, uint32_t corr, uint64_t start_ns,
					    uint64_t end_ns, uint64_t *into_ns);

void kpt_preroll_log_free(struct kpt_preroll_log *l);

#endif
