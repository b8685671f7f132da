/* cmd_compare.c - `kptprof compare FILE...`: one suite recorded on several
 * GPU models, side by side: GPU time per workload, speedup against the
 * first file, achieved GB/s and TFLOP/s as a percent of each GPU's
 * measured ceilings (where the recording declares workload bytes/FLOPs and
 * its device row carries ceilings). The table comes from
 * kpt_compare_paths() (analyzer/diff/kpt_counters_compare.h). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kpt_cli.h"
#include "kpt_counters_compare.h"
#include "kpt_gnuplot.h"
#include "kpt_json.h"
#include "kpt_plot.h"

#define KPT_COMPARE_MAX_FILES 64

enum compare_format { CF_TEXT, CF_MD, CF_JSON };
static const char *const format_names[] = { [CF_TEXT] = "text", [CF_MD] = "md", [CF_JSON] = "json", NULL };

struct compare_args {
	int format;          /* CF_* */
	const char *plots;
};

const struct kpt_opt kpt_compare_opts[] = {
	KPT_OPT_OPERAND("FILE...", "two or more recordings of one suite; the first is the reference"),
	KPT_OPT_CHOICE(0, "format", "text|md|json", struct compare_args, format, format_names,
		       "table format (default text)"),
	KPT_OPT_STRING(0, "plots", "DIR", struct compare_args, plots,
		       "also write a bar plot per workload (.gp, and .png when gnuplot is installed; default: none)"),
	KPT_OPT_END,
};

/* One printed line per (workload, quantity): a table, so text and Markdown
 * print the same quantities in the same order. */
enum quantity { Q_TIME, Q_SPEEDUP, Q_GBPS, Q_TFLOPS, Q_COUNT };
static const char *const quantity_names[] = {
	[Q_TIME] = "time", [Q_SPEEDUP] = "speedup", [Q_GBPS] = "GB/s (% copy)",
	[Q_TFLOPS] = "TFLOP/s (% bf16)",
};

static void cell_text(const struct kpt_compare_cell *c, enum quantity q, char *buf, size_t cap)
{
	switch (q) {
	case Q_TIME:
		if (isnan(c->ns))
			snprintf(buf, cap, "-");
		else
			kpt_cli_fmt_ns(c->ns, buf, cap);
		break;
	case Q_SPEEDUP:
		snprintf(buf, cap, isnan(c->speedup) ? "-" : "%.2fx", c->speedup);
		break;
	case Q_GBPS:
		if (isnan(c->gbps))
			snprintf(buf, cap, "-");
		else if (isnan(c->copy_pct))
			snprintf(buf, cap, "%.0f", c->gbps);
		else
			snprintf(buf, cap, "%.0f (%.0f%%)", c->gbps, c->copy_pct);
		break;
	default:
		if (isnan(c->tflops))
			snprintf(buf, cap, "-");
		else if (isnan(c->bf16_pct))
			snprintf(buf, cap, "%.1f", c->tflops);
		else
			snprintf(buf, cap, "%.1f (%.0f%%)", c->tflops, c->bf16_pct);
		break;
	}
}

/* Quantities worth a line: GB/s and TFLOP/s only when some cell has them. */
static int row_has(const struct kpt_compare *c, const struct kpt_compare_row *r, enum quantity q)
{
	for (size_t j = 0; j < c->ncols; j++)
		if (q < Q_GBPS || !isnan(q == Q_GBPS ? r->cells[j].gbps : r->cells[j].tflops))
			return 1;
	return 0;
}

static void ceiling_text(double v, const char *unit, char *buf, size_t cap)
{
	if (v > 0)
		snprintf(buf, cap, "%.0f %s", v, unit);
	else
		snprintf(buf, cap, "unknown");
}

