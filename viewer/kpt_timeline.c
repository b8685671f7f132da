/* kpt_timeline.c - per-pixel-column timeline aggregation and drawing (see
 * kpt_timeline.h). */
#include "kpt_timeline.h"
#include "kpt_grow.h"
#include "kpt_range_index.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Layout, pixels. */
enum {
	TL_LEFT = 168,              /* lane labels */
	TL_RIGHT = 14,
	TL_PAD = 8,
	TL_TITLE_H = 22,
	TL_RANGE_H = 13,            /* one NVTX row */
	TL_RANGE_GAP = 2,
	TL_BAR_H = 18,              /* kernel bar area of a lane */
	TL_MEM_H = 5,               /* memop strip under it */
	TL_LANE_GAP = 3,
	TL_MIN_BAR_H = 2,           /* any kernel time in a column shows */
	TL_EDGE_MARK = 5,           /* memops outside the window: a triangle */
	TL_AXIS_H = 30,
	TL_LEGEND_ROW = 13,
	TL_LEGEND_COL = 300,
	TL_LANE_CAP = 1024,         /* aggregated lanes; more go to one overflow lane */
	TL_DEPTH_CAP = 64,          /* deepest NVTX nesting followed */
};

#define TL_EDGE_COLOR 0xc9541a

/* Stable kernel-family palette (order matters: colours are hashed into it). */
static const kpt_rgb tl_palette[KPT_TL_PALETTE] = {
	0x3b6fd6, 0xe8743b, 0x2fa05a, 0xd64550, 0x8e5fc9, 0x9c6b4e,
	0xd45fb0, 0x6f7d8c, 0xb5b32a, 0x23a9c0, 0xf2b33d, 0x5a3fa0,
};

/* Memop kinds in the strip; index by enum kpt_memop_kind. */
static const struct {
	const char *label;
	kpt_rgb color;
} tl_memkinds[KPT_TL_MEMKINDS] = {
	{ "memcpy HtoD", 0x1a9b8a },
	{ "memcpy DtoH", 0xc9541a },
	{ "memcpy DtoD/peer/other", 0x6d63b8 },
	{ "memset", 0x3c3c3c },
};

static const int tl_memkind_of[] = {
	[KPT_MEMCPY_HTOD] = 0, [KPT_MEMCPY_DTOH] = 1, [KPT_MEMCPY_DTOD] = 2,
	[KPT_MEMCPY_HTOH] = 2, [KPT_MEMCPY_PTOP] = 2, [KPT_MEMCPY_OTHER] = 2,
	[KPT_MEMSET] = 3,
};

struct tl_lane {
	struct kpt_timeline_lane info;
	uint64_t mem_before, mem_after; /* memops wholly outside the window */
	double *busy;               /* [cols] kernel ns per column */
	float *slot_ns;             /* [cols][KPT_TL_PALETTE] */
	float *mem_ns;              /* [cols][KPT_TL_MEMKINDS] */
};

struct tl_family {
	struct kpt_timeline_family pub;
	uint8_t slot;
};

struct tl_range_row {
	float *cover_ns;            /* [cols] */
	float *best_ns;             /* [cols] overlap of the range shown */
	uint32_t *best_name;        /* [cols] its name id */
	uint32_t *best_id;          /* [cols] its range id (edges between ranges) */
};

struct kpt_timeline {
	struct kpt_timeline_opts o;
	uint64_t t0, t1;
	int cols;
	double col_ns, inv_col_ns;
	kpt_timeline_name_fn names;
	void *ctx;

	struct tl_lane *lanes;
	size_t nlanes, lanes_cap;
	size_t last_lane;
	uint64_t overflow_streams;  /* lanes folded into the overflow lane */
	size_t *order;              /* lanes sorted by device, stream (lazy) */
	int order_valid;

	uint32_t *fam_of_name;      /* name id -> family index + 1; 0 unknown */
	size_t fam_of_name_cap;
	struct tl_family *fams;
	size_t nfams, fams_cap;
	uint32_t *fam_hash;         /* open addressing: family index + 1 */
	size_t fam_hash_cap;
	size_t *fam_order;          /* by total time (lazy) */
	int fam_order_valid;

	struct tl_range_row *rows;
	int nrows;                  /* range_rows */
	int rows_used;              /* deepest level drawn + 1 */
	uint64_t ranges_drawn, ranges_hidden, marks;
	uint64_t mem_before, mem_after; /* memops wholly outside the window */
};

static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

kpt_rgb kpt_family_color(const char *family)
{
	return tl_palette[fnv1a(family) % KPT_TL_PALETTE];
}

/* ---- family of a kernel name ------------------------------------------ */

/* Reads <decimal length><identifier> at *p; sets name/len. 0 on success. */
static int mangled_source_name(const char **p, const char **name, size_t *len)
{
	size_t n = 0;
	const char *s = *p;

	if (*s < '0' || *s > '9')
		return -1;
	while (*s >= '0' && *s <= '9') {
		n = n * 10 + (size_t)(*s - '0');
		if (n > 4096)
			return -1;
		s++;
	}
	if (strnlen(s, n) < n)
		return -1;
	*name = s;
	*len = n;
	*p = s + n;
	return 0;
}

/* Skips a template argument list "I...E" starting at *p (on the 'I'),
 * balancing the constructs that end in 'E'. Approximate by design: a wrong
 * guess only changes a colour. */
static void mangled_skip_template(const char **p)
{
	const char *s = *p + 1;
	int depth = 1;

	while (*s && depth > 0) {
		if (*s >= '0' && *s <= '9') {
			const char *nm;
			size_t len;

			if (mangled_source_name(&s, &nm, &len) != 0)
				s++;
			continue;
		}
		if (*s == 'I' || *s == 'N' || *s == 'L' || *s == 'X' || *s == 'J')
			depth++;
		else if (*s == 'E')
			depth--;
		s++;
	}
	*p = s;
}

/* Base name of an Itanium-mangled function name; 0 on success. */
static int mangled_base(const char *m, const char **name, size_t *len)
{
	const char *p = m + 2, *nm = NULL;
	size_t n = 0;

	if (*p == 'L')
		p++;
	if (*p != 'N')
		return mangled_source_name(&p, name, len);
	p++;
	while (*p == 'r' || *p == 'V' || *p == 'K')
		p++;
	while (*p && *p != 'E') {
		if (*p >= '0' && *p <= '9') {
			if (mangled_source_name(&p, &nm, &n) != 0)
				return -1;
		} else if (*p == 'I') {
			mangled_skip_template(&p);
		} else if (*p == 'S') {
			/* substitution or std:: prefix: S_, S<seq>_, St, Sa, ... */
			p++;
			if (*p == 't' || *p == 'a' || *p == 'b' || *p == 's' || *p == 'i' ||
			    *p == 'o' || *p == 'd') {
				p++;
				continue;
			}
			while (*p && *p != '_')
				p++;
			if (*p)
				p++;
		} else if (*p == 'C' || *p == 'D') {
			/* constructor/destructor: keep the class name */
			p += p[1] ? 2 : 1;
		} else {
			break;
		}
	}
	if (!nm)
		return -1;
	*name = nm;
	*len = n;
	return 0;
}

