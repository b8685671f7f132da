/* kpt_workloads_main.c - kpt-workloads: list and run the registered
 * workloads (kernels/kpt_workload.h).
 *
 *   kpt-workloads --list [--json] [--suite NAME]
 *   kpt-workloads [--suite NAME]... [NAME...] [--iterations N] [--warmup W] [--cold]
 *                 [--settle-us U] [--check] [--plant NAME=PCT]... [--seed S] [--json]
 *   kpt-workloads --calibrate [--settle-us U] [--json]   this GPU's ceilings
 *                 and probes (kpt_calibrate.h); plain output is one
 *                 tab-separated line "uuid copy_gbps bf16_tflops name p_copy
 *                 p_bf16 p_fp8 p_sm_mhz" that kptprof record reads
 * With KPT_CALIBRATE_OUT set (kptprof record sets it for a suite's runs),
 * a run that succeeded appends that line, measured after its workloads in
 * this process, to the file it names.
 *
 * NVTX: one range per workload (its name) around its warm-up ("kpt:warmup")
 * and timed iterations (one "kpt:iter" each); --cold flushes L2 between
 * iterations inside "kpt:flush", outside "kpt:iter"; --settle-us U lets the
 * GPU idle U microseconds before each timed iteration (each then starts from
 * the same power state; for measuring what the power cap does to compute-
 * bound kernels, bench/analyzer/clock). Timing uses CUDA events
 * around each iteration; the table gives the median and the minimum.
 * A workload whose setup answers KPT_E_UNSUPPORTED with no_kernel set (its
 * kernel has no code path on this GPU's compute capability: the e4m3
 * attention forward off Hopper) is skipped with one line on stderr, no row,
 * and does not change the exit status; with a --plant for it, or without
 * no_kernel, the answer is an error (exit 2).
 * Exit status: 0 ok, 1 a check failed, 2 bad usage or a CUDA error,
 * 77 no GPU.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <nvtx3/nvToolsExt.h>

#include "kpt_calibrate.h"
#include "kpt_kernels.h"
#include "kpt_workload.h"

#define PROG "kpt-workloads"
enum { EXIT_OK = 0, EXIT_CHECK = 1, EXIT_USAGE = 2, EXIT_NOGPU = 77 };

struct plant {
	const struct kpt_workload *w;
	int pct;
};

struct opts {
	int list, json, tsv, check, cold, calibrate;
	long iterations, warmup;
	long settle_us;             /* --settle-us: the GPU idles this long before each timed iteration */
	uint64_t seed;
	int seed_given;             /* --seed: else KPT_TIMING_SEED, or random with --check */
	const struct kpt_workload **sel;   /* selected workloads, registry order for suites */
	size_t nsel;
	struct plant *plants;
	size_t nplants;
};

enum opt_id { O_LIST, O_JSON, O_TSV, O_CHECK, O_COLD, O_SUITE, O_ITER, O_WARMUP, O_PLANT, O_SEED, O_HELP,
	      O_CALIBRATE, O_SETTLE };

static const struct {
	const char *name;
	enum opt_id id;
	int has_arg;
} opt_table[] = {
	{ "--list", O_LIST, 0 },        { "--json", O_JSON, 0 },         { "--tsv", O_TSV, 0 },
	         { "--check", O_CHECK, 0 },
	{ "--cold", O_COLD, 0 },        { "--suite", O_SUITE, 1 },       { "--iterations", O_ITER, 1 },
	{ "--warmup", O_WARMUP, 1 },    { "--plant", O_PLANT, 1 },       { "--seed", O_SEED, 1 },
	{ "--help", O_HELP, 0 },        { "-h", O_HELP, 0 },             { "--calibrate", O_CALIBRATE, 0 },
	{ "--settle-us", O_SETTLE, 1 },
};

static const char usage[] =
	"usage: " PROG " --list [--json | --tsv] [--suite NAME] [NAME...]\n"
	"       " PROG " [--suite NAME]... [NAME...] [--iterations N] [--warmup W] [--cold]\n"
	"                     [--settle-us U] [--check] [--plant NAME=PCT]... [--seed S | --seed random] [--json]\n"
	"       " PROG " --calibrate [--settle-us U] [--json]\n";

