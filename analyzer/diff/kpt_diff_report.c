/* kpt_diff_report.c - text, Markdown, JUnit XML and JSON views of a diff. */
#define _GNU_SOURCE /* vasprintf */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_diff_report.h"
#include "kpt_json.h"
#include "kpt_text.h"
#include "kpt_units.h"

static void md_text(FILE *out, const char *s)
{
	kpt_text_write(out, KPT_TEXT_MD, s);
}

static void xml_text(FILE *out, const char *s)
{
	kpt_text_write(out, KPT_TEXT_MARKUP, s);
}

/* ANSI colour per verdict for the terminal table. */
static const char *const verdict_color[KPT_V_COUNT] = {
	[KPT_V_SAME] = "",
	[KPT_V_SLOW] = "\033[1;31m",
	[KPT_V_FAST] = "\033[1;32m",
	[KPT_V_AMBG] = "\033[33m",
	[KPT_V_NEW] = "\033[36m",
	[KPT_V_GONE] = "\033[36m",
};

static int io_result(FILE *out, struct kpt_diag *d, const char *what)
{
	if (fflush(out) != 0 || ferror(out))
		return kpt_diag_set(d, KPT_E_IO, "cannot write the %s report: %s", what, strerror(errno ? errno : EIO));
	return 0;
}

/* Human duration (lib/kpt_units.h); "-" for NAN. */
static const char *fmt_ns(char *buf, size_t cap, double ns)
{
	return kpt_fmt_duration(ns, buf, cap);
}

/* v as a percentage with `digits` decimals (a sign when `sign`), or "-"
 * for NAN. */
static const char *fmt_pctv(char *buf, size_t cap, double v, int digits, int sign)
{
	if (isnan(v))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, sign ? "%+.*f%%" : "%.*f%%", digits, v);
	return buf;
}

static const char *fmt_pct(char *buf, size_t cap, double p)
{
	return fmt_pctv(buf, cap, p, 1, 1);
}

static const char *fmt_noise(char *buf, size_t cap, double p)
{
	return fmt_pctv(buf, cap, p, 2, 0);
}

static const char *fmt_ci(char *buf, size_t cap, double lo, double hi)
{
	if (isnan(lo) || isnan(hi))
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "[%+.1f, %+.1f]", lo, hi);
	return buf;
}

static const char *fmt_config(char *buf, size_t cap, const struct kpt_diff_row *r)
{
	if (r->loose)
		snprintf(buf, cap, "(varies)");
	else if (r->aggregated)
		snprintf(buf, cap, "(%u launches/iter)", r->aggregated);
	else if (!r->grid[0] && !r->block[0])
		snprintf(buf, cap, "-");  /* not a launch: a step-time key */
	else
		snprintf(buf, cap, "(%u,%u,%u)x(%u,%u,%u)", r->grid[0], r->grid[1], r->grid[2],
			 r->block[0], r->block[1], r->block[2]);
	return buf;
}

/* The verdict with its AMBG hint: "AMBG (~4 more runs)". */
static const char *fmt_verdict(char *buf, size_t cap, const struct kpt_diff_row *r)
{
	if (r->verdict == KPT_V_AMBG && (!r->base_runs || !r->new_runs))
		snprintf(buf, cap, "AMBG (all dropped)");
	else if (r->verdict == KPT_V_AMBG && r->machine_limited)
		snprintf(buf, cap, "AMBG (machine noise %.1f%%: use kptprof ab or add sessions)", r->between_pct);
	else if (r->verdict == KPT_V_AMBG && r->more_runs >= 1000 &&
		 fabs(fabs(r->change_pct) - r->threshold_pct) < 0.25 * r->threshold_pct)
		snprintf(buf, cap, "AMBG (%+.1f%% is at the %g%% threshold)", r->change_pct, r->threshold_pct);
	else if (r->verdict == KPT_V_AMBG && r->more_runs >= 1000)
		snprintf(buf, cap, "AMBG (>1000 more runs)");
	else if (r->verdict == KPT_V_AMBG && r->more_runs)
		snprintf(buf, cap, "AMBG (~%u more run%s)", r->more_runs, r->more_runs == 1 ? "" : "s");
	else if (r->settled_round)
		snprintf(buf, cap, "%s (settled in round %u)", kpt_verdict_name(r->verdict), r->settled_round);
	else
		snprintf(buf, cap, "%s", kpt_verdict_name(r->verdict));
	return buf;
}

/* The verdict for a narrow terminal: level 1 "AMBG (machine)", "AMBG
 * (~4 runs)"; level 2 the bare name. Level 0 is fmt_verdict. */
static const char *fmt_verdict_at(char *buf, size_t cap, const struct kpt_diff_row *r, int level)
{
	if (level == 0 || r->verdict != KPT_V_AMBG)
		return level == 0 ? fmt_verdict(buf, cap, r) : strcpy(buf, kpt_verdict_name(r->verdict));
	if (level >= 2 || !r->base_runs || !r->new_runs)
		snprintf(buf, cap, "%s", kpt_verdict_name(r->verdict));
	else if (r->machine_limited)
		snprintf(buf, cap, "AMBG (machine)");
	else if (r->more_runs >= 1000)
		snprintf(buf, cap, "AMBG (>1000 runs)");
	else if (r->more_runs)
		snprintf(buf, cap, "AMBG (~%u runs)", r->more_runs);
	else
		snprintf(buf, cap, "AMBG");
	return buf;
}

static int row_shown(const struct kpt_diff *df, const struct kpt_diff_row *r, int all)
{
	return all || r->verdict != KPT_V_SAME || df->nrows <= 40;
}

/* s then spaces up to w columns (s may be wider: it is never cut here). */
static void put_cell(FILE *out, const char *s, size_t w)
{
	size_t n = kpt_text_columns(s);

	fputs(s, out);
	for (; n < w; n++)
		fputc(' ', out);
}

