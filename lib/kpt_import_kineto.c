/* kpt_import_kineto.c - torch.profiler / Kineto Chrome trace JSON.
 *
 * The layout (Kineto's output_json.cpp): a top-level object with
 * "deviceProperties" (id, name, totalGlobalMem, computeMajor/Minor, numSms),
 * "distributedInfo" (rank), "baseTimeNanoseconds" (what "ts" counts from;
 * absent in older traces, whose ts are absolute) and "traceEvents", complete
 * events ("ph": "X") with "ts" and "dur" in microseconds with three decimals.
 * A bare array of events is read too. docs/import.md lists every field.
 *
 * The events are streamed one at a time (a tree per event, its arena
 * released after), so memory is the kept rows, not the JSON.
 */
#include "kpt_import_int.h"
#include "kpt_json_read.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum ev_kind { EV_OTHER, EV_KERNEL, EV_MEMCPY, EV_MEMSET, EV_CPU_OP, EV_ANNOTATION, EV_RUNTIME };

/* Event categories, compared without case ("Kernel" in older traces). */
static const struct {
	const char *cat;
	enum ev_kind kind;
} cats[] = {
	{ "kernel", EV_KERNEL },
	{ "gpu_memcpy", EV_MEMCPY },
	{ "memcpy", EV_MEMCPY },
	{ "gpu_memset", EV_MEMSET },
	{ "memset", EV_MEMSET },
	{ "cpu_op", EV_CPU_OP },
	{ "operator", EV_CPU_OP },
	{ "user_annotation", EV_ANNOTATION },
	{ "nvtx", EV_ANNOTATION },              /* kptprof export --format chrome */
	{ "cuda_runtime", EV_RUNTIME },
	{ "cuda_driver", EV_RUNTIME },
	{ "runtime", EV_RUNTIME },
};

/* Words of memcpy/memset names: "Memcpy HtoD (Pageable -> Device)". */
static const struct {
	const char *word;
	uint32_t kind;
} copy_words[] = {
	{ "HtoD", KPT_MEMCPY_HTOD }, { "DtoH", KPT_MEMCPY_DTOH }, { "DtoD", KPT_MEMCPY_DTOD },
	{ "HtoH", KPT_MEMCPY_HTOH }, { "PtoP", KPT_MEMCPY_PTOP },
};

static const struct {
	const char *word;
	uint32_t kind;
} mem_words[] = {
	{ "Pageable", KPT_MEM_PAGEABLE }, { "Pinned", KPT_MEM_PINNED }, { "Device", KPT_MEM_DEVICE },
	{ "Array", KPT_MEM_ARRAY }, { "Managed", KPT_MEM_MANAGED },
};

struct kin {
	struct kpt_import_ctx *c;
	uint64_t nevent;            /* events seen, for messages */
	struct kpt_import_rows rows; /* device: CUDA ordinal until resolved; times relative */
	struct kpt_device *props;   /* deviceProperties; name, uuid owned here */
	char **pci;                 /* [nprops] PCI bus id of each, NULL unknown; owned */
	size_t nprops, capprops, cappci;
	char *host;                 /* top-level "hostname", owned; NULL none */
	uint32_t versions[3];       /* cuda_driver_version, cuda_runtime_version, cupti_version */
	int64_t base;               /* baseTimeNanoseconds, 0 absent */
	uint32_t rank;
	int64_t pid;                /* host pid from the CPU events, -1 none */
	uint32_t process;           /* this file's process index */
};

static enum ev_kind cat_kind(const char *cat)
{
	for (size_t i = 0; cat && i < sizeof cats / sizeof cats[0]; i++)
		if (strcasecmp(cat, cats[i].cat) == 0)
			return cats[i].kind;
	return EV_OTHER;
}

static int oom(struct kin *k, struct kpt_diag *d)
{
	return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", k->c->path);
}

static int bad_event(struct kin *k, const char *cat, const char *what, struct kpt_diag *d)
{
	return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': trace event %llu (%s): %s", k->c->path,
			    (unsigned long long)k->nevent, cat, what);
}

static uint32_t word_kind(const char *s, size_t n, int mem)
{
	size_t cnt = mem ? sizeof mem_words / sizeof mem_words[0] : sizeof copy_words / sizeof copy_words[0];

	for (size_t i = 0; i < cnt; i++) {
		const char *w = mem ? mem_words[i].word : copy_words[i].word;

		if (strlen(w) == n && strncmp(s, w, n) == 0)
			return mem ? mem_words[i].kind : copy_words[i].kind;
	}
	return mem ? KPT_MEM_UNKNOWN : KPT_MEMCPY_OTHER;
}

