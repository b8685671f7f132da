/* kpt_diff_notes.c - what the report says beside the verdicts: each
 * side's environment (copied into the diff's arena) and the notes on it
 * (driver, clocks, throttling, dropped samples, ranks, runs), the measured
 * ceilings. Steps of kpt_diff_compare (kpt_diff_steps.h). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "kpt_diff_steps.h"

int kpt_diff_copy_env(struct kpt_rule_ctx *c, struct kpt_diff_env *dst, const struct kpt_diff_side *s,
		      uint32_t nslots)
{
	*dst = s->env;
	dst->path = kpt_rule_adup(c, s->env.path);
	dst->gpu_name = kpt_rule_adup(c, s->env.gpu_name);
	dst->gpu_slug = kpt_rule_adup(c, s->env.gpu_slug);
	dst->driver = kpt_rule_adup(c, s->env.driver);
	dst->cuda = kpt_rule_adup(c, s->env.cuda);
	dst->suite = kpt_rule_adup(c, s->env.suite);
	dst->host = kpt_rule_adup(c, s->env.host);
	dst->time = kpt_rule_adup(c, s->env.time);
	dst->commit = kpt_rule_adup(c, s->env.commit);
	dst->runs = nslots;
	if (nslots != s->nruns) {
		/* A subset: count kept and dropped samples over its runs only. */
		const uint32_t *slots = s == c->b ? c->bslots : c->nslots;

		dst->samples = dst->dropped_throttle = dst->dropped_clock = 0;
		for (uint32_t k = 0; k < s->nkeys; k++)
			for (uint32_t i = 0; i < nslots; i++) {
				const struct kpt_sample_vec *v = &s->keys[k].runs[slots[i]];

				dst->samples += v->n + v->more;
				dst->dropped_throttle += v->dropped_throttle;
				dst->dropped_clock += v->dropped_clock;
			}
	}
	return dst->path && dst->gpu_name && dst->gpu_slug && dst->driver && dst->cuda &&
	       dst->suite && dst->host && dst->time && dst->commit ? 0 : KPT_E_NOMEM;
}

/* Workloads with kernels GONE from the base and others NEW: the code, the
 * dispatch or a library's kernel choice changed since the base was
 * recorded (e.g. a baseline two days behind the code). Their keys are not
 * compared, only the workload's totals: say so once, naming the first.
 * From the per-workload verdict counts of kpt_diff_make_totals. */
static void swapped_note(struct kpt_rule_ctx *c, const struct kpt_diff *df)
{
	uint32_t n = 0;
	const char *first = NULL;

	for (size_t i = 0; i < df->ntotals; i++) {
		const struct kpt_diff_total *t = &df->totals[i];

		if (t->kind != KPT_TOTAL_WORKLOAD || !t->name[0] || !t->verdicts[KPT_V_GONE] || !t->verdicts[KPT_V_NEW])
			continue;
		if (!first)
			first = t->name;
		n++;
	}
	if (n)
		kpt_rule_note(c, "kernels", 1, kpt_rule_afmt(c, "%u workload(s) ran other kernels than the base's ('%s'%s): their code, dispatch or a library's choice changed since the base was recorded; their NEW and GONE keys are not compared (a baseline holds the code it was recorded with: record it again)",
							n, first, n > 1 ? ", ..." : ""));
}

