/* cmd_gate.c - kptprof gate: record a suite, or a project's workloads
 * (kptprof.json), on this GPU (or take --from FILE), open this GPU model's
 * baseline (analyzer/baseline: a folder of sessions, or with --db the last
 * sessions of the history store), diff, write the reports, exit as diff
 * does. */
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
#include "kpt_baseline.h"
#include "kpt_cli.h"
#include "kpt_format.h"
#include "kpt_history.h"
#include "kpt_project.h"
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

/* ---- against a committed baseline: a folder of sessions, or the history
 * store's newest sessions (analyzer/baseline/kpt_baseline.h) ---- */

/* What gate records and gates against: the bundled suite, or a project's
 * workloads (its name is the suite; its folder, or its store, the baseline). */
struct gate_plan {
	const char *suite;
	struct kpt_project *project;  /* NULL: the bundled suite */
	const char *project_given;    /* --project FILE, NULL: found from the cwd */
	int dir_given;                /* --baselines */
	struct kpt_baseline_where where;
};

/* Opens the baseline of the plan for slug; none: the error says how to
 * make one for this case (the store's own message for --db). */
static int open_baseline(const struct gate_plan *g, const char *slug, struct kpt_baseline **b, struct kpt_diag *d)
{
	int rc = kpt_baseline_open(slug, g->suite, &g->where, b, d);
	char how[PATH_MAX + 64], upd[PATH_MAX + 32] = "";

	if (rc != KPT_E_NOTFOUND || g->where.db)
		return rc;
	/* update finds the project's folder itself from the project's tree */
	kpt_cli_record_how(g->suite, g->project ? g->project->path : NULL, how, sizeof how);
	if (!g->project || g->dir_given)
		snprintf(upd, sizeof upd, " --baselines %s", g->where.dir);
	else if (g->project_given)
		snprintf(upd, sizeof upd, " --project %s", g->project_given);
	kpt_diag_hint(d, "make one with '%s --runs 5 -o rec.kpt' and 'kptprof baseline update rec.kpt%s' on this GPU, "
		      "better on several machines, then commit it", how, upd);
	return rc;
}

/* A commit as the gate prints it: the first 12 characters, "-" unknown. */
static const char *short_commit(const char *c, char buf[13])
{
	snprintf(buf, 13, "%s", c && c[0] ? c : "-");
	return buf;
}

/* Says what rec is gated against, then diffs: the session files listed at
 * open (each a file: no second listing), or the store's side. */
static int gate_diff(const char *cmd, struct kpt_baseline *b, const char *rec, struct kpt_diff_cli *dc)
{
	struct kpt_baseline_desc ds;
	const char *const *files;
	size_t n;

	kpt_baseline_describe(b, &ds);
	if (kpt_baseline_side(b)) {
		char c0[13], c1[13];

		fprintf(stderr, "kptprof gate: %s vs baseline from history store '%s' (%s): branch '%s', the last %zu "
			"session%s of suite '%s' on %s, commits %s..%s (added %s..%s), %llu runs\n", kpt_cli_term(rec),
			kpt_cli_term(ds.where), ds.backend, kpt_cli_term(ds.branch), ds.sessions, ds.sessions == 1 ? "" : "s",
			kpt_cli_term(ds.suite), kpt_cli_term(ds.slug), kpt_cli_term(short_commit(ds.first_commit, c0)),
			kpt_cli_term(short_commit(ds.last_commit, c1)), kpt_cli_term(ds.first_added),
			kpt_cli_term(ds.last_added), (unsigned long long)ds.runs);
		return kpt_diff_cli_run_side(kpt_baseline_side(b), rec, dc);
	}
	fprintf(stderr, "kptprof gate: %s vs baseline %s (%zu session%s)\n", kpt_cli_term(rec), kpt_cli_term(ds.where),
		ds.sessions, ds.sessions == 1 ? "" : "s");
	files = kpt_baseline_files(b, &n);
	return kpt_diff_cli_run(cmd, files, n, rec, dc);
}

