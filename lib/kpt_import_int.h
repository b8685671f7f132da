/* kpt_import_int.h - what the importers (lib/kpt_import_*.c) share with
 * the driver in lib/kpt_import.c. Not a public interface. */
#ifndef KPT_IMPORT_INT_H
#define KPT_IMPORT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_format.h"
#include "kpt_grow.h"
#include "kpt_import.h"

/* What an imported file did not hold; each bit is one phrase of the meta
 * key import.lacks (table in kpt_import.c). */
enum kpt_import_lack {
	KPT_LACK_DEVICE_PROPS = 1u << 0,   /* a kernel's GPU has no properties */
	KPT_LACK_LAUNCHES = 1u << 1,       /* kernels without their launch event */
	KPT_LACK_SHARED_SPLIT = 1u << 2,   /* static + dynamic shared memory as one sum */
	KPT_LACK_MANGLED = 1u << 3,        /* only demangled kernel names */
	KPT_LACK_REGISTERS = 1u << 4,      /* kernels without registers per thread */
	KPT_LACK_HOST_PID = 1u << 5,       /* no host process id */
};

struct kpt_import_dev {
	const char *name;           /* owned by the context (strdup) */
	uint32_t ordinal, sm_count;
	uint64_t mem_bytes;
	uint32_t index;
};

/* What a trace says about the machine it was made on (NULL / 0: it does
 * not say). Kineto writes the GPU's name and the CUDA driver, runtime and
 * CUPTI versions; a host name, GPU UUID or PCI bus only when a wrapper
 * added them. */
struct kpt_import_facts {
	const char *host;           /* top-level "hostname" */
	const char *gpu_name;       /* the first GPU's */
	const char *gpu_uuid;       /* deviceProperties[].uuid */
	const char *pci_bus_id;     /* "0000:18:00.0" from pciDomainID, pciBusID, pciDeviceID */
	uint32_t driver_version, runtime_version, cupti_version;
};

/* One import: the writer and the numbering all files share. */
struct kpt_import_ctx {
	struct kpt_writer *w;
	const char *path;           /* the file being imported, for messages */
	const unsigned char *data;  /* its bytes (mapped), len bytes */
	size_t len;
	uint32_t run;               /* its first run number */
	uint32_t next_run;          /* the next file's first run: run + the runs this file gave */
	int steps_as_runs;          /* kpt_import_write_processes cuts runs by step */
	uint32_t next_process;      /* next process index of the recording */
	uint32_t next_range;        /* next range id of the recording */
	struct kpt_import_dev *devs;
	size_t ndevs, capdevs;
	unsigned lacks;             /* enum kpt_import_lack bits, all files */
	uint64_t first_ns;          /* earliest timestamp seen, UINT64_MAX none */
	/* the machine facts of the first file (owned strings); facts_differ:
	 * a later file said otherwise (then no meta import.machine) */
	struct kpt_import_facts facts;
	int facts_seen, facts_differ;
	struct kpt_import_stats st;
};

/* An importer: a row of the table in kpt_import.c. */
struct kpt_importer {
	const char *name;           /* meta imported_from: "kineto", "nsys" */
	const char *what;           /* for messages */
	/* 1 when the first n bytes (n <= 64) look like this format */
	int (*sniff)(const unsigned char *head, size_t n);
	/* Reads c->path (or c->data) and writes its records through c->w. */
	int (*import)(struct kpt_import_ctx *c, struct kpt_diag *d);
	const char *lacks;          /* what the format never holds */
};

int kpt_import_kineto(struct kpt_import_ctx *c, struct kpt_diag *d);

/* Inflates the gzip file gz[0..gzlen) of path (several members: one after
 * the other, as gunzip does) into an unlinked temporary file in $TMPDIR
 * (else /tmp) and maps it read-only into *data, *len (the caller munmap()s
 * it): memory stays the page cache's, as for a plain trace. More than max
 * bytes of output (a gzip bomb) is refused (KPT_E_FORMAT) once max bytes
 * are written; bad or truncated data: KPT_E_FORMAT; no temporary file:
 * KPT_E_IO; a build without zlib: KPT_E_UNSUPPORTED. */
int kpt_import_gunzip(const char *path, const unsigned char *gz, size_t gzlen, uint64_t max,
		      const unsigned char **data, size_t *len, struct kpt_diag *d);
int kpt_import_nsys(struct kpt_import_ctx *c, struct kpt_diag *d);

