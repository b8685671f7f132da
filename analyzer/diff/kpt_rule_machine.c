/* kpt_rule_machine.c - the decision rule of kptprof diff and gate
 * (docs/decision-rule.md): run medians per key, a noise model of the
 * run-to-run part and the machine part, the same machine and boot compared
 * with no machine part, the machines' measured ceilings taken out of the
 * keys whose base sessions follow them, machine effects per family taken
 * out, Student's t with Satterthwaite df; Holm and the verdicts are
 * kpt_diff.c's. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_rule.h"
#include "kpt_stats.h"

#define PRIOR_DF 10.0   /* df of the built-in prior when it stands alone (one session) */
#define PRIOR_SHRINK_DF 2.0 /* its weight as a shrinkage target, when a bucket has too few keys */
#define SHRINK_DF 3.0   /* weight of the duration bucket's median, likewise */
#define UCB_Q 0.05      /* lower chi-square quantile of a key's own upper bound on its between part */
#define SHIFT_PRIOR_PCT 0.5 /* between-session SD of a family's median change, one session */

/* The ceilings calibration may take out, in the order it tries them: of
 * the device (kpt-workloads --calibrate's copy and bf16, measured with the
 * recording) or the probes the recordings carry (meta calibration.*, all
 * four), whichever set cal_setup picks. */
enum { KPT_CAL_COPY = KPT_PROBE_COPY, KPT_CAL_BF16 = KPT_PROBE_BF16, KPT_CAL_FP8 = KPT_PROBE_FP8,
       KPT_CAL_SM = KPT_PROBE_SM, KPT_CAL_N = KPT_PROBE_N };
static const char *const cal_name[KPT_CAL_N] = {
	[KPT_CAL_COPY] = "copy", [KPT_CAL_BF16] = "bf16", [KPT_CAL_FP8] = "fp8", [KPT_CAL_SM] = "sm",
};

/* One unit's pieces of the noise model, from pass 1 (all in log space). */
struct est {
	int tested;
	double d;                   /* mean(new) - mean of base session means */
	double w, wdf;              /* pooled within-session variance and its df */
	double vb, vn;              /* each side's within variance (floored) */
	double b_raw;               /* between-session variance, moment estimate; NAN with S < 2 */
	double minv;                /* mean over base sessions of 1/runs */
	uint32_t S, M, bucket, family;
	uint32_t wl;                /* coarser group: the workload family alone ("moe (all)") */
	double b_res;               /* between variance left after the group's machine effect */
	int alone;                  /* its sessions say it does not follow its group's effect */
	int cal;                    /* 1 + the KPT_CAL_ ceiling taken out of it, 0 none */
	double centre;              /* ns: exp of the base's mean */
	double *xs;                 /* [S] session means minus their mean */
};

/* The rule's state between its passes. */
struct machine_state {
	struct est *E;              /* [nkeys] */
	struct kpt_strtab fams;     /* family and group names */
	/* [base sessions] the machine unit of each session: the first session
	 * of the same boot id (the GPUs of one host boot share it and move
	 * together: a host's firmware, memory and cooling are one draw), else
	 * itself; nunits of them */
	uint32_t *unit, nunits;
	/* Calibration (docs/decision-rule.md, "Calibration"): with cal_on, the
	 * log of each unit's measured ceilings (the mean over its sessions),
	 * minus their mean over units, and NEW's likewise; ucal[k] NULL: not a
	 * candidate. ncal counts the keys each was taken out of. cal_where:
	 * NULL for the device's ceilings, else the probes' meta
	 * calibration.where, the same in every session. */
	int cal_on;
	const char *cal_where;
	double *ucal[KPT_CAL_N], ncal_new[KPT_CAL_N];
	uint32_t ncal[KPT_CAL_N];
};

/* Calibration: a key whose time follows a ceiling the machines measured
 * (time x ceiling constant: a copy at the copy ceiling, a GEMM at the
 * tensor one) has that ceiling taken out of its session means and of NEW's
 * mean (log ceiling minus the units' mean log ceiling added), before the
 * group's machine effect. Which ceiling, if any, the base's unit means xs
 * (S of them, one per unit uid[j], mean mu) say: the one that leaves them
 * closest, counted with 1 df less (S - 2) against as they are (S - 1).
 * Returns 1 + the ceiling taken out, 0 for none. */
static int calibrate(struct machine_state *st, double *xs, const uint32_t *uid, uint32_t S, double mu, double *mean_n)
{
	double best, ss = 0;
	int pick = -1;

	if (S < 3)
		return 0;
	for (uint32_t j = 0; j < S; j++)
		ss += (xs[j] - mu) * (xs[j] - mu);
	best = ss / (S - 1);
	for (int k = 0; k < KPT_CAL_N; k++) {
		double s2 = 0;

		if (!st->ucal[k])
			continue;
		for (uint32_t j = 0; j < S; j++) {
			double r = xs[j] - mu + st->ucal[k][uid[j]];

			s2 += r * r;
		}
		if (s2 / (S - 2) < best) {
			best = s2 / (S - 2);
			pick = k;
		}
	}
	if (pick < 0)
		return 0;
	for (uint32_t j = 0; j < S; j++)
		xs[j] += st->ucal[pick][uid[j]];
	*mean_n += st->ncal_new[pick];
	st->ncal[pick]++;
	return 1 + pick;
}

/* Pass 1: session means, within and between variances of one unit. The
 * base's runs are grouped by session (side_stats.run_sess); NEW's runs are
 * one candidate session. Returns 1 when the unit can be tested. */
