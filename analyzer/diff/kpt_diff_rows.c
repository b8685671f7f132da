/* kpt_diff_rows.c - one row per unit: its identity, each side's run
 * medians over the selected runs (kpt_side_stats), the verdict from the
 * common interval and Holm's p, and the order of rows in reports. Steps of
 * kpt_diff_compare (kpt_diff_steps.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_diff_steps.h"
#include "kpt_grow.h"
#include "kpt_stats.h"

#define MORE_RUNS_CAP 1000

static const char *const verdict_names[KPT_V_COUNT] = {
	[KPT_V_SAME] = "SAME",
	[KPT_V_SLOW] = "SLOW",
	[KPT_V_FAST] = "FAST",
	[KPT_V_AMBG] = "AMBG",
	[KPT_V_NEW] = "NEW",
	[KPT_V_GONE] = "GONE",
};

/* Row order in reports: what needs attention first. */
static const int verdict_rank[KPT_V_COUNT] = {
	[KPT_V_SLOW] = 0, [KPT_V_AMBG] = 1, [KPT_V_FAST] = 2,
	[KPT_V_NEW] = 3, [KPT_V_GONE] = 4, [KPT_V_SAME] = 5,
};

const char *kpt_verdict_name(int v)
{
	return v >= 0 && v < KPT_V_COUNT ? verdict_names[v] : "?";
}

static const char *side_str(const struct kpt_diff_side *s, uint32_t id)
{
	const char *r = kpt_strtab_get(&s->strs, id, NULL);

	return r ? r : "";
}

static int grow_buf(struct kpt_rule_ctx *c, size_t n)
{
	if (n <= c->capbuf)
		return 0;
	free(c->buf);
	free(c->cbuf);
	c->capbuf = n * 2;
	c->buf = malloc(c->capbuf * sizeof *c->buf);
	c->cbuf = malloc(c->capbuf * sizeof *c->cbuf);
	return c->buf && c->cbuf ? 0 : KPT_E_NOMEM;
}

/* Per-run medians of the pooled samples of keys[0..nk) over the selected
 * slots; fills st (arrays in the diff's arena). With pool != NULL, also
 * gathers every sample into *pool (for the pooled U test). */
static int side_stats(struct kpt_rule_ctx *c, const struct kpt_diff_side *s, const uint32_t *keys,
		      uint32_t nk, int agg, const uint32_t *slots, uint32_t nslots,
		      struct kpt_side_stats *st, double **pool, size_t *capp)
{
	double sum = 0, csum = 0;
	int have_cyc = 1;
	size_t npool = 0;

