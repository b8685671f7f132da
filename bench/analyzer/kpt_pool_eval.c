/* kpt_pool_eval.c - the decision rule across machines, leave one machine out.
 *
 *   kpt-pool-eval [--base-runs 5] [--hold-out-host] [--no-calibration | --probe-calibration] [--markdown OUT] MACHINE_DIR...
 *
 * Each MACHINE_DIR holds one freshly started machine's recordings
 * (bench/analyzer/pool_call.sh): pool.kpt (the `default` suite, 10 runs,
 * unchanged) and plant.kpt (5 runs, memory.copy.128MiB +5% and
 * memory.triad.f32.64M +2% planted with real extra work). For each machine
 * h in turn, the baseline is the other machines' pool.kpt (the first
 * --base-runs runs of each, one session per machine) and h's recordings are
 * gated against it:
 *   - A/A: h's runs 0-4 (M=5), 5-7 (M=3) and 5-9 (M=5); a gate "flags" when
 *     any key or family shift is SLOW or FAST;
 *   - calibration: per duration bucket, the share of unchanged keys whose
 *     95% interval excludes zero;
 *   - power: every key of the candidate with a base centre >= 50 us scaled
 *     by 1.05 (one key at a time), and >= 200 us by 1.02: SLOW or not;
 *   - real plants: plant.kpt; the two planted keys SLOW, any other SLOW.
 * Same-machine A/B (kptprof ab's paired rule): h's runs as pairs (0,1),
 * (2,3), ... (A/A) and (1,2), (3,4), ...; power with NEW's key scaled by
 * 1.02 for keys >= 50 us.
 * fresh_multi.sh's folders (HOST/g<N>: a1.kpt and a2.kpt, 5 runs each, and
 * plant.kpt) count a1 as the session; the A/A gates are a1, a2 and a2's
 * runs 0-2, the same-machine one a1 against a2. --hold-out-host leaves the
 * held-out machine's host-mates (one parent folder) out of its baseline too.
 * Prints Markdown tables. Synthetic plants multiply every sample of one key
 * on one side (kpt_diff_side_scale): a slowdown of exactly known size on
 * top of real cross-machine noise.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_diff.h"
#include "kpt_eval_common.h"

#define MAXM 64
#define NB 4

static const double bucket_lo[NB] = { 0, 10e3, 50e3, 200e3 };
static const char *const bucket_name[NB] = { "< 10 us", "10-50 us", "50-200 us", ">= 200 us" };

static int g_agg;         /* --aggregate: opts.aggregate_min (0 default) */
static double g_floor;    /* --between-floor-ns */
static double g_ab_threshold = 1; /* kptprof ab's default threshold */
static int g_nocal;       /* --no-calibration: opts.no_calibration */
static int g_probes;      /* --probe-calibration: opts.calibration_probes */

static void eval_opts(struct kpt_diff_opts *o)
{
	o->aggregate_min = g_agg;
	o->between_floor_ns = g_floor;
	o->no_calibration = g_nocal;
	o->calibration_probes = g_probes;
}

struct machine {
	const char *dir;
	struct kpt_diff_side *pool, *pool2, *plant;
	struct kpt_diff_side *aa_a, *aa_b;  /* kptprof ab A/A recordings (ab_call.sh), or NULL */
	int split;                          /* fresh_multi.sh: a1.kpt (pool) and a2.kpt (pool2), 5 runs each */
};

/* --hold-out-host: machines in one parent folder (the GPUs of one host,
 * fresh_multi.sh's HOST/g<N>) leave the baseline together. */
static int g_host;

static int same_host(const char *a, const char *b)
{
	const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');

	return g_host && sa && sb && sa - a == sb - b && strncmp(a, b, (size_t)(sa - a)) == 0;
}

static int bucket(double ns)
{
	int b = 0;

	while (b + 1 < NB && ns >= bucket_lo[b + 1])
		b++;
	return b;
}

static struct kpt_diff_side *load(const char *dir, const char *name)
{
	char path[4096];
	struct kpt_file *f = NULL;
	struct kpt_diff_side *s = NULL;
	struct kpt_diag d = { 0 };

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (access(path, R_OK) != 0)
		return NULL;
	if (kpt_file_open(path, &f, &d) < 0 || kpt_diff_side_load(f, NULL, &s, &d) < 0) {
		fprintf(stderr, "kpt-pool-eval: %s\n", d.msg);
		s = NULL;
	}
	kpt_file_close(f);
	return s;
}




