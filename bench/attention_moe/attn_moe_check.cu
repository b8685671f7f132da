/* attn_moe_check.cu - correctness against the float64 CPU references and
 * timing of the attention and MoE kernels, independent of kpt-workloads.
 *
 *   kpt-attn-moe check [quick]   every kernel and variant on fresh random
 *                                inputs (never zeros), outputs poisoned with
 *                                NaN first, awkward sizes; exit 0 pass, 1 fail,
 *                                77 no GPU, 2 bad usage
 *   kpt-attn-moe bench [attn|decode|moe]...   timing tables (median of
 *                                CUDA-event timed repetitions after warm-up;
 *                                attn's e4m3 rows: each e4m3 kernel in 3
 *                                alternating rounds, * marks the default)
 *   kpt-attn-moe --seed N ...    fixes the input seed (default: time-based)
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <string>
#include <vector>

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "kpt_attention.h"
#include "kpt_attn_path.h"
#include "kpt_moe.h"
#include "ref_attention.h"
#include "ref_moe.h"

static uint64_t g_seed;
static int g_fail;

#define CK(call)                                                                                    \
	do {                                                                                        \
		cudaError_t e_ = (call);                                                            \
		if (e_ != cudaSuccess) {                                                            \
			fprintf(stderr, "kpt-attn-moe: %s:%d: %s: %s\n", __FILE__, __LINE__, #call,  \
				cudaGetErrorString(e_));                                            \
			exit(1);                                                                    \
		}                                                                                   \
	} while (0)
#define KCK(call)                                                                                  \
	do {                                                                                       \
		struct kpt_diag d_;                                                                \
		if ((call) != 0) {                                                                 \
			fprintf(stderr, "kpt-attn-moe: %s:%d: %s\n", __FILE__, __LINE__, d_.msg);   \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
/* KCK passes &d_ as the diag: write the call with DG for it. */
#define DG (&d_)

static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi), rounded to the 16-bit type: host holds the exact
 * values the device sees. */
static void fill16(std::vector<float> &h, std::vector<uint16_t> &bits, size_t n, float lo, float hi, int fp16)
{
	h.resize(n);
	bits.resize(n);
	uint64_t s = rng_next(&g_seed);
	for (size_t i = 0; i < n; i++) {
		float u = (float)((rng_next(&s) >> 40) * (1.0 / 16777216.0));
		float v = lo + (hi - lo) * u;
		if (fp16) {
			__half x = __float2half_rn(v);
			h[i] = __half2float(x);
			memcpy(&bits[i], &x, 2);
		} else {
			__nv_bfloat16 x = __float2bfloat16_rn(v);
			h[i] = __bfloat162float(x);
			memcpy(&bits[i], &x, 2);
		}
	}
}

static float from16(uint16_t b, int fp16)
{
	if (fp16) {
		__half x;
		memcpy(&x, &b, 2);
		return __half2float(x);
	}
	__nv_bfloat16 x;
	memcpy(&x, &b, 2);
	return __bfloat162float(x);
}

static void *dev_copy(const std::vector<uint16_t> &v)
{
	void *p;
	CK(cudaMalloc(&p, v.size() * 2 + 16));
	CK(cudaMemcpy(p, v.data(), v.size() * 2, cudaMemcpyHostToDevice));
	return p;
}

/* Relative error ||a - r|| / ||r|| over the pairs added; NaN never passes. */
struct relerr {
	double num = 0, den = 0;
	long long bad = 0;
	void add(double a, double r)
	{
		if (!isfinite(a))
			bad++;
		num += (a - r) * (a - r);
		den += r * r;
	}
	double value() const { return bad ? INFINITY : sqrt(num / (den > 0 ? den : 1e-300)); }
};

static void report(const char *what, const relerr &e, double tol)
{
	double v = e.value();
	int ok = v < tol;
	if (!ok)
		g_fail++;
	printf("%-4s %-64s relerr %.2e (tol %.0e)%s\n", ok ? "ok" : "FAIL", what, v, tol,
	       e.bad ? " non-finite outputs" : "");
}

/* ---- attention forward ------------------------------------------------------ */

/* Names of enum kpt_attn_tiles, in its order. */
static const char *const tile_names[KPT_ATTN_TILES_COUNT] = {
	"auto", "128x64", "64x64", "64x128", "128x64.r32", "128x128.r32", "256x64.r32", "128x64.r32.db",
	"128x128.r32.db", "128x128.wgmma",
};

/* "auto=<variant run>" for AUTO, else the variant's name, into buf. */
static const char *tiles_label(const struct kpt_attn_fwd_args *a, char *buf, size_t n)
{
	if (a->tiles != KPT_ATTN_TILES_AUTO)
		return tile_names[a->tiles];
	snprintf(buf, n, "auto=%s", tile_names[kpt_attn_fwd_tiles(a)]);
	return buf;
}

/* Returns 0 when the variant ran (and was checked), KPT_E_UNSUPPORTED when
 * it is not built for these arguments or this device. */
