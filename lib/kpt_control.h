/* kpt_control.h - the control folder of a recording: how `kptprof trigger`
 * asks the processes of a `kptprof record --on-demand` (every rank of a
 * torchrun inherits the environment) to capture, and how they answer.
 *
 * `kptprof record` makes a private folder (mode 0700, owned by the user)
 * $XDG_RUNTIME_DIR/kptprof/<record pid>, else /tmp/kptprof-<uid>/<record
 * pid>, and names it in KPT_CONTROL_DIR. In it:
 * - "request": the last request, written whole (a temporary file renamed
 *   over it): "kptprof-request 1\nseq S\nsteps N\ntime T\n", S increasing
 *   from 1, T the request's CLOCK_REALTIME in ns.
 * - "ack.<pid>": one per traced process, its answer to the last request it
 *   took: "kptprof-ack 1\nseq S\nfirst_step F\ntime T\n", T CLOCK_REALTIME
 *   ns when its capture began.
 * Every function opens the folder without following a symbolic link and
 * refuses one not owned by the user or open to others, and files in it
 * that are links, not regular or longer than KPT_CONTROL_FILE_MAX bytes.
 * Two triggers at the same instant may write the same sequence number:
 * the processes then take one of them. Linux (procfs) only.
 */
#ifndef KPT_CONTROL_H
#define KPT_CONTROL_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"

#define KPT_ENV_CONTROL_DIR "KPT_CONTROL_DIR"
#define KPT_CONTROL_FILE_MAX 256      /* bytes of a request or an ack */

/* Makes the folder of recording record_pid (and its parent when missing)
 * and writes its path to out (cap bytes). A folder left by an earlier
 * process of the same pid is reused, its files removed. Returns 0, or
 * KPT_E_IO / KPT_E_PERM (a link, another owner, a file in the way, a
 * folder open to others) with d naming the path. */
int kpt_control_dir_make(char *out, size_t cap, long record_pid, struct kpt_diag *d);

/* Where the folders of this user's recordings are (out: cap bytes);
 * KPT_E_INVAL when it does not fit. */
int kpt_control_base(char *out, size_t cap, struct kpt_diag *d);

/* Writes a request for a capture of nsteps steps; *seq (may be NULL) its
 * sequence number. Returns 0 or a negative kpt_err. */
int kpt_control_request(const char *dir, uint64_t nsteps, uint64_t *seq, struct kpt_diag *d);

/* Cheap and never blocks (a sampler thread calls it every ~100 ms): 1 when
 * the request in dir is newer than *last_seq (then *last_seq, *nsteps and
 * *time_ns (may be NULL) are set), 0 when there is none or no newer one,
 * a negative kpt_err when the folder or the request is bad. */
int kpt_control_poll(const char *dir, uint64_t *last_seq, uint64_t *nsteps, uint64_t *time_ns);

/* Process pid answers request seq: its capture began at step first_step,
 * at time_ns (CLOCK_REALTIME). */
int kpt_control_ack(const char *dir, long pid, uint64_t seq, uint64_t first_step, uint64_t time_ns,
		    struct kpt_diag *d);

struct kpt_control_ack {
	long pid;
	uint64_t seq, first_step, time_ns;
};

/* The acknowledgements of request seq in dir, up to cap of them into out,
 * ordered by pid; returns their count (all of them, may exceed cap) or a
 * negative kpt_err. Bad ack files are skipped. */
int kpt_control_acks(const char *dir, uint64_t seq, struct kpt_control_ack *out, size_t cap,
		     struct kpt_diag *d);

/* Removes the request, the acks, temporary files of this protocol and the
 * folder (left when something else is in it). Returns 0 or KPT_E_IO. */
int kpt_control_remove(const char *dir);

/* The control folder named in the environment of process pid (out: cap
 * bytes). Only the caller's own processes: KPT_E_PERM for another user's,
 * KPT_E_NOTFOUND for none of that pid or no KPT_CONTROL_DIR in it. */
int kpt_control_dir_of(long pid, char *out, size_t cap, struct kpt_diag *d);

/* The recordings with a live control folder in kpt_control_base: their
 * pids into pids (cap), ascending; returns their count or a negative
 * kpt_err (0 when the base folder does not exist). On the way it removes
 * the folders of recordings whose pid no longer exists (killed before
 * they could): only folders of the user, not links, holding nothing but
 * this protocol's files (a recording in another pid namespace sharing the
 * base folder would look gone: the base is per user and per machine). */
int kpt_control_list(long *pids, size_t cap, struct kpt_diag *d);

/* CLOCK_REALTIME in ns. */
uint64_t kpt_control_now_ns(void);

#endif
