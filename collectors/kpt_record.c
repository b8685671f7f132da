/* kpt_record.c - the recorder (kpt_record.h): spawning the target under a
 * collector, the counters pass, ceilings, the merge. CUDA-free; linked into
 * kptprof. Prints nothing: what the user should read goes into the
 * result's notes. */
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

#include "kpt_format.h"
#include "kpt_inject.h"
#include "kpt_project.h"
#include "kpt_outfile.h"
#include "kpt_record.h"
#include "kpt_window.h"

/* ---- the collector table ---------------------------------------------------------------- */

/* Where libkptinject.so lives relative to kptprof: the build tree first
 * (cli/, with collectors/ beside it), then an installed prefix
 * (<prefix>/bin/kptprof, <prefix>/lib/kptprof/...). */
static const char *const cupti_rel[] = {
	"libkptinject.so", "../collectors/libkptinject.so", "../lib/kptprof/libkptinject.so",
	"../lib/libkptinject.so", "../lib64/kptprof/libkptinject.so", NULL,
};
/* The driver loads it through CUDA_INJECTION64_PATH; NVTX through
 * NVTX_INJECTION64_PATH (the same library hands NVTX to its libcupti). */
static const char *const cupti_inject[] = { "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH", NULL };
/* NVLink multicast off in NCCL, PyTorch and NVSHMEM: a program that uses
 * it can take the GPUs of a shared host out of service. */
static const char *const cupti_env[] = {
	"NCCL_NVLS_ENABLE=0", "TORCH_SYMM_MEM_DISABLE_MULTICAST=1", "NVSHMEM_DISABLE_NVLS=1", NULL,
};

const struct kpt_collector kpt_collectors[] = {
	{ .name = "cupti", .library = "libkptinject.so", .library_env = "KPTPROF_INJECT",
	  .library_rel = cupti_rel, .hint = "build kptprof with a CUDA toolkit, or set KPTPROF_INJECT to the library",
	  .probe = kpt_gpu_probe, .inject_env = cupti_inject, .fixed_env = cupti_env },
};
const size_t kpt_ncollectors = sizeof kpt_collectors / sizeof kpt_collectors[0];

const struct kpt_collector *kpt_collector_find(const char *name)
{
	if (!name)
		return &kpt_collectors[0];
	for (size_t i = 0; i < kpt_ncollectors; i++)
		if (strcmp(kpt_collectors[i].name, name) == 0)
			return &kpt_collectors[i];
	return NULL;
}

