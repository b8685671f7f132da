/* cmd_view.c - kptprof view FILE [--baseline B] [--db URL] -o DIR: the HTML
 * report; with --db the SLOW and AMBG keys' history, and without
 * --baseline the store's baseline (as gate --db takes it). */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_diff.h"
#include "kpt_baseline.h"
#include "kpt_cli.h"
#include "kpt_history.h"
#include "kpt_view.h"

struct view_args {
	const char *path, *out;
	const char *db, *branch, *suite;
	uint64_t nsess;             /* --baseline-sessions, 0: not given */
	uint64_t width, top;        /* 0: not given */
	const char *suite_name;     /* accepted as diff takes it; no effect */
	struct kpt_view_opts o;
	struct kpt_diff_cli dc;     /* diff options shared with `kptprof diff` */
};

#define VA struct view_args
const struct kpt_opt kpt_view_opts[] = {
	KPT_OPT_OPERAND("FILE", "the .kpt recording to report on (required)"),
	KPT_OPT_STRING('o', "output", "DIR", VA, out,
		       "folder to write the report into (required); replaced only when empty or an earlier view"),
	KPT_OPT_STRING(0, "baseline", "B", VA, o.baseline,
		       "BASE recording: diff FILE against it, verdicts first (default: none)"),
	KPT_OPT_STRING(0, "db", "URL", VA, db,
		       "history store (SQLite file or postgresql://...): SLOW and AMBG keys get their history; "
		       "without --baseline also the baseline, as gate --db (default: none)"),
	KPT_OPT_U64(0, "baseline-sessions", "N", VA, nsess, KPT_HISTORY_MIN_SESSIONS, 1000,
		    "with --db and no --baseline: the last N sessions of FILE's suite and GPU model, 2 to 1000 (default 10)"),
	KPT_OPT_STRING(0, "branch", "B", VA, branch, "with --db: the sessions' branch (default main)"),
	KPT_OPT_STRING(0, "suite", "S", VA, suite,
		       "with --db: the sessions' suite (default: FILE's recorded suite, as history add takes it)"),
	KPT_OPT_U64(0, "width", "PX", VA, width, 400, 16384, "timeline width in pixels, 400..16384 (default 1600)"),
	KPT_OPT_U64(0, "top", "N", VA, top, 1, 100000, "rows of the kernel and NVTX range tables (default 50)"),
	KPT_OPT_U64(0, "trace-max", "N", VA, o.trace_max_kernels, 1, 18446744073709551615.0,
		    "trace.json: the N kernels around the middle of the recording (default 200000)"),
	KPT_OPT_FLAG(0, "trace-all", VA, o.trace_all, "trace.json: every kernel, up to the byte budget (default: --trace-max kernels)"),
	KPT_OPT_U64(0, "trace-bytes", "N", VA, o.trace_max_bytes, 1, 18446744073709551615.0,
		    "trace.json is left out when it would pass N bytes (default 1073741824)"),
	KPT_OPT_FLAG(0, "no-gnuplot", VA, o.no_render,
		     "keep the plots as .gp scripts, do not run gnuplot (default: render PNGs when installed)"),
	KPT_OPT_TABLE(VA, dc, kpt_diff_rule_opts),
	{ .kind = KPT_OPTK_STRING, .name = "suite-name", .arg = "S", .off = offsetof(VA, suite_name),
	  .help = "accepted as in kptprof diff; no effect here", .flags = KPT_OPTF_HIDDEN },
	KPT_OPT_END,
};
#undef VA

