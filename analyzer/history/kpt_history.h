/* kpt_history.h - every run kept: the history store and change points.
 *
 * A store holds sessions (one recording each: commit, branch, suite, GPU
 * model and UUID, environment summary, labels) and, per session and kernel
 * key, the run medians of that key (the per-run medians the diff takes,
 * kpt_diff_side_run_median) and their centre (geometric mean, the diff's
 * row.base_ns). Raw kernel samples are not kept.
 *
 * One interface, two backends behind it (kpt_history_db.h):
 *   - SQLite (a file; WAL journal; the default), when the URL is a path;
 *   - PostgreSQL through libpq, when it starts with postgresql:// or
 *     postgres:// (a team's shared store).
 * Both hold the same schema, versioned in table kpt_schema and migrated
 * forward on open (docs/history.md lists the versions). A build without
 * one of the libraries fails to open that kind of store with
 * KPT_E_UNSUPPORTED ("built without SQLite").
 *
 * Series: the points of one key over the sessions of one (suite, GPU slug,
 * branch), in the order the sessions were added (session id ascending).
 *
 * Threads: one struct kpt_history per thread. Processes may write one store
 * at once: each add is one transaction (all of a session or nothing).
 */
#ifndef KPT_HISTORY_H
#define KPT_HISTORY_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_arena.h"
#include "kpt_err.h"

#define KPT_HISTORY_SCHEMA 3          /* newest schema version this build writes */
/* The most runs a stored session may claim, and one past the largest run
 * slot a point may name; a row beyond them is refused on reading (a store
 * is untrusted input: docs/security.md). */
#define KPT_HISTORY_MAX_RUNS 100000
/* The most memory a stored baseline may make kpt_history_side build (run
 * slots and repeated samples): 1 GiB. */
#define KPT_HISTORY_SIDE_MAX_BYTES (1ull << 30)
#define KPT_HISTORY_DEFAULT_DB ".kptprof/history.db"

struct kpt_history;

/* Kernel identity as the diff keys it (kpt_diff.h, "Kernel key"). */
struct kpt_history_key {
	int64_t id;                 /* store id; 0 before it is stored */
	const char *name;           /* demangled name */
	const char *mangled;        /* name as recorded; "" unknown (keys stored before schema 3) */
	const char *path;           /* NVTX range path, "" none */
	const char *workload;       /* outermost range, "" none */
	uint32_t grid[3], block[3];
	uint32_t ordinal;
};

struct kpt_history_label {
	const char *name, *value;
};

/* What a diff needs of a session beyond struct kpt_history_session
 * (schema 3; the gate builds its baseline from it, kpt_history_side).
 * Sessions added before schema 3 read as have = 0 and zeros. */
struct kpt_history_diff_env {
	int have;
	const char *boot;           /* meta boot_id, "" unknown */
	int64_t iterated;           /* 1: the recording has kpt:iter ranges */
	double copy_gbps, bf16_tflops; /* ceilings measured with the recording, 0 unknown */
	double sm_mhz_min, sm_mhz_max, temp_c_max; /* NAN unknown */
	double capped_frac;         /* env samples under the SW power cap, 0..1 */
	int64_t kernels, samples, skipped, outside; /* struct kpt_diff_env's counts */
	int64_t dropped_throttle, dropped_clock, env_samples;
	int64_t throttle_bits;      /* OR of the non-ignored NVML reasons seen */
};

struct kpt_history_session {
	int64_t id;                 /* store id (ascending in insertion order) */
	const char *added;          /* UTC time of the add, ISO 8601 */
	const char *time;           /* the recording's meta time, "" unknown */
	const char *commit;         /* "" unknown */
	const char *branch;
	const char *suite;          /* "" none */
	const char *gpu_name, *gpu_slug, *gpu_uuid;
	const char *driver, *cuda, *host;
	const char *source;         /* file name it was added from */
	uint32_t runs;
	uint32_t keys;              /* points of this session (lists only) */
	double sm_mhz;              /* median SM clock, NAN unknown */
	double temp_c;              /* median temperature, NAN unknown */
	double throttled_frac;      /* share of env samples throttled, NAN unknown */
	const struct kpt_history_label *labels;
	uint32_t nlabels;
	struct kpt_history_diff_env env;
};

/* One run median's context (schema 3): which run of its session it is,
 * how many samples it is the median of, and the median of duration x SM
 * clock (the diff's cycle cross-check; NAN without clock samples). */
struct kpt_history_run_info {
	uint32_t slot;              /* run index in the session, 0..session.runs-1 */
	uint32_t samples;
	double cyc;                 /* ns x MHz */
};

