/* cli_common.c - printing diags, usage errors, help, version. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_cli.h"
#include "kpt_baseline.h"
#include "kpt_format.h"
#include "kpt_outfile.h"
#include "kpt_progress.h"
#include "kpt_project.h"
#include "kpt_record.h"
#include "kpt_text.h"
#include "kpt_units.h"

/* Cleaned copies handed out by kpt_cli_term; they live until exit. */
static struct kpt_text_pool term_pool;

static void term_pool_release(void)
{
	kpt_text_pool_release(&term_pool);
}

const char *kpt_cli_clean(enum kpt_text_sink sink, const char *s)
{
	static int registered;

	if (!registered)
		registered = atexit(term_pool_release) == 0;
	return kpt_text_pool_clean(&term_pool, sink, s);
}

const char *kpt_cli_term(const char *s)
{
	return kpt_cli_clean(KPT_TEXT_TERM, s);
}

const char *kpt_cli_short_commit(const char *commit, char buf[13])
{
	snprintf(buf, 13, "%s", commit && commit[0] ? commit : "-");
	return buf;
}

int kpt_cli_fail(const struct kpt_diag *d)
{
	return kpt_cli_fail_in(NULL, d);
}

int kpt_cli_fail_in(const char *cmd, const struct kpt_diag *d)
{
	/* a message quotes names from recordings and stores: one line, always */
	fprintf(stderr, "kptprof%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	kpt_text_write(stderr, KPT_TEXT_TERM, d && d->msg[0] ? d->msg : "unknown error");
	fputc('\n', stderr);
	if (d && d->hint[0]) {
		fputs("hint: ", stderr);
		kpt_text_write(stderr, KPT_TEXT_TERM, d->hint);
		fputc('\n', stderr);
	}
	/* no GPU or no driver: the command is skipped here, as gate and ab say */
	return d && d->code == KPT_E_NODEV ? KPT_EXIT_SKIP : KPT_EXIT_ERROR;
}

int kpt_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kptprof %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	/* "help" has no options worth a hint; its mistakes are command names */
	if (strcmp(cmd, "help") == 0)
		fprintf(stderr, "\nhint: 'kptprof help' lists the commands\n");
	else
		fprintf(stderr, "\nhint: 'kptprof %s --help' shows the options\n", cmd);
	return KPT_EXIT_ERROR;
}

int kpt_cli_color(int fd)
{
	const char *no = getenv("NO_COLOR");

	return isatty(fd) && !(no && no[0]);
}

void kpt_cli_help_list(void)
{
	printf("usage: kptprof COMMAND [ARGS]\n\n"
	       "kptprof records CUDA kernels, compares runs against per-GPU baselines\n"
	       "and fails a pull request when kernels got slower.\n\ncommands:\n");
	for (int i = 0; i < kpt_ncmds; i++)
	{
		printf("  %-10s ", kpt_cmds[i].name);
		kpt_text_wrap(stdout, kpt_cmds[i].summary, 13, (size_t)kpt_cli_help_width(), 13);
	}
	printf("\n'kptprof help COMMAND' or 'kptprof COMMAND --help' shows one command.\n");
}

int kpt_cli_unknown_command(const char *name)
{
	const char *names[64], *near;
	int n = kpt_ncmds < 64 ? kpt_ncmds : 64;

	for (int i = 0; i < n; i++)
		names[i] = kpt_cmds[i].name;
	near = kpt_cli_nearest(name, names, (size_t)n);
	fprintf(stderr, "kptprof: unknown command '%s'\n", name);
	if (near)
		fprintf(stderr, "hint: did you mean 'kptprof %s'? 'kptprof help' lists the commands\n", near);
	else
		fprintf(stderr, "hint: 'kptprof help' lists the commands\n");
	return KPT_EXIT_ERROR;
}

/* version has no options but --help; the table makes it refuse others. */
const struct kpt_opt kpt_version_opts[] = { KPT_OPT_END };

int cmd_version(int argc, char **argv)
{
	int n, rc;

	if ((rc = kpt_opt_parse("version", kpt_version_opts, NULL, argc, argv, &n, NULL)) != KPT_OPT_GO)
		return rc;
	if (n)
		return kpt_cli_usage_error("version", "takes no arguments, got '%s'", argv[1]);
	printf("kptprof %s (file format %d.%d)\n", KPT_VERSION, KPT_FORMAT_MAJOR, KPT_FORMAT_MINOR);
	return KPT_EXIT_OK;
}

