/* cmd_ab.h - what `kptprof ab` shares with `kptprof gate --against`: the
 * notes of kpt_ab_run, the paired diff of DIR/b.kpt against DIR/a.kpt and
 * the removal of a temporary A/B folder. */
#ifndef KPT_CMD_AB_H
#define KPT_CMD_AB_H

#include "cmd_diff.h"
#include "kpt_ab.h"

/* One line each on stderr: "kptprof CMD: TEXT", warnings marked, hints as "hint: ". */
void kpt_ab_cli_notes(const char *cmd, const struct kpt_ab_notes *n);

/* B against A with the paired rule (--paired implied, --threshold 1
 * unless given): diff's table, reports and exit status. */
int kpt_ab_cli_diff(const char *cmd, const char *dir, struct kpt_diff_cli *dc);

/* Removes what kpt_ab_run (and gate's build log) leave in dir, then dir. */
void kpt_ab_cli_remove(const char *dir, long pairs);

#endif
