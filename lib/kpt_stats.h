/* kpt_stats.h - summary statistics for timing samples.
 *
 * Quantiles use linear interpolation between order statistics (R's type 7,
 * numpy's default): q = 0 is the minimum, q = 1 the maximum, the median of an
 * even count is the mean of the two middle values. They are computed by
 * selection, not sorting: expected O(n) (quickselect with median-of-three
 * pivots; the worst case, unlikely on real data, is O(n^2)). They REORDER the
 * array in place; copy it first to keep the order. Empty input gives NaN;
 * NaN values in double input give unspecified results.
 */
#ifndef KPT_STATS_H
#define KPT_STATS_H

#include <stddef.h>
#include <stdint.h>

double kpt_quantile_f64(double *v, size_t n, double q);
double kpt_median_f64(double *v, size_t n);
double kpt_quantile_u64(uint64_t *v, size_t n, double q);
double kpt_median_u64(uint64_t *v, size_t n);

/* Arithmetic mean; NaN when n == 0. O(n), v unchanged. */
double kpt_mean_f64(const double *v, size_t n);
/* Sample standard deviation (divisor n - 1), two-pass; NaN when n < 2. */
double kpt_sd_f64(const double *v, size_t n);
/* exp(mean(log v)); NaN when n == 0 or any value is <= 0. */
double kpt_geomean_f64(const double *v, size_t n);

/* Tests of the decision rule (lib/kpt_stats_tests.c). */
/* Two-sided p-value of Student's t with df degrees of freedom (df > 0). */
double kpt_t_pvalue(double t, double df);
/* Quantile q (0 < q < 1) of Student's t with df degrees of freedom. */
double kpt_t_quantile(double q, double df);
/* Quantile q (0 < q < 1) of the chi-square distribution with df degrees of
 * freedom (df > 0); NAN otherwise. Bisection on the incomplete gamma. */
double kpt_chi2_quantile(double q, double df);
/* Holm step-down adjustment of n p-values, in place (NAN entries are
 * skipped and do not count in n). O(n log n). Returns KPT_E_NOMEM or 0. */
int kpt_holm(double *p, size_t n);
/* Two-sided Mann-Whitney U p-value (normal approximation with tie and
 * continuity correction) of samples a[na] and b[nb]; sorts copies.
 * NAN when na or nb is 0. */
double kpt_mann_whitney_p(const double *a, size_t na, const double *b, size_t nb);

#endif