static int est_make(struct kpt_rule_ctx *c, const struct kpt_side_stats *sb, const struct kpt_side_stats *sn,
		    struct est *e)
{
	uint32_t ns = c->b->nsessions ? c->b->nsessions : 1;
	double *sum = NULL, *ss = NULL, mu = 0, fl, wss = 0, wdf = 0, nss = 0, mean_n = 0, *usum = NULL, *uinv = NULL;
	uint32_t *cnt = NULL, *uk = NULL, *uid = NULL;
	struct machine_state *st = c->state;
	const uint32_t *unit = st ? st->unit : NULL;
	int rc = 0;

	memset(e, 0, sizeof *e);
	if (!sb->runs || !sn->runs || (sb->runs < 2 && sn->runs < 2 && ns == 1))
		return 0;
	sum = calloc(ns, sizeof *sum);
	ss = calloc(ns, sizeof *ss);
	cnt = calloc(ns, sizeof *cnt);
	if (!sum || !ss || !cnt)
		goto out;
	for (uint32_t i = 0; i < sb->runs; i++) {
		uint32_t q = sb->run_sess[i] < ns ? sb->run_sess[i] : 0;

		sum[q] += log(sb->run_ns[i]);
		cnt[q]++;
	}
	e->xs = kpt_arena_alloc(c->a, ns * sizeof *e->xs);
	usum = calloc(ns, sizeof *usum);
	uinv = calloc(ns, sizeof *uinv);
	uk = calloc(ns, sizeof *uk);
	uid = calloc(ns, sizeof *uid);
	if (!e->xs || !usum || !uinv || !uk || !uid)
		goto out;
	/* A machine unit's mean is the mean of its sessions' means (the GPUs
	 * of one host boot move together: one unit of the between part). */
	for (uint32_t q = 0; q < ns; q++) {
		uint32_t u = unit && unit[q] < ns ? unit[q] : q;

		if (!cnt[q])
			continue;
		usum[u] += sum[q] / cnt[q];
		uinv[u] += 1.0 / cnt[q];
		uk[u]++;
	}
	for (uint32_t u = 0; u < ns; u++) {
		if (!uk[u])
			continue;
		uid[e->S] = u;
		e->xs[e->S] = usum[u] / uk[u];
		mu += e->xs[e->S];
		e->minv += uinv[u] / ((double)uk[u] * uk[u]);
		e->S++;
	}
	mu /= e->S;
	e->minv /= e->S;
	for (uint32_t i = 0; i < sb->runs; i++) {
		uint32_t q = sb->run_sess[i] < ns ? sb->run_sess[i] : 0;
		double x = log(sb->run_ns[i]) - sum[q] / cnt[q];

		ss[q] += x * x;
	}
	for (uint32_t q = 0; q < ns; q++)
		if (cnt[q] > 1) {
			wss += ss[q];
			wdf += cnt[q] - 1;
		}
	for (uint32_t i = 0; i < sn->runs; i++)
		mean_n += log(sn->run_ns[i]);
	mean_n /= sn->runs;
	for (uint32_t i = 0; i < sn->runs; i++) {
		double x = log(sn->run_ns[i]) - mean_n;

		nss += x * x;
	}
	fl = kpt_rule_floor_log(c, exp(mu));
	e->vb = wdf > 0 ? wss / wdf : NAN;
	e->vn = sn->runs > 1 ? nss / (sn->runs - 1) : NAN;
	if (isnan(e->vb))
		e->vb = e->vn;
	if (isnan(e->vn))
		e->vn = e->vb;
	if (isnan(e->vb)) { /* one run everywhere: within noise unknown */
		rc = 0;
		goto out;
	}
	e->wdf = wdf + (sn->runs - 1);
	e->w = e->wdf > 0 ? (wss + nss) / e->wdf : e->vb;
	if (e->w < fl * fl)
		e->w = fl * fl;
	if (e->vb < fl * fl)
		e->vb = fl * fl;
	if (e->vn < fl * fl)
		e->vn = fl * fl;
	if (e->wdf < 1)
		e->wdf = 1;
	if (st && st->cal_on && e->S == st->nunits)
		e->cal = calibrate(st, e->xs, uid, e->S, mu, &mean_n);
	e->b_raw = NAN;
	if (e->S >= 2) {
		double v = 0;

		for (uint32_t q = 0; q < e->S; q++)
			v += (e->xs[q] - mu) * (e->xs[q] - mu);
		e->b_raw = v / (e->S - 1 - (e->cal > 0)) - e->w * e->minv;
		if (e->b_raw < 0)
			e->b_raw = 0;
	}
	for (uint32_t q = 0; q < e->S; q++)
		e->xs[q] -= mu;
	e->d = mean_n - mu;
	e->M = sn->runs;
	e->bucket = kpt_rule_bucket(exp(mu));
	e->centre = exp(mu);
	e->tested = 1;
	rc = 1;
out:
	free(sum);
	free(ss);
	free(cnt);
	free(usum);
	free(uinv);
	free(uk);
	free(uid);
	return rc;
}

/* Pass 2: the test. se^2 = bvar (1 + 1/S) + w (1/M + mean(1/m_s)/S) +
 * post: a new unchanged session differs from the base's mean by its own
 * machine offset (bvar: the key's between-session variance left after its
 * group's machine effect, machine_model) and run noise, plus the
 * uncertainty of the base's mean and of the machine effect taken out
 * (post). shift is that effect (log), subtracted from d. df by
 * Welch-Satterthwaite. */
