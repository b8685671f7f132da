/* test_nvtx_stack.c - the collector's NVTX range stacks and handle tables
 * (collectors/kpt_nvtx_stack.h) without CUDA: the push/pop sequences that
 * real programs make (a user step range with NCCL's own domain inside it,
 * NCCL popping through the payload extension, pops on the wrong thread),
 * and the lookups of domains, registered strings and start/end ranges. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_nvtx_stack.h"

#define DEF 0u                  /* the default domain */
#define NCCL 0x7f0012340000ull  /* a domain handle, as NVTX hands them out */
#define TORCH 0x7f0056780000ull

static struct kpt_nvtx_stack *stack_new(void)
{
	struct kpt_nvtx_stack *s = calloc(1, sizeof *s);

	assert_non_null(s);
	return s;
}

static uint32_t top_id(const struct kpt_nvtx_stack *s)
{
	const struct kpt_nvtx_frame *f = kpt_nvtx_stack_top(s);

	return f ? f->id : 0;
}

static void test_empty_stack_has_no_top(void **state)
{
	struct kpt_nvtx_stack *s = stack_new();

	(void)state;
	assert_null(kpt_nvtx_stack_top(s));
	free(s);
}

/* hstep (default domain) with ncclAllReduce (NCCL's domain) inside, every
 * step: the NCCL range's parent is hstep, launches inside it link to it,
 * and after both pops nothing is open. */
static void test_domains_nest_in_every_step(void **state)
{
	struct kpt_nvtx_stack *s = stack_new();
	const struct kpt_nvtx_frame *c;
	uint32_t id = 1;

	(void)state;
	for (int step = 0; step < 5; step++) {
		uint32_t h = id++, a = id++;

		assert_null(kpt_nvtx_stack_top(s));
		assert_int_equal(kpt_nvtx_stack_push(s, DEF, h, NULL), 1);
		assert_int_equal(top_id(s), h);          /* parent of the next range */
		assert_int_equal(kpt_nvtx_stack_push(s, NCCL, a, NULL), 1);
		assert_int_equal(top_id(s), a);          /* launches link here */
		assert_int_equal(kpt_nvtx_stack_pop(s, NCCL, &c), 1);
		assert_int_equal(c[0].id, a);
		assert_int_equal(top_id(s), h);
		assert_int_equal(kpt_nvtx_stack_pop(s, DEF, &c), 1);
		assert_int_equal(c[0].id, h);
	}
	assert_int_equal(s->crossed, 0);
	assert_int_equal(s->unmatched, 0);
	free(s);
}

/* The issue-22 bug: NCCL >= 2.25 pops ncclCommInitRankConfig through
 * nvtxRangePopPayload. Were that pop lost, the user's pop must still close
 * hstep (and the NCCL range inside it), not the NCCL range: step 2 starts
 * at top level instead of under step 1's hstep. */
static void test_lost_pop_of_other_domain_does_not_go_stale(void **state)
{
	struct kpt_nvtx_stack *s = stack_new();
	const struct kpt_nvtx_frame *c;
	int tag_h = 1, tag_i = 2;

	(void)state;
	kpt_nvtx_stack_push(s, DEF, 1, &tag_h);          /* hstep, step 1 */
	kpt_nvtx_stack_push(s, NCCL, 2, &tag_i);         /* ncclCommInitRankConfig, pop lost */
	assert_int_equal(kpt_nvtx_stack_pop(s, DEF, &c), 2);
	assert_int_equal(c[0].id, 1);
	assert_ptr_equal(c[0].rec, &tag_h);
	assert_int_equal(c[1].id, 2);                    /* closed with its parent */
	assert_ptr_equal(c[1].rec, &tag_i);
	assert_int_equal(s->crossed, 1);
	assert_null(kpt_nvtx_stack_top(s));
	kpt_nvtx_stack_push(s, DEF, 3, NULL);            /* hstep, step 2: top level */
	assert_int_equal(s->depth, 1);
	free(s);
}