	memset(st, 0, sizeof *st);
	st->run_ns = kpt_arena_alloc(c->a, (nslots ? nslots : 1) * sizeof *st->run_ns);
	st->run_ids = kpt_arena_alloc(c->a, (nslots ? nslots : 1) * sizeof *st->run_ids);
	st->run_sess = kpt_arena_alloc(c->a, (nslots ? nslots : 1) * sizeof *st->run_sess);
	if (!st->run_ns || !st->run_ids || !st->run_sess)
		return KPT_E_NOMEM;
	for (uint32_t i = 0; i < nslots; i++) {
		uint32_t slot = slots[i];
		size_t cnt = 0, m = 0, empty = 0;
		uint64_t more = 0;              /* samples past the caps, not in v->ns */
		int cyc;
		double med, cmed;

		for (uint32_t j = 0; j < nk; j++) {
			const struct kpt_sample_vec *v = &s->keys[keys[j]].runs[slot];

			cnt += v->n;
			more += v->more;
			empty += !v->n;
			st->dropped += v->dropped_throttle + v->dropped_clock;
		}
		if (!cnt || (agg && empty))
			continue; /* an aggregate needs every member in the run */
		if (agg && !pool) {
			/* The group's time per iteration: the sum of its keys'
			 * run medians (each taken while loading). */
			med = cmed = 0;
			for (uint32_t j = 0; j < nk; j++) {
				const struct kpt_sample_vec *v = &s->keys[keys[j]].runs[slot];

				med += v->med_ns;
				cmed += v->med_cyc;
			}
		} else if (nk == 1 && !pool) {
			/* One key: its medians were taken while loading. */
			const struct kpt_sample_vec *v = &s->keys[keys[0]].runs[slot];

			med = v->med_ns;
			cmed = v->med_cyc;
		} else {
			if (grow_buf(c, cnt) < 0)
				return KPT_E_NOMEM;
			if (pool && kpt_grow(pool, capp, npool + cnt, sizeof **pool) < 0)
				return KPT_E_NOMEM;
			for (uint32_t j = 0; j < nk; j++) {
				const struct kpt_sample_vec *v = &s->keys[keys[j]].runs[slot];

				for (uint32_t q = 0; q < v->n; q++) {
					uint16_t f = v->mhz ? v->mhz[q] : 0;

					c->buf[m] = v->ns[q];
					c->cbuf[m] = f ? (double)v->ns[q] * f : NAN;
					m++;
				}
			}
			if (pool)
				memcpy(*pool + npool, c->buf, cnt * sizeof **pool);
			npool += cnt;
			cyc = 1;
			for (size_t q = 0; q < cnt && cyc; q++)
				cyc = !isnan(c->cbuf[q]);
			med = kpt_median_f64(c->buf, cnt);
			cmed = cyc ? kpt_median_f64(c->cbuf, cnt) : NAN;
		}
		if (!(med > 0))
			med = 0.5; /* a zero-length kernel: keep logs finite */
		st->run_ns[st->runs] = med;
		st->run_ids[st->runs] = s->run_ids[slot];
		st->run_sess[st->runs] = s->run_session ? s->run_session[slot] : 0;
		st->runs++;
		st->samples += cnt + more;
		sum += log(med);
		if (!isnan(cmed))
			csum += log(cmed > 0 ? cmed : 0.5);
		else
			have_cyc = 0;
	}
	if (!st->runs) {
		st->mean_log = st->sd_log = st->cyc_mean_log = NAN;
		return 0;
	}
	st->mean_log = sum / st->runs;
	st->cyc_mean_log = have_cyc ? csum / st->runs : NAN;
	st->sd_log = NAN;
	if (st->runs >= 2) {
		double ss = 0;

		for (uint32_t i = 0; i < st->runs; i++) {
			double e = log(st->run_ns[i]) - st->mean_log;

			ss += e * e;
		}
		st->sd_log = sqrt(ss / (st->runs - 1));
	}
	if (pool)
		st->pooled_median = npool ? kpt_median_f64(*pool, npool) : NAN;
	return 0;
}

/* half_inf: the interval's half-width if NEW had infinitely many runs
 * (what the between-session part and the base alone leave); 0 when
 * paired. */
void kpt_diff_verdict(struct kpt_rule_ctx *c, struct kpt_diff_row *r, double dlog, double half,
		      double half_inf, uint32_t mb, uint32_t mn)
{
	double thr = log1p(r->threshold_pct / 100);
	double m = (mb + mn) / 2.0, need, target;

	r->more_runs = 0;
	r->machine_limited = 0;
	if (isnan(r->p)) {
		r->verdict = KPT_V_AMBG;
		r->more_runs = mb < 2 || mn < 2 ? 2 : 0;
		return;
	}
	if (dlog > thr && r->p_holm < c->o.alpha) {
		r->verdict = KPT_V_SLOW;
		return;
	}
	if (dlog < -thr && r->p_holm < c->o.alpha) {
		r->verdict = KPT_V_FAST;
		return;
	}
	if (fabs(dlog) + half < thr) {
		r->verdict = KPT_V_SAME;
		return;
	}
	r->verdict = KPT_V_AMBG;
	target = fabs(fabs(dlog) - thr);
	if (target < 1e-9 * thr) {
		r->more_runs = MORE_RUNS_CAP;
		return;
	}
	if (half_inf >= target) {
		/* more runs cannot settle it: the machine part alone spans the
		 * threshold; the same machine can (ab, a session of this runner) */
		r->more_runs = MORE_RUNS_CAP;
		/* a machine part too small to print (the same boot: none) is not
		 * what holds it: the change sits at the threshold */
		r->machine_limited = r->between_pct >= 0.05 && c->machine != KPT_MACHINE_SAME_BOOT;
		return;
	}
	need = m * (half * half - half_inf * half_inf) / (target * target - half_inf * half_inf);
	if (need - m > MORE_RUNS_CAP)
		r->more_runs = MORE_RUNS_CAP;
	else
		r->more_runs = need - m < 1 ? 1 : (uint32_t)ceil(need - m);
}

