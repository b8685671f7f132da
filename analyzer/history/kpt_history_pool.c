/* kpt_history_pool.c - change points on a pool of runners (kpt_history_pool.h;
 * docs/history.md, "Change points on a pool of runners"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_diff.h"
#include "kpt_history_pool.h"
#include "kpt_progress.h"
#include "kpt_stats.h"
#include "kpt_strtab.h"

#define NONE UINT32_MAX
#define FAMILY_SCALE 1e6            /* a family series holds exp(effect) x this: positive, ns-like */

void kpt_pool_opts_default(struct kpt_pool_opts *o)
{
	memset(o, 0, sizeof *o);
	o->cp = (struct kpt_cp_opts){ 1.0, 0.001, 3 };
	o->aggregate_min = 3;
	o->family_min = 6;
	o->min_machines = 3;
	o->head = 10;
	o->threshold_pct = 2;
}

void kpt_pool_family(const char *workload, const char *name, char *buf, size_t size)
{
	kpt_diff_family(workload, name, buf, size);
}

/* Working state of one detect. Matrices are [unit][session]. */
struct pool {
	const struct kpt_history_set *set;
	const struct kpt_pool_opts *o;
	struct kpt_pool_result *r;
	uint32_t ns, nk, nu, nf;    /* sessions, keys, units, families with an effect */
	uint32_t *machine;          /* [ns] machine index */
	uint32_t *unit_of;          /* [nk] */
	uint32_t *first;            /* [nu] first key of the unit */
	uint32_t *members;          /* [nu] keys in the unit */
	uint32_t *fam_of;           /* [nu] family index, NONE: no effect taken out */
	double *val;                /* [nu][ns] summed centres, NAN where incomplete */
	double *effect;             /* [nf][ns] log machine effect, NAN where unknown */
	uint32_t *fam_units;        /* [nf] */
	const char **fam_name;      /* [nf] */
	double *tmp;                /* [max(nu, ns)] */
	uint32_t *mcount;           /* [machines] scratch for the agreement test */
	double *msum;
	uint32_t *touched;
};

/* The machines: sessions that share a GPU UUID (one card, any boot) or a
 * boot id (the GPUs of one host boot, which move together:
 * docs/decision-rule.md, "Hosts, not GPUs, are the unit") are one machine,
 * by union-find over the two; a session with neither is a machine of its
 * own. */
