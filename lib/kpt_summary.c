/* kpt_summary.c - per-kernel / per-range aggregation (see kpt_summary.h). */
#define _GNU_SOURCE /* qsort_r */
#include "kpt_summary.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_arena.h"
#include "kpt_demangle.h"
#include "kpt_grow.h"
#include "kpt_qsketch.h"

/* Deeper NVTX nesting (or a parent cycle in corrupt data) is cut here: the
 * outer part of such a path is dropped. */
#define MAX_RANGE_DEPTH 256
#define UNRESOLVED UINT32_MAX

/* The kernels of one row while they are collected: their durations, or,
 * past the caps (KPT_SUMMARY_EXACT_*), a sketch of them and running sums. */
struct group {
	uint64_t *dur;
	size_t n, cap;
	struct kpt_qsketch *sk;     /* NULL while exact */
	uint64_t sk_n, sk_total, sk_min, sk_max;
	double sk_mean, sk_m2;      /* Welford's running mean and sum of squares */
	uint32_t key;               /* name string id, path node id, or rank slot * devices + device */
	uint64_t comm_ns, comm_n;   /* NCCL kernels among them */
};

/* Range paths form a trie: node 0 is "no range"; a node is (parent node,
 * range name id). Interned through an open-addressing hash. */
struct path_node {
	uint32_t parent;
	uint32_t name;
};

struct kpt_range_paths {
	struct kpt_file *f;
	const struct kpt_range *ranges; /* owned by f */
	size_t nranges;
	uint32_t *by_id;            /* range indices sorted by range id */
	uint32_t *node_of;          /* range index -> path node, UNRESOLVED */
	struct path_node *nodes;
	size_t nnodes, capnodes;
	uint64_t *hkeys;            /* (parent << 32 | name) + 1, 0: empty slot */
	uint32_t *hvals;
	size_t hcap;
	const char **path_of;       /* node -> its path string, NULL until asked */
	size_t cappath;
	struct kpt_arena arena;     /* the path strings */
};

struct builder {
	struct kpt_file *f;
	enum kpt_summary_by by;
	struct group *groups;
	size_t ngroups, capgroups;
	size_t exact;               /* durations kept in all groups' dur */
	uint32_t *group_of;         /* key -> group index + 1, 0: none yet */
	size_t nkeys;
	struct kpt_range_paths *rp; /* by range only */
	/* by range with any_thread: range indices (no marks) by process, then
	 * start; keys of "other thread" rows are node + mark_base */
	struct kpt_open_ranges open;
	uint32_t mark_base;
	/* by rank: distinct ranks (KPT_NONE for none) and the process -> slot map */
	uint32_t *ranks, nranks, *proc_slot, ndev;
	size_t nprocs;
	unsigned char *is_comm;     /* [strings] 1 nccl kernel, 2 not, 0 unknown */
};

static int nomem(struct kpt_diag *d)
{
	return kpt_diag_set(d, KPT_E_NOMEM, "out of memory while summarising kernels");
}

/* kpt_grow with the new elements zeroed (group_of and path_of: 0 is none). */
static int grow(void *p, size_t *cap, size_t need, size_t sz)
{
	size_t old = *cap;
	char *np;

	if (kpt_grow(p, cap, need, sz) < 0)
		return KPT_E_NOMEM;
	memcpy(&np, p, sizeof np);
	memset(np + old * sz, 0, (*cap - old) * sz);
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	return x;
}

static int hash_grow(struct kpt_range_paths *b)
{
	size_t ncap = b->hcap ? 2 * b->hcap : 1024;
	uint64_t *k = calloc(ncap, sizeof *k);
	uint32_t *v = calloc(ncap, sizeof *v);

	if (!k || !v) {
		free(k);
		free(v);
		return KPT_E_NOMEM;
	}
	for (size_t i = 0; i < b->hcap; i++) {
		size_t s;

		if (!b->hkeys[i])
			continue;
		for (s = mix64(b->hkeys[i]) & (ncap - 1); k[s]; s = (s + 1) & (ncap - 1))
			;
		k[s] = b->hkeys[i];
		v[s] = b->hvals[i];
	}
	free(b->hkeys);
	free(b->hvals);
	b->hkeys = k;
	b->hvals = v;
	b->hcap = ncap;
	return 0;
}

