/* kpt_diff.h - matching kernels of two recordings and the decision rule.
 *
 * A diff is made in two steps so that one loaded recording can be compared
 * many times (the decision-rule evaluation draws disjoint subsets of runs
 * from one pool of runs):
 *
 *   1. kpt_diff_side_load() streams one .kpt file once and keeps, per kernel
 *      key and per run (process.run), the durations of its samples (and the
 *      SM clock at each sample when the file has NVML env samples). Memory:
 *      about 6 bytes per kept kernel record (float ns, 16-bit MHz) plus one
 *      entry per key and 8 bytes per NVTX range while loading; the file
 *      itself may be closed afterwards. The ordinal of a launch is its rank
 *      in start time within its iteration (one iteration per process is
 *      buffered), so streams finishing out of order do not swap keys; a
 *      process's iterations are assumed to come one after another in the
 *      file, as the collector and the merge write them.
 *   2. kpt_diff_compare() matches the keys of two sides, computes per key the
 *      effect, noise, interval and verdict (docs/decision-rule.md), totals
 *      per NVTX range path and per workload, and the environment comparison.
 *      The per-key, per-run medians are taken once at load, so a comparison
 *      costs O(keys x runs + keys log keys); loose keys and the pooled U
 *      method go back to the samples (O(samples)).
 *
 * kpt_diff_paths() does both for two file names, loading the two files on
 * two threads. Report writers (terminal
 * text, Markdown, JUnit XML, JSON) live in kpt_diff_report.h.
 *
 * Kernel key (docs/architecture.md, "Kernel identity"): demangled name + grid + block +
 * NVTX range path + ordinal. The range path is the names of the NVTX ranges
 * enclosing the launch, outermost first, joined by '/', without the
 * per-iteration range `kpt:iter` (KPT_DIFF_ITER_RANGE), which only splits
 * iterations: the k-th launch of the same name/config/path within one
 * iteration gets ordinal k. A process without `kpt:iter` ranges (an
 * arbitrary program) counts as one iteration and all launches of one
 * name/config/path are pooled into ordinal 0. Keys of one name and path
 * whose config is on both sides match by config and ordinal; when the group
 * also has configs only in BASE and configs only in NEW (the launch config
 * changed), those keys are matched by name + path alone, pooled per run
 * (row.loose, diff.n_loose) and the report says so; a config on one side
 * only of an otherwise matched group is NEW or GONE.
 *
 * Ownership: a struct kpt_diff owns every string and array it points to
 * (one arena); all pointers stay valid until kpt_diff_destroy(). A diff does
 * not point into the sides or files it was made from.
 */
#ifndef KPT_DIFF_H
#define KPT_DIFF_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"
#include "kpt_format.h"
#include "kpt_stats.h"

#define KPT_DIFF_ITER_RANGE "kpt:iter"
/* Ranges kpt-workloads puts around untimed work (warm-up, L2 flush): the
 * kernels inside them are counted (env.skipped) but never compared. */
#define KPT_DIFF_SKIP_RANGES { "kpt:warmup", "kpt:flush" }

enum kpt_verdict {
	KPT_V_SAME = 0, /* the whole interval sits inside +-threshold */
	KPT_V_SLOW = 1, /* change > threshold and significant after Holm */
	KPT_V_FAST = 2, /* change < -threshold and significant after Holm */
	KPT_V_AMBG = 3, /* neither: too noisy to say (see row.more_runs) */
	KPT_V_NEW = 4,  /* key only in NEW */
	KPT_V_GONE = 5, /* key only in BASE */
	KPT_V_COUNT
};

/* "SAME", "SLOW", ...; "?" for values out of range. */
const char *kpt_verdict_name(int v);

/* How keys are tested. RULE is the decision rule; POOLED_U is what google
 * benchmark's compare.py does (Mann-Whitney U over all samples of all runs
 * pooled, two-sided, no threshold, no correction for many keys: SLOW/FAST
 * when p < alpha), kept only to show its false alarms in the evaluation. */
enum kpt_diff_method {
	KPT_DIFF_RULE = 0,
	KPT_DIFF_POOLED_U = 1,
};

/* Options. Zero-initialised means the defaults (in brackets); keep using
 * `struct kpt_diff_opts o = {0};` so fields added later stay defaulted. */
