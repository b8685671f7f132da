/* test_window.c - capture windows (collectors/kpt_window.h) without CUDA:
 * option parsing and its errors, and which steps, profiler pairs and
 * times turn collection on. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "kpt_window.h"

static struct kpt_window_spec spec_of(const char *capture, const char *steps, const char *every,
				      const char *delay, const char *duration)
{
	struct kpt_window_spec s;
	struct kpt_diag d;

	kpt_diag_clear(&d);
	assert_int_equal(kpt_window_parse(capture, steps, every, delay, duration, &s, &d), 0);
	return s;
}

static void assert_refused(const char *capture, const char *steps, const char *every, const char *delay,
			   const char *duration, const char *msg_part)
{
	struct kpt_window_spec s;
	struct kpt_diag d;

	kpt_diag_clear(&d);
	assert_int_equal(kpt_window_parse(capture, steps, every, delay, duration, &s, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, msg_part));
}

static void test_no_option_is_the_whole_process(void **state)
{
	struct kpt_window_spec s = spec_of(NULL, NULL, NULL, NULL, NULL);
	struct kpt_window w;
	char buf[128];

	(void)state;
	assert_false(kpt_window_is_set(&s));
	assert_int_equal(kpt_window_init(&w, &s), 1);
	assert_int_equal(kpt_window_range_open(&w, "kpt:iter", NULL), 1);
	kpt_window_describe(&s, buf, sizeof buf);
	assert_string_equal(buf, "the whole process");
}

static void test_parses_nvtx_name_and_domain(void **state)
{
	struct kpt_window_spec s = spec_of("nvtx:hstep@my@dom", NULL, NULL, NULL, NULL);

	(void)state;
	assert_int_equal(s.trigger, KPT_WINDOW_NVTX);
	assert_string_equal(s.range, "hstep@my");     /* the last @ splits */
	assert_string_equal(s.domain, "dom");
	s = spec_of("nvtx:a:b", NULL, NULL, NULL, NULL);
	assert_string_equal(s.range, "a:b");
	assert_string_equal(s.domain, "");
}

static void test_rejects_bad_options(void **state)
{
	char longname[KPT_WINDOW_NAME_MAX + 8];

	(void)state;
	assert_refused("cudaProfilerAPI", NULL, NULL, NULL, NULL, "bad --capture-range 'cudaProfilerAPI'");
	assert_refused("nvtx:", NULL, NULL, NULL, NULL, "empty range name");
	assert_refused("nvtx:x@", NULL, NULL, NULL, NULL, "empty domain");
	memset(longname, 'a', sizeof longname);
	memcpy(longname, "nvtx:", 5);
	longname[sizeof longname - 1] = '\0';
	assert_refused(longname, NULL, NULL, NULL, NULL, "longer than");
	assert_refused(NULL, "5-3", NULL, NULL, NULL, "after the last");
	assert_refused(NULL, "1-", NULL, NULL, NULL, "bad --steps '1-'");
	assert_refused(NULL, "-4", NULL, NULL, NULL, "bad --steps");
	assert_refused(NULL, "1-2x", NULL, NULL, NULL, "bad --steps");
	assert_refused(NULL, NULL, "0", NULL, NULL, "bad --every '0'");
	assert_refused(NULL, NULL, "k", NULL, NULL, "bad --every");
	assert_refused(NULL, "1-2", "3", NULL, NULL, "exclude each other");
	assert_refused("cudaProfilerApi", "1-2", NULL, NULL, NULL, "not with --capture-range cudaProfilerApi");
	assert_refused(NULL, NULL, NULL, "-1", NULL, "bad --delay '-1'");
	assert_refused(NULL, NULL, NULL, NULL, "2s", "bad --duration '2s'");
	assert_refused(NULL, NULL, NULL, "nan", NULL, "bad --delay");
}

/* Seconds are decimal digits: strtod's hex, infinity, signs and exponents
 * are refused, and a duration of 0 (it would read as "to the end"). */
