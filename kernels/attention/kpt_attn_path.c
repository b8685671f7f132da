/* kpt_attn_path.c - the attention kernel choices (kpt_attn_path.h). */
#include "kpt_attn_path.h"

enum kpt_attn_path kpt_attn_fwd_path(int cc_major, int cc_minor, int head_dim, int built_sm90)
{
	if (cc_major < 8 || (head_dim != 64 && head_dim != 128))
		return KPT_ATTN_PATH_UNSUPPORTED;
	/* wgmma and setmaxnreg exist in sm_90a only: no later GPU runs that
	 * image (10.0 and 12.0 get the PTX of the mma.sync kernel). */
	if (cc_major == 9 && cc_minor == 0 && built_sm90)
		return KPT_ATTN_PATH_SM90_WGMMA;
	return KPT_ATTN_PATH_MMA_SYNC;
}

enum kpt_attn_path kpt_attn_fwd_path_e4m3(int cc_major, int cc_minor, int head_dim, int built_sm90)
{
	if (cc_major == 9 && cc_minor == 0 && built_sm90 && (head_dim == 64 || head_dim == 128))
		return KPT_ATTN_PATH_SM90_WGMMA;
	return KPT_ATTN_PATH_UNSUPPORTED;
}

enum kpt_attn_e4m3_kernel kpt_attn_e4m3_kernel_pick(int asked, int head_dim)
{
	/* The default per head dim, [d64, d128]: one line to change after
	 * timing both (attention_fwd_sm90_fp8.cu's header comment). */
	static const enum kpt_attn_e4m3_kernel by_hd[2] = { KPT_ATTN_E4M3_KERNEL_SERIAL, KPT_ATTN_E4M3_KERNEL_SERIAL };

	if (asked < 0 || asked >= KPT_ATTN_E4M3_KERNEL_COUNT)
		return KPT_ATTN_E4M3_KERNEL_DEFAULT;
	if (asked != KPT_ATTN_E4M3_KERNEL_DEFAULT)
		return (enum kpt_attn_e4m3_kernel)asked;
	return head_dim == 64 || head_dim == 128 ? by_hd[head_dim == 128] : KPT_ATTN_E4M3_KERNEL_SERIAL;
}

enum kpt_attn_path kpt_attn_bwd_path(int cc_major, int cc_minor, int head_dim, int built_sm90)
{
	/* the same rule as the forward's: wgmma is sm_90a only */
	return kpt_attn_fwd_path(cc_major, cc_minor, head_dim, built_sm90);
}
