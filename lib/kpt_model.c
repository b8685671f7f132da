/* kpt_model.c - helpers of the run model (see kpt_model.h). */
#define _GNU_SOURCE /* qsort_r */
#include "kpt_model.h"

#include <stdlib.h>

#include "kpt_err.h"

/* ASCII only, whatever the locale: slugs name directories. */
static int is_alnum(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int kpt_slug(const char *name, char *out, int cap)
{
	int n = 0, dash = 0;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
		if (is_alnum(*p)) {
			if (dash && n > 0) {
				if (n < cap - 1)
					out[n] = '-';
				n++;
			}
			dash = 0;
			if (n < cap - 1)
				out[n] = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
			n++;
		} else {
			dash = 1;
		}
	}
	if (cap > 0)
		out[n < cap ? n : cap - 1] = '\0';
	return n;
}

static int cmp_open(const void *pa, const void *pb, void *ranges)
{
	const struct kpt_range *rg = ranges;
	const struct kpt_range *a = &rg[*(const uint32_t *)pa], *b = &rg[*(const uint32_t *)pb];

	if (a->process != b->process)
		return a->process < b->process ? -1 : 1;
	return (a->start_ns > b->start_ns) - (a->start_ns < b->start_ns);
}

int kpt_open_ranges_init(struct kpt_open_ranges *o, const struct kpt_range *ranges, size_t nranges)
{
	o->ranges = ranges;
	o->n = 0;
	o->idx = malloc((nranges + 1) * sizeof *o->idx); /* + 1: never NULL when it worked */
	if (!o->idx)
		return KPT_E_NOMEM;
	for (size_t i = 0; i < nranges; i++)
		if (ranges[i].kind != KPT_RANGE_MARK)
			o->idx[o->n++] = (uint32_t)i;
	qsort_r(o->idx, o->n, sizeof *o->idx, cmp_open, (void *)ranges);
	return 0;
}

uint32_t kpt_open_ranges_at(const struct kpt_open_ranges *o, uint32_t process, uint64_t t)
{
	const struct kpt_range *r = o->ranges;
	size_t lo = 0, hi = o->n;

	while (lo < hi) { /* first index after (process, t) */
		size_t mid = lo + (hi - lo) / 2;
		const struct kpt_range *m = &r[o->idx[mid]];

		if (m->process < process || (m->process == process && m->start_ns <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t n = 0; lo > 0 && n < 4096; n++) {
		const struct kpt_range *c = &r[o->idx[--lo]];

		if (c->process != process)
			break;
		if (c->end_ns == 0 || c->end_ns > t)
			return o->idx[lo];
	}
	return KPT_NONE;
}

void kpt_open_ranges_release(struct kpt_open_ranges *o)
{
	free(o->idx);
	o->idx = NULL;
	o->n = 0;
}
