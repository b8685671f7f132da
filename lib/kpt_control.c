/* kpt_control.c - the on-demand control folder (kpt_control.h). */
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
#include <unistd.h>

#define REQUEST "request"
#define ACK "ack."

/* A folder of the caller's, private, not a symlink (lstat: the path
 * itself). */
static int private_dir(const char *p, struct kpt_diag *d)
{
	struct stat st;

	if (lstat(p, &st) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot read control folder '%s': %s", p, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return kpt_diag_set(d, KPT_E_INVAL, "control folder '%s' is not a folder (a symlink or a file)", p);
	if (st.st_uid != geteuid())
		return kpt_diag_set(d, KPT_E_INVAL, "control folder '%s' belongs to another user", p);
	if (st.st_mode & 077)
		return kpt_diag_set(d, KPT_E_INVAL, "control folder '%s' is open to other users (mode %03o)", p,
				    (unsigned)(st.st_mode & 0777));
	return 0;
}

static int mkdir_private(const char *p, struct kpt_diag *d)
{
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return kpt_diag_set(d, KPT_E_IO, "cannot make control folder '%s': %s", p, strerror(errno));
	return private_dir(p, d);
}

int kpt_control_base(char *out, size_t cap, struct kpt_diag *d)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct kpt_diag ignore;
	int n;

	kpt_diag_clear(&ignore);
	if (xdg && xdg[0] == '/' && private_dir(xdg, &ignore) == 0) {
		n = snprintf(out, cap, "%s/kptprof", xdg);
		if (n > 0 && (size_t)n < cap)
			return mkdir_private(out, d);
	}
	n = snprintf(out, cap, "/tmp/kptprof-%u", (unsigned)geteuid());
	if (n < 0 || (size_t)n >= cap)
		return kpt_diag_set(d, KPT_E_INVAL, "control folder path too long");
	return mkdir_private(out, d);
}

int kpt_control_dir_check(const char *dir, struct kpt_diag *d)
{
	return private_dir(dir, d);
}

/* dir/name into buf; -1 when it does not fit */
static int path_of(char *buf, size_t cap, const char *dir, const char *name)
{
	int n = snprintf(buf, cap, "%s/%s", dir, name);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

void kpt_control_remove(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	char p[4096];

	if (dp) {
		while ((e = readdir(dp)))
			if ((strcmp(e->d_name, REQUEST) == 0 || strncmp(e->d_name, ACK, strlen(ACK)) == 0 ||
			     strncmp(e->d_name, ".tmp.", 5) == 0) &&
			    path_of(p, sizeof p, dir, e->d_name) == 0)
				unlink(p);
		closedir(dp);
	}
	rmdir(dir);
}

int kpt_control_dir_make(char *out, size_t cap, uint32_t pid, struct kpt_diag *d)
{
	char base[4096];
	int rc, n;

	if ((rc = kpt_control_base(base, sizeof base, d)) < 0)
		return rc;
	n = snprintf(out, cap, "%s/%u", base, (unsigned)pid);
	if (n < 0 || (size_t)n >= cap)
		return kpt_diag_set(d, KPT_E_INVAL, "control folder path too long");
	if ((rc = mkdir_private(out, d)) < 0)
		return rc;
	/* a folder left by a dead recording with this pid: its files go */
	kpt_control_remove(out);
	return mkdir_private(out, d);
}

/* Writes line to dir/name through a temporary file and a rename. */
static int write_line(const char *dir, const char *name, const char *line)
{
	char tmp[4096], dst[4096];
	size_t len = strlen(line);
	int fd, ok;

	if (path_of(dst, sizeof dst, dir, name) < 0 ||
	    snprintf(tmp, sizeof tmp, "%s/.tmp.%s.%d", dir, name, (int)getpid()) >= (int)sizeof tmp)
		return -1;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	ok = write(fd, line, len) == (ssize_t)len;
	ok &= close(fd) == 0;
	if (!ok || rename(tmp, dst) < 0) {
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* Reads at most KPT_CONTROL_LINE_MAX - 1 bytes of dir/name into buf (a
 * regular file, not followed through a symlink, never blocking). 0, -2
 * when there is no such file, -1 otherwise. */
static int read_line(const char *dir, const char *name, char *buf)
{
	char p[4096];
	struct stat st;
	ssize_t n;
	int fd;

	if (path_of(p, sizeof p, dir, name) < 0)
		return -1;
	fd = open(p, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -2 : -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= KPT_CONTROL_LINE_MAX) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, KPT_CONTROL_LINE_MAX - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

int kpt_control_poll(const char *dir, uint64_t *last_seq, uint64_t *nsteps)
{
	char line[KPT_CONTROL_LINE_MAX], end;
	uint64_t seq, n;

	int rc = read_line(dir, REQUEST, line);

	if (rc < 0)
		return rc == -2 ? 0 : -1;
	if (sscanf(line, "kptprof-request %" SCNu64 " %" SCNu64 "%c", &seq, &n, &end) != 3 || end != '\n' || !seq ||
	    !n || n > 1000000)
		return -1;
	if (seq <= *last_seq)
		return 0;
	*last_seq = seq;
	*nsteps = n;
	return 1;
}

int kpt_control_request(const char *dir, uint64_t nsteps, uint64_t *seq, struct kpt_diag *d)
{
	char line[KPT_CONTROL_LINE_MAX];
	uint64_t last = 0, n;
	int rc;

	if ((rc = private_dir(dir, d)) < 0)
		return rc;
	if (kpt_control_poll(dir, &last, &n) < 0)
		last = 0; /* an unreadable old request is replaced */
	*seq = last + 1;
	snprintf(line, sizeof line, "kptprof-request %" PRIu64 " %" PRIu64 "\n", *seq, nsteps);
	if (write_line(dir, REQUEST, line) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot write the request in '%s': %s", dir, strerror(errno));
	return 0;
}

int kpt_control_ack(const char *dir, uint32_t pid, uint64_t seq, uint64_t first_step, uint64_t opened_ns)
{
	char line[KPT_CONTROL_LINE_MAX], name[32];

	snprintf(name, sizeof name, ACK "%u", (unsigned)pid);
	snprintf(line, sizeof line, "kptprof-ack %u %" PRIu64 " %" PRIu64 " %" PRIu64 "\n", (unsigned)pid, seq,
		 first_step, opened_ns);
	return write_line(dir, name, line);
}

int kpt_control_acks(const char *dir, uint64_t seq, struct kpt_control_ack *out, size_t cap, size_t *n,
		     struct kpt_diag *d)
{
	DIR *dp;
	struct dirent *e;

	*n = 0;
	if (!(dp = opendir(dir)))
		return kpt_diag_set(d, KPT_E_IO, "cannot read control folder '%s': %s", dir, strerror(errno));
	while ((e = readdir(dp)) && *n < cap) {
		char line[KPT_CONTROL_LINE_MAX], end;
		struct kpt_control_ack a;
		unsigned pid;

		if (strncmp(e->d_name, ACK, strlen(ACK)) != 0 || read_line(dir, e->d_name, line) < 0)
			continue;
		if (sscanf(line, "kptprof-ack %u %" SCNu64 " %" SCNu64 " %" SCNu64 "%c", &pid, &a.seq, &a.first_step,
			   &a.opened_ns, &end) != 5 || end != '\n' || a.seq != seq)
			continue;
		a.pid = pid;
		out[(*n)++] = a;
	}
	closedir(dp);
	return 0;
}
