/* kpt_baseline.h - the baseline a recording is gated against, as a library:
 * gate, view and `kptprof baseline` open one here and only parse and print.
 *
 * A baseline is the sessions of one (GPU model, suite). Two kinds sit
 * behind one small ops table (kpt_baseline_ops in kpt_baseline_private.h),
 * one file each:
 *
 *   folder   the .kpt files of DIR/<gpu-slug>/<suite>/, one recording per session
 *            (machine and boot), as `baseline update` keeps them; the older
 *            one-file layout DIR/<gpu-slug>/<suite>.kpt still reads as one
 *            session (kpt_baseline_folder.c)
 *   history  the history store (analyzer/history): the newest N sessions of
 *            suite, GPU model and branch, as one diff side
 *            (kpt_baseline_history.c)
 *
 * The folder is listed once, at open; the session list, the newest
 * session's idle gap and the diff's input all come from that one listing.
 * Reading follows links (a baselines folder may be put together with
 * them); writing never does.
 *
 * Adding a session (kpt_baseline_add, kpt_baseline_update.c) works on
 * directory descriptors from the baselines folder down: each level is
 * opened with O_NOFOLLOW | O_DIRECTORY and every create, rename and delete
 * is relative to the descriptor of its folder, so a level swapped for a
 * symbolic link, before or during the update, never leads a write or a
 * delete out of the baselines folder. Session names never collide: a name
 * taken by another session gets a suffix; only a recording of the same
 * session (same GPU UUID and boot) replaces one, and a byte-identical copy
 * of a kept session is refused as a duplicate (nothing written).
 *
 * Errors: negative kpt_err and a one-line diag; nothing prints.
 */
#ifndef KPT_BASELINE_H
#define KPT_BASELINE_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_err.h"

struct kpt_diff_side;

/* Where a baseline lives. db set: the history store; else the folder dir. */
struct kpt_baseline_where {
	const char *dir;            /* baselines folder (folder kind) */
	const char *db;             /* history store URL or SQLite path; NULL: folder */
	const char *branch;         /* history: the sessions' branch, NULL "main" */
	uint32_t nsessions;         /* history: the newest N, 0 KPT_HISTORY_GATE_SESSIONS */
};

struct kpt_baseline;

/* Opens the baseline of (slug, suite) at w. For a folder, slug and suite
 * must be path components (kpt_baseline_check_name). KPT_E_NOTFOUND when there is none
 * ("no baseline for GPU 'S' and suite 'U' (looked for ...)"; the caller
 * adds the hint saying how to make one for its case); a folder holding no
 * session is KPT_E_NOTFOUND too. Cost: one listing of the folder, or one
 * query of the store. Free with kpt_baseline_close. */
int kpt_baseline_open(const char *slug, const char *suite, const struct kpt_baseline_where *w,
		      struct kpt_baseline **out, struct kpt_diag *d);
void kpt_baseline_close(struct kpt_baseline *b); /* accepts NULL */
/* The folder of (slug, suite) under dir, DIR/<slug>/<suite>, into buf:
 * 0, or KPT_E_INVAL when it does not fit in cap (buf then cut short). */
int kpt_baseline_path(const char *dir, const char *slug, const char *suite, char *buf, size_t cap);

/* What the "vs baseline ..." line says. Strings are b's. */
struct kpt_baseline_desc {
	const char *kind;           /* "folder", "history" */
	const char *slug, *suite;   /* as opened */
	const char *where;          /* the folder (or the one file), or the store (password hidden) */
	const char *backend;        /* history: "sqlite" or "postgresql"; folder: NULL */
	const char *branch;         /* history only */
	size_t sessions;
	uint64_t runs;              /* history: runs stored; folder: 0 (not counted: the diff reads them) */
	/* history: the first and last session's commit and time added ("" unknown) */
	const char *first_commit, *last_commit, *first_added, *last_added;
	int one_file;               /* folder: the older one-file layout */
};
void kpt_baseline_describe(const struct kpt_baseline *b, struct kpt_baseline_desc *out);

