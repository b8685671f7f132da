/* cmd_export.c - kptprof export: a recording as Chrome trace (Perfetto), CSV
 * or JSON. A regular output file appears only complete (lib: temp file +
 * rename); a FIFO or device is written in place. */
#include <stdio.h>
#include <string.h>

#include "kpt_cli.h"
#include "kpt_export.h"
#include "kpt_format.h"

int cmd_export(int argc, char **argv)
{
	const char *path = NULL, *out = NULL, *format = NULL;
	enum kpt_export_format fmt;
	struct kpt_file *f = NULL;
	struct kpt_diag d;
	int rc;

	for (int i = 1; i < argc; i++) {
		if (kpt_cli_is_help(argv[i]))
			return kpt_cli_help("export");
		if ((rc = kpt_cli_opt(argc, argv, &i, "--format", &format)) != 0 ||
		    (rc = kpt_cli_opt(argc, argv, &i, "-o", &out)) != 0 ||
		    (rc = kpt_cli_opt(argc, argv, &i, "--output", &out)) != 0) {
			if (rc < 0)
				return KPT_EXIT_ERROR;
		} else if (argv[i][0] == '-' && argv[i][1] != '\0') {
			return kpt_cli_usage_error("export", "unknown option '%s'", argv[i]);
		} else if (path) {
			return kpt_cli_usage_error("export", "one FILE only, got '%s' and '%s'", path, argv[i]);
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return kpt_cli_usage_error("export", "missing FILE (a .kpt recording)");
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
	if (rc >= 0 && strcmp(out, "-") == 0) {
		rc = kpt_export(f, fmt, stdout, &d);
		if (rc >= 0 && fflush(stdout) != 0)
			rc = kpt_diag_set(&d, KPT_E_IO, "cannot write the export to standard output");
	} else if (rc >= 0) {
		rc = kpt_export_to_path(f, fmt, out, &d);
	}
	kpt_file_close(f);
	return rc < 0 ? kpt_cli_fail(&d) : KPT_EXIT_OK;
}
