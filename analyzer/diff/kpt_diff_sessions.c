/* kpt_diff_sessions.c - sides of several sessions, and synthetic plants.
 *
 * A baseline made on several machines (or days) is several files, one per
 * session. kpt_diff_side_combine() puts their per-key, per-run samples into
 * one side whose runs carry the index of the session they came from, so the
 * rule can measure the between-session part of the noise
 * (docs/decision-rule.md, "Sessions"). Keys are matched across files by
 * their identity (demangled name, raw name with nvcc's path hashes zeroed,
 * NVTX path, workload, grid,
 * block, ordinal); a key missing from a session simply has no runs there.
 *
 * Cost: O(total samples) copies and one hash lookup per key per input.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_demangle.h"
#include "kpt_diff_private.h"
#include "kpt_grow.h"

#define NO_ID UINT32_MAX

static int intern(struct kpt_diff_side *dst, const struct kpt_diff_side *src, uint32_t id,
		  uint32_t *out)
{
	size_t len = 0;
	const char *s = kpt_strtab_get(&src->strs, id, &len);

	return kpt_strtab_intern(&dst->strs, s ? s : "", s ? len : 0, out);
}

/* The id in dst of src's raw name id as an identity across builds
 * (kpt_mangled_canon: nvcc's anonymous-namespace hashes follow the
 * checkout's path, so one kernel built in two folders would be two keys). */
static int canon_id(struct kpt_diff_side *dst, const struct kpt_diff_side *src, uint32_t id, uint32_t *out)
{
	size_t len = 0;
	const char *s = kpt_strtab_get(&src->strs, id, &len);
	char *cn = kpt_mangled_canon(s ? s : "");
	int rc;

	if (!cn)
		return KPT_E_NOMEM;
	rc = kpt_strtab_intern(&dst->strs, cn, strlen(cn), out);
	free(cn);
	return rc;
}

static const char *adup(struct kpt_diff_side *s, const char *v)
{
	return kpt_arena_strndup(&s->arena, v ? v : "", v ? strlen(v) : 0);
}

static int vec_copy(struct kpt_sample_vec *dst, const struct kpt_sample_vec *src)
{
	*dst = *src;
	dst->ns = NULL;
	dst->mhz = NULL;
	dst->cap = src->n;
	if (!src->n)
		return 0;
	dst->ns = malloc(src->n * sizeof *dst->ns);
	if (!dst->ns)
		return KPT_E_NOMEM;
	memcpy(dst->ns, src->ns, src->n * sizeof *dst->ns);
	if (src->mhz) {
		dst->mhz = malloc(src->n * sizeof *dst->mhz);
		if (!dst->mhz)
			return KPT_E_NOMEM;
		memcpy(dst->mhz, src->mhz, src->n * sizeof *dst->mhz);
	}
	return 0;
}

static int add_key(struct kpt_diff_side *c, const struct kpt_side_key *proto, uint32_t *out)
{
	struct kpt_side_key *k;

	if (kpt_grow_u32(&c->keys, &c->capkeys, (size_t)c->nkeys + 1, sizeof *c->keys) < 0)
		return KPT_E_NOMEM;
	k = &c->keys[c->nkeys];
	*k = *proto;
	k->runs = calloc(c->nruns ? c->nruns : 1, sizeof *k->runs);
	if (!k->runs)
		return KPT_E_NOMEM;
	*out = c->nkeys++;
	return 0;
}

static void env_add(struct kpt_diff_env *e, const struct kpt_diff_env *x)
{
	e->kernels += x->kernels;
	e->samples += x->samples;
	e->skipped += x->skipped;
	e->outside += x->outside;
	e->dropped_throttle += x->dropped_throttle;
	e->dropped_clock += x->dropped_clock;
	e->approx_runs += x->approx_runs;
	e->env_samples += x->env_samples;
	e->throttle_bits |= x->throttle_bits;
}

