/* attention_bwd_sm90.h - the Hopper path of kpt_attn_bwd (wgmma, TMA, warp
 * specialisation; attention_bwd_sm90.cu), internal to kernels/attention/.
 *
 * Built only when 90 is among the CUDA architectures (the file is then
 * compiled for sm_90a alone, and attention_bwd.cu gets KPT_ATTN_BWD_SM90=1);
 * attn_bwd_sm90_ws_bytes is plain arithmetic, so attention_bwd.cu sizes the
 * workspace for both paths in every build.
 */
#ifndef KPT_ATTENTION_BWD_SM90_H
#define KPT_ATTENTION_BWD_SM90_H

#include <stddef.h>

#include "kpt_attention.h"

namespace kpt {

/* Query rows per step of the sm_90a backward (the dQ tile and the padding
 * of its per-row workspace arrays). */
constexpr int ATTN_BWD_SM90_BM = 64;

/* Workspace of attn_bwd_sm90: lse * log2(e) and Delta, [bh][seq_pad]
 * floats each, then the dQ accumulator and the planted blocks' one,
 * [bh][seq_pad][head_dim] floats each (seq_pad = seq rounded up to
 * ATTN_BWD_SM90_BM), every array 256-byte aligned (vec and acc: the sizes
 * of one of each). 0 for bad shapes. */
inline void attn_bwd_sm90_ws_parts(int batch, int heads, int seq, int head_dim, size_t *vec, size_t *acc)
{
	const size_t seq_pad = ((size_t)seq + ATTN_BWD_SM90_BM - 1) / ATTN_BWD_SM90_BM * ATTN_BWD_SM90_BM;
	const size_t rows = (size_t)batch * heads * seq_pad;
	*vec = (rows * sizeof(float) + 255) & ~(size_t)255;
	*acc = (rows * (size_t)head_dim * sizeof(float) + 255) & ~(size_t)255;
}
inline size_t attn_bwd_sm90_ws_bytes(int batch, int heads, int seq, int head_dim)
{
	if (batch < 1 || heads < 1 || seq < 1 || head_dim < 1)
		return 0;
	size_t vec, acc;
	attn_bwd_sm90_ws_parts(batch, heads, seq, head_dim, &vec, &acc);
	return 2 * vec + 2 * acc;
}

/* Whether attn_bwd_sm90 can run a on the current device: compute capability
 * 9.0 with sm_90a code for it in this binary, the driver's
 * cuTensorMapEncodeTiled found, head dim 64 or 128, bf16. The device probe
 * runs once per device (cached). */
bool attn_bwd_sm90_supports(const struct kpt_attn_bwd_args *a);

/* Enqueues the backward pass on s for arguments kpt_attn_bwd has validated
 * (its workspace at least attn_bwd_sm90_ws_bytes): 0; KPT_E_UNSUPPORTED with
 * nothing enqueued when attn_bwd_sm90_supports is false or the driver
 * refuses the strides as a tensor map (the caller falls back to the
 * mma.sync kernel); KPT_E_CUDA when a launch fails. */
int attn_bwd_sm90(const struct kpt_attn_bwd_args *a, cudaStream_t s, struct kpt_diag *d);

} /* namespace kpt */

#endif
