/* kpt_synth.h - realistic synthetic recordings, for tests and benchmarks.
 *
 * A recording of `runs` processes (run numbers 0..runs-1), each running
 * `iterations` iterations of a fixed workload of `kernels_per_iter` kernel
 * launches drawn from `names` distinct mangled C++ names, with launch configs
 * that repeat, increasing timestamps, NVTX ranges (one workload range per
 * process, `kpt:iter` per iteration, launch-site ranges around groups of
 * kernels), a memcpy and a memset per iteration, NVML-like env samples every
 * 10 ms, one device, and meta. Durations carry run-to-run lognormal noise
 * (one factor per run and launch site) and within-run noise (per launch);
 * kernels whose name contains a --slow substring take that much longer.
 * The same options and seed give the same file, byte for byte.
 */
#ifndef KPT_SYNTH_H
#define KPT_SYNTH_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_format.h"

#define KPT_SYNTH_MAX_SLOW 16
#define KPT_SYNTH_MAX_META 32

struct kpt_synth_slow {
	const char *substr;         /* matched against mangled and demangled name */
	double pct;                 /* +pct% duration (negative: faster) */
};

struct kpt_synth_opts {
	uint32_t kernels_per_iter;  /* default 24 */
	uint32_t iterations;        /* per run, default 20 */
	uint32_t runs;              /* processes, default 5 */
	uint32_t names;             /* distinct kernel names, default 200 */
	double noise_pct;           /* run-to-run sigma, % (default 1.0) */
	double within_pct;          /* within-run sigma, % (default 0.5) */
	const char *gpu;            /* device name, default "NVIDIA H100 80GB HBM3" */
	const char *suite;          /* meta suite, default "synth" */
	const char *command;        /* meta command, default "kpt-synth" */
	uint64_t seed;              /* default 1 */
	uint64_t total_kernels;     /* when > 0: stop after this many kernels
	                               (iterations raised to reach it) */
	struct kpt_synth_slow slow[KPT_SYNTH_MAX_SLOW];
	int nslow;
	struct kpt_meta_kv meta[KPT_SYNTH_MAX_META]; /* extra meta */
	int nmeta;
	/* --machine PCT:SEED: what one machine does to each kernel, a factor
	 * exp(PCT/100 x N(0,1)) per launch site drawn from SEED alone (the
	 * same SEED is the same machine); sites whose name holds --stable's
	 * text get none (a kernel every machine runs alike). 0: off. */
	double machine_pct;
	uint64_t machine_seed;
	const char *stable;
	/* --probes COPY:BF16:FP8:SM: meta calibration.* as `kptprof record`
	 * writes them (a 0 leaves that probe out), with calibration.where
	 * probe_where (default "in each run") and calibration.runs = runs;
	 * have_probes 0: none (a recording from before them). */
	int have_probes;
	double probes[4];           /* copy GB/s, bf16 and fp8 TFLOP/s, SM MHz */
	const char *probe_where;
	/* --follow SUBSTR:PROBE: sites whose name holds SUBSTR are bound by
	 * that probe's ceiling (0 copy, 1 bf16, 2 fp8, 3 sm): their time is
	 * x (the GPU's nominal value / the probe's). NULL: none. */
	const char *follow;
	int follow_probe;
};

/* Fills o with the defaults above. */
void kpt_synth_defaults(struct kpt_synth_opts *o);

/* Streaming use: create, begin (writes meta and the device, interns names),
 * step until it returns 0 (writing each batch), end (writes the processes,
 * whose lifetimes are known only then), commit. */
struct kpt_synth;

struct kpt_synth_batch {
	const struct kpt_kernel *kernels;
	size_t nkernels;
	const struct kpt_range *ranges;
	size_t nranges;
	const struct kpt_memop *memops;
	size_t nmemops;
	const struct kpt_env_sample *env;
	size_t nenv;
};

int kpt_synth_create(const struct kpt_synth_opts *o, struct kpt_synth **out,
		     struct kpt_diag *d);
void kpt_synth_destroy(struct kpt_synth *s);
int kpt_synth_begin(struct kpt_synth *s, struct kpt_writer *w, struct kpt_diag *d);
/* Next batch (one iteration of one run); 1 while there is one, 0 at the end.
 * The arrays belong to s and are overwritten by the next call. */
int kpt_synth_step(struct kpt_synth *s, struct kpt_synth_batch *b);
int kpt_synth_end(struct kpt_synth *s, struct kpt_writer *w, struct kpt_diag *d);

/* Writes a whole recording to path. */
int kpt_synth_write(const struct kpt_synth_opts *o, const char *path, struct kpt_diag *d);

#endif
