/* cmd_trigger.c - `kptprof trigger`: asks a `kptprof record --on-demand`
 * (every process it traces) to capture the next steps, and says which
 * processes began a capture and how long after the request
 * (lib/kpt_control.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kpt_cli.h"
#include "kpt_control.h"
#include "kpt_grow.h"
#include "kpt_text.h"
#include "kpt_window.h"

#define MAX_RECORDINGS 64
#define MAX_ACKS 4096

struct trigger_args {
	uint64_t steps;             /* 0: the recording's --sample-steps */
	const char *wait;           /* seconds, NULL: 5 */
	int list;
};

const struct kpt_opt kpt_trigger_opts[] = {
	KPT_OPT_U64(0, "steps", "N", struct trigger_args, steps, 1, KPT_WINDOW_SAMPLE_STEPS_MAX,
		    "steps to capture in each process, from its next step (default: the recording's --sample-steps)"),
	KPT_OPT_STRING(0, "wait", "S", struct trigger_args, wait,
		       "seconds to wait for the processes to begin their capture; 0: send the request, do not wait (default 5)"),
	KPT_OPT_FLAG(0, "list", struct trigger_args, list,
		     "list this user's running on-demand recordings: pid, command, since"),
	KPT_OPT_END,
};

/* The whole command line of pid, its words joined by spaces (malloc'd,
 * the caller frees it), or NULL when it cannot be read. */
static char *command_of(long pid)
{
	char path[64], *buf = NULL;
	size_t n = 0, cap = 0;
	ssize_t k = 0;
	int fd;

	snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return NULL;
	while (kpt_grow(&buf, &cap, n + 4096, 1) == 0 && (k = read(fd, buf + n, cap - n - 1)) > 0)
		n += (size_t)k;
	close(fd);
	if (k != 0 || n == 0) {
		free(buf);
		return NULL;
	}
	for (size_t i = 0; i + 1 < n; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	buf[n] = '\0';
	return buf;
}

/* One row of --list: on a terminal the command is cut to what is left of
 * width; piped (width 0) it is whole. */
static void list_row(long pid, const char *since, int width)
{
	char *cmd = command_of(pid), *cut[1] = { NULL };
	const char *show = cmd ? cmd : "?";
	size_t room = width > 29 + 10 ? (size_t)width - 29 : 10;

	if (width > 0 && kpt_text_columns(show) > room &&
	    kpt_text_column((const char *const[]){ show }, 1, room, KPT_CUT_MIDDLE, cut) == 0)
		show = cut[0];
	printf("%-8ld %-19s %s\n", pid, since, kpt_cli_term(show));
	kpt_text_column_free(cut, 1);
	free(cmd);
}

static int list(void)
{
	long pids[MAX_RECORDINGS];
	char base[PATH_MAX], path[PATH_MAX + 32], since[32];
	struct kpt_diag d;
	struct stat st;
	int n, width = kpt_cli_table_width();

	kpt_diag_clear(&d);
	if ((n = kpt_control_list(pids, MAX_RECORDINGS, &d)) < 0 || kpt_control_base(base, sizeof base, &d) < 0)
		return kpt_cli_fail_in("trigger", &d);
	if (n == 0) {
		printf("no on-demand recording of this user is running\n");
		return KPT_EXIT_OK;
	}
	printf("%-8s %-19s %s\n", "pid", "since", "command");
	for (int i = 0; i < n && i < MAX_RECORDINGS; i++) {
		snprintf(path, sizeof path, "%s/%ld", base, pids[i]);
		since[0] = '\0';
		if (stat(path, &st) == 0) {
			struct tm tm;

			strftime(since, sizeof since, "%Y-%m-%d %H:%M:%S", localtime_r(&st.st_mtime, &tm));
		}
		list_row(pids[i], since, width);
	}
	return KPT_EXIT_OK;
}

/* The control folder of pid: its own (a `kptprof record`) or the one in
 * its environment (a traced process). A link in its own place is passed on
 * for kpt_control_request to refuse by name. */
static int folder_of(long pid, char *out, size_t cap)
{
	char base[PATH_MAX], proc[64];
	struct kpt_diag d;
	struct stat st;

	kpt_diag_clear(&d);
	if (kpt_control_base(base, sizeof base, &d) < 0)
		return kpt_cli_fail_in("trigger", &d);
	snprintf(proc, sizeof proc, "/proc/%ld", pid);
	if ((size_t)snprintf(out, cap, "%s/%ld", base, pid) < cap && lstat(out, &st) == 0 &&
	    (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)) && stat(proc, &st) == 0 && st.st_uid == geteuid())
		return 0;
	if (kpt_control_dir_of(pid, out, cap, &d) < 0)
		return kpt_cli_fail_in("trigger", &d);
	return 0;
}

