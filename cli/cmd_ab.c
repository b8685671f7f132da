/* cmd_ab.c - kptprof ab: two commands interleaved on this machine, each run a
 * fresh process under the collector, and paired verdicts.
 *
 *   kptprof ab [--runs M] [-o DIR] [diff options] -- CMD_A [ARGS...] ::: CMD_B [ARGS...]
 *
 * Pair i runs A then B when i is even and B then A when it is odd (so a
 * drift of the machine during the session weighs on both sides alike).
 * Each run is `kptprof record --runs 1` (kpt_cli_record, in this process); the runs of A
 * are merged into DIR/a.kpt and those of B into DIR/b.kpt (run i = pair i),
 * and B is diffed against A with the paired rule (docs/decision-rule.md,
 * "Same-machine A/B"): same verdicts, reports and exit status as diff.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cmd_diff.h"
#include "kpt_cli.h"
#include "kpt_format.h"
#include "kpt_record.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Records `cmd...` once into out (kpt_cli_record, as `kptprof record
 * --runs 1 -o out -- cmd...` does), with the program's and the recorder's
 * output in log (appended). Returns record's exit status, -1 when it could
 * not start. */
static int record_one(char **cmd, int ncmd, const char *out, const char *log)
{
	char **argv = calloc((size_t)ncmd + 1, sizeof *argv);
	struct kpt_record_opts o;
	int fd, s1, s2, st;

	if (!argv)
		return -1;
	memcpy(argv, cmd, (size_t)ncmd * sizeof *argv);
	fflush(NULL);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0644); /* never through a planted link */
	s1 = fcntl(1, F_DUPFD_CLOEXEC, 3);
	s2 = fcntl(2, F_DUPFD_CLOEXEC, 3);
	if (fd >= 0 && s1 >= 0 && s2 >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
	}
	kpt_cli_record_defaults(&o);
	o.out = out;
	o.cmd = argv;
	st = kpt_cli_record(&o);
	fflush(NULL);
	if (fd >= 0 && s1 >= 0 && s2 >= 0) {
		dup2(s1, 1);
		dup2(s2, 2);
	}
	if (fd >= 0)
		close(fd);
	if (s1 >= 0)
		close(s1);
	if (s2 >= 0)
		close(s2);
	free(argv);
	return st;
}

/* Merges dir/<side>-<i>.kpt, i < m, into dir/<side>.kpt as runs 0..m-1,
 * then removes the parts. */
static int merge_side(const char *dir, char side, int m, const char *command, struct kpt_diag *d)
{
	char path[PATH_MAX + 32], part[PATH_MAX + 32], buf[64];
	struct kpt_writer *w = NULL;
	struct kpt_meta_merge *mm = NULL;
	int rc;

	snprintf(path, sizeof path, "%s/%c.kpt", dir, side);
	if ((rc = kpt_writer_create(path, NULL, &w, d)) < 0)
		return rc;
	rc = kpt_meta_merge_create(&mm, d);
	for (int i = 0; i < m && rc == 0; i++) {
		struct kpt_file *f = NULL;

		snprintf(part, sizeof part, "%s/%c-%d.kpt", dir, side, i);
		rc = kpt_file_open(part, &f, d);
		if (rc == 0)
			rc = kpt_file_copy_into(f, w, (uint32_t)i, i == 0, d); /* meta (host, time, boot) of the first run */
		if (rc == 0)
			rc = kpt_meta_merge_add(mm, f, d); /* the collector's keys of every run */
		kpt_file_close(f);
	}
	if (rc == 0)
		rc = kpt_meta_merge_write(mm, w, d);
	kpt_meta_merge_destroy(mm);
	if (rc == 0) {
		snprintf(buf, sizeof buf, "%d", m);
		kpt_writer_meta(w, "tool_version", "kptprof " KPT_VERSION, d);
		kpt_writer_meta(w, "command", command, d);
		kpt_writer_meta(w, "runs", buf, d);
		kpt_writer_meta(w, "ab_side", side == 'a' ? "A" : "B", d);
		rc = kpt_writer_commit(w, d);
	}
	kpt_writer_destroy(w);
	for (int i = 0; rc == 0 && i < m; i++) {
		snprintf(part, sizeof part, "%s/%c-%d.kpt", dir, side, i);
		unlink(part);
	}
	return rc;
}