/* The cells of one text column, cleaned for the terminal and fitted. */
struct text_col {
	char **full;   /* cleaned, whole */
	char **shown;  /* fitted: kpt_text_column */
	size_t n, width;
};

static void text_col_release(struct text_col *c)
{
	for (size_t i = 0; c->full && i < c->n; i++)
		free(c->full[i]);
	kpt_text_column_free(c->shown, c->n);
	free(c->full);
	free(c->shown);
	memset(c, 0, sizeof *c);
}

/* Longest cleaned cell of c. */
static size_t text_col_need(const struct text_col *c)
{
	size_t w = 0;

	for (size_t i = 0; i < c->n; i++) {
		size_t k = kpt_text_columns(c->full[i]);

		w = k > w ? k : w;
	}
	return w;
}

static int text_col_init(struct text_col *c, size_t n)
{
	memset(c, 0, sizeof *c);
	c->n = n;
	c->full = calloc(n ? n : 1, sizeof *c->full);
	c->shown = calloc(n ? n : 1, sizeof *c->shown);
	return c->full && c->shown ? 0 : KPT_E_NOMEM;
}

/* Fits c into cols columns (0: whole names) and sets its width. */
static int text_col_fit(struct text_col *c, size_t cols, enum kpt_text_cut how)
{
	size_t need = text_col_need(c);

	c->width = cols && cols < need ? cols : need;
	return kpt_text_column((const char *const *)c->full, c->n, cols && cols < need ? cols : 0, how, c->shown);
}

/* Which columns a terminal of o->width gets: wide ones go first (the
 * verdict's hint, Noise, Config, Interval, the AMBG reason, then Base:
 * New and Change say the most), until Kernel and Range have room. */
struct text_layout {
	int cfg, ci, noise, base; /* shown */
	int verdict;        /* fmt_verdict_at level */
	int cw, iw, vw;     /* widths of Config, Interval, Verdict */
};

#define KERNEL_MIN_COLS 24
#define RANGE_MIN_COLS 10
/* what Kernel and Range should get before columns give way: a kernel's
 * name with its template arguments, a workload's name with its sizes */
#define KERNEL_WANT_COLS 34
#define RANGE_WANT_COLS 24

/* Columns besides Kernel and Range: "  " (" " Base(10)) " " New(10) " "
 * Change(8) "  " Verdict, and " " before each optional one. */
static size_t layout_fixed(const struct text_layout *l)
{
	return 2 + (l->base ? 1 + 10 : 0) + 1 + 10 + 1 + 8 + 2 + (size_t)l->vw + (l->cfg ? 1 + (size_t)l->cw : 0) +
	       (l->ci ? 1 + (size_t)l->iw : 0) + (l->noise ? 1 + 7 : 0);
}

static void layout_widths(const struct kpt_diff *df, size_t *rows, size_t n, struct text_layout *l)
{
	char b[96];

	l->cw = 6;  /* "Config" */
	l->iw = 10; /* "Interval %" */
	l->vw = 7;  /* "Verdict" */
	for (size_t i = 0; i < n; i++) {
		const struct kpt_diff_row *r = &df->rows[rows[i]];
		int k;

		k = (int)strlen(fmt_verdict_at(b, sizeof b, r, l->verdict));
		l->vw = k > l->vw ? k : l->vw;
		k = (int)strlen(fmt_config(b, sizeof b, r));
		l->cw = k > l->cw ? k : l->cw;
		k = (int)strlen(fmt_ci(b, sizeof b, r->ci_low_pct, r->ci_high_pct));
		l->iw = k > l->iw ? k : l->iw;
	}
}

/* Kernel and Range cells of the rows shown: whole when the output is not a
 * terminal (o->width 0); on a terminal, optional columns go (text_layout)
 * until Kernel and Range have room, Range gets what it needs first (down
 * to RANGE_MIN_COLS), Kernel the rest (at least KERNEL_MIN_COLS); ranges keep their tail, kernel names
 * their shorter C++ forms, and no two cells of different names look the
 * same (kpt_text_column). */
static int text_cells(const struct kpt_diff *df, const struct kpt_report_opts *o, size_t *rows, size_t n,
		      struct text_col *kern, struct text_col *range, struct text_layout *l)
{
	size_t avail, rw = 0, kw = 0, kmin;
	int rc;

