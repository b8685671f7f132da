/* kpt-hostile KIND FILE [ARGS] - writes a hostile recording with the real
 * .kpt writer, for the CLI tests of untrusted input (test_untrusted*.sh).
 * Small files, generated at test time (no multi-MB files in the tree):
 *
 *   session SLUG SUITE UUID BOOT TIME  a usable 2-run recording whose device
 *                      slug, meta suite, UUID, boot id and time are as given
 *                      ("-" for SUITE: no suite in meta)
 *   names              kernels, ranges and meta full of hostile text: "..",
 *                      '/', ESC, CR/LF, quotes, backquotes, "</script>", "''"
 *   deep N [all]       N nested NVTX ranges, one kernel in the innermost
 *                      ("all": one kernel in every level)
 *   longname BYTES K   K launches of one kernel whose name is BYTES long
 *   cyclic             ranges whose parents form a cycle, kernels inside
 *   corrupt            a session recording (as "session") whose kernel
 *                      section is damaged: header, TOC, devices and meta read
 *   kernels N          N short kernels in 5 runs of one workload
 *
 * Exit 0, or 2 with a message. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_format.h"
#include "kpt_format_int.h"

#define T0 UINT64_C(1800000000000000000)

struct gen {
	struct kpt_writer *w;
	struct kpt_diag d;
	int rc;
};

static void chk(struct gen *g, int rc)
{
	if (g->rc >= 0 && rc < 0)
		g->rc = rc;
}

static uint32_t str(struct gen *g, const char *s)
{
	uint32_t id = KPT_NONE;

	if (g->rc >= 0)
		chk(g, kpt_writer_intern(g->w, s, strlen(s), &id, &g->d));
	return id;
}

/* Device 0, one process per run (runs of them), meta; what every kind has. */
static void frame(struct gen *g, const char *slug, const char *suite, const char *uuid, const char *boot,
		  const char *when, uint32_t runs)
{
	struct kpt_device dev = {
		.index = 0, .name = "NVIDIA H100 80GB HBM3", .slug = slug, .uuid = uuid, .sm_count = 132,
		.cc_major = 9, .mem_bytes = UINT64_C(85031714816), .l2_bytes = 52428800, .sm_clock_max_mhz = 1980,
		.mem_clock_max_mhz = 2619, .mem_bus_width_bits = 5120, .driver_version = 13000,
		.runtime_version = 13000, .driver_string = "580.95.05",
	};
	uint32_t cmd = str(g, "app");

	if (g->rc >= 0)
		chk(g, kpt_writer_device(g->w, &dev, &g->d));
	for (uint32_t r = 0; r < runs && g->rc >= 0; r++) {
		struct kpt_process p = {
			.index = r, .run = r, .pid = 100 + r, .ppid = 1, .rank = KPT_NONE, .exit_status = 0,
			.start_ns = T0 + r * UINT64_C(1000000000), .end_ns = T0 + (r + 1) * UINT64_C(1000000000) - 1,
			.command = cmd,
		};
		chk(g, kpt_writer_process(g->w, &p, &g->d));
	}
	if (g->rc >= 0)
		chk(g, kpt_writer_meta(g->w, "command", "app", &g->d));
	if (g->rc >= 0 && when)
		chk(g, kpt_writer_meta(g->w, "time", when, &g->d));
	if (g->rc >= 0 && boot)
		chk(g, kpt_writer_meta(g->w, "boot_id", boot, &g->d));
	if (g->rc >= 0 && suite && strcmp(suite, "-") != 0)
		chk(g, kpt_writer_meta(g->w, "suite", suite, &g->d));
}

/* k kernels of each of names[0..n) in every run, 10 iterations a run, in
 * range `range` (KPT_NONE: none). */
static void kernels(struct gen *g, const uint32_t *names, size_t n, uint32_t runs, uint32_t iters,
		    uint32_t range)
{
	uint64_t t = T0 + 1000;

	for (uint32_t r = 0; r < runs; r++) {
		t = T0 + r * UINT64_C(1000000000) + 1000;
		for (uint32_t it = 0; it < iters; it++)
			for (size_t i = 0; i < n && g->rc >= 0; i++) {
				struct kpt_kernel k = {
					.start_ns = t, .end_ns = t + 1000 + 10 * i + (it * 7 + r * 3) % 5, .name = names[i],
					.device = 0, .stream = 7, .process = r, .grid = { 1, 1, 1 }, .block = { 32, 1, 1 },
					.correlation = it, .range = range, .graph = KPT_NONE,
				};
				chk(g, kpt_writer_kernels(g->w, &k, 1, &g->d));
				t += 2000 + 10 * i;
			}
	}
}

static const char *const hostile[] = {
	"..", "../../outside", "a/b/../c", "\x1b[31mred\x1b[0m", "cr\rlf\nline", "q'u\"o''te", "back`tick`$(id)",
	"</script><script>alert(1)</script>", "<!-- -->&amp;", "| pipe | md |", "]]>", "%s%n%x", "\\\\back\\slash",
	"\xff\xfe not utf-8 \xc3", "",
};
#define NHOSTILE (sizeof hostile / sizeof hostile[0])

