/* kpt_moe_path.c - the expert-FFN implementation choice (kpt_moe_path.h). */
#include "kpt_moe_path.h"

#include "kpt_err.h"

int kpt_moe_ffn_path(int req, int cc_major, int cc_minor, int sm90_usable, double ffn_flops)
{
	/* wgmma and setmaxnreg exist in sm_90a only: no later GPU runs that image. */
	const int sm90 = cc_major == 9 && cc_minor == 0 && sm90_usable;

	switch (req) {
	case KPT_MOE_FFN_GROUPED:
	case KPT_MOE_FFN_CUBLAS:
		return req;
	case KPT_MOE_FFN_GROUPED_SM90:
	case KPT_MOE_FFN_GROUPED_SM90_MC:
		return sm90 ? req : KPT_E_UNSUPPORTED;
	case KPT_MOE_FFN_AUTO:
		if (sm90 && ffn_flops >= KPT_MOE_AUTO_SM90_MC_FLOPS)
			return KPT_MOE_FFN_GROUPED_SM90_MC;
		if (sm90 && ffn_flops >= KPT_MOE_AUTO_SM90_FLOPS)
			return KPT_MOE_FFN_GROUPED_SM90;
		return ffn_flops > KPT_MOE_AUTO_CUBLAS_FLOPS ? KPT_MOE_FFN_CUBLAS : KPT_MOE_FFN_GROUPED;
	default:
		return KPT_E_INVAL;
	}
}
