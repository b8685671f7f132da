/* cmd_export.c - kptprof export: a recording as Chrome trace (Perfetto), CSV
 * or JSON. A regular output file appears only complete (lib: temp file +
 * rename); a FIFO or device is written in place. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kpt_cli.h"
#include "kpt_export.h"
#include "kpt_format.h"
#include "kpt_outfile.h"
#include "kpt_progress.h"

/* Output past this many bytes gets a one-line notice on stderr before the
 * byte that crosses it is written (KPT_NOTICE_BYTES overrides it, for
 * tests). A 71 MB recording of 10 million kernels exports several GB. */
#define NOTICE_BYTES (UINT64_C(1) << 30)

static void say_notice(void *ctx, uint64_t at)
{
	char sz[32];

	kpt_progress_clear();
	fprintf(stderr, "kptprof export: note: '%s' passes %s and keeps growing (every kernel is a row or event)\n",
		(const char *)ctx, kpt_cli_fmt_bytes((double)at, sz, sizeof sz));
}

/* Exports f into out through a counting stream. */
static int export_counted(struct kpt_file *f, enum kpt_export_format fmt, FILE *out, const char *what,
			  struct kpt_diag *d)
{
	const char *env = getenv("KPT_NOTICE_BYTES");
	struct kpt_out_count c = { .inner = out, .notice_at = NOTICE_BYTES, .notice = say_notice, .ctx = (void *)what };
	FILE *w;
	int rc;

	if (env && env[0])
		c.notice_at = strtoull(env, NULL, 10);
	if (!(w = kpt_out_counted(&c)))
		return kpt_diag_set(d, KPT_E_NOMEM, "out of memory");
	rc = kpt_export(f, fmt, w, d);
	if ((fflush(w) != 0 || ferror(w)) && rc >= 0)
		rc = kpt_diag_set(d, KPT_E_IO, "cannot write '%s': %s", what, strerror(errno ? errno : EIO));
	fclose(w);
	return rc;
}

struct export_args {
	const char *format, *out;
};

const struct kpt_opt kpt_export_opts[] = {
	KPT_OPT_OPERAND("FILE", "a .kpt recording"),
	KPT_OPT_STRING(0, "format", "chrome|csv|json", struct export_args, format,
		       "Chrome trace (Perfetto), CSV of kernels and memops, or JSON of every record (required)"),
	KPT_OPT_STRING('o', "output", "OUT", struct export_args, out,
		       "file to write, '-' for standard output; must not be FILE (required)"),
	KPT_OPT_END,
};

int cmd_export(int argc, char **argv)
{
	struct export_args a = { 0 };
	const char *path = NULL, *out, *format;
	enum kpt_export_format fmt;
	struct kpt_file *f = NULL;
	struct kpt_diag d;
	struct stat st;
	int rc;

	if ((rc = kpt_opt_parse_file("export", kpt_export_opts, &a, argc, argv, &path)) != KPT_OPT_GO)
		return rc;
	out = a.out;
	format = a.format;
	if (!format)
		return kpt_cli_usage_error("export", "missing --format chrome|csv|json");
	if (!out || !out[0])
		return kpt_cli_usage_error("export", "missing -o OUT (the file to write; '-' for standard output)");
	kpt_diag_clear(&d);
	if (kpt_export_format_parse(format, &fmt, &d) < 0)
		return kpt_cli_usage_error("export", "bad value '%s' for --format: expected chrome|csv|json", format);
	if (kpt_cli_same_file(path, out))
		return kpt_cli_usage_error("export", "'%s' is the input recording: choose another -o", out);
	rc = kpt_file_open(path, &f, &d);
	kpt_progress_begin("export", 0, "kernels");
	if (rc >= 0 && strcmp(out, "-") == 0) {
		rc = export_counted(f, fmt, stdout, "standard output", &d);
		if (rc >= 0 && fflush(stdout) != 0)
			rc = kpt_diag_set(&d, KPT_E_IO, "cannot write the export to standard output");
	} else if (rc >= 0 && (stat(out, &st) != 0 || S_ISREG(st.st_mode))) {
		FILE *fp;

		/* a regular file appears only complete (kpt_outfile.h) */
		if ((rc = kpt_out_create(out, &fp, &d)) >= 0) {
			rc = export_counted(f, fmt, fp, out, &d);
			if (rc < 0)
				kpt_out_discard(fp, out);
			else
				rc = kpt_out_publish(fp, out, 1, &d);
		}
	} else if (rc >= 0) {
		rc = kpt_export_to_path(f, fmt, out, &d);  /* a FIFO or device: in place */
	}
	kpt_progress_end();
	kpt_file_close(f);
	return rc < 0 ? kpt_cli_fail(&d) : KPT_EXIT_OK;
}
