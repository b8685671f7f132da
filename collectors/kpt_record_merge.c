/* kpt_record_merge.c - the recorder's last step (kpt_record_int.h): the
 * GPU's ceilings, the per-process files of the temporary folder and their
 * status lines, and the merge into one recording with its meta.
 * CUDA-free; linked into kptprof. Prints nothing: notes. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kpt_grow.h"
#include "kpt_format.h"
#include "kpt_inject.h"
#include "kpt_project.h"
#include "kpt_outfile.h"
#include "kpt_record_int.h"
#include "kpt_stats.h"
#include "kpt_window.h"

/* ---- ceilings ------------------------------------------------------------------------------ */

/* This boot's id (/proc/sys/kernel/random/boot_id) into out, "" when
 * there is none. */
static void boot_id(char *out, size_t cap)
{
	FILE *bf = fopen("/proc/sys/kernel/random/boot_id", "r");

	out[0] = '\0';
	if (bf && fgets(out, (int)cap, bf))
		out[strcspn(out, "\n")] = '\0';
	else
		out[0] = '\0';
	if (bf)
		fclose(bf);
}

/* $XDG_CACHE_HOME/kptprof/ceilings-<uuid>-<boot id>.tsv, else
 * ~/.cache/kptprof/...: once per GPU and boot, so that every session
 * (a machine and boot, what the rule calls a machine) carries ceilings
 * measured in it, which the rule's calibration step compares
 * (docs/decision-rule.md, "Calibration"); creates the folders. Returns 0,
 * or -1 when there is no home. */
static int ceilings_path(const char *uuid, char *out, size_t cap)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX], boot[64];

	if (xdg && *xdg)
		snprintf(dir, sizeof dir, "%s/kptprof", xdg);
	else if (home && *home)
		snprintf(dir, sizeof dir, "%s/.cache/kptprof", home);
	else
		return -1;
	if (xdg && *xdg) {
		mkdir(xdg, 0700); /* may not exist yet (the XDG spec says create it, 0700) */
	} else {
		char parent[PATH_MAX];

		snprintf(parent, sizeof parent, "%s/.cache", home);
		mkdir(parent, 0755);
	}
	mkdir(dir, 0755);
	boot_id(boot, sizeof boot);
	if ((size_t)snprintf(out, cap, "%s/ceilings-%s%s%s.tsv", dir, uuid, boot[0] ? "-" : "", boot) >= cap)
		return -1; /* a home too deep for a path: no cache */
	return 0;
}

/* Splits a ceilings line "uuid copy bf16 name p_copy p_bf16 p_fp8 p_mhz"
 * (kpt-workloads --calibrate; older runners wrote the first four fields)
 * in place at its tabs: up to 8 fields into f; returns how many. */
static int ceilings_fields(char *line, char *f[8])
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	for (char *p = line; n < 8; p++) {
		f[n++] = p;
		if (!(p = strchr(p, '\t')))
			break;
		*p = '\0';
	}
	return n;
}

static int positive(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end != s && *end == '\0' && *v > 0 && *v < 1e9 ? 0 : -1;
}

/* Parses a ceilings line: 0 when its uuid matches and both ceilings are
 * positive; the probes into *pr when the line has them (runs 1), else
 * pr->runs 0. */
static int ceilings_parse(const char *line, const char *uuid, double *copy, double *bf16,
			  struct kpt_record_probes *pr)
{
	char cut[1024], *f[8];
	int n;

	snprintf(cut, sizeof cut, "%s", line);
	n = ceilings_fields(cut, f);

	memset(pr, 0, sizeof *pr);
	if (n < 3 || strcmp(f[0], uuid) != 0 || positive(f[1], copy) < 0 || positive(f[2], bf16) < 0)
		return -1;
	/* e4m3 is 0 before compute capability 8.9: the other three must be there */
	if (n == 8 && positive(f[4], &pr->copy_gbps) == 0 && positive(f[5], &pr->bf16_tflops) == 0 &&
	    positive(f[7], &pr->sm_mhz) == 0) {
		if (positive(f[6], &pr->fp8_tflops) < 0)
			pr->fp8_tflops = 0;
		pr->runs = 1;
	}
	return 0;
}

