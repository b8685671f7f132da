/* kpt_export.c - Chrome trace, CSV and JSON exports (see kpt_export.h). */
#include "kpt_export.h"
#include "kpt_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_demangle.h"
#include "kpt_summary.h"
#include "kpt_text.h"

static const char *const format_names[] = {
	[KPT_EXPORT_CHROME] = "chrome",
	[KPT_EXPORT_CSV] = "csv",
	[KPT_EXPORT_JSON] = "json",
};
#define NFORMATS (sizeof format_names / sizeof format_names[0])

int kpt_export_format_parse(const char *name, enum kpt_export_format *fmt, struct kpt_diag *d)
{
	for (size_t i = 0; i < NFORMATS; i++) {
		if (strcmp(name, format_names[i]) == 0) {
			*fmt = (enum kpt_export_format)i;
			return 0;
		}
	}
	kpt_diag_set(d, KPT_E_INVAL, "unknown export format '%s'", name);
	return kpt_diag_hint(d, "formats: chrome, csv, json");
}

const char *kpt_export_format_name(enum kpt_export_format fmt)
{
	return (unsigned)fmt < NFORMATS ? format_names[fmt] : "?";
}

static int nomem(struct kpt_diag *d)
{
	return kpt_diag_set(d, KPT_E_NOMEM, "out of memory while exporting");
}

static int write_failed(struct kpt_diag *d)
{
	return kpt_diag_set(d, KPT_E_IO, "cannot write the export: %s", strerror(errno ? errno : EIO));
}

/* ---- shared state ------------------------------------------------------- */

static char not_cxx[1];

/* Demangled names, computed once per string id on first use, and the NVTX
 * range paths. */
struct names {
	struct kpt_file *f;
	char **dem;                 /* NULL: not yet; not_cxx: use the raw name */
	uint32_t n;
	struct kpt_range_paths *rp;
	char cut[4][4096 + 64];     /* cut_text's results, used in turn */
	unsigned next_cut;
};

/* Text written once per row or event (CSV, JSON, Chrome) is cut at this
 * many bytes: a 10 MB kernel name launched 400 times would make a 4 GB
 * export of a 1 KB file. Real names (C++ templates) stay well below. */
#define EXPORT_TEXT_MAX 4096

/* s, or its first EXPORT_TEXT_MAX bytes (on a UTF-8 boundary) followed by
 * "\u2026 [cut at 4096 bytes]" in one of nm's buffers (valid for the next
 * three calls). O(EXPORT_TEXT_MAX), whatever the length of s. */
static const char *cut_text(struct names *nm, const char *s)
{
	size_t k = EXPORT_TEXT_MAX;
	char *b;

	if (strnlen(s, EXPORT_TEXT_MAX + 1) <= EXPORT_TEXT_MAX)
		return s;
	while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	b = nm->cut[nm->next_cut++ % 4];
	memcpy(b, s, k);
	snprintf(b + k, 64, "\xe2\x80\xa6 [cut at %d bytes]", EXPORT_TEXT_MAX);
	return b;
}

static int names_init(struct names *nm, struct kpt_file *f, struct kpt_diag *d)
{
	int rc = kpt_file_load_strings(f, d);

	nm->f = f;
	nm->rp = NULL;
	nm->n = rc < 0 ? 0 : kpt_file_string_count(f);
	nm->dem = calloc(nm->n ? nm->n : 1, sizeof *nm->dem);
	if (rc < 0)
		return rc;
	if (!nm->dem)
		return nomem(d);
	return kpt_range_paths_create(f, &nm->rp, d);
}

static void names_release(struct names *nm)
{
	for (uint32_t i = 0; nm->dem && i < nm->n; i++)
		if (nm->dem[i] != not_cxx)
			free(nm->dem[i]);
	free(nm->dem);
	kpt_range_paths_destroy(nm->rp);
}

/* "outer/inner" for a range id; "" outside any range (or out of memory). */
static const char *range_path(struct names *nm, uint32_t range)
{
	const char *p = range == KPT_NONE ? "" : kpt_range_paths_get(nm->rp, range);

	return p ? p : "";
}

static const char *raw_name(const struct names *nm, uint32_t id)
{
	const char *s = kpt_file_string(nm->f, id);

	return s ? s : "?";
}

static const char *display_name(struct names *nm, uint32_t id)
{
	if (id >= nm->n)
		return raw_name(nm, id);
	if (!nm->dem[id]) {
		nm->dem[id] = kpt_demangle(raw_name(nm, id));
		if (!nm->dem[id])
			nm->dem[id] = not_cxx;
	}
	return nm->dem[id] == not_cxx ? raw_name(nm, id) : nm->dem[id];
}

/* The small tables every exporter looks at. */
struct tables {
	const struct kpt_device *dev;
	size_t ndev;
	const struct kpt_process *proc;
	size_t nproc;
	const struct kpt_memop *memops;
	size_t nmemops;
	const struct kpt_range *ranges;
	size_t nranges;
	const struct kpt_event *events;
	size_t nevents;
	const struct kpt_env_sample *env;
	size_t nenv;
};

static int tables_load(struct kpt_file *f, struct tables *t, struct kpt_diag *d)
{
	int rc = kpt_file_devices(f, &t->dev, &t->ndev, d);

	if (rc >= 0)
		rc = kpt_file_processes(f, &t->proc, &t->nproc, d);
	if (rc >= 0)
		rc = kpt_file_memops(f, &t->memops, &t->nmemops, d);
	if (rc >= 0)
		rc = kpt_file_ranges(f, &t->ranges, &t->nranges, d);
	if (rc >= 0)
		rc = kpt_file_events(f, &t->events, &t->nevents, d);
	if (rc >= 0)
		rc = kpt_file_env(f, &t->env, &t->nenv, d);
	return rc < 0 ? rc : 0;
}