/* The session files of a folder baseline, oldest first (names start with
 * the recording's time), as listed at open: the diff's input. NULL and 0
 * for the history kind. The array and strings are b's. */
const char *const *kpt_baseline_files(const struct kpt_baseline *b, size_t *n);

/* The history kind's diff side (kpt_diff_cli_run_side); NULL for a folder. */
const struct kpt_diff_side *kpt_baseline_side(const struct kpt_baseline *b);
/* The history kind's open store (read-only; b's: view reads the keys'
 * history from it too, no second connection); NULL for a folder. */
struct kpt_history;
struct kpt_history *kpt_baseline_store(const struct kpt_baseline *b);

/* The idle gap (meta "settle_us") the newest session was recorded with:
 * 0 for a session without the key (recorded before the gap existed), -1
 * when unknown (the store does not keep it; the session cannot be read). */
long kpt_baseline_settle_us(struct kpt_baseline *b);

/* Path components taken from a recording or an option (a GPU slug, a
 * suite), by lib's one rule (kpt_project_name_ok: 1 to 128 bytes of
 * [a-z0-9._-], not starting with '.', holding no ".."). 0, or KPT_E_INVAL with a diag naming what
 * ("GPU slug"), where it came from (src) and the value. */
#define KPT_BASELINE_NAME_MAX 128
int kpt_baseline_check_name(const char *what, const char *value, const char *src, struct kpt_diag *d);

/* ---- adding a session (folder kind) ---- */

enum kpt_baseline_note_kind { KPT_BASELINE_NOTE_INFO, KPT_BASELINE_NOTE_WARNING };

struct kpt_baseline_add_opts {
	const char *suite;          /* NULL: the recording's meta "suite" (required then) */
	unsigned long keep;         /* sessions kept, 0: KPT_BASELINE_KEEP */
	/* each thing done on the way, one line (moved, replaced, pruned,
	 * warnings); NULL: not told */
	void (*note)(void *ctx, enum kpt_baseline_note_kind kind, const char *text);
	void *ctx;
};
#define KPT_BASELINE_KEEP 16

struct kpt_baseline_add_result {
	char path[4096 + 320];      /* the session file written */
	char folder[4096];          /* the suite's folder */
	char slug[KPT_BASELINE_NAME_MAX + 1], suite[KPT_BASELINE_NAME_MAX + 1];
	size_t sessions;            /* sessions the folder holds after */
	uint32_t runs;              /* runs of the recording */
	int duplicate;              /* rec was already held: path names that file */
};

/* Adds recording rec (>= 2 runs, read whole first: a damaged file changes
 * nothing) as a session of dir/<its gpu-slug>/<suite>/: written under a
 * new name (<time>-<uuid8>.kpt, a suffix when taken; never over another
 * session), the older file of the same session (GPU UUID and boot both
 * known and equal) then removed, an older one-file baseline moved in as a
 * session, and the newest keep session files kept (only files named as
 * sessions are pruned). A byte-identical copy of a kept session is not
 * added (r->duplicate, a note, 0; the keep policy still applies). A level of the path that is not a
 * plain folder (a symbolic link) is KPT_E_IO, nothing written. */
int kpt_baseline_add(const char *dir, const char *rec, const struct kpt_baseline_add_opts *o,
		     struct kpt_baseline_add_result *r, struct kpt_diag *d);

/* ---- listing every baseline under a folder ---- */

/* The session files of every baseline under dir (the .kpt files of DIR/<slug>/<suite>/
 * and DIR/<slug>/<suite>.kpt), sorted by path. *paths (malloc'd array of malloc'd strings; free
 * with kpt_baseline_paths_free). A dir that does not exist holds none (0, *n = 0); KPT_E_IO when it cannot be read. */
int kpt_baseline_list_all(const char *dir, char ***paths, size_t *n, struct kpt_diag *d);
void kpt_baseline_paths_free(char **paths, size_t n);

#endif