static int check_fwd(int fp16, int B, int H, int S, int D, int causal, int bshd, int tiles, int max_rows)
{
	size_t n = (size_t)B * H * S * D;
	std::vector<float> q, k, v;
	std::vector<uint16_t> qb, kb, vb, ob(n);
	fill16(q, qb, n, -1.f, 1.f, fp16);
	fill16(k, kb, n, -1.f, 1.f, fp16);
	fill16(v, vb, n, -1.f, 1.f, fp16);
	void *dq = dev_copy(qb), *dk = dev_copy(kb), *dv = dev_copy(vb), *dout;
	CK(cudaMalloc(&dout, n * 2));
	CK(cudaMemset(dout, 0xff, n * 2));
	struct kpt_attn_fwd_args a;
	memset(&a, 0, sizeof a);
	a.q = dq, a.k = dk, a.v = dv, a.o = dout;
	a.batch = B, a.heads = H, a.seq = S, a.head_dim = D;
	if (bshd) {
		a.stride_s = (long long)H * D, a.stride_h = D, a.stride_b = (long long)S * H * D;
	} else {
		a.stride_s = D, a.stride_h = (long long)S * D, a.stride_b = (long long)H * S * D;
	}
	a.scale = 1.f / sqrtf((float)D);
	a.causal = causal;
	a.dtype = fp16 ? KPT_ATTN_FP16 : KPT_ATTN_BF16;
	a.tiles = (enum kpt_attn_tiles)tiles;
	struct kpt_diag dg;
	int rc = kpt_attn_fwd(&a, 0, &dg);
	if (rc == KPT_E_UNSUPPORTED) { /* a tile variant this type or device does not build */
		cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dout);
		return rc;
	}
	if (rc) {
		fprintf(stderr, "kpt-attn-moe: %s\n", dg.msg);
		exit(1);
	}
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(ob.data(), dout, n * 2, cudaMemcpyDeviceToHost));
	relerr e;
	/* Every element must have been written (no NaN left from the poison). */
	for (size_t i = 0; i < n; i++)
		if (!isfinite(from16(ob[i], fp16)))
			e.bad++;
	std::vector<double> ref(D);
	/* All rows of small problems; evenly spaced rows and the last row of large ones. */
	std::vector<int> rows;
	int step = S > max_rows ? S / max_rows : 1;
	for (int i = 0; i < S; i += step)
		rows.push_back(i);
	if (rows.back() != S - 1)
		rows.push_back(S - 1);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++)
			for (int i : rows) {
				size_t base = b * a.stride_b + h * a.stride_h;
				size_t qi = base + i * a.stride_s;
				int nk = causal ? i + 1 : S;
				if (kpt_ref_attn_row(&q[qi], &k[base], &v[base], a.stride_s, nk, D, a.scale, ref.data()))
					exit(1);
				for (int c = 0; c < D; c++)
					e.add(from16(ob[qi + c], fp16), ref[c]);
			}
	char what[160], label[48];
	snprintf(what, sizeof what, "attn fwd %s d%d B%d H%d S%d %s %s %s", fp16 ? "fp16" : "bf16", D, B, H, S,
		 causal ? "causal" : "full", bshd ? "bshd" : "bhsd", tiles_label(&a, label, sizeof label));
	report(what, e, fp16 ? 5e-3 : 1e-2);
	cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dout);
	return 0;
}

/* ---- decode ----------------------------------------------------------------- */

static void check_decode(int fp16, int B, int H, int HKV, int L, int D, int chunk)
{
	size_t nq = (size_t)B * H * D, nkv = (size_t)B * HKV * L * D;
	std::vector<float> q, k, v;
	std::vector<uint16_t> qb, kb, vb, ob(nq);
	fill16(q, qb, nq, -1.f, 1.f, fp16);
	fill16(k, kb, nkv, -1.f, 1.f, fp16);
	fill16(v, vb, nkv, -1.f, 1.f, fp16);
	void *dq = dev_copy(qb), *dk = dev_copy(kb), *dv = dev_copy(vb), *dout, *ws;
	size_t wsb = kpt_attn_decode_ws_bytes(B, H, L, D);
	CK(cudaMalloc(&dout, nq * 2));
	CK(cudaMalloc(&ws, wsb));
	CK(cudaMemset(dout, 0xff, nq * 2));
	CK(cudaMemset(ws, 0xff, wsb));
	struct kpt_attn_decode_args a;
	memset(&a, 0, sizeof a);
	a.q = dq, a.k_cache = dk, a.v_cache = dv, a.o = dout;
	a.batch = B, a.heads = H, a.kv_heads = HKV, a.ctx = L, a.head_dim = D;
	a.kv_stride_s = D, a.kv_stride_h = (long long)L * D, a.kv_stride_b = (long long)HKV * L * D;
	a.scale = 1.f / sqrtf((float)D);
	a.dtype = fp16 ? KPT_ATTN_FP16 : KPT_ATTN_BF16;
	a.chunk = chunk;
	a.ws = ws, a.ws_bytes = wsb;
	KCK(kpt_attn_decode(&a, 0, DG));
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(ob.data(), dout, nq * 2, cudaMemcpyDeviceToHost));
	relerr e;
	std::vector<double> ref(D);
	for (int b = 0; b < B; b++)
		for (int h = 0; h < H; h++) {
			size_t kvb = b * a.kv_stride_b + (h / (H / HKV)) * a.kv_stride_h;
			size_t qi = ((size_t)b * H + h) * D;
			if (kpt_ref_attn_row(&q[qi], &k[kvb], &v[kvb], D, L, D, a.scale, ref.data()))
				exit(1);
			for (int c = 0; c < D; c++)
				e.add(from16(ob[qi + c], fp16), ref[c]);
		}
	char what[160];
	snprintf(what, sizeof what, "attn decode %s d%d B%d H%d/%d ctx%d chunk%d", fp16 ? "fp16" : "bf16", D, B, H,
		 HKV, L, chunk);
	report(what, e, fp16 ? 5e-3 : 1e-2);
	cudaFree(dq), cudaFree(dk), cudaFree(dv), cudaFree(dout), cudaFree(ws);
}

/* ---- MoE -------------------------------------------------------------------- */

struct moe_inputs {
	std::vector<float> x, wg, w1, w2;
	void *dx, *dwg, *dw1, *dw2, *dy;
};

static void moe_make(moe_inputs &in, const kpt_moe_cfg &c)
{
	std::vector<uint16_t> b;
	float sh = 1.f / sqrtf((float)c.hidden), sf = 1.f / sqrtf((float)c.ffn);
	fill16(in.x, b, (size_t)c.tokens * c.hidden, -1.f, 1.f, 0);
	in.dx = dev_copy(b);
	fill16(in.wg, b, (size_t)c.experts * c.hidden, -4 * sh, 4 * sh, 0);
	in.dwg = dev_copy(b);
	fill16(in.w1, b, (size_t)c.experts * c.ffn * c.hidden, -2 * sh, 2 * sh, 0);
	in.dw1 = dev_copy(b);
	fill16(in.w2, b, (size_t)c.experts * c.hidden * c.ffn, -2 * sf, 2 * sf, 0);
	in.dw2 = dev_copy(b);
	CK(cudaMalloc(&in.dy, (size_t)c.tokens * c.hidden * 2));
}

static void moe_free(moe_inputs &in)
{
	cudaFree(in.dx), cudaFree(in.dwg), cudaFree(in.dw1), cudaFree(in.dw2), cudaFree(in.dy);
}

/* Names of enum kpt_moe_ffn_impl, in its order. */
static const char *const moe_impl_names[] = { "grouped", "cublas", "auto", "sm90", "sm90mc" };

