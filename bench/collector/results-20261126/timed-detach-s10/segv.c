/* debug only: on SIGSEGV/SIGABRT print the thread's backtrace with each
 * frame's object and offset, then die with the signal */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <time.h>

static struct timespec t0;

static void h(int sig)
{
	void *bt[64];
	int n = backtrace(bt, 64);
	char line[512];

	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	snprintf(line, sizeof line, "SEGV-BT sig %d tid %ld at %.3f s\n", sig, (long)syscall(SYS_gettid),
		 (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9);
	write(2, line, strlen(line));
	for (int i = 0; i < n; i++) {
		Dl_info di;
		if (dladdr(bt[i], &di) && di.dli_fname) {
			snprintf(line, sizeof line, "SEGV-FR %s 0x%lx %s\n", di.dli_fname,
				 (unsigned long)((char *)bt[i] - (char *)di.dli_fbase), di.dli_sname ? di.dli_sname : "?");
		} else {
			snprintf(line, sizeof line, "SEGV-FR ? %p\n", bt[i]);
		}
		write(2, line, strlen(line));
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void init(void)
{
	clock_gettime(CLOCK_MONOTONIC, &t0);
	signal(SIGSEGV, h);
	signal(SIGBUS, h);
	signal(SIGABRT, h);
}
