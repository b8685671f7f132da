/* kpt_import.c - the import driver: finds each file's format, maps it, runs
 * its importer into one writer, links kernels to ranges, writes the meta
 * that says where the data came from and what it lacked. */
#include "kpt_import_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef KPT_HAVE_ZLIB
#include <zlib.h>
#endif

static int sniff_kineto(const unsigned char *h, size_t n)
{
	size_t i = 0;

	if (n >= 3 && h[0] == 0xef && h[1] == 0xbb && h[2] == 0xbf)
		i = 3;              /* a UTF-8 byte order mark */
	while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r'))
		i++;
	return i < n && (h[i] == '{' || h[i] == '[');
}

static int sniff_nsys(const unsigned char *h, size_t n)
{
	return n >= 16 && memcmp(h, "SQLite format 3", 16) == 0;
}

static const struct kpt_importer importers[] = {
	{ .name = "kineto", .what = "torch.profiler/Kineto Chrome trace", .sniff = sniff_kineto,
	  .import = kpt_import_kineto,
	  .lacks = "NVML environment samples; separate processes for runs (a run is one imported file, or one "
		   "step of a single trace); mangled kernel names (demangled names are stored); static and dynamic shared memory "
		   "apart (their sum is stored as static); process start and exit" },
	{ .name = "nsys", .what = "Nsight Systems SQLite export", .sniff = sniff_nsys,
	  .import = kpt_import_nsys,
	  .lacks = "NVML environment samples; separate runs (one run per imported file); "
		   "process exit status" },
};

static const struct {
	unsigned bit;
	const char *text;
} lack_texts[] = {
	{ KPT_LACK_DEVICE_PROPS, "properties of some GPU (name, SMs, memory unknown)" },
	{ KPT_LACK_LAUNCHES, "the launch of some kernels (no range, no step for them)" },
	{ KPT_LACK_SHARED_SPLIT, "static and dynamic shared memory apart" },
	{ KPT_LACK_MANGLED, "mangled kernel names" },
	{ KPT_LACK_REGISTERS, "registers per thread of some kernels" },
	{ KPT_LACK_HOST_PID, "the host process id (pid 0 stored)" },
};

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int kpt_import_note_facts(struct kpt_import_ctx *c, const struct kpt_import_facts *f, struct kpt_diag *d)
{
	struct kpt_import_facts *k = &c->facts;
	const char **dst[] = { &k->host, &k->gpu_name, &k->gpu_uuid, &k->pci_bus_id };
	const char *src[] = { f->host, f->gpu_name, f->gpu_uuid, f->pci_bus_id };

	if (c->facts_seen) {
		for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
			if (!same_str(*dst[i], src[i]))
				c->facts_differ = 1;
		if (k->driver_version != f->driver_version || k->runtime_version != f->runtime_version ||
		    k->cupti_version != f->cupti_version)
			c->facts_differ = 1;
		return 0;
	}
	c->facts_seen = 1;
	k->driver_version = f->driver_version;
	k->runtime_version = f->runtime_version;
	k->cupti_version = f->cupti_version;
	for (size_t i = 0; i < sizeof src / sizeof src[0]; i++)
		if (src[i] && !(*dst[i] = strdup(src[i])))
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", c->path);
	return 0;
}

static void facts_release(struct kpt_import_facts *k)
{
	free((void *)k->host);
	free((void *)k->gpu_name);
	free((void *)k->gpu_uuid);
	free((void *)k->pci_bus_id);
	memset(k, 0, sizeof *k);
}

/* The machine facts as meta; import.machine (what diff compares) only when
 * every file said the same and a host or GPU UUID is among them: a GPU
 * name and driver alone are shared by every machine of a cluster. */
