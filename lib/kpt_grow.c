/* kpt_grow.c - array growth (kpt_grow.h). */
#include "kpt_grow.h"

#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"

/* Grows the array at p (a T **, read and written by memcpy so that no T *
 * is accessed as a void *) from cap to hold need, at most max elements;
 * *out is the capacity after (cap when it fails). */
static int grow_to(void *p, size_t cap, size_t need, size_t elem, size_t max, size_t *out)
{
	size_t nc = cap < max / 2 ? cap * 2 : max;
	void *old, *np;

	*out = cap;
	if (need <= cap)
		return 0;
	if (need > max || elem == 0)
		return KPT_E_NOMEM;
	if (nc < 8)
		nc = 8;
	if (nc < need)
		nc = need;
	if (nc > SIZE_MAX / elem) /* the doubling overflows; the need may not */
		nc = need;
	if (nc > SIZE_MAX / elem)
		return KPT_E_NOMEM;
	memcpy(&old, p, sizeof old);
	if (!(np = realloc(old, nc * elem)))
		return KPT_E_NOMEM;
	memcpy(p, &np, sizeof np);
	*out = nc;
	return 0;
}

int kpt_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	return grow_to(p, *cap, need, elem, SIZE_MAX, cap);
}

int kpt_grow_u32(void *p, uint32_t *cap, size_t need, size_t elem)
{
	size_t nc;
	int rc = grow_to(p, *cap, need, elem, UINT32_MAX, &nc);

	*cap = (uint32_t)nc;
	return rc;
}