static void test_seconds_are_decimal_and_a_duration_positive(void **state)
{
	struct kpt_window_spec s;

	(void)state;
	assert_refused(NULL, NULL, NULL, NULL, "0", "bad --duration '0'");
	assert_refused(NULL, NULL, NULL, NULL, "0.0000000001", "more than 0");
	assert_refused(NULL, NULL, NULL, NULL, "0x10", "bad --duration '0x10'");
	assert_refused(NULL, NULL, NULL, "0x1p3", NULL, "bad --delay");
	assert_refused(NULL, NULL, NULL, NULL, "inf", "bad --duration");
	assert_refused(NULL, NULL, NULL, NULL, "1e3", "bad --duration");
	assert_refused(NULL, NULL, NULL, "+1", NULL, "bad --delay");
	assert_refused(NULL, NULL, NULL, " 1", NULL, "bad --delay");
	assert_refused(NULL, NULL, NULL, ".", NULL, "bad --delay");
	assert_refused(NULL, NULL, NULL, "", NULL, "bad --delay");
	assert_refused(NULL, NULL, NULL, "1.2.3", NULL, "bad --delay");
	s = spec_of(NULL, NULL, NULL, "0", ".25");
	assert_int_equal(s.delay_ns, 0);
	assert_int_equal(s.duration_ns, 250000000);
	s = spec_of(NULL, NULL, NULL, "2.", "10");
	assert_int_equal(s.delay_ns, UINT64_C(2000000000));
	assert_int_equal(s.duration_ns, UINT64_C(10000000000));
}

/* --steps A-B over kpt:iter (no trigger): steps count from 0, outermost
 * openings only, A..B inclusive. */
static void test_steps_pick_a_to_b_of_kpt_iter(void **state)
{
	struct kpt_window_spec s = spec_of(NULL, "2-3", NULL, NULL, NULL);
	struct kpt_window w;
	int on[6];

	(void)state;
	assert_string_equal(s.range, "kpt:iter");
	assert_int_equal(kpt_window_init(&w, &s), 0);
	for (int i = 0; i < 6; i++) {
		on[i] = kpt_window_range_open(&w, "kpt:iter", NULL);
		/* a nested opening of the same name is not a new step */
		assert_int_equal(kpt_window_range_open(&w, "kpt:iter", NULL), on[i]);
		assert_int_equal(kpt_window_range_close(&w, "kpt:iter", NULL), on[i]);
		assert_int_equal(kpt_window_range_open(&w, "other", NULL), on[i]);
		assert_int_equal(kpt_window_range_close(&w, "other", NULL), on[i]);
		assert_int_equal(kpt_window_range_close(&w, "kpt:iter", NULL), 0);
	}
	assert_int_equal(on[0] + on[1] + on[4] + on[5], 0);
	assert_int_equal(on[2] + on[3], 2);
	assert_int_equal(w.windows, 2);
	assert_int_equal(w.steps_seen, 6);
}

static void test_every_k_picks_one_step_in_k(void **state)
{
	struct kpt_window_spec s = spec_of("nvtx:hstep", NULL, "20", NULL, NULL);
	struct kpt_window w;
	int n = 0;
	char buf[128];

	(void)state;
	kpt_window_init(&w, &s);
	for (int i = 0; i < 200; i++) {
		int on = kpt_window_range_open(&w, "hstep", NULL);

		assert_int_equal(on, i % 20 == 0);
		n += on;
		kpt_window_range_close(&w, "hstep", NULL);
	}
	assert_int_equal(n, 10);
	kpt_window_describe(&s, buf, sizeof buf);
	assert_string_equal(buf, "one step in 20 (0, 20, ...) of range 'hstep'");
}

/* A range of the same name in another domain is not the step range. */
static void test_nvtx_trigger_matches_its_domain_only(void **state)
{
	struct kpt_window_spec s = spec_of("nvtx:ncclAllReduce@NCCL", NULL, NULL, NULL, NULL);
	struct kpt_window w;

	(void)state;
	assert_int_equal(kpt_window_init(&w, &s), 0);
	assert_int_equal(kpt_window_range_open(&w, "ncclAllReduce", NULL), 0);
	assert_int_equal(kpt_window_range_open(&w, "ncclAllReduce", "PyTorch"), 0);
	assert_int_equal(kpt_window_range_open(&w, "ncclAllReduce", "NCCL"), 1);
	assert_int_equal(kpt_window_range_close(&w, "ncclAllReduce", NULL), 1);
	assert_int_equal(kpt_window_range_close(&w, "ncclAllReduce", "NCCL"), 0);
	s = spec_of("nvtx:hstep", NULL, NULL, NULL, NULL);
	kpt_window_init(&w, &s);
	assert_int_equal(kpt_window_range_open(&w, "hstep", "NCCL"), 0);
	assert_int_equal(kpt_window_range_open(&w, "hstep", ""), 1);
}

