/* test_diff.c - the decision rule and kernel matching (analyzer/diff/kpt_diff.h).
 *
 * Recordings are written here with the .kpt writer so every number is
 * known: 4 kernel sites per iteration (a long copy, a short add, a gemm
 * launched twice per iteration, a C-named softmax), lognormal run-to-run and
 * within-run noise from a fixed seed, NVTX ranges (workload, kpt:iter, a
 * launch-site range), NVML-like env samples.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "kpt_diff.h"
#include "kpt_diff_report.h"
#include "kpt_format.h"

struct gen {
	const char *gpu;
	uint32_t runs, iters;
	double run_sigma, within_sigma;   /* fractions */
	const char *slow;                 /* name substring to slow down */
	double slow_pct;
	int no_iter;                      /* no kpt:iter ranges */
	uint32_t copy_grid;               /* grid.x of copy (default 1024) */
	uint64_t throttle_bits;           /* set on env samples of run throttle_run, 2nd half */
	int throttle_run;                 /* -1: none */
	int low_clock_run;                /* -1: none; 2nd half of samples at 50% clock */
	int omit_softmax;
	int extra_kernel;
	int warmup;                       /* copy launches in a kpt:warmup range per run */
	int setup;                        /* extra launches per run in the workload range,
					     outside kpt:iter (input set-up) */
	const char *driver;               /* NVML driver string (default "580.1") */
	int env_reversed;                 /* write each run's env samples newest first */
	int swap_gemm;                    /* write gemm's 2nd launch before its 1st (later start) */
	uint32_t sm_mhz;                  /* SM clock of the env samples (default 1980) */
	uint32_t copy2_grid;              /* when set: a second copy launch with this grid */
	int clock_wobble;                 /* env samples alternate 1980 and 1900 MHz */
	uint64_t seed;
};

