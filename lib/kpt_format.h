/* kpt_format.h - writing and reading .kpt files.
 *
 * The on-disk layout is specified in docs/format.md. In short: a fixed
 * header, sections each compressed on its own with zstd, and a table of
 * contents (TOC) at the end that the header points to. Kernels are stored in
 * chunks of at most KPT_CHUNK_ROWS rows, columnar, so a reader can load the
 * metadata without touching kernels and can stream kernels chunk by chunk.
 */
#ifndef KPT_FORMAT_H
#define KPT_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"
#include "kpt_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KPT_FORMAT_MAJOR 1
#define KPT_FORMAT_MINOR 0
#define KPT_CHUNK_ROWS 65536

/* ---- writer ------------------------------------------------------------ */

/* Streaming writer. Memory is bounded by one chunk per record kind plus the
 * string table: 10 million kernels need no 10 million structs.
 * Not thread-safe: one thread at a time (collectors serialise with a lock).
 * The file appears at `path` only after kpt_writer_commit() succeeds: data is
 * written to a temporary file beside it and renamed, so an interrupted or
 * failed write leaves nothing half-written under `path`. */
struct kpt_writer;

struct kpt_writer_opts {
	int zstd_level;             /* 0: default (3) */
};

int kpt_writer_create(const char *path, const struct kpt_writer_opts *opts,
		      struct kpt_writer **out, struct kpt_diag *d);
/* Destroys; without a prior successful commit removes the temporary file.
 * Accepts NULL. */
void kpt_writer_destroy(struct kpt_writer *w);

/* Interns s (len bytes, need not be NUL-terminated; embedded NULs are not
 * allowed) and stores its id in *id. Same bytes, same id. O(len) amortised. */
int kpt_writer_intern(struct kpt_writer *w, const char *s, size_t len,
		      uint32_t *id, struct kpt_diag *d);
int kpt_writer_intern_cstr(struct kpt_writer *w, const char *s,
			   uint32_t *id, struct kpt_diag *d);

/* Small tables: kept in memory until commit. A later meta value for the same
 * key replaces the earlier one. Device/process `index` fields must count
 * 0,1,2... in call order (the writer checks). */
int kpt_writer_meta(struct kpt_writer *w, const char *key, const char *value,
		    struct kpt_diag *d);
int kpt_writer_device(struct kpt_writer *w, const struct kpt_device *dev,
		      struct kpt_diag *d);
int kpt_writer_process(struct kpt_writer *w, const struct kpt_process *p,
		       struct kpt_diag *d);
int kpt_writer_drop(struct kpt_writer *w, const struct kpt_drop *drop,
		    struct kpt_diag *d);

/* Bulk records: buffered and flushed as compressed chunks. Rows need not be
 * sorted (sorted start times compress best). Rows referring to a string id
 * the writer has not handed out are rejected at commit (KPT_E_INVAL), and so
 * are device and process indices that no kpt_writer_device/_process call
 * declared by commit time (KPT_NONE is allowed only where kpt_model.h says
 * so: event device, drop device). Readers can therefore index the devices
 * and processes arrays with any row's device/process field. */
int kpt_writer_kernels(struct kpt_writer *w, const struct kpt_kernel *rows,
		       size_t n, struct kpt_diag *d);
int kpt_writer_memops(struct kpt_writer *w, const struct kpt_memop *rows,
		      size_t n, struct kpt_diag *d);
int kpt_writer_ranges(struct kpt_writer *w, const struct kpt_range *rows,
		      size_t n, struct kpt_diag *d);
int kpt_writer_events(struct kpt_writer *w, const struct kpt_event *rows,
		      size_t n, struct kpt_diag *d);
int kpt_writer_env(struct kpt_writer *w, const struct kpt_env_sample *rows,
		   size_t n, struct kpt_diag *d);
int kpt_writer_counters(struct kpt_writer *w, const struct kpt_counter *rows,
			size_t n, struct kpt_diag *d);

/* Flushes, writes strings, small tables and the TOC, fsyncs and renames the
 * temporary file to the final path. After commit only destroy is allowed. */
