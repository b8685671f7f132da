/* kpt_outfile.c - temporary-then-rename output files (see kpt_outfile.h). */
#define _GNU_SOURCE             /* fopencookie */
#include "kpt_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	if (fd < 0 || !(*out = fdopen(fd, "w"))) {
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

int kpt_out_publish(FILE *fp, const char *path, int sync, struct kpt_diag *d)
{
	char *tmp = tmp_name(path);
	int bad = fflush(fp) != 0 || ferror(fp) || (sync && fsync(fileno(fp)) != 0), e = errno, rc = 0;

	if (fclose(fp) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (!tmp)
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': out of memory", path);
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
	if (c->notice_at && !c->noticed && c->bytes + n > c->notice_at) {
		c->noticed = 1;
		if (c->notice)
			c->notice(c->ctx, c->notice_at);
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
