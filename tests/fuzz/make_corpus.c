/* make_corpus.c - writes the seed corpus of the reader fuzzer:
 *   fuzz_make_corpus DIR
 * A small recording with every record kind, a kpt-synth recording, and
 * damaged copies (truncated, bad magic, newer major, flipped bytes).
 * Deterministic: the committed tests/fuzz/corpus/ came from it.
 * all-kinds.kpt doubles as the format-1.0 golden file of test_format
 * (test_reads_committed_1_0_file): keep it when re-minimizing the corpus. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "kpt_format.h"
#include "kpt_format_int.h"
#include "kpt_synth.h"

static int die(const struct kpt_diag *d)
{
	fprintf(stderr, "fuzz_make_corpus: %s\n", d->msg);
	return 2;
}

static int write_all_kinds(const char *path, struct kpt_diag *d)
{
	struct kpt_writer *w;
	struct kpt_device dev = { .index = 0, .name = "NVIDIA H100 80GB HBM3",
				  .slug = "nvidia-h100-80gb-hbm3", .uuid = "GPU-1", .sm_count = 132,
				  .cc_major = 9, .driver_string = "580", .copy_gbps = 3000 };
	struct kpt_process p = { .index = 0, .pid = 7, .rank = KPT_NONE, .start_ns = 5, .end_ns = 9 };
	struct kpt_kernel k[4];
	uint32_t s0, s1, s2;

	if (kpt_writer_create(path, NULL, &w, d) ||
	    kpt_writer_intern_cstr(w, "_ZN3kpt4gemmILi128EEEvPKfPfRKi", &s0, d) ||
	    kpt_writer_intern_cstr(w, "kpt:iter", &s1, d) ||
	    kpt_writer_intern_cstr(w, "dram__bytes_read.sum", &s2, d))
		return -1;
	p.command = s1;
	for (int i = 0; i < 4; i++)
		k[i] = (struct kpt_kernel){ .start_ns = 100u * i, .end_ns = 100u * i + 40, .name = s0,
					    .stream = 7, .grid = { 2, 1, 1 }, .block = { 128, 1, 1 },
					    .correlation = (uint32_t)i, .range = i % 2 ? 1 : KPT_NONE,
					    .graph = KPT_NONE };
	if (kpt_writer_meta(w, "suite", "quick", d) || kpt_writer_device(w, &dev, d) ||
	    kpt_writer_process(w, &p, d) ||
	    kpt_writer_drop(w, &(struct kpt_drop){ 0, 0, 7, 3 }, d) ||
	    kpt_writer_kernels(w, k, 4, d) ||
	    kpt_writer_memops(w, &(struct kpt_memop){ .start_ns = 1, .end_ns = 9, .bytes = 64,
						     .kind = KPT_MEMSET, .stream = 7,
						     .range = KPT_NONE, .graph = KPT_NONE }, 1, d) ||
	    kpt_writer_ranges(w, &(struct kpt_range){ .id = 1, .parent = KPT_NONE, .name = s1,
						     .domain = KPT_NONE, .kind = 1, .end_ns = 500 }, 1, d) ||
	    kpt_writer_events(w, &(struct kpt_event){ .start_ns = 3, .end_ns = 4, .kind = 1,
						     .name = KPT_NONE, .device = KPT_NONE,
						     .stream = KPT_NONE }, 1, d) ||
	    kpt_writer_env(w, &(struct kpt_env_sample){ .t_ns = 1, .sm_mhz = 1980 }, 1, d) ||
	    kpt_writer_counters(w, &(struct kpt_counter){ .kernel_name = s0, .metric = s2,
							 .value = 1.5 }, 1, d) ||
	    kpt_writer_commit(w, d)) {
		kpt_writer_destroy(w);
		return -1;
	}
	kpt_writer_destroy(w);
	return 0;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = malloc(1 << 20);

	*len = f && buf ? fread(buf, 1, 1 << 20, f) : 0;
	if (f)
		fclose(f);
	return buf;
}

static void spit(const char *dir, const char *name, const unsigned char *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
}

/* The same file with every section stored (codec 0): mutations of it reach
 * the column decoders instead of stopping at the zstd checksum. */
static size_t store_sections(const unsigned char *in, size_t len, unsigned char *out, size_t cap)
{
	struct kpt_disk_header h;
	struct kpt_disk_toc *toc;
	size_t off = sizeof h;

	memcpy(&h, in, sizeof h);
	toc = malloc(h.toc_count * sizeof *toc);
	if (!toc || h.toc_offset + h.toc_count * sizeof *toc > len)
		return 0;
	memcpy(toc, in + h.toc_offset, h.toc_count * sizeof *toc);
	for (uint32_t i = 0; i < h.toc_count; i++) {
		size_t got;

		if (off + toc[i].raw_size > cap)
			return 0;
		got = ZSTD_decompress(out + off, toc[i].raw_size, in + toc[i].offset, toc[i].size);
		if (got != toc[i].raw_size)
			return 0;
		toc[i].codec = KPT_CODEC_NONE;
		toc[i].offset = off;
		toc[i].size = got;
		off += got;
	}
	if (off + h.toc_count * sizeof *toc > cap)
		return 0;
	memcpy(out + off, toc, h.toc_count * sizeof *toc);
	h.toc_offset = off;
	h.file_size = off + h.toc_count * sizeof *toc;
	memcpy(out, &h, sizeof h);
	free(toc);
	return h.file_size;
}

int main(int argc, char **argv)
{
	struct kpt_diag d = { 0 };
	struct kpt_synth_opts o;
	char all[4096], syn[4096];
	unsigned char *buf, *copy;
	size_t len;

	if (argc != 2) {
		fprintf(stderr, "usage: fuzz_make_corpus DIR\n");
		return 2;
	}
	snprintf(all, sizeof all, "%s/all-kinds.kpt", argv[1]);
	snprintf(syn, sizeof syn, "%s/synth.kpt", argv[1]);
	if (write_all_kinds(all, &d))
		return die(&d);
	kpt_synth_defaults(&o);
	o.runs = 2;
	o.iterations = 3;
	o.kernels_per_iter = 6;
	o.names = 4;
	if (kpt_synth_write(&o, syn, &d))
		return die(&d);
	buf = slurp(all, &len);
	if (!buf || len < 128 || len > (1 << 20)) {
		fprintf(stderr, "fuzz_make_corpus: cannot read back '%s'\n", all);
		return 2;
	}
	copy = malloc(len);
	if (!copy)
		return 2;
	spit(argv[1], "truncated-half", buf, len / 2);
	spit(argv[1], "header-only", buf, 64);
	memcpy(copy, buf, len);
	copy[0] = 'X';
	spit(argv[1], "bad-magic", copy, len);
	memcpy(copy, buf, len);
	copy[8] = 9;  /* major version */
	spit(argv[1], "newer-major", copy, len);
	for (size_t at = 70; at < len; at += len / 6) {
		char name[64];

		memcpy(copy, buf, len);
		copy[at] ^= 0x21;
		snprintf(name, sizeof name, "flip-%zu", at);
		spit(argv[1], name, copy, len);
	}
	{
		unsigned char *st = malloc(1 << 16);
		size_t n = st ? store_sections(buf, len, st, 1 << 16) : 0;

		if (!n) {
			fprintf(stderr, "fuzz_make_corpus: cannot store sections\n");
			return 2;
		}
		spit(argv[1], "all-kinds-stored.kpt", st, n);
		free(st);
	}
	free(buf);
	free(copy);
	return 0;
}