static void gen_defaults(struct gen *g)
{
	memset(g, 0, sizeof *g);
	g->gpu = "NVIDIA H100 80GB HBM3";
	g->runs = 5;
	g->iters = 20;
	g->run_sigma = 0.003;
	g->within_sigma = 0.003;
	g->throttle_run = -1;
	g->low_clock_run = -1;
	g->copy_grid = 1024;
	g->seed = 1;
}

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_normal(uint64_t *s)
{
	double u1 = ((rng_next(s) >> 11) + 1.0) / 9007199254740993.0;
	double u2 = (rng_next(s) >> 11) / 9007199254740992.0;

	return sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

struct site_def {
	const char *mangled;
	double ns;
	int in_site_range;
};

static const struct site_def sites[] = {
	{ "_Z4copyPfPKfm", 300000, 1 },
	{ "_Z3addPfPKfS1_m", 8000, 0 },
	{ "_Z4gemmILi128EEvPKfS1_Pf", 50000, 0 },
	{ "softmax_kernel", 20000, 0 },
};
#define NSITES 4

static void write_rec(const char *path, const struct gen *g)
{
	struct kpt_writer *w = NULL;
	struct kpt_diag d = { 0 };
	uint32_t name_id[NSITES + 1], wl, iter, site, extra, warm;
	uint64_t seed = g->seed;
	uint32_t range_id = 0;
	char slug[128];
	struct kpt_device dev = { 0 };

	assert_int_equal(kpt_writer_create(path, NULL, &w, &d), 0);
	for (int i = 0; i < NSITES; i++)
		assert_int_equal(kpt_writer_intern_cstr(w, sites[i].mangled, &name_id[i], &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "_Z5extraPf", &extra, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "wl.test", &wl, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "kpt:iter", &iter, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "copy_site", &site, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "kpt:warmup", &warm, &d), 0);
	assert_int_equal(kpt_writer_meta(w, "suite", "unit", &d), 0);
	kpt_slug(g->gpu, slug, sizeof slug);
	dev.name = g->gpu;
	dev.slug = slug;
	dev.uuid = "";
	dev.driver_string = g->driver ? g->driver : "580.1";
	dev.driver_version = 13000;
	dev.runtime_version = 13000;
	dev.sm_count = 132;
	assert_int_equal(kpt_writer_device(w, &dev, &d), 0);
	for (uint32_t r = 0; r < g->runs; r++) {
		struct kpt_process p = { 0 };
		double run_factor[NSITES + 1];
		uint64_t t = (uint64_t)(r + 1) * 1000000000ull, t0 = t;
		struct kpt_range wr = { 0 };

		p.index = r;
		p.run = r;
		p.pid = 1000 + r;
		p.rank = KPT_NONE;
		p.command = KPT_NONE;
		assert_int_equal(kpt_writer_process(w, &p, &d), 0);
		for (int s = 0; s <= NSITES; s++)
			run_factor[s] = exp(g->run_sigma * rng_normal(&seed));
		wr.id = range_id++;
		wr.parent = KPT_NONE;
		wr.name = wl;
		wr.domain = KPT_NONE;
		wr.kind = KPT_RANGE_PUSHPOP;
		wr.process = r;
		wr.thread = 1;
		wr.start_ns = t;
		if (g->warmup) {
			struct kpt_range wu = wr;

			wu.id = range_id++;
			wu.parent = wr.id;
			wu.name = warm;
			for (int i = 0; i < g->warmup; i++) {
				struct kpt_kernel k = { 0 };

				k.start_ns = t;
				k.end_ns = t + 900000; /* cold: 3x slower */
				k.name = name_id[0];
				k.process = r;
				k.grid[0] = g->copy_grid;
				k.grid[1] = k.grid[2] = 1;
				k.block[0] = 256;
				k.block[1] = k.block[2] = 1;
				k.range = wu.id;
				k.graph = KPT_NONE;
				assert_int_equal(kpt_writer_kernels(w, &k, 1, &d), 0);
				t = k.end_ns + 1000;
			}
			wu.end_ns = t;
			assert_int_equal(kpt_writer_ranges(w, &wu, 1, &d), 0);
		}
		for (int i = 0; i < g->setup; i++) {
			struct kpt_kernel k = { 0 };

			k.start_ns = t;
			k.end_ns = t + 5000 + (uint64_t)(rng_next(&seed) % 5000); /* noisy */
			k.name = extra;
			k.process = r;
			k.grid[0] = k.grid[1] = k.grid[2] = 1;
			k.block[0] = 32;
			k.block[1] = k.block[2] = 1;
			k.range = wr.id;
			k.graph = KPT_NONE;
			assert_int_equal(kpt_writer_kernels(w, &k, 1, &d), 0);
			t = k.end_ns + 1000;
		}
		for (uint32_t it = 0; it < g->iters; it++) {
			struct kpt_kernel held = { 0 };
			struct kpt_range ir = wr;
			uint32_t parent = wr.id;

			if (!g->no_iter) {
				ir.id = range_id++;
				ir.parent = wr.id;
				ir.name = iter;
				ir.start_ns = t;
				parent = ir.id;
			}
			for (int s = 0; s < NSITES + 2; s++) {
				int sd = s < 3 ? s : s == 3 ? 2 : s == 4 ? 3 : 4; /* gemm twice */
				struct kpt_kernel k = { 0 };
				struct kpt_range sr = ir;
				double ns;

				if (sd == 3 && g->omit_softmax)
					continue;
				if (sd == 4 && !g->extra_kernel)
					continue;
				ns = sd == 4 ? 12000 : sites[sd].ns * (s == 3 ? 1.6 : 1.0);
				ns *= run_factor[sd] * exp(g->within_sigma * rng_normal(&seed));
				if (g->slow && sd < 4 && strstr(sites[sd].mangled, g->slow))
					ns *= 1 + g->slow_pct / 100;
				k.start_ns = t;
				k.end_ns = t + (uint64_t)ns;
				k.name = sd == 4 ? extra : name_id[sd];
				k.process = r;
				k.grid[0] = sd == 0 ? g->copy_grid : 256;
				k.grid[1] = k.grid[2] = 1;
				k.block[0] = 256;
				k.block[1] = k.block[2] = 1;
				k.range = parent;
				k.graph = KPT_NONE;
				if (sd < 4 && sites[sd].in_site_range) {
					sr.id = range_id++;
					sr.parent = parent;
					sr.name = site;
					sr.start_ns = t;
					sr.end_ns = k.end_ns;
					k.range = sr.id;
					assert_int_equal(kpt_writer_ranges(w, &sr, 1, &d), 0);
				}
				if (sd == 0 && g->copy2_grid) {
					struct kpt_kernel k2 = k;

					k2.grid[0] = g->copy2_grid;
					k2.start_ns = k.end_ns + 500;
					k2.end_ns = k2.start_ns + 150000;
					assert_int_equal(kpt_writer_kernels(w, &k2, 1, &d), 0);
					t = k2.end_ns;
				}
				if (g->swap_gemm && s == 2) {
					held = k;
				} else {
					assert_int_equal(kpt_writer_kernels(w, &k, 1, &d), 0);
					if (g->swap_gemm && s == 3)
						assert_int_equal(kpt_writer_kernels(w, &held, 1, &d), 0);
				}
				t = (t > k.end_ns ? t : k.end_ns) + 1000;
			}
			if (!g->no_iter) {
				ir.end_ns = t;
				assert_int_equal(kpt_writer_ranges(w, &ir, 1, &d), 0);
			}
		}
		wr.end_ns = t;
		assert_int_equal(kpt_writer_ranges(w, &wr, 1, &d), 0);
		for (uint64_t k = 0; t0 + k * 500000 <= t; k++) {
			struct kpt_env_sample e = { 0 };
			uint64_t last = (t - t0) / 500000;
			uint64_t et = t0 + (g->env_reversed ? last - k : k) * 500000;
			int second_half = et > t0 + (t - t0) / 2;

			e.t_ns = et;
			e.process = r;
			e.sm_mhz = g->sm_mhz ? g->sm_mhz : 1980;
			if (g->clock_wobble && k % 2)
				e.sm_mhz = 1900;
			e.mem_mhz = 2619;
			e.temp_c = 40;
			e.power_mw = 300000;
			if ((int)r == g->throttle_run && second_half)
				e.throttle = g->throttle_bits;
			if ((int)r == g->low_clock_run && second_half)
				e.sm_mhz = 990;
			assert_int_equal(kpt_writer_env(w, &e, 1, &d), 0);
		}
	}
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	kpt_writer_destroy(w);
}

struct paths {
	char dir[64];
	char a[96], b[96];
};

static int setup(void **state)
{
	struct paths *p = calloc(1, sizeof *p);

	strcpy(p->dir, "/tmp/kpt-test-diff.XXXXXX");
	if (!mkdtemp(p->dir))
		return -1;
	snprintf(p->a, sizeof p->a, "%s/a.kpt", p->dir);
	snprintf(p->b, sizeof p->b, "%s/b.kpt", p->dir);
	*state = p;
	return 0;
}

static int teardown(void **state)
{
	struct paths *p = *state;

	unlink(p->a);
	unlink(p->b);
	rmdir(p->dir);
	free(p);
	return 0;
}

static struct kpt_diff *diff2(struct paths *p, const struct gen *ga, const struct gen *gb,
			      const struct kpt_diff_opts *o)
{
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };

	/* Most tests here exercise the run-to-run part of the rule: without
	 * options, the between-session part is made negligible. It has tests
	 * of its own (test_sessions_*, test_one_session_*). */
	static const struct kpt_diff_opts within_only = { .between_prior_pct = 0.001, .between_floor_ns = 1e-6 };

	write_rec(p->a, ga);
	write_rec(p->b, gb);
	if (kpt_diff_paths(p->a, p->b, o ? o : &within_only, &df, &d) < 0)
		fail_msg("diff failed: %s", d.msg);
	return df;
}

static const struct kpt_diff_row *find_row(const struct kpt_diff *df, const char *name, uint32_t ordinal)
{
	for (size_t i = 0; i < df->nrows; i++)
		if (strcmp(df->rows[i].name, name) == 0 && df->rows[i].ordinal == ordinal)
			return &df->rows[i];
	return NULL;
}

static void test_self_diff_is_all_same(void **state)
{
	struct gen g;
	struct kpt_diff *df;

	gen_defaults(&g);
	df = diff2(*state, &g, &g, NULL);
	assert_int_equal(df->result, KPT_DIFF_OK);
	assert_int_equal(df->counts[KPT_V_SLOW], 0);
	assert_int_equal(df->counts[KPT_V_SAME], 5); /* copy, add, gemm #0, gemm #1, softmax */
	assert_int_equal(df->nrows, 5);
	for (size_t i = 0; i < df->nrows; i++)
		assert_true(fabs(df->rows[i].change_pct) < 1e-9);
	kpt_diff_destroy(df);
}

static void test_planted_slowdown_is_slow_on_that_kernel_only(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&a);
	b = a;
	b.seed = 2;
	b.slow = "gemm";
	b.slow_pct = 10;
	df = diff2(*state, &a, &b, NULL);
	assert_int_equal(df->result, KPT_DIFF_REGRESSION);
	assert_int_equal(df->counts[KPT_V_SLOW], 2); /* both launches of gemm */
	for (size_t i = 0; i < df->nrows; i++) {
		r = &df->rows[i];
		if (r->verdict == KPT_V_SLOW) {
			assert_string_equal(r->name, "void gemm<128>(float const*, float const*, float*)");
			assert_true(r->change_pct > 8 && r->change_pct < 12);
			assert_true(r->ci_low_pct < r->change_pct && r->change_pct < r->ci_high_pct);
			assert_true(r->p_holm < 0.05);
		}
	}
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_non_null(r);
	assert_string_equal(r->path, "wl.test/copy_site");
	assert_string_equal(r->workload, "wl.test");
	assert_int_not_equal(r->verdict, KPT_V_SLOW);
	kpt_diff_destroy(df);
}

