/* test_timeline.c - per-pixel-column aggregation, families, drawing of the
 * timeline (viewer/kpt_timeline.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "kpt_format.h"
#include "kpt_timeline.h"

/* width 1182 -> 1000 columns; window [1000, 11000) -> 10 ns per column */
#define W 1182
#define T0 1000u
#define T1 11000u

static const char *names[] = {
	"_ZN3kpt3mem4copyIfEEvPKT_PS2_m",                 /* family copy */
	"void kpt::attn::fwd<128, true>(bf16 const*)",     /* family fwd */
	"range:outer", "range:inner", "range:deep",
};

static const char *name_of(void *ctx, uint32_t id)
{
	(void)ctx;
	return id < sizeof names / sizeof names[0] ? names[id] : NULL;
}

static struct kpt_kernel kern(uint64_t s, uint64_t e, uint32_t name, uint32_t dev, uint32_t stream)
{
	struct kpt_kernel k;

	memset(&k, 0, sizeof k);
	k.start_ns = s;
	k.end_ns = e;
	k.name = name;
	k.device = dev;
	k.stream = stream;
	k.range = KPT_NONE;
	k.graph = KPT_NONE;
	return k;
}

static struct kpt_timeline *make(void)
{
	struct kpt_timeline_opts o = { .width = W };
	struct kpt_timeline *tl = NULL;

	assert_int_equal(kpt_timeline_create(&o, T0, T1, name_of, NULL, &tl, NULL), 0);
	assert_int_equal(kpt_timeline_columns(tl), 1000);
	assert_true(kpt_timeline_column_ns(tl) == 10.0);
	return tl;
}

static void test_busy_fraction_per_column(void **state)
{
	struct kpt_timeline *tl = make();
	struct kpt_kernel k[] = {
		kern(1000, 1025, 0, 0, 7),    /* cols 0,1 full, col 2 half */
		kern(1100, 1103, 0, 0, 7),    /* col 10: 0.3 */
		kern(1104, 1106, 1, 0, 7),    /* col 10: +0.2 -> 0.5 */
		kern(10995, 11100, 0, 0, 9),  /* clipped: col 999 half */
		kern(20000, 20010, 0, 0, 9),  /* outside: ignored */
		kern(500, 900, 0, 0, 9),      /* outside: ignored */
	};

	(void)state;
	assert_int_equal(kpt_timeline_add_kernels(tl, k, sizeof k / sizeof k[0], NULL), 0);
	assert_int_equal(kpt_timeline_lane_count(tl), 2);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->stream, 7);
	assert_int_equal(kpt_timeline_lane_at(tl, 1)->stream, 9);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->kernels, 3);
	assert_int_equal(kpt_timeline_lane_at(tl, 1)->kernels, 1);
	assert_float_equal(kpt_timeline_busy(tl, 0, 0), 1.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 1), 1.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 2), 0.5, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 3), 0.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 10), 0.5, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 1, 999), 0.5, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 1, 998), 0.0, 1e-9);
	assert_float_equal(kpt_timeline_lane_at(tl, 0)->busy_ns, 30.0, 1e-9);
	assert_float_equal(kpt_timeline_lane_at(tl, 1)->busy_ns, 5.0, 1e-9);
	kpt_timeline_destroy(tl);
}

static void test_busy_sums_many_short_kernels_in_one_column(void **state)
{
	struct kpt_timeline *tl = make();
	struct kpt_kernel k[10];

	(void)state;
	/* ten 1 ns kernels in column 500: busy 1.0; the sum is exact */
	for (int i = 0; i < 10; i++)
		k[i] = kern(T0 + 5000 + (uint64_t)i, T0 + 5001 + (uint64_t)i, 0, 1, 3);
	assert_int_equal(kpt_timeline_add_kernels(tl, k, 10, NULL), 0);
	assert_float_equal(kpt_timeline_busy(tl, 0, 500), 1.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 499), 0.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 501), 0.0, 1e-9);
	kpt_timeline_destroy(tl);
}

