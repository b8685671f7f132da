/* kpt_diff.c - matching two sides and the decision rule (docs/decision-rule.md). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kpt_counters.h"
#include "kpt_diff_private.h"
#include "kpt_stats.h"

#define NO_ID UINT32_MAX
#define MORE_RUNS_CAP 1000

static const char *const verdict_names[KPT_V_COUNT] = {
	[KPT_V_SAME] = "SAME",
	[KPT_V_SLOW] = "SLOW",
	[KPT_V_FAST] = "FAST",
	[KPT_V_AMBG] = "AMBG",
	[KPT_V_NEW] = "NEW",
	[KPT_V_GONE] = "GONE",
};

/* Row order in reports: what needs attention first. */
static const int verdict_rank[KPT_V_COUNT] = {
	[KPT_V_SLOW] = 0, [KPT_V_AMBG] = 1, [KPT_V_FAST] = 2,
	[KPT_V_NEW] = 3, [KPT_V_GONE] = 4, [KPT_V_SAME] = 5,
};

const char *kpt_verdict_name(int v)
{
	return v >= 0 && v < KPT_V_COUNT ? verdict_names[v] : "?";
}

/* The diff and the arena that holds everything it points to. */
struct diff_owner {
	struct kpt_diff df;
	struct kpt_arena arena;
};

/* Keys of both sides that one row compares (several when loose). */
struct unit {
	uint32_t *b, nb, capb;
	uint32_t *n, nn, capn;
	int loose;
	uint32_t agg;               /* > 0: an aggregated group of this many units */
};

/* One side's statistics for one unit over the selected runs. */
struct side_stats {
	uint32_t runs;              /* runs with samples */
	double *run_ns;             /* [runs] medians */
	uint32_t *run_ids;
	uint32_t *run_sess;         /* [runs] session index */
	double mean_log, sd_log;    /* sd NAN with < 2 runs */
	double cyc_mean_log;        /* NAN when a run lacks clocks */
	uint64_t samples, dropped;
	double pooled_median;       /* POOLED_U only */
};

struct ctx {
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
	enum kpt_diff_machine machine; /* OTHER, SAME_GPU or SAME_BOOT (machine_of) */
};

static void fill_defaults(struct kpt_diff_opts *o)
{
	if (!(o->threshold_pct > 0))
		o->threshold_pct = 2;
	if (!(o->short_threshold_pct > 0))
		o->short_threshold_pct = 5;
	if (!(o->short_ns > 0))
		o->short_ns = 10000;
	if (!(o->long_threshold_pct > 0))
		o->long_threshold_pct = 1;
	if (!(o->long_ns > 0))
		o->long_ns = 200000;
	if (!(o->alpha > 0 && o->alpha < 1))
		o->alpha = 0.05;
	if (!(o->noise_floor_pct > 0))
		o->noise_floor_pct = 0.1;
	if (!(o->noise_floor_ns > 0))
		o->noise_floor_ns = 5;
	if (!(o->min_clock_frac > 0))
		o->min_clock_frac = 0.75;
	if (!o->throttle_ignore)
		o->throttle_ignore = KPT_DIFF_IGNORE_DEFAULT;
	if (!(o->between_floor_ns > 0))
		o->between_floor_ns = 30;
}

static const char *side_str(const struct kpt_diff_side *s, uint32_t id)
{
	const char *r = kpt_strtab_get(&s->strs, id, NULL);

	return r ? r : "";
}

static const char *adup(struct ctx *c, const char *s)
{
	return kpt_arena_strndup(c->a, s ? s : "", s ? strlen(s) : 0);
}