/* Timing runs use one fixed seed unless --seed says otherwise: every run,
 * process and machine times the same (random, never zero) inputs, so
 * data-dependent launches (MoE routing decides the expert GEMMs' shapes)
 * are the same launches in a baseline and a candidate. --check draws a new
 * seed each time (more inputs checked over many runs). */
#define KPT_TIMING_SEED 20261121ull

static uint64_t random_seed(void)
{
	return (uint64_t)time(NULL) * 0x9E3779B97F4A7C15ull ^ (uint64_t)getpid();
}

static int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROG ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nhint: '" PROG " --help' shows the options, '" PROG " --list' the workloads\n");
	return EXIT_USAGE;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int select_one(struct opts *o, const struct kpt_workload *w)
{
	for (size_t i = 0; i < o->nsel; i++)
		if (o->sel[i] == w)
			return 0;
	o->sel[o->nsel++] = w;
	return 0;
}

static int parse(int argc, char **argv, struct opts *o)
{
	size_t total = kpt_workload_count();
	const char **suites = calloc((size_t)argc, sizeof *suites);
	size_t nsuites = 0;
	int rc = 0;

	o->iterations = 20;
	o->warmup = 3;
	o->seed = KPT_TIMING_SEED;
	o->seed_given = 0;
	o->sel = calloc(total + 1, sizeof *o->sel);
	o->plants = calloc((size_t)argc, sizeof *o->plants);
	if (!suites || !o->sel || !o->plants) {
		free(suites);
		fprintf(stderr, PROG ": out of memory\n");
		return EXIT_USAGE;
	}
	for (int i = 1; i < argc && rc == 0; i++) {
		const char *a = argv[i], *val = NULL;
		size_t k, nopt = sizeof opt_table / sizeof opt_table[0];
		long v;

		if (a[0] != '-') {
			const struct kpt_workload *w = kpt_workload_find(a);

			rc = w ? select_one(o, w) : usage_error("unknown workload '%s'", a);
			continue;
		}
		for (k = 0; k < nopt && strcmp(opt_table[k].name, a) != 0; k++)
			;
		if (k == nopt) {
			rc = usage_error("unknown option '%s'", a);
			break;
		}
		if (opt_table[k].has_arg) {
			if (i + 1 >= argc) {
				rc = usage_error("option '%s' needs a value", a);
				break;
			}
			val = argv[++i];
		}
		switch (opt_table[k].id) {
		case O_LIST: o->list = 1; break;
		case O_JSON: o->json = 1; break;
		case O_TSV: o->tsv = 1; break;
		case O_CHECK: o->check = 1; break;
		case O_COLD: o->cold = 1; break;
		case O_CALIBRATE: o->calibrate = 1; break;
		case O_HELP:
			fputs(usage, stdout);
			free(suites);
			return -1;
		case O_SUITE:
			if (!kpt_wl_suite_find(val))
				rc = usage_error("unknown suite '%s'", val);
			else
				suites[nsuites++] = val;
			break;
		case O_ITER:
			if (parse_long(val, 1, 1000000, &o->iterations))
				rc = usage_error("--iterations wants a whole number from 1 to 1000000, not '%s'", val);
			break;
		case O_SETTLE:
			if (parse_long(val, 0, 1000000, &o->settle_us))
				rc = usage_error("--settle-us wants a whole number of microseconds from 0 to 1000000, not '%s'", val);
			break;
		case O_WARMUP:
			if (parse_long(val, 0, 1000000, &o->warmup))
				rc = usage_error("--warmup wants a whole number from 0 to 1000000, not '%s'", val);
			break;
		case O_SEED:
			o->seed_given = 1;
			if (strcmp(val, "random") == 0)
				o->seed = random_seed();
			else if (parse_long(val, 0, 0x7FFFFFFFFFFFFFFFL, &v))
				rc = usage_error("--seed wants a non-negative whole number or 'random', not '%s'", val);
			else
				o->seed = (uint64_t)v;
			break;
		case O_PLANT: {
			const char *eq = strrchr(val, '=');
			char *name;
			const struct kpt_workload *w;

			if (!eq || parse_long(eq + 1, 0, 10000, &v)) {
				rc = usage_error("--plant wants NAME=PCT with PCT from 0 to 10000, not '%s'", val);
				break;
			}
			if (!(name = strndup(val, (size_t)(eq - val)))) {
				rc = usage_error("out of memory at '%s'", val);
				break;
			}
			w = kpt_workload_find(name);
			if (!w)
				rc = usage_error("--plant: unknown workload '%s'", name);
			else if (!w->plantable)
				rc = usage_error("--plant: workload '%s' has no planted-slowdown knob", name);
			else
				o->plants[o->nplants++] = (struct plant){ w, (int)v };
			free(name);
			break;
		}
		}
	}
	/* Suites add their members in registry order, before named ones. */
	if (rc == 0 && nsuites) {
		const struct kpt_workload **named = o->sel;
		size_t nnamed = o->nsel;

		o->sel = calloc(total + 1, sizeof *o->sel);
		o->nsel = 0;
		for (size_t i = 0; o->sel && i < total; i++)
			for (size_t s = 0; s < nsuites; s++)
				if (kpt_workload_in_suite(kpt_workload_at(i), suites[s])) {
					select_one(o, kpt_workload_at(i));
					break;
				}
		for (size_t i = 0; o->sel && i < nnamed; i++)
			select_one(o, named[i]);
		free(named);
		if (!o->sel)
			rc = usage_error("out of memory");
	}
	if (rc == 0 && o->check && !o->seed_given)
		o->seed = random_seed();
	free(suites);
	return rc;
}

