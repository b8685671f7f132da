/* kpt_diff_side_read.c - reading a loaded side (kpt_diff.h): its runs,
 * keys and samples, key by key, for callers outside diff/ (history add,
 * the evaluation tools) that must not see struct kpt_diff_side. Reads only
 * what the loader computed (the per-run medians); O(1) each. */
#include <math.h>
#include <stdint.h>

#include "kpt_diff_private.h"

void kpt_diff_side_runs(const struct kpt_diff_side *s, const uint32_t **runs, uint32_t *n)
{
	*runs = s->run_ids;
	*n = s->nruns;
}

size_t kpt_diff_side_keys(const struct kpt_diff_side *s)
{
	return s->nkeys;
}

uint64_t kpt_diff_side_samples(const struct kpt_diff_side *s)
{
	return s->env.samples;
}

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

void kpt_diff_side_run_stats(const struct kpt_diff_side *s, size_t k, uint32_t r, uint32_t *samples,
			     double *cyc, uint64_t *dropped)
{
	const struct kpt_sample_vec *v = &s->keys[k].runs[r];

	*samples = v->n;
	*cyc = v->n ? v->med_cyc : NAN;
	*dropped = (uint64_t)v->dropped_throttle + v->dropped_clock;
}

const struct kpt_diff_env *kpt_diff_side_env(const struct kpt_diff_side *s)
{
	return &s->env;
}

void kpt_diff_side_session_info(const struct kpt_diff_side *s, int *iterated, const char **boot,
				double *copy_gbps, double *bf16_tflops)
{
	const struct kpt_diff_session *ss = s->nsessions ? &s->sessions[0] : NULL;

	*iterated = s->iterated;
	*boot = ss && ss->boot ? ss->boot : "";
	*copy_gbps = ss ? ss->copy_gbps : 0;
	*bf16_tflops = ss ? ss->bf16_tflops : 0;
}
