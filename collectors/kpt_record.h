/* kpt_record.h - the recorder as a library: runs a program (or the
 * kpt-workloads runner) under a collector and merges its per-process files
 * into one recording. CUDA-free, linked into kptprof; `record`, `gate` and
 * `ab` call it (cli/ keeps parsing and printing).
 *
 * The collector is a row of kpt_collectors[]: its injection library (found
 * beside kptprof, or through its override variable), the probe that says
 * whether this machine can record, and the environment that loads it into
 * the target. CUPTI (libkptinject.so) is the one row; a rocprofiler-sdk
 * backend is one more row, cli/ untouched.
 *
 * The target gets the collector's variables and the KPT_ENV_* settings of
 * kpt_inject.h and kpt_window.h; each process writes <tmp>/r<run>-p<pid>.kpt
 * and a status file; the temporary folder lives beside the output, so a
 * successful merge is a rename away and a failed one leaves nothing under
 * the output's name. SIGINT and SIGTERM are forwarded to the running target
 * while kpt_record_run runs (the previous handlers are restored after).
 */
#ifndef KPT_RECORD_H
#define KPT_RECORD_H

#include <stddef.h>

#include "kpt_devprobe.h"
#include "kpt_err.h"
#include "kpt_window.h"

/* One collector backend. Arrays are NULL-terminated. */
struct kpt_collector {
	const char *name;                 /* "cupti" */
	const char *library;              /* the injection library's file name, for messages */
	const char *library_env;          /* variable naming the library, overriding the search */
	const char *const *library_rel;   /* where it lives relative to kptprof's folder */
	const char *hint;                 /* when the library is not found */
	/* Whether this machine can record with it; fills the GPU list.
	 * KPT_E_NODEV when it cannot. */
	int (*probe)(struct kpt_gpu_list *l, struct kpt_diag *d);
	const char *const *inject_env;    /* variables set to the library's path in the target */
	const char *const *fixed_env;     /* "NAME=VALUE" set in every target */
};

extern const struct kpt_collector kpt_collectors[];
extern const size_t kpt_ncollectors;

/* The row named name; NULL name: the default (CUPTI). NULL when none. */
const struct kpt_collector *kpt_collector_find(const char *name);

/* The real path of c's library into out: $library_env when set and
 * readable, else the first library_rel beside kptprof. 0, or -1. */
int kpt_collector_library(const struct kpt_collector *c, char *out, size_t cap);

/* The first of rel[] (NULL-terminated) that exists with access mode
 * relative to this program's folder (the real path of /proc/self/exe,
 * less its name), or override when it is not NULL. 0 and the real path in
 * out, or -1. */
int kpt_record_find_beside(const char *override, const char *const *rel, int mode, char *out, size_t cap);

/* This program's folder: the real path of /proc/self/exe less its name. 0, or -1. */
int kpt_record_exe_dir(char *out, size_t cap);

/* What to record. Strings are the caller's and must live through the call. */
struct kpt_record_opts {
	const struct kpt_collector *collector; /* NULL: the default */
	const char *out;            /* the recording to write */
	long runs;                  /* >= 1 */
	char **cmd;                 /* the program, NULL-terminated; NULL: the runner with suite/workloads */
	const char *runner;         /* kpt-workloads' path, NULL not found: runs suites, measures ceilings */
	const char *suite;
	const char *const *workloads;
	int nworkloads;
	long iterations, warmup;    /* -1: the runner's default */
	/* the runner's idle gap before each timed iteration (--settle-us,
	 * meta "settle_us"); -1: none asked (nothing passed, no meta) */
	long settle_us;
	int cold, api;
	const char *kinds;          /* KPT_ACTIVITY_KINDS, NULL: the default (kernel for a program) */
	const char *win[KPT_WINDOW_SETTINGS]; /* the window's settings (kpt_window.h); NULL each */
	const char *window;         /* the checked window's description (meta "window"), NULL none */
	/* the counters pass: counters NULL off; counters_set the set as asked
	 * (meta counters.set), counters_metrics the metric list (KPT_COUNTERS) */
	const char *counters_set, *counters_metrics;
	int skip_gpu_check;         /* tests of the launcher on machines without a GPU */
	/* the GPUs the caller already probed (gate): no second probe; NULL: probe */
	const struct kpt_gpu_list *gpus;
	/* the target's stdout and stderr, appended to this file (the
	 * caller's own stay untouched); NULL: inherited */
	const char *child_log;
	int no_calibrate;           /* no ceilings */
};

enum kpt_record_note_kind { KPT_NOTE_INFO, KPT_NOTE_WARNING, KPT_NOTE_HINT };

#define KPT_RECORD_NOTES 16

/* The idle gap of suite and workload recordings, microseconds: the
 * tensor-core kernels of a busy GPU run under its power cap at one of
 * several speeds per process; after an idle gap each timed iteration
 * starts from the same power state (docs/decision-rule.md, "The power cap"). */
#define KPT_SUITE_SETTLE_US 3000

/* What happened. */
struct kpt_record_result {
	int status;                 /* the target's first nonzero exit status (128 + signal), else 0 */
	int files;                  /* per-process files merged */
	unsigned counter_passes;    /* CUPTI's passes per kernel of the counters pass, 0 unknown */
	struct {
		enum kpt_record_note_kind kind;
		char text[1024];
	} note[KPT_RECORD_NOTES];   /* one line each, in order (later ones dropped) */
	int nnotes;
	/* what was recorded, so callers need not probe the GPU or open the
	 * recording again: the first GPU's slug and name, the suite (meta
	 * "suite": the bundled suite's or the project's name; "" for a program) */
	char slug[128], gpu[128], suite[128];
};

/* Runs the recording described by o; 0 with r filled (r->status may be
 * nonzero: the target failed, the recording was still written), or a
 * negative kpt_err with d set and nothing written at o->out (KPT_E_NODEV:
 * no GPU). O(runs) processes; the merge streams kernels chunk by chunk. */
int kpt_record_run(const struct kpt_record_opts *o, struct kpt_record_result *r, struct kpt_diag *d);

struct kpt_project;

/* Records the workloads of project p (kpt_project.h): all of them when
 * nnames is 0, else those named (KPT_E_NOTFOUND for a name p lacks).
 * base gives what is not per workload (out, collector, counters, settle,
 * skip_gpu_check; base->cmd, suite and workloads are ignored); runs is
 * base->runs when > 0, else each workload's runs (else the project's).
 * Run i of the recording is run i of every workload, in the project's
 * order, each a fresh process started in the workload's cwd with its env,
 * window and timeout (a run past its timeout is killed: KPT_E_INVAL-free,
 * r->status 128 + SIGKILL, and a note); warm-up runs go before and are not
 * kept. Each workload's kernels and ranges sit under its root_range, so
 * two workloads never share a key. Meta: "suite" = p->name, "project" =
 * p->path (not for the bundled suite), "workloads" = the names recorded,
 * "step_ranges" = "WORKLOAD/RANGE,..." for those with a step_range.
 * The bundled suite (p->builtin) records exactly as kpt_record_run with
 * o.suite did. Same return contract as kpt_record_run. */
int kpt_record_project(const struct kpt_project *p, const char *const *names, size_t nnames,
		       const struct kpt_record_opts *base, struct kpt_record_result *r, struct kpt_diag *d);

#endif