static const char *const memop_names[] = {
	[KPT_MEMCPY_HTOD] = "Memcpy HtoD",
	[KPT_MEMCPY_DTOH] = "Memcpy DtoH",
	[KPT_MEMCPY_DTOD] = "Memcpy DtoD",
	[KPT_MEMCPY_HTOH] = "Memcpy HtoH",
	[KPT_MEMCPY_PTOP] = "Memcpy PtoP",
	[KPT_MEMCPY_OTHER] = "Memcpy",
	[KPT_MEMSET] = "Memset",
};

static const char *const mem_kind_names[] = {
	[KPT_MEM_UNKNOWN] = "Unknown",
	[KPT_MEM_PAGEABLE] = "Pageable",
	[KPT_MEM_PINNED] = "Pinned",
	[KPT_MEM_DEVICE] = "Device",
	[KPT_MEM_ARRAY] = "Array",
	[KPT_MEM_MANAGED] = "Managed",
};

static const char *memop_name(uint32_t kind)
{
	return kind < sizeof memop_names / sizeof memop_names[0] && memop_names[kind]
	       ? memop_names[kind] : "Memop";
}

static const char *mem_kind_name(uint32_t kind)
{
	return kind < sizeof mem_kind_names / sizeof mem_kind_names[0] ? mem_kind_names[kind] : "Unknown";
}

static uint64_t span_ns(uint64_t start, uint64_t end)
{
	return end > start ? end - start : 0;
}

/* ---- JSON pieces ---------------------------------------------------------- */

int kpt_export_json_meta(struct kpt_json *j, struct kpt_file *f, struct kpt_diag *d)
{
	const struct kpt_meta_kv *kv;
	size_t n;
	int rc = kpt_file_meta(f, &kv, &n, d);

	if (rc < 0)
		return rc;
	kpt_json_begin_object(j);
	for (size_t i = 0; i < n; i++)
		kpt_json_kv_str(j, kv[i].key, kv[i].value);
	kpt_json_end_object(j);
	return 0;
}

int kpt_export_json_devices(struct kpt_json *j, struct kpt_file *f, struct kpt_diag *d)
{
	const struct kpt_device *dev;
	size_t n;
	int rc = kpt_file_devices(f, &dev, &n, d);

	if (rc < 0)
		return rc;
	kpt_json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		char cc[24];

		snprintf(cc, sizeof cc, "%u.%u", dev[i].cc_major, dev[i].cc_minor);
		kpt_json_begin_object(j);
		kpt_json_kv_u64(j, "index", dev[i].index);
		kpt_json_kv_str(j, "name", dev[i].name);
		kpt_json_kv_str(j, "slug", dev[i].slug);
		kpt_json_kv_str(j, "uuid", dev[i].uuid);
		kpt_json_kv_u64(j, "cuda_ordinal", dev[i].cuda_ordinal);
		kpt_json_kv_u64(j, "sm_count", dev[i].sm_count);
		kpt_json_kv_str(j, "compute_capability", cc);
		kpt_json_kv_u64(j, "memory_bytes", dev[i].mem_bytes);
		kpt_json_kv_u64(j, "l2_bytes", dev[i].l2_bytes);
		kpt_json_kv_u64(j, "sm_clock_max_mhz", dev[i].sm_clock_max_mhz);
		kpt_json_kv_u64(j, "mem_clock_max_mhz", dev[i].mem_clock_max_mhz);
		kpt_json_kv_u64(j, "mem_bus_width_bits", dev[i].mem_bus_width_bits);
		kpt_json_kv_u64(j, "driver_version", dev[i].driver_version);
		kpt_json_kv_u64(j, "runtime_version", dev[i].runtime_version);
		kpt_json_kv_str(j, "driver", dev[i].driver_string);
		kpt_json_kv_double(j, "copy_gbps", dev[i].copy_gbps);
		kpt_json_kv_double(j, "bf16_tflops", dev[i].bf16_tflops);
		kpt_json_end_object(j);
	}
	kpt_json_end_array(j);
	return 0;
}

int kpt_export_json_counts(struct kpt_json *j, struct kpt_file *f, struct kpt_diag *d)
{
	struct kpt_counts c;
	int rc = kpt_file_counts(f, &c, d);

	if (rc < 0)
		return rc;
	kpt_json_begin_object(j);
	kpt_json_kv_u64(j, "kernels", c.kernels);
	kpt_json_kv_u64(j, "memops", c.memops);
	kpt_json_kv_u64(j, "ranges", c.ranges);
	kpt_json_kv_u64(j, "events", c.events);
	kpt_json_kv_u64(j, "env_samples", c.env_samples);
	kpt_json_kv_u64(j, "counters", c.counters);
	kpt_json_kv_u64(j, "devices", c.devices);
	kpt_json_kv_u64(j, "processes", c.processes);
	kpt_json_kv_u64(j, "runs", c.runs);
	kpt_json_kv_u64(j, "dropped_records", c.dropped_records);
	kpt_json_end_object(j);
	return 0;
}

static void json_u32x3(struct kpt_json *j, const char *key, const uint32_t v[3])
{
	kpt_json_key(j, key);
	kpt_json_begin_array(j);
	for (int i = 0; i < 3; i++)
		kpt_json_u64(j, v[i]);
	kpt_json_end_array(j);
}

/* ---- Chrome trace ----------------------------------------------------------- */

/* Tracks already named by metadata events: a set of (pid, tid) pairs. */
struct track_set {
	uint64_t (*keys)[2];        /* {pid + 1, tid}; pid + 1 == 0: empty */
	size_t n, cap;
};

static uint64_t mix2(uint64_t a, uint64_t b)
{
	uint64_t x = a * UINT64_C(0x9e3779b97f4a7c15) ^ b;

	x ^= x >> 31;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	return x ^ (x >> 29);
}

