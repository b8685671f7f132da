/* main.c - kptprof: the command table and dispatch. */
#include <stdio.h>
#include <string.h>

#include "kpt_cli.h"
#include "kpt_progress.h"

/* Keep in the order `kptprof help` should list them. */
const struct kpt_cmd kpt_cmds[] = {
	{ .name = "record", .fn = cmd_record, .summary = "run a workload or program under the collector and write a .kpt file",
	  .usage = "kptprof record [-o FILE] [--runs M] [--iterations N] [--warmup W] [--counters[=SET]] [--cold]\n"
	  "               [--api] [--kinds LIST] [--capture-range cudaProfilerApi|nvtx:NAME[@DOMAIN]]\n"
	  "               [--steps A-B | --every K] [--delay S] [--duration S]\n"
	  "               [--sample-every S] [--sample-steps N] [--on-demand]\n"
	  "               (--suite NAME | --workload NAME... | -- CMD [ARGS...])\n"
	  "       kptprof record [-o FILE] [--runs M] [--project FILE] [--workload NAME...]",
	  .opts = kpt_record_opts, .help_tail = kpt_record_help_tail },
	{ .name = "import", .fn = cmd_import, .summary = "convert a torch.profiler trace or an Nsight Systems export to a .kpt file",
	  .usage = "kptprof import TRACE... -o FILE", .opts = kpt_import_opts },
	{ .name = "report", .fn = cmd_report, .summary = "summarise a recording per kernel, NVTX range or rank",
	  .usage = "kptprof report FILE [--top N] [--by kernel|range|rank] [--step NAME] [--ranges RULE]\n"
	  "                   [--format text|md|csv|json]", .opts = kpt_report_opts },
	{ .name = "diff", .fn = cmd_diff, .summary = "compare a recording against a baseline and give verdicts",
	  .usage = "kptprof diff BASE... NEW [--threshold PCT] [--short-threshold PCT] [--long-threshold PCT] [--alpha A] [--junit F] [--markdown F]\n"
	  "                      [--json F] [--plots DIR] [--force] [--all] [--quiet] [--welch] [--keep-throttled]\n"
	  "                      [--suite-name S] [--base-runs LIST] [--new-runs LIST] [--method rule|pooled-u]",
	  .opts = kpt_diff_opts },
	{ .name = "gate", .fn = cmd_gate, .summary = "record a suite or a project's workloads and diff them against this GPU's "
							     "baseline",
	  .usage = "kptprof gate [--suite NAME | --project FILE] [--baselines DIR | --db URL [--baseline-sessions N] [--branch B]]\n"
	  "             [--runs M] [-o FILE | --from FILE | --against BUILD|REF] [diff options]", .opts = kpt_gate_opts },
	{ .name = "ab", .fn = cmd_ab, .summary = "run two commands interleaved on this machine and give paired verdicts",
	  .usage = "kptprof ab [--runs M] [-o DIR] [diff options] -- CMD_A [ARGS...] ::: CMD_B [ARGS...]\n"
	  "        (diff options as in 'kptprof diff', but --threshold 1, --long-threshold 0.5 and --paired implied)",
	  .opts = kpt_ab_opts },
	{ .name = "baseline", .fn = cmd_baseline, .summary = "list, show, update or locate baselines per GPU model",
	  .usage = "kptprof baseline list|show|update|path [--baselines DIR] [--suite S] [--gpu NAME | --from FILE] [--keep N] [FILE]",
	  .opts = kpt_baseline_opts },
	{ .name = "export", .fn = cmd_export, .summary = "convert a recording to Chrome trace, CSV or JSON",
	  .usage = "kptprof export FILE --format chrome|csv|json -o OUT", .opts = kpt_export_opts },
	{ .name = "view", .fn = cmd_view, .summary = "write an HTML report with plots and a timeline",
	  .usage = "kptprof view FILE [--baseline B] [--db URL [--baseline-sessions N] [--branch B]] -o DIR [--width PX] [--top N]\n"
	  "                  [--trace-max N] [--no-gnuplot] [diff rule options]", .opts = kpt_view_opts },
	{ .name = "compare", .fn = cmd_compare, .summary = "one suite across GPU models, side by side",
	  .usage = "kptprof compare FILE... [--format text|md|json] [--plots DIR]", .opts = kpt_compare_opts },
	{ .name = "history", .fn = cmd_history, .summary = "keep every run in a store; trends, plots and change points",
	  .usage = "kptprof history add FILE [--commit SHA] [--branch B] [--suite S] [--label K=V]... [--db URL]\n"
	  "kptprof history ls [--suite S] [--gpu SLUG] [--branch B] [--last N] [--format text|json] [--db URL]\n"
	  "kptprof history show (KEY | --workload W) [--suite S] [--gpu SLUG] [--branch B] [--last N] [--format text|json]\n"
	  "kptprof history plot (KEY | --workload W) [-o DIR] [--suite S] [--gpu SLUG] [--branch B] [--last N]\n"
	  "kptprof history detect [--threshold PCT] [--head N] [--min-step PCT] [--alpha A] [--min-seg N] [--min-machines N] [--format text|json]",
	  .opts = kpt_history_opts },
	{ .name = "workloads", .fn = cmd_workloads, .summary = "list the built-in workloads and suites",
	  .usage = "kptprof workloads [--suite NAME] [--json]", .opts = kpt_workloads_opts },
	{ .name = "trigger", .fn = cmd_trigger, .summary = "capture the next steps of a program recorded on demand",
	  .usage = "kptprof trigger [PID] [--steps N] [--wait S]\n       kptprof trigger --list", .opts = kpt_trigger_opts },
	{ .name = "devices", .fn = cmd_devices, .summary = "list the GPUs this machine has",
	  .usage = "kptprof devices [--json]", .opts = kpt_devices_opts },
	{ .name = "version", .fn = cmd_version, .summary = "print the version of kptprof and of its file format",
	  .usage = "kptprof version", .opts = kpt_version_opts },
	{ .name = "help", .fn = cmd_help, .summary = "show help for kptprof or one command; its man page; shell completion",
	  .usage = "kptprof help [CMD]\nkptprof help --man [CMD]\nkptprof help --markdown CMD\nkptprof help --completion bash|zsh", .opts = kpt_help_opts },
};
const int kpt_ncmds = (int)(sizeof kpt_cmds / sizeof kpt_cmds[0]);

const struct kpt_cmd *kpt_cmd_find(const char *name)
{
	for (int i = 0; i < kpt_ncmds; i++)
		if (strcmp(kpt_cmds[i].name, name) == 0)
			return &kpt_cmds[i];
	return NULL;
}

int main(int argc, char **argv)
{
	const struct kpt_cmd *cmd;
	int rc;

	if (argc < 2) {
		kpt_cli_help_list();
		return KPT_EXIT_ERROR;
	}
	if (kpt_cli_is_help(argv[1])) {
		kpt_cli_help_list();
		return kpt_cli_stdout_done(KPT_EXIT_OK);
	}
	if (strcmp(argv[1], "--version") == 0)
		return kpt_cli_stdout_done(cmd_version(1, argv + 1));
	cmd = kpt_cmd_find(argv[1]);
	if (!cmd)
		return kpt_cli_unknown_command(argv[1]);
	if (kpt_cli_watch_outputs(cmd->name) != 0 || kpt_cli_progress_start(cmd->name) != 0)
		return KPT_EXIT_ERROR;
	rc = cmd->fn(argc - 1, argv + 1);
	kpt_progress_stop();
	return kpt_cli_stdout_done(rc);
}
