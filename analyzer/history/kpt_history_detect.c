/* kpt_history_detect.c - change points in one series (docs/history.md,
 * "Change points"). Works on log values, so steps are relative and a 2%
 * step weighs the same on a 5 us kernel as on a 5 ms one. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_history.h"
#include "kpt_stats.h"

#define MEDIAN_WINDOW 5             /* rolling median, odd */
#define CLIP_SD 3.0                 /* clip points this many SDs from the rolling median */
#define SD_FLOOR 1e-4               /* 0.01%: a series of identical values is not infinitely precise */

struct seg_ctx {
	const double *cum;          /* cum[i] = sum of z[0..i) */
	double sd;
	uint32_t min_seg;
};

static double seg_mean(const struct seg_ctx *c, uint32_t a, uint32_t b)
{
	return (c->cum[b] - c->cum[a]) / (b - a);
}

/* z statistic of a split of [a,b) at k and its p-value, Bonferroni-adjusted
 * over the split positions the scan could have chosen. */
static double split_z(const struct seg_ctx *c, uint32_t a, uint32_t k, uint32_t b, double *diff)
{
	*diff = seg_mean(c, k, b) - seg_mean(c, a, k);
	return fabs(*diff) / (c->sd * sqrt(1.0 / (k - a) + 1.0 / (b - k)));
}

static double split_p(const struct seg_ctx *c, uint32_t a, uint32_t b, double z)
{
	double positions = (double)(b - a) - 2.0 * c->min_seg + 1.0;
	double p = positions * erfc(z / sqrt(2.0));

	return p < 1 ? p : 1;
}

/* Best split of [a,b) into *k; 0 when the segment is too short. O(b - a). */
static int best_split(const struct seg_ctx *c, uint32_t a, uint32_t b, uint32_t *k, double *z)
{
	double diff;

	if (b - a < 2 * c->min_seg)
		return 0;
	*z = -1;
	for (uint32_t i = a + c->min_seg; i + c->min_seg <= b; i++) {
		double zi = split_z(c, a, i, b, &diff);

		if (zi > *z) {
			*z = zi;
			*k = i;
		}
	}
	return 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Robust point-to-point SD of y: the median absolute first difference
 * scaled to an SD (for iid normal noise, |y[i+1]-y[i]| has median
 * 0.6745 * sqrt(2) * SD). A step changes one difference, not the median. */
static double robust_sd(const double *y, uint32_t n, double *tmp)
{
	for (uint32_t i = 0; i + 1 < n; i++)
		tmp[i] = fabs(y[i + 1] - y[i]);
	return kpt_median_f64(tmp, n - 1) / (0.6745 * sqrt(2.0));
}

/* SD of z from its first differences, the largest 1% left out (then scaled
 * back: for normal noise the kept 99% have 0.9248 of the variance). tmp:
 * n doubles. O(n): the cut is found by selection, not sorting. */
static double trimmed_sd(const double *z, uint32_t n, double *tmp)
{
	uint32_t m = n - 1, keep = m - m / 100, below = 0;
	double ss = 0, cut;

	for (uint32_t i = 0; i + 1 < n; i++)
		tmp[i] = fabs(z[i + 1] - z[i]);
	if (keep < m) {
		/* the keep-th smallest; ties at the cut count up to keep */
		cut = kpt_quantile_f64(tmp, m, (double)(keep - 1) / (m - 1));
		for (uint32_t i = 0; i < m; i++)
			if (tmp[i] < cut) {
				ss += tmp[i] * tmp[i];
				below++;
			}
		ss += (double)(keep - below) * cut * cut;
	} else {
		for (uint32_t i = 0; i < m; i++)
			ss += tmp[i] * tmp[i];
	}
	return sqrt(ss / keep / 0.9248 / 2);
}

/* y clipped to within CLIP_SD * sd of its rolling median: one outlying
 * commit (a throttled machine) cannot make a step; a median filter keeps
 * steps sharp. */
static void clip(const double *y, uint32_t n, double sd, double *z)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = i >= MEDIAN_WINDOW / 2 ? i - MEDIAN_WINDOW / 2 : 0;
		uint32_t b = i + MEDIAN_WINDOW / 2 + 1 < n ? i + MEDIAN_WINDOW / 2 + 1 : n;
		double w[MEDIAN_WINDOW], m;

		memcpy(w, y + a, (b - a) * sizeof *w);
		m = kpt_median_f64(w, b - a);
		z[i] = y[i] < m - CLIP_SD * sd ? m - CLIP_SD * sd : y[i] > m + CLIP_SD * sd ? m + CLIP_SD * sd : y[i];
	}
}

/* Binary segmentation of c's series (split while the best split is
 * significant), then pruning (drop the weakest boundary that is too small
 * or no longer significant between its final neighbours, until none is).
 * cut: n + 2 slots, stack: 2 (n + 1). Returns the number of cuts, sorted. */
