/* kpt_devprobe.h - find the machine's GPUs without linking CUDA.
 *
 * kptprof links no CUDA library (it must start on machines without a
 * driver); the probe dlopens libcuda.so.1 (and libnvidia-ml.so.1 for the
 * driver version string) at run time. Implemented in kpt_devprobe.c (linked
 * into kptprof, CUDA-free): the one probe of `devices` and of the recorder
 * (kpt_record.h), which refuses to start a target without a GPU.
 */
#ifndef KPT_DEVPROBE_H
#define KPT_DEVPROBE_H

#include <stdint.h>

#include "kpt_err.h"

struct kpt_gpu {
	int ordinal;
	char name[256];
	char slug[256];
	char uuid[48];              /* "GPU-xxxxxxxx-xxxx-...", "" unknown */
	int cc_major, cc_minor;
	int sm_count;
	uint64_t mem_bytes;
	uint64_t l2_bytes;
	int sm_clock_mhz, mem_clock_mhz, bus_width_bits;
};

struct kpt_gpu_list {
	int n;
	struct kpt_gpu gpu[64];
	int driver_version;         /* cuDriverGetVersion: 13000 for 13.0 */
	char driver_string[80];     /* NVML "580.95.05", "" when NVML is absent */
};

/* Fills l. Errors: KPT_E_NODEV with a one-line message when there is no
 * driver (libcuda.so.1 cannot be loaded), cuInit fails, or no GPU is
 * visible. O(devices); loads and keeps libcuda in the process. */
int kpt_gpu_probe(struct kpt_gpu_list *l, struct kpt_diag *d);

#endif