static void test_lanes_sorted_by_device_then_stream(void **state)
{
	struct kpt_timeline *tl = make();
	struct kpt_kernel k[] = {
		kern(2000, 2010, 0, 1, 2), kern(2000, 2010, 0, 0, 9), kern(2000, 2010, 0, 0, 3),
	};

	(void)state;
	assert_int_equal(kpt_timeline_add_kernels(tl, k, 3, NULL), 0);
	assert_int_equal(kpt_timeline_lane_count(tl), 3);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->device, 0);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->stream, 3);
	assert_int_equal(kpt_timeline_lane_at(tl, 1)->stream, 9);
	assert_int_equal(kpt_timeline_lane_at(tl, 2)->device, 1);
	kpt_timeline_destroy(tl);
}

static void test_column_colour_is_family_with_most_time(void **state)
{
	struct kpt_timeline *tl = make();
	kpt_rgb copy = kpt_family_color("copy"), fwd = kpt_family_color("fwd");
	struct kpt_kernel a[] = { kern(3000, 3003, 0, 0, 1), kern(3003, 3009, 1, 0, 1) };
	struct kpt_kernel b[] = { kern(3010, 3016, 0, 0, 1), kern(3016, 3018, 1, 0, 1) };

	(void)state;
	assert_true(copy != fwd);   /* the palette separates these two */
	assert_int_equal(kpt_timeline_add_kernels(tl, a, 2, NULL), 0);
	assert_int_equal(kpt_timeline_add_kernels(tl, b, 2, NULL), 0);
	assert_int_equal(kpt_timeline_column_color(tl, 0, 200), fwd);
	assert_int_equal(kpt_timeline_column_color(tl, 0, 201), copy);
	assert_int_equal(kpt_timeline_column_color(tl, 0, 202), 0);
	assert_int_equal(kpt_timeline_family_count(tl), 2);
	/* families by total time: copy 9 ns, fwd 8 ns */
	assert_string_equal(kpt_timeline_family_at(tl, 0)->name, "copy");
	assert_float_equal(kpt_timeline_family_at(tl, 0)->total_ns, 9.0, 1e-9);
	assert_string_equal(kpt_timeline_family_at(tl, 1)->name, "fwd");
	kpt_timeline_destroy(tl);
}

static void test_family_of_mangled_and_demangled_names(void **state)
{
	static const struct {
		const char *name, *family;
	} cases[] = {
		{ "_ZN3kpt3mem4copyIfEEvPKT_PS2_m", "copy" },
		{ "void kpt::mem::copy<float>(float const*, float*, unsigned long)", "copy" },
		{ "_Z6kernelPf", "kernel" },
		{ "_ZL12local_kernelv", "local_kernel" },
		{ "ampere_sgemm_128x64_nn", "ampere_sgemm_128x64_nn" },
		{ "void (anonymous namespace)::softmax_warp<float, 4>(float*)", "softmax_warp" },
		{ "void at::native::vectorized_elementwise_kernel<4, at::native::AddFunctor<float>>(int)",
		  "vectorized_elementwise_kernel" },
		{ "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_10AddFunctorIfEEEEviT0_",
		  "vectorized_elementwise_kernel" },
		{ "", "?" },
	};
	char out[128];

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		kpt_kernel_family(cases[i].name, out, sizeof out);
		assert_string_equal(out, cases[i].family);
	}
	assert_int_equal(kpt_family_color("copy"), kpt_family_color("copy"));
}

