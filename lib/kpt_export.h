/* kpt_export.h - a recording in other formats: Chrome Trace Event JSON (for
 * Perfetto and chrome://tracing), CSV and JSON.
 *
 * Every exporter streams the kernels chunk by chunk (kpt_kernel_cursor):
 * memory is one kernel chunk plus the small tables, memops, ranges and a
 * cache of demangled names, whatever the number of kernels. Names are
 * demangled once per distinct name.
 *
 * Chrome trace (KPT_EXPORT_CHROME), what Perfetto shows:
 * - one process track per (recorded process, device) holding one thread
 *   track per stream ("stream 7"), and one process track per recorded
 *   process for its host threads; process_name / thread_name /
 *   process_sort_index metadata events name them;
 * - kernels as complete ("X") slices, category "kernel", args named as
 *   Kineto (PyTorch profiler) names them: "grid", "block", "registers per
 *   thread", "shared memory" (static + dynamic bytes), "stream",
 *   "correlation", "device", plus "nvtx range" (the range path, as
 *   kpt_range_paths gives it);
 * - memcpy/memset slices (categories "gpu_memcpy", "gpu_memset") with
 *   "bytes" and "memory bandwidth (GB/s)";
 * - NVTX ranges as slices (category "nvtx") on their host thread's track,
 *   marks as instant events; ranges never closed are left out;
 * - synchronisation and API events (category "cuda_sync"/"cuda_runtime"/
 *   "cuda_driver") on their host thread, and when there are API events,
 *   flow arrows (category "ac2g", as Kineto) from each launching call to its
 *   kernel or memop;
 * - NVML samples as counter tracks (SM clock, temperature, power) per device.
 * "ts" and "dur" are microseconds with three decimals (exact ns), relative to
 * "baseTimeNanoseconds" (the earliest timestamp in the file): absolute CUPTI
 * times (~1.7e18 ns) would lose the nanoseconds in a double. No
 * "displayTimeUnit": some Perfetto versions took "ns" there as the unit of
 * "ts" itself (google/perfetto#274).
 *
 * CSV (KPT_EXPORT_CSV): RFC 4180, one header line, one row per kernel then
 * per memop; columns in kpt_export.c (csv_columns), names demangled.
 *
 * JSON (KPT_EXPORT_JSON): one object: format_version, meta, devices,
 * processes, counts, then every memop, range, event, env sample and kernel with
 * all its fields (kernel names both as stored and demangled).
 */
#ifndef KPT_EXPORT_H
#define KPT_EXPORT_H

#include <stdio.h>

#include "kpt_err.h"
#include "kpt_format.h"
#include "kpt_json.h"

enum kpt_export_format {
	KPT_EXPORT_CHROME = 0,
	KPT_EXPORT_CSV = 1,
	KPT_EXPORT_JSON = 2,
};

/* "chrome", "csv", "json" -> *fmt. KPT_E_INVAL (diag lists the names) for
 * anything else. */
int kpt_export_format_parse(const char *name, enum kpt_export_format *fmt,
			    struct kpt_diag *d);
const char *kpt_export_format_name(enum kpt_export_format fmt);

/* Writes f in fmt to out (not closed). Errors: reading f, KPT_E_IO when a
 * write fails, KPT_E_NOMEM. On error out holds an incomplete document. */
int kpt_export(struct kpt_file *f, enum kpt_export_format fmt, FILE *out,
	       struct kpt_diag *d);

/* The Chrome trace of the records that overlap [t0_ns, t1_ns] (kernels,
 * memops, ranges, API events, NVML samples); tracks, meta and the time base
 * as for the whole file. A window of a recording too big to view whole. */
int kpt_export_chrome_window(struct kpt_file *f, FILE *out, uint64_t t0_ns, uint64_t t1_ns,
			     struct kpt_diag *d);

/* Writes to path atomically: into a temporary file in the same folder
 * (lib/kpt_outfile.h), flushed and fsynced, then renamed over path. On any
 * error path is left untouched (no half-written file) and the temporary
 * file is removed. The file gets mode 0666 & ~umask. A path that exists and is
 * not a regular file (FIFO, character device) is opened and written in place
 * instead, with no atomicity: a rename would replace the node. */
int kpt_export_to_path(struct kpt_file *f, enum kpt_export_format fmt,
		       const char *path, struct kpt_diag *d);

/* Pieces of the JSON export other writers reuse (kptprof report --format
 * json, the viewer): each writes one value (the caller writes the key). */
/* {"key": "value", ...} from the meta section. */
int kpt_export_json_meta(struct kpt_json *j, struct kpt_file *f, struct kpt_diag *d);
/* [{"index", "name", "slug", "uuid", "sm_count", "compute_capability"
 * ("9.0"), "memory_bytes", "l2_bytes", clocks, "driver_version",
 * "runtime_version", "driver", "copy_gbps", "bf16_tflops"}, ...] */
int kpt_export_json_devices(struct kpt_json *j, struct kpt_file *f, struct kpt_diag *d);
/* {"kernels", "memops", "ranges", "events", "env_samples", "counters",
 * "devices", "processes", "runs", "dropped_records"} */
int kpt_export_json_counts(struct kpt_json *j, struct kpt_file *f, struct kpt_diag *d);

/* Writes s as one CSV field (quoted when it holds ',', '"', CR or LF;
 * quotes doubled; invalid UTF-8 and other controls as U+FFFD): the
 * KPT_TEXT_CSV sink of kpt_text.h. Returns 0 or KPT_E_IO. */
int kpt_csv_field(FILE *out, const char *s);

#endif
