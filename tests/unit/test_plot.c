/* test_plot.c - the gnuplot plot scripts (viewer/kpt_plot.h, kpt_gnuplot.h):
 * the numbers in their data blocks are the diff's and summary's, and gnuplot
 * runs (or is reported missing) as documented. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "kpt_gnuplot.h"
#include "kpt_plot.h"
#include "kpt_timeline.h"
#include "kpt_view.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/kpt-plot-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (getenv("KPT_TEST_KEEP")) {   /* to look at the pictures */
		fprintf(stderr, "kept %s\n", tmpdir);
		return 0;
	}
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Rows of block $name of DIR/STEM.gp, comment lines skipped; returns the
 * number of rows, each row a malloc'd string in rows[]. */
static int read_block(const char *stem, const char *name, char **rows, int max)
{
	char path[256], line[4096], start[64];
	FILE *fp;
	int in = 0, n = 0;

	snprintf(path, sizeof path, "%s/%s.gp", tmpdir, stem);
	snprintf(start, sizeof start, "$%s << EOD\n", name);
	fp = fopen(path, "r");
	assert_non_null(fp);
	while (fgets(line, sizeof line, fp)) {
		if (!in) {
			in = strcmp(line, start) == 0;
			continue;
		}
		if (strcmp(line, "EOD\n") == 0)
			break;
		if (line[0] == '#')
			continue;
		assert_true(n < max);
		line[strcspn(line, "\n")] = '\0';
		rows[n++] = strdup(line);
	}
	fclose(fp);
	assert_true(in);
	return n;
}

static void free_rows(char **rows, int n)
{
	for (int i = 0; i < n; i++)
		free(rows[i]);
}

/* The first quoted field of a data row (the label). */
static const char *last_field(const char *row, char *buf, size_t cap)
{
	const char *q = strchr(row, '"'), *e = q ? strchr(q + 1, '"') : NULL;

	assert_non_null(q);
	assert_non_null(e);
	snprintf(buf, cap, "%.*s", (int)(e - q - 1), q + 1);
	return buf;
}

/* The second quoted field of a data row (the range). */
static const char *range_field(const char *row, char *buf, size_t cap)
{
	const char *q = strchr(row, '"');

	assert_non_null(q);
	q = strchr(q + 1, '"');
	assert_non_null(q);
	return last_field(q + 1, buf, cap);
}

static struct kpt_diff_row row(const char *name, enum kpt_verdict v, double ch, double lo, double hi)
{
	struct kpt_diff_row r;

	memset(&r, 0, sizeof r);
	r.name = name;
	r.mangled = name;
	r.path = "";
	r.workload = "";
	r.verdict = v;
	r.change_pct = ch;
	r.ci_low_pct = lo;
	r.ci_high_pct = hi;
	r.base_ns = 1000;
	return r;
}

