/* kpt_diff_report.h - writing a struct kpt_diff as text, Markdown, JUnit, JSON.
 *
 * Each writer streams to a FILE* it does not own and returns 0 or KPT_E_IO
 * (errno text in d). They never print elsewhere and never exit. Every
 * kernel name, range, path and meta value is cleaned for the target
 * format through lib/kpt_text.h (terminal escapes; XML entities; Markdown
 * code spans and backslash escapes); JSON via lib/kpt_json.h.
 */
#ifndef KPT_DIFF_REPORT_H
#define KPT_DIFF_REPORT_H

#include <stdio.h>

#include "kpt_diff.h"

/* Version of the JSON report's layout (docs/schema/diff.schema.json): the
 * minor grows with added fields, the major when a field changes or goes. */
#define KPT_DIFF_JSON_VERSION "1.0"

struct kpt_report_opts {
	int color;                  /* ANSI colours (caller decides: terminal, NO_COLOR) */
	int width;                  /* text: terminal columns; 0: not a terminal, names never cut */
	int all;                    /* text: list SAME rows too (default: only the count) */
	const char *suite;          /* JUnit classname suffix; NULL: env suite or "diff" */
};

/* Terminal table: Kernel, Range, config, base, new, change %, interval,
 * noise, verdict; then totals per workload, environment notes and a summary
 * line. Names are whole unless o->width > 0; then Range takes its width
 * first, Kernel the rest, and a cut never makes two rows look the same. */
int kpt_diff_write_text(const struct kpt_diff *df, FILE *out,
			const struct kpt_report_opts *o, struct kpt_diag *d);
/* GitHub-flavoured Markdown for a pull-request comment or
 * $GITHUB_STEP_SUMMARY: headline, counts per verdict, SLOW table, the rest
 * under <details>. */
int kpt_diff_write_markdown(const struct kpt_diff *df, FILE *out,
			    const struct kpt_report_opts *o, struct kpt_diag *d);
/* JUnit XML: one <testsuite>, one <testcase> per key with classname
 * "<gpu-slug>/<suite>"; a <failure> for SLOW with the numbers; NEW/GONE/AMBG
 * are passing testcases with a <system-out> line. */
int kpt_diff_write_junit(const struct kpt_diff *df, FILE *out,
			 const struct kpt_report_opts *o, struct kpt_diag *d);
/* JSON: {"result": "regression"|"ok", "base": {...}, "new": {...},
 * "counts": {...}, "keys": [{"name", "verdict", "change_pct", "ci_low_pct",
 * "ci_high_pct", ...}], "totals": [...], "notes": [...]}. */
int kpt_diff_write_json(const struct kpt_diff *df, FILE *out,
			const struct kpt_report_opts *o, struct kpt_diag *d);
/* The JSON written when a diff could not be made: {"result": "error",
 * "error": msg, "hint": hint}. */
int kpt_diff_write_json_error(const struct kpt_diag *err, FILE *out, struct kpt_diag *d);

#endif
