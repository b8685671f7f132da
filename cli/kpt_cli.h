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

/* Version of the layout of the JSON that cli/ writes itself (compare,
 * devices; schemas in docs/schema/): minor grows with added fields, major
 * when a field changes or goes. */
#define KPT_CLI_JSON_VERSION "1.0"

enum kpt_exit {
	KPT_EXIT_OK = 0,
	KPT_EXIT_REGRESSION = 1, /* diff/gate: at least one SLOW key */
	KPT_EXIT_ERROR = 2,      /* bad input, bad options, unusable data */
	KPT_EXIT_SKIP = 77,      /* nothing to do here: no GPU */
};

/* ---- option tables --------------------------------------------------------------------
 * Each command declares its options once, as an array of struct kpt_opt
 * ending in KPT_OPT_END, with designated initializers (the macros below), and
 * names it in the command table; kpt_opt_parse() parses argv against it and
 * --help, `kptprof help --man CMD` and `--completion bash|zsh` are printed
 * from it (cli/cli_opt.c), so none of them can drift from what is parsed.
 * Offsets are into the command's own args struct. */
enum kpt_opt_kind {
	KPT_OPTK_END = 0,
	KPT_OPTK_FLAG,          /* int at off, set to 1 */
	KPT_OPTK_STRING,        /* const char * at off (points into argv) */
	KPT_OPTK_U64,           /* uint64_t at off: a decimal integer in [lo, hi] */
	KPT_OPTK_DOUBLE,        /* double at off, in [lo, hi] */
	KPT_OPTK_CHOICE,        /* int at off: the index of the value in choices[] */
	KPT_OPTK_CALL,          /* call() checks and stores the value */
	KPT_OPTK_TABLE,         /* every option of sub, their args struct at off */
	KPT_OPTK_OPERAND,       /* documents an operand (FILE); operands are returned in argv */
	KPT_OPTK_VERB,          /* a verb of a command of verbs: name "VERB [OPERANDS]", .verbs its bit;
				 * documented like an operand, looked up by kpt_opt_verb, completed */
};

#define KPT_OPTF_OPTVAL   1u    /* value only as --name=V; bare --name gives the value NULL */
#define KPT_OPTF_NONEMPTY 2u    /* STRING: '' is an error */
#define KPT_OPTF_HIDDEN   4u    /* parsed, left out of help, man and completion */

struct kpt_opt {
	enum kpt_opt_kind kind;
	char short_name;            /* 'o' for -o; 0: none */
	const char *name;           /* long name without "--" (NULL: short only); OPERAND: "FILE" */
	const char *arg;            /* name of the value in help ("N", "text|md"); NULL: a flag */
	const char *help;           /* one line: what it does and "(default D)" */
	size_t off;
	double lo, hi;              /* U64, DOUBLE: the accepted range */
	const char *const *choices; /* CHOICE: NULL-terminated */
	/* CALL: value (NULL for a bare KPT_OPTF_OPTVAL option) for the option
	 * named opt; field = args + off, args = the whole args struct. Returns 0,
	 * or KPT_EXIT_ERROR after printing a usage error. */
	int (*call)(const char *cmd, const char *opt, const char *value, void *field, void *args);
	const struct kpt_opt *sub;  /* TABLE */
	unsigned flags;             /* KPT_OPTF_* */
	/* Commands of verbs (baseline, history; kpt_opt_parse_verb): bit i
	 * set when verb i takes the option; 0: every verb. */
	unsigned verbs;
};

/* Each macro takes more designated initializers after its help, as
 * ".verbs = 1u << V_ADD". */
#define KPT_OPT_FLAG(s, l, st, f, h, ...) \
	{ .kind = KPT_OPTK_FLAG, .short_name = (s), .name = (l), .off = offsetof(st, f), .help = (h), __VA_ARGS__ }
#define KPT_OPT_STRING(s, l, a, st, f, h, ...) \
	{ .kind = KPT_OPTK_STRING, .short_name = (s), .name = (l), .arg = (a), .off = offsetof(st, f), \
	  .help = (h), .flags = KPT_OPTF_NONEMPTY, __VA_ARGS__ }
