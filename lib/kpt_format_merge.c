/* kpt_format_merge.c - kpt_file_copy_into: merging per-process files;
 * kpt_meta_merge: their collector meta. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_format.h"
#include "kpt_format_int.h"
#include "kpt_grow.h"

/* Remapping tables from src ids to w ids. */
struct remap {
	uint32_t *str;              /* by src string id */
	uint32_t nstr;
	uint32_t *dev;              /* by src device index */
	uint32_t ndev;
	uint32_t proc_base;         /* src process i -> proc_base + i */
	uint32_t range_base;        /* src range id r -> range_base + r */
	/* with a root range: process i's root is root_base + i, and what had
	 * no range (or no parent) has its process's root */
	int rooted;
	uint32_t root_base, nproc;
};

static uint32_t map_str(const struct remap *m, uint32_t id)
{
	return id == KPT_NONE || id >= m->nstr ? KPT_NONE : m->str[id];
}

static uint32_t map_dev(const struct remap *m, uint32_t i)
{
	return i == KPT_NONE || i >= m->ndev ? KPT_NONE : m->dev[i];
}

/* id of src process proc's range r (an innermost range or a parent). */
static uint32_t map_range(const struct remap *m, uint32_t id, uint32_t proc)
{
	if (id != KPT_NONE)
		return m->range_base + id;
	return m->rooted && proc < m->nproc ? m->root_base + proc : KPT_NONE;
}

/* One top-level range per process of src, named root, spanning the
 * process's life, ids root_base.. (before src's own ranges). */
static int write_roots(struct kpt_file *src, struct kpt_writer *w, struct remap *m, const char *root,
		       struct kpt_diag *d)
{
	const struct kpt_process *p;
	size_t n;
	uint32_t name;
	int rc;

	if ((rc = kpt_file_processes(src, &p, &n, d)) || (rc = kpt_writer_intern_cstr(w, root, &name, d)))
		return rc;
	m->rooted = 1;
	m->root_base = m->range_base;
	m->nproc = (uint32_t)n;
	m->range_base += (uint32_t)n;
	for (size_t i = 0; i < n; i++) {
		struct kpt_range r = {
			.id = m->root_base + (uint32_t)i, .parent = KPT_NONE, .name = name, .domain = KPT_NONE,
			.kind = KPT_RANGE_PUSHPOP, .process = m->proc_base + (uint32_t)i,
			.start_ns = p[i].start_ns, .end_ns = p[i].end_ns,
		};

		if ((rc = kpt_writer_ranges(w, &r, 1, d)))
			return rc;
	}
	return 0;
}

static int copy_strings(struct kpt_file *src, struct kpt_writer *w, struct remap *m,
			struct kpt_diag *d)
{
	int rc = kpt_file_load_strings(src, d);

	if (rc)
		return rc;
	m->nstr = kpt_file_string_count(src);
	m->str = malloc((m->nstr ? m->nstr : 1) * sizeof *m->str);
	if (!m->str)
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot merge '%s': out of memory",
				    kpt_file_path(src));
	for (uint32_t i = 0; i < m->nstr; i++)
		if ((rc = kpt_writer_intern_cstr(w, kpt_file_string(src, i), &m->str[i], d)))
			return rc;
	return 0;
}

/* Devices are the same device when their UUIDs are (non-empty and) equal. */
static int copy_devices(struct kpt_file *src, struct kpt_writer *w, struct remap *m,
			struct kpt_diag *d)
{
	const struct kpt_device *dev;
	size_t n;
	int rc = kpt_file_devices(src, &dev, &n, d);

	if (rc)
		return rc;
	m->ndev = (uint32_t)n;
	m->dev = malloc((n ? n : 1) * sizeof *m->dev);
	if (!m->dev)
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot merge '%s': out of memory",
				    kpt_file_path(src));
	for (size_t i = 0; i < n; i++) {
		uint32_t have = kpt_writer_ndevices_(w), found = KPT_NONE;
		struct kpt_device c;

		for (uint32_t j = 0; dev[i].uuid[0] && j < have && found == KPT_NONE; j++)
			if (strcmp(kpt_writer_device_at_(w, j)->uuid, dev[i].uuid) == 0)
				found = j;
		if (found == KPT_NONE) {
			c = dev[i];
			c.index = have;
			if ((rc = kpt_writer_device(w, &c, d)))
				return rc;
			found = have;
		}
		m->dev[i] = found;
	}
	return 0;
}

