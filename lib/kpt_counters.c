/* kpt_counters.c - counter sets, counter tables, derived metrics, deltas.
 * Contracts in kpt_counters.h. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_counters.h"

/* ---- sets ------------------------------------------------------------------ */

static const char *const set_default[] = {
	"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
	"sm__inst_executed.sum", "sm__cycles_active.avg", "lts__t_sectors.sum",
	"sm__pipe_tensor_op_hmma_cycles_active.sum",
	"sm__warps_active.avg.pct_of_peak_sustained_active", NULL,
};
static const char *const set_memory[] = {
	"gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
	"lts__t_sectors.sum", "lts__t_sector_hit_rate.pct", "l1tex__t_bytes.sum",
	"dram__throughput.avg.pct_of_peak_sustained_elapsed", NULL,
};
static const char *const set_compute[] = {
	"gpu__time_duration.sum", "sm__inst_executed.sum", "sm__cycles_active.avg",
	"sm__pipe_tensor_op_hmma_cycles_active.sum", "sm__throughput.avg.pct_of_peak_sustained_elapsed",
	"smsp__inst_executed_pipe_fma.sum", NULL,
};
static const char *const set_occupancy[] = {
	"gpu__time_duration.sum", "sm__warps_active.avg.pct_of_peak_sustained_active",
	"sm__maximum_warps_per_active_cycle_pct", "launch__occupancy_limit_registers",
	"launch__occupancy_limit_shared_mem", NULL,
};

static const struct kpt_counter_set sets[] = {
	{ .name = KPT_COUNTER_SET_DEFAULT, .metrics = set_default,
	  .about = "time, DRAM bytes, instructions, SM cycles, L2 sectors, tensor pipe, warps (1 pass on Hopper expected)" },
	{ .name = "memory", .metrics = set_memory,
	  .about = "DRAM and L2 traffic, L2 hit rate, L1 bytes, DRAM throughput" },
	{ .name = "compute", .metrics = set_compute,
	  .about = "instructions, SM cycles, tensor and FMA pipes, SM throughput" },
	{ .name = "occupancy", .metrics = set_occupancy,
	  .about = "achieved and theoretical occupancy and its limiters" },
};

const struct kpt_counter_set *kpt_counter_sets(size_t *n)
{
	*n = sizeof sets / sizeof sets[0];
	return sets;
}

const struct kpt_counter_set *kpt_counter_set_find(const char *name)
{
	for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
		if (strcmp(sets[i].name, name) == 0)
			return &sets[i];
	return NULL;
}

/* ---- parsing ----------------------------------------------------------------- */

static int metric_shaped(const char *s, size_t len)
{
	const char *us = NULL;

	if (len == 0 || s[0] == '.' || s[0] == '_' || s[len - 1] == '.')
		return 0;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.'))
			return 0;
		if (!us && c == '_' && i + 1 < len && s[i + 1] == '_')
			us = s + i;
	}
	return us && memchr(us, '.', len - (size_t)(us - s)) != NULL;
}

static int list_add(struct kpt_metric_list *l, const char *s, size_t len, struct kpt_diag *d)
{
	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->names[i]) == len && memcmp(l->names[i], s, len) == 0)
			return 0;
	if (l->n == KPT_METRICS_MAX)
		return kpt_diag_set(d, KPT_E_INVAL, "too many counters requested (at most %d)", KPT_METRICS_MAX);
	if (!(l->names[l->n] = strndup(s, len)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory parsing counters");
	l->n++;
	return 0;
}

static void sets_hint(struct kpt_diag *d)
{
	char buf[256];
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof sets / sizeof sets[0] && len < sizeof buf; i++)
		len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? ", " : "", sets[i].name);
	kpt_diag_hint(d, "counter sets: %s; or metric names such as 'dram__bytes_read.sum'", buf);
}

int kpt_metric_list_parse(const char *spec, struct kpt_metric_list *out, struct kpt_diag *d)
{
	const char *p;
	int rc = 0;

	memset(out, 0, sizeof *out);
	if (!spec || !*spec)
		spec = KPT_COUNTER_SET_DEFAULT;
	for (p = spec; rc == 0;) {
		size_t len = strcspn(p, ",");
		char name[64];
		const struct kpt_counter_set *set = NULL;

		if (len == 0) {
			rc = kpt_diag_set(d, KPT_E_INVAL, "empty item in counter list '%s'", spec);
			break;
		}
		if (len < sizeof name) {
			memcpy(name, p, len);
			name[len] = '\0';
			set = kpt_counter_set_find(name);
		}
		if (set) {
			for (const char *const *m = set->metrics; *m && rc == 0; m++)
				rc = list_add(out, *m, strlen(*m), d);
		} else if (metric_shaped(p, len)) {
			rc = list_add(out, p, len, d);
		} else {
			rc = kpt_diag_set(d, KPT_E_NOTFOUND, "unknown counter set or metric '%.*s'",
					  (int)(len > 200 ? 200 : len), p);
			sets_hint(d);
		}
		if (!p[len])
			break;
		p += len + 1;
		if (!*p && rc == 0)
			rc = kpt_diag_set(d, KPT_E_INVAL, "empty item in counter list '%s'", spec);
	}
	if (rc < 0)
		kpt_metric_list_release(out);
	return rc;
}

