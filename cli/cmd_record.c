/* cmd_record.c - `kptprof record`: its options and what it prints. The
 * recorder itself (running the program under the collector, the counters
 * pass, ceilings, the merge) is collectors/kpt_record.c, which `gate` and
 * `ab` call through kpt_cli_record() too.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kpt_cli.h"
#include "kpt_counters.h"
#include "kpt_demangle.h"
#include "kpt_format.h"
#include "kpt_inject.h"
#include "kpt_project.h"
#include "kpt_record.h"
#include "kpt_window.h"
#include "kpt_control.h"

#define KPT_MAX_WORKLOADS 256
#define NOT_GIVEN UINT64_MAX

struct record_args {
	const char *out;            /* NULL: not given (kptprof.kpt, or PROJECT.kpt) */
	const char *project;        /* --project FILE */
	uint64_t runs, iterations, warmup; /* NOT_GIVEN: not given */
	uint64_t settle_us;         /* NOT_GIVEN: KPT_SUITE_SETTLE_US for suites and workloads */
	int api, cold;
	const char *suite;
	const char *workloads[KPT_MAX_WORKLOADS];
	int nworkloads;
	const char *counters;       /* --counters[=SPEC]: SPEC ("" default), NULL off */
	const char *kinds;          /* --kinds LIST (checked), NULL: not given */
	/* capture window: its settings in kpt_window.h's order (NULL: not
	 * given), checked into window; --on-demand is the flag on_demand */
	const char *win[KPT_WINDOW_SETTINGS];
	int on_demand;
	struct kpt_window_spec window;
	struct kpt_metric_list metrics; /* parsed counters */
	char out_buf[PATH_MAX];     /* -o with %p / %r expanded */
};

/* ---- option parsing ---------------------------------------------------------- */

/* --kinds: a comma list of the words the collector's KPT_ACTIVITY_KINDS
 * knows (kpt_inject_kinds(), the parser the collector itself uses).
 * Checked here so that a typo fails before the target runs, instead of in
 * every process it starts. */
