/* cmd_diff.c - kptprof diff BASE NEW: verdicts per kernel key, reports, exit status. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd_diff.h"
#include "kpt_cli.h"
#include "kpt_diff_report.h"
#include "kpt_grow.h"
#include "kpt_outfile.h"
#include "kpt_progress.h"
#include "kpt_view.h"

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
			if (kpt_grow_u32(&r, &cap, (size_t)cnt + 1, sizeof *r) < 0)
				goto bad;
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

/* ---- the options diff, gate, ab and view share ----------------------------------------- */

static const char *const range_rules[] = { "thread", "any-thread", NULL };

static int set_method(const char *cmd, const char *opt, const char *v, void *field, void *args)
{
	int idx;

	if (kpt_cli_parse_choice(cmd, opt, v, method_names, 2, &idx))
		return KPT_EXIT_ERROR;
	*(enum kpt_diff_method *)field = (enum kpt_diff_method)idx;
	return 0;
}

/* 0 means "the default" in the options: --aggregate 0 turns it off too. */
static int set_aggregate(const char *cmd, const char *opt, const char *v, void *field, void *args)
{
	double x = 0;

	if (parse_double(cmd, opt, v, -1, 1000000, &x))
		return KPT_EXIT_ERROR;
	if (x != floor(x))
		return kpt_cli_usage_error(cmd, "bad value '%s' for %s: expected an integer", v, opt);
	*(int *)field = x == 0 ? -1 : (int)x;
	return 0;
}

/* --base-runs (side 0), --new-runs (side 1): the list lives in runs_buf[side]. */
static int set_runs(const char *cmd, const char *opt, const char *v, struct kpt_diff_cli *dc, int side)
{
	uint32_t **buf = &dc->runs_buf[side];
	uint32_t *n = side ? &dc->o.n_new_runs : &dc->o.n_base_runs;

	free(*buf);
	*buf = NULL;
	if (parse_runs(cmd, opt, v, buf, n))
		return KPT_EXIT_ERROR;
	if (side)
		dc->o.new_runs = *buf;
	else
		dc->o.base_runs = *buf;
	return 0;
}

static int set_base_runs(const char *cmd, const char *opt, const char *v, void *field, void *args)
{
	return set_runs(cmd, opt, v, args, 0);
}

static int set_new_runs(const char *cmd, const char *opt, const char *v, void *field, void *args)
{
	return set_runs(cmd, opt, v, args, 1);
}

