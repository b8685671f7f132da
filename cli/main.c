/* main.c - kptprof: the command table and dispatch. */
#include <stdio.h>
#include <string.h>

#include "kpt_cli.h"

/* Keep in the order `kptprof help` should list them. */
const struct kpt_cmd kpt_cmds[] = {
	{ "record", cmd_record, "run a workload or program under the collector and write a .kpt file",
	  "kptprof record [-o FILE] [--runs M] [--iterations N] [--warmup W] [--counters[=SET]] [--cold]\n"
	  "               (--suite NAME | --workload NAME... | -- CMD [ARGS...])" },
	{ "report", cmd_report, "summarise a recording per kernel or per NVTX range",
	  "kptprof report FILE [--top N] [--by kernel|range] [--format text|md|csv|json]\n\n"
	  "  FILE                       a .kpt recording\n"
	  "  --top N                    rows to print, busiest first (default 0: all)\n"
	  "  --by kernel|range          one row per kernel name or per NVTX range path (default kernel)\n"
	  "  --format text|md|csv|json  output format; json adds meta, devices, env, counts (default text)\n"
	  "  -h, --help                 show this help\n" },
	{ "diff", cmd_diff, "compare a recording against a baseline and give verdicts",
	  "kptprof diff BASE NEW [--threshold PCT] [--short-threshold PCT] [--long-threshold PCT] [--alpha A] [--junit F] [--markdown F]\n"
	  "                      [--json F] [--plots DIR] [--force] [--all] [--quiet] [--welch] [--keep-throttled]\n"
	  "                      [--suite-name S]" },
	{ "gate", cmd_gate, "record a suite and diff it against this GPU's baseline",
	  "kptprof gate [--suite NAME] [--baselines DIR] [--runs M] [-o FILE | --from FILE] [diff options]" },
	{ "baseline", cmd_baseline, "list, show, update or locate baselines per GPU model",
	  "kptprof baseline list|show|update|path [--baselines DIR] [--suite S] [--gpu NAME | --from FILE] [FILE]" },
	{ "export", cmd_export, "convert a recording to Chrome trace, CSV or JSON",
	  "kptprof export FILE --format chrome|csv|json -o OUT\n\n"
	  "  FILE                      a .kpt recording\n"
	  "  --format chrome|csv|json  Chrome trace (Perfetto), CSV of kernels and memops, or JSON of every record (required)\n"
	  "  -o, --output OUT          file to write, '-' for standard output; must not be FILE (required)\n"
	  "  -h, --help                show this help\n" },
	{ "view", cmd_view, "write an HTML report with plots and a timeline",
	  "kptprof view FILE [--baseline B] -o DIR [--width PX] [--top N] [--trace-max N] [--no-gnuplot] [diff options]" },
	{ "compare", cmd_compare, "one suite across GPU models, side by side",
	  "kptprof compare FILE... [--format text|md|json] [--plots DIR]\n\n"
	  "  --format F    table format: text, md or json (default text)\n"
	  "  --plots DIR   also write a bar plot per workload (.gp, and .png when gnuplot is installed)\n"
	  "  -h, --help    show this help\n" },
	{ "workloads", cmd_workloads, "list the built-in workloads and suites",
	  "kptprof workloads [--json]" },
	{ "devices", cmd_devices, "list the GPUs this machine has",
	  "kptprof devices" },
	{ "version", cmd_version, "print the version of kptprof and of its file format",
	  "kptprof version" },
	{ "help", cmd_help, "show help for kptprof or one command",
	  "kptprof help [CMD]" },
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

	if (argc < 2)
		return cmd_help(1, argv) == 0 ? KPT_EXIT_ERROR : KPT_EXIT_ERROR;
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)
		return cmd_help(1, argv);
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(1, argv + 1);
	cmd = kpt_cmd_find(argv[1]);
	if (!cmd) {
		fprintf(stderr, "kptprof: unknown command '%s'\nhint: 'kptprof help' lists the commands\n", argv[1]);
		return KPT_EXIT_ERROR;
	}
	return cmd->fn(argc - 1, argv + 1);
}