void kpt_diff_env_notes(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	const struct kpt_diff_env *b = &df->base, *n = &df->new_;
	const struct kpt_diff_env *sides[2] = { b, n };
	const char *names[2] = { "base", "new" };

	if (df->forced)
		kpt_rule_note(c, "gpu", 1, kpt_rule_afmt(c, "GPU models differ: '%s' vs '%s' (compared because of --force)",
					   b->gpu_name, n->gpu_name));
	df->settle_new_us = c->n->nsessions ? c->n->sessions[0].settle_us : -1;
	df->settle_base_us = c->b->nsessions ? c->b->sessions[0].settle_us : -1;
	for (uint32_t i = 0; df->settle_new_us >= 0 && i < c->b->nsessions; i++) {
		int64_t v = c->b->sessions[i].settle_us;

		if (v >= 0 && v != df->settle_new_us) {
			df->settle_base_us = v;
			df->settle_differs = 1;
			break;
		}
	}
	if (df->settle_differs)
		kpt_rule_note(c, "settle", 1,
			      kpt_rule_afmt(c, "idle gap before each timed iteration: base %lld us, new %lld us: compute-bound kernels ran in another power state (record both with the same --settle-us)",
					    (long long)df->settle_base_us, (long long)df->settle_new_us));
	if (strcmp(b->driver, n->driver) != 0)
		kpt_rule_note(c, "driver", 0, kpt_rule_afmt(c, "driver %s -> %s", b->driver[0] ? b->driver : "unknown",
					      n->driver[0] ? n->driver : "unknown"));
	if (strcmp(b->cuda, n->cuda) != 0)
		kpt_rule_note(c, "cuda", 0, kpt_rule_afmt(c, "CUDA runtime %s -> %s", b->cuda[0] ? b->cuda : "unknown",
					    n->cuda[0] ? n->cuda : "unknown"));
	if (!isnan(b->sm_mhz_median) && !isnan(n->sm_mhz_median) &&
	    fabs(n->sm_mhz_median - b->sm_mhz_median) > 0.02 * b->sm_mhz_median)
		kpt_rule_note(c, "sm_clock", 1, kpt_rule_afmt(c, "median SM clock %.0f MHz -> %.0f MHz",
						b->sm_mhz_median, n->sm_mhz_median));
	if (!isnan(b->temp_c_median) && !isnan(n->temp_c_median) &&
	    fabs(n->temp_c_median - b->temp_c_median) >= 5)
		kpt_rule_note(c, "temperature", 0, kpt_rule_afmt(c, "median GPU temperature %.0f C -> %.0f C (max %.0f -> %.0f)",
						   b->temp_c_median, n->temp_c_median, b->temp_c_max, n->temp_c_max));
	for (int i = 0; i < 2; i++) {
		const struct kpt_diff_env *e = sides[i];

		if (e->throttled_frac > 0)
			kpt_rule_note(c, "throttle", 1, kpt_rule_afmt(c, "%s: throttling in %.1f%% of env samples (NVML reasons 0x%llx)",
							names[i], 100 * e->throttled_frac,
							(unsigned long long)e->throttle_bits));
		if (e->dropped_throttle || e->dropped_clock)
			kpt_rule_note(c, "dropped", 1, kpt_rule_afmt(c, "%s: dropped %llu of %llu samples (throttled: %llu, SM clock below %.0f%% of the run's median: %llu)",
						       names[i], (unsigned long long)(e->dropped_throttle + e->dropped_clock),
						       (unsigned long long)(e->samples + e->dropped_throttle + e->dropped_clock),
						       (unsigned long long)e->dropped_throttle, 100 * df->opts.min_clock_frac,
						       (unsigned long long)e->dropped_clock));
		if (e->approx_runs)
			kpt_rule_note(c, "approx", 0, kpt_rule_afmt(c, "%s: %llu run(s) of a key had more samples than are kept exactly (%u a run, %u a side): their medians are from a histogram within %g%%",
						      names[i], (unsigned long long)e->approx_runs, KPT_DIFF_EXACT_PER_RUN,
						      KPT_DIFF_EXACT_TOTAL, 100 * KPT_QSKETCH_REL_ERR));
		if (e->capped_frac > 0)
			kpt_rule_note(c, "power_cap", 0, kpt_rule_afmt(c, "%s: software power cap in %.1f%% of env samples (kept: the SM clock rule covers it)",
							 names[i], 100 * e->capped_frac));
		if (e->skipped || e->outside)
			kpt_rule_note(c, "outside", 0, kpt_rule_afmt(c, "%s: %llu launches under kpt:warmup/kpt:flush and %llu outside kpt:iter (set-up, checks) not compared",
						       names[i], (unsigned long long)e->skipped,
						       (unsigned long long)e->outside));
		if (e->ranks >= 2)
			kpt_rule_note(c, "ranks", e->ranks_differ,
			     e->ranks_differ
				     ? kpt_rule_afmt(c, "%s: %u ranks did different work (%llu to %llu launches per rank): each rank's kernels are keys of their own",
					    names[i], e->ranks, (unsigned long long)e->rank_launches_min,
					    (unsigned long long)e->rank_launches_max)
				     : kpt_rule_afmt(c, "%s: %u ranks, the same launches each: each rank's kernels are keys of their own",
					    names[i], e->ranks));
		if (e->runs < 2)
			kpt_rule_note(c, "runs", 1, kpt_rule_afmt(c, "%s has %u run(s): the rule needs >= 2 runs per side to measure run-to-run noise (record with --runs 5)",
						    names[i], e->runs));
	}
	{
		/* Cycle-space cross-check: a change in time that is not one in
		 * cycles (time x SM clock) points at clocks rather than code. */
		uint32_t disagree = 0;

		for (size_t i = 0; i < df->nrows; i++) {
			const struct kpt_diff_row *r = &df->rows[i];

			if ((r->verdict == KPT_V_SLOW || r->verdict == KPT_V_FAST) &&
			    !isnan(r->cycles_change_pct) &&
			    fabs(r->cycles_change_pct - r->change_pct) > r->threshold_pct / 2)
				disagree++;
		}
		if (disagree)
			kpt_rule_note(c, "cycles", 1, kpt_rule_afmt(c, "%u SLOW/FAST key(s) changed in time but much less in cycles (time x SM clock): clocks, not code, may explain them",
						      disagree));
	}
	if (df->n_loose)
		kpt_rule_note(c, "config", 0, kpt_rule_afmt(c, "%u key(s) matched by kernel name and NVTX path only: their launch configs differ between the files",
					      df->n_loose));
	if (!c->b->iterated || !c->n->iterated)
		kpt_rule_note(c, "iterations", 0, kpt_rule_afmt(c, "%s has no '%s' ranges: each process counts as one iteration and the launches of one kernel are pooled",
						  !c->b->iterated ? names[0] : names[1], KPT_DIFF_ITER_RANGE));
	swapped_note(c, df);
}

