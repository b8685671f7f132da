/* kpt_wmap.c - map from fixed-width word tuples to dense ids (kpt_diff_private.h). */
#include <stdlib.h>
#include <string.h>

#include "kpt_diff_private.h"
#include "kpt_grow.h"

static uint32_t wmap_hash(const uint32_t *k, uint32_t width)
{
	uint64_t h = 0x9e3779b97f4a7c15ull * (width + 1);

	for (uint32_t i = 0; i < width; i++)
		h = (h ^ k[i]) * 0xff51afd7ed558ccdull;
	h ^= h >> 32;
	h *= 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(h ^ (h >> 29));
}

static int words_equal(const uint32_t *a, const uint32_t *b, uint32_t width)
{
	for (uint32_t i = 0; i < width; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

void kpt_wmap_init(struct kpt_wmap *m, uint32_t width)
{
	memset(m, 0, sizeof *m);
	m->width = width;
}

void kpt_wmap_release(struct kpt_wmap *m)
{
	free(m->keys);
	free(m->slots);
	free(m->slot_hash);
	kpt_wmap_init(m, m->width);
}

static int wmap_grow_slots(struct kpt_wmap *m)
{
	uint32_t n = m->nslots ? m->nslots * 2 : 64;
	uint32_t *slots = calloc(n, sizeof *slots);
	uint32_t *hash = malloc((size_t)n * sizeof *hash);

	if (!slots || !hash || n < m->nslots) {
		free(slots);
		free(hash);
		return KPT_E_NOMEM;
	}
	for (uint32_t i = 0; i < m->nslots; i++) {
		uint32_t s;

		if (!m->slots[i])
			continue;
		s = m->slot_hash[i] & (n - 1);
		while (slots[s])
			s = (s + 1) & (n - 1);
		slots[s] = m->slots[i];
		hash[s] = m->slot_hash[i];
	}
	free(m->slots);
	free(m->slot_hash);
	m->slots = slots;
	m->slot_hash = hash;
	m->nslots = n;
	return 0;
}

/* Slot where key is or would go. */
static uint32_t wmap_find(const struct kpt_wmap *m, const uint32_t *key, uint32_t h)
{
	uint32_t s = h & (m->nslots - 1);

	while (m->slots[s]) {
		uint32_t id = m->slots[s] - 1;

		if (m->slot_hash[s] == h && words_equal(m->keys + (size_t)id * m->width, key, m->width))
			break;
		s = (s + 1) & (m->nslots - 1);
	}
	return s;
}

int kpt_wmap_get(const struct kpt_wmap *m, const uint32_t *key, uint32_t *id)
{
	uint32_t s;

	if (!m->nslots)
		return 0;
	s = wmap_find(m, key, wmap_hash(key, m->width));
	if (!m->slots[s])
		return 0;
	*id = m->slots[s] - 1;
	return 1;
}

int kpt_wmap_put(struct kpt_wmap *m, const uint32_t *key, uint32_t *id, int *added)
{
	uint32_t h = wmap_hash(key, m->width), s;

	if ((m->count + 1) * 2 > m->nslots && wmap_grow_slots(m) < 0)
		return KPT_E_NOMEM;
	s = wmap_find(m, key, h);
	if (m->slots[s]) {
		*id = m->slots[s] - 1;
		if (added)
			*added = 0;
		return 0;
	}
	if (kpt_grow_u32(&m->keys, &m->cap, (size_t)m->count + 1, m->width * sizeof *m->keys) < 0)
		return KPT_E_NOMEM;
	memcpy(m->keys + (size_t)m->count * m->width, key, m->width * sizeof *key);
	m->slots[s] = m->count + 1;
	m->slot_hash[s] = h;
	*id = m->count++;
	if (added)
		*added = 1;
	return 0;
}
