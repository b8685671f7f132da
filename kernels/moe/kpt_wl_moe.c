/* kpt_wl_moe.c - the moe family's workloads (see kpt_workload.h).
 *
 * One iteration is one MoE layer forward (router, permute, expert FFN,
 * combine) through kpt_moe_forward with the entry's FFN pin (struct moe_wl):
 * AUTO by default; the `default` suite's entries (PIN_DEFAULT) ask for the
 * wgmma grouped FFN of moe_ffn_sm90.cu themselves where AUTO would take a
 * wgmma FFN (on an H100 or H200: one launch per GEMM, which their baselines
 * recorded; baselines/README.md), so that AUTO's choice between it and the
 * clustered kernel (KPT_MOE_AUTO_SM90_MC_FLOPS) leaves their keys alone; SM90
 * and SM90_MC entries ask for the wgmma FFN or its clustered variant
 * (moe_ffn_sm90_mc.cu; names with ".mc") and take AUTO where it cannot run
 * (not a compute capability 9.0 GPU, or no sm_90a code built). Inputs: x uniform
 * in [-1, 1), router weights in +-4/sqrt(hidden) (distinct probabilities),
 * W1 in +-2/sqrt(hidden), W2 in +-2/sqrt(ffn). The check compares up to
 * CHECK_TOKENS tokens with the float64 reference of ref_moe.h (relative
 * error < 1e-2), skipping tokens whose top-k choice is a near tie. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kpt_moe.h"
#include "kpt_workload.h"
#include "ref_moe.h"

#define CHECK_TOKENS 16

/* The FFN implementation an entry runs. */
enum moe_pin {
	PIN_AUTO = 0,
	PIN_SM90, /* wgmma grouped GEMM where it runs, else AUTO */
	PIN_SM90_MC, /* its clustered variant (TMA multicast) where it runs, else AUTO */
	PIN_DEFAULT, /* AUTO, but PIN_SM90 where AUTO would take a wgmma FFN: the `default` suite */
};

static const enum kpt_moe_ffn_impl pin_impl[] = {
	[PIN_AUTO] = KPT_MOE_FFN_AUTO,
	[PIN_SM90] = KPT_MOE_FFN_GROUPED_SM90,
	[PIN_SM90_MC] = KPT_MOE_FFN_GROUPED_SM90_MC,
	[PIN_DEFAULT] = KPT_MOE_FFN_AUTO,
};

/* A workload's cfg: the layer and its FFN pin. */
struct moe_wl {
	struct kpt_moe_cfg m;
	enum moe_pin pin;
};

struct moe_state {
	struct kpt_moe *plan;
	void *x, *y, *wg, *w1, *w2;
};

static void moe_teardown(const struct kpt_workload *w, struct kpt_wl_ctx *c)
{
	struct moe_state *st = c->state;

	if (!st)
		return;
	kpt_moe_destroy(st->plan);
	cudaFree(st->x);
	cudaFree(st->y);
	cudaFree(st->wg);
	cudaFree(st->w1);
	cudaFree(st->w2);
	free(st);
	c->state = NULL;
}

/* KPT_MOE_FFN=grouped|cublas|sm90|sm90mc in the environment: what the
 * PIN_AUTO and PIN_DEFAULT entries ask for instead of AUTO (a benchmarking
 * knob: the same workload on each FFN path; SM90 entries keep theirs). */
static int auto_override(enum kpt_moe_ffn_impl *impl, struct kpt_diag *d)
{
	static const struct { const char *name; enum kpt_moe_ffn_impl impl; } names[] = {
		{ "grouped", KPT_MOE_FFN_GROUPED },
		{ "cublas", KPT_MOE_FFN_CUBLAS },
		{ "sm90", KPT_MOE_FFN_GROUPED_SM90 },
		{ "sm90mc", KPT_MOE_FFN_GROUPED_SM90_MC },
	};
	const char *v = getenv("KPT_MOE_FFN");

	*impl = KPT_MOE_FFN_AUTO;
	if (!v || !*v)
		return 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(v, names[i].name) == 0) {
			*impl = names[i].impl;
			return 0;
		}
	return kpt_diag_set(d, KPT_E_INVAL, "KPT_MOE_FFN=%.40s: not grouped, cublas, sm90 or sm90mc", v);
}

