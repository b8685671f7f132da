/* cmd_export.c - kptprof export: a recording as Chrome trace (Perfetto), CSV
 * or JSON. A regular output file appears only complete (lib: temp file +
 * rename); a FIFO or device is written in place. Output past 1 GiB is
 * noted on stderr (kpt_cli_watch_outputs: a 71 MB recording of 10 million
 * kernels exports several GB). */
#include <stdio.h>
#include <string.h>

#include "kpt_cli.h"
#include "kpt_export.h"
#include "kpt_format.h"
#include "kpt_progress.h"

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
	if ((rc = kpt_cli_outputs("export", &path, 1, &out, 1)) != 0)
		return rc;
	rc = kpt_file_open(path, &f, &d);
	kpt_progress_begin("export", 0, "kernels");
	if (rc >= 0 && strcmp(out, "-") == 0) {
		rc = kpt_export(f, fmt, stdout, &d);
		if (rc >= 0 && fflush(stdout) != 0)
			rc = kpt_diag_set(&d, KPT_E_IO, "cannot write the export to standard output");
	} else if (rc >= 0) {
		rc = kpt_export_to_path(f, fmt, out, &d);  /* a FIFO or device in place, else temp + rename */
	}
	kpt_progress_end();
	kpt_file_close(f);
	return rc < 0 ? kpt_cli_fail(&d) : KPT_EXIT_OK;
}
