/* kpt_counters.h - hardware counter sets, counter tables, derived metrics,
 * counter deltas for diff. No CUDA. Part of libkpt: the collector writes
 * counters without the analyzer; the cross-GPU compare table built on the
 * diff is analyzer/diff/kpt_counters_compare.h.
 *
 * The collector (collectors/cupti/kpt_counters_cupti.c) gathers values with the
 * CUPTI range profiler (auto range, kernel replay) and stores them as
 * struct kpt_counter rows: one row per (profiled kernel, metric). Everything
 * here reads or prepares those rows; nothing here talks to a GPU.
 */
#ifndef KPT_COUNTERS_H
#define KPT_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"
#include "kpt_format.h"
#include "kpt_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most metrics one request may name (sets expanded, duplicates removed). */
#define KPT_METRICS_MAX 64

/* Name of the set `--counters` without a value collects. */
#define KPT_COUNTER_SET_DEFAULT "default"

struct kpt_counter_set {
	const char *name;           /* "default", "memory", ... */
	const char *about;          /* one line for `kptprof record --help` */
	const char *const *metrics; /* NULL-terminated */
};

/* The named sets, in display order; *n receives their number. Static. */
const struct kpt_counter_set *kpt_counter_sets(size_t *n);
/* The set called name, NULL when none. */
const struct kpt_counter_set *kpt_counter_set_find(const char *name);

/* A parsed request: metric names in request order, without duplicates.
 * Owns its strings; release with kpt_metric_list_release. */
struct kpt_metric_list {
	size_t n;
	char *names[KPT_METRICS_MAX];
};

/* Parses the value of `--counters[=SPEC]`. spec NULL or "" means the
 * default set. SPEC is a comma-separated list whose items are set names
 * or metric names ("dram__bytes_read.sum"); sets expand in place.
 * A metric name is checked for shape only (lower-case letters, digits,
 * '_' and '.', a "__" after the unit, a '.' rollup): whether this chip
 * knows it is decided by CUPTI at record time. Errors: KPT_E_NOTFOUND for
 * an item that is neither a set nor shaped like a metric (the hint lists
 * the sets), KPT_E_INVAL for an empty item or more than KPT_METRICS_MAX
 * metrics, KPT_E_NOMEM. On error out is left empty. */
int kpt_metric_list_parse(const char *spec, struct kpt_metric_list *out, struct kpt_diag *d);
void kpt_metric_list_release(struct kpt_metric_list *l);
/* The list joined with ',' (the collector's KPT_COUNTERS value); malloc'd,
 * caller frees; NULL when out of memory. */
char *kpt_metric_list_join(const struct kpt_metric_list *l);

/* ---- filled values -> rows ------------------------------------------------ */

/* Converts the values the range profiler evaluated into rows. values is
 * nranges x nmetrics, row-major (range r, metric m at r*nmetrics+m);
 * range_names[r] is the string id of range r's kernel name; the ordinal
 * of range r is first_ordinal + r. NaN values (CUPTI could not evaluate)
 * are skipped. out must hold nranges*nmetrics rows. Returns the number of
 * rows written. O(nranges * nmetrics). */
size_t kpt_counter_rows_fill(const uint32_t *range_names, size_t nranges,
			     const uint32_t *metric_ids, size_t nmetrics,
			     const double *values, uint32_t process, uint32_t device,
			     uint32_t first_ordinal, struct kpt_counter *out);

/* ---- pass accounting ------------------------------------------------------ */

/* What a set of rows covers. kernels: distinct (process, ordinal) pairs;
 * metrics: distinct metric ids; missing: kernels*metrics - distinct
 * (process, ordinal, metric) triples present; replays: kernels * passes
 * (kernel replay runs each profiled kernel once per pass). */
struct kpt_counter_census {
	uint64_t rows, kernels, metrics, missing, duplicates;
	uint64_t replays;
	uint32_t passes;
};