/* 1 when (pid, tid) was new and is now in the set, 0 when present, <0 nomem. */
static int track_add(struct track_set *s, uint64_t pid, uint64_t tid)
{
	size_t i;

	if (2 * (s->n + 1) > s->cap) {
		struct track_set g = { .cap = s->cap ? 2 * s->cap : 64 };

		g.keys = calloc(g.cap, sizeof *g.keys);
		if (!g.keys)
			return KPT_E_NOMEM;
		for (size_t k = 0; k < s->cap; k++)
			if (s->keys[k][0])
				track_add(&g, s->keys[k][0] - 1, s->keys[k][1]);
		free(s->keys);
		*s = g;
	}
	for (i = mix2(pid, tid) & (s->cap - 1); s->keys[i][0]; i = (i + 1) & (s->cap - 1))
		if (s->keys[i][0] == pid + 1 && s->keys[i][1] == tid)
			return 0;
	s->keys[i][0] = pid + 1;
	s->keys[i][1] = tid;
	s->n++;
	return 1;
}

struct chrome {
	struct kpt_json *j;
	struct kpt_file *f;
	struct tables t;
	struct names nm;
	struct track_set tracks;
	uint64_t base_ns;
	uint64_t stride;            /* pids per recorded process: host + devices */
	int has_api;                /* runtime/driver events: draw launch flows */
	unsigned char *long_used;   /* [nm.n] 1: a cut name whose whole text goes at the end */
};

/* Chrome events cut text as cut_text does, and the whole text of each cut
 * name is written once, under "kptprofLongNames" at the end (keyed by the
 * number the cut text names). */

/* key: s, or its first EXPORT_TEXT_MAX bytes (cut on a UTF-8 boundary) and
 * a note naming its length and sid (KPT_NONE: no whole text kept). */
static void chrome_text(struct chrome *c, const char *key, const char *s, uint32_t sid)
{
	size_t len = strnlen(s, EXPORT_TEXT_MAX + 1), k = EXPORT_TEXT_MAX;
	char *buf;
	int n;

	if (len <= EXPORT_TEXT_MAX) {
		kpt_json_kv_str(c->j, key, s);
		return;
	}
	while (k > 0 && ((unsigned char)s[k] & 0xc0) == 0x80)
		k--;
	len = strlen(s);
	buf = malloc(k + 96);
	if (!buf) {
		kpt_json_kv_str(c->j, key, "?");
		return;
	}
	memcpy(buf, s, k);
	if (sid != KPT_NONE && sid < c->nm.n && c->long_used) {
		c->long_used[sid] = 1;
		n = snprintf(buf + k, 96, "\xe2\x80\xa6 [%zu bytes: kptprofLongNames %u]", len, sid);
	} else {
		n = snprintf(buf + k, 96, "\xe2\x80\xa6 [%zu bytes]", len);
	}
	kpt_json_key(c->j, key);
	kpt_json_strn(c->j, buf, k + (size_t)n);
	free(buf);
}

/* pid of a recorded process's host track and of its device tracks. */
static uint64_t host_pid(const struct chrome *c, uint32_t proc)
{
	return 1 + (uint64_t)proc * c->stride;
}

static uint64_t gpu_pid(const struct chrome *c, uint32_t proc, uint32_t dev)
{
	return host_pid(c, proc) + 1 + dev;
}

static void meta_event(struct chrome *c, const char *what, uint64_t pid, uint64_t tid,
		       const char *name, int64_t sort_index)
{
	struct kpt_json *j = c->j;

	kpt_json_begin_object(j);
	kpt_json_kv_str(j, "ph", "M");
	kpt_json_kv_str(j, "name", what);
	kpt_json_kv_u64(j, "pid", pid);
	kpt_json_kv_u64(j, "tid", tid);
	kpt_json_kv_u64(j, "ts", 0);    /* not needed by the format; some readers want it */
	kpt_json_key(j, "args");
	kpt_json_begin_object(j);
	if (name)
		kpt_json_kv_str(j, "name", name);
	else
		kpt_json_kv_i64(j, "sort_index", sort_index);
	kpt_json_end_object(j);
	kpt_json_end_object(j);
}

static const char *proc_label(const struct chrome *c, uint32_t proc, char *buf, size_t cap)
{
	if (proc < c->t.nproc)
		snprintf(buf, cap, "pid %u, run %u", c->t.proc[proc].pid, c->t.proc[proc].run);
	else
		snprintf(buf, cap, "process %u", proc);
	return buf;
}

/* Names the process track of pid (first time only). */
static int name_process(struct chrome *c, uint64_t pid, uint32_t proc, uint32_t dev)
{
	char label[96], name[512];
	int rc = track_add(&c->tracks, pid, UINT64_MAX);

	if (rc <= 0)
		return rc;
	proc_label(c, proc, label, sizeof label);
	if (dev == KPT_NONE)
		snprintf(name, sizeof name, "Host (%s)", label);
	else if (dev < c->t.ndev)
		snprintf(name, sizeof name, "GPU %u: %.300s (%s)", dev, c->t.dev[dev].name, label);
	else
		snprintf(name, sizeof name, "GPU %u (%s)", dev, label);
	meta_event(c, "process_name", pid, 0, name, 0);
	meta_event(c, "process_sort_index", pid, 0, NULL, (int64_t)pid);
	return 0;
}

/* Perfetto reads pid and tid as 32-bit numbers: a 64-bit thread id (a
 * pthread_t rather than an OS tid) is folded into 32 bits. */
static uint64_t host_tid(uint64_t thread)
{
	return thread > UINT32_MAX ? (uint32_t)(thread ^ thread >> 32) : thread;
}

/* Names the thread track (pid, tid) the first time it is used. */
static int name_thread(struct chrome *c, uint64_t pid, uint64_t tid, uint32_t proc, uint32_t dev)
{
	char name[64];
	int rc = name_process(c, pid, proc, dev);

	if (rc >= 0)
		rc = track_add(&c->tracks, pid, tid);
	if (rc <= 0)
		return rc;
	if (dev == KPT_NONE)
		snprintf(name, sizeof name, "thread %" PRIu64, tid);
	else
		snprintf(name, sizeof name, "stream %" PRIu64, tid);
	meta_event(c, "thread_name", pid, tid, name, 0);
	meta_event(c, "thread_sort_index", pid, tid, NULL, (int64_t)tid);
	return 0;
}

/* The common head of a slice: ph, cat, name (chrome_text: sid is the
 * string it came from, KPT_NONE for a made-up one), pid, tid, ts, dur. */
