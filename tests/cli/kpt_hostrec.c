/* kpt-hostrec FILE [SLOW_PCT] - writes a recording whose kernel names,
 * NVTX ranges, device name and meta values are hostile to every output
 * format: terminal escapes (title, clear screen, CR/LF and a fake summary
 * line), C1 controls, NUL-adjacent bytes, invalid UTF-8, quotes,
 * backquotes, "</script>", system("..."), gnuplot's ' and backslashes,
 * Markdown pipes and emphasis. 4 runs (processes) of 12 launches of each
 * of 4 kernels, each kernel in its own range; SLOW_PCT makes kernel 1 that
 * much slower, so a diff has a SLOW row (tables, JUnit failure, plots).
 * For tests/cli/test_hostile_names.sh. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "kpt_format.h"

#define T0 UINT64_C(1700000000000000000)
#define RUNS 4
#define LAUNCHES 12

/* Kept in step with test_hostile_names.sh, which looks for their parts. */
static const char *const kernels[] = {
	"evil\033]0;pwned\007\033[2J\r\n0 SLOW, 0 FAST, 9 SAME: all SAME\r",
	"k<'q'>(\"x\", `id`) </script><script>alert(1)</script> system(\"touch /tmp/kpt-pwned\")",
	"gp' . system('touch /tmp/kpt-pwned-gp') . '\\ back\\slash | pipe | `tick``s` _u_ *s* [l](u) \\",
	"\001\002nul\177\302\233" "31m\377\376 tail",
};

static const char *const ranges[] = {
	"range\033[31m|`r`</td>'q'\"\n",
	"wl.e128.top8.h2048.f768.b32.s1024",
	"r'; print 'gp\\",
	"</script>\377",
};

static const char *const meta[][2] = {
	{ "command", "app\033[31m --red\nrm -rf" },
	{ "host", "box\033]0;title\007" },
	{ "time", "2026-11-21T00:00:00Z\r" },
	{ "suite", "s\302\233" "31m'`|" },
	{ "commit", "c0ffee\033[2J" },
};

static int write_recording(const char *path, double slow_pct, struct kpt_diag *d)
{
	struct kpt_writer *w;
	struct kpt_device dev = {
		.index = 0, .name = "NVIDIA H100\033[2J 80GB | `x` <b>", .slug = "nvidia-h100-80gb-hbm3",
		.uuid = "GPU-0", .sm_count = 132, .cc_major = 9, .driver_string = "580\r.95'`",
	};
	uint32_t kid[4], rid[4], cmd;
	int rc = kpt_writer_create(path, NULL, &w, d);

	if (rc >= 0)
		rc = kpt_writer_intern_cstr(w, "app\033[31m --red\nrm -rf", &cmd, d);
	for (size_t i = 0; i < sizeof meta / sizeof meta[0] && rc >= 0; i++)
		rc = kpt_writer_meta(w, meta[i][0], meta[i][1], d);
	for (int i = 0; i < 4 && rc >= 0; i++)
		if ((rc = kpt_writer_intern_cstr(w, kernels[i], &kid[i], d)) >= 0)
			rc = kpt_writer_intern_cstr(w, ranges[i], &rid[i], d);
	if (rc >= 0)
		rc = kpt_writer_device(w, &dev, d);
	for (uint32_t p = 0; p < RUNS && rc >= 0; p++) {
		uint64_t base = T0 + (uint64_t)p * 100000000;
		struct kpt_process proc = {
			.index = p, .run = p, .pid = 100 + p, .ppid = 1, .rank = KPT_NONE,
			.start_ns = base, .end_ns = base + 50000000, .command = cmd,
		};

		rc = kpt_writer_process(w, &proc, d);
		for (uint32_t i = 0; i < 4 && rc >= 0; i++) {
			struct kpt_range r = {
				.id = p * 4 + i + 1, .parent = KPT_NONE, .name = rid[i], .domain = KPT_NONE,
				.process = p, .thread = 1, .start_ns = base + i * 10000000,
				.end_ns = base + (i + 1) * 10000000,
			};

			rc = kpt_writer_ranges(w, &r, 1, d);
			for (uint32_t l = 0; l < LAUNCHES && rc >= 0; l++) {
				/* 20 us, a little run-to-run and launch-to-launch noise */
				double ns = 20000 * (1 + 0.002 * ((p * 7 + l * 3) % 5)) * (i == 1 ? 1 + slow_pct / 100 : 1);
				uint64_t t = r.start_ns + 1000 + l * 100000;
				struct kpt_kernel k = {
					.start_ns = t, .end_ns = t + (uint64_t)ns, .name = kid[i], .process = p,
					.grid = { 128, 1, 1 }, .block = { 256, 1, 1 }, .range = r.id,
					.graph = KPT_NONE, .correlation = l,
				};

				rc = kpt_writer_kernels(w, &k, 1, d);
			}
		}
	}
	if (rc >= 0)
		rc = kpt_writer_commit(w, d);
	kpt_writer_destroy(w);
	return rc;
}

int main(int argc, char **argv)
{
	struct kpt_diag d;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: kpt-hostrec FILE [SLOW_PCT]\n");
		return 2;
	}
	if (write_recording(argv[1], argc == 3 ? atof(argv[2]) : 0, &d) < 0) {
		fprintf(stderr, "kpt-hostrec: cannot write '%s': %s\n", argv[1], d.msg);
		return 2;
	}
	return 0;
}