/* With no selection every workload is listed. O(selected). */
static int is_listed(const struct opts *o, const struct kpt_workload *w)
{
	for (size_t k = 0; k < o->nsel; k++)
		if (o->sel[k] == w)
			return 1;
	return o->nsel == 0;
}

static void list_workloads(const struct opts *o)
{
	size_t total = kpt_workload_count(), nsuites;
	const struct kpt_wl_suite *suites = kpt_wl_suites(&nsuites);
	int first = 1;

	/* --tsv: name, family, flops, bytes, suites; tab-separated, full
	 * precision, no header. `kptprof record` reads it into meta. */
	if (o->tsv) {
		for (size_t i = 0; i < total; i++) {
			const struct kpt_workload *w = kpt_workload_at(i);

			if (is_listed(o, w))
				printf("%s\t%s\t%.17g\t%.17g\t%s\n", w->name, w->family, w->flops, w->bytes, w->suites);
		}
		return;
	}
	if (o->json)
		printf("{\"suites\": [");
	for (size_t s = 0; o->json && s < nsuites; s++)
		printf("%s{\"name\": \"%s\", \"summary\": \"%s\"}", s ? ", " : "", suites[s].name, suites[s].summary);
	if (o->json)
		printf("],\n \"workloads\": [\n");
	else
		printf("%-52s %-9s %12s %14s  %s\n", "NAME", "FAMILY", "FLOPS", "BYTES", "SUITES");
	for (size_t i = 0; i < total; i++) {
		const struct kpt_workload *w = kpt_workload_at(i);

		if (!is_listed(o, w))
			continue;
		if (o->json)
			printf("%s  {\"name\": \"%s\", \"family\": \"%s\", \"flops\": %.17g, \"bytes\": %.17g, "
			       "\"plantable\": %s, \"suites\": \"%s\"}",
			       first ? "" : ",\n", w->name, w->family, w->flops, w->bytes,
			       w->plantable ? "true" : "false", w->suites);
		else
			printf("%-52s %-9s %12.4g %14.6g  %s\n", w->name, w->family, w->flops, w->bytes, w->suites);
		first = 0;
	}
	if (o->json)
		printf("\n]}\n");
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return (x > y) - (x < y);
}

struct gpu {
	cudaStream_t stream;
	void *flush;              /* --cold: 2x L2, rewritten between iterations */
	size_t flush_bytes;
	cudaEvent_t *ev;          /* 2 per iteration */
	float *ms;
};

