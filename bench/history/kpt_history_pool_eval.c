/* kpt_history_pool_eval.c - `history detect` on histories of real sessions
 * in random commit order (docs/history.md, "Change points on a pool of
 * runners"; run by bench/history/pool_eval.sh).
 *
 *   kpt-history-pool-eval [-v] [--orders N] [--seed S] [--last UUID]... SESSION.kpt... [-- PLANT.kpt...]
 *
 * SESSIONs are recordings of unchanged code, one per machine and boot
 * (byte-identical files are taken once); PLANTs are recordings of the same
 * suite with known extra work (memory.copy.128MiB +5%, memory.triad.f32.64M
 * +2%) on machines of the same model. Every file is added to a temporary
 * SQLite store; the histories are orders of its sessions
 * (kpt_history_set_pick), searched by kpt_history_pool_detect with the
 * defaults of `history detect`, and by the per-key detector alone (the
 * model off: no groups, no families, no machine test) for comparison.
 *
 * (a) no change: N orders of all SESSIONs: how many would exit 1 (a head
 *     regression), and the change points reported. --last GPU-xxxx (a
 *     UUID prefix, repeatable): those machines' sessions come last, the
 *     worst case for odd machines.
 * (b) steps: N histories of SESSIONs from machines that recorded no PLANT
 *     chosen, in random order, then half of the PLANT machines (random, in
 *     random order): the share where each planted workload has a slower
 *     change point (its key, its launches or its total) exactly at the first
 *     PLANT, the machines carrying it, and the other change points. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_history.h"
#include "kpt_history_pool.h"

static uint64_t rng = 88172645463325252ull;

static uint32_t draw(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

static void shuffle(uint32_t *v, uint32_t n)
{
	for (uint32_t i = n; i > 1; i--) {
		uint32_t j = draw(i), t = v[i - 1];

		v[i - 1] = v[j];
		v[j] = t;
	}
}

static int die(const struct kpt_diag *d)
{
	fprintf(stderr, "kpt-history-pool-eval: %s\n", d->msg);
	return 2;
}

/* File contents equal (byte for byte)? */
static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int same = fa && fb, ca, cb;

	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		same = ca == cb;
		if (ca == EOF || cb == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

static const char *const planted[] = { "memory.copy.128MiB", "memory.triad.f32.64M" };
#define NPLANT 2

/* Is session s on one of the machines --last names (GPU UUID prefixes)? */
static int is_last(const struct kpt_history_session *s, const char *const *last, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (strncmp(s->gpu_uuid, last[i], strlen(last[i])) == 0)
			return 1;
	return 0;
}

/* Runs the detector on set in order ord[0..m); model 2: as detect, 1: no
 * machine test, 0: per key only (the detector before the model). */
static const char *const model_names[] = { "per key (the old detect):", "no machine test:", "machine model:" };
static int detect(const struct kpt_history_set *all, const uint32_t *ord, uint32_t m, int model,
		  struct kpt_history_set **set, struct kpt_pool_result **res, struct kpt_diag *d)
{
	struct kpt_pool_opts o;

	kpt_pool_opts_default(&o);
	if (model < 2) /* 1: launches summed, family effects, no machine test */
		o.min_machines = 0;
	if (model < 1) {
		o.aggregate_min = UINT32_MAX;
		o.family_min = UINT32_MAX;
	}
	if (kpt_history_set_pick(all, ord, m, set, d) < 0)
		return -1;
	return kpt_history_pool_detect(*set, &o, res, d) < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	uint32_t orders = 20, nsess = 0, nplant = 0;
	const char **sess = calloc((size_t)argc + 1, sizeof *sess), **plant = calloc((size_t)argc + 1, sizeof *plant);
	char dir[] = "/tmp/kpt-pool-eval-XXXXXX", db[64];
	struct kpt_history *h = NULL;
	struct kpt_history_open_opts oo = { .create = 1 };
	struct kpt_history_set *all = NULL;
	struct kpt_diag d = { 0 };
	uint32_t *kind, *ord, *machine;
	const char *last[16];
	uint32_t nlast = 0;
	int after_dash = 0, verbose = 0;
	uint64_t rng0;

	if (!sess || !plant)
		return 2;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--orders") == 0 && i + 1 < argc)
			orders = (uint32_t)strtoul(argv[++i], NULL, 10);
		else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
			rng += strtoull(argv[++i], NULL, 10) * 0x9e3779b97f4a7c15ull;
		else if (strcmp(argv[i], "--last") == 0 && i + 1 < argc)
			last[nlast < 16 ? nlast++ : 15] = argv[++i];
		else if (strcmp(argv[i], "-v") == 0)
			verbose = 1;
		else if (strcmp(argv[i], "--") == 0)
			after_dash = 1;
		else if (after_dash)
			plant[nplant++] = argv[i];
		else
			sess[nsess++] = argv[i];
	}
	rng0 = rng;
	if (!nsess || !orders) {
		fprintf(stderr, "usage: kpt-history-pool-eval [-v] [--orders N] [--seed S] [--last UUID]... SESSION.kpt... [-- PLANT.kpt...]\n");
		return 2;
	}
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	snprintf(db, sizeof db, "%s/h.db", dir);
	if (kpt_history_open(db, &oo, &h, &d) < 0)
		return die(&d);
	kind = calloc((size_t)argc + 1, sizeof *kind);
	ord = calloc(2 * ((size_t)argc + 1), sizeof *ord);
	machine = calloc((size_t)argc + 1, sizeof *machine);
	if (!kind || !ord || !machine)
		return 2;
	/* store order: sessions, then plants; identical files once */
	{
		uint32_t dup = 0;

		for (uint32_t i = 0; i < nsess + nplant; i++) {
			const char *f = i < nsess ? sess[i] : plant[i - nsess];
			struct kpt_history_run run;
			char commit[32];
			int seen = 0;

			for (uint32_t j = 0; j < i && !seen && i < nsess; j++)
				seen = same_file(f, sess[j]);
			if (seen) {
				dup++;
				continue;
			}
			if (kpt_history_run_load(f, &run, &d) < 0)
				return die(&d);
			snprintf(commit, sizeof commit, "%s%u", i < nsess ? "s" : "p", i);
			run.session.commit = commit;
			run.session.branch = "main";
			if (kpt_history_add(h, &run, NULL, &d) < 0)
				return die(&d);
			kpt_history_run_release(&run);
		}
		if (kpt_history_query(h, &(struct kpt_history_filter){ .branch = "main" }, &all, &d) < 0)
			return die(&d);
		printf("%zu sessions stored (%u identical files taken once), %zu keys\n", all->nsessions, dup,
		       all->nseries);
	}
	nsess = nplant = 0;
	for (uint32_t s = 0; s < all->nsessions; s++) {
		kind[s] = all->sessions[s].commit[0] == 'p';
		nsess += !kind[s];
		nplant += kind[s];
		machine[s] = s;
		for (uint32_t t = 0; t < s; t++)
			if (strcmp(all->sessions[t].gpu_uuid, all->sessions[s].gpu_uuid) == 0) {
				machine[s] = machine[t];
				break;
			}
	}

	/* (a) no change */
	for (int model = 2; model >= 0; model--) {
		uint32_t exit1 = 0, with_cp = 0, cps = 0, unbacked = 0;

		rng = rng0; /* every model on the same orders */

		for (uint32_t o = 0; o < orders; o++) {
			struct kpt_history_set *set;
			struct kpt_pool_result *res;
			uint32_t m = 0;

			uint32_t nodd = 0;

			for (uint32_t s = 0; s < all->nsessions; s++)
				if (!kind[s] && !is_last(&all->sessions[s], last, nlast))
					ord[m++] = s;
			shuffle(ord, m);
			/* --last: those machines' sessions at the head, shuffled */
			for (uint32_t s = 0; s < all->nsessions; s++)
				if (!kind[s] && is_last(&all->sessions[s], last, nlast))
					ord[m + nodd++] = s;
			shuffle(ord + m, nodd);
			m += nodd;
			if (detect(all, ord, m, model, &set, &res, &d) < 0)
				return die(&d);
			for (size_t c = 0; c < res->ncps && verbose && model == 2; c++) {
				const struct kpt_pool_series *x = &res->series[res->cps[c].series];

				printf("    order %u: %+.2f%% at %u/%u, %u/%u machines%s: %s %.80s %s\n", o,
				       res->cps[c].cp.step_pct, x->sess[res->cps[c].cp.at], m, res->cps[c].machines_carry,
				       res->cps[c].machines_after, res->cps[c].regression ? " REGRESSION" : "",
				       x->kind == KPT_POOL_FAMILY ? "family" : x->kind == KPT_POOL_TOTAL ? "workload" : "key",
				       x->name, x->se ? x->se->key.workload : "");
			}
			exit1 += res->regressions > 0;
			with_cp += res->ncps > 0;
			cps += (uint32_t)res->ncps;
			unbacked += res->unbacked;
			kpt_pool_result_destroy(res);
			kpt_history_set_destroy(set);
		}
		printf("(a%s) %-24s %u orders of %u sessions: exit 1 in %u, change points in %u (%u in all; %u more not carried by 3 machines)\n",
		       nlast ? ", --last machines at the head" : "", model_names[model],
		       orders, nsess, exit1, with_cp, cps, unbacked);
	}

	/* (b) steps on half of the plant machines */
	if (nplant >= 2) {
		for (int model = 2; model >= 0; model -= 2) {
			rng = rng0;
			uint32_t found[NPLANT] = { 0 }, near[NPLANT] = { 0 }, carry_min[NPLANT], carry_max[NPLANT] = { 0 };
			uint32_t other = 0, runs = 0, before_min = UINT32_MAX, before_max = 0;

			for (int p = 0; p < NPLANT; p++)
				carry_min[p] = UINT32_MAX;
			for (uint32_t o = 0; o < orders; o++) {
				uint32_t *pl = ord + all->nsessions, np = 0, m = 0, half, at;
				struct kpt_history_set *set;
				struct kpt_pool_result *res;

				for (uint32_t s = 0; s < all->nsessions; s++)
					if (kind[s])
						pl[np++] = s;
				shuffle(pl, np);
				half = np / 2 > 3 ? np / 2 : 3;
				/* before: unchanged sessions of machines not among the chosen plants */
				for (uint32_t s = 0; s < all->nsessions; s++) {
					int used = kind[s];

					for (uint32_t q = 0; q < half && !used; q++)
						used = machine[pl[q]] == machine[s];
					if (!used)
						ord[m++] = s;
				}
				shuffle(ord, m);
				at = m;
				memmove(ord + m, pl, half * sizeof *ord);
				m += half;
				before_min = at < before_min ? at : before_min;
				before_max = at > before_max ? at : before_max;
				if (detect(all, ord, m, model, &set, &res, &d) < 0)
					return die(&d);
				runs++;
				for (int p = 0; p < NPLANT; p++) {
					int hit = 0, close = 0;
					uint32_t carry = 0;

					for (size_t c = 0; c < res->ncps; c++) {
						const struct kpt_pool_series *x = &res->series[res->cps[c].series];
						const char *w = x->kind == KPT_POOL_TOTAL ? x->name :
							x->se ? x->se->key.workload : "";
						uint32_t cat = x->sess[res->cps[c].cp.at];

						if (strcmp(w, planted[p]) != 0 || res->cps[c].cp.step_pct <= 0)
							continue;
						if (cat == at) {
							hit = 1;
							carry = res->cps[c].machines_carry > carry ? res->cps[c].machines_carry : carry;
						}
						close |= cat + 1 >= at && cat <= at + 1;
					}
					found[p] += (uint32_t)hit;
					near[p] += (uint32_t)close;
					if (hit) {
						carry_min[p] = carry < carry_min[p] ? carry : carry_min[p];
						carry_max[p] = carry > carry_max[p] ? carry : carry_max[p];
					}
				}
				for (size_t c = 0; c < res->ncps; c++) {
					const struct kpt_pool_series *x = &res->series[res->cps[c].series];
					const char *w = x->kind == KPT_POOL_TOTAL ? x->name : x->se ? x->se->key.workload : "";

					other += strcmp(w, planted[0]) != 0 && strcmp(w, planted[1]) != 0;
					if (verbose && model == 2 && strcmp(w, planted[0]) != 0 && strcmp(w, planted[1]) != 0)
						printf("    history %u: %+.2f%% at %u/%u, %u/%u machines%s: %s %.60s %s\n", o,
						       res->cps[c].cp.step_pct, x->sess[res->cps[c].cp.at], m,
						       res->cps[c].machines_carry, res->cps[c].machines_after,
						       res->cps[c].regression ? " REGRESSION" : "",
						       x->kind == KPT_POOL_FAMILY ? "family" : x->kind == KPT_POOL_TOTAL ? "workload" : "key",
						       x->name, w);
				}
				kpt_pool_result_destroy(res);
				kpt_history_set_destroy(set);
			}
			printf("(b) %-24s %u histories, %u-%u unchanged sessions then %u plant machines:\n",
			       model_names[model], runs, before_min, before_max,
			       nplant / 2 > 3 ? nplant / 2 : 3);
			for (int p = 0; p < NPLANT; p++)
				printf("    %-22s found at the first plant in %u/%u (%.0f%%), within 1 commit %u/%u; machines carrying it %u-%u\n",
				       planted[p], found[p], runs, 100.0 * found[p] / runs, near[p], runs,
				       found[p] ? carry_min[p] : 0, carry_max[p]);
			printf("    other change points (not on the planted workloads): %u\n", other);
		}
	}
	kpt_history_set_destroy(all);
	kpt_history_close(h);
	for (int i = 0; i < 3; i++) { /* the store and SQLite's WAL files */
		char f[80];

		snprintf(f, sizeof f, "%s%s", db, (const char *const[]){ "", "-wal", "-shm" }[i]);
		unlink(f);
	}
	rmdir(dir);
	free(sess);
	free(plant);
	free(kind);
	free(ord);
	free(machine);
	return 0;
}