static void test_memops_marked_in_strip(void **state)
{
	struct kpt_timeline *tl = make();
	struct kpt_memop m;
	struct kpt_canvas c = { 0 };

	(void)state;
	memset(&m, 0, sizeof m);
	m.start_ns = 6000;
	m.end_ns = 6100;
	m.kind = KPT_MEMSET;
	m.device = 0;
	m.stream = 4;
	assert_int_equal(kpt_timeline_add_memops(tl, &m, 1, NULL), 0);
	assert_int_equal(kpt_timeline_lane_count(tl), 1);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->memops, 1);
	/* memops are not kernel time */
	assert_float_equal(kpt_timeline_busy(tl, 0, 505), 0.0, 1e-9);
	assert_int_equal(kpt_timeline_draw(tl, &c, NULL), 0);
	{
		/* somewhere in column 505 (x = 168 + 505) a memset-grey pixel */
		int found = 0;

		for (int y = 0; y < c.h; y++)
			found |= kpt_canvas_get(&c, 168 + 505, y) == 0x3c3c3c;
		assert_true(found);
	}
	kpt_canvas_release(&c);
	kpt_timeline_destroy(tl);
}

static struct kpt_range range(uint32_t id, uint32_t parent, uint32_t name, uint64_t s, uint64_t e)
{
	struct kpt_range r;

	memset(&r, 0, sizeof r);
	r.id = id;
	r.parent = parent;
	r.name = name;
	r.domain = KPT_NONE;
	r.kind = KPT_RANGE_PUSHPOP;
	r.start_ns = s;
	r.end_ns = e;
	return r;
}

static void test_ranges_drawn_at_their_nesting_level(void **state)
{
	struct kpt_timeline_opts o = { .width = W, .range_rows = 2 };
	struct kpt_timeline *tl = NULL;
	struct kpt_canvas c = { 0 };
	/* listed child first: levels come from parent links, not order */
	struct kpt_range r[] = {
		range(11, 10, 3, 2000, 3000),
		range(10, KPT_NONE, 2, 1000, 11000),
		range(12, 11, 4, 2100, 2200),       /* level 2: hidden */
	};
	struct kpt_kernel k = kern(5000, 5010, 0, 0, 1);

	(void)state;
	assert_int_equal(kpt_timeline_create(&o, T0, T1, name_of, NULL, &tl, NULL), 0);
	assert_int_equal(kpt_timeline_add_kernels(tl, &k, 1, NULL), 0);
	assert_int_equal(kpt_timeline_add_ranges(tl, r, 3, NULL), 0);
	assert_int_equal(kpt_timeline_draw(tl, &c, NULL), 0);
	/* Level 0 row: the outer range's tint over the whole width; level 1:
	 * the inner range from column 100 to 199 only. Rows are 13 px + 2 px
	 * apart starting at y = 8. */
	{
		kpt_rgb bg = 0xf7f7f7;
		int x_in = 168 + 150, x_out = 168 + 650;
		kpt_rgb l0 = kpt_canvas_get(&c, x_out, 8 + 10);
		kpt_rgb l1_in = kpt_canvas_get(&c, x_in, 8 + 15 + 10);
		kpt_rgb l1_out = kpt_canvas_get(&c, x_out, 8 + 15 + 10);

		assert_true(l0 != bg && l0 != 0xffffff);
		assert_true(l1_in != bg && l1_in != 0xffffff);
		assert_int_equal(l1_out, bg);
	}
	kpt_canvas_release(&c);
	kpt_timeline_destroy(tl);
}

static void test_draw_bar_height_follows_busy_fraction(void **state)
{
	struct kpt_timeline *tl = make();
	struct kpt_canvas c = { 0 };
	struct kpt_kernel k[] = { kern(T0, T1, 0, 0, 1) }; /* busy 1.0 everywhere */
	kpt_rgb copy = kpt_family_color("copy");
	int hits = 0;

	(void)state;
	assert_int_equal(kpt_timeline_add_kernels(tl, k, 1, NULL), 0);
	assert_int_equal(kpt_timeline_draw(tl, &c, NULL), 0);
	assert_int_equal(c.w, W);
	/* a full column: 18 px of the family colour */
	for (int y = 0; y < c.h; y++)
		hits += kpt_canvas_get(&c, 168 + 321, y) == copy;
	assert_int_equal(hits, 18);
	kpt_canvas_release(&c);
	kpt_timeline_destroy(tl);
}