/* One forward of impl on in against the float64 reference (max_tokens
 * tokens of it), y poisoned with NaN first; plant: kpt_moe_set_plant's pct.
 * *out (when not NULL) gets y's bits. False (a "skip" line) where an sm_90a
 * FFN cannot run on this device. */
static bool check_moe_in(moe_inputs &in, const kpt_moe_cfg &c, int impl, int max_tokens, int gtiles, int plant,
			 std::vector<uint16_t> *out)
{
	struct kpt_moe *m;
	struct kpt_diag cd;
	int rc = kpt_moe_create(&m, &c, (enum kpt_moe_ffn_impl)impl, &cd);
	if (rc == KPT_E_UNSUPPORTED && impl >= KPT_MOE_FFN_GROUPED_SM90) {
		printf("skip moe %s T%d H%d F%d E%d k%d: %s\n", moe_impl_names[impl], c.tokens, c.hidden, c.ffn,
		       c.experts, c.top_k, cd.msg);
		return false;
	}
	if (rc != 0) {
		fprintf(stderr, "kpt-attn-moe: %s\n", cd.msg);
		exit(1);
	}
	KCK(kpt_moe_set_gemm_tiles(m, gtiles, gtiles, DG));
	KCK(kpt_moe_set_plant(m, plant, DG));
	CK(cudaMemset(in.dy, 0xff, (size_t)c.tokens * c.hidden * 2));
	KCK(kpt_moe_forward(m, in.dy, in.dx, in.dwg, in.dw1, in.dw2, 0, DG));
	CK(cudaDeviceSynchronize());
	std::vector<uint16_t> yb((size_t)c.tokens * c.hidden);
	std::vector<int> ids((size_t)c.tokens * c.top_k);
	std::vector<float> wts(ids.size());
	CK(cudaMemcpy(yb.data(), in.dy, yb.size() * 2, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(ids.data(), kpt_moe_topk_ids(m), ids.size() * 4, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(wts.data(), kpt_moe_topk_weights(m), wts.size() * 4, cudaMemcpyDeviceToHost));
	relerr e, ew;
	long long skipped = 0, idmiss = 0;
	for (size_t i = 0; i < yb.size(); i++)
		if (!isfinite(from16(yb[i], 0)))
			e.bad++;
	int step = c.tokens > max_tokens ? c.tokens / max_tokens : 1;
	struct kpt_ref_moe_shape sh = { c.tokens, c.hidden, c.ffn, c.experts, c.top_k };
	std::vector<double> ry(c.hidden), rw(c.top_k);
	std::vector<int> rid(c.top_k);
	for (int t = 0; t < c.tokens; t += step) {
		double margin;
		if (kpt_ref_moe(&sh, in.x.data(), in.wg.data(), in.w1.data(), in.w2.data(), t, t + 1, ry.data(),
				rid.data(), rw.data(), &margin))
			exit(1);
		if (margin < 1e-4) { /* a near tie: fp32 and float64 logits may pick differently */
			skipped++;
			continue;
		}
		for (int j = 0; j < c.top_k; j++) {
			idmiss += ids[(size_t)t * c.top_k + j] != rid[j];
			ew.add(wts[(size_t)t * c.top_k + j], rw[j]);
		}
		for (int h = 0; h < c.hidden; h++)
			e.add(from16(yb[(size_t)t * c.hidden + h], 0), ry[h]);
	}
	char what[200];
	snprintf(what, sizeof what, "moe %s T%d H%d F%d E%d k%d tiles%d plant%d%s", moe_impl_names[impl], c.tokens,
		 c.hidden, c.ffn, c.experts, c.top_k, gtiles, plant, skipped ? " (near ties skipped)" : "");
	if (idmiss) {
		g_fail++;
		printf("FAIL %s: %lld expert ids differ from the reference\n", what, idmiss);
	}
	std::string w2s = std::string(what) + " weights";
	report(w2s.c_str(), ew, 1e-4);
	report(what, e, 1e-2);
	kpt_moe_destroy(m);
	if (out)
		*out = yb;
	return true;
}

static void check_moe(const kpt_moe_cfg &c, int impl, int max_tokens, int gtiles = 0)
{
	moe_inputs in;
	moe_make(in, c);
	check_moe_in(in, c, impl, max_tokens, gtiles, 0, NULL);
	moe_free(in);
}

/* The two sm_90a FFNs on the same inputs: each against the reference, and
 * the clustered one (moe_ffn_sm90_mc.cu) bit for bit against the old one
 * (the same wgmma sequence per tile), also with a plant of 37% (whole
 * pairs done again: the output must not change). */
static void check_moe_sm90(const kpt_moe_cfg &c, int max_tokens)
{
	moe_inputs in;
	moe_make(in, c);
	std::vector<uint16_t> y0, y1, y2;
	if (check_moe_in(in, c, KPT_MOE_FFN_GROUPED_SM90, max_tokens, 0, 0, &y0) &&
	    check_moe_in(in, c, KPT_MOE_FFN_GROUPED_SM90_MC, max_tokens, 0, 0, &y1) &&
	    check_moe_in(in, c, KPT_MOE_FFN_GROUPED_SM90_MC, max_tokens, 0, 37, &y2)) {
		size_t d1 = 0, d2 = 0;
		for (size_t i = 0; i < y0.size(); i++) {
			d1 += y1[i] != y0[i];
			d2 += y2[i] != y1[i];
		}
		printf("%-4s moe sm90mc == sm90 bit for bit T%d H%d F%d E%d k%d: %zu differ; plant 37%%: %zu differ\n",
		       d1 || d2 ? "FAIL" : "ok", c.tokens, c.hidden, c.ffn, c.experts, c.top_k, d1, d2);
		g_fail += d1 || d2;
	}
	moe_free(in);
}

static void check_bad_args(void)
{
	struct kpt_attn_fwd_args a;
	struct kpt_diag d;
	memset(&a, 0, sizeof a);
	int rc = kpt_attn_fwd(&a, 0, &d);
	int ok = rc == KPT_E_INVAL;
	char buf[16];
	a.q = a.k = a.v = a.o = buf;
	a.batch = a.heads = a.seq = 1;
	a.head_dim = 96;
	a.stride_s = 96;
	ok &= kpt_attn_fwd(&a, 0, &d) == KPT_E_UNSUPPORTED;
	struct kpt_moe *m;
	struct kpt_moe_cfg c = { 16, 100, 400, 8, 2 };
	ok &= kpt_moe_create(&m, &c, KPT_MOE_FFN_GROUPED, &d) == KPT_E_INVAL && m == NULL;
	if (!ok)
		g_fail++;
	struct kpt_moe_cfg c2 = { 16, 128, 384, 8, 2 };
	if (kpt_moe_create(&m, &c2, KPT_MOE_FFN_GROUPED, &d) == 0) {
		ok &= kpt_moe_set_gemm_tiles(m, 4, 0, &d) == KPT_E_INVAL; /* 256-wide tile, ffn 384 */
		ok &= kpt_moe_set_gemm_tiles(m, 6, 0, &d) == KPT_E_INVAL;
		ok &= kpt_moe_set_gemm_tiles(m, 3, 1, &d) == 0;
		kpt_moe_destroy(m);
	} else {
		ok = 0;
	}
	printf("%-4s bad arguments are refused with KPT_E_INVAL / KPT_E_UNSUPPORTED\n", ok ? "ok" : "FAIL");
}

static int run_checks(int quick)
{
	check_bad_args();
	std::vector<int> tiles_list;
	for (int t = 0; t < KPT_ATTN_TILES_COUNT; t++)
		tiles_list.push_back(t);
	int wgmma_ran = 0;
	for (int fp16 = 0; fp16 < 2; fp16++)
		for (int D = 64; D <= 128; D += 64)
			for (int causal = 0; causal < 2; causal++) {
				for (int t : tiles_list) {
					check_fwd(fp16, 2, 3, 1, D, causal, 0, t, 64);
					check_fwd(fp16, 1, 2, 77, D, causal, 1, t, 64);
					check_fwd(fp16, 2, 2, 200, D, causal, 0, t, 64);
					if (!quick)
						check_fwd(fp16, 1, 2, 1031, D, causal, 1, t, 48);
				}
				if (!quick && !fp16)
					check_fwd(fp16, 1, 1, 4096, D, causal, 0, 0, 24);
				/* The Hopper kernel (AUTO there; d128 128 query rows, d64
				 * 192, 128 keys a tile) at more awkward shapes: several
				 * batches and heads in both layouts, query blocks and key
				 * tiles cut by seq, seq just under and over a tile. */
				const int wt[2] = { KPT_ATTN_TILES_AUTO, KPT_ATTN_TILES_128x128_WGMMA };
				for (int t : wt) {
					if (check_fwd(fp16, 3, 5, 129, D, causal, 1, t, 129) == 0 &&
					    t == KPT_ATTN_TILES_128x128_WGMMA)
						wgmma_ran = 1;
					check_fwd(fp16, 2, 3, 255, D, causal, 0, t, 64);
					if (D == 64) {
						check_fwd(fp16, 2, 3, 191, D, causal, 1, t, 191);
						check_fwd(fp16, 1, 2, 385, D, causal, 0, t, 64);
					}
					if (!quick) {
						check_fwd(fp16, 2, 3, 1031, D, causal, 0, t, 32);
						check_fwd(fp16, 2, 2, 4223, D, causal, 1, t, 24);
					}
				}
			}
	/* Where the Hopper kernel runs, AUTO must choose it for d64 and d128. */
	{
		struct kpt_attn_fwd_args a;
		memset(&a, 0, sizeof a);
		int ok = 1;
		for (int D = 64; D <= 128; D += 64)
			for (int fp16 = 0; fp16 < 2; fp16++)
				for (int causal = 0; causal < 2; causal++) {
					a.head_dim = D;
					a.dtype = fp16 ? KPT_ATTN_FP16 : KPT_ATTN_BF16;
					a.causal = causal;
					enum kpt_attn_tiles t = kpt_attn_fwd_tiles(&a);
					printf("info AUTO for %s d%d %s runs %s\n", fp16 ? "fp16" : "bf16", D,
					       causal ? "causal" : "full", tile_names[t]);
					if (wgmma_ran && t != KPT_ATTN_TILES_128x128_WGMMA)
						ok = 0;
				}
		if (!ok)
			g_fail++;
		printf("%-4s AUTO picks the wgmma kernel for d64 and d128 where it runs (%s here)\n", ok ? "ok" : "FAIL",
		       wgmma_ran ? "it runs" : "it does not run");
	}
	for (int fp16 = 0; fp16 < 2; fp16++)
		for (int D = 64; D <= 128; D += 64) {
			check_decode(fp16, 3, 4, 4, 1, D, 0);
			check_decode(fp16, 3, 4, 2, 100, D, 0);
			check_decode(fp16, 2, 4, 4, 1000, D, 64);
			check_decode(fp16, 2, 8, 2, 5000, D, 0);
			if (!quick && !fp16)
				check_decode(fp16, 1, 2, 2, 32768, D, 0);
		}
	for (int impl = 0; impl < 2; impl++) {
		check_moe({ 300, 256, 512, 8, 2 }, impl, 300);
		check_moe({ 257, 128, 256, 16, 4 }, impl, 257);
		check_moe({ 1, 128, 128, 4, 1 }, impl, 1);
		if (!quick) {
			check_moe({ 200, 256, 256, 128, 8 }, impl, 200);
			check_moe({ 4096, 512, 2048, 8, 2 }, impl, 48);
		}
	}
	for (int g = 1; g <= 5; g++) {
		check_moe({ 300, 256, 512, 8, 2 }, 0, 300, g);
		check_moe({ 1000, 512, 512, 16, 3 }, 0, 100, g);
	}
	check_moe({ 2000, 512, 1024, 8, 2 }, KPT_MOE_FFN_AUTO, 50);
	/* The wgmma FFNs: odd tile counts per expert (1 tile: T300 E8 k2,
	 * T257 E16 k4; 5: T2100 E8 k2 with 256-column tiles in both GEMMs),
	 * experts with no rows (T1, T37 E64, T200 E128), odd multiples of 128
	 * (h384 f640), E128 top-8, one token. */
	const kpt_moe_cfg sm90_shapes[] = {
		{ 300, 256, 512, 8, 2 },    { 257, 128, 256, 16, 4 },   { 1, 128, 128, 4, 1 },
		{ 37, 384, 640, 64, 1 },    { 200, 256, 256, 128, 8 },  { 1000, 512, 512, 16, 3 },
		{ 777, 512, 1024, 32, 4 },  { 2100, 2048, 2048, 8, 2 }, { 4096, 512, 2048, 8, 2 },
	};
	for (const kpt_moe_cfg &c : sm90_shapes)
		if (!quick || c.tokens * (long long)c.hidden * c.ffn < 1LL << 30)
			check_moe_sm90(c, c.tokens < 300 ? c.tokens : 48);
	if (!quick)
		check_moe_sm90({ 32768, 2048, 768, 128, 8 }, 24);
	printf("%s: %d failure(s)\n", g_fail ? "FAILED" : "PASSED", g_fail);
	return g_fail ? 1 : 0;
}

/* ---- timing ----------------------------------------------------------------- */

template <typename F> static double time_ms(F &&fn, int warm, int reps)
{
	cudaEvent_t a, b;
	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < warm; i++)
		fn(i);
	CK(cudaDeviceSynchronize());
	std::vector<float> t;
	for (int i = 0; i < reps; i++) {
		CK(cudaEventRecord(a));
		fn(i);
		CK(cudaEventRecord(b));
		CK(cudaEventSynchronize(b));
		float ms;
		CK(cudaEventElapsedTime(&ms, a, b));
		t.push_back(ms);
	}
	CK(cudaGetLastError());
	cudaEventDestroy(a);
	cudaEventDestroy(b);
	std::sort(t.begin(), t.end());
	return t[t.size() / 2];
}

/* bf16 uniform in [-1, 1) from a hash of (seed, index), on the device (never zeros
 * in practice: an exact zero has probability 2^-24 per element). */
__global__ void fill_bf16_kernel(__nv_bfloat16 *p, size_t n, uint64_t seed, float amp)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		uint64_t z = seed + i * 0x9e3779b97f4a7c15ull;
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		p[i] = __float2bfloat16_rn(((float)(z >> 40) * (1.f / 16777216.f) * 2.f - 1.f) * amp);
	}
}

