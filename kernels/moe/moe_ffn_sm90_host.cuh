/* moe_ffn_sm90_host.cuh - host helpers the two Hopper expert-FFN files share
 * (moe_ffn_sm90.cu and its clustered variant moe_ffn_sm90_mc.cu): the tile
 * width of a GEMM, the TMA tensor maps of its bf16 operands and the two
 * launches of an FFN. Host code only (no kernel's code depends on it);
 * include after kpt_sm90.cuh and moe_ffn_sm90.h. */
#ifndef KPT_MOE_FFN_SM90_HOST_CUH
#define KPT_MOE_FFN_SM90_HOST_CUH

#include <cuda.h>

namespace kpt {

/* BN for a GEMM of n output columns: 256 when n allows it and an even
 * routing gives every SM at least 2 tiles, else 128 (moe_ffn_sm90.cu's
 * header comment). */
inline int moe_sm90_pick_bn(long long rows, int experts, int n, int sms)
{
	const long long row_tiles = rows / 128 + experts / 2;
	return n % 256 == 0 && row_tiles * (n / 256) >= 2LL * sms ? 256 : 128;
}

/* 2-D map over a row-major bf16 matrix [rows][cols]; box 64 columns (128 B,
 * the 128B swizzle's widest inner box) x box_rows; rows past the end read
 * as zeros. */
inline bool moe_sm90_bf16_map(CUtensorMap *m, const void *ptr, long long rows, int cols, int box_rows)
{
	cuuint64_t dims[2] = { (cuuint64_t)cols, (cuuint64_t)rows };
	cuuint64_t strides[1] = { (cuuint64_t)cols * 2 };
	cuuint32_t box[2] = { 64, (cuuint32_t)box_rows };
	cuuint32_t estr[2] = { 1, 1 };
	CUresult r = tma_encode_fn()(m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(ptr), dims, strides, box,
				     estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
				     CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	return r == CUDA_SUCCESS;
}

/* An FFN's two GEMMs, whichever Hopper kernel runs them: the tile widths,
 * the three tensor maps (W1 and W2 in boxes of bn / b_div rows: the
 * clustered kernel loads half a tile per CTA; hb in boxes of 128 rows),
 * then GEMM 1 (x gathered, W1) and GEMM 2 (hb, W2) through
 * launch(bn, gather, a_map, b_map, params). P: the kernel's parameter
 * struct, { x, src_row, c, offsets, tiles, n, k, experts, plant_pct }.
 * what names the kernel in errors. */
template <class P, class Launch>
int moe_sm90_ffn_run(const moe_sm90_args *a, int b_div, const char *what, Launch launch, struct kpt_diag *d)
{
	const int bn1 = moe_sm90_pick_bn(a->rows, a->experts, a->ffn, a->sms);
	const int bn2 = moe_sm90_pick_bn(a->rows, a->experts, a->hidden, a->sms);
	CUtensorMap mw1, mw2, mh;
	if (!moe_sm90_bf16_map(&mw1, a->w1, (long long)a->experts * a->ffn, a->hidden, bn1 / b_div) ||
	    !moe_sm90_bf16_map(&mw2, a->w2, (long long)a->experts * a->hidden, a->ffn, bn2 / b_div) ||
	    !moe_sm90_bf16_map(&mh, a->hb, a->rows, a->ffn, 128))
		return kpt_diag_set(d, KPT_E_UNSUPPORTED, "moe: the driver refuses a TMA tensor map of the %s", what);
	const P p1 = { a->x, a->src_row, a->hb, a->offsets, a->tiles, a->ffn, a->hidden, a->experts, a->plant_pct };
	const P p2 = { NULL, NULL, a->yb, a->offsets, a->tiles, a->hidden, a->ffn, a->experts, a->plant_pct };
	cudaError_t e = launch(bn1, true, mw1, mw1, p1);
	if (e == cudaSuccess)
		e = launch(bn2, false, mh, mw2, p2);
	if (e != cudaSuccess)
		return kpt_diag_set(d, KPT_E_CUDA, "moe: %s launch failed: %s", what, cudaGetErrorString(e));
	return 0;
}

} /* namespace kpt */

#endif
