/* kpt_outfile.c - temporary-then-rename output files (see kpt_outfile.h). */
#define _GNU_SOURCE             /* fopencookie */
#include "kpt_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void (*notice_fn)(const char *what, uint64_t at);
static uint64_t notice_at;

void kpt_out_set_notice(void (*notice)(const char *what, uint64_t at), uint64_t at)
{
	notice_fn = notice;
	notice_at = at;
}

struct watched {
	int fd, own_fd, noticed;
	uint64_t bytes;
	char what[];
};

static ssize_t watched_write(void *cookie, const char *buf, size_t n)
{
	struct watched *w = cookie;
	size_t done = 0;

	if (notice_fn && notice_at && !w->noticed && w->bytes + n > notice_at) {
		w->noticed = 1;
		notice_fn(w->what, notice_at);
	}
	while (done < n) {
		ssize_t k = write(w->fd, buf + done, n - done);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return done ? (ssize_t)done : -1;
		done += (size_t)k;
		w->bytes += (uint64_t)k;
	}
	return (ssize_t)n;
}

static int watched_close(void *cookie)
{
	struct watched *w = cookie;
	int rc = w->own_fd ? close(w->fd) : 0;

	free(w);
	return rc;
}

FILE *kpt_out_watch(int fd, const char *what, int own_fd, size_t bufsize)
{
	cookie_io_functions_t io = { .write = watched_write, .close = watched_close };
	size_t len = strlen(what);
	struct watched *w = malloc(sizeof *w + len + 1);
	FILE *f;

	if (!w)
		return NULL;
	*w = (struct watched){ .fd = fd, .own_fd = own_fd };
	memcpy(w->what, what, len + 1);
	if (!(f = fopencookie(w, "w", io))) {
		free(w);
		return NULL;
	}
	(void)setvbuf(f, NULL, bufsize ? _IOFBF : _IOLBF, bufsize ? bufsize : BUFSIZ);
	return f;
}

#define OUT_BUFSIZE 65536

/* "<path>.tmp<pid>", malloc'd; NULL when out of memory. */
static char *tmp_name(const char *path)
{
	size_t n = strlen(path) + 32;
	char *t = malloc(n);

	if (t)
		snprintf(t, n, "%s.tmp%ld", path, (long)getpid());
	return t;
}

int kpt_out_create(const char *path, FILE **out, struct kpt_diag *d)
{
	char *tmp = tmp_name(path);
	int fd, rc;

	*out = NULL;
	if (!tmp)
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': out of memory", path);
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0 || !(*out = kpt_out_watch(fd, path, 1, OUT_BUFSIZE))) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", path, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		free(tmp);
		return rc;
	}
	free(tmp);
	return 0;
}

/* fsync of the file at path, through a descriptor of its own (the stream
 * of kpt_out_create has none to give): Linux syncs the file's data
 * whichever descriptor asks. 0 or -1 (errno). */
static int sync_path(const char *path)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = fsync(fd);
	if (close(fd) != 0)
		rc = -1;
	return rc;
}

int kpt_out_publish(FILE *fp, const char *path, int sync, struct kpt_diag *d)
{
	char *tmp = tmp_name(path);
	int bad = fflush(fp) != 0 || ferror(fp), e = errno, rc = 0;

	if (fclose(fp) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (!tmp)
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': out of memory", path);
	if (!bad && sync && sync_path(tmp) != 0) {
		bad = 1;
		e = errno;
	}
	if (!bad && rename(tmp, path) != 0) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", path, strerror(e ? e : EIO));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

void kpt_out_discard(FILE *fp, const char *path)
{
	char *tmp = tmp_name(path);

	if (fp)
		fclose(fp);
	if (tmp)
		unlink(tmp);
	free(tmp);
}

static ssize_t counted_write(void *cookie, const char *buf, size_t n)
{
	struct kpt_out_count *c = cookie;

	if (c->limit && c->bytes + n > c->limit) {
		c->over = 1;
		errno = EFBIG;
		return -1;
	}
	if (fwrite(buf, 1, n, c->inner) != n)
		return -1;
	c->bytes += n;
	return (ssize_t)n;
}

static int counted_close(void *cookie)
{
	(void)cookie;
	return 0;
}

FILE *kpt_out_counted(struct kpt_out_count *c)
{
	cookie_io_functions_t io = { .write = counted_write, .close = counted_close };

	return fopencookie(c, "w", io);
}
