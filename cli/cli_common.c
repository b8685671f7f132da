/* cli_common.c - printing diags, usage errors, help, version. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kpt_cli.h"
#include "kpt_format.h"

int kpt_cli_fail(const struct kpt_diag *d)
{
	fprintf(stderr, "kptprof: %s\n", d && d->msg[0] ? d->msg : "unknown error");
	if (d && d->hint[0])
		fprintf(stderr, "hint: %s\n", d->hint);
	return KPT_EXIT_ERROR;
}

int kpt_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kptprof %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nhint: 'kptprof %s --help' shows the options\n", cmd);
	return KPT_EXIT_ERROR;
}

int kpt_cli_help(const char *name)
{
	const struct kpt_cmd *cmd = kpt_cmd_find(name);

	if (!cmd)
		return kpt_cli_usage_error("help", "unknown command '%s'", name);
	printf("usage: %s\n\n%s\n", cmd->usage, cmd->summary);
	return KPT_EXIT_OK;
}

int kpt_cli_color(int fd)
{
	const char *no = getenv("NO_COLOR");

	return isatty(fd) && !(no && no[0]);
}

int cmd_help(int argc, char **argv)
{
	if (argc >= 2)
		return kpt_cli_help(argv[1]);
	printf("usage: kptprof COMMAND [ARGS]\n\n"
	       "kptprof records CUDA kernels, compares runs against per-GPU baselines\n"
	       "and fails a pull request when kernels got slower.\n\ncommands:\n");
	for (int i = 0; i < kpt_ncmds; i++)
		printf("  %-10s %s\n", kpt_cmds[i].name, kpt_cmds[i].summary);
	printf("\n'kptprof help COMMAND' or 'kptprof COMMAND --help' shows one command.\n");
	return KPT_EXIT_OK;
}

int cmd_version(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return kpt_cli_help("version");
	printf("kptprof %s (file format %d.%d)\n", KPT_VERSION, KPT_FORMAT_MAJOR, KPT_FORMAT_MINOR);
	return KPT_EXIT_OK;
}

int cmd_not_implemented(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return kpt_cli_help(argv[0]);
	fprintf(stderr, "kptprof: '%s' is not implemented yet\n", argv[0]);
	return KPT_EXIT_ERROR;
}
