/* kpt_calibrate.h - this GPU's measured ceilings (kpt-workloads --calibrate,
 * and every run of a suite recording when KPT_CALIBRATE_OUT is set). */
#ifndef KPT_CALIBRATE_H
#define KPT_CALIBRATE_H

#include <cuda_runtime_api.h>

#include "kpt_err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The file a suite recording's runs append their probe lines to
 * (`kptprof record` sets it to a file in its private temporary folder). */
#define KPT_ENV_CALIBRATE_OUT "KPT_CALIBRATE_OUT"

struct kpt_ceilings {
	char name[256];             /* cudaDeviceProp.name */
	char uuid[48];              /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and kptprof write it */
	/* The denominators of "% of ceiling": the best iteration. */
	double copy_gbps;           /* memory.copy.512MiB: (read + write bytes) / s / 1e9 */
	double bf16_tflops;         /* cuBLASLt bf16 GEMM 8192^3 */
	/* The probes the decision rule's calibration compares between
	 * machines: the median of the timed iterations, each after the idle
	 * gap settle_us like the suite's own, and none of them a kernel of
	 * this project's library (a change under test cannot move them). */
	double p_copy_gbps;         /* cudaMemcpyAsync device to device, 512 MiB */
	double p_bf16_tflops;       /* cuBLASLt bf16 8192^3, fp32 accumulation */
	double p_fp8_tflops;        /* cuBLASLt e4m3 8192^3 (TN, bf16 out); 0 before compute capability 8.9 */
	double p_sm_mhz;            /* SM clock under an all-SM FP32 FMA load: clock64 cycles / %globaltimer */
};

/* Measures the current device on stream s (about a second on an H100;
 * allocates ~1.5 GiB, freed before returning). settle_us: idle gap before
 * each timed probe iteration (0 none). */
int kpt_calibrate(cudaStream_t s, long settle_us, struct kpt_ceilings *out, struct kpt_diag *d);

/* The probe kernel and fill of kpt_calibrate_probe.cu. */
int kpt_cal_clock_run(cudaStream_t s, unsigned long long *dev_cyc_ns, int blocks, struct kpt_diag *d);
int kpt_cal_fill_e4m3(void *p, size_t n, unsigned long long seed, cudaStream_t s, struct kpt_diag *d);

#ifdef __cplusplus
}
#endif

#endif
