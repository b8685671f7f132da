/* kpt_grow.h - the one helper that grows arrays (CONTRIBUTING.md, Style).
 *
 * kpt_grow makes the array *p (elements of elem bytes, room for *cap of
 * them) hold at least need elements: nothing when it already does, else one
 * realloc to the larger of twice *cap and need (at least 8 elements), so n
 * appends one at a time cost O(n) element copies. p is the address of the
 * array pointer (a T **, NULL array with *cap 0 to start). New elements are
 * uninitialised. 0, or KPT_E_NOMEM when the size overflows or realloc
 * fails; then *p and *cap are unchanged (the caller still owns *p).
 * kpt_grow_u32 is the same for a uint32_t capacity, which never passes
 * UINT32_MAX (a need above it is KPT_E_NOMEM).
 */
#ifndef KPT_GROW_H
#define KPT_GROW_H

#include <stddef.h>
#include <stdint.h>

int kpt_grow(void *p, size_t *cap, size_t need, size_t elem);
int kpt_grow_u32(void *p, uint32_t *cap, size_t need, size_t elem);

#endif