	*l = (struct text_layout){ .cfg = 1, .ci = 1, .noise = 1, .base = 1 };
	if ((rc = text_col_init(kern, n)) < 0 || (rc = text_col_init(range, n)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		const struct kpt_diff_row *r = &df->rows[rows[i]];
		char *nm = kpt_text_dup(KPT_TEXT_TERM, r->name);
		size_t len = nm ? strlen(nm) + 16 : 0;

		/* the ordinal belongs to the name: never cut away */
		if (nm && r->ordinal && (kern->full[i] = malloc(len)))
			snprintf(kern->full[i], len, "%s #%u", nm, r->ordinal);
		else if (nm && !r->ordinal)
			kern->full[i] = nm, nm = NULL;
		free(nm);
		range->full[i] = kpt_text_dup(KPT_TEXT_TERM, r->path[0] ? r->path : "-");
		if (!kern->full[i] || !range->full[i])
			return KPT_E_NOMEM;
	}
	layout_widths(df, rows, n, l);
	if (o && o->width > 0) {
		size_t kneed = text_col_need(kern), rneed = text_col_need(range);
		size_t want = (kneed < KERNEL_WANT_COLS ? kneed : KERNEL_WANT_COLS) +
			      (rneed < RANGE_WANT_COLS ? rneed : RANGE_WANT_COLS);

		for (int step = 0; step < 6 && layout_fixed(l) + want > (size_t)o->width; step++) {
			if (step == 0 || step == 4)
				l->verdict++;
			else if (step == 5)
				l->base = 0;
			else if (step == 1)
				l->noise = 0;
			else if (step == 2)
				l->cfg = 0;
			else
				l->ci = 0;
			layout_widths(df, rows, n, l);
		}
		avail = (size_t)o->width > layout_fixed(l) ? (size_t)o->width - layout_fixed(l) : 0;
		/* Kernel keeps what it wants when both fit, else its minimum */
		kmin = avail >= want ? (kneed < KERNEL_WANT_COLS ? kneed : KERNEL_WANT_COLS) : KERNEL_MIN_COLS;
		rw = rneed;
		if (rw + kmin > avail)
			rw = avail > kmin + RANGE_MIN_COLS ? avail - kmin : RANGE_MIN_COLS;
		kw = avail > rw + kmin ? avail - rw : kmin;
		if (avail < KERNEL_MIN_COLS + RANGE_MIN_COLS) { /* below ~75 columns: what there is */
			rw = avail * 2 / 5 > 5 ? avail * 2 / 5 : 5;
			kw = avail > rw + 6 ? avail - rw : 6;
		}
	}
	if ((rc = text_col_fit(range, rw, KPT_CUT_TAIL)) < 0 || (rc = text_col_fit(kern, kw, KPT_CUT_CXX)) < 0)
		return rc;
	if (kern->width < 6)
		kern->width = 6;
	if (range->width < 5)
		range->width = 5;
	return 0;
}

/* The workload column of the totals: whole, or on a terminal fitted to
 * what the numbers leave (tails kept: the sizes). */
static int totals_cells(const struct kpt_diff *df, const struct kpt_report_opts *o, struct text_col *c)
{
	size_t k = 0;
	int rc;

	if ((rc = text_col_init(c, df->ntotals)) < 0)
		return rc;
	for (size_t i = 0; i < df->ntotals; i++) {
		const struct kpt_diff_total *t = &df->totals[i];

		if (t->kind == KPT_TOTAL_RANGE)
			continue;
		c->full[k] = kpt_text_dup(KPT_TEXT_TERM, t->kind == KPT_TOTAL_ALL ? "(all keys)"
								: t->name[0] ? t->name : "(no range)");
		if (!c->full[k++])
			return KPT_E_NOMEM;
	}
	c->n = k;
	/* "  " name " " Keys(5) " " Base(10) " " New(10) " " Change(8) " " Geomean(9) */
	return text_col_fit(c, o && o->width > 60 ? (size_t)o->width - 49 : o && o->width ? 11 : 0, KPT_CUT_TAIL);
}

static int write_table(const struct kpt_diff *df, FILE *out, const struct kpt_report_opts *o, size_t *rows,
		       size_t n)
{
	int color = o && o->color, width = o ? o->width : 0;
	struct text_col kern = { 0 }, range = { 0 }, tot = { 0 };
	char b1[32], b2[32], b3[32], b4[48], b5[32], b6[96], b7[48];
	struct text_layout l;
	int rc = text_cells(df, o, rows, n, &kern, &range, &l);

	if (rc < 0)
		goto out;
	put_cell(out, "Kernel", kern.width);
	fputs("  ", out);
	put_cell(out, "Range", range.width);
	if (l.cfg)
		fprintf(out, " %-*s", l.cw, "Config");
	if (l.base)
		fprintf(out, " %10s", "Base");
	fprintf(out, " %10s %8s", "New", "Change");
	if (l.ci)
		fprintf(out, " %*s", l.iw, "Interval %");
	if (l.noise)
		fprintf(out, " %7s", "Noise");
	fputs("  Verdict\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct kpt_diff_row *r = &df->rows[rows[i]];

		put_cell(out, kern.shown[i], kern.width);
		fputs("  ", out);
		put_cell(out, range.shown[i], range.width);
		if (l.cfg)
			fprintf(out, " %-*s", l.cw, fmt_config(b3, sizeof b3, r));
		if (l.base)
			fprintf(out, " %10s", fmt_ns(b1, sizeof b1, r->base_ns));
		fprintf(out, " %10s %8s", fmt_ns(b2, sizeof b2, r->new_ns), fmt_pct(b5, sizeof b5, r->change_pct));
		if (l.ci)
			fprintf(out, " %*s", l.iw, fmt_ci(b4, sizeof b4, r->ci_low_pct, r->ci_high_pct));
		if (l.noise)
			fprintf(out, " %7s", fmt_noise(b7, sizeof b7, r->noise_pct));
		fprintf(out, "  %s%s%s\n", color ? verdict_color[r->verdict] : "",
			fmt_verdict_at(b6, sizeof b6, r, l.verdict),
			color && verdict_color[r->verdict][0] ? "\033[0m" : "");
		if (r->counters) {
			int ind = kern.width < 24 ? (int)kern.width : 24;
			char *c = kpt_text_dup(KPT_TEXT_TERM, r->counters);

			fprintf(out, "%*s  counters: ", ind, "");
			kpt_text_wrap(out, c ? c : "?", (size_t)ind + 12, (size_t)width, (size_t)ind + 12);
			free(c);
		}
	}
	if (l.verdict > 0 && df->counts[KPT_V_AMBG])
		kpt_text_wrap(out, "(AMBG: cannot tell at this noise; --wide shows why and the interval)", 0,
			      (size_t)width, 1);
	else if (!l.ci || !l.noise || !l.cfg || !l.base)
		kpt_text_wrap(out, "(--wide shows every column)", 0, (size_t)width, 1);
	if (n < df->nrows)
		fprintf(out, "(%zu SAME key%s not listed; --all lists them)\n", df->nrows - n,
			df->nrows - n == 1 ? "" : "s");
	if ((rc = totals_cells(df, o, &tot)) < 0)
		goto out;
	fputc('\n', out);
	put_cell(out, "Workload", tot.width + 2);
	fprintf(out, " %5s %10s %10s %8s %9s\n", "Keys", "Base", "New", "Change", "Geomean");
	for (size_t i = 0, k = 0; i < df->ntotals; i++) {
		const struct kpt_diff_total *t = &df->totals[i];

		if (t->kind == KPT_TOTAL_RANGE)
			continue;
		if (t->kind == KPT_TOTAL_ALL) {
			put_cell(out, tot.shown[k++], tot.width + 2);
		} else {
			fputs("  ", out);
			put_cell(out, tot.shown[k++], tot.width);
		}
		fprintf(out, " %5u %10s %10s %8s %9s\n", t->keys, fmt_ns(b1, sizeof b1, t->base_ns),
			fmt_ns(b2, sizeof b2, t->new_ns), fmt_pct(b5, sizeof b5, t->change_pct),
			fmt_pct(b7, sizeof b7, t->geomean_change_pct));
	}
	text_col_release(&tot);
out:
	text_col_release(&kern);
	text_col_release(&range);
	return rc;
}

/* One line of prose, printf-style, wrapped to width (0: one line),
 * continuation lines indented by indent. */
static void put_wrapped(FILE *out, int width, size_t indent, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void put_wrapped(FILE *out, int width, size_t indent, const char *fmt, ...)
{
	char *s = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		fputs("?\n", out);
		return;
	}
	kpt_text_wrap(out, s, 0, width > 0 ? (size_t)width : 0, indent);
	free(s);
}

int kpt_diff_write_text(const struct kpt_diff *df, FILE *out,
			const struct kpt_report_opts *o, struct kpt_diag *d)
{
	int all = o && o->all, width = o ? o->width : 0;
	size_t *rows = malloc((df->nrows ? df->nrows : 1) * sizeof *rows), n = 0;
	char b6[96];
	struct kpt_text_pool pool = { 0 };
	int rc;

	if (!rows)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory writing the table");
	for (size_t i = 0; i < df->nrows; i++)
		if (row_shown(df, &df->rows[i], all))
			rows[n++] = i;
	if (df->base_sessions > 1)
		snprintf(b6, sizeof b6, "%u sessions, ", df->base_sessions);
	else
		b6[0] = '\0';
	put_wrapped(out, width, 6, "base: %s (%s, %s%u run%s)", kpt_text_pool_clean(&pool, KPT_TEXT_TERM, df->base.path),
		    df->base.gpu_name[0] ? kpt_text_pool_clean(&pool, KPT_TEXT_TERM, df->base.gpu_name) : "unknown GPU",
		    b6, df->base.runs, df->base.runs == 1 ? "" : "s");
	put_wrapped(out, width, 6, "new:  %s (%s, %u run%s)", kpt_text_pool_clean(&pool, KPT_TEXT_TERM, df->new_.path),
		    df->new_.gpu_name[0] ? kpt_text_pool_clean(&pool, KPT_TEXT_TERM, df->new_.gpu_name) : "unknown GPU",
		    df->new_.runs, df->new_.runs == 1 ? "" : "s");
	fputc('\n', out);
	rc = write_table(df, out, o, rows, n);
	free(rows);
	if (rc < 0) {
		kpt_text_pool_release(&pool);
		return kpt_diag_set(d, rc, "out of memory writing the table");
	}
	if (df->nnotes)
		fputs("\nEnvironment and data:\n", out);
	for (size_t i = 0; i < df->nnotes; i++)
		put_wrapped(out, width, 6, "  %s%s", df->notes[i].severe ? "! " : "  ",
			    kpt_text_pool_clean(&pool, KPT_TEXT_TERM, df->notes[i].text));
	kpt_text_pool_release(&pool);
	fputc('\n', out);
	if (df->opts.method == KPT_DIFF_POOLED_U)
		put_wrapped(out, width, 2, "%u SLOW, %u FAST, %u AMBG, %u SAME, %u NEW, %u GONE (%zu keys; pooled Mann-Whitney U per key, "
			"no threshold, no correction, alpha %.3g): %s",
			df->counts[KPT_V_SLOW], df->counts[KPT_V_FAST], df->counts[KPT_V_AMBG],
			df->counts[KPT_V_SAME], df->counts[KPT_V_NEW], df->counts[KPT_V_GONE], df->nrows, df->opts.alpha,
			df->result == KPT_DIFF_REGRESSION ? "REGRESSION" : "no regression");
	else
		put_wrapped(out, width, 2, "%u SLOW, %u FAST, %u AMBG, %u SAME, %u NEW, %u GONE (%zu keys; threshold %.3g%%, %.3g%% under %.0f us, %.3g%% from %.0f us; Holm over %u, alpha %.3g): %s",
			df->counts[KPT_V_SLOW], df->counts[KPT_V_FAST], df->counts[KPT_V_AMBG],
			df->counts[KPT_V_SAME], df->counts[KPT_V_NEW], df->counts[KPT_V_GONE], df->nrows,
			df->opts.threshold_pct, df->opts.short_threshold_pct, df->opts.short_ns / 1e3,
			df->opts.long_threshold_pct, df->opts.long_ns / 1e3, df->n_tested, df->opts.alpha,
			df->result == KPT_DIFF_REGRESSION ? "REGRESSION" : "no regression");
	return io_result(out, d, "text");
}

/* ---- Markdown ---------------------------------------------------------- */

/* Most rows per Markdown table: GitHub caps a step summary at 1 MiB and a
 * comment at 64K characters; the JSON report has every key. */
#define MD_MAX_ROWS 300

static void md_row(FILE *out, const struct kpt_diff_row *r, int with_verdict)
{
	char b1[32], b2[32], b3[32], b4[48], b5[32], b6[96], b7[48];

	fputs("| ", out);
	kpt_text_write(out, KPT_TEXT_MD_CELL_CODE, r->name);
	if (r->ordinal)
		fprintf(out, " #%u", r->ordinal);
	fputs(" | ", out);
	if (r->path[0])
		kpt_text_write(out, KPT_TEXT_MD_CELL_CODE, r->path);
	else
		fputs("-", out);
	fprintf(out, " | %s | %s | %s | %s | %s | %s |", fmt_config(b3, sizeof b3, r),
		fmt_ns(b1, sizeof b1, r->base_ns), fmt_ns(b2, sizeof b2, r->new_ns),
		fmt_pct(b5, sizeof b5, r->change_pct), fmt_ci(b4, sizeof b4, r->ci_low_pct, r->ci_high_pct),
		fmt_noise(b7, sizeof b7, r->noise_pct));
	if (with_verdict)
		fprintf(out, " %s |", fmt_verdict(b6, sizeof b6, r));
	fputc('\n', out);
}

static void md_header(FILE *out, int with_verdict)
{
	fprintf(out, "| Kernel | Range | Config | Base | New | Change | Interval %% | Noise |%s\n",
		with_verdict ? " Verdict |" : "");
	fprintf(out, "|---|---|---|--:|--:|--:|--:|--:|%s\n", with_verdict ? "---|" : "");
}

static void md_side(FILE *out, const char *label, const struct kpt_diff_env *e)
{
	fprintf(out, "- **%s**: ", label);
	kpt_text_write(out, KPT_TEXT_MD_CODE, e->path);
	fputs(", ", out);
	md_text(out, e->gpu_name[0] ? e->gpu_name : "unknown GPU");
	fputs(", driver ", out);
	md_text(out, e->driver[0] ? e->driver : "?");
	fputs(", CUDA ", out);
	md_text(out, e->cuda[0] ? e->cuda : "?");
	fprintf(out, ", %u run%s", e->runs, e->runs == 1 ? "" : "s");
	if (!isnan(e->sm_mhz_median))
		fprintf(out, ", SM clock median %.0f MHz", e->sm_mhz_median);
	if (e->commit[0]) {
		fputs(", commit ", out);
		md_text(out, e->commit);
	}
	fputc('\n', out);
}

int kpt_diff_write_markdown(const struct kpt_diff *df, FILE *out,
			    const struct kpt_report_opts *o, struct kpt_diag *d)
{
	uint32_t slow = df->counts[KPT_V_SLOW];
	size_t rest = df->nrows - slow;

	if (slow)
		fprintf(out, "## :x: kptprof: %u kernel%s SLOW\n\n", slow, slow == 1 ? "" : "s");
	else
		fprintf(out, "## :white_check_mark: kptprof: no regression\n\n");
	md_side(out, "base", &df->base);
	md_side(out, "new", &df->new_);
	fputs("\n| SLOW | FAST | AMBG | SAME | NEW | GONE |\n|--:|--:|--:|--:|--:|--:|\n", out);
	fprintf(out, "| %u | %u | %u | %u | %u | %u |\n\n", df->counts[KPT_V_SLOW],
		df->counts[KPT_V_FAST], df->counts[KPT_V_AMBG], df->counts[KPT_V_SAME],
		df->counts[KPT_V_NEW], df->counts[KPT_V_GONE]);
	if (slow) {
		size_t shown = 0;

		fputs("### SLOW\n\n", out);
		md_header(out, 0);
		for (size_t i = 0; i < df->nrows && shown < MD_MAX_ROWS; i++)
			if (df->rows[i].verdict == KPT_V_SLOW) {
				md_row(out, &df->rows[i], 0);
				shown++;
			}
		if (shown < slow)
			fprintf(out, "\n(%u more SLOW keys: see the JSON report)\n", slow - (unsigned)shown);
		fputc('\n', out);
		shown = 0;
		for (size_t i = 0; i < df->nrows && shown < MD_MAX_ROWS; i++)
			if (df->rows[i].verdict == KPT_V_SLOW && df->rows[i].counters) {
				fputs(shown++ ? "- " : "**Counters that moved** (counters pass, means per launch)\n\n- ", out);
				kpt_text_write(out, KPT_TEXT_MD_CODE, df->rows[i].name);
				fputs(": ", out);
				md_text(out, df->rows[i].counters);
				fputc('\n', out);
			}
		if (shown)
			fputc('\n', out);
	}
	if (df->nnotes) {
		fputs("**Environment and data**\n\n", out);
		for (size_t i = 0; i < df->nnotes; i++) {
			fputs(df->notes[i].severe ? "- :warning: " : "- ", out);
			md_text(out, df->notes[i].text);
			fputc('\n', out);
		}
		fputc('\n', out);
	}
	if (rest) {
		fprintf(out, "<details><summary>The other %zu key%s</summary>\n\n", rest, rest == 1 ? "" : "s");
		size_t shown = 0;

		md_header(out, 1);
		for (size_t i = 0; i < df->nrows && shown < MD_MAX_ROWS; i++)
			if (df->rows[i].verdict != KPT_V_SLOW) {
				md_row(out, &df->rows[i], 1);
				shown++;
			}
		if (shown < rest)
			fprintf(out, "\n(%zu more keys: see the JSON report)\n", rest - shown);
		fputs("\n</details>\n\n", out);
	}
	fputs("<details><summary>Totals per workload and NVTX range</summary>\n\n"
	      "| | Workload or range | Keys | Base | New | Change | Geomean |\n|---|---|--:|--:|--:|--:|--:|\n", out);
	for (size_t i = 0; i < df->ntotals && i < MD_MAX_ROWS; i++) {
		const struct kpt_diff_total *t = &df->totals[i];
		char b1[32], b2[32], b3[32], b4[32];

		fprintf(out, "| %s | ", t->kind == KPT_TOTAL_ALL ? "all" : t->kind == KPT_TOTAL_WORKLOAD ? "workload" : "range");
		if (t->kind == KPT_TOTAL_ALL || !t->name[0])
			fputs(t->kind == KPT_TOTAL_ALL ? "(all keys)" : "(no range)", out);
		else
			kpt_text_write(out, KPT_TEXT_MD_CELL_CODE, t->name);
		fprintf(out, " | %u | %s | %s | %s | %s |\n", t->keys, fmt_ns(b1, sizeof b1, t->base_ns),
			fmt_ns(b2, sizeof b2, t->new_ns), fmt_pct(b3, sizeof b3, t->change_pct),
			fmt_pct(b4, sizeof b4, t->geomean_change_pct));
	}
	fprintf(out, "\n</details>\n\nRule: SLOW when the change exceeds %.3g%% (%.3g%% for kernels under %.0f us, %.3g%% from %.0f us) and is significant after Holm over %u keys (alpha %.3g); intervals are %s t on log run medians.\n",
		df->opts.threshold_pct, df->opts.short_threshold_pct, df->opts.short_ns / 1e3,
		df->opts.long_threshold_pct, df->opts.long_ns / 1e3, df->n_tested, df->opts.alpha,
		df->opts.welch ? "Welch's" : "Student's pooled");
	(void)o;
	return io_result(out, d, "Markdown");
}

/* ---- JUnit ------------------------------------------------------------- */

static void junit_name(FILE *out, const struct kpt_diff_row *r)
{
	char b[64];

	xml_text(out, r->name);
	if (r->ordinal)
		fprintf(out, " #%u", r->ordinal);
	if (r->path[0]) {
		fputs(" @ ", out);
		xml_text(out, r->path);
	}
	fprintf(out, " %s", fmt_config(b, sizeof b, r));
}

int kpt_diff_write_junit(const struct kpt_diff *df, FILE *out,
			 const struct kpt_report_opts *o, struct kpt_diag *d)
{
	const char *suite = o && o->suite ? o->suite : df->new_.suite[0] ? df->new_.suite
			  : df->base.suite[0] ? df->base.suite : "diff";
	const char *slug = df->new_.gpu_slug[0] ? df->new_.gpu_slug : "unknown-gpu";
	unsigned slow = df->counts[KPT_V_SLOW];

	fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kptprof diff\" tests=\"%zu\" failures=\"%u\">\n",
		df->nrows, slow);
	fputs("  <testsuite name=\"", out);
	xml_text(out, slug);
	fputc('/', out);
	xml_text(out, suite);
	fprintf(out, "\" tests=\"%zu\" failures=\"%u\" errors=\"0\" skipped=\"0\">\n", df->nrows, slow);
	for (size_t i = 0; i < df->nrows; i++) {
		const struct kpt_diff_row *r = &df->rows[i];
		char b1[32], b2[32], b3[32], b4[48], b5[48], b6[96];

		fputs("    <testcase classname=\"", out);
		xml_text(out, slug);
		fputc('/', out);
		xml_text(out, suite);
		fputs("\" name=\"", out);
		junit_name(out, r);
		fprintf(out, "\" time=\"%.9f\"", isnan(r->new_ns) ? 0.0 : r->new_ns / 1e9);
		if (r->verdict == KPT_V_SAME || r->verdict == KPT_V_FAST) {
			fputs("/>\n", out);
			continue;
		}
		fputs(">\n", out);
		if (r->verdict == KPT_V_SLOW)
			fprintf(out, "      <failure type=\"SLOW\" message=\"SLOW: %s (interval %s, threshold %.3g%%)\">base %s, new %s, change %s, interval %s %%, noise %s, p %.3g (Holm %.3g), runs %u/%u, cycles %s</failure>\n",
				fmt_pct(b1, sizeof b1, r->change_pct), fmt_ci(b4, sizeof b4, r->ci_low_pct, r->ci_high_pct),
				r->threshold_pct, fmt_ns(b2, sizeof b2, r->base_ns), fmt_ns(b3, sizeof b3, r->new_ns),
				fmt_pct(b1, sizeof b1, r->change_pct), b4, fmt_noise(b5, sizeof b5, r->noise_pct),
				r->p, r->p_holm, r->base_runs, r->new_runs, fmt_pct(b6, sizeof b6, r->cycles_change_pct));
		else
			fprintf(out, "      <system-out>%s: base %s, new %s, change %s, interval %s %%</system-out>\n",
				fmt_verdict(b6, sizeof b6, r), fmt_ns(b2, sizeof b2, r->base_ns),
				fmt_ns(b3, sizeof b3, r->new_ns), fmt_pct(b1, sizeof b1, r->change_pct),
				fmt_ci(b4, sizeof b4, r->ci_low_pct, r->ci_high_pct));
		fputs("    </testcase>\n", out);
	}
	fputs("  </testsuite>\n</testsuites>\n", out);
	return io_result(out, d, "JUnit");
}