#define KPT_PROBES_MAX 4096 /* lines read from one calibration file */

int kpt_record_probes_read(const char *path, const char *uuid, struct kpt_record_probes *c)
{
	double *v[4] = { NULL, NULL, NULL, NULL };
	unsigned n = 0, nfp8 = 0;
	char line[1024];
	struct stat st;
	int fd, rc = -1;
	FILE *f;

	memset(c, 0, sizeof *c);
	/* the recorder's own temporary folder; still no link, no FIFO */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return -1;
	}
	for (int k = 0; k < 4; k++)
		if (!(v[k] = calloc(KPT_PROBES_MAX, sizeof *v[k])))
			goto out;
	while (n < KPT_PROBES_MAX && fgets(line, sizeof line, f)) {
		struct kpt_record_probes p;
		double copy, bf16;

		if (ceilings_parse(line, uuid, &copy, &bf16, &p) < 0 || !p.runs)
			continue;
		v[0][n] = p.copy_gbps;
		v[1][n] = p.bf16_tflops;
		v[3][n] = p.sm_mhz;
		if (p.fp8_tflops > 0)
			v[2][nfp8++] = p.fp8_tflops;
		n++;
	}
	if (n > 0) {
		c->copy_gbps = kpt_median_f64(v[0], n);
		c->bf16_tflops = kpt_median_f64(v[1], n);
		c->fp8_tflops = nfp8 ? kpt_median_f64(v[2], nfp8) : 0;
		c->sm_mhz = kpt_median_f64(v[3], n);
		c->runs = n;
		rc = 0;
	}
out:
	for (int k = 0; k < 4; k++)
		free(v[k]);
	fclose(f);
	return rc;
}

int kpt_record_cmd_is_runner(char *const *argv)
{
	const char *base = argv && argv[0] ? strrchr(argv[0], '/') : NULL;

	return argv && argv[0] && strcmp(base ? base + 1 : argv[0], "kpt-workloads") == 0;
}

/* Starts the workload runner (argv[0] is its path) with its stdout into a
 * pipe and returns the read end, or NULL when it could not be started.
 * Pair with runner_finish(). */
static FILE *runner_start(char *const argv[], pid_t *pid)
{
	int fds[2];
	FILE *in = NULL;

	if (pipe(fds) < 0)
		return NULL;
	fflush(NULL);
	if ((*pid = fork()) == 0) {
		dup2(fds[1], STDOUT_FILENO);
		close(fds[0]);
		close(fds[1]);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fds[1]);
	if (*pid > 0 && (in = fdopen(fds[0], "r")))
		return in;
	close(fds[0]);
	if (*pid > 0)
		while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
			;
	return NULL;
}

/* Closes in and waits for the runner (record forwards SIGINT/SIGTERM, so
 * waitpid may be interrupted). Returns 0 when it exited with status 0. */