static void test_profiler_api_pairs_are_windows(void **state)
{
	struct kpt_window_spec s = spec_of("cudaProfilerApi", NULL, NULL, NULL, NULL);
	struct kpt_window w;

	(void)state;
	assert_int_equal(kpt_window_init(&w, &s), 0);
	assert_int_equal(kpt_window_range_open(&w, "kpt:iter", NULL), 0);
	assert_int_equal(kpt_window_profiler(&w, 1), 1);
	assert_int_equal(kpt_window_profiler(&w, 0), 0);
	assert_int_equal(kpt_window_profiler(&w, 1), 1);
	assert_int_equal(w.windows, 2);
}

static void test_delay_and_duration_bound_the_time(void **state)
{
	struct kpt_window_spec s = spec_of(NULL, NULL, NULL, "1.5", "2");
	struct kpt_window w;
	char buf[128];

	(void)state;
	assert_true(kpt_window_is_set(&s));
	assert_int_equal(kpt_window_init(&w, &s), 0);
	assert_int_equal(kpt_window_next_tick(&w, 0), 1500000000ull);
	assert_int_equal(kpt_window_clock(&w, 1499999999ull), 0);
	assert_int_equal(kpt_window_clock(&w, 1500000000ull), 1);
	assert_int_equal(kpt_window_next_tick(&w, 1500000000ull), 3500000000ull);
	assert_int_equal(kpt_window_clock(&w, 3499999999ull), 1);
	assert_int_equal(kpt_window_clock(&w, 3500000000ull), 0);
	assert_int_equal(kpt_window_next_tick(&w, 3500000000ull), UINT64_MAX);
	kpt_window_describe(&s, buf, sizeof buf);
	assert_string_equal(buf, "from 1.500 s for 2.000 s");
	/* --duration alone: from the start */
	s = spec_of(NULL, NULL, NULL, NULL, "1");
	assert_int_equal(kpt_window_init(&w, &s), 1);
	assert_int_equal(kpt_window_clock(&w, 1000000000ull), 0);
}

/* With a trigger, the time window must hold as well. */
static void test_trigger_and_time_both_hold(void **state)
{
	struct kpt_window_spec s = spec_of("nvtx:hstep", NULL, NULL, "10", NULL);
	struct kpt_window w;
	char buf[128];

	(void)state;
	kpt_window_init(&w, &s);
	assert_int_equal(kpt_window_range_open(&w, "hstep", NULL), 0);
	assert_int_equal(kpt_window_clock(&w, 10000000000ull), 1);
	assert_int_equal(kpt_window_range_close(&w, "hstep", NULL), 0);
	kpt_window_describe(&s, buf, sizeof buf);
	assert_string_equal(buf, "every range 'hstep', from 10.000 s to the end");
}

static void test_describe_truncates_safely(void **state)
{
	struct kpt_window_spec s = spec_of("nvtx:hstep@NCCL", "100-110", NULL, NULL, NULL);
	char buf[12];
	int n;

	(void)state;
	n = kpt_window_describe(&s, buf, sizeof buf);
	assert_int_equal(n, (int)strlen("steps 100-110 of range 'hstep' of domain 'NCCL'"));
	assert_int_equal(strlen(buf), sizeof buf - 1);
	assert_memory_equal(buf, "steps 100-1", sizeof buf - 1);
}

/* Pre-roll (--steps/--every): the step before a window and the gaps
 * between picked steps are traced (tracing, not on); never before step 0. */
static void test_preroll_traces_the_step_before_and_the_gaps(void **state)
{
	struct kpt_window_spec s = spec_of("nvtx:hstep", "2-4", NULL, NULL, NULL);
	struct kpt_window w;
	/* per step: tracing while open, tracing after its close */
	static const int open_tr[7] = { 0, 1, 1, 1, 1, 0, 0 }, closed_tr[7] = { 0, 1, 1, 1, 0, 0, 0 };
	static const int open_on[7] = { 0, 0, 1, 1, 1, 0, 0 };

	(void)state;
	assert_true(s.preroll);
	kpt_window_init(&w, &s);
	assert_false(kpt_window_tracing(&w));
	for (int i = 0; i < 7; i++) {
		assert_int_equal(kpt_window_range_open(&w, "hstep", NULL), open_on[i]);
		assert_int_equal(kpt_window_tracing(&w), open_tr[i]);
		assert_int_equal(w.preroll, open_tr[i] && !open_on[i]);
		assert_int_equal(kpt_window_range_close(&w, "hstep", NULL), 0);
		assert_int_equal(kpt_window_tracing(&w), closed_tr[i]);
	}
	/* step 1 (through its gap), the gaps after steps 2 and 3 */
	assert_int_equal(w.prerolls, 3);
	assert_int_equal(w.windows, 3);
}