static char *join(char **v, int n)
{
	size_t len = 1;
	char *s;

	for (int i = 0; i < n; i++)
		len += strlen(v[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (int i = 0; i < n; i++) {
		strcat(s, v[i]);
		if (i + 1 < n)
			strcat(s, " ");
	}
	return s;
}

struct ab_args {
	uint64_t runs;
	const char *outdir;
	struct kpt_diff_cli dc;
};

const struct kpt_opt kpt_ab_opts[] = {
	KPT_OPT_U64(0, "runs", "M", struct ab_args, runs, 2, 1000,
		    "pairs of runs, each a fresh process; A first in even pairs, B in odd (default 10)"),
	KPT_OPT_STRING('o', "output", "DIR", struct ab_args, outdir,
		       "keep the recordings as DIR/a.kpt and DIR/b.kpt (default: a temporary folder, removed)"),
	KPT_OPT_OPERAND("-- CMD_A ::: CMD_B",
			"the baseline's and the candidate's command, e.g. two builds' kpt-workloads --suite default"),
	/* diff's options, as there, but --threshold 1 and --paired implied */
	KPT_OPT_TABLE(struct ab_args, dc, kpt_diff_rule_opts),
	KPT_OPT_TABLE(struct ab_args, dc, kpt_diff_report_opts),
	KPT_OPT_END,
};

int cmd_ab(int argc, char **argv)
{
	struct ab_args args = { .runs = 10 };
	struct kpt_diff_cli *dcp = &args.dc;
	struct kpt_diag d = { 0 };
	const char *outdir;
	char tmpl[] = "/tmp/kptprof-ab.XXXXXX", dir[PATH_MAX], log[PATH_MAX + 16], part[PATH_MAX + 32];
	char **cmd[2] = { NULL, NULL }, *cmdline[2] = { NULL, NULL };
	int ncmd[2] = { 0, 0 }, sep = -1, split = -1, rc = 0, made_tmp = 0, nargs = 0;
	uint64_t m;
	struct kpt_gpu_list gpus;

	rc = kpt_opt_parse("ab", kpt_ab_opts, &args, argc, argv, &nargs, &sep);
	if (rc != KPT_OPT_GO)
		goto out;
	rc = 0;
	if (nargs) {
		rc = kpt_cli_usage_error(argv[0], "unexpected '%s' before --: expected -- CMD_A [ARGS...] ::: CMD_B [ARGS...]",
					 argv[1]);
		goto out;
	}
	sep = sep < argc ? sep - 1 : -1;   /* the index of "--" */
	m = args.runs;
	outdir = args.outdir;
	if (sep < 0) {
		rc = kpt_cli_usage_error(argv[0], "expected -- CMD_A [ARGS...] ::: CMD_B [ARGS...]");
		goto out;
	}
	for (int i = sep + 1; i < argc; i++)
		if (strcmp(argv[i], ":::") == 0) {
			split = i;
			break;
		}
	if (split < 0 || split == sep + 1 || split == argc - 1) {
		rc = kpt_cli_usage_error(argv[0], "expected two commands: -- CMD_A [ARGS...] ::: CMD_B [ARGS...]");
		goto out;
	}
	cmd[0] = argv + sep + 1;
	ncmd[0] = split - sep - 1;
	cmd[1] = argv + split + 1;
	ncmd[1] = argc - split - 1;
	cmdline[0] = join(cmd[0], ncmd[0]);
	cmdline[1] = join(cmd[1], ncmd[1]);
	if (!cmdline[0] || !cmdline[1]) {
		rc = kpt_cli_usage_error(argv[0], "out of memory");
		goto out;
	}
	if (!getenv("KPTPROF_SKIP_GPU_CHECK") && kpt_collector_find(NULL)->probe(&gpus, &d) < 0) {
		fprintf(stderr, "kptprof ab: no NVIDIA GPU or driver on this machine: nothing recorded (skipped)\n"
				"hint: 'kptprof diff --paired A.kpt B.kpt' compares recordings made elsewhere\n");
		rc = KPT_EXIT_SKIP;
		goto out;
	}
	if (outdir) {
		if (mkdir(outdir, 0755) != 0 && errno != EEXIST) {
			kpt_diag_set(&d, KPT_E_IO, "cannot make '%s': %s", outdir, strerror(errno));
			rc = kpt_diff_cli_fail(dcp, &d);
			goto out;
		}
		snprintf(dir, sizeof dir, "%s", outdir);
	} else {
		if (!mkdtemp(tmpl)) {
			kpt_diag_set(&d, KPT_E_IO, "cannot make a temporary folder: %s", strerror(errno));
			rc = kpt_diff_cli_fail(dcp, &d);
			goto out;
		}
		made_tmp = 1;
		snprintf(dir, sizeof dir, "%s", tmpl);
	}
	snprintf(log, sizeof log, "%s/ab.log", dir);
	fprintf(stderr, "kptprof ab: %llu pairs, A and B alternating first, each run a fresh process (log: %s)\n",
		(unsigned long long)m, log);
	for (uint64_t i = 0; i < m; i++) {
		double t[2];

		for (int k = 0; k < 2; k++) {
			int s = (i % 2 == 0) ? k : 1 - k; /* ABBA... */
			double t0 = now_s();
			int st;

			snprintf(part, sizeof part, "%s/%c-%llu.kpt", dir, s ? 'b' : 'a', (unsigned long long)i);
			st = record_one(cmd[s], ncmd[s], part, log);
			t[s] = now_s() - t0;
			if (st != 0) {
				if (st == KPT_EXIT_SKIP)
					fprintf(stderr, "kptprof ab: no usable GPU (skipped)\n");
				else
					kpt_diag_set(&d, KPT_E_UNSUPPORTED, "run %llu of %c ('%s') failed (kptprof record exit status %d); see '%s'",
						     (unsigned long long)i, s ? 'B' : 'A', cmdline[s], st, log);
				rc = st == KPT_EXIT_SKIP ? KPT_EXIT_SKIP : kpt_diff_cli_fail(dcp, &d);
				made_tmp = 0; /* keep the log and the runs made so far */
				goto out;
			}
		}
		fprintf(stderr, "kptprof ab: pair %llu/%llu (%s first): A %.1f s, B %.1f s\n",
			(unsigned long long)i + 1, (unsigned long long)m, i % 2 == 0 ? "A" : "B", t[0], t[1]);
	}
	if (merge_side(dir, 'a', (int)m, cmdline[0], &d) < 0 || merge_side(dir, 'b', (int)m, cmdline[1], &d) < 0) {
		rc = kpt_diff_cli_fail(dcp, &d);
		goto out;
	}
	if (outdir)
		fprintf(stderr, "kptprof ab: recordings in %s/a.kpt and %s/b.kpt\n", dir, dir);
	dcp->o.paired = 1;
	/* Paired runs on one machine resolve ~0.1% on long kernels: a 1%
	 * threshold for kernels of 10 us and more, unless asked otherwise
	 * (docs/decision-rule.md, "Same-machine A/B"). */
	if (!(dcp->o.threshold_pct > 0))
		dcp->o.threshold_pct = 1;
	{
		char a[PATH_MAX + 16], b[PATH_MAX + 16];
		const char *bases[1] = { a };

		snprintf(a, sizeof a, "%s/a.kpt", dir);
		snprintf(b, sizeof b, "%s/b.kpt", dir);
		rc = kpt_diff_cli_run(argv[0], bases, 1, b, dcp);
	}
out:
	if (made_tmp) {
		char p[PATH_MAX + 32];

		for (uint64_t i = 0; i < m; i++)
			for (int s = 0; s < 2; s++) {
				snprintf(p, sizeof p, "%s/%c-%llu.kpt", dir, s ? 'b' : 'a', (unsigned long long)i);
				unlink(p);
			}
		snprintf(p, sizeof p, "%s/a.kpt", dir);
		unlink(p);
		snprintf(p, sizeof p, "%s/b.kpt", dir);
		unlink(p);
		unlink(log);
		rmdir(dir);
	}
	free(cmdline[0]);
	free(cmdline[1]);
	kpt_diff_cli_release(dcp);
	return rc;
}
