/* kpt_baseline_update.c - adding a session to a folder baseline
 * (kpt_baseline_add), on directory descriptors from the baselines folder
 * down: every level opened with O_NOFOLLOW | O_DIRECTORY, every create,
 * rename and delete relative to its folder's descriptor (openat, mkdirat,
 * renameat2, unlinkat). A level swapped for a symbolic link before the
 * update is refused; one swapped during it changes nothing: the
 * descriptors still name the folders that were opened. Files are read
 * back through /proc/self/fd/<folder>/<name> for the same reason. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_baseline_private.h"
#include "kpt_folder.h"
#include "kpt_diff.h"
#include "kpt_format.h"

/* Temporary files of an update: <session name>.tmp<PID>. One that a killed
 * update left behind (its process is gone) is removed by the next update. */
#define TMP_SUFFIX ".tmp"
#define NAME_MAX_LEN 256

/* A session as the folder names and matches it: GPU UUID and boot id
 * (meta "boot_id", written by record), and its file name
 * <time>-<first 8 of [0-9a-z] of the UUID>.kpt. */
struct session {
	char uuid[128], boot[64], name[NAME_MAX_LEN];
	int has_suite;              /* meta "suite" present */
	long settle_us;             /* meta "settle_us", 0 none */
	uint32_t runs;
	uint64_t kernels;
	char slug[KPT_BASELINE_NAME_MAX + 1];
	char suite[KPT_BASELINE_NAME_MAX + 1];
};

struct upd {
	const struct kpt_baseline_add_opts *o;
	const char *shown;          /* the suite folder as the user named it */
	int root, gfd, sfd;         /* the baselines folder, <slug>/, <slug>/<suite>/ */
};