/* The decision options. Defaults: fill_defaults() in analyzer/diff/kpt_diff.c. */
const struct kpt_opt kpt_diff_rule_opts[] = {
	KPT_OPT_DOUBLE(0, "threshold", "PCT", struct kpt_diff_cli, o.threshold_pct, 0.001, 1000,
		       "change that matters, percent, for kernels of 10 us to 200 us (default 2)"),
	KPT_OPT_DOUBLE(0, "short-threshold", "PCT", struct kpt_diff_cli, o.short_threshold_pct, 0.001, 1000,
		       "the same for kernels under 10 us in BASE (default 5)"),
	KPT_OPT_DOUBLE(0, "long-threshold", "PCT", struct kpt_diff_cli, o.long_threshold_pct, 0.001, 1000,
		       "the same for kernels of 200 us and more in BASE (default 1)"),
	KPT_OPT_DOUBLE(0, "alpha", "A", struct kpt_diff_cli, o.alpha, 1e-9, 0.5,
		       "family-wise error rate over all kernels, Holm-corrected, at most 0.5 (default 0.05)"),
	KPT_OPT_FLAG(0, "force", struct kpt_diff_cli, o.force,
		     "compare recordings of different GPU models (default: refuse, exit 2)"),
	KPT_OPT_FLAG(0, "welch", struct kpt_diff_cli, o.welch,
		     "Welch's t instead of Student's on the log run medians (default Student)"),
	KPT_OPT_FLAG(0, "keep-throttled", struct kpt_diff_cli, o.keep_throttled,
		     "keep samples taken throttled or under 0.75x the run's median SM clock (default: drop)"),
	KPT_OPT_CALL(0, "aggregate", "N", struct kpt_diff_cli, o.aggregate_min, set_aggregate,
		     "a kernel launched N+ times per iteration in one NVTX path is one key (default 3; 0: never)"),
	KPT_OPT_DOUBLE(0, "between-prior", "PCT", struct kpt_diff_cli, o.between_prior_pct, 0.001, 100,
		       "between-machine SD when BASE has one session (default: by kernel duration)"),
	KPT_OPT_FLAG(0, "other-machine", struct kpt_diff_cli, o.machine,
		     "NEW is another machine even where base sessions share its GPU and boot (default: off)"),
	KPT_OPT_FLAG(0, "no-shift", struct kpt_diff_cli, o.no_shift,
		     "keep a family's common move in its keys' changes (default: reported once, taken out)"),
	KPT_OPT_FLAG(0, "no-calibration", struct kpt_diff_cli, o.no_calibration,
		     "take no session's measured ceiling (copy, bf16) out of any key (default: where the base says it helps)"),
	KPT_OPT_FLAG(0, "probe-calibration", struct kpt_diff_cli, o.calibration_probes,
		     "calibrate on the probes each run measured (meta calibration.*) where every session has them (not a "
		     "history-store base: it keeps none; no effect on ab's paired rule); on six fresh H200s they explained "
		     "less than the device ceilings (default: the device ceilings)"),
	KPT_OPT_FLAG(0, "paired", struct kpt_diff_cli, o.paired,
		     "run i of NEW against run i of BASE, interleaved on one machine (default: off; ab: on)"),
	KPT_OPT_CHOICE(0, "ranges", "RULE", struct kpt_diff_cli, o.any_thread, range_rules,
		       "any-thread: a kernel with no range of its own thread takes another thread's (default thread)"),
	/* Maintainer options (docs/decision-rule.md): the method and run
	 * subsets, used by the evaluation. */
	KPT_OPT_CALL(0, "base-runs", "LIST", struct kpt_diff_cli, o.base_runs, set_base_runs,
		     "use only these runs of BASE, e.g. 0-4,7 (default: all)"),
	KPT_OPT_CALL(0, "new-runs", "LIST", struct kpt_diff_cli, o.new_runs, set_new_runs,
		     "use only these runs of NEW (default: all)"),
	KPT_OPT_CALL(0, "method", "rule|pooled-u", struct kpt_diff_cli, o.method, set_method,
		     "decision method; pooled-u only shows its false alarms (maintainers; default rule)"),
	KPT_OPT_END,
};

/* What diff writes besides its table: reports, plots, the table's rows. */
const struct kpt_opt kpt_diff_report_opts[] = {
	KPT_OPT_STRING(0, "junit", "F", struct kpt_diff_cli, junit,
		       "also write a JUnit XML report, one test per kernel, SLOW fails; '-': stdout (default: none)"),
	KPT_OPT_STRING(0, "markdown", "F", struct kpt_diff_cli, markdown,
		       "also write a Markdown report (a pull-request comment); '-': stdout (default: none)"),
	KPT_OPT_STRING(0, "json", "F", struct kpt_diff_cli, json,
		       "also write a JSON report, {\"result\": \"error\"} when it fails; '-': stdout (default: none)"),
	KPT_OPT_STRING(0, "plots", "DIR", struct kpt_diff_cli, plots,
		       "also write gnuplot scripts of the changes and runs, PNGs with gnuplot (default: none)"),
	KPT_OPT_STRING(0, "suite-name", "S", struct kpt_diff_cli, suite,
		       "JUnit test suite name (default: NEW's suite, else diff)"),
	KPT_OPT_FLAG(0, "all", struct kpt_diff_cli, all,
		     "list SAME kernels in the table too (default: only when 40 keys or fewer)"),
	KPT_OPT_FLAG('q', "quiet", struct kpt_diff_cli, quiet,
		     "no table on standard output, only reports and exit status (default: table)"),
	KPT_OPT_INCLUDE(kpt_wide_opts),
	KPT_OPT_END,
};