/* Kind and memory kinds from the name of a copy or set. */
static void memop_kinds(const char *name, int is_set, struct kpt_memop *m)
{
	const char *p = name ? strchr(name, ' ') : NULL, *open, *arrow, *close;

	m->kind = is_set ? KPT_MEMSET : KPT_MEMCPY_OTHER;
	if (!p)
		return;
	p++;
	if (!is_set)
		m->kind = word_kind(p, strcspn(p, " "), 0);
	if (!(open = strchr(p, '(')) || !(close = strchr(open, ')')))
		return;
	open++;
	arrow = strstr(open, " -> ");
	if (arrow && arrow < close) {
		m->src_mem = word_kind(open, (size_t)(arrow - open), 1);
		m->dst_mem = word_kind(arrow + 4, (size_t)(close - arrow - 4), 1);
	} else {
		m->dst_mem = word_kind(open, (size_t)(close - open), 1);
	}
}

static int gpu_event(struct kin *k, enum ev_kind kind, const char *cat, const char *name, int64_t ts,
		     int64_t dur, const struct kpt_jv *ev, struct kpt_diag *d)
{
	const struct kpt_jv *args = kpt_jv_get(ev, "args");
	uint32_t dev = kpt_jv_u32_or(kpt_jv_get(args, "device"), kpt_jv_u32_or(kpt_jv_get(ev, "pid"), 0));
	uint32_t stream = kpt_jv_u32_or(kpt_jv_get(args, "stream"), 0);
	uint32_t corr = kpt_jv_u32_or(kpt_jv_get(args, "correlation"), 0);
	uint64_t gid;
	int rc;

	if (kind == EV_KERNEL) {
		struct kpt_kernel *r;
		const struct kpt_jv *g = kpt_jv_get(args, "grid"), *b = kpt_jv_get(args, "block"), *e;
		int i;

		if (!(r = kpt_import_add_kernel(k->c, &k->rows, d)))
			return KPT_E_NOMEM;
		r->start_ns = (uint64_t)ts;
		r->end_ns = (uint64_t)(ts + dur);
		r->device = dev;
		r->stream = stream;
		r->correlation = corr;
		for (i = 0, e = g && g->type == KPT_JV_ARRAY ? g->child : NULL; i < 3; i++, e = e ? e->next : NULL)
			r->grid[i] = kpt_jv_u32_or(e, 0);
		for (i = 0, e = b && b->type == KPT_JV_ARRAY ? b->child : NULL; i < 3; i++, e = e ? e->next : NULL)
			r->block[i] = kpt_jv_u32_or(e, 0);
		if (!r->grid[0] || !r->block[0])
			return bad_event(k, cat, "no 'grid' and 'block' of three integers in its args", d);
		r->registers = kpt_jv_u32_or(kpt_jv_get(args, "registers per thread"), 0);
		if (!kpt_jv_get(args, "registers per thread"))
			k->c->lacks |= KPT_LACK_REGISTERS;
		r->shared_static = kpt_jv_u32_or(kpt_jv_get(args, "shared memory"), 0);
		if (kpt_jv_u64(kpt_jv_get(args, "graph id"), &gid) == 0 && gid && gid < KPT_NONE) {
			r->graph = (uint32_t)gid;
			kpt_jv_u64(kpt_jv_get(args, "graph node id"), &r->graph_node);
		}
		if ((rc = kpt_writer_intern_cstr(k->c->w, name, &r->name, d)) < 0)
			return rc;
	} else {
		struct kpt_memop *r;

		if (!(r = kpt_import_add_memop(k->c, &k->rows, d)))
			return KPT_E_NOMEM;
		r->start_ns = (uint64_t)ts;
		r->end_ns = (uint64_t)(ts + dur);
		if (kpt_jv_u64(kpt_jv_get(args, "bytes"), &r->bytes) < 0)
			return bad_event(k, cat, "no integer 'bytes' in its args", d);
		memop_kinds(name, kind == EV_MEMSET, r);
		r->device = dev;
		r->stream = stream;
		r->correlation = corr;
	}
	return 0;
}