struct kpt_diff_opts {
	double threshold_pct;       /* [2] change that matters, percent */
	double short_threshold_pct; /* [5] threshold for short kernels */
	double short_ns;            /* [10000] base median below this is "short" */
	double long_threshold_pct;  /* [1] threshold for long kernels: their run-to-run
	                               noise is 0.1-0.2% on an H100, so 1% stays far
	                               from it (docs/decision-rule.md, "Thresholds") */
	double long_ns;             /* [200000] base median from this on is "long" */
	double alpha;               /* [0.05] family-wise error rate (Holm) */
	double noise_floor_pct;     /* [0.1] least run-to-run SD assumed, percent */
	double noise_floor_ns;      /* [5] least run-to-run SD assumed, ns */
	double min_clock_frac;      /* [0.75] drop samples below this x run's median SM clock */
	uint64_t throttle_ignore;   /* [0x7] NVML reason bits that do NOT drop a sample
	                               (GpuIdle 0x1, ApplicationsClocksSetting 0x2,
	                               SwPowerCap 0x4: docs/decision-rule.md);
	                               set KPT_DIFF_IGNORE_NONE to drop on every bit */
	int force;                  /* compare different GPU models anyway */
	int keep_throttled;         /* keep samples that the env filter would drop */
	enum kpt_diff_method method;
	/* 0: Student's t with the pooled run-to-run variance of both sides
	 * (df = runs_b + runs_n - 2): exact under "no change", where both
	 * sides share one noise distribution. 1: Welch's unequal-variance t
	 * (Welch-Satterthwaite df), more conservative with few runs. */
	int welch;
	/* Paired analysis (kptprof ab): the i-th selected run of NEW is
	 * compared with the i-th of BASE (both recorded interleaved on one
	 * machine); the test is Student's t on the per-pair differences of
	 * log run medians, df = pairs - 1, and no between-session term. */
	int paired;
	/* Groups of launches of one kernel name in one NVTX path with at
	 * least this many ordinal keys per iteration (the per-expert GEMMs of
	 * a MoE layer) are compared as one key: the sum of their run medians,
	 * i.e. the group's time per iteration [8]; -1 compares them one by one
	 * (docs/decision-rule.md, "Aggregated keys"). */
	int aggregate_min;
	/* Between-session SD, percent, assumed for every key when the base
	 * has one session (overrides the built-in prior by duration; 0: the
	 * prior). */
	double between_prior_pct;
	int no_shift;               /* do not look for family-wide shifts */
	/* do not take the sessions' measured ceilings out of any key
	 * (docs/decision-rule.md, "Calibration") */
	int no_calibration;
	/* calibrate on the probes each run measured (meta calibration.*:
	 * copy, bf16, fp8, SM clock) when every base session and NEW carry
	 * them alike, instead of the device ceilings (docs/decision-rule.md,
	 * "The probes": they did worse on six fresh H200s, so not the default) */
	int calibration_probes;
	/* --ranges any-thread: a kernel launched outside any range of its own
	 * thread gets the path of the innermost range open on another thread
	 * of its process at its GPU start, marked " (other thread)". */
	int any_thread;
	double between_floor_ns;    /* [30] least between-session SD assumed, ns */
	/* Where base and new came from (kpt_diff.machine): 0 looks at the GPU
	 * UUID and boot id of the sessions; KPT_MACHINE_OTHER treats every
	 * session as another machine (the evaluation, --machine other). */
	int machine;
	/* NEW and every base session are one machine and boot, whatever their
	 * facts say (diff --same-machine: imported traces without a host or GPU
	 * UUID); ignored with paired or machine = KPT_MACHINE_OTHER. */
	int same_machine;
	/* Run subsets (process.run numbers) to use from each side; NULL: all
	 * runs. Used by the evaluation to draw gates from one pool. */
	const uint32_t *base_runs;
	uint32_t n_base_runs;
	const uint32_t *new_runs;
	uint32_t n_new_runs;
};
#define KPT_DIFF_IGNORE_NONE UINT64_MAX /* sentinel: ignore no bit */
#define KPT_DIFF_IGNORE_DEFAULT 0x7ull /* idle, applications clocks, SW power cap */
#define KPT_NVML_SW_POWER_CAP 0x4ull

/* One loaded recording, reduced to per-key per-run samples. */
struct kpt_diff_side;

/* Streams f's kernels (one chunk in memory at a time) and builds a side.
 * opts may be NULL (defaults); only the env-filter fields are used here.
 * Fails with KPT_E_FORMAT on corrupt data, KPT_E_INVAL when f has no kernels.
 * The side does not refer to f after return. */
