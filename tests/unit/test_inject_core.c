/* test_inject_core.c - the collector's backend-neutral core
 * (collectors/kpt_inject_core.h) driven by a fake backend, without CUDA or
 * CUPTI: the seam struct kpt_backend_ops, the buffer pool and its growth,
 * a --steps window with its pre-roll (the kinds and work callbacks it
 * switches, the pre-roll's record dropped and counted), the launch -> range
 * link, drop accounting, the detach after the last window, and the .kpt
 * file the core writes (devices, drops, ranges, meta, status file).
 *
 * The core is one per process (kpt_g): the tests run in order on one
 * collector, the last reads the file back.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_control.h"
#include "kpt_format.h"
#include "kpt_inject_core.h"

/* ---- the fake backend: a clock, a queue of kernels, call logs ---------- */

struct fake_kernel {
	uint32_t corr;
	uint64_t start, end;
};

static struct {
	uint64_t now;                     /* the backend's clock */
	int started, listened, stopped, detached, flushes, attached;
	int kinds[8], nkinds;             /* on/off per ops->kinds call */
	int on;                           /* the kinds now: records exist */
	int work[8], nwork;               /* on/off per ops->work_switch call */
	int link;                         /* ops->work_list's argument */
	uint64_t new_drops;               /* reported at the next ops->drops */
	struct fake_kernel q[8];          /* completed, not yet flushed */
	int nq;
} fk;

static int fake_start(struct kpt_diag *d)
{
	(void)d;
	fk.started++;
	return 0;
}

static int fake_listen(struct kpt_diag *d)
{
	(void)d;
	fk.listened++;
	return 0;
}

static void fake_stop(void)
{
	fk.stopped++;
}

static int fake_timestamp(uint64_t *ns)
{
	*ns = fk.now;
	return 0;
}

static int fake_kinds(int on, int mask, int api, struct kpt_diag *d)
{
	(void)mask, (void)api, (void)d;
	if (fk.nkinds < 8)
		fk.kinds[fk.nkinds++] = on;
	fk.on = on;
	return 0;
}

static int fake_work_list(int link)
{
	fk.link = link;
	return 3;
}

static unsigned fake_work_switch(int on)
{
	if (fk.nwork < 8)
		fk.work[fk.nwork++] = on;
	return 0;
}

static int fake_profiler_api(struct kpt_diag *d)
{
	(void)d;
	return 0;
}

/* The buffer-complete path of a backend: records converted into the
 * writer under kpt_g.lock, pre-roll records left out. */
static void fake_flush(void)
{
	struct kpt_diag d;

	fk.flushes++;
	pthread_mutex_lock(&kpt_g.lock);
	for (int i = 0; i < fk.nq && kpt_g.w; i++) {
		struct fake_kernel *k = &fk.q[i];
		struct kpt_kernel row = { .start_ns = k->start, .end_ns = k->end, .stream = 7,
					  .correlation = k->corr, .graph = KPT_NONE };

		if (kpt_g.preroll_track &&
		    kpt_core_preroll_drop(k->corr, k->start, k->end, KPT_CORE_KERNEL))
			continue;
		row.device = kpt_core_device(0);
		row.range = kpt_core_corr_range(k->corr);
		assert_int_equal(kpt_writer_intern_cstr(kpt_g.w, "fake_kernel", &row.name, &d), 0);
		assert_int_equal(kpt_writer_kernels(kpt_g.w, &row, 1, &d), 0);
	}
	fk.nq = 0;
	pthread_mutex_unlock(&kpt_g.lock);
}

/* Under kpt_g.lock: what was lost since the last query, as CUPTI counts */
static void fake_drops(void)
{
	kpt_core_drop_add(kpt_core_device(0), 7, fk.new_drops);
	fk.new_drops = 0;
}

static int fake_detach(void)
{
	fk.detached++;
	return 0;
}

static int fake_attach(struct kpt_diag *d)
{
	(void)d;
	fk.attached++;
	return 0;
}

static void fake_device(uint32_t ordinal, struct kpt_device *r)
{
	(void)ordinal;
	r->name = kpt_core_strdup("Fake GPU 80GB");
	r->uuid = kpt_core_strdup("GPU-00000000-0000-0000-0000-000000000001");
	r->sm_count = 132;
}

static int fake_write(struct kpt_writer *w, struct kpt_diag *d)
{
	(void)w, (void)d;
	fail_msg("ops->write is for a counters pass only");
	return 0;
}