static void test_png_written_atomically(void **state)
{
	struct kpt_timeline *tl = make();
	struct kpt_canvas c = { 0 };
	char dir[] = "/tmp/kpt-tl-XXXXXX", path[64], tmp[80];
	unsigned char sig[8] = { 0 };
	FILE *fp;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/t.png", dir);
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	assert_int_equal(kpt_timeline_draw(tl, &c, NULL), 0);
	if (kpt_canvas_write_png(&c, path, NULL) == KPT_E_UNSUPPORTED) {
		/* built without libpng */
		kpt_canvas_release(&c);
		kpt_timeline_destroy(tl);
		rmdir(dir);
		skip();
	}
	fp = fopen(path, "rb");
	assert_non_null(fp);
	assert_int_equal(fread(sig, 1, 8, fp), 8);
	fclose(fp);
	assert_memory_equal(sig, "\x89PNG\r\n\x1a\n", 8);
	assert_int_equal(access(tmp, F_OK), -1);
	unlink(path);
	rmdir(dir);
	kpt_canvas_release(&c);
	kpt_timeline_destroy(tl);
}

static void test_rejects_empty_window_and_bad_width(void **state)
{
	struct kpt_timeline_opts o = { .width = 100 };
	struct kpt_timeline *tl = NULL;
	struct kpt_diag d;

	(void)state;
	assert_int_equal(kpt_timeline_create(NULL, 50, 50, NULL, NULL, &tl, &d), KPT_E_INVAL);
	assert_null(tl);
	assert_non_null(strstr(d.msg, "empty time window"));
	assert_int_equal(kpt_timeline_create(&o, 0, 50, NULL, NULL, &tl, &d), KPT_E_INVAL);
	assert_non_null(strstr(d.msg, "width"));
}

static void test_text_is_cut_with_dots(void **state)
{
	struct kpt_canvas c = { 0 };

	(void)state;
	assert_int_equal(kpt_canvas_init(&c, 200, 20, 0xffffff, NULL), 0);
	assert_int_equal(kpt_canvas_text_width("abc", 1), 17);
	/* 40 px fit 6 characters of 6 px: 4 letters + ".." */
	assert_int_equal(kpt_canvas_text(&c, 0, 0, "abcdefghijkl", 0, 1, 40), 35);
	assert_int_equal(kpt_canvas_text(&c, 0, 10, "ab", 0, 1, 40), 11);
	kpt_canvas_release(&c);
}

/* Starts a recording at path with one device and one process (index 0). */
static struct kpt_writer *begin_file(const char *path)
{
	struct kpt_writer *w = NULL;
	struct kpt_device dev;
	struct kpt_process pr;
	uint32_t cmd;

	assert_int_equal(kpt_writer_create(path, NULL, &w, NULL), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "hand-made", &cmd, NULL), 0);
	memset(&dev, 0, sizeof dev);
	dev.name = "NVIDIA H100 80GB HBM3";
	dev.slug = "nvidia-h100-80gb-hbm3";
	dev.uuid = "";
	dev.driver_string = "";
	assert_int_equal(kpt_writer_device(w, &dev, NULL), 0);
	memset(&pr, 0, sizeof pr);
	pr.rank = KPT_NONE;
	pr.command = cmd;
	pr.end_ns = 20000;
	assert_int_equal(kpt_writer_process(w, &pr, NULL), 0);
	return w;
}

