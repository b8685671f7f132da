/* kpt_history_pool.h - change points on a pool of runners: `history
 * detect`'s model (docs/history.md, "Change points on a pool of runners").
 *
 * A main branch whose commits ran on whichever runner was free mixes
 * machines into the series: a few machines are "odd" on some keys (on 2 of
 * 13 H100s some of the MoE layer's small cuBLAS GEMMs ran 3-12% slower),
 * and a run of odd machines at the end of a history looks like a step. The
 * model here reads machines as machines:
 *   - launches of one kernel name in one NVTX path with aggregate_min or
 *     more keys (the per-expert GEMMs) are summed per session into one
 *     series, as the diff's --aggregate does;
 *   - per session, each family of keys (workload family + kernel kind,
 *     "moe/nvjet"; else the workload family; else all keys; a level is
 *     used when it has family_min keys) gets a machine effect, the median
 *     over its keys of (log value - the key's median level), which is taken
 *     out of its keys; the effect series itself is searched too, so a change
 *     that slows a whole family is found once, as the family;
 *   - a machine is a GPU (UUID; the boot id where the UUID is unknown; a
 *     session with neither is a machine of its own): a change point is kept
 *     only when at least min_machines machines after it (up to the next
 *     change point) moved beyond half the step in its direction, and they
 *     are most of the machines there. A store with fewer machines than
 *     min_machines (one runner: one machine) needs all of them: its
 *     session-to-session noise is then the noise, and nothing else can
 *     carry a step.
 * No store access, no printing. */
#ifndef KPT_HISTORY_POOL_H
#define KPT_HISTORY_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_arena.h"
#include "kpt_history.h"

struct kpt_pool_opts {
	struct kpt_cp_opts cp;      /* per series, as kpt_cp_detect */
	uint32_t aggregate_min;     /* [3] keys of one name and path summed; UINT32_MAX: never */
	uint32_t family_min;        /* [6] fewest keys for a family level to have an effect */
	uint32_t min_machines;      /* [3] machines that must carry a step; 0: no machine test */
	uint32_t head;              /* [10] a step in the last `head` sessions is at the head */
	double threshold_pct;       /* [2] a head step at least this much slower is a regression */
	int no_totals;              /* 1: no workload totals */
};

enum kpt_pool_kind {
	KPT_POOL_KEY,               /* one kernel key */
	KPT_POOL_GROUP,             /* launches of one name in one path, summed */
	KPT_POOL_FAMILY,            /* a family's machine effect (values: exp(effect) x 1e6) */
	KPT_POOL_TOTAL,             /* a workload's keys, summed */
};

struct kpt_pool_series {
	enum kpt_pool_kind kind;
	const struct kpt_history_series *se; /* KEY, GROUP (its first key): the set's; else NULL */
	const char *name;           /* FAMILY: "moe/nvjet"; TOTAL: the workload; else the key's name */
	const char *family;         /* KEY, GROUP: whose effect was taken out, "" none */
	uint32_t nkeys;             /* keys summed (GROUP, TOTAL) or in the family (its units) */
	uint32_t n;                 /* points */
	uint32_t *sess;             /* [n] index into set.sessions, ascending */
	double *ns;                 /* [n] values with the machine effects taken out */
};

struct kpt_pool_cp {
	uint32_t series;            /* index into result.series */
	struct kpt_cp cp;
	uint32_t machines_after;    /* distinct machines from the step to the next one */
	uint32_t machines_carry;    /* of those, the ones beyond half the step in its direction */
	int head;                   /* the step starts in the last opts.head sessions */
	int regression;             /* head, and at least threshold_pct slower */
};

struct kpt_pool_result {
	struct kpt_arena arena;     /* owns everything below */
	struct kpt_pool_series *series;
	size_t nseries;
	struct kpt_pool_cp *cps;    /* kept change points, by series then position */
	size_t ncps;
	uint32_t machines;          /* distinct machines among the set's sessions */
	uint32_t min_machines;      /* the machine test applied: opts.min_machines, or machines when
				       fewer (1: one runner); 0: none */
	uint32_t unbacked;          /* change points dropped: too few machines carry them */
	uint32_t regressions;
};

/* Fills *o with the defaults above. */
void kpt_pool_opts_default(struct kpt_pool_opts *o);

/* Change points of set (one suite, GPU model and branch, sessions in commit
 * order, as kpt_history_query returns them) under the model above. The
 * result points into set (keep it alive) and is freed with
 * kpt_pool_result_destroy. Memory: one double per unit and session.
 * O(units x sessions x log units + series x sessions log sessions).
 * Errors: KPT_E_NOMEM. */
int kpt_history_pool_detect(const struct kpt_history_set *set, const struct kpt_pool_opts *o,
			    struct kpt_pool_result **out, struct kpt_diag *d);
void kpt_pool_result_destroy(struct kpt_pool_result *r); /* accepts NULL */

/* A history of set's sessions ord[0..m) in that order (each index at most
 * once; others are KPT_E_INVAL): the same keys, each series holding the
 * centres of those sessions; runs are not copied. Another commit order of
 * the same recordings (tests, bench/history). Strings point into set (keep
 * it alive); free with kpt_history_set_destroy. O(points log points). */
int kpt_history_set_pick(const struct kpt_history_set *set, const uint32_t *ord, uint32_t m,
			 struct kpt_history_set **out, struct kpt_diag *d);

/* The family of a kernel (name demangled) in workload: the workload's first
 * dot-separated part and the first '_'-separated word of the function's own
 * name, "moe/nvjet"; written to buf (size >= 2). The rule of the diff's
 * family shifts (docs/decision-rule.md). */
void kpt_pool_family(const char *workload, const char *name, char *buf, size_t size);

#endif
