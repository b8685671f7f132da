/* attention_fwd_sm90.h - the Hopper path of kpt_attn_fwd (wgmma, TMA, warp
 * specialisation; attention_fwd_sm90.cu), internal to kernels/attention/.
 *
 * Built only when 90 is among the CUDA architectures (the files are then
 * compiled for sm_90a alone, and attention_fwd.cu gets KPT_ATTN_SM90=1);
 * attention_fwd_sm90_fp8.cu, the e4m3 kernel, comes with it.
 */
#ifndef KPT_ATTENTION_FWD_SM90_H
#define KPT_ATTENTION_FWD_SM90_H

#include "kpt_attention.h"

namespace kpt {

/* Whether attn_fwd_sm90 can run a on the current device: compute capability
 * 9.0 with sm_90a code for it in this binary, the driver's
 * cuTensorMapEncodeTiled found, head dim 64 or 128, bf16 or fp16 (causal or
 * not).
 * The device probe runs once per device (cached), later calls cost a
 * cudaGetDevice. */
bool attn_fwd_sm90_supports(const struct kpt_attn_fwd_args *a);

/* Enqueues the forward pass on s for arguments kpt_attn_fwd has validated:
 * 0; KPT_E_UNSUPPORTED with d filled and nothing enqueued when
 * attn_fwd_sm90_supports is false or the driver refuses the strides as a
 * tensor map (the caller may fall back to another kernel); KPT_E_CUDA when
 * the launch fails. */
int attn_fwd_sm90(const struct kpt_attn_fwd_args *a, cudaStream_t s, struct kpt_diag *d);

/* The e4m3 kernel (attention_fwd_sm90_fp8.cu), same contracts: supports
 * needs head dim 64 or 128 and dtype KPT_ATTN_E4M3 on such a device; a->v is the
 * packed V^T of kpt_attn_e4m3_pack_v. */
bool attn_fwd_sm90_e4m3_supports(const struct kpt_attn_fwd_args *a);
int attn_fwd_sm90_e4m3(const struct kpt_attn_fwd_args *a, cudaStream_t s, struct kpt_diag *d);

/* The launch parameters every forward launcher takes from a in the same
 * way: output, strides, sequence length and the softmax scale in log2
 * units (e4m3 multiplies its descales in after). One place for the
 * mma.sync, wgmma and e4m3 launchers; host code only, the kernels and their
 * parameter structs (P: o, sb, sh, ss, seq, scale_log2) are unchanged. */
template <class P> inline void attn_fwd_base_params(P &p, const struct kpt_attn_fwd_args *a)
{
	p.o = a->o;
	p.sb = a->stride_b;
	p.sh = a->stride_h;
	p.ss = a->stride_s;
	p.seq = a->seq;
	p.scale_log2 = a->scale * 1.4426950408889634f;
}

} /* namespace kpt */

#endif
