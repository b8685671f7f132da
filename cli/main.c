/* main.c - kptprof: the command table and dispatch. */
#include <stdio.h>
#include <string.h>

#include "kpt_cli.h"

/* The options kpt_diff_cli_option() (cli/cmd_diff.c) parses, for the help
 * of diff and of gate, which takes them all: one text, so the two cannot
 * drift. Defaults: fill_defaults() in analyzer/kpt_diff.c. */
#define DIFF_OPTIONS_HELP \
	"  --threshold PCT          change that matters, percent, for kernels of 10 us to 200 us (default 2)\n" \
	"  --short-threshold PCT    the same for kernels under 10 us in BASE (default 5)\n" \
	"  --long-threshold PCT     the same for kernels of 200 us and more in BASE (default 1)\n" \
	"  --alpha A                family-wise error rate over all kernels, Holm-corrected, at most 0.5 (default 0.05)\n" \
	"  --junit F                also write a JUnit XML report, one test per kernel, SLOW fails; '-': stdout (default: none)\n" \
	"  --markdown F             also write a Markdown report (a pull-request comment); '-': stdout (default: none)\n" \
	"  --json F                 also write a JSON report, {\"result\": \"error\"} when it fails; '-': stdout (default: none)\n" \
	"  --plots DIR              also write gnuplot scripts of the changes and runs, PNGs with gnuplot (default: none)\n" \
	"  --force                  compare recordings of different GPU models (default: refuse, exit 2)\n" \
	"  --all                    list SAME kernels in the table too (default: only when 40 keys or fewer)\n" \
	"  -q, --quiet              no table on standard output, only reports and exit status (default: table)\n" \
	"  --welch                  Welch's t instead of Student's on the log run medians (default Student)\n" \
	"  --keep-throttled         keep samples taken throttled or under 0.75x the run's median SM clock (default: drop)\n" \
	"  --aggregate N            a kernel launched N+ times per iteration in one NVTX path is one key (default 3; 0: never)\n" \
	"  --between-prior PCT      between-machine SD when BASE has one session (default: by kernel duration)\n" \
	"  --other-machine          NEW is another machine even where base sessions share its GPU and boot (default: off)\n" \
	"  --no-shift               keep a family's common move in its keys' changes (default: reported once, taken out)\n" \
	"  --paired                 run i of NEW against run i of BASE, interleaved on one machine (default: off; ab: on)\n" \
	"  --ranges RULE            any-thread: a kernel with no range of its own thread takes another thread's (default thread)\n" \
	"  --base-runs LIST         use only these runs of BASE, e.g. 0-4,7 (default: all)\n" \
	"  --new-runs LIST          use only these runs of NEW (default: all)\n" \
	"  --method rule|pooled-u   decision method; pooled-u only shows its false alarms (maintainers; default rule)\n"