static void print_table(const struct kpt_compare *c, int md)
{
	enum kpt_text_sink sink = md ? KPT_TEXT_MD : KPT_TEXT_TERM;
	int w0 = 24, w = 22;
	char buf[64];

	for (size_t r = 0; r < c->nrows; r++)
		if ((int)kpt_text_columns(kpt_cli_term(c->rows[r].workload)) > w0)
			w0 = (int)kpt_text_columns(kpt_cli_term(c->rows[r].workload));
	for (size_t j = 0; j < c->ncols; j++)
		if ((int)kpt_text_columns(kpt_cli_term(c->cols[j].gpu)) + 1 > w)
			w = (int)kpt_text_columns(kpt_cli_term(c->cols[j].gpu)) + 1;
	if (md) {
		printf("| workload | quantity |");
		for (size_t j = 0; j < c->ncols; j++)
			printf(" %s |", c->cols[j].gpu[0] ? kpt_cli_clean(sink, c->cols[j].gpu) : "?");
		printf("\n|---|---|");
		for (size_t j = 0; j < c->ncols; j++)
			printf("---:|");
		printf("\n| | file |");
		for (size_t j = 0; j < c->ncols; j++) {
			fputc(' ', stdout);
			kpt_text_write(stdout, KPT_TEXT_MD_CELL_CODE, c->cols[j].path);
			fputs(" |", stdout);
		}
		printf("\n| | copy / bf16 ceiling |");
		for (size_t j = 0; j < c->ncols; j++) {
			char b2[32];

			ceiling_text(c->cols[j].copy_gbps, "GB/s", buf, sizeof buf);
			ceiling_text(c->cols[j].bf16_tflops, "TFLOP/s", b2, sizeof b2);
			printf(" %s / %s |", buf, b2);
		}
		printf("\n");
	} else {
		printf("%-*s %-17s", w0, "", "gpu");
		for (size_t j = 0; j < c->ncols; j++)
			printf(" %*s", w, c->cols[j].gpu[0] ? kpt_cli_term(c->cols[j].gpu) : "?");
		printf("\n%-*s %-17s", w0, "", "copy ceiling");
		for (size_t j = 0; j < c->ncols; j++)
			ceiling_text(c->cols[j].copy_gbps, "GB/s", buf, sizeof buf), printf(" %*s", w, buf);
		printf("\n%-*s %-17s", w0, "", "bf16 ceiling");
		for (size_t j = 0; j < c->ncols; j++)
			ceiling_text(c->cols[j].bf16_tflops, "TFLOP/s", buf, sizeof buf), printf(" %*s", w, buf);
		printf("\n");
	}
	for (size_t r = 0; r < c->nrows; r++) {
		const struct kpt_compare_row *row = &c->rows[r];
		int first = 1;

		for (int q = 0; q < Q_COUNT; q++) {
			if (!row_has(c, row, (enum quantity)q))
				continue;
			if (md) {
				fputs("| ", stdout);
				if (first)
					kpt_text_write(stdout, KPT_TEXT_MD_CELL_CODE, row->workload);
				printf(" | %s |", quantity_names[q]);
			} else
				printf("%-*s %-17s", w0, first ? kpt_cli_term(row->workload) : "", quantity_names[q]);
			for (size_t j = 0; j < c->ncols; j++) {
				cell_text(&row->cells[j], (enum quantity)q, buf, sizeof buf);
				if (md)
					printf(" %s |", buf);
				else
					printf(" %*s", w, buf);
			}
			printf("\n");
			first = 0;
		}
	}
}

static int print_json(const struct kpt_compare *c, struct kpt_diag *d)
{
	struct kpt_json j;

	kpt_json_init(&j, stdout, 3);
	kpt_json_begin_object(&j);
	kpt_json_kv_str(&j, "format_version", KPT_CLI_JSON_VERSION);
	kpt_json_key(&j, "files");
	kpt_json_begin_array(&j);
	for (size_t k = 0; k < c->ncols; k++) {
		kpt_json_begin_object(&j);
		kpt_json_kv_str(&j, "path", c->cols[k].path);
		kpt_json_kv_str(&j, "gpu", c->cols[k].gpu);
		kpt_json_kv_double(&j, "copy_gbps", c->cols[k].copy_gbps > 0 ? c->cols[k].copy_gbps : NAN);
		kpt_json_kv_double(&j, "bf16_tflops", c->cols[k].bf16_tflops > 0 ? c->cols[k].bf16_tflops : NAN);
		kpt_json_end_object(&j);
	}
	kpt_json_end_array(&j);
	kpt_json_key(&j, "workloads");
	kpt_json_begin_array(&j);
	for (size_t r = 0; r < c->nrows; r++) {
		kpt_json_begin_object(&j);
		kpt_json_kv_str(&j, "workload", c->rows[r].workload);
		kpt_json_key(&j, "cells");
		kpt_json_begin_array(&j);
		for (size_t k = 0; k < c->ncols; k++) {
			const struct kpt_compare_cell *x = &c->rows[r].cells[k];

			kpt_json_begin_object(&j);
			kpt_json_kv_double(&j, "ns", x->ns);
			kpt_json_kv_double(&j, "speedup", x->speedup);
			kpt_json_kv_double(&j, "gbps", x->gbps);
			kpt_json_kv_double(&j, "tflops", x->tflops);
			kpt_json_kv_double(&j, "copy_pct", x->copy_pct);
			kpt_json_kv_double(&j, "bf16_pct", x->bf16_pct);
			kpt_json_end_object(&j);
		}
		kpt_json_end_array(&j);
		kpt_json_end_object(&j);
	}
	kpt_json_end_array(&j);
	kpt_json_end_object(&j);
	return kpt_json_finish(&j, d);
}