static int write_facts(struct kpt_import_ctx *c, struct kpt_diag *d)
{
	const struct kpt_import_facts *k = &c->facts;
	char num[3][16], *id = NULL;
	size_t il = 0;
	FILE *f;
	int rc = 0;

	if (!c->facts_seen)
		return 0;
	snprintf(num[0], sizeof num[0], "%u", k->driver_version);
	snprintf(num[1], sizeof num[1], "%u", k->runtime_version);
	snprintf(num[2], sizeof num[2], "%u", k->cupti_version);
	if (k->host && rc >= 0)
		rc = kpt_writer_meta(c->w, "host", k->host, d);
	if (k->gpu_uuid && rc >= 0)
		rc = kpt_writer_meta(c->w, "import.gpu_uuid", k->gpu_uuid, d);
	if (k->pci_bus_id && rc >= 0)
		rc = kpt_writer_meta(c->w, "import.pci_bus_id", k->pci_bus_id, d);
	if (k->driver_version && rc >= 0)
		rc = kpt_writer_meta(c->w, "import.cuda_driver_version", num[0], d);
	if (k->runtime_version && rc >= 0)
		rc = kpt_writer_meta(c->w, "import.cuda_runtime_version", num[1], d);
	if (k->cupti_version && rc >= 0)
		rc = kpt_writer_meta(c->w, "import.cupti_version", num[2], d);
	if (rc < 0 || c->facts_differ || (!k->host && !k->gpu_uuid))
		return rc;
	if (!(f = open_memstream(&id, &il)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	fprintf(f, "host=%s gpu=%s uuid=%s pci=%s driver=%u cuda=%u", k->host ? k->host : "",
		k->gpu_name ? k->gpu_name : "", k->gpu_uuid ? k->gpu_uuid : "", k->pci_bus_id ? k->pci_bus_id : "",
		k->driver_version, k->runtime_version);
	if (fclose(f) != 0) {
		free(id);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	rc = kpt_writer_meta(c->w, "import.machine", id, d);
	free(id);
	return rc;
}

const char *kpt_import_range_name(const char *name, int *is_step)
{
	static const char step[] = "ProfilerStep#";
	const char *p;

	*is_step = 0;
	if (!name || strncmp(name, step, sizeof step - 1) != 0)
		return name;
	p = name + sizeof step - 1;
	if (!*p)
		return name;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return name;
	*is_step = 1;
	return "kpt:iter";
}

int kpt_import_device(struct kpt_import_ctx *c, struct kpt_device *dev, uint32_t *index,
		      struct kpt_diag *d)
{
	const char *name = dev->name ? dev->name : "";
	char slug[256];
	struct kpt_import_dev *e;
	int rc;

	for (size_t i = 0; i < c->ndevs; i++) {
		e = &c->devs[i];
		if (strcmp(e->name, name) == 0 && e->ordinal == dev->cuda_ordinal &&
		    e->sm_count == dev->sm_count && e->mem_bytes == dev->mem_bytes) {
			*index = e->index;
			return 0;
		}
	}
	if (kpt_grow(&c->devs, &c->capdevs, c->ndevs + 1, sizeof *c->devs) < 0)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", c->path);
	e = &c->devs[c->ndevs];
	memset(e, 0, sizeof *e);
	if (!(e->name = strdup(name)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", c->path);
	c->ndevs++;
	e->ordinal = dev->cuda_ordinal;
	e->sm_count = dev->sm_count;
	e->mem_bytes = dev->mem_bytes;
	e->index = (uint32_t)(c->ndevs - 1);
	kpt_slug(name, slug, sizeof slug);
	dev->index = e->index;
	dev->name = name;
	dev->slug = slug;
	if (!dev->uuid)
		dev->uuid = "";
	if (!dev->driver_string)
		dev->driver_string = "";
	if ((rc = kpt_writer_device(c->w, dev, d)) < 0)
		return rc;
	c->st.devices++;
	*index = e->index;
	return 0;
}

/* ---- ranges and links ------------------------------------------------- */

struct step {
	uint32_t process, id;
	int64_t start, end;
};

struct kpt_import_links {
	const struct kpt_import_span *spans;  /* sorted by process, thread, start */
	size_t n;
	size_t *parent;                       /* index of the parent span, SIZE_MAX none */
	/* The walk up to the innermost span still open at a launch, in
	 * O(log n) however deep the nesting (first_open): up[i] is the nearest
	 * ancestor ending later than span i (SIZE_MAX none), so ends grow
	 * along up[]; jump[i] a skew-binary jump pointer along up[], depth[i]
	 * the length of i's up[] chain. */
	size_t *up, *jump, *depth;
	struct step *steps;                   /* the step spans, by process, start */
	size_t nsteps;
	const struct kpt_import_launch *launches; /* sorted by process, correlation */
	size_t nl;
};

static int span_cmp(const void *pa, const void *pb)
{
	const struct kpt_import_span *a = pa, *b = pb;

	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	if (a->thread != b->thread)
		return a->thread < b->thread ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;        /* the outer one first */
	return a->is_step > b->is_step ? -1 : a->is_step < b->is_step;
}

static int launch_cmp(const void *pa, const void *pb)
{
	const struct kpt_import_launch *a = pa, *b = pb;

	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	if (a->correlation != b->correlation)
		return a->correlation < b->correlation ? -1 : 1;
	return (a->ts > b->ts) - (a->ts < b->ts);
}

static int step_cmp(const void *pa, const void *pb)
{
	const struct step *a = pa, *b = pb;

	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	return (a->start > b->start) - (a->start < b->start);
}

static void links_destroy(struct kpt_import_links *l)
{
	if (!l)
		return;
	free(l->parent);
	free(l->up);
	free(l->jump);
	free(l->depth);
	free(l->steps);
	free(l);
}

/* The first span on the chain v, up[v], up[up[v]]... whose end is at or
 * after ts; SIZE_MAX when none. Ends grow along the chain, so a jump over
 * spans that end before ts skips only such spans. */
static size_t first_open(const struct kpt_import_links *l, size_t v, int64_t ts)
{
	while (v != SIZE_MAX && l->spans[v].end < ts) {
		size_t j = l->jump[v];

		v = j != v && l->spans[j].end < ts ? j : l->up[v];
	}
	return v;
}

/* up[], jump[] and depth[] of span i, its parent's being set. */
static void set_up(struct kpt_import_links *l, size_t i)
{
	int64_t end = l->spans[i].end;
	size_t u = end == INT64_MAX ? SIZE_MAX : first_open(l, l->parent[i], end + 1);

	l->up[i] = u;
	if (u == SIZE_MAX) {
		l->jump[i] = i;
		l->depth[i] = 0;
		return;
	}
	l->depth[i] = l->depth[u] + 1;
	l->jump[i] = l->depth[u] - l->depth[l->jump[u]] == l->depth[l->jump[u]] - l->depth[l->jump[l->jump[u]]]
			     ? l->jump[l->jump[u]] : u;
}

static int spans_write(struct kpt_import_ctx *c, struct kpt_import_span *spans, size_t n,
		       struct kpt_import_launch *launches, size_t nl,
		       struct kpt_import_links **out, struct kpt_diag *d)
{
	struct kpt_import_links *l = calloc(1, sizeof *l);
	size_t *stack = NULL, depth = 0;
	int rc = 0;

	*out = NULL;
	if (!l || (n && (!(l->parent = malloc(n * sizeof *l->parent)) || !(l->up = malloc(n * sizeof *l->up)) ||
			 !(l->jump = malloc(n * sizeof *l->jump)) || !(l->depth = malloc(n * sizeof *l->depth)) ||
			 !(l->steps = malloc(n * sizeof *l->steps)) || !(stack = malloc(n * sizeof *stack))))) {
		links_destroy(l);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", c->path);
	}
	if (n)
		qsort(spans, n, sizeof *spans, span_cmp);
	if (nl)
		qsort(launches, nl, sizeof *launches, launch_cmp);
	for (size_t i = 0; i < n; i++) {
		struct kpt_import_span *s = &spans[i];
		struct kpt_range r;

		if (i && (spans[i - 1].process != s->process || spans[i - 1].thread != s->thread))
			depth = 0;
		/* push/pop ranges nest; a span that ends after its enclosing one
		 * (start/end ranges may) still takes it as parent */
		while (depth && spans[stack[depth - 1]].end <= s->start)
			depth--;
		/* parent[] is for the walk up in kpt_import_link; a start/end
		 * range has no parent in the file (it is not a thread's) */
		l->parent[i] = depth ? stack[depth - 1] : SIZE_MAX;
		l->spans = spans;
		set_up(l, i);
		s->id = c->next_range++;
		s->parent = l->parent[i] != SIZE_MAX && s->kind != KPT_RANGE_STARTEND ? spans[l->parent[i]].id : KPT_NONE;
		if (s->kind != KPT_RANGE_STARTEND && s->kind != KPT_RANGE_MARK)
			stack[depth++] = i;
		if (s->is_step) {
			l->steps[l->nsteps++] = (struct step){ s->process, s->id, s->start, s->end };
			c->st.iterations++;
		}
		r = (struct kpt_range){
			.id = s->id, .parent = s->parent, .name = s->name, .domain = s->domain,
			.kind = s->kind, .process = s->process, .thread = s->thread,
			.start_ns = (uint64_t)s->start, .end_ns = s->end == INT64_MAX ? 0 : (uint64_t)s->end,
		};
		if ((rc = kpt_writer_ranges(c->w, &r, 1, d)) < 0)
			break;
		c->st.ranges++;
	}
	free(stack);
	if (rc < 0) {
		links_destroy(l);
		return rc;
	}
	if (l->nsteps)
		qsort(l->steps, l->nsteps, sizeof *l->steps, step_cmp);
	l->spans = spans;
	l->n = n;
	l->launches = launches;
	l->nl = nl;
	*out = l;
	return 0;
}

/* Index of the last span of (process, thread) that starts at or before ts,
 * SIZE_MAX when none. Binary search. */
static size_t last_started(const struct kpt_import_links *l, uint32_t process, uint64_t thread, int64_t ts)
{
	size_t lo = 0, hi = l->n;    /* first index whose key is greater */

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct kpt_import_span *s = &l->spans[mid];
		int le = s->process < process ||
			 (s->process == process && (s->thread < thread || (s->thread == thread && s->start <= ts)));

		if (le)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || l->spans[lo - 1].process != process || l->spans[lo - 1].thread != thread)
		return SIZE_MAX;
	return lo - 1;
}

/* The range id of the work with this correlation on process (KPT_NONE
 * when none), counted in c->st for kernels. */
static uint32_t link_one(struct kpt_import_ctx *c, const struct kpt_import_links *l, uint32_t process,
		     uint32_t correlation, int is_kernel)
{
	const struct kpt_import_launch *la = NULL;
	size_t lo = 0, hi = l->nl, i;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct kpt_import_launch *m = &l->launches[mid];

		if (m->process < process || (m->process == process && m->correlation < correlation))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < l->nl && l->launches[lo].process == process && l->launches[lo].correlation == correlation)
		la = &l->launches[lo];
	if (!la) {
		if (is_kernel)
			c->st.no_launch++;
		return KPT_NONE;
	}
	/* innermost open span on the launching thread: the last started one,
	 * or its nearest ancestor still open at the launch (every parent is a
	 * push/pop range: only those nest) */
	if ((i = last_started(l, process, la->thread, la->ts)) != SIZE_MAX &&
	    (i = first_open(l, l->spans[i].kind == KPT_RANGE_PUSHPOP ? i : l->parent[i], la->ts)) != SIZE_MAX) {
		if (is_kernel)
			c->st.linked++;
		return l->spans[i].id;
	}
	/* else the step of the process open at the launch (torch runs backward
	 * on autograd's own thread, outside the step's range) */
	lo = 0;
	hi = l->nsteps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct step *s = &l->steps[mid];

		if (s->process < process || (s->process == process && s->start <= la->ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo) {
		const struct step *s = &l->steps[lo - 1];

		if (s->process == process && s->end >= la->ts) {
			if (is_kernel)
				c->st.by_step++;
			return s->id;
		}
	}
	return KPT_NONE;
}

/* ---- steps as runs ------------------------------------------------------ */

struct step_cut {
	int64_t start, end;
	uint32_t process;
};

static int cut_cmp(const void *pa, const void *pb)
{
	const struct step_cut *a = pa, *b = pb;

	return (a->start > b->start) - (a->start < b->start);
}

/* The process of the step open at ts: the last step started at or before
 * it, else the first. */
static uint32_t step_process(const struct step_cut *s, size_t n, int64_t ts)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].start <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return s[lo ? lo - 1 : 0].process;
}

int kpt_import_write_processes(struct kpt_import_ctx *c, struct kpt_import_rows *r,
			       const struct kpt_process *proto, struct kpt_diag *d)
{
	struct step_cut *s = NULL;
	size_t n = 0;
	struct kpt_process p = *proto;
	int rc = 0;

	for (size_t i = 0; c->steps_as_runs && i < r->ns; i++)
		n += r->spans[i].is_step && r->spans[i].process == proto->index;
	p.run = c->run;
	c->next_run = c->run + 1;
	if (n < 2 || (uint64_t)c->run + n > UINT32_MAX - 1)
		return kpt_writer_process(c->w, &p, d);
	if (!(s = malloc(n * sizeof *s)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", c->path);
	n = 0;
	for (size_t i = 0; i < r->ns; i++)
		if (r->spans[i].is_step && r->spans[i].process == proto->index)
			s[n++] = (struct step_cut){ r->spans[i].start, r->spans[i].end, 0 };
	qsort(s, n, sizeof *s, cut_cmp);
	for (size_t i = 0; i < n; i++)
		s[i].process = i ? c->next_process++ : proto->index;
	/* kernels by their launch: the launches sorted by correlation first */
	if (r->nl > 1)
		qsort(r->launches, r->nl, sizeof *r->launches, launch_cmp);
	for (size_t i = 0; i < r->nk + r->nm; i++) {
		uint32_t *proc = i < r->nk ? &r->k[i].process : &r->m[i - r->nk].process;
		uint32_t corr = i < r->nk ? r->k[i].correlation : r->m[i - r->nk].correlation;
		int64_t ts = (int64_t)(i < r->nk ? r->k[i].start_ns : r->m[i - r->nk].start_ns);
		size_t lo = 0, hi = r->nl;

		if (*proc != proto->index)
			continue;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const struct kpt_import_launch *m = &r->launches[mid];

			if (m->process < proto->index || (m->process == proto->index && m->correlation < corr))
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < r->nl && r->launches[lo].process == proto->index && r->launches[lo].correlation == corr)
			ts = r->launches[lo].ts;
		*proc = step_process(s, n, ts);
	}
	for (size_t i = 0; i < r->nl; i++)
		if (r->launches[i].process == proto->index)
			r->launches[i].process = step_process(s, n, r->launches[i].ts);
	for (size_t i = 0; i < r->ns; i++)
		if (r->spans[i].process == proto->index)
			r->spans[i].process = step_process(s, n, r->spans[i].start);
	for (size_t i = 0; i < n && rc >= 0; i++) {
		p.index = s[i].process;
		p.run = c->run + (uint32_t)i;
		p.start_ns = i ? (uint64_t)s[i].start : proto->start_ns;
		p.end_ns = i + 1 < n ? (uint64_t)s[i + 1].start : proto->end_ns;
		rc = kpt_writer_process(c->w, &p, d);
	}
	c->next_run = c->run + (uint32_t)n;
	free(s);
	return rc;
}

static void *add_row(struct kpt_import_ctx *c, void *arr, size_t *n, size_t *cap, size_t size,
		     struct kpt_diag *d)
{
	char *row;

	if (kpt_grow(arr, cap, *n + 1, size) < 0) {
		kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", c->path);
		return NULL;
	}
	row = *(char **)arr + (*n)++ * size;
	memset(row, 0, size);
	return row;
}

struct kpt_kernel *kpt_import_add_kernel(struct kpt_import_ctx *c, struct kpt_import_rows *r,
					 struct kpt_diag *d)
{
	struct kpt_kernel *k = add_row(c, &r->k, &r->nk, &r->capk, sizeof *r->k, d);

	if (k)
		k->range = k->graph = KPT_NONE;
	return k;
}

struct kpt_memop *kpt_import_add_memop(struct kpt_import_ctx *c, struct kpt_import_rows *r,
				       struct kpt_diag *d)
{
	struct kpt_memop *m = add_row(c, &r->m, &r->nm, &r->capm, sizeof *r->m, d);

	if (m)
		m->range = m->graph = KPT_NONE;
	return m;
}

struct kpt_import_span *kpt_import_add_span(struct kpt_import_ctx *c, struct kpt_import_rows *r,
					    struct kpt_diag *d)
{
	struct kpt_import_span *s = add_row(c, &r->spans, &r->ns, &r->caps, sizeof *r->spans, d);

	if (s)
		s->domain = KPT_NONE;
	return s;
}

int kpt_import_add_launch(struct kpt_import_ctx *c, struct kpt_import_rows *r,
			  const struct kpt_import_launch *l, struct kpt_diag *d)
{
	struct kpt_import_launch *p = add_row(c, &r->launches, &r->nl, &r->capl, sizeof *r->launches, d);

	if (!p)
		return KPT_E_NOMEM;
	*p = *l;
	return 0;
}

int kpt_import_rows_write(struct kpt_import_ctx *c, struct kpt_import_rows *r, struct kpt_diag *d)
{
	struct kpt_import_links *links = NULL;
	int rc;

	if ((rc = spans_write(c, r->spans, r->ns, r->launches, r->nl, &links, d)) < 0)
		return rc;
	for (size_t i = 0; i < r->nk; i++)
		r->k[i].range = link_one(c, links, r->k[i].process, r->k[i].correlation, 1);
	for (size_t i = 0; i < r->nm; i++)
		r->m[i].range = link_one(c, links, r->m[i].process, r->m[i].correlation, 0);
	links_destroy(links);
	if (c->st.no_launch)
		c->lacks |= KPT_LACK_LAUNCHES;
	if (r->nk && (rc = kpt_writer_kernels(c->w, r->k, r->nk, d)) < 0)
		return rc;
	if (r->nm && (rc = kpt_writer_memops(c->w, r->m, r->nm, d)) < 0)
		return rc;
	c->st.kernels += r->nk;
	c->st.memops += r->nm;
	return 0;
}

void kpt_import_rows_release(struct kpt_import_rows *r)
{
	free(r->k);
	free(r->m);
	free(r->spans);
	free(r->launches);
	memset(r, 0, sizeof *r);
}

/* ---- driver -------------------------------------------------------------- */

static int map_file(const char *path, const unsigned char **data, size_t *len, struct kpt_diag *d)
{
	struct stat sb;
	void *p;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);  /* a FIFO must not block */

	if (fd < 0)
		return kpt_diag_set(d, errno == ENOENT ? KPT_E_NOTFOUND : KPT_E_IO, "cannot import '%s': %s", path,
				    strerror(errno));
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		return kpt_diag_set(d, KPT_E_IO, "cannot import '%s': not a regular file", path);
	}
	if (sb.st_size == 0) {
		close(fd);
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': the file is empty", path);
	}
	if ((uint64_t)sb.st_size > KPT_IMPORT_MAX_BYTES) {
		close(fd);
		return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': larger than 16 GiB", path);
	}
	p = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return kpt_diag_set(d, KPT_E_IO, "cannot import '%s': cannot map it: %s", path, strerror(errno));
	*data = p;
	*len = (size_t)sb.st_size;
	return 0;
}

static int is_gzip(const unsigned char *h, size_t n)
{
	return n >= 2 && h[0] == 0x1f && h[1] == 0x8b;
}

#ifdef KPT_HAVE_ZLIB
int kpt_import_gunzip(const char *path, const unsigned char *gz, size_t gzlen, uint64_t max,
		      const unsigned char **data, size_t *len, struct kpt_diag *d)
{
	const char *dir = getenv("TMPDIR");
	char tmpl[4096];
	unsigned char *buf = NULL;
	const size_t chunk = (size_t)1 << 20;
	uint64_t total = 0;
	z_stream z;
	int fd, zrc = Z_OK, rc = 0;
	void *p;

	if (!dir || !*dir)
		dir = "/tmp";
	if ((size_t)snprintf(tmpl, sizeof tmpl, "%s/kptprof-gunzip.XXXXXX", dir) >= sizeof tmpl)
		return kpt_diag_set(d, KPT_E_IO, "cannot import '%s': TMPDIR is too long", path);
	if ((fd = mkstemp(tmpl)) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot import '%s': cannot make a temporary file in '%s': %s", path, dir,
				    strerror(errno));
	unlink(tmpl);
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	memset(&z, 0, sizeof z);
	if (!(buf = malloc(chunk)) || inflateInit2(&z, 15 + 16) != Z_OK) {
		free(buf);
		close(fd);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", path);
	}
	while (rc == 0) {
		if (!z.avail_in && gzlen) {
			size_t take = gzlen < (size_t)UINT32_MAX ? gzlen : (size_t)UINT32_MAX;

			z.next_in = (unsigned char *)gz;
			z.avail_in = (uInt)take;
			gz += take;
			gzlen -= take;
		}
		z.next_out = buf;
		z.avail_out = (uInt)chunk;
		zrc = inflate(&z, Z_NO_FLUSH);
		if (zrc != Z_OK && zrc != Z_STREAM_END && !(zrc == Z_BUF_ERROR && z.avail_in)) {
			rc = kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': bad gzip data after %llu bytes of output%s%s",
					  path, (unsigned long long)total, z.msg ? ": " : "", z.msg ? z.msg : "");
			break;
		}
		if (chunk - z.avail_out) {
			size_t n = chunk - z.avail_out, off = 0;

			if (total + n > max) {
				rc = kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': more than %llu MiB once decompressed",
						  path, (unsigned long long)(max >> 20));
				break;
			}
			while (off < n) {
				ssize_t w = write(fd, buf + off, n - off);

				if (w < 0 && errno == EINTR)
					continue;
				if (w <= 0) {
					rc = kpt_diag_set(d, KPT_E_IO, "cannot import '%s': cannot write its decompressed copy in '%s': %s",
							  path, dir, w < 0 ? strerror(errno) : "short write");
					break;
				}
				off += (size_t)w;
			}
			total += n;
		}
		if (zrc == Z_STREAM_END) {
			if (!z.avail_in && !gzlen)
				break;
			/* another member, or trailing zeros (some writers pad) */
			if (!is_gzip(z.next_in, z.avail_in))
				break;
			if (inflateReset(&z) != Z_OK)
				rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory importing '%s'", path);
		} else if (!z.avail_in && !gzlen && z.avail_out) {
			rc = kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': the gzip data is truncated", path);
		}
	}
	inflateEnd(&z);
	free(buf);
	if (rc == 0 && total == 0)
		rc = kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': the file is empty once decompressed", path);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	p = mmap(NULL, (size_t)total, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return kpt_diag_set(d, KPT_E_IO, "cannot import '%s': cannot map its decompressed copy: %s", path,
				    strerror(errno));
	*data = p;
	*len = (size_t)total;
	return 0;
}
#else
int kpt_import_gunzip(const char *path, const unsigned char *gz, size_t gzlen, uint64_t max,
		      const unsigned char **data, size_t *len, struct kpt_diag *d)
{
	(void)gz, (void)gzlen, (void)max, (void)data, (void)len;
	kpt_diag_set(d, KPT_E_UNSUPPORTED, "cannot import '%s': a gzip-compressed file, and this kptprof was built without zlib",
		     path);
	return kpt_diag_hint(d, "decompress it first (gunzip -k), or build kptprof with zlib1g-dev installed");
}
#endif

