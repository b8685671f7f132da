/* kpt_outfile.c - every output file: what a path may be, inputs refused,
 * temporaries renamed into place and removed on a signal (see kpt_outfile.h). */
#define _GNU_SOURCE             /* fopencookie, memfd_create, asprintf */
#include "kpt_outfile.h"

#include "kpt_grow.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
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

/* ---- inputs ---------------------------------------------------------------------------- */

struct input {
	dev_t dev;
	ino_t ino;
	int has_ino;
	char *abs;                  /* absolute path, NULL: by inode only */
};
static struct input *inputs;
static size_t ninputs, capinputs;

/* The absolute path of p, its last component not followed (a link is
 * named, not its target): realpath of its folder + "/" + the name.
 * malloc'd; NULL when the folder does not resolve or out of memory. */
static char *abs_path(const char *p)
{
	const char *slash = strrchr(p, '/'), *base = slash ? slash + 1 : p;
	char *dir, *rdir, *r = NULL;

	if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
		return realpath(p, NULL);
	dir = slash == p ? strdup("/") : slash ? strndup(p, (size_t)(slash - p)) : strdup(".");
	rdir = dir ? realpath(dir, NULL) : NULL;
	free(dir);
	if (rdir && asprintf(&r, "%s%s%s", rdir, strcmp(rdir, "/") ? "/" : "", base) < 0)
		r = NULL;
	free(rdir);
	return r;
}

/* st: the file's (NULL: by path only); abs is taken over. */
static int add_input(const struct stat *st, char *abs)
{
	if (kpt_grow(&inputs, &capinputs, ninputs + 1, sizeof *inputs) < 0) {
		free(abs);
		return KPT_E_NOMEM;
	}
	inputs[ninputs++] = (struct input){ .dev = st ? st->st_dev : 0, .ino = st ? st->st_ino : 0,
					    .has_ino = st != NULL, .abs = abs };
	return 0;
}

/* Every file below dir, depth levels of folders. */
static int add_tree(const char *dir, int depth)
{
	DIR *dp = opendir(dir);
	struct dirent *e;
	int rc = 0;

	while (rc == 0 && dp && (e = readdir(dp))) {
		struct stat st;
		char *p;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (asprintf(&p, "%s/%s", dir, e->d_name) < 0) {
			rc = KPT_E_NOMEM;
			break;
		}
		if (stat(p, &st) == 0)
			rc = S_ISDIR(st.st_mode) ? (depth > 1 ? add_tree(p, depth - 1) : 0) : add_input(&st, NULL);
		free(p);
	}
	if (dp)
		closedir(dp);
	return rc;
}

int kpt_out_input(const char *path)
{
	struct stat st;
	int have = stat(path, &st) == 0, rc;

	if ((rc = add_input(have ? &st : NULL, abs_path(path))) < 0)
		return rc;
	return have && S_ISDIR(st.st_mode) ? add_tree(path, 3) : 0;
}

void kpt_out_inputs_clear(void)
{
	for (size_t i = 0; i < ninputs; i++)
		free(inputs[i].abs);
	free(inputs);
	inputs = NULL;
	ninputs = capinputs = 0;
}

/* Whether the output path (st: what it names now, links followed; NULL
 * when nothing) is an input. */
static int is_input(const char *path, const struct stat *st)
{
	char *abs = ninputs ? abs_path(path) : NULL;
	int hit = 0;

	for (size_t i = 0; i < ninputs && !hit; i++)
		hit = (st && inputs[i].has_ino && inputs[i].dev == st->st_dev && inputs[i].ino == st->st_ino) ||
		      (abs && inputs[i].abs && strcmp(abs, inputs[i].abs) == 0);
	free(abs);
	return hit;
}

/* ---- what an output path is -------------------------------------------------------------- */

enum out_how {
	OUT_REPLACE,                /* absent or a regular file: temporary + rename */
	OUT_IN_PLACE,               /* a character device or a FIFO */
	OUT_DUP,                    /* "-" or a link to our stdout/stderr: that descriptor */
};

static int refuse(struct kpt_diag *d, const char *path, const char *why)
{
	return kpt_diag_set(d, KPT_E_INVAL, "refusing to write '%s': %s", path, why);
}

/* How path is written (enum out_how; *dupfd for OUT_DUP), or a negative
 * code with d set. Looks, never writes. */