static int opt_kinds(const char *cmd, const char *opt, const char *list, void *field, void *args)
{
	const char *bad = NULL;
	int badlen = 0;

	(void)opt;
	(void)args;
	if (!*list)
		return kpt_cli_usage_error(cmd, "empty --kinds: expected a comma list of kernel, memcpy, memset, sync");
	if (list[0] == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
		return kpt_cli_usage_error(cmd, "empty item in --kinds '%s'", list);
	if (kpt_inject_kinds(list, &bad, &badlen) < 0)
		return kpt_cli_usage_error(cmd, "unknown activity kind '%.*s' in --kinds: expected "
					   "kernel, memcpy, memset, sync or all", badlen, bad);
	*(const char **)field = list;
	return 0;
}

/* --counters[=SET,...]: parsed now, so a bad name fails before anything runs. */
static int opt_counters(const char *cmd, const char *opt, const char *value, void *field, void *args)
{
	struct record_args *a = args;
	struct kpt_diag d;

	(void)cmd;
	(void)opt;
	kpt_metric_list_release(&a->metrics);
	*(const char **)field = value ? value : "";
	kpt_diag_clear(&d);
	if (kpt_metric_list_parse(*(const char **)field, &a->metrics, &d) < 0)
		return kpt_cli_fail(&d);
	return 0;
}

/* --workload NAME: one name each (parse() splits "--workload A B C"). */
static int opt_workload(const char *cmd, const char *opt, const char *value, void *field, void *args)
{
	struct record_args *a = args;

	(void)opt;
	(void)field;
	if (a->nworkloads == KPT_MAX_WORKLOADS)
		return kpt_cli_usage_error(cmd, "too many workloads (at most %d)", KPT_MAX_WORKLOADS);
	a->workloads[a->nworkloads++] = value;
	return 0;
}

/* A string option that may be empty (the window's own parser names a bad value). */
#define WIN_OPT(l, a, i, h) \
	{ .kind = KPT_OPTK_STRING, .name = (l), .arg = (a), .off = offsetof(struct record_args, win[i]), .help = (h) }

const struct kpt_opt kpt_record_opts[] = {
	KPT_OPT_STRING('o', "output", "FILE", struct record_args, out,
		       "the recording to write; %p: kptprof's pid, %r: its RANK, %%: % (default kptprof.kpt; a project: PROJECT.kpt)"),
	KPT_OPT_U64(0, "runs", "M", struct record_args, runs, 1, 1000000,
		    "independent runs, one process each; baselines need 2, 5 is better (default 1; a project: its runs, else 5)"),
	KPT_OPT_U64(0, "iterations", "N", struct record_args, iterations, 1, 1000000000,
		    "timed iterations per workload; --suite/--workload only (default 20)"),
	KPT_OPT_U64(0, "warmup", "W", struct record_args, warmup, 0, 1000000000,
		    "untimed warm-up iterations per workload; --suite/--workload only (default 3)"),
	KPT_OPT_FLAG(0, "cold", struct record_args, cold,
		     "flush L2 between iterations; --suite/--workload only (default: warm L2)"),
	KPT_OPT_U64(0, "settle-us", "U", struct record_args, settle_us, 0, 1000000,
		    "idle microseconds before each timed iteration, so each starts from the same power state; "
		    "0: off; --suite/--workload only (default 3000)"),
	{ .kind = KPT_OPTK_CALL, .name = "counters", .arg = "SET,...", .off = offsetof(struct record_args, counters),
	  .call = opt_counters, .flags = KPT_OPTF_OPTVAL,
	  .help = "one more run, reading hardware counters per kernel; sets below (default: off)" },
	KPT_OPT_FLAG(0, "api", struct record_args, api, "also record CUDA runtime and driver API calls (default: off)"),
	KPT_OPT_CALL(0, "kinds", "LIST", struct record_args, kinds, opt_kinds,
		     "kernel,memcpy,memset,sync or all; on a launch-bound PyTorch step 'kernel' alone costs what CUPTI's "
		     "own kernel activity costs (~9% on an H200), sync adds ~17%, memcpy, memset ~1% "
		     "(default: kernel for -- CMD, all for suites)"),
	WIN_OPT("capture-range", "WHAT", 0,
		"record only inside cudaProfilerStart..Stop, or while NVTX range NAME (of DOMAIN) is open (default: all)"),
	WIN_OPT("steps", "A-B", 1,
		"record only steps A..B (from 0) of the --capture-range nvtx range, else kpt:iter (default: all)"),
	WIN_OPT("every", "K", 2, "record one step in K: steps 0, K, 2K, ... (default: all)"),
	WIN_OPT("delay", "S", 3, "record only from S seconds after CUDA starts in each process (default 0)"),
	WIN_OPT("duration", "S", 4, "record for S seconds from --delay, S > 0 (default: to the end)"),
	WIN_OPT("sample-every", "S", 5,
		"record one step every S seconds of a long run; CUPTI is attached only around it (about 20-25 ms of "
		"attach, detach and traced steps per capture on an H200, estimated from its measured parts: ~0.2% of a "
		"run at S = 10) (default: off, every step recorded)"),
	WIN_OPT("sample-steps", "N", 6, "steps per sample or per trigger (default 1)"),
	KPT_OPT_FLAG(0, "on-demand", struct record_args, on_demand,
		     "record nothing until 'kptprof trigger PID' asks for steps; CUPTI detached until then (default: off)"),
	KPT_OPT_STRING(0, "project", "FILE", struct record_args, project,
		       "record the workloads of this project file, docs/projects.md (default: kptprof.json here or in "
		       "a parent folder, when neither --suite nor -- is given)"),
	KPT_OPT_STRING(0, "suite", "NAME", struct record_args, suite,
		       "run a built-in suite; 'kptprof workloads' lists them (exactly one of --suite, --workload, --; "
		       "none: all of the project's workloads)"),
	KPT_OPT_CALL(0, "workload", "NAME...", struct record_args, workloads, opt_workload,
		     "run workloads of the project, else built-in ones: the names up to the next option; repeatable "
		     "(exactly one of the three)"),
	KPT_OPT_OPERAND("-- CMD [ARGS...]", "run this program, any CUDA program (exactly one of the three)"),
	KPT_OPT_END,
};

/* The --counters sets, after the options of --help. */
void kpt_record_help_tail(void)
{
	size_t n;
	const struct kpt_counter_set *sets = kpt_counter_sets(&n);

	printf("\n");
	kpt_text_wrap(stdout, "--counters[=SET,...]: a separate kernel-replay pass reading hardware counters; SET "
		      "is a set name or a metric name (docs/counters.md). Sets:", 0, (size_t)kpt_cli_help_width(), 0);
	for (size_t i = 0; i < n; i++) {
		printf("  %-10s ", sets[i].name);
		kpt_text_wrap(stdout, sets[i].about, 13, (size_t)kpt_cli_help_width(), 13);
	}
	printf("\n");
	kpt_text_wrap(stdout, "What the collector adds to CUPTI, and how to turn each part off (environment; "
		      "docs/cli.md): NVTX range paths on kernels, linked from the driver's launch callbacks "
		      "(KPT_RANGE_LINK=off: none; =both: the runtime's launch callbacks too, as before 2026-11-28); the NVML clock "
		      "and power sampler (KPT_SAMPLE_MS=0: off). With both on, record costs what CUPTI's kernel "
		      "activity alone costs: -1.2% [-3.5, +0.9] against a 30-line CUPTI injection on a launch-bound "
		      "PyTorch step (12 rounds, 6 H200s, bench/RESULTS.md); each part's own cost is below what those rounds resolve.",
		      0, (size_t)kpt_cli_help_width(), 0);
}

/* argv[0..argc) with "--workload A B C" as "--workload A --workload B
 * --workload C" (up to "--"), for the table; NULL after a usage error
 * (*rc set) or out of memory. Free the array only. */
static char **split_workloads(int argc, char **argv, int *outc, int *rc)
{
	char **v = calloc((size_t)argc * 2 + 1, sizeof *v);
	int n = 0, i, in = 0;

	*rc = KPT_EXIT_ERROR;
	if (!v)
		return NULL;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0)
			break;
		if (strcmp(a, "--workload") == 0) {
			if (i + 1 >= argc || argv[i + 1][0] == '-') {
				*rc = kpt_cli_usage_error("record", "option '--workload' needs at least one name");
				free(v);
				return NULL;
			}
			in = 1;
			v[n++] = argv[i];
			v[n++] = argv[++i];
			continue;
		}
		if (in && a[0] != '-') {
			v[n++] = "--workload";
			v[n++] = argv[i];
			continue;
		}
		in = 0;
		v[n++] = argv[i];
	}
	for (; i < argc; i++)
		v[n++] = argv[i];
	*outc = n;
	return v;
}

