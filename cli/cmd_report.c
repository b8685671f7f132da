/* cmd_report.c - kptprof report: a per-kernel (or per-NVTX-range) summary of
 * one recording, like Nsight Systems' cuda_gpu_kern_sum, with the device and
 * environment it was recorded on. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_cli.h"
#include "kpt_units.h"
#include "kpt_export.h"
#include "kpt_counters_compare.h"
#include "kpt_demangle.h"
#include "kpt_format.h"
#include "kpt_json.h"
#include "kpt_summary.h"
#include "kpt_text.h"

enum report_format { FMT_TEXT, FMT_MD, FMT_CSV, FMT_JSON };

static const char *const format_names[] = {
	[FMT_TEXT] = "text", [FMT_MD] = "md", [FMT_CSV] = "csv", [FMT_JSON] = "json", NULL,
};
static const char *const by_names[] = {
	[KPT_SUMMARY_BY_KERNEL] = "kernel", [KPT_SUMMARY_BY_RANGE] = "range", [KPT_SUMMARY_BY_RANK] = "rank", NULL,
};

/* --ranges: NVTX's rule (the launching thread's ranges), or any thread's. */
static const char *const range_rules[] = { "thread", "any-thread", NULL };

/* The title of a row's name column for each grouping. */
static const char *const by_titles[] = {
	[KPT_SUMMARY_BY_KERNEL] = "Name", [KPT_SUMMARY_BY_RANGE] = "NVTX range", [KPT_SUMMARY_BY_RANK] = "Rank",
};

struct report {
	const char *path;
	uint64_t top;               /* rows to print, 0: all */
	int by;                     /* enum kpt_summary_by */
	int format;                 /* enum report_format */
	const char *step;           /* --step NAME: NVTX range that marks a step (by rank) */
	int any_thread;             /* --ranges any-thread */
	int color;
	struct kpt_file *f;
	struct kpt_summary *s;
	struct kpt_counts c;
	const struct kpt_device *dev;
	size_t ndev;
	struct kpt_env_summary *env;
	size_t nenv;
	struct kpt_counter_table *ctab; /* the counters section, loaded once; NULL without */
	struct kpt_text_pool *pool; /* cleaned copies (term_safe), freed at exit */
};

const struct kpt_opt kpt_report_opts[] = {
	KPT_OPT_OPERAND("FILE", "a .kpt recording"),
	KPT_OPT_U64(0, "top", "N", struct report, top, 0, UINT32_MAX, "rows to print, busiest first (default 0: all)"),
	KPT_OPT_CHOICE(0, "by", "kernel|range|rank", struct report, by, by_names,
		       "one row per kernel name, NVTX range path, or rank and GPU with NCCL time (default kernel)"),
	KPT_OPT_STRING(0, "step", "NAME", struct report, step,
		       "with --by rank, also the NCCL time per NVTX range NAME (a step) per rank (default: none)"),
	KPT_OPT_CHOICE(0, "ranges", "RULE", struct report, any_thread, range_rules,
		       "any-thread: by range, a kernel with no range of its own thread goes to another thread's (default thread)"),
	KPT_OPT_CHOICE(0, "format", "text|md|csv|json", struct report, format, format_names,
		       "output format; json adds meta, devices, env, counts (default text)"),
	KPT_OPT_INCLUDE(kpt_wide_opts),
	KPT_OPT_END,
};

static size_t rows_shown(const struct report *r)
{
	return r->top && r->top < r->s->n ? (size_t)r->top : r->s->n;
}

/* "13.0" from a CUDA version number such as 13000; "?" for 0. */
static const char *cuda_version(uint32_t v, char *buf, size_t cap)
{
	if (v)
		snprintf(buf, cap, "%u.%u", v / 1000, v % 1000 / 10);
	else
		snprintf(buf, cap, "?");
	return buf;
}

/* ---- text and Markdown ---------------------------------------------------- */

/* s cleaned for a terminal line (lib/kpt_text.h): a name or meta value
 * from a recording must not move the cursor, set colours or start a new
 * line. s itself when clean, else a copy owned by r's pool. */
static const char *term_safe(const struct report *r, const char *s)
{
	return kpt_text_pool_clean(r->pool, KPT_TEXT_TERM, s);
}

static const char *const text_titles[] = {
	"Time %", "Total", "Instances", "Avg", "Med", "Min", "Max", "StdDev",
};

/* A count of the collector's meta: 0 and *ok when it is a whole number. */
static unsigned long long meta_count(const struct report *r, const char *key, int *ok)
{
	const char *v = kpt_file_meta_get(r->f, key);
	char *e;
	unsigned long long n;

	*ok = 0;
	if (!v || *v < '0' || *v > '9')
		return 0;
	errno = 0;
	n = strtoull(v, &e, 10);
	*ok = !errno && !*e;
	return *ok ? n : 0;
}

/* The calibration probes (meta calibration.*, docs/counters.md
 * "Ceilings"), one line when the recording has them. */
