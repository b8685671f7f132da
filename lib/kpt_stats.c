/* kpt_stats.c - see kpt_stats.h. */
#include "kpt_stats.h"

#include <math.h>

/* One selection routine per element type, generated from one body so the
 * two cannot drift. After select_T(v, n, k), v[k] holds the k-th smallest
 * value, everything before it is <= v[k] and everything after is >= v[k]. */
#define DEFINE_SELECT(T)                                                        \
	static void select_##T(T *v, size_t n, size_t k)                       \
	{                                                                      \
		size_t lo = 0, hi = n - 1;                                     \
		while (hi > lo) {                                              \
			size_t mid = lo + (hi - lo) / 2, i, lt, gt;            \
			T a = v[lo], b = v[mid], c = v[hi], pivot, t;          \
			pivot = a < b ? (b < c ? b : (a < c ? c : a))          \
				      : (a < c ? a : (b < c ? c : b));         \
			/* Three-way partition: [lo,lt) < pivot, [lt,gt] ==,  \
			 * (gt,hi] >, so runs of equal values end quickly. */  \
			lt = lo;                                               \
			gt = hi;                                               \
			i = lo;                                                \
			while (i <= gt) {                                      \
				if (v[i] < pivot) {                            \
					t = v[i], v[i] = v[lt], v[lt] = t;     \
					lt++, i++;                             \
				} else if (pivot < v[i]) {                     \
					t = v[i], v[i] = v[gt], v[gt] = t;     \
					if (gt == 0)                           \
						break;                         \
					gt--;                                  \
				} else {                                       \
					i++;                                   \
				}                                              \
			}                                                      \
			if (k < lt)                                            \
				hi = lt - 1;                                   \
			else if (k > gt)                                       \
				lo = gt + 1;                                   \
			else                                                   \
				return;                                        \
		}                                                              \
	}

DEFINE_SELECT(double)
DEFINE_SELECT(uint64_t)

static double position(size_t n, double q, size_t *k)
{
	double h;

	if (!(q >= 0.0))
		q = 0.0;
	if (q > 1.0)
		q = 1.0;
	h = q * (double)(n - 1);
	*k = (size_t)h;
	if (*k >= n - 1) {
		*k = n - 1;
		return 0.0;
	}
	return h - (double)*k;
}

double kpt_quantile_f64(double *v, size_t n, double q)
{
	size_t k;
	double frac, next;

	if (n == 0)
		return NAN;
	frac = position(n, q, &k);
	select_double(v, n, k);
	if (frac == 0.0)
		return v[k];
	/* The (k+1)-th smallest is the minimum of what lies after v[k]. */
	next = v[k + 1];
	for (size_t i = k + 2; i < n; i++)
		if (v[i] < next)
			next = v[i];
	return v[k] + frac * (next - v[k]);
}

double kpt_median_f64(double *v, size_t n)
{
	return kpt_quantile_f64(v, n, 0.5);
}

double kpt_quantile_u64(uint64_t *v, size_t n, double q)
{
	size_t k;
	double frac;
	uint64_t next;

	if (n == 0)
		return NAN;
	frac = position(n, q, &k);
	select_uint64_t(v, n, k);
	if (frac == 0.0)
		return (double)v[k];
	next = v[k + 1];
	for (size_t i = k + 2; i < n; i++)
		if (v[i] < next)
			next = v[i];
	return (double)v[k] + frac * ((double)next - (double)v[k]);
}

double kpt_median_u64(uint64_t *v, size_t n)
{
	return kpt_quantile_u64(v, n, 0.5);
}

double kpt_mean_f64(const double *v, size_t n)
{
	double s = 0.0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s / (double)n;
}

double kpt_sd_f64(const double *v, size_t n)
{
	double m, ss = 0.0;

	if (n < 2)
		return NAN;
	m = kpt_mean_f64(v, n);
	for (size_t i = 0; i < n; i++)
		ss += (v[i] - m) * (v[i] - m);
	return sqrt(ss / (double)(n - 1));
}

double kpt_geomean_f64(const double *v, size_t n)
{
	double s = 0.0;

	if (n == 0)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] > 0.0))
			return NAN;
		s += log(v[i]);
	}
	return exp(s / (double)n);
}
