/* kpt_err.h - error codes and diagnostics shared by every kptprof library.
 *
 * Contract: library functions never print and never exit. They return 0 (or a
 * count) on success and a negative enum kpt_err on failure, and fill an
 * optional struct kpt_diag with a one-line message for the user (the problem
 * first, the subject in quotes) and an optional hint. Only cli/ prints a diag
 * and chooses the exit status.
 */
#ifndef KPT_ERR_H
#define KPT_ERR_H

#include <stdarg.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kpt_err {
	KPT_OK = 0,
	KPT_E_NOMEM = -1,       /* allocation failed */
	KPT_E_IO = -2,          /* open/read/write/rename failed (errno text in msg) */
	KPT_E_FORMAT = -3,      /* not a .kpt file, truncated or corrupt */
	KPT_E_VERSION = -4,     /* written by a newer major format version */
	KPT_E_INVAL = -5,       /* bad argument or option value */
	KPT_E_NOTFOUND = -6,    /* named thing (file, workload, metric, key) absent */
	KPT_E_UNSUPPORTED = -7, /* valid request this build or GPU cannot do */
	KPT_E_CUDA = -8,        /* a CUDA runtime/driver call failed */
	KPT_E_CUPTI = -9,       /* a CUPTI call failed */
	KPT_E_NVML = -10,       /* an NVML call failed */
	KPT_E_NODEV = -11,      /* no GPU or no driver */
	KPT_E_PERM = -12,       /* insufficient privileges (profiling restricted) */
	KPT_E_BUSY = -13,       /* another profiler is already attached */
	KPT_E_MISMATCH = -14,   /* inputs cannot be compared (GPU model, suite) */
};

/* Fixed-size on purpose: a diag must be fillable when malloc has failed.
 * Longer messages are cut and end in "..."; names in messages should be
 * shortened by the caller (kpt_diag_set does not know what is a name). */
struct kpt_diag {
	enum kpt_err code;
	char msg[1024];
	char hint[512];
};

/* Sets d (which may be NULL) and returns code, so callers can write
 * `return kpt_diag_set(d, KPT_E_IO, "cannot open '%s': %s", path, strerror(errno));` */
int kpt_diag_set(struct kpt_diag *d, enum kpt_err code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
int kpt_diag_vset(struct kpt_diag *d, enum kpt_err code, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));
/* Adds or replaces the hint; returns d->code (0 when d is NULL). */
int kpt_diag_hint(struct kpt_diag *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void kpt_diag_clear(struct kpt_diag *d);

/* Short stable name of a code ("format", "io", ...); never NULL. */
const char *kpt_err_name(int code);

#ifdef __cplusplus
}
#endif

#endif
