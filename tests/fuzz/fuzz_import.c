/* fuzz_import.c - libFuzzer entry point for `kptprof import` of Chrome
 * traces (lib/kpt_import_kineto.c and the JSON reader under it) and of
 * Nsight Systems SQLite exports (lib/kpt_import_nsys.c): kpt_import sniffs
 * the format, so the seeds choose (tests/fuzz/corpus_import/,
 * tests/fuzz/corpus_import_nsys/).
 *
 * The input is written to a temporary file (the importer maps files) and
 * imported. Beyond "no crash, no sanitizer report" it checks the importer's
 * promises: a failed import leaves no output and a one-line message; a
 * successful one reads back with the counts the import reported and every
 * kernel's range inside the ranges; either way nothing is written beside
 * the input (no SQLite -journal, -wal or -shm). A broken promise aborts. Built as the
 * libFuzzer target fuzz_import (KPT_FUZZ=ON, clang) and, with
 * fuzz_replay.c, as the corpus replay test tests/fuzz/corpus_import/.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kpt_format.h"
#include "kpt_import.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PROMISE(cond)              \
	do {                       \
		if (!(cond))       \
			abort();   \
	} while (0)

static void check_output(const char *out, const struct kpt_import_stats *st)
{
	struct kpt_file *f;
	struct kpt_counts c;
	struct kpt_kernel_cursor *cur;
	const struct kpt_kernel *k;
	size_t n;
	int more;

	PROMISE(kpt_file_open(out, &f, NULL) == 0);
	PROMISE(kpt_file_counts(f, &c, NULL) == 0);
	PROMISE(c.kernels == st->kernels && c.memops == st->memops && c.ranges == st->ranges);
	PROMISE(c.runs == st->runs && st->runs >= 1 && c.devices == st->devices);
	PROMISE(kpt_kernel_cursor_create(f, &cur, NULL) == 0);
	while ((more = kpt_kernel_cursor_next(cur, &k, &n, NULL)) > 0)
		for (size_t i = 0; i < n; i++)
			PROMISE(k[i].range == KPT_NONE || k[i].range < c.ranges);
	PROMISE(more == 0);
	kpt_kernel_cursor_destroy(cur);
	kpt_file_close(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const beside[] = { "-journal", "-wal", "-shm" };
	char in[] = "/tmp/kpt-fuzz-import-XXXXXX", out[64];
	const char *paths[1] = { in };
	struct kpt_import_stats st;
	struct kpt_diag d;
	struct stat sb;
	int fd = mkstemp(in);

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(in);
		return 0;
	}
	close(fd);
	snprintf(out, sizeof out, "%s.kpt", in);
	kpt_diag_clear(&d);
	if (kpt_import(paths, 1, out, NULL, &st, &d) == 0) {
		check_output(out, &st);
	} else {
		PROMISE(stat(out, &sb) != 0);
		PROMISE(d.msg[0] && !strchr(d.msg, '\n'));
	}
	for (size_t i = 0; i < sizeof beside / sizeof beside[0]; i++) {
		snprintf(out, sizeof out, "%s%s", in, beside[i]);
		PROMISE(stat(out, &sb) != 0);
	}
	snprintf(out, sizeof out, "%s.kpt", in);
	unlink(out);
	unlink(in);
	return 0;
}
