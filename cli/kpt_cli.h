/* kpt_cli.h - what the subcommands of kptprof share.
 *
 * cli/ is the only place that prints to the user or chooses an exit status.
 * Each subcommand lives in cli/cmd_<name>.c as
 *     int cmd_<name>(int argc, char **argv);
 * where argv[0] is the subcommand's name, and returns the process exit status.
 */
#ifndef KPT_CLI_H
#define KPT_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"
#include "kpt_text.h"

enum kpt_exit {
	KPT_EXIT_OK = 0,
	KPT_EXIT_REGRESSION = 1, /* diff/gate: at least one SLOW key */
	KPT_EXIT_ERROR = 2,      /* bad input, bad options, unusable data */
	KPT_EXIT_SKIP = 77,      /* nothing to do here: no GPU */
};

struct kpt_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;     /* one line for `kptprof help` */
	/* Synopsis lines for `kptprof help CMD` and --help; after a blank line,
	 * optionally one line per option: "  --opt V   meaning (default D)". */
	const char *usage;
};

/* The command table (cli/main.c) and lookup by exact name; NULL if none. */
extern const struct kpt_cmd kpt_cmds[];
extern const int kpt_ncmds;
const struct kpt_cmd *kpt_cmd_find(const char *name);

/* Prints "kptprof: <msg>" and, when present, "hint: <hint>" to stderr,
 * each one line cleaned for the terminal, and returns KPT_EXIT_ERROR. */
int kpt_cli_fail(const struct kpt_diag *d);
/* printf-style variant for option errors: "kptprof CMD: <msg>"; returns 2. */
int kpt_cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The GPU slug of the first device of the recording at path into slug,
 * and its meta "suite" ("" none) into suite: what picks its baseline.
 * Errors: reading the file; no GPU named (KPT_E_FORMAT). */
struct kpt_diag;
int kpt_cli_file_series(const char *path, char *slug, size_t cs, char *suite, size_t cu, struct kpt_diag *d);
/* Path components taken from a recording or an option (a GPU slug, a
 * suite): 1 to KPT_CLI_COMPONENT_MAX bytes of [a-z0-9._-], not starting
 * with '.' and holding no "..", so DIR/<slug>/<suite> never leaves DIR.
 * Returns 0, or KPT_E_INVAL with a diag naming what ("GPU slug"), where it
 * came from (src, a file or an option) and the value, its odd bytes shown as '?'. */
#define KPT_CLI_COMPONENT_MAX 128
int kpt_cli_check_component(const char *what, const char *value, const char *src, struct kpt_diag *d);
/* The end of a command whose data went to stdout: flushes it and returns
 * rc, or prints "cannot write to standard output" and returns
 * KPT_EXIT_ERROR when any write failed (a full disk, /dev/full, a closed
 * pipe), so no command exits 0 with its output lost. */
int kpt_cli_stdout_done(int rc);
/* True when out names the file in (same device and inode, whatever the
 * path or link): writing there would replace an input. "-" is stdout. */
int kpt_cli_same_file(const char *in, const char *out);
/* Prints the usage of cmd to stdout (for --help) and returns 0. */
int kpt_cli_help(const char *cmd);
/* s (a name or value from a recording or store) cleaned for a terminal
 * line with KPT_TEXT_TERM of lib/kpt_text.h: s itself when clean, else a
 * copy that lives until the process exits; NULL gives "". */
const char *kpt_cli_term(const char *s);
/* The same for another sink without quotes or fences (KPT_TEXT_MD,
 * KPT_TEXT_MARKUP). */
const char *kpt_cli_clean(enum kpt_text_sink sink, const char *s);
/* True when fd is a terminal and NO_COLOR is unset or empty. */
int kpt_cli_color(int fd);

/* Option scanning, for the loop over argv[1..] of a subcommand.
 * kpt_cli_is_help: arg is "--help" or "-h".
 * kpt_cli_opt: when argv[*i] is "--name VALUE" or "--name=VALUE", sets
 * *value (advancing *i past a separate VALUE) and returns 1; returns 0 when
 * argv[*i] is another argument; prints "option '--name' needs a value" and
 * returns -1 when VALUE is missing (the caller returns KPT_EXIT_ERROR). */
int kpt_cli_is_help(const char *arg);
int kpt_cli_opt(int argc, char **argv, int *i, const char *name, const char **value);
/* kpt_cli_opt over a table: names[j] sets *dst[j]. Returns 1 when argv[*i]
 * was one of them, 0 when none, -1 after printing a missing value. */
int kpt_cli_opt_table(int argc, char **argv, int *i, const char *const *names, const char **const *dst,
		      size_t n);
/* Value checks that print "kptprof CMD: bad value 'V' for --opt: ..." and
 * return KPT_EXIT_ERROR, or store the result and return 0.
 * kpt_cli_parse_u64: a decimal integer in [min, max].
 * kpt_cli_parse_choice: one of names[0..n) (a table); *index is its index. */
int kpt_cli_parse_u64(const char *cmd, const char *opt, const char *value,
		      uint64_t min, uint64_t max, uint64_t *out);
int kpt_cli_parse_choice(const char *cmd, const char *opt, const char *value,
			 const char *const *names, int n, int *index);

/* Human units, like "812 ns", "12.35 us", "1.234 ms", "2.500 s": 3 or 4
 * significant digits. Writes into buf (cap >= 16 is always enough) and
 * returns buf. */
const char *kpt_cli_fmt_ns(double ns, char *buf, size_t cap);
/* "512 B", "1.50 KiB", "80.0 GiB". */
const char *kpt_cli_fmt_bytes(double bytes, char *buf, size_t cap);
/* Terminal width of fd: TIOCGWINSZ, else $COLUMNS, else 0 (not a terminal
 * or unknown: callers print full width). */
int kpt_cli_term_width(int fd);

/* Subcommands. Unfinished ones point at cmd_not_implemented in the table. */
int cmd_not_implemented(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_ab(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_workloads(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_import(int argc, char **argv);

#endif
