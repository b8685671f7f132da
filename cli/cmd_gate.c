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

#include "cmd_ab.h"
#include "cmd_diff.h"
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
	char how[PATH_MAX + 64];

	kpt_diag_set(d, KPT_E_NOTFOUND, "no baseline for GPU '%s' and suite '%s' (looked for '%s/%s/%s/' and '%s')",
		     slug, suite, dir, slug, suite, base);
	return kpt_diag_hint(d, "make one with '%s --runs 5 -o rec.kpt' and 'kptprof baseline "
			     "update rec.kpt --baselines %s' on this GPU, better on several machines, then commit it",
			     kpt_cli_record_how(suite, NULL, how, sizeof how), dir);
}

/* One pair of gate --against done: the progress line. */
static void against_pair(void *ctx, const struct kpt_ab_pair *p)
{
	(void)ctx;
	fprintf(stderr, "kptprof gate: pair %ld/%ld (%s first): A %.1f s, B %.1f s\n", p->i + 1, p->pairs,
		p->b_first ? "B" : "A", p->wall_s[0], p->wall_s[1]);
}

/* This checkout's side of gate --against: the project file (--project,
 * else, without --suite, the kptprof.json that applies here), else the bundled suite of this
 * build (kpt-workloads beside kptprof, or $KPTPROF_WORKLOADS). Into *out. */
static int against_this(const char *project, const char *suite, int suite_given, const char *dir,
			struct kpt_project **out, struct kpt_diag *d)
{
	char file[PATH_MAX], here[PATH_MAX], runner[PATH_MAX];

	if (project)
		return kpt_project_load(project, out, d);
	if (!suite_given && getcwd(here, sizeof here) && kpt_project_find(here, file, sizeof file) == 0)
		return kpt_project_load(file, out, d);
	if (kpt_cli_find_runner(runner, sizeof runner) < 0) {
		kpt_diag_set(d, KPT_E_NOTFOUND, "no %s here and no workload runner 'kpt-workloads' beside kptprof: "
			     "nothing to run", KPT_PROJECT_FILE);
		return kpt_diag_hint(d, "write a %s (docs/projects.md), or build the kernels (a CUDA toolkit is "
				     "needed) or set KPTPROF_WORKLOADS", KPT_PROJECT_FILE);
	}
	return kpt_project_builtin(runner, suite, dir, out, d);
}

static void checked_out(const char *against, const struct kpt_ab_checkout *co)
{
	fprintf(stderr, "kptprof gate: '%s' is commit %.12s, checked out in %s\n", kpt_cli_term(against), co->commit,
		kpt_cli_term(co->path));
}

/* The base side of gate --against: a build folder of the bundled suite
 * (no checkout), else REF checked out into co and built, its own project
 * file (or the bundled suite) read from there. Build output to log. */
static int against_base(const char *against, const struct kpt_project *b, const char *suite, const char *dir,
			struct kpt_ab_checkout *co, int logfd, const char *log, struct kpt_project **out,
			struct kpt_diag *d)
{
	char runner[PATH_MAX], here[PATH_MAX], real[PATH_MAX], file[2 * PATH_MAX + 8], bld[PATH_MAX + 8];
	struct stat sb;
	size_t n;
	int rc;

	if (b->builtin && stat(against, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		if (kpt_ab_build_runner(against, runner, sizeof runner) < 0) {
			kpt_diag_set(d, KPT_E_NOTFOUND, "'%s' is a folder without a built kpt-workloads", against);
			return kpt_diag_hint(d, "give a build folder of the base commit (cmake --build BUILD --target "
					     "kpt-workloads) or a git ref");
		}
		return kpt_project_builtin(runner, suite, dir, out, d);
	}
	if (!b->builtin && (!realpath(b->path, real) || !realpath(b->root, here)))
		return kpt_diag_set(d, KPT_E_IO, "cannot resolve '%s': %s", b->path, strerror(errno));
	if (b->builtin && !getcwd(here, sizeof here))
		return kpt_diag_set(d, KPT_E_IO, "cannot read the current folder: %s", strerror(errno));
	if ((rc = kpt_ab_checkout(here, against, NULL, co, d)) < 0)
		return rc;
	if (b->builtin) {
		checked_out(against, co);
		snprintf(bld, sizeof bld, "%s/build", co->tmp);
		fprintf(stderr, "kptprof gate: building its kpt-workloads (log: %s)\n", kpt_cli_term(log));
		if ((rc = kpt_ab_build_suite(co->path, bld, logfd, log, runner, sizeof runner, d)) < 0)
			return rc;
		return kpt_project_builtin(runner, suite, dir, out, d);
	}
	/* the same file in the other revision: its path below the top */
	n = strlen(co->top);
	if (strncmp(real, co->top, n) != 0 || real[n] != '/')
		return kpt_diag_set(d, KPT_E_INVAL, "'%s' is not inside the git repository '%s'", real, co->top);
	snprintf(file, sizeof file, "%s%s", co->path, real + n);
	if (stat(file, &sb) != 0) {
		kpt_diag_set(d, KPT_E_NOTFOUND, "'%s' has no '%s': nothing to compare against", against, real + n + 1);
		return kpt_diag_hint(d, "compare against a revision that has the project file (it came later)");
	}
	if ((rc = kpt_project_load(file, out, d)) < 0)
		return rc;
	checked_out(against, co);
	if (!(*out)->build)
		return 0;
	fprintf(stderr, "kptprof gate: building it (log: %s)\n", kpt_cli_term(log));
	return kpt_ab_build(*out, co->path, logfd, log, 0, d);
}

/* After gate --against: this checkout's side b.kpt against the committed
 * baseline of its GPU, a check for shifts both revisions share (one
 * line). A project without a baseline for this GPU: one info line. */
static void against_committed(const struct kpt_project *b, const char *dir, const char *out, const char *rslug,
			      struct kpt_diff_cli *dc)
{
	char bpath[2 * PATH_MAX], bfile[PATH_MAX + 16], slug[256];
	const char *bdir = b->builtin ? dir : b->baselines;
	struct kpt_diff *df = NULL;
	const char *bases[1] = { bpath };
	struct kpt_diag d = { 0 };
	struct stat sb;

