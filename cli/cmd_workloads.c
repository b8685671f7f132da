/* cmd_workloads.c - `kptprof workloads`: list the built-in workloads and
 * suites by running the runner's own listing (`kpt-workloads --list`), so
 * the list cannot drift from the registry compiled into the runner. Needs no
 * GPU: --list touches no CUDA call.
 *
 * The runner is $KPT_WORKLOADS when set, else kpt-workloads beside the
 * kptprof executable (kernels/CMakeLists.txt writes it there). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_cli.h"

#define RUNNER "kpt-workloads"

/* Path of the runner in out; 0, or -1 with why in out. */
static int find_runner(char *out, size_t cap)
{
	const char *env = getenv("KPT_WORKLOADS");
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (env && *env) {
		if (access(env, X_OK) != 0) {
			snprintf(out, cap, "KPT_WORKLOADS='%s' is not an executable file: %s", env, strerror(errno));
			return -1;
		}
		snprintf(out, cap, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", self, sizeof self - 1);
	if (n <= 0 || (self[n] = '\0', !(slash = strrchr(self, '/')))) {
		snprintf(out, cap, "cannot locate kptprof's own folder to look for '" RUNNER "'");
		return -1;
	}
	*slash = '\0';
	if ((size_t)snprintf(out, cap, "%s/" RUNNER, self) >= cap || access(out, X_OK) != 0) {
		snprintf(out, cap, "no workload runner: '" RUNNER "' is not beside kptprof (in '%s') and "
			 "KPT_WORKLOADS is unset", self);
		return -1;
	}
	return 0;
}

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
	const char *suite;

	if ((rc = kpt_opt_parse("workloads", kpt_workloads_opts, &a, argc, argv, &nargs, NULL)) != KPT_OPT_GO)
		return rc;
	if (nargs)
		return kpt_cli_usage_error("workloads", "takes no arguments, got '%s'", argv[1]);
	json = a.json;
	suite = a.suite;
	if (find_runner(path, sizeof path) < 0) {
		fprintf(stderr, "kptprof: %s\nhint: the runner is built with the kernels when CMake finds a CUDA "
			"toolkit; or set KPT_WORKLOADS=/path/to/" RUNNER "\n", path);
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
