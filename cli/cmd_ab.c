/* cmd_ab.c - kptprof ab: two commands interleaved on this machine, each run a
 * fresh process under the collector, and paired verdicts.
 *
 *   kptprof ab [--runs M] [-o DIR] [diff options] -- CMD_A [ARGS...] ::: CMD_B [ARGS...]
 *
 * Pair i runs A then B when i is even and B then A when it is odd (so a
 * drift of the machine during the session weighs on both sides alike).
 * Each command is a project of one workload (kpt_ab_command_project) and
 * kpt_ab_run records the pairs (each run as `kptprof record --runs 1 --
 * CMD` would; the programs' output goes to DIR/ab.log); the runs of A
 * are merged into DIR/a.kpt and those of B into DIR/b.kpt (run i = pair i),
 * and B is diffed against A with the paired rule (docs/decision-rule.md,
 * "Same-machine A/B"): same verdicts, reports and exit status as diff.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd_ab.h"
#include "cmd_diff.h"
#include "kpt_ab.h"
#include "kpt_cli.h"
#include "kpt_record.h"

void kpt_ab_cli_notes(const char *cmd, const struct kpt_ab_notes *n)
{
	for (int i = 0; i < n->n; i++) {
		const char *t = kpt_cli_term(n->note[i].text);

		if (n->note[i].kind == KPT_NOTE_HINT)
			fprintf(stderr, "hint: %s\n", t);
		else
			fprintf(stderr, "kptprof %s: %s%s\n", cmd, n->note[i].kind == KPT_NOTE_WARNING ? "warning: " : "", t);
	}
}

int kpt_ab_cli_diff(const char *cmd, const char *dir, struct kpt_diff_cli *dc)
{
	char a[PATH_MAX + 16], b[PATH_MAX + 16];
	const char *bases[1] = { a };

	dc->o.paired = 1;
	/* Paired runs on one machine resolve ~0.1% on long kernels: a 1%
	 * threshold for kernels of 10 us and more, unless asked otherwise
	 * (docs/decision-rule.md, "Same-machine A/B"). */
	if (!(dc->o.threshold_pct > 0))
		dc->o.threshold_pct = 1;
	/* and 0.5% from 200 us: there paired noise is 0.04-0.1%, and a 1%
	 * threshold let a real +1% change (measured +0.96% [+0.86, +1.06])
	 * read AMBG; on the long A/A ab recordings of 6 fresh GPUs (12 gates)
	 * 0.5% flags none and finds +1% on keys >= 200 us in 96.7% (46.2% at
	 * 1%) (docs/decision-rule.md, "Same-machine A/B") */
	if (!(dc->o.long_threshold_pct > 0))
		dc->o.long_threshold_pct = dc->o.threshold_pct < 0.5 ? dc->o.threshold_pct : 0.5;
	snprintf(a, sizeof a, "%s/a.kpt", dir);
	snprintf(b, sizeof b, "%s/b.kpt", dir);
	/* the progress line's seconds count the comparison, not the pairs before it */
	if (kpt_cli_progress_start(cmd) != 0)
		return KPT_EXIT_ERROR;
	return kpt_diff_cli_run(cmd, bases, 1, b, dc);
}

void kpt_ab_cli_remove(const char *dir, long pairs)
{
	static const char *const names[] = { "a.kpt", "b.kpt", "ab.log", "build.log" };
	char p[PATH_MAX + 32];

	for (long i = 0; i < pairs; i++)
		for (int s = 0; s < 2; s++) {
			snprintf(p, sizeof p, "%s/%c-%ld.kpt", dir, s ? 'b' : 'a', i);
			unlink(p);
		}
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		snprintf(p, sizeof p, "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
}

/* One pair done: the progress line. */
static void pair_done(void *ctx, const struct kpt_ab_pair *p)
{
	(void)ctx;
	fprintf(stderr, "kptprof ab: pair %ld/%ld (%s first): A %.1f s, B %.1f s\n", p->i + 1, p->pairs,
		p->b_first ? "B" : "A", p->wall_s[0], p->wall_s[1]);
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
	/* diff's options, as there, but --threshold 1, --long-threshold 0.5 and --paired implied */
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
	char tmpl[] = "/tmp/kptprof-ab.XXXXXX", dir[PATH_MAX];
	char **cmd[2] = { NULL, NULL }, *cmdline[2] = { NULL, NULL };
	struct kpt_ab_command proj[2];
	struct kpt_record_opts ro;
	struct kpt_ab_opts ao = { 0 };
	struct kpt_ab_result res = { 0 };
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
	argv[split] = NULL; /* each command NULL-terminated: A's at :::, B's at argv[argc] */
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
	{
		/* a report that cannot be written fails now, not after the pairs */
		const char *const outs[] = { dcp->junit, dcp->markdown, dcp->json };

		if ((rc = kpt_cli_outputs(argv[0], NULL, 0, outs, 3)) != 0 || (rc = kpt_diff_cli_check(argv[0], dcp)) != 0)
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
	if (kpt_ab_command_project(cmd[0], "cmd", &proj[0], &d) < 0 ||
	    kpt_ab_command_project(cmd[1], "cmd", &proj[1], &d) < 0) {
		rc = kpt_diff_cli_fail(dcp, &d);
		goto out;
	}
	kpt_cli_record_defaults(&ro);
	ao.a = &proj[0].p;
	ao.b = &proj[1].p;
	ao.label[0] = cmdline[0];
	ao.label[1] = cmdline[1];
	ao.pairs = (long)m;
	ao.settle_us = -1;
	ao.dir = dir;
	ao.base = &ro;
	ao.progress = pair_done;
	fprintf(stderr, "kptprof ab: %llu pairs, A and B alternating first, each run a fresh process (log: %s/ab.log)\n",
		(unsigned long long)m, dir);
	rc = kpt_ab_run(&ao, &res, &d);
	kpt_ab_cli_notes("ab", &res.notes);
	if (rc == KPT_E_NODEV) {
		fprintf(stderr, "kptprof ab: no usable GPU (skipped)\n");
		rc = KPT_EXIT_SKIP;
		made_tmp = 0;
		goto out;
	}
	if (rc < 0) {
		rc = kpt_diff_cli_fail(dcp, &d);
		made_tmp = 0; /* keep the log and the runs made so far */
		goto out;
	}
	if (outdir)
		fprintf(stderr, "kptprof ab: recordings in %s/a.kpt and %s/b.kpt\n", dir, dir);
	rc = kpt_ab_cli_diff(argv[0], dir, dcp);
out:
	if (made_tmp)
		kpt_ab_cli_remove(dir, (long)m);
	free(cmdline[0]);
	free(cmdline[1]);
	kpt_diff_cli_release(dcp);
	return rc;
}
