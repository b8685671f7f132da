/* test_control.c - the control folder of on-demand recordings
 * (lib/kpt_control.h): request, poll, acknowledgements, and a hostile
 * base folder (links, other owners, files in the way, huge or garbage
 * requests), a request written while another process polls. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kpt_control.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "/tmp/kpt_test_control.XXXXXX");
	assert_non_null(mkdtemp(tmpdir));
	setenv("XDG_RUNTIME_DIR", tmpdir, 1);
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void path_in(char *out, size_t cap, const char *rel)
{
	snprintf(out, cap, "%s/%s", tmpdir, rel);
}

static void write_file(const char *path, const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fwrite(text, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
}

static void test_request_poll_ack_round_trip(void **state)
{
	char dir[512], want[512];
	struct kpt_diag d;
	struct kpt_control_ack acks[4];
	struct stat st;
	uint64_t seq = 0, last = 0, n = 0, t = 0, t0 = kpt_control_now_ns();

	(void)state;
	kpt_diag_clear(&d);
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 4242, &d), 0);
	path_in(want, sizeof want, "kptprof/4242");
	assert_string_equal(dir, want);
	assert_int_equal(stat(dir, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(kpt_control_poll(dir, &last, &n, NULL), 0);      /* nothing yet */
	assert_int_equal(kpt_control_request(dir, 3, &seq, &d), 0);
	assert_int_equal(seq, 1);
	assert_int_equal(kpt_control_poll(dir, &last, &n, &t), 1);
	assert_int_equal(last, 1);
	assert_int_equal(n, 3);
	assert_true(t >= t0);
	assert_int_equal(kpt_control_poll(dir, &last, &n, NULL), 0);      /* not newer */
	assert_int_equal(kpt_control_request(dir, 5, &seq, &d), 0);
	assert_int_equal(seq, 2);
	assert_int_equal(kpt_control_poll(dir, &last, &n, NULL), 1);
	assert_int_equal(n, 5);
	assert_int_equal(kpt_control_ack(dir, 77, 2, 120, t + 1000, &d), 0);
	assert_int_equal(kpt_control_ack(dir, 55, 2, 118, t + 2000, &d), 0);
	assert_int_equal(kpt_control_ack(dir, 66, 1, 100, t, &d), 0);     /* an older request's */
	assert_int_equal(kpt_control_acks(dir, 2, acks, 4, &d), 2);
	assert_int_equal(acks[0].pid, 55);
	assert_int_equal(acks[0].first_step, 118);
	assert_int_equal(acks[1].pid, 77);
	assert_int_equal(acks[1].time_ns, t + 1000);
	assert_int_equal(kpt_control_acks(dir, 2, acks, 1, &d), 2);       /* counts past cap */
	/* a folder made again (a reused pid) starts empty */
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 4242, &d), 0);
	last = 0;
	assert_int_equal(kpt_control_poll(dir, &last, &n, NULL), 0);
	assert_int_equal(kpt_control_acks(dir, 2, acks, 4, &d), 0);
	assert_int_equal(kpt_control_remove(dir), 0);
	assert_int_equal(stat(dir, &st), -1);
	assert_int_equal(kpt_control_remove(dir), 0);                     /* gone already: fine */
}

static void test_remove_leaves_what_it_did_not_make(void **state)
{
	char dir[512], other[600];
	struct kpt_diag d;
	struct stat st;

	(void)state;
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 1, &d), 0);
	assert_int_equal(kpt_control_request(dir, 1, NULL, &d), 0);
	snprintf(other, sizeof other, "%s/notes.txt", dir);
	write_file(other, "mine", 4);
	assert_int_equal(kpt_control_remove(dir), 0);
	assert_int_equal(stat(other, &st), 0);
	snprintf(other, sizeof other, "%s/request", dir);
	assert_int_equal(stat(other, &st), -1);
}

static void test_hostile_base_folders(void **state)
{
	char base[512], dir[512], target[512];
	struct kpt_diag d;

	(void)state;
	path_in(base, sizeof base, "kptprof");
	path_in(target, sizeof target, "elsewhere");
	assert_int_equal(mkdir(target, 0700), 0);
	/* a link where the base folder should be */
	assert_int_equal(symlink(target, base), 0);
	kpt_diag_clear(&d);
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 9, &d), KPT_E_PERM);
	assert_non_null(strstr(d.msg, "is a symbolic link: refused"));
	assert_int_equal(unlink(base), 0);
	/* a file */
	write_file(base, "x", 1);
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 9, &d), KPT_E_PERM);
	assert_int_equal(unlink(base), 0);
	/* open to others */
	assert_int_equal(mkdir(base, 0700), 0);
	assert_int_equal(chmod(base, 0777), 0);
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 9, &d), KPT_E_PERM);
	assert_non_null(strstr(d.msg, "not private"));
	assert_int_equal(chmod(base, 0700), 0);
	/* another owner (as root: nobody's) */
	if (geteuid() == 0) {
		assert_int_equal(chown(base, 65534, 65534), 0);
		assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 9, &d), KPT_E_PERM);
		assert_int_equal(chown(base, 0, 0), 0);
	}
	/* the recording's own folder a link */
	path_in(dir, sizeof dir, "kptprof/9");
	assert_int_equal(symlink(target, dir), 0);
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 9, &d), KPT_E_PERM);
	path_in(dir, sizeof dir, "kptprof/9");
	kpt_diag_clear(&d);
	assert_int_equal(kpt_control_request(dir, 1, NULL, &d), KPT_E_PERM);
	assert_non_null(strstr(d.msg, "/kptprof/9' is a symbolic link: refused"));
	{
		uint64_t last = 0, n;

		assert_true(kpt_control_poll(dir, &last, &n, NULL) < 0);
	}
	assert_int_equal(unlink(dir), 0);
	/* fine now */
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 9, &d), 0);
	assert_int_equal(kpt_control_remove(dir), 0);
}

