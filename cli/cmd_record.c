/* cmd_record.c - `kptprof record`: run a program (or the kpt-workloads
 * runner) under libkptinject.so and merge its per-process files into one
 * recording.
 *
 * kptprof links no CUDA: the target gets CUDA_INJECTION64_PATH and
 * NVTX_INJECTION64_PATH, both naming the injection library (found beside
 * kptprof or through $KPTPROF_INJECT; see collectors/kpt_inject.h). Each process
 * writes <tmp>/r<run>-p<pid>.kpt and a status file; the temporary folder
 * lives beside the output, so a successful merge is a rename away and a
 * failed one leaves nothing under the output's name.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kpt_cli.h"
#include "kpt_counters.h"
#include "kpt_demangle.h"
#include "kpt_devprobe.h"
#include "kpt_format.h"
#include "kpt_inject.h"
#include "kpt_window.h"

#define KPT_MAX_WORKLOADS 256

struct record_opts {
	const char *out;
	char out_buf[PATH_MAX];     /* -o with %p / %r expanded */
	int api, cold;
	long runs, iterations, warmup;
	const char *suite;
	const char *workloads[KPT_MAX_WORKLOADS];
	int nworkloads;
	char **cmd;                 /* NULL-terminated */
	const char *counters;       /* --counters[=SPEC]: SPEC ("" default), NULL off */
	const char *kinds;          /* --kinds LIST (checked), NULL: not given */
	/* capture window: --capture-range, --steps, --every, --delay,
	 * --duration (NULL: not given), checked into window */
	const char *win[5];
	struct kpt_window_spec window;
	struct kpt_metric_list metrics; /* parsed counters */
	unsigned counter_passes;    /* CUPTI's passes per kernel, 0 unknown */
	char ceil_uuid[48];         /* GPU the ceilings below belong to, "" none */
	double copy_gbps, bf16_tflops;
};

/* ---- option parsing ---------------------------------------------------------- */

static int parse_long(const char *opt, const char *s, long min, long *out)
{
	char *end;
	long v;

	if (!s)
		return kpt_cli_usage_error("record", "option '%s' needs a value", opt);
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < min)
		return kpt_cli_usage_error("record", "bad value '%s' for '%s' (an integer >= %ld)", s, opt, min);
	*out = v;
	return 0;
}

/* --kinds: a comma list of the words the collector's KPT_ACTIVITY_KINDS
 * knows (kpt_inject_kinds(), the parser the collector itself uses).
 * Checked here so that a typo fails before the target runs, instead of in
 * every process it starts. Returns 0 or, after a usage error, 2. */
static int check_kinds(const char *list)
{
	const char *bad = NULL;
	int badlen = 0;

	if (!*list)
		return kpt_cli_usage_error("record", "empty --kinds: expected a comma list of kernel, memcpy, memset, sync");
	if (list[0] == ',' || list[strlen(list) - 1] == ',' || strstr(list, ",,"))
		return kpt_cli_usage_error("record", "empty item in --kinds '%s'", list);
	if (kpt_inject_kinds(list, &bad, &badlen) < 0)
		return kpt_cli_usage_error("record", "unknown activity kind '%.*s' in --kinds: expected "
					   "kernel, memcpy, memset, sync or all", badlen, bad);
	return 0;
}

/* The --counters sets, after the usage of --help. */
static int counter_sets_help(void)
{
	size_t n;
	const struct kpt_counter_set *sets = kpt_counter_sets(&n);

	printf("\n--counters[=SET,...]: a separate kernel-replay pass reading hardware counters; SET is\n"
	       "a set name or a metric name (docs/counters.md). Sets:\n");
	for (size_t i = 0; i < n; i++)
		printf("  %-10s %s\n", sets[i].name, sets[i].about);
	return 0;
}

/* The capture-window options, in the order of record_opts.win and of the
 * collector's variables (kpt_window.h). */
static const char *const window_opts[] = {
	"--capture-range", "--steps", "--every", "--delay", "--duration",
};
static const char *const window_env[] = {
	KPT_ENV_WINDOW_CAPTURE, KPT_ENV_WINDOW_STEPS, KPT_ENV_WINDOW_EVERY, KPT_ENV_WINDOW_DELAY,
	KPT_ENV_WINDOW_DURATION,
};

