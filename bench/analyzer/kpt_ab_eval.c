/* kpt_ab_eval.c - the same-runner gate (`kptprof gate --against`, `kptprof
 * ab`: the paired rule) on real interleaved sessions, not resampled ones.
 *
 *   kpt-ab-eval [--per-key] [--pairs P] [--pct X] [--min-us U] DIR...
 *
 * Each DIR holds a.kpt and b.kpt of one long `kptprof ab --runs M -o DIR`
 * of the same build on both sides (A/A), recorded on one freshly started
 * machine (bench/analyzer/fresh/fresh_call.sh, AB_LONG=M). The M pairs are
 * cut into floor(M/P) disjoint chunks of P consecutive pairs (P = 10, ab's
 * and gate --against's default), each a gate as `gate --against` runs it:
 *   - A/A: the chunk's pairs as they are; a gate flags when any key (or
 *     family shift) is SLOW or FAST;
 *   - power: every key of the chunk with a base centre >= U us (default 50)
 *     multiplied by 1 + X/100 (default 2%) on the b side, one key at a time:
 *     SLOW or not (a slowdown of exactly known size on real paired noise).
 * Prints one line per machine and the totals; misses name the key; with
 * --per-key, a Markdown table per workload (the NVTX path's first part):
 * keys, +X% found, the median half-width of the 95% interval.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_diff.h"
#include "kpt_eval_common.h"

#define MAXW 128

struct wl {
	char name[96];
	long n, hit;
	double hw[4096];
	int nhw;
};

static struct wl wls[MAXW];
static int nwl;

static struct wl *wl_of(const char *path)
{
	size_t len = strcspn(path, "/");
	int i;

	for (i = 0; i < nwl; i++)
		if (strlen(wls[i].name) == len && strncmp(wls[i].name, path, len) == 0)
			return &wls[i];
	if (nwl == MAXW || len >= sizeof wls[0].name)
		return NULL;
	memcpy(wls[nwl].name, path, len);
	wls[nwl].name[len] = 0;
	return &wls[nwl++];
}

static int dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static struct kpt_diff_side *side_of(const char *dir, const char *name)
{
	char path[4096];
	struct kpt_file *f = NULL;
	struct kpt_diff_side *s = NULL;
	struct kpt_diag d = { 0 };

	snprintf(path, sizeof path, "%s/%s", dir, name);
	if (kpt_file_open(path, &f, &d) < 0 || kpt_diff_side_load(f, NULL, &s, &d) < 0) {
		fprintf(stderr, "kpt-ab-eval: %s: %s\n", path, d.msg);
		s = NULL;
	}
	kpt_file_close(f);
	return s;
}




int main(int argc, char **argv)
{
	uint32_t pairs = 10;
	double pct = 2, min_us = 50;
	long gates = 0, aa_flag = 0, pw_n = 0, pw_hit = 0, keys = 0, ambg = 0;
	int i = 1, per_key = 0;

	for (; i < argc && strcmp(argv[i], "--per-key") == 0; i++)
		per_key = 1;
	for (; i + 1 < argc && strncmp(argv[i], "--", 2) == 0; i += 2) {
		if (strcmp(argv[i], "--pairs") == 0)
			pairs = (uint32_t)atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--pct") == 0)
			pct = atof(argv[i + 1]);
		else if (strcmp(argv[i], "--min-us") == 0)
			min_us = atof(argv[i + 1]);
		else
			break;
	}
	if (i >= argc || pairs < 2 || !(pct > 0)) {
		fprintf(stderr, "usage: kpt-ab-eval [--per-key] [--pairs P] [--pct X] [--min-us U] DIR...\n");
		return 2;
	}
	for (; i < argc; i++) {
		struct kpt_diff_side *a = side_of(argv[i], "a.kpt"), *b = side_of(argv[i], "b.kpt");
		const uint32_t *ra, *rb;
		uint32_t na = 0, nb = 0;
		long g = 0, fl = 0, pn = 0, ph = 0;

		if (!a || !b) {
			kpt_diff_side_destroy(a);
			kpt_diff_side_destroy(b);
			return 2;
		}
		kpt_diff_side_runs(a, &ra, &na);
		kpt_diff_side_runs(b, &rb, &nb);
		if (nb < na)
			na = nb;
		for (uint32_t c = 0; c + pairs <= na; c += pairs) {
			struct kpt_diff_opts o = { 0 };
			struct kpt_diff *df0 = NULL;
			struct kpt_diag d = { 0 };

			o.paired = 1;
			o.threshold_pct = 1; /* ab's and gate --against's default */
			if (getenv("KPT_EVAL_LONG_THRESHOLD")) /* another long-kernel threshold, to compare */
				o.long_threshold_pct = atof(getenv("KPT_EVAL_LONG_THRESHOLD"));
			o.base_runs = ra + c;
			o.n_base_runs = pairs;
			o.new_runs = rb + c;
			o.n_new_runs = pairs;
			if (kpt_diff_compare(a, b, &o, &df0, &d) < 0) {
				fprintf(stderr, "kpt-ab-eval: %s: %s\n", argv[i], d.msg);
				return 2;
			}
			g++;
			if (flags(df0)) {
				fl++;
				fprintf(stderr, "  A/A %s pairs %u-%u: %u SLOW %u FAST\n", argv[i], c, c + pairs - 1,
					df0->counts[KPT_V_SLOW], df0->counts[KPT_V_FAST]);
			}
			keys += df0->nrows;
			ambg += df0->counts[KPT_V_AMBG];
			for (size_t k = 0; k < df0->nrows; k++) {
				const struct kpt_diff_row *r = &df0->rows[k];
				struct kpt_diff *df = NULL;
				const struct kpt_diff_row *q;

				if (isnan(r->p) || !(r->base_ns >= min_us * 1e3))
					continue;
				scale(b, r, 1 + pct / 100);
				if (kpt_diff_compare(a, b, &o, &df, &d) == 0 && (q = find_row(df, r))) {
					struct wl *w = wl_of(r->path);

					pn++;
					ph += q->verdict == KPT_V_SLOW;
					if (w) {
						w->n++;
						w->hit += q->verdict == KPT_V_SLOW;
						if (w->nhw < 4096)
							w->hw[w->nhw++] = (r->ci_high_pct - r->ci_low_pct) / 2;
					}
					if (q->verdict != KPT_V_SLOW && !per_key)
						fprintf(stderr, "  miss +%.0f%% %.50s %.40s %.1f us: %+.2f%% [%+.2f, %+.2f] %s\n", pct,
							q->name, q->path, q->base_ns / 1e3, q->change_pct, q->ci_low_pct,
							q->ci_high_pct, kpt_verdict_name(q->verdict));
				}
				kpt_diff_destroy(df);
				scale(b, r, 1 / (1 + pct / 100));
			}
			kpt_diff_destroy(df0);
		}
		printf("%s: %u pairs, %ld gates of %u pairs: A/A flagged %ld; +%.0f%% on keys >= %.0f us: %ld of %ld SLOW\n",
		       argv[i], na, g, pairs, fl, pct, min_us, ph, pn);
		gates += g;
		aa_flag += fl;
		pw_n += pn;
		pw_hit += ph;
		kpt_diff_side_destroy(a);
		kpt_diff_side_destroy(b);
	}
	printf("total: A/A %ld of %ld gates flagged; +%.0f%% on keys >= %.0f us SLOW in %ld of %ld (%.1f%%); "
	       "A/A keys AMBG %ld of %ld (%.1f%%)\n",
	       aa_flag, gates, pct, min_us, pw_hit, pw_n, pw_n ? 100.0 * pw_hit / pw_n : 0, ambg, keys,
	       keys ? 100.0 * ambg / keys : 0);
	if (per_key) {
		printf("\n| workload (keys >= %.0f us) | plants | +%.0f%% SLOW | A/A 95%% half-width, median |\n|---|---|---|---|\n",
		       min_us, pct);
		for (int w = 0; w < nwl; w++) {
			qsort(wls[w].hw, (size_t)wls[w].nhw, sizeof(double), dcmp);
			printf("| %s | %ld | %ld (%.0f%%) | %.2f%% |\n", wls[w].name, wls[w].n, wls[w].hit,
			       100.0 * wls[w].hit / wls[w].n, wls[w].nhw ? wls[w].hw[wls[w].nhw / 2] : NAN);
		}
	}
	return 0;
}