/* A hand-made recording: two kernels on stream 5, one memset, one range. */
static void write_file(const char *path)
{
	struct kpt_writer *w = begin_file(path);
	struct kpt_memop m;
	struct kpt_range r;
	struct kpt_kernel k[2];
	uint32_t a, b, rn;

	assert_int_equal(kpt_writer_intern_cstr(w, "_ZN3kpt3mem4copyIfEEvPKT_PS2_m", &a, NULL), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "_Z4fwd1Pf", &b, NULL), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "step <1> & more", &rn, NULL), 0);
	/* window will be [1000, 11000): 10 ns per column at width 1182 */
	k[0] = kern(1000, 1040, a, 0, 5);     /* cols 0-3 full */
	k[1] = kern(10990, 11000, b, 0, 5);   /* col 999 full: sets the end */
	assert_int_equal(kpt_writer_kernels(w, k, 2, NULL), 0);
	memset(&m, 0, sizeof m);
	m.start_ns = 5000;
	m.end_ns = 5005;
	m.kind = KPT_MEMSET;
	m.stream = 5;
	m.range = KPT_NONE;
	m.graph = KPT_NONE;
	assert_int_equal(kpt_writer_memops(w, &m, 1, NULL), 0);
	r = range(0, KPT_NONE, rn, 1000, 2000);
	assert_int_equal(kpt_writer_ranges(w, &r, 1, NULL), 0);
	assert_int_equal(kpt_writer_commit(w, NULL), 0);
	kpt_writer_destroy(w);
}

static void test_from_file_window_and_busy_fractions(void **state)
{
	char path[] = "/tmp/kpt-tl-file-XXXXXX";
	struct kpt_timeline_opts o = { .width = W };
	struct kpt_timeline *tl = NULL;
	struct kpt_file *f = NULL;
	struct kpt_diag d;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	write_file(path);
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	/* window found from the kernels (the memset lies inside): [1000, 11000) */
	if (kpt_timeline_from_file(f, &o, &tl, &d) != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(kpt_timeline_columns(tl), 1000);
	assert_float_equal(kpt_timeline_column_ns(tl), 10.0, 1e-9);
	assert_int_equal(kpt_timeline_lane_count(tl), 1);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->stream, 5);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->kernels, 2);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->memops, 1);
	for (int c = 0; c < 4; c++)
		assert_float_equal(kpt_timeline_busy(tl, 0, c), 1.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 4), 0.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 500), 0.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 999), 1.0, 1e-9);
	/* the two families got distinct colours, the larger first */
	assert_int_equal(kpt_timeline_family_count(tl), 2);
	assert_string_equal(kpt_timeline_family_at(tl, 0)->name, "copy");
	assert_string_equal(kpt_timeline_family_at(tl, 1)->name, "fwd1");
	assert_true(kpt_timeline_family_at(tl, 0)->color != kpt_timeline_family_at(tl, 1)->color);
	kpt_timeline_destroy(tl);
	/* an explicit window: [1000, 1020) over 1000 columns -> 0.02 ns each */
	o.t0_ns = 1000;
	o.t1_ns = 1020;
	assert_int_equal(kpt_timeline_from_file(f, &o, &tl, &d), 0);
	assert_float_equal(kpt_timeline_busy(tl, 0, 0), 1.0, 1e-9);
	assert_float_equal(kpt_timeline_busy(tl, 0, 999), 1.0, 1e-9);
	kpt_timeline_destroy(tl);
	kpt_file_close(f);
	unlink(path);
}

static void test_from_file_without_kernels_says_nothing_to_draw(void **state)
{
	char path[] = "/tmp/kpt-tl-empty-XXXXXX";
	struct kpt_writer *w = NULL;
	struct kpt_timeline *tl = NULL;
	struct kpt_file *f = NULL;
	struct kpt_diag d;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(kpt_writer_create(path, NULL, &w, NULL), 0);
	assert_int_equal(kpt_writer_meta(w, "tool_version", "test", NULL), 0);
	assert_int_equal(kpt_writer_commit(w, NULL), 0);
	kpt_writer_destroy(w);
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	assert_int_equal(kpt_timeline_from_file(f, NULL, &tl, &d), KPT_E_NOTFOUND);
	assert_null(tl);
	assert_non_null(strstr(d.msg, "nothing to draw"));
	kpt_file_close(f);
	unlink(path);
}