static const char *afmt(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *afmt(struct ctx *c, const char *fmt, ...)
{
	va_list ap;
	int n;
	char *s;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !(s = kpt_arena_alloc(c->a, (size_t)n + 1)))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

/* Run numbers -> slots of side s; all slots when runs is NULL. */
static int select_slots(struct ctx *c, const struct kpt_diff_side *s, const uint32_t *runs,
			uint32_t nruns, uint32_t **slots, uint32_t *n)
{
	uint32_t cnt = runs ? nruns : s->nruns;

	*slots = kpt_arena_alloc(c->a, (cnt ? cnt : 1) * sizeof **slots);
	if (!*slots)
		return kpt_diag_set(c->d, KPT_E_NOMEM, "out of memory");
	for (uint32_t i = 0; i < cnt; i++) {
		uint32_t slot = NO_ID;

		if (!runs) {
			slot = i;
		} else {
			for (uint32_t j = 0; j < s->nruns; j++)
				if (s->run_ids[j] == runs[i])
					slot = j;
			if (slot == NO_ID)
				return kpt_diag_set(c->d, KPT_E_NOTFOUND, "run %u is not in '%s'",
						    runs[i], s->env.path);
		}
		(*slots)[i] = slot;
	}
	*n = cnt;
	return 0;
}

static int unit_add(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t k)
{
	if (*n == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 2;
		uint32_t *t = realloc(*v, nc * sizeof *t);

		if (!t)
			return KPT_E_NOMEM;
		*v = t;
		*cap = nc;
	}
	(*v)[(*n)++] = k;
	return 0;
}

struct units {
	struct unit *u;
	uint32_t n, cap;
};

static int units_new(struct units *U, uint32_t *id)
{
	if (U->n == U->cap) {
		uint32_t nc = U->cap ? U->cap * 2 : 64;
		struct unit *t = realloc(U->u, nc * sizeof *t);

		if (!t)
			return KPT_E_NOMEM;
		U->u = t;
		U->cap = nc;
	}
	memset(&U->u[U->n], 0, sizeof U->u[U->n]);
	*id = U->n++;
	return 0;
}

static void units_release(struct units *U)
{
	for (uint32_t i = 0; i < U->n; i++) {
		free(U->u[i].b);
		free(U->u[i].n);
	}
	free(U->u);
}

/* Base-side string id of new-side string id, NO_ID when base lacks it. */
static uint32_t to_base(const struct kpt_diff_side *b, const struct kpt_diff_side *n, uint32_t nid)
{
	size_t len;
	const char *s = kpt_strtab_get(&n->strs, nid, &len);
	uint32_t id;

	return s && kpt_strtab_find(&b->strs, s, len, &id) ? id : NO_ID;
}

/* Pairs keys. Keys of the same name and NVTX path ("group") whose launch
 * config is on both sides match by config and ordinal. When a group has
 * configs only in BASE and configs only in NEW (the launch config changed),
 * those keys become one loose unit matched by name + path; a config only on
 * one side of an otherwise unchanged group is GONE or NEW. */
static int match_keys(struct ctx *c, struct units *U)
{
	const struct kpt_diff_side *b = c->b, *n = c->n;
	struct kpt_wmap gmap, cfg_b, cfg_n, full_n;
	uint32_t *ngroup = NULL, *bgroup = NULL, *gunit = NULL, *byid = NULL;
	unsigned char *nknown = NULL, *bknown = NULL, *nmatched = NULL, *bunm = NULL, *nunm = NULL;
	uint32_t key[9], g, id, u;
	int rc = KPT_E_NOMEM;

	kpt_wmap_init(&gmap, 2);
	kpt_wmap_init(&cfg_b, 7);
	kpt_wmap_init(&cfg_n, 7);
	kpt_wmap_init(&full_n, 9);
	ngroup = malloc((n->nkeys + 1) * sizeof *ngroup);
	bgroup = malloc((b->nkeys + 1) * sizeof *bgroup);
	byid = malloc((n->nkeys + 1) * sizeof *byid);
	nknown = calloc(n->nkeys + 1, 1);
	nmatched = calloc(n->nkeys + 1, 1);
	bknown = calloc(b->nkeys + 1, 1);
	if (!ngroup || !bgroup || !byid || !nknown || !nmatched || !bknown)
		goto out;
	/* BASE: groups and their configs. */
	for (uint32_t k = 0; k < b->nkeys; k++) {
		const struct kpt_side_key *K = &b->keys[k];

		key[0] = K->name;
		key[1] = K->path;
		if (kpt_wmap_put(&gmap, key, &bgroup[k], NULL) < 0)
			goto out;
		key[0] = bgroup[k];
		memcpy(key + 1, K->grid, 12);
		memcpy(key + 4, K->block, 12);
		if (kpt_wmap_put(&cfg_b, key, &id, NULL) < 0)
			goto out;
	}
	bunm = calloc(gmap.count + 1, 1);
	nunm = calloc(gmap.count + 1, 1);
	gunit = malloc((gmap.count + 1) * sizeof *gunit);
	if (!bunm || !nunm || !gunit)
		goto out;
	memset(gunit, 0xff, (gmap.count + 1) * sizeof *gunit);
	/* NEW: group (in BASE ids), config known to BASE?, full key index. */
	for (uint32_t k = 0; k < n->nkeys; k++) {
		const struct kpt_side_key *K = &n->keys[k];
		uint32_t nm = to_base(b, n, K->name), path = to_base(b, n, K->path);

		ngroup[k] = NO_ID;
		key[0] = nm;
		key[1] = path;
		if (nm == NO_ID || path == NO_ID || !kpt_wmap_get(&gmap, key, &g))
			continue;
		ngroup[k] = g;
		key[0] = g;
		memcpy(key + 1, K->grid, 12);
		memcpy(key + 4, K->block, 12);
		nknown[k] = (unsigned char)kpt_wmap_get(&cfg_b, key, &id);
		if (!nknown[k])
			nunm[g] = 1;
		if (kpt_wmap_put(&cfg_n, key, &id, NULL) < 0)
			goto out;
		key[0] = nm;
		memcpy(key + 1, K->grid, 12);
		memcpy(key + 4, K->block, 12);
		key[7] = path;
		key[8] = K->ordinal;
		if (kpt_wmap_put(&full_n, key, &id, NULL) < 0)
			goto out;
		byid[id] = k;
	}
	/* BASE configs NEW lacks. */
	for (uint32_t k = 0; k < b->nkeys; k++) {
		const struct kpt_side_key *K = &b->keys[k];

		key[0] = bgroup[k];
		memcpy(key + 1, K->grid, 12);
		memcpy(key + 4, K->block, 12);
		bknown[k] = (unsigned char)kpt_wmap_get(&cfg_n, key, &id);
		if (!bknown[k])
			bunm[bgroup[k]] = 1;
	}
	for (uint32_t k = 0; k < b->nkeys; k++) {
		const struct kpt_side_key *K = &b->keys[k];

		g = bgroup[k];
		if (!bknown[k] && bunm[g] && nunm[g]) {
			if (gunit[g] == NO_ID) {
				if (units_new(U, &gunit[g]) < 0)
					goto out;
				U->u[gunit[g]].loose = 1;
			}
			u = gunit[g];
			if (unit_add(&U->u[u].b, &U->u[u].nb, &U->u[u].capb, k) < 0)
				goto out;
			continue;
		}
		if (units_new(U, &u) < 0 || unit_add(&U->u[u].b, &U->u[u].nb, &U->u[u].capb, k) < 0)
			goto out;
		key[0] = K->name;
		memcpy(key + 1, K->grid, 12);
		memcpy(key + 4, K->block, 12);
		key[7] = K->path;
		key[8] = K->ordinal;
		if (bknown[k] && kpt_wmap_get(&full_n, key, &id)) {
			nmatched[byid[id]] = 1;
			if (unit_add(&U->u[u].n, &U->u[u].nn, &U->u[u].capn, byid[id]) < 0)
				goto out;
		}
	}
	for (uint32_t k = 0; k < n->nkeys; k++) {
		g = ngroup[k];
		if (nmatched[k])
			continue;
		if (g != NO_ID && !nknown[k] && bunm[g] && nunm[g]) {
			if (gunit[g] == NO_ID) {
				if (units_new(U, &gunit[g]) < 0)
					goto out;
				U->u[gunit[g]].loose = 1;
			}
			u = gunit[g];
		} else if (units_new(U, &u) < 0) {
			goto out;
		}
		if (unit_add(&U->u[u].n, &U->u[u].nn, &U->u[u].capn, k) < 0)
			goto out;
	}
	rc = 0;
out:
	kpt_wmap_release(&gmap);
	kpt_wmap_release(&cfg_b);
	kpt_wmap_release(&cfg_n);
	kpt_wmap_release(&full_n);
	free(ngroup);
	free(bgroup);
	free(byid);
	free(nknown);
	free(nmatched);
	free(bknown);
	free(bunm);
	free(nunm);
	free(gunit);
	return rc < 0 ? kpt_diag_set(c->d, rc, "out of memory matching kernels") : 0;
}

static int grow_buf(struct ctx *c, size_t n)
{
	if (n <= c->capbuf)
		return 0;
	free(c->buf);
	free(c->cbuf);
	c->capbuf = n * 2;
	c->buf = malloc(c->capbuf * sizeof *c->buf);
	c->cbuf = malloc(c->capbuf * sizeof *c->cbuf);
	return c->buf && c->cbuf ? 0 : KPT_E_NOMEM;
}

static int grow_pool(double **p, size_t *cap, size_t n)
{
	double *t;

	if (n <= *cap)
		return 0;
	t = realloc(*p, n * 2 * sizeof *t);
	if (!t)
		return KPT_E_NOMEM;
	*p = t;
	*cap = n * 2;
	return 0;
}

/* Per-run medians of the pooled samples of keys[0..nk) over the selected
 * slots; fills st (arrays in the diff's arena). With pool != NULL, also
 * gathers every sample into *pool (for the pooled U test). */
static int side_stats(struct ctx *c, const struct kpt_diff_side *s, const uint32_t *keys,
		      uint32_t nk, int agg, const uint32_t *slots, uint32_t nslots,
		      struct side_stats *st, double **pool, size_t *capp)
{
	double sum = 0, csum = 0;
	int have_cyc = 1;
	size_t npool = 0;

	memset(st, 0, sizeof *st);
	st->run_ns = kpt_arena_alloc(c->a, (nslots ? nslots : 1) * sizeof *st->run_ns);
	st->run_ids = kpt_arena_alloc(c->a, (nslots ? nslots : 1) * sizeof *st->run_ids);
	st->run_sess = kpt_arena_alloc(c->a, (nslots ? nslots : 1) * sizeof *st->run_sess);
	if (!st->run_ns || !st->run_ids || !st->run_sess)
		return KPT_E_NOMEM;
	for (uint32_t i = 0; i < nslots; i++) {
		uint32_t slot = slots[i];
		size_t cnt = 0, m = 0, empty = 0;
		int cyc;
		double med, cmed;

		for (uint32_t j = 0; j < nk; j++) {
			const struct kpt_sample_vec *v = &s->keys[keys[j]].runs[slot];

			cnt += v->n;
			empty += !v->n;
			st->dropped += v->dropped_throttle + v->dropped_clock;
		}
		if (!cnt || (agg && empty))
			continue; /* an aggregate needs every member in the run */
		if (agg && !pool) {
			/* The group's time per iteration: the sum of its keys'
			 * run medians (each taken while loading). */
			med = cmed = 0;
			for (uint32_t j = 0; j < nk; j++) {
				const struct kpt_sample_vec *v = &s->keys[keys[j]].runs[slot];

				med += v->med_ns;
				cmed += v->med_cyc;
			}
		} else if (nk == 1 && !pool) {
			/* One key: its medians were taken while loading. */
			const struct kpt_sample_vec *v = &s->keys[keys[0]].runs[slot];

			med = v->med_ns;
			cmed = v->med_cyc;
		} else {
			if (grow_buf(c, cnt) < 0)
				return KPT_E_NOMEM;
			if (pool && grow_pool(pool, capp, npool + cnt) < 0)
				return KPT_E_NOMEM;
			for (uint32_t j = 0; j < nk; j++) {
				const struct kpt_sample_vec *v = &s->keys[keys[j]].runs[slot];

				for (uint32_t q = 0; q < v->n; q++) {
					uint16_t f = v->mhz ? v->mhz[q] : 0;

					c->buf[m] = v->ns[q];
					c->cbuf[m] = f ? (double)v->ns[q] * f : NAN;
					m++;
				}
			}
			if (pool)
				memcpy(*pool + npool, c->buf, cnt * sizeof **pool);
			npool += cnt;
			cyc = 1;
			for (size_t q = 0; q < cnt && cyc; q++)
				cyc = !isnan(c->cbuf[q]);
			med = kpt_median_f64(c->buf, cnt);
			cmed = cyc ? kpt_median_f64(c->cbuf, cnt) : NAN;
		}
		if (!(med > 0))
			med = 0.5; /* a zero-length kernel: keep logs finite */
		st->run_ns[st->runs] = med;
		st->run_ids[st->runs] = s->run_ids[slot];
		st->run_sess[st->runs] = s->run_session ? s->run_session[slot] : 0;
		st->runs++;
		st->samples += cnt;
		sum += log(med);
		if (!isnan(cmed))
			csum += log(cmed > 0 ? cmed : 0.5);
		else
			have_cyc = 0;
	}
	if (!st->runs) {
		st->mean_log = st->sd_log = st->cyc_mean_log = NAN;
		return 0;
	}
	st->mean_log = sum / st->runs;
	st->cyc_mean_log = have_cyc ? csum / st->runs : NAN;
	st->sd_log = NAN;
	if (st->runs >= 2) {
		double ss = 0;

		for (uint32_t i = 0; i < st->runs; i++) {
			double e = log(st->run_ns[i]) - st->mean_log;

			ss += e * e;
		}
		st->sd_log = sqrt(ss / (st->runs - 1));
	}
	if (pool)
		st->pooled_median = npool ? kpt_median_f64(*pool, npool) : NAN;
	return 0;
}

static double pct(double logratio)
{
	return 100 * expm1(logratio);
}

/* The between-session SD assumed for one key when the base has one
 * session, by the key's duration: about the 90th percentile, over the
 * H100 and the H200, of the per-key between-session SDs measured on the
 * cross-machine pool (10 H100 and 5 H200 machines, 2026-11-24, keys as
 * compared: aggregated; bench/analyzer/pool-20261124, docs/decision-rule.md
 * "Sessions"). A prior, not a measurement: the report says so. */
static const struct {
	double below_ns, sd_pct;
} between_prior[] = {
	{ 10e3, 3.5 },      /* under 10 us: p90 3.3% (H100), 4.1% (H200) */
	{ 50e3, 1.1 },      /* 10-50 us: 1.13%, 0.66% */
	{ 200e3, 1.1 },     /* 50-200 us: 1.07%, 1.06% */
	{ INFINITY, 1.8 },  /* 200 us and longer: 1.89%, 1.59% */
};

double kpt_diff_between_prior_pct(double centre_ns)
{
	size_t i = 0;

	while (i + 1 < sizeof between_prior / sizeof between_prior[0] && !(centre_ns < between_prior[i].below_ns))
		i++;
	return between_prior[i].sd_pct;
}

/* Duration buckets for shrinking between-session estimates (the prior
 * table's rows). */
static uint32_t bucket_of(double centre_ns)
{
	uint32_t i = 0;

	while (i + 1 < sizeof between_prior / sizeof between_prior[0] && !(centre_ns < between_prior[i].below_ns))
		i++;
	return i;
}
#define NBUCKETS (sizeof between_prior / sizeof between_prior[0])
#define PRIOR_DF 10.0   /* df of the built-in prior when it stands alone (one session) */
#define PRIOR_SHRINK_DF 2.0 /* its weight as a shrinkage target, when a bucket has too few keys */
#define SHRINK_DF 3.0   /* weight of the duration bucket's median, likewise */
#define SHRINK_Q 0.9    /* quantile of a family's between variances taken as its keys' target */
#define SHIFT_PRIOR_PCT 0.5 /* between-session SD of a family's median change, one session */
#define SHIFT_MIN_KEYS 6

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
	double centre;              /* ns: exp of the base's mean */
	double *xs;                 /* [S] session means minus their mean */
};