/* KPT_OPT_GO, or the exit status (after --help or an error). */
static int parse_args(int argc, char **argv, struct view_args *a)
{
	int rc = kpt_opt_parse_file("view", kpt_view_opts, a, argc, argv, &a->path);

	if (rc != KPT_OPT_GO)
		return rc;
	if ((rc = kpt_diff_cli_check("view", &a->dc)) != 0)
		return rc;
	a->o.timeline_width = (int)a->width;
	a->o.top = (int)a->top;
	if (!a->out)
		return kpt_cli_usage_error("view", "missing -o DIR (the folder to write the report into)");
	if (!a->db && (a->branch || a->nsess || a->suite))
		return kpt_cli_usage_error("view", "'%s' picks sessions of the history store: give --db too",
					   a->branch ? "--branch" : a->suite ? "--suite" : "--baseline-sessions");
	if (a->db && a->o.baseline && a->nsess)
		return kpt_cli_usage_error("view", "--baseline-sessions picks a stored baseline: not with --baseline");
	if (a->db && !a->o.baseline && (a->dc.o.paired || a->dc.o.base_runs || a->dc.o.method == KPT_DIFF_POOLED_U))
		return kpt_cli_usage_error("view", "'%s' needs the baseline's recordings: give --baseline with --db",
					   a->dc.o.paired ? "--paired" : a->dc.o.base_runs ? "--base-runs" : "--method pooled-u");
	return KPT_OPT_GO;
}

int cmd_view(int argc, char **argv)
{
	struct view_args a;
	struct kpt_view_result res;
	struct kpt_diag d;
	struct kpt_history *h = NULL;
	struct kpt_baseline *b = NULL;
	int rc;

	memset(&a, 0, sizeof a);
	rc = parse_args(argc, argv, &a);
	if (rc != KPT_OPT_GO) {
		kpt_diff_cli_release(&a.dc);
		return rc;
	}
	rc = 0;
	a.o.diff = a.dc.o;
	a.o.tool_version = KPT_VERSION;
	a.o.history_branch = a.branch ? a.branch : "main";
	a.o.history_suite = a.suite;
	kpt_diag_clear(&d);
	if (a.db && !a.o.baseline) {
		/* the store's baseline, as gate --db takes it (analyzer/baseline),
		 * and the keys' history from the same connection */
		struct kpt_baseline_where w = { .db = a.db, .branch = a.o.history_branch, .nsessions = (uint32_t)a.nsess };
		char slug[256], suite[256];

		if ((rc = kpt_cli_file_series(a.path, slug, sizeof slug, suite, sizeof suite, &d)) == 0 &&
		    (rc = kpt_baseline_open(slug, a.suite ? a.suite : suite, &w, &b, &d)) == 0) {
			a.o.base_side = kpt_baseline_side(b);
			a.o.history = kpt_baseline_store(b);
		}
	} else if (a.db) {
		struct kpt_history_open_opts oo = { .read_only = 1 };

		rc = kpt_history_open(a.db, &oo, &h, &d);
		a.o.history = h;
	}
	if (rc == 0)
		rc = kpt_view_write(a.path, &a.o, a.out, &res, &d);
	kpt_diff_cli_release(&a.dc);
	kpt_baseline_close(b);
	kpt_history_close(h);
	if (rc < 0)
		return kpt_cli_fail(&d);
	if (res.gnuplot_missing)
		fprintf(stderr, "kptprof view: gnuplot not found: %d plot%s kept as .gp scripts\n"
				"hint: install gnuplot (Debian: apt-get install gnuplot-nox) and run 'gnuplot NAME.gp' in '%s'\n",
			res.plots, res.plots == 1 ? "" : "s", a.out);
	fprintf(stderr, "kptprof view: wrote %s/index.html (%d plot%s, %d drawn%s%s)", a.out, res.plots,
		res.plots == 1 ? "" : "s", res.rendered, res.has_timeline ? ", timeline" : "",
		res.has_trace ? ", trace.json" : "");
	if (res.diffed)
		fprintf(stderr, "; vs baseline: %s, %u SLOW, %u AMBG, %u FAST", res.diff_result == KPT_DIFF_REGRESSION ?
			"regression" : "no regression", res.counts[KPT_V_SLOW], res.counts[KPT_V_AMBG],
			res.counts[KPT_V_FAST]);
	fprintf(stderr, "\n");
	printf("%s/index.html\n", a.out);
	return KPT_EXIT_OK;
}