/* 1.5% is over the long-kernel threshold (1% from 200 us: copy is 300 us)
 * and under the default 2% (gemm is 50 and 80 us). */
static void test_long_kernels_have_the_lower_threshold(void **state)
{
	struct gen a, b, c;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&a);
	b = a;
	b.seed = 5;
	b.slow = "copy";
	b.slow_pct = 1.5;
	df = diff2(*state, &a, &b, NULL);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_non_null(r);
	assert_true(r->threshold_pct == 1);
	assert_int_equal(r->verdict, KPT_V_SLOW);
	assert_int_equal(df->result, KPT_DIFF_REGRESSION);
	kpt_diff_destroy(df);

	c = a;
	c.seed = 6;
	c.slow = "gemm";
	c.slow_pct = 1.5;
	df = diff2(*state, &a, &c, NULL);
	assert_int_equal(df->counts[KPT_V_SLOW], 0);
	r = find_row(df, "void gemm<128>(float const*, float const*, float*)", 0);
	assert_non_null(r);
	assert_true(r->threshold_pct == 2);
	kpt_diff_destroy(df);
}

static void test_faster_kernel_is_fast_and_not_a_regression(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&a);
	b = a;
	b.seed = 3;
	b.slow = "copy";
	b.slow_pct = -10;
	df = diff2(*state, &a, &b, NULL);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_int_equal(r->verdict, KPT_V_FAST);
	assert_int_equal(df->result, KPT_DIFF_OK);
	kpt_diff_destroy(df);
}

static void test_repeated_launches_get_ordinals(void **state)
{
	struct gen g;
	struct kpt_diff *df;
	const struct kpt_diff_row *r0, *r1;

	gen_defaults(&g);
	df = diff2(*state, &g, &g, NULL);
	r0 = find_row(df, "void gemm<128>(float const*, float const*, float*)", 0);
	r1 = find_row(df, "void gemm<128>(float const*, float const*, float*)", 1);
	assert_non_null(r0);
	assert_non_null(r1);
	assert_true(r0->base_ns > 45000 && r0->base_ns < 55000);
	assert_true(r1->base_ns > 75000 && r1->base_ns < 85000); /* the 1.6x launch */
	assert_int_equal(r0->base_samples, 5 * 20);
	kpt_diff_destroy(df);
}

static void test_ordinals_follow_start_time_not_file_order(void **state)
{
	struct gen g;
	struct kpt_diff *df;
	const struct kpt_diff_row *r0, *r1;

	gen_defaults(&g);
	g.swap_gemm = 1; /* the 80 us launch is written first, but starts later */
	df = diff2(*state, &g, &g, NULL);
	r0 = find_row(df, "void gemm<128>(float const*, float const*, float*)", 0);
	r1 = find_row(df, "void gemm<128>(float const*, float const*, float*)", 1);
	assert_true(r0->base_ns > 45000 && r0->base_ns < 55000);
	assert_true(r1->base_ns > 75000 && r1->base_ns < 85000);
	kpt_diff_destroy(df);
}

static void test_different_gpu_is_refused_unless_forced(void **state)
{
	struct paths *p = *state;
	struct gen a, b;
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_diff_opts o = { 0 };

	gen_defaults(&a);
	b = a;
	b.gpu = "NVIDIA A100-SXM4-40GB";
	write_rec(p->a, &a);
	write_rec(p->b, &b);
	assert_int_equal(kpt_diff_paths(p->a, p->b, NULL, &df, &d), KPT_E_MISMATCH);
	assert_null(df);
	assert_non_null(strstr(d.msg, "different GPU models"));
	assert_non_null(strstr(d.hint, "--force"));
	o.force = 1;
	assert_int_equal(kpt_diff_paths(p->a, p->b, &o, &df, &d), 0);
	assert_true(df->forced);
	assert_string_equal(df->notes[0].what, "gpu");
	kpt_diff_destroy(df);
}

static void test_new_and_gone_keys(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;

	gen_defaults(&a);
	b = a;
	b.omit_softmax = 1;
	b.extra_kernel = 1;
	df = diff2(*state, &a, &b, NULL);
	assert_int_equal(df->counts[KPT_V_NEW], 1);
	assert_int_equal(df->counts[KPT_V_GONE], 1);
	assert_int_equal(find_row(df, "softmax_kernel", 0)->verdict, KPT_V_GONE);
	assert_int_equal(find_row(df, "extra(float*)", 0)->verdict, KPT_V_NEW);
	assert_true(isnan(find_row(df, "extra(float*)", 0)->base_ns));
	assert_int_equal(df->result, KPT_DIFF_OK);
	/* one workload lost a kernel and gained another: one note, severe,
	 * naming it */
	{
		int notes = 0;

		for (size_t i = 0; i < df->nnotes; i++)
			if (strcmp(df->notes[i].what, "kernels") == 0) {
				notes++;
				assert_true(df->notes[i].severe);
				assert_non_null(strstr(df->notes[i].text, "1 workload(s) ran other kernels"));
				assert_non_null(strstr(df->notes[i].text, find_row(df, "softmax_kernel", 0)->workload));
			}
		assert_int_equal(notes, 1);
	}
	kpt_diff_destroy(df);
	/* only GONE (a kernel no longer launched), or only NEW: no such note */
	for (int side = 0; side < 2; side++) {
		gen_defaults(&a);
		b = a;
		if (side)
			b.extra_kernel = 1;
		else
			b.omit_softmax = 1;
		df = diff2(*state, &a, &b, NULL);
		assert_int_equal(df->counts[side ? KPT_V_NEW : KPT_V_GONE], 1);
		for (size_t i = 0; i < df->nnotes; i++)
			assert_string_not_equal(df->notes[i].what, "kernels");
		kpt_diff_destroy(df);
	}
}

static void test_config_change_falls_back_to_name_and_path(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&a);
	b = a;
	b.copy_grid = 2048;
	df = diff2(*state, &a, &b, NULL);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_non_null(r);
	assert_true(r->loose);
	assert_int_equal(df->n_loose, 1);
	assert_int_equal(df->counts[KPT_V_NEW] + df->counts[KPT_V_GONE], 0);
	for (size_t i = 0; i < df->nnotes; i++)
		if (strcmp(df->notes[i].what, "config") == 0)
			r = NULL;
	assert_null(r); /* the note was found */
	kpt_diff_destroy(df);
}