static void text_probes(const struct report *r, FILE *out)
{
	double copy = kpt_file_meta_positive(r->f, "calibration.copy_gbps");
	double bf16 = kpt_file_meta_positive(r->f, "calibration.bf16_tflops");
	double fp8 = kpt_file_meta_positive(r->f, "calibration.fp8_tflops");
	double sm = kpt_file_meta_positive(r->f, "calibration.sm_mhz");
	const char *where = kpt_file_meta_get(r->f, "calibration.where");
	int ok;
	unsigned long long runs = meta_count(r, "calibration.runs", &ok);
	char b[32] = "";

	if (!(copy > 0) && !(bf16 > 0) && !(fp8 > 0) && !(sm > 0))
		return;
	if (fp8 > 0)
		snprintf(b, sizeof b, ", e4m3 %.0f", fp8);
	fprintf(out, "probes    copy %.0f GB/s, bf16 %.0f%s TFLOP/s, SM %.0f MHz under load (median of %llu run%s, %s)\n",
		copy, bf16, b, sm, ok ? runs : 0ULL, ok && runs == 1 ? "" : "s",
		where && where[0] ? term_safe(r, where) : "measured where unknown");
}

/* What ran into a window from before it: counted by the pre-roll of
 * --steps/--every windows (collector.kernels_before_window), else not seen
 * (docs/cli.md, "Capture windows"). */
static void text_window_before(const struct report *r, FILE *out)
{
	unsigned long long k, ns, m;
	int ok, ok_ns, ok_m;
	char tb[32];

	if (!kpt_file_meta_get(r->f, "collector.kernels_before_window")) {
		fprintf(out, "          kernels launched before a window opened are not traced, nor counted when they\n"
		       "          ran into it (only --steps/--every windows trace the step before)\n");
		return;
	}
	k = meta_count(r, "collector.kernels_before_window", &ok);
	ns = meta_count(r, "collector.kernels_before_window_ns", &ok_ns);
	m = meta_count(r, "collector.memops_before_window", &ok_m);
	if (!ok) {
		fprintf(out, "          ran into a window from before it: %s\n",
		       term_safe(r, kpt_file_meta_get(r->f, "collector.kernels_before_window")));
		return;
	}
	fprintf(out, "          ran into a window from before it: %llu kernel%s", k, k == 1 ? "" : "s");
	if (k && ok_ns)
		fprintf(out, " for %s", kpt_cli_fmt_ns((double)ns, tb, sizeof tb));
	if (ok_m && m)
		fprintf(out, ", %llu memcpy/memset", m);
	fprintf(out, " (counted, not recorded)\n");
}

/* A sampled run (--sample-every, --on-demand): CUPTI attached only around
 * each window; what attaching and detaching took, summed over processes. */
static void text_sampled(const struct report *r, FILE *out)
{
	int ok;
	unsigned long long na = meta_count(r, "collector.attaches", &ok);
	unsigned long long ta = meta_count(r, "collector.attach_us", &ok);
	unsigned long long nd = meta_count(r, "collector.detaches", &ok);
	unsigned long long td = meta_count(r, "collector.detach_us", &ok);
	char b[2][32];

	fprintf(out, "          CUPTI only around windows: attached %llu x %s, detached %llu x %s\n", na,
		kpt_fmt_duration(na ? (double)ta * 1e3 / (double)na : 0, b[0], sizeof b[0]), nd,
		kpt_fmt_duration(nd ? (double)td * 1e3 / (double)nd : 0, b[1], sizeof b[1]));
	fprintf(out, "          windows missed %llu, requests %llu, untraced ranges not kept %llu\n",
		meta_count(r, "collector.windows_missed", &ok), meta_count(r, "collector.requests", &ok),
		meta_count(r, "collector.ranges_untraced_dropped", &ok));
}