static void test_diff_change_block_matches_rows_sorted_by_change(void **state)
{
	struct kpt_diff_row rows[] = {
		row("void k::slow<1>(int)", KPT_V_SLOW, 7.5, 5.25, 9.75),
		row("fast_kernel", KPT_V_FAST, -4, -6, -2),
		row("void k::same<a & b>(float*)", KPT_V_SAME, 0.25, -0.5, 1),
		row("new_only", KPT_V_NEW, NAN, NAN, NAN),
		row("ambiguous", KPT_V_AMBG, 1.5, -1, 4),
	};
	struct kpt_diff df;
	char *out[16], buf[256];
	int n;

	(void)state;
	memset(&df, 0, sizeof df);
	df.rows = rows;
	df.nrows = 5;
	df.opts.threshold_pct = 2;
	assert_int_equal(kpt_plot_diff_change(&df, tmpdir, "change", NULL), 0);
	n = read_block("change", "data", out, 16);
	assert_int_equal(n, 4);   /* NEW is not plotted */
	/* sorted by change: fast, same, ambiguous, slow */
	{
		int rank;
		double ch, lo, hi;
		unsigned col;
		char verdict[16];

		assert_int_equal(sscanf(out[0], "%d %lf %lf %lf %x %15s", &rank, &ch, &lo, &hi, &col, verdict), 6);
		assert_int_equal(rank, 0);
		assert_float_equal(ch, -4, 1e-9);
		assert_float_equal(lo, -6, 1e-9);
		assert_float_equal(hi, -2, 1e-9);
		assert_int_equal(col, kpt_verdict_color(KPT_V_FAST));
		assert_string_equal(verdict, "FAST");
		assert_int_equal(sscanf(out[3], "%d %lf %lf %lf %x %15s", &rank, &ch, &lo, &hi, &col, verdict), 6);
		assert_float_equal(ch, 7.5, 1e-9);
		assert_float_equal(lo, 5.25, 1e-9);
		assert_float_equal(hi, 9.75, 1e-9);
		assert_string_equal(verdict, "SLOW");
		assert_int_equal(col, kpt_verdict_color(KPT_V_SLOW));
	}
	assert_string_equal(last_field(out[0], buf, sizeof buf), "fast_kernel");
	assert_string_equal(last_field(out[1], buf, sizeof buf), "k::same<a & b>");
	assert_string_equal(last_field(out[3], buf, sizeof buf), "k::slow<1>");
	free_rows(out, n);
}

static void test_diff_change_keeps_non_same_keys_when_capped(void **state)
{
	struct kpt_diff_row rows[KPT_PLOT_MAX_KEYS + 10];
	struct kpt_diff df;
	char *out[KPT_PLOT_MAX_KEYS + 10], buf[64];
	int n, seen_slow = 0;

	(void)state;
	for (int i = 0; i < KPT_PLOT_MAX_KEYS + 10; i++)
		rows[i] = row("same", KPT_V_SAME, 0.01 * i, 0.01 * i - 0.5, 0.01 * i + 0.5);
	rows[3] = row("the_slow_one", KPT_V_SLOW, 0.001, 0.0005, 0.002);
	memset(&df, 0, sizeof df);
	df.rows = rows;
	df.nrows = KPT_PLOT_MAX_KEYS + 10;
	assert_int_equal(kpt_plot_diff_change(&df, tmpdir, "capped", NULL), 0);
	n = read_block("capped", "data", out, KPT_PLOT_MAX_KEYS + 10);
	assert_int_equal(n, KPT_PLOT_MAX_KEYS);
	for (int i = 0; i < n; i++)
		seen_slow |= strcmp(last_field(out[i], buf, sizeof buf), "the_slow_one") == 0;
	assert_true(seen_slow);
	/* the SAME keys with the smallest |change| were dropped */
	for (int i = 0; i < n; i++) {
		double ch;

		assert_int_equal(sscanf(out[i], "%*d %lf", &ch), 1);
		assert_true(ch == 0.001 || ch >= 0.0999);
	}
	free_rows(out, n);
}