static int host_event(struct kin *k, enum ev_kind kind, const char *name, int64_t ts, int64_t dur,
		      const struct kpt_jv *ev, struct kpt_diag *d)
{
	const struct kpt_jv *args = kpt_jv_get(ev, "args");
	int64_t pid;
	uint64_t tid;
	int rc;

	/* host events carry numbers; the strings ("Spans", "stream 7") are
	 * rows of the viewer, not threads */
	if (kpt_jv_i64(kpt_jv_get(ev, "pid"), &pid) < 0 || kpt_jv_u64(kpt_jv_get(ev, "tid"), &tid) < 0)
		return 0;
	if (k->pid < 0 && pid >= 0)
		k->pid = pid;
	if (kind == EV_RUNTIME) {
		uint64_t corr;

		if (kpt_jv_u64(kpt_jv_get(args, "correlation"), &corr) < 0 || corr == 0 || corr > UINT32_MAX)
			return 0;
		return kpt_import_add_launch(k->c, &k->rows, &(struct kpt_import_launch){
			.process = k->process, .correlation = (uint32_t)corr, .thread = tid, .ts = ts,
		}, d);
	}
	{
		struct kpt_import_span *s;
		int is_step;
		const char *rname = kpt_import_range_name(name, &is_step);

		/* ranges: record_function / user annotations, and the step
		 * ProfilerStep#N (an annotation, a cpu_op in older traces) */
		if (kind == EV_CPU_OP && !is_step)
			return 0;
		if (!(s = kpt_import_add_span(k->c, &k->rows, d)))
			return KPT_E_NOMEM;
		s->thread = tid;
		s->start = ts;
		s->end = ts + dur;
		s->process = k->process;
		s->kind = KPT_RANGE_PUSHPOP;
		s->is_step = is_step;
		if ((rc = kpt_writer_intern_cstr(k->c->w, rname, &s->name, d)) < 0)
			return rc;
	}
	return 0;
}

/* A GPU or host activity longer than a day is no real record. */
#define KIN_MAX_DURATION_NS (INT64_C(86400) * 1000000000)

static int event(struct kin *k, const struct kpt_jv *ev, struct kpt_diag *d)
{
	const char *ph = kpt_jv_str(kpt_jv_get(ev, "ph"));
	const char *cat = kpt_jv_str(kpt_jv_get(ev, "cat"));
	const char *name = kpt_jv_str(kpt_jv_get(ev, "name"));
	enum ev_kind kind = cat_kind(cat);
	int64_t ts, dur;

	k->nevent++;
	if (ev->type != KPT_JV_OBJECT)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': trace event %llu is not an object",
				    k->c->path, (unsigned long long)k->nevent);
	if (!ph || strcmp(ph, "X") != 0 || kind == EV_OTHER)
		return 0;
	if (!name)
		return bad_event(k, cat, "no string 'name'", d);
	if (kpt_jv_milli(kpt_jv_get(ev, "ts"), &ts) < 0)
		return bad_event(k, cat, "no number 'ts' (microseconds)", d);
	if (kpt_jv_milli(kpt_jv_get(ev, "dur"), &dur) < 0 || dur < 0)
		return bad_event(k, cat, "no number 'dur' of 0 or more (microseconds)", d);
	/* |ts| <= 2^61 ns (73 years), dur <= a day and baseTimeNanoseconds
	 * <= 2^62: ts + dur + base cannot overflow */
	if (ts < -(INT64_C(1) << 61) || ts > (INT64_C(1) << 61))
		return bad_event(k, cat, "'ts' out of range", d);
	if (dur > KIN_MAX_DURATION_NS)
		return bad_event(k, cat, "'dur' longer than a day", d);
	if (kind == EV_KERNEL || kind == EV_MEMCPY || kind == EV_MEMSET)
		return gpu_event(k, kind, cat, name, ts, dur, ev, d);
	return host_event(k, kind, name, ts, dur, ev, d);
}

/* What identifies one GPU, when the trace holds it (Kineto's own
 * deviceProperties do not; cudaDeviceProp's names are used): "uuid" and
 * pciDomainID/pciBusID/pciDeviceID as "0000:18:00.0". */
