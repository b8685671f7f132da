/* kpt_ab.c - same-machine A/B orchestration (see kpt_ab.h): a worktree of
 * the base revision, its build, the interleaved runs and the merge of each
 * side. Never prints: children write to a log file or a pipe. */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kpt_ab.h"
#include "kpt_format.h"

#ifndef KPT_VERSION
#define KPT_VERSION "unknown"
#endif

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void notes_add(struct kpt_ab_notes *n, enum kpt_record_note_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Appends a note unless the same text is there already (a recorder note
 * repeats once per run). */
static void notes_add(struct kpt_ab_notes *n, enum kpt_record_note_kind kind, const char *fmt, ...)
{
	char text[sizeof n->note[0].text];
	va_list ap;

	if (!n || n->n == KPT_AB_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(text, sizeof text, fmt, ap);
	va_end(ap);
	for (int i = 0; i < n->n; i++)
		if (n->note[i].kind == kind && strcmp(n->note[i].text, text) == 0)
			return;
	n->note[n->n].kind = kind;
	memcpy(n->note[n->n].text, text, sizeof text);
	n->n++;
}

/* ---- children ------------------------------------------------------------------------------ */

/* Where a child's output goes: out_fd when >= 0, else a pipe read into
 * cap[0..capn) (NUL-terminated, the rest read and dropped; cap NULL: all
 * dropped). A child past timeout_s (0: none) is killed. */
struct child_io {
	int out_fd;
	char *cap;
	size_t capn;
	double timeout_s;
	int timed_out;              /* out: 1 when it was killed for the timeout */
};

static volatile sig_atomic_t g_child;

static void forward_signal(int sig)
{
	if (g_child > 0)
		kill((pid_t)g_child, sig);
}

/* Runs argv (PATH lookup) in cwd (NULL: here). Returns the exit status
 * (128 + signal when killed), or -1 with d set when it could not start.
 * stdin is inherited; kptprof's own stdout and stderr are never touched.
 * SIGINT and SIGTERM go to the child while it runs (a build stopped by ^C
 * returns here, and the caller still removes its worktree). */
static int spawn(char *const argv[], const char *cwd, struct child_io *io, struct kpt_diag *d)
{
	int efd[2], pfd[2] = { -1, -1 }, err = 0, st = 0, done = 0;
	size_t got = 0;
	double deadline = io->timeout_s > 0 ? now_s() + io->timeout_s : 0;
	struct sigaction sa, old_int, old_term;
	ssize_t n;
	pid_t pid;

	io->timed_out = 0;
	if (io->cap && io->capn)
		io->cap[0] = '\0';
	if (pipe2(efd, O_CLOEXEC) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot create a pipe: %s", strerror(errno)), -1;
	if (io->out_fd < 0 && pipe2(pfd, O_CLOEXEC) < 0) {
		close(efd[0]);
		close(efd[1]);
		return kpt_diag_set(d, KPT_E_IO, "cannot create a pipe: %s", strerror(errno)), -1;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		err = errno;
		close(efd[0]);
		close(efd[1]);
		if (pfd[0] >= 0) {
			close(pfd[0]);
			close(pfd[1]);
		}
		return kpt_diag_set(d, KPT_E_IO, "cannot fork: %s", strerror(err)), -1;
	}
	if (pid == 0) {
		int out = io->out_fd >= 0 ? io->out_fd : pfd[1];

		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		/* dup2 leaves the copies open across exec; when out is 1
		 * already it keeps its flags, so clear close-on-exec there */
		if (out == STDOUT_FILENO)
			fcntl(out, F_SETFD, 0);
		else
			dup2(out, STDOUT_FILENO);
		if (out == STDERR_FILENO)
			fcntl(out, F_SETFD, 0);
		else
			dup2(out, STDERR_FILENO);
		if (cwd && chdir(cwd) < 0)
			err = errno;
		else
			execvp(argv[0], argv);
		if (!err)
			err = errno;
		if (write(efd[1], &err, sizeof err) < 0)
			_exit(127);
		_exit(127);
	}
	close(efd[1]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	g_child = pid;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	do
		n = read(efd[0], &err, sizeof err);
	while (n < 0 && errno == EINTR);
	close(efd[0]);
	while (!done) {
		int wait_ms = 100;

		if (pfd[0] >= 0) {
			struct pollfd p = { .fd = pfd[0], .events = POLLIN };
			char buf[4096];

			if (poll(&p, 1, deadline > 0 ? wait_ms : -1) > 0) {
				ssize_t k = read(pfd[0], buf, sizeof buf);

				if (k > 0 && io->cap && got + 1 < io->capn) {
					size_t c = (size_t)k < io->capn - 1 - got ? (size_t)k : io->capn - 1 - got;

					memcpy(io->cap + got, buf, c);
					got += c;
					io->cap[got] = '\0';
				}
				if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN)) {
					close(pfd[0]);
					pfd[0] = -1;
				}
			}
		} else if (deadline > 0) {
			struct timespec ts = { 0, 20 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		if (pfd[0] < 0 || deadline > 0) {
			pid_t w = waitpid(pid, &st, deadline > 0 ? WNOHANG : 0);

			if (w == pid)
				done = 1;
			else if (w < 0 && errno != EINTR)
				done = 1, st = 0;
		}
		if (!done && deadline > 0 && now_s() > deadline && !io->timed_out) {
			kill(pid, SIGKILL);
			io->timed_out = 1;
		}
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	g_child = 0;
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (n == (ssize_t)sizeof err) {
		kpt_diag_set(d, err == ENOENT ? KPT_E_NOTFOUND : KPT_E_IO, "cannot run '%s': %s", argv[0], strerror(err));
		return -1;
	}
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
}

/* `git -C top ARGS...` with its output into cap (NULL: dropped): git's
 * chatter matters only in an error message. */
static int git(const char *top, const char *const *args, char *cap, size_t capn, struct kpt_diag *d)
{
	char *argv[16];
	int n = 0;
	struct child_io io = { .out_fd = -1, .cap = cap, .capn = capn };

	argv[n++] = "git";
	argv[n++] = "-C";
	argv[n++] = (char *)top;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	return spawn(argv, NULL, &io, d);
}

/* The first line of s, trimmed of its newline, in place. */
static char *first_line(char *s)
{
	s[strcspn(s, "\r\n")] = '\0';
	return s;
}

/* The first line of src into dst[0..cap); -1 when it does not fit. */
static int copy_line(char *dst, size_t cap, char *src)
{
	size_t n = strlen(first_line(src));

	if (n >= cap)
		return -1;
	memcpy(dst, src, n + 1);
	return 0;
}

/* ---- the other revision ----------------------------------------------------------------------- */

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

/* Removes the tree at path (not following links). */
static void rm_tree(const char *path)
{
	nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int kpt_ab_resolve(const char *dir, const char *ref, struct kpt_ab_checkout *co, struct kpt_diag *d)
{
	char out[PATH_MAX + 256], spec[1024];
	int st;

	memset(co, 0, sizeof *co);
	{
		const char *top[] = { "rev-parse", "--show-toplevel", NULL };

		st = git(dir, top, out, sizeof out, d);
		if (st < 0)
			return d->code;
		if (st != 0 || !first_line(out)[0] || copy_line(co->top, sizeof co->top, out) < 0)
			return kpt_diag_set(d, KPT_E_NOTFOUND, "'%s' is not in a git repository: cannot check out '%s'",
					    dir, ref);
	}
	{
		const char *pre[] = { "rev-parse", "--show-prefix", NULL };

		if (git(dir, pre, out, sizeof out, d) != 0 || copy_line(co->prefix, sizeof co->prefix, out) < 0)
			co->prefix[0] = '\0';
	}
	/* a ref is no option: "-x" would be read as one */
	if (!ref[0] || ref[0] == '-' || strlen(ref) + 10 > sizeof spec)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "no commit '%s' in '%s'", ref, co->top);
	snprintf(spec, sizeof spec, "%s^{commit}", ref);
	{
		const char *rp[] = { "rev-parse", "--verify", "--quiet", spec, NULL };

		st = git(co->top, rp, out, sizeof out, d);
		if (st < 0)
			return d->code;
		if (st != 0 || strlen(first_line(out)) < 40 || copy_line(co->commit, sizeof co->commit, out) < 0) {
			kpt_diag_set(d, KPT_E_NOTFOUND, "no commit '%s' in '%s'", ref, co->top);
			return kpt_diag_hint(d, "give a branch, tag or commit of this repository ('git fetch' it first "
					     "when it is only on a remote)");
		}
	}
	return 0;
}

int kpt_ab_checkout(const char *dir, const char *ref, const char *tmpdir, struct kpt_ab_checkout *co,
		    struct kpt_diag *d)
{
	char out[PATH_MAX + 256];
	int rc, st;

	if ((rc = kpt_ab_resolve(dir, ref, co, d)) < 0)
		return rc;
	if (!tmpdir || !tmpdir[0])
		tmpdir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
	if ((size_t)snprintf(co->tmp, sizeof co->tmp, "%s/kptprof-ab.XXXXXX", tmpdir) >= sizeof co->tmp - 8 ||
	    !mkdtemp(co->tmp)) {
		int e = errno;

		co->tmp[0] = '\0';
		return kpt_diag_set(d, KPT_E_IO, "cannot make a temporary folder in '%s': %s", tmpdir, strerror(e));
	}
	memcpy(co->path, co->tmp, sizeof co->tmp - 8);
	strcat(co->path, "/src");
	{
		const char *add[] = { "worktree", "add", "--quiet", "--detach", co->path, co->commit, NULL };

		st = git(co->top, add, out, sizeof out, d);
		if (st != 0) {
			if (st > 0)
				kpt_diag_set(d, KPT_E_IO, "cannot check out '%s' (git worktree add: exit status %d): %s",
					     ref, st, first_line(out));
			kpt_ab_checkout_remove(co);
			return d->code;
		}
	}
	return 0;
}

void kpt_ab_checkout_remove(struct kpt_ab_checkout *co)
{
	struct kpt_diag d;
	struct stat sb;

	if (!co)
		return;
	if (co->top[0] && co->path[0]) {
		const char *rm[] = { "worktree", "remove", "--force", co->path, NULL };
		const char *prune[] = { "worktree", "prune", NULL };

		if (stat(co->path, &sb) == 0)
			git(co->top, rm, NULL, 0, &d);
		git(co->top, prune, NULL, 0, &d); /* a worktree removed by hand, or a failed add */
	}
	if (co->tmp[0])
		rm_tree(co->tmp);
	co->path[0] = co->tmp[0] = '\0';
}

/* ---- building it ------------------------------------------------------------------------------ */

/* argv joined by spaces into buf (for messages; long ones cut with "..."). */
static const char *join_words(char *const *argv, char *buf, size_t cap)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; argv[i] && n + 4 < cap; i++) {
		int k = snprintf(buf + n, cap - n, "%s%s", i ? " " : "", argv[i]);

		if (k < 0 || (size_t)k >= cap - n) {
			snprintf(buf + cap - 4, 4, "...");
			break;
		}
		n += (size_t)k;
	}
	return buf;
}

int kpt_ab_build(const struct kpt_project *p, const char *cwd, int log_fd, const char *log_path, double timeout_s,
		 struct kpt_diag *d)
{
	struct child_io io = { .out_fd = log_fd, .timeout_s = timeout_s };
	char words[512];
	int st;

	if (!p->build || !p->build[0])
		return 0;
	join_words(p->build, words, sizeof words);
	st = spawn(p->build, cwd ? cwd : p->root, &io, d);
	if (st < 0) {
		char msg[sizeof d->msg];

		snprintf(msg, sizeof msg, "%s", d->msg);
		kpt_diag_set(d, d->code, "the build command '%s' did not start in '%s': %s", words,
			     cwd ? cwd : p->root, msg);
		return kpt_diag_hint(d, "the project file's \"build\" is an argv, run without a shell: "
				     "[\"sh\", \"-c\", \"...\"] for a shell line");
	}
	if (io.timed_out)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "the build command '%s' ran past %.0f s and was stopped; "
				    "its output is in '%s'", words, timeout_s, log_path ? log_path : "-");
	if (st != 0)
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "the build command '%s' failed (exit status %d); its output "
				    "is in '%s'", words, st, log_path ? log_path : "-");
	return 0;
}

int kpt_ab_build_runner(const char *dir, char *out, size_t cap)
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

/* This kptprof's folder's parent levels: up = 0 its folder, 1 the one above. */
static int self_dir(int up, char *out, size_t cap)
{
	if (kpt_record_exe_dir(out, cap) < 0)
		return -1;
	while (up-- > 0) {
		char *slash = strrchr(out, '/');

		if (!slash || slash == out)
			return -1;
		*slash = '\0';
	}
	return 0;
}

int kpt_ab_runner_knows(const char *runner, const char *opt)
{
	char buf[16384];
	char *argv[] = { (char *)runner, "--help", NULL };
	struct child_io io = { .out_fd = -1, .cap = buf, .capn = sizeof buf };
	struct kpt_diag d;

	if (spawn(argv, NULL, &io, &d) < 0)
		return 0;
	return strstr(buf, opt) != NULL;
}

/* CMAKE_CUDA_ARCHITECTURES of the build this kptprof is in
 * (BUILD/CMakeCache.txt above BUILD/cli/kptprof), as a -D option into
 * arch; "native" when unknown. */
static void own_cuda_arch(char *arch, size_t cap)
{
	char dir[PATH_MAX], cache[PATH_MAX + 32], line[512];
	FILE *f;

	snprintf(arch, cap, "-DCMAKE_CUDA_ARCHITECTURES=native");
	if (self_dir(1, dir, sizeof dir) < 0)
		return;
	snprintf(cache, sizeof cache, "%s/CMakeCache.txt", dir);
	if (!(f = fopen(cache, "r")))
		return;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "CMAKE_CUDA_ARCHITECTURES:", 25) == 0) {
			char *v = strchr(line, '=');

			line[strcspn(line, "\n")] = 0;
			if (v && v[1])
				snprintf(arch, cap, "-DCMAKE_CUDA_ARCHITECTURES=%s", v + 1);
		}
	fclose(f);
}

