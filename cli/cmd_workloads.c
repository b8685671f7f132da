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
static int run_listing(const char *path, char *const *args, FILE *to)
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
		bad |= !bad && fwrite(buf, 1, (size_t)got, to) != (size_t)got;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	/* a failed fwrite set stdout's error flag: stdout_done says so */
	status = WIFEXITED(status) ? WEXITSTATUS(status) : KPT_EXIT_ERROR;
	if (to == stdout)
		status = kpt_cli_stdout_done(status);
	return bad ? KPT_EXIT_ERROR : status;
}

/* A count with an SI prefix, 3 significant digits: "8.39 M", "1.10 T";
 * "-" for 0. */
static const char *fmt_si(double v, char *buf, size_t cap)
{
	static const char *const pre[] = { "", " K", " M", " G", " T", " P", " E" };
	int k = 0;

	if (!(v > 0))
		return strcpy(buf, "-");
	while (k < 6 && v >= 999.5)
		v /= 1000, k++;
	snprintf(buf, cap, v < 9.995 ? "%.2f%s" : v < 99.95 ? "%.1f%s" : "%.0f%s", v, pre[k]);
	return buf;
}

/* The runner's --tsv listing (name, family, flops, bytes, suites per line)
 * as the table: bytes as sizes (8.0 MiB), FLOPs with an SI prefix; on a
 * terminal (kpt_cli_table_width) names and suites cut to fit, names never
 * two alike. */
static int print_table(char *tsv)
{
	enum { W_NAME, W_FAMILY, W_FLOPS, W_BYTES, W_SUITES, W_COUNT };
	const char *titles[W_COUNT] = { "NAME", "FAMILY", "FLOPS", "BYTES", "SUITES" };
	size_t n = 0, cap = 0, w[W_COUNT] = { 0 }, used;
	char *(*rows)[W_COUNT] = NULL, *save = NULL, **names = NULL, num[2][32];
	const char **full = NULL;
	int width = kpt_cli_table_width(), rc = 0;

	for (char *line = strtok_r(tsv, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[W_COUNT] = { 0 }, *p = line;

		for (int c = 0; c < W_COUNT && p; c++) {
			f[c] = p;
			if ((p = strchr(p, '\t')))
				*p++ = '\0';
		}
		if (!f[W_SUITES])
			continue; /* not a row */
		if (n == cap) {
			void *t = realloc(rows, (cap = cap ? 2 * cap : 64) * sizeof *rows);

			if (!t) {
				rc = KPT_EXIT_ERROR;
				goto out;
			}
			rows = t;
		}
		memcpy(rows[n++], f, sizeof f);
	}
	for (int c = 0; c < W_COUNT; c++)
		w[c] = strlen(titles[c]);
	if (width <= 0)
		w[W_NAME] = 52, w[W_FAMILY] = 9;
	for (size_t i = 0; i < n; i++) {
		size_t k;

		rows[i][W_FLOPS] = strdup(fmt_si(strtod(rows[i][W_FLOPS], NULL), num[0], sizeof num[0]));
		rows[i][W_BYTES] = strdup(strtod(rows[i][W_BYTES], NULL) > 0 ?
					  kpt_cli_fmt_bytes(strtod(rows[i][W_BYTES], NULL), num[1], sizeof num[1]) : "-");
		for (int c = 0; c < W_COUNT; c++)
			if (rows[i][c] && (k = kpt_text_columns(kpt_cli_term(rows[i][c]))) > w[c])
				w[c] = k;
	}
	used = w[W_FAMILY] + 1 + w[W_FLOPS] + 1 + w[W_BYTES] + 2 + 1;
	full = calloc(n ? n : 1, sizeof *full);
	names = calloc(n ? n : 1, sizeof *names);
	if (!full || !names) {
		rc = KPT_EXIT_ERROR;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		full[i] = kpt_cli_term(rows[i][W_NAME]);
	/* on a terminal the suites get up to 16 columns of what is left */
	if (width > 0) {
		size_t left = (size_t)width > used + 24 ? (size_t)width - used : 24;
		size_t sw = w[W_SUITES] < 16 ? w[W_SUITES] : 16;

		w[W_NAME] = w[W_NAME] + sw <= left ? w[W_NAME] : left > sw + 12 ? left - sw : 12;
		w[W_SUITES] = left > w[W_NAME] ? left - w[W_NAME] : 4;
	}
	if (kpt_text_column(full, n, width > 0 ? w[W_NAME] : 0, KPT_CUT_MIDDLE, names) < 0) {
		rc = KPT_EXIT_ERROR;
		goto out;
	}
	printf("%-*s %-*s %*s %*s  %s\n", (int)w[W_NAME], titles[W_NAME], (int)w[W_FAMILY], titles[W_FAMILY],
	       (int)w[W_FLOPS], titles[W_FLOPS], (int)w[W_BYTES], titles[W_BYTES], titles[W_SUITES]);
	for (size_t i = 0; i < n; i++) {
		const char *su = kpt_cli_term(rows[i][W_SUITES]);
		int pad = (int)w[W_NAME] - (int)kpt_text_columns(names[i]);

		printf("%s%*s %-*s %*s %*s  ", names[i], pad > 0 ? pad : 0, "", (int)w[W_FAMILY],
		       kpt_cli_term(rows[i][W_FAMILY]), (int)w[W_FLOPS], rows[i][W_FLOPS] ? rows[i][W_FLOPS] : "?",
		       (int)w[W_BYTES], rows[i][W_BYTES] ? rows[i][W_BYTES] : "?");
		if (width > 0 && kpt_text_columns(su) > w[W_SUITES])
			printf("%.*s...\n", w[W_SUITES] > 3 ? (int)w[W_SUITES] - 3 : 0, su);
		else
			printf("%s\n", su);
	}
out:
	if (names)
		kpt_text_column_free(names, n);
	for (size_t i = 0; i < n; i++)
		free(rows[i][W_FLOPS]), free(rows[i][W_BYTES]);
	free(names);
	free(full);
	free(rows);
	if (rc)
		fprintf(stderr, "kptprof workloads: out of memory\n");
	return rc;
}

int cmd_workloads(int argc, char **argv)
{
	struct workloads_args a = { 0 };
	char path[PATH_MAX + 256];
	char *args[7];
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
	if (!json)
		args[n++] = "--tsv";
	args[n] = NULL;
	if (!json) {
		char *tsv = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&tsv, &len);

		if (!m) {
			fprintf(stderr, "kptprof workloads: out of memory\n");
			return KPT_EXIT_ERROR;
		}
		rc = run_listing(path, args, m);
		fclose(m);
		/* a runner that writes no tab-separated rows (not ours, or an old
		 * one) is passed through as it wrote */
		if (rc == 0 && tsv && !strchr(tsv, '\t'))
			fputs(tsv, stdout);
		else if (rc == 0)
			rc = print_table(tsv);
		free(tsv);
		return kpt_cli_stdout_done(rc);
	}
	return run_listing(path, args, stdout);
}