static void fill_dev_random(void *p, size_t n16, float amp = 1.f)
{
	fill_bf16_kernel<<<1024, 256>>>((__nv_bfloat16 *)p, n16, rng_next(&g_seed), amp);
	CK(cudaGetLastError());
	CK(cudaDeviceSynchronize());
}

/* MoE inputs filled on the device (large configurations: no host copies). */
static void moe_make_dev(moe_inputs &in, const kpt_moe_cfg &c)
{
	size_t nx = (size_t)c.tokens * c.hidden, nw = (size_t)c.experts * c.ffn * c.hidden;
	CK(cudaMalloc(&in.dx, nx * 2));
	CK(cudaMalloc(&in.dy, nx * 2));
	CK(cudaMalloc(&in.dwg, (size_t)c.experts * c.hidden * 2));
	CK(cudaMalloc(&in.dw1, nw * 2));
	CK(cudaMalloc(&in.dw2, nw * 2));
	fill_dev_random(in.dx, nx);
	fill_dev_random(in.dwg, (size_t)c.experts * c.hidden, 4.f / sqrtf((float)c.hidden));
	fill_dev_random(in.dw1, nw, 2.f / sqrtf((float)c.hidden));
	fill_dev_random(in.dw2, nw, 2.f / sqrtf((float)c.ffn));
}

