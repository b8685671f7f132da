/* kpt_qsketch.h - quantiles of many non-negative values in bounded memory.
 *
 * A log-bucketed histogram (the idea of DDSketch, Masson et al., VLDB
 * 2019): a value v > 0 falls in bucket i = ceil(log(v) / log(gamma)), with
 * gamma = (1 + a) / (1 - a), a = KPT_QSKETCH_REL_ERR; a bucket stands for
 * 2 gamma^i / (gamma + 1), which is within a relative a of every value in
 * it. Zero (and anything below 1e-300) is counted apart and stands for 0.
 *
 * Contract: kpt_qsketch_quantile(s, q) returns a value within a relative
 * KPT_QSKETCH_REL_ERR (plus double rounding) of the exact quantile of the
 * values added (R type 7: linear interpolation between order statistics,
 * the median of an even count is the mean of the two middle values),
 * clamped to [min, max]: a sketch of equal values gives that value exactly.
 *
 * Cost: 16 bytes per non-empty bucket, at most about 222,000 buckets for
 * values in [1, 2^64) (any number of values), plus a 1 KiB buffer of new
 * buckets; add is O(log B) for B buckets (O(1) when the value falls in the
 * bucket of the previous one), a new bucket O(B / 256) amortised. Memory
 * does not depend on how many values are added, only on their spread.
 * Not thread-safe; an embedded object (init / release).
 */
#ifndef KPT_QSKETCH_H
#define KPT_QSKETCH_H

#include <stddef.h>
#include <stdint.h>

#define KPT_QSKETCH_REL_ERR 1e-4

struct kpt_qsketch_bin {
	int32_t idx;
	uint32_t pad;
	uint64_t n;
};

struct kpt_qsketch {
	struct kpt_qsketch_bin *bins; /* ascending idx, each n > 0 */
	size_t nbins, capbins;
	size_t hint;                /* bin of the last add */
	double last;                /* a value known to fall in bins[hint]; NaN: none */
	int32_t *pend;              /* buckets seen once, not yet in bins */
	uint32_t npend;
	uint64_t zeros;             /* values < 1e-300 */
	uint64_t count;
	double min, max;
};

void kpt_qsketch_init(struct kpt_qsketch *s);
/* Frees the buckets; s may be initialised again. */
void kpt_qsketch_release(struct kpt_qsketch *s);
/* Adds v (>= 0; a negative or NaN v counts as 0). 0, or KPT_E_NOMEM with s
 * unchanged. */
int kpt_qsketch_add(struct kpt_qsketch *s, double v);
/* Adds every value of src to dst (src unchanged but for its buffer being
 * folded in). 0 or KPT_E_NOMEM. O(B_dst + B_src). */
int kpt_qsketch_merge(struct kpt_qsketch *dst, struct kpt_qsketch *src);
/* Quantile q in [0, 1] (see the contract above); NaN when empty or out of
 * memory folding the buffer in. O(B). */
double kpt_qsketch_quantile(struct kpt_qsketch *s, double q);
/* Bytes the sketch holds on the heap. */
size_t kpt_qsketch_bytes(const struct kpt_qsketch *s);

#endif
