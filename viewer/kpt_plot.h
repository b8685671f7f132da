/* kpt_plot.h - the plots of kptprof reports, as gnuplot scripts.
 *
 * Each kpt_plot_* writes DIR/STEM.gp (see kpt_gnuplot.h: self-contained,
 * data inline, renders STEM.png with pngcairo) and does not run gnuplot:
 * kpt_gnuplot_render() does, so reports keep the scripts when gnuplot is
 * missing. Return: 0 written; KPT_E_NOTFOUND when there is nothing to plot
 * (the diag says why, one line, for the report: not an error); KPT_E_IO,
 * KPT_E_NOMEM.
 *
 * Data blocks list the numbers exactly as plotted, one row per item, with
 * a comment line naming the columns; tests read them back.
 */
#ifndef KPT_PLOT_H
#define KPT_PLOT_H

#include <stddef.h>

#include "kpt_diff.h"
#include "kpt_err.h"
#include "kpt_summary.h"

#define KPT_PLOT_MAX_KEYS 80    /* diff change plot: most keys drawn */
#define KPT_PLOT_MAX_RUNKEYS 16 /* diff run-medians plot */
#define KPT_PLOT_TOP 15         /* top kernels plot (plus "other") */

/* Verdict colour (0xRRGGBB) and name, one table for plots and HTML. */
unsigned kpt_verdict_color(int verdict);
const char *kpt_verdict_label(int verdict);

/* Short label of a (demangled) kernel name: return type and parameter list
 * dropped, namespaces and template arguments kept, cut in the middle with
 * "..." to at most max_chars bytes (>= 12). Writes into out (cap bytes). */
void kpt_short_name(const char *name, int max_chars, char *out, size_t cap);

/* diff: change % per key with its interval, coloured by verdict, sorted by
 * change (largest at the top), each row over a band of its own threshold
 * (row.threshold_pct: short, default or long). Keys with a tested change
 * (not NEW or GONE); when more than KPT_PLOT_MAX_KEYS, every SLOW, FAST and
 * AMBG key first, then the SAME keys with the largest |change|. The keys
 * are numbered from the top (kpt_plot_change_keys); a y label is the number
 * and an abbreviated name, the whole label (short name, with the workload,
 * then the range path, then the launch config added while another key of
 * the diff has the same one) is in the data block and, with the whole
 * kernel name and range, in the legend DIR/STEM-keys.tsv. The canvas grows
 * with the keys and the label column with the labels: nothing is cut.
 * Data block $data: rank change_pct ci_low_pct ci_high_pct color verdict
 * threshold_pct label range tick ("-" when no range), by rank. */
int kpt_plot_diff_change(const struct kpt_diff *df, const char *dir, const char *stem,
			 struct kpt_diag *d);
/* The rows of df the change plot draws, key 1 (the top row, the largest
 * change) first, into idx (room for df->nrows); returns how many, and the
 * number of keys with a tested change in *total. */
size_t kpt_plot_change_keys(const struct kpt_diff *df, size_t *idx, size_t *total);

/* diff: run medians of BASE and NEW side by side for the SLOW and AMBG keys
 * (at most KPT_PLOT_MAX_RUNKEYS, in the diff's order), each relative to the
 * key's BASE centre (geometric mean of its run medians), so keys of any
 * duration share one axis, labelled as in kpt_plot_diff_change. Block $keys:
 * key label range; blocks $base and $new: key x run_median_ns
 * relative_pct. KPT_E_NOTFOUND when no key is SLOW or AMBG. */
int kpt_plot_diff_runs(const struct kpt_diff *df, const char *dir, const char *stem,
		       struct kpt_diag *d);

/* Colour of a kernel family (kpt_kernel_family text) as a picture drew it. */
typedef unsigned (*kpt_plot_color_fn)(void *ctx, const char *family);

/* run: the KPT_PLOT_TOP kernels by share of GPU time, then "other" for the
 * rest, each bar in its family's colour: color(ctx, family) when color is
 * given (the timeline's colours), else kpt_family_color.
 * Block $data: rank share_pct total_ns instances color label. */
int kpt_plot_top_kernels(const struct kpt_summary *s, const char *title, kpt_plot_color_fn color,
			 void *ctx, const char *dir, const char *stem, struct kpt_diag *d);

/* One roofline point: a workload or kernel whose FLOPs and bytes per
 * iteration are known and its measured GPU time per iteration. */
struct kpt_roof_point {
	const char *name;
	double flops, bytes;        /* per iteration */
	double ns;                  /* GPU time per iteration */
};

struct kpt_roofline {
	const char *device;         /* for the title */
	double copy_gbps;           /* measured copy ceiling; 0 unknown */
	double bf16_tflops;         /* measured bf16 ceiling; 0 unknown */
	const struct kpt_roof_point *pts;
	size_t n;
};

/* run: roofline, arithmetic intensity (FLOP/byte) against achieved TFLOP/s
 * on log axes under min(intensity x copy bandwidth, bf16 peak). Points with
 * FLOPs or bytes <= 0 are left out; KPT_E_NOTFOUND when none is left.
 * Unknown ceilings are left out of the picture (the title says so).
 * Block $points: intensity tflops flops bytes ns name. */
int kpt_plot_roofline(const struct kpt_roofline *r, const char *dir, const char *stem,
		      struct kpt_diag *d);

/* One bar of a comparison across GPU models. */
struct kpt_compare_bar {
	const char *gpu;            /* "NVIDIA L4" */
	double value;               /* in unit; bars with NAN values are skipped */
};

/* compare: one workload across GPU models, one bar each, in the given
 * order, value printed on the bar. unit: "TFLOP/s", "us", "tokens/s", ...
 * Block $data: index value color gpu. KPT_E_NOTFOUND when no bar. */
int kpt_plot_compare(const char *workload, const char *unit, const struct kpt_compare_bar *bars,
		     size_t n, const char *dir, const char *stem, struct kpt_diag *d);

#endif
