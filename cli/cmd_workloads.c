/* cmd_workloads.c - `kptprof workloads`: list the built-in workloads and
 * suites by running the runner's own listing (`kpt-workloads --list`), so
 * the list cannot drift from the registry compiled into the runner. Needs no
 * GPU: --list touches no CUDA call. The list passes through kptprof, which
 * checks that it was written.
 *
 * The runner is $KPTPROF_WORKLOADS when set, else kpt-workloads beside the
 * kptprof executable (kernels/CMakeLists.txt writes it there), else in
 * <prefix>/lib/kptprof/ of an installed kptprof (kpt_cli_find_runner). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
	KPT_OPT_INCLUDE(kpt_wide_opts),
	KPT_OPT_END,
};

/* Runs the runner with its stdout on a pipe and copies that to ours, so a
 * failed write (a full disk, /dev/full) is seen here: exit 2, never 0 with
 * the list lost. The runner's own status otherwise. */
static int run_listing(const char *path, char *const *args)
{
	int fds[2], status = 0, bad = 0;
	char buf[1 << 14];
	ssize_t got;
	pid_t pid;

	fflush(stdout);
	if (pipe(fds) != 0 || (pid = fork()) < 0) {
		fprintf(stderr, "kptprof: cannot run '%s': %s\n", path, strerror(errno));
		return KPT_EXIT_ERROR;
	}
	if (pid == 0) {
		close(fds[0]);
		if (dup2(fds[1], 1) < 0)
			_exit(126);
		close(fds[1]);
		execv(path, args);
		fprintf(stderr, "kptprof: cannot run '%s': %s\n", path, strerror(errno));
		_exit(KPT_EXIT_ERROR);
	}
	close(fds[1]);
	while ((got = read(fds[0], buf, sizeof buf)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			break;
		/* keep draining after a failed write: the runner must not block */
		bad |= !bad && fwrite(buf, 1, (size_t)got, stdout) != (size_t)got;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* a failed fwrite set stdout's error flag: stdout_done says so */
	status = kpt_cli_stdout_done(WIFEXITED(status) ? WEXITSTATUS(status) : KPT_EXIT_ERROR);
	return bad ? KPT_EXIT_ERROR : status;
}

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
	return run_listing(path, args);
}