static int fail(const struct kpt_workload *w, const struct kpt_diag *d)
{
	fprintf(stderr, PROG ": %s%s%s\n", w ? w->name : "", w ? ": " : "", d->msg);
	if (d->hint[0])
		fprintf(stderr, "hint: %s\n", d->hint);
	return d->code == KPT_E_MISMATCH ? EXIT_CHECK : d->code == KPT_E_NODEV ? EXIT_NOGPU : EXIT_USAGE;
}

static int plant_of(const struct opts *o, const struct kpt_workload *w)
{
	int pct = 0;

	for (size_t i = 0; i < o->nplants; i++)
		if (o->plants[i].w == w)
			pct = o->plants[i].pct;
	return pct;
}

/* FNV-1a: each workload gets its own inputs from one --seed. */
static uint64_t name_hash(const char *s)
{
	uint64_t h = 0xCBF29CE484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001B3ull;
	return h;
}

/* Runs one workload; prints its result row. Returns an exit status. */
static int run_one(const struct opts *o, struct gpu *g, const struct kpt_workload *w, int *first_row)
{
	struct kpt_wl_ctx c = { .stream = g->stream, .seed = kpt_wl_subseed(o->seed, name_hash(w->name)),
				.plant_pct = plant_of(o, w) };
	struct kpt_diag d;
	int rc;

	kpt_diag_clear(&d);
	nvtxRangePushA(w->name);
	if ((rc = w->setup(w, &c, &d)) < 0) {
		/* only "no kernel for this GPU" (c.no_kernel), and not with a
		 * plant: any other refusal, or a plant that cannot be applied
		 * (the MoE plant where the plan is not the wgmma FFN), is an
		 * error */
		if (rc == KPT_E_UNSUPPORTED && c.no_kernel && c.plant_pct == 0) {
			fprintf(stderr, PROG ": %s: skipped: %s\n", w->name, d.msg);
			rc = 0;
		}
		goto out;
	}
	if (o->check) {
		if (!w->check) {
			fprintf(stderr, PROG ": %s: has no check, skipped\n", w->name);
			goto out;
		}
		if ((rc = w->poison(w, &c, &d)) < 0 || (rc = w->run(w, &c, &d)) < 0 || (rc = w->check(w, &c, &d)) < 0)
			goto out;
		if (o->json)
			printf("%s  {\"name\": \"%s\", \"check\": \"ok\"}", *first_row ? "" : ",\n", w->name);
		else
			printf("ok    %s\n", w->name);
		*first_row = 0;
		goto out;
	}
	nvtxRangePushA("kpt:warmup");
	for (long i = 0; i < o->warmup && rc == 0; i++)
		rc = w->run(w, &c, &d);
	nvtxRangePop();
	for (long i = 0; i < o->iterations && rc == 0; i++) {
		if (o->cold) {
			nvtxRangePushA("kpt:flush");
			rc = kpt_memset(g->flush, (int)(i & 0xFF), g->flush_bytes, 0, g->stream, &d);
			nvtxRangePop();
		}
		if (o->settle_us && rc == 0 && (rc = KPT_CUDA(&d, cudaStreamSynchronize(g->stream))) == 0) {
			/* --settle-us: the GPU idles before each timed iteration, so
			 * each starts from the same power state instead of from
			 * wherever the power controller left the last one (compute-
			 * bound kernels under the power cap: bench/analyzer/clock) */
			struct timespec ts = { o->settle_us / 1000000, (o->settle_us % 1000000) * 1000 };

			while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
				;
		}
		nvtxRangePushA("kpt:iter");
		if (rc == 0 && (rc = KPT_CUDA(&d, cudaEventRecord(g->ev[2 * i], g->stream))) == 0 &&
		    (rc = w->run(w, &c, &d)) == 0)
			rc = KPT_CUDA(&d, cudaEventRecord(g->ev[2 * i + 1], g->stream));
		nvtxRangePop();
	}
	if (rc == 0)
		rc = KPT_CUDA(&d, cudaStreamSynchronize(g->stream));
	for (long i = 0; i < o->iterations && rc == 0; i++)
		rc = KPT_CUDA(&d, cudaEventElapsedTime(&g->ms[i], g->ev[2 * i], g->ev[2 * i + 1]));
	if (rc == 0) {
		double med, mn;

		qsort(g->ms, (size_t)o->iterations, sizeof *g->ms, cmp_float);
		med = (o->iterations % 2 ? g->ms[o->iterations / 2]
					 : 0.5 * (g->ms[o->iterations / 2 - 1] + g->ms[o->iterations / 2])) * 1e-3;
		mn = g->ms[0] * 1e-3;
		if (o->json)
			printf("%s  {\"name\": \"%s\", \"iterations\": %ld, \"median_s\": %.6e, \"min_s\": %.6e, "
			       "\"bytes\": %.17g, \"flops\": %.17g, \"gbps\": %.2f, \"tflops\": %.2f, \"plant_pct\": %d}",
			       *first_row ? "" : ",\n", w->name, o->iterations, med, mn, w->bytes, w->flops,
			       w->bytes / med * 1e-9, w->flops / med * 1e-12, c.plant_pct);
		else
			printf("%-52s %6ld %12.2f %12.2f %10.1f %10.1f\n", w->name, o->iterations, med * 1e6, mn * 1e6,
			       w->bytes / med * 1e-9, w->flops / med * 1e-12);
		*first_row = 0;
	}
out:
	nvtxRangePop();
	if (w->teardown)
		w->teardown(w, &c);
	return rc < 0 ? fail(w, &d) : EXIT_OK;
}

