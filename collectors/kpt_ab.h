/* kpt_ab.h - same-machine A/B as a library: another revision of a project
 * checked out in a git worktree and built, then the workloads of both
 * revisions interleaved on this machine, each run a fresh process under the
 * collector (kpt_record_project), and each side's runs merged into one
 * recording. CUDA-free, linked into kptprof; `gate --against` and `ab` call
 * it and only parse and print (docs/cli.md, "ab", "gate --against").
 *
 * Never prints: children (git, the build, the workloads) write to a log
 * file; what the caller should say comes back as notes, and progress per
 * pair through a callback.
 */
#ifndef KPT_AB_H
#define KPT_AB_H

#include <limits.h>
#include <stddef.h>

#include "kpt_err.h"
#include "kpt_project.h"
#include "kpt_record.h"

#define KPT_AB_NOTES 16

/* Notes for the caller to print, one line each, in order (later ones
 * dropped, repeats kept once). Kinds as the recorder's. */
struct kpt_ab_notes {
	struct {
		enum kpt_record_note_kind kind;
		char text[1024];
	} note[KPT_AB_NOTES];
	int n;
};

/* ---- the other revision -------------------------------------------------------------------- */

/* A revision checked out for the A side. Zero it before kpt_ab_checkout;
 * kpt_ab_checkout_remove accepts a zeroed or half-made one. */
struct kpt_ab_checkout {
	char top[PATH_MAX];         /* the repository's top folder (git rev-parse --show-toplevel) */
	char prefix[PATH_MAX];      /* the asked folder relative to top, "" or ending in '/' */
	char tmp[PATH_MAX];         /* a fresh folder owning everything below; "" none */
	char path[PATH_MAX];        /* the worktree: tmp/src */
	char commit[64];            /* the ref resolved, 40 hex digits */
};

/* The first half of kpt_ab_checkout: the repository's top folder, the
 * prefix and ref resolved to a commit into co (nothing checked out, nothing
 * to remove); the same errors. Cost: three git processes. */
int kpt_ab_resolve(const char *dir, const char *ref, struct kpt_ab_checkout *co, struct kpt_diag *d);

/* Checks out ref of the git repository that holds folder dir in a new
 * worktree under tmpdir (NULL: $TMPDIR, else /tmp): the ref is resolved to
 * a commit first (KPT_E_NOTFOUND naming the ref when there is none; the
 * error is one line), then `git worktree add --detach`; git's output
 * goes into the error message only. On error nothing is
 * left behind. Call kpt_ab_checkout_remove afterwards, also on failure of
 * what follows. Cost: three git processes. */
int kpt_ab_checkout(const char *dir, const char *ref, const char *tmpdir, struct kpt_ab_checkout *co,
		    struct kpt_diag *d);

/* `git worktree remove --force`, `git worktree prune`, then the temporary
 * folder removed; idempotent, accepts a zeroed co. */
void kpt_ab_checkout_remove(struct kpt_ab_checkout *co);

/* ---- building it ----------------------------------------------------------------------------- */

/* Runs the project's build argv (p->build; NULL: nothing to do, 0) in cwd
 * (NULL: p->root) with stdout and stderr to log_fd; a build past timeout_s
 * (0: none) is killed. 0, or KPT_E_UNSUPPORTED naming the command, its exit
 * status and log (log_path: its name, for the message). */
int kpt_ab_build(const struct kpt_project *p, const char *cwd, int log_fd, const char *log_path, double timeout_s,
		 struct kpt_diag *d);

/* The bundled suite of the kptprof source tree src: CMake configure into
 * bld (Release, this build's CUDA architectures: CMAKE_CUDA_ARCHITECTURES
 * of the CMakeCache.txt above this kptprof, else native) and build the
 * kpt-workloads target; output to log_fd. The runner's path into runner. */
int kpt_ab_build_suite(const char *src, const char *bld, int log_fd, const char *log_path, char *runner, size_t cap,
		       struct kpt_diag *d);