int kpt_cli_is_help(const char *arg)
{
	return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int kpt_cli_parse_u64(const char *cmd, const char *opt, const char *value,
		      uint64_t min, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(value, &end, 10);
	if (!value[0] || *end || errno || value[0] == '-' || v < min || v > max)
		return kpt_cli_usage_error(cmd, "bad value '%s' for %s: expected an integer from %llu to %llu",
					   value, opt, (unsigned long long)min, (unsigned long long)max);
	*out = v;
	return 0;
}

int kpt_cli_parse_choice(const char *cmd, const char *opt, const char *value,
			 const char *const *names, int n, int *index)
{
	char list[256];
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		if (strcmp(value, names[i]) == 0) {
			*index = i;
			return 0;
		}
	}
	list[0] = '\0';
	for (int i = 0; i < n && len < sizeof list; i++)
		len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", i ? "|" : "", names[i]);
	return kpt_cli_usage_error(cmd, "bad value '%s' for %s: expected %s", value, opt, list);
}

const char *kpt_cli_fmt_ns(double ns, char *buf, size_t cap)
{
	return kpt_fmt_duration(ns, buf, cap);
}

const char *kpt_cli_fmt_bytes(double bytes, char *buf, size_t cap)
{
	return kpt_fmt_bytes(bytes, buf, cap);
}

int kpt_cli_term_width(int fd)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (!isatty(fd))
		return 0;
	if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return cols && atoi(cols) > 0 ? atoi(cols) : 80;
}

/* --wide (-1) or --width N, for kpt_cli_table_width. */
static int table_width_opt;

int kpt_cli_opt_wide(const char *cmd, const char *opt, const char *value, void *field, void *args)
{
	(void)field, (void)args;
	if (value)
		return kpt_cli_usage_error(cmd, "option '%s' takes no value", opt);
	table_width_opt = -1;
	return 0;
}

int kpt_cli_opt_width(const char *cmd, const char *opt, const char *value, void *field, void *args)
{
	uint64_t w;

	(void)field, (void)args;
	if (kpt_cli_parse_u64(cmd, opt, value, 20, 100000, &w))
		return KPT_EXIT_ERROR;
	table_width_opt = (int)w;
	return 0;
}

const struct kpt_opt kpt_wide_opts[] = { KPT_OPT_WIDE(), KPT_OPT_WIDTH(), KPT_OPT_END };

int kpt_cli_table_width(void)
{
	const char *env = getenv("KPTPROF_COLUMNS");

	if (table_width_opt)
		return table_width_opt < 0 ? 0 : table_width_opt;
	if (env && atoi(env) >= 20)
		return atoi(env);
	return kpt_cli_term_width(STDOUT_FILENO);
}

int kpt_cli_help_width(void)
{
	int w = kpt_cli_table_width();

	return w > 0 ? w : 80;
}

/* The whole number in environment variable name (a test's knob): 0 when
 * unset or empty, 1 with *v, or KPT_EXIT_ERROR after one line when it holds
 * anything but decimal digits (garbage is a mistake, never read as 0). */
static int env_number(const char *cmd, const char *name, uint64_t *v)
{
	const char *s = getenv(name);
	char *e;

	if (!s || !s[0])
		return 0;
	errno = 0;
	*v = strtoull(s, &e, 10);
	if (s[strspn(s, "0123456789")] == '\0' && !*e && !errno)
		return 1;
	fprintf(stderr, "kptprof %s: bad %s '", cmd, name);
	kpt_text_write(stderr, KPT_TEXT_TERM, s);
	fputs("': want a whole number\n", stderr);
	return KPT_EXIT_ERROR;
}

int kpt_cli_progress_start(const char *cmd)
{
	static char prog[64];
	const char *no = getenv("KPTPROF_NO_PROGRESS");
	struct kpt_progress_opts o = { .prog = prog, .out = stderr, .tty = isatty(2), .after_ms = -1 };
	uint64_t after;
	int rc = env_number(cmd, "KPTPROF_PROGRESS_TEST_AFTER_MS", &after);

	if (rc < 0 || rc > 1)
		return KPT_EXIT_ERROR;
	if (no && no[0] && strcmp(no, "0") != 0)
		return 0;
	if (rc == 1)
		o.after_ms = after > INT64_MAX ? INT64_MAX : (int64_t)after;
	snprintf(prog, sizeof prog, "kptprof %s", cmd);
	kpt_progress_setup(&o);
	return 0;
}