static void test_preroll_of_every_k_and_when_off(void **state)
{
	struct kpt_window_spec s = spec_of(NULL, NULL, "3", NULL, NULL);
	struct kpt_window w;
	int traced = 0;

	(void)state;
	kpt_window_init(&w, &s);
	for (int i = 0; i < 9; i++) {
		int on = kpt_window_range_open(&w, "kpt:iter", NULL);

		assert_int_equal(on, i % 3 == 0);
		/* step 0 has no step before it; 2, 5 and 8 run up to 3, 6, 9 */
		assert_int_equal(w.preroll, i % 3 == 2);
		traced += kpt_window_tracing(&w);
		kpt_window_range_close(&w, "kpt:iter", NULL);
	}
	assert_int_equal(traced, 6);
	assert_int_equal(w.prerolls, 3);
	/* cleared (KPT_PREROLL=0, no launch callbacks): only the windows */
	s.preroll = 0;
	kpt_window_init(&w, &s);
	for (int i = 0; i < 9; i++) {
		kpt_window_range_open(&w, "kpt:iter", NULL);
		assert_int_equal(kpt_window_tracing(&w), i % 3 == 0);
		kpt_window_range_close(&w, "kpt:iter", NULL);
	}
	assert_int_equal(w.prerolls, 0);
}

/* Windows not known ahead have no pre-roll; a time window bounds it. */
static void test_no_preroll_without_steps_or_outside_the_time(void **state)
{
	struct kpt_window_spec s = spec_of("nvtx:hstep", NULL, NULL, NULL, NULL);
	struct kpt_window w;

	(void)state;
	assert_false(s.preroll);
	kpt_window_init(&w, &s);
	kpt_window_range_open(&w, "hstep", NULL);
	kpt_window_range_close(&w, "hstep", NULL);
	assert_false(kpt_window_tracing(&w));
	s = spec_of("cudaProfilerApi", NULL, NULL, NULL, NULL);
	assert_false(s.preroll);
	s = spec_of(NULL, NULL, NULL, "5", NULL);
	assert_false(s.preroll);
	s = spec_of("nvtx:hstep", NULL, "2", "5", NULL);
	kpt_window_init(&w, &s);
	kpt_window_range_open(&w, "hstep", NULL);  /* step 0, before 5 s */
	kpt_window_range_close(&w, "hstep", NULL);
	kpt_window_range_open(&w, "hstep", NULL);  /* step 1, step 2 is picked */
	assert_false(kpt_window_tracing(&w));
	kpt_window_clock(&w, 5000000000ull);
	assert_true(kpt_window_tracing(&w));
	assert_false(w.on);
	assert_int_equal(kpt_window_range_close(&w, "hstep", NULL), 0);
	assert_int_equal(kpt_window_range_open(&w, "hstep", NULL), 1);
}

/* Records of a pre-roll are told apart by correlation id: ended before the
 * window opened, ran into it (with the time after the opening), or the
 * window's own. */
