/* kpt_model.h - the run model: what one recording holds, as rows in memory.
 *
 * These structs are the in-memory view used by the writer (collectors, merge,
 * synthetic test data) and by readers (report, export, diff, view). They are
 * NOT the on-disk layout: docs/format.md describes that (columnar, varint,
 * zstd). Every string is a uint32_t id into the file's string table;
 * KPT_NONE means "absent".
 *
 * A recording holds one or more processes. A process belongs to a run
 * (`run`): `kptprof record --runs M` starts M independent processes, numbered
 * 0..M-1; a process forked by a run's process has the same run number.
 * Timestamps are nanoseconds on CUPTI's clock, comparable across processes of
 * one machine.
 */
#ifndef KPT_MODEL_H
#define KPT_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KPT_NONE UINT32_MAX

/* One key/value pair of the meta section. Well-known keys: "tool_version",
 * "command", "host", "time" (ISO 8601 UTC), "commit", "suite", "workload",
 * "iterations", "warmup", "runs", "label.*"; "imported_from", "import.files",
 * "import.lacks" in recordings made by `kptprof import` (docs/import.md).
 * Values are UTF-8 text. */
struct kpt_meta_kv {
	const char *key;
	const char *value;
};

struct kpt_device {
	uint32_t index;             /* device index within this file, 0.. */
	const char *name;           /* "NVIDIA H100 80GB HBM3" */
	const char *slug;           /* "nvidia-h100-80gb-hbm3" (kpt_slug()) */
	const char *uuid;           /* "GPU-xxxxxxxx-...", "" when unknown */
	uint32_t cuda_ordinal;      /* CUDA device ordinal in the recording process */
	uint32_t sm_count;
	uint32_t cc_major, cc_minor;
	uint64_t mem_bytes;
	uint64_t l2_bytes;
	uint32_t sm_clock_max_mhz;
	uint32_t mem_clock_max_mhz;
	uint32_t mem_bus_width_bits;
	uint32_t driver_version;    /* cuDriverGetVersion(), e.g. 13000 */
	uint32_t runtime_version;   /* cudaRuntimeGetVersion() of the target, 0 unknown */
	const char *driver_string;  /* NVML driver version "580.159.04", "" unknown */
	double copy_gbps;           /* measured device copy ceiling, 0 unknown */
	double bf16_tflops;         /* measured bf16 tensor ceiling, 0 unknown */
};

struct kpt_process {
	uint32_t index;             /* process index within this file, 0.. */
	uint32_t run;               /* run number, 0..M-1 */
	uint32_t pid, ppid;
	uint32_t rank;              /* RANK / OMPI_COMM_WORLD_RANK / SLURM_PROCID, KPT_NONE */
	int32_t exit_status;        /* as from waitpid decoding; INT32_MIN unknown */
	uint64_t start_ns, end_ns;  /* collector lifetime in this process */
	uint32_t command;           /* string id: the command line */
	uint64_t dropped;           /* CUPTI records dropped in this process (sum of drops) */
};

/* CUPTI dropped records, per process and stream (stream KPT_NONE: unknown). */
struct kpt_drop {
	uint32_t process, device, stream;
	uint64_t count;
};

/* One kernel execution (CUPTI CONCURRENT_KERNEL, or a graph kernel node). */
struct kpt_kernel {
	uint64_t start_ns, end_ns;
	uint32_t name;              /* string id of the MANGLED name */
	uint32_t device, stream, process;
	uint32_t grid[3], block[3];
	uint32_t registers;         /* per thread */
	uint32_t shared_static;     /* bytes per block */
	uint32_t shared_dynamic;    /* bytes per block */
	uint32_t correlation;       /* CUPTI correlation id */
	uint32_t range;             /* id of the innermost NVTX range open on the
	                               launching thread, KPT_NONE when none */
	uint32_t graph;             /* CUDA graph id, KPT_NONE when not a graph node */
	uint64_t graph_node;        /* graph node id, 0 when none */
};

enum kpt_memop_kind {
	KPT_MEMCPY_HTOD = 1,
	KPT_MEMCPY_DTOH = 2,
	KPT_MEMCPY_DTOD = 3,
	KPT_MEMCPY_HTOH = 4,
	KPT_MEMCPY_PTOP = 5,
	KPT_MEMCPY_OTHER = 6,
	KPT_MEMSET = 7,
};

