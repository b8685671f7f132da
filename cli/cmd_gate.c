/* cmd_gate.c - kptprof gate: record a suite on this GPU (or take --from FILE),
 * find this GPU model's baseline (a folder of sessions, or with --db the
 * last sessions of the history store), diff, write the reports, exit as
 * diff does. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmd_diff.h"
#include "kpt_cli.h"
#include "kpt_format.h"
#include "kpt_history.h"
#include "kpt_record.h"

/* Where baselines live when --baselines is not given. */
static const char *default_baselines(void)
{
	return kpt_cli_baselines_dir();
}

/* True when this machine can record: the collector's GPU probe (kpt_record.h). */
static int have_gpu_driver(void)
{
	struct kpt_gpu_list l;
	struct kpt_diag d;

	kpt_diag_clear(&d);
	return kpt_collector_find(NULL)->probe(&l, &d) == 0;
}

/* Runs argv as a child: the program `file`, or argv[0] looked up in PATH
 * when file is NULL (its stdout then goes to stderr: tools' chatter);
 * returns its exit status, -1 when it could not be started. */
static int run_child(const char *file, char *const argv[])
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		if (file) {
			execv(file, argv);
		} else {
			dup2(STDERR_FILENO, STDOUT_FILENO);
			execvp(argv[0], argv);
		}
		fprintf(stderr, "kptprof gate: cannot run '%s': %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* `kptprof record --suite S --runs M --settle-us U -o OUT`, in this process (kpt_cli_record). */
static int run_record(const char *suite, const char *runs, long settle_us, const char *out)
{
	struct kpt_record_opts o;

	kpt_cli_record_defaults(&o);
	o.suite = suite;
	o.runs = strtol(runs, NULL, 10);
	o.settle_us = settle_us;
	o.out = out;
	return kpt_cli_record(&o);
}

/* The idle gap (meta "settle_us") the baseline at path was recorded with:
 * its newest session's (file names start with the time), 0 for a session
 * without the key (recorded before the gap existed), -1 when no session
 * can be read (the diff then names the problem). */
static long baseline_settle(const char *path)
{
	char newest[PATH_MAX] = "", file[PATH_MAX];
	struct stat sb;
	long v;

	if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		DIR *dir = opendir(path);
		struct dirent *e;

		while (dir && (e = readdir(dir))) {
			size_t n = strlen(e->d_name);

			if (n > 4 && strcmp(e->d_name + n - 4, ".kpt") == 0 && e->d_name[0] != '.' &&
			    strcmp(e->d_name, newest) > 0 && n < sizeof newest)
				memcpy(newest, e->d_name, n + 1);
		}
		if (dir)
			closedir(dir);
		if (!newest[0] || (size_t)snprintf(file, sizeof file, "%s/%s", path, newest) >= sizeof file)
			return -1;
	} else {
		snprintf(file, sizeof file, "%s", path);
	}
	v = kpt_cli_file_settle(file);
	return v < 0 ? -1 : v;
}

/* The GPU slug of the first GPU that recording here would use. */
static int this_gpu_slug(char *out, size_t cap, struct kpt_diag *d)
{
	struct kpt_gpu_list l;
	int rc = kpt_gpu_probe(&l, d);

	if (rc < 0)
		return rc;
	snprintf(out, cap, "%s", l.gpu[0].slug);
	return kpt_cli_check_component("GPU slug", out, "this GPU", d);
}

/* The baseline of suite for slug under dir: the folder of sessions, else
 * the one-file layout; into out. 0 when it exists, else -1 (out: the file
 * layout's path). */
static int baseline_path(const char *dir, const char *slug, const char *suite, char *out, size_t cap)
{
	struct stat sb;

	snprintf(out, cap, "%s/%s/%s", dir, slug, suite);
	if (stat(out, &sb) != 0 || !S_ISDIR(sb.st_mode))
		snprintf(out, cap, "%s/%s/%s.kpt", dir, slug, suite);
	return stat(out, &sb) == 0 ? 0 : -1;
}

/* No baseline for slug and suite under dir: the error and how to make one. */
static int no_baseline(const char *dir, const char *slug, const char *suite, const char *base, struct kpt_diag *d)
{
	kpt_diag_set(d, KPT_E_NOTFOUND, "no baseline for GPU '%s' and suite '%s' (looked for '%s/%s/%s/' and '%s')",
		     slug, suite, dir, slug, suite, base);
	return kpt_diag_hint(d, "make one with 'kptprof record --suite %s --runs 5 -o rec.kpt' and 'kptprof baseline "
			     "update rec.kpt --baselines %s' on this GPU, better on several machines, then commit it",
			     suite, dir);
}

