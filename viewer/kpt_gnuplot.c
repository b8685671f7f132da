/* kpt_gnuplot.c - gnuplot scripts and the gnuplot child process (see
 * kpt_gnuplot.h). */
#include "kpt_gnuplot.h"
#include "kpt_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kpt_text.h"

void kpt_gp_quote(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(out, "\\%c", *s);
		else if (*s == '`')
			fputs("\\140", out);
		else if ((unsigned char)*s < 0x20 || *s == 0x7f)
			fputc(' ', out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

void kpt_gp_field(FILE *out, const char *s)
{
	kpt_text_write(out, KPT_TEXT_GNUPLOT_FIELD, s);
}

/* s with every '%' doubled, malloc'd; NULL when out of memory. */
static char *double_percent(const char *s)
{
	size_t n = 0;
	char *r, *q;

	for (const char *c = s ? s : ""; *c; c++)
		n += *c == '%' ? 2 : 1;
	if (!(q = r = malloc(n + 1)))
		return NULL;
	for (const char *c = s ? s : ""; *c; c++)
		if ((*q++ = *c) == '%')
			*q++ = '%';
	*q = '\0';
	return r;
}

void kpt_gp_tic_quote(FILE *out, const char *s)
{
	char *t = double_percent(s);

	kpt_gp_quote(out, t ? t : "?");
	free(t);
}

void kpt_gp_tic_field(FILE *out, const char *s)
{
	char *t = double_percent(s);

	kpt_gp_field(out, t ? t : "?");
	free(t);
}

/* "dir/stem.ext", or "stem.ext" when dir is NULL; malloc'd. */
static char *join(const char *dir, const char *stem, const char *ext)
{
	size_t n = (dir ? strlen(dir) + 1 : 0) + strlen(stem) + strlen(ext) + 1;
	char *p = malloc(n);

	if (p)
		snprintf(p, n, "%s%s%s%s", dir ? dir : "", dir ? "/" : "", stem, ext);
	return p;
}

int kpt_gp_open(const char *dir, const char *stem, const char *what, int w, int h,
		FILE **out, struct kpt_diag *d)
{
	char *name = join(NULL, stem, ".gp"), *png = join(NULL, stem, ".png");
	FILE *fp;
	int rc;

	*out = NULL;
	if (!name || !png) {
		free(name);
		free(png);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	/* a temporary in the folder's descriptor, renamed into place by
	 * kpt_gp_close: never through a link planted in the plot folder */
	if ((rc = kpt_out_create_at(dir ? dir : ".", name, &fp, d)) < 0) {
		free(name);
		free(png);
		return rc;
	}
	free(name);
	fprintf(fp, "# %s\n# Written by kptprof. Re-render in this folder with: gnuplot %s.gp\n"
		    "# The data are inline ($name << EOD ... EOD): edit them or the style freely.\n",
		what, stem);
	fprintf(fp, "set terminal pngcairo size %d,%d noenhanced font 'sans,10'\nset output ", w, h);
	kpt_gp_quote(fp, png);
	fputc('\n', fp);
	free(png);
	*out = fp;
	return 0;
}

int kpt_gp_close(FILE *out, const char *dir, const char *stem, struct kpt_diag *d)
{
	char *path = join(dir, stem, ".gp");
	int rc;

	if (!path) {
		fclose(out);
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	}
	rc = kpt_out_publish(out, path, 0, d);
	free(path);
	return rc;
}

int kpt_gnuplot_find(char *buf, size_t cap)
{
	const char *env = getenv("KPT_GNUPLOT"), *path = getenv("PATH");

	if (env && env[0]) {
		snprintf(buf, cap, "%s", env);
		return access(buf, X_OK) == 0;
	}
	snprintf(buf, cap, "gnuplot");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		const char *e = strchr(p, ':');
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len && (size_t)snprintf(buf, cap, "%.*s/gnuplot", (int)len, p) < cap &&
		    access(buf, X_OK) == 0)
			return 1;
		p += len + (e ? 1 : 0);
	}
	snprintf(buf, cap, "gnuplot");
	return 0;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

/* Child side: never returns. Only async-signal-safe calls after fork. */
static void run_child(const char *prog, const char *dir, const char *script, int errfd)
{
	char *argv[] = { (char *)prog, (char *)script, NULL };
	int null = open("/dev/null", O_RDWR);

	if (null < 0 || chdir(dir) != 0)
		_exit(126);
	dup2(null, 0);
	dup2(null, 1);
	dup2(errfd, 2);
	execv(prog, argv);
	_exit(127);
}

int kpt_gnuplot_render(const char *dir, const char *stem, int timeout_ms, struct kpt_diag *d)
{
	char prog[4096], err[512] = "", *script = join(NULL, stem, ".gp"), *png = join(dir, stem, ".png");
	size_t nerr = 0;
	int fds[2] = { -1, -1 }, status = 0, rc = 0, done = 0;
	long deadline;
	struct stat st;
	pid_t pid;

	if (!script || !png) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
		goto out;
	}
	if (!kpt_gnuplot_find(prog, sizeof prog)) {
		rc = kpt_diag_set(d, KPT_E_UNSUPPORTED, "gnuplot not found ('%s'): plots kept as scripts", prog);
		kpt_diag_hint(d, "install gnuplot (Debian: apt-get install gnuplot-nox) and run 'gnuplot %s.gp' in '%s'",
			      stem, dir);
		goto out;
	}
	if (pipe(fds) != 0) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot run gnuplot: pipe: %s", strerror(errno));
		goto out;
	}
	remove(png);
	pid = fork();
	if (pid < 0) {
		rc = kpt_diag_set(d, KPT_E_IO, "cannot run gnuplot: fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		close(fds[0]);
		run_child(prog, dir, script, fds[1]);
	}
	close(fds[1]);
	fds[1] = -1;
	deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 30000);
	/* Drain stderr (keeping its start) until gnuplot exits or time is up. */
	while (!done) {
		struct pollfd p = { .fd = fds[0], .events = POLLIN };
		long left = deadline - now_ms();
		char chunk[512];
		ssize_t got;

		if (left <= 0) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			rc = kpt_diag_set(d, KPT_E_IO, "gnuplot took longer than %d ms on '%s/%s.gp': killed",
					  timeout_ms > 0 ? timeout_ms : 30000, dir, stem);
			goto out;
		}
		if (fds[0] >= 0 && poll(&p, 1, left > 100 ? 100 : (int)left) > 0) {
			got = read(fds[0], chunk, sizeof chunk);
			if (got <= 0) {
				close(fds[0]);
				fds[0] = -1;
			} else if (nerr + 1 < sizeof err) {
				size_t take = (size_t)got < sizeof err - 1 - nerr ? (size_t)got : sizeof err - 1 - nerr;

				memcpy(err + nerr, chunk, take);
				nerr += take;
				err[nerr] = '\0';
			}
		} else if (fds[0] < 0) {
			usleep(10000);
		}
		if (waitpid(pid, &status, WNOHANG) == pid)
			done = 1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		/* gnuplot's message: the last non-empty line ("line 12: ..."). */
		char *line = err, *nl;

		while ((nl = strchr(line, '\n')) && nl[1])
			line = nl + 1;
		if ((nl = strchr(line, '\n')))
			*nl = '\0';
		rc = kpt_diag_set(d, KPT_E_IO, "gnuplot failed on '%s/%s.gp' (%s %d)%s%s", dir, stem,
				  WIFEXITED(status) ? "exit" : "signal",
				  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
				  line[0] ? ": " : "", line);
		goto out;
	}
	if (stat(png, &st) != 0 || st.st_size == 0)
		rc = kpt_diag_set(d, KPT_E_IO, "gnuplot wrote no picture '%s'", png);
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	free(script);
	free(png);
	return rc;
}
