/* kpt_nvml_api.h - the few NVML entry points the collector and `kptprof
 * devices` use, declared here because build machines without a driver have
 * no nvml.h. NVML is always loaded with dlopen("libnvidia-ml.so.1") at run
 * time; nothing links it.
 *
 * Only stable, versioned symbols with fixed ABI are listed; the numeric
 * values are those of nvml.h (NVML API version 12+).
 */
#ifndef KPT_NVML_API_H
#define KPT_NVML_API_H

typedef int kpt_nvmlReturn_t;          /* nvmlReturn_t: 0 is NVML_SUCCESS */
typedef struct kpt_nvmlDevice_st *kpt_nvmlDevice_t;

#define KPT_NVML_SUCCESS 0
#define KPT_NVML_CLOCK_SM 1            /* nvmlClockType_t NVML_CLOCK_SM */
#define KPT_NVML_CLOCK_MEM 2           /* NVML_CLOCK_MEM */
#define KPT_NVML_TEMPERATURE_GPU 0     /* nvmlTemperatureSensors_t */
#define KPT_NVML_DEVICE_UUID_BUFFER_SIZE 96
#define KPT_NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE 80

/* One function-pointer member per entry point; the loader fills them all or
 * fails. Symbol names are the ones dlsym looks up. */
#define KPT_NVML_FUNCS(X) \
	X(nvmlInit_v2, kpt_nvmlReturn_t, (void)) \
	X(nvmlShutdown, kpt_nvmlReturn_t, (void)) \
	X(nvmlErrorString, const char *, (kpt_nvmlReturn_t)) \
	X(nvmlSystemGetDriverVersion, kpt_nvmlReturn_t, (char *, unsigned)) \
	X(nvmlDeviceGetHandleByUUID, kpt_nvmlReturn_t, (const char *, kpt_nvmlDevice_t *)) \
	X(nvmlDeviceGetClockInfo, kpt_nvmlReturn_t, (kpt_nvmlDevice_t, int, unsigned *)) \
	X(nvmlDeviceGetTemperature, kpt_nvmlReturn_t, (kpt_nvmlDevice_t, int, unsigned *)) \
	X(nvmlDeviceGetPowerUsage, kpt_nvmlReturn_t, (kpt_nvmlDevice_t, unsigned *)) \
	X(nvmlDeviceGetCurrentClocksThrottleReasons, kpt_nvmlReturn_t, (kpt_nvmlDevice_t, unsigned long long *))

struct kpt_nvml {
	void *so;
#define KPT_NVML_MEMBER(name, ret, args) ret (*name) args;
	KPT_NVML_FUNCS(KPT_NVML_MEMBER)
#undef KPT_NVML_MEMBER
};

#endif
