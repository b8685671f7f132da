/* kpt_progress.c - the progress line (kpt_progress.h). */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "kpt_progress.h"

#define STRIDE_MAX (UINT64_C(1) << 24)

static struct {
	int on;                          /* kpt_progress_setup called */
	char prog[64];
	FILE *out;
	int tty, drawn;
	int64_t after, tty_every, log_every;
	int64_t (*clock_ms)(void);
	int64_t t0, last_read, last_print; /* last_print < 0: none yet */
	const char *label, *unit;
	int fixed_total;
	uint64_t stride;
	atomic_int active;               /* on and inside a phase */
	atomic_uint_fast64_t total, done, next_check;
	atomic_flag busy;                /* one thread polls at a time */
} P = { .busy = ATOMIC_FLAG_INIT };

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void kpt_progress_setup(const struct kpt_progress_opts *o)
{
	kpt_progress_stop();
	snprintf(P.prog, sizeof P.prog, "%s", o->prog ? o->prog : "kptprof");
	P.out = o->out ? o->out : stderr;
	P.tty = o->tty;
	P.after = o->after_ms < 0 ? 2000 : o->after_ms;
	P.tty_every = o->tty_every_ms > 0 ? o->tty_every_ms : 250;
	P.log_every = o->log_every_ms > 0 ? o->log_every_ms : 10000;
	P.clock_ms = o->clock_ms ? o->clock_ms : mono_ms;
	P.t0 = P.last_read = P.clock_ms();
	P.last_print = -1;
	P.on = 1;
}

void kpt_progress_clear(void)
{
	if (P.drawn) {
		fputs("\r\033[K", P.out);
		fflush(P.out);
		P.drawn = 0;
	}
}

void kpt_progress_stop(void)
{
	atomic_store(&P.active, 0);
	if (P.on)
		kpt_progress_clear();
	P.on = 0;
}

void kpt_progress_begin(const char *label, uint64_t total, const char *unit)
{
	if (!P.on)
		return;
	atomic_store(&P.active, 0);
	P.label = label;
	P.unit = unit;
	P.fixed_total = total != 0;
	P.stride = 1;
	atomic_store(&P.total, total);
	atomic_store(&P.done, 0);
	atomic_store(&P.next_check, 0);
	atomic_store(&P.active, 1);
}

void kpt_progress_end(void)
{
	if (!P.on)
		return;
	atomic_store(&P.active, 0);
	if (P.tty)
		kpt_progress_clear();
}

void kpt_progress_expect(uint64_t n)
{
	if (atomic_load_explicit(&P.active, memory_order_relaxed) && !P.fixed_total)
		atomic_fetch_add_explicit(&P.total, n, memory_order_relaxed);
}

/* 900 -> "900", 1234 -> "1.2k", 900000 -> "900k", 2000000 -> "2.0M" (truncated, not rounded) */
static const char *fmt_count(uint64_t n, char *buf, size_t cap)
{
	static const struct { uint64_t div; char suf; } s[] = { { 1000000000, 'G' }, { 1000000, 'M' }, { 1000, 'k' } };

	for (size_t i = 0; i < sizeof s / sizeof s[0]; i++) {
		if (n < s[i].div)
			continue;
		if (n < 10 * s[i].div)
			snprintf(buf, cap, "%llu.%llu%c", (unsigned long long)(n / s[i].div),
				 (unsigned long long)(n / (s[i].div / 10) % 10), s[i].suf);
		else
			snprintf(buf, cap, "%llu%c", (unsigned long long)(n / s[i].div), s[i].suf);
		return buf;
	}
	snprintf(buf, cap, "%llu", (unsigned long long)n);
	return buf;
}

static void draw(uint64_t done, int64_t now)
{
	uint64_t total = atomic_load(&P.total);
	long long secs = (long long)((now - P.t0) / 1000);
	char a[32], b[32];

	if (P.tty)
		fputc('\r', P.out);
	if (total) {
		/* 100% only when done: a pass that read more than expected stays at 99 */
		unsigned pct = done >= total ? 100 : (unsigned)((double)done * 100 / (double)total);

		if (pct == 100 && done < total)
			pct = 99;
		fprintf(P.out, "%s: %s %u%% (%s of %s %s), %lld s", P.prog, P.label, pct,
			fmt_count(done, a, sizeof a), fmt_count(total, b, sizeof b), P.unit, secs);
	} else {
		fprintf(P.out, "%s: %s %s %s, %lld s", P.prog, P.label, fmt_count(done, a, sizeof a), P.unit, secs);
	}
	fputs(P.tty ? "\033[K" : "\n", P.out);
	fflush(P.out);
	P.drawn = P.tty;
	P.last_print = now;
}

/* Reads the clock; adapts the stride so that reads come about every
 * 20..200 ms of work; draws when due. */
static void poll(uint64_t done)
{
	int64_t now = P.clock_ms(), since = now - P.last_read;

	if (since < 20 && P.stride < STRIDE_MAX)
		P.stride *= 2;
	else if (since > 200 && P.stride > 1)
		P.stride /= 2;
	P.last_read = now;
	atomic_store(&P.next_check, done + P.stride);
	if (now - P.t0 < P.after)
		return;
	if (P.last_print >= 0 && now - P.last_print < (P.tty ? P.tty_every : P.log_every))
		return;
	draw(done, now);
}

void kpt_progress_add(uint64_t n)
{
	uint64_t done;

	if (!atomic_load_explicit(&P.active, memory_order_relaxed))
		return;
	done = atomic_fetch_add_explicit(&P.done, n, memory_order_relaxed) + n;
	if (done < atomic_load_explicit(&P.next_check, memory_order_relaxed))
		return;
	if (atomic_flag_test_and_set_explicit(&P.busy, memory_order_acquire))
		return;
	if (atomic_load(&P.active))
		poll(done);
	atomic_flag_clear_explicit(&P.busy, memory_order_release);
}
