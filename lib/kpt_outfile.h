/* kpt_outfile.h - output files that appear only complete and never follow
 * a planted link.
 *
 * Every file kptprof writes into a folder that someone else may also write
 * to (a plot folder, a report path, a baselines folder) goes through a
 * temporary "<path>.tmp<pid>" created new (O_CREAT | O_EXCL | O_NOFOLLOW:
 * a link or file planted under that name is never followed or reused),
 * then renamed over path: rename replaces a link at path itself, never
 * what it points to. A stale temporary of an earlier process with our pid
 * is removed first (it cannot be anyone's work in progress).
 *
 * Every stream made here says when it grows large: kpt_out_set_notice()
 * names a function that is called once per stream, before the write that
 * takes it past a size (kptprof: one line on stderr at 1 GiB, cli/main.c).
 * A small recording can make a large report or trace; writing it is right
 * when the data holds that much, doing it silently is not.
 */
#ifndef KPT_OUTFILE_H
#define KPT_OUTFILE_H

#include <stdint.h>
#include <stdio.h>

#include "kpt_err.h"

/* The notice of every stream of this file: notice(what, at) is called
 * once per stream, before the write that takes it past at bytes (what: the
 * path, or the name kpt_out_watch was given). at 0 or notice NULL: none
 * (the default). Set once at start, before any stream is made. */
void kpt_out_set_notice(void (*notice)(const char *what, uint64_t at), uint64_t at);

/* A stream that writes to fd (write(2), whole writes, EINTR retried),
 * counts it and gives the notice above. own_fd: fclose closes fd too.
 * Full buffering of bufsize bytes (0: line buffering). fileno() of it is -1.
 * NULL when out of memory. */
FILE *kpt_out_watch(int fd, const char *what, int own_fd, size_t bufsize);

/* Opens the temporary of path for writing ("w" semantics), mode 0666 less
 * the umask, as a kpt_out_watch stream named path. 0, or KPT_E_IO /
 * KPT_E_NOMEM with "cannot write 'PATH': ...". */
int kpt_out_create(const char *path, FILE **out, struct kpt_diag *d);
/* Closes fp (the stream of kpt_out_create(path)), checking every earlier
 * write, fsyncs it when sync, and renames it to path. On any failure the
 * temporary is removed and path is left as it was: KPT_E_IO. fp is closed
 * in every case. */
int kpt_out_publish(FILE *fp, const char *path, int sync, struct kpt_diag *d);
/* Closes fp and removes the temporary of path (an abandoned output);
 * accepts a NULL fp. */
void kpt_out_discard(FILE *fp, const char *path);

/* A stream that passes what is written to it on to inner and counts it:
 * a write that would take it past limit (0: none) fails (errno EFBIG) and
 * sets over, so an output gets a size budget. c lives as long as the
 * stream; close the stream (fclose) before inner. */
struct kpt_out_count {
	FILE *inner;
	uint64_t limit;
	uint64_t bytes;             /* written so far */
	int over;
};
FILE *kpt_out_counted(struct kpt_out_count *c); /* NULL: out of memory */

#endif