/* Node for the path (parent node)/(name), created on first use. */
static int path_intern(struct kpt_range_paths *b, uint32_t parent, uint32_t name, uint32_t *node)
{
	uint64_t key = ((uint64_t)parent << 32 | name) + 1;
	size_t s;

	if (2 * (b->nnodes + 1) > b->hcap && hash_grow(b) < 0)
		return KPT_E_NOMEM;
	for (s = mix64(key) & (b->hcap - 1); b->hkeys[s]; s = (s + 1) & (b->hcap - 1)) {
		if (b->hkeys[s] == key) {
			*node = b->hvals[s];
			return 0;
		}
	}
	if (grow(&b->nodes, &b->capnodes, b->nnodes + 1, sizeof *b->nodes) < 0)
		return KPT_E_NOMEM;
	b->nodes[b->nnodes] = (struct path_node){ .parent = parent, .name = name };
	b->hkeys[s] = key;
	b->hvals[s] = (uint32_t)b->nnodes;
	*node = (uint32_t)b->nnodes++;
	return 0;
}

static int cmp_range_id(const void *a, const void *b, void *ranges)
{
	uint32_t x = ((const struct kpt_range *)ranges)[*(const uint32_t *)a].id;
	uint32_t y = ((const struct kpt_range *)ranges)[*(const uint32_t *)b].id;

	return (x > y) - (x < y);
}