/* e4m3 bytes of n bf16 values (round to nearest, saturating). */
__global__ void to_e4m3_kernel(uint8_t *d, const __nv_bfloat16 *s, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		d[i] = __nv_fp8_e4m3(__bfloat162float(s[i])).__x;
}

/* The e4m3 forward's kernels (kpt_attn_e4m3_kernel) on q, k, v (bf16 in
 * [-1, 1), n each, [B, H, S, D]) quantized with descale 1: 3 rounds, each
 * timing every kernel once in turn, so that clocks and heat meet both. */
static void bench_attn_e4m3(const void *q, const void *k, const void *v, void *o, int B, int H, int S, int D)
{
	const size_t n = (size_t)B * H * S * D;
	uint8_t *x8, *vt;
	CK(cudaMalloc(&x8, 3 * n));
	CK(cudaMalloc(&vt, kpt_attn_e4m3_vt_bytes(B, H, S, D)));
	const void *src[3] = { q, k, v };
	for (int i = 0; i < 3; i++)
		to_e4m3_kernel<<<1024, 256>>>(x8 + i * n, (const __nv_bfloat16 *)src[i], n);
	CK(cudaGetLastError());
	KCK(kpt_attn_e4m3_pack_v(vt, x8 + 2 * n, B, H, S, D, (long long)H * S * D, (long long)S * D, D, 0, DG));
	CK(cudaDeviceSynchronize());
	static const char *const kname[KPT_ATTN_E4M3_KERNEL_COUNT] = { "default", "serial", "pingpong",
										       "pingpong3" };
	for (int causal = 0; causal < 2; causal++)
		for (int r = 0; r < 3; r++)
			for (int kern = KPT_ATTN_E4M3_KERNEL_SERIAL; kern < KPT_ATTN_E4M3_KERNEL_COUNT; kern++) {
				struct kpt_attn_fwd_args a;
				memset(&a, 0, sizeof a);
				a.q = x8, a.k = x8 + n, a.v = vt, a.o = o;
				a.batch = B, a.heads = H, a.seq = S, a.head_dim = D;
				a.stride_s = D, a.stride_h = (long long)S * D, a.stride_b = (long long)H * S * D;
				a.scale = 1.f / sqrtf((float)D), a.causal = causal;
				a.dtype = KPT_ATTN_E4M3, a.e4m3_kernel = kern;
				a.q_descale = a.k_descale = a.v_descale = 1.f;
				struct kpt_diag dg;
				if (kpt_attn_fwd(&a, 0, &dg) == KPT_E_UNSUPPORTED)
					continue; /* not Hopper, or not built */
				double ms = time_ms([&](int) { KCK(kpt_attn_fwd(&a, 0, DG)); }, 3, 15);
				double fl = 4.0 * B * H * (double)S * S * D / (causal ? 2 : 1);
				char name[96];
				snprintf(name, sizeof name, "fwd e4m3 d%d s%d %s %s%s r%d", D, S, causal ? "causal" : "full",
					 kname[kern], kpt_attn_e4m3_kernel_pick(0, D) == kern ? "*" : "", r);
				printf("%-44s %10.3f %10.1f\n", name, ms, fl / ms / 1e9);
			}
	cudaFree(x8), cudaFree(vt);
}