	snprintf(bfile, sizeof bfile, "%s/b.kpt", out);
	snprintf(slug, sizeof slug, "%s", rslug);
	/* the recorder names the GPU it probed; without a probe
	 * (KPTPROF_SKIP_GPU_CHECK) the recording does */
	if (!slug[0] && kpt_cli_file_series(bfile, slug, sizeof slug, NULL, 0, &d) < 0)
		return;
	if (!slug[0] || !bdir || kpt_cli_check_component("GPU slug", slug, bfile, &d) < 0)
		return;
	snprintf(bpath, sizeof bpath, "%s/%s/%s", bdir, slug, b->name);
	if (stat(bpath, &sb) != 0) {
		if (b->builtin)
			fprintf(stderr, "kptprof gate: no committed baseline '%s' to check shared shifts against\n",
				kpt_cli_term(bpath));
		else
			fprintf(stderr, "kptprof gate: project '%s' has no baseline for %s: shared shifts not checked\n",
				kpt_cli_term(b->name), kpt_cli_term(slug));
		return;
	}
	if (kpt_diff_paths_multi(bases, 1, bfile, &dc->o, &df, &d) == 0) {
		fprintf(stderr, "kptprof gate: this revision against the committed baseline %s: %u SLOW, %u AMBG of %zu keys%s\n",
			kpt_cli_term(bpath), df->counts[KPT_V_SLOW], df->counts[KPT_V_AMBG], df->nrows,
			df->counts[KPT_V_SLOW] ? " (slower than other machines' sessions too: did the base branch regress? "
						  "'kptprof diff' on the recordings in -o shows which)" : "");
		kpt_diff_destroy(df);
	}
}

/* gate --against: the workloads of REF (checked out and built in a git
 * worktree; for the bundled suite also a build folder) and of this
 * checkout, interleaved on this machine by kpt_ab_run, paired verdicts
 * (diff's exit status), then this side against the committed baseline as
 * a check for shifts both share (one line). */
static int gate_against(const char *against, const char *project, const char *suite, int suite_given, uint64_t pairs,
			uint64_t settle_us, const char *keep, const char *dir, struct kpt_diff_cli *dc)
{
	struct kpt_project *pa = NULL, *pb = NULL;
	struct kpt_ab_checkout co = { 0 };
	struct kpt_ab_opts ao = { 0 };
	struct kpt_ab_result res = { 0 };
	struct kpt_record_opts ro;
	struct kpt_diag d = { 0 };
	char tmp[PATH_MAX], out[PATH_MAX], log[PATH_MAX + 16], label[512];
	const char *tmpdir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
	int rc, made = 0, logfd = -1;

	if ((rc = against_this(project, suite, suite_given, dir, &pb, &d)) < 0)
		goto fail;
	if (keep && mkdir(keep, 0755) != 0 && errno != EEXIST) {
		rc = kpt_diag_set(&d, KPT_E_IO, "cannot make '%s': %s", keep, strerror(errno));
		goto fail;
	}
	snprintf(tmp, sizeof tmp, "%s/kptprof-against.XXXXXX", tmpdir);
	if (!keep && !mkdtemp(tmp)) {
		rc = kpt_diag_set(&d, KPT_E_IO, "cannot make a temporary folder: %s", strerror(errno));
		goto fail;
	}
	made = !keep;
	snprintf(out, sizeof out, "%s", keep ? keep : tmp);
	snprintf(log, sizeof log, "%s/build.log", out);
	if ((logfd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) < 0) {
		rc = kpt_diag_set(&d, KPT_E_IO, "cannot write '%s': %s", log, strerror(errno));
		goto fail;
	}
	if ((rc = against_base(against, pb, suite, dir, &co, logfd, log, &pa, &d)) < 0)
		goto fail;
	kpt_cli_record_defaults(&ro);
	snprintf(label, sizeof label, "%s%s%.12s%s", against, co.commit[0] ? " (" : "", co.commit,
		 co.commit[0] ? ")" : "");
	ao.a = pa;
	ao.b = pb;
	ao.label[0] = label;
	ao.label[1] = pb->builtin ? "this build" : NULL;
	ao.pairs = (long)pairs;
	/* --settle-us: compute-bound kernels under the power cap vary by
	 * several percent from process to process with the state the power
	 * controller is in; an idle gap before each timed iteration takes
	 * that out (docs/decision-rule.md, "Same-machine A/B"). The bundled
	 * suite's runner takes it; kpt_ab_run drops it for both sides when
	 * the base's runner is from before the option. */
	ao.settle_us = pb->builtin && settle_us ? (long)settle_us : -1;
	ao.dir = out;
	ao.base = &ro;
	ao.progress = against_pair;
	fprintf(stderr, "kptprof gate: '%s' (A: %s) against this checkout (B), %llu pairs interleaved on this machine "
		"(log: %s/ab.log)\n", kpt_cli_term(pb->name), kpt_cli_term(label), (unsigned long long)pairs,
		kpt_cli_term(out));
	rc = kpt_ab_run(&ao, &res, &d);
	kpt_ab_cli_notes("gate", &res.notes);
	if (rc == KPT_E_NODEV) {
		fprintf(stderr, "kptprof gate: no usable GPU (skipped)\n");
		rc = KPT_EXIT_SKIP;
		goto out;
	}
	if (rc < 0)
		goto fail;
	if (keep)
		fprintf(stderr, "kptprof gate: recordings in %s/a.kpt and %s/b.kpt\n", kpt_cli_term(out), kpt_cli_term(out));
	rc = kpt_ab_cli_diff("gate", out, dc);
	if (rc == KPT_EXIT_OK || rc == KPT_EXIT_REGRESSION)
		against_committed(pb, dir, out, res.slug, dc);
	goto out;
fail:
	rc = kpt_diff_cli_fail(dc, &d);
	/* keep the folder when the message names a log in it */
	if (made && strstr(d.msg, out))
		made = 0;
out:
	if (logfd >= 0)
		close(logfd);
	kpt_ab_checkout_remove(&co);
	if (made)
		kpt_ab_cli_remove(out, (long)pairs);
	kpt_project_destroy(pa);
	kpt_project_destroy(pb);
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
		    "runs to record, 2 to 1000; --against: pairs, 10 unless given (default 5)"),
	KPT_OPT_STRING('o', "output", "FILE", GA, keep,
		       "keep the recording in FILE (default: a temporary file, removed)"),
	KPT_OPT_STRING(0, "from", "FILE", GA, from,
		       "gate this recording instead of recording (default: record; no GPU: exit 77)"),
	KPT_OPT_STRING(0, "against", "BUILD|REF", GA, against,
		       "A/B against git ref REF, checked out in a worktree and built with the project's build "
		       "command (the bundled suite: CMake; or a build folder of it): every workload of both "
		       "revisions interleaved here, paired verdicts, then this revision against the committed "
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

int cmd_gate(int argc, char **argv)
{
	struct gate_args a = { .settle_us = NOT_GIVEN };
	struct kpt_diff_cli *dc = &a.dc;
	const char *suite, *dir, *from, *keep, *db, *branch, *against;
	char tmpl[] = "/tmp/kptprof-gate.XXXXXX", rec[PATH_MAX], slug[256], base[PATH_MAX], runs[24];
	struct kpt_diag d = { 0 };
	int rc, made_tmp = 0, suite_given, n;
	uint64_t nb;

	if ((rc = kpt_opt_parse("gate", kpt_gate_opts, &a, argc, argv, &n, NULL)) != KPT_OPT_GO)
		goto out;
	if (n) {
		rc = kpt_cli_usage_error(argv[0], "unexpected argument '%s' (gate takes options only)", argv[1]);
		goto out;
	}
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
	if (against) {
		if (!getenv("KPTPROF_SKIP_GPU_CHECK") && !have_gpu_driver()) {
			fprintf(stderr, "kptprof gate: no NVIDIA GPU or driver on this machine: nothing recorded (skipped)\n");
			rc = KPT_EXIT_SKIP;
			goto out;
		}
		rc = gate_against(against, a.project, suite, suite_given, a.runs ? a.runs : 10,
				  a.settle_us == NOT_GIVEN ? KPT_AGAINST_SETTLE_US : a.settle_us, keep, dir, dc);
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
	return rc;
}