struct tally {
	int gates, flagged;
	long tested, ambg, ambg_machine;   /* A/A keys tested, of them AMBG, AMBG for machine noise */
	long keys[NB], excl[NB];
	long pw_n[2][NB], pw_hit[2][NB];   /* [5%, 2%] */
	long q_n[2], q_hit[2];             /* quiet keys (run-to-run <= 0.5%): +5% >= 50 us, +2% >= 200 us */
};

/* Power: every tested row of df0 (base >= min_ns, run-to-run noise <=
 * max_within percent) scaled by f in cand. */
static void power_q(const struct kpt_diff_side *base, struct kpt_diff_side *cand, const struct kpt_diff_opts *o,
		    const struct kpt_diff *df0, double f, double min_ns, double max_within, long *n, long *hit)
{
	for (size_t i = 0; i < df0->nrows; i++) {
		const struct kpt_diff_row *r = &df0->rows[i];
		struct kpt_diff *df = NULL;
		struct kpt_diag d = { 0 };
		const struct kpt_diff_row *q;

		if (isnan(r->p) || !(r->base_ns >= min_ns) || !(r->within_pct <= max_within))
			continue;
		scale(cand, r, f);
		if (kpt_diff_compare(base, cand, o, &df, &d) == 0 && (q = find_row(df, r))) {
			n[bucket(r->base_ns)]++;
			hit[bucket(r->base_ns)] += q->verdict == KPT_V_SLOW;
			if (q->verdict != KPT_V_SLOW && getenv("KPT_EVAL_MISSES"))
				fprintf(stderr, "  miss %+.0f%% %-40.40s %-40.40s %8.1f us: %+.1f%% [%+.1f, %+.1f] noise %.2f (between %.2f within %.2f) %s\n",
					100 * (f - 1), q->name, q->path, q->base_ns / 1e3, q->change_pct, q->ci_low_pct,
					q->ci_high_pct, q->noise_pct, q->between_pct, q->within_pct, kpt_verdict_name(q->verdict));
		}
		kpt_diff_destroy(df);
		scale(cand, r, 1 / f);
	}
}

static void power(const struct kpt_diff_side *base, struct kpt_diff_side *cand, const struct kpt_diff_opts *o,
		  const struct kpt_diff *df0, double f, double min_ns, long *n, long *hit)
{
	power_q(base, cand, o, df0, f, min_ns, INFINITY, n, hit);
}

static void gate_from(const struct kpt_diff_side *base, const uint32_t *bruns, uint32_t nbr,
		      struct kpt_diff_side *cand, const uint32_t *runs, uint32_t nr, struct tally *t, int with_power,
		      const char *label)
{
	struct kpt_diff_opts o = { 0 };
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };

	eval_opts(&o);
	o.base_runs = bruns;
	o.n_base_runs = nbr;
	o.new_runs = runs;
	o.n_new_runs = nr;
	if (kpt_diff_compare(base, cand, &o, &df, &d) < 0) {
		fprintf(stderr, "kpt-pool-eval: %s\n", d.msg);
		return;
	}
	t->gates++;
	t->flagged += flags(df) > 0;
	if (flags(df)) {
		fprintf(stderr, "  A/A %s M=%u: %u SLOW %u FAST\n", label, nr, df->counts[KPT_V_SLOW],
			df->counts[KPT_V_FAST]);
		for (size_t i = 0; i < df->nrows; i++)
			if (df->rows[i].verdict == KPT_V_SLOW || df->rows[i].verdict == KPT_V_FAST)
				fprintf(stderr, "    %s %.50s %.40s %.1f us %+.1f%% [%+.1f, %+.1f] between %.2f within %.2f\n",
					kpt_verdict_name(df->rows[i].verdict), df->rows[i].name, df->rows[i].path,
					df->rows[i].base_ns / 1e3, df->rows[i].change_pct, df->rows[i].ci_low_pct,
					df->rows[i].ci_high_pct, df->rows[i].between_pct, df->rows[i].within_pct);
	}
	for (size_t i = 0; i < df->nrows; i++) {
		const struct kpt_diff_row *r = &df->rows[i];

		if (isnan(r->p))
			continue;
		t->keys[bucket(r->base_ns)]++;
		t->excl[bucket(r->base_ns)] += r->ci_low_pct > 0 || r->ci_high_pct < 0;
		t->tested++;
		t->ambg += r->verdict == KPT_V_AMBG;
		t->ambg_machine += r->verdict == KPT_V_AMBG && r->machine_limited;
	}
	if (with_power) {
		power(base, cand, &o, df, 1.05, 50e3, t->pw_n[0], t->pw_hit[0]);
		power(base, cand, &o, df, 1.02, 200e3, t->pw_n[1], t->pw_hit[1]);
		{
			long n5[NB] = { 0 }, h5[NB] = { 0 }, n2[NB] = { 0 }, h2[NB] = { 0 };

			power_q(base, cand, &o, df, 1.05, 50e3, 0.5, n5, h5);
			power_q(base, cand, &o, df, 1.02, 200e3, 0.5, n2, h2);
			for (int b = 0; b < NB; b++) {
				t->q_n[0] += n5[b];
				t->q_hit[0] += h5[b];
				t->q_n[1] += n2[b];
				t->q_hit[1] += h2[b];
			}
		}
	}
	kpt_diff_destroy(df);
}

