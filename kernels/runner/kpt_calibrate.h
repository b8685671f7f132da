/* kpt_calibrate.h - this GPU's measured ceilings (kpt-workloads --calibrate). */
#ifndef KPT_CALIBRATE_H
#define KPT_CALIBRATE_H

#include <cuda_runtime_api.h>

#include "kpt_err.h"

struct kpt_ceilings {
	char name[256];             /* cudaDeviceProp.name */
	char uuid[48];              /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", as NVML and kptprof write it */
	double copy_gbps;           /* memory.copy.512MiB, best iteration: (read + write bytes) / s / 1e9 */
	double bf16_tflops;         /* cuBLASLt bf16 GEMM 8192^3, best iteration */
};

/* Measures the current device on stream s (about a second on an H100;
 * allocates ~1.5 GiB, freed before returning). */
int kpt_calibrate(cudaStream_t s, struct kpt_ceilings *out, struct kpt_diag *d);

#endif
