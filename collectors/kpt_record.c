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
#include "kpt_record_int.h"
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
 * NVTX_INJECTION64_PATH (the same library is NVTX's tool itself:
 * kpt_nvtx_inject.c). */
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

void kpt_record_note(struct kpt_record_result *r, enum kpt_record_note_kind kind, const char *fmt, ...)
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

int kpt_record_command_exists(const char *cmd)
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
static const char *const window_env[KPT_WINDOW_SETTINGS] = {
	KPT_ENV_WINDOW_CAPTURE, KPT_ENV_WINDOW_STEPS, KPT_ENV_WINDOW_EVERY, KPT_ENV_WINDOW_DELAY,
	KPT_ENV_WINDOW_DURATION, KPT_ENV_WINDOW_SAMPLE_EVERY, KPT_ENV_WINDOW_SAMPLE_STEPS, KPT_ENV_WINDOW_ON_DEMAND,
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
int kpt_record_run_once(const struct launch *l, char **argv, long run, int *killed, struct kpt_diag *d)
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
		if (l->calibrate_out && l->prefix == 'r')
			setenv(KPT_ENV_CALIBRATE_OUT, l->calibrate_out, 1);
		else
			unsetenv(KPT_ENV_CALIBRATE_OUT);
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
int kpt_record_counters_pass(const struct kpt_record_opts *o, struct kpt_record_result *res,
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
	s = kpt_record_run_once(&l, cmd, 0, NULL, d);
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
		kpt_record_note(res, KPT_NOTE_WARNING, "counters: %llu CUDA context%s could not be read (at exit or when handing the "
			"counters to another process), so %s last kernels have no counters%s%s", (unsigned long long)why.lost,
			why.lost == 1 ? "" : "s", why.lost == 1 ? "its" : "their", why.reason[0] ? ": " : "", why.reason);
	if (rc == 0 && s != 0)
		kpt_record_note(res, KPT_NOTE_WARNING, "the counters pass exited with status %d", s);
	return rc;
}


char *kpt_record_join_argv(char **argv)
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


/* Accepts a half-opened session. */
void kpt_record_session_close(struct session *s)
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
int kpt_record_session_open(struct session *s, const struct kpt_record_opts *o, long runs,
			    struct kpt_record_result *r, struct kpt_diag *d)
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
		kpt_record_session_close(s);
		return rc;
	}
	if (s->gpus.n > 0) {
		snprintf(r->gpu, sizeof r->gpu, "%.127s", s->gpus.gpu[0].name);
		kpt_slug(s->gpus.gpu[0].name, r->slug, (int)sizeof r->slug);
	}
	if (!(s->exits = malloc((size_t)runs * 12 + 1))) {
		kpt_record_session_close(s);
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

void kpt_record_session_exit(struct session *s, long run, int status)
{
	s->nexits += (size_t)sprintf(s->exits + s->nexits, "%s%d", run ? "," : "", status);
}

/* A program gets kernels only unless asked (--kinds, or an inherited
 * KPT_ACTIVITY_KINDS), and NVML samples every 100 ms instead of 10
 * (unless KPT_SAMPLE_MS is set): on a launch-bound PyTorch step on an
 * H100 the other kinds and the 10 ms sampler each cost points on top
 * of CUPTI's own kernel tracing (bench/RESULTS.md, "Collector"). The
 * built-in suites keep all four kinds and 10 ms: their runner's time
 * is the GPU's, and their runs are short. */
void kpt_record_program_defaults(struct launch *l)
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
		if (!kpt_record_command_exists(cmd[0]))
			return kpt_diag_set(d, KPT_E_NOTFOUND, "command not found: '%s'", cmd[0]);
	} else {
		if (!o->runner) {
			kpt_diag_set(d, KPT_E_NOTFOUND, "cannot find the workload runner 'kpt-workloads' beside kptprof");
			return kpt_diag_hint(d, "build the kernels (a CUDA toolkit is needed) or set KPTPROF_WORKLOADS");
		}
		if (!(cmd = owned = runner_argv(o, o->runner)))
			return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	if ((rc = kpt_record_session_open(&s, o, o->runs, r, d)) < 0) {
		free(owned);
		return rc;
	}
	command = kpt_record_join_argv(cmd);
	l = (struct launch){ .coll = s.coll, .inject = s.inject, .tmp = s.tmp, .api = o->api, .prefix = 'r',
			     .kinds = o->kinds, .win = o->win, .child_log = o->child_log };
	if (!o->no_calibrate && !o->skip_gpu_check && s.gpus.n > 0 && kpt_record_cmd_is_runner(cmd)) {
		snprintf(s.calibration, sizeof s.calibration, "%s/" KPT_RECORD_CALIBRATION, s.tmp);
		l.calibrate_out = s.calibration;
	}
	if (o->cmd)
		kpt_record_program_defaults(&l);
	for (long run = 0; run < o->runs; run++) {
		int st = kpt_record_run_once(&l, cmd, run, NULL, d);

		if (st < 0) {
			rc = d->code ? d->code : KPT_E_IO;
			goto out;
		}
		if (st != 0 && r->status == 0)
			r->status = st;
		kpt_record_session_exit(&s, run, st);
	}
	if (o->counters_metrics && (rc = kpt_record_counters_pass(o, r, &l, cmd, d)) < 0)
		goto out;
	rc = kpt_record_session_merge(&s, o, r, cmd[0], command ? command : cmd[0], o->cmd ? NULL : o->runner, NULL, d);
out:
	kpt_record_session_close(&s);
	free(owned);
	free(command);
	return rc < 0 ? (d->code ? (int)d->code : rc) : 0;
}