/* --from FILE: its GPU slug (one read of its header); the suite it names
 * must be the plan's (gating a seed recording against the default
 * baseline would be all NEW and GONE). */
static int from_slug(const char *path, const struct gate_plan *g, int suite_given, char *slug, size_t cap,
		     struct kpt_diag *d)
{
	char s[256];
	int rc = kpt_cli_file_series(path, slug, cap, s, sizeof s, d);

	/* the slug becomes a folder name under --baselines */
	if (rc == 0)
		rc = kpt_cli_check_component("GPU slug", slug, path, d);
	if (rc == 0 && !s[0] && !suite_given && !g->project) {
		/* a program's recording gated against the default suite would
		 * match nothing and pass for ever */
		kpt_diag_set(d, KPT_E_INVAL, "'%s' is not a recording of a suite: nothing to gate it against by default", path);
		return kpt_diag_hint(d, "name its baseline: 'kptprof gate --from %s --suite NAME' with a baseline of that "
				     "name, or 'kptprof diff BASELINE %s'", path, path);
	}
	if (rc == 0 && s[0] && strcmp(s, g->suite) != 0) {
		kpt_diag_set(d, KPT_E_INVAL, "'%s' is a recording of suite '%s', not '%s'", path, s, g->suite);
		rc = kpt_diag_hint(d, "gate it with --suite %s", s);
	}
	return rc;
}

/* Records the plan once through the recorder, its notes on stderr; r says
 * which GPU and suite it recorded. */
static int gate_record(const struct gate_plan *g, long runs, long settle, const char *out,
		       struct kpt_record_result *r, struct kpt_diag *d)
{
	struct kpt_record_opts o;
	int rc;

	kpt_cli_record_defaults(&o);
	o.runs = runs;
	o.settle_us = settle;
	o.out = out;
	o.suite = g->suite;
	rc = g->project ? kpt_record_project(g->project, NULL, 0, &o, r, d) : kpt_record_run(&o, r, d);
	if (rc < 0)
		return rc;
	for (int i = 0; i < r->nnotes; i++)
		fprintf(stderr, "%s%s\n", r->note[i].kind == KPT_NOTE_HINT ? "hint: " :
			r->note[i].kind == KPT_NOTE_WARNING ? "kptprof: warning: " : "kptprof: ", r->note[i].text);
	return 0;
}

/* gate --against's idle gap before each timed iteration, us: 1 ms took
 * the paired noise of the attention kernels on an H100 from 1.7-3.3% to
 * 0.2-0.8%, 10 ms to 0.1-0.3% (bench/RESULTS.md, "The power cap in the
 * paired noise"); 3 ms costs about 2 s per run of the default suite. */
#define KPT_AGAINST_SETTLE_US KPT_SUITE_SETTLE_US
#define NOT_GIVEN UINT64_MAX

