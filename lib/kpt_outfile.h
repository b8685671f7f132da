/* kpt_outfile.h - every file kptprof writes: what an output path may be,
 * never an input of the command, appearing only complete, and no temporary
 * left behind by a killed process.
 *
 * An output named by the user (kpt_out_open, kpt_out_create) is, by what is
 * at the path now (lstat, never following a link):
 *   - absent or a regular file: written to a temporary "<path>.tmp-XXXXXX"
 *     in the same folder, created new (O_EXCL | O_NOFOLLOW, through a
 *     descriptor of the folder), then renamed over path: a reader sees the
 *     old file or the whole new one;
 *   - a character device or a FIFO (/dev/null, a pipe): opened and written
 *     in place, never renamed over (a rename would replace /dev/null for
 *     the whole machine with a regular file);
 *   - "-", or a symbolic link to this process's own standard output or
 *     error (/dev/stdout, /proc/self/fd/1): written in place to that
 *     descriptor; the link is left as it is;
 *   - any other symbolic link, a block device, a socket or a folder:
 *     refused with one line ("refusing to write 'X': it is a symbolic
 *     link"): kptprof does not follow a link it may have been handed, nor
 *     replace it with a file.
 * A file kptprof names itself inside a folder the user named (a plot, a
 * view's page: kpt_out_open_at) is always temporary + rename inside that
 * folder's descriptor: whatever was planted under the name, a link or a
 * FIFO included, is replaced, never followed or written into.
 *
 * Inputs: a command registers what it reads (kpt_out_input: files, folders
 * of sessions, a store's file) before it writes anything, and every output
 * that is one of them (same device and inode, or the same absolute path)
 * is refused: "refusing to write 'X': it is an input of this command".
 * kpt_out_check() says so up front, before a command prints or runs
 * anything; every open here checks again.
 *
 * Temporaries: each one is registered while it exists;
 * kpt_out_remove_temps() (async-signal-safe) removes them all, for a
 * signal handler of the program (kptprof: SIGINT, SIGTERM, SIGHUP).
 *
 * Every stream made here says when it grows large: kpt_out_set_notice()
 * names a function that is called once per stream, before the write that
 * takes it past a size (kptprof: one line on stderr at 1 GiB, cli/main.c).
 * A small recording can make a large report or trace; writing it is right
 * when the data holds that much, doing it silently is not.
 *
 * Not thread-safe: outputs are opened and closed by one thread at a time.
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

/* ---- inputs ---------------------------------------------------------------------------- */

/* Registers path as an input of this command: a file (by device and inode
 * when it exists, and by absolute path), or a folder: the folder and every
 * file below it, three levels deep (a baselines tree: GPU/suite/session).
 * 0, or KPT_E_NOMEM. */
int kpt_out_input(const char *path);
/* Forgets every input (tests; a program that runs several commands). */
void kpt_out_inputs_clear(void);
/* Whether path may be opened as an output (the rules above) and is not an
 * input: 0, or KPT_E_INVAL with "refusing to write 'PATH': ..." (and a
 * hint), or KPT_E_NOTFOUND / KPT_E_IO when its folder is missing or not
 * writable. Leaves path as it is: for a file to be replaced, the
 * temporary the write will use is created and removed (proof that the
 * folder takes a file, for root and on read-only mounts too). */
int kpt_out_check(const char *path, struct kpt_diag *d);
/* Whether files may be written into the folder dir (plots): an existing
 * folder that is writable, or a new one whose folder is (made by mkdir).
 * 0, or a negative code with "cannot write into ..." or "cannot create
 * ...". Writes nothing. */
int kpt_out_check_dir(const char *dir, struct kpt_diag *d);

/* ---- one output as a descriptor ---------------------------------------------------------- */

/* An output being written. fd is what to write to: the temporary, the
 * device or FIFO itself, or (KPT_OUT_SEEKABLE onto a stream) an anonymous
 * memory file copied to the stream at kpt_out_close. */
struct kpt_out {
	int fd;
	int dirfd;                  /* the folder of the temporary; -1 none */
	int target;                 /* the stream a memory file goes to; -1 none */
	int slot;                   /* of the temporary in the signal list; -1 none */
	char *name;                 /* the final name inside dirfd (temporary + rename) */
	char *tmp;                  /* the temporary's name inside dirfd; NULL: written in place */
	char *what;                 /* the path as named, for messages */
};

enum {
	KPT_OUT_SEEKABLE = 1 << 0,  /* the caller seeks and pwrites (a .kpt file) */
};

/* Opens the output path by the rules above, mode 0666 less the umask.
 * 0, or a negative code with "cannot write 'PATH': ..." or "refusing to
 * write 'PATH': ..." in d; o is then closed (fd -1). */
int kpt_out_open(const char *path, unsigned flags, struct kpt_out *o, struct kpt_diag *d);
/* The file name (no '/') that kptprof chose, inside the folder dir:
 * temporary + rename through the folder's descriptor, whatever is at
 * the name now. The same codes. */
int kpt_out_open_at(const char *dir, const char *name, unsigned flags, struct kpt_out *o,
		    struct kpt_diag *d);
/* Finishes o: a temporary is fsynced when sync and renamed over the name
 * (then the folder synced when sync); a memory file is copied to its
 * stream. Closes every descriptor. On failure the temporary is removed
 * and the path left as it was: KPT_E_IO. */
int kpt_out_close(struct kpt_out *o, int sync, struct kpt_diag *d);
/* Closes o and removes its temporary (an abandoned output); accepts an
 * o that is already closed. */
void kpt_out_abandon(struct kpt_out *o);

/* Removes every temporary that is being written now. Async-signal-safe:
 * for a handler of a fatal signal, which then re-raises it. */
void kpt_out_remove_temps(void);

/* ---- one output as a stream -------------------------------------------------------------- */

/* Opens path (kpt_out_open: "-" is standard output) as a kpt_out_watch
 * stream named path. 0, or the codes of kpt_out_open. */
int kpt_out_create(const char *path, FILE **out, struct kpt_diag *d);
/* The same for the file name inside folder dir (kpt_out_open_at); the
 * stream is named "dir/name". */
int kpt_out_create_at(const char *dir, const char *name, FILE **out, struct kpt_diag *d);
/* Closes fp (a stream of kpt_out_create*), checking every earlier write,
 * and finishes its output (kpt_out_close). path: as given to create, for
 * messages only. fp is closed in every case. */
int kpt_out_publish(FILE *fp, const char *path, int sync, struct kpt_diag *d);
/* Closes fp and removes its temporary (an abandoned output); accepts a
 * NULL fp. */
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