static void est_test(struct kpt_rule_ctx *c, struct kpt_diff_row *r, const struct est *e, double shift,
		     double bvar, double bdf, double post, double *half_log)
{
	double dlog = e->d - shift, a, bpart, se2, df, q;

	a = bvar * (1 + 1.0 / e->S) + post;
	bpart = c->o.welch ? e->vb * e->minv / e->S + e->vn / e->M : e->w * (1.0 / e->M + e->minv / e->S);
	se2 = a + bpart;
	df = se2 * se2 / ((a > 0 ? a * a / bdf : 0) + bpart * bpart / e->wdf);
	q = kpt_t_quantile(1 - c->o.alpha / 2, df);
	*half_log = q * sqrt(se2);
	r->change_pct = kpt_rule_pct(dlog);
	r->shift_pct = shift != 0 ? kpt_rule_pct(shift) : 0;
	r->within_pct = 100 * sqrt(e->w);
	r->between_pct = 100 * sqrt(bvar + post);
	r->noise_pct = 100 * sqrt(se2);
	r->t = dlog / sqrt(se2);
	r->df = df;
	r->p = kpt_t_pvalue(r->t, df);
	r->ci_low_pct = kpt_rule_pct(dlog - *half_log);
	r->ci_high_pct = kpt_rule_pct(dlog + *half_log);
}

/* Family of a key: its workload's first dot-separated part ("" none) and
 * its kernel's kind, the first '_'-separated word of the function's own
 * name ("moe/nvjet" for cuBLAS's GEMMs in the MoE layer): kernels of one
 * library in one workload are what a machine slows down together (on two
 * of ten H100s the MoE layer's small cuBLAS GEMMs ran 3-12% slower). */
static int family_id(struct kpt_strtab *fams, const char *workload, const char *name, uint32_t *id)
{
	char buf[160];

	kpt_diff_family(workload, name, buf, sizeof buf);
	return kpt_strtab_intern(fams, buf, strlen(buf), id);
}

/* The coarser group of a key: its workload's first dot-separated part
 * ("moe (all)"), for families with too few keys of their own. */
static int workload_group_id(struct kpt_strtab *fams, const char *workload, uint32_t *id)
{
	const char *dot = strchr(workload, '.');
	size_t wl = dot ? (size_t)(dot - workload) : strlen(workload);
	char buf[80];

	snprintf(buf, sizeof buf, "%.*s (all)", (int)(wl > 64 ? 64 : wl), workload);
	return kpt_strtab_intern(fams, buf, strlen(buf), id);
}

/* ---- the machine model (docs/decision-rule.md, "Machines") ----------------
 *
 * A key's session mean is  mu_k + m_{s,g} + e_{s,k} + run noise:  m_{s,g} is
 * what machine s does to every key of group g (its memory, its tensor-core
 * clocks: the median of the group's keys' deviations in that session), e
 * what is left to the key itself. The base's sessions give each group's
 * effects, so the between-session variance of a key is measured on what is
 * left (b_res), shrunk both ways toward its group and duration; NEW's own
 * effect per group is the median change of the group's keys, shrunk toward
 * 0 by how much such effects vary between machines (tau2) against how
 * precisely the median is known, and taken out of every key of the group.
 * One key that changed moves the median little, so it is still seen; a
 * machine that is slower on a whole family is one line, tested on its own
 * against tau2 (a family that got slower as a whole fails the gate there).
 * With the same GPU and boot there is no machine part. */
#define GROUP_MIN 6          /* keys a group needs for a machine effect of its own */
#define W_PRIOR_DF 4.0       /* weight of a group's median run-to-run variance (moderated t) */

struct keynoise {
	double shift;            /* the group's machine effect taken out (log) */
	double bvar, bdf;        /* between-session variance left and its df */
	double post;             /* variance of the effect taken out */
};

struct mgroup {
	uint32_t keys;           /* tested keys in the group */
	uint32_t full;           /* of them, seen in every base session */
	double *eff;             /* [S] base sessions' effects, or NULL */
	double tau2, taudf;      /* between-session variance of the effect */
	double m_new, m_used, post, v;
	double tail_df;          /* df of a t with the residuals' kurtosis (heavy tails: odd machines) */
};

/* Chooses each tested key's group: its family when that has GROUP_MIN keys,
 * else its workload family, else all keys. gid gets strtab ids of fams. */
static int pick_groups(struct kpt_strtab *fams, const struct est *E, uint32_t n, uint32_t *gid)
{
	uint32_t nf = kpt_strtab_count(fams), all, *cnt;
	int rc;

	if ((rc = kpt_strtab_intern(fams, "(all keys)", 10, &all)) < 0)
		return rc;
	nf = kpt_strtab_count(fams);
	if (!(cnt = calloc(nf + 1, sizeof *cnt)))
		return KPT_E_NOMEM;
	for (uint32_t i = 0; i < n; i++)
		if (E[i].tested) {
			cnt[E[i].family]++;
			cnt[E[i].wl]++;
			cnt[all]++;
		}
	for (uint32_t i = 0; i < n; i++)
		gid[i] = !E[i].tested ? UINT32_MAX : cnt[E[i].family] >= GROUP_MIN ? E[i].family :
			 cnt[E[i].wl] >= GROUP_MIN ? E[i].wl : all;
	free(cnt);
	return 0;
}

/* The shrinkage target of each tested key's residual between variance:
 * the median over its group and duration bucket (5+ keys seen in 3+
 * sessions), else over its bucket, else the prior. */