static void test_bad_requests_are_errors(void **state)
{
	char dir[512], req[600], target[600];
	struct kpt_diag d;
	uint64_t last = 0, n = 0;
	char *big = malloc(1 << 20);
	static const char *const garbage[] = {
		"", "hello\n", "kptprof-request 2\nseq 1\nsteps 1\ntime 1\n",
		"kptprof-request 1\nseq x\nsteps 1\ntime 1\n", "kptprof-request 1\nseq 1\nsteps 1\n",
		"kptprof-request 1\nseq 99999999999999999999999\nsteps 1\ntime 1\n",
		"kptprof-request 1\nseq 1\nsteps 1\ntime 1\nmore\n", "kptprof-request 1\nseq -1\nsteps 1\ntime 1\n",
	};

	(void)state;
	assert_non_null(big);
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 10, &d), 0);
	snprintf(req, sizeof req, "%s/request", dir);
	memset(big, 'k', 1 << 20);
	write_file(req, big, 1 << 20);
	free(big);
	assert_int_equal(kpt_control_poll(dir, &last, &n, NULL), KPT_E_FORMAT);
	for (size_t i = 0; i < sizeof garbage / sizeof *garbage; i++) {
		write_file(req, garbage[i], strlen(garbage[i]));
		assert_int_equal(kpt_control_poll(dir, &last, &n, NULL), KPT_E_FORMAT);
	}
	assert_int_equal(last, 0);
	/* a link or a FIFO as the request: refused without blocking */
	assert_int_equal(unlink(req), 0);
	snprintf(target, sizeof target, "%s/target", dir);
	write_file(target, "kptprof-request 1\nseq 1\nsteps 1\ntime 1\n", 39);
	assert_int_equal(symlink(target, req), 0);
	assert_true(kpt_control_poll(dir, &last, &n, NULL) < 0);
	assert_int_equal(unlink(req), 0);
	assert_int_equal(mkfifo(req, 0600), 0);
	assert_true(kpt_control_poll(dir, &last, &n, NULL) < 0);
	assert_int_equal(unlink(req), 0);
	/* a bad request is replaced by the next one */
	write_file(req, "junk", 4);
	assert_int_equal(kpt_control_request(dir, 2, NULL, &d), 0);
	assert_int_equal(kpt_control_poll(dir, &last, &n, NULL), 1);
	assert_int_equal(n, 2);
	/* garbage acks are skipped */
	snprintf(req, sizeof req, "%s/ack.12", dir);
	write_file(req, "garbage", 7);
	snprintf(req, sizeof req, "%s/ack.x", dir);
	write_file(req, "kptprof-ack 1\nseq 1\nfirst_step 1\ntime 1\n", 40);
	assert_int_equal(kpt_control_acks(dir, 1, NULL, 0, &d), 0);
	unlink(target);
	assert_int_equal(kpt_control_remove(dir), 0);
}

static void test_concurrent_request_and_poll(void **state)
{
	char dir[512];
	struct kpt_diag d;
	uint64_t last = 0, n = 0, seen = 0;
	pid_t child;
	int status;

	(void)state;
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, 11, &d), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		for (int i = 0; i < 300; i++)
			if (kpt_control_request(dir, (uint64_t)i + 1, NULL, NULL) < 0)
				_exit(1);
		_exit(0);
	}
	for (int i = 0; i < 3000 && last < 300; i++) {
		uint64_t before = last;
		int rc = kpt_control_poll(dir, &last, &n, NULL);

		assert_true(rc == 0 || rc == 1);       /* never a torn file */
		if (rc == 1) {
			assert_true(last > before);
			assert_int_equal(n, last);     /* the request i has seq i and i steps */
			seen++;
		}
	}
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	kpt_control_poll(dir, &last, &n, NULL);
	assert_int_equal(last, 300);
	assert_int_equal(kpt_control_remove(dir), 0);
}