static void text_header(const struct report *r, FILE *out)
{
	char b1[32], b2[32], b3[32], b4[32];
	uint32_t major, minor;
	const char *v;

	kpt_file_version(r->f, &major, &minor);
	fprintf(out, "file      %s (format %u.%u)\n", term_safe(r, r->path), major, minor);
	if ((v = kpt_file_meta_get(r->f, "command")) && v[0])
		fprintf(out, "command   %s\n", term_safe(r, v));
	if ((v = kpt_file_meta_get(r->f, "imported_from")) && v[0]) {
		const char *files = kpt_file_meta_get(r->f, "import.files"), *lacks = kpt_file_meta_get(r->f, "import.lacks");

		fprintf(out, "imported  from %s: %s\n", term_safe(r, v), files ? term_safe(r, files) : "?");
		if (lacks && lacks[0])
			fprintf(out, "lacks     %s\n", term_safe(r, lacks));
	}
	if ((v = kpt_file_meta_get(r->f, "time")) && v[0]) {
		const char *host = kpt_file_meta_get(r->f, "host");

		fprintf(out, "recorded  %s%s%s\n", term_safe(r, v), host && host[0] ? " on " : "",
		       host ? term_safe(r, host) : "");
	}
	if ((v = kpt_file_meta_get(r->f, "suite")) && v[0])
		fprintf(out, "suite     %s\n", term_safe(r, v));
	/* the capture window: record's own words, else the collector's (a
	 * recording made with the KPT_* variables set by hand) */
	if (((v = kpt_file_meta_get(r->f, "window")) && v[0]) ||
	    ((v = kpt_file_meta_get(r->f, "collector.window")) && v[0])) {
		const char *opened = kpt_file_meta_get(r->f, "collector.windows");
		const char *detached = kpt_file_meta_get(r->f, "collector.detached");

		fprintf(out, "window    %s\n", term_safe(r, v));
		if (opened && opened[0])
			fprintf(out, "          opened %s time%s (all processes)\n", term_safe(r, opened),
			       strcmp(opened, "1") == 0 ? "" : "s");
		const char *attaches = kpt_file_meta_get(r->f, "collector.attaches");

		if (attaches && attaches[0])
			text_sampled(r, out);
		else if (detached && detached[0])
			fprintf(out, "          CUPTI detached after the last window (%s process%s): later ranges not recorded\n",
			       term_safe(r, detached), strcmp(detached, "1") == 0 ? "" : "es");
		text_window_before(r, out);
	}
	if ((v = kpt_file_meta_get(r->f, "commit")) && v[0])
		fprintf(out, "commit    %s\n", term_safe(r, v));
	for (size_t i = 0; i < r->ndev; i++) {
		const struct kpt_device *d = &r->dev[i];

		fprintf(out, "GPU %-5u %s (%s): %u SMs, CC %u.%u, %s, L2 %s, driver %s (CUDA %s)%s%s\n",
		       d->index, term_safe(r, d->name), term_safe(r, d->slug), d->sm_count, d->cc_major, d->cc_minor,
		       kpt_cli_fmt_bytes((double)d->mem_bytes, b1, sizeof b1),
		       d->l2_bytes ? kpt_cli_fmt_bytes((double)d->l2_bytes, b2, sizeof b2) : "?",
		       d->driver_string[0] ? term_safe(r, d->driver_string) : "?",
		       cuda_version(d->driver_version, b3, sizeof b3),
		       d->runtime_version ? ", runtime " : "",
		       d->runtime_version ? cuda_version(d->runtime_version, b4, sizeof b4) : "");
	}
	for (size_t i = 0; i < r->nenv; i++) {
		const struct kpt_env_summary *e = &r->env[i];
		char reasons[256];

		kpt_throttle_format(e->throttle_any, reasons, sizeof reasons);
		fprintf(out, "env GPU %-u SM clock %u MHz median (%u-%u), memory %u MHz, %u-%u C, "
		       "power %.0f W median / %.0f W max; throttle %s, slowed in %" PRIu64 " of %" PRIu64 " samples\n",
		       e->device, e->sm_mhz_median, e->sm_mhz_min, e->sm_mhz_max, e->mem_mhz_median,
		       e->temp_c_min, e->temp_c_max, e->power_mw_median / 1e3, e->power_mw_max / 1e3,
		       reasons, e->slowdown_samples, e->samples);
	}
	if (!r->nenv)
		fprintf(out, "env       no NVML samples in this recording\n");
	text_probes(r, out);
	fprintf(out, "processes %u in %u run%s; kernels %" PRIu64 ", memops %" PRIu64 ", NVTX ranges %" PRIu64
	       "; GPU time %s in a %s span\n",
	       r->c.processes, r->c.runs, r->c.runs == 1 ? "" : "s", r->c.kernels, r->c.memops, r->c.ranges,
	       kpt_cli_fmt_ns((double)r->s->total_ns, b1, sizeof b1),
	       kpt_cli_fmt_ns((double)(r->s->last_ns - r->s->first_ns), b2, sizeof b2));
}

/* The numeric cells of a row, formatted. */
static void row_cells(const struct kpt_summary_row *row, char cells[8][32])
{
	snprintf(cells[0], 32, "%.1f%%", row->time_pct);
	kpt_cli_fmt_ns((double)row->total_ns, cells[1], 32);
	snprintf(cells[2], 32, "%" PRIu64, row->instances);
	kpt_cli_fmt_ns(row->avg_ns, cells[3], 32);
	kpt_cli_fmt_ns(row->median_ns, cells[4], 32);
	kpt_cli_fmt_ns((double)row->min_ns, cells[5], 32);
	kpt_cli_fmt_ns((double)row->max_ns, cells[6], 32);
	kpt_cli_fmt_ns(row->stddev_ns, cells[7], 32);
}

static const int text_widths[] = { 6, 9, 9, 9, 9, 9, 9, 9 };
/* the name column on a terminal before optional columns give way */
#define NAME_MIN_COLS 36

/* NVTX ranges named r->step opened by the processes of rank (KPT_NONE: the
 * processes without one): the steps of that rank. 0 when unreadable. */
static uint64_t steps_of_rank(const struct report *r, uint32_t rank)
{
	const struct kpt_range *rg;
	const struct kpt_process *p;
	size_t nr, np;
	uint64_t n = 0;

	if (kpt_file_ranges(r->f, &rg, &nr, NULL) < 0 || kpt_file_processes(r->f, &p, &np, NULL) < 0)
		return 0;
	for (size_t i = 0; i < nr; i++) {
		const char *nm = rg[i].name != KPT_NONE ? kpt_file_string(r->f, rg[i].name) : NULL;

		if (nm && strcmp(nm, r->step) == 0 && rg[i].process < np && p[rg[i].process].rank == rank &&
		    rg[i].kind != KPT_RANGE_MARK)
			n++;
	}
	return n;
}

/* The name cells of the rows shown: whole when stdout is not a terminal;
 * on one, fitted to what the numbers leave (kernel names with their
 * template and parameter lists collapsed first, ranges keeping their
 * tail), never two alike. NULL when out of memory (then whole names). */
static char **name_cells(const struct report *r, int width, size_t n)
{
	const char **full = calloc(n ? n : 1, sizeof *full);
	char **shown = calloc(n ? n : 1, sizeof *shown);
	size_t cols = width > 0 ? (size_t)(width > 12 ? width : 12) : 0;

	if (full && shown) {
		for (size_t i = 0; i < n; i++)
			full[i] = term_safe(r, r->s->rows[i].display);
		if (kpt_text_column(full, n, cols, r->by == KPT_SUMMARY_BY_KERNEL ? KPT_CUT_CXX : KPT_CUT_TAIL,
				    shown) < 0) {
			free(shown);
			shown = NULL;
		}
	} else {
		free(shown);
		shown = NULL;
	}
	free(full);
	return shown;
}