static void slice_head(struct chrome *c, const char *cat, const char *name, uint32_t sid, uint64_t pid,
		       uint64_t tid, uint64_t start, uint64_t end)
{
	struct kpt_json *j = c->j;

	kpt_json_begin_object(j);
	kpt_json_kv_str(j, "ph", "X");
	kpt_json_kv_str(j, "cat", cat);
	chrome_text(c, "name", name, sid);
	kpt_json_kv_u64(j, "pid", pid);
	kpt_json_kv_u64(j, "tid", tid);
	kpt_json_key(j, "ts");
	kpt_json_ns_as_us(j, (int64_t)(start - c->base_ns));
	kpt_json_key(j, "dur");
	kpt_json_ns_as_us(j, (int64_t)span_ns(start, end));
}

/* Flow arrows from a launching API call to its kernel or memop, as Kineto
 * draws them ("ac2g"); ids joined with the process, as correlation ids are
 * per process. Only written when the file has API events (record --api). */
static void flow_event(struct chrome *c, const char *ph, uint32_t proc, uint32_t corr,
		       uint64_t pid, uint64_t tid, uint64_t t)
{
	struct kpt_json *j = c->j;

	kpt_json_begin_object(j);
	kpt_json_kv_str(j, "ph", ph);
	kpt_json_kv_str(j, "cat", "ac2g");
	kpt_json_kv_str(j, "name", "ac2g");
	kpt_json_kv_u64(j, "id", (uint64_t)proc << 32 | corr);
	kpt_json_kv_u64(j, "pid", pid);
	kpt_json_kv_u64(j, "tid", tid);
	kpt_json_key(j, "ts");
	kpt_json_ns_as_us(j, (int64_t)(t - c->base_ns));
	if (ph[0] == 'f')
		kpt_json_kv_str(j, "bp", "e");
	kpt_json_end_object(j);
}

static int chrome_kernel(struct chrome *c, const struct kpt_kernel *k)
{
	struct kpt_json *j = c->j;
	uint64_t pid = gpu_pid(c, k->process, k->device);

	if (name_thread(c, pid, k->stream, k->process, k->device) < 0)
		return KPT_E_NOMEM;
	slice_head(c, "kernel", display_name(&c->nm, k->name), k->name, pid, k->stream, k->start_ns, k->end_ns);
	kpt_json_key(j, "args");
	kpt_json_begin_object(j);
	json_u32x3(j, "grid", k->grid);
	json_u32x3(j, "block", k->block);
	kpt_json_kv_u64(j, "registers per thread", k->registers);
	kpt_json_kv_u64(j, "shared memory", (uint64_t)k->shared_static + k->shared_dynamic);
	kpt_json_kv_u64(j, "stream", k->stream);
	kpt_json_kv_u64(j, "correlation", k->correlation);
	kpt_json_kv_u64(j, "device", k->device);
	if (k->range != KPT_NONE)
		chrome_text(c, "nvtx range", range_path(&c->nm, k->range), KPT_NONE);
	if (k->graph != KPT_NONE) {
		kpt_json_kv_u64(j, "graph", k->graph);
		kpt_json_kv_u64(j, "graph node", k->graph_node);
	}
	kpt_json_end_object(j);
	kpt_json_end_object(j);
	if (c->has_api && k->correlation)
		flow_event(c, "f", k->process, k->correlation, pid, k->stream, k->start_ns);
	return 0;
}

static int chrome_memop(struct chrome *c, const struct kpt_memop *m)
{
	struct kpt_json *j = c->j;
	uint64_t pid = gpu_pid(c, m->process, m->device);
	uint64_t ns = span_ns(m->start_ns, m->end_ns);
	char name[96];

	if (name_thread(c, pid, m->stream, m->process, m->device) < 0)
		return KPT_E_NOMEM;
	if (m->kind == KPT_MEMSET)
		snprintf(name, sizeof name, "Memset (%s)", mem_kind_name(m->dst_mem));
	else
		snprintf(name, sizeof name, "%s (%s -> %s)", memop_name(m->kind),
			 mem_kind_name(m->src_mem), mem_kind_name(m->dst_mem));
	slice_head(c, m->kind == KPT_MEMSET ? "gpu_memset" : "gpu_memcpy", name, KPT_NONE, pid, m->stream,
		   m->start_ns, m->end_ns);
	kpt_json_key(j, "args");
	kpt_json_begin_object(j);
	kpt_json_kv_u64(j, "bytes", m->bytes);
	kpt_json_kv_double(j, "memory bandwidth (GB/s)", ns ? (double)m->bytes / (double)ns : 0);
	kpt_json_kv_u64(j, "stream", m->stream);
	kpt_json_kv_u64(j, "correlation", m->correlation);
	kpt_json_kv_u64(j, "device", m->device);
	kpt_json_end_object(j);
	kpt_json_end_object(j);
	if (c->has_api && m->correlation)
		flow_event(c, "f", m->process, m->correlation, pid, m->stream, m->start_ns);
	return 0;
}

static int chrome_range(struct chrome *c, const struct kpt_range *r)
{
	struct kpt_json *j = c->j;
	uint64_t pid = host_pid(c, r->process);
	const char *name = raw_name(&c->nm, r->name);

	if (r->kind != KPT_RANGE_MARK && r->end_ns == 0)
		return 0;               /* never closed: no extent to draw */
	if (name_thread(c, pid, host_tid(r->thread), r->process, KPT_NONE) < 0)
		return KPT_E_NOMEM;
	if (r->kind == KPT_RANGE_MARK) {
		kpt_json_begin_object(j);
		kpt_json_kv_str(j, "ph", "i");
		kpt_json_kv_str(j, "s", "t");
		kpt_json_kv_str(j, "cat", "nvtx");
		chrome_text(c, "name", name, r->name);
		kpt_json_kv_u64(j, "pid", pid);
		kpt_json_kv_u64(j, "tid", host_tid(r->thread));
		kpt_json_key(j, "ts");
		kpt_json_ns_as_us(j, (int64_t)(r->start_ns - c->base_ns));
	} else
		slice_head(c, "nvtx", name, r->name, pid, host_tid(r->thread), r->start_ns, r->end_ns);
	if (r->domain != KPT_NONE) {
		kpt_json_key(j, "args");
		kpt_json_begin_object(j);
		kpt_json_kv_str(j, "domain", raw_name(&c->nm, r->domain));
		kpt_json_end_object(j);
	}
	kpt_json_end_object(j);
	return 0;
}

