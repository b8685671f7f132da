/* cmd_diff.c - kptprof diff BASE NEW: verdicts per kernel key, reports, exit status. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_diff.h"
#include "kpt_cli.h"
#include "kpt_diff_report.h"
#include "kpt_gnuplot.h"
#include "kpt_outfile.h"
#include "kpt_plot.h"

static const char *const method_names[] = {
	[KPT_DIFF_RULE] = "rule",
	[KPT_DIFF_POOLED_U] = "pooled-u",
};

static int parse_double(const char *cmd, const char *opt, const char *v, double lo, double hi,
			double *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || *end || !(x >= lo && x <= hi))
		return kpt_cli_usage_error(cmd, "bad value '%s' for %s: expected a number in [%g, %g]",
					   v, opt, lo, hi);
	*out = x;
	return 0;
}

/* "0,1,2" or "0-4,7" -> run numbers. */
static int parse_runs(const char *cmd, const char *opt, const char *v, uint32_t **out, uint32_t *n)
{
	uint32_t *r = NULL, cnt = 0, cap = 0;
	const char *p = v;

	while (*p) {
		char *end;
		unsigned long a, b;

		errno = 0;
		a = strtoul(p, &end, 10);
		if (errno || end == p || a > UINT32_MAX)
			goto bad;
		b = a;
		p = end;
		if (*p == '-') {
			b = strtoul(p + 1, &end, 10);
			if (errno || end == p + 1 || b < a || b > UINT32_MAX || b - a > 100000)
				goto bad;
			p = end;
		}
		for (unsigned long x = a; x <= b; x++) {
			if (cnt == cap) {
				uint32_t *t;

				cap = cap ? cap * 2 : 16;
				t = realloc(r, cap * sizeof *t);
				if (!t)
					goto bad;
				r = t;
			}
			r[cnt++] = (uint32_t)x;
		}
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	if (!cnt)
		goto bad;
	*out = r;
	*n = cnt;
	return 0;
bad:
	free(r);
	return kpt_cli_usage_error(cmd, "bad value '%s' for %s: expected run numbers like 0,1,2 or 0-4", v, opt);
}

/* The options diff and gate share, looked up in one place. */
enum diff_opt_kind {
	DO_NUMBER,  /* double at off, in [lo, hi] */
	DO_STRING,  /* const char * at off */
	DO_FLAG,    /* int at off, set to 1 */
	DO_METHOD,  /* enum kpt_diff_method at off */
	DO_RUNS,    /* run list: pointer at off, count at off2, buffer runs_buf[(int)lo] */
	DO_INT,     /* int at off, in [lo, hi] */
	DO_RANGES,  /* int at off: 0 thread, 1 any-thread */
};

static const char *const range_rules[] = { "thread", "any-thread" };

struct diff_opt {
	const char *name;
	enum diff_opt_kind kind;
	size_t off, off2;
	double lo, hi;
};

#define DC(field) offsetof(struct kpt_diff_cli, field)
static const struct diff_opt diff_opts[] = {
	{ "--threshold", DO_NUMBER, DC(o.threshold_pct), 0, 0.001, 1000 },
	{ "--short-threshold", DO_NUMBER, DC(o.short_threshold_pct), 0, 0.001, 1000 },
	{ "--long-threshold", DO_NUMBER, DC(o.long_threshold_pct), 0, 0.001, 1000 },
	{ "--alpha", DO_NUMBER, DC(o.alpha), 0, 1e-9, 0.5 },
	{ "--junit", DO_STRING, DC(junit), 0, 0, 0 },
	{ "--markdown", DO_STRING, DC(markdown), 0, 0, 0 },
	{ "--json", DO_STRING, DC(json), 0, 0, 0 },
	{ "--suite-name", DO_STRING, DC(suite), 0, 0, 0 },
	{ "--force", DO_FLAG, DC(o.force), 0, 0, 0 },
	{ "--all", DO_FLAG, DC(all), 0, 0, 0 },
	{ "--quiet", DO_FLAG, DC(quiet), 0, 0, 0 },
	{ "-q", DO_FLAG, DC(quiet), 0, 0, 0 },
	{ "--welch", DO_FLAG, DC(o.welch), 0, 0, 0 },
	{ "--keep-throttled", DO_FLAG, DC(o.keep_throttled), 0, 0, 0 },
	{ "--paired", DO_FLAG, DC(o.paired), 0, 0, 0 },
	{ "--ranges", DO_RANGES, DC(o.any_thread), 0, 0, 0 },
	{ "--no-shift", DO_FLAG, DC(o.no_shift), 0, 0, 0 },
	{ "--aggregate", DO_INT, DC(o.aggregate_min), 0, -1, 1000000 },
	{ "--between-prior", DO_NUMBER, DC(o.between_prior_pct), 0, 0.001, 100 },
	{ "--other-machine", DO_FLAG, DC(o.machine), 0, 0, 0 },
	/* Maintainer options (docs/decision-rule.md): the method and run
	 * subsets, used by the evaluation. */
	{ "--method", DO_METHOD, DC(o.method), 0, 0, 0 },
	{ "--base-runs", DO_RUNS, DC(o.base_runs), DC(o.n_base_runs), 0, 0 },
	{ "--new-runs", DO_RUNS, DC(o.new_runs), DC(o.n_new_runs), 1, 0 },
};
#undef DC

int kpt_diff_cli_option(int argc, char **argv, int *i, struct kpt_diff_cli *dc)
{
	const char *cmd = argv[0], *v = NULL;
	char *base = (char *)dc;

	for (size_t k = 0; k < sizeof diff_opts / sizeof diff_opts[0]; k++) {
		const struct diff_opt *op = &diff_opts[k];
		int rc, idx;

		if (op->kind == DO_FLAG) {
			if (strcmp(argv[*i], op->name) != 0)
				continue;
			*(int *)(base + op->off) = 1;
			return 1;
		}
		rc = kpt_cli_opt(argc, argv, i, op->name, &v);
		if (rc == 0)
			continue;
		if (rc < 0)
			return KPT_EXIT_ERROR;
		switch (op->kind) {
		case DO_NUMBER:
			return parse_double(cmd, op->name, v, op->lo, op->hi, (double *)(base + op->off)) ?: 1;
		case DO_STRING:
			*(const char **)(base + op->off) = v;
			return 1;
		case DO_INT: {
			double x = 0;

			if (parse_double(cmd, op->name, v, op->lo, op->hi, &x))
				return KPT_EXIT_ERROR;
			if (x != floor(x))
				return kpt_cli_usage_error(cmd, "bad value '%s' for %s: expected an integer", v, op->name);
			/* 0 means "the default" in the options: --aggregate 0 turns it off too */
			*(int *)(base + op->off) = x == 0 ? -1 : (int)x;
			return 1;
		}
		case DO_RANGES:
			if (kpt_cli_parse_choice(cmd, op->name, v, range_rules, 2, &idx))
				return KPT_EXIT_ERROR;
			*(int *)(base + op->off) = idx;
			return 1;
		case DO_METHOD:
			if (kpt_cli_parse_choice(cmd, op->name, v, method_names, 2, &idx))
				return KPT_EXIT_ERROR;
			*(enum kpt_diff_method *)(base + op->off) = (enum kpt_diff_method)idx;
			return 1;
		case DO_RUNS: {
			uint32_t **buf = &dc->runs_buf[(int)op->lo];

			free(*buf);
			*buf = NULL;
			if (parse_runs(cmd, op->name, v, buf, (uint32_t *)(base + op->off2)))
				return KPT_EXIT_ERROR;
			*(const uint32_t **)(base + op->off) = *buf;
			return 1;
		}
		default:
			return 0;
		}
	}
	return 0;
}

void kpt_diff_cli_release(struct kpt_diff_cli *dc)
{
	free(dc->runs_buf[0]);
	free(dc->runs_buf[1]);
	dc->runs_buf[0] = dc->runs_buf[1] = NULL;
}

static int is_stdout(const char *path)
{
	return path && strcmp(path, "-") == 0;
}

typedef int (*report_fn)(const struct kpt_diff *, FILE *, const struct kpt_report_opts *,
			 struct kpt_diag *);

/* Writes one report to path ("-": stdout) through a temporary file renamed
 * into place, so a failed write leaves no half report behind. */
static int write_report(const char *path, report_fn fn, const struct kpt_diff *df,
			const struct kpt_diag *err, const struct kpt_report_opts *ro,
			struct kpt_diag *d)
{
	FILE *f;
	int rc;

	if (strcmp(path, "-") == 0)
		return fn ? fn(df, stdout, ro, d) : kpt_diff_write_json_error(err, stdout, d);
	if ((rc = kpt_out_create(path, &f, d)) < 0)
		return rc;
	rc = fn ? fn(df, f, ro, d) : kpt_diff_write_json_error(err, f, d);
	if (rc < 0) {
		kpt_out_discard(f, path);
		return rc;
	}
	return kpt_out_publish(f, path, 0, d);
}

/* The diff plots (viewer/kpt_plot.h) into dir: the scripts always, the
 * PNGs when gnuplot is installed. A plot with nothing to show is skipped. */
static int write_plots(const char *dir, const struct kpt_diff *df, struct kpt_diag *d)
{
	static const struct {
		const char *stem;
		int (*fn)(const struct kpt_diff *, const char *, const char *, struct kpt_diag *);
	} plots[] = {
		{ "diff-change", kpt_plot_diff_change },
		{ "diff-runs", kpt_plot_diff_runs },
	};
	int rendered = 0, scripts = 0;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST)
		return kpt_diag_set(d, KPT_E_IO, "cannot make '%s': %s", dir, strerror(errno));
	for (size_t i = 0; i < sizeof plots / sizeof plots[0]; i++) {
		struct kpt_diag pd = { 0 };
		int rc = plots[i].fn(df, dir, plots[i].stem, &pd);

		if (rc == KPT_E_NOTFOUND)
			continue;
		if (rc < 0) {
			*d = pd;
			return rc;
		}
		scripts++;
		rc = kpt_gnuplot_render(dir, plots[i].stem, 0, &pd);
		if (rc == KPT_E_UNSUPPORTED) {
			fprintf(stderr, "kptprof diff: %s; the plot scripts are in '%s'\n", pd.msg, dir);
			break;
		}
		if (rc < 0) {
			*d = pd;
			return rc;
		}
		rendered++;
	}
	fprintf(stderr, "kptprof diff: %d plot script%s, %d picture%s in '%s'\n", scripts,
		scripts == 1 ? "" : "s", rendered, rendered == 1 ? "" : "s", dir);
	return 0;
}