static void note(const struct upd *u, enum kpt_baseline_note_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(const struct upd *u, enum kpt_baseline_note_kind kind, const char *fmt, ...)
{
	char buf[8192];
	va_list ap;

	if (!u->o->note)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	u->o->note(u->o->ctx, kind, buf);
}

/* Reads path's identity. want_suite: the suite to take (NULL: the meta's;
 * then it is required when need_suite). */
static int identify(const char *path, const char *shown, struct session *s, const char *want_suite, int need_suite,
		    struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	struct kpt_counts c;
	const struct kpt_device *dev;
	size_t n, k = 0, j = 0;
	const char *t, *b, *u, *ms;
	char tm[32], uu[9];
	int rc;

	memset(s, 0, sizeof *s);
	if ((rc = kpt_file_open(path, &f, d)) < 0 || (rc = kpt_file_counts(f, &c, d)) < 0 ||
	    (rc = kpt_file_devices(f, &dev, &n, d)) < 0)
		goto out;
	if (!n || !c.kernels) {
		rc = kpt_diag_set(d, KPT_E_INVAL, "'%s' has no %s: not a usable baseline", shown, n ? "kernels" : "GPU");
		goto out;
	}
	s->runs = c.runs;
	s->kernels = c.kernels;
	t = kpt_file_meta_get(f, "time");
	b = kpt_file_meta_get(f, "boot_id");
	u = dev[0].uuid && dev[0].uuid[0] ? dev[0].uuid : "GPU-unknown";
	snprintf(s->uuid, sizeof s->uuid, "%s", u);
	snprintf(s->boot, sizeof s->boot, "%s", b ? b : "");
	for (const char *p = t ? t : ""; *p && k + 1 < sizeof tm; p++)
		if ((*p >= '0' && *p <= '9') || *p == 'T' || *p == 'Z')
			tm[k++] = *p;
	tm[k] = '\0';
	/* the UUID part is made of [0-9a-z] only: it is a file name */
	for (const char *p = strncmp(u, "GPU-", 4) == 0 ? u + 4 : u; *p && j < 8; p++)
		if ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z'))
			uu[j++] = *p;
		else if (*p >= 'A' && *p <= 'Z')
			uu[j++] = (char)(*p - 'A' + 'a');
	uu[j] = '\0';
	snprintf(s->name, sizeof s->name, "%s-%s.kpt", k ? tm : "undated", j ? uu : "unknown");
	snprintf(s->slug, sizeof s->slug, "%s", dev[0].slug);
	if ((rc = kpt_baseline_check_name("GPU slug", dev[0].slug, shown, d)) < 0)
		goto out;
	s->has_suite = kpt_file_meta_get(f, "suite") != NULL;
	s->settle_us = kpt_file_settle_us(f);
	ms = want_suite ? want_suite : kpt_file_meta_get(f, "suite");
	if (need_suite) {
		if (!ms || !ms[0]) {
			rc = kpt_diag_set(d, KPT_E_INVAL, "'%s' names no usable suite", shown);
			kpt_diag_hint(d, "pass --suite NAME");
			goto out;
		}
		if ((rc = kpt_baseline_check_name("suite", ms, want_suite ? "--suite" : shown, d)) < 0)
			goto out;
		snprintf(s->suite, sizeof s->suite, "%s", ms);
	}
out:
	kpt_file_close(f);
	return rc;
}

/* Reads the whole recording as diff would (every section decodes, the
 * kernels stream, the ranges resolve without a cycle) before it may
 * change anything. */
static int verify(const char *path, struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	struct kpt_diff_side *side = NULL;
	struct kpt_kernel_cursor *cur = NULL;
	const struct kpt_kernel *rows;
	const void *tab;
	size_t n;
	int rc;

	if ((rc = kpt_file_open(path, &f, d)) == 0 && (rc = kpt_file_load_strings(f, d)) == 0 &&
	    (rc = kpt_file_meta(f, (const struct kpt_meta_kv **)&tab, &n, d)) == 0 &&
	    (rc = kpt_file_devices(f, (const struct kpt_device **)&tab, &n, d)) == 0 &&
	    (rc = kpt_file_processes(f, (const struct kpt_process **)&tab, &n, d)) == 0 &&
	    (rc = kpt_file_drops(f, (const struct kpt_drop **)&tab, &n, d)) == 0 &&
	    (rc = kpt_file_memops(f, (const struct kpt_memop **)&tab, &n, d)) == 0 &&
	    (rc = kpt_file_ranges(f, (const struct kpt_range **)&tab, &n, d)) == 0 &&
	    (rc = kpt_file_events(f, (const struct kpt_event **)&tab, &n, d)) == 0 &&
	    (rc = kpt_file_env(f, (const struct kpt_env_sample **)&tab, &n, d)) == 0 &&
	    (rc = kpt_file_counters(f, (const struct kpt_counter **)&tab, &n, d)) == 0 &&
	    (rc = kpt_kernel_cursor_create(f, &cur, d)) == 0) {
		while ((rc = kpt_kernel_cursor_next(cur, &rows, &n, d)) > 0)
			;
		if (rc == 0)
			rc = kpt_diff_side_load(f, NULL, &side, d);
		/* a session with no key would make every later gate compare nothing */
		if (rc == 0 && kpt_diff_side_keys(side) == 0) {
			kpt_diag_set(d, KPT_E_INVAL, "'%s' holds no kernel key to compare (0 keys): the baseline is unchanged",
				     path);
			rc = kpt_diag_hint(d, "a recording with steps (kpt:iter) keys only the kernels inside them");
		}
	}
	kpt_diff_side_destroy(side);
	kpt_kernel_cursor_destroy(cur);
	kpt_file_close(f);
	return rc;
}

/* True when name is a session file as this update names them:
 * <time>-<uuid part>[-<n>].kpt, time of [0-9TZ] or "undated", the UUID
 * part 1 to 8 of [0-9a-z], n a suffix of 1 to 6 digits. Only such files
 * are replaced or pruned: whatever else a user keeps in the folder stays. */
static int session_name(const char *name)
{
	const char *p = name, *dash;
	size_t n;

	if (strncmp(p, "undated-", 8) == 0) {
		dash = p + 7;
	} else {
		for (; *p && (*p == 'T' || *p == 'Z' || (*p >= '0' && *p <= '9')); p++)
			;
		if (p == name || *p != '-')
			return 0;
		dash = p;
	}
	for (p = dash + 1, n = 0; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z'); p++)
		n++;
	if (n < 1 || n > 8)
		return 0;
	if (*p == '-') {
		for (p++, n = 0; *p >= '0' && *p <= '9'; p++)
			n++;
		if (n < 1 || n > 6)
			return 0;
	}
	return strcmp(p, ".kpt") == 0;
}

/* Opens (making it when missing) the folder name inside dirfd, never
 * through a link. shown: its path for messages. */
static int level(int dirfd, const char *name, const char *shown, int *out, struct kpt_diag *d)
{
	if (mkdirat(dirfd, name, 0755) != 0 && errno != EEXIST)
		return kpt_diag_set(d, KPT_E_IO, "cannot make '%s': %s", shown, strerror(errno));
	if ((*out = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0)
		return 0;
	if (errno == ELOOP || errno == ENOTDIR)
		return kpt_diag_set(d, KPT_E_IO, "'%s' is not a plain folder (a symbolic link?): not writing there",
				    shown);
	return kpt_diag_set(d, KPT_E_IO, "cannot open '%s': %s", shown, strerror(errno));
}

/* Removes <session>.kpt.tmp<PID> files of the suite folder whose process
 * is gone (a killed update); those of live processes are theirs. */
static void clean_stale(const struct upd *u)
{
	int fd = dup(u->sfd);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(dir))) {
		const char *t = strstr(e->d_name, ".kpt" TMP_SUFFIX);
		const char *num;
		char *end;
		long pid;

		if (!t || t == e->d_name)
			continue;
		num = t + 4 + strlen(TMP_SUFFIX);
		errno = 0;
		pid = strtol(num, &end, 10);
		if (errno || *end || pid <= 0 || end == num)
			continue;
		if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		if (unlinkat(u->sfd, e->d_name, 0) == 0)
			note(u, KPT_BASELINE_NOTE_INFO, "removed '%s/%s', left by an update that did not finish", u->shown,
			     e->d_name);
	}
	closedir(dir);
}

/* 1 when the file name in the suite folder has the bytes of the open file
 * src (same size first), else 0. */
static int same_bytes(int sfd, const char *name, int src)
{
	char a[1 << 15], b[1 << 15];
	struct stat sa, sb;
	int fd = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), same = 0;
	ssize_t na, nb;

	if (fd < 0)
		return 0;
	if (fstat(fd, &sa) == 0 && fstat(src, &sb) == 0 && S_ISREG(sa.st_mode) && sa.st_size == sb.st_size &&
	    lseek(src, 0, SEEK_SET) == 0) {
		same = 1;
		while (same) {
			na = read(fd, a, sizeof a);
			nb = na > 0 ? read(src, b, (size_t)na) : 0;
			if (na < 0 || nb != na || memcmp(a, b, (size_t)na) != 0)
				same = 0;
			if (na <= 0)
				break;
		}
	}
	close(fd);
	return same;
}

