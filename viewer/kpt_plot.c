/* kpt_plot.c - the report plots as gnuplot scripts (see kpt_plot.h). */
#include "kpt_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_gnuplot.h"
#include "kpt_outfile.h"
#include "kpt_text.h"
#include "kpt_timeline.h"

static const struct {
	const char *label;
	unsigned color;
} verdicts[KPT_V_COUNT] = {
	[KPT_V_SAME] = { "SAME", 0x8c8c8c },
	[KPT_V_SLOW] = { "SLOW", 0xd62f2f },
	[KPT_V_FAST] = { "FAST", 0x2e9e4f },
	[KPT_V_AMBG] = { "AMBG", 0xe89a1c },
	[KPT_V_NEW] = { "NEW", 0x3b6fd6 },
	[KPT_V_GONE] = { "GONE", 0x8e5fc9 },
};

unsigned kpt_verdict_color(int v)
{
	return v >= 0 && v < KPT_V_COUNT ? verdicts[v].color : 0x000000;
}

const char *kpt_verdict_label(int v)
{
	return v >= 0 && v < KPT_V_COUNT ? verdicts[v].label : "?";
}

void kpt_short_name(const char *name, int max_chars, char *out, size_t cap)
{
	const char *start, *end = NULL;
	int depth = 0;
	size_t n;

	if (!name)
		name = "";
	start = name;
	/* Parameter list: the first '(' at template depth 0 that is not
	 * "(anonymous namespace)"; return type: up to the last depth-0 space
	 * before it. */
	for (const char *p = name; *p && !end; p++) {
		if (strncmp(p, "(anonymous namespace)", 21) == 0)
			p += 20;
		else if (*p == '<')
			depth++;
		else if (*p == '>' && depth > 0)
			depth--;
		else if (*p == '(' && depth == 0 && p > name)
			end = p;
		else if (*p == ' ' && depth == 0)
			start = p + 1;
	}
	if (!end)
		end = name + strlen(name);
	if (start >= end)
		start = name;
	n = (size_t)(end - start);
	if (max_chars < 12)
		max_chars = 12;
	if (n <= (size_t)max_chars) {
		snprintf(out, cap, "%.*s", (int)n, start);
		return;
	}
	/* Keep the head (namespace, name) and the tail (last template args). */
	{
		int head = (max_chars - 3) * 2 / 3, tail = max_chars - 3 - head;

		snprintf(out, cap, "%.*s...%.*s", head, start, tail, end - tail);
	}
}

static void gp_color(FILE *out, unsigned c)
{
	fprintf(out, "'#%06x'", c & 0xffffff);
}

/* ---- diff: change per key ---------------------------------------------- */

static int tested(const struct kpt_diff_row *r)
{
	return r->verdict != KPT_V_NEW && r->verdict != KPT_V_GONE && isfinite(r->change_pct);
}

static const struct kpt_diff *sort_df;