static int combine(const struct kpt_diff_side *const *in, size_t n, uint32_t keep,
		   const char *label, struct kpt_diff_side *c)
{
	struct kpt_wmap ids;
	uint32_t *take = NULL, off = 0, empty, w[11];
	double capped = 0, throttled = 0, envn = 0;
	int rc = KPT_E_NOMEM;

	kpt_wmap_init(&ids, 11);
	take = calloc(n + 1, sizeof *take);
	if (!take || kpt_strtab_intern(&c->strs, "", 0, &empty) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		take[i] = keep && keep < in[i]->nruns ? keep : in[i]->nruns;
		c->nruns += take[i];
		c->nsessions += in[i]->nsessions ? in[i]->nsessions : 1;
	}
	c->run_ids = kpt_arena_calloc(&c->arena, c->nruns ? c->nruns : 1, sizeof *c->run_ids);
	c->run_session = kpt_arena_calloc(&c->arena, c->nruns ? c->nruns : 1, sizeof *c->run_session);
	c->sessions = kpt_arena_calloc(&c->arena, c->nsessions ? c->nsessions : 1, sizeof *c->sessions);
	if (!c->run_ids || !c->run_session || !c->sessions)
		goto out;
	c->nsessions = 0;
	for (size_t i = 0; i < n; i++) {
		const struct kpt_diff_side *s = in[i];
		uint32_t sbase = c->nsessions;

		for (uint32_t q = 0; q < (s->nsessions ? s->nsessions : 1); q++) {
			struct kpt_diff_session *d = &c->sessions[c->nsessions++];

			if (s->nsessions) {
				const struct kpt_diff_session *x = &s->sessions[q];

				*d = *x;
				d->path = adup(c, x->path);
				d->uuid = adup(c, x->uuid);
				d->host = adup(c, x->host);
				d->boot = adup(c, x->boot);
				d->time = adup(c, x->time);
				d->probe_where = adup(c, x->probe_where ? x->probe_where : "");
			} else {
				d->path = adup(c, s->env.path);
				d->uuid = d->host = d->boot = d->time = d->probe_where = adup(c, "");
				d->settle_us = -1;
			}
			if (!d->path || !d->uuid || !d->host || !d->boot || !d->time || !d->probe_where)
				goto out;
			d->runs = 0;
		}
		for (uint32_t r = 0; r < take[i]; r++) {
			uint32_t sess = sbase + (s->run_session ? s->run_session[r] : 0);

			c->run_ids[off + r] = off + r;
			c->run_session[off + r] = sess;
			c->sessions[sess].runs++;
		}
		for (uint32_t k = 0; k < s->nkeys; k++) {
			const struct kpt_side_key *K = &s->keys[k];
			struct kpt_side_key proto = *K;
			uint32_t id;
			int added;

			if (intern(c, s, K->name, &proto.name) < 0 || intern(c, s, K->mangled, &proto.mangled) < 0 ||
			    intern(c, s, K->path, &proto.path) < 0 || intern(c, s, K->workload, &proto.workload) < 0 ||
			    canon_id(c, s, K->mangled, &w[1]) < 0)
				goto out;
			w[0] = proto.name;
			w[2] = proto.path;
			w[3] = proto.workload;
			memcpy(w + 4, K->grid, sizeof K->grid);
			memcpy(w + 7, K->block, 12);
			w[10] = K->ordinal;
			if (kpt_wmap_put(&ids, w, &id, &added) < 0)
				goto out;
			if (added && add_key(c, &proto, &id) < 0)
				goto out;
			for (uint32_t r = 0; r < take[i]; r++)
				if (vec_copy(&c->keys[id].runs[off + r], &K->runs[r]) < 0)
					goto out;
		}
		off += take[i];
		env_add(&c->env, &s->env);
		c->iterated |= s->iterated;
		envn += s->env.env_samples;
		capped += s->env.capped_frac * s->env.env_samples;
		throttled += s->env.throttled_frac * s->env.env_samples;
	}
	{
		/* Environment of the whole: summed counts (above), the rest
		 * from the first session and the newest time. */
		const struct kpt_diff_env *f = &in[0]->env;
		const char *newest = f->time;

		for (size_t i = 1; i < n; i++)
			if (strcmp(in[i]->env.time, newest) > 0)
				newest = in[i]->env.time;
		if (kpt_diff_env_combined(c, f, label ? label : f->path, newest, envn, capped, throttled) < 0)
			goto out;
	}
	rc = 0;
out:
	kpt_wmap_release(&ids);
	free(take);
	return rc;
}