/* One key in one session. */
struct kpt_history_point {
	struct kpt_history_key key;
	uint32_t nruns;
	const double *run_ns;       /* [nruns] run medians, ns (runs with samples only) */
	const struct kpt_history_run_info *run_info; /* [nruns]; NULL: unknown (before schema 3) */
	uint64_t dropped;           /* samples the env filter dropped, all runs */
	double centre_ns;           /* geometric mean of run_ns */
};

/* A recording reduced to what the store keeps; made by
 * kpt_history_run_load(), or by hand (tests, the bench). */
struct kpt_history_run {
	struct kpt_arena arena;     /* owns everything below */
	struct kpt_history_session session;
	struct kpt_history_point *points;
	size_t npoints;
};

/* Loads FILE with the diff's loader (same keys, same env filter, same run
 * medians) into *run. session.commit/branch/labels are the recording's
 * (meta commit, meta branch or "main"); the caller may overwrite them
 * (strings it sets must outlive the run). Release with
 * kpt_history_run_release. Errors: those of kpt_file_open and
 * kpt_diff_side_load. */
int kpt_history_run_load(const char *path, struct kpt_history_run *run, struct kpt_diag *d);
void kpt_history_run_release(struct kpt_history_run *run);

struct kpt_history_open_opts {
	int create;                 /* 1: make the store (and a SQLite file's folder) when absent */
	/* 1: the caller only reads: open read-only (a read-only SQLite file,
	 * folder or mount, another user's file), keep the journal mode, do not
	 * migrate (an older schema is read as it is); add then fails. */
	int read_only;
	/* Tests only. schema: migrate no further than this version (0: newest).
	 * on_chunk: called inside add's transaction after each batch of points
	 * is written (a test kills the writer there). */
	int schema;
	void (*on_chunk)(void *ctx, size_t written);
	void *ctx;
};

/* Opens the store named by url: "postgresql://..."/"postgres://..." or a
 * SQLite file path. Migrates an older schema forward (in one transaction,
 * serialised between processes); a newer schema than this build knows is
 * KPT_E_VERSION. Without o->create a missing SQLite file is
 * KPT_E_NOTFOUND. Errors name the problem in one line: bad URL
 * (KPT_E_INVAL), server unreachable or authentication failed (KPT_E_IO),
 * not a store (KPT_E_FORMAT). o may be NULL. */
int kpt_history_open(const char *url, const struct kpt_history_open_opts *o,
		     struct kpt_history **out, struct kpt_diag *d);
void kpt_history_close(struct kpt_history *h); /* accepts NULL */
/* "sqlite" or "postgresql"; the schema version of the open store. */
const char *kpt_history_backend(const struct kpt_history *h);
int kpt_history_schema(const struct kpt_history *h);
/* The store's URL or path as given, any password shown as ***. */
const char *kpt_history_where(const struct kpt_history *h);
/* Whether this build has the backend for url (1) or not (0). */
int kpt_history_supported(const char *url);

/* Stores one session and its points in one transaction; *id gets the new
 * session id (may be NULL). Keys are created as needed. Cost: one query
 * per 200 points plus one for the keys. */
int kpt_history_add(struct kpt_history *h, const struct kpt_history_run *run,
		    int64_t *id, struct kpt_diag *d);

/* Which sessions: NULL fields match anything ("" matches "" only). */
struct kpt_history_filter {
	const char *suite, *gpu_slug, *branch;
	int64_t key_id;             /* 0: every key */
	const char *workload;       /* NULL: every workload */
	uint32_t last;              /* 0: every session, else the last N */
	int with_runs;              /* also read each point's run medians */
};

struct kpt_history_series {
	struct kpt_history_key key;
	uint32_t n;                 /* points */
	uint32_t *sess;             /* [n] index into set.sessions, ascending */
	double *centre_ns;          /* [n] */
	uint32_t *nruns;            /* [n] with_runs only, else NULL */
	double **run_ns;            /* [n][nruns[i]] with_runs only, else NULL */
	/* with_runs only: [n][nruns[i]], an entry NULL for points stored
	 * before schema 3; and [n] dropped samples */
	struct kpt_history_run_info **run_info;
	uint64_t *dropped;
};

/* A query's result: sessions ascending by id, one series per key (keys by
 * id). Owns all its memory. */
struct kpt_history_set {
	struct kpt_arena arena;
	struct kpt_history_session *sessions;
	size_t nsessions;
	struct kpt_history_series *series;
	size_t nseries;
};

