/* kpt_counters_compare.h - one suite across GPU models (kptprof compare):
 * the diff of files[0] against each other file, tabulated per workload with
 * the counters model's ceilings (kpt_counters.h). No CUDA. */
#ifndef KPT_COUNTERS_COMPARE_H
#define KPT_COUNTERS_COMPARE_H

#include <stddef.h>

#include "kpt_counters.h"

#ifdef __cplusplus
extern "C" {
#endif

struct kpt_compare_col {
	const char *path;           /* as given */
	const char *gpu;            /* device name, "" unknown */
	double copy_gbps, bf16_tflops; /* the file's ceilings, 0 unknown */
};

struct kpt_compare_cell {
	double ns;                  /* GPU time per run (sum of key centres), NAN absent */
	double speedup;             /* time of column 0 / this time; NAN */
	double gbps, tflops;        /* workload bytes / FLOPs per time; NAN unknown */
	double copy_pct, bf16_pct;  /* of this column's ceilings; NAN */
};

struct kpt_compare_row {
	const char *workload;       /* outermost NVTX range name, "(all)" for the total */
	struct kpt_compare_cell *cells; /* [ncols] */
};

struct kpt_compare {
	size_t ncols, nrows;
	struct kpt_compare_col *cols;
	struct kpt_compare_row *rows; /* workloads of file 0, by name; "(all)" last */
};

/* Compares files[0] against each other file with the diff machinery
 * (forced across GPU models; keys matched by name and range path) and
 * tabulates per-workload GPU time, speedup against files[0], and achieved
 * GB/s, TFLOP/s and percent of each file's ceilings where meta declares
 * workload.<name>.bytes / .flops. Needs n >= 2. Owns its memory. */
int kpt_compare_paths(const char *const *paths, size_t n, struct kpt_compare **out,
		      struct kpt_diag *d);
void kpt_compare_destroy(struct kpt_compare *c); /* accepts NULL */

#ifdef __cplusplus
}
#endif

#endif
