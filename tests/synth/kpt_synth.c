/* kpt-synth - writes a realistic synthetic .kpt recording (see kpt_synth.h).
 * For tests and benchmarks; not installed. Exit 0 on success, 2 on bad
 * options or a failed write. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_synth.h"

static const char usage[] =
	"usage: kpt-synth -o FILE [--runs M] [--iterations N] [--kernels-per-iter K]\n"
	"                 [--names K] [--noise PCT] [--within PCT] [--slow SUBSTR:PCT]...\n"
	"                 [--gpu NAME] [--suite NAME] [--command CMD] [--meta KEY=VALUE]...\n"
	"                 [--seed S] [--total-kernels N] [--machine PCT:SEED] [--stable SUBSTR]\n"
	"                 [--probes COPY:BF16:FP8:SM] [--probe-where TEXT] [--follow SUBSTR:PROBE]\n";

enum opt_id {
	OPT_RUNS = 256, OPT_ITER, OPT_KPI, OPT_NAMES, OPT_NOISE, OPT_WITHIN, OPT_SLOW,
	OPT_GPU, OPT_SUITE, OPT_COMMAND, OPT_META, OPT_SEED, OPT_TOTAL, OPT_HELP, OPT_MACHINE, OPT_STABLE,
	OPT_PROBES, OPT_PROBE_WHERE, OPT_FOLLOW,
};

/* --follow's probe names, in kpt_synth_opts.probes order. */
static const char *const probe_names[4] = { "copy", "bf16", "fp8", "sm" };

static const struct option longopts[] = {
	{ "runs", required_argument, NULL, OPT_RUNS },
	{ "iterations", required_argument, NULL, OPT_ITER },
	{ "kernels-per-iter", required_argument, NULL, OPT_KPI },
	{ "names", required_argument, NULL, OPT_NAMES },
	{ "noise", required_argument, NULL, OPT_NOISE },
	{ "within", required_argument, NULL, OPT_WITHIN },
	{ "slow", required_argument, NULL, OPT_SLOW },
	{ "gpu", required_argument, NULL, OPT_GPU },
	{ "suite", required_argument, NULL, OPT_SUITE },
	{ "command", required_argument, NULL, OPT_COMMAND },
	{ "meta", required_argument, NULL, OPT_META },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "total-kernels", required_argument, NULL, OPT_TOTAL },
	{ "help", no_argument, NULL, OPT_HELP },
	{ "machine", required_argument, NULL, OPT_MACHINE },
	{ "stable", required_argument, NULL, OPT_STABLE },
	{ "probes", required_argument, NULL, OPT_PROBES },
	{ "probe-where", required_argument, NULL, OPT_PROBE_WHERE },
	{ "follow", required_argument, NULL, OPT_FOLLOW },
	{ NULL, 0, NULL, 0 },
};

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kpt-synth: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nhint: 'kpt-synth --help' lists the options\n");
	return 2;
}

