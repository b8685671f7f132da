/* kpt_arena.c - bump allocator (see kpt_arena.h). */
#include "kpt_arena.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define ARENA_ALIGN 16
#define ARENA_MIN_BLOCK (64u * 1024)
#define ARENA_MAX_GROW (4u * 1024 * 1024)
#define ARENA_MAX_ALLOC ((size_t)1 << 40)

struct kpt_arena_block {
	struct kpt_arena_block *prev;
	size_t pad;                 /* keeps data 16-aligned */
	_Alignas(16) unsigned char data[];
};

void kpt_arena_init(struct kpt_arena *a)
{
	memset(a, 0, sizeof *a);
}

void kpt_arena_release(struct kpt_arena *a)
{
	struct kpt_arena_block *b = a->head;

	while (b) {
		struct kpt_arena_block *prev = b->prev;

		free(b);
		b = prev;
	}
	kpt_arena_init(a);
}

void *kpt_arena_alloc(struct kpt_arena *a, size_t n)
{
	size_t need = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	struct kpt_arena_block *b;
	size_t cap;

	if (n > ARENA_MAX_ALLOC)
		return NULL;
	if (need == 0)
		need = ARENA_ALIGN;
	if (a->head && a->cap - a->used >= need) {
		void *p = a->head->data + a->used;

		a->used += need;
		return p;
	}
	/* Blocks grow with the arena (bounded), so many small allocations cost
	 * few mallocs and a big one gets a block of its own size. */
	cap = a->total / 2;
	if (cap < ARENA_MIN_BLOCK)
		cap = ARENA_MIN_BLOCK;
	if (cap > ARENA_MAX_GROW)
		cap = ARENA_MAX_GROW;
	if (cap < need)
		cap = need;
	b = malloc(sizeof *b + cap);
	if (!b)
		return NULL;
	b->prev = a->head;
	a->head = b;
	a->cap = cap;
	a->used = need;
	a->total += cap;
	return b->data;
}

void *kpt_arena_calloc(struct kpt_arena *a, size_t count, size_t size)
{
	void *p;

	if (size && count > SIZE_MAX / size)
		return NULL;
	p = kpt_arena_alloc(a, count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}

char *kpt_arena_strndup(struct kpt_arena *a, const char *s, size_t n)
{
	char *p;

	if (n == SIZE_MAX)
		return NULL;
	p = kpt_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *kpt_arena_vprintf(struct kpt_arena *a, const char *fmt, va_list ap)
{
	va_list again;
	int n;
	char *s;

	va_copy(again, ap);
	n = vsnprintf(NULL, 0, fmt, ap);
	if (n < 0 || !(s = kpt_arena_alloc(a, (size_t)n + 1)))
		s = NULL;
	else
		vsnprintf(s, (size_t)n + 1, fmt, again);
	va_end(again);
	return s;
}

char *kpt_arena_printf(struct kpt_arena *a, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = kpt_arena_vprintf(a, fmt, ap);
	va_end(ap);
	return s;
}