int kpt_ab_build_suite(const char *src, const char *bld, int log_fd, const char *log_path, char *runner, size_t cap,
		       struct kpt_diag *d)
{
	char arch[160], jobs[32];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char *cfg[] = { "cmake", "-S", (char *)src, "-B", (char *)bld, "-DCMAKE_BUILD_TYPE=Release", arch, NULL };
	char *mk[] = { "cmake", "--build", (char *)bld, jobs, "--target", "kpt-workloads", NULL };
	struct kpt_project p = { .root = src };
	int rc;

	own_cuda_arch(arch, sizeof arch);
	snprintf(jobs, sizeof jobs, "-j%ld", ncpu > 0 ? ncpu : 2);
	p.build = cfg;
	if ((rc = kpt_ab_build(&p, src, log_fd, log_path, 0, d)) < 0)
		return rc;
	p.build = mk;
	if ((rc = kpt_ab_build(&p, src, log_fd, log_path, 0, d)) < 0)
		return rc;
	if (kpt_ab_build_runner(bld, runner, cap) < 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "building '%s' made no kpt-workloads (see '%s')", src,
				    log_path ? log_path : "-");
	return 0;
}

/* ---- running both ------------------------------------------------------------------------------ */

size_t kpt_ab_common(const struct kpt_project *a, const struct kpt_project *b, const char **names, size_t cap,
		     struct kpt_ab_notes *notes)
{
	size_t n = 0;