/* A pop of one domain never pops another domain's range, even when that
 * one is innermost: the default domain's pop closes its own range. */
static void test_pop_takes_own_domain_below_others(void **state)
{
	struct kpt_nvtx_stack *s = stack_new();
	const struct kpt_nvtx_frame *c;

	(void)state;
	kpt_nvtx_stack_push(s, TORCH, 1, NULL);
	kpt_nvtx_stack_push(s, DEF, 2, NULL);
	kpt_nvtx_stack_push(s, NCCL, 3, NULL);
	assert_int_equal(kpt_nvtx_stack_pop(s, DEF, &c), 2);
	assert_int_equal(c[0].id, 2);
	assert_int_equal(c[0].domain, DEF);
	assert_int_equal(c[1].id, 3);
	assert_int_equal(top_id(s), 1);
	/* NCCL's own pop comes late: nothing of NCCL's is open any more */
	assert_int_equal(kpt_nvtx_stack_pop(s, NCCL, &c), 0);
	assert_null(c);
	assert_int_equal(s->unmatched, 1);
	assert_int_equal(top_id(s), 1);
	free(s);
}

/* A pop on a thread with nothing open (its push was on another thread) is
 * counted and changes nothing. */
static void test_unmatched_pop_is_counted_and_ignored(void **state)
{
	struct kpt_nvtx_stack *a = stack_new(), *b = stack_new();
	const struct kpt_nvtx_frame *c;

	(void)state;
	kpt_nvtx_stack_push(a, DEF, 1, NULL);
	assert_int_equal(kpt_nvtx_stack_pop(b, DEF, &c), 0);
	assert_int_equal(b->unmatched, 1);
	assert_int_equal(top_id(a), 1);
	assert_int_equal(kpt_nvtx_stack_pop(a, NCCL, &c), 0);   /* wrong domain */
	assert_int_equal(a->unmatched, 1);
	assert_int_equal(top_id(a), 1);
	free(a);
	free(b);
}

/* Past KPT_NVTX_STACK_MAX pushes are counted, not stored; their pops take
 * them back first, so correct nesting comes out exact. */
static void test_depth_past_max_is_hidden_then_exact(void **state)
{
	struct kpt_nvtx_stack *s = stack_new();
	const struct kpt_nvtx_frame *c;

	(void)state;
	for (uint32_t i = 1; i <= KPT_NVTX_STACK_MAX + 3; i++)
		assert_int_equal(kpt_nvtx_stack_push(s, DEF, i, NULL), i <= KPT_NVTX_STACK_MAX);
	assert_int_equal(s->hidden, 3);
	assert_int_equal(top_id(s), KPT_NVTX_STACK_MAX);
	for (int i = 0; i < 3; i++)
		assert_int_equal(kpt_nvtx_stack_pop(s, DEF, &c), 0);
	assert_int_equal(kpt_nvtx_stack_pop(s, DEF, &c), 1);
	assert_int_equal(c[0].id, KPT_NVTX_STACK_MAX);
	assert_int_equal(top_id(s), KPT_NVTX_STACK_MAX - 1);
	assert_int_equal(s->unmatched, 0);
	free(s);
}

static struct kpt_nvtx_handles *handles_new(void)
{
	struct kpt_nvtx_handles *h = calloc(1, sizeof *h);

	assert_non_null(h);
	return h;
}

/* String handles are only unique within their domain: NCCL's handle 1 and
 * PyTorch's handle 1 name different strings. */
static void test_registered_strings_are_kept_per_domain(void **state)
{
	struct kpt_nvtx_handles *h = handles_new();

	(void)state;
	assert_int_equal(kpt_nvtx_handles_put(h, NCCL, 1, "ncclAllReduce"), 0);
	assert_int_equal(kpt_nvtx_handles_put(h, TORCH, 1, "aten::mm"), 0);
	assert_string_equal(kpt_nvtx_handles_get(h, NCCL, 1, 0), "ncclAllReduce");
	assert_string_equal(kpt_nvtx_handles_get(h, TORCH, 1, 0), "aten::mm");
	assert_null(kpt_nvtx_handles_get(h, DEF, 1, 0));
	assert_null(kpt_nvtx_handles_get(h, NCCL, 2, 0));
	/* a lookup without take leaves the entry */
	assert_string_equal(kpt_nvtx_handles_get(h, NCCL, 1, 0), "ncclAllReduce");
	free(h);
}

