/* kpt_summary.h - per-kernel and per-NVTX-range aggregation of a recording,
 * and a summary of its NVML environment samples.
 *
 * What `kptprof report` prints, what `kptprof record` shows on one screen
 * after recording, and what the HTML viewer puts in its tables. Printing is
 * left to the caller: this module only computes.
 *
 *	struct kpt_summary *s;
 *	if (kpt_summary_create(f, NULL, &s, &d) < 0) ...   // by kernel, all devices
 *	for (size_t i = 0; i < s->n && i < 5; i++)
 *		printf("%5.1f%% %s\n", s->rows[i].time_pct, s->rows[i].display);
 *	kpt_summary_destroy(s);
 *
 * Grouping (struct kpt_summary_opts.by):
 * - KPT_SUMMARY_BY_KERNEL: one row per kernel name (all launch
 *   configurations, streams and processes together), like Nsight Systems'
 *   cuda_gpu_kern_sum.
 * - KPT_SUMMARY_BY_RANGE: one row per NVTX range path: the names of the
 *   ranges enclosing the kernel's launch, outermost first, joined by '/',
 *   without the per-iteration range "kpt:iter" (KPT_SUMMARY_ITER_RANGE), so
 *   all iterations of a workload fall into one row; the same path as
 *   analyzer/diff/kpt_diff.h uses. A kernel counts once, for its innermost range
 *   (exclusive time: "a" does not include the kernels of "a/b"); kernels
 *   launched outside any range form the row with path "".
 * - KPT_SUMMARY_BY_RANK: one row per rank (process.rank: RANK,
 *   OMPI_COMM_WORLD_RANK or SLURM_PROCID of the process) and GPU, "rank R
 *   GPU D", "no rank GPU D" for processes without one; comm_ns and
 *   comm_kernels count the NCCL kernels (names starting "nccl") of the row.
 *   With opts.any_thread, a kernel with no range on its launching thread
 *   counts for the innermost range open on any thread of its process at its
 *   GPU start, in a row of that path marked " (other thread)".
 * The statistics of a row are over the durations (end - start) of its kernel
 * executions: a range row's Instances is its number of kernels.
 *
 * Exact or approximate: a row keeps the durations of its kernels (exact
 * median, standard deviation, and the sorted durations handed to the
 * caller) while it has fewer than KPT_SUMMARY_EXACT_PER_KEY of them and
 * the summary keeps fewer than KPT_SUMMARY_EXACT_TOTAL in all; past the
 * first cap, or past the second once it has KPT_SUMMARY_SKETCH_MIN, the
 * row's durations go into a quantile sketch (kpt_qsketch.h): its median
 * is then within a relative KPT_QSKETCH_REL_ERR (median_rel_err says so),
 * its count, total, minimum, maximum and mean stay exact, its standard
 * deviation is a running one (Welford), and durations is NULL.
 *
 * Cost: one pass over the kernel chunks; O(K log K) time for K kernels.
 * Memory, whatever the number of kernels: at most about 8 bytes x
 * (KPT_SUMMARY_EXACT_TOTAL + rows x KPT_SUMMARY_SKETCH_MIN), twice that
 * while arrays grow and again while copied into the summary, plus 16 bytes
 * per non-empty bucket of each sketch (at most ~222,000 buckets a row; one
 * per distinct duration for a row of few distinct durations), plus the
 * range table. A summary owns its rows, names and durations in one arena,
 * freed by kpt_summary_destroy.
 */
#ifndef KPT_SUMMARY_H
#define KPT_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"
#include "kpt_format.h"

#define KPT_SUMMARY_ITER_RANGE "kpt:iter"

/* Exact statistics up to these many durations a row and in all (see above):
 * 8 MiB a row, 64 MiB a summary. */
#define KPT_SUMMARY_EXACT_PER_KEY (1u << 20)
#define KPT_SUMMARY_EXACT_TOTAL (1u << 23)
#define KPT_SUMMARY_SKETCH_MIN 64u

enum kpt_summary_by {
	KPT_SUMMARY_BY_KERNEL = 0,
	KPT_SUMMARY_BY_RANGE = 1,
	KPT_SUMMARY_BY_RANK = 2,
};

struct kpt_summary_opts {
	enum kpt_summary_by by;
	uint32_t device;            /* only kernels of this device index; KPT_NONE: all */
	/* By range: a kernel launched outside any range on its own thread
	 * counts for the innermost range open on any thread of its process
	 * when it started on the GPU, marked " (other thread)" (PyTorch's
	 * backward kernels come from autograd's thread, outside the training
	 * loop's "step"). 0: NVTX's per-thread rule only. */
	int any_thread;
};