/* Base name of demangled text: the last '::' component of the function name
 * before its template arguments and parameter list, return type dropped. */
static void demangled_base(const char *s, const char **name, size_t *len)
{
	const char *end = s, *start = s;
	int depth = 0;

	/* The name ends at the first '(' or '<' at depth 0, except inside
	 * "operator<" and "(anonymous namespace)". */
	for (const char *p = s; *p; p++) {
		if (strncmp(p, "(anonymous namespace)", 21) == 0) {
			p += 20;
			continue;
		}
		if (*p == '<' || *p == '(') {
			if (depth == 0) {
				end = p;
				break;
			}
		}
		end = p + 1;
	}
	/* start: after the last ' ' or "::" at depth 0 before end */
	for (const char *p = s; p < end; p++) {
		if (*p == '<' || *p == '(')
			depth++;
		else if ((*p == '>' || *p == ')') && depth > 0)
			depth--;
		else if (depth == 0 && *p == ' ')
			start = p + 1;
		else if (depth == 0 && p[0] == ':' && p[1] == ':')
			start = p + 2;
	}
	if (start >= end) {
		start = s;
		end = s + strlen(s);
	}
	*name = start;
	*len = (size_t)(end - start);
}

int kpt_kernel_family(const char *name, char *out, int cap)
{
	const char *b = NULL;
	size_t n = 0;

	if (!name || !name[0])
		return snprintf(out, (size_t)cap, "?");
	if (strncmp(name, "_Z", 2) != 0 || mangled_base(name, &b, &n) != 0)
		demangled_base(name, &b, &n);
	if (n == 0)
		return snprintf(out, (size_t)cap, "?");
	return snprintf(out, (size_t)cap, "%.*s", (int)n, b);
}

/* ---- create / destroy -------------------------------------------------- */

static void lane_release(struct tl_lane *l)
{
	free(l->busy);
	free(l->slot_ns);
	free(l->mem_ns);
}

void kpt_timeline_destroy(struct kpt_timeline *tl)
{
	if (!tl)
		return;
	for (size_t i = 0; i < tl->nlanes; i++)
		lane_release(&tl->lanes[i]);
	free(tl->lanes);
	free(tl->order);
	for (size_t i = 0; i < tl->nfams; i++)
		free((char *)tl->fams[i].pub.name);
	free(tl->fams);
	free(tl->fam_hash);
	free(tl->fam_order);
	free(tl->fam_of_name);
	if (tl->rows) {
		for (int r = 0; r < tl->nrows; r++) {
			free(tl->rows[r].cover_ns);
			free(tl->rows[r].best_ns);
			free(tl->rows[r].best_name);
			free(tl->rows[r].best_id);
		}
		free(tl->rows);
	}
	free(tl);
}

int kpt_timeline_create(const struct kpt_timeline_opts *o, uint64_t t0_ns, uint64_t t1_ns,
			kpt_timeline_name_fn names, void *ctx,
			struct kpt_timeline **out, struct kpt_diag *d)
{
	struct kpt_timeline *tl;
	int w;

	*out = NULL;
	if (t1_ns <= t0_ns)
		return kpt_diag_set(d, KPT_E_INVAL, "empty time window [%llu, %llu) ns",
				    (unsigned long long)t0_ns, (unsigned long long)t1_ns);
	w = o && o->width ? o->width : 1600;
	if (w < 400 || w > 16384)
		return kpt_diag_set(d, KPT_E_INVAL, "timeline width %d out of range (400..16384)", w);
	tl = calloc(1, sizeof *tl);
	if (!tl)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	if (o)
		tl->o = *o;
	tl->o.width = w;
	if (tl->o.max_lanes <= 0)
		tl->o.max_lanes = 48;
	tl->nrows = tl->o.range_rows == 0 ? 3 : tl->o.range_rows < 0 ? 0 : tl->o.range_rows;
	if (tl->nrows > TL_DEPTH_CAP)
		tl->nrows = TL_DEPTH_CAP;
	tl->t0 = t0_ns;
	tl->t1 = t1_ns;
	tl->cols = w - TL_LEFT - TL_RIGHT;
	tl->col_ns = (double)(t1_ns - t0_ns) / tl->cols;
	tl->inv_col_ns = 1.0 / tl->col_ns;
	tl->names = names;
	tl->ctx = ctx;
	if (tl->nrows) {
		tl->rows = calloc((size_t)tl->nrows, sizeof *tl->rows);
		if (!tl->rows)
			goto nomem;
		for (int r = 0; r < tl->nrows; r++) {
			struct tl_range_row *row = &tl->rows[r];

			row->cover_ns = calloc((size_t)tl->cols, sizeof *row->cover_ns);
			row->best_ns = calloc((size_t)tl->cols, sizeof *row->best_ns);
			row->best_name = calloc((size_t)tl->cols, sizeof *row->best_name);
			row->best_id = calloc((size_t)tl->cols, sizeof *row->best_id);
			if (!row->cover_ns || !row->best_ns || !row->best_name || !row->best_id)
				goto nomem;
		}
	}
	*out = tl;
	return 0;
nomem:
	kpt_timeline_destroy(tl);
	return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
}

/* ---- lanes and families ------------------------------------------------ */

static struct tl_lane *lane_get(struct kpt_timeline *tl, uint32_t dev, uint32_t stream)
{
	struct tl_lane *l;
	size_t cols = (size_t)tl->cols;

