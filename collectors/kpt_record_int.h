/* kpt_record_int.h - what the recorder's files share (kpt_record.c: the
 * collector table, spawning, the run loop, the counters pass;
 * kpt_record_merge.c: ceilings and the merge into one recording;
 * kpt_record_project.c: a project's workloads). Internal to the recorder;
 * its interface is kpt_record.h.
 */
#ifndef KPT_RECORD_INT_H
#define KPT_RECORD_INT_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>

#include "kpt_record.h"

/* The environment variable and file through which the workload runner's
 * timing runs hand their calibration probes to the recorder (the name
 * kernels/runner/kpt_calibrate.h reads), and the reader of that file:
 * the median of each probe over the lines of uuid into *c; 0 when at least
 * one line was read. */
#define KPT_ENV_CALIBRATE_OUT "KPT_CALIBRATE_OUT"
#define KPT_RECORD_CALIBRATION "calibration.tsv"
struct kpt_record_probes {
	double copy_gbps, bf16_tflops, fp8_tflops, sm_mhz; /* medians over runs, 0 unknown */
	unsigned runs;              /* lines (runs) they come from */
};
int kpt_record_probes_read(const char *path, const char *uuid, struct kpt_record_probes *c);
/* 1 when argv[0] is the workload runner (basename kpt-workloads). */
int kpt_record_cmd_is_runner(char *const *argv);

struct launch {
	const struct kpt_collector *coll;
	const char *inject, *tmp;
	int api;
	char prefix;                /* 'r' timing runs, 'c' the counters pass */
	const char *counters;       /* KPT_COUNTERS value, NULL: none */
	/* KPT_ACTIVITY_KINDS value (--kinds); NULL: left as inherited, except
	 * in the counters pass, which enables no activity and unsets it. */
	const char *kinds;
	const char *sample_ms;      /* KPT_SAMPLE_MS value; NULL: left as inherited */
	const char *const *win;     /* window option values (kpt_record_opts.win), NULL each: inherited */
	const char *child_log;      /* kpt_record_opts.child_log */
	/* KPT_CALIBRATE_OUT for the timing runs of the workload runner (each
	 * appends its probes there, kernels/runner/kpt_calibrate.h); NULL:
	 * unset (any other program, the counters pass, calibration off) */
	const char *calibrate_out;
	/* a project's workload (kpt_project.h): tag goes into the file names
	 * after the run ("-w003": its index), env is added, the target starts
	 * in cwd and is killed with its process group past timeout_s; "", NULL,
	 * NULL and 0 for a plain recording */
	const char *tag;
	char *const *env;
	const char *cwd;
	double timeout_s;
};

/* What every recording sets up and takes down: the collector's library,
 * the temporary folder, the GPU probe, the forwarded signals, the exit
 * status of each run. */
struct session {
	const struct kpt_collector *coll;
	struct kpt_gpu_list gpus;
	char inject[PATH_MAX], tmp[PATH_MAX];
	char calibration[PATH_MAX + 32]; /* tmp/KPT_RECORD_CALIBRATION when the runs calibrate, else "" */
	struct sigaction old_int, old_term;
	int tmp_made, signals;
	char *exits;                /* "0,0,3": meta "exit_status" */
	size_t nexits;
};

/* What a project's recording adds to the merge: each workload's root
 * range (by the file's workload index, "-w003") and its meta keys (NULL
 * each: not written). */
struct proj_merge {
	const char *const *root;
	size_t nwl;
	const char *project, *workloads, *step_ranges, *window;
};

/* kpt_record.c */
void kpt_record_note(struct kpt_record_result *r, enum kpt_record_note_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Whether cmd runs: a path that is executable, or a name found on PATH. */
int kpt_record_command_exists(const char *cmd);
/* argv joined by spaces, malloc'd; NULL out of memory. */
char *kpt_record_join_argv(char **argv);
/* Runs argv once as run `run`. Returns the wait status decoded as an exit
 * status (128 + signal for a killed target), or -1 with d set when the
 * command could not be started; *killed (may be NULL): past its timeout. */
int kpt_record_run_once(const struct launch *l, char **argv, long run, int *killed, struct kpt_diag *d);
/* A program's kinds and sampling period unless asked otherwise. */
void kpt_record_program_defaults(struct launch *l);
/* The counters pass after the timing runs (o->counters_metrics). */
int kpt_record_counters_pass(const struct kpt_record_opts *o, struct kpt_record_result *res,
			     const struct launch *base, char **cmd, struct kpt_diag *d);
/* Opens s for a recording of runs runs at o->out and says in r which GPU
 * records. On failure s is closed and nothing is left behind. */
int kpt_record_session_open(struct session *s, const struct kpt_record_opts *o, long runs,
			    struct kpt_record_result *r, struct kpt_diag *d);
/* Accepts a half-opened session. */
void kpt_record_session_close(struct session *s);
/* The exit status of run `run`, for meta "exit_status". */
void kpt_record_session_exit(struct session *s, long run, int status);

/* kpt_record_merge.c: after the runs (and the counters pass): ceilings,
 * then every per-process file of the temporary folder merged into o->out.
 * what: the target, for "nothing recorded"; command: meta "command";
 * runner: the workload runner when it was the command, else NULL; pm: a
 * project's roots and meta, NULL for one program or suite. */
int kpt_record_session_merge(struct session *s, const struct kpt_record_opts *o, struct kpt_record_result *r,
			     const char *what, const char *command, const char *runner,
			     const struct proj_merge *pm, struct kpt_diag *d);

#endif
