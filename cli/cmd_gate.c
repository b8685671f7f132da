/* cmd_gate.c - kptprof gate: record a suite on this GPU (or take --from FILE),
 * find this GPU model's baseline, diff, write the reports, exit as diff does. */
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

/* Slug of the first device of a recording, into buf. */
/* The GPU slug of the recording at path; when it names a suite (meta
 * "suite"), that must be `suite` (gating a seed recording against the
 * default baseline would be all NEW and GONE). */
static int file_slug(const char *path, const char *suite, char *buf, size_t cap, struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	const struct kpt_device *dev;
	const char *s;
	size_t n;
	int rc;

	if ((rc = kpt_file_open(path, &f, d)) == 0 && (rc = kpt_file_devices(f, &dev, &n, d)) == 0) {
		if (n == 0 || !dev[0].slug[0])
			rc = kpt_diag_set(d, KPT_E_FORMAT, "'%s' names no GPU: cannot pick a baseline", path);
		else if ((s = kpt_file_meta_get(f, "suite")) && s[0] && strcmp(s, suite) != 0) {
			kpt_diag_set(d, KPT_E_INVAL, "'%s' is a recording of suite '%s', not '%s'", path, s, suite);
			rc = kpt_diag_hint(d, "gate it with --suite %s", s);
		}
		else
			snprintf(buf, cap, "%s", dev[0].slug);
	}
	kpt_file_close(f);
	return rc;
}

int cmd_gate(int argc, char **argv)
{
	struct kpt_diff_cli dc = { 0 };
	const char *suite = "default", *dir = default_baselines(), *from = NULL, *runs = "5";
	const char *keep = NULL;
	char tmpl[] = "/tmp/kptprof-gate.XXXXXX", rec[PATH_MAX], slug[256], base[PATH_MAX];
	struct kpt_diag d = { 0 };
	struct stat sb;
	int rc, made_tmp = 0;
	uint64_t m;

	for (int i = 1; i < argc; i++) {
		if (kpt_cli_is_help(argv[i])) {
			rc = kpt_cli_help("gate");
			goto out;
		}
		{
			static const char *const names[] = { "--suite", "--baselines", "--from", "--runs", "-o",
							     "--plots" };
			const char **const dst[] = { &suite, &dir, &from, &runs, &keep, &dc.plots };

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
