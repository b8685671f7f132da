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
#include "kpt_rule.h"
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

/* Run numbers -> slots of side s; all slots when runs is NULL. */
static int select_slots(struct kpt_rule_ctx *c, const struct kpt_diff_side *s, const uint32_t *runs,
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
static int match_keys(struct kpt_rule_ctx *c, struct units *U)
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

static int grow_buf(struct kpt_rule_ctx *c, size_t n)
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
static int side_stats(struct kpt_rule_ctx *c, const struct kpt_diff_side *s, const uint32_t *keys,
		      uint32_t nk, int agg, const uint32_t *slots, uint32_t nslots,
		      struct kpt_side_stats *st, double **pool, size_t *capp)
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

/* half_inf: the interval's half-width if NEW had infinitely many runs
 * (what the between-session part and the base alone leave); 0 when
 * paired. */
static void verdict_rule(struct kpt_rule_ctx *c, struct kpt_diff_row *r, double dlog, double half,
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
static int fill_row(struct kpt_rule_ctx *c, const struct unit *u, struct kpt_diff_row *r,
		    struct kpt_side_stats *sb, struct kpt_side_stats *sn)
{
	const struct kpt_side_key *kb = first_key(c->b, u->b, u->nb);
	const struct kpt_side_key *kn = first_key(c->n, u->n, u->nn);
	const struct kpt_diff_side *s = kb ? c->b : c->n;
	const struct kpt_side_key *k = kb ? kb : kn;
	int pooled = c->o.method == KPT_DIFF_POOLED_U;
	int rc;

	memset(r, 0, sizeof *r);
	r->name = kpt_rule_adup(c, side_str(s, k->name));
	r->mangled = kpt_rule_adup(c, side_str(s, k->mangled));
	r->path = kpt_rule_adup(c, side_str(s, k->path));
	r->workload = kpt_rule_adup(c, side_str(s, k->workload));
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
		r->cycles_change_pct = kpt_rule_pct(sn->cyc_mean_log - sb->cyc_mean_log);
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

static int totals_add(struct kpt_rule_ctx *c, struct kpt_strtab *names, struct total_acc **acc,
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
		t[id].t.name = kpt_rule_adup(c, name);
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

static int make_totals(struct kpt_rule_ctx *c, struct kpt_diff *df)
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

		t->change_pct = t->keys ? kpt_rule_pct(log(t->new_ns / t->base_ns)) : NAN;
		t->geomean_change_pct = t->keys ? kpt_rule_pct(acc[i].sumlog / t->keys) : NAN;
		df->totals[i] = *t;
	}
	if (rc == 0) {
		df->ntotals = nacc;
		qsort(df->totals, nacc, sizeof *df->totals, cmp_totals);
	}
	free(acc);
	return rc;
}

static int copy_env(struct kpt_rule_ctx *c, struct kpt_diff_env *dst, const struct kpt_diff_side *s,
		    uint32_t nslots)
{
	*dst = s->env;
	dst->path = kpt_rule_adup(c, s->env.path);
	dst->gpu_name = kpt_rule_adup(c, s->env.gpu_name);
	dst->gpu_slug = kpt_rule_adup(c, s->env.gpu_slug);
	dst->driver = kpt_rule_adup(c, s->env.driver);
	dst->cuda = kpt_rule_adup(c, s->env.cuda);
	dst->suite = kpt_rule_adup(c, s->env.suite);
	dst->host = kpt_rule_adup(c, s->env.host);
	dst->time = kpt_rule_adup(c, s->env.time);
	dst->commit = kpt_rule_adup(c, s->env.commit);
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

static void env_notes(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	const struct kpt_diff_env *b = &df->base, *n = &df->new_;
	const struct kpt_diff_env *sides[2] = { b, n };
	const char *names[2] = { "base", "new" };

	if (df->forced)
		kpt_rule_note(c, "gpu", 1, kpt_rule_afmt(c, "GPU models differ: '%s' vs '%s' (compared because of --force)",
					   b->gpu_name, n->gpu_name));
	if (strcmp(b->driver, n->driver) != 0)
		kpt_rule_note(c, "driver", 0, kpt_rule_afmt(c, "driver %s -> %s", b->driver[0] ? b->driver : "unknown",
					      n->driver[0] ? n->driver : "unknown"));
	if (strcmp(b->cuda, n->cuda) != 0)
		kpt_rule_note(c, "cuda", 0, kpt_rule_afmt(c, "CUDA runtime %s -> %s", b->cuda[0] ? b->cuda : "unknown",
					    n->cuda[0] ? n->cuda : "unknown"));
	if (!isnan(b->sm_mhz_median) && !isnan(n->sm_mhz_median) &&
	    fabs(n->sm_mhz_median - b->sm_mhz_median) > 0.02 * b->sm_mhz_median)
		kpt_rule_note(c, "sm_clock", 1, kpt_rule_afmt(c, "median SM clock %.0f MHz -> %.0f MHz",
						b->sm_mhz_median, n->sm_mhz_median));
	if (!isnan(b->temp_c_median) && !isnan(n->temp_c_median) &&
	    fabs(n->temp_c_median - b->temp_c_median) >= 5)
		kpt_rule_note(c, "temperature", 0, kpt_rule_afmt(c, "median GPU temperature %.0f C -> %.0f C (max %.0f -> %.0f)",
						   b->temp_c_median, n->temp_c_median, b->temp_c_max, n->temp_c_max));
	for (int i = 0; i < 2; i++) {
		const struct kpt_diff_env *e = sides[i];

		if (e->throttled_frac > 0)
			kpt_rule_note(c, "throttle", 1, kpt_rule_afmt(c, "%s: throttling in %.1f%% of env samples (NVML reasons 0x%llx)",
							names[i], 100 * e->throttled_frac,
							(unsigned long long)e->throttle_bits));
		if (e->dropped_throttle || e->dropped_clock)
			kpt_rule_note(c, "dropped", 1, kpt_rule_afmt(c, "%s: dropped %llu of %llu samples (throttled: %llu, SM clock below %.0f%% of the run's median: %llu)",
						       names[i], (unsigned long long)(e->dropped_throttle + e->dropped_clock),
						       (unsigned long long)(e->samples + e->dropped_throttle + e->dropped_clock),
						       (unsigned long long)e->dropped_throttle, 100 * df->opts.min_clock_frac,
						       (unsigned long long)e->dropped_clock));
		if (e->capped_frac > 0)
			kpt_rule_note(c, "power_cap", 0, kpt_rule_afmt(c, "%s: software power cap in %.1f%% of env samples (kept: the SM clock rule covers it)",
							 names[i], 100 * e->capped_frac));
		if (e->skipped || e->outside)
			kpt_rule_note(c, "outside", 0, kpt_rule_afmt(c, "%s: %llu launches under kpt:warmup/kpt:flush and %llu outside kpt:iter (set-up, checks) not compared",
						       names[i], (unsigned long long)e->skipped,
						       (unsigned long long)e->outside));
		if (e->ranks >= 2)
			kpt_rule_note(c, "ranks", e->ranks_differ,
			     e->ranks_differ
				     ? kpt_rule_afmt(c, "%s: %u ranks did different work (%llu to %llu launches per rank): each rank's kernels are keys of their own",
					    names[i], e->ranks, (unsigned long long)e->rank_launches_min,
					    (unsigned long long)e->rank_launches_max)
				     : kpt_rule_afmt(c, "%s: %u ranks, the same launches each: each rank's kernels are keys of their own",
					    names[i], e->ranks));
		if (e->runs < 2)
			kpt_rule_note(c, "runs", 1, kpt_rule_afmt(c, "%s has %u run(s): the rule needs >= 2 runs per side to measure run-to-run noise (record with --runs 5)",
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
			kpt_rule_note(c, "cycles", 1, kpt_rule_afmt(c, "%u SLOW/FAST key(s) changed in time but much less in cycles (time x SM clock): clocks, not code, may explain them",
						      disagree));
	}
	if (df->n_loose)
		kpt_rule_note(c, "config", 0, kpt_rule_afmt(c, "%u key(s) matched by kernel name and NVTX path only: their launch configs differ between the files",
					      df->n_loose));
	if (!c->b->iterated || !c->n->iterated)
		kpt_rule_note(c, "iterations", 0, kpt_rule_afmt(c, "%s has no '%s' ranges: each process counts as one iteration and the launches of one kernel are pooled",
						  !c->b->iterated ? names[0] : names[1], KPT_DIFF_ITER_RANGE));
}

/* NEW's measured ceilings against the mean of BASE's sessions. */
static void ceilings(struct kpt_rule_ctx *c, struct kpt_diff *df)
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
static int aggregate_units(struct kpt_rule_ctx *c, struct units *U)
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

/* The ceilings line, beside the rule's notes. */
static void ceiling_note(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	if (!isnan(df->copy_ceiling_pct) || !isnan(df->bf16_ceiling_pct))
		kpt_rule_note(c, "ceilings", 0, kpt_rule_afmt(c, "measured ceilings of new against the base's sessions: copy %+.1f%%, bf16 %+.1f%%",
						df->copy_ceiling_pct, df->bf16_ceiling_pct));
}

static int compare(struct kpt_rule_ctx *c, struct kpt_diff *df)
{
	const struct kpt_rule_ops *ops = kpt_rule_pick(&c->o);
	struct units U = { 0 };
	struct kpt_side_stats sb, sn;
	struct kpt_rule_test *t = NULL;
	struct kpt_rule_notes N = { .n = 0 };
	double *pv = NULL;
	int rc;

	c->notes = &N;
	if ((rc = select_slots(c, c->b, c->o.base_runs, c->o.n_base_runs, &c->bslots, &c->nbslots)) < 0 ||
	    (rc = select_slots(c, c->n, c->o.new_runs, c->o.n_new_runs, &c->nslots, &c->nnslots)) < 0)
		return rc;
	c->machine = KPT_MACHINE_OTHER;
	df->machine = KPT_MACHINE_OTHER;
	if (ops->prepare && (rc = ops->prepare(c, df)) < 0)
		return rc;
	if ((rc = match_keys(c, &U)) < 0 || (rc = aggregate_units(c, &U)) < 0)
		return rc;
	rc = KPT_E_NOMEM;
	df->rows = kpt_arena_calloc(c->a, U.n ? U.n : 1, sizeof *df->rows);
	t = calloc(U.n + 1, sizeof *t);
	pv = calloc(U.n + 1, sizeof *pv);
	if (!df->rows || !t || !pv)
		goto out;
	c->nkeys = (uint32_t)U.n;
	df->nrows = U.n;
	df->base_sessions = c->b->nsessions ? c->b->nsessions : 1;
	df->paired = c->o.paired;
	df->prior_between = !c->o.paired && df->base_sessions < 2 && c->machine == KPT_MACHINE_OTHER;
	/* Pass 1: rows, and each key through the rule. */
	for (uint32_t i = 0; i < U.n; i++) {
		struct kpt_diff_row *r = &df->rows[i];

		if ((rc = fill_row(c, &U.u[i], r, &sb, &sn)) < 0)
			goto out;
		t[i].p = NAN;
		if (U.u[i].loose)
			df->n_loose++;
		if (r->verdict != KPT_V_SAME) /* NEW, GONE, AMBG without data: untested */
			continue;
		if (!ops->own_verdicts) {
			r->change_pct = kpt_rule_pct(sn.mean_log - sb.mean_log);
			r->base_sd_pct = 100 * sb.sd_log;
			r->new_sd_pct = 100 * sn.sd_log;
		}
		if ((rc = ops->key(c, i, r, &sb, &sn, t)) < 0)
			goto out;
	}
	if (ops->test && (rc = ops->test(c, df, t)) < 0)
		goto out;
	if (!ops->own_verdicts) {
		for (uint32_t i = 0; i < U.n; i++) {
			pv[i] = t[i].p;
			df->n_tested += !isnan(t[i].p);
		}
		if ((rc = kpt_holm(pv, U.n)) < 0)
			goto out;
		for (uint32_t i = 0; i < U.n; i++) {
			struct kpt_diff_row *r = &df->rows[i];

			if (r->verdict == KPT_V_NEW || r->verdict == KPT_V_GONE || !r->base_runs || !r->new_runs)
				continue;
			r->p_holm = pv[i];
			verdict_rule(c, r, log1p(r->change_pct / 100), t[i].half, t[i].half_inf, r->base_runs, r->new_runs);
		}
		/* the families' shifts are tested alongside the keys */
		for (size_t i = 0; i < df->nshifts; i++)
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
	env_notes(c, df);
	if (ops->finish)
		ops->finish(c, df);
	ceiling_note(c, df);
	df->notes = kpt_arena_alloc(c->a, (N.n ? N.n : 1) * sizeof *df->notes);
	if (!df->notes)
		goto out;
	memcpy(df->notes, N.v, N.n * sizeof *df->notes);
	df->nnotes = N.n;
	rc = 0;
out:
	if (ops->finish && c->state)
		ops->finish(c, df);
	c->notes = NULL;
	units_release(&U);
	free(t);
	free(pv);
	return rc < 0 ? kpt_diag_set(c->d, rc, "cannot compare '%s' with '%s': %s",
				     c->b->env.path, c->n->env.path, kpt_err_name(rc)) : 0;
}

int kpt_diff_compare(const struct kpt_diff_side *base, const struct kpt_diff_side *new_,
		     const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d)
{
	struct diff_owner *own;
	struct kpt_rule_ctx c;
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