/* The most a gzip trace of gzlen bytes may inflate to: 256 times its size
 * (real traces compress 10-30 times; deflate's limit is about 1032), at
 * least 256 MiB, at most the plain-trace limit. A 1 MB input then writes
 * at most 256 MiB to $TMPDIR (docs/security.md), a gzip bomb no more. */
static uint64_t gunzip_cap(size_t gzlen)
{
	uint64_t cap = (uint64_t)gzlen * 256;

	if (cap < ((uint64_t)256 << 20))
		cap = (uint64_t)256 << 20;
	return cap < KPT_IMPORT_MAX_BYTES ? cap : KPT_IMPORT_MAX_BYTES;
}

/* A gzip file (torch.profiler's tensorboard_trace_handler writes .json.gz)
 * is replaced by its decompressed bytes, mapped (*data, *len: the old
 * mapping is unmapped): 1; other files are left as they are: 0. */
static int maybe_gunzip(const char *path, const unsigned char **data, size_t *len, struct kpt_diag *d)
{
	const unsigned char *out;
	size_t n;
	int rc;

	if (!is_gzip(*data, *len))
		return 0;
	if ((rc = kpt_import_gunzip(path, *data, *len, gunzip_cap(*len), &out, &n, d)) < 0)
		return rc;
	munmap((void *)*data, *len);
	*data = out;
	*len = n;
	if (!is_gzip(out, n))
		return 1;
	return kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': compressed twice", path);
}

