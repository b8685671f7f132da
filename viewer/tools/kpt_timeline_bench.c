/* kpt_timeline_bench.c - times the timeline PNG of a recording (the "10
 * million kernels in under 5 s" goal of the viewer).
 *
 * usage: kpt-timeline-bench FILE.kpt OUT.png [WIDTH]
 * Prints one line: kernels, lanes, seconds for open+aggregate+draw+write. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "kpt_format.h"
#include "kpt_timeline.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct kpt_timeline_opts o = { 0 };
	struct kpt_file *f = NULL;
	struct kpt_counts c;
	struct kpt_diag d;
	double t0, t1;
	int rc;

	if (argc < 3) {
		fprintf(stderr, "usage: kpt-timeline-bench FILE.kpt OUT.png [WIDTH]\n");
		return 2;
	}
	o.width = argc > 3 ? atoi(argv[3]) : 0;
	t0 = now();
	if (kpt_file_open(argv[1], &f, &d) < 0 || kpt_file_counts(f, &c, &d) < 0 ||
	    (rc = kpt_timeline_write_png(f, &o, argv[2], &d)) < 0) {
		fprintf(stderr, "kpt-timeline-bench: %s\n", d.msg);
		kpt_file_close(f);
		return 2;
	}
	t1 = now();
	printf("kernels %llu memops %llu ranges %llu: timeline in %.3f s\n", (unsigned long long)c.kernels,
	       (unsigned long long)c.memops, (unsigned long long)c.ranges, t1 - t0);
	kpt_file_close(f);
	return 0;
}