static uint32_t segment(const struct seg_ctx *cc, uint32_t n, double alpha, double min_step,
			uint32_t *cut, uint32_t *stack)
{
	const struct seg_ctx c = *cc;
	uint32_t ncut = 0, nstack = 0;

	/* binary segmentation: split while the best split is significant */
	stack[nstack++] = 0;
	stack[nstack++] = n;
	while (nstack) {
		uint32_t b = stack[--nstack], a = stack[--nstack], k = 0;
		double zk;

		if (!best_split(&c, a, b, &k, &zk) || split_p(&c, a, b, zk) >= alpha)
			continue;
		cut[ncut++] = k;
		stack[nstack++] = a;
		stack[nstack++] = k;
		stack[nstack++] = k;
		stack[nstack++] = b;
	}
	qsort(cut, ncut, sizeof *cut, cmp_u32);

	/* prune: drop the weakest boundary that is too small or no longer
	 * significant between its final neighbours, until none is */
	for (;;) {
		uint32_t worst = UINT32_MAX;
		double worst_z = INFINITY;

		for (uint32_t j = 0; j < ncut; j++) {
			uint32_t a = j ? cut[j - 1] : 0, b = j + 1 < ncut ? cut[j + 1] : n;
			double diff, zj = split_z(&c, a, cut[j], b, &diff);

			if ((100 * fabs(exp(diff) - 1) < min_step || split_p(&c, a, b, zj) >= alpha) && zj < worst_z) {
				worst_z = zj;
				worst = j;
			}
		}
		if (worst == UINT32_MAX)
			break;
		memmove(cut + worst, cut + worst + 1, (ncut - worst - 1) * sizeof *cut);
		ncut--;
	}
	return ncut;
}

int kpt_cp_detect(const double *x, uint32_t n, const struct kpt_cp_opts *o,
		  struct kpt_cp **out, uint32_t *ncp, struct kpt_diag *d)
{
	double min_step = o && o->min_step_pct > 0 ? o->min_step_pct : 1.0;
	double alpha = o && o->alpha > 0 ? o->alpha : 0.001;
	uint32_t min_seg = o && o->min_seg > 0 ? o->min_seg : 3;
	double *y = NULL, *z = NULL, *cum = NULL;
	uint32_t *cut = NULL, ncut = 0, *stack = NULL;
	double sd_robust;
	struct seg_ctx c;
	int rc = 0;

	*out = NULL;
	*ncp = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!(x[i] > 0) || !isfinite(x[i]))
			return kpt_diag_set(d, KPT_E_INVAL, "series value %u is not a positive number", i);
	if (n < 2 * min_seg)
		return 0;
	y = calloc(2 * (size_t)n, sizeof *y); /* zeroed: keeps -Wmaybe-uninitialized quiet under ASan */
	z = malloc(n * sizeof *z);
	cum = malloc((n + 1) * sizeof *cum);
	cut = malloc((n + 2) * sizeof *cut);
	stack = malloc(2 * (n + 1) * sizeof *stack);
	if (!y || !z || !cum || !cut || !stack) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		y[i] = log(x[i]);
	c.sd = sd_robust = robust_sd(y, n, z);
	c.sd = sd_robust = c.sd > SD_FLOOR ? c.sd : SD_FLOOR;
	c.min_seg = min_seg;
	clip(y, n, c.sd, z);
	{
		/* between-machine offsets make the noise a mixture: a few slow
		 * machines leave the median difference alone but not the spread
		 * of a mean of a few points; the SD of the differences
		 * (the largest 1% trimmed, so steps barely count) sees them */
		double t = trimmed_sd(y, n, cum);

		c.sd = t > c.sd ? t : c.sd;
	}
	cum[0] = 0;
	for (uint32_t i = 0; i < n; i++)
		cum[i + 1] = cum[i] + z[i];
	c.cum = cum;

	ncut = segment(&c, n, alpha, min_step, cut, stack);
	{
		/* again with the noise measured around the segments found: the
		 * differences of the residuals hold no step, which in a short
		 * series would otherwise inflate the noise */
		double *r = y, t;

		for (uint32_t j = 0, a = 0; j <= ncut; j++) {
			uint32_t b = j < ncut ? cut[j] : n;
			double m = seg_mean(&c, a, b);

			for (uint32_t i = a; i < b; i++)
				r[i] = y[i] - m;
			a = b;
		}
		t = trimmed_sd(r, n, y + n);
		if (t < c.sd && ncut) {
			c.sd = t > sd_robust ? t : sd_robust;
			ncut = segment(&c, n, alpha, min_step, cut, stack);
		}
	}
	if (ncut) {
		*out = calloc(ncut, sizeof **out);
		if (!*out) {
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
			goto out;
		}
	}
	for (uint32_t j = 0; j < ncut; j++) {
		uint32_t a = j ? cut[j - 1] : 0, b = j + 1 < ncut ? cut[j + 1] : n;
		double diff, zj = split_z(&c, a, cut[j], b, &diff);
		struct kpt_cp *cp = &(*out)[j];

		cp->at = cut[j];
		cp->step_pct = 100 * (exp(diff) - 1);
		cp->p = split_p(&c, a, b, zj);
		cp->before_ns = exp(seg_mean(&c, a, cut[j]));
		cp->after_ns = exp(seg_mean(&c, cut[j], b));
		cp->noise_pct = 100 * c.sd;
	}
	*ncp = ncut;
out:
	free(y);
	free(z);
	free(cum);
	free(cut);
	free(stack);
	return rc;
}

double kpt_cp_noise(const double *x, uint32_t n)
{
	double *y, sd;

	if (n < 2)
		return NAN;
	y = calloc(2 * (size_t)n, sizeof *y); /* zeroed: keeps -Wmaybe-uninitialized quiet under ASan */
	if (!y)
		return NAN;
	for (uint32_t i = 0; i < n; i++) {
		if (!(x[i] > 0) || !isfinite(x[i])) {
			free(y);
			return NAN;
		}
		y[i] = log(x[i]);
	}
	sd = robust_sd(y, n, y + n);
	{
		double t = trimmed_sd(y, n, y + n); /* as kpt_cp_detect's first pass */

		sd = t > sd ? t : sd;
	}
	free(y);
	return sd > SD_FLOOR ? sd : SD_FLOOR;
}
