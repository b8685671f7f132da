/* kpt_eval_common.h - what the decision-rule evaluations (kpt-pool-eval,
 * kpt-ab-eval) share: a gate's flag count, a key found again in another
 * comparison, and the synthetic plant (one key's samples scaled). */
#ifndef KPT_EVAL_COMMON_H
#define KPT_EVAL_COMMON_H

#include <string.h>

#include "kpt_diff.h"

/* SLOW or FAST keys and family shifts: what makes an A/A gate a false alarm. */
static inline int flags(const struct kpt_diff *df)
{
	int n = df->counts[KPT_V_SLOW] + df->counts[KPT_V_FAST];

	for (size_t i = 0; i < df->nshifts; i++)
		n += df->shifts[i].verdict == KPT_V_SLOW || df->shifts[i].verdict == KPT_V_FAST;
	return n;
}

static inline const struct kpt_diff_row *find_row(const struct kpt_diff *df, const struct kpt_diff_row *t)
{
	for (size_t i = 0; i < df->nrows; i++) {
		const struct kpt_diff_row *r = &df->rows[i];

		if (strcmp(r->name, t->name) == 0 && strcmp(r->path, t->path) == 0 &&
		    r->aggregated == t->aggregated && r->ordinal == t->ordinal && r->loose == t->loose &&
		    memcmp(r->grid, t->grid, sizeof r->grid) == 0 && memcmp(r->block, t->block, sizeof r->block) == 0)
			return r;
	}
	return NULL;
}

/* Scales the keys of row t in side s (all ordinals when aggregated). */
static inline void scale(struct kpt_diff_side *s, const struct kpt_diff_row *t, double f)
{
	if (t->aggregated)
		kpt_diff_side_scale(s, t->name, t->path, NULL, NULL, UINT32_MAX, f);
	else
		kpt_diff_side_scale(s, t->name, t->path, t->grid, t->block, t->ordinal, f);
}

#endif
