/* cmd_trigger.c - `kptprof trigger`: asks a running `kptprof record
 * --on-demand` to capture its next steps now, in every process it traces
 * (every rank of a torchrun), and waits for each to say that its capture
 * opened (lib/kpt_control.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "kpt_cli.h"
#include "kpt_control.h"

#define NOT_GIVEN UINT64_MAX
#define KPT_TRIGGER_ACKS 1024

struct trigger_args {
	uint64_t steps;
	const char *wait;
	int list;
};

const struct kpt_opt kpt_trigger_opts[] = {
	KPT_OPT_U64(0, "steps", "N", struct trigger_args, steps, 1, 1000000,
		    "steps to capture from the next step opening in each process (default: record's --sample-steps, 1)"),
	KPT_OPT_STRING(0, "wait", "S", struct trigger_args, wait,
		       "seconds to wait for every process to say its capture opened (default 5)"),
	KPT_OPT_FLAG(0, "list", struct trigger_args, list, "list the recordings running on demand, and exit"),
	KPT_OPT_END,
};

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The value of KPT_CONTROL_DIR in process pid's environment into out: 0,
 * or -1 when it has none or cannot be read (not the caller's). */
static int env_of(long pid, char *out, size_t cap)
{
	char p[64], buf[65536];
	const char *key = KPT_ENV_CONTROL_DIR "=";
	ssize_t n;
	int fd;

	snprintf(p, sizeof p, "/proc/%ld/environ", pid);
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (char *s = buf; s < buf + n; s += strlen(s) + 1)
		if (strncmp(s, key, strlen(key)) == 0 && strlen(s + strlen(key)) < cap) {
			strcpy(out, s + strlen(key));
			return 0;
		}
	return -1;
}

/* The command line of pid (its first word), for --list. */
static void cmd_of(long pid, char *out, size_t cap)
{
	char p[64];
	ssize_t n;
	int fd;

	snprintf(p, sizeof p, "/proc/%ld/cmdline", pid);
	out[0] = '\0';
	if ((fd = open(p, O_RDONLY | O_CLOEXEC)) < 0)
		return;
	n = read(fd, out, cap - 1);
	close(fd);
	if (n < 0)
		n = 0;
	out[n] = '\0';
	for (ssize_t i = 0; i + 1 < n; i++)
		if (!out[i])
			out[i] = ' ';
}

/* The running recordings: the folders BASE/<pid> whose pid lives. Returns
 * how many (at most cap pids into pids). */
static size_t running(const char *base, long *pids, size_t cap)
{
	DIR *dp = opendir(base);
	struct dirent *e;
	size_t n = 0;

	if (!dp)
		return 0;
	while ((e = readdir(dp)) && n < cap) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (e->d_name[0] >= '1' && e->d_name[0] <= '9' && !*end && kill((pid_t)pid, 0) == 0)
			pids[n++] = pid;
	}
	closedir(dp);
	return n;
}

int cmd_trigger(int argc, char **argv)
{
	struct trigger_args a = { .steps = NOT_GIVEN };
	char base[4096], dir[4096], what[512];
	struct kpt_control_ack *acks;
	struct kpt_diag d;
	long pids[64], pid = 0;
	uint64_t wait_ns = 5000000000ull, t0, t_ack = 0, seq = 0;
	size_t nrun, nack = 0;
	int n, rc;

	if ((rc = kpt_opt_parse("trigger", kpt_trigger_opts, &a, argc, argv, &n, NULL)) != KPT_OPT_GO)
		return rc;
	if (n > 1)
		return kpt_cli_usage_error("trigger", "takes one PID, got '%s' too", argv[2]);
	if (n == 1) {
		char *end;

		errno = 0;
		pid = strtol(argv[1], &end, 10);
		if (errno || *end || pid <= 0)
			return kpt_cli_usage_error("trigger", "bad PID '%s': want a process id", argv[1]);
	}
	if (a.wait) {
		char *end;
		double s = strtod(a.wait, &end);

		if (*end || !(s >= 0 && s <= 3600))
			return kpt_cli_usage_error("trigger", "bad --wait '%s': want seconds, 0 to 3600", a.wait);
		wait_ns = (uint64_t)(s * 1e9);
	}
	kpt_diag_clear(&d);
	if (kpt_control_base(base, sizeof base, &d) < 0)
		return kpt_cli_fail(&d);
	nrun = running(base, pids, sizeof pids / sizeof pids[0]);
	if (a.list) {
		if (!nrun)
			printf("no recording runs on demand (kptprof record --on-demand -- CMD starts one)\n");
		for (size_t i = 0; i < nrun; i++) {
			cmd_of(pids[i], what, sizeof what);
			printf("%-8ld %s\n", pids[i], what);
		}
		return KPT_EXIT_OK;
	}
	if (!pid) {
		if (!nrun)
			return kpt_cli_usage_error("trigger", "no recording runs on demand "
						   "(kptprof record --on-demand -- CMD starts one)");
		if (nrun > 1)
			return kpt_cli_usage_error("trigger", "%zu recordings run on demand: give the PID of one "
						   "(kptprof trigger --list)", nrun);
		pid = pids[0];
	}
	/* the record process's own folder, else a traced process's variable */
	if (snprintf(dir, sizeof dir, "%s/%ld", base, pid) >= (int)sizeof dir ||
	    (access(dir, F_OK) != 0 && env_of(pid, dir, sizeof dir) < 0)) {
		if (kill((pid_t)pid, 0) != 0 && errno == ESRCH)
			return kpt_cli_usage_error("trigger", "no process %ld", pid);
		return kpt_cli_usage_error("trigger", "process %ld is not recorded on demand "
					   "(kptprof record --on-demand -- CMD), or not yours", pid);
	}
	if (kpt_control_dir_check(dir, &d) < 0)
		return kpt_cli_fail(&d);
	t0 = wall_ns();
	if (kpt_control_request(dir, a.steps == NOT_GIVEN ? 0 : a.steps, &seq, &d) < 0)
		return kpt_cli_fail(&d);
	if (!(acks = calloc(KPT_TRIGGER_ACKS, sizeof *acks))) {
		fprintf(stderr, "kptprof: out of memory\n");
		return KPT_EXIT_ERROR;
	}
	/* until no process answered for 250 ms after the last one that did
	 * (the ranks open their captures within a step of each other), or the
	 * wait is over */
	for (size_t last = 0;;) {
		struct timespec nap = { 0, 20 * 1000 * 1000 };
		uint64_t now;

		if (kpt_control_acks(dir, seq, acks, KPT_TRIGGER_ACKS, &nack, &d) < 0) {
			free(acks);
			return kpt_cli_fail(&d);
		}
		now = wall_ns();
		if (nack != last) {
			last = nack;
			t_ack = now;
		}
		if ((nack && now - t_ack > 250000000ull) || now - t0 >= wait_ns)
			break;
		nanosleep(&nap, NULL);
	}
	for (size_t i = 0; i < nack; i++)
		printf("pid %-8u step %-10" PRIu64 " opened %.1f ms after the request\n", acks[i].pid,
		       acks[i].first_step,
		       acks[i].opened_ns > t0 ? (double)(acks[i].opened_ns - t0) / 1e6 : 0.0);
	free(acks);
	if (!nack) {
		fprintf(stderr, "kptprof trigger: no process opened a capture within %.1f s (request %" PRIu64
			" stays: the next step opening takes it)\n", (double)wait_ns / 1e9, seq);
		return KPT_EXIT_REGRESSION; /* 1: asked, nobody answered */
	}
	return KPT_EXIT_OK;
}