/* The header, each line wrapped to width under the label column. */
static void text_header_fitted(const struct report *r, int width)
{
	char *buf = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *fp = width > 0 ? open_memstream(&buf, &len) : NULL;

	if (!fp) {
		text_header(r, stdout);
		return;
	}
	text_header(r, fp);
	fclose(fp);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		kpt_text_wrap(stdout, line, 0, (size_t)width, 10);
	free(buf);
}

static void print_text(const struct report *r)
{
	const char *bold = r->color ? "\033[1m" : "", *reset = r->color ? "\033[0m" : "";
	static const int drop_order[] = { 7, 5, 6, 3 }; /* StdDev, Min, Max, Avg */
	int width = kpt_cli_table_width(), used = 0;
	char cells[8][32], shown[8] = { 1, 1, 1, 1, 1, 1, 1, 1 };
	int w[8];

	memcpy(w, text_widths, sizeof w);
	char **names;

	text_header_fitted(r, width);
	printf("\n");
	if (!r->s->n) {
		printf("no kernels in this recording\n");
		return;
	}
	/* on a terminal the names get at least NAME_MIN_COLS (or what they
	 * need): StdDev, Min, Max and Avg give way first, in that order */
	for (size_t i = 0; i < rows_shown(r); i++) {
		row_cells(&r->s->rows[i], cells);
		for (int c = 0; c < 8; c++)
			w[c] = (int)strlen(cells[c]) > w[c] ? (int)strlen(cells[c]) : w[c];
	}
	for (int c = 0; c < 8; c++)
		used += w[c] + 2;
	if (width > 0) {
		size_t need = 0;

		for (size_t i = 0; i < rows_shown(r); i++) {
			size_t k = kpt_text_columns(term_safe(r, r->s->rows[i].display));

			need = k > need ? k : need;
		}
		need = need < NAME_MIN_COLS ? need : NAME_MIN_COLS;
		for (size_t k = 0; k < sizeof drop_order / sizeof drop_order[0] && (size_t)width < used + need; k++) {
			shown[drop_order[k]] = 0;
			used -= w[drop_order[k]] + 2;
		}
	}
	printf("%s", bold);
	for (int c = 0; c < 8; c++)
		if (shown[c])
			printf("%*s  ", w[c], text_titles[c]);
	printf("%s%s\n", by_titles[r->by], reset);
	names = name_cells(r, width > 0 ? width - used : 0, rows_shown(r));
	for (size_t i = 0; i < rows_shown(r); i++) {
		const struct kpt_summary_row *row = &r->s->rows[i];

		row_cells(row, cells);
		for (int c = 0; c < 8; c++)
			if (shown[c])
				printf("%*s  ", w[c], cells[c]);
		printf("%s\n", names ? names[i] : term_safe(r, row->display));
	}
	if (memchr(shown, 0, sizeof shown))
		printf("(--wide shows every column)\n");
	kpt_text_column_free(names, rows_shown(r));
	free(names);
	if (rows_shown(r) < r->s->n)
		printf("(%zu more rows: --top 0 shows all)\n", r->s->n - rows_shown(r));
	if (r->by == KPT_SUMMARY_BY_RANK) {
		/* communication: NCCL kernels per rank and GPU */
		printf("\nCommunication (NCCL kernels) per rank:\n");
		for (size_t i = 0; i < r->s->n; i++) {
			const struct kpt_summary_row *row = &r->s->rows[i];
			uint64_t steps = r->step ? steps_of_rank(r, row->rank) : 0;
			char t[32], ps[32];

			kpt_cli_fmt_ns((double)row->comm_ns, t, sizeof t);
			printf("  %-20s %10s in %6llu kernels, %5.1f%% of its GPU time", term_safe(r, row->display), t,
			       (unsigned long long)row->comm_kernels,
			       row->total_ns ? 100.0 * (double)row->comm_ns / (double)row->total_ns : 0.0);
			if (steps) {
				kpt_cli_fmt_ns((double)row->comm_ns / (double)steps, ps, sizeof ps);
				printf("; %s per '%s' (%llu of them)", ps, r->step, (unsigned long long)steps);
			} else if (r->step) {
				printf("; no '%s' range on this rank", r->step);
			}
			printf("\n");
		}
	}
}

/* ---- hardware counters (recordings made with --counters) ---- */

struct ctr_ctx {
	const struct kpt_counter_table *t;
	const char *kernel;
	double ns;
};

static double ctr_get(void *ctx, const char *metric)
{
	const struct ctr_ctx *c = ctx;

	return kpt_counter_table_get(c->t, c->kernel, metric);
}

static int by_counted_time(const void *a, const void *b)
{
	double x = ((const struct ctr_ctx *)a)->ns, y = ((const struct ctr_ctx *)b)->ns;

	return isnan(x) ? !isnan(y) : isnan(y) ? -1 : (x < y) - (x > y);
}

/* Per kernel, means over its profiled launches (the replay pass), busiest
 * first: DRAM GB/s and its percent of the device's measured copy
 * ceiling, instructions per active SM cycle, tensor pipe and warp
 * occupancy percentages. Nothing when the recording has no counters. */
