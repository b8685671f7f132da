/* kpt_heldout_eval.c - the decision rule on held-out hosts, per duration
 * bucket and GPU model (docs/decision-rule.md, "Held-out hosts per duration
 * bucket"; bench/analyzer/heldout_eval.sh runs it on the committed baselines).
 *
 *   kpt-heldout-eval [--data FILE] [--keys] [--against BASE_DIR] SESSIONS_DIR...
 *
 * Each SESSIONS_DIR is one GPU model's folder of sessions (a baseline
 * folder, baselines/<slug>/<suite>/): every *.kpt in it, in name order, is
 * one session (5 runs or more for the M=5 columns) from one freshly
 * started host. Each session
 * h is held out in turn; the baseline is every other session of the folder
 * whose boot id is not h's (a host's GPUs share a boot: the host leaves
 * with it), all of their runs, and h is gated against it as `kptprof gate
 * --from` does (default rule options, the machine model decides from the
 * sessions):
 *   - A/A: h's first 5 runs (M=5) and first 3 runs (M=3) unchanged; per
 *     duration bucket of the key's base centre, the keys tested, those
 *     SLOW or FAST (false alarms), those AMBG, and the gates with a SLOW
 *     or FAST key in the bucket; a gate is flagged when any key or family
 *     shift is SLOW or FAST;
 *   - power: each key tested in that A/A gate in turn, its samples in h
 *     multiplied by 1.05, then by 1.02 (kpt_diff_side_scale: a slowdown of
 *     exactly known size on top of real cross-machine noise): SLOW or not.
 * Writes one Markdown block to stdout (the rule's thresholds, then a table
 * per GPU model); --data FILE writes the same numbers for gnuplot, one
 * block (index) per GPU model, its first line the column headers (the GPU
 * name and M or plant: the plot's legend). Deterministic: the same
 * sessions give the same bytes. A session with fewer runs than M (a
 * program recorded with 3 runs) is left out of that M's columns, with a
 * line on stderr. --keys: every planted key's verdict on stderr, with the
 * machine part of its noise (between_pct) and its run-to-run part: which
 * keys the rule hears, and why not the others. --against BASE_DIR: the
 * sessions of each SESSIONS_DIR are not each other's baseline; each is
 * gated against BASE_DIR's sessions (a fixed baseline, e.g. the committed
 * folder, less any session of the candidate's host): hosts that no
 * baseline has seen, out of sample. A SESSIONS_DIR needs 3 sessions (1
 * with --against), BASE_DIR 2, and each candidate 2 of other hosts in its
 * baseline; else one line on stderr and exit 2. Cost: keys x 2 factors x 2 M comparisons per held-out session (about
 * 3,000 in all on 16 sessions of ~80 keys, a few seconds).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_diff.h"
#include "kpt_eval_common.h"

#define NB 4
#define NM 2 /* candidate runs: 5, 3 */
#define NF 2 /* plants: x1.05, x1.02 */

static const double bucket_lo[NB] = { 0, 10e3, 50e3, 200e3 };
static const char *const bucket_name[NB] = { "< 10 us", "10-50 us", "50-200 us", ">= 200 us" };
static const uint32_t cand_runs[NM] = { 5, 3 };
static int g_keys; /* --keys */
static struct session *g_base; /* --against: the fixed baseline's sessions */
static size_t g_nbase;
static const double factor[NF] = { 1.05, 1.02 };

struct session {
	char *path;
	struct kpt_diff_side *side;
	const char *boot; /* owned by side, "" unknown */
};

/* One GPU model's tallies over its held-out gates. */
struct tally {
	long gates[NM], flagged[NM];          /* any SLOW/FAST key or shift */
	long keys[NM][NB], alarm[NM][NB], ambg[NM][NB], gate_alarm[NM][NB];
	long pw_n[NF][NM][NB], pw_slow[NF][NM][NB];
	double thr[3], alpha;                 /* short, mid, long threshold; alpha */
};

