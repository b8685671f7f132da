/* kpt_diff.c - matching two sides and the decision rule (docs/decision-rule.md). */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
};

/* One side's statistics for one unit over the selected runs. */
struct side_stats {
	uint32_t runs;              /* runs with samples */
	double *run_ns;             /* [runs] medians */
	uint32_t *run_ids;
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
		      uint32_t nk, const uint32_t *slots, uint32_t nslots,
		      struct side_stats *st, double **pool, size_t *capp)
{
	double sum = 0, csum = 0;
	int have_cyc = 1;
	size_t npool = 0;

	memset(st, 0, sizeof *st);
	st->run_ns = kpt_arena_alloc(c->a, (nslots ? nslots : 1) * sizeof *st->run_ns);
	st->run_ids = kpt_arena_alloc(c->a, (nslots ? nslots : 1) * sizeof *st->run_ids);
	if (!st->run_ns || !st->run_ids)
		return KPT_E_NOMEM;
	for (uint32_t i = 0; i < nslots; i++) {
		uint32_t slot = slots[i];
		size_t cnt = 0, m = 0;
		int cyc;
		double med, cmed;

		for (uint32_t j = 0; j < nk; j++) {
			const struct kpt_sample_vec *v = &s->keys[keys[j]].runs[slot];

			cnt += v->n;
			st->dropped += v->dropped_throttle + v->dropped_clock;
		}
		if (!cnt)
			continue;
		if (nk == 1 && !pool) {
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

/* Student (pooled) or Welch interval and test on the log run medians; fills the row's numbers.
 * Returns 1 when the key is tested (enters Holm). */
static int rule_test(struct ctx *c, struct kpt_diff_row *r, const struct side_stats *sb,
		     const struct side_stats *sn, double *half_log)
{
	double centre = exp(sb->mean_log), floor_log, vb, vn, se2, df, t, q, dlog;
	double eb, en;

	floor_log = c->o.noise_floor_pct / 100;
	if (c->o.noise_floor_ns / centre > floor_log)
		floor_log = c->o.noise_floor_ns / centre;
	dlog = sn->mean_log - sb->mean_log;
	r->change_pct = pct(dlog);
	r->base_sd_pct = 100 * sb->sd_log;
	r->new_sd_pct = 100 * sn->sd_log;
	if (sb->runs < 2 && sn->runs < 2) {
		r->noise_pct = r->ci_low_pct = r->ci_high_pct = NAN;
		r->t = r->df = r->p = NAN;
		return 0;
	}
	/* Floors apply to each side's SD before pooling: a side whose runs
	 * happen to agree to the nanosecond must not make the test exact. */
	vb = sb->runs >= 2 ? sb->sd_log : sn->sd_log;
	vn = sn->runs >= 2 ? sn->sd_log : sb->sd_log;
	if (vb < floor_log)
		vb = floor_log;
	if (vn < floor_log)
		vn = floor_log;
	if (sb->runs >= 2 && sn->runs >= 2 && c->o.welch) {
		eb = vb * vb / sb->runs;
		en = vn * vn / sn->runs;
		se2 = eb + en;
		df = se2 * se2 / (eb * eb / (sb->runs - 1) + en * en / (sn->runs - 1));
		r->noise_pct = 100 * sqrt(((sb->runs - 1) * vb * vb + (sn->runs - 1) * vn * vn) /
					  (sb->runs + sn->runs - 2));
	} else if (sb->runs >= 2 && sn->runs >= 2) {
		double sp2 = ((sb->runs - 1) * vb * vb + (sn->runs - 1) * vn * vn) /
			     (sb->runs + sn->runs - 2);

		se2 = sp2 * (1.0 / sb->runs + 1.0 / sn->runs);
		df = sb->runs + sn->runs - 2;
		r->noise_pct = 100 * sqrt(sp2);
	} else {
		/* One side has one run: its noise is taken from the other. */
		double s2 = sb->runs >= 2 ? vb * vb : vn * vn;

		se2 = s2 * (1.0 / sb->runs + 1.0 / sn->runs);
		df = (sb->runs >= 2 ? sb->runs : sn->runs) - 1;
		r->noise_pct = 100 * sqrt(s2);
	}
	t = dlog / sqrt(se2);
	q = kpt_t_quantile(1 - c->o.alpha / 2, df);
	*half_log = q * sqrt(se2);
	r->t = t;
	r->df = df;
	r->p = kpt_t_pvalue(t, df);
	r->ci_low_pct = pct(dlog - *half_log);
	r->ci_high_pct = pct(dlog + *half_log);
	return 1;
}

static void verdict_rule(struct ctx *c, struct kpt_diff_row *r, double dlog, double half,
			 uint32_t mb, uint32_t mn)
{
	double thr = log1p(r->threshold_pct / 100);
	double m = (mb + mn) / 2.0, need, target;

	r->more_runs = 0;
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
	need = m * (half / target) * (half / target);
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
	if ((rc = side_stats(c, c->b, u->b, u->nb, c->bslots, c->nbslots, sb,
			     pooled ? &c->pool_b : NULL, &c->cap_pb)) < 0 ||
	    (rc = side_stats(c, c->n, u->n, u->nn, c->nslots, c->nnslots, sn,
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
	struct kpt_diff_note v[24];
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

static int compare(struct ctx *c, struct kpt_diff *df)
{
	struct units U = { 0 };
	struct side_stats sb, sn;
	double *half = NULL, *pv = NULL;
	struct notes N = { .n = 0 };
	int rc;

	if ((rc = select_slots(c, c->b, c->o.base_runs, c->o.n_base_runs, &c->bslots, &c->nbslots)) < 0 ||
	    (rc = select_slots(c, c->n, c->o.new_runs, c->o.n_new_runs, &c->nslots, &c->nnslots)) < 0)
		return rc;
	if ((rc = match_keys(c, &U)) < 0)
		return rc;
	rc = KPT_E_NOMEM;
	df->rows = kpt_arena_calloc(c->a, U.n ? U.n : 1, sizeof *df->rows);
	half = calloc(U.n + 1, sizeof *half);
	pv = calloc(U.n + 1, sizeof *pv);
	if (!df->rows || !half || !pv)
		goto out;
	df->nrows = U.n;
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
		if (rule_test(c, r, &sb, &sn, &half[i])) {
			pv[i] = r->p;
			df->n_tested++;
		}
	}
	if (c->o.method == KPT_DIFF_RULE) {
		if ((rc = kpt_holm(pv, U.n)) < 0)
			goto out;
		for (uint32_t i = 0; i < U.n; i++) {
			struct kpt_diff_row *r = &df->rows[i];

			if (r->verdict == KPT_V_NEW || r->verdict == KPT_V_GONE || !r->base_runs || !r->new_runs)
				continue;
			r->p_holm = pv[i];
			verdict_rule(c, r, log1p(r->change_pct / 100), half[i], r->base_runs, r->new_runs);
		}
	}
	for (uint32_t i = 0; i < U.n; i++)
		df->counts[df->rows[i].verdict]++;
	qsort(df->rows, df->nrows, sizeof *df->rows, cmp_rows);
	df->result = df->counts[KPT_V_SLOW] ? KPT_DIFF_REGRESSION : KPT_DIFF_OK;
	if ((rc = make_totals(c, df)) < 0 ||
	    (rc = copy_env(c, &df->base, c->b, c->nbslots)) < 0 ||
	    (rc = copy_env(c, &df->new_, c->n, c->nnslots)) < 0)
		goto out;
	env_notes(c, df, &N);
	df->notes = kpt_arena_alloc(c->a, (N.n ? N.n : 1) * sizeof *df->notes);
	if (!df->notes)
		goto out;
	memcpy(df->notes, N.v, N.n * sizeof *df->notes);
	df->nnotes = N.n;
	rc = 0;
out:
	units_release(&U);
	free(half);
	free(pv);
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