int kpt_diff_env_combined(struct kpt_diff_side *c, const struct kpt_diff_env *first, const char *path,
			  const char *newest, double envn, double capped, double throttled)
{
	struct kpt_diff_env *e = &c->env;

	e->path = adup(c, path);
	e->gpu_name = adup(c, first->gpu_name);
	e->gpu_slug = adup(c, first->gpu_slug);
	e->driver = adup(c, first->driver);
	e->cuda = adup(c, first->cuda);
	e->suite = adup(c, first->suite);
	e->host = adup(c, first->host);
	e->time = adup(c, newest);
	e->commit = adup(c, first->commit);
	e->runs = c->nruns;
	e->sm_mhz_median = first->sm_mhz_median;
	e->sm_mhz_min = first->sm_mhz_min;
	e->sm_mhz_max = first->sm_mhz_max;
	e->temp_c_median = first->temp_c_median;
	e->temp_c_max = first->temp_c_max;
	e->capped_frac = envn > 0 ? capped / envn : 0;
	e->throttled_frac = envn > 0 ? throttled / envn : 0;
	if (!e->path || !e->gpu_name || !e->gpu_slug || !e->driver || !e->cuda || !e->suite || !e->host ||
	    !e->time || !e->commit)
		return KPT_E_NOMEM;
	return 0;
}

int kpt_diff_side_combine(const struct kpt_diff_side *const *sides, size_t n, uint32_t keep_runs,
			  const char *label, struct kpt_diff_side **out, struct kpt_diag *d)
{
	struct kpt_diff_side *c;
	int rc;

	*out = NULL;
	if (!n)
		return kpt_diag_set(d, KPT_E_INVAL, "no sessions to combine");
	for (size_t i = 1; i < n; i++)
		if (strcmp(sides[i]->env.gpu_slug, sides[0]->env.gpu_slug) != 0) {
			kpt_diag_set(d, KPT_E_MISMATCH, "sessions of different GPU models: '%s' (%s) and '%s' (%s)",
				     sides[0]->env.path, sides[0]->env.gpu_name, sides[i]->env.path,
				     sides[i]->env.gpu_name);
			return kpt_diag_hint(d, "a baseline holds sessions of one GPU model");
		}
	c = calloc(1, sizeof *c);
	if (!c)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory combining sessions");
	kpt_arena_init(&c->arena);
	kpt_strtab_init(&c->strs);
	rc = combine(sides, n, keep_runs, label, c);
	if (rc < 0) {
		kpt_diff_side_destroy(c);
		return kpt_diag_set(d, rc, "out of memory combining sessions");
	}
	*out = c;
	return 0;
}

uint32_t kpt_diff_side_sessions(const struct kpt_diff_side *s)
{
	return s->nsessions ? s->nsessions : 1;
}

size_t kpt_diff_side_scale(struct kpt_diff_side *s, const char *name, const char *path,
			   const uint32_t *grid, const uint32_t *block, uint32_t ordinal, double factor)
{
	uint32_t nid, pid;
	size_t hit = 0;

	if (!kpt_strtab_find(&s->strs, name, strlen(name), &nid) ||
	    !kpt_strtab_find(&s->strs, path, strlen(path), &pid))
		return 0;
	for (uint32_t k = 0; k < s->nkeys; k++) {
		struct kpt_side_key *K = &s->keys[k];

		if (K->name != nid || K->path != pid)
			continue;
		if (ordinal != UINT32_MAX && (K->ordinal != ordinal ||
					      (grid && memcmp(K->grid, grid, sizeof K->grid) != 0) ||
					      (block && memcmp(K->block, block, sizeof K->block) != 0)))
			continue;
		for (uint32_t r = 0; r < s->nruns; r++) {
			struct kpt_sample_vec *v = &K->runs[r];

			for (uint32_t q = 0; q < v->n; q++)
				v->ns[q] = (float)(v->ns[q] * factor);
			v->med_ns *= factor;
			v->med_cyc *= factor;
		}
		hit++;
	}
	return hit;
}