static void test_diff_runs_block_has_every_run_median(void **state)
{
	double b1[] = { 1000, 1010, 990 }, n1[] = { 1100, 1080 };
	struct kpt_diff_row rows[] = {
		row("slowk", KPT_V_SLOW, 9, 7, 11),
		row("samek", KPT_V_SAME, 0, -1, 1),
	};
	struct kpt_diff df;
	char *out[16];
	int n, key;
	double x, ns, rel;

	(void)state;
	rows[0].base_run_ns = b1;
	rows[0].base_runs = 3;
	rows[0].new_run_ns = n1;
	rows[0].new_runs = 2;
	rows[0].base_ns = 1000;
	memset(&df, 0, sizeof df);
	df.rows = rows;
	df.nrows = 2;
	assert_int_equal(kpt_plot_diff_runs(&df, tmpdir, "runs", NULL), 0);
	n = read_block("runs", "base", out, 16);
	assert_int_equal(n, 3);
	assert_int_equal(sscanf(out[1], "%d %lf %lf %lf", &key, &x, &ns, &rel), 4);
	assert_int_equal(key, 0);
	assert_float_equal(ns, 1010, 1e-9);
	assert_float_equal(rel, 1.0, 1e-9);
	free_rows(out, n);
	n = read_block("runs", "new", out, 16);
	assert_int_equal(n, 2);
	assert_int_equal(sscanf(out[0], "%d %lf %lf %lf", &key, &x, &ns, &rel), 4);
	assert_float_equal(ns, 1100, 1e-9);
	assert_float_equal(rel, 10.0, 1e-9);
	assert_true(x > 0);   /* NEW to the right of its key */
	free_rows(out, n);
	/* nothing SLOW or AMBG: nothing to plot, said so */
	rows[0].verdict = KPT_V_SAME;
	{
		struct kpt_diag d;

		assert_int_equal(kpt_plot_diff_runs(&df, tmpdir, "runs2", &d), KPT_E_NOTFOUND);
		assert_non_null(strstr(d.msg, "SLOW or AMBG"));
	}
}

static void test_top_kernels_block_matches_summary_and_other(void **state)
{
	struct kpt_summary_row r[KPT_PLOT_TOP + 2];
	struct kpt_summary s;
	char *out[32], buf[256];
	int n, rank;
	double share;
	unsigned long long total, inst;

	(void)state;
	memset(r, 0, sizeof r);
	for (int i = 0; i < KPT_PLOT_TOP + 2; i++) {
		r[i].name = i == 0 ? "_ZN2ns4gemmIfLi128EEEvPKT_PS1_" : "other_kernel";
		r[i].display = i == 0 ? "void ns::gemm<float, 128>(float const*, float*)" : "other_kernel";
		r[i].instances = 10 + (uint64_t)i;
		r[i].total_ns = 1000 - (uint64_t)i;
		r[i].time_pct = 10 - 0.5 * i;
	}
	memset(&s, 0, sizeof s);
	s.rows = r;
	s.n = KPT_PLOT_TOP + 2;
	assert_int_equal(kpt_plot_top_kernels(&s, "t", NULL, NULL, tmpdir, "top", NULL), 0);
	n = read_block("top", "data", out, 32);
	assert_int_equal(n, KPT_PLOT_TOP + 1);
	assert_int_equal(sscanf(out[0], "%d %lf %llu %llu", &rank, &share, &total, &inst), 4);
	assert_float_equal(share, 10, 1e-9);
	assert_int_equal(total, 1000);
	assert_int_equal(inst, 10);
	assert_string_equal(last_field(out[0], buf, sizeof buf), "ns::gemm<float, 128>");
	{
		unsigned col;

		/* the bar has its family's colour, as the timeline draws it */
		assert_int_equal(sscanf(out[0], "%*d %*f %*u %*u %x", &col), 1);
		assert_int_equal(col, kpt_family_color("gemm"));
	}
	/* other = the last two rows */
	assert_int_equal(sscanf(out[KPT_PLOT_TOP], "%d %lf %llu %llu", &rank, &share, &total, &inst), 4);
	assert_float_equal(share, (10 - 0.5 * KPT_PLOT_TOP) + (10 - 0.5 * (KPT_PLOT_TOP + 1)), 1e-9);
	assert_int_equal(inst, 10 + KPT_PLOT_TOP + 10 + KPT_PLOT_TOP + 1);
	assert_string_equal(last_field(out[KPT_PLOT_TOP], buf, sizeof buf), "other (2 kernels)");
	free_rows(out, n);
}