static int classify(const char *path, int *dupfd, struct kpt_diag *d)
{
	struct stat lst, st, fs;
	int have;

	if (strcmp(path, "-") == 0) {
		*dupfd = STDOUT_FILENO;
		return OUT_DUP;
	}
	if (!path[0])
		return kpt_diag_set(d, KPT_E_INVAL, "cannot write '': an empty path");
	if (path[strlen(path) - 1] == '/')
		return refuse(d, path, "it names a directory");
	if (lstat(path, &lst) != 0) {
		if (errno != ENOENT)
			return kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", path, strerror(errno));
		if (is_input(path, NULL))
			return refuse(d, path, "it is an input of this command");
		return OUT_REPLACE;
	}
	have = stat(path, &st) == 0;
	if (is_input(path, have ? &st : NULL)) {
		int rc = refuse(d, path, "it is an input of this command");

		kpt_diag_hint(d, "choose another output path");
		return rc; /* d may be NULL: kpt_diag_hint then says 0 */
	}
	if (S_ISLNK(lst.st_mode)) {
		for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++)
			if (have && fstat(fd, &fs) == 0 && fs.st_dev == st.st_dev && fs.st_ino == st.st_ino) {
				*dupfd = fd;
				return OUT_DUP;
			}
		int rc = refuse(d, path, "it is a symbolic link");

		kpt_diag_hint(d, "name the file it points to, or '-' for standard output");
		return rc;
	}
	if (S_ISREG(lst.st_mode))
		return OUT_REPLACE;
	if (S_ISCHR(lst.st_mode) || S_ISFIFO(lst.st_mode))
		return OUT_IN_PLACE;
	return refuse(d, path, S_ISDIR(lst.st_mode) ? "it is a directory" :
			       S_ISBLK(lst.st_mode) ? "it is a block device" : "it is not a regular file");
}

/* The folder part of path ("." when none), malloc'd; NULL: out of memory. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash == path ? strdup("/") : slash ? strndup(path, (size_t)(slash - path)) : strdup(".");
}

/* Whether the folder of path takes a new entry (verb: "write" a file,
 * "create" a folder): 0, or "cannot VERB 'PATH': ..." in d. */
static int folder_takes(const char *verb, const char *path, struct kpt_diag *d)
{
	char *dir = dir_of(path);
	struct stat st;
	int rc = 0;

	if (!dir)
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot %s '%s': out of memory", verb, path);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		rc = kpt_diag_set(d, KPT_E_NOTFOUND, "cannot %s '%s': no folder '%s'", verb, path, dir);
	else if (access(dir, W_OK | X_OK) != 0)
		rc = kpt_diag_set(d, KPT_E_IO, "cannot %s '%s': %s", verb, path, strerror(errno));
	free(dir);
	return rc;
}

int kpt_out_check(const char *path, struct kpt_diag *d)
{
	int dupfd, how = classify(path, &dupfd, d);

	if (how != OUT_REPLACE)
		return how < 0 ? how : 0;
	if ((how = folder_takes("write", path, d)) >= 0) {
		/* access() says yes to root everywhere, and nothing of a
		 * read-only mount or a folder such as /proc: the temporary the
		 * write will make is made (and removed) now, so a command fails
		 * before it prints or computes anything */
		struct kpt_out o;

		if ((how = kpt_out_open(path, 0, &o, d)) == 0)
			kpt_out_abandon(&o);
	}
	return how < 0 ? how : 0;
}

