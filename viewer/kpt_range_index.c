/* kpt_range_index.c - NVTX range id -> row index (see kpt_range_index.h). */
#include "kpt_range_index.h"

#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"

static int cmp_id_index(const void *a, const void *b)
{
	const struct kpt_range_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int kpt_range_index_build(struct kpt_range_index *ri, const struct kpt_range *rows, size_t n)
{
	uint32_t lo = UINT32_MAX, hi = 0;

	memset(ri, 0, sizeof *ri);
	ri->n = n;
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		lo = rows[i].id < lo ? rows[i].id : lo;
		hi = rows[i].id > hi ? rows[i].id : hi;
	}
	ri->min_id = lo;
	if ((uint64_t)hi - lo < 2 * (uint64_t)n) {
		ri->span = (size_t)(hi - lo) + 1;
		ri->direct = malloc(ri->span * sizeof *ri->direct);
		if (!ri->direct)
			return KPT_E_NOMEM;
		memset(ri->direct, 0xff, ri->span * sizeof *ri->direct);
		for (size_t i = 0; i < n; i++)
			ri->direct[rows[i].id - lo] = (uint32_t)i;
		return 0;
	}
	ri->sorted = malloc(n * sizeof *ri->sorted);
	if (!ri->sorted)
		return KPT_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		ri->sorted[i].id = rows[i].id;
		ri->sorted[i].idx = (uint32_t)i;
	}
	qsort(ri->sorted, n, sizeof *ri->sorted, cmp_id_index);
	return 0;
}

long kpt_range_index_find(const struct kpt_range_index *ri, uint32_t id)
{
	size_t lo = 0, hi = ri->n;

	if (ri->direct) {
		if (id < ri->min_id || id - ri->min_id >= ri->span)
			return -1;
		return ri->direct[id - ri->min_id] == UINT32_MAX ? -1 : (long)ri->direct[id - ri->min_id];
	}
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ri->sorted[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ri->n && ri->sorted[lo].id == id ? (long)ri->sorted[lo].idx : -1;
}

void kpt_range_index_release(struct kpt_range_index *ri)
{
	free(ri->direct);
	free(ri->sorted);
	memset(ri, 0, sizeof *ri);
}
