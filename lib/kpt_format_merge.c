/* kpt_format_merge.c - kpt_file_copy_into: merging per-process files. */
#include <stdlib.h>
#include <string.h>

#include "kpt_format.h"
#include "kpt_format_int.h"

/* Remapping tables from src ids to w ids. */
struct remap {
	uint32_t *str;              /* by src string id */
	uint32_t nstr;
	uint32_t *dev;              /* by src device index */
	uint32_t ndev;
	uint32_t proc_base;         /* src process i -> proc_base + i */
	uint32_t range_base;        /* src range id r -> range_base + r */
};

static uint32_t map_str(const struct remap *m, uint32_t id)
{
	return id == KPT_NONE || id >= m->nstr ? KPT_NONE : m->str[id];
}

static uint32_t map_dev(const struct remap *m, uint32_t i)
{
	return i == KPT_NONE || i >= m->ndev ? KPT_NONE : m->dev[i];
}

static uint32_t map_range(const struct remap *m, uint32_t id)
{
	return id == KPT_NONE ? KPT_NONE : m->range_base + id;
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
		   (r->device = map_dev(m, r->device), r->process += m->proc_base,
		    r->range = map_range(m, r->range)));
	COPY_TABLE(kpt_file_ranges, kpt_writer_ranges, struct kpt_range,
		   (r->id = map_range(m, r->id), r->parent = map_range(m, r->parent),
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
			kb[i].range = map_range(m, k[i].range);
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
	struct remap m = {
		.proc_base = kpt_writer_nprocesses_(w),
		.range_base = kpt_writer_next_range_(w),
	};
	int rc;

	if (!(rc = copy_strings(src, w, &m, d)) && !(rc = copy_devices(src, w, &m, d)) &&
	    !(rc = copy_small(src, w, &m, run, copy_meta, d)))
		rc = copy_bulk(src, w, &m, d);
	free(m.str);
	free(m.dev);
	return rc;
}