static void test_dir_of_and_list(void **state)
{
	char dir[512], got[512], env[600];
	struct kpt_diag d;
	long pids[4];
	pid_t child;

	(void)state;
	assert_int_equal(kpt_control_dir_make(dir, sizeof dir, (long)getpid(), &d), 0);
	snprintf(env, sizeof env, KPT_ENV_CONTROL_DIR "=%s", dir);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char *envp[] = { env, NULL };

		execle("/bin/sleep", "sleep", "5", (char *)NULL, envp);
		_exit(127);
	}
	for (int i = 0; i < 200; i++) {             /* until the exec took */
		if (kpt_control_dir_of(child, got, sizeof got, NULL) == 0)
			break;
		usleep(10000);
	}
	assert_int_equal(kpt_control_dir_of(child, got, sizeof got, &d), 0);
	assert_string_equal(got, dir);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	kpt_diag_clear(&d);
	assert_int_equal(kpt_control_dir_of(child, got, sizeof got, &d), KPT_E_NOTFOUND);
	assert_int_equal(kpt_control_dir_of(1, got, sizeof got, &d) < 0, 1);   /* init has none */
	/* list: this process's folder, a stale one is left out */
	assert_int_equal(kpt_control_dir_make(got, sizeof got, 999999999, &d), 0);
	assert_int_equal(kpt_control_list(pids, 4, &d), 1);
	assert_int_equal(pids[0], getpid());
	kpt_control_remove(got);
	kpt_control_remove(dir);
	setenv("XDG_RUNTIME_DIR", "/nonexistent-kpt", 1);
	assert_int_equal(kpt_control_list(pids, 4, &d), 0);
	setenv("XDG_RUNTIME_DIR", tmpdir, 1);
}

/* A pid no process has: above /proc/sys/kernel/pid_max. */
static long dead_pid(void)
{
	FILE *f = fopen("/proc/sys/kernel/pid_max", "r");
	long max = 0;

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &max), 1);
	fclose(f);
	return max + 1;
}

static void test_list_sweeps_folders_of_dead_recordings(void **state)
{
	char live[512], dead[512], kept[512], path[700], target[512];
	long pids[4], gone = dead_pid();
	struct kpt_diag d;
	struct stat st;
	pid_t child;

	(void)state;
	/* a reaped child's pid: gone too */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(kpt_control_dir_make(live, sizeof live, (long)getpid(), &d), 0);
	/* killed with a request and an ack in it: removed */
	assert_int_equal(kpt_control_dir_make(dead, sizeof dead, gone, &d), 0);
	assert_int_equal(kpt_control_request(dead, 2, NULL, &d), 0);
	assert_int_equal(kpt_control_ack(dead, 77, 1, 5, 6, &d), 0);
	assert_int_equal(kpt_control_dir_make(path, sizeof path, (long)child, &d), 0);
	/* a folder holding something kptprof did not make: left whole */
	assert_int_equal(kpt_control_dir_make(kept, sizeof kept, gone + 1, &d), 0);
	assert_int_equal(kpt_control_request(kept, 2, NULL, &d), 0);
	snprintf(path, sizeof path, "%s/notes.txt", kept);
	write_file(path, "mine", 4);
	/* a link named as a dead pid, to a folder with a request: not followed */
	path_in(target, sizeof target, "elsewhere");
	assert_int_equal(mkdir(target, 0700), 0);
	snprintf(path, sizeof path, "%s/request", target);
	write_file(path, "x", 1);
	path_in(path, sizeof path, "kptprof/");
	snprintf(path + strlen(path), sizeof path - strlen(path), "%ld", gone + 2);
	assert_int_equal(symlink(target, path), 0);

	assert_int_equal(kpt_control_list(pids, 4, &d), 1);
	assert_int_equal(pids[0], getpid());
	assert_int_equal(stat(dead, &st), -1);                     /* swept */
	path_in(path, sizeof path, "kptprof/");
	snprintf(path + strlen(path), sizeof path - strlen(path), "%ld", (long)child);
	assert_int_equal(stat(path, &st), -1);                     /* swept */
	assert_int_equal(stat(live, &st), 0);                      /* running */
	snprintf(path, sizeof path, "%s/request", kept);
	assert_int_equal(stat(path, &st), 0);                      /* not ours alone */
	snprintf(path, sizeof path, "%s/request", target);
	assert_int_equal(stat(path, &st), 0);                      /* behind a link */
	path_in(path, sizeof path, "kptprof/");
	snprintf(path + strlen(path), sizeof path - strlen(path), "%ld", gone + 2);
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	/* another user's folder (as root: nobody's) stays */
	if (geteuid() == 0) {
		assert_int_equal(kpt_control_dir_make(dead, sizeof dead, gone, &d), 0);
		assert_int_equal(chown(dead, 65534, 65534), 0);
		assert_int_equal(kpt_control_list(pids, 4, &d), 1);
		assert_int_equal(stat(dead, &st), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_request_poll_ack_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_remove_leaves_what_it_did_not_make, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_base_folders, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_requests_are_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_concurrent_request_and_poll, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dir_of_and_list, setup, teardown),
		cmocka_unit_test_setup_teardown(test_list_sweeps_folders_of_dead_recordings, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