static int runner_finish(FILE *in, pid_t pid)
{
	int status = 0;

	fclose(in);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* This GPU's (CUDA ordinal 0, as the runner sees it) copy and bf16
 * ceilings into o: from the cache when there, else by running
 * `runner --calibrate` (about a second, outside any recording) and
 * caching. Best effort: a failure leaves o's ceilings 0 and warns. */
/* The ceilings of one GPU (`runner --calibrate`), uuid "" none. */
struct ceil {
	char uuid[48];
	double copy_gbps, bf16_tflops;
	/* the probes this recording carries (meta calibration.*) and where
	 * they were measured; runs 0: none */
	struct kpt_record_probes probes;
	const char *probes_where;
};

static void ceilings(struct ceil *o, struct kpt_record_result *res, const char *runner, const struct kpt_gpu *gpu)
{
	char path[PATH_MAX + 64] = "", line[512] = "";
	char *argv[] = { (char *)runner, "--calibrate", NULL };
	int cached = 0, ok;
	FILE *f;
	pid_t pid;

	if (!gpu->uuid[0])
		return;
	if (ceilings_path(gpu->uuid, path, sizeof path) == 0 && (f = fopen(path, "r"))) {
		cached = fgets(line, sizeof line, f) &&
			 ceilings_parse(line, gpu->uuid, &o->copy_gbps, &o->bf16_tflops, &o->probes) == 0 &&
			 o->probes.runs > 0; /* an older runner's line: measured again */
		fclose(f);
	}
	if (!cached) {
		ok = (f = runner_start(argv, &pid)) != NULL;
		if (ok && !fgets(line, sizeof line, f))
			line[0] = '\0';
		if (ok && runner_finish(f, pid) < 0)
			ok = 0;
		if (!ok || ceilings_parse(line, gpu->uuid, &o->copy_gbps, &o->bf16_tflops, &o->probes) < 0) {
			kpt_record_note(res, KPT_NOTE_WARNING, "'%s --calibrate' failed: no ceilings in this recording", runner);
			o->copy_gbps = o->bf16_tflops = 0;
			return;
		}
		/* whole or not at all, never through a link (kpt_outfile.h) */
		if (path[0] && kpt_out_create(path, &f, NULL) == 0) {
			fputs(line, f);
			kpt_out_publish(f, path, 0, NULL);
		}
	}
	snprintf(o->uuid, sizeof o->uuid, "%s", gpu->uuid);
	kpt_record_note(res, KPT_NOTE_INFO, "ceilings of %s: copy %.0f GB/s, bf16 %.0f TFLOP/s (%s)", gpu->name,
		o->copy_gbps, o->bf16_tflops, cached ? "cached" : "measured");
}

/* Writes, before any file is copied, the device rows of the first file
 * whose UUID has ceilings, with the ceilings filled in: merging keeps the
 * first row of a UUID. */
static int ceilings_devices(const struct ceil *o, struct kpt_writer *w, const char *first,
			    struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	const struct kpt_device *dev;
	size_t n = 0;
	uint32_t k = 0;
	int rc;

	if (!o->uuid[0])
		return 0;
	if ((rc = kpt_file_open(first, &f, d)) == 0 && (rc = kpt_file_devices(f, &dev, &n, d)) == 0)
		for (size_t i = 0; i < n && rc == 0; i++)
			if (strcmp(dev[i].uuid, o->uuid) == 0) {
				struct kpt_device c = dev[i];

				c.index = k++;
				c.copy_gbps = o->copy_gbps;
				c.bf16_tflops = o->bf16_tflops;
				rc = kpt_writer_device(w, &c, d);
			}
	kpt_file_close(f);
	return rc;
}

/* ---- collecting the per-process files -------------------------------------------------- */

struct proc_file {
	char name[300];
	long run;
	long wl;                    /* a project's workload index ("-w003"), -1 none */
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct proc_file *)a)->name, ((const struct proc_file *)b)->name);
}

/* Lists the .kpt files of tmp (sorted: by run, then pid) into *files, and reports
 * the first error status line seen into d (status files say why a process
 * could not record). Returns the number of files, or -1 on error. */