/* Keep in the order `kptprof help` should list them. */
const struct kpt_cmd kpt_cmds[] = {
	{ .name = "record", .fn = cmd_record, .summary = "run a workload or program under the collector and write a .kpt file",
	  .usage = "kptprof record [-o FILE] [--runs M] [--iterations N] [--warmup W] [--counters[=SET]] [--cold]\n"
	  "               [--api] [--kinds LIST] [--capture-range cudaProfilerApi|nvtx:NAME[@DOMAIN]]\n"
	  "               [--steps A-B | --every K] [--delay S] [--duration S]\n"
	  "               (--suite NAME | --workload NAME... | -- CMD [ARGS...])\n\n"
	  "  -o, --output FILE      the recording to write; %p: kptprof's pid, %r: its RANK, %%: % (default kptprof.kpt)\n"
	  "  --runs M               independent runs, one process each; baselines need 2, 5 is better (default 1)\n"
	  "  --iterations N         timed iterations per workload; --suite/--workload only (default 20)\n"
	  "  --warmup W             untimed warm-up iterations per workload; --suite/--workload only (default 3)\n"
	  "  --cold                 flush L2 between iterations; --suite/--workload only (default: warm L2)\n"
	  "  --counters[=SET,...]   one more run, reading hardware counters per kernel; sets below (default: off)\n"
	  "  --api                  also record CUDA runtime and driver API calls (default: off)\n"
	  "  --kinds LIST           kernel,memcpy,memset,sync or all; on a launch-bound PyTorch step sync adds ~17%, memcpy, memset ~1% (default: kernel for -- CMD, all for suites)\n"
	  "  --capture-range WHAT   record only inside cudaProfilerStart..Stop, or while NVTX range NAME (of DOMAIN) is open (default: all)\n"
	  "  --steps A-B            record only steps A..B (from 0) of the --capture-range nvtx range, else kpt:iter (default: all)\n"
	  "  --every K              record one step in K: steps 0, K, 2K, ... (default: all)\n"
	  "  --delay S              record only from S seconds after CUDA starts in each process (default 0)\n"
	  "  --duration S           record for S seconds from --delay (default: to the end)\n"
	  "  --suite NAME           run a built-in suite; 'kptprof workloads' lists them (exactly one of --suite, --workload, --)\n"
	  "  --workload NAME...     run built-in workloads: the names up to the next option; repeatable (exactly one of the three)\n"
	  "  -- CMD [ARGS...]       run this program, any CUDA program (exactly one of the three)\n"
	  "  -h, --help             show this help\n" },
	{ .name = "import", .fn = cmd_import, .summary = "convert a torch.profiler trace or an Nsight Systems export to a .kpt file",
	  .usage = "kptprof import TRACE... -o FILE\n\n"
	  "  TRACE...           torch.profiler/Kineto Chrome trace JSON (plain, not .gz) or Nsight Systems SQLite export; several: one run each (required)\n"
	  "  -o, --output FILE  the recording to write; must not be a TRACE (required)\n"
	  "  -h, --help         show this help\n" },
	{ .name = "report", .fn = cmd_report, .summary = "summarise a recording per kernel, NVTX range or rank",
	  .usage = "kptprof report FILE [--top N] [--by kernel|range|rank] [--step NAME] [--ranges RULE]\n"
	  "                   [--format text|md|csv|json]", .opts = kpt_report_opts },
	{ .name = "diff", .fn = cmd_diff, .summary = "compare a recording against a baseline and give verdicts",
	  .usage = "kptprof diff BASE... NEW [--threshold PCT] [--short-threshold PCT] [--long-threshold PCT] [--alpha A] [--junit F] [--markdown F]\n"
	  "                      [--json F] [--plots DIR] [--force] [--all] [--quiet] [--welch] [--keep-throttled]\n"
	  "                      [--suite-name S] [--base-runs LIST] [--new-runs LIST] [--method rule|pooled-u]",
	  .opts = kpt_diff_opts },
	{ .name = "gate", .fn = cmd_gate, .summary = "record a suite and diff it against this GPU's baseline",
	  .usage = "kptprof gate [--suite NAME] [--baselines DIR | --db URL [--baseline-sessions N] [--branch B]] [--runs M]\n"
	  "             [-o FILE | --from FILE | --against BUILD|REF] [diff options]\n\n"
	  "  --suite NAME             suite to record; baseline: DIR/<gpu-slug>/NAME/ (sessions), else NAME.kpt (default default;\n"
	  "                           --from a recording of no suite needs it)\n"
	  "  --baselines DIR          folder of the baselines (default $KPTPROF_BASELINES, else ./baselines, else the installed share/kptprof/baselines)\n"
	  "  --db URL                 baseline from the history store instead: SQLite file or postgresql://... (default: none)\n"
	  "  --baseline-sessions N    with --db: the last N sessions of the suite and GPU model, 2 to 1000 (default 10)\n"
	  "  --branch B               with --db: the sessions' branch (default main)\n"
	  "  --runs M                 runs to record, 2 to 1000 (default 5)\n"
	  "  -o FILE                  keep the recording in FILE (default: a temporary file, removed)\n"
	  "  --from FILE              gate this recording instead of recording (default: record; no GPU: exit 77)\n"
	  "  --against BUILD|REF      A/B against a base build folder or git ref (built in a worktree) here (default: off):\n"
	  "                           both builds' suite interleaved by 'kptprof ab' (--runs pairs, default 10), paired\n"
	  "                           verdicts, then this build against the committed baseline (one line)\n"
	  "  diff options             every option of 'kptprof diff' (default as there):\n"
	  DIFF_OPTIONS_HELP
	  "  --suite-name S           JUnit test suite name (default: the --suite NAME)\n"
	  "  -h, --help               show this help\n" },
	{ .name = "ab", .fn = cmd_ab, .summary = "run two commands interleaved on this machine and give paired verdicts",
	  .usage = "kptprof ab [--runs M] [-o DIR] [diff options] -- CMD_A [ARGS...] ::: CMD_B [ARGS...]\n"
	  "        (diff options as in 'kptprof diff', but --threshold 1 and --paired implied)",
	  .opts = kpt_ab_opts },
	{ .name = "baseline", .fn = cmd_baseline, .summary = "list, show, update or locate baselines per GPU model",
	  .usage = "kptprof baseline list|show|update|path [--baselines DIR] [--suite S] [--gpu NAME | --from FILE] [--keep N] [FILE]\n\n"
	  "  list               every baseline under DIR: GPU, suite, runs, kernels, when recorded, file\n"
	  "  show [FILE]        GPU, runs, kernels and meta of FILE, else of the baseline for --gpu or --from and --suite\n"
	  "  update FILE        add FILE (>= 2 runs) as a session to DIR/<its gpu-slug>/<suite>/ (same GPU and boot: replaced)\n"
	  "  --keep N           sessions a baseline keeps, 1 to 1000 (default 16)\n"
	  "  path               print the baseline path for --gpu or --from and --suite\n"
	  "  --baselines DIR    folder of the baselines (default $KPTPROF_BASELINES, else ./baselines, else the installed share/kptprof/baselines)\n"
	  "  --suite S          suite (default: default for show and path, FILE's recorded suite for update)\n"
	  "  --gpu NAME         GPU of show and path: a slug or a device name (required: this or --from, but for show FILE)\n"
	  "  --from FILE        GPU of show and path: the one FILE was recorded on (required: this or --gpu)\n"
	  "  -h, --help         show this help\n" },
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
	  "kptprof history detect [--threshold PCT] [--head N] [--min-step PCT] [--alpha A] [--min-seg N] [--min-machines N] [--format text|json]\n\n"
	  "  add FILE            store FILE's per-key run medians, environment, GPU, suite, commit, branch\n"
	  "  ls                  list the stored sessions\n"
	  "  show KEY            one kernel key's series, change points marked; KEY: its number, its name or part of it\n"
	  "  plot KEY            a trend plot DIR/history-keyN.png with the noise band and change points (gnuplot)\n"
	  "  detect              change points of every key, machine effects out; exit 1 when a key got slower at the head of the branch\n"
	  "  --db URL            SQLite file or postgresql://USER:PASSWORD@HOST:PORT/DB (default $KPTPROF_DB, else .kptprof/history.db)\n"
	  "  --commit SHA        add: the commit (default: the recording's meta commit)\n"
	  "  --branch B          add: the branch (default: meta branch, else main); others: the series' branch (default main)\n"
	  "  --label K=V         add: a label of the session; repeatable (default: none)\n"
	  "  --suite S           add: the suite (default: the recording's); show/plot: default the newest session's; ls/detect: default every suite\n"
	  "  --gpu SLUG          the GPU model slug (default: show/plot the newest session's; ls/detect every GPU)\n"
	  "  --workload W        show/plot: the workload's total (sum of its keys); detect: only its keys (default: none)\n"
	  "  --last N            only the last N sessions (default: all)\n"
	  "  --format text|json  output format of ls, show and detect (default text)\n"
	  "  -o DIR              plot: folder of the .gp and .png (default .)\n"
	  "  --threshold PCT     detect: a slower step of this size at the head fails, exit 1 (default 2)\n"
	  "  --head N            detect: the head is the last N sessions of the branch (default 10)\n"
	  "  --min-step PCT      smallest step reported as a change point (default 1)\n"
	  "  --alpha A           false change point rate per series, Bonferroni over split positions (default 0.001)\n"
	  "  --min-seg N         fewest sessions on each side of a step (default 3)\n"
	  "  --min-machines N    detect: fewest machines (GPUs) after a step that must carry it (default 3)\n"
	  "  -h, --help          show this help\n" },
	{ .name = "workloads", .fn = cmd_workloads, .summary = "list the built-in workloads and suites",
	  .usage = "kptprof workloads [--suite NAME] [--json]", .opts = kpt_workloads_opts },
	{ .name = "devices", .fn = cmd_devices, .summary = "list the GPUs this machine has",
	  .usage = "kptprof devices [--json]", .opts = kpt_devices_opts },
	{ .name = "version", .fn = cmd_version, .summary = "print the version of kptprof and of its file format",
	  .usage = "kptprof version", .opts = kpt_version_opts },
	{ .name = "help", .fn = cmd_help, .summary = "show help for kptprof or one command; its man page; shell completion",
	  .usage = "kptprof help [CMD]\nkptprof help --man [CMD]\nkptprof help --completion bash|zsh", .opts = kpt_help_opts },
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

	if (argc < 2) {
		kpt_cli_help_list();
		return KPT_EXIT_ERROR;
	}
	if (kpt_cli_is_help(argv[1])) {
		kpt_cli_help_list();
		return KPT_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0)
		return cmd_version(1, argv + 1);
	cmd = kpt_cmd_find(argv[1]);
	if (!cmd)
		return kpt_cli_unknown_command(argv[1]);
	kpt_cli_watch_outputs(cmd->name);
	return cmd->fn(argc - 1, argv + 1);
}