static const struct kpt_importer *find_importer(const char *path, const unsigned char *h, size_t n,
						struct kpt_diag *d)
{
	size_t head = n < 64 ? n : 64;

	for (size_t i = 0; i < sizeof importers / sizeof importers[0]; i++)
		if (importers[i].sniff(h, head))
			return &importers[i];
	kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': neither a Chrome trace (JSON) nor an Nsight Systems SQLite export",
		     path);
	kpt_diag_hint(d, "an .nsys-rep needs 'nsys export --type sqlite' first");
	return NULL;
}

static int write_meta(struct kpt_import_ctx *c, const struct kpt_importer *imp,
		      const char *const *paths, size_t n, struct kpt_diag *d)
{
	char *files = NULL, *lacks = NULL, num[32], when[32];
	size_t fl = 0, ll = 0;
	FILE *f;
	int rc;

	if (!(f = open_memstream(&files, &fl)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const char *b = strrchr(paths[i], '/');

		fprintf(f, "%s%s", i ? ", " : "", b ? b + 1 : paths[i]);
	}
	if (fclose(f) != 0 || !(f = open_memstream(&lacks, &ll))) {
		free(files);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	fputs(imp->lacks, f);
	for (size_t i = 0; i < sizeof lack_texts / sizeof lack_texts[0]; i++)
		if (c->lacks & lack_texts[i].bit)
			fprintf(f, "; %s", lack_texts[i].text);
	if (fclose(f) != 0) {
		free(files);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	snprintf(num, sizeof num, "%u", c->next_run);
	rc = kpt_writer_meta(c->w, "imported_from", imp->name, d);
	if (rc >= 0)
		rc = kpt_writer_meta(c->w, "import.files", files, d);
	if (rc >= 0)
		rc = kpt_writer_meta(c->w, "import.lacks", lacks, d);
	if (rc >= 0)
		rc = kpt_writer_meta(c->w, "runs", num, d);
	if (rc >= 0)
		rc = write_facts(c, d);
	/* an epoch-looking clock (after 2001) gives the time of the trace */
	if (rc >= 0 && c->first_ns != UINT64_MAX && c->first_ns > UINT64_C(1000000000000000000)) {
		time_t t = (time_t)(c->first_ns / 1000000000u);
		struct tm tm;

		if (gmtime_r(&t, &tm) && strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm))
			rc = kpt_writer_meta(c->w, "time", when, d);
	}
	free(files);
	free(lacks);
	return rc;
}

int kpt_import(const char *const *paths, size_t n, const char *out, const struct kpt_import_opts *o,
	       struct kpt_import_stats *st, struct kpt_diag *d)
{
	const enum kpt_import_runs runs = o ? o->runs : KPT_IMPORT_RUNS_AUTO;

	struct kpt_import_ctx c;
	const struct kpt_importer *first = NULL;
	int rc = 0;

	memset(&c, 0, sizeof c);
	c.first_ns = UINT64_MAX;
	c.steps_as_runs = runs == KPT_IMPORT_RUNS_STEPS || (runs == KPT_IMPORT_RUNS_AUTO && n == 1);
	if (n == 0)
		return kpt_diag_set(d, KPT_E_INVAL, "nothing to import");
	if (n > UINT32_MAX - 1)
		return kpt_diag_set(d, KPT_E_INVAL, "too many files to import");
	if ((rc = kpt_writer_create(out, NULL, &c.w, d)) < 0)
		return rc;
	for (size_t i = 0; i < n && rc >= 0; i++) {
		const struct kpt_importer *imp;
		int gz;

		c.path = paths[i];
		c.run = c.next_run;
		if (c.run >= UINT32_MAX - 1) {
			rc = kpt_diag_set(d, KPT_E_INVAL, "cannot import '%s': too many runs", paths[i]);
			break;
		}
		if ((rc = map_file(paths[i], &c.data, &c.len, d)) < 0)
			break;
		if ((gz = maybe_gunzip(paths[i], &c.data, &c.len, d)) < 0) {
			munmap((void *)c.data, c.len);
			rc = gz;
			break;
		}
		imp = find_importer(paths[i], c.data, c.len, d);
		if (!imp)
			rc = d ? d->code : KPT_E_FORMAT;
		else if (gz && imp->import != kpt_import_kineto) /* the nsys reader opens the path */
			rc = kpt_diag_set(d, KPT_E_UNSUPPORTED, "cannot import '%s': a gzip-compressed %s: decompress it first",
					  paths[i], imp->what);
		else if (first && imp != first)
			rc = kpt_diag_set(d, KPT_E_INVAL, "cannot import '%s' with '%s': a %s and a %s in one recording",
					  paths[0], paths[i], first->what, imp->what);
		else
			rc = imp->import(&c, d);
		if (c.next_run <= c.run) /* an importer that did not cut runs: one */
			c.next_run = c.run + 1;
		first = imp;
		munmap((void *)c.data, c.len);
		c.data = NULL;
	}
	c.st.files = (uint32_t)n;
	c.st.runs = c.next_run;
	c.st.format = first ? first->name : NULL;
	if (rc >= 0 && c.st.kernels == 0 && c.st.memops == 0) {
		rc = kpt_diag_set(d, KPT_E_FORMAT, "cannot import '%s': no kernel, memcpy or memset in it%s", paths[0],
				  n > 1 ? " nor in the other files" : "");
		kpt_diag_hint(d, "torch.profiler traces need ProfilerActivity.CUDA");
	}
	if (rc >= 0)
		rc = write_meta(&c, first, paths, n, d);
	if (rc >= 0)
		rc = kpt_writer_commit(c.w, d);
	kpt_writer_destroy(c.w);
	for (size_t i = 0; i < c.ndevs; i++)
		free((void *)c.devs[i].name);
	free(c.devs);
	facts_release(&c.facts);
	if (st)
		*st = c.st;
	return rc;
}