int kpt_out_check_dir(const char *dir, struct kpt_diag *d)
{
	struct stat st;

	if (stat(dir, &st) != 0)   /* to be made (mkdir): its folder must take it */
		return folder_takes("create", dir, d);
	if (!S_ISDIR(st.st_mode))
		return kpt_diag_set(d, KPT_E_INVAL, "cannot write into '%s': not a folder", dir);
	if (access(dir, W_OK | X_OK) != 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot write into '%s': %s", dir, strerror(errno));
	return 0;
}

/* ---- temporaries and the signal list ----------------------------------------------------- */

#define OUT_TEMPS 64
static struct {
	volatile int dfd;
	const char *volatile name;
} temps[OUT_TEMPS];
static volatile pid_t temps_pid; /* whose they are: not a forked child's */

void kpt_out_remove_temps(void)
{
	if (getpid() != temps_pid)
		return;
	for (int i = 0; i < OUT_TEMPS; i++) {
		const char *n = temps[i].name;

		if (n)
			unlinkat(temps[i].dfd, n, 0);
	}
}

static int temp_register(int dfd, const char *name)
{
	temps_pid = getpid();
	for (int i = 0; i < OUT_TEMPS; i++)
		if (!temps[i].name) {
			temps[i].dfd = dfd;
			__atomic_store_n(&temps[i].name, name, __ATOMIC_RELEASE);
			return i;
		}
	return -1; /* written still; not removed by a signal */
}

static void temp_forget(int slot)
{
	if (slot >= 0)
		__atomic_store_n(&temps[slot].name, NULL, __ATOMIC_RELEASE);
}

static const struct kpt_out out_closed = { .fd = -1, .dirfd = -1, .target = -1, .slot = -1 };

void kpt_out_abandon(struct kpt_out *o)
{
	temp_forget(o->slot);
	if (o->fd >= 0)
		close(o->fd);
	if (o->target >= 0)
		close(o->target);
	if (o->tmp)
		unlinkat(o->dirfd, o->tmp, 0);
	if (o->dirfd >= 0)
		close(o->dirfd);
	free(o->name);
	free(o->tmp);
	free(o->what);
	*o = out_closed;
}

/* Creates "<name>.tmp-XXXXXX" new inside o->dirfd (never a planted file or
 * link: O_EXCL | O_NOFOLLOW), registered for kpt_out_remove_temps. */
static int open_temp(struct kpt_out *o, const char *name, struct kpt_diag *d)
{
	static const char abc[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	static unsigned long counter;
	size_t len = strlen(name);
	unsigned long long x;
	struct timespec ts;

	if (!(o->name = strdup(name)) || !(o->tmp = malloc(len + 12)))
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': out of memory", o->what);
	clock_gettime(CLOCK_REALTIME, &ts);
	x = (unsigned long long)ts.tv_nsec ^ ((unsigned long long)getpid() << 32) ^ ++counter * 0x9e3779b97f4a7c15ULL;
	for (int tries = 0; tries < 100; tries++) {
		memcpy(o->tmp, name, len);
		memcpy(o->tmp + len, ".tmp-", 5);
		for (int k = 0; k < 6; k++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			o->tmp[len + 5 + k] = abc[(x >> 33) % (sizeof abc - 1)];
		}
		o->tmp[len + 11] = '\0';
		o->fd = openat(o->dirfd, o->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (o->fd >= 0) {
			o->slot = temp_register(o->dirfd, o->tmp);
			return 0;
		}
		if (errno != EEXIST)
			break;
	}
	free(o->tmp);
	o->tmp = NULL;
	return kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", o->what, strerror(errno));
}

/* A stream target: written directly, or through a memory file when the
 * caller seeks. Takes target over. */
static int use_target(struct kpt_out *o, int target, unsigned flags, struct kpt_diag *d)
{
	o->fd = target;
	if (!(flags & KPT_OUT_SEEKABLE))
		return 0;
	o->target = target;
	if ((o->fd = memfd_create("kptprof-out", MFD_CLOEXEC)) < 0)
		return kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", o->what, strerror(errno));
	return 0;
}

int kpt_out_open(const char *path, unsigned flags, struct kpt_out *o, struct kpt_diag *d)
{
	int dupfd = -1, how, rc, fd;
	const char *slash = strrchr(path, '/');
	char *dir;
	struct stat st;

	*o = out_closed;
	if ((how = classify(path, &dupfd, d)) < 0)
		return how;
	if (!(o->what = strdup(path)))
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': out of memory", path);
	if (how == OUT_DUP) {
		if (dupfd == STDOUT_FILENO)
			fflush(stdout); /* what the program printed comes first */
		fd = fcntl(dupfd, F_DUPFD_CLOEXEC, 3);
	} else if (how == OUT_IN_PLACE) {
		/* O_NOFOLLOW and the check after: what classify saw, not a link
		 * or file swapped in meanwhile */
		fd = open(path, O_WRONLY | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && (fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)))) {
			close(fd);
			fd = -1;
			errno = EEXIST;
		}
	} else {
		if (!(dir = dir_of(path))) {
			kpt_out_abandon(o);
			return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': out of memory", path);
		}
		o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		free(dir);
		rc = o->dirfd < 0 ? kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", path, strerror(errno)) :
				    open_temp(o, slash ? slash + 1 : path, d);
		if (rc < 0)
			kpt_out_abandon(o);
		return rc;
	}
	if (fd < 0) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", path, strerror(errno));
		kpt_out_abandon(o);
		return rc;
	}
	if ((rc = use_target(o, fd, flags, d)) < 0)
		kpt_out_abandon(o);
	return rc;
}