static int gpu_open(const struct opts *o, struct gpu *g)
{
	struct kpt_diag d;
	struct cudaDeviceProp p;
	int n = 0, dev = 0, l2 = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	kpt_diag_clear(&d);
	if (e != cudaSuccess || n == 0) {
		fprintf(stderr, PROG ": no CUDA GPU here (%s)\n", e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
		return EXIT_NOGPU;
	}
	if (KPT_CUDA(&d, cudaGetDevice(&dev)) < 0 || KPT_CUDA(&d, cudaGetDeviceProperties(&p, dev)) < 0 ||
	    KPT_CUDA(&d, cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev)) < 0 ||
	    KPT_CUDA(&d, cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking)) < 0)
		return fail(NULL, &d);
	fprintf(stderr, PROG ": %s, %d SMs, L2 %d MiB, seed %llu\n", p.name, p.multiProcessorCount, l2 >> 20,
		(unsigned long long)o->seed);
	if (o->cold) {
		g->flush_bytes = 2 * (size_t)l2;
		if (KPT_CUDA(&d, cudaMalloc(&g->flush, g->flush_bytes)) < 0)
			return fail(NULL, &d);
	}
	g->ev = calloc(2 * (size_t)o->iterations, sizeof *g->ev);
	g->ms = calloc((size_t)o->iterations, sizeof *g->ms);
	if (!g->ev || !g->ms) {
		fprintf(stderr, PROG ": out of memory\n");
		return EXIT_USAGE;
	}
	for (long i = 0; i < 2 * o->iterations; i++)
		if (KPT_CUDA(&d, cudaEventCreate(&g->ev[i])) < 0)
			return fail(NULL, &d);
	return EXIT_OK;
}

/* One line of ceilings: "uuid copy bf16 name p_copy p_bf16 p_fp8 p_mhz",
 * tab-separated (kptprof record reads the first three of the cache and all
 * eight of a run's KPT_CALIBRATE_OUT). */
static void ceilings_line(FILE *f, const struct kpt_ceilings *c)
{
	fprintf(f, "%s\t%.1f\t%.1f\t%s\t%.1f\t%.1f\t%.1f\t%.1f\n", c->uuid, c->copy_gbps, c->bf16_tflops, c->name,
		c->p_copy_gbps, c->p_bf16_tflops, c->p_fp8_tflops, c->p_sm_mhz);
}