void kpt_metric_list_release(struct kpt_metric_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->names[i]);
	memset(l, 0, sizeof *l);
}

char *kpt_metric_list_join(const struct kpt_metric_list *l)
{
	size_t len = 1;
	char *s;

	for (size_t i = 0; i < l->n; i++)
		len += strlen(l->names[i]) + 1;
	if (!(s = malloc(len)))
		return NULL;
	s[0] = '\0';
	for (size_t i = 0, at = 0; i < l->n; i++)
		at += (size_t)sprintf(s + at, "%s%s", i ? "," : "", l->names[i]);
	return s;
}

/* ---- rows --------------------------------------------------------------------- */

size_t kpt_counter_rows_fill(const uint32_t *range_names, size_t nranges,
			     const uint32_t *metric_ids, size_t nmetrics,
			     const double *values, uint32_t process, uint32_t device,
			     uint32_t first_ordinal, struct kpt_counter *out)
{
	size_t k = 0;

	for (size_t r = 0; r < nranges; r++)
		for (size_t m = 0; m < nmetrics; m++) {
			double v = values[r * nmetrics + m];

			if (isnan(v))
				continue;
			out[k++] = (struct kpt_counter){
				.process = process, .device = device, .kernel_name = range_names[r],
				.ordinal = first_ordinal + (uint32_t)r, .metric = metric_ids[m], .value = v,
			};
		}
	return k;
}

/* ---- census ---------------------------------------------------------------------- */

struct triple {
	uint32_t process, ordinal, metric;
};

static int by_triple(const void *a, const void *b)
{
	const struct triple *x = a, *y = b;

	if (x->process != y->process)
		return x->process < y->process ? -1 : 1;
	if (x->ordinal != y->ordinal)
		return x->ordinal < y->ordinal ? -1 : 1;
	return (x->metric > y->metric) - (x->metric < y->metric);
}

static int by_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

int kpt_counter_census(const struct kpt_counter *rows, size_t n, uint32_t passes,
		       struct kpt_counter_census *c, struct kpt_diag *d)
{
	struct triple *t = malloc((n ? n : 1) * sizeof *t);
	uint32_t *m = malloc((n ? n : 1) * sizeof *m);
	uint64_t distinct = 0;

	memset(c, 0, sizeof *c);
	if (!t || !m) {
		free(t);
		free(m);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory counting counters");
	}
	for (size_t i = 0; i < n; i++) {
		t[i] = (struct triple){ rows[i].process, rows[i].ordinal, rows[i].metric };
		m[i] = rows[i].metric;
	}
	qsort(t, n, sizeof *t, by_triple);
	qsort(m, n, sizeof *m, by_u32);
	for (size_t i = 0; i < n; i++) {
		int new_kernel = i == 0 || t[i].process != t[i - 1].process || t[i].ordinal != t[i - 1].ordinal;

		c->kernels += new_kernel;
		if (new_kernel || t[i].metric != t[i - 1].metric)
			distinct++;
		else
			c->duplicates++;
		c->metrics += i == 0 || m[i] != m[i - 1];
	}
	c->rows = n;
	c->missing = c->kernels * c->metrics - distinct;
	c->passes = passes;
	c->replays = c->kernels * passes;
	free(t);
	free(m);
	return 0;
}

/* ---- tables ------------------------------------------------------------------------ */

struct entry {
	const char *kernel, *metric;
	double sum;
	uint64_t n;
};

struct kpt_counter_table {
	struct entry *e;
	size_t n;
	char *strings;              /* owned copies of the names, one block */
	size_t *kstart, nk;         /* first entry of each distinct kernel */
};

static int by_entry(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->kernel, y->kernel);

	return c ? c : strcmp(x->metric, y->metric);
}

int kpt_counter_table_build(const struct kpt_counter *rows, size_t n,
			    const char *const *strings, uint32_t nstrings,
			    struct kpt_counter_table **out, struct kpt_diag *d)
{
	struct kpt_counter_table *t = calloc(1, sizeof *t);
	size_t k = 0, bytes = 0, at = 0;