/* Index of the range with this id, -1 if none. O(log R). */
static long range_find(const struct kpt_range_paths *b, uint32_t id)
{
	size_t lo = 0, hi = b->nranges;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint32_t v = b->ranges[b->by_id[mid]].id;

		if (v == id)
			return (long)b->by_id[mid];
		if (v < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int ranges_load(struct kpt_range_paths *b, struct kpt_diag *d)
{
	int rc = kpt_file_ranges(b->f, &b->ranges, &b->nranges, d);

	if (rc < 0)
		return rc;
	b->by_id = malloc((b->nranges + 1) * sizeof *b->by_id);
	b->node_of = malloc((b->nranges + 1) * sizeof *b->node_of);
	if (!b->by_id || !b->node_of)
		return nomem(d);
	for (size_t i = 0; i < b->nranges; i++) {
		b->by_id[i] = (uint32_t)i;
		b->node_of[i] = UNRESOLVED;
	}
	qsort_r(b->by_id, b->nranges, sizeof *b->by_id, cmp_range_id, (void *)b->ranges);
	/* node 0, the empty path, is the root and is never looked up by key */
	if (grow(&b->nodes, &b->capnodes, 1, sizeof *b->nodes) < 0)
		return nomem(d);
	b->nodes[0] = (struct path_node){ .parent = 0, .name = KPT_NONE };
	b->nnodes = 1;
	return 0;
}

static int is_iter_range(const struct kpt_range_paths *b, uint32_t name)
{
	const char *s = kpt_file_string(b->f, name);

	return s && strcmp(s, KPT_SUMMARY_ITER_RANGE) == 0;
}

/* Path node of the range with id rid (node 0 for KPT_NONE or an unknown id).
 * Resolves the chain of parents once; later calls are O(log R). */
static int range_node(struct kpt_range_paths *b, uint32_t rid, uint32_t *node)
{
	uint32_t stack[MAX_RANGE_DEPTH];
	int depth = 0;
	uint32_t parent_node = 0;

	for (uint32_t cur = rid; cur != KPT_NONE && depth < MAX_RANGE_DEPTH;) {
		long r = range_find(b, cur);

		if (r < 0)
			break;
		if (b->node_of[r] != UNRESOLVED) {
			parent_node = b->node_of[r];
			break;
		}
		stack[depth++] = (uint32_t)r;
		cur = b->ranges[r].parent;
	}
	while (depth > 0) {
		uint32_t r = stack[--depth];
		uint32_t n = parent_node;

		if (!is_iter_range(b, b->ranges[r].name) &&
		    path_intern(b, parent_node, b->ranges[r].name, &n) < 0)
			return KPT_E_NOMEM;
		b->node_of[r] = n;
		parent_node = n;
	}
	*node = parent_node;
	return 0;
}

static void sketch_count(struct group *g, uint64_t dur)
{
	double delta = (double)dur - g->sk_mean;

	g->sk_n++;
	g->sk_total += dur;
	g->sk_min = dur < g->sk_min ? dur : g->sk_min;
	g->sk_max = dur > g->sk_max ? dur : g->sk_max;
	g->sk_mean += delta / (double)g->sk_n;
	g->sk_m2 += delta * ((double)dur - g->sk_mean);
}

/* Moves the group's durations into a sketch and frees them. */
static int to_sketch(struct builder *b, struct group *g)
{
	uint64_t total = 0;

	g->sk = malloc(sizeof *g->sk);
	if (!g->sk)
		return KPT_E_NOMEM;
	kpt_qsketch_init(g->sk);
	g->sk_min = UINT64_MAX;
	for (size_t i = 0; i < g->n; i++)
		total += g->dur[i];
	/* two passes over what was kept, as row_stats does for exact rows */
	g->sk_mean = g->n ? (double)total / (double)g->n : 0;
	for (size_t i = 0; i < g->n; i++) {
		double x = (double)g->dur[i] - g->sk_mean;

		g->sk_m2 += x * x;
		g->sk_min = g->dur[i] < g->sk_min ? g->dur[i] : g->sk_min;
		g->sk_max = g->dur[i] > g->sk_max ? g->dur[i] : g->sk_max;
		if (kpt_qsketch_add(g->sk, (double)g->dur[i]) < 0)
			return KPT_E_NOMEM;
	}
	g->sk_n = g->n;
	g->sk_total = total;
	b->exact -= g->n;
	free(g->dur);
	g->dur = NULL;
	g->n = g->cap = 0;
	return 0;
}

static int add_sample(struct builder *b, uint32_t key, uint64_t dur)
{
	struct group *g;

	if (key >= b->nkeys && grow(&b->group_of, &b->nkeys, (size_t)key + 1, sizeof *b->group_of) < 0)
		return KPT_E_NOMEM;
	if (!b->group_of[key]) {
		if (grow(&b->groups, &b->capgroups, b->ngroups + 1, sizeof *b->groups) < 0)
			return KPT_E_NOMEM;
		b->groups[b->ngroups].key = key;
		b->group_of[key] = (uint32_t)++b->ngroups;
	}
	g = &b->groups[b->group_of[key] - 1];
	if (!g->sk && (g->n >= KPT_SUMMARY_EXACT_PER_KEY ||
		       (b->exact >= KPT_SUMMARY_EXACT_TOTAL && g->n >= KPT_SUMMARY_SKETCH_MIN)) &&
	    to_sketch(b, g) < 0)
		return KPT_E_NOMEM;
	if (g->sk) {
		if (kpt_qsketch_add(g->sk, (double)dur) < 0)
			return KPT_E_NOMEM;
		sketch_count(g, dur);
		return 0;
	}
	if (grow(&g->dur, &g->cap, g->n + 1, sizeof *g->dur) < 0)
		return KPT_E_NOMEM;
	g->dur[g->n++] = dur;
	b->exact++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int cmp_row(const void *a, const void *b)
{
	const struct kpt_summary_row *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* A summary and everything it points to: the rows, their names and
 * durations live in one arena, freed by kpt_summary_destroy in one call. */
struct summary_alloc {
	struct kpt_summary pub;
	struct kpt_arena arena;
};

/* The path of node as "outer/inner" ("" for node 0), in the arena. */
/* Paths are labels: past this many bytes the outer ranges are left out
 * ("\u2026/" stands for them), so ranges nested 100,000 deep cost
 * O(ranges) and not O(depth^2). The innermost name is always whole. */
#define PATH_LABEL_MAX 4096

static char *path_string(const struct kpt_range_paths *b, uint32_t node, struct kpt_arena *a)
{
	static const char cut[] = "\xe2\x80\xa6/"; /* U+2026 HORIZONTAL ELLIPSIS, '/' */
	size_t len = 0, lead = 0;
	uint32_t stop = 0;
	char *s, *p;

	for (uint32_t n = node; n != 0; n = b->nodes[n].parent) {
		const char *name = kpt_file_string(b->f, b->nodes[n].name);
		size_t l = strlen(name ? name : "?") + 1;

		if (n != node && len + l > PATH_LABEL_MAX) {
			stop = n;
			lead = sizeof cut - 1;
			break;
		}
		len += l;
	}
	s = kpt_arena_alloc(a, lead + len + 1);
	if (!s)
		return NULL;
	memcpy(s, cut, lead);
	p = s + lead + (len ? len - 1 : 0);
	*p = '\0';
	for (uint32_t n = node; n != stop; n = b->nodes[n].parent) {
		const char *name = kpt_file_string(b->f, b->nodes[n].name);
		size_t l;

		name = name ? name : "?";
		l = strlen(name);
		p -= l;
		memcpy(p, name, l);
		if (p > s + lead)
			*--p = '/';
	}
	return s;
}

int kpt_range_paths_create(struct kpt_file *f, struct kpt_range_paths **out, struct kpt_diag *d)
{
	struct kpt_range_paths *p = calloc(1, sizeof *p);
	int rc;

	*out = NULL;
	if (!p)
		return nomem(d);
	kpt_arena_init(&p->arena);
	p->f = f;
	rc = kpt_file_load_strings(f, d);
	if (rc >= 0)
		rc = ranges_load(p, d);
	if (rc < 0) {
		kpt_range_paths_destroy(p);
		return rc;
	}
	*out = p;
	return 0;
}

const char *kpt_range_paths_get(struct kpt_range_paths *p, uint32_t range_id)
{
	uint32_t node;

	if (range_node(p, range_id, &node) < 0)
		return NULL;
	if (node >= p->cappath && grow(&p->path_of, &p->cappath, p->nnodes, sizeof *p->path_of) < 0)
		return NULL;
	if (!p->path_of[node])
		p->path_of[node] = path_string(p, node, &p->arena);
	return p->path_of[node];
}

void kpt_range_paths_destroy(struct kpt_range_paths *p)
{
	if (!p)
		return;
	free(p->by_id);
	free(p->node_of);
	free(p->nodes);
	free(p->hkeys);
	free(p->hvals);
	free(p->path_of);
	kpt_arena_release(&p->arena);
	free(p);
}

static char *arena_str(struct kpt_arena *a, const char *s)
{
	return kpt_arena_strndup(a, s, strlen(s));
}

static int row_names(const struct builder *b, const struct group *g, struct kpt_summary_row *row,
		     struct kpt_arena *a)
{
	const char *name, *display;

	if (b->by == KPT_SUMMARY_BY_RANK) {
		char buf[64];
		uint32_t r = b->ranks[g->key / b->ndev];

		row->rank = r;
		row->device = g->key % b->ndev;
		if (r == KPT_NONE)
			snprintf(buf, sizeof buf, "no rank GPU %u", g->key % b->ndev);
		else
			snprintf(buf, sizeof buf, "rank %u GPU %u", r, g->key % b->ndev);
		name = display = arena_str(a, buf);
	} else if (b->by == KPT_SUMMARY_BY_KERNEL) {
		const char *s = kpt_file_string(b->f, g->key);
		char *dem;

		name = arena_str(a, s ? s : "?");
		dem = name ? kpt_demangle(name) : NULL;
		display = dem ? arena_str(a, dem) : name;
		free(dem);
	} else if (b->open.idx && g->key >= b->mark_base) {
		const char *pth = path_string(b->rp, g->key - b->mark_base, a);
		size_t len = pth ? strlen(pth) + 32 : 0;
		char *buf = pth ? kpt_arena_alloc(a, len) : NULL;

		if (buf)
			snprintf(buf, len, "%s (other thread)", pth[0] ? pth : "(no range)");
		name = display = buf;
	} else {
		name = path_string(b->rp, g->key, a);
		display = name && name[0] ? name : "(no range)";
	}
	row->name = name;
	row->display = display;
	return name && display ? 0 : KPT_E_NOMEM;
}

/* Fills row from the group's sketch and running sums. */
static int row_stats_sketch(struct kpt_summary_row *row, struct group *g, uint64_t total_all)
{
	row->instances = g->sk_n;
	row->total_ns = g->sk_total;
	row->min_ns = g->sk_min;
	row->max_ns = g->sk_max;
	row->median_ns = kpt_qsketch_quantile(g->sk, 0.5);
	row->avg_ns = (double)g->sk_total / (double)g->sk_n;
	row->stddev_ns = g->sk_n > 1 ? sqrt(g->sk_m2 / (double)(g->sk_n - 1)) : 0;
	row->time_pct = total_all ? 100.0 * (double)g->sk_total / (double)total_all : 0;
	row->durations = NULL;
	row->median_rel_err = KPT_QSKETCH_REL_ERR;
	return isnan(row->median_ns) ? KPT_E_NOMEM : 0;
}

/* Fills row from the group's durations (sorted in place), copied into the
 * arena. */
static int row_stats(struct kpt_summary_row *row, uint64_t *dur, size_t n, uint64_t total_all,
		     struct kpt_arena *a)
{
	uint64_t total = 0, *kept = kpt_arena_alloc(a, n * sizeof *dur);
	double mean, ss = 0;

	if (!kept)
		return KPT_E_NOMEM;
	qsort(dur, n, sizeof *dur, cmp_u64);
	memcpy(kept, dur, n * sizeof *dur);
	for (size_t i = 0; i < n; i++)
		total += dur[i];
	mean = (double)total / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += ((double)dur[i] - mean) * ((double)dur[i] - mean);
	row->instances = n;
	row->total_ns = total;
	row->min_ns = dur[0];
	row->max_ns = dur[n - 1];
	row->median_ns = n % 2 ? (double)dur[n / 2] : ((double)dur[n / 2 - 1] + (double)dur[n / 2]) / 2;
	row->avg_ns = mean;
	row->stddev_ns = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	row->time_pct = total_all ? 100.0 * (double)total / (double)total_all : 0;
	row->durations = kept;
	return 0;
}

/* The ranges of the file indexed for kpt_open_ranges_at(). */
static int open_index(struct builder *b, struct kpt_diag *d)
{
	if (kpt_open_ranges_init(&b->open, b->rp->ranges, b->rp->nranges) < 0)
		return nomem(d);
	b->mark_base = (uint32_t)b->rp->nranges + 1; /* more than there can be path nodes */
	return 0;
}

static int collect(struct builder *b, const struct kpt_summary_opts *o, struct kpt_summary *s,
		   struct kpt_diag *d)
{
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *k;
	size_t n;
	uint32_t nstrings = kpt_file_string_count(b->f);
	int rc;

	rc = kpt_kernel_cursor_create(b->f, &cur, d);
	while (rc >= 0 && (rc = kpt_kernel_cursor_next(cur, &k, &n, d)) > 0) {
		for (size_t i = 0; i < n && rc >= 0; i++) {
			uint64_t dur = k[i].end_ns > k[i].start_ns ? k[i].end_ns - k[i].start_ns : 0;
			uint32_t key = k[i].name;

			if (o->device != KPT_NONE && k[i].device != o->device)
				continue;
			/* the key indexes a table: never size it from a corrupt id */
			if (key >= nstrings) {
				rc = kpt_diag_set(d, KPT_E_FORMAT, "cannot read '%s': kernel name id %u out of range",
						  kpt_file_path(b->f), key);
				break;
			}
			if (b->by == KPT_SUMMARY_BY_RANK) {
				uint32_t slot = k[i].process < b->nprocs ? b->proc_slot[k[i].process] : 0;
				uint32_t dev = k[i].device < b->ndev ? k[i].device : 0;

				if (!b->is_comm[k[i].name]) {
					const char *nm = kpt_file_string(b->f, k[i].name);

					/* "ncclDevKernel_..." is stored mangled: "_Z40ncclDevKernel_..." */
					while (nm && (*nm == '_' || *nm == 'Z' || (*nm >= '0' && *nm <= '9')))
						nm++;
					b->is_comm[k[i].name] = nm && strncmp(nm, "nccl", 4) == 0 ? 1 : 2;
				}
				key = slot * b->ndev + dev;
			}
			if (b->by == KPT_SUMMARY_BY_RANGE && b->open.idx && k[i].range == KPT_NONE) {
				uint32_t r = kpt_open_ranges_at(&b->open, k[i].process, k[i].start_ns);

				if (r != KPT_NONE) {
					if (range_node(b->rp, b->rp->ranges[r].id, &key) < 0)
						rc = nomem(d);
					key += b->mark_base;
					if (rc >= 0 && add_sample(b, key, dur) < 0)
						rc = nomem(d);
					goto counted;
				}
			}
			if (b->by == KPT_SUMMARY_BY_RANGE && range_node(b->rp, k[i].range, &key) < 0)
				rc = nomem(d);
			else if (add_sample(b, key, dur) < 0)
				rc = nomem(d);
			else if (b->by == KPT_SUMMARY_BY_RANK && b->is_comm[k[i].name] == 1) {
				struct group *g = &b->groups[b->group_of[key] - 1];

				g->comm_ns += dur;
				g->comm_n++;
			}
counted:
			if (!s->kernels || k[i].start_ns < s->first_ns)
				s->first_ns = k[i].start_ns;
			if (k[i].end_ns > s->last_ns)
				s->last_ns = k[i].end_ns;
			s->kernels++;
			s->total_ns += dur;
		}
	}
	kpt_kernel_cursor_destroy(cur);
	return rc;
}

static void builder_release(struct builder *b)
{
	for (size_t i = 0; i < b->ngroups; i++) {
		free(b->groups[i].dur);
		if (b->groups[i].sk)
			kpt_qsketch_release(b->groups[i].sk);
		free(b->groups[i].sk);
	}
	free(b->groups);
	free(b->group_of);
	free(b->ranks);
	free(b->proc_slot);
	free(b->is_comm);
	kpt_open_ranges_release(&b->open);
	kpt_range_paths_destroy(b->rp);
}

/* By rank: the distinct ranks of the processes, ascending (no rank last),
 * and each process's slot among them. */
static int ranks_load(struct builder *b, struct kpt_diag *d)
{
	const struct kpt_process *p;
	const struct kpt_device *dv;
	size_t np, nd;
	int rc;

	if ((rc = kpt_file_processes(b->f, &p, &np, d)) < 0 || (rc = kpt_file_devices(b->f, &dv, &nd, d)) < 0)
		return rc;
	b->ndev = nd ? (uint32_t)nd : 1;
	b->nprocs = np;
	b->ranks = calloc(np + 1, sizeof *b->ranks);
	b->proc_slot = calloc(np + 1, sizeof *b->proc_slot);
	b->is_comm = calloc(kpt_file_string_count(b->f) + 1, 1);
	if (!b->ranks || !b->proc_slot || !b->is_comm)
		return nomem(d);
	for (size_t i = 0; i < np; i++) {
		uint32_t j = 0;

		while (j < b->nranks && b->ranks[j] != p[i].rank)
			j++;
		if (j == b->nranks)
			b->ranks[b->nranks++] = p[i].rank;
	}
	if (!b->nranks)
		b->ranks[b->nranks++] = KPT_NONE;
	/* ascending, KPT_NONE (UINT32_MAX) last */
	for (uint32_t i = 1; i < b->nranks; i++)
		for (uint32_t j = i; j > 0 && b->ranks[j - 1] > b->ranks[j]; j--) {
			uint32_t t = b->ranks[j];

			b->ranks[j] = b->ranks[j - 1];
			b->ranks[j - 1] = t;
		}
	for (size_t i = 0; i < np; i++)
		for (uint32_t j = 0; j < b->nranks; j++)
			if (b->ranks[j] == p[i].rank)
				b->proc_slot[i] = j;
	return 0;
}

int kpt_summary_create(struct kpt_file *f, const struct kpt_summary_opts *opts,
		       struct kpt_summary **out, struct kpt_diag *d)
{
	static const struct kpt_summary_opts defaults = { .by = KPT_SUMMARY_BY_KERNEL, .device = KPT_NONE };
	const struct kpt_summary_opts *o = opts ? opts : &defaults;
	struct builder b = { .f = f, .by = o->by };
	struct summary_alloc *sa;
	struct kpt_summary *s;
	int rc;

	*out = NULL;
	if (o->by != KPT_SUMMARY_BY_KERNEL && o->by != KPT_SUMMARY_BY_RANGE && o->by != KPT_SUMMARY_BY_RANK)
		return kpt_diag_set(d, KPT_E_INVAL, "unknown summary grouping %d", (int)o->by);
	sa = calloc(1, sizeof *sa);
	if (!sa)
		return nomem(d);
	kpt_arena_init(&sa->arena);
	s = &sa->pub;
	s->by = o->by;
	rc = kpt_file_load_strings(f, d);
	if (rc >= 0 && o->by == KPT_SUMMARY_BY_RANGE)
		rc = kpt_range_paths_create(f, &b.rp, d);
	if (rc >= 0 && o->by == KPT_SUMMARY_BY_RANGE && o->any_thread)
		rc = open_index(&b, d);
	if (rc >= 0 && o->by == KPT_SUMMARY_BY_RANK)
		rc = ranks_load(&b, d);
	if (rc >= 0)
		rc = collect(&b, o, s, d);
	if (rc >= 0 && b.ngroups) {
		s->rows = kpt_arena_calloc(&sa->arena, b.ngroups, sizeof *s->rows);
		rc = s->rows ? 0 : nomem(d);
	}
	for (size_t i = 0; rc >= 0 && i < b.ngroups; i++) {
		struct group *g = &b.groups[i];

		if (row_names(&b, g, &s->rows[i], &sa->arena) < 0 ||
		    (g->sk ? row_stats_sketch(&s->rows[i], g, s->total_ns)
			   : row_stats(&s->rows[i], g->dur, g->n, s->total_ns, &sa->arena)) < 0)
			rc = nomem(d);
		s->approx += g->sk != NULL;
		s->rows[i].comm_ns = g->comm_ns;
		s->rows[i].comm_kernels = g->comm_n;
		free(g->dur);           /* copied into the arena */
		g->dur = NULL;
		s->n++;
	}
	builder_release(&b);
	if (rc < 0) {
		kpt_summary_destroy(s);
		return rc;
	}
	if (s->n)
		qsort(s->rows, s->n, sizeof *s->rows, cmp_row);
	*out = s;
	return 0;
}

void kpt_summary_destroy(struct kpt_summary *s)
{
	struct summary_alloc *sa = (struct summary_alloc *)s;   /* pub is first */

	if (!sa)
		return;
	kpt_arena_release(&sa->arena);
	free(sa);
}

/* ---- environment ---------------------------------------------------------- */

static const struct {
	uint64_t bit;
	const char *name;
} throttle_names[] = {
	{ KPT_THROTTLE_GPU_IDLE, "gpu_idle" },
	{ KPT_THROTTLE_APP_CLOCKS, "app_clocks" },
	{ KPT_THROTTLE_SW_POWER_CAP, "sw_power_cap" },
	{ KPT_THROTTLE_HW_SLOWDOWN, "hw_slowdown" },
	{ KPT_THROTTLE_SYNC_BOOST, "sync_boost" },
	{ KPT_THROTTLE_SW_THERMAL, "sw_thermal" },
	{ KPT_THROTTLE_HW_THERMAL, "hw_thermal" },
	{ KPT_THROTTLE_HW_POWER_BRAKE, "hw_power_brake" },
	{ KPT_THROTTLE_DISPLAY_CLOCKS, "display_clocks" },
};

int kpt_throttle_format(uint64_t mask, char *buf, size_t cap)
{
	size_t len = 0;
	uint64_t known = 0;

#define KPT_APPEND(...) do { \
		int w_ = snprintf(buf + (len < cap ? len : cap), len < cap ? cap - len : 0, __VA_ARGS__); \
		len += w_ > 0 ? (size_t)w_ : 0; \
	} while (0)
	if (cap)
		buf[0] = '\0';
	if (!mask)
		KPT_APPEND("none");
	for (size_t i = 0; i < sizeof throttle_names / sizeof throttle_names[0]; i++) {
		known |= throttle_names[i].bit;
		if (mask & throttle_names[i].bit)
			KPT_APPEND("%s%s", len ? "," : "", throttle_names[i].name);
	}
	if (mask & ~known)
		KPT_APPEND("%s0x%llx", len ? "," : "", (unsigned long long)(mask & ~known));
#undef KPT_APPEND
	return (int)len;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

static int cmp_env_device(const void *a, const void *b, void *rows)
{
	uint32_t x = ((const struct kpt_env_sample *)rows)[*(const uint32_t *)a].device;
	uint32_t y = ((const struct kpt_env_sample *)rows)[*(const uint32_t *)b].device;

	return (x > y) - (x < y);
}

/* Median of the field at byte offset off (a uint32_t) over samples idx[0..n). */
static uint32_t field_median(const struct kpt_env_sample *rows, const uint32_t *idx, size_t n,
			     size_t off, uint32_t *tmp, uint32_t *min, uint32_t *max)
{
	for (size_t i = 0; i < n; i++)
		memcpy(&tmp[i], (const char *)&rows[idx[i]] + off, sizeof *tmp);
	qsort(tmp, n, sizeof *tmp, cmp_u32);
	if (min)
		*min = tmp[0];
	if (max)
		*max = tmp[n - 1];
	return tmp[n / 2];
}

int kpt_env_summarize(struct kpt_file *f, struct kpt_env_summary **out, size_t *nout,
		      struct kpt_diag *d)
{
	const struct kpt_env_sample *rows;
	size_t n, ndev = 0;
	uint32_t *idx = NULL, *tmp = NULL;
	struct kpt_env_summary *res = NULL;
	int rc = kpt_file_env(f, &rows, &n, d);

	*out = NULL;
	*nout = 0;
	if (rc < 0 || n == 0)
		return rc < 0 ? rc : 0;
	idx = malloc(n * sizeof *idx);
	tmp = malloc(n * sizeof *tmp);
	res = calloc(n, sizeof *res);   /* at most one per sample */
	if (!idx || !tmp || !res) {
		free(idx);
		free(tmp);
		free(res);
		return nomem(d);
	}
	for (size_t i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, n, sizeof *idx, cmp_env_device, (void *)rows);
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		struct kpt_env_summary *e = &res[ndev++];

		for (hi = lo; hi < n && rows[idx[hi]].device == rows[idx[lo]].device; hi++) {
			e->throttle_any |= rows[idx[hi]].throttle;
			e->slowdown_samples += (rows[idx[hi]].throttle & KPT_THROTTLE_SLOWDOWN) != 0;
		}
		e->device = rows[idx[lo]].device;
		e->samples = hi - lo;
		e->sm_mhz_median = field_median(rows, idx + lo, hi - lo, offsetof(struct kpt_env_sample, sm_mhz),
						tmp, &e->sm_mhz_min, &e->sm_mhz_max);
		e->mem_mhz_median = field_median(rows, idx + lo, hi - lo, offsetof(struct kpt_env_sample, mem_mhz),
						 tmp, NULL, NULL);
		field_median(rows, idx + lo, hi - lo, offsetof(struct kpt_env_sample, temp_c),
			     tmp, &e->temp_c_min, &e->temp_c_max);
		e->power_mw_median = field_median(rows, idx + lo, hi - lo, offsetof(struct kpt_env_sample, power_mw),
						  tmp, NULL, &e->power_mw_max);
	}
	free(idx);
	free(tmp);
	*out = res;
	*nout = ndev;
	return 0;
}