static int bucket(double ns)
{
	int b = 0;

	while (b + 1 < NB && ns >= bucket_lo[b + 1])
		b++;
	return b;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The *.kpt files of dir, sorted, each loaded; 0 or -1 (said on stderr).
 * *out (*n entries) goes to sessions_free() either way. */
static int load_dir(const char *dir, struct session **out, size_t *n)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t nn = 0, cap = 0;
	struct session *s;

	*out = NULL;
	*n = 0;
	if (!dp) {
		fprintf(stderr, "kpt-heldout-eval: cannot open folder '%s'\n", dir);
		return -1;
	}
	while ((e = readdir(dp))) {
		size_t len = strlen(e->d_name);

		if (len < 5 || strcmp(e->d_name + len - 4, ".kpt") != 0)
			continue;
		if (nn == cap) {
			char **p = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *names);

			if (!p)
				goto nomem;
			names = p;
		}
		if (!(names[nn] = malloc(strlen(dir) + len + 2)))
			goto nomem;
		sprintf(names[nn++], "%s/%s", dir, e->d_name);
	}
	closedir(dp);
	dp = NULL;
	if (nn)
		qsort(names, nn, sizeof *names, by_name);
	if (!(s = calloc(nn ? nn : 1, sizeof *s)))
		goto nomem;
	for (size_t i = 0; i < nn; i++)
		s[i].path = names[i]; /* s owns them now (sessions_free) */
	free(names);
	*out = s;
	*n = nn;
	for (size_t i = 0; i < nn; i++) {
		struct kpt_file *f = NULL;
		struct kpt_diag d = { 0 };
		int iterated;
		double gbps, tflops;

		if (kpt_file_open(s[i].path, &f, &d) < 0 || kpt_diff_side_load(f, NULL, &s[i].side, &d) < 0) {
			fprintf(stderr, "kpt-heldout-eval: %s\n", d.msg);
			kpt_file_close(f);
			return -1;
		}
		kpt_file_close(f);
		kpt_diff_side_session_info(s[i].side, &iterated, &s[i].boot, &gbps, &tflops);
	}
	return 0;
nomem:
	if (dp)
		closedir(dp);
	while (nn)
		free(names[--nn]);
	free(names);
	fprintf(stderr, "kpt-heldout-eval: out of memory listing '%s'\n", dir);
	return -1;
}

static void sessions_free(struct session *s, size_t n)
{
	for (size_t i = 0; s && i < n; i++) {
		kpt_diff_side_destroy(s[i].side);
		free(s[i].path);
	}
	free(s);
}

static int same_host(const struct session *a, const struct session *b)
{
	return a->boot[0] && strcmp(a->boot, b->boot) == 0;
}

/* h's first m runs gated against base: the A/A counts, then each tested
 * key planted in turn at each factor. */
