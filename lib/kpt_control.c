/* kpt_control.c - the control folder of a recording (kpt_control.h). */
#define _GNU_SOURCE
#include "kpt_control.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define REQUEST "request"
#define ACK_PREFIX "ack."

uint64_t kpt_control_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* fd of a folder that is ours and closed to others, opened without
 * following a link; a negative kpt_err otherwise. */
static int open_private_at(int at, const char *path, struct kpt_diag *d)
{
	struct stat st;
	int fd = openat(at, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0) {
		int e = errno;

		if ((e == ENOTDIR || e == ELOOP) && fstatat(at, path, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			return kpt_diag_set(d, KPT_E_PERM, "control folder '%s' is a symbolic link: refused", path);
		return kpt_diag_set(d, e == ENOENT ? KPT_E_NOTFOUND : KPT_E_PERM, "cannot open control folder '%s': %s",
				    path, e == ENOTDIR || e == ELOOP ? "not a folder" : strerror(e));
	}
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return kpt_diag_set(d, KPT_E_PERM, "control folder '%s' is not private: another owner or open to others",
				    path);
	}
	return fd;
}

int kpt_control_base(char *out, size_t cap, struct kpt_diag *d)
{
	const char *x = getenv("XDG_RUNTIME_DIR");
	int n;

	if (x && x[0] == '/')
		n = snprintf(out, cap, "%s/kptprof", x);
	else
		n = snprintf(out, cap, "/tmp/kptprof-%lu", (unsigned long)geteuid());
	if (n < 0 || (size_t)n >= cap)
		return kpt_diag_set(d, KPT_E_INVAL, "control folder path too long: '%s'", x ? x : "/tmp");
	return 0;
}

/* Reads a small regular file name in folder fd into buf (cap, NUL ended). */
static int read_small(int dfd, const char *name, char *buf, size_t cap)
{
	struct stat st;
	ssize_t n;
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? KPT_E_NOTFOUND : KPT_E_IO;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= (off_t)cap) {
		close(fd);
		return KPT_E_FORMAT;
	}
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0)
		return KPT_E_IO;
	buf[n] = '\0';
	return (int)n;
}

/* Writes text to name in folder fd whole: a temporary file renamed. */
static int write_whole(int dfd, const char *name, const char *text, struct kpt_diag *d)
{
	char tmp[128];
	size_t len = strlen(text);
	int fd, ok;

	snprintf(tmp, sizeof tmp, ".%s.tmp.%ld", name, (long)getpid());
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot write control file '%s': %s", name, strerror(errno));
	ok = write(fd, text, len) == (ssize_t)len;
	ok = close(fd) == 0 && ok;
	if (!ok || renameat(dfd, tmp, dfd, name) < 0) {
		int e = errno;

		unlinkat(dfd, tmp, 0);
		return kpt_diag_set(d, KPT_E_IO, "cannot write control file '%s': %s", name, strerror(e));
	}
	return 0;
}

/* "magic 1\nk1 v1\nk2 v2\n..." into vals (keys in order); 0 or KPT_E_FORMAT. */
static int parse_record(const char *text, const char *magic, const char *const *keys, uint64_t *vals, int n)
{
	const char *p = text;
	size_t ml = strlen(magic);

	if (strncmp(p, magic, ml) != 0 || strncmp(p + ml, " 1\n", 3) != 0)
		return KPT_E_FORMAT;
	p += ml + 3;
	for (int i = 0; i < n; i++) {
		size_t kl = strlen(keys[i]);
		char *e;

		if (strncmp(p, keys[i], kl) != 0 || p[kl] != ' ' || p[kl + 1] < '0' || p[kl + 1] > '9')
			return KPT_E_FORMAT;
		errno = 0;
		vals[i] = strtoull(p + kl + 1, &e, 10);
		if (errno || *e != '\n')
			return KPT_E_FORMAT;
		p = e + 1;
	}
	return *p ? KPT_E_FORMAT : 0;
}

static const char *const request_keys[] = { "seq", "steps", "time" };
static const char *const ack_keys[] = { "seq", "first_step", "time" };

static int read_request(int dfd, uint64_t v[3])
{
	char buf[KPT_CONTROL_FILE_MAX];
	int rc = read_small(dfd, REQUEST, buf, sizeof buf);

	if (rc < 0)
		return rc;
	return parse_record(buf, "kptprof-request", request_keys, v, 3) < 0 ? KPT_E_FORMAT : 1;
}

/* Whether n is a file name of this protocol. */
static int is_ours(const char *n)
{
	size_t a = strlen(ACK_PREFIX);

	return strcmp(n, REQUEST) == 0 || (strncmp(n, ACK_PREFIX, a) == 0 && n[a] && !n[a + strspn(n + a, "0123456789")]) ||
	       (n[0] == '.' && strstr(n, ".tmp.") != NULL);
}

/* Removes this protocol's files in folder fd; with only_if_all, nothing
 * unless every entry is one of them. Returns 1 when every entry was ours. */