int kpt_diff_cli_fail(struct kpt_diff_cli *dc, const struct kpt_diag *err)
{
	struct kpt_diag d2 = { 0 };

	if (dc->json && write_report(dc->json, NULL, NULL, err, NULL, &d2) < 0)
		kpt_cli_fail(&d2);
	return kpt_cli_fail(err);
}

/* A gate compares something: fewer than half of either side's keys
 * matched (a wrong path, a renamed range, another program) is an error. */
static int check_matched(const struct kpt_diff *df, const char *new_, struct kpt_diag *d)
{
	uint32_t gone = df->counts[KPT_V_GONE], nw = df->counts[KPT_V_NEW];
	uint32_t matched = (uint32_t)df->nrows - gone - nw;

	if (2 * (uint64_t)matched >= (uint64_t)matched + gone && 2 * (uint64_t)matched >= (uint64_t)matched + nw &&
	    matched > 0)
		return 0;
	kpt_diag_set(d, KPT_E_MISMATCH, "'%s' matched %u of the baseline's %u keys and %u of its own %u: nothing to gate",
		     new_, matched, matched + gone, matched, matched + nw);
	return kpt_diag_hint(d, "check the recording's suite, ranges and the baseline path ('kptprof diff BASE NEW' shows what differs)");
}

/* Prints and writes the reports of df, destroys it, returns the exit status. */
static int report(struct kpt_diff *df, struct kpt_diff_cli *dc)
{
	struct kpt_diag d = { 0 };
	struct kpt_report_opts ro = { 0 };
	int rc, width;

	if (dc->require_match && check_matched(df, df->new_.path, &d) < 0) {
		kpt_diff_destroy(df);
		return kpt_diff_cli_fail(dc, &d);
	}

	ro.color = kpt_cli_color(1);
	width = kpt_cli_term_width(1);
	ro.width = width;
	ro.all = dc->all;
	ro.suite = dc->suite;
	/* A report on stdout replaces the table there. */
	if (!dc->quiet && !is_stdout(dc->json) && !is_stdout(dc->markdown) && !is_stdout(dc->junit) &&
	    kpt_diff_write_text(df, stdout, &ro, &d) < 0)
		goto fail;
	ro.color = 0;
	if (dc->markdown && write_report(dc->markdown, kpt_diff_write_markdown, df, NULL, &ro, &d) < 0)
		goto fail;
	if (dc->junit && write_report(dc->junit, kpt_diff_write_junit, df, NULL, &ro, &d) < 0)
		goto fail;
	if (dc->json && write_report(dc->json, kpt_diff_write_json, df, NULL, &ro, &d) < 0)
		goto fail;
	if (dc->plots && write_plots(dc->plots, df, &d) < 0)
		goto fail;
	rc = df->result == KPT_DIFF_REGRESSION ? KPT_EXIT_REGRESSION : KPT_EXIT_OK;
	kpt_diff_destroy(df);
	return rc;
fail:
	kpt_diff_destroy(df);
	return kpt_cli_fail(&d);
}