	*out = NULL;
	if (!t || !(t->e = malloc((n ? n : 1) * sizeof *t->e))) {
		free(t);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading counters");
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].kernel_name >= nstrings || rows[i].metric >= nstrings) {
			kpt_counter_table_destroy(t);
			return kpt_diag_set(d, KPT_E_FORMAT, "counter row %zu names string %u of %u", i,
					    rows[i].kernel_name >= nstrings ? rows[i].kernel_name : rows[i].metric,
					    nstrings);
		}
		t->e[k++] = (struct entry){ strings[rows[i].kernel_name], strings[rows[i].metric], rows[i].value, 1 };
	}
	qsort(t->e, k, sizeof *t->e, by_entry);
	t->n = 0;
	for (size_t i = 0; i < k; i++) {
		if (t->n && by_entry(&t->e[t->n - 1], &t->e[i]) == 0) {
			t->e[t->n - 1].sum += t->e[i].sum;
			t->e[t->n - 1].n++;
		} else {
			t->e[t->n++] = t->e[i];
		}
	}
	/* Own the names: the strings may belong to a file closed after this. */
	for (size_t i = 0; i < t->n; i++)
		bytes += strlen(t->e[i].kernel) + strlen(t->e[i].metric) + 2;
	if (!(t->strings = malloc(bytes ? bytes : 1))) {
		kpt_counter_table_destroy(t);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading counters");
	}
	for (size_t i = 0; i < t->n; i++) {
		size_t a = strlen(t->e[i].kernel) + 1, b = strlen(t->e[i].metric) + 1;

		memcpy(t->strings + at, t->e[i].kernel, a);
		memcpy(t->strings + at + a, t->e[i].metric, b);
		t->e[i].kernel = t->strings + at;
		t->e[i].metric = t->strings + at + a;
		at += a + b;
	}
	if (!(t->kstart = malloc((t->n ? t->n : 1) * sizeof *t->kstart))) {
		kpt_counter_table_destroy(t);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading counters");
	}
	for (size_t i = 0; i < t->n; i++)
		if (i == 0 || strcmp(t->e[i].kernel, t->e[i - 1].kernel) != 0)
			t->kstart[t->nk++] = i;
	*out = t;
	return 0;
}