static const struct kpt_backend_ops fake_backend = {
	.name = "fake",
	.start = fake_start,
	.listen = fake_listen,
	.stop = fake_stop,
	.timestamp = fake_timestamp,
	.kinds = fake_kinds,
	.work_list = fake_work_list,
	.work_switch = fake_work_switch,
	.profiler_api = fake_profiler_api,
	.flush = fake_flush,
	.drops = fake_drops,
	.detach = fake_detach,
	.attach = fake_attach,
	.device = fake_device,
	.write = fake_write,
};

static char dir[] = "/tmp/kpt-test-inject-core-XXXXXX";
static char out[256], status[256];

/* A launch at time t with correlation id corr: its kernel runs 100..200
 * ns later, and has a record when the kinds were on at the launch. */
static void launch(uint32_t corr, uint64_t t)
{
	fk.now = t;
	kpt_core_work_seen(corr);
	kpt_core_work_link(corr);
	if (fk.on)
		fk.q[fk.nq++] = (struct fake_kernel){ .corr = corr, .start = t + 100, .end = t + 200 };
}

/* One step of the program: the range "step" around a launch. */
static void step(uint32_t corr, uint64_t t)
{
	fk.now = t;
	kpt_core_range_push(strdup("step"), 0);
	launch(corr, t + 10);
	fk.now = t + 500;
	kpt_core_range_pop(0);
}

/* ---- tests, in order ------------------------------------------------------ */

/* kpt_core_init from several threads at once (the driver's cuInit and NVTX's
 * injection can race): the backend starts once. */
static pthread_barrier_t init_gate;

static void *init_thread(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&init_gate);
	kpt_core_init(&fake_backend);
	return NULL;
}

static void test_starts_through_the_ops(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(out, sizeof out, "%s/run-%%p.kpt", dir);
	snprintf(status, sizeof status, "%s/status", dir);
	setenv(KPT_ENV_OUTPUT, out, 1);
	setenv(KPT_ENV_STATUS, status, 1);
	setenv(KPT_ENV_SAMPLE_MS, "0", 1);   /* no NVML sample */
	setenv(KPT_ENV_BUFFERS, "2", 1);
	setenv(KPT_ENV_BUFFER_MB, "1", 1);
	setenv(KPT_ENV_WINDOW_CAPTURE, "nvtx:step", 1);
	setenv(KPT_ENV_WINDOW_STEPS, "1-1", 1); /* the second; the first is its pre-roll */
	fk.now = 1000;
	{
		pthread_t th[4];

		assert_int_equal(pthread_barrier_init(&init_gate, NULL, 4), 0);
		for (int i = 0; i < 4; i++)
			assert_int_equal(pthread_create(&th[i], NULL, init_thread, NULL), 0);
		for (int i = 0; i < 4; i++)
			assert_int_equal(pthread_join(th[i], NULL), 0);
		pthread_barrier_destroy(&init_gate);
	}
	assert_int_equal(fk.started, 1);
	assert_int_equal(fk.listened, 1);
	assert_int_equal(fk.stopped, 0);
	assert_true(kpt_g.enabled);
	assert_true(kpt_g.win_set);
	assert_true(kpt_g.preroll_track);
	assert_int_equal(fk.nkinds, 0);      /* a window waits: nothing on */
	assert_int_equal(atomic_load(&kpt_g.npool), 2);
}

static void test_pool_grows_when_exhausted(void **state)
{
	size_t sz[3];
	uint8_t *b[3];

	(void)state;
	for (int i = 0; i < 3; i++) {
		b[i] = kpt_core_buffer_get(&sz[i]);
		assert_non_null(b[i]);
		assert_int_equal(sz[i], 1u << 20);
	}
	assert_ptr_not_equal(b[0], b[1]);
	assert_ptr_not_equal(b[2], b[1]);
	assert_int_equal(atomic_load(&kpt_g.pool_exhausted), 1);
	for (int i = 0; i < 3; i++)
		kpt_core_buffer_release(b[i]);
	/* given back: the next request takes a free one, no growth */
	b[0] = kpt_core_buffer_get(&sz[0]);
	assert_non_null(b[0]);
	assert_int_equal(atomic_load(&kpt_g.pool_exhausted), 1);
	kpt_core_buffer_release(b[0]);
}