int kpt_out_open_at(const char *dir, const char *name, unsigned flags, struct kpt_out *o, struct kpt_diag *d)
{
	struct stat st;
	int rc;

	(void)flags; /* a regular temporary seeks */
	*o = out_closed;
	if (asprintf(&o->what, "%s/%s", dir, name) < 0) {
		o->what = NULL;
		return kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s/%s': out of memory", dir, name);
	}
	if (!name[0] || strchr(name, '/') || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		rc = kpt_diag_set(d, KPT_E_INVAL, "cannot write '%s': not a file name", o->what);
	else if ((o->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", o->what, strerror(errno));
	else if (is_input(o->what, fstatat(o->dirfd, name, &st, 0) == 0 ? &st : NULL))
		rc = refuse(d, o->what, "it is an input of this command");
	else
		rc = open_temp(o, name, d);
	if (rc < 0)
		kpt_out_abandon(o);
	return rc;
}

/* Copies the memory file o->fd to its stream o->target. 0 or -1 (errno). */
static int copy_out(struct kpt_out *o)
{
	char buf[OUT_BUFSIZE];
	ssize_t n;

	if (lseek(o->fd, 0, SEEK_SET) != 0)
		return -1;
	while ((n = read(o->fd, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		for (ssize_t done = 0; done < n;) {
			ssize_t k = write(o->target, buf + done, (size_t)(n - done));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0)
				return -1;
			done += k;
		}
	}
	return 0;
}

int kpt_out_close(struct kpt_out *o, int sync, struct kpt_diag *d)
{
	int bad = 0, rc = 0;

	if (o->target >= 0) {
		bad = copy_out(o) != 0;
		if (close(o->target) != 0 && !bad)
			bad = 1;
		o->target = -1;
	} else if (o->tmp && sync) {
		bad = fsync(o->fd) != 0;
	}
	if (!bad && close(o->fd) != 0)
		bad = 1;
	else if (bad)
		close(o->fd);
	o->fd = -1;
	if (!bad && o->tmp && renameat(o->dirfd, o->tmp, o->dirfd, o->name) != 0)
		bad = 1;
	if (bad) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", o->what, strerror(errno ? errno : EIO));
	} else if (o->tmp) {
		temp_forget(o->slot);
		o->slot = -1;
		free(o->tmp); /* renamed: nothing to remove */
		o->tmp = NULL;
		if (sync)
			fsync(o->dirfd);
	}
	kpt_out_abandon(o);
	return rc;
}

/* ---- streams ----------------------------------------------------------------------------- */

#define OUT_STREAMS 32
static struct {
	FILE *fp;
	struct kpt_out o;
} streams[OUT_STREAMS];

/* Wraps an opened o as a stream in a free slot; abandons o on failure. */
static int stream_of(struct kpt_out *o, FILE **out, struct kpt_diag *d)
{
	int i = 0;

	while (i < OUT_STREAMS && streams[i].fp)
		i++;
	if (i == OUT_STREAMS || !(*out = kpt_out_watch(o->fd, o->what, 0, OUT_BUFSIZE))) {
		int rc = kpt_diag_set(d, KPT_E_NOMEM, "cannot write '%s': %s", o->what,
				      i == OUT_STREAMS ? "too many outputs open" : "out of memory");

		kpt_out_abandon(o);
		return rc;
	}
	streams[i].fp = *out;
	streams[i].o = *o;
	return 0;
}

int kpt_out_create(const char *path, FILE **out, struct kpt_diag *d)
{
	struct kpt_out o;
	int rc;

	*out = NULL;
	if ((rc = kpt_out_open(path, 0, &o, d)) < 0)
		return rc;
	return stream_of(&o, out, d);
}

int kpt_out_create_at(const char *dir, const char *name, FILE **out, struct kpt_diag *d)
{
	struct kpt_out o;
	int rc;

	*out = NULL;
	if ((rc = kpt_out_open_at(dir, name, 0, &o, d)) < 0)
		return rc;
	return stream_of(&o, out, d);
}

/* The output of stream fp, taken out of the table; NULL when not ours. */
static int take_stream(FILE *fp, struct kpt_out *o)
{
	for (int i = 0; i < OUT_STREAMS; i++)
		if (fp && streams[i].fp == fp) {
			*o = streams[i].o;
			streams[i].fp = NULL;
			return 0;
		}
	return -1;
}

int kpt_out_publish(FILE *fp, const char *path, int sync, struct kpt_diag *d)
{
	struct kpt_out o;
	int bad = fflush(fp) != 0 || ferror(fp), e = errno;

	if (take_stream(fp, &o) != 0) {
		fclose(fp);
		return kpt_diag_set(d, KPT_E_INVAL, "cannot write '%s': not an output stream", path);
	}
	if (fclose(fp) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (bad) {
		int rc = kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", path, strerror(e ? e : EIO));

		kpt_out_abandon(&o);
		return rc;
	}
	return kpt_out_close(&o, sync, d);
}

void kpt_out_discard(FILE *fp, const char *path)
{
	struct kpt_out o;

	(void)path;
	if (!fp)
		return;
	if (take_stream(fp, &o) == 0) {
		fclose(fp);
		kpt_out_abandon(&o);
	} else {
		fclose(fp);
	}
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
