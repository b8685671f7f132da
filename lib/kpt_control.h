/* kpt_control.h - how `kptprof trigger` asks the processes of a running
 * `kptprof record --on-demand` to capture (issue 37). No CUDA.
 *
 * `record` makes a private folder per recording (kpt_control_dir_make:
 * BASE/<record's pid>, BASE = $XDG_RUNTIME_DIR/kptprof when that is the
 * caller's own private folder, else /tmp/kptprof-<uid>; each level a
 * folder of the caller's, mode 0700, no symlink) and hands it to every
 * process it starts in KPT_CONTROL_DIR (every rank of a torchrun inherits
 * it). The trigger writes a request there (a sequence number and a step
 * count; temporary file and rename: a reader sees a whole one or none);
 * each collector polls it (its sampler thread, every 100 ms: one small
 * read) and, once the capture it armed has opened, writes its own
 * acknowledgement (pid, sequence, first step, when it opened), which the
 * trigger reads back. Files are small text lines; a reader takes at most
 * KPT_CONTROL_LINE_MAX bytes and refuses anything that does not parse.
 */
#ifndef KPT_CONTROL_H
#define KPT_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"

#define KPT_ENV_CONTROL_DIR "KPT_CONTROL_DIR"
#define KPT_CONTROL_LINE_MAX 128

/* The folder base (created, checked) into out; 0 or a negative kpt_err
 * with d naming the problem (not the caller's, a symlink, open to others). */
int kpt_control_base(char *out, size_t cap, struct kpt_diag *d);

/* Makes BASE/<pid> (a stale one of a dead recording with the same pid is
 * emptied) into out. */
int kpt_control_dir_make(char *out, size_t cap, uint32_t pid, struct kpt_diag *d);

/* Whether dir is a control folder the caller may use: a folder of the
 * caller's, mode 0700, not a symlink. 0 or KPT_E_INVAL with d saying why. */
int kpt_control_dir_check(const char *dir, struct kpt_diag *d);

/* Writes a request for nsteps steps; *seq receives its sequence number
 * (one more than the last request's). */
int kpt_control_request(const char *dir, uint64_t nsteps, uint64_t *seq, struct kpt_diag *d);

/* A request newer than *last_seq: 1 with *last_seq and *nsteps set, 0
 * none, -1 unreadable or malformed. Never blocks, never prints. */
int kpt_control_poll(const char *dir, uint64_t *last_seq, uint64_t *nsteps);

/* This process's acknowledgement of request seq: its capture opened at
 * step first_step, at opened_ns (CLOCK_REALTIME). 0 or -1. */
int kpt_control_ack(const char *dir, uint32_t pid, uint64_t seq, uint64_t first_step, uint64_t opened_ns);

struct kpt_control_ack {
	uint32_t pid;
	uint64_t seq, first_step, opened_ns;
};

/* The acknowledgements of request seq in dir, at most cap into out; *n
 * how many. 0 or a negative kpt_err. */
int kpt_control_acks(const char *dir, uint64_t seq, struct kpt_control_ack *out, size_t cap, size_t *n,
		     struct kpt_diag *d);

/* Removes the files this protocol makes in dir and dir itself. */
void kpt_control_remove(const char *dir);

#endif