/* The entry's plan; a PIN_SM90 or PIN_SM90_MC entry that cannot have its
 * FFN here gets AUTO's plan. PIN_DEFAULT without KPT_MOE_FFN: GROUPED_SM90
 * from AUTO's wgmma crossover on, AUTO where that cannot run or below it
 * (what AUTO chose when the baselines were recorded, whatever
 * KPT_MOE_AUTO_SM90_MC_FLOPS says now). */
static int create_plan(const struct moe_wl *wl, struct kpt_moe **plan, struct kpt_diag *d)
{
	const struct kpt_moe_cfg *m = &wl->m;
	enum kpt_moe_ffn_impl impl = pin_impl[wl->pin];
	int rc;

	if ((wl->pin == PIN_AUTO || wl->pin == PIN_DEFAULT) && (rc = auto_override(&impl, d)) < 0)
		return rc;
	const int fallback = wl->pin == PIN_SM90 || wl->pin == PIN_SM90_MC ||
			     (wl->pin == PIN_DEFAULT && impl == KPT_MOE_FFN_AUTO &&
			      kpt_moe_ffn_flops(m) >= KPT_MOE_AUTO_SM90_FLOPS);
	if (wl->pin == PIN_DEFAULT && fallback)
		impl = KPT_MOE_FFN_GROUPED_SM90;
	rc = kpt_moe_create(plan, m, impl, d);

	if (rc == KPT_E_UNSUPPORTED && fallback)
		rc = kpt_moe_create(plan, m, KPT_MOE_FFN_AUTO, d);
	return rc;
}

static int moe_setup(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct moe_wl *wl = w->cfg;
	const struct kpt_moe_cfg *m = &wl->m;
	struct moe_state *st = calloc(1, sizeof *st);
	size_t nx = (size_t)m->tokens * m->hidden, nw = (size_t)m->experts * m->hidden * m->ffn;
	float sh = 1.0f / sqrtf((float)m->hidden), sf = 1.0f / sqrtf((float)m->ffn);
	int rc;

	if (!(c->state = st))
		return kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory", w->name);
	if ((rc = create_plan(wl, &st->plan, d)) < 0 || (rc = kpt_moe_set_plant(st->plan, c->plant_pct, d)) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&st->x, nx * 2))) < 0 || (rc = KPT_CUDA(d, cudaMalloc(&st->y, nx * 2))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&st->wg, (size_t)m->experts * m->hidden * 2))) < 0 ||
	    (rc = KPT_CUDA(d, cudaMalloc(&st->w1, nw * 2))) < 0 || (rc = KPT_CUDA(d, cudaMalloc(&st->w2, nw * 2))) < 0 ||
	    (rc = kpt_wl_fill_bf16(st->x, nx, kpt_wl_subseed(c->seed, 0), -1.f, 1.f, c->stream, d)) < 0 ||
	    (rc = kpt_wl_fill_bf16(st->wg, (size_t)m->experts * m->hidden, kpt_wl_subseed(c->seed, 1), -4 * sh, 4 * sh,
				   c->stream, d)) < 0 ||
	    (rc = kpt_wl_fill_bf16(st->w1, nw, kpt_wl_subseed(c->seed, 2), -2 * sh, 2 * sh, c->stream, d)) < 0 ||
	    (rc = kpt_wl_fill_bf16(st->w2, nw, kpt_wl_subseed(c->seed, 3), -2 * sf, 2 * sf, c->stream, d)) < 0)
		return rc;
	return KPT_CUDA(d, cudaStreamSynchronize(c->stream));
}

static int moe_run(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	struct moe_state *st = c->state;

	return kpt_moe_forward(st->plan, st->y, st->x, st->wg, st->w1, st->w2, c->stream, d);
}

static int moe_poison(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct kpt_moe_cfg *m = &((const struct moe_wl *)w->cfg)->m;
	struct moe_state *st = c->state;

	return kpt_wl_poison(st->y, (size_t)m->tokens * m->hidden * 2, c->stream, d);
}