/* NEW's measured ceilings against the mean of BASE's sessions. */
void kpt_diff_ceilings(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	double cb = 0, bb = 0, cn = 0, bn = 0;
	uint32_t ncb = 0, nbb = 0;

	df->copy_ceiling_pct = df->bf16_ceiling_pct = NAN;
	for (uint32_t i = 0; i < c->b->nsessions; i++) {
		if (c->b->sessions[i].copy_gbps > 0) {
			cb += c->b->sessions[i].copy_gbps;
			ncb++;
		}
		if (c->b->sessions[i].bf16_tflops > 0) {
			bb += c->b->sessions[i].bf16_tflops;
			nbb++;
		}
	}
	if (c->n->nsessions) {
		cn = c->n->sessions[0].copy_gbps;
		bn = c->n->sessions[0].bf16_tflops;
	}
	if (ncb && cn > 0)
		df->copy_ceiling_pct = 100 * (cn / (cb / ncb) - 1);
	if (nbb && bn > 0)
		df->bf16_ceiling_pct = 100 * (bn / (bb / nbb) - 1);
}

/* The ceilings line, beside the rule's notes. */
void kpt_diff_ceiling_note(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	if (!isnan(df->copy_ceiling_pct) || !isnan(df->bf16_ceiling_pct))
		kpt_rule_note(c, "ceilings", 0, kpt_rule_afmt(c, "measured ceilings of new against the base's sessions: copy %+.1f%%, bf16 %+.1f%%",
						df->copy_ceiling_pct, df->bf16_ceiling_pct));
	/* with --probe-calibration, the probes the same way: each where NEW
	 * and some base session carry it */
	if (c->o.calibration_probes && c->n->nsessions) {
		static const char *const name[KPT_PROBE_N] = { "copy", "bf16", "e4m3", "SM" };
		char buf[160] = "";
		size_t len = 0;

		for (int k = 0; k < KPT_PROBE_N; k++) {
			double sum = 0, nv = c->n->sessions[0].probe[k];
			uint32_t cnt = 0;

			for (uint32_t i = 0; i < c->b->nsessions; i++)
				if (c->b->sessions[i].probe[k] > 0) {
					sum += c->b->sessions[i].probe[k];
					cnt++;
				}
			if (cnt && nv > 0 && len < sizeof buf)
				len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s %+.1f%%", len ? ", " : "", name[k],
							100 * (nv / (sum / cnt) - 1));
		}
		if (buf[0])
			kpt_rule_note(c, "probes", 0,
				      kpt_rule_afmt(c, "probes of new against the base's sessions: %s", buf));
	}
}