static void test_added_config_is_new_not_loose(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	int same_copy = 0, new_copy = 0;

	gen_defaults(&a);
	b = a;
	b.copy2_grid = 2048; /* NEW launches copy once more, with another grid */
	df = diff2(*state, &a, &b, NULL);
	assert_int_equal(df->n_loose, 0);
	for (size_t i = 0; i < df->nrows; i++) {
		const struct kpt_diff_row *r = &df->rows[i];

		if (strcmp(r->name, "copy(float*, float const*, unsigned long)") != 0)
			continue;
		if (r->grid[0] == 1024 && r->verdict != KPT_V_NEW && r->verdict != KPT_V_SLOW)
			same_copy = 1;
		if (r->grid[0] == 2048 && r->verdict == KPT_V_NEW)
			new_copy = 1;
	}
	assert_true(same_copy);
	assert_true(new_copy);
	kpt_diff_destroy(df);
}

static void test_throttled_samples_are_dropped_but_idle_is_not(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;

	gen_defaults(&a);
	b = a;
	b.throttle_run = 1;
	b.throttle_bits = 0x20; /* SW thermal slowdown */
	df = diff2(*state, &a, &b, NULL);
	assert_true(df->new_.dropped_throttle > 0);
	assert_int_equal(df->base.dropped_throttle, 0);
	assert_true(df->new_.throttled_frac > 0);
	kpt_diff_destroy(df);
	b.throttle_bits = 0x1; /* GPU idle: ignored */
	df = diff2(*state, &a, &b, NULL);
	assert_int_equal(df->new_.dropped_throttle, 0);
	kpt_diff_destroy(df);
	b.throttle_bits = 0x4; /* SW power cap: reported, not dropped (docs/decision-rule.md) */
	df = diff2(*state, &a, &b, NULL);
	assert_int_equal(df->new_.dropped_throttle, 0);
	assert_true(df->new_.capped_frac > 0);
	assert_true(df->base.capped_frac == 0);
	kpt_diff_destroy(df);
}

static void test_low_clock_samples_are_dropped(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;

	gen_defaults(&a);
	b = a;
	b.runs = 5;
	b.low_clock_run = 2;
	df = diff2(*state, &a, &b, NULL);
	assert_true(df->new_.dropped_clock > 0);
	assert_int_equal(df->new_.dropped_throttle, 0);
	assert_int_equal(df->base.dropped_clock, 0);
	kpt_diff_destroy(df);
}

static void test_clock_change_shows_in_cycles_note(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;
	int cycles = 0, clock = 0;

	gen_defaults(&a);
	b = a;
	b.seed = 6;
	b.sm_mhz = 1800;     /* 9% lower clock ... */
	b.slow = "";         /* ... and every kernel 10% longer: same cycles */
	b.slow_pct = 10;
	df = diff2(*state, &a, &b, NULL);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_int_equal(r->verdict, KPT_V_SLOW);
	assert_true(fabs(r->cycles_change_pct) < 1);
	for (size_t i = 0; i < df->nnotes; i++) {
		cycles |= strcmp(df->notes[i].what, "cycles") == 0;
		clock |= strcmp(df->notes[i].what, "sm_clock") == 0;
	}
	assert_true(cycles);
	assert_true(clock);
	kpt_diff_destroy(df);
}

static void test_env_samples_out_of_order_are_sorted(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	uint64_t forward;

	gen_defaults(&a);
	b = a;
	b.low_clock_run = 2;
	df = diff2(*state, &a, &b, NULL);
	forward = df->new_.dropped_clock;
	kpt_diff_destroy(df);
	b.env_reversed = 1;
	df = diff2(*state, &a, &b, NULL);
	assert_true(forward > 0);
	assert_int_equal(df->new_.dropped_clock, forward);
	kpt_diff_destroy(df);
}

static void test_cycle_cross_check_follows_time(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&a);
	b = a;
	b.seed = 9;
	b.slow = "copy";
	b.slow_pct = 10;
	df = diff2(*state, &a, &b, NULL);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_false(isnan(r->cycles_change_pct));
	assert_true(fabs(r->cycles_change_pct - r->change_pct) < 0.5);
	kpt_diff_destroy(df);
}

static void test_without_iter_ranges_each_process_is_one_iteration(void **state)
{
	struct gen g;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&g);
	g.no_iter = 1;
	df = diff2(*state, &g, &g, NULL);
	/* gemm's two launches pool into one key: 40 samples per run. */
	r = find_row(df, "void gemm<128>(float const*, float const*, float*)", 0);
	assert_non_null(r);
	assert_null(find_row(df, "void gemm<128>(float const*, float const*, float*)", 1));
	assert_int_equal(r->base_samples, 5 * 40);
	assert_int_equal(df->nrows, 4);
	kpt_diff_destroy(df);
}

static void test_warmup_kernels_are_skipped(void **state)
{
	struct gen g;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&g);
	g.warmup = 2;
	df = diff2(*state, &g, &g, NULL);
	assert_int_equal(df->base.skipped, 5 * 2);
	assert_int_equal(df->nrows, 5);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_int_equal(r->base_samples, 5 * 20);
	assert_true(r->base_ns < 320000);
	kpt_diff_destroy(df);
}

static void test_setup_kernels_outside_iterations_are_not_compared(void **state)
{
	struct gen g;
	struct kpt_diff *df;

	gen_defaults(&g);
	g.setup = 3;
	df = diff2(*state, &g, &g, NULL);
	assert_int_equal(df->base.outside, 5 * 3);
	assert_int_equal(df->new_.outside, 5 * 3);
	assert_int_equal(df->nrows, 5);
	assert_null(find_row(df, "extra(float*)", 0));
	kpt_diff_destroy(df);
	/* without kpt:iter ranges nothing marks what is measured: all count */
	g.no_iter = 1;
	df = diff2(*state, &g, &g, NULL);
	assert_int_equal(df->base.outside, 0);
	assert_non_null(find_row(df, "extra(float*)", 0));
	kpt_diff_destroy(df);
}

static void test_one_run_side_borrows_the_other_sides_noise(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&a);
	b = a;
	b.runs = 1;
	b.seed = 8;
	b.slow = "copy";
	b.slow_pct = 10;
	df = diff2(*state, &a, &b, NULL);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_int_equal(r->new_runs, 1);
	assert_int_equal(r->verdict, KPT_V_SLOW);
	/* 4 df from the 5 base runs, 4 from the group's median run-to-run
	 * variance (the moderated t: W_PRIOR_DF) */
	assert_true(fabs(r->df - 8) < 0.01);
	assert_true(isnan(r->new_sd_pct));
	kpt_diff_destroy(df);
}