static uint32_t uf_find(uint32_t *up, uint32_t x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

static int machines_of(struct pool *p, struct kpt_strtab *t)
{
	struct kpt_strtab ids;
	/* ids: at most two (a UUID and a boot id) per session */
	uint32_t *up = malloc((p->ns + 1) * sizeof *up), *first = malloc((2 * p->ns + 1) * sizeof *first);
	char buf[96];
	int rc = 0;

	if (!up || !first) {
		free(up);
		free(first);
		return KPT_E_NOMEM;
	}
	for (uint32_t i = 0; i < 2 * p->ns + 1; i++)
		first[i] = UINT32_MAX;
	kpt_strtab_init(&ids);
	for (uint32_t s = 0; s < p->ns && rc == 0; s++) {
		const struct kpt_history_session *se = &p->set->sessions[s];
		const char *key[2] = { se->gpu_uuid, se->env.boot };

		up[s] = s;
		for (int k = 0; k < 2 && rc == 0; k++) {
			uint32_t id;
			char kb[160];

			if (!key[k] || !key[k][0])
				continue;
			snprintf(kb, sizeof kb, "%c:%s", k ? 'b' : 'u', key[k]); /* UUIDs and boot ids apart */
			if ((rc = kpt_strtab_intern(&ids, kb, strlen(kb), &id)) < 0)
				break;
			if (first[id] == UINT32_MAX)
				first[id] = s;
			else
				up[uf_find(up, s)] = uf_find(up, first[id]);
		}
	}
	for (uint32_t s = 0; s < p->ns && rc == 0; s++) {
		const struct kpt_history_session *se = &p->set->sessions[s];
		uint32_t r = uf_find(up, s);

		if (!se->gpu_uuid[0] && !(se->env.boot && se->env.boot[0]) && r == s)
			snprintf(buf, sizeof buf, "\x1fsession %lld", (long long)se->id);
		else
			snprintf(buf, sizeof buf, "\x1fmachine %u", r);
		rc = kpt_strtab_intern(t, buf, strlen(buf), &p->machine[s]);
	}
	if (rc == 0)
		p->r->machines = kpt_strtab_count(t);
	kpt_strtab_release(&ids);
	free(first);
	free(up);
	return rc < 0 ? rc : 0;
}

/* Units: a key, or all keys of one name and path when there are
 * aggregate_min or more (per-expert launches summed). */
static int make_units(struct pool *p, struct kpt_strtab *t)
{
	uint32_t *count = calloc(p->nk + 1, sizeof *count), *unit_of_group = malloc((p->nk + 1) * sizeof *unit_of_group);
	char *buf = NULL;
	size_t cap = 0;
	int rc = KPT_E_NOMEM;

	if (!count || !unit_of_group)
		goto out;
	for (uint32_t k = 0; k < p->nk; k++) {
		const struct kpt_history_key *key = &p->set->series[k].key;
		size_t ln = strlen(key->name), lp = strlen(key->path);

		if (ln + lp + 2 > cap) {
			char *nb = realloc(buf, ln + lp + 2);

			if (!nb)
				goto out;
			buf = nb;
			cap = ln + lp + 2;
		}
		memcpy(buf, key->name, ln);
		buf[ln] = '\x1f';
		memcpy(buf + ln + 1, key->path, lp);
		if ((rc = kpt_strtab_intern(t, buf, ln + lp + 1, &p->unit_of[k])) < 0)
			goto out;
		rc = KPT_E_NOMEM;
		count[p->unit_of[k]]++;
		unit_of_group[p->unit_of[k]] = NONE;
	}
	for (uint32_t k = 0; k < p->nk; k++) {
		uint32_t g = p->unit_of[k];

		if (count[g] >= p->o->aggregate_min && unit_of_group[g] != NONE) {
			p->unit_of[k] = unit_of_group[g];
			p->members[p->unit_of[k]]++;
			continue;
		}
		p->first[p->nu] = k;
		p->members[p->nu] = 1;
		if (count[g] >= p->o->aggregate_min)
			unit_of_group[g] = p->nu;
		p->unit_of[k] = p->nu++;
	}
	rc = 0;
out:
	free(count);
	free(unit_of_group);
	free(buf);
	return rc;
}

/* val[u][s]: the unit's summed centres where every one of its keys has a
 * point in session s (a partial sum is not comparable), else NAN. */
static int unit_values(struct pool *p)
{
	uint32_t *have = calloc((size_t)p->nu * p->ns + 1, sizeof *have);

	if (!have)
		return KPT_E_NOMEM;
	for (size_t i = 0; i < (size_t)p->nu * p->ns; i++)
		p->val[i] = 0;
	for (uint32_t k = 0; k < p->nk; k++) {
		const struct kpt_history_series *se = &p->set->series[k];
		size_t row = (size_t)p->unit_of[k] * p->ns;

		for (uint32_t i = 0; i < se->n; i++) {
			p->val[row + se->sess[i]] += se->centre_ns[i];
			have[row + se->sess[i]]++;
		}
	}
	for (uint32_t u = 0; u < p->nu; u++)
		for (uint32_t s = 0; s < p->ns; s++) {
			size_t i = (size_t)u * p->ns + s;

			if (have[i] != p->members[u] || !(p->val[i] > 0) || !isfinite(p->val[i]))
				p->val[i] = NAN;
		}
	free(have);
	return 0;
}

/* Families: the kind family when it has family_min units, else the
 * workload family of the units left, else all units left, else none. */
static int families(struct pool *p)
{
	struct kpt_strtab t[3];
	uint32_t *id[3] = { NULL, NULL, NULL }, *cnt[3] = { NULL, NULL, NULL }, *map = NULL;
	char buf[160];
	int rc = KPT_E_NOMEM;

	for (int l = 0; l < 3; l++)
		kpt_strtab_init(&t[l]);
	for (int l = 0; l < 3; l++)
		if (!(id[l] = malloc((p->nu + 1) * sizeof *id[l])) || !(cnt[l] = calloc(p->nu + 1, sizeof *cnt[l])))
			goto out;
	for (uint32_t u = 0; u < p->nu; u++) {
		const struct kpt_history_key *k = &p->set->series[p->first[u]].key;
		const char *dot = strchr(k->workload, '.');
		size_t wl = dot ? (size_t)(dot - k->workload) : strlen(k->workload);

		kpt_pool_family(k->workload, k->name, buf, sizeof buf);
		if ((rc = kpt_strtab_intern(&t[0], buf, strlen(buf), &id[0][u])) < 0 ||
		    (rc = kpt_strtab_intern(&t[1], k->workload, wl > 64 ? 64 : wl, &id[1][u])) < 0 ||
		    (rc = kpt_strtab_intern(&t[2], "(all)", 5, &id[2][u])) < 0)
			goto out;
		rc = KPT_E_NOMEM;
		cnt[0][id[0][u]]++;
	}
	/* a level counts only the units the level above left */
	for (int l = 1; l < 3; l++)
		for (uint32_t u = 0; u < p->nu; u++) {
			int left = 1;

			for (int m = 0; m < l; m++)
				left = left && cnt[m][id[m][u]] < p->o->family_min;
			cnt[l][id[l][u]] += (uint32_t)left;
		}
	if (!(map = malloc(3 * (p->nu + 1) * sizeof *map)))
		goto out;
	for (uint32_t i = 0; i < 3 * (p->nu + 1); i++)
		map[i] = NONE;
	for (uint32_t u = 0; u < p->nu; u++) {
		p->fam_of[u] = NONE;
		for (int l = 0; l < 3; l++) {
			uint32_t f = id[l][u], *m = &map[(uint32_t)l * (p->nu + 1) + f];

			if (cnt[l][f] < p->o->family_min)
				continue;
			if (*m == NONE) {
				const char *s = kpt_strtab_get(&t[l], f, NULL);

				*m = p->nf;
				if (!(p->fam_name[p->nf++] = kpt_arena_strndup(&p->r->arena, s, strlen(s))))
					goto out;
			}
			p->fam_of[u] = *m;
			p->fam_units[*m]++;
			break;
		}
	}
	rc = 0;
out:
	for (int l = 0; l < 3; l++) {
		kpt_strtab_release(&t[l]);
		free(id[l]);
		free(cnt[l]);
	}
	free(map);
	return rc;
}

/* effect[f][s]: median over f's units present in s of (log value - the
 * unit's median log level); NAN (unknown: nothing taken out, no point in
 * the family's series) where fewer than half of family_min are present (a
 * median of one or two keys would absorb their own step). */
static void effects(struct pool *p, double *level)
{
	for (uint32_t u = 0; u < p->nu; u++) {
		uint32_t m = 0;

		for (uint32_t s = 0; s < p->ns; s++)
			if (!isnan(p->val[(size_t)u * p->ns + s]))
				p->tmp[m++] = log(p->val[(size_t)u * p->ns + s]);
		level[u] = m ? kpt_median_f64(p->tmp, m) : 0;
	}
	for (uint32_t f = 0; f < p->nf; f++)
		for (uint32_t s = 0; s < p->ns; s++) {
			uint32_t m = 0;

			for (uint32_t u = 0; u < p->nu; u++)
				if (p->fam_of[u] == f && !isnan(p->val[(size_t)u * p->ns + s]))
					p->tmp[m++] = log(p->val[(size_t)u * p->ns + s]) - level[u];
			p->effect[(size_t)f * p->ns + s] = 2 * m >= p->o->family_min ? kpt_median_f64(p->tmp, m) : NAN;
		}
}

static double effect_at(const struct pool *p, uint32_t u, uint32_t s)
{
	double e = p->fam_of[u] == NONE ? 0 : p->effect[(size_t)p->fam_of[u] * p->ns + s];

	return isnan(e) ? 0 : e;
}

/* A new output series of up to ns points. */
static struct kpt_pool_series *new_series(struct pool *p, enum kpt_pool_kind kind)
{
	struct kpt_pool_series *x = &p->r->series[p->r->nseries];

	memset(x, 0, sizeof *x);
	x->kind = kind;
	x->family = "";
	x->sess = kpt_arena_alloc(&p->r->arena, (p->ns ? p->ns : 1) * sizeof *x->sess);
	x->ns = kpt_arena_alloc(&p->r->arena, (p->ns ? p->ns : 1) * sizeof *x->ns);
	if (!x->sess || !x->ns)
		return NULL;
	p->r->nseries++;
	return x;
}

static int build_series(struct pool *p)
{
	/* units */
	for (uint32_t u = 0; u < p->nu; u++) {
		const struct kpt_history_series *se = &p->set->series[p->first[u]];
		struct kpt_pool_series *x = new_series(p, p->members[u] > 1 ? KPT_POOL_GROUP : KPT_POOL_KEY);

		if (!x)
			return KPT_E_NOMEM;
		x->se = se;
		x->name = se->key.name;
		x->family = p->fam_of[u] == NONE ? "" : p->fam_name[p->fam_of[u]];
		x->nkeys = p->members[u];
		for (uint32_t s = 0; s < p->ns; s++) {
			double v = p->val[(size_t)u * p->ns + s];

			if (isnan(v))
				continue;
			x->sess[x->n] = s;
			x->ns[x->n++] = v * exp(-effect_at(p, u, s));
		}
	}
	/* family effects */
	for (uint32_t f = 0; f < p->nf; f++) {
		struct kpt_pool_series *x = new_series(p, KPT_POOL_FAMILY);

		if (!x)
			return KPT_E_NOMEM;
		x->name = p->fam_name[f];
		x->nkeys = p->fam_units[f];
		for (uint32_t s = 0; s < p->ns; s++) {
			if (isnan(p->effect[(size_t)f * p->ns + s]))
				continue;
			x->sess[x->n] = s;
			x->ns[x->n++] = FAMILY_SCALE * exp(p->effect[(size_t)f * p->ns + s]);
		}
	}
	/* workload totals: every key's centre with its family's effect out */
	for (uint32_t k = 0; k < p->nk && !p->o->no_totals; k++) {
		const char *w = p->set->series[k].key.workload;
		struct kpt_pool_series *x;
		int seen = !w[0];

		for (uint32_t e = 0; e < k && !seen; e++)
			seen = strcmp(p->set->series[e].key.workload, w) == 0;
		if (seen)
			continue;
		if (!(x = new_series(p, KPT_POOL_TOTAL)))
			return KPT_E_NOMEM;
		x->name = w;
		for (uint32_t s = 0; s < p->ns; s++)
			p->tmp[s] = 0;
		for (uint32_t e = k; e < p->nk; e++) {
			const struct kpt_history_series *se = &p->set->series[e];

			if (strcmp(se->key.workload, w) != 0)
				continue;
			x->nkeys++;
			for (uint32_t i = 0; i < se->n; i++)
				p->tmp[se->sess[i]] += se->centre_ns[i] * exp(-effect_at(p, p->unit_of[e], se->sess[i]));
		}
		for (uint32_t s = 0; s < p->ns; s++)
			if (p->tmp[s] > 0 && isfinite(p->tmp[s])) {
				x->sess[x->n] = s;
				x->ns[x->n++] = p->tmp[s];
			}
	}
	return 0;
}

/* Machines after change point c of x (up to the next one) and how many of
 * them moved beyond half the step in its direction: each machine's mean
 * log value there against the level before the step. */
static void agreement(struct pool *p, const struct kpt_pool_series *x, const struct kpt_cp *cps, uint32_t ncp,
		      uint32_t c, uint32_t *after, uint32_t *carry)
{
	uint32_t b = c + 1 < ncp ? cps[c + 1].at : x->n, nt = 0;
	double d = log(cps[c].after_ns / cps[c].before_ns), lb = log(cps[c].before_ns);

	*after = *carry = 0;
	for (uint32_t i = cps[c].at; i < b; i++) {
		uint32_t m = p->machine[x->sess[i]];

		if (!p->mcount[m]++) {
			p->msum[m] = 0;
			p->touched[nt++] = m;
		}
		p->msum[m] += log(x->ns[i]) - lb;
	}
	for (uint32_t t = 0; t < nt; t++) {
		uint32_t m = p->touched[t];
		double dev = p->msum[m] / p->mcount[m];

		*carry += (uint32_t)(d > 0 ? dev > d / 2 : dev < d / 2);
		p->mcount[m] = 0;
	}
	*after = nt;
}

static int detect_all(struct pool *p, struct kpt_diag *d)
{
	size_t cap = 0;
	/* a pool smaller than the minimum (one runner) needs every machine */
	const uint32_t need = p->o->min_machines < p->r->machines ? p->o->min_machines : p->r->machines;

	p->r->min_machines = need;
	kpt_progress_expect(p->r->nseries);
	for (size_t si = 0; si < p->r->nseries; si++) {
		const struct kpt_pool_series *x = &p->r->series[si];
		struct kpt_cp *cps = NULL;
		uint32_t ncp = 0;
		int rc;

		if ((rc = kpt_cp_detect(x->ns, x->n, &p->o->cp, &cps, &ncp, d)) < 0)
			return rc;
		kpt_progress_add(1);
		for (uint32_t c = 0; c < ncp; c++) {
			struct kpt_pool_cp *k;
			uint32_t after, carry;

			agreement(p, x, cps, ncp, c, &after, &carry);
			if (need && (carry < need || 2 * carry <= after)) {
				p->r->unbacked++;
				continue;
			}
			if (p->r->ncps == cap) {
				size_t nc = cap ? 2 * cap : 64;
				struct kpt_pool_cp *nb = kpt_arena_alloc(&p->r->arena, nc * sizeof *nb);

				if (!nb) {
					free(cps);
					return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
				}
				if (cap)
					memcpy(nb, p->r->cps, cap * sizeof *nb);
				p->r->cps = nb;
				cap = nc;
			}
			k = &p->r->cps[p->r->ncps++];
			k->series = (uint32_t)si;
			k->cp = cps[c];
			k->machines_after = after;
			k->machines_carry = carry;
			k->head = x->sess[cps[c].at] + p->o->head >= p->ns;
			k->regression = k->head && cps[c].step_pct >= p->o->threshold_pct;
			p->r->regressions += (uint32_t)k->regression;
		}
		free(cps);
	}
	return 0;
}

int kpt_history_pool_detect(const struct kpt_history_set *set, const struct kpt_pool_opts *o,
			    struct kpt_pool_result **out, struct kpt_diag *d)
{
	struct kpt_pool_opts def;
	struct kpt_strtab machines, groups;
	struct pool p = { 0 };
	double *level = NULL;
	size_t cells, nmax;
	int rc = KPT_E_NOMEM;

	*out = NULL;
	if (!o) {
		kpt_pool_opts_default(&def);
		o = &def;
	}
	kpt_strtab_init(&machines);
	kpt_strtab_init(&groups);
	p.set = set;
	p.o = o;
	p.ns = (uint32_t)set->nsessions;
	p.nk = (uint32_t)set->nseries;
	cells = (size_t)p.nk * p.ns + 1;
	nmax = (p.nk > p.ns ? p.nk : p.ns) + 1;
	if (!(p.r = calloc(1, sizeof *p.r)))
		goto out;
	kpt_arena_init(&p.r->arena);
	p.machine = malloc((p.ns + 1) * sizeof *p.machine);
	p.unit_of = malloc((p.nk + 1) * sizeof *p.unit_of);
	p.first = malloc((p.nk + 1) * sizeof *p.first);
	p.members = calloc(p.nk + 1, sizeof *p.members);
	p.fam_of = malloc((p.nk + 1) * sizeof *p.fam_of);
	p.fam_units = calloc(p.nk + 1, sizeof *p.fam_units);
	p.fam_name = calloc(p.nk + 1, sizeof *p.fam_name);
	p.val = malloc(cells * sizeof *p.val);
	p.effect = calloc(cells, sizeof *p.effect);
	p.tmp = malloc(nmax * sizeof *p.tmp);
	p.mcount = calloc(p.ns + 1, sizeof *p.mcount);
	p.msum = malloc((p.ns + 1) * sizeof *p.msum);
	p.touched = malloc((p.ns + 1) * sizeof *p.touched);
	level = malloc((p.nk + 1) * sizeof *level);
	/* series: units + families + totals, each at most one per key */
	p.r->series = kpt_arena_calloc(&p.r->arena, 3 * (size_t)p.nk + 1, sizeof *p.r->series);
	if (!p.machine || !p.unit_of || !p.first || !p.members || !p.fam_of || !p.fam_units || !p.fam_name ||
	    !p.val || !p.effect || !p.tmp || !p.mcount || !p.msum || !p.touched || !level || !p.r->series)
		goto out;
	if ((rc = machines_of(&p, &machines)) < 0 || (rc = make_units(&p, &groups)) < 0 ||
	    (rc = unit_values(&p)) < 0 || (rc = families(&p)) < 0)
		goto out;
	effects(&p, level);
	if ((rc = build_series(&p)) < 0)
		goto out;
	if ((rc = detect_all(&p, d)) < 0)
		goto fail;
	*out = p.r;
	p.r = NULL;
	rc = 0;
out:
	if (rc < 0)
		rc = kpt_diag_set(d, rc, "out of memory detecting change points");
fail:
	kpt_strtab_release(&machines);
	kpt_strtab_release(&groups);
	kpt_pool_result_destroy(p.r);
	free(p.machine);
	free(p.unit_of);
	free(p.first);
	free(p.members);
	free(p.fam_of);
	free(p.fam_units);
	free(p.fam_name);
	free(p.val);
	free(p.effect);
	free(p.tmp);
	free(p.mcount);
	free(p.msum);
	free(p.touched);
	free(level);
	return rc;
}

void kpt_pool_result_destroy(struct kpt_pool_result *r)
{
	if (!r)
		return;
	kpt_arena_release(&r->arena);
	free(r);
}

struct pick_pt {
	uint32_t s;
	double v;
};

static int cmp_pick(const void *a, const void *b)
{
	uint32_t x = ((const struct pick_pt *)a)->s, y = ((const struct pick_pt *)b)->s;

	return (x > y) - (x < y);
}

int kpt_history_set_pick(const struct kpt_history_set *set, const uint32_t *ord, uint32_t m,
			 struct kpt_history_set **out, struct kpt_diag *d)
{
	struct kpt_history_set *r = calloc(1, sizeof *r);
	uint32_t *inv = malloc((set->nsessions + 1) * sizeof *inv);
	struct pick_pt *pt = malloc((m + 1) * sizeof *pt);
	int rc = KPT_E_NOMEM;

	*out = NULL;
	if (r)
		kpt_arena_init(&r->arena);
	if (!r || !inv || !pt)
		goto out;
	for (size_t s = 0; s < set->nsessions; s++)
		inv[s] = NONE;
	for (uint32_t i = 0; i < m; i++) {
		if (ord[i] >= set->nsessions || inv[ord[i]] != NONE) {
			rc = kpt_diag_set(d, KPT_E_INVAL, "session index %u is out of range or repeated", ord[i]);
			goto fail;
		}
		inv[ord[i]] = i;
	}
	r->sessions = kpt_arena_calloc(&r->arena, m + 1, sizeof *r->sessions);
	r->series = kpt_arena_calloc(&r->arena, set->nseries + 1, sizeof *r->series);
	if (!r->sessions || !r->series)
		goto out;
	for (uint32_t i = 0; i < m; i++)
		r->sessions[i] = set->sessions[ord[i]];
	r->nsessions = m;
	for (size_t k = 0; k < set->nseries; k++) {
		const struct kpt_history_series *se = &set->series[k];
		struct kpt_history_series *x = &r->series[k];
		uint32_t n = 0;

		x->key = se->key;
		for (uint32_t i = 0; i < se->n; i++)
			if (inv[se->sess[i]] != NONE)
				pt[n++] = (struct pick_pt){ inv[se->sess[i]], se->centre_ns[i] };
		qsort(pt, n, sizeof *pt, cmp_pick);
		x->sess = kpt_arena_alloc(&r->arena, (n + 1) * sizeof *x->sess);
		x->centre_ns = kpt_arena_alloc(&r->arena, (n + 1) * sizeof *x->centre_ns);
		if (!x->sess || !x->centre_ns)
			goto out;
		for (uint32_t i = 0; i < n; i++) {
			x->sess[i] = pt[i].s;
			x->centre_ns[i] = pt[i].v;
		}
		x->n = n;
	}
	r->nseries = set->nseries;
	*out = r;
	r = NULL;
	rc = 0;
out:
	if (rc < 0)
		rc = kpt_diag_set(d, rc, "out of memory");
fail:
	kpt_history_set_destroy(r);
	free(inv);
	free(pt);
	return rc;
}