static const char *const event_cats[] = {
	[KPT_EVENT_SYNC] = "cuda_sync",
	[KPT_EVENT_RUNTIME] = "cuda_runtime",
	[KPT_EVENT_DRIVER] = "cuda_driver",
};

static int chrome_event(struct chrome *c, const struct kpt_event *e)
{
	struct kpt_json *j = c->j;
	uint64_t pid = host_pid(c, e->process);
	const char *cat = e->kind < sizeof event_cats / sizeof event_cats[0] && event_cats[e->kind]
			  ? event_cats[e->kind] : "cuda";

	if (name_thread(c, pid, host_tid(e->thread), e->process, KPT_NONE) < 0)
		return KPT_E_NOMEM;
	slice_head(c, cat, e->name != KPT_NONE ? raw_name(&c->nm, e->name) : cat, e->name, pid, host_tid(e->thread),
		   e->start_ns, e->end_ns);
	kpt_json_key(j, "args");
	kpt_json_begin_object(j);
	kpt_json_kv_u64(j, "correlation", e->correlation);
	if (e->device != KPT_NONE)
		kpt_json_kv_u64(j, "device", e->device);
	if (e->stream != KPT_NONE)
		kpt_json_kv_u64(j, "stream", e->stream);
	kpt_json_end_object(j);
	kpt_json_end_object(j);
	if (e->kind != KPT_EVENT_SYNC && e->correlation)
		flow_event(c, "s", e->process, e->correlation, pid, host_tid(e->thread), e->start_ns);
	return 0;
}

/* NVML samples as counter tracks, one event per sample and quantity. */
static const struct {
	const char *name;
	const char *unit;
	size_t off;                 /* uint32_t field of struct kpt_env_sample */
} env_counters[] = {
	{ "SM clock", "MHz", offsetof(struct kpt_env_sample, sm_mhz) },
	{ "memory clock", "MHz", offsetof(struct kpt_env_sample, mem_mhz) },
	{ "temperature", "C", offsetof(struct kpt_env_sample, temp_c) },
	{ "power", "mW", offsetof(struct kpt_env_sample, power_mw) },
};

static int chrome_env(struct chrome *c, const struct kpt_env_sample *s)
{
	struct kpt_json *j = c->j;
	uint64_t pid = gpu_pid(c, s->process, s->device);

	if (name_process(c, pid, s->process, s->device) < 0)
		return KPT_E_NOMEM;
	for (size_t i = 0; i < sizeof env_counters / sizeof env_counters[0]; i++) {
		uint32_t v;

		memcpy(&v, (const char *)s + env_counters[i].off, sizeof v);
		kpt_json_begin_object(j);
		kpt_json_kv_str(j, "ph", "C");
		kpt_json_kv_str(j, "name", env_counters[i].name);
		kpt_json_kv_u64(j, "pid", pid);
		kpt_json_key(j, "ts");
		kpt_json_ns_as_us(j, (int64_t)(s->t_ns - c->base_ns));
		kpt_json_key(j, "args");
		kpt_json_begin_object(j);
		kpt_json_kv_u64(j, env_counters[i].unit, v);
		kpt_json_end_object(j);
		kpt_json_end_object(j);
	}
	return 0;
}

static void lower(uint64_t *v, uint64_t x)
{
	if (x < *v)
		*v = x;
}

/* First pass over the kernels: the earliest timestamp and the highest
 * device index (for the pid layout). */
static int chrome_scan(struct chrome *c, struct kpt_diag *d)
{
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *k;
	uint64_t base = UINT64_MAX;
	uint32_t maxdev = c->t.ndev ? (uint32_t)c->t.ndev - 1 : 0;
	size_t n;
	int rc = kpt_kernel_cursor_create(c->f, &cur, d);

	while (rc >= 0 && (rc = kpt_kernel_cursor_next(cur, &k, &n, d)) > 0) {
		for (size_t i = 0; i < n; i++) {
			lower(&base, k[i].start_ns);
			maxdev = k[i].device > maxdev ? k[i].device : maxdev;
		}
	}
	kpt_kernel_cursor_destroy(cur);
	for (size_t i = 0; i < c->t.nmemops; i++) {
		lower(&base, c->t.memops[i].start_ns);
		maxdev = c->t.memops[i].device > maxdev ? c->t.memops[i].device : maxdev;
	}
	for (size_t i = 0; i < c->t.nranges; i++)
		lower(&base, c->t.ranges[i].start_ns);
	for (size_t i = 0; i < c->t.nevents; i++)
		lower(&base, c->t.events[i].start_ns);
	for (size_t i = 0; i < c->t.nenv; i++) {
		lower(&base, c->t.env[i].t_ns);
		maxdev = c->t.env[i].device > maxdev ? c->t.env[i].device : maxdev;
	}
	for (size_t i = 0; i < c->t.nevents; i++)
		c->has_api |= c->t.events[i].kind != KPT_EVENT_SYNC;
	c->base_ns = base == UINT64_MAX ? 0 : base;
	c->stride = (uint64_t)maxdev + 2;
	return rc;
}