	for (size_t i = 0; i < b->nwl; i++) {
		if (kpt_project_workload(a, b->wl[i].name)) {
			if (n < cap)
				names[n++] = b->wl[i].name;
		} else {
			notes_add(notes, KPT_NOTE_INFO, "workload '%s' is only in B (this revision): not compared",
				  b->wl[i].name);
		}
	}
	for (size_t i = 0; i < a->nwl; i++)
		if (!kpt_project_workload(b, a->wl[i].name))
			notes_add(notes, KPT_NOTE_INFO, "workload '%s' is only in A (the base revision): not compared",
				  a->wl[i].name);
	return n;
}

/* Merges dir/<side>-<i>.kpt, i < m, into dir/<side>.kpt as runs 0..m-1,
 * then removes the parts. */
static int merge_side(const char *dir, char side, long m, const char *command, struct kpt_diag *d)
{
	char path[PATH_MAX + 32], part[PATH_MAX + 32], buf[64];
	struct kpt_writer *w = NULL;
	struct kpt_meta_merge *mm = NULL;
	int rc;

	snprintf(path, sizeof path, "%s/%c.kpt", dir, side);
	if ((rc = kpt_writer_create(path, NULL, &w, d)) < 0)
		return rc;
	rc = kpt_meta_merge_create(&mm, d);
	for (long i = 0; i < m && rc == 0; i++) {
		struct kpt_file *f = NULL;

		snprintf(part, sizeof part, "%s/%c-%ld.kpt", dir, side, i);
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
		snprintf(buf, sizeof buf, "%ld", m);
		kpt_writer_meta(w, "tool_version", "kptprof " KPT_VERSION, d);
		kpt_writer_meta(w, "command", command, d);
		kpt_writer_meta(w, "runs", buf, d);
		kpt_writer_meta(w, "ab_side", side == 'a' ? "A" : "B", d);
		rc = kpt_writer_commit(w, d);
	}
	kpt_writer_destroy(w);
	for (long i = 0; rc == 0 && i < m; i++) {
		snprintf(part, sizeof part, "%s/%c-%ld.kpt", dir, side, i);
		unlink(part);
	}
	return rc;
}