static int gate(const struct kpt_diff_side *base, struct session *h, int mi, struct tally *t)
{
	const uint32_t *runs;
	uint32_t nr;
	struct kpt_diff_opts o = { 0 };
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };
	int in_bucket[NB] = { 0 };

	kpt_diff_side_runs(h->side, &runs, &nr);
	if (nr < cand_runs[mi]) {
		fprintf(stderr, "  M=%u: left out, '%s' has %u runs\n", cand_runs[mi], h->path, nr);
		return 0;
	}
	o.new_runs = runs;
	o.n_new_runs = cand_runs[mi];
	if (kpt_diff_compare(base, h->side, &o, &df, &d) < 0) {
		fprintf(stderr, "kpt-heldout-eval: %s: %s\n", h->path, d.msg);
		return -1;
	}
	t->thr[0] = df->opts.short_threshold_pct;
	t->thr[1] = df->opts.threshold_pct;
	t->thr[2] = df->opts.long_threshold_pct;
	t->alpha = df->opts.alpha;
	t->gates[mi]++;
	t->flagged[mi] += flags(df) > 0;
	for (size_t i = 0; i < df->nrows; i++) {
		const struct kpt_diff_row *r = &df->rows[i];
		int b = bucket(r->base_ns), alarm = r->verdict == KPT_V_SLOW || r->verdict == KPT_V_FAST;

		if (isnan(r->p))
			continue;
		t->keys[mi][b]++;
		t->alarm[mi][b] += alarm;
		t->ambg[mi][b] += r->verdict == KPT_V_AMBG;
		in_bucket[b] |= alarm;
		if (alarm) /* the false alarms, for whoever reads the log */
			fprintf(stderr, "  A/A M=%u %s: %s %.60s %.40s %.1f us %+.2f%% [%+.2f, %+.2f]\n", cand_runs[mi],
				h->path, kpt_verdict_name(r->verdict), r->name, r->path, r->base_ns / 1e3,
				r->change_pct, r->ci_low_pct, r->ci_high_pct);
	}
	for (int b = 0; b < NB; b++)
		t->gate_alarm[mi][b] += in_bucket[b];
	for (int fi = 0; fi < NF; fi++) {
		for (size_t i = 0; i < df->nrows; i++) {
			const struct kpt_diff_row *r = &df->rows[i], *q;
			struct kpt_diff *dp = NULL;

			if (isnan(r->p))
				continue;
			scale(h->side, r, factor[fi]);
			if (kpt_diff_compare(base, h->side, &o, &dp, &d) == 0 && (q = find_row(dp, r))) {
				t->pw_n[fi][mi][bucket(r->base_ns)]++;
				t->pw_slow[fi][mi][bucket(r->base_ns)] += q->verdict == KPT_V_SLOW;
				if (g_keys)
					fprintf(stderr, "  key M=%u x%.2f %s %.1f us machine %.2f%% runs %.2f%%: %+.2f%% [%+.2f, %+.2f] %s  %.70s\n",
						cand_runs[mi], factor[fi], kpt_verdict_name(q->verdict), r->base_ns / 1e3,
						r->between_pct, r->within_pct, q->change_pct, q->ci_low_pct, q->ci_high_pct,
						q->machine_limited ? "(machine)" : "", r->name);
			}
			kpt_diff_destroy(dp);
			scale(h->side, r, 1 / factor[fi]);
		}
	}
	kpt_diff_destroy(df);
	return 0;
}

/* "12.5% (3/24)", "-" without keys */
static const char *cell(char *buf, size_t cap, long k, long n)
{
	if (n)
		snprintf(buf, cap, "%.1f%% (%ld/%ld)", 100.0 * k / n, k, n);
	else
		snprintf(buf, cap, "-");
	return buf;
}

static double pct(long k, long n)
{
	return n ? 100.0 * k / n : NAN;
}