int kpt_counter_table_load(struct kpt_file *f, struct kpt_counter_table **out, struct kpt_diag *d)
{
	const struct kpt_counter *rows;
	const char **strings;
	uint32_t ns;
	size_t n;
	int rc;

	*out = NULL;
	if ((rc = kpt_file_load_strings(f, d)) < 0 || (rc = kpt_file_counters(f, &rows, &n, d)) < 0)
		return rc;
	ns = kpt_file_string_count(f);
	if (!(strings = malloc((ns ? ns : 1) * sizeof *strings)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory loading counters");
	for (uint32_t i = 0; i < ns; i++)
		strings[i] = kpt_file_string(f, i);
	rc = kpt_counter_table_build(rows, n, strings, ns, out, d);
	free(strings);
	return rc;
}

void kpt_counter_table_destroy(struct kpt_counter_table *t)
{
	if (!t)
		return;
	free(t->e);
	free(t->kstart);
	free(t->strings);
	free(t);
}

size_t kpt_counter_table_size(const struct kpt_counter_table *t)
{
	return t ? t->n : 0;
}

size_t kpt_counter_table_nkernels(const struct kpt_counter_table *t)
{
	return t ? t->nk : 0;
}

const char *kpt_counter_table_kernel(const struct kpt_counter_table *t, size_t i)
{
	return t && i < t->nk ? t->e[t->kstart[i]].kernel : NULL;
}

double kpt_counter_table_get(const struct kpt_counter_table *t, const char *kernel, const char *metric)
{
	struct entry key = { kernel, metric, 0, 0 }, *e;

	if (!t || !t->n)
		return NAN;
	e = bsearch(&key, t->e, t->n, sizeof *t->e, by_entry);
	return e ? e->sum / (double)e->n : NAN;
}

/* ---- derived ---------------------------------------------------------------------- */

double kpt_ceiling_pct(double achieved, double ceiling)
{
	if (!(achieved >= 0) || !(ceiling > 0) || isinf(achieved) || isinf(ceiling))
		return NAN;
	return 100.0 * achieved / ceiling;
}

static double ratio(double a, double b)
{
	return isnan(a) || isnan(b) || b == 0 ? NAN : a / b;
}

void kpt_counter_derive(double (*get)(void *ctx, const char *metric), void *ctx,
			uint32_t sm_count, double copy_gbps, struct kpt_counter_derived *out)
{
	double rd = get(ctx, "dram__bytes_read.sum"), wr = get(ctx, "dram__bytes_write.sum");
	double ns = get(ctx, "gpu__time_duration.sum"), inst = get(ctx, "sm__inst_executed.sum");
	double cyc = get(ctx, "sm__cycles_active.avg");
	double hmma = get(ctx, "sm__pipe_tensor_op_hmma_cycles_active.sum");
	double sectors = get(ctx, "lts__t_sectors.sum");
	double sm = sm_count ? (double)sm_count : NAN;

	out->dram_bytes = isnan(rd) || isnan(wr) ? NAN : rd + wr;
	out->dram_gbps = ratio(out->dram_bytes, ns); /* bytes per ns = GB/s */
	out->ipc = ratio(inst, cyc * sm); /* warp instructions per cycle per SM */
	out->tensor_active_pct = 100.0 * ratio(hmma, cyc * sm);
	out->l2_bytes = isnan(sectors) ? NAN : 32.0 * sectors;
	out->copy_ceiling_pct = kpt_ceiling_pct(out->dram_gbps, copy_gbps);
}

/* ---- deltas ------------------------------------------------------------------------ */

static const struct {
	const char *metric, *label;
} labels[] = {
	{ "gpu__time_duration.sum", "time" },
	{ "dram__bytes_read.sum", "dram bytes read" },
	{ "dram__bytes_write.sum", "dram bytes written" },
	{ "sm__inst_executed.sum", "instructions" },
	{ "sm__cycles_active.avg", "active SM cycles" },
	{ "lts__t_sectors.sum", "L2 sectors" },
	{ "sm__pipe_tensor_op_hmma_cycles_active.sum", "tensor pipe cycles" },
	{ "sm__warps_active.avg.pct_of_peak_sustained_active", "achieved occupancy" },
	{ "lts__t_sector_hit_rate.pct", "L2 hit rate" },
	{ "l1tex__t_bytes.sum", "L1 bytes" },
};

const char *kpt_counter_label(const char *metric)
{
	for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
		if (strcmp(labels[i].metric, metric) == 0)
			return labels[i].label;
	return metric;
}

static int by_abs_change(const void *a, const void *b)
{
	double x = fabs(((const struct kpt_counter_delta *)a)->change_pct);
	double y = fabs(((const struct kpt_counter_delta *)b)->change_pct);

	if (x != y)
		return x < y ? 1 : -1;
	return strcmp(((const struct kpt_counter_delta *)a)->metric,
		      ((const struct kpt_counter_delta *)b)->metric);
}

static size_t kernel_lower(const struct kpt_counter_table *t, const char *kernel)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(t->e[mid].kernel, kernel) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

size_t kpt_counter_deltas(const struct kpt_counter_table *base, const struct kpt_counter_table *new_,
			  const char *kernel, struct kpt_counter_delta *out, size_t cap)
{
	size_t k = 0;

	if (!base || !new_ || !cap)
		return 0;
	for (size_t i = kernel_lower(base, kernel); i < base->n && strcmp(base->e[i].kernel, kernel) == 0; i++) {
		const struct entry *e = &base->e[i];
		double b = e->sum / (double)e->n, n = kpt_counter_table_get(new_, kernel, e->metric);

		if (isnan(n) || strcmp(e->metric, "gpu__time_duration.sum") == 0)
			continue;
		if (k == cap) {
			/* Keep the largest cap: replace the smallest if this one is larger. */
			struct kpt_counter_delta c = { e->metric, kpt_counter_label(e->metric), b, n,
						       b == 0 ? (n == 0 ? 0 : INFINITY) : 100.0 * (n / b - 1) };

			qsort(out, k, sizeof *out, by_abs_change);
			if (by_abs_change(&c, &out[k - 1]) < 0)
				out[k - 1] = c;
			continue;
		}
		out[k++] = (struct kpt_counter_delta){ e->metric, kpt_counter_label(e->metric), b, n,
						       b == 0 ? (n == 0 ? 0 : INFINITY) : 100.0 * (n / b - 1) };
	}
	qsort(out, k, sizeof *out, by_abs_change);
	return k;
}

int kpt_counter_deltas_text(const struct kpt_counter_delta *dl, size_t n, size_t top, char *buf, size_t cap)
{
	size_t len = 0;

	if (cap)
		buf[0] = '\0';
	for (size_t i = 0; i < n && i < top && len < cap; i++) {
		if (isinf(dl[i].change_pct))
			len += (size_t)snprintf(buf + len, cap - len, "%s%s from 0", i ? ", " : "", dl[i].label);
		else
			len += (size_t)snprintf(buf + len, cap - len, "%s%s %+.0f%%", i ? ", " : "", dl[i].label,
						dl[i].change_pct);
	}
	return (int)(len < cap ? len : cap ? cap - 1 : 0);
}
