/* kpt_timeline.h - a timeline picture of a recording, drawn with libpng.
 *
 * One lane per (device, stream) with the kernels as bars coloured by family,
 * memcpy/memset as a thin strip under each lane, NVTX ranges in rows above
 * the lanes (one row per nesting level), a time axis with units and a
 * legend.
 *
 * Aggregation: the picture is built per pixel column, never per kernel.
 * Each lane keeps, for every column, the busy time of the kernels that
 * overlap it (split exactly at column edges) and that time per colour slot;
 * a column's bar height is its busy fraction (at least 2 px when it has any
 * kernel time) and its colour the slot with the most time. Memops outside
 * the window are counted per lane and marked by a triangle at the lane's
 * left (before) or right (after) end, with a note under the legend. Adding a kernel costs O(1 + columns it spans); memory is
 * O(lanes x columns), whatever the number of kernels, so 10 million kernels
 * cost one pass over the file's kernel chunks (two when the time window is
 * not given: the first finds it).
 *
 * Families: a kernel's family is its base name, i.e. the demangled name
 * without return type, namespaces, template arguments and parameters
 * ("void kpt::mem::copy<float4>(float4 const*, ...)" -> "copy"). A family's
 * colour is a stable hash of that text into a palette of KPT_TL_PALETTE
 * colours, so the same kernel has the same colour in every report (two
 * families may share a colour; the legend lists the largest).
 */
#ifndef KPT_TIMELINE_H
#define KPT_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_canvas.h"
#include "kpt_err.h"
#include "kpt_format.h"

#define KPT_TL_PALETTE 12
#define KPT_TL_MEMKINDS 4       /* HtoD, DtoH, device/peer/other copy, memset */

struct kpt_timeline_opts {
	int width;                  /* image width in pixels; 0: 1600; 400..16384 */
	uint64_t t0_ns, t1_ns;      /* time window; t1_ns 0: first kernel start to
	                               last kernel end (the memops' span when there
	                               are no kernels; costs kpt_timeline_from_file
	                               a first pass) */
	const char *const *prefer;  /* with a window: families to colour first, */
	size_t nprefer;             /* largest first (kpt_timeline_prefer_families) */
	int range_rows;             /* NVTX nesting levels drawn; 0: 3; < 0: none */
	int max_lanes;              /* lanes drawn; 0: 48 (more are counted and named) */
	const char *title;          /* top line; NULL: none */
};

/* Resolves a string id to a kernel or range name (any text, demangled or
 * not); NULL or "" for unknown ids. */
typedef const char *(*kpt_timeline_name_fn)(void *ctx, uint32_t id);

struct kpt_timeline;

struct kpt_timeline_lane {
	uint32_t device, stream;
	uint64_t kernels;           /* kernels that overlap the window */
	uint64_t memops;
	double busy_ns;             /* kernel time inside the window */
};

struct kpt_timeline_family {
	const char *name;           /* family text (owned by the timeline) */
	kpt_rgb color;
	double total_ns;            /* kernel time inside the window */
	uint64_t kernels;
};

/* Creates an empty timeline over [t0_ns, t1_ns) (t1_ns > t0_ns required:
 * KPT_E_INVAL). names/ctx resolve string ids of kernels and ranges; names
 * may be NULL (every family is then "?"). */
int kpt_timeline_create(const struct kpt_timeline_opts *o, uint64_t t0_ns, uint64_t t1_ns,
			kpt_timeline_name_fn names, void *ctx,
			struct kpt_timeline **out, struct kpt_diag *d);
void kpt_timeline_destroy(struct kpt_timeline *tl); /* accepts NULL */

/* Gives the first n (at most KPT_TL_PALETTE) families distinct colours, in
 * this order of priority (each takes its hash colour when still free).
 * Only before any row is added (KPT_E_INVAL otherwise). kpt_timeline_from_file
 * does this with the families that have the most time. */
int kpt_timeline_prefer_families(struct kpt_timeline *tl, const char *const *families, size_t n,
				 struct kpt_diag *d);

