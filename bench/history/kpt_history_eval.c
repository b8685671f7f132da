/* kpt_history_eval.c - the evidence for `kptprof history detect`
 * (bench/RESULTS.md, "History"). Not a timed test.
 *
 * Series are built from real recorded noise: each pool recording is one
 * freshly started machine (m runs of the default suite); a commit's value
 * is the geometric mean (the store's centre) of 3-5 run medians drawn
 * without replacement from one machine's recording, the machine drawn at
 * random per commit, so between-machine offsets are part of the noise.
 * Steps of the sizes given are planted at known commits (alternately up
 * and down, SPACING +- SPACING/4 commits apart) and kpt_cp_detect (the
 * detector of `history detect`) is run on every series:
 *   recall: planted steps with a change point of the same sign within
 *           WINDOW commits;
 *   false: change points with no planted step within WINDOW commits, per
 *          1000 commits per key (also measured on series with no steps).
 *
 *   kpt-history-eval [--commits N] [--reps R] [--seed S] [--steps 1,2,5]
 *                    [--spacing C] [--min-step PCT] [--alpha A] [--min-seg N]
 *                    POOL.kpt...
 *   kpt-history-eval --fill URL --commits N --keys K POOL.kpt...
 *       writes N sessions of K keys (resampled the same way; keys beyond
 *       the pool's are copies under other ordinals) into a store, for
 *       timing `kptprof history detect` on a long history.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kpt_history.h"

#define WINDOW 5
#define MAX_POOLS 64
#define MAX_STEPS 8

struct pkey {                       /* one key across the pools */
	const struct kpt_history_point *p[MAX_POOLS];
	double us;                  /* median centre, us */
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	uint64_t x = rng_state; /* xorshift64* */

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	rng_state = x;
	return x * 0x2545f4914f6cdd1dull;
}

static int same_key(const struct kpt_history_key *a, const struct kpt_history_key *b)
{
	return strcmp(a->name, b->name) == 0 && strcmp(a->path, b->path) == 0 && a->ordinal == b->ordinal &&
	       memcmp(a->grid, b->grid, sizeof a->grid) == 0 && memcmp(a->block, b->block, sizeof a->block) == 0;
}

/* One commit's value of key k: geomean of 3-5 run medians of one machine. */
static double draw(const struct pkey *k, int npool)
{
	const struct kpt_history_point *p = k->p[rng() % (uint64_t)npool];
	uint32_t want = 3 + (uint32_t)(rng() % 3), idx[64], n = p->nruns < 64 ? p->nruns : 64;
	double s = 0;

	want = want < n ? want : n;
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	for (uint32_t i = 0; i < want; i++) { /* partial Fisher-Yates */
		uint32_t j = i + (uint32_t)(rng() % (n - i)), t = idx[i];

		idx[i] = idx[j];
		idx[j] = t;
		s += log(p->run_ns[idx[i]]);
	}
	return exp(s / want);
}

enum cls { C_SHORT, C_MID, C_LONG, C_COUNT }; /* < 10 us, 10-50 us, >= 50 us */
static const char *const cls_names[C_COUNT] = { "< 10 us", "10-50 us", ">= 50 us" };