static int device_ids(struct kin *k, const struct kpt_jv *e, struct kpt_device *p, char **pci, struct kpt_diag *d)
{
	const char *uuid = kpt_jv_str(kpt_jv_get(e, "uuid"));
	uint64_t dom = 0, bus, dev = 0;

	if (uuid && uuid[0] && strlen(uuid) < 128 && !(p->uuid = strdup(uuid)))
		return oom(k, d);
	if (kpt_jv_u64(kpt_jv_get(e, "pciBusID"), &bus) == 0 && bus <= 0xff) {
		char buf[32];

		kpt_jv_u64(kpt_jv_get(e, "pciDomainID"), &dom);
		kpt_jv_u64(kpt_jv_get(e, "pciDeviceID"), &dev);
		snprintf(buf, sizeof buf, "%04x:%02x:%02x.0", (unsigned)(dom & 0xffff), (unsigned)bus,
			 (unsigned)(dev & 0x1f));
		if (!(*pci = strdup(buf)))
			return oom(k, d);
	}
	return 0;
}

/* Top-level members that say which machine made the trace (Kineto's
 * version logger writes the three versions; "hostname" only a wrapper). */
static const char *const version_keys[] = { "cuda_driver_version", "cuda_runtime_version", "cupti_version" };

static int machine_member(struct kin *k, const char *key, const struct kpt_jv *v, struct kpt_diag *d)
{
	const char *s = kpt_jv_str(v);

	if (strcmp(key, "hostname") == 0) {
		if (s && s[0] && strlen(s) < 256 && !k->host && !(k->host = strdup(s)))
			return oom(k, d);
		return 0;
	}
	for (size_t i = 0; i < sizeof version_keys / sizeof version_keys[0]; i++)
		if (strcmp(key, version_keys[i]) == 0)
			k->versions[i] = kpt_jv_u32_or(v, s ? (uint32_t)strtoul(s, NULL, 10) : 0);
	return 0;
}

static int is_machine_member(const char *key)
{
	for (size_t i = 0; i < sizeof version_keys / sizeof version_keys[0]; i++)
		if (strcmp(key, version_keys[i]) == 0)
			return 1;
	return strcmp(key, "hostname") == 0;
}

/* The facts of the GPU the first kernel ran on (else the first listed). */
static int note_facts(struct kin *k, struct kpt_diag *d)
{
	struct kpt_import_facts f = { .host = k->host, .driver_version = k->versions[0],
				      .runtime_version = k->versions[1], .cupti_version = k->versions[2] };
	size_t p = 0;

	if (k->rows.nk)
		for (p = 0; p < k->nprops && k->props[p].cuda_ordinal != k->rows.k[0].device; p++)
			;
	if (p < k->nprops) {
		f.gpu_name = k->props[p].name;
		f.gpu_uuid = k->props[p].uuid;
		f.pci_bus_id = k->pci[p];
		k->props[p].driver_version = k->versions[0];
		k->props[p].runtime_version = k->versions[1];
	}
	for (size_t i = 0; i < k->nprops; i++) { /* every GPU of the trace: one driver */
		k->props[i].driver_version = k->versions[0];
		k->props[i].runtime_version = k->versions[1];
	}
	return kpt_import_note_facts(k->c, &f, d);
}

static int device_props(struct kin *k, const struct kpt_jv *arr, struct kpt_diag *d)
{
	if (arr->type != KPT_JV_ARRAY)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': 'deviceProperties' is not an array",
				    k->c->path);
	for (const struct kpt_jv *e = arr->child; e; e = e->next) {
		struct kpt_device *p;
		const char *name = kpt_jv_str(kpt_jv_get(e, "name"));
		uint64_t id;
		int rc;

		if (kpt_jv_u64(kpt_jv_get(e, "id"), &id) < 0 || id >= KPT_NONE || !name)
			return kpt_diag_set(d, KPT_E_FORMAT,
					    "cannot import '%s': a 'deviceProperties' entry without integer 'id' and string 'name'",
					    k->c->path);
		if (kpt_grow(&k->props, &k->capprops, k->nprops + 1, sizeof *k->props) < 0)
			return oom(k, d);
		p = &k->props[k->nprops];
		memset(p, 0, sizeof *p);
		if (!(p->name = strdup(name)))
			return oom(k, d);
		k->nprops++;
		p->cuda_ordinal = (uint32_t)id;
		if (kpt_grow(&k->pci, &k->cappci, k->nprops, sizeof *k->pci) < 0)
			return oom(k, d);
		k->pci[k->nprops - 1] = NULL;
		if ((rc = device_ids(k, e, p, &k->pci[k->nprops - 1], d)) < 0)
			return rc;
		p->sm_count = kpt_jv_u32_or(kpt_jv_get(e, "numSms"), 0);
		p->cc_major = kpt_jv_u32_or(kpt_jv_get(e, "computeMajor"), 0);
		p->cc_minor = kpt_jv_u32_or(kpt_jv_get(e, "computeMinor"), 0);
		kpt_jv_u64(kpt_jv_get(e, "totalGlobalMem"), &p->mem_bytes);
	}
	return 0;
}