/* Whole-string unsigned parse; 0 on success. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (!*s || *s == '-')
		return -1;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_pct(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return errno || end == s || *end || *out != *out || *out < -99.0 || *out > 1e6 ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct kpt_synth_opts o;
	struct kpt_diag d = { 0 };
	const char *out = NULL;
	uint64_t v;
	int c;

	kpt_synth_defaults(&o);
	opterr = 0;  /* messages come from fail(), in one format */
	while ((c = getopt_long(argc, argv, "o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			out = optarg;
			break;
		case OPT_RUNS:
		case OPT_ITER:
		case OPT_KPI:
		case OPT_NAMES:
			if (parse_u64(optarg, 1000000, &v) || v == 0)
				return fail("invalid count '%s' (1..1000000)", optarg);
			*(c == OPT_RUNS ? &o.runs : c == OPT_ITER ? &o.iterations :
			  c == OPT_KPI ? &o.kernels_per_iter : &o.names) = (uint32_t)v;
			break;
		case OPT_TOTAL:
			if (parse_u64(optarg, UINT64_MAX, &o.total_kernels) || !o.total_kernels)
				return fail("invalid kernel count '%s'", optarg);
			break;
		case OPT_SEED:
			if (parse_u64(optarg, UINT64_MAX, &o.seed))
				return fail("invalid seed '%s'", optarg);
			break;
		case OPT_NOISE:
		case OPT_WITHIN:
			if (parse_pct(optarg, c == OPT_NOISE ? &o.noise_pct : &o.within_pct) ||
			    (c == OPT_NOISE ? o.noise_pct : o.within_pct) < 0)
				return fail("invalid percentage '%s'", optarg);
			break;
		case OPT_SLOW: {
			char *colon = strrchr(optarg, ':');

			if (!colon || colon == optarg || o.nslow == KPT_SYNTH_MAX_SLOW)
				return fail("invalid --slow '%s' (SUBSTR:PCT, at most 16)", optarg);
			*colon = '\0';
			if (parse_pct(colon + 1, &o.slow[o.nslow].pct))
				return fail("invalid percentage in --slow '%s'", colon + 1);
			o.slow[o.nslow++].substr = optarg;
			break;
		}
		case OPT_MACHINE: {
			char *colon = strrchr(optarg, ':'), *end;

			if (!colon || colon == optarg)
				return fail("invalid --machine '%s' (PCT:SEED)", optarg);
			*colon = '\0';
			if (parse_pct(optarg, &o.machine_pct) || o.machine_pct < 0)
				return fail("invalid percentage in --machine '%s'", optarg);
			errno = 0;
			o.machine_seed = strtoull(colon + 1, &end, 10);
			if (errno || end == colon + 1 || *end)
				return fail("invalid seed in --machine '%s'", colon + 1);
			break;
		}
		case OPT_STABLE:
			o.stable = optarg;
			break;
		case OPT_PROBES: {
			char *p = optarg, *end;

			for (int k = 0; k < 4; k++) {
				errno = 0;
				o.probes[k] = strtod(p, &end);
				if (errno || end == p || *end != (k < 3 ? ':' : '\0') || !(o.probes[k] >= 0) ||
				    o.probes[k] > 1e9)
					return fail("invalid --probes '%s' (COPY:BF16:FP8:SM, numbers >= 0)", optarg);
				p = end + 1;
			}
			o.have_probes = 1;
			break;
		}
		case OPT_PROBE_WHERE:
			o.probe_where = optarg;
			break;
		case OPT_FOLLOW: {
			char *colon = strrchr(optarg, ':');

			o.follow_probe = -1;
			for (int k = 0; colon && k < 4; k++)
				if (strcmp(colon + 1, probe_names[k]) == 0)
					o.follow_probe = k;
			if (!colon || colon == optarg || o.follow_probe < 0)
				return fail("invalid --follow '%s' (SUBSTR:copy|bf16|fp8|sm)", optarg);
			*colon = '\0';
			o.follow = optarg;
			break;
		}
		case OPT_GPU:
			if (!*optarg)
				return fail("empty GPU name");
			o.gpu = optarg;
			break;
		case OPT_SUITE:
			o.suite = optarg;
			break;
		case OPT_COMMAND:
			o.command = optarg;
			break;
		case OPT_META: {
			char *eq = strchr(optarg, '=');

			if (!eq || eq == optarg || o.nmeta == KPT_SYNTH_MAX_META)
				return fail("invalid --meta '%s' (KEY=VALUE, at most 32)", optarg);
			*eq = '\0';
			o.meta[o.nmeta].key = optarg;
			o.meta[o.nmeta++].value = eq + 1;
			break;
		}
		case 'h':
		case OPT_HELP:
			fputs(usage, stdout);
			return 0;
		default:
			return fail("unrecognized option or missing value: '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return fail("unexpected argument '%s'", argv[optind]);
	if (!out)
		return fail("no output file (-o FILE)");
	if (kpt_synth_write(&o, out, &d)) {
		fprintf(stderr, "kpt-synth: %s\n", d.msg);
		return 2;
	}
	return 0;
}