static void gate(const struct kpt_diff_side *base, struct kpt_diff_side *cand, const uint32_t *runs,
		 uint32_t nr, struct tally *t, int with_power, const char *label)
{
	gate_from(base, NULL, 0, cand, runs, nr, t, with_power, label);
}

static double pctof(long a, long b)
{
	return b ? 100.0 * a / b : NAN;
}

int main(int argc, char **argv)
{
	struct machine m[MAXM] = { 0 }; /* split, aa_a, aa_b: set only for some layouts */
	int n = 0, base_runs = 5;
	struct tally t3 = { 0 }, t5 = { 0 }, ab = { 0 }, t1 = { 0 }, ab10 = { 0 }, same = { 0 };
	long real_n = 0, real_hit[2] = { 0, 0 }, real_other = 0, real_gates_other = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--base-runs") == 0 && i + 1 < argc)
			base_runs = atoi(argv[++i]);
		else if (strcmp(argv[i], "--aggregate") == 0 && i + 1 < argc)
			g_agg = atoi(argv[++i]);
		else if (strcmp(argv[i], "--hold-out-host") == 0)
			g_host = 1;
		else if (strcmp(argv[i], "--between-floor-ns") == 0 && i + 1 < argc)
			g_floor = atof(argv[++i]);
		else if (strcmp(argv[i], "--no-calibration") == 0)
			g_nocal = 1;
		else if (strcmp(argv[i], "--probe-calibration") == 0)
			g_probes = 1;
		else if (n < MAXM)
			m[n++].dir = argv[i];
	}
	if (n < 3) {
		fprintf(stderr, "usage: kpt-pool-eval [--base-runs N] MACHINE_DIR... (3 or more)\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		m[i].pool = load(m[i].dir, "pool.kpt");
		m[i].pool2 = load(m[i].dir, "pool.kpt");
		m[i].plant = load(m[i].dir, "plant.kpt");
		m[i].aa_a = load(m[i].dir, "aa/a.kpt");
		m[i].aa_b = load(m[i].dir, "aa/b.kpt");
		if (!m[i].pool && access(m[i].dir, R_OK) == 0 && (m[i].pool = load(m[i].dir, "a1.kpt"))) {
			m[i].pool2 = load(m[i].dir, "a2.kpt");
			m[i].split = 1;
		}
		if (!m[i].pool && m[i].aa_a) { /* an ab machine: its A side is its session */
			m[i].pool = m[i].aa_a;
			m[i].pool2 = load(m[i].dir, "aa/a.kpt");
			m[i].aa_a = load(m[i].dir, "aa/a.kpt");
		}
		if (!m[i].pool || !m[i].pool2) {
			fprintf(stderr, "kpt-pool-eval: '%s' holds no pool.kpt or aa/a.kpt\n", m[i].dir);
			return 2;
		}
	}
	for (int h = 0; h < n; h++) {
		const struct kpt_diff_side *others[MAXM];
		struct kpt_diff_side *base = NULL;
		struct kpt_diag d = { 0 };
		int k = 0;
		static const uint32_t r04[] = { 0, 1, 2, 3, 4 }, r57[] = { 5, 6, 7 }, r59[] = { 5, 6, 7, 8, 9 };

		for (int i = 0; i < n; i++)
			if (i != h && !same_host(m[i].dir, m[h].dir))
				others[k++] = m[i].pool;
		if (kpt_diff_side_combine(others, (size_t)k, (uint32_t)base_runs, "others", &base, &d) < 0) {
			fprintf(stderr, "kpt-pool-eval: %s\n", d.msg);
			return 2;
		}
		fprintf(stderr, "held out %s (%d sessions in the baseline)\n", m[h].dir, k);
		if (m[h].split) {
			/* a1 and a2: two recordings of 5 runs, minutes apart */
			static const uint32_t r02[] = { 0, 1, 2 };

			gate(base, m[h].pool, r04, 5, &t5, 1, m[h].dir);
			gate(base, m[h].pool2, r04, 5, &t5, 0, m[h].dir);
			gate(base, m[h].pool2, r02, 3, &t3, 1, m[h].dir);
		} else {
			gate(base, m[h].pool, r04, 5, &t5, 1, m[h].dir);
			gate(base, m[h].pool, r59, 5, &t5, 0, m[h].dir);
			gate(base, m[h].pool, r57, 3, &t3, 1, m[h].dir);
		}
		if (m[h].plant) {
			struct kpt_diff_opts o = { 0 };
			struct kpt_diff *df = NULL;
			int other = 0;

			eval_opts(&o);
			if (kpt_diff_compare(base, m[h].plant, &o, &df, &d) == 0) {
				real_n++;
				for (size_t i = 0; i < df->nrows; i++) {
					const struct kpt_diff_row *r = &df->rows[i];
					int which = strncmp(r->workload, "memory.copy.128MiB", 19) == 0 ? 0 :
						    strncmp(r->workload, "memory.triad.f32.64M", 21) == 0 ? 1 : -1;

					if (which >= 0)
						real_hit[which] += r->verdict == KPT_V_SLOW;
					else
						other += r->verdict == KPT_V_SLOW;
				}
				for (size_t i = 0; i < df->nshifts; i++)
					other += df->shifts[i].verdict == KPT_V_SLOW;
				real_other += other;
				real_gates_other += other > 0;
			}
			kpt_diff_destroy(df);
		}
		kpt_diff_side_destroy(base);
		/* one-session baselines (the prior stands for the between part):
		 * each of the two next machines alone against h */
		for (int j = 1; j <= 2 && n > 2; j++) {
			const struct kpt_diff_side *one[1] = { m[(h + j) % n].pool };
			struct kpt_diff_side *b1 = NULL;

			if (kpt_diff_side_combine(one, 1, (uint32_t)base_runs, "one", &b1, &d) == 0)
				gate(b1, m[h].pool, r04, 5, &t1, 0, m[h].dir);
			kpt_diff_side_destroy(b1);
		}
		/* the same machine and boot, one session each side: runs 0-4 of
		 * the held-out recording against its runs 5-9 (unpaired) */
		if (1) {
			static const uint32_t r04b[] = { 0, 1, 2, 3, 4 };

			gate_from(m[h].pool, r04b, 5, m[h].pool2, m[h].split ? r04b : r59, 5, &same, 1, m[h].dir);
		}
		/* kptprof ab's own recordings: 10 pairs, A/A, and 2% plants on B */
		if (m[h].aa_a && m[h].aa_b) {
			struct kpt_diff_opts o = { 0 };
			struct kpt_diff *df = NULL;

			eval_opts(&o);
			o.paired = 1;
			o.threshold_pct = g_ab_threshold;
			if (kpt_diff_compare(m[h].aa_a, m[h].aa_b, &o, &df, &d) == 0) {
				ab10.gates++;
				ab10.flagged += flags(df) > 0;
				if (flags(df))
					fprintf(stderr, "  ab10 A/A %s: %u SLOW %u FAST\n", m[h].dir, df->counts[KPT_V_SLOW],
						df->counts[KPT_V_FAST]);
				for (size_t i = 0; i < df->nrows; i++) {
					const struct kpt_diff_row *r = &df->rows[i];

					if (isnan(r->p))
						continue;
					ab10.keys[bucket(r->base_ns)]++;
					ab10.excl[bucket(r->base_ns)] += r->ci_low_pct > 0 || r->ci_high_pct < 0;
				}
				power(m[h].aa_a, m[h].aa_b, &o, df, 1.02, 50e3, ab10.pw_n[1], ab10.pw_hit[1]);
			}
			kpt_diff_destroy(df);
		}
		/* same-machine A/B: pairs of consecutive runs */
		{
			static const uint32_t a1[] = { 0, 2, 4, 6, 8 }, b1[] = { 1, 3, 5, 7, 9 };
			static const uint32_t a2[] = { 1, 3, 5, 7 }, b2[] = { 2, 4, 6, 8 };
			const uint32_t *as[2] = { a1, a2 }, *bs[2] = { b1, b2 };
			uint32_t ns[2] = { 5, 4 };

			for (int p = 0; p < 2; p++) {
				struct kpt_diff_opts o = { 0 };
				struct kpt_diff *df = NULL;

				eval_opts(&o);
				o.paired = 1;
				o.threshold_pct = g_ab_threshold;
				o.base_runs = as[p];
				o.n_base_runs = ns[p];
				o.new_runs = bs[p];
				o.n_new_runs = ns[p];
				if (kpt_diff_compare(m[h].pool, m[h].pool2, &o, &df, &d) < 0) {
					fprintf(stderr, "kpt-pool-eval: %s\n", d.msg);
					continue;
				}
				ab.gates++;
				ab.flagged += flags(df) > 0;
				if (flags(df))
					fprintf(stderr, "  ab A/A %s: %u SLOW %u FAST\n", m[h].dir, df->counts[KPT_V_SLOW],
						df->counts[KPT_V_FAST]);
				for (size_t i = 0; i < df->nrows; i++) {
					const struct kpt_diff_row *r = &df->rows[i];

					if (isnan(r->p))
						continue;
					ab.keys[bucket(r->base_ns)]++;
					ab.excl[bucket(r->base_ns)] += r->ci_low_pct > 0 || r->ci_high_pct < 0;
				}
				if (p == 0)
					power(m[h].pool, m[h].pool2, &o, df, 1.02, 50e3, ab.pw_n[1], ab.pw_hit[1]);
				kpt_diff_destroy(df);
			}
		}
	}
	printf("## Leave one machine out: %d machines, baseline = the other %d (first %d runs each)\n\n", n, n - 1, base_runs);
	printf("| gates | candidate runs | flagged (any SLOW/FAST key or shift) |\n|---|---|---|\n");
	printf("| A/A | 5 | %d of %d |\n", t5.flagged, t5.gates);
	printf("| A/A | 3 | %d of %d |\n", t3.flagged, t3.gates);
	printf("| A/B paired (ab) | 5 / 4 pairs | %d of %d |\n", ab.flagged, ab.gates);
	printf("| A/A, one-session baseline (prior) | 5 | %d of %d |\n", t1.flagged, t1.gates);
	printf("| kptprof ab A/A recordings | 10 pairs | %d of %d |\n", ab10.flagged, ab10.gates);
	printf("| same machine and boot, runs 0-4 vs 5-9 | 5 | %d of %d |\n\n", same.flagged, same.gates);
	printf("AMBG keys in A/A gates: M=5 %.1f%% of %ld (%.1f%% for machine noise), M=3 %.1f%% of %ld, "
	       "one-session base %.1f%% of %ld, same machine %.1f%% of %ld\n\n",
	       pctof(t5.ambg, t5.tested), t5.tested, pctof(t5.ambg_machine, t5.tested), pctof(t3.ambg, t3.tested),
	       t3.tested, pctof(t1.ambg, t1.tested), t1.tested, pctof(same.ambg, same.tested), same.tested);
	printf("Same machine and boot: +5%% >= 50 us %.1f%% of %ld, +2%% >= 200 us %.1f%% of %ld; "
	       "keys with run-to-run noise <= 0.5%%: +5%% %.1f%% of %ld, +2%% %.1f%% of %ld\n",
	       pctof(same.pw_hit[0][2] + same.pw_hit[0][3], same.pw_n[0][2] + same.pw_n[0][3]),
	       same.pw_n[0][2] + same.pw_n[0][3], pctof(same.pw_hit[1][3], same.pw_n[1][3]), same.pw_n[1][3],
	       pctof(same.q_hit[0], same.q_n[0]), same.q_n[0], pctof(same.q_hit[1], same.q_n[1]), same.q_n[1]);
	printf("Other machines, M=5, keys with run-to-run noise <= 0.5%%: +5%% >= 50 us %.1f%% of %ld, +2%% >= 200 us %.1f%% of %ld\n\n",
	       pctof(t5.q_hit[0], t5.q_n[0]), t5.q_n[0], pctof(t5.q_hit[1], t5.q_n[1]), t5.q_n[1]);
	printf("Calibration: unchanged keys whose 95%% interval excludes 0\n\n| duration | M=5 | M=3 | ab |\n|---|---|---|---|\n");
	for (int b = 0; b < NB; b++)
		printf("| %s | %.1f%% of %ld | %.1f%% of %ld | %.1f%% of %ld |\n", bucket_name[b],
		       pctof(t5.excl[b], t5.keys[b]), t5.keys[b], pctof(t3.excl[b], t3.keys[b]), t3.keys[b],
		       pctof(ab.excl[b], ab.keys[b]), ab.keys[b]);
	printf("\nPower (synthetic plants on held-out recordings: one key at a time)\n\n| plant | duration | M=5 | M=3 | ab (5 pairs) |\n|---|---|---|---|---|\n");
	printf("| +5%% | >= 50 us | %.1f%% of %ld | %.1f%% of %ld | |\n",
	       pctof(t5.pw_hit[0][2] + t5.pw_hit[0][3], t5.pw_n[0][2] + t5.pw_n[0][3]), t5.pw_n[0][2] + t5.pw_n[0][3],
	       pctof(t3.pw_hit[0][2] + t3.pw_hit[0][3], t3.pw_n[0][2] + t3.pw_n[0][3]), t3.pw_n[0][2] + t3.pw_n[0][3]);
	for (int b = 2; b < NB; b++)
		printf("| +5%% | %s | %.1f%% of %ld | %.1f%% of %ld | |\n", bucket_name[b],
		       pctof(t5.pw_hit[0][b], t5.pw_n[0][b]), t5.pw_n[0][b], pctof(t3.pw_hit[0][b], t3.pw_n[0][b]),
		       t3.pw_n[0][b]);
	printf("| +2%% | >= 200 us | %.1f%% of %ld | %.1f%% of %ld | |\n", pctof(t5.pw_hit[1][3], t5.pw_n[1][3]),
	       t5.pw_n[1][3], pctof(t3.pw_hit[1][3], t3.pw_n[1][3]), t3.pw_n[1][3]);
	for (int b = 2; b < NB; b++)
		printf("| +2%% (ab) | %s | | | %.1f%% of %ld |\n", bucket_name[b], pctof(ab.pw_hit[1][b], ab.pw_n[1][b]),
		       ab.pw_n[1][b]);
	for (int b = 2; b < NB; b++)
		printf("| +2%% (ab, 10 pairs) | %s | | | %.1f%% of %ld |\n", bucket_name[b], pctof(ab10.pw_hit[1][b], ab10.pw_n[1][b]),
		       ab10.pw_n[1][b]);
	printf("\nReal plants (plant.kpt, 5 runs, against the other machines): memory.copy.128MiB +5%% SLOW in %ld of %ld, "
	       "memory.triad.f32.64M +2%% SLOW in %ld of %ld; other SLOW keys or shifts: %ld in %ld gates\n",
	       real_hit[0], real_n, real_hit[1], real_n, real_other, real_gates_other);
	for (int i = 0; i < n; i++) {
		kpt_diff_side_destroy(m[i].pool);
		kpt_diff_side_destroy(m[i].pool2);
		kpt_diff_side_destroy(m[i].plant);
		kpt_diff_side_destroy(m[i].aa_a);
		kpt_diff_side_destroy(m[i].aa_b);
	}
	return 0;
}
