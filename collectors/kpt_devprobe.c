/* kpt_devprobe.c - the GPU probe of every command that starts GPU work
 * (kpt_devprobe.h): a run-time dlopen of the driver, no CUDA linked. The
 * CUPTI row of the collector table (kpt_record.h) names it. */
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "kpt_devprobe.h"
#include "kpt_model.h"

/* Driver API values from cuda.h (stable ABI since CUDA 4). */
enum {
	KPT_CU_ATTR_CLOCK_RATE = 13,
	KPT_CU_ATTR_SM_COUNT = 16,
	KPT_CU_ATTR_MEMORY_CLOCK_RATE = 36,
	KPT_CU_ATTR_BUS_WIDTH = 37,
	KPT_CU_ATTR_L2_CACHE_SIZE = 38,
	KPT_CU_ATTR_CC_MAJOR = 75,
	KPT_CU_ATTR_CC_MINOR = 76,
};

struct cu_api {
	int (*init)(unsigned);
	int (*driver_version)(int *);
	int (*count)(int *);
	int (*get)(int *, int);
	int (*name)(char *, int, int);
	int (*attr)(int *, int, int);
	int (*total_mem)(size_t *, int);
	int (*uuid)(unsigned char *, int);
	int (*error_string)(int, const char **);
};

static const struct { const char *sym; size_t off; int optional; } cu_syms[] = {
	{ "cuInit", offsetof(struct cu_api, init), 0 },
	{ "cuDriverGetVersion", offsetof(struct cu_api, driver_version), 0 },
	{ "cuDeviceGetCount", offsetof(struct cu_api, count), 0 },
	{ "cuDeviceGet", offsetof(struct cu_api, get), 0 },
	{ "cuDeviceGetName", offsetof(struct cu_api, name), 0 },
	{ "cuDeviceGetAttribute", offsetof(struct cu_api, attr), 0 },
	{ "cuDeviceTotalMem_v2", offsetof(struct cu_api, total_mem), 0 },
	{ "cuDeviceGetUuid_v2", offsetof(struct cu_api, uuid), 1 },
	{ "cuGetErrorString", offsetof(struct cu_api, error_string), 1 },
};

static int cu_attr(const struct cu_api *cu, int attr, int dev)
{
	int v = 0;

	return cu->attr(&v, attr, dev) == 0 ? v : 0;
}

static void nvml_driver_string(char *out, size_t cap)
{
	void *so = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	int (*init)(void), (*ver)(char *, unsigned), (*shut)(void);

	out[0] = '\0';
	if (!so)
		return;
	*(void **)&init = dlsym(so, "nvmlInit_v2");
	*(void **)&ver = dlsym(so, "nvmlSystemGetDriverVersion");
	*(void **)&shut = dlsym(so, "nvmlShutdown");
	if (init && ver && init() == 0) {
		if (ver(out, (unsigned)cap) != 0)
			out[0] = '\0';
		if (shut)
			shut();
	}
}

int kpt_gpu_probe(struct kpt_gpu_list *l, struct kpt_diag *d)
{
	struct cu_api cu;
	void *so = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	const char *es = NULL;
	int rc, n = 0;

	memset(l, 0, sizeof *l);
	if (!so) {
		kpt_diag_set(d, KPT_E_NODEV, "no NVIDIA driver on this machine (cannot load 'libcuda.so.1')");
		return kpt_diag_hint(d, "recording needs a GPU with its driver; report, diff, export and view work without one");
	}
	memset(&cu, 0, sizeof cu);
	for (size_t i = 0; i < sizeof cu_syms / sizeof cu_syms[0]; i++) {
		void *f = dlsym(so, cu_syms[i].sym);

		if (!f && !cu_syms[i].optional)
			return kpt_diag_set(d, KPT_E_NODEV, "the NVIDIA driver is too old: 'libcuda.so.1' lacks '%s'",
					    cu_syms[i].sym);
		memcpy((char *)&cu + cu_syms[i].off, &f, sizeof f);
	}
	if ((rc = cu.init(0)) != 0) {
		if (!cu.error_string || cu.error_string(rc, &es) != 0 || !es)
			es = "unknown error";
		return kpt_diag_set(d, KPT_E_NODEV, "no usable GPU: cuInit failed with error %d (%s)", rc, es);
	}
	cu.driver_version(&l->driver_version);
	if (cu.count(&n) != 0 || n <= 0)
		return kpt_diag_set(d, KPT_E_NODEV, "no GPU visible to CUDA (check CUDA_VISIBLE_DEVICES)");
	if (n > (int)(sizeof l->gpu / sizeof l->gpu[0]))
		n = (int)(sizeof l->gpu / sizeof l->gpu[0]);
	for (int i = 0; i < n; i++) {
		struct kpt_gpu *gp = &l->gpu[i];
		unsigned char u[16];
		size_t mem = 0;
		int dev = 0;

		gp->ordinal = i;
		if (cu.get(&dev, i) != 0)
			continue;
		if (cu.name(gp->name, (int)sizeof gp->name, dev) != 0)
			snprintf(gp->name, sizeof gp->name, "unknown");
		kpt_slug(gp->name, gp->slug, (int)sizeof gp->slug);
		if (cu.uuid && cu.uuid(u, dev) == 0)
			snprintf(gp->uuid, sizeof gp->uuid,
				 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
				 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
				 u[12], u[13], u[14], u[15]);
		cu.total_mem(&mem, dev);
		gp->mem_bytes = mem;
		gp->cc_major = cu_attr(&cu, KPT_CU_ATTR_CC_MAJOR, dev);
		gp->cc_minor = cu_attr(&cu, KPT_CU_ATTR_CC_MINOR, dev);
		gp->sm_count = cu_attr(&cu, KPT_CU_ATTR_SM_COUNT, dev);
		gp->l2_bytes = (uint64_t)cu_attr(&cu, KPT_CU_ATTR_L2_CACHE_SIZE, dev);
		gp->sm_clock_mhz = cu_attr(&cu, KPT_CU_ATTR_CLOCK_RATE, dev) / 1000;
		gp->mem_clock_mhz = cu_attr(&cu, KPT_CU_ATTR_MEMORY_CLOCK_RATE, dev) / 1000;
		gp->bus_width_bits = cu_attr(&cu, KPT_CU_ATTR_BUS_WIDTH, dev);
	}
	l->n = n;
	nvml_driver_string(l->driver_string, sizeof l->driver_string);
	return 0;
}