static int parse(int argc, char **argv, struct record_opts *o)
{
	int i, rc;

	memset(o, 0, sizeof *o);
	o->out = "kptprof.kpt";
	o->runs = 1;
	o->iterations = -1;
	o->warmup = -1;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0)
			return kpt_cli_help("record") == 0 && counter_sets_help() == 0 ? 1 : KPT_EXIT_ERROR;
		if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
			if (!(o->out = argv[++i]))
				return kpt_cli_usage_error("record", "option '%s' needs a file name", a);
		} else if (strncmp(a, "--output=", 9) == 0) {
			o->out = a + 9;
		} else if (strcmp(a, "--api") == 0) {
			o->api = 1;
		} else if ((rc = kpt_cli_opt_table(argc, argv, &i, window_opts, (const char **const[]){
				    &o->win[0], &o->win[1], &o->win[2], &o->win[3], &o->win[4] }, 5)) != 0) {
			if (rc < 0)
				return KPT_EXIT_ERROR;
		} else if ((rc = kpt_cli_opt(argc, argv, &i, "--kinds", &o->kinds)) != 0) {
			if (rc < 0 || check_kinds(o->kinds))
				return KPT_EXIT_ERROR;
		} else if (strcmp(a, "--cold") == 0) {
			o->cold = 1;
		} else if (strcmp(a, "--runs") == 0) {
			if (parse_long(a, argv[++i], 1, &o->runs))
				return KPT_EXIT_ERROR;
		} else if (strcmp(a, "--iterations") == 0) {
			if (parse_long(a, argv[++i], 1, &o->iterations))
				return KPT_EXIT_ERROR;
		} else if (strcmp(a, "--warmup") == 0) {
			if (parse_long(a, argv[++i], 0, &o->warmup))
				return KPT_EXIT_ERROR;
		} else if (strcmp(a, "--suite") == 0) {
			if (!(o->suite = argv[++i]))
				return kpt_cli_usage_error("record", "option '--suite' needs a suite name");
		} else if (strcmp(a, "--workload") == 0) {
			if (!argv[i + 1] || argv[i + 1][0] == '-')
				return kpt_cli_usage_error("record", "option '--workload' needs at least one name");
			while (argv[i + 1] && argv[i + 1][0] != '-') {
				if (o->nworkloads == KPT_MAX_WORKLOADS)
					return kpt_cli_usage_error("record", "too many workloads (at most %d)",
								   KPT_MAX_WORKLOADS);
				o->workloads[o->nworkloads++] = argv[++i];
			}
		} else if (strncmp(a, "--counters", 10) == 0 && (a[10] == '\0' || a[10] == '=')) {
			struct kpt_diag d;

			kpt_metric_list_release(&o->metrics);
			o->counters = a[10] ? a + 11 : "";
			kpt_diag_clear(&d);
			if (kpt_metric_list_parse(o->counters, &o->metrics, &d) < 0)
				return kpt_cli_fail(&d);
		} else {
			return kpt_cli_usage_error("record", "unknown option '%s'", a);
		}
	}
	if (i < argc)
		o->cmd = argv + i;
	if (!!o->cmd + !!o->suite + (o->nworkloads > 0) != 1)
		return kpt_cli_usage_error("record", "give exactly one of '--suite NAME', '--workload NAME...' "
					   "or '-- CMD [ARGS...]'");
	if (o->cmd && (o->iterations >= 0 || o->warmup >= 0 || o->cold))
		return kpt_cli_usage_error("record", "'--iterations', '--warmup' and '--cold' apply to "
					   "'--suite' and '--workload' only");
	{
		struct kpt_diag d;

		kpt_diag_clear(&d);
		if (kpt_window_parse(o->win[0], o->win[1], o->win[2], o->win[3], o->win[4], &o->window, &d) < 0)
			return kpt_cli_usage_error("record", "%s", d.msg);
	}
	if (strchr(o->out, '%')) {
		/* as KPT_OUTPUT: %p this kptprof's pid, %r its rank (when a launcher
		 * starts one kptprof per rank), %% a '%' */
		if (kpt_inject_expand(o->out, (unsigned)getpid(), kpt_inject_rank(), o->out_buf,
				      (int)sizeof o->out_buf) < 0)
			return kpt_cli_usage_error("record", "bad output pattern '%s' (escapes: %%p %%r %%%%)", o->out);
		o->out = o->out_buf;
	}
	return 0;
}

/* ---- locating things -------------------------------------------------------------- */

static int command_exists(const char *cmd)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	if (strchr(cmd, '/'))
		return access(cmd, X_OK) == 0;
	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		const char *c = strchr(path, ':');
		size_t n = c ? (size_t)(c - path) : strlen(path);
		struct stat st;

		snprintf(buf, sizeof buf, "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode) && access(buf, X_OK) == 0)
			return 1;
		path += n + (c ? 1 : 0);
	}
	return 0;
}

/* ---- the temporary folder ------------------------------------------------------------ */

static int make_tmpdir(const char *out, char *tmp, size_t cap, struct kpt_diag *d)
{
	char copy[PATH_MAX];
	char *dir;
	struct stat st;

	if (strlen(out) >= sizeof copy)
		return kpt_diag_set(d, KPT_E_INVAL, "output path too long: '%s'", out);
	if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
		return kpt_diag_set(d, KPT_E_IO, "cannot write '%s': it is a directory", out);
	snprintf(copy, sizeof copy, "%s", out);
	dir = dirname(copy);
	snprintf(tmp, cap, "%s/.kptprof-record-XXXXXX", dir);
	if (!mkdtemp(tmp))
		return kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", out, strerror(errno));
	return 0;
}