static void test_preroll_then_window_switch_the_backend(void **state)
{
	(void)state;
	step(10, 2000);                      /* step 0: the pre-roll of step 1 */
	assert_int_equal(fk.link, 0);        /* KPT_RANGE_LINK unset: api */
	assert_int_equal(atomic_load(&kpt_g.api_cbs), 3);
	assert_int_equal(fk.nkinds, 1);
	assert_int_equal(fk.kinds[0], 1);    /* on for the pre-roll */
	assert_int_equal(kpt_g.win.prerolls, 1);
	assert_int_equal(kpt_g.win.windows, 0);
	assert_int_equal(fk.nq, 1);
	launch(15, 2600);                    /* between the steps: still the pre-roll */
	assert_int_equal(fk.nq, 2);
	step(20, 3000);                      /* step 1: the window */
	assert_int_equal(fk.nq, 3);
	assert_int_equal(fk.nkinds, 2);
	assert_int_equal(fk.kinds[1], 0);    /* off after the last window */
	assert_int_equal(kpt_g.win.windows, 1);
	assert_int_equal(kpt_g.win.prerolls, 1);
	/* work callbacks: on with the kinds, off with them, on again until
	 * the detach (a work-API exit does it) */
	assert_int_equal(fk.nwork, 3);
	assert_int_equal(fk.work[0], 1);
	assert_int_equal(fk.work[1], 0);
	assert_int_equal(fk.work[2], 1);
	assert_int_equal(atomic_load(&kpt_g.detach), KPT_DETACH_PENDING);
}

static void test_detaches_after_the_grace(void **state)
{
	(void)state;
	kpt_core_detach_maybe();             /* too early: the grace */
	assert_int_equal(fk.detached, 0);
	usleep(2100 * 1000);                 /* KPT_DETACH_GRACE_NS, 2 s */
	fk.new_drops = 5;
	kpt_core_detach_maybe();
	assert_int_equal(fk.detached, 1);
	assert_int_equal(fk.flushes, 1);     /* records flushed first */
	assert_int_equal(atomic_load(&kpt_g.detach), KPT_DETACH_DONE);
	assert_int_equal(kpt_g.preroll_dropped, 2); /* both ended before step 1 */
	assert_int_equal(kpt_g.dropped, 5);
}

static void test_finish_writes_the_file(void **state)
{
	const struct kpt_device *dev;
	const struct kpt_drop *drops;
	const struct kpt_process *proc;
	const struct kpt_range *ranges;
	const struct kpt_kernel *k;
	struct kpt_kernel_cursor *cur;
	struct kpt_file *f;
	struct kpt_diag d;
	char path[300], line[400];
	size_t n;
	FILE *st;

	(void)state;
	kpt_core_finish();
	assert_int_equal(fk.flushes, 1);     /* detached: no backend call */
	snprintf(path, sizeof path, "%s/run-%u.kpt", dir, (unsigned)getpid());
	st = fopen(status, "r");
	assert_non_null(st);
	assert_non_null(fgets(line, sizeof line, st));
	fclose(st);
	line[strcspn(line, "\n")] = '\0';
	assert_string_equal(line + 3, path);
	assert_memory_equal(line, "ok ", 3);

	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_int_equal(kpt_file_load_strings(f, &d), 0);
	assert_int_equal(kpt_file_devices(f, &dev, &n, &d), 0);
	assert_int_equal(n, 1);
	assert_string_equal(dev[0].name, "Fake GPU 80GB");
	assert_string_equal(dev[0].slug, "fake-gpu-80gb");
	assert_int_equal(dev[0].sm_count, 132);
	assert_int_equal(kpt_file_drops(f, &drops, &n, &d), 0);
	assert_int_equal(n, 1);
	assert_int_equal(drops[0].stream, 7);
	assert_int_equal(drops[0].count, 5);
	assert_int_equal(kpt_file_processes(f, &proc, &n, &d), 0);
	assert_int_equal(n, 1);
	assert_int_equal(proc[0].dropped, 5);
	assert_int_equal(proc[0].pid, (uint32_t)getpid());
	assert_int_equal(kpt_file_ranges(f, &ranges, &n, &d), 0);
	assert_int_equal(n, 2);
	assert_string_equal(kpt_file_string(f, ranges[1].name), "step");
	assert_int_equal(ranges[1].start_ns, 3000);
	assert_int_equal(ranges[1].end_ns, 3500);
	/* the pre-roll's kernel dropped, the window's linked to its range */
	assert_int_equal(kpt_kernel_cursor_create(f, &cur, &d), 0);
	assert_int_equal(kpt_kernel_cursor_next(cur, &k, &n, &d), 1);
	assert_int_equal(n, 1);
	assert_int_equal(k[0].correlation, 20);
	assert_int_equal(k[0].range, ranges[1].id);
	assert_int_equal(k[0].device, dev[0].index);
	assert_int_equal(kpt_kernel_cursor_next(cur, &k, &n, &d), 0);
	kpt_kernel_cursor_destroy(cur);
	assert_string_equal(kpt_file_meta_get(f, "collector.windows"), "1");
	assert_string_equal(kpt_file_meta_get(f, "collector.prerolls"), "1");
	assert_string_equal(kpt_file_meta_get(f, "collector.preroll_kernels_dropped"), "2");
	assert_string_equal(kpt_file_meta_get(f, "collector.kernels_before_window"), "0");
	assert_string_equal(kpt_file_meta_get(f, "collector.buffers_grown"), "1");
	assert_string_equal(kpt_file_meta_get(f, "collector.api_callbacks"), "3");
	assert_string_equal(kpt_file_meta_get(f, "collector.detached"), "1");
	assert_string_equal(kpt_file_meta_get(f, "collector.nvml"), kpt_g.nvml_ok ? "1" : "0");
	assert_non_null(kpt_file_meta_get(f, "collector.window"));
	kpt_file_close(f);
	unlink(path);
	unlink(status);
	rmdir(dir);
}