static const struct kpt_side_key *first_key(const struct kpt_diff_side *s, const uint32_t *k, uint32_t n)
{
	return n ? &s->keys[k[0]] : NULL;
}

/* Fills one row's identity and side statistics; the test comes later. */
int kpt_diff_fill_row(struct kpt_rule_ctx *c, const struct kpt_diff_unit *u, struct kpt_diff_row *r,
		      struct kpt_side_stats *sb, struct kpt_side_stats *sn)
{
	const struct kpt_side_key *kb = first_key(c->b, u->b, u->nb);
	const struct kpt_side_key *kn = first_key(c->n, u->n, u->nn);
	const struct kpt_diff_side *s = kb ? c->b : c->n;
	const struct kpt_side_key *k = kb ? kb : kn;
	int pooled = c->o.method == KPT_DIFF_POOLED_U;
	int rc;

	memset(r, 0, sizeof *r);
	r->name = kpt_rule_adup(c, side_str(s, k->name));
	r->mangled = kpt_rule_adup(c, side_str(s, k->mangled));
	r->path = kpt_rule_adup(c, side_str(s, k->path));
	r->workload = kpt_rule_adup(c, side_str(s, k->workload));
	if (!r->name || !r->mangled || !r->path || !r->workload)
		return KPT_E_NOMEM;
	r->loose = u->loose;
	if (!u->loose) {
		memcpy(r->grid, k->grid, sizeof r->grid);
		memcpy(r->block, k->block, sizeof r->block);
		r->ordinal = k->ordinal;
	}
	r->aggregated = u->agg;
	if (u->agg) {
		memset(r->grid, 0, sizeof r->grid);
		memset(r->block, 0, sizeof r->block);
		r->ordinal = 0;
	}
	if ((rc = side_stats(c, c->b, u->b, u->nb, u->agg > 0, c->bslots, c->nbslots, sb,
			     pooled ? &c->pool_b : NULL, &c->cap_pb)) < 0 ||
	    (rc = side_stats(c, c->n, u->n, u->nn, u->agg > 0, c->nslots, c->nnslots, sn,
			     pooled ? &c->pool_n : NULL, &c->cap_pn)) < 0)
		return rc;
	r->base_runs = sb->runs;
	r->new_runs = sn->runs;
	r->base_run_ns = sb->run_ns;
	r->new_run_ns = sn->run_ns;
	r->base_run_ids = sb->run_ids;
	r->new_run_ids = sn->run_ids;
	r->base_samples = sb->samples;
	r->new_samples = sn->samples;
	r->base_dropped = sb->dropped;
	r->new_dropped = sn->dropped;
	r->base_ns = sb->runs ? exp(sb->mean_log) : NAN;
	r->new_ns = sn->runs ? exp(sn->mean_log) : NAN;
	r->change_pct = r->ci_low_pct = r->ci_high_pct = NAN;
	r->noise_pct = r->base_sd_pct = r->new_sd_pct = NAN;
	r->within_pct = r->between_pct = NAN;
	r->t = r->df = r->p = r->p_holm = NAN;
	r->cycles_change_pct = NAN;
	{
		double centre = sb->runs ? r->base_ns : r->new_ns;

		r->threshold_pct = centre < c->o.short_ns ? c->o.short_threshold_pct
				 : centre >= c->o.long_ns ? c->o.long_threshold_pct
				 : c->o.threshold_pct;
	}
	/* NEW/GONE: no launch at all on one side. A side whose launches were
	 * all dropped (throttling, low clocks) has no data: AMBG, not NEW. */
	if (!sb->runs && !sb->dropped)
		r->verdict = KPT_V_NEW;
	else if (!sn->runs && !sn->dropped)
		r->verdict = KPT_V_GONE;
	else if (!sb->runs || !sn->runs)
		r->verdict = KPT_V_AMBG;
	else if (!isnan(sb->cyc_mean_log) && !isnan(sn->cyc_mean_log))
		r->cycles_change_pct = kpt_rule_pct(sn->cyc_mean_log - sb->cyc_mean_log);
	return 0;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct kpt_diff_row *a = pa, *b = pb;
	int ra = verdict_rank[a->verdict], rb = verdict_rank[b->verdict];
	double ca = isnan(a->change_pct) ? -1e300 : a->change_pct;
	double cb = isnan(b->change_pct) ? -1e300 : b->change_pct;
	int c;