static void test_preroll_log_classifies_records(void **state)
{
	struct kpt_preroll_log l = { 0 };
	uint64_t into = 0;

	(void)state;
	assert_int_equal(kpt_preroll_classify(&l, 7, 0, 1, NULL), KPT_PREROLL_NOT);
	assert_int_equal(kpt_preroll_begin(&l, 10), 0);
	/* still open: a complete record ended before the window opens */
	assert_int_equal(kpt_preroll_classify(&l, 11, 100, 200, NULL), KPT_PREROLL_BEFORE);
	assert_int_equal(kpt_preroll_classify(&l, 10, 100, 200, NULL), KPT_PREROLL_NOT);
	kpt_preroll_end(&l, 20, 1000);
	kpt_preroll_end(&l, 99, 5);      /* no open period: nothing */
	assert_int_equal(kpt_preroll_classify(&l, 15, 800, 1000, NULL), KPT_PREROLL_BEFORE);
	assert_int_equal(kpt_preroll_classify(&l, 15, 950, 1100, &into), KPT_PREROLL_INTO);
	assert_int_equal(into, 100);
	assert_int_equal(kpt_preroll_classify(&l, 20, 1050, 1200, &into), KPT_PREROLL_INTO);
	assert_int_equal(into, 150);    /* queued: all of it in the window */
	assert_int_equal(kpt_preroll_classify(&l, 21, 1050, 1200, NULL), KPT_PREROLL_NOT);
	assert_int_equal(kpt_preroll_classify(&l, 3, 0, 1, NULL), KPT_PREROLL_NOT);
	/* a second period; a late record of the first window is still its own */
	assert_int_equal(kpt_preroll_begin(&l, 30), 0);
	assert_int_equal(kpt_preroll_classify(&l, 25, 2000, 2100, NULL), KPT_PREROLL_NOT);
	assert_int_equal(kpt_preroll_classify(&l, 12, 999, 1001, NULL), KPT_PREROLL_INTO);
	assert_int_equal(kpt_preroll_classify(&l, 31, 3000, 3100, NULL), KPT_PREROLL_BEFORE);
	/* ended without a window (the time window closed): all dropped */
	kpt_preroll_end(&l, 40, UINT64_MAX);
	assert_int_equal(kpt_preroll_classify(&l, 35, 3000, 9000000, NULL), KPT_PREROLL_BEFORE);
	assert_int_equal(kpt_preroll_classify(&l, 41, 3000, 9000000, NULL), KPT_PREROLL_NOT);
	/* correlation ids wrap at 32 bits */
	assert_int_equal(kpt_preroll_begin(&l, 0xfffffff0u), 0);
	kpt_preroll_end(&l, 5, 10000);
	assert_int_equal(kpt_preroll_classify(&l, 0xfffffff1u, 9000, 9500, NULL), KPT_PREROLL_BEFORE);
	assert_int_equal(kpt_preroll_classify(&l, 2, 9000, 10500, NULL), KPT_PREROLL_INTO);
	assert_int_equal(kpt_preroll_classify(&l, 6, 10100, 10500, NULL), KPT_PREROLL_NOT);
	for (int i = 0; i < 200; i++)   /* grows */
		assert_int_equal(kpt_preroll_begin(&l, 100 + 2u * (unsigned)i), 0);
	assert_int_equal(l.n, 203);
	kpt_preroll_log_free(&l);
	assert_null(l.v);
	kpt_preroll_log_free(&l);
}

/* kpt_window_done: no window can open again (the collector detaches CUPTI
 * then): after the last of --steps, after a --duration, never for --every,
 * cudaProfilerApi or no window. */
static void test_done_after_the_last_window_only(void **state)
{
	struct kpt_window_spec s = spec_of("nvtx:hstep", "1-2", NULL, NULL, NULL);
	struct kpt_window w;

	(void)state;
	kpt_window_init(&w, &s);
	assert_false(kpt_window_done(&w));
	for (int i = 0; i < 3; i++) {
		kpt_window_range_open(&w, "hstep", NULL);
		kpt_window_range_open(&w, "hstep", NULL); /* nested: still step i */
		assert_false(kpt_window_done(&w));
		kpt_window_range_close(&w, "hstep", NULL);
		assert_false(kpt_window_done(&w));       /* step i still open */
		kpt_window_range_close(&w, "hstep", NULL);
		assert_int_equal(kpt_window_done(&w), i == 2); /* step 2 closed: the last */
	}
	s = spec_of("nvtx:hstep", NULL, "20", NULL, NULL);
	kpt_window_init(&w, &s);
	for (int i = 0; i < 100; i++) {
		kpt_window_range_open(&w, "hstep", NULL);
		kpt_window_range_close(&w, "hstep", NULL);
		assert_false(kpt_window_done(&w));
	}
	s = spec_of("cudaProfilerApi", NULL, NULL, NULL, NULL);
	kpt_window_init(&w, &s);
	kpt_window_profiler(&w, 1);
	kpt_window_profiler(&w, 0);
	assert_false(kpt_window_done(&w));
	s = spec_of(NULL, NULL, NULL, "1", "2");      /* 1 s .. 3 s */
	kpt_window_init(&w, &s);
	assert_false(kpt_window_done(&w));
	kpt_window_clock(&w, 2000000000ull);
	assert_false(kpt_window_done(&w));
	kpt_window_clock(&w, 3000000000ull);
	assert_true(kpt_window_done(&w));
	s = spec_of(NULL, NULL, NULL, "1", NULL);     /* to the end */
	kpt_window_init(&w, &s);
	kpt_window_clock(&w, 1000000000000ull);
	assert_false(kpt_window_done(&w));
	s = spec_of(NULL, NULL, NULL, NULL, NULL);
	kpt_window_init(&w, &s);
	assert_false(kpt_window_done(&w));
}