static void test_roofline_points_and_skip_when_unknown(void **state)
{
	struct kpt_roof_point p[] = {
		{ "memory.copy.256MiB", 0, 536870912, 180000 },       /* no FLOPs: left out */
		{ "gemm.bf16.8192", 2.0 * 8192 * 8192 * 8192, 3.0 * 8192 * 8192 * 2, 1.4e6 },
	};
	struct kpt_roofline r = { "NVIDIA H100", 3000, 798, p, 2 };
	char *out[8], name[64];
	double ai, tf, fl, by, ns;
	struct kpt_diag d;
	int n;

	(void)state;
	assert_int_equal(kpt_plot_roofline(&r, tmpdir, "roof", NULL), 0);
	n = read_block("roof", "points", out, 8);
	assert_int_equal(n, 1);
	assert_int_equal(sscanf(out[0], "%lf %lf %lf %lf %lf", &ai, &tf, &fl, &by, &ns), 5);
	assert_float_equal(ai, 8192.0 / 3, 1e-2);
	assert_float_equal(tf, 2.0 * 8192 * 8192 * 8192 / 1.4e6 / 1e3, 1e-2 * tf / 1e3 + 1e-3);
	assert_string_equal(last_field(out[0], name, sizeof name), "gemm.bf16.8192");
	free_rows(out, n);
	r.n = 1;
	assert_int_equal(kpt_plot_roofline(&r, tmpdir, "roof2", &d), KPT_E_NOTFOUND);
	assert_non_null(strstr(d.msg, "FLOPs and bytes"));
}

static void test_compare_bars_in_order(void **state)
{
	struct kpt_compare_bar b[] = {
		{ "NVIDIA A10G", 940.8 }, { "NVIDIA L4", 525.7 }, { "broken", NAN },
	};
	char *out[8], gpu[64];
	int n, idx;
	double v;

	(void)state;
	assert_int_equal(kpt_plot_compare("moe.layer.e8.top2.h512.b32.s128", "K tokens/s", b, 3, tmpdir,
					  "cmp", NULL), 0);
	n = read_block("cmp", "data", out, 8);
	assert_int_equal(n, 2);
	assert_int_equal(sscanf(out[1], "%d %lf", &idx, &v), 2);
	assert_int_equal(idx, 1);
	assert_float_equal(v, 525.7, 1e-9);
	assert_string_equal(last_field(out[1], gpu, sizeof gpu), "NVIDIA L4");
	free_rows(out, n);
}

static void test_script_quotes_names_safely(void **state)
{
	struct kpt_diff_row rows[] = { row("evil\"name'\nx", KPT_V_SLOW, 5, 4, 6) };
	struct kpt_diff df;
	char *out[4], buf[64];
	int n;

	(void)state;
	memset(&df, 0, sizeof df);
	df.rows = rows;
	df.nrows = 1;
	assert_int_equal(kpt_plot_diff_change(&df, tmpdir, "quote", NULL), 0);
	n = read_block("quote", "data", out, 4);
	assert_int_equal(n, 1);
	/* no '"' inside the field, no line break: the row stays one row */
	assert_string_equal(last_field(out[0], buf, sizeof buf), "evil'name'\xef\xbf\xbdx");
	free_rows(out, n);
}

/* copy_plant10_512MiB.kpt vs copy_base.kpt (H100): copy_vec and fill_f32
 * run in three workloads each; only the 512 MiB copy is SLOW. */
static struct kpt_diff *real_copy_diff(void)
{
	struct kpt_diff *df = NULL;
	/* one session on each side, recorded minutes apart on one machine: the
	 * run-to-run part alone (a negligible between-session prior) */
	static const struct kpt_diff_opts o = { .between_prior_pct = 0.001, .between_floor_ns = 1e-6 };

	assert_int_equal(kpt_diff_paths(KPT_SRC_DIR "/tests/data/copy_base.kpt",
					 KPT_SRC_DIR "/tests/data/copy_plant10_512MiB.kpt", &o, &df, NULL), 0);
	return df;
}