/* The top-level members; traceEvents streamed. */
static int read_trace(struct kin *k, struct kpt_jr *r, struct kpt_diag *d)
{
	struct kpt_arena a;
	int rc = 0, more;

	kpt_arena_init(&a);
	if (kpt_jr_peek(r) == '[') {        /* a bare array of events */
		if ((rc = kpt_jr_begin_array(r, d)) < 0)
			return rc;
		while ((more = kpt_jr_next_element(r, d)) > 0) {
			struct kpt_jv *ev;

			rc = kpt_jr_parse(r, &a, &ev, d);
			if (rc >= 0)
				rc = event(k, ev, d);
			kpt_arena_release(&a);
			if (rc < 0)
				return rc;
		}
		return more < 0 ? more : kpt_jr_finish(r, d);
	}
	if ((rc = kpt_jr_begin_object(r, d)) < 0)
		return rc;
	for (;;) {
		const char *key;
		struct kpt_jv *v;

		kpt_arena_release(&a);
		if ((more = kpt_jr_next_member(r, &a, &key, d)) <= 0)
			break;
		if (strcmp(key, "traceEvents") == 0) {
			if ((rc = kpt_jr_begin_array(r, d)) < 0)
				break;
			while ((more = kpt_jr_next_element(r, d)) > 0) {
				struct kpt_arena ea;

				kpt_arena_init(&ea);
				rc = kpt_jr_parse(r, &ea, &v, d);
				if (rc >= 0)
					rc = event(k, v, d);
				kpt_arena_release(&ea);
				if (rc < 0)
					break;
			}
			if (more < 0 || rc < 0)
				break;
		} else if (strcmp(key, "deviceProperties") == 0 || strcmp(key, "distributedInfo") == 0 ||
			   strcmp(key, "baseTimeNanoseconds") == 0) {
			if ((rc = kpt_jr_parse(r, &a, &v, d)) < 0)
				break;
			if (key[0] == 'd' && key[1] == 'e')
				rc = device_props(k, v, d);
			else if (key[0] == 'd')
				k->rank = kpt_jv_u32_or(kpt_jv_get(v, "rank"), KPT_NONE);
			else if (kpt_jv_i64(v, &k->base) < 0 || k->base < 0 || k->base > (INT64_C(1) << 62))
				rc = kpt_diag_set(d, KPT_E_FORMAT,
						  "cannot import '%s': 'baseTimeNanoseconds' is not an integer of 0 to 2^62",
						  k->c->path);
			if (rc < 0)
				break;
		} else if (is_machine_member(key)) {
			if ((rc = kpt_jr_parse(r, &a, &v, d)) < 0 || (rc = machine_member(k, key, v, d)) < 0)
				break;
		} else if ((rc = kpt_jr_parse(r, NULL, NULL, d)) < 0) {
			break;
		}
	}
	kpt_arena_release(&a);
	if (rc < 0 || more < 0)
		return rc < 0 ? rc : more;
	return kpt_jr_finish(r, d);
}

/* Device rows for the CUDA ordinals the kernels and memops name. */
static int resolve_devices(struct kin *k, struct kpt_diag *d)
{
	struct { uint32_t ordinal, index; } *map = NULL;
	size_t nmap = 0, cap = 0;
	int rc = 0;

	for (size_t i = 0; i < k->rows.nk + k->rows.nm && rc >= 0; i++) {
		uint32_t *dev = i < k->rows.nk ? &k->rows.k[i].device : &k->rows.m[i - k->rows.nk].device;
		size_t j;

		for (j = 0; j < nmap && map[j].ordinal != *dev; j++)
			;
		if (j == nmap) {
			struct kpt_device dv = { .cuda_ordinal = *dev };
			size_t p;

			for (p = 0; p < k->nprops && k->props[p].cuda_ordinal != *dev; p++)
				;
			if (p < k->nprops)
				dv = k->props[p];
			else
				k->c->lacks |= KPT_LACK_DEVICE_PROPS;
			if (kpt_grow(&map, &cap, nmap + 1, sizeof *map) < 0) {
				rc = oom(k, d);
				break;
			}
			map[nmap].ordinal = *dev;
			if ((rc = kpt_import_device(k->c, &dv, &map[nmap].index, d)) < 0)
				break;
			nmap++;
		}
		*dev = map[j].index;
	}
	free(map);
	return rc;
}