	if (tl->nlanes) {
		l = &tl->lanes[tl->last_lane];
		if (l->info.device == dev && l->info.stream == stream)
			return l;
	}
	for (size_t i = 0; i < tl->nlanes; i++) {
		l = &tl->lanes[i];
		if (l->info.device == dev && l->info.stream == stream) {
			tl->last_lane = i;
			return l;
		}
	}
	if (tl->nlanes == TL_LANE_CAP) {
		/* Overflow: the last lane stands for every further stream. */
		tl->overflow_streams++;
		tl->lanes[TL_LANE_CAP - 1].info.device = KPT_NONE;
		tl->lanes[TL_LANE_CAP - 1].info.stream = KPT_NONE;
		tl->last_lane = TL_LANE_CAP - 1;
		return &tl->lanes[TL_LANE_CAP - 1];
	}
	if (kpt_grow(&tl->lanes, &tl->lanes_cap, tl->nlanes + 1, sizeof *tl->lanes) < 0)
		return NULL;
	l = &tl->lanes[tl->nlanes];
	memset(l, 0, sizeof *l);
	l->info.device = dev;
	l->info.stream = stream;
	l->busy = calloc(cols, sizeof *l->busy);
	l->slot_ns = calloc(cols * KPT_TL_PALETTE, sizeof *l->slot_ns);
	l->mem_ns = calloc(cols * KPT_TL_MEMKINDS, sizeof *l->mem_ns);
	if (!l->busy || !l->slot_ns || !l->mem_ns) {
		lane_release(l);
		return NULL;
	}
	tl->last_lane = tl->nlanes++;
	tl->order_valid = 0;
	return l;
}

static int fam_hash_grow(struct kpt_timeline *tl)
{
	size_t cap = tl->fam_hash_cap ? tl->fam_hash_cap * 2 : 256;
	uint32_t *h = calloc(cap, sizeof *h);

	if (!h)
		return KPT_E_NOMEM;
	for (size_t i = 0; i < tl->nfams; i++) {
		size_t k = fnv1a(tl->fams[i].pub.name) & (cap - 1);

		while (h[k])
			k = (k + 1) & (cap - 1);
		h[k] = (uint32_t)i + 1;
	}
	free(tl->fam_hash);
	tl->fam_hash = h;
	tl->fam_hash_cap = cap;
	return 0;
}

/* Family index of a family text, inserted when new; -1 on NOMEM. */
static long fam_intern(struct kpt_timeline *tl, const char *text)
{
	size_t k;
	uint32_t h = fnv1a(text);
	struct tl_family *f;

	if ((tl->nfams + 1) * 2 > tl->fam_hash_cap && fam_hash_grow(tl) != 0)
		return -1;
	for (k = h & (tl->fam_hash_cap - 1); tl->fam_hash[k]; k = (k + 1) & (tl->fam_hash_cap - 1))
		if (strcmp(tl->fams[tl->fam_hash[k] - 1].pub.name, text) == 0)
			return (long)tl->fam_hash[k] - 1;
	if (kpt_grow(&tl->fams, &tl->fams_cap, tl->nfams + 1, sizeof *tl->fams) < 0)
		return -1;
	f = &tl->fams[tl->nfams];
	memset(f, 0, sizeof *f);
	f->pub.name = strdup(text);
	if (!f->pub.name)
		return -1;
	f->slot = (uint8_t)(h % KPT_TL_PALETTE);
	f->pub.color = tl_palette[f->slot];
	tl->fam_hash[k] = (uint32_t)tl->nfams + 1;
	tl->fam_order_valid = 0;
	return (long)tl->nfams++;
}

/* Family of a kernel name id, cached per id; NULL on NOMEM. */
static struct tl_family *fam_of(struct kpt_timeline *tl, uint32_t name_id)
{
	char small[256], *buf = small;
	const char *name;
	long fi;
	int need;

	if (name_id < tl->fam_of_name_cap && tl->fam_of_name[name_id])
		return &tl->fams[tl->fam_of_name[name_id] - 1];
	if (name_id != KPT_NONE && name_id >= tl->fam_of_name_cap) {
		size_t old = tl->fam_of_name_cap;

		if (kpt_grow(&tl->fam_of_name, &tl->fam_of_name_cap, (size_t)name_id + 1, sizeof *tl->fam_of_name) < 0)
			return NULL;
		memset(tl->fam_of_name + old, 0, (tl->fam_of_name_cap - old) * sizeof *tl->fam_of_name);
	}
	name = tl->names ? tl->names(tl->ctx, name_id) : NULL;
	need = kpt_kernel_family(name, small, sizeof small);
	if (need >= (int)sizeof small) {
		buf = malloc((size_t)need + 1);
		if (!buf)
			return NULL;
		kpt_kernel_family(name, buf, need + 1);
	}
	fi = fam_intern(tl, buf);
	if (buf != small)
		free(buf);
	if (fi < 0)
		return NULL;
	if (name_id != KPT_NONE)
		tl->fam_of_name[name_id] = (uint32_t)fi + 1;
	return &tl->fams[fi];
}

int kpt_timeline_prefer_families(struct kpt_timeline *tl, const char *const *families, size_t n,
				 struct kpt_diag *d)
{
	unsigned used = 0;

	if (tl->nfams)
		return kpt_diag_set(d, KPT_E_INVAL, "families must be preferred before rows are added");
	for (size_t i = 0; i < n && i < KPT_TL_PALETTE; i++) {
		long fi = fam_intern(tl, families[i]);
		unsigned slot;

		if (fi < 0)
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
		/* The hash slot when free, else the next free one. */
		slot = tl->fams[fi].slot;
		while (used & (1u << slot))
			slot = (slot + 1) % KPT_TL_PALETTE;
		used |= 1u << slot;
		tl->fams[fi].slot = (uint8_t)slot;
		tl->fams[fi].pub.color = tl_palette[slot];
	}
	return 0;
}

/* ---- adding rows ------------------------------------------------------- */

/* Clips [s, e] to the window; 0 when nothing is left. Zero-length rows
 * inside the window are kept. */
static int clip(const struct kpt_timeline *tl, uint64_t s, uint64_t e, uint64_t *cs, uint64_t *ce)
{
	if (e < s)
		e = s;
	if (s >= tl->t1 || e < tl->t0 || (e == tl->t0 && s < e))
		return 0;
	*cs = s < tl->t0 ? tl->t0 : s;
	*ce = e > tl->t1 ? tl->t1 : e;
	return 1;
}

static int col_of(const struct kpt_timeline *tl, uint64_t t)
{
	int c = (int)((double)(t - tl->t0) * tl->inv_col_ns);

	return c >= tl->cols ? tl->cols - 1 : c;
}

/* Calls add(col, ns) for each column [cs, ce) overlaps, split exactly at
 * column edges. A macro so the hot kernel loop inlines its body. */
#define TL_SPREAD(tl, cs, ce, COL, NS, BODY)                                    \
	do {                                                                    \
		int c0_ = col_of((tl), (cs)), c1_ = col_of((tl), (ce));         \
		double rel0_ = (double)((cs) - (tl)->t0);                       \
		double rel1_ = (double)((ce) - (tl)->t0);                       \
		if (c0_ == c1_) {                                               \
			int COL = c0_;                                          \
			double NS = rel1_ - rel0_;                              \
			BODY;                                                   \
		} else {                                                        \
			for (int COL = c0_; COL <= c1_; COL++) {                \
				double lo_ = COL == c0_ ? rel0_ : COL * (tl)->col_ns; \
				double hi_ = COL == c1_ ? rel1_ : (COL + 1) * (tl)->col_ns; \
				double NS = hi_ - lo_;                          \
				BODY;                                           \
			}                                                       \
		}                                                               \
	} while (0)

