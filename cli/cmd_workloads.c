/* cmd_workloads.c - `kptprof workloads`: list the built-in workloads and
 * suites by running the runner's own listing (`kpt-workloads --list`), so
 * the list cannot drift from the registry compiled into the runner. Needs no
 * GPU: --list touches no CUDA call. The list passes through kptprof, which
 * checks that it was written.
 *
 * The runner is $KPT_WORKLOADS when set, else kpt-workloads beside the
 * kptprof executable (kernels/CMakeLists.txt writes it there). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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
	char path[PATH_MAX + 256];
	char *args[6];
	int n = 0, json = 0;
	const char *suite = NULL;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
			return kpt_cli_help("workloads");
		if (strcmp(argv[i], "--json") == 0)
			json = 1;
		else if (strcmp(argv[i], "--suite") == 0 && i + 1 < argc)
			suite = argv[++i];
		else if (strcmp(argv[i], "--suite") == 0)
			return kpt_cli_usage_error("workloads", "option '--suite' needs a suite name");
		else
			return kpt_cli_usage_error("workloads", "unknown argument '%s'", argv[i]);
	}
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
	return run_listing(path, args);
}