static void remove_tmpdir(const char *tmp)
{
	DIR *dir = opendir(tmp);
	struct dirent *e;
	char buf[PATH_MAX + 300];

	if (dir) {
		while ((e = readdir(dir))) {
			if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
				continue;
			snprintf(buf, sizeof buf, "%s/%s", tmp, e->d_name);
			unlink(buf);
		}
		closedir(dir);
	}
	rmdir(tmp);
}

/* ---- running ------------------------------------------------------------------------------ */

static volatile sig_atomic_t g_child;

static void forward_signal(int sig)
{
	if (g_child > 0)
		kill((pid_t)g_child, sig);
}

struct launch {
	const char *inject, *tmp;
	int api;
	char prefix;                /* 'r' timing runs, 'c' the counters pass */
	const char *counters;       /* KPT_COUNTERS value, NULL: none */
	/* KPT_ACTIVITY_KINDS value (--kinds); NULL: left as inherited, except
	 * in the counters pass, which enables no activity and unsets it. */
	const char *kinds;
	const char *sample_ms;      /* KPT_SAMPLE_MS value; NULL: left as inherited */
	const char *const *win;     /* window option values (record_opts.win), NULL each: inherited */
};

/* Runs argv once as run `run`. Returns the wait status decoded as an exit
 * status (128 + signal for a killed target), or -1 with d set when the
 * command could not be started. */