/* `kptprof diff`'s table: every diff option. */
const struct kpt_opt kpt_diff_opts[] = {
	KPT_OPT_OPERAND("BASE... NEW", "baseline and new recording (required); several BASE files or a folder: sessions"),
	KPT_OPT_FLAG(0, "allow-unmatched", struct kpt_diff_cli, allow_unmatched,
		     "show the table even when fewer than half of either side's keys matched (default: refuse, exit 2)"),
	KPT_OPT_FLAG(0, "same-machine", struct kpt_diff_cli, o.same_machine,
		     "BASE and NEW ran on this one machine and boot: no between-machine noise (imported traces "
		     "without a host name; default: by GPU UUID and boot id)"),
	KPT_OPT_INCLUDE(kpt_diff_rule_opts),
	KPT_OPT_INCLUDE(kpt_diff_report_opts),
	KPT_OPT_END,
};

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

/* The diff plots (kpt_view_diff_plots) into dir: the scripts always, the
 * PNGs when gnuplot is installed. A plot with nothing to show is skipped. */
static int write_plots(const char *dir, const struct kpt_diff *df, struct kpt_diag *d)
{
	struct kpt_view_result res;
	int rc = kpt_view_diff_plots(df, dir, 0, &res, d);

	if (rc < 0)
		return rc;
	if (res.gnuplot_missing)
		fprintf(stderr, "kptprof diff: gnuplot not found: plots kept as scripts in '%s'\n"
				"hint: install gnuplot (Debian: apt-get install gnuplot-nox) and run 'gnuplot NAME.gp' there\n",
			dir);
	fprintf(stderr, "kptprof diff: %d plot script%s, %d picture%s in '%s'\n", res.plots,
		res.plots == 1 ? "" : "s", res.rendered, res.rendered == 1 ? "" : "s", dir);
	return 0;
}

int kpt_diff_cli_fail(struct kpt_diff_cli *dc, const struct kpt_diag *err)
{
	struct kpt_diag d2 = { 0 };

	if (dc->json && write_report(dc->json, NULL, NULL, err, NULL, &d2) < 0)
		kpt_cli_fail(&d2);
	return kpt_cli_fail(err);
}

/* A gate or a diff compares something: fewer than half of either side's
 * keys matched (a wrong path, a renamed range, another program), or none at
 * all, is an error, never "no regression". */
static int check_matched(const struct kpt_diff *df, const char *new_, int gate, struct kpt_diag *d)
{
	uint32_t gone = df->counts[KPT_V_GONE], nw = df->counts[KPT_V_NEW];
	uint32_t matched = (uint32_t)df->nrows - gone - nw;

	if (2 * (uint64_t)matched >= (uint64_t)matched + gone && 2 * (uint64_t)matched >= (uint64_t)matched + nw &&
	    matched > 0)
		return 0;
	kpt_diag_set(d, KPT_E_MISMATCH, "'%s' matched %u of the baseline's %u keys and %u of its own %u: nothing to %s",
		     new_, matched, matched + gone, matched, matched + nw, gate ? "gate" : "compare");
	return kpt_diag_hint(d, gate ? "check the recording's suite, ranges and the baseline path "
				       "('kptprof diff --allow-unmatched BASE NEW' shows what differs)"
				     : "check that both recordings ran the same program and ranges "
				       "('--allow-unmatched' shows the NEW and GONE keys)");
}

/* A gate compares like with like: a recording made with another idle gap
 * before each timed iteration than its baseline measured its compute-bound
 * kernels in another power state (3-12% apart on an H100). */
static int check_settle(const struct kpt_diff *df, struct kpt_diag *d)
{
	if (!df->settle_differs)
		return 0;
	kpt_diag_set(d, KPT_E_MISMATCH, "'%s' was recorded with %lld us idle before each timed iteration, the baseline "
		     "with %lld us: their compute-bound kernels ran in different power states", df->new_.path,
		     (long long)df->settle_new_us, (long long)df->settle_base_us);
	return kpt_diag_hint(d, "record with 'kptprof record --suite S --settle-us %lld', or record the baseline's "
			     "sessions again as this one was", (long long)df->settle_base_us);
}

