/* kpt_view.h - `kptprof view`: a self-contained HTML report directory.
 *
 * DIR gets index.html (no scripts, styles inline, no network resources),
 * timeline.png (kpt_timeline.h), one .gp script per plot and its .png when
 * gnuplot ran (kpt_plot.h), trace.json (Chrome trace for Perfetto, via
 * lib/kpt_export.h) and a marker file .kptprof-view. With a baseline the
 * diff verdicts come first.
 *
 * Atomicity: everything is written into DIR.tmp-XXXXXX beside DIR and renamed
 * to DIR only when complete; on any failure that folder is removed and DIR
 * is untouched. An existing DIR is replaced only when it is empty or was
 * written by kpt_view_write (has the marker); any other DIR is refused
 * (KPT_E_INVAL), so a typo cannot wipe a user's folder; so is a DIR that
 * holds the input FILE or the baseline (KPT_E_INVAL). DIR gets mode
 * 0777 & ~umask, as mkdir would give it.
 */
#ifndef KPT_VIEW_H
#define KPT_VIEW_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_diff.h"
#include "kpt_err.h"
#include "kpt_history.h"

struct kpt_view_opts {
	const char *baseline;       /* BASE recording to diff against; NULL: none */
	struct kpt_diff_opts diff;  /* zero: defaults (threshold, alpha, force...) */
	int timeline_width;         /* 0: 1600 */
	int top;                    /* rows of the kernel and range tables; 0: 50 */
	int no_render;              /* write the .gp scripts but do not run gnuplot */
	int gnuplot_timeout_ms;     /* per plot; 0: 30 s */
	/* trace.json holds the kernels around the middle of the recording, at
	 * most this many (0: 200,000), unless trace_all; and is left out when
	 * it would pass trace_max_bytes (0: 1 GiB). */
	uint64_t trace_max_kernels;
	int trace_all;
	uint64_t trace_max_bytes;
	const char *tool_version;   /* for the footer; NULL: "?" */
	/* A baseline already built (the history store's, kpt_history_gate_side)
	 * instead of the file `baseline`; not owned. */
	const struct kpt_diff_side *base_side;
	/* With a diff: each SLOW and AMBG key's last history_last (0: 30)
	 * sessions from this store, of the recording's suite, GPU model and
	 * history_branch (NULL: main), as a sparkline with its change points
	 * and a table. Not owned; NULL: no history. */
	struct kpt_history *history;
	const char *history_branch;
	const char *history_suite;  /* NULL: the recording's meta suite */
	uint32_t history_last;
};

/* What happened, for the caller's one-line summary. */
struct kpt_view_result {
	int plots;                  /* plot scripts written */
	int rendered;               /* of which gnuplot made a PNG */
	int gnuplot_missing;        /* gnuplot not found: scripts kept */
	int has_timeline;
	int has_trace;
	int diffed;                 /* a baseline was compared */
	enum kpt_diff_result diff_result;
	uint32_t counts[KPT_V_COUNT]; /* per verdict, when diffed */
	size_t notes;               /* notes printed in the report (skipped parts) */
};

/* Writes the report of the recording at path into dir (see above). res may
 * be NULL. Errors: reading either file (KPT_E_IO/FORMAT/VERSION), the diff
 * (KPT_E_MISMATCH for different GPU models without diff.force), dir not
 * replaceable (KPT_E_INVAL), writing (KPT_E_IO). Missing gnuplot, a
 * recording without kernels or FLOP counts are not errors: the report says
 * what is missing. */
int kpt_view_write(const char *path, const struct kpt_view_opts *o, const char *dir,
		   struct kpt_view_result *res, struct kpt_diag *d);

/* The diff plots alone (diff-change, diff-runs: kpt_plot.h) into dir, which
 * is created when absent; rendered with gnuplot unless no_render. For
 * `kptprof diff --plots DIR`. res (may be NULL) gets plots, rendered,
 * gnuplot_missing. A plot with nothing to show is skipped, not an error;
 * errors: KPT_E_IO, KPT_E_NOMEM, a failing gnuplot (its message). */
int kpt_view_diff_plots(const struct kpt_diff *df, const char *dir, int no_render,
			struct kpt_view_result *res, struct kpt_diag *d);

#endif