static void test_diff_labels_unique_when_short_names_collide(void **state)
{
	struct kpt_diff *df = real_copy_diff();
	char *out[64], *keys[32], lab[64][256], buf[256];
	int n, nk, slow = 0;

	(void)state;
	assert_int_equal(kpt_plot_diff_change(df, tmpdir, "real_change", NULL), 0);
	n = read_block("real_change", "data", out, 64);
	assert_int_equal(n, 3); /* the three copies: fills run outside kpt:iter and are not compared */
	for (int i = 0; i < n; i++) {
		last_field(out[i], lab[i], sizeof lab[i]);
		for (int j = 0; j < i; j++)
			assert_string_not_equal(lab[i], lab[j]);
		if (strstr(out[i], " SLOW ")) {
			slow++;
			assert_string_equal(lab[i], "copy_vec [memory.copy.512MiB]");
			assert_string_equal(range_field(out[i], buf, sizeof buf), "memory.copy.512MiB/kpt_copy");
		}
	}
	assert_int_equal(slow, 1);
	/* diff_runs names its keys the same way */
	assert_int_equal(kpt_plot_diff_runs(df, tmpdir, "real_runs", NULL), 0);
	nk = read_block("real_runs", "keys", keys, 32);
	assert_int_equal(nk, 1); /* the SLOW key (no AMBG key left once set-up fills are not compared) */
	assert_string_equal(last_field(keys[0], buf, sizeof buf), "copy_vec [memory.copy.512MiB]");
	free_rows(out, n);
	free_rows(keys, nk);
	kpt_diff_destroy(df);
}

/* 80 keys with 200-character names: numbered, abbreviated y labels in a
 * label column that leaves most of the canvas to the plot, a canvas that
 * grows with the keys, and the whole names in the legend. */
static void test_diff_change_readable_with_80_long_keys(void **state)
{
	static char names[80][208];
	struct kpt_diff_row rows[80];
	struct kpt_diff df;
	char path[128], line[1024];
	double lmargin = 1;
	int h = 0, legend = 0;
	FILE *fp;

	(void)state;
	for (int i = 0; i < 80; i++) {
		snprintf(names[i], sizeof names[i], "void ns::kernel_%02d<", i);
		memset(names[i] + strlen(names[i]), 'x', 200 - strlen(names[i]) - 2);
		strcpy(names[i] + 198, ">()");
		rows[i] = row(names[i], i % 7 ? KPT_V_SAME : KPT_V_AMBG, 0.1 * i - 4, 0.1 * i - 5, 0.1 * i - 3);
	}
	memset(&df, 0, sizeof df);
	df.rows = rows;
	df.nrows = 80;
	assert_int_equal(kpt_plot_diff_change(&df, tmpdir, "long", NULL), 0);
	snprintf(path, sizeof path, "%s/long.gp", tmpdir);
	assert_non_null(fp = fopen(path, "r"));
	while (fgets(line, sizeof line, fp)) {
		sscanf(line, "set terminal pngcairo size %*d,%d", &h);
		sscanf(line, "set lmargin at screen %lf", &lmargin);
	}
	fclose(fp);
	assert_true(h >= 80 * 16);          /* 16 px a key */
	assert_true(lmargin < 0.25);        /* labels abbreviated: the plot gets the rest */
	snprintf(path, sizeof path, "%s/long-keys.tsv", tmpdir);
	assert_non_null(fp = fopen(path, "r"));
	while (fgets(line, sizeof line, fp))
		legend += strstr(line, "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx>()") != NULL;
	fclose(fp);
	assert_int_equal(legend, 80);       /* every whole name */
}