/* The workload runner of a build folder: kpt-workloads where the build
 * puts it (cli/), at the folder's top or in bin/ (an install). 0, or -1. */
int kpt_ab_build_runner(const char *dir, char *out, size_t cap);

/* 1 when `runner --help` names opt (a build from before the option
 * refuses it), else 0. */
int kpt_ab_runner_knows(const char *runner, const char *opt);

/* ---- running both ------------------------------------------------------------------------------ */

/* One pair done: for a progress line. */
struct kpt_ab_pair {
	long i, pairs;              /* pair i of pairs, from 0 */
	int b_first;                /* 1: B ran first (odd pairs) */
	double wall_s[2];           /* A's run, B's run (seconds) */
};

/* Records one run of p's workloads names[0..n) into o->out; default
 * kpt_record_project. A seam for tests that record without processes. */
typedef int (*kpt_ab_record_fn)(const struct kpt_project *p, const char *const *names, size_t n,
				const struct kpt_record_opts *o, struct kpt_record_result *r, struct kpt_diag *d);

struct kpt_ab_opts {
	const struct kpt_project *a, *b;   /* the base revision's project (its worktree) and this checkout's */
	const char *label[2];       /* each side's meta "command" in a.kpt / b.kpt (NULL: the project file) */
	const char *const *names;   /* workloads to run, both sides must have them; NULL: those both have */
	size_t nnames;
	long pairs;                 /* >= 1; pair i runs A then B when i is even, B then A when odd */
	long settle_us;             /* the runner's idle gap (bundled suite), -1 none */
	const char *dir;            /* existing folder: a.kpt, b.kpt, ab.log (parts removed) */
	/* what is not per side (collector, skip_gpu_check, no_calibrate);
	 * runs, out, settle_us and child_log are set per call, and runner
	 * for a bundled-suite side (its workload's argv[0]) */
	const struct kpt_record_opts *base;
	void (*progress)(void *ctx, const struct kpt_ab_pair *pair); /* after each pair, NULL none */
	void *ctx;
	kpt_ab_record_fn record;    /* NULL: kpt_record_project */
};

struct kpt_ab_result {
	char log[PATH_MAX + 16];    /* dir/ab.log: the workloads' output */
	double wall_s[2];           /* total seconds of A's and B's runs */
	char slug[128], gpu[128];   /* what the recorder said was recorded (B's last run) */
	size_t nnames;              /* workloads run on both sides */
	struct kpt_ab_notes notes;  /* names on one side only, settle dropped, the recorder's notes */
};

/* The workloads both a and b have, by name, in b's order, into
 * names[0..cap) (pointers into b); the count. The others each go to
 * notes ("workload 'x' is only in A: not compared"). O(na * nb). */
size_t kpt_ab_common(const struct kpt_project *a, const struct kpt_project *b, const char **names, size_t cap,
		     struct kpt_ab_notes *notes);

/* Runs o->pairs pairs interleaved ABBA into o->dir, then merges each
 * side's runs into o->dir/a.kpt and o->dir/b.kpt (run i = pair i, meta
 * ab_side A or B). 0 with r filled, or a negative kpt_err with d set
 * (KPT_E_NODEV: no GPU; a run whose workload exits nonzero: KPT_E_UNSUPPORTED
 * naming the run, side and log); the log and the parts stay for a look. */
int kpt_ab_run(const struct kpt_ab_opts *o, struct kpt_ab_result *r, struct kpt_diag *d);

/* A project of one program (`ab -- CMD_A ::: CMD_B`): one workload named
 * name running argv in the current folder, no root range, no build, no
 * project file (path NULL); its recordings are as `record -- CMD` makes.
 * Filled in place: p.wl points at wl, strings at the caller's (argv and
 * name must outlive it); nothing to release. 0, or KPT_E_IO when the
 * current folder cannot be read. */
struct kpt_ab_command {
	struct kpt_project p;
	struct kpt_project_workload wl;
	char cwd[PATH_MAX];
};

int kpt_ab_command_project(char **argv, const char *name, struct kpt_ab_command *c, struct kpt_diag *d);

#endif