int kpt_timeline_add_kernels(struct kpt_timeline *tl, const struct kpt_kernel *rows,
			     size_t n, struct kpt_diag *d)
{
	for (size_t i = 0; i < n; i++) {
		const struct kpt_kernel *k = &rows[i];
		struct tl_lane *l;
		struct tl_family *f;
		uint64_t cs, ce;
		float *slots;

		if (!clip(tl, k->start_ns, k->end_ns, &cs, &ce))
			continue;
		l = lane_get(tl, k->device, k->stream);
		f = fam_of(tl, k->name);
		if (!l || !f)
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
		l->info.kernels++;
		f->pub.kernels++;
		if (ce == cs)
			continue;
		l->info.busy_ns += (double)(ce - cs);
		f->pub.total_ns += (double)(ce - cs);
		slots = l->slot_ns;
		TL_SPREAD(tl, cs, ce, col, ns, {
			l->busy[col] += ns;
			slots[(size_t)col * KPT_TL_PALETTE + f->slot] += (float)ns;
		});
	}
	tl->fam_order_valid = 0;
	return 0;
}

int kpt_timeline_add_memops(struct kpt_timeline *tl, const struct kpt_memop *rows,
			    size_t n, struct kpt_diag *d)
{
	for (size_t i = 0; i < n; i++) {
		const struct kpt_memop *m = &rows[i];
		struct tl_lane *l;
		uint64_t cs, ce;
		int kind;

		if (!clip(tl, m->start_ns, m->end_ns, &cs, &ce)) {
			/* Counted and marked at the lane's edge, so a memcpy
			 * long before the first kernel does not stretch the
			 * window (kpt_timeline_from_file). */
			int before = m->start_ns < tl->t0;

			l = lane_get(tl, m->device, m->stream);
			if (!l)
				return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
			*(before ? &l->mem_before : &l->mem_after) += 1;
			*(before ? &tl->mem_before : &tl->mem_after) += 1;
			continue;
		}
		l = lane_get(tl, m->device, m->stream);
		if (!l)
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
		l->info.memops++;
		kind = m->kind < sizeof tl_memkind_of / sizeof tl_memkind_of[0] && m->kind ?
			tl_memkind_of[m->kind] : 2;
		if (ce == cs) {
			/* Still mark it: one column, a token amount. */
			l->mem_ns[(size_t)col_of(tl, cs) * KPT_TL_MEMKINDS + kind] += 1e-3f;
			continue;
		}
		TL_SPREAD(tl, cs, ce, col, ns, {
			l->mem_ns[(size_t)col * KPT_TL_MEMKINDS + kind] += (float)ns;
		});
	}
	return 0;
}

int kpt_timeline_add_ranges(struct kpt_timeline *tl, const struct kpt_range *rows,
			    size_t n, struct kpt_diag *d)
{
	struct kpt_range_index ri;
	int8_t *depth;

	if (n == 0)
		return 0;
	depth = malloc(n);
	if (!depth || kpt_range_index_build(&ri, rows, n) != 0) {
		free(depth);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
	}
	memset(depth, -1, n);
	for (size_t i = 0; i < n; i++) {
		/* Walk up to a known level; a cycle or a chain deeper than the
		 * cap counts as that cap. */
		size_t chain[TL_DEPTH_CAP];
		int len = 0, base = -1;
		long j = (long)i;

		while (j >= 0 && depth[j] < 0 && len < TL_DEPTH_CAP) {
			chain[len++] = (size_t)j;
			j = rows[j].parent == KPT_NONE ? -1 : kpt_range_index_find(&ri, rows[j].parent);
		}
		if (j >= 0)
			base = depth[j] >= 0 ? depth[j] : TL_DEPTH_CAP - 1;
		for (int k = len - 1; k >= 0; k--) {
			base = base + 1 > TL_DEPTH_CAP - 1 ? TL_DEPTH_CAP - 1 : base + 1;
			depth[chain[k]] = (int8_t)base;
		}
	}
	kpt_range_index_release(&ri);
	for (size_t i = 0; i < n; i++) {
		const struct kpt_range *r = &rows[i];
		struct tl_range_row *row;
		uint64_t cs, ce;

		if (r->kind == KPT_RANGE_MARK) {
			tl->marks++;
			continue;
		}
		if (depth[i] >= tl->nrows) {
			tl->ranges_hidden++;
			continue;
		}
		if (!clip(tl, r->start_ns, r->end_ns ? r->end_ns : tl->t1, &cs, &ce) || ce == cs)
			continue;
		row = &tl->rows[depth[i]];
		tl->ranges_drawn++;
		if (depth[i] + 1 > tl->rows_used)
			tl->rows_used = depth[i] + 1;
		TL_SPREAD(tl, cs, ce, col, ns, {
			row->cover_ns[col] += (float)ns;
			if ((float)ns > row->best_ns[col]) {
				row->best_ns[col] = (float)ns;
				row->best_name[col] = r->name;
				row->best_id[col] = r->id;
			}
		});
	}
	free(depth);
	return 0;
}

/* ---- results ----------------------------------------------------------- */

int kpt_timeline_columns(const struct kpt_timeline *tl)
{
	return tl->cols;
}

double kpt_timeline_column_ns(const struct kpt_timeline *tl)
{
	return tl->col_ns;
}

size_t kpt_timeline_lane_count(const struct kpt_timeline *tl)
{
	return tl->nlanes;
}

static const struct kpt_timeline *sort_ctx;