static double floor_log(const struct ctx *c, double centre)
{
	double f = c->o.noise_floor_pct / 100;

	return c->o.noise_floor_ns / centre > f ? c->o.noise_floor_ns / centre : f;
}

/* Pass 1: session means, within and between variances of one unit. The
 * base's runs are grouped by session (side_stats.run_sess); NEW's runs are
 * one candidate session. Returns 1 when the unit can be tested. */
static int est_make(struct ctx *c, const struct side_stats *sb, const struct side_stats *sn,
		    struct est *e)
{
	uint32_t ns = c->b->nsessions ? c->b->nsessions : 1;
	double *sum = NULL, *ss = NULL, mu = 0, fl, wss = 0, wdf = 0, nss = 0, mean_n = 0;
	uint32_t *cnt = NULL;
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
	if (!e->xs)
		goto out;
	for (uint32_t q = 0; q < ns; q++) {
		if (!cnt[q])
			continue;
		e->xs[e->S] = sum[q] / cnt[q];
		mu += e->xs[e->S];
		e->minv += 1.0 / cnt[q];
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
	fl = floor_log(c, exp(mu));
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
	e->b_raw = NAN;
	if (e->S >= 2) {
		double v = 0;

		for (uint32_t q = 0; q < e->S; q++)
			v += (e->xs[q] - mu) * (e->xs[q] - mu);
		e->b_raw = v / (e->S - 1) - e->w * e->minv;
		if (e->b_raw < 0)
			e->b_raw = 0;
	}
	for (uint32_t q = 0; q < e->S; q++)
		e->xs[q] -= mu;
	e->d = mean_n - mu;
	e->M = sn->runs;
	e->bucket = bucket_of(exp(mu));
	e->centre = exp(mu);
	e->tested = 1;
	rc = 1;
out:
	free(sum);
	free(ss);
	free(cnt);
	return rc;
}

/* Pass 2: the test. se^2 = bvar (1 + 1/S) + w (1/M + mean(1/m_s)/S) +
 * post: a new unchanged session differs from the base's mean by its own
 * machine offset (bvar: the key's between-session variance left after its
 * group's machine effect, machine_model) and run noise, plus the
 * uncertainty of the base's mean and of the machine effect taken out
 * (post). shift is that effect (log), subtracted from d. df by
 * Welch-Satterthwaite. */
static void est_test(struct ctx *c, struct kpt_diff_row *r, const struct est *e, double shift,
		     double bvar, double bdf, double post, double *half_log)
{
	double dlog = e->d - shift, a, bpart, se2, df, q;

	a = bvar * (1 + 1.0 / e->S) + post;
	bpart = c->o.welch ? e->vb * e->minv / e->S + e->vn / e->M : e->w * (1.0 / e->M + e->minv / e->S);
	se2 = a + bpart;
	df = se2 * se2 / ((a > 0 ? a * a / bdf : 0) + bpart * bpart / e->wdf);
	q = kpt_t_quantile(1 - c->o.alpha / 2, df);
	*half_log = q * sqrt(se2);
	r->change_pct = pct(dlog);
	r->shift_pct = shift != 0 ? pct(shift) : 0;
	r->within_pct = 100 * sqrt(e->w);
	r->between_pct = 100 * sqrt(bvar + post);
	r->noise_pct = 100 * sqrt(se2);
	r->t = dlog / sqrt(se2);
	r->df = df;
	r->p = kpt_t_pvalue(r->t, df);
	r->ci_low_pct = pct(dlog - *half_log);
	r->ci_high_pct = pct(dlog + *half_log);
}

/* Paired test (kptprof ab): the i-th run of NEW against the i-th of BASE. */
static int paired_test(struct ctx *c, struct kpt_diff_row *r, const struct side_stats *sb,
		       const struct side_stats *sn, double *half_log)
{
	uint32_t n = sb->runs < sn->runs ? sb->runs : sn->runs;
	double m = 0, v = 0, fl, se, q;

	if (n < 2)
		return 0;
	for (uint32_t i = 0; i < n; i++)
		m += log(sn->run_ns[i]) - log(sb->run_ns[i]);
	m /= n;
	for (uint32_t i = 0; i < n; i++) {
		double x = log(sn->run_ns[i]) - log(sb->run_ns[i]) - m;

		v += x * x;
	}
	v /= n - 1;
	fl = floor_log(c, exp(sb->mean_log));
	/* the floor is per run; a difference of two runs has twice its variance */
	if (v < 2 * fl * fl)
		v = 2 * fl * fl;
	se = sqrt(v / n);
	q = kpt_t_quantile(1 - c->o.alpha / 2, n - 1);
	*half_log = q * se;
	r->change_pct = pct(m);
	r->within_pct = 100 * sqrt(v / 2);
	r->between_pct = 0;
	r->noise_pct = 100 * se;
	r->t = m / se;
	r->df = n - 1;
	r->p = kpt_t_pvalue(r->t, n - 1);
	r->ci_low_pct = pct(m - *half_log);
	r->ci_high_pct = pct(m + *half_log);
	return 1;
}

/* half_inf: the interval's half-width if NEW had infinitely many runs
 * (what the between-session part and the base alone leave); 0 when
 * paired. */
static void verdict_rule(struct ctx *c, struct kpt_diff_row *r, double dlog, double half,
			 double half_inf, uint32_t mb, uint32_t mn)
{
	double thr = log1p(r->threshold_pct / 100);
	double m = (mb + mn) / 2.0, need, target;

	r->more_runs = 0;
	r->machine_limited = 0;
	if (isnan(r->p)) {
		r->verdict = KPT_V_AMBG;
		r->more_runs = mb < 2 || mn < 2 ? 2 : 0;
		return;
	}
	if (dlog > thr && r->p_holm < c->o.alpha) {
		r->verdict = KPT_V_SLOW;
		return;
	}
	if (dlog < -thr && r->p_holm < c->o.alpha) {
		r->verdict = KPT_V_FAST;
		return;
	}
	if (fabs(dlog) + half < thr) {
		r->verdict = KPT_V_SAME;
		return;
	}
	r->verdict = KPT_V_AMBG;
	target = fabs(fabs(dlog) - thr);
	if (target < 1e-9 * thr) {
		r->more_runs = MORE_RUNS_CAP;
		return;
	}
	if (half_inf >= target) {
		/* more runs cannot settle it: the machine part alone spans the
		 * threshold; the same machine can (ab, a session of this runner) */
		r->more_runs = MORE_RUNS_CAP;
		r->machine_limited = r->between_pct > 0;
		return;
	}
	need = m * (half * half - half_inf * half_inf) / (target * target - half_inf * half_inf);
	if (need - m > MORE_RUNS_CAP)
		r->more_runs = MORE_RUNS_CAP;
	else
		r->more_runs = need - m < 1 ? 1 : (uint32_t)ceil(need - m);
}

static const struct kpt_side_key *first_key(const struct kpt_diff_side *s, const uint32_t *k, uint32_t n)
{
	return n ? &s->keys[k[0]] : NULL;
}

/* Fills one row's identity and side statistics; the test comes later. */
static int fill_row(struct ctx *c, const struct unit *u, struct kpt_diff_row *r,
		    struct side_stats *sb, struct side_stats *sn)
{
	const struct kpt_side_key *kb = first_key(c->b, u->b, u->nb);
	const struct kpt_side_key *kn = first_key(c->n, u->n, u->nn);
	const struct kpt_diff_side *s = kb ? c->b : c->n;
	const struct kpt_side_key *k = kb ? kb : kn;
	int pooled = c->o.method == KPT_DIFF_POOLED_U;
	int rc;