static void test_newest_entry_wins(void **state)
{
	struct kpt_nvtx_handles *h = handles_new();

	(void)state;
	kpt_nvtx_handles_put(h, 0, 9, "old");
	kpt_nvtx_handles_put(h, 0, 9, "new");
	assert_string_equal(kpt_nvtx_handles_get(h, 0, 9, 0), "new");
	free(h);
}

static void test_take_removes_the_entry(void **state)
{
	struct kpt_nvtx_handles *h = handles_new();
	int r;

	(void)state;
	kpt_nvtx_handles_put(h, NCCL, 77, &r);
	assert_null(kpt_nvtx_handles_get(h, DEF, 77, 1));   /* other domain: not taken */
	assert_ptr_equal(kpt_nvtx_handles_get(h, NCCL, 77, 1), &r);
	assert_null(kpt_nvtx_handles_get(h, NCCL, 77, 1));
	free(h);
}

static void test_full_table_and_zero_key_are_refused(void **state)
{
	struct kpt_nvtx_handles *h = handles_new();
	int r;

	(void)state;
	assert_int_equal(kpt_nvtx_handles_put(h, 0, 0, &r), -1);
	for (uint64_t k = 1; k <= KPT_NVTX_HANDLES_MAX; k++)
		assert_int_equal(kpt_nvtx_handles_put(h, 0, k, &r), 0);
	assert_int_equal(kpt_nvtx_handles_put(h, 0, KPT_NVTX_HANDLES_MAX + 1, &r), -1);
	assert_null(kpt_nvtx_handles_get(h, 0, KPT_NVTX_HANDLES_MAX + 1, 0));
	assert_ptr_equal(kpt_nvtx_handles_get(h, 0, 1, 0), &r);
	free(h);
}

/* Start/end ranges started on one thread and ended on others: two threads
 * race to end each of N ranges; every range is ended exactly once. */
#define RACE_N 2000
struct race {
	struct kpt_nvtx_handles *h;
	int got[RACE_N];
};

static void *race_main(void *arg)
{
	struct race *r = arg;

	for (uint64_t k = 1; k <= RACE_N; k++)
		if (kpt_nvtx_handles_get(r->h, NCCL, k, 1))
			__atomic_fetch_add(&r->got[k - 1], 1, __ATOMIC_RELAXED);
	return NULL;
}

static void test_range_ended_on_other_thread_is_taken_once(void **state)
{
	struct race *r = calloc(1, sizeof *r);
	pthread_t t[2];
	int vals[RACE_N];

	(void)state;
	assert_non_null(r);
	r->h = handles_new();
	for (uint64_t k = 1; k <= RACE_N; k++)
		assert_int_equal(kpt_nvtx_handles_put(r->h, NCCL, k, &vals[k - 1]), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, race_main, r), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	for (int k = 0; k < RACE_N; k++)
		assert_int_equal(r->got[k], 1);
	free(r->h);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_stack_has_no_top),
		cmocka_unit_test(test_domains_nest_in_every_step),
		cmocka_unit_test(test_lost_pop_of_other_domain_does_not_go_stale),
		cmocka_unit_test(test_pop_takes_own_domain_below_others),
		cmocka_unit_test(test_unmatched_pop_is_counted_and_ignored),
		cmocka_unit_test(test_depth_past_max_is_hidden_then_exact),
		cmocka_unit_test(test_registered_strings_are_kept_per_domain),
		cmocka_unit_test(test_newest_entry_wins),
		cmocka_unit_test(test_take_removes_the_entry),
		cmocka_unit_test(test_full_table_and_zero_key_are_refused),
		cmocka_unit_test(test_range_ended_on_other_thread_is_taken_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