static void residual_targets(const struct kpt_rule_ctx *c, const struct est *E, uint32_t n, const uint32_t *gid,
			     double *v, double *target, double *tdf)
{
	double bt[KPT_RULE_NBUCKETS], bdf[KPT_RULE_NBUCKETS];

	for (uint32_t b = 0; b < KPT_RULE_NBUCKETS; b++) {
		uint32_t m = 0;

		for (uint32_t i = 0; i < n; i++)
			if (E[i].tested && E[i].bucket == b && E[i].S >= 3)
				v[m++] = E[i].b_res;
		bt[b] = c->o.between_prior_pct > 0 ? c->o.between_prior_pct / 100 : kpt_rule_bucket_prior_pct(b) / 100;
		bt[b] *= bt[b];
		bdf[b] = PRIOR_SHRINK_DF;
		if (m >= 5) {
			bt[b] = kpt_rule_median(v, m);
			bdf[b] = SHRINK_DF;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t m = 0;

		if (!E[i].tested)
			continue;
		target[i] = bt[E[i].bucket];
		tdf[i] = bdf[E[i].bucket];
		for (uint32_t j = 0; j < n; j++)
			if (E[j].tested && gid[j] == gid[i] && E[j].bucket == E[i].bucket && E[j].S >= 3)
				v[m++] = E[j].b_res;
		if (m >= 5) {
			target[i] = kpt_rule_median(v, m);
			tdf[i] = SHRINK_DF;
		}
	}
}

static int machine_model(struct kpt_rule_ctx *c, struct kpt_diff *df, struct est *E, uint32_t n,
			 struct kpt_strtab *fams, struct keynoise *kn)
{
	uint32_t S = 0, ng, *gid = malloc((n + 1) * sizeof *gid);
	double *v = malloc((n + 1) * sizeof *v), *target = calloc(n + 1, sizeof *target);
	double *tdf = calloc(n + 1, sizeof *tdf), pr = SHIFT_PRIOR_PCT / 100;
	double thr = log1p(c->o.threshold_pct / 100);
	struct mgroup *G = NULL;
	int rc = KPT_E_NOMEM, other = c->machine == KPT_MACHINE_OTHER;

	if (!gid || !v || !target || !tdf || (rc = pick_groups(fams, E, n, gid)) < 0)
		goto out;
	rc = KPT_E_NOMEM;
	ng = kpt_strtab_count(fams);
	if (!(G = calloc(ng + 1, sizeof *G)))
		goto out;
	for (uint32_t i = 0; i < n; i++)
		if (E[i].tested && E[i].S > S)
			S = E[i].S;
	for (uint32_t i = 0; i < n; i++)
		if (E[i].tested) {
			G[gid[i]].keys++;
			G[gid[i]].full += E[i].S == S;
			E[i].b_res = E[i].b_raw;
		}
	/* The base sessions' effects per group, and the keys' residuals. */
	for (uint32_t g = 0; g < ng; g++) {
		struct mgroup *q = &G[g];

		q->tau2 = pr * pr;
		q->taudf = PRIOR_DF;
		if (!other || S < 3 || q->full < GROUP_MIN)
			continue;
		if (!(q->eff = kpt_arena_alloc(c->a, S * sizeof *q->eff)))
			goto out;
		for (uint32_t s = 0; s < S; s++) {
			uint32_t m = 0;

			for (uint32_t i = 0; i < n; i++)
				if (E[i].tested && gid[i] == g && E[i].S == S)
					v[m++] = E[i].xs[s];
			q->eff[s] = kpt_rule_median(v, m);
		}
		{
			double mean = 0, ss = 0;

			for (uint32_t s = 0; s < S; s++)
				mean += q->eff[s];
			mean /= S;
			for (uint32_t s = 0; s < S; s++)
				ss += (q->eff[s] - mean) * (q->eff[s] - mean);
			q->taudf = (S - 1) + SHRINK_DF;
			q->tau2 = (ss + SHRINK_DF * pr * pr) / q->taudf;
		}
		{
			double m2 = 0, m4 = 0, cnt = 0;

			for (uint32_t i = 0; i < n; i++) {
				struct est *e = &E[i];
				double ss = 0;

				if (!e->tested || gid[i] != g || e->S != S)
					continue;
				for (uint32_t s = 0; s < S; s++) {
					double r = e->xs[s] - q->eff[s];

					ss += r * r;
					m2 += r * r;
					m4 += r * r * r * r;
					cnt++;
				}
				e->b_res = ss / (S - 1) - e->w * e->minv;
				if (e->b_res < 0)
					e->b_res = 0;
				/* Evidence before priors: a key whose sessions agree
				 * better without the group's effect than with it (a
				 * kernel the machines run alike, in a program whose
				 * other kernels move) is left out of the effect: no
				 * shift taken out of it, its own variance kept. */
				if (e->b_raw < e->b_res) {
					e->b_res = e->b_raw;
					e->alone = 1;
				}
			}
			/* A t whose kurtosis is the residuals' (df = 4 + 6 / excess):
			 * on a few machines a few keys of a family are far off (the
			 * MoE layer's small cuBLAS GEMMs, 3-12% on 3 of 14 H100s), so
			 * its keys' tails are heavy and a normal tail would cry wolf. */
			q->tail_df = 200;
			if (cnt > 0 && m2 > 0) {
				double ex = (m4 / cnt) / ((m2 / cnt) * (m2 / cnt)) - 3;

				if (ex > 0.03)
					q->tail_df = 4 + 6 / ex;
				if (q->tail_df < 3)
					q->tail_df = 3;
			}
		}
	}
	/* Moderated run-to-run variances (Smyth's moderated t): each key's w,
	 * from a few runs, is pooled with its group's median w at W_PRIOR_DF
	 * degrees of freedom. With 5 runs a side a key's own w has 8 df, and
	 * Holm over ~80 keys then needs |t| > 5; the group's keys say what
	 * run-to-run noise such kernels have. */
	for (uint32_t g = 0; g < ng; g++) {
		uint32_t m = 0;
		double s0;

		for (uint32_t i = 0; i < n; i++)
			if (E[i].tested && gid[i] == g)
				v[m++] = E[i].w;
		if (m < 5)
			continue;
		s0 = kpt_rule_median(v, m);
		for (uint32_t i = 0; i < n; i++)
			if (E[i].tested && gid[i] == g) {
				E[i].w = (W_PRIOR_DF * s0 + E[i].wdf * E[i].w) / (W_PRIOR_DF + E[i].wdf);
				E[i].wdf += W_PRIOR_DF;
			}
	}
	residual_targets(c, E, n, gid, v, target, tdf);
	/* Each key's between part. */
	for (uint32_t i = 0; i < n; i++) {
		struct est *e = &E[i];
		double b, bdf, prior;

		if (!e->tested)
			continue;
		prior = c->o.between_prior_pct > 0 ? c->o.between_prior_pct / 100 : kpt_rule_bucket_prior_pct(e->bucket) / 100;
		if (c->machine == KPT_MACHINE_SAME_BOOT) {
			b = 0;
			bdf = PRIOR_DF;
		} else if (e->S >= 2) {
			/* shrunk both ways: once sessions have measured a key, a
			 * quiet key is quiet and a wild one is wild */
			bdf = (e->S - 1) + tdf[i];
			b = ((e->S - 1) * e->b_res + tdf[i] * target[i]) / bdf;
			/* Evidence before priors: the group's target counts only
			 * as far as the key's own sessions allow it, never above
			 * the one-sided 95% upper bound of what they measured
			 * (their session means' variance, run noise included, on
			 * S - 1 df). A kernel whose machines agree to 0.04% is not
			 * given its group's 1.3% because other kernels of the
			 * program move (docs/decision-rule.md, "Evidence before
			 * priors"). */
			{
				double s2 = e->b_res + e->w * e->minv;
				double ucb = (e->S - 1) * s2 / kpt_chi2_quantile(UCB_Q, e->S - 1);

				if (b > ucb) {
					b = ucb;
					bdf = e->S - 1;
				}
			}
		} else {
			b = prior * prior;
			bdf = PRIOR_DF;
		}
		{
			/* Machines, and one machine's processes minutes apart, differ
			 * by tens of ns on the shortest kernels even when their
			 * sessions agree (docs/decision-rule.md, "Sessions"). */
			double fb = c->o.between_floor_ns / e->centre;

			if (b < fb * fb)
				b = fb * fb;
		}
		if (c->machine == KPT_MACHINE_OTHER && G[gid[i]].eff && bdf > G[gid[i]].tail_df)
			bdf = G[gid[i]].tail_df;
		kn[i].bvar = b;
		kn[i].bdf = bdf;
		v[i] = b * (1 + 1.0 / e->S) + e->w * (1.0 / e->M + e->minv / e->S);
	}
	/* NEW's effect per group: the median change, shrunk toward 0 by the
	 * precision of the median ((pi/2) x a typical key's variance / keys)
	 * against how much such effects vary between machines. */
	df->shifts = kpt_arena_calloc(c->a, ng + 1, sizeof *df->shifts);
	if (!df->shifts)
		goto out;
	for (uint32_t g = 0; g < ng; g++) {
		struct mgroup *q = &G[g];
		struct kpt_diff_shift *sh;
		double *d = malloc((q->keys + 1) * sizeof *d), *a = malloc((q->keys + 1) * sizeof *a);
		double se, half, p, qt;
		uint32_t m = 0;

		if (!d || !a) {
			free(d);
			free(a);
			goto out;
		}
		for (uint32_t i = 0; i < n; i++)
			if (E[i].tested && gid[i] == g) {
				d[m] = E[i].d;
				a[m++] = v[i];
			}
		if (m < GROUP_MIN || !other || c->o.no_shift) {
			free(d);
			free(a);
			continue;
		}
		q->m_new = kpt_rule_median(d, m);
		q->v = M_PI / 2 * kpt_rule_median(a, m) / m;
		q->m_used = q->m_new * q->tau2 / (q->tau2 + q->v);
		q->post = q->tau2 * q->v / (q->tau2 + q->v);
		free(d);
		free(a);
		/* the report: the group's move against how much machines move it */
		sh = &df->shifts[df->nshifts];
		se = sqrt(q->tau2 * (1 + 1.0 / S) + q->v);
		qt = kpt_t_quantile(1 - c->o.alpha / 2, q->taudf);
		half = qt * se;
		p = kpt_t_pvalue(q->m_new / se, q->taudf) * ng; /* Bonferroni over the groups */
		if (!(sh->family = kpt_rule_adup(c, kpt_strtab_get(fams, g, NULL))))
			goto out;
		sh->keys = m;
		sh->change_pct = kpt_rule_pct(q->m_new);
		sh->ci_low_pct = kpt_rule_pct(q->m_new - half);
		sh->ci_high_pct = kpt_rule_pct(q->m_new + half);
		sh->sd_pct = 100 * sqrt(q->tau2);
		sh->verdict = q->m_new > thr && p < c->o.alpha ? KPT_V_SLOW :
			      q->m_new < -thr && p < c->o.alpha ? KPT_V_FAST :
			      fabs(q->m_new) + half < thr ? KPT_V_SAME : KPT_V_AMBG;
		sh->applied = 1;
		df->nshifts++;
	}
	for (uint32_t i = 0; i < n; i++)
		if (E[i].tested) {
			kn[i].shift = E[i].alone ? 0 : G[gid[i]].m_used;
			kn[i].post = E[i].alone ? 0 : G[gid[i]].post;
		}
	rc = 0;
out:
	free(gid);
	free(v);
	free(target);
	free(tdf);
	free(G);
	return rc < 0 ? kpt_diag_set(c->d, rc, "out of memory in the machine model") : 0;
}

/* Where NEW came from: when some base sessions share NEW's GPU UUID (and
 * boot id), only they are compared (c->bslots keeps their runs) and the
 * machine part of the noise is none (same boot) or the between-boot part
 * (same GPU); else every session is another machine. */
static int machine_prepare(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	const struct kpt_diff_session *nw = c->n->nsessions ? &c->n->sessions[0] : NULL;
	uint32_t nb = c->b->nsessions ? c->b->nsessions : 1, out = 0, boot = 0, gpu = 0;
	unsigned char *keep = NULL;

	c->machine = KPT_MACHINE_OTHER;
	df->machine_sessions = 0;
	if (c->o.machine == KPT_MACHINE_OTHER || c->o.paired || !nw || !c->b->nsessions || !c->b->run_session ||
	    (!c->o.same_machine && (!nw->uuid || !nw->uuid[0])) || !(keep = calloc(nb, 1)))
		goto out;
	for (uint32_t q = 0; q < c->b->nsessions; q++) {
		const struct kpt_diff_session *s = &c->b->sessions[q];

		if (c->o.same_machine) { /* the user says so (diff --same-machine) */
			keep[q] = 2;
			boot++;
			continue;
		}
		if (!s->uuid || strcmp(s->uuid, nw->uuid) != 0)
			continue;
		/* the same boot id, or runs of one recording (diff X X --base-runs
		 * A --new-runs B; older recordings have no boot id) */
		if ((s->boot && s->boot[0] && nw->boot && strcmp(s->boot, nw->boot) == 0) ||
		    (s->path && nw->path && s->path[0] && strcmp(s->path, nw->path) == 0 && s->time && nw->time &&
		     strcmp(s->time, nw->time) == 0)) {
			keep[q] = 2;
			boot++;
		} else {
			keep[q] = 1;
			gpu++;
		}
	}
	if (!boot) {
		/* The same GPU after a reboot (or recordings without a boot id):
		 * how much one GPU moves between boots is not measured yet
		 * (docs/decision-rule.md, "Machines"), so it is compared as
		 * another machine, with every session; the notes say so. */
		df->machine_sessions = gpu;
		goto out;
	}
	c->machine = KPT_MACHINE_SAME_BOOT;
	for (uint32_t i = 0; i < c->nbslots; i++) {
		uint32_t q = c->b->run_session[c->bslots[i]];

		if (q < nb && keep[q] == 2)
			c->bslots[out++] = c->bslots[i];
	}
	if (!out) { /* the selected runs hold none of those sessions */
		c->machine = KPT_MACHINE_OTHER;
		goto out;
	}
	c->nbslots = out;
	df->machine_sessions = boot;
out:
	df->machine = c->machine;
	free(keep);
	return 0;
}


/* A comparison across machines that leaves most keys AMBG cannot hear a
 * slowdown of a few percent: its "no regression" means none was seen, not
 * none there. Say so, with the way out (more sessions, or one machine).
 * Not for a same-machine comparison (its noise is run-to-run only). */
static void deaf_note(struct kpt_rule_ctx *c, const struct kpt_diff *df)
{
	const uint32_t ambg = df->counts[KPT_V_AMBG];
	const uint32_t compared = df->counts[KPT_V_SLOW] + df->counts[KPT_V_FAST] + ambg + df->counts[KPT_V_SAME];

	if (df->machine == KPT_MACHINE_SAME_BOOT || compared < 4 || 2 * ambg <= compared)
		return;
	kpt_rule_note(c, "power", 1, kpt_rule_afmt(c, "%u of %u compared keys are AMBG against %u session%s of other machines: "
							"this comparison cannot tell a change of a few percent from machine noise "
							"(no SLOW means none was seen, not none there); add sessions from other machines "
							"('kptprof baseline update') or compare on one machine ('kptprof gate --against', 'kptprof ab')",
						    ambg, compared, df->base_sessions, df->base_sessions == 1 ? "" : "s"));
}

/* What the noise model rests on, the families that moved together and the
 * machines' measured ceilings: one line each, beside the verdicts. */
static void machine_notes(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	const struct kpt_diff_session *nw = c->n->nsessions ? &c->n->sessions[0] : NULL;

	if (df->machine == KPT_MACHINE_SAME_BOOT)
		kpt_rule_note(c, "sessions", 0, kpt_rule_afmt(c, "%s as %u of the base's %u session%s: compared with %s alone, no between-machine part",
					      c->o.same_machine ? "one machine (--same-machine)"
					      : nw && nw->boot && strncmp(nw->boot, "import:", 7) == 0
						      ? "same machine (the host and GPU the imported traces name)"
						      : "same GPU (UUID) and boot",
					      df->machine_sessions, df->base_sessions, df->base_sessions == 1 ? "" : "s",
					      df->machine_sessions == 1 ? "it" : "them"));
	else if (df->machine_sessions)
		kpt_rule_note(c, "machine", 0, kpt_rule_afmt(c, "same GPU (UUID) as %u of the base's %u session%s but another boot (or no boot id): "
					      "compared as another machine (how much one GPU moves between boots is not measured yet)",
					      df->machine_sessions, df->base_sessions, df->base_sessions == 1 ? "" : "s"));
	if (df->machine == KPT_MACHINE_SAME_BOOT)
		;
	else if (df->prior_between)
		kpt_rule_note(c, "sessions", 1, kpt_rule_afmt(c, "base holds one session: the between-machine part of the noise is a prior by kernel duration (docs/decision-rule.md), not a measurement; 'kptprof baseline update' adds sessions"));
	else
		kpt_rule_note(c, "sessions", 0, kpt_rule_afmt(c, "base holds %u sessions: the noise has a measured between-machine part, "
					      "after each family's machine effect", df->base_sessions));
	deaf_note(c, df);
	for (size_t i = 0; i < df->nshifts; i++) {
		const struct kpt_diff_shift *sh = &df->shifts[i];

		if (sh->verdict == KPT_V_SAME)
			continue;
		kpt_rule_note(c, "shift", sh->verdict == KPT_V_SLOW,
		     kpt_rule_afmt(c, "family '%s' moved %+.1f%% as a whole [%+.1f, %+.1f] (%u keys; between sessions such medians move %.2f%%): %s%s",
			  sh->family, sh->change_pct, sh->ci_low_pct, sh->ci_high_pct, sh->keys, sh->sd_pct,
			  kpt_verdict_name(sh->verdict), sh->applied ? "; taken out of its keys' changes" : ""));
	}
}



/* A session's ceiling k of the set: the probes (meta calibration.*) or
 * the device's copy and bf16; 0 unknown. */
static double cal_value(const struct kpt_diff_session *q, int probes, int k)
{
	if (probes)
		return q->probe[k];
	return k == KPT_CAL_COPY ? q->copy_gbps : k == KPT_CAL_BF16 ? q->bf16_tflops : 0;
}

/* Whether every base session and NEW carry probes measured alike: the same
 * non-empty meta calibration.where, and some probe in each. */
static int cal_probes_alike(const struct kpt_rule_ctx *c, const struct kpt_diff_session *nw)
{
	if (!nw->probe_where)
		return 0;
	for (uint32_t q = 0; q <= c->b->nsessions; q++) {
		const struct kpt_diff_session *x = q < c->b->nsessions ? &c->b->sessions[q] : nw;
		int any = 0;

		if (!x->probe_where || !x->probe_where[0] || strcmp(x->probe_where, nw->probe_where) != 0)
			return 0;
		for (int k = 0; k < KPT_CAL_N; k++)
			any |= x->probe[k] > 0;
		if (!any)
			return 0;
	}
	return 1;
}

/* Whether ceiling k of the set is known (> 0) in every base session and
 * in NEW. */
static int cal_known(const struct kpt_rule_ctx *c, const struct kpt_diff_session *nw, int probes, int k)
{
	if (!(cal_value(nw, probes, k) > 0))
		return 0;
	for (uint32_t q = 0; q < c->b->nsessions; q++)
		if (!(cal_value(&c->b->sessions[q], probes, k) > 0))
			return 0;
	return 1;
}

/* Calibration is on with 5+ base units, unless --no-calibration. Its set:
 * the probes when every base session and NEW carry them measured alike
 * (cal_probes_alike), each probe known in all of them a candidate; else
 * the device's copy and bf16 ceilings, when every session and NEW
 * measured both. ucal then holds each unit's mean log ceiling minus the
 * mean over units, ncal_new NEW's. */
static int cal_setup(struct kpt_rule_ctx *c, struct machine_state *s)
{
	const struct kpt_diff_session *nw = c->n->nsessions ? &c->n->sessions[0] : NULL;
	uint32_t nb = c->b->nsessions;
	int use[KPT_CAL_N] = { 0 }, probes = 0, n = 0;

	if (c->o.no_calibration || s->nunits < 5 || !nw)
		return 0;
	if (c->o.calibration_probes && cal_probes_alike(c, nw)) {
		for (int k = 0; k < KPT_CAL_N; k++)
			n += use[k] = cal_known(c, nw, 1, k);
		probes = n > 0;
	}
	if (!probes) {
		if (!cal_known(c, nw, 0, KPT_CAL_COPY) || !cal_known(c, nw, 0, KPT_CAL_BF16))
			return 0;
		memset(use, 0, sizeof use);
		use[KPT_CAL_COPY] = use[KPT_CAL_BF16] = 1;
	}
	for (int k = 0; k < KPT_CAL_N; k++) {
		double *sum, mean = 0;
		uint32_t *cnt;

		if (!use[k])
			continue;
		sum = calloc(nb, sizeof *sum);
		cnt = calloc(nb, sizeof *cnt);
		if (!sum || !cnt || !(s->ucal[k] = calloc(nb, sizeof *s->ucal[k]))) {
			free(sum);
			free(cnt);
			return KPT_E_NOMEM;
		}
		for (uint32_t q = 0; q < nb; q++) {
			sum[s->unit[q]] += log(cal_value(&c->b->sessions[q], probes, k));
			cnt[s->unit[q]]++;
		}
		for (uint32_t u = 0; u < nb; u++)
			if (cnt[u]) {
				s->ucal[k][u] = sum[u] / cnt[u];
				mean += s->ucal[k][u];
			}
		mean /= s->nunits;
		for (uint32_t u = 0; u < nb; u++)
			if (cnt[u])
				s->ucal[k][u] -= mean;
		s->ncal_new[k] = log(cal_value(nw, probes, k)) - mean;
		free(sum);
		free(cnt);
	}
	s->cal_where = probes ? nw->probe_where : NULL;
	s->cal_on = 1;
	return 0;
}

/* The calibration note: the device's ceilings in the words it always had;
 * the probes named, with where they were measured. */
static void cal_note(struct kpt_rule_ctx *c, const struct machine_state *s)
{
	/* calibration.where values kptprof record writes; others are text
	 * from the file and are not echoed */
	static const struct { const char *where, *words; } wheres[] = {
		{ "in each run", "probes measured in each run" },
		{ "once per boot, in a process of its own", "probes measured once per boot" },
	};
	static const int order[] = { KPT_CAL_BF16, KPT_CAL_FP8, KPT_CAL_COPY, KPT_CAL_SM };
	const char *words = "probes";
	char list[128];             /* four names and counts: at most 90 characters */
	size_t n = 0;

	if (!s->cal_where) {
		kpt_rule_note(c, "calibration", 0,
			      kpt_rule_afmt(c, "calibration: bf16 ceiling taken out of %u keys, copy ceiling out of %u (time x ceiling, "
					       "where the base's %u machines' means agree better so%s; --no-calibration: none)",
					    s->ncal[KPT_CAL_BF16], s->ncal[KPT_CAL_COPY], s->nunits,
					    c->o.calibration_probes ? "; not the probes: not every session carries them, "
								      "measured alike" : ""));
		return;
	}
	for (size_t i = 0; i < sizeof wheres / sizeof wheres[0]; i++)
		if (strcmp(s->cal_where, wheres[i].where) == 0)
			words = wheres[i].words;
	list[0] = '\0';
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		int k = order[i];

		if (!s->ucal[k] || n >= sizeof list)
			continue;
		n += (size_t)snprintf(list + n, sizeof list - n, n ? ", %s of %u" : "%s taken out of %u keys",
				      cal_name[k], s->ncal[k]);
	}
	kpt_rule_note(c, "calibration", 0,
		      kpt_rule_afmt(c, "calibration (%s): %s (time x probe, where the base's %u machines' means agree "
				       "better so; --no-calibration: none)",
				    words, list, s->nunits));
}