#define KPT_OPT_U64(s, l, a, st, f, min, max, h, ...) \
	{ .kind = KPT_OPTK_U64, .short_name = (s), .name = (l), .arg = (a), .off = offsetof(st, f), \
	  .lo = (min), .hi = (max), .help = (h), __VA_ARGS__ }
#define KPT_OPT_DOUBLE(s, l, a, st, f, min, max, h, ...) \
	{ .kind = KPT_OPTK_DOUBLE, .short_name = (s), .name = (l), .arg = (a), .off = offsetof(st, f), \
	  .lo = (min), .hi = (max), .help = (h), __VA_ARGS__ }
#define KPT_OPT_CHOICE(s, l, a, st, f, names, h, ...) \
	{ .kind = KPT_OPTK_CHOICE, .short_name = (s), .name = (l), .arg = (a), .off = offsetof(st, f), \
	  .choices = (names), .help = (h), __VA_ARGS__ }
#define KPT_OPT_CALL(s, l, a, st, f, fn, h, ...) \
	{ .kind = KPT_OPTK_CALL, .short_name = (s), .name = (l), .arg = (a), .off = offsetof(st, f), \
	  .call = (fn), .help = (h), __VA_ARGS__ }
#define KPT_OPT_TABLE(st, f, table) { .kind = KPT_OPTK_TABLE, .off = offsetof(st, f), .sub = (table) }
/* a table whose offsets are into the same args struct */
#define KPT_OPT_INCLUDE(table) { .kind = KPT_OPTK_TABLE, .off = 0, .sub = (table) }
#define KPT_OPT_OPERAND(n, h, ...) { .kind = KPT_OPTK_OPERAND, .name = (n), .help = (h), __VA_ARGS__ }
/* verb v (its index in the command's enum of verbs) as "NAME [OPERANDS]" */
#define KPT_OPT_VERB(v, n, h) { .kind = KPT_OPTK_VERB, .name = (n), .help = (h), .verbs = 1u << (v) }
#define KPT_OPT_END { .kind = KPT_OPTK_END }

/* kpt_opt_parse's "go on": any other return is the exit status to end with. */
#define KPT_OPT_GO (-1)

/* Parses argv[1..argc) of command cmd against opts into args: options as
 * "--name V", "--name=V", "-o V", flags as "--name"; -h/--help prints the
 * help (returns 0). Operands (words not starting with '-', and "-") keep their
 * order and are moved to argv[1..*nargs]. "--" ends the options: with rest
 * NULL the words after it are operands; else parsing stops there and *rest
 * is the index after "--" (argc when absent). Returns KPT_OPT_GO, 0 after
 * help, or KPT_EXIT_ERROR after printing one line (an unknown option gets
 * "did you mean"). */
int kpt_opt_parse(const char *cmd, const struct kpt_opt *opts, void *args, int argc, char **argv,
		  int *nargs, int *rest);
/* kpt_opt_parse for a command of verbs (baseline, history): argv[0] is
 * the verb, of index `index` among the command's verbs; an option whose
 * .verbs lacks that bit is refused as "'CMD VERB' takes no --opt". */
int kpt_opt_parse_verb(const char *cmd, const char *verb, int index, const struct kpt_opt *opts, void *args,
		       int argc, char **argv, int *nargs);
/* The verb word of a command of verbs among the KPT_OPT_VERB rows of opts
 * ("ls" and "list" are one verb): its index in *index and 0, or
 * KPT_EXIT_ERROR after printing "unknown verb" with "did you mean". */
int kpt_opt_verb(const char *cmd, const struct kpt_opt *opts, const char *word, int *index);
/* kpt_opt_parse for a command of one operand, FILE (a recording): *path
 * is it; none or more than one is a usage error. */
int kpt_opt_parse_file(const char *cmd, const struct kpt_opt *opts, void *args, int argc, char **argv,
		       const char **path);
