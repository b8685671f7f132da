/* kpt_cli.h - what the subcommands of kptprof share.
 *
 * cli/ is the only place that prints to the user or chooses an exit status.
 * Each subcommand lives in cli/cmd_<name>.c as
 *     int cmd_<name>(int argc, char **argv);
 * where argv[0] is the subcommand's name, and returns the process exit status.
 */
#ifndef KPT_CLI_H
#define KPT_CLI_H

#include "kpt_err.h"

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
	const char *usage;       /* synopsis lines for `kptprof help CMD` and --help */
};

/* The command table (cli/main.c) and lookup by exact name; NULL if none. */
extern const struct kpt_cmd kpt_cmds[];
extern const int kpt_ncmds;
const struct kpt_cmd *kpt_cmd_find(const char *name);

/* Prints "kptprof: <msg>" and, when present, "hint: <hint>" to stderr and
 * returns KPT_EXIT_ERROR. */
int kpt_cli_fail(const struct kpt_diag *d);
/* printf-style variant for option errors: "kptprof CMD: <msg>"; returns 2. */
int kpt_cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Prints the usage of cmd to stdout (for --help) and returns 0. */
int kpt_cli_help(const char *cmd);
/* True when fd is a terminal and NO_COLOR is unset or empty. */
int kpt_cli_color(int fd);

/* Subcommands. Unfinished ones point at cmd_not_implemented in the table. */
int cmd_not_implemented(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

#endif
