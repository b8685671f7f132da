/* kpt_rule_pooled.c - what google benchmark's compare.py does: a
 * Mann-Whitney U test over all samples of all runs pooled, two-sided, no
 * threshold, no correction for many keys (SLOW/FAST when p < alpha). Kept
 * only to show its false alarms in the evaluation (docs/decision-rule.md,
 * "Why runs, not samples"). */
#include <math.h>

#include "kpt_rule.h"
#include "kpt_stats.h"

static int pooled_key(struct kpt_rule_ctx *c, uint32_t i, struct kpt_diff_row *r, const struct kpt_side_stats *sb,
		      const struct kpt_side_stats *sn, struct kpt_rule_test *t)
{
	(void)t;
	(void)i;
	r->change_pct = kpt_rule_pct(log(sn->pooled_median / sb->pooled_median));
	r->p = kpt_mann_whitney_p(c->pool_b, sb->samples, c->pool_n, sn->samples);
	r->p_holm = r->p;
	r->verdict = !(r->p < c->o.alpha) ? KPT_V_SAME : r->change_pct > 0 ? KPT_V_SLOW : KPT_V_FAST;
	return 0;
}

const struct kpt_rule_ops kpt_rule_pooled_u = {
	.name = "pooled-u",
	.key = pooled_key,
	.own_verdicts = 1,
};