/* One step of kpt_opt_parse, for commands that still walk argv themselves:
 * when argv[*i] is an option of opts, stores it (advancing *i past a
 * separate value) and returns 1; returns 0 when it is not one of them, and
 * KPT_EXIT_ERROR after printing a bad or missing value. */
int kpt_opt_one(const char *cmd, const struct kpt_opt *opts, void *args, int argc, char **argv, int *i);

struct kpt_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;     /* one line for `kptprof help` */
	const char *usage;       /* synopsis lines for `kptprof help CMD`, --help and the man page */
	const struct kpt_opt *opts; /* the option table (required) */
	void (*help_tail)(void); /* prints more after the options in --help; NULL none */
};

/* The command table (cli/main.c) and lookup by exact name; NULL if none. */
extern const struct kpt_cmd kpt_cmds[];
extern const int kpt_ncmds;
const struct kpt_cmd *kpt_cmd_find(const char *name);
/* "unknown command 'X'" with "did you mean" when one is close; returns 2. */
int kpt_cli_unknown_command(const char *name);
/* The closest of names[0..n) to word (edit distance <= 2, or word a prefix
 * of 3+ letters), NULL when none is close. */
const char *kpt_cli_nearest(const char *word, const char *const *names, size_t n);
/* `kptprof help` without CMD: the list of commands, on stdout. */
void kpt_cli_help_list(void);

/* Prints "kptprof: <msg>" and, when present, "hint: <hint>" to stderr,
 * each one line cleaned for the terminal, and returns KPT_EXIT_ERROR, or
 * KPT_EXIT_SKIP (77) when d says there is no GPU or no driver
 * (KPT_E_NODEV): every GPU command exits 77 without a GPU. */
int kpt_cli_fail(const struct kpt_diag *d);
/* The same as "kptprof CMD: <msg>" (cmd NULL: as kpt_cli_fail). */
int kpt_cli_fail_in(const char *cmd, const struct kpt_diag *d);
/* printf-style variant for option errors: "kptprof CMD: <msg>"; returns 2. */
int kpt_cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The GPU slug of the first device of the recording at path into slug,
 * and its meta "suite" ("" none) into suite: what picks its baseline.
 * Errors: reading the file; no GPU named (KPT_E_FORMAT). */
struct kpt_diag;
/* The idle gap the recording at path was made with (kpt_file_settle_us:
 * 0 none, -1 not a number), or -2 when it cannot be read; prints nothing
 * (a session file may vanish under a concurrent baseline update). */
long kpt_cli_file_settle(const char *path);
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
/* Large outputs say so: from here on, every output of command cmd (its
 * standard output and every file made through lib/kpt_outfile.h) prints
 * "kptprof CMD: note: 'OUT' passes 1.00 GiB and keeps growing" on stderr,
 * once per output, before the write that takes it past 1 GiB
 * ($KPTPROF_TEST_NOTICE_BYTES, a byte count, for tests). stdout becomes
 * a kpt_out_watch stream over descriptor 1 (line buffered on a terminal,
 * as before). Called once, by main, before the command runs. */
#define KPT_CLI_NOTICE_BYTES (UINT64_C(1) << 30)
int kpt_cli_watch_outputs(const char *cmd); /* 0, or KPT_EXIT_ERROR: a bad $KPTPROF_TEST_NOTICE_BYTES (said) */
/* True when out names the file in (same device and inode, whatever the
 * path or link): writing there would replace an input. "-" is stdout. */
int kpt_cli_same_file(const char *in, const char *out);
/* The outputs of cmd, checked before it prints or runs anything: registers
 * its inputs (files, folders of sessions, a store's file: kpt_out_input)
 * and refuses an output that is one of them, a symbolic link, a block
 * device or a folder, or whose folder is missing (kpt_out_check,
 * lib/kpt_outfile.h). NULL entries are skipped. 0, or KPT_EXIT_ERROR
 * after one line (and a hint) on stderr. Every later open of an output
 * checks the inputs again. */
