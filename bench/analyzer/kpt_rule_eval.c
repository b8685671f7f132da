/* kpt_rule_eval.c - how often the decision rule (and a pooled Mann-Whitney U
 * test, what google benchmark's compare.py does) flags identical code, and
 * how often it catches a planted slowdown.
 *
 *   kpt-rule-eval --null POOL.kpt [--planted PCT:FILE]... [--target LABEL=MATCH]...
 *                 [--m 3,5] [--gates 20] [--seed S] [--markdown OUT] [--disjoint-planted]
 *                 [--keep-throttled] [--threshold PCT] [--within-only]
 *
 * POOL holds many independent runs (processes) of unchanged code. Each A/A
 * gate draws 2M distinct runs from it at random: M as base, the other M as
 * new, and counts the gate as a false alarm when any key is SLOW or FAST.
 * Each power gate takes M random runs of POOL as base and M random runs of a
 * planted FILE as new; a target (LABEL=MATCH, MATCH compared with a key's
 * workload, else found in its demangled or mangled name; WORKLOAD:FRAGMENT
 * for both) is detected when a matching key is SLOW (once per gate).
 * --disjoint-planted draws base and new run numbers from one range without
 * overlap (for kpt-synth files, whose run r has the same noise in every file).
 * --keep-throttled keeps samples the NVML filter would drop; --threshold sets
 * the rule's threshold for kernels of 10 us and more (default 2%).
 * --within-only leaves out the between-session part of the rule (a
 * negligible prior): gates drawn from one recording's runs, as here, have
 * no machine component to measure; kpt-pool-eval evaluates that part.
 * Loading is done once per file (kpt_diff_side_load); every gate is a
 * kpt_diff_compare() over run subsets.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_diff.h"

#define MAX_PLANTED 16
#define MAX_TARGETS 8
#define MAX_M 8

struct planted {
	double pct;
	const char *path;
	struct kpt_diff_side *side;
};

struct target {
	const char *label, *match;
};

struct eval {
	struct kpt_diff_side *null;
	struct planted planted[MAX_PLANTED];
	int nplanted;
	struct target targets[MAX_TARGETS];
	int ntargets;
	uint32_t m[MAX_M];
	int nm;
	int gates;
	int disjoint;               /* planted runs use other run numbers than base runs */
	uint64_t rng;
	FILE *md;
};

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Picks k distinct run numbers of side s into out (partial Fisher-Yates). */
static int pick_runs(struct eval *e, const struct kpt_diff_side *s, uint32_t k, uint32_t *out)
{
	const uint32_t *runs;
	uint32_t n, *tmp;

	kpt_diff_side_runs(s, &runs, &n);
	if (k > n)
		return -1;
	tmp = malloc(n * sizeof *tmp);
	if (!tmp)
		return -1;
	memcpy(tmp, runs, n * sizeof *tmp);
	for (uint32_t i = 0; i < k; i++) {
		uint32_t j = i + (uint32_t)(rng_next(&e->rng) % (n - i)), t = tmp[i];

		tmp[i] = tmp[j];
		tmp[j] = t;
		out[i] = tmp[i];
	}
	free(tmp);
	return 0;
}

/* MATCH is a workload name, a name fragment, or WORKLOAD:FRAGMENT (that
 * workload's keys whose demangled or mangled name contains FRAGMENT: a
 * workload also runs kernels that are not planted, e.g. its input fill). */
static int row_matches(const struct kpt_diff_row *r, const char *match)
{
	const char *colon = strchr(match, ':');

	if (colon) {
		size_t wl = (size_t)(colon - match);

		return strlen(r->workload) == wl && strncmp(r->workload, match, wl) == 0 &&
		       (strstr(r->name, colon + 1) != NULL || strstr(r->mangled, colon + 1) != NULL);
	}
	return strcmp(r->workload, match) == 0 || strstr(r->name, match) != NULL ||
	       strstr(r->mangled, match) != NULL;
}

static int load(const char *path, int keep_throttled, struct kpt_diff_side **s)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_diff_opts o = { 0 };
	int rc = kpt_file_open(path, &f, &d);

	o.keep_throttled = keep_throttled;
	if (rc == 0)
		rc = kpt_diff_side_load(f, &o, s, &d);
	kpt_file_close(f);
	if (rc < 0)
		fprintf(stderr, "kpt-rule-eval: %s\n", d.msg);
	return rc;
}

/* The methods compared: the rule (Student's pooled t, the default), the
 * rule with Welch's t, and the pooled U test. */
#define NMETH 3
static const char *const method_names[NMETH] = { "rule", "rule (Welch)", "pooled U" };