static void test_diff_change_carries_each_keys_threshold(void **state)
{
	struct kpt_diff *df = real_copy_diff();
	char *out[64], gp[256], line[4096];
	int n, seen[3] = { 0 };
	FILE *fp;

	(void)state;
	assert_int_equal(kpt_plot_diff_change(df, tmpdir, "real_thr", NULL), 0);
	n = read_block("real_thr", "data", out, 64);
	for (int i = 0; i < n; i++) {
		double thr;
		char verdict[16];
		size_t k;

		assert_int_equal(sscanf(out[i], "%*d %*f %*f %*f %*x %15s %lf", verdict, &thr), 2);
		/* the row's key, found by its range and label */
		for (k = 0; k < df->nrows; k++) {
			char lab_row[256], rng[256];
			const struct kpt_diff_row *r = &df->rows[k];

			last_field(out[i], lab_row, sizeof lab_row);
			range_field(out[i], rng, sizeof rng);
			if (strcmp(rng, r->path) == 0 && strncmp(lab_row, r->name, 4) == 0)
				break;
		}
		assert_true(k < df->nrows);
		assert_float_equal(thr, df->rows[k].threshold_pct, 1e-9);
		seen[thr == 1 ? 0 : thr == 2 ? 1 : thr == 5 ? 2 : 0] = 1;
	}
	/* long (>= 200 us: 1%), default (2%) and short (< 10 us: 5%) keys */
	assert_true(seen[0] && seen[1] && seen[2]);
	free_rows(out, n);
	/* the band is drawn per row from the threshold column, not one +-2% rect */
	snprintf(gp, sizeof gp, "%s/real_thr.gp", tmpdir);
	fp = fopen(gp, "r");
	assert_non_null(fp);
	n = 0;
	while (fgets(line, sizeof line, fp)) {
		assert_null(strstr(line, "set object 1 rect"));
		n += strstr(line, "(-$7):7") != NULL;
	}
	fclose(fp);
	assert_int_equal(n, 1);
	kpt_diff_destroy(df);
}

static void test_short_name_drops_return_type_and_params(void **state)
{
	char out[128];

	(void)state;
	kpt_short_name("void kpt::mem::copy<float4>(float4 const*, float4*, unsigned long)", 60, out, sizeof out);
	assert_string_equal(out, "kpt::mem::copy<float4>");
	kpt_short_name("plain_c_kernel", 60, out, sizeof out);
	assert_string_equal(out, "plain_c_kernel");
	kpt_short_name("void (anonymous namespace)::f<int>(int)", 60, out, sizeof out);
	assert_string_equal(out, "(anonymous namespace)::f<int>");
	kpt_short_name("void ns::kernel<aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbbbbbbbbbbbbbb>(int)",
		       30, out, sizeof out);
	assert_int_equal(strlen(out), 30);
	assert_non_null(strstr(out, "..."));
	assert_int_equal(strncmp(out, "ns::kernel<", 11), 0);
}

static void test_gnuplot_renders_png_or_is_reported_missing(void **state)
{
	struct kpt_compare_bar b[] = { { "A", 1 }, { "B", 2 } };
	char prog[4096], png[256];
	struct kpt_diag d;
	struct stat st;
	int rc;

	(void)state;
	assert_int_equal(kpt_plot_compare("w", "us", b, 2, tmpdir, "render", NULL), 0);
	rc = kpt_gnuplot_render(tmpdir, "render", 30000, &d);
	snprintf(png, sizeof png, "%s/render.png", tmpdir);
	if (!kpt_gnuplot_find(prog, sizeof prog)) {
		assert_int_equal(rc, KPT_E_UNSUPPORTED);
		skip();
	}
	if (rc != 0)
		fail_msg("%s", d.msg);
	assert_int_equal(stat(png, &st), 0);
	assert_true(st.st_size > 1000);
}

static void test_every_plot_script_renders(void **state)
{
	/* each script above is valid gnuplot (when gnuplot is installed) */
	static const char *const stems[] = { "change", "capped", "runs", "top", "roof", "cmp", "quote" };
	char prog[4096];
	struct kpt_diag d;

	(void)state;
	if (!kpt_gnuplot_find(prog, sizeof prog))
		skip();
	for (size_t i = 0; i < sizeof stems / sizeof stems[0]; i++)
		if (kpt_gnuplot_render(tmpdir, stems[i], 30000, &d) != 0)
			fail_msg("%s: %s", stems[i], d.msg);
}

/* kpt_gp_quote'd strings read back by gnuplot itself are the names (control
 * characters as spaces): quotes in a row, backquotes (no command runs),
 * backslashes and double quotes included. Single-quoted literals failed on
 * two quotes in a row (issue 21). */