static int write_rows(struct kin *k, struct kpt_diag *d)
{
	struct kpt_import_ctx *c = k->c;
	struct kpt_import_rows *r = &k->rows;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	struct kpt_process p;
	int rc;

	/* absolute ns: base + ts; the process spans what the file holds */
	for (size_t i = 0; i < r->nk; i++) {
		r->k[i].start_ns += (uint64_t)k->base;
		r->k[i].end_ns += (uint64_t)k->base;
		r->k[i].process = k->process;
	}
	for (size_t i = 0; i < r->nm; i++) {
		r->m[i].start_ns += (uint64_t)k->base;
		r->m[i].end_ns += (uint64_t)k->base;
		r->m[i].process = k->process;
	}
	for (size_t i = 0; i < r->ns; i++) {
		r->spans[i].start += k->base;
		r->spans[i].end += k->base;
	}
	for (size_t i = 0; i < r->nl; i++)
		r->launches[i].ts += k->base;
#define SPAN_OF(s, e) do { if ((int64_t)(s) < lo) lo = (int64_t)(s); if ((int64_t)(e) > hi) hi = (int64_t)(e); } while (0)
	for (size_t i = 0; i < r->nk; i++)
		SPAN_OF(r->k[i].start_ns, r->k[i].end_ns);
	for (size_t i = 0; i < r->nm; i++)
		SPAN_OF(r->m[i].start_ns, r->m[i].end_ns);
	for (size_t i = 0; i < r->ns; i++)
		SPAN_OF(r->spans[i].start, r->spans[i].end);
#undef SPAN_OF
	if (lo < 0)
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': a timestamp before 0 (ts + baseTimeNanoseconds)",
				    c->path);
	if (lo != INT64_MAX && (uint64_t)lo < c->first_ns)
		c->first_ns = (uint64_t)lo;
	if ((rc = note_facts(k, d)) < 0 || (rc = resolve_devices(k, d)) < 0)
		return rc;
	if (k->pid < 0)
		c->lacks |= KPT_LACK_HOST_PID;
	if (r->nk && !r->nl)
		c->lacks |= KPT_LACK_LAUNCHES;
	p = (struct kpt_process){
		.index = k->process, .run = c->run, .pid = k->pid >= 0 && k->pid <= UINT32_MAX ? (uint32_t)k->pid : 0,
		.rank = k->rank, .exit_status = INT32_MIN,
		.start_ns = lo == INT64_MAX ? 0 : (uint64_t)lo, .end_ns = lo == INT64_MAX ? 0 : (uint64_t)hi,
		.command = KPT_NONE,
	};
	if ((rc = kpt_import_write_processes(c, r, &p, d)) < 0)
		return rc;
	return kpt_import_rows_write(c, r, d);
}

int kpt_import_kineto(struct kpt_import_ctx *c, struct kpt_diag *d)
{
	struct kin k;
	struct kpt_jr r;
	size_t skip = 0;
	int rc;

	memset(&k, 0, sizeof k);
	k.c = c;
	k.rank = KPT_NONE;
	k.pid = -1;
	k.process = c->next_process++;
	if (c->len >= 3 && c->data[0] == 0xef && c->data[1] == 0xbb && c->data[2] == 0xbf)
		skip = 3;
	kpt_jr_init(&r, c->data + skip, c->len - skip);
	rc = read_trace(&k, &r, d);
	if (rc < 0 && d && d->code == KPT_E_FORMAT && strncmp(d->msg, "bad JSON", 8) == 0) {
		char msg[sizeof d->msg];

		snprintf(msg, sizeof msg, "%s", d->msg);
		kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': %s", c->path, msg);
	}
	if (rc >= 0)
		rc = write_rows(&k, d);
	kpt_import_rows_release(&k.rows);
	for (size_t i = 0; i < k.nprops; i++) {
		free((void *)k.props[i].name);
		free((void *)k.props[i].uuid);
		if (i < k.cappci) /* else growing pci failed at i */
			free(k.pci[i]);
	}
	free(k.props);
	free(k.pci);
	free(k.host);
	return rc;
}