int kpt_diff_cli_run(const char *cmd, const char *const *bases, size_t nbase, const char *new_,
		     struct kpt_diff_cli *dc)
{
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };

	/* a report written over an input would destroy it (and the error
	 * report of --json too): refused before anything is written */
	for (size_t i = 0; i <= nbase; i++) {
		const char *in = i < nbase ? bases[i] : new_;
		const char *const outs[] = { dc->junit, dc->markdown, dc->json };
		static const char *const opt[] = { "--junit", "--markdown", "--json" };

		for (size_t k = 0; k < 3; k++)
			if (outs[k] && kpt_cli_same_file(in, outs[k]))
				return kpt_cli_usage_error(cmd, "'%s' is the input recording '%s': choose another %s",
							   outs[k], in, opt[k]);
	}
	if (kpt_diff_paths_multi(bases, nbase, new_, &dc->o, &df, &d) < 0)
		return kpt_diff_cli_fail(dc, &d);
	return report(df, dc);
}

int kpt_diff_cli_run_side(const struct kpt_diff_side *base, const char *new_, struct kpt_diff_cli *dc)
{
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };

	if (kpt_diff_side_vs_path(base, new_, &dc->o, &df, &d) < 0)
		return kpt_diff_cli_fail(dc, &d);
	return report(df, dc);
}