int kpt_record_exe_dir(char *out, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", out, cap - 1);
	char *slash;

	if (n <= 0)
		return -1;
	out[n] = '\0';
	slash = strrchr(out, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

int kpt_record_find_beside(const char *override, const char *const *rel, int mode, char *out, size_t cap)
{
	char dir[PATH_MAX], buf[PATH_MAX + 64], real[PATH_MAX];

	if (override) {
		if (access(override, mode) != 0 || !realpath(override, real) || strlen(real) >= cap)
			return -1;
		memcpy(out, real, strlen(real) + 1);
		return 0;
	}
	if (kpt_record_exe_dir(dir, sizeof dir) < 0)
		return -1;
	for (size_t i = 0; rel[i]; i++) {
		snprintf(buf, sizeof buf, "%s/%s", dir, rel[i]);
		if (access(buf, mode) == 0 && realpath(buf, real) && strlen(real) < cap) {
			memcpy(out, real, strlen(real) + 1);
			return 0;
		}
	}
	return -1;
}

int kpt_collector_library(const struct kpt_collector *c, char *out, size_t cap)
{
	const char *e = c->library_env ? getenv(c->library_env) : NULL;

	return kpt_record_find_beside(e && e[0] ? e : NULL, c->library_rel, R_OK, out, cap);
}

/* ---- notes ------------------------------------------------------------------------------ */

static void note(struct kpt_record_result *r, enum kpt_record_note_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(struct kpt_record_result *r, enum kpt_record_note_kind kind, const char *fmt, ...)
{
	va_list ap;

	if (r->nnotes == KPT_RECORD_NOTES)
		return;
	r->note[r->nnotes].kind = kind;
	va_start(ap, fmt);
	vsnprintf(r->note[r->nnotes].text, sizeof r->note[0].text, fmt, ap);
	va_end(ap);
	r->nnotes++;
}

/* ---- locating things -------------------------------------------------------------------- */

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
	/* absolute: a project's workloads start in folders of their own */
	if (realpath(tmp, copy) && strlen(copy) < cap)
		memcpy(tmp, copy, strlen(copy) + 1);
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

static volatile sig_atomic_t g_child, g_group; /* g_group: the child leads its own process group */

static void forward_signal(int sig)
{
	if (g_child > 0)
		kill(g_group ? -(pid_t)g_child : (pid_t)g_child, sig);
}

/* The capture-window settings, in the order of kpt_record_opts.win (the
 * collector's variables, kpt_window.h). */
static const char *const window_env[] = {
	KPT_ENV_WINDOW_CAPTURE, KPT_ENV_WINDOW_STEPS, KPT_ENV_WINDOW_EVERY, KPT_ENV_WINDOW_DELAY,
	KPT_ENV_WINDOW_DURATION,
};

struct launch {
	const struct kpt_collector *coll;
	const char *inject, *tmp;
	int api;
	char prefix;                /* 'r' timing runs, 'c' the counters pass */
	const char *counters;       /* KPT_COUNTERS value, NULL: none */
	/* KPT_ACTIVITY_KINDS value (--kinds); NULL: left as inherited, except
	 * in the counters pass, which enables no activity and unsets it. */
	const char *kinds;
	const char *sample_ms;      /* KPT_SAMPLE_MS value; NULL: left as inherited */
	const char *const *win;     /* window option values (kpt_record_opts.win), NULL each: inherited */
	const char *child_log;      /* kpt_record_opts.child_log */
	/* a project's workload (kpt_project.h): tag goes into the file names
	 * after the run ("-w003": its index), env is added, the target starts
	 * in cwd and is killed with its process group past timeout_s; "", NULL,
	 * NULL and 0 for a plain recording */
	const char *tag;
	char *const *env;
	const char *cwd;
	double timeout_s;
};

/* Waits for pid; past timeout_s (> 0) kills its process group and sets
 * *killed. Returns waitpid's status. */
static int wait_child(pid_t pid, double timeout_s, int *killed)
{
	struct timespec now, end, nap = { 0, 10 * 1000 * 1000 };
	int status = 0;
	pid_t got;

	*killed = 0;
	if (timeout_s <= 0) {
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
		return status;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)timeout_s;
	end.tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		got = waitpid(pid, &status, WNOHANG);
		if (got == pid || (got < 0 && errno != EINTR))
			return status;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec || (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec)) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
				;
			*killed = 1;
			return status;
		}
		nanosleep(&nap, NULL);
	}
}

/* Runs argv once as run `run`. Returns the wait status decoded as an exit
 * status (128 + signal for a killed target), or -1 with d set when the
 * command could not be started; *killed (may be NULL): past its timeout. */