/* Adds rows; parts outside the window are cut off, rows with end < start
 * count as zero-length. Any order. */
int kpt_timeline_add_kernels(struct kpt_timeline *tl, const struct kpt_kernel *rows,
			     size_t n, struct kpt_diag *d);
int kpt_timeline_add_memops(struct kpt_timeline *tl, const struct kpt_memop *rows,
			    size_t n, struct kpt_diag *d);
/* All ranges of the recording at once (nesting levels come from the parent
 * links). Marks and ranges deeper than range_rows are counted, not drawn;
 * a range never closed (end_ns 0) lasts to the end of the window. */
int kpt_timeline_add_ranges(struct kpt_timeline *tl, const struct kpt_range *rows,
			    size_t n, struct kpt_diag *d);

/* Geometry and results, for tests and for the HTML legend. */
int kpt_timeline_columns(const struct kpt_timeline *tl);
double kpt_timeline_column_ns(const struct kpt_timeline *tl);
size_t kpt_timeline_lane_count(const struct kpt_timeline *tl);
/* Lanes ordered by device then stream. i < lane_count. */
const struct kpt_timeline_lane *kpt_timeline_lane_at(const struct kpt_timeline *tl, size_t i);
/* Busy fraction 0..1 of column col of lane i (kernels only). */
double kpt_timeline_busy(const struct kpt_timeline *tl, size_t lane, int col);
/* Colour of the family with the most time in that column; 0 when idle. */
kpt_rgb kpt_timeline_column_color(const struct kpt_timeline *tl, size_t lane, int col);
/* Families ordered by total time, largest first. */
size_t kpt_timeline_family_count(const struct kpt_timeline *tl);
const struct kpt_timeline_family *kpt_timeline_family_at(const struct kpt_timeline *tl, size_t i);

/* Family text of a kernel name (see above) into out (cap bytes, cut to fit).
 * Returns the full length (as snprintf). */
int kpt_kernel_family(const char *name, char *out, int cap);
/* Palette colour of a family text: stable across runs and builds. */
kpt_rgb kpt_family_color(const char *family);

/* Draws the picture. The canvas is initialised here (release it after). */
int kpt_timeline_draw(struct kpt_timeline *tl, struct kpt_canvas *c, struct kpt_diag *d);

/* Everything for one file: window (first pass over the kernels when
 * o->t1_ns is 0), kernels, memops, ranges; names demangled. On success
 * *out is the filled timeline (destroy it). */
int kpt_timeline_from_file(struct kpt_file *f, const struct kpt_timeline_opts *o,
			   struct kpt_timeline **out, struct kpt_diag *d);
/* The GPU time span of one iteration, for a zoomed timeline: among the
 * NVTX ranges named iter_name ("kpt:iter") of the lowest-numbered process
 * that has them, the second by start time (the first may carry warm-up
 * effects), else the only one; the span covers every kernel launched inside
 * it (NVTX ranges are host time, kernels run later). *ordinal is the chosen
 * range's position (0-based). KPT_E_NOTFOUND when there is no such range or
 * no kernel inside. One pass over the kernels. */
int kpt_timeline_iteration_window(struct kpt_file *f, const char *iter_name, uint64_t *t0_ns,
				  uint64_t *t1_ns, uint32_t *ordinal, struct kpt_diag *d);

/* For a zoomed timeline of a program without kpt:iter ranges: the name of
 * the top-level NVTX range (no parent, not a mark) of the lowest-numbered
 * process that occurs more than once there, the one whose first occurrence
 * starts first (a training loop's "step"). *name is owned by f. Pass it to
 * kpt_timeline_iteration_window. KPT_E_NOTFOUND when none repeats.
 * O(top-level ranges^2). */
int kpt_timeline_repeated_range(struct kpt_file *f, const char **name, struct kpt_diag *d);

/* kpt_timeline_from_file + draw + PNG to path. */
int kpt_timeline_write_png(struct kpt_file *f, const struct kpt_timeline_opts *o,
			   const char *path, struct kpt_diag *d);

#endif