enum kpt_mem_kind {
	KPT_MEM_UNKNOWN = 0,
	KPT_MEM_PAGEABLE = 1,
	KPT_MEM_PINNED = 2,
	KPT_MEM_DEVICE = 3,
	KPT_MEM_ARRAY = 4,
	KPT_MEM_MANAGED = 5,
};

struct kpt_memop {
	uint64_t start_ns, end_ns;
	uint64_t bytes;
	uint32_t kind;              /* enum kpt_memop_kind */
	uint32_t src_mem, dst_mem;  /* enum kpt_mem_kind; memset: dst only */
	uint32_t value;             /* memset value */
	uint32_t device, stream, process;
	uint32_t correlation;
	uint32_t range;             /* innermost NVTX range id or KPT_NONE */
	uint32_t graph;
	uint64_t graph_node;
};

/* NVTX ranges (push/pop and start/end) and marks (start == end). Range ids
 * are unique within a file; parent is the enclosing range on the same thread
 * (KPT_NONE at top level). */
enum kpt_range_kind {
	KPT_RANGE_PUSHPOP = 1,
	KPT_RANGE_STARTEND = 2,
	KPT_RANGE_MARK = 3,
};

struct kpt_range {
	uint32_t id;
	uint32_t parent;
	uint32_t name;              /* string id */
	uint32_t domain;            /* string id of the NVTX domain, KPT_NONE default */
	uint32_t kind;              /* enum kpt_range_kind */
	uint32_t process;
	uint64_t thread;            /* OS thread id */
	uint64_t start_ns, end_ns;  /* end_ns 0: never closed */
};

/* Host-side activity: synchronization and (with --api) runtime/driver calls. */
enum kpt_event_kind {
	KPT_EVENT_SYNC = 1,         /* sub: CUpti_ActivitySynchronizationType */
	KPT_EVENT_RUNTIME = 2,      /* sub: runtime callback id */
	KPT_EVENT_DRIVER = 3,       /* sub: driver callback id */
};

struct kpt_event {
	uint64_t start_ns, end_ns;
	uint32_t kind;              /* enum kpt_event_kind */
	uint32_t sub;
	uint32_t name;              /* string id (API function name), KPT_NONE */
	uint32_t process;
	uint32_t device, stream;    /* KPT_NONE when not applicable */
	uint32_t correlation;
	uint64_t thread;
};

/* NVML sample. throttle is NVML's clocks-event-reasons bit mask. */
struct kpt_env_sample {
	uint64_t t_ns;
	uint32_t device, process;
	uint32_t sm_mhz, mem_mhz;
	uint32_t temp_c;
	uint32_t power_mw;
	uint64_t throttle;
};

/* One hardware counter value for one profiled kernel (range profiler, auto
 * range, kernel replay). ordinal: the n-th kernel profiled in that process. */
struct kpt_counter {
	uint32_t process, device;
	uint32_t kernel_name;       /* string id (mangled) */
	uint32_t ordinal;
	uint32_t metric;            /* string id, e.g. "dram__bytes_read.sum" */
	double value;
};

/* Writes the GPU slug of name into out: lower case, runs of
 * non-alphanumerics as one '-', no leading or trailing '-'.
 * Returns the slug's length (as snprintf: may exceed cap, then truncated). */
int kpt_slug(const char *name, char *out, int cap);

/* The "any thread" rule (summary's any_thread, diff's --ranges
 * any-thread): a kernel launched outside every range of its own thread
 * counts for the innermost range open on any thread of its process.
 * kpt_open_ranges_init indexes ranges[0..nranges) (marks left out) by
 * process and start: O(n log n); ranges must outlive o; 0 or KPT_E_NOMEM.
 * kpt_open_ranges_at: of the ranges of process started at or before t and
 * not ended by t (end_ns 0: never ended), the one that started last, as an
 * index into ranges; KPT_NONE when none. O(log n), looking back over at
 * most 4096 ranges. kpt_open_ranges_release frees the index (a zeroed or
 * released o too). */
struct kpt_open_ranges {
	const struct kpt_range *ranges; /* not owned */
	uint32_t *idx;                  /* NULL until init */
	size_t n;
};

int kpt_open_ranges_init(struct kpt_open_ranges *o, const struct kpt_range *ranges, size_t nranges);
uint32_t kpt_open_ranges_at(const struct kpt_open_ranges *o, uint32_t process, uint64_t t);
void kpt_open_ranges_release(struct kpt_open_ranges *o);

#ifdef __cplusplus
}
#endif

#endif