int kpt_cli_outputs(const char *cmd, const char *const *in, size_t nin, const char *const *out, size_t nout);
/* The same for a folder of outputs (--plots DIR; kpt_out_check_dir): dir
 * NULL or writable into: 0; else KPT_EXIT_ERROR after one line on stderr. */
int kpt_cli_output_dir(const char *cmd, const char *dir);
/* Prints the usage of cmd to stdout (for --help) and returns 0. */
int kpt_cli_help(const char *cmd);
/* s (a name or value from a recording or store) cleaned for a terminal
 * line with KPT_TEXT_TERM of lib/kpt_text.h: s itself when clean, else a
 * copy that lives until the process exits; NULL gives "". */
const char *kpt_cli_term(const char *s);
/* A commit as kptprof prints it: its first 12 characters, "-" when unknown
 * (NULL or ""), in buf, which it returns. */
const char *kpt_cli_short_commit(const char *commit, char buf[13]);
/* The same for another sink without quotes or fences (KPT_TEXT_MD,
 * KPT_TEXT_MARKUP). */
const char *kpt_cli_clean(enum kpt_text_sink sink, const char *s);
/* True when fd is a terminal and NO_COLOR is unset or empty. */
int kpt_cli_color(int fd);

/* arg is "--help" or "-h". */
int kpt_cli_is_help(const char *arg);
/* Value checks that print "kptprof CMD: bad value 'V' for --opt: ..." and
 * return KPT_EXIT_ERROR, or store the result and return 0.
 * kpt_cli_parse_u64: a decimal integer in [min, max].
 * kpt_cli_parse_choice: one of names[0..n) (a table); *index is its index. */
int kpt_cli_parse_u64(const char *cmd, const char *opt, const char *value,
		      uint64_t min, uint64_t max, uint64_t *out);
int kpt_cli_parse_choice(const char *cmd, const char *opt, const char *value,
			 const char *const *names, int n, int *index);

/* Durations and sizes in tables: kpt_fmt_duration and kpt_fmt_bytes of
 * lib/kpt_units.h ("12.34 us", "8.0 MiB"). */
const char *kpt_cli_fmt_ns(double ns, char *buf, size_t cap);
const char *kpt_cli_fmt_bytes(double bytes, char *buf, size_t cap);
/* Terminal width of fd: TIOCGWINSZ, else $COLUMNS, else 80; 0 when fd
 * is not a terminal. */
int kpt_cli_term_width(int fd);
/* The width the tables on stdout are fitted to (kernel names shortened,
 * columns left out): 0 (whole names, every column) with --wide or when
 * stdout is not a terminal (a pipe, a CI log: rows stay whole for grep);
 * --width N or $KPTPROF_COLUMNS when given (also piped); else the
 * terminal's (kpt_cli_term_width). kpt_wide_opts holds --wide (and the
 * hidden --width): KPT_OPT_INCLUDE it in the table of every command that
 * prints a table. */
extern const struct kpt_opt kpt_wide_opts[];
int kpt_cli_table_width(void);
/* The two rows of kpt_wide_opts, for a command of verbs (".verbs = ..."). */
int kpt_cli_opt_wide(const char *cmd, const char *opt, const char *value, void *field, void *args);
int kpt_cli_opt_width(const char *cmd, const char *opt, const char *value, void *field, void *args);
#define KPT_OPT_WIDE(...) \
	{ .kind = KPT_OPTK_CALL, .name = "wide", .call = kpt_cli_opt_wide, .flags = KPT_OPTF_OPTVAL, \
	  .help = "whole names and every column, however wide (default on a terminal: fit its width)", __VA_ARGS__ }
#define KPT_OPT_WIDTH(...) \
	{ .kind = KPT_OPTK_CALL, .name = "width", .arg = "N", .call = kpt_cli_opt_width, .flags = KPT_OPTF_HIDDEN, \
	  .help = "fit tables to N columns, on a terminal or not (tests; also $KPTPROF_COLUMNS)", __VA_ARGS__ }
