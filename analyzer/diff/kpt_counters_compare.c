/* kpt_counters_compare.c - one suite across GPU models (kptprof compare).
 * Contract in kpt_counters_compare.h. Each column j > 0 comes from the diff of
 * files[0] against files[j]: times are sums of the keys matched in that
 * pair, so a speedup always compares the same kernels. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_counters_compare.h"
#include "kpt_diff.h"

#define KPT_COMPARE_ALL "(all)"

struct col_info {
	struct kpt_file *f;
};

static double meta_num(struct kpt_file *f, const char *workload, const char *what)
{
	char *key = NULL;
	const char *v;
	char *end;
	double x;

	if (asprintf(&key, "workload.%s.%s", workload, what) < 0)
		return NAN;
	v = kpt_file_meta_get(f, key);
	free(key);
	if (!v || !*v)
		return NAN;
	x = strtod(v, &end);
	return *end || !(x > 0) ? NAN : x;
}

static const struct kpt_diff_total *find_total(const struct kpt_diff *df, const char *name)
{
	for (size_t i = 0; i < df->ntotals; i++) {
		const struct kpt_diff_total *t = &df->totals[i];

		if (strcmp(name, KPT_COMPARE_ALL) == 0 ? t->kind == KPT_TOTAL_ALL
						       : t->kind == KPT_TOTAL_WORKLOAD && strcmp(t->name, name) == 0)
			return t;
	}
	return NULL;
}

static void fill_cell(struct kpt_compare_cell *c, double ns, double ref_ns, struct kpt_file *f,
		      const char *workload, const struct kpt_compare_col *col)
{
	double bytes = workload ? meta_num(f, workload, "bytes") : NAN;
	double flops = workload ? meta_num(f, workload, "flops") : NAN;

	c->ns = ns > 0 ? ns : NAN;
	c->speedup = ref_ns > 0 && ns > 0 ? ref_ns / ns : NAN;
	c->gbps = bytes / c->ns;          /* bytes per ns = GB/s */
	c->tflops = flops / c->ns / 1e3;  /* FLOP per ns = GFLOP/s */
	c->copy_pct = kpt_ceiling_pct(c->gbps, col->copy_gbps);
	c->bf16_pct = kpt_ceiling_pct(c->tflops, col->bf16_tflops);
}

static char *xstrdup(const char *s)
{
	return strdup(s ? s : "");
}

int kpt_compare_paths(const char *const *paths, size_t n, struct kpt_compare **out,
		      struct kpt_diag *d)
{
	struct kpt_compare *c;
	struct kpt_file **files;
	struct kpt_diff **diffs;
	struct kpt_diff_opts opts;
	int rc = 0;

	*out = NULL;
	if (n < 2)
		return kpt_diag_set(d, KPT_E_INVAL, "compare needs at least two recordings");
	memset(&opts, 0, sizeof opts);
	opts.force = 1;
	c = calloc(1, sizeof *c);
	files = calloc(n, sizeof *files);
	diffs = calloc(n, sizeof *diffs);
	if (!c || !files || !diffs || !(c->cols = calloc(n, sizeof *c->cols))) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory comparing");
		goto out;
	}
	c->ncols = n;
	for (size_t j = 0; j < n && rc == 0; j++) {
		const struct kpt_device *dev;
		size_t ndev = 0;

		if ((rc = kpt_file_open(paths[j], &files[j], d)) < 0 ||
		    (rc = kpt_file_devices(files[j], &dev, &ndev, d)) < 0)
			break;
		c->cols[j].path = xstrdup(paths[j]);
		c->cols[j].gpu = xstrdup(ndev ? dev[0].name : "");
		c->cols[j].copy_gbps = ndev ? dev[0].copy_gbps : 0;
		c->cols[j].bf16_tflops = ndev ? dev[0].bf16_tflops : 0;
		if (!c->cols[j].path || !c->cols[j].gpu)
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory comparing");
		if (rc == 0 && j > 0)
			rc = kpt_diff_paths(paths[0], paths[j], &opts, &diffs[j], d);
	}
	if (rc < 0)
		goto out;
	/* Rows: the workloads of the first pair, then the total. */
	for (size_t i = 0; i < diffs[1]->ntotals; i++)
		c->nrows += diffs[1]->totals[i].kind == KPT_TOTAL_WORKLOAD && diffs[1]->totals[i].name[0];
	c->nrows++;
	if (!(c->rows = calloc(c->nrows, sizeof *c->rows))) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory comparing");
		goto out;
	}
	for (size_t i = 0, r = 0; i < diffs[1]->ntotals; i++)
		if (diffs[1]->totals[i].kind == KPT_TOTAL_WORKLOAD && diffs[1]->totals[i].name[0])
			c->rows[r++].workload = xstrdup(diffs[1]->totals[i].name);
	c->rows[c->nrows - 1].workload = xstrdup(KPT_COMPARE_ALL);
	for (size_t r = 0; r < c->nrows; r++) {
		struct kpt_compare_row *row = &c->rows[r];
		const char *wl = r + 1 < c->nrows ? row->workload : NULL;
		const struct kpt_diff_total *t0 = NULL;

		if (!row->workload || !(row->cells = calloc(n, sizeof *row->cells))) {
			rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory comparing");
			goto out;
		}
		t0 = find_total(diffs[1], row->workload);
		fill_cell(&row->cells[0], t0 ? t0->base_ns : NAN, t0 ? t0->base_ns : NAN, files[0], wl, &c->cols[0]);
		for (size_t j = 1; j < n; j++) {
			const struct kpt_diff_total *t = find_total(diffs[j], row->workload);

			fill_cell(&row->cells[j], t ? t->new_ns : NAN, t ? t->base_ns : NAN, files[j], wl, &c->cols[j]);
		}
	}
out:
	for (size_t j = 0; files && j < n; j++) {
		kpt_file_close(files[j]);
		if (diffs)
			kpt_diff_destroy(diffs[j]);
	}
	free(files);
	free(diffs);
	if (rc < 0)
		kpt_compare_destroy(c);
	else
		*out = c;
	return rc;
}

void kpt_compare_destroy(struct kpt_compare *c)
{
	if (!c)
		return;
	for (size_t j = 0; c->cols && j < c->ncols; j++) {
		free((char *)c->cols[j].path);
		free((char *)c->cols[j].gpu);
	}
	for (size_t r = 0; c->rows && r < c->nrows; r++) {
		free((char *)c->rows[r].workload);
		free(c->rows[r].cells);
	}
	free(c->cols);
	free(c->rows);
	free(c);
}