/* The names to run: o->names when given (each on both sides), else those
 * both have. Into names (cap entries); the count, or a negative kpt_err. */
static int pick_names(const struct kpt_ab_opts *o, const char **names, size_t cap, struct kpt_ab_notes *notes,
		      struct kpt_diag *d)
{
	size_t n;

	if (!o->nnames) {
		n = kpt_ab_common(o->a, o->b, names, cap, notes);
		if (!n)
			return kpt_diag_set(d, KPT_E_NOTFOUND, "the two revisions have no workload in common: nothing to "
					    "compare");
		return (int)n;
	}
	for (n = 0; n < o->nnames && n < cap; n++) {
		for (int s = 0; s < 2; s++)
			if (!kpt_project_workload(s ? o->b : o->a, o->names[n]))
				return kpt_diag_set(d, KPT_E_NOTFOUND, "no workload '%s' in %s", o->names[n],
						    s ? "B (this revision)" : "A (the base revision)");
		names[n] = o->names[n];
	}
	return (int)n;
}

/* The idle gap both sides get: the bundled suite's runners must both
 * know --settle-us (a base build from before the option refuses it). */
static long pick_settle(const struct kpt_ab_opts *o, struct kpt_ab_notes *notes)
{
	if (o->settle_us <= 0 || !o->a->builtin || !o->b->builtin || !o->a->nwl || !o->b->nwl)
		return o->settle_us;
	if (kpt_ab_runner_knows(o->a->wl[0].argv[0], "--settle-us") &&
	    kpt_ab_runner_knows(o->b->wl[0].argv[0], "--settle-us"))
		return o->settle_us;
	notes_add(notes, KPT_NOTE_WARNING, "the base build's kpt-workloads has no --settle-us: both builds run without "
		  "an idle gap (compute-bound kernels are noisier)");
	return -1;
}