static int cmp_abs_change(const void *a, const void *b)
{
	const struct kpt_diff_row *x = &sort_df->rows[*(const size_t *)a];
	const struct kpt_diff_row *y = &sort_df->rows[*(const size_t *)b];
	int px = x->verdict != KPT_V_SAME, py = y->verdict != KPT_V_SAME;

	if (px != py)
		return py - px;
	if (fabs(x->change_pct) != fabs(y->change_pct))
		return fabs(x->change_pct) > fabs(y->change_pct) ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static int cmp_change(const void *a, const void *b)
{
	const struct kpt_diff_row *x = &sort_df->rows[*(const size_t *)a];
	const struct kpt_diff_row *y = &sort_df->rows[*(const size_t *)b];

	if (x->change_pct != y->change_pct)
		return x->change_pct < y->change_pct ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

#define KEY_LABEL 200

/* Innermost range of an NVTX path "a/b/c": "c"; "" when none. */
static const char *innermost(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path ? path : "";
}

/* Label of a key at a disambiguation level: 0 the short name (with #ordinal
 * when > 0); 1 adds the workload (the innermost range when none); 2 the
 * full range path; 3 the launch config too. */
static void key_label(const struct kpt_diff_row *r, int level, char *out, size_t cap)
{
	char shortn[128], ord[16] = "", ctx[96] = "", cfg[48] = "";
	const char *wl = r->workload && *r->workload ? r->workload : innermost(r->path);

	kpt_short_name(r->name, 56, shortn, sizeof shortn);
	if (r->ordinal)
		snprintf(ord, sizeof ord, " #%u", r->ordinal);
	if (level >= 1 && *wl)
		snprintf(ctx, sizeof ctx, " [%s]", level >= 2 && r->path && *r->path ? r->path : wl);
	if (level >= 3)
		snprintf(cfg, sizeof cfg, r->loose ? " (configs differ)" : " (%u,%u,%u)x(%u,%u,%u)",
			 r->grid[0], r->grid[1], r->grid[2], r->block[0], r->block[1], r->block[2]);
	snprintf(out, cap, "%s%s%s%s", shortn, ord, ctx, cfg);
}

/* Labels of the plotted keys rows[idx[0..n-1]] into lab[n]: each key gets
 * the lowest key_label level at which no other key of the diff (plotted or
 * not) has the same label, so colliding short names are told apart by
 * workload, range and config, and the same key reads the same in every
 * plot. O(n x rows x levels). */
static void key_labels(const struct kpt_diff *df, const size_t *idx, size_t n, char (*lab)[KEY_LABEL])
{
	char other[KEY_LABEL];

	for (size_t k = 0; k < n; k++)
		for (int level = 0; level <= 3; level++) {
			int unique = 1;

			key_label(&df->rows[idx[k]], level, lab[k], KEY_LABEL);
			for (size_t j = 0; j < df->nrows && unique; j++) {
				if (j == idx[k])
					continue;
				key_label(&df->rows[j], level, other, sizeof other);
				unique = strcmp(other, lab[k]) != 0;
			}
			if (unique)
				break;
		}
}

size_t kpt_plot_change_keys(const struct kpt_diff *df, size_t *idx, size_t *total)
{
	size_t n = 0;

	for (size_t i = 0; i < df->nrows; i++)
		if (tested(&df->rows[i]))
			idx[n++] = i;
	*total = n;
	sort_df = df;
	if (n > KPT_PLOT_MAX_KEYS) {
		qsort(idx, n, sizeof *idx, cmp_abs_change);
		n = KPT_PLOT_MAX_KEYS;
	}
	/* largest change first: key 1 is the top row */
	qsort(idx, n, sizeof *idx, cmp_change);
	for (size_t i = 0; i < n / 2; i++) {
		size_t t = idx[i];

		idx[i] = idx[n - 1 - i];
		idx[n - 1 - i] = t;
	}
	return n;
}

/* Chars of the y-axis labels: "NN  " and a short name; the full names are
 * in the legend table (the data block, <stem>-keys.tsv, view's table). */
#define CHANGE_LABEL_CHARS 34

/* The legend of the numbered keys: key, verdict, change, kernel (whole),
 * range (whole), as TSV cleaned for a file others read with cat. */
static int change_legend(const struct kpt_diff *df, const size_t *idx, size_t n, const char *dir,
			 const char *stem, struct kpt_diag *d)
{
	size_t len = strlen(dir) + strlen(stem) + 16;
	char *path = malloc(len);
	FILE *fp;
	int rc;

	if (!path)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	snprintf(path, len, "%s-keys.tsv", stem);
	if ((rc = kpt_out_create_at(dir, path, &fp, d)) < 0) { /* never through a planted link (kpt_outfile.h) */
		free(path);
		return rc;
	}
	fputs("key\tverdict\tchange_pct\tkernel\trange\n", fp);
	for (size_t k = 0; k < n; k++) {
		const struct kpt_diff_row *r = &df->rows[idx[k]];

		fprintf(fp, "%zu\t%s\t%.3f\t", k + 1, kpt_verdict_label(r->verdict), r->change_pct);
		kpt_text_write(fp, KPT_TEXT_TERM, r->name);
		if (r->ordinal)
			fprintf(fp, " #%u", r->ordinal);
		fputc('\t', fp);
		kpt_text_write(fp, KPT_TEXT_TERM, r->path && *r->path ? r->path : "-");
		fputc('\n', fp);
	}
	rc = kpt_out_publish(fp, path, 0, d);
	free(path);
	return rc;
}

int kpt_plot_diff_change(const struct kpt_diff *df, const char *dir, const char *stem,
			 struct kpt_diag *d)
{
	size_t *idx, n, total;
	int present[KPT_V_COUNT] = { 0 }, rc, w = 1100, h, lab_px;
	double thr = df->opts.threshold_pct > 0 ? df->opts.threshold_pct : 2.0;
	double lo = -thr, hi = thr, tmin = INFINITY, tmax = -INFINITY;
	char (*lab)[KEY_LABEL];
	FILE *fp;

	idx = malloc((df->nrows ? df->nrows : 1) * sizeof *idx);
	if (!idx)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	if ((n = kpt_plot_change_keys(df, idx, &total)) == 0) {
		free(idx);
		return kpt_diag_set(d, KPT_E_NOTFOUND, "no kernel was found in both recordings: no change to plot");
	}
	lab = malloc(n * sizeof *lab);
	if (!lab) {
		free(idx);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	key_labels(df, idx, n, lab);
	/* the canvas grows with the keys: 16 px a row, title, key and x label
	 * above and below; the label column is sized for its longest label */
	h = 170 + 16 * (int)n;
	if ((rc = change_legend(df, idx, n, dir, stem, d)) != 0 ||
	    (rc = kpt_gp_open(dir, stem, "kptprof diff: change of each kernel (NEW vs BASE) with its interval",
			      w, h, &fp, d)) != 0) {
		free(lab);
		free(idx);
		return rc;
	}
	fprintf(fp, "# the keys are numbered from the top; %s-keys.tsv has their whole names\n", stem);
	fprintf(fp, "$data << EOD\n# rank change_pct ci_low_pct ci_high_pct color verdict threshold_pct label range tick\n");
	lab_px = 0;
	/* rows by rank, the smallest change first: key k + 1 has rank n - 1 - k */
	for (size_t k = n; k-- > 0;) {
		const struct kpt_diff_row *r = &df->rows[idx[k]];
		double cl = isfinite(r->ci_low_pct) ? r->ci_low_pct : r->change_pct;
		double ch = isfinite(r->ci_high_pct) ? r->ci_high_pct : r->change_pct;
		double kt = r->threshold_pct > 0 ? r->threshold_pct : thr;
		char tick[CHANGE_LABEL_CHARS + 48], shortn[CHANGE_LABEL_CHARS];

		kpt_short_name(r->name, CHANGE_LABEL_CHARS - 10, shortn, sizeof shortn);
		if (r->ordinal)
			snprintf(tick, sizeof tick, "%zu  %s #%u", k + 1, shortn, r->ordinal);
		else
			snprintf(tick, sizeof tick, "%zu  %s", k + 1, shortn);
		lab_px = (int)strlen(tick) > lab_px ? (int)strlen(tick) : lab_px;
		/* rank: the top row (key 1) has the largest y */
		fprintf(fp, "%zu %.6g %.6g %.6g 0x%06x %s %.6g ", n - 1 - k, r->change_pct, cl, ch,
			kpt_verdict_color(r->verdict), kpt_verdict_label(r->verdict), kt);
		kpt_gp_field(fp, lab[k]);
		fputc(' ', fp);
		kpt_gp_field(fp, r->path && *r->path ? r->path : "-");
		fputc(' ', fp);
		kpt_gp_tic_field(fp, tick);
		fputc('\n', fp);
		present[r->verdict] = 1;
		lo = fmin(lo, fmin(cl, -kt));
		hi = fmax(hi, fmax(ch, kt));
		tmin = fmin(tmin, kt);
		tmax = fmax(tmax, kt);
	}
	fprintf(fp, "EOD\n");
	fprintf(fp, "set title ");
	{
		char title[512], band[64];

		if (tmin == tmax)
			snprintf(band, sizeof band, "+-%g%%", tmin);
		else
			snprintf(band, sizeof band, "+-%g%% to +-%g%% by duration", tmin, tmax);
		snprintf(title, sizeof title, "Change per kernel, NEW vs BASE: %zu of %zu matched keys, numbered from the top "
			 "(band: each key's threshold, %s)", n, total, band);
		kpt_gp_quote(fp, title);
	}
	/* 8-point labels: about 6 px a character; margins in screen fractions
	 * so nothing is cut whatever the label lengths */
	fprintf(fp, "\nset lmargin at screen %.4f\nset rmargin at screen 0.98\n", (16.0 + 6.0 * lab_px) / w);
	fprintf(fp, "set tmargin at screen %.4f\nset bmargin at screen %.4f\n", 1 - 70.0 / h, 55.0 / h);
	fprintf(fp, "set xlabel 'change of the run medians, %% (interval at 1 - alpha)'\n");
	fprintf(fp, "set arrow 1 from 0, graph 0 to 0, graph 1 nohead lc rgb '#909090' back\n");
	fprintf(fp, "set xrange [%.6g:%.6g]\nset yrange [-0.7:%zu.3]\n",
		lo - 0.08 * (hi - lo), hi + 0.08 * (hi - lo), n - 1);
	fprintf(fp, "set ytics out nomirror font ',8'\nset grid xtics lc rgb '#dddddd'\n"
		    "set key at screen 0.5, screen %.4f center top horizontal reverse Left samplen 1\n", 1 - 4.0 / h);
	/* The band: each key's own threshold, a box around its row. */
	fprintf(fp, "plot $data using (0):1:(-$7):7:($1-0.45):($1+0.45) with boxxyerror fs solid noborder "
		    "fc rgb '#e4e4e4' notitle, \\\n"
		    "     $data using 2:1:3:4:5:ytic(10) with xerrorbars pt 7 ps 1.1 lw 1.5 lc rgb variable notitle");
	for (int v = 0; v < KPT_V_COUNT; v++)
		if (present[v]) {
			fprintf(fp, ", NaN with points pt 7 lc rgb ");
			gp_color(fp, kpt_verdict_color(v));
			fprintf(fp, " title '%s'", kpt_verdict_label(v));
		}
	fputc('\n', fp);
	free(lab);
	free(idx);
	return kpt_gp_close(fp, dir, stem, d);
}

/* ---- diff: run medians --------------------------------------------------- */

static void runs_block(FILE *fp, const char *name, const struct kpt_diff *df, const size_t *keys,
		       size_t n, int side)
{
	fprintf(fp, "$%s << EOD\n# key x run_median_ns relative_pct\n", name);
	for (size_t k = 0; k < n; k++) {
		const struct kpt_diff_row *r = &df->rows[keys[k]];
		const double *m = side ? r->new_run_ns : r->base_run_ns;
		uint32_t nm = side ? r->new_runs : r->base_runs;

		for (uint32_t i = 0; i < nm; i++)
			fprintf(fp, "%zu %.3f %.6g %.6g\n", k, (double)k + (side ? 0.17 : -0.17), m[i],
				100.0 * (m[i] / r->base_ns - 1.0));
	}
	fprintf(fp, "EOD\n");
}

int kpt_plot_diff_runs(const struct kpt_diff *df, const char *dir, const char *stem,
		       struct kpt_diag *d)
{
	size_t keys[KPT_PLOT_MAX_RUNKEYS], n = 0, total = 0;
	char lab[KPT_PLOT_MAX_RUNKEYS][KEY_LABEL];
	double thr = df->opts.threshold_pct > 0 ? df->opts.threshold_pct : 2.0;
	FILE *fp;
	int rc;

	for (size_t i = 0; i < df->nrows; i++) {
		const struct kpt_diff_row *r = &df->rows[i];

		if ((r->verdict != KPT_V_SLOW && r->verdict != KPT_V_AMBG) || !(r->base_ns > 0))
			continue;
		total++;
		if (n < KPT_PLOT_MAX_RUNKEYS)
			keys[n++] = i;
	}
	if (n == 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "no SLOW or AMBG kernel: no run medians to plot");
	rc = kpt_gp_open(dir, stem, "kptprof diff: run medians of BASE and NEW for the SLOW and AMBG kernels",
			 1100, 560, &fp, d);
	if (rc)
		return rc;
	key_labels(df, keys, n, lab);
	fprintf(fp, "$keys << EOD\n# key label range\n");
	for (size_t k = 0; k < n; k++) {
		fprintf(fp, "%zu ", k);
		kpt_gp_field(fp, lab[k]);
		fputc(' ', fp);
		kpt_gp_field(fp, df->rows[keys[k]].path && *df->rows[keys[k]].path ? df->rows[keys[k]].path : "-");
		fputc('\n', fp);
	}
	fprintf(fp, "EOD\n");
	runs_block(fp, "base", df, keys, n, 0);
	runs_block(fp, "new", df, keys, n, 1);
	fprintf(fp, "set title ");
	{
		char title[256];

		snprintf(title, sizeof title, "Run medians of the SLOW and AMBG kernels (%zu of %zu), relative to the BASE centre",
			 n, total);
		kpt_gp_quote(fp, title);
	}
	fprintf(fp, "\nset ylabel 'run median vs BASE geometric mean, %%'\n");
	fprintf(fp, "set object 1 rect from graph 0, first %.6g to graph 1, first %.6g fc rgb '#ececec' fs solid noborder behind\n",
		-thr, thr);
	fprintf(fp, "set xrange [-0.6:%zu.6]\nset xtics (", n - 1);
	for (size_t k = 0; k < n; k++) {
		fprintf(fp, "%s", k ? ", " : "");
		kpt_gp_tic_quote(fp, lab[k]);
		fprintf(fp, " %zu", k);
	}
	fprintf(fp, ") rotate by 30 right font ',8'\nset bmargin 10\nset lmargin 26\nset grid ytics lc rgb '#dddddd'\n"
		    "set key outside top center horizontal reverse Left samplen 1\n");
	fprintf(fp, "plot $base using 2:4 with points pt 7 ps 1.1 lc rgb '#4a7fc1' title 'BASE run medians', \\\n"
		    "     $new using 2:4 with points pt 5 ps 1.1 lc rgb '#d62f2f' title 'NEW run medians'\n");
	return kpt_gp_close(fp, dir, stem, d);
}

/* ---- run: top kernels ---------------------------------------------------- */

int kpt_plot_top_kernels(const struct kpt_summary *s, const char *title, kpt_plot_color_fn color,
			 void *ctx, const char *dir, const char *stem, struct kpt_diag *d)
{
	size_t n = s->n < KPT_PLOT_TOP ? s->n : KPT_PLOT_TOP, rows;
	double other_pct = 0, other_ns = 0;
	uint64_t other_inst = 0;
	FILE *fp;
	int rc;

	if (n == 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "no kernels: no GPU time to plot");
	for (size_t i = n; i < s->n; i++) {
		other_pct += s->rows[i].time_pct;
		other_ns += (double)s->rows[i].total_ns;
		other_inst += s->rows[i].instances;
	}
	rows = n + (s->n > n);
	rc = kpt_gp_open(dir, stem, "kptprof: kernels by share of GPU time", 1100, 120 + 22 * (int)rows, &fp, d);
	if (rc)
		return rc;
	fprintf(fp, "$data << EOD\n# rank share_pct total_ns instances color label\n");
	for (size_t i = 0; i < n; i++) {
		const struct kpt_summary_row *r = &s->rows[i];
		char label[160], fam[256];

		kpt_short_name(r->display, 64, label, sizeof label);
		kpt_kernel_family(r->name, fam, sizeof fam);
		fprintf(fp, "%zu %.6g %llu %llu 0x%06x ", i, r->time_pct, (unsigned long long)r->total_ns,
			(unsigned long long)r->instances, (color ? color(ctx, fam) : kpt_family_color(fam)) & 0xffffff);
		kpt_gp_tic_field(fp, label);
		fputc('\n', fp);
	}
	if (rows > n) {
		char label[64];

		snprintf(label, sizeof label, "other (%zu kernels)", s->n - n);
		fprintf(fp, "%zu %.6g %.0f %llu 0x%06x ", n, other_pct, other_ns,
			(unsigned long long)other_inst, 0xb0b0b0);
		kpt_gp_tic_field(fp, label);
		fputc('\n', fp);
	}
	fprintf(fp, "EOD\nset title ");
	kpt_gp_quote(fp, title ? title : "Kernels by share of GPU time");
	fprintf(fp, "\nset xlabel 'share of GPU time, %%'\nset xrange [0:*]\nset offsets 0, graph 0.12, 0, 0\n"
		    "set yrange [%zu.6:-0.6]\nset ytics out nomirror font ',8'\n"
		    "set grid xtics lc rgb '#dddddd'\nset style fill solid 0.9 noborder\n",
		rows - 1);
	fprintf(fp, "plot $data using (0.5*$2):1:(0.5*$2):(0.38):5:ytic(6) with boxxyerror lc rgb variable notitle, \\\n"
		    "     $data using 2:1:(sprintf(' %%.1f%%%%', $2)) with labels left font ',8' notitle\n");
	return kpt_gp_close(fp, dir, stem, d);
}

/* ---- run: roofline --------------------------------------------------------- */

int kpt_plot_roofline(const struct kpt_roofline *r, const char *dir, const char *stem,
		      struct kpt_diag *d)
{
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
	double bw = r->copy_gbps > 0 ? r->copy_gbps / 1000.0 : 0; /* TFLOP/s per FLOP/byte */
	double peak = r->bf16_tflops > 0 ? r->bf16_tflops : 0;
	size_t kept = 0;
	char title[512];
	FILE *fp;
	int rc;

	for (size_t i = 0; i < r->n; i++) {
		const struct kpt_roof_point *p = &r->pts[i];
		double ai, tf;

		if (!(p->flops > 0 && p->bytes > 0 && p->ns > 0))
			continue;
		ai = p->flops / p->bytes;
		tf = p->flops / p->ns / 1e3;
		xmin = fmin(xmin, ai);
		xmax = fmax(xmax, ai);
		ymin = fmin(ymin, tf);
		ymax = fmax(ymax, tf);
		kept++;
	}
	if (kept == 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND,
				    "no roofline: FLOPs and bytes of the workloads are unknown (meta workload.<name>.flops/.bytes)");
	if (bw > 0 && peak > 0) {
		xmin = fmin(xmin, peak / bw);
		xmax = fmax(xmax, peak / bw);
		ymax = fmax(ymax, peak);
		ymin = fmin(ymin, xmin * bw);
	}
	rc = kpt_gp_open(dir, stem, "kptprof: roofline (arithmetic intensity vs achieved FLOP/s, measured ceilings)",
			 1000, 640, &fp, d);
	if (rc)
		return rc;
	fprintf(fp, "$points << EOD\n# intensity_flop_per_byte tflops flops bytes ns name\n");
	for (size_t i = 0; i < r->n; i++) {
		const struct kpt_roof_point *p = &r->pts[i];

		if (!(p->flops > 0 && p->bytes > 0 && p->ns > 0))
			continue;
		fprintf(fp, "%.6g %.6g %.6g %.6g %.6g ", p->flops / p->bytes, p->flops / p->ns / 1e3,
			p->flops, p->bytes, p->ns);
		kpt_gp_field(fp, p->name);
		fputc('\n', fp);
	}
	fprintf(fp, "EOD\n");
	if (bw > 0 && peak > 0)
		snprintf(title, sizeof title, "Roofline on %s: ceilings measured %.0f GB/s copy, %.0f TFLOP/s bf16",
			 r->device ? r->device : "?", r->copy_gbps, r->bf16_tflops);
	else
		snprintf(title, sizeof title, "Roofline on %s: measured ceilings unknown (not drawn)",
			 r->device ? r->device : "?");
	fprintf(fp, "set title ");
	kpt_gp_quote(fp, title);
	fprintf(fp, "\nset logscale xy\nset xlabel 'arithmetic intensity, FLOP/byte'\nset ylabel 'achieved TFLOP/s'\n"
		    "set xrange [%.6g:%.6g]\nset yrange [%.6g:%.6g]\nset grid lc rgb '#dddddd'\nset key bottom right\n",
		    xmin / 4, xmax * 4, ymin / 4, ymax * 4);
	if (bw > 0 && peak > 0) {
		fprintf(fp, "bw = %.6g\npeak = %.6g\nroof(x) = x * bw < peak ? x * bw : peak\nset samples 400\n", bw, peak);
		fprintf(fp, "plot roof(x) with lines lw 2 lc rgb '#555555' title 'min(intensity x copy bandwidth, bf16 peak)', \\\n");
	} else {
		fprintf(fp, "plot \\\n");
	}
	fprintf(fp, "     $points using 1:2 with points pt 7 ps 1.3 lc rgb '#d64550' title 'workloads', \\\n"
		    "     $points using 1:2:6 with labels left offset char 0.8,0.6 font ',8' notitle\n");
	return kpt_gp_close(fp, dir, stem, d);
}

/* ---- compare: one workload across GPUs ---------------------------------------- */

int kpt_plot_compare(const char *workload, const char *unit, const struct kpt_compare_bar *bars,
		     size_t n, const char *dir, const char *stem, struct kpt_diag *d)
{
	size_t kept = 0;
	char title[512];
	FILE *fp;
	int rc;

	for (size_t i = 0; i < n; i++)
		kept += isfinite(bars[i].value);
	if (kept == 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "no GPU has a value for '%s': nothing to compare",
				    workload ? workload : "?");
	rc = kpt_gp_open(dir, stem, "kptprof compare: one workload across GPU models",
			 160 + 110 * (int)kept > 700 ? 160 + 110 * (int)kept : 700, 480, &fp, d);
	if (rc)
		return rc;
	fprintf(fp, "$data << EOD\n# index value color gpu\n");
	kept = 0;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(bars[i].value))
			continue;
		fprintf(fp, "%zu %.6g 0x%06x ", kept++, bars[i].value,
			kpt_family_color(bars[i].gpu ? bars[i].gpu : "?") & 0xffffff);
		kpt_gp_tic_field(fp, bars[i].gpu ? bars[i].gpu : "?");
		fputc('\n', fp);
	}
	fprintf(fp, "EOD\n");
	snprintf(title, sizeof title, "%s across GPU models", workload ? workload : "?");
	fprintf(fp, "set title ");
	kpt_gp_quote(fp, title);
	fprintf(fp, "\nset ylabel ");
	kpt_gp_quote(fp, unit ? unit : "");
	fprintf(fp, "\nset yrange [0:*]\nset offsets 0, 0, graph 0.1, 0\nset xrange [-0.6:%zu.6]\n"
		    "set style fill solid 0.9 noborder\nset boxwidth 0.6\nset grid ytics lc rgb '#dddddd'\n"
		    "set xtics nomirror\n", kept - 1);
	fprintf(fp, "plot $data using 1:2:3:xtic(4) with boxes lc rgb variable notitle, \\\n"
		    "     $data using 1:2:($2 >= 1000 ? sprintf('%%.0f', $2) : sprintf('%%.4g', $2)) with labels offset 0,0.8 notitle\n");
	return kpt_gp_close(fp, dir, stem, d);
}