int kpt_writer_commit(struct kpt_writer *w, struct kpt_diag *d);

/* ---- reader ------------------------------------------------------------ */

/* An open file. kpt_file_open validates the header and TOC (sizes and
 * offsets within the file, known-major version) and reads nothing else.
 * Sections are loaded and validated on first use and owned by the file until
 * kpt_file_close (one arena; pointers stay valid until close). */
struct kpt_file;

struct kpt_counts {
	uint64_t kernels, memops, ranges, events, env_samples, counters;
	uint32_t devices, processes, runs; /* runs: distinct process.run values */
	uint64_t dropped_records;          /* sum over the drops table */
};

/* Errors (each a one-line diag "cannot read 'PATH': <problem>"):
 * KPT_E_NOTFOUND no such file; KPT_E_IO cannot open/read, not a regular
 * file; KPT_E_FORMAT empty, truncated, bad magic, bad header/TOC, or (from
 * the loaders) a corrupt section; KPT_E_VERSION newer major version (hint:
 * upgrade); KPT_E_NOMEM. *out is NULL on failure.
 * Not thread-safe: one thread per kpt_file (cursors included). */
int kpt_file_open(const char *path, struct kpt_file **out, struct kpt_diag *d);
/* As kpt_file_open for a file image in memory (len bytes at data, which the
 * caller keeps alive and unchanged until close). name is used in messages.
 * For tests and fuzzing. */
int kpt_file_open_mem(const void *data, size_t len, const char *name,
		      struct kpt_file **out, struct kpt_diag *d);
void kpt_file_close(struct kpt_file *f); /* accepts NULL */

const char *kpt_file_path(const struct kpt_file *f);
void kpt_file_version(const struct kpt_file *f, uint32_t *major, uint32_t *minor);
/* Counts come from the TOC and small tables; no kernel chunk is read. */
int kpt_file_counts(struct kpt_file *f, struct kpt_counts *c, struct kpt_diag *d);

/* String table. kpt_file_string returns "" for KPT_NONE and NULL for an id
 * out of range (corrupt data); load first. */
int kpt_file_load_strings(struct kpt_file *f, struct kpt_diag *d);
const char *kpt_file_string(const struct kpt_file *f, uint32_t id);
uint32_t kpt_file_string_count(const struct kpt_file *f);

/* Small tables, whole. The arrays are owned by f. Strings inside (meta,
 * device names) are resolved pointers, valid until close. */
int kpt_file_meta(struct kpt_file *f, const struct kpt_meta_kv **kv, size_t *n,
		  struct kpt_diag *d);
/* Value of a meta key or NULL; loads meta on demand (errors -> NULL). */
const char *kpt_file_meta_get(struct kpt_file *f, const char *key);
/* Meta "settle_us", the idle gap before each timed iteration of a suite
 * recording (record --settle-us): 0 when absent (recorded without one), -1
 * when it is not a whole number of 0 to 1000000 microseconds. */
long kpt_file_settle_us(struct kpt_file *f);
/* Meta KEY as a whole, finite number > 0 (the calibration probes,
 * calibration.*); 0 for anything else: absent, empty, text after the
 * number, "nan", "inf", <= 0 (the file is untrusted). */
double kpt_file_meta_positive(struct kpt_file *f, const char *key);
int kpt_file_devices(struct kpt_file *f, const struct kpt_device **dev, size_t *n,
		     struct kpt_diag *d);
int kpt_file_processes(struct kpt_file *f, const struct kpt_process **p, size_t *n,
		       struct kpt_diag *d);
int kpt_file_drops(struct kpt_file *f, const struct kpt_drop **drops, size_t *n,
		   struct kpt_diag *d);
int kpt_file_memops(struct kpt_file *f, const struct kpt_memop **rows, size_t *n,
		    struct kpt_diag *d);
int kpt_file_ranges(struct kpt_file *f, const struct kpt_range **rows, size_t *n,
		    struct kpt_diag *d);
int kpt_file_events(struct kpt_file *f, const struct kpt_event **rows, size_t *n,
		    struct kpt_diag *d);