int kpt_ab_run(const struct kpt_ab_opts *o, struct kpt_ab_result *r, struct kpt_diag *d)
{
	const struct kpt_project *side[2] = { o->a, o->b };
	kpt_ab_record_fn record = o->record ? o->record : kpt_record_project;
	const char *names[KPT_PROJECT_MAX_WORKLOADS];
	char part[PATH_MAX + 32];
	long settle;
	int n, fd;

	memset(r, 0, sizeof *r);
	if (o->pairs < 1)
		return kpt_diag_set(d, KPT_E_INVAL, "pairs must be 1 or more, not %ld", o->pairs);
	if ((n = pick_names(o, names, KPT_PROJECT_MAX_WORKLOADS, &r->notes, d)) < 0)
		return n;
	r->nnames = (size_t)n;
	settle = pick_settle(o, &r->notes);
	snprintf(r->log, sizeof r->log, "%s/ab.log", o->dir);
	if ((fd = open(r->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644)) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", r->log, strerror(errno));
	close(fd);
	for (long i = 0; i < o->pairs; i++) {
		struct kpt_ab_pair pair = { .i = i, .pairs = o->pairs, .b_first = (int)(i % 2) };

		for (int k = 0; k < 2; k++) {
			int s = i % 2 == 0 ? k : 1 - k; /* ABBA... */
			struct kpt_record_opts ro = *o->base;
			struct kpt_record_result rr;
			double t0 = now_s();
			int rc;

			snprintf(part, sizeof part, "%s/%c-%ld.kpt", o->dir, s ? 'b' : 'a', i);
			ro.out = part;
			ro.runs = 1;
			ro.settle_us = settle;
			ro.child_log = r->log;
			/* the bundled suite's runner is the side's own build's */
			if (side[s]->builtin && side[s]->nwl && side[s]->wl[0].argv)
				ro.runner = side[s]->wl[0].argv[0];
			rc = record(side[s], names, (size_t)n, &ro, &rr, d);
			pair.wall_s[s] = now_s() - t0;
			r->wall_s[s] += pair.wall_s[s];
			if (rc < 0) {
				if (rc != KPT_E_NODEV) {
					char msg[sizeof d->msg];

					snprintf(msg, sizeof msg, "%s", d->msg);
					kpt_diag_set(d, rc, "run %ld of %c: %s (output in '%s')", i, s ? 'B' : 'A', msg,
						     r->log);
				}
				return rc;
			}
			for (int j = 0; j < rr.nnotes; j++)
				notes_add(&r->notes, rr.note[j].kind, "%s", rr.note[j].text);
			if (rr.status != 0)
				return kpt_diag_set(d, KPT_E_UNSUPPORTED, "run %ld of %c failed (exit status %d); its output "
						    "is in '%s'", i, s ? 'B' : 'A', rr.status, r->log);
			if (s == 1) {
				snprintf(r->slug, sizeof r->slug, "%s", rr.slug);
				snprintf(r->gpu, sizeof r->gpu, "%s", rr.gpu);
			}
		}
		if (o->progress)
			o->progress(o->ctx, &pair);
	}
	for (int s = 0; s < 2; s++) {
		const char *cmd = o->label[s] ? o->label[s] : side[s]->path ? side[s]->path : "kptprof ab";
		int rc = merge_side(o->dir, s ? 'b' : 'a', o->pairs, cmd, d);

		if (rc < 0)
			return rc;
	}
	return 0;
}

int kpt_ab_command_project(char **argv, const char *name, struct kpt_ab_command *c, struct kpt_diag *d)
{
	memset(c, 0, sizeof *c);
	if (!getcwd(c->cwd, sizeof c->cwd))
		return kpt_diag_set(d, KPT_E_IO, "cannot read the current folder: %s", strerror(errno));
	c->wl.name = name;
	c->wl.argv = argv;
	c->wl.cwd = c->cwd;
	c->p.root = c->cwd;
	c->p.name = "";
	c->p.runs = 1;
	c->p.wl = &c->wl;
	c->p.nwl = 1;
	return 0;
}