/* ---- a sampled run (`record --on-demand`), in a process of its own ----- */

static char cdir[] = "/tmp/kpt-test-inject-ctl-XXXXXX";

/* One step of the program while detached: no work callback reaches the
 * core (none is enabled), only NVTX. */
static void step_detached(uint64_t t)
{
	fk.now = t;
	kpt_core_range_push(strdup("step"), 0);
	fk.now = t + 500;
	kpt_core_range_pop(0);
}

static void test_sampled_starts_then_detaches(void **state)
{
	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_non_null(mkdtemp(cdir));
	snprintf(out, sizeof out, "%s/run-%%p.kpt", dir);
	snprintf(status, sizeof status, "%s/status", dir);
	setenv(KPT_ENV_OUTPUT, out, 1);
	setenv(KPT_ENV_STATUS, status, 1);
	setenv(KPT_ENV_SAMPLE_MS, "0", 1);
	setenv(KPT_ENV_BUFFERS, "2", 1);
	setenv(KPT_ENV_BUFFER_MB, "1", 1);
	setenv(KPT_ENV_WINDOW_CAPTURE, "nvtx:step", 1);
	setenv(KPT_ENV_WINDOW_ON_DEMAND, "1", 1);
	setenv(KPT_ENV_CONTROL_DIR, cdir, 1);
	fk.now = 1000;
	kpt_core_init(&fake_backend);
	assert_true(kpt_g.sampled);
	assert_int_equal(fk.nkinds, 0);
	/* listed at the start (no NVTX push yet) and on for the detach */
	assert_int_equal(atomic_load(&kpt_g.api_cbs), 3);
	assert_int_equal(fk.nwork, 1);
	assert_int_equal(fk.work[0], 1);
	assert_int_equal(atomic_load(&kpt_g.detach), KPT_DETACH_PENDING);
	usleep(60 * 1000);                   /* KPT_SAMPLE_GRACE_MIN_NS, 50 ms */
	kpt_core_detach_maybe();             /* the first work-API exit */
	assert_int_equal(fk.detached, 1);
	assert_int_equal(atomic_load(&kpt_g.detach), KPT_DETACH_DONE);
}

static void test_sampled_steps_while_detached_leave_nothing(void **state)
{
	(void)state;
	for (int i = 0; i < 5; i++)
		step_detached(2000 + 1000 * (uint64_t)i);
	assert_int_equal(kpt_g.win.steps_seen, 5);
	assert_int_equal(fk.nkinds, 0);      /* no backend call */
	assert_int_equal(fk.attached, 0);
	assert_int_equal(atomic_load(&kpt_g.ranges_dropped), 5);
	assert_int_equal(atomic_load_explicit(&kpt_tls_log->tail->n, memory_order_relaxed), 0);
}

/* A request, then the pre-roll step and the captured one: attached at the
 * pre-roll's opening, the window's kernel kept, the pre-roll's dropped,
 * acknowledged once the window opened, detached after the grace. */