long kpt_cli_file_settle(const char *path)
{
	struct kpt_file *f = NULL;
	struct kpt_diag d = { 0 };
	long v = kpt_file_open(path, &f, &d) == 0 ? kpt_file_settle_us(f) : -2;

	kpt_file_close(f);
	return v;
}

int kpt_cli_file_series(const char *path, char *slug, size_t cs, char *suite, size_t cu, struct kpt_diag *d)
{
	struct kpt_file *f = NULL;
	const struct kpt_device *dev;
	const char *s;
	size_t n;
	int rc;

	if ((rc = kpt_file_open(path, &f, d)) == 0 && (rc = kpt_file_devices(f, &dev, &n, d)) == 0) {
		if (n == 0 || !dev[0].slug[0]) {
			rc = kpt_diag_set(d, KPT_E_FORMAT, "'%s' names no GPU: cannot pick a baseline", path);
		} else {
			s = kpt_file_meta_get(f, "suite");
			snprintf(slug, cs, "%s", dev[0].slug);
			snprintf(suite, cu, "%s", s ? s : "");
		}
	}
	kpt_file_close(f);
	return rc;
}

_Static_assert(KPT_CLI_COMPONENT_MAX == KPT_COMPONENT_MAX, "one rule: kpt_project_name_ok");

/* the message is the baseline library's, which takes these names too */
int kpt_cli_check_component(const char *what, const char *value, const char *src, struct kpt_diag *d)
{
	return kpt_baseline_check_name(what, value, src, d);
}

int kpt_cli_stdout_done(int rc)
{
	static int said; /* main checks again after a command that did: one line */
	int bad;

	errno = 0;
	bad = fflush(stdout) != 0 || ferror(stdout);
	if (!bad)
		return rc;
	if (!said++)
		fprintf(stderr, "kptprof: cannot write to standard output: %s\n", strerror(errno ? errno : EIO));
	return KPT_EXIT_ERROR;
}

static const char *notice_cmd = "";
static FILE *plain_stdout; /* glibc's, while kpt_out_watch's stream stands in */

/* At exit: the watched stream is flushed and closed (its state freed), and
 * glibc's stdout takes over for whatever still writes. */
static void unwatch_stdout(void)
{
	FILE *w = stdout;

	if (!plain_stdout)
		return;
	stdout = plain_stdout;
	plain_stdout = NULL;
	fclose(w);
}

/* The buffer glibc gives stdout when it is not a terminal: the file's
 * block size, so output and stderr interleave as they did. */
static size_t stdout_bufsize(void)
{
	struct stat st;

	return fstat(STDOUT_FILENO, &st) == 0 && st.st_blksize > 0 ? (size_t)st.st_blksize : BUFSIZ;
}

static void say_large(const char *what, uint64_t at)
{
	char sz[32];

	kpt_progress_clear(); /* the notice on its own line, not after a progress line */
	fprintf(stderr, "kptprof%s%s: note: '%s' passes %s and keeps growing\n", notice_cmd[0] ? " " : "", notice_cmd,
		kpt_cli_term(what), kpt_cli_fmt_bytes((double)at, sz, sizeof sz));
}

/* A fatal signal: the temporaries of every output go (kpt_outfile.h), then
 * the signal does what it would have done. */
static void remove_temps_and_die(int sig)
{
	kpt_out_remove_temps();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void remove_temps_on_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = remove_temps_and_die }, old;

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN) /* nohup stays */
			sigaction(sigs[i], &sa, NULL);
}

int kpt_cli_watch_outputs(const char *cmd)
{
	uint64_t at = KPT_CLI_NOTICE_BYTES;
	int rc = env_number(cmd, "KPTPROF_TEST_NOTICE_BYTES", &at);
	FILE *w;

	if (rc == KPT_EXIT_ERROR)
		return rc;

	notice_cmd = cmd;
	kpt_out_set_notice(say_large, at);
	remove_temps_on_signals();
	fflush(stdout);
	/* glibc's stdout is a variable (documented: it may be assigned); every
	 * printf of every command now goes through the watched stream */
	w = kpt_out_watch(STDOUT_FILENO, "standard output", 0, isatty(STDOUT_FILENO) ? 0 : stdout_bufsize());
	if (w && atexit(unwatch_stdout) == 0) {
		plain_stdout = stdout;
		stdout = w;
	} else if (w) {
		fclose(w);
	}
	return 0;
}

