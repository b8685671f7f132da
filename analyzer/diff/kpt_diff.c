/* kpt_diff.c - comparing two sides (docs/decision-rule.md): the options'
 * defaults, the runs each side uses, and compare(), which runs the steps
 * of kpt_diff_steps.h and the rule of kpt_rule.h in order; the diff owns
 * its arena. Loading from paths: kpt_diff_load.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_counters.h"
#include "kpt_diff_steps.h"
#include "kpt_stats.h"

#define NO_ID UINT32_MAX

/* The diff and the arena that holds everything it points to. */
struct diff_owner {
	struct kpt_diff df;
	struct kpt_arena arena;
};

static void fill_defaults(struct kpt_diff_opts *o)
{
	if (!(o->threshold_pct > 0))
		o->threshold_pct = 2;
	if (!(o->short_threshold_pct > 0))
		o->short_threshold_pct = 5;
	if (!(o->short_ns > 0))
		o->short_ns = 10000;
	if (!(o->long_threshold_pct > 0))
		o->long_threshold_pct = 1;
	if (!(o->long_ns > 0))
		o->long_ns = 200000;
	if (!(o->alpha > 0 && o->alpha < 1))
		o->alpha = 0.05;
	if (!(o->noise_floor_pct > 0))
		o->noise_floor_pct = 0.1;
	if (!(o->noise_floor_ns > 0))
		o->noise_floor_ns = 5;
	if (!(o->min_clock_frac > 0))
		o->min_clock_frac = 0.75;
	if (!o->throttle_ignore)
		o->throttle_ignore = KPT_DIFF_IGNORE_DEFAULT;
	if (!(o->between_floor_ns > 0))
		o->between_floor_ns = 30;
}

/* Run numbers -> slots of side s; all slots when runs is NULL. */
static int select_slots(struct kpt_rule_ctx *c, const struct kpt_diff_side *s, const uint32_t *runs,
			uint32_t nruns, uint32_t **slots, uint32_t *n)
{
	uint32_t cnt = runs ? nruns : s->nruns;

	*slots = kpt_arena_alloc(c->a, (cnt ? cnt : 1) * sizeof **slots);
	if (!*slots)
		return kpt_diag_set(c->d, KPT_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < cnt; i++) {
		uint32_t slot = NO_ID;

		if (!runs) {
			slot = i;
		} else {
			for (uint32_t j = 0; j < s->nruns; j++)
				if (s->run_ids[j] == runs[i])
					slot = j;
			if (slot == NO_ID)
				return kpt_diag_set(c->d, KPT_E_NOTFOUND, "run %u is not in '%s'",
						    runs[i], s->env.path);
		}
		(*slots)[i] = slot;
	}
	*n = cnt;
	return 0;
}

/* Step 1: the runs of each side, the rule's prepare, the units; no rows yet. */
static int compare_units(struct kpt_rule_ctx *c, const struct kpt_rule_ops *ops, struct kpt_diff *df,
			 struct kpt_diff_units *U)
{
	int rc;

	if ((rc = select_slots(c, c->b, c->o.base_runs, c->o.n_base_runs, &c->bslots, &c->nbslots)) < 0 ||
	    (rc = select_slots(c, c->n, c->o.new_runs, c->o.n_new_runs, &c->nslots, &c->nnslots)) < 0)
		return rc;
	c->machine = KPT_MACHINE_OTHER;
	df->machine = KPT_MACHINE_OTHER;
	if (ops->prepare && (rc = ops->prepare(c, df)) < 0)
		return rc;
	if ((rc = kpt_diff_match_keys(c, U)) < 0 || (rc = kpt_diff_aggregate_units(c, U)) < 0)
		return rc;
	return 0;
}

/* Step 2 (pass 1): one row per unit, and each key with data through the
 * rule's key(); t[i].p stays NAN for a key the rule does not test. */