/* The kernels with counters, busiest first, in a new array (caller frees
 * it); NULL when the recording has none. */
static struct ctr_ctx *counter_kernels(const struct report *r, size_t *n)
{
	struct ctr_ctx *k = NULL;

	if (!r->ctab || !(*n = kpt_counter_table_nkernels(r->ctab)) || !(k = calloc(*n, sizeof *k)))
		return NULL;
	for (size_t i = 0; i < *n; i++) {
		k[i] = (struct ctr_ctx){ r->ctab, kpt_counter_table_kernel(r->ctab, i), 0 };
		k[i].ns = ctr_get(&k[i], "gpu__time_duration.sum");
	}
	qsort(k, *n, sizeof *k, by_counted_time);
	return k;
}

/* v with `decimals` decimals into buf, or "-" when v is NAN or not positive. */
static const char *fmt_or_dash(double v, int decimals, char *buf)
{
	if (isnan(v) || !(v > 0))
		return "-";
	snprintf(buf, 24, "%.*f", decimals, v);
	return buf;
}

static void print_counters(const struct report *r)
{
	struct ctr_ctx *k;
	size_t n = 0, shown;
	double copy = r->ndev ? r->dev[0].copy_gbps : 0, bf16 = r->ndev ? r->dev[0].bf16_tflops : 0;
	int width = kpt_cli_table_width();
	char title[192], **full, **names;

	if (!(k = counter_kernels(r, &n)))
		return;
	shown = r->top && r->top < n ? r->top : n;
	snprintf(title, sizeof title, "Counters (replay pass, mean per profiled launch; ceilings: copy %s GB/s, bf16 %s "
		 "TFLOP/s)", copy > 0 ? fmt_or_dash(copy, 0, (char[24]){ 0 }) : "unknown",
		 bf16 > 0 ? fmt_or_dash(bf16, 0, (char[24]){ 0 }) : "unknown");
	printf("\n");
	kpt_text_wrap(stdout, title, 0, width > 0 ? (size_t)width : 0, 2);
	printf("%10s %9s %7s %7s %8s %10s  %s\n", "Time", "DRAM GB/s", "% copy", "IPC", "tensor%", "occupancy%", "Name");
	/* the names, demangled and cleaned, fitted on a terminal */
	full = calloc(shown ? shown : 1, sizeof *full);
	names = calloc(shown ? shown : 1, sizeof *names);
	for (size_t i = 0; full && i < shown; i++) {
		char *dm = kpt_demangle(k[i].kernel);

		full[i] = kpt_text_dup(KPT_TEXT_TERM, dm ? dm : k[i].kernel);
		free(dm);
	}
	if (!full || !names || kpt_text_column((const char *const *)full, shown,
					       width > 0 ? (size_t)(width > 78 ? width - 58 : 20) : 0, KPT_CUT_CXX,
					       names) < 0) {
		free(names);
		names = NULL;
	}
	for (size_t i = 0; i < shown; i++) {
		struct kpt_counter_derived dv;
		double occ = ctr_get(&k[i], "sm__warps_active.avg.pct_of_peak_sustained_active");
		char tb[32];

		kpt_counter_derive(ctr_get, &k[i], r->ndev ? r->dev[0].sm_count : 0, copy, &dv);
		printf("%10s %9.1f %7.1f %7.2f %8.1f %10.1f  %s\n",
		       isnan(k[i].ns) ? "-" : kpt_cli_fmt_ns(k[i].ns, tb, sizeof tb), dv.dram_gbps, dv.copy_ceiling_pct,
		       dv.ipc, dv.tensor_active_pct, occ,
		       names ? names[i] : full && full[i] ? full[i] : "?");
	}
	if (r->top && n > r->top)
		printf("(%zu more kernels with counters: --top 0 shows all)\n", n - (size_t)r->top);
	kpt_text_column_free(names, shown);
	kpt_text_column_free(full, shown);
	free(names);
	free(full);
	free(k);
}


/* Per workload (recordings of the built-in workloads: meta declares
 * workload.<name>.flops/.bytes), GPU time per run and the achieved GB/s and
 * TFLOP/s against this GPU's measured ceilings: the same numbers `kptprof
 * compare` gives per GPU (the file compared with itself). Nothing for other
 * recordings; a failure only leaves the section out. */