/* Prints and writes the reports of df, destroys it, returns the exit status. */
static int report(struct kpt_diff *df, struct kpt_diff_cli *dc)
{
	struct kpt_diag d = { 0 };
	struct kpt_report_opts ro = { 0 };
	int rc, width;

	if (((dc->require_match || (dc->refuse_unmatched && !dc->allow_unmatched)) &&
	     check_matched(df, df->new_.path, dc->require_match, &d) < 0) ||
	    (dc->require_match && check_settle(df, &d) < 0)) {
		kpt_diff_destroy(df);
		return kpt_diff_cli_fail(dc, &d);
	}

	ro.color = kpt_cli_color(1);
	width = kpt_cli_table_width();
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

int kpt_diff_cli_report(struct kpt_diff *df, struct kpt_diff_cli *dc)
{
	return report(df, dc);
}

int kpt_diff_cli_check(const char *cmd, const struct kpt_diff_cli *dc)
{
	if (dc->o.calibration_probes && dc->o.no_calibration)
		return kpt_cli_usage_error(cmd, "--probe-calibration and --no-calibration contradict each other");
	return 0;
}

int kpt_diff_cli_run(const char *cmd, const char *const *bases, size_t nbase, const char *new_,
		     struct kpt_diff_cli *dc)
{
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };
	int rc;

	if ((rc = kpt_diff_cli_check(cmd, dc)) != 0)
		return rc;

	/* a report written over an input (a session of a baseline folder
	 * too) would destroy it, the error report of --json too: refused
	 * before anything is printed or written */
	{
		const char *const outs[] = { dc->junit, dc->markdown, dc->json };

		if ((rc = kpt_cli_outputs(cmd, bases, nbase, NULL, 0)) != 0 ||
		    (rc = kpt_cli_outputs(cmd, &new_, 1, outs, 3)) != 0 ||
		    (rc = kpt_cli_output_dir(cmd, dc->plots)) != 0)
			return rc;
	}
	if (dc->quiet)
		kpt_progress_stop();
	kpt_progress_begin("loading", 0, "kernels");
	rc = kpt_diff_paths_multi(bases, nbase, new_, &dc->o, &df, &d);
	kpt_progress_end();
	if (rc < 0)
		return kpt_diff_cli_fail(dc, &d);
	return report(df, dc);
}

int kpt_diff_cli_run_side(const struct kpt_diff_side *base, const char *new_, struct kpt_diff_cli *dc)
{
	struct kpt_diff *df = NULL;
	struct kpt_diag d = { 0 };
	int rc;

	if ((rc = kpt_diff_cli_check("gate", dc)) != 0)
		return rc;

	if (dc->quiet)
		kpt_progress_stop();
	kpt_progress_begin("loading", 0, "kernels");
	rc = kpt_diff_side_vs_path(base, new_, &dc->o, &df, &d);
	kpt_progress_end();
	if (rc < 0)
		return kpt_diff_cli_fail(dc, &d);
	return report(df, dc);
}

int cmd_diff(int argc, char **argv)
{
	struct kpt_diff_cli dc = { .refuse_unmatched = 1 };
	int n, rc = kpt_opt_parse("diff", kpt_diff_opts, &dc, argc, argv, &n, NULL);

	if (rc == KPT_OPT_GO && n < 2)
		rc = kpt_cli_usage_error(argv[0], "expected two recordings: BASE NEW");
	else if (rc == KPT_OPT_GO && dc.o.same_machine && (dc.o.machine || dc.o.paired))
		rc = kpt_cli_usage_error(argv[0], "--same-machine and --%s contradict each other",
					 dc.o.paired ? "paired" : "other-machine");
	/* BASE... NEW: every file (or folder of session files) but the last is a
	 * session of the baseline. */
	else if (rc == KPT_OPT_GO)
		rc = kpt_diff_cli_run(argv[0], (const char *const *)argv + 1, (size_t)n - 1, argv[n], &dc);
	kpt_diff_cli_release(&dc);
	return rc;
}