static void test_keep_throttled_and_ignore_none(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	struct kpt_diff_opts o = { 0 };

	gen_defaults(&a);
	b = a;
	b.throttle_run = 1;
	b.throttle_bits = 0x8;
	o.keep_throttled = 1;
	df = diff2(*state, &a, &b, &o);
	assert_int_equal(df->new_.dropped_throttle, 0);
	kpt_diff_destroy(df);
	b.throttle_bits = 0x1; /* idle: dropped only when no bit is ignored */
	o.keep_throttled = 0;
	o.throttle_ignore = KPT_DIFF_IGNORE_NONE;
	df = diff2(*state, &a, &b, &o);
	assert_true(df->new_.dropped_throttle > 0);
	kpt_diff_destroy(df);
}

static void test_environment_differences_are_noted(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	int driver = 0, dropped = 0;

	gen_defaults(&a);
	b = a;
	b.driver = "590.2";
	b.low_clock_run = 0;
	df = diff2(*state, &a, &b, NULL);
	for (size_t i = 0; i < df->nnotes; i++) {
		if (strcmp(df->notes[i].what, "driver") == 0) {
			driver = 1;
			assert_non_null(strstr(df->notes[i].text, "580.1 -> 590.2"));
		}
		if (strcmp(df->notes[i].what, "dropped") == 0 && strstr(df->notes[i].text, "new:"))
			dropped = df->notes[i].severe;
	}
	assert_true(driver);
	assert_true(dropped);
	kpt_diff_destroy(df);
}

static void test_noisy_small_change_is_ambiguous_with_more_runs(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&a);
	a.runs = 3;
	a.run_sigma = 0.03;
	b = a;
	b.seed = 5;
	b.slow = "copy";
	b.slow_pct = 3;
	df = diff2(*state, &a, &b, NULL);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_int_equal(r->verdict, KPT_V_AMBG);
	assert_true(r->more_runs >= 1);
	kpt_diff_destroy(df);
}

/* gate's sequential resolution: only the keys AMBG by run noise take the
 * later look's row; every other verdict of the first look stands, even
 * where the later look says otherwise. */
static void test_relook_changes_only_run_noise_ambg_keys(void **state)
{
	struct gen a, b;
	struct kpt_diff *df0, *later;
	const struct kpt_diff_row *r;
	uint32_t ambg0, stuck0, settled;
	size_t same0 = 0;

	gen_defaults(&a);
	a.runs = 3;
	a.run_sigma = 0.03;
	b = a;
	b.seed = 5;
	b.slow = "copy";
	b.slow_pct = 6;
	df0 = diff2(*state, &a, &b, NULL);
	r = find_row(df0, "copy(float*, float const*, unsigned long)", 0);
	assert_int_equal(r->verdict, KPT_V_AMBG);
	assert_true(kpt_diff_row_run_noise_ambg(r));
	/* the keys more runs can settle (more_runs under its cap); the other
	 * AMBG keys stay AMBG */
	ambg0 = 0;
	for (size_t i = 0; i < df0->nrows; i++) {
		same0 += df0->rows[i].verdict == KPT_V_SAME;
		ambg0 += (uint32_t)kpt_diff_row_run_noise_ambg(&df0->rows[i]);
	}
	stuck0 = df0->counts[KPT_V_AMBG] - ambg0;
	assert_true(ambg0 > 0 && stuck0 > 0); /* both kinds, or this tests nothing */
	assert_true(same0 > 0);
	later = diff2(*state, &a, &b, NULL);
	/* a later look that calls every key SLOW */
	for (size_t i = 0; i < later->nrows; i++)
		later->rows[i].verdict = KPT_V_SLOW;
	settled = kpt_diff_adopt_relook(df0, later, 2);
	assert_int_equal(settled, ambg0);
	assert_int_equal(df0->counts[KPT_V_SLOW], ambg0);
	assert_int_equal(df0->counts[KPT_V_SAME], same0);
	assert_int_equal(df0->counts[KPT_V_AMBG], stuck0);
	assert_int_equal(df0->result, KPT_DIFF_REGRESSION);
	for (size_t i = 0; i < df0->nrows; i++)
		assert_int_equal(df0->rows[i].settled_round, df0->rows[i].verdict == KPT_V_SLOW ? 2 : 0);
	/* sorted again: the settled SLOW rows first */
	assert_int_equal(df0->rows[0].verdict, KPT_V_SLOW);
	r = find_row(df0, "copy(float*, float const*, unsigned long)", 0);
	assert_int_equal(r->settled_round, 2);
	kpt_diff_destroy(df0);
	kpt_diff_destroy(later);
}

static void test_run_subsets_select_runs(void **state)
{
	struct paths *p = *state;
	struct gen g;
	struct kpt_file *f = NULL;
	struct kpt_diff_side *s = NULL;
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_diff_opts o = { 0 };
	const uint32_t base_runs[] = { 0, 1, 2 }, new_runs[] = { 3, 4, 5 }, bad[] = { 42 };
	const uint32_t *runs;
	uint32_t nruns;

	gen_defaults(&g);
	g.runs = 6;
	write_rec(p->a, &g);
	assert_int_equal(kpt_file_open(p->a, &f, &d), 0);
	assert_int_equal(kpt_diff_side_load(f, NULL, &s, &d), 0);
	kpt_file_close(f);
	kpt_diff_side_runs(s, &runs, &nruns);
	assert_int_equal(nruns, 6);
	o.base_runs = base_runs;
	o.n_base_runs = 3;
	o.new_runs = new_runs;
	o.n_new_runs = 3;
	assert_int_equal(kpt_diff_compare(s, s, &o, &df, &d), 0);
	assert_int_equal(df->base.runs, 3);
	assert_int_equal(df->rows[0].base_runs, 3);
	assert_int_equal(df->rows[0].new_run_ids[0], 3);
	assert_int_equal(df->counts[KPT_V_SLOW], 0);
	kpt_diff_destroy(df);
	o.new_runs = bad;
	o.n_new_runs = 1;
	assert_int_equal(kpt_diff_compare(s, s, &o, &df, &d), KPT_E_NOTFOUND);
	kpt_diff_side_destroy(s);
}