/* Fills c from rows; passes as reported by CUPTI for the configuration
 * (meta "counters.passes"), 0 when unknown. Allocates a sorted copy of
 * the keys: O(n log n) time, O(n) memory. */
int kpt_counter_census(const struct kpt_counter *rows, size_t n, uint32_t passes,
		       struct kpt_counter_census *c, struct kpt_diag *d);

/* ---- a file's counters by kernel name -------------------------------------- */

/* Mean value of each (kernel name, metric) over the kernels profiled in
 * one recording. Names are compared as text, so tables of two files with
 * different string tables can be matched. Owns its memory. */
struct kpt_counter_table;

/* Builds the table from f's counter rows (strings must be loadable).
 * An empty table (no counters) is not an error. */
int kpt_counter_table_load(struct kpt_file *f, struct kpt_counter_table **out, struct kpt_diag *d);
/* Same from rows whose string ids name[] resolves (tests, merged data). */
int kpt_counter_table_build(const struct kpt_counter *rows, size_t n,
			    const char *const *strings, uint32_t nstrings,
			    struct kpt_counter_table **out, struct kpt_diag *d);
void kpt_counter_table_destroy(struct kpt_counter_table *t); /* accepts NULL */
size_t kpt_counter_table_size(const struct kpt_counter_table *t); /* entries */
/* Distinct kernel names in the table (sorted by name), and the i-th. */
size_t kpt_counter_table_nkernels(const struct kpt_counter_table *t);
const char *kpt_counter_table_kernel(const struct kpt_counter_table *t, size_t i);
/* Mean of metric over the kernels named kernel (mangled); NAN when absent.
 * O(log n). */
double kpt_counter_table_get(const struct kpt_counter_table *t, const char *kernel,
			     const char *metric);

/* ---- derived metrics ------------------------------------------------------- */

/* Derived from one kernel's counters (NAN where an input is missing or
 * zero): dram bytes (read + write), achieved DRAM GB/s over
 * gpu__time_duration, warp instructions per active cycle per SM,
 * tensor pipe active percent of active SM cycles, L2 bytes (32-byte
 * sectors), and the percent of the device's copy ceiling. */
struct kpt_counter_derived {
	double dram_bytes, dram_gbps, ipc, tensor_active_pct, l2_bytes, copy_ceiling_pct;
};

/* get(metric) returns a metric's value or NAN; sm_count and copy_gbps from
 * the device row (0 unknown). */
void kpt_counter_derive(double (*get)(void *ctx, const char *metric), void *ctx,
			uint32_t sm_count, double copy_gbps, struct kpt_counter_derived *out);

/* 100 * achieved / ceiling; NAN when either is not a positive number. */
double kpt_ceiling_pct(double achieved, double ceiling);

/* ---- diff: counters that moved ---------------------------------------------- */

struct kpt_counter_delta {
	const char *metric;         /* static: points into the metric table or the table */
	const char *label;          /* "dram bytes", or the metric name */
	double base, new_;
	double change_pct;          /* 100*(new/base - 1); +inf when base is 0 */
};

/* Deltas of the metrics kernel has on both sides, largest |change| first
 * (gpu__time_duration is left out: the timing runs measure time). Writes
 * at most cap deltas into out and returns how many. */
size_t kpt_counter_deltas(const struct kpt_counter_table *base, const struct kpt_counter_table *new_,
			  const char *kernel, struct kpt_counter_delta *out, size_t cap);
/* "dram bytes +98%, instructions +0%": the first top deltas, into buf.
 * Returns the length written (0: no counters on both sides). */
int kpt_counter_deltas_text(const struct kpt_counter_delta *dl, size_t n, size_t top,
			    char *buf, size_t cap);
/* Short label of a metric ("dram bytes read"); the metric itself when
 * the label table has none. */
const char *kpt_counter_label(const char *metric);

#ifdef __cplusplus
}
#endif

#endif
