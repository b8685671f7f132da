/* test_ref_attention_moe.c - the float64 references the attention and MoE
 * kernels are checked against (kernels/attention/ref_attention.c,
 * kernels/moe/ref_moe.c); the attention backward against finite differences
 * of the attention forward. */
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

static void test_attention_lse_of_two_keys(void **state)
{
	/* scores 0.5 * (1, 3): lse = log(e^0.5 + e^1.5). */
	float q[2] = { 1, 0 }, k[4] = { 1, 9, 3, 9 }, v[4] = { 2, -4, 6, 8 };
	double out[2], lse;

	(void)state;
	assert_int_equal(kpt_ref_attn_row_lse(q, k, v, 2, 2, 2, 0.5, out, &lse), 0);
	assert_true(fabs(lse - log(exp(0.5) + exp(1.5))) < 1e-12);
}

/* sum(dout * O) of the reference forward over every row, O by kpt_ref_attn_row. */
static double attn_loss(const float *q, const float *k, const float *v, const float *dout, int seq, int dim,
			double scale, int causal)
{
	double o[8], l = 0.0;

	for (int i = 0; i < seq; i++) {
		assert_int_equal(kpt_ref_attn_row(q + i * dim, k, v, dim, causal ? i + 1 : seq, dim, scale, o), 0);
		for (int c = 0; c < dim; c++)
			l += (double)dout[i * dim + c] * o[c];
	}
	return l;
}

/* Central differences of attn_loss in every element of q, k and v against
 * kpt_ref_attn_bwd. The step actually taken is measured in float, so the
 * quotient uses the true step. */
static void check_bwd_against_finite_differences(int causal)
{
	enum { S = 5, DIM = 4, N = S * DIM };
	float q[N], k[N], v[N], g[N];
	double dq[N], dk[N], dv[N], scale = 0.7, worst = 0.0;
	uint64_t seed = 12345 + causal;

	for (int i = 0; i < N; i++)
		q[i] = urand(&seed), k[i] = urand(&seed), v[i] = urand(&seed), g[i] = urand(&seed);
	assert_int_equal(kpt_ref_attn_bwd(q, k, v, g, DIM, S, DIM, scale, causal, dq, dk, dv), 0);
	float *ins[3] = { q, k, v };
	const double *grads[3] = { dq, dk, dv };
	for (int t = 0; t < 3; t++)
		for (int i = 0; i < N; i++) {
			float x = ins[t][i], xp = x + 1e-3f, xm = x - 1e-3f;
			double lp, lm;

			ins[t][i] = xp;
			lp = attn_loss(q, k, v, g, S, DIM, scale, causal);
			ins[t][i] = xm;
			lm = attn_loss(q, k, v, g, S, DIM, scale, causal);
			ins[t][i] = x;
			double fd = (lp - lm) / ((double)xp - (double)xm), err = fabs(fd - grads[t][i]);

			if (err > worst)
				worst = err;
			assert_true(err < 1e-5 + 1e-4 * fabs(fd));
		}
	/* Something non-trivial was compared: not every gradient is zero. */
	double mag = 0.0;
	for (int i = 0; i < N; i++)
		mag += fabs(dq[i]) + fabs(dk[i]) + fabs(dv[i]);
	assert_true(mag > 1e-2);
	(void)worst;
}

static void test_attention_bwd_matches_finite_differences(void **state)
{
	(void)state;
	check_bwd_against_finite_differences(0);
}

static void test_attention_bwd_causal_matches_finite_differences(void **state)
{
	(void)state;
	check_bwd_against_finite_differences(1);
}

static void test_attention_bwd_causal_last_key_sees_only_the_last_row(void **state)
{
	/* Causal: the last key is seen only by the last query row, with weight
	 * P = exp(scale q.k - lse), so dV of that key is P * dout of that row. */
	enum { S = 3, DIM = 2, N = S * DIM };
	float q[N] = { 1, 2, -1, 0.5f, 0.3f, -0.2f }, k[N] = { 0.1f, 0.4f, -0.3f, 1, 2, -1 };
	float v[N] = { 1, 1, 2, 2, 3, -3 }, g[N] = { 0.5f, -1, 2, 1, -0.25f, 4 };
	double dq[N], dk[N], dv[N], o[DIM], lse;

	(void)state;
	assert_int_equal(kpt_ref_attn_bwd(q, k, v, g, DIM, S, DIM, 1.0, 1, dq, dk, dv), 0);
	assert_int_equal(kpt_ref_attn_row_lse(q + 4, k, v, DIM, S, DIM, 1.0, o, &lse), 0);
	double p = exp(((double)q[4] * k[4] + (double)q[5] * k[5]) - lse);
	assert_true(fabs(dv[4] - p * g[4]) < 1e-12);
	assert_true(fabs(dv[5] - p * g[5]) < 1e-12);
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
		cmocka_unit_test(test_attention_lse_of_two_keys),
		cmocka_unit_test(test_attention_bwd_matches_finite_differences),
		cmocka_unit_test(test_attention_bwd_causal_matches_finite_differences),
		cmocka_unit_test(test_attention_bwd_causal_last_key_sees_only_the_last_row),
		cmocka_unit_test(test_moe_topk_is_sorted_and_weights_sum_to_one),
		cmocka_unit_test(test_moe_token_range_matches_whole_run),
		cmocka_unit_test(test_moe_single_expert_is_a_plain_ffn),
		cmocka_unit_test(test_moe_ties_choose_the_lower_expert),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