/* ---- sampled captures (--sample-every, --sample-steps, --on-demand) ---- */

static int sample_spec(const char *capture, const char *steps, const char *every, const char *delay,
		       const char *se, const char *ss, const char *od, struct kpt_window_spec *s, struct kpt_diag *d)
{
	kpt_diag_clear(d);
	assert_int_equal(kpt_window_parse(capture, steps, every, delay, NULL, s, d), 0);
	return kpt_window_parse_sampling(se, ss, od, s, d);
}

static void sampling_refused(const char *capture, const char *steps, const char *every, const char *delay,
			     const char *se, const char *ss, const char *od, const char *msg_part)
{
	struct kpt_window_spec s;
	struct kpt_diag d;

	assert_int_equal(sample_spec(capture, steps, every, delay, se, ss, od, &s, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, msg_part));
}

static void test_sampling_parse_and_errors(void **state)
{
	struct kpt_window_spec s;
	struct kpt_diag d;
	char buf[200];

	(void)state;
	assert_int_equal(sample_spec(NULL, NULL, NULL, NULL, NULL, NULL, "0", &s, &d), 0);
	assert_false(kpt_window_sampled(&s));
	assert_int_equal(sample_spec("nvtx:step", NULL, NULL, NULL, "10", NULL, "1", &s, &d), 0);
	assert_true(kpt_window_sampled(&s));
	assert_true(kpt_window_is_set(&s));
	assert_int_equal(s.sample_ns, 10000000000ull);
	assert_int_equal(s.sample_steps, 1);
	assert_true(s.on_demand);
	assert_true(s.preroll);
	kpt_window_describe(&s, buf, sizeof buf);
	assert_string_equal(buf, "one step every 10.000 s and on demand of range 'step'");
	assert_int_equal(sample_spec(NULL, NULL, NULL, NULL, NULL, "2", "1", &s, &d), 0);
	assert_string_equal(s.range, "kpt:iter");
	kpt_window_describe(&s, buf, sizeof buf);
	assert_string_equal(buf, "2 steps on demand of range 'kpt:iter'");
	sampling_refused("cudaProfilerApi", NULL, NULL, NULL, "1", NULL, NULL, "cudaProfilerApi");
	sampling_refused(NULL, "1-2", NULL, NULL, "1", NULL, NULL, "--steps");
	sampling_refused(NULL, NULL, "4", NULL, NULL, NULL, "1", "--every");
	sampling_refused(NULL, NULL, NULL, "2", "1", NULL, NULL, "--delay");
	sampling_refused(NULL, NULL, NULL, NULL, "0", NULL, NULL, "more than 0");
	sampling_refused(NULL, NULL, NULL, NULL, "1e3", NULL, NULL, "bad --sample-every");
	sampling_refused(NULL, NULL, NULL, NULL, "1", "0", NULL, "bad --sample-steps");
	sampling_refused(NULL, NULL, NULL, NULL, "1", "1000001", NULL, "bad --sample-steps");
	sampling_refused(NULL, NULL, NULL, NULL, NULL, "2", NULL, "needs --sample-every or --on-demand");
}

#define SEC 1000000000ull

/* Opens and closes step range r at time t; returns whether it was on. */
static int step_at(struct kpt_window *w, const char *r, uint64_t t)
{
	int on = kpt_window_range_open_at(w, r, NULL, t);

	kpt_window_range_close(w, r, NULL);
	return on;
}

