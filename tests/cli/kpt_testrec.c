/* kpt-testrec FILE - writes the small hand-made recording of
 * tests/unit/kpt_test_rec.h (known totals, two devices, 7 dropped records)
 * for CLI tests that compare exact numbers. */
#include <stdio.h>

#include "kpt_test_rec.h"

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: kpt-testrec FILE\n");
		return 2;
	}
	if (write_test_recording(argv[1]) < 0) {
		fprintf(stderr, "kpt-testrec: cannot write '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