static int run_once(const struct launch *l, char **argv, long run, struct kpt_diag *d)
{
	char out[PATH_MAX + 64], st[PATH_MAX + 64];
	int pfd[2], err = 0, status = 0;
	ssize_t n;
	pid_t pid;

	snprintf(out, sizeof out, "%s/%c%05ld-p%%p.kpt", l->tmp, l->prefix, run);
	snprintf(st, sizeof st, "%s/%c%05ld-p%%p.status", l->tmp, l->prefix, run);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot create a pipe: %s", strerror(errno)), -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return kpt_diag_set(d, KPT_E_IO, "cannot fork: %s", strerror(errno)), -1;
	}
	if (pid == 0) {
		close(pfd[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		setenv("CUDA_INJECTION64_PATH", l->inject, 1);
		setenv("NVTX_INJECTION64_PATH", l->inject, 1);
		setenv(KPT_ENV_OUTPUT, out, 1);
		/* NVLink multicast off in NCCL, PyTorch and NVSHMEM: a program that
		 * uses it can take the GPUs of a shared host out of service */
		setenv("NCCL_NVLS_ENABLE", "0", 1);
		setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
		setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
		setenv(KPT_ENV_STATUS, st, 1);
		if (l->api)
			setenv(KPT_ENV_API, "1", 1);
		else
			unsetenv(KPT_ENV_API);
		if (l->sample_ms)
			setenv(KPT_ENV_SAMPLE_MS, l->sample_ms, 1);
		for (size_t i = 0; l->win && i < sizeof window_env / sizeof window_env[0]; i++)
			if (l->win[i])
				setenv(window_env[i], l->win[i], 1);
		if (l->kinds)
			setenv(KPT_ENV_ACTIVITY_KINDS, l->kinds, 1);
		else if (l->counters)
			unsetenv(KPT_ENV_ACTIVITY_KINDS);
		if (l->counters) {
			char lock[PATH_MAX + 32];

			setenv(KPT_ENV_COUNTERS, l->counters, 1);
			setenv(KPT_ENV_SAMPLE_MS, "0", 1); /* its clocks are replay's, not the runs' */
			/* the program's processes hand the counters to each other */
			snprintf(lock, sizeof lock, "%s/counters.lock", l->tmp);
			setenv(KPT_ENV_COUNTERS_LOCK, lock, 1);
		} else {
			unsetenv(KPT_ENV_COUNTERS);
			unsetenv(KPT_ENV_COUNTERS_LOCK);
		}
		execvp(argv[0], argv);
		err = errno;
		if (write(pfd[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	g_child = pid;
	do
		n = read(pfd[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	g_child = 0;
	if (n == (ssize_t)sizeof err) {
		kpt_diag_set(d, err == ENOENT ? KPT_E_NOTFOUND : KPT_E_IO, "cannot run '%s': %s",
			     argv[0], strerror(err));
		return -1;
	}
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ---- the counters pass ------------------------------------------------------------------- */

static enum kpt_err err_by_name(const char *name, size_t len)
{
	for (int c = -1; c >= KPT_E_MISMATCH; c--)
		if (strlen(kpt_err_name(c)) == len && strncmp(kpt_err_name(c), name, len) == 0)
			return (enum kpt_err)c;
	return KPT_E_CUPTI;
}

/* Reads one status file of the counters pass; returns < 0 with d set when
 * the collector reported an error there. */
static int counters_status(const char *path, struct kpt_diag *d)
{
	FILE *f = fopen(path, "r");
	char line[1400];
	int rc = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "error ", 6) == 0 && rc == 0) {
			const char *msg = strchr(line + 6, ' ');

			rc = kpt_diag_set(d, err_by_name(line + 6, msg ? (size_t)(msg - line - 6) : strlen(line + 6)),
					  "cannot read counters: %s", msg ? msg + 1 : line + 6);
		} else if (strncmp(line, "hint ", 5) == 0 && rc < 0) {
			kpt_diag_hint(d, "%s", line + 5);
		}
	}
	fclose(f);
	return rc;
}

/* What the collector says about a counters file that holds no values
 * (meta it writes beside them), as the hint of the error. */
struct counters_why {
	uint64_t graphs, captured, lost;
	char reason[300];
};

static uint64_t meta_u64(struct kpt_file *f, const char *key)
{
	const char *v = kpt_file_meta_get(f, key);

	return v ? strtoull(v, NULL, 10) : 0;
}

static void counters_why_add(struct counters_why *w, struct kpt_file *f)
{
	const char *r = kpt_file_meta_get(f, "counters.lost_reason");

	w->graphs += meta_u64(f, "counters.graph_launches_skipped");
	w->captured += meta_u64(f, "counters.captured_launches");
	w->lost += meta_u64(f, "counters.lost_contexts");
	if (r && *r && !w->reason[0])
		snprintf(w->reason, sizeof w->reason, "%s", r);
}

/* A counters pass that read no value is an error, never a success: says
 * what the collector saw instead. */
static int counters_none(const struct counters_why *w, const char *cmd, int status, struct kpt_diag *d)
{
	kpt_diag_set(d, KPT_E_NOTFOUND, "the counters pass profiled no kernel of '%s' (exit status %d)", cmd, status);
	if (w->lost)
		return kpt_diag_hint(d, "%llu CUDA context%s could not be read (at exit or at a hand-over)%s%s", (unsigned long long)w->lost,
				     w->lost == 1 ? "" : "s", w->reason[0] ? ": " : "", w->reason);
	if (w->graphs || w->captured)
		return kpt_diag_hint(d, "kernels launched through CUDA graphs are not profiled (%llu graph launches, "
				     "%llu launches captured into graphs); see docs/counters.md",
				     (unsigned long long)w->graphs, (unsigned long long)w->captured);
	return kpt_diag_hint(d, "no kernel launch reached the collector: does the program launch kernels "
			     "when KPT_COUNTERS is set? See docs/counters.md");
}

/* Runs the command once more with KPT_COUNTERS (kernel replay distorts
 * time, so this is a pass of its own, after the timing runs). A collector
 * error fails the recording: counters were asked for. Its files hold
 * counters and devices but no kernels, NVTX ranges or NVML samples;
 * they are renamed into run 0's naming, so that merge() adds them as more
 * processes of run 0 and the number of runs (the decision rule's sample
 * size) stays M. */
static int counters_pass(struct record_opts *o, const struct launch *base, char **cmd, struct kpt_diag *d)
{
	struct launch l = *base;
	char *joined = kpt_metric_list_join(&o->metrics);
	char from[PATH_MAX + 300], to[PATH_MAX + 300];
	struct dirent *e;
	struct counters_why why = { 0 };
	uint64_t values = 0;
	DIR *dir;
	int s, files = 0, rc = 0;

	if (!joined)
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	l.prefix = 'c';
	l.counters = joined;
	l.kinds = NULL;
	s = run_once(&l, cmd, 0, d);
	free(joined);
	if (s < 0)
		return -1;
	if (!(dir = opendir(l.tmp)))
		return kpt_diag_set(d, KPT_E_IO, "cannot read the temporary folder '%s'", l.tmp);
	while (rc == 0 && (e = readdir(dir))) {
		size_t len = strlen(e->d_name);

		if (e->d_name[0] != 'c' || len < 8)
			continue;
		snprintf(from, sizeof from, "%s/%s", l.tmp, e->d_name);
		if (strcmp(e->d_name + len - 7, ".status") == 0) {
			rc = counters_status(from, d);
		} else if (strcmp(e->d_name + len - 4, ".kpt") == 0) {
			struct kpt_file *f = NULL;
			const char *p;

			if (kpt_file_open(from, &f, NULL) == 0) {
				struct kpt_counts cnt;
				unsigned long v = (p = kpt_file_meta_get(f, "counters.passes")) ? strtoul(p, NULL, 10) : 0;

				if (v > o->counter_passes)
					o->counter_passes = (unsigned)v;
				if (kpt_file_counts(f, &cnt, NULL) == 0)
					values += cnt.counters;
				counters_why_add(&why, f);
			}
			kpt_file_close(f);
			/* c00000-p<pid>.kpt -> r00000-zcounters-p<pid>.kpt: never a
			 * timing run's name, and sorted after them (merge order). */
			snprintf(to, sizeof to, "%s/r%.5s-zcounters%s", l.tmp, e->d_name + 1, e->d_name + 6);
			if (rename(from, to) < 0)
				rc = kpt_diag_set(d, KPT_E_IO, "cannot rename '%s': %s", from, strerror(errno));
			files++;
		}
	}
	closedir(dir);
	if (rc == 0 && files == 0)
		rc = kpt_diag_set(d, KPT_E_NOTFOUND, "the counters pass recorded nothing ('%s' exit status %d)",
				  cmd[0], s);
	if (rc == 0 && values == 0)
		rc = counters_none(&why, cmd[0], s, d);
	if (rc == 0 && why.lost)
		fprintf(stderr, "kptprof: warning: counters: %llu CUDA context%s could not be read (at exit or when handing the "
			"counters to another process), so %s last kernels have no counters%s%s\n", (unsigned long long)why.lost,
			why.lost == 1 ? "" : "s", why.lost == 1 ? "its" : "their", why.reason[0] ? ": " : "", why.reason);
	if (rc == 0 && s != 0)
		fprintf(stderr, "kptprof: warning: the counters pass exited with status %d\n", s);
	return rc;
}

/* One line: what the counters cover and what they cost. */
static void counters_summary(const struct record_opts *o, struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	const struct kpt_counter *rows;
	struct kpt_counter_census c;
	size_t n;

	if (kpt_file_open(o->out, &f, d) < 0 || kpt_file_counters(f, &rows, &n, d) < 0 ||
	    kpt_counter_census(rows, n, o->counter_passes, &c, d) < 0) {
		kpt_file_close(f);
		kpt_cli_fail(d);
		return;
	}
	fprintf(stderr, "kptprof: counters: %llu kernel%s x %llu metric%s, %u pass%s per kernel (%llu kernel replays)",
		(unsigned long long)c.kernels, c.kernels == 1 ? "" : "s", (unsigned long long)c.metrics,
		c.metrics == 1 ? "" : "s", c.passes, c.passes == 1 ? "" : "es", (unsigned long long)c.replays);
	if (c.missing)
		fprintf(stderr, ", %llu values missing", (unsigned long long)c.missing);
	fprintf(stderr, "\n");
	kpt_file_close(f);
}

/* ---- ceilings ------------------------------------------------------------------------------ */

/* $XDG_CACHE_HOME/kptprof/ceilings-<uuid>.tsv, else ~/.cache/kptprof/...;
 * creates the folders. Returns 0, or -1 when there is no home. */
static int ceilings_path(const char *uuid, char *out, size_t cap)
{
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX];

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
	snprintf(out, cap, "%s/ceilings-%s.tsv", dir, uuid);
	return 0;
}

/* Parses "uuid copy_gbps bf16_tflops name" (kpt-workloads --calibrate).
 * Returns 0 when the uuid matches and both numbers are positive. */
static int ceilings_parse(const char *line, const char *uuid, double *copy, double *bf16)
{
	char u[64];

	if (sscanf(line, "%63[^\t]\t%lf\t%lf", u, copy, bf16) != 3 || strcmp(u, uuid) != 0 ||
	    !(*copy > 0) || !(*bf16 > 0))
		return -1;
	return 0;
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
static void ceilings(struct record_opts *o, const char *runner, const struct kpt_gpu *gpu)
{
	char path[PATH_MAX + 64] = "", line[512] = "";
	char *argv[] = { (char *)runner, "--calibrate", NULL };
	int cached = 0, ok;
	FILE *f;
	pid_t pid;

	if (!gpu->uuid[0])
		return;
	if (ceilings_path(gpu->uuid, path, sizeof path) == 0 && (f = fopen(path, "r"))) {
		cached = fgets(line, sizeof line, f) && ceilings_parse(line, gpu->uuid, &o->copy_gbps, &o->bf16_tflops) == 0;
		fclose(f);
	}
	if (!cached) {
		ok = (f = runner_start(argv, &pid)) != NULL;
		if (ok && !fgets(line, sizeof line, f))
			line[0] = '\0';
		if (ok && runner_finish(f, pid) < 0)
			ok = 0;
		if (!ok || ceilings_parse(line, gpu->uuid, &o->copy_gbps, &o->bf16_tflops) < 0) {
			fprintf(stderr, "kptprof: warning: '%s --calibrate' failed: no ceilings in this recording\n", runner);
			o->copy_gbps = o->bf16_tflops = 0;
			return;
		}
		if (path[0] && (f = fopen(path, "w"))) {
			fputs(line, f);
			fclose(f);
		}
	}
	snprintf(o->ceil_uuid, sizeof o->ceil_uuid, "%s", gpu->uuid);
	fprintf(stderr, "kptprof: ceilings of %s: copy %.0f GB/s, bf16 %.0f TFLOP/s (%s)\n", gpu->name,
		o->copy_gbps, o->bf16_tflops, cached ? "cached" : "measured");
}

/* Writes, before any file is copied, the device rows of the first file
 * whose UUID has ceilings, with the ceilings filled in: merging keeps the
 * first row of a UUID. */
static int ceilings_devices(const struct record_opts *o, struct kpt_writer *w, const char *first,
			    struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	const struct kpt_device *dev;
	size_t n = 0;
	uint32_t k = 0;
	int rc;

	if (!o->ceil_uuid[0])
		return 0;
	if ((rc = kpt_file_open(first, &f, d)) == 0 && (rc = kpt_file_devices(f, &dev, &n, d)) == 0)
		for (size_t i = 0; i < n && rc == 0; i++)
			if (strcmp(dev[i].uuid, o->ceil_uuid) == 0) {
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
	int n = 0, cap = 0;

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
		if (n == cap) {
			struct proc_file *nv = realloc(v, (size_t)(cap = cap ? cap * 2 : 16) * sizeof *nv);

			if (!nv) {
				free(v);
				closedir(dir);
				return -1;
			}
			v = nv;
		}
		snprintf(v[n].name, sizeof v[n].name, "%s", e->d_name);
		v[n].run = strtol(e->d_name + 1, NULL, 10);
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
static void workload_meta(struct kpt_writer *w, const struct record_opts *o, const char *runner,
			  struct kpt_diag *d)
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
		fprintf(stderr, "kptprof: warning: '%s --list --tsv' failed: FLOPs and bytes per workload not recorded\n",
			runner);
}

/* Writes the run file at o->out: every per-process file, then meta.
 * exits: the target's exit status per run, "0,0,3" (meta "exit_status");
 * runner: the workload runner when it was the command, else NULL. */
static int merge(const struct record_opts *o, const char *tmp, const struct proc_file *files, int n,
		 const char *command, const char *exits, const char *runner, struct kpt_diag *d)
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
	if ((rc = ceilings_devices(o, w, buf, d)) < 0)
		goto out;
	for (int i = 0; i < n; i++) {
		struct kpt_file *f = NULL;

		snprintf(buf, sizeof buf, "%s/%s", tmp, files[i].name);
		rc = kpt_file_open(buf, &f, d);
		if (rc >= 0)
			rc = kpt_file_copy_into(f, w, (uint32_t)files[i].run, 0, d);
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
		FILE *bf = fopen("/proc/sys/kernel/random/boot_id", "r");

		if (bf && fgets(buf, sizeof buf, bf)) {
			buf[strcspn(buf, "\n")] = '\0';
			kpt_writer_meta(w, "boot_id", buf, d);
		}
		if (bf)
			fclose(bf);
	}
	meta_time(buf, sizeof buf);
	kpt_writer_meta(w, "time", buf, d);
	snprintf(buf, sizeof buf, "%ld", o->runs);
	kpt_writer_meta(w, "runs", buf, d);
	kpt_writer_meta(w, "exit_status", exits, d);
	if (kpt_window_is_set(&o->window)) {
		kpt_window_describe(&o->window, buf, sizeof buf);
		kpt_writer_meta(w, "window", buf, d);
	}
	if (o->suite)
		kpt_writer_meta(w, "suite", o->suite, d);
	if (o->counters) {
		char *joined = kpt_metric_list_join(&o->metrics);

		kpt_writer_meta(w, "counters.set", o->counters[0] ? o->counters : KPT_COUNTER_SET_DEFAULT, d);
		if (joined)
			kpt_writer_meta(w, "counters.metrics", joined, d);
		free(joined);
		snprintf(buf, sizeof buf, "%u", o->counter_passes);
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
	if (o->nworkloads) {
		size_t len = 0;

		buf[0] = '\0';
		for (int i = 0; i < o->nworkloads && len < sizeof buf; i++)
			len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", i ? "," : "", o->workloads[i]);
		kpt_writer_meta(w, "workload", buf, d);
	}
	if (runner)
		workload_meta(w, o, runner, d);
	rc = kpt_writer_commit(w, d);
out:
	kpt_meta_merge_destroy(mm);
	kpt_writer_destroy(w);
	return rc;
}

/* ---- the one-screen summary ---------------------------------------------------------------- */

struct kagg {
	uint32_t name;
	uint64_t count, total;
};

static int by_total(const void *a, const void *b)
{
	const struct kagg *x = a, *y = b;

	return x->total < y->total ? 1 : x->total > y->total ? -1 : (x->name > y->name) - (x->name < y->name);
}

static void fmt_ns(double ns, char *buf, size_t cap)
{
	if (ns >= 1e9)
		snprintf(buf, cap, "%.3f s", ns / 1e9);
	else if (ns >= 1e6)
		snprintf(buf, cap, "%.3f ms", ns / 1e6);
	else if (ns >= 1e3)
		snprintf(buf, cap, "%.2f us", ns / 1e3);
	else
		snprintf(buf, cap, "%.0f ns", ns);
}

/* Kernels, GPU time, top 5 kernels and drops of the merged file, to
 * stderr. O(K) over the kernel chunks, memory one counter per string. */
static int summary(const char *path, struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	struct kpt_kernel_cursor *c = NULL;
	struct kpt_counts cnt;
	struct kagg *agg = NULL;
	const struct kpt_kernel *rows;
	uint64_t total = 0;
	uint32_t nstr;
	size_t n;
	char t1[32], t2[32];
	int rc;

	if ((rc = kpt_file_open(path, &f, d)) < 0)
		return rc;
	if ((rc = kpt_file_counts(f, &cnt, d)) < 0 || (rc = kpt_file_load_strings(f, d)) < 0)
		goto out;
	nstr = kpt_file_string_count(f);
	if (!(agg = calloc((size_t)nstr + 1, sizeof *agg))) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory summarising '%s'", path);
		goto out;
	}
	for (uint32_t i = 0; i < nstr; i++)
		agg[i].name = i;
	if ((rc = kpt_kernel_cursor_create(f, &c, d)) < 0)
		goto out;
	while ((rc = kpt_kernel_cursor_next(c, &rows, &n, d)) > 0)
		for (size_t i = 0; i < n; i++) {
			uint64_t dur = rows[i].end_ns > rows[i].start_ns ? rows[i].end_ns - rows[i].start_ns : 0;
			uint32_t id = rows[i].name < nstr ? rows[i].name : nstr;

			agg[id].count++;
			agg[id].total += dur;
			total += dur;
		}
	if (rc < 0)
		goto out;
	qsort(agg, (size_t)nstr + 1, sizeof *agg, by_total);
	fmt_ns((double)total, t1, sizeof t1);
	fprintf(stderr, "kptprof: recorded %llu kernels (%s GPU time), %llu memops, %llu NVTX ranges, "
		"%u process%s, %u device%s -> %s\n",
		(unsigned long long)cnt.kernels, t1, (unsigned long long)cnt.memops,
		(unsigned long long)cnt.ranges, cnt.processes, cnt.processes == 1 ? "" : "es",
		cnt.devices, cnt.devices == 1 ? "" : "s", path);
	if (cnt.kernels)
		fprintf(stderr, "  %6s %10s %10s %8s  %s\n", "time%", "total", "avg", "count", "kernel");
	for (uint32_t i = 0; i < 5 && i <= nstr && agg[i].count; i++) {
		const char *raw = agg[i].name < nstr ? kpt_file_string(f, agg[i].name) : "(bad name)";
		char *dm = kpt_demangle(raw);
		const char *show = dm ? dm : raw;

		fmt_ns((double)agg[i].total, t1, sizeof t1);
		fmt_ns((double)agg[i].total / (double)agg[i].count, t2, sizeof t2);
		fprintf(stderr, "  %5.1f%% %10s %10s %8llu  %.100s%s\n",
			total ? 100.0 * (double)agg[i].total / (double)total : 0.0, t1, t2,
			(unsigned long long)agg[i].count, show, strlen(show) > 100 ? "..." : "");
		free(dm);
	}
	if (cnt.dropped_records)
		fprintf(stderr, "kptprof: warning: CUPTI dropped %llu records: the recording is incomplete\n"
			"hint: raise KPT_BUFFERS or KPT_DEVICE_BUFFER_MB\n",
			(unsigned long long)cnt.dropped_records);
	rc = 0;
out:
	kpt_kernel_cursor_destroy(c);
	free(agg);
	kpt_file_close(f);
	return rc;
}

/* ---- the command -------------------------------------------------------------------------- */

static char *join_argv(char **argv)
{
	size_t len = 1;
	char *s;

	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	if (!(s = malloc(len)))
		return NULL;
	s[0] = '\0';
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

/* argv for the kpt-workloads runner from the options; owned by the caller
 * (free the array only: strings point into o and the static buffers). */
static char **runner_argv(const struct record_opts *o, const char *runner)
{
	static char it[32], wu[32];
	char **v = calloc((size_t)o->nworkloads + 10, sizeof *v);
	int n = 0;

	if (!v)
		return NULL;
	v[n++] = (char *)runner;
	if (o->iterations >= 0) {
		snprintf(it, sizeof it, "%ld", o->iterations);
		v[n++] = "--iterations";
		v[n++] = it;
	}
	if (o->warmup >= 0) {
		snprintf(wu, sizeof wu, "%ld", o->warmup);
		v[n++] = "--warmup";
		v[n++] = wu;
	}
	if (o->cold)
		v[n++] = "--cold";
	if (o->suite) {
		v[n++] = "--suite";
		v[n++] = (char *)o->suite;
	}
	for (int i = 0; i < o->nworkloads; i++)
		v[n++] = (char *)o->workloads[i];
	return v;
}

/* Failure before anything ran: prints d, frees what parse() made. */
static int early_fail(struct record_opts *o, const struct kpt_diag *d)
{
	kpt_metric_list_release(&o->metrics);
	return kpt_cli_fail(d);
}

int cmd_record(int argc, char **argv)
{
	struct record_opts o;
	struct kpt_diag d, perr;
	struct kpt_gpu_list gpus;
	struct launch l;
	struct proc_file *files = NULL;
	char inject[PATH_MAX], runner[PATH_MAX], tmp[PATH_MAX];
	char **cmd, **owned = NULL, *command = NULL, *exits = NULL;
	size_t nexits = 0;
	struct sigaction sa, old_int, old_term;
	int rc, status = 0, n;

	if ((rc = parse(argc, argv, &o)) != 0) {
		kpt_metric_list_release(&o.metrics);
		return rc == 1 ? KPT_EXIT_OK : rc;
	}
	kpt_diag_clear(&d);
	kpt_diag_clear(&perr);
	if (o.cmd) {
		cmd = o.cmd;
		if (!command_exists(cmd[0])) {
			kpt_diag_set(&d, KPT_E_NOTFOUND, "command not found: '%s'", cmd[0]);
			return early_fail(&o, &d);
		}
	} else {
		if (kpt_cli_find_runner(runner, sizeof runner) < 0) {
			kpt_diag_set(&d, KPT_E_NOTFOUND, "cannot find the workload runner 'kpt-workloads' beside kptprof");
			kpt_diag_hint(&d, "build the kernels (a CUDA toolkit is needed) or set KPTPROF_WORKLOADS");
			return early_fail(&o, &d);
		}
		if (!(cmd = owned = runner_argv(&o, runner)))
			return early_fail(&o, &d);
	}
	if (kpt_cli_find_collector(inject, sizeof inject) < 0) {
		kpt_diag_set(&d, KPT_E_NOTFOUND, "cannot find the collector 'libkptinject.so' beside kptprof");
		kpt_diag_hint(&d, "build kptprof with a CUDA toolkit, or set KPTPROF_INJECT to the library");
		free(owned);
		return early_fail(&o, &d);
	}
	if (make_tmpdir(o.out, tmp, sizeof tmp, &d) < 0) {
		free(owned);
		return early_fail(&o, &d);
	}
	/* KPTPROF_SKIP_GPU_CHECK: for tests of the launcher on machines
	 * without a GPU (the target then decides what gets recorded). */
	if (!getenv("KPTPROF_SKIP_GPU_CHECK") && kpt_gpu_probe(&gpus, &d) < 0) {
		remove_tmpdir(tmp);
		free(owned);
		return early_fail(&o, &d);
	}
	/* The fail path restores these: read them before any goto. */
	sigaction(SIGINT, NULL, &old_int);
	sigaction(SIGTERM, NULL, &old_term);
	command = join_argv(cmd);
	if (!(exits = malloc((size_t)o.runs * 12 + 1))) {
		kpt_diag_set(&d, KPT_E_NOMEM, "out of memory");
		goto fail;
	}
	exits[0] = '\0';
	l = (struct launch){ .inject = inject, .tmp = tmp, .api = o.api, .prefix = 'r', .kinds = o.kinds,
			     .win = o.win };
	/* A program gets kernels only unless asked (--kinds, or an inherited
	 * KPT_ACTIVITY_KINDS), and NVML samples every 100 ms instead of 10
	 * (unless KPT_SAMPLE_MS is set): on a launch-bound PyTorch step on an
	 * H100 the other kinds and the 10 ms sampler each cost points on top
	 * of CUPTI's own kernel tracing (bench/RESULTS.md, "Collector"). The
	 * built-in suites keep all four kinds and 10 ms: their runner's time
	 * is the GPU's, and their runs are short. */
	if (!l.kinds && o.cmd && !getenv(KPT_ENV_ACTIVITY_KINDS))
		l.kinds = "kernel";
	if (o.cmd && !getenv(KPT_ENV_SAMPLE_MS))
		l.sample_ms = "100";
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	for (long r = 0; r < o.runs; r++) {
		int s = run_once(&l, cmd, r, &d);

		if (s < 0) {
			rc = -1;
			goto fail;
		}
		if (s != 0 && status == 0)
			status = s;
		nexits += (size_t)sprintf(exits + nexits, "%s%d", r ? "," : "", s);
	}
	if (o.counters && counters_pass(&o, &l, cmd, &d) < 0)
		goto fail;
	/* After the timing runs, so that calibration heat cannot touch them. */
	if (!getenv("KPTPROF_SKIP_GPU_CHECK") && !getenv("KPTPROF_NO_CALIBRATE") &&
	    (!o.cmd || kpt_cli_find_runner(runner, sizeof runner) == 0))
		ceilings(&o, runner, &gpus.gpu[0]);
	n = list_files(tmp, &files, &perr);
	if (n < 0) {
		kpt_diag_set(&d, KPT_E_IO, "cannot read the temporary folder '%s'", tmp);
		goto fail;
	}
	if (n == 0) {
		if (perr.code)
			d = perr;
		else
			kpt_diag_set(&d, KPT_E_NOTFOUND, "nothing recorded: '%s' used no CUDA (exit status %d)",
				     cmd[0], status);
		goto fail;
	}
	if (perr.code) {
		fprintf(stderr, "kptprof: warning: a process could not record: %s\n", perr.msg);
		if (perr.hint[0])
			fprintf(stderr, "hint: %s\n", perr.hint);
	}
	if (merge(&o, tmp, files, n, command ? command : cmd[0], exits, o.cmd ? NULL : runner, &d) < 0)
		goto fail;
	remove_tmpdir(tmp);
	if (summary(o.out, &d) < 0)
		kpt_cli_fail(&d);
	if (o.counters)
		counters_summary(&o, &d);
	kpt_metric_list_release(&o.metrics);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	free(files);
	free(owned);
	free(command);
	free(exits);
	return status;
fail:
	kpt_metric_list_release(&o.metrics);
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	remove_tmpdir(tmp);
	free(files);
	free(owned);
	free(command);
	free(exits);
	return kpt_cli_fail(&d);
}