static int remove_files(int dfd, int only_if_all)
{
	int fd2 = dup(dfd), all = 1;
	DIR *dir = fd2 >= 0 ? fdopendir(fd2) : NULL;
	struct dirent *e;

	if (!dir) {
		if (fd2 >= 0)
			close(fd2);
		return 0;
	}
	while ((e = readdir(dir)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && !is_ours(e->d_name))
			all = 0;
	rewinddir(dir);
	while ((all || !only_if_all) && (e = readdir(dir)) != NULL)
		if (is_ours(e->d_name))
			unlinkat(dfd, e->d_name, 0);
	closedir(dir);
	return all;
}

int kpt_control_dir_make(char *out, size_t cap, long record_pid, struct kpt_diag *d)
{
	char base[512], name[32];
	int bfd, fd, n;

	if (kpt_control_base(base, sizeof base, d) < 0)
		return KPT_E_INVAL;
	if (mkdir(base, 0700) < 0 && errno != EEXIST)
		return kpt_diag_set(d, KPT_E_IO, "cannot make control folder '%s': %s", base, strerror(errno));
	if ((bfd = open_private_at(AT_FDCWD, base, d)) < 0)
		return bfd == KPT_E_NOTFOUND ? KPT_E_IO : bfd;
	snprintf(name, sizeof name, "%ld", record_pid);
	if (mkdirat(bfd, name, 0700) < 0 && errno != EEXIST) {
		int e = errno;

		close(bfd);
		return kpt_diag_set(d, KPT_E_IO, "cannot make control folder '%s/%s': %s", base, name, strerror(e));
	}
	fd = open_private_at(bfd, name, d);
	close(bfd);
	if (fd < 0)
		return fd == KPT_E_NOTFOUND ? KPT_E_IO : fd;
	remove_files(fd, 0);
	close(fd);
	n = snprintf(out, cap, "%s/%s", base, name);
	if (n < 0 || (size_t)n >= cap)
		return kpt_diag_set(d, KPT_E_INVAL, "control folder path too long: '%s'", base);
	return 0;
}

int kpt_control_request(const char *dir, uint64_t nsteps, uint64_t *seq, struct kpt_diag *d)
{
	uint64_t v[3] = { 0, 0, 0 };
	char text[KPT_CONTROL_FILE_MAX];
	int fd = open_private_at(AT_FDCWD, dir, d), rc;

	if (fd < 0)
		return fd;
	if (read_request(fd, v) < 0)
		v[0] = 0;               /* none or bad: start again */
	v[0]++;
	snprintf(text, sizeof text, "kptprof-request 1\nseq %" PRIu64 "\nsteps %" PRIu64 "\ntime %" PRIu64 "\n", v[0],
		 nsteps, kpt_control_now_ns());
	rc = write_whole(fd, REQUEST, text, d);
	close(fd);
	if (rc == 0 && seq)
		*seq = v[0];
	return rc;
}

int kpt_control_poll(const char *dir, uint64_t *last_seq, uint64_t *nsteps, uint64_t *time_ns)
{
	uint64_t v[3];
	int fd = open_private_at(AT_FDCWD, dir, NULL), rc;

	if (fd < 0)
		return fd;
	rc = read_request(fd, v);
	close(fd);
	if (rc == KPT_E_NOTFOUND)
		return 0;
	if (rc < 0)
		return rc;
	if (v[0] <= *last_seq)
		return 0;
	*last_seq = v[0];
	*nsteps = v[1];
	if (time_ns)
		*time_ns = v[2];
	return 1;
}

int kpt_control_ack(const char *dir, long pid, uint64_t seq, uint64_t first_step, uint64_t time_ns,
		    struct kpt_diag *d)
{
	char name[40], text[KPT_CONTROL_FILE_MAX];
	int fd = open_private_at(AT_FDCWD, dir, d), rc;

	if (fd < 0)
		return fd;
	snprintf(name, sizeof name, ACK_PREFIX "%ld", pid);
	snprintf(text, sizeof text, "kptprof-ack 1\nseq %" PRIu64 "\nfirst_step %" PRIu64 "\ntime %" PRIu64 "\n", seq,
		 first_step, time_ns);
	rc = write_whole(fd, name, text, d);
	close(fd);
	return rc;
}

/* The folder as a stream, private as open_private_at checks; NULL with *rc. */
static DIR *open_private_dir(const char *path, int *rc, struct kpt_diag *d)
{
	int fd = open_private_at(AT_FDCWD, path, d);
	DIR *dp;

	if ((*rc = fd) < 0)
		return NULL;
	if (!(dp = fdopendir(fd))) {
		close(fd);
		*rc = kpt_diag_set(d, KPT_E_IO, "cannot read control folder '%s': %s", path, strerror(errno));
	}
	return dp;
}

static int ack_cmp(const void *a, const void *b)
{
	long x = ((const struct kpt_control_ack *)a)->pid, y = ((const struct kpt_control_ack *)b)->pid;

	return (x > y) - (x < y);
}

int kpt_control_acks(const char *dir, uint64_t seq, struct kpt_control_ack *out, size_t cap, struct kpt_diag *d)
{
	int count = 0, rc;
	DIR *dp = open_private_dir(dir, &rc, d);
	struct dirent *e;

	if (!dp)
		return rc;
	while ((e = readdir(dp)) != NULL) {
		char buf[KPT_CONTROL_FILE_MAX], *end;
		uint64_t v[3];
		long pid;

		if (strncmp(e->d_name, ACK_PREFIX, strlen(ACK_PREFIX)) != 0)
			continue;
		errno = 0;
		pid = strtol(e->d_name + strlen(ACK_PREFIX), &end, 10);
		if (errno || *end || pid <= 0 || read_small(dirfd(dp), e->d_name, buf, sizeof buf) < 0 ||
		    parse_record(buf, "kptprof-ack", ack_keys, v, 3) < 0 || v[0] != seq)
			continue;
		if ((size_t)count < cap)
			out[count] = (struct kpt_control_ack){ .pid = pid, .seq = v[0], .first_step = v[1], .time_ns = v[2] };
		count++;
	}
	closedir(dp);
	if (out && cap && count > 1) /* qsort's base must not be NULL, even for 0 elements */
		qsort(out, (size_t)count < cap ? (size_t)count : cap, sizeof *out, ack_cmp);
	return count;
}

int kpt_control_remove(const char *dir)
{
	int fd = open_private_at(AT_FDCWD, dir, NULL);

	if (fd < 0)
		return fd == KPT_E_NOTFOUND ? 0 : KPT_E_IO;
	remove_files(fd, 0);
	close(fd);
	return rmdir(dir) < 0 && errno != ENOENT && errno != ENOTEMPTY ? KPT_E_IO : 0;
}

int kpt_control_dir_of(long pid, char *out, size_t cap, struct kpt_diag *d)
{
	static const char key[] = KPT_ENV_CONTROL_DIR "=";
	char path[64], *buf;
	struct stat st;
	size_t n = 0, bufcap = 1 << 20;
	ssize_t k;
	int fd, rc = KPT_E_NOTFOUND;

	snprintf(path, sizeof path, "/proc/%ld", pid);
	if (pid <= 0 || stat(path, &st) < 0)
		return kpt_diag_set(d, KPT_E_NOTFOUND, "no process '%ld'", pid);
	if (st.st_uid != geteuid())
		return kpt_diag_set(d, KPT_E_PERM, "process '%ld' is another user's", pid);
	snprintf(path, sizeof path, "/proc/%ld/environ", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return kpt_diag_set(d, errno == ENOENT ? KPT_E_NOTFOUND : KPT_E_PERM,
				    "cannot read the environment of process '%ld': %s", pid, strerror(errno));
	if (!(buf = malloc(bufcap))) {
		close(fd);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	while (n < bufcap - 1 && (k = read(fd, buf + n, bufcap - 1 - n)) > 0)
		n += (size_t)k;
	close(fd);
	buf[n] = '\0';
	for (size_t i = 0; i < n; i += strlen(buf + i) + 1) {
		if (strncmp(buf + i, key, sizeof key - 1) == 0) {
			const char *v = buf + i + sizeof key - 1;

			rc = snprintf(out, cap, "%s", v) >= (int)cap || !v[0] ? KPT_E_INVAL : 0;
			break;
		}
	}
	free(buf);
	if (rc == KPT_E_NOTFOUND)
		return kpt_diag_set(d, rc, "process '%ld' is not under kptprof record --on-demand", pid);
	if (rc < 0)
		return kpt_diag_set(d, rc, "bad %s in process '%ld'", KPT_ENV_CONTROL_DIR, pid);
	return 0;
}

static int long_cmp(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

/* Removes folder name in the base folder bfd, left by a recording that is
 * gone (killed before it could): only a folder of ours, not a link, holding
 * nothing but this protocol's files. */
static void sweep(int bfd, const char *name)
{
	struct stat st;
	int fd = openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && remove_files(fd, 1))
		unlinkat(bfd, name, AT_REMOVEDIR);
	close(fd);
}

int kpt_control_list(long *pids, size_t cap, struct kpt_diag *d)
{
	char base[512], proc[64];
	int count = 0, rc;
	DIR *dp;
	struct dirent *e;

	if (kpt_control_base(base, sizeof base, d) < 0)
		return KPT_E_INVAL;
	if (!(dp = open_private_dir(base, &rc, d)))
		return rc == KPT_E_NOTFOUND ? 0 : rc;
	while ((e = readdir(dp)) != NULL) {
		char *end;
		long pid;
		struct stat st;

		errno = 0;
		pid = strtol(e->d_name, &end, 10);
		if (errno || *end || pid <= 0 || e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(proc, sizeof proc, "/proc/%ld", pid);
		if (stat(proc, &st) < 0) {
			if (errno == ENOENT)
				sweep(dirfd(dp), e->d_name);
			continue;
		}
		if (st.st_uid != geteuid())
			continue;
		if ((size_t)count < cap)
			pids[count] = pid;
		count++;
	}
	closedir(dp);
	qsort(pids, (size_t)count < cap ? (size_t)count : cap, sizeof *pids, long_cmp);
	return count;
}
