/* kpt_history_side.c - the side a stored baseline stands for
 * (kpt_history_side), for `gate --db`: the store gives back the per-run
 * medians the loader computed, read through analyzer/diff/kpt_diff_side_read.c when
 * `history add` stored them. History calls diff, never the other way. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_diff_private.h"
#include "kpt_history.h"

static const char *adup(struct kpt_diff_side *c, const char *v)
{
	return kpt_arena_strndup(&c->arena, v ? v : "", v ? strlen(v) : 0);
}

static int intern(struct kpt_diff_side *c, const char *v, uint32_t *id)
{
	return kpt_strtab_intern(&c->strs, v ? v : "", v ? strlen(v) : 0, id);
}

/* Run slots: session i owns slots off[i] .. off[i] + runs - 1, runs being
 * the session's recorded runs or, when more, what its points name. The
 * counts come from a store: each is bounded (KPT_HISTORY_MAX_RUNS), and
 * what they would make this side allocate, before it is allocated
 * (KPT_HISTORY_SIDE_MAX_BYTES). */
static int slots(const struct kpt_history_set *set, const char *label, struct kpt_diff_side *c, uint32_t *off,
		 struct kpt_diag *d)
{
	uint32_t *runs = calloc(set->nsessions + 1, sizeof *runs);
	uint64_t total = 0, samples = 0;
	size_t most = 0;
	uint32_t big = 0;           /* most samples of one run median, and where */
	int64_t big_sess = 0, big_key = 0;
	int rc = 0;

	if (!runs)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory building the baseline");
	for (size_t i = 0; i < set->nsessions && rc == 0; i++)
		if ((runs[i] = set->sessions[i].runs) > KPT_HISTORY_MAX_RUNS)
			rc = kpt_diag_set(d, KPT_E_FORMAT, "%s: session %" PRId64 " claims %u runs (at most %d)", label,
					  set->sessions[i].id, runs[i], KPT_HISTORY_MAX_RUNS);
	for (size_t k = 0; k < set->nseries && rc == 0; k++) {
		const struct kpt_history_series *se = &set->series[k];

		for (uint32_t j = 0; j < se->n && rc == 0; j++)
			for (uint32_t r = 0; r < se->nruns[j] && rc == 0; r++) {
				const struct kpt_history_run_info *ri = se->run_info[j] ? &se->run_info[j][r] : NULL;
				uint32_t slot = ri ? ri->slot : r;

				if (slot >= KPT_HISTORY_MAX_RUNS || se->sess[j] >= set->nsessions)
					rc = kpt_diag_set(d, KPT_E_FORMAT, "%s: a point of key %" PRId64 " names run slot %u (at most %d)",
							  label, se->key.id, slot, KPT_HISTORY_MAX_RUNS - 1);
				else if (slot + 1 > runs[se->sess[j]])
					runs[se->sess[j]] = slot + 1;
				samples += ri && ri->samples ? ri->samples : 1;
				if (ri && ri->samples > big && se->sess[j] < set->nsessions) {
					big = ri->samples;
					big_sess = set->sessions[se->sess[j]].id;
					big_key = se->key.id;
				}
			}
	}
	for (size_t i = 0; i < set->nsessions && rc == 0; i++) {
		off[i] = (uint32_t)total;
		total += runs[i];
		most = runs[i] > runs[most] ? i : most;
	}
	if (rc == 0 && ((double)total * (double)(set->nseries + 1) * sizeof(struct kpt_sample_vec) +
			(double)samples * sizeof(float) > (double)KPT_HISTORY_SIDE_MAX_BYTES))
		rc = kpt_diag_set(d, KPT_E_FORMAT, "%s: the baseline would take more than %llu MiB (%zu keys x %" PRIu64
				  " run slots, %" PRIu64 " samples; the most: session %" PRId64 " with %u runs, point"
				  " (session %" PRId64 ", key %" PRId64 ") with %u samples in one run)", label,
				  KPT_HISTORY_SIDE_MAX_BYTES >> 20, set->nseries, total, samples,
				  set->sessions[most].id, runs[most], big_sess, big_key, big);
	if (rc == 0)
		c->nruns = (uint32_t)total;
	free(runs);
	return rc;
}

/* Sessions and the environment summary as kpt_diff_side_combine makes
 * them from the sessions' files: the first (oldest) session's device and
 * clocks, the newest time, summed counts, shares weighted by env samples. */