int kpt_file_env(struct kpt_file *f, const struct kpt_env_sample **rows, size_t *n,
		 struct kpt_diag *d);
int kpt_file_counters(struct kpt_file *f, const struct kpt_counter **rows, size_t *n,
		      struct kpt_diag *d);

/* Kernels, streamed in file order one chunk at a time. The rows array is
 * owned by the cursor and overwritten by the next call. Returns 1 and sets
 * rows and n while there is data, 0 at the end, negative on error. Memory: one
 * decoded chunk (KPT_CHUNK_ROWS rows). Several cursors may be open. Each
 * reports the kernels it decodes to the progress line (kpt_progress.h). */
struct kpt_kernel_cursor;
int kpt_kernel_cursor_create(struct kpt_file *f, struct kpt_kernel_cursor **out,
			     struct kpt_diag *d);
int kpt_kernel_cursor_next(struct kpt_kernel_cursor *c, const struct kpt_kernel **rows,
			   size_t *n, struct kpt_diag *d);
void kpt_kernel_cursor_destroy(struct kpt_kernel_cursor *c);

/* Copies every record of src into w, adding offsets so that several files
 * (one per process) merge into one: processes, devices (deduplicated by
 * UUID), strings and range ids are remapped; `run` is set on every copied
 * process when run != KPT_NONE. Meta of src is copied only when copy_meta. */
int kpt_file_copy_into(struct kpt_file *src, struct kpt_writer *w, uint32_t run,
		       int copy_meta, struct kpt_diag *d);
/* As kpt_file_copy_into, and with root_range: every process of src gets
 * one top-level NVTX range of that name (push/pop, spanning the process's
 * collector lifetime) over all of its ranges, kernels and memops (those
 * with no innermost range get the root itself), so that the kernels of
 * several programs merged into one recording keep apart keys. */
struct kpt_copy_opts {
	uint32_t run;               /* as kpt_file_copy_into's */
	int copy_meta;
	const char *root_range;     /* NULL: none */
};
int kpt_file_copy_into_opts(struct kpt_file *src, struct kpt_writer *w, const struct kpt_copy_opts *o,
			    struct kpt_diag *d);

/* The collector's meta of several files merged into one recording's
 * (`kptprof record` merging its per-process files, `ab` its runs): keys
 * "collector" and "collector.*", "counters.*" (the keys the collector writes
 * per process). Add every file in the order it is copied into the writer
 * (kpt_file_copy_into), then write once, before the caller's own keys.
 * Values combine per key:
 * - counts (collector.nvtx_unmatched_pops, collector.nvtx_closed_by_parent,
 *   collector.windows, collector.prerolls, collector.detached,
 *   collector.detach_failed, collector.kernels_before_window,
 *   collector.kernels_before_window_ns, collector.memops_before_window,
 *   collector.preroll_kernels_dropped,
 *   collector.buffers_grown, collector.api_callbacks_failed,
 *   counters.lost_contexts, counters.graph_launches_skipped,
 *   counters.captured_launches): summed over the files;
 * - flags and maxima (collector.nvtx_payload, collector.forked_child,
 *   collector.detached_after_ns, counters.passes): the largest;
 * - anything else (collector.window, collector.nvml, ...): the value when
 *   every file that has the key agrees, else each value with the merged
 *   process indices that gave it, "V1 (processes 0,2); V2 (process 1)".
 * A count that is not a number is kept as a differing value. Memory
 * O(keys x files); accepts NULL in destroy. */
struct kpt_meta_merge;
int kpt_meta_merge_create(struct kpt_meta_merge **out, struct kpt_diag *d);
int kpt_meta_merge_add(struct kpt_meta_merge *m, struct kpt_file *src, struct kpt_diag *d);
int kpt_meta_merge_write(const struct kpt_meta_merge *m, struct kpt_writer *w, struct kpt_diag *d);
void kpt_meta_merge_destroy(struct kpt_meta_merge *m);

#ifdef __cplusplus
}
#endif

#endif