static void test_iteration_window_spans_kernels_launched_inside(void **state)
{
	char path[] = "/tmp/kpt-tl-iter-XXXXXX";
	struct kpt_writer *w;
	struct kpt_range r[5];
	struct kpt_kernel k[5];
	struct kpt_file *f = NULL;
	uint32_t kn, it, site, ord = 9;
	uint64_t t0 = 0, t1 = 0;
	struct kpt_diag d;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	w = begin_file(path);
	assert_int_equal(kpt_writer_intern_cstr(w, "_Z1kv", &kn, NULL), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "kpt:iter", &it, NULL), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "site", &site, NULL), 0);
	/* three iterations (host time), a launch site inside the second */
	r[0] = range(0, KPT_NONE, it, 100, 200);
	r[1] = range(1, KPT_NONE, it, 200, 300);
	r[2] = range(2, KPT_NONE, it, 300, 400);
	r[3] = range(3, 1, site, 210, 220);
	r[4] = range(4, KPT_NONE, site, 500, 600);
	assert_int_equal(kpt_writer_ranges(w, r, 5, NULL), 0);
	/* kernels run later than their launch (GPU time) */
	k[0] = kern(1000, 1100, kn, 0, 1);
	k[0].range = 0;
	k[1] = kern(4000, 4100, kn, 0, 1);
	k[1].range = 1;
	k[2] = kern(5000, 5100, kn, 0, 1);
	k[2].range = 3;                 /* inside iteration 1 through the site */
	k[3] = kern(9000, 9100, kn, 0, 1);
	k[3].range = 2;
	k[4] = kern(9500, 9600, kn, 0, 1);
	k[4].range = 4;
	assert_int_equal(kpt_writer_kernels(w, k, 5, NULL), 0);
	assert_int_equal(kpt_writer_commit(w, NULL), 0);
	kpt_writer_destroy(w);
	assert_int_equal(kpt_file_open(path, &f, &d), 0);
	if (kpt_timeline_iteration_window(f, "kpt:iter", &t0, &t1, &ord, &d) != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(ord, 1);
	assert_int_equal(t0, 4000);
	assert_int_equal(t1, 5100);
	assert_int_equal(kpt_timeline_iteration_window(f, "no-such-range", &t0, &t1, &ord, &d), KPT_E_NOTFOUND);
	kpt_file_close(f);
	unlink(path);
}

/* torch_small.kpt (H100, PyTorch): one memcpy at t=0, the 422 kernels
 * over 400 ms later. The default window is the kernels' span, the memops
 * before it are marked at the lane's left end. */
static void test_default_window_is_the_kernels_span_on_torch_small(void **state)
{
	struct kpt_timeline_opts o = { .width = 1600 };
	struct kpt_timeline *tl = NULL;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *rows;
	const struct kpt_memop *mem;
	struct kpt_canvas c = { 0 };
	struct kpt_file *f = NULL;
	uint64_t k0 = UINT64_MAX, k1 = 0, m0 = UINT64_MAX;
	size_t n, nmem, marks = 0, busy_cols = 0;
	struct kpt_diag d;

	(void)state;
	assert_int_equal(kpt_file_open(KPT_SRC_DIR "/tests/data/torch_small.kpt", &f, &d), 0);
	assert_int_equal(kpt_kernel_cursor_create(f, &cur, &d), 0);
	while (kpt_kernel_cursor_next(cur, &rows, &n, &d) > 0)
		for (size_t i = 0; i < n; i++) {
			k0 = rows[i].start_ns < k0 ? rows[i].start_ns : k0;
			k1 = rows[i].end_ns > k1 ? rows[i].end_ns : k1;
		}
	kpt_kernel_cursor_destroy(cur);
	assert_int_equal(kpt_file_memops(f, &mem, &nmem, &d), 0);
	for (size_t i = 0; i < nmem; i++)
		m0 = mem[i].start_ns < m0 ? mem[i].start_ns : m0;
	assert_true(m0 + 100000000u < k0);   /* the file is as described */
	if (kpt_timeline_from_file(f, &o, &tl, &d) != 0)
		fail_msg("%s", d.msg);
	assert_float_equal(kpt_timeline_column_ns(tl) * kpt_timeline_columns(tl), (double)(k1 - k0), 1.0);
	assert_int_equal(kpt_timeline_lane_count(tl), 1);
	assert_int_equal(kpt_timeline_lane_at(tl, 0)->kernels, 422);
	for (int col = 0; col < kpt_timeline_columns(tl); col++)
		busy_cols += kpt_timeline_busy(tl, 0, col) > 0;
	assert_true(busy_cols > 100);       /* spread over the picture, not 8% of it */
	assert_int_equal(kpt_timeline_draw(tl, &c, &d), 0);
	/* the triangle left of the lane: memops before the window */
	for (int y = 0; y < c.h; y++)
		for (int x = 168 - 8; x < 168; x++)
			marks += kpt_canvas_get(&c, x, y) == 0xc9541a;
	assert_true(marks >= 5);
	kpt_canvas_release(&c);
	kpt_timeline_destroy(tl);
	kpt_file_close(f);
}