static int compare_keys(struct kpt_rule_ctx *c, const struct kpt_rule_ops *ops, struct kpt_diff *df,
			const struct kpt_diff_units *U, struct kpt_rule_test *t)
{
	struct kpt_side_stats sb, sn;
	int rc;

	c->nkeys = (uint32_t)U->n;
	df->nrows = U->n;
	df->base_sessions = c->b->nsessions ? c->b->nsessions : 1;
	df->paired = c->o.paired;
	df->prior_between = !c->o.paired && df->base_sessions < 2 && c->machine == KPT_MACHINE_OTHER;
	for (uint32_t i = 0; i < U->n; i++) {
		struct kpt_diff_row *r = &df->rows[i];

		if ((rc = kpt_diff_fill_row(c, &U->u[i], r, &sb, &sn)) < 0)
			return rc;
		t[i].p = NAN;
		if (U->u[i].loose)
			df->n_loose++;
		if (r->verdict != KPT_V_SAME) /* NEW, GONE, AMBG without data: untested */
			continue;
		if (!ops->own_verdicts) {
			r->change_pct = kpt_rule_pct(sn.mean_log - sb.mean_log);
			r->base_sd_pct = 100 * sb.sd_log;
			r->new_sd_pct = 100 * sn.sd_log;
		}
		if ((rc = ops->key(c, i, r, &sb, &sn, t)) < 0)
			return rc;
	}
	return 0;
}

/* Step 3, for rules without verdicts of their own: Holm over the tested
 * keys, then each row's verdict; a SLOW family shift is a regression. */
static int compare_verdicts(struct kpt_rule_ctx *c, struct kpt_diff *df, const struct kpt_rule_test *t)
{
	double *pv = calloc(df->nrows + 1, sizeof *pv);
	int rc;

	if (!pv)
		return KPT_E_NOMEM;
	for (size_t i = 0; i < df->nrows; i++) {
		pv[i] = t[i].p;
		df->n_tested += !isnan(t[i].p);
	}
	if ((rc = kpt_holm(pv, df->nrows)) < 0) {
		free(pv);
		return rc;
	}
	for (size_t i = 0; i < df->nrows; i++) {
		struct kpt_diff_row *r = &df->rows[i];

		if (r->verdict == KPT_V_NEW || r->verdict == KPT_V_GONE || !r->base_runs || !r->new_runs)
			continue;
		r->p_holm = pv[i];
		kpt_diff_verdict(c, r, log1p(r->change_pct / 100), t[i].half, t[i].half_inf, r->base_runs,
				 r->new_runs);
	}
	/* the families' shifts are tested alongside the keys */
	for (size_t i = 0; i < df->nshifts; i++)
		if (df->shifts[i].verdict == KPT_V_SLOW)
			df->result = KPT_DIFF_REGRESSION;
	free(pv);
	return 0;
}

/* Step 4: counts, order, result, totals, environments and notes. */
static int compare_report(struct kpt_rule_ctx *c, const struct kpt_rule_ops *ops, struct kpt_diff *df)
{
	int rc;

	for (size_t i = 0; i < df->nrows; i++)
		df->counts[df->rows[i].verdict]++;
	kpt_diff_sort_rows(df);
	if (df->counts[KPT_V_SLOW])
		df->result = KPT_DIFF_REGRESSION;
	kpt_diff_ceilings(c, df);
	if ((rc = kpt_diff_make_totals(c, df)) < 0 ||
	    (rc = kpt_diff_copy_env(c, &df->base, c->b, c->nbslots)) < 0 ||
	    (rc = kpt_diff_copy_env(c, &df->new_, c->n, c->nnslots)) < 0)
		return rc;
	kpt_diff_env_notes(c, df);
	if (ops->finish)
		ops->finish(c, df);
	kpt_diff_ceiling_note(c, df);
	df->notes = kpt_arena_alloc(c->a, (c->notes->n ? c->notes->n : 1) * sizeof *df->notes);
	if (!df->notes)
		return KPT_E_NOMEM;
	memcpy(df->notes, c->notes->v, c->notes->n * sizeof *df->notes);
	df->nnotes = c->notes->n;
	return 0;
}

