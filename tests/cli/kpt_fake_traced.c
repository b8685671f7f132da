/* kpt_fake_traced.c - a stand-in for a traced process in the CLI tests of
 * `kptprof trigger` (tests/cli/test_trigger.sh): polls the control folder
 * in $KPT_CONTROL_DIR as the collector's sampler thread does (every 10 ms)
 * and acknowledges each new request as if its capture began at step
 * 100 + the request's sequence number. Usage: kpt_fake_traced SECONDS
 * REQUESTS: exits 0 after REQUESTS requests, 1 after SECONDS without
 * them, 2 on an error. Writes "ready" to stdout once polling. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "kpt_control.h"

int main(int argc, char **argv)
{
	const char *dir = getenv(KPT_ENV_CONTROL_DIR);
	uint64_t last = 0, nsteps, t;
	double secs;
	int want, got = 0;

	if (argc != 3 || !dir)
		return 2;
	secs = atof(argv[1]);
	want = atoi(argv[2]);
	printf("ready\n");
	fflush(stdout);
	for (int i = 0; i < (int)(secs * 100) && got < want; i++) {
		int rc = kpt_control_poll(dir, &last, &nsteps, &t);

		if (rc < 0)
			return 2;
		if (rc == 1) {
			if (kpt_control_ack(dir, (long)getpid(), last, 100 + last, kpt_control_now_ns(), NULL) < 0)
				return 2;
			printf("request %llu: %llu steps\n", (unsigned long long)last, (unsigned long long)nsteps);
			fflush(stdout);
			got++;
		}
		usleep(10000);
	}
	if (got == want)
		sleep(1);           /* as a traced process goes on: the trigger reads the ack first */
	return got < want;
}