/* --plots DIR: one bar plot per workload (GPU time in us as compare prints it,
 * one bar per file), DIR/compare-<workload slug>.gp and .png when gnuplot
 * is installed (kpt_plot_compare). A slug already taken by an earlier
 * workload gets "-<row>" appended. Notes go to stderr, so --format json
 * keeps stdout clean. */
static int write_plots(const struct kpt_compare *c, const char *dir, struct kpt_diag *d)
{
	struct kpt_compare_bar bars[KPT_COMPARE_MAX_FILES];
	char (*stems)[96] = calloc(c->nrows ? c->nrows : 1, sizeof *stems);
	int written = 0, drawn = 0, missing = 0, rc = 0;
	struct kpt_diag why;

	if (!stems)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
		free(stems);
		return kpt_diag_set(d, KPT_E_IO, "cannot create '%s': %s", dir, strerror(errno));
	}
	for (size_t r = 0; r < c->nrows && rc == 0; r++) {
		const struct kpt_compare_row *row = &c->rows[r];
		char slug[64];

		kpt_slug(row->workload, slug, sizeof slug);
		snprintf(stems[r], sizeof stems[r], "compare-%s", slug[0] ? slug : "workload");
		for (size_t k = 0; k < r; k++)
			if (strcmp(stems[k], stems[r]) == 0) {
				snprintf(stems[r], sizeof stems[r], "compare-%s-%zu", slug[0] ? slug : "workload", r);
				break;
			}
		for (size_t j = 0; j < c->ncols; j++) {
			bars[j].gpu = c->cols[j].gpu[0] ? c->cols[j].gpu : c->cols[j].path;
			bars[j].value = row->cells[j].ns / 1e3;
		}
		rc = kpt_plot_compare(row->workload, "GPU time (sum of kernel centres), us", bars, c->ncols, dir, stems[r], &why);
		if (rc == KPT_E_NOTFOUND) {
			fprintf(stderr, "kptprof compare: no plot for '%s': %s\n", kpt_cli_term(row->workload),
				kpt_cli_term(why.msg));
			rc = 0;
			continue;
		}
		if (rc < 0)
			break;
		written++;
		if (missing)
			continue;
		rc = kpt_gnuplot_render(dir, stems[r], 0, &why);
		if (rc == KPT_E_UNSUPPORTED) {
			missing = 1;
			rc = 0;
		} else if (rc == 0) {
			drawn++;
		}
	}
	free(stems);
	if (rc < 0) {
		if (d)
			*d = why;
		return rc;
	}
	fprintf(stderr, "kptprof compare: wrote %d plot%s to '%s' (%d drawn)\n", written, written == 1 ? "" : "s",
		dir, drawn);
	if (missing)
		fprintf(stderr, "hint: gnuplot not found: install it (Debian: apt-get install gnuplot-nox) and run "
				"'gnuplot NAME.gp' in '%s'\n", dir);
	return 0;
}

int cmd_compare(int argc, char **argv)
{
	const char *paths[KPT_COMPARE_MAX_FILES];
	struct kpt_compare *c = NULL;
	struct kpt_diag d;
	struct compare_args a = { .format = CF_TEXT };
	const char *plots;
	size_t n;
	int format, nargs, rc;

	if ((rc = kpt_opt_parse("compare", kpt_compare_opts, &a, argc, argv, &nargs, NULL)) != KPT_OPT_GO)
		return rc;
	if (nargs > KPT_COMPARE_MAX_FILES)
		return kpt_cli_usage_error("compare", "too many files (at most %d)", KPT_COMPARE_MAX_FILES);
	n = (size_t)nargs;
	for (size_t i = 0; i < n; i++)
		paths[i] = argv[i + 1];
	format = a.format;
	plots = a.plots;
	if (n < 2)
		return kpt_cli_usage_error("compare", "give at least two recordings (the first is the reference)");
	if ((rc = kpt_cli_output_dir("compare", plots)) != 0)   /* before the table */
		return rc;
	kpt_diag_clear(&d);
	if (kpt_compare_paths(paths, n, &c, &d) < 0)
		return kpt_cli_fail(&d);
	if (format == CF_JSON)
		rc = print_json(c, &d);
	else
		print_table(c, format == CF_MD), rc = fflush(stdout) == 0 ? 0 : kpt_diag_set(&d, KPT_E_IO, "cannot write the table");
	if (rc == 0 && plots)
		rc = write_plots(c, plots, &d);
	kpt_compare_destroy(c);
	return rc < 0 ? kpt_cli_fail(&d) : KPT_EXIT_OK;
}
