/* kpt_arena.h - bump allocator for data that lives and dies together.
 *
 * What is loaded for one job (the sections of one .kpt file, one diff) is
 * allocated from one arena and freed in one call. Allocation is O(1)
 * amortised; individual objects are never freed. Not thread-safe.
 */
#ifndef KPT_ARENA_H
#define KPT_ARENA_H

#include <stdarg.h>
#include <stddef.h>

struct kpt_arena_block;

struct kpt_arena {
	struct kpt_arena_block *head; /* newest block; older ones chained */
	size_t used;                  /* bytes used in head */
	size_t cap;                   /* usable bytes in head */
	size_t total;                 /* bytes obtained from malloc, all blocks */
};

void kpt_arena_init(struct kpt_arena *a);
/* Frees every block; the arena may be used again afterwards. */
void kpt_arena_release(struct kpt_arena *a);

/* n bytes aligned to 16, uninitialised; NULL when malloc fails or n is
 * absurd (> 2^40). n == 0 returns a valid unique pointer. */
void *kpt_arena_alloc(struct kpt_arena *a, size_t n);
/* As kpt_arena_alloc for count * size bytes, zeroed; NULL on overflow. */
void *kpt_arena_calloc(struct kpt_arena *a, size_t count, size_t size);
/* Copy of s[0..n) with a terminating NUL; NULL when out of memory. */
char *kpt_arena_strndup(struct kpt_arena *a, const char *s, size_t n);
/* printf into the arena; NULL when out of memory or fmt is bad. */
char *kpt_arena_printf(struct kpt_arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *kpt_arena_vprintf(struct kpt_arena *a, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));

#endif