static void gen_names(struct gen *g)
{
	uint32_t names[NHOSTILE], rn[NHOSTILE];

	frame(g, "nvidia-h100-80gb-hbm3", "names", "GPU-0123abcd", "boot-1", "2026-11-25T00:00:00Z", 2);
	for (size_t i = 0; i < NHOSTILE; i++) {
		char buf[128];

		snprintf(buf, sizeof buf, "%s_k%zu", hostile[i], i);
		names[i] = str(g, buf);
		rn[i] = str(g, hostile[i]);
	}
	for (size_t i = 0; i < NHOSTILE && g->rc >= 0; i++) {
		char key[64];

		snprintf(key, sizeof key, "label.h%zu", i);
		chk(g, kpt_writer_meta(g->w, key, hostile[i], &g->d));
	}
	/* one nested chain of hostile range names per run, kernels in the innermost */
	for (uint32_t r = 0; r < 2 && g->rc >= 0; r++)
		for (uint32_t i = 0; i < NHOSTILE && g->rc >= 0; i++) {
			struct kpt_range x = {
				.id = 1 + r * 100 + i, .parent = i ? r * 100 + i : KPT_NONE, .name = rn[i],
				.domain = KPT_NONE, .kind = KPT_RANGE_PUSHPOP, .process = r, .thread = 1,
				.start_ns = T0 + r * UINT64_C(1000000000) + i,
				.end_ns = T0 + (r + 1) * UINT64_C(1000000000) - 1 - i,
			};
			chk(g, kpt_writer_ranges(g->w, &x, 1, &g->d));
		}
	/* run r's kernels sit in its innermost range */
	for (uint32_t r = 0; r < 2 && g->rc >= 0; r++) {
		uint64_t t = T0 + r * UINT64_C(1000000000) + 1000;

		for (uint32_t it = 0; it < 5; it++)
			for (size_t i = 0; i < NHOSTILE && g->rc >= 0; i++) {
				struct kpt_kernel k = {
					.start_ns = t, .end_ns = t + 900 + it, .name = names[i], .device = 0, .stream = 7,
					.process = r, .grid = { 1, 1, 1 }, .block = { 32, 1, 1 }, .correlation = it,
					.range = r * 100 + NHOSTILE, .graph = KPT_NONE,
				};
				chk(g, kpt_writer_kernels(g->w, &k, 1, &g->d));
				t += 1000;
			}
	}
}

static void gen_deep(struct gen *g, uint32_t n, int all)
{
	uint32_t name = str(g, "_Z4deepv"), rn[4];
	static const char *const lvl[] = { "level", "layer", "block", "step" };

	frame(g, "nvidia-h100-80gb-hbm3", "deep", "GPU-0123abcd", "boot-1", "2026-11-25T00:00:00Z", 2);
	for (int i = 0; i < 4; i++)
		rn[i] = str(g, lvl[i]);
	for (uint32_t r = 0; r < 2 && g->rc >= 0; r++) {
		uint64_t base = T0 + r * UINT64_C(1000000000);

		for (uint32_t i = 0; i < n && g->rc >= 0; i++) {
			struct kpt_range x = {
				.id = 1 + r * n + i, .parent = i ? r * n + i : KPT_NONE, .name = rn[i % 4],
				.domain = KPT_NONE, .kind = KPT_RANGE_PUSHPOP, .process = r, .thread = 1,
				.start_ns = base + i, .end_ns = base + 900000000 - i,
			};
			chk(g, kpt_writer_ranges(g->w, &x, 1, &g->d));
		}
		for (uint32_t i = all ? 0 : n - 1; i < n && g->rc >= 0; i++) {
			struct kpt_kernel k = {
				.start_ns = base + n + 10 * (uint64_t)i, .end_ns = base + n + 10 * (uint64_t)i + 5,
				.name = name, .device = 0, .stream = 7, .process = r, .grid = { 1, 1, 1 },
				.block = { 32, 1, 1 }, .correlation = i, .range = 1 + r * n + i, .graph = KPT_NONE,
			};
			chk(g, kpt_writer_kernels(g->w, &k, 1, &g->d));
		}
	}
}

static void gen_longname(struct gen *g, size_t bytes, uint32_t k)
{
	char *s = malloc(bytes + 1);
	uint32_t name;

	if (!s) {
		g->rc = KPT_E_NOMEM;
		return;
	}
	memset(s, 'x', bytes);
	memcpy(s, "_Z", bytes < 2 ? bytes : 2);
	s[bytes] = '\0';
	frame(g, "nvidia-h100-80gb-hbm3", "long", "GPU-0123abcd", "boot-1", "2026-11-25T00:00:00Z", 2);
	name = str(g, s);
	free(s);
	kernels(g, &name, 1, 2, k / 2 ? k / 2 : 1, KPT_NONE);
}