int kpt_diff_side_load(struct kpt_file *f, const struct kpt_diff_opts *opts,
		       struct kpt_diff_side **out, struct kpt_diag *d);
void kpt_diff_side_destroy(struct kpt_diff_side *s); /* accepts NULL */
/* Distinct process.run values of the side, ascending, in runs[0..*n-1]
 * (owned by s). */
void kpt_diff_side_runs(const struct kpt_diff_side *s, const uint32_t **runs,
			uint32_t *n);
/* Combines sides loaded from several files (the sessions of one baseline:
 * one GPU model, several machines or days) into a new side whose runs
 * remember their session; keep_runs > 0 takes only the first keep_runs runs
 * of each input. The inputs are not changed and may be destroyed after.
 * label names the result in reports (NULL: the first input's path).
 * Fails with KPT_E_MISMATCH when the GPU models differ. O(samples). */
int kpt_diff_side_combine(const struct kpt_diff_side *const *sides, size_t n, uint32_t keep_runs,
			  const char *label, struct kpt_diff_side **out, struct kpt_diag *d);
/* Sessions in a side: 1 for a side loaded from one file. */
uint32_t kpt_diff_side_sessions(const struct kpt_diff_side *s);
/* Multiplies the durations of the keys named name in NVTX path path by
 * factor; with ordinal != UINT32_MAX only that ordinal (and, when not NULL,
 * that grid and block). For the evaluation's synthetic planted slowdowns.
 * Returns the number of keys changed. */
size_t kpt_diff_side_scale(struct kpt_diff_side *s, const char *name, const char *path,
			   const uint32_t *grid, const uint32_t *block, uint32_t ordinal, double factor);
/* Number of keys and kept samples (after the env filter). */
size_t kpt_diff_side_keys(const struct kpt_diff_side *s);
uint64_t kpt_diff_side_samples(const struct kpt_diff_side *s);

/* Environment of one side, summarised from devices, meta and env samples. */
struct kpt_diff_env {
	const char *path;           /* file name as given */
	const char *gpu_name;       /* first device used by a kernel, "" unknown */
	const char *gpu_slug;
	const char *driver;         /* NVML driver string, or cuDriverGetVersion as "13.0" */
	const char *cuda;           /* runtime version "13.0", "" unknown */
	const char *suite;          /* meta "suite", "" none */
	const char *host;           /* meta "host", "" none */
	const char *time;           /* meta "time", "" none */
	const char *commit;         /* meta "commit", "" none */
	uint32_t runs;              /* runs used */
	uint64_t kernels;           /* kernel records seen */
	uint64_t samples;           /* samples kept (matched or not) */
	uint64_t skipped;           /* kernels under KPT_DIFF_SKIP_RANGES, not compared */
	uint64_t outside;           /* kernels outside kpt:iter in a file that has kpt:iter
	                               ranges (set-up, checks), not compared */
	uint64_t dropped_throttle;  /* samples dropped: throttle reason */
	uint64_t dropped_clock;     /* samples dropped: SM clock < min_clock_frac x median */
	uint64_t approx_runs;       /* (key, run)s with more samples than are kept
	                               exactly: medians from a histogram within
	                               KPT_QSKETCH_REL_ERR (note "approx") */
	uint64_t env_samples;
	double sm_mhz_median;       /* NAN when no env samples */
	double sm_mhz_min, sm_mhz_max;
	double temp_c_median, temp_c_max;  /* NAN when none */
	double throttled_frac;      /* env samples with a non-ignored reason, 0..1 */
	double capped_frac;         /* env samples under the SW power cap (0x4), 0..1 */
	uint64_t throttle_bits;     /* OR of non-ignored reasons seen */
	/* Ranks (two or more distinct process.rank values: each key carries
	 * its rank, "rank R/" leading its path), and whether they launched
	 * different numbers of kernels (different work). */
	uint32_t ranks;
	int ranks_differ;
	uint64_t rank_launches_min, rank_launches_max;
};

/* A difference between the environments worth printing beside verdicts. */
struct kpt_diff_note {
	const char *what;           /* "gpu", "driver", "cuda", "sm_clock", "temperature",
	                               "throttle", "dropped", "runs", "cycles", "config",
	                               "iterations", "settle", "approx" */
	const char *text;           /* one line for humans */
	int severe;                 /* 1: may explain changes (clocks, throttling) */
};