static int cmp_lane(const void *a, const void *b)
{
	const struct kpt_timeline_lane *x = &sort_ctx->lanes[*(const size_t *)a].info;
	const struct kpt_timeline_lane *y = &sort_ctx->lanes[*(const size_t *)b].info;

	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

static int cmp_fam(const void *a, const void *b)
{
	const struct tl_family *x = &sort_ctx->fams[*(const size_t *)a];
	const struct tl_family *y = &sort_ctx->fams[*(const size_t *)b];

	if (x->pub.total_ns != y->pub.total_ns)
		return x->pub.total_ns > y->pub.total_ns ? -1 : 1;
	return strcmp(x->pub.name, y->pub.name);
}

/* Sorting uses a file-static context: timelines are not sorted from two
 * threads at once (the viewer is single-threaded). */
static int ensure_order(struct kpt_timeline *tl)
{
	if (!tl->order_valid) {
		size_t *o = realloc(tl->order, (tl->nlanes ? tl->nlanes : 1) * sizeof *o);

		if (!o)
			return KPT_E_NOMEM;
		tl->order = o;
		for (size_t i = 0; i < tl->nlanes; i++)
			o[i] = i;
		sort_ctx = tl;
		qsort(o, tl->nlanes, sizeof *o, cmp_lane);
		tl->order_valid = 1;
	}
	if (!tl->fam_order_valid) {
		size_t *o = realloc(tl->fam_order, (tl->nfams ? tl->nfams : 1) * sizeof *o);

		if (!o)
			return KPT_E_NOMEM;
		tl->fam_order = o;
		for (size_t i = 0; i < tl->nfams; i++)
			o[i] = i;
		sort_ctx = tl;
		qsort(o, tl->nfams, sizeof *o, cmp_fam);
		tl->fam_order_valid = 1;
	}
	return 0;
}

static const struct tl_lane *lane_sorted(const struct kpt_timeline *tl, size_t i)
{
	if (ensure_order((struct kpt_timeline *)tl) != 0 || i >= tl->nlanes)
		return NULL;
	return &tl->lanes[tl->order[i]];
}

const struct kpt_timeline_lane *kpt_timeline_lane_at(const struct kpt_timeline *tl, size_t i)
{
	const struct tl_lane *l = lane_sorted(tl, i);

	return l ? &l->info : NULL;
}

double kpt_timeline_busy(const struct kpt_timeline *tl, size_t lane, int col)
{
	const struct tl_lane *l = lane_sorted(tl, lane);
	double f;

	if (!l || col < 0 || col >= tl->cols)
		return 0;
	f = l->busy[col] / tl->col_ns;
	return f > 1 ? 1 : f;
}

static int argmax_f(const float *v, int n)
{
	int best = -1;
	float bv = 0;

	for (int i = 0; i < n; i++)
		if (v[i] > bv) {
			bv = v[i];
			best = i;
		}
	return best;
}

kpt_rgb kpt_timeline_column_color(const struct kpt_timeline *tl, size_t lane, int col)
{
	const struct tl_lane *l = lane_sorted(tl, lane);
	int s;

	if (!l || col < 0 || col >= tl->cols)
		return 0;
	s = argmax_f(l->slot_ns + (size_t)col * KPT_TL_PALETTE, KPT_TL_PALETTE);
	return s < 0 ? 0 : tl_palette[s];
}

size_t kpt_timeline_family_count(const struct kpt_timeline *tl)
{
	return tl->nfams;
}

const struct kpt_timeline_family *kpt_timeline_family_at(const struct kpt_timeline *tl, size_t i)
{
	if (ensure_order((struct kpt_timeline *)tl) != 0 || i >= tl->nfams)
		return NULL;
	return &tl->fams[tl->fam_order[i]].pub;
}

/* ---- drawing ----------------------------------------------------------- */

static kpt_rgb blend(kpt_rgb a, kpt_rgb b, double t)
{
	kpt_rgb out = 0;

	for (int sh = 16; sh >= 0; sh -= 8) {
		double ca = (a >> sh) & 0xff, cb = (b >> sh) & 0xff;

		out |= (kpt_rgb)lround(ca + (cb - ca) * t) << sh;
	}
	return out;
}

/* Tick step: 1, 2 or 5 times a power of ten ns, at most ~10 ticks. */
static double tick_step(double span_ns)
{
	double p = pow(10, floor(log10(span_ns / 10)));

	if (span_ns / p <= 10)
		return p;
	if (span_ns / (2 * p) <= 10)
		return 2 * p;
	if (span_ns / (5 * p) <= 10)
		return 5 * p;
	return 10 * p;
}

static const struct {
	double ns;
	const char *unit;
} tl_units[] = {
	{ 1e9, "s" }, { 1e6, "ms" }, { 1e3, "us" }, { 1, "ns" },
};

/* Unit for labels at this step: the largest unit not above the step. */
static int unit_for(double step)
{
	for (size_t i = 0; i < sizeof tl_units / sizeof tl_units[0]; i++)
		if (step >= tl_units[i].ns)
			return (int)i;
	return (int)(sizeof tl_units / sizeof tl_units[0]) - 1;
}

/* "12.5 ms"-style duration for captions. */
static void fmt_dur(char *buf, size_t cap, double ns)
{
	int u = unit_for(ns);
	double v = ns / tl_units[u].ns;

	snprintf(buf, cap, v < 10 ? "%.2f %s" : v < 100 ? "%.1f %s" : "%.0f %s", v, tl_units[u].unit);
}

static int lanes_drawn(const struct kpt_timeline *tl)
{
	return (int)tl->nlanes < tl->o.max_lanes ? (int)tl->nlanes : tl->o.max_lanes;
}

static int legend_rows(const struct kpt_timeline *tl, int per_row)
{
	int fams = tl->nfams < 12 ? (int)tl->nfams : 12;

	return 2 + (fams + per_row - 1) / per_row + 1 + 1 + (tl->mem_before || tl->mem_after);
}

static void draw_ranges(const struct kpt_timeline *tl, struct kpt_canvas *c, int y)
{
	for (int r = 0; r < tl->rows_used; r++, y += TL_RANGE_H + TL_RANGE_GAP) {
		const struct tl_range_row *row = &tl->rows[r];
		char label[32];
		int c0 = 0;

		snprintf(label, sizeof label, "NVTX level %d", r);
		kpt_canvas_text(c, TL_PAD, y + 3, label, 0x555555, 1, TL_LEFT - 2 * TL_PAD);
		kpt_canvas_fill(c, TL_LEFT, y, tl->cols, TL_RANGE_H, 0xf7f7f7);
		/* Runs of columns showing the same range: fill, edge, label. */
		for (int col = 0; col <= tl->cols; col++) {
			const char *name;
			kpt_rgb base, fill;
			int w;

			if (col < tl->cols && col > c0 && row->best_id[col] == row->best_id[c0] &&
			    (row->cover_ns[col] > 0) == (row->cover_ns[c0] > 0))
				continue;
			if (c0 < tl->cols && row->cover_ns[c0] > 0) {
				name = tl->names ? tl->names(tl->ctx, row->best_name[c0]) : NULL;
				name = name && name[0] ? name : "?";
				base = kpt_family_color(name);
				fill = blend(base, 0xffffff, 0.55);
				w = col - c0;
				kpt_canvas_fill(c, TL_LEFT + c0, y, w, TL_RANGE_H, fill);
				kpt_canvas_fill(c, TL_LEFT + c0, y, 1, TL_RANGE_H, blend(base, 0, 0.2));
				if (w >= 16)
					kpt_canvas_text(c, TL_LEFT + c0 + 3, y + 3, name, 0x1a1a1a, 1, w - 5);
			}
			c0 = col;
		}
	}
}

static void draw_lane(const struct kpt_timeline *tl, struct kpt_canvas *c, const struct tl_lane *l,
		      int y, int shade)
{
	char label[64], busy[32];
	double span = (double)(tl->t1 - tl->t0);

	if (l->info.device == KPT_NONE)
		snprintf(label, sizeof label, "other streams (%llu)",
			 (unsigned long long)tl->overflow_streams + 1);
	else if (l->info.stream == KPT_NONE)
		snprintf(label, sizeof label, "GPU%u stream ?", l->info.device);
	else
		snprintf(label, sizeof label, "GPU%u stream %u", l->info.device, l->info.stream);
	snprintf(busy, sizeof busy, "%.1f%% busy", 100.0 * l->info.busy_ns / span);
	kpt_canvas_text(c, TL_PAD, y + 1, label, 0x202020, 1, TL_LEFT - 2 * TL_PAD);
	kpt_canvas_text(c, TL_PAD, y + 11, busy, 0x707070, 1, TL_LEFT - 2 * TL_PAD);
	kpt_canvas_fill(c, TL_LEFT, y, tl->cols, TL_BAR_H, shade ? 0xeeeeee : 0xf4f4f4);
	kpt_canvas_fill(c, TL_LEFT, y + TL_BAR_H, tl->cols, TL_MEM_H, 0xfbfbfb);
	for (int col = 0; col < tl->cols; col++) {
		double f = l->busy[col] / tl->col_ns;
		int s, h, m;

		if (l->busy[col] > 0) {
			s = argmax_f(l->slot_ns + (size_t)col * KPT_TL_PALETTE, KPT_TL_PALETTE);
			h = (int)lround((f > 1 ? 1 : f) * TL_BAR_H);
			h = h < TL_MIN_BAR_H ? TL_MIN_BAR_H : h;
			kpt_canvas_fill(c, TL_LEFT + col, y + TL_BAR_H - h, 1, h,
					tl_palette[s < 0 ? 0 : s]);
		}
		m = argmax_f(l->mem_ns + (size_t)col * KPT_TL_MEMKINDS, KPT_TL_MEMKINDS);
		if (m >= 0)
			kpt_canvas_fill(c, TL_LEFT + col, y + TL_BAR_H, 1, TL_MEM_H, tl_memkinds[m].color);
	}
	/* Memops before / after the window: a triangle pointing out of the
	 * lane at its left / right end of the strip. */
	for (int i = 0; i < TL_EDGE_MARK; i++) {
		int h = 2 * i + 1, ym = y + TL_BAR_H + TL_MEM_H / 2 - i;

		if (l->mem_before)
			kpt_canvas_fill(c, TL_LEFT - TL_EDGE_MARK - 1 + i, ym, 1, h, TL_EDGE_COLOR);
		if (l->mem_after)
			kpt_canvas_fill(c, TL_LEFT + tl->cols + TL_EDGE_MARK - i, ym, 1, h, TL_EDGE_COLOR);
	}
}

/* Grid lines go only where nothing was drawn, so they stay under the bars. */
static int is_background(kpt_rgb p)
{
	return p == 0xffffff || p == 0xf7f7f7 || p == 0xeeeeee || p == 0xf4f4f4 || p == 0xfbfbfb;
}

static void draw_axis(const struct kpt_timeline *tl, struct kpt_canvas *c, int top, int y)
{
	double span = (double)(tl->t1 - tl->t0), step = tick_step(span);
	int u = unit_for(step);
	char buf[48];

	kpt_canvas_fill(c, TL_LEFT, y, tl->cols, 1, 0x303030);
	for (double t = 0; t <= span * (1 + 1e-9); t += step) {
		int x = TL_LEFT + (int)lround(t / tl->col_ns), w;

		if (x >= TL_LEFT + tl->cols)
			x = TL_LEFT + tl->cols - 1;
		for (int gy = top; gy < y; gy++)
			if (is_background(kpt_canvas_get(c, x, gy)))
				kpt_canvas_fill(c, x, gy, 1, 1, 0xd0d0d0);
		kpt_canvas_fill(c, x, y, 1, 5, 0x303030);
		snprintf(buf, sizeof buf, "%.0f %s", t / tl_units[u].ns, tl_units[u].unit);
		if (t == 0)
			snprintf(buf, sizeof buf, "0");
		w = kpt_canvas_text_width(buf, 1);
		x -= w / 2;
		if (x + w > c->w - 2)
			x = c->w - 2 - w;
		kpt_canvas_text(c, x < TL_LEFT ? TL_LEFT : x, y + 8, buf, 0x303030, 1, 0);
	}
	kpt_canvas_text(c, TL_PAD, y + 8, "time from start", 0x555555, 1, TL_LEFT - 2 * TL_PAD);
}

static int draw_legend(const struct kpt_timeline *tl, struct kpt_canvas *c, int y, int per_row)
{
	char buf[320], d1[32], d2[32];
	int n = tl->nfams < 12 ? (int)tl->nfams : 12, x;

	fmt_dur(d1, sizeof d1, tl->col_ns);
	fmt_dur(d2, sizeof d2, (double)(tl->t1 - tl->t0));
	snprintf(buf, sizeof buf,
		 "kernel families (bar height: busy fraction of a %s pixel column; colour: family with the most time); window %s",
		 d1, d2);
	kpt_canvas_text(c, TL_PAD, y, buf, 0x202020, 1, c->w - 2 * TL_PAD);
	y += TL_LEGEND_ROW + 2;
	for (int i = 0; i < n; i++) {
		const struct kpt_timeline_family *f = kpt_timeline_family_at(tl, (size_t)i);
		int cx = TL_PAD + (i % per_row) * TL_LEGEND_COL, cy = y + (i / per_row) * TL_LEGEND_ROW;

		kpt_canvas_fill(c, cx, cy, 9, 8, f->color);
		kpt_canvas_text(c, cx + 13, cy, f->name, 0x202020, 1, TL_LEGEND_COL - 20);
	}
	y += ((n + per_row - 1) / per_row) * TL_LEGEND_ROW + 4;
	x = TL_PAD;
	for (int k = 0; k < KPT_TL_MEMKINDS; k++) {
		kpt_canvas_fill(c, x, y, 9, 8, tl_memkinds[k].color);
		x += 13 + kpt_canvas_text(c, x + 13, y, tl_memkinds[k].label, 0x202020, 1, 0) + 18;
	}
	kpt_canvas_text(c, x, y, "(strip under each lane)", 0x707070, 1, 0);
	y += TL_LEGEND_ROW;
	if (tl->mem_before || tl->mem_after) {
		snprintf(buf, sizeof buf, "%llu memory operations before the window, %llu after it "
			 "(triangles at the lane ends)",
			 (unsigned long long)tl->mem_before, (unsigned long long)tl->mem_after);
		kpt_canvas_text(c, TL_PAD, y, buf, TL_EDGE_COLOR, 1, c->w - 2 * TL_PAD);
		y += TL_LEGEND_ROW;
	}
	if (tl->nlanes > (size_t)lanes_drawn(tl) || tl->ranges_hidden || tl->overflow_streams) {
		snprintf(buf, sizeof buf, "%zu of %zu lanes drawn; %llu NVTX ranges deeper than level %d not drawn",
			 (size_t)lanes_drawn(tl), tl->nlanes, (unsigned long long)tl->ranges_hidden,
			 tl->nrows - 1);
		kpt_canvas_text(c, TL_PAD, y, buf, 0x707070, 1, c->w - 2 * TL_PAD);
	}
	return 0;
}

int kpt_timeline_draw(struct kpt_timeline *tl, struct kpt_canvas *c, struct kpt_diag *d)
{
	int per_row = (tl->o.width - 2 * TL_PAD) / TL_LEGEND_COL;
	int nl = lanes_drawn(tl), h, y, rc, top;

	if (ensure_order(tl) != 0)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
	per_row = per_row < 1 ? 1 : per_row;
	h = TL_PAD + (tl->o.title ? TL_TITLE_H : 0) +
	    tl->rows_used * (TL_RANGE_H + TL_RANGE_GAP) + 4 +
	    nl * (TL_BAR_H + TL_MEM_H + TL_LANE_GAP) + TL_AXIS_H +
	    legend_rows(tl, per_row) * TL_LEGEND_ROW + TL_PAD;
	rc = kpt_canvas_init(c, tl->o.width, h, 0xffffff, d);
	if (rc)
		return rc;
	y = TL_PAD;
	if (tl->o.title) {
		kpt_canvas_text(c, TL_PAD, y, tl->o.title, 0x101010, 2, c->w - 2 * TL_PAD);
		y += TL_TITLE_H;
	}
	top = y;
	draw_ranges(tl, c, y);
	y += tl->rows_used * (TL_RANGE_H + TL_RANGE_GAP) + 4;
	for (int i = 0; i < nl; i++, y += TL_BAR_H + TL_MEM_H + TL_LANE_GAP)
		draw_lane(tl, c, lane_sorted(tl, (size_t)i), y, i & 1);
	draw_axis(tl, c, top, y);
	y += TL_AXIS_H;
	return draw_legend(tl, c, y, per_row);
}

/* ---- from a file ------------------------------------------------------- */

static const char *file_name(void *ctx, uint32_t id)
{
	return kpt_file_string(ctx, id);
}

int kpt_timeline_from_file(struct kpt_file *f, const struct kpt_timeline_opts *o,
			   struct kpt_timeline **out, struct kpt_diag *d)
{
	struct kpt_timeline_opts opts = { 0 };
	struct kpt_timeline *fams = NULL;   /* first pass: family totals */
	const char *top[KPT_TL_PALETTE];
	size_t ntop = 0;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *rows;
	const struct kpt_memop *mem;
	const struct kpt_range *rng;
	size_t n, nmem, nrng;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int rc;

	*out = NULL;
	if (o)
		opts = *o;
	if ((rc = kpt_file_load_strings(f, d)) < 0 ||
	    (rc = kpt_file_memops(f, &mem, &nmem, d)) < 0 ||
	    (rc = kpt_file_ranges(f, &rng, &nrng, d)) < 0)
		return rc;
	if (opts.t1_ns) {
		t0 = opts.t0_ns;
		t1 = opts.t1_ns;
	} else {
		/* First pass: the window, and the families by time so that the
		 * largest get distinct colours. */
		struct kpt_timeline_opts fo = { .range_rows = -1 };

		if ((rc = kpt_timeline_create(&fo, 0, 1, file_name, f, &fams, d)) < 0)
			return rc;
		if ((rc = kpt_kernel_cursor_create(f, &cur, d)) < 0)
			goto fail;
		while ((rc = kpt_kernel_cursor_next(cur, &rows, &n, d)) > 0)
			for (size_t i = 0; i < n; i++) {
				struct tl_family *fam = fam_of(fams, rows[i].name);

				if (!fam) {
					kpt_kernel_cursor_destroy(cur);
					rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
					goto fail;
				}
				if (rows[i].end_ns > rows[i].start_ns)
					fam->pub.total_ns += (double)(rows[i].end_ns - rows[i].start_ns);
				t0 = rows[i].start_ns < t0 ? rows[i].start_ns : t0;
				t1 = rows[i].end_ns > t1 ? rows[i].end_ns : t1;
			}
		kpt_kernel_cursor_destroy(cur);
		cur = NULL;
		if (rc < 0)
			goto fail;
		fams->fam_order_valid = 0;
		if (ensure_order(fams) != 0) {
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory for the timeline");
			goto fail;
		}
		for (size_t i = 0; i < fams->nfams && i < KPT_TL_PALETTE; i++)
			top[ntop++] = fams->fams[fams->fam_order[i]].pub.name;
		/* The kernels set the window; memops only without kernels
		 * (outside it they are marked at the lane ends). */
		for (size_t i = 0; i < nmem && fams->nfams == 0; i++) {
			t0 = mem[i].start_ns < t0 ? mem[i].start_ns : t0;
			t1 = mem[i].end_ns > t1 ? mem[i].end_ns : t1;
		}
		if (t0 == UINT64_MAX) {
			rc = kpt_diag_set(d, KPT_E_NOTFOUND, "nothing to draw: '%s' has no kernels or memory operations",
					  kpt_file_path(f));
			goto fail;
		}
		if (t1 <= t0)
			t1 = t0 + 1;
	}
	if (opts.t1_ns && opts.prefer) {
		for (size_t i = 0; i < opts.nprefer && i < KPT_TL_PALETTE; i++)
			top[ntop++] = opts.prefer[i];
	}
	if ((rc = kpt_timeline_create(&opts, t0, t1, file_name, f, out, d)) < 0 ||
	    (rc = kpt_timeline_prefer_families(*out, top, ntop, d)) < 0)
		goto fail;
	kpt_timeline_destroy(fams);
	fams = NULL;
	if ((rc = kpt_kernel_cursor_create(f, &cur, d)) < 0)
		goto fail;
	while ((rc = kpt_kernel_cursor_next(cur, &rows, &n, d)) > 0)
		if ((rc = kpt_timeline_add_kernels(*out, rows, n, d)) < 0)
			break;
	kpt_kernel_cursor_destroy(cur);
	if (rc < 0)
		goto fail;
	if ((rc = kpt_timeline_add_memops(*out, mem, nmem, d)) < 0 ||
	    (rc = kpt_timeline_add_ranges(*out, rng, nrng, d)) < 0)
		goto fail;
	return 0;
fail:
	kpt_timeline_destroy(fams);
	kpt_timeline_destroy(*out);
	*out = NULL;
	return rc;
}

/* Is range idx (or an enclosing one) the range target? Memoised in in[]
 * (-1 unknown, 0 no, 1 yes); chains longer than TL_DEPTH_CAP count as no. */
static int inside_range(const struct kpt_range *rows, const struct kpt_range_index *ri, int8_t *in,
			long idx, long target)
{
	long chain[TL_DEPTH_CAP];
	int len = 0, ans = 0;
	long j = idx;

	while (j >= 0 && in[j] < 0 && len < TL_DEPTH_CAP) {
		if (j == target) {
			ans = 1;
			break;
		}
		chain[len++] = j;
		j = rows[j].parent == KPT_NONE ? -1 : kpt_range_index_find(ri, rows[j].parent);
	}
	if (j >= 0 && !ans && len < TL_DEPTH_CAP)
		ans = in[j] > 0;
	for (int k = 0; k < len; k++)
		in[chain[k]] = (int8_t)ans;
	return ans;
}

int kpt_timeline_iteration_window(struct kpt_file *f, const char *iter_name, uint64_t *t0_ns,
				  uint64_t *t1_ns, uint32_t *ordinal, struct kpt_diag *d)
{
	const struct kpt_range *rng;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *rows;
	struct kpt_range_index ri = { 0 };
	uint32_t proc = KPT_NONE;
	long first = -1, second = -1;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	int8_t *in = NULL;
	size_t n, nrng;
	int rc;

	if ((rc = kpt_file_load_strings(f, d)) < 0 || (rc = kpt_file_ranges(f, &rng, &nrng, d)) < 0)
		return rc;
	for (size_t i = 0; i < nrng; i++) {
		const char *nm = kpt_file_string(f, rng[i].name);

		if (!nm || strcmp(nm, iter_name) != 0 || rng[i].kind == KPT_RANGE_MARK)
			continue;
		if (proc == KPT_NONE || rng[i].process < proc) {
			proc = rng[i].process;
			first = second = -1;
		}
		if (rng[i].process != proc)
			continue;
		if (first < 0 || rng[i].start_ns < rng[first].start_ns) {
			second = first;
			first = (long)i;
		} else if (second < 0 || rng[i].start_ns < rng[second].start_ns) {
			second = (long)i;
		}
	}
	if (first < 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "no NVTX range '%s' in '%s'", iter_name, kpt_file_path(f));
	if (second >= 0)
		first = second;
	*ordinal = second >= 0 ? 1 : 0;
	in = malloc(nrng);
	if (!in || kpt_range_index_build(&ri, rng, nrng) != 0) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto out;
	}
	memset(in, -1, nrng);
	if ((rc = kpt_kernel_cursor_create(f, &cur, d)) < 0)
		goto out;
	while ((rc = kpt_kernel_cursor_next(cur, &rows, &n, d)) > 0)
		for (size_t i = 0; i < n; i++) {
			long idx;

			if (rows[i].range == KPT_NONE || rows[i].process != rng[first].process)
				continue;
			idx = kpt_range_index_find(&ri, rows[i].range);
			if (idx < 0 || !inside_range(rng, &ri, in, idx, first))
				continue;
			t0 = rows[i].start_ns < t0 ? rows[i].start_ns : t0;
			t1 = rows[i].end_ns > t1 ? rows[i].end_ns : t1;
		}
	kpt_kernel_cursor_destroy(cur);
	if (rc < 0)
		goto out;
	if (t0 == UINT64_MAX) {
		rc = kpt_diag_set(d, KPT_E_NOTFOUND, "no kernel inside the NVTX range '%s'", iter_name);
		goto out;
	}
	*t0_ns = t0;
	*t1_ns = t1 > t0 ? t1 : t0 + 1;
	rc = 0;
out:
	free(in);
	kpt_range_index_release(&ri);
	return rc;
}

