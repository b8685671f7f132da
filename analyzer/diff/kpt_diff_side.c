/* kpt_diff_side.c - streaming one recording into per-key, per-run samples.
 *
 * Cost: one pass over the kernel chunks; per kernel two or three hash
 * lookups and an append. Ranges and env samples are loaded whole (they are
 * small next to kernels: ranges are per launch site and iteration, env
 * samples every 10 ms).
 */
#define _GNU_SOURCE /* qsort_r */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_demangle.h"
#include "kpt_diff_private.h"
#include "kpt_grow.h"
#include "kpt_stats.h"

#define NO_ID UINT32_MAX
#define SKIP_PATH (UINT32_MAX - 1) /* range_path of ranges under a skipped range */

/* What a range's name means to the key (cached per file string id). */
enum range_class { RC_UNKNOWN = 0, RC_PLAIN, RC_ITER, RC_SKIP };

static const char *const skip_ranges[] = KPT_DIFF_SKIP_RANGES;

struct site {
	uint32_t name, mangled, path, workload;
	uint32_t grid[3], block[3];
	uint32_t last_proc, last_iter, count;
	uint32_t *keys;             /* key id per ordinal, NO_ID until seen */
	uint32_t nkeys;
};

#define SITE_MEMO 1024 /* power of two */

/* A kernel waiting for the end of its iteration: ordinals are given in
 * start order once the iteration is complete (streams may finish, and so be
 * recorded, out of launch order). */
struct pend {
	uint64_t start;
	uint32_t site, seq;
	float ns;
	uint16_t mhz;
	uint8_t drop;               /* enum drop_kind */
};

enum drop_kind { DROP_NONE = 0, DROP_THROTTLE, DROP_CLOCK };

/* The current iteration of one process. */
struct iterbuf {
	uint32_t iter;              /* kpt:iter range id */
	struct pend *v;
	uint32_t n, cap;
};

struct env_group {
	uint32_t off, n, cur;       /* into the sorted index; cur: last hit */
};

struct loader {
	struct kpt_diff_side *s;
	struct kpt_file *f;
	struct kpt_diag *d;
	double min_clock_frac;
	uint64_t throttle_ignore;
	int keep_throttled;
	int any_thread;

	const struct kpt_process *procs;
	size_t nprocs;
	uint32_t *proc_slot;        /* [nprocs] run slot */
	uint32_t ndev;

	const struct kpt_range *ranges;
	size_t nranges;
	uint32_t range_base;        /* smallest range id */
	int ranges_dense;           /* ranges[i].id == range_base + i */
	uint32_t *range_slot;       /* [range_span] id - range_base -> index, when ids are compact */
	uint32_t range_span;
	struct kpt_wmap range_ids;  /* id -> index otherwise */
	uint32_t *range_path;       /* [nranges] path id, NO_ID uncomputed */
	uint32_t *range_iter;       /* [nranges] id of the enclosing kpt:iter range */
	int measured_only;          /* the file has kpt:iter ranges: launches outside are not keys */
	unsigned char *range_class; /* [nfile_strings] enum range_class */

	struct kpt_wmap paths;      /* (parent path, file name sid) -> path id */
	/* By path id: the side string of the whole path, made only when a
	 * kernel needs it (NO_ID before: 100,000 nested ranges would
	 * otherwise store every prefix, O(depth^2) bytes); the workload's
	 * side string; the parent path and the file string of the last name. */
	uint32_t *path_str, *path_workload, *path_parent, *path_name;
	uint32_t npath_cap;
	uint64_t path_bytes;        /* sum of the whole-path strings made */

	uint32_t *name_cache;       /* file sid -> side sid of the demangled name */
	uint32_t *mangled_cache;    /* file sid -> side sid of the raw name */
	uint32_t nfile_strings;

	struct kpt_wmap site_map;   /* (name sid, grid, block, path) -> site */
	struct site_memo {          /* direct-mapped cache in front of site_map */
		uint32_t key[9], site;
	} memo[SITE_MEMO];
	struct site *sites;
	uint32_t capsites;

	struct iterbuf *ib;         /* [max(nprocs, 1)] */
	/* Two or more distinct ranks (process.rank) in the file: the rank is
	 * part of each key; launches counted per rank to see whether the
	 * ranks did the same work. */
	int ranked;
	uint32_t *ranks, nranks;
	uint64_t *rank_kernels;
	/* --ranges any-thread: range indices (no marks) by process, then start */
	struct kpt_open_ranges open;

	const struct kpt_env_sample *env;
	size_t nenv;
	uint32_t *env_order;        /* env indices grouped by process*ndev+device, by time */
	struct env_group *groups;   /* [nprocs * ndev] */
	double *run_mhz;            /* [nruns] median SM clock, 0 unknown */
	uint64_t exact;             /* samples kept in all sample vectors */
	uint64_t buffered;          /* pend records in all iteration buffers */
};

static int side_intern(struct kpt_diff_side *s, const char *str, uint32_t *id, struct kpt_diag *d)
{
	int rc = kpt_strtab_intern(&s->strs, str, strlen(str), id);

	if (rc < 0)
		return kpt_diag_set(d, rc, "cannot intern a string of %zu bytes", strlen(str));
	return 0;
}

static const char *side_str(const struct kpt_diff_side *s, uint32_t id)
{
	const char *r = kpt_strtab_get(&s->strs, id, NULL);

	return r ? r : "";
}

