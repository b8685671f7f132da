/* cmd_view.c - kptprof view FILE [--baseline B] [--db URL] -o DIR: the HTML
 * report; with --db the SLOW and AMBG keys' history, and without
 * --baseline the store's baseline (as gate --db takes it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd_diff.h"
#include "kpt_cli.h"
#include "kpt_history.h"
#include "kpt_view.h"

/* `kptprof view --help`: every option parse_args accepts (its own and the
 * diff options view passes on), one line each with its default. */
static const struct {
	const char *opt, *what;
} view_help[] = {
	{ "FILE", "the .kpt recording to report on (required)" },
	{ "-o, --output DIR", "folder to write the report into (required); replaced only when empty or an earlier view" },
	{ "--baseline B", "BASE recording: diff FILE against it, verdicts first (default: none)" },
	{ "--db URL", "history store (SQLite file or postgresql://...): SLOW and AMBG keys get their history; without --baseline also the baseline, as gate --db (default: none)" },
	{ "--baseline-sessions N", "with --db and no --baseline: the last N sessions of FILE's suite and GPU model, 2 to 1000 (default 10)" },
	{ "--branch B", "with --db: the sessions' branch (default main)" },
	{ "--suite S", "with --db: the sessions' suite (default: FILE's recorded suite, as history add takes it)" },
	{ "--width PX", "timeline width in pixels, 400..16384 (default 1600)" },
	{ "--top N", "rows of the kernel and NVTX range tables (default 50)" },
	{ "--trace-max N", "write trace.json only up to N kernels (default 2000000)" },
	{ "--no-gnuplot", "keep the plots as .gp scripts, do not run gnuplot (default: render PNGs when installed)" },
	{ "--threshold PCT", "with --baseline: change that matters, percent (default 2)" },
	{ "--short-threshold PCT", "threshold for kernels under 10 us (default 5)" },
	{ "--long-threshold PCT", "threshold for kernels from 200 us (default 1)" },
	{ "--alpha A", "family-wise error rate, Holm over the keys (default 0.05)" },
	{ "--force", "diff recordings of different GPU models anyway (default: refuse)" },
	{ "--welch", "Welch's t instead of Student's on the log run medians (default Student)" },
	{ "--keep-throttled", "keep samples the environment filter would drop (default: drop)" },
	{ "--aggregate", "N: compare a kernel launched N+ times per iteration in one path as one key; 0: never (default 3)" },
	{ "--between-prior", "PCT: between-machine SD assumed when the baseline has one session (default: by duration)" },
	{ "--no-shift", "do not take a family's common move out of its keys (default: taken out, reported once)" },
	{ "--paired", "run i of the recording against run i of the baseline, interleaved on one machine (default: off)" },
	{ "--ranges", "RULE: any-thread puts a kernel with no range of its own thread in another thread's (default thread)" },
	{ "--base-runs LIST", "use only these BASE runs, e.g. 0-4,7 (default: all)" },
	{ "--new-runs LIST", "use only these NEW runs (default: all)" },
	{ "--method rule|pooled-u", "decision method (maintainers; default rule)" },
	{ "--suite-name S", "accepted as in kptprof diff; no effect here (view writes no JUnit report)" },
	{ "-h, --help", "show this help" },
};

static void print_help(void)
{
	kpt_cli_help("view");
	printf("\noptions:\n");
	for (size_t i = 0; i < sizeof view_help / sizeof view_help[0]; i++)
		printf("  %-24s %s\n", view_help[i].opt, view_help[i].what);
}

struct view_args {
	const char *path, *out;
	const char *db, *branch, *suite;
	uint64_t nsess;             /* --baseline-sessions, 0: not given */
	struct kpt_view_opts o;
	struct kpt_diff_cli dc;     /* diff options shared with `kptprof diff` */
};