static int machine_key(struct kpt_rule_ctx *c, uint32_t i, struct kpt_diff_row *r, const struct kpt_side_stats *sb,
		       const struct kpt_side_stats *sn, struct kpt_rule_test *t)
{
	struct machine_state *s = c->state;
	int rc;

	(void)t;
	if (!s) {
		if (!(s = calloc(1, sizeof *s)) || !(s->E = calloc(c->nkeys + 1, sizeof *s->E))) {
			free(s);
			return KPT_E_NOMEM;
		}
		kpt_strtab_init(&s->fams);
		c->state = s;
		if (c->machine == KPT_MACHINE_OTHER && c->b->nsessions > 1) {
			uint32_t nb = c->b->nsessions;

			if (!(s->unit = calloc(nb, sizeof *s->unit)))
				return KPT_E_NOMEM;
			for (uint32_t q = 0; q < nb; q++) {
				const char *bq = c->b->sessions[q].boot;

				s->unit[q] = q;
				for (uint32_t p = 0; bq && bq[0] && p < q; p++)
					if (c->b->sessions[p].boot && strcmp(c->b->sessions[p].boot, bq) == 0) {
						s->unit[q] = s->unit[p];
						break;
					}
				s->nunits += s->unit[q] == q;
			}
			if (cal_setup(c, s) < 0)
				return KPT_E_NOMEM;
		}
	}
	if ((rc = est_make(c, sb, sn, &s->E[i])) < 0)
		return rc;
	if (s->E[i].tested && ((rc = family_id(&s->fams, r->workload, r->name, &s->E[i].family)) < 0 ||
			       (rc = workload_group_id(&s->fams, r->workload, &s->E[i].wl)) < 0))
		return rc;
	return 0;
}