/* ---- JSON -------------------------------------------------------------- */

static void json_env(struct kpt_json *j, const char *key, const struct kpt_diff_env *e)
{
	kpt_json_key(j, key);
	kpt_json_begin_object(j);
	kpt_json_kv_str(j, "path", e->path);
	kpt_json_kv_str(j, "gpu", e->gpu_name);
	kpt_json_kv_str(j, "gpu_slug", e->gpu_slug);
	kpt_json_kv_str(j, "driver", e->driver);
	kpt_json_kv_str(j, "cuda", e->cuda);
	kpt_json_kv_str(j, "suite", e->suite);
	kpt_json_kv_str(j, "host", e->host);
	kpt_json_kv_str(j, "time", e->time);
	kpt_json_kv_str(j, "commit", e->commit);
	kpt_json_kv_u64(j, "runs", e->runs);
	kpt_json_kv_u64(j, "kernels", e->kernels);
	kpt_json_kv_u64(j, "samples", e->samples);
	kpt_json_kv_u64(j, "skipped", e->skipped);
	kpt_json_kv_u64(j, "outside_iterations", e->outside);
	kpt_json_kv_u64(j, "dropped_throttle", e->dropped_throttle);
	kpt_json_kv_u64(j, "dropped_clock", e->dropped_clock);
	kpt_json_kv_u64(j, "env_samples", e->env_samples);
	kpt_json_kv_double(j, "sm_mhz_median", e->sm_mhz_median);
	kpt_json_kv_double(j, "temp_c_median", e->temp_c_median);
	kpt_json_kv_double(j, "temp_c_max", e->temp_c_max);
	kpt_json_kv_double(j, "throttled_frac", e->throttled_frac);
	kpt_json_kv_double(j, "power_capped_frac", e->capped_frac);
	kpt_json_kv_u64(j, "throttle_bits", e->throttle_bits);
	kpt_json_end_object(j);
}