struct gate_args {
	const char *suite, *dir, *from, *keep, *db, *branch, *against; /* NULL: not given */
	const char *project;                                            /* --project FILE, NULL: found or none */
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
	KPT_OPT_STRING(0, "project", "FILE", GA, project,
		       "gate the project of FILE (kptprof.json): its workloads, suite = its name, its baselines "
		       "folder or db (default: kptprof.json of the working folder or one above it, unless --suite)"),
	KPT_OPT_STRING(0, "baselines", "DIR", GA, dir,
		       "folder of the baselines (default $KPTPROF_BASELINES, else ./baselines, else the installed "
		       "share/kptprof/baselines)"),
	KPT_OPT_STRING(0, "db", "URL", GA, db,
		       "baseline from the history store instead: SQLite file or postgresql://... (default: none)"),
	KPT_OPT_U64(0, "baseline-sessions", "N", GA, nsess, KPT_HISTORY_MIN_SESSIONS, 1000,
		    "with --db: the last N sessions of the suite and GPU model, 2 to 1000 (default 10)"),
	KPT_OPT_STRING(0, "branch", "B", GA, branch, "with --db: the sessions' branch (default main)"),
	KPT_OPT_U64(0, "runs", "M", GA, runs, 2, 1000,
		    "runs to record, 2 to 1000; --against: pairs, 10 unless given; a project: its own (default 5)"),
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

/* gate without --against: the plan (a project, or the bundled suite), its
 * baseline opened once, the suite recorded once (or --from FILE), one diff. */
static int gate_committed(const char *cmd, struct gate_args *a, long runs)
{
	struct gate_plan g = { .suite = a->suite ? a->suite : "default", .project_given = a->project };
	struct kpt_diff_cli *dc = &a->dc;
	struct kpt_baseline *b = NULL;
	struct kpt_record_result r;
	struct kpt_gpu_list l;
	struct kpt_diag d = { 0 };
	char tmpl[] = "/tmp/kptprof-gate.XXXXXX", rec[PATH_MAX], slug[256];
	long settle;
	int rc = 0, made_tmp = 0, skip_probe = getenv("KPTPROF_SKIP_GPU_CHECK") != NULL;

	/* a project applies: --project FILE, else kptprof.json from the cwd
	 * up unless --suite names another suite (a bundled one) */
	if (kpt_cli_project(a->project, &g.project, &d) < 0)
		return kpt_diff_cli_fail(dc, &d);
	if (g.project && a->suite && strcmp(a->suite, g.project->name) != 0) {
		if (a->project) {
			rc = kpt_cli_usage_error(cmd, "--suite '%s' is not the project's name '%s' (its recordings' suite)",
						 kpt_cli_term(a->suite), kpt_cli_term(g.project->name));
			goto out;
		}
		kpt_project_destroy(g.project);
		g.project = NULL;
	}
	if (g.project)
		g.suite = g.project->name;
	g.dir_given = a->dir != NULL;
	/* --baselines or --db, else the project's store or folder, else the default folder */
	g.where.db = a->db ? a->db : g.project && !a->dir ? g.project->db : NULL;
	g.where.dir = a->dir ? a->dir : g.project ? g.project->baselines : default_baselines();
	g.where.branch = a->branch;
	g.where.nsessions = (uint32_t)a->nsess;
	if (!dc->suite)
		dc->suite = g.suite;
	dc->require_match = 1;
	if (a->from) {
		if (from_slug(a->from, &g, a->suite != NULL, slug, sizeof slug, &d) < 0 ||
		    open_baseline(&g, slug, &b, &d) < 0)
			goto fail;
		rc = gate_diff(cmd, b, a->from, dc);
		goto out;
	}
	/* the one probe: whether this machine records, and the GPU whose
	 * baseline to record like (the recorder's result says the rest);
	 * KPTPROF_SKIP_GPU_CHECK (tests with a stand-in collector): none, the
	 * baseline is found after recording */
	kpt_diag_clear(&d);
	slug[0] = '\0';
	if (!skip_probe && (kpt_collector_find(NULL)->probe(&l, &d) < 0 || l.n < 1)) {
		fprintf(stderr, "kptprof gate: no NVIDIA GPU or driver on this machine: nothing recorded (skipped)\n"
				"hint: 'kptprof gate --from FILE' gates a recording made elsewhere\n");
		rc = KPT_EXIT_SKIP;
		goto out;
	}
	if (!skip_probe) {
		snprintf(slug, sizeof slug, "%s", l.gpu[0].slug);
		if (kpt_cli_check_component("GPU slug", slug, "this GPU", &d) < 0 || open_baseline(&g, slug, &b, &d) < 0)
			goto fail;
	}
	/* Record as the baseline was recorded: an idle gap before each timed
	 * iteration changes what compute-bound kernels measure (the power
	 * state), so both sides need the same. A project's programs have no
	 * such gap unless asked. */
	settle = a->settle_us != NOT_GIVEN ? (long)a->settle_us : g.project ? -1 : KPT_SUITE_SETTLE_US;
	if (a->settle_us == NOT_GIVEN && !g.project && b && kpt_baseline_settle_us(b) >= 0)
		settle = kpt_baseline_settle_us(b);
	if (a->keep) {
		snprintf(rec, sizeof rec, "%s", a->keep);
	} else {
		if (!mkdtemp(tmpl)) {
			kpt_diag_set(&d, KPT_E_IO, "cannot make a temporary folder: %s", strerror(errno));
			goto fail;
		}
		made_tmp = 1;
		snprintf(rec, sizeof rec, "%s/%s.kpt", tmpl, g.suite);
	}
	/* a project's own runs unless --runs */
	if (g.project && !a->runs)
		runs = 0;
	if (g.project && runs)
		fprintf(stderr, "kptprof gate: recording project '%s' (%zu workload%s), %ld runs -> %s\n",
			kpt_cli_term(g.suite), g.project->nwl, g.project->nwl == 1 ? "" : "s", runs, kpt_cli_term(rec));
	else if (g.project)
		fprintf(stderr, "kptprof gate: recording project '%s' (%zu workload%s), its runs -> %s\n",
			kpt_cli_term(g.suite), g.project->nwl, g.project->nwl == 1 ? "" : "s", kpt_cli_term(rec));
	else
		fprintf(stderr, "kptprof gate: recording suite '%s', %ld runs, %ld us idle before each timed iteration "
				"-> %s\n", kpt_cli_term(g.suite), runs, settle, kpt_cli_term(rec));
	if ((rc = gate_record(&g, runs, settle, rec, &r, &d)) == KPT_E_NODEV) {
		kpt_cli_fail(&d);
		fprintf(stderr, "kptprof gate: the recorder found no usable GPU (skipped)\n");
		rc = KPT_EXIT_SKIP;
		goto out;
	}
	if (rc < 0)
		goto fail;
	if (r.status != 0) {
		kpt_diag_set(&d, KPT_E_UNSUPPORTED, "recording %s '%s' failed (exit status %d)",
			     g.project ? "project" : "suite", g.suite, r.status);
		goto fail;
	}
	/* what was recorded, from the recorder: no second probe, no reopening */
	if (r.suite[0] && strcmp(r.suite, g.suite) != 0) {
		kpt_diag_set(&d, KPT_E_MISMATCH, "'%s' was recorded as suite '%s', not '%s'", rec, r.suite, g.suite);
		goto fail;
	}
	if (!r.slug[0] && !slug[0] && kpt_cli_file_series(rec, r.slug, sizeof r.slug, NULL, 0, &d) < 0)
		goto fail; /* a stand-in collector's: the recorder probed no GPU */
	if (r.slug[0] && strcmp(r.slug, slug) != 0) {
		kpt_baseline_close(b);
		b = NULL;
		snprintf(slug, sizeof slug, "%s", r.slug);
		if (kpt_cli_check_component("GPU slug", slug, rec, &d) < 0 || open_baseline(&g, slug, &b, &d) < 0)
			goto fail;
	}
	rc = gate_diff(cmd, b, rec, dc);
	goto out;
fail:
	rc = kpt_diff_cli_fail(dc, &d);
out:
	if (made_tmp) {
		unlink(rec);
		rmdir(tmpl);
	}
	kpt_baseline_close(b);
	kpt_project_destroy(g.project);
	return rc;
}

int cmd_gate(int argc, char **argv)
{
	struct gate_args a = { .settle_us = NOT_GIVEN };
	struct kpt_diff_cli *dc = &a.dc;
	const char *suite, *dir, *from, *keep, *db, *branch, *against;
	char runs[24];
	struct kpt_diag d = { 0 };
	int rc, npass = 0, n;
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
	suite = a.suite ? a.suite : "default";
	dir = a.dir, from = a.from, keep = a.keep, db = a.db, branch = a.branch, against = a.against;
	snprintf(runs, sizeof runs, "%llu", (unsigned long long)(a.runs ? a.runs : against ? 10 : 5));
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
	rc = gate_committed(argv[0], &a, strtol(runs, NULL, 10));
out:
	kpt_diff_cli_release(dc);
	free(pass);
	return rc;
}