struct kpt_diff_row {
	const char *name;           /* demangled kernel name (raw when not C++) */
	const char *mangled;        /* name as recorded */
	const char *path;           /* NVTX range path "a/b", "" when none */
	const char *workload;       /* outermost range name, "" when none */
	uint32_t ordinal;           /* k-th launch of this name/config/path per iteration */
	uint32_t grid[3], block[3]; /* zeros when loose or aggregated */
	int loose;                  /* matched by name + path only (configs differ) */
	uint32_t aggregated;        /* > 0: the sum of this many keys (launches per
	                               iteration) of one name and path, compared as one */
	enum kpt_verdict verdict;

	/* Centre of each side: geometric mean of the run medians, ns; NAN on
	 * the missing side of NEW/GONE. */
	double base_ns, new_ns;
	/* Effect in percent: 100*(exp(d)-1), d = mean log run-median(new) -
	 * mean log run-median(base); interval from Student's (or with
	 * opts.welch, Welch's) t on the log run medians at level 1-alpha (not
	 * Holm-adjusted); NAN when untested. */
	double change_pct, ci_low_pct, ci_high_pct;
	/* Run-to-run noise used, percent (SD of log run medians, after the
	 * floor, pooled over both sides). base_sd_pct / new_sd_pct are the raw
	 * SDs (NAN with < 2 runs). */
	double noise_pct, base_sd_pct, new_sd_pct;
	/* The two parts of the noise, percent: run-to-run within a session
	 * (pooled) and between sessions (machines, days; estimated from the
	 * base's sessions and shrunk toward keys of similar duration, or the
	 * prior with one session). NAN when untested; between_pct 0 with --paired. */
	double within_pct, between_pct;
	double shift_pct;           /* family shift taken out of change_pct, percent (0: none) */
	double threshold_pct;       /* threshold that applied to this key */
	double t, df;               /* t statistic and degrees of freedom */
	double p, p_holm;           /* two-sided p, Holm-adjusted p; NAN untested */
	/* Cycle-space cross-check: the same effect computed on duration x SM
	 * clock at the sample's time; NAN without env samples. */
	double cycles_change_pct;
	uint32_t more_runs;         /* AMBG: about this many more runs per side
	                               would settle it; 0 otherwise or unknown */
	/* AMBG because the machine part of the noise alone (between_pct) keeps
	 * the interval across the threshold: more runs cannot settle it, the
	 * same machine can (`kptprof ab`, a baseline session of this runner). */
	int machine_limited;
	/* gate's sequential resolution: the extra round (1..) whose runs
	 * settled this key, AMBG before; 0: decided in the first look */
	uint32_t settled_round;

	uint32_t base_runs, new_runs;      /* runs with at least one sample */
	const double *base_run_ns;         /* [base_runs] run medians, ns */
	const double *new_run_ns;          /* [new_runs] */
	const uint32_t *base_run_ids;      /* [base_runs] process.run numbers */
	const uint32_t *new_run_ids;       /* [new_runs] */
	uint64_t base_samples, new_samples;
	uint64_t base_dropped, new_dropped; /* samples dropped by the env filter */
	/* SLOW keys whose kernel has hardware counters on both sides: the
	 * counter means that moved most, largest first ("dram bytes read
	 * +98%, instructions +0%"); NULL otherwise. */
	const char *counters;
};

/* Totals per NVTX range path (kind RANGE) and per workload (outermost range
 * name, kind WORKLOAD) over keys present on both sides. GPU time is the sum
 * of the keys' centres (per iteration when the recording has `kpt:iter`,
 * else per run). */
enum kpt_total_kind {
	KPT_TOTAL_RANGE = 0,
	KPT_TOTAL_WORKLOAD = 1,
	KPT_TOTAL_ALL = 2,          /* one row over every matched key */
};

struct kpt_diff_total {
	enum kpt_total_kind kind;
	const char *name;           /* path, workload name, or "all"; "" = no range */
	uint32_t keys;              /* matched keys */
	double base_ns, new_ns;     /* summed centres */
	double change_pct;          /* 100*(new_ns/base_ns - 1) */
	double geomean_change_pct;  /* 100*(geometric mean of ratios - 1) */
	uint32_t verdicts[KPT_V_COUNT];
};

/* Where NEW came from, relative to BASE's sessions (GPU UUID and boot id). */
enum kpt_diff_machine {
	KPT_MACHINE_AUTO = 0,       /* opts only: decide from the sessions */
	KPT_MACHINE_OTHER = 1,      /* other machines: the full machine model */
	KPT_MACHINE_SAME_BOOT = 2,  /* the same GPU and boot: only those sessions,
	                               no between part (the same GPU after a reboot
	                               is OTHER: between-boot noise is not measured) */
};