static void print_workloads(const struct report *r)
{
	const struct kpt_meta_kv *kv;
	const char *paths[2] = { r->path, r->path };
	struct kpt_compare *c = NULL;
	size_t n = 0, shown = 0;
	int any = 0, width = kpt_cli_table_width();
	char title[256], **names = NULL;
	const char **full = NULL;

	if (kpt_file_meta(r->f, &kv, &n, NULL) < 0)
		return;
	for (size_t i = 0; i < n && !any; i++)
		any = strncmp(kv[i].key, "workload.", 9) == 0;
	if (!any || kpt_compare_paths(paths, 2, &c, NULL) < 0)
		return;
	snprintf(title, sizeof title, "Workloads (GPU time per iteration; achieved rates from the FLOPs and bytes each "
		 "declares; ceilings: copy %s GB/s, bf16 %s TFLOP/s)",
		 c->cols[0].copy_gbps > 0 ? fmt_or_dash(c->cols[0].copy_gbps, 0, (char[24]){ 0 }) : "unknown",
		 c->cols[0].bf16_tflops > 0 ? fmt_or_dash(c->cols[0].bf16_tflops, 0, (char[24]){ 0 }) : "unknown");
	printf("\n");
	kpt_text_wrap(stdout, title, 0, width > 0 ? (size_t)width : 0, 2);
	printf("%10s %9s %7s %9s %7s  %s\n", "Time", "GB/s", "% copy", "TFLOP/s", "% bf16", "Workload");
	full = calloc(c->nrows ? c->nrows : 1, sizeof *full);
	names = calloc(c->nrows ? c->nrows : 1, sizeof *names);
	for (size_t i = 0; full && i < c->nrows; i++)
		full[i] = term_safe(r, c->rows[i].workload);
	if (!full || !names || kpt_text_column(full, c->nrows, width > 60 ? (size_t)width - 48 : width ? 13 : 0,
					       KPT_CUT_MIDDLE, names) < 0) {
		free(names);
		names = NULL;
	}
	for (size_t i = 0; i < c->nrows; i++) {
		const struct kpt_compare_cell *x = &c->rows[i].cells[0];
		char tb[32];

		if (strcmp(c->rows[i].workload, "(all)") == 0 || (r->top && shown == r->top))
			continue;
		shown++;
		printf("%10s %9s %7s %9s %7s  %s\n", isnan(x->ns) ? "-" : kpt_cli_fmt_ns(x->ns, tb, sizeof tb),
		       fmt_or_dash(x->gbps, 0, (char[24]){ 0 }), fmt_or_dash(x->copy_pct, 1, (char[24]){ 0 }),
		       fmt_or_dash(x->tflops, 1, (char[24]){ 0 }), fmt_or_dash(x->bf16_pct, 1, (char[24]){ 0 }),
		       names ? names[i] : term_safe(r, c->rows[i].workload));
	}
	if (r->top && c->nrows - 1 > shown)
		printf("(%zu more workloads: --top 0 shows all)\n", c->nrows - 1 - shown);
	kpt_text_column_free(names, c->nrows);
	free(names);
	free(full);
	kpt_compare_destroy(c);
}

static void print_md(const struct report *r)
{
	char cells[8][32];

	printf("## kptprof report: ");
	kpt_text_write(stdout, KPT_TEXT_MD_CODE, r->path);
	printf("\n\n");
	for (size_t i = 0; i < r->ndev; i++)
		printf("- GPU %u: %s, %u SMs, CC %u.%u, driver %s\n", r->dev[i].index,
		       kpt_text_pool_clean(r->pool, KPT_TEXT_MD, r->dev[i].name), r->dev[i].sm_count,
		       r->dev[i].cc_major, r->dev[i].cc_minor,
		       r->dev[i].driver_string[0] ? kpt_text_pool_clean(r->pool, KPT_TEXT_MD, r->dev[i].driver_string)
						  : "?");
	for (size_t i = 0; i < r->nenv; i++)
		printf("- GPU %u SM clock %u MHz median (%u-%u), %u-%u C, slowed in %" PRIu64 " of %" PRIu64
		       " samples\n", r->env[i].device, r->env[i].sm_mhz_median, r->env[i].sm_mhz_min,
		       r->env[i].sm_mhz_max, r->env[i].temp_c_min, r->env[i].temp_c_max,
		       r->env[i].slowdown_samples, r->env[i].samples);
	printf("- %u process%s in %u run%s, %" PRIu64 " kernels, %" PRIu64 " dropped records\n\n",
	       r->c.processes, r->c.processes == 1 ? "" : "es", r->c.runs, r->c.runs == 1 ? "" : "s",
	       r->c.kernels, r->c.dropped_records);
	printf("|");
	for (int c = 0; c < 8; c++)
		printf(" %s |", text_titles[c]);
	printf(" %s |\n|", by_titles[r->by]);
	for (int c = 0; c < 8; c++)
		printf("---:|");
	printf("---|\n");
	for (size_t i = 0; i < rows_shown(r); i++) {
		row_cells(&r->s->rows[i], cells);
		printf("|");
		for (int c = 0; c < 8; c++)
			printf(" %s |", cells[c]);
		printf(" ");
		kpt_text_write(stdout, KPT_TEXT_MD_CELL_CODE, r->s->rows[i].display);
		printf(" |\n");
	}
}

/* ---- CSV and JSON --------------------------------------------------------- */

static void print_csv(const struct report *r)
{
	printf("time_pct,total_ns,instances,avg_ns,median_ns,min_ns,max_ns,stddev_ns,%s\n",
	       r->by == KPT_SUMMARY_BY_RANGE ? "range" : r->by == KPT_SUMMARY_BY_RANK ? "rank" : "name");
	for (size_t i = 0; i < rows_shown(r); i++) {
		const struct kpt_summary_row *row = &r->s->rows[i];

		printf("%.3f,%" PRIu64 ",%" PRIu64 ",%.1f,%.1f,%" PRIu64 ",%" PRIu64 ",%.1f,", row->time_pct,
		       row->total_ns, row->instances, row->avg_ns, row->median_ns, row->min_ns, row->max_ns,
		       row->stddev_ns);
		kpt_csv_field(stdout, r->by == KPT_SUMMARY_BY_RANGE ? row->name : row->display);
		putchar('\n');
	}
}