static int the_only_one(char *out, size_t cap)
{
	long pids[MAX_RECORDINGS];
	char all[MAX_RECORDINGS * 12] = "";
	struct kpt_diag d;
	int n;

	kpt_diag_clear(&d);
	if ((n = kpt_control_list(pids, MAX_RECORDINGS, &d)) < 0)
		return kpt_cli_fail_in("trigger", &d);
	if (n == 0)
		return kpt_cli_usage_error("trigger", "no on-demand recording of this user is running "
					   "(kptprof record --on-demand)");
	if (n > 1) {
		for (int i = 0; i < n && i < MAX_RECORDINGS; i++)
			snprintf(all + strlen(all), sizeof all - strlen(all), "%s%ld", i ? ", " : "", pids[i]);
		return kpt_cli_usage_error("trigger", "%d on-demand recordings are running: give one pid of '%s'", n, all);
	}
	return folder_of(pids[0], out, cap);
}

/* Waits up to wait_ns for acknowledgements of seq; after the first, until
 * none came for a quarter second (the other ranks). */
static int collect(const char *dir, uint64_t seq, uint64_t t0, uint64_t wait_ns, struct kpt_control_ack *acks)
{
	uint64_t last_new = 0;
	int n = 0, k;

	for (;;) {
		uint64_t now = kpt_control_now_ns();

		k = kpt_control_acks(dir, seq, acks, MAX_ACKS, NULL);
		if (k < 0)              /* the recording ended: what it said stands */
			return n > 0 ? n : k;
		if (k > n) {
			n = k;
			last_new = now;
		}
		if (now - t0 >= wait_ns || (n > 0 && now - last_new >= 250000000ull))
			return n;
		usleep(20000);
	}
}

int cmd_trigger(int argc, char **argv)
{
	struct trigger_args a = { 0 };
	struct kpt_control_ack *acks;
	char dir[PATH_MAX], *end;
	struct kpt_diag d;
	uint64_t seq, t0, wait_ns = 5000000000ull;
	int n, rc;

	if ((rc = kpt_opt_parse("trigger", kpt_trigger_opts, &a, argc, argv, &n, NULL)) != KPT_OPT_GO)
		return rc;
	if (a.wait) {
		double w;

		errno = 0;
		w = strtod(a.wait, &end);
		if (!a.wait[0] || *end || errno || !(w >= 0 && w <= 3600) || strspn(a.wait, "0123456789.") != strlen(a.wait))
			return kpt_cli_usage_error("trigger", "bad --wait '%s': want seconds in decimal, 0 to 3600", a.wait);
		wait_ns = (uint64_t)llround(w * 1e9);
	}
	if (a.list) {
		if (n || a.steps || a.wait)
			return kpt_cli_usage_error("trigger", "'--list' takes no pid, --steps or --wait");
		return list();
	}
	if (n > 1)
		return kpt_cli_usage_error("trigger", "one pid at most, got '%s' and '%s'", argv[1], argv[2]);
	if (n == 1) {
		long pid;

		errno = 0;
		pid = strtol(argv[1], &end, 10);
		if (errno || *end || pid <= 0 || argv[1][0] < '0' || argv[1][0] > '9')
			return kpt_cli_usage_error("trigger", "bad pid '%s'", argv[1]);
		if ((rc = folder_of(pid, dir, sizeof dir)) != 0)
			return rc;
	} else if ((rc = the_only_one(dir, sizeof dir)) != 0) {
		return rc;
	}
	kpt_diag_clear(&d);
	t0 = kpt_control_now_ns();
	if (kpt_control_request(dir, a.steps, &seq, &d) < 0)
		return kpt_cli_fail_in("trigger", &d);
	if (!(acks = calloc(MAX_ACKS, sizeof *acks))) {
		fprintf(stderr, "kptprof trigger: out of memory\n");
		return KPT_EXIT_ERROR;
	}
	n = collect(dir, seq, t0, wait_ns, acks);
	if (n < 0) {
		free(acks);
		fprintf(stderr, "kptprof trigger: cannot read the answers in '%s' (the recording ended?)\n", dir);
		return KPT_EXIT_ERROR;
	}
	for (int i = 0; i < n && i < MAX_ACKS; i++)
		printf("pid %ld: capture from step %llu, %.0f ms after the request\n", acks[i].pid,
		       (unsigned long long)acks[i].first_step,
		       acks[i].time_ns > t0 ? (double)(acks[i].time_ns - t0) / 1e6 : 0.0);
	free(acks);
	if (n == 0) {
		fprintf(stderr, "kptprof trigger: no process began a capture within %.3g s (request %llu stays: the next "
			"step opening takes it)\n", (double)wait_ns / 1e9, (unsigned long long)seq);
		return KPT_EXIT_REGRESSION;
	}
	return KPT_EXIT_OK;
}
