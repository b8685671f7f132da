/* kpt-testrec FILE [KEY=VALUE...] - writes the small hand-made recording of
 * tests/unit/kpt_test_rec.h (known totals, two devices, two processes, 7
 * dropped records) for CLI tests that compare exact numbers; each
 * KEY=VALUE adds (or replaces) a meta key, as the collector's per-process
 * files carry them (tests/cli/test_record_merge_meta.sh). */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kpt_test_rec.h"

/* Rewrites path with the meta pairs of kv[0..n) added. */
static int add_meta(const char *path, char **kv, int n)
{
	char tmp[PATH_MAX];
	struct kpt_file *f = NULL;
	struct kpt_writer *w = NULL;
	struct kpt_diag d;
	int rc;

	snprintf(tmp, sizeof tmp, "%s.meta", path);
	if ((rc = kpt_file_open(path, &f, &d)) < 0 || (rc = kpt_writer_create(tmp, NULL, &w, &d)) < 0 ||
	    (rc = kpt_file_copy_into(f, w, KPT_NONE, 1, &d)) < 0)
		goto out;
	for (int i = 0; i < n && rc >= 0; i++) {
		char *eq = strchr(kv[i], '=');

		if (!eq) {
			rc = -1;
			break;
		}
		*eq = '\0';
		rc = kpt_writer_meta(w, kv[i], eq + 1, &d);
	}
	if (rc >= 0)
		rc = kpt_writer_commit(w, &d);
out:
	kpt_writer_destroy(w);
	kpt_file_close(f);
	if (rc >= 0 && rename(tmp, path) < 0)
		rc = -1;
	return rc;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: kpt-testrec FILE [KEY=VALUE...]\n");
		return 2;
	}
	if (write_test_recording(argv[1]) < 0 || (argc > 2 && add_meta(argv[1], argv + 2, argc - 2) < 0)) {
		fprintf(stderr, "kpt-testrec: cannot write '%s'\n", argv[1]);
		return 2;
	}
	return 0;
}
