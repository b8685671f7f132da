/* kpt_attn_path.h - which forward-attention kernel a GPU gets (pure C, no
 * CUDA: unit-tested in tests/unit/test_attn_path.c).
 *
 * attention_fwd.cu asks this once per device; the answer depends only on
 * the compute capability, the head dimension and whether the build holds
 * the sm_90a kernel, so a build for 80;86;89;90 keeps the mma.sync path on
 * L4 / A10G / RTX 4090 and on GPUs newer than Hopper (wgmma is sm_90a only;
 * they run the mma.sync code JIT-compiled from the compute_90 PTX).
 */
#ifndef KPT_ATTN_PATH_H
#define KPT_ATTN_PATH_H

#ifdef __cplusplus
extern "C" {
#endif

enum kpt_attn_path {
	KPT_ATTN_PATH_UNSUPPORTED = 0, /* below sm_80 (no bf16 mma.sync) or a head dim not 64/128 */
	KPT_ATTN_PATH_MMA_SYNC = 1,    /* attention_fwd.cu, sm_80+ */
	KPT_ATTN_PATH_SM90_WGMMA = 2,  /* attention_fwd_sm90.cu: exactly 9.0, head dim 64 or 128, built */
};

/* built_sm90: the build compiled attention_fwd_sm90.cu (KPT_ATTN_SM90). */
enum kpt_attn_path kpt_attn_fwd_path(int cc_major, int cc_minor, int head_dim, int built_sm90);

#ifdef __cplusplus
}
#endif

#endif