static void print_model(const char *gpu, size_t ns, size_t hosts, const struct tally *t, FILE *dat)
{
	char c[10][40]; /* one buffer per cell of a row: printf's arguments are all made first */

	if (g_base)
		printf("**%s**: %zu sessions from %zu hosts, each gated against the %zu sessions of the fixed "
		       "baseline (less its own host's).\n\n",
		       gpu, ns, hosts, g_nbase);
	else
		printf("**%s**: %zu sessions from %zu hosts, each held out in turn against the other %zu.\n\n", gpu, ns,
		       hosts, ns - 1);
	printf("| duration | keys (M=5 gates) | A/A SLOW/FAST keys, M=5 | M=3 | A/A AMBG keys, M=5 | M=3 | "
	       "A/A gates with a SLOW/FAST key, M=5 | M=3 | +5%% SLOW, M=5 | M=3 | +2%% SLOW, M=5 | M=3 |\n");
	printf("| --- | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: | --: |\n");
	for (int b = 0; b < NB; b++)
		printf("| %s | %ld | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", bucket_name[b], t->keys[0][b],
		       cell(c[0], sizeof c[0], t->alarm[0][b], t->keys[0][b]),
		       cell(c[1], sizeof c[1], t->alarm[1][b], t->keys[1][b]),
		       cell(c[2], sizeof c[2], t->ambg[0][b], t->keys[0][b]),
		       cell(c[3], sizeof c[3], t->ambg[1][b], t->keys[1][b]),
		       cell(c[4], sizeof c[4], t->gate_alarm[0][b], t->gates[0]),
		       cell(c[5], sizeof c[5], t->gate_alarm[1][b], t->gates[1]),
		       cell(c[6], sizeof c[6], t->pw_slow[0][0][b], t->pw_n[0][0][b]),
		       cell(c[7], sizeof c[7], t->pw_slow[0][1][b], t->pw_n[0][1][b]),
		       cell(c[8], sizeof c[8], t->pw_slow[1][0][b], t->pw_n[1][0][b]),
		       cell(c[9], sizeof c[9], t->pw_slow[1][1][b], t->pw_n[1][1][b]));
	{
		long k[NM] = { 0 }, a[NM] = { 0 }, m[NM] = { 0 }, pn[NF][NM] = { { 0 } }, ps[NF][NM] = { { 0 } };

		for (int mi = 0; mi < NM; mi++)
			for (int b = 0; b < NB; b++) {
				k[mi] += t->keys[mi][b];
				a[mi] += t->alarm[mi][b];
				m[mi] += t->ambg[mi][b];
				for (int fi = 0; fi < NF; fi++) {
					pn[fi][mi] += t->pw_n[fi][mi][b];
					ps[fi][mi] += t->pw_slow[fi][mi][b];
				}
			}
		/* the gate's own verdict: any key or family shift */
		printf("| all | %ld | %s | %s | %s | %s | %ld of %ld (key or shift) | %ld of %ld | %s | %s | %s | %s |\n\n",
		       k[0], cell(c[0], sizeof c[0], a[0], k[0]), cell(c[1], sizeof c[1], a[1], k[1]),
		       cell(c[2], sizeof c[2], m[0], k[0]), cell(c[3], sizeof c[3], m[1], k[1]), t->flagged[0],
		       t->gates[0], t->flagged[1], t->gates[1], cell(c[4], sizeof c[4], ps[0][0], pn[0][0]),
		       cell(c[5], sizeof c[5], ps[0][1], pn[0][1]), cell(c[6], sizeof c[6], ps[1][0], pn[1][0]),
		       cell(c[7], sizeof c[7], ps[1][1], pn[1][1]));
	}
	if (!dat)
		return;
	/* the column headers are the plot's legend titles */
	fprintf(dat, "bucket label \"%s M=5\" \"%s M=3\" \"%s M=5\" \"%s M=3\" \"%s M=5\" \"%s M=3\" "
		     "\"%s +5%%\" \"%s +5%% M=3\" \"%s +2%%\" \"%s +2%% M=3\"\n",
		gpu, gpu, gpu, gpu, gpu, gpu, gpu, gpu, gpu, gpu);
	for (int b = 0; b < NB; b++)
		fprintf(dat, "%d \"%s\" %.2f %.2f %.2f %.2f %.2f %.2f %.2f %.2f %.2f %.2f\n", b, bucket_name[b],
			pct(t->alarm[0][b], t->keys[0][b]), pct(t->alarm[1][b], t->keys[1][b]),
			pct(t->ambg[0][b], t->keys[0][b]), pct(t->ambg[1][b], t->keys[1][b]),
			pct(t->gate_alarm[0][b], t->gates[0]), pct(t->gate_alarm[1][b], t->gates[1]),
			pct(t->pw_slow[0][0][b], t->pw_n[0][0][b]), pct(t->pw_slow[0][1][b], t->pw_n[0][1][b]),
			pct(t->pw_slow[1][0][b], t->pw_n[1][0][b]), pct(t->pw_slow[1][1][b], t->pw_n[1][1][b]));
	fprintf(dat, "\n\n");
}

