/* kpt_inject_path.c - output path patterns and rank lookup of the
 * injection library (kpt_inject.h). No CUDA: unit-tested on CPU. */
#include "kpt_inject.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kpt_inject_kinds(const char *list, const char **bad, int *badlen)
{
	static const struct { const char *name; int mask; } w[] = {
		{ "kernel", 1 }, { "memcpy", 2 | 4 }, { "memset", 8 }, { "sync", 16 }, { "all", 1 | 2 | 4 | 8 | 16 },
	};
	int mask = 0;

	for (const char *s = list; *s; s += strcspn(s, ",") + (s[strcspn(s, ",")] == ',')) {
		size_t n = strcspn(s, ","), i;

		if (n == 0)
			continue;
		for (i = 0; i < sizeof w / sizeof w[0]; i++)
			if (strlen(w[i].name) == n && strncmp(s, w[i].name, n) == 0)
				break;
		if (i == sizeof w / sizeof w[0]) {
			*bad = s;
			*badlen = (int)n;
			return -1;
		}
		mask |= w[i].mask;
	}
	return mask;
}

int kpt_inject_expand(const char *pat, unsigned pid, unsigned rank, char *out, int cap)
{
	int n = 0;

	for (const char *p = pat; *p; p++) {
		int k;

		if (*p != '%') {
			if (n + 1 >= cap)
				return -1;
			out[n++] = *p;
			continue;
		}
		p++;
		if (*p == 'p')
			k = snprintf(out + n, (size_t)(cap - n), "%u", pid);
		else if (*p == 'r')
			k = snprintf(out + n, (size_t)(cap - n), "%u", rank == 0xFFFFFFFFu ? 0 : rank);
		else if (*p == '%')
			k = snprintf(out + n, (size_t)(cap - n), "%%");
		else
			return -1;
		if (k < 0 || k >= cap - n)
			return -1;
		n += k;
	}
	if (n >= cap)
		return -1;
	out[n] = '\0';
	return n;
}

int kpt_inject_is_work_api(const char *name)
{
	static const char *const prefixes[] = {
		"cudaLaunch", "cudaGraphLaunch", "cudaMemcpy", "cudaMemset",
		"cuLaunch", "cuGraphLaunch", "cuMemcpy", "cuMemset",
	};

	while (*name == '_')    /* CUDA 13's <<<>>> is __cudaLaunchKernel */
		name++;
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
			return 1;
	return 0;
}

unsigned kpt_inject_rank(void)
{
	static const char *const vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID" };

	for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
		const char *s = getenv(vars[i]);
		char *end;
		unsigned long v;

		if (!s || !*s)
			continue;
		errno = 0;
		v = strtoul(s, &end, 10);
		if (!errno && !*end && v < 0xFFFFFFFFu)
			return (unsigned)v;
	}
	return 0xFFFFFFFFu;
}
