/* kpt_diff_private.h - what the analyzer's source files share; not installed.
 *
 * A side keeps, for each key, one sample vector per run slot (slots are the
 * side's distinct process.run values in ascending order). Samples are
 * durations in ns and the SM clock in MHz at the sample's start (0 when the
 * file has no env samples for that process and device).
 */
#ifndef KPT_DIFF_PRIVATE_H
#define KPT_DIFF_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_arena.h"
#include "kpt_diff.h"
#include "kpt_qsketch.h"
#include "kpt_strtab.h"

/* Open-addressing map from fixed-width uint32 word tuples to dense ids
 * 0,1,2... in insertion order. Memory: 4*width bytes per entry plus 8 bytes
 * per slot; lookups O(width) expected. */
struct kpt_wmap {
	uint32_t width;             /* words per key */
	uint32_t count, cap;        /* entries, allocated entries */
	uint32_t *keys;             /* count * width words */
	uint32_t *slots;            /* id + 1, 0 empty */
	uint32_t *slot_hash;
	uint32_t nslots;            /* power of two */
};

void kpt_wmap_init(struct kpt_wmap *m, uint32_t width);
void kpt_wmap_release(struct kpt_wmap *m);
/* Finds key or adds it. *id gets its id, *added 1 when new. 0 or KPT_E_NOMEM. */
int kpt_wmap_put(struct kpt_wmap *m, const uint32_t *key, uint32_t *id, int *added);
/* 1 and *id when present, 0 when absent. */
int kpt_wmap_get(const struct kpt_wmap *m, const uint32_t *key, uint32_t *id);

/* Exact run medians while a (key, run) has at most KPT_DIFF_EXACT_PER_RUN
 * samples and the side keeps at most KPT_DIFF_EXACT_TOTAL in all (6 bytes
 * each: 48 MiB); past the first, or past the second once the run has
 * KPT_DIFF_SKETCH_MIN, the run's samples go into sketches (kpt_qsketch.h)
 * and its medians are within a relative KPT_QSKETCH_REL_ERR. So a side's
 * memory does not grow with the number of kernels of a key. */
#define KPT_DIFF_EXACT_PER_RUN (1u << 20)
#define KPT_DIFF_EXACT_TOTAL (1u << 23)
#define KPT_DIFF_SKETCH_MIN 64u
/* Launches of one site in one iteration past this many share the key of
 * ordinal KPT_DIFF_MAX_ORDINAL (a key per launch would grow with them), and
 * an iteration is put in start order this many launches at a time. */
#define KPT_DIFF_MAX_ORDINAL (1u << 16)
#define KPT_DIFF_ITER_BUF (1u << 20)

/* The samples of a run past the caps: durations and cycles (duration x SM
 * clock), and the lowest and highest clock seen (0: a sample had none). */
struct kpt_sample_sketch {
	struct kpt_qsketch ns, cyc;
	uint16_t mhz_lo, mhz_hi;
};

/* Durations as float: exact to the ns up to 16.7 ms, 6e-8 relative beyond,
 * far below any timing noise; 6 bytes per sample with the clock. */
struct kpt_sample_vec {
	float *ns;
	uint16_t *mhz;              /* SM clock, NULL until a sample with a clock arrives */
	uint32_t n, cap;            /* samples in ns/mhz */
	/* Past the caps (see above): ns/mhz keep the run's first n samples
	 * (what a pooled comparison of raw samples sees), more counts the
	 * others, and sk holds all of them until the medians are taken (then
	 * freed, NULL). more == 0: exact. */
	uint64_t more;
	struct kpt_sample_sketch *sk;
	uint32_t dropped_throttle;  /* samples dropped: throttle reason */
	uint32_t dropped_clock;     /* samples dropped: SM clock too low */
	/* Filled at the end of loading (on the loading thread): the median
	 * duration and the median of duration x SM clock (NAN when a sample
	 * has no clock), so a comparison needs no selection per key and run. */
	double med_ns, med_cyc;
};


struct kpt_side_key {
	uint32_t name, mangled;     /* ids in side->strs */
	uint32_t path, workload;    /* ids in side->strs ("" for none) */
	uint32_t grid[3], block[3];
	uint32_t ordinal;
	struct kpt_sample_vec *runs; /* [side->nruns] */
};

/* The calibration probes a recording may carry in its meta (KPT_PROBE_
 * order is kpt_probe_meta's): the driver's D2D copy in GB/s, the bf16 and
 * fp8 GEMMs in TFLOP/s, the SM clock under load in MHz. */
enum { KPT_PROBE_COPY, KPT_PROBE_BF16, KPT_PROBE_FP8, KPT_PROBE_SM, KPT_PROBE_N };
extern const char *const kpt_probe_meta[KPT_PROBE_N]; /* "calibration.copy_gbps", ... */

/* One session of a side: the recording one machine made at one time (a
 * file). A baseline of several sessions (kpt_diff_side_combine) lets the
 * rule measure the between-session (machine, day) part of the noise. */
struct kpt_diff_session {
	const char *path;           /* the file, in the side's arena */
	const char *uuid;           /* GPU UUID of the first device, "" unknown */
	const char *host, *boot, *time; /* meta "host", "boot_id", "time"; "" unknown */
	uint32_t runs;              /* runs of this session in the side */
	/* meta "settle_us": the idle gap before each timed iteration of a
	 * suite recording (0: none, or a file without the key); -1 unknown
	 * (a history store keeps no such field): never compared */
	int64_t settle_us;
	double copy_gbps, bf16_tflops; /* ceilings measured with the recording, 0 unknown */
	/* meta calibration.*: the probes `kptprof record` measured (medians
	 * over runs), 0 unknown or absent; probe_where is meta
	 * calibration.where ("in each run", "once per boot, ..."), "" when the
	 * recording has none (all recordings before them, the history store) */
	double probe[KPT_PROBE_N];
	const char *probe_where;
};

struct kpt_diff_side {
	struct kpt_arena arena;
	struct kpt_strtab strs;
	struct kpt_side_key *keys;
	uint32_t nkeys, capkeys;
	uint32_t *run_ids;          /* [nruns] ascending process.run values */
	uint32_t nruns;
	uint32_t *run_session;      /* [nruns] session index of each run slot */
	struct kpt_diff_session *sessions; /* [nsessions] */
	uint32_t nsessions;         /* 1 for a side loaded from one file */
	int iterated;               /* some process has `kpt:iter` ranges */
	struct kpt_diff_env env;    /* strings in arena; dropped counts over all runs */
};

/* The environment of a side made of sessions (kpt_diff_side_combine, the
 * history store's side): path, the first session's device, driver, CUDA,
 * suite, host, commit, clocks and temperatures (they are printed as
 * context only), the newest time, c->nruns runs, and the shares of capped
 * and throttled env samples (capped and throttled: sums of each session's
 * share times its env samples; envn: their count). Strings are copied into
 * c's arena; the summed counts are the caller's. 0 or KPT_E_NOMEM. */
int kpt_diff_env_combined(struct kpt_diff_side *c, const struct kpt_diff_env *first, const char *path,
			  const char *newest, double envn, double capped, double throttled);

#endif