/* Reads the sessions matching f and their points. O(points). Free with
 * kpt_history_set_destroy. */
int kpt_history_query(struct kpt_history *h, const struct kpt_history_filter *f,
		      struct kpt_history_set **out, struct kpt_diag *d);
void kpt_history_set_destroy(struct kpt_history_set *s); /* accepts NULL */

/* For the gate: the last n sessions of (suite, GPU slug, branch), each with
 * per-key, per-run medians (with_runs). */
int kpt_history_baseline(struct kpt_history *h, const char *suite, const char *gpu_slug,
			 const char *branch, uint32_t n, struct kpt_history_set **out,
			 struct kpt_diag *d);

/* The diff side a baseline set stands for (set from kpt_history_baseline,
 * with_runs): one session per stored session, one run slot per stored run,
 * each key's run slot holding its stored run median repeated as many times
 * as it had samples. What the decision rule reads of a side, the per-run
 * medians (and cycle medians), the run's session, sample and drop counts,
 * ceilings and the environment summary, is then what the sessions' own
 * files would give through kpt_diff_sessions_load (docs/history.md, "For
 * the gate", names the two exceptions). label names the side in reports.
 * Memory: 4 bytes per stored sample. Free with kpt_diff_side_destroy. */
struct kpt_diff_side;
int kpt_history_side(const struct kpt_history_set *set, const char *label,
		     struct kpt_diff_side **out, struct kpt_diag *d);

/* The gate's baseline from the store: the last n sessions of (suite, GPU
 * slug, branch) as kpt_history_baseline reads them, as a side
 * (kpt_history_side) labelled "history:WHERE@BRANCH". *set (the sessions,
 * for saying which) and *side are the caller's to free. Errors, one line
 * each: no such sessions (KPT_E_NOTFOUND); fewer than
 * KPT_HISTORY_MIN_SESSIONS of them with 2 runs or more (KPT_E_INVAL):
 * the rule's between-session noise is measured from the sessions, and its
 * run-to-run noise from sessions with several runs. */
#define KPT_HISTORY_MIN_SESSIONS 2
/* Sessions gate --db (and view --db) take by default: enough to measure
 * the between-session noise, as a baseline folder of that many machines
 * would, recent enough to follow the branch. */
#define KPT_HISTORY_GATE_SESSIONS 10
int kpt_history_gate_side(struct kpt_history *h, const char *suite, const char *gpu_slug,
			  const char *branch, uint32_t n, struct kpt_history_set **set,
			  struct kpt_diff_side **side, struct kpt_diag *d);

/* Sessions matching f (points not read; session.keys counts them). */
int kpt_history_sessions(struct kpt_history *h, const struct kpt_history_filter *f,
			 struct kpt_history_set **out, struct kpt_diag *d);
/* Keys with a name containing `name` (exact match first) or, when name is
 * a decimal number, the key of that id. Fills out->series[].key only. */
int kpt_history_find_keys(struct kpt_history *h, const char *name,
			  struct kpt_history_set **out, struct kpt_diag *d);

/* ---- change points (kpt_history_detect.c; no store needed) ---- */

struct kpt_cp_opts {
	double min_step_pct;        /* [1] smallest step reported, percent */
	double alpha;               /* [0.001] per-series false change point rate */
	uint32_t min_seg;           /* [3] fewest points on each side of a step */
};

struct kpt_cp {
	uint32_t at;                /* index of the first point after the step */
	double step_pct;            /* 100*(after/before - 1), geometric means */
	double p;                   /* Bonferroni-adjusted p over the split positions */
	double before_ns, after_ns; /* level of the two neighbouring segments */
	double noise_pct;           /* robust point-to-point SD used, percent */
};

/* Change points of the series x[0..n-1] (positive values; others are
 * errors): binary segmentation of log x with a robust noise estimate and a
 * z-test per split, then pruning of steps below min_step_pct or p >= alpha
 * (docs/history.md, "Change points"). *out (malloc'd, caller frees; NULL
 * when none) sorted by at. O(n log n). o may be NULL. */
int kpt_cp_detect(const double *x, uint32_t n, const struct kpt_cp_opts *o,
		  struct kpt_cp **out, uint32_t *ncp, struct kpt_diag *d);

/* The point-to-point SD of log x as kpt_cp_detect first estimates it (the
 * larger of the robust and the trimmed estimate; a fraction: 0.003 is
 * 0.3%); NAN when n < 2, a value is not positive, or out of memory.
 * O(n log n). */
double kpt_cp_noise(const double *x, uint32_t n);

#endif