	if (ra != rb)
		return ra - rb;
	if (ca != cb)
		return ca < cb ? 1 : -1;
	if ((c = strcmp(a->name, b->name)))
		return c;
	if ((c = strcmp(a->path, b->path)))
		return c;
	return (a->ordinal > b->ordinal) - (a->ordinal < b->ordinal);
}

void kpt_diff_sort_rows(struct kpt_diff *df)
{
	/* rows is NULL when there are none: qsort wants a valid pointer even for 0 */
	if (df->nrows > 1)
		qsort(df->rows, df->nrows, sizeof *df->rows, cmp_rows);
}

int kpt_diff_row_run_noise_ambg(const struct kpt_diff_row *r)
{
	/* a key whose interval stays wider than its threshold however many
	 * runs are added (more_runs at its cap) is not chased: on two fresh
	 * H200s (2026-11-28) every run-noise AMBG key of 4 A/A gates was such
	 * (1-2 us kernels, 11 keys) and rounds of 2 runs settled none while
	 * adding 40% to the recording time */
	return r->verdict == KPT_V_AMBG && !r->machine_limited && r->base_runs && r->new_runs &&
	       r->more_runs < MORE_RUNS_CAP;
}

static int same_key(const struct kpt_diff_row *a, const struct kpt_diff_row *b)
{
	return a->ordinal == b->ordinal && a->aggregated == b->aggregated && a->loose == b->loose &&
	       !strcmp(a->mangled, b->mangled) && !strcmp(a->path, b->path) &&
	       !memcmp(a->grid, b->grid, sizeof a->grid) && !memcmp(a->block, b->block, sizeof a->block);
}

/* A scan of later per open key: O(open x rows); the open keys are the
 * few AMBG ones. */
uint32_t kpt_diff_adopt_relook(struct kpt_diff *df, const struct kpt_diff *later, uint32_t round)
{
	uint32_t settled = 0;

	for (size_t i = 0; i < df->nrows; i++) {
		struct kpt_diff_row *r = &df->rows[i];

		if (!kpt_diff_row_run_noise_ambg(r))
			continue;
		for (size_t j = 0; j < later->nrows; j++) {
			if (!same_key(r, &later->rows[j]))
				continue;
			*r = later->rows[j];
			r->settled_round = r->verdict != KPT_V_AMBG ? round : 0;
			settled += r->verdict != KPT_V_AMBG;
			break;
		}
	}
	memset(df->counts, 0, sizeof df->counts);
	for (size_t i = 0; i < df->nrows; i++)
		df->counts[df->rows[i].verdict]++;
	kpt_diff_sort_rows(df);
	if (df->counts[KPT_V_SLOW])
		df->result = KPT_DIFF_REGRESSION;
	return settled;
}