static int list_files(const char *tmp, struct proc_file **files, struct kpt_diag *err)
{
	DIR *dir = opendir(tmp);
	struct dirent *e;
	struct proc_file *v = NULL;
	int n = 0;
	size_t cap = 0;

	if (!dir)
		return -1;
	while ((e = readdir(dir))) {
		size_t len = strlen(e->d_name);
		char buf[PATH_MAX + 300], line[1400];
		FILE *f;

		if (len > 7 && strcmp(e->d_name + len - 7, ".status") == 0 && e->d_name[0] == 'r') {
			snprintf(buf, sizeof buf, "%s/%s", tmp, e->d_name);
			if (!(f = fopen(buf, "r")))
				continue;
			while (fgets(line, sizeof line, f)) {
				line[strcspn(line, "\n")] = '\0';
				if (strncmp(line, "error ", 6) == 0 && err->code == 0) {
					const char *msg = strchr(line + 6, ' ');
					static const struct { const char *name; enum kpt_err code; } codes[] = {
						{ "busy", KPT_E_BUSY }, { "perm", KPT_E_PERM },
						{ "nodev", KPT_E_NODEV }, { "io", KPT_E_IO },
					};
					enum kpt_err code = KPT_E_CUPTI;

					for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
						if (strncmp(line + 6, codes[i].name, strlen(codes[i].name)) == 0)
							code = codes[i].code;
					kpt_diag_set(err, code, "%s", msg ? msg + 1 : line + 6);
				} else if (strncmp(line, "hint ", 5) == 0 && err->code != 0 && !err->hint[0]) {
					kpt_diag_hint(err, "%s", line + 5);
				}
			}
			fclose(f);
			continue;
		}
		if (len < 5 || strcmp(e->d_name + len - 4, ".kpt") != 0 || e->d_name[0] != 'r')
			continue;
		if (kpt_grow(&v, &cap, (size_t)n + 1, sizeof *v) < 0) {
			free(v);
			closedir(dir);
			return -1;
		}
		snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
		v[n].run = strtol(e->d_name + 1, NULL, 10);
		{
			const char *w = strstr(e->d_name, "-w");

			v[n].wl = w && w[2] >= '0' && w[2] <= '9' ? strtol(w + 2, NULL, 10) : -1;
		}
		n++;
	}
	closedir(dir);
	if (n > 1)
		qsort(v, (size_t)n, sizeof *v, by_name);
	*files = v;
	return n;
}

