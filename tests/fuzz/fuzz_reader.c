/* fuzz_reader.c - libFuzzer entry point for the .kpt reader.
 *
 * Opens the input as a file image in memory and walks everything a reader
 * can reach: counts, strings, every table, every kernel chunk. Beyond "no
 * crash, no sanitizer report", it checks the reader's promises: every row's
 * device and process index the reader accepted is inside the tables, every
 * accepted string id resolves. A broken promise aborts, so the fuzzer
 * reports it. Built as the libFuzzer target fuzz_reader (KPT_FUZZ=ON, clang)
 * and, with fuzz_replay.c, as the corpus replay test of normal builds.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_format.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PROMISE(cond)              \
	do {                       \
		if (!(cond))       \
			abort();   \
	} while (0)

static void check_str(const struct kpt_file *f, uint32_t id)
{
	PROMISE(kpt_file_string(f, id) != NULL);
}

static void walk_tables(struct kpt_file *f, size_t ndev, size_t nproc)
{
	const struct kpt_memop *mo;
	const struct kpt_range *rg;
	const struct kpt_event *ev;
	const struct kpt_env_sample *en;
	const struct kpt_counter *ct;
	const struct kpt_drop *dr;
	size_t n;

	if (!kpt_file_drops(f, &dr, &n, NULL))
		for (size_t i = 0; i < n; i++)
			PROMISE(dr[i].process < nproc && (dr[i].device == KPT_NONE || dr[i].device < ndev));
	if (!kpt_file_memops(f, &mo, &n, NULL))
		for (size_t i = 0; i < n; i++)
			PROMISE(mo[i].device < ndev && mo[i].process < nproc);
	if (!kpt_file_ranges(f, &rg, &n, NULL))
		for (size_t i = 0; i < n; i++) {
			PROMISE(rg[i].process < nproc);
			check_str(f, rg[i].name);
			check_str(f, rg[i].domain);
		}
	if (!kpt_file_events(f, &ev, &n, NULL))
		for (size_t i = 0; i < n; i++) {
			PROMISE(ev[i].process < nproc);
			check_str(f, ev[i].name);
		}
	if (!kpt_file_env(f, &en, &n, NULL))
		for (size_t i = 0; i < n; i++)
			PROMISE(en[i].device < ndev && en[i].process < nproc);
	if (!kpt_file_counters(f, &ct, &n, NULL))
		for (size_t i = 0; i < n; i++) {
			check_str(f, ct[i].kernel_name);
			check_str(f, ct[i].metric);
		}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kpt_file *f;
	struct kpt_kernel_cursor *c;
	struct kpt_counts counts;
	const struct kpt_meta_kv *kv;
	const struct kpt_device *dev;
	const struct kpt_process *proc;
	const struct kpt_kernel *rows;
	struct kpt_diag d;
	size_t n, ndev = 0, nproc = 0;
	int tables = 1;             /* devices and processes loaded */

	if (kpt_file_open_mem(data, size, "fuzz.kpt", &f, &d)) {
		PROMISE(d.msg[0] && !strchr(d.msg, '\n'));
		return 0;
	}
	kpt_file_counts(f, &counts, NULL);
	kpt_file_meta_get(f, "suite");
	if (!kpt_file_meta(f, &kv, &n, NULL))
		for (size_t i = 0; i < n; i++)
			PROMISE(kv[i].key && kv[i].value);
	if (!kpt_file_devices(f, &dev, &n, NULL)) {
		ndev = n;
		for (size_t i = 0; i < n; i++)
			PROMISE(dev[i].name && dev[i].slug && dev[i].uuid && dev[i].driver_string);
	} else {
		tables = 0;
	}
	if (!kpt_file_processes(f, &proc, &n, NULL))
		nproc = n;
	else
		tables = 0;
	if (kpt_file_load_strings(f, NULL) == 0) {
		/* Index promises hold for files whose tables load; a consumer
		 * stops at the error otherwise. */
		if (tables)
			walk_tables(f, ndev, nproc);
		if (!kpt_kernel_cursor_create(f, &c, NULL)) {
			while (kpt_kernel_cursor_next(c, &rows, &n, NULL) > 0)
				for (size_t i = 0; i < n; i++) {
					check_str(f, rows[i].name);
					PROMISE(!tables || (rows[i].device < ndev &&
							    rows[i].process < nproc));
				}
			kpt_kernel_cursor_destroy(c);
		}
	}
	kpt_file_close(f);
	return 0;
}