/* Parses argv into a; cmd: the program after "--", NULL none. Returns
 * KPT_OPT_GO, 0 after --help, or KPT_EXIT_ERROR after a usage error. */
static int parse(int argc, char **argv, struct record_args *a, char ***cmd)
{
	int n = 0, rest = 0, rc, vc = 0;
	char **v = split_workloads(argc, argv, &vc, &rc);
	struct kpt_diag d;

	memset(a, 0, sizeof *a);
	a->runs = a->iterations = a->warmup = a->settle_us = NOT_GIVEN;
	*cmd = NULL;
	if (!v)
		return rc;
	rc = kpt_opt_parse("record", kpt_record_opts, a, vc, v, &n, &rest);
	if (rc == KPT_OPT_GO && n > 0)
		rc = kpt_cli_usage_error("record", "unknown option '%s'", v[1]);
	if (rc == KPT_OPT_GO && rest < vc)
		*cmd = argv + (argc - (vc - rest));
	free(v);
	if (rc != KPT_OPT_GO)
		return rc;
	/* none of the three: the project's workloads (cmd_record) */
	if (!!*cmd + !!a->suite + (a->nworkloads > 0) > 1)
		return kpt_cli_usage_error("record", "give exactly one of '--suite NAME', '--workload NAME...' "
					   "or '-- CMD [ARGS...]'");
	if (a->project && (*cmd || a->suite))
		return kpt_cli_usage_error("record", "'--project' records the project's workloads: not with '%s'",
					   *cmd ? "--" : "--suite");
	if (*cmd && (a->iterations != NOT_GIVEN || a->warmup != NOT_GIVEN || a->cold || a->settle_us != NOT_GIVEN))
		return kpt_cli_usage_error("record", "'--iterations', '--warmup', '--cold' and '--settle-us' apply to "
					   "'--suite' and '--workload' only");
	kpt_diag_clear(&d);
	a->win[7] = a->on_demand ? "1" : NULL;
	if (kpt_window_parse(a->win[0], a->win[1], a->win[2], a->win[3], a->win[4], &a->window, &d) < 0 ||
	    kpt_window_parse_sampling(a->win[5], a->win[6], a->win[7], &a->window, &d) < 0)
		return kpt_cli_usage_error("record", "%s", d.msg);
	if (a->out && strchr(a->out, '%')) {
		/* as KPT_OUTPUT: %p this kptprof's pid, %r its rank (when a launcher
		 * starts one kptprof per rank), %% a '%' */
		if (kpt_inject_expand(a->out, (unsigned)getpid(), kpt_inject_rank(), a->out_buf,
				      (int)sizeof a->out_buf) < 0)
			return kpt_cli_usage_error("record", "bad output pattern '%s' (escapes: %%p %%r %%%%)", a->out);
		a->out = a->out_buf;
	}
	/* a link, a block device or an input as -o: refused before the run */
	return kpt_cli_outputs("record", NULL, 0, &a->out, 1) ? KPT_EXIT_ERROR : KPT_OPT_GO;
}