/* d as "kptprof CMD: problem" (and its hint) on stderr: KPT_EXIT_ERROR */
static int output_refused(const char *cmd, const struct kpt_diag *d)
{
	fprintf(stderr, "kptprof %s: ", cmd);
	kpt_text_write(stderr, KPT_TEXT_TERM, d->msg);
	fputc('\n', stderr);
	if (d->hint[0]) {
		fputs("hint: ", stderr);
		kpt_text_write(stderr, KPT_TEXT_TERM, d->hint);
		fputc('\n', stderr);
	}
	return KPT_EXIT_ERROR;
}

int kpt_cli_outputs(const char *cmd, const char *const *in, size_t nin, const char *const *out, size_t nout)
{
	struct kpt_diag d = { 0 };

	for (size_t i = 0; i < nin; i++)
		if (in[i] && kpt_out_input(in[i]) < 0) {
			fprintf(stderr, "kptprof %s: out of memory\n", cmd);
			return KPT_EXIT_ERROR;
		}
	for (size_t i = 0; i < nout; i++)
		if (out[i] && kpt_out_check(out[i], &d) < 0)
			return output_refused(cmd, &d);
	return 0;
}

int kpt_cli_output_dir(const char *cmd, const char *dir)
{
	struct kpt_diag d = { 0 };

	return dir && kpt_out_check_dir(dir, &d) < 0 ? output_refused(cmd, &d) : 0;
}

int kpt_cli_same_file(const char *in, const char *out)
{
	struct stat a, b;

	return strcmp(out, "-") != 0 && stat(in, &a) == 0 && stat(out, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* ---- environment and installed files --------------------------------------------------- */

const char *kpt_cli_getenv(const char *name, const char *old)
{
	const char *v = getenv(name);

	if (v && v[0])
		return v;
	v = old ? getenv(old) : NULL;
	if (!v || !v[0])
		return NULL;
	/* once per variable and process: a loop of lookups says it once */
	if (!getenv("KPTPROF_QUIET_ENV_NOTICE")) {
		fprintf(stderr, "kptprof: notice: %s is read as %s; rename it, the old name will go\n", old, name);
		setenv("KPTPROF_QUIET_ENV_NOTICE", "1", 0);
	}
	return v;
}

/* Where kpt-workloads lives relative to kptprof: the build tree first
 * (cli/, with kernels/ beside it), then an installed prefix
 * (<prefix>/bin/kptprof, <prefix>/lib/kptprof/...). */
static const char *const runner_rel[] = {
	"kpt-workloads", "../kernels/kpt-workloads", "../kernels/runner/kpt-workloads",
	"../lib/kptprof/kpt-workloads", "../libexec/kptprof/kpt-workloads", "../lib64/kptprof/kpt-workloads", NULL,
};

/* The default collector's library (the recorder's table, kpt_record.h). */
int kpt_cli_find_collector(char *out, size_t cap)
{
	return kpt_collector_library(kpt_collector_find(NULL), out, cap);
}

int kpt_cli_find_runner(char *out, size_t cap)
{
	return kpt_record_find_beside(kpt_cli_getenv("KPTPROF_WORKLOADS", "KPT_WORKLOADS"), runner_rel, X_OK, out, cap);
}

const char *kpt_cli_baselines_dir(void)
{
	static char buf[PATH_MAX + 32];
	const char *e = kpt_cli_getenv("KPTPROF_BASELINES", "KPT_BASELINES");
	char dir[PATH_MAX];
	struct stat st;

	if (e)
		return e;
	if (stat("baselines", &st) == 0 && S_ISDIR(st.st_mode))
		return "baselines";
	if (kpt_record_exe_dir(dir, sizeof dir) == 0 &&
	    (size_t)snprintf(buf, sizeof buf, "%s/../share/kptprof/baselines", dir) < sizeof buf &&
	    stat(buf, &st) == 0 && S_ISDIR(st.st_mode))
		return buf;
	return "baselines";
}

int kpt_cli_project(const char *given, struct kpt_project **out, struct kpt_diag *d)
{
	char path[PATH_MAX];

	*out = NULL;
	if (!given) {
		if (kpt_project_find(".", path, sizeof path) < 0)
			return 0;
		given = path;
	}
	return kpt_project_load(given, out, d);
}

const char *kpt_cli_list_verb(const char *verb, const char *canonical)
{
	return strcmp(verb, "ls") == 0 || strcmp(verb, "list") == 0 ? canonical : verb;
}
