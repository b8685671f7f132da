/* kpt_project.h - a user's project file: the workloads kptprof records,
 * gates and baselines for code it did not ship (docs/projects.md).
 *
 * The file is `kptprof.json` at the root of the user's repository (JSON,
 * read by the bounded reader of kpt_json_read.h; why JSON and not TOML:
 * docs/projects.md, "Why JSON"):
 *
 *   {
 *     "project": "mylib",                       name; a path component
 *     "build": ["cmake", "--build", "build"],   argv run at the root of another
 *                                               revision's worktree (optional)
 *     "baselines": "perf/baselines",            folder, relative to the file
 *                                               (default "baselines")
 *     "db": "postgresql://...",                 history store (optional)
 *     "runs": 5,                                default runs per workload
 *     "workloads": [
 *       { "name": "train-step",
 *         "command": ["python3", "bench/step.py", "--steps", "60"],
 *         "env": { "OMP_NUM_THREADS": "4" },
 *         "cwd": "bench",                       relative to the file's folder
 *         "timeout": 600,                       seconds per run (0: none)
 *         "capture": { "nvtx": "step", "steps": "20-59" },
 *                 or { "nvtx": "step", "every": 10 } or { "cudaProfilerApi": true }
 *                 or absent: the whole program
 *         "runs": 5,                            overrides the project's
 *         "warmup": 1 }                         untimed runs before the recorded ones
 *     ]
 *   }
 *
 * Unknown keys are errors (a typo must not silently drop a setting). Every
 * error is one diag "FILE:LINE: KEY: problem" (KPT_E_INVAL; KPT_E_IO when
 * the file cannot be read; KPT_E_FORMAT when it is not JSON), so cli/ prints
 * it as one line and exits 2.
 *
 * The bundled suite is a project too: kpt_project_builtin() describes the
 * kpt-workloads runner's suite as one workload, so record, gate, ab and
 * baseline take one code path for both.
 */
#ifndef KPT_PROJECT_H
#define KPT_PROJECT_H

#include <stddef.h>

#include "kpt_arena.h"
#include "kpt_err.h"

#define KPT_PROJECT_FILE "kptprof.json"
#define KPT_PROJECT_MAX_WORKLOADS 256
/* The longest name kpt_project_name_ok() takes (bytes). */
#define KPT_COMPONENT_MAX 128

/* One workload. Strings live in the project's arena; arrays are
 * NULL-terminated. */
struct kpt_project_workload {
	const char *name;           /* a path component: [a-z0-9._-], kpt_cli_check_component's rule */
	char **argv;                /* the command, >= 1 word */
	char **env;                 /* "NAME=VALUE" added to the environment, NULL: none */
	const char *cwd;            /* absolute: the project folder joined with "cwd" (default: the
				     * project folder); NULL (the bundled suite): kptprof's own */
	double timeout_s;           /* per run; 0: none */
	/* what to time, as record's window options (kpt_window.h) take them;
	 * NULL each when not given (whole program) */
	const char *capture_range;  /* "nvtx:NAME[@DOMAIN]" or "cudaProfilerApi" */
	const char *steps;          /* "A-B" */
	const char *every;          /* "K" */
	const char *step_range;     /* the NVTX range one step is (capture nvtx's NAME), NULL none */
	long runs;                  /* 0: the project's, else its own */
	long warmup;                /* untimed runs before the recorded ones, 0 default */
	/* a root NVTX range every kernel of the workload sits under (its name),
	 * so workloads running the same kernels keep apart keys; NULL: none
	 * (the bundled suite names its own ranges, its baselines have none) */
	const char *root_range;
};

struct kpt_project {
	const char *path;           /* the file read (absolute) */
	const char *root;           /* its folder (absolute) */
	const char *name;           /* "project": the suite name of its recordings */
	char **build;               /* NULL: nothing to build */
	const char *baselines;      /* absolute folder */
	const char *db;             /* NULL: none */
	long runs;                  /* default runs, >= 1 (5 when not given) */
	struct kpt_project_workload *wl;
	size_t nwl;
	int builtin;                /* 1: kpt_project_builtin() */
	struct kpt_arena arena;     /* owns everything above */
};

/* Reads and checks the project file at path. 0 and *out (release with
 * kpt_project_destroy), or a negative kpt_err with d naming file, line and
 * key. O(file size); files over 1 MiB are refused. */
int kpt_project_load(const char *path, struct kpt_project **out, struct kpt_diag *d);

/* The project file that applies in folder dir: dir/kptprof.json, else
 * the same in each parent up to the file system's root (as git finds its
 * folder). 0 and the absolute path in out, KPT_E_NOTFOUND when none. */
int kpt_project_find(const char *dir, char *out, size_t cap);

/* The bundled suite as a project: one workload named suite whose command
 * is `runner --suite suite` (runner: kpt-workloads' path), build NULL,
 * baselines the given folder. 0, or KPT_E_NOMEM. */
int kpt_project_builtin(const char *runner, const char *suite, const char *baselines, struct kpt_project **out,
			struct kpt_diag *d);

/* The workload called name, NULL when none. */
const struct kpt_project_workload *kpt_project_workload(const struct kpt_project *p, const char *name);

/* Whether s is safe as one path component of a folder kptprof makes
 * (a workload, project, suite or GPU slug name): 1 to KPT_COMPONENT_MAX
 * bytes of [a-z0-9._-], not starting with '.' and without "..". 1 or 0.
 * (cli's kpt_cli_check_component wraps it with a message.) */
int kpt_project_name_ok(const char *s);

/* Accepts NULL and half-built projects. */
void kpt_project_destroy(struct kpt_project *p);

#endif
