/* kpt_diff_steps.h - the steps of kpt_diff_compare (kpt_diff.c), one file
 * each; private to analyzer/diff/. In order: match keys into units and
 * group ordinals (kpt_diff_match.c), one row per unit and each key through
 * the rule (kpt_rule.h), verdicts and row order (kpt_diff_rows.c), totals
 * (kpt_diff_totals.c), environment and notes (kpt_diff_notes.c). Errors
 * are negative enum kpt_err codes; the match steps also fill c->d. */
#ifndef KPT_DIFF_STEPS_H
#define KPT_DIFF_STEPS_H

#include <stdint.h>

#include "kpt_rule.h"

/* Keys of both sides that one row compares (several when loose). */
struct kpt_diff_unit {
	uint32_t *b, nb, capb;
	uint32_t *n, nn, capn;
	int loose;
	uint32_t agg;               /* > 0: an aggregated group of this many units */
};

struct kpt_diff_units {
	struct kpt_diff_unit *u;
	uint32_t n, cap;
};

/* Units of c's two sides, one per row, in U (grown with realloc; release
 * with kpt_diff_units_release, also after an error). */
int kpt_diff_match_keys(struct kpt_rule_ctx *c, struct kpt_diff_units *U);
/* Folds groups of aggregate_min or more ordinal keys into one unit each. */
int kpt_diff_aggregate_units(struct kpt_rule_ctx *c, struct kpt_diff_units *U);
void kpt_diff_units_release(struct kpt_diff_units *U);

/* Row r's identity and both sides' stats for unit u; NEW, GONE or AMBG
 * without data decided here, the rest left SAME for the rule to test. */
int kpt_diff_fill_row(struct kpt_rule_ctx *c, const struct kpt_diff_unit *u, struct kpt_diff_row *r,
		      struct kpt_side_stats *sb, struct kpt_side_stats *sn);
/* Row r's verdict from its change dlog (log space), the interval's
 * half-width, what infinitely many NEW runs would leave of it, and its runs. */
void kpt_diff_verdict(struct kpt_rule_ctx *c, struct kpt_diff_row *r, double dlog, double half,
		      double half_inf, uint32_t mb, uint32_t mn);
/* Report order: SLOW, AMBG, FAST, NEW, GONE, SAME; larger changes first. */
void kpt_diff_sort_rows(struct kpt_diff *df);

int kpt_diff_make_totals(struct kpt_rule_ctx *c, struct kpt_diff *df);

/* dst: side s's environment over its nslots selected runs, in c's arena. */
int kpt_diff_copy_env(struct kpt_rule_ctx *c, struct kpt_diff_env *dst, const struct kpt_diff_side *s,
		      uint32_t nslots);
void kpt_diff_env_notes(struct kpt_rule_ctx *c, struct kpt_diff *df);
void kpt_diff_ceilings(struct kpt_rule_ctx *c, struct kpt_diff *df);
void kpt_diff_ceiling_note(struct kpt_rule_ctx *c, struct kpt_diff *df);

#endif