static int sessions(const struct kpt_history_set *set, const char *label, struct kpt_diff_side *c,
		    const uint32_t *off)
{
	const struct kpt_history_session *f = &set->sessions[0];
	struct kpt_diff_env *e = &c->env, first;
	const char *newest = f->time;
	double envn = 0, capped = 0, throttled = 0;

	c->nsessions = (uint32_t)set->nsessions;
	c->sessions = kpt_arena_calloc(&c->arena, set->nsessions, sizeof *c->sessions);
	c->run_ids = kpt_arena_calloc(&c->arena, c->nruns ? c->nruns : 1, sizeof *c->run_ids);
	c->run_session = kpt_arena_calloc(&c->arena, c->nruns ? c->nruns : 1, sizeof *c->run_session);
	if (!c->sessions || !c->run_ids || !c->run_session)
		return KPT_E_NOMEM;
	for (uint32_t r = 0; r < c->nruns; r++)
		c->run_ids[r] = r;
	for (size_t i = 0; i < set->nsessions; i++) {
		const struct kpt_history_session *s = &set->sessions[i];
		const struct kpt_history_diff_env *x = &s->env;
		struct kpt_diff_session *ss = &c->sessions[i];
		uint32_t end = i + 1 < set->nsessions ? off[i + 1] : c->nruns;

		ss->path = adup(c, s->source);
		ss->uuid = adup(c, s->gpu_uuid);
		ss->host = adup(c, s->host);
		ss->boot = adup(c, x->boot);
		ss->time = adup(c, s->time);
		if (!ss->path || !ss->uuid || !ss->host || !ss->boot || !ss->time)
			return KPT_E_NOMEM;
		ss->runs = end - off[i];
		ss->settle_us = -1; /* not stored */
		ss->copy_gbps = x->copy_gbps;
		ss->bf16_tflops = x->bf16_tflops;
		/* the store keeps no calibration probes (probe[] stays 0): a base
		 * from it calibrates on the device ceilings above */
		ss->probe_where = "";
		for (uint32_t r = off[i]; r < end; r++)
			c->run_session[r] = (uint32_t)i;
		/* a session stored before schema 3 does not say: a suite's
		 * recording, which has kpt:iter ranges, is the usual case */
		c->iterated |= x->have ? x->iterated != 0 : 1;
		e->kernels += (uint64_t)x->kernels;
		e->samples += (uint64_t)x->samples;
		e->skipped += (uint64_t)x->skipped;
		e->outside += (uint64_t)x->outside;
		e->dropped_throttle += (uint64_t)x->dropped_throttle;
		e->dropped_clock += (uint64_t)x->dropped_clock;
		e->env_samples += (uint64_t)x->env_samples;
		e->throttle_bits |= (uint64_t)x->throttle_bits;
		envn += (double)x->env_samples;
		capped += x->capped_frac * (double)x->env_samples;
		if (isfinite(s->throttled_frac))
			throttled += s->throttled_frac * (double)x->env_samples;
		if (strcmp(s->time, newest) > 0)
			newest = s->time;
	}
	first = (struct kpt_diff_env){
		.gpu_name = f->gpu_name, .gpu_slug = f->gpu_slug, .driver = f->driver, .cuda = f->cuda,
		.suite = f->suite, .host = f->host, .commit = f->commit, .sm_mhz_median = f->sm_mhz,
		.sm_mhz_min = f->env.have ? f->env.sm_mhz_min : NAN, .sm_mhz_max = f->env.have ? f->env.sm_mhz_max : NAN,
		.temp_c_median = f->temp_c, .temp_c_max = f->env.have ? f->env.temp_c_max : NAN,
	};
	return kpt_diff_env_combined(c, &first, label, newest, envn, capped, throttled);
}

/* One run slot of a key: the stored median, repeated once per sample it
 * was taken of (pooled medians of loose keys then weigh runs as the
 * samples did), with its cycle median. */
static int fill_run(struct kpt_sample_vec *v, double med, const struct kpt_history_run_info *ri)
{
	uint32_t n = ri && ri->samples ? ri->samples : 1;

	v->ns = malloc(n * sizeof *v->ns);
	if (!v->ns)
		return KPT_E_NOMEM;
	for (uint32_t q = 0; q < n; q++)
		v->ns[q] = (float)med;
	v->n = v->cap = n;
	v->med_ns = med;
	v->med_cyc = ri ? ri->cyc : NAN;
	return 0;
}

static int keys(const struct kpt_history_set *set, struct kpt_diff_side *c, const uint32_t *off)
{
	uint32_t empty;

	c->keys = calloc(set->nseries ? set->nseries : 1, sizeof *c->keys);
	if (!c->keys || intern(c, "", &empty) < 0) /* "" first, as a loaded side has it */
		return KPT_E_NOMEM;
	c->capkeys = (uint32_t)(set->nseries ? set->nseries : 1);
	for (size_t k = 0; k < set->nseries; k++) {
		const struct kpt_history_series *se = &set->series[k];
		const struct kpt_history_key *hk = &se->key;
		struct kpt_side_key *K = &c->keys[c->nkeys];

		if (intern(c, hk->name, &K->name) < 0 ||
		    intern(c, hk->mangled && hk->mangled[0] ? hk->mangled : hk->name, &K->mangled) < 0 ||
		    intern(c, hk->path, &K->path) < 0 || intern(c, hk->workload, &K->workload) < 0)
			return KPT_E_NOMEM;
		memcpy(K->grid, hk->grid, sizeof K->grid);
		memcpy(K->block, hk->block, sizeof K->block);
		K->ordinal = hk->ordinal;
		K->runs = calloc(c->nruns ? c->nruns : 1, sizeof *K->runs);
		if (!K->runs)
			return KPT_E_NOMEM;
		c->nkeys++;
		for (uint32_t j = 0; j < se->n; j++) {
			const struct kpt_history_run_info *ri = se->run_info[j];
			uint32_t first = UINT32_MAX;

			for (uint32_t r = 0; r < se->nruns[j]; r++) {
				uint32_t slot = off[se->sess[j]] + (ri ? ri[r].slot : r);

				if (K->runs[slot].ns) /* a slot named twice: keep the first */
					continue;
				if (fill_run(&K->runs[slot], se->run_ns[j][r], ri ? &ri[r] : NULL) < 0)
					return KPT_E_NOMEM;
				if (first == UINT32_MAX)
					first = slot;
			}
			/* the diff sums a key's drops over its runs: one slot holds them */
			if (first != UINT32_MAX)
				K->runs[first].dropped_throttle = (uint32_t)(se->dropped[j] > UINT32_MAX ?
									      UINT32_MAX : se->dropped[j]);
		}
	}
	return 0;
}