static void test_quote_survives_quotes_in_a_row_and_backquotes(void **state)
{
	static const char *const names[] = {
		"it''s", "a''''b", "'", "`touch ran`", "dq\"x", "back\\slash", "tab\tnl\n", "$x @y",
	};
	static const char *const want[] = {
		"it''s", "a''''b", "'", "`touch ran`", "dq\"x", "back\\slash", "tab nl ", "$x @y",
	};
	char prog[4096], path[128], cmd[4400], line[512];
	struct stat st;
	FILE *fp, *in;

	(void)state;
	if (!kpt_gnuplot_find(prog, sizeof prog))
		skip();
	snprintf(path, sizeof path, "%s/quote2.gp", tmpdir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "set print '-'\n");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		fprintf(fp, "print ");
		kpt_gp_quote(fp, names[i]);
		fputc('\n', fp);
	}
	assert_int_equal(fclose(fp), 0);
	/* in tmpdir: a command that ran would leave tmpdir/ran */
	snprintf(cmd, sizeof cmd, "cd '%s' && '%s' quote2.gp 2>&1", tmpdir, prog);
	in = popen(cmd, "r");
	assert_non_null(in);
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		assert_non_null(fgets(line, sizeof line, in));
		line[strcspn(line, "\n")] = '\0';
		assert_string_equal(line, want[i]);
	}
	assert_int_equal(pclose(in), 0);
	snprintf(path, sizeof path, "%s/ran", tmpdir);
	assert_int_not_equal(stat(path, &st), 0);
}

/* A link planted where a script goes is replaced, never followed. */
static void test_script_never_writes_through_a_planted_link(void **state)
{
	struct kpt_compare_bar b[] = { { "A", 1 } };
	char victim[128], link[128], buf[16] = "";
	struct stat st;
	FILE *fp;
	int fd;

	(void)state;
	snprintf(victim, sizeof victim, "%s/victim.txt", tmpdir);
	snprintf(link, sizeof link, "%s/planted.gp", tmpdir);
	fd = open(victim, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "keep", 4), 4);
	assert_int_equal(close(fd), 0);
	assert_int_equal(symlink(victim, link), 0);
	assert_int_equal(kpt_plot_compare("w", "us", b, 1, tmpdir, "planted", NULL), 0);
	fp = fopen(victim, "r");
	assert_non_null(fp);
	assert_non_null(fgets(buf, sizeof buf, fp));
	fclose(fp);
	assert_string_equal(buf, "keep");
	assert_int_equal(lstat(link, &st), 0);
	assert_true(S_ISREG(st.st_mode));
}

static void test_missing_gnuplot_is_unsupported_with_hint(void **state)
{
	struct kpt_diag d;

	(void)state;
	setenv("KPT_GNUPLOT", "/nonexistent/gnuplot", 1);
	assert_int_equal(kpt_gnuplot_render(tmpdir, "cmp", 1000, &d), KPT_E_UNSUPPORTED);
	assert_non_null(strstr(d.msg, "gnuplot not found"));
	assert_non_null(strstr(d.hint, "gnuplot cmp.gp"));
	unsetenv("KPT_GNUPLOT");
}

/* Makes tmpdir/NAME an executable shell script with body and points
 * KPT_GNUPLOT at it. */
static void fake_gnuplot(const char *name, const char *body)
{
	char fake[128];
	FILE *fp;

	snprintf(fake, sizeof fake, "%s/%s", tmpdir, name);
	fp = fopen(fake, "w");
	assert_non_null(fp);
	fprintf(fp, "#!/bin/sh\n%s\n", body);
	fclose(fp);
	chmod(fake, 0755);
	setenv("KPT_GNUPLOT", fake, 1);
}

