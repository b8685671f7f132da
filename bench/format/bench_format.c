/* bench_format - throughput and size of the .kpt kernel encoding.
 *
 *   bench_format [--kernels N] [--level L] [-o FILE]
 *
 * Writes N kernel records (default 10 million) made by the kpt-synth
 * generator (400 launches per iteration from 300 distinct mangled names,
 * 10 runs, increasing timestamps, run-to-run and within-run noise), then
 * reads them back with a kernel cursor. Timed: only the writer calls
 * (kpt_writer_kernels + commit) and the reader (open + cursor), not the
 * generator. Reports records/s each way, bytes per kernel on disk, and peak
 * RSS of each phase (VmHWM, reset between phases). Not a test: prints, exits
 * 0 unless something fails.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kpt_format.h"
#include "kpt_synth.h"

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* CPU time of this process: unlike wall time, not inflated when other work
 * shares the cores. */
static double cpu(void)
{
	return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}

/* Peak resident set (VmHWM) in MiB; reset_peak() starts a new phase. */
static double peak_mib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	double kib = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmHWM: %lf kB", &kib) == 1)
			break;
	fclose(f);
	return kib / 1024.0;
}

static void reset_peak(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

static int die(const struct kpt_diag *d)
{
	fprintf(stderr, "bench_format: %s\n", d->msg);
	return 1;
}

int main(int argc, char **argv)
{
	struct kpt_synth_opts o;
	struct kpt_synth *s;
	struct kpt_writer *w;
	struct kpt_writer_opts wo = { 0 };
	struct kpt_file *f;
	struct kpt_kernel_cursor *c;
	struct kpt_synth_batch b;
	struct kpt_diag d = { 0 };
	const struct kpt_kernel *rows;
	struct kpt_kernel *buf;
	const char *path = "bench_format.kpt";
	uint64_t total = 10000000, got = 0, sum = 0;
	size_t nbuf = 0, n, cap = 65536;
	double t0, c0, tw = 0, cw = 0, tr, cr, wpeak, rpeak;
	struct stat st;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--kernels") && i + 1 < argc)
			total = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--level") && i + 1 < argc)
			wo.zstd_level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-o") && i + 1 < argc)
			path = argv[++i];
		else {
			fprintf(stderr, "usage: bench_format [--kernels N] [--level L] [-o FILE]\n");
			return 2;
		}
	}
	kpt_synth_defaults(&o);
	o.kernels_per_iter = 400;
	o.names = 300;
	o.runs = 10;
	o.total_kernels = total;
	buf = malloc(cap * sizeof *buf);
	if (!buf)
		return 1;
	reset_peak();
	if (kpt_synth_create(&o, &s, &d) || kpt_writer_create(path, &wo, &w, &d) ||
	    kpt_synth_begin(s, w, &d))
		return die(&d);
	while (kpt_synth_step(s, &b) > 0) {
		for (size_t i = 0; i < b.nkernels; i++) {
			buf[nbuf++] = b.kernels[i];
			if (nbuf == cap) {
				t0 = now();
				c0 = cpu();
				if (kpt_writer_kernels(w, buf, nbuf, &d))
					return die(&d);
				tw += now() - t0;
				cw += cpu() - c0;
				nbuf = 0;
			}
		}
	}
	t0 = now();
	c0 = cpu();
	if (kpt_writer_kernels(w, buf, nbuf, &d) || kpt_synth_end(s, w, &d) ||
	    kpt_writer_commit(w, &d))
		return die(&d);
	tw += now() - t0;
	cw += cpu() - c0;
	kpt_writer_destroy(w);
	kpt_synth_destroy(s);
	free(buf);
	wpeak = peak_mib();
	if (stat(path, &st))
		return 1;

	reset_peak();
	t0 = now();
	c0 = cpu();
	if (kpt_file_open(path, &f, &d) || kpt_kernel_cursor_create(f, &c, &d))
		return die(&d);
	while ((rc = kpt_kernel_cursor_next(c, &rows, &n, &d)) > 0) {
		for (size_t i = 0; i < n; i++)
			sum += rows[i].end_ns - rows[i].start_ns + rows[i].grid[0];
		got += n;
	}
	if (rc < 0)
		return die(&d);
	kpt_kernel_cursor_destroy(c);
	kpt_file_close(f);
	tr = now() - t0;
	cr = cpu() - c0;
	rpeak = peak_mib();
	if (got != total) {
		fprintf(stderr, "bench_format: read %llu kernels, wrote %llu\n",
			(unsigned long long)got, (unsigned long long)total);
		return 1;
	}
	printf("kernels            %llu\n", (unsigned long long)total);
	printf("zstd level         %d\n", wo.zstd_level ? wo.zstd_level : 3);
	printf("file bytes         %lld\n", (long long)st.st_size);
	printf("bytes per kernel   %.2f\n", (double)st.st_size / (double)total);
	printf("write              %.2f s  %.2f M records/s  (CPU %.2f s: %.2f M records/CPU-s)\n",
	       tw, (double)total / tw / 1e6, cw, (double)total / cw / 1e6);
	printf("read               %.2f s  %.2f M records/s  (CPU %.2f s: %.2f M records/CPU-s)\n",
	       tr, (double)total / tr / 1e6, cr, (double)total / cr / 1e6);
	printf("peak RSS write     %.1f MiB\n", wpeak);
	printf("peak RSS read      %.1f MiB\n", rpeak);
	printf("checksum           %llu\n", (unsigned long long)sum);
	unlink(path);
	return 0;
}
