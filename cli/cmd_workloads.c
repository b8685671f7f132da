/* cmd_workloads.c - `kptprof workloads`: list the built-in workloads and
 * suites by running the runner's own listing (`kpt-workloads --list`), so
 * the list cannot drift from the registry compiled into the runner. Needs no
 * GPU: --list touches no CUDA call.
 *
 * The runner is $KPTPROF_WORKLOADS when set, else kpt-workloads beside the
 * kptprof executable (kernels/CMakeLists.txt writes it there), else in
 * <prefix>/lib/kptprof/ of an installed kptprof (kpt_cli_find_runner). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_cli.h"

#define RUNNER "kpt-workloads"

struct workloads_args {
	int json;
	const char *suite;
};

const struct kpt_opt kpt_workloads_opts[] = {
	KPT_OPT_STRING(0, "suite", "NAME", struct workloads_args, suite,
		       "only the workloads of this suite (default: every workload and suite)"),
	KPT_OPT_FLAG(0, "json", struct workloads_args, json, "print the list as JSON (default: text)"),
	KPT_OPT_END,
};

int cmd_workloads(int argc, char **argv)
{
	struct workloads_args a = { 0 };
	char path[PATH_MAX + 256];
	char *args[6];
	int n = 0, json, nargs, rc;
	const char *suite, *env;

	path[0] = '\0';
	if ((rc = kpt_opt_parse("workloads", kpt_workloads_opts, &a, argc, argv, &nargs, NULL)) != KPT_OPT_GO)
		return rc;
	if (nargs)
		return kpt_cli_usage_error("workloads", "takes no arguments, got '%s'", argv[1]);
	json = a.json;
	suite = a.suite;
	if (kpt_cli_find_runner(path, sizeof path) < 0 && (env = kpt_cli_getenv("KPTPROF_WORKLOADS", "KPT_WORKLOADS"))) {
		fprintf(stderr, "kptprof: %s='%s' is not an executable file\n",
			getenv("KPTPROF_WORKLOADS") && getenv("KPTPROF_WORKLOADS")[0] ? "KPTPROF_WORKLOADS" : "KPT_WORKLOADS",
			env);
		return KPT_EXIT_ERROR;
	} else if (path[0] != '/') {
		fprintf(stderr, "kptprof: no workload runner: '" RUNNER "' is neither beside kptprof nor in "
			"<prefix>/lib/kptprof/, and KPTPROF_WORKLOADS names no executable\nhint: the runner is built "
			"with the kernels when CMake finds a CUDA toolkit; or set KPTPROF_WORKLOADS=/path/to/" RUNNER "\n");
		return KPT_EXIT_ERROR;
	}
	args[n++] = path;
	args[n++] = "--list";
	if (json)
		args[n++] = "--json";
	if (suite) {
		args[n++] = "--suite";
		args[n++] = (char *)suite;
	}
	args[n] = NULL;
	fflush(stdout);
	execv(path, args);
	fprintf(stderr, "kptprof: cannot run '%s': %s\n", path, strerror(errno));
	return KPT_EXIT_ERROR;
}
