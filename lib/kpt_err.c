/* kpt_err.c - diagnostics (see kpt_err.h). */
#include "kpt_err.h"

#include <stdio.h>
#include <string.h>

static void mark_cut(char *buf, size_t cap, int want)
{
	if (want >= 0 && (size_t)want >= cap && cap > 4)
		memcpy(buf + cap - 4, "...", 4);
}

int kpt_diag_vset(struct kpt_diag *d, enum kpt_err code, const char *fmt, va_list ap)
{
	if (!d)
		return code;
	d->code = code;
	d->hint[0] = '\0';
	mark_cut(d->msg, sizeof d->msg, vsnprintf(d->msg, sizeof d->msg, fmt, ap));
	return code;
}

int kpt_diag_set(struct kpt_diag *d, enum kpt_err code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	kpt_diag_vset(d, code, fmt, ap);
	va_end(ap);
	return code;
}

int kpt_diag_hint(struct kpt_diag *d, const char *fmt, ...)
{
	va_list ap;

	if (!d)
		return 0;
	va_start(ap, fmt);
	mark_cut(d->hint, sizeof d->hint, vsnprintf(d->hint, sizeof d->hint, fmt, ap));
	va_end(ap);
	return d->code;
}

void kpt_diag_clear(struct kpt_diag *d)
{
	if (d) {
		d->code = KPT_OK;
		d->msg[0] = '\0';
		d->hint[0] = '\0';
	}
}

static const char *const err_names[] = {
	[0] = "ok",
	[-KPT_E_NOMEM] = "nomem",
	[-KPT_E_IO] = "io",
	[-KPT_E_FORMAT] = "format",
	[-KPT_E_VERSION] = "version",
	[-KPT_E_INVAL] = "inval",
	[-KPT_E_NOTFOUND] = "notfound",
	[-KPT_E_UNSUPPORTED] = "unsupported",
	[-KPT_E_CUDA] = "cuda",
	[-KPT_E_CUPTI] = "cupti",
	[-KPT_E_NVML] = "nvml",
	[-KPT_E_NODEV] = "nodev",
	[-KPT_E_PERM] = "perm",
	[-KPT_E_BUSY] = "busy",
	[-KPT_E_MISMATCH] = "mismatch",
};

const char *kpt_err_name(int code)
{
	int i = -code;

	if (i < 0 || (size_t)i >= sizeof err_names / sizeof err_names[0] || !err_names[i])
		return "unknown";
	return err_names[i];
}