static void test_pooled_u_flags_identical_code_with_run_noise(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	struct kpt_diff_opts o = { 0 };
	uint32_t pooled_flags = 0, rule_flags = 0;

	/* Same code, different runs: run-to-run noise 2% dwarfs within-run
	 * 0.1%. Pooling samples makes that look significant (docs/decision-rule.md, "Reference numbers": 23-41%
	 * false alarms); the rule tests run medians and does not. 4 A/A pairs x
	 * 5 keys. */
	gen_defaults(&a);
	a.run_sigma = 0.02;
	a.within_sigma = 0.001;
	o.method = KPT_DIFF_POOLED_U;
	for (uint64_t seed = 100; seed < 104; seed++) {
		a.seed = seed;
		b = a;
		b.seed = seed + 1000;
		df = diff2(*state, &a, &b, &o);
		pooled_flags += df->counts[KPT_V_SLOW] + df->counts[KPT_V_FAST];
		kpt_diff_destroy(df);
		df = diff2(*state, &a, &b, NULL);
		rule_flags += df->counts[KPT_V_SLOW] + df->counts[KPT_V_FAST];
		kpt_diff_destroy(df);
	}
	assert_true(pooled_flags >= 4);
	assert_int_equal(rule_flags, 0);
}

static void test_totals_per_workload(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	int seen = 0;

	gen_defaults(&a);
	b = a;
	b.seed = 4;
	b.slow = "copy";
	b.slow_pct = 10;
	df = diff2(*state, &a, &b, NULL);
	assert_int_equal(df->totals[0].kind, KPT_TOTAL_ALL);
	assert_int_equal(df->totals[0].keys, 5);
	for (size_t i = 0; i < df->ntotals; i++) {
		const struct kpt_diff_total *t = &df->totals[i];

		if (t->kind == KPT_TOTAL_WORKLOAD && strcmp(t->name, "wl.test") == 0) {
			seen = 1;
			assert_int_equal(t->keys, 5);
			/* copy is 300 of ~516 us per iteration: about +5.8% */
			assert_true(t->change_pct > 4.5 && t->change_pct < 7);
			assert_true(t->geomean_change_pct > 1 && t->geomean_change_pct < 3);
			assert_int_equal(t->verdicts[KPT_V_SLOW], 1);
		}
	}
	assert_true(seen);
	kpt_diff_destroy(df);
}

static void test_range_cycle_is_a_format_error(void **state)
{
	struct paths *p = *state;
	struct kpt_writer *w = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_device dev = { 0 };
	struct kpt_process pr = { 0 };
	struct kpt_range r[2] = { { 0 } };
	struct kpt_kernel k = { 0 };
	struct kpt_diff *df = NULL;
	uint32_t nm, ra;

	assert_int_equal(kpt_writer_create(p->a, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "k", &nm, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "a", &ra, &d), 0);
	dev.name = "NVIDIA H100 80GB HBM3";
	dev.slug = "nvidia-h100-80gb-hbm3";
	dev.uuid = dev.driver_string = "";
	assert_int_equal(kpt_writer_device(w, &dev, &d), 0);
	pr.rank = pr.command = KPT_NONE;
	assert_int_equal(kpt_writer_process(w, &pr, &d), 0);
	for (int i = 0; i < 2; i++) {
		r[i].id = (uint32_t)i;
		r[i].parent = (uint32_t)(1 - i); /* 0 -> 1 -> 0 */
		r[i].name = ra;
		r[i].domain = KPT_NONE;
		r[i].kind = KPT_RANGE_PUSHPOP;
		r[i].start_ns = 1;
		r[i].end_ns = 100;
	}
	assert_int_equal(kpt_writer_ranges(w, r, 2, &d), 0);
	k.start_ns = 10;
	k.end_ns = 20;
	k.name = nm;
	k.range = 0;
	k.graph = KPT_NONE;
	assert_int_equal(kpt_writer_kernels(w, &k, 1, &d), 0);
	if (kpt_writer_commit(w, &d) < 0) { /* the writer may refuse the cycle itself */
		kpt_writer_destroy(w);
		return;
	}
	kpt_writer_destroy(w);
	assert_int_equal(kpt_diff_paths(p->a, p->a, NULL, &df, &d), KPT_E_FORMAT);
	assert_null(df);
	assert_non_null(strstr(d.msg, "ancestor"));
}

static void test_large_run_medians_match_the_sample_path(void **state)
{
	struct gen a, b;
	struct kpt_diff *rule, *pooled;
	struct kpt_diff_opts o = { 0 };

	/* 4500 samples per key and run: medians taken at load by radix
	 * selection must equal those the pooled method takes from the samples. */
	gen_defaults(&a);
	a.runs = 3;
	a.iters = 4500;
	a.clock_wobble = 1; /* two clocks in a run: the cycle median is selected too */
	b = a;
	b.seed = 12;
	rule = diff2(*state, &a, &b, NULL);
	o.method = KPT_DIFF_POOLED_U;
	pooled = diff2(*state, &a, &b, &o);
	assert_int_equal(rule->nrows, pooled->nrows);
	for (size_t i = 0; i < rule->nrows; i++) {
		const struct kpt_diff_row *r = &rule->rows[i], *q = NULL;

		for (size_t j = 0; j < pooled->nrows; j++)
			if (strcmp(pooled->rows[j].name, r->name) == 0 && pooled->rows[j].ordinal == r->ordinal)
				q = &pooled->rows[j];
		assert_non_null(q);
		assert_int_equal(r->base_runs, q->base_runs);
		for (uint32_t k = 0; k < r->base_runs; k++)
			assert_true(r->base_run_ns[k] == q->base_run_ns[k]);
		for (uint32_t k = 0; k < r->new_runs; k++)
			assert_true(r->new_run_ns[k] == q->new_run_ns[k]);
		assert_true(fabs(r->cycles_change_pct - q->cycles_change_pct) < 1e-4);
	}
	kpt_diff_destroy(rule);
	kpt_diff_destroy(pooled);
}

static void test_t_distribution_matches_tables(void **state)
{
	(void)state;
	assert_true(fabs(kpt_t_quantile(0.975, 4) - 2.776445) < 1e-5);
	assert_true(fabs(kpt_t_quantile(0.975, 10) - 2.228139) < 1e-5);
	assert_true(fabs(kpt_t_quantile(0.025, 10) + 2.228139) < 1e-5);
	assert_true(fabs(kpt_t_pvalue(2.0, 5) - 0.1019395) < 1e-6);
	assert_true(fabs(kpt_t_pvalue(0, 3) - 1) < 1e-12);
	assert_true(fabs(kpt_t_pvalue(1.959964, 1e7) - 0.05) < 1e-5);
}

static void test_holm_step_down(void **state)
{
	double p[] = { 0.01, 0.04, NAN, 0.03 };

	(void)state;
	assert_int_equal(kpt_holm(p, 4), 0);
	assert_true(fabs(p[0] - 0.03) < 1e-12);
	assert_true(fabs(p[3] - 0.06) < 1e-12);
	assert_true(fabs(p[1] - 0.06) < 1e-12); /* monotone: not 0.04 */
	assert_true(isnan(p[2]));
}