static void bench_attn(void)
{
	printf("\n%-44s %10s %10s\n", "attention forward (B*S = 16k tokens, hidden 2048)", "ms", "TFLOP/s");
	const int seqs[] = { 2048, 16384 };
	for (int S : seqs)
		for (int D = 64; D <= 128; D += 64) {
			int H = 2048 / D, B = 16384 / S;
			size_t n = (size_t)B * H * S * D;
			void *q, *k, *v, *o;
			CK(cudaMalloc(&q, n * 2));
			CK(cudaMalloc(&k, n * 2));
			CK(cudaMalloc(&v, n * 2));
			CK(cudaMalloc(&o, n * 2));
			fill_dev_random(q, n);
			fill_dev_random(k, n);
			fill_dev_random(v, n);
			for (int causal = 0; causal < 2; causal++)
				for (int fp16 = 0; fp16 < 2; fp16++)
					for (int t = 0; t < KPT_ATTN_TILES_COUNT; t++) {
						if (fp16 && t != 0)
							continue;
						struct kpt_attn_fwd_args a;
						memset(&a, 0, sizeof a);
						a.q = q, a.k = k, a.v = v, a.o = o;
						a.batch = B, a.heads = H, a.seq = S, a.head_dim = D;
						a.stride_s = D, a.stride_h = (long long)S * D, a.stride_b = (long long)H * S * D;
						a.scale = 1.f / sqrtf((float)D), a.causal = causal;
						a.dtype = fp16 ? KPT_ATTN_FP16 : KPT_ATTN_BF16;
						a.tiles = (enum kpt_attn_tiles)t;
						struct kpt_diag dg;
						if (kpt_attn_fwd(&a, 0, &dg) == KPT_E_UNSUPPORTED)
							continue; /* not built for this type */
						double ms = time_ms([&](int) { KCK(kpt_attn_fwd(&a, 0, DG)); }, 3, 15);
						double fl = 4.0 * B * H * (double)S * S * D / (causal ? 2 : 1);
						char name[96], label[48];
						snprintf(name, sizeof name, "fwd %s d%d s%d %s %s", fp16 ? "fp16" : "bf16", D, S,
							 causal ? "causal" : "full", tiles_label(&a, label, sizeof label));
						printf("%-44s %10.3f %10.1f\n", name, ms, fl / ms / 1e9);
					}
			bench_attn_e4m3(q, k, v, o, B, H, S, D);
			cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(o);
		}
}

static void bench_decode(void)
{
	printf("\n%-44s %10s %10s\n", "decode bf16 d128 B8 H32 (cache rotated)", "us", "GB/s");
	const int B = 8, H = 32, D = 128;
	const int ctxs[] = { 128, 256, 512, 1024, 4096, 16384, 32768 };
	const int chunks[] = { 0, 64, 128, 256, 512, 1024, 2048, 4096 };
	for (int L : ctxs) {
		size_t nkv = (size_t)B * H * L * D;
		int sets = (int)std::max<size_t>(1, (size_t)(256u << 20) / (nkv * 4) + 1);
		void *kv, *q, *o, *ws;
		CK(cudaMalloc(&kv, nkv * 2 * 2 * sets));
		fill_dev_random(kv, nkv * 2 * sets);
		CK(cudaMalloc(&q, (size_t)B * H * D * 2));
		fill_dev_random(q, (size_t)B * H * D);
		CK(cudaMalloc(&o, (size_t)B * H * D * 2));
		size_t wsb = kpt_attn_decode_ws_bytes(B, H, L, D);
		CK(cudaMalloc(&ws, wsb));
		for (int ch : chunks) {
			if (ch && (ch > L * 2 || (ch < 256 && L > 4096)))
				continue;
			struct kpt_attn_decode_args a;
			memset(&a, 0, sizeof a);
			a.q = q, a.o = o;
			a.batch = B, a.heads = H, a.kv_heads = H, a.ctx = L, a.head_dim = D;
			a.kv_stride_s = D, a.kv_stride_h = (long long)L * D, a.kv_stride_b = (long long)H * L * D;
			a.scale = 1.f / sqrtf((float)D), a.dtype = KPT_ATTN_BF16, a.chunk = ch;
			a.ws = ws, a.ws_bytes = wsb;
			double ms = time_ms(
				[&](int i) {
					int s = i % sets;
					a.k_cache = (char *)kv + (size_t)s * nkv * 4;
					a.v_cache = (char *)a.k_cache + nkv * 2;
					KCK(kpt_attn_decode(&a, 0, DG));
				},
				5, 41);
			char name[96];
			snprintf(name, sizeof name, "decode ctx%d chunk%d", L, ch);
			printf("%-44s %10.1f %10.1f\n", name, ms * 1e3, nkv * 4.0 / ms / 1e6);
		}
		cudaFree(kv), cudaFree(q), cudaFree(o), cudaFree(ws);
	}
}

/* The two sm_90a FFNs on the same layer in one process, interleaved: 7
 * rounds, each timing reps forwards of each plan (CUDA events); medians
 * per plan and the per-round ratio sm90 / sm90mc. Skipped where they
 * cannot run. */