	memset(r, 0, sizeof *r);
	r->name = adup(c, side_str(s, k->name));
	r->mangled = adup(c, side_str(s, k->mangled));
	r->path = adup(c, side_str(s, k->path));
	r->workload = adup(c, side_str(s, k->workload));
	if (!r->name || !r->mangled || !r->path || !r->workload)
		return KPT_E_NOMEM;
	r->loose = u->loose;
	if (!u->loose) {
		memcpy(r->grid, k->grid, sizeof r->grid);
		memcpy(r->block, k->block, sizeof r->block);
		r->ordinal = k->ordinal;
	}
	r->aggregated = u->agg;
	if (u->agg) {
		memset(r->grid, 0, sizeof r->grid);
		memset(r->block, 0, sizeof r->block);
		r->ordinal = 0;
	}
	if ((rc = side_stats(c, c->b, u->b, u->nb, u->agg > 0, c->bslots, c->nbslots, sb,
			     pooled ? &c->pool_b : NULL, &c->cap_pb)) < 0 ||
	    (rc = side_stats(c, c->n, u->n, u->nn, u->agg > 0, c->nslots, c->nnslots, sn,
			     pooled ? &c->pool_n : NULL, &c->cap_pn)) < 0)
		return rc;
	r->base_runs = sb->runs;
	r->new_runs = sn->runs;
	r->base_run_ns = sb->run_ns;
	r->new_run_ns = sn->run_ns;
	r->base_run_ids = sb->run_ids;
	r->new_run_ids = sn->run_ids;
	r->base_samples = sb->samples;
	r->new_samples = sn->samples;
	r->base_dropped = sb->dropped;
	r->new_dropped = sn->dropped;
	r->base_ns = sb->runs ? exp(sb->mean_log) : NAN;
	r->new_ns = sn->runs ? exp(sn->mean_log) : NAN;
	r->change_pct = r->ci_low_pct = r->ci_high_pct = NAN;
	r->noise_pct = r->base_sd_pct = r->new_sd_pct = NAN;
	r->within_pct = r->between_pct = NAN;
	r->t = r->df = r->p = r->p_holm = NAN;
	r->cycles_change_pct = NAN;
	{
		double centre = sb->runs ? r->base_ns : r->new_ns;

		r->threshold_pct = centre < c->o.short_ns ? c->o.short_threshold_pct
				 : centre >= c->o.long_ns ? c->o.long_threshold_pct
				 : c->o.threshold_pct;
	}
	/* NEW/GONE: no launch at all on one side. A side whose launches were
	 * all dropped (throttling, low clocks) has no data: AMBG, not NEW. */
	if (!sb->runs && !sb->dropped)
		r->verdict = KPT_V_NEW;
	else if (!sn->runs && !sn->dropped)
		r->verdict = KPT_V_GONE;
	else if (!sb->runs || !sn->runs)
		r->verdict = KPT_V_AMBG;
	else if (!isnan(sb->cyc_mean_log) && !isnan(sn->cyc_mean_log))
		r->cycles_change_pct = pct(sn->cyc_mean_log - sb->cyc_mean_log);
	return 0;
}

static int cmp_rows(const void *pa, const void *pb)
{
	const struct kpt_diff_row *a = pa, *b = pb;
	int ra = verdict_rank[a->verdict], rb = verdict_rank[b->verdict];
	double ca = isnan(a->change_pct) ? -1e300 : a->change_pct;
	double cb = isnan(b->change_pct) ? -1e300 : b->change_pct;
	int c;

	if (ra != rb)
		return ra - rb;
	if (ca != cb)
		return ca < cb ? 1 : -1;
	if ((c = strcmp(a->name, b->name)))
		return c;
	if ((c = strcmp(a->path, b->path)))
		return c;
	return (a->ordinal > b->ordinal) - (a->ordinal < b->ordinal);
}

struct total_acc {
	struct kpt_diff_total t;
	double sumlog;
};

static int totals_add(struct ctx *c, struct kpt_strtab *names, struct total_acc **acc,
		      uint32_t *nacc, enum kpt_total_kind kind, const char *name,
		      const struct kpt_diff_row *r)
{
	char key[2] = { (char)('0' + kind), 0 };
	size_t ln = strlen(name);
	char *tmp = malloc(ln + 2);
	uint32_t id;
	int rc;

	if (!tmp)
		return KPT_E_NOMEM;
	tmp[0] = key[0];
	memcpy(tmp + 1, name, ln + 1);
	rc = kpt_strtab_intern(names, tmp, ln + 1, &id);
	free(tmp);
	if (rc < 0)
		return rc;
	if (id >= *nacc) {
		struct total_acc *t = realloc(*acc, (id + 1) * sizeof *t);

		if (!t)
			return KPT_E_NOMEM;
		*acc = t;
		memset(&t[id], 0, sizeof t[id]);
		t[id].t.kind = kind;
		t[id].t.name = adup(c, name);
		if (!t[id].t.name)
			return KPT_E_NOMEM;
		*nacc = id + 1;
	}
	(*acc)[id].t.verdicts[r->verdict]++;
	if (r->verdict == KPT_V_NEW || r->verdict == KPT_V_GONE || isnan(r->base_ns) || isnan(r->new_ns))
		return 0;
	(*acc)[id].t.keys++;
	(*acc)[id].t.base_ns += r->base_ns;
	(*acc)[id].t.new_ns += r->new_ns;
	(*acc)[id].sumlog += log(r->new_ns / r->base_ns);
	return 0;
}

static int cmp_totals(const void *pa, const void *pb)
{
	const struct kpt_diff_total *a = pa, *b = pb;

	if (a->kind != b->kind)
		return b->kind - a->kind; /* ALL, WORKLOAD, RANGE */
	return strcmp(a->name, b->name);
}

static int make_totals(struct ctx *c, struct kpt_diff *df)
{
	struct kpt_strtab names;
	struct total_acc *acc = NULL;
	uint32_t nacc = 0;
	int rc = 0;

	kpt_strtab_init(&names);
	for (size_t i = 0; i < df->nrows && rc == 0; i++) {
		const struct kpt_diff_row *r = &df->rows[i];

		rc = totals_add(c, &names, &acc, &nacc, KPT_TOTAL_ALL, "all", r);
		if (rc == 0)
			rc = totals_add(c, &names, &acc, &nacc, KPT_TOTAL_WORKLOAD, r->workload, r);
		if (rc == 0)
			rc = totals_add(c, &names, &acc, &nacc, KPT_TOTAL_RANGE, r->path, r);
	}
	kpt_strtab_release(&names);
	if (rc == 0 && nacc) {
		df->totals = kpt_arena_alloc(c->a, nacc * sizeof *df->totals);
		if (!df->totals)
			rc = KPT_E_NOMEM;
	}
	for (uint32_t i = 0; rc == 0 && i < nacc; i++) {
		struct kpt_diff_total *t = &acc[i].t;

		t->change_pct = t->keys ? pct(log(t->new_ns / t->base_ns)) : NAN;
		t->geomean_change_pct = t->keys ? pct(acc[i].sumlog / t->keys) : NAN;
		df->totals[i] = *t;
	}
	if (rc == 0) {
		df->ntotals = nacc;
		qsort(df->totals, nacc, sizeof *df->totals, cmp_totals);
	}
	free(acc);
	return rc;
}

static int copy_env(struct ctx *c, struct kpt_diff_env *dst, const struct kpt_diff_side *s,
		    uint32_t nslots)
{
	*dst = s->env;
	dst->path = adup(c, s->env.path);
	dst->gpu_name = adup(c, s->env.gpu_name);
	dst->gpu_slug = adup(c, s->env.gpu_slug);
	dst->driver = adup(c, s->env.driver);
	dst->cuda = adup(c, s->env.cuda);
	dst->suite = adup(c, s->env.suite);
	dst->host = adup(c, s->env.host);
	dst->time = adup(c, s->env.time);
	dst->commit = adup(c, s->env.commit);
	dst->runs = nslots;
	if (nslots != s->nruns) {
		/* A subset: count kept and dropped samples over its runs only. */
		const uint32_t *slots = s == c->b ? c->bslots : c->nslots;

		dst->samples = dst->dropped_throttle = dst->dropped_clock = 0;
		for (uint32_t k = 0; k < s->nkeys; k++)
			for (uint32_t i = 0; i < nslots; i++) {
				const struct kpt_sample_vec *v = &s->keys[k].runs[slots[i]];

				dst->samples += v->n;
				dst->dropped_throttle += v->dropped_throttle;
				dst->dropped_clock += v->dropped_clock;
			}
	}
	return dst->path && dst->gpu_name && dst->gpu_slug && dst->driver && dst->cuda &&
	       dst->suite && dst->host && dst->time && dst->commit ? 0 : KPT_E_NOMEM;
}

struct notes {
	struct kpt_diff_note v[40];
	size_t n;
};

static void note(struct ctx *c, struct notes *N, const char *what, int severe, const char *text)
{
	if (!text || N->n == sizeof N->v / sizeof N->v[0])
		return;
	N->v[N->n++] = (struct kpt_diff_note){ what, text, severe };
}

static void env_notes(struct ctx *c, struct kpt_diff *df, struct notes *N)
{
	const struct kpt_diff_env *b = &df->base, *n = &df->new_;
	const struct kpt_diff_env *sides[2] = { b, n };
	const char *names[2] = { "base", "new" };

	if (df->forced)
		note(c, N, "gpu", 1, afmt(c, "GPU models differ: '%s' vs '%s' (compared because of --force)",
					   b->gpu_name, n->gpu_name));
	if (strcmp(b->driver, n->driver) != 0)
		note(c, N, "driver", 0, afmt(c, "driver %s -> %s", b->driver[0] ? b->driver : "unknown",
					      n->driver[0] ? n->driver : "unknown"));
	if (strcmp(b->cuda, n->cuda) != 0)
		note(c, N, "cuda", 0, afmt(c, "CUDA runtime %s -> %s", b->cuda[0] ? b->cuda : "unknown",
					    n->cuda[0] ? n->cuda : "unknown"));
	if (!isnan(b->sm_mhz_median) && !isnan(n->sm_mhz_median) &&
	    fabs(n->sm_mhz_median - b->sm_mhz_median) > 0.02 * b->sm_mhz_median)
		note(c, N, "sm_clock", 1, afmt(c, "median SM clock %.0f MHz -> %.0f MHz",
						b->sm_mhz_median, n->sm_mhz_median));
	if (!isnan(b->temp_c_median) && !isnan(n->temp_c_median) &&
	    fabs(n->temp_c_median - b->temp_c_median) >= 5)
		note(c, N, "temperature", 0, afmt(c, "median GPU temperature %.0f C -> %.0f C (max %.0f -> %.0f)",
						   b->temp_c_median, n->temp_c_median, b->temp_c_max, n->temp_c_max));
	for (int i = 0; i < 2; i++) {
		const struct kpt_diff_env *e = sides[i];

		if (e->throttled_frac > 0)
			note(c, N, "throttle", 1, afmt(c, "%s: throttling in %.1f%% of env samples (NVML reasons 0x%llx)",
							names[i], 100 * e->throttled_frac,
							(unsigned long long)e->throttle_bits));
		if (e->dropped_throttle || e->dropped_clock)
			note(c, N, "dropped", 1, afmt(c, "%s: dropped %llu of %llu samples (throttled: %llu, SM clock below %.0f%% of the run's median: %llu)",
						       names[i], (unsigned long long)(e->dropped_throttle + e->dropped_clock),
						       (unsigned long long)(e->samples + e->dropped_throttle + e->dropped_clock),
						       (unsigned long long)e->dropped_throttle, 100 * df->opts.min_clock_frac,
						       (unsigned long long)e->dropped_clock));
		if (e->capped_frac > 0)
			note(c, N, "power_cap", 0, afmt(c, "%s: software power cap in %.1f%% of env samples (kept: the SM clock rule covers it)",
							 names[i], 100 * e->capped_frac));
		if (e->skipped || e->outside)
			note(c, N, "outside", 0, afmt(c, "%s: %llu launches under kpt:warmup/kpt:flush and %llu outside kpt:iter (set-up, checks) not compared",
						       names[i], (unsigned long long)e->skipped,
						       (unsigned long long)e->outside));
		if (e->ranks >= 2)
			note(c, N, "ranks", e->ranks_differ,
			     e->ranks_differ
				     ? afmt(c, "%s: %u ranks did different work (%llu to %llu launches per rank): each rank's kernels are keys of their own",
					    names[i], e->ranks, (unsigned long long)e->rank_launches_min,
					    (unsigned long long)e->rank_launches_max)
				     : afmt(c, "%s: %u ranks, the same launches each: each rank's kernels are keys of their own",
					    names[i], e->ranks));
		if (e->runs < 2)
			note(c, N, "runs", 1, afmt(c, "%s has %u run(s): the rule needs >= 2 runs per side to measure run-to-run noise (record with --runs 5)",
						    names[i], e->runs));
	}
	{
		/* Cycle-space cross-check: a change in time that is not one in
		 * cycles (time x SM clock) points at clocks rather than code. */
		uint32_t disagree = 0;

		for (size_t i = 0; i < df->nrows; i++) {
			const struct kpt_diff_row *r = &df->rows[i];

			if ((r->verdict == KPT_V_SLOW || r->verdict == KPT_V_FAST) &&
			    !isnan(r->cycles_change_pct) &&
			    fabs(r->cycles_change_pct - r->change_pct) > r->threshold_pct / 2)
				disagree++;
		}
		if (disagree)
			note(c, N, "cycles", 1, afmt(c, "%u SLOW/FAST key(s) changed in time but much less in cycles (time x SM clock): clocks, not code, may explain them",
						      disagree));
	}
	if (df->n_loose)
		note(c, N, "config", 0, afmt(c, "%u key(s) matched by kernel name and NVTX path only: their launch configs differ between the files",
					      df->n_loose));
	if (!c->b->iterated || !c->n->iterated)
		note(c, N, "iterations", 0, afmt(c, "%s has no '%s' ranges: each process counts as one iteration and the launches of one kernel are pooled",
						  !c->b->iterated ? names[0] : names[1], KPT_DIFF_ITER_RANGE));
}

/* NEW's measured ceilings against the mean of BASE's sessions. */
static void ceilings(struct ctx *c, struct kpt_diff *df)
{
	double cb = 0, bb = 0, cn = 0, bn = 0;
	uint32_t ncb = 0, nbb = 0;

	df->copy_ceiling_pct = df->bf16_ceiling_pct = NAN;
	for (uint32_t i = 0; i < c->b->nsessions; i++) {
		if (c->b->sessions[i].copy_gbps > 0) {
			cb += c->b->sessions[i].copy_gbps;
			ncb++;
		}
		if (c->b->sessions[i].bf16_tflops > 0) {
			bb += c->b->sessions[i].bf16_tflops;
			nbb++;
		}
	}
	if (c->n->nsessions) {
		cn = c->n->sessions[0].copy_gbps;
		bn = c->n->sessions[0].bf16_tflops;
	}
	if (ncb && cn > 0)
		df->copy_ceiling_pct = 100 * (cn / (cb / ncb) - 1);
	if (nbb && bn > 0)
		df->bf16_ceiling_pct = 100 * (bn / (bb / nbb) - 1);
}

/* Folds groups of many ordinal keys (one kernel name in one NVTX path,
 * at least aggregate_min units) into one unit each: the group is compared
 * by its time per iteration. Loose units are left alone. */
static int aggregate_units(struct ctx *c, struct units *U)
{
	struct kpt_wmap g;
	uint32_t *gid = NULL, *count = NULL, *first = NULL, out = 0, w[2];
	int min = c->o.aggregate_min ? c->o.aggregate_min : 3, rc = KPT_E_NOMEM;

	if (min < 0)
		return 0;
	kpt_wmap_init(&g, 2);
	gid = malloc((U->n + 1) * sizeof *gid);
	count = calloc(U->n + 1, sizeof *count);
	first = malloc((U->n + 1) * sizeof *first);
	if (!gid || !count || !first)
		goto out;
	for (uint32_t i = 0; i < U->n; i++) {
		const struct unit *u = &U->u[i];
		const struct kpt_side_key *k;

		gid[i] = NO_ID;
		if (u->loose)
			continue;
		if (u->nb) {
			k = &c->b->keys[u->b[0]];
			w[0] = k->name;
			w[1] = k->path;
		} else {
			k = &c->n->keys[u->n[0]];
			w[0] = to_base(c->b, c->n, k->name);
			w[1] = to_base(c->b, c->n, k->path);
			if (w[0] == NO_ID || w[1] == NO_ID)
				continue;
		}
		if (kpt_wmap_put(&g, w, &gid[i], NULL) < 0)
			goto out;
		if (count[gid[i]]++ == 0)
			first[gid[i]] = i;
	}
	for (uint32_t i = 0; i < U->n; i++) {
		struct unit *u = &U->u[i];
		uint32_t f;

		if (gid[i] == NO_ID || count[gid[i]] < (uint32_t)min || (f = first[gid[i]]) == i)
			continue;
		for (uint32_t j = 0; j < u->nb; j++)
			if (unit_add(&U->u[f].b, &U->u[f].nb, &U->u[f].capb, u->b[j]) < 0)
				goto out;
		for (uint32_t j = 0; j < u->nn; j++)
			if (unit_add(&U->u[f].n, &U->u[f].nn, &U->u[f].capn, u->n[j]) < 0)
				goto out;
		U->u[f].agg = count[gid[i]];
		u->agg = UINT32_MAX; /* folded: dropped below */
	}
	for (uint32_t i = 0; i < U->n; i++) {
		if (U->u[i].agg == UINT32_MAX) {
			free(U->u[i].b);
			free(U->u[i].n);
			continue;
		}
		U->u[out++] = U->u[i];
	}
	U->n = out;
	rc = 0;
out:
	kpt_wmap_release(&g);
	free(gid);
	free(count);
	free(first);
	return rc < 0 ? kpt_diag_set(c->d, rc, "out of memory grouping kernels") : 0;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Median of v[0..n), reordering v. */
static double median_inplace(double *v, size_t n)
{
	qsort(v, n, sizeof *v, cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Family of a key: its workload's first dot-separated part ("" none) and
 * its kernel's kind, the first '_'-separated word of the function's own
 * name ("moe/nvjet" for cuBLAS's GEMMs in the MoE layer): kernels of one
 * library in one workload are what a machine slows down together (on two
 * of ten H100s the MoE layer's small cuBLAS GEMMs ran 3-12% slower). */
static int family_id(struct kpt_strtab *fams, const char *workload, const char *name, uint32_t *id)
{
	static const char anon[] = "(anonymous namespace)::";
	const char *dot = strchr(workload, '.'), *end, *p, *start;
	char buf[160];
	size_t wl = dot ? (size_t)(dot - workload) : strlen(workload), kl;

	/* "void (anonymous namespace)::attn_fwd_kernel<...>(...)" -> "attn" */
	if (strncmp(name, "void ", 5) == 0)
		name += 5;
	while (strncmp(name, anon, sizeof anon - 1) == 0)
		name += sizeof anon - 1;
	end = name + strcspn(name, "<(");
	start = name;
	for (p = name; p + 1 < end; p++)
		if (p[0] == ':' && p[1] == ':')
			start = p + 2;
		else if (p[0] == ' ')
			start = p + 1;
	kl = strcspn(start, "_<( ");
	if (kl > 64)
		kl = 64;
	if (wl > 64)
		wl = 64;
	snprintf(buf, sizeof buf, "%.*s/%.*s", (int)wl, workload, (int)kl, start);
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
static void residual_targets(const struct ctx *c, const struct est *E, uint32_t n, const uint32_t *gid,
			     double *v, double *target, double *tdf)
{
	double bt[NBUCKETS], bdf[NBUCKETS];

	for (uint32_t b = 0; b < NBUCKETS; b++) {
		uint32_t m = 0;

		for (uint32_t i = 0; i < n; i++)
			if (E[i].tested && E[i].bucket == b && E[i].S >= 3)
				v[m++] = E[i].b_res;
		bt[b] = c->o.between_prior_pct > 0 ? c->o.between_prior_pct / 100 : between_prior[b].sd_pct / 100;
		bt[b] *= bt[b];
		bdf[b] = PRIOR_SHRINK_DF;
		if (m >= 5) {
			bt[b] = median_inplace(v, m);
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
			target[i] = median_inplace(v, m);
			if (getenv("KPT_MM_MEAN")) {
				double t = 0;

				for (uint32_t j = 0; j < m; j++)
					t += v[j];
				target[i] = t / m;
			}
			tdf[i] = SHRINK_DF;
		}
	}
}

static int machine_model(struct ctx *c, struct kpt_diff *df, struct est *E, uint32_t n,
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
			q->eff[s] = median_inplace(v, m);
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
	for (uint32_t g = 0; g < ng && !getenv("KPT_MM_NOMOD"); g++) {
		uint32_t m = 0;
		double s0;

		for (uint32_t i = 0; i < n; i++)
			if (E[i].tested && gid[i] == g)
				v[m++] = E[i].w;
		if (m < 5)
			continue;
		s0 = median_inplace(v, m);
		for (uint32_t i = 0; i < n; i++)
			if (E[i].tested && gid[i] == g) {
				E[i].w = (W_PRIOR_DF * s0 + E[i].wdf * E[i].w) / (W_PRIOR_DF + E[i].wdf);
				E[i].wdf += W_PRIOR_DF;
			}
	}
	residual_targets(c, E, n, gid, v, target, tdf);
	if (getenv("KPT_DEBUG_BRES"))
		for (uint32_t i = 0; i < n; i++)
			if (E[i].tested)
				fprintf(stderr, "bres %u %.0f %.4f %.4f %.4f %s\n", E[i].S, E[i].centre, 100 * sqrt(E[i].b_raw),
					100 * sqrt(E[i].b_res), 100 * sqrt(E[i].w), kpt_strtab_get(fams, gid[i], NULL));
	/* Each key's between part. */
	for (uint32_t i = 0; i < n; i++) {
		struct est *e = &E[i];
		double b, bdf, prior;

		if (!e->tested)
			continue;
		prior = c->o.between_prior_pct > 0 ? c->o.between_prior_pct / 100 : between_prior[e->bucket].sd_pct / 100;
		if (c->machine == KPT_MACHINE_SAME_BOOT) {
			b = 0;
			bdf = PRIOR_DF;
		} else if (e->S >= 2) {
			/* shrunk both ways: once sessions have measured a key, a
			 * quiet key is quiet and a wild one is wild */
			bdf = (e->S - 1) + tdf[i];
			b = ((e->S - 1) * e->b_res + tdf[i] * target[i]) / bdf;
			if (getenv("KPT_MM_UP") && b < e->b_res)
				b = e->b_res;
		} else {
			b = prior * prior;
			bdf = PRIOR_DF;
		}
		if (c->machine != KPT_MACHINE_SAME_BOOT) {
			/* Machines differ by tens of ns on the shortest kernels even
			 * when their sessions agree (docs/decision-rule.md, "Sessions"). */
			double fb = c->o.between_floor_ns / e->centre;

			if (b < fb * fb)
				b = fb * fb;
		}
		if (c->machine == KPT_MACHINE_OTHER && G[gid[i]].eff && !getenv("KPT_MM_NOKURT") && bdf > G[gid[i]].tail_df)
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
		q->m_new = median_inplace(d, m);
		q->v = M_PI / 2 * median_inplace(a, m) / m;
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
		if (!(sh->family = adup(c, kpt_strtab_get(fams, g, NULL))))
			goto out;
		sh->keys = m;
		sh->change_pct = pct(q->m_new);
		sh->ci_low_pct = pct(q->m_new - half);
		sh->ci_high_pct = pct(q->m_new + half);
		sh->sd_pct = 100 * sqrt(q->tau2);
		sh->verdict = q->m_new > thr && p < c->o.alpha ? KPT_V_SLOW :
			      q->m_new < -thr && p < c->o.alpha ? KPT_V_FAST :
			      fabs(q->m_new) + half < thr ? KPT_V_SAME : KPT_V_AMBG;
		sh->applied = 1;
		df->nshifts++;
	}
	for (uint32_t i = 0; i < n; i++)
		if (E[i].tested) {
			kn[i].shift = G[gid[i]].m_used;
			kn[i].post = G[gid[i]].post;
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

/* What the noise model rests on, the families that moved together and the
 * machines' measured ceilings: one line each, beside the verdicts. */
static void model_notes(struct ctx *c, struct kpt_diff *df, struct notes *N)
{
	if (c->o.method != KPT_DIFF_RULE)
		return;
	if (df->paired)
		note(c, N, "sessions", 0, afmt(c, "paired: run i of new against run i of base (one machine, interleaved); no between-machine part"));
	else if (df->machine == KPT_MACHINE_SAME_BOOT)
		note(c, N, "sessions", 0, afmt(c, "same GPU (UUID) and boot as %u of the base's %u session%s: compared with %s alone, no between-machine part",
					      df->machine_sessions, df->base_sessions, df->base_sessions == 1 ? "" : "s",
					      df->machine_sessions == 1 ? "it" : "them"));
	else if (df->machine_sessions)
		note(c, N, "machine", 0, afmt(c, "same GPU (UUID) as %u of the base's %u session%s but another boot (or no boot id): "
					      "compared as another machine (how much one GPU moves between boots is not measured yet)",
					      df->machine_sessions, df->base_sessions, df->base_sessions == 1 ? "" : "s"));
	if (df->paired || df->machine == KPT_MACHINE_SAME_BOOT)
		;
	else if (df->prior_between)
		note(c, N, "sessions", 1, afmt(c, "base holds one session: the between-machine part of the noise is a prior by kernel duration (docs/decision-rule.md), not a measurement; 'kptprof baseline update' adds sessions"));
	else
		note(c, N, "sessions", 0, afmt(c, "base holds %u sessions: the noise has a measured between-machine part, "
					      "after each family's machine effect", df->base_sessions));
	for (size_t i = 0; i < df->nshifts; i++) {
		const struct kpt_diff_shift *sh = &df->shifts[i];

		if (sh->verdict == KPT_V_SAME)
			continue;
		note(c, N, "shift", sh->verdict == KPT_V_SLOW,
		     afmt(c, "family '%s' moved %+.1f%% as a whole [%+.1f, %+.1f] (%u keys; between sessions such medians move %.2f%%): %s%s",
			  sh->family, sh->change_pct, sh->ci_low_pct, sh->ci_high_pct, sh->keys, sh->sd_pct,
			  kpt_verdict_name(sh->verdict), sh->applied ? "; taken out of its keys' changes" : ""));
	}
	if (!isnan(df->copy_ceiling_pct) || !isnan(df->bf16_ceiling_pct))
		note(c, N, "ceilings", 0, afmt(c, "measured ceilings of new against the base's sessions: copy %+.1f%%, bf16 %+.1f%%",
						df->copy_ceiling_pct, df->bf16_ceiling_pct));
}

/* Where NEW came from: when some base sessions share NEW's GPU UUID (and
 * boot id), only they are compared (c->bslots keeps their runs) and the
 * machine part of the noise is none (same boot) or the between-boot part
 * (same GPU); else every session is another machine. */
static void machine_of(struct ctx *c, struct kpt_diff *df)
{
	const struct kpt_diff_session *nw = c->n->nsessions ? &c->n->sessions[0] : NULL;
	uint32_t nb = c->b->nsessions ? c->b->nsessions : 1, out = 0, boot = 0, gpu = 0;
	unsigned char *keep = NULL;

	c->machine = KPT_MACHINE_OTHER;
	df->machine_sessions = 0;
	if (c->o.machine == KPT_MACHINE_OTHER || c->o.paired || !nw || !nw->uuid || !nw->uuid[0] ||
	    !c->b->nsessions || !c->b->run_session || !(keep = calloc(nb, 1)))
		goto out;
	for (uint32_t q = 0; q < c->b->nsessions; q++) {
		const struct kpt_diff_session *s = &c->b->sessions[q];

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
}

static int compare(struct ctx *c, struct kpt_diff *df)
{
	struct units U = { 0 };
	struct side_stats sb, sn;
	struct kpt_strtab fams;
	struct est *E = NULL;
	double *half = NULL, *hinf = NULL, *pv = NULL;
	struct notes N = { .n = 0 };
	int rc;

	if ((rc = select_slots(c, c->b, c->o.base_runs, c->o.n_base_runs, &c->bslots, &c->nbslots)) < 0 ||
	    (rc = select_slots(c, c->n, c->o.new_runs, c->o.n_new_runs, &c->nslots, &c->nnslots)) < 0)
		return rc;
	machine_of(c, df);
	if ((rc = match_keys(c, &U)) < 0 || (rc = aggregate_units(c, &U)) < 0)
		return rc;
	rc = KPT_E_NOMEM;
	kpt_strtab_init(&fams);
	df->rows = kpt_arena_calloc(c->a, U.n ? U.n : 1, sizeof *df->rows);
	half = calloc(U.n + 1, sizeof *half);
	hinf = calloc(U.n + 1, sizeof *hinf);
	pv = calloc(U.n + 1, sizeof *pv);
	E = calloc(U.n + 1, sizeof *E);
	if (!df->rows || !half || !hinf || !pv || !E)
		goto out;
	df->nrows = U.n;
	df->base_sessions = c->b->nsessions ? c->b->nsessions : 1;
	df->paired = c->o.paired;
	df->prior_between = !c->o.paired && df->base_sessions < 2 && c->machine == KPT_MACHINE_OTHER;
	/* Pass 1: rows, and the noise model's pieces per unit. */
	for (uint32_t i = 0; i < U.n; i++) {
		struct kpt_diff_row *r = &df->rows[i];

		if ((rc = fill_row(c, &U.u[i], r, &sb, &sn)) < 0)
			goto out;
		pv[i] = NAN;
		if (U.u[i].loose)
			df->n_loose++;
		if (r->verdict != KPT_V_SAME) /* NEW, GONE, AMBG without data: untested */
			continue;
		if (c->o.method == KPT_DIFF_POOLED_U) {
			r->change_pct = pct(log(sn.pooled_median / sb.pooled_median));
			r->p = kpt_mann_whitney_p(c->pool_b, sb.samples, c->pool_n, sn.samples);
			r->p_holm = r->p;
			r->verdict = !(r->p < c->o.alpha) ? KPT_V_SAME :
				     r->change_pct > 0 ? KPT_V_SLOW : KPT_V_FAST;
			continue;
		}
		r->change_pct = pct(sn.mean_log - sb.mean_log);
		r->base_sd_pct = 100 * sb.sd_log;
		r->new_sd_pct = 100 * sn.sd_log;
		if (c->o.paired) {
			if (paired_test(c, r, &sb, &sn, &half[i])) {
				pv[i] = r->p;
				df->n_tested++;
			}
			continue;
		}
		if ((rc = est_make(c, &sb, &sn, &E[i])) < 0)
			goto out;
		if (E[i].tested && ((rc = family_id(&fams, r->workload, r->name, &E[i].family)) < 0 ||
				    (rc = workload_group_id(&fams, r->workload, &E[i].wl)) < 0))
			goto out;
	}
	if (c->o.method == KPT_DIFF_RULE && !c->o.paired) {
		struct keynoise *kn = calloc(U.n + 1, sizeof *kn);

		if (!kn || (rc = machine_model(c, df, E, U.n, &fams, kn)) < 0) {
			free(kn);
			rc = rc < 0 ? rc : KPT_E_NOMEM;
			goto out;
		}
		/* Pass 2: the tests. */
		for (uint32_t i = 0; i < U.n; i++) {
			struct kpt_diff_row *r = &df->rows[i];
			struct est *e = &E[i];
			double h2;

			if (!e->tested)
				continue;
			est_test(c, r, e, kn[i].shift, kn[i].bvar, kn[i].bdf, kn[i].post, &half[i]);
			/* what infinitely many NEW runs would leave */
			h2 = half[i] * half[i] * (1 - e->w / e->M / (r->noise_pct * r->noise_pct / 1e4));
			hinf[i] = h2 > 0 ? sqrt(h2) : 0;
			pv[i] = r->p;
			df->n_tested++;
		}
		free(kn);
	}
	if (c->o.method == KPT_DIFF_RULE) {
		/* the families' shifts are tested alongside the keys */
		size_t nsh = df->nshifts;

		if ((rc = kpt_holm(pv, U.n)) < 0)
			goto out;
		for (uint32_t i = 0; i < U.n; i++) {
			struct kpt_diff_row *r = &df->rows[i];

			if (r->verdict == KPT_V_NEW || r->verdict == KPT_V_GONE || !r->base_runs || !r->new_runs)
				continue;
			r->p_holm = pv[i];
			verdict_rule(c, r, log1p(r->change_pct / 100), half[i], hinf[i], r->base_runs, r->new_runs);
		}
		for (size_t i = 0; i < nsh; i++)
			if (df->shifts[i].verdict == KPT_V_SLOW)
				df->result = KPT_DIFF_REGRESSION;
	}
	for (uint32_t i = 0; i < U.n; i++)
		df->counts[df->rows[i].verdict]++;
	qsort(df->rows, df->nrows, sizeof *df->rows, cmp_rows);
	if (df->counts[KPT_V_SLOW])
		df->result = KPT_DIFF_REGRESSION;
	ceilings(c, df);
	if ((rc = make_totals(c, df)) < 0 ||
	    (rc = copy_env(c, &df->base, c->b, c->nbslots)) < 0 ||
	    (rc = copy_env(c, &df->new_, c->n, c->nnslots)) < 0)
		goto out;
	env_notes(c, df, &N);
	model_notes(c, df, &N);
	df->notes = kpt_arena_alloc(c->a, (N.n ? N.n : 1) * sizeof *df->notes);
	if (!df->notes)
		goto out;
	memcpy(df->notes, N.v, N.n * sizeof *df->notes);
	df->nnotes = N.n;
	rc = 0;
out:
	units_release(&U);
	kpt_strtab_release(&fams);
	free(half);
	free(hinf);
	free(pv);
	free(E);
	return rc < 0 ? kpt_diag_set(c->d, rc, "cannot compare '%s' with '%s': %s",
				     c->b->env.path, c->n->env.path, kpt_err_name(rc)) : 0;
}

int kpt_diff_compare(const struct kpt_diff_side *base, const struct kpt_diff_side *new_,
		     const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct diff_owner *own;
	struct ctx c;
	int rc, forced = 0;

	*out = NULL;
	if (base->env.gpu_slug[0] && new_->env.gpu_slug[0] &&
	    strcmp(base->env.gpu_slug, new_->env.gpu_slug) != 0) {
		if (!opts || !opts->force) {
			kpt_diag_set(d, KPT_E_MISMATCH,
				     "cannot compare '%s' (%s) with '%s' (%s): different GPU models",
				     base->env.path, base->env.gpu_name, new_->env.path, new_->env.gpu_name);
			return kpt_diag_hint(d, "compare recordings of the same GPU model, or pass --force");
		}
		forced = 1;
	}
	own = calloc(1, sizeof *own);
	if (!own)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory comparing recordings");
	kpt_arena_init(&own->arena);
	memset(&c, 0, sizeof c);
	c.b = base;
	c.n = new_;
	if (opts)
		c.o = *opts;
	fill_defaults(&c.o);
	c.a = &own->arena;
	c.d = d;
	own->df.opts = c.o;
	own->df.opts.base_runs = own->df.opts.new_runs = NULL;
	own->df.opts.n_base_runs = own->df.opts.n_new_runs = 0;
	own->df.forced = forced;
	rc = compare(&c, &own->df);
	free(c.buf);
	free(c.cbuf);
	free(c.pool_b);
	free(c.pool_n);
	if (rc < 0) {
		kpt_diff_destroy(&own->df);
		return rc;
	}
	*out = &own->df;
	return 0;
}

void kpt_diff_destroy(struct kpt_diff *df)
{
	struct diff_owner *own;

	if (!df)
		return;
	own = (struct diff_owner *)((char *)df - offsetof(struct diff_owner, df));
	kpt_arena_release(&own->arena);
	free(own);
}

int kpt_diff_attach_counters(struct kpt_diff *df, const struct kpt_counter_table *base,
			     const struct kpt_counter_table *new_)
{
	struct diff_owner *own = (struct diff_owner *)((char *)df - offsetof(struct diff_owner, df));
	struct kpt_counter_delta dl[KPT_METRICS_MAX];
	char buf[512];

	for (size_t i = 0; i < df->nrows; i++) {
		struct kpt_diff_row *r = &df->rows[i];
		size_t k;

		r->counters = NULL;
		if (r->verdict != KPT_V_SLOW || !kpt_counter_table_size(base) || !kpt_counter_table_size(new_))
			continue;
		if (!(k = kpt_counter_deltas(base, new_, r->mangled, dl, KPT_METRICS_MAX)))
			continue;
		kpt_counter_deltas_text(dl, k, 3, buf, sizeof buf);
		if (!(r->counters = kpt_arena_strndup(&own->arena, buf, strlen(buf))))
			return KPT_E_NOMEM;
	}
	return 0;
}

struct load_job {
	const char *path;
	const struct kpt_diff_opts *opts;
	struct kpt_diff_side *side;
	struct kpt_counter_table *counters; /* NULL when unreadable */
	struct kpt_diag d;
	int rc;
};

static void *load_job_run(void *arg)
{
	struct load_job *j = arg;
	struct kpt_file *f = NULL;

	j->rc = kpt_file_open(j->path, &f, &j->d);
	if (j->rc == 0)
		j->rc = kpt_diff_side_load(f, j->opts, &j->side, &j->d);
	/* Counters only explain SLOW keys: a file without them is no error. */
	if (j->rc == 0 && kpt_counter_table_load(f, &j->counters, NULL) < 0)
		j->counters = NULL;
	kpt_file_close(f);
	return NULL;
}

/* Loads both files, the base on a second thread (two files of 10 million
 * kernels each take about half the time on two cores). */
int kpt_diff_paths(const char *base_path, const char *new_path,
		   const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct load_job jb = { .path = base_path, .opts = opts }, jn = { .path = new_path, .opts = opts };
	pthread_t t;
	int threaded, rc;

	*out = NULL;
	threaded = pthread_create(&t, NULL, load_job_run, &jb) == 0;
	if (!threaded)
		load_job_run(&jb);
	load_job_run(&jn);
	if (threaded)
		pthread_join(t, NULL);
	if (jb.rc < 0 || jn.rc < 0) {
		if (d)
			*d = jb.rc < 0 ? jb.d : jn.d;
		rc = jb.rc < 0 ? jb.rc : jn.rc;
	} else {
		rc = kpt_diff_compare(jb.side, jn.side, opts, out, d);
	}
	if (rc >= 0 && kpt_diff_attach_counters(*out, jb.counters, jn.counters) < 0) {
		kpt_diff_destroy(*out);
		*out = NULL;
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory explaining SLOW keys with counters");
	}
	kpt_counter_table_destroy(jb.counters);
	kpt_counter_table_destroy(jn.counters);
	kpt_diff_side_destroy(jb.side);
	kpt_diff_side_destroy(jn.side);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Appends path, or the *.kpt files of folder path sorted by name, to *v. */
static int expand_path(const char *path, char ***v, size_t *n, size_t *cap, struct kpt_diag *d)
{
	struct stat st;
	DIR *dir;
	struct dirent *de;
	size_t first = *n;

	if (stat(path, &st) != 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode)) {
		dir = NULL;
		goto one;
	}
	dir = opendir(path);
	if (!dir)
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", path, strerror(errno));
	while ((de = readdir(dir))) {
		size_t l = strlen(de->d_name);

		if (l < 5 || strcmp(de->d_name + l - 4, ".kpt") != 0 || de->d_name[0] == '.')
			continue;
		if (*n == *cap) {
			char **t = realloc(*v, (*cap ? *cap * 2 : 8) * sizeof *t);

			if (!t)
				goto nomem;
			*v = t;
			*cap = *cap ? *cap * 2 : 8;
		}
		(*v)[*n] = malloc(strlen(path) + l + 2);
		if (!(*v)[*n])
			goto nomem;
		sprintf((*v)[*n], "%s/%s", path, de->d_name);
		(*n)++;
	}
	closedir(dir);
	if (*n == first) {
		kpt_diag_set(d, KPT_E_NOTFOUND, "'%s' holds no .kpt sessions", path);
		return kpt_diag_hint(d, "'kptprof baseline update FILE' adds a session");
	}
	qsort(*v + first, *n - first, sizeof **v, cmp_str);
	return 0;
one:
	if (*n == *cap) {
		char **t = realloc(*v, (*cap ? *cap * 2 : 8) * sizeof *t);

		if (!t)
			goto nomem;
		*v = t;
		*cap = *cap ? *cap * 2 : 8;
	}
	(*v)[*n] = strdup(path);
	if (!(*v)[*n])
		goto nomem;
	(*n)++;
	return 0;
nomem:
	if (dir)
		closedir(dir);
	return kpt_diag_set(d, KPT_E_NOMEM, "out of memory listing '%s'", path);
}

int kpt_diff_sessions_load(const char *const *base_paths, size_t nbase, const struct kpt_diff_opts *opts,
			   struct kpt_diff_side **out, struct kpt_diag *d)
{
	char **files = NULL;
	size_t n = 0, cap = 0;
	struct kpt_diff_side **sides = NULL;
	int rc = 0;

	*out = NULL;
	for (size_t i = 0; i < nbase && rc == 0; i++)
		rc = expand_path(base_paths[i], &files, &n, &cap, d);
	if (rc == 0 && !n)
		rc = kpt_diag_set(d, KPT_E_INVAL, "no baseline given");
	if (rc == 0 && !(sides = calloc(n, sizeof *sides)))
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading sessions");
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct kpt_file *f = NULL;

		rc = kpt_file_open(files[i], &f, d);
		if (rc == 0)
			rc = kpt_diff_side_load(f, opts, &sides[i], d);
		kpt_file_close(f);
	}
	if (rc == 0 && n == 1) {
		*out = sides[0];
		sides[0] = NULL;
	} else if (rc == 0) {
		char label[64];
		const char *lab = label;

		if (nbase == 1)
			lab = base_paths[0];
		else
			snprintf(label, sizeof label, "%zu sessions", n);
		rc = kpt_diff_side_combine((const struct kpt_diff_side *const *)sides, n, 0, lab, out, d);
	}
	for (size_t i = 0; i < n; i++) {
		if (sides)
			kpt_diff_side_destroy(sides[i]);
		free(files[i]);
	}
	free(sides);
	free(files);
	return rc;
}

int kpt_diff_paths_multi(const char *const *base_paths, size_t nbase, const char *new_path,
			 const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct kpt_diff_side *b = NULL;
	struct stat st;
	int rc;

	*out = NULL;
	if (nbase == 1 && stat(base_paths[0], &st) == 0 && !S_ISDIR(st.st_mode))
		return kpt_diff_paths(base_paths[0], new_path, opts, out, d);
	rc = kpt_diff_sessions_load(base_paths, nbase, opts, &b, d);
	if (rc == 0)
		rc = kpt_diff_side_vs_path(b, new_path, opts, out, d);
	kpt_diff_side_destroy(b);
	return rc;
}

int kpt_diff_side_vs_path(const struct kpt_diff_side *base, const char *new_path,
			  const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct load_job jn = { .path = new_path, .opts = opts };
	int rc;

	*out = NULL;
	load_job_run(&jn);
	rc = jn.rc;
	if (rc < 0 && d)
		*d = jn.d;
	if (rc == 0)
		rc = kpt_diff_compare(base, jn.side, opts, out, d);
	if (rc >= 0 && *out && kpt_diff_attach_counters(*out, NULL, jn.counters) < 0) {
		kpt_diff_destroy(*out);
		*out = NULL;
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory explaining SLOW keys with counters");
	}
	kpt_counter_table_destroy(jn.counters);
	kpt_diff_side_destroy(jn.side);
	return rc;
}