enum kpt_diff_result {
	KPT_DIFF_OK = 0,            /* no SLOW key */
	KPT_DIFF_REGRESSION = 1,    /* at least one SLOW key */
};

/* A family of keys (workloads of one first name component: memory, fp8,
 * attention, moe; "" for keys outside workloads) that moved together: the
 * median change of its keys, tested against how much such medians move
 * between sessions. Reported once, beside the verdicts; when not SAME it
 * is taken out of the family's keys before they are tested. */
struct kpt_diff_shift {
	const char *family;
	uint32_t keys;
	double change_pct, ci_low_pct, ci_high_pct;
	double sd_pct;              /* between-session SD of the family's median change */
	enum kpt_verdict verdict;   /* SLOW fails the gate like a key */
	int applied;                /* subtracted from the family's keys */
};

struct kpt_diff {
	enum kpt_diff_result result;
	struct kpt_diff_opts opts;  /* with defaults filled in; run subsets NULL */
	struct kpt_diff_env base, new_;
	/* Rows sorted: SLOW first, then AMBG, FAST, NEW, GONE, SAME; within a
	 * verdict by change_pct descending (NEW/GONE by name). */
	struct kpt_diff_row *rows;
	size_t nrows;
	uint32_t counts[KPT_V_COUNT];
	uint32_t n_tested;          /* keys in the Holm family */
	uint32_t n_loose;           /* keys matched by name + path only */
	int forced;                 /* GPU models differ and opts.force was set */
	struct kpt_diff_total *totals; /* ALL first, then WORKLOAD rows, then RANGE rows */
	size_t ntotals;
	struct kpt_diff_note *notes;
	size_t nnotes;
	/* Sessions in BASE; with 1 the between-session noise is the prior
	 * (prior_between = 1), not a measurement. */
	uint32_t base_sessions;
	int prior_between;
	/* Which case the noise model used; with SAME_BOOT only the base sessions
	 * of NEW's GPU and boot were compared, machine_sessions of them; with
	 * OTHER, machine_sessions > 0 counts sessions of NEW's GPU, other boots. */
	enum kpt_diff_machine machine;
	uint32_t machine_sessions;
	int paired;
	struct kpt_diff_shift *shifts;  /* one per family with enough keys, then "all" */
	size_t nshifts;
	/* The measured ceilings of NEW against the mean of BASE's sessions,
	 * percent; NAN when unknown. */
	double copy_ceiling_pct, bf16_ceiling_pct;
	/* The idle gap before each timed iteration (meta "settle_us") of NEW
	 * and of the first BASE session that differs from it (-1 unknown:
	 * history stores); settle_differs when a known BASE value is not
	 * NEW's: the tensor-core kernels then ran in another power state
	 * (docs/decision-rule.md), and `gate` refuses the comparison. */
	int64_t settle_new_us, settle_base_us;
	int settle_differs;
	/* gate's sequential resolution (docs/decision-rule.md, "Sequential
	 * resolution"), filled by the caller; on 0: none was tried */
	struct kpt_diff_resolve {
		int on;
		uint32_t rounds;            /* extra rounds recorded */
		uint32_t initial;           /* run-noise AMBG keys of the first look */
		uint32_t settled;           /* of those, decided in an extra round */
		uint32_t extra_runs;        /* runs recorded in all extra rounds */
		double extra_wall_s, first_wall_s; /* seconds; first 0: unknown (--from) */
		double alpha_relook;        /* alpha of each extra look */
	} resolve;
};

/* Compares two sides. Different GPU slugs fail with KPT_E_MISMATCH unless
 * opts->force. opts may be NULL. The result owns all its memory. */
int kpt_diff_compare(const struct kpt_diff_side *base, const struct kpt_diff_side *new_,
		     const struct kpt_diff_opts *opts, struct kpt_diff **out,
		     struct kpt_diag *d);
/* Opens, loads and compares two files; names the failing file in d. */
int kpt_diff_paths(const char *base_path, const char *new_path,
		   const struct kpt_diff_opts *opts, struct kpt_diff **out,
		   struct kpt_diag *d);
/* The same with a baseline of several sessions: each of base_paths is a
 * session (a file), or a folder whose *.kpt files are sessions. */