static int chrome_device_properties(struct chrome *c)
{
	struct kpt_json *j = c->j;

	kpt_json_key(j, "deviceProperties");
	kpt_json_begin_array(j);
	for (size_t i = 0; i < c->t.ndev; i++) {
		const struct kpt_device *dv = &c->t.dev[i];

		kpt_json_begin_object(j);
		kpt_json_kv_u64(j, "id", dv->index);
		kpt_json_kv_str(j, "name", dv->name);
		kpt_json_kv_u64(j, "totalGlobalMem", dv->mem_bytes);
		kpt_json_kv_u64(j, "computeMajor", dv->cc_major);
		kpt_json_kv_u64(j, "computeMinor", dv->cc_minor);
		kpt_json_kv_u64(j, "numSms", dv->sm_count);
		kpt_json_kv_u64(j, "l2CacheSize", dv->l2_bytes);
		kpt_json_end_object(j);
	}
	kpt_json_end_array(j);
	return 0;
}

/* [t0, t1] overlaps [start, end]. */
static int in_window(uint64_t start, uint64_t end, uint64_t t0, uint64_t t1)
{
	return end >= t0 && start <= t1;
}

int kpt_export_chrome_window(struct kpt_file *f, FILE *out, uint64_t t0, uint64_t t1, struct kpt_diag *d)
{
	struct kpt_json j;
	struct chrome c = { .j = &j, .f = f };
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *k;
	size_t n;
	int rc = names_init(&c.nm, f, d);

	if (rc >= 0)
		rc = tables_load(f, &c.t, d);
	if (rc >= 0)
		rc = chrome_scan(&c, d);
	if (rc >= 0 && !(c.long_used = calloc(c.nm.n ? c.nm.n : 1, 1)))
		rc = nomem(d);
	kpt_json_init(&j, out, 2);
	kpt_json_begin_object(&j);
	if (rc >= 0) {
		kpt_json_kv_u64(&j, "schemaVersion", 1);
		kpt_json_kv_u64(&j, "baseTimeNanoseconds", c.base_ns);
		chrome_device_properties(&c);
		kpt_json_key(&j, "otherData");
		rc = kpt_export_json_meta(&j, f, d);
	}
	kpt_json_key(&j, "traceEvents");
	kpt_json_begin_array(&j);
	for (size_t i = 0; rc >= 0 && i < c.t.nranges; i++)
		if (in_window(c.t.ranges[i].start_ns, c.t.ranges[i].end_ns ? c.t.ranges[i].end_ns : UINT64_MAX, t0, t1))
			rc = chrome_range(&c, &c.t.ranges[i]);
	for (size_t i = 0; rc >= 0 && i < c.t.nevents; i++)
		if (in_window(c.t.events[i].start_ns, c.t.events[i].end_ns, t0, t1))
			rc = chrome_event(&c, &c.t.events[i]);
	for (size_t i = 0; rc >= 0 && i < c.t.nmemops; i++)
		if (in_window(c.t.memops[i].start_ns, c.t.memops[i].end_ns, t0, t1))
			rc = chrome_memop(&c, &c.t.memops[i]);
	for (size_t i = 0; rc >= 0 && i < c.t.nenv; i++)
		if (in_window(c.t.env[i].t_ns, c.t.env[i].t_ns, t0, t1))
			rc = chrome_env(&c, &c.t.env[i]);
	if (rc >= 0)
		rc = kpt_kernel_cursor_create(f, &cur, d);
	while (rc >= 0 && !j.err && (rc = kpt_kernel_cursor_next(cur, &k, &n, d)) > 0)
		for (size_t i = 0; rc >= 0 && i < n; i++)
			if (in_window(k[i].start_ns, k[i].end_ns, t0, t1))
				rc = chrome_kernel(&c, &k[i]);
	kpt_kernel_cursor_destroy(cur);
	if (rc == KPT_E_NOMEM)
		rc = nomem(d);
	kpt_json_end_array(&j);
	if (rc >= 0 && c.long_used) {
		int any = 0;

		for (uint32_t i = 0; i < c.nm.n; i++) {
			char key[16];

			if (!c.long_used[i])
				continue;
			if (!any++) {
				kpt_json_key(&j, "kptprofLongNames");
				kpt_json_begin_object(&j);
			}
			snprintf(key, sizeof key, "%u", i);
			kpt_json_kv_str(&j, key, display_name(&c.nm, i));
		}
		if (any)
			kpt_json_end_object(&j);
	}
	kpt_json_end_object(&j);
	if (rc >= 0 && kpt_json_finish(&j, d) < 0)
		rc = write_failed(d);
	free(c.tracks.keys);
	free(c.long_used);
	names_release(&c.nm);
	return rc < 0 ? rc : 0;
}

static int export_chrome(struct kpt_file *f, FILE *out, struct kpt_diag *d)
{
	return kpt_export_chrome_window(f, out, 0, UINT64_MAX, d);
}

/* ---- CSV ---------------------------------------------------------------- */

int kpt_csv_field(FILE *out, const char *s)
{
	return kpt_text_write(out, KPT_TEXT_CSV, s);
}

static const char csv_columns[] =
	"kind,start_ns,end_ns,duration_ns,process,run,device,stream,correlation,"
	"grid_x,grid_y,grid_z,block_x,block_y,block_z,registers,shared_static,shared_dynamic,"
	"bytes,range_id,range,name\n";

static uint32_t run_of(const struct tables *t, uint32_t proc)
{
	return proc < t->nproc ? t->proc[proc].run : 0;
}

/* The columns up to correlation, shared by kernels and memops. */
static void csv_head(FILE *out, const struct tables *t, const char *kind, uint64_t start, uint64_t end,
		     uint32_t proc, uint32_t dev, uint32_t stream, uint32_t corr)
{
	fprintf(out, "%s,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,%u,%u,%u,", kind, start, end,
		span_ns(start, end), proc, run_of(t, proc), dev, stream, corr);
}

/* The range_id and range (path) columns. */
static void csv_range(FILE *out, struct names *nm, uint32_t range)
{
	if (range == KPT_NONE) {
		fputs(",,", out);
		return;
	}
	fprintf(out, "%u,", range);
	kpt_csv_field(out, cut_text(nm, range_path(nm, range)));
	putc(',', out);
}

