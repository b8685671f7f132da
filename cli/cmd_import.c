/* cmd_import.c - kptprof import: torch.profiler/Kineto Chrome traces and
 * Nsight Systems SQLite exports as a .kpt recording (lib/kpt_import*.c). */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kpt_cli.h"
#include "kpt_import.h"

struct import_args {
	const char *out;
	int runs;                   /* enum kpt_import_runs */
};

static const char *const run_modes[] = {
	[KPT_IMPORT_RUNS_AUTO] = "auto",
	[KPT_IMPORT_RUNS_FILES] = "files",
	[KPT_IMPORT_RUNS_STEPS] = "steps",
	NULL,
};

const struct kpt_opt kpt_import_opts[] = {
	KPT_OPT_OPERAND("TRACE...", "torch.profiler/Kineto Chrome trace JSON (.json or .json.gz) or Nsight Systems "
			"SQLite export (required)"),
	KPT_OPT_STRING('o', "output", "FILE", struct import_args, out,
		       "the recording to write; must not be a TRACE (required)"),
	KPT_OPT_CHOICE(0, "runs", "auto|files|steps", struct import_args, runs, run_modes,
		       "what a run is: each file, or each step (ProfilerStep#N) of a Kineto trace "
		       "(default auto: the steps of one file, else the files)"),
	KPT_OPT_END,
};

int cmd_import(int argc, char **argv)
{
	struct import_args a = { 0 };
	const char *out;
	char **paths = argv + 1;
	int npaths, rc;
	struct kpt_import_stats st;
	struct kpt_diag d;

	if ((rc = kpt_opt_parse("import", kpt_import_opts, &a, argc, argv, &npaths, NULL)) != KPT_OPT_GO)
		return rc;
	out = a.out;
	if (!npaths)
		rc = kpt_cli_usage_error("import", "missing TRACE (a torch.profiler JSON trace or an nsys SQLite export)");
	else if (!out)
		rc = kpt_cli_usage_error("import", "missing -o FILE (the recording to write)");
	else if (kpt_cli_outputs("import", (const char *const *)paths, (size_t)npaths, &out, 1) != 0)
		rc = KPT_EXIT_ERROR;
	else
		rc = -1;
	if (rc >= 0)
		return rc;
	kpt_diag_clear(&d);
	rc = kpt_import((const char *const *)paths, (size_t)npaths, out,
			&(struct kpt_import_opts){ .runs = (enum kpt_import_runs)a.runs }, &st, &d);
	if (rc < 0)
		return kpt_cli_fail(&d);
	fprintf(stderr,
		"kptprof: imported %u %s file%s into '%s': %u run%s, %" PRIu64 " kernels, %" PRIu64 " memops, %" PRIu64
		" ranges (%" PRIu64 " steps as kpt:iter), %u GPU%s\n",
		st.files, st.format, st.files == 1 ? "" : "s", out, st.runs, st.runs == 1 ? "" : "s", st.kernels,
		st.memops, st.ranges, st.iterations, st.devices, st.devices == 1 ? "" : "s");
	fprintf(stderr,
		"kptprof: kernels in a range of their launching thread %" PRIu64 ", only in a step %" PRIu64
		", launch not in the trace %" PRIu64 "\n",
		st.linked, st.by_step, st.no_launch);
	return KPT_EXIT_OK;
}
