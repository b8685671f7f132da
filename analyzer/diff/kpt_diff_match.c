/* kpt_diff_match.c - which keys of BASE and NEW one row compares: matching
 * by identity, the loose fallback when launch configs changed, and the
 * grouping of many ordinal launches into one aggregated key
 * (docs/architecture.md "Kernel identity"). Steps of kpt_diff_compare
 * (kpt_diff_steps.h). Cost: O(keys) hash lookups. */
#include <stdlib.h>
#include <string.h>

#include "kpt_diff_steps.h"
#include "kpt_grow.h"

#define NO_ID UINT32_MAX

static int unit_add(uint32_t **v, uint32_t *n, uint32_t *cap, uint32_t k)
{
	if (kpt_grow_u32(v, cap, (size_t)*n + 1, sizeof **v) < 0)
		return KPT_E_NOMEM;
	(*v)[(*n)++] = k;
	return 0;
}

static int units_new(struct kpt_diff_units *U, uint32_t *id)
{
	if (kpt_grow_u32(&U->u, &U->cap, (size_t)U->n + 1, sizeof *U->u) < 0)
		return KPT_E_NOMEM;
	memset(&U->u[U->n], 0, sizeof U->u[U->n]);
	*id = U->n++;
	return 0;
}

void kpt_diff_units_release(struct kpt_diff_units *U)
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
int kpt_diff_match_keys(struct kpt_rule_ctx *c, struct kpt_diff_units *U)
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

/* Folds groups of many ordinal keys (one kernel name in one NVTX path,
 * at least aggregate_min units) into one unit each: the group is compared
 * by its time per iteration. Loose units are left alone. */
int kpt_diff_aggregate_units(struct kpt_rule_ctx *c, struct kpt_diff_units *U)
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
		const struct kpt_diff_unit *u = &U->u[i];
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
		struct kpt_diff_unit *u = &U->u[i];
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