static void json_runs(struct kpt_json *j, const char *key, const double *ns, uint32_t n)
{
	kpt_json_key(j, key);
	kpt_json_begin_array(j);
	for (uint32_t i = 0; i < n; i++)
		kpt_json_double(j, ns[i]);
	kpt_json_end_array(j);
}

static void json_counts(struct kpt_json *j, const uint32_t *v)
{
	kpt_json_begin_object(j);
	for (int i = 0; i < KPT_V_COUNT; i++)
		kpt_json_kv_u64(j, kpt_verdict_name(i), v[i]);
	kpt_json_end_object(j);
}

static const char *const total_kind_names[] = {
	[KPT_TOTAL_RANGE] = "range",
	[KPT_TOTAL_WORKLOAD] = "workload",
	[KPT_TOTAL_ALL] = "all",
};

int kpt_diff_write_json(const struct kpt_diff *df, FILE *out,
			const struct kpt_report_opts *o, struct kpt_diag *d)
{
	struct kpt_json j;

	kpt_json_init(&j, out, 2);
	kpt_json_begin_object(&j);
	kpt_json_kv_str(&j, "format_version", KPT_DIFF_JSON_VERSION);
	kpt_json_kv_str(&j, "result", df->result == KPT_DIFF_REGRESSION ? "regression" : "ok");
	kpt_json_key(&j, "rule");
	kpt_json_begin_object(&j);
	kpt_json_kv_str(&j, "method", df->opts.method == KPT_DIFF_POOLED_U ? "pooled-u" : "rule");
	kpt_json_kv_double(&j, "threshold_pct", df->opts.threshold_pct);
	kpt_json_kv_double(&j, "short_threshold_pct", df->opts.short_threshold_pct);
	kpt_json_kv_double(&j, "short_ns", df->opts.short_ns);
	kpt_json_kv_double(&j, "long_threshold_pct", df->opts.long_threshold_pct);
	kpt_json_kv_double(&j, "long_ns", df->opts.long_ns);
	kpt_json_kv_double(&j, "alpha", df->opts.alpha);
	kpt_json_kv_u64(&j, "tested", df->n_tested);
	kpt_json_kv_bool(&j, "forced", df->forced);
	kpt_json_end_object(&j);
	json_env(&j, "base", &df->base);
	json_env(&j, "new", &df->new_);
	kpt_json_key(&j, "counts");
	json_counts(&j, df->counts);
	if (df->resolve.on) {
		kpt_json_key(&j, "resolve");
		kpt_json_begin_object(&j);
		kpt_json_kv_u64(&j, "rounds", df->resolve.rounds);
		kpt_json_kv_u64(&j, "keys_ambg_run_noise_initial", df->resolve.initial);
		kpt_json_kv_u64(&j, "settled", df->resolve.settled);
		kpt_json_kv_u64(&j, "extra_runs", df->resolve.extra_runs);
		kpt_json_kv_double(&j, "extra_wall_s", df->resolve.extra_wall_s);
		kpt_json_kv_double(&j, "first_wall_s", df->resolve.first_wall_s);
		kpt_json_kv_double(&j, "alpha_relook", df->resolve.alpha_relook);
		kpt_json_end_object(&j);
	}
	kpt_json_key(&j, "keys");
	kpt_json_begin_array(&j);
	for (size_t i = 0; i < df->nrows; i++) {
		const struct kpt_diff_row *r = &df->rows[i];

		kpt_json_begin_object(&j);
		kpt_json_kv_str(&j, "name", r->name);
		kpt_json_kv_str(&j, "mangled", r->mangled);
		kpt_json_kv_str(&j, "path", r->path);
		kpt_json_kv_str(&j, "workload", r->workload);
		kpt_json_kv_u64(&j, "ordinal", r->ordinal);
		kpt_json_kv_bool(&j, "loose", r->loose);
		kpt_json_key(&j, "grid");
		kpt_json_begin_array(&j);
		for (int k = 0; k < 3; k++)
			kpt_json_u64(&j, r->grid[k]);
		kpt_json_end_array(&j);
		kpt_json_key(&j, "block");
		kpt_json_begin_array(&j);
		for (int k = 0; k < 3; k++)
			kpt_json_u64(&j, r->block[k]);
		kpt_json_end_array(&j);
		kpt_json_kv_str(&j, "verdict", kpt_verdict_name(r->verdict));
		kpt_json_kv_double(&j, "base_ns", r->base_ns);
		kpt_json_kv_double(&j, "new_ns", r->new_ns);
		kpt_json_kv_double(&j, "change_pct", r->change_pct);
		kpt_json_kv_double(&j, "ci_low_pct", r->ci_low_pct);
		kpt_json_kv_double(&j, "ci_high_pct", r->ci_high_pct);
		kpt_json_kv_double(&j, "noise_pct", r->noise_pct);
		kpt_json_kv_double(&j, "within_pct", r->within_pct);
		kpt_json_kv_double(&j, "between_pct", r->between_pct);
		kpt_json_kv_double(&j, "shift_pct", r->shift_pct);
		kpt_json_kv_u64(&j, "aggregated", r->aggregated);
		kpt_json_kv_double(&j, "threshold_pct", r->threshold_pct);
		kpt_json_kv_double(&j, "p", r->p);
		kpt_json_kv_double(&j, "p_holm", r->p_holm);
		kpt_json_kv_double(&j, "cycles_change_pct", r->cycles_change_pct);
		kpt_json_kv_u64(&j, "more_runs", r->more_runs);
		kpt_json_kv_bool(&j, "machine_limited", r->machine_limited);
		if (r->settled_round)
			kpt_json_kv_u64(&j, "settled_round", r->settled_round);
		if (r->counters)
			kpt_json_kv_str(&j, "counters", r->counters);
		json_runs(&j, "base_run_ns", r->base_run_ns, r->base_runs);
		json_runs(&j, "new_run_ns", r->new_run_ns, r->new_runs);
		kpt_json_kv_u64(&j, "base_samples", r->base_samples);
		kpt_json_kv_u64(&j, "new_samples", r->new_samples);
		kpt_json_kv_u64(&j, "base_dropped", r->base_dropped);
		kpt_json_kv_u64(&j, "new_dropped", r->new_dropped);
		kpt_json_end_object(&j);
	}
	kpt_json_end_array(&j);
	kpt_json_key(&j, "totals");
	kpt_json_begin_array(&j);
	for (size_t i = 0; i < df->ntotals; i++) {
		const struct kpt_diff_total *t = &df->totals[i];

		kpt_json_begin_object(&j);
		kpt_json_kv_str(&j, "kind", total_kind_names[t->kind]);
		kpt_json_kv_str(&j, "name", t->name);
		kpt_json_kv_u64(&j, "keys", t->keys);
		kpt_json_kv_double(&j, "base_ns", t->base_ns);
		kpt_json_kv_double(&j, "new_ns", t->new_ns);
		kpt_json_kv_double(&j, "change_pct", t->change_pct);
		kpt_json_kv_double(&j, "geomean_change_pct", t->geomean_change_pct);
		kpt_json_key(&j, "verdicts");
		json_counts(&j, t->verdicts);
		kpt_json_end_object(&j);
	}
	kpt_json_end_array(&j);
	kpt_json_key(&j, "notes");
	kpt_json_begin_array(&j);
	for (size_t i = 0; i < df->nnotes; i++) {
		kpt_json_begin_object(&j);
		kpt_json_kv_str(&j, "what", df->notes[i].what);
		kpt_json_kv_str(&j, "text", df->notes[i].text);
		kpt_json_kv_bool(&j, "severe", df->notes[i].severe);
		kpt_json_end_object(&j);
	}
	kpt_json_end_array(&j);
	/* the noise model: sessions of the base, and the families' shifts */
	kpt_json_key(&j, "model");
	kpt_json_begin_object(&j);
	kpt_json_kv_u64(&j, "base_sessions", df->base_sessions);
	kpt_json_kv_bool(&j, "prior_between", df->prior_between);
	kpt_json_kv_bool(&j, "paired", df->paired);
	/* "same_boot": only the base sessions of NEW's GPU and boot, no machine
	 * part; "other": the machine model over every session */
	kpt_json_kv_str(&j, "machine", df->paired ? "paired" : df->machine == KPT_MACHINE_SAME_BOOT ? "same_boot" : "other");
	kpt_json_kv_u64(&j, "machine_sessions", df->machine_sessions);
	kpt_json_kv_double(&j, "copy_ceiling_pct", df->copy_ceiling_pct);
	kpt_json_kv_double(&j, "bf16_ceiling_pct", df->bf16_ceiling_pct);
	kpt_json_key(&j, "shifts");
	kpt_json_begin_array(&j);
	for (size_t i = 0; i < df->nshifts; i++) {
		const struct kpt_diff_shift *sh = &df->shifts[i];

		kpt_json_begin_object(&j);
		kpt_json_kv_str(&j, "family", sh->family);
		kpt_json_kv_u64(&j, "keys", sh->keys);
		kpt_json_kv_double(&j, "change_pct", sh->change_pct);
		kpt_json_kv_double(&j, "ci_low_pct", sh->ci_low_pct);
		kpt_json_kv_double(&j, "ci_high_pct", sh->ci_high_pct);
		kpt_json_kv_double(&j, "sd_pct", sh->sd_pct);
		kpt_json_kv_str(&j, "verdict", kpt_verdict_name(sh->verdict));
		kpt_json_kv_bool(&j, "applied", sh->applied);
		kpt_json_end_object(&j);
	}
	kpt_json_end_array(&j);
	kpt_json_end_object(&j);
	kpt_json_end_object(&j);
	(void)o;
	return kpt_json_finish(&j, d);
}

int kpt_diff_write_json_error(const struct kpt_diag *err, FILE *out, struct kpt_diag *d)
{
	struct kpt_json j;

	kpt_json_init(&j, out, 1);
	kpt_json_begin_object(&j);
	kpt_json_kv_str(&j, "format_version", KPT_DIFF_JSON_VERSION);
	kpt_json_kv_str(&j, "result", "error");
	kpt_json_kv_str(&j, "error", err && err->msg[0] ? err->msg : "unknown error");
	kpt_json_kv_str(&j, "hint", err ? err->hint : "");
	kpt_json_kv_str(&j, "code", kpt_err_name(err ? err->code : KPT_E_INVAL));
	kpt_json_end_object(&j);
	return kpt_json_finish(&j, d);
}