static void bench_moe_sm90_mc(void)
{
	printf("\n%-44s %10s %10s %10s\n", "moe layer sm90 vs sm90mc (interleaved)", "us", "TFLOP/s", "ffn TF/s");
	const kpt_moe_cfg cfgs[] = { { 32768, 2048, 768, 128, 8 }, { 4096, 512, 2048, 8, 2 } };
	const int impls[2] = { KPT_MOE_FFN_GROUPED_SM90, KPT_MOE_FFN_GROUPED_SM90_MC };
	for (const kpt_moe_cfg &c : cfgs) {
		struct kpt_moe *m[2] = { NULL, NULL };
		struct kpt_diag cd;
		bool ok = true;
		for (int i = 0; i < 2 && ok; i++)
			if (kpt_moe_create(&m[i], &c, (enum kpt_moe_ffn_impl)impls[i], &cd) != 0) {
				printf("skip moe T%d %s: %s\n", c.tokens, moe_impl_names[impls[i]], cd.msg);
				ok = false;
			}
		if (!ok) {
			kpt_moe_destroy(m[0]);
			continue;
		}
		moe_inputs in;
		moe_make_dev(in, c);
		cudaStream_t s;
		CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		cudaEvent_t a, b, ev[5];
		CK(cudaEventCreate(&a));
		CK(cudaEventCreate(&b));
		for (int i = 0; i < 5; i++)
			CK(cudaEventCreate(&ev[i]));
		const double fl = kpt_moe_ffn_flops(&c);
		const int reps = c.tokens > 8192 ? 10 : 50;
		std::vector<float> t[2], ffn[2], ratio;
		for (int i = 0; i < 2; i++)
			for (int w = 0; w < 3; w++)
				KCK(kpt_moe_forward(m[i], in.dy, in.dx, in.dwg, in.dw1, in.dw2, s, DG));
		CK(cudaStreamSynchronize(s));
		for (int r = 0; r < 7; r++) {
			float ms[2];
			for (int j = 0; j < 2; j++) {
				const int i = r % 2 ? 1 - j : j; /* alternate which goes first */
				CK(cudaEventRecord(a, s));
				for (int k = 0; k < reps; k++)
					KCK(kpt_moe_forward(m[i], in.dy, in.dx, in.dwg, in.dw1, in.dw2, s, DG));
				CK(cudaEventRecord(b, s));
				CK(cudaEventSynchronize(b));
				CK(cudaEventElapsedTime(&ms[i], a, b));
				ms[i] /= reps;
				t[i].push_back(ms[i]);
				/* the FFN stage alone, one forward */
				kpt_moe_set_stage_events(m[i], ev);
				KCK(kpt_moe_forward(m[i], in.dy, in.dx, in.dwg, in.dw1, in.dw2, s, DG));
				CK(cudaEventSynchronize(ev[4]));
				kpt_moe_set_stage_events(m[i], NULL);
				float f;
				CK(cudaEventElapsedTime(&f, ev[2], ev[3]));
				ffn[i].push_back(f);
			}
			ratio.push_back(ms[0] / ms[1]);
		}
		for (int i = 0; i < 2; i++) {
			std::sort(t[i].begin(), t[i].end());
			std::sort(ffn[i].begin(), ffn[i].end());
			char name[96];
			snprintf(name, sizeof name, "moe T%d H%d F%d E%d k%d %s", c.tokens, c.hidden, c.ffn, c.experts,
				 c.top_k, moe_impl_names[impls[i]]);
			printf("%-44s %10.1f %10.1f %10.1f\n", name, t[i][3] * 1e3, fl / t[i][3] / 1e9, fl / ffn[i][3] / 1e9);
		}
		std::sort(ratio.begin(), ratio.end());
		printf("  layer time sm90 / sm90mc per round: median %.3f, range %.3f .. %.3f\n", ratio[3], ratio[0],
		       ratio[6]);
		for (int i = 0; i < 5; i++)
			cudaEventDestroy(ev[i]);
		cudaEventDestroy(a);
		cudaEventDestroy(b);
		cudaStreamDestroy(s);
		moe_free(in);
		kpt_moe_destroy(m[0]);
		kpt_moe_destroy(m[1]);
	}
}

static void bench_moe(void)
{
	bench_moe_sm90_mc();
	printf("\n%-44s %10s %12s %10s\n", "moe layer (bf16)", "us", "Mtok/s", "TFLOP/s");
	const kpt_moe_cfg cfgs[] = {
		{ 4096, 512, 2048, 8, 2 }, { 4096, 1024, 4096, 8, 2 }, { 32768, 2048, 768, 128, 8 },
	};
	for (const kpt_moe_cfg &c : cfgs) {
		moe_inputs in;
		moe_make_dev(in, c);
		cudaStream_t s;
		CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
		double fl = 4.0 * c.tokens * c.top_k * (double)c.hidden * c.ffn + 2.0 * c.tokens * c.hidden * c.experts;
		for (int var = 0; var < 8; var++) {
			/* var 0: grouped, tiles by size (+ graph replay); 1: cuBLAS; 2..7: grouped, tiles var - 2 */
			int impl = var == 1, gt = var >= 2 ? var - 2 : 0;
			if (var == 2)
				continue;
			if (gt == 4 && (c.ffn % 256 || c.hidden % 256))
				continue;
			struct kpt_moe *m;
			KCK(kpt_moe_create(&m, &c, (enum kpt_moe_ffn_impl)impl, DG));
			KCK(kpt_moe_set_gemm_tiles(m, gt, gt, DG));
			cudaEvent_t a, b;
			CK(cudaEventCreate(&a));
			CK(cudaEventCreate(&b));
			auto once = [&]() { KCK(kpt_moe_forward(m, in.dy, in.dx, in.dwg, in.dw1, in.dw2, s, DG)); };
			for (int i = 0; i < 3; i++)
				once();
			CK(cudaStreamSynchronize(s));
			int reps = c.tokens > 8192 ? 10 : 50;
			std::vector<float> t;
			for (int r = 0; r < 5; r++) {
				CK(cudaEventRecord(a, s));
				for (int i = 0; i < reps; i++)
					once();
				CK(cudaEventRecord(b, s));
				CK(cudaEventSynchronize(b));
				float ms;
				CK(cudaEventElapsedTime(&ms, a, b));
				t.push_back(ms / reps);
			}
			std::sort(t.begin(), t.end());
			double ms = t[2];
			char name[96];
			snprintf(name, sizeof name, "moe T%d H%d F%d E%d k%d %s%d", c.tokens, c.hidden, c.ffn, c.experts,
				 c.top_k, impl ? "cublas" : "grouped", gt);
			printf("%-44s %10.1f %12.2f %10.1f\n", name, ms * 1e3, c.tokens / ms / 1e3, fl / ms / 1e9);
			if (var <= 1) {
				/* Where the time goes: events at the stage boundaries. */
				cudaEvent_t ev[5];
				double st[4] = { 0, 0, 0, 0 };
				for (int i = 0; i < 5; i++)
					CK(cudaEventCreate(&ev[i]));
				kpt_moe_set_stage_events(m, ev);
				for (int r = 0; r < 20; r++) {
					once();
					CK(cudaEventSynchronize(ev[4]));
					for (int i = 0; i < 4; i++) {
						float x;
						CK(cudaEventElapsedTime(&x, ev[i], ev[i + 1]));
						st[i] += x * 1e3 / 20;
					}
				}
				kpt_moe_set_stage_events(m, NULL);
				for (int i = 0; i < 5; i++)
					cudaEventDestroy(ev[i]);
				printf("  stages (us, one layer at a time): router %.1f permute %.1f ffn %.1f combine %.1f\n",
				       st[0], st[1], st[2], st[3]);
			}
			if (var == 0) {
				/* Graph replay: the layer without launch gaps. */
				cudaGraph_t g;
				cudaGraphExec_t ge;
				CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
				once();
				CK(cudaStreamEndCapture(s, &g));
				CK(cudaGraphInstantiate(&ge, g, 0));
				for (int i = 0; i < 3; i++)
					CK(cudaGraphLaunch(ge, s));
				t.clear();
				for (int r = 0; r < 5; r++) {
					CK(cudaEventRecord(a, s));
					for (int i = 0; i < reps; i++)
						CK(cudaGraphLaunch(ge, s));
					CK(cudaEventRecord(b, s));
					CK(cudaEventSynchronize(b));
					float gms;
					CK(cudaEventElapsedTime(&gms, a, b));
					t.push_back(gms / reps);
				}
				std::sort(t.begin(), t.end());
				ms = t[2];
				snprintf(name, sizeof name, "moe T%d H%d F%d E%d k%d grouped graph", c.tokens, c.hidden,
					 c.ffn, c.experts, c.top_k);
				printf("%-44s %10.1f %12.2f %10.1f\n", name, ms * 1e3, c.tokens / ms / 1e3, fl / ms / 1e9);
				cudaGraphExecDestroy(ge);
				cudaGraphDestroy(g);
			}
			cudaEventDestroy(a);
			cudaEventDestroy(b);
			kpt_moe_destroy(m);
		}
		cudaStreamDestroy(s);
		moe_free(in);
	}
}

