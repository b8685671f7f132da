/* kpt-ctlrec FILE - writes a one-kernel recording whose meta values, device
 * name and kernel name hold control characters (ESC sequences, newline, BEL,
 * a UTF-8 C1 CSI), for tests that text output cannot drive a terminal. */
#include <stdint.h>
#include <stdio.h>

#include "kpt_format.h"

#define T0 UINT64_C(1700000000000000000)

static int write_recording(const char *path, struct kpt_diag *d)
{
	struct kpt_writer *w;
	struct kpt_device dev = {
		.index = 0, .name = "GPU\033[2Jwiped", .slug = "nvidia-h100-80gb-hbm3", .uuid = "GPU-0",
		.sm_count = 132, .cc_major = 9, .driver_string = "580\n.95",
	};
	struct kpt_process p = {
		.run = 0, .pid = 100, .ppid = 1, .rank = KPT_NONE, .start_ns = T0, .end_ns = T0 + 10000,
	};
	struct kpt_kernel k = {
		.start_ns = T0 + 1000, .end_ns = T0 + 2000, .grid = { 1, 1, 1 }, .block = { 32, 1, 1 },
		.range = KPT_NONE, .graph = KPT_NONE,
	};
	int rc = kpt_writer_create(path, NULL, &w, d);

	if (rc >= 0)
		rc = kpt_writer_intern_cstr(w, "app\033[31m --red\nrm -rf", &p.command, d);
	if (rc >= 0)
		rc = kpt_writer_meta(w, "command", "app\033[31m --red\nrm -rf", d);
	if (rc >= 0)
		rc = kpt_writer_meta(w, "host", "box\033]0;title\007", d);
	if (rc >= 0)
		rc = kpt_writer_meta(w, "time", "2026-11-21T00:00:00Z\r", d);
	if (rc >= 0)
		rc = kpt_writer_meta(w, "suite", "s\302\233" "31mc1", d);
	if (rc >= 0)
		rc = kpt_writer_device(w, &dev, d);
	if (rc >= 0)
		rc = kpt_writer_process(w, &p, d);
	if (rc >= 0)
		rc = kpt_writer_intern_cstr(w, "evil\033[1;31m_kernel\nsecond\177line", &k.name, d);
	if (rc >= 0)
		rc = kpt_writer_kernels(w, &k, 1, d);
	if (rc >= 0)
		rc = kpt_writer_commit(w, d);
	kpt_writer_destroy(w);
	return rc;
}

int main(int argc, char **argv)
{
	struct kpt_diag d;

	if (argc != 2) {
		fprintf(stderr, "usage: kpt-ctlrec FILE\n");
		return 2;
	}
	if (write_recording(argv[1], &d) < 0) {
		fprintf(stderr, "kpt-ctlrec: cannot write '%s': %s\n", argv[1], d.msg);
		return 2;
	}
	return 0;
}