int kpt_diff_paths_multi(const char *const *base_paths, size_t nbase, const char *new_path,
			 const struct kpt_diff_opts *opts, struct kpt_diff **out,
			 struct kpt_diag *d);
/* Loads the sessions of base_paths (files, or folders of *.kpt files) into
 * one side (kpt_diff_side_combine); label names it. */
int kpt_diff_sessions_load(const char *const *base_paths, size_t nbase, const struct kpt_diff_opts *opts,
			   struct kpt_diff_side **out, struct kpt_diag *d);
/* The between-session SD, percent, that the rule assumes for a key of
 * centre ns when the base has one session (docs/decision-rule.md). */
double kpt_diff_between_prior_pct(double centre_ns);
void kpt_diff_destroy(struct kpt_diff *df); /* accepts NULL */
/* Sequential resolution (gate; docs/decision-rule.md): the keys of df that
 * are AMBG by run-to-run noise (AMBG, not machine_limited, runs on both
 * sides) take their row from later, a diff of the same base against the
 * candidate with more runs (at a smaller alpha); those no longer AMBG get
 * settled_round = round. Every other row of df keeps its verdict. Counts,
 * order and result are made again. later's rows are referred to: it must
 * outlive df. Returns how many keys settled. O(n log n) in the rows. */
uint32_t kpt_diff_adopt_relook(struct kpt_diff *df, const struct kpt_diff *later, uint32_t round);
/* Whether row r is AMBG by run-to-run noise: more runs can settle it (not
 * machine-limited, and more_runs below its cap). */
int kpt_diff_row_run_noise_ambg(const struct kpt_diff_row *r);
/* Fills row.counters of the SLOW rows from the two sides' counter tables
 * (lib/kpt_counters.h; either may be NULL or empty: nothing is set).
 * kpt_diff_paths does this when both files have counters. Returns 0 or
 * KPT_E_NOMEM. */
struct kpt_counter_table;
int kpt_diff_attach_counters(struct kpt_diff *df, const struct kpt_counter_table *base,
			     const struct kpt_counter_table *new_);

/* The family of a key, "moe/nvjet": its workload's first dot-separated part
 * ("" none) and its kernel's kind, the first '_'-separated word of the
 * function's own name; kernels of one library in one workload are what a
 * machine slows down together. One rule for the diff's machine model and
 * history detect's (kpt_rule.c); buf gets at most size bytes. */
void kpt_diff_family(const char *workload, const char *name, char *buf, size_t size);

/* The tests the rule uses (kpt_t_pvalue, kpt_holm, ...) are lib/kpt_stats.h's. */

/* Reading a side key by key (the history store keeps these; implemented in
 * kpt_diff_side_read.c). k < kpt_diff_side_keys(s), r < the run
 * count of kpt_diff_side_runs. Strings are owned by s. */
struct kpt_diff_key_info {
	const char *name, *mangled, *path, *workload;
	uint32_t grid[3], block[3];
	uint32_t ordinal;
};
void kpt_diff_side_key(const struct kpt_diff_side *s, size_t k, struct kpt_diff_key_info *out);
/* The median of key k's kept samples in run slot r, exactly the one the
 * comparison uses; NAN when that run has none. */
double kpt_diff_side_run_median(const struct kpt_diff_side *s, size_t k, uint32_t r);
/* The rest of run slot r of key k that a diff reads: the number of kept
 * samples, the median of duration x SM clock (NAN when a sample has no
 * clock, or the run none), and the samples the env filter dropped. */
void kpt_diff_side_run_stats(const struct kpt_diff_side *s, size_t k, uint32_t r, uint32_t *samples,
			     double *cyc, uint64_t *dropped);
/* The side's environment summary (strings owned by s). */
const struct kpt_diff_env *kpt_diff_side_env(const struct kpt_diff_side *s);
/* Of a side loaded from one file: whether it has kpt:iter ranges, its
 * boot id ("" unknown) and the ceilings measured with it (0 unknown). */
void kpt_diff_side_session_info(const struct kpt_diff_side *s, int *iterated, const char **boot,
				double *copy_gbps, double *bf16_tflops);
/* Diffs new_path against an already built base side (kpt_diff_paths_multi
 * after loading its baseline; the gate's baseline from the history store).
 * base is not changed. */
int kpt_diff_side_vs_path(const struct kpt_diff_side *base, const char *new_path,
			  const struct kpt_diff_opts *opts, struct kpt_diff **out, struct kpt_diag *d);

#endif
