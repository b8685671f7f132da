/* kpt_import.h - traces other tools wrote, as a .kpt recording.
 *
 * Formats (one file per format, lib/kpt_import_<format>.c, rows of one
 * table in kpt_import.c):
 *   kineto  torch.profiler / Kineto Chrome trace JSON (plain, or gzip: .json.gz)
 *   nsys    Nsight Systems SQLite export (`nsys export --type sqlite`);
 *           needs a build with SQLite (KPT_HAVE_SQLITE), else
 *           KPT_E_UNSUPPORTED
 * The format of each file is found from its first bytes; a gzip file
 * (.json.gz, what torch.profiler's tensorboard_trace_handler writes) is
 * decompressed first (a build with zlib, KPT_HAVE_ZLIB), bounded by
 * KPT_IMPORT_MAX_BYTES. Runs (struct kpt_import_opts): every input file
 * becomes the processes of one run (file i is run i, so `import A B -o C`
 * gives a recording with two runs that `diff` can use as a session), or,
 * for Kineto traces, every step (ProfilerStep#N) of a file one run.
 * docs/import.md lists the fields read and what each format lacks; the
 * recording's meta says it too (imported_from, import.lacks).
 */
#ifndef KPT_IMPORT_H
#define KPT_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"

/* Larger input files are refused (the trace is mapped, not read), and so is
 * more decompressed output of a gzip file. */
#define KPT_IMPORT_MAX_BYTES ((uint64_t)16 << 30)

/* How a recording's runs are cut (kpt_import_opts.runs). */
enum kpt_import_runs {
	KPT_IMPORT_RUNS_AUTO = 0,   /* one file: its steps (2 or more); several: the files */
	KPT_IMPORT_RUNS_FILES,      /* file i is run i */
	KPT_IMPORT_RUNS_STEPS,      /* each step of each Kineto file is a run (a file without steps: one) */
};

struct kpt_import_opts {
	enum kpt_import_runs runs;
};

struct kpt_import_stats {
	uint32_t files;
	uint32_t runs;              /* runs of the recording */
	uint32_t devices;
	uint64_t kernels, memops;
	uint64_t ranges;            /* NVTX-like ranges, iterations included */
	uint64_t iterations;        /* ranges that became kpt:iter */
	uint64_t linked;            /* kernels given their launching thread's innermost range */
	uint64_t by_step;           /* kernels given only the step their launch fell in */
	uint64_t no_launch;         /* kernels whose launch the trace does not hold */
	const char *format;         /* the importer's name ("kineto", "nsys") */
};

/* Imports paths[0..n) (n >= 1, all of one format) into a new recording at
 * out, which appears only complete (the writer's temporary file + rename).
 * o may be NULL (the defaults). st (may be NULL) gets the counts. Errors, each one line naming the file:
 * KPT_E_NOTFOUND/KPT_E_IO (cannot open or map), KPT_E_FORMAT (not a known
 * format, bad JSON, a required field missing or of the wrong type, a bound
 * exceeded, bad or truncated gzip data), KPT_E_UNSUPPORTED (gzip input in a
 * build without zlib, a gzip-compressed SQLite export; nsys without SQLite),
 * KPT_E_INVAL (formats mixed), KPT_E_NOMEM; nothing is left at out. */
int kpt_import(const char *const *paths, size_t n, const char *out, const struct kpt_import_opts *o,
	       struct kpt_import_stats *st, struct kpt_diag *d);

#endif