/* One line: what the counters cover and what they cost. */
static void counters_summary(const char *out, unsigned passes, struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	const struct kpt_counter *rows;
	struct kpt_counter_census c;
	size_t n;

	if (kpt_file_open(out, &f, d) < 0 || kpt_file_counters(f, &rows, &n, d) < 0 ||
	    kpt_counter_census(rows, n, passes, &c, d) < 0) {
		kpt_file_close(f);
		kpt_cli_fail(d);
		return;
	}
	fprintf(stderr, "kptprof: counters: %llu kernel%s x %llu metric%s, %u pass%s per kernel (%llu kernel replays)",
		(unsigned long long)c.kernels, c.kernels == 1 ? "" : "s", (unsigned long long)c.metrics,
		c.metrics == 1 ? "" : "s", c.passes, c.passes == 1 ? "" : "es", (unsigned long long)c.replays);
	if (c.missing)
		fprintf(stderr, ", %llu values missing", (unsigned long long)c.missing);
	fprintf(stderr, "\n");
	kpt_file_close(f);
}

/* ---- the one-screen summary ---------------------------------------------------------------- */

struct kagg {
	uint32_t name;
	uint64_t count, total;
};

static int by_total(const void *a, const void *b)
{
	const struct kagg *x = a, *y = b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : (x->name > y->name) - (x->name < y->name);
}

/* Kernels, GPU time, top 5 kernels and drops of the merged file, to
 * stderr. O(K) over the kernel chunks, memory one counter per string. */
