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

/* The same for e4m3 inputs (KPT_ATTN_E4M3): only the sm_90a kernel
 * (attention_fwd_sm90_fp8.cu, built with the bf16 one) reads them, so
 * SM90_WGMMA on exactly 9.0 with it built and head dim 64 or 128,
 * UNSUPPORTED everywhere else (no mma.sync fallback). */
enum kpt_attn_path kpt_attn_fwd_path_e4m3(int cc_major, int cc_minor, int head_dim, int built_sm90);

/* The e4m3 kernels (attention_fwd_sm90_fp8.cu), kpt_attn_fwd_args'
 * e4m3_kernel: SERIAL the kernel of one consumer warpgroup's S(j) and
 * P(j-1) V(j-1) back to back (attn_fwd_sm90_e4m3_kernel<.., false, 2>), PINGPONG the same
 * with the consumer warpgroups taking turns at the tensor cores through
 * named barriers (attn_fwd_sm90_e4m3_kernel<.., true, 2>). DEFAULT picks per head
 * dim (kpt_attn_e4m3_kernel_pick). */
enum kpt_attn_e4m3_kernel {
	KPT_ATTN_E4M3_KERNEL_DEFAULT = 0,
	KPT_ATTN_E4M3_KERNEL_SERIAL = 1,
	KPT_ATTN_E4M3_KERNEL_PINGPONG = 2,
	KPT_ATTN_E4M3_KERNEL_PINGPONG3 = 3, /* PINGPONG with 3 K / V stages instead of 2 */
	KPT_ATTN_E4M3_KERNEL_COUNT
};

/* The kernel that runs for asked (an enum kpt_attn_e4m3_kernel value) at
 * head_dim: asked itself, or for DEFAULT the default of head dim 64 or 128
 * (SERIAL for any other); DEFAULT for an asked value out of range (the
 * caller refuses it). */
enum kpt_attn_e4m3_kernel kpt_attn_e4m3_kernel_pick(int asked, int head_dim);

/* The backward (kpt_attn_bwd): SM90_WGMMA (attention_bwd_sm90.cu) on exactly
 * 9.0 with that kernel built (KPT_ATTN_BWD_SM90) and head dim 64 or 128;
 * MMA_SYNC (attention_bwd.cu) on every other GPU from 8.0 and head dim 64
 * or 128; UNSUPPORTED below 8.0 or for other head dims. */
enum kpt_attn_path kpt_attn_bwd_path(int cc_major, int cc_minor, int head_dim, int built_sm90);

/* The packed V^T of the e4m3 kernel (kpt_attn_e4m3_pack_v, kpt_attention.h):
 * keys run along rows of kpt_attn_e4m3_vt_seq(seq) bytes, permuted within
 * each chunk of 32 keys so that the S accumulator's registers are the P V A
 * fragments as they stand (attention_fwd_sm90_fp8.cu's header comment):
 * chunk-relative key c = 8j + 2t + e (accumulator group j, thread t = lane
 * % 4, element e) sits at position p = 16 (j / 2) + 4t + 2 (j % 2) + e.
 * Inline for host and device code. */
#if defined(__CUDACC__)
#define KPT_ATTN_HD __host__ __device__
#else
#define KPT_ATTN_HD
#endif
/* Row length of the packed V^T: seq rounded up to whole 32-key chunks (the
 * keys past seq hold zeros). */
static inline KPT_ATTN_HD int kpt_attn_e4m3_vt_seq(int seq)
{
	return (seq + 31) & ~31;
}
/* Position of chunk-relative key c (0..31) in its chunk. */
static inline KPT_ATTN_HD int kpt_attn_e4m3_vt_pos(int c)
{
	const int j = c >> 3, t = (c >> 1) & 3, e = c & 1;
	return 16 * (j >> 1) + 4 * t + 2 * (j & 1) + e;
}
/* Its inverse: the chunk-relative key at position p (0..31). */
static inline KPT_ATTN_HD int kpt_attn_e4m3_vt_key(int p)
{
	const int j = 2 * (p >> 4) + ((p >> 1) & 1), t = (p >> 2) & 3, e = p & 1;
	return 8 * j + 2 * t + e;
}

#ifdef __cplusplus
}
#endif

#endif