/* Copies the open file src to the new file tmp of the suite folder (made
 * new: never a planted file or link), synced. */
static int copy_to(const struct upd *u, int src, const char *tmp, struct kpt_diag *d)
{
	char buf[1 << 16];
	int out, ok = 1;
	ssize_t n;

	if (lseek(src, 0, SEEK_SET) != 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot read the recording: %s", strerror(errno));
	unlinkat(u->sfd, tmp, 0); /* ours: a stale one of an earlier process with our pid */
	out = openat(u->sfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (out < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot write '%s/%s': %s", u->shown, tmp, strerror(errno));
	while (ok && (n = read(src, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		ok = n > 0 && write(out, buf, (size_t)n) == n;
	}
	ok = ok && fsync(out) == 0;
	ok = close(out) == 0 && ok;
	if (!ok) {
		kpt_diag_set(d, KPT_E_IO, "cannot write '%s/%s': %s", u->shown, tmp, strerror(errno ? errno : EIO));
		unlinkat(u->sfd, tmp, 0);
		return KPT_E_IO;
	}
	return 0;
}

/* Writes the recording at src to tmp with meta "suite" set (for one made
 * with `record -- CMD` or `ab`, which cannot know it), through the writer
 * on the folder's descriptor. */
static int copy_with_suite(const struct upd *u, const char *src, const char *tmp, const char *suite,
			   struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	struct kpt_writer *w = NULL;
	char dst[512];
	int rc;

	if (kpt_baseline_fd_path(u->sfd, tmp, dst, sizeof dst) < 0)
		return kpt_diag_set(d, KPT_E_INVAL, "file name too long: '%s'", tmp);
	if ((rc = kpt_file_open(src, &f, d)) == 0 && (rc = kpt_writer_create(dst, NULL, &w, d)) == 0 &&
	    (rc = kpt_file_copy_into(f, w, KPT_NONE, 1, d)) == 0 && (rc = kpt_writer_meta(w, "suite", suite, d)) == 0)
		rc = kpt_writer_commit(w, d);
	kpt_writer_destroy(w);
	kpt_file_close(f);
	if (rc < 0)
		unlinkat(u->sfd, tmp, 0);
	return rc;
}

/* The session file `name` of the suite folder, identified through the
 * folder's descriptor; 1 when it is gone (a concurrent update pruned it). */
static int identify_at(const struct upd *u, const char *name, struct session *s)
{
	char p[512];
	struct kpt_diag d = { 0 };
	struct stat st;

	if (fstatat(u->sfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
	    kpt_baseline_fd_path(u->sfd, name, p, sizeof p) < 0)
		return 1;
	return identify(p, name, s, NULL, 0, &d) < 0 ? 1 : 0;
}

static int same_session(const struct session *a, const struct session *b)
{
	return a->boot[0] && strcmp(a->uuid, b->uuid) == 0 && strcmp(a->boot, b->boot) == 0;
}

/* Moves tmp (in the suite folder) to the session's name: a free name, the
 * file of the same session under that name (replaced), else the name with
 * a suffix -2, -3, ...: never over another session. The name taken goes
 * to out. */
static int place(const struct upd *u, int from, const char *tmp, const struct session *id, char *out, size_t cap,
		 struct kpt_diag *d)
{
	size_t stem = strlen(id->name) - 4; /* less ".kpt" */

	for (unsigned k = 1; k < 100000; k++) {
		struct session old;

		if (k == 1)
			snprintf(out, cap, "%s", id->name);
		else
			snprintf(out, cap, "%.*s-%u.kpt", (int)stem, id->name, k);
		if (renameat2(from, tmp, u->sfd, out, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno == EINVAL || errno == ENOSYS) {
			/* a file system without it: a hard link fails on a taken name too */
			if (linkat(from, tmp, u->sfd, out, 0) == 0) {
				unlinkat(from, tmp, 0);
				return 0;
			}
		}
		if (errno != EEXIST)
			return kpt_diag_set(d, KPT_E_IO, "cannot write '%s/%s': %s", u->shown, out, strerror(errno));
		if (from == u->sfd && identify_at(u, out, &old) == 0 && same_session(&old, id)) {
			if (renameat(from, tmp, u->sfd, out) != 0)
				return kpt_diag_set(d, KPT_E_IO, "cannot write '%s/%s': %s", u->shown, out, strerror(errno));
			note(u, KPT_BASELINE_NOTE_INFO, "'%s/%s' is the same session (GPU %s, boot %s): replaced", u->shown,
			     out, id->uuid, id->boot);
			return 0;
		}
	}
	return kpt_diag_set(d, KPT_E_IO, "no free session name in '%s'", u->shown);
}

/* An older single-file baseline <slug>/<suite>.kpt moves into the folder
 * as one session (a plain file only; never over another session). */
static int move_single(const struct upd *u, const char *suite, const char *dir, const char *slug, struct kpt_diag *d)
{
	char single[KPT_BASELINE_NAME_MAX + 8], p[512], name[NAME_MAX_LEN];
	struct session old;
	struct stat st;
	int rc;

	snprintf(single, sizeof single, "%s.kpt", suite);
	if (fstatat(u->gfd, single, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
		return 0;
	if (kpt_baseline_fd_path(u->gfd, single, p, sizeof p) < 0)
		return kpt_diag_set(d, KPT_E_INVAL, "file name too long: '%s'", single);
	if ((rc = identify(p, single, &old, NULL, 0, d)) < 0)
		return rc;
	if ((rc = place(u, u->gfd, single, &old, name, sizeof name, d)) < 0)
		return rc;
	note(u, KPT_BASELINE_NOTE_INFO, "moved the single-file baseline '%s/%s/%s' into '%s' as one session", dir, slug,
	     single, u->shown);
	return 0;
}

/* After the new session is in: the other files of the same session go,
 * the mixed-gap warning, the newest keep sessions stay. */
static int tidy(const struct upd *u, const struct session *id, const char *mine, unsigned long keep, size_t *held,
		struct kpt_diag *d)
{
	char **names = NULL;
	size_t n = 0, ns = 0, other_gap = 0, left;
	int rc;

	if ((rc = kpt_folder_recordings(u->sfd, u->shown, &names, &n, d)) < 0)
		return rc;
	for (size_t i = 0; i < n; i++) {
		struct session old;

		if (!session_name(names[i]) || strcmp(names[i], mine) == 0 || identify_at(u, names[i], &old) != 0)
			continue;
		if (same_session(&old, id) && (unlinkat(u->sfd, names[i], 0) == 0 || errno == ENOENT)) {
			note(u, KPT_BASELINE_NOTE_INFO, "'%s/%s' is the same session (GPU %s, boot %s): replaced", u->shown,
			     names[i], id->uuid, id->boot);
			names[i][0] = '\0';
			continue;
		}
		if (old.settle_us != id->settle_us)
			other_gap++;
	}
	if (other_gap)
		/* gate records as the newest session was recorded and refuses a
		 * baseline whose sessions differ (docs/decision-rule.md) */
		note(u, KPT_BASELINE_NOTE_WARNING, "%zu other session%s of '%s' %s recorded with another idle gap before "
		     "each timed iteration than this one (%ld us): gate refuses the mix; remove %s or record %s again",
		     other_gap, other_gap == 1 ? "" : "s", u->shown, other_gap == 1 ? "was" : "were", id->settle_us,
		     other_gap == 1 ? "it" : "them", other_gap == 1 ? "it" : "them");
	for (size_t i = 0; i < n; i++)
		ns += names[i][0] && session_name(names[i]);
	left = ns;
	for (size_t i = 0; i < n; i++) {
		if (!names[i][0] || !session_name(names[i]) || left <= keep)
			continue;
		left--;
		if (unlinkat(u->sfd, names[i], 0) == 0)
			note(u, KPT_BASELINE_NOTE_INFO, "keeping the newest %lu sessions: removed '%s/%s'", keep, u->shown,
			     names[i]);
		else if (errno != ENOENT && rc == 0)
			rc = kpt_diag_set(d, KPT_E_IO, "cannot remove '%s/%s': %s", u->shown, names[i], strerror(errno));
	}
	kpt_baseline_paths_free(names, n);
	*held = ns < keep ? ns : keep;
	return rc;
}

/* The duplicate check: a session file with rec's bytes. Its name into
 * out, or "" when none. */
static void find_duplicate(const struct upd *u, int src, char *out, size_t cap)
{
	char **names = NULL;
	size_t n = 0;
	struct kpt_diag d = { 0 };

	out[0] = '\0';
	if (kpt_folder_recordings(u->sfd, u->shown, &names, &n, &d) < 0)
		return;
	for (size_t i = 0; i < n && !out[0]; i++)
		if (same_bytes(u->sfd, names[i], src))
			snprintf(out, cap, "%s", names[i]);
	kpt_baseline_paths_free(names, n);
}

/* mkdir -p dir (by path: the folder the user named). */
static int make_root(const char *dir, struct kpt_diag *d)
{
	char p[4096];
	size_t len = strlen(dir);

	if (len >= sizeof p)
		return kpt_diag_set(d, KPT_E_INVAL, "baselines folder name too long: '%.64s...'", dir);
	memcpy(p, dir, len + 1);
	for (char *s = p + 1; ; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0755) != 0 && errno != EEXIST)
			return kpt_diag_set(d, KPT_E_IO, "cannot make '%s': %s", p, strerror(errno));
		if (!(*s = c))
			return 0;
	}
}

int kpt_baseline_add(const char *dir, const char *rec, const struct kpt_baseline_add_opts *o,
		     struct kpt_baseline_add_result *r, struct kpt_diag *d)
{
	struct upd u = { .o = o, .root = -1, .gfd = -1, .sfd = -1 };
	struct session id;
	unsigned long keep = o->keep ? o->keep : KPT_BASELINE_KEEP;
	char slugdir[8192], tmp[NAME_MAX_LEN + 32], name[NAME_MAX_LEN];
	int src = -1, rc;

	memset(r, 0, sizeof *r);
	if ((rc = identify(rec, rec, &id, o->suite, 1, d)) < 0)
		return rc;
	if ((rc = verify(rec, d)) < 0) {
		char why[sizeof d->msg];

		snprintf(why, sizeof why, "%s", d->msg);
		return kpt_diag_set(d, rc, "'%s' is not a usable recording (%s): the baseline is unchanged", rec, why);
	}
	if (id.runs < 2) {
		kpt_diag_set(d, KPT_E_INVAL, "'%s' holds %u run: a baseline needs >= 2 runs to measure noise", rec, id.runs);
		return kpt_diag_hint(d, "record it with --runs 5");
	}
	snprintf(r->slug, sizeof r->slug, "%s", id.slug);
	snprintf(r->suite, sizeof r->suite, "%s", id.suite);
	r->runs = id.runs;
	if ((size_t)snprintf(slugdir, sizeof slugdir, "%s/%s", dir, id.slug) >= sizeof slugdir ||
	    (size_t)snprintf(r->folder, sizeof r->folder, "%s/%s", slugdir, id.suite) >= sizeof r->folder)
		return kpt_diag_set(d, KPT_E_INVAL, "baseline path too long under '%s'", dir);
	u.shown = r->folder;
	if ((src = open(rec, O_RDONLY | O_CLOEXEC)) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot read '%s': %s", rec, strerror(errno));
	/* the baselines folder itself is the user's (a link there is theirs),
	 * made with its parents (a project's "perf/baselines") */
	if ((rc = make_root(dir, d)) < 0)
		goto out;
	if ((u.root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot open '%s': %s", dir, strerror(errno));
		goto out;
	}
	if ((rc = level(u.root, id.slug, slugdir, &u.gfd, d)) < 0 ||
	    (rc = level(u.gfd, id.suite, r->folder, &u.sfd, d)) < 0)
		goto out;
	if ((rc = move_single(&u, id.suite, dir, id.slug, d)) < 0)
		goto out;
	clean_stale(&u);
	find_duplicate(&u, src, name, sizeof name);
	if (name[0]) {
		/* refused as a duplicate: nothing written, the keep policy still holds */
		r->duplicate = 1;
		note(&u, KPT_BASELINE_NOTE_INFO, "'%s' is already in the baseline as '%s/%s': not added again", rec,
		     r->folder, name);
	} else {
		/* The new file first (an update that fails changes nothing),
		 * then the older file of the same session goes. */
		snprintf(tmp, sizeof tmp, "%s" TMP_SUFFIX "%ld", id.name, (long)getpid());
		rc = o->suite && !id.has_suite ? copy_with_suite(&u, rec, tmp, id.suite, d) : copy_to(&u, src, tmp, d);
		if (rc < 0)
			goto out;
		if ((rc = place(&u, u.sfd, tmp, &id, name, sizeof name, d)) < 0) {
			unlinkat(u.sfd, tmp, 0);
			goto out;
		}
	}
	snprintf(r->path, sizeof r->path, "%s/%s", r->folder, name);
	rc = tidy(&u, &id, name, keep, &r->sessions, d);
	fsync(u.sfd);
	if (id.runs < 5)
		note(&u, KPT_BASELINE_NOTE_WARNING, "%u runs; 5 or more give tighter intervals", id.runs);
out:
	if (src >= 0)
		close(src);
	if (u.sfd >= 0)
		close(u.sfd);
	if (u.gfd >= 0) {
		fsync(u.gfd);
		close(u.gfd);
	}
	if (u.root >= 0)
		close(u.root);
	return rc;
}