struct tally {
	uint64_t planted[MAX_STEPS], found[MAX_STEPS];
	uint64_t false_cp, commits, keys;
	uint64_t null_false, null_commits;
};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int fill(const char *url, struct pkey *keys, size_t nkeys, int npool, uint32_t commits, uint32_t want)
{
	struct kpt_history *h;
	struct kpt_diag d = { 0 };
	struct kpt_history_open_opts o = { .create = 1 };
	struct kpt_history_run run;
	char commit[32];
	double *vals = malloc(want * sizeof *vals);
	struct timespec t0, t1;

	if (!vals || kpt_history_open(url, &o, &h, &d) < 0) {
		fprintf(stderr, "kpt-history-eval: %s\n", d.msg);
		return 2;
	}
	memset(&run, 0, sizeof run);
	run.points = calloc(want, sizeof *run.points);
	run.npoints = want;
	run.session = (struct kpt_history_session){ .commit = commit, .branch = "main", .suite = "default",
		.gpu_name = "NVIDIA H100 80GB HBM3", .gpu_slug = "nvidia-h100-80gb-hbm3", .gpu_uuid = "",
		.driver = "", .cuda = "", .host = "bench", .source = "kpt-history-eval", .time = "",
		.runs = 1, .sm_mhz = NAN, .temp_c = NAN, .throttled_frac = NAN };
	for (uint32_t k = 0; k < want; k++) {
		run.points[k].key = keys[k % nkeys].p[0]->key;
		run.points[k].key.ordinal += 1000 * (k / (uint32_t)nkeys);
		run.points[k].nruns = 1;
		run.points[k].run_ns = &vals[k];
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t c = 0; c < commits; c++) {
		snprintf(commit, sizeof commit, "%08x", c);
		for (uint32_t k = 0; k < want; k++)
			run.points[k].centre_ns = vals[k] = draw(&keys[k % nkeys], npool);
		if (kpt_history_add(h, &run, NULL, &d) < 0) {
			fprintf(stderr, "kpt-history-eval: %s\n", d.msg);
			return 2;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("filled %s: %u sessions x %u keys in %.1f s\n", url, commits, want,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	kpt_history_close(h);
	free(run.points);
	free(vals);
	return 0;
}

int main(int argc, char **argv)
{
	uint32_t commits = 1000, reps = 20, spacing = 100, nsteps = 3, keys_want = 300;
	int per_key = 0;
	double steps[MAX_STEPS] = { 1, 2, 5 };
	struct kpt_cp_opts co = { 0 };
	const char *paths[MAX_POOLS], *fill_url = NULL;
	struct kpt_history_run pools[MAX_POOLS];
	int npool = 0;
	struct pkey *keys;
	size_t nkeys = 0;
	struct tally t[C_COUNT];
	double *x;
	uint32_t *at;

	for (int i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : "";

		if (!strcmp(argv[i], "--commits")) commits = (uint32_t)atoi(v), i++;
		else if (!strcmp(argv[i], "--reps")) reps = (uint32_t)atoi(v), i++;
		else if (!strcmp(argv[i], "--seed")) /* xorshift must never hold 0 */
			rng_state = (0x9e3779b97f4a7c15ull + strtoull(v, NULL, 10) * 0xbf58476d1ce4e5b9ull) | 1, i++;
		else if (!strcmp(argv[i], "--spacing")) spacing = (uint32_t)atoi(v), i++;
		else if (!strcmp(argv[i], "--min-step")) co.min_step_pct = atof(v), i++;
		else if (!strcmp(argv[i], "--alpha")) co.alpha = atof(v), i++;
		else if (!strcmp(argv[i], "--min-seg")) co.min_seg = (uint32_t)atoi(v), i++;
		else if (!strcmp(argv[i], "--fill")) fill_url = v, i++;
		else if (!strcmp(argv[i], "--per-key")) per_key = 1;
		else if (!strcmp(argv[i], "--keys")) keys_want = (uint32_t)atoi(v), i++;
		else if (!strcmp(argv[i], "--steps")) {
			char *s = (char *)v, *end;

			for (nsteps = 0; nsteps < MAX_STEPS && *s; nsteps++) {
				steps[nsteps] = strtod(s, &end);
				s = *end == ',' ? end + 1 : end;
				if (end == s && !*end)
					break;
			}
			i++;
		} else if (npool < MAX_POOLS) {
			paths[npool++] = argv[i];
		}
	}
	if (npool < 2 || commits < 2 * spacing) {
		fprintf(stderr, "usage: kpt-history-eval [options] POOL.kpt POOL.kpt... (two or more; commits >= 2 x spacing)\n");
		return 2;
	}
	for (int p = 0; p < npool; p++) {
		struct kpt_diag d = { 0 };

		if (kpt_history_run_load(paths[p], &pools[p], &d) < 0) {
			fprintf(stderr, "kpt-history-eval: %s\n", d.msg);
			return 2;
		}
	}
	/* keys in every pool, with 3 runs or more in each */
	keys = calloc(pools[0].npoints, sizeof *keys);
	for (size_t k = 0; k < pools[0].npoints; k++) {
		struct pkey pk = { 0 };
		int ok = 1;
		double c[MAX_POOLS];

		for (int p = 0; p < npool && ok; p++) {
			ok = 0;
			for (size_t j = 0; j < pools[p].npoints && !ok; j++)
				if (same_key(&pools[0].points[k].key, &pools[p].points[j].key) &&
				    pools[p].points[j].nruns >= 3) {
					pk.p[p] = &pools[p].points[j];
					c[p] = pk.p[p]->centre_ns;
					ok = 1;
				}
		}
		if (!ok)
			continue;
		qsort(c, (size_t)npool, sizeof *c, cmp_dbl);
		pk.us = c[npool / 2] / 1e3;
		keys[nkeys++] = pk;
	}
	if (fill_url)
		return fill(fill_url, keys, nkeys, npool, commits, keys_want);

	memset(t, 0, sizeof t);
	x = malloc(commits * sizeof *x);
	at = malloc((commits / (spacing - spacing / 4) + 2) * sizeof *at);
	for (size_t k = 0; k < nkeys; k++) {
		enum cls c = keys[k].us < 10 ? C_SHORT : keys[k].us < 50 ? C_MID : C_LONG;

		uint64_t false_before = t[c].false_cp + t[c].null_false;

		t[c].keys++;
		for (uint32_t r = 0; r < reps; r++) {
			for (int null = 0; null < 2; null++) {
				uint32_t nat = 0, si = 0, next = spacing / 2 + (uint32_t)(rng() % spacing);
				int sign = 1, *size_of = calloc(commits, sizeof(int));
				double level = 1;
				struct kpt_cp *cp = NULL;
				uint32_t ncp = 0;
				struct kpt_diag d = { 0 };

				for (uint32_t i = 0; i < commits; i++) {
					if (!null && i == next && i + spacing / 2 < commits) {
						double s = steps[si % nsteps];

						level *= sign > 0 ? 1 + s / 100 : 1 / (1 + s / 100);
						size_of[nat] = (int)(si % nsteps) * sign;
						at[nat++] = i;
						sign = -sign;
						si++;
						next = i + spacing - spacing / 4 + (uint32_t)(rng() % (spacing / 2 + 1));
					}
					x[i] = draw(&keys[k], npool) * level;
				}
				if (kpt_cp_detect(x, commits, &co, &cp, &ncp, &d) < 0) {
					fprintf(stderr, "kpt-history-eval: %s\n", d.msg);
					return 2;
				}
				for (uint32_t j = 0; j < nat; j++) {
					int sz = abs(size_of[j]), sg = (j % 2) ? -1 : 1, hit = 0;

					for (uint32_t q = 0; q < ncp && !hit; q++)
						hit = abs((int)cp[q].at - (int)at[j]) <= WINDOW && (cp[q].step_pct > 0) == (sg > 0);
					t[c].planted[sz]++;
					t[c].found[sz] += (uint64_t)hit;
				}
				for (uint32_t q = 0; q < ncp; q++) {
					int near = 0;

					for (uint32_t j = 0; j < nat && !near; j++)
						near = abs((int)cp[q].at - (int)at[j]) <= WINDOW;
					if (null)
						t[c].null_false += !near;
					else
						t[c].false_cp += !near;
				}
				if (null)
					t[c].null_commits += commits;
				else
					t[c].commits += commits;
				free(cp);
				free(size_of);
			}
		}
		if (per_key && t[c].false_cp + t[c].null_false > false_before)
			printf("key %zu (%.1f us): %" PRIu64 " false change points: %s %s #%u\n", k, keys[k].us,
			       t[c].false_cp + t[c].null_false - false_before, keys[k].p[0]->key.name,
			       keys[k].p[0]->key.path, keys[k].p[0]->key.ordinal);
	}
	printf("pools %d, keys %zu, commits %u per series, %u series per key (with steps) + %u (without), "
	       "steps every %u+-%u commits, window +-%d\n", npool, nkeys, commits, reps, reps, spacing,
	       spacing / 4, WINDOW);
	printf("| kernels | keys |");
	for (uint32_t s = 0; s < nsteps; s++)
		printf(" recall %g%% |", steps[s]);
	printf(" false CP / 1000 commits / key (with steps) | (no steps) |\n| --- | --- |");
	for (uint32_t s = 0; s < nsteps; s++)
		printf(" --- |");
	printf(" --- | --- |\n");
	for (int c = 0; c < C_COUNT; c++) {
		printf("| %s | %" PRIu64 " |", cls_names[c], t[c].keys);
		for (uint32_t s = 0; s < nsteps; s++)
			printf(" %.1f%% (%" PRIu64 "/%" PRIu64 ") |", t[c].planted[s] ? 100.0 * t[c].found[s] / t[c].planted[s] : NAN,
			       t[c].found[s], t[c].planted[s]);
		printf(" %.3f | %.3f |\n", t[c].commits ? 1000.0 * t[c].false_cp / t[c].commits : NAN,
		       t[c].null_commits ? 1000.0 * t[c].null_false / t[c].null_commits : NAN);
	}
	free(x);
	free(at);
	free(keys);
	for (int p = 0; p < npool; p++)
		kpt_history_run_release(&pools[p]);
	return 0;
}