static void test_mann_whitney_known_value(void **state)
{
	const double a[] = { 1, 2, 3, 4, 5 }, b[] = { 6, 7, 8, 9, 10 };
	const double c[] = { 1, 2, 3 };

	(void)state;
	/* scipy.stats.mannwhitneyu(a, b, method="asymptotic"): p = 0.01219 */
	assert_true(fabs(kpt_mann_whitney_p(a, 5, b, 5) - 0.012186) < 1e-5);
	assert_true(kpt_mann_whitney_p(c, 3, c, 3) > 0.99);
	assert_true(isnan(kpt_mann_whitney_p(a, 0, b, 5)));
}

/* Sessions: base recordings of one model made on several machines. Each
 * session's copy runs at its own offset (slow_pct), as machines do. */
static struct kpt_diff *diff_sessions(struct paths *p, const double *offsets, int n, const struct gen *cand,
				      const struct kpt_diff_opts *o)
{
	char files[8][512];
	const char *bases[8];
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };

	for (int i = 0; i < n; i++) {
		struct gen g;

		gen_defaults(&g);
		g.seed = 100 + (uint64_t)i;
		g.slow = "copy";
		g.slow_pct = offsets[i];
		snprintf(files[i], sizeof files[i], "%s/s%d.kpt", p->dir, i);
		write_rec(files[i], &g);
		bases[i] = files[i];
	}
	write_rec(p->b, cand);
	if (kpt_diff_paths_multi(bases, (size_t)n, p->b, o, &df, &d) < 0)
		fail_msg("diff failed: %s", d.msg);
	for (int i = 0; i < n; i++)
		unlink(files[i]);
	return df;
}

static void test_sessions_measure_the_between_part(void **state)
{
	static const double spread[6] = { -2, 0, 2, 1, -1, 0 }, tight[6] = { 0, 0, 0, 0, 0, 0 };
	struct gen c;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;

	gen_defaults(&c);
	c.seed = 200;
	c.slow = "copy";
	c.slow_pct = 3.5; /* a machine 3.5% slower on copy, no code change */
	df = diff_sessions(*state, spread, 6, &c, NULL);
	assert_int_equal(df->base_sessions, 6);
	assert_int_equal(df->prior_between, 0);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_non_null(r);
	assert_true(r->between_pct > 1.2); /* the sessions' own spread (SD 1.4%) */
	assert_int_not_equal(r->verdict, KPT_V_SLOW);
	kpt_diff_destroy(df);
	/* sessions that agree: a 5% change is beyond what these machines show */
	c.slow_pct = 5;
	df = diff_sessions(*state, tight, 6, &c, NULL);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_true(r->between_pct < 1.0);
	assert_int_equal(r->verdict, KPT_V_SLOW);
	assert_int_equal(df->result, KPT_DIFF_REGRESSION);
	kpt_diff_destroy(df);
}

static void test_one_session_uses_the_prior_and_says_so(void **state)
{
	struct gen a;
	struct kpt_diff *df;
	const struct kpt_diff_row *r;
	struct kpt_diff_opts o = { 0 };
	int said = 0;

	gen_defaults(&a);
	df = diff2(*state, &a, &a, &o);
	assert_int_equal(df->base_sessions, 1);
	assert_int_equal(df->prior_between, 1);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_true(fabs(r->between_pct - kpt_diff_between_prior_pct(r->base_ns)) < 1e-9);
	for (size_t i = 0; i < df->nnotes; i++)
		said |= strcmp(df->notes[i].what, "sessions") == 0 && strstr(df->notes[i].text, "prior") != NULL;
	assert_true(said);
	kpt_diff_destroy(df);
	assert_true(kpt_diff_between_prior_pct(1e3) > kpt_diff_between_prior_pct(100e3));
}

/* Against other machines with most keys AMBG the report says the
 * comparison cannot hear a few percent; with the between part negligible
 * (keys SAME) it does not. */
static void test_mostly_ambg_says_it_cannot_hear(void **state)
{
	struct gen a;
	struct kpt_diff *df;
	struct kpt_diff_opts o = { 0 };
	int said = 0;
	uint32_t compared;

	gen_defaults(&a);
	df = diff2(*state, &a, &a, &o); /* one session: the prior, 1-3.5% */
	compared = df->counts[KPT_V_SLOW] + df->counts[KPT_V_FAST] + df->counts[KPT_V_AMBG] + df->counts[KPT_V_SAME];
	assert_true(compared >= 4);
	assert_true(2 * df->counts[KPT_V_AMBG] > compared);
	for (size_t i = 0; i < df->nnotes; i++)
		if (strcmp(df->notes[i].what, "power") == 0) {
			said++;
			assert_true(df->notes[i].severe);
			assert_non_null(strstr(df->notes[i].text, "compared keys are AMBG"));
			assert_non_null(strstr(df->notes[i].text, "gate --against"));
		}
	assert_int_equal(said, 1);
	kpt_diff_destroy(df);
	df = diff2(*state, &a, &a, NULL); /* between part negligible */
	assert_true(2 * df->counts[KPT_V_AMBG] <= df->counts[KPT_V_SAME] + df->counts[KPT_V_AMBG]);
	for (size_t i = 0; i < df->nnotes; i++)
		assert_string_not_equal(df->notes[i].what, "power");
	kpt_diff_destroy(df);
}

static void test_repeated_launches_aggregate_into_one_key(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	struct kpt_diff_opts o = { .aggregate_min = 2, .between_prior_pct = 0.001 };
	const struct kpt_diff_row *r = NULL;

	gen_defaults(&a);
	b = a;
	b.seed = 9;
	b.slow = "gemm";
	b.slow_pct = 10;
	df = diff2(*state, &a, &b, &o);
	assert_int_equal(df->nrows, 4); /* gemm's two launches are one key */
	for (size_t i = 0; i < df->nrows; i++)
		if (strstr(df->rows[i].name, "gemm"))
			r = &df->rows[i];
	assert_non_null(r);
	assert_int_equal(r->aggregated, 2);
	assert_true(r->base_ns > 1.9 * 50000); /* the sum of the two launches per iteration */
	assert_int_equal(r->verdict, KPT_V_SLOW);
	kpt_diff_destroy(df);
	o.aggregate_min = -1;
	df = diff2(*state, &a, &b, &o);
	assert_int_equal(df->nrows, 5);
	kpt_diff_destroy(df);
}