static int summary(const char *path, struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	struct kpt_kernel_cursor *c = NULL;
	struct kpt_counts cnt;
	struct kagg *agg = NULL;
	const struct kpt_kernel *rows;
	uint64_t total = 0;
	uint32_t nstr;
	size_t n;
	char t1[32], t2[32];
	int rc;

	if ((rc = kpt_file_open(path, &f, d)) < 0)
		return rc;
	if ((rc = kpt_file_counts(f, &cnt, d)) < 0 || (rc = kpt_file_load_strings(f, d)) < 0)
		goto out;
	nstr = kpt_file_string_count(f);
	if (!(agg = calloc((size_t)nstr + 1, sizeof *agg))) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory summarising '%s'", path);
		goto out;
	}
	for (uint32_t i = 0; i < nstr; i++)
		agg[i].name = i;
	if ((rc = kpt_kernel_cursor_create(f, &c, d)) < 0)
		goto out;
	while ((rc = kpt_kernel_cursor_next(c, &rows, &n, d)) > 0)
		for (size_t i = 0; i < n; i++) {
			uint64_t dur = rows[i].end_ns > rows[i].start_ns ? rows[i].end_ns - rows[i].start_ns : 0;
			uint32_t id = rows[i].name < nstr ? rows[i].name : nstr;

			agg[id].count++;
			agg[id].total += dur;
			total += dur;
		}
	if (rc < 0)
		goto out;
	qsort(agg, (size_t)nstr + 1, sizeof *agg, by_total);
	kpt_cli_fmt_ns((double)total, t1, sizeof t1);
	fprintf(stderr, "kptprof: recorded %llu kernels (%s GPU time), %llu memops, %llu NVTX ranges, "
		"%u process%s, %u device%s -> %s\n",
		(unsigned long long)cnt.kernels, t1, (unsigned long long)cnt.memops,
		(unsigned long long)cnt.ranges, cnt.processes, cnt.processes == 1 ? "" : "es",
		cnt.devices, cnt.devices == 1 ? "" : "s", path);
	if (cnt.kernels)
		fprintf(stderr, "  %6s %10s %10s %8s  %s\n", "time%", "total", "avg", "count", "kernel");
	for (uint32_t i = 0; i < 5 && i <= nstr && agg[i].count; i++) {
		const char *raw = agg[i].name < nstr ? kpt_file_string(f, agg[i].name) : "(bad name)";
		char *dm = kpt_demangle(raw);
		const char *show = dm ? dm : raw;

		kpt_cli_fmt_ns((double)agg[i].total, t1, sizeof t1);
		kpt_cli_fmt_ns((double)agg[i].total / (double)agg[i].count, t2, sizeof t2);
		fprintf(stderr, "  %5.1f%% %10s %10s %8llu  %.100s%s\n",
			total ? 100.0 * (double)agg[i].total / (double)total : 0.0, t1, t2,
			(unsigned long long)agg[i].count, show, strlen(show) > 100 ? "..." : "");
		free(dm);
	}
	if (cnt.dropped_records)
		fprintf(stderr, "kptprof: warning: CUPTI dropped %llu records: the recording is incomplete\n"
			"hint: raise KPT_BUFFERS or KPT_DEVICE_BUFFER_MB\n",
			(unsigned long long)cnt.dropped_records);
	rc = 0;
out:
	kpt_kernel_cursor_destroy(c);
	free(agg);
	kpt_file_close(f);
	return rc;
}

/* ---- the command -------------------------------------------------------------------------- */

void kpt_cli_record_defaults(struct kpt_record_opts *o)
{
	static char runner[PATH_MAX];

	memset(o, 0, sizeof *o);
	o->runs = 1;
	o->iterations = o->warmup = o->settle_us = -1;
	o->runner = kpt_cli_find_runner(runner, sizeof runner) == 0 ? runner : NULL;
	/* KPTPROF_SKIP_GPU_CHECK: for tests of the launcher on machines
	 * without a GPU (the target then decides what gets recorded). */
	o->skip_gpu_check = getenv("KPTPROF_SKIP_GPU_CHECK") != NULL;
	o->no_calibrate = getenv("KPTPROF_NO_CALIBRATE") != NULL;
}

/* Prints what record prints after recording o->out: the notes, the
 * summary, the counters. Returns the target's exit status. */
static int record_print(const struct kpt_record_opts *o, const struct kpt_record_result *r)
{
	struct kpt_diag d;

	kpt_diag_clear(&d);
	for (int i = 0; i < r->nnotes; i++)
		fprintf(stderr, "%s%s\n", r->note[i].kind == KPT_NOTE_HINT ? "hint: " :
			r->note[i].kind == KPT_NOTE_WARNING ? "kptprof: warning: " : "kptprof: ", r->note[i].text);
	if (summary(o->out, &d) < 0)
		kpt_cli_fail(&d);
	if (o->counters_metrics)
		counters_summary(o->out, r->counter_passes, &d);
	return r->status;
}

int kpt_cli_record(const struct kpt_record_opts *o)
{
	struct kpt_record_result r;
	struct kpt_diag d;

	kpt_diag_clear(&d);
	if (kpt_record_run(o, &r, &d) < 0)
		return kpt_cli_fail(&d);
	return record_print(o, &r);
}

int kpt_cli_record_project(const struct kpt_project *p, const char *const *names, size_t nnames,
			   const struct kpt_record_opts *o)
{
	struct kpt_record_result r;
	struct kpt_diag d;

	kpt_diag_clear(&d);
	if (kpt_record_project(p, names, nnames, o, &r, &d) < 0)
		return kpt_cli_fail(&d);
	return record_print(o, &r);
}