/* The recording's device index for a GPU, declaring it on first use: the
 * same name, CUDA ordinal, SM count and memory in two files are one GPU.
 * dev->index and dev->slug are filled here; name NULL means unknown. */
int kpt_import_device(struct kpt_import_ctx *c, struct kpt_device *dev, uint32_t *index,
		      struct kpt_diag *d);

/* Notes one file's machine facts (kpt_import_facts): the first file's are
 * kept (copied) for the meta (host, import.gpu_uuid, import.pci_bus_id,
 * import.cuda_driver_version, import.cuda_runtime_version,
 * import.cupti_version and import.machine, the identity that diff
 * compares: only when a host name or GPU UUID is known), later files' are
 * compared with them. 0, or KPT_E_NOMEM. */
int kpt_import_note_facts(struct kpt_import_ctx *c, const struct kpt_import_facts *f, struct kpt_diag *d);

/* The name a range gets: "kpt:iter" for a step (torch.profiler's
 * "ProfilerStep#N"), else name itself. *is_step says which. */
const char *kpt_import_range_name(const char *name, int *is_step);

/* Host-side spans (NVTX-like ranges) of one file and the launches of its
 * kernels, and the rule that links the two (docs/import.md "Ranges"):
 * a kernel's range is the innermost range open on its launching thread at
 * the launch; when that thread has none, the step (kpt:iter) of its process
 * open at the launch; else none. */
struct kpt_import_span {
	uint64_t thread;            /* thread id (nsys: globalTid) */
	int64_t start, end;         /* ns */
	uint32_t process;           /* process index in the recording */
	uint32_t name, domain;      /* string ids (domain KPT_NONE: default) */
	uint32_t kind;              /* enum kpt_range_kind */
	int is_step;
	uint32_t id, parent;        /* filled by kpt_import_spans_write */
};

struct kpt_import_launch {
	uint32_t process;
	uint32_t correlation;
	uint64_t thread;
	int64_t ts;
};

/* The rows one file gives, kept until the file is read: kernels and memops
 * (device, process filled by the importer; range by kpt_import_rows_write),
 * spans and launches. */
struct kpt_import_rows {
	struct kpt_kernel *k;
	size_t nk, capk;
	struct kpt_memop *m;
	size_t nm, capm;
	struct kpt_import_span *spans;
	size_t ns, caps;
	struct kpt_import_launch *launches;
	size_t nl, capl;
};

/* Append one zeroed row (range and graph KPT_NONE; a span's domain
 * KPT_NONE) and return it; NULL with d set when out of memory. */
struct kpt_kernel *kpt_import_add_kernel(struct kpt_import_ctx *c, struct kpt_import_rows *r,
					 struct kpt_diag *d);
struct kpt_memop *kpt_import_add_memop(struct kpt_import_ctx *c, struct kpt_import_rows *r,
				       struct kpt_diag *d);
struct kpt_import_span *kpt_import_add_span(struct kpt_import_ctx *c, struct kpt_import_rows *r,
					    struct kpt_diag *d);
int kpt_import_add_launch(struct kpt_import_ctx *c, struct kpt_import_rows *r,
			  const struct kpt_import_launch *l, struct kpt_diag *d);

/* Writes the process rows of one file's rows: proto (index, pid, rank,
 * start, end filled; run ignored) as run c->run, or, with c->steps_as_runs
 * and 2 or more steps (kpt:iter spans) of proto's process, one process per
 * step (the first keeps proto's index, the others take c->next_process)
 * of runs c->run, c->run + 1, ...: spans and launches go to the step open
 * at their start (before the first step: the first; between steps: the
 * one before), kernels and memops to the step of their launch (no launch:
 * of their start). Sets c->next_run. Call before kpt_import_rows_write,
 * with absolute times. O((rows + spans) log steps). */
int kpt_import_write_processes(struct kpt_import_ctx *c, struct kpt_import_rows *r,
			       const struct kpt_process *proto, struct kpt_diag *d);

/* Writes the spans as ranges (sorted, nested per thread: the parent is the
 * enclosing push/pop span of the same thread; ids from c->next_range),
 * links every kernel and memop to its range by the rule above, writes them
 * and counts them in c->st. O((spans + launches + rows) log). */
int kpt_import_rows_write(struct kpt_import_ctx *c, struct kpt_import_rows *r, struct kpt_diag *d);
void kpt_import_rows_release(struct kpt_import_rows *r);

#endif
