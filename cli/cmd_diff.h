/* cmd_diff.h - what `kptprof diff` shares with `kptprof gate`: the diff
 * options, running the diff and writing its reports and exit status. */
#ifndef KPT_CMD_DIFF_H
#define KPT_CMD_DIFF_H

#include "kpt_cli.h"
#include "kpt_diff.h"

struct kpt_diff_cli {
	struct kpt_diff_opts o;
	const char *junit, *markdown, *json; /* output files, "-" = stdout, NULL none */
	const char *suite;                   /* JUnit classname suffix, NULL: from the file */
	int all;                             /* list SAME rows too */
	int quiet;                           /* no terminal table */
	uint32_t *runs_buf[2];               /* owned: parsed --base-runs/--new-runs */
	const char *plots;                   /* --plots DIR (diff, gate): gnuplot scripts + PNGs */
	/* gate: fewer than half of the baseline's keys (or of the new
	 * recording's) matched is an error, never a pass; and an idle gap
	 * other than the baseline's is refused */
	int require_match;
	/* diff: the same matching rule (nothing to compare is an error) unless
	 * --allow-unmatched */
	int refuse_unmatched;
	int allow_unmatched;                 /* diff --allow-unmatched */
};

/* The diff options as tables (kpt_cli.h), offsets into struct
 * kpt_diff_cli: the decision rule's (every command that diffs), and the
 * reports' (--junit, --markdown, --json, --plots, --suite-name, --all, -q). */
extern const struct kpt_opt kpt_diff_rule_opts[], kpt_diff_report_opts[];

/* Diffs new_ against the baseline of bases[0..nbase) (each a recording, i.e.
 * a session, or a folder of them), prints the table (stdout), writes the reports
 * and returns the exit status: 0 ok, 1 SLOW, 2 error (a --json file then
 * holds {"result": "error"}). */
/* The rule's options that contradict each other: a usage error (exit 2)
 * naming them, else 0. kpt_diff_cli_run/_run_side call it. */
int kpt_diff_cli_check(const char *cmd, const struct kpt_diff_cli *dc);
int kpt_diff_cli_run(const char *cmd, const char *const *bases, size_t nbase, const char *new_,
		     struct kpt_diff_cli *dc);
/* The same against a baseline side already built (gate --db: from the
 * history store). */
int kpt_diff_cli_run_side(const struct kpt_diff_side *base, const char *new_, struct kpt_diff_cli *dc);
/* Checks, prints and writes the reports of df (owned from here: destroyed)
 * as kpt_diff_cli_run does; the exit status. */
int kpt_diff_cli_report(struct kpt_diff *df, struct kpt_diff_cli *dc);
/* Prints err (kpt_cli_fail), also writes {"result": "error"} to the --json
 * file when one was asked for, and returns KPT_EXIT_ERROR. */
int kpt_diff_cli_fail(struct kpt_diff_cli *dc, const struct kpt_diag *err);
void kpt_diff_cli_release(struct kpt_diff_cli *dc);

#endif
