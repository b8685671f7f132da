/* kpt_registry.c - the list of workload families and the suite table. */
#include <string.h>

#include "kpt_workload.h"

extern const struct kpt_wl_family kpt_wl_family_memory;
extern const struct kpt_wl_family kpt_wl_family_fp8;
extern const struct kpt_wl_family kpt_wl_family_attention;
extern const struct kpt_wl_family kpt_wl_family_moe;

/* The family list, in --list order.
 *
 * To add a family (attention, moe): define
 *     const struct kpt_wl_family kpt_wl_family_attention = { "attention", table, count };
 * in a source under kernels/attention/ (added to the kptkernels target by
 * kernels/attention/CMakeLists.txt with target_sources(kptkernels PRIVATE ...)),
 * then add its two lines here: the extern declaration above and one entry below. */
static const struct kpt_wl_family *const families[] = {
	&kpt_wl_family_memory,
	&kpt_wl_family_fp8,
	&kpt_wl_family_attention,
	&kpt_wl_family_moe,
};

static const struct kpt_wl_suite suites[] = {
	{ "quick",   "a few seconds: small sizes of every family, for tests" },
	{ "default", "about a minute or less on an H100: the regression gate" },
	{ "seed",    "configurations of the validation reports: FP8 E4M3/E5M2, MoE, attention" },
	{ "bench",   "large sizes for bench/kernels (bandwidth and TFLOP/s against the limits)" },
	{ "check",   "awkward sizes (empty, 1, not multiples of the block) for the GPU tests" },
};

#define NFAMILIES (sizeof families / sizeof families[0])

size_t kpt_workload_count(void)
{
	size_t n = 0;

	for (size_t f = 0; f < NFAMILIES; f++)
		n += families[f]->count;
	return n;
}

const struct kpt_workload *kpt_workload_at(size_t i)
{
	for (size_t f = 0; f < NFAMILIES; f++) {
		if (i < families[f]->count)
			return &families[f]->workloads[i];
		i -= families[f]->count;
	}
	return NULL;
}

const struct kpt_workload *kpt_workload_find(const char *name)
{
	for (size_t f = 0; f < NFAMILIES; f++)
		for (size_t i = 0; i < families[f]->count; i++)
			if (strcmp(families[f]->workloads[i].name, name) == 0)
				return &families[f]->workloads[i];
	return NULL;
}

int kpt_workload_in_suite(const struct kpt_workload *w, const char *suite)
{
	size_t len = strlen(suite);
	const char *p = w->suites;

	if (len == 0 || !p)
		return 0;
	while ((p = strstr(p, suite)) != NULL) {
		int starts = p == w->suites || p[-1] == ' ';
		int ends = p[len] == '\0' || p[len] == ' ';

		if (starts && ends)
			return 1;
		p += len;
	}
	return 0;
}

const struct kpt_wl_suite *kpt_wl_suites(size_t *n)
{
	*n = sizeof suites / sizeof suites[0];
	return suites;
}

const struct kpt_wl_suite *kpt_wl_suite_find(const char *name)
{
	for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
		if (strcmp(suites[i].name, name) == 0)
			return &suites[i];
	return NULL;
}