static void capture_once(uint64_t seq_want, uint32_t corr, uint64_t t)
{
	struct kpt_control_ack acks[4];
	struct kpt_diag d;
	uint64_t seq = 0;
	int n;

	kpt_diag_clear(&d);
	assert_int_equal(kpt_control_request(cdir, 1, &seq, &d), 0);
	assert_int_equal(seq, seq_want);
	kpt_core_control_poll();             /* the sampler's poll */
	assert_int_equal(kpt_g.requests, seq_want);
	step(corr, t);                       /* the pre-roll */
	assert_int_equal(fk.attached, (int)seq_want);
	assert_int_equal(atomic_load(&kpt_g.detach), KPT_DETACH_NO);
	assert_true(fk.on);
	kpt_core_control_poll();
	n = kpt_control_acks(cdir, seq, acks, 4, &d);
	assert_int_equal(n, 0);              /* not before the window opened */
	step(corr + 10, t + 1000);           /* the capture */
	assert_false(fk.on);
	assert_int_equal(atomic_load(&kpt_g.detach), KPT_DETACH_PENDING);
	kpt_core_control_poll();
	n = kpt_control_acks(cdir, seq, acks, 4, &d);
	assert_int_equal(n, 1);
	assert_int_equal(acks[0].pid, (uint32_t)getpid());
	assert_int_equal(acks[0].first_step, kpt_g.win.steps_seen - 1);
	usleep(60 * 1000);
	kpt_core_detach_maybe();
	assert_int_equal(fk.detached, (int)seq_want + 1);
	assert_int_equal(atomic_load(&kpt_g.detach), KPT_DETACH_DONE);
}

static void test_sampled_request_captures_the_next_step(void **state)
{
	(void)state;
	capture_once(1, 30, 10000);
	step_detached(13000);                /* between captures: not kept */
	capture_once(2, 50, 20000);
}

static void test_sampled_file(void **state)
{
	const struct kpt_range *ranges;
	const struct kpt_kernel *k;
	struct kpt_kernel_cursor *cur;
	struct kpt_file *f;
	struct kpt_diag d;
	char path[300];
	size_t n, steps = 0;

	(void)state;
	kpt_core_finish();
	snprintf(path, sizeof path, "%s/run-%u.kpt", dir, (unsigned)getpid());
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_int_equal(kpt_file_load_strings(f, &d), 0);
	/* the two captured steps and their pre-rolls; none of the 6 others */
	assert_int_equal(kpt_file_ranges(f, &ranges, &n, &d), 0);
	for (size_t i = 0; i < n; i++)
		steps += strcmp(kpt_file_string(f, ranges[i].name), "step") == 0;
	assert_int_equal(steps, 4);
	assert_int_equal(kpt_kernel_cursor_create(f, &cur, &d), 0);
	assert_int_equal(kpt_kernel_cursor_next(cur, &k, &n, &d), 1);
	assert_int_equal(n, 2);              /* the windows' kernels, pre-rolls' dropped */
	assert_int_equal(k[0].correlation, 40);
	assert_int_equal(k[1].correlation, 60);
	assert_int_not_equal(k[0].range, KPT_NONE);
	kpt_kernel_cursor_destroy(cur);
	assert_string_equal(kpt_file_meta_get(f, "collector.attaches"), "2");
	assert_string_equal(kpt_file_meta_get(f, "collector.detaches"), "3");
	assert_string_equal(kpt_file_meta_get(f, "collector.samples"), "2");
	assert_string_equal(kpt_file_meta_get(f, "collector.requests"), "2");
	assert_string_equal(kpt_file_meta_get(f, "collector.windows_missed"), "0");
	assert_string_equal(kpt_file_meta_get(f, "collector.ranges_untraced_dropped"), "6");
	assert_non_null(strstr(kpt_file_meta_get(f, "collector.window"), "on demand"));
	assert_int_equal(strncmp(kpt_file_meta_get(f, "collector.sample_windows"), "6:", 2), 0);
	kpt_file_close(f);
	unlink(path);
	unlink(status);
	rmdir(dir);
	kpt_control_remove(cdir);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest sampled[] = {
		cmocka_unit_test(test_sampled_starts_then_detaches),
		cmocka_unit_test(test_sampled_steps_while_detached_leave_nothing),
		cmocka_unit_test(test_sampled_request_captures_the_next_step),
		cmocka_unit_test(test_sampled_file),
	};
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_starts_through_the_ops),
		cmocka_unit_test(test_pool_grows_when_exhausted),
		cmocka_unit_test(test_preroll_then_window_switch_the_backend),
		cmocka_unit_test(test_detaches_after_the_grace),
		cmocka_unit_test(test_finish_writes_the_file),
	};

	if (argc > 1 && strcmp(argv[1], "sampled") == 0)
		return cmocka_run_group_tests(sampled, NULL, NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