static void json_rows(struct kpt_json *j, const struct report *r, const struct kpt_summary *s)
{
	size_t n = r->top && r->top < s->n ? (size_t)r->top : s->n;

	kpt_json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		const struct kpt_summary_row *row = &s->rows[i];

		kpt_json_begin_object(j);
		if (s->by == KPT_SUMMARY_BY_KERNEL) {
			kpt_json_kv_str(j, "name", row->display);
			kpt_json_kv_str(j, "mangled", row->name);
		} else if (s->by == KPT_SUMMARY_BY_RANK) {
			kpt_json_kv_str(j, "rank", row->name);
			kpt_json_kv_u64(j, "comm_ns", row->comm_ns);
			kpt_json_kv_u64(j, "comm_kernels", row->comm_kernels);
		} else {
			kpt_json_kv_str(j, "path", row->name);
		}
		kpt_json_kv_u64(j, "instances", row->instances);
		kpt_json_kv_u64(j, "total_ns", row->total_ns);
		kpt_json_kv_double(j, "time_pct", row->time_pct);
		kpt_json_kv_double(j, "avg_ns", row->avg_ns);
		kpt_json_kv_double(j, "median_ns", row->median_ns);
		kpt_json_kv_u64(j, "min_ns", row->min_ns);
		kpt_json_kv_u64(j, "max_ns", row->max_ns);
		kpt_json_kv_double(j, "stddev_ns", row->stddev_ns);
		if (row->median_rel_err > 0)
			kpt_json_kv_double(j, "median_rel_err", row->median_rel_err);
		kpt_json_end_object(j);
	}
	kpt_json_end_array(j);
}

static void json_env(struct kpt_json *j, const struct report *r)
{
	kpt_json_begin_array(j);
	for (size_t i = 0; i < r->nenv; i++) {
		const struct kpt_env_summary *e = &r->env[i];

		kpt_json_begin_object(j);
		kpt_json_kv_u64(j, "device", e->device);
		kpt_json_kv_u64(j, "samples", e->samples);
		kpt_json_kv_u64(j, "sm_mhz_min", e->sm_mhz_min);
		kpt_json_kv_u64(j, "sm_mhz_median", e->sm_mhz_median);
		kpt_json_kv_u64(j, "sm_mhz_max", e->sm_mhz_max);
		kpt_json_kv_u64(j, "mem_mhz_median", e->mem_mhz_median);
		kpt_json_kv_u64(j, "temp_c_min", e->temp_c_min);
		kpt_json_kv_u64(j, "temp_c_max", e->temp_c_max);
		kpt_json_kv_u64(j, "power_mw_median", e->power_mw_median);
		kpt_json_kv_u64(j, "power_mw_max", e->power_mw_max);
		kpt_json_kv_u64(j, "throttle_any", e->throttle_any);
		kpt_json_kv_u64(j, "slowdown_samples", e->slowdown_samples);
		kpt_json_end_object(j);
	}
	kpt_json_end_array(j);
}

/* JSON always carries the per-kernel rows under "kernels"; --by range adds
 * "ranges". */
/* "kernel_counters": per kernel with counters (busiest first) the derived
 * values and every metric of meta counters.metrics; absent without. */
static void json_counters(struct kpt_json *j, const struct report *r)
{
	struct kpt_metric_list l = { 0 };
	struct ctr_ctx *k;
	size_t n = 0;
	double copy = r->ndev ? r->dev[0].copy_gbps : 0;

	if (!(k = counter_kernels(r, &n)))
		return;
	if (kpt_metric_list_parse(kpt_file_meta_get(r->f, "counters.metrics"), &l, NULL) < 0)
		memset(&l, 0, sizeof l);
	kpt_json_key(j, "kernel_counters");
	kpt_json_begin_array(j);
	for (size_t i = 0; i < n; i++) {
		struct kpt_counter_derived dv;
		char *dm = kpt_demangle(k[i].kernel);

		kpt_counter_derive(ctr_get, &k[i], r->ndev ? r->dev[0].sm_count : 0, copy, &dv);
		kpt_json_begin_object(j);
		kpt_json_kv_str(j, "name", dm ? dm : k[i].kernel);
		kpt_json_kv_str(j, "mangled", k[i].kernel);
		kpt_json_kv_double(j, "dram_bytes", dv.dram_bytes);
		kpt_json_kv_double(j, "dram_gbps", dv.dram_gbps);
		kpt_json_kv_double(j, "copy_ceiling_pct", dv.copy_ceiling_pct);
		kpt_json_kv_double(j, "ipc_per_sm", dv.ipc);
		kpt_json_kv_double(j, "tensor_active_pct", dv.tensor_active_pct);
		kpt_json_key(j, "metrics");
		kpt_json_begin_object(j);
		for (size_t m = 0; m < l.n; m++)
			kpt_json_kv_double(j, l.names[m], ctr_get(&k[i], l.names[m]));
		kpt_json_end_object(j);
		kpt_json_end_object(j);
		free(dm);
	}
	kpt_json_end_array(j);
	kpt_metric_list_release(&l);
	free(k);
}

