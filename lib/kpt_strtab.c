/* kpt_strtab.c - string interning (see kpt_strtab.h). */
#include "kpt_strtab.h"

#include <stdlib.h>
#include <string.h>

#include "kpt_err.h"
#include "kpt_grow.h"

void kpt_strtab_init(struct kpt_strtab *t)
{
	memset(t, 0, sizeof *t);
	kpt_arena_init(&t->arena);
}

void kpt_strtab_release(struct kpt_strtab *t)
{
	kpt_arena_release(&t->arena);
	free(t->str);
	free(t->len);
	free(t->hash);
	free(t->slots);
	kpt_strtab_init(t);
}

/* FNV-1a, 32 bits: cheap and good enough for a table that is resized to stay
 * under half full. */
static uint32_t str_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static int lookup(const struct kpt_strtab *t, const char *s, size_t len, uint32_t h,
		  uint32_t *slot)
{
	uint32_t mask = t->nslots - 1;
	uint32_t i = h & mask;

	for (;;) {
		uint32_t v = t->slots[i];

		if (v == 0) {
			*slot = i;
			return 0;
		}
		v--;
		if (t->hash[v] == h && t->len[v] == len && memcmp(t->str[v], s, len) == 0) {
			*slot = v;
			return 1;
		}
		i = (i + 1) & mask;
	}
}

static int grow_slots(struct kpt_strtab *t)
{
	uint32_t n = t->nslots ? t->nslots * 2 : 1024;
	uint32_t *slots;

	if (n == 0 || n > (UINT32_C(1) << 31))
		return KPT_E_NOMEM;
	slots = calloc(n, sizeof *slots);
	if (!slots)
		return KPT_E_NOMEM;
	for (uint32_t id = 0; id < t->count; id++) {
		uint32_t i = t->hash[id] & (n - 1);

		while (slots[i])
			i = (i + 1) & (n - 1);
		slots[i] = id + 1;
	}
	free(t->slots);
	t->slots = slots;
	t->nslots = n;
	return 0;
}

static int grow_ids(struct kpt_strtab *t)
{
	uint32_t c1 = t->cap, c2 = t->cap, c3 = t->cap; /* the same growth for all three */
	size_t need = (size_t)t->count + 1;

	if (kpt_grow_u32(&t->str, &c1, need, sizeof *t->str) < 0 || kpt_grow_u32(&t->len, &c2, need, sizeof *t->len) < 0 ||
	    kpt_grow_u32(&t->hash, &c3, need, sizeof *t->hash) < 0)
		return KPT_E_NOMEM;
	t->cap = c1;
	return 0;
}

int kpt_strtab_intern(struct kpt_strtab *t, const char *s, size_t len, uint32_t *id)
{
	uint32_t h, slot;
	char *copy;
	int rc;

	if (len > KPT_STRTAB_MAX_LEN || (len && memchr(s, '\0', len)))
		return KPT_E_INVAL;
	h = str_hash(s, len);
	if (t->nslots && lookup(t, s, len, h, &slot)) {
		*id = slot;
		return 0;
	}
	if (t->count >= KPT_STRTAB_MAX_COUNT)
		return KPT_E_INVAL;
	if ((uint64_t)(t->count + 1) * 2 > t->nslots) {
		rc = grow_slots(t);
		if (rc)
			return rc;
	}
	if (t->count == t->cap && (rc = grow_ids(t)))
		return rc;
	copy = kpt_arena_strndup(&t->arena, len ? s : "", len);
	if (!copy)
		return KPT_E_NOMEM;
	lookup(t, s, len, h, &slot);
	t->str[t->count] = copy;
	t->len[t->count] = (uint32_t)len;
	t->hash[t->count] = h;
	t->slots[slot] = t->count + 1;
	t->bytes += len;
	*id = t->count++;
	return 0;
}

int kpt_strtab_find(const struct kpt_strtab *t, const char *s, size_t len, uint32_t *id)
{
	uint32_t slot;

	if (!t->nslots || len > KPT_STRTAB_MAX_LEN)
		return 0;
	if (!lookup(t, s, len, str_hash(s, len), &slot))
		return 0;
	*id = slot;
	return 1;
}

const char *kpt_strtab_get(const struct kpt_strtab *t, uint32_t id, size_t *len)
{
	if (id >= t->count)
		return NULL;
	if (len)
		*len = t->len[id];
	return t->str[id];
}