static int run_tool(char *const argv[])
{
	return run_child(NULL, argv);
}

/* 1 when the workload runner's --help names opt (a base build from before
 * the option exists would refuse it), else 0. */
static int runner_knows(const char *runner, const char *opt)
{
	char buf[16384];
	size_t got = 0;
	int fds[2], st, found;
	pid_t pid;

	if (pipe(fds) != 0)
		return 0;
	fflush(NULL);
	if ((pid = fork()) < 0) {
		close(fds[0]);
		close(fds[1]);
		return 0;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(fds[1], STDOUT_FILENO);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		close(fds[0]);
		execl(runner, runner, "--help", (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		ssize_t n = read(fds[0], buf + got, sizeof buf - 1 - got);

		if (n > 0 && got + (size_t)n < sizeof buf - 1)
			got += (size_t)n;
		else if (n > 0)
			got = sizeof buf - 1;
		else if (n < 0 && errno == EINTR)
			continue;
		else
			break;
	}
	close(fds[0]);
	buf[got] = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	found = strstr(buf, opt) != NULL;
	return found;
}

/* The workload runner of a build folder: kpt-workloads where the build
 * puts it (cli/), or at the folder's top (an install's bin/). */
static int build_runner(const char *dir, char *out, size_t cap)
{
	static const char *const rel[] = { "cli/kpt-workloads", "kpt-workloads", "bin/kpt-workloads",
					   "kernels/runner/kpt-workloads" };

	for (size_t i = 0; i < sizeof rel / sizeof rel[0]; i++) {
		int n = snprintf(out, cap, "%s/%s", dir, rel[i]);

		if (n > 0 && (size_t)n < cap && access(out, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* This kptprof's own build: the folder above the binary (BUILD/cli/kptprof). */
static int own_build(char *out, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	char *slash;

	if (n <= 0)
		return -1;
	self[n] = 0;
	if (!(slash = strrchr(self, '/')))
		return -1;
	*slash = 0;         /* BUILD/cli */
	if (build_runner(self, out, cap) == 0)
		return 0;
	if (!(slash = strrchr(self, '/')))
		return -1;
	*slash = 0;         /* BUILD */
	return build_runner(self, out, cap);
}

/* Builds the workload runner of git ref `ref` in a worktree under tmp:
 * `git worktree add --detach`, then CMake for this build's CUDA
 * architectures. The runner's path goes to out. */
static int build_ref(const char *ref, const char *tmp, char *out, size_t cap, struct kpt_diag *d)
{
	char src[PATH_MAX], bld[PATH_MAX], arch[160] = "-DCMAKE_CUDA_ARCHITECTURES=native", jobs[32];
	char self[PATH_MAX], cache[PATH_MAX + 32], line[512];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	FILE *f;
	int rc;

	snprintf(src, sizeof src, "%s/src", tmp);
	snprintf(bld, sizeof bld, "%s/build", tmp);
	/* this build's architectures: BUILD/CMakeCache.txt above BUILD/cli/kptprof */
	if (n > 0) {
		char *sl;

		self[n] = 0;
		if ((sl = strrchr(self, '/')))
			*sl = 0;
		if ((sl = strrchr(self, '/')))
			*sl = 0;
		snprintf(cache, sizeof cache, "%s/CMakeCache.txt", self);
		if ((f = fopen(cache, "r"))) {
			while (fgets(line, sizeof line, f))
				if (strncmp(line, "CMAKE_CUDA_ARCHITECTURES:", 25) == 0) {
					char *v = strchr(line, '=');

					line[strcspn(line, "\n")] = 0;
					if (v && v[1])
						snprintf(arch, sizeof arch, "-DCMAKE_CUDA_ARCHITECTURES=%s", v + 1);
				}
			fclose(f);
		}
	}
	snprintf(jobs, sizeof jobs, "-j%ld", sysconf(_SC_NPROCESSORS_ONLN) > 0 ? sysconf(_SC_NPROCESSORS_ONLN) : 2);
	fprintf(stderr, "kptprof gate: building '%s' in %s (%s)\n", ref, tmp, arch + 2);
	{
		char *git[] = { "git", "worktree", "add", "--quiet", "--detach", src, (char *)ref, NULL };
		char *cfg[] = { "cmake", "-S", src, "-B", bld, "-DCMAKE_BUILD_TYPE=Release", arch, NULL };
		char *mk[] = { "cmake", "--build", bld, jobs, "--target", "kpt-workloads", NULL };

		if ((rc = run_tool(git)) != 0)
			return kpt_diag_set(d, KPT_E_NOTFOUND, "cannot check out '%s' (git worktree add: exit %d)", ref, rc);
		if ((rc = run_tool(cfg)) != 0 || (rc = run_tool(mk)) != 0)
			return kpt_diag_set(d, KPT_E_UNSUPPORTED, "cannot build '%s' (cmake: exit %d)", ref, rc);
	}
	if (build_runner(bld, out, cap) < 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "building '%s' made no kpt-workloads", ref);
	return 0;
}

/* gate --against: the suite of the build (or git ref) `against` and of this
 * build, interleaved on this machine by `kptprof ab` (paired verdicts, its
 * exit status), then the candidate's side against the committed baseline,
 * as a check for shifts both builds share (one line). */
static int gate_against(const char *against, const char *suite, const char *runs, uint64_t settle_us,
			const char *keep, const char *dir, char **pass, int npass, struct kpt_diff_cli *dc)
{
	char settle[24];
	char base_r[PATH_MAX], cand_r[PATH_MAX], tmp[] = "/tmp/kptprof-against.XXXXXX", out[PATH_MAX];
	char slug[256], bpath[PATH_MAX + 600], bfile[PATH_MAX + 16];
	struct kpt_diag d = { 0 };
	struct stat sb;
	char **argv = NULL;
	int k = 0, rc;

	if (!mkdtemp(tmp)) {
		kpt_diag_set(&d, KPT_E_IO, "cannot make a temporary folder: %s", strerror(errno));
		return kpt_cli_fail(&d);
	}
	if (own_build(cand_r, sizeof cand_r) < 0) {
		kpt_diag_set(&d, KPT_E_NOTFOUND, "cannot find this build's workload runner 'kpt-workloads' beside kptprof");
		rc = kpt_cli_fail(&d);
		goto out;
	}
	if (stat(against, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (build_runner(against, base_r, sizeof base_r) < 0) {
			kpt_diag_set(&d, KPT_E_NOTFOUND, "'%s' is a folder without a built kpt-workloads", against);
			kpt_diag_hint(&d, "give a build folder of the base commit (cmake --build BUILD --target kpt-workloads) or a git ref");
			rc = kpt_cli_fail(&d);
			goto out;
		}
	} else if (build_ref(against, tmp, base_r, sizeof base_r, &d) < 0) {
		rc = kpt_cli_fail(&d);
		goto out;
	}
	snprintf(out, sizeof out, "%s", keep ? keep : tmp);
	if (!(argv = calloc((size_t)npass + 16, sizeof *argv))) {
		rc = KPT_EXIT_ERROR;
		goto out;
	}
	argv[k++] = "ab";
	argv[k++] = "--runs";
	argv[k++] = (char *)runs;
	argv[k++] = "-o";
	argv[k++] = out;
	for (int i = 0; i < npass; i++)
		argv[k++] = pass[i];
	/* --settle-us: compute-bound kernels under the power cap vary by
	 * several percent from process to process with the state the power
	 * controller is in; an idle gap before each timed iteration takes
	 * that out (docs/decision-rule.md, "Same-machine A/B"). Both sides
	 * or neither: a base build from before the option has no such gap. */
	snprintf(settle, sizeof settle, "%llu", (unsigned long long)settle_us);
	if (settle_us && !(runner_knows(base_r, "--settle-us") && runner_knows(cand_r, "--settle-us"))) {
		fprintf(stderr, "kptprof gate: the base build's kpt-workloads has no --settle-us: both builds run "
				"without an idle gap (compute-bound kernels are noisier)\n");
		settle_us = 0;
	}
	argv[k++] = "--";
	argv[k++] = base_r;
	argv[k++] = "--suite";
	argv[k++] = (char *)suite;
	if (settle_us) {
		argv[k++] = "--settle-us";
		argv[k++] = settle;
	}
	argv[k++] = ":::";
	argv[k++] = cand_r;
	argv[k++] = "--suite";
	argv[k++] = (char *)suite;
	if (settle_us) {
		argv[k++] = "--settle-us";
		argv[k++] = settle;
	}
	fprintf(stderr, "kptprof gate: '%s' (base: %s) against this build (%s), interleaved on this GPU%s%s%s\n",
		suite, base_r, cand_r, settle_us ? ", " : "", settle_us ? settle : "",
		settle_us ? " us idle before each timed iteration" : "");
	rc = cmd_ab(k, argv);
	if (rc != KPT_EXIT_OK && rc != KPT_EXIT_REGRESSION)
		goto out;
	/* the committed baseline: shifts both builds share (one line) */
	snprintf(bfile, sizeof bfile, "%s/b.kpt", out);
	if (kpt_cli_file_series(bfile, slug, sizeof slug, NULL, 0, &d) == 0) {
		struct kpt_diff *df = NULL;
		const char *bases[1];

		snprintf(bpath, sizeof bpath, "%s/%s/%s", dir, slug, suite);
		bases[0] = bpath;
		if (stat(bpath, &sb) != 0) {
			fprintf(stderr, "kptprof gate: no committed baseline '%s' to check shared shifts against\n", bpath);
		} else if (kpt_diff_paths_multi(bases, 1, bfile, &dc->o, &df, &d) == 0) {
			fprintf(stderr, "kptprof gate: this build against the committed baseline %s: %u SLOW, %u AMBG of %zu keys%s\n",
				bpath, df->counts[KPT_V_SLOW], df->counts[KPT_V_AMBG], df->nrows,
				df->counts[KPT_V_SLOW] ? " (slower than other machines' sessions too: did the base branch regress? "
							  "'kptprof diff' on the recordings in -o shows which)" : "");
			kpt_diff_destroy(df);
		}
	}
out:
	free(argv);
	if (!keep) {
		char *rm[] = { "rm", "-rf", tmp, NULL };

		if (strstr(against, "/") == NULL && stat(tmp, &sb) == 0) {
			char src[PATH_MAX + 8];
			char *wt[] = { "git", "worktree", "remove", "--force", src, NULL };

			snprintf(src, sizeof src, "%s/src", tmp);
			if (stat(src, &sb) == 0)
				run_tool(wt);
		}
		run_tool(rm);
	}
	return rc;
}

/* The GPU slug of the recording at path; when it names a suite (meta
 * "suite"), that must be `suite` (gating a seed recording against the
 * default baseline would be all NEW and GONE). */
static int file_slug(const char *path, const char *suite, int suite_given, char *buf, size_t cap,
		     struct kpt_diag *d)
{
	char s[256];
	int rc = kpt_cli_file_series(path, buf, cap, s, sizeof s, d);

	/* the slug becomes a folder name under --baselines */
	if (rc == 0)
		rc = kpt_cli_check_component("GPU slug", buf, path, d);
	if (rc == 0 && !s[0] && !suite_given) {
		/* a program's recording gated against the default suite would
		 * match nothing and pass for ever */
		kpt_diag_set(d, KPT_E_INVAL, "'%s' is not a recording of a suite: nothing to gate it against by default", path);
		return kpt_diag_hint(d, "name its baseline: 'kptprof gate --from %s --suite NAME' with a baseline of that "
				     "name, or 'kptprof diff BASELINE %s'", path, path);
	}
	if (rc == 0 && s[0] && strcmp(s, suite) != 0) {
		kpt_diag_set(d, KPT_E_INVAL, "'%s' is a recording of suite '%s', not '%s'", path, s, suite);
		rc = kpt_diag_hint(d, "gate it with --suite %s", s);
	}
	return rc;
}

/* A commit as the gate prints it: the first 12 characters, "-" unknown. */
static const char *short_commit(const char *c, char buf[13])
{
	snprintf(buf, 13, "%s", c && c[0] ? c : "-");
	return buf;
}

/* The gate against the history store at url: the last n sessions of this
 * suite, GPU model and branch, through the same diff as a folder. */
static int gate_db(const char *url, const char *suite, const char *slug, const char *branch, uint32_t n,
		   const char *rec, struct kpt_diff_cli *dc)
{
	struct kpt_history_open_opts oo = { .read_only = 1 };
	struct kpt_history *h = NULL;
	struct kpt_history_set *set = NULL;
	struct kpt_diff_side *side = NULL;
	struct kpt_diag d = { 0 };
	char c0[13], c1[13];
	int rc;

	if (kpt_history_open(url, &oo, &h, &d) < 0 ||
	    kpt_history_gate_side(h, suite, slug, branch, n, &set, &side, &d) < 0) {
		kpt_history_close(h);
		return kpt_diff_cli_fail(dc, &d);
	}
	fprintf(stderr, "kptprof gate: %s vs baseline from history store '%s' (%s): branch '%s', the last %zu "
		"session%s of suite '%s' on %s, commits %s..%s (added %s..%s)\n", kpt_cli_term(rec),
		kpt_cli_term(kpt_history_where(h)), kpt_history_backend(h), kpt_cli_term(branch), set->nsessions,
		set->nsessions == 1 ? "" : "s", kpt_cli_term(suite), kpt_cli_term(slug),
		kpt_cli_term(short_commit(set->sessions[0].commit, c0)),
		kpt_cli_term(short_commit(set->sessions[set->nsessions - 1].commit, c1)),
		kpt_cli_term(set->sessions[0].added), kpt_cli_term(set->sessions[set->nsessions - 1].added));
	rc = kpt_diff_cli_run_side(side, rec, dc);
	kpt_diff_side_destroy(side);
	kpt_history_set_destroy(set);
	kpt_history_close(h);
	return rc;
}

/* gate --against's idle gap before each timed iteration, us: 1 ms took
 * the paired noise of the attention kernels on an H100 from 1.7-3.3% to
 * 0.2-0.8%, 10 ms to 0.1-0.3% (bench/RESULTS.md, "The power cap in the
 * paired noise"); 3 ms costs about 2 s per run of the default suite. */
#define KPT_AGAINST_SETTLE_US KPT_SUITE_SETTLE_US
#define NOT_GIVEN UINT64_MAX

struct gate_args {
	const char *suite, *dir, *from, *keep, *db, *branch, *against; /* NULL: not given */
	uint64_t runs, nsess;                                           /* 0: not given */
	uint64_t settle_us;                                             /* idle gap; NOT_GIVEN: default */
	struct kpt_diff_cli dc;
};

#define GA struct gate_args
/* gate's own options; kpt_gate_opts adds the diff options. */
static const struct kpt_opt gate_own_opts[] = {
	/* not KPT_OPT_STRING: '' gets the bad-suite-name message, as any bad name */
	{ .kind = KPT_OPTK_STRING, .name = "suite", .arg = "NAME", .off = offsetof(GA, suite),
	  .help = "suite to record; baseline: DIR/<gpu-slug>/NAME/ (sessions), else NAME.kpt (default default; "
		  "--from a recording of no suite needs it)" },
	KPT_OPT_STRING(0, "baselines", "DIR", GA, dir,
		       "folder of the baselines (default $KPTPROF_BASELINES, else ./baselines, else the installed "
		       "share/kptprof/baselines)"),
	KPT_OPT_STRING(0, "db", "URL", GA, db,
		       "baseline from the history store instead: SQLite file or postgresql://... (default: none)"),
	KPT_OPT_U64(0, "baseline-sessions", "N", GA, nsess, KPT_HISTORY_MIN_SESSIONS, 1000,
		    "with --db: the last N sessions of the suite and GPU model, 2 to 1000 (default 10)"),
	KPT_OPT_STRING(0, "branch", "B", GA, branch, "with --db: the sessions' branch (default main)"),
	KPT_OPT_U64(0, "runs", "M", GA, runs, 2, 1000,
		    "runs to record, 2 to 1000; --against: pairs, 10 unless given (default 5)"),
	KPT_OPT_STRING('o', "output", "FILE", GA, keep,
		       "keep the recording in FILE (default: a temporary file, removed)"),
	KPT_OPT_STRING(0, "from", "FILE", GA, from,
		       "gate this recording instead of recording (default: record; no GPU: exit 77)"),
	KPT_OPT_STRING(0, "against", "BUILD|REF", GA, against,
		       "A/B against a base build folder or git ref (built in a worktree): both builds' suite "
		       "interleaved here by 'kptprof ab', paired verdicts, then this build against the committed "
		       "baseline (one line) (default: off)"),
	KPT_OPT_U64(0, "settle-us", "U", GA, settle_us, 0, 1000000,
		    "the GPU idles U microseconds before each timed iteration of the suite, so each starts from "
		    "the same power state; 0: off (default: as the baseline was recorded; --against: 3000)"),
	KPT_OPT_END,
};

const struct kpt_opt kpt_gate_opts[] = {
	KPT_OPT_INCLUDE(gate_own_opts),
	KPT_OPT_TABLE(GA, dc, kpt_diff_rule_opts),
	KPT_OPT_TABLE(GA, dc, kpt_diff_report_opts),
	KPT_OPT_END,
};
#undef GA

/* The diff options among argv[1..argc) (already parsed: no error here),
 * for `ab` under --against: into pass, their count returned. */
static int diff_words(int argc, char **argv, char **pass)
{
	struct gate_args scratch = { 0 };
	int n = 0;

	for (int i = 1; i < argc; i++) {
		int i0 = i;

		if (kpt_opt_one("gate", kpt_diff_opts, &scratch.dc, argc, argv, &i) == 1)
			while (i0 <= i)
				pass[n++] = argv[i0++];
		else
			kpt_opt_one("gate", gate_own_opts, &scratch, argc, argv, &i); /* past its value */
	}
	kpt_diff_cli_release(&scratch.dc);
	return n;
}

int cmd_gate(int argc, char **argv)
{
	struct gate_args a = { .settle_us = NOT_GIVEN };
	struct kpt_diff_cli *dc = &a.dc;
	const char *suite, *dir, *from, *keep, *db, *branch, *against;
	char tmpl[] = "/tmp/kptprof-gate.XXXXXX", rec[PATH_MAX], slug[256], base[PATH_MAX], runs[24];
	struct kpt_diag d = { 0 };
	int rc, made_tmp = 0, suite_given, npass = 0, n;
	uint64_t nb;
	char **pass = calloc((size_t)argc + 1, sizeof *pass);

	if (!pass) {
		rc = kpt_cli_usage_error(argv[0], "out of memory");
		goto out;
	}
	if ((rc = kpt_opt_parse("gate", kpt_gate_opts, &a, argc, argv, &n, NULL)) != KPT_OPT_GO)
		goto out;
	if (n) {
		rc = kpt_cli_usage_error(argv[0], "unexpected argument '%s' (gate takes options only)", argv[1]);
		goto out;
	}
	/* no operands: argv is as given */
	npass = diff_words(argc, argv, pass);
	suite_given = a.suite != NULL;
	suite = a.suite ? a.suite : "default";
	dir = a.dir, from = a.from, keep = a.keep, db = a.db, branch = a.branch, against = a.against;
	snprintf(runs, sizeof runs, "%llu", (unsigned long long)(a.runs ? a.runs : against ? 10 : 5));
	nb = a.nsess ? a.nsess : KPT_HISTORY_GATE_SESSIONS;
	if (kpt_cli_check_component("suite", suite, "--suite", &d) < 0) {
		rc = kpt_cli_usage_error(argv[0], "bad suite name '%s': expected 1 to %d of a-z, 0-9, '.', '_', '-', "
					 "no leading '.', no '..'", kpt_cli_term(suite), KPT_CLI_COMPONENT_MAX);
		goto out;
	}
	if (!db && (a.nsess || branch)) {
		rc = kpt_cli_usage_error(argv[0], "'%s' picks sessions of the history store: give --db too",
					 a.nsess ? "--baseline-sessions" : "--branch");
		goto out;
	}
	if (db) {
		/* what the stored baseline cannot give: runs to pair or pick
		 * by number, and the samples pooled-u tests */
		const char *bad = dc->o.paired ? "--paired" : dc->o.base_runs ? "--base-runs" :
				  dc->o.method == KPT_DIFF_POOLED_U ? "--method pooled-u" : NULL;

		rc = 0;
		if (bad)
			rc = kpt_cli_usage_error(argv[0], "'%s' needs the baseline's recordings: not with --db", bad);
		else if (dir)
			rc = kpt_cli_usage_error(argv[0], "--db and --baselines name two baselines: give one");
		if (rc)
			goto out;
	}
	if (from && a.settle_us != NOT_GIVEN) {
		rc = kpt_cli_usage_error(argv[0], "--settle-us is how to record: not with --from (nothing is recorded)");
		goto out;
	}
	if (against && (from || db)) {
		rc = kpt_cli_usage_error(argv[0], "--against runs both builds here: not with %s", from ? "--from" : "--db");
		goto out;
	}
	if (!dir)
		dir = default_baselines();
	{
		/* the reports and --keep never over an input: --from, the
		 * store, a session of the baselines (checked before recording;
		 * with --against, --keep is ab's folder) */
		const char *const ins[] = { from, db, dir },
				  *const outs[] = { dc->json, dc->junit, dc->markdown, against ? NULL : keep };

		if ((rc = kpt_cli_outputs(argv[0], ins, 3, outs, 4)) != 0)
			goto out;
	}
	if (against) {
		if (!have_gpu_driver()) {
			fprintf(stderr, "kptprof gate: no NVIDIA GPU or driver on this machine: nothing recorded (skipped)\n");
			rc = KPT_EXIT_SKIP;
			goto out;
		}
		rc = gate_against(against, suite, runs, a.settle_us == NOT_GIVEN ? KPT_AGAINST_SETTLE_US : a.settle_us,
				  keep, dir, pass, npass, dc);
		goto out;
	}
	if (!dc->suite)
		dc->suite = suite;
	dc->require_match = 1;
	if (from) {
		snprintf(rec, sizeof rec, "%s", from);
	} else {
		if (!have_gpu_driver()) {
			fprintf(stderr, "kptprof gate: no NVIDIA GPU or driver on this machine: nothing recorded (skipped)\n"
					"hint: 'kptprof gate --from FILE' gates a recording made elsewhere\n");
			rc = KPT_EXIT_SKIP;
			goto out;
		}
		if (keep) {
			snprintf(rec, sizeof rec, "%s", keep);
		} else {
			if (!mkdtemp(tmpl)) {
				kpt_diag_set(&d, KPT_E_IO, "cannot make a temporary folder: %s", strerror(errno));
				rc = kpt_cli_fail(&d);
				goto out;
			}
			made_tmp = 1;
			snprintf(rec, sizeof rec, "%s/%s.kpt", tmpl, suite);
		}
		{
			/* Record as the baseline was recorded: an idle gap before
			 * each timed iteration changes what compute-bound kernels
			 * measure (the power state), so both sides need the same. */
			long settle = a.settle_us == NOT_GIVEN ? KPT_SUITE_SETTLE_US : (long)a.settle_us;

			if (!db) {
				if (this_gpu_slug(slug, sizeof slug, &d) < 0) {
					rc = kpt_diff_cli_fail(dc, &d);
					goto out;
				}
				if (baseline_path(dir, slug, suite, base, sizeof base) < 0) {
					no_baseline(dir, slug, suite, base, &d);
					rc = kpt_diff_cli_fail(dc, &d);
					goto out;
				}
				if (a.settle_us == NOT_GIVEN) {
					long bs = baseline_settle(base);

					if (bs >= 0)
						settle = bs;
				}
			}
			fprintf(stderr, "kptprof gate: recording suite '%s', %s runs, %ld us idle before each timed "
					"iteration -> %s\n", kpt_cli_term(suite), runs, settle, kpt_cli_term(rec));
			rc = run_record(suite, runs, settle, rec);
		}
		if (rc == KPT_EXIT_SKIP) {
			fprintf(stderr, "kptprof gate: 'kptprof record' found no usable GPU (skipped)\n");
			goto out;
		}
		if (rc != 0) {
			kpt_diag_set(&d, KPT_E_UNSUPPORTED, "recording suite '%s' failed (kptprof record exit status %d)",
				     suite, rc);
			rc = kpt_diff_cli_fail(dc, &d);
			goto out;
		}
	}
	if (file_slug(rec, suite, suite_given, slug, sizeof slug, &d) < 0) {
		rc = kpt_diff_cli_fail(dc, &d);
		goto out;
	}
	if (db) {
		rc = gate_db(db, suite, slug, branch ? branch : "main", (uint32_t)nb, rec, dc);
		goto out;
	}
	/* A folder of sessions (baseline update keeps one), else one file. */
	if (baseline_path(dir, slug, suite, base, sizeof base) < 0) {
		no_baseline(dir, slug, suite, base, &d);
		rc = kpt_diff_cli_fail(dc, &d);
		goto out;
	}
	fprintf(stderr, "kptprof gate: %s vs baseline %s\n", kpt_cli_term(rec), kpt_cli_term(base));
	{
		const char *bases[1] = { base };

		rc = kpt_diff_cli_run(argv[0], bases, 1, rec, dc);
	}
out:
	if (made_tmp) {
		unlink(rec);
		rmdir(tmpl);
	}
	kpt_diff_cli_release(dc);
	free(pass);
	return rc;
}