static int print_json(const struct report *r, struct kpt_diag *d)
{
	struct kpt_summary *by_kernel = r->s;
	struct kpt_json j;
	uint32_t major, minor;
	char version[32];
	int rc = 0;

	if (r->by != KPT_SUMMARY_BY_KERNEL && (rc = kpt_summary_create(r->f, NULL, &by_kernel, d)) < 0)
		return rc;
	kpt_file_version(r->f, &major, &minor);
	snprintf(version, sizeof version, "%u.%u", major, minor);
	kpt_json_init(&j, stdout, 3);
	kpt_json_begin_object(&j);
	kpt_json_kv_str(&j, "format_version", version);
	kpt_json_kv_str(&j, "file", r->path);
	kpt_json_key(&j, "meta");
	rc = kpt_export_json_meta(&j, r->f, d);
	kpt_json_key(&j, "devices");
	rc = rc < 0 ? rc : kpt_export_json_devices(&j, r->f, d);
	kpt_json_key(&j, "counts");
	rc = rc < 0 ? rc : kpt_export_json_counts(&j, r->f, d);
	kpt_json_key(&j, "env");
	json_env(&j, r);
	kpt_json_kv_u64(&j, "gpu_time_ns", by_kernel->total_ns);
	kpt_json_kv_u64(&j, "span_ns", by_kernel->last_ns - by_kernel->first_ns);
	kpt_json_key(&j, "kernels");
	json_rows(&j, r, by_kernel);
	if (r->by == KPT_SUMMARY_BY_RANGE || r->by == KPT_SUMMARY_BY_RANK) {
		kpt_json_key(&j, r->by == KPT_SUMMARY_BY_RANGE ? "ranges" : "ranks");
		json_rows(&j, r, r->s);
	}
	json_counters(&j, r);
	kpt_json_end_object(&j);
	if (rc >= 0)
		rc = kpt_json_finish(&j, d);
	if (by_kernel != r->s)
		kpt_summary_destroy(by_kernel);
	return rc;
}

/* Loads every section the report prints before anything is printed, so a
 * corrupt section fails the command with one line naming the file and the
 * section (kpt_file_meta_get alone would read a corrupt meta section as
 * empty) and --format json never leaves half a document on stdout. */
static int load(struct report *r, struct kpt_diag *d)
{
	struct kpt_summary_opts so = { .by = (enum kpt_summary_by)r->by, .device = KPT_NONE,
				       .any_thread = r->any_thread };
	const struct kpt_meta_kv *kv;
	const struct kpt_range *ranges;
	const struct kpt_env_sample *env;
	size_t n;
	int rc = kpt_file_open(r->path, &r->f, d);

	if (rc >= 0)
		rc = kpt_file_meta(r->f, &kv, &n, d);
	if (rc >= 0)
		rc = kpt_file_env(r->f, &env, &n, d);
	if (rc >= 0 && r->by == KPT_SUMMARY_BY_RANGE)
		rc = kpt_file_ranges(r->f, &ranges, &n, d);
	if (rc >= 0)
		rc = kpt_file_counts(r->f, &r->c, d);   /* processes and drops */
	if (rc >= 0)
		rc = kpt_file_devices(r->f, &r->dev, &r->ndev, d);
	if (rc >= 0)
		rc = kpt_env_summarize(r->f, &r->env, &r->nenv, d);
	if (rc >= 0)
		rc = kpt_summary_create(r->f, &so, &r->s, d);
	/* here, before anything is printed: a corrupt counters section is an
	 * error, not a silently missing table */
	if (rc >= 0 && r->c.counters)
		rc = kpt_counter_table_load(r->f, &r->ctab, d);
	return rc;
}

/* One line on stderr per row whose median comes from a sketch (the first
 * few; then how many more), so no one takes it for an exact one. */
static void note_approx(const struct report *r)
{
	enum { SHOWN = 8 };
	size_t said = 0;

	for (size_t i = 0; i < r->s->n && r->s->approx; i++) {
		const struct kpt_summary_row *row = &r->s->rows[i];

		if (!(row->median_rel_err > 0) || said++ >= SHOWN)
			continue;
		fprintf(stderr, "kptprof report: note: key '%s' has %" PRIu64 " durations; medians from a "
			"histogram within %g%%\n", term_safe(r, row->display), row->instances,
			100 * row->median_rel_err);
	}
	if (said > SHOWN)
		fprintf(stderr, "kptprof report: note: and %zu more keys\n", said - SHOWN);
}

int cmd_report(int argc, char **argv)
{
	struct kpt_text_pool pool = { 0 };
	struct report r = { .by = KPT_SUMMARY_BY_KERNEL, .format = FMT_TEXT, .pool = &pool };
	struct kpt_diag d;
	int rc = kpt_opt_parse_file("report", kpt_report_opts, &r, argc, argv, &r.path);

	if (rc != KPT_OPT_GO)
		return rc;
	kpt_diag_clear(&d);
	r.color = kpt_cli_color(STDOUT_FILENO);
	rc = load(&r, &d);
	if (rc >= 0 && r.c.dropped_records)
		fprintf(stderr, "kptprof: warning: '%s': %" PRIu64 " activity records were dropped while "
			"recording; counts and totals are low\n", r.path, r.c.dropped_records);
	if (rc >= 0)
		note_approx(&r);
	if (rc >= 0) {
		switch (r.format) {
		case FMT_TEXT: print_text(&r); print_workloads(&r); print_counters(&r); break;
		case FMT_MD: print_md(&r); break;
		case FMT_CSV: print_csv(&r); break;
		default: rc = print_json(&r, &d); break;
		}
	}
	if (rc >= 0 && (fflush(stdout) != 0 || ferror(stdout)))
		rc = kpt_diag_set(&d, KPT_E_IO, "cannot write the report to standard output: %s",
				  strerror(errno ? errno : EIO));
	kpt_text_pool_release(&pool);
	kpt_summary_destroy(r.s);
	kpt_counter_table_destroy(r.ctab);
	free(r.env);
	kpt_file_close(r.f);
	return rc < 0 ? kpt_cli_fail(&d) : KPT_EXIT_OK;
}