static const char *file_str(struct loader *L, uint32_t sid)
{
	const char *r = kpt_file_string(L->f, sid);

	return r ? r : "";
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int load_runs(struct loader *L)
{
	struct kpt_diff_side *s = L->s;
	uint32_t *tmp;
	size_t n = L->nprocs ? L->nprocs : 1;

	tmp = kpt_arena_alloc(&s->arena, n * sizeof *tmp);
	L->proc_slot = kpt_arena_alloc(&s->arena, n * sizeof *L->proc_slot);
	if (!tmp || !L->proc_slot)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading processes");
	for (size_t i = 0; i < L->nprocs; i++)
		tmp[i] = L->procs[i].run;
	if (!L->nprocs)
		tmp[0] = 0;
	qsort(tmp, n, sizeof *tmp, cmp_u32);
	s->nruns = 0;
	for (size_t i = 0; i < n; i++)
		if (i == 0 || tmp[i] != tmp[i - 1])
			tmp[s->nruns++] = tmp[i];
	s->run_ids = tmp;
	for (size_t i = 0; i < L->nprocs; i++) {
		const uint32_t *hit = bsearch(&L->procs[i].run, tmp, s->nruns, sizeof *tmp, cmp_u32);

		L->proc_slot[i] = (uint32_t)(hit - tmp);
	}
	if (!L->nprocs)
		L->proc_slot[0] = 0;
	return 0;
}

struct t_idx {
	uint64_t t;
	uint32_t i;
};

static int cmp_t_idx(const void *a, const void *b)
{
	const struct t_idx *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return (x->i > y->i) - (x->i < y->i);
}

/* Sorts the env sample indices o[0..n) by time. O(n log n). */
static int sort_by_time(struct loader *L, uint32_t *o, uint32_t n)
{
	struct t_idx *v = malloc((size_t)n * sizeof *v);

	if (!v)
		return KPT_E_NOMEM;
	for (uint32_t i = 0; i < n; i++)
		v[i] = (struct t_idx){ L->env[o[i]].t_ns, o[i] };
	qsort(v, n, sizeof *v, cmp_t_idx);
	for (uint32_t i = 0; i < n; i++)
		o[i] = v[i].i;
	free(v);
	return 0;
}

/* Groups env samples by (process, device), each group by time; the run's
 * median SM clock; the side's env summary. */
static int load_env(struct loader *L)
{
	struct kpt_diff_side *s = L->s;
	struct kpt_diff_env *e = &s->env;
	size_t ng = (L->nprocs ? L->nprocs : 1) * L->ndev;
	uint32_t *count;
	double *mhz, *temp;
	size_t nthrottled = 0, ncapped = 0;

	e->sm_mhz_median = e->sm_mhz_min = e->sm_mhz_max = NAN;
	e->temp_c_median = e->temp_c_max = NAN;
	L->groups = kpt_arena_calloc(&s->arena, ng ? ng : 1, sizeof *L->groups);
	L->run_mhz = kpt_arena_calloc(&s->arena, s->nruns, sizeof *L->run_mhz);
	if (!L->groups || !L->run_mhz)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading env samples");
	if (!L->nenv || !L->nprocs)
		return 0;
	count = calloc(ng + 1, sizeof *count);
	L->env_order = kpt_arena_alloc(&s->arena, L->nenv * sizeof *L->env_order);
	mhz = malloc(L->nenv * sizeof *mhz);
	temp = malloc(L->nenv * sizeof *temp);
	if (!count || !L->env_order || !mhz || !temp) {
		free(count);
		free(mhz);
		free(temp);
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading env samples");
	}
	for (size_t i = 0; i < L->nenv; i++) {
		const struct kpt_env_sample *v = &L->env[i];

		if (v->process < L->nprocs && v->device < L->ndev)
			count[v->process * L->ndev + v->device + 1]++;
	}
	for (size_t g = 0; g < ng; g++) {
		L->groups[g].off = g ? L->groups[g - 1].off + L->groups[g - 1].n : 0;
		L->groups[g].n = count[g + 1];
	}
	memset(count, 0, (ng + 1) * sizeof *count);
	for (size_t i = 0; i < L->nenv; i++) {
		const struct kpt_env_sample *v = &L->env[i];
		size_t g;

		if (v->process >= L->nprocs || v->device >= L->ndev)
			continue;
		g = v->process * L->ndev + v->device;
		L->env_order[L->groups[g].off + count[g]++] = (uint32_t)i;
	}
	free(count);
	/* Each group by time (already so when the collector wrote it). */
	for (size_t g = 0; g < ng; g++) {
		uint32_t *o = L->env_order + L->groups[g].off;
		int sorted = 1;

		for (uint32_t i = 1; i < L->groups[g].n && sorted; i++)
			sorted = L->env[o[i - 1]].t_ns <= L->env[o[i]].t_ns;
		if (!sorted && sort_by_time(L, o, L->groups[g].n) < 0) {
			free(mhz);
			free(temp);
			return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading env samples");
		}
	}
	/* Median SM clock per run slot: samples bucketed by slot, O(nenv). */
	{
		size_t *start = calloc(s->nruns + 1, sizeof *start), *fill = NULL;

		if (start)
			fill = calloc(s->nruns + 1, sizeof *fill);
		if (!start || !fill) {
			free(start);
			free(mhz);
			free(temp);
			return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading env samples");
		}
		for (size_t i = 0; i < L->nenv; i++)
			if (L->env[i].process < L->nprocs && L->env[i].sm_mhz)
				start[L->proc_slot[L->env[i].process] + 1]++;
		for (uint32_t r = 0; r < s->nruns; r++)
			start[r + 1] += start[r];
		for (size_t i = 0; i < L->nenv; i++)
			if (L->env[i].process < L->nprocs && L->env[i].sm_mhz) {
				uint32_t r = L->proc_slot[L->env[i].process];

				mhz[start[r] + fill[r]++] = L->env[i].sm_mhz;
			}
		for (uint32_t r = 0; r < s->nruns; r++)
			L->run_mhz[r] = fill[r] ? kpt_median_f64(mhz + start[r], fill[r]) : 0;
		free(start);
		free(fill);
	}
	/* Summary over the whole file. */
	for (size_t i = 0; i < L->nenv; i++) {
		const struct kpt_env_sample *v = &L->env[i];
		uint64_t bits = v->throttle & ~L->throttle_ignore;

		mhz[i] = v->sm_mhz;
		temp[i] = v->temp_c;
		if (bits) {
			nthrottled++;
			e->throttle_bits |= bits;
		}
		if (v->throttle & KPT_NVML_SW_POWER_CAP)
			ncapped++;
	}
	qsort(mhz, L->nenv, sizeof *mhz, cmp_double);
	e->sm_mhz_min = mhz[0];
	e->sm_mhz_max = mhz[L->nenv - 1];
	e->sm_mhz_median = kpt_median_f64(mhz, L->nenv);
	e->temp_c_median = kpt_median_f64(temp, L->nenv);
	e->temp_c_max = temp[0];
	for (size_t i = 1; i < L->nenv; i++)
		if (temp[i] > e->temp_c_max)
			e->temp_c_max = temp[i];
	e->env_samples = L->nenv;
	e->throttled_frac = (double)nthrottled / (double)L->nenv;
	e->capped_frac = (double)ncapped / (double)L->nenv;
	free(mhz);
	free(temp);
	return 0;
}

static int load_ranges(struct loader *L)
{
	struct kpt_diff_side *s = L->s;
	struct kpt_diag *d = L->d;
	int rc;

	L->range_path = kpt_arena_alloc(&s->arena, (L->nranges ? L->nranges : 1) * sizeof(uint32_t));
	L->range_iter = kpt_arena_alloc(&s->arena, (L->nranges ? L->nranges : 1) * sizeof(uint32_t));
	if (!L->range_path || !L->range_iter)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading ranges");
	memset(L->range_path, 0xff, L->nranges * sizeof(uint32_t));
	L->ranges_dense = 1;
	L->range_base = L->nranges ? L->ranges[0].id : 0;
	for (size_t i = 0; i < L->nranges; i++)
		if (L->ranges[i].id != L->range_base + (uint32_t)i) {
			L->ranges_dense = 0;
			break;
		}
	if (!L->ranges_dense && L->nranges) {
		/* Ids compact but out of order (parents are written after their
		 * children): a direct table, 4 bytes per id. */
		uint32_t lo = UINT32_MAX, hi = 0;

		for (size_t i = 0; i < L->nranges; i++) {
			if (L->ranges[i].id < lo)
				lo = L->ranges[i].id;
			if (L->ranges[i].id > hi)
				hi = L->ranges[i].id;
		}
		if ((uint64_t)hi - lo < 4 * (uint64_t)L->nranges + 1024) {
			L->range_base = lo;
			L->range_span = hi - lo + 1;
			L->range_slot = malloc((size_t)L->range_span * sizeof *L->range_slot);
			if (!L->range_slot)
				return kpt_diag_set(d, KPT_E_NOMEM, "out of memory indexing ranges");
			memset(L->range_slot, 0xff, (size_t)L->range_span * sizeof *L->range_slot);
			for (size_t i = 0; i < L->nranges; i++)
				L->range_slot[L->ranges[i].id - lo] = (uint32_t)i;
		}
	}
	if (!L->ranges_dense && !L->range_slot)
		for (size_t i = 0; i < L->nranges; i++) {
			uint32_t id;

			if ((rc = kpt_wmap_put(&L->range_ids, &L->ranges[i].id, &id, NULL)) < 0)
				return kpt_diag_set(d, rc, "out of memory indexing ranges");
		}
	/* Path 0: no range. */
	L->npath_cap = 64;
	L->path_str = malloc(L->npath_cap * sizeof *L->path_str);
	L->path_workload = malloc(L->npath_cap * sizeof *L->path_workload);
	L->path_parent = malloc(L->npath_cap * sizeof *L->path_parent);
	L->path_name = malloc(L->npath_cap * sizeof *L->path_name);
	if (!L->path_str || !L->path_workload || !L->path_parent || !L->path_name)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading ranges");
	{
		uint32_t root[2] = { NO_ID, NO_ID }, id;

		if ((rc = kpt_wmap_put(&L->paths, root, &id, NULL)) < 0)
			return kpt_diag_set(d, rc, "out of memory loading ranges");
		L->path_str[0] = 0;
		L->path_workload[0] = 0;
		L->path_parent[0] = NO_ID;
		L->path_name[0] = NO_ID;
	}
	return 0;
}

static uint32_t range_index(struct loader *L, uint32_t id)
{
	uint32_t idx;

	if (id == KPT_NONE)
		return NO_ID;
	if (L->ranges_dense)
		return id - L->range_base < L->nranges ? id - L->range_base : NO_ID;
	if (L->range_slot)
		return id - L->range_base < L->range_span ? L->range_slot[id - L->range_base] : NO_ID;
	return kpt_wmap_get(&L->range_ids, &id, &idx) ? idx : NO_ID;
}

static enum range_class class_of(struct loader *L, uint32_t sid)
{
	const char *nm;

	if (sid >= L->nfile_strings)
		return RC_PLAIN;
	if (L->range_class[sid] != RC_UNKNOWN)
		return (enum range_class)L->range_class[sid];
	nm = file_str(L, sid);
	L->range_class[sid] = strcmp(nm, KPT_DIFF_ITER_RANGE) == 0 ? RC_ITER : RC_PLAIN;
	for (size_t i = 0; i < sizeof skip_ranges / sizeof skip_ranges[0]; i++)
		if (strcmp(nm, skip_ranges[i]) == 0)
			L->range_class[sid] = RC_SKIP;
	return (enum range_class)L->range_class[sid];
}

/* Grows the by-path-id arrays to hold id. */
static int path_grow(struct loader *L, uint32_t id)
{
	uint32_t **arr[] = { &L->path_str, &L->path_workload, &L->path_parent, &L->path_name };
	uint32_t cap = L->npath_cap;

	for (size_t i = 0; i < sizeof arr / sizeof arr[0]; i++) {
		cap = L->npath_cap; /* the same growth for each array */
		if (kpt_grow_u32(arr[i], &cap, (size_t)id + 1, sizeof **arr[i]) < 0)
			return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory building range paths");
	}
	L->npath_cap = cap;
	return 0;
}

/* Path id for (parent path, range name); its string is made later, by
 * path_string(), only for paths that kernels sit in. O(1). */
static int path_child(struct loader *L, uint32_t parent, uint32_t name_sid, uint32_t *out)
{
	uint32_t key[2] = { parent, name_sid }, id;
	int added, rc;

	if ((rc = kpt_wmap_put(&L->paths, key, &id, &added)) < 0)
		return kpt_diag_set(L->d, rc, "out of memory building range paths");
	if (added) {
		if (id >= L->npath_cap && (rc = path_grow(L, id)) < 0)
			return rc;
		L->path_str[id] = NO_ID;
		L->path_parent[id] = parent;
		L->path_name[id] = name_sid;
		if (parent == 0)
			rc = side_intern(L->s, file_str(L, name_sid), &L->path_workload[id], L->d);
		else
			L->path_workload[id] = L->path_workload[parent];
		if (rc < 0)
			return rc;
	}
	*out = id;
	return 0;
}

/* Whole-path strings a side may make: past this, the recording is
 * refused (ranges nested deeper than any real program, each with a
 * kernel). Keeps memory bounded whatever the file holds. */
#define PATH_BYTES_MAX (UINT64_C(256) << 20)

/* The side string "outer/.../inner" of path id p, made on first use from
 * the nearest ancestor that has one: O(length) time and memory. */
static int path_string(struct loader *L, uint32_t p, uint32_t *out)
{
	uint64_t len = 0;
	uint32_t a = p;
	char *buf;
	const char *base;
	size_t lb;
	int rc;

	if (L->path_str[p] != NO_ID) {
		*out = L->path_str[p];
		return 0;
	}
	for (; L->path_str[a] == NO_ID; a = L->path_parent[a]) {
		len += strlen(file_str(L, L->path_name[a])) + 1;
		if (L->path_bytes + len > PATH_BYTES_MAX)
			return kpt_diag_set(L->d, KPT_E_FORMAT, "'%s': NVTX range paths exceed %llu MiB (ranges nested "
					    "too deep): not a usable recording", kpt_file_path(L->f),
					    (unsigned long long)(PATH_BYTES_MAX >> 20));
	}
	base = side_str(L->s, L->path_str[a]);
	lb = strlen(base);
	if (!lb)
		len--;  /* no '/' after an empty base */
	buf = malloc(lb + len + 1);
	if (!buf)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory building range paths");
	memcpy(buf, base, lb);
	buf[lb + len] = '\0';
	for (uint64_t end = lb + len; p != a; p = L->path_parent[p]) {
		const char *nm = file_str(L, L->path_name[p]);
		size_t ln = strlen(nm);

		end -= ln;
		memcpy(buf + end, nm, ln);
		if (end > lb)
			buf[--end] = '/';
	}
	rc = side_intern(L->s, buf, out, L->d);
	free(buf);
	if (rc < 0)
		return rc;
	L->path_bytes += lb + len;
	return 0;
}

/* Resolves path and iteration of range index i (and its ancestors),
 * iteratively: ancestors chains can be deep and, in corrupt files, cyclic. */
static int resolve_range(struct loader *L, uint32_t i)
{
	uint32_t *stack = NULL, n = 0, cap = 0, cur = i;
	int rc = 0;

	while (cur != NO_ID && L->range_path[cur] == NO_ID) {
		if (kpt_grow_u32(&stack, &cap, (size_t)n + 1, sizeof *stack) < 0) {
			free(stack);
			return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory resolving ranges");
		}
		stack[n++] = cur;
		if (n > L->nranges) {
			free(stack);
			return kpt_diag_set(L->d, KPT_E_FORMAT, "'%s': NVTX range %u is its own ancestor",
					    kpt_file_path(L->f), L->ranges[i].id);
		}
		cur = range_index(L, L->ranges[cur].parent);
	}
	while (n > 0 && rc == 0) {
		uint32_t r = stack[--n];
		uint32_t p = range_index(L, L->ranges[r].parent);
		uint32_t ppath = p == NO_ID ? 0 : L->range_path[p];
		uint32_t piter = p == NO_ID ? NO_ID : L->range_iter[p];
		enum range_class rc_ = class_of(L, L->ranges[r].name);

		if (ppath == SKIP_PATH || rc_ == RC_SKIP) {
			L->range_path[r] = SKIP_PATH;
			L->range_iter[r] = NO_ID;
		} else if (rc_ == RC_ITER) {
			L->range_path[r] = ppath;
			L->range_iter[r] = L->ranges[r].id;
			L->s->iterated = 1;
		} else {
			rc = path_child(L, ppath, L->ranges[r].name, &L->range_path[r]);
			L->range_iter[r] = piter;
		}
	}
	free(stack);
	return rc;
}

static int name_ids(struct loader *L, uint32_t sid, uint32_t *name, uint32_t *mangled)
{
	const char *raw;
	char *dem;
	int rc;

	if (sid >= L->nfile_strings)
		return kpt_diag_set(L->d, KPT_E_FORMAT, "'%s': kernel name id %u out of range",
				    kpt_file_path(L->f), sid);
	if (L->name_cache[sid] != NO_ID) {
		*name = L->name_cache[sid];
		*mangled = L->mangled_cache[sid];
		return 0;
	}
	raw = file_str(L, sid);
	if ((rc = side_intern(L->s, raw, &L->mangled_cache[sid], L->d)) < 0)
		return rc;
	dem = kpt_demangle(raw);
	rc = side_intern(L->s, dem ? dem : raw, &L->name_cache[sid], L->d);
	free(dem);
	if (rc < 0)
		return rc;
	*name = L->name_cache[sid];
	*mangled = L->mangled_cache[sid];
	return 0;
}

static int new_key(struct loader *L, const struct site *st, uint32_t ordinal, uint32_t *out)
{
	struct kpt_diff_side *s = L->s;
	struct kpt_side_key *k;

	if (kpt_grow_u32(&s->keys, &s->capkeys, (size_t)s->nkeys + 1, sizeof *s->keys) < 0)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory adding kernel keys");
	k = &s->keys[s->nkeys];
	memset(k, 0, sizeof *k);
	k->name = st->name;
	k->mangled = st->mangled;
	k->path = st->path;
	k->workload = st->workload;
	memcpy(k->grid, st->grid, sizeof k->grid);
	memcpy(k->block, st->block, sizeof k->block);
	k->ordinal = ordinal;
	k->runs = calloc(s->nruns, sizeof *k->runs);
	if (!k->runs)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory adding kernel keys");
	*out = s->nkeys++;
	return 0;
}

/* Site of kernel k (name, config, path) and its kpt:iter range (NO_ID when
 * outside any); *sid = NO_ID when k is under a skipped range. */
static int open_index(struct loader *L)
{
	if (kpt_open_ranges_init(&L->open, L->ranges, L->nranges) < 0)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory indexing ranges");
	return 0;
}

/* st's path becomes the printf of fmt (a decoration of its path: "other
 * thread", the rank), interned in the side's strings. */
static int site_repath(struct loader *L, struct site *st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int site_repath(struct loader *L, struct site *st, const char *fmt, ...)
{
	va_list ap;
	char *buf;
	int n, rc;

	va_start(ap, fmt);
	n = vasprintf(&buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory indexing kernels");
	rc = side_intern(L->s, buf, &st->path, L->d);
	free(buf);
	return rc < 0 ? rc : 0;
}

static int kernel_site(struct loader *L, const struct kpt_kernel *k, uint32_t *sid, uint32_t *iter)
{
	uint32_t ri = range_index(L, k->range), path = 0, skey[9];
	uint32_t rank = L->ranked && k->process < L->nprocs ? L->procs[k->process].rank : KPT_NONE;
	struct site *st;
	int added, rc, other = 0;

	*iter = NO_ID;
	if (ri == NO_ID && L->open.idx) {
		/* --ranges any-thread: the innermost range open on another thread
		 * of the process; its path marked (other thread) */
		uint32_t o = kpt_open_ranges_at(&L->open, k->process, k->start_ns);

		if (o != NO_ID) {
			if (L->range_path[o] == NO_ID && (rc = resolve_range(L, o)) < 0)
				return rc;
			if (L->range_path[o] != SKIP_PATH) {
				path = L->range_path[o];
				other = 1;
			}
		}
	}
	if (ri != NO_ID) {
		if (L->range_path[ri] == NO_ID && (rc = resolve_range(L, ri)) < 0)
			return rc;
		path = L->range_path[ri];
		*iter = L->range_iter[ri];
		if (path == SKIP_PATH) {
			*sid = NO_ID;
			return 0;
		}
	}
	skey[0] = k->name;
	memcpy(skey + 1, k->grid, sizeof k->grid);
	memcpy(skey + 4, k->block, sizeof k->block);
	skey[7] = path | (other ? 0x80000000u : 0);
	skey[8] = rank;
	if (rank != KPT_NONE && L->rank_kernels) {
		uint32_t j = 0;

		while (j < L->nranks && L->ranks[j] != rank)
			j++;
		if (j < L->nranks)
			L->rank_kernels[j]++;
	}
	{
		struct site_memo *mm = &L->memo[(k->name * 2654435761u ^ path * 40503u ^ k->grid[0] ^
						 k->block[0] * 97u) & (SITE_MEMO - 1)];

		if (mm->site != NO_ID && memcmp(mm->key, skey, sizeof skey) == 0) {
			*sid = mm->site;
			return 0;
		}
		if ((rc = kpt_wmap_put(&L->site_map, skey, sid, &added)) < 0)
			return kpt_diag_set(L->d, rc, "out of memory indexing kernels");
		memcpy(mm->key, skey, sizeof skey);
		mm->site = *sid;
	}
	if (!added)
		return 0;
	if (kpt_grow_u32(&L->sites, &L->capsites, (size_t)*sid + 1, sizeof *L->sites) < 0)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory indexing kernels");
	st = &L->sites[*sid];
	memset(st, 0, sizeof *st);
	if ((rc = path_string(L, path, &st->path)) < 0)
		return rc;
	L->path_str[path] = st->path;
	st->workload = L->path_workload[path];
	if (other && (rc = site_repath(L, st, "%s (other thread)", side_str(L->s, st->path))) < 0)
		return rc;
	if (rank != KPT_NONE) {
		/* ranks that do different work are different keys: the rank
		 * leads the path ("rank 1/moe.layer/...") */
		const char *ps = side_str(L->s, st->path);

		if ((rc = site_repath(L, st, ps[0] ? "rank %u/%s" : "rank %u", rank, ps)) < 0)
			return rc;
	}
	memcpy(st->grid, k->grid, sizeof st->grid);
	memcpy(st->block, k->block, sizeof st->block);
	st->last_proc = NO_ID;
	st->last_iter = NO_ID;
	return name_ids(L, k->name, &st->name, &st->mangled);
}

/* Key of the next launch of site sid in iteration iter of process proc
 * (calls must come in start order within an iteration); ordinal 0 for
 * every launch outside kpt:iter. */
static int site_key(struct loader *L, uint32_t sid, uint32_t proc, uint32_t iter, uint32_t *out)
{
	struct site *st = &L->sites[sid];
	uint32_t ord = 0;
	int rc;

	if (iter != NO_ID) {
		if (st->last_proc == proc && st->last_iter == iter) {
			st->count += st->count < KPT_DIFF_MAX_ORDINAL;
			ord = st->count;
		} else {
			st->last_proc = proc;
			st->last_iter = iter;
			st->count = 0;
		}
	}
	if (ord >= st->nkeys) {
		uint32_t n = ord + 1 > st->nkeys * 2 ? ord + 1 : st->nkeys * 2;
		uint32_t *t = realloc(st->keys, n * sizeof *t);

		if (!t)
			return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory indexing kernels");
		for (uint32_t i = st->nkeys; i < n; i++)
			t[i] = NO_ID;
		st->keys = t;
		st->nkeys = n;
	}
	if (st->keys[ord] == NO_ID && (rc = new_key(L, st, ord, &st->keys[ord])) < 0)
		return rc;
	*out = st->keys[ord];
	return 0;
}

/* The env sample in effect at time t for group g (the last one at or before
 * t, else the first), or NULL when the group has none. */
static const struct kpt_env_sample *env_at(struct loader *L, size_t g, uint64_t t)
{
	struct env_group *eg = &L->groups[g];
	const uint32_t *o = L->env_order + eg->off;
	uint32_t lo = 0, hi;

	if (!eg->n)
		return NULL;
	if (L->env[o[eg->cur]].t_ns <= t) {
		lo = eg->cur;
		while (lo + 1 < eg->n && L->env[o[lo + 1]].t_ns <= t)
			lo++;
	} else {
		hi = eg->cur;
		while (lo + 1 < hi) {
			uint32_t mid = lo + (hi - lo) / 2;

			if (L->env[o[mid]].t_ns <= t)
				lo = mid;
			else
				hi = mid;
		}
	}
	eg->cur = lo;
	return &L->env[o[lo]];
}

static int vec_push(struct kpt_sample_vec *v, float ns, uint16_t mhz)
{
	if (v->n == v->cap) {
		uint32_t cap = v->cap, capmhz = v->cap; /* mhz, when kept, grows as ns */

		if (kpt_grow_u32(&v->ns, &cap, (size_t)v->n + 1, sizeof *v->ns) < 0 ||
		    (v->mhz && kpt_grow_u32(&v->mhz, &capmhz, (size_t)v->n + 1, sizeof *v->mhz) < 0))
			return KPT_E_NOMEM;
		v->cap = cap;
	}
	if (mhz > 0 && !v->mhz) {
		v->mhz = calloc(v->cap, sizeof *v->mhz);
		if (!v->mhz)
			return KPT_E_NOMEM;
	}
	v->ns[v->n] = ns;
	if (v->mhz)
		v->mhz[v->n] = mhz;
	v->n++;
	return 0;
}

/* Moves v's samples into sketches, which take the samples to come. */
static int vec_to_sketch(struct kpt_sample_vec *v)
{
	struct kpt_sample_sketch *k = malloc(sizeof *k);

	if (!k)
		return KPT_E_NOMEM;
	kpt_qsketch_init(&k->ns);
	kpt_qsketch_init(&k->cyc);
	k->mhz_lo = UINT16_MAX;
	k->mhz_hi = 0;
	v->sk = k;
	for (uint32_t i = 0; i < v->n; i++) {
		uint16_t f = v->mhz ? v->mhz[i] : 0;

		k->mhz_lo = f < k->mhz_lo ? f : k->mhz_lo;
		k->mhz_hi = f > k->mhz_hi ? f : k->mhz_hi;
		if (kpt_qsketch_add(&k->ns, v->ns[i]) < 0 || kpt_qsketch_add(&k->cyc, (double)(v->ns[i] * (float)f)) < 0)
			return KPT_E_NOMEM;
	}
	return 0;
}

/* One sample into v: kept while under the caps (KPT_DIFF_EXACT_*), else
 * into v's sketches. */
static int sample_add(struct loader *L, struct kpt_sample_vec *v, float ns, uint16_t mhz)
{
	if (!v->sk && v->n < KPT_DIFF_EXACT_PER_RUN &&
	    (L->exact < KPT_DIFF_EXACT_TOTAL || v->n < KPT_DIFF_SKETCH_MIN)) {
		if (vec_push(v, ns, mhz) < 0)
			return KPT_E_NOMEM;
		L->exact++;
		return 0;
	}
	if (!v->sk) {
		if (vec_to_sketch(v) < 0)
			return KPT_E_NOMEM;
		L->s->env.approx_runs++;
	}
	v->sk->mhz_lo = mhz < v->sk->mhz_lo ? mhz : v->sk->mhz_lo;
	v->sk->mhz_hi = mhz > v->sk->mhz_hi ? mhz : v->sk->mhz_hi;
	if (kpt_qsketch_add(&v->sk->ns, ns) < 0 || kpt_qsketch_add(&v->sk->cyc, (double)(ns * (float)mhz)) < 0)
		return KPT_E_NOMEM;
	v->more++;
	return 0;
}

static void vec_free_sketch(struct kpt_sample_vec *v)
{
	if (!v->sk)
		return;
	kpt_qsketch_release(&v->sk->ns);
	kpt_qsketch_release(&v->sk->cyc);
	free(v->sk);
	v->sk = NULL;
}

/* Stores one sample (or counts it dropped) under key. */
static int commit(struct loader *L, uint32_t key, uint32_t proc, const struct pend *p)
{
	struct kpt_diff_side *s = L->s;
	struct kpt_sample_vec *v = &s->keys[key].runs[L->nprocs ? L->proc_slot[proc] : 0];

	if (p->drop == DROP_THROTTLE) {
		s->env.dropped_throttle++;
		v->dropped_throttle++;
	} else if (p->drop == DROP_CLOCK) {
		s->env.dropped_clock++;
		v->dropped_clock++;
	} else {
		if (sample_add(L, v, p->ns, p->mhz) < 0)
			return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory storing kernel durations");
		s->env.samples++;
	}
	return 0;
}

static int cmp_pend(const void *a, const void *b)
{
	const struct pend *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* Gives the buffered iteration of process proc its ordinals, in start
 * order, and stores its samples. */
static int flush_iter(struct loader *L, uint32_t proc)
{
	struct iterbuf *b = &L->ib[proc];
	int sorted = 1, rc;

	for (uint32_t i = 1; i < b->n && sorted; i++)
		sorted = b->v[i - 1].start <= b->v[i].start;
	if (!sorted)
		qsort(b->v, b->n, sizeof *b->v, cmp_pend);
	for (uint32_t i = 0; i < b->n; i++) {
		uint32_t key = 0; /* set by site_key; gcc cannot see it once commit is inlined */

		if ((rc = site_key(L, b->v[i].site, proc, b->iter, &key)) < 0 ||
		    (rc = commit(L, key, proc, &b->v[i])) < 0)
			return rc;
	}
	L->buffered -= b->n;
	b->n = 0;
	return 0;
}

static int add_kernel(struct loader *L, const struct kpt_kernel *k)
{
	struct kpt_diff_side *s = L->s;
	const struct kpt_env_sample *e = NULL;
	uint32_t sid = 0, iter, slot, proc = L->nprocs ? k->process : 0, key = 0;
	struct pend p = { 0 };
	struct iterbuf *b;
	int rc;

	if (k->process >= L->nprocs && L->nprocs)
		return kpt_diag_set(L->d, KPT_E_FORMAT, "'%s': kernel refers to process %u of %zu",
				    kpt_file_path(L->f), k->process, L->nprocs);
	if (k->end_ns < k->start_ns)
		return kpt_diag_set(L->d, KPT_E_FORMAT, "'%s': kernel ends before it starts",
				    kpt_file_path(L->f));
	if ((rc = kernel_site(L, k, &sid, &iter)) < 0)
		return rc;
	if (sid == NO_ID) {
		s->env.skipped++;
		return 0;
	}
	if (iter == NO_ID && L->measured_only) {
		s->env.outside++;
		return 0;
	}
	slot = L->nprocs ? L->proc_slot[proc] : 0;
	p.start = k->start_ns;
	p.site = sid;
	p.ns = (float)(k->end_ns - k->start_ns);
	if (L->env_order && k->device < L->ndev)
		e = env_at(L, (size_t)proc * L->ndev + k->device, k->start_ns);
	if (e) {
		p.mhz = e->sm_mhz > UINT16_MAX ? UINT16_MAX : (uint16_t)e->sm_mhz;
		if (!L->keep_throttled && (e->throttle & ~L->throttle_ignore))
			p.drop = DROP_THROTTLE;
		else if (!L->keep_throttled && L->run_mhz[slot] > 0 &&
			 e->sm_mhz < L->min_clock_frac * L->run_mhz[slot])
			p.drop = DROP_CLOCK;
	}
	if (iter == NO_ID) {
		if ((rc = site_key(L, sid, proc, NO_ID, &key)) < 0)
			return rc;
		return commit(L, key, proc, &p);
	}
	/* Buffers past KPT_DIFF_ITER_BUF launches in all: every process's are
	 * stored now, so memory does not grow with the length of an
	 * iteration (one that long is put in start order a part at a time). */
	for (size_t q = 0; L->buffered >= KPT_DIFF_ITER_BUF && q < (L->nprocs ? L->nprocs : 1); q++)
		if (L->ib[q].n && (rc = flush_iter(L, (uint32_t)q)) < 0)
			return rc;
	b = &L->ib[proc];
	if (b->n && b->iter != iter && (rc = flush_iter(L, proc)) < 0)
		return rc;
	b->iter = iter;
	if (kpt_grow_u32(&b->v, &b->cap, (size_t)b->n + 1, sizeof *b->v) < 0)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory buffering an iteration");
	p.seq = b->n;
	b->v[b->n++] = p;
	L->buffered++;
	return 0;
}

/* Step-time keys: a project's workload that times NVTX steps (meta
 * "step_ranges", "WORKLOAD/RANGE,...", written by kpt_record_project)
 * gets one key per listed range path whose samples are the wall times of
 * that range's instances, so a workload's step is compared as a key of its
 * own beside its kernels (name "step time (NVTX range)", path the range's
 * path). Ranges left open (end 0) are not samples. O(ranges). */
#define STEP_KEY_NAME "step time (NVTX range)"

static int add_step_keys(struct loader *L)
{
	const char *list = kpt_file_meta_get(L->f, "step_ranges");
	uint32_t name, *keys = NULL, *want = NULL;
	const char **last = NULL;   /* [nwant] the last name of each wanted path */
	size_t nwant = 0, cap = 0;
	int rc = 0;

	if (!list || !list[0] || !L->nranges)
		return 0;
	/* the wanted paths, interned in the side's strings */
	for (const char *p = list; *p && rc == 0;) {
		size_t n = strcspn(p, ",");
		char *one = kpt_arena_strndup(&L->s->arena, p, n);

		if (!one)
			rc = kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory reading step ranges");
		else if (n) {
			size_t caplast = cap; /* last grows as want */

			if (kpt_grow(&want, &cap, nwant + 1, sizeof *want) < 0 ||
			    kpt_grow(&last, &caplast, nwant + 1, sizeof *last) < 0)
				rc = kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory reading step ranges");
		}
		if (rc == 0 && n) {
			const char *slash = strrchr(one, '/');

			last[nwant] = slash ? slash + 1 : one;
			rc = side_intern(L->s, one, &want[nwant++], L->d);
		}
		p += n + (p[n] == ',');
	}
	if (rc == 0 && nwant && !(keys = malloc(nwant * sizeof *keys)))
		rc = kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory reading step ranges");
	for (size_t w = 0; w < nwant; w++)
		keys[w] = NO_ID;
	if (rc == 0 && nwant)
		rc = side_intern(L->s, STEP_KEY_NAME, &name, L->d);
	for (size_t i = 0; rc == 0 && i < L->nranges; i++) {
		const struct kpt_range *r = &L->ranges[i];
		uint32_t ps = 0, proc;
		size_t w;
		struct pend p = { 0 };

		if (!r->end_ns || r->end_ns < r->start_ns || (L->nprocs && r->process >= L->nprocs))
			continue;
		/* only a range named as a wanted path ends gets its path made */
		for (w = 0; w < nwant && strcmp(file_str(L, r->name), last[w]) != 0; w++)
			;
		if (w == nwant)
			continue;
		if (L->range_path[i] == NO_ID && (rc = resolve_range(L, (uint32_t)i)) < 0)
			break;
		if (L->range_path[i] == SKIP_PATH || L->range_path[i] == 0)
			continue;
		if ((rc = path_string(L, L->range_path[i], &ps)) < 0)
			break;
		L->path_str[L->range_path[i]] = ps;
		for (w = 0; w < nwant && want[w] != ps; w++)
			;
		if (w == nwant)
			continue;
		if (keys[w] == NO_ID) {
			struct site st = { .name = name, .mangled = name, .path = ps,
					   .workload = L->path_workload[L->range_path[i]] };

			if ((rc = new_key(L, &st, 0, &keys[w])) < 0)
				break;
		}
		proc = L->nprocs ? r->process : 0;
		p.ns = (float)(r->end_ns - r->start_ns);
		rc = commit(L, keys[w], proc, &p);
	}
	free(keys);
	free(want);
	free(last);
	return rc;
}

static int fmt_version(struct kpt_arena *a, uint32_t v, const char **out)
{
	char buf[32];

	if (!v) {
		*out = "";
		return 0;
	}
	snprintf(buf, sizeof buf, "%u.%u", v / 1000, (v % 1000) / 10);
	*out = kpt_arena_strndup(a, buf, strlen(buf));
	return *out ? 0 : KPT_E_NOMEM;
}

static const char *meta_dup(struct loader *L, const char *key)
{
	const char *v = kpt_file_meta_get(L->f, key);

	return kpt_arena_strndup(&L->s->arena, v ? v : "", v ? strlen(v) : 0);
}

const char *const kpt_probe_meta[KPT_PROBE_N] = {
	[KPT_PROBE_COPY] = "calibration.copy_gbps",
	[KPT_PROBE_BF16] = "calibration.bf16_tflops",
	[KPT_PROBE_FP8] = "calibration.fp8_tflops",
	[KPT_PROBE_SM] = "calibration.sm_mhz",
};

/* Fills env strings from the device of the first kernel (first_dev) and meta. */
static int load_env_strings(struct loader *L, const struct kpt_device *devs, size_t ndev,
			    uint32_t first_dev)
{
	struct kpt_diff_env *e = &L->s->env;
	struct kpt_arena *a = &L->s->arena;
	const struct kpt_device *dv = first_dev < ndev ? &devs[first_dev] : NULL;
	const char *p = kpt_file_path(L->f);

	e->path = kpt_arena_strndup(a, p, strlen(p));
	e->gpu_name = dv ? kpt_arena_strndup(a, dv->name, strlen(dv->name)) : "";
	e->gpu_slug = dv ? kpt_arena_strndup(a, dv->slug, strlen(dv->slug)) : "";
	if (dv && dv->driver_string && dv->driver_string[0])
		e->driver = kpt_arena_strndup(a, dv->driver_string, strlen(dv->driver_string));
	else if (fmt_version(a, dv ? dv->driver_version : 0, &e->driver) < 0)
		e->driver = NULL;
	/* the collector cannot see the program's CUDA runtime version (it may
	 * be linked statically): the CUDA version of the driver stands in */
	if (fmt_version(a, dv ? (dv->runtime_version ? dv->runtime_version : dv->driver_version) : 0, &e->cuda) < 0)
		e->cuda = NULL;
	e->suite = meta_dup(L, "suite");
	e->host = meta_dup(L, "host");
	e->time = meta_dup(L, "time");
	e->commit = meta_dup(L, "commit");
	e->runs = L->s->nruns;
	{
		/* One file is one session. */
		struct kpt_diff_side *s = L->s;
		struct kpt_diff_session *ss = kpt_arena_calloc(a, 1, sizeof *ss);
		const char *uuid = dv && dv->uuid ? dv->uuid : "";

		s->run_session = kpt_arena_calloc(a, s->nruns ? s->nruns : 1, sizeof *s->run_session);
		if (!ss || !s->run_session)
			return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading '%s'", p);
		ss->path = e->path;
		ss->uuid = kpt_arena_strndup(a, uuid, strlen(uuid));
		ss->host = e->host;
		ss->boot = meta_dup(L, "boot_id");
		/* An imported trace has no boot id (and a Kineto trace no GPU
		 * UUID): the machine facts it held (host, GPU UUID or PCI bus,
		 * driver and CUDA versions, meta import.machine, lib/kpt_import.c)
		 * stand for GPU and boot, so two traces of one machine compare
		 * as one machine (docs/import.md, "One machine"). */
		{
			const char *m = kpt_file_meta_get(L->f, "import.machine");

			if (m && m[0] && ss->uuid && ss->boot && !ss->boot[0]) {
				size_t ml = strlen(m);
				char *id = kpt_arena_alloc(a, ml + 8);

				if (!id)
					return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading '%s'", p);
				memcpy(id, "import:", 7);
				memcpy(id + 7, m, ml + 1);
				ss->boot = id;
				if (!ss->uuid[0])
					ss->uuid = id;
			}
		}
		ss->time = e->time;
		ss->runs = s->nruns;
		ss->settle_us = kpt_file_settle_us(L->f); /* -1 (not a number): never compared */
		ss->copy_gbps = dv ? dv->copy_gbps : 0;
		ss->bf16_tflops = dv ? dv->bf16_tflops : 0;
		for (int k = 0; k < KPT_PROBE_N; k++)
			ss->probe[k] = kpt_file_meta_positive(L->f, kpt_probe_meta[k]);
		ss->probe_where = meta_dup(L, "calibration.where");
		if (!ss->uuid || !ss->boot || !ss->probe_where)
			return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading '%s'", p);
		s->sessions = ss;
		s->nsessions = 1;
	}
	if (!e->path || !e->gpu_name || !e->gpu_slug || !e->driver || !e->cuda ||
	    !e->suite || !e->host || !e->time || !e->commit)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory loading '%s'", p);
	return 0;
}

#define RADIX_MIN 4096 /* below this, copying and quickselect is cheaper */

/* The k-th smallest of n non-negative floats by radix selection on their
 * bits (for those, bit order is numeric order): a histogram of the top 16
 * bits, then of the low 16 bits of the bucket holding k. O(n), exact.
 * hist: 65536 counters; tmp: n floats of scratch. */
static float select_f32(const float *x, size_t n, size_t k, uint32_t *hist, float *tmp)
{
	uint32_t bits, top = 0, low = 0;
	size_t before = 0, m = 0;

	memset(hist, 0, 65536 * sizeof *hist);
	for (size_t i = 0; i < n; i++) {
		memcpy(&bits, &x[i], sizeof bits);
		hist[bits >> 16]++;
	}
	while (before + hist[top] <= k)
		before += hist[top++];
	for (size_t i = 0; i < n; i++) {
		memcpy(&bits, &x[i], sizeof bits);
		if (bits >> 16 == top)
			tmp[m++] = x[i];
	}
	k -= before;
	before = 0;
	memset(hist, 0, 65536 * sizeof *hist);
	for (size_t i = 0; i < m; i++) {
		memcpy(&bits, &tmp[i], sizeof bits);
		hist[bits & 0xffff]++;
	}
	while (before + hist[low] <= k)
		before += hist[low++];
	bits = top << 16 | low;
	{
		float f;

		memcpy(&f, &bits, sizeof f);
		return f;
	}
}

/* Median of n non-negative floats: radix selection from RADIX_MIN on,
 * else a copy to doubles and quickselect (kpt_stats.h). Scratch: buf (n
 * doubles), hist (65536 counters), tmp (n floats). */
static double median_f32(const float *x, size_t n, double *buf, uint32_t *hist, float *tmp)
{
	if (n >= RADIX_MIN) {
		double a = select_f32(x, n, (n - 1) / 2, hist, tmp);

		return n % 2 ? a : (a + select_f32(x, n, n / 2, hist, tmp)) / 2;
	}
	for (size_t i = 0; i < n; i++)
		buf[i] = x[i];
	return kpt_median_f64(buf, n);
}

/* Median of n durations and of their products with the clocks (NAN when a
 * clock is 0) into *med_ns and *med_cyc. Cycles are taken in float (6e-8
 * relative), far below any timing noise. Scratch: buf (n doubles), hist
 * (65536 counters), tmp and cyc (n floats each). */
static void kpt_dx_medians(const float *ns, const uint16_t *mhz, size_t n, double *buf,
			   uint32_t *hist, float *tmp, float *cyc, double *med_ns, double *med_cyc)
{
	uint16_t lo = UINT16_MAX, hi = 0;

	for (size_t i = 0; i < n; i++) {
		uint16_t f = mhz ? mhz[i] : 0;

		lo = f < lo ? f : lo;
		hi = f > hi ? f : hi;
	}
	*med_ns = median_f32(ns, n, buf, hist, tmp);
	if (!n || lo == 0) {
		*med_cyc = NAN;
	} else if (lo == hi) { /* one clock for the whole run: no second selection */
		*med_cyc = *med_ns * lo;
	} else {
		for (size_t i = 0; i < n; i++)
			cyc[i] = ns[i] * (float)mhz[i];
		*med_cyc = median_f32(cyc, n, buf, hist, tmp);
	}
}

/* The per-key, per-run medians (kpt_sample_vec.med_*). O(samples). */
static int take_medians(struct loader *L)
{
	struct kpt_diff_side *s = L->s;
	double *buf = NULL;
	float *ftmp = NULL, *cyc = NULL;
	uint32_t *hist = malloc(65536 * sizeof *hist);
	size_t cap = 0;
	int rc = 0;

	if (!hist)
		return kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory taking medians");
	for (uint32_t k = 0; k < s->nkeys && rc == 0; k++)
		for (uint32_t r = 0; r < s->nruns; r++) {
			struct kpt_sample_vec *v = &s->keys[k].runs[r];

			v->med_ns = v->med_cyc = NAN;
			if (v->sk) {
				/* as kpt_dx_medians, from the sketches */
				struct kpt_sample_sketch *sk = v->sk;

				v->med_ns = kpt_qsketch_quantile(&sk->ns, 0.5);
				v->med_cyc = sk->mhz_lo == 0 ? NAN : sk->mhz_lo == sk->mhz_hi ?
					v->med_ns * sk->mhz_lo : kpt_qsketch_quantile(&sk->cyc, 0.5);
				vec_free_sketch(v);
				if (isnan(v->med_ns)) {
					rc = kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory taking medians");
					break;
				}
				continue;
			}
			if (!v->n)
				continue;
			if (v->n > cap) {
				free(buf);
				free(ftmp);
				free(cyc);
				cap = v->n;
				buf = malloc(cap * sizeof *buf);
				ftmp = malloc(cap * sizeof *ftmp);
				cyc = malloc(cap * sizeof *cyc);
				if (!buf || !ftmp || !cyc) {
					rc = kpt_diag_set(L->d, KPT_E_NOMEM, "out of memory taking medians");
					break;
				}
			}
			kpt_dx_medians(v->ns, v->mhz, v->n, buf, hist, ftmp, cyc, &v->med_ns, &v->med_cyc);
		}
	free(buf);
	free(ftmp);
	free(cyc);
	free(hist);
	return rc;
}

static void loader_release(struct loader *L)
{
	for (size_t p = 0; L->ib && p < (L->nprocs ? L->nprocs : 1); p++)
		free(L->ib[p].v);
	free(L->ib);
	for (uint32_t i = 0; i < L->site_map.count; i++)
		free(L->sites[i].keys);
	free(L->sites);
	kpt_wmap_release(&L->site_map);
	kpt_wmap_release(&L->paths);
	kpt_wmap_release(&L->range_ids);
	free(L->range_slot);
	free(L->path_str);
	free(L->path_workload);
	free(L->path_parent);
	free(L->path_name);
	free(L->name_cache);
	free(L->mangled_cache);
	free(L->range_class);
	free(L->ranks);
	free(L->rank_kernels);
	kpt_open_ranges_release(&L->open);
}

static int side_load(struct loader *L)
{
	struct kpt_diff_side *s = L->s;
	struct kpt_file *f = L->f;
	struct kpt_diag *d = L->d;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_device *devs;
	const struct kpt_kernel *rows;
	size_t ndev, n;
	uint32_t first_dev = NO_ID, empty;
	int rc;

	if ((rc = side_intern(s, "", &empty, d)) < 0)
		return rc;
	if ((rc = kpt_file_load_strings(f, d)) < 0 ||
	    (rc = kpt_file_processes(f, &L->procs, &L->nprocs, d)) < 0 ||
	    (rc = kpt_file_devices(f, &devs, &ndev, d)) < 0 ||
	    (rc = kpt_file_ranges(f, &L->ranges, &L->nranges, d)) < 0 ||
	    (rc = kpt_file_env(f, &L->env, &L->nenv, d)) < 0)
		return rc;
	L->ndev = (uint32_t)(ndev ? ndev : 1);
	L->nfile_strings = kpt_file_string_count(f);
	L->name_cache = malloc((L->nfile_strings ? L->nfile_strings : 1) * sizeof(uint32_t));
	L->mangled_cache = malloc((L->nfile_strings ? L->nfile_strings : 1) * sizeof(uint32_t));
	L->range_class = calloc(L->nfile_strings ? L->nfile_strings : 1, 1);
	if (!L->name_cache || !L->mangled_cache || !L->range_class)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading '%s'", kpt_file_path(f));
	memset(L->name_cache, 0xff, L->nfile_strings * sizeof(uint32_t));
	if ((rc = load_runs(L)) < 0 || (rc = load_env(L)) < 0 || (rc = load_ranges(L)) < 0)
		return rc;
	L->ranks = calloc(L->nprocs + 1, sizeof *L->ranks);
	L->rank_kernels = calloc(L->nprocs + 1, sizeof *L->rank_kernels);
	if (!L->ranks || !L->rank_kernels)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading '%s'", kpt_file_path(f));
	for (size_t i = 0; i < L->nprocs; i++) {
		uint32_t j = 0;

		if (L->procs[i].rank == KPT_NONE)
			continue;
		while (j < L->nranks && L->ranks[j] != L->procs[i].rank)
			j++;
		if (j == L->nranks)
			L->ranks[L->nranks++] = L->procs[i].rank;
	}
	L->ranked = L->nranks >= 2;
	if (L->any_thread && (rc = open_index(L)) < 0)
		return rc;
	L->ib = calloc(L->nprocs ? L->nprocs : 1, sizeof *L->ib);
	if (!L->ib)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading '%s'", kpt_file_path(f));
	/* A recording with kpt:iter ranges marks what it measures: launches
	 * outside them (input set-up, checks) are not compared. */
	for (size_t i = 0; i < L->nranges && !L->measured_only; i++)
		L->measured_only = class_of(L, L->ranges[i].name) == RC_ITER;
	if ((rc = kpt_kernel_cursor_create(f, &cur, d)) < 0)
		return rc;
	while ((rc = kpt_kernel_cursor_next(cur, &rows, &n, d)) > 0) {
		for (size_t i = 0; i < n; i++) {
			if (first_dev == NO_ID)
				first_dev = rows[i].device;
			if ((rc = add_kernel(L, &rows[i])) < 0)
				break;
		}
		s->env.kernels += n;
		if (rc < 0)
			break;
	}
	kpt_kernel_cursor_destroy(cur);
	for (size_t p = 0; rc >= 0 && p < (L->nprocs ? L->nprocs : 1); p++)
		if (L->ib[p].n)
			rc = flush_iter(L, (uint32_t)p);
	if (rc < 0 || (rc = add_step_keys(L)) < 0)
		return rc;
	if (!s->env.kernels)
		return kpt_diag_set(d, KPT_E_INVAL, "'%s' holds no kernels", kpt_file_path(f));
	if (L->ranked) {
		uint64_t lo = UINT64_MAX, hi = 0;

		for (uint32_t j = 0; j < L->nranks; j++) {
			lo = L->rank_kernels[j] < lo ? L->rank_kernels[j] : lo;
			hi = L->rank_kernels[j] > hi ? L->rank_kernels[j] : hi;
		}
		s->env.ranks = L->nranks;
		s->env.ranks_differ = hi != lo;
		s->env.rank_launches_min = lo;
		s->env.rank_launches_max = hi;
	}
	if ((rc = take_medians(L)) < 0)
		return rc;
	return load_env_strings(L, devs, ndev, first_dev);
}

int kpt_diff_side_load(struct kpt_file *f, const struct kpt_diff_opts *opts,
		       struct kpt_diff_side **out, struct kpt_diag *d)
{
	struct loader L;
	struct kpt_diff_side *s;
	int rc;

	*out = NULL;
	s = calloc(1, sizeof *s);
	if (!s)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading '%s'", kpt_file_path(f));
	kpt_arena_init(&s->arena);
	kpt_strtab_init(&s->strs);
	memset(&L, 0, sizeof L);
	L.s = s;
	L.f = f;
	L.d = d;
	L.min_clock_frac = opts && opts->min_clock_frac > 0 ? opts->min_clock_frac : 0.75;
	L.throttle_ignore = !opts || !opts->throttle_ignore ? KPT_DIFF_IGNORE_DEFAULT :
		opts->throttle_ignore == KPT_DIFF_IGNORE_NONE ? 0 : opts->throttle_ignore;
	L.keep_throttled = opts ? opts->keep_throttled : 0;
	L.any_thread = opts ? opts->any_thread : 0;
	kpt_wmap_init(&L.range_ids, 1);
	kpt_wmap_init(&L.paths, 2);
	kpt_wmap_init(&L.site_map, 9);
	for (size_t i = 0; i < SITE_MEMO; i++)
		L.memo[i].site = NO_ID;
	rc = side_load(&L);
	loader_release(&L);
	if (rc < 0) {
		kpt_diff_side_destroy(s);
		return rc;
	}
	*out = s;
	return 0;
}

void kpt_diff_side_destroy(struct kpt_diff_side *s)
{
	if (!s)
		return;
	for (uint32_t k = 0; k < s->nkeys; k++) {
		for (uint32_t r = 0; s->keys[k].runs && r < s->nruns; r++) {
			free(s->keys[k].runs[r].ns);
			free(s->keys[k].runs[r].mhz);
			vec_free_sketch(&s->keys[k].runs[r]);
		}
		free(s->keys[k].runs);
	}
	free(s->keys);
	kpt_strtab_release(&s->strs);
	kpt_arena_release(&s->arena);
	free(s);
}