static int calibrate(const struct opts *o, struct gpu *g)
{
	struct kpt_ceilings c;
	struct kpt_diag d;

	kpt_diag_clear(&d);
	nvtxRangePushA("kpt:calibrate");
	if (kpt_calibrate(g->stream, o->settle_us, &c, &d) < 0) {
		nvtxRangePop();
		return fail(NULL, &d);
	}
	nvtxRangePop();
	if (o->json)
		printf("{\"gpu\": \"%s\", \"uuid\": \"%s\", \"copy_gbps\": %.1f, \"bf16_tflops\": %.1f, "
		       "\"probe_copy_gbps\": %.1f, \"probe_bf16_tflops\": %.1f, \"probe_fp8_tflops\": %.1f, "
		       "\"probe_sm_mhz\": %.1f}\n",
		       c.name, c.uuid, c.copy_gbps, c.bf16_tflops, c.p_copy_gbps, c.p_bf16_tflops, c.p_fp8_tflops,
		       c.p_sm_mhz);
	else
		ceilings_line(stdout, &c);
	return EXIT_OK;
}

/* A run of a suite recording (KPT_CALIBRATE_OUT set by kptprof record):
 * after the workloads, in this process, at this run's idle gap, the probes
 * appended as one line to that file (opened without following a link).
 * Outside every kpt:iter range, so no key of the recording. Best effort:
 * a failure is one line on stderr and changes no exit status. */
static void calibrate_after_run(const struct opts *o, struct gpu *g)
{
	const char *path = getenv(KPT_ENV_CALIBRATE_OUT);
	struct kpt_ceilings c;
	struct kpt_diag d;
	struct stat st = { 0 };
	FILE *f;
	int fd, rc;

	if (!path || !*path || o->check || o->list)
		return;
	kpt_diag_clear(&d);
	nvtxRangePushA("kpt:calibrate");
	rc = kpt_calibrate(g->stream, o->settle_us, &c, &d);
	nvtxRangePop();
	if (rc < 0) {
		fprintf(stderr, PROG ": calibration after the run failed: %s\n", d.msg);
		return;
	}
	/* a plain file only: never a device, a FIFO or through a link */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600)) < 0 ||
	    fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "a"))) {
		fprintf(stderr, PROG ": cannot write the calibration to '%s': %s\n", path,
			fd >= 0 && !S_ISREG(st.st_mode) ? "not a plain file" : strerror(errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	ceilings_line(f, &c);
	if (fclose(f) != 0)
		fprintf(stderr, PROG ": cannot write the calibration to '%s': %s\n", path, strerror(errno));
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct gpu g = { 0 };
	int rc, worst = EXIT_OK, first = 1;

	rc = parse(argc, argv, &o);
	if (rc != 0)
		return rc < 0 ? EXIT_OK : rc;
	if (o.list) {
		list_workloads(&o);
		return EXIT_OK;
	}
	if (o.calibrate && o.nsel)
		return usage_error("--calibrate runs alone: no workloads or suites with it");
	if (o.nsel == 0 && !o.calibrate)
		return usage_error("nothing to run: name a workload or a --suite");
	if ((rc = gpu_open(&o, &g)) != EXIT_OK)
		return rc;
	if (o.calibrate)
		return calibrate(&o, &g);
	if (o.json)
		printf("[\n");
	else if (!o.check)
		printf("%-52s %6s %12s %12s %10s %10s\n", "NAME", "ITERS", "MEDIAN_US", "MIN_US", "GB/S", "TFLOP/S");
	for (size_t i = 0; i < o.nsel; i++) {
		rc = run_one(&o, &g, o.sel[i], &first);
		fflush(stdout);
		if (rc == EXIT_NOGPU)
			return rc;
		if (rc == EXIT_USAGE || (rc == EXIT_CHECK && worst == EXIT_OK))
			worst = rc;
	}
	if (o.json)
		printf("\n]\n");
	fflush(stdout);
	if (worst == EXIT_OK)
		calibrate_after_run(&o, &g);
	for (long i = 0; i < 2 * o.iterations; i++)
		cudaEventDestroy(g.ev[i]);
	cudaFree(g.flush);
	cudaStreamDestroy(g.stream);
	free(g.ev);
	free(g.ms);
	free(o.sel);
	free(o.plants);
	return worst;
}