static int run_once(const struct launch *l, char **argv, long run, int *killed, struct kpt_diag *d)
{
	char out[PATH_MAX + 96], st[PATH_MAX + 96];
	const char *tag = l->tag ? l->tag : "";
	int pfd[2], err = 0, status = 0, timed_out = 0;
	ssize_t n;
	pid_t pid;

	snprintf(out, sizeof out, "%s/%c%05ld%s-p%%p.kpt", l->tmp, l->prefix, run, tag);
	snprintf(st, sizeof st, "%s/%c%05ld%s-p%%p.status", l->tmp, l->prefix, run, tag);
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
		if (l->child_log) {
			int fd = open(l->child_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0644);

			if (fd >= 0) {
				dup2(fd, STDOUT_FILENO);
				dup2(fd, STDERR_FILENO);
			}
		}
		if (l->timeout_s > 0)
			setpgid(0, 0); /* a timeout kills the program and its children */
		for (size_t i = 0; l->env && l->env[i]; i++) {
			const char *eq = strchr(l->env[i], '=');
			char *name = eq ? strndup(l->env[i], (size_t)(eq - l->env[i])) : NULL;

			if (name)
				setenv(name, eq + 1, 1);
			free(name);
		}
		for (size_t i = 0; l->coll->inject_env[i]; i++)
			setenv(l->coll->inject_env[i], l->inject, 1);
		setenv(KPT_ENV_OUTPUT, out, 1);
		for (size_t i = 0; l->coll->fixed_env[i]; i++) {
			char kv[256];
			const char *eq = strchr(l->coll->fixed_env[i], '=');

			if (!eq || (size_t)(eq - l->coll->fixed_env[i]) >= sizeof kv)
				continue;
			snprintf(kv, sizeof kv, "%.*s", (int)(eq - l->coll->fixed_env[i]), l->coll->fixed_env[i]);
			setenv(kv, eq + 1, 1);
		}
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
		if (!l->cwd || chdir(l->cwd) == 0)
			execvp(argv[0], argv);
		err = errno;
		if (write(pfd[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(pfd[1]);
	if (l->timeout_s > 0)
		setpgid(pid, pid); /* either side may get there first */
	g_group = l->timeout_s > 0;
	g_child = pid;
	do
		n = read(pfd[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	status = wait_child(pid, l->timeout_s, &timed_out);
	g_child = 0;
	if (killed)
		*killed = timed_out;
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
static int counters_pass(const struct kpt_record_opts *o, struct kpt_record_result *res,
			 const struct launch *base, char **cmd, struct kpt_diag *d)
{
	struct launch l = *base;
	char from[PATH_MAX + 300], to[PATH_MAX + 300];
	struct dirent *e;
	struct counters_why why = { 0 };
	uint64_t values = 0;
	DIR *dir;
	int s, files = 0, rc = 0;

	l.prefix = 'c';
	l.counters = o->counters_metrics;
	l.kinds = NULL;
	s = run_once(&l, cmd, 0, NULL, d);
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

				if (v > res->counter_passes)
					res->counter_passes = (unsigned)v;
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
		note(res, KPT_NOTE_WARNING, "counters: %llu CUDA context%s could not be read (at exit or when handing the "
			"counters to another process), so %s last kernels have no counters%s%s", (unsigned long long)why.lost,
			why.lost == 1 ? "" : "s", why.lost == 1 ? "its" : "their", why.reason[0] ? ": " : "", why.reason);
	if (rc == 0 && s != 0)
		note(res, KPT_NOTE_WARNING, "the counters pass exited with status %d", s);
	return rc;
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
/* The ceilings of one GPU (`runner --calibrate`), uuid "" none. */
struct ceil {
	char uuid[48];
	double copy_gbps, bf16_tflops;
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
			note(res, KPT_NOTE_WARNING, "'%s --calibrate' failed: no ceilings in this recording", runner);
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
	note(res, KPT_NOTE_INFO, "ceilings of %s: copy %.0f GB/s, bf16 %.0f TFLOP/s (%s)", gpu->name,
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
		note(res, KPT_NOTE_WARNING, "'%s --list --tsv' failed: FLOPs and bytes per workload not recorded", runner);
}

/* The idle gap of a program that is the kpt-workloads runner (`record --
 * kpt-workloads --suite S --settle-us U`, and every side of `ab` and `gate
 * --against`): U, 0 without the option; -1 for any other program. */
static long runner_cmd_settle(char *const *cmd)
{
	const char *base = strrchr(cmd[0], '/');
	long v = 0;

	if (strcmp(base ? base + 1 : cmd[0], "kpt-workloads") != 0)
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

/* What a project's recording adds to the merge: each workload's root
 * range (by proc_file.wl) and its meta keys (NULL each: not written). */
struct proj_merge {
	const char *const *root;
	size_t nwl;
	const char *project, *workloads, *step_ranges, *window;
};

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
static char **runner_argv(const struct kpt_record_opts *o, const char *runner)
{
	static char it[32], wu[32], st[32];
	char **v = calloc((size_t)o->nworkloads + 12, sizeof *v);
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
	if (o->settle_us > 0) {
		snprintf(st, sizeof st, "%ld", o->settle_us);
		v[n++] = "--settle-us";
		v[n++] = st;
	}
	if (o->suite) {
		v[n++] = "--suite";
		v[n++] = (char *)o->suite;
	}
	for (int i = 0; i < o->nworkloads; i++)
		v[n++] = (char *)o->workloads[i];
	return v;
}


/* ---- the recorder ------------------------------------------------------------------------ */

/* What every recording sets up and takes down: the collector's library,
 * the temporary folder, the GPU probe, the forwarded signals, the exit
 * status of each run. */
struct session {
	const struct kpt_collector *coll;
	struct kpt_gpu_list gpus;
	char inject[PATH_MAX], tmp[PATH_MAX];
	struct sigaction old_int, old_term;
	int tmp_made, signals;
	char *exits;                /* "0,0,3": meta "exit_status" */
	size_t nexits;
};

/* Accepts a half-opened session. */
static void session_close(struct session *s)
{
	if (s->signals) {
		sigaction(SIGINT, &s->old_int, NULL);
		sigaction(SIGTERM, &s->old_term, NULL);
	}
	if (s->tmp_made)
		remove_tmpdir(s->tmp);
	free(s->exits);
	s->exits = NULL;
	s->signals = s->tmp_made = 0;
}

/* Opens s for a recording of runs runs at o->out and says in r which GPU
 * records. On failure s is closed and nothing is left behind. */
static int session_open(struct session *s, const struct kpt_record_opts *o, long runs, struct kpt_record_result *r,
			struct kpt_diag *d)
{
	struct sigaction sa;
	int rc;

	memset(s, 0, sizeof *s);
	s->coll = o->collector ? o->collector : &kpt_collectors[0];
	if (kpt_collector_library(s->coll, s->inject, sizeof s->inject) < 0) {
		kpt_diag_set(d, KPT_E_NOTFOUND, "cannot find the collector '%s' beside kptprof", s->coll->library);
		return kpt_diag_hint(d, "%s", s->coll->hint);
	}
	if ((rc = make_tmpdir(o->out, s->tmp, sizeof s->tmp, d)) < 0)
		return rc;
	s->tmp_made = 1;
	if (o->gpus && !o->skip_gpu_check)
		s->gpus = *o->gpus;
	else if (!o->skip_gpu_check && (rc = s->coll->probe(&s->gpus, d)) < 0) {
		session_close(s);
		return rc;
	}
	if (s->gpus.n > 0) {
		snprintf(r->gpu, sizeof r->gpu, "%.127s", s->gpus.gpu[0].name);
		kpt_slug(s->gpus.gpu[0].name, r->slug, (int)sizeof r->slug);
	}
	if (!(s->exits = malloc((size_t)runs * 12 + 1))) {
		session_close(s);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	s->exits[0] = '\0';
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &s->old_int);
	sigaction(SIGTERM, &sa, &s->old_term);
	s->signals = 1;
	return 0;
}

static void session_exit(struct session *s, long run, int status)
{
	s->nexits += (size_t)sprintf(s->exits + s->nexits, "%s%d", run ? "," : "", status);
}

/* After the runs (and the counters pass): ceilings, then every
 * per-process file of the temporary folder merged into o->out. what: the
 * target, for "nothing recorded"; the rest as merge() takes them. */
static int session_merge(struct session *s, const struct kpt_record_opts *o, struct kpt_record_result *r,
			 const char *what, const char *command, const char *runner, const struct proj_merge *pm,
			 struct kpt_diag *d)
{
	struct ceil ceil = { "", 0, 0 };
	struct proc_file *files = NULL;
	struct kpt_diag perr;
	int n, rc;

	kpt_diag_clear(&perr);
	/* After the timing runs, so that calibration heat cannot touch them. */
	if (!o->skip_gpu_check && !o->no_calibrate && o->runner && s->gpus.n > 0)
		ceilings(&ceil, r, o->runner, &s->gpus.gpu[0]);
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
		note(r, KPT_NOTE_WARNING, "a process could not record: %s", perr.msg);
		if (perr.hint[0])
			note(r, KPT_NOTE_HINT, "%s", perr.hint);
	}
	r->files = n;
	rc = merge(o, r, &ceil, s->tmp, files, n, command, s->exits, runner, pm, d);
	free(files);
	return rc;
}

/* A program gets kernels only unless asked (--kinds, or an inherited
 * KPT_ACTIVITY_KINDS), and NVML samples every 100 ms instead of 10
 * (unless KPT_SAMPLE_MS is set): on a launch-bound PyTorch step on an
 * H100 the other kinds and the 10 ms sampler each cost points on top
 * of CUPTI's own kernel tracing (bench/RESULTS.md, "Collector"). The
 * built-in suites keep all four kinds and 10 ms: their runner's time
 * is the GPU's, and their runs are short. */
static void program_defaults(struct launch *l)
{
	if (!l->kinds && !getenv(KPT_ENV_ACTIVITY_KINDS))
		l->kinds = "kernel";
	if (!getenv(KPT_ENV_SAMPLE_MS))
		l->sample_ms = "100";
}

int kpt_record_run(const struct kpt_record_opts *o, struct kpt_record_result *r, struct kpt_diag *d)
{
	struct session s;
	struct kpt_diag local;
	struct launch l;
	char **cmd, **owned = NULL, *command = NULL;
	int rc = 0;

	if (!d)
		d = &local;
	kpt_diag_clear(d);
	memset(r, 0, sizeof *r);
	if (o->suite)
		snprintf(r->suite, sizeof r->suite, "%s", o->suite);
	if (o->cmd) {
		cmd = o->cmd;
		if (!command_exists(cmd[0]))
			return kpt_diag_set(d, KPT_E_NOTFOUND, "command not found: '%s'", cmd[0]);
	} else {
		if (!o->runner) {
			kpt_diag_set(d, KPT_E_NOTFOUND, "cannot find the workload runner 'kpt-workloads' beside kptprof");
			return kpt_diag_hint(d, "build the kernels (a CUDA toolkit is needed) or set KPTPROF_WORKLOADS");
		}
		if (!(cmd = owned = runner_argv(o, o->runner)))
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	if ((rc = session_open(&s, o, o->runs, r, d)) < 0) {
		free(owned);
		return rc;
	}
	command = join_argv(cmd);
	l = (struct launch){ .coll = s.coll, .inject = s.inject, .tmp = s.tmp, .api = o->api, .prefix = 'r',
			     .kinds = o->kinds, .win = o->win, .child_log = o->child_log };
	if (o->cmd)
		program_defaults(&l);
	for (long run = 0; run < o->runs; run++) {
		int st = run_once(&l, cmd, run, NULL, d);

		if (st < 0) {
			rc = d->code ? d->code : KPT_E_IO;
			goto out;
		}
		if (st != 0 && r->status == 0)
			r->status = st;
		session_exit(&s, run, st);
	}
	if (o->counters_metrics && (rc = counters_pass(o, r, &l, cmd, d)) < 0)
		goto out;
	rc = session_merge(&s, o, r, cmd[0], command ? command : cmd[0], o->cmd ? NULL : o->runner, NULL, d);
out:
	session_close(&s);
	free(owned);
	free(command);
	return rc < 0 ? (d->code ? (int)d->code : rc) : 0;
}

/* ---- a project's workloads ---------------------------------------------------------------- */

/* The bundled suite: exactly kpt_record_run with o.suite. */
static int record_builtin(const struct kpt_project *p, const char *const *names, size_t nnames,
			  const struct kpt_record_opts *base, struct kpt_record_result *r, struct kpt_diag *d)
{
	struct kpt_record_opts o = *base;

	for (size_t i = 0; i < nnames; i++)
		if (strcmp(names[i], p->wl[0].name) != 0)
			return kpt_diag_set(d, KPT_E_NOTFOUND, "no workload '%s' in suite '%s'", names[i], p->name);
	o.cmd = NULL;
	/* the project's own runner: another revision's build (gate --against) */
	if (p->wl[0].argv && p->wl[0].argv[0])
		o.runner = p->wl[0].argv[0];
	o.suite = p->wl[0].name;
	o.workloads = NULL;
	o.nworkloads = 0;
	o.runs = base->runs > 0 ? base->runs : p->runs;
	return kpt_record_run(&o, r, d);
}

/* One workload to record: its place in the project, its launch, runs. */
struct proj_wl {
	const struct kpt_project_workload *w;
	size_t index;
	long runs;
	const char *win[5];
	char tag[32];
	struct launch l;
};

/* Appends ", "-less text to a growing string; -1 out of memory. */
static int str_add(char **buf, size_t *len, const char *sep, const char *a, const char *b)
{
	size_t need = strlen(sep) + strlen(a) + (b ? strlen(b) + 1 : 0) + 1;
	char *nb = realloc(*buf, *len + need);

	if (!nb)
		return -1;
	*buf = nb;
	*len += (size_t)sprintf(nb + *len, "%s%s%s%s", *len ? sep : "", a, b ? "/" : "", b ? b : "");
	return 0;
}

/* The workloads of p to record (names, or all), in p's order, checked:
 * window and command. 0, or a diag. */
static int project_pick(const struct kpt_project *p, const char *const *names, size_t nnames, long runs,
			struct proj_wl *out, size_t *nout, struct kpt_diag *d)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nwl; i++) {
		const struct kpt_project_workload *w = &p->wl[i];
		struct proj_wl *pw = &out[n];
		struct kpt_window_spec spec;
		char path[PATH_MAX * 2];
		int want = nnames == 0;

		for (size_t k = 0; k < nnames && !want; k++)
			want = strcmp(names[k], w->name) == 0;
		if (!want)
			continue;
		memset(pw, 0, sizeof *pw);
		pw->w = w;
		pw->index = i;
		pw->runs = runs > 0 ? runs : w->runs > 0 ? w->runs : p->runs;
		pw->win[0] = w->capture_range;
		pw->win[1] = w->steps;
		pw->win[2] = w->every;
		if (kpt_window_parse(pw->win[0], pw->win[1], pw->win[2], NULL, NULL, &spec, d) < 0) {
			char msg[sizeof d->msg];

			snprintf(msg, sizeof msg, "%s", d->msg);
			return kpt_diag_set(d, KPT_E_INVAL, "workload '%s': %s", w->name, msg);
		}
		snprintf(path, sizeof path, "%s/%s", w->cwd ? w->cwd : ".", w->argv[0]);
		if (!command_exists(w->argv[0][0] != '/' && strchr(w->argv[0], '/') ? path : w->argv[0]))
			return kpt_diag_set(d, KPT_E_NOTFOUND, "workload '%s': command not found: '%s'", w->name,
					    w->argv[0]);
		snprintf(pw->tag, sizeof pw->tag, "-w%03zu", i);
		n++;
	}
	for (size_t k = 0; k < nnames; k++)
		if (!kpt_project_workload(p, names[k])) {
			char *list = NULL;
			size_t len = 0;

			for (size_t i = 0; i < p->nwl; i++)
				if (str_add(&list, &len, ", ", p->wl[i].name, NULL) < 0)
					break;
			kpt_diag_set(d, KPT_E_NOTFOUND, "no workload '%s' in project '%s'", names[k], p->name);
			kpt_diag_hint(d, "its workloads: %s", list ? list : "");
			free(list);
			return d->code;
		}
	*nout = n;
	return 0;
}

/* The meta strings of a project's recording, malloc'd into pm (free with
 * proj_meta_free); command: the workloads' commands, "; "-separated. */
static int proj_meta(const struct kpt_project *p, const struct proj_wl *pw, size_t n, struct proj_merge *pm,
		     char **command)
{
	char *names = NULL, *steps = NULL, *win = NULL, *cmd = NULL;
	size_t ln = 0, ls = 0, lw = 0, lc = 0;
	int bad = 0;

	for (size_t i = 0; i < n && !bad; i++) {
		struct kpt_window_spec spec;
		char desc[2 * KPT_WINDOW_NAME_MAX + 128];
		char *argv = join_argv(pw[i].w->argv);

		bad |= !argv || str_add(&names, &ln, ",", pw[i].w->name, NULL) < 0 ||
		       str_add(&cmd, &lc, "; ", argv, NULL) < 0;
		free(argv);
		if (pw[i].w->step_range)
			bad |= str_add(&steps, &ls, ",", pw[i].w->name, pw[i].w->step_range) < 0;
		if (kpt_window_parse(pw[i].win[0], pw[i].win[1], pw[i].win[2], NULL, NULL, &spec, NULL) == 0 &&
		    kpt_window_is_set(&spec)) {
			kpt_window_describe(&spec, desc, sizeof desc);
			bad |= str_add(&win, &lw, "; ", pw[i].w->name, NULL) < 0 || str_add(&win, &lw, ": ", desc, NULL) < 0;
		}
	}
	pm->project = p->path;
	pm->workloads = names;
	pm->step_ranges = steps;
	pm->window = win;
	*command = cmd;
	return bad ? -1 : 0;
}

static void proj_meta_free(struct proj_merge *pm, char *command)
{
	free((char *)pm->workloads);
	free((char *)pm->step_ranges);
	free((char *)pm->window);
	free(command);
}

int kpt_record_project(const struct kpt_project *p, const char *const *names, size_t nnames,
		       const struct kpt_record_opts *base, struct kpt_record_result *r, struct kpt_diag *d)
{
	struct kpt_record_opts o = *base;
	struct proj_merge pm = { 0 };
	struct proj_wl *pw = NULL;
	const char **roots = NULL;
	struct kpt_diag local;
	struct session s;
	char *command = NULL;
	size_t n = 0;
	long runs = 0;
	int rc;

	if (!d)
		d = &local;
	kpt_diag_clear(d);
	memset(r, 0, sizeof *r);
	if (p->builtin)
		return record_builtin(p, names, nnames, base, r, d);
	if (!(pw = calloc(p->nwl, sizeof *pw)) || !(roots = calloc(p->nwl, sizeof *roots))) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto done;
	}
	if ((rc = project_pick(p, names, nnames, base->runs, pw, &n, d)) < 0)
		goto done;
	for (size_t i = 0; i < p->nwl; i++)
		roots[i] = p->wl[i].root_range;
	for (size_t i = 0; i < n; i++)
		runs = pw[i].runs > runs ? pw[i].runs : runs;
	if (proj_meta(p, pw, n, &pm, &command) < 0) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto done;
	}
	pm.root = roots;
	pm.nwl = p->nwl;
	/* the recording's own options: the runner's are not a project's */
	o.cmd = NULL;
	o.suite = p->name;
	o.workloads = NULL;
	o.nworkloads = 0;
	o.iterations = o.warmup = o.settle_us = -1;
	o.cold = 0;
	o.window = NULL;
	o.runs = runs;
	memset(o.win, 0, sizeof o.win);
	if ((rc = session_open(&s, &o, runs, r, d)) < 0)
		goto done;
	snprintf(r->suite, sizeof r->suite, "%s", p->name);
	for (size_t i = 0; i < n; i++) {
		struct launch *l = &pw[i].l;

		*l = (struct launch){ .coll = s.coll, .inject = s.inject, .tmp = s.tmp, .api = o.api, .prefix = 'w',
				      .kinds = o.kinds, .win = pw[i].win, .tag = pw[i].tag, .env = pw[i].w->env,
				      .cwd = pw[i].w->cwd, .timeout_s = pw[i].w->timeout_s, .child_log = o.child_log };
		program_defaults(l);
	}
	/* run -1 is warm-up ('w' files, never merged); then run i of each */
	for (long run = -1; run < runs && rc == 0; run++) {
		int first = 0;

		for (size_t i = 0; i < n && rc == 0; i++) {
			long reps = run < 0 ? pw[i].w->warmup : run < pw[i].runs;

			pw[i].l.prefix = run < 0 ? 'w' : 'r';
			for (long k = 0; k < reps && rc == 0; k++) {
				int killed = 0, st = run_once(&pw[i].l, pw[i].w->argv, run < 0 ? k : run, &killed, d);

				if (st < 0) {
					rc = d->code ? d->code : KPT_E_IO;
					break;
				}
				if (killed)
					note(r, KPT_NOTE_WARNING, "workload '%s' %s %ld: killed after its timeout of %g s",
					     pw[i].w->name, run < 0 ? "warm-up run" : "run", run < 0 ? k : run,
					     pw[i].w->timeout_s);
				if (st != 0 && r->status == 0)
					r->status = st;
				if (st != 0 && first == 0)
					first = st;
			}
		}
		if (run >= 0)
			session_exit(&s, run, first);
	}
	for (size_t i = 0; i < n && rc == 0 && o.counters_metrics; i++)
		rc = counters_pass(&o, r, &pw[i].l, pw[i].w->argv, d);
	if (rc == 0)
		rc = session_merge(&s, &o, r, p->name, command ? command : p->name, NULL, &pm, d);
	session_close(&s);
done:
	proj_meta_free(&pm, command);
	free(roots);
	free(pw);
	return rc < 0 ? (d->code ? (int)d->code : rc) : 0;
}
