/* kpt_strtab.h - string interning: same bytes, same id.
 *
 * Ids count 0, 1, 2... in first-intern order, which is the order the .kpt
 * strings section stores them in. Strings are copied into the table's arena,
 * NUL-terminated, and stay valid until kpt_strtab_release. Memory: the bytes
 * plus about 20 bytes per string. Not thread-safe.
 */
#ifndef KPT_STRTAB_H
#define KPT_STRTAB_H

#include <stddef.h>
#include <stdint.h>

#include "kpt_arena.h"

/* Longest string accepted (bytes) and most strings per table. */
#define KPT_STRTAB_MAX_LEN ((size_t)1 << 30)
#define KPT_STRTAB_MAX_COUNT (UINT32_MAX - 1)

struct kpt_strtab {
	struct kpt_arena arena;
	const char **str;           /* by id */
	uint32_t *len;              /* by id */
	uint32_t *hash;             /* by id, for rehashing */
	uint32_t count, cap;
	uint32_t *slots;            /* open addressing: id + 1, 0 empty */
	uint32_t nslots;            /* power of two, or 0 */
	uint64_t bytes;             /* sum of lengths */
};

void kpt_strtab_init(struct kpt_strtab *t);
void kpt_strtab_release(struct kpt_strtab *t);

/* Interns s[0..len). Returns 0, KPT_E_NOMEM, or KPT_E_INVAL when s holds a
 * NUL byte, is longer than KPT_STRTAB_MAX_LEN, or the table is full.
 * O(len) amortised. */
int kpt_strtab_intern(struct kpt_strtab *t, const char *s, size_t len, uint32_t *id);
/* Looks s up without adding it: 1 and *id when present, 0 when absent. */
int kpt_strtab_find(const struct kpt_strtab *t, const char *s, size_t len, uint32_t *id);
/* The string of id (NUL-terminated; *len set when len is not NULL), or NULL
 * when id >= count. */
const char *kpt_strtab_get(const struct kpt_strtab *t, uint32_t id, size_t *len);

static inline uint32_t kpt_strtab_count(const struct kpt_strtab *t)
{
	return t->count;
}

#endif
