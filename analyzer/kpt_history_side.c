/* kpt_history_side.c - reading a loaded diff side key by key (kpt_diff.h),
 * for the history store. Kept apart from kpt_diff_side.c: the store only
 * reads what the loader already computed (the per-run medians). */
#include <math.h>

#include "kpt_diff_private.h"

static const char *str_of(const struct kpt_diff_side *s, uint32_t id)
{
	const char *r = kpt_strtab_get(&s->strs, id, NULL);

	return r ? r : "";
}

void kpt_diff_side_key(const struct kpt_diff_side *s, size_t k, struct kpt_diff_key_info *out)
{
	const struct kpt_side_key *key = &s->keys[k];

	out->name = str_of(s, key->name);
	out->mangled = str_of(s, key->mangled);
	out->path = str_of(s, key->path);
	out->workload = str_of(s, key->workload);
	for (int i = 0; i < 3; i++) {
		out->grid[i] = key->grid[i];
		out->block[i] = key->block[i];
	}
	out->ordinal = key->ordinal;
}

double kpt_diff_side_run_median(const struct kpt_diff_side *s, size_t k, uint32_t r)
{
	const struct kpt_sample_vec *v = &s->keys[k].runs[r];

	return v->n ? v->med_ns : NAN;
}

const struct kpt_diff_env *kpt_diff_side_env(const struct kpt_diff_side *s)
{
	return &s->env;
}
