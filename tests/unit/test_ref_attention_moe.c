/* test_ref_attention_moe.c - the float64 references the attention and MoE
 * kernels are checked against (kernels/attention/ref_attention.c,
 * kernels/moe/ref_moe.c). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ref_attention.h"
#include "ref_moe.h"

static float urand(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (float)((*s >> 40) * (1.0 / 16777216.0)) * 2.0f - 1.0f;
}

static void test_attention_one_key_returns_its_value(void **state)
{
	float q[4] = { 1, -2, 3, 0.5f }, k[4] = { 0.1f, 0.2f, -0.3f, 4 }, v[4] = { 7, -1, 0.25f, 3 };
	double out[4];

	(void)state;
	assert_int_equal(kpt_ref_attn_row(q, k, v, 4, 1, 4, 0.5, out), 0);
	for (int c = 0; c < 4; c++)
		assert_true(fabs(out[c] - v[c]) < 1e-12);
}

static void test_attention_equal_scores_average_the_values(void **state)
{
	/* q = 0 gives every key the same score: the output is the mean of v. */
	float q[2] = { 0, 0 }, k[6] = { 1, 2, 3, 4, 5, 6 }, v[6] = { 1, 10, 2, 20, 6, 60 };
	double out[2];

	(void)state;
	assert_int_equal(kpt_ref_attn_row(q, k, v, 2, 3, 2, 1.0, out), 0);
	assert_true(fabs(out[0] - 3.0) < 1e-12);
	assert_true(fabs(out[1] - 30.0) < 1e-12);
}

static void test_attention_matches_softmax_by_hand(void **state)
{
	/* scores 0.5 * (1, 3) -> weights e^0.5, e^1.5; stride 3 skips a column. */
	float q[2] = { 1, 0 }, k[6] = { 1, 9, 99, 3, 9, 99 }, v[6] = { 2, -4, 99, 6, 8, 99 };
	double out[2], w0 = exp(0.5), w1 = exp(1.5);

	(void)state;
	assert_int_equal(kpt_ref_attn_row(q, k, v, 3, 2, 2, 0.5, out), 0);
	assert_true(fabs(out[0] - (2 * w0 + 6 * w1) / (w0 + w1)) < 1e-12);
	assert_true(fabs(out[1] - (-4 * w0 + 8 * w1) / (w0 + w1)) < 1e-12);
}

static void test_attention_large_scores_do_not_overflow(void **state)
{
	float q[1] = { 1000 }, k[2] = { 1000, 999 }, v[2] = { 1, 3 };
	double out[1];

	(void)state;
	assert_int_equal(kpt_ref_attn_row(q, k, v, 1, 2, 1, 1.0, out), 0);
	assert_true(isfinite(out[0]));
	assert_true(fabs(out[0] - 1.0) < 1e-6); /* e^-1000 of the second key vanishes */
}

/* A small random layer shared by the MoE tests. */
struct moe_fixture {
	struct kpt_ref_moe_shape sh;
	float *x, *wg, *w1, *w2;
};

static struct moe_fixture make_moe(int tokens, int hidden, int ffn, int experts, int top_k, uint64_t seed)
{
	struct moe_fixture f = { { tokens, hidden, ffn, experts, top_k }, NULL, NULL, NULL, NULL };
	size_t nw = (size_t)experts * hidden * ffn;

	f.x = malloc((size_t)tokens * hidden * sizeof(float));
	f.wg = malloc((size_t)experts * hidden * sizeof(float));
	f.w1 = malloc(nw * sizeof(float));
	f.w2 = malloc(nw * sizeof(float));
	assert_non_null(f.x && f.wg && f.w1 && f.w2 ? f.x : NULL);
	for (size_t i = 0; i < (size_t)tokens * hidden; i++)
		f.x[i] = urand(&seed);
	for (size_t i = 0; i < (size_t)experts * hidden; i++)
		f.wg[i] = urand(&seed);
	for (size_t i = 0; i < nw; i++) {
		f.w1[i] = urand(&seed) * 0.3f;
		f.w2[i] = urand(&seed) * 0.3f;
	}
	return f;
}

static void free_moe(struct moe_fixture *f)
{
	free(f->x);
	free(f->wg);
	free(f->w1);
	free(f->w2);
}