static int parse_args(int argc, char **argv, struct view_args *a)
{
	for (int i = 1; i < argc; i++) {
		uint64_t n;
		const char *v;
		int rc;

		if (kpt_cli_is_help(argv[i])) {
			print_help();
			return -1;
		}
		if ((rc = kpt_cli_opt(argc, argv, &i, "--baseline", &v)) != 0) {
			if (rc < 0)
				return KPT_EXIT_ERROR;
			a->o.baseline = v;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "-o", &v)) != 0 ||
			   (rc = kpt_cli_opt(argc, argv, &i, "--output", &v)) != 0) {
			if (rc < 0)
				return KPT_EXIT_ERROR;
			a->out = v;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "--db", &v)) != 0) {
			if (rc < 0)
				return KPT_EXIT_ERROR;
			if (!v[0])
				return kpt_cli_usage_error("view", "empty --db");
			a->db = v;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "--suite", &v)) != 0) {
			if (rc < 0)
				return KPT_EXIT_ERROR;
			a->suite = v;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "--branch", &v)) != 0) {
			if (rc < 0)
				return KPT_EXIT_ERROR;
			if (!v[0])
				return kpt_cli_usage_error("view", "empty --branch");
			a->branch = v;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "--baseline-sessions", &v)) != 0) {
			if (rc < 0 || kpt_cli_parse_u64("view", "--baseline-sessions", v, KPT_HISTORY_MIN_SESSIONS, 1000,
							&a->nsess))
				return KPT_EXIT_ERROR;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "--width", &v)) != 0) {
			if (rc < 0 || kpt_cli_parse_u64("view", "--width", v, 400, 16384, &n))
				return KPT_EXIT_ERROR;
			a->o.timeline_width = (int)n;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "--top", &v)) != 0) {
			if (rc < 0 || kpt_cli_parse_u64("view", "--top", v, 1, 100000, &n))
				return KPT_EXIT_ERROR;
			a->o.top = (int)n;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "--trace-max", &v)) != 0) {
			if (rc < 0 || kpt_cli_parse_u64("view", "--trace-max", v, 1, UINT64_MAX, &n))
				return KPT_EXIT_ERROR;
			a->o.trace_max_kernels = n;
		} else if (strcmp(argv[i], "--no-gnuplot") == 0) {
			a->o.no_render = 1;
		} else if ((rc = kpt_diff_cli_option(argc, argv, &i, &a->dc)) != 0) {
			if (rc != 1)
				return KPT_EXIT_ERROR;
			if (a->dc.junit || a->dc.markdown || a->dc.json || a->dc.quiet || a->dc.all)
				return kpt_cli_usage_error("view", "'%s' is a 'kptprof diff' option, not one of view", argv[i]);
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return kpt_cli_usage_error("view", "unknown option '%s'", argv[i]);
		} else if (a->path) {
			return kpt_cli_usage_error("view", "one FILE only, got '%s' and '%s'", a->path, argv[i]);
		} else {
			a->path = argv[i];
		}
	}
	if (!a->path)
		return kpt_cli_usage_error("view", "missing FILE (a .kpt recording)");
	if (!a->out)
		return kpt_cli_usage_error("view", "missing -o DIR (the folder to write the report into)");
	if (!a->out[0])
		return kpt_cli_usage_error("view", "empty -o DIR");
	if (!a->db && (a->branch || a->nsess || a->suite))
		return kpt_cli_usage_error("view", "'%s' picks sessions of the history store: give --db too",
					   a->branch ? "--branch" : a->suite ? "--suite" : "--baseline-sessions");
	if (a->db && a->o.baseline && a->nsess)
		return kpt_cli_usage_error("view", "--baseline-sessions picks a stored baseline: not with --baseline");
	if (a->db && !a->o.baseline && (a->dc.o.paired || a->dc.o.base_runs || a->dc.o.method == KPT_DIFF_POOLED_U))
		return kpt_cli_usage_error("view", "'%s' needs the baseline's recordings: give --baseline with --db",
					   a->dc.o.paired ? "--paired" : a->dc.o.base_runs ? "--base-runs" : "--method pooled-u");
	return 0;
}

int cmd_view(int argc, char **argv)
{
	struct view_args a;
	struct kpt_view_result res;
	struct kpt_diag d;
	struct kpt_history *h = NULL;
	struct kpt_history_set *set = NULL;
	struct kpt_diff_side *side = NULL;
	int rc;

	memset(&a, 0, sizeof a);
	rc = parse_args(argc, argv, &a);
	if (rc) {
		kpt_diff_cli_release(&a.dc);
		return rc < 0 ? KPT_EXIT_OK : rc;
	}
	a.o.diff = a.dc.o;
	a.o.tool_version = KPT_VERSION;
	a.o.history_branch = a.branch ? a.branch : "main";
	a.o.history_suite = a.suite;
	kpt_diag_clear(&d);
	if (a.db) {
		struct kpt_history_open_opts oo = { .read_only = 1 };
		char slug[256], suite[256];

		rc = kpt_history_open(a.db, &oo, &h, &d);
		if (rc == 0 && !a.o.baseline &&
		    (rc = kpt_cli_file_series(a.path, slug, sizeof slug, suite, sizeof suite, &d)) == 0 &&
		    (rc = kpt_history_gate_side(h, a.suite ? a.suite : suite, slug, a.o.history_branch, a.nsess ? (uint32_t)a.nsess : KPT_HISTORY_GATE_SESSIONS,
						&set, &side, &d)) == 0)
			a.o.base_side = side;
		a.o.history = h;
	}
	if (rc == 0)
		rc = kpt_view_write(a.path, &a.o, a.out, &res, &d);
	kpt_diff_cli_release(&a.dc);
	kpt_diff_side_destroy(side);
	kpt_history_set_destroy(set);
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
