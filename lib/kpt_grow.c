/* kpt_grow.c - array growth (kpt_grow.h). */
#include "kpt_grow.h"

#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"

/* The capacity after growing from cap to hold need, at most max; 0 when
 * need cannot be held (above max, or max elements of elem bytes overflow). */
static size_t next_cap(size_t cap, size_t need, size_t elem, size_t max)
{
	size_t nc = cap < max / 2 ? cap * 2 : max;

	if (need > max || elem == 0)
		return 0;
	if (nc < 8)
		nc = 8;
	if (nc < need)
		nc = need;
	if (nc > SIZE_MAX / elem) /* the doubling overflows; the need may not */
		nc = need;
	return nc > SIZE_MAX / elem ? 0 : nc;
}

/* realloc of the array at p (a T **, read and written by memcpy so that no
 * T * is accessed as a void *). */
static int resize(void *p, size_t nc, size_t elem)
{
	void *old, *np;

	memcpy(&old, p, sizeof old);
	if (!(np = realloc(old, nc * elem)))
		return KPT_E_NOMEM;
	memcpy(p, &np, sizeof np);
	return 0;
}

int kpt_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t nc;

	if (need <= *cap)
		return 0;
	if (!(nc = next_cap(*cap, need, elem, SIZE_MAX)) || resize(p, nc, elem) < 0)
		return KPT_E_NOMEM;
	*cap = nc;
	return 0;
}

int kpt_grow_u32(void *p, uint32_t *cap, size_t need, size_t elem)
{
	size_t nc;

	if (need <= *cap)
		return 0;
	if (!(nc = next_cap(*cap, need, elem, UINT32_MAX)) || resize(p, nc, elem) < 0)
		return KPT_E_NOMEM;
	*cap = (uint32_t)nc;
	return 0;
}