static void test_sampled_picks_by_time_with_preroll(void **state)
{
	struct kpt_window_spec s;
	struct kpt_diag d;
	struct kpt_window w;

	(void)state;
	assert_int_equal(sample_spec("nvtx:step", NULL, NULL, NULL, "10", "2", NULL, &s, &d), 0);
	assert_int_equal(kpt_window_init(&w, &s), 0);
	assert_false(step_at(&w, "step", 0));              /* step 0 */
	assert_false(step_at(&w, "step", 9 * SEC));        /* 1: not due */
	assert_true(kpt_window_idle(&w));
	/* step 2 at 10 s: due, it is the pre-roll of steps 3-4 */
	assert_int_equal(kpt_window_range_open_at(&w, "step", NULL, 10 * SEC), 0);
	assert_true(w.preroll);
	assert_false(kpt_window_idle(&w));
	kpt_window_range_open_at(&w, "other", NULL, 10 * SEC); /* another name counts nothing */
	kpt_window_range_close(&w, "other", NULL);
	kpt_window_range_close(&w, "step", NULL);
	assert_true(kpt_window_tracing(&w));               /* the gap before the capture */
	assert_true(step_at(&w, "step", 11 * SEC));        /* 3 */
	assert_false(kpt_window_idle(&w));                 /* 4 to come: traced between */
	assert_true(step_at(&w, "step", 12 * SEC));        /* 4 */
	assert_true(kpt_window_idle(&w));
	assert_false(kpt_window_done(&w));
	assert_false(step_at(&w, "step", 19 * SEC));       /* 5: the next is due at 20 s */
	assert_false(step_at(&w, "step", 20 * SEC));       /* 6: pre-roll */
	assert_true(step_at(&w, "step", 20 * SEC + 1));    /* 7 */
	assert_int_equal(w.captures, 2);
	assert_int_equal(w.windows, 3);                    /* each step of a capture opens one */
	assert_int_equal(w.prerolls, 4);                   /* the step before and the gap between the two */
}

static void test_requests_arm_the_next_opening(void **state)
{
	struct kpt_window_spec s;
	struct kpt_diag d;
	struct kpt_window w;

	(void)state;
	assert_int_equal(sample_spec("nvtx:step", NULL, NULL, NULL, NULL, NULL, "1", &s, &d), 0);
	s.preroll = 0;                                      /* as KPT_PREROLL=0 */
	assert_int_equal(kpt_window_init(&w, &s), 0);
	assert_false(step_at(&w, "step", 5 * SEC));        /* never by the clock */
	assert_false(step_at(&w, "step", 500 * SEC));
	kpt_window_request(&w, 2);
	kpt_window_request(&w, 1);                          /* merged: the larger count stays */
	assert_true(kpt_window_idle(&w));                   /* armed only at the opening */
	assert_true(step_at(&w, "step", 501 * SEC));       /* no pre-roll: this step */
	kpt_window_request(&w, 1);                          /* while running: waits */
	assert_true(step_at(&w, "step", 502 * SEC));
	assert_true(step_at(&w, "step", 503 * SEC));       /* the waiting request */
	assert_false(step_at(&w, "step", 504 * SEC));
	assert_int_equal(w.requests, 3);
	assert_int_equal(w.captures, 2);
	assert_int_equal(w.windows, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_option_is_the_whole_process),
		cmocka_unit_test(test_parses_nvtx_name_and_domain),
		cmocka_unit_test(test_rejects_bad_options),
		cmocka_unit_test(test_seconds_are_decimal_and_a_duration_positive),
		cmocka_unit_test(test_steps_pick_a_to_b_of_kpt_iter),
		cmocka_unit_test(test_every_k_picks_one_step_in_k),
		cmocka_unit_test(test_nvtx_trigger_matches_its_domain_only),
		cmocka_unit_test(test_profiler_api_pairs_are_windows),
		cmocka_unit_test(test_delay_and_duration_bound_the_time),
		cmocka_unit_test(test_trigger_and_time_both_hold),
		cmocka_unit_test(test_describe_truncates_safely),
		cmocka_unit_test(test_preroll_traces_the_step_before_and_the_gaps),
		cmocka_unit_test(test_preroll_of_every_k_and_when_off),
		cmocka_unit_test(test_no_preroll_without_steps_or_outside_the_time),
		cmocka_unit_test(test_preroll_log_classifies_records),
		cmocka_unit_test(test_done_after_the_last_window_only),
		cmocka_unit_test(test_sampling_parse_and_errors),
		cmocka_unit_test(test_sampled_picks_by_time_with_preroll),
		cmocka_unit_test(test_requests_arm_the_next_opening),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