/* bf16 device array -> new float host array (NULL on failure, d filled). */
static float *fetch_bf16(const void *dev, size_t n, struct kpt_diag *d)
{
	uint16_t *h = malloc(n * 2 + 2);
	float *f = malloc(n * 4 + 4);

	if (!h || !f) {
		kpt_diag_set(d, KPT_E_NOMEM, "out of memory for a check (%zu elements)", n);
		goto fail;
	}
	if (KPT_CUDA(d, cudaMemcpy(h, dev, n * 2, cudaMemcpyDeviceToHost)) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		uint32_t u = (uint32_t)h[i] << 16;

		memcpy(&f[i], &u, 4);
	}
	free(h);
	return f;
fail:
	free(h);
	free(f);
	return NULL;
}

static int moe_check(const struct kpt_workload *w, struct kpt_wl_ctx *c, struct kpt_diag *d)
{
	const struct kpt_moe_cfg *m = &((const struct moe_wl *)w->cfg)->m;
	struct moe_state *st = c->state;
	const struct kpt_ref_moe_shape sh = { m->tokens, m->hidden, m->ffn, m->experts, m->top_k };
	size_t nx = (size_t)m->tokens * m->hidden, nw = (size_t)m->experts * m->hidden * m->ffn;
	float *x = fetch_bf16(st->x, nx, d), *y = x ? fetch_bf16(st->y, nx, d) : NULL;
	float *wg = y ? fetch_bf16(st->wg, (size_t)m->experts * m->hidden, d) : NULL;
	float *w1 = wg ? fetch_bf16(st->w1, nw, d) : NULL, *w2 = w1 ? fetch_bf16(st->w2, nw, d) : NULL;
	double *ry = malloc((size_t)m->hidden * sizeof *ry), *rw = malloc((size_t)m->top_k * sizeof *rw);
	int *rid = malloc((size_t)m->top_k * sizeof *rid);
	double num = 0, den = 0, margin;
	long long bad = 0, checked = 0;
	int rc = 0, step = m->tokens > CHECK_TOKENS ? m->tokens / CHECK_TOKENS : 1;

	if (!w2) {
		rc = d ? d->code : KPT_E_NOMEM;
		goto done;
	}
	if (!ry || !rw || !rid) {
		rc = kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory for the check", w->name);
		goto done;
	}
	for (size_t i = 0; i < nx; i++)
		bad += !isfinite(y[i]);
	for (int t = 0; t < m->tokens; t += step) {
		if (kpt_ref_moe(&sh, x, wg, w1, w2, t, t + 1, ry, rid, rw, &margin)) {
			rc = kpt_diag_set(d, KPT_E_NOMEM, "%s: out of memory for the check", w->name);
			goto done;
		}
		if (margin < 1e-4) /* a near tie: fp32 and float64 logits may choose differently */
			continue;
		checked++;
		for (int h = 0; h < m->hidden; h++) {
			double e = y[(size_t)t * m->hidden + h] - ry[h];

			num += e * e;
			den += ry[h] * ry[h];
		}
	}
	if (bad)
		rc = kpt_diag_set(d, KPT_E_MISMATCH, "'%s' is wrong: %lld outputs not written or not finite", w->name, bad);
	else if (checked && !(sqrt(num / den) < 1e-2))
		rc = kpt_diag_set(d, KPT_E_MISMATCH,
				  "'%s' is wrong: relative error %.3g over %lld tokens against the float64 reference",
				  w->name, sqrt(num / den), checked);
done:
	free(x);
	free(y);
	free(wg);
	free(w1);
	free(w2);
	free(ry);
	free(rw);
	free(rid);
	return rc;
}

/* moe.layer.e<E>.top<K>.h<H>[.f<F>].b<B>.s<S>: tokens = B * S; FFN FLOPs
 * 4*T*K*H*F plus the router's 2*T*H*E; bytes: x, y and every weight once.
 * PIN: enum moe_pin (PIN_AUTO, PIN_DEFAULT for the `default` suite, PIN_SM90
 * or PIN_SM90_MC for the wgmma FFNs' own entries).
 * Plantable: every pin, whose plant is the wgmma FFN's
 * (kpt_moe_set_plant: PCT% more tiles in each GEMM); where the plan runs
 * another FFN (not a 9.0 GPU, a small AUTO layer, KPT_MOE_FFN=grouped|cublas)
 * setup refuses the plant (KPT_E_UNSUPPORTED). */