int main(int argc, char **argv)
{
	int ai = 1;
	g_seed = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 32);
	if (ai + 1 < argc && strcmp(argv[ai], "--seed") == 0) {
		g_seed = strtoull(argv[ai + 1], NULL, 0);
		ai += 2;
	}
	if (ai >= argc || (strcmp(argv[ai], "check") && strcmp(argv[ai], "bench") && strcmp(argv[ai], "prof") &&
			   strcmp(argv[ai], "profmoe")) ||
	    (!strcmp(argv[ai], "prof") && argc - ai != 5) || (!strcmp(argv[ai], "profmoe") && argc - ai != 7) ||
	    (!strcmp(argv[ai], "check") && argc - ai > 1 && (argc - ai > 2 || strcmp(argv[ai + 1], "quick")))) {
		fprintf(stderr, "usage: kpt-attn-moe [--seed N] check [quick] | bench [attn|decode|moe]... |\n"
				"       prof D S CAUSAL TILES | profmoe T H F E K TILES\n");
		return 2;
	}
	for (int i = ai + 1; !strcmp(argv[ai], "bench") && i < argc; i++) {
		if (strcmp(argv[i], "attn") && strcmp(argv[i], "decode") && strcmp(argv[i], "moe")) {
			fprintf(stderr, "kpt-attn-moe: unknown benchmark '%s'\n", argv[i]);
			return 2;
		}
	}
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		fprintf(stderr, "kpt-attn-moe: no GPU: skipped\n");
		return 77;
	}
	cudaDeviceProp prop;
	CK(cudaGetDeviceProperties(&prop, 0));
	int drv = 0;
	cudaDriverGetVersion(&drv);
	printf("device %s, %d SMs, driver CUDA %d, seed %llu\n", prop.name, prop.multiProcessorCount, drv,
	       (unsigned long long)g_seed);
	if (strcmp(argv[ai], "prof") == 0) {
		/* One forward launch (after one warm-up) for a profiler:
		 * prof D S causal tiles, B*S = 16k tokens, hidden 2048. */
		int D = atoi(argv[ai + 1]), S = atoi(argv[ai + 2]), H = 2048 / D, B = 16384 / S;
		size_t n = (size_t)B * H * S * D;
		void *q, *k, *v, *o;
		CK(cudaMalloc(&q, n * 2));
		CK(cudaMalloc(&k, n * 2));
		CK(cudaMalloc(&v, n * 2));
		CK(cudaMalloc(&o, n * 2));
		fill_dev_random(q, n), fill_dev_random(k, n), fill_dev_random(v, n);
		struct kpt_attn_fwd_args a;
		memset(&a, 0, sizeof a);
		a.q = q, a.k = k, a.v = v, a.o = o;
		a.batch = B, a.heads = H, a.seq = S, a.head_dim = D;
		a.stride_s = D, a.stride_h = (long long)S * D, a.stride_b = (long long)H * S * D;
		a.scale = 1.f / sqrtf((float)D), a.causal = atoi(argv[ai + 3]);
		a.tiles = (enum kpt_attn_tiles)atoi(argv[ai + 4]);
		for (int i = 0; i < 2; i++)
			KCK(kpt_attn_fwd(&a, 0, DG));
		CK(cudaDeviceSynchronize());
		return 0;
	}
	if (strcmp(argv[ai], "profmoe") == 0) {
		/* Two MoE layers for a profiler: profmoe T H F E K tiles (grouped). */
		kpt_moe_cfg c = { atoi(argv[ai + 1]), atoi(argv[ai + 2]), atoi(argv[ai + 3]), atoi(argv[ai + 4]),
				  atoi(argv[ai + 5]) };
		moe_inputs in;
		moe_make_dev(in, c);
		struct kpt_moe *m;
		KCK(kpt_moe_create(&m, &c, KPT_MOE_FFN_GROUPED, DG));
		KCK(kpt_moe_set_gemm_tiles(m, atoi(argv[ai + 6]), atoi(argv[ai + 6]), DG));
		for (int i = 0; i < 2; i++)
			KCK(kpt_moe_forward(m, in.dy, in.dx, in.dwg, in.dw1, in.dw2, 0, DG));
		CK(cudaDeviceSynchronize());
		return 0;
	}
	if (strcmp(argv[ai], "check") == 0)
		return run_checks(ai + 1 < argc && strcmp(argv[ai + 1], "quick") == 0);
	int any = ai + 1 >= argc;
	for (int i = ai + 1; i <= argc; i++) {
		const char *w = i < argc ? argv[i] : NULL;
		if ((any && !w) || (w && !strcmp(w, "attn")))
			bench_attn();
		if ((any && !w) || (w && !strcmp(w, "decode")))
			bench_decode();
		if ((any && !w) || (w && !strcmp(w, "moe")))
			bench_moe();
	}
	return 0;
}