static void test_moe_topk_is_sorted_and_weights_sum_to_one(void **state)
{
	struct moe_fixture f = make_moe(5, 8, 16, 6, 3, 42);
	double y[5 * 8], w[5 * 3], margin[5];
	int ids[5 * 3];

	(void)state;
	assert_int_equal(kpt_ref_moe(&f.sh, f.x, f.wg, f.w1, f.w2, 0, 5, y, ids, w, margin), 0);
	for (int t = 0; t < 5; t++) {
		double s = 0;

		for (int j = 0; j < 3; j++) {
			assert_in_range(ids[t * 3 + j], 0, 5);
			s += w[t * 3 + j];
			if (j)
				assert_true(w[t * 3 + j] <= w[t * 3 + j - 1]);
		}
		assert_true(ids[t * 3] != ids[t * 3 + 1] && ids[t * 3] != ids[t * 3 + 2] && ids[t * 3 + 1] != ids[t * 3 + 2]);
		assert_true(fabs(s - 1.0) < 1e-12);
		assert_true(margin[t] >= 0);
	}
	free_moe(&f);
}

static void test_moe_token_range_matches_whole_run(void **state)
{
	struct moe_fixture f = make_moe(4, 8, 8, 4, 2, 7);
	double all[4 * 8], one[8], w[4 * 2], margin[4];
	int ids[4 * 2];

	(void)state;
	assert_int_equal(kpt_ref_moe(&f.sh, f.x, f.wg, f.w1, f.w2, 0, 4, all, ids, w, margin), 0);
	assert_int_equal(kpt_ref_moe(&f.sh, f.x, f.wg, f.w1, f.w2, 2, 3, one, ids, w, margin), 0);
	for (int c = 0; c < 8; c++)
		assert_true(fabs(one[c] - all[2 * 8 + c]) < 1e-15);
	free_moe(&f);
}

static void test_moe_single_expert_is_a_plain_ffn(void **state)
{
	/* One expert, top-1: weight 1, y = gelu(x W1^T) W2^T by hand. */
	struct moe_fixture f = make_moe(1, 2, 3, 1, 1, 9);
	double y[2], w[1], margin[1], h[3];
	int ids[1];

	(void)state;
	assert_int_equal(kpt_ref_moe(&f.sh, f.x, f.wg, f.w1, f.w2, 0, 1, y, ids, w, margin), 0);
	assert_int_equal(ids[0], 0);
	assert_true(fabs(w[0] - 1.0) < 1e-15);
	assert_true(margin[0] == 1.0);
	for (int j = 0; j < 3; j++) {
		double s = (double)f.x[0] * f.w1[j * 2] + (double)f.x[1] * f.w1[j * 2 + 1];

		h[j] = 0.5 * s * (1 + erf(s / sqrt(2.0)));
	}
	for (int c = 0; c < 2; c++) {
		double s = h[0] * f.w2[c * 3] + h[1] * f.w2[c * 3 + 1] + h[2] * f.w2[c * 3 + 2];

		assert_true(fabs(y[c] - s) < 1e-12);
	}
	free_moe(&f);
}

static void test_moe_ties_choose_the_lower_expert(void **state)
{
	/* Router rows 1 and 2 equal: expert 1 must win the tie; margin 0. */
	struct moe_fixture f = make_moe(1, 4, 4, 3, 1, 3);
	double y[4], w[1], margin[1];
	int ids[1];

	(void)state;
	for (int c = 0; c < 4; c++) {
		f.wg[0 * 4 + c] = -1.0f * (f.x[c] > 0 ? 1 : -1);
		f.wg[1 * 4 + c] = f.wg[2 * 4 + c] = f.x[c] > 0 ? 1 : -1;
	}
	assert_int_equal(kpt_ref_moe(&f.sh, f.x, f.wg, f.w1, f.w2, 0, 1, y, ids, w, margin), 0);
	assert_int_equal(ids[0], 1);
	assert_true(margin[0] == 0.0);
	free_moe(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attention_one_key_returns_its_value),
		cmocka_unit_test(test_attention_equal_scores_average_the_values),
		cmocka_unit_test(test_attention_matches_softmax_by_hand),
		cmocka_unit_test(test_attention_large_scores_do_not_overflow),
		cmocka_unit_test(test_moe_topk_is_sorted_and_weights_sum_to_one),
		cmocka_unit_test(test_moe_token_range_matches_whole_run),
		cmocka_unit_test(test_moe_single_expert_is_a_plain_ffn),
		cmocka_unit_test(test_moe_ties_choose_the_lower_expert),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