static int export_csv(struct kpt_file *f, FILE *out, struct kpt_diag *d)
{
	struct tables t;
	struct names nm;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *k;
	size_t n;
	int rc = names_init(&nm, f, d);

	if (rc >= 0)
		rc = tables_load(f, &t, d);
	if (rc >= 0)
		rc = kpt_kernel_cursor_create(f, &cur, d);
	if (rc >= 0)
		fputs(csv_columns, out);
	while (rc >= 0 && !ferror(out) && (rc = kpt_kernel_cursor_next(cur, &k, &n, d)) > 0) {
		for (size_t i = 0; i < n; i++) {
			csv_head(out, &t, "kernel", k[i].start_ns, k[i].end_ns, k[i].process, k[i].device,
				 k[i].stream, k[i].correlation);
			fprintf(out, "%u,%u,%u,%u,%u,%u,%u,%u,%u,,", k[i].grid[0], k[i].grid[1], k[i].grid[2],
				k[i].block[0], k[i].block[1], k[i].block[2], k[i].registers,
				k[i].shared_static, k[i].shared_dynamic);
			csv_range(out, &nm, k[i].range);
			kpt_csv_field(out, cut_text(&nm, display_name(&nm, k[i].name)));
			putc('\n', out);
		}
	}
	kpt_kernel_cursor_destroy(cur);
	for (size_t i = 0; rc >= 0 && i < t.nmemops; i++) {
		const struct kpt_memop *m = &t.memops[i];

		csv_head(out, &t, m->kind == KPT_MEMSET ? "memset" : "memcpy", m->start_ns, m->end_ns,
			 m->process, m->device, m->stream, m->correlation);
		fprintf(out, ",,,,,,,,,%" PRIu64 ",", m->bytes);
		csv_range(out, &nm, m->range);
		kpt_csv_field(out, memop_name(m->kind));
		putc('\n', out);
	}
	names_release(&nm);
	if (rc >= 0 && (fflush(out) != 0 || ferror(out)))
		rc = write_failed(d);
	return rc < 0 ? rc : 0;
}

/* ---- JSON --------------------------------------------------------------- */

static void json_kernel(struct kpt_json *j, struct names *nm, const struct kpt_kernel *k)
{
	kpt_json_begin_object(j);
	kpt_json_kv_str(j, "name", cut_text(nm, display_name(nm, k->name)));
	kpt_json_kv_str(j, "mangled", cut_text(nm, raw_name(nm, k->name)));
	kpt_json_kv_u64(j, "start_ns", k->start_ns);
	kpt_json_kv_u64(j, "end_ns", k->end_ns);
	kpt_json_kv_u64(j, "device", k->device);
	kpt_json_kv_u64(j, "stream", k->stream);
	kpt_json_kv_u64(j, "process", k->process);
	json_u32x3(j, "grid", k->grid);
	json_u32x3(j, "block", k->block);
	kpt_json_kv_u64(j, "registers", k->registers);
	kpt_json_kv_u64(j, "shared_static", k->shared_static);
	kpt_json_kv_u64(j, "shared_dynamic", k->shared_dynamic);
	kpt_json_kv_u64(j, "correlation", k->correlation);
	if (k->range != KPT_NONE) {
		kpt_json_kv_u64(j, "range", k->range);
		kpt_json_kv_str(j, "range_path", cut_text(nm, range_path(nm, k->range)));
	}
	if (k->graph != KPT_NONE) {
		kpt_json_kv_u64(j, "graph", k->graph);
		kpt_json_kv_u64(j, "graph_node", k->graph_node);
	}
	kpt_json_end_object(j);
}

static void json_memop(struct kpt_json *j, const struct kpt_memop *m)
{
	kpt_json_begin_object(j);
	kpt_json_kv_str(j, "kind", memop_name(m->kind));
	kpt_json_kv_u64(j, "start_ns", m->start_ns);
	kpt_json_kv_u64(j, "end_ns", m->end_ns);
	kpt_json_kv_u64(j, "bytes", m->bytes);
	kpt_json_kv_str(j, "src", mem_kind_name(m->src_mem));
	kpt_json_kv_str(j, "dst", mem_kind_name(m->dst_mem));
	kpt_json_kv_u64(j, "device", m->device);
	kpt_json_kv_u64(j, "stream", m->stream);
	kpt_json_kv_u64(j, "process", m->process);
	kpt_json_kv_u64(j, "correlation", m->correlation);
	if (m->range != KPT_NONE)
		kpt_json_kv_u64(j, "range", m->range);
	kpt_json_end_object(j);
}

static void json_range(struct kpt_json *j, struct names *nm, const struct kpt_range *r)
{
	kpt_json_begin_object(j);
	kpt_json_kv_u64(j, "id", r->id);
	if (r->parent != KPT_NONE)
		kpt_json_kv_u64(j, "parent", r->parent);
	kpt_json_kv_str(j, "name", cut_text(nm, raw_name(nm, r->name)));
	if (r->domain != KPT_NONE)
		kpt_json_kv_str(j, "domain", raw_name(nm, r->domain));
	kpt_json_kv_u64(j, "kind", r->kind);
	kpt_json_kv_u64(j, "process", r->process);
	kpt_json_kv_u64(j, "thread", r->thread);
	kpt_json_kv_u64(j, "start_ns", r->start_ns);
	kpt_json_kv_u64(j, "end_ns", r->end_ns);
	kpt_json_end_object(j);
}

static void json_event(struct kpt_json *j, struct names *nm, const struct kpt_event *e)
{
	kpt_json_begin_object(j);
	kpt_json_kv_str(j, "kind", e->kind < sizeof event_cats / sizeof event_cats[0] && event_cats[e->kind]
			? event_cats[e->kind] : "cuda");
	kpt_json_kv_u64(j, "sub", e->sub);
	if (e->name != KPT_NONE)
		kpt_json_kv_str(j, "name", raw_name(nm, e->name));
	kpt_json_kv_u64(j, "start_ns", e->start_ns);
	kpt_json_kv_u64(j, "end_ns", e->end_ns);
	kpt_json_kv_u64(j, "process", e->process);
	kpt_json_kv_u64(j, "thread", e->thread);
	if (e->device != KPT_NONE)
		kpt_json_kv_u64(j, "device", e->device);
	if (e->stream != KPT_NONE)
		kpt_json_kv_u64(j, "stream", e->stream);
	kpt_json_kv_u64(j, "correlation", e->correlation);
	kpt_json_end_object(j);
}