static int compare(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	const struct kpt_rule_ops *ops = kpt_rule_pick(&c->o);
	struct kpt_diff_units U = { 0 };
	struct kpt_rule_test *t = NULL;
	struct kpt_rule_notes N = { .n = 0 };
	int rc;

	c->notes = &N;
	if ((rc = compare_units(c, ops, df, &U)) < 0) {
		kpt_diff_units_release(&U);
		return rc; /* the step's own message */
	}
	rc = KPT_E_NOMEM;
	df->rows = kpt_arena_calloc(c->a, U.n ? U.n : 1, sizeof *df->rows);
	t = calloc(U.n + 1, sizeof *t);
	if (df->rows && t && (rc = compare_keys(c, ops, df, &U, t)) == 0 &&
	    !(ops->test && (rc = ops->test(c, df, t)) < 0) &&
	    !(!ops->own_verdicts && (rc = compare_verdicts(c, df, t)) < 0))
		rc = compare_report(c, ops, df);
	if (rc < 0 && ops->finish && c->state)
		ops->finish(c, df);
	c->notes = NULL;
	kpt_diff_units_release(&U);
	free(t);
	return rc < 0 ? kpt_diag_set(c->d, rc, "cannot compare '%s' with '%s': %s",
				     c->b->env.path, c->n->env.path, kpt_err_name(rc)) : 0;
}

int kpt_diff_compare(const struct kpt_diff_side *base, const struct kpt_diff_side *new_,
		     const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct diff_owner *own;
	struct kpt_rule_ctx c;
	int rc, forced = 0;

	*out = NULL;
	if (base->env.gpu_slug[0] && new_->env.gpu_slug[0] &&
	    strcmp(base->env.gpu_slug, new_->env.gpu_slug) != 0) {
		if (!opts || !opts->force) {
			kpt_diag_set(d, KPT_E_MISMATCH,
				     "cannot compare '%s' (%s) with '%s' (%s): different GPU models",
				     base->env.path, base->env.gpu_name, new_->env.path, new_->env.gpu_name);
			return kpt_diag_hint(d, "compare recordings of the same GPU model, or pass --force");
		}
		forced = 1;
	}
	own = calloc(1, sizeof *own);
	if (!own)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory comparing recordings");
	kpt_arena_init(&own->arena);
	memset(&c, 0, sizeof c);
	c.b = base;
	c.n = new_;
	if (opts)
		c.o = *opts;
	fill_defaults(&c.o);
	c.a = &own->arena;
	c.d = d;
	own->df.opts = c.o;
	own->df.opts.base_runs = own->df.opts.new_runs = NULL;
	own->df.opts.n_base_runs = own->df.opts.n_new_runs = 0;
	own->df.forced = forced;
	rc = compare(&c, &own->df);
	free(c.buf);
	free(c.cbuf);
	free(c.pool_b);
	free(c.pool_n);
	if (rc < 0) {
		kpt_diff_destroy(&own->df);
		return rc;
	}
	*out = &own->df;
	return 0;
}

void kpt_diff_destroy(struct kpt_diff *df)
{
	struct diff_owner *own;

	if (!df)
		return;
	own = (struct diff_owner *)((char *)df - offsetof(struct diff_owner, df));
	kpt_arena_release(&own->arena);
	free(own);
}

int kpt_diff_attach_counters(struct kpt_diff *df, const struct kpt_counter_table *base,
			     const struct kpt_counter_table *new_)
{
	struct diff_owner *own = (struct diff_owner *)((char *)df - offsetof(struct diff_owner, df));
	struct kpt_counter_delta dl[KPT_METRICS_MAX];
	char buf[512];

	for (size_t i = 0; i < df->nrows; i++) {
		struct kpt_diff_row *r = &df->rows[i];
		size_t k;

		r->counters = NULL;
		if (r->verdict != KPT_V_SLOW || !kpt_counter_table_size(base) || !kpt_counter_table_size(new_))
			continue;
		if (!(k = kpt_counter_deltas(base, new_, r->mangled, dl, KPT_METRICS_MAX)))
			continue;
		kpt_counter_deltas_text(dl, k, 3, buf, sizeof buf);
		if (!(r->counters = kpt_arena_strndup(&own->arena, buf, strlen(buf))))
			return KPT_E_NOMEM;
	}
	return 0;
}