static void meta_time(char *buf, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Declares in meta the FLOPs and bytes of every workload the runner was
 * asked to run ("workload.<name>.flops", "workload.<name>.bytes"), as
 * `kpt-workloads --list --tsv` states them, so reports can show TFLOP/s,
 * GB/s and a roofline. Best effort: when the runner cannot list, the keys
 * are left out and a warning says so. */
static void workload_meta(struct kpt_writer *w, const struct kpt_record_opts *o, struct kpt_record_result *res,
			  const char *runner, struct kpt_diag *d)
{
	char **argv = calloc((size_t)o->nworkloads + 6, sizeof *argv), *line = NULL, key[512];
	size_t cap = 0;
	int n = 0, bad = 0;
	FILE *in;
	pid_t pid;

	if (!argv)
		return;
	argv[n++] = (char *)runner;
	argv[n++] = "--list";
	argv[n++] = "--tsv";
	if (o->suite) {
		argv[n++] = "--suite";
		argv[n++] = (char *)o->suite;
	}
	for (int i = 0; i < o->nworkloads; i++)
		argv[n++] = (char *)o->workloads[i];
	in = runner_start(argv, &pid);
	free(argv);
	if (!in) {
		bad = 1;
	} else {
		while (getline(&line, &cap, in) > 0) {
			char *name = strtok(line, "\t"), *family = strtok(NULL, "\t");
			char *flops = strtok(NULL, "\t"), *bytes = strtok(NULL, "\t");

			if (!name || !family || !bytes || strlen(name) > sizeof key - 16) {
				bad = 1;
				continue;
			}
			snprintf(key, sizeof key, "workload.%s.flops", name);
			kpt_writer_meta(w, key, flops, d);
			snprintf(key, sizeof key, "workload.%s.bytes", name);
			kpt_writer_meta(w, key, bytes, d);
		}
		if (runner_finish(in, pid) < 0)
			bad = 1;
	}
	free(line);
	if (bad)
		kpt_record_note(res, KPT_NOTE_WARNING, "'%s --list --tsv' failed: FLOPs and bytes per workload not recorded", runner);
}

/* The idle gap of a program that is the kpt-workloads runner (`record --
 * kpt-workloads --suite S --settle-us U`, and every side of `ab` and `gate
 * --against`): U, 0 without the option; -1 for any other program. */
static long runner_cmd_settle(char *const *cmd)
{
	long v = 0;

	if (!kpt_record_cmd_is_runner(cmd))
		return -1;
	for (int i = 1; cmd[i]; i++)
		if (strcmp(cmd[i], "--settle-us") == 0 && cmd[i + 1]) {
			char *end;

			v = strtol(cmd[i + 1], &end, 10);
			if (end == cmd[i + 1] || *end || v < 0)
				v = -1;
		}
	return v;
}


/* Writes the run file at o->out: every per-process file, then meta.
 * exits: the target's exit status per run, "0,0,3" (meta "exit_status");
 * runner: the workload runner when it was the command, else NULL;
 * pm: a project's roots and meta, NULL for one program or suite. */
static int merge(const struct kpt_record_opts *o, struct kpt_record_result *res, const struct ceil *ceil,
		 const char *tmp, const struct proc_file *files, int n, const char *command, const char *exits,
		 const char *runner, const struct proj_merge *pm, struct kpt_diag *d)
{
	struct kpt_writer *w = NULL;
	struct kpt_meta_merge *mm = NULL;
	char buf[PATH_MAX + 300], host[256] = "";
	int rc;

	if ((rc = kpt_writer_create(o->out, NULL, &w, d)) < 0)
		return rc;
	if ((rc = kpt_meta_merge_create(&mm, d)) < 0)
		goto out;
	snprintf(buf, sizeof buf, "%s/%s", tmp, files[0].name);
	if ((rc = ceilings_devices(ceil, w, buf, d)) < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		struct kpt_file *f = NULL;

		struct kpt_copy_opts co = { .run = (uint32_t)files[i].run };

		if (pm && files[i].wl >= 0 && (size_t)files[i].wl < pm->nwl)
			co.root_range = pm->root[files[i].wl];
		snprintf(buf, sizeof buf, "%s/%s", tmp, files[i].name);
		rc = kpt_file_open(buf, &f, d);
		if (rc >= 0)
			rc = kpt_file_copy_into_opts(f, w, &co, d);
		/* the collector's own keys (NVTX, window, counters), combined */
		if (rc >= 0)
			rc = kpt_meta_merge_add(mm, f, d);
		kpt_file_close(f);
		if (rc < 0)
			goto out;
	}
	if ((rc = kpt_meta_merge_write(mm, w, d)) < 0)
		goto out;
	gethostname(host, sizeof host - 1);
	kpt_writer_meta(w, "tool_version", "kptprof " KPT_VERSION, d);
	kpt_writer_meta(w, "command", command, d);
	kpt_writer_meta(w, "host", host, d);
	{
		/* the session's identity for baselines: this boot of this machine */
		boot_id(buf, sizeof buf);
		if (buf[0])
			kpt_writer_meta(w, "boot_id", buf, d);
	}
	meta_time(buf, sizeof buf);
	kpt_writer_meta(w, "time", buf, d);
	snprintf(buf, sizeof buf, "%ld", o->runs);
	kpt_writer_meta(w, "runs", buf, d);
	kpt_writer_meta(w, "exit_status", exits, d);
	if (o->window)
		kpt_writer_meta(w, "window", o->window, d);
	if (o->suite)
		kpt_writer_meta(w, "suite", o->suite, d);
	if (pm) {
		const struct { const char *key, *value; } keys[] = {
			{ "project", pm->project }, { "workloads", pm->workloads },
			{ "step_ranges", pm->step_ranges }, { "window", pm->window },
		};

		for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
			if (keys[i].value && keys[i].value[0])
				kpt_writer_meta(w, keys[i].key, keys[i].value, d);
	}
	if (o->counters_metrics) {
		kpt_writer_meta(w, "counters.set", o->counters_set, d);
		kpt_writer_meta(w, "counters.metrics", o->counters_metrics, d);
		snprintf(buf, sizeof buf, "%u", res->counter_passes);
		kpt_writer_meta(w, "counters.passes", buf, d);
	}
	if (o->iterations >= 0) {
		snprintf(buf, sizeof buf, "%ld", o->iterations);
		kpt_writer_meta(w, "iterations", buf, d);
	}
	if (o->warmup >= 0) {
		snprintf(buf, sizeof buf, "%ld", o->warmup);
		kpt_writer_meta(w, "warmup", buf, d);
	}
	{
		long st = o->cmd ? runner_cmd_settle(o->cmd) : o->settle_us;

		if (st >= 0) {
			snprintf(buf, sizeof buf, "%ld", st);
			kpt_writer_meta(w, "settle_us", buf, d);
		}
	}
	if (ceil->probes.runs) {
		/* the probes of the rule's calibration (kernels/runner/kpt_calibrate.h) */
		const struct kpt_record_probes *pr = &ceil->probes;
		const struct { const char *key; double v; } probes[] = {
			{ "calibration.copy_gbps", pr->copy_gbps }, { "calibration.bf16_tflops", pr->bf16_tflops },
			{ "calibration.fp8_tflops", pr->fp8_tflops }, { "calibration.sm_mhz", pr->sm_mhz },
		};

		kpt_writer_meta(w, "calibration.where", ceil->probes_where, d);
		snprintf(buf, sizeof buf, "%u", pr->runs);
		kpt_writer_meta(w, "calibration.runs", buf, d);
		for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
			if (probes[i].v > 0) {
				snprintf(buf, sizeof buf, "%.1f", probes[i].v);
				kpt_writer_meta(w, probes[i].key, buf, d);
			}
	}
	if (o->nworkloads) {
		size_t len = 0;

		buf[0] = '\0';
		for (int i = 0; i < o->nworkloads && len < sizeof buf; i++)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", o->workloads[i]);
		kpt_writer_meta(w, "workload", buf, d);
	}
	if (runner)
		workload_meta(w, o, res, runner, d);
	rc = kpt_writer_commit(w, d);
out:
	kpt_meta_merge_destroy(mm);
	kpt_writer_destroy(w);
	return rc;
}

/* After the runs (and the counters pass): ceilings, then every
 * per-process file of the temporary folder merged into o->out. what: the
 * target, for "nothing recorded"; the rest as merge() takes them. */
int kpt_record_session_merge(struct session *s, const struct kpt_record_opts *o, struct kpt_record_result *r,
			     const char *what, const char *command, const char *runner,
			     const struct proj_merge *pm, struct kpt_diag *d)
{
	struct ceil ceil;
	struct kpt_record_probes run_probes;
	struct proc_file *files = NULL;
	struct kpt_diag perr;
	int n, rc;

	kpt_diag_clear(&perr);
	memset(&ceil, 0, sizeof ceil);
	/* After the timing runs, so that calibration heat cannot touch them. */
	if (!o->skip_gpu_check && !o->no_calibrate && o->runner && s->gpus.n > 0)
		ceilings(&ceil, r, o->runner, &s->gpus.gpu[0]);
	/* the probes: each run's, measured in its process after its workloads
	 * (a suite), else the cached line's, measured once per GPU and boot in
	 * a process of its own (any other program) */
	if (s->calibration[0] && s->gpus.n > 0 &&
	    kpt_record_probes_read(s->calibration, s->gpus.gpu[0].uuid, &run_probes) == 0) {
		ceil.probes = run_probes;
		ceil.probes_where = "in each run";
	} else if (ceil.probes.runs) {
		ceil.probes_where = "once per boot, in a process of its own";
	}
	n = list_files(s->tmp, &files, &perr);
	if (n < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot read the temporary folder '%s'", s->tmp);
	if (n == 0) {
		if (perr.code)
			*d = perr;
		else
			kpt_diag_set(d, KPT_E_NOTFOUND, "nothing recorded: '%s' used no CUDA (exit status %d)", what,
				     r->status);
		free(files);
		return d->code;
	}
	if (perr.code) {
		kpt_record_note(r, KPT_NOTE_WARNING, "a process could not record: %s", perr.msg);
		if (perr.hint[0])
			kpt_record_note(r, KPT_NOTE_HINT, "%s", perr.hint);
	}
	r->files = n;
	rc = merge(o, r, &ceil, s->tmp, files, n, command, s->exits, runner, pm, d);
	free(files);
	return rc;
}