#define MOE(E, K, H, F, B, S, FN, SUITES, PIN)                                                             \
	{ "moe.layer.e" #E ".top" #K ".h" #H FN ".b" #B ".s" #S, "moe", SUITES,                              \
	  4.0 * B * S * K * (double)H * F + 2.0 * B * S * (double)H * E,                                      \
	  2.0 * B * S * H * 2 + (double)E * H * 2 + 2.0 * E * (double)H * F * 2,                              \
	  &(const struct moe_wl){ { B * S, H, F, E, K }, PIN }, 1, moe_setup,                                    \
	  moe_run, moe_poison, moe_check, moe_teardown }

/* The `default` entries are PIN_DEFAULT: 34, 137 and 1650 GFLOP of FFN work,
 * the wgmma FFN of moe_ffn_sm90.cu on a 9.0 GPU (from
 * KPT_MOE_AUTO_SM90_FLOPS), their baselines' kernels since 2026-11-26 (they were pinned to the mma.sync grouped GEMM
 * and per-expert cuBLAS before, whose per-expert GEMMs spread between
 * machines and made the gate's MoE keys AMBG). The two issue-24 goal shapes have SM90 twins outside `default` (the same layer,
 * the tokens split differently so the names differ): e8 h512 f2048 4096
 * tokens and e128 top-8 h2048 f768 32768 tokens. The SM90 check entries
 * route awkwardly: 1000 and 777 tokens (row counts no multiple of 128),
 * experts with no rows (e64 top-1 over 37 tokens), ffn and hidden odd
 * multiples of 128 (the 128-column tiles), and e8 h2048 f2048 over 2100
 * tokens (36 row tiles x 8: the 256-column tiles in both GEMMs on an H100
 * or H200, 132 SMs). */
static const struct kpt_workload moe_workloads[] = {
	MOE(4, 1, 128, 512, 1, 64, "", "quick", PIN_AUTO),
	MOE(8, 2, 512, 2048, 32, 128, "", "seed default", PIN_DEFAULT),
	MOE(8, 2, 1024, 4096, 32, 128, "", "seed default", PIN_DEFAULT),
	MOE(128, 8, 2048, 768, 32, 1024, ".f768", "default bench", PIN_DEFAULT),
	MOE(64, 6, 1024, 512, 8, 512, ".f512", "bench", PIN_AUTO),
	MOE(8, 2, 512, 2048, 8, 512, ".f2048", "bench", PIN_SM90),
	MOE(128, 8, 2048, 768, 8, 4096, ".f768", "bench", PIN_SM90),
	MOE(8, 2, 512, 2048, 8, 512, ".f2048.mc", "bench", PIN_SM90_MC),
	MOE(128, 8, 2048, 768, 8, 4096, ".f768.mc", "bench", PIN_SM90_MC),
	MOE(16, 3, 256, 512, 1, 1000, ".f512", "check", PIN_AUTO),
	MOE(8, 2, 128, 256, 1, 1, ".f256", "check", PIN_AUTO),
	MOE(16, 3, 256, 512, 2, 500, ".f512", "check", PIN_SM90),
	MOE(8, 2, 128, 256, 1, 2, ".f256", "check", PIN_SM90),
	MOE(64, 1, 384, 640, 1, 37, ".f640", "check", PIN_SM90),
	MOE(32, 4, 512, 1024, 1, 777, ".f1024", "check", PIN_SM90),
	MOE(8, 2, 2048, 2048, 1, 2100, ".f2048", "check", PIN_SM90),
	MOE(16, 3, 256, 512, 2, 500, ".f512.mc", "check", PIN_SM90_MC),
	MOE(8, 2, 128, 256, 1, 2, ".f256.mc", "check", PIN_SM90_MC),
	MOE(64, 1, 384, 640, 1, 37, ".f640.mc", "check", PIN_SM90_MC),
	MOE(32, 4, 512, 1024, 1, 777, ".f1024.mc", "check", PIN_SM90_MC),
	MOE(8, 2, 2048, 2048, 1, 2100, ".f2048.mc", "check", PIN_SM90_MC),
};

const struct kpt_wl_family kpt_wl_family_moe = {
	"moe", moe_workloads, sizeof moe_workloads / sizeof moe_workloads[0]
};