static double g_threshold_pct;
static int g_within_only; /* --within-only: no between-session part (one session's runs) */

static int gate(const struct kpt_diff_side *b, const struct kpt_diff_side *n,
		const uint32_t *br, const uint32_t *nr, uint32_t m, int meth,
		struct kpt_diff **out)
{
	struct kpt_diff_opts o = { 0 };
	struct kpt_diag d = { 0 };
	int rc;

	o.threshold_pct = g_threshold_pct;
	if (g_within_only) {
		o.between_prior_pct = 0.001;
		o.between_floor_ns = 1e-6;
	}
	o.method = meth == 2 ? KPT_DIFF_POOLED_U : KPT_DIFF_RULE;
	o.welch = meth == 1;
	o.base_runs = br;
	o.n_base_runs = m;
	o.new_runs = nr;
	o.n_new_runs = m;
	rc = kpt_diff_compare(b, n, &o, out, &d);
	if (rc < 0)
		fprintf(stderr, "kpt-rule-eval: %s\n", d.msg);
	return rc;
}

/* A/A: gates with any SLOW/FAST key, and flagged keys, per method. */
static int eval_aa(struct eval *e, uint32_t m)
{
	uint32_t runs[2 * 64];
	int flagged[NMETH] = { 0 };
	uint64_t keys_flagged[NMETH] = { 0 }, keys = 0;

	if (2 * m > 128)
		return -1;
	for (int g = 0; g < e->gates; g++) {
		if (pick_runs(e, e->null, 2 * m, runs) < 0) {
			fprintf(stderr, "kpt-rule-eval: the null pool has fewer than %u runs\n", 2 * m);
			return -1;
		}
		for (int meth = 0; meth < NMETH; meth++) {
			struct kpt_diff *df;
			uint32_t f;

			if (gate(e->null, e->null, runs, runs + m, m, meth, &df) < 0)
				return -1;
			f = df->counts[KPT_V_SLOW] + df->counts[KPT_V_FAST];
			flagged[meth] += f > 0;
			keys_flagged[meth] += f;
			if (meth == 0)
				keys += df->nrows;
			kpt_diff_destroy(df);
		}
	}
	for (int meth = 0; meth < NMETH; meth++) {
		printf("aa m=%u method=%s gates=%d flagged_gates=%d flagged_keys=%llu keys=%llu\n", m,
		       method_names[meth], e->gates, flagged[meth], (unsigned long long)keys_flagged[meth],
		       (unsigned long long)keys);
		if (e->md)
			fprintf(e->md, "| A/A (no change) | - | %u | %s | %d / %d gates flag anything | %.1f%% of keys flagged |\n",
				m, method_names[meth], flagged[meth], e->gates,
				keys ? 100.0 * keys_flagged[meth] / keys : 0);
	}
	return 0;
}

/* Power: per planted file and target, gates that call the target SLOW. */
static int eval_power(struct eval *e, const struct planted *p, uint32_t m)
{
	uint32_t br[64], nr[64];
	int det[NMETH][MAX_TARGETS] = { { 0 } }, other[NMETH] = { 0 };
	double ns[MAX_TARGETS] = { 0 };

	for (int g = 0; g < e->gates; g++) {
		if (e->disjoint) {
			uint32_t both[128];

			if (2 * m > 128 || pick_runs(e, p->side, 2 * m, both) < 0) {
				fprintf(stderr, "kpt-rule-eval: too few runs for m=%u in '%s'\n", m, p->path);
				return -1;
			}
			memcpy(br, both, m * sizeof *br);
			memcpy(nr, both + m, m * sizeof *nr);
		} else if (pick_runs(e, e->null, m, br) < 0 || pick_runs(e, p->side, m, nr) < 0) {
			fprintf(stderr, "kpt-rule-eval: too few runs for m=%u in '%s'\n", m, p->path);
			return -1;
		}
		for (int meth = 0; meth < NMETH; meth++) {
			struct kpt_diff *df;

			int seen[MAX_TARGETS] = { 0 }; /* a gate detects a target once */

			if (gate(e->null, p->side, br, nr, m, meth, &df) < 0)
				return -1;
			for (size_t i = 0; i < df->nrows; i++) {
				const struct kpt_diff_row *r = &df->rows[i];
				int hit = 0;

				for (int t = 0; t < e->ntargets; t++)
					if (row_matches(r, e->targets[t].match)) {
						hit = 1;
						if (r->verdict == KPT_V_SLOW && !seen[t]) {
							seen[t] = 1;
							det[meth][t]++;
						}
						if (meth == 0 && g == 0)
							ns[t] = r->base_ns;
					}
				if (!hit && (r->verdict == KPT_V_SLOW || r->verdict == KPT_V_FAST))
					other[meth]++;
			}
			kpt_diff_destroy(df);
		}
	}
	for (int meth = 0; meth < NMETH; meth++)
		for (int t = 0; t < e->ntargets; t++) {
			printf("power pct=%g target=%s base_ns=%.0f m=%u method=%s gates=%d detected=%d other_flags=%d\n",
			       p->pct, e->targets[t].label, ns[t], m, method_names[meth], e->gates,
			       det[meth][t], other[meth]);
			if (e->md)
				fprintf(e->md, "| +%g%% %s (%.1f us) | %g%% | %u | %s | %d / %d detected (%.0f%%) | %d other keys flagged |\n",
					p->pct, e->targets[t].label, ns[t] / 1e3, p->pct, m, method_names[meth],
					det[meth][t], e->gates, 100.0 * det[meth][t] / e->gates, other[meth]);
		}
	return 0;
}