const char *kpt_cli_record_how(const char *suite, const char *project_file, char *buf, size_t cap)
{
	char found[PATH_MAX];
	struct kpt_project *p = NULL;

	if (!project_file && kpt_project_find(".", found, sizeof found) == 0)
		project_file = found;
	if (project_file && kpt_project_load(project_file, &p, NULL) == 0 && strcmp(p->name, suite) == 0)
		snprintf(buf, cap, "kptprof record --project %s", project_file);
	else
		snprintf(buf, cap, "kptprof record --suite %s", suite);
	kpt_project_destroy(p);
	return buf;
}

/* Whether the runner knows every name as a built-in workload: `runner
 * --list --tsv NAME...` exits 0 (its output and errors discarded). */
static int builtin_workloads(const char *runner, const char *const *names, int n)
{
	const char *argv[KPT_MAX_WORKLOADS + 4];
	posix_spawn_file_actions_t fa;
	extern char **environ;
	int k = 0, status = 1, ok;
	pid_t pid;

	if (!runner)
		return 0;
	argv[k++] = runner;
	argv[k++] = "--list";
	argv[k++] = "--tsv";
	for (int i = 0; i < n; i++)
		argv[k++] = names[i];
	argv[k] = NULL;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
	ok = posix_spawn(&pid, runner, &fa, NULL, (char *const *)argv, environ) == 0;
	posix_spawn_file_actions_destroy(&fa);
	while (ok && waitpid(pid, &status, 0) < 0)
		;
	return ok && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The project record applies to, into *p (NULL: none): --project's file,
 * else kptprof.json here or above when neither --suite nor -- is given.
 * Returns KPT_OPT_GO, or the exit status of an error. */
static int pick_project(const struct record_args *a, char **cmd, struct kpt_project **p)
{
	struct kpt_diag d;

	*p = NULL;
	kpt_diag_clear(&d);
	if ((a->project || (!cmd && !a->suite)) && kpt_cli_project(a->project, p, &d) < 0)
		return kpt_cli_fail(&d);
	return KPT_OPT_GO;
}

/* --workload names with a project: all of them its own (1), none of them
 * (0: built-in ones), or the error's exit status when one is neither. */
static int project_names(const struct kpt_project *p, const struct record_args *a, const char *runner)
{
	int mine = 0;
	const char *stranger = NULL;

	for (int i = 0; i < a->nworkloads; i++)
		if (kpt_project_workload(p, a->workloads[i]))
			mine++;
		else if (!stranger)
			stranger = a->workloads[i];
	if (mine == a->nworkloads)
		return 1;
	if (mine == 0 && builtin_workloads(runner, a->workloads, a->nworkloads))
		return 0;
	fprintf(stderr, "kptprof record: no workload '%s' in project '%s' ('%s') nor built in; its workloads:",
		kpt_cli_term(stranger), kpt_cli_term(p->name), kpt_cli_term(p->path));
	for (size_t i = 0; i < p->nwl; i++)
		fprintf(stderr, "%s %s", i ? "," : "", p->wl[i].name);
	fprintf(stderr, "\nhint: 'kptprof workloads' lists the built-in ones\n");
	return KPT_EXIT_ERROR;
}

/* Records p's workloads (names: NULL all) with what a asks; the output
 * defaults to PROJECT.kpt. */
static int record_project(const struct kpt_project *p, const struct record_args *a, struct kpt_record_opts *o,
			  const char *const *names, size_t nnames)
{
	char out[KPT_COMPONENT_MAX + 8];

	if (!p->builtin) {
		if (a->iterations != NOT_GIVEN || a->warmup != NOT_GIVEN || a->cold || a->settle_us != NOT_GIVEN)
			return kpt_cli_usage_error("record", "'--iterations', '--warmup', '--cold' and '--settle-us' "
						   "apply to built-in suites and workloads, not to project '%s'",
						   kpt_cli_term(p->name));
		if (kpt_window_is_set(&a->window))
			return kpt_cli_usage_error("record", "project '%s' sets each workload's window in its file "
						   "(\"capture\", docs/projects.md)", kpt_cli_term(p->name));
		if (!a->out) {
			snprintf(out, sizeof out, "%s.kpt", p->name);
			o->out = out;
		}
	}
	o->runs = a->runs == NOT_GIVEN ? 0 : (long)a->runs;
	return kpt_cli_record_project(p, names, nnames, o);
}

/* A program recorded sampled or on demand: the control folder made for it
 * (every process it starts finds it in KPT_CONTROL_DIR; `kptprof trigger`
 * writes there), with --on-demand the trigger command to type said once,
 * the folder removed at the end. Else kpt_cli_record. */
static int record_on_demand(const struct record_args *a, struct kpt_record_opts *o)
{
	char dir[4096];
	struct kpt_diag d;
	int rc;

	if (!kpt_window_sampled(&a->window))
		return kpt_cli_record(o);
	kpt_diag_clear(&d);
	if (kpt_control_dir_make(dir, sizeof dir, (long)getpid(), &d) < 0)
		return kpt_cli_fail(&d);
	setenv(KPT_ENV_CONTROL_DIR, dir, 1);
	if (a->on_demand)
		fprintf(stderr, "kptprof record: on demand: kptprof trigger %d --steps %llu\n", (int)getpid(),
			(unsigned long long)a->window.sample_steps);
	rc = kpt_cli_record(o);
	kpt_control_remove(dir);
	unsetenv(KPT_ENV_CONTROL_DIR);
	return rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a;
	struct kpt_record_opts o;
	struct kpt_project *p = NULL;
	char window[2 * KPT_WINDOW_NAME_MAX + 128], **cmd;
	char *metrics = NULL;
	struct kpt_diag d;
	int rc;

	if ((rc = parse(argc, argv, &a, &cmd)) != KPT_OPT_GO || (rc = pick_project(&a, cmd, &p)) != KPT_OPT_GO) {
		kpt_metric_list_release(&a.metrics);
		return rc;
	}
	if (!p && !cmd && !a.suite && a.nworkloads == 0) {
		kpt_metric_list_release(&a.metrics);
		return kpt_cli_usage_error("record", "give exactly one of '--suite NAME', '--workload NAME...', "
					   "'-- CMD [ARGS...]' or '--project FILE' (no " KPT_PROJECT_FILE " here or in a parent folder)");
	}
	kpt_cli_record_defaults(&o);
	o.out = a.out ? a.out : "kptprof.kpt";
	o.runs = a.runs == NOT_GIVEN ? 1 : (long)a.runs;
	o.cmd = cmd;
	o.workloads = a.workloads;
	o.nworkloads = a.nworkloads;
	o.iterations = a.iterations == NOT_GIVEN ? -1 : (long)a.iterations;
	o.warmup = a.warmup == NOT_GIVEN ? -1 : (long)a.warmup;
	if (!cmd)
		o.settle_us = a.settle_us == NOT_GIVEN ? KPT_SUITE_SETTLE_US : (long)a.settle_us;
	o.cold = a.cold;
	o.api = a.api;
	o.kinds = a.kinds;
	memcpy(o.win, a.win, sizeof o.win);
	if (kpt_window_is_set(&a.window)) {
		kpt_window_describe(&a.window, window, sizeof window);
		o.window = window;
	}
	if (a.counters) {
		if (!(metrics = kpt_metric_list_join(&a.metrics))) {
			kpt_metric_list_release(&a.metrics);
			kpt_project_destroy(p);
			fprintf(stderr, "kptprof: out of memory\n");
			return KPT_EXIT_ERROR;
		}
		o.counters_set = a.counters[0] ? a.counters : KPT_COUNTER_SET_DEFAULT;
		o.counters_metrics = metrics;
	}
	kpt_diag_clear(&d);
	if (a.suite) {
		/* the bundled suite is a project of one workload: one path */
		rc = kpt_project_builtin(o.runner, a.suite, NULL, &p, &d) < 0 ? kpt_cli_fail(&d)
			: record_project(p, &a, &o, NULL, 0);
	} else if (p && a.nworkloads == 0) {
		rc = record_project(p, &a, &o, NULL, 0);
	} else if (p && (rc = project_names(p, &a, o.runner)) == 1) {
		rc = record_project(p, &a, &o, a.workloads, (size_t)a.nworkloads);
	} else if (!p || rc == 0) {
		rc = record_on_demand(&a, &o);
	}
	kpt_project_destroy(p);
	free(metrics);
	kpt_metric_list_release(&a.metrics);
	return rc;
}