static void gen_cyclic(struct gen *g)
{
	uint32_t name = str(g, "_Z6cyclicv"), a = str(g, "a"), b = str(g, "b");

	frame(g, "nvidia-h100-80gb-hbm3", "cyclic", "GPU-0123abcd", "boot-1", "2026-11-25T00:00:00Z", 2);
	for (uint32_t r = 0; r < 2 && g->rc >= 0; r++) {
		uint64_t base = T0 + r * UINT64_C(1000000000);
		struct kpt_range x[2] = {
			{ 1 + 2 * r, 2 + 2 * r, a, KPT_NONE, KPT_RANGE_PUSHPOP, r, 1, base, base + 1000000 },
			{ 2 + 2 * r, 1 + 2 * r, b, KPT_NONE, KPT_RANGE_PUSHPOP, r, 1, base + 1, base + 999999 },
		};

		chk(g, kpt_writer_ranges(g->w, x, 2, &g->d));
	}
	for (uint32_t r = 0; r < 2 && g->rc >= 0; r++)
		kernels(g, &name, 1, 1, 3, 1 + 2 * r);
}

/* Flips bytes in the middle of the first kernel section of path. */
static int damage_kernels(const char *path)
{
	FILE *f = fopen(path, "r+b");
	struct kpt_disk_header h;
	struct kpt_disk_toc e;
	int done = 0;

	if (!f || fread(&h, sizeof h, 1, f) != 1)
		goto out;
	for (uint32_t i = 0; i < h.toc_count && !done; i++) {
		if (fseek(f, (long)(h.toc_offset + (uint64_t)i * sizeof e), SEEK_SET) != 0 ||
		    fread(&e, sizeof e, 1, f) != 1)
			break;
		if (e.id == KPT_SEC_KERNELS && e.size > 16) {
			static const uint8_t junk[8] = { 0xde, 0xad, 0xbe, 0xef, 0xde, 0xad, 0xbe, 0xef };

			done = fseek(f, (long)(e.offset + e.size / 2), SEEK_SET) == 0 &&
			       fwrite(junk, sizeof junk, 1, f) == 1;
		}
	}
out:
	if (f && fclose(f) != 0)
		done = 0;
	return done ? 0 : -1;
}

static int usage(void)
{
	fprintf(stderr, "usage: kpt-hostile session SLUG SUITE UUID BOOT TIME FILE | names FILE | deep N [all] FILE |\n"
			"       longname BYTES K FILE | cyclic FILE | corrupt FILE | kernels N FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct gen g = { 0 };
	const char *kind = argc > 2 ? argv[1] : "", *out = argv[argc - 1];

	if (argc < 3)
		return usage();
	if (kpt_writer_create(out, NULL, &g.w, &g.d) < 0) {
		fprintf(stderr, "kpt-hostile: %s\n", g.d.msg);
		return 2;
	}
	if ((strcmp(kind, "session") == 0 || strcmp(kind, "corrupt") == 0) &&
	    argc == (kind[0] == 's' ? 8 : 3)) {
		uint32_t names[3] = { str(&g, "_Z4axpyPfS_f"), str(&g, "_Z4gemmv"), str(&g, "copy_kernel") };

		if (kind[0] == 's')
			frame(&g, argv[2], argv[3], argv[4], argv[5], argv[6], 2);
		else
			frame(&g, "nvidia-h100-80gb-hbm3", "default", "GPU-0123abcd", "boot-1", "2026-11-25T00:00:00Z", 2);
		kernels(&g, names, 3, 2, kind[0] == 's' ? 10 : 2000, KPT_NONE);
	} else if (strcmp(kind, "names") == 0 && argc == 3) {
		gen_names(&g);
	} else if (strcmp(kind, "deep") == 0 && (argc == 4 || (argc == 5 && strcmp(argv[3], "all") == 0))) {
		gen_deep(&g, (uint32_t)strtoul(argv[2], NULL, 10), argc == 5);
	} else if (strcmp(kind, "longname") == 0 && argc == 5) {
		gen_longname(&g, strtoull(argv[2], NULL, 10), (uint32_t)strtoul(argv[3], NULL, 10));
	} else if (strcmp(kind, "cyclic") == 0 && argc == 3) {
		gen_cyclic(&g);
	} else if (strcmp(kind, "kernels") == 0 && argc == 4) {
		uint32_t name = str(&g, "_Z4manyv");

		frame(&g, "nvidia-h100-80gb-hbm3", "many", "GPU-0123abcd", "boot-1", "2026-11-25T00:00:00Z", 5);
		kernels(&g, &name, 1, 5, (uint32_t)(strtoull(argv[2], NULL, 10) / 5), KPT_NONE);
	} else {
		kpt_writer_destroy(g.w);
		return usage();
	}
	if (g.rc >= 0)
		g.rc = kpt_writer_commit(g.w, &g.d);
	kpt_writer_destroy(g.w);
	if (g.rc < 0) {
		fprintf(stderr, "kpt-hostile: %s\n", g.d.msg);
		return 2;
	}
	if (strcmp(kind, "corrupt") == 0 && damage_kernels(out) < 0) {
		fprintf(stderr, "kpt-hostile: cannot damage '%s'\n", out);
		return 2;
	}
	return 0;
}