static int parse_m(struct eval *e, const char *v)
{
	char *end;

	e->nm = 0;
	while (*v && e->nm < MAX_M) {
		unsigned long x = strtoul(v, &end, 10);

		if (end == v || x < 2 || x > 64)
			return -1;
		e->m[e->nm++] = (uint32_t)x;
		v = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -1;
	}
	return e->nm ? 0 : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: kpt-rule-eval --null POOL.kpt [--planted PCT:FILE]... [--target LABEL=MATCH]...\n"
			"                     [--m 3,5] [--gates 20] [--seed S] [--markdown OUT] [--disjoint-planted] [--keep-throttled] [--threshold PCT]\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct eval e = { 0 };
	const char *null_path = NULL, *md_path = NULL;
	int rc = 0, keep_throttled = 0;

	e.gates = 20;
	e.rng = 12345;
	e.m[0] = 3;
	e.m[1] = 5;
	e.nm = 2;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(a, "--disjoint-planted") == 0) {
			e.disjoint = 1;
			continue;
		}
		if (strcmp(a, "--keep-throttled") == 0) {
			keep_throttled = 1;
			continue;
		}
		if (strcmp(a, "--within-only") == 0) {
			g_within_only = 1;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (strcmp(a, "--null") == 0) {
			null_path = v;
		} else if (strcmp(a, "--planted") == 0 && e.nplanted < MAX_PLANTED && strchr(v, ':')) {
			e.planted[e.nplanted].pct = strtod(v, NULL);
			e.planted[e.nplanted++].path = strchr(v, ':') + 1;
		} else if (strcmp(a, "--target") == 0 && e.ntargets < MAX_TARGETS && strchr(v, '=')) {
			char *lab = strdup(v);

			if (!lab)
				return 2;
			*strchr(lab, '=') = '\0';
			e.targets[e.ntargets].label = lab;
			e.targets[e.ntargets++].match = strchr(v, '=') + 1;
		} else if (strcmp(a, "--m") == 0) {
			if (parse_m(&e, v) < 0)
				return usage();
		} else if (strcmp(a, "--gates") == 0) {
			e.gates = atoi(v);
			if (e.gates < 1)
				return usage();
		} else if (strcmp(a, "--seed") == 0) {
			e.rng = strtoull(v, NULL, 10);
		} else if (strcmp(a, "--threshold") == 0) {
			g_threshold_pct = strtod(v, NULL);
			if (!(g_threshold_pct > 0))
				return usage();
		} else if (strcmp(a, "--markdown") == 0) {
			md_path = v;
		} else {
			return usage();
		}
	}
	if (!null_path)
		return usage();
	if (md_path && !(e.md = fopen(md_path, "w"))) {
		perror(md_path);
		return 2;
	}
	if (load(null_path, keep_throttled, &e.null) < 0)
		return 2;
	for (int i = 0; i < e.nplanted; i++)
		if (load(e.planted[i].path, keep_throttled, &e.planted[i].side) < 0)
			return 2;
	if (e.md)
		fprintf(e.md, "| Case | Planted | M | Method | Gates | Other |\n|---|--:|--:|---|---|---|\n");
	for (int k = 0; k < e.nm && rc == 0; k++) {
		rc = eval_aa(&e, e.m[k]);
		for (int i = 0; i < e.nplanted && rc == 0; i++)
			rc = eval_power(&e, &e.planted[i], e.m[k]);
	}
	if (e.md)
		fclose(e.md);
	kpt_diff_side_destroy(e.null);
	for (int i = 0; i < e.nplanted; i++)
		kpt_diff_side_destroy(e.planted[i].side);
	for (int t = 0; t < e.ntargets; t++)
		free((char *)e.targets[t].label);
	return rc < 0 ? 2 : 0;
}