static int copy_small(struct kpt_file *src, struct kpt_writer *w, struct remap *m,
		      uint32_t run, int copy_meta, struct kpt_diag *d)
{
	const struct kpt_meta_kv *kv;
	const struct kpt_process *p;
	const struct kpt_drop *dr;
	size_t n;
	int rc;

	if (copy_meta) {
		if ((rc = kpt_file_meta(src, &kv, &n, d)))
			return rc;
		for (size_t i = 0; i < n; i++)
			if ((rc = kpt_writer_meta(w, kv[i].key, kv[i].value, d)))
				return rc;
	}
	if ((rc = kpt_file_processes(src, &p, &n, d)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct kpt_process c = p[i];

		c.index = m->proc_base + (uint32_t)i;
		c.command = map_str(m, c.command);
		if (run != KPT_NONE)
			c.run = run;
		if ((rc = kpt_writer_process(w, &c, d)))
			return rc;
	}
	if ((rc = kpt_file_drops(src, &dr, &n, d)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct kpt_drop c = dr[i];

		c.process += m->proc_base;
		c.device = map_dev(m, c.device);
		if ((rc = kpt_writer_drop(w, &c, d)))
			return rc;
	}
	return 0;
}

/* Copies a whole-table kind through a bounded scratch buffer, fixing each
 * row with fix(). */
#define COPY_TABLE(getter, putter, type, fix)                                      \
	do {                                                                       \
		const type *rows_;                                                 \
		size_t n_;                                                         \
		type buf_[256];                                                    \
		int rc_ = getter(src, &rows_, &n_, d);                             \
		if (rc_)                                                           \
			return rc_;                                                \
		for (size_t i_ = 0; i_ < n_;) {                                    \
			size_t k_ = 0;                                             \
			for (; k_ < 256 && i_ < n_; k_++, i_++) {                  \
				type *r = &buf_[k_];                               \
				*r = rows_[i_];                                    \
				fix;                                               \
			}                                                          \
			if ((rc_ = putter(w, buf_, k_, d)))                        \
				return rc_;                                        \
		}                                                                  \
	} while (0)

static int copy_bulk(struct kpt_file *src, struct kpt_writer *w, const struct remap *m,
		     struct kpt_diag *d)
{
	struct kpt_kernel_cursor *cur;
	const struct kpt_kernel *k;
	struct kpt_kernel *kb;
	size_t n;
	int rc;

	COPY_TABLE(kpt_file_memops, kpt_writer_memops, struct kpt_memop,
		   (r->device = map_dev(m, r->device), r->range = map_range(m, r->range, r->process),
		    r->process += m->proc_base));
	COPY_TABLE(kpt_file_ranges, kpt_writer_ranges, struct kpt_range,
		   (r->id = r->id == KPT_NONE ? KPT_NONE : m->range_base + r->id, r->parent = map_range(m, r->parent, r->process),
		    r->name = map_str(m, r->name), r->domain = map_str(m, r->domain),
		    r->process += m->proc_base));
	COPY_TABLE(kpt_file_events, kpt_writer_events, struct kpt_event,
		   (r->name = map_str(m, r->name), r->process += m->proc_base,
		    r->device = map_dev(m, r->device)));
	COPY_TABLE(kpt_file_env, kpt_writer_env, struct kpt_env_sample,
		   (r->device = map_dev(m, r->device), r->process += m->proc_base));
	COPY_TABLE(kpt_file_counters, kpt_writer_counters, struct kpt_counter,
		   (r->device = map_dev(m, r->device), r->process += m->proc_base,
		    r->kernel_name = map_str(m, r->kernel_name), r->metric = map_str(m, r->metric)));

	if ((rc = kpt_kernel_cursor_create(src, &cur, d)))
		return rc;
	kb = malloc(KPT_CHUNK_ROWS * sizeof *kb);
	if (!kb) {
		kpt_kernel_cursor_destroy(cur);
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot merge '%s': out of memory",
				    kpt_file_path(src));
	}
	while ((rc = kpt_kernel_cursor_next(cur, &k, &n, d)) > 0) {
		for (size_t i = 0; i < n; i++) {
			kb[i] = k[i];
			kb[i].name = map_str(m, k[i].name);
			kb[i].device = map_dev(m, k[i].device);
			kb[i].process += m->proc_base;
			kb[i].range = map_range(m, k[i].range, k[i].process);
		}
		if ((rc = kpt_writer_kernels(w, kb, n, d)))
			break;
	}
	free(kb);
	kpt_kernel_cursor_destroy(cur);
	return rc < 0 ? rc : 0;
}

int kpt_file_copy_into(struct kpt_file *src, struct kpt_writer *w, uint32_t run,
		       int copy_meta, struct kpt_diag *d)
{
	const struct kpt_copy_opts o = { .run = run, .copy_meta = copy_meta };

	return kpt_file_copy_into_opts(src, w, &o, d);
}

int kpt_file_copy_into_opts(struct kpt_file *src, struct kpt_writer *w, const struct kpt_copy_opts *o,
			    struct kpt_diag *d)
{
	struct remap m = {
		.proc_base = kpt_writer_nprocesses_(w),
		.range_base = kpt_writer_next_range_(w),
	};
	int rc;

	if (!(rc = copy_strings(src, w, &m, d)) && !(rc = copy_devices(src, w, &m, d)) &&
	    !(rc = copy_small(src, w, &m, o->run, o->copy_meta, d)) &&
	    !(rc = o->root_range ? write_roots(src, w, &m, o->root_range, d) : 0))
		rc = copy_bulk(src, w, &m, d);
	free(m.str);
	free(m.dev);
	return rc;
}

/* ---- the collector's meta of several files (kpt_meta_merge) ------------------------- */

enum merge_rule { RULE_SAME, RULE_SUM, RULE_MAX };

static const struct {
	const char *key;
	enum merge_rule rule;
} merge_rules[] = {
	{ "collector.nvtx_unmatched_pops", RULE_SUM },
	{ "collector.nvtx_closed_by_parent", RULE_SUM },
	{ "collector.windows", RULE_SUM },
	{ "collector.prerolls", RULE_SUM },
	{ "collector.detached", RULE_SUM },
	{ "collector.detach_failed", RULE_SUM },
	{ "collector.window_switches", RULE_SUM },
	{ "collector.window_switch_kinds_us", RULE_SUM },
	{ "collector.window_switch_callbacks_us", RULE_SUM },
	{ "collector.kernels_before_window", RULE_SUM },
	{ "collector.kernels_before_window_ns", RULE_SUM },
	{ "collector.memops_before_window", RULE_SUM },
	{ "collector.preroll_kernels_dropped", RULE_SUM },
	{ "collector.buffers_grown", RULE_SUM },
	{ "collector.api_callbacks_failed", RULE_SUM },
	{ "collector.attaches", RULE_SUM },
	{ "collector.attach_us", RULE_SUM },
	{ "collector.attach_failed", RULE_SUM },
	{ "collector.detaches", RULE_SUM },
	{ "collector.detach_us", RULE_SUM },
	{ "collector.windows_missed", RULE_SUM },
	{ "collector.ranges_untraced_dropped", RULE_SUM },
	{ "counters.lost_contexts", RULE_SUM },
	{ "counters.graph_launches_skipped", RULE_SUM },
	{ "counters.captured_launches", RULE_SUM },
	{ "collector.nvtx_payload", RULE_MAX },
	{ "collector.forked_child", RULE_MAX },
	{ "collector.detached_after_ns", RULE_MAX },
	{ "counters.passes", RULE_MAX },
};

/* One value of one key, from the processes [proc, proc + nproc) of the merge. */
struct merge_val {
	char *value;
	uint32_t proc, nproc;
};

struct merge_key {
	char *key;
	struct merge_val *v;
	size_t n, cap;
};

struct kpt_meta_merge {
	struct merge_key *k;
	size_t n, cap;
	uint32_t procs;             /* processes of the files added so far */
};

static int is_collector_key(const char *key)
{
	return strcmp(key, "collector") == 0 || strncmp(key, "collector.", 10) == 0 ||
	       strncmp(key, "counters.", 9) == 0;
}

static enum merge_rule rule_of(const char *key)
{
	for (size_t i = 0; i < sizeof merge_rules / sizeof merge_rules[0]; i++)
		if (strcmp(merge_rules[i].key, key) == 0)
			return merge_rules[i].rule;
	return RULE_SAME;
}

int kpt_meta_merge_create(struct kpt_meta_merge **out, struct kpt_diag *d)
{
	if (!(*out = calloc(1, sizeof **out)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory merging meta");
	return 0;
}

void kpt_meta_merge_destroy(struct kpt_meta_merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++) {
		for (size_t j = 0; j < m->k[i].n; j++)
			free(m->k[i].v[j].value);
		free(m->k[i].v);
		free(m->k[i].key);
	}
	free(m->k);
	free(m);
}

static int merge_put(struct kpt_meta_merge *m, const char *key, const char *value, uint32_t proc,
		     uint32_t nproc)
{
	struct merge_key *k = NULL;
	struct merge_val *v;

	for (size_t i = 0; i < m->n && !k; i++)
		if (strcmp(m->k[i].key, key) == 0)
			k = &m->k[i];
	if (!k) {
		if (kpt_grow(&m->k, &m->cap, m->n + 1, sizeof *m->k))
			return -1;
		k = &m->k[m->n];
		memset(k, 0, sizeof *k);
		if (!(k->key = strdup(key)))
			return -1;
		m->n++;
	}
	if (kpt_grow(&k->v, &k->cap, k->n + 1, sizeof *k->v))
		return -1;
	v = &k->v[k->n];
	if (!(v->value = strdup(value ? value : "")))
		return -1;
	v->proc = proc;
	v->nproc = nproc;
	k->n++;
	return 0;
}

int kpt_meta_merge_add(struct kpt_meta_merge *m, struct kpt_file *src, struct kpt_diag *d)
{
	const struct kpt_meta_kv *kv;
	const struct kpt_process *p;
	size_t n, np;
	int rc;

	if ((rc = kpt_file_meta(src, &kv, &n, d)) || (rc = kpt_file_processes(src, &p, &np, d)))
		return rc;
	for (size_t i = 0; i < n; i++)
		if (is_collector_key(kv[i].key) &&
		    merge_put(m, kv[i].key, kv[i].value, m->procs, (uint32_t)np) < 0)
			return kpt_diag_set(d, KPT_E_NOMEM, "cannot merge '%s': out of memory", kpt_file_path(src));
	m->procs += (uint32_t)np;
	return 0;
}

/* A whole decimal number. */
static int merge_number(const char *s, unsigned long long *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/* Appends to *buf (growing it) printf-style; -1 out of memory. */
static int merge_cat(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int merge_cat(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int k;

	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(*buf ? *buf + *len : NULL, *buf ? *cap - *len : 0, fmt, ap);
		va_end(ap);
		if (k < 0)
			return -1;
		if (*buf && *len + (size_t)k < *cap) {
			*len += (size_t)k;
			return 0;
		}
		{
			size_t nc = (*cap ? *cap : 64) * 2 + (size_t)k;
			char *nb = realloc(*buf, nc);

			if (!nb)
				return -1;
			*buf = nb;
			*cap = nc;
		}
	}
}

/* The merged value of k into *out (malloc'd). */
static int merge_value(const struct merge_key *k, char **out)
{
	enum merge_rule rule = rule_of(k->key);
	unsigned long long acc = 0, x;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int same = 1, numbers = 1;

	for (size_t i = 0; i < k->n; i++) {
		same &= strcmp(k->v[i].value, k->v[0].value) == 0;
		if (merge_number(k->v[i].value, &x) < 0)
			numbers = 0;
		else if (rule == RULE_SUM)
			acc += x;
		else if (x > acc)
			acc = x;
	}
	if (rule != RULE_SAME && numbers)
		return merge_cat(out, &len, &cap, "%llu", acc);
	if (same)
		return merge_cat(out, &len, &cap, "%s", k->v[0].value);
	/* per distinct value, in order of first appearance, the processes that gave it */
	for (size_t i = 0; i < k->n; i++) {
		size_t nprocs = 0, first = 1;
		int seen = 0;

		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(k->v[j].value, k->v[i].value) == 0;
		if (seen)
			continue;
		for (size_t j = i; j < k->n; j++)
			if (strcmp(k->v[j].value, k->v[i].value) == 0)
				nprocs += k->v[j].nproc;
		if (merge_cat(&buf, &len, &cap, "%s%s (process%s ", len ? "; " : "", k->v[i].value,
			      nprocs == 1 ? "" : "es") < 0)
			goto nomem;
		for (size_t j = i; j < k->n; j++) {
			if (strcmp(k->v[j].value, k->v[i].value) != 0)
				continue;
			for (uint32_t p = 0; p < k->v[j].nproc; p++, first = 0)
				if (merge_cat(&buf, &len, &cap, "%s%u", first ? "" : ",", k->v[j].proc + p) < 0)
					goto nomem;
		}
		if (merge_cat(&buf, &len, &cap, ")") < 0)
			goto nomem;
	}
	*out = buf;
	return 0;
nomem:
	free(buf);
	return -1;
}

int kpt_meta_merge_write(const struct kpt_meta_merge *m, struct kpt_writer *w, struct kpt_diag *d)
{
	for (size_t i = 0; i < m->n; i++) {
		char *v = NULL;
		int rc;

		if (merge_value(&m->k[i], &v) < 0) {
			free(v);
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory merging meta");
		}
		rc = kpt_writer_meta(w, m->k[i].key, v, d);
		free(v);
		if (rc)
			return rc;
	}
	return 0;
}
