/* kpt_rule_paired.c - the paired rule (kptprof ab, diff --paired): run i
 * of NEW against run i of BASE, recorded interleaved on one machine;
 * Student's t on the per-pair differences of log run medians, df = pairs -
 * 1, no between-machine part (docs/decision-rule.md, "Same-machine A/B"). */
#include <math.h>

#include "kpt_rule.h"
#include "kpt_stats.h"

/* Paired test (kptprof ab): the i-th run of NEW against the i-th of BASE. */
static int paired_test(struct kpt_rule_ctx *c, struct kpt_diff_row *r, const struct kpt_side_stats *sb,
		       const struct kpt_side_stats *sn, double *half_log)
{
	uint32_t n = sb->runs < sn->runs ? sb->runs : sn->runs;
	double m = 0, v = 0, fl, se, q;

	if (n < 2)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		m += log(sn->run_ns[i]) - log(sb->run_ns[i]);
	m /= n;
	for (uint32_t i = 0; i < n; i++) {
		double x = log(sn->run_ns[i]) - log(sb->run_ns[i]) - m;

		v += x * x;
	}
	v /= n - 1;
	fl = kpt_rule_floor_log(c, exp(sb->mean_log));
	/* the floor is per run; a difference of two runs has twice its variance */
	if (v < 2 * fl * fl)
		v = 2 * fl * fl;
	se = sqrt(v / n);
	q = kpt_t_quantile(1 - c->o.alpha / 2, n - 1);
	*half_log = q * se;
	r->change_pct = kpt_rule_pct(m);
	r->within_pct = 100 * sqrt(v / 2);
	r->between_pct = 0;
	r->noise_pct = 100 * se;
	r->t = m / se;
	r->df = n - 1;
	r->p = kpt_t_pvalue(r->t, n - 1);
	r->ci_low_pct = kpt_rule_pct(m - *half_log);
	r->ci_high_pct = kpt_rule_pct(m + *half_log);
	return 1;
}

static int paired_key(struct kpt_rule_ctx *c, uint32_t i, struct kpt_diff_row *r, const struct kpt_side_stats *sb,
		      const struct kpt_side_stats *sn, struct kpt_rule_test *t)
{
	if (paired_test(c, r, sb, sn, &t[i].half))
		t[i].p = r->p;
	return 0;
}

static void paired_finish(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	(void)df;
	kpt_rule_note(c, "sessions", 0, kpt_rule_afmt(c, "paired: run i of new against run i of base (one machine, interleaved); no between-machine part"));
}

const struct kpt_rule_ops kpt_rule_paired = {
	.name = "paired",
	.key = paired_key,
	.finish = paired_finish,
};