/* Pass 2: the machine model over all keys, then each key's test. */
static int machine_test(struct kpt_rule_ctx *c, struct kpt_diff *df, struct kpt_rule_test *t)
{
	struct machine_state *s = c->state;
	struct keynoise *kn;
	int rc;

	if (!s)
		return 0; /* no key with data */
	if (!(kn = calloc(c->nkeys + 1, sizeof *kn)))
		return KPT_E_NOMEM;
	if ((rc = machine_model(c, df, s->E, c->nkeys, &s->fams, kn)) < 0) {
		free(kn);
		return rc;
	}
	for (uint32_t i = 0; i < c->nkeys; i++) {
		struct kpt_diff_row *r = &df->rows[i];
		struct est *e = &s->E[i];
		double h2;

		if (!e->tested)
			continue;
		est_test(c, r, e, kn[i].shift, kn[i].bvar, kn[i].bdf, kn[i].post, &t[i].half);
		/* what infinitely many NEW runs would leave */
		h2 = t[i].half * t[i].half * (1 - e->w / e->M / (r->noise_pct * r->noise_pct / 1e4));
		t[i].half_inf = h2 > 0 ? sqrt(h2) : 0;
		t[i].p = r->p;
	}
	free(kn);
	return 0;
}

static void machine_finish(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	struct machine_state *s = c->state;

	machine_notes(c, df);
	if (s && s->cal_on)
		cal_note(c, s);
	if (s) {
		free(s->E);
		free(s->unit);
		for (int k = 0; k < KPT_CAL_N; k++)
			free(s->ucal[k]);
		kpt_strtab_release(&s->fams);
		free(s);
	}
	c->state = NULL;
}

const struct kpt_rule_ops kpt_rule_machine = {
	.name = "machine",
	.prepare = machine_prepare,
	.key = machine_key,
	.test = machine_test,
	.finish = machine_finish,
};
