/* kpt_progress.h - progress of long work, one line on stderr.
 *
 * One reporter per process, off until kpt_progress_setup(): only cli/
 * turns it on (library code reports, it never decides to print). Work that
 * ends within after_ms (2 s) of the setup prints nothing. Past it, on a
 * terminal, one line that overwrites itself at most every tty_every_ms
 * (250 ms) and is erased when the phase ends:
 *
 *     kptprof view: trace 45% (900k of 2.0M kernels), 3 s
 *
 * elsewhere (a CI log) a plain line at most every log_every_ms (10 s).
 *
 * A phase is named by the code that knows what the work is
 * (kpt_progress_begin ... kpt_progress_end: view's steps, export, diff's
 * loading, history detect); the loops inside report with kpt_progress_add.
 * The kernel cursor (kpt_format.h) adds every kernel it decodes and, to a
 * phase begun with total 0, its recording's kernel count; so a phase over
 * passes through recordings needs no more code.
 *
 * Cost: kpt_progress_add is an atomic add and a compare; the clock is read
 * only every `stride` items, the stride doubling while reads come more
 * often than every 20 ms. add may be called from several threads (diff
 * loads its two sides at once); begin, end, clear, setup and stop from one.
 */
#ifndef KPT_PROGRESS_H
#define KPT_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

struct kpt_progress_opts {
	const char *prog;        /* line prefix, "kptprof view"; copied */
	FILE *out;               /* stderr */
	int tty;                 /* out is a terminal: one self-overwriting line */
	int64_t after_ms;        /* quiet this long after setup; < 0: 2000 */
	int64_t tty_every_ms;    /* 0: 250 */
	int64_t log_every_ms;    /* 0: 10000 */
	/* monotonic milliseconds; NULL: CLOCK_MONOTONIC (tests pass a fake) */
	int64_t (*clock_ms)(void);
};

/* Turns reporting on; the quiet time and the elapsed time shown count from
 * here. A second call replaces the first. */
void kpt_progress_setup(const struct kpt_progress_opts *o);
/* Erases the line and turns reporting off (atexit-safe; idempotent). */
void kpt_progress_stop(void);

/* A phase: label ("trace"), total work (0: unknown, the kernel cursors fill
 * it) and its unit ("kernels"); both strings must outlive the phase. A
 * begin while a phase runs ends that one. No-ops while reporting is off. */
void kpt_progress_begin(const char *label, uint64_t total, const char *unit);
/* n more items of the current phase done. */
void kpt_progress_add(uint64_t n);
/* n more items expected, counted only in a phase begun with total 0. */
void kpt_progress_expect(uint64_t n);
/* Ends the phase; on a terminal its line is erased. */
void kpt_progress_end(void);
/* Erases the line now (before other output on the terminal); the next
 * report draws it again. */
void kpt_progress_clear(void);

#endif