static void json_env(struct kpt_json *j, const struct kpt_env_sample *s)
{
	kpt_json_begin_object(j);
	kpt_json_kv_u64(j, "t_ns", s->t_ns);
	kpt_json_kv_u64(j, "device", s->device);
	kpt_json_kv_u64(j, "process", s->process);
	kpt_json_kv_u64(j, "sm_mhz", s->sm_mhz);
	kpt_json_kv_u64(j, "mem_mhz", s->mem_mhz);
	kpt_json_kv_u64(j, "temp_c", s->temp_c);
	kpt_json_kv_u64(j, "power_mw", s->power_mw);
	kpt_json_kv_u64(j, "throttle", s->throttle);
	kpt_json_end_object(j);
}

static void json_processes(struct kpt_json *j, struct names *nm, const struct tables *t)
{
	kpt_json_begin_array(j);
	for (size_t i = 0; i < t->nproc; i++) {
		const struct kpt_process *p = &t->proc[i];

		kpt_json_begin_object(j);
		kpt_json_kv_u64(j, "index", p->index);
		kpt_json_kv_u64(j, "run", p->run);
		kpt_json_kv_u64(j, "pid", p->pid);
		kpt_json_kv_u64(j, "ppid", p->ppid);
		if (p->rank != KPT_NONE)
			kpt_json_kv_u64(j, "rank", p->rank);
		if (p->exit_status != INT32_MIN)
			kpt_json_kv_i64(j, "exit_status", p->exit_status);
		kpt_json_kv_u64(j, "start_ns", p->start_ns);
		kpt_json_kv_u64(j, "end_ns", p->end_ns);
		kpt_json_kv_str(j, "command", raw_name(nm, p->command));
		kpt_json_kv_u64(j, "dropped", p->dropped);
		kpt_json_end_object(j);
	}
	kpt_json_end_array(j);
}

static int export_json(struct kpt_file *f, FILE *out, struct kpt_diag *d)
{
	struct kpt_json j;
	struct tables t;
	struct names nm;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *k;
	size_t n;
	uint32_t major, minor;
	char version[32];
	int rc = names_init(&nm, f, d);

	if (rc >= 0)
		rc = tables_load(f, &t, d);
	kpt_file_version(f, &major, &minor);
	snprintf(version, sizeof version, "%u.%u", major, minor);
	kpt_json_init(&j, out, 2);
	kpt_json_begin_object(&j);
	kpt_json_kv_str(&j, "format_version", version);
	kpt_json_key(&j, "meta");
	rc = rc < 0 ? rc : kpt_export_json_meta(&j, f, d);
	kpt_json_key(&j, "devices");
	rc = rc < 0 ? rc : kpt_export_json_devices(&j, f, d);
	kpt_json_key(&j, "counts");
	rc = rc < 0 ? rc : kpt_export_json_counts(&j, f, d);
	if (rc >= 0) {
		kpt_json_key(&j, "processes");
		json_processes(&j, &nm, &t);
		kpt_json_key(&j, "memops");
		kpt_json_begin_array(&j);
		for (size_t i = 0; i < t.nmemops; i++)
			json_memop(&j, &t.memops[i]);
		kpt_json_end_array(&j);
		kpt_json_key(&j, "ranges");
		kpt_json_begin_array(&j);
		for (size_t i = 0; i < t.nranges; i++)
			json_range(&j, &nm, &t.ranges[i]);
		kpt_json_end_array(&j);
		kpt_json_key(&j, "events");
		kpt_json_begin_array(&j);
		for (size_t i = 0; i < t.nevents; i++)
			json_event(&j, &nm, &t.events[i]);
		kpt_json_end_array(&j);
		kpt_json_key(&j, "env");
		kpt_json_begin_array(&j);
		for (size_t i = 0; i < t.nenv; i++)
			json_env(&j, &t.env[i]);
		kpt_json_end_array(&j);
		rc = kpt_kernel_cursor_create(f, &cur, d);
	}
	kpt_json_key(&j, "kernels");
	kpt_json_begin_array(&j);
	while (rc >= 0 && !j.err && (rc = kpt_kernel_cursor_next(cur, &k, &n, d)) > 0)
		for (size_t i = 0; i < n; i++)
			json_kernel(&j, &nm, &k[i]);
	kpt_kernel_cursor_destroy(cur);
	kpt_json_end_array(&j);
	kpt_json_end_object(&j);
	if (rc >= 0 && kpt_json_finish(&j, d) < 0)
		rc = write_failed(d);
	names_release(&nm);
	return rc < 0 ? rc : 0;
}

/* ---- entry points ------------------------------------------------------- */

static int (*const exporters[])(struct kpt_file *, FILE *, struct kpt_diag *) = {
	[KPT_EXPORT_CHROME] = export_chrome,
	[KPT_EXPORT_CSV] = export_csv,
	[KPT_EXPORT_JSON] = export_json,
};

int kpt_export(struct kpt_file *f, enum kpt_export_format fmt, FILE *out, struct kpt_diag *d)
{
	if ((unsigned)fmt >= NFORMATS)
		return kpt_diag_set(d, KPT_E_INVAL, "unknown export format %d", (int)fmt);
	errno = 0;
	return exporters[fmt](f, out, d);
}

int kpt_export_to_path(struct kpt_file *f, enum kpt_export_format fmt, const char *path,
		       struct kpt_diag *d)
{
	FILE *out;
	int rc;

	/* a device or FIFO is written in place, a regular file replaced
	 * whole (kpt_outfile.h) */
	if ((rc = kpt_out_create(path, &out, d)) < 0)
		return rc;
	if ((rc = kpt_export(f, fmt, out, d)) < 0) {
		kpt_out_discard(out, path);
		return rc;
	}
	return kpt_out_publish(out, path, 1, d);
}