static void test_hung_gnuplot_is_killed_after_timeout(void **state)
{
	struct kpt_diag d;

	(void)state;
	fake_gnuplot("fake-gnuplot", "exec sleep 30");
	assert_int_equal(kpt_gnuplot_render(tmpdir, "cmp", 300, &d), KPT_E_IO);
	assert_non_null(strstr(d.msg, "killed"));
	unsetenv("KPT_GNUPLOT");
}

static void test_failing_gnuplot_reports_its_message(void **state)
{
	struct kpt_diag d;

	(void)state;
	fake_gnuplot("bad-gnuplot", "echo \"line 3: undefined variable: foo\" >&2\nexit 1");
	assert_int_equal(kpt_gnuplot_render(tmpdir, "cmp", 5000, &d), KPT_E_IO);
	assert_non_null(strstr(d.msg, "undefined variable: foo"));
	assert_non_null(strstr(d.msg, "exit 1"));
	unsetenv("KPT_GNUPLOT");
}

static void test_diff_plots_for_kptprof_diff(void **state)
{
	double b1[] = { 1000, 1010 }, n1[] = { 1100, 1080 };
	struct kpt_diff_row rows[] = {
		row("slowk", KPT_V_SLOW, 9, 7, 11),
		row("samek", KPT_V_SAME, 0, -1, 1),
	};
	struct kpt_view_result res;
	struct kpt_diff df;
	char dir[128], gp[160];

	(void)state;
	rows[0].base_run_ns = b1;
	rows[0].base_runs = 2;
	rows[0].new_run_ns = n1;
	rows[0].new_runs = 2;
	memset(&df, 0, sizeof df);
	df.rows = rows;
	df.nrows = 2;
	snprintf(dir, sizeof dir, "%s/diffplots", tmpdir);
	assert_int_equal(kpt_view_diff_plots(&df, dir, 1, &res, NULL), 0);
	assert_int_equal(res.plots, 2);
	assert_int_equal(res.rendered, 0);
	snprintf(gp, sizeof gp, "%s/diff-runs.gp", dir);
	assert_int_equal(access(gp, R_OK), 0);
	/* nothing SLOW or AMBG: only the change plot */
	rows[0].verdict = KPT_V_FAST;
	snprintf(dir, sizeof dir, "%s/diffplots2", tmpdir);
	assert_int_equal(kpt_view_diff_plots(&df, dir, 1, &res, NULL), 0);
	assert_int_equal(res.plots, 1);
	snprintf(gp, sizeof gp, "%s/diff-runs.gp", dir);
	assert_int_equal(access(gp, F_OK), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_diff_change_block_matches_rows_sorted_by_change),
		cmocka_unit_test(test_quote_survives_quotes_in_a_row_and_backquotes),
		cmocka_unit_test(test_script_never_writes_through_a_planted_link),
		cmocka_unit_test(test_diff_change_keeps_non_same_keys_when_capped),
		cmocka_unit_test(test_diff_labels_unique_when_short_names_collide),
		cmocka_unit_test(test_diff_change_carries_each_keys_threshold),
		cmocka_unit_test(test_diff_change_readable_with_80_long_keys),
		cmocka_unit_test(test_diff_runs_block_has_every_run_median),
		cmocka_unit_test(test_top_kernels_block_matches_summary_and_other),
		cmocka_unit_test(test_roofline_points_and_skip_when_unknown),
		cmocka_unit_test(test_compare_bars_in_order),
		cmocka_unit_test(test_script_quotes_names_safely),
		cmocka_unit_test(test_short_name_drops_return_type_and_params),
		cmocka_unit_test(test_gnuplot_renders_png_or_is_reported_missing),
		cmocka_unit_test(test_every_plot_script_renders),
		cmocka_unit_test(test_missing_gnuplot_is_unsupported_with_hint),
		cmocka_unit_test(test_hung_gnuplot_is_killed_after_timeout),
		cmocka_unit_test(test_failing_gnuplot_reports_its_message),
		cmocka_unit_test(test_diff_plots_for_kptprof_diff),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
