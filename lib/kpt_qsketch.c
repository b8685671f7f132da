/* kpt_qsketch.c - log-bucketed quantile sketch (see kpt_qsketch.h). */
#include "kpt_qsketch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"

#define PEND_MAX 256
#define TINY 1e-300

static double log_gamma(void)
{
	return log1p(KPT_QSKETCH_REL_ERR) - log1p(-KPT_QSKETCH_REL_ERR);
}

static int32_t bucket_of(double v)
{
	return (int32_t)ceil(log(v) / log_gamma());
}

/* The value a bucket stands for: within KPT_QSKETCH_REL_ERR of all in it. */
static double bucket_value(int32_t i)
{
	double g = (1 + KPT_QSKETCH_REL_ERR) / (1 - KPT_QSKETCH_REL_ERR);

	return 2 * exp((double)i * log_gamma()) / (g + 1);
}

void kpt_qsketch_init(struct kpt_qsketch *s)
{
	memset(s, 0, sizeof *s);
	s->min = INFINITY;
	s->max = -INFINITY;
	s->last = NAN;
}

void kpt_qsketch_release(struct kpt_qsketch *s)
{
	free(s->bins);
	free(s->pend);
	kpt_qsketch_init(s);
}

size_t kpt_qsketch_bytes(const struct kpt_qsketch *s)
{
	return s->capbins * sizeof *s->bins + (s->pend ? PEND_MAX * sizeof *s->pend : 0);
}

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* Merges the sorted bins b[0..nb) into s->bins. O(nbins + nb). */
static int merge_bins(struct kpt_qsketch *s, const struct kpt_qsketch_bin *b, size_t nb)
{
	size_t cap = s->nbins + nb, i = 0, j = 0, k = 0;
	struct kpt_qsketch_bin *out;

	if (!nb)
		return 0;
	out = malloc(cap * sizeof *out);
	if (!out)
		return KPT_E_NOMEM;
	while (i < s->nbins || j < nb) {
		if (j == nb || (i < s->nbins && s->bins[i].idx < b[j].idx)) {
			out[k++] = s->bins[i++];
		} else if (i == s->nbins || b[j].idx < s->bins[i].idx) {
			out[k++] = b[j++];
		} else {
			out[k] = s->bins[i++];
			out[k++].n += b[j++].n;
		}
	}
	free(s->bins);
	s->bins = out;
	s->nbins = k;
	s->capbins = cap;
	s->hint = 0;
	s->last = NAN;
	return 0;
}

/* Folds the buffer of new buckets into the bins. */
static int flush(struct kpt_qsketch *s)
{
	struct kpt_qsketch_bin b[PEND_MAX];
	size_t nb = 0;

	if (!s->npend)
		return 0;
	qsort(s->pend, s->npend, sizeof *s->pend, cmp_i32);
	for (uint32_t i = 0; i < s->npend; i++) {
		if (nb && b[nb - 1].idx == s->pend[i])
			b[nb - 1].n++;
		else
			b[nb++] = (struct kpt_qsketch_bin){ .idx = s->pend[i], .n = 1 };
	}
	if (merge_bins(s, b, nb) < 0)
		return KPT_E_NOMEM;
	s->npend = 0;
	return 0;
}

/* Index of the bin of idx in s->bins, or -1. O(log B). */
static long find_bin(const struct kpt_qsketch *s, int32_t idx)
{
	size_t lo = 0, hi = s->nbins;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->bins[mid].idx == idx)
			return (long)mid;
		if (s->bins[mid].idx < idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

int kpt_qsketch_add(struct kpt_qsketch *s, double v)
{
	int32_t idx;
	long at;

	if (!(v >= TINY)) {
		s->zeros++;
		v = 0;
		goto counted;
	}
	if (v == s->last) { /* runs of equal durations: no log() */
		s->bins[s->hint].n++;
		goto counted;
	}
	idx = bucket_of(v);
	if (s->hint < s->nbins && s->bins[s->hint].idx == idx) {
		s->bins[s->hint].n++;
		s->last = v;
		goto counted;
	}
	if ((at = find_bin(s, idx)) >= 0) {
		s->bins[at].n++;
		s->hint = (size_t)at;
		s->last = v;
		goto counted;
	}
	if (!s->pend && !(s->pend = malloc(PEND_MAX * sizeof *s->pend)))
		return KPT_E_NOMEM;
	if (s->npend == PEND_MAX && flush(s) < 0)
		return KPT_E_NOMEM;
	s->pend[s->npend++] = idx;
counted:
	s->count++;
	s->min = v < s->min ? v : s->min;
	s->max = v > s->max ? v : s->max;
	return 0;
}

int kpt_qsketch_merge(struct kpt_qsketch *dst, struct kpt_qsketch *src)
{
	if (flush(dst) < 0 || flush(src) < 0 || merge_bins(dst, src->bins, src->nbins) < 0)
		return KPT_E_NOMEM;
	dst->zeros += src->zeros;
	dst->count += src->count;
	dst->min = src->min < dst->min ? src->min : dst->min;
	dst->max = src->max > dst->max ? src->max : dst->max;
	return 0;
}

/* The value of order statistic r (0-based) as the sketch knows it. */
static double at_rank(const struct kpt_qsketch *s, uint64_t r)
{
	uint64_t seen = s->zeros;
	double v = s->max;

	if (r < seen)
		return 0;
	for (size_t i = 0; i < s->nbins; i++) {
		seen += s->bins[i].n;
		if (r < seen) {
			v = bucket_value(s->bins[i].idx);
			break;
		}
	}
	return v < s->min ? s->min : v > s->max ? s->max : v;
}

double kpt_qsketch_quantile(struct kpt_qsketch *s, double q)
{
	double h, lo, hi;
	uint64_t r;

	if (!s->count || flush(s) < 0)
		return NAN;
	q = q < 0 ? 0 : q > 1 ? 1 : q;
	h = q * (double)(s->count - 1);
	r = (uint64_t)h;
	lo = at_rank(s, r);
	if (r + 1 >= s->count || h == (double)r)
		return lo;
	hi = at_rank(s, r + 1);
	return lo + (h - (double)r) * (hi - lo);
}