struct kpt_summary_row {
	const char *name;           /* by kernel: the stored (mangled) name;
	                               by range: the path, "" for no range */
	const char *display;        /* for people: the demangled kernel name (the
	                               stored name when it is not C++), or the
	                               path, "(no range)" for "" */
	uint64_t instances;         /* kernel executions in the row, >= 1 */
	uint64_t total_ns, min_ns, max_ns;
	double median_ns;           /* mean of the two middle values when even */
	double avg_ns;
	double stddev_ns;           /* sample SD (n - 1); 0 for one instance */
	double time_pct;            /* 100 * total_ns / summary total_ns */
	const uint64_t *durations;  /* the instances' durations, ascending;
	                               NULL when median_rel_err > 0 */
	double median_rel_err;      /* 0: exact; else the median's relative
	                               error bound (from a sketch, see above) */
	uint64_t comm_ns;           /* of total_ns, in NCCL kernels (names "nccl...") */
	uint64_t comm_kernels;
	uint32_t rank, device;      /* by rank: the row's rank (KPT_NONE: none) and device index */
};

struct kpt_summary {
	enum kpt_summary_by by;
	struct kpt_summary_row *rows; /* by total_ns descending, then name */
	size_t n;
	uint64_t kernels;           /* kernel executions counted */
	uint64_t total_ns;          /* sum of their durations */
	uint64_t first_ns, last_ns; /* earliest start, latest end; 0, 0 when none */
	size_t approx;              /* rows with median_rel_err > 0 */
};

/* Aggregates the kernels of f. opts NULL: by kernel, all devices. On success
 * *out is a new summary owning every row, string and array it points to
 * (independent of f, which may be closed). Errors: reading f (KPT_E_FORMAT,
 * KPT_E_IO), KPT_E_NOMEM, KPT_E_INVAL for a bad opts.by. */
int kpt_summary_create(struct kpt_file *f, const struct kpt_summary_opts *opts,
		       struct kpt_summary **out, struct kpt_diag *d);
void kpt_summary_destroy(struct kpt_summary *s); /* accepts NULL */

/* NVTX range paths of a file, as the summary groups them: the names of the
 * enclosing ranges, outermost first, joined by '/', without "kpt:iter".
 * A path longer than 4 KiB keeps its innermost names and starts with
 * "\u2026/" for the outer ones left out (labels, not keys: memory stays
 * O(ranges) however deep the nesting).
 * For exports and viewers that label each kernel with its path.
 *
 *	struct kpt_range_paths *rp;
 *	kpt_range_paths_create(f, &rp, &d);
 *	path = kpt_range_paths_get(rp, kernel.range);   // "" outside any range
 *
 * create loads the ranges (memory: the range table plus 8 bytes per range);
 * get is O(log R) after the first call for a range; the strings it returns
 * are owned by rp (valid until destroy) and shared by equal paths. get
 * returns "" for KPT_NONE or an id that is not in the file, NULL only when
 * out of memory. */
struct kpt_range_paths;
int kpt_range_paths_create(struct kpt_file *f, struct kpt_range_paths **out,
			   struct kpt_diag *d);
const char *kpt_range_paths_get(struct kpt_range_paths *p, uint32_t range_id);
void kpt_range_paths_destroy(struct kpt_range_paths *p); /* accepts NULL */

/* NVML clock-event ("throttle") reason bits, as nvml.h numbers them. */
enum kpt_throttle_bit {
	KPT_THROTTLE_GPU_IDLE = 0x1,
	KPT_THROTTLE_APP_CLOCKS = 0x2,
	KPT_THROTTLE_SW_POWER_CAP = 0x4,
	KPT_THROTTLE_HW_SLOWDOWN = 0x8,
	KPT_THROTTLE_SYNC_BOOST = 0x10,
	KPT_THROTTLE_SW_THERMAL = 0x20,
	KPT_THROTTLE_HW_THERMAL = 0x40,
	KPT_THROTTLE_HW_POWER_BRAKE = 0x80,
	KPT_THROTTLE_DISPLAY_CLOCKS = 0x100,
};
/* The reasons that slow kernels down (power and thermal capping). Idle,
 * application-clock and display-clock settings are not. */
#define KPT_THROTTLE_SLOWDOWN (KPT_THROTTLE_SW_POWER_CAP | KPT_THROTTLE_HW_SLOWDOWN | \
			       KPT_THROTTLE_SW_THERMAL | KPT_THROTTLE_HW_THERMAL | \
			       KPT_THROTTLE_HW_POWER_BRAKE)

/* Writes the names of the bits set in mask ("sw_power_cap,hw_thermal",
 * unknown bits as "0x..."; "none" for 0) into buf like snprintf: returns the
 * length it needed. */
int kpt_throttle_format(uint64_t mask, char *buf, size_t cap);

/* Environment of one device over the recording, from its NVML samples. */
struct kpt_env_summary {
	uint32_t device;            /* device index */
	uint64_t samples;
	uint32_t sm_mhz_min, sm_mhz_median, sm_mhz_max;
	uint32_t mem_mhz_median;
	uint32_t temp_c_min, temp_c_max;
	uint32_t power_mw_median, power_mw_max;
	uint64_t throttle_any;      /* OR of every sample's reasons */
	uint64_t slowdown_samples;  /* samples with a KPT_THROTTLE_SLOWDOWN bit */
};

/* One entry per device that has samples, by device index, in *out (malloc'd,
 * free() it; NULL and *n = 0 when the file has no samples). O(S log S). */
int kpt_env_summarize(struct kpt_file *f, struct kpt_env_summary **out, size_t *n,
		      struct kpt_diag *d);

#endif