static void test_paired_runs_see_through_run_noise(void **state)
{
	struct gen a, b;
	struct kpt_diff *df;
	struct kpt_diff_opts o = { 0 };
	const struct kpt_diff_row *r;

	gen_defaults(&a);
	a.run_sigma = 0.03; /* processes differ by 3% */
	a.within_sigma = 0.001;
	b = a; /* same seed: run i of B shares run i of A's process noise, as an interleaved pair */
	b.slow = "copy";
	b.slow_pct = 2;
	df = diff2(*state, &a, &b, &o);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_int_not_equal(r->verdict, KPT_V_SLOW);
	kpt_diff_destroy(df);
	o.paired = 1;
	df = diff2(*state, &a, &b, &o);
	assert_int_equal(df->paired, 1);
	r = find_row(df, "copy(float*, float const*, unsigned long)", 0);
	assert_int_equal(r->verdict, KPT_V_SLOW);
	assert_true(r->change_pct > 1.9 && r->change_pct < 2.1);
	assert_true(r->between_pct == 0);
	assert_true(fabs(r->df - 4) < 1e-9);
	kpt_diff_destroy(df);
}

/* Two ranks of one run; rank 1 launches one kernel more than rank 0. */
static void write_ranked(const char *path)
{
	struct kpt_writer *w = NULL;
	struct kpt_diag d = { 0 };
	struct kpt_device dev = { 0 };
	uint32_t k1, k2;
	struct kpt_kernel k[7];
	int n = 0;

	assert_int_equal(kpt_writer_create(path, NULL, &w, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "_Z4stepPf", &k1, &d), 0);
	assert_int_equal(kpt_writer_intern_cstr(w, "_Z5extraPf", &k2, &d), 0);
	dev.name = "NVIDIA H100 80GB HBM3";
	dev.slug = "nvidia-h100-80gb-hbm3";
	dev.uuid = dev.driver_string = "";
	assert_int_equal(kpt_writer_device(w, &dev, &d), 0);
	for (uint32_t r = 0; r < 2; r++) {
		struct kpt_process pr = { 0 };

		pr.index = r;
		pr.run = 0;
		pr.pid = 100 + r;
		pr.rank = r;
		pr.command = KPT_NONE;
		assert_int_equal(kpt_writer_process(w, &pr, &d), 0);
		for (int i = 0; i < 3 + (int)r; i++) {
			memset(&k[n], 0, sizeof k[n]);
			k[n].start_ns = 1000 * (uint64_t)(n + 1);
			k[n].end_ns = k[n].start_ns + 500;
			k[n].name = i < 3 ? k1 : k2;
			k[n].process = r;
			k[n].range = KPT_NONE;
			k[n].graph = KPT_NONE;
			n++;
		}
	}
	assert_int_equal(kpt_writer_kernels(w, k, (size_t)n, &d), 0);
	assert_int_equal(kpt_writer_commit(w, &d), 0);
	kpt_writer_destroy(w);
}

static void test_ranks_are_keys_and_different_work_is_noted(void **state)
{
	struct paths *p = *state;
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };
	int r0 = 0, r1 = 0, extra1 = 0, noted = 0;

	write_ranked(p->a);
	assert_int_equal(kpt_diff_paths(p->a, p->a, NULL, &df, &d), 0);
	for (size_t i = 0; i < df->nrows; i++) {
		const struct kpt_diff_row *r = &df->rows[i];

		r0 += strncmp(r->path, "rank 0", 6) == 0;
		r1 += strncmp(r->path, "rank 1", 6) == 0;
		extra1 += strstr(r->name, "extra") && strncmp(r->path, "rank 1", 6) == 0;
	}
	assert_int_equal(r0, 1);   /* step */
	assert_int_equal(r1, 2);   /* step, extra */
	assert_int_equal(extra1, 1);
	assert_int_equal(df->base.ranks, 2);
	assert_int_equal(df->base.ranks_differ, 1);
	for (size_t i = 0; i < df->nnotes; i++)
		noted |= strcmp(df->notes[i].what, "ranks") == 0 && strstr(df->notes[i].text, "different work") != NULL;
	assert_true(noted);
	kpt_diff_destroy(df);
}

static void test_verdict_names_table(void **state)
{
	(void)state;
	assert_string_equal(kpt_verdict_name(KPT_V_SLOW), "SLOW");
	assert_string_equal(kpt_verdict_name(KPT_V_AMBG), "AMBG");
	assert_string_equal(kpt_verdict_name(99), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_self_diff_is_all_same, setup, teardown),
		cmocka_unit_test_setup_teardown(test_planted_slowdown_is_slow_on_that_kernel_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_kernels_have_the_lower_threshold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faster_kernel_is_fast_and_not_a_regression, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeated_launches_get_ordinals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ordinals_follow_start_time_not_file_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_different_gpu_is_refused_unless_forced, setup, teardown),
		cmocka_unit_test_setup_teardown(test_new_and_gone_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_config_change_falls_back_to_name_and_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_added_config_is_new_not_loose, setup, teardown),
		cmocka_unit_test_setup_teardown(test_throttled_samples_are_dropped_but_idle_is_not, setup, teardown),
		cmocka_unit_test_setup_teardown(test_low_clock_samples_are_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_clock_change_shows_in_cycles_note, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_samples_out_of_order_are_sorted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cycle_cross_check_follows_time, setup, teardown),
		cmocka_unit_test_setup_teardown(test_without_iter_ranges_each_process_is_one_iteration, setup, teardown),
		cmocka_unit_test_setup_teardown(test_setup_kernels_outside_iterations_are_not_compared, setup, teardown),
		cmocka_unit_test_setup_teardown(test_warmup_kernels_are_skipped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_run_side_borrows_the_other_sides_noise, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keep_throttled_and_ignore_none, setup, teardown),
		cmocka_unit_test_setup_teardown(test_environment_differences_are_noted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_noisy_small_change_is_ambiguous_with_more_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_relook_changes_only_run_noise_ambg_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_run_subsets_select_runs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pooled_u_flags_identical_code_with_run_noise, setup, teardown),
		cmocka_unit_test_setup_teardown(test_totals_per_workload, setup, teardown),
		cmocka_unit_test_setup_teardown(test_range_cycle_is_a_format_error, setup, teardown),
		cmocka_unit_test_setup_teardown(test_large_run_medians_match_the_sample_path, setup, teardown),
		cmocka_unit_test_setup_teardown(test_sessions_measure_the_between_part, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_session_uses_the_prior_and_says_so, setup, teardown),
		cmocka_unit_test_setup_teardown(test_mostly_ambg_says_it_cannot_hear, setup, teardown),
		cmocka_unit_test_setup_teardown(test_repeated_launches_aggregate_into_one_key, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paired_runs_see_through_run_noise, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ranks_are_keys_and_different_work_is_noted, setup, teardown),
		cmocka_unit_test(test_t_distribution_matches_tables),
		cmocka_unit_test(test_holm_step_down),
		cmocka_unit_test(test_mann_whitney_known_value),
		cmocka_unit_test(test_verdict_names_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