/* One GPU model's folder: every session held out in turn. */
static int eval_dir(const char *dir, int first, FILE *dat)
{
	struct session *s = NULL;
	size_t n = 0, hosts = 0;
	struct tally t = { 0 };
	const struct kpt_diff_side **others;
	/* the baseline's sessions: --against's, else the folder's own */
	const struct session *pool;
	size_t np;
	int rc = 0;

	if ((rc = load_dir(dir, &s, &n)) < 0 || n < (g_base ? 1 : 3)) {
		if (rc == 0)
			fprintf(stderr, "kpt-heldout-eval: '%s' holds %zu session%s: %d or more needed\n", dir, n, n == 1 ? "" : "s",
				g_base ? 1 : 3);
		sessions_free(s, n);
		return -1;
	}
	pool = g_base ? g_base : s;
	np = g_base ? g_nbase : n;
	if (!(others = calloc(np, sizeof *others))) {
		sessions_free(s, n);
		return -1;
	}
	for (size_t h = 0; h < n && rc == 0; h++) {
		struct kpt_diff_side *base = NULL;
		struct kpt_diag d = { 0 };
		size_t k = 0, seen = 0;

		for (size_t i = 0; i < h; i++)
			seen |= same_host(&s[i], &s[h]);
		hosts += !seen;
		for (size_t i = 0; i < np; i++)
			if ((g_base || i != h) && !same_host(&pool[i], &s[h]))
				others[k++] = pool[i].side;
		if (k < 2) {
			fprintf(stderr, "kpt-heldout-eval: %s: %zu baseline session%s of other hosts: 2 or more needed\n",
				s[h].path, k, k == 1 ? "" : "s");
			rc = -1;
			break;
		}
		if (kpt_diff_side_combine(others, k, 0, "others", &base, &d) < 0) {
			fprintf(stderr, "kpt-heldout-eval: %s\n", d.msg);
			rc = -1;
			break;
		}
		fprintf(stderr, "held out %s (boot %s; %zu sessions in the baseline)\n", s[h].path,
			s[h].boot[0] ? s[h].boot : "unknown", k);
		for (int mi = 0; mi < NM && rc == 0; mi++)
			rc = gate(base, &s[h], mi, &t);
		kpt_diff_side_destroy(base);
	}
	if (rc == 0) {
		if (first)
			printf("Rule: threshold %g%% for keys under 10 us, %g%% from 10 us, %g%% from 200 us; "
			       "family-wise alpha %g (Holm); default options of `kptprof gate`.\n\n",
			       t.thr[0], t.thr[1], t.thr[2], t.alpha);
		print_model(kpt_diff_side_env(s[0].side)->gpu_name, n, hosts, &t, dat);
	}
	free(others);
	sessions_free(s, n);
	return rc;
}

int main(int argc, char **argv)
{
	const char *data = NULL, *against = NULL;
	FILE *dat = NULL;
	int first = 1, rc = 0, i = 1;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (strcmp(argv[i], "--data") == 0 && i + 1 < argc)
			data = argv[++i];
		else if (strcmp(argv[i], "--keys") == 0)
			g_keys = 1;
		else if (strcmp(argv[i], "--against") == 0 && i + 1 < argc)
			against = argv[++i];
		else
			break;
	}
	if (i >= argc || argv[i][0] == '-') {
		fprintf(stderr, "usage: kpt-heldout-eval [--data FILE] [--keys] [--against BASE_DIR] SESSIONS_DIR...\n");
		return 2;
	}
	if (against) {
		int lr = load_dir(against, &g_base, &g_nbase);

		if (lr == 0 && g_nbase < 2)
			fprintf(stderr, "kpt-heldout-eval: '%s' holds %zu session%s: 2 or more needed\n", against, g_nbase,
				g_nbase == 1 ? "" : "s");
		if (lr < 0 || g_nbase < 2) {
			sessions_free(g_base, g_nbase);
			return 2;
		}
	}
	if (data && !(dat = fopen(data, "w"))) {
		fprintf(stderr, "kpt-heldout-eval: cannot write '%s'\n", data);
		return 2;
	}
	if (dat)
		fprintf(dat, "# kpt-heldout-eval: per GPU model (one index each) and duration bucket, percent:\n"
			     "# bucket label alarm_m5 alarm_m3 ambg_m5 ambg_m3 gates_alarm_m5 gates_alarm_m3 "
			     "p105_m5 p105_m3 p102_m5 p102_m3\n");
	for (; i < argc && rc == 0; i++, first = 0)
		rc = eval_dir(argv[i], first, dat);
	if (dat && fclose(dat) != 0)
		rc = -1;
	sessions_free(g_base, g_nbase);
	return rc ? 2 : 0;
}
