/* cmd_import.c - kptprof import: torch.profiler/Kineto Chrome traces and
 * Nsight Systems SQLite exports as a .kpt recording (lib/kpt_import*.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kpt_cli.h"
#include "kpt_import.h"

/* True when out names one of the inputs (same device and inode). */
static int is_input(const char *out, char **paths, int n)
{
	struct stat o, s;

	if (stat(out, &o) != 0)
		return 0;
	for (int i = 0; i < n; i++)
		if (stat(paths[i], &s) == 0 && s.st_dev == o.st_dev && s.st_ino == o.st_ino)
			return 1;
	return 0;
}

int cmd_import(int argc, char **argv)
{
	const char *out = NULL;
	char **paths;
	int npaths = 0, rc;
	struct kpt_import_stats st;
	struct kpt_diag d;

	if (!(paths = calloc((size_t)argc, sizeof *paths))) {
		fprintf(stderr, "kptprof import: out of memory\n");
		return KPT_EXIT_ERROR;
	}
	for (int i = 1; i < argc; i++) {
		if (kpt_cli_is_help(argv[i])) {
			free(paths);
			return kpt_cli_help("import");
		}
		if ((rc = kpt_cli_opt(argc, argv, &i, "-o", &out)) != 0 ||
		    (rc = kpt_cli_opt(argc, argv, &i, "--output", &out)) != 0) {
			if (rc < 0) {
				free(paths);
				return KPT_EXIT_ERROR;
			}
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			free(paths);
			return kpt_cli_usage_error("import", "unknown option '%s'", argv[i]);
		} else {
			paths[npaths++] = argv[i];
		}
	}
	if (!npaths)
		rc = kpt_cli_usage_error("import", "missing TRACE (a torch.profiler JSON trace or an nsys SQLite export)");
	else if (!out || !out[0])
		rc = kpt_cli_usage_error("import", "missing -o FILE (the recording to write)");
	else if (is_input(out, paths, npaths))
		rc = kpt_cli_usage_error("import", "'%s' is an input trace: choose another -o", out);
	else
		rc = -1;
	if (rc >= 0) {
		free(paths);
		return rc;
	}
	kpt_diag_clear(&d);
	rc = kpt_import((const char *const *)paths, (size_t)npaths, out, &st, &d);
	free(paths);
	if (rc < 0)
		return kpt_cli_fail(&d);
	fprintf(stderr,
		"kptprof: imported %u %s file%s into '%s': %u run%s, %" PRIu64 " kernels, %" PRIu64 " memops, %" PRIu64
		" ranges (%" PRIu64 " steps as kpt:iter), %u GPU%s\n",
		st.files, st.format, st.files == 1 ? "" : "s", out, st.files, st.files == 1 ? "" : "s", st.kernels,
		st.memops, st.ranges, st.iterations, st.devices, st.devices == 1 ? "" : "s");
	fprintf(stderr,
		"kptprof: kernels in a range of their launching thread %" PRIu64 ", only in a step %" PRIu64
		", launch not in the trace %" PRIu64 "\n",
		st.linked, st.by_step, st.no_launch);
	return KPT_EXIT_OK;
}