int kpt_timeline_repeated_range(struct kpt_file *f, const char **name, struct kpt_diag *d)
{
	const struct kpt_range *rng;
	uint32_t proc = KPT_NONE;
	long best = -1;
	size_t nrng;
	int rc;

	*name = NULL;
	if ((rc = kpt_file_load_strings(f, d)) < 0 || (rc = kpt_file_ranges(f, &rng, &nrng, d)) < 0)
		return rc;
	for (size_t i = 0; i < nrng; i++)
		if (rng[i].parent == KPT_NONE && rng[i].kind != KPT_RANGE_MARK && rng[i].process < proc)
			proc = rng[i].process;
	/* O(n^2) over the top-level ranges of one process: a handful. */
	for (size_t i = 0; i < nrng; i++) {
		const struct kpt_range *a = &rng[i];

		if (a->parent != KPT_NONE || a->kind == KPT_RANGE_MARK || a->process != proc ||
		    (best >= 0 && a->start_ns >= rng[best].start_ns))
			continue;
		for (size_t j = 0; j < nrng; j++) {
			const struct kpt_range *b = &rng[j];

			if (j != i && b->name == a->name && b->parent == KPT_NONE &&
			    b->kind != KPT_RANGE_MARK && b->process == proc) {
				best = (long)i;
				break;
			}
		}
	}
	if (best < 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "no top-level NVTX range repeats in '%s'", kpt_file_path(f));
	*name = kpt_file_string(f, rng[best].name);
	return *name && **name ? 0 : kpt_diag_set(d, KPT_E_NOTFOUND, "the repeated NVTX range has no name");
}

int kpt_timeline_write_png(struct kpt_file *f, const struct kpt_timeline_opts *o,
			   const char *path, struct kpt_diag *d)
{
	struct kpt_timeline *tl;
	struct kpt_canvas c = { 0 };
	int rc = kpt_timeline_from_file(f, o, &tl, d);

	if (rc < 0)
		return rc;
	rc = kpt_timeline_draw(tl, &c, d);
	if (rc == 0)
		rc = kpt_canvas_write_png(&c, path, d);
	kpt_canvas_release(&c);
	kpt_timeline_destroy(tl);
	return rc;
}