int kpt_history_side(const struct kpt_history_set *set, const char *label,
		     struct kpt_diff_side **out, struct kpt_diag *d)
{
	struct kpt_diff_side *c;
	uint32_t *off;
	int rc;

	*out = NULL;
	if (!set->nsessions)
		return kpt_diag_set(d, KPT_E_INVAL, "no sessions to make a baseline of");
	for (size_t k = 0; k < set->nseries; k++)
		if (!set->series[k].run_ns || !set->series[k].run_info || !set->series[k].dropped)
			return kpt_diag_set(d, KPT_E_INVAL, "the history set was read without its run medians");
	c = calloc(1, sizeof *c);
	off = calloc(set->nsessions, sizeof *off);
	if (!c || !off) {
		free(c);
		free(off);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory building the baseline");
	}
	kpt_arena_init(&c->arena);
	kpt_strtab_init(&c->strs);
	if ((rc = slots(set, label, c, off, d)) < 0) {
		free(off);
		kpt_diff_side_destroy(c);
		return rc;
	}
	if ((rc = sessions(set, label, c, off)) < 0 || (rc = keys(set, c, off)) < 0) {
		free(off);
		kpt_diff_side_destroy(c);
		return kpt_diag_set(d, rc, "out of memory building the baseline");
	}
	free(off);
	*out = c;
	return 0;
}

int kpt_history_gate_side(struct kpt_history *h, const char *suite, const char *gpu_slug,
			  const char *branch, uint32_t n, struct kpt_history_set **set,
			  struct kpt_diff_side **side, struct kpt_diag *d)
{
	const char *where = kpt_history_where(h);
	uint32_t usable = 0;
	char *label;
	size_t len;
	int rc;

	*set = NULL;
	*side = NULL;
	if ((rc = kpt_history_baseline(h, suite, gpu_slug, branch, n, set, d)) < 0)
		return rc;
	for (size_t i = 0; i < (*set)->nsessions; i++)
		usable += (*set)->sessions[i].runs >= 2;
	/* the hints say how the branch's baseline grows (docs/history.md,
	 * "The main-branch loop"): a recording of this GPU model added per
	 * run of the branch, or the model's committed sessions as a seed */
	if (!(*set)->nsessions) {
		rc = kpt_diag_set(d, KPT_E_NOTFOUND, "no sessions of suite '%s' on GPU '%s', branch '%s' in history store '%s'",
				  suite, gpu_slug, branch, where);
		kpt_diag_hint(d, "each run of branch '%s' on this GPU model adds its recording ('kptprof history add "
			      "rec.kpt --db %s --branch %s'); seed the store with a baseline folder's sessions the same "
			      "way, or gate with --baselines DIR until then", branch, where, branch);
	} else if (usable < KPT_HISTORY_MIN_SESSIONS) {
		rc = kpt_diag_set(d, KPT_E_INVAL, "history store '%s' holds %u session%s of suite '%s' on GPU '%s', branch '%s' "
				  "with 2 runs or more in the last %zu: the noise model needs at least %d",
				  where, usable, usable == 1 ? "" : "s", suite, gpu_slug, branch, (*set)->nsessions,
				  KPT_HISTORY_MIN_SESSIONS);
		kpt_diag_hint(d, "the next run of branch '%s' on this GPU model adds one ('kptprof history add rec.kpt "
			      "--db %s --branch %s', 5 runs); or gate with --baselines DIR until then", branch, where, branch);
	}
	if (rc < 0) {
		kpt_history_set_destroy(*set);
		*set = NULL;
		return rc;
	}
	len = strlen(where) + strlen(branch) + 16;
	if (!(label = malloc(len))) {
		kpt_history_set_destroy(*set);
		*set = NULL;
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	snprintf(label, len, "history:%s@%s", where, branch);
	rc = kpt_history_side(*set, label, side, d);
	free(label);
	if (rc < 0) {
		kpt_history_set_destroy(*set);
		*set = NULL;
	}
	return rc;
}