/* The same width for --help (80 when stdout is not a terminal). */
int kpt_cli_help_width(void);
/* Turns on the progress line (lib/kpt_progress.h) for `kptprof cmd` on
 * stderr, unless $KPTPROF_NO_PROGRESS is set (not empty, not 0). Test
 * only: $KPTPROF_PROGRESS_TEST_AFTER_MS replaces the 2 s of quiet. main()
 * calls it before every command and kpt_progress_stop() after; a command's
 * --quiet calls kpt_progress_stop(). */
int kpt_cli_progress_start(const char *cmd); /* 0, or KPT_EXIT_ERROR: a bad test variable (said) */

/* The option tables of the commands that have one (cmd_<name>.c). */
extern const struct kpt_opt kpt_help_opts[], kpt_version_opts[], kpt_report_opts[], kpt_export_opts[],
	kpt_compare_opts[], kpt_devices_opts[], kpt_trigger_opts[], kpt_workloads_opts[], kpt_view_opts[],
	kpt_diff_opts[], kpt_ab_opts[], kpt_gate_opts[], kpt_import_opts[],
	kpt_baseline_opts[], kpt_history_opts[], kpt_record_opts[];
void kpt_record_help_tail(void);

/* ---- recording (cmd_record.c over collectors/kpt_record.h) ----
 * kpt_cli_record_defaults: o as `record` starts it: one run, the runner
 * beside kptprof, the test switches KPTPROF_SKIP_GPU_CHECK and
 * KPTPROF_NO_CALIBRATE. kpt_cli_record: records o->out and prints what
 * `record` prints (notes, the summary); returns the target's exit status,
 * or the exit status of the error (77: no GPU). For record, gate and ab. */
struct kpt_record_opts;
void kpt_cli_record_defaults(struct kpt_record_opts *o);
int kpt_cli_record(const struct kpt_record_opts *o);
/* kpt_cli_record_project: as kpt_cli_record for the workloads names of
 * project p (all when nnames is 0; kpt_record_project). kpt_cli_record_how:
 * the command that records suite, for hints: "kptprof record --project
 * FILE" when suite is the project of project_file (NULL: the kptprof.json
 * that applies in the current folder), else "kptprof record --suite S";
 * into buf, returned. */
struct kpt_project;
int kpt_cli_record_project(const struct kpt_project *p, const char *const *names, size_t nnames,
			   const struct kpt_record_opts *o);
const char *kpt_cli_record_how(const char *suite, const char *project_file, char *buf, size_t cap);

/* ---- environment and installed files ----
 * kpt_cli_getenv: $name when set and not empty, else $old (NULL: none) with
 * a one-line notice on stderr that the old name is read; NULL when neither.
 * kpt_cli_find_collector / kpt_cli_find_runner: libkptinject.so and
 * kpt-workloads: $KPTPROF_INJECT / $KPTPROF_WORKLOADS ($KPT_WORKLOADS), else
 * beside kptprof in the build tree, else <prefix>/lib/kptprof/ of an
 * installed kptprof (<prefix>/bin). 0 and the real path in out, or -1.
 * kpt_cli_baselines_dir: the default of --baselines: $KPTPROF_BASELINES
 * ($KPT_BASELINES), else ./baselines when it exists, else the installed
 * <prefix>/share/kptprof/baselines when it exists, else "baselines".
 * Static storage; valid until the next call. */
const char *kpt_cli_getenv(const char *name, const char *old);
/* `ls` and `list` are one verb everywhere: canonical (the command's own
 * spelling) when verb is either, else verb. */
const char *kpt_cli_list_verb(const char *verb, const char *canonical);
int kpt_cli_find_collector(char *out, size_t cap);
int kpt_cli_find_runner(char *out, size_t cap);
const char *kpt_cli_baselines_dir(void);
/* The project file that applies (lib/kpt_project.h): given (--project
 * FILE), else kptprof.json in the working folder or one above it. 0 with
 * *out NULL when none applies; a file that does not load is an error. */
struct kpt_project;
int kpt_cli_project(const char *given, struct kpt_project **out, struct kpt_diag *d);

/* Subcommands. */
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_devices(int argc, char **argv);
int cmd_trigger(int argc, char **argv);
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