int cmd_diff(int argc, char **argv)
{
	struct kpt_diff_cli dc = { 0 };
	const char **files = calloc((size_t)argc + 1, sizeof *files);
	int nfiles = 0, rc;

	if (!files)
		return kpt_cli_usage_error(argv[0], "out of memory");
	for (int i = 1; i < argc; i++) {
		if (kpt_cli_is_help(argv[i])) {
			rc = kpt_cli_help("diff");
			goto out;
		}
		rc = kpt_cli_opt(argc, argv, &i, "--plots", &dc.plots);
		if (rc == 0)
			rc = kpt_diff_cli_option(argc, argv, &i, &dc);
		else if (rc < 0)
			rc = KPT_EXIT_ERROR;
		if (rc == 1)
			continue;
		if (rc != 0)
			goto out;
		if (argv[i][0] == '-' && argv[i][1]) {
			rc = kpt_cli_usage_error(argv[0], "unknown option '%s'", argv[i]);
			goto out;
		}
		files[nfiles++] = argv[i];
	}
	if (nfiles < 2) {
		rc = kpt_cli_usage_error(argv[0], "expected two recordings: BASE NEW");
		goto out;
	}
	/* BASE... NEW: every file (or folder of session files) but the last is a
	 * session of the baseline. */
	rc = kpt_diff_cli_run(argv[0], files, (size_t)nfiles - 1, files[nfiles - 1], &dc);
out:
	kpt_diff_cli_release(&dc);
	free(files);
	return rc;
}
