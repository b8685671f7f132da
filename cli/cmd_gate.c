/* cmd_gate.c - kptprof gate: record a suite on this GPU (or take --from FILE),
 * find this GPU model's baseline (a folder of sessions, or with --db the
 * last sessions of the history store), diff, write the reports, exit as
 * diff does. */
#include <errno.h>
#include <limits.h>
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

/* Where baselines live when --baselines is not given. */
static const char *default_baselines(void)
{
	const char *e = getenv("KPT_BASELINES");

	return e && e[0] ? e : "baselines";
}

/* True when this machine shows an NVIDIA driver. */
static int have_gpu_driver(void)
{
	return access("/dev/nvidiactl", F_OK) == 0 || access("/proc/driver/nvidia/version", F_OK) == 0;
}

/* Runs `kptprof record --suite S --runs M -o OUT` as a child of this same
 * binary; returns its exit status, or -1 when it could not be started. */
static int run_record(const char *suite, const char *runs, const char *out)
{
	char *argv[] = { "kptprof", "record", "--suite", (char *)suite, "--runs", (char *)runs,
			 "-o", (char *)out, NULL };
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		fprintf(stderr, "kptprof gate: cannot run 'kptprof record': %s\n", strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The GPU slug of the recording at path; when it names a suite (meta
 * "suite"), that must be `suite` (gating a seed recording against the
 * default baseline would be all NEW and GONE). */
static int file_slug(const char *path, const char *suite, char *buf, size_t cap, struct kpt_diag *d)
{
	char s[256];
	int rc = kpt_cli_file_series(path, buf, cap, s, sizeof s, d);

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
		"session%s of suite '%s' on %s, commits %s..%s (added %s..%s)\n", rec, kpt_history_where(h),
		kpt_history_backend(h), branch, set->nsessions, set->nsessions == 1 ? "" : "s", suite, slug,
		short_commit(set->sessions[0].commit, c0), short_commit(set->sessions[set->nsessions - 1].commit, c1),
		set->sessions[0].added, set->sessions[set->nsessions - 1].added);
	rc = kpt_diff_cli_run_side(side, rec, dc);
	kpt_diff_side_destroy(side);
	kpt_history_set_destroy(set);
	kpt_history_close(h);
	return rc;
}

int cmd_gate(int argc, char **argv)
{
	struct kpt_diff_cli dc = { 0 };
	const char *suite = "default", *dir = NULL, *from = NULL, *runs = "5";
	const char *keep = NULL, *db = NULL, *nsess = NULL, *branch = NULL;
	char tmpl[] = "/tmp/kptprof-gate.XXXXXX", rec[PATH_MAX], slug[256], base[PATH_MAX];
	struct kpt_diag d = { 0 };
	struct stat sb;
	int rc, made_tmp = 0;
	uint64_t m, nb = KPT_HISTORY_GATE_SESSIONS;

	for (int i = 1; i < argc; i++) {
		if (kpt_cli_is_help(argv[i])) {
			rc = kpt_cli_help("gate");
			goto out;
		}
		{
			static const char *const names[] = { "--suite", "--baselines", "--from", "--runs", "-o",
							     "--plots", "--db", "--baseline-sessions", "--branch" };
			const char **const dst[] = { &suite, &dir, &from, &runs, &keep, &dc.plots, &db, &nsess,
						     &branch };

			rc = kpt_cli_opt_table(argc, argv, &i, names, dst, sizeof names / sizeof names[0]);
			if (rc < 0) {
				rc = KPT_EXIT_ERROR;
				goto out;
			}
			if (rc == 1)
				continue;
		}
		rc = kpt_diff_cli_option(argc, argv, &i, &dc);
		if (rc == 1)
			continue;
		if (rc == 0)
			rc = kpt_cli_usage_error(argv[0], "unknown argument '%s'", argv[i]);
		goto out;
	}
	if (kpt_cli_parse_u64(argv[0], "--runs", runs, 2, 1000, &m)) {
		rc = KPT_EXIT_ERROR;
		goto out;
	}
	if (!suite[0] || strchr(suite, '/')) {
		rc = kpt_cli_usage_error(argv[0], "bad suite name '%s'", suite);
		goto out;
	}
	if (!db && (nsess || branch)) {
		rc = kpt_cli_usage_error(argv[0], "'%s' picks sessions of the history store: give --db too",
					 nsess ? "--baseline-sessions" : "--branch");
		goto out;
	}
	if (db) {
		/* what the stored baseline cannot give: runs to pair or pick
		 * by number, and the samples pooled-u tests */
		const char *bad = dc.o.paired ? "--paired" : dc.o.base_runs ? "--base-runs" :
				  dc.o.method == KPT_DIFF_POOLED_U ? "--method pooled-u" : NULL;

		if (nsess && kpt_cli_parse_u64(argv[0], "--baseline-sessions", nsess, KPT_HISTORY_MIN_SESSIONS,
					       1000, &nb)) {
			rc = KPT_EXIT_ERROR;
			goto out;
		}
		rc = 0;
		if (bad)
			rc = kpt_cli_usage_error(argv[0], "'%s' needs the baseline's recordings: not with --db", bad);
		else if (dir)
			rc = kpt_cli_usage_error(argv[0], "--db and --baselines name two baselines: give one");
		else if (!db[0] || (branch && !branch[0]))
			rc = kpt_cli_usage_error(argv[0], "empty %s", !db[0] ? "--db" : "--branch");
		if (rc)
			goto out;
	}
	if (!dir)
		dir = default_baselines();
	if (!dc.suite)
		dc.suite = suite;
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
		fprintf(stderr, "kptprof gate: recording suite '%s', %s runs -> %s\n", suite, runs, rec);
		rc = run_record(suite, runs, rec);
		if (rc == KPT_EXIT_SKIP) {
			fprintf(stderr, "kptprof gate: 'kptprof record' found no usable GPU (skipped)\n");
			goto out;
		}
		if (rc != 0) {
			kpt_diag_set(&d, KPT_E_UNSUPPORTED, "recording suite '%s' failed (kptprof record exit status %d)",
				     suite, rc);
			rc = kpt_diff_cli_fail(&dc, &d);
			goto out;
		}
	}
	if (file_slug(rec, suite, slug, sizeof slug, &d) < 0) {
		rc = kpt_diff_cli_fail(&dc, &d);
		goto out;
	}
	if (db) {
		rc = gate_db(db, suite, slug, branch ? branch : "main", (uint32_t)nb, rec, &dc);
		goto out;
	}
	/* A folder of sessions (baseline update keeps one), else one file. */
	snprintf(base, sizeof base, "%s/%s/%s", dir, slug, suite);
	if (stat(base, &sb) != 0 || !S_ISDIR(sb.st_mode))
		snprintf(base, sizeof base, "%s/%s/%s.kpt", dir, slug, suite);
	if (stat(base, &sb) != 0) {
		kpt_diag_set(&d, KPT_E_NOTFOUND, "no baseline for GPU '%s' and suite '%s' (looked for '%s/%s/%s/' and '%s')",
			     slug, suite, dir, slug, suite, base);
		kpt_diag_hint(&d, "make one with 'kptprof record --suite %s --runs 5 -o rec.kpt' and 'kptprof baseline "
			      "update rec.kpt --baselines %s' on this GPU, better on several machines, then commit it",
			      suite, dir);
		rc = kpt_diff_cli_fail(&dc, &d);
		goto out;
	}
	fprintf(stderr, "kptprof gate: %s vs baseline %s\n", rec, base);
	{
		const char *bases[1] = { base };

		rc = kpt_diff_cli_run(argv[0], bases, 1, rec, &dc);
	}
out:
	if (made_tmp) {
		unlink(rec);
		rmdir(tmpl);
	}
	kpt_diff_cli_release(&dc);
	return rc;
}