static void test_zooms_on_first_repeated_top_level_range_without_kpt_iter(void **state)
{
	struct kpt_file *f = NULL;
	const char *name = NULL;
	uint64_t t0 = 0, t1 = 0;
	uint32_t ord = 9;
	struct kpt_diag d;

	(void)state;
	assert_int_equal(kpt_file_open(KPT_SRC_DIR "/tests/data/torch_small.kpt", &f, &d), 0);
	assert_int_equal(kpt_timeline_iteration_window(f, "kpt:iter", &t0, &t1, &ord, &d), KPT_E_NOTFOUND);
	assert_int_equal(kpt_timeline_repeated_range(f, &name, &d), 0);
	assert_string_equal(name, "kpt_step");
	assert_int_equal(kpt_timeline_iteration_window(f, name, &t0, &t1, &ord, &d), 0);
	assert_int_equal(ord, 1);
	assert_true(t1 > t0 && t1 - t0 < 50000000u);   /* one step: ms, not the 430 ms run */
	kpt_file_close(f);
}

static void test_column_with_any_kernel_time_is_at_least_two_px(void **state)
{
	struct kpt_timeline *tl = make();
	struct kpt_canvas c = { 0 };
	struct kpt_kernel k[] = { kern(T0 + 5000, T0 + 5001, 0, 0, 1) }; /* 1 ns of a 10 ns column */
	kpt_rgb copy = kpt_family_color("copy");
	int hits = 0;

	(void)state;
	assert_int_equal(kpt_timeline_add_kernels(tl, k, 1, NULL), 0);
	assert_int_equal(kpt_timeline_draw(tl, &c, NULL), 0);
	for (int y = 0; y < c.h; y++)
		hits += kpt_canvas_get(&c, 168 + 500, y) == copy;
	assert_int_equal(hits, 2);
	kpt_canvas_release(&c);
	kpt_timeline_destroy(tl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_fraction_per_column),
		cmocka_unit_test(test_default_window_is_the_kernels_span_on_torch_small),
		cmocka_unit_test(test_zooms_on_first_repeated_top_level_range_without_kpt_iter),
		cmocka_unit_test(test_column_with_any_kernel_time_is_at_least_two_px),
		cmocka_unit_test(test_busy_sums_many_short_kernels_in_one_column),
		cmocka_unit_test(test_lanes_sorted_by_device_then_stream),
		cmocka_unit_test(test_column_colour_is_family_with_most_time),
		cmocka_unit_test(test_family_of_mangled_and_demangled_names),
		cmocka_unit_test(test_memops_marked_in_strip),
		cmocka_unit_test(test_ranges_drawn_at_their_nesting_level),
		cmocka_unit_test(test_draw_bar_height_follows_busy_fraction),
		cmocka_unit_test(test_png_written_atomically),
		cmocka_unit_test(test_rejects_empty_window_and_bad_width),
		cmocka_unit_test(test_text_is_cut_with_dots),
		cmocka_unit_test(test_from_file_window_and_busy_fractions),
		cmocka_unit_test(test_from_file_without_kernels_says_nothing_to_draw),
		cmocka_unit_test(test_iteration_window_spans_kernels_launched_inside),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
