/* kpt_rule.h - the seam of the decision rule (docs/decision-rule.md): one
 * small ops table per method, one file each, so a new rule is one file that
 * kpt-rule-eval and kpt-pool-eval judge on the same data as the others.
 * Private to analyzer/diff/.
 *
 *   kpt_rule_machine.c  the rule: sessions, machine effects per family, the
 *                       same machine and boot (kptprof diff, gate)
 *   kpt_rule_paired.c   run i of NEW against run i of BASE (kptprof ab)
 *   kpt_rule_pooled.c   Mann-Whitney over pooled samples (compare.py), kept
 *                       only to show its false alarms in the evaluation
 *
 * kpt_diff.c's compare() matches keys (kpt_diff_match.c), reduces each
 * side to run medians (kpt_side_stats, kpt_diff_rows.c) and calls, in
 * order: prepare (the sides are chosen), key (pass 1, per key), test
 * (after every key: models across keys), then Holm and the verdicts unless
 * the rule gives its own, then finish (notes).
 */
#ifndef KPT_RULE_H
#define KPT_RULE_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_diff_private.h"

/* One side's statistics for one key over the selected runs. */
struct kpt_side_stats {
	uint32_t runs;              /* runs with samples */
	double *run_ns;             /* [runs] medians */
	uint32_t *run_ids;
	uint32_t *run_sess;         /* [runs] session index */
	double mean_log, sd_log;    /* sd NAN with < 2 runs */
	double cyc_mean_log;        /* NAN when a run lacks clocks */
	uint64_t samples, dropped;
	double pooled_median;       /* POOLED_U only */
};


struct kpt_rule_notes {
	struct kpt_diff_note v[40];
	size_t n;
};

/* What a comparison holds while it runs; a rule keeps its own in state. */
struct kpt_rule_ctx {
	const struct kpt_diff_side *b, *n;
	struct kpt_diff_opts o;
	struct kpt_arena *a;
	struct kpt_diag *d;
	uint32_t *bslots, nbslots;  /* selected run slots */
	uint32_t *nslots, nnslots;
	double *buf, *cbuf;         /* scratch for medians */
	size_t capbuf;
	double *pool_b, *pool_n;    /* scratch for POOLED_U */
	size_t cap_pb, cap_pn;
	enum kpt_diff_machine machine; /* OTHER or SAME_BOOT (the machine rule's prepare) */
	struct kpt_rule_notes *notes;
	uint32_t nkeys;             /* keys (rows) of the comparison */
	void *state;                /* the rule's, freed by its finish */
};


/* Per key, what a rule's test gives for the common verdicts (log space):
 * the interval's half-width, what infinitely many NEW runs would leave of
 * it, and the p-value (NAN: untested). */
struct kpt_rule_test {
	double half, half_inf, p;
};

struct kpt_rule_ops {
	const char *name;
	/* the sides are chosen (c->bslots may be narrowed); 0 or an error */
	int (*prepare)(struct kpt_rule_ctx *c, struct kpt_diff *df);
	/* pass 1: key i's row (matched, with data) and both sides' stats; may
	 * test it at once (t[i]) or keep what a later test needs */
	int (*key)(struct kpt_rule_ctx *c, uint32_t i, struct kpt_diff_row *r, const struct kpt_side_stats *sb,
		   const struct kpt_side_stats *sn, struct kpt_rule_test *t);
	/* after every key: tests that need all keys; NULL when key() tested */
	int (*test)(struct kpt_rule_ctx *c, struct kpt_diff *df, struct kpt_rule_test *t);
	/* notes beside the verdicts; frees c->state */
	void (*finish)(struct kpt_rule_ctx *c, struct kpt_diff *df);
	int own_verdicts;           /* sets row verdicts itself: no Holm, no thresholds */
};

extern const struct kpt_rule_ops kpt_rule_machine, kpt_rule_paired, kpt_rule_pooled_u;

/* The ops of the method opts ask for. */
const struct kpt_rule_ops *kpt_rule_pick(const struct kpt_diff_opts *o);

/* ---- helpers the rules share (kpt_rule.c) ---- */
#define KPT_RULE_NBUCKETS 4         /* duration buckets: < 10 us, 10-50, 50-200, >= 200 us */
double kpt_rule_pct(double logratio);               /* 100 * (exp(d) - 1) */
uint32_t kpt_rule_bucket(double centre_ns);
double kpt_rule_bucket_prior_pct(uint32_t bucket);  /* between-machine SD prior, percent */
double kpt_rule_floor_log(const struct kpt_rule_ctx *c, double centre);
int kpt_rule_cmp_dbl(const void *a, const void *b);
double kpt_rule_median(double *v, size_t n);        /* reorders v; O(n log n) */
const char *kpt_rule_adup(struct kpt_rule_ctx *c, const char *s);
const char *kpt_rule_afmt(struct kpt_rule_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void kpt_rule_note(struct kpt_rule_ctx *c, const char *what, int severe, const char *text);

#endif
